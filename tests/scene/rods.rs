//! `[[rods]]` in the scene format: the Section 9.2 cantilever scene against the same
//! rod built by hand, every discretization in both representations and scalars, rod
//! nodes as joint bodies, prescribed end motion and loads, curved centre lines, and one
//! located error per kind of bad value.

use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::linalg::BandScalar;
use lie_xpbd::rod::{FemRod, RodMaterial, StraightRod};
use lie_xpbd::scene::{BuiltScene, Scene, SceneErrorKind};
use lie_xpbd::xpbd::{SolverOptions, World};
use nalgebra::Vector3;

fn cantilever() -> Scene {
    Scene::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenes/cantilever.toml"
    ))
    .unwrap()
}

fn steps<T: Real, G: LieGroup<T>>(b: &mut BuiltScene<T, G>, n: usize) {
    for _ in 0..n {
        b.step().unwrap();
    }
}

/// The scene's cubic 5-element cantilever is the rod of `FemRod::add_straight` with
/// the same material: after 300 steps both tips agree to round-off (1e-12 m; the
/// scene's precurvature is the curvature of the straight initial frames, zero to
/// round-off, where `add_straight` has an exact zero).
#[test]
fn cantilever_scene_matches_the_hand_built_rod() {
    let scene = cantilever();
    let mut built = scene.build::<f64, SO3Matrix<f64>>().unwrap();
    assert_eq!(built.rods.len(), 1);
    assert_eq!(built.rods[0].nodes.len(), 16);
    assert_eq!(built.body_names[15], "beam:15");
    steps(&mut built, 300);
    let tip = built.world.body(built.rods[0].nodes[15]).unwrap().position;

    let options = SolverOptions {
        dt: 5e-3,
        gravity: Vector3::new(0.0, -9.81, 0.0),
        ..SolverOptions::default()
    };
    let mut world = World::<f64, SO3Matrix<f64>>::new(options).unwrap();
    let material = RodMaterial::circular(5e6, 0.4, 1000.0, 0.05).unwrap();
    let mut spec = StraightRod::cantilever(1.0, 5);
    spec.damping = 0.2;
    let ids = FemRod::<f64, SO3Matrix<f64>, 4>::add_straight(&mut world, &material, &spec).unwrap();
    for _ in 0..300 {
        world.step().unwrap();
    }
    let hand = world.body(*ids.nodes.last().unwrap()).unwrap().position;
    println!("scene tip {tip:?}, hand-built tip {hand:?}");
    assert!((tip - hand).norm() < 1e-12, "{:e}", (tip - hand).norm());
    assert!(tip.y < -0.1);
    // The rod's rows are in the residuals (51)–(52).
    let r = built.world.residuals();
    assert!(r.primal > 0.0 && r.constraint > 0.0);
}

/// Every discretization and order, in both representations and both scalars, builds
/// and sags under gravity.
#[test]
fn every_discretization_builds_and_sags() {
    fn run<T: BandScalar, G: LieGroup<T>>(scene: &Scene) -> f64 {
        let mut b = scene.build::<T, G>().unwrap();
        steps(&mut b, 50);
        let tip = *b.rods[0].nodes.last().unwrap();
        b.world.body(tip).unwrap().position.y.to_f64()
    }
    for (disc, order, n) in [
        ("rigid_chain", 1, 8),
        ("fem", 1, 4),
        ("fem", 2, 3),
        ("fem", 3, 2),
    ] {
        let mut scene = cantilever();
        scene
            .set_all(&[
                ("rods.beam.discretization".into(), disc.into()),
                ("rods.beam.order".into(), order.to_string()),
                ("rods.beam.elements".into(), n.to_string()),
            ])
            .unwrap();
        let ys = [
            run::<f64, SO3Matrix<f64>>(&scene),
            run::<f64, UnitQuaternion<f64>>(&scene),
            run::<f32, SO3Matrix<f32>>(&scene),
            run::<f32, UnitQuaternion<f32>>(&scene),
        ];
        println!("{disc} order {order}, {n} elements: tip y after 50 steps {ys:?}");
        for y in ys {
            assert!(y < -0.01 && y > -0.6, "{disc} {order}: {y}");
            assert!((y - ys[0]).abs() < 1e-4, "{ys:?}");
        }
    }
}

const HANGING: &str = r#"
version = 1
[solver]
dt = 5e-3
[run]
duration = 1.0
[[bodies]]
name = "weight"
shape = { type = "sphere", radius = 0.05 }
density = 1000.0
position = [1.0, 0.0, 0.0]
[[rods]]
name = "arm"
discretization = "fem"
order = 2
elements = 4
radius = 0.05
damping = 0.2
material = { youngs_modulus = 5e6, poisson_ratio = 0.4, density = 1000.0 }
centerline = { type = "straight", direction = [1.0, 0.0, 0.0], length = 1.0 }
[[joints]]
name = "pivot"
type = "spherical"
body1 = "world"
body2 = "arm:base"
[[joints]]
name = "weld"
type = "fixed"
body1 = "arm:tip"
body2 = "weight"
"#;

/// Rod nodes as joint bodies: a free rod hinged to the world at `arm:base` with a ball
/// welded to `arm:tip` swings down; both joints hold (constraint residual small).
#[test]
fn rod_nodes_are_joint_bodies() {
    let scene = Scene::from_toml(HANGING, "hanging.toml").unwrap();
    let mut b = scene.build::<f64, UnitQuaternion<f64>>().unwrap();
    assert_eq!(b.joints.len(), 2);
    assert_eq!(b.first_joint, 0);
    let base = b.rods[0].nodes[0];
    let tip = b.rods[0].nodes[8];
    steps(&mut b, 100);
    let w = b
        .world
        .body(
            b.body_names
                .iter()
                .position(|n| n == "weight")
                .map(lie_xpbd::xpbd::BodyId)
                .unwrap(),
        )
        .unwrap()
        .position;
    let t = b.world.body(tip).unwrap().position;
    let p = b.world.body(base).unwrap().position;
    println!("base {p:?}, tip {t:?}, weight {w:?}");
    assert!(p.norm() < 1e-3, "{p:?}");
    assert!((w - t).norm() < 1e-3, "{:e}", (w - t).norm());
    assert!(t.y < -0.3, "{t:?}");
    // Index names work as well, and a rigid chain is one system too.
    let text = HANGING.replace("\"arm:tip\"", "\"arm:4\"").replace(
        "discretization = \"fem\"\norder = 2",
        "discretization = \"rigid_chain\"",
    );
    let scene = Scene::from_toml(&text, "hanging.toml").unwrap();
    let b = scene.build::<f64, SO3Matrix<f64>>().unwrap();
    assert_eq!(b.rods[0].nodes.len(), 5);
    assert_eq!(b.first_joint, 0);
    assert_eq!(b.world.system_count(), 1);
    assert_eq!(b.world.constraint_count(), 2);
}

/// A prescribed end and loads from the scene: the clamped start rises at 0.1 m/s for
/// 0.2 s (then holds), the tip carries a dead load; the start is exactly on its
/// schedule after every step.
#[test]
fn scene_end_motion_and_loads() {
    let text = r#"
version = 1
[solver]
dt = 5e-3
gravity = [0.0, 0.0, 0.0]
[run]
duration = 1.0
[[rods]]
name = "r"
discretization = "fem"
order = 3
elements = 3
radius = 0.05
damping = 0.2
material = { youngs_modulus = 5e6, poisson_ratio = 0.4, density = 1000.0 }
centerline = { type = "straight", direction = [1.0, 0.0, 0.0], length = 1.0 }
start = "clamped"
[[rods.loads]]
node = "tip"
force = [0.0, 0.0, -1.0]
torque = [0.0, 0.0, 0.1]
[[rods.motion]]
end = "start"
velocity = [0.0, 0.1, 0.0]
until = 0.2
"#;
    let scene = Scene::from_toml(text, "moving.toml").unwrap();
    assert!(scene.file().is_driven());
    let mut b = scene.build::<f64, SO3Matrix<f64>>().unwrap();
    let base = b.rods[0].nodes[0];
    for k in 1..=100 {
        b.step().unwrap();
        let y = b.world.body(base).unwrap().position.y;
        let expected = 0.1 * (k as f64 * 5e-3).min(0.2);
        assert!((y - expected).abs() < 1e-15, "step {k}: {y} vs {expected}");
    }
    let tip = b.world.body(b.rods[0].nodes[9]).unwrap();
    assert_eq!(tip.force, Vector3::new(0.0, 0.0, -1.0));
    println!("tip {:?}", tip.position);
    assert!(tip.position.z < 0.0 && tip.position.y > 0.0);
}

/// A helical spring (Section 9.4 geometry: coil radius 0.1 m, 3 turns of 0.0933 m
/// pitch here) starts at rest: with no gravity and no load no node moves in 20 steps
/// (to 1e-12 m): the rest strains of both discretizations are those of the initial
/// shape (fem: `RodElement::with_rest_strains`, so also the shear rows of the
/// interpolated chords between nodes).
#[test]
fn helix_starts_near_rest() {
    for (disc, order, n) in [("rigid_chain", 1, 60), ("fem", 2, 12), ("fem", 3, 8)] {
        let text = format!(
            r#"
version = 1
[solver]
dt = 1e-3
gravity = [0.0, 0.0, 0.0]
[[rods]]
name = "spring"
discretization = "{disc}"
order = {order}
elements = {n}
radius = 0.005
material = {{ youngs_modulus = 60e9, poisson_ratio = 0.3, density = 7650.0 }}
centerline = {{ type = "helix", axis = [0.0, 0.0, 1.0], radius = 0.1, turns = 3.0, pitch = 0.0933 }}
"#
        );
        let scene = Scene::from_toml(&text, "helix.toml").unwrap();
        let mut b = scene.build::<f64, SO3Matrix<f64>>().unwrap();
        let p0: Vec<Vector3<f64>> = b.world.bodies().iter().map(|x| x.position).collect();
        // The director frames are the Frenet frames: d₃ along the centre line (the
        // central difference of the neighbours), d₁ towards the axis (world z).
        for k in 1..p0.len() - 1 {
            let r = b.world.bodies()[k].orientation;
            let tangent = (p0[k + 1] - p0[k - 1]).normalize();
            let inward = Vector3::new(-p0[k].x, -p0[k].y, 0.0).normalize();
            let d3 = r.act(&Vector3::z());
            let d1 = r.act(&Vector3::x());
            assert!(
                d3.dot(&tangent) > 0.99,
                "{disc} node {k}: d3 {d3:?}, tangent {tangent:?}"
            );
            assert!(
                d1.dot(&inward) > 0.99,
                "{disc} node {k}: d1 {d1:?}, inward {inward:?}"
            );
        }
        steps(&mut b, 20);
        let moved = b
            .world
            .bodies()
            .iter()
            .zip(&p0)
            .map(|(x, p)| (x.position - p).norm())
            .fold(0.0, f64::max);
        let end = b.world.bodies().last().unwrap().position;
        println!("{disc} {order} x {n}: moved {moved:.3e} m, end {end:?}");
        assert!((end.z - 3.0 * 0.0933).abs() < 1e-3, "{end:?}");
        assert!(moved < 1e-12, "{moved:e}");
    }
}

/// Checks one bad rod: the scene text with `from` replaced by `to` is rejected with an
/// Invalid (or Schema) error at `path` whose message contains `fragment`.
fn bad(from: &str, to: &str, kind: SceneErrorKind, path: &str, fragment: &str) {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenes/cantilever.toml"
    ))
    .unwrap();
    assert!(text.contains(from), "{from}");
    let text = text.replace(from, to);
    let e = Scene::from_toml(&text, "bad.toml").expect_err(to);
    let shown = e.to_string();
    println!("{shown}");
    assert_eq!(e.kind, kind, "{shown}");
    assert_eq!(e.path.to_string(), path, "{shown}");
    assert!(shown.contains(fragment), "'{fragment}' not in {shown}");
    assert!(e.line.is_some(), "{shown}");
}

#[test]
fn bad_rods_are_located_errors() {
    use SceneErrorKind::{Invalid, Schema};
    bad(
        "name = \"beam\"",
        "name = \"be:am\"",
        Invalid,
        "rods[0].name",
        "must not contain ':'",
    );
    bad(
        "order = 3",
        "order = 4",
        Invalid,
        "rods[0].order",
        "order 1 (linear)",
    );
    bad(
        "elements = 5",
        "elements = 0",
        Invalid,
        "rods[0].elements",
        "between 1 and",
    );
    bad(
        "elements = 5",
        "elements = -2",
        Schema,
        "rods[0].elements",
        "",
    );
    bad(
        "\"reduced\"",
        "\"half\"",
        Schema,
        "rods[0].integration",
        "unknown variant",
    );
    bad(
        "discretization = \"fem\"",
        "discretization = \"rigid_chain\"",
        Invalid,
        "rods[0].order",
        "rigid chain",
    );
    bad(
        "poisson_ratio = 0.4",
        "poisson_ratio = 0.6",
        Invalid,
        "rods[0].material.poisson_ratio",
        "(-1, 0.5]",
    );
    bad(
        "youngs_modulus = 5e6",
        "youngs_modulus = -5e6",
        Invalid,
        "rods[0].material.youngs_modulus",
        "positive",
    );
    bad(
        "density = 1000.0 }",
        "density = 1000.0, shear_correction = 0.0 }",
        Invalid,
        "rods[0].material.shear_correction",
        "positive",
    );
    bad(
        "radius = 0.05",
        "radius = 0.0",
        Invalid,
        "rods[0].radius",
        "positive",
    );
    bad(
        "damping = 0.2",
        "damping = -1.0",
        Invalid,
        "rods[0].damping",
        ">= 0",
    );
    bad(
        "length = 1.0 }",
        "length = nan }",
        Invalid,
        "rods[0].centerline.length",
        "positive",
    );
    bad(
        "direction = [1.0, 0.0, 0.0]",
        "direction = [0.0, 0.0, 0.0]",
        Invalid,
        "rods[0].centerline.direction",
        "non-zero",
    );
    bad(
        "centerline = { type = \"straight\", start = [0.0, 0.0, 0.0], direction = [1.0, 0.0, 0.0], length = 1.0 }",
        "centerline = { type = \"helix\", axis = [0.0, 0.0, 1.0], radius = 0.1, turns = 2.0, pitch = 0.1, length = 0.2 }",
        Invalid, "rods[0].centerline", "exactly one of",
    );
    bad(
        "centerline = { type = \"straight\", start = [0.0, 0.0, 0.0], direction = [1.0, 0.0, 0.0], length = 1.0 }",
        "centerline = { type = \"polyline\", points = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]] }",
        Invalid, "rods[0].elements", "elements must be 1",
    );
    bad(
        "centerline = { type = \"straight\", start = [0.0, 0.0, 0.0], direction = [1.0, 0.0, 0.0], length = 1.0 }",
        "centerline = { type = \"spiral\" }",
        Schema, "rods[0].centerline.type", "unknown variant",
    );
    bad(
        "end = \"free\"",
        "end = \"free\"\n[[rods.loads]]\nnode = \"base\"\nforce = [0.0, 1.0, 0.0]",
        Invalid,
        "rods[0].loads[0].node",
        "clamped end",
    );
    bad(
        "end = \"free\"",
        "end = \"free\"\n[[rods.loads]]\nnode = 16\n",
        Invalid,
        "rods[0].loads[0].node",
        // The inclusive range, not Rust's `0..15`, which reads as excluding 15.
        "has nodes 0 to 15 (16 nodes), so there is no node 16",
    );
    bad(
        "end = \"free\"",
        "end = \"free\"\n[[rods.motion]]\nend = \"end\"\n",
        Invalid,
        "rods[0].motion[0].end",
        "clamped",
    );
    bad(
        "end = \"free\"",
        "end = \"free\"\n[[joints]]\ntype = \"fixed\"\nbody1 = \"world\"\nbody2 = \"beam:tipp\"",
        Invalid,
        "joints[0].body2",
        "not a node of rod 'beam': use base, tip or an index from 0 to 15",
    );
    bad(
        "end = \"free\"",
        "end = \"free\"\n[[joints]]\ntype = \"fixed\"\nbody1 = \"world\"\nbody2 = \"beam:0\"",
        Invalid,
        "joints[0]",
        "no dynamic body",
    );
    bad(
        "end = \"free\"",
        "end = \"free\"\nradiuss = 1.0",
        Schema,
        "rods[0].radiuss",
        "unknown field",
    );
}

/// An override of a rod field that makes it invalid names the override.
#[test]
fn bad_override_names_the_set() {
    let mut scene = cantilever();
    let e = scene.set("rods.beam.elements", "0").unwrap_err();
    assert!(e.to_string().contains("--set rods.beam.elements=0"), "{e}");
    assert_eq!(e.path.to_string(), "rods[0].elements");
}

/// A helix too coarse for its elements (an element turning by more than 0.9π) is an
/// error at `elements` when built, not a panic.
#[test]
fn coarse_helix_is_an_error() {
    let text = r#"
version = 1
[[rods]]
name = "spring"
discretization = "fem"
order = 1
elements = 2
radius = 0.005
material = { youngs_modulus = 60e9, poisson_ratio = 0.3, density = 7650.0 }
centerline = { type = "helix", axis = [0.0, 0.0, 1.0], radius = 0.1, turns = 3.0, pitch = 0.0933 }
"#;
    for text in [text.to_string(), text.replace("\"fem\"", "\"rigid_chain\"")] {
        let scene = Scene::from_toml(&text, "coarse.toml").unwrap();
        let e = scene.build::<f64, SO3Matrix<f64>>().err().unwrap();
        println!("{e}");
        assert_eq!(e.path.to_string(), "rods[0].elements");
        assert!(e.to_string().contains("0.9π"), "{e}");
    }
}

/// A polyline centre line: the points are the element end nodes (fem; interior nodes
/// on the segments) or the bodies (rigid chain), every node's d₃ along its segment
/// (the bisector at an interior vertex), and the initial shape is at rest.
#[test]
fn polyline_rods() {
    for (disc, order) in [("fem", 2), ("fem", 3), ("rigid_chain", 1)] {
        let text = format!(
            r#"
version = 1
[solver]
dt = 1e-3
gravity = [0.0, 0.0, 0.0]
[[rods]]
name = "bent"
discretization = "{disc}"
order = {order}
elements = 2
radius = 0.01
material = {{ youngs_modulus = 1e7, poisson_ratio = 0.3, density = 1000.0 }}
centerline = {{ type = "polyline", points = [[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [1.0, 0.5, 0.0]] }}
start = "clamped"
"#
        );
        let scene = Scene::from_toml(&text, "bent.toml").unwrap();
        let mut b = scene.build::<f64, UnitQuaternion<f64>>().unwrap();
        let nodes = b.rods[0].nodes.clone();
        assert_eq!(nodes.len(), 2 * order + 1);
        let p = |k: usize| b.world.body(nodes[k]).unwrap().position;
        assert!((p(order) - Vector3::new(0.5, 0.0, 0.0)).norm() < 1e-15);
        assert!((p(2 * order) - Vector3::new(1.0, 0.5, 0.0)).norm() < 1e-15);
        if order > 1 {
            assert!((p(1) - Vector3::new(0.5 / order as f64, 0.0, 0.0)).norm() < 1e-15);
            let d3 = b
                .world
                .body(nodes[1])
                .unwrap()
                .orientation
                .act(&Vector3::z());
            assert!(d3.dot(&Vector3::x()) > 0.9, "{d3:?}");
        }
        let p0: Vec<Vector3<f64>> = b.world.bodies().iter().map(|x| x.position).collect();
        steps(&mut b, 20);
        let moved = b
            .world
            .bodies()
            .iter()
            .zip(&p0)
            .map(|(x, p)| (x.position - p).norm())
            .fold(0.0, f64::max);
        println!("polyline {disc} {order}: moved {moved:e} m");
        assert!(moved < 1e-12, "{moved:e}");
    }
}

/// `solve = "gauss_point"` builds the rod of `FemRod::add_straight_with(..,
/// RodSolve::GaussPoint)`: after 100 steps of 3 iterations both tips agree to
/// round-off, and differ from the banded rod's; a rigid chain or an unknown value is a
/// located error.
#[test]
fn rod_solve_key() {
    use lie_xpbd::rod::RodSolve;
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenes/cantilever.toml"
    ))
    .unwrap();
    let tip_of = |solve: &str| {
        let t = text.replace(
            "integration = \"reduced\"",
            &format!("integration = \"reduced\"\nsolve = \"{solve}\""),
        );
        let mut scene = Scene::from_toml(&t, "solve.toml").unwrap();
        scene
            .set_all(&[("solver.iterations".into(), "3".into())])
            .unwrap();
        let mut built = scene.build::<f64, SO3Matrix<f64>>().unwrap();
        steps(&mut built, 100);
        built.world.body(built.rods[0].nodes[15]).unwrap().position
    };
    let (banded, gauss) = (tip_of("banded"), tip_of("gauss_point"));
    let options = SolverOptions {
        dt: 5e-3,
        iterations: 3,
        gravity: Vector3::new(0.0, -9.81, 0.0),
        ..SolverOptions::default()
    };
    let mut world = World::<f64, SO3Matrix<f64>>::new(options).unwrap();
    let material = RodMaterial::circular(5e6, 0.4, 1000.0, 0.05).unwrap();
    let mut spec = StraightRod::cantilever(1.0, 5);
    spec.damping = 0.2;
    let ids = FemRod::<f64, SO3Matrix<f64>, 4>::add_straight_with(
        &mut world,
        &material,
        &spec,
        RodSolve::GaussPoint,
    )
    .unwrap();
    for _ in 0..100 {
        world.step().unwrap();
    }
    let hand = world.body(*ids.nodes.last().unwrap()).unwrap().position;
    println!("banded {banded:?}, Gauss-point scene {gauss:?}, hand-built {hand:?}");
    assert!((gauss - hand).norm() < 1e-12, "{:e}", (gauss - hand).norm());
    assert!((gauss - banded).norm() > 1e-3, "{gauss:?} {banded:?}");

    bad(
        "integration = \"reduced\"",
        "solve = \"rows\"",
        SceneErrorKind::Schema,
        "rods[0].solve",
        "unknown variant",
    );
    bad(
        "discretization = \"fem\"\norder = 3",
        "discretization = \"rigid_chain\"\norder = 1\nsolve = \"gauss_point\"",
        SceneErrorKind::Invalid,
        "rods[0].solve",
        "only \"banded\" applies",
    );
}
