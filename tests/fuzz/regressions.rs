//! One test per crash, hang or broken property the fuzzer found, named after it; each
//! runs the case's input directly.

use lie_xpbd::lie::{SO3Matrix, UnitQuaternion};
use lie_xpbd::rod::{RigidChainBuilder, RodError, RodMaterial};
use lie_xpbd::scene::{Scene, SceneErrorKind, MAX_SCENE_BODIES};
use nalgebra::Vector3;

fn material<T: lie_xpbd::lie::Real>() -> RodMaterial<T> {
    let c = lie_xpbd::lie::real::c::<T>;
    RodMaterial::circular(c(5e6), c(0.4), c(1000.0), c(0.05)).unwrap()
}

/// World API: `RigidChainBuilder::straight` with a body count whose storage cannot be
/// allocated panicked ("capacity overflow" for `usize::MAX`) or would abort the process
/// (2⁴⁰ bodies); it is now [`RodError::TooManyBodies`].
#[test]
fn regression_rigid_chain_straight_huge_body_count() {
    for n in [usize::MAX, usize::MAX / 2, 1 << 40] {
        let r = RigidChainBuilder::<f64, SO3Matrix<f64>>::straight(
            material(),
            Vector3::zeros(),
            Vector3::x(),
            1.0,
            n,
        );
        assert_eq!(
            r.err(),
            Some(RodError::TooManyBodies { count: n }),
            "{n} bodies"
        );
        let r = RigidChainBuilder::<f32, UnitQuaternion<f32>>::straight(
            material(),
            Vector3::zeros(),
            Vector3::x(),
            1.0,
            n,
        );
        assert!(r.is_err(), "{n} bodies in f32");
    }
}

/// The cantilever with its rod duplicated 200 times (renamed) at 10⁶ elements each (a
/// scene of a few kilobytes): it validated, and building it would need terabytes (one
/// such rod took 16 GB and 3 minutes for one step). The scene's bodies and rod nodes
/// are now bounded ([`MAX_SCENE_BODIES`]), and one rod's elements to 10⁵.
#[test]
fn regression_scene_many_huge_rods_validated() {
    let base = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenes/cantilever.toml"
    ))
    .unwrap();
    let mut table: toml::Table = base.parse().unwrap();
    let rod = table["rods"].as_array().unwrap()[0].clone();
    let rods: Vec<toml::Value> = (0..200)
        .map(|i| {
            let mut r = rod.as_table().unwrap().clone();
            r.insert("name".into(), format!("beam_{i}").into());
            r.insert("elements".into(), 1_000_000.into());
            r.into()
        })
        .collect();
    table.insert("rods".into(), rods.into());
    let e = Scene::from_toml(&toml::to_string(&table).unwrap(), "many_rods.toml").unwrap_err();
    assert_eq!(e.kind, SceneErrorKind::Invalid);
    assert_eq!(e.path.to_string(), "rods[0].elements", "{e}");

    // Within the per-rod limit, the total is what stops it: two cubic rods of 2·10⁴
    // elements are 120 002 nodes.
    let rods: Vec<toml::Value> = (0..2)
        .map(|i| {
            let mut r = rod.as_table().unwrap().clone();
            r.insert("name".into(), format!("beam_{i}").into());
            r.insert("elements".into(), 20_000.into());
            r.into()
        })
        .collect();
    table.insert("rods".into(), rods.into());
    let e = Scene::from_toml(&toml::to_string(&table).unwrap(), "two_rods.toml").unwrap_err();
    assert_eq!(e.kind, SceneErrorKind::Invalid);
    assert_eq!(e.path.to_string(), "rods[1].elements", "{e}");
    assert!(e.message.contains(&MAX_SCENE_BODIES.to_string()), "{e}");

    // One such rod (60 001 nodes) is within the limits.
    let one = toml::Value::Array(vec![{
        let mut r = rod.as_table().unwrap().clone();
        r.insert("elements".into(), 20_000.into());
        r.into()
    }]);
    table.insert("rods".into(), one);
    Scene::from_toml(&toml::to_string(&table).unwrap(), "one_rod.toml").unwrap();
}

/// The fuzzer's seeds are valid scenes that build and step (else their mutations would
/// only exercise rejections).
#[test]
fn fuzz_seeds_are_valid_scenes() {
    for name in ["direct_chain", "chain_rod"] {
        let path = format!(
            "{}/tests/fuzz/seeds/{name}.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let scene = Scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let mut built = scene.build::<f64, UnitQuaternion<f64>>().unwrap();
        for _ in 0..scene.steps().unwrap() {
            built.step().unwrap();
        }
    }
}
