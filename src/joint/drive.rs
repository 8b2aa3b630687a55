//! [`JointDrive`]: joints driven to a target joint position by springs, paper Section
//! 5.6, eq. (81) and 5.6.1–5.6.3: [`RevoluteDrive`], [`SphericalDrive`],
//! [`PrismaticDrive`].
//!
//! # The constraint
//! (81) is a modified fixed joint (71), six rows, the positional part in side 1's joint
//! frame:
//!
//! ```text
//! C_target = [ R̄₁ᵀ(p̄₂ − p̄₁) − p_target ;  R̄₁ ⊟ R̄₂ − θ_target ]        (81, as printed)
//! ```
//!
//! with compliance α = 0 on the rows the joint holds and α = 1/k on the driven rows:
//!
//! | drive | p_target | θ_target | α | driven rows | eq. |
//! |---|---|---|---|---|---|
//! | [`RevoluteDrive`] | 0 | (0, 0, θ_target) | (0, 0, 0, 0, 0, 1/k) | 5 | 5.6.1 |
//! | [`SphericalDrive`] | 0 | θ_target | (0, 0, 0, 1/k_x, 1/k_y, 1/k_z) | 3, 4, 5 | 5.6.2 |
//! | [`PrismaticDrive`] | (0, 0, d_target) | 0 | (0, 0, 1/k, 0, 0, 0) | 2 | 5.6.3 |
//!
//! (rows 0-based). A drive therefore **replaces** the joint it drives: its hard rows
//! are the joint's constraint (positions coincide and, for revolute and prismatic, the
//! axes align — the same set as (72), (75), (79), written as R̄₁ᵀ(p̄₂ − p̄₁) = 0 instead
//! of p̄₁ − p̄₂ = 0), and its compliant rows are the springs. Use a
//! [`RevoluteDrive`] *instead of* a [`super::Revolute`], not next to one: the two would
//! hold the same rows twice. Limits ([`super::RevoluteLimit`]) and motors
//! ([`super::VelocityMotor`]) sit next to a drive as they sit next to a joint.
//!
//! # The rotation target on the manifold
//! The rotation rows are implemented as
//!
//! ```text
//! ε = R̄₁ ⊟ (R̄₂ Exp(θ_target)) = Log(Exp(−θ_target) R̄₂ᵀ R̄₁)
//! ```
//!
//! not as the printed tangent-space difference (R̄₁ ⊟ R̄₂) − θ_target. Both vanish
//! exactly when R̄₂ᵀR̄₁ = Exp(θ_target) (so θ_target is the body-frame rotation vector of
//! (81): at rest R̄₁ = R̄₂ ⊞ θ_target, R̄₁ᵀR̄₂ = Exp(−θ_target)). They differ away from
//! the target. Write R̄₂ᵀR̄₁ = Exp(θ_target) Exp(δ), δ the deviation in side 1's joint
//! frame. Then ε = δ exactly, while the tangent-space difference is
//! Γ⁻¹(θ_target) δ + O(δ²) (27): its axes are turned and scaled by Γ⁻¹(θ_target), whose
//! part perpendicular to θ_target has the symmetric factor (|θ|/2)·cot(|θ|/2) → 0 as
//! |θ_target| → π, so the per-axis stiffnesses k_x, k_y, k_z would not act about the
//! joint axes, and near |θ_target| = π the spring would hold the joint on Log's branch
//! cut, where R̄₁ ⊟ R̄₂ jumps. With ε the springs act about side 1's joint axes (ε has
//! the same coordinates in side 1's joint frame and in the target frame R̄₂Exp(θ_target),
//! because Exp(ε) leaves ε fixed) and the branch cut is at |ε| = π, opposite the target.
//!
//! For the revolute drive, θ_target = −θ e₃ (θ the target joint angle, side 2 relative
//! to side 1, see below) commutes with every rotation about z, and on the joint's
//! constraint set (rows 3–4 zero, R̄₁ᵀR̄₂ = R_z(θ_rev)) ε = (0, 0, −wrap(θ_rev − θ)):
//! the printed row with the error wrapped to [−π, π). A target moved across ±π therefore turns the joint the short way (a
//! target of 3.1 rad followed by −3.1 rad is a turn of 0.083 rad, not of 6.2 rad), and
//! a target ramping through many turns is followed continuously. The drive is a
//! spring on the circle: targets θ and θ + 2π are the same target, and a joint that
//! lags its target by more than π is pulled the other way round.
//!
//! ε is the rotation error of [`JointKinematics`] between side 1's joint frame and the
//! *target frame* (r₂, J₂ Exp(θ_target)) on side 2; the drive evaluates it with
//! [`JointKinematics::rotation_error_gradient`] on that frame, and the positional rows
//! with [`JointKinematics::relative_position_gradient`].
//!
//! # Gradient
//! Per body, `[∂C/∂p | D_R C]` (59), with Q = Exp(θ_target) and u = R̄₁ᵀ(p̄₂ − p̄₁)
//! (`proofs/joint_drive.md`):
//!
//! ```text
//! rows 0–2 (u − p_target):  body 1 [ −R̄₁ᵀ | J₁ᵀ (R₁ᵀ(p̄₂ − p₁))^ ],  body 2 [ R̄₁ᵀ | −R̄₁ᵀ R₂ r̂₂ ]
//! rows 3–5 (ε):             body 1 [ 0 | Γ⁻¹(ε) J₁ᵀ ],              body 2 [ 0 | −Γ⁻¹(ε)ᵀ Qᵀ J₂ᵀ ]
//! ```
//!
//! # Time-varying targets
//! The target is a [`TargetSchedule`] behind a [`TargetHandle`]
//! ([`JointDrive::target_handle`]): a constant ([`TargetHandle::set`],
//! [`JointDrive::set_target`]), a constant rate target(t) = target₀ + rate·t
//! ([`JointDrive::with_rate`], [`TargetHandle::set_ramp`]) or a function of time
//! ([`TargetHandle::set_function`]). [`Constraint::begin_substep`] reads it at
//! `clock.end_time`, the time the substep's solved positions belong to, so within a
//! substep C is an ordinary function of the poses. For the spherical drive a ramp moves
//! the rotation vector linearly, θ_target(t) = θ₀ + ω t (a steady turn about a fixed
//! axis when ω ∥ θ₀).
//!
//! # Damping
//! [`JointDrive::with_damping`] gives the driven rows a Rayleigh damping b (s,
//! Section 4.4, [`Constraint::damping`]): the spring k then has the damping coefficient
//! b·k. It damps the joint's own rate (∇C·v, the body velocities), not the rate
//! relative to a moving target: a drive following a ramp of rate r lags it by b·r in
//! the steady state, up to O(h) terms of the substep (`tests/joint/drives.rs`,
//! `ramp_lag`, derives and measures them for a hinged body).
//!
//! # Errors
//! Constructors return [`XpbdError`]: as [`JointAttachments::new`] for the bodies and
//! frames; `NonFinite` for a non-finite target or rate; `InvalidJoint` (field
//! `"stiffness"`) for a stiffness that is not > 0 or a wrong number of them;
//! `BadDamping` for a negative or non-finite damping.

use super::attachments::JointAttachments;
use super::frame::JointFrame;
use super::kinematics::{Block3, JointKinematics};
use super::target::{TargetHandle, TargetSchedule, TargetValue};
use crate::lie::{LieGroup, Real};
use crate::xpbd::{
    Body, BodyId, Constraint, ConstraintEval, SubstepClock, XpbdError, MAX_BODIES, MAX_ROWS,
};
use nalgebra::Vector3;
use std::fmt;

/// What makes a drive the drive it is: its name, its driven rows and what its target
/// means. Implemented by zero-sized markers ([`RevoluteDriveKind`],
/// [`SphericalDriveKind`], [`PrismaticDriveKind`]).
pub trait DriveKind<T: Real>: Copy + PartialEq + fmt::Debug + Send + Sync + 'static {
    /// The drive's name in [`Constraint::name`] and [`Constraint::kind`], e.g.
    /// `"revolute_drive"`.
    const NAME: &'static str;

    /// The rows of (81) (0-based: 0–2 position, 3–5 rotation) that carry the spring
    /// α = 1/k; the others are hard.
    const DRIVEN: &'static [usize];

    /// The target: a joint angle (rad), a slide (m) or a rotation vector (rad).
    type Target: TargetValue<T>;

    /// (p_target, θ_target) of (81) as printed for `target`: m in side 1's joint frame,
    /// and a body-frame rotation vector (rad) of side 1 relative to side 2 (the
    /// negative of a rotation target, which is side 2 relative to side 1).
    fn offsets(target: &Self::Target) -> (Vector3<T>, Vector3<T>);
}

/// A joint driven to a target by springs (81), paper Section 5.6: six rows, hard where
/// the joint holds and compliant (α = 1/k) on the driven rows. See the module docs for
/// the constraint, its on-manifold rotation target and its gradient. Use it through
/// [`RevoluteDrive`], [`SphericalDrive`] and [`PrismaticDrive`]; it replaces the joint it
/// drives.
///
/// `Clone` gives an independent drive with a copy of the target schedule (a handle
/// taken from the original does not steer the clone).
pub struct JointDrive<T: Real, G: LieGroup<T>, K: DriveKind<T>> {
    attachments: JointAttachments<T, G>,
    /// α per row: 0 on hard rows, 1/k on driven rows.
    compliance: [T; MAX_ROWS],
    /// Rayleigh damping b (s) of the driven rows.
    damping: T,
    handle: TargetHandle<T, K::Target>,
    /// The target in use this substep, and what it gives:
    target: K::Target,
    /// p_target (m, side 1's joint frame).
    position_target: Vector3<T>,
    /// θ_target (rad).
    rotation_target: Vector3<T>,
    /// (r₂, J₂ Exp(θ_target)): side 2's joint frame turned by the target.
    target_frame2: JointFrame<T, G>,
}

/// A revolute joint sprung to a target joint angle θ_target (rad, the revolute angle
/// θ_rev of [`super::JointKinematics::revolute_angle`]: side 2 relative to side 1) with
/// a torsional stiffness k (N·m/rad), Section 5.6.1: the hinge rows are hard, row 5 has
/// α = 1/k (rad/(N·m)).
///
/// ```text
/// C = [ R̄₁ᵀ(p̄₂ − p̄₁) ; R̄₁ ⊟ (R̄₂ Exp(−θ_target e₃)) ]   α = (0, 0, 0, 0, 0, 1/k)
/// ```
///
/// On the hinge, row 5 is −wrap(θ_rev − θ_target), wrap ∈ [−π, π): the joint turns the
/// short way to its target (module docs). At rest R̄₂ = R̄₁ R_z(θ_target): a positive
/// target turns side 2 positively about side 1's joint z axis, the sense of the
/// spherical drive's target, the twist angle (78) and the slide (80). (The printed (81)
/// uses R̄₁ ⊟ R̄₂, side 1 relative to side 2; the target enters with its sign reversed.)
///
/// ```
/// use lie_xpbd::joint::{JointFrame, RevoluteDrive};
/// use lie_xpbd::lie::SO3Matrix;
/// use lie_xpbd::xpbd::{BodyId, Constraint};
/// let drive = RevoluteDrive::<f64, SO3Matrix<f64>>::new(
///     None, JointFrame::identity(), Some(BodyId(0)), JointFrame::identity(), 0.5, 20.0,
/// )
/// .unwrap()
/// .with_rate(0.1) // θ_target(t) = 0.5 + 0.1 t rad
/// .unwrap();
/// assert_eq!(drive.dim(), 6);
/// assert_eq!(drive.compliance(5), 1.0 / 20.0);
/// assert_eq!(drive.compliance(4), 0.0);
/// assert_eq!(drive.name(), "revolute_drive(world, 0)");
/// ```
pub type RevoluteDrive<T, G> = JointDrive<T, G, RevoluteDriveKind>;

/// A spherical joint sprung to a target relative orientation, Section 5.6.2: the joint
/// origins coincide (rows 0–2 hard) and rows 3–5 are springs of stiffness k_x, k_y, k_z
/// (N·m/rad) about side 1's joint axes, α = 1/kᵢ (rad/(N·m)).
///
/// ```text
/// C = [ R̄₁ᵀ(p̄₂ − p̄₁) ; R̄₁ ⊟ (R̄₂ Exp(−θ_target)) ]   α = (0, 0, 0, 1/k_x, 1/k_y, 1/k_z)
/// ```
///
/// The target θ_target is the rotation vector of the relative orientation at rest:
/// R̄₁ᵀR̄₂ = Exp(θ_target) (the R_Δ of (76): side 2 relative to side 1, the sense of
/// every joint coordinate of this library), so the constraint is written with
/// Exp(−θ_target) on side 2 (the printed (81) uses R̄₁ ⊟ R̄₂, side 1 relative to side 2).
/// [`relative_rotation_target`] converts a desired R̄₁ᵀR̄₂ into θ_target. One stiffness for all three axes in [`JointDrive::new`], three with
/// [`JointDrive::with_stiffnesses`].
pub type SphericalDrive<T, G> = JointDrive<T, G, SphericalDriveKind>;

/// A prismatic joint sprung to a target slide d_target (m, the d_pr of (80)) with a
/// stiffness k (N/m), Section 5.6.3: rows 0, 1 (off-axis position) and 3–5 (rotation)
/// are hard, row 2 has α = 1/k (m/N).
///
/// ```text
/// C = [ R̄₁ᵀ(p̄₂ − p̄₁) − (0, 0, d_target) ; R̄₁ ⊟ R̄₂ ]   α = (0, 0, 1/k, 0, 0, 0)
/// ```
pub type PrismaticDrive<T, G> = JointDrive<T, G, PrismaticDriveKind>;

/// The [`DriveKind`] of [`RevoluteDrive`]: `"revolute_drive"`, driven row 5, target a
/// joint angle (rad).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RevoluteDriveKind;

/// The [`DriveKind`] of [`SphericalDrive`]: `"spherical_drive"`, driven rows 3–5,
/// target a rotation vector (rad).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SphericalDriveKind;

/// The [`DriveKind`] of [`PrismaticDrive`]: `"prismatic_drive"`, driven row 2, target a
/// slide (m).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PrismaticDriveKind;

impl<T: Real> DriveKind<T> for RevoluteDriveKind {
    const NAME: &'static str = "revolute_drive";
    const DRIVEN: &'static [usize] = &[5];
    type Target = T;

    /// (0, −θ e₃): the rotation offset of (81) is side 1 relative to side 2.
    fn offsets(target: &T) -> (Vector3<T>, Vector3<T>) {
        (
            Vector3::zeros(),
            Vector3::new(T::zero(), T::zero(), -*target),
        )
    }
}

impl<T: Real> DriveKind<T> for SphericalDriveKind {
    const NAME: &'static str = "spherical_drive";
    const DRIVEN: &'static [usize] = &[3, 4, 5];
    type Target = Vector3<T>;

    /// (0, −θ): the rotation offset of (81) is side 1 relative to side 2.
    fn offsets(target: &Vector3<T>) -> (Vector3<T>, Vector3<T>) {
        (Vector3::zeros(), -*target)
    }
}

impl<T: Real> DriveKind<T> for PrismaticDriveKind {
    const NAME: &'static str = "prismatic_drive";
    const DRIVEN: &'static [usize] = &[2];
    type Target = T;

    /// (d e₃, 0).
    fn offsets(target: &T) -> (Vector3<T>, Vector3<T>) {
        (
            Vector3::new(T::zero(), T::zero(), *target),
            Vector3::zeros(),
        )
    }
}

/// θ_target of a [`SphericalDrive`] whose joint frames should come to rest at the
/// relative orientation `relative` = R̄₁ᵀR̄₂ (the R_Δ of (76)): Log(relative), rad.
pub fn relative_rotation_target<T: Real, G: LieGroup<T>>(relative: &G) -> Vector3<T> {
    relative.log()
}

impl<T: Real, G: LieGroup<T>, K: DriveKind<T>> JointDrive<T, G, K> {
    /// A drive between `body1` at `frame1` and `body2` at `frame2` (a `None` body is the
    /// fixed world, its frame in world coordinates), at the constant `target`, with the
    /// same stiffness `stiffness` (N·m/rad or N/m) on every driven row. `stiffness` =
    /// +∞ makes the driven rows hard (a rigid servo to the target).
    ///
    /// # Errors
    /// As [`JointAttachments::new`]; [`XpbdError::NonFinite`] for a non-finite target;
    /// [`XpbdError::InvalidJoint`] (field `"stiffness"`) unless `stiffness` > 0 (NaN is
    /// rejected).
    pub fn new(
        body1: Option<BodyId>,
        frame1: JointFrame<T, G>,
        body2: Option<BodyId>,
        frame2: JointFrame<T, G>,
        target: K::Target,
        stiffness: T,
    ) -> Result<Self, XpbdError> {
        let attachments = JointAttachments::new(body1, frame1, body2, frame2)?;
        if !target.all_finite() {
            return Err(XpbdError::NonFinite {
                what: format!("target of '{}'", attachments.label(K::NAME)),
            });
        }
        let handle =
            TargetHandle::new(attachments.label(K::NAME), TargetSchedule::Constant(target));
        let mut drive = Self {
            attachments,
            compliance: [T::zero(); MAX_ROWS],
            damping: T::zero(),
            handle,
            target,
            position_target: Vector3::zeros(),
            rotation_target: Vector3::zeros(),
            target_frame2: frame2,
        };
        drive.apply_target(target);
        drive.with_stiffnesses(&[stiffness; MAX_ROWS][..K::DRIVEN.len().min(MAX_ROWS)])
    }

    /// Sets the stiffness of each driven row ([`DriveKind::DRIVEN`], in that order:
    /// one for revolute and prismatic, k_x, k_y, k_z for spherical), N·m/rad or N/m;
    /// +∞ makes a row hard.
    ///
    /// # Errors
    /// [`XpbdError::InvalidJoint`] (field `"stiffness"`) for a wrong number of values or
    /// a value that is not > 0.
    pub fn with_stiffnesses(mut self, stiffness: &[T]) -> Result<Self, XpbdError> {
        if stiffness.len() != K::DRIVEN.len() {
            return Err(XpbdError::InvalidJoint {
                field: "stiffness",
                value: format!("{} values for '{}'", stiffness.len(), self.name()),
                reason: "give one stiffness per driven degree of freedom (1 for revolute and prismatic, 3 for spherical)",
            });
        }
        for (&row, &k) in K::DRIVEN.iter().zip(stiffness) {
            if row >= MAX_ROWS {
                return Err(XpbdError::InvalidJoint {
                    field: "stiffness",
                    value: format!("driven row {row} of '{}'", self.name()),
                    reason: "DriveKind::DRIVEN must name rows 0 to 5 of (81)",
                });
            }
            if k.partial_cmp(&T::zero()) != Some(std::cmp::Ordering::Greater) {
                return Err(XpbdError::InvalidJoint {
                    field: "stiffness",
                    value: format!("{k} for row {row} of '{}'", self.name()),
                    reason:
                        "a drive stiffness must be > 0 (N·m/rad or N/m; +inf makes the row hard)",
                });
            }
            self.compliance[row] = T::one() / k;
        }
        Ok(self)
    }

    /// Sets the Rayleigh damping b (s) of the driven rows (module docs; 0 = undamped).
    ///
    /// # Errors
    /// [`XpbdError::BadDamping`] (naming the first driven row) for a negative or
    /// non-finite b.
    pub fn with_damping(mut self, damping: T) -> Result<Self, XpbdError> {
        if !(damping.is_finite() && damping >= T::zero()) {
            return Err(XpbdError::BadDamping {
                constraint: self.name(),
                row: K::DRIVEN[0],
                value: damping.to_f64(),
            });
        }
        self.damping = damping;
        Ok(self)
    }

    /// Makes the target move at a constant rate from the current one:
    /// target(t) = target₀ + `rate`·t, with target₀ the current target and t the world's
    /// time (s); `rate` in rad/s or m/s.
    ///
    /// # Errors
    /// [`XpbdError::NonFinite`] for a non-finite rate.
    pub fn with_rate(self, rate: K::Target) -> Result<Self, XpbdError> {
        self.handle.set_ramp(self.target, rate)?;
        Ok(self)
    }

    /// Sets a constant target, from now on (it is used by [`Constraint::evaluate`]
    /// immediately and by every later substep); replaces a ramp or function.
    ///
    /// # Errors
    /// [`XpbdError::NonFinite`] for a non-finite target (nothing changes).
    pub fn set_target(&mut self, target: K::Target) -> Result<(), XpbdError> {
        self.handle.set(target)?;
        self.apply_target(target);
        Ok(())
    }

    /// A handle on the target schedule, to change the target after the drive has been
    /// added to a world (module docs of [`super::target`]).
    pub fn target_handle(&self) -> TargetHandle<T, K::Target> {
        self.handle.clone()
    }

    /// The target in use: the one set last, or the schedule's value at the end of the
    /// last substep.
    #[inline]
    pub fn target(&self) -> K::Target {
        self.target
    }

    /// (p_target, θ_target) of (81) for the target in use: m (side 1's joint frame) and
    /// rad.
    #[inline]
    pub fn offsets(&self) -> (Vector3<T>, Vector3<T>) {
        (self.position_target, self.rotation_target)
    }

    /// The two attachments (bodies and joint frames).
    #[inline]
    pub fn attachments(&self) -> &JointAttachments<T, G> {
        &self.attachments
    }

    /// Compliance α of the six rows (0 on hard rows, 1/k on driven rows).
    #[inline]
    pub fn compliances(&self) -> &[T; MAX_ROWS] {
        &self.compliance
    }

    /// The deviation from the target, C of (81) with the on-manifold rotation rows
    /// (module docs): rows 0–2 m (side 1's joint frame), rows 3–5 rad. `None` if a body
    /// id is not in `bodies`.
    pub fn error(&self, bodies: &[Body<T, G>]) -> Option<[T; MAX_ROWS]> {
        let k = self.kinematics(bodies)?;
        let u = k.relative_position() - self.position_target;
        let e = k.rotation_error();
        Some([u.x, u.y, u.z, e.x, e.y, e.z])
    }

    fn apply_target(&mut self, target: K::Target) {
        let (p, theta) = K::offsets(&target);
        self.target = target;
        self.position_target = p;
        self.rotation_target = theta;
        let f2 = self.attachments.frame2();
        self.target_frame2 = JointFrame::new(f2.translation, f2.rotation.compose(&G::exp(&theta)));
    }

    /// Kinematics between side 1's joint frame and side 2's target frame.
    fn kinematics<'a>(&'a self, bodies: &'a [Body<T, G>]) -> Option<JointKinematics<'a, T, G>> {
        let [b1, b2] = self.attachments.side_bodies(bodies)?;
        Some(JointKinematics::from_bodies(
            b1,
            self.attachments.frame1(),
            b2,
            &self.target_frame2,
        ))
    }
}

/// Copies a 3-vector quantity and its per-side 3×6 blocks into rows `first..first + 3`.
fn write3<T: Real>(
    out: &mut ConstraintEval<T>,
    active: [bool; 2],
    first: usize,
    (value, gradient): (Vector3<T>, [Block3<T>; 2]),
) {
    for c in 0..3 {
        out.value[first + c] = value[c];
        for (slot, g) in gradient.iter().enumerate() {
            if active[slot] {
                out.gradient[slot].row_mut(first + c).copy_from(&g.row(c));
            }
        }
    }
}

impl<T: Real, G: LieGroup<T>, K: DriveKind<T>> Clone for JointDrive<T, G, K> {
    /// An independent copy with its own copy of the target schedule.
    fn clone(&self) -> Self {
        Self {
            attachments: self.attachments,
            compliance: self.compliance,
            damping: self.damping,
            handle: self.handle.detached(),
            target: self.target,
            position_target: self.position_target,
            rotation_target: self.rotation_target,
            target_frame2: self.target_frame2,
        }
    }
}

impl<T: Real, G: LieGroup<T>, K: DriveKind<T>> fmt::Debug for JointDrive<T, G, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JointDrive")
            .field("kind", &K::NAME)
            .field("attachments", &self.attachments)
            .field("compliance", &self.compliance)
            .field("damping", &self.damping)
            .field("target", &self.target)
            .field("schedule", &self.handle.schedule())
            .finish()
    }
}

impl<T: Real, G: LieGroup<T>, K: DriveKind<T>> Constraint<T, G> for JointDrive<T, G, K> {
    /// `"<kind>(<body 1>, <body 2>)"`, e.g. `"revolute_drive(world, 0)"`.
    fn name(&self) -> String {
        self.attachments.label(K::NAME)
    }

    /// [`DriveKind::NAME`]: `"revolute_drive"`, `"spherical_drive"` or
    /// `"prismatic_drive"`.
    fn kind(&self) -> &'static str {
        K::NAME
    }

    fn dim(&self) -> usize {
        MAX_ROWS
    }

    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        self.attachments.bodies()
    }

    /// Writes (81) with the on-manifold rotation rows and its gradient (module docs).
    /// NaN values and zero gradients if a body id is not in `bodies`.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        let Some(k) = self.kinematics(bodies) else {
            out.clear();
            out.value.fill(crate::lie::real::c::<T>(f64::NAN));
            return;
        };
        let active = self.attachments.bodies().map(|b| b.is_some());
        let (u, gu) = k.relative_position_gradient();
        write3(out, active, 0, (u - self.position_target, gu));
        write3(out, active, 3, k.rotation_error_gradient());
    }

    fn compliance(&self, row: usize) -> T {
        self.compliance.get(row).copied().unwrap_or_else(T::zero)
    }

    /// b (s) on the driven rows, 0 on the hard rows.
    fn damping(&self, row: usize) -> T {
        if K::DRIVEN.contains(&row) {
            self.damping
        } else {
            T::zero()
        }
    }

    /// Reads the target schedule at `clock.end_time` (a non-finite value from a
    /// function schedule is not applied; see [`TargetHandle::rejected`]).
    fn begin_substep(&mut self, clock: SubstepClock<T>, _bodies: &[Body<T, G>]) {
        if let Some(target) = self.handle.sample(clock.end_time) {
            self.apply_target(target);
        }
    }
}
