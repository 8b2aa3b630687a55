//! The [`World`]: bodies, constraints, and the XPBD time step (Algorithm 1).

use super::body::{Body, BodyId};
use super::constraint::{Constraint, ConstraintEval, GradientLayout, MAX_BODIES, MAX_ROWS};
use super::error::XpbdError;
use crate::lie::{LieGroup, Real};
use nalgebra::{SMatrix, SVector};

mod breaking;
mod damping;
pub mod direct;
mod options;
mod projection;
mod residuals;
mod small_spd;
mod systems;

pub use breaking::{BreakEvent, BreakLimits};
pub use direct::{DirectGroupId, DirectGroupStats};
pub use options::{F32Arithmetic, SolveMode, SolverOptions};
pub(crate) use projection::block_corrections;
pub use systems::{
    apply_body_correction, apply_last_body_correction, RowBlockEval, RowBlockInfo, System,
    SystemId, MAX_BLOCK_BODIES,
};

/// Index of a constraint in a [`World`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConstraintId(pub usize);

/// Residuals of the discrete equations of motion after a step (paper (51)–(52), Section
/// 9.1), evaluated at the end of the last substep with that substep's λ and prediction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Residuals<T: Real> {
    /// ‖𝓜(x ⊟ x̃) − ∇C(x)ᵀλ‖₂ over all dynamic bodies (51), in kg·m (positions) and
    /// kg·m²·rad (orientations) stacked.
    pub primal: T,
    /// ‖C(x) + α̃λ‖₂ over all constraint rows (52), in the constraints' units. A
    /// bounded row ([`Constraint::lambda_bounds`]: a joint limit, a motor's force
    /// limit) counts 0 while its λ is at a bound and C + α̃λ would push it past that
    /// bound (the limit is not reached, the motor is saturated): such a row satisfies
    /// its complementarity conditions.
    pub constraint: T,
}

struct Slot<T: Real, G: LieGroup<T>> {
    constraint: Box<dyn Constraint<T, G>>,
    lambda: SVector<T, MAX_ROWS>,
    dim: usize,
    bounded: bool,
    bodies: [Option<usize>; MAX_BODIES],
    // Cached per row at insertion (a boxed constraint cannot change afterwards).
    compliance: SVector<T, MAX_ROWS>,
    // Rayleigh damping b per row (s), zero on hard rows (α = 0), which are never damped.
    damping: SVector<T, MAX_ROWS>,
    // Whether some row has b > 0 and α > 0: only such slots take part in the
    // velocity-level pass.
    damped: bool,
    lambda_lo: SVector<T, MAX_ROWS>,
    lambda_hi: SVector<T, MAX_ROWS>,
    // False once the constraint broke ([`World::set_break_limits`]): it is skipped by
    // the solver, the damping pass and the residuals.
    enabled: bool,
    breaking: Option<Box<breaking::Breaking<T>>>,
    // Constraint::evaluate_overwrites: the evaluation buffer need not be cleared first.
    overwrites: bool,
    // Constraint::is_smooth, cached.
    continuous: bool,
    // Constraint::solve_as_block, cached.
    as_block: bool,
    // Constraint::gradient_layout, cached (checked against dim when added).
    layout: GradientLayout,
    // The direct group ([`World::add_direct_group`]) that projects this constraint;
    // `None`: projected by Gauss–Seidel.
    group: Option<usize>,
    // The bodies this constraint is the last of the Gauss–Seidel sweep to move (set by
    // `mark_last_corrections`).
    last_mover: [Option<usize>; MAX_BODIES],
}

/// A simulation: bodies, constraints and solver options.
///
/// ```
/// use lie_xpbd::lie::{LieGroup, SO3Matrix};
/// use lie_xpbd::xpbd::{Body, SolverOptions, World};
/// use nalgebra::Vector3;
/// let mut world = World::<f64, SO3Matrix<f64>>::new(SolverOptions::default()).unwrap();
/// let ball = Body::dynamic(1.0, Vector3::repeat(0.1), Vector3::zeros(), SO3Matrix::identity()).unwrap();
/// let id = world.add_body(ball).unwrap();
/// for _ in 0..1000 { world.step().unwrap(); }
/// // Free fall for 1 s: y ≈ −g t²/2 (symplectic Euler gives −g t (t + Δt)/2).
/// approx::assert_relative_eq!(world.body(id).unwrap().position.y, -9.81 * 1.0 * 1.001 / 2.0, epsilon = 1e-9);
/// ```
pub struct World<T: Real, G: LieGroup<T>> {
    bodies: Vec<Body<T, G>>,
    slots: Vec<Slot<T, G>>,
    systems: Vec<Box<dyn System<T, G>>>,
    direct: Vec<direct::DirectGroup<T>>,
    options: SolverOptions<T>,
    time: T,
    // Time at the start of the next substep: advanced by h per substep and reset to
    // steps·Δt after every step, so it never drifts from `time` by more than a step's
    // worth of rounding.
    substep_time: T,
    steps: u64,
    eval: ConstraintEval<T>,
    // One 6-vector per body for the primal correction pass (sized in add_body).
    primal_scratch: Vec<SVector<T, 6>>,
    // Breaks so far, in order, and whether any constraint can break.
    breaks: Vec<BreakEvent<T>>,
    breakable: bool,
    // Per body, the last Gauss–Seidel slot of the sweep that names it (scratch of
    // `mark_last_corrections`, sized in add_body), and whether the slots' `last_mover`
    // must be marked again (a constraint added, grouped or broken).
    last_slot: Vec<usize>,
    movers_stale: bool,
}

impl<T: Real, G: LieGroup<T>> World<T, G> {
    /// An empty world.
    ///
    /// # Errors
    /// As [`SolverOptions::validate`].
    pub fn new(options: SolverOptions<T>) -> Result<Self, XpbdError> {
        options.validate()?;
        Ok(Self {
            bodies: Vec::new(),
            slots: Vec::new(),
            systems: Vec::new(),
            direct: Vec::new(),
            options,
            time: T::zero(),
            substep_time: T::zero(),
            steps: 0,
            eval: ConstraintEval::default(),
            primal_scratch: Vec::new(),
            breaks: Vec::new(),
            breakable: false,
            last_slot: Vec::new(),
            movers_stale: true,
        })
    }

    /// Adds a body and returns its id.
    ///
    /// # Errors
    /// [`XpbdError::NonFinite`] if the body's state is not finite.
    pub fn add_body(&mut self, body: Body<T, G>) -> Result<BodyId, XpbdError> {
        if !body.is_finite()
            || !body
                .force
                .iter()
                .chain(body.torque.iter())
                .all(|x| x.is_finite())
        {
            return Err(XpbdError::NonFinite {
                what: format!("body {} state", self.bodies.len()),
            });
        }
        let mut body = body;
        body.set_plain(self.options.f32_arithmetic == options::F32Arithmetic::Plain);
        self.bodies.push(body);
        self.primal_scratch.push(SVector::zeros());
        self.last_slot.push(usize::MAX);
        Ok(BodyId(self.bodies.len() - 1))
    }

    /// Adds a constraint and returns its id.
    ///
    /// # Errors
    /// [`XpbdError::BadDimension`] unless 1 ≤ dim ≤ [`MAX_ROWS`];
    /// [`XpbdError::UnknownBody`] if it names a body not in the world;
    /// [`XpbdError::NoDynamicBody`] if every body it names is fixed (or the world);
    /// [`XpbdError::InvalidOption`] (`lambda_bounds`) unless lo ≤ 0 ≤ hi for every row, or
    /// (`gradient_layout`) for a [`GradientLayout`] with more rows than the constraint;
    /// [`XpbdError::BadCompliance`] for a negative or non-finite compliance, or one
    /// so large that α/h² overflows (h the substep);
    /// [`XpbdError::BadDamping`] for a negative or non-finite damping
    /// ([`Constraint::damping`]). Damping on a hard row (α = 0) is accepted and ignored.
    pub fn add_constraint<C: Constraint<T, G> + 'static>(
        &mut self,
        constraint: C,
    ) -> Result<ConstraintId, XpbdError> {
        self.add_boxed_constraint(Box::new(constraint))
    }

    /// As [`World::add_constraint`], for an already boxed constraint.
    ///
    /// # Errors
    /// As [`World::add_constraint`].
    pub fn add_boxed_constraint(
        &mut self,
        constraint: Box<dyn Constraint<T, G>>,
    ) -> Result<ConstraintId, XpbdError> {
        let (dim, bodies) = super::constraint::checked_slots(constraint.as_ref(), &self.bodies)?;
        if !bodies.iter().flatten().any(|&b| !self.bodies[b].is_fixed()) {
            return Err(XpbdError::NoDynamicBody {
                constraint: constraint.name(),
            });
        }
        let mut bounded = false;
        let mut compliance = SVector::zeros();
        let mut damping = SVector::zeros();
        let mut lambda_lo = SVector::zeros();
        let mut lambda_hi = SVector::zeros();
        let h = self.options.substep_dt();
        let inv_h2 = T::one() / (h * h);
        for row in 0..dim {
            let a = constraint.compliance(row);
            // α̃ = α/h² must be finite too (the solver forms it every substep; an
            // infinite α̃ gives ∞·0 = NaN): a user's α of 1e308 at h = 1e-3 s.
            if !(a.is_finite() && a >= T::zero() && (a * inv_h2).is_finite()) {
                return Err(XpbdError::BadCompliance {
                    constraint: constraint.name(),
                    row,
                    value: a.to_f64(),
                });
            }
            let b = constraint.damping(row);
            if !(b.is_finite() && b >= T::zero()) {
                return Err(XpbdError::BadDamping {
                    constraint: constraint.name(),
                    row,
                    value: b.to_f64(),
                });
            }
            let (lo, hi) = constraint.lambda_bounds(row);
            if !(lo <= T::zero() && hi >= T::zero()) {
                return Err(XpbdError::InvalidOption {
                    name: "lambda_bounds",
                    value: format!("({lo}, {hi}) for row {row} of '{}'", constraint.name()),
                    reason: "bounds on λ must satisfy lo <= 0 <= hi",
                });
            }
            bounded |= lo.is_finite() || hi.is_finite();
            compliance[row] = a;
            if a > T::zero() {
                damping[row] = b;
            }
            lambda_lo[row] = lo;
            lambda_hi[row] = hi;
        }
        let overwrites = constraint.evaluate_overwrites();
        let continuous = constraint.is_smooth();
        let as_block = constraint.solve_as_block();
        let layout = constraint.gradient_layout();
        let layout_ok = match layout {
            GradientLayout::Dense => true,
            GradientLayout::LeadingPosition { rows } => rows <= dim,
            GradientLayout::UnitPosition { rows } => rows <= dim && rows <= 3,
        };
        if !layout_ok {
            return Err(XpbdError::InvalidOption {
                name: "gradient_layout",
                value: format!("{layout:?} for the {dim} rows of '{}'", constraint.name()),
                reason: "the layout's rows must not exceed the constraint's rows (nor 3 unit rows)",
            });
        }
        self.slots.push(Slot {
            constraint,
            lambda: SVector::zeros(),
            dim,
            bounded,
            bodies,
            compliance,
            damping,
            damped: damping.iter().any(|&b| b > T::zero()),
            lambda_lo,
            lambda_hi,
            enabled: true,
            breaking: None,
            overwrites,
            continuous,
            as_block,
            layout,
            group: None,
            last_mover: [None; MAX_BODIES],
        });
        self.movers_stale = true;
        Ok(ConstraintId(self.slots.len() - 1))
    }

    /// The solver options.
    pub fn options(&self) -> &SolverOptions<T> {
        &self.options
    }

    /// All bodies, indexed by [`BodyId`].
    pub fn bodies(&self) -> &[Body<T, G>] {
        &self.bodies
    }

    /// One body, or `None` if the id is not in the world.
    pub fn body(&self, id: BodyId) -> Option<&Body<T, G>> {
        self.bodies.get(id.0)
    }

    /// Mutable access to one body (e.g. to set external forces between steps).
    pub fn body_mut(&mut self, id: BodyId) -> Option<&mut Body<T, G>> {
        self.bodies.get_mut(id.0)
    }

    /// Number of constraints.
    pub fn constraint_count(&self) -> usize {
        self.slots.len()
    }

    /// The constraint `id`, or `None` if there is no such constraint.
    pub fn constraint(&self, id: ConstraintId) -> Option<&dyn Constraint<T, G>> {
        self.slots.get(id.0).map(|s| s.constraint.as_ref())
    }

    /// The accumulated multipliers λ of a constraint over the last substep (first
    /// `dim` entries), or `None` for an unknown id.
    pub fn lambda(&self, id: ConstraintId) -> Option<&[T]> {
        self.slots.get(id.0).map(|s| &s.lambda.as_slice()[..s.dim])
    }

    /// Simulated time, s.
    pub fn time(&self) -> T {
        self.time
    }

    /// Number of steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Advances by one time step Δt (all substeps).
    ///
    /// # Errors
    /// [`XpbdError::BodyNotARotation`] before anything is computed (the state is left as
    /// it was) if a body's public `orientation` was set since the last step to a value
    /// that is not a rotation; only orientations changed that way are checked.
    /// [`XpbdError::Diverged`] if a body's state became non-finite (the state is left
    /// as computed, for inspection; stepping again reports it again); otherwise [`XpbdError::DirectSolveFailed`] if a
    /// direct group ([`World::add_direct_group`]) found no finite solution in some
    /// iteration of the step (that projection changed nothing; the step was
    /// completed).
    pub fn step(&mut self) -> Result<(), XpbdError> {
        let mut changed = false;
        for (body, b) in self.bodies.iter().enumerate() {
            changed |= b.check_changed_orientation().map_err(|source| {
                // After a step that diverged (the solver wrote a non-finite
                // orientation), the next step reports the divergence again, not an
                // orientation the user set.
                if b.solver_orientation_is_finite() {
                    XpbdError::BodyNotARotation { body, source }
                } else {
                    XpbdError::Diverged {
                        time: crate::lie::real::decimal_f64(self.time),
                        body,
                    }
                }
            })?;
        }
        // The public fields cannot change between the substeps of a step: the
        // compensation is resynced once here (orientations only if one changed).
        for b in &mut self.bodies {
            b.resync_compensation(changed);
        }
        for _ in 0..self.options.substeps {
            self.substep_inner(false);
        }
        self.steps += 1;
        self.time = crate::lie::real::c::<T>(self.steps as f64) * self.options.dt;
        self.substep_time = self.time;
        if let Some(i) = self.bodies.iter().position(|b| !b.is_finite()) {
            return Err(XpbdError::Diverged {
                time: crate::lie::real::decimal_f64(self.time),
                body: i,
            });
        }
        if let Some(e) = self.take_direct_failure(self.time.to_f64()) {
            return Err(e);
        }
        Ok(())
    }

    /// One substep of Algorithm 1: [`Constraint::begin_substep`] of every constraint
    /// and [`System::begin_substep`] of every system, inertial prediction, `iterations`
    /// sweeps of [`System::project`] of every system, then one direct solve of every
    /// direct group ([`World::add_direct_group`]), then row (56) or block (124)
    /// projections of the other constraints, velocity update (line 10), then the
    /// velocity-level damping pass [`World::solve_velocities`] (lines 11–14), then
    /// [`Constraint::end_substep`] of every constraint, then the breaking check of
    /// breakable constraints ([`World::set_break_limits`]). Unlike [`World::step`], it
    /// does not check orientations set by the user.
    pub fn substep(&mut self) {
        self.substep_inner(true);
    }

    /// [`Self::substep`]; `resync` false when [`World::step`] has resynced the bodies'
    /// compensated state with their public fields.
    fn substep_inner(&mut self, resync: bool) {
        let clock = self.begin_next_substep();
        let (h, g) = (clock.h, self.options.gravity);
        crate::xpbd::body::predict_bodies(&mut self.bodies, h, &g, resync);
        for s in &mut self.slots {
            s.lambda = SVector::zeros();
        }
        let inv_h2 = T::one() / (h * h);
        // Whether the systems' projection of the last iteration is the substep's last
        // position update (System::project_last).
        let systems_last = self.direct.is_empty()
            && self.slots.iter().all(|s| !s.enabled)
            && !self.options.primal_correction;
        let iterations = self.options.iterations;
        let pass = self.options.primal_correction && self.primal_correction_applies();
        let block_mode = self.options.solve_mode == SolveMode::Block;
        // Without the primal correction pass nothing reads a body's orientation between
        // the last block projection that moves it and the velocity update, which
        // composes the orientation anyway: that projection leaves it uncomposed
        // (`Body::defer_compose`).
        let defer = block_mode && !pass;
        if defer && self.movers_stale {
            self.mark_last_corrections();
        }
        for iteration in 0..iterations {
            self.project_systems(inv_h2, systems_last && iteration + 1 == iterations);
            self.project_direct_groups(inv_h2);
            let last = defer && iteration + 1 == iterations;
            for k in 0..self.slots.len() {
                if !self.slots[k].enabled || self.slots[k].group.is_some() {
                    continue;
                }
                let block = block_mode && !self.slots[k].bounded && self.slots[k].as_block;
                if block {
                    // Cleared before the velocity update; before `project_rows` too,
                    // which evaluates between its rows.
                    let movers = self.slots[k].last_mover;
                    if last {
                        self.set_defer_compose(movers, true);
                    }
                    if self.project_block(k, inv_h2) {
                        continue;
                    }
                    if last {
                        self.set_defer_compose(movers, false);
                    }
                }
                self.project_rows(k, inv_h2);
            }
        }
        if pass {
            self.primal_correction_pass();
        }
        crate::xpbd::body::update_velocities(&mut self.bodies, h);
        self.solve_velocities();
        for s in &mut self.slots {
            s.constraint.end_substep(&self.bodies);
        }
        self.systems_end_substep();
        if self.breakable {
            self.check_breaks(clock.end_time, h);
        }
        self.substep_time = clock.end_time;
    }

    /// Marks, for each body, the last slot of the Gauss–Seidel sweep that names it
    /// (`Slot::last_mover`).
    fn mark_last_corrections(&mut self) {
        self.movers_stale = false;
        self.last_slot.fill(usize::MAX);
        for (k, s) in self.slots.iter().enumerate() {
            if s.enabled && s.group.is_none() {
                for &b in s.bodies.iter().flatten() {
                    self.last_slot[b] = k;
                }
            }
        }
        for (k, s) in self.slots.iter_mut().enumerate() {
            s.last_mover = s.bodies.map(|b| b.filter(|&b| self.last_slot[b] == k));
        }
    }

    /// Sets `Body::defer_compose` of the bodies `movers` to `on`.
    #[inline]
    fn set_defer_compose(&mut self, movers: [Option<usize>; MAX_BODIES], on: bool) {
        for b in movers.into_iter().flatten() {
            self.bodies[b].defer_compose = on;
        }
    }

    fn evaluate(&mut self, k: usize) {
        if !self.slots[k].overwrites {
            self.eval.value.fill(T::zero());
            for g in &mut self.eval.gradient {
                g.fill(T::zero());
            }
        }
        self.slots[k]
            .constraint
            .evaluate(&self.bodies, &mut self.eval);
    }
}

/// Solves `A x = b` for the leading n×n block of a symmetric positive definite `A`
/// (lower triangle used, overwritten by its Cholesky factor L), with `b` overwritten by
/// x. Returns false, leaving `b` unusable, if a pivot is not positive relative to its
/// diagonal entry (a singular or indefinite system, e.g. redundant constraint rows).
fn cholesky_solve_in_place<T: Real>(
    a: &mut SMatrix<T, MAX_ROWS, MAX_ROWS>,
    b: &mut SVector<T, MAX_ROWS>,
    n: usize,
) -> bool {
    let tiny = T::default_epsilon() * crate::lie::real::c(64.0);
    for j in 0..n {
        let diag = a[(j, j)];
        let mut d = diag;
        for k in 0..j {
            d -= a[(j, k)] * a[(j, k)];
        }
        // A non-finite pivot (NaN from bad input) is rejected too.
        if !d.is_finite() || d <= tiny * diag.abs() {
            return false;
        }
        let l = d.sqrt();
        a[(j, j)] = l;
        for i in j + 1..n {
            let mut s = a[(i, j)];
            for k in 0..j {
                s -= a[(i, k)] * a[(j, k)];
            }
            a[(i, j)] = s / l;
        }
    }
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= a[(i, k)] * b[k];
        }
        b[i] = s / a[(i, i)];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= a[(k, i)] * b[k];
        }
        b[i] = s / a[(i, i)];
    }
    b.iter().all(|x| x.is_finite())
}
