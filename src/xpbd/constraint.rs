//! The [`Constraint`] trait: how the solver sees every joint, limit, drive or contact.
//!
//! A constraint is a vector function C(x) ∈ ℝⁿ, 1 ≤ n ≤ [`MAX_ROWS`], of the poses of
//! at most [`MAX_BODIES`] bodies, with a diagonal compliance α (paper (36)) and,
//! optionally, a Rayleigh damping b per row (Section 4.4). Its gradient (59) is stored
//! per body as an n×6 block `[∂C/∂p | D_R C]`: three columns for world-frame position
//! perturbations δp (per m) and three for body-frame rotation perturbations δθ with
//! `R ⊞ δθ` (per rad, eq. 14/16). The same columns map the body velocities
//! (v world, ω body frame) to the rate Ċ = ∇C·(v, ω) used by the damping pass.
//!
//! The solver never needs to know which constraint it is solving: it asks for C and
//! ∇C at the current state and projects either one row at a time (56) or all rows at
//! once (124). Inequality rows (joint limits, contacts) say so through
//! [`Constraint::lambda_bounds`], and the solver clamps their accumulated λ.

use super::body::{Body, BodyId};
use crate::lie::{LieGroup, Real};
use nalgebra::{SMatrix, SVector};

/// Largest number of rows of one constraint (a fixed joint has 6).
pub const MAX_ROWS: usize = 6;
/// Largest number of bodies one constraint couples.
pub const MAX_BODIES: usize = 2;

/// Value and gradient of a constraint at one state, in fixed-size storage.
///
/// Only the first `dim()` rows are meaningful; the rest must be left zero.
/// `gradient[k]` is the n×6 block of body slot k in the layout of (59):
/// columns 0..3 = ∂C/∂p (world frame), columns 3..6 = D_R C (body frame).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConstraintEval<T: Real> {
    /// C(x), units of the constraint (m for positions, rad for angles).
    pub value: SVector<T, MAX_ROWS>,
    /// ∇C per body slot, n×6 used of 6×6.
    pub gradient: [SMatrix<T, MAX_ROWS, 6>; MAX_BODIES],
}

impl<T: Real> Default for ConstraintEval<T> {
    fn default() -> Self {
        Self {
            value: SVector::zeros(),
            gradient: [SMatrix::zeros(); MAX_BODIES],
        }
    }
}

impl<T: Real> ConstraintEval<T> {
    /// Resets value and gradients to zero.
    pub fn clear(&mut self) {
        // In place (not `*self = Self::default()`, which builds a zeroed copy and moves
        // it in).
        self.value.fill(T::zero());
        for g in &mut self.gradient {
            g.fill(T::zero());
        }
    }
}

/// What a constraint promises about the position columns (∂C/∂p, columns 0..3) of its
/// gradient blocks, for every side that names a body, so that the block projection
/// (124) skips products with known zeros ([`Constraint::gradient_layout`]). The values
/// the solver computes are the same as from the dense blocks: only terms that are
/// exactly zero are left out, and the remaining ones are summed in the same order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GradientLayout {
    /// Nothing is known: every entry of every row is read.
    #[default]
    Dense,
    /// Rows `0..rows` have arbitrary position columns; rows from `rows` on have zero
    /// position columns (e.g. the rotation rows of a joint).
    LeadingPosition {
        /// Number of leading rows with position columns (≤ the constraint's rows).
        rows: usize,
    },
    /// Rows `0..rows` (`rows` ≤ 3) have position columns s_r·e_rᵀ (the only non-zero
    /// position entry of row r is at column r, s_r read from the block); rows from
    /// `rows` on have zero position columns. E.g. Δp = p̄₁ − p̄₂ followed by rotation
    /// rows: s = +1 for body 1 and −1 for body 2.
    UnitPosition {
        /// Number of leading rows with a unit position column (≤ 3).
        rows: usize,
    },
}

/// A (vector) constraint between at most two bodies, generic over the scalar `T` and
/// the rotation representation `G`.
pub trait Constraint<T: Real, G: LieGroup<T>>: Send + Sync {
    /// A short human-readable name for diagnostics and errors (e.g. "revolute 0-1").
    fn name(&self) -> String;

    /// The constraint's type, for grouping diagnostics and reports (e.g. the
    /// [`crate::xpbd::check`] results) by kind rather than by instance: `"fixed"`,
    /// `"revolute"`, `"spherical"` or `"prismatic"` for the joints of the `joint`
    /// module. Default: `"custom"`.
    fn kind(&self) -> &'static str {
        "custom"
    }

    /// Number of rows n, 1 ≤ n ≤ [`MAX_ROWS`].
    fn dim(&self) -> usize;

    /// The bodies of slot 0 and slot 1; `None` for a slot that is the fixed world
    /// (a one-sided constraint) or unused. The gradient block of a `None` slot is
    /// ignored.
    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES];

    /// Writes C(x) and ∇C(x) at the bodies' current poses into `out` (which the caller
    /// has cleared, unless [`Constraint::evaluate_overwrites`] says it need not).
    /// `bodies` is the world's whole body list, indexed by [`BodyId`].
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>);

    /// Adds the constraint force ∇C_kᵀλ of each slot k that names a body to
    /// `force[k]`, at the bodies' current poses, without the values C or the stored
    /// gradient blocks; returns whether it did. `lambda` holds [`Constraint::dim`]
    /// multipliers (units as the rows' compliance inverse times their value), `force[k]`
    /// is a 6-vector in the layout of (59): world-frame force part (from ∂C/∂p),
    /// body-frame torque part (from D_R C). The entries of a world slot are left as they
    /// were.
    ///
    /// The primal correction pass ([`crate::xpbd::SolverOptions::primal_correction`])
    /// needs only ∇Cᵀλ of (51); a constraint that implements this saves the values and
    /// the 6×6 blocks. Default: false, nothing written, and the caller falls back to
    /// [`Constraint::evaluate`].
    fn add_constraint_force(
        &self,
        _bodies: &[Body<T, G>],
        _lambda: &[T],
        _force: &mut [SVector<T, 6>; MAX_BODIES],
    ) -> bool {
        false
    }

    /// The block projection (124) of this constraint, done by the constraint itself
    /// (evaluation, assembly of A = Σ∇C𝓜⁻¹∇Cᵀ + α̃, LDLᵀ solve and corrections in one
    /// inlined pass, without the world's evaluation buffer), or `None` (the default) to
    /// let the world evaluate it ([`Constraint::evaluate`]) and solve.
    ///
    /// `bodies` is the world's body list (indexed by [`BodyId`]), `compliance` the α of
    /// the [`Constraint::dim`] rows (as [`Constraint::compliance`]), `inv_h2` = 1/h²
    /// (1/s²), `lambda` the rows' accumulated multipliers of the substep. An
    /// implementation solves `[Σ_b ∇C_b 𝓜_b⁻¹ ∇C_bᵀ + α̃] Δλ = −C − α̃λ`
    /// (α̃ = α/h²) over the sides that name a dynamic body, adds Δλ to `lambda` and
    /// applies Δx_b = 𝓜_b⁻¹∇C_bᵀΔλ to those bodies (R ⊞ δθ, (58)); it returns
    /// `Some(true)`, or `Some(false)` with nothing changed if the system is not positive
    /// definite (the world then projects the rows one by one). The result must be
    /// that of the world's own block solve of [`Constraint::evaluate`]'s values and
    /// gradients.
    fn project_block_fused(
        &self,
        _bodies: &mut [Body<T, G>],
        _compliance: &[T],
        _inv_h2: T,
        _lambda: &mut [T],
    ) -> Option<bool> {
        None
    }

    /// Whether [`Constraint::evaluate`] writes every entry the solver reads, whatever
    /// `out` held before: rows 0..[`Constraint::dim`] of `value` and all six columns of
    /// those rows of the gradient block of every slot that names a body. The world then
    /// skips clearing `out` before the call, so rows from `dim` on and the block of a
    /// world slot may hold values of another constraint; the solver never reads them.
    /// Default: false (`out` is cleared first).
    fn evaluate_overwrites(&self) -> bool {
        false
    }

    /// The structure of the position columns of the gradient blocks that
    /// [`Constraint::evaluate`] writes ([`GradientLayout`]), read once when the
    /// constraint is added to a world. A constraint that returns anything but
    /// [`GradientLayout::Dense`] (the default) must write exactly that structure, at
    /// every state: the block projection reads only the entries the layout leaves open.
    fn gradient_layout(&self) -> GradientLayout {
        GradientLayout::Dense
    }

    /// Compliance α of row `row` (inverse stiffness; 0 = hard), in the constraint's
    /// units squared per joule (m/N for length rows, rad/(N·m) for angle rows).
    fn compliance(&self, row: usize) -> T;

    /// The elastic energy (36) U = ½ Cᵀα⁻¹C of the constraint's compliant rows at the
    /// bodies' current poses, J (`bodies` is the world's body list, indexed by
    /// [`BodyId`]). Hard rows (α = 0) hold no energy (C = 0 is
    /// imposed, not paid for). An inequality row C ≥ 0 (bounds `(0, +∞)`, see
    /// [`Constraint::lambda_bounds`]) stores ½C²/α only while violated (C < 0); rows
    /// with other bounds (motors, friction) are not derived from a potential and hold
    /// none. The default evaluates the constraint once; [`crate::xpbd::World::energy`]
    /// sums it over the enabled constraints.
    fn potential_energy(&self, bodies: &[Body<T, G>]) -> T {
        let mut eval = ConstraintEval::default();
        self.evaluate(bodies, &mut eval);
        let inf = crate::lie::real::c::<T>(f64::INFINITY);
        let half = crate::lie::real::c::<T>(0.5);
        (0..self.dim().min(MAX_ROWS)).fold(T::zero(), |acc, j| {
            let alpha = self.compliance(j);
            if alpha.partial_cmp(&T::zero()) != Some(std::cmp::Ordering::Greater) {
                return acc;
            }
            let c = eval.value[j];
            let stored = match self.lambda_bounds(j) {
                (lo, hi) if lo == -inf && hi == inf => c,
                (lo, hi) if lo == T::zero() && hi == inf => c.min(T::zero()),
                _ => T::zero(),
            };
            acc + half * stored * stored / alpha
        })
    }

    /// Rayleigh damping b of row `row`, in seconds (≥ 0, finite; 0 = undamped, the
    /// default). The row's damping coefficient is β = b·α⁻¹ (paper Section 4.4, (60)):
    /// the row resists its rate of change Ċ with the force −β Ċ, so b is the ratio of
    /// damping to stiffness k = α⁻¹ — N·s/m per N/m for a length row, N·m·s/rad per
    /// N·m/rad for an angle row, hence seconds for every row. A one-row spring of
    /// stiffness k = α⁻¹ on a mass m gets the damping ratio ζ = (b/2)·√(k/m)
    /// = b/(2√(α m)).
    ///
    /// Damping acts in the velocity-level pass that follows the position solve and the
    /// velocity update of each substep ([`crate::xpbd::World::solve_velocities`],
    /// Algorithm 1 lines 11–14). Hard rows (α = 0) are never damped, whatever this
    /// returns: C stays 0 on them, so Ċ = 0 and there is nothing to damp.
    fn damping(&self, _row: usize) -> T {
        T::zero()
    }

    /// Whether ∇C is continuous where C = 0, the state a projection ends in. False for
    /// a norm ‖d‖ (the scalar constraints of Section 5.1), whose gradient d/‖d‖ jumps
    /// at d = 0. The primal correction pass
    /// ([`crate::xpbd::SolverOptions::primal_correction`]) re-evaluates ∇C at the end
    /// state and relies on it changing only a little over a small move, so a world
    /// holding any enabled constraint that returns false skips that pass. Default: true.
    fn is_smooth(&self) -> bool {
        true
    }

    /// How far the state `bodies` is from the nearest point where C is not
    /// differentiable, in the units of the constraint's own variable (rad for an angle,
    /// m for a slide), or `None` if C is differentiable everywhere. Joint limits return
    /// the distance to the middle of their range (where the row switches from one limit
    /// to the other, (74)) and, for the swing limit, to swing 0 and π (where the swing
    /// angle (77) has a cone point); a velocity motor before its first substep returns
    /// `Some(0)` (its row is the constant 0 until it has a start). The gradient checker
    /// ([`crate::xpbd::check`]) skips states closer than its finite-difference reach.
    /// Default: `None`.
    fn kink_distance(&self, _bodies: &[Body<T, G>]) -> Option<T> {
        None
    }

    /// Whether the solver may project all rows together with one dense solve (124)
    /// when it runs in block mode. The world reads it once, when the constraint is
    /// added. Default: yes.
    fn solve_as_block(&self) -> bool {
        true
    }

    /// Bounds `(lo, hi)` on the accumulated multiplier λ of row `row` over one substep.
    /// Equality rows are unbounded (default); an inequality C ≥ 0 has `(0, +∞)`, so it
    /// only pushes when violated. Constraints with a bounded row are always projected
    /// row by row.
    fn lambda_bounds(&self, _row: usize) -> (T, T) {
        let inf = crate::lie::real::c::<T>(f64::INFINITY);
        (-inf, inf)
    }

    /// Called by [`crate::xpbd::World::substep`] once per substep for every
    /// constraint, after the position solve, the velocity update and the damping pass,
    /// with the bodies at their end-of-substep state. Constraints with state carried
    /// across substeps (e.g. the unwrapped angle of a revolute joint limit) update it
    /// here; [`Constraint::evaluate`] sees it
    /// constant within a substep. Default: nothing.
    fn end_substep(&mut self, _bodies: &[Body<T, G>]) {}

    /// Called by [`crate::xpbd::World::substep`] once per substep for every
    /// constraint, before the inertial prediction, with the bodies at their
    /// start-of-substep state. `clock` gives the substep length h and the time the
    /// substep ends at, which is the time the solved positions belong to: a constraint
    /// with a prescribed target (a drive, a moving support) sets its target for
    /// `clock.end_time` here, and a velocity motor its per-substep increment from
    /// `clock.h`. [`Constraint::evaluate`] sees the state set here constant within the
    /// substep. Default: nothing.
    fn begin_substep(&mut self, _clock: SubstepClock<T>, _bodies: &[Body<T, G>]) {}
}

/// When a substep happens, for [`Constraint::begin_substep`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubstepClock<T: Real> {
    /// Time at the start of the substep, s.
    pub start_time: T,
    /// Time at the end of the substep (`start_time + h`), s.
    pub end_time: T,
    /// Substep length h = Δt/substeps, s.
    pub h: T,
}

/// The checks every user of a constraint makes first: its dimension is in
/// 1..=[`MAX_ROWS`] and every body it names is in `bodies`. Returns the dimension and
/// the body index of each slot (`None` for the world).
///
/// # Errors
/// [`XpbdError::BadDimension`] or [`XpbdError::UnknownBody`].
pub(crate) fn checked_slots<T: Real, G: LieGroup<T>>(
    constraint: &dyn Constraint<T, G>,
    bodies: &[Body<T, G>],
) -> Result<(usize, [Option<usize>; MAX_BODIES]), super::XpbdError> {
    let dim = constraint.dim();
    if dim == 0 || dim > MAX_ROWS {
        return Err(super::XpbdError::BadDimension {
            constraint: constraint.name(),
            dim,
            max: MAX_ROWS,
        });
    }
    let mut slots = [None; MAX_BODIES];
    for (k, id) in constraint.bodies().iter().enumerate() {
        if let Some(BodyId(b)) = *id {
            if b >= bodies.len() {
                return Err(super::XpbdError::UnknownBody {
                    constraint: constraint.name(),
                    body: b,
                    count: bodies.len(),
                });
            }
            slots[k] = Some(b);
        }
    }
    Ok((dim, slots))
}
