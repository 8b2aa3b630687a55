//! Prismatic joint translation limits (Section 5.5.2, (80) with (74)): the gradient of
//! the limit row against central differences in all four combinations
//! (SO3Matrix/UnitQuaternion × f32/f64), and hard limits held in a simulation.

use lie_xpbd::joint::{JointFrame, Prismatic, PrismaticLimit};
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::xpbd::{
    check_gradient, check_gradient_perturbed, Body, BodyId, Constraint, ConstraintEval, SolveMode,
    SolverOptions, World,
};
use nalgebra::Vector3;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::f64::consts::FRAC_PI_2;

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

/// Two bodies with non-trivial joint frames, side 2's joint origin at u = (off, −off/2,
/// d) in side 1's joint frame (so d_pr = d) and its joint frame tilted by (off, off, 0)
/// rad from side 1's.
fn pair<T: Real, G: LieGroup<T>>(d: f64, off: f64) -> Pair<T, G> {
    let f1 = JointFrame::new(v(0.1, -0.2, 0.3), G::exp(&v(0.2, -0.1, 0.4)));
    let f2 = JointFrame::new(v(-0.3, 0.1, 0.05), G::exp(&v(-0.3, 0.2, 0.1)));
    let (p1, r1) = (v::<T>(0.2, 0.4, -0.1), G::exp(&v(0.3, -0.2, 0.1)));
    let rbar1 = r1.compose(&f1.rotation);
    let pbar1 = p1 + r1.act(&f1.translation);
    let pbar2 = pbar1 + rbar1.act(&v(off, -0.5 * off, d));
    let r2 = rbar1
        .compose(&G::exp(&v(off, off, 0.0)))
        .compose(&f2.rotation.inverse());
    let p2 = pbar2 - r2.act(&f2.translation);
    ([body(p1, r1), body(p2, r2)], [f1, f2])
}

fn limit<T: Real, G: LieGroup<T>>(
    frames: &[JointFrame<T, G>; 2],
    lo: f64,
    hi: f64,
) -> PrismaticLimit<T, G> {
    PrismaticLimit::new(
        Some(BodyId(0)),
        frames[0],
        Some(BodyId(1)),
        frames[1],
        c(lo),
        c(hi),
    )
    .unwrap()
}

fn gradient_cases<T: Real, G: LieGroup<T>>() -> f64 {
    let (lo, hi) = (-0.2, 0.3);
    let mut rng = StdRng::seed_from_u64(21);
    let mut worst = 0.0f64;
    // Both sides of both limits, a step either side of the middle (0.05), far outside.
    for d in [
        lo - 0.01,
        lo + 0.01,
        hi - 0.01,
        hi + 0.01,
        0.04,
        0.06,
        1.5,
        -1.2,
    ] {
        for off in [0.0, 0.02, 0.3] {
            let (bodies, frames) = pair::<T, G>(d, off);
            let l = limit(&frames, lo, hi);
            assert!((l.offset(&bodies).unwrap().to_f64() - d).abs() < 1e-5);
            let mut out = ConstraintEval::default();
            l.evaluate(&bodies, &mut out);
            let expect = if d < 0.5 * (lo + hi) { d - lo } else { hi - d };
            assert!((out.value[0].to_f64() - expect).abs() < 1e-5);
            let report = check_gradient(&l, &bodies).unwrap();
            assert!(report.passed(), "{report}");
            worst = worst.max(report.worst_relative_error);
            // Random states within 2 mm and 0.005 rad: with lever arms below 2 m, d moves
            // by less than 9 mm, so it stays on its side of the middle (0.05) by more than
            // the f32 step h = 1e-3 m.
            let report = check_gradient_perturbed(&l, &bodies, &mut rng, 4, 0.002, 0.005).unwrap();
            assert!(report.passed(), "{report}");
            worst = worst.max(report.worst_relative_error);
            // One-sided, the world on either side at that body's joint frame pose.
            for world_side in [0, 1] {
                let p = frames[world_side].world_pose(&bodies[world_side].pose());
                let wf = JointFrame::new(p.position, p.rotation);
                let l = if world_side == 0 {
                    PrismaticLimit::new(None, wf, Some(BodyId(1)), frames[1], c(lo), c(hi))
                } else {
                    PrismaticLimit::new(Some(BodyId(0)), frames[0], None, wf, c(lo), c(hi))
                }
                .unwrap();
                let report = check_gradient(&l, &bodies).unwrap();
                assert!(report.passed(), "{report}");
                worst = worst.max(report.worst_relative_error);
            }
        }
    }
    eprintln!(
        "prismatic limit gradient {} {}: worst relative error {worst:.3e}",
        G::NAME,
        T::NAME
    );
    worst
}

#[test]
fn prismatic_limit_gradient_matrix_f64() {
    assert!(gradient_cases::<f64, M64>() < 1e-7);
}

#[test]
fn prismatic_limit_gradient_quaternion_f64() {
    assert!(gradient_cases::<f64, Q64>() < 1e-7);
}

#[test]
fn prismatic_limit_gradient_matrix_f32() {
    assert!(gradient_cases::<f32, M32>() < 2e-3);
}

#[test]
fn prismatic_limit_gradient_quaternion_f32() {
    assert!(gradient_cases::<f32, Q32>() < 2e-3);
}

#[test]
fn prismatic_limit_rejects_bad_input() {
    let f = JointFrame::<f64, M64>::identity();
    let b = Some(BodyId(0));
    assert!(PrismaticLimit::new(None, f, b, f, 0.1, 0.1).is_err());
    assert!(PrismaticLimit::new(None, f, b, f, 0.2, -0.1).is_err());
    assert!(PrismaticLimit::new(None, f, b, f, f64::NAN, 0.1).is_err());
    assert!(PrismaticLimit::new(None, f, b, f, -0.1, f64::INFINITY).is_err());
    assert!(PrismaticLimit::new(None, f, None, f, -0.1, 0.1).is_err());
    assert!(PrismaticLimit::new(b, f, b, f, -0.1, 0.1).is_err());
    let ok = PrismaticLimit::new(b, f, None, f, -0.1, 0.1).unwrap();
    assert!(ok.with_compliance(-1.0).is_err());
    assert!(ok.with_compliance(f64::INFINITY).is_err());
    assert_eq!(ok.limits(), (-0.1, 0.1));
    assert_eq!(ok.lambda_bounds(0), (0.0, f64::INFINITY));
    assert!(!ok.solve_as_block());
    assert_eq!(ok.kind(), "prismatic_limit");
    assert_eq!(ok.name(), "prismatic_limit(0, world)");
    let mut out = ConstraintEval::default();
    ok.evaluate(&[], &mut out);
    assert!(out.value[0].is_nan());
}

fn options<T: Real>(iterations: usize) -> SolverOptions<T> {
    SolverOptions {
        dt: c(1.0 / 60.0),
        substeps: 20,
        iterations,
        solve_mode: SolveMode::Block,
        gravity: v(0.0, -9.81, 0.0),
        primal_correction: false,
        ..SolverOptions::default()
    }
}

/// A body on a slider to the world whose axis is tilted 30° from vertical, its joint
/// point 0.2 m off its centre, limited to [−0.2, 0.3] m; launched up the slide at
/// `speed` m/s from d = `d0`, with `iterations` sweeps per substep. Returns the worst
/// excess over the limits after each substep (m) and the range of d seen, over 3 s.
fn slider<T: Real, G: LieGroup<T>>(d0: f64, speed: f64, iterations: usize) -> (f64, f64, f64) {
    let (lo, hi) = (-0.2, 0.3);
    let mut world = World::<T, G>::new(options(iterations)).unwrap();
    // Joint z onto world y (R_x(−90°)), then tilted 30° about world z.
    let tilt = G::exp(&v(0.0, 0.0, 30f64.to_radians())).compose(&G::exp(&v(-FRAC_PI_2, 0.0, 0.0)));
    let axis = tilt.act(&v(0.0, 0.0, 1.0));
    let r2 = v::<T>(0.2, 0.0, 0.0);
    let frames = [
        JointFrame::new(v(0.0, 0.0, 0.0), tilt),
        JointFrame::new(r2, tilt),
    ];
    // Body orientation I: R̄₂ = R̄₁; joint point at d0 along the axis.
    let position = axis * c::<T>(d0) - r2;
    let b = body::<T, G>(position, G::identity())
        .with_velocity(axis * c::<T>(speed), Vector3::zeros())
        .unwrap();
    let id = world.add_body(b).unwrap();
    let joint = Prismatic::new(None, frames[0], Some(id), frames[1]).unwrap();
    world.add_constraint(joint).unwrap();
    let l = PrismaticLimit::new(None, frames[0], Some(id), frames[1], c(lo), c(hi)).unwrap();
    world.add_constraint(l).unwrap();
    let (mut excess, mut min, mut max) = (f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    // Measured after every substep's solve.
    for _ in 0..180 * world.options().substeps {
        world.substep();
        let d = l.offset(world.bodies()).unwrap().to_f64();
        assert!(world.bodies()[0].is_finite());
        excess = excess.max(lo - d).max(d - hi);
        min = min.min(d);
        max = max.max(d);
    }
    (excess, min, max)
}

fn slider_held<T: Real, G: LieGroup<T>>(tol: f64) {
    let mut worst = f64::NEG_INFINITY;
    // Launched up into the upper stop, falls onto the lower one; launched hard up from
    // the lower stop; started 1 cm and 30 cm below the lower stop. Each start outside is
    // pushed in within one substep, which launches the body into the upper stop at
    // 0.01/h = 12 m/s or 0.3/h = 360 m/s. The 0.3 m corrections at either stop, coupled
    // to the joint's rotation rows through the 0.2 m lever arm, need 20 Gauss–Seidel
    // sweeps: with 10 the excess after them was 2.9e-9 m (f64), with 20 below 1e-15 m.
    for (d0, speed, iterations) in [
        (0.0, 3.0, 10),
        (-0.2, 8.0, 10),
        (-0.21, 0.0, 10),
        (-0.5, 0.0, 20),
    ] {
        let (excess, min, max) = slider::<T, G>(d0, speed, iterations);
        eprintln!(
            "prismatic [−0.2, 0.3] m {} {} d₀ {d0} v₀ {speed}, {iterations} iterations: \
             worst excess {excess:.3e} m, range [{min:.6}, {max:.6}]",
            G::NAME,
            T::NAME
        );
        // Both stops are reached (the starts outside rebound into the upper one).
        assert!(min < -0.2 + 1e-4, "never reached the lower stop");
        assert!(max > 0.3 - 1e-4, "never reached the upper stop");
        worst = worst.max(excess);
    }
    assert!(worst <= tol, "{} {}: excess {worst:e}", G::NAME, T::NAME);
}

#[test]
fn prismatic_limit_holds_matrix_f64() {
    slider_held::<f64, M64>(1e-9);
}

#[test]
fn prismatic_limit_holds_quaternion_f64() {
    slider_held::<f64, Q64>(1e-9);
}

#[test]
fn prismatic_limit_holds_matrix_f32() {
    slider_held::<f32, M32>(1e-5);
}

#[test]
fn prismatic_limit_holds_quaternion_f32() {
    slider_held::<f32, Q32>(1e-5);
}
