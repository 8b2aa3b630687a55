//! Swing and twist limits of a spherical joint (Section 5.4.2, (76)–(78), App. F.2):
//! the decomposition, gradients against central differences of ⊞-perturbations in all
//! four combinations (SO3Matrix/UnitQuaternion × f32/f64), the singular states (swing
//! exactly 0 and π, a 180° swing limit) and hard limits held in a simulation.

use lie_xpbd::joint::{
    wrap_angle, JointFrame, JointKinematics, Spherical, SphericalSwingLimit, SphericalTwistLimit,
};
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::xpbd::{
    check_gradient, check_gradient_perturbed, Body, BodyId, Constraint, ConstraintEval, SolveMode,
    SolverOptions, World,
};
use nalgebra::{Matrix3, Vector3};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::f64::consts::{FRAC_PI_2, PI};

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

/// R_Δ = Exp(swing·a) R_z(twist) with a = (cos dir, sin dir, 0), the decomposition (76).
fn swing_twist<T: Real, G: LieGroup<T>>(swing: f64, dir: f64, twist: f64) -> G {
    G::exp(&v(swing * dir.cos(), swing * dir.sin(), 0.0)).compose(&G::exp(&v(0.0, 0.0, twist)))
}

/// Two bodies with non-trivial joint frames whose relative rotation R̄₁ᵀR̄₂ is
/// `swing_twist(swing, dir, twist)`.
fn pair<T: Real, G: LieGroup<T>>(swing: f64, dir: f64, twist: f64) -> Pair<T, G> {
    let f1 = JointFrame::new(v(0.1, -0.2, 0.3), G::exp(&v(0.2, -0.1, 0.4)));
    let f2 = JointFrame::new(v(-0.3, 0.1, 0.05), G::exp(&v(-0.3, 0.2, 0.1)));
    let r1 = G::exp(&v(0.3, -0.2, 0.1));
    let rbar2 = r1
        .compose(&f1.rotation)
        .compose(&swing_twist::<T, G>(swing, dir, twist));
    let r2 = rbar2.compose(&f2.rotation.inverse());
    (
        [body(v(0.2, 0.4, -0.1), r1), body(v(-0.5, 0.1, 0.3), r2)],
        [f1, f2],
    )
}

fn kinematics<'a, T: Real, G: LieGroup<T>>(
    bodies: &[Body<T, G>; 2],
    frames: &'a [JointFrame<T, G>; 2],
) -> JointKinematics<'a, T, G> {
    JointKinematics::new(&bodies[0].pose(), &frames[0], &bodies[1].pose(), &frames[1])
}

fn swing_limit<T: Real, G: LieGroup<T>>(
    frames: &[JointFrame<T, G>; 2],
    max: f64,
) -> SphericalSwingLimit<T, G> {
    SphericalSwingLimit::new(
        Some(BodyId(0)),
        frames[0],
        Some(BodyId(1)),
        frames[1],
        c(max),
    )
    .unwrap()
}

fn twist_limit<T: Real, G: LieGroup<T>>(
    frames: &[JointFrame<T, G>; 2],
    lo: f64,
    hi: f64,
    reference: f64,
) -> SphericalTwistLimit<T, G> {
    SphericalTwistLimit::new(
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

/// The same limit with the world as side 1, at body 0's joint frame pose.
fn world_frame<T: Real, G: LieGroup<T>>(
    bodies: &[Body<T, G>; 2],
    frames: &[JointFrame<T, G>; 2],
) -> JointFrame<T, G> {
    let p = frames[0].world_pose(&bodies[0].pose());
    JointFrame::new(p.position, p.rotation)
}

/// `check_gradient` at the state and `check_gradient_perturbed` at 4 random states within
/// `rot` rad of it (positions within 0.1 m); asserts both pass and returns the worst
/// error.
fn check<T: Real, G: LieGroup<T>>(
    limit: &dyn Constraint<T, G>,
    bodies: &[Body<T, G>],
    rng: &mut StdRng,
    rot: f64,
) -> f64 {
    let report = check_gradient(limit, bodies).unwrap();
    assert!(report.passed(), "{report}");
    let mut worst = report.worst_relative_error;
    let report = check_gradient_perturbed(limit, bodies, rng, 4, 0.1, rot).unwrap();
    assert!(report.passed(), "{report}");
    worst = worst.max(report.worst_relative_error);
    worst
}

// =======================================================================================
// Decomposition
// =======================================================================================

/// The angles and the axis read back from a constructed R_Δ = Exp(θa)R_z(ψ), and the
/// twist gradient's third component 1 and length 1/cos(θ_swing/2).
fn decomposition<T: Real, G: LieGroup<T>>(tol: f64) {
    let mut worst = 0.0f64;
    for swing in [0.0, 1e-3, 0.3, 1.2, FRAC_PI_2, 2.5, 3.0] {
        for dir in [0.0, 0.7, -2.0, 3.0] {
            for twist in [0.0, 0.4, -1.3, 3.0, -3.1] {
                let (bodies, frames) = pair::<T, G>(swing, dir, twist);
                let k = kinematics(&bodies, &frames);
                worst = worst.max((k.swing_angle().to_f64() - swing).abs());
                if swing > 1e-2 {
                    let a = k.swing_axis();
                    let expect = v::<T>(dir.cos(), dir.sin(), 0.0);
                    worst = worst.max((a - expect).amax().to_f64());
                }
                let psi = k.twist_angle().unwrap().to_f64();
                worst = worst.max(wrap_angle(psi - twist).abs());
                let (_, [_, g2]) = k.twist_angle_gradient().unwrap();
                // g2 = (J₂t)ᵀ, so t = J₂ᵀg2.
                let rot2 = v::<T>(g2[3].to_f64(), g2[4].to_f64(), g2[5].to_f64());
                let t = frames[1].rotation.act_inv(&rot2);
                let scale = 1.0 / (swing / 2.0).cos();
                worst = worst.max((t.z.to_f64() - 1.0).abs());
                worst = worst.max((t.norm().to_f64() - scale).abs() / scale);
            }
        }
    }
    eprintln!(
        "decomposition {} {}: worst error {worst:.3e}",
        G::NAME,
        T::NAME
    );
    assert!(worst < tol, "{worst}");
}

#[test]
fn swing_twist_decomposition_matrix_f64() {
    decomposition::<f64, M64>(1e-9);
}

#[test]
fn swing_twist_decomposition_quaternion_f64() {
    decomposition::<f64, Q64>(1e-9);
}

#[test]
fn swing_twist_decomposition_matrix_f32() {
    decomposition::<f32, M32>(2e-3);
}

#[test]
fn swing_twist_decomposition_quaternion_f32() {
    decomposition::<f32, Q32>(2e-3);
}

// =======================================================================================
// Gradients against finite differences
// =======================================================================================

/// Swing states (swing, rotation scale of the random states around it): just inside
/// and outside a 30° cone, near 0 and near π, and in between. The central difference
/// of θ_swing near its cone points 0 and π has a truncation error of order h²/d², d the
/// distance to the cone point, so those states keep d ≥ 0.05 rad (f64: 1e-10/2.5e-3 =
/// 4e-8 < 1e-7) and their random perturbations small.
fn swing_states() -> Vec<(f64, f64)> {
    let max = 30f64.to_radians();
    vec![
        (max - 0.05, 0.02),
        (max + 0.05, 0.02),
        (max - 1e-3, 0.0),
        (max + 1e-3, 0.0),
        (0.05, 0.0),
        (0.08, 0.01),
        (FRAC_PI_2, 0.2),
        (2.0, 0.2),
        (PI - 0.08, 0.01),
        (PI - 0.05, 0.0),
    ]
}

fn swing_gradients<T: Real, G: LieGroup<T>>() -> f64 {
    let mut rng = StdRng::seed_from_u64(11);
    let mut worst = 0.0f64;
    let max = 30f64.to_radians();
    for (swing, rot) in swing_states() {
        for dir in [0.3, 2.5, -1.2] {
            for twist in [0.0, 1.0, -2.9] {
                let (bodies, frames) = pair::<T, G>(swing, dir, twist);
                for limit_max in [max, PI] {
                    let limit = swing_limit(&frames, limit_max);
                    let mut out = ConstraintEval::default();
                    limit.evaluate(&bodies, &mut out);
                    let expect = limit_max - swing;
                    assert!((out.value[0].to_f64() - expect).abs() < 1e-4);
                    worst = worst.max(check(&limit, &bodies, &mut rng, rot));
                }
                let one_sided = SphericalSwingLimit::new(
                    None,
                    world_frame(&bodies, &frames),
                    Some(BodyId(1)),
                    frames[1],
                    c(max),
                )
                .unwrap();
                worst = worst.max(check(&one_sided, &bodies, &mut rng, rot));
                let other_side = SphericalSwingLimit::new(
                    Some(BodyId(0)),
                    frames[0],
                    None,
                    {
                        let p = frames[1].world_pose(&bodies[1].pose());
                        JointFrame::new(p.position, p.rotation)
                    },
                    c(max),
                )
                .unwrap();
                worst = worst.max(check(&other_side, &bodies, &mut rng, rot));
            }
        }
    }
    worst
}

/// Twist states (twist, lower, upper, reference): both sides of both limits of ±45°,
/// near the middle of the range (where the row switches sides, a step away from it),
/// and both sides of ±π with a range around π and the reference on the near side.
fn twist_states() -> Vec<(f64, f64, f64, f64)> {
    let (lo, hi) = (-PI / 4.0, PI / 4.0);
    let (wlo, whi) = (0.8 * PI, 1.2 * PI);
    vec![
        (lo - 0.05, lo, hi, 0.0),
        (lo + 0.05, lo, hi, 0.0),
        (hi - 0.05, lo, hi, 0.0),
        (hi + 0.05, lo, hi, 0.0),
        (0.02, lo, hi, 0.0),
        (-0.02, lo, hi, 0.0),
        (PI - 0.05, wlo, whi, PI),
        (PI + 0.05, wlo, whi, PI),
        (-PI + 0.05, -whi, -wlo, -PI),
        (-PI - 0.05, -whi, -wlo, -PI),
        (1.6 * PI, -1.7 * PI, 1.7 * PI, 1.6 * PI),
    ]
}

/// The largest swing at which the twist gradient is checked by central differences.
/// θ_twist computed from R_Δ carries a round-off error of about ε/(1 + cos θ_swing)
/// (x and y of (78) are of size 1 + cos θ_swing, their errors of size ε), so its
/// central difference has a round-off error of about k·ε/(h(1 + cos θ_swing)); k ≈ 6
/// was measured in f32 (error 1.2e-2 at swing 2.8, h = 1e-3). For the f32 tolerance
/// 2e-3 with a factor 2 to spare this needs 1 + cos θ_swing ≥ 0.7, swing ≤ 1.8 rad. In
/// f64 the same error is below 1e-9 up to swing 2.8 (|t| = 1/cos 1.4 = 5.9).
fn twist_swing_cap<T: Real>() -> f64 {
    if T::default_epsilon().to_f64() < 1e-10 {
        2.8
    } else {
        1.8
    }
}

fn twist_gradients<T: Real, G: LieGroup<T>>() -> f64 {
    let mut rng = StdRng::seed_from_u64(12);
    let mut worst = 0.0f64;
    for (twist, lo, hi, reference) in twist_states() {
        // Swing 0 (pure twist), moderate, and as large as the check allows.
        let big = twist_swing_cap::<T>();
        for (swing, dir) in [(0.0, 0.0), (0.4, 1.1), (1.5, -2.2), (big, 0.6)] {
            let (bodies, frames) = pair::<T, G>(swing, dir, twist);
            let limit = twist_limit(&frames, lo, hi, reference);
            let angle = limit.angle(&bodies).unwrap().to_f64();
            assert!(
                (angle - twist).abs() < 1e-4,
                "{} {}: twist {angle} for {twist}",
                G::NAME,
                T::NAME
            );
            let mut out = ConstraintEval::default();
            limit.evaluate(&bodies, &mut out);
            let expect = if twist < 0.5 * (lo + hi) {
                twist - lo
            } else {
                hi - twist
            };
            assert!((out.value[0].to_f64() - expect).abs() < 1e-4);
            // Random states: small rotations, so as not to cross the middle of the range
            // or wind by π relative to the reference.
            worst = worst.max(check(&limit, &bodies, &mut rng, 0.02));
            let one_sided = SphericalTwistLimit::new(
                None,
                world_frame(&bodies, &frames),
                Some(BodyId(1)),
                frames[1],
                c(lo),
                c(hi),
            )
            .unwrap()
            .with_angle(c(reference))
            .unwrap();
            worst = worst.max(check(&one_sided, &bodies, &mut rng, 0.02));
        }
    }
    worst
}

/// Random bodies and frames (orientations uniform on SO(3), positions in a 1 m cube):
/// every state whose swing is in [0.1, π − 0.1] checks the swing limit, every state with
/// swing ≤ [`twist_swing_cap`] the twist limit.
fn random_gradients<T: Real, G: LieGroup<T>>() -> (f64, usize, usize) {
    let mut rng = StdRng::seed_from_u64(13);
    let mut fd_rng = StdRng::seed_from_u64(14);
    let (mut worst, mut n_swing, mut n_twist) = (0.0f64, 0, 0);
    let position = |rng: &mut StdRng| {
        v::<T>(
            rng.random_range(-0.5..0.5),
            rng.random_range(-0.5..0.5),
            rng.random_range(-0.5..0.5),
        )
    };
    for _ in 0..200 {
        let frames = [
            JointFrame::new(position(&mut rng), G::random(&mut rng)),
            JointFrame::new(position(&mut rng), G::random(&mut rng)),
        ];
        let bodies = [
            body(position(&mut rng), G::random(&mut rng)),
            body(position(&mut rng), G::random(&mut rng)),
        ];
        let swing = kinematics(&bodies, &frames).swing_angle().to_f64();
        if (0.1..=PI - 0.1).contains(&swing) {
            let limit = swing_limit(&frames, 0.5);
            worst = worst.max(check(&limit, &bodies, &mut fd_rng, 0.0));
            n_swing += 1;
        }
        if swing <= twist_swing_cap::<T>() {
            // Limits around the current twist, so that the row is not at its switch.
            let psi = kinematics(&bodies, &frames).twist_angle().unwrap().to_f64();
            let limit = twist_limit(&frames, psi - 0.3, psi + 1.0, psi);
            worst = worst.max(check(&limit, &bodies, &mut fd_rng, 0.0));
            n_twist += 1;
        }
    }
    (worst, n_swing, n_twist)
}

fn gradients<T: Real, G: LieGroup<T>>(tol: f64) {
    let s = swing_gradients::<T, G>();
    let t = twist_gradients::<T, G>();
    let (r, n_swing, n_twist) = random_gradients::<T, G>();
    eprintln!(
        "limit gradients {} {}: worst relative error swing {s:.3e}, twist {t:.3e}, \
         random states {r:.3e} ({n_swing} swing, {n_twist} twist)",
        G::NAME,
        T::NAME
    );
    assert!(n_swing > 100 && n_twist > 50);
    assert!(s.max(t).max(r) < tol);
}

#[test]
fn spherical_limit_gradients_matrix_f64() {
    gradients::<f64, M64>(1e-7);
}

#[test]
fn spherical_limit_gradients_quaternion_f64() {
    gradients::<f64, Q64>(1e-7);
}

#[test]
fn spherical_limit_gradients_matrix_f32() {
    gradients::<f32, M32>(2e-3);
}

#[test]
fn spherical_limit_gradients_quaternion_f32() {
    gradients::<f32, Q32>(2e-3);
}

// =======================================================================================
// Singular states
// =======================================================================================

/// Identity frames and body 2 at exactly `r2`: R_Δ = r2.
fn exact_pair<T: Real, G: LieGroup<T>>(r2: G) -> Pair<T, G> {
    let f = JointFrame::identity();
    (
        [
            body(v(0.0, 0.0, 0.0), G::identity()),
            body(v(0.0, -1.0, 0.0), r2),
        ],
        [f, f],
    )
}

/// Rotations with swing exactly 0 (entries exact) or exactly π (z mapped to −z
/// exactly).
fn exact_rotations<T: Real, G: LieGroup<T>>() -> (Vec<G>, Vec<G>) {
    let m =
        |rows: [[f64; 3]; 3]| G::from_matrix(&Matrix3::from_fn(|i, j| c::<T>(rows[i][j]))).unwrap();
    let zero = vec![
        G::identity(),
        m([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
        m([[-1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0]]),
    ];
    let pi = vec![
        m([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]]),
        m([[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]),
        m([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]]),
    ];
    (zero, pi)
}

fn finite_row<T: Real>(out: &ConstraintEval<T>) -> bool {
    out.value[0].is_finite() && out.gradient.iter().all(|g| g.iter().all(|x| x.is_finite()))
}

fn singular_states<T: Real, G: LieGroup<T>>() {
    let (zero, pi) = exact_rotations::<T, G>();
    for (r2, at_pi) in zero
        .into_iter()
        .map(|r| (r, false))
        .chain(pi.into_iter().map(|r| (r, true)))
    {
        let (bodies, frames) = exact_pair(r2);
        let k = kinematics(&bodies, &frames);
        let swing = k.swing_angle().to_f64();
        assert_eq!(swing, if at_pi { T::pi().to_f64() } else { 0.0 });
        let (theta, [g1, g2]) = k.swing_angle_gradient();
        assert!(theta.is_finite());
        // Unit rows from the fallback axis e₁ (joint frame 1).
        for g in [g1, g2] {
            assert!((g.norm().to_f64() - 1.0).abs() < 1e-6, "{g}");
        }
        assert_eq!(k.swing_axis(), Vector3::x());
        for max in [30f64.to_radians(), FRAC_PI_2, PI] {
            let limit = swing_limit(&frames, max);
            let mut out = ConstraintEval::default();
            limit.evaluate(&bodies, &mut out);
            assert!(finite_row(&out), "swing {swing}, limit {max}: {out:?}");
            let c0 = out.value[0].to_f64();
            let expect = c::<T>(max).to_f64() - swing;
            assert!((c0 - expect).abs() < 1e-6, "{c0} vs {expect}");
        }
        // The twist: defined at swing 0 (R_Δ is a pure twist), released at π.
        let twist = twist_limit(&frames, -0.5, 0.5, 0.0);
        let mut out = ConstraintEval::default();
        twist.evaluate(&bodies, &mut out);
        assert!(finite_row(&out));
        if at_pi {
            assert!(k.twist_angle().is_none() && k.twist_angle_gradient().is_none());
            assert!(twist.angle(&bodies).is_none());
            assert_eq!(out.value[0], T::zero());
            assert!(out
                .gradient
                .iter()
                .all(|g| g.iter().all(|x| *x == T::zero())));
        } else {
            let psi = k.twist_angle().unwrap();
            assert!(psi.is_finite());
            assert!(out.gradient[1].row(0).norm() > c(0.5));
        }
    }
    // Just outside the released band around swing π the twist is defined and finite.
    let eps = T::default_epsilon().to_f64();
    for d in [2.0 * (2.0 * eps.sqrt()).sqrt(), 0.05] {
        let (bodies, frames) = pair::<T, G>(PI - d, 0.4, 0.7);
        let k = kinematics(&bodies, &frames);
        let (psi, [g1, g2]) = k.twist_angle_gradient().unwrap();
        assert!(psi.is_finite() && g1.iter().chain(g2.iter()).all(|x| x.is_finite()));
    }
}

#[test]
fn singular_states_no_nan_matrix_f64() {
    singular_states::<f64, M64>();
}

#[test]
fn singular_states_no_nan_quaternion_f64() {
    singular_states::<f64, Q64>();
}

#[test]
fn singular_states_no_nan_matrix_f32() {
    singular_states::<f32, M32>();
}

#[test]
fn singular_states_no_nan_quaternion_f32() {
    singular_states::<f32, Q32>();
}

#[test]
fn spherical_limits_reject_bad_input() {
    let f = JointFrame::<f64, M64>::identity();
    let b = Some(BodyId(0));
    for max in [0.0, -0.1, PI + 1e-9, f64::NAN, f64::INFINITY] {
        assert!(
            SphericalSwingLimit::new(None, f, b, f, max).is_err(),
            "{max}"
        );
    }
    assert!(SphericalSwingLimit::new(None, f, None, f, 0.5).is_err());
    assert!(SphericalSwingLimit::new(b, f, b, f, 0.5).is_err());
    let swing = SphericalSwingLimit::new(None, f, b, f, PI).unwrap();
    assert!(swing.with_compliance(-1.0).is_err());
    assert!(swing.with_compliance(f64::NAN).is_err());
    assert_eq!(swing.with_compliance(1e-3).unwrap().compliance(0), 1e-3);
    assert_eq!(swing.lambda_bounds(0), (0.0, f64::INFINITY));
    assert!(!swing.solve_as_block());
    assert_eq!(swing.kind(), "spherical_swing_limit");
    assert_eq!(swing.name(), "spherical_swing_limit(world, 0)");
    assert_eq!(swing.max_angle(), PI);
    // f32: π rounded to f32 is accepted.
    let f32f = JointFrame::<f32, Q32>::identity();
    assert!(SphericalSwingLimit::new(None, f32f, b, f32f, std::f32::consts::PI).is_ok());

    assert!(SphericalTwistLimit::new(None, f, b, f, 1.0, 1.0).is_err());
    assert!(SphericalTwistLimit::new(None, f, b, f, 1.0, -1.0).is_err());
    assert!(SphericalTwistLimit::new(None, f, b, f, f64::NAN, 1.0).is_err());
    assert!(SphericalTwistLimit::new(None, f, b, f, -1.0, f64::INFINITY).is_err());
    assert!(SphericalTwistLimit::new(None, f, None, f, -1.0, 1.0).is_err());
    let twist = SphericalTwistLimit::new(b, f, None, f, -1.0, 4.0).unwrap();
    assert!(twist.with_compliance(-1.0).is_err());
    assert!(twist.with_angle(f64::NAN).is_err());
    assert_eq!(twist.with_angle(2.0).unwrap().reference_angle(), 2.0);
    assert_eq!(twist.limits(), (-1.0, 4.0));
    assert_eq!(twist.lambda_bounds(0), (0.0, f64::INFINITY));
    assert!(!twist.solve_as_block());
    assert_eq!(twist.name(), "spherical_twist_limit(0, world)");
    // A body not in the world: NaN value, no panic.
    let mut out = ConstraintEval::default();
    twist.evaluate(&[], &mut out);
    assert!(out.value[0].is_nan());
    swing.evaluate(&[], &mut out);
    assert!(out.value[0].is_nan());
}

// =======================================================================================
// Limits held in a simulation
// =======================================================================================

fn options<T: Real>(gravity: f64, iterations: usize) -> SolverOptions<T> {
    SolverOptions {
        dt: c(1.0 / 60.0),
        substeps: 20,
        iterations,
        solve_mode: SolveMode::Block,
        gravity: v(0.0, -gravity, 0.0),
        primal_correction: false,
        ..SolverOptions::default()
    }
}

/// Joint frame rotation turning the joint z axis onto world −y (R_x(90°)).
fn z_down<T: Real, G: LieGroup<T>>() -> G {
    G::exp(&v(FRAC_PI_2, 0.0, 0.0))
}

/// A pendulum (1 kg, joint point 0.5 m above its centre) on a ball joint at the world
/// origin; both joint z axes point down the pendulum when it hangs (swing 0, twist 0).
/// Started at orientation `r0` (body → world) with world angular velocity `w0` about the
/// joint (the linear velocity follows). Returns the world and the two joint frames.
fn ball_pendulum<T: Real, G: LieGroup<T>>(
    gravity: f64,
    r0: G,
    w0: Vector3<T>,
    iterations: usize,
) -> (World<T, G>, [JointFrame<T, G>; 2]) {
    let mut world = World::<T, G>::new(options(gravity, iterations)).unwrap();
    let joint_point = v::<T>(0.0, 0.5, 0.0);
    let position = -r0.act(&joint_point);
    let b = body::<T, G>(position, r0)
        .with_velocity(w0.cross(&position), r0.act_inv(&w0))
        .unwrap();
    let id = world.add_body(b).unwrap();
    let frames = [
        JointFrame::new(Vector3::zeros(), z_down()),
        JointFrame::new(joint_point, z_down()),
    ];
    let ball = Spherical::new(None, frames[0], Some(id), frames[1]).unwrap();
    world.add_constraint(ball).unwrap();
    (world, frames)
}

/// Swing limits: worst excess of θ_swing over θ_max after each substep's solve, and
/// the largest swing seen, over `steps` steps.
fn run_swing<T: Real, G: LieGroup<T>>(
    world: &mut World<T, G>,
    limit: &SphericalSwingLimit<T, G>,
    steps: usize,
) -> (f64, f64) {
    let max = limit.max_angle().to_f64();
    let (mut excess, mut largest) = (f64::NEG_INFINITY, 0.0f64);
    for _ in 0..steps * world.options().substeps {
        world.substep();
        assert!(world.bodies()[0].is_finite());
        let swing = limit.angle(world.bodies()).unwrap().to_f64();
        assert!(swing.is_finite());
        excess = excess.max(swing - max);
        largest = largest.max(swing);
    }
    (excess, largest)
}

fn swing_held<T: Real, G: LieGroup<T>>(tol: f64) -> f64 {
    let max = 30f64.to_radians();
    let mut worst = 0.0f64;
    // Released horizontally (outside the cone); hanging with a fast swing about world z
    // and about world x; tilted 20° and whirled about the vertical, so that it rides
    // the cone; 3 s each.
    let iterations = 10;
    let cases: [(&str, G, Vector3<T>); 4] = [
        (
            "horizontal",
            G::exp(&v(0.0, 0.0, FRAC_PI_2)),
            Vector3::zeros(),
        ),
        ("swing z", G::identity(), v(0.0, 0.0, 8.0)),
        ("swing x", G::identity(), v(-8.0, 0.0, 0.0)),
        (
            "cone",
            G::exp(&v(20f64.to_radians(), 0.0, 0.0)),
            v(0.0, 9.0, 0.0),
        ),
    ];
    for (name, r0, w0) in cases {
        let (mut world, frames) = ball_pendulum::<T, G>(9.81, r0, w0, iterations);
        let limit =
            SphericalSwingLimit::new(None, frames[0], Some(BodyId(0)), frames[1], c(max)).unwrap();
        world.add_constraint(limit).unwrap();
        let (excess, largest) = run_swing(&mut world, &limit, 180);
        eprintln!(
            "swing ≤ 30° {} {} {name}: worst excess {excess:.3e} rad, largest swing {:.4}°",
            G::NAME,
            T::NAME,
            largest.to_degrees()
        );
        assert!(largest > max - 1e-3, "{name}: never reached the limit");
        worst = worst.max(excess);
    }
    assert!(worst <= tol, "{} {}: excess {worst:e}", G::NAME, T::NAME);
    worst
}

#[test]
fn swing_limit_holds_matrix_f64() {
    swing_held::<f64, M64>(1e-6);
}

#[test]
fn swing_limit_holds_quaternion_f64() {
    swing_held::<f64, Q64>(1e-6);
}

#[test]
fn swing_limit_holds_matrix_f32() {
    swing_held::<f32, M32>(1e-5);
}

#[test]
fn swing_limit_holds_quaternion_f32() {
    swing_held::<f32, Q32>(1e-5);
}

/// Started upside down at swing exactly π with a 30° cone: identity joint frames with
/// the joint z axis along world z, gravity along −z, the joint point 0.5 m above the
/// centre along body z, and the body turned by exactly a half turn about world x (all
/// entries exact in both representations), so |e₃ × z| = 0 and the fallback axis e₁
/// is used. The first substep must push the pendulum 150° into the cone along the
/// fallback direction and keep it there; nothing may be NaN.
fn upside_down<T: Real, G: LieGroup<T>>() -> f64 {
    let r0 = G::from_quaternion(&nalgebra::Quaternion::new(
        T::zero(),
        T::one(),
        T::zero(),
        T::zero(),
    ))
    .unwrap();
    let mut world = World::<T, G>::new(SolverOptions {
        gravity: v(0.0, 0.0, -9.81),
        ..options(0.0, 10)
    })
    .unwrap();
    let joint_point = v::<T>(0.0, 0.0, 0.5);
    let id = world
        .add_body(body::<T, G>(-r0.act(&joint_point), r0))
        .unwrap();
    let frames = [JointFrame::identity(), JointFrame::at(joint_point)];
    world
        .add_constraint(Spherical::new(None, frames[0], Some(id), frames[1]).unwrap())
        .unwrap();
    let max = 30f64.to_radians();
    let limit = SphericalSwingLimit::new(None, frames[0], Some(id), frames[1], c(max)).unwrap();
    world.add_constraint(limit).unwrap();
    let k = limit.attachments().kinematics(world.bodies()).unwrap();
    assert_eq!(k.swing_angle(), T::pi());
    assert_eq!(k.swing_axis(), Vector3::x());
    let (mut first, mut worst, mut largest) = (0.0, f64::NEG_INFINITY, 0.0f64);
    for i in 0..180 * world.options().substeps {
        world.substep();
        assert!(world.bodies()[0].is_finite(), "substep {i}");
        let swing = limit.angle(world.bodies()).unwrap().to_f64();
        if i == 0 {
            first = swing - max;
        }
        worst = worst.max(swing - max);
        largest = largest.max(swing);
    }
    eprintln!(
        "upside down {} {}: excess after the first substep {first:.3e} rad, worst excess \
         {worst:.3e} rad, largest swing {:.4}°",
        G::NAME,
        T::NAME,
        largest.to_degrees()
    );
    worst
}

#[test]
fn swing_limit_from_upside_down_matrix_f64() {
    assert!(upside_down::<f64, M64>() <= 1e-6);
}

#[test]
fn swing_limit_from_upside_down_quaternion_f64() {
    assert!(upside_down::<f64, Q64>() <= 1e-6);
}

#[test]
fn swing_limit_from_upside_down_matrix_f32() {
    assert!(upside_down::<f32, M32>() <= 1e-5);
}

#[test]
fn swing_limit_from_upside_down_quaternion_f32() {
    assert!(upside_down::<f32, Q32>() <= 1e-5);
}

/// Twist limits: worst excess of the twist over its range after each substep's solve
/// (unwrapped here from θ_twist independently of the limit's own tracking), smallest
/// and largest twist, largest change in one substep, over `steps` steps.
fn run_twist<T: Real, G: LieGroup<T>>(
    world: &mut World<T, G>,
    limit: &SphericalTwistLimit<T, G>,
    steps: usize,
) -> (f64, f64, f64, f64) {
    let (lo, hi) = limit.limits();
    let (lo, hi) = (lo.to_f64(), hi.to_f64());
    let mut theta = limit.reference_angle().to_f64();
    let (mut excess, mut min, mut max, mut jump) =
        (f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for _ in 0..steps * world.options().substeps {
        world.substep();
        assert!(world.bodies()[0].is_finite());
        let k = limit.attachments().kinematics(world.bodies()).unwrap();
        let psi = k.twist_angle().unwrap().to_f64();
        let d = wrap_angle(psi - theta);
        theta += d;
        jump = jump.max(d.abs());
        min = min.min(theta);
        max = max.max(theta);
        excess = excess.max(lo - theta).max(theta - hi);
    }
    (excess, min, max, jump)
}

fn twist_held<T: Real, G: LieGroup<T>>(tol: f64) -> f64 {
    let lim = PI / 4.0;
    let mut worst = 0.0f64;
    // Hanging and spun about its long axis (world y, i.e. the joint axis) either way;
    // spun and swung with a 30° swing limit as well; started twisted by 90° (outside);
    // 3 s each. Joint z = world −y, so a spin +ω about world y is a twist rate −ω.
    let cases: [(&str, G, Vector3<T>, bool); 5] = [
        ("spin +", G::identity(), v(0.0, 8.0, 0.0), false),
        ("spin −", G::identity(), v(0.0, -8.0, 0.0), false),
        ("spin + swing", G::identity(), v(3.0, 8.0, 4.0), true),
        (
            "spin − swing",
            G::exp(&v(0.3, 0.0, 0.0)),
            v(-2.0, -10.0, 5.0),
            true,
        ),
        (
            "outside",
            G::exp(&v(0.0, FRAC_PI_2, 0.0)),
            Vector3::zeros(),
            false,
        ),
    ];
    for (name, r0, w0, with_swing) in cases {
        let iterations = 10;
        let (mut world, frames) = ball_pendulum::<T, G>(9.81, r0, w0, iterations);
        if with_swing {
            let cone = SphericalSwingLimit::new(
                None,
                frames[0],
                Some(BodyId(0)),
                frames[1],
                c(30f64.to_radians()),
            )
            .unwrap();
            world.add_constraint(cone).unwrap();
        }
        let limit =
            SphericalTwistLimit::new(None, frames[0], Some(BodyId(0)), frames[1], c(-lim), c(lim))
                .unwrap();
        world.add_constraint(limit).unwrap();
        let (excess, min, max, _) = run_twist(&mut world, &limit, 180);
        eprintln!(
            "twist ±45° {} {} {name}: worst excess {excess:.3e} rad, range [{:.3}°, {:.3}°]",
            G::NAME,
            T::NAME,
            min.to_degrees(),
            max.to_degrees()
        );
        assert!(
            max > lim - 1e-3 || min < -lim + 1e-3,
            "{name}: never reached the limit"
        );
        worst = worst.max(excess);
    }
    assert!(worst <= tol, "{} {}: excess {worst:e}", G::NAME, T::NAME);
    worst
}

#[test]
fn twist_limit_holds_matrix_f64() {
    twist_held::<f64, M64>(1e-6);
}

#[test]
fn twist_limit_holds_quaternion_f64() {
    twist_held::<f64, Q64>(1e-6);
}

#[test]
fn twist_limit_holds_matrix_f32() {
    twist_held::<f32, M32>(1e-5);
}

#[test]
fn twist_limit_holds_quaternion_f32() {
    twist_held::<f32, Q32>(1e-5);
}

/// Twist limits ±270°, no gravity: spun about its axis at 5 rad/s, the pendulum winds
/// past ±180° (where θ_twist jumps by 2π) and is stopped at ±270°.
fn twist_wide<T: Real, G: LieGroup<T>>(tol: f64) {
    let lim = 1.5 * PI;
    for omega in [5.0, -5.0] {
        let (mut world, frames) = ball_pendulum::<T, G>(0.0, G::identity(), v(0.0, omega, 0.0), 10);
        let limit =
            SphericalTwistLimit::new(None, frames[0], Some(BodyId(0)), frames[1], c(-lim), c(lim))
                .unwrap();
        world.add_constraint(limit).unwrap();
        let (excess, min, max, jump) = run_twist(&mut world, &limit, 120);
        eprintln!(
            "twist ±270° {} {} ω {omega}: range [{:.2}°, {:.2}°], worst excess {excess:.3e} rad, \
             largest substep {jump:.4} rad",
            G::NAME,
            T::NAME,
            min.to_degrees(),
            max.to_degrees()
        );
        assert!(jump < 0.05, "twist not continuous: substep {jump}");
        assert!(excess <= tol, "excess {excess:e}");
        // A spin +ω about world y (= −joint z) is a twist rate −ω.
        let reached = if omega > 0.0 { -min } else { max };
        assert!(
            reached >= 269.5f64.to_radians(),
            "reached only {}°",
            reached.to_degrees()
        );
    }
}

#[test]
fn twist_limit_unwraps_matrix_f64() {
    twist_wide::<f64, M64>(1e-6);
}

#[test]
fn twist_limit_unwraps_quaternion_f32() {
    twist_wide::<f32, Q32>(1e-5);
}

/// A 180° swing limit and a ±45° twist limit never act on a pendulum that loops over
/// the top (up to 0.06° from swing π; in f32 this is inside the band of 1.5° around π
/// where the twist is undefined and its row released): the trajectory is that of the
/// same pendulum without limits, and nothing is NaN. The difference is exactly zero: an
/// inactive row is projected with Δλ = 0, and a zero correction (p + 0, R·Exp(0) with
/// Exp(0) = I exactly) changes no bit.
fn loop_over_the_top<T: Real, G: LieGroup<T>>(tol: f64) {
    let w0 = v::<T>(0.0, 0.0, 13.0);
    let (mut free, _) = ball_pendulum::<T, G>(9.81, G::identity(), w0, 10);
    let (mut world, frames) = ball_pendulum::<T, G>(9.81, G::identity(), w0, 10);
    let swing =
        SphericalSwingLimit::new(None, frames[0], Some(BodyId(0)), frames[1], T::pi()).unwrap();
    let twist = SphericalTwistLimit::new(
        None,
        frames[0],
        Some(BodyId(0)),
        frames[1],
        c(-PI / 4.0),
        c(PI / 4.0),
    )
    .unwrap();
    world.add_constraint(swing).unwrap();
    world.add_constraint(twist).unwrap();
    let (mut largest, mut diff) = (0.0f64, 0.0f64);
    let mut out = ConstraintEval::default();
    for _ in 0..120 {
        world.step().unwrap();
        free.step().unwrap();
        let (a, b) = (&world.bodies()[0], &free.bodies()[0]);
        diff = diff
            .max((a.position - b.position).amax().to_f64())
            .max(a.orientation.boxminus(&b.orientation).amax().to_f64());
        largest = largest.max(swing.angle(world.bodies()).unwrap().to_f64());
        for limit in [&swing as &dyn Constraint<T, G>, &twist] {
            out.clear();
            limit.evaluate(world.bodies(), &mut out);
            assert!(finite_row(&out));
        }
    }
    eprintln!(
        "loop {} {}: largest swing {:.4}°, max difference from the free pendulum {diff:.3e}",
        G::NAME,
        T::NAME,
        largest.to_degrees()
    );
    assert!(largest > 179.0f64.to_radians(), "did not loop: {largest}");
    assert!(diff <= tol, "{diff}");
}

#[test]
fn loop_through_swing_pi_matrix_f64() {
    loop_over_the_top::<f64, M64>(0.0);
}

#[test]
fn loop_through_swing_pi_quaternion_f64() {
    loop_over_the_top::<f64, Q64>(0.0);
}

#[test]
fn loop_through_swing_pi_matrix_f32() {
    loop_over_the_top::<f32, M32>(0.0);
}

#[test]
fn loop_through_swing_pi_quaternion_f32() {
    loop_over_the_top::<f32, Q32>(0.0);
}
