//! Velocity-level Rayleigh damping (paper Section 4.4, (60)–(66); Algorithm 1 lines
//! 11–14): [`Constraint::damping`], [`World::solve_velocities`], the joints'
//! `with_damping` and the scene files' `damping`.
//!
//! The reference system is a damped spring: a mass held by a fixed joint whose rows
//! of one kind (translation or rotation) are compliant with α and damped with b, the
//! others hard. Its rows are linear in the state, so each substep of the integrator is
//! a linear map and the analytic numbers below are exact for the discrete scheme (see
//! the module docs of `lie_xpbd::xpbd`, "A damped spring"):
//!
//! * continuous: ω₀ = 1/√(α m), ζ = b/(2√(α m)), amplitude decay rate σ = b/(2 α m);
//! * undamped XPBD: decay rate σ_u = ln(1 + h²ω₀²)/(2h) (its numerical dissipation);
//! * damped XPBD: σ_d = σ_u + ln(1 + 2σh)/(2h) = σ_u + σ(1 − σh + O(σ²h²)).

use lie_xpbd::joint::{Fixed, JointFrame, Spherical};
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::scene::{Scene, SceneErrorKind};
use lie_xpbd::xpbd::{
    check_gradient, Body, BodyId, Constraint, ConstraintEval, SolveMode, SolverOptions, World,
    XpbdError, MAX_BODIES,
};
use nalgebra::Vector3;

fn c<T: Real>(x: f64) -> T {
    T::cast(x)
}

/// Mass m = 1 kg; a translational compliance α = 1e-3 m/N (k = 1000 N/m) gives
/// ω₀ = 31.62 rad/s; a rotational compliance 0.1 rad/(N·m) on I = 0.01 kg·m² gives the
/// same ω₀. b = 2ζ/ω₀ with ζ = 0.05: b = 3.162e-3 s, σ = ζω₀ = 1.581 1/s.
const MASS: f64 = 1.0;
const INERTIA: f64 = 0.01;
const ALPHA_LIN: f64 = 1e-3;
const ALPHA_ROT: f64 = 0.1;
const ZETA: f64 = 0.05;
/// Substep h = Δt (one substep), s: sampling every substep keeps the sampled peaks
/// within ½(ω₀h)² = 5e-6 of the true ones (relative).
const H: f64 = 1e-4;

fn omega0() -> f64 {
    1.0 / (ALPHA_LIN * MASS).sqrt()
}

fn b_for_zeta() -> f64 {
    2.0 * ZETA / omega0()
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Dof {
    /// Translation along y: rows 0–2 compliant and damped, rotation rows hard.
    Linear,
    /// Rotation about z: rows 3–5 compliant and damped, translation rows hard.
    Angular,
}

/// A free body (gravity `g`) at the origin held by a fixed joint to the world, frames
/// at the centre of mass, displaced by 0.1 m along y or 0.1 rad about z.
fn spring<T: Real, G: LieGroup<T>>(
    dof: Dof,
    b: f64,
    mode: SolveMode,
    g: f64,
) -> (World<T, G>, BodyId) {
    let mut w = World::<T, G>::new(SolverOptions {
        dt: c(H),
        substeps: 1,
        iterations: 1,
        solve_mode: mode,
        gravity: Vector3::new(T::zero(), c(g), T::zero()),
        primal_correction: false,
        ..SolverOptions::default()
    })
    .unwrap();
    let (p, r) = match dof {
        Dof::Linear => (Vector3::new(0.0, 0.1, 0.0), Vector3::zeros()),
        Dof::Angular => (Vector3::zeros(), Vector3::new(0.0, 0.0, 0.1)),
    };
    let body = Body::dynamic(
        c(MASS),
        Vector3::repeat(c(INERTIA)),
        p.map(c::<T>),
        G::exp(&r.map(c::<T>)),
    )
    .unwrap();
    let id = w.add_body(body).unwrap();
    let (lin, rot) = match dof {
        Dof::Linear => ((ALPHA_LIN, b), (0.0, 0.0)),
        Dof::Angular => ((0.0, 0.0), (ALPHA_ROT, b)),
    };
    let joint = Fixed::new(
        None,
        JointFrame::identity(),
        Some(id),
        JointFrame::identity(),
    )
    .unwrap()
    .with_compliance(&[lin.0, lin.0, lin.0, rot.0, rot.0, rot.0].map(c::<T>))
    .unwrap()
    .with_damping(&[lin.1, lin.1, lin.1, rot.1, rot.1, rot.1].map(c::<T>))
    .unwrap();
    w.add_constraint(joint).unwrap();
    (w, id)
}

/// The oscillating coordinate: y (m) or the rotation angle about z (rad).
fn coordinate<T: Real, G: LieGroup<T>>(w: &World<T, G>, id: BodyId, dof: Dof) -> f64 {
    let body = w.body(id).unwrap();
    match dof {
        Dof::Linear => body.position.y.to_f64(),
        Dof::Angular => body.orientation.log().z.to_f64(),
    }
}

/// Runs `steps` substeps and returns the amplitude decay rate (1/s), the least-squares
/// slope of ln(peak) against time over the positive peaks, and the final energy of
/// the oscillator (J; kinetic + elastic ½C²/α, gravity is off).
fn decay_rate<T: Real, G: LieGroup<T>>(dof: Dof, b: f64, steps: usize) -> (f64, f64) {
    let (mut w, id) = spring::<T, G>(dof, b, SolveMode::Block, 0.0);
    let mut prev = [coordinate(&w, id, dof); 2];
    let mut peaks = Vec::new();
    for n in 1..=steps {
        w.step().unwrap();
        let x = coordinate(&w, id, dof);
        if prev[1] > prev[0] && prev[1] >= x && prev[1] > 0.0 {
            peaks.push(((n - 1) as f64 * H, prev[1].ln()));
        }
        prev = [prev[1], x];
    }
    assert!(peaks.len() >= 8, "{} peaks", peaks.len());
    let k = peaks.len() as f64;
    let (st, sy) = peaks.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
    let (mt, my) = (st / k, sy / k);
    let (sxy, sxx) = peaks.iter().fold((0.0, 0.0), |a, p| {
        (a.0 + (p.0 - mt) * (p.1 - my), a.1 + (p.0 - mt) * (p.0 - mt))
    });
    (-sxy / sxx, energy(&w))
}

/// Kinetic + elastic energy Σ ½C²/α over compliant rows − m g·p, J: `World::energy`,
/// checked against the sum written out here (every row of these worlds is an
/// unbounded equality row). The two sums differ only by the order of rounding: at
/// most a few ε of the magnitudes summed, bounded by 16 ε_T (|kinetic and gravity| +
/// elastic).
fn energy<T: Real, G: LieGroup<T>>(w: &World<T, G>) -> f64 {
    let base = w.kinetic_and_gravity_energy().to_f64();
    let mut elastic = 0.0;
    let mut eval = ConstraintEval::<T>::default();
    for k in 0..w.constraint_count() {
        let con = w.constraint(lie_xpbd::xpbd::ConstraintId(k)).unwrap();
        eval.clear();
        con.evaluate(w.bodies(), &mut eval);
        for j in 0..con.dim() {
            let a = con.compliance(j).to_f64();
            if a > 0.0 {
                elastic += 0.5 * eval.value[j].to_f64().powi(2) / a;
            }
        }
    }
    let e = w.energy().to_f64();
    let tol = 16.0 * T::default_epsilon().to_f64() * (base.abs() + elastic);
    assert!(
        (e - (base + elastic)).abs() <= tol,
        "World::energy {e} vs {} (tolerance {tol:e})",
        base + elastic
    );
    e
}

/// Checks the measured decay rates against the discrete and the continuous analytic
/// ones. `tol` is the relative tolerance on the damping's share σ_d − σ_u, `tol_u` the
/// absolute one (1/s) on the undamped rate σ_u.
fn check_decay<T: Real, G: LieGroup<T>>(dof: Dof, tol: f64, tol_u: f64) {
    // 2 s = 10 periods (T = 2π/ω₀ = 0.199 s); the damped amplitude falls to e^{−3.2}.
    let steps = 20_000;
    let b = b_for_zeta();
    let (w0, m, alpha) = match dof {
        Dof::Linear => (omega0(), MASS, ALPHA_LIN),
        Dof::Angular => (1.0 / (ALPHA_ROT * INERTIA).sqrt(), INERTIA, ALPHA_ROT),
    };
    let sigma = b / (2.0 * alpha * m);
    assert!((w0 * b / 2.0 - ZETA).abs() < 1e-12, "ζ = bω₀/2");
    let (su, eu) = decay_rate::<T, G>(dof, 0.0, steps);
    let (sd, ed) = decay_rate::<T, G>(dof, b, steps);
    let su_pred = (1.0 + H * H * w0 * w0).ln() / (2.0 * H);
    let share_pred = (1.0 + 2.0 * sigma * H).ln() / (2.0 * H);
    eprintln!(
        "{dof:?} {} {}: σ = {sigma:.6}, σ_u = {su:.6} (pred {su_pred:.6}), σ_d = {sd:.6}, \
         σ_d − σ_u = {:.6} (pred {share_pred:.6}), E_u = {eu:.3e} J, E_d = {ed:.3e} J",
        T::NAME,
        std::any::type_name::<G>(),
        sd - su,
    );
    // The undamped run decays by the integrator's own dissipation only, 0.05 1/s.
    assert!((su - su_pred).abs() < tol_u, "σ_u {su} vs {su_pred}");
    // The damping's share is the discrete prediction to `tol` …
    assert!(
        ((sd - su) - share_pred).abs() < tol * share_pred,
        "σ_d − σ_u = {} vs {share_pred}",
        sd - su
    );
    // … and the continuous σ = b/(2αm) to σh = 1.6e-4 (relative) more.
    assert!(((sd - su) - sigma).abs() < (tol + 2.0 * sigma * H) * sigma);
    // Energy decays faster with damping: the ratio after 2 s is e^{−2(σ_d−σ_u)·2 s}
    // = e^{−6.3} ≈ 1.8e-3, within the phase-dependent factor (1 ± ζ)² of the
    // kinetic/elastic split at the final instant.
    let ratio = ed / eu;
    let pred = (-2.0 * share_pred * 2.0).exp();
    assert!(
        ratio < pred * (1.0 + ZETA).powi(2) * 1.01 && ratio > pred * (1.0 - ZETA).powi(2) * 0.99,
        "E_d/E_u = {ratio} vs {pred}"
    );
}

// Tolerances. f64: the rate estimate's own error comes from peak sampling, at most
// ½(ω₀h)² = 5e-6 per peak in ln(peak), so ~5e-6 1/s on a slope fitted over 2 s; measured
// |σ_u − pred| = 2e-6 1/s and a relative error of the damping's share of 5e-6: the
// tolerances 1e-5 1/s and 1e-4 relative leave a margin of 5 and 20. f32: the 10⁴-substep
// runs carry a round-off drift of the per-substep update (ε = 1.2e-7 on increments of
// ~1e-3 of the state); measured |σ_u − pred| ≤ 1.2e-4 1/s and a relative error of the
// share ≤ 6.4e-5 (`--nocapture` prints both): tolerances 5e-4 1/s and 1e-3.
#[test]
fn damped_spring_decays_at_the_analytic_rate_linear_matrix_f64() {
    check_decay::<f64, SO3Matrix<f64>>(Dof::Linear, 1e-4, 1e-5);
}
#[test]
fn damped_spring_decays_at_the_analytic_rate_linear_quaternion_f64() {
    check_decay::<f64, UnitQuaternion<f64>>(Dof::Linear, 1e-4, 1e-5);
}
#[test]
fn damped_spring_decays_at_the_analytic_rate_linear_matrix_f32() {
    check_decay::<f32, SO3Matrix<f32>>(Dof::Linear, 1e-3, 5e-4);
}
#[test]
fn damped_spring_decays_at_the_analytic_rate_linear_quaternion_f32() {
    check_decay::<f32, UnitQuaternion<f32>>(Dof::Linear, 1e-3, 5e-4);
}
#[test]
fn damped_torsion_spring_decays_at_the_analytic_rate_matrix_f64() {
    check_decay::<f64, SO3Matrix<f64>>(Dof::Angular, 1e-4, 1e-5);
}
#[test]
fn damped_torsion_spring_decays_at_the_analytic_rate_quaternion_f64() {
    check_decay::<f64, UnitQuaternion<f64>>(Dof::Angular, 1e-4, 1e-5);
}
#[test]
fn damped_torsion_spring_decays_at_the_analytic_rate_matrix_f32() {
    check_decay::<f32, SO3Matrix<f32>>(Dof::Angular, 1e-3, 5e-4);
}
#[test]
fn damped_torsion_spring_decays_at_the_analytic_rate_quaternion_f32() {
    check_decay::<f32, UnitQuaternion<f32>>(Dof::Angular, 1e-3, 5e-4);
}

/// Total energy (kinetic + gravity + elastic) of the hanging damped spring, every
/// step over 1 s, never rises by more than round-off.
fn energy_never_increases<T: Real, G: LieGroup<T>>(mode: SolveMode) {
    // Gravity on: the body hangs and oscillates about y = −m g α = −9.81e-3 m.
    // 10 steps of Δt = 1e-3 s (the substep H is 1e-4 s) per ms: 10⁴ substeps.
    let (mut w, _) = spring::<T, G>(Dof::Linear, b_for_zeta(), mode, -9.81);
    let e0 = energy(&w);
    let mut prev = e0;
    let mut worst = f64::NEG_INFINITY;
    for _ in 0..10_000 {
        w.step().unwrap();
        let e = energy(&w);
        worst = worst.max(e - prev);
        prev = e;
    }
    // Round-off of an energy of ~6 J (½k(0.1 m)² = 5 J plus gravity) made of terms of
    // that size: 8 ulps, 1.1e-14 J in f64, 5.7e-6 J in f32 (ε = 1.2e-7). Measured: the
    // energy falls every step, by at least 2.3e-6 J.
    let tol = 8.0 * T::default_epsilon().to_f64() * e0.abs().max(5.0);
    eprintln!(
        "{} {} {mode:?}: E0 = {e0:.6} J, E(1 s) = {prev:.6e} J, largest rise {worst:.3e} J (tol {tol:.1e})",
        T::NAME,
        std::any::type_name::<G>()
    );
    assert!(worst <= tol, "energy rose by {worst} J in one step");
    assert!(prev < e0);
}

#[test]
fn damping_never_adds_energy_all_representations() {
    for mode in [SolveMode::Block, SolveMode::Rows] {
        energy_never_increases::<f64, SO3Matrix<f64>>(mode);
        energy_never_increases::<f64, UnitQuaternion<f64>>(mode);
        energy_never_increases::<f32, SO3Matrix<f32>>(mode);
        energy_never_increases::<f32, UnitQuaternion<f32>>(mode);
    }
}

/// A chain of two bodies on compliant, damped spherical joints (a nonlinear system
/// where rows couple through the rotations): the velocity pass alone, applied to the
/// states of a 1 s run, never raises the kinetic energy.
fn pass_never_adds_kinetic_energy<T: Real, G: LieGroup<T>>(mode: SolveMode) {
    let mut w = World::<T, G>::new(SolverOptions {
        solve_mode: mode,
        ..SolverOptions::default()
    })
    .unwrap();
    let half = Vector3::new(T::zero(), c(0.5), T::zero());
    let mut prev = None;
    for i in 0..2 {
        let body = Body::dynamic(
            c(1.0 + i as f64),
            Vector3::new(c(0.09), c(0.02), c(0.09)),
            Vector3::new(c(0.5 + i as f64), c(0.0), c(0.0)),
            G::exp(&Vector3::new(
                c(0.0),
                c(0.0),
                c(std::f64::consts::FRAC_PI_2),
            )),
        )
        .unwrap()
        .with_velocity(Vector3::zeros(), Vector3::new(c(1.0), c(-2.0), c(0.5)))
        .unwrap();
        let id = w.add_body(body).unwrap();
        let (b1, f1) = match prev {
            None => (None, JointFrame::identity()),
            Some(p) => (Some(p), JointFrame::new(-half, G::identity())),
        };
        let joint = Spherical::new(b1, f1, Some(id), JointFrame::new(half, G::identity()))
            .unwrap()
            .with_compliance(&[c(1e-5); 3])
            .unwrap()
            .with_damping(&[c(2e-3), c(5e-3), c(1e-2)])
            .unwrap();
        w.add_constraint(joint).unwrap();
        prev = Some(id);
    }
    let ke = |w: &World<T, G>| {
        w.bodies()
            .iter()
            .map(|b| b.kinetic_energy().to_f64())
            .sum::<f64>()
    };
    let mut removed = 0.0;
    for _ in 0..1000 {
        w.step().unwrap();
        let before = ke(&w);
        w.solve_velocities();
        let after = ke(&w);
        // Round-off of the kinetic energy sum (a few J): 8 ulps.
        assert!(
            after <= before * (1.0 + 8.0 * T::default_epsilon().to_f64()),
            "{before} -> {after}"
        );
        removed += before - after;
    }
    assert!(removed > 0.0);
}

#[test]
fn velocity_pass_never_adds_kinetic_energy_on_a_nonlinear_chain() {
    for mode in [SolveMode::Block, SolveMode::Rows] {
        pass_never_adds_kinetic_energy::<f64, SO3Matrix<f64>>(mode);
        pass_never_adds_kinetic_energy::<f64, UnitQuaternion<f64>>(mode);
        pass_never_adds_kinetic_energy::<f32, SO3Matrix<f32>>(mode);
        pass_never_adds_kinetic_energy::<f32, UnitQuaternion<f32>>(mode);
    }
}

/// A hanging chain of three compliant spherical joints; `damping` per joint row.
fn chain<T: Real, G: LieGroup<T>>(
    mode: SolveMode,
    compliance: f64,
    damping: Option<[f64; 3]>,
) -> World<T, G> {
    let mut w = World::<T, G>::new(SolverOptions {
        solve_mode: mode,
        substeps: 2,
        ..SolverOptions::default()
    })
    .unwrap();
    let half = Vector3::new(c(0.5), T::zero(), T::zero());
    let mut prev = None;
    for i in 0..3 {
        let body = Body::dynamic(
            c(1.0),
            Vector3::new(c(0.01), c(0.08), c(0.08)),
            Vector3::new(c(0.5 + i as f64), c(0.0), c(0.1 * i as f64)),
            G::exp(&Vector3::new(c(0.1), c(0.2 * i as f64), c(0.0))),
        )
        .unwrap();
        let id = w.add_body(body).unwrap();
        let (b1, f1) = match prev {
            None => (None, JointFrame::identity()),
            Some(p) => (Some(p), JointFrame::new(half, G::identity())),
        };
        let mut joint = Spherical::new(b1, f1, Some(id), JointFrame::new(-half, G::identity()))
            .unwrap()
            .with_compliance(&[c(compliance); 3])
            .unwrap();
        if let Some(d) = damping {
            joint = joint.with_damping(&d.map(c::<T>)).unwrap();
        }
        w.add_constraint(joint).unwrap();
        prev = Some(id);
    }
    w
}

fn same_bits<T: Real, G: LieGroup<T>>(a: &World<T, G>, b: &World<T, G>) -> bool {
    a.bodies().iter().zip(b.bodies()).all(|(x, y)| {
        x.position == y.position
            && x.velocity == y.velocity
            && x.angular_velocity == y.angular_velocity
            && x.orientation.to_matrix() == y.orientation.to_matrix()
    })
}

/// b = 0 (given explicitly) and damping on hard rows only are bit for bit the world
/// without damping, over 500 steps of a 3-link chain; and the pass changes no bit of a
/// world without damped rows.
fn zero_and_hard_damping_change_nothing<T: Real, G: LieGroup<T>>() {
    for mode in [SolveMode::Block, SolveMode::Rows] {
        for (compliance, damping) in [(1e-6, [0.0; 3]), (0.0, [0.5, 1.0, 2.0])] {
            let mut plain = chain::<T, G>(mode, compliance, None);
            let mut damped = chain::<T, G>(mode, compliance, Some(damping));
            for _ in 0..500 {
                plain.step().unwrap();
                damped.step().unwrap();
            }
            assert!(same_bits(&plain, &damped), "{mode:?} α = {compliance}");
            let before = damped.bodies().to_vec();
            damped.solve_velocities();
            assert!(before == damped.bodies(), "{mode:?} α = {compliance}");
        }
    }
}

#[test]
fn zero_damping_and_damped_hard_rows_are_bit_identical_to_no_damping() {
    zero_and_hard_damping_change_nothing::<f64, SO3Matrix<f64>>();
    zero_and_hard_damping_change_nothing::<f64, UnitQuaternion<f64>>();
    zero_and_hard_damping_change_nothing::<f32, SO3Matrix<f32>>();
    zero_and_hard_damping_change_nothing::<f32, UnitQuaternion<f32>>();
}

#[test]
fn hard_rows_of_a_damped_joint_are_untouched() {
    // The torsion spring damps its rotation rows; its translation rows are hard and
    // also given a damping (the joint's uniform b): they must see no impulse. The body
    // turns about its centre of mass, so v stays exactly 0 and p at the origin.
    let mut w = World::<f64, SO3Matrix<f64>>::new(SolverOptions {
        dt: H,
        gravity: Vector3::zeros(),
        ..SolverOptions::default()
    })
    .unwrap();
    let body = Body::dynamic(
        1.0,
        Vector3::repeat(INERTIA),
        Vector3::zeros(),
        SO3Matrix::exp(&Vector3::new(0.0, 0.0, 0.1)),
    )
    .unwrap()
    .with_velocity(Vector3::zeros(), Vector3::new(0.0, 0.0, 2.0))
    .unwrap();
    let id = w.add_body(body).unwrap();
    let joint = Fixed::new(
        None,
        JointFrame::identity(),
        Some(id),
        JointFrame::identity(),
    )
    .unwrap()
    .with_compliance(&[0.0, 0.0, 0.0, ALPHA_ROT, ALPHA_ROT, ALPHA_ROT])
    .unwrap()
    .with_damping(&[1.0; 6])
    .unwrap();
    w.add_constraint(joint).unwrap();
    for _ in 0..1000 {
        w.step().unwrap();
        let b = w.body(id).unwrap();
        assert_eq!(b.velocity, Vector3::zeros());
        assert_eq!(b.position, Vector3::zeros());
    }
    assert!(w.body(id).unwrap().angular_velocity.z.abs() < 2.0);
}

/// One row, C = |p + R r − a| − L: a damped distance spring to a point r of the body
/// (so both gradient blocks, position and rotation, carry the damping impulse).
struct DistanceSpring<T: Real> {
    body: BodyId,
    anchor: Vector3<T>,
    r: Vector3<T>,
    length: T,
    compliance: T,
    damping: T,
}

impl<T: Real, G: LieGroup<T>> Constraint<T, G> for DistanceSpring<T> {
    fn name(&self) -> String {
        "distance spring".into()
    }
    fn dim(&self) -> usize {
        1
    }
    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        [Some(self.body), None]
    }
    /// ∂C/∂p = nᵀ and D_R C = nᵀ D_R(R r) = −nᵀ R r̂ (20), n = d/|d|, d = p + R r − a.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        let b = &bodies[self.body.0];
        let rr = b.orientation.act(&self.r);
        let d = b.position + rr - self.anchor;
        let len = d.norm();
        let n = d / len;
        out.value[0] = len - self.length;
        // nᵀ(−R r̂)δ = −(Rᵀn)·(r × δ) = −δ·((Rᵀn) × r): the row is r × Rᵀn.
        let rot = self.r.cross(&(b.orientation.to_matrix().transpose() * n));
        for i in 0..3 {
            out.gradient[0][(0, i)] = n[i];
            out.gradient[0][(0, 3 + i)] = rot[i];
        }
    }
    fn compliance(&self, _row: usize) -> T {
        self.compliance
    }
    fn damping(&self, _row: usize) -> T {
        self.damping
    }
}

fn distance_world<T: Real, G: LieGroup<T>>(mode: SolveMode) -> World<T, G> {
    let mut w = World::<T, G>::new(SolverOptions {
        solve_mode: mode,
        substeps: 4,
        ..SolverOptions::default()
    })
    .unwrap();
    let body = Body::dynamic(
        c(2.0),
        Vector3::new(c(0.02), c(0.03), c(0.04)),
        Vector3::new(c(0.6), c(-0.8), c(0.1)),
        G::exp(&Vector3::new(c(0.3), c(-0.2), c(0.5))),
    )
    .unwrap()
    .with_velocity(
        Vector3::new(c(1.0), c(0.5), c(-0.3)),
        Vector3::new(c(2.0), c(-1.0), c(3.0)),
    )
    .unwrap();
    let id = w.add_body(body).unwrap();
    w.add_constraint(DistanceSpring {
        body: id,
        anchor: Vector3::zeros(),
        r: Vector3::new(c(0.1), c(0.05), c(0.0)),
        length: c(1.0),
        compliance: c(1e-4),
        damping: c(2e-2),
    })
    .unwrap();
    w
}

fn block_and_rows_agree<T: Real, G: LieGroup<T>>(traj_tol: f64) {
    // The test constraint's gradient is right (central differences).
    let w = distance_world::<T, G>(SolveMode::Block);
    let con = w.constraint(lie_xpbd::xpbd::ConstraintId(0)).unwrap();
    let check = check_gradient(con, w.bodies()).unwrap();
    assert!(check.passed(), "{check:?}");

    // One velocity pass on the same state: a 1×1 Cholesky solve (Δμ = r/l/l, l = √a)
    // against a division (Δμ = r/a) differ by a few ulps of the velocities.
    let mut a = distance_world::<T, G>(SolveMode::Block);
    let mut b = distance_world::<T, G>(SolveMode::Rows);
    a.solve_velocities();
    b.solve_velocities();
    let eps = T::default_epsilon().to_f64();
    for (x, y) in a.bodies().iter().zip(b.bodies()) {
        let dv = (x.velocity - y.velocity).norm().to_f64();
        let dw = (x.angular_velocity - y.angular_velocity).norm().to_f64();
        assert!(dv <= 8.0 * eps * x.velocity.norm().to_f64(), "Δv {dv}");
        assert!(
            dw <= 8.0 * eps * x.angular_velocity.norm().to_f64(),
            "Δω {dw}"
        );
    }
    // It did damp: the rate Ċ changed.
    let plain = distance_world::<T, G>(SolveMode::Block);
    assert!(plain.bodies()[0].velocity != a.bodies()[0].velocity);

    // 1 s of the run: the ulp-level differences of each projection grow with the
    // (nonlinear, spinning) dynamics; `traj_tol` (m) bounds the position difference.
    let mut a = distance_world::<T, G>(SolveMode::Block);
    let mut b = distance_world::<T, G>(SolveMode::Rows);
    let mut worst: f64 = 0.0;
    for _ in 0..1000 {
        a.step().unwrap();
        b.step().unwrap();
        worst = worst.max(
            (a.bodies()[0].position - b.bodies()[0].position)
                .norm()
                .to_f64(),
        );
    }
    eprintln!(
        "{} {}: block vs rows, 1 s: max |Δp| = {worst:.3e} m",
        T::NAME,
        std::any::type_name::<G>()
    );
    assert!(worst < traj_tol, "{worst}");
}

// Trajectory tolerances: the two modes differ by a few ulps per projection, grown by
// the dynamics over 4000 substeps; measured max |Δp| = 1.6e-15 m in f64 and 7.9e-7 m in
// f32 (`--nocapture`): tolerances 1e-13 m and 1e-5 m, margins of 60 and 12.
#[test]
fn block_and_rows_agree_on_a_single_row_matrix_f64() {
    block_and_rows_agree::<f64, SO3Matrix<f64>>(1e-13);
}
#[test]
fn block_and_rows_agree_on_a_single_row_quaternion_f64() {
    block_and_rows_agree::<f64, UnitQuaternion<f64>>(1e-13);
}
#[test]
fn block_and_rows_agree_on_a_single_row_matrix_f32() {
    block_and_rows_agree::<f32, SO3Matrix<f32>>(1e-3);
}
#[test]
fn block_and_rows_agree_on_a_single_row_quaternion_f32() {
    block_and_rows_agree::<f32, UnitQuaternion<f32>>(1e-3);
}

#[test]
fn bad_damping_is_rejected_with_a_typed_error() {
    let j = || {
        Spherical::<f64, SO3Matrix<f64>>::new(
            None,
            JointFrame::identity(),
            Some(BodyId(0)),
            JointFrame::identity(),
        )
        .unwrap()
    };
    assert!(matches!(
        j().with_damping(&[0.1, -1.0, 0.0]),
        Err(XpbdError::BadDamping { row: 1, .. })
    ));
    assert!(matches!(
        j().with_damping(&[f64::NAN, 0.0, 0.0]),
        Err(XpbdError::BadDamping { row: 0, .. })
    ));
    assert!(matches!(
        j().with_damping(&[0.1, 0.1]),
        Err(XpbdError::InvalidJoint {
            field: "damping",
            ..
        })
    ));
    // A user constraint returning a bad damping is rejected by the world.
    let mut w = World::<f64, SO3Matrix<f64>>::new(SolverOptions::default()).unwrap();
    let id = w
        .add_body(
            Body::dynamic(
                1.0,
                Vector3::repeat(0.1),
                Vector3::zeros(),
                SO3Matrix::identity(),
            )
            .unwrap(),
        )
        .unwrap();
    let e = w
        .add_constraint(DistanceSpring {
            body: id,
            anchor: Vector3::new(0.0, 1.0, 0.0),
            r: Vector3::zeros(),
            length: 1.0,
            compliance: 1e-3,
            damping: f64::INFINITY,
        })
        .unwrap_err();
    assert!(matches!(e, XpbdError::BadDamping { row: 0, .. }), "{e}");
    assert!(e.to_string().contains("damping must be finite and >= 0"));
}

const SCENE: &str = r#"
version = 1
name = "damped"

[solver]
dt = 0.001

[[bodies]]
name = "bob"
mass = 1.0
inertia = [0.01, 0.01, 0.01]

[[joints]]
name = "spring"
type = "spherical"
body1 = "world"
body2 = "bob"
compliance = 1e-3
DAMPING
"#;

fn scene(damping: &str) -> Result<Scene, lie_xpbd::scene::SceneError> {
    Scene::from_toml(&SCENE.replace("DAMPING", damping), "damped.toml")
}

#[test]
fn scene_joints_carry_their_damping() {
    for (text, want) in [
        ("damping = 0.004", [0.004; 3]),
        ("damping = [0.0, 0.01, 0.02]", [0.0, 0.01, 0.02]),
        ("", [0.0; 3]),
    ] {
        let built = scene(text).unwrap().build::<f64, SO3Matrix<f64>>().unwrap();
        let con = built
            .world
            .constraint(lie_xpbd::xpbd::ConstraintId(0))
            .unwrap();
        let got: Vec<f64> = (0..3).map(|r| con.damping(r)).collect();
        assert_eq!(got, want, "{text}");
        let built = scene(text)
            .unwrap()
            .build::<f32, UnitQuaternion<f32>>()
            .unwrap();
        let con = built
            .world
            .constraint(lie_xpbd::xpbd::ConstraintId(0))
            .unwrap();
        assert_eq!(con.damping(2), want[2] as f32, "{text}");
    }
    // The scene as written back keeps the damping.
    let s = scene("damping = [0.0, 0.01, 0.02]").unwrap();
    assert!(
        s.to_toml().contains("damping = [0.0, 0.01, 0.02]"),
        "{}",
        s.to_toml()
    );
}

#[test]
fn scene_damping_mistakes_name_the_joint_and_field() {
    let cases: [(&str, &str, &str); 5] = [
        (
            "damping = -0.1",
            "joints[0].damping",
            "damping must be finite and >= 0",
        ),
        (
            "damping = [0.1, 0.1]",
            "joints[0].damping",
            "give 3 dampings",
        ),
        (
            "damping = [0.0, nan, 0.0]",
            "joints[0].damping[1]",
            "finite and >= 0",
        ),
        ("damping = \"x\"", "joints[0].damping", "a damping (s)"),
        ("damping = 1", "", ""),
    ];
    for (text, path, fragment) in cases {
        match scene(text) {
            Ok(_) if path.is_empty() => {}
            Ok(_) => panic!("{text} accepted"),
            Err(e) => {
                let shown = e.to_string();
                assert_eq!(e.path.to_string(), path, "{shown}");
                assert!(shown.contains(fragment), "'{fragment}' not in {shown}");
                assert!(shown.contains("damped.toml:"), "{shown}");
            }
        }
    }
    // Damping on hard rows: per row, and one value over a joint whose rows are all hard.
    let hard = SCENE.replace("compliance = 1e-3", "compliance = [1e-3, 0.0, 1e-3]");
    let e = Scene::from_toml(
        &hard.replace("DAMPING", "damping = [0.1, 0.1, 0.1]"),
        "d.toml",
    )
    .unwrap_err();
    assert_eq!(e.kind, SceneErrorKind::Invalid);
    assert_eq!(e.path.to_string(), "joints[0].damping[1]", "{e}");
    assert!(
        e.to_string()
            .contains("spherical joint 'spring': row 1 is hard"),
        "{e}"
    );
    // One value over mixed rows damps the compliant ones only: accepted.
    Scene::from_toml(&hard.replace("DAMPING", "damping = 0.1"), "d.toml").unwrap();
    let all_hard = SCENE.replace("compliance = 1e-3", "");
    let e = Scene::from_toml(&all_hard.replace("DAMPING", "damping = 0.1"), "d.toml").unwrap_err();
    assert_eq!(e.path.to_string(), "joints[0].damping", "{e}");
    assert!(
        e.to_string().contains("every one of its 3 rows is hard"),
        "{e}"
    );
    assert!(e.to_string().contains("spherical joint 'spring'"), "{e}");
}
