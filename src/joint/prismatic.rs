//! [`Prismatic`]: the vector prismatic (slider) joint (79), paper Section 5.5.

use super::kinematics::JointKinematics;
use super::vector::{JointKind, JointRows, VectorJoint};
use crate::lie::{LieGroup, Real};

/// A prismatic (slider) joint: the joint frames keep the same orientation and side 2's
/// joint origin stays on side 1's joint z axis, leaving one translation along it (79):
///
/// ```text
/// C_pr = [ [R̄₁ᵀ(p̄₂ − p̄₁)]₁₋₂ ; R̄₁ ⊟ R̄₂ ]    (5 rows: m, m, rad, rad, rad)
/// ```
///
/// Gradients (per body, `[∂/∂p | D_R]`, `proofs/joint_prismatic.md`), with
/// e = R̄₁ ⊟ R̄₂; the R₁ block of rows 1–2 is the corrected (174) (spec README):
///
/// ```text
/// body 1: [ −[R̄₁ᵀ]₁₋₂ | [J₁ᵀ(R₁ᵀ(p̄₂ − p₁))^]₁₋₂ ] rows 1–2,  [ 0 | Γ⁻¹(e) J₁ᵀ ]    rows 3–5
/// body 2: [ [R̄₁ᵀ]₁₋₂ | −[R̄₁ᵀ R₂ r̂₂]₁₋₂ ]          rows 1–2,  [ 0 | −Γ⁻¹(e)ᵀ J₂ᵀ ]  rows 3–5
/// ```
///
/// The slide (80) and its gradient are
/// [`super::JointKinematics::prismatic_offset_gradient`].
///
/// The slide axis is side 1's joint z axis. Compliance (see
/// [`VectorJoint::with_compliance`]): m/N for rows 1–2, rad/(N·m) for rows 3–5.
///
/// ```
/// use lie_xpbd::joint::{JointFrame, Prismatic};
/// use lie_xpbd::lie::SO3Matrix;
/// use lie_xpbd::xpbd::{BodyId, Constraint};
/// let slider = Prismatic::<f64, SO3Matrix<f64>>::new(
///     None,
///     JointFrame::identity(),
///     Some(BodyId(0)),
///     JointFrame::identity(),
/// )
/// .unwrap()
/// .with_compliance(&[0.0, 0.0, 1e-6, 1e-6, 1e-6])
/// .unwrap();
/// assert_eq!(slider.dim(), 5);
/// ```
pub type Prismatic<T, G> = VectorJoint<T, G, PrismaticKind>;

/// The [`JointKind`] of [`Prismatic`]: `"prismatic"`, 5 rows (79).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PrismaticKind;

impl JointKind for PrismaticKind {
    const NAME: &'static str = "prismatic";
    const DIM: usize = 5;
    /// Position columns: rows 0–1 ∓R̄₁ᵀ (u), rows 2–4 zero.
    const LAYOUT: crate::xpbd::GradientLayout =
        crate::xpbd::GradientLayout::LeadingPosition { rows: 2 };

    /// Writes (79) and its gradient: rows 0–1 [R̄₁ᵀ(p̄₂ − p̄₁)]₁₋₂ (m), rows 2–4
    /// R̄₁ ⊟ R̄₂ (rad).
    #[inline(always)]
    fn write<T: Real, G: LieGroup<T>>(k: &JointKinematics<T, G>, rows: &mut JointRows<'_, T>) {
        rows.relative_position(k, 0..2);
        rows.rotation_error(k, 0..3);
    }
}
