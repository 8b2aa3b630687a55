//! The [`World`]: bodies, constraints, and the XPBD time step (Algorithm 1).

use super::body::{Body, BodyId};
use super::constraint::{Constraint, ConstraintEval, MAX_BODIES, MAX_ROWS};
use super::error::XpbdError;
use crate::lie::{LieGroup, Real};
use nalgebra::{SMatrix, SVector, Vector3};

mod breaking;
mod damping;
pub mod direct;
mod options;
mod residuals;
mod systems;

pub use breaking::{BreakEvent, BreakLimits};
pub use direct::{DirectGroupId, DirectGroupStats};
pub use options::{SolveMode, SolverOptions};
pub use systems::{
    apply_body_correction, RowBlockEval, RowBlockInfo, System, SystemId, MAX_BLOCK_BODIES,
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
    // The direct group ([`World::add_direct_group`]) that projects this constraint;
    // `None`: projected by Gauss–Seidel.
    group: Option<usize>,
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
        self.bodies.push(body);
        self.primal_scratch.push(SVector::zeros());
        Ok(BodyId(self.bodies.len() - 1))
    }

    /// Adds a constraint and returns its id.
    ///
    /// # Errors
    /// [`XpbdError::BadDimension`] unless 1 ≤ dim ≤ [`MAX_ROWS`];
    /// [`XpbdError::UnknownBody`] if it names a body not in the world;
    /// [`XpbdError::NoDynamicBody`] if every body it names is fixed (or the world);
    /// [`XpbdError::InvalidOption`] (`lambda_bounds`) unless lo ≤ 0 ≤ hi for every row;
    /// [`XpbdError::BadCompliance`] for a negative or non-finite compliance;
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
        for row in 0..dim {
            let a = constraint.compliance(row);
            if !(a.is_finite() && a >= T::zero()) {
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
            group: None,
        });
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
    /// as computed, for inspection); otherwise [`XpbdError::DirectSolveFailed`] if a
    /// direct group ([`World::add_direct_group`]) found no finite solution in some
    /// iteration of the step (that projection changed nothing; the step was
    /// completed).
    pub fn step(&mut self) -> Result<(), XpbdError> {
        for (body, b) in self.bodies.iter().enumerate() {
            b.check_changed_orientation()
                .map_err(|source| XpbdError::BodyNotARotation { body, source })?;
        }
        for _ in 0..self.options.substeps {
            self.substep();
        }
        self.steps += 1;
        self.time = crate::lie::real::c::<T>(self.steps as f64) * self.options.dt;
        self.substep_time = self.time;
        if let Some(i) = self.bodies.iter().position(|b| !b.is_finite()) {
            return Err(XpbdError::Diverged {
                time: self.time.to_f64(),
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
        let clock = self.begin_next_substep();
        let (h, g) = (clock.h, self.options.gravity);
        for b in &mut self.bodies {
            b.predict(h, &g);
        }
        for s in &mut self.slots {
            s.lambda = SVector::zeros();
        }
        let inv_h2 = T::one() / (h * h);
        for _ in 0..self.options.iterations {
            self.project_systems(inv_h2);
            self.project_direct_groups(inv_h2);
            for k in 0..self.slots.len() {
                if !self.slots[k].enabled || self.slots[k].group.is_some() {
                    continue;
                }
                let block = self.options.solve_mode == SolveMode::Block
                    && !self.slots[k].bounded
                    && self.slots[k].as_block;
                if !(block && self.project_block(k, inv_h2)) {
                    self.project_rows(k, inv_h2);
                }
            }
        }
        if self.options.primal_correction && self.primal_correction_applies() {
            self.primal_correction_pass();
        }
        for b in &mut self.bodies {
            b.update_velocity(h);
        }
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

    /// 𝓜⁻¹ diagonal of body slot `s` of constraint `k` (zero for world/fixed).
    fn inv_mass_diag(&self, k: usize, s: usize) -> Option<(usize, SVector<T, 6>)> {
        let b = self.slots[k].bodies[s]?;
        let body = &self.bodies[b];
        if body.is_fixed() {
            return None;
        }
        let m = body.inv_mass();
        let i = body.inv_inertia();
        Some((b, SVector::<T, 6>::from([m, m, m, i.x, i.y, i.z])))
    }

    fn apply(&mut self, b: usize, w: &SVector<T, 6>, dx: &SVector<T, 6>) {
        let d = dx.component_mul(w);
        self.bodies[b].apply_correction(
            &Vector3::new(d[0], d[1], d[2]),
            &Vector3::new(d[3], d[4], d[5]),
        );
    }

    /// Scalar projections (56), one row after another, each at the current state.
    fn project_rows(&mut self, k: usize, inv_h2: T) {
        let dim = self.slots[k].dim;
        let masses = [self.inv_mass_diag(k, 0), self.inv_mass_diag(k, 1)];
        for j in 0..dim {
            self.evaluate(k);
            let slot = &self.slots[k];
            let alpha = slot.compliance[j] * inv_h2;
            let mut denom = alpha;
            let mut rows = [SVector::<T, 6>::zeros(); MAX_BODIES];
            for (s, m) in masses.iter().enumerate() {
                if let Some((_, w)) = m {
                    rows[s] = self.eval.gradient[s].row(j).transpose();
                    denom += rows[s].component_mul(w).dot(&rows[s]);
                }
            }
            if denom <= T::zero() {
                continue;
            }
            let lambda = slot.lambda[j];
            let mut dl = (-self.eval.value[j] - alpha * lambda) / denom;
            let new = (lambda + dl).max(slot.lambda_lo[j]).min(slot.lambda_hi[j]);
            dl = new - lambda;
            self.slots[k].lambda[j] = new;
            for (s, m) in masses.iter().enumerate() {
                if let Some((b, w)) = m {
                    self.apply(*b, w, &(rows[s] * dl));
                }
            }
        }
    }

    /// Block projection (124). Returns false if the system was not positive definite
    /// (e.g. redundant rows), in which case nothing was changed.
    fn project_block(&mut self, k: usize, inv_h2: T) -> bool {
        let masses = [self.inv_mass_diag(k, 0), self.inv_mass_diag(k, 1)];
        if masses.iter().all(|m| m.is_none()) {
            return true;
        }
        self.evaluate(k);
        // One copy of the solve per row count, so that every loop below has constant
        // bounds (unrolled, no bounds checks).
        match self.slots[k].dim {
            1 => self.project_block_n::<1>(k, inv_h2, &masses),
            2 => self.project_block_n::<2>(k, inv_h2, &masses),
            3 => self.project_block_n::<3>(k, inv_h2, &masses),
            4 => self.project_block_n::<4>(k, inv_h2, &masses),
            5 => self.project_block_n::<5>(k, inv_h2, &masses),
            _ => self.project_block_n::<MAX_ROWS>(k, inv_h2, &masses),
        }
    }

    /// [`Self::project_block`] for a constraint of `N` rows (already evaluated).
    #[inline(always)]
    fn project_block_n<const N: usize>(
        &mut self,
        k: usize,
        inv_h2: T,
        masses: &[Option<(usize, SVector<T, 6>)>; MAX_BODIES],
    ) -> bool {
        let slot = &self.slots[k];
        let eval = &self.eval;
        // Lower triangle of A = Σ_b ∇C_b 𝓜_b⁻¹ ∇C_bᵀ + α̃ over the N rows.
        let mut a = [[T::zero(); N]; N];
        for (s, m) in masses.iter().enumerate() {
            if let Some((_, w)) = m {
                let g = &eval.gradient[s];
                // Σ over the six columns c of the rank-one terms (w_c g_c) g_cᵀ, g_c
                // the N used entries of column c (contiguous, so each row of A is
                // updated with vector operations).
                for c in 0..6 {
                    let mut gc = [T::zero(); N];
                    gc.copy_from_slice(&g.column(c).as_slice()[..N]);
                    let wc = w[c];
                    for i in 0..N {
                        let x = gc[i] * wc;
                        for j in 0..N {
                            if j <= i {
                                a[i][j] += x * gc[j];
                            }
                        }
                    }
                }
            }
        }
        let mut dl = [T::zero(); N];
        for j in 0..N {
            let alpha = slot.compliance[j] * inv_h2;
            a[j][j] += alpha;
            dl[j] = -eval.value[j] - alpha * slot.lambda[j];
        }
        if !ldlt_solve_fixed(&mut a, &mut dl) {
            return false;
        }
        // Δx_b = 𝓜_b⁻¹ ∇C_bᵀ Δλ.
        let mut dx = [SVector::<T, 6>::zeros(); MAX_BODIES];
        for (s, m) in masses.iter().enumerate() {
            if let Some((_, w)) = m {
                let g = &eval.gradient[s];
                for c in 0..6 {
                    let mut acc = T::zero();
                    for (i, d) in dl.iter().enumerate() {
                        acc += g[(i, c)] * *d;
                    }
                    dx[s][c] = acc * w[c];
                }
            }
        }
        let lambda = &mut self.slots[k].lambda;
        for (l, d) in lambda.iter_mut().zip(dl.iter()) {
            *l += *d;
        }
        for (s, m) in masses.iter().enumerate() {
            if let Some((b, _)) = m {
                let d = &dx[s];
                self.bodies[*b].apply_correction(
                    &Vector3::new(d[0], d[1], d[2]),
                    &Vector3::new(d[3], d[4], d[5]),
                );
            }
        }
        true
    }
}

/// Solves `A x = b` for a symmetric positive definite `A` of fixed size `N` (lower
/// triangle used, overwritten) by its LDLᵀ factorisation (L unit lower triangular, D
/// diagonal: the Cholesky factor is L·√D), `b` overwritten by x. Every loop bound is a
/// constant, and there is one division per row (1/Dⱼⱼ) and no square root. Returns
/// false, leaving `b` unusable, if a pivot Dⱼⱼ (the square of the Cholesky pivot) is not
/// positive relative to its diagonal entry, as [`cholesky_solve_in_place`] rejects it,
/// or the solution is not finite.
#[inline(always)]
// The loops run over the fixed row count N and index several arrays in step (L, D, v, b),
// so that they unroll; iterators would obscure the factorisation.
#[allow(clippy::needless_range_loop)]
fn ldlt_solve_fixed<T: Real, const N: usize>(a: &mut [[T; N]; N], b: &mut [T; N]) -> bool {
    // Every inner loop runs over 0..N with a test on the index, so that it unrolls fully
    // and the outer loops then do too (a trip count depending on the outer index would
    // keep runtime loops).
    let tiny = T::default_epsilon() * crate::lie::real::c(64.0);
    let mut inv_d = [T::zero(); N];
    for j in 0..N {
        // v_k = L_jk D_kk for k < j.
        let mut v = [T::zero(); N];
        let diag = a[j][j];
        let mut d = diag;
        for k in 0..N {
            if k < j {
                v[k] = a[j][k] * a[k][k];
                d -= a[j][k] * v[k];
            }
        }
        // A NaN pivot passes this test but makes the solution NaN, which the final test
        // rejects (+∞ only arises from an infinite diagonal entry, which fails it).
        if d <= tiny * diag.abs() {
            return false;
        }
        a[j][j] = d;
        let inv = T::one() / d;
        inv_d[j] = inv;
        for i in 0..N {
            if i > j {
                let mut s = a[i][j];
                for k in 0..N {
                    if k < j {
                        s -= a[i][k] * v[k];
                    }
                }
                a[i][j] = s * inv;
            }
        }
    }
    for i in 0..N {
        let mut s = b[i];
        for k in 0..N {
            if k < i {
                s -= a[i][k] * b[k];
            }
        }
        b[i] = s;
    }
    for ii in 0..N {
        let i = N - 1 - ii;
        let mut s = b[i] * inv_d[i];
        for k in 0..N {
            if k > i {
                s -= a[k][i] * b[k];
            }
        }
        b[i] = s;
    }
    // x·0 is NaN for ±∞ and NaN: one test for all entries.
    b.iter().fold(T::zero(), |acc, x| acc + *x * T::zero()) == T::zero()
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
