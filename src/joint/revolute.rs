//! [`Revolute`]: the vector revolute (hinge) joint (72), paper Section 5.3.

use super::attachments::{validated_compliance, write_missing, write_rows, JointAttachments};
use super::frame::JointFrame;
use crate::lie::{LieGroup, Real};
use crate::xpbd::{Body, BodyId, Constraint, ConstraintEval, XpbdError, MAX_BODIES};

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
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Revolute<T: Real, G: LieGroup<T>> {
    attachments: JointAttachments<T, G>,
    compliance: [T; 5],
}

impl<T: Real, G: LieGroup<T>> Revolute<T, G> {
    /// Number of rows of (72).
    pub const DIM: usize = 5;

    /// A hard (α = 0) revolute joint between `body1` at `frame1` and `body2` at
    /// `frame2`; a `None` body is the fixed world, whose frame is then given in world
    /// coordinates (Section 5.2.1). The hinge axis is the joint frames' z axis.
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

    /// Sets the compliance of each of the 5 rows (m/N for rows 1–3, rad/(N·m) for rows
    /// 4–5; 0 = hard).
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

impl<T: Real, G: LieGroup<T>> Constraint<T, G> for Revolute<T, G> {
    /// `"revolute(<body 1>, <body 2>)"`, a side being a body index or `world`.
    fn name(&self) -> String {
        self.attachments.label("revolute")
    }

    fn dim(&self) -> usize {
        Self::DIM
    }

    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        self.attachments.bodies()
    }

    /// Writes (72) and its gradient (162)–(163): rows 0–2 p̄₁ − p̄₂ (m), rows 3–4
    /// [R̄₁ ⊟ R̄₂]₁₋₂ (rad). The block of a world side is left zero. If a body id is not
    /// in `bodies` (impossible for a joint accepted by
    /// [`crate::xpbd::World::add_constraint`]) the values are NaN.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        let Some(k) = self.attachments.kinematics(bodies) else {
            write_missing(out, Self::DIM);
            return;
        };
        let active = self.attachments.bodies().map(|b| b.is_some());
        let (dp, gp) = k.position_error_gradient();
        write_rows(out, active, 0, 0..3, &dp, &gp);
        let (e, ge) = k.rotation_error_gradient();
        write_rows(out, active, 3, 0..2, &e, &ge);
    }

    fn compliance(&self, row: usize) -> T {
        self.compliance.get(row).copied().unwrap_or_else(T::zero)
    }
}
