//! Runs the triple pendulum (Section 9.1) for a number of steps, for instruction counts
//! per `World::step` under callgrind:
//!
//! ```text
//! cargo build --release --example step_profile
//! valgrind --tool=callgrind --toggle-collect='*measured_steps*' \
//!     target/release/examples/step_profile block matrix f64 10000
//! callgrind_annotate --inclusive=yes callgrind.out.<pid>
//! ```
//!
//! Arguments: solver (`block`, `rows`, `scalar`), rotation (`matrix`, `quaternion`), scalar
//! (`f64`, `f32`, or `f32-plain` for plain f32 arithmetic,
//! `lie_xpbd::xpbd::F32Arithmetic::Plain`), number of measured steps (after 500 warm-up steps, so the joints
//! carry load). Only `measured_steps` is collected with the toggle above: its total
//! divided by the step count is the cost of one step. A fifth argument `time` also
//! prints the fastest wall time per step over chunks of 1000 steps (a rough figure on a
//! shared machine; the criterion bench `pendulum` is the reference). An argument
//! `primal_correction` anywhere turns on the primal correction pass (as the shipped
//! pendulum scene does; the shipped robot scene does not); without it the step is the paper's plain XPBD step. An argument `rps`
//! anywhere runs the 3-RPS robot (`scenes/rps.toml`) instead of the pendulum.

use lie_xpbd::lie::{LieGroup, SO3Matrix, UnitQuaternion};
use lie_xpbd::linalg::BandScalar;
use lie_xpbd::scenes::pendulum::{self, PendulumConfig};
use lie_xpbd::xpbd::{F32Arithmetic, SolveMode, World};
use std::hint::black_box;

#[inline(never)]
fn measured_steps<T: BandScalar, G: LieGroup<T>>(world: &mut World<T, G>, steps: usize) {
    for _ in 0..steps {
        world.step().expect("the scene does not diverge");
        black_box(&*world);
    }
}

fn run<T: BandScalar, G: LieGroup<T>>(
    mode: SolveMode,
    steps: usize,
    time: bool,
    pc: bool,
    arithmetic: F32Arithmetic,
) {
    let mut world = if std::env::args().any(|a| a == "rps") {
        let mut scene = lie_xpbd::scenes::builtin("rps")
            .expect("rps is shipped")
            .expect("the shipped rps scene is valid");
        scene.set("solver.mode", mode.name()).expect("a solve mode");
        scene
            .set("solver.primal_correction", &pc.to_string())
            .expect("a flag");
        scene
            .set("solver.f32_arithmetic", arithmetic.name())
            .expect("an arithmetic");
        scene.build::<T, G>().expect("the rps scene builds").world
    } else {
        let cfg = PendulumConfig {
            solve_mode: mode,
            primal_correction: pc,
            f32_arithmetic: arithmetic,
            ..PendulumConfig::default()
        };
        pendulum::build::<T, G>(&cfg).expect("the default pendulum is valid")
    };
    for _ in 0..500 {
        world.step().expect("the scene does not diverge");
    }
    measured_steps(&mut world, steps);
    if time {
        let mut best = f64::INFINITY;
        for _ in 0..steps.div_ceil(1000) {
            let t = std::time::Instant::now();
            measured_steps(&mut world, 1000);
            best = best.min(t.elapsed().as_secs_f64() / 1000.0);
        }
        println!("fastest {:.3} µs per step", best * 1e6);
    }
    let p = world.bodies()[2].position;
    println!(
        "{} {} {} after {} steps: p2 = {p:?}",
        mode.name(),
        G::NAME,
        T::NAME,
        500 + steps
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.into());
    let mode = match arg(1, "block").as_str() {
        "rows" => SolveMode::Rows,
        "scalar" => SolveMode::Scalar,
        _ => SolveMode::Block,
    };
    let steps: usize = arg(4, "10000").parse().expect("a step count");
    let time = arg(5, "") == "time";
    let pc = args.iter().any(|a| a == "primal_correction");
    let scalar = arg(3, "f64");
    let a = if scalar == "f32-plain" {
        F32Arithmetic::Plain
    } else {
        F32Arithmetic::Compensated
    };
    match (arg(2, "matrix").as_str(), scalar.starts_with("f32")) {
        ("quaternion", true) => run::<f32, UnitQuaternion<f32>>(mode, steps, time, pc, a),
        ("quaternion", false) => run::<f64, UnitQuaternion<f64>>(mode, steps, time, pc, a),
        (_, true) => run::<f32, SO3Matrix<f32>>(mode, steps, time, pc, a),
        _ => run::<f64, SO3Matrix<f64>>(mode, steps, time, pc, a),
    }
}
