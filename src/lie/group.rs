//! The [`LieGroup`] trait: one interface to SO(3), whatever the representation.

use super::error::LieError;
use super::mean;
use super::real::Real;
use super::so3;
use nalgebra::{Matrix3, Quaternion, UnitQuaternion, Vector3};
use rand::Rng;
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
    /// No validation: a non-finite θ, or one whose squared norm overflows (|θ| above
    /// ~1.3e154 rad in f64, ~1.8e19 rad in f32), gives a non-finite rotation; use
    /// [`Self::try_exp`] on untrusted input.
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

    /// The rotation of a unit quaternion, without checking it (the caller guarantees
    /// unit norm to round-off): a copy for quaternions, the rotation matrix (29) for
    /// matrices. Cheaper than [`Self::exp`] when the quaternion is already at hand.
    fn from_unit_quaternion_unchecked(q: &UnitQuaternion<T>) -> Self;

    /// Projects back onto the group after round-off drift (normalises a quaternion,
    /// re-orthonormalises a matrix). Idempotent to round-off.
    fn renormalize(&self) -> Self;

    /// Whether every stored coefficient is finite (no NaN or ±∞): the matrix entries
    /// of a matrix, the four components of a quaternion. The default checks
    /// [`Self::to_quaternion`].
    #[inline]
    fn is_finite(&self) -> bool {
        self.to_quaternion().coords.iter().all(|x| x.is_finite())
    }

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
        // −R p̂ column by column: column j is −R(p × e_j).
        let r = self.to_matrix();
        let (c0, c1, c2) = (
            r.column(0).into_owned(),
            r.column(1).into_owned(),
            r.column(2).into_owned(),
        );
        // Each entry a·s − b·t with one fused multiply-add (`fma::axpy3`).
        let f = |a: &Vector3<T>, s: T, b: &Vector3<T>, t: T| super::fma::axpy3(a, s, &(b * -t));
        Matrix3::from_columns(&[
            f(&c2, p.y, &c1, p.z),
            f(&c0, p.z, &c2, p.x),
            f(&c1, p.x, &c0, p.y),
        ])
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

    /// `D_p(R p) = R` (3×3): the derivative of [`Self::act`] with respect to the point.
    #[inline]
    fn jacobian_act_point(&self) -> Matrix3<T> {
        self.to_matrix()
    }

    /// `D_p(Rᵀ p) = Rᵀ` (3×3): the derivative of [`Self::act_inv`] with respect to the
    /// point.
    #[inline]
    fn jacobian_act_inv_point(&self) -> Matrix3<T> {
        self.to_matrix().transpose()
    }

    // ---------------------------------------------------------------- adjoint, between

    /// The adjoint Ad(R) (3×3): `R·Exp(θ) = Exp(Ad(R)·θ)·R`, which moves a body-frame
    /// tangent vector to the world frame. For SO(3), `Ad(R) = R`.
    #[inline]
    fn adjoint(&self) -> Matrix3<T> {
        self.to_matrix()
    }

    /// `between(R₁, R₂) = R₁⁻¹·R₂`: the rotation of frame 2 seen in frame 1 (`self = R₁`).
    #[inline]
    fn between(&self, other: &Self) -> Self {
        self.inverse().compose(other)
    }

    /// `D_{R₁}(R₁⁻¹R₂) = −(R₁⁻¹R₂)ᵀ = −R₂ᵀR₁` (3×3), with `self = R₁`
    /// (`proofs/jacobian_between.md`).
    #[inline]
    fn jacobian_between_lhs(&self, other: &Self) -> Matrix3<T> {
        -(other.to_matrix().transpose() * self.to_matrix())
    }

    /// `D_{R₂}(R₁⁻¹R₂) = I` (3×3), with `self = R₁` (`proofs/jacobian_between.md`).
    #[inline]
    fn jacobian_between_rhs(&self, _other: &Self) -> Matrix3<T> {
        Matrix3::identity()
    }

    // ------------------------------------------------- left (world-frame) boxplus/boxminus

    /// Left (world-frame) boxplus: `Exp(θ)·self`, θ a world-frame rotation vector (rad).
    /// Satisfies `self.boxplus_left(θ) = self.boxplus(Rᵀθ)`.
    #[doc(alias = "lplus")]
    #[inline]
    fn boxplus_left(&self, theta: &Vector3<T>) -> Self {
        Self::exp(theta).compose(self)
    }

    /// Left (world-frame) boxminus: `Log(self·otherᵀ)` (rad, world frame). Satisfies
    /// `other.boxplus_left(self.boxminus_left(other)) = self`.
    #[doc(alias = "lminus")]
    #[inline]
    fn boxminus_left(&self, other: &Self) -> Vector3<T> {
        self.compose(&other.inverse()).log()
    }

    /// `D_R(Exp(θ)·R) = I` (3×3), with `self = R`, body-frame perturbations of R and of
    /// the result (`proofs/jacobian_boxplus_left.md`).
    #[inline]
    fn jacobian_boxplus_left_lhs(&self, _theta: &Vector3<T>) -> Matrix3<T> {
        Matrix3::identity()
    }

    /// `D_θ(Exp(θ)·R) = Rᵀ·Γ(θ)` (3×3), with `self = R`; the result is perturbed in its
    /// body frame (`proofs/jacobian_boxplus_left.md`).
    #[inline]
    fn jacobian_boxplus_left_rhs(&self, theta: &Vector3<T>) -> Matrix3<T> {
        self.to_matrix().transpose() * so3::right_jacobian(theta)
    }

    /// `D_{R₁} Log(R₁R₂ᵀ) = Γ⁻¹(φ)·R₂` with `φ = R₁ ⊟ₗ R₂`, `self = R₁` (3×3)
    /// (`proofs/jacobian_boxminus_left.md`).
    #[inline]
    fn jacobian_boxminus_left_lhs(&self, other: &Self) -> Matrix3<T> {
        so3::right_jacobian_inv(&self.boxminus_left(other)) * other.to_matrix()
    }

    /// `D_{R₂} Log(R₁R₂ᵀ) = −Γ⁻¹(φ)·R₂` with `φ = R₁ ⊟ₗ R₂`, `self = R₁` (3×3)
    /// (`proofs/jacobian_boxminus_left.md`).
    #[inline]
    fn jacobian_boxminus_left_rhs(&self, other: &Self) -> Matrix3<T> {
        -(so3::right_jacobian_inv(&self.boxminus_left(other)) * other.to_matrix())
    }

    // ---------------------------------------------------------------------- interpolation

    /// Geodesic interpolation `self ⊞ t·(other ⊟ self)`: `self` at t = 0, `other` at
    /// t = 1, constant angular speed in between; any t extrapolates along the same
    /// geodesic. The rotation interpolation of the rods with linear bases, (99)–(100).
    ///
    /// Never NaN for finite inputs with |t|·π below the limit of [`Self::exp`] (|t| up to
    /// ~4e153 in f64, ~5e18 in f32), including identical and nearly identical rotations
    /// (the difference is then 0 or tiny and Exp/Log take their series). When the two
    /// rotations are exactly π apart the geodesic is not unique; the one through
    /// `other ⊟ self` as returned by Log is used.
    #[doc(alias = "slerp")]
    #[inline]
    fn interpolate(&self, other: &Self, t: T) -> Self {
        self.boxplus(&(other.boxminus(self) * t))
    }

    /// `D_a interpolate(a, b, t) = Exp(tφ)ᵀ − t·Γ(tφ)·Γ⁻¹(φ)ᵀ` with `φ = b ⊟ a`,
    /// `self = a` (3×3) (`proofs/jacobian_interpolate.md`).
    #[inline]
    fn jacobian_interpolate_lhs(&self, other: &Self, t: T) -> Matrix3<T> {
        let phi = other.boxminus(self);
        let tp = phi * t;
        so3::exp_matrix(&tp).transpose()
            - so3::right_jacobian(&tp) * so3::right_jacobian_inv(&phi).transpose() * t
    }

    /// `D_b interpolate(a, b, t) = t·Γ(tφ)·Γ⁻¹(φ)` with `φ = b ⊟ a`, `self = a` (3×3)
    /// (`proofs/jacobian_interpolate.md`).
    #[inline]
    fn jacobian_interpolate_rhs(&self, other: &Self, t: T) -> Matrix3<T> {
        let phi = other.boxminus(self);
        so3::right_jacobian(&(phi * t)) * so3::right_jacobian_inv(&phi) * t
    }

    /// `∂ interpolate(a, b, t)/∂t = Γ(tφ)·φ` with `φ = b ⊟ a`, `self = a` (rad per unit
    /// of t, in the body frame of the result) (`proofs/jacobian_interpolate.md`).
    #[inline]
    fn jacobian_interpolate_t(&self, other: &Self, t: T) -> Vector3<T> {
        let phi = other.boxminus(self);
        so3::right_jacobian(&(phi * t)) * phi
    }

    // ---------------------------------------------------------------------- mean, random

    /// The bi-invariant (Karcher) mean of `rotations`: the rotation m minimising
    /// Σ |rᵢ ⊟ m|², by the fixed-point iteration `m ← m ⊞ (1/n)·Σ (rᵢ ⊟ m)` from the
    /// first rotation. See [`Self::weighted_mean`] for convergence and errors.
    ///
    /// # Errors
    /// As [`Self::weighted_mean`].
    fn mean(rotations: &[Self]) -> Result<Self, LieError> {
        mean::weighted_mean(rotations, None)
    }

    /// The weighted bi-invariant (Karcher) mean: the rotation m minimising
    /// Σ wᵢ |rᵢ ⊟ m|², by `m ← m ⊞ Σ wᵢ(rᵢ ⊟ m)/Σ wᵢ`, started at the rotation of largest
    /// weight. The minimiser is unique and the iteration converges when the rotations
    /// lie within a ball of radius π/2 (angle) about some rotation; it stops when the
    /// update is at the round-off level (below 16·ε rad, applied as the last update, or
    /// no longer shrinking below √ε rad, not applied), within 100 iterations. Only the
    /// ratios of the weights matter (they are divided by the largest), so any positive
    /// scale works, up to the largest finite value.
    ///
    /// Rotations spread wider than that (e.g. two rotations π apart) may have several
    /// minimisers: the iteration then returns one of them, or [`LieError::NotConverged`].
    ///
    /// # Errors
    /// [`LieError::Empty`] for no rotations, [`LieError::LengthMismatch`] if the lengths
    /// differ, [`LieError::NonFiniteRotation`] for a rotation with a NaN or infinite
    /// entry, [`LieError::InvalidWeight`] for a negative or non-finite weight,
    /// [`LieError::ZeroWeights`] if every weight is zero, [`LieError::NotConverged`] if the
    /// iteration does not settle.
    fn weighted_mean(rotations: &[Self], weights: &[T]) -> Result<Self, LieError> {
        mean::weighted_mean(rotations, Some(weights))
    }

    /// A rotation drawn uniformly (from the Haar measure of SO(3)) with `rng`, by
    /// Shoemake's method (K. Shoemake, "Uniform random rotations", Graphics Gems III,
    /// 1992): three uniform numbers in [0, 1) give a uniformly distributed unit
    /// quaternion. Its angle θ has density (1 − cos θ)/π on [0, π], i.e.
    /// P(angle ≤ θ) = (θ − sin θ)/π. Sampled in f64 and rounded to T.
    fn random<R: Rng + ?Sized>(rng: &mut R) -> Self {
        let q = mean::shoemake(rng);
        Self::from_quaternion(&Quaternion::new(
            Real::cast(q[0]),
            Real::cast(q[1]),
            Real::cast(q[2]),
            Real::cast(q[3]),
        ))
        .unwrap_or_else(|_| Self::identity())
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
