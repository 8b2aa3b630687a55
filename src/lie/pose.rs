//! [`Pose`]: the configuration of a rigid body or oriented particle, ℝ³ × SO(3)
//! (paper Section 4), with its own ⊞ and ⊟ in the layout of (59).
//!
//! The tangent vector of a pose is a 6-vector `δ = (δp, δθ)`: first the position
//! change δp (m, world frame), then the rotation change δθ (rad, body frame). Every
//! gradient of a constraint with respect to a body uses this layout, and so do the
//! finite differences of [`crate::lie::numdiff::poses_to_vector`]. It is the direct
//! product of ℝ³ and SO(3), not SE(3): the position is not moved by the rotation part.

use super::group::LieGroup;
use super::real::Real;
use super::so3;
use nalgebra::{Matrix3, Matrix3x6, Matrix6, Vector3, Vector6};
use std::fmt;

/// A rigid pose: position (m, world frame) and orientation (body → world).
///
/// ```
/// use lie_xpbd::lie::{LieGroup, Pose, SO3Matrix};
/// use nalgebra::{Vector3, Vector6};
/// let a = Pose::new(Vector3::new(1.0, 0.0, 0.0), SO3Matrix::<f64>::exp(&Vector3::new(0.0, 0.0, 0.5)));
/// let d = Vector6::new(0.1, 0.2, 0.3, 0.01, -0.02, 0.03);
/// let b = a.boxplus(&d);
/// approx::assert_relative_eq!(b.boxminus(&a), d, epsilon = 1e-15);
/// // The body point (1, 0, 0) in the world frame:
/// let x = a.transform_point(&Vector3::x());
/// approx::assert_relative_eq!(x, Vector3::new(1.0 + 0.5f64.cos(), 0.5f64.sin(), 0.0), epsilon = 1e-15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose<T: Real, G: LieGroup<T>> {
    /// Position, m, world frame.
    pub position: Vector3<T>,
    /// Orientation, body → world.
    pub rotation: G,
}

impl<T: Real, G: LieGroup<T>> Pose<T, G> {
    /// A pose from its parts.
    #[inline]
    pub fn new(position: Vector3<T>, rotation: G) -> Self {
        Self { position, rotation }
    }

    /// The origin with the identity rotation.
    #[inline]
    pub fn identity() -> Self {
        Self::new(Vector3::zeros(), G::identity())
    }

    /// The pose perturbed by `δp` (world frame, m) and `δθ` (body frame, rad):
    /// `(p + δp, R ⊞ δθ)`. Same as [`Self::boxplus`] with the two halves given apart.
    #[inline]
    pub fn perturbed(&self, dp: &Vector3<T>, dtheta: &Vector3<T>) -> Self {
        Self {
            position: self.position + dp,
            rotation: self.rotation.boxplus(dtheta),
        }
    }

    /// ⊞ in the (59) layout: `(p, R) ⊞ (δp, δθ) = (p + δp, R ⊞ δθ)`, δp in m (world
    /// frame), δθ in rad (body frame).
    #[inline]
    pub fn boxplus(&self, delta: &Vector6<T>) -> Self {
        self.perturbed(
            &delta.fixed_rows::<3>(0).into(),
            &delta.fixed_rows::<3>(3).into(),
        )
    }

    /// ⊟ in the (59) layout: `(p₁, R₁) ⊟ (p₂, R₂) = (p₁ − p₂, R₁ ⊟ R₂)` (m; rad, body
    /// frame of R₂), with `self = (p₁, R₁)`. Satisfies `other ⊞ (self ⊟ other) = self`.
    #[inline]
    pub fn boxminus(&self, other: &Self) -> Vector6<T> {
        let dp = self.position - other.position;
        let dt = self.rotation.boxminus(&other.rotation);
        Vector6::new(dp.x, dp.y, dp.z, dt.x, dt.y, dt.z)
    }

    /// `D_X(X ⊞ δ) = diag(I, Exp(δθ)ᵀ)` (6×6), with `X = self` (`proofs/pose.md`).
    pub fn jacobian_boxplus_pose(&self, delta: &Vector6<T>) -> Matrix6<T> {
        let dt: Vector3<T> = delta.fixed_rows::<3>(3).into();
        block_diag(&Matrix3::identity(), &so3::exp_matrix(&dt).transpose())
    }

    /// `D_δ(X ⊞ δ) = diag(I, Γ(δθ))` (6×6) (`proofs/pose.md`).
    pub fn jacobian_boxplus_delta(&self, delta: &Vector6<T>) -> Matrix6<T> {
        let dt: Vector3<T> = delta.fixed_rows::<3>(3).into();
        block_diag(&Matrix3::identity(), &so3::right_jacobian(&dt))
    }

    /// `D_{X₁}(X₁ ⊟ X₂) = diag(I, Γ⁻¹(R₁ ⊟ R₂))` (6×6), `self = X₁` (`proofs/pose.md`).
    pub fn jacobian_boxminus_pose_lhs(&self, other: &Self) -> Matrix6<T> {
        let phi = self.rotation.boxminus(&other.rotation);
        block_diag(&Matrix3::identity(), &so3::right_jacobian_inv(&phi))
    }

    /// `D_{X₂}(X₁ ⊟ X₂) = diag(−I, −Γ⁻¹(R₁ ⊟ R₂)ᵀ)` (6×6), `self = X₁`
    /// (`proofs/pose.md`).
    pub fn jacobian_boxminus_pose_rhs(&self, other: &Self) -> Matrix6<T> {
        let phi = self.rotation.boxminus(&other.rotation);
        -block_diag(
            &Matrix3::identity(),
            &so3::right_jacobian_inv(&phi).transpose(),
        )
    }

    /// A body-frame point `x` (m) in the world frame: `p + R x`.
    #[inline]
    pub fn transform_point(&self, x: &Vector3<T>) -> Vector3<T> {
        self.position + self.rotation.act(x)
    }

    /// A world-frame point `y` (m) in the body frame: `Rᵀ(y − p)`.
    #[inline]
    pub fn inverse_transform_point(&self, y: &Vector3<T>) -> Vector3<T> {
        self.rotation.act_inv(&(y - self.position))
    }

    /// `D_X(p + R x) = [I | −R x̂]` (3×6, (59) layout), from (20) (`proofs/pose.md`).
    pub fn jacobian_transform_point_pose(&self, x: &Vector3<T>) -> Matrix3x6<T> {
        hstack(&Matrix3::identity(), &self.rotation.jacobian_act(x))
    }

    /// `D_X(Rᵀ(y − p)) = [−Rᵀ | (Rᵀ(y − p))^]` (3×6, (59) layout) (`proofs/pose.md`).
    pub fn jacobian_inverse_transform_point_pose(&self, y: &Vector3<T>) -> Matrix3x6<T> {
        let d = y - self.position;
        hstack(
            &-self.rotation.to_matrix().transpose(),
            &self.rotation.jacobian_act_inv(&d),
        )
    }

    /// The same pose in another rotation representation.
    pub fn cast_rotation<H: LieGroup<T>>(&self) -> Pose<T, H> {
        Pose::new(
            self.position,
            H::from_quaternion(&self.rotation.to_quaternion()).unwrap_or_else(|_| H::identity()),
        )
    }
}

fn block_diag<T: Real>(a: &Matrix3<T>, b: &Matrix3<T>) -> Matrix6<T> {
    let mut m = Matrix6::zeros();
    m.fixed_view_mut::<3, 3>(0, 0).copy_from(a);
    m.fixed_view_mut::<3, 3>(3, 3).copy_from(b);
    m
}

fn hstack<T: Real>(a: &Matrix3<T>, b: &Matrix3<T>) -> Matrix3x6<T> {
    let mut m = Matrix3x6::zeros();
    m.fixed_view_mut::<3, 3>(0, 0).copy_from(a);
    m.fixed_view_mut::<3, 3>(0, 3).copy_from(b);
    m
}

impl<T: Real, G: LieGroup<T>> Default for Pose<T, G> {
    fn default() -> Self {
        Self::identity()
    }
}

/// `position [x, y, z] m, rotation vector [x, y, z] rad` (the rotation as its Log);
/// honours the precision, e.g. `{:.3}`.
impl<T: Real, G: LieGroup<T>> fmt::Display for Pose<T, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.position;
        let r = self.rotation.log();
        match f.precision() {
            Some(n) => write!(
                f,
                "position [{:.n$}, {:.n$}, {:.n$}] m, rotation vector [{:.n$}, {:.n$}, {:.n$}] rad",
                p.x, p.y, p.z, r.x, r.y, r.z
            ),
            None => write!(
                f,
                "position [{}, {}, {}] m, rotation vector [{}, {}, {}] rad",
                p.x, p.y, p.z, r.x, r.y, r.z
            ),
        }
    }
}

/// Poses compare by the largest of the position distance (m) and the angle between the
/// rotations (rad), so q and −q are the same rotation. One epsilon serves both: pick it
/// for the scale of your positions.
impl<T: Real, G: LieGroup<T>> approx::AbsDiffEq for Pose<T, G> {
    type Epsilon = T;

    fn default_epsilon() -> T {
        T::default_epsilon()
    }

    fn abs_diff_eq(&self, other: &Self, epsilon: T) -> bool {
        (self.position - other.position).norm() <= epsilon
            && self.rotation.boxminus(&other.rotation).norm() <= epsilon
    }
}

/// Relative comparison: positions with nalgebra's vector `relative_eq`, rotations by
/// angle against `max(epsilon, max_relative · larger rotation angle)`.
impl<T: Real, G: LieGroup<T>> approx::RelativeEq for Pose<T, G> {
    fn default_max_relative() -> T {
        T::default_epsilon()
    }

    fn relative_eq(&self, other: &Self, epsilon: T, max_relative: T) -> bool {
        self.position
            .relative_eq(&other.position, epsilon, max_relative)
            && super::matrix::rotations_relative_eq(
                &self.rotation,
                &other.rotation,
                epsilon,
                max_relative,
            )
    }
}
