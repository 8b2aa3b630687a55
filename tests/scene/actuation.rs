//! Limits, drives and motors from scene files (`limit`, `drive`, `motor` keys of
//! `[[joints]]`): what is built, that it acts, and the errors.

use lie_xpbd::lie::{LieGroup, SO3Matrix, UnitQuaternion};
use lie_xpbd::scene::Scene;

const BAR: &str = r#"
version = 1
[solver]
dt = 1e-3
substeps = 4
iterations = 2
[run]
duration = 1.0
[[bodies]]
name = "bar"
shape = { type = "box", size = [1.0, 0.1, 0.1] }
density = 100.0
position = [0.5, 0.0, 0.0]
"#;

fn scene(joint: &str) -> Scene {
    Scene::from_toml(
        &format!("{BAR}\n[[joints]]\nname = \"hinge\"\n{joint}\n"),
        "s.toml",
    )
    .unwrap()
}

/// The bar hinged at its end about z, released horizontal: gravity drives it into the
/// −45° limit, which holds after every step (1e-6 rad: the limit row is hard).
fn limit_holds<G: LieGroup<f64>>() {
    let s = scene(
        "type = \"revolute\"\nbody1 = \"world\"\nbody2 = \"bar\"\nframe2 = { position = [-0.5, 0.0, 0.0] }\nlimit = { lower_deg = -45.0, upper_deg = 45.0 }",
    );
    let mut built = s.build::<f64, G>().unwrap();
    let names: Vec<_> = built
        .joints
        .iter()
        .map(|j| (j.name.as_str(), j.kind, j.rows))
        .collect();
    assert_eq!(
        names,
        [
            ("hinge", "revolute", 5),
            ("hinge_limit", "revolute_limit", 1)
        ]
    );
    let mut lowest: f64 = 0.0;
    for _ in 0..2000 {
        built.world.step().unwrap();
        let r = built.world.bodies()[0].orientation.log();
        // The bar's angle about z (it stays in the plane): −45° at the stop.
        lowest = lowest.min(r.z);
        assert!(
            r.z >= -std::f64::consts::FRAC_PI_4 - 1e-6,
            "angle {}",
            r.z.to_degrees()
        );
    }
    assert!(
        lowest < -std::f64::consts::FRAC_PI_4 + 1e-3,
        "the limit was reached: {lowest}"
    );
}

#[test]
fn scene_revolute_limit_holds_both_representations() {
    limit_holds::<SO3Matrix<f64>>();
    limit_holds::<UnitQuaternion<f64>>();
}

/// A revolute drive replaces the joint: 6 rows, one compliant; with strong damping and
/// no gravity the bar settles at its target angle.
#[test]
fn scene_revolute_drive_settles_at_target() {
    let mut s = scene(
        "type = \"revolute\"\nbody1 = \"world\"\nbody2 = \"bar\"\nframe2 = { position = [-0.5, 0.0, 0.0] }\ndrive = { target_deg = 30.0, stiffness = 50.0, damping = 0.1 }",
    );
    s.set("solver.gravity", "[0.0, 0.0, 0.0]").unwrap();
    let mut built = s.build::<f64, SO3Matrix<f64>>().unwrap();
    assert_eq!(
        (built.joints[0].kind, built.joints[0].rows),
        ("revolute_drive", 6)
    );
    for _ in 0..5000 {
        built.world.step().unwrap();
    }
    // θ_rev = [R̄₂ ⊟ R̄₁]₃ = the bar's angle for the world on side 1 (side 2 relative
    // to side 1, the sense of a spherical drive's target: regression test for a
    // revolute target that turned the bar to −30°).
    let angle = built.world.bodies()[0].orientation.log().z;
    approx::assert_abs_diff_eq!(angle, 30f64.to_radians(), epsilon = 1e-6);
}

/// A prismatic motor along x (joint z turned onto world x) pushes the bar at its speed.
#[test]
fn scene_prismatic_motor_reaches_its_speed() {
    let mut s = scene(
        "type = \"prismatic\"\nbody1 = \"world\"\nbody2 = \"bar\"\nframe1 = { orientation = { axis = [0.0, 1.0, 0.0], angle_deg = 90.0 } }\nframe2 = { position = [-0.5, 0.0, 0.0], orientation = { axis = [0.0, 1.0, 0.0], angle_deg = 90.0 } }\nmotor = { speed = 0.25, max_force = 100.0 }\nlimit = { lower = -1.0, upper = 1.0 }",
    );
    s.set("solver.gravity", "[0.0, 0.0, 0.0]").unwrap();
    let mut built = s.build::<f64, SO3Matrix<f64>>().unwrap();
    let kinds: Vec<_> = built.joints.iter().map(|j| j.kind).collect();
    assert_eq!(kinds, ["prismatic", "prismatic_limit", "prismatic_motor"]);
    for _ in 0..500 {
        built.world.step().unwrap();
    }
    approx::assert_abs_diff_eq!(built.world.bodies()[0].velocity.x, 0.25, epsilon = 1e-9);
}

#[test]
fn scene_spherical_limits_and_drive_build() {
    let s = scene(
        "type = \"spherical\"\nbody1 = \"world\"\nbody2 = \"bar\"\nframe2 = { position = [-0.5, 0.0, 0.0] }\nlimit = { swing_deg = 180.0, twist_lower_deg = -10.0, twist_upper_deg = 10.0 }\ndrive = { target = { axis = [0.0, 0.0, 1.0], angle_deg = 20.0 }, stiffness = [50.0, 50.0, 10.0] }",
    );
    let built = s.build::<f32, UnitQuaternion<f32>>().unwrap();
    let names: Vec<_> = built
        .joints
        .iter()
        .map(|j| (j.name.as_str(), j.kind))
        .collect();
    assert_eq!(
        names,
        [
            ("hinge", "spherical_drive"),
            ("hinge_swing_limit", "spherical_swing_limit"),
            ("hinge_twist_limit", "spherical_twist_limit")
        ]
    );
}

#[test]
fn scene_actuation_errors_name_the_field() {
    let cases = [
        (
            "type = \"revolute\"\nbody1 = \"world\"\nbody2 = \"bar\"\ncompliance = 1e-3\ndrive = { target_deg = 1.0, stiffness = 5.0 }",
            "joints[0].compliance",
            "drive.stiffness",
        ),
        (
            "type = \"revolute\"\nbody1 = \"world\"\nbody2 = \"bar\"\nlimit = { lower_deg = 10.0, upper_deg = -10.0 }",
            "joints[0].limit.upper_deg",
            "must exceed",
        ),
        (
            "type = \"fixed\"\nbody1 = \"world\"\nbody2 = \"bar\"\nmotor = { speed = 1.0, max_torque = 1.0 }",
            "joints[0].motor",
            "revolute and prismatic",
        ),
        (
            "type = \"spherical\"\nbody1 = \"world\"\nbody2 = \"bar\"\ndrive = { target = 0.1, stiffness = 1.0 }",
            "joints[0].drive.target",
            "orientation",
        ),
    ];
    for (joint, path, words) in cases {
        let text = format!("{BAR}\n[[joints]]\n{joint}\n");
        let msg = Scene::from_toml(&text, "s.toml").unwrap_err().to_string();
        assert!(
            msg.contains(path) && msg.contains(words),
            "{joint}\n→ {msg}"
        );
    }
    // A limit's name may not clash with another joint's.
    let text = format!(
        "{BAR}\n[[bodies]]\nname = \"b2\"\nshape = {{ type = \"sphere\", radius = 0.1 }}\ndensity = 1.0\n\n[[joints]]\nname = \"h\"\ntype = \"revolute\"\nbody1 = \"world\"\nbody2 = \"bar\"\nlimit = {{ lower_deg = -1.0, upper_deg = 1.0 }}\n\n[[joints]]\nname = \"h_limit\"\ntype = \"spherical\"\nbody1 = \"bar\"\nbody2 = \"b2\"\n"
    );
    let msg = Scene::from_toml(&text, "s.toml").unwrap_err().to_string();
    assert!(msg.contains("h_limit") && msg.contains("rename"), "{msg}");
}
