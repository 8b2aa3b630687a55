//! Runs the Section 9.2 cantilever (a [`FemRod`] clamped at the start, E = 5 MPa,
//! ν = 0.4, d = 0.1 m, L = 1 m, ρ = 1000 kg/m³, Δt = 5e-3 s, one substep, one
//! iteration, undamped, gravity −y) for a number of steps, for instruction counts per
//! `World::step` under callgrind:
//!
//! ```text
//! cargo build --release --example rod_profile
//! valgrind --tool=callgrind --toggle-collect='*measured_steps*' \
//!     target/release/examples/rod_profile cubic 40 f64 matrix 100
//! callgrind_annotate --inclusive=yes callgrind.out.<pid>
//! ```
//!
//! Arguments: element order (`linear`, `quadratic`, `cubic`), number of elements,
//! scalar (`f64`, `f32`, or `f32-plain` for plain f32 arithmetic,
//! `lie_xpbd::xpbd::F32Arithmetic::Plain`), rotation (`matrix`, `quaternion`), number of measured steps
//! (after 50 warm-up steps, so the rod is moving), optionally `gauss-point` for the
//! one-point-at-a-time projection instead of the banded solve (`banded` otherwise), and
//! optionally `time`: then it also prints the fastest wall time per step over chunks of
//! the measured step count (a rough figure on a shared machine; the criterion bench
//! `rod` is the reference). Only `measured_steps` is
//! collected with the toggle above: its total divided by the step count is the cost of
//! one step; the inclusive costs of `evaluate_element` (element kinematics and strain
//! gradients), `assemble` (∇C 𝓜⁻¹ ∇Cᵀ + α̃), `factor`, `solve_in_place` and
//! `node_corrections` split it by component. A rod whose band and Gauss-point cache together
//! exceed 512 KiB (e.g. 1,000 linear or 100 cubic elements in f64) is instead projected
//! in one streaming
//! pass: there `factor_row`, `forward_row` and `back_substitute_in_place` replace
//! `factor` and `solve_in_place`, and the assembly is part of `project_banded`'s own
//! cost.

use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::linalg::BandScalar;
use lie_xpbd::rod::{FemRod, RodMaterial, RodSolve, StraightRod};
use lie_xpbd::xpbd::{F32Arithmetic, SolverOptions, World};
use std::hint::black_box;

#[inline(never)]
fn measured_steps<T: Real, G: LieGroup<T>>(world: &mut World<T, G>, steps: usize) {
    for _ in 0..steps {
        world.step().expect("the cantilever does not diverge");
        black_box(&*world);
    }
}

fn run<T: BandScalar, G: LieGroup<T>, const N: usize>(
    elements: usize,
    steps: usize,
    solve: RodSolve,
    time: bool,
    arithmetic: F32Arithmetic,
) {
    let options = SolverOptions {
        dt: c(5e-3),
        f32_arithmetic: arithmetic,
        ..SolverOptions::default()
    };
    let mut world = World::<T, G>::new(options).expect("valid options");
    let material =
        RodMaterial::circular(c(5e6), c(0.4), c(1000.0), c(0.05)).expect("valid material");
    let ids = FemRod::<T, G, N>::add_straight_with(
        &mut world,
        &material,
        &StraightRod::cantilever(T::one(), elements),
        solve,
    )
    .expect("a valid rod");
    for _ in 0..50 {
        world.step().expect("the cantilever does not diverge");
    }
    measured_steps(&mut world, steps);
    if time {
        let mut best = f64::INFINITY;
        for _ in 0..20 {
            let t = std::time::Instant::now();
            measured_steps(&mut world, steps);
            best = best.min(t.elapsed().as_secs_f64() / steps as f64);
        }
        println!("fastest {:.1} µs per step", best * 1e6);
    }
    let tip = world.body(*ids.nodes.last().unwrap()).unwrap().position;
    println!(
        "{} nodes × {elements} elements, {} {} {solve:?}: tip after {} steps {tip:?}",
        N,
        G::NAME,
        T::NAME,
        50 + steps
    );
}

fn dispatch<T: BandScalar, G: LieGroup<T>>(
    order: &str,
    elements: usize,
    steps: usize,
    solve: RodSolve,
    time: bool,
    arithmetic: F32Arithmetic,
) {
    match order {
        "linear" => run::<T, G, 2>(elements, steps, solve, time, arithmetic),
        "quadratic" => run::<T, G, 3>(elements, steps, solve, time, arithmetic),
        _ => run::<T, G, 4>(elements, steps, solve, time, arithmetic),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.into());
    let order = arg(1, "cubic");
    let elements: usize = arg(2, "40").parse().expect("an element count");
    let steps: usize = arg(5, "100").parse().expect("a step count");
    let solve = if arg(6, "") == "gauss-point" {
        RodSolve::GaussPoint
    } else {
        RodSolve::Banded
    };
    let time = arg(7, "") == "time";
    let scalar = arg(3, "f64");
    let a = if scalar == "f32-plain" {
        F32Arithmetic::Plain
    } else {
        F32Arithmetic::Compensated
    };
    match (arg(4, "matrix").as_str(), scalar.starts_with("f32")) {
        ("quaternion", true) => {
            dispatch::<f32, UnitQuaternion<f32>>(&order, elements, steps, solve, time, a)
        }
        ("quaternion", false) => {
            dispatch::<f64, UnitQuaternion<f64>>(&order, elements, steps, solve, time, a)
        }
        (_, true) => dispatch::<f32, SO3Matrix<f32>>(&order, elements, steps, solve, time, a),
        _ => dispatch::<f64, SO3Matrix<f64>>(&order, elements, steps, solve, time, a),
    }
}
