//! Tests of the block-banded Cholesky solver `lie_xpbd::rod::banded` (paper Section
//! 8.2): solutions against nalgebra's dense Cholesky on random SPD block-banded systems,
//! solve residuals, the block bandwidth 2q − 1 of a rod's λ-system assembled from its
//! node structure, every error, and no heap allocation per factor/solve.
//!
//! # Systems
//! Block rows n ∈ {1, 2, 5, 50, 300}, block bandwidths p ∈ {0, 1, 2, 3, 5}, each in two
//! families, generated in f64 and rounded to the scalar under test (A_T below; the
//! system solved is A_T x = b_T exactly as stored in T):
//! * `jjt`: A = J Jᵀ + εI with J block-banded (blocks (i, k), i − ⌈p/2⌉ ≤ k ≤ i +
//!   ⌊p/2⌋, entries uniform in [−1, 1]), like a rod's ∇C 𝓜⁻¹ ∇Cᵀ + α̃; ε = 5% of the
//!   mean diagonal entry of J Jᵀ, so λ_min(A) ≥ ε.
//! * `dd`: symmetric, off-diagonal entries uniform in [−1, 1] inside the band, each
//!   diagonal entry its row's absolute off-diagonal sum plus a margin in [0.5, 1.5], so
//!   λ_min(A) ≥ 0.5 by Gershgorin.
//!
//! # Error bounds (why the tolerances are what they are)
//! u = ε_mach/2 is the unit roundoff of T, w + 1 = 6(p + 1) the largest number of
//! non-zeros in a row of L, and γ_m = m·u/(1 − m·u). Cholesky and the two triangular
//! solves give a computed x̂ with (A + ΔA) x̂ = b and
//! |ΔA| ≤ γ_{3(w+1)+1} |L̂||L̂ᵀ| (Higham, *Accuracy and Stability of Numerical
//! Algorithms*, 2nd ed., Thm 10.4, with inner products of at most w + 1 terms in a band).
//! Since ‖ |L̂||L̂ᵀ| ‖₂ ≤ ‖L̂‖₁‖L̂‖_∞ (norms of |L̂|, computed from the factor), define
//!
//! ```text
//! η = γ_{3(w+1)+1} · ‖L̂‖₁‖L̂‖_∞ / λ_min(A_T)          (λ_min bounded from below)
//! ```
//!
//! Then the forward error is ‖x̂ − x‖/‖x‖ ≤ η/(1 − η) (standard perturbation bound,
//! ‖A⁻¹‖₂‖ΔA‖₂ ≤ η), and since ‖L̂‖₁‖L̂‖_∞ is at most ≈ (w + 1)‖A‖₂, η ≈
//! (3w + 4)(w + 1)·u·κ₂(A): the bound is the condition number times the rounding of the
//! band. nalgebra's dense Cholesky computes the same factor with the same non-zero
//! terms (products with exact zeros add nothing), so it satisfies the same bound, and
//! the banded and dense solutions differ by at most 2η/(1 − η). The residual needs no
//! κ: ‖b − A x̂‖ = ‖ΔA x̂‖ ≤ γ_{3(w+1)+1} ‖L̂‖₁‖L̂‖_∞ ‖x̂‖, checked relative to ‖b‖
//! (in f64 arithmetic on the exactly representable A_T, b_T, x̂).
//!
//! λ_min(A_T) is bounded below rigorously: for `dd` by Gershgorin on A_T itself; for
//! `jjt` by ε − ‖A_T − A‖_F (Weyl; the rounding to T) − 10⁻¹²·‖A‖_∞ (a generous
//! allowance for forming J Jᵀ in f64, whose error is ≤ γ_{6(p+1)}‖J‖² ≈ 10⁻¹⁴‖A‖).
//!
//! Run with `-- --nocapture` to see the worst errors and their ratio to the bounds.

use lie_xpbd::rod::banded::{
    rod_block_bandwidth, BandScalar, BandedError, Block, BlockBandedMatrix,
};
use nalgebra::{DMatrix, DVector, SMatrix, SVector};

// ---------------------------------------------------------------------------------
// Counting allocator (per thread, so parallel tests do not disturb each other)
// ---------------------------------------------------------------------------------

use crate::alloc_counter;
use alloc_counter::allocations;

// ---------------------------------------------------------------------------------
// Random banded SPD systems
// ---------------------------------------------------------------------------------

/// SplitMix64: deterministic inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [−1, 1).
    fn sym(&mut self) -> f64 {
        2.0 * self.unit() - 1.0
    }
    fn block(&mut self) -> Block<f64> {
        Block::from_fn(|_, _| self.sym())
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Family {
    Jjt,
    Dd,
}

/// A block-banded SPD matrix in f64: its lower band as (i, j, A_ij), j ≤ i (diagonal
/// blocks symmetric), and the matrix that certifies λ_min.
struct Problem {
    n: usize,
    p: usize,
    family: Family,
    blocks: Vec<(usize, usize, Block<f64>)>,
    /// For `jjt`: ε (λ_min(J Jᵀ + εI) ≥ ε).
    eps: f64,
}

fn problem(n: usize, p: usize, family: Family, seed: u64) -> Problem {
    let mut rng = Rng(seed);
    let mut blocks = Vec::new();
    let mut eps = 0.0;
    match family {
        Family::Jjt => {
            let (q1, q2) = (p.div_ceil(2), p / 2);
            // J_ik for i − q1 ≤ k ≤ i + q2, 0 ≤ k < n.
            let range = |i: usize| i.saturating_sub(q1)..(i + q2 + 1).min(n);
            let j: Vec<Vec<Block<f64>>> = (0..n)
                .map(|i| range(i).map(|_| rng.block()).collect())
                .collect();
            let jb = |i: usize, k: usize| &j[i][k - i.saturating_sub(q1)];
            let mut trace = 0.0;
            for i in 0..n {
                for jj in i.saturating_sub(p)..=i {
                    let mut a = Block::<f64>::zeros();
                    for k in range(i) {
                        if range(jj).contains(&k) {
                            a += jb(i, k) * jb(jj, k).transpose();
                        }
                    }
                    if jj == i {
                        trace += a.trace();
                    }
                    blocks.push((i, jj, a));
                }
            }
            eps = 0.05 * trace / (6 * n) as f64;
            for (i, jj, a) in blocks.iter_mut() {
                if i == jj {
                    *a += Block::identity() * eps;
                }
            }
        }
        Family::Dd => {
            for i in 0..n {
                for jj in i.saturating_sub(p)..=i {
                    let mut a = rng.block();
                    if jj == i {
                        a = (a + a.transpose()) * 0.5;
                    }
                    blocks.push((i, jj, a));
                }
            }
            // Diagonal = absolute off-diagonal row sum + margin.
            let dense = dense_of(n, &blocks);
            let dim = 6 * n;
            let margins: Vec<f64> = (0..dim).map(|_| 0.5 + rng.unit()).collect();
            for (i, jj, a) in blocks.iter_mut() {
                if i == jj {
                    for r in 0..6 {
                        let row = 6 * *i + r;
                        let off: f64 = (0..dim)
                            .filter(|&c| c != row)
                            .map(|c| dense[(row, c)].abs())
                            .sum();
                        a[(r, r)] = off + margins[row];
                    }
                }
            }
        }
    }
    Problem {
        n,
        p,
        family,
        blocks,
        eps,
    }
}

/// The symmetric dense matrix of a lower band.
fn dense_of(n: usize, blocks: &[(usize, usize, Block<f64>)]) -> DMatrix<f64> {
    let mut d = DMatrix::zeros(6 * n, 6 * n);
    for (i, j, a) in blocks {
        for r in 0..6 {
            for c in 0..6 {
                if i == j && c > r {
                    continue;
                }
                d[(6 * i + r, 6 * j + c)] = a[(r, c)];
                d[(6 * j + c, 6 * i + r)] = a[(r, c)];
            }
        }
    }
    d
}

fn round<T: BandScalar>(x: f64) -> f64 {
    T::cast(x).to_f64()
}

fn block_to<T: BandScalar>(a: &Block<f64>) -> Block<T> {
    a.map(T::cast)
}

/// γ_m for the unit roundoff of T.
fn gamma<T: BandScalar>(m: usize) -> f64 {
    let u = T::default_epsilon().to_f64() / 2.0;
    let mu = m as f64 * u;
    mu / (1.0 - mu)
}

/// Measured errors of one case and their bounds.
struct Outcome {
    /// ‖x̂ − x_dense‖/‖x_dense‖ and its bound 2η/(1 − η).
    err_dense: f64,
    bound_dense: f64,
    /// ‖b − A x̂‖/‖b‖ and its bound.
    residual: f64,
    bound_residual: f64,
    /// Upper bound on κ₂(A_T) (Gershgorin λ_max over the λ_min bound).
    kappa: f64,
}

fn run_case<T: BandScalar>(prob: &Problem, seed: u64) -> Outcome {
    let n = prob.n;
    let dim = 6 * n;
    // The system as stored in T.
    let rounded: Vec<(usize, usize, Block<f64>)> = prob
        .blocks
        .iter()
        .map(|(i, j, a)| (*i, *j, a.map(round::<T>)))
        .collect();
    let a = dense_of(n, &rounded);
    let a_exact = dense_of(n, &prob.blocks);
    let lambda_min = match prob.family {
        Family::Dd => (0..dim)
            .map(|r| {
                let off: f64 = (0..dim).filter(|&c| c != r).map(|c| a[(r, c)].abs()).sum();
                a[(r, r)] - off
            })
            .fold(f64::INFINITY, f64::min),
        Family::Jjt => prob.eps - (&a - &a_exact).norm() - 1e-12 * norm_inf(&a),
    };
    let mut rng = Rng(seed);
    let x_true = DVector::<f64>::from_fn(dim, |_, _| rng.sym());
    let b = (&a * &x_true).map(round::<T>);
    let mut m = BlockBandedMatrix::<T>::new(n, prob.p).unwrap();
    for (i, j, blk) in &prob.blocks {
        m.add_block(*i, *j, &block_to::<T>(blk)).unwrap();
    }
    compare_with_dense(m, &a, lambda_min, &b)
}

/// ‖A‖_∞ (max absolute row sum), which bounds λ_max of a symmetric A (Gershgorin).
fn norm_inf(a: &DMatrix<f64>) -> f64 {
    (0..a.nrows())
        .map(|r| a.row(r).iter().map(|v| v.abs()).sum::<f64>())
        .fold(0.0, f64::max)
}

/// ‖|L̂|‖₁·‖|L̂|‖_∞ of a factored matrix.
fn factor_norm<T: BandScalar>(m: &BlockBandedMatrix<T>) -> f64 {
    let (n, p) = (m.blocks(), m.bandwidth());
    let mut row_sum = vec![0.0; 6 * n];
    let mut col_sum = vec![0.0; 6 * n];
    for i in 0..n {
        for j in i.saturating_sub(p)..=i {
            let l = m.block(i, j).unwrap();
            for r in 0..6 {
                for c in 0..6 {
                    let v = l[(r, c)].to_f64().abs();
                    row_sum[6 * i + r] += v;
                    col_sum[6 * j + c] += v;
                }
            }
        }
    }
    let max = |v: &[f64]| v.iter().fold(0.0, |a: f64, &b| a.max(b));
    max(&row_sum) * max(&col_sum)
}

/// Solves the assembled `m` (whose matrix is exactly `a`, as f64) for `b` (exactly
/// representable in T) with the banded solver and with nalgebra's dense Cholesky in
/// T, checks both against the bounds of the module docs (λ_min(a) ≥ `lambda_min`), and
/// checks `mul_vec`.
fn compare_with_dense<T: BandScalar>(
    mut m: BlockBandedMatrix<T>,
    a: &DMatrix<f64>,
    lambda_min: f64,
    b: &DVector<f64>,
) -> Outcome {
    assert!(lambda_min > 0.0, "λ_min bound must be positive");
    let dim = m.dim();
    let b_t: Vec<T> = b.iter().map(|&v| T::cast(v)).collect();
    let assembled = m.clone();
    m.factor().unwrap();
    let mut x = b_t.clone();
    m.solve_in_place(&mut x).unwrap();
    let x64 = DVector::<f64>::from_iterator(dim, x.iter().map(|v| v.to_f64()));

    let pe = m.bandwidth();
    let norm_l = factor_norm(&m);
    let g = gamma::<T>(3 * 6 * (pe + 1) + 1);
    let eta = g * norm_l / lambda_min;
    assert!(
        eta < 0.5,
        "case too ill-conditioned for a meaningful bound: η = {eta}"
    );

    // Dense nalgebra Cholesky in T.
    let chol = nalgebra::Cholesky::new(a.map(T::cast)).expect("dense Cholesky of an SPD matrix");
    let x_dense = chol.solve(&DVector::from_vec(b_t)).map(|v| v.to_f64());
    let err_dense = (&x64 - &x_dense).norm() / x_dense.norm();
    let bound_dense = 2.0 * eta / (1.0 - eta);

    let residual = (b - a * &x64).norm() / b.norm();
    let bound_residual = g * norm_l * x64.norm() / b.norm();

    // mul_vec of the assembled matrix against the dense product: componentwise
    // |fl(A x) − A x| ≤ γ_{6(2p+1)} |A||x|.
    let mut y = vec![T::zero(); dim];
    assembled.mul_vec(&x, &mut y).unwrap();
    let ax = a * &x64;
    let abs_ax = a.abs() * x64.abs();
    let gm = gamma::<T>(6 * (2 * pe + 1) + 1);
    for r in 0..dim {
        let e = (y[r].to_f64() - ax[r]).abs();
        assert!(e <= gm * abs_ax[r], "mul_vec row {r}: error {e:e}");
    }

    Outcome {
        err_dense,
        bound_dense,
        residual,
        bound_residual,
        kappa: norm_inf(a) / lambda_min,
    }
}

const SIZES: [usize; 5] = [1, 2, 5, 50, 300];
const BANDWIDTHS: [usize; 5] = [0, 1, 2, 3, 5];

fn sweep<T: BandScalar>(family: Family) {
    let mut worst = (0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for (a, &n) in SIZES.iter().enumerate() {
        for (b, &p) in BANDWIDTHS.iter().enumerate() {
            let seed = 1000 * a as u64 + 10 * b as u64 + family as u64;
            let prob = problem(n, p, family, seed);
            let o = run_case::<T>(&prob, seed + 7);
            assert!(
                o.err_dense <= o.bound_dense,
                "{} {family:?} n = {n} p = {p}: ‖x − x_dense‖/‖x_dense‖ = {:e} > {:e}",
                T::NAME,
                o.err_dense,
                o.bound_dense
            );
            assert!(
                o.residual <= o.bound_residual,
                "{} {family:?} n = {n} p = {p}: ‖Ax − b‖/‖b‖ = {:e} > {:e}",
                T::NAME,
                o.residual,
                o.bound_residual
            );
            worst.0 = worst.0.max(o.err_dense);
            worst.1 = worst.1.max(o.err_dense / o.bound_dense);
            worst.2 = worst.2.max(o.residual);
            worst.3 = worst.3.max(o.residual / o.bound_residual);
            worst.4 = worst.4.max(o.kappa);
        }
    }
    println!(
        "{} {family:?}: max ‖x − x_dense‖/‖x_dense‖ = {:.2e} (≤ {:.1e} of its bound), \
         max ‖Ax − b‖/‖b‖ = {:.2e} (≤ {:.1e} of its bound), κ ≤ {:.0}",
        T::NAME,
        worst.0,
        worst.1,
        worst.2,
        worst.3,
        worst.4
    );
}

#[test]
fn matches_dense_cholesky_jjt_f64() {
    sweep::<f64>(Family::Jjt);
}

#[test]
fn matches_dense_cholesky_jjt_f32() {
    sweep::<f32>(Family::Jjt);
}

#[test]
fn matches_dense_cholesky_dd_f64() {
    sweep::<f64>(Family::Dd);
}

#[test]
fn matches_dense_cholesky_dd_f32() {
    sweep::<f32>(Family::Dd);
}

/// Cholesky creates no fill outside the band: nalgebra's dense factor is exactly zero
/// there, and inside the band it agrees with the banded factor.
#[test]
fn dense_factor_stays_in_band() {
    let (n, p) = (20, 3);
    let prob = problem(n, p, Family::Jjt, 42);
    let a = dense_of(n, &prob.blocks);
    let l = nalgebra::Cholesky::new(a).unwrap().l();
    let mut m = BlockBandedMatrix::<f64>::new(n, p).unwrap();
    for (i, j, blk) in &prob.blocks {
        m.add_block(*i, *j, blk).unwrap();
    }
    m.factor().unwrap();
    let mut max_diff = 0.0f64;
    for r in 0..6 * n {
        for c in 0..=r {
            let (i, j) = (r / 6, c / 6);
            if i - j > p {
                assert_eq!(l[(r, c)], 0.0, "fill at ({r}, {c})");
            } else {
                let banded = m.block(i, j).unwrap()[(r % 6, c % 6)];
                max_diff = max_diff.max((banded - l[(r, c)]).abs());
            }
        }
    }
    let scale = l.abs().max();
    assert!(max_diff <= 1e-12 * scale, "factor differs by {max_diff:e}");
    // Upper triangles of the diagonal blocks of L are zero.
    for i in 0..n {
        let d = m.block(i, i).unwrap();
        for r in 0..6 {
            for c in r + 1..6 {
                assert_eq!(d[(r, c)], 0.0);
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// The λ-system of a rod: bandwidth 2q − 1 from the node structure
// ---------------------------------------------------------------------------------

/// A rod of `elements` elements of order k (k + 1 nodes each, consecutive elements
/// sharing an end node) with q Gauss points per element and a 6-row constraint fixing
/// the base node placed first. Each constraint row block gets a random gradient with
/// respect to the 6 DOFs of each node it depends on; 𝓜⁻¹ is a random positive diagonal
/// per node; α̃ a random positive diagonal. A = ∇C 𝓜⁻¹ ∇Cᵀ + α̃ is formed densely from
/// the full gradient matrix, and blockwise through `add_block` for every pair of
/// constraints that share a node; both are solved and compared. Returns the largest
/// block distance between coupled constraints.
fn rod_system(k: usize, q: usize, elements: usize, seed: u64) -> usize {
    let mut rng = Rng(seed);
    let nodes = elements * k + 1;
    // Constraint 0: the base; then Gauss point r of element e is 1 + e·q + r.
    let mut node_sets: Vec<Vec<usize>> = vec![vec![0]];
    for e in 0..elements {
        for _ in 0..q {
            node_sets.push((e * k..=e * k + k).collect());
        }
    }
    let n = node_sets.len();
    let mut grad = DMatrix::<f64>::zeros(6 * n, 6 * nodes);
    let mut grad_blocks: Vec<Vec<Block<f64>>> = Vec::new();
    for (g, set) in node_sets.iter().enumerate() {
        let mut per_node = Vec::new();
        for &node in set {
            let b = rng.block();
            grad.view_mut((6 * g, 6 * node), (6, 6)).copy_from(&b);
            per_node.push(b);
        }
        grad_blocks.push(per_node);
    }
    let inv_mass: Vec<SVector<f64, 6>> = (0..nodes)
        .map(|_| SVector::from_fn(|_, _| 0.5 + rng.unit()))
        .collect();
    let compliance = DVector::<f64>::from_fn(6 * n, |_, _| 1e-3 * (1.0 + rng.unit()));
    let w = DMatrix::from_diagonal(&DVector::from_iterator(
        6 * nodes,
        inv_mass.iter().flat_map(|m| m.iter().copied()),
    ));
    let dense = &grad * &w * grad.transpose() + DMatrix::from_diagonal(&compliance);

    // The band is tight: one block narrower rejects some coupled pair.
    let p = rod_block_bandwidth(q);
    let mut narrow = BlockBandedMatrix::<f64>::new(n, p - 1).unwrap();
    let mut rejected = 0;
    let mut reach = 0;
    for g in 0..n {
        for h in 0..=g {
            if node_sets[g].iter().any(|x| node_sets[h].contains(x)) {
                reach = reach.max(g - h);
                if let Err(e) = narrow.add_block(g, h, &Block::identity()) {
                    assert!(matches!(e, BandedError::OutOfBand { .. }));
                    rejected += 1;
                }
            }
        }
    }
    assert!(
        rejected > 0,
        "k = {k}, q = {q}: band 2q − 2 held every coupled pair"
    );
    let mut m = BlockBandedMatrix::<f64>::new(n, p).unwrap();
    for g in 0..n {
        for h in 0..=g {
            let mut a = Block::<f64>::zeros();
            let mut shared = false;
            for (x, &node) in node_sets[g].iter().enumerate() {
                if let Some(y) = node_sets[h].iter().position(|&o| o == node) {
                    shared = true;
                    a += grad_blocks[g][x]
                        * Block::from_diagonal(&inv_mass[node])
                        * grad_blocks[h][y].transpose();
                }
            }
            if shared {
                m.add_block(g, h, &a).unwrap();
            }
        }
        m.add_diagonal(g, &compliance.fixed_rows::<6>(6 * g).into_owned())
            .unwrap();
    }
    // The blockwise assembly agrees with the dense one within rounding: each entry is a
    // sum of at most 6(k + 1) products of three factors plus α̃, so both differ from the
    // exact value by at most γ_{6(k+1)+2}·(|∇C| 𝓜⁻¹ |∇C|ᵀ)_ij.
    let assembled = m.clone();
    let mut band_dense = DMatrix::<f64>::zeros(6 * n, 6 * n);
    for g in 0..n {
        for h in g.saturating_sub(p)..=g {
            let a = assembled.block(g, h).unwrap();
            for r in 0..6 {
                for c in 0..6 {
                    if g == h && c > r {
                        continue;
                    }
                    band_dense[(6 * g + r, 6 * h + c)] = a[(r, c)];
                    band_dense[(6 * h + c, 6 * g + r)] = a[(r, c)];
                }
            }
        }
    }
    let abs_prod = grad.abs() * &w * grad.abs().transpose();
    let ga = gamma::<f64>(6 * (k + 1) + 2);
    for r in 0..6 * n {
        for c in 0..6 * n {
            let d = (band_dense[(r, c)] - dense[(r, c)]).abs();
            assert!(
                d <= 2.0 * ga * abs_prod[(r, c)] + f64::MIN_POSITIVE,
                "assembly ({r}, {c}): {d:e}"
            );
        }
    }
    // J 𝓜⁻¹ Jᵀ is positive semi-definite, so λ_min ≥ min α̃ less the assembly rounding.
    let lambda_min = compliance.min() - ga * abs_prod.norm();
    let mut rng2 = Rng(seed + 1);
    let b = DVector::<f64>::from_fn(6 * n, |_, _| rng2.sym());
    let o = compare_with_dense(m, &band_dense, lambda_min, &b);
    assert!(
        o.err_dense <= o.bound_dense && o.residual <= o.bound_residual,
        "k = {k}, q = {q}: error {:e} (bound {:e}), residual {:e} (bound {:e})",
        o.err_dense,
        o.bound_dense,
        o.residual,
        o.bound_residual
    );
    println!(
        "rod k = {k}, q = {q}, p = {p}: error {:.1e} (bound {:.1e}), residual {:.1e} (bound {:.1e}), κ ≤ {:.1e}",
        o.err_dense, o.bound_dense, o.residual, o.bound_residual, o.kappa
    );
    reach
}

/// For linear, quadratic and cubic elements with reduced (q = k) and full (q = k + 1)
/// integration, every coupled pair of constraints (base constraint included) is within
/// 2q − 1 block rows, the bound is attained (a band of 2q − 2 rejects a coupled pair),
/// the blockwise assembly fits the band, agrees with the dense assembly and solves.
#[test]
fn rod_lambda_system_bandwidth_is_two_q_minus_one() {
    for k in 1..=3 {
        for q in [k, k + 1] {
            let reach = rod_system(k, q, 6, 100 * k as u64 + q as u64);
            assert_eq!(reach, 2 * q - 1, "k = {k}, q = {q}");
            assert_eq!(rod_block_bandwidth(q), 2 * q - 1);
        }
    }
    assert_eq!(rod_block_bandwidth(0), 0);
}

// ---------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------

fn dd_matrix<T: BandScalar>(n: usize, p: usize) -> BlockBandedMatrix<T> {
    let prob = problem(n, p, Family::Dd, 7);
    let mut m = BlockBandedMatrix::<T>::new(n, p).unwrap();
    for (i, j, blk) in &prob.blocks {
        m.add_block(*i, *j, &block_to::<T>(blk)).unwrap();
    }
    m
}

fn not_spd_is_reported<T: BandScalar>() {
    // A negative diagonal entry at block row 3, row 2: every earlier leading minor is
    // unchanged (diagonally dominant), so that is the first pivot to fail.
    let mut m = dd_matrix::<T>(6, 2);
    let d = m.block(3, 3).unwrap()[(2, 2)];
    let mut v = SVector::<T, 6>::zeros();
    v[2] = -(d + T::one());
    m.add_diagonal(3, &v).unwrap();
    match m.factor() {
        Err(BandedError::NotPositiveDefinite {
            block_row,
            pivot,
            value,
            diagonal,
        }) => {
            assert_eq!((block_row, pivot), (3, 2));
            assert!(value < 0.0);
            assert_eq!(diagonal, -1.0);
        }
        other => panic!("expected NotPositiveDefinite, got {other:?}"),
    }
    assert!(!m.is_factored());
    let mut x = vec![T::one(); 36];
    assert!(matches!(
        m.solve_in_place(&mut x),
        Err(BandedError::NotFactored { .. })
    ));
    assert!(matches!(
        m.add_block(1, 0, &Block::zeros()),
        Err(BandedError::NotAssembling { .. })
    ));
    assert!(matches!(m.factor(), Err(BandedError::NotAssembling { .. })));
    // Reset and reassemble: works again.
    m.reset();
    let fresh = dd_matrix::<T>(6, 2);
    for i in 0..6usize {
        for j in i.saturating_sub(2)..=i {
            m.add_block(i, j, &fresh.block(i, j).unwrap()).unwrap();
        }
    }
    m.factor().unwrap();
    m.solve_in_place(&mut x).unwrap();

    // Indefinite with a positive diagonal: [[I, 2I], [2I, I]] fails at block row 1,
    // row 0 (pivot 1 − 4 = −3).
    let mut m = BlockBandedMatrix::<T>::new(2, 1).unwrap();
    m.add_block(0, 0, &Block::identity()).unwrap();
    m.add_block(1, 1, &Block::identity()).unwrap();
    m.add_block(1, 0, &(Block::identity() * T::cast(2.0)))
        .unwrap();
    assert!(matches!(
        m.factor(),
        Err(BandedError::NotPositiveDefinite {
            block_row: 1,
            pivot: 0,
            ..
        })
    ));

    // Singular (rank 1, v vᵀ): the second pivot is zero up to rounding.
    let v = SVector::<T, 6>::from_fn(|r, _| T::cast(1.0 + r as f64));
    let mut m = BlockBandedMatrix::<T>::new(1, 0).unwrap();
    m.add_block(0, 0, &(v * v.transpose())).unwrap();
    assert!(matches!(
        m.factor(),
        Err(BandedError::NotPositiveDefinite {
            block_row: 0,
            pivot: 1,
            ..
        })
    ));
}

#[test]
fn not_positive_definite_is_an_error_f64() {
    not_spd_is_reported::<f64>();
}

#[test]
fn not_positive_definite_is_an_error_f32() {
    not_spd_is_reported::<f32>();
}

#[test]
fn bad_indices_and_inputs_are_errors() {
    let mut m = BlockBandedMatrix::<f64>::new(5, 2).unwrap();
    let one = Block::<f64>::identity();
    assert_eq!(
        m.add_block(5, 4, &one),
        Err(BandedError::OutOfRange {
            row: 5,
            col: 4,
            blocks: 5
        })
    );
    assert_eq!(
        m.add_block(1, 2, &one),
        Err(BandedError::UpperBlock { row: 1, col: 2 })
    );
    assert_eq!(
        m.add_block(4, 1, &one),
        Err(BandedError::OutOfBand {
            row: 4,
            col: 1,
            bandwidth: 2
        })
    );
    assert!(matches!(m.block(4, 1), Err(BandedError::OutOfBand { .. })));
    assert!(matches!(
        m.add_diagonal(7, &SVector::zeros()),
        Err(BandedError::OutOfRange { row: 7, .. })
    ));
    let mut bad = Block::<f64>::zeros();
    bad[(4, 1)] = f64::NAN;
    assert_eq!(
        m.add_block(2, 1, &bad),
        Err(BandedError::NonFiniteBlock {
            row: 2,
            col: 1,
            entry: (4, 1)
        })
    );
    let mut inf = SVector::<f64, 6>::zeros();
    inf[3] = f64::INFINITY;
    assert_eq!(
        m.set_diagonal(0, &inf),
        Err(BandedError::NonFiniteBlock {
            row: 0,
            col: 0,
            entry: (3, 3)
        })
    );
    // Overflow of a sum is rejected and leaves the block as it was.
    let mut f = BlockBandedMatrix::<f32>::new(2, 1).unwrap();
    let big = SMatrix::<f32, 6, 6>::from_element(f32::MAX);
    f.add_block(1, 0, &big).unwrap();
    assert!(matches!(
        f.add_block(1, 0, &big),
        Err(BandedError::NonFiniteBlock { entry: (0, 0), .. })
    ));
    assert_eq!(f.block(1, 0).unwrap(), big);
    // Shapes too large for memory are an error, not a panic.
    assert!(matches!(
        BlockBandedMatrix::<f64>::new(usize::MAX / 2, 3),
        Err(BandedError::TooLarge { .. })
    ));
    // Reported case: a storage size that fits usize but not memory (a rod of 10⁶ cubic
    // elements under a 6 GB limit) aborted the process. 10¹⁵ blocks of 288 bytes
    // (2.9e17 bytes) exceed any address space: the allocation is refused, an error.
    let mut r = BlockBandedMatrix::<f64>::new(3, 1).unwrap();
    assert!(matches!(
        r.reshape(1_000_000_000_000_000, 0),
        Err(BandedError::OutOfMemory {
            bytes: 288_000_000_000_000_000,
            ..
        })
    ));
    assert_eq!((r.blocks(), r.bandwidth()), (3, 1), "unchanged");
    // A bandwidth past n − 1 is clamped.
    assert_eq!(BlockBandedMatrix::<f64>::new(3, 10).unwrap().bandwidth(), 2);

    // Vectors.
    for i in 0..5 {
        m.set_diagonal(i, &SVector::repeat(2.0)).unwrap();
    }
    let mut y = vec![0.0; 30];
    assert_eq!(
        m.mul_vec(&[1.0; 29], &mut y),
        Err(BandedError::LengthMismatch {
            what: "x",
            expected: 30,
            found: 29
        })
    );
    assert!(matches!(
        m.solve_in_place(&mut y),
        Err(BandedError::NotFactored { .. })
    ));
    m.factor().unwrap();
    assert!(matches!(
        m.mul_vec(&[1.0; 30], &mut y),
        Err(BandedError::NotAssembling { .. })
    ));
    let mut short = vec![1.0; 12];
    assert!(matches!(
        m.solve_in_place(&mut short),
        Err(BandedError::LengthMismatch { found: 12, .. })
    ));
    let mut rhs = vec![1.0; 30];
    rhs[13] = f64::NAN;
    assert_eq!(
        m.solve_in_place(&mut rhs),
        Err(BandedError::NonFiniteVector {
            what: "right-hand side",
            index: 13
        })
    );
    rhs[13] = 1.0;
    rhs[29] = f64::NEG_INFINITY;
    assert_eq!(
        m.solve_in_place(&mut rhs),
        Err(BandedError::NonFiniteVector {
            what: "right-hand side",
            index: 29
        })
    );
    // A finite system whose solution overflows: 1e300 / 1e-300.
    let mut tiny = BlockBandedMatrix::<f64>::new(1, 0).unwrap();
    tiny.set_diagonal(0, &SVector::repeat(1e-300)).unwrap();
    tiny.factor().unwrap();
    let mut big = [1e300; 6];
    assert_eq!(
        tiny.solve_in_place(&mut big),
        Err(BandedError::NonFiniteVector {
            what: "solution",
            index: 0
        })
    );
    let mut rhs = DVector::from_element(30, 4.0);
    m.solve_vector_in_place(&mut rhs).unwrap();
    assert!(rhs.iter().all(|&v| (v - 2.0).abs() < 1e-15));
    // Error messages say where.
    let e = BandedError::NotPositiveDefinite {
        block_row: 3,
        pivot: 2,
        value: -1.0,
        diagonal: 1.0,
    };
    assert!(e.to_string().contains("pivot 2 of block row 3 (row 20)"));
}

/// For a diagonal block only the lower triangle counts: a block with garbage above its
/// diagonal factors and multiplies like its symmetric lower part.
#[test]
fn diagonal_blocks_use_their_lower_triangle() {
    let prob = problem(4, 1, Family::Dd, 3);
    let mut sym = BlockBandedMatrix::<f64>::new(4, 1).unwrap();
    let mut garbage = BlockBandedMatrix::<f64>::new(4, 1).unwrap();
    for (i, j, blk) in &prob.blocks {
        sym.add_block(*i, *j, blk).unwrap();
        let mut g = *blk;
        if i == j {
            for r in 0..6 {
                for c in r + 1..6 {
                    g[(r, c)] = 1e3 * (r + c) as f64;
                }
            }
        }
        garbage.add_block(*i, *j, &g).unwrap();
    }
    let x: Vec<f64> = (0..24).map(|k| (k as f64).sin()).collect();
    let (mut y1, mut y2) = (vec![0.0; 24], vec![0.0; 24]);
    sym.mul_vec(&x, &mut y1).unwrap();
    garbage.mul_vec(&x, &mut y2).unwrap();
    assert_eq!(y1, y2);
    sym.factor().unwrap();
    garbage.factor().unwrap();
    let (mut s1, mut s2) = (x.clone(), x.clone());
    sym.solve_in_place(&mut s1).unwrap();
    garbage.solve_in_place(&mut s2).unwrap();
    assert_eq!(s1, s2);
}

// ---------------------------------------------------------------------------------
// No allocation after construction
// ---------------------------------------------------------------------------------

fn steady_state_allocations<T: BandScalar>() -> u64 {
    let (n, p) = (200, 3);
    let prob = problem(n, p, Family::Jjt, 11);
    let blocks: Vec<(usize, usize, Block<T>)> = prob
        .blocks
        .iter()
        .map(|(i, j, b)| (*i, *j, block_to::<T>(b)))
        .collect();
    let alpha = SVector::<T, 6>::repeat(T::cast(1e-3));
    let mut m = BlockBandedMatrix::<T>::new(n, p).unwrap();
    let mut rhs = DVector::<T>::from_element(6 * n, T::one());
    let x: Vec<T> = vec![T::one(); 6 * n];
    let mut y: Vec<T> = vec![T::zero(); 6 * n];
    let before = allocations();
    for step in 0..20 {
        m.reset();
        for (i, j, b) in &blocks {
            m.add_block(*i, *j, b).unwrap();
        }
        for i in 0..n {
            m.add_diagonal(i, &alpha).unwrap();
        }
        m.mul_vec(&x, &mut y).unwrap();
        m.factor().unwrap();
        rhs.fill(T::one());
        m.solve_vector_in_place(&mut rhs).unwrap();
        m.solve_in_place(y.as_mut_slice()).unwrap();
        // y = A·1 solved gives 1 back.
        assert!(y.iter().all(|v| (v.to_f64() - 1.0).abs() < 1e-2));
        if step == 10 {
            // Shrinking and growing back within the held storage reuses it.
            m.reshape(n / 2, p - 1).unwrap();
            m.reshape(n, p).unwrap();
        }
    }
    allocations() - before
}

#[test]
fn factor_and_solve_do_not_allocate_f64() {
    assert_eq!(steady_state_allocations::<f64>(), 0);
}

#[test]
fn factor_and_solve_do_not_allocate_f32() {
    assert_eq!(steady_state_allocations::<f32>(), 0);
}

/// The counter works: a Vec allocation in the measured thread is seen.
#[test]
fn counting_allocator_sees_an_allocation() {
    let before = allocations();
    let v: Vec<u64> = std::hint::black_box(Vec::with_capacity(16));
    assert!(allocations() > before);
    drop(v);
}

// ---------------------------------------------------------------------------------
// Row profiles (set_row_start)
// ---------------------------------------------------------------------------------

/// A rod's λ-system (q Gauss points per element of k + 1 nodes, 6 elements, random
/// gradient blocks, 𝓜⁻¹ and α̃) assembled twice, once with each row's profile start
/// set to its first coupled column ((e − 1)·q for row e·q + r): the blocks the
/// profiled factorisation skips are exact zeros in the full one, so both solutions are
/// bit for bit the same. Adding a block left of a profile is an error, as are starts
/// past the diagonal and starts after factoring.
#[test]
fn row_profile_skips_only_zero_blocks() {
    for k in 1..=3 {
        for q in [k, k + 1] {
            let elements = 6;
            let n = elements * q;
            let p = rod_block_bandwidth(q);
            let mut rng = Rng(1000 + 10 * k as u64 + q as u64);
            let grads: Vec<Vec<Block<f64>>> = (0..n)
                .map(|_| (0..=k).map(|_| rng.block()).collect())
                .collect();
            let inv_mass: Vec<SVector<f64, 6>> = (0..elements * k + 1)
                .map(|_| SVector::from_fn(|_, _| 0.5 + rng.unit()))
                .collect();
            let mut full = BlockBandedMatrix::<f64>::new(n, p).unwrap();
            let mut profiled = BlockBandedMatrix::<f64>::new(n, p).unwrap();
            // The same profile set at once (the skyline layout a rod uses).
            let mut at_once = BlockBandedMatrix::<f64>::new(n, p).unwrap();
            at_once
                .set_profile(|g| (g / q).saturating_sub(1) * q)
                .unwrap();
            for g in 0..n {
                let first = (g / q).saturating_sub(1) * q;
                // Row by row, each row first narrowed too far, then widened back.
                profiled.set_row_start(g, g).unwrap();
                profiled.set_row_start(g, first).unwrap();
                assert_eq!(profiled.row_start(g), Some(first.max(g.saturating_sub(p))));
                assert_eq!(at_once.row_start(g), profiled.row_start(g));
            }
            // Only the profile is stored: q(3q + 1)/2 blocks per element after the
            // first, whose q rows hold q(q + 1)/2.
            let stored = (elements - 1) * q * (3 * q + 1) / 2 + q * (q + 1) / 2;
            assert_eq!(at_once.stored_blocks(), stored);
            assert_eq!(profiled.stored_blocks(), stored);
            assert!(full.stored_blocks() > stored || q == 1);
            for g in 0..n {
                let (e, nodes_g) = (g / q, (g / q) * k..=(g / q) * k + k);
                for h in (e.saturating_sub(1) * q)..=g {
                    let base_h = (h / q) * k;
                    let mut a = Block::<f64>::zeros();
                    for (x, node) in nodes_g.clone().enumerate() {
                        if (base_h..=base_h + k).contains(&node) {
                            a += grads[g][x]
                                * Block::from_diagonal(&inv_mass[node])
                                * grads[h][node - base_h].transpose();
                        }
                    }
                    if g == h {
                        a += Block::identity() * 1e-3;
                    }
                    full.add_block(g, h, &a).unwrap();
                    profiled.add_block(g, h, &a).unwrap();
                    at_once.add_block(g, h, &a).unwrap();
                }
            }
            if q > 1 {
                // Row q (element 1, point 0) starts at column 0; row 2q at column q.
                let err = profiled.add_block(2 * q, q - 1, &Block::identity());
                assert!(
                    matches!(err, Err(BandedError::OutsideProfile { row, col, first })
                        if row == 2 * q && col == q - 1 && first == q),
                    "{err:?}"
                );
            }
            assert!(matches!(
                profiled.set_row_start(n, 0),
                Err(BandedError::OutOfRange { .. })
            ));
            assert!(matches!(
                profiled.set_row_start(1, 2),
                Err(BandedError::UpperBlock { .. })
            ));
            assert!(matches!(
                at_once.set_profile(|g| g + 1),
                Err(BandedError::UpperBlock { row: 0, col: 1 })
            ));
            let b: Vec<f64> = (0..6 * n).map(|_| rng.sym()).collect();
            let (mut x_full, mut x_prof) = (b.clone(), b.clone());
            let mut x_once = b.clone();
            let mut ax = vec![0.0; 6 * n];
            let mut ax_full = vec![0.0; 6 * n];
            at_once.mul_vec(&b, &mut ax).unwrap();
            full.mul_vec(&b, &mut ax_full).unwrap();
            assert_eq!(ax, ax_full, "k = {k}, q = {q}");
            full.factor().unwrap();
            profiled.factor().unwrap();
            at_once.factor().unwrap();
            full.solve_in_place(&mut x_full).unwrap();
            profiled.solve_in_place(&mut x_prof).unwrap();
            at_once.solve_in_place(&mut x_once).unwrap();
            assert_eq!(x_full, x_prof, "k = {k}, q = {q}");
            assert_eq!(x_full, x_once, "k = {k}, q = {q}");
            for g in 0..n {
                for h in profiled.row_start(g).unwrap()..=g {
                    assert_eq!(full.block(g, h).unwrap(), at_once.block(g, h).unwrap());
                }
            }
            assert!(matches!(
                profiled.set_row_start(1, 0),
                Err(BandedError::NotAssembling { .. })
            ));
        }
    }
}
