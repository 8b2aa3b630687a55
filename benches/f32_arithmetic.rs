//! Time of one `World::step` in f64, in f32 with the default compensated arithmetic and
//! in plain f32 (`SolverOptions::f32_arithmetic`, `F32Arithmetic::Plain`), rotation
//! matrices, on the two scenes of the README's f32 study:
//!
//! * `f32_arithmetic/pendulum_block/<f64|f32|f32_plain>`: the triple pendulum
//!   (Section 9.1) with the paper's setting (Δt = 1 ms, one substep, one iteration,
//!   block solve) without the primal correction pass, after 0.5 s of swinging;
//!   `pendulum_block_corrected/…` the same with the pass, as the shipped scene sets it.
//! * `f32_arithmetic/cantilever_cubic_40/<f64|f32|f32_plain>`: the Section 9.2
//!   cantilever of 40 cubic elements (Δt = 5 ms, one substep, one iteration), after 50
//!   steps.
//!
//! Run with `cargo bench --bench f32_arithmetic`; criterion writes its estimates to
//! `target/criterion/f32_arithmetic/<scene>/<variant>/`. The instruction counts of the
//! same steps come from `examples/step_profile.rs` and `examples/rod_profile.rs` (scalar
//! argument `f64`, `f32` or `f32-plain`) under callgrind.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix};
use lie_xpbd::linalg::BandScalar;
use lie_xpbd::rod::{FemRod, RodMaterial, StraightRod};
use lie_xpbd::scenes::pendulum::{self, PendulumConfig};
use lie_xpbd::xpbd::{F32Arithmetic, SolveMode, SolverOptions, World};
use std::hint::black_box;
use std::time::Duration;

/// The variants: (name, scalar is f32, arithmetic).
const VARIANTS: [(&str, bool, F32Arithmetic); 3] = [
    ("f64", false, F32Arithmetic::Compensated),
    ("f32", true, F32Arithmetic::Compensated),
    ("f32_plain", true, F32Arithmetic::Plain),
];

fn pendulum_world<T: BandScalar, G: LieGroup<T>>(
    arithmetic: F32Arithmetic,
    pass: bool,
) -> World<T, G> {
    let cfg = PendulumConfig {
        solve_mode: SolveMode::Block,
        primal_correction: pass,
        f32_arithmetic: arithmetic,
        ..PendulumConfig::default()
    };
    let mut world = pendulum::build::<T, G>(&cfg).expect("the default pendulum is valid");
    for _ in 0..500 {
        world
            .step()
            .expect("the pendulum does not diverge in 0.5 s");
    }
    world
}

fn cantilever_world<T: BandScalar>(arithmetic: F32Arithmetic) -> World<T, SO3Matrix<T>> {
    let options = SolverOptions {
        dt: c(5e-3),
        f32_arithmetic: arithmetic,
        ..SolverOptions::default()
    };
    let mut world = World::new(options).expect("valid options");
    let material =
        RodMaterial::circular(c(5e6), c(0.4), c(1000.0), c(0.05)).expect("valid material");
    FemRod::<T, SO3Matrix<T>, 4>::add_straight(
        &mut world,
        &material,
        &StraightRod::cantilever(T::one(), 40),
    )
    .expect("a valid rod");
    for _ in 0..50 {
        world.step().expect("the cantilever does not diverge");
    }
    world
}

fn time_steps<T: Real, G: LieGroup<T>>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: BenchmarkId,
    mut world: World<T, G>,
) {
    group.bench_function(id, |b| {
        b.iter(|| {
            world.step().expect("no divergence");
            black_box(&world);
        })
    });
}

fn steps(c: &mut Criterion) {
    let mut group = c.benchmark_group("f32_arithmetic");
    for (scene, pass) in [
        ("pendulum_block", false),
        ("pendulum_block_corrected", true),
    ] {
        for (name, f32, arithmetic) in VARIANTS {
            let id = BenchmarkId::new(scene, name);
            if f32 {
                time_steps(
                    &mut group,
                    id,
                    pendulum_world::<f32, SO3Matrix<f32>>(arithmetic, pass),
                );
            } else {
                time_steps(
                    &mut group,
                    id,
                    pendulum_world::<f64, SO3Matrix<f64>>(arithmetic, pass),
                );
            }
        }
    }
    for (name, f32, arithmetic) in VARIANTS {
        let id = BenchmarkId::new("cantilever_cubic_40", name);
        if f32 {
            time_steps(&mut group, id, cantilever_world::<f32>(arithmetic));
        } else {
            time_steps(&mut group, id, cantilever_world::<f64>(arithmetic));
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // Nine variants at ~4 s each.
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50);
    targets = steps
}
criterion_main!(benches);
