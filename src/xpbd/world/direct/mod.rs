//! Direct solves of groups of constraints: all rows of a group (e.g. every joint and
//! joint limit of a chain) projected together, one linear solve per iteration, instead
//! of one constraint after another by Gauss–Seidel ([`World::add_direct_group`]).
//!
//! # Why
//! The world's default solve visits the constraints one after another, each projected
//! on its own (rows (56) or a block (124)): a block Gauss–Seidel iteration on the
//! linearised substep system. Its error shrinks per sweep by the spectral radius ρ of
//! that iteration, which depends on the mass ratios along the structure: for a 10-link
//! hinge chain with ±30° limits and link masses alternating 1 kg and 1000 kg,
//! ρ = 1 − 2.9e-7 (`tests/joint/chain_studies.rs`, `study_gauss_seidel_rate`), so no
//! affordable number of sweeps holds the joints together. A direct solve of the coupled
//! system is exact for the linearisation whatever the mass ratios; the iterations are
//! then Newton steps and only have to follow the nonlinearity of C.
//!
//! # The step
//! Stack the rows of the K constraints of a group into C(x) ∈ ℝᵐ with compliances α
//! (α̃ = α/h², h the substep) and the constraints' accumulated multipliers λ ∈ ℝᵐ. One
//! projection is one Newton step (53)–(55) of all m rows at once:
//!
//! ```text
//! A Δλ = −C − α̃λ,     A = ∇C 𝓜⁻¹ ∇Cᵀ + α̃      (m × m, symmetric)
//! λ ← λ + Δλ,          Δx_b = 𝓜_b⁻¹ ∇C_bᵀ Δλ      (57)
//! p_b ← p_b + Δp_b,    R_b ← R_b ⊞ Δθ_b          (58)
//! ```
//!
//! with ∇C_b the columns of dynamic body b in the (59) layout (world-frame δp,
//! body-frame δθ) and 𝓜_b⁻¹ = diag(1/m, 1/m, 1/m, 1/𝓘₁, 1/𝓘₂, 1/𝓘₃). A group of one
//! equality constraint is exactly the block projection (124); a group of many is the
//! same equation for the whole group, as the block-banded solve of a rod (Section 8.2).
//! C and ∇C are evaluated once per projection, at the current state.
//!
//! # Block-banded structure
//! The rows are packed, in the order the constraints are given, into blocks of 6 rows
//! ([`crate::linalg::banded::BLOCK_SIZE`]): a constraint goes into the current block if its
//! rows fit, otherwise it starts the next block; rows left over at the end of a block
//! are padding (identity rows, Δλ = 0). A revolute or prismatic joint (5 rows) and its
//! limit (1 row), a spherical joint (3) with its swing and twist limits (1 + 1), or a
//! fixed joint (6) each fill one block. Block (I, J) of A is
//!
//! ```text
//! A_IJ = Σ_b J_I,b 𝓜_b⁻¹ J_J,bᵀ      over the dynamic bodies b that blocks I and J share
//! ```
//!
//! (J_I,b: the 6 × 6 gradient of block I's rows with respect to body b), so it is zero
//! unless the blocks share a dynamic body. The block bandwidth p is the largest
//! (last block − first block) over the dynamic bodies. A chain whose joints are given
//! from one end to the other, each followed by its limits, touches every link from
//! two consecutive blocks: p = 1, A is block-tridiagonal, and its Cholesky factor has
//! the same band (no fill outside it). The solve is the in-place block-banded Cholesky
//! of [`crate::linalg::banded::BlockBandedMatrix`]: O(n·p²·6³) flops for n blocks, no
//! allocation (the band is sized when the group is made). Any order is correct; the
//! order only sets p and with it the cost (p = n − 1 is a dense Cholesky). Fixed bodies
//! have 𝓜⁻¹ = 0: they couple nothing and do not widen the band.
//!
//! # Inequality rows: the active set
//! A row with bounds lo ≤ λ ≤ hi ([`crate::xpbd::Constraint::lambda_bounds`]; a limit
//! has [0, ∞), a motor ±its largest impulse) takes part through an active set, found
//! anew at every projection. Each bounded row is either **free** (solved for) or
//! **clamped** (its Δλ held so that λ + Δλ is at a bound). With b = −C − α̃λ, a row
//! starts free if lo < λ < hi (it pushes already, and may push more or less), or if
//! λ = lo and b > 0, or λ = hi and b < 0 (it is violated: its own step would move λ into
//! the range; for a limit with λ = 0, "the limit is violated"); otherwise it starts
//! clamped with Δλ = 0. Equality rows are always free; a row with lo = hi is always
//! clamped. The free rows F are solved with the clamped rows K held at their Δλ_K:
//!
//! ```text
//! A_FF Δλ_F = −C_F − α̃_F λ_F − ∇C_F 𝓜⁻¹ ∇C_Kᵀ Δλ_K
//! ```
//!
//! (assembled as the full system with the rows and columns of K replaced by identity
//! rows and their effect moved to the right-hand side). The linearised problem is a
//! box-constrained linear complementarity problem: find Δλ with every λ + Δλ in
//! [lo, hi] and the linearised residual w = b − α̃Δλ − ∇C Δx (Δx = 𝓜⁻¹∇CᵀΔλ) zero on
//! free rows, ≤ 0 at lo and ≥ 0 at hi. After each solve the infeasible rows are those
//! that break this: a free row with λ + Δλ outside [lo, hi], or a clamped row whose w
//! would push λ past its bound (w > 0 at lo, w < 0 at hi). They are flipped — a free
//! row is clamped at the bound it crosses (Δλ = bound − λ, so λ stays on its side of
//! zero), a clamped row is freed — and the system is solved again, until none is
//! left. This is block principal pivoting (Júdice and Pires, Computers & Operations
//! Research 21, 1994): all infeasible rows are flipped at once while their number
//! falls, and after three solves without a new smallest number only the first
//! infeasible row in row order is flipped (Murty's least-index rule), which ends after
//! finitely many solves because the matrix of the bounded rows once the equality rows
//! are eliminated (the Schur complement of the equality rows in A) is positive
//! definite, hence a P-matrix. Flipping only the rows whose λ would cross zero is not
//! enough: a violated limit that the others' step would satisfy first gets a negative
//! λ, and then its own linearised residual asks for it again, without end.
//!
//! As a safeguard, a projection that has not settled after 8·(bounded rows + 1)
//! solves clamps every free row that crosses a bound and solves again until none does
//! (rows then only leave the free set), so λ always ends within its bounds
//! ([`DirectGroupStats::active_set_capped`] counts these). Rows clamped in one
//! projection are examined again in the next, with the new C and λ. With the chain of
//! the tests the active set changes in about one projection in two: 1.7 solves per
//! projection on average ([`DirectGroupStats`] counts them).
//!
//! # Singular systems
//! A is symmetric positive semi-definite, and definite when every free row is compliant
//! (α̃ > 0) or the free rows' gradients are linearly independent. Redundant rows (the
//! same joint twice, a closed loop whose rows are dependent) make it singular, and the
//! Cholesky meets a pivot ≤ 64ε·A_jj ([`crate::linalg::banded::BandedError::NotPositiveDefinite`]).
//! The projection then assembles again with the diagonal of the free rows multiplied by
//! (1 + ε_r), ε_r = 1024ε (2.3e-13, with the ε of f64, in which the system is solved:
//! see precision), and, if that fails too, with ε_r = √ε (1.5e-8), and factors again. For a semi-definite A,
//! A + ε_r·diag(A) is definite (every Schur complement is at least ε_r·A_jj, above the
//! 64ε threshold). Only the matrix changes, not the right-hand side, so the fixed point
//! of the iterations, C + α̃λ = 0, is the same: the step is a Levenberg–Marquardt-damped
//! Newton step, shortened along the (near-)null directions of A. Redundant rows
//! together carry the λ one of them would carry alone; how it is split between them
//! (the null space of A) is left to rounding. A free row with a zero diagonal (its gradient is zero on every dynamic
//! body and it is hard) cannot be moved and is left out (Δλ = 0).
//!
//! Not damped: a system that is only nearly singular, with every pivot above that
//! threshold. A chain of hard joints pinned at both ends at exactly its length, under
//! gravity, is one: its rows have no solution, and as the chain leaves the straight
//! line by an angle φ, the pivot of its lengthwise rows is O(φ²)·A_jj, so the Newton
//! step grows like 1/φ². The direct projection then overshoots and the joints come
//! apart: a 3-link chain of spherical joints from the world to a fixed body, Δt = 1 ms,
//! one iteration, had its hard rows violated by up to 2.9e2 (m or rad) within 0.5 s
//! and gained 1.4e11 J, where Gauss–Seidel projections kept the constraint residual
//! below 1.2e-4.
//!
//! If neither regularised matrix can be factored, or an entry of A, the right-hand side
//! or Δλ is not finite (NaN or infinite C, ∇C or state), the projection changes
//! nothing: bodies and λ stay as they were, [`DirectGroupStats::failed`] counts it, and
//! [`World::step`] returns [`XpbdError::DirectSolveFailed`]. A group never writes NaN
//! into the state and never panics.
//!
//! # Precision
//! The system is assembled, factored and solved in f64 whatever the scalar type `T`:
//! the gradients, masses and compliances are widened (their f32 products are exact in
//! f64), and only Δλ is rounded back to `T`. The forward error of a Cholesky solve grows
//! with cond(A), and for the 1 kg / 1000 kg chain cond(A) ≈ 9e8 (same study), beyond
//! 1/ε of f32 (8.4e6): solved in f32, the factorisation needed the regularisation in
//! about half of the projections and the heavy links' directions were resolved only
//! roughly (the chain's limits held to 3.4e-2 rad; solved in f64, to 1.0e-4 rad). In f64 the matrix is the exact
//! J𝓜⁻¹Jᵀ of the f32-rounded gradients, and the rounding of C, ∇C and Δλ to f32 only
//! perturbs the linearisation being solved, not its solution
//! (`tests/joint/chain_direct.rs`). For `T` = f64 nothing is converted.
//!
//! # In the substep
//! Direct groups are projected in every iteration after the [`crate::xpbd::System`]s
//! and before the constraints that are not in a group (which are projected by
//! Gauss–Seidel as before). Grouped constraints keep everything else of a world
//! constraint: [`crate::xpbd::Constraint::begin_substep`] and `end_substep`, their
//! [`World::lambda`], the residuals (51)–(52), breaking (a broken constraint's rows
//! become identity rows) and the velocity-level damping pass, which treats them as it
//! treats every constraint (one Gauss–Seidel sweep, [`World::solve_velocities`]).

use super::{ConstraintId, Slot, World};
use crate::lie::{LieGroup, Real};
use crate::linalg::banded::{BlockBandedMatrix, BLOCK_SIZE};
use crate::xpbd::body::Body;
use crate::xpbd::constraint::{ConstraintEval, MAX_BODIES};
use crate::xpbd::error::XpbdError;
use nalgebra::{SMatrix, SVector};
use std::ops::Range;

mod solve;

const B: usize = BLOCK_SIZE;

/// Index of a direct group in a [`World`] ([`World::add_direct_group`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DirectGroupId(pub usize);

/// Shape of a direct group and counters of its solves since it was made (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DirectGroupStats {
    /// Scalar rows of the group's constraints, m.
    pub rows: usize,
    /// Rows that have λ bounds (inequality rows: limits, motors).
    pub bounded_rows: usize,
    /// Blocks of 6 rows the rows are packed into, n.
    pub blocks: usize,
    /// Block bandwidth p of the system (1: block-tridiagonal).
    pub bandwidth: usize,
    /// Projections (one per iteration of every substep).
    pub projections: u64,
    /// Linear solves (assembly, factorisation, substitution) over all projections
    /// (≥ `projections`: one more per change of the active set; a regularised retry
    /// is counted in `regularized`, not here).
    pub solves: u64,
    /// Solves in the last projection (1 when the active set did not change).
    pub last_solves: usize,
    /// Bounded rows that were free (pushing) at the end of the last projection.
    pub last_active_bounded: usize,
    /// Solves whose matrix was singular and were repeated with the regularised diagonal
    /// (module docs: singular systems).
    pub regularized: u64,
    /// Projections that changed nothing because no finite solution was found.
    pub failed: u64,
    /// Projections whose active set was not settled within
    /// `ACTIVE_SET_SOLVES_PER_ROW`·(bounded rows + 1) solves and were finished by the
    /// safeguard (module docs: the active set).
    pub active_set_capped: u64,
}

/// Solves per bounded row (plus one) after which a projection stops pivoting and
/// finishes with the safeguard (module docs: the active set).
const ACTIVE_SET_SOLVES_PER_ROW: usize = 8;

/// Solves with all infeasible rows flipped that may pass without reducing their number
/// before the pivoting flips one row at a time (Júdice and Pires' p̄ = 3).
const MAX_STALLED: usize = 3;

/// First regularisation ε_r of a singular system, in units of the machine epsilon ε
/// (module docs: singular systems); the second is √ε.
const REGULARIZATION_FIRST: f64 = 1024.0;

/// A row's part in the current projection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowState {
    /// Padding, a disabled (broken) constraint, or a degenerate row: Δλ = 0, identity row.
    Out,
    /// Solved for.
    Free,
    /// Held at its Δλ (a bounded row at a bound): identity row, effect on the right side.
    Clamped,
}

/// One constraint of a group.
#[derive(Debug, Clone, Copy)]
struct Member {
    /// Index of its slot in the world.
    slot: usize,
    /// Its rows.
    dim: usize,
    /// Packed index of its first row: block·6 + offset in the block.
    first: usize,
    /// Per body slot: (group body, incidence) of a dynamic body, `None` for the world or
    /// a fixed body.
    body: [Option<(usize, usize)>; MAX_BODIES],
    /// Whether some row has λ bounds.
    bounded: bool,
}

/// A dynamic body of a group and the incidences (its blocks) it appears in.
#[derive(Debug, Clone)]
struct GroupBody {
    /// World index.
    body: usize,
    /// Indices into `incidence_block`, blocks ascending.
    incidences: Range<usize>,
}

/// The state of one direct group: its members and every buffer of its solve, all sized
/// when it is made.
pub(super) struct DirectGroup<T: Real> {
    ids: Vec<ConstraintId>,
    members: Vec<Member>,
    bodies: Vec<GroupBody>,
    /// Block of each (block, dynamic body) incidence.
    incidence_block: Vec<usize>,
    /// C and ∇C of each member.
    evals: Vec<ConstraintEval<T>>,
    /// Per incidence: the free rows of its block with respect to its body (6 × 6, rows
    /// that are not free are zero), widened to f64 (module docs: precision).
    jac: Vec<SMatrix<f64, B, 6>>,
    matrix: BlockBandedMatrix<f64>,
    /// Right-hand side in, Δλ of the free rows out (6n), in f64.
    rhs: Vec<f64>,
    state: Vec<RowState>,
    /// Rows marked by [`DirectGroup::mark_infeasible`].
    flip: Vec<bool>,
    /// α̃ = α/h² per packed row.
    alpha: Vec<T>,
    /// b = −C − α̃λ per packed row.
    residual: Vec<T>,
    /// Δλ per packed row.
    dl: Vec<T>,
    /// 𝓜⁻¹ diagonal per group body.
    inv_mass: Vec<SVector<T, 6>>,
    /// Per group body: 𝓜⁻¹∇Cᵀ Δλ of the clamped rows, then of all rows.
    shift: Vec<SVector<T, 6>>,
    stats: DirectGroupStats,
    /// Why the last failed projection failed, until [`World::step`] reports it.
    failure: Option<String>,
}

impl<T: Real> DirectGroup<T> {
    /// Packs the members and sizes every buffer (module docs: block-banded structure).
    fn new<G: LieGroup<T>>(
        ids: &[ConstraintId],
        slots: &[Slot<T, G>],
        bodies: &[Body<T, G>],
    ) -> Result<Self, XpbdError> {
        let mut members = Vec::with_capacity(ids.len());
        // (world body, block, member, body slot) of every dynamic body of every member.
        let mut touches: Vec<(usize, usize, usize, usize)> = Vec::new();
        let (mut block, mut used) = (0usize, 0usize);
        for (m, id) in ids.iter().enumerate() {
            let slot = &slots[id.0];
            if used + slot.dim > B {
                block += 1;
                used = 0;
            }
            for (s, b) in slot.bodies.iter().enumerate() {
                if let Some(b) = *b {
                    if !bodies[b].is_fixed() {
                        touches.push((b, block, m, s));
                    }
                }
            }
            members.push(Member {
                slot: id.0,
                dim: slot.dim,
                first: block * B + used,
                body: [None; MAX_BODIES],
                bounded: slot.bounded,
            });
            used += slot.dim;
        }
        let blocks = block + 1;
        touches.sort_unstable();
        let mut group_bodies: Vec<GroupBody> = Vec::new();
        let mut incidence_block: Vec<usize> = Vec::new();
        let mut bandwidth = 0;
        for &(b, blk, m, s) in &touches {
            let new_body = group_bodies.last().is_none_or(|g| g.body != b);
            if new_body {
                let start = incidence_block.len();
                group_bodies.push(GroupBody {
                    body: b,
                    incidences: start..start,
                });
            }
            let g = group_bodies.len() - 1;
            let gb = &mut group_bodies[g];
            if gb.incidences.is_empty() || incidence_block[gb.incidences.end - 1] != blk {
                incidence_block.push(blk);
                gb.incidences.end += 1;
            }
            let first_block = incidence_block[gb.incidences.start];
            bandwidth = bandwidth.max(blk - first_block);
            members[m].body[s] = Some((g, gb.incidences.end - 1));
        }
        let matrix =
            BlockBandedMatrix::new(blocks, bandwidth).map_err(|_| XpbdError::InvalidOption {
                name: "direct group",
                value: format!("{} constraints in {blocks} blocks", ids.len()),
                reason: "the group's matrix does not fit in memory",
            })?;
        let rows: usize = members.iter().map(|m| m.dim).sum();
        let bounded_rows = members
            .iter()
            .map(|m| {
                let s = &slots[m.slot];
                (0..s.dim)
                    .filter(|&j| s.lambda_lo[j].is_finite() || s.lambda_hi[j].is_finite())
                    .count()
            })
            .sum();
        let n = blocks * B;
        Ok(Self {
            ids: ids.to_vec(),
            members,
            jac: vec![SMatrix::zeros(); incidence_block.len()],
            incidence_block,
            evals: vec![ConstraintEval::default(); ids.len()],
            matrix,
            rhs: vec![0.0; n],
            state: vec![RowState::Out; n],
            flip: vec![false; n],
            alpha: vec![T::zero(); n],
            residual: vec![T::zero(); n],
            dl: vec![T::zero(); n],
            inv_mass: vec![SVector::zeros(); group_bodies.len()],
            shift: vec![SVector::zeros(); group_bodies.len()],
            bodies: group_bodies,
            stats: DirectGroupStats {
                rows,
                bounded_rows,
                blocks,
                bandwidth,
                ..DirectGroupStats::default()
            },
            failure: None,
        })
    }
}

impl<T: Real, G: LieGroup<T>> World<T, G> {
    /// Groups constraints already in the world into one direct solve (module docs of
    /// [`crate::xpbd::world::direct`]): from now on, each iteration projects all their
    /// rows together with one block-banded Cholesky solve of
    /// `[∇C 𝓜⁻¹ ∇Cᵀ + α̃] Δλ = −C − α̃λ` (inequality rows by an active set), instead of
    /// one constraint after another. Give the constraints in the order of the
    /// structure (a chain from one end to the other, each joint followed by its limits)
    /// for a block-tridiagonal system; any order is correct, the order sets the
    /// bandwidth ([`DirectGroupStats::bandwidth`]) and so the cost. Which bodies are
    /// fixed is read now. Allocates the group's buffers once; the step then allocates
    /// nothing.
    ///
    /// # Errors
    /// [`XpbdError::InvalidOption`] (`direct group`) for an empty list;
    /// [`XpbdError::BadGroupMember`] for an id not in the world, an id given twice, or a
    /// constraint already in a group.
    pub fn add_direct_group(&mut self, ids: &[ConstraintId]) -> Result<DirectGroupId, XpbdError> {
        if ids.is_empty() {
            return Err(XpbdError::InvalidOption {
                name: "direct group",
                value: "[]".into(),
                reason: "a direct group needs at least one constraint",
            });
        }
        for (i, id) in ids.iter().enumerate() {
            let bad = |reason| XpbdError::BadGroupMember {
                index: i,
                constraint: id.0,
                reason,
            };
            let Some(slot) = self.slots.get(id.0) else {
                return Err(bad("no such constraint in the world"));
            };
            if ids[..i].contains(id) {
                return Err(bad("given twice"));
            }
            if slot.group.is_some() {
                return Err(bad("already in a direct group"));
            }
        }
        let group = DirectGroup::new(ids, &self.slots, &self.bodies)?;
        let g = self.direct.len();
        for id in ids {
            self.slots[id.0].group = Some(g);
            self.movers_stale = true;
        }
        self.direct.push(group);
        Ok(DirectGroupId(g))
    }

    /// Number of direct groups.
    pub fn direct_group_count(&self) -> usize {
        self.direct.len()
    }

    /// The constraints of direct group `id`, in their order in its system, or `None`
    /// for an unknown id.
    pub fn direct_group_members(&self, id: DirectGroupId) -> Option<&[ConstraintId]> {
        self.direct.get(id.0).map(|g| g.ids.as_slice())
    }

    /// Shape and solve counters of direct group `id`, or `None` for an unknown id.
    pub fn direct_group_stats(&self, id: DirectGroupId) -> Option<&DirectGroupStats> {
        self.direct.get(id.0).map(|g| &g.stats)
    }

    /// One projection of every direct group, in order.
    pub(super) fn project_direct_groups(&mut self, inv_h2: T) {
        for g in &mut self.direct {
            g.project(&mut self.slots, &mut self.bodies, inv_h2);
        }
    }

    /// The first failure of a direct group since the last call, as the error
    /// [`World::step`] returns, with the step's end time `time` (s).
    pub(super) fn take_direct_failure(&mut self, time: f64) -> Option<XpbdError> {
        self.direct.iter_mut().enumerate().find_map(|(g, d)| {
            d.failure.take().map(|reason| XpbdError::DirectSolveFailed {
                time,
                group: g,
                reason,
            })
        })
    }
}
