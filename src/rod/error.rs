//! Typed errors of the Cosserat rod finite elements.

use thiserror::Error;

/// Everything that can be wrong with a rod material, an element or an evaluation point.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RodError {
    /// A material or section parameter outside its physical range.
    #[error("rod material: {parameter} = {value:e} is invalid: {reason}")]
    InvalidMaterial {
        /// Which parameter (`"youngs_modulus"`, `"poisson_ratio"`, `"density"`,
        /// `"radius"`, `"shear_correction"`).
        parameter: &'static str,
        /// The value given (SI units).
        value: f64,
        /// What the valid range is.
        reason: &'static str,
    },
    /// An element rest length that is not finite and strictly positive (m).
    #[error("rod element rest length must be finite and > 0, got {length:e} m")]
    InvalidLength {
        /// The length given (m).
        length: f64,
    },
    /// A Gauss–Legendre rule with a number of points this crate does not provide.
    #[error("Gauss-Legendre rule with {count} points requested; supported are 1 to {max}")]
    GaussPointCount {
        /// The number of points requested.
        count: usize,
        /// [`crate::rod::gauss::MAX_GAUSS_POINTS`].
        max: usize,
    },
    /// A Gauss weight that is not finite and strictly positive.
    #[error("Gauss weight must be finite and > 0, got {weight:e}")]
    InvalidGaussWeight {
        /// The weight given (dimensionless).
        weight: f64,
    },
    /// Element kinematics built for a different rest length than the element's.
    #[error("element kinematics were built for rest length {kinematics:e} m, but the element has rest length {element:e} m")]
    LengthMismatch {
        /// The element's rest length (m).
        element: f64,
        /// The rest length the kinematics were built with (m).
        kinematics: f64,
    },
    /// A Gauss point index past the element's rule.
    #[error("Gauss point {index} requested, but the element has {count} Gauss points")]
    GaussPointIndex {
        /// The index given (0-based).
        index: usize,
        /// The number of Gauss points of the element.
        count: usize,
    },
    /// An element parameter ξ outside the reference interval [0, 1], or NaN.
    #[error("element parameter xi = {xi} is outside the reference interval [0, 1]")]
    ParameterOutOfRange {
        /// The ξ given (dimensionless).
        xi: f64,
    },
    /// A quantity that must be finite has a NaN or infinite entry.
    #[error("{what} {index} has a non-finite entry (NaN or infinity)")]
    NonFinite {
        /// Which quantity (`"node position"`, `"node rotation"`, `"precurvature"`, …).
        what: &'static str,
        /// Node or Gauss point index (0-based).
        index: usize,
    },
}
