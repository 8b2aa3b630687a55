//! Runs the 10-link limited hinge chain (masses alternating 1 kg and 1000 kg; the
//! `joint_chain` bench) for a number of steps, for instruction counts per
//! `World::step` under callgrind:
//!
//! ```text
//! cargo build --release --example chain_profile
//! valgrind --tool=callgrind --toggle-collect='*measured_steps*' \
//!     target/release/examples/chain_profile direct matrix f64 600
//! callgrind_annotate --inclusive=yes callgrind.out.<pid>
//! ```
//!
//! Arguments: solver (`direct`: the hinges and limits in one direct group;
//! `gauss_seidel`), rotation (`matrix`, `quaternion`), scalar (`f64`, `f32`), number of
//! measured steps of 1/60 s (one substep of 3 iterations each), after 60 warm-up steps
//! (1 s: the limits are engaged). Only `measured_steps` is collected with the toggle
//! above: its total divided by the step count is the cost of one step.

use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::xpbd::World;
use std::hint::black_box;

#[path = "../benches/common/chain.rs"]
mod common;

#[inline(never)]
fn measured_steps<T: Real, G: LieGroup<T>>(world: &mut World<T, G>, steps: usize) {
    for _ in 0..steps {
        // A Gauss–Seidel run of this chain may go astray; only its cost is measured.
        let _ = world.step();
        black_box(&*world);
    }
}

fn run<T: Real, G: LieGroup<T>>(direct: bool, steps: usize) {
    let mut world = common::chain::<T, G>(direct, 3);
    for _ in 0..60 {
        let _ = world.step();
    }
    measured_steps(&mut world, steps);
    let p = world.bodies()[9].position;
    println!(
        "{} {} {} after {} steps: tip link at {p:?}",
        if direct { "direct" } else { "gauss_seidel" },
        G::NAME,
        T::NAME,
        60 + steps
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.into());
    let direct = match get(0, "direct").as_str() {
        "direct" => true,
        "gauss_seidel" => false,
        other => {
            eprintln!("solver must be direct or gauss_seidel, not {other}");
            std::process::exit(2);
        }
    };
    let steps: usize = match get(3, "600").parse() {
        Ok(n) => n,
        Err(_) => {
            eprintln!("steps must be a number");
            std::process::exit(2);
        }
    };
    match (get(1, "matrix").as_str(), get(2, "f64").as_str()) {
        ("matrix", "f64") => run::<f64, SO3Matrix<f64>>(direct, steps),
        ("quaternion", "f64") => run::<f64, UnitQuaternion<f64>>(direct, steps),
        ("matrix", "f32") => run::<f32, SO3Matrix<f32>>(direct, steps),
        ("quaternion", "f32") => run::<f32, UnitQuaternion<f32>>(direct, steps),
        (r, s) => {
            eprintln!("rotation must be matrix or quaternion and scalar f64 or f32, not {r} {s}");
            std::process::exit(2);
        }
    }
}
