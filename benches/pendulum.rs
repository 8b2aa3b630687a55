//! Time of ONE substep (`World::substep`) of the triple pendulum (Section 9.1, Table 1),
//! for each solve mode (block, rows, scalar: the normed joints of Section 5.1),
//! rotation representation (matrix, quaternion) and scalar (f64, f32), as the shipped
//! scene sets it (with the primal correction pass,
//! `SolverOptions::primal_correction`), and block and rows without the pass
//! (`block_uncorrected`, `rows_uncorrected`: the paper's plain XPBD step).
//!
//! Run with `cargo bench --bench pendulum`; criterion writes its estimates (mean,
//! median, …) to `target/criterion/pendulum_substep/<solver>/<rotation>_<scalar>/`.
//! The paper reports 1.29 µs (block) and 1.39 µs (rows) per substep.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use lie_xpbd::lie::{LieGroup, SO3Matrix, UnitQuaternion};
use lie_xpbd::linalg::BandScalar;
use lie_xpbd::scenes::pendulum::{self, PendulumConfig};
use lie_xpbd::xpbd::{SolveMode, World};
use std::hint::black_box;
use std::time::Duration;

/// The pendulum with the paper's settings and `mode`, swinging for 0.5 s so the
/// joints carry load and the bodies have turned (not the special case at rest).
fn swinging<T: BandScalar, G: LieGroup<T>>(mode: SolveMode, pass: bool) -> World<T, G> {
    let cfg = PendulumConfig {
        solve_mode: mode,
        primal_correction: pass,
        ..PendulumConfig::default()
    };
    let mut world = pendulum::build::<T, G>(&cfg).expect("the default pendulum is valid");
    for _ in 0..500 {
        world
            .step()
            .expect("the default pendulum does not diverge in 0.5 s");
    }
    world
}

fn bench_variant<T: BandScalar, G: LieGroup<T>>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    mode: SolveMode,
    pass: bool,
) {
    let mut world = swinging::<T, G>(mode, pass);
    let name = if pass {
        mode.name().to_string()
    } else {
        format!("{}_uncorrected", mode.name())
    };
    let id = BenchmarkId::new(name, format!("{}_{}", G::NAME, T::NAME));
    group.bench_function(id, |b| {
        b.iter(|| {
            world.substep();
            black_box(&world);
        })
    });
}

fn substep(c: &mut Criterion) {
    let mut group = c.benchmark_group("pendulum_substep");
    for pass in [true, false] {
        // The normed joints of scalar mode never take the pass: one scalar variant.
        let modes: &[SolveMode] = if pass {
            &[SolveMode::Block, SolveMode::Rows, SolveMode::Scalar]
        } else {
            &[SolveMode::Block, SolveMode::Rows]
        };
        for &mode in modes {
            bench_variant::<f64, SO3Matrix<f64>>(&mut group, mode, pass);
            bench_variant::<f64, UnitQuaternion<f64>>(&mut group, mode, pass);
            bench_variant::<f32, SO3Matrix<f32>>(&mut group, mode, pass);
            bench_variant::<f32, UnitQuaternion<f32>>(&mut group, mode, pass);
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // Twenty variants at ~4 s each: a full run takes about a minute and a half.
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50);
    targets = substep
}
criterion_main!(benches);
