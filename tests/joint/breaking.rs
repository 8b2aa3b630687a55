//! Breakable joints: the force λ/h² a joint carries, the break as an event, the joint
//! and its dependents removed, and the scene keys `break_force` / `break_torque`.

use lie_xpbd::joint::{JointFrame, Spherical};
use lie_xpbd::lie::{LieGroup, SO3Matrix, UnitQuaternion};
use lie_xpbd::scene::Scene;
use lie_xpbd::xpbd::{Body, BreakLimits, ConstraintId, SolverOptions, World, XpbdError};
use nalgebra::Vector3;

/// A 1 kg ball hanging from a spherical joint carries its weight, 9.81 N (to the
/// solver's accuracy); pushed down by 15 N more it exceeds a 20 N limit, breaks in that
/// substep, and then falls freely.
fn hanging_ball_breaks<G: LieGroup<f64>>() {
    let mut world = World::<f64, G>::new(SolverOptions::default()).unwrap();
    let ball = Body::dynamic(
        1.0,
        Vector3::repeat(0.004),
        Vector3::new(0.0, -1.0, 0.0),
        G::identity(),
    )
    .unwrap();
    let b = world.add_body(ball).unwrap();
    let joint = Spherical::new(
        None,
        JointFrame::identity(),
        Some(b),
        JointFrame::at(Vector3::new(0.0, 1.0, 0.0)),
    )
    .unwrap();
    let id = world.add_constraint(joint).unwrap();
    let limits = BreakLimits {
        max_force: 20.0,
        max_torque: f64::INFINITY,
        force_rows: [true, true, true, false, false, false],
        torque_rows: [false; 6],
        dependents: vec![],
    };
    world.set_break_limits(id, limits).unwrap();
    for _ in 0..200 {
        world.step().unwrap();
    }
    assert!(world.breaks().is_empty());
    let h = world.options().substep_dt();
    let carried = world
        .lambda(id)
        .unwrap()
        .iter()
        .map(|l| l * l)
        .sum::<f64>()
        .sqrt()
        / (h * h);
    approx::assert_relative_eq!(carried, 9.81, max_relative = 1e-9);
    world.body_mut(b).unwrap().force = Vector3::new(0.0, -15.0, 0.0);
    world.step().unwrap();
    let ev = world.breaks();
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].constraint, id);
    approx::assert_relative_eq!(ev[0].force, 24.81, max_relative = 1e-6);
    approx::assert_relative_eq!(ev[0].time, 0.201, max_relative = 1e-12);
    assert_eq!(world.is_enabled(id), Some(false));
    // Free fall from now on: g + f/m = 24.81 m/s² downwards.
    let v0 = world.body(b).unwrap().velocity.y;
    for _ in 0..10 {
        world.step().unwrap();
    }
    approx::assert_relative_eq!(
        world.body(b).unwrap().velocity.y - v0,
        -24.81 * 0.01,
        max_relative = 1e-9
    );
    assert_eq!(world.breaks().len(), 1, "a broken joint is reported once");
}

#[test]
fn hanging_ball_breaks_matrix_and_quaternion() {
    hanging_ball_breaks::<SO3Matrix<f64>>();
    hanging_ball_breaks::<UnitQuaternion<f64>>();
}

#[test]
fn break_limits_are_checked() {
    let mut world = World::<f64, SO3Matrix<f64>>::new(SolverOptions::default()).unwrap();
    let b = world
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
    let id = world
        .add_constraint(
            Spherical::new(
                None,
                JointFrame::identity(),
                Some(b),
                JointFrame::identity(),
            )
            .unwrap(),
        )
        .unwrap();
    let ok = BreakLimits {
        max_force: 1.0,
        max_torque: 1.0,
        force_rows: [true, true, true, false, false, false],
        torque_rows: [false; 6],
        dependents: vec![],
    };
    for bad in [
        BreakLimits {
            max_force: 0.0,
            ..ok.clone()
        },
        BreakLimits {
            max_torque: f64::NAN,
            ..ok.clone()
        },
        BreakLimits {
            torque_rows: [false, false, false, true, false, false],
            ..ok.clone()
        },
        BreakLimits {
            dependents: vec![ConstraintId(7)],
            ..ok.clone()
        },
    ] {
        assert!(matches!(
            world.set_break_limits(id, bad),
            Err(XpbdError::InvalidOption {
                name: "break_limits",
                ..
            })
        ));
    }
    assert!(world.set_break_limits(ConstraintId(3), ok.clone()).is_err());
    world.set_break_limits(id, ok).unwrap();
}

/// A 1 m pendulum released horizontal: the rod tension is 3mg·cos φ (φ from the
/// downward vertical), so a 2mg limit breaks it at cos φ = 2/3 (48.2°). The hinge's
/// limit goes with it; `summary.json` lists the break.
#[test]
fn scene_pendulum_breaks_at_the_predicted_angle() {
    let text = r#"
version = 1
name = "breaking"
[solver]
dt = 1e-4
[run]
duration = 1.0
[[bodies]]
name = "bob"
shape = { type = "sphere", radius = 0.01 }
density = 1000.0
position = [1.0, 0.0, 0.0]
[[joints]]
name = "rod"
type = "revolute"
body1 = "world"
body2 = "bob"
frame2 = { position = [-1.0, 0.0, 0.0] }
limit = { lower_deg = -170.0, upper_deg = 170.0 }
break_force = 0.08218
"#;
    // m = 1000·4/3·π·1e-6 = 4.18879e-3 kg; 2mg = 0.082184 N.
    let scene = Scene::from_toml(text, "b.toml").unwrap();
    let mut built = scene.build::<f64, SO3Matrix<f64>>().unwrap();
    assert_eq!(built.joints.len(), 2);
    while built.world.breaks().is_empty() && built.world.time() < 1.0 {
        built.world.step().unwrap();
    }
    let ev = built.world.breaks()[0].clone();
    let p = built.world.bodies()[0].position;
    let phi = p.x.atan2(-p.y);
    assert!(
        (phi.to_degrees() - 48.19).abs() < 0.5,
        "broke at {:.2}°",
        phi.to_degrees()
    );
    assert!(ev.force > 0.08218 && ev.force < 0.0825, "{}", ev.force);
    assert_eq!(
        built.world.is_enabled(ConstraintId(1)),
        Some(false),
        "the limit goes with the joint"
    );

    let tmp = tempfile::tempdir().unwrap();
    let opts = lie_xpbd::pipeline::run::RunOptions {
        rotation: lie_xpbd::sim::Rotation::Quaternion,
        scalar: lie_xpbd::sim::Scalar::F32,
        out: tmp.path().join("run"),
        progress: None,
        vtk: false,
    };
    let summary = lie_xpbd::pipeline::run::run_scene(
        &scene,
        &opts,
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(summary.breaks.len(), 1);
    assert_eq!(summary.breaks[0].joint, "rod");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("run/summary.json")).unwrap())
            .unwrap();
    assert_eq!(json["breaks"][0]["joint"], "rod");
    assert!(std::fs::read_to_string(tmp.path().join("run/summary.md"))
        .unwrap()
        .contains("## Breaks"));
}
