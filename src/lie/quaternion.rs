//! [`LieGroup`] for nalgebra's [`UnitQuaternion`] (paper Section 3.5).
//!
//! Exp (31) with the hat map θ ↦ θ/2 (32): `Exp(θ) = cos(|θ|/2) + (θ/|θ|)·sin(|θ|/2)`.
//! Log picks the short way: q and −q are the same rotation, so the quaternion is
//! first flipped to w ≥ 0 and `Log(q) = 2·atan2(|v|, w)·v/|v|`, giving |θ| ≤ π and
//! `q ⊟ (−q) = 0`; for |v|/w up to tan(π/8) ([`Real::SERIES_ATAN`]) atan(x)/x is
//! taken from the polynomial [`Real::ATAN_POLY`] in x² = |v|²/w² instead (below
//! [`Real::SERIES_ATAN_SHORT`] from the first terms of its Taylor series; below
//! [`Real::SERIES_ASIN_TINY`] in |v| = sin(θ/2) as v·2·asin(|v|)/|v| from the first
//! terms of its series, for a unit q), and beyond it
//! atan2 is the crate's own (the same polynomial after an argument reduction). Exp of a small θ takes sin(θ/2)/θ and
//! cos(θ/2) from their series in θ² (no `sin_cos`; two terms each below
//! [`Real::SERIES_EXP_TINY`]). nalgebra's own `scaled_axis` returns 0 for |v| ≤ 1e-7 in f32 and is
//! not used.

use super::error::LieError;
use super::group::LieGroup;
use super::matrix::{validate_quaternion, SO3Matrix};
use super::real::{c, Real};
use super::so3;
use nalgebra::{Matrix3, Quaternion, Rotation3, UnitQuaternion, Vector3};

impl<T: Real> LieGroup<T> for UnitQuaternion<T> {
    const NAME: &'static str = "quaternion";

    #[inline]
    fn identity() -> Self {
        UnitQuaternion::identity()
    }

    #[inline]
    fn exp(theta: &Vector3<T>) -> Self {
        // Small angles: sin(θ/2)/θ = ½·sinc(θ/2) and cos(θ/2) = 1 − (θ/2)²·α(θ/2) from
        // their series in (θ/2)², with neither a square root nor sin_cos.
        let h2 = theta.norm_squared() * c::<T>(0.25);
        let from_series = |sinc: T, alpha: T| {
            let s = sinc * c::<T>(0.5);
            UnitQuaternion::new_unchecked(Quaternion::new(
                T::one() - h2 * alpha,
                theta.x * s,
                theta.y * s,
                theta.z * s,
            ))
        };
        // The smallest rotations (the projections' corrections) need only the first
        // terms ([`Real::SERIES_EXP_TINY`]).
        if let (Some(sinc), Some(alpha)) = (
            so3::series_sq(h2, T::SERIES_EXP_TINY, &so3::SINC_SERIES),
            so3::series_sq(h2, T::SERIES_EXP_TINY, &so3::ALPHA_SERIES),
        ) {
            return from_series(sinc, alpha);
        }
        if let (Some(sinc), Some(alpha)) = (
            so3::series_sq(h2, T::SERIES_SINC, &so3::SINC_SERIES),
            so3::series_sq(h2, T::SERIES_ALPHA, &so3::ALPHA_SERIES),
        ) {
            return from_series(sinc, alpha);
        }
        // sin(θ/2)/θ and cos(θ/2) from one sin_cos (series sinc near 0).
        let half = theta.norm() * c::<T>(0.5);
        let (sh, ch) = half.sin_cos();
        let s = if half.abs() < c::<T>(T::SERIES_SINC.cutoff) {
            so3::sinc(half) * c::<T>(0.5)
        } else {
            sh / (half * c::<T>(2.0))
        };
        UnitQuaternion::new_unchecked(Quaternion::new(ch, theta.x * s, theta.y * s, theta.z * s))
    }

    #[inline]
    fn log(&self) -> Vector3<T> {
        log_inline(self)
    }

    #[inline]
    fn compose(&self, other: &Self) -> Self {
        self * other
    }

    #[inline]
    fn inverse(&self) -> Self {
        UnitQuaternion::inverse(self)
    }

    #[inline]
    fn act(&self, v: &Vector3<T>) -> Vector3<T> {
        self.transform_vector(v)
    }

    #[inline]
    fn act_inv(&self, v: &Vector3<T>) -> Vector3<T> {
        self.inverse_transform_vector(v)
    }

    #[inline]
    fn to_matrix(&self) -> Matrix3<T> {
        self.to_rotation_matrix().into_inner()
    }

    fn to_quaternion(&self) -> Quaternion<T> {
        self.into_inner()
    }

    fn from_matrix(m: &Matrix3<T>) -> Result<Self, LieError> {
        // Validated and re-orthonormalised as a matrix first; nalgebra's conversion assumes
        // an exact rotation and does not normalise its result, so normalise it as well.
        let r = <SO3Matrix<T> as LieGroup<T>>::from_matrix(m)?;
        let q =
            UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(*r.matrix()));
        Ok(UnitQuaternion::new_normalize(q.into_inner()))
    }

    fn from_quaternion(q: &Quaternion<T>) -> Result<Self, LieError> {
        validate_quaternion(q)
    }

    #[inline]
    fn from_unit_quaternion_unchecked(q: &UnitQuaternion<T>) -> Self {
        *q
    }

    #[inline]
    fn renormalize(&self) -> Self {
        UnitQuaternion::new_normalize(self.into_inner())
    }
}

/// [`LieGroup::log`] of a unit quaternion, always inlined: for hot call sites whose
/// caller reads the result at once. Out of line, the 24-byte result is returned through
/// memory as three 8-byte stores that the caller reloads with 16-byte loads, which the
/// store buffer cannot forward (a stall of about ten cycles per call: 6% of the
/// primal correction pass's time in the triple pendulum, `perf annotate`).
#[inline(always)]
pub(crate) fn log_inline<T: Real>(q: &UnitQuaternion<T>) -> Vector3<T> {
    let q = q.as_ref();
    let (w, v) = if q.w < T::zero() {
        (-q.w, -q.imag())
    } else {
        (q.w, q.imag())
    };
    // Small angles (tan(θ/2) = |v|/w below the atan series cut-off):
    // θ = 2·atan(x), x = |v|/w, so θ·v/|v| = v·2·(atan(x)/x)/w, from |v|² without a
    // square root or atan2.
    let vv = v.norm_squared();
    // The smallest angles: |v| = sin(θ/2), θ·v/|v| = v·2·asin(|v|)/|v| from |v|²
    // (θ < π: w > 0), without the division by w.
    if w > T::zero() {
        if let Some(a) = so3::asin_over_y_tiny(vv) {
            return v * (c::<T>(2.0) * a);
        }
    }
    if w > T::zero() && so3::atan_series_applies(vv, w) {
        let inv_w = T::one() / w;
        let a = so3::atan_over_x(vv * inv_w * inv_w);
        return v * (c::<T>(2.0) * a * inv_w);
    }
    let n = vv.sqrt();
    if n == T::zero() {
        // |v|² underflowed (|θ| below ~1e-154 in f64, ~1e-19 in f32) or q = ±1: then
        // θ = 2v to within rounding, and v = 0 exactly for the identity.
        return v * c::<T>(2.0);
    }
    v * (c::<T>(2.0) * so3::atan2_nonneg(n, w) / n)
}
