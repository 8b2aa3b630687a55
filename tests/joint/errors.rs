//! Bad input to the joints gives a typed [`XpbdError`], never a panic: two world
//! sides, one body twice, non-finite or non-rotation frames, compliance vectors of the
//! wrong length or with negative/NaN/∞ entries, and a body index the world does not
//! have ([`XpbdError::UnknownBody`] from `World::add_constraint`).

use lie_xpbd::joint::{Fixed, JointFrame, Prismatic, Revolute, Spherical};
use lie_xpbd::lie::{LieError, LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::xpbd::{Body, BodyId, Constraint, ConstraintEval, SolverOptions, World, XpbdError};
use nalgebra::{Matrix3, Quaternion, Vector3};
use proptest::prelude::*;

type M64 = SO3Matrix<f64>;
type Q32 = UnitQuaternion<f32>;

/// A boxed joint from a constructor result, with `compliance` applied if given.
macro_rules! joint {
    ($ty:ident, $b1:expr, $f1:expr, $b2:expr, $f2:expr, $compliance:expr) => {
        $ty::new($b1, $f1, $b2, $f2)
            .and_then(|j| match $compliance {
                Some(a) => j.with_compliance(a),
                None => Ok(j),
            })
            .map(|j| Box::new(j) as Box<dyn Constraint<T, G>>)
    };
}

/// A joint's name, its number of rows, and the constructor's result.
type Built<T, G> = (
    &'static str,
    usize,
    Result<Box<dyn Constraint<T, G>>, XpbdError>,
);

/// Builds each of the four joints from the same arguments.
fn all_joints<T: Real, G: LieGroup<T>>(
    b1: Option<BodyId>,
    f1: JointFrame<T, G>,
    b2: Option<BodyId>,
    f2: JointFrame<T, G>,
    compliance: Option<&[T]>,
) -> Vec<Built<T, G>> {
    vec![
        ("fixed", 6, joint!(Fixed, b1, f1, b2, f2, compliance)),
        ("revolute", 5, joint!(Revolute, b1, f1, b2, f2, compliance)),
        (
            "spherical",
            3,
            joint!(Spherical, b1, f1, b2, f2, compliance),
        ),
        (
            "prismatic",
            5,
            joint!(Prismatic, b1, f1, b2, f2, compliance),
        ),
    ]
}

fn id<T: Real, G: LieGroup<T>>() -> JointFrame<T, G> {
    JointFrame::identity()
}

#[test]
fn both_sides_world_is_rejected() {
    for (name, _, r) in all_joints::<f64, M64>(None, id(), None, id(), None) {
        assert!(
            matches!(
                r,
                Err(XpbdError::InvalidJoint {
                    field: "bodies",
                    ..
                })
            ),
            "{name}: {:?}",
            r.err()
        );
    }
    for (name, _, r) in all_joints::<f32, Q32>(None, id(), None, id(), None) {
        assert!(
            matches!(
                r,
                Err(XpbdError::InvalidJoint {
                    field: "bodies",
                    ..
                })
            ),
            "{name}"
        );
    }
}

#[test]
fn same_body_twice_is_rejected() {
    let b = Some(BodyId(3));
    for (name, _, r) in all_joints::<f64, M64>(b, id(), b, id(), None) {
        match r {
            Err(XpbdError::InvalidJoint {
                field: "bodies",
                value,
                ..
            }) => {
                assert_eq!(value, "(3, 3)", "{name}")
            }
            other => panic!("{name}: {:?}", other.err()),
        }
    }
    for (name, _, r) in all_joints::<f32, Q32>(b, id(), b, id(), None) {
        assert!(
            matches!(
                r,
                Err(XpbdError::InvalidJoint {
                    field: "bodies",
                    ..
                })
            ),
            "{name}"
        );
    }
}

#[test]
fn non_finite_frame_translation_is_rejected() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let f = JointFrame::<f64, M64>::at(Vector3::new(0.0, bad, 0.0));
        for (name, _, r) in all_joints(Some(BodyId(0)), f, None, id(), None) {
            match r {
                Err(XpbdError::NonFinite { what }) => {
                    assert_eq!(what, "joint frame 1 translation", "{name}")
                }
                other => panic!("{name}: {:?}", other.err()),
            }
        }
        for (name, _, r) in all_joints(None, id(), Some(BodyId(0)), f, None) {
            match r {
                Err(XpbdError::NonFinite { what }) => {
                    assert_eq!(what, "joint frame 2 translation", "{name}")
                }
                other => panic!("{name}: {:?}", other.err()),
            }
        }
    }
}

#[test]
fn non_finite_frame_rotation_is_rejected() {
    let mut m = Matrix3::<f64>::identity();
    m[(1, 2)] = f64::NAN;
    let f = JointFrame::new(Vector3::zeros(), SO3Matrix::from_matrix_unchecked(m));
    for (name, _, r) in all_joints(Some(BodyId(0)), f, Some(BodyId(1)), id(), None) {
        match r {
            Err(XpbdError::NonFinite { what }) => {
                assert_eq!(what, "joint frame 1 rotation", "{name}")
            }
            other => panic!("{name}: {:?}", other.err()),
        }
    }
    let q = UnitQuaternion::new_unchecked(Quaternion::new(f32::INFINITY, 0.0, 0.0, 0.0));
    let f = JointFrame::new(Vector3::zeros(), q);
    for (name, _, r) in all_joints(Some(BodyId(0)), id(), Some(BodyId(1)), f, None) {
        assert!(matches!(r, Err(XpbdError::NonFinite { .. })), "{name}");
    }
}

#[test]
fn frame_rotation_that_is_not_a_rotation_is_rejected() {
    // A quaternion of norm 2 built unchecked: its "matrix" is 4× a rotation.
    let q = UnitQuaternion::new_unchecked(Quaternion::new(2.0f32, 0.0, 0.0, 0.0));
    let f = JointFrame::new(Vector3::zeros(), q);
    for (name, _, r) in all_joints(Some(BodyId(0)), f, None, id(), None) {
        assert!(
            matches!(r, Err(XpbdError::Lie(LieError::NotOrthogonal { .. }))),
            "{name}: {:?}",
            r.err()
        );
    }
    // A reflection.
    let m = Matrix3::from_diagonal(&Vector3::new(1.0, 1.0, -1.0));
    let f = JointFrame::new(Vector3::zeros(), SO3Matrix::<f64>::from_matrix_unchecked(m));
    for (name, _, r) in all_joints(None, id(), Some(BodyId(0)), f, None) {
        assert!(
            matches!(r, Err(XpbdError::Lie(LieError::Reflection { .. }))),
            "{name}: {:?}",
            r.err()
        );
    }
}

#[test]
fn joint_frame_try_new_validates() {
    assert!(JointFrame::<f64, M64>::try_new(Vector3::new(0.1, 0.2, 0.3), M64::identity()).is_ok());
    assert!(matches!(
        JointFrame::<f64, M64>::try_new(Vector3::new(f64::NAN, 0.0, 0.0), M64::identity()),
        Err(XpbdError::NonFinite { .. })
    ));
    let q = UnitQuaternion::new_unchecked(Quaternion::new(0.0f32, 0.0, 0.0, 0.0));
    assert!(matches!(
        JointFrame::<f32, Q32>::try_new(Vector3::zeros(), q),
        Err(XpbdError::Lie(_))
    ));
}

#[test]
fn wrong_compliance_length_is_rejected() {
    let b = (Some(BodyId(0)), Some(BodyId(1)));
    for len in [0usize, 1, 2, 4, 7] {
        let values = vec![0.0f64; len];
        for (name, dim, r) in all_joints::<f64, M64>(b.0, id(), b.1, id(), Some(&values)) {
            if len == dim {
                assert!(r.is_ok(), "{name}");
                continue;
            }
            assert!(
                matches!(
                    r,
                    Err(XpbdError::InvalidJoint {
                        field: "compliance",
                        ..
                    })
                ),
                "{name} with {len} values: {:?}",
                r.err()
            );
        }
    }
}

#[test]
fn negative_or_non_finite_compliance_is_rejected() {
    for bad in [-1e-9f64, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for (name, dim, _) in all_joints::<f64, M64>(Some(BodyId(0)), id(), None, id(), None) {
            let row = dim - 1;
            let mut values = vec![1e-6f64; dim];
            values[row] = bad;
            let (_, _, r) =
                all_joints::<f64, M64>(Some(BodyId(0)), id(), None, id(), Some(&values))
                    .into_iter()
                    .find(|(n, _, _)| *n == name)
                    .unwrap();
            match r {
                Err(XpbdError::BadCompliance {
                    constraint,
                    row: got,
                    value,
                }) => {
                    assert_eq!(got, row, "{name}");
                    assert!(constraint.starts_with(name), "{constraint}");
                    assert!(value.is_nan() == bad.is_nan(), "{name}");
                }
                other => panic!("{name} with {bad}: {:?}", other.err()),
            }
        }
    }
}

#[test]
fn valid_compliance_is_stored() {
    let j = Revolute::<f64, M64>::new(None, id(), Some(BodyId(0)), id())
        .unwrap()
        .with_compliance(&[0.0, 0.0, 0.0, 1e-3, 2e-3])
        .unwrap();
    assert_eq!(j.compliances(), &[0.0, 0.0, 0.0, 1e-3, 2e-3]);
    assert_eq!(j.compliance(4), 2e-3);
    assert_eq!(j.compliance(9), 0.0);
    let hard = Fixed::<f32, Q32>::new(None, id(), Some(BodyId(0)), id()).unwrap();
    assert!((0..6).all(|r| hard.compliance(r) == 0.0));
}

#[test]
fn names_and_bodies() {
    let j = Revolute::<f64, M64>::new(None, id(), Some(BodyId(0)), id()).unwrap();
    assert_eq!(j.name(), "revolute(world, 0)");
    assert_eq!(j.bodies(), [None, Some(BodyId(0))]);
    let j = Prismatic::<f64, M64>::new(Some(BodyId(4)), id(), Some(BodyId(2)), id()).unwrap();
    assert_eq!(j.name(), "prismatic(4, 2)");
    let j = Spherical::<f64, M64>::new(Some(BodyId(1)), id(), None, id()).unwrap();
    assert_eq!(j.name(), "spherical(1, world)");
    assert_eq!(j.attachments().body1(), Some(BodyId(1)));
    assert_eq!(j.attachments().body2(), None);
    let j = Fixed::<f64, M64>::new(Some(BodyId(0)), id(), Some(BodyId(1)), id()).unwrap();
    assert_eq!(j.name(), "fixed(0, 1)");
}

#[test]
fn unknown_body_in_world_is_rejected() {
    let mut world = World::<f64, M64>::new(SolverOptions::default()).unwrap();
    let b = Body::dynamic(1.0, Vector3::repeat(0.1), Vector3::zeros(), M64::identity()).unwrap();
    let b0 = world.add_body(b).unwrap();
    let r = world.add_constraint(Revolute::new(Some(b0), id(), Some(BodyId(1)), id()).unwrap());
    assert_eq!(
        r,
        Err(XpbdError::UnknownBody {
            constraint: "revolute(0, 1)".into(),
            body: 1,
            count: 1
        })
    );
    let r = world.add_constraint(Spherical::new(Some(BodyId(7)), id(), None, id()).unwrap());
    assert!(matches!(r, Err(XpbdError::UnknownBody { body: 7, .. })));
    // A valid one is accepted.
    assert!(world
        .add_constraint(Fixed::new(None, id(), Some(b0), id()).unwrap())
        .is_ok());
    assert_eq!(world.constraint_count(), 1);
}

#[test]
fn evaluate_with_missing_body_gives_nan_not_panic() {
    let j = Revolute::<f64, M64>::new(None, id(), Some(BodyId(5)), id()).unwrap();
    let bodies = vec![Body::fixed(Vector3::zeros(), M64::identity()).unwrap()];
    let mut out = ConstraintEval::default();
    j.evaluate(&bodies, &mut out);
    assert!(out.value.rows(0, 5).iter().all(|x| x.is_nan()));
    assert!(out.gradient.iter().all(|g| g.iter().all(|x| *x == 0.0)));
}

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        -10.0..10.0f64,
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-0.0),
        any::<f64>(),
    ]
}

proptest! {
    // No failure persistence: a regression file would land in the shared tests/ dir.
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    /// Arbitrary (also non-finite, non-rotation) frames, body ids and compliance
    /// vectors: constructors return Ok or Err, and never panic.
    #[test]
    fn constructors_never_panic(
        t in proptest::array::uniform3(any_f64()),
        m in proptest::array::uniform9(any_f64()),
        q in proptest::array::uniform4(any_f64()),
        b1 in proptest::option::of(0usize..3),
        b2 in proptest::option::of(0usize..3),
        compliance in proptest::collection::vec(any_f64(), 0..8),
    ) {
        let fm = JointFrame::new(
            Vector3::from(t),
            SO3Matrix::from_matrix_unchecked(Matrix3::from_column_slice(&m)),
        );
        let fq = JointFrame::new(
            Vector3::from(t),
            UnitQuaternion::new_unchecked(Quaternion::new(q[0], q[1], q[2], q[3])),
        );
        let (b1, b2) = (b1.map(BodyId), b2.map(BodyId));
        for (_, _, r) in all_joints::<f64, M64>(b1, fm, b2, id(), Some(&compliance)) {
            if let Ok(j) = r {
                prop_assert!(j.dim() >= 3);
            }
        }
        for (_, _, r) in all_joints::<f64, UnitQuaternion<f64>>(b1, id(), b2, fq, Some(&compliance)) {
            if let Ok(j) = r {
                prop_assert!(j.dim() >= 3);
            }
        }
    }
}
