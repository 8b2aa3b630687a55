//! Cost of one time step of a world holding one finite-element Cosserat rod
//! (`lie_xpbd::rod::FemRod`, the block-banded solve of paper Section 8.2): the Section
//! 9.2 cantilever (E = 5 MPa, ν = 0.4, diameter 0.1 m, L = 1 m, ρ = 1000 kg/m³,
//! Δt = 5e-3 s, one substep, one iteration, undamped), f64, rotation matrices.
//!
//! Measured, as criterion group `rod_step/<order>_<elements>`: `World::step` after 50
//! warm-up steps (the rod is moving, as in the convergence study): cubic 40 elements,
//! quadratic 40, linear 160 (the paper's Table 2 sizes of the same order).
//!
//! Run with `cargo bench --bench rod -- --warm-up-time 1 --measurement-time 3`.

use criterion::{criterion_group, criterion_main, Criterion};
use lie_xpbd::lie::SO3Matrix;
use lie_xpbd::rod::{FemRod, RodMaterial, StraightRod};
use lie_xpbd::xpbd::{SolverOptions, World};
use std::hint::black_box;

fn world<const N: usize>(elements: usize) -> World<f64, SO3Matrix<f64>> {
    let options = SolverOptions {
        dt: 5e-3,
        ..SolverOptions::default()
    };
    let mut world = World::new(options).expect("valid options");
    let material = RodMaterial::circular(5e6, 0.4, 1000.0, 0.05).expect("valid material");
    FemRod::<f64, SO3Matrix<f64>, N>::add_straight(
        &mut world,
        &material,
        &StraightRod::cantilever(1.0, elements),
    )
    .expect("rod");
    for _ in 0..50 {
        world.step().expect("no divergence");
    }
    world
}

fn bench_step<const N: usize>(c: &mut Criterion, name: &str, elements: usize) {
    let mut w = world::<N>(elements);
    c.benchmark_group("rod_step")
        .bench_function(format!("{name}_{elements}"), |b| {
            b.iter(|| {
                w.step().expect("no divergence");
                black_box(&w);
            })
        });
}

fn rod_step(c: &mut Criterion) {
    bench_step::<4>(c, "cubic", 40);
    bench_step::<3>(c, "quadratic", 40);
    bench_step::<2>(c, "linear", 160);
}

criterion_group!(benches, rod_step);
criterion_main!(benches);
