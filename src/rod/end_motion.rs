//! [`EndMotion`]: prescribed motion of a clamped rod end over time.
//!
//! # Which end, and how it is held
//! A prescribed end is a clamped end: a node (FEM rod) or end body (rigid chain) that is
//! a **fixed** body of the world, whose pose is set from the schedule before every step
//! ([`EndMotion::apply`]). A fixed body has 𝓜⁻¹ = 0, so the rod's banded solve
//! ([`super::FemRod`]) and the chain's joints treat it exactly as a clamp: its pose is
//! the schedule's, to round-off, in every iteration, with no compliance and no extra
//! rows. (The alternative, a [`crate::joint::PrescribedFrame`] constraint pulling a
//! dynamic end node onto the target, is projected after the rod's system in the same
//! iteration, so the rod sees the end where it was, not where it is held; with one
//! iteration the end lags the target.)
//!
//! The node's velocities are set to the schedule's (linear velocity, world frame;
//! angular velocity, body frame), so the velocity-level damping pass of the rod
//! (Section 4.4) sees the moving end. The schedule's pose is applied once per step, at
//! the step's end time t + Δt: with several substeps per step, every substep sees the
//! end there.
//!
//! # The schedule
//! With (p₀, R₀) the end's pose at t = 0, v the velocity (m/s, world frame), Ω the
//! angular velocity (rad/s, world frame) and t_stop the time the motion stops:
//!
//! ```text
//! τ = min(t, t_stop),     p(t) = p₀ + v τ,     R(t) = Exp(Ω τ) R₀
//! ```
//!
//! and the velocities are (v, R(t)ᵀΩ) while t < t_stop, zero afterwards.

use super::error::RodError;
use crate::lie::{LieGroup, Pose, Real};
use crate::xpbd::{Body, BodyId, World, XpbdError};
use nalgebra::Vector3;

/// A prescribed motion of a fixed (clamped) rod end: constant linear and angular
/// velocity from its initial pose, optionally stopping at a time (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EndMotion<T: Real, G: LieGroup<T>> {
    /// The driven body (a fixed body of the world).
    pub body: BodyId,
    /// Its pose at t = 0 (m, world frame; body → world).
    pub initial: Pose<T, G>,
    /// Velocity v, m/s, world frame.
    pub velocity: Vector3<T>,
    /// Angular velocity Ω, rad/s, world frame.
    pub spin: Vector3<T>,
    /// The motion stops at this time, s (infinity: never).
    pub stop_time: T,
}

impl<T: Real, G: LieGroup<T>> EndMotion<T, G> {
    /// A motion of `body` from `initial` at `velocity` (m/s, world) and `spin` (rad/s,
    /// world) until `stop_time` (s; `T::infinity()` for never).
    ///
    /// # Errors
    /// [`RodError::NonFinite`] (`"end velocity"`, `"end spin"`, index = the body) for a
    /// non-finite velocity or spin, and (`"end stop time"`) for a stop time that is NaN
    /// or negative.
    pub fn new(
        body: BodyId,
        initial: Pose<T, G>,
        velocity: Vector3<T>,
        spin: Vector3<T>,
        stop_time: T,
    ) -> Result<Self, RodError> {
        if !velocity.iter().all(|x| x.is_finite()) {
            return Err(RodError::NonFinite {
                what: "end velocity",
                index: body.0,
            });
        }
        if !spin.iter().all(|x| x.is_finite()) {
            return Err(RodError::NonFinite {
                what: "end spin",
                index: body.0,
            });
        }
        let non_negative = stop_time >= T::zero();
        if !non_negative {
            return Err(RodError::NonFinite {
                what: "end stop time",
                index: body.0,
            });
        }
        Ok(Self {
            body,
            initial,
            velocity,
            spin,
            stop_time,
        })
    }

    /// The scheduled pose at time `t` (s): p₀ + v τ, Exp(Ω τ) R₀ with τ = min(t, t_stop).
    pub fn pose_at(&self, t: T) -> Pose<T, G> {
        let tau = t.min(self.stop_time).max(T::zero());
        let turn = G::exp(&(self.spin * tau));
        Pose::new(
            self.initial.position + self.velocity * tau,
            turn.compose(&self.initial.rotation),
        )
    }

    /// The scheduled velocities at time `t`: linear (m/s, world frame) and angular
    /// (rad/s, body frame of the pose at t); zero once the motion has stopped.
    pub fn velocities_at(&self, t: T) -> (Vector3<T>, Vector3<T>) {
        if t >= self.stop_time {
            return (Vector3::zeros(), Vector3::zeros());
        }
        let r = self.pose_at(t).rotation;
        (self.velocity, r.act_inv(&self.spin))
    }

    /// Puts the driven body of `world` at the scheduled pose and velocities of time
    /// `t` (s). Call it before each step with t = the step's end time
    /// (`world.time() + dt`).
    ///
    /// # Errors
    /// [`RodError::World`] with [`XpbdError::UnknownBody`] if the body is not in the
    /// world, or [`XpbdError::InvalidJoint`] (`"body"`) if it is not a fixed body (a
    /// dynamic body would be moved without the solver knowing).
    pub fn apply(&self, world: &mut World<T, G>, t: T) -> Result<(), RodError> {
        let count = world.bodies().len();
        let body: &mut Body<T, G> =
            world
                .body_mut(self.body)
                .ok_or(RodError::World(XpbdError::UnknownBody {
                    constraint: "rod end motion".into(),
                    body: self.body.0,
                    count,
                }))?;
        if !body.is_fixed() {
            return Err(RodError::World(XpbdError::InvalidJoint {
                field: "body",
                value: self.body.0.to_string(),
                reason: "a prescribed rod end must be a fixed (clamped) body",
            }));
        }
        let pose = self.pose_at(t);
        let (v, w) = self.velocities_at(t);
        body.position = pose.position;
        body.orientation = pose.rotation;
        body.velocity = v;
        body.angular_velocity = w;
        Ok(())
    }
}
