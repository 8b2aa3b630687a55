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
