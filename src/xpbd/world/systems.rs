//! Multi-body constraint systems of a [`World`]: groups of constraint rows over many
//! bodies solved together as one linear system per iteration (paper Section 8.2,
//! Algorithm 1 lines 5 and 12), e.g. the elastic Gauss-point constraints of a whole
//! Cosserat rod.
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
//! before the constraints' (lines 12–14), then [`System::end_substep`]. Where nothing
//! else runs between the systems' projections and the velocity update (no enabled
//! constraints, direct groups or primal correction), the last system's projection
//! in the last sweep is [`System::project_last`] instead (by default the same as
//! [`System::project`]).
//!
//! # Residuals
//! [`World::residuals`] adds each system's rows to (51)–(52): the squares of
//! C + α̃λ to the constraint residual, and −∇Cᵀλ to the primal residual of each of its
//! dynamic bodies ([`System::residuals`]).
//!
//! # Row blocks (checking the gradient)
//! A system may expose its rows as row blocks, each a small constraint of its own
//! that the gradient checker can verify against finite differences
//! ([`crate::xpbd::check::check_row_block`], `lie-xpbd check-jacobians`):
//! [`System::row_block_count`] blocks, block k of [`System::row_block`] (name, kind,
//! number of rows n ≤ [`MAX_ROWS`], and the bodies it depends on, at most
//! [`MAX_BLOCK_BODIES`]) evaluated by [`System::evaluate_row_block`] at the current
//! state: C ∈ ℝⁿ and, per body of the block, the n×6 gradient block
//! `[∂C/∂p | D_R C]` of (59) (world-frame position columns per m, body-frame
//! rotation columns per rad, the right derivative R ⊞ δθ used everywhere in the
//! crate). The evaluation must be the one the solver uses (the same code path), so
//! that checking it checks the solve. The interface is optional: by default a system
//! has no row blocks and is not checked. A finite-element rod has one block per
//! Gauss point (108), a rigid-chain rod one per joint (93).

use super::World;
use crate::lie::{LieGroup, Real};
use crate::xpbd::body::{Body, BodyId};
use crate::xpbd::constraint::{SubstepClock, MAX_ROWS};
use crate::xpbd::error::XpbdError;
use nalgebra::{SMatrix, SVector, Vector3};

/// Largest number of bodies one row block of a [`System`] may depend on: the four
/// nodes of a cubic rod element.
pub const MAX_BLOCK_BODIES: usize = 4;

/// What a row block of a [`System`] is (module docs, Row blocks): its name, kind,
/// number of rows and bodies. Built by [`RowBlockInfo::new`], which checks the sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowBlockInfo {
    name: String,
    kind: &'static str,
    dim: usize,
    body_count: usize,
    bodies: [BodyId; MAX_BLOCK_BODIES],
}

impl RowBlockInfo {
    /// A block named `name` (for reports, e.g. `"beam: element 2, Gauss point 1"`) of
    /// kind `kind` (the group it is reported in, e.g. `"rod gauss point"`), with `dim`
    /// rows over `bodies` (in the order of the gradient blocks of
    /// [`RowBlockEval::gradient`]; fixed bodies included, the world excluded).
    ///
    /// # Errors
    /// [`XpbdError::BadDimension`] unless 1 ≤ `dim` ≤ [`MAX_ROWS`] (max = MAX_ROWS) or
    /// unless 1 ≤ `bodies.len()` ≤ [`MAX_BLOCK_BODIES`] (dim = the number of bodies,
    /// max = MAX_BLOCK_BODIES).
    pub fn new(
        name: impl Into<String>,
        kind: &'static str,
        dim: usize,
        bodies: &[BodyId],
    ) -> Result<Self, XpbdError> {
        let name = name.into();
        if dim == 0 || dim > MAX_ROWS {
            return Err(XpbdError::BadDimension {
                constraint: name,
                dim,
                max: MAX_ROWS,
            });
        }
        if bodies.is_empty() || bodies.len() > MAX_BLOCK_BODIES {
            return Err(XpbdError::BadDimension {
                constraint: format!("{name} (bodies)"),
                dim: bodies.len(),
                max: MAX_BLOCK_BODIES,
            });
        }
        let mut ids = [BodyId(0); MAX_BLOCK_BODIES];
        ids[..bodies.len()].copy_from_slice(bodies);
        Ok(Self {
            name,
            kind,
            dim,
            body_count: bodies.len(),
            bodies: ids,
        })
    }

    /// The block's name, for reports.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The block's kind, e.g. `"rod gauss point"`, `"rod joint"`.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// Number of rows n, 1 ≤ n ≤ [`MAX_ROWS`].
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The bodies the rows depend on (1 to [`MAX_BLOCK_BODIES`]), in the order of the
    /// gradient blocks.
    pub fn bodies(&self) -> &[BodyId] {
        &self.bodies[..self.body_count]
    }
}

/// Value and gradient of one row block of a [`System`] at one state, in fixed-size
/// storage ([`System::evaluate_row_block`]); the first n = [`RowBlockInfo::dim`] rows
/// are used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowBlockEval<T: Real> {
    /// C(x), n entries used, in the rows' units.
    pub value: SVector<T, MAX_ROWS>,
    /// Per body of [`RowBlockInfo::bodies`] (same order) the n×6 block
    /// `[∂C/∂p | D_R C]` of (59): columns 0–2 per m of world-frame position, 3–5 per
    /// rad of body-frame rotation R ⊞ δθ. Blocks past the block's bodies are unused.
    pub gradient: [SMatrix<T, MAX_ROWS, 6>; MAX_BLOCK_BODIES],
}

impl<T: Real> Default for RowBlockEval<T> {
    fn default() -> Self {
        Self {
            value: SVector::zeros(),
            gradient: [SMatrix::zeros(); MAX_BLOCK_BODIES],
        }
    }
}

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

    /// [`System::project`] as the last position update of the substep: the world's
    /// velocity update follows at once, before anything reads a body's pose (this is
    /// the last system of the last iteration, and the world has no enabled
    /// constraints, direct groups or primal correction to run after it). The system
    /// may then move its bodies with [`apply_last_body_correction`], which leaves the
    /// composition of the public orientation to the velocity update (the same
    /// result). Default: [`System::project`].
    fn project_last(&mut self, bodies: &mut [Body<T, G>], inv_h2: T) {
        self.project(bodies, inv_h2);
    }

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

    /// Number of row blocks the system exposes for checking (module docs, Row
    /// blocks). Default: 0, a system that cannot be checked.
    fn row_block_count(&self) -> usize {
        0
    }

    /// Block `k`'s name, kind, rows and bodies, or `None` unless
    /// `k` < [`System::row_block_count`]. May allocate (it is for diagnostics).
    /// Default: `None`.
    fn row_block(&self, _k: usize) -> Option<RowBlockInfo> {
        None
    }

    /// Writes block `k`'s value C and its gradient blocks `[∂C/∂p | D_R C]`, one per
    /// body of [`System::row_block`]`(k)` in that order, at the current poses of
    /// `bodies` (the world's body list), into `out` (every used entry is written). It
    /// must evaluate the rows as [`System::project`] does. A state the rows cannot be
    /// evaluated at (a non-finite pose) gives NaN values. Must not allocate.
    ///
    /// # Errors
    /// [`XpbdError::UnknownRowBlock`] unless `k` < [`System::row_block_count`] (the
    /// default, for a system without row blocks, always fails so).
    fn evaluate_row_block(
        &self,
        k: usize,
        _bodies: &[Body<T, G>],
        _out: &mut RowBlockEval<T>,
    ) -> Result<(), XpbdError> {
        Err(XpbdError::UnknownRowBlock {
            system: self.name(),
            index: k,
            count: self.row_block_count(),
        })
    }
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

/// [`apply_body_correction`] for the last position update of a substep, from
/// [`System::project_last`] only: the body's public `orientation` is not updated (it
/// keeps its value from before the correction) until the velocity update of the
/// substep, which composes it from the same recorded rotation, so the end-of-substep
/// state is the same bit for bit; nothing may read the orientation in between.
#[inline]
pub fn apply_last_body_correction<T: Real, G: LieGroup<T>>(
    body: &mut Body<T, G>,
    dp: &Vector3<T>,
    dtheta: &Vector3<T>,
) {
    if !body.is_fixed() {
        body.apply_last_correction(dp, dtheta);
    }
}

impl<T: Real, G: LieGroup<T>> World<T, G> {
    /// Adds a multi-body constraint system (e.g. a Cosserat rod) and returns
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
    /// What a substep does first ([`World::substep`]), without moving any body:
    /// [`Constraint::begin_substep`] of every constraint and [`System::begin_substep`] of
    /// every system, with the clock of the next substep, which it returns. The gradient
    /// study (`lie-xpbd check-jacobians`) calls it too, so that constraints with
    /// per-substep state (a velocity motor's q_start) are checked as the solver
    /// evaluates them.
    #[inline]
    pub(crate) fn begin_next_substep(&mut self) -> SubstepClock<T> {
        let h = self.options.substep_dt();
        let clock = SubstepClock {
            start_time: self.substep_time,
            end_time: self.substep_time + h,
            h,
        };
        for s in &mut self.slots {
            s.constraint.begin_substep(clock, &self.bodies);
        }
        self.systems_begin_substep(clock);
        clock
    }

    pub(super) fn systems_begin_substep(&mut self, clock: SubstepClock<T>) {
        for s in &mut self.systems {
            s.begin_substep(clock, &self.bodies);
            s.reset_lambda();
        }
    }

    /// One [`System::project`] of every system, in order; with `last` (nothing
    /// follows before the velocity update: [`System::project_last`]) the last
    /// system's [`System::project_last`] instead.
    pub(super) fn project_systems(&mut self, inv_h2: T, last: bool) {
        let count = self.systems.len();
        for (k, s) in self.systems.iter_mut().enumerate() {
            if last && k + 1 == count {
                s.project_last(&mut self.bodies, inv_h2);
            } else {
                s.project(&mut self.bodies, inv_h2);
            }
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
