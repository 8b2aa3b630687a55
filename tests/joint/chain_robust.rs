//! Robustness of limited joint chains (74): a 10-link chain of revolute joints with
//! ±30° limits released from horizontal under gravity, with link masses alternating
//! 1 kg and 1000 kg, and with links of 1e-3 kg; and a single limited hinge checked
//! after every substep.
//!
//! The chain, its measurement and the requirement check are in `joint_chain/mod.rs`;
//! the studies quoted below (`study_*`, `probe`) in `chain_studies.rs`.
//!
//! The requirement is met for both mass cases by solving all hinges and limits of the
//! chain together, one direct solve per iteration
//! ([`World::add_direct_group`]): at 1 substep × 3 iterations, limits to 1e-13 rad and
//! joints to 7.1e-5 m (`chain_direct.rs`). This file is the Gauss–Seidel
//! solver's side.
//!
//! # What holds and what does not with Gauss–Seidel
//! Measured with the Gauss–Seidel solver of [`World`], f64; both representations
//! and f32 agree with it to two digits or better. The requirement is: limits within 1e-3 rad
//! and joints within 1e-3 m over 10 s with at most 20 substeps.
//!
//! * 1e-3 kg links: met with 20 substeps × [`LIGHT_ITERATIONS`] = 210 iterations
//!   (worst limit excess 9.8e-4 rad, joint error 5.0e-5 m; rows mode is the same to
//!   two digits: 8.6e-4 rad at 20 × 250 against 8.6e-4 in block mode);
//!   with the hinge to the world unlimited, 20 × [`LIGHT_FREE_ROOT_ITERATIONS`] = 50.
//!   Tests `requirement_light_*`, ignored for their run time (about a minute each).
//!   With 10 iterations the worst excess is 1.6e-2 rad: the hinge to the world
//!   stopping the whole chain at t ≈ 0.58 s.
//! * 1 kg / 1000 kg links: not met within 20 substeps at any iteration count tried:
//!   worst excess 1.12 rad with 10 iterations, 0.55 rad with 50, 0.23 rad with 210,
//!   0.105 rad with 500, joint error 3.8e-2 … 4.8e-3 m (`requirement_alternating_*`,
//!   ignored: they fail).
//!
//! The cause is the convergence rate of Gauss–Seidel on the chain, not the order of
//! the constraints nor the limit rows being projected after their hinge:
//! `study_gauss_seidel_rate` computes the spectral radius ρ of the (block) GS iteration
//! on the linearised substep system of the straight chain with its limits active:
//! ρ = 1 − 1.0e-4 (1e-3 kg) and 1 − 2.9e-7 (1:1000), the same to three digits for
//! every constraint order and for block and rows mode; cond(A) is 3.2e6 and 9.1e8.
//!
//! The energy check holds at 20 substeps × 10 iterations for both cases: the total
//! energy never rises above its initial value (`energy_never_rises_*`), although the
//! unconverged solve does put energy back between substeps (up to 1.6e4 J of rise
//! above the running minimum for the 1:1000 chain, 1.2e-3 J for the light one).

use crate::joint_chain;
use joint_chain::*;

use lie_xpbd::joint::{wrap_angle, JointFrame, Revolute, RevoluteLimit};
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real};
use lie_xpbd::xpbd::{Body, SolveMode, SolverOptions, World};
use std::f64::consts::PI;

// ---------------------------------------------------------------------------------
// The requirement with Gauss–Seidel (module docs): limits within 1e-3 rad, joints
// within 1e-3 m (and their axes within 1e-3 rad) over 10 s, at most 20 substeps.
// ---------------------------------------------------------------------------------

fn requirement<T: Real, G: LieGroup<T>>(masses: Masses, root: Root, iterations: usize) {
    let setting = Setting {
        substeps: SUBSTEPS,
        iterations,
        mode: SolveMode::Block,
        direct: false,
    };
    let s = run::<T, G>(masses, setting, Order::Interleaved, root);
    let label = format!(
        "{masses:?} root {root:?} {} {} {SUBSTEPS}×{iterations}",
        G::NAME,
        T::NAME
    );
    assert_requirement(&label, &s);
}

#[test]
#[ignore = "slow (about a minute): 20 substeps × LIGHT_ITERATIONS iterations"]
fn requirement_light_matrix_f64() {
    requirement::<f64, M64>(Masses::Light, Root::Limited, LIGHT_ITERATIONS);
}

#[test]
#[ignore = "slow (about a minute): 20 substeps × LIGHT_ITERATIONS iterations"]
fn requirement_light_quaternion_f64() {
    requirement::<f64, Q64>(Masses::Light, Root::Limited, LIGHT_ITERATIONS);
}

#[test]
#[ignore = "slow (about a minute): 20 substeps × LIGHT_ITERATIONS iterations"]
fn requirement_light_quaternion_f32() {
    requirement::<f32, Q32>(Masses::Light, Root::Limited, LIGHT_ITERATIONS);
}

/// The hinge to the world unlimited (the chain swings down as a whole and its nine
/// inner limits engage as it whips).
#[test]
#[ignore = "slow (about 10 s): 20 substeps × LIGHT_FREE_ROOT_ITERATIONS iterations"]
fn requirement_light_free_root_matrix_f64() {
    requirement::<f64, M64>(Masses::Light, Root::Free, LIGHT_FREE_ROOT_ITERATIONS);
}

/// Fails with the Gauss–Seidel solver (module docs): worst limit excess 0.23 rad
/// (joint 0, t = 1.12 s) and joint error 7.7e-3 m at 20 × LIGHT_ITERATIONS (0.105 rad
/// at 20 × 500).
#[test]
#[ignore = "fails: Gauss-Seidel does not converge on the 1:1000 chain within 20 substeps (module docs)"]
fn requirement_alternating_matrix_f64() {
    requirement::<f64, M64>(Masses::Alternating, Root::Limited, LIGHT_ITERATIONS);
}

#[test]
#[ignore = "fails: Gauss-Seidel does not converge on the 1:1000 chain within 20 substeps (module docs)"]
fn requirement_alternating_quaternion_f64() {
    requirement::<f64, Q64>(Masses::Alternating, Root::Limited, LIGHT_ITERATIONS);
}

/// Fails too: worst limit excess 5.0e-2 rad (joint 6, t = 1.27 s), joint error
/// 2.9e-3 m at 20 × LIGHT_ITERATIONS.
#[test]
#[ignore = "fails: Gauss-Seidel does not converge on the 1:1000 chain within 20 substeps (module docs)"]
fn requirement_alternating_free_root_matrix_f64() {
    requirement::<f64, M64>(Masses::Alternating, Root::Free, LIGHT_ITERATIONS);
}

// ---------------------------------------------------------------------------------
// Energy.
// ---------------------------------------------------------------------------------

fn energy_check<T: Real, G: LieGroup<T>>(masses: Masses, duration: f64) {
    let setting = Setting {
        substeps: SUBSTEPS,
        iterations: FAST_ITERATIONS,
        mode: SolveMode::Block,
        direct: false,
    };
    let mut ch = chain::<T, G>(
        masses,
        setting,
        Order::Interleaved,
        Root::Limited,
        G_DOWN,
        DT,
    );
    let s = simulate(&mut ch, duration);
    let label = format!(
        "energy {masses:?} {} {} {SUBSTEPS}×{FAST_ITERATIONS} {duration} s",
        G::NAME,
        T::NAME
    );
    print(&label, &s);
    assert!(s.diverged.is_none(), "{label}: diverged");
    let tol = energy_tolerance::<T>(masses);
    assert!(
        s.energy_rise <= tol,
        "{label}: energy rose {:.3e} J above its initial value (tolerance {tol:.1e} J)",
        s.energy_rise
    );
    // The chain did move and dissipate (the check is not vacuous).
    assert!(
        s.energy_change < -1e3 * tol,
        "{label}: {:e}",
        s.energy_change
    );
}

/// 20 s. Over 120 s (`study_energy_long_run`) E − E(0) stays between −2.58e4 J and
/// −2.50e4 J after the first 10 s: the unconverged solve keeps the chain moving, but
/// the energy does not grow.
#[test]
fn energy_never_rises_alternating_matrix_f64() {
    energy_check::<f64, M64>(Masses::Alternating, 20.0);
}

#[test]
fn energy_never_rises_alternating_quaternion_f32() {
    energy_check::<f32, Q32>(Masses::Alternating, DURATION);
}

/// 20 s. Over 120 s the light chain's energy falls steadily (−3.3e-2 J at 10 s,
/// −4.3e-2 J at 120 s).
#[test]
fn energy_never_rises_light_quaternion_f64() {
    energy_check::<f64, Q64>(Masses::Light, 20.0);
}

#[test]
fn energy_never_rises_light_matrix_f32() {
    energy_check::<f32, M32>(Masses::Light, DURATION);
}

// ---------------------------------------------------------------------------------
// A single hinge with limits ±45°, checked after every substep.
// ---------------------------------------------------------------------------------

/// A pendulum (1 kg, inertia (0.02, 0.03, 0.04) kg·m², joint point 0.5 m above its
/// centre) hinged to the world about z with limits ±45°, started at joint angle θ₀
/// with angular velocity ω₀ about the hinge; 20 substeps × 10 iterations of 1/60 s,
/// 3 s, the limit projected after the hinge. Returns the worst excess over the limits
/// after every substep (rad) and the largest |θ| reached. (`tests/joint/limits.rs`
/// checks the same pendulums after every step.)
fn limited_pendulum<T: Real, G: LieGroup<T>>(theta0: f64, omega0: f64) -> (f64, f64) {
    let lim = PI / 4.0;
    let options = SolverOptions {
        dt: c(DT),
        substeps: 20,
        iterations: 10,
        solve_mode: SolveMode::Block,
        gravity: v(0.0, -9.81, 0.0),
        primal_correction: false,
        ..SolverOptions::default()
    };
    let mut world = World::<T, G>::new(options).unwrap();
    // θ_rev = [I ⊟ R]₃ = −(body angle about z).
    let r = G::exp(&v(0.0, 0.0, -theta0));
    let joint_point = v::<T>(0.0, 0.5, 0.0);
    let position = -r.act(&joint_point);
    let body = Body::dynamic(c(1.0), v(0.02, 0.03, 0.04), position, r)
        .unwrap()
        .with_velocity(
            r.act(&v::<T>(0.0, 0.0, -omega0)).cross(&position),
            v(0.0, 0.0, -omega0),
        )
        .unwrap();
    let id = world.add_body(body).unwrap();
    let frame = JointFrame::at(joint_point);
    let hinge = Revolute::new(None, JointFrame::identity(), Some(id), frame).unwrap();
    world.add_constraint(hinge).unwrap();
    let limit = RevoluteLimit::new(
        None,
        JointFrame::identity(),
        Some(id),
        frame,
        c(-lim),
        c(lim),
    )
    .unwrap()
    .with_angle(c(theta0))
    .unwrap();
    world.add_constraint(limit).unwrap();
    let mut theta = theta0;
    let (mut excess, mut reached) = (0.0f64, 0.0f64);
    for _ in 0..180 * 20 {
        world.substep();
        let k = limit.attachments().kinematics(world.bodies()).unwrap();
        theta += wrap_angle(k.revolute_angle().to_f64() - theta);
        excess = excess.max(theta.abs() - lim);
        reached = reached.max(theta.abs());
    }
    (excess, reached)
}

fn single_hinge<T: Real, G: LieGroup<T>>(tol: f64) {
    let mut worst = 0.0f64;
    // Released horizontally (outside the upper or lower limit), hanging with a fast
    // swing either way, and spun hard.
    for (theta0, omega0) in [
        (PI / 2.0, 0.0),
        (-PI / 2.0, 0.0),
        (0.0, 6.0),
        (0.0, -6.0),
        (0.0, 30.0),
    ] {
        let (excess, reached) = limited_pendulum::<T, G>(theta0, omega0);
        assert!(reached > PI / 4.0 - 1e-3, "never reached the limit");
        worst = worst.max(excess);
    }
    eprintln!(
        "±45° hinge {} {}: worst excess after any substep {worst:.3e} rad",
        G::NAME,
        T::NAME
    );
    assert!(worst <= tol, "{} {}: {worst:e}", G::NAME, T::NAME);
}

// Tolerances as in tests/joint/limits.rs: 1e-6 rad is the requirement (measured
// 2.2e-16 rad in f64). f32 stores the orientation to ε = 1.2e-7, so the angle read
// back near π/4 is only known to about 1e-7 rad (measured 1.4e-7): 1e-5 for f32.
#[test]
fn single_hinge_limit_after_every_substep_matrix_f64() {
    single_hinge::<f64, M64>(1e-6);
}

#[test]
fn single_hinge_limit_after_every_substep_quaternion_f64() {
    single_hinge::<f64, Q64>(1e-6);
}

#[test]
fn single_hinge_limit_after_every_substep_quaternion_f32() {
    single_hinge::<f32, Q32>(1e-5);
}
