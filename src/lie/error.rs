//! Typed errors for invalid rotation input.

use thiserror::Error;

/// What was wrong with a value passed to a checked constructor of a rotation.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum LieError {
    /// An entry was NaN or ±∞.
    #[error("{what} has a non-finite entry (NaN or infinity) at index {index}")]
    NonFinite {
        /// Which input (e.g. "rotation matrix", "quaternion", "rotation vector").
        what: &'static str,
        /// Flat index of the first bad entry (column-major for matrices; i, j, k, w for
        /// quaternions).
        index: usize,
    },
    /// Every entry is finite, but the norm overflows (|θ| above ~1.3e154 rad in f64,
    /// ~1.8e19 rad in f32).
    #[error("{what} is too large: its norm overflows")]
    NormOverflow {
        /// Which input (e.g. "rotation vector").
        what: &'static str,
    },
    /// A matrix passed as a rotation is not orthogonal within tolerance.
    #[error(
        "matrix is not a rotation: ‖RᵀR − I‖_F = {deviation:e} exceeds the tolerance {tolerance:e}"
    )]
    NotOrthogonal {
        /// ‖RᵀR − I‖ (Frobenius).
        deviation: f64,
        /// The precision's [`crate::lie::Real::orthogonality_tolerance`].
        tolerance: f64,
    },
    /// An orthogonal matrix with determinant −1 (a reflection).
    #[error("matrix is a reflection, not a rotation: det = {determinant}")]
    Reflection {
        /// The determinant found.
        determinant: f64,
    },
    /// A quaternion of (near) zero norm cannot be normalised to a rotation.
    #[error("quaternion has norm {norm:e}, too small to normalise to a rotation")]
    ZeroQuaternion {
        /// The norm found.
        norm: f64,
    },
    /// An operation on a list of rotations (e.g. a mean) was given none.
    #[error("{what}: the list of rotations is empty")]
    Empty {
        /// Which operation (e.g. "mean").
        what: &'static str,
    },
    /// Two lists that must have the same length do not.
    #[error("{what}: {expected} rotations but {found} weights")]
    LengthMismatch {
        /// Which operation (e.g. "weighted mean").
        what: &'static str,
        /// Number of rotations.
        expected: usize,
        /// Number of weights.
        found: usize,
    },
    /// A weight is negative, NaN or infinite.
    #[error("weight {index} is {value:e}: weights must be finite and >= 0")]
    InvalidWeight {
        /// Index of the offending weight.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// Every weight is zero: no rotation counts.
    #[error("{what}: all {count} weights are zero; at least one must be positive")]
    ZeroWeights {
        /// Which operation (e.g. "weighted mean").
        what: &'static str,
        /// Number of weights.
        count: usize,
    },
    /// An input rotation has a non-finite entry.
    #[error("{what}: rotation {index} has a non-finite entry (NaN or infinity)")]
    NonFiniteRotation {
        /// Which operation (e.g. "mean").
        what: &'static str,
        /// Index of the rotation in the list.
        index: usize,
    },
    /// An iteration did not converge (e.g. the mean of rotations spread over more than a
    /// hemisphere of SO(3), where the mean is not unique).
    #[error("{what} did not converge in {iterations} iterations (last step {step:e} rad)")]
    NotConverged {
        /// Which operation (e.g. "mean").
        what: &'static str,
        /// Iterations done.
        iterations: usize,
        /// Size of the last update, rad.
        step: f64,
    },
    /// A quaternion that must be a unit quaternion has a norm too far from 1.
    #[error("quaternion has norm {norm}, not 1 within {tolerance:e}")]
    NotUnit {
        /// The norm found.
        norm: f64,
        /// The tolerance it was checked against.
        tolerance: f64,
    },
}
