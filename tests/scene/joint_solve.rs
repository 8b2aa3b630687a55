//! `[solver] joint_solve` in scene files: `"direct"` puts every constraint of every
//! `[[joints]]` entry into one direct group ([`World::add_direct_group`]); errors are
//! located at `solver.joint_solve`.

use lie_xpbd::lie::SO3Matrix;
use lie_xpbd::scene::{JointSolveSpec, Scene, SceneErrorKind};
use lie_xpbd::xpbd::{ConstraintId, DirectGroupId, World};

/// The 10-link chain of `joint_chain/mod.rs` as a scene file: boxes 0.1 × 0.02 × 0.02 m
/// with masses alternating 1 kg and 1000 kg, revolute joints about z with ±30° limits,
/// released straight along x; 1 substep × 3 iterations of 1/60 s.
fn chain_scene(joint_solve: Option<&str>) -> String {
    let mut s = String::from("version = 1\nname = \"limited_chain\"\n\n[solver]\n");
    s += "dt = 0.016666666666666666\nsubsteps = 1\niterations = 3\n";
    if let Some(j) = joint_solve {
        s += &format!("joint_solve = \"{j}\"\n");
    }
    s += "\n[run]\nduration = 2.0\n";
    for i in 0..10 {
        let m = [1.0, 1000.0][i % 2];
        let (a, b) = (0.1f64, 0.02f64);
        s += &format!(
            "\n[[bodies]]\nname = \"link{i}\"\nmass = {m}\ninertia = [{}, {}, {}]\nposition = [{}, 0.0, 0.0]\n",
            m * (2.0 * b * b) / 12.0,
            m * (a * a + b * b) / 12.0,
            m * (a * a + b * b) / 12.0,
            (i as f64 + 0.5) * a
        );
    }
    for i in 0..10 {
        let (body1, frame1) = if i == 0 {
            ("world".to_string(), "[0.0, 0.0, 0.0]")
        } else {
            (format!("link{}", i - 1), "[0.05, 0.0, 0.0]")
        };
        s += &format!(
            "\n[[joints]]\nname = \"hinge{i}\"\ntype = \"revolute\"\nbody1 = \"{body1}\"\nbody2 = \"link{i}\"\n\
             frame1 = {{ position = {frame1} }}\nframe2 = {{ position = [-0.05, 0.0, 0.0] }}\n\
             limit = {{ lower_deg = -30.0, upper_deg = 30.0 }}\n"
        );
    }
    s
}

fn build(text: &str) -> World<f64, SO3Matrix<f64>> {
    let scene = Scene::from_toml(text, "chain.toml").unwrap();
    scene.build::<f64, SO3Matrix<f64>>().unwrap().world
}

#[test]
fn direct_groups_every_joint_constraint_in_file_order() {
    let text = chain_scene(Some("direct"));
    let scene = Scene::from_toml(&text, "chain.toml").unwrap();
    assert_eq!(scene.file().solver.joint_solve, JointSolveSpec::Direct);
    let mut world = build(&text);
    assert_eq!(world.direct_group_count(), 1);
    let members = world.direct_group_members(DirectGroupId(0)).unwrap();
    // Hinge i then its limit: constraints 0, 1, 2, … in file order.
    let expected: Vec<ConstraintId> = (0..20).map(ConstraintId).collect();
    assert_eq!(members, &expected[..]);
    let stats = *world.direct_group_stats(DirectGroupId(0)).unwrap();
    assert_eq!((stats.rows, stats.blocks, stats.bandwidth), (60, 10, 1));
    // The chain falls onto its limits and they hold (the requirement of
    // tests/joint/chain_direct.rs, here over 2 s after every step).
    let mut worst = 0.0f64;
    for _ in 0..120 {
        world.step().unwrap();
        for k in (1..20).step_by(2) {
            let c = world.constraint(ConstraintId(k)).unwrap();
            let mut eval = lie_xpbd::xpbd::ConstraintEval::default();
            c.evaluate(world.bodies(), &mut eval);
            worst = worst.max(-eval.value[0]);
        }
    }
    assert!(worst <= 1e-9, "limit exceeded by {worst:e} rad");
    assert!(
        world
            .direct_group_stats(DirectGroupId(0))
            .unwrap()
            .last_solves
            >= 1
    );
}

#[test]
fn gauss_seidel_is_the_default_and_is_not_written() {
    let text = chain_scene(None);
    let scene = Scene::from_toml(&text, "chain.toml").unwrap();
    assert_eq!(scene.file().solver.joint_solve, JointSolveSpec::GaussSeidel);
    assert_eq!(build(&text).direct_group_count(), 0);
    let explicit = chain_scene(Some("gauss_seidel"));
    assert_eq!(build(&explicit).direct_group_count(), 0);
    let written = toml::to_string(scene.file()).unwrap();
    assert!(!written.contains("joint_solve"), "{written}");
    let direct = Scene::from_toml(&chain_scene(Some("direct")), "chain.toml").unwrap();
    let written = toml::to_string(direct.file()).unwrap();
    assert!(written.contains("joint_solve = \"direct\""), "{written}");
}

#[test]
fn unknown_joint_solve_is_located() {
    let text = chain_scene(Some("lu"));
    let e = Scene::from_toml(&text, "chain.toml").unwrap_err();
    let shown = e.to_string();
    assert_eq!(e.kind, SceneErrorKind::Schema, "{shown}");
    assert_eq!(e.path.to_string(), "solver.joint_solve", "{shown}");
    assert_eq!(e.line, Some(8), "{shown}");
    assert!(
        shown.contains("gauss_seidel") && shown.contains("direct"),
        "{shown}"
    );
}

#[test]
fn direct_without_joints_is_located() {
    let text = "version = 1\n[solver]\njoint_solve = \"direct\"\n\n[[bodies]]\nname = \"b\"\nmass = 1.0\ninertia = [1.0, 1.0, 1.0]\n";
    let e = Scene::from_toml(text, "empty.toml").unwrap_err();
    let shown = e.to_string();
    assert_eq!(e.path.to_string(), "solver.joint_solve", "{shown}");
    assert_eq!(e.line, Some(3), "{shown}");
    assert!(shown.contains("none"), "{shown}");
}
