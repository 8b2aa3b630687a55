//! `PrescribedFrame`: gradient against central differences in all four combinations,
//! the target's motion in time, and input errors.

use lie_xpbd::joint::{HeldRotation, JointFrame, PrescribedFrame};
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Pose, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::xpbd::{
    check_gradient_perturbed, Body, BodyId, Constraint, ConstraintEval, SubstepClock, XpbdError,
};
use nalgebra::Vector3;
use rand::rngs::StdRng;
use rand::SeedableRng;

fn v<T: Real>(x: f64, y: f64, z: f64) -> Vector3<T> {
    Vector3::new(c(x), c(y), c(z))
}

fn drive<T: Real, G: LieGroup<T>>(pos: [bool; 3], rot: HeldRotation) -> PrescribedFrame<T, G> {
    let frame = JointFrame::new(v(0.1, -0.05, 0.2), G::exp(&v(0.3, -0.2, 0.1)));
    let target = Pose::new(v(0.2, 0.5, -0.1), G::exp(&v(-0.2, 0.1, 0.25)));
    PrescribedFrame::new(BodyId(0), frame, target, pos, rot)
        .unwrap()
        .with_spin(v(0.0, 8.7, 0.0))
        .unwrap()
        .with_velocity(v(0.1, 0.0, -0.2))
        .unwrap()
}

/// Every row combination, at random states around one 0.4 rad away from the target,
/// after the target has moved (t = 0.05 s). The tolerance is the checker's
/// (`Real::fd_tolerance`: central differences with h = 1e-5 in f64, 1e-3 in f32).
fn gradients<T: Real, G: LieGroup<T>>() -> f64 {
    let mut rng = StdRng::seed_from_u64(3);
    let body = Body::dynamic(
        c(2.0),
        v(0.1, 0.2, 0.25),
        v(0.3, 0.4, 0.1),
        G::exp(&v(0.1, 0.3, -0.2)),
    )
    .unwrap();
    let mut worst: f64 = 0.0;
    for pos in [
        [true, true, true],
        [false, true, false],
        [true, false, true],
        [false; 3],
    ] {
        for rot in [
            HeldRotation::Free,
            HeldRotation::Axis,
            HeldRotation::Orientation,
        ] {
            if pos == [false; 3] && rot == HeldRotation::Free {
                continue;
            }
            let mut d = drive::<T, G>(pos, rot);
            let clock = SubstepClock {
                start_time: c(0.049),
                end_time: c(0.05),
                h: c(0.001),
            };
            d.begin_substep(clock, std::slice::from_ref(&body));
            let r =
                check_gradient_perturbed(&d, std::slice::from_ref(&body), &mut rng, 50, 0.2, 0.5)
                    .unwrap();
            assert!(r.passed(), "{pos:?} {rot:?}: {r}");
            worst = worst.max(r.worst_relative_error);
        }
    }
    worst
}

#[test]
fn prescribed_gradient_matches_finite_differences_all_combinations() {
    let e = [
        gradients::<f64, SO3Matrix<f64>>(),
        gradients::<f64, UnitQuaternion<f64>>(),
        gradients::<f32, SO3Matrix<f32>>(),
        gradients::<f32, UnitQuaternion<f32>>(),
    ];
    println!("worst FD errors (matrix f64, quaternion f64, matrix f32, quaternion f32): {e:?}");
}

/// The target moves as (p₀ + vt, Exp(Ωt)R₀), set for the end of each substep; a body
/// sitting on the target satisfies every row, and the axis angle is the angle between
/// the z axes.
#[test]
fn prescribed_target_follows_time_and_is_zero_on_target() {
    type G = SO3Matrix<f64>;
    let mut d = drive::<f64, G>([true, true, true], HeldRotation::Orientation);
    let clock = SubstepClock {
        start_time: 0.099,
        end_time: 0.1,
        h: 0.001,
    };
    let (target0, t0) = d.target();
    assert_eq!(t0, 0.0);
    d.begin_substep(clock, &[]);
    let (target, t) = d.target();
    assert_eq!(t, 0.1);
    approx::assert_relative_eq!(
        target.position,
        target0.position + v(0.01, 0.0, -0.02),
        epsilon = 1e-15
    );
    let turn = target.rotation.compose(&target0.rotation.inverse()).log();
    approx::assert_relative_eq!(turn, v(0.0, 0.87, 0.0), epsilon = 1e-14);
    // A body whose joint frame sits on the target.
    let f = *d.frame();
    let rot = target.rotation.compose(&f.rotation.inverse());
    let pos = target.position - rot.act(&f.translation);
    let body = Body::dynamic(1.0, v(0.1, 0.1, 0.1), pos, rot).unwrap();
    let mut out = ConstraintEval::default();
    d.evaluate(std::slice::from_ref(&body), &mut out);
    assert!(out.value.iter().all(|x| x.abs() < 1e-14), "{:?}", out.value);
    assert!(d.axis_angle(std::slice::from_ref(&body)).unwrap() < 1e-7);
}

#[test]
fn prescribed_rejects_bad_input() {
    type G = UnitQuaternion<f64>;
    let target = Pose::new(Vector3::zeros(), G::identity());
    let none = PrescribedFrame::<f64, G>::new(
        BodyId(0),
        JointFrame::identity(),
        target,
        [false; 3],
        HeldRotation::Free,
    );
    assert!(matches!(
        none,
        Err(XpbdError::InvalidJoint { field: "rows", .. })
    ));
    let d = PrescribedFrame::<f64, G>::new(
        BodyId(0),
        JointFrame::identity(),
        target,
        [true; 3],
        HeldRotation::Axis,
    )
    .unwrap();
    assert!(matches!(
        d.with_spin(v(f64::NAN, 0.0, 0.0)),
        Err(XpbdError::InvalidJoint { field: "spin", .. })
    ));
    assert!(matches!(
        d.with_velocity(v(0.0, f64::INFINITY, 0.0)),
        Err(XpbdError::InvalidJoint {
            field: "velocity",
            ..
        })
    ));
    assert!(matches!(
        d.with_compliance(&[0.0; 3]),
        Err(XpbdError::InvalidJoint {
            field: "compliance",
            ..
        })
    ));
    assert!(matches!(
        d.with_compliance(&[0.0, 0.0, 0.0, -1.0, 0.0]),
        Err(XpbdError::BadCompliance { row: 3, .. })
    ));
    assert_eq!(d.with_compliance(&[1e-3; 5]).unwrap().compliance(4), 1e-3);
}

/// `[[prescribed]]` mistakes are scene errors naming the field.
#[test]
fn prescribed_scene_errors_name_the_field() {
    use lie_xpbd::scene::Scene;
    let base = r#"
version = 1
[[bodies]]
name = "plate"
shape = { type = "sphere", radius = 0.1 }
density = 1000.0
"#;
    let cases = [
        (
            "body = \"nope\"\nhold = [\"y\"]",
            "prescribed[0].body",
            "no body is named",
        ),
        (
            "body = \"world\"\nhold = [\"y\"]",
            "prescribed[0].body",
            "cannot be driven",
        ),
        (
            "body = \"plate\"\nhold = []",
            "prescribed[0].hold",
            "at least one",
        ),
        (
            "body = \"plate\"\nhold = [\"axis\", \"orientation\"]",
            "prescribed[0].hold",
            "exclude",
        ),
        (
            "body = \"plate\"\nhold = [\"y\", \"y\"]",
            "prescribed[0].hold[1]",
            "twice",
        ),
        (
            "body = \"plate\"\nhold = [\"y\", \"axis\"]\ncompliance = [0.0, 0.0]",
            "prescribed[0].compliance",
            "3 rows",
        ),
        (
            "body = \"plate\"\nhold = [\"y\"]\nspin_deg_per_s = [0.0, nan, 0.0]",
            "prescribed[0].spin_deg_per_s[1]",
            "finite",
        ),
        (
            "body = \"plate\"\nhold = [\"w\"]",
            "prescribed[0].hold",
            "unknown variant",
        ),
    ];
    for (entry, path, words) in cases {
        let text = format!("{base}\n[[prescribed]]\n{entry}\n");
        let e = Scene::from_toml(&text, "s.toml").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(path) && msg.contains(words), "{entry}: {msg}");
    }
    let ok = format!("{base}\n[[prescribed]]\nname = \"lift\"\nbody = \"plate\"\nhold = [\"y\", \"axis\"]\nvelocity = [0.0, 0.1, 0.0]\n");
    let scene = Scene::from_toml(&ok, "s.toml").unwrap();
    let built = scene.build::<f64, SO3Matrix<f64>>().unwrap();
    assert_eq!(built.joints.len(), 1);
    assert_eq!(
        (
            built.joints[0].name.as_str(),
            built.joints[0].kind,
            built.joints[0].rows
        ),
        ("lift", "prescribed", 3)
    );
}
