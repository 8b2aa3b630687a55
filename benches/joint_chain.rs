//! Time of ONE substep (`World::substep`) of the 10-link limited hinge chain with link
//! masses alternating 1 kg and 1000 kg (`tests/joint/chain_direct.rs`), at 3
//! iterations per substep: its 10 hinges and 10 limits solved as one direct group
//! (60 rows, block-tridiagonal; the setting that meets the chain's requirement at one
//! substep of 1/60 s), and, for scale, by Gauss–Seidel over the constraints (which does
//! not converge on this chain), for each rotation representation and scalar.
//!
//! Run with `cargo bench --bench joint_chain`; criterion writes its estimates to
//! `target/criterion/joint_chain_substep/<solver>/<rotation>_<scalar>/`. The chain has
//! swung for 1 s first, so its limits are engaged and the active set changes.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use std::hint::black_box;
use std::time::Duration;

#[path = "common/chain.rs"]
mod common;

fn bench_variant<T: Real, G: LieGroup<T>>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    direct: bool,
) {
    let mut world = common::chain::<T, G>(direct, 3);
    for _ in 0..60 {
        // Gauss–Seidel may report nothing but a finite state here; the bench only times.
        let _ = world.step();
    }
    let name = if direct {
        "direct_3it"
    } else {
        "gauss_seidel_3it"
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
    let mut group = c.benchmark_group("joint_chain_substep");
    for direct in [true, false] {
        bench_variant::<f64, SO3Matrix<f64>>(&mut group, direct);
        bench_variant::<f64, UnitQuaternion<f64>>(&mut group, direct);
        bench_variant::<f32, SO3Matrix<f32>>(&mut group, direct);
        bench_variant::<f32, UnitQuaternion<f32>>(&mut group, direct);
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50);
    targets = substep
}
criterion_main!(benches);
