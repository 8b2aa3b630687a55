//! The one-Gauss-point-at-a-time projection of a [`FemRod`] ([`RodSolve::GaussPoint`])
//! against the banded solve ([`RodSolve::Banded`]), paper Figure 11: a cantilever of 5
//! cubic elements (the Section 9.2 rod: E = 5 MPa, ν = 0.4, diameter 0.1 m, L = 1 m,
//! ρ = 1000 kg/m³, gravity 9.81 m/s² along −y) at Δt = 1e-2 s, one substep.
//!
//! * A rod of one Gauss point (one linear element) has one 6×6 system: both
//!   projections are the same computation.
//! * One banded iteration reaches the rest state: more iterations do not move it, and
//!   its residuals (51)–(52) vanish there.
//! * The Gauss-point sweep converges with iterations, but to a fixed point of its own:
//!   each point moves the nodes along its gradient at the state it sees, and the
//!   λ accumulated over a sweep no longer satisfies the primal equation (51) with
//!   the final gradients (measured, 1 cubic element: |Δtip| = 3.1e-3 m against the
//!   banded rest state with 300 or 1000 iterations alike, primal residual 3.4e-3).
//!   That bias shrinks with the substep size h (3.1e-3, 8.3e-5, 1.0e-6 m for 1, 4 and
//!   16 substeps of 50 iterations): with enough substeps both reach the same rest state.
//! * One banded iteration has the rod's stiffness, while one Gauss-point iteration is
//!   far too soft (Figure 11's "completely flaccid" rod) and 100 are in between.
//!
//! "At rest" as in `tests/rod/world.rs`: the largest node speed below `v_rest` for
//! `REST_WINDOW` = 100 consecutive steps (1 s, about the first bending period); with
//! a Rayleigh damping b = 0.2 s (the velocity pass, which changes the path to rest, not
//! the rest state).

use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::linalg::BandScalar;
use lie_xpbd::rod::{FemRod, RodMaterial, RodSolve, StraightRod};
use lie_xpbd::xpbd::{BodyId, SolverOptions, World};
use nalgebra::Vector3;

const REST_WINDOW: usize = 100;
const DAMPING: f64 = 0.2;

/// The Figure 11 cantilever of `elements` cubic elements, Δt = 1e-2 s, `iterations`
/// per substep.
fn cantilever<T: BandScalar, G: LieGroup<T>>(
    elements: usize,
    solve: RodSolve,
    iterations: usize,
    substeps: usize,
    damping: f64,
) -> (World<T, G>, BodyId) {
    let options = SolverOptions {
        dt: c(1e-2),
        iterations,
        substeps,
        gravity: Vector3::new(T::zero(), c(-9.81), T::zero()),
        ..SolverOptions::default()
    };
    let mut world = World::<T, G>::new(options).expect("valid options");
    let material =
        RodMaterial::circular(c(5e6), c(0.4), c(1000.0), c(0.05)).expect("valid material");
    let mut spec = StraightRod::cantilever(T::one(), elements);
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

fn rest_tip<G: LieGroup<f64>>(
    elements: usize,
    solve: RodSolve,
    iterations: usize,
    substeps: usize,
) -> Vector3<f64> {
    let (mut w, tip) = cantilever::<f64, G>(elements, solve, iterations, substeps, DAMPING);
    settle(&mut w, tip, 1e-9, 50_000).0
}

/// One linear element has a single Gauss point, so the Gauss-point sweep is the banded
/// solve of one block: the same state after 100 steps of 3 iterations (to round-off,
/// from the two code paths' different summation orders), in both representations and
/// scalars.
fn single_point_rod_agrees<T: BandScalar, G: LieGroup<T>>(tol: f64) {
    let tips = [RodSolve::Banded, RodSolve::GaussPoint].map(|solve| {
        let options = SolverOptions {
            dt: c(1e-2),
            iterations: 3,
            gravity: Vector3::new(T::zero(), c(-9.81), T::zero()),
            ..SolverOptions::default()
        };
        let mut world = World::<T, G>::new(options).expect("valid options");
        let material =
            RodMaterial::circular(c(5e6), c(0.4), c(1000.0), c(0.05)).expect("valid material");
        let ids = FemRod::<T, G, 2>::add_straight_with(
            &mut world,
            &material,
            &StraightRod::cantilever(T::one(), 1),
            solve,
        )
        .expect("rod");
        for _ in 0..100 {
            world.step().expect("no divergence");
        }
        let p = world.body(*ids.nodes.last().unwrap()).unwrap().position;
        p.map(|x| x.to_f64())
    });
    let diff = (tips[0] - tips[1]).norm();
    println!(
        "{} {}: |banded tip − Gauss-point tip| = {diff:e} m",
        G::NAME,
        T::NAME
    );
    assert!(tips[0].y < -0.05, "{:?}", tips[0]);
    assert!(diff < tol, "{diff:e}");
}

#[test]
fn single_gauss_point_rod_is_the_same_solve() {
    // f64: a few ε of the 1 m positions; f32 (ε = 1.2e-7): 100 steps of round-off.
    single_point_rod_agrees::<f64, SO3Matrix<f64>>(1e-13);
    single_point_rod_agrees::<f64, UnitQuaternion<f64>>(1e-13);
    single_point_rod_agrees::<f32, SO3Matrix<f32>>(1e-5);
    single_point_rod_agrees::<f32, UnitQuaternion<f32>>(1e-5);
}

/// One banded iteration is already the rest state of many: the rest tips of 1 and 20
/// iterations agree to round-off, and the residuals vanish at rest.
#[test]
fn one_banded_iteration_reaches_the_rest_state() {
    let one = rest_tip::<SO3Matrix<f64>>(5, RodSolve::Banded, 1, 1);
    let twenty = rest_tip::<SO3Matrix<f64>>(5, RodSolve::Banded, 20, 1);
    println!(
        "5 cubic, banded: rest tip {one:?}; |1 − 20 iterations| = {:e} m",
        (one - twenty).norm()
    );
    assert!((one - twenty).norm() < 1e-12);
    let (mut w, tip) = cantilever::<f64, SO3Matrix<f64>>(5, RodSolve::Banded, 1, 1, DAMPING);
    settle(&mut w, tip, 1e-9, 50_000);
    let r = w.residuals();
    println!(
        "residuals at rest: primal {:e}, constraint {:e}",
        r.primal, r.constraint
    );
    assert!(r.primal < 1e-12 && r.constraint < 1e-12, "{r:?}");
}

/// The Gauss-point rest state approaches the banded one as the substeps shrink (module
/// docs): 1 cubic element, 50 iterations per substep; measured 3.1e-3, 8.3e-5, 1.0e-6 m.
#[test]
fn gauss_point_rest_state_approaches_banded_with_substeps() {
    let banded = rest_tip::<SO3Matrix<f64>>(1, RodSolve::Banded, 1, 1);
    let errors = [1, 4, 16].map(|substeps| {
        let tip = rest_tip::<SO3Matrix<f64>>(1, RodSolve::GaussPoint, 50, substeps);
        let e = (tip - banded).norm();
        println!(
            "1 cubic, Gauss-point, 50 iterations, {substeps} substeps: |tip − banded| = {e:e} m"
        );
        e
    });
    assert!(
        errors[0] > 1e-3,
        "the Gauss-point fixed point is biased: {errors:?}"
    );
    assert!(
        errors[1] < errors[0] / 10.0 && errors[2] < errors[1] / 10.0,
        "{errors:?}"
    );
    assert!(errors[2] < 1e-5, "{errors:?}");
}

/// Tip y (m) of the undamped Figure 11 cantilever over 3 s (300 steps): its mean over
/// the last 2 s and its lowest value.
fn figure_11_tip(solve: RodSolve, iterations: usize) -> (f64, f64) {
    let (mut w, tip) = cantilever::<f64, SO3Matrix<f64>>(5, solve, iterations, 1, 0.0);
    let mut ys = Vec::with_capacity(300);
    for _ in 0..300 {
        w.step().expect("no divergence");
        ys.push(w.body(tip).unwrap().position.y);
    }
    let mean = ys[100..].iter().sum::<f64>() / 200.0;
    (mean, ys.iter().copied().fold(f64::INFINITY, f64::min))
}

/// Figure 11: undamped, 5 cubic elements, Δt = 1e-2 s. Measured mean tip y over 1–3 s
/// (lowest): banded 1 iteration −0.340 (−0.613) m, Gauss-point 1 iteration −0.819
/// (−1.305) m, Gauss-point 100 iterations −0.500 (−0.834) m.
#[test]
fn figure_11_one_gauss_point_iteration_is_flaccid() {
    let banded = figure_11_tip(RodSolve::Banded, 1);
    let gp1 = figure_11_tip(RodSolve::GaussPoint, 1);
    let gp100 = figure_11_tip(RodSolve::GaussPoint, 100);
    for (name, (mean, min)) in [
        ("banded 1", banded),
        ("Gauss-point 1", gp1),
        ("Gauss-point 100", gp100),
    ] {
        println!("{name}: mean tip y over 1–3 s {mean:.4} m, lowest {min:.4} m");
    }
    assert!(gp1.0 < 2.0 * banded.0, "{gp1:?} vs {banded:?}");
    assert!(
        gp1.0 < gp100.0 && gp100.0 < banded.0,
        "{gp1:?} {gp100:?} {banded:?}"
    );
    // Below −1 m the 1 m rod hangs down and stretches: no bending stiffness left.
    assert!(gp1.1 < -1.0, "{gp1:?}");
}

/// The rest sags of Figure 11's three solves, damped (b = 0.2 s) to rest (ignored: the
/// 100-iteration Gauss-point rod needs ~1.5·10⁴ steps). Measured tip y: banded 1
/// iteration −0.3551 m, Gauss-point 1 iteration −1.0726 m (x = 0.094 m: hanging),
/// Gauss-point 100 iterations −0.5862 m.
#[test]
#[ignore]
fn figure_11_rest_sags() {
    for (solve, iterations) in [
        (RodSolve::Banded, 1),
        (RodSolve::GaussPoint, 1),
        (RodSolve::GaussPoint, 100),
    ] {
        let tip = rest_tip::<SO3Matrix<f64>>(5, solve, iterations, 1);
        println!("{solve:?}, {iterations} iterations: rest tip {tip:?}");
    }
}

use crate::alloc_counter;
use alloc_counter::allocations;

/// A steady-state step of the Gauss-point projection (and its damping pass) allocates
/// nothing on the heap.
#[test]
fn gauss_point_step_does_not_allocate() {
    fn count<T: BandScalar, G: LieGroup<T>>(damping: f64) -> u64 {
        let (mut w, _) = cantilever::<T, G>(3, RodSolve::GaussPoint, 4, 1, damping);
        for _ in 0..10 {
            w.step().expect("no divergence");
        }
        let before = allocations();
        for _ in 0..100 {
            w.step().expect("no divergence");
        }
        allocations() - before
    }
    for damping in [0.0, DAMPING] {
        assert_eq!(count::<f64, SO3Matrix<f64>>(damping), 0);
        assert_eq!(count::<f32, UnitQuaternion<f32>>(damping), 0);
    }
}
