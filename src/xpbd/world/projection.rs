//! The per-constraint projections of a [`World`]: scalar rows (56) and the dense block
//! (124) with its fixed-size LDLᵀ solve.

use super::{GradientLayout, World};
use crate::lie::{LieGroup, Real};
use crate::xpbd::constraint::{MAX_BODIES, MAX_ROWS};
use nalgebra::{SVector, Vector3};

impl<T: Real, G: LieGroup<T>> World<T, G> {
    /// 𝓜⁻¹ diagonal of body slot `s` of constraint `k` (zero for world/fixed).
    pub(super) fn inv_mass_diag(&self, k: usize, s: usize) -> Option<(usize, SVector<T, 6>)> {
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
    pub(super) fn project_rows(&mut self, k: usize, inv_h2: T) {
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
    pub(super) fn project_block(&mut self, k: usize, inv_h2: T) -> bool {
        let masses = [self.inv_mass_diag(k, 0), self.inv_mass_diag(k, 1)];
        if masses.iter().all(|m| m.is_none()) {
            return true;
        }
        self.evaluate(k);
        debug_assert!(
            self.layout_holds(k),
            "'{}' wrote gradient blocks that do not have its declared layout {:?}",
            self.slots[k].constraint.name(),
            self.slots[k].layout
        );
        // One copy of the solve per row count and layout of the position columns
        // ([`GradientLayout`]), so that every loop below has constant bounds (unrolled,
        // no bounds checks) and known zeros are skipped.
        use GradientLayout::{LeadingPosition as Lead, UnitPosition as Unit};
        match (self.slots[k].dim, self.slots[k].layout) {
            (3, Unit { rows: 3 }) => self.project_block_n::<3, 3, true>(k, inv_h2, &masses),
            (5, Unit { rows: 3 }) => self.project_block_n::<5, 3, true>(k, inv_h2, &masses),
            (6, Unit { rows: 3 }) => self.project_block_n::<6, 3, true>(k, inv_h2, &masses),
            (5, Lead { rows: 2 }) => self.project_block_n::<5, 2, false>(k, inv_h2, &masses),
            (6, Lead { rows: 3 }) => self.project_block_n::<6, 3, false>(k, inv_h2, &masses),
            (1, _) => self.project_block_n::<1, 1, false>(k, inv_h2, &masses),
            (2, _) => self.project_block_n::<2, 2, false>(k, inv_h2, &masses),
            (3, _) => self.project_block_n::<3, 3, false>(k, inv_h2, &masses),
            (4, _) => self.project_block_n::<4, 4, false>(k, inv_h2, &masses),
            (5, _) => self.project_block_n::<5, 5, false>(k, inv_h2, &masses),
            _ => self.project_block_n::<MAX_ROWS, MAX_ROWS, false>(k, inv_h2, &masses),
        }
    }

    /// Whether the gradient blocks in the evaluation buffer have the position columns
    /// the slot's [`GradientLayout`] promises (checked in debug builds).
    fn layout_holds(&self, k: usize) -> bool {
        let slot = &self.slots[k];
        let (rows, unit) = match slot.layout {
            GradientLayout::Dense => return true,
            GradientLayout::LeadingPosition { rows } => (rows, false),
            GradientLayout::UnitPosition { rows } => (rows, true),
        };
        (0..MAX_BODIES)
            .filter(|&s| slot.bodies[s].is_some())
            .all(|s| {
                let g = &self.eval.gradient[s];
                (0..slot.dim).all(|i| {
                    (0..3).all(|c| {
                        let open = i < rows && (!unit || c == i);
                        open || g[(i, c)] == T::zero()
                    })
                })
            })
    }

    /// [`Self::project_block`] for a constraint of `N` rows (already evaluated) whose
    /// position columns are zero from row `K` on, and, if `UNIT`, s_r·e_rᵀ in rows
    /// r < `K` (`K` ≤ 3). Only products with entries the layout leaves open are formed,
    /// in the order of the dense sums (the skipped terms are exact zeros), so the
    /// result is that of the dense solve.
    #[inline(always)]
    fn project_block_n<const N: usize, const K: usize, const UNIT: bool>(
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
                // updated with vector operations). Position columns: only rows < K.
                for c in 0..6 {
                    if c < 3 && UNIT {
                        // Row c alone has an entry in column c.
                        if c < K {
                            let x = g[(c, c)] * w[c];
                            a[c][c] += x * g[(c, c)];
                        }
                        continue;
                    }
                    let mut gc = [T::zero(); N];
                    gc.copy_from_slice(&g.column(c).as_slice()[..N]);
                    let wc = w[c];
                    for i in 0..N {
                        if c < 3 && i >= K {
                            continue;
                        }
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
                    if c < 3 && UNIT {
                        if c < K {
                            acc += g[(c, c)] * dl[c];
                        }
                    } else {
                        for (i, d) in dl.iter().enumerate() {
                            if c >= 3 || i < K {
                                acc += g[(i, c)] * *d;
                            }
                        }
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
