//! Multi-body constraint systems of a [`World`]: groups of constraint rows over many
//! bodies solved together as one linear system per iteration (paper Section 8.2,
//! Algorithm 1 lines 5 and 12), e.g. the elastic Gauss-point constraints of a whole
//! Cosserat rod ([`crate::rod::FemRod`]).
//!
//! # The solve
//! A [`System`] holds m rows C(x) ∈ ℝᵐ over the poses of its bodies, with a diagonal
//! compliance α and its own accumulated multipliers λ ∈ ℝᵐ. One call of
//! [`System::project`] is one Newton step (53)–(55) of all its rows at once:
//!
//! ```text
//! [∇C 𝓜⁻¹ ∇Cᵀ + α̃] Δλ = −C − α̃λ,     λ ← λ + Δλ,     Δx = 𝓜⁻¹ ∇Cᵀ Δλ      (55), (57)
//! ```
//!
//! with α̃ = α/h² and Δx applied per body as p ← p + Δp (world frame),
//! R ← R ⊞ Δθ (body frame) (58), through [`apply_body_correction`]. Where a system is
//! one joint's rows this is the block solve (124); for a rod it is the block-banded
//! solve of Section 8.2. A fixed body has 𝓜⁻¹ = 0: its columns drop out of the system
//! and it is never moved.
//!
//! # Order in the substep
//! [`World::substep`] calls, for every system in the order they were added:
//! [`System::begin_substep`] (before the inertial prediction), [`System::reset_lambda`]
//! (λ = 0), then in each of the `iterations` sweeps [`System::project`] of every
//! system **before** the constraints (Algorithm 1: rods, then joints, then the
//! remaining constraints); after the velocity update the damping pass
//! [`World::solve_velocities`] calls [`System::solve_velocities`] of every system
//! before the constraints' (lines 12–14), then [`System::end_substep`].
//!
//! # Residuals
//! [`World::residuals`] adds each system's rows to (51)–(52): the squares of
//! C + α̃λ to the constraint residual, and −∇Cᵀλ to the primal residual of each of its
//! dynamic bodies ([`System::residuals`]).

use super::World;
use crate::lie::{LieGroup, Real};
use crate::xpbd::body::{Body, BodyId};
use crate::xpbd::constraint::SubstepClock;
use crate::xpbd::error::XpbdError;
use nalgebra::{SVector, Vector3};

/// Index of a [`System`] in a [`World`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SystemId(pub usize);

/// A group of constraint rows over many bodies, projected together by one linear solve
/// per iteration (module docs of `xpbd::world::systems`; paper Section 8.2, Algorithm 1
/// line 5). Object safe: a world holds `Box<dyn System<T, G>>`.
///
/// A system owns its multipliers λ and its linear-algebra buffers; none of its methods
/// may allocate on the heap after its construction (the world's time step allocates
/// nothing). `bodies` passed to every method is the world's whole body list, indexed
/// by [`BodyId`].
pub trait System<T: Real, G: LieGroup<T>>: Send + Sync {
    /// A short human-readable name for diagnostics and errors (e.g. "rod 0").
    fn name(&self) -> String;

    /// Every body the rows depend on (fixed bodies included).
    fn bodies(&self) -> &[BodyId];

    /// Number of scalar rows m.
    fn row_count(&self) -> usize;

    /// The accumulated multipliers λ of the current (or last) substep, m entries, in
    /// the units of the rows' compliance inverse times their value (N·s² for a
    /// dimensionless row: λ is an impulse times h).
    fn lambda(&self) -> &[T];

    /// Sets λ = 0: called once per substep before the first [`System::project`].
    fn reset_lambda(&mut self);

    /// One Newton/XPBD step of all rows at once at the current state (module docs):
    /// solves `[∇C 𝓜⁻¹ ∇Cᵀ + α̃] Δλ = −C − α̃λ`, adds Δλ to λ and moves every dynamic
    /// body by `𝓜⁻¹∇CᵀΔλ` with [`apply_body_correction`]. `inv_h2` = 1/h², s⁻²
    /// (α̃ = α·inv_h2). A system whose matrix cannot be factored (a non-finite state)
    /// leaves the bodies and λ unchanged; the world then reports the divergence.
    fn project(&mut self, bodies: &mut [Body<T, G>], inv_h2: T);

    /// The velocity-level damping solve of the system's rows (Section 4.4, (65)–(66),
    /// Algorithm 1 line 12), with the bodies at their end-of-substep poses and
    /// velocities and `h` the substep (s). Default: nothing (an undamped system).
    fn solve_velocities(&mut self, _bodies: &mut [Body<T, G>], _h: T) {}

    /// The system's share of the residuals (51)–(52) at the current state with its
    /// current λ: subtracts ∇C_bᵀλ (6-vector, (59) layout: world-frame force part,
    /// body-frame torque part) from `primal[b]` for every dynamic body b it touches
    /// (`primal` has one entry per world body) and returns Σᵢ (Cᵢ + α̃ᵢλᵢ)², with
    /// α̃ = α·`inv_h2`. Must not allocate.
    fn residuals(&self, bodies: &[Body<T, G>], inv_h2: T, primal: &mut [SVector<T, 6>]) -> T;

    /// The elastic energy (36) U = ½ Cᵀα⁻¹C of the system's compliant rows at the
    /// current poses, J (hard rows hold none). Default: 0, for a system without
    /// compliant rows. [`crate::xpbd::World::energy`] includes it.
    fn potential_energy(&self, _bodies: &[Body<T, G>]) -> T {
        T::zero()
    }

    /// Called once per substep before the inertial prediction, with the bodies at
    /// their start-of-substep state (as [`crate::xpbd::Constraint::begin_substep`]).
    /// Default: nothing.
    fn begin_substep(&mut self, _clock: SubstepClock<T>, _bodies: &[Body<T, G>]) {}

    /// Called once per substep after the damping pass (as
    /// [`crate::xpbd::Constraint::end_substep`]). Default: nothing.
    fn end_substep(&mut self, _bodies: &[Body<T, G>]) {}
}

/// Applies a solver correction to a body: p ← p + δp (m, world frame) and
/// R ← R ⊞ δθ = R·Exp(δθ) (rad, body frame) (58), recorded so that the velocity update
/// of the substep (Alg. 1 line 10) sees it. This is what a [`System`] uses to move its
/// bodies in [`System::project`]; writing `position`/`orientation` directly would be
/// missed by the velocity update. A fixed body is never moved (nothing happens).
#[inline]
pub fn apply_body_correction<T: Real, G: LieGroup<T>>(
    body: &mut Body<T, G>,
    dp: &Vector3<T>,
    dtheta: &Vector3<T>,
) {
    if !body.is_fixed() {
        body.apply_correction(dp, dtheta);
    }
}

impl<T: Real, G: LieGroup<T>> World<T, G> {
    /// Adds a multi-body constraint system (e.g. a [`crate::rod::FemRod`]) and returns
    /// its id. Systems are projected in the order they were added, before the
    /// constraints, in every iteration (module docs).
    ///
    /// # Errors
    /// [`XpbdError::BadDimension`] (with max 0) for a system with no rows or no bodies;
    /// [`XpbdError::UnknownBody`] if it names a body not in the world;
    /// [`XpbdError::NoDynamicBody`] if every body it names is fixed.
    pub fn add_system<S: System<T, G> + 'static>(
        &mut self,
        system: S,
    ) -> Result<SystemId, XpbdError> {
        self.add_boxed_system(Box::new(system))
    }

    /// As [`World::add_system`], for an already boxed system.
    ///
    /// # Errors
    /// As [`World::add_system`].
    pub fn add_boxed_system(
        &mut self,
        system: Box<dyn System<T, G>>,
    ) -> Result<SystemId, XpbdError> {
        if system.row_count() == 0 || system.bodies().is_empty() {
            return Err(XpbdError::BadDimension {
                constraint: system.name(),
                dim: system.row_count(),
                max: 0,
            });
        }
        for &BodyId(b) in system.bodies() {
            if b >= self.bodies.len() {
                return Err(XpbdError::UnknownBody {
                    constraint: system.name(),
                    body: b,
                    count: self.bodies.len(),
                });
            }
        }
        if system.bodies().iter().all(|b| self.bodies[b.0].is_fixed()) {
            return Err(XpbdError::NoDynamicBody {
                constraint: system.name(),
            });
        }
        self.systems.push(system);
        Ok(SystemId(self.systems.len() - 1))
    }

    /// Number of systems.
    pub fn system_count(&self) -> usize {
        self.systems.len()
    }

    /// The system `id`, or `None` if there is no such system.
    pub fn system(&self, id: SystemId) -> Option<&dyn System<T, G>> {
        self.systems.get(id.0).map(|s| s.as_ref())
    }

    /// Start of a substep for every system: [`System::begin_substep`] with the
    /// start-of-substep bodies, then λ = 0.
    pub(super) fn systems_begin_substep(&mut self, clock: SubstepClock<T>) {
        for s in &mut self.systems {
            s.begin_substep(clock, &self.bodies);
            s.reset_lambda();
        }
    }

    /// One [`System::project`] of every system, in order.
    pub(super) fn project_systems(&mut self, inv_h2: T) {
        for s in &mut self.systems {
            s.project(&mut self.bodies, inv_h2);
        }
    }

    /// [`System::solve_velocities`] of every system, in order.
    pub(super) fn systems_solve_velocities(&mut self, h: T) {
        for s in &mut self.systems {
            s.solve_velocities(&mut self.bodies, h);
        }
    }

    /// [`System::end_substep`] of every system.
    pub(super) fn systems_end_substep(&mut self) {
        for s in &mut self.systems {
            s.end_substep(&self.bodies);
        }
    }
}
