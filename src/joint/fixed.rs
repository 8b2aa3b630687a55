//! [`Fixed`]: the vector fixed (weld) joint (71), paper Section 5.2.

use super::kinematics::JointKinematics;
use super::vector::{JointKind, JointRows, VectorJoint};
use crate::lie::{LieGroup, Real};

/// A fixed (weld) joint: the two joint frames coincide in position and orientation,
/// removing all six relative degrees of freedom (71):
///
/// ```text
/// C_fix = [ p̄₁ − p̄₂ ; R̄₁ ⊟ R̄₂ ]    (6 rows: m, m, m, rad, rad, rad)
/// ```
///
/// Gradients (per body, `[∂/∂p | D_R]`, `proofs/joint_fixed.md`), e = R̄₁ ⊟ R̄₂:
///
/// ```text
/// body 1: [ I | −R₁ r̂₁ ]  rows 1–3,   [ 0 | Γ⁻¹(e) J₁ᵀ ]    rows 4–6
/// body 2: [ −I | R₂ r̂₂ ]  rows 1–3,   [ 0 | −Γ⁻¹(e)ᵀ J₂ᵀ ]  rows 4–6
/// ```
///
/// Compliance (see [`VectorJoint::with_compliance`]): m/N for rows 1–3, rad/(N·m) for
/// rows 4–6.
///
/// ```
/// use lie_xpbd::joint::{Fixed, JointFrame};
/// use lie_xpbd::lie::UnitQuaternion;
/// use lie_xpbd::xpbd::{BodyId, Constraint};
/// let weld = Fixed::<f32, UnitQuaternion<f32>>::new(
///     Some(BodyId(0)),
///     JointFrame::identity(),
///     Some(BodyId(1)),
///     JointFrame::identity(),
/// )
/// .unwrap();
/// assert_eq!(weld.dim(), 6);
/// assert_eq!(weld.name(), "fixed(0, 1)");
/// ```
pub type Fixed<T, G> = VectorJoint<T, G, FixedKind>;

/// The [`JointKind`] of [`Fixed`]: `"fixed"`, 6 rows (71).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FixedKind;

impl JointKind for FixedKind {
    const NAME: &'static str = "fixed";
    const DIM: usize = 6;
    /// Position columns: rows 0–2 ±I (Δp), rows 3–5 zero.
    const LAYOUT: crate::xpbd::GradientLayout =
        crate::xpbd::GradientLayout::UnitPosition { rows: 3 };

    /// Writes (71) and its gradient: rows 0–2 p̄₁ − p̄₂ (m), rows 3–5 R̄₁ ⊟ R̄₂ (rad).
    #[inline(always)]
    fn write<T: Real, G: LieGroup<T>>(k: &JointKinematics<T, G>, rows: &mut JointRows<'_, T>) {
        rows.position_error(k, 0..3);
        rows.rotation_error(k, 0..3);
    }
}
