//! The projection of a [`super::DirectGroup`]: evaluation, the block principal pivoting
//! over the bounded rows, the assembly of the block-banded system, and the update of
//! the bodies and λ (module docs of [`super`]).

use super::{
    DirectGroup, RowState, ACTIVE_SET_SOLVES_PER_ROW, B, MAX_STALLED, REGULARIZATION_FIRST,
};
use crate::lie::real::c;
use crate::lie::{LieGroup, Real};
use crate::linalg::banded::BandedError;
use crate::xpbd::body::Body;
use crate::xpbd::world::Slot;
use nalgebra::{SVector, Vector3};

impl<T: Real> DirectGroup<T> {
    /// One projection of the group (module docs): evaluate, then solve with the active
    /// set, then move the bodies and update λ. Changes nothing if no finite solution is
    /// found.
    pub(super) fn project<G: LieGroup<T>>(
        &mut self,
        slots: &mut [Slot<T, G>],
        bodies: &mut [Body<T, G>],
        inv_h2: T,
    ) {
        self.stats.projections += 1;
        self.state.fill(RowState::Out);
        self.dl.fill(T::zero());
        for (m, mem) in self.members.iter().enumerate() {
            let slot = &slots[mem.slot];
            if !slot.enabled {
                continue;
            }
            let eval = &mut self.evals[m];
            if !slot.overwrites {
                eval.clear();
            }
            slot.constraint.evaluate(bodies, eval);
            for j in 0..mem.dim {
                let r = mem.first + j;
                let alpha = slot.compliance[j] * inv_h2;
                let lambda = slot.lambda[j];
                let b = -eval.value[j] - alpha * lambda;
                self.alpha[r] = alpha;
                self.residual[r] = b;
                let (lo, hi) = (slot.lambda_lo[j], slot.lambda_hi[j]);
                let free = lo < hi
                    && ((lambda > lo && lambda < hi)
                        || (lambda <= lo && b > T::zero())
                        || (lambda >= hi && b < T::zero()));
                self.state[r] = if free || !mem.bounded {
                    RowState::Free
                } else {
                    RowState::Clamped
                };
            }
        }
        for (gb, w) in self.bodies.iter().zip(self.inv_mass.iter_mut()) {
            *w = bodies[gb.body].inv_mass_diag();
        }
        let mut solves = 0;
        let fail = |group: &mut Self, solves: usize, e: BandedError| {
            group.stats.solves += solves as u64;
            group.stats.last_solves = solves;
            group.stats.failed += 1;
            if group.failure.is_none() {
                group.failure = Some(e.to_string());
            }
        };
        // Block principal pivoting (module docs): flip every infeasible row while their
        // number falls (or for MAX_STALLED solves without a new best), then one at a
        // time, the first in row order (Murty's rule).
        let cap = ACTIVE_SET_SOLVES_PER_ROW * (self.stats.bounded_rows + 1);
        let (mut best, mut stalled) = (usize::MAX, 0);
        let mut converged = false;
        while solves < cap {
            solves += 1;
            if let Err(e) = self.solve_free() {
                fail(self, solves, e);
                return;
            }
            let infeasible = self.mark_infeasible(slots);
            if infeasible == 0 {
                converged = true;
                break;
            }
            let all = if infeasible < best {
                best = infeasible;
                stalled = 0;
                true
            } else {
                stalled += 1;
                stalled <= MAX_STALLED
            };
            self.flip(slots, all);
        }
        if !converged {
            // Safeguard: keep every λ within its bounds by clamping the free rows that
            // cross them, solving again until none does (rows only leave the free set,
            // so at most bounded_rows + 1 solves).
            self.stats.active_set_capped += 1;
            loop {
                solves += 1;
                if let Err(e) = self.solve_free() {
                    fail(self, solves, e);
                    return;
                }
                if !self.clamp_crossings(slots) {
                    break;
                }
            }
        }
        self.stats.solves += solves as u64;
        self.stats.last_solves = solves;
        self.apply(slots, bodies);
    }

    /// Whether bounded row j of `slot` is at a bound on both sides (lo = hi): its λ is
    /// fixed and it never becomes free.
    #[inline]
    fn pinned<G: LieGroup<T>>(slot: &Slot<T, G>, j: usize) -> bool {
        slot.lambda_lo[j] >= slot.lambda_hi[j]
    }

    /// Marks in `flip` the bounded rows whose state contradicts the solution just found
    /// and returns their number: a free row whose λ + Δλ is outside [lo, hi], or a
    /// clamped row whose linearised residual w = b − α̃Δλ − ∇C Δx would push λ past the
    /// bound it is at (w > 0 at lo, w < 0 at hi).
    fn mark_infeasible<G: LieGroup<T>>(&mut self, slots: &[Slot<T, G>]) -> usize {
        self.flip.fill(false);
        if self.stats.bounded_rows == 0 {
            return 0;
        }
        self.total_shift();
        let mut count = 0;
        for (m, mem) in self.members.iter().enumerate() {
            if !mem.bounded {
                continue;
            }
            let slot = &slots[mem.slot];
            for j in 0..mem.dim {
                let r = mem.first + j;
                if Self::pinned(slot, j) {
                    continue;
                }
                let (lo, hi) = (slot.lambda_lo[j], slot.lambda_hi[j]);
                let at = slot.lambda[j] + self.dl[r];
                let bad = match self.state[r] {
                    RowState::Out => false,
                    RowState::Free => at < lo || at > hi,
                    RowState::Clamped => {
                        let mut rate = T::zero();
                        for (s, body) in mem.body.iter().enumerate() {
                            if let Some((g, _)) = *body {
                                rate += self.evals[m].gradient[s]
                                    .row(j)
                                    .transpose()
                                    .dot(&self.shift[g]);
                            }
                        }
                        let w = self.residual[r] - self.alpha[r] * self.dl[r] - rate;
                        (at <= lo && w > T::zero()) || (at >= hi && w < T::zero())
                    }
                };
                if bad {
                    self.flip[r] = true;
                    count += 1;
                }
            }
        }
        count
    }

    /// Flips the rows marked by [`Self::mark_infeasible`] (all of them, or only the
    /// first in row order): a free row is clamped at the bound it crosses
    /// (Δλ = bound − λ), a clamped row is freed.
    fn flip<G: LieGroup<T>>(&mut self, slots: &[Slot<T, G>], all: bool) {
        for mem in &self.members {
            let slot = &slots[mem.slot];
            for j in 0..mem.dim {
                let r = mem.first + j;
                if !self.flip[r] {
                    continue;
                }
                if self.state[r] == RowState::Free {
                    let lambda = slot.lambda[j];
                    let bound = if lambda + self.dl[r] < slot.lambda_lo[j] {
                        slot.lambda_lo[j]
                    } else {
                        slot.lambda_hi[j]
                    };
                    self.dl[r] = bound - lambda;
                    self.state[r] = RowState::Clamped;
                } else {
                    self.state[r] = RowState::Free;
                }
                if !all {
                    return;
                }
            }
        }
    }

    /// Clamps every free bounded row whose λ + Δλ leaves its bounds at the bound it
    /// crosses; returns whether any was.
    fn clamp_crossings<G: LieGroup<T>>(&mut self, slots: &[Slot<T, G>]) -> bool {
        let mut changed = false;
        for mem in self.members.iter().filter(|m| m.bounded) {
            let slot = &slots[mem.slot];
            for j in 0..mem.dim {
                let r = mem.first + j;
                if self.state[r] != RowState::Free {
                    continue;
                }
                let lambda = slot.lambda[j];
                let new = lambda + self.dl[r];
                let (lo, hi) = (slot.lambda_lo[j], slot.lambda_hi[j]);
                if new < lo || new > hi {
                    let bound = if new < lo { lo } else { hi };
                    self.dl[r] = bound - lambda;
                    self.state[r] = RowState::Clamped;
                    changed = true;
                }
            }
        }
        changed
    }

    /// `shift` = 𝓜⁻¹∇Cᵀ Δλ per group body, over all rows.
    fn total_shift(&mut self) {
        self.shift.fill(SVector::zeros());
        for (m, mem) in self.members.iter().enumerate() {
            for (s, body) in mem.body.iter().enumerate() {
                let Some((g, _)) = *body else { continue };
                for j in 0..mem.dim {
                    let dl = self.dl[mem.first + j];
                    if dl != T::zero() {
                        self.shift[g] += self.evals[m].gradient[s].row(j).transpose() * dl;
                    }
                }
            }
        }
        for (d, w) in self.shift.iter_mut().zip(&self.inv_mass) {
            d.component_mul_assign(w);
        }
    }

    /// Solves for Δλ of the free rows with the clamped rows held at their Δλ; on a
    /// singular matrix, once more with the regularised diagonal (module docs).
    fn solve_free(&mut self) -> Result<(), BandedError> {
        self.clamped_shift();
        self.assemble(0.0)?;
        if let Err(e) = self.matrix.factor() {
            if !matches!(e, BandedError::NotPositiveDefinite { .. }) {
                return Err(e);
            }
            self.stats.regularized += 1;
            let eps = f64::EPSILON;
            self.assemble(eps * REGULARIZATION_FIRST)?;
            if let Err(e) = self.matrix.factor() {
                if !matches!(e, BandedError::NotPositiveDefinite { .. }) {
                    return Err(e);
                }
                self.assemble(eps.sqrt())?;
                self.matrix.factor()?;
            }
        }
        self.right_hand_side();
        self.matrix.solve_in_place(&mut self.rhs)?;
        for (r, s) in self.state.iter().enumerate() {
            if *s == RowState::Free {
                // Finite in f64 but beyond the range of T (f32) is not finite either.
                let dl = c::<T>(self.rhs[r]);
                if !dl.is_finite() {
                    return Err(BandedError::NonFiniteVector {
                        what: "solution",
                        index: r,
                    });
                }
                self.dl[r] = dl;
            }
        }
        Ok(())
    }

    /// `shift` = 𝓜⁻¹∇C_Kᵀ Δλ_K per group body, over the clamped rows K.
    fn clamped_shift(&mut self) {
        self.shift.fill(SVector::zeros());
        for (m, mem) in self.members.iter().enumerate() {
            for (s, body) in mem.body.iter().enumerate() {
                let Some((g, _)) = *body else { continue };
                for j in 0..mem.dim {
                    let r = mem.first + j;
                    if self.state[r] == RowState::Clamped && self.dl[r] != T::zero() {
                        self.shift[g] += self.evals[m].gradient[s].row(j).transpose() * self.dl[r];
                    }
                }
            }
        }
        for (d, w) in self.shift.iter_mut().zip(&self.inv_mass) {
            d.component_mul_assign(w);
        }
    }

    /// Assembles A over the free rows (identity rows for the others), the diagonal of
    /// the free rows multiplied by 1 + `regularization`; marks free rows with a zero
    /// diagonal as out.
    fn assemble(&mut self, regularization: f64) -> Result<(), BandedError> {
        // Every row of an incidence that belongs to a member touching its body is
        // written here; the others (padding, members of the block on other bodies)
        // stay zero from construction.
        for (m, mem) in self.members.iter().enumerate() {
            let off = mem.first % B;
            for (s, body) in mem.body.iter().enumerate() {
                let Some((_, i)) = *body else { continue };
                for j in 0..mem.dim {
                    let mut row = self.jac[i].row_mut(off + j);
                    if self.state[mem.first + j] == RowState::Free {
                        let g = &self.evals[m].gradient[s];
                        for k in 0..6 {
                            row[k] = g[(j, k)].to_f64();
                        }
                    } else {
                        row.fill(0.0);
                    }
                }
            }
        }
        self.matrix.reset();
        for (gb, w) in self.bodies.iter().zip(&self.inv_mass) {
            for a in gb.incidences.clone() {
                // J_a 𝓜⁻¹, then its products with J_b for the blocks b ≤ a of the body.
                let mut jw = self.jac[a];
                for (mut col, wc) in jw.column_iter_mut().zip(w.iter()) {
                    col *= wc.to_f64();
                }
                for b in gb.incidences.start..=a {
                    let block = jw * self.jac[b].transpose();
                    self.matrix.add_block(
                        self.incidence_block[a],
                        self.incidence_block[b],
                        &block,
                    )?;
                }
            }
        }
        let one_plus = 1.0 + regularization;
        for blk in 0..self.stats.blocks {
            let current = self.matrix.block(blk, blk)?;
            let mut diagonal = SVector::<f64, B>::zeros();
            for k in 0..B {
                let r = blk * B + k;
                diagonal[k] = if self.state[r] == RowState::Free {
                    let d = current[(k, k)] * one_plus + self.alpha[r].to_f64();
                    if d > 0.0 {
                        d
                    } else if d == 0.0 {
                        // Nothing can move this row (module docs): leave it out.
                        self.state[r] = RowState::Out;
                        1.0
                    } else {
                        // Negative or NaN: let the factorisation reject it.
                        d
                    }
                } else {
                    1.0
                };
            }
            self.matrix.set_diagonal(blk, &diagonal)?;
        }
        Ok(())
    }

    /// rhs = −C − α̃λ − ∇C 𝓜⁻¹∇C_Kᵀ Δλ_K on the free rows, 0 on the others.
    fn right_hand_side(&mut self) {
        for (r, x) in self.rhs.iter_mut().enumerate() {
            *x = if self.state[r] == RowState::Free {
                self.residual[r].to_f64()
            } else {
                0.0
            };
        }
        for (gb, d) in self.bodies.iter().zip(&self.shift) {
            if *d == SVector::<T, 6>::zeros() {
                continue;
            }
            let d = d.map(|x| x.to_f64());
            for a in gb.incidences.clone() {
                let blk = self.incidence_block[a];
                let jd = self.jac[a] * d;
                for k in 0..B {
                    self.rhs[blk * B + k] -= jd[k];
                }
            }
        }
    }

    /// λ ← λ + Δλ and Δx_b = 𝓜_b⁻¹ ∇C_bᵀ Δλ over all rows (57)–(58).
    fn apply<G: LieGroup<T>>(&mut self, slots: &mut [Slot<T, G>], bodies: &mut [Body<T, G>]) {
        let mut active = 0;
        for mem in &self.members {
            let lambda = &mut slots[mem.slot].lambda;
            for j in 0..mem.dim {
                let r = mem.first + j;
                lambda[j] += self.dl[r];
                if mem.bounded && self.state[r] == RowState::Free {
                    active += 1;
                }
            }
        }
        self.stats.last_active_bounded = active;
        self.total_shift();
        for (gb, d) in self.bodies.iter().zip(&self.shift) {
            bodies[gb.body].apply_correction(
                &Vector3::new(d[0], d[1], d[2]),
                &Vector3::new(d[3], d[4], d[5]),
            );
        }
    }
}
