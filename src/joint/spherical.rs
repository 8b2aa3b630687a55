//! [`Spherical`]: the vector spherical (ball) joint (75), paper Section 5.4.

use super::attachments::{validated_compliance, write_missing, write_rows, JointAttachments};
use super::frame::JointFrame;
use crate::lie::{LieGroup, Real};
use crate::xpbd::{Body, BodyId, Constraint, ConstraintEval, XpbdError, MAX_BODIES};

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
/// spherical limits (76)–(78).
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
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spherical<T: Real, G: LieGroup<T>> {
    attachments: JointAttachments<T, G>,
    compliance: [T; 3],
}

impl<T: Real, G: LieGroup<T>> Spherical<T, G> {
    /// Number of rows of (75).
    pub const DIM: usize = 3;

    /// A hard (α = 0) spherical joint between `body1` at `frame1` and `body2` at
    /// `frame2`; a `None` body is the fixed world, whose frame is then given in world
    /// coordinates (Section 5.2.1).
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
            compliance: [T::zero(); 3],
        })
    }

    /// Sets the compliance of each of the 3 rows (m/N; 0 = hard).
    ///
    /// # Errors
    /// [`XpbdError::InvalidJoint`] unless exactly 3 values are given;
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

impl<T: Real, G: LieGroup<T>> Constraint<T, G> for Spherical<T, G> {
    /// `"spherical(<body 1>, <body 2>)"`, a side being a body index or `world`.
    fn name(&self) -> String {
        self.attachments.label("spherical")
    }

    fn dim(&self) -> usize {
        Self::DIM
    }

    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        self.attachments.bodies()
    }

    /// Writes (75) and its gradient: rows 0–2 p̄₁ − p̄₂ (m). The block of a world side
    /// is left zero. If a body id is not in `bodies` (impossible for a joint accepted
    /// by [`crate::xpbd::World::add_constraint`]) the values are NaN.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        let Some(k) = self.attachments.kinematics(bodies) else {
            write_missing(out, Self::DIM);
            return;
        };
        let active = self.attachments.bodies().map(|b| b.is_some());
        let (dp, gp) = k.position_error_gradient();
        write_rows(out, active, 0, 0..3, &dp, &gp);
    }

    fn compliance(&self, row: usize) -> T {
        self.compliance.get(row).copied().unwrap_or_else(T::zero)
    }
}
