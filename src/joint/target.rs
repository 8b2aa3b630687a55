//! Targets that change over time, for drives ([`super::JointDrive`]) and velocity motors
//! ([`super::VelocityMotor`]): a [`TargetSchedule`] (a constant, a constant-rate ramp or
//! a function of time) behind a shared [`TargetHandle`].
//!
//! # Why a handle
//! A [`crate::xpbd::World`] owns its constraints once they are added
//! ([`crate::xpbd::World::add_constraint`]) and hands them out only as
//! `&dyn Constraint`. To change a drive's target or a motor's speed between steps, keep
//! the handle (`target_handle()` / `speed_handle()`) before adding the constraint:
//! it shares the schedule with the constraint, which reads it once per substep in
//! [`crate::xpbd::Constraint::begin_substep`], at the time the substep ends
//! (`SubstepClock::end_time`, the time the solved positions belong to). A value set
//! through the handle therefore takes effect at the next substep.
//!
//! The schedule sits behind a `Mutex`; the constraint locks it once per substep, for the
//! time it takes to copy a constant or a ramp (a function is copied out as an `Arc` and
//! called after the lock is released, so it may itself use the handle). A poisoned lock
//! (a panic elsewhere while it was held) is recovered: the schedule is plain data and
//! always valid.
//!
//! # Non-finite values
//! [`TargetHandle::set`] and [`TargetHandle::set_ramp`] reject non-finite values with
//! [`XpbdError::NonFinite`]. A function can only be checked when it is called: a
//! non-finite value it returns is not applied (the constraint keeps its previous
//! target) and is counted by [`TargetHandle::rejected`].

use crate::lie::Real;
use crate::xpbd::XpbdError;
use nalgebra::Vector3;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A value a target can take: a scalar (an angle in rad, a slide in m, a speed) or a
/// 3-vector (a rotation vector in rad), with the arithmetic of a ramp.
pub trait TargetValue<T: Real>: Copy + fmt::Debug + PartialEq + Send + Sync + 'static {
    /// `start + rate·t`.
    fn ramp(start: &Self, rate: &Self, t: T) -> Self;

    /// Whether every component is finite.
    fn all_finite(&self) -> bool;
}

impl<T: Real> TargetValue<T> for T {
    #[inline]
    fn ramp(start: &Self, rate: &Self, t: T) -> Self {
        *start + *rate * t
    }

    #[inline]
    fn all_finite(&self) -> bool {
        self.is_finite()
    }
}

impl<T: Real> TargetValue<T> for Vector3<T> {
    #[inline]
    fn ramp(start: &Self, rate: &Self, t: T) -> Self {
        start + rate * t
    }

    #[inline]
    fn all_finite(&self) -> bool {
        self.iter().all(|x| x.is_finite())
    }
}

/// How a target moves in time t (s, the world's simulated time).
#[derive(Clone)]
pub enum TargetSchedule<T: Real, V: TargetValue<T>> {
    /// The same value at every time.
    Constant(V),
    /// A constant rate: value(t) = `start` + `rate`·t (`rate` in the value's unit per
    /// second).
    Ramp {
        /// The value at t = 0.
        start: V,
        /// Its rate of change, per second.
        rate: V,
    },
    /// Any function of time, called once per substep with the substep's end time.
    Function(Arc<dyn Fn(T) -> V + Send + Sync>),
}

impl<T: Real, V: TargetValue<T>> TargetSchedule<T, V> {
    /// The value at time `t` (s).
    pub fn value_at(&self, t: T) -> V {
        match self {
            TargetSchedule::Constant(v) => *v,
            TargetSchedule::Ramp { start, rate } => V::ramp(start, rate, t),
            TargetSchedule::Function(f) => f(t),
        }
    }
}

impl<T: Real, V: TargetValue<T>> fmt::Debug for TargetSchedule<T, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetSchedule::Constant(v) => f.debug_tuple("Constant").field(v).finish(),
            TargetSchedule::Ramp { start, rate } => f
                .debug_struct("Ramp")
                .field("start", start)
                .field("rate", rate)
                .finish(),
            TargetSchedule::Function(_) => f.write_str("Function(..)"),
        }
    }
}

struct Shared<T: Real, V: TargetValue<T>> {
    /// The owning constraint's name, for errors.
    label: String,
    schedule: TargetSchedule<T, V>,
    rejected: u64,
}

/// A shared, thread-safe handle on the [`TargetSchedule`] of one drive or motor (module
/// docs): cloning the handle gives another handle on the same schedule.
///
/// ```
/// use lie_xpbd::joint::{JointFrame, RevoluteDrive};
/// use lie_xpbd::lie::{LieGroup, SO3Matrix};
/// use lie_xpbd::xpbd::{Body, SolverOptions, World};
/// use nalgebra::Vector3;
/// let mut world = World::<f64, SO3Matrix<f64>>::new(SolverOptions::default()).unwrap();
/// let id = world
///     .add_body(Body::dynamic(1.0, Vector3::repeat(0.1), Vector3::zeros(), SO3Matrix::identity()).unwrap())
///     .unwrap();
/// // A hinge about world z at the body's centre, sprung (k = 50 N·m/rad) to the angle 0.
/// let drive = RevoluteDrive::new(None, JointFrame::identity(), Some(id), JointFrame::identity(), 0.0, 50.0)
///     .unwrap();
/// let target = drive.target_handle();
/// world.add_constraint(drive).unwrap();
/// for step in 0..100 {
///     target.set(0.01 * step as f64).unwrap(); // a new target angle (rad) every step
///     world.step().unwrap();
/// }
/// assert!(target.set(f64::NAN).is_err());
/// ```
pub struct TargetHandle<T: Real, V: TargetValue<T>> {
    shared: Arc<Mutex<Shared<T, V>>>,
}

impl<T: Real, V: TargetValue<T>> Clone for TargetHandle<T, V> {
    /// Another handle on the same schedule.
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T: Real, V: TargetValue<T>> fmt::Debug for TargetHandle<T, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.lock();
        f.debug_struct("TargetHandle")
            .field("constraint", &s.label)
            .field("schedule", &s.schedule)
            .field("rejected", &s.rejected)
            .finish()
    }
}

impl<T: Real, V: TargetValue<T>> TargetHandle<T, V> {
    /// A handle on a new schedule; `label` names the owning constraint in errors.
    pub(crate) fn new(label: String, schedule: TargetSchedule<T, V>) -> Self {
        Self {
            shared: Arc::new(Mutex::new(Shared {
                label,
                schedule,
                rejected: 0,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Shared<T, V>> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A handle on a copy of this schedule (not shared with this one), for the `Clone`
    /// of the owning constraint.
    pub(crate) fn detached(&self) -> Self {
        let s = self.lock();
        Self::new(s.label.clone(), s.schedule.clone())
    }

    fn check(&self, what: &str, value: &V) -> Result<(), XpbdError> {
        if value.all_finite() {
            Ok(())
        } else {
            Err(XpbdError::NonFinite {
                what: format!("{what} of '{}'", self.lock().label),
            })
        }
    }

    /// Sets a constant target (replacing any ramp or function), from the next substep
    /// on.
    ///
    /// # Errors
    /// [`XpbdError::NonFinite`] for a non-finite value (the schedule is unchanged).
    pub fn set(&self, value: V) -> Result<(), XpbdError> {
        self.check("target", &value)?;
        self.lock().schedule = TargetSchedule::Constant(value);
        Ok(())
    }

    /// Sets a constant-rate target value(t) = `start` + `rate`·t (t the world's time,
    /// s; `rate` per second), from the next substep on.
    ///
    /// # Errors
    /// [`XpbdError::NonFinite`] for a non-finite `start` or `rate` (the schedule is
    /// unchanged).
    pub fn set_ramp(&self, start: V, rate: V) -> Result<(), XpbdError> {
        self.check("target", &start)?;
        self.check("target rate", &rate)?;
        self.lock().schedule = TargetSchedule::Ramp { start, rate };
        Ok(())
    }

    /// Makes the target follow `f(t)` (t the world's time, s), called once per substep
    /// at the substep's end time, from the next substep on. Non-finite values are not
    /// applied (module docs).
    pub fn set_function<F>(&self, f: F)
    where
        F: Fn(T) -> V + Send + Sync + 'static,
    {
        self.lock().schedule = TargetSchedule::Function(Arc::new(f));
    }

    /// A copy of the current schedule.
    pub fn schedule(&self) -> TargetSchedule<T, V> {
        self.lock().schedule.clone()
    }

    /// The schedule's value at time `t` (s), whether finite or not.
    pub fn value_at(&self, t: T) -> V {
        let schedule = self.schedule();
        schedule.value_at(t)
    }

    /// How many non-finite values a function schedule returned (and were not applied).
    pub fn rejected(&self) -> u64 {
        self.lock().rejected
    }

    /// The value at `t` if finite; otherwise counts it as rejected and returns `None`.
    pub(crate) fn sample(&self, t: T) -> Option<V> {
        let value = self.value_at(t);
        if value.all_finite() {
            Some(value)
        } else {
            self.lock().rejected += 1;
            None
        }
    }
}
