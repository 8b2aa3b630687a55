//! [`Fixed`]: the vector fixed (weld) joint (71), paper Section 5.2.

use super::attachments::{validated_compliance, write_missing, write_rows, JointAttachments};
use super::frame::JointFrame;
use crate::lie::{LieGroup, Real};
use crate::xpbd::{Body, BodyId, Constraint, ConstraintEval, XpbdError, MAX_BODIES};

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
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fixed<T: Real, G: LieGroup<T>> {
    attachments: JointAttachments<T, G>,
    compliance: [T; 6],
}

impl<T: Real, G: LieGroup<T>> Fixed<T, G> {
    /// Number of rows of (71).
    pub const DIM: usize = 6;

    /// A hard (α = 0) fixed joint between `body1` at `frame1` and `body2` at `frame2`;
    /// a `None` body is the fixed world, whose frame is then given in world coordinates
    /// (Section 5.2.1).
    ///
    /// # Errors
    /// As [`JointAttachments::new`]: [`XpbdError::InvalidJoint`] if both bodies are
    /// `None` or equal; [`XpbdError::NonFinite`] / [`XpbdError::Lie`] for an invalid
    /// frame.
    pub fn new(
        body1: Option<BodyId>,
        frame1: JointFrame<T, G>,
        body2: Option<BodyId>,
        frame2: JointFrame<T, G>,
    ) -> Result<Self, XpbdError> {
        Ok(Self {
            attachments: JointAttachments::new(body1, frame1, body2, frame2)?,
            compliance: [T::zero(); 6],
        })
    }

    /// Sets the compliance of each of the 6 rows (m/N for rows 1–3, rad/(N·m) for rows
    /// 4–6; 0 = hard).
    ///
    /// # Errors
    /// [`XpbdError::InvalidJoint`] unless exactly 6 values are given;
    /// [`XpbdError::BadCompliance`] for a negative or non-finite value.
    pub fn with_compliance(mut self, compliance: &[T]) -> Result<Self, XpbdError> {
        self.compliance = validated_compliance(&self.name(), compliance)?;
        Ok(self)
    }

    /// The two attachments (bodies and joint frames).
    #[inline]
    pub fn attachments(&self) -> &JointAttachments<T, G> {
        &self.attachments
    }

    /// The compliance of every row.
    #[inline]
    pub fn compliances(&self) -> &[T] {
        &self.compliance
    }
}

impl<T: Real, G: LieGroup<T>> Constraint<T, G> for Fixed<T, G> {
    /// `"fixed(<body 1>, <body 2>)"`, a side being a body index or `world`.
    fn name(&self) -> String {
        self.attachments.label("fixed")
    }

    fn dim(&self) -> usize {
        Self::DIM
    }

    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        self.attachments.bodies()
    }

    /// Writes (71) and its gradient: rows 0–2 p̄₁ − p̄₂ (m), rows 3–5 R̄₁ ⊟ R̄₂ (rad).
    /// The block of a world side is left zero. If a body id is not in `bodies`
    /// (impossible for a joint accepted by [`crate::xpbd::World::add_constraint`]) the
    /// values are NaN.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        let Some(k) = self.attachments.kinematics(bodies) else {
            write_missing(out, Self::DIM);
            return;
        };
        let active = self.attachments.bodies().map(|b| b.is_some());
        let (dp, gp) = k.position_error_gradient();
        write_rows(out, active, 0, 0..3, &dp, &gp);
        let (e, ge) = k.rotation_error_gradient();
        write_rows(out, active, 3, 0..3, &e, &ge);
    }

    fn compliance(&self, row: usize) -> T {
        self.compliance.get(row).copied().unwrap_or_else(T::zero)
    }
}
