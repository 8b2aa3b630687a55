//! SO(3) in coordinates: hat/vee, the Exp/Log maps of rotation matrices, the right
//! Jacobian Γ and its inverse, and the contraction of ∂Γ/∂θ used by Cosserat rods.
//!
//! Conventions (paper Section 3): rotation vectors θ ∈ ℝ³ are body-frame (right)
//! tangent vectors, `R ⊞ θ = R·Exp(θ)`, `R₁ ⊟ R₂ = Log(R₂ᵀR₁)`. All angles in radians.
//!
//! # Accuracy
//! Each function of |θ| that appears below has a closed form and a Taylor series; the
//! series is used below [`Real::series_cutoff`] (0.1 rad in f64, 1.0 rad in f32; the
//! choice is justified on those constants). The closed forms are written to avoid
//! cancellation where possible: (1 − cos θ)/θ² is evaluated as ½·(sin(θ/2)/(θ/2))² and
//! (1 + cos θ)/(2θ sin θ) as cot(θ/2)/(2θ), which has no 0/0 at θ = π.
//!
//! The matrix Log uses θ = atan2(|s|, (tr R − 1)/2) with s the axial vector of the skew
//! part (never `acos`, which loses half the digits near 0 and π), and within
//! [`Real::log_pi_window`] of π takes the axis from the symmetric part of R, with its
//! sign from s. It never returns NaN for a finite rotation matrix.

use super::real::{c, Real};
use nalgebra::{Matrix3, Vector3};

/// Hat map (2): ℝ³ → so(3), `hat(ω)·v = ω × v`. Returns the 3×3 skew-symmetric matrix.
#[inline]
pub fn hat<T: Real>(w: &Vector3<T>) -> Matrix3<T> {
    let z = T::zero();
    Matrix3::new(z, -w.z, w.y, w.z, z, -w.x, -w.y, w.x, z)
}

/// Vee map (3): so(3) → ℝ³, the inverse of [`hat`].
///
/// For a matrix that is not exactly skew-symmetric it returns the axial vector of its
/// skew part, `vee((M − Mᵀ)/2)`, so `vee(hat(ω)) = ω` exactly and round-off in M does
/// not bias the result.
#[inline]
pub fn vee<T: Real>(m: &Matrix3<T>) -> Vector3<T> {
    let h = c::<T>(0.5);
    Vector3::new(
        (m[(2, 1)] - m[(1, 2)]) * h,
        (m[(0, 2)] - m[(2, 0)]) * h,
        (m[(1, 0)] - m[(0, 1)]) * h,
    )
}

#[inline(always)]
fn horner<T: Real>(x2: T, coeffs: &[f64]) -> T {
    let mut acc = T::zero();
    for &k in coeffs.iter().rev() {
        acc = acc * x2 + c::<T>(k);
    }
    acc
}

/// sin θ / θ (the Exp coefficient of θ̂ in (6)). Series below the cut-off.
#[inline]
pub fn sinc<T: Real>(theta: T) -> T {
    if theta.abs() < T::series_cutoff() {
        horner(
            theta * theta,
            &[
                1.0,
                -1.0 / 6.0,
                1.0 / 120.0,
                -1.0 / 5040.0,
                1.0 / 362880.0,
                -1.0 / 39916800.0,
            ],
        )
    } else {
        theta.sin() / theta
    }
}

/// α(θ) = (1 − cos θ)/θ² (the Exp coefficient of θ̂² in (6), and of −θ̂ in Γ (25)).
#[inline]
pub fn alpha<T: Real>(theta: T) -> T {
    if theta.abs() < T::series_cutoff() {
        horner(
            theta * theta,
            &[
                0.5,
                -1.0 / 24.0,
                1.0 / 720.0,
                -1.0 / 40320.0,
                1.0 / 3628800.0,
                -1.0 / 479001600.0,
            ],
        )
    } else {
        let h = theta * c::<T>(0.5);
        let s = h.sin() / h;
        c::<T>(0.5) * s * s
    }
}

/// β(θ) = (θ − sin θ)/θ³ (the coefficient of θ̂² in Γ (25)).
#[inline]
pub fn beta<T: Real>(theta: T) -> T {
    if theta.abs() < T::series_cutoff() {
        horner(
            theta * theta,
            &[
                1.0 / 6.0,
                -1.0 / 120.0,
                1.0 / 5040.0,
                -1.0 / 362880.0,
                1.0 / 39916800.0,
                -1.0 / 6227020800.0,
            ],
        )
    } else {
        (theta - theta.sin()) / (theta * theta * theta)
    }
}

/// γ(θ) = 1/θ² − (1 + cos θ)/(2θ sin θ), the coefficient of θ̂² in Γ⁻¹ (27).
///
/// Evaluated as 1/θ² − cot(θ/2)/(2θ), which is finite at θ = π (γ(π) = 1/π²). Singular
/// at |θ| = 2π, where Γ is not invertible; Log never returns |θ| > π.
#[inline]
pub fn gamma_inv_coeff<T: Real>(theta: T) -> T {
    if theta.abs() < T::series_cutoff() {
        horner(
            theta * theta,
            &[
                1.0 / 12.0,
                1.0 / 720.0,
                1.0 / 30240.0,
                1.0 / 1209600.0,
                1.0 / 47900160.0,
            ],
        )
    } else {
        let h = theta * c::<T>(0.5);
        T::one() / (theta * theta) - h.cos() / (c::<T>(2.0) * theta * h.sin())
    }
}

/// α'(θ)/θ where α is [`alpha`]: (sin θ/θ − 2α)/θ². Finite at 0 (−1/12).
#[inline]
pub fn alpha_prime_over_theta<T: Real>(theta: T) -> T {
    if theta.abs() < T::series_cutoff() {
        horner(
            theta * theta,
            &[
                -1.0 / 12.0,
                1.0 / 180.0,
                -1.0 / 6720.0,
                1.0 / 453600.0,
                -1.0 / 47900160.0,
            ],
        )
    } else {
        (sinc(theta) - c::<T>(2.0) * alpha(theta)) / (theta * theta)
    }
}

/// β'(θ)/θ where β is [`beta`]: (α − 3β)/θ². Finite at 0 (−1/60).
#[inline]
pub fn beta_prime_over_theta<T: Real>(theta: T) -> T {
    if theta.abs() < T::series_cutoff() {
        horner(
            theta * theta,
            &[
                -1.0 / 60.0,
                1.0 / 1260.0,
                -1.0 / 60480.0,
                1.0 / 4989600.0,
                -1.0 / 622702080.0,
            ],
        )
    } else {
        (alpha(theta) - c::<T>(3.0) * beta(theta)) / (theta * theta)
    }
}

/// Exp (6) of a rotation vector θ (rad, any length) as a 3×3 rotation matrix
/// (Rodrigues): `I + (sin θ/θ)·θ̂ + ((1 − cos θ)/θ²)·θ̂²`.
#[inline]
pub fn exp_matrix<T: Real>(theta: &Vector3<T>) -> Matrix3<T> {
    let t = theta.norm();
    let k = hat(theta);
    Matrix3::identity() + k * sinc(t) + k * k * alpha(t)
}

/// Log (8) of a rotation matrix: the rotation vector θ with |θ| ∈ [0, π] and
/// `exp_matrix(θ) = R`.
///
/// `R` is assumed to be a rotation (orthonormal, det +1) to round-off; use
/// [`crate::lie::LieGroup::from_matrix`] to validate untrusted input. At exactly
/// |θ| = π both ±θ are valid; the one returned has a non-negative component along the
/// largest diagonal entry of R + Rᵀ.
pub fn log_matrix<T: Real>(r: &Matrix3<T>) -> Vector3<T> {
    let half = c::<T>(0.5);
    let one = T::one();
    // s = sin θ · axis, cos θ from the trace.
    let s = vee(r);
    let cos_t = (r.trace() - one) * half;
    let sin_t = s.norm();
    let theta = sin_t.atan2(cos_t);
    if theta < T::pi() - T::log_pi_window() {
        if sin_t == T::zero() {
            // |s|² underflowed (|θ| below ~1e-154 in f64, ~1e-19 in f32) or R = I: then
            // θ = s to within rounding (θ/sin θ = 1), and s = 0 exactly for R = I.
            return s;
        }
        // θ/sin θ has no cancellation for θ < π − window.
        return s * (theta / sin_t);
    }
    // Near π: R + Rᵀ = 2cos θ I + 2(1 − cos θ) a aᵀ.
    let sym = (r + r.transpose()) * half;
    let denom = one - cos_t;
    let mut b = sym;
    for i in 0..3 {
        b[(i, i)] -= cos_t;
    }
    b /= denom;
    // Largest diagonal entry of a aᵀ gives the best-conditioned column.
    let mut k = 0;
    for i in 1..3 {
        if b[(i, i)] > b[(k, k)] {
            k = i;
        }
    }
    let mut axis: Vector3<T> = b.column(k).into_owned();
    let n = axis.norm();
    if n == T::zero() {
        return Vector3::zeros();
    }
    axis /= n;
    if axis.dot(&s) < T::zero() {
        axis = -axis;
    }
    axis * theta
}

/// Right Jacobian Γ(θ) of Exp (25), 3×3:
/// `Γ = I − ((1 − cos θ)/θ²)·θ̂ + ((θ − sin θ)/θ³)·θ̂²`.
///
/// `Exp(θ + δ) ≈ Exp(θ) ⊞ Γ(θ)δ` (26).
#[inline]
pub fn right_jacobian<T: Real>(theta: &Vector3<T>) -> Matrix3<T> {
    let t = theta.norm();
    let k = hat(theta);
    Matrix3::identity() - k * alpha(t) + k * k * beta(t)
}

/// Inverse right Jacobian Γ⁻¹(θ) (27), the Jacobian of Log, 3×3:
/// `Γ⁻¹ = I + ½θ̂ + (1/θ² − (1 + cos θ)/(2θ sin θ))·θ̂²`. Valid for |θ| < 2π.
#[inline]
pub fn right_jacobian_inv<T: Real>(theta: &Vector3<T>) -> Matrix3<T> {
    let t = theta.norm();
    let k = hat(theta);
    Matrix3::identity() + k * c::<T>(0.5) + k * k * gamma_inv_coeff(t)
}

/// Contraction of the third-order tensor ∂Γ/∂θ with a vector `w` over Γ's column index
/// (Appendix G): returns the 3×3 matrix `M` with `M[a][c] = Σ_b ∂Γ_ab/∂θ_c · w_b`,
/// i.e. `M = ∂(Γ(θ)·w)/∂θ` with `w` held fixed.
///
/// Closed form used (derived in `proofs/right_jacobian_derivative.md`), with
/// α = (1 − cos θ)/θ², β = (θ − sin θ)/θ³:
/// `M = −α'/θ·(θ̂w)θᵀ + α·ŵ + β'/θ·(θ̂²w)θᵀ + β·(θwᵀ + (θ·w)I − 2wθᵀ)`.
/// Finite and continuous at θ = 0, where it equals ½ŵ.
pub fn right_jacobian_derivative_contraction<T: Real>(
    theta: &Vector3<T>,
    w: &Vector3<T>,
) -> Matrix3<T> {
    let t = theta.norm();
    let a = alpha(t);
    let b = beta(t);
    let da = alpha_prime_over_theta(t);
    let db = beta_prime_over_theta(t);
    let tw = theta.cross(w);
    let ttw = theta.cross(&tw);
    let mut m = hat(w) * a;
    m += (ttw * db - tw * da) * theta.transpose();
    m += (theta * w.transpose() - w * theta.transpose() * c::<T>(2.0)
        + Matrix3::identity() * theta.dot(w))
        * b;
    m
}
