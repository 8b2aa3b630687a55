//! The solver's f32 arithmetic setting (`SolverOptions::f32_arithmetic`,
//! `solver.f32_arithmetic` in scene files): compensated (the default) or plain.
//!
//! * The scene setting parses, round-trips, and a bad value is a located error.
//! * f64 ignores it: both settings give the same f64 trajectory bit for bit.
//! * Plain is really plain in f32: its trajectory differs from the compensated one.
//! * Plain stays near f64 over a few seconds of the triple pendulum (bound below).

use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::linalg::BandScalar;
use lie_xpbd::scene::{F32ArithmeticSpec, Scene, SceneErrorKind};
use lie_xpbd::scenes::pendulum::{self, PendulumConfig};
use lie_xpbd::xpbd::{F32Arithmetic, SolveMode, World};
use nalgebra::Vector3;

const PENDULUM: &str = lie_xpbd::scenes::pendulum::SCENE_TOML;

/// The shipped pendulum scene with `f32_arithmetic = VALUE` in its `[solver]` table
/// (inserted as the table's first line, line 12 of the file).
fn pendulum_with(value: &str) -> (String, usize) {
    let at = PENDULUM
        .find("[solver]\n")
        .expect("the scene has a solver table")
        + 9;
    let line = PENDULUM[..at].lines().count() + 1;
    let text = format!(
        "{}f32_arithmetic = \"{value}\"\n{}",
        &PENDULUM[..at],
        &PENDULUM[at..]
    );
    (text, line)
}

#[test]
fn scene_setting_parses_and_round_trips() {
    let (text, _) = pendulum_with("plain");
    let scene = Scene::from_toml(&text, "pendulum.toml").unwrap();
    assert_eq!(scene.file().solver.f32_arithmetic, F32ArithmeticSpec::Plain);
    let written = toml::to_string(scene.file()).unwrap();
    assert!(written.contains("f32_arithmetic = \"plain\""), "{written}");
    let world = scene.build::<f32, SO3Matrix<f32>>().unwrap().world;
    assert_eq!(world.options().f32_arithmetic, F32Arithmetic::Plain);

    // The default is compensated and is not written out.
    let scene = Scene::from_toml(PENDULUM, "pendulum.toml").unwrap();
    assert_eq!(
        scene.file().solver.f32_arithmetic,
        F32ArithmeticSpec::Compensated
    );
    assert!(!toml::to_string(scene.file())
        .unwrap()
        .contains("f32_arithmetic"));

    // As an override (`--set solver.f32_arithmetic=plain`).
    let mut scene = Scene::from_toml(PENDULUM, "pendulum.toml").unwrap();
    scene.set("solver.f32_arithmetic", "plain").unwrap();
    assert_eq!(scene.file().solver.f32_arithmetic, F32ArithmeticSpec::Plain);
    assert_eq!(
        F32Arithmetic::from_name("compensated"),
        Some(F32Arithmetic::Compensated)
    );
    assert_eq!(F32Arithmetic::from_name("fast"), None);
}

#[test]
fn bad_value_is_located() {
    let (text, line) = pendulum_with("fast");
    let e = Scene::from_toml(&text, "pendulum.toml").unwrap_err();
    let shown = e.to_string();
    assert_eq!(e.kind, SceneErrorKind::Schema, "{shown}");
    assert_eq!(e.path.to_string(), "solver.f32_arithmetic", "{shown}");
    assert_eq!(e.line, Some(line), "{shown}");
    assert!(
        shown.contains("compensated") && shown.contains("plain"),
        "{shown}"
    );
    let mut scene = Scene::from_toml(PENDULUM, "pendulum.toml").unwrap();
    let e = scene.set("solver.f32_arithmetic", "double").unwrap_err();
    assert!(e.to_string().contains("f32_arithmetic"), "{e}");
    assert_eq!(
        scene.file().solver.f32_arithmetic,
        F32ArithmeticSpec::Compensated
    );
}

/// The triple pendulum (block solve, Δt = 1 ms, primal correction pass) in `T`, `G`.
fn pendulum_world<T: BandScalar, G: LieGroup<T>>(
    arithmetic: F32Arithmetic,
    mode: SolveMode,
) -> World<T, G> {
    let cfg = PendulumConfig {
        solve_mode: mode,
        f32_arithmetic: arithmetic,
        ..PendulumConfig::default()
    };
    pendulum::build::<T, G>(&cfg).unwrap()
}

/// Every body's position, orientation and velocities, as bits.
fn state_bits<T: Real, G: LieGroup<T>>(world: &World<T, G>) -> Vec<u64> {
    let mut out = Vec::new();
    for b in world.bodies() {
        let m = b.orientation.to_matrix();
        for x in b
            .position
            .iter()
            .chain(b.velocity.iter())
            .chain(b.angular_velocity.iter())
            .chain(m.iter())
        {
            out.push(x.to_f64().to_bits());
        }
    }
    out
}

fn f64_ignores_the_setting<G: LieGroup<f64>>(mode: SolveMode) {
    let mut a = pendulum_world::<f64, G>(F32Arithmetic::Compensated, mode);
    let mut b = pendulum_world::<f64, G>(F32Arithmetic::Plain, mode);
    for _ in 0..2000 {
        a.step().unwrap();
        b.step().unwrap();
    }
    assert_eq!(state_bits(&a), state_bits(&b), "{} {mode:?}", G::NAME);
    assert!(a.bodies()[1].velocity.norm() > 0.1, "the pendulum moves");
}

#[test]
fn f64_is_bit_identical_under_either_setting() {
    for mode in [SolveMode::Block, SolveMode::Rows] {
        f64_ignores_the_setting::<SO3Matrix<f64>>(mode);
        f64_ignores_the_setting::<UnitQuaternion<f64>>(mode);
    }
}

/// Largest distance (m) of a body's centre from the f64 run's over `steps` steps of
/// the pendulum in f32 with `arithmetic`, and the f32 run's final state.
fn gap_to_f64<G: LieGroup<f32>, G64: LieGroup<f64>>(
    arithmetic: F32Arithmetic,
    steps: usize,
) -> (f64, Vec<u64>) {
    let mut w32 = pendulum_world::<f32, G>(arithmetic, SolveMode::Block);
    let mut w64 = pendulum_world::<f64, G64>(arithmetic, SolveMode::Block);
    let mut gap = 0.0f64;
    for _ in 0..steps {
        w32.step().unwrap();
        w64.step().unwrap();
        for (a, b) in w32.bodies().iter().zip(w64.bodies()) {
            let p = a.position.map(|x| x as f64);
            gap = gap.max((p - b.position).norm());
        }
    }
    (gap, state_bits(&w32))
}

#[test]
fn plain_f32_differs_from_compensated() {
    let (_, plain) = gap_to_f64::<SO3Matrix<f32>, SO3Matrix<f64>>(F32Arithmetic::Plain, 200);
    let (_, compensated) =
        gap_to_f64::<SO3Matrix<f32>, SO3Matrix<f64>>(F32Arithmetic::Compensated, 200);
    assert_ne!(plain, compensated);
    // A plain body keeps no low part.
    let w = pendulum_world::<f32, SO3Matrix<f32>>(F32Arithmetic::Plain, SolveMode::Block);
    let mut w = w;
    for _ in 0..200 {
        w.step().unwrap();
    }
    assert!(w
        .bodies()
        .iter()
        .all(|b| b.position_lo() == Vector3::zeros()));
}

/// Plain f32 stays near f64 over 3 s of the triple pendulum (3,000 steps of 1 ms).
///
/// The bound: plain f32 rounds each stored position once per step, an error of up to
/// ε·|p|/2 ≈ 1.8e-7 m (|p| ≤ 3 m, ε = 1.2e-7); as a random walk over 3,000 steps that is
/// about √3000 · 1.8e-7 ≈ 1e-5 m, and the orientations, renormalised only every 16
/// substeps, add a comparable walk. Over the first 3 s the chain's motion amplifies such
/// perturbations by a small factor only (measured: 2.2e-5 m matrix, 2.4e-5 m quaternion,
/// against 1.1e-6 m for the compensated scheme; over 100 s the plain gap reaches 7e-2 m,
/// README "f32 arithmetic"). 1e-4 m is four times the measured gap: a plain path whose
/// rounding had a systematic sign (ε·|p| per step in one direction adds up to 5e-4 m
/// over 3,000 steps), or a broken one (e.g. a wrong velocity update), leaves it.
#[test]
fn plain_f32_pendulum_stays_near_f64() {
    for (name, (gap, _)) in [
        (
            "matrix plain",
            gap_to_f64::<SO3Matrix<f32>, SO3Matrix<f64>>(F32Arithmetic::Plain, 3000),
        ),
        (
            "quaternion plain",
            gap_to_f64::<UnitQuaternion<f32>, UnitQuaternion<f64>>(F32Arithmetic::Plain, 3000),
        ),
        (
            "matrix compensated",
            gap_to_f64::<SO3Matrix<f32>, SO3Matrix<f64>>(F32Arithmetic::Compensated, 3000),
        ),
    ] {
        println!("{name}: largest position gap to f64 over 3 s {gap:.3e} m");
        assert!(gap.is_finite() && gap < 1e-4, "{name}: {gap} m");
    }
}
