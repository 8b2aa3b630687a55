//! The per-constraint projections of a [`World`]: scalar rows (56) and the dense block
//! (124) with its fixed-size solve ([`super::small_spd`]).

use super::{GradientLayout, World};
use crate::lie::fma::fmadd;
use crate::lie::{LieGroup, Real};
use crate::xpbd::constraint::{ConstraintEval, MAX_BODIES, MAX_ROWS};
use nalgebra::{SVector, Vector3};

impl<T: Real, G: LieGroup<T>> World<T, G> {
    /// 𝓜⁻¹ diagonal of body slot `s` of constraint `k` (zero for world/fixed).
    pub(super) fn inv_mass_diag(&self, k: usize, s: usize) -> Option<(usize, SVector<T, 6>)> {
        let b = self.slots[k].bodies[s]?;
        let body = &self.bodies[b];
        if body.is_fixed() {
            return None;
        }
        Some((b, body.inv_mass_diag()))
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
        {
            // A constraint that projects itself ([`Constraint::project_block_fused`]);
            // it does nothing if no side is a dynamic body, as below.
            let slot = &mut self.slots[k];
            if let Some(done) = slot.constraint.project_block_fused(
                &mut self.bodies,
                &slot.compliance.as_slice()[..slot.dim],
                inv_h2,
                &mut slot.lambda.as_mut_slice()[..slot.dim],
            ) {
                return done;
            }
        }
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
        let w = masses.map(|m| m.map(|(_, w)| w));
        let slot = &mut self.slots[k];
        let Some(dx) = block_corrections(
            slot.dim,
            slot.layout,
            &self.eval,
            &w,
            &slot.compliance.as_slice()[..slot.dim],
            inv_h2,
            &mut slot.lambda.as_mut_slice()[..slot.dim],
        ) else {
            return false;
        };
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
}

/// The block projection (124) of a constraint of `dim` rows whose gradient blocks are in
/// `eval` with the position columns `layout` ([`GradientLayout`]): solves
/// `[Σ_b ∇C_b 𝓜_b⁻¹ ∇C_bᵀ + α̃] Δλ = −C − α̃λ` (α̃ = α/h², `compliance` α per row,
/// `inv_h2` = 1/h² in 1/s²), adds Δλ to `lambda` and returns the corrections
/// Δx_b = 𝓜_b⁻¹ ∇C_bᵀ Δλ of the two body slots (6-vectors in the layout of (59): m,
/// world frame; rad, body frame), zero for a slot whose `inv_mass` (the 𝓜⁻¹ diagonal,
/// 1/kg and 1/(kg·m²)) is `None` (the world or a fixed body). `None`, with `lambda`
/// unchanged, if the system is not positive definite (e.g. redundant rows).
///
/// One copy of the solve per row count and layout, so that every loop has constant
/// bounds (unrolled, no bounds checks) and known zeros are skipped; inlined, so that a
/// caller with a constant `dim` and `layout` (a joint's fused projection,
/// [`crate::xpbd::Constraint::project_block_fused`]) keeps one copy and its evaluation
/// buffer on the stack.
#[inline(always)]
pub(crate) fn block_corrections<T: Real>(
    dim: usize,
    layout: GradientLayout,
    eval: &ConstraintEval<T>,
    inv_mass: &[Option<SVector<T, 6>>; MAX_BODIES],
    compliance: &[T],
    inv_h2: T,
    lambda: &mut [T],
) -> Option<[SVector<T, 6>; MAX_BODIES]> {
    use GradientLayout::{LeadingPosition as Lead, UnitPosition as Unit};
    let (m, c, l) = (inv_mass, compliance, lambda);
    match (dim, layout) {
        (3, Unit { rows: 3 }) => block_n::<T, 3, 3, true>(eval, m, c, inv_h2, l),
        (5, Unit { rows: 3 }) => block_n::<T, 5, 3, true>(eval, m, c, inv_h2, l),
        (6, Unit { rows: 3 }) => block_n::<T, 6, 3, true>(eval, m, c, inv_h2, l),
        (5, Lead { rows: 2 }) => block_n::<T, 5, 2, false>(eval, m, c, inv_h2, l),
        (6, Lead { rows: 3 }) => block_n::<T, 6, 3, false>(eval, m, c, inv_h2, l),
        (1, _) => block_n::<T, 1, 1, false>(eval, m, c, inv_h2, l),
        (2, _) => block_n::<T, 2, 2, false>(eval, m, c, inv_h2, l),
        (3, _) => block_n::<T, 3, 3, false>(eval, m, c, inv_h2, l),
        (4, _) => block_n::<T, 4, 4, false>(eval, m, c, inv_h2, l),
        (5, _) => block_n::<T, 5, 5, false>(eval, m, c, inv_h2, l),
        _ => block_n::<T, MAX_ROWS, MAX_ROWS, false>(eval, m, c, inv_h2, l),
    }
}

/// [`block_corrections`] for a constraint of `N` rows whose position columns are zero
/// from row `K` on, and, if `UNIT`, s_r·e_rᵀ in rows r < `K` (`K` ≤ 3). Only products
/// with entries the layout leaves open are formed, in the order of the dense sums (the
/// skipped terms are exact zeros), so the result is that of the dense solve.
/// `compliance` and `lambda` hold at least `N` entries.
#[inline(always)]
fn block_n<T: Real, const N: usize, const K: usize, const UNIT: bool>(
    eval: &ConstraintEval<T>,
    masses: &[Option<SVector<T, 6>>; MAX_BODIES],
    compliance: &[T],
    inv_h2: T,
    lambda: &mut [T],
) -> Option<[SVector<T, 6>; MAX_BODIES]> {
    let compliance: &[T; N] = compliance.get(..N)?.try_into().ok()?;
    let lambda: &mut [T; N] = lambda.get_mut(..N)?.try_into().ok()?;
    // Lower triangle of A = Σ_b ∇C_b 𝓜_b⁻¹ ∇C_bᵀ + α̃ over the N rows.
    let mut a = [[T::zero(); N]; N];
    for (s, m) in masses.iter().enumerate() {
        if let Some(w) = m {
            let g = &eval.gradient[s];
            // Σ over the six columns c of the rank-one terms (w_c g_c) g_cᵀ, g_c
            // the N used entries of column c (contiguous, so each row of A is
            // updated with vector operations). Position columns: only rows < K.
            for c in 0..6 {
                if c < 3 && UNIT {
                    // Row c alone has an entry in column c.
                    if c < K {
                        let x = g[(c, c)] * w[c];
                        a[c][c] = fmadd(x, g[(c, c)], a[c][c]);
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
                            a[i][j] = fmadd(x, gc[j], a[i][j]);
                        }
                    }
                }
            }
        }
    }
    let mut dl = [T::zero(); N];
    for j in 0..N {
        let alpha = compliance[j] * inv_h2;
        a[j][j] += alpha;
        dl[j] = -eval.value[j] - alpha * lambda[j];
    }
    if !super::small_spd::solve_fixed(&mut a, &mut dl) {
        return None;
    }
    // Δx_b = 𝓜_b⁻¹ ∇C_bᵀ Δλ.
    let mut dx = [SVector::<T, 6>::zeros(); MAX_BODIES];
    for (s, m) in masses.iter().enumerate() {
        if let Some(w) = m {
            let g = &eval.gradient[s];
            for c in 0..6 {
                let mut acc = T::zero();
                if c < 3 && UNIT {
                    if c < K {
                        acc = fmadd(g[(c, c)], dl[c], acc);
                    }
                } else {
                    for (i, d) in dl.iter().enumerate() {
                        if c >= 3 || i < K {
                            acc = fmadd(g[(i, c)], *d, acc);
                        }
                    }
                }
                dx[s][c] = acc * w[c];
            }
        }
    }
    for (l, d) in lambda.iter_mut().zip(dl.iter()) {
        *l += *d;
    }
    Some(dx)
}
