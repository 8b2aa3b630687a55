//! Cost of the block-banded Cholesky solver of `lie_xpbd::rod::banded` (paper Section
//! 8.2): one factorisation plus one solve of an SPD matrix of n block rows of 6×6
//! blocks with block bandwidth p, for p = 1, 3, 5 (linear, quadratic, cubic elements
//! with reduced integration) and n up to 2000 block rows, in f64 and in f32.
//!
//! Measured, as criterion groups `rod_banded_<scalar>_p<p>/factor_solve/<n>`: the time
//! of `factor()` followed by `solve_in_place()`; the matrix and the right-hand side are
//! restored from a copy before each iteration outside the timed region
//! (`iter_batched_ref`). Throughput is set to n elements, so criterion's elements/s
//! figure is block rows per second; the cost should be linear in n (O(n·p²·6³)).
//!
//! The matrices are diagonally dominant with entries uniform in [−1, 1] (the values
//! only matter through denormals, which they avoid).
//!
//! Run with `cargo bench --bench rod_banded`; a short run is
//! `cargo bench --bench rod_banded -- --warm-up-time 1 --measurement-time 3`. Estimates
//! are in `target/criterion/rod_banded_<scalar>_p<p>/factor_solve/<n>/new/estimates.json`.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use lie_xpbd::linalg::banded::{BandScalar, Block, BlockBandedMatrix};
use std::hint::black_box;

const SIZES: [usize; 6] = [20, 50, 100, 300, 1000, 2000];

/// SplitMix64: deterministic inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        2.0 * ((z >> 11) as f64 / (1u64 << 53) as f64) - 1.0
    }
}

/// A diagonally dominant SPD matrix: off-diagonal entries in [−1, 1], each diagonal
/// entry 1 + the largest possible absolute off-diagonal row sum, 6(2p + 1).
fn matrix<T: BandScalar>(n: usize, p: usize) -> BlockBandedMatrix<T> {
    let mut rng = Rng(n as u64 * 31 + p as u64);
    let mut m = BlockBandedMatrix::<T>::new(n, p).expect("valid shape");
    let diag = T::cast(1.0 + (6 * (2 * p + 1)) as f64);
    for i in 0..n {
        for j in i.saturating_sub(p)..=i {
            let mut b = Block::<T>::from_fn(|_, _| T::cast(rng.next()));
            if i == j {
                b = (b + b.transpose()) * T::cast(0.5);
                for r in 0..6 {
                    b[(r, r)] = diag;
                }
            }
            m.add_block(i, j, &b).expect("in band");
        }
    }
    m
}

fn bench_scalar<T: BandScalar>(c: &mut Criterion, p: usize) {
    let mut group = c.benchmark_group(format!("rod_banded_{}_p{p}", T::NAME));
    for n in SIZES {
        let m = matrix::<T>(n, p);
        let mut rng = Rng(7);
        let b: Vec<T> = (0..6 * n).map(|_| T::cast(rng.next())).collect();
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("factor_solve", n), |bench| {
            bench.iter_batched_ref(
                || (m.clone(), b.clone()),
                |(m, x)| {
                    m.factor().expect("SPD");
                    m.solve_in_place(x).expect("finite");
                    black_box(&*x);
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    for p in [1, 3, 5] {
        bench_scalar::<f64>(c, p);
        bench_scalar::<f32>(c, p);
    }
}

criterion_group!(rod_banded, benches);
criterion_main!(rod_banded);
