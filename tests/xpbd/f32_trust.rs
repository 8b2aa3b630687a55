//! f32 results that differ from f64 only by what the precision explains (regressions).
//!
//! `free_spin_*`: a free body spun about a principal axis has the exact solution
//! R(t) = Exp(ω t), ω constant. Before the angular velocity was taken from the
//! accumulated rotation increments, ω = (R ⊟ Rⁿ)/h carried an error of about ε/h per
//! step (Log of the product of two rounded rotations) that fed the next prediction: in f32,
//! 100 steps of 0.01 s ended 9e-6 to 1.4e-5 rad off and ω drifted by 0.5–1.3 rad/s over 10⁶
//! steps. Now ω carries an error of about ε·|ω| per step.

use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::xpbd::{Body, SolverOptions, World};
use nalgebra::Vector3;

/// Spins a unit-inertia body at 1 rad/s about z for `steps` steps of 0.01 s without
/// gravity; returns (angle error vs ωt in rad, largest |ω − ω₀| in rad/s) in f64.
fn free_spin<T: Real, G: LieGroup<T>>(steps: usize) -> (f64, f64) {
    let c = |x: f64| T::cast(x);
    let options = SolverOptions {
        dt: c(0.01),
        gravity: Vector3::zeros(),
        ..SolverOptions::default()
    };
    let mut world = World::<T, G>::new(options).unwrap();
    let mut body = Body::dynamic(
        T::one(),
        Vector3::new(c(1.0), c(2.0), c(3.0)),
        Vector3::zeros(),
        G::identity(),
    )
    .unwrap();
    let w0 = Vector3::new(c(0.0), c(0.0), c(1.0));
    body.angular_velocity = w0;
    let id = world.add_body(body).unwrap();
    let mut worst_w = 0.0f64;
    for _ in 0..steps {
        world.step().unwrap();
        let w = world.body(id).unwrap().angular_velocity;
        worst_w = worst_w.max((w - w0).norm().to_f64());
    }
    let r = world.body(id).unwrap().orientation;
    let t = steps as f64 * 0.01;
    let exact = G::exp(&Vector3::new(c(0.0), c(0.0), c(t)));
    (r.boxminus(&exact).norm().to_f64(), worst_w)
}

fn check<T: Real, G: LieGroup<T>>(steps: usize, angle_tol: f64, omega_tol: f64) {
    let (angle, omega) = free_spin::<T, G>(steps);
    println!(
        "{} {} {steps} steps: angle error {angle:.3e} rad, max |ω − ω₀| {omega:.3e} rad/s",
        G::NAME,
        T::NAME
    );
    assert!(angle <= angle_tol, "angle error {angle:e} > {angle_tol:e}");
    assert!(omega <= omega_tol, "ω error {omega:e} > {omega_tol:e}");
}

// Tolerances, with ε the machine epsilon of T and n the number of steps.
// * Angle: each step rounds R once (entries of size 1, error ~ε), a random walk of about
//   √n·ε, while the increment ωh = 0.01 rad itself is known to relative ε (n·ε·ωh in all,
//   smaller). Allowed 4·√n·ε: 100 steps → 4.8e-6 rad in f32, 8.9e-15 in f64; 10⁵ steps →
//   1.5e-4 rad in f32. Measured 2.7e-7 / 6.0e-8 (matrix / quaternion, f32, 100 steps),
//   1.3e-5 / 2.6e-5 (10⁵ steps), 3.2e-15 / 3.9e-15 (f64). The old defect gave 9e-6..1.4e-5
//   after 100 f32 steps.
// * ω: recomputed each step as Log(increment)/h from an increment of 0.01 rad known to a
//   few ε relative, so |ω − ω₀| ≲ a few ε·|ω|, independent of n. Allowed 32ε: 3.8e-6 rad/s
//   in f32, 7.1e-15 in f64. Measured 0 (f32) and 3.6e-15 = 16ε (f64); the old defect gave
//   ε/h = 1.2e-5 rad/s per step in f32 and 0.5–1.3 rad/s of drift over 10⁶ steps.

fn tol_angle(eps: f64, n: usize) -> f64 {
    4.0 * (n as f64).sqrt() * eps
}

const F32: f64 = f32::EPSILON as f64;
const F64: f64 = f64::EPSILON;

#[test]
fn free_spin_100_steps_matrix_f32() {
    check::<f32, SO3Matrix<f32>>(100, tol_angle(F32, 100), 32.0 * F32);
}

#[test]
fn free_spin_100_steps_quaternion_f32() {
    check::<f32, UnitQuaternion<f32>>(100, tol_angle(F32, 100), 32.0 * F32);
}

#[test]
fn free_spin_100_steps_matrix_f64() {
    check::<f64, SO3Matrix<f64>>(100, tol_angle(F64, 100), 32.0 * F64);
}

#[test]
fn free_spin_100_steps_quaternion_f64() {
    check::<f64, UnitQuaternion<f64>>(100, tol_angle(F64, 100), 32.0 * F64);
}

/// 10⁵ steps (1000 s, 159 turns): ω stays within 32ε of ω₀ (no drift with the number of
/// steps); the angle error grows like √n·ε.
#[test]
fn free_spin_long_matrix_f32() {
    check::<f32, SO3Matrix<f32>>(100_000, tol_angle(F32, 100_000), 32.0 * F32);
}

#[test]
fn free_spin_long_quaternion_f32() {
    check::<f32, UnitQuaternion<f32>>(100_000, tol_angle(F32, 100_000), 32.0 * F32);
}

/// A 1 m pendulum (1 kg, one-sided revolute joint) released at 170° with substeps of
/// 1e-5 s for 10 s. Before the velocities were accumulated in compensated arithmetic
/// (the velocity update (`Body::velocity_change`)), f32 lost 7–9 times the energy f64 loses and its period
/// was off by 5.6–6.7% (f64: 0.9%). Now both lose 2.911e-2 J and swing with the same
/// period to 1e-5 s. Allowed: 1% of the f64 loss (the energy computed in f32 from
/// ~10 J terms carries ~1e-6 J of round-off; the trajectory differs by the f32 rounding
/// of the initial state, ~1e-7 relative) and 1 ms of period (one output step).
fn pendulum_170<T: Real, G: LieGroup<T>>() -> (f64, f64) {
    use lie_xpbd::joint::{JointFrame, Revolute};
    let c = |x: f64| T::cast(x);
    let options = SolverOptions {
        dt: c(1e-3),
        substeps: 100,
        ..SolverOptions::default()
    };
    let mut world = World::<T, G>::new(options).unwrap();
    let a = 170f64.to_radians();
    let (x, y) = (a.sin(), -a.cos());
    let bob = Body::dynamic(
        T::one(),
        Vector3::repeat(c(1e-4)),
        Vector3::new(c(x), c(y), c(0.0)),
        G::identity(),
    )
    .unwrap();
    let id = world.add_body(bob).unwrap();
    let hinge = Revolute::new(
        None,
        JointFrame::identity(),
        Some(id),
        JointFrame::at(Vector3::new(c(-x), c(-y), c(0.0))),
    )
    .unwrap();
    world.add_constraint(hinge).unwrap();
    let e0 = world.energy().to_f64();
    let (mut prev_x, mut crossings) = (x, Vec::new());
    for k in 1..=10_000 {
        world.step().unwrap();
        let px = world.body(id).unwrap().position.x.to_f64();
        if prev_x < 0.0 && px >= 0.0 {
            crossings.push(k as f64 * 1e-3);
        }
        prev_x = px;
    }
    let period = crossings[1] - crossings[0];
    (world.energy().to_f64() - e0, period)
}

#[test]
fn pendulum_170_deg_f32_loses_what_f64_loses() {
    let (e64, p64) = pendulum_170::<f64, SO3Matrix<f64>>();
    for (name, (e, p)) in [
        ("matrix", pendulum_170::<f32, SO3Matrix<f32>>()),
        ("quaternion", pendulum_170::<f32, UnitQuaternion<f32>>()),
    ] {
        println!(
            "{name} f32: energy change {e:.6e} J (f64 {e64:.6e}), period {p:.4} s (f64 {p64:.4})"
        );
        assert!((e - e64).abs() <= 0.01 * e64.abs(), "{name}: {e} vs {e64}");
        assert!((p - p64).abs() <= 1.001e-3, "{name}: period {p} vs {p64}");
    }
}

/// The triple pendulum in f32 with 1000 substeps (h = 1 µs) for 2 s: the largest rise
/// of the energy above E₀ over the run, in J, and |E₀| (J; E₀ = −76.657 J with the
/// potential measured from the pivot).
///
/// Two defects were fixed here. Uncompensated, the rounding of each substep's velocity
/// change (always of the same sign while the change varies slowly) made the energy climb
/// by about 1 J/s: +2.1 J at 2 s. After that, the joints' values C were computed from
/// the stored f32 poses, to ε·0.5 m; each substep's projection turned that rounding into
/// a velocity of ~ε·0.5 m/h ≈ 0.03 m/s, a noise that raised the energy by up to 0.43 J
/// (matrix) and 0.56 J (quaternion), 5.6e-3 and 7.3e-3 of |E₀|. The joints now evaluate
/// C in f64 from the compensated state (`Real::WIDE_CONSTRAINT_VALUES`).
fn triple_pendulum_max_rise<G: LieGroup<f32>>(primal_correction: bool) -> (f64, f64) {
    use lie_xpbd::scenes::pendulum::{self, PendulumConfig};
    let cfg = PendulumConfig {
        seconds: 2.0,
        substeps: 1000,
        primal_correction,
        ..PendulumConfig::default()
    };
    let mut world = pendulum::build::<f32, G>(&cfg).unwrap();
    let e0 = world.energy().to_f64();
    let mut worst = f64::NEG_INFINITY;
    for _ in 0..2000 {
        world.step().unwrap();
        worst = worst.max(world.energy().to_f64() - e0);
    }
    (worst, e0.abs())
}

// Bound (issue requirement): the energy never exceeds E₀ by more than 1e-3·|E₀| =
// 0.077 J. Measured 5.3e-4 J (6.9e-6 of |E₀|) in both representations, with and without
// the primal correction pass: the rounding of the f32 energy sum itself (terms of
// ~250 J, ε·250 = 3e-5 J each) and of the f32 state. f64 never rises above E₀
// (−1.3e-6 J at most). Before the f64 constraint values: 0.30–0.56 J.
fn check_max_rise<G: LieGroup<f32>>(name: &str) {
    for pass in [true, false] {
        let (rise, e0) = triple_pendulum_max_rise::<G>(pass);
        println!(
            "{name} f32 (primal correction {pass}): max energy rise {rise:.3e} J = {:.2e}·|E₀|",
            rise / e0
        );
        assert!(
            rise <= 1e-3 * e0,
            "{name} (pass {pass}): energy rose {rise} J above E₀"
        );
    }
}

#[test]
fn triple_pendulum_f32_1000_substeps_energy_bounded_matrix() {
    check_max_rise::<SO3Matrix<f32>>("matrix");
}

#[test]
fn triple_pendulum_f32_1000_substeps_energy_bounded_quaternion() {
    check_max_rise::<UnitQuaternion<f32>>("quaternion");
}
