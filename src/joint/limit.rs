//! [`RevoluteLimit`]: the revolute joint angle limits (74), paper Section 5.3.2, as one
//! inequality row, with the joint angle unwrapped across ±π.
//!
//! # Design: where the unwrapped angle lives
//! The joint angle θ_rev = [R̄₂ ⊟ R̄₁]₃ (side 2 relative to side 1: (73) with its sign
//! reversed, [`super::JointKinematics::revolute_angle`]) is read from a Log and so lies
//! in [−π, π):
//! it jumps by 2π at the branch cut. To allow ranges wider than 2π (e.g. ±270°) the
//! limit keeps a *reference angle* θ_ref — the unwrapped angle at the end of the last
//! substep — and evaluates the unwrapped angle as
//!
//! ```text
//! θ = θ_ref + wrap(θ_rev − θ_ref),   wrap(x) ∈ [−π, π)
//! ```
//!
//! which is continuous as long as the joint turns by less than π between two updates of
//! θ_ref. `Constraint::evaluate` takes `&self`, so θ_ref is updated by the
//! [`Constraint::end_substep`] hook, which [`crate::xpbd::World::substep`] calls once
//! per substep for every constraint after the velocity update. Within one substep θ_ref
//! is constant, so C and ∇C are ordinary functions of the poses (the gradient check
//! and the iterations see a smooth function). θ_ref starts at 0 (the angle at the first
//! evaluation is then read in [−π, π)); a joint that starts wound past π gives its
//! starting angle with [`RevoluteLimit::with_angle`]. Because θ − θ_rev is a constant
//! multiple of 2π near any state, ∇θ = ∇θ_rev, minus the row 3 of (162)–(163)
//! ([`super::JointKinematics::revolute_angle_gradient`]).
//!
//! # The row
//! Both inequalities of (74), C_min = θ − θ_min ≥ 0 and C_max = θ_max − θ ≥ 0, are one
//! row: the one of the nearer limit (C_min if θ < (θ_min + θ_max)/2, else C_max), with
//! λ ∈ [0, ∞) ([`Constraint::lambda_bounds`]). So the row pushes only when violated
//! and the accumulated λ stays on its side of zero; inside the range the row's λ is
//! clamped back to zero. The side could switch within a substep only if the joint
//! crossed the middle of its range while being pushed, which needs a range of less than
//! about one substep's rotation.

use super::attachments::JointAttachments;
use super::frame::JointFrame;
use super::limit_row::UnwrappedAngle;
use super::limit_row::{
    checked_compliance, checked_limits, distance_to_middle, nearer_limit, write_row, Row,
};
use crate::lie::real::c;
use crate::lie::{LieGroup, Real};
use crate::xpbd::{Body, BodyId, Constraint, ConstraintEval, XpbdError, MAX_BODIES};

/// `x` wrapped to [−π, π).
#[inline]
pub fn wrap_angle<T: Real>(x: T) -> T {
    let two_pi = T::two_pi();
    x - two_pi * (x / two_pi + c::<T>(0.5)).floor()
}

/// Angle limits θ_min ≤ θ ≤ θ_max (74) on the revolute joint angle θ (73) between two
/// joint frames (the same frames as the [`super::Revolute`] they limit; the hinge axis
/// is the frames' z axis), as one inequality row with compliance α (rad/(N·m),
/// default 0). θ is unwrapped across ±π (module docs), so ranges wider than 2π work.
///
/// C (rad) and its gradient per body `[∂C/∂p | D_R C]`:
///
/// ```text
/// θ < (θ_min + θ_max)/2:  C = θ − θ_min,  ∇C =  ∇θ
/// otherwise:              C = θ_max − θ,  ∇C = −∇θ
/// ∇θ: body 1 [ 0 | [Γ⁻¹(e) J₁ᵀ]₃ ],  body 2 [ 0 | [−Γ⁻¹(e)ᵀ J₂ᵀ]₃ ]
/// ```
///
/// with e = R̄₁ ⊟ R̄₂ (`proofs/joint_revolute_limit.md`).
///
/// ```
/// use lie_xpbd::joint::{JointFrame, RevoluteLimit};
/// use lie_xpbd::lie::SO3Matrix;
/// use lie_xpbd::xpbd::{BodyId, Constraint};
/// let limit = RevoluteLimit::<f64, SO3Matrix<f64>>::new(
///     None,
///     JointFrame::identity(),
///     Some(BodyId(0)),
///     JointFrame::identity(),
///     -1.0,
///     1.0,
/// )
/// .unwrap();
/// assert_eq!(limit.dim(), 1);
/// assert_eq!(limit.lambda_bounds(0).0, 0.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RevoluteLimit<T: Real, G: LieGroup<T>> {
    attachments: JointAttachments<T, G>,
    lower: T,
    upper: T,
    compliance: T,
    /// θ_ref: the unwrapped angle at the last [`Constraint::end_substep`] (rad).
    reference: UnwrappedAngle<T>,
}

impl<T: Real, G: LieGroup<T>> RevoluteLimit<T, G> {
    /// Hard (α = 0) limits `lower` ≤ θ ≤ `upper` (rad) on the angle of the revolute
    /// joint between `body1` at `frame1` and `body2` at `frame2` (a `None` body is the
    /// fixed world, its frame in world coordinates). The reference angle is 0.
    ///
    /// # Errors
    /// As [`JointAttachments::new`]; [`XpbdError::InvalidJoint`] (field `"limits"`)
    /// unless both limits are finite and `lower < upper`.
    pub fn new(
        body1: Option<BodyId>,
        frame1: JointFrame<T, G>,
        body2: Option<BodyId>,
        frame2: JointFrame<T, G>,
        lower: T,
        upper: T,
    ) -> Result<Self, XpbdError> {
        let attachments = JointAttachments::new(body1, frame1, body2, frame2)?;
        checked_limits(
            lower,
            upper,
            &attachments.label(KIND),
            "angle limits must be finite with lower < upper (rad)",
        )?;
        Ok(Self {
            attachments,
            lower,
            upper,
            compliance: T::zero(),
            reference: UnwrappedAngle::new(),
        })
    }

    /// Sets the compliance α of the row, rad/(N·m) (0 = hard).
    ///
    /// # Errors
    /// [`XpbdError::BadCompliance`] for a negative or non-finite α.
    pub fn with_compliance(mut self, compliance: T) -> Result<Self, XpbdError> {
        self.compliance = checked_compliance(self.name(), compliance)?;
        Ok(self)
    }

    /// Sets the reference angle θ_ref (rad): the unwrapped angle is read as the value
    /// nearest θ_ref that agrees with θ_rev modulo 2π. Use it for a joint that starts
    /// wound past ±π (e.g. at 200°); default 0.
    ///
    /// # Errors
    /// [`XpbdError::NonFinite`] for a non-finite angle.
    pub fn with_angle(mut self, angle: T) -> Result<Self, XpbdError> {
        let name = self.name();
        self.reference.set(angle, &name)?;
        Ok(self)
    }

    /// The two attachments (bodies and joint frames).
    #[inline]
    pub fn attachments(&self) -> &JointAttachments<T, G> {
        &self.attachments
    }

    /// The limits (θ_min, θ_max), rad.
    #[inline]
    pub fn limits(&self) -> (T, T) {
        (self.lower, self.upper)
    }

    /// The reference angle θ_ref (rad): the unwrapped angle at the last
    /// [`Constraint::end_substep`], or the one given to [`RevoluteLimit::with_angle`].
    #[inline]
    pub fn reference_angle(&self) -> T {
        self.reference.reference()
    }

    /// The unwrapped joint angle θ = θ_ref + wrap(θ_rev − θ_ref) (rad) at `bodies`;
    /// `None` if a body id is not in `bodies`.
    pub fn angle(&self, bodies: &[Body<T, G>]) -> Option<T> {
        let k = self.attachments.kinematics(bodies)?;
        Some(self.reference.unwrap(k.revolute_angle()))
    }

    /// The row's value and its per-body gradient rows: see the type docs.
    fn row(&self, bodies: &[Body<T, G>]) -> Option<Row<T>> {
        let k = self.attachments.kinematics(bodies)?;
        let (wrapped, grads) = k.revolute_angle_gradient();
        Some(nearer_limit(
            self.lower,
            self.upper,
            (self.reference.unwrap(wrapped), grads),
        ))
    }
}

const KIND: &str = "revolute_limit";

impl<T: Real, G: LieGroup<T>> Constraint<T, G> for RevoluteLimit<T, G> {
    /// `"revolute_limit(<body 1>, <body 2>)"`.
    fn name(&self) -> String {
        self.attachments.label(KIND)
    }

    /// `"revolute_limit"`.
    fn kind(&self) -> &'static str {
        KIND
    }

    fn dim(&self) -> usize {
        1
    }

    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        self.attachments.bodies()
    }

    /// Writes the row of the nearer limit (type docs). NaN value if a body id is not in
    /// `bodies`.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        write_row(&self.attachments, self.row(bodies), out);
    }

    /// |θ − (θ_min + θ_max)/2| (rad): the row switches limits there.
    fn kink_distance(&self, bodies: &[Body<T, G>]) -> Option<T> {
        let theta = self.angle(bodies)?;
        Some(distance_to_middle(self.lower, self.upper, theta))
    }

    fn compliance(&self, _row: usize) -> T {
        self.compliance
    }

    /// No: a bounded row is projected row by row.
    fn solve_as_block(&self) -> bool {
        false
    }

    /// `(0, +∞)`: the row only pushes the angle back into the range.
    fn lambda_bounds(&self, _row: usize) -> (T, T) {
        (T::zero(), c::<T>(f64::INFINITY))
    }

    /// Moves θ_ref to the current unwrapped angle.
    fn end_substep(&mut self, bodies: &[Body<T, G>]) {
        self.reference.follow(self.angle(bodies));
    }
}
