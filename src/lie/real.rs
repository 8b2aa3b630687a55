//! The scalar types the library runs on, with the per-precision constants that the
//! Lie-group series, the finite-difference checks and input validation depend on.
//!
//! Everything in the crate is generic over `T: Real`, which is
//! `nalgebra::RealField + Copy` plus a handful of constants chosen separately for `f32`
//! and `f64`. The choice of each constant is justified next to its value below.

use nalgebra::RealField;

/// A floating-point scalar usable by every type in this crate: `f32` or `f64`.
///
/// This is `nalgebra::RealField + Copy` (simba 0.10) plus constants whose right value
/// depends on the precision. Implemented for `f32` and `f64` only.
pub trait Real: RealField + Copy + Send + Sync + std::fmt::Display + 'static {
    /// Short name used in outputs (`"f32"` or `"f64"`).
    const NAME: &'static str;

    /// Angle (rad) below which the coefficient functions of Exp, Γ, Γ⁻¹ and ∂Γ/∂θ
    /// (module [`crate::lie::so3`]) switch from their closed forms to Taylor series.
    ///
    /// Every series is kept to five terms, so its truncation error at angle θ is bounded
    /// by the sixth term; the closed forms lose relative accuracy like c·ε/θ² (c ≤ 180,
    /// worst for ∂β/∂θ) because of cancellation. The cut-off sits where the series
    /// truncation is still below ε while the closed forms have become accurate.
    fn series_cutoff() -> Self;

    /// Half-width (rad) of the window below π in which the matrix Log takes the rotation
    /// axis from the symmetric part of R instead of its skew part. The skew part carries
    /// sin θ·axis, so its relative accuracy degrades like ε/sin θ near π.
    fn log_pi_window() -> Self;

    /// Default central-difference step for [`crate::lie::numdiff`].
    fn fd_step() -> Self;

    /// Relative tolerance that central differences with [`Real::fd_step`] meet on this
    /// library's Jacobians, measured as `|J_fd − J| ≤ tol · max(1, max|J|)`.
    fn fd_tolerance() -> Self;

    /// Largest `‖RᵀR − I‖_F` accepted by `from_matrix` before the input is rejected as
    /// not a rotation. Accepted matrices are re-orthonormalised.
    fn orthogonality_tolerance() -> Self;

    /// Lossless widening to `f64` (for output).
    fn to_f64(self) -> f64;

    /// Conversion from an `f64` constant (rounds to nearest for `f32`). Named `cast`
    /// rather than `from_f64` to avoid clashing with `num_traits::FromPrimitive`.
    fn cast(x: f64) -> Self;
}

impl Real for f64 {
    const NAME: &'static str = "f64";
    /// 0.1 rad: the sixth series term is below 1e-16 relative for every coefficient at
    /// 0.1, and the closed forms lose at most 180·ε/0.01 ≈ 4e-12 just above it.
    fn series_cutoff() -> Self {
        0.1
    }
    /// 0.5 rad: outside it the skew-part axis is accurate to ε/sin(π−0.5) ≈ 2ε.
    fn log_pi_window() -> Self {
        0.5
    }
    /// 1e-5 ≈ ε^(1/3) balances the O(h²) truncation and O(ε/h) round-off of central
    /// differences.
    fn fd_step() -> Self {
        1e-5
    }
    /// (h² + ε/h) ≈ 1.2e-10 at unit curvature; third derivatives of Log grow like
    /// 1/(π−θ)² near π, and 1e-7 held over 10⁶ random cases with θ ≤ π − 1e-3
    /// (shared/design/FACTS.md).
    fn fd_tolerance() -> Self {
        1e-7
    }
    /// √ε·10 ≈ 1.5e-7: accepts matrices that went through a text format with ~8
    /// significant digits, rejects anything that is visibly not a rotation.
    fn orthogonality_tolerance() -> Self {
        1.5e-7
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn cast(x: f64) -> Self {
        x
    }
}

impl Real for f32 {
    const NAME: &'static str = "f32";
    /// 1.0 rad: the sixth series term is below 1.2e-7 (= ε) relative for every
    /// coefficient at 1.0, while the closed form of ∂β/∂θ would lose up to
    /// 180·ε/θ⁴ (3e-4 at θ = 0.5) below it.
    fn series_cutoff() -> Self {
        1.0
    }
    /// 0.5 rad, as for f64; a 1e-2 window left 4e-6 errors in f32 (FACTS.md).
    fn log_pi_window() -> Self {
        0.5
    }
    /// 1e-3: with ε = 1.2e-7 the round-off ε/h is 1.2e-4 and the truncation h²/6 is
    /// 2e-7, so the error is dominated by round-off; larger steps straddle the Log
    /// branch cut near π.
    fn fd_step() -> Self {
        1e-3
    }
    /// 2e-3 ≈ 16·ε/h: the round-off term of a central difference, times the
    /// conditioning of the functions checked; held over 10⁶ random cases with
    /// θ ≤ π − 1e-3 (FACTS.md).
    fn fd_tolerance() -> Self {
        2e-3
    }
    /// √ε·10 ≈ 3.5e-3.
    fn orthogonality_tolerance() -> Self {
        3.5e-3
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn cast(x: f64) -> Self {
        x as f32
    }
}

/// Converts an `f64` constant to `T` (the crate's one place for numeric constants).
#[inline(always)]
pub fn c<T: Real>(x: f64) -> T {
    <T as Real>::cast(x)
}
