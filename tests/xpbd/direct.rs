//! Direct groups of constraints ([`World::add_direct_group`], module
//! `lie_xpbd::xpbd::world::direct`): agreement with the Gauss–Seidel projection where
//! both are exact (one constraint), redundant rows (a singular system), a NaN
//! constraint, breaking inside a group, the errors of `add_direct_group`, and no heap
//! allocation in a steady-state step. The limited chain is in `tests/joint/chain_direct.rs`.

use lie_xpbd::joint::{Fixed, JointFrame, Revolute, RevoluteLimit, Spherical};
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::xpbd::{
    Body, BodyId, BreakLimits, Constraint, ConstraintEval, ConstraintId, SolverOptions, World,
    XpbdError, MAX_BODIES,
};
use nalgebra::Vector3;

use crate::alloc_counter;
use alloc_counter::allocations;

type M64 = SO3Matrix<f64>;
type Q64 = UnitQuaternion<f64>;
type M32 = SO3Matrix<f32>;
type Q32 = UnitQuaternion<f32>;

fn v<T: Real>(x: f64, y: f64, z: f64) -> Vector3<T> {
    Vector3::new(c(x), c(y), c(z))
}

/// The joint of [`pendulum`].
#[derive(Debug, Clone, Copy, PartialEq)]
enum Joint {
    Revolute,
    Spherical,
    Fixed,
    /// A revolute limit (one inequality row, ±0.5 rad) and nothing else.
    LimitOnly,
}

/// A 1 kg body (inertia (0.02, 0.03, 0.04) kg·m²) hanging from the world by `joint` at
/// its point (0, 0.5, 0), released at 1.2 rad about z with (0.3, 0.2, 1) rad/s (so
/// that every row is exercised), Δt = 1e-3 s, `iterations` per substep; with the
/// constraint in a direct group if `direct`.
fn pendulum<T: Real, G: LieGroup<T>>(joint: Joint, direct: bool, iterations: usize) -> World<T, G> {
    let options = SolverOptions {
        iterations,
        ..SolverOptions::default()
    };
    let mut w = World::<T, G>::new(options).unwrap();
    let r = G::exp(&v(0.0, 0.0, 1.2));
    let jp = v::<T>(0.0, 0.5, 0.0);
    let body = Body::dynamic(c(1.0), v(0.02, 0.03, 0.04), -r.act(&jp), r)
        .unwrap()
        .with_velocity(v(0.0, 0.0, 0.0), v(0.3, 0.2, 1.0))
        .unwrap();
    let id = w.add_body(body).unwrap();
    let (f0, f1) = (JointFrame::identity(), JointFrame::at(jp));
    let k = match joint {
        Joint::Revolute => w.add_constraint(Revolute::new(None, f0, Some(id), f1).unwrap()),
        Joint::Spherical => w.add_constraint(Spherical::new(None, f0, Some(id), f1).unwrap()),
        Joint::Fixed => w.add_constraint(Fixed::new(None, f0, Some(id), f1).unwrap()),
        Joint::LimitOnly => {
            w.add_constraint(RevoluteLimit::new(None, f0, Some(id), f1, c(-0.5), c(0.5)).unwrap())
        }
    }
    .unwrap();
    if direct {
        w.add_direct_group(&[k]).unwrap();
    }
    w
}

/// Largest distance between the two worlds' body positions (m) and orientations
/// (|R_a ⊟ R_b|, rad) over [`STEPS`] steps.
fn difference<T: Real, G: LieGroup<T>>(joint: Joint, iterations: usize) -> (f64, f64) {
    let mut gs = pendulum::<T, G>(joint, false, iterations);
    let mut direct = pendulum::<T, G>(joint, true, iterations);
    let (mut dp, mut dr) = (0.0f64, 0.0f64);
    for _ in 0..STEPS {
        gs.step().unwrap();
        direct.step().unwrap();
        let (a, b) = (&gs.bodies()[0], &direct.bodies()[0]);
        dp = dp.max((a.position - b.position).norm().to_f64());
        dr = dr.max(a.orientation.boxminus(&b.orientation).norm().to_f64());
    }
    (dp, dr)
}

/// Steps of [`difference`].
const STEPS: usize = 1000;

/// One constraint: its block projection (124) (rows (56) for the limit) and its direct
/// group solve the same equations exactly, so the runs differ only by the rounding of a
/// differently ordered assembly.
///
/// Tolerance: a difference of a few ε in the state after one step is a difference of a
/// few ε/h in the velocity the velocity update (Alg. 1 line 10) reads back from it, so
/// it grows linearly with the number of steps: 4ε·STEPS (8.9e-13 in f64, 4.8e-4 in
/// f32). Measured over 1000 steps: ≤ 4e-15 in f64; in f32 ≤ 9e-7 for the joints and
/// 3.0e-5 rad for the limit alone, whose body rotates freely, so its one-ulp
/// difference at the first limit contact (3e-8 rad) grows linearly to 2e-5 rad at
/// step 654 (doubling every time the step count doubles).
fn same_as_gauss_seidel<T: Real, G: LieGroup<T>>() {
    let tol = 4.0 * T::default_epsilon().to_f64() * STEPS as f64;
    for joint in [
        Joint::Revolute,
        Joint::Spherical,
        Joint::Fixed,
        Joint::LimitOnly,
    ] {
        for iterations in [1, 3] {
            let (dp, dr) = difference::<T, G>(joint, iterations);
            eprintln!(
                "{joint:?} {} {} {iterations} it: |Δp| {dp:.2e} m, |ΔR| {dr:.2e} rad",
                G::NAME,
                T::NAME
            );
            assert!(
                dp <= tol && dr <= tol,
                "{joint:?} {iterations}: {dp:e} {dr:e}"
            );
        }
    }
}

#[test]
fn one_constraint_matches_gauss_seidel_matrix_f64() {
    same_as_gauss_seidel::<f64, M64>();
}

#[test]
fn one_constraint_matches_gauss_seidel_quaternion_f64() {
    same_as_gauss_seidel::<f64, Q64>();
}

#[test]
fn one_constraint_matches_gauss_seidel_matrix_f32() {
    same_as_gauss_seidel::<f32, M32>();
}

#[test]
fn one_constraint_matches_gauss_seidel_quaternion_f32() {
    same_as_gauss_seidel::<f32, Q32>();
}

// ---------------------------------------------------------------------------------
// Redundant rows: a singular system.
// ---------------------------------------------------------------------------------

/// The revolute pendulum of [`pendulum`] with its hinge given twice (two constraints,
/// the same rows) in one group, against the hinge once. A = ∇C𝓜⁻¹∇Cᵀ is then singular
/// (rank 5 of 10), the Cholesky factorisation fails and the group solves with the
/// regularised diagonal (module docs: singular systems). The step Δx only depends on
/// the part of the right-hand side in the range of A, so the motion is the same as
/// with one hinge up to the regularisation's damping of that range (ε_r = 1024ε
/// relative to the diagonal) and rounding, and the two copies' λ add up to the single
/// hinge's (how they share it is the null space of A, which the regularisation
/// leaves to rounding).
///
/// Tolerances: `tol` on |Δp| (m); on λ_a + λ_b − λ relative to max |λ|,
/// 100ε·(0.5 m)/(g h²): λ is the step's correction of about g h² = 1e-5 m (times the
/// mass), which is known only to the rounding ε·0.5 m of the state, so its relative
/// precision is ε·0.5/(g h²) (1.1e-11 in f64, 6e-3 in f32).
fn redundant<T: Real, G: LieGroup<T>>(tol: f64) {
    let tol_lambda = 100.0 * T::default_epsilon().to_f64() * 0.5 / (9.81 * 1e-6);
    let mut single = pendulum::<T, G>(Joint::Revolute, true, 3);
    let options = SolverOptions {
        iterations: 3,
        ..SolverOptions::default()
    };
    let mut twice = World::<T, G>::new(options).unwrap();
    let body = single.bodies()[0];
    let id = twice.add_body(body).unwrap();
    let jp = v::<T>(0.0, 0.5, 0.0);
    let hinge = Revolute::new(None, JointFrame::identity(), Some(id), JointFrame::at(jp)).unwrap();
    let a = twice.add_constraint(hinge).unwrap();
    let b = twice.add_constraint(hinge).unwrap();
    let g = twice.add_direct_group(&[a, b]).unwrap();
    let (mut dp, mut dl) = (0.0f64, 0.0f64);
    for _ in 0..STEPS {
        single.step().unwrap();
        twice.step().unwrap();
        assert!(twice.bodies()[0].is_finite());
        let d = single.bodies()[0].position - twice.bodies()[0].position;
        dp = dp.max(d.norm().to_f64());
        let l1 = single.lambda(ConstraintId(0)).unwrap();
        let (la, lb) = (twice.lambda(a).unwrap(), twice.lambda(b).unwrap());
        let scale = l1.iter().fold(0.0f64, |m, x| m.max(x.to_f64().abs()));
        for j in 0..5 {
            let sum = la[j].to_f64() + lb[j].to_f64();
            dl = dl.max((sum - l1[j].to_f64()).abs() / scale);
        }
    }
    let stats = twice.direct_group_stats(g).unwrap();
    eprintln!(
        "redundant {} {}: |Δp| {dp:.2e} m, λ_a + λ_b − λ relative to max |λ| {dl:.2e}, {stats:?}",
        G::NAME,
        T::NAME
    );
    assert!(stats.regularized > 0, "the system was not singular");
    assert_eq!(stats.failed, 0);
    assert!(dp <= tol && dl <= tol_lambda, "{dp:e} {dl:e}");
}

// |Δp| tolerances: 4ε·STEPS as in `same_as_gauss_seidel` (measured 3.1e-16 m in f64,
// 1.2e-7 m in f32); λ: measured 6.1e-11 (f64) and 5.9e-2 (f32) of max |λ|.
#[test]
fn redundant_rows_are_regularised_matrix_f64() {
    redundant::<f64, M64>(4.0 * f64::EPSILON * STEPS as f64);
}

#[test]
fn redundant_rows_are_regularised_quaternion_f32() {
    redundant::<f32, Q32>(4.0 * f32::EPSILON as f64 * STEPS as f64);
}

// ---------------------------------------------------------------------------------
// A constraint that evaluates to NaN.
// ---------------------------------------------------------------------------------

/// One row on one body whose value is NaN.
struct NanRow(BodyId);

impl<T: Real, G: LieGroup<T>> Constraint<T, G> for NanRow {
    fn name(&self) -> String {
        "nan".into()
    }
    fn dim(&self) -> usize {
        1
    }
    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        [Some(self.0), None]
    }
    fn evaluate(&self, _bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        out.value[0] = c(f64::NAN);
        out.gradient[0][(0, 1)] = T::one();
    }
    fn compliance(&self, _row: usize) -> T {
        T::zero()
    }
}

/// The group changes nothing, the state stays finite and the step says why.
fn nan_constraint<T: Real, G: LieGroup<T>>() {
    let mut w = pendulum::<T, G>(Joint::Revolute, false, 1);
    let nan = w.add_constraint(NanRow(BodyId(0))).unwrap();
    w.add_direct_group(&[ConstraintId(0), nan]).unwrap();
    let before = w.bodies()[0].position;
    match w.step() {
        Err(XpbdError::DirectSolveFailed { group, reason, .. }) => {
            assert_eq!(group, 0);
            eprintln!("{reason}");
        }
        other => panic!("expected DirectSolveFailed, got {other:?}"),
    }
    let body = &w.bodies()[0];
    assert!(body.is_finite());
    // Only the inertial prediction moved the body (gravity over one step).
    assert!((body.position - before).norm().to_f64() < 1e-4);
    assert!(w.lambda(nan).unwrap()[0].is_finite());
}

#[test]
fn nan_constraint_is_reported_not_written_matrix_f64() {
    nan_constraint::<f64, M64>();
}

#[test]
fn nan_constraint_is_reported_not_written_quaternion_f32() {
    nan_constraint::<f32, Q32>();
}

// ---------------------------------------------------------------------------------
// Breaking inside a group.
// ---------------------------------------------------------------------------------

/// A grouped hinge that breaks at 1 N (the 1 kg pendulum pulls with about 10 N): it
/// breaks in the first substep, its rows leave the group's system, and the body then
/// falls freely: v_y falls by g·Δt per step.
#[test]
fn grouped_joint_breaks() {
    let mut w = pendulum::<f64, M64>(Joint::Revolute, true, 3);
    w.set_break_limits(
        ConstraintId(0),
        BreakLimits {
            max_force: 1.0,
            max_torque: f64::INFINITY,
            force_rows: [true, true, true, false, false, false],
            torque_rows: [false; 6],
            dependents: vec![],
        },
    )
    .unwrap();
    w.step().unwrap();
    assert_eq!(w.breaks().len(), 1);
    assert_eq!(w.is_enabled(ConstraintId(0)), Some(false));
    let v0 = w.bodies()[0].velocity;
    for _ in 0..100 {
        w.step().unwrap();
    }
    let dv = w.bodies()[0].velocity - v0;
    assert!(
        (dv - Vector3::new(0.0, -9.81 * 0.1, 0.0)).norm() < 1e-12,
        "{dv:?}"
    );
}

// ---------------------------------------------------------------------------------
// Errors.
// ---------------------------------------------------------------------------------

#[test]
fn add_direct_group_errors() {
    let mut w = pendulum::<f64, M64>(Joint::Revolute, false, 1);
    assert!(matches!(
        w.add_direct_group(&[]),
        Err(XpbdError::InvalidOption {
            name: "direct group",
            ..
        })
    ));
    let e = w.add_direct_group(&[ConstraintId(0), ConstraintId(7)]);
    assert!(
        matches!(
            e,
            Err(XpbdError::BadGroupMember {
                index: 1,
                constraint: 7,
                ..
            })
        ),
        "{e:?}"
    );
    let e = w.add_direct_group(&[ConstraintId(0), ConstraintId(0)]);
    assert!(
        matches!(
            e,
            Err(XpbdError::BadGroupMember {
                index: 1,
                constraint: 0,
                reason: "given twice"
            })
        ),
        "{e:?}"
    );
    assert_eq!(w.direct_group_count(), 0);
    let g = w.add_direct_group(&[ConstraintId(0)]).unwrap();
    assert_eq!(w.direct_group_members(g), Some(&[ConstraintId(0)][..]));
    let e = w.add_direct_group(&[ConstraintId(0)]);
    assert!(
        matches!(
            e,
            Err(XpbdError::BadGroupMember {
                index: 0,
                constraint: 0,
                reason: "already in a direct group"
            })
        ),
        "{e:?}"
    );
    let stats = w.direct_group_stats(g).unwrap();
    assert_eq!((stats.rows, stats.blocks, stats.bandwidth), (5, 1, 0));
    // The messages say what and where.
    let msg = e.unwrap_err().to_string();
    assert!(
        msg.contains("constraint 0") && msg.contains("already"),
        "{msg}"
    );
}

// ---------------------------------------------------------------------------------
// No heap allocation in a steady-state step.
// ---------------------------------------------------------------------------------

/// A 4-link chain of revolute joints with ±30° limits (0.1 m links, alternating 1 kg
/// and 1000 kg), all in one direct group, released horizontally: 10 warm-up steps of
/// 1/60 s, then the allocations of 300 steps (the limits engage and release during
/// them, so the active set changes).
fn chain_allocations<T: Real, G: LieGroup<T>>() -> u64 {
    let options = SolverOptions {
        dt: c(1.0 / 60.0),
        iterations: 3,
        ..SolverOptions::default()
    };
    let mut w = World::<T, G>::new(options).unwrap();
    let mut ids = Vec::new();
    let mut prev = None;
    let (plus, minus) = (
        JointFrame::<T, G>::at(v(0.05, 0.0, 0.0)),
        JointFrame::<T, G>::at(v(-0.05, 0.0, 0.0)),
    );
    for i in 0..4 {
        let m = [1.0, 1000.0][i % 2];
        let body = Body::dynamic(
            c(m),
            v(m * 8e-4 / 12.0, m * 0.0104 / 12.0, m * 0.0104 / 12.0),
            v((i as f64 + 0.5) * 0.1, 0.0, 0.0),
            G::identity(),
        )
        .unwrap();
        let id = w.add_body(body).unwrap();
        let (b1, f1) = match prev {
            None => (None, JointFrame::identity()),
            Some(p) => (Some(p), plus),
        };
        ids.push(
            w.add_constraint(Revolute::new(b1, f1, Some(id), minus).unwrap())
                .unwrap(),
        );
        let limit = RevoluteLimit::new(
            b1,
            f1,
            Some(id),
            minus,
            c(-std::f64::consts::FRAC_PI_6),
            c(std::f64::consts::FRAC_PI_6),
        )
        .unwrap();
        ids.push(w.add_constraint(limit).unwrap());
        prev = Some(id);
    }
    let g = w.add_direct_group(&ids).unwrap();
    for _ in 0..10 {
        w.step().unwrap();
    }
    let before = allocations();
    for _ in 0..300 {
        w.step().unwrap();
    }
    let n = allocations() - before;
    let stats = w.direct_group_stats(g).unwrap();
    assert!(
        stats.solves > stats.projections,
        "the active set never changed"
    );
    n
}

#[test]
fn direct_group_step_does_not_allocate() {
    assert_eq!(chain_allocations::<f64, M64>(), 0);
    assert_eq!(chain_allocations::<f64, Q64>(), 0);
    assert_eq!(chain_allocations::<f32, M32>(), 0);
    assert_eq!(chain_allocations::<f32, Q32>(), 0);
}
