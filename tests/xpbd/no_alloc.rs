//! A steady-state step of a rigid-body world allocates nothing on the heap: every
//! per-substep buffer (constraint values and gradients, the block system, λ) is sized
//! when the world is built (or on the first substep). Checked with a counting global allocator, for all four
//! combinations of scalar and representation and both solve modes, with and without
//! the velocity-level damping pass.

use lie_xpbd::joint::{JointFrame, Spherical};
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::linalg::BandScalar;
use lie_xpbd::scenes::pendulum::{self, PendulumConfig};
use lie_xpbd::xpbd::{Body, SolveMode, SolverOptions, World};
use nalgebra::Vector3;

use crate::alloc_counter;
use alloc_counter::allocations;

/// Builds the triple pendulum (3 bodies, 3 revolute joints, 4 substeps so the substep
/// loop runs more than once), takes 10 steps to reach a steady state, then counts the
/// allocations of 1000 more steps and energy evaluations. (`World::residuals`, a
/// diagnostic, allocates one buffer of 6 scalars per body per call.)
fn steady_state_allocations<T: BandScalar, G: LieGroup<T>>(mode: SolveMode) -> u64 {
    let cfg = PendulumConfig {
        solve_mode: mode,
        substeps: 4,
        ..PendulumConfig::default()
    };
    let mut world = pendulum::build::<T, G>(&cfg).expect("default pendulum");
    for _ in 0..10 {
        world.step().expect("no divergence");
    }
    let before = allocations();
    for _ in 0..1000 {
        world.step().expect("no divergence");
        std::hint::black_box(world.energy());
    }
    allocations() - before
}

/// A 3-link chain of compliant spherical joints with velocity-level damping (Section
/// 4.4), so the damping pass runs every substep: 10 warm-up steps, then the allocations
/// of 1000 steps.
fn damped_chain_allocations<T: Real, G: LieGroup<T>>(mode: SolveMode) -> u64 {
    let c = |x: f64| T::cast(x);
    let options = SolverOptions {
        solve_mode: mode,
        substeps: 2,
        ..SolverOptions::default()
    };
    let mut w = World::<T, G>::new(options).expect("valid options");
    let half = Vector3::new(c(0.5), c(0.0), c(0.0));
    let mut prev = None;
    for i in 0..3 {
        let body = Body::dynamic(
            c(1.0),
            Vector3::new(c(0.01), c(0.09), c(0.09)),
            Vector3::new(c(0.5 + i as f64), c(0.0), c(0.0)),
            G::identity(),
        )
        .expect("valid body");
        let id = w.add_body(body).expect("body added");
        let (b1, f1) = match prev {
            None => (None, JointFrame::identity()),
            Some(p) => (Some(p), JointFrame::new(half, G::identity())),
        };
        let joint = Spherical::new(b1, f1, Some(id), JointFrame::new(-half, G::identity()))
            .expect("valid joint")
            .with_compliance(&[c(1e-5); 3])
            .expect("valid compliance")
            .with_damping(&[c(2e-3); 3])
            .expect("valid damping");
        w.add_constraint(joint).expect("joint added");
        prev = Some(id);
    }
    for _ in 0..10 {
        w.step().expect("no divergence");
    }
    let before = allocations();
    for _ in 0..1000 {
        w.step().expect("no divergence");
    }
    allocations() - before
}

fn check<T: BandScalar, G: LieGroup<T>>() {
    for mode in [SolveMode::Block, SolveMode::Rows] {
        let n = damped_chain_allocations::<T, G>(mode);
        assert_eq!(
            n,
            0,
            "{} {} {} damped chain: {n} heap allocations in 1000 steps",
            G::NAME,
            T::NAME,
            mode.name()
        );
        let n = steady_state_allocations::<T, G>(mode);
        assert_eq!(
            n,
            0,
            "{} {} {}: {n} heap allocations in 1000 steady-state steps",
            G::NAME,
            T::NAME,
            mode.name()
        );
    }
}

#[test]
fn steady_state_step_does_not_allocate_matrix_f64() {
    check::<f64, SO3Matrix<f64>>();
}

#[test]
fn steady_state_step_does_not_allocate_quaternion_f64() {
    check::<f64, UnitQuaternion<f64>>();
}

#[test]
fn steady_state_step_does_not_allocate_matrix_f32() {
    check::<f32, SO3Matrix<f32>>();
}

#[test]
fn steady_state_step_does_not_allocate_quaternion_f32() {
    check::<f32, UnitQuaternion<f32>>();
}

/// The counter works: a Vec allocation in the measured thread is seen.
#[test]
fn counting_allocator_sees_an_allocation() {
    let before = allocations();
    let v: Vec<u64> = std::hint::black_box(Vec::with_capacity(16));
    assert!(allocations() > before);
    drop(v);
}
