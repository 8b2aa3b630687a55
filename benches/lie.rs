//! Cost of the Lie-group primitives of `lie_xpbd::lie`, for each rotation
//! representation (matrix, quaternion) and scalar (f64, f32), next to nalgebra's own
//! Exp/Log (`UnitQuaternion::from_scaled_axis`/`scaled_axis`,
//! `Rotation3::from_scaled_axis`/`scaled_axis`).
//!
//! Measured, as criterion groups `lie/<op>/<variant>`:
//! - `lie/exp`, `lie/log`: `G::exp`, `G::log` (variants `matrix_f64`, `quaternion_f64`,
//!   `matrix_f32`, `quaternion_f32`) and nalgebra's (variants
//!   `nalgebra_quaternion_<scalar>`, `nalgebra_rotation_<scalar>`);
//! - `lie/boxplus`, `lie/boxminus`, `lie/interpolate`: `G::boxplus`, `G::boxminus`
//!   and `G::interpolate` (`a ⊞ t·(b ⊟ a)`), per representation and scalar;
//! - `lie/right_jacobian`, `lie/right_jacobian_inv`: Γ and Γ⁻¹ (`lie::so3`), which
//!   depend on the scalar only (variants `f64`, `f32`).
//!
//! Inputs are generic rotations: [`N`] fixed pseudo-random rotation vectors (uniform
//! directions, angles stratified over (0, π) and shuffled, so both the series and the
//! closed-form branches of the coefficients are taken, in no predictable order), the
//! rotations `Exp` of them, and pairs of such rotations. One criterion iteration runs
//! the operation on all [`N`] inputs, each input and result passed through
//! `black_box`; criterion's reported time is therefore per [`N`] calls (throughput is
//! set to [`N`] elements, so the elements/s figure is calls per second).
//!
//! Run with `cargo bench --bench lie` (about two minutes after the build); criterion
//! writes its estimates to `target/criterion/lie_<op>/<variant>/new/estimates.json`.
//! Filter with e.g. `cargo bench --bench lie -- lie/exp/`.

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use lie_xpbd::lie::{so3, LieGroup, Real, SO3Matrix, UnitQuaternion};
use nalgebra::{Rotation3, Vector3};
use std::hint::black_box;
use std::time::Duration;

/// Number of inputs cycled through in one iteration.
const N: usize = 64;

/// Offset pairing input `i` with input `(i + PAIR) % N` for two-argument operations.
const PAIR: usize = 17;

/// SplitMix64: a tiny deterministic generator, so the inputs are the same on every run
/// and need no dependency.
struct SplitMix64(u64);

impl SplitMix64 {
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
}

/// [`N`] rotation vectors: directions uniform on the sphere, angles π(k + u)/N (one per
/// stratum of (0, π), u uniform in (0, 1)), in shuffled order.
fn rotation_vectors<T: Real>() -> Vec<Vector3<T>> {
    let mut rng = SplitMix64(0x2545_F491_4F6C_DD1D);
    let mut out: Vec<Vector3<f64>> = (0..N)
        .map(|k| {
            let angle = std::f64::consts::PI * (k as f64 + 0.01 + 0.98 * rng.unit()) / N as f64;
            let z = 2.0 * rng.unit() - 1.0;
            let phi = 2.0 * std::f64::consts::PI * rng.unit();
            let r = (1.0 - z * z).sqrt();
            Vector3::new(r * phi.cos(), r * phi.sin(), z) * angle
        })
        .collect();
    for i in (1..N).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        out.swap(i, j);
    }
    out.into_iter().map(|v| v.map(T::cast)).collect()
}

/// [`N`] interpolation parameters in [0, 1).
fn parameters<T: Real>() -> Vec<T> {
    let mut rng = SplitMix64(0x0123_4567_89AB_CDEF);
    (0..N).map(|_| T::cast(rng.unit())).collect()
}

/// Runs `f` on every element of `inputs` per iteration, through `black_box`.
fn bench_over<I, O>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    inputs: &[I],
    f: impl Fn(&I) -> O,
) {
    group.bench_function(id, |b| {
        b.iter(|| {
            for x in inputs {
                black_box(f(black_box(x)));
            }
        })
    });
}

fn variant<T: Real, G: LieGroup<T>>() -> String {
    format!("{}_{}", G::NAME, T::NAME)
}

fn bench_exp<T: Real, G: LieGroup<T>>(group: &mut BenchmarkGroup<'_, WallTime>) {
    bench_over(group, &variant::<T, G>(), &rotation_vectors::<T>(), |v| {
        G::exp(v)
    });
}

fn bench_log<T: Real, G: LieGroup<T>>(group: &mut BenchmarkGroup<'_, WallTime>) {
    let rotations: Vec<G> = rotation_vectors::<T>().iter().map(G::exp).collect();
    bench_over(group, &variant::<T, G>(), &rotations, |r| r.log());
}

fn bench_nalgebra_exp<T: Real>(group: &mut BenchmarkGroup<'_, WallTime>) {
    let v = rotation_vectors::<T>();
    bench_over(
        group,
        &format!("nalgebra_quaternion_{}", T::NAME),
        &v,
        |v| UnitQuaternion::from_scaled_axis(*v),
    );
    bench_over(group, &format!("nalgebra_rotation_{}", T::NAME), &v, |v| {
        Rotation3::from_scaled_axis(*v)
    });
}

fn bench_nalgebra_log<T: Real>(group: &mut BenchmarkGroup<'_, WallTime>) {
    let v = rotation_vectors::<T>();
    let q: Vec<UnitQuaternion<T>> = v
        .iter()
        .map(|v| UnitQuaternion::from_scaled_axis(*v))
        .collect();
    let r: Vec<Rotation3<T>> = v.iter().map(|v| Rotation3::from_scaled_axis(*v)).collect();
    bench_over(
        group,
        &format!("nalgebra_quaternion_{}", T::NAME),
        &q,
        |q| q.scaled_axis(),
    );
    bench_over(group, &format!("nalgebra_rotation_{}", T::NAME), &r, |r| {
        r.scaled_axis()
    });
}

fn bench_boxplus<T: Real, G: LieGroup<T>>(group: &mut BenchmarkGroup<'_, WallTime>) {
    let v = rotation_vectors::<T>();
    let pairs: Vec<(G, Vector3<T>)> = (0..N).map(|i| (G::exp(&v[i]), v[(i + PAIR) % N])).collect();
    bench_over(group, &variant::<T, G>(), &pairs, |(r, d)| r.boxplus(d));
}

/// Pairs of rotations `(Exp vᵢ, Exp vᵢ₊PAIR)`.
fn rotation_pairs<T: Real, G: LieGroup<T>>() -> Vec<(G, G)> {
    let v = rotation_vectors::<T>();
    (0..N)
        .map(|i| (G::exp(&v[i]), G::exp(&v[(i + PAIR) % N])))
        .collect()
}

fn bench_boxminus<T: Real, G: LieGroup<T>>(group: &mut BenchmarkGroup<'_, WallTime>) {
    bench_over(
        group,
        &variant::<T, G>(),
        &rotation_pairs::<T, G>(),
        |(a, b)| a.boxminus(b),
    );
}

fn bench_interpolate<T: Real, G: LieGroup<T>>(group: &mut BenchmarkGroup<'_, WallTime>) {
    let inputs: Vec<(G, G, T)> = rotation_pairs::<T, G>()
        .into_iter()
        .zip(parameters::<T>())
        .map(|((a, b), t)| (a, b, t))
        .collect();
    bench_over(group, &variant::<T, G>(), &inputs, |(a, b, t)| {
        a.interpolate(b, *t)
    });
}

/// A group `lie/<op>` with the short measurement settings and a throughput of [`N`].
fn group<'a>(c: &'a mut Criterion, op: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(format!("lie/{op}"));
    g.throughput(Throughput::Elements(N as u64));
    g
}

/// Runs `$f::<T, G>` for the four representation × scalar combinations.
macro_rules! all_combinations {
    ($f:ident, $g:expr) => {
        $f::<f64, SO3Matrix<f64>>($g);
        $f::<f64, UnitQuaternion<f64>>($g);
        $f::<f32, SO3Matrix<f32>>($g);
        $f::<f32, UnitQuaternion<f32>>($g);
    };
}

fn exp(c: &mut Criterion) {
    let mut g = group(c, "exp");
    all_combinations!(bench_exp, &mut g);
    bench_nalgebra_exp::<f64>(&mut g);
    bench_nalgebra_exp::<f32>(&mut g);
    g.finish();
}

fn log(c: &mut Criterion) {
    let mut g = group(c, "log");
    all_combinations!(bench_log, &mut g);
    bench_nalgebra_log::<f64>(&mut g);
    bench_nalgebra_log::<f32>(&mut g);
    g.finish();
}

fn boxplus(c: &mut Criterion) {
    let mut g = group(c, "boxplus");
    all_combinations!(bench_boxplus, &mut g);
    g.finish();
}

fn boxminus(c: &mut Criterion) {
    let mut g = group(c, "boxminus");
    all_combinations!(bench_boxminus, &mut g);
    g.finish();
}

fn right_jacobians(c: &mut Criterion) {
    fn both<T: Real>(
        g: &mut BenchmarkGroup<'_, WallTime>,
        f: impl Fn(&Vector3<T>) -> nalgebra::Matrix3<T>,
    ) {
        bench_over(g, T::NAME, &rotation_vectors::<T>(), f);
    }
    let mut g = group(c, "right_jacobian");
    both::<f64>(&mut g, so3::right_jacobian);
    both::<f32>(&mut g, so3::right_jacobian);
    g.finish();
    let mut g = group(c, "right_jacobian_inv");
    both::<f64>(&mut g, so3::right_jacobian_inv);
    both::<f32>(&mut g, so3::right_jacobian_inv);
    g.finish();
}

fn interpolation(c: &mut Criterion) {
    let mut g = group(c, "interpolate");
    all_combinations!(bench_interpolate, &mut g);
    g.finish();
}

criterion_group! {
    name = benches;
    // 32 benchmarks at ~3 s each (1 s warm-up, 2 s measurement) plus analysis: a full
    // run takes about two minutes.
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    targets = exp, log, boxplus, boxminus, right_jacobians, interpolation
}
criterion_main!(benches);
