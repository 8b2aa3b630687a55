//! `Constraint::add_constraint_force` of the vector joints against ∇Cᵀλ built from
//! `Constraint::evaluate`'s gradient blocks: every joint kind (fixed, revolute,
//! spherical, prismatic), two bodies and both one-sided variants, in all four
//! combinations SO3Matrix/UnitQuaternion × f32/f64, at random poses, joint frames and
//! multipliers; and a user-defined [`JointKind`] that writes its rows through
//! [`JointRows::push`] (dense 3×6 blocks) rather than the structured form the shipped
//! kinds use.
//!
//! # Tolerance
//! Both paths form the same products g_jc·λ_j of the same gradient entries and add them
//! over the rows, so they differ only by the order of the sum; the check allows
//! 64 ε · Σⱼ|g_jc λⱼ| per entry, the bound of a reordered sum of at most 6 terms with room
//! to spare. One exception: the rotation columns of the position-error rows Δp
//! (fixed, revolute, spherical) are applied as r × (Rᵀλ_p) (r the frame translation,
//! λ_p the rows' multipliers), not row by row from the entries of −R r̂: the same
//! exact value, rounded in other places, each rounding at most ε times a term of size
//! |r||λ_p| (Rᵀλ_p: three products and two sums; the cross product: two products and a
//! difference), so for those columns |r|·|λ_p| is added to the sum of terms. A wrong
//! row, side or sign is off by a multiple of |g_jc λⱼ| or |r||λ_p| itself, far above
//! 64 ε of it.

use lie_xpbd::joint::{
    Fixed, JointFrame, JointKind, JointKinematics, JointRows, Prismatic, Revolute, Spherical,
    VectorJoint,
};
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::xpbd::{Body, BodyId, Constraint, ConstraintEval, MAX_BODIES};
use nalgebra::{SVector, Vector3};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

type V6<T> = SVector<T, 6>;

/// One random case, in f64: two body poses, two joint frames (translation, rotation
/// vector) and six multipliers.
#[derive(Debug, Clone)]
struct Case {
    poses: [([f64; 3], [f64; 3]); 2],
    frames: [([f64; 3], [f64; 3]); 2],
    lambda: [f64; 6],
}

fn triple(r: f64) -> impl Strategy<Value = [f64; 3]> {
    [-r..=r, -r..=r, -r..=r]
}

fn case() -> impl Strategy<Value = Case> {
    let pose = || (triple(1.0), triple(3.0));
    (
        [pose(), pose()],
        [pose(), pose()],
        [
            -10.0..=10.0f64,
            -10.0..=10.0,
            -10.0..=10.0,
            -10.0..=10.0,
            -10.0..=10.0,
            -10.0..=10.0,
        ],
    )
        .prop_map(|(poses, frames, lambda)| Case {
            poses,
            frames,
            lambda,
        })
}

fn v<T: Real>(a: [f64; 3]) -> Vector3<T> {
    Vector3::new(c(a[0]), c(a[1]), c(a[2]))
}

/// The bodies and frames of `case`, with side `world` (if any) the fixed world: its
/// frame is then given in world coordinates (the joint frame of a body at that pose).
fn joint<T: Real, G: LieGroup<T>, J>(
    case: &Case,
    world: Option<usize>,
    new: impl Fn(
        Option<BodyId>,
        JointFrame<T, G>,
        Option<BodyId>,
        JointFrame<T, G>,
    ) -> Result<J, lie_xpbd::xpbd::XpbdError>,
) -> (Vec<Body<T, G>>, J) {
    let bodies: Vec<Body<T, G>> = case
        .poses
        .iter()
        .map(|(p, r)| {
            Body::dynamic(
                c(2.0),
                Vector3::new(c(0.3), c(0.4), c(0.5)),
                v(*p),
                G::exp(&v(*r)),
            )
            .unwrap()
        })
        .collect();
    let mut ids = [Some(BodyId(0)), Some(BodyId(1))];
    let mut frames: Vec<JointFrame<T, G>> = case
        .frames
        .iter()
        .map(|(t, r)| JointFrame::new(v(*t), G::exp(&v(*r))))
        .collect();
    if let Some(w) = world {
        let b = &bodies[w];
        let f = &frames[w];
        let world_frame = JointFrame::new(
            f.world_position(&b.position, &b.orientation),
            f.world_rotation(&b.orientation),
        );
        frames[w] = world_frame;
        ids[w] = None;
    }
    let j = new(ids[0], frames[0], ids[1], frames[1]).unwrap();
    (bodies, j)
}

/// Compares the two ways of forming ∇C_kᵀλ; returns the worst error in units of the
/// tolerance (≤ 1 passes).
///
/// `position_rows`: rows 0–2 are Δp, whose rotation columns are applied as
/// r × (Rᵀλ_p) (module docs); `r` the frame translations' norms per side.
fn check<T: Real, G: LieGroup<T>>(
    c_: &dyn Constraint<T, G>,
    bodies: &[Body<T, G>],
    l: &[f64; 6],
    position_rows: bool,
    r: [f64; 2],
) {
    let dim = c_.dim();
    let lambda: Vec<T> = l[..dim].iter().map(|&x| c(x)).collect();
    let mut eval = ConstraintEval::default();
    c_.evaluate(bodies, &mut eval);
    // Start from a non-zero force: the method adds to it.
    let start = V6::<T>::from_fn(|i, _| c(0.25 * i as f64 - 0.5));
    let mut force = [start; MAX_BODIES];
    assert!(
        c_.add_constraint_force(bodies, &lambda, &mut force),
        "{}: add_constraint_force not implemented",
        c_.name()
    );
    let eps = T::default_epsilon().to_f64();
    for (k, slot) in c_.bodies().iter().enumerate() {
        if slot.is_none() {
            assert_eq!(force[k], start, "{}: world side {k} written", c_.name());
            continue;
        }
        for col in 0..6 {
            let terms: Vec<f64> = (0..dim)
                .map(|j| eval.gradient[k][(j, col)].to_f64() * l[j])
                .collect();
            let want = start[col].to_f64()
                + (0..dim).fold(0.0, |acc, j| {
                    acc + (eval.gradient[k][(j, col)] * lambda[j]).to_f64()
                });
            let got = force[k][col].to_f64();
            let cross = if position_rows && col >= 3 {
                r[k] * (l[0] * l[0] + l[1] * l[1] + l[2] * l[2]).sqrt()
            } else {
                0.0
            };
            let scale =
                terms.iter().map(|t| t.abs()).sum::<f64>() + start[col].to_f64().abs() + cross;
            let tol = 64.0 * eps * scale.max(f64::MIN_POSITIVE);
            assert!(
                (got - want).abs() <= tol,
                "{} side {k} column {col}: {got} vs ∇Cᵀλ = {want} (tolerance {tol})",
                c_.name()
            );
        }
    }
}

/// A user-defined kind: the fixed joint's six rows, written through
/// [`JointRows::push`] from the dense gradient blocks.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PushedFixed;

impl JointKind for PushedFixed {
    const NAME: &'static str = "pushed_fixed";
    const DIM: usize = 6;
    fn write<T: Real, G: LieGroup<T>>(k: &JointKinematics<T, G>, rows: &mut JointRows<'_, T>) {
        rows.push(k.position_error_gradient(), 0..3);
        rows.push(k.rotation_error_gradient(), 0..3);
    }
}

fn all_kinds<T: Real, G: LieGroup<T>>(case: &Case) {
    let norm = |t: [f64; 3]| (t[0] * t[0] + t[1] * t[1] + t[2] * t[2]).sqrt();
    let r = [norm(case.frames[0].0), norm(case.frames[1].0)];
    let l = &case.lambda;
    for world in [None, Some(0), Some(1)] {
        let (b, j) = joint::<T, G, _>(case, world, Fixed::new);
        check(&j, &b, l, true, r);
        let (b, j) = joint::<T, G, _>(case, world, Revolute::new);
        check(&j, &b, l, true, r);
        let (b, j) = joint::<T, G, _>(case, world, Spherical::new);
        check(&j, &b, l, true, r);
        let (b, j) = joint::<T, G, _>(case, world, Prismatic::new);
        check(&j, &b, l, false, r);
        let (b, j) = joint::<T, G, _>(case, world, VectorJoint::<T, G, PushedFixed>::new);
        check(&j, &b, l, false, r);
    }
}

proptest! {
    // Failing cases are kept beside this file (`constraint_force.proptest-regressions`)
    // and replayed before new ones. proptest's default would put them under
    // tests/proptest-regressions/, since this folder has a main.rs.
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn constraint_force_matches_gradient_times_lambda_matrix_f64(k in case()) {
        all_kinds::<f64, SO3Matrix<f64>>(&k);
    }

    #[test]
    fn constraint_force_matches_gradient_times_lambda_quaternion_f64(k in case()) {
        all_kinds::<f64, UnitQuaternion<f64>>(&k);
    }

    #[test]
    fn constraint_force_matches_gradient_times_lambda_matrix_f32(k in case()) {
        all_kinds::<f32, SO3Matrix<f32>>(&k);
    }

    #[test]
    fn constraint_force_matches_gradient_times_lambda_quaternion_f32(k in case()) {
        all_kinds::<f32, UnitQuaternion<f32>>(&k);
    }
}
