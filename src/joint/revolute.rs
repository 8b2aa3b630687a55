//! [`Revolute`]: the vector revolute (hinge) joint (72), paper Section 5.3.

use super::kinematics::JointKinematics;
use super::vector::{JointKind, JointRows, VectorJoint};
use crate::lie::{LieGroup, Real};

/// A revolute joint: the joint origins coincide and the joint z axes align, leaving one
/// rotational degree of freedom about z (72):
///
/// ```text
/// C_rev = [ p̄₁ − p̄₂ ; [R̄₁ ⊟ R̄₂]₁₋₂ ]    (5 rows: m, m, m, rad, rad)
/// ```
///
/// Gradients (per body, `[∂/∂p | D_R]`, `proofs/joint_revolute.md`):
///
/// ```text
/// body 1: [ I | −R₁ r̂₁ ]  rows 1–3,   [ 0 | [Γ⁻¹(e) J₁ᵀ]₁₋₂ ]    rows 4–5   (162)
/// body 2: [ −I | R₂ r̂₂ ]  rows 1–3,   [ 0 | [−Γ⁻¹(e)ᵀ J₂ᵀ]₁₋₂ ]  rows 4–5   (163)
/// ```
///
/// with e = R̄₁ ⊟ R̄₂. The joint angle (73) and its gradient are
/// [`super::JointKinematics::revolute_angle_gradient`].
///
/// The hinge axis is the joint frames' z axis. Compliance (see
/// [`VectorJoint::with_compliance`]): m/N for rows 1–3, rad/(N·m) for rows 4–5.
///
/// ```
/// use lie_xpbd::joint::{JointFrame, Revolute};
/// use lie_xpbd::lie::SO3Matrix;
/// use lie_xpbd::xpbd::{BodyId, Constraint};
/// use nalgebra::Vector3;
/// // Body 0 hinged to the world at the origin, at its own point (0, 0.5, 0).
/// let hinge = Revolute::<f64, SO3Matrix<f64>>::new(
///     None,
///     JointFrame::identity(),
///     Some(BodyId(0)),
///     JointFrame::at(Vector3::new(0.0, 0.5, 0.0)),
/// )
/// .unwrap();
/// assert_eq!(hinge.dim(), 5);
/// assert_eq!(hinge.name(), "revolute(world, 0)");
/// ```
pub type Revolute<T, G> = VectorJoint<T, G, RevoluteKind>;

/// The [`JointKind`] of [`Revolute`]: `"revolute"`, 5 rows (72).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RevoluteKind;

impl JointKind for RevoluteKind {
    const NAME: &'static str = "revolute";
    const DIM: usize = 5;
    /// Position columns: rows 0–2 ±I (Δp), rows 3–4 zero.
    const LAYOUT: crate::xpbd::GradientLayout =
        crate::xpbd::GradientLayout::UnitPosition { rows: 3 };

    /// Writes (72) and its gradient (162)–(163): rows 0–2 p̄₁ − p̄₂ (m), rows 3–4
    /// [R̄₁ ⊟ R̄₂]₁₋₂ (rad).
    #[inline(always)]
    fn write<T: Real, G: LieGroup<T>>(k: &JointKinematics<T, G>, rows: &mut JointRows<'_, T>) {
        rows.position_error(k, 0..3);
        rows.rotation_error(k, 0..2);
    }
}
