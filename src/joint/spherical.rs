//! [`Spherical`]: the vector spherical (ball) joint (75), paper Section 5.4.

use super::kinematics::JointKinematics;
use super::vector::{JointKind, JointRows, VectorJoint};
use crate::lie::{LieGroup, Real};

/// A spherical (ball) joint: the joint origins coincide; all rotations are free (75):
///
/// ```text
/// C_sph = p̄₁ − p̄₂    (3 rows, m)
/// ```
///
/// Gradients (per body, `[∂/∂p | D_R]`, `proofs/joint_spherical.md`):
///
/// ```text
/// body 1: [ I | −R₁ r̂₁ ],   body 2: [ −I | R₂ r̂₂ ]
/// ```
///
/// The joint frames' rotations do not enter (75); they define the swing/twist axes of
/// spherical limits (76)–(78). Compliance (see [`VectorJoint::with_compliance`]): m/N
/// for all 3 rows.
///
/// ```
/// use lie_xpbd::joint::{JointFrame, Spherical};
/// use lie_xpbd::lie::SO3Matrix;
/// use lie_xpbd::xpbd::{BodyId, Constraint};
/// let ball = Spherical::<f64, SO3Matrix<f64>>::new(
///     Some(BodyId(2)),
///     JointFrame::identity(),
///     None,
///     JointFrame::identity(),
/// )
/// .unwrap();
/// assert_eq!(ball.dim(), 3);
/// assert_eq!(ball.name(), "spherical(2, world)");
/// ```
pub type Spherical<T, G> = VectorJoint<T, G, SphericalKind>;

/// The [`JointKind`] of [`Spherical`]: `"spherical"`, 3 rows (75).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SphericalKind;

impl JointKind for SphericalKind {
    const NAME: &'static str = "spherical";
    const DIM: usize = 3;
    /// Position columns: ±I (Δp).
    const LAYOUT: crate::xpbd::GradientLayout =
        crate::xpbd::GradientLayout::UnitPosition { rows: 3 };

    /// Writes (75) and its gradient: rows 0–2 p̄₁ − p̄₂ (m).
    #[inline(always)]
    fn write<T: Real, G: LieGroup<T>>(k: &JointKinematics<T, G>, rows: &mut JointRows<'_, T>) {
        rows.position_error(k, 0..3);
    }
}
