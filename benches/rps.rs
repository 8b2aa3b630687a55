//! Time of ONE substep (`World::substep`) of the 3-RPS parallel robot (Section 9.1,
//! Table 1; `scenes/rps.toml`), in each solve mode (`block`, `rows`, `scalar`: the normed
//! joints of Section 5.1), f64 and f32 rotation matrices, as the shipped scene sets it
//! (without the primal correction pass: the paper's plain XPBD step), and block and
//! rows with the pass turned on (`block_corrected`, `rows_corrected`).
//!
//! Run with `cargo bench --bench rps`; criterion writes its estimates to
//! `target/criterion/rps_substep/<run>/<rotation>_<scalar>/`. The paper's C++ takes
//! about 5.2 µs per substep on this machine.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use lie_xpbd::lie::{LieGroup, SO3Matrix};
use lie_xpbd::linalg::BandScalar;
use lie_xpbd::xpbd::World;
use std::hint::black_box;
use std::time::Duration;

/// The shipped robot in `mode` (which leaves the pass off), with the pass turned on if
/// `pass`, after 0.2 s of its drive (the plate tilted and precessing, every joint
/// loaded).
fn driven<T: BandScalar, G: LieGroup<T>>(mode: &str, pass: bool) -> World<T, G> {
    let mut scene = lie_xpbd::scenes::builtin("rps")
        .expect("rps is shipped")
        .expect("the shipped rps scene is valid");
    scene.set("solver.mode", mode).expect("a solve mode");
    if pass {
        scene
            .set("solver.primal_correction", "true")
            .expect("a flag");
    }
    let mut world = scene.build::<T, G>().expect("the rps scene builds").world;
    for _ in 0..200 {
        world.step().expect("the robot does not diverge in 0.2 s");
    }
    world
}

fn bench_variant<T: BandScalar, G: LieGroup<T>>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    mode: &str,
    pass: bool,
) {
    let mut world = driven::<T, G>(mode, pass);
    let name = if pass {
        format!("{mode}_corrected")
    } else {
        mode.to_string()
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
    let mut group = c.benchmark_group("rps_substep");
    for (mode, pass) in [
        ("block", false),
        ("rows", false),
        ("scalar", false),
        ("block", true),
        ("rows", true),
    ] {
        bench_variant::<f64, SO3Matrix<f64>>(&mut group, mode, pass);
        bench_variant::<f32, SO3Matrix<f32>>(&mut group, mode, pass);
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // Ten variants at ~4 s each.
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50);
    targets = substep
}
criterion_main!(benches);
