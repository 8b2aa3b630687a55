//! Typed errors of the Cosserat rods: finite elements, the rigid-chain discretisation
//! and the rods built into a [`crate::xpbd::World`].

use crate::xpbd::XpbdError;
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
    /// An element rest length that is not finite and strictly positive (m), or whose
    /// square or inverse square is out of the scalar type's range (below 1.5e-154 m or
    /// above 1.3e154 m in f64; 1.1e-19 and 1.8e19 m in f32).
    #[error("rod element rest length must be finite and > 0, with l² and 1/l² in the scalar type's range, got {length:e} m")]
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
    /// A rod with fewer bodies than a rigid chain needs (two: the half-length end bodies,
    /// one joint between them).
    #[error("a rigid-chain rod needs at least {min} bodies, got {count}")]
    TooFewBodies {
        /// The number of bodies asked for.
        count: usize,
        /// The minimum, 2.
        min: usize,
    },
    /// A rod with more bodies than can be allocated (e.g. `usize::MAX`): an error rather
    /// than a panic or an abort of the process.
    #[error("a rigid-chain rod of {count} bodies cannot be allocated")]
    TooManyBodies {
        /// The number of bodies asked for.
        count: usize,
    },
    /// A direction that is zero, not finite, or parallel to the rod where it must not be.
    #[error("rod {what} is invalid: {reason}")]
    InvalidDirection {
        /// Which direction (`"direction"`, `"normal"`).
        what: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Two consecutive centre-line points (body positions) that coincide, so the rest
    /// length between them is zero (m).
    #[error("rod segment {index} (between points {index} and {next}) has length {length:e} m; consecutive points must be distinct", next = index + 1)]
    DegenerateSegment {
        /// The segment (joint) index, 0-based: between points `index` and `index + 1`.
        index: usize,
        /// Its length (m).
        length: f64,
    },
    /// A polyline that turns back on itself (by 180°) at a vertex, where the tangent,
    /// hence the director frame, is undefined.
    #[error("rod polyline turns back on itself at point {index}: the tangent there is undefined")]
    ReversedSegment {
        /// The vertex index, 0-based.
        index: usize,
    },
    /// Two consecutive director frames of a rigid chain turned by π relative to each
    /// other: the matrix average of (89) is then singular and Log (90) at its branch cut.
    #[error("rod director frames {index} and {next} are turned by π relative to each other; consecutive frames must turn by less", next = index + 1)]
    HalfTurn {
        /// The first of the two frames, 0-based.
        index: usize,
    },
    /// A list with the wrong number of entries.
    #[error("{what}: {given} values given, {expected} expected")]
    CountMismatch {
        /// What the list is (`"precurvature"`, …).
        what: &'static str,
        /// The number given.
        given: usize,
        /// The number needed.
        expected: usize,
    },
    /// A rod constraint between a body and itself.
    #[error("rod constraint joins body {body} to itself; the two bodies must differ")]
    SameBody {
        /// The body index.
        body: usize,
    },
    /// A Rayleigh damping b that is negative or not finite (s).
    #[error("rod damping of row {row} must be finite and >= 0 (s), got {value:e}")]
    InvalidDamping {
        /// The constraint row (0–2 shear/stretch, 3–5 bending/twist).
        row: usize,
        /// The value given (s).
        value: f64,
    },
    /// The world rejected a body or a constraint of the rod (e.g. an end inertia that is
    /// not that of a rigid body, or an orientation that is not a rotation).
    #[error("rod rejected by the world: {0}")]
    World(#[from] XpbdError),
}
