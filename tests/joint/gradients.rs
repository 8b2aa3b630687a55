//! Property tests of the joint constraints (paper (71)–(80), Appendix F.1, F.3):
//! analytic gradient blocks against central differences of boxplus perturbations
//! ([`numdiff::poses_to_vector`]) for every joint, both bodies and both one-sided
//! variants, in all four combinations SO3Matrix/UnitQuaternion × f32/f64; plus values
//! at coinciding frames and matrix/quaternion agreement.
//!
//! Each test draws `PROPTEST_CASES` states (default 256): random body poses (positions
//! in [−1, 1]³ m, uniformly random orientations), random joint frames (translations of
//! length ≤ 1 m, random rotations), a random second body position, and a relative
//! rotation R̄₁ ⊟ R̄₂ whose angle is tiny (≤ 1e-6), small (≤ 1e-2), anywhere in
//! [0, π − 0.1], or in [π − 0.3, π − 0.1]. The step h ≤ 1e-3 keeps every perturbed
//! relative rotation ≥ 0.09 rad from π, i.e. on one side of Log's branch cut
//! (lie::numdiff docs). Run with `-- --nocapture` to see the worst error per test.
//!
//! # Tolerance
//! Every comparison uses [`Real::fd_tolerance`] unchanged (1e-7 in f64, 2e-3 in f32),
//! with the metric it is defined for, [`numdiff::max_relative_error`]
//! (`max|J − J_fd| / max(1, max|J|)`), and the step [`Real::fd_step`]. Per the Real
//! docs, 2e-3 ≈ 16·ε/h is the round-off term of a central difference of an O(1)
//! function in f32 (ε = 1.2e-7, h = 1e-3). A joint's position rows are differences of
//! world points, p̄₁ − p̄₂, whose round-off is ε·L/h with L = |pₖ| + |Rₖrₖ| the size of
//! the positions that cancel (here L ≤ √3 + 1 ≈ 2.7 m), not ε/h; with L this small the
//! measured worst f32 error is 8.7e-4 over 5000 cases per test (f64: 1.6e-10), inside
//! the unscaled tolerance. A check on bodies far from the origin would need the
//! tolerance scaled by L/(1 m) for that reason, not because a gradient is wrong.

use lie_xpbd::joint::{Fixed, JointFrame, JointKinematics, Prismatic, Revolute, Spherical};
use lie_xpbd::lie::numdiff::{self, Pose};
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::xpbd::{Body, BodyId, Constraint, ConstraintEval};
use nalgebra::{DMatrix, DVector, Vector3};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::cell::Cell;
use std::f64::consts::PI;

// ---------------------------------------------------------------------------------
// Random states
// ---------------------------------------------------------------------------------

/// A joint state in f64, converted to the scalar and representation under test.
#[derive(Debug, Clone)]
struct State {
    /// Body 1 position, m.
    p1: [f64; 3],
    /// Body 1 orientation as a rotation vector, rad.
    rot1: [f64; 3],
    /// Joint frame 1 translation, m, and rotation vector, rad.
    t1: [f64; 3],
    j1: [f64; 3],
    /// Joint frame 2 translation, m, and rotation vector, rad.
    t2: [f64; 3],
    j2: [f64; 3],
    /// R̄₁ ⊟ R̄₂, rad.
    rel: [f64; 3],
    /// Body 2 position, m.
    p2: [f64; 3],
}

fn unit_axis() -> impl Strategy<Value = [f64; 3]> {
    (-1.0..=1.0f64, 0.0..(2.0 * PI)).prop_map(|(z, phi)| {
        let s = (1.0 - z * z).max(0.0).sqrt();
        [s * phi.cos(), s * phi.sin(), z]
    })
}

fn scaled(axis: [f64; 3], len: f64) -> [f64; 3] {
    [axis[0] * len, axis[1] * len, axis[2] * len]
}

/// A uniformly random direction times a length from `len`.
fn vector(len: impl Strategy<Value = f64>) -> impl Strategy<Value = [f64; 3]> {
    (unit_axis(), len).prop_map(|(a, l)| scaled(a, l))
}

fn box_point() -> impl Strategy<Value = [f64; 3]> {
    [-1.0..=1.0f64, -1.0..=1.0f64, -1.0..=1.0f64]
}

/// Rotation angle of R̄₁ ⊟ R̄₂: near 0, small, anywhere up to π − 0.1, or close to it.
fn relative_angle() -> impl Strategy<Value = f64> {
    prop_oneof![
        0.0..=1e-6f64,
        0.0..=1e-2f64,
        0.0..=(PI - 0.1),
        (PI - 0.3)..=(PI - 0.1),
    ]
}

fn state() -> impl Strategy<Value = State> {
    (
        box_point(),
        vector(0.0..=PI),
        vector(0.0..=1.0),
        vector(0.0..=PI),
        vector(0.0..=1.0),
        vector(0.0..=PI),
        vector(relative_angle()),
        box_point(),
    )
        .prop_map(|(p1, rot1, t1, j1, t2, j2, rel, p2)| State {
            p1,
            rot1,
            t1,
            j1,
            t2,
            j2,
            rel,
            p2,
        })
}

fn v<T: Real>(a: [f64; 3]) -> Vector3<T> {
    Vector3::new(c::<T>(a[0]), c::<T>(a[1]), c::<T>(a[2]))
}

/// Body poses and joint frames of both sides.
type Setup<T, G> = ([Pose<T, G>; 2], [JointFrame<T, G>; 2]);

/// Body poses and joint frames of a state, with R₂ chosen so that R̄₁ ⊟ R̄₂ = rel:
/// R̄₂ = R̄₁ Exp(−rel), R₂ = R̄₂ J₂ᵀ.
fn build<T: Real, G: LieGroup<T>>(s: &State) -> Setup<T, G> {
    let r1 = G::exp(&v(s.rot1));
    let f1 = JointFrame::new(v(s.t1), G::exp(&v(s.j1)));
    let f2 = JointFrame::new(v(s.t2), G::exp(&v(s.j2)));
    let rbar2 = r1.compose(&f1.rotation).compose(&G::exp(&-v::<T>(s.rel)));
    let r2 = rbar2.compose(&f2.rotation.inverse());
    ([Pose::new(v(s.p1), r1), Pose::new(v(s.p2), r2)], [f1, f2])
}

// ---------------------------------------------------------------------------------
// Joints under test
// ---------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum Kind {
    Fixed,
    Revolute,
    Spherical,
    Prismatic,
}

fn make<T: Real, G: LieGroup<T>>(
    kind: Kind,
    b1: Option<BodyId>,
    f1: JointFrame<T, G>,
    b2: Option<BodyId>,
    f2: JointFrame<T, G>,
) -> Box<dyn Constraint<T, G>> {
    match kind {
        Kind::Fixed => Box::new(Fixed::new(b1, f1, b2, f2).unwrap()),
        Kind::Revolute => Box::new(Revolute::new(b1, f1, b2, f2).unwrap()),
        Kind::Spherical => Box::new(Spherical::new(b1, f1, b2, f2).unwrap()),
        Kind::Prismatic => Box::new(Prismatic::new(b1, f1, b2, f2).unwrap()),
    }
}

fn body<T: Real, G: LieGroup<T>>(p: &Pose<T, G>) -> Body<T, G> {
    Body::fixed(p.position, p.rotation).unwrap()
}

/// Evaluates `joint` with the poses placed at the body indices `ids` (one pose per
/// non-world side, in side order).
fn eval_at<T: Real, G: LieGroup<T>>(
    joint: &dyn Constraint<T, G>,
    ids: &[usize],
    poses: &[Pose<T, G>],
) -> ConstraintEval<T> {
    let n = ids.iter().max().map_or(0, |m| m + 1);
    let mut bodies = vec![body(&poses[0]); n];
    for (&i, p) in ids.iter().zip(poses) {
        bodies[i] = body(p);
    }
    let mut out = ConstraintEval::default();
    joint.evaluate(&bodies, &mut out);
    out
}

/// The analytic gradient of the sides `slots`, side after side: n × 6·(#slots).
fn stacked<T: Real>(eval: &ConstraintEval<T>, dim: usize, slots: &[usize]) -> DMatrix<T> {
    let mut m = DMatrix::zeros(dim, 6 * slots.len());
    for (j, &s) in slots.iter().enumerate() {
        m.view_mut((0, 6 * j), (dim, 6))
            .copy_from(&eval.gradient[s].rows(0, dim));
    }
    m
}

/// Worst relative FD error of `kind`'s gradient over: both bodies (ids 0, 1 and
/// swapped), body 1 = world, body 2 = world. Also checks the world side's block is
/// zero and the rows beyond `dim` are untouched.
fn joint_gradient_error<T: Real, G: LieGroup<T>>(kind: Kind, s: &State) -> Worst {
    let (poses, frames) = build::<T, G>(s);
    let tol = T::fd_tolerance();
    let h = T::fd_step();
    let mut worst = Worst::default();
    let mut record =
        |a: &DMatrix<T>, fd: &DMatrix<T>| worst.add(numdiff::max_relative_error(a, fd), tol);
    // Two bodies, in both index orders.
    for ids in [[0usize, 1], [1, 0]] {
        let joint = make(
            kind,
            Some(BodyId(ids[0])),
            frames[0],
            Some(BodyId(ids[1])),
            frames[1],
        );
        let dim = joint.dim();
        let f = |ps: &[Pose<T, G>]| {
            DVector::from_column_slice(&eval_at(joint.as_ref(), &ids, ps).value.as_slice()[..dim])
        };
        let fd = numdiff::poses_to_vector(f, &poses, h);
        let eval = eval_at(joint.as_ref(), &ids, &poses);
        record(&stacked(&eval, dim, &[0, 1]), &fd);
        assert!(eval
            .value
            .rows(dim, 6 - dim)
            .iter()
            .all(|x| *x == T::zero()));
    }
    // One-sided: the world side's frame is its joint frame's world pose.
    for world_side in 0..2 {
        let w = frames[world_side].world_pose(&poses[world_side]);
        let mut f12 = frames;
        f12[world_side] = JointFrame::new(w.position, w.rotation);
        let mut b12 = [Some(BodyId(0)), Some(BodyId(0))];
        b12[world_side] = None;
        let joint = make(kind, b12[0], f12[0], b12[1], f12[1]);
        let dim = joint.dim();
        let moving = 1 - world_side;
        let f = |ps: &[Pose<T, G>]| {
            DVector::from_column_slice(&eval_at(joint.as_ref(), &[0], ps).value.as_slice()[..dim])
        };
        let fd = numdiff::poses_to_vector(f, &[poses[moving]], h);
        let eval = eval_at(joint.as_ref(), &[0], &[poses[moving]]);
        record(&stacked(&eval, dim, &[moving]), &fd);
        assert!(eval.gradient[world_side].iter().all(|x| *x == T::zero()));
    }
    worst
}

/// Worst relative FD error of the [`JointKinematics`] helpers: Δp, e,
/// u, θ_rev, d_pr with respect to both poses.
fn kinematics_gradient_error<T: Real, G: LieGroup<T>>(s: &State) -> Worst {
    let (poses, frames) = build::<T, G>(s);
    let tol = T::fd_tolerance();
    let h = T::fd_step();
    let kin = |ps: &[Pose<T, G>]| JointKinematics::new(&ps[0], &frames[0], &ps[1], &frames[1]);
    let k = kin(&poses);
    let mut worst = Worst::default();
    let mut check = |a: DMatrix<T>, f: &dyn Fn(&JointKinematics<T, G>) -> DVector<T>| {
        let fd = numdiff::poses_to_vector(|ps: &[Pose<T, G>]| f(&kin(ps)), &poses, h);
        worst.add(numdiff::max_relative_error(&a, &fd), tol);
    };
    let cat3 = |g: &[lie_xpbd::joint::Block3<T>; 2]| {
        let mut m = DMatrix::zeros(3, 12);
        m.view_mut((0, 0), (3, 6)).copy_from(&g[0]);
        m.view_mut((0, 6), (3, 6)).copy_from(&g[1]);
        m
    };
    let cat1 = |g: &[nalgebra::RowVector6<T>; 2]| {
        let mut m = DMatrix::zeros(1, 12);
        m.view_mut((0, 0), (1, 6)).copy_from(&g[0]);
        m.view_mut((0, 6), (1, 6)).copy_from(&g[1]);
        m
    };
    let vec3 = |x: Vector3<T>| DVector::from_column_slice(x.as_slice());
    let (dp, g) = k.position_error_gradient();
    assert_eq!(dp, k.position_error());
    check(cat3(&g), &|k| vec3(k.position_error()));
    let (e, g) = k.rotation_error_gradient();
    assert_eq!(e, k.rotation_error());
    check(cat3(&g), &|k| vec3(k.rotation_error()));
    let (u, g) = k.relative_position_gradient();
    assert_eq!(u, k.relative_position());
    check(cat3(&g), &|k| vec3(k.relative_position()));
    let (th, g) = k.revolute_angle_gradient();
    assert_eq!(th, k.revolute_angle());
    check(cat1(&g), &|k| DVector::from_element(1, k.revolute_angle()));
    let (d, g) = k.prismatic_offset_gradient();
    assert_eq!(d, k.prismatic_offset());
    check(cat1(&g), &|k| {
        DVector::from_element(1, k.prismatic_offset())
    });
    worst
}

/// The worst error seen (for gradient tests [`numdiff::max_relative_error`]) and its
/// ratio to the tolerance; a non-finite error counts as infinite.
#[derive(Debug, Clone, Copy, Default)]
struct Worst {
    error: f64,
    ratio: f64,
}

impl Worst {
    fn add<T: Real>(&mut self, error: T, tol: T) {
        let e = if error.is_finite() {
            error.to_f64()
        } else {
            f64::INFINITY
        };
        self.error = self.error.max(e);
        self.ratio = self.ratio.max(e / tol.to_f64());
    }

    fn merge(self, other: Worst) -> Worst {
        Worst {
            error: self.error.max(other.error),
            ratio: self.ratio.max(other.ratio),
        }
    }
}

/// Runs `check` on `PROPTEST_CASES` random states (default 256), fails if an error
/// exceeds its tolerance, and prints the worst error and ratio.
fn run(name: &str, check: impl Fn(&State) -> Worst) {
    // No failure persistence: a regression file would land in the shared tests/ dir.
    let mut runner = TestRunner::new(Config {
        failure_persistence: None,
        ..Config::default()
    });
    let worst = Cell::new(Worst::default());
    let result = runner.run(&state(), |s| {
        let w = check(&s);
        worst.set(worst.get().merge(w));
        prop_assert!(
            w.ratio <= 1.0,
            "error {} is {} × the tolerance",
            w.error,
            w.ratio
        );
        Ok(())
    });
    let w = worst.get();
    eprintln!(
        "{name}: worst error {:.3e} ({:.3} × tolerance) over {} cases",
        w.error,
        w.ratio,
        runner.config().cases
    );
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
}

// ---------------------------------------------------------------------------------
// Gradient tests: joint × representation × scalar
// ---------------------------------------------------------------------------------

type M64 = SO3Matrix<f64>;
type M32 = SO3Matrix<f32>;
type Q64 = UnitQuaternion<f64>;
type Q32 = UnitQuaternion<f32>;

#[test]
fn fixed_gradient_matrix_f64() {
    run("fixed_gradient_matrix_f64", |s| {
        joint_gradient_error::<f64, M64>(Kind::Fixed, s)
    });
}

#[test]
fn fixed_gradient_matrix_f32() {
    run("fixed_gradient_matrix_f32", |s| {
        joint_gradient_error::<f32, M32>(Kind::Fixed, s)
    });
}

#[test]
fn fixed_gradient_quaternion_f64() {
    run("fixed_gradient_quaternion_f64", |s| {
        joint_gradient_error::<f64, Q64>(Kind::Fixed, s)
    });
}

#[test]
fn fixed_gradient_quaternion_f32() {
    run("fixed_gradient_quaternion_f32", |s| {
        joint_gradient_error::<f32, Q32>(Kind::Fixed, s)
    });
}

#[test]
fn revolute_gradient_matrix_f64() {
    run("revolute_gradient_matrix_f64", |s| {
        joint_gradient_error::<f64, M64>(Kind::Revolute, s)
    });
}

#[test]
fn revolute_gradient_matrix_f32() {
    run("revolute_gradient_matrix_f32", |s| {
        joint_gradient_error::<f32, M32>(Kind::Revolute, s)
    });
}

#[test]
fn revolute_gradient_quaternion_f64() {
    run("revolute_gradient_quaternion_f64", |s| {
        joint_gradient_error::<f64, Q64>(Kind::Revolute, s)
    });
}

#[test]
fn revolute_gradient_quaternion_f32() {
    run("revolute_gradient_quaternion_f32", |s| {
        joint_gradient_error::<f32, Q32>(Kind::Revolute, s)
    });
}

#[test]
fn spherical_gradient_matrix_f64() {
    run("spherical_gradient_matrix_f64", |s| {
        joint_gradient_error::<f64, M64>(Kind::Spherical, s)
    });
}

#[test]
fn spherical_gradient_matrix_f32() {
    run("spherical_gradient_matrix_f32", |s| {
        joint_gradient_error::<f32, M32>(Kind::Spherical, s)
    });
}

#[test]
fn spherical_gradient_quaternion_f64() {
    run("spherical_gradient_quaternion_f64", |s| {
        joint_gradient_error::<f64, Q64>(Kind::Spherical, s)
    });
}

#[test]
fn spherical_gradient_quaternion_f32() {
    run("spherical_gradient_quaternion_f32", |s| {
        joint_gradient_error::<f32, Q32>(Kind::Spherical, s)
    });
}

#[test]
fn prismatic_gradient_matrix_f64() {
    run("prismatic_gradient_matrix_f64", |s| {
        joint_gradient_error::<f64, M64>(Kind::Prismatic, s)
    });
}

#[test]
fn prismatic_gradient_matrix_f32() {
    run("prismatic_gradient_matrix_f32", |s| {
        joint_gradient_error::<f32, M32>(Kind::Prismatic, s)
    });
}

#[test]
fn prismatic_gradient_quaternion_f64() {
    run("prismatic_gradient_quaternion_f64", |s| {
        joint_gradient_error::<f64, Q64>(Kind::Prismatic, s)
    });
}

#[test]
fn prismatic_gradient_quaternion_f32() {
    run("prismatic_gradient_quaternion_f32", |s| {
        joint_gradient_error::<f32, Q32>(Kind::Prismatic, s)
    });
}

#[test]
fn kinematics_gradient_matrix_f64() {
    run(
        "kinematics_gradient_matrix_f64",
        kinematics_gradient_error::<f64, M64>,
    );
}

#[test]
fn kinematics_gradient_matrix_f32() {
    run(
        "kinematics_gradient_matrix_f32",
        kinematics_gradient_error::<f32, M32>,
    );
}

#[test]
fn kinematics_gradient_quaternion_f64() {
    run(
        "kinematics_gradient_quaternion_f64",
        kinematics_gradient_error::<f64, Q64>,
    );
}

#[test]
fn kinematics_gradient_quaternion_f32() {
    run(
        "kinematics_gradient_quaternion_f32",
        kinematics_gradient_error::<f32, Q32>,
    );
}

// ---------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------

const KINDS: [Kind; 4] = [
    Kind::Fixed,
    Kind::Revolute,
    Kind::Spherical,
    Kind::Prismatic,
];

/// The state with body 2 moved so that both joint frames coincide: R̄₂ = R̄₁ (rel = 0)
/// and p₂ = p̄₁ − R₂r₂.
fn coincident<T: Real, G: LieGroup<T>>(s: &State) -> Setup<T, G> {
    let mut s = s.clone();
    s.rel = [0.0; 3];
    let (mut poses, frames) = build::<T, G>(&s);
    let pbar1 = frames[0].world_position(&poses[0].position, &poses[0].rotation);
    poses[1].position = pbar1 - poses[1].rotation.act(&frames[1].translation);
    (poses, frames)
}

/// Largest |C| of every joint at coinciding frames, both bodies and both one-sided,
/// divided by its bound 64·ε·max(1, L): a handful of roundings of positions of size
/// L ≤ 2.7 m (and of rotation entries of size 1), far below any real violation.
fn coincident_value_error<T: Real, G: LieGroup<T>>(s: &State) -> Worst {
    let (poses, frames) = coincident::<T, G>(s);
    let mut l = T::one();
    for k in 0..2 {
        l = l
            .max(poses[k].position.norm())
            .max(frames[k].world_pose(&poses[k]).position.norm());
    }
    let tol = c::<T>(64.0) * T::default_epsilon() * l;
    let mut worst = Worst::default();
    for kind in KINDS {
        let joint = make(kind, Some(BodyId(0)), frames[0], Some(BodyId(1)), frames[1]);
        let e = eval_at(joint.as_ref(), &[0, 1], &poses);
        worst.add(e.value.amax(), tol);
        for world_side in 0..2 {
            let w = frames[world_side].world_pose(&poses[world_side]);
            let mut f12 = frames;
            f12[world_side] = JointFrame::new(w.position, w.rotation);
            let mut b12 = [Some(BodyId(0)), Some(BodyId(0))];
            b12[world_side] = None;
            let joint = make(kind, b12[0], f12[0], b12[1], f12[1]);
            let e = eval_at(joint.as_ref(), &[0], &[poses[1 - world_side]]);
            worst.add(e.value.amax(), tol);
        }
    }
    worst
}

#[test]
fn coincident_frames_give_zero_value_matrix_f64() {
    run(
        "coincident_frames_give_zero_value_matrix_f64",
        coincident_value_error::<f64, M64>,
    );
}

#[test]
fn coincident_frames_give_zero_value_matrix_f32() {
    run(
        "coincident_frames_give_zero_value_matrix_f32",
        coincident_value_error::<f32, M32>,
    );
}

#[test]
fn coincident_frames_give_zero_value_quaternion_f64() {
    run(
        "coincident_frames_give_zero_value_quaternion_f64",
        coincident_value_error::<f64, Q64>,
    );
}

#[test]
fn coincident_frames_give_zero_value_quaternion_f32() {
    run(
        "coincident_frames_give_zero_value_quaternion_f32",
        coincident_value_error::<f32, Q32>,
    );
}

/// θ_rev (−(73): side 2 relative to side 1) and d_pr (80) read back what was built:
/// frames coincide except for a rotation by −θ about the joint z axis and a slide by d
/// along side 1's z axis (R̄₂ = R̄₁Exp(−θe₃), so θ_rev = −θ, and p̄₂ = p̄₁ + d·R̄₁e₃);
/// the revolute rotation rows and the
/// prismatic position rows are then zero. Tolerance 64·ε·max(1, L) as above.
fn joint_variable_error<T: Real, G: LieGroup<T>>(s: &State) -> Worst {
    // θ ∈ [−(π − 0.1), π − 0.1] rad and d ∈ [−1, 1] m from the (otherwise unused)
    // random position of body 2.
    let theta = s.p2[0] * (PI - 0.1);
    let d = s.p2[1];
    let mut s2 = s.clone();
    s2.rel = [0.0, 0.0, theta];
    let (mut poses, frames) = build::<T, G>(&s2);
    let rbar1 = frames[0].world_rotation(&poses[0].rotation);
    let pbar1 = frames[0].world_position(&poses[0].position, &poses[0].rotation);
    let pbar2 = pbar1 + rbar1.act(&Vector3::new(T::zero(), T::zero(), c::<T>(d)));
    poses[1].position = pbar2 - poses[1].rotation.act(&frames[1].translation);
    let tol = c::<T>(64.0) * T::default_epsilon() * c::<T>(4.0);
    let mut worst = Worst::default();
    let k = JointKinematics::new(&poses[0], &frames[0], &poses[1], &frames[1]);
    worst.add((k.revolute_angle() + c::<T>(theta)).abs(), tol);
    worst.add((k.prismatic_offset() - c::<T>(d)).abs(), tol);
    let rev = make(
        Kind::Revolute,
        Some(BodyId(0)),
        frames[0],
        Some(BodyId(1)),
        frames[1],
    );
    let e = eval_at(rev.as_ref(), &[0, 1], &poses);
    worst.add(e.value.rows(3, 2).amax(), tol);
    let pr = make(
        Kind::Prismatic,
        Some(BodyId(0)),
        frames[0],
        Some(BodyId(1)),
        frames[1],
    );
    let e = eval_at(pr.as_ref(), &[0, 1], &poses);
    worst.add(e.value.rows(0, 2).amax(), tol);
    worst
}

#[test]
fn joint_variables_match_construction() {
    run(
        "joint_variables_match_construction_matrix_f64",
        joint_variable_error::<f64, M64>,
    );
    run(
        "joint_variables_match_construction_matrix_f32",
        joint_variable_error::<f32, M32>,
    );
    run(
        "joint_variables_match_construction_quaternion_f64",
        joint_variable_error::<f64, Q64>,
    );
    run(
        "joint_variables_match_construction_quaternion_f32",
        joint_variable_error::<f32, Q32>,
    );
}

/// Matrix and quaternion joints at the same state (built from the same rotation
/// vectors) give the same values and gradients, to `tol` relative
/// ([`numdiff::max_relative_error`] of the stacked [value | gradients]).
fn representation_difference<T: Real>(s: &State, tol: T) -> Worst {
    let (pm, fm) = build::<T, SO3Matrix<T>>(s);
    let (pq, fq) = build::<T, UnitQuaternion<T>>(s);
    let mut worst = Worst::default();
    for kind in KINDS {
        let jm = make(kind, Some(BodyId(0)), fm[0], Some(BodyId(1)), fm[1]);
        let jq = make(kind, Some(BodyId(0)), fq[0], Some(BodyId(1)), fq[1]);
        let em = eval_at(jm.as_ref(), &[0, 1], &pm);
        let eq = eval_at(jq.as_ref(), &[0, 1], &pq);
        let n = jm.dim();
        let stack = |e: &ConstraintEval<T>| {
            let mut m = DMatrix::zeros(n, 13);
            m.view_mut((0, 0), (n, 1)).copy_from(&e.value.rows(0, n));
            m.view_mut((0, 1), (n, 12))
                .copy_from(&stacked(e, n, &[0, 1]));
            m
        };
        worst.add(numdiff::max_relative_error(&stack(&em), &stack(&eq)), tol);
    }
    worst
}

/// Tolerance 10³·ε relative (2.2e-13 in f64, 1.2e-4 in f32). The representations
/// round differently (quaternion vs 3×3 products, 2·atan2 vs the matrix Log); near
/// |e| = π − 0.1 the relative rotation's axis is conditioned like 1/sin|e| ≈ 10 and
/// Γ⁻¹(e) has entries up to ~10, so a few roundings can grow to ~10²·ε. Measured over
/// 5000 cases: 4.2e-15 (19ε) in f64, 1.5e-6 (13ε) in f32.
#[test]
fn matrix_and_quaternion_agree() {
    let tol = |eps: f64| 1e3 * eps;
    run("matrix_and_quaternion_agree_f64", |s| {
        representation_difference::<f64>(s, tol(f64::EPSILON))
    });
    run("matrix_and_quaternion_agree_f32", |s| {
        representation_difference::<f32>(s, tol(f32::EPSILON as f64) as f32)
    });
}
