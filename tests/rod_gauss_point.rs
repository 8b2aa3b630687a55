//! The one-Gauss-point-at-a-time projection of a [`FemRod`] ([`RodSolve::GaussPoint`])
//! against the banded solve ([`RodSolve::Banded`]), paper Figure 11: a cantilever of 5
//! cubic elements (the Section 9.2 rod: E = 5 MPa, ν = 0.4, diameter 0.1 m, L = 1 m,
//! ρ = 1000 kg/m³, gravity 9.81 m/s² along −y) at Δt = 1e-2 s, one substep.
//!
//! * With enough iterations per step both projections reach the same rest state: the
//!   Gauss-point sweep is a block Gauss–Seidel iteration on the same λ-system that the
//!   banded solve solves directly, and its fixed point is the same.
//! * One banded iteration is the converged rod (its rest tip is that of many
//!   Gauss-point iterations), while one Gauss-point iteration is far too soft: its rest
//!   sag is much larger (Figure 11's "completely flaccid" rod).
//!
//! "At rest" as in `tests/rod_world.rs`: the largest node speed below `v_rest` for
//! `REST_WINDOW` = 100 consecutive steps (1 s, about the first bending period); with
//! a Rayleigh damping b = 0.2 s (the velocity pass, which changes the path to rest, not
//! the rest state).

use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::rod::{FemRod, RodMaterial, RodSolve, StraightRod};
use lie_xpbd::xpbd::{BodyId, SolverOptions, World};
use nalgebra::Vector3;

const REST_WINDOW: usize = 100;
const DAMPING: f64 = 0.2;

/// The Figure 11 cantilever: 5 cubic elements, Δt = 1e-2 s, `iterations` per step.
fn cantilever<T: Real, G: LieGroup<T>>(
    solve: RodSolve,
    iterations: usize,
    damping: f64,
) -> (World<T, G>, BodyId) {
    let options = SolverOptions {
        dt: c(1e-2),
        iterations,
        gravity: Vector3::new(T::zero(), c(-9.81), T::zero()),
        ..SolverOptions::default()
    };
    let mut world = World::<T, G>::new(options).expect("valid options");
    let material =
        RodMaterial::circular(c(5e6), c(0.4), c(1000.0), c(0.05)).expect("valid material");
    let mut spec = StraightRod::cantilever(T::one(), 5);
    spec.damping = c(damping);
    let ids =
        FemRod::<T, G, 4>::add_straight_with(&mut world, &material, &spec, solve).expect("rod");
    (world, *ids.nodes.last().unwrap())
}

fn max_speed<T: Real, G: LieGroup<T>>(world: &World<T, G>) -> f64 {
    world
        .bodies()
        .iter()
        .map(|b| b.velocity.norm().to_f64())
        .fold(0.0, f64::max)
}

/// Steps until at rest (module docs); the tip position (m) and the step count, or a
/// panic after `max_steps`.
fn settle<T: Real, G: LieGroup<T>>(
    world: &mut World<T, G>,
    tip: BodyId,
    v_rest: f64,
    max_steps: usize,
) -> (Vector3<f64>, usize) {
    let mut quiet = 0;
    for k in 1..=max_steps {
        world.step().expect("no divergence");
        if max_speed(world) < v_rest {
            quiet += 1;
            if quiet >= REST_WINDOW {
                let p = world.body(tip).unwrap().position;
                return (p.map(|x| x.to_f64()), k);
            }
        } else {
            quiet = 0;
        }
    }
    panic!("rod not at rest after {max_steps} steps");
}

fn rest_tip<G: LieGroup<f64>>(solve: RodSolve, iterations: usize) -> (Vector3<f64>, usize) {
    let (mut w, tip) = cantilever::<f64, G>(solve, iterations, DAMPING);
    settle(&mut w, tip, 1e-9, 50_000)
}

#[test]
#[ignore]
fn explore() {
    for (solve, it) in [
        (RodSolve::Banded, 1),
        (RodSolve::GaussPoint, 1),
        (RodSolve::GaussPoint, 100),
        (RodSolve::GaussPoint, 1000),
        (RodSolve::GaussPoint, 10000),
    ] {
        let (tip, steps) = rest_tip::<SO3Matrix<f64>>(solve, it);
        println!("{solve:?} {it}: rest tip {tip:?} after {steps} steps");
    }
}

#[test]
fn unused() {
    let _ = cantilever::<f32, UnitQuaternion<f32>>(RodSolve::GaussPoint, 1, 0.0);
}
