//! Direct solves of the small symmetric positive definite systems of the block
//! projection (124), A Δλ = b with A = Σ_b ∇C_b 𝓜_b⁻¹ ∇C_bᵀ + α̃ of fixed size N ≤ 6.
//!
//! # Why two solvers
//! The projections of a Gauss–Seidel sweep run one after another: each reads the poses
//! the one before has just corrected, so the time of a sweep is the sum of their
//! latencies, not of their instructions. LDLᵀ ([`ldlt_solve_fixed`]) waits on one
//! division per row, each needing the pivot before it (the divisions are a third of the
//! samples of a revolute joint's projection). For 3 ≤ N ≤ 6 rows, [`schur_solve_fixed`]
//! splits A at its leading 3×3 block P,
//!
//! ```text
//! A = [ P  Bᵀ ]     S = Q − B P⁻¹ Bᵀ,     x_Q = S⁻¹ (b_Q − B P⁻¹ b_P),
//!     [ B  Q  ]     x_P = P⁻¹ (b_P − Bᵀ x_Q),
//! ```
//!
//! with P⁻¹ = adj(P)/det P and S⁻¹ = adj(S)/det S (S of size N − 3 ≤ 3): two divisions,
//! and the cofactors, products and sums in between are independent of one another.
//!
//! # The same test for a singular system
//! Both reject A (redundant rows, an indefinite or non-finite system) by the same rule:
//! the j-th LDLᵀ pivot dⱼ, which equals the ratio Mⱼ₊₁/Mⱼ of consecutive leading
//! principal minors (M₀ = 1), must exceed 64ε·|Aⱼⱼ|. The Schur solve tests the minors
//! themselves, Mⱼ₊₁ > 64ε·|Aⱼⱼ|·Mⱼ (the minors of A are those of P, then det P times those
//! of S), so both accept the same systems up to rounding.
//!
//! # Range
//! The adjugates form products of three entries of A. In `f32` (whose range is
//! 1e±38) A is first scaled by a power of two from its largest diagonal entry
//! ([`inverse_binade`]: exact, and the identity in `f64`), so that bodies of 1e-9 kg
//! (entries of 1e9 and more) do not overflow; LDLᵀ scales with A and needs no such step.

use crate::lie::fma::{dot3, fmadd};
use crate::lie::real::{c, inverse_binade};
use crate::lie::Real;

/// The rejection threshold 64ε of both solvers, relative to a diagonal entry.
#[inline(always)]
fn tiny<T: Real>() -> T {
    T::default_epsilon() * c(64.0)
}

/// Solves `A x = b` for a symmetric positive definite `A` of fixed size `N` ≤ 6 (lower
/// triangle used, possibly overwritten), `b` overwritten by x: by the Schur complement of
/// the leading 3×3 block ([`schur_solve_fixed`]) for N ≥ 3, by LDLᵀ
/// ([`ldlt_solve_fixed`]) below. Returns false, leaving `b` unusable, for a system the
/// module's rule rejects or a solution that is not finite.
#[inline(always)]
pub(super) fn solve_fixed<T: Real, const N: usize>(a: &mut [[T; N]; N], b: &mut [T; N]) -> bool {
    if N >= 3 {
        schur_solve_fixed(a, b)
    } else {
        ldlt_solve_fixed(a, b)
    }
}

/// The adjugate of a symmetric 3×3 matrix `p` (lower triangle used), its leading 2×2
/// minor and its determinant, each entry formed independently of the others.
#[inline(always)]
fn sym3_adjugate<T: Real>(p: &[[T; 3]; 3]) -> ([[T; 3]; 3], T, T) {
    let (p00, p10, p11, p20, p21, p22) = (p[0][0], p[1][0], p[1][1], p[2][0], p[2][1], p[2][2]);
    let c00 = fmadd(p11, p22, -(p21 * p21));
    let c01 = fmadd(p21, p20, -(p10 * p22));
    let c02 = fmadd(p10, p21, -(p11 * p20));
    let c11 = fmadd(p00, p22, -(p20 * p20));
    let c12 = fmadd(p10, p20, -(p00 * p21));
    let c22 = fmadd(p00, p11, -(p10 * p10));
    let det = fmadd(p20, c02, fmadd(p10, c01, p00 * c00));
    (
        [[c00, c01, c02], [c01, c11, c12], [c02, c12, c22]],
        c22,
        det,
    )
}

/// The module's test on the leading minors of a symmetric 3×3 block with diagonal `d`
/// (the unmodified diagonal of A), its 2×2 minor `m2` and determinant `det`: true
/// (reject) if an LDLᵀ pivot, d₀ = p₀₀, d₁ = m2/p₀₀ or d₂ = det/m2, is at most 64ε
/// times its diagonal entry. `p00` is the block's first entry (a Schur complement's,
/// for S). As in LDLᵀ, a NaN is not rejected here; it fails the final finite test.
#[inline(always)]
fn minors_fail<T: Real>(p00: T, m2: T, det: T, d: [T; 3]) -> bool {
    let tiny = tiny::<T>();
    p00 <= tiny * d[0].abs() || m2 <= tiny * d[1].abs() * p00 || det <= tiny * d[2].abs() * m2
}

/// `m·v` for a 3×3 `m` (all entries used), each entry a fused [`dot3`].
#[inline(always)]
fn mul3<T: Real>(m: &[[T; 3]; 3], v: &[T; 3]) -> [T; 3] {
    std::array::from_fn(|i| dot3(m[i], *v))
}

/// Solves `A x = b` for a symmetric positive definite `A` of fixed size 3 ≤ `N` ≤ 6
/// (lower triangle used) by the Schur complement of its leading 3×3 block (module docs),
/// `b` overwritten by x. Returns false, leaving `b` unusable, if a leading minor fails
/// the module's test or the solution is not finite.
#[inline(always)]
// Fixed trip counts over rows of A, B, S and y in step, so that everything unrolls.
#[allow(clippy::needless_range_loop)]
pub(super) fn schur_solve_fixed<T: Real, const N: usize>(a: &[[T; N]; N], b: &mut [T; N]) -> bool {
    debug_assert!((3..=6).contains(&N));
    let k = N - 3;
    // A power of two (1 in f64): the solve is of (sA)(x/s) = b.
    let mut dmax = T::zero();
    for j in 0..N {
        dmax = dmax.max(a[j][j].abs());
    }
    let s = inverse_binade(dmax, 60);
    let e = |i: usize, j: usize| if j <= i { a[i][j] * s } else { a[j][i] * s };
    let p: [[T; 3]; 3] = std::array::from_fn(|i| std::array::from_fn(|j| e(i, j)));
    let (adj, m2, det) = sym3_adjugate(&p);
    if minors_fail(p[0][0], m2, det, [p[0][0], p[1][1], p[2][2]]) {
        return false;
    }
    let inv = T::one() / det;
    let z = mul3(&adj, &[b[0], b[1], b[2]]);
    // Rows B_r of B, y_r = adj(P)·B_rᵀ, S = Q − B P⁻¹ Bᵀ (lower triangle) and
    // t = b_Q − B P⁻¹ b_P, over the k = N − 3 rows of Q.
    let mut y = [[T::zero(); 3]; 3];
    let mut sm = [[T::zero(); 3]; 3];
    let mut t = [T::zero(); 3];
    let mut rows = [[T::zero(); 3]; 3];
    for r in 0..3 {
        if r < k {
            rows[r] = [e(3 + r, 0), e(3 + r, 1), e(3 + r, 2)];
            y[r] = mul3(&adj, &rows[r]);
            t[r] = fmadd(-dot3(rows[r], z), inv, b[3 + r]);
        }
    }
    for r in 0..3 {
        for q in 0..3 {
            if r < k && q <= r {
                sm[r][q] = fmadd(-dot3(rows[r], y[q]), inv, e(3 + r, 3 + q));
            }
        }
    }
    // x_Q = S⁻¹ t, with S's minors tested against A's diagonal entries of its rows.
    let dq = |r: usize| if r < k { e(3 + r, 3 + r) } else { T::one() };
    let mut xq = [T::zero(); 3];
    match k {
        0 => {}
        1 => {
            if minors_fail(sm[0][0], T::one(), T::one(), [dq(0), T::zero(), T::zero()]) {
                return false;
            }
            xq[0] = t[0] / sm[0][0];
        }
        2 => {
            let (s00, s10, s11) = (sm[0][0], sm[1][0], sm[1][1]);
            let ds = s00 * s11 - s10 * s10;
            if minors_fail(s00, ds, T::one(), [dq(0), dq(1), T::zero()]) {
                return false;
            }
            let inv_s = T::one() / ds;
            xq[0] = (s11 * t[0] - s10 * t[1]) * inv_s;
            xq[1] = (s00 * t[1] - s10 * t[0]) * inv_s;
        }
        _ => {
            let (adj_s, m2_s, det_s) = sym3_adjugate(&sm);
            if minors_fail(sm[0][0], m2_s, det_s, [dq(0), dq(1), dq(2)]) {
                return false;
            }
            let inv_s = T::one() / det_s;
            let w = mul3(&adj_s, &t);
            xq = [w[0] * inv_s, w[1] * inv_s, w[2] * inv_s];
        }
    }
    // x_P = P⁻¹(b_P − Bᵀ x_Q) = (z − Σ_r y_r x_Q,r)/det P; then x = s·(solution of sA).
    for i in 0..3 {
        let mut acc = z[i];
        for r in 0..3 {
            if r < k {
                acc = fmadd(-y[r][i], xq[r], acc);
            }
        }
        b[i] = acc * inv * s;
    }
    for r in 0..3 {
        if r < k {
            b[3 + r] = xq[r] * s;
        }
    }
    // x·0 is NaN for ±∞ and NaN: one test for all entries.
    b.iter().fold(T::zero(), |acc, x| acc + *x * T::zero()) == T::zero()
}

/// Solves `A x = b` for a symmetric positive definite `A` of fixed size `N` (lower
/// triangle used, overwritten) by its LDLᵀ factorisation (L unit lower triangular, D
/// diagonal: the Cholesky factor is L·√D), `b` overwritten by x. Every loop bound is a
/// constant, and there is one division per row (1/Dⱼⱼ) and no square root. Returns
/// false, leaving `b` unusable, if a pivot Dⱼⱼ (the square of the Cholesky pivot) is not
/// positive relative to its diagonal entry (as the world's Cholesky solve rejects it),
/// or the solution is not finite.
#[inline(always)]
// The loops run over the fixed row count N and index several arrays in step (L, D, v, b),
// so that they unroll; iterators would obscure the factorisation.
#[allow(clippy::needless_range_loop)]
pub(super) fn ldlt_solve_fixed<T: Real, const N: usize>(
    a: &mut [[T; N]; N],
    b: &mut [T; N],
) -> bool {
    // Every inner loop runs over 0..N with a test on the index, so that it unrolls fully
    // and the outer loops then do too (a trip count depending on the outer index would
    // keep runtime loops).
    let tiny = tiny::<T>();
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

#[cfg(test)]
mod tests {
    use super::{ldlt_solve_fixed, schur_solve_fixed};
    use crate::lie::real::c;
    use crate::lie::Real;
    use nalgebra::{DMatrix, DVector};

    /// xorshift64 in [−1, 1).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        }
    }

    /// A = J W Jᵀ + δI as the block projection forms it (J: N×12 gradient rows, W: a
    /// positive diagonal spanning `spread` decades), with row i of J scaled by
    /// 10^(row_decades·i/N) (rows of different units), and its 2-norm condition number.
    fn system(rng: &mut Rng, n: usize, spread: f64, row_decades: f64, delta: f64) -> DMatrix<f64> {
        let mut j = DMatrix::from_fn(n, 12, |_, _| rng.next());
        for i in 0..n {
            j.row_mut(i)
                .scale_mut(10f64.powf(row_decades * i as f64 / n as f64));
        }
        let w = DVector::from_fn(12, |_, _| 10f64.powf(spread * (rng.next() + 1.0) / 2.0));
        &j * DMatrix::from_diagonal(&w) * j.transpose() + DMatrix::identity(n, n) * delta
    }

    fn lower<T: Real, const N: usize>(a: &DMatrix<f64>) -> [[T; N]; N] {
        std::array::from_fn(|i| {
            std::array::from_fn(|j| if j <= i { c(a[(i, j)]) } else { T::zero() })
        })
    }

    /// Both solvers against the f64 solution of the f64 system (by nalgebra's Cholesky on
    /// the matrix and right side rounded to T): relative error within 8·N·κ(A)·ε_T, the
    /// forward error bound of a backward-stable solve with a small constant; the Schur
    /// solve is not backward stable in general, so this is what the test holds it to.
    /// Returns the worst error of each, in units of κ·ε.
    fn check<T: Real, const N: usize>(seed: u64, spread: f64, rows: f64) -> (f64, f64) {
        let mut rng = Rng(seed);
        let mut worst = (0.0f64, 0.0f64);
        for _ in 0..200 {
            let a = system(&mut rng, N, spread, rows, 1e-3);
            let rhs = DVector::from_fn(N, |_, _| rng.next());
            // The system as T holds it, solved exactly enough in f64.
            let a_t = a.map(|x| c::<T>(x).to_f64());
            let b_t = rhs.map(|x| c::<T>(x).to_f64());
            let want = a_t.clone().cholesky().expect("SPD").solve(&b_t);
            let sv = a_t.singular_values();
            let kappa = sv.max() / sv.min();
            let eps = T::default_epsilon().to_f64();
            let rel = |x: &[T; N]| {
                let got = DVector::from_fn(N, |i, _| x[i].to_f64());
                (got - &want).norm() / want.norm()
            };
            let mut x1: [T; N] = std::array::from_fn(|i| c(b_t[i]));
            let mut x2 = x1;
            let mut l = lower::<T, N>(&a_t);
            assert!(
                schur_solve_fixed(&l, &mut x1),
                "Schur rejected an SPD system"
            );
            assert!(
                ldlt_solve_fixed(&mut l, &mut x2),
                "LDLᵀ rejected an SPD system"
            );
            let bound = 8.0 * N as f64 * kappa * eps;
            let (e1, e2) = (rel(&x1), rel(&x2));
            assert!(
                e1 <= bound,
                "{} N = {N}: Schur error {e1:e} > {bound:e} (κ = {kappa:e})",
                T::NAME
            );
            assert!(
                e2 <= bound,
                "{} N = {N}: LDLᵀ error {e2:e} > {bound:e} (κ = {kappa:e})",
                T::NAME
            );
            worst = (
                worst.0.max(e1 / (kappa * eps)),
                worst.1.max(e2 / (kappa * eps)),
            );
        }
        worst
    }

    #[test]
    fn schur_solve_is_as_accurate_as_ldlt() {
        for (spread, rows) in [(0.0, 0.0), (3.0, 0.0), (3.0, 3.0), (6.0, 4.0)] {
            check::<f64, 3>(1, spread, rows);
            check::<f64, 4>(2, spread, rows);
            check::<f64, 5>(3, spread, rows);
            check::<f64, 6>(4, spread, rows);
            check::<f32, 3>(5, spread, rows);
            check::<f32, 5>(6, spread, rows);
            check::<f32, 6>(7, spread, rows);
        }
    }

    /// Redundant rows (A = J W Jᵀ with two equal rows of J, no compliance): both reject,
    /// in each position of the pair (inside P, across P and S, inside S).
    #[test]
    fn both_reject_redundant_rows() {
        fn rejects<T: Real, const N: usize>(i: usize, j: usize) {
            let mut rng = Rng(11 + (i * 7 + j) as u64);
            let mut jm = DMatrix::from_fn(N, 12, |_, _| rng.next());
            let row = jm.row(i).into_owned();
            jm.set_row(j, &row);
            let a = &jm * jm.transpose();
            let mut l = lower::<T, N>(&a);
            let mut x: [T; N] = std::array::from_fn(|_| T::one());
            assert!(
                !schur_solve_fixed(&l, &mut x),
                "{} N = {N}: Schur, rows {i}, {j}",
                T::NAME
            );
            assert!(
                !ldlt_solve_fixed(&mut l, &mut x),
                "{} N = {N}: LDLᵀ, rows {i}, {j}",
                T::NAME
            );
        }
        for (i, j) in [(0, 1), (1, 2), (2, 3), (0, 4), (3, 4), (4, 5)] {
            rejects::<f64, 6>(i, j);
            rejects::<f32, 6>(i, j);
        }
        rejects::<f64, 3>(0, 2);
        rejects::<f64, 4>(1, 3);
        rejects::<f32, 5>(3, 4);
    }

    /// Non-finite entries are rejected, never returned as a solution.
    #[test]
    fn non_finite_systems_are_rejected() {
        let mut rng = Rng(5);
        let a = system(&mut rng, 5, 1.0, 0.0, 1e-3);
        for bad in [f64::NAN, f64::INFINITY] {
            for (i, j) in [(0, 0), (2, 1), (4, 4), (4, 0)] {
                let mut l = lower::<f64, 5>(&a);
                l[i][j] = bad;
                let mut x = [1.0; 5];
                assert!(!schur_solve_fixed(&l, &mut x), "{bad} at ({i}, {j})");
            }
        }
    }

    /// In f32 the power-of-two scaling keeps the products of three entries in range:
    /// a system of light bodies (entries ~1e15, cubes ~1e45 > f32::MAX) and of heavy
    /// ones (entries ~1e-15, cubes below the normal range) solve as well as at 1.
    #[test]
    fn f32_schur_solve_is_scale_free() {
        let mut rng = Rng(9);
        let a = system(&mut rng, 6, 2.0, 0.0, 1e-3);
        let rhs: [f32; 6] = std::array::from_fn(|i| (i as f32 + 1.0) * 0.25);
        let mut unit = rhs;
        assert!(schur_solve_fixed(&lower::<f32, 6>(&a), &mut unit));
        for scale in [1e15f32, 1e-15] {
            let mut x = rhs;
            let l: [[f32; 6]; 6] = lower::<f32, 6>(&a).map(|r| r.map(|v| v * scale));
            assert!(schur_solve_fixed(&l, &mut x), "scale {scale:e}");
            for (xi, ui) in x.iter().zip(&unit) {
                let back = xi * scale;
                assert!(
                    (back - ui).abs() <= 1e-4 * ui.abs().max(1e-3),
                    "scale {scale:e}: {back} vs {ui}"
                );
            }
        }
    }
}
