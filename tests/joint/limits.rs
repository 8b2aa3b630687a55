//! Revolute joint angle limits (74): gradient of the limit row against central
//! differences, hard limits held in a simulation, and the unwrapped angle across ±π.

use lie_xpbd::joint::{wrap_angle, JointFrame, Revolute, RevoluteLimit};
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::xpbd::{
    check_gradient, check_gradient_perturbed, Body, BodyId, Constraint, ConstraintEval, SolveMode,
    SolverOptions, World,
};
use nalgebra::Vector3;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::f64::consts::PI;

type M64 = SO3Matrix<f64>;
type Q64 = UnitQuaternion<f64>;
type M32 = SO3Matrix<f32>;
type Q32 = UnitQuaternion<f32>;

fn v<T: Real>(x: f64, y: f64, z: f64) -> Vector3<T> {
    Vector3::new(c(x), c(y), c(z))
}

fn body<T: Real, G: LieGroup<T>>(position: Vector3<T>, orientation: G) -> Body<T, G> {
    Body::dynamic(c(1.0), v(0.02, 0.03, 0.04), position, orientation).unwrap()
}

/// Two bodies and their joint frames.
type Pair<T, G> = ([Body<T, G>; 2], [JointFrame<T, G>; 2]);

/// Two bodies whose joint frames have relative rotation R̄₂ ⊟ R̄₁ = e = (tilt, −tilt/2, θ),
/// i.e. joint angle θ (wrapped; side 2 relative to side 1), with non-trivial joint
/// frames.
fn pair<T: Real, G: LieGroup<T>>(theta: f64, tilt: f64) -> Pair<T, G> {
    let f1 = JointFrame::new(v(0.1, -0.2, 0.3), G::exp(&v(0.2, -0.1, 0.4)));
    let f2 = JointFrame::new(v(-0.3, 0.1, 0.05), G::exp(&v(-0.3, 0.2, 0.1)));
    let r1 = G::exp(&v(0.3, -0.2, 0.1));
    let rbar1 = r1.compose(&f1.rotation);
    let e = v::<T>(tilt, -0.5 * tilt, theta);
    // R̄₂ = R̄₁ Exp(e), R₂ = R̄₂ J₂ᵀ.
    let rbar2 = rbar1.compose(&G::exp(&e));
    let r2 = rbar2.compose(&f2.rotation.inverse());
    (
        [body(v(0.2, 0.4, -0.1), r1), body(v(-0.5, 0.1, 0.3), r2)],
        [f1, f2],
    )
}

fn limit_pair<T: Real, G: LieGroup<T>>(
    frames: &[JointFrame<T, G>; 2],
    lo: f64,
    hi: f64,
    reference: f64,
) -> RevoluteLimit<T, G> {
    RevoluteLimit::new(
        Some(BodyId(0)),
        frames[0],
        Some(BodyId(1)),
        frames[1],
        c(lo),
        c(hi),
    )
    .unwrap()
    .with_angle(c(reference))
    .unwrap()
}

/// Angles (rad) at which the gradient is checked, with the limits and reference used:
/// near the lower and upper limit (either side), near 0, and near ±π on both sides of
/// the branch cut (the reference angle on the near side, so the unwrapped angle is
/// continuous).
fn cases() -> Vec<(f64, f64, f64, f64)> {
    let (lo, hi) = (-PI / 4.0, PI / 4.0);
    let (wlo, whi) = (-1.5 * PI, 1.5 * PI);
    vec![
        // (θ, lower, upper, reference)
        (lo - 0.05, lo, hi, 0.0),
        (lo + 0.05, lo, hi, 0.0),
        (hi - 0.05, lo, hi, 0.0),
        (hi + 0.05, lo, hi, 0.0),
        (0.03, lo, hi, 0.0),
        (-0.03, lo, hi, 0.0),
        (PI - 0.05, wlo, whi, PI),
        (PI + 0.05, wlo, whi, PI),
        (-PI + 0.05, wlo, whi, -PI),
        (-PI - 0.05, wlo, whi, -PI),
        (1.4 * PI, wlo, whi, 1.4 * PI),
        (-1.6 * PI, wlo, whi, -1.6 * PI),
    ]
}

fn gradient_cases<T: Real, G: LieGroup<T>>(tol: f64) {
    let mut rng = StdRng::seed_from_u64(7);
    let mut worst = 0.0f64;
    for (theta, lo, hi, reference) in cases() {
        for tilt in [0.0, 2e-3] {
            let (bodies, frames) = pair::<T, G>(theta, tilt);
            let limit = limit_pair(&frames, lo, hi, reference);
            // The unwrapped angle is θ itself (not θ wrapped into (−π, π]).
            let angle = limit.angle(&bodies).unwrap().to_f64();
            assert!(
                (angle - theta).abs() < 1e-4 + 10.0 * tilt * tilt,
                "{} {}: angle {angle} for θ {theta}",
                G::NAME,
                T::NAME
            );
            let mut out = ConstraintEval::default();
            limit.evaluate(&bodies, &mut out);
            let expect = if theta < 0.5 * (lo + hi) {
                theta - lo
            } else {
                hi - theta
            };
            assert!((out.value[0].to_f64() - expect).abs() < 1e-4 + 10.0 * tilt * tilt);
            let report = check_gradient(&limit, &bodies).unwrap();
            assert!(report.passed(), "{report}");
            worst = worst.max(report.worst_relative_error);
            // Random states around it: small rotations, so as not to cross the middle
            // of the range or (with the reference near ±π) wind by π.
            let report = check_gradient_perturbed(&limit, &bodies, &mut rng, 4, 0.1, 0.02).unwrap();
            assert!(report.passed(), "{report}");
            worst = worst.max(report.worst_relative_error);
            // One-sided: world as side 1, at body 0's joint frame pose.
            let world_frame = frames[0].world_pose(&bodies[0].pose());
            let one_sided = RevoluteLimit::new(
                None,
                JointFrame::new(world_frame.position, world_frame.rotation),
                Some(BodyId(1)),
                frames[1],
                c(lo),
                c(hi),
            )
            .unwrap()
            .with_angle(c(reference))
            .unwrap();
            let report = check_gradient(&one_sided, &bodies).unwrap();
            assert!(report.passed(), "{report}");
            worst = worst.max(report.worst_relative_error);
        }
    }
    eprintln!(
        "limit gradient {} {}: worst relative error {worst:.3e}",
        G::NAME,
        T::NAME
    );
    assert!(worst < tol, "{worst}");
}

#[test]
fn limit_gradient_matrix_f64() {
    gradient_cases::<f64, M64>(1e-5);
}

#[test]
fn limit_gradient_quaternion_f64() {
    gradient_cases::<f64, Q64>(1e-5);
}

#[test]
fn limit_gradient_matrix_f32() {
    gradient_cases::<f32, M32>(2e-2);
}

#[test]
fn limit_gradient_quaternion_f32() {
    gradient_cases::<f32, Q32>(2e-2);
}

#[test]
fn wrap_angle_range() {
    for x in [-7.0, -PI, -3.0, 0.0, 3.0, PI, 7.0, 20.0] {
        let w: f64 = wrap_angle(x);
        assert!((-PI..PI).contains(&w), "{x} -> {w}");
        let k = (x - w) / (2.0 * PI);
        assert!((k - k.round()).abs() < 1e-12);
    }
}

#[test]
fn limit_rejects_bad_input() {
    let f = JointFrame::<f64, M64>::identity();
    let b = Some(BodyId(0));
    assert!(RevoluteLimit::new(None, f, b, f, 1.0, 1.0).is_err());
    assert!(RevoluteLimit::new(None, f, b, f, 1.0, -1.0).is_err());
    assert!(RevoluteLimit::new(None, f, b, f, f64::NAN, 1.0).is_err());
    assert!(RevoluteLimit::new(None, f, b, f, -1.0, f64::INFINITY).is_err());
    assert!(RevoluteLimit::new(None, f, None, f, -1.0, 1.0).is_err());
    let ok = RevoluteLimit::new(None, f, b, f, -1.0, 1.0).unwrap();
    assert!(ok.with_compliance(-1.0).is_err());
    assert!(ok.with_compliance(f64::NAN).is_err());
    assert!(ok.with_angle(f64::INFINITY).is_err());
    assert_eq!(ok.lambda_bounds(0), (0.0, f64::INFINITY));
    assert_eq!(ok.kind(), "revolute_limit");
    assert_eq!(ok.name(), "revolute_limit(world, 0)");
}

fn options<T: Real>(gravity: f64) -> SolverOptions<T> {
    SolverOptions {
        dt: c(1.0 / 60.0),
        substeps: 20,
        iterations: 10,
        solve_mode: SolveMode::Block,
        gravity: v(0.0, -gravity, 0.0),
        primal_correction: false,
        ..SolverOptions::default()
    }
}

/// A pendulum (joint point 0.5 m above its centre) hinged to the world about z and
/// limited to [lo, hi]; started at angle θ₀ with angular velocity ω₀ about the hinge.
/// Returns (world, limit) with the limit added after the hinge, so that it is projected
/// last in each sweep.
fn limited_pendulum<T: Real, G: LieGroup<T>>(
    gravity: f64,
    lo: f64,
    hi: f64,
    theta0: f64,
    omega0: f64,
) -> (World<T, G>, RevoluteLimit<T, G>) {
    let mut world = World::<T, G>::new(options(gravity)).unwrap();
    // θ_rev = [R ⊟ I]₃ = the body's angle about z; r = (0, 0.5, 0) in the body frame.
    let r = G::exp(&v(0.0, 0.0, theta0));
    let joint_point = v::<T>(0.0, 0.5, 0.0);
    let position = -r.act(&joint_point);
    let b = body::<T, G>(position, r)
        .with_velocity(
            r.act(&v::<T>(0.0, 0.0, omega0)).cross(&position),
            v(0.0, 0.0, omega0),
        )
        .unwrap();
    let id = world.add_body(b).unwrap();
    let hinge = Revolute::new(
        None,
        JointFrame::identity(),
        Some(id),
        JointFrame::at(joint_point),
    )
    .unwrap();
    world.add_constraint(hinge).unwrap();
    let limit = RevoluteLimit::new(
        None,
        JointFrame::identity(),
        Some(id),
        JointFrame::at(joint_point),
        c(lo),
        c(hi),
    )
    .unwrap()
    .with_angle(c(theta0))
    .unwrap();
    world.add_constraint(limit).unwrap();
    (world, limit)
}

/// Runs `steps` steps and returns (worst excess over the limits, rad; smallest and
/// largest unwrapped angle; largest change of the unwrapped angle in one step). The
/// angle is unwrapped here, independently of the limit's own tracking, from the
/// wrapped θ_rev after each step.
fn run<T: Real, G: LieGroup<T>>(
    world: &mut World<T, G>,
    limit: &RevoluteLimit<T, G>,
    steps: usize,
) -> (f64, f64, f64, f64) {
    let (lo, hi) = limit.limits();
    let (lo, hi) = (lo.to_f64(), hi.to_f64());
    let mut theta = limit.reference_angle().to_f64();
    let (mut excess, mut min, mut max, mut jump) = (0.0f64, theta, theta, 0.0f64);
    for _ in 0..steps {
        world.step().unwrap();
        let k = limit.attachments().kinematics(world.bodies()).unwrap();
        let wrapped = k.revolute_angle().to_f64();
        let d = wrap_angle(wrapped - theta);
        theta += d;
        jump = jump.max(d.abs());
        min = min.min(theta);
        max = max.max(theta);
        excess = excess.max(lo - theta).max(theta - hi);
    }
    (excess, min, max, jump)
}

fn pendulum_held<T: Real, G: LieGroup<T>>(tol: f64) -> f64 {
    let lim = PI / 4.0;
    let mut worst = 0.0f64;
    // Released horizontally (outside the upper limit), hanging with a fast swing in
    // either direction, and spun hard: 3 s each.
    for (theta0, omega0) in [
        (PI / 2.0, 0.0),
        (-PI / 2.0, 0.0),
        (0.0, 6.0),
        (0.0, -6.0),
        (0.0, 30.0),
    ] {
        let (mut world, limit) = limited_pendulum::<T, G>(9.81, -lim, lim, theta0, omega0);
        let (excess, min, max, _) = run(&mut world, &limit, 180);
        eprintln!(
            "±45° {} {} θ₀ {theta0:.3} ω₀ {omega0}: worst excess {excess:.3e} rad, range [{min:.4}, {max:.4}]",
            G::NAME,
            T::NAME
        );
        // It does reach the limit it was driven into.
        assert!(
            max > lim - 1e-3 || min < -lim + 1e-3,
            "never reached the limit"
        );
        worst = worst.max(excess);
    }
    assert!(worst <= tol, "{} {}: excess {worst:e}", G::NAME, T::NAME);
    worst
}

#[test]
fn limits_hold_pendulum_matrix_f64() {
    pendulum_held::<f64, M64>(1e-6);
}

#[test]
fn limits_hold_pendulum_quaternion_f64() {
    pendulum_held::<f64, Q64>(1e-6);
}

#[test]
fn limits_hold_pendulum_matrix_f32() {
    pendulum_held::<f32, M32>(1e-5);
}

#[test]
fn limits_hold_pendulum_quaternion_f32() {
    pendulum_held::<f32, Q32>(1e-5);
}

/// Limits ±270°: spun at 5 rad/s without gravity, the joint winds past ±π (where the
/// wrapped angle jumps by 2π), reaches ±260° and is stopped at ±270°. (The stop is not
/// fully inelastic: the Gauss–Seidel sweeps between the limit, which turns the body
/// about its centre, and the hinge converge slowly, and the body rebounds at about a
/// tenth of its speed with 10 iterations.)
fn wide_range<T: Real, G: LieGroup<T>>(tol: f64) {
    let lim = 1.5 * PI;
    for omega0 in [5.0, -5.0] {
        let (mut world, limit) = limited_pendulum::<T, G>(0.0, -lim, lim, 0.0, omega0);
        let (excess, min, max, jump) = run(&mut world, &limit, 120);
        let k = limit.attachments().kinematics(world.bodies()).unwrap();
        eprintln!(
            "±270° {} {} ω₀ {omega0}: range [{:.2}°, {:.2}°], worst excess {excess:.3e} rad, \
             largest step {jump:.3} rad, final wrapped θ_rev {:.2}°, final ω_z {:.3} rad/s",
            G::NAME,
            T::NAME,
            min.to_degrees(),
            max.to_degrees(),
            k.revolute_angle().to_f64().to_degrees(),
            world.bodies()[0].angular_velocity.z.to_f64()
        );
        assert!(jump < 0.2, "angle not continuous: step {jump}");
        assert!(excess <= tol, "excess {excess:e}");
        let reached = if omega0 > 0.0 { max } else { -min };
        assert!(
            reached >= 260f64.to_radians(),
            "reached only {}°",
            reached.to_degrees()
        );
        // It is stopped by the limit (not at the wrapped ±180°, not beyond 270°) and
        // turned back: at 5 rad/s it would be at ±573° after 2 s.
        assert!(reached >= 269.5f64.to_radians());
        let w = world.bodies()[0].angular_velocity.z.to_f64();
        // It started at ω_z = ω₀ (θ_rev is the body's angle about z).
        assert!(w * omega0 < 0.0, "not turned back: ω_z {w}");
    }
}

#[test]
fn wide_limits_unwrap_matrix_f64() {
    wide_range::<f64, M64>(1e-6);
}

#[test]
fn wide_limits_unwrap_quaternion_f64() {
    wide_range::<f64, Q64>(1e-6);
}

#[test]
fn wide_limits_unwrap_quaternion_f32() {
    wide_range::<f32, Q32>(1e-5);
}

/// The limit's reference angle follows the joint: after winding past 180° it is the
/// unwrapped angle, not the wrapped one (checked on a copy stepped by `end_substep`).
#[test]
fn reference_angle_tracks_unwrapped_angle() {
    let (mut world, limit) = limited_pendulum::<f64, M64>(0.0, -1.5 * PI, 1.5 * PI, 0.0, 5.0);
    let mut tracked = limit;
    for _ in 0..60 {
        world.step().unwrap();
        tracked.end_substep(world.bodies());
    }
    let theta = tracked.reference_angle();
    let wrapped = limit
        .attachments()
        .kinematics(world.bodies())
        .unwrap()
        .revolute_angle();
    assert!(theta > PI, "{theta}");
    assert!((wrap_angle(theta - wrapped)).abs() < 1e-9);
    assert_eq!(tracked.angle(world.bodies()).unwrap(), theta);
}
