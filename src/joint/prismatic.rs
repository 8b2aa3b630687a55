//! [`Prismatic`]: the vector prismatic (slider) joint (79), paper Section 5.5.

use super::attachments::{validated_compliance, write_missing, write_rows, JointAttachments};
use super::frame::JointFrame;
use crate::lie::{LieGroup, Real};
use crate::xpbd::{Body, BodyId, Constraint, ConstraintEval, XpbdError, MAX_BODIES};

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
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prismatic<T: Real, G: LieGroup<T>> {
    attachments: JointAttachments<T, G>,
    compliance: [T; 5],
}

impl<T: Real, G: LieGroup<T>> Prismatic<T, G> {
    /// Number of rows of (79).
    pub const DIM: usize = 5;

    /// A hard (α = 0) prismatic joint between `body1` at `frame1` and `body2` at
    /// `frame2`; a `None` body is the fixed world, whose frame is then given in world
    /// coordinates (Section 5.2.1). The slide axis is side 1's joint z axis.
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
            compliance: [T::zero(); 5],
        })
    }

    /// Sets the compliance of each of the 5 rows (m/N for rows 1–2, rad/(N·m) for rows
    /// 3–5; 0 = hard).
    ///
    /// # Errors
    /// [`XpbdError::InvalidJoint`] unless exactly 5 values are given;
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

impl<T: Real, G: LieGroup<T>> Constraint<T, G> for Prismatic<T, G> {
    /// `"prismatic(<body 1>, <body 2>)"`, a side being a body index or `world`.
    fn name(&self) -> String {
        self.attachments.label("prismatic")
    }

    fn dim(&self) -> usize {
        Self::DIM
    }

    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        self.attachments.bodies()
    }

    /// Writes (79) and its gradient: rows 0–1 [R̄₁ᵀ(p̄₂ − p̄₁)]₁₋₂ (m), rows 2–4
    /// R̄₁ ⊟ R̄₂ (rad). The block of a world side is left zero. If a body id is not in
    /// `bodies` (impossible for a joint accepted by
    /// [`crate::xpbd::World::add_constraint`]) the values are NaN.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        let Some(k) = self.attachments.kinematics(bodies) else {
            write_missing(out, Self::DIM);
            return;
        };
        let active = self.attachments.bodies().map(|b| b.is_some());
        let (u, gu) = k.relative_position_gradient();
        write_rows(out, active, 0, 0..2, &u, &gu);
        let (e, ge) = k.rotation_error_gradient();
        write_rows(out, active, 2, 0..3, &e, &ge);
    }

    fn compliance(&self, row: usize) -> T {
        self.compliance.get(row).copied().unwrap_or_else(T::zero)
    }
}
