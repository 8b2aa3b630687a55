//! The [`LieGroup`] trait: one interface to SO(3), whatever the representation.

use super::error::LieError;
use super::real::Real;
use super::so3;
use nalgebra::{Matrix3, Quaternion, Vector3};
use std::fmt::Debug;

/// A representation of the rotation group SO(3) (paper Section 3), with the body-frame
/// (right) conventions `R ⊞ θ = R·Exp(θ)` (9) and `R₁ ⊟ R₂ = Log(R₂ᵀR₁)` (10).
///
/// Implemented by [`crate::lie::SO3Matrix`] (a 3×3 rotation matrix) and by nalgebra's
/// [`nalgebra::UnitQuaternion`] (paper Section 3.5, eq. 29–34), each for `f32` and
/// `f64`. The provided methods give the Jacobian blocks of Section 3.4 in tangent-space
/// coordinates (eq. 14/16/18): a derivative with respect to a rotation is a 3-column
/// block mapping a body-frame perturbation δθ to the change of the output.
///
/// Inherent methods of `UnitQuaternion` (`identity`, `inverse`, ...) shadow the trait's;
/// call these as `<G as LieGroup<T>>::inverse(&g)` or through a generic `G`.
pub trait LieGroup<T: Real>: Copy + Clone + Debug + PartialEq + Send + Sync + 'static {
    /// Short name of the representation (`"matrix"` or `"quaternion"`).
    const NAME: &'static str;

    /// The identity rotation.
    fn identity() -> Self;

    /// Exp: rotation vector θ (rad, body frame, any length) → rotation (6)/(31).
    /// No validation: a non-finite θ gives a non-finite rotation; use [`Self::try_exp`]
    /// on untrusted input.
    fn exp(theta: &Vector3<T>) -> Self;

    /// Log: rotation → rotation vector θ with |θ| ∈ [0, π] (8). Never NaN for a valid
    /// rotation, including at and near |θ| = π; for quaternions q and −q give the
    /// same result.
    fn log(&self) -> Vector3<T>;

    /// Group product `self · other` (first apply `other`, then `self`, to vectors).
    fn compose(&self, other: &Self) -> Self;

    /// Group inverse (Rᵀ, q*).
    fn inverse(&self) -> Self;

    /// Rotates a vector: `R·v`.
    fn act(&self, v: &Vector3<T>) -> Vector3<T>;

    /// Rotates by the inverse: `Rᵀ·v`.
    fn act_inv(&self, v: &Vector3<T>) -> Vector3<T>;

    /// The 3×3 rotation matrix 𝓡(self).
    fn to_matrix(&self) -> Matrix3<T>;

    /// The unit quaternion of this rotation (w ≥ 0 not guaranteed).
    fn to_quaternion(&self) -> Quaternion<T>;

    /// Checked conversion from a 3×3 matrix.
    ///
    /// # Errors
    /// [`LieError::NonFinite`] for NaN/∞ entries, [`LieError::NotOrthogonal`] if
    /// ‖RᵀR − I‖_F exceeds [`Real::orthogonality_tolerance`], [`LieError::Reflection`]
    /// if det R < 0. An accepted matrix is re-orthonormalised.
    fn from_matrix(m: &Matrix3<T>) -> Result<Self, LieError>;

    /// Checked conversion from a quaternion (w, i, j, k), normalised on the way in.
    ///
    /// # Errors
    /// [`LieError::NonFinite`] for NaN/∞ entries, [`LieError::ZeroQuaternion`] if the
    /// norm is below √ε (no direction to normalise).
    fn from_quaternion(q: &Quaternion<T>) -> Result<Self, LieError>;

    /// Projects back onto the group after round-off drift (normalises a quaternion,
    /// re-orthonormalises a matrix). Idempotent to round-off.
    fn renormalize(&self) -> Self;

    /// Exp with input validation.
    ///
    /// # Errors
    /// [`LieError::NonFinite`] if any component of θ is NaN or ±∞;
    /// [`LieError::NormOverflow`] if |θ| overflows.
    fn try_exp(theta: &Vector3<T>) -> Result<Self, LieError> {
        check_finite("rotation vector", theta.iter())?;
        if !theta.norm().is_finite() {
            // |θ|² overflows above ~1.3e154 rad (f64) / ~1.8e19 rad (f32).
            return Err(LieError::NormOverflow {
                what: "rotation vector",
            });
        }
        Ok(Self::exp(theta))
    }

    /// boxplus (9): `self ⊞ θ = self · Exp(θ)`, θ a body-frame rotation vector (rad).
    #[inline]
    fn boxplus(&self, theta: &Vector3<T>) -> Self {
        self.compose(&Self::exp(theta))
    }

    /// boxminus (10): `self ⊟ other = Log(otherᵀ · self)`, rad, in the body frame of
    /// `other`. Satisfies `other ⊞ (self ⊟ other) = self` (11).
    #[inline]
    fn boxminus(&self, other: &Self) -> Vector3<T> {
        other.inverse().compose(self).log()
    }

    /// Angle of the rotation, |Log(self)| ∈ [0, π] (rad).
    #[inline]
    fn angle(&self) -> T {
        self.log().norm()
    }

    /// (20) `D_R(R p) = −R p̂` (3×3).
    #[inline]
    fn jacobian_act(&self, p: &Vector3<T>) -> Matrix3<T> {
        -self.to_matrix() * so3::hat(p)
    }

    /// `D_R(Rᵀ p) = (Rᵀp)^` (3×3), from (20) and (21) by the chain rule.
    #[inline]
    fn jacobian_act_inv(&self, p: &Vector3<T>) -> Matrix3<T> {
        so3::hat(&self.act_inv(p))
    }

    /// (21) `D_R(R⁻¹) = −R` (3×3).
    #[inline]
    fn jacobian_inverse(&self) -> Matrix3<T> {
        -self.to_matrix()
    }

    /// (22) `D_{R₁}(R₁R₂) = R₂ᵀ` (3×3), with `self = R₁`.
    #[inline]
    fn jacobian_compose_lhs(&self, other: &Self) -> Matrix3<T> {
        other.to_matrix().transpose()
    }

    /// (23) `D_{R₂}(R₁R₂) = I` (3×3), with `self = R₁`.
    #[inline]
    fn jacobian_compose_rhs(&self, _other: &Self) -> Matrix3<T> {
        Matrix3::identity()
    }

    /// (28) `D_{R₁}(R₁ ⊟ R₂) = Γ⁻¹(R₁ ⊟ R₂)` (3×3), with `self = R₁`.
    #[inline]
    fn jacobian_boxminus_lhs(&self, other: &Self) -> Matrix3<T> {
        so3::right_jacobian_inv(&self.boxminus(other))
    }

    /// (28) `D_{R₂}(R₁ ⊟ R₂) = −Γ⁻¹(R₁ ⊟ R₂)ᵀ` (3×3), with `self = R₁`.
    #[inline]
    fn jacobian_boxminus_rhs(&self, other: &Self) -> Matrix3<T> {
        -so3::right_jacobian_inv(&self.boxminus(other)).transpose()
    }

    /// `D_R(R ⊞ θ) = Exp(θ)ᵀ` (3×3), from (22).
    #[inline]
    fn jacobian_boxplus_lhs(&self, theta: &Vector3<T>) -> Matrix3<T> {
        so3::exp_matrix(theta).transpose()
    }

    /// `D_θ(R ⊞ θ) = Γ(θ)` (3×3), from (23) and (26).
    #[inline]
    fn jacobian_boxplus_rhs(&self, theta: &Vector3<T>) -> Matrix3<T> {
        so3::right_jacobian(theta)
    }

    /// `D_θ Exp(θ) = Γ(θ)` (25)–(26) (3×3).
    #[inline]
    fn jacobian_exp(theta: &Vector3<T>) -> Matrix3<T> {
        so3::right_jacobian(theta)
    }

    /// `∂ Log(R)/∂δθ = Γ⁻¹(Log R)` (27) (3×3): the change of Log under `R ⊞ δθ`.
    #[inline]
    fn jacobian_log(&self) -> Matrix3<T> {
        so3::right_jacobian_inv(&self.log())
    }
}

/// Returns [`LieError::NonFinite`] naming the first non-finite entry.
pub(crate) fn check_finite<'a, T: Real>(
    what: &'static str,
    it: impl Iterator<Item = &'a T>,
) -> Result<(), LieError> {
    for (index, x) in it.enumerate() {
        if !x.is_finite() {
            return Err(LieError::NonFinite { what, index });
        }
    }
    Ok(())
}
