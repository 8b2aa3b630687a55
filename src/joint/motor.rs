//! [`VelocityMotor`]: a velocity motor on a revolute or prismatic joint, with a target
//! joint speed and a largest torque or force.
//!
//! # The row
//! The joint variable q is the revolute angle θ_rev = [R̄₂ ⊟ R̄₁]₃ (rad; (73) with the
//! sign of [`JointKinematics::revolute_angle`]: side 2 relative to side 1) or the
//! prismatic slide d_pr = [R̄₁ᵀ(p̄₂ − p̄₁)]₃ (80) (m). At the start of every substep
//! ([`Constraint::begin_substep`], bodies at their start-of-substep state) the motor
//! records q_start = q and the increment s·h of its target speed s over the substep h,
//! and then imposes, as one hard row (α = 0),
//!
//! ```text
//! C = q − (q_start + s h)       revolute: C = wrap(θ_rev − θ_rev,start) − s h
//! ```
//!
//! so that, unsaturated, the substep ends with the joint speed (q − q_start)/h = s,
//! which is the velocity update of Algorithm 1 (line 10). The revolute angle is taken
//! relative to q_start, wrap(x) ∈ [−π, π) ([`super::wrap_angle`]), so the row is
//! continuous across θ_rev = ±π and keeps full precision however many turns the joint
//! has made (nothing is accumulated); it needs |s h| < π, i.e. less than half a turn per
//! substep. Gradient (`proofs/joint_motor.md`): ∇C = ∇q, minus the row 3 of (162)–(163)
//! ([`JointKinematics::revolute_angle_gradient`]) or of the relative-position blocks
//! ([`JointKinematics::prismatic_offset_gradient`]).
//!
//! # The torque or force bound
//! In XPBD the multiplier of a row over a substep is λ = h²·(generalised force along
//! ∇C) (the constraint force of (51) is ∇Cᵀλ/h²). The motor bounds its λ by
//! ±F_max h² through [`Constraint::lambda_bounds`], so it can push the joint with at
//! most F_max (N·m or N): against a larger load it stalls and is driven back. A
//! [`crate::xpbd::World`] reads the bounds once, when the constraint is added, so the
//! motor is built with the world's substep h₀ (`SolverOptions::substep_dt()`) and
//! reports ±F_max h₀². Should a substep of another length h reach it, the motor scales
//! its row by σ = (h/h₀)²: the solver's λ′ of the row σC is λ/σ (the correction
//! 𝓜⁻¹∇Cᵀλ is unchanged), so the bound |λ′| ≤ F_max h₀² is |λ| ≤ F_max h², the same
//! force bound. Either way the generalised force is λ′/h₀²
//! ([`VelocityMotor::force_from_lambda`] of [`crate::xpbd::World::lambda`]); positive
//! pushes q forward.
//!
//! # Use
//! A motor sits next to the joint it drives (a [`super::Revolute`] or
//! [`super::Prismatic`], or a drive), which keeps the other degrees of freedom; add it
//! after the joint, so that it is projected last in each sweep. Its speed follows a
//! [`TargetSchedule`] behind a [`TargetHandle`] ([`VelocityMotor::speed_handle`]),
//! read at the substep's end time.
//!
//! # Errors
//! Constructors return [`XpbdError`]: as [`JointAttachments::new`]; `NonFinite` for a
//! non-finite speed; `InvalidJoint` (field `"max force"`) unless F_max > 0 (+∞ is an
//! unlimited motor), (field `"substep"`) unless h₀ > 0 is finite.

use super::attachments::JointAttachments;
use super::frame::JointFrame;
use super::kinematics::JointKinematics;
use super::limit::wrap_angle;
use super::target::{TargetHandle, TargetSchedule};
use crate::lie::real::c;
use crate::lie::{LieGroup, Real};
use crate::xpbd::{Body, BodyId, Constraint, ConstraintEval, SubstepClock, XpbdError, MAX_BODIES};
use nalgebra::RowVector6;
use std::fmt;

/// Which joint variable a [`VelocityMotor`] drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MotorAxis {
    /// The revolute angle θ_rev ([`super::JointKinematics::revolute_angle`]), rad; speed in rad/s, bound in N·m.
    Revolute,
    /// The prismatic slide d_pr (80), m; speed in m/s, bound in N.
    Prismatic,
}

impl MotorAxis {
    /// `"revolute_motor"` or `"prismatic_motor"`.
    pub fn name(self) -> &'static str {
        match self {
            MotorAxis::Revolute => "revolute_motor",
            MotorAxis::Prismatic => "prismatic_motor",
        }
    }
}

/// A velocity motor: one hard row C = q − (q_start + s h) on the joint variable q of a
/// revolute or prismatic joint, with its multiplier bounded by ±F_max h₀² (module docs).
///
/// ```
/// use lie_xpbd::joint::{JointFrame, Revolute, VelocityMotor};
/// use lie_xpbd::lie::{LieGroup, SO3Matrix};
/// use lie_xpbd::xpbd::{Body, SolverOptions, World};
/// use nalgebra::Vector3;
/// let options = SolverOptions { gravity: Vector3::zeros(), substeps: 4, ..SolverOptions::default() };
/// let mut world = World::<f64, SO3Matrix<f64>>::new(options).unwrap();
/// let wheel = Body::dynamic(1.0, Vector3::new(0.1, 0.1, 0.2), Vector3::zeros(), SO3Matrix::identity()).unwrap();
/// let id = world.add_body(wheel).unwrap();
/// let (f1, f2) = (JointFrame::identity(), JointFrame::identity());
/// world.add_constraint(Revolute::new(None, f1, Some(id), f2).unwrap()).unwrap();
/// // θ_rev at 3 rad/s with at most 0.6 N·m: an angular acceleration of 3 rad/s² until
/// // the speed is reached after 1 s.
/// let motor = VelocityMotor::revolute(None, f1, Some(id), f2, 3.0, 0.6, options.substep_dt()).unwrap();
/// world.add_constraint(motor).unwrap();
/// for _ in 0..2000 { world.step().unwrap(); }
/// // θ_rev is the wheel's angle about the joint z axis (side 2 relative to side 1), so
/// // ω_z = 3 rad/s.
/// approx::assert_relative_eq!(world.body(id).unwrap().angular_velocity.z, 3.0, epsilon = 1e-9);
/// ```
pub struct VelocityMotor<T: Real, G: LieGroup<T>> {
    attachments: JointAttachments<T, G>,
    axis: MotorAxis,
    /// F_max, N·m or N (may be +∞).
    max_force: T,
    /// h₀, s: the substep the λ bounds are given for.
    substep: T,
    handle: TargetHandle<T, T>,
    /// s in use this substep, rad/s or m/s.
    speed: T,
    /// q at the start of this substep (θ_rev wrapped, or d_pr).
    start: T,
    /// Whether a substep has begun (before that the row has no start to track from and
    /// evaluates to 0).
    started: bool,
    /// s·h of this substep.
    increment: T,
    /// σ = (h/h₀)².
    scale: T,
}

impl<T: Real, G: LieGroup<T>> VelocityMotor<T, G> {
    /// A motor driving the revolute angle θ_rev (side 2 relative to side 1, [`super::JointKinematics::revolute_angle`]) of the joint between `body1` at
    /// `frame1` and `body2` at `frame2` (the frames of the [`super::Revolute`] it sits
    /// next to; a `None` body is the fixed world) at `speed` rad/s, with at most
    /// `max_torque` N·m (+∞: unlimited), for a world whose substep is `substep` s.
    /// Positive speed increases θ_rev, i.e. turns side 2 relative to side 1 positively
    /// about side 1's joint z axis.
    ///
    /// # Errors
    /// See the module docs.
    pub fn revolute(
        body1: Option<BodyId>,
        frame1: JointFrame<T, G>,
        body2: Option<BodyId>,
        frame2: JointFrame<T, G>,
        speed: T,
        max_torque: T,
        substep: T,
    ) -> Result<Self, XpbdError> {
        let attachments = JointAttachments::new(body1, frame1, body2, frame2)?;
        Self::build(attachments, MotorAxis::Revolute, speed, max_torque, substep)
    }

    /// A motor driving the slide d_pr (80) of the prismatic joint between `body1` at
    /// `frame1` and `body2` at `frame2` at `speed` m/s (side 2's joint origin along side
    /// 1's joint z axis), with at most `max_force` N (+∞: unlimited), for a world whose
    /// substep is `substep` s.
    ///
    /// # Errors
    /// See the module docs.
    pub fn prismatic(
        body1: Option<BodyId>,
        frame1: JointFrame<T, G>,
        body2: Option<BodyId>,
        frame2: JointFrame<T, G>,
        speed: T,
        max_force: T,
        substep: T,
    ) -> Result<Self, XpbdError> {
        let attachments = JointAttachments::new(body1, frame1, body2, frame2)?;
        Self::build(attachments, MotorAxis::Prismatic, speed, max_force, substep)
    }

    fn build(
        attachments: JointAttachments<T, G>,
        axis: MotorAxis,
        speed: T,
        max_force: T,
        substep: T,
    ) -> Result<Self, XpbdError> {
        let name = attachments.label(axis.name());
        if !speed.is_finite() {
            return Err(XpbdError::NonFinite {
                what: format!("speed of '{name}'"),
            });
        }
        if max_force.partial_cmp(&T::zero()) != Some(std::cmp::Ordering::Greater) {
            return Err(XpbdError::InvalidJoint {
                field: "max force",
                value: format!("{max_force} for '{name}'"),
                reason:
                    "the motor's largest torque or force must be > 0 (N·m or N; +inf = unlimited)",
            });
        }
        if !(substep.is_finite() && substep > T::zero()) {
            return Err(XpbdError::InvalidJoint {
                field: "substep",
                value: format!("{substep} for '{name}'"),
                reason: "the substep h = dt/substeps must be positive and finite (s)",
            });
        }
        Ok(Self {
            handle: TargetHandle::new(name, TargetSchedule::Constant(speed)),
            attachments,
            axis,
            max_force,
            substep,
            speed,
            start: T::zero(),
            started: false,
            increment: speed * substep,
            scale: T::one(),
        })
    }

    /// Sets a constant target speed (rad/s or m/s), from now on (every later substep).
    ///
    /// # Errors
    /// [`XpbdError::NonFinite`] for a non-finite speed (nothing changes).
    pub fn set_speed(&mut self, speed: T) -> Result<(), XpbdError> {
        self.handle.set(speed)?;
        self.speed = speed;
        Ok(())
    }

    /// A handle on the speed schedule, to change the speed after the motor has been
    /// added to a world ([`super::target`]).
    pub fn speed_handle(&self) -> TargetHandle<T, T> {
        self.handle.clone()
    }

    /// The target speed in use (rad/s or m/s).
    #[inline]
    pub fn speed(&self) -> T {
        self.speed
    }

    /// The joint variable driven.
    #[inline]
    pub fn axis(&self) -> MotorAxis {
        self.axis
    }

    /// F_max, N·m or N.
    #[inline]
    pub fn max_force(&self) -> T {
        self.max_force
    }

    /// h₀, the substep (s) the λ bounds are given for.
    #[inline]
    pub fn substep(&self) -> T {
        self.substep
    }

    /// The generalised force (N·m or N; positive pushes q forward) that a multiplier
    /// `lambda` of this motor's row (e.g. `World::lambda(id)[0]`) stands for: λ/h₀²
    /// (module docs). Its magnitude is at most F_max.
    #[inline]
    pub fn force_from_lambda(&self, lambda: T) -> T {
        lambda / (self.substep * self.substep)
    }

    /// The two attachments (bodies and joint frames).
    #[inline]
    pub fn attachments(&self) -> &JointAttachments<T, G> {
        &self.attachments
    }

    /// The joint variable q at `bodies`: θ_rev in [−π, π) (rad) or d_pr (m); `None` if
    /// a body id is not in `bodies`.
    pub fn joint_position(&self, bodies: &[Body<T, G>]) -> Option<T> {
        let k = self.attachments.kinematics(bodies)?;
        Some(self.variable(&k))
    }

    fn variable(&self, k: &JointKinematics<T, G>) -> T {
        match self.axis {
            MotorAxis::Revolute => k.revolute_angle(),
            MotorAxis::Prismatic => k.prismatic_offset(),
        }
    }

    /// q − q_start (continuous across θ_rev = ±π) and ∇q.
    fn displacement(&self, k: &JointKinematics<T, G>) -> (T, [RowVector6<T>; 2]) {
        match self.axis {
            MotorAxis::Revolute => {
                let (q, g) = k.revolute_angle_gradient();
                (wrap_angle(q - self.start), g)
            }
            MotorAxis::Prismatic => {
                let (q, g) = k.prismatic_offset_gradient();
                (q - self.start, g)
            }
        }
    }
}

impl<T: Real, G: LieGroup<T>> Clone for VelocityMotor<T, G> {
    /// An independent copy with its own copy of the speed schedule.
    fn clone(&self) -> Self {
        Self {
            attachments: self.attachments,
            axis: self.axis,
            max_force: self.max_force,
            substep: self.substep,
            handle: self.handle.detached(),
            speed: self.speed,
            start: self.start,
            started: self.started,
            increment: self.increment,
            scale: self.scale,
        }
    }
}

impl<T: Real, G: LieGroup<T>> fmt::Debug for VelocityMotor<T, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VelocityMotor")
            .field("axis", &self.axis)
            .field("attachments", &self.attachments)
            .field("max_force", &self.max_force)
            .field("substep", &self.substep)
            .field("speed", &self.speed)
            .field("schedule", &self.handle.schedule())
            .finish()
    }
}

impl<T: Real, G: LieGroup<T>> Constraint<T, G> for VelocityMotor<T, G> {
    /// `"<kind>(<body 1>, <body 2>)"`, e.g. `"revolute_motor(world, 0)"`.
    fn name(&self) -> String {
        self.attachments.label(self.axis.name())
    }

    /// `"revolute_motor"` or `"prismatic_motor"`.
    fn kind(&self) -> &'static str {
        self.axis.name()
    }

    fn dim(&self) -> usize {
        1
    }

    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        self.attachments.bodies()
    }

    /// Writes σ·(q − q_start − s h) and σ·∇q (module docs); the value is 0 before the
    /// first substep (no q_start yet). NaN value if a body id is not in `bodies`.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        let Some(k) = self.attachments.kinematics(bodies) else {
            out.clear();
            out.value[0] = c::<T>(f64::NAN);
            return;
        };
        let (dq, grads) = self.displacement(&k);
        out.value[0] = if self.started {
            self.scale * (dq - self.increment)
        } else {
            T::zero()
        };
        for (slot, (id, g)) in self.attachments.bodies().iter().zip(grads).enumerate() {
            if id.is_some() {
                out.gradient[slot].row_mut(0).copy_from(&(g * self.scale));
            }
        }
    }

    /// `Some(0)` before the first substep (the row is the constant 0 until
    /// [`Constraint::begin_substep`] records q_start); for a revolute motor then
    /// π − |wrap(θ_rev − q_start)| (rad: the wrap jumps half a turn from q_start);
    /// `None` for a started prismatic motor (its row is smooth).
    fn kink_distance(&self, bodies: &[Body<T, G>]) -> Option<T> {
        if !self.started {
            return Some(T::zero());
        }
        match self.axis {
            MotorAxis::Revolute => {
                let q = self.joint_position(bodies)?;
                let pi = c::<T>(std::f64::consts::PI);
                Some(pi - super::wrap_angle(q - self.start).abs())
            }
            MotorAxis::Prismatic => None,
        }
    }

    /// 0: the row is hard; the bound on λ limits its force.
    fn compliance(&self, _row: usize) -> T {
        T::zero()
    }

    /// No: a bounded row is projected row by row.
    fn solve_as_block(&self) -> bool {
        false
    }

    /// ±F_max h₀² (N·m·s² or N·s²).
    fn lambda_bounds(&self, _row: usize) -> (T, T) {
        let b = self.max_force * self.substep * self.substep;
        (-b, b)
    }

    /// Records q_start, reads the speed at `clock.end_time` (a non-finite value from a
    /// function schedule is not applied), and sets s·h and σ = (h/h₀)².
    fn begin_substep(&mut self, clock: SubstepClock<T>, bodies: &[Body<T, G>]) {
        if let Some(q) = self.joint_position(bodies) {
            if q.is_finite() {
                self.start = q;
                self.started = true;
            }
        }
        if let Some(speed) = self.handle.sample(clock.end_time) {
            self.speed = speed;
        }
        self.increment = self.speed * clock.h;
        let ratio = clock.h / self.substep;
        self.scale = ratio * ratio;
    }
}
