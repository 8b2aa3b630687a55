//! The primal correction pass (`SolverOptions::primal_correction`): after the
//! projections of a substep, every body moves by −𝓜⁻¹r, r = 𝓜(x ⊟ x̃) − ∇C(x)ᵀλ the
//! residual of (51) at the end state.
//!
//! What it must do, on the triple pendulum of Section 9.1 (Δt = 1 ms, 1 substep, 1
//! iteration, block solves), against the paper's plain XPBD step (the pass off):
//! * the median primal residual over 0–15 s at most 2.5e-9 (the paper's own code: 2.6e-9)
//!   and the median constraint residual at most 3.3e-5 (the paper's: 3.35e-5);
//! * leave the constraint residual (52) as it was: λ is kept, and the move 𝓜⁻¹r is of
//!   the order of the primal residual over the masses (~1e-10 m here), far below the
//!   joints' ~2e-5 m;
//! * never be applied to constraints whose gradient jumps at C = 0 (the normed joints of
//!   the scalar baseline), where it would undo their corrections, nor in a world with
//!   rods, whose stiff rows on light nodes make the explicit step grow;
//! * inject no energy, in f64 and f32, matrix and quaternion.

use lie_xpbd::lie::{LieGroup, SO3Matrix, UnitQuaternion};
use lie_xpbd::linalg::BandScalar;
use lie_xpbd::rod::{FemRod, RodMaterial, StraightRod};
use lie_xpbd::scenes::pendulum::{self, PendulumConfig};
use lie_xpbd::xpbd::{SolveMode, SolverOptions, World};
use nalgebra::Vector3;

struct Run {
    primal: Vec<f64>,
    constraint: Vec<f64>,
    max_energy_gain: f64,
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn run<T: BandScalar, G: LieGroup<T>>(seconds: f64, mode: SolveMode, pass: bool) -> Run {
    let cfg = PendulumConfig {
        seconds,
        solve_mode: mode,
        primal_correction: pass,
        ..PendulumConfig::default()
    };
    let mut world: World<T, G> = pendulum::build(&cfg).unwrap();
    let e0 = world.energy().to_f64();
    let mut out = Run {
        primal: Vec::new(),
        constraint: Vec::new(),
        max_energy_gain: f64::NEG_INFINITY,
    };
    for _ in 0..cfg.steps() {
        world.step().unwrap();
        let r = world.residuals();
        out.primal.push(r.primal.to_f64());
        out.constraint.push(r.constraint.to_f64());
        out.max_energy_gain = out.max_energy_gain.max(world.energy().to_f64() - e0);
    }
    out
}

/// The numbers over 0–15 s, both representations (f64).
fn meets_paper_residuals<G: LieGroup<f64>>() {
    let with = run::<f64, G>(15.0, SolveMode::Block, true);
    let (p, c) = (median(&with.primal), median(&with.constraint));
    assert!(p <= 2.5e-9, "{}: median primal {p:e}", G::NAME);
    assert!(c <= 3.3e-5, "{}: median constraint {c:e}", G::NAME);
    // Against the plain step: the pass explains the motion by the end-state forces
    // (measured ratio ~2e-4), and the constraint residual moves by well under 1%.
    let plain = run::<f64, G>(15.0, SolveMode::Block, false);
    let (p0, c0) = (median(&plain.primal), median(&plain.constraint));
    assert!(p < 1e-3 * p0, "{}: {p:e} against {p0:e}", G::NAME);
    assert!(
        (c - c0).abs() < 1e-2 * c0,
        "{}: {c:e} against {c0:e}",
        G::NAME
    );
}

#[test]
fn pendulum_block_residuals_beat_the_paper_matrix() {
    meets_paper_residuals::<SO3Matrix<f64>>();
}

#[test]
fn pendulum_block_residuals_beat_the_paper_quaternion() {
    meets_paper_residuals::<UnitQuaternion<f64>>();
}

#[test]
fn rows_mode_gains_as_much() {
    let with = run::<f64, SO3Matrix<f64>>(2.0, SolveMode::Rows, true);
    let plain = run::<f64, SO3Matrix<f64>>(2.0, SolveMode::Rows, false);
    let (p, p0) = (median(&with.primal), median(&plain.primal));
    assert!(p < 1e-3 * p0, "{p:e} against {p0:e}");
}

#[test]
fn the_pass_is_skipped_for_normed_joints() {
    let cfg = PendulumConfig {
        seconds: 2.0,
        solve_mode: SolveMode::Scalar,
        primal_correction: true,
        ..PendulumConfig::default()
    };
    let mut world: World<f64, SO3Matrix<f64>> = pendulum::build(&cfg).unwrap();
    assert!(world.options().primal_correction);
    assert!(!world.primal_correction_applies());
    // Identical to the run without the pass, step for step.
    let mut plain: World<f64, SO3Matrix<f64>> = pendulum::build(&PendulumConfig {
        primal_correction: false,
        ..cfg
    })
    .unwrap();
    for _ in 0..cfg.steps() {
        world.step().unwrap();
        plain.step().unwrap();
    }
    for (a, b) in world.bodies().iter().zip(plain.bodies()) {
        assert_eq!(a.position, b.position);
    }
    // The vector joints of block mode take it.
    let block: World<f64, SO3Matrix<f64>> = pendulum::build(&PendulumConfig::default()).unwrap();
    assert!(block.primal_correction_applies());
}

/// Reported case: a cantilever of 5 cubic elements (the Section 9.2 material, Δt = 5e-3 s,
/// one substep, undamped) built along world x with the pass asked for. With the pass it
/// gained 6.7e5 J within 3 s (with damping 0.2 s) or diverged at t = 1.1 s (undamped),
/// from the round-off of its out-of-plane components; along z, exactly planar, it stayed
/// put. The pass is now skipped in a world with rods, so the run is the plain step's,
/// bit for bit, and its energy never rises above the initial 0 J by more than the
/// round-off of the energy sum (|E| ≲ 10 J).
#[test]
fn primal_correction_with_cubic_rod_along_x_stays_bounded() {
    let build = |pass: bool| {
        let options = SolverOptions {
            dt: 5e-3,
            primal_correction: pass,
            ..SolverOptions::default()
        };
        let mut world = World::<f64, SO3Matrix<f64>>::new(options).unwrap();
        let material = RodMaterial::circular(5e6, 0.4, 1000.0, 0.05).unwrap();
        let spec = StraightRod {
            direction: Vector3::new(1.0, 0.0, 0.0),
            ..StraightRod::cantilever(1.0, 5)
        };
        let ids =
            FemRod::<f64, SO3Matrix<f64>, 4>::add_straight(&mut world, &material, &spec).unwrap();
        (world, *ids.nodes.last().unwrap())
    };
    let (mut world, tip) = build(true);
    let (mut plain, _) = build(false);
    assert!(world.options().primal_correction);
    assert!(!world.primal_correction_applies());
    let e0 = world.energy();
    let mut max_gain = f64::NEG_INFINITY;
    for _ in 0..600 {
        world.step().unwrap();
        plain.step().unwrap();
        max_gain = max_gain.max(world.energy() - e0);
    }
    for (a, b) in world.bodies().iter().zip(plain.bodies()) {
        assert_eq!(a.position, b.position);
    }
    assert!(max_gain <= 1e-9, "energy rose by {max_gain:e} J");
    // Still a cantilever hanging from its clamp (undamped, it swings about its sag).
    let p = world.body(tip).unwrap().position;
    assert!(p.norm() <= 1.0 + 1e-3 && p.y < 0.0, "tip at {p:?}");
}

/// 20 s in all four combinations: the energy never rises above its initial value by
/// more than the plain step's own maximum rise plus f32 rounding of the energy sum
/// (|E| ≈ 80–380 J, so a few ε_f32·|E| ≈ 1e-4 J). How much the step dissipates is not
/// compared: the chain is chaotic, and after a few seconds the runs with and without
/// the pass follow different paths (measured over 100 s in f64: 283 J lost with the
/// pass, 299 J without; over 20 s in f32 quaternions 201 J against 186 J).
fn no_energy_injected<T: BandScalar, G: LieGroup<T>>() {
    let with = run::<T, G>(20.0, SolveMode::Block, true);
    let plain = run::<T, G>(20.0, SolveMode::Block, false);
    let slack = 1e-4;
    assert!(
        with.max_energy_gain <= plain.max_energy_gain.max(0.0) + slack,
        "{} {}: gain {:e} against {:e}",
        G::NAME,
        T::NAME,
        with.max_energy_gain,
        plain.max_energy_gain
    );
}

#[test]
fn no_energy_injected_f64() {
    no_energy_injected::<f64, SO3Matrix<f64>>();
    no_energy_injected::<f64, UnitQuaternion<f64>>();
}

#[test]
fn no_energy_injected_f32() {
    no_energy_injected::<f32, SO3Matrix<f32>>();
    no_energy_injected::<f32, UnitQuaternion<f32>>();
}
