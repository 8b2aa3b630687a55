//! The velocity-level damping pass of a [`World`] (paper Section 4.4, (60)–(66);
//! Algorithm 1, lines 11–14), run after each substep's velocity update.

use super::{cholesky_solve_in_place, SolveMode, World};
use crate::lie::{LieGroup, Real};
use crate::xpbd::constraint::{MAX_BODIES, MAX_ROWS};
use nalgebra::{SMatrix, SVector, Vector3};

impl<T: Real, G: LieGroup<T>> World<T, G> {
    /// The velocity-level damping pass (paper Section 4.4, (60)–(66); Algorithm 1 lines
    /// 11–14), run by [`World::substep`] after the velocity update; public so that a
    /// custom loop (or a test) can run it on its own. See the module docs of
    /// [`crate::xpbd`] for the derivation.
    ///
    /// Every [`System`](crate::xpbd::System)'s own damping solve
    /// ([`System::solve_velocities`](crate::xpbd::System::solve_velocities)) runs first
    /// (Algorithm 1 line 12, rods before joints).
    ///
    /// One Gauss–Seidel sweep over the constraints with a damped row (b > 0 and α > 0,
    /// see [`Constraint::damping`](crate::xpbd::Constraint::damping); hard and undamped rows are skipped), each solved, in
    /// the world's [`SolveMode`] like the position solve, for the multipliers μ of the
    /// backward-Euler damping step with β̃ = h·b/α:
    ///
    /// * rows: `Δμⱼ = −∇Cⱼ v / (∇Cⱼ 𝓜⁻¹ ∇Cⱼᵀ + β̃ⱼ⁻¹)`, one row after another;
    /// * block: `[∇C 𝓜⁻¹ ∇Cᵀ + β̃⁻¹] Δμ = −∇C v` over the damped rows at once;
    ///
    /// then `v ← v + 𝓜⁻¹ ∇Cᵀ Δμ`, with v = (v world, ω body frame) per body and ∇C at
    /// the end-of-substep poses (evaluated once per constraint: this pass moves no
    /// body). Inequality rows ([`Constraint::lambda_bounds`](crate::xpbd::Constraint::lambda_bounds)) are damped only if they
    /// pushed in the position solve (λ ≠ 0) and their μ is clamped to the bounds of λ,
    /// so a contact or limit is never made to pull. Each projection lowers the kinetic
    /// energy by `Δμᵀ(½∇C𝓜⁻¹∇Cᵀ + β̃⁻¹)Δμ ≥ 0`: damping never adds energy. Does
    /// nothing, and changes no bit, in a world without damped rows.
    pub fn solve_velocities(&mut self) {
        let h = self.options.substep_dt();
        self.systems_solve_velocities(h);
        for k in 0..self.slots.len() {
            if !(self.slots[k].damped && self.slots[k].enabled) {
                continue;
            }
            let block = self.options.solve_mode == SolveMode::Block
                && !self.slots[k].bounded
                && self.slots[k].as_block;
            self.evaluate(k);
            if !(block && self.damp_block(k, h)) {
                self.damp_rows(k, h);
            }
        }
    }

    /// The 6-vector (v world, ω body frame) of a body, matching the (59) columns.
    fn velocity6(&self, b: usize) -> SVector<T, 6> {
        let body = &self.bodies[b];
        let (v, w) = (body.velocity, body.angular_velocity);
        SVector::<T, 6>::from([v.x, v.y, v.z, w.x, w.y, w.z])
    }

    /// v ← v + 𝓜⁻¹ g (66), g a generalized impulse ∇CᵀΔμ in the (59) layout.
    fn apply_velocity(&mut self, b: usize, w: &SVector<T, 6>, g: &SVector<T, 6>) {
        let d = g.component_mul(w);
        let body = &mut self.bodies[b];
        body.velocity += Vector3::new(d[0], d[1], d[2]);
        body.angular_velocity += Vector3::new(d[3], d[4], d[5]);
    }

    /// β̃⁻¹ = α/(h b) of row j of slot k, or `None` if the row is not damped now (hard,
    /// undamped, or an inequality row that did not push in the position solve).
    fn inv_beta_tilde(&self, k: usize, j: usize, h: T) -> Option<T> {
        let slot = &self.slots[k];
        let b = slot.damping[j];
        if b == T::zero() || (slot.bounded && slot.lambda[j] == T::zero()) {
            return None;
        }
        Some(slot.compliance[j] / (h * b))
    }

    /// Row-by-row velocity projections (65)–(66) of slot `k` (already evaluated).
    fn damp_rows(&mut self, k: usize, h: T) {
        let dim = self.slots[k].dim;
        let masses = [self.inv_mass_diag(k, 0), self.inv_mass_diag(k, 1)];
        for j in 0..dim {
            let Some(inv_beta) = self.inv_beta_tilde(k, j, h) else {
                continue;
            };
            let mut denom = inv_beta;
            let mut rate = T::zero();
            let mut rows = [SVector::<T, 6>::zeros(); MAX_BODIES];
            for (s, m) in masses.iter().enumerate() {
                if let Some((b, w)) = m {
                    rows[s] = self.eval.gradient[s].row(j).transpose();
                    denom += rows[s].component_mul(w).dot(&rows[s]);
                    rate += rows[s].dot(&self.velocity6(*b));
                }
            }
            if denom <= T::zero() {
                continue;
            }
            // μ starts at 0 and each row is solved once, so −β̃⁻¹μᵏ of (65) is 0.
            let slot = &self.slots[k];
            let dmu = (-rate / denom)
                .max(slot.lambda_lo[j])
                .min(slot.lambda_hi[j]);
            for (s, m) in masses.iter().enumerate() {
                if let Some((b, w)) = m {
                    self.apply_velocity(*b, w, &(rows[s] * dmu));
                }
            }
        }
    }

    /// Block velocity projection (65)–(66) over the damped rows of slot `k` (already
    /// evaluated). Returns false if the system was not positive definite, in which case
    /// nothing was changed.
    fn damp_block(&mut self, k: usize, h: T) -> bool {
        let masses = [self.inv_mass_diag(k, 0), self.inv_mass_diag(k, 1)];
        // The damped rows, packed: idx[..m] are their row numbers.
        let mut idx = [0usize; MAX_ROWS];
        let mut inv_beta = SVector::<T, MAX_ROWS>::zeros();
        let mut m = 0;
        for j in 0..self.slots[k].dim {
            if let Some(ib) = self.inv_beta_tilde(k, j, h) {
                idx[m] = j;
                inv_beta[m] = ib;
                m += 1;
            }
        }
        // A = Σ_b ∇C_b 𝓜_b⁻¹ ∇C_bᵀ + β̃⁻¹ (lower triangle) and rhs = −∇C v.
        let mut a = SMatrix::<T, MAX_ROWS, MAX_ROWS>::zeros();
        let mut dmu = SVector::<T, MAX_ROWS>::zeros();
        for (s, mass) in masses.iter().enumerate() {
            if let Some((b, w)) = mass {
                let g = &self.eval.gradient[s];
                let v = self.velocity6(*b);
                for i in 0..m {
                    for j in 0..=i {
                        let mut acc = T::zero();
                        for c in 0..6 {
                            acc += g[(idx[i], c)] * w[c] * g[(idx[j], c)];
                        }
                        a[(i, j)] += acc;
                    }
                    dmu[i] -= g.row(idx[i]).transpose().dot(&v);
                }
            }
        }
        for i in 0..m {
            a[(i, i)] += inv_beta[i];
        }
        if !cholesky_solve_in_place(&mut a, &mut dmu, m) {
            return false;
        }
        for (s, mass) in masses.iter().enumerate() {
            if let Some((b, w)) = mass {
                let g = &self.eval.gradient[s];
                let mut imp = SVector::<T, 6>::zeros();
                for i in 0..m {
                    imp += g.row(idx[i]).transpose() * dmu[i];
                }
                self.apply_velocity(*b, w, &imp);
            }
        }
        true
    }
}
