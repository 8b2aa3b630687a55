//! Solver tests independent of the joint library: a hand-written constraint exercises
//! the prediction (46)/(48), the row (56) and block (124) projections, compliance, the
//! residuals (51)–(52), and the typed errors of bodies, options and constraints.

use approx::assert_relative_eq;
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::xpbd::{
    Body, BodyId, Constraint, ConstraintEval, SolveMode, SolverOptions, World, XpbdError,
    MAX_BODIES,
};
use nalgebra::Vector3;

/// C = p − target (3 rows): linear in the position update, so one projection of it
/// solves its linearisation exactly.
struct PinPosition<T: Real> {
    body: BodyId,
    target: Vector3<T>,
    compliance: T,
}

impl<T: Real, G: LieGroup<T>> Constraint<T, G> for PinPosition<T> {
    fn name(&self) -> String {
        "pin".into()
    }
    fn dim(&self) -> usize {
        3
    }
    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        [Some(self.body), None]
    }
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        let p = bodies[self.body.0].position - self.target;
        for i in 0..3 {
            out.value[i] = p[i];
            out.gradient[0][(i, i)] = T::one();
        }
    }
    fn compliance(&self, _row: usize) -> T {
        self.compliance
    }
}

/// A 1 kg body with unit inertia at rest at the origin.
fn unit_body<G: LieGroup<f64>>() -> Body<f64, G> {
    Body::dynamic(1.0, Vector3::repeat(1.0), Vector3::zeros(), G::identity()).unwrap()
}

fn options<T: Real>(mode: SolveMode) -> SolverOptions<T> {
    SolverOptions {
        solve_mode: mode,
        ..SolverOptions::default()
    }
}

fn one_body_world<T: Real, G: LieGroup<T>>(
    mode: SolveMode,
    compliance: T,
) -> (World<T, G>, BodyId) {
    let mut w = World::<T, G>::new(options(mode)).unwrap();
    let c = |x: f64| T::cast(x);
    let b = Body::dynamic(
        c(2.0),
        Vector3::new(c(0.1), c(0.2), c(0.3)),
        Vector3::new(c(0.3), c(-0.2), c(0.1)),
        G::exp(&Vector3::new(c(0.4), c(0.1), c(-0.7))),
    )
    .unwrap()
    .with_velocity(
        Vector3::new(c(1.0), c(0.0), c(-2.0)),
        Vector3::new(c(3.0), c(-1.0), c(0.5)),
    )
    .unwrap();
    let id = w.add_body(b).unwrap();
    w.add_constraint(PinPosition {
        body: id,
        target: Vector3::zeros(),
        compliance,
    })
    .unwrap();
    (w, id)
}

#[test]
fn linear_constraint_is_solved_exactly_in_one_block_projection_f64() {
    for mode in [SolveMode::Block, SolveMode::Rows] {
        let (mut w, id) = one_body_world::<f64, SO3Matrix<f64>>(mode, 0.0);
        w.step().unwrap();
        // Hard and linear: C(x) = 0 to round-off after one iteration.
        assert!(w.body(id).unwrap().position.norm() < 1e-15, "{mode:?}");
        let r = w.residuals();
        assert!(r.constraint < 1e-15, "{mode:?}: {r:?}");
        // 𝓜(x − x̃) = ∇Cᵀλ exactly for a linear constraint: primal residual is
        // round-off relative to m|x − x̃| ≈ 2·0.3 = 0.6.
        assert!(r.primal < 1e-14, "{mode:?}: {r:?}");
    }
}

#[test]
fn compliant_linear_constraint_satisfies_c_plus_alpha_tilde_lambda_f64() {
    // α = 1e-6 m/N with Δt = 1e-3 s gives α̃ = 1: the constraint is met only partly,
    // and (52) C + α̃λ = 0 holds exactly after one block projection.
    let (mut w, id) = one_body_world::<f64, SO3Matrix<f64>>(SolveMode::Block, 1e-6);
    w.step().unwrap();
    let p = w.body(id).unwrap().position;
    assert!(
        p.norm() > 1e-3,
        "a compliant constraint must not be met exactly"
    );
    let r = w.residuals();
    assert!(r.constraint < 1e-15 && r.primal < 1e-14, "{r:?}");
    // Closed form: m(p − p̃) = −λ and p + α̃λ = 0 ⇒ p = m p̃/(m + 1/α̃) with α̃ = 1.
    let (pp, _) = w.body(id).unwrap().predicted_pose();
    assert_relative_eq!(p, pp * (2.0 / 3.0), epsilon = 1e-15);
}

#[test]
fn block_and_rows_agree_on_decoupled_rows_quaternion_f32() {
    // The pin's rows are decoupled, so (56) and (124) coincide up to f32 round-off.
    let (mut a, id) = one_body_world::<f32, UnitQuaternion<f32>>(SolveMode::Block, 1e-7);
    let (mut b, _) = one_body_world::<f32, UnitQuaternion<f32>>(SolveMode::Rows, 1e-7);
    for _ in 0..50 {
        a.step().unwrap();
        b.step().unwrap();
    }
    let d = (a.body(id).unwrap().position - b.body(id).unwrap().position).norm();
    assert!(d < 1e-6, "{d}");
}

fn free_fall<T: Real, G: LieGroup<T>>() {
    let mut w = World::<T, G>::new(SolverOptions::default()).unwrap();
    let id = w
        .add_body(
            Body::dynamic(
                T::one(),
                Vector3::repeat(T::one()),
                Vector3::zeros(),
                G::identity(),
            )
            .unwrap(),
        )
        .unwrap();
    for _ in 0..1000 {
        w.step().unwrap();
    }
    // Symplectic Euler: y_n = −g Δt² n(n+1)/2.
    let expected = -9.81 * 1e-6 * 1000.0 * 1001.0 / 2.0;
    let y = w.body(id).unwrap().position.y.to_f64();
    // Round-off: each step rounds p (|p| ≤ 5 m) once, by ≤ ε·5 m; velocities come from
    // the accumulated increments (no cancellation of p − pⁿ), so the drift is bounded
    // by n·ε·|p| with n = 1000 steps: 1.1e-12 m in f64, 6e-4 m in f32 (measured 1.1e-14
    // and 3.2e-5; differencing positions instead gave 2.5e-3 m in f32).
    let tol = 1000.0 * T::default_epsilon().to_f64() * 5.0;
    eprintln!(
        "free fall {}: error {:e} m (tol {tol:e})",
        T::NAME,
        (y - expected).abs()
    );
    assert!((y - expected).abs() < tol, "{y} vs {expected} (tol {tol})");
    assert_relative_eq!(w.time().to_f64(), 1.0, epsilon = 1e-6);
}

#[test]
fn free_fall_matches_symplectic_euler_matrix_f64() {
    free_fall::<f64, SO3Matrix<f64>>();
}

#[test]
fn free_fall_matches_symplectic_euler_quaternion_f32() {
    free_fall::<f32, UnitQuaternion<f32>>();
}

/// Torque-free rotation about a principal axis: ω stays constant and R advances by
/// Exp(ω Δt) per step (the gyroscopic term ω × 𝓘ω vanishes).
fn principal_spin<G: LieGroup<f64>>() {
    let mut w = World::<f64, G>::new(SolverOptions {
        gravity: Vector3::zeros(),
        ..SolverOptions::default()
    })
    .unwrap();
    let omega = Vector3::new(0.0, 0.0, 2.0);
    let b = Body::dynamic(
        1.0,
        Vector3::new(0.1, 0.2, 0.3),
        Vector3::zeros(),
        G::identity(),
    )
    .unwrap()
    .with_velocity(Vector3::zeros(), omega)
    .unwrap();
    let id = w.add_body(b).unwrap();
    for _ in 0..500 {
        w.step().unwrap();
    }
    let body = w.body(id).unwrap();
    // ω = (R ⊟ Rⁿ)/h: Rⁿᵀ R is a product of O(1) entries with absolute error ~ε, so ω
    // carries an absolute error ~10ε/h = 2.2e-12 rad/s at h = 1e-3 s.
    assert_relative_eq!(
        body.angular_velocity,
        omega,
        epsilon = 100.0 * f64::EPSILON / 1e-3
    );
    let expected = G::exp(&(omega * 0.5));
    assert!(body.orientation.boxminus(&expected).norm() < 1e-12);
}

#[test]
fn principal_axis_spin_is_exact_matrix_f64() {
    principal_spin::<SO3Matrix<f64>>();
}

#[test]
fn principal_axis_spin_is_exact_quaternion_f64() {
    principal_spin::<UnitQuaternion<f64>>();
}

#[test]
fn gyroscopic_term_changes_spin_about_intermediate_axis_f64() {
    // Spin mostly about the intermediate axis is unstable (tennis-racket theorem): the
    // body-frame ω must move away from its initial direction. Without the gyroscopic
    // term in (46) it would stay constant.
    let mut w = World::<f64, SO3Matrix<f64>>::new(SolverOptions {
        gravity: Vector3::zeros(),
        ..SolverOptions::default()
    })
    .unwrap();
    let w0 = Vector3::new(1e-3, 5.0, 1e-3);
    let b = Body::dynamic(
        1.0,
        Vector3::new(0.1, 0.2, 0.3),
        Vector3::zeros(),
        SO3Matrix::identity(),
    )
    .unwrap()
    .with_velocity(Vector3::zeros(), w0)
    .unwrap();
    let id = w.add_body(b).unwrap();
    // Growth rate ω√((I₂−I₁)(I₃−I₂)/(I₁I₃)) ≈ 2.9/s: a 1e-3 perturbation reaches O(1)
    // well within 5 s, and the spin about y reverses.
    let mut min_wy = f64::INFINITY;
    for _ in 0..5000 {
        w.step().unwrap();
        min_wy = min_wy.min(w.body(id).unwrap().angular_velocity.y);
    }
    assert!(
        min_wy < 0.0,
        "intermediate-axis spin never reversed: min ω_y = {min_wy}"
    );
}

#[test]
fn bad_body_input_is_a_typed_error() {
    let z = Vector3::<f64>::zeros();
    let r = SO3Matrix::<f64>::identity();
    assert!(matches!(
        Body::dynamic(0.0, Vector3::repeat(1.0), z, r),
        Err(XpbdError::NonPositiveMass { .. })
    ));
    assert!(matches!(
        Body::dynamic(-1.0, Vector3::repeat(1.0), z, r),
        Err(XpbdError::NonPositiveMass { .. })
    ));
    assert!(matches!(
        Body::dynamic(f64::NAN, Vector3::repeat(1.0), z, r),
        Err(XpbdError::NonPositiveMass { .. })
    ));
    assert_eq!(
        Body::dynamic(1.0, Vector3::new(1.0, 0.0, 1.0), z, r).unwrap_err(),
        XpbdError::NonPositiveInertia {
            axis: 1,
            value: 0.0
        }
    );
    assert!(matches!(
        Body::dynamic(1.0, Vector3::new(1.0, 1.0, -2.0), z, r),
        Err(XpbdError::NonPositiveInertia { axis: 2, .. })
    ));
    assert!(matches!(
        Body::dynamic(
            1.0,
            Vector3::repeat(1.0),
            Vector3::new(0.0, f64::INFINITY, 0.0),
            r
        ),
        Err(XpbdError::NonFinite { .. })
    ));
    let b = Body::dynamic(1.0, Vector3::repeat(1.0), z, r).unwrap();
    assert!(matches!(
        b.with_velocity(Vector3::new(f64::NAN, 0.0, 0.0), z),
        Err(XpbdError::NonFinite { .. })
    ));
    let msg = Body::dynamic(-1.0, Vector3::repeat(1.0), z, r)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("mass") && msg.contains("-1"), "{msg}");
}

#[test]
fn bad_solver_options_are_typed_errors() {
    type W = World<f64, SO3Matrix<f64>>;
    let base = SolverOptions::<f64>::default();
    for (opts, name) in [
        (SolverOptions { dt: 0.0, ..base }, "dt"),
        (SolverOptions { dt: -1e-3, ..base }, "dt"),
        (
            SolverOptions {
                dt: f64::NAN,
                ..base
            },
            "dt",
        ),
        (
            SolverOptions {
                substeps: 0,
                ..base
            },
            "substeps",
        ),
        (
            SolverOptions {
                iterations: 0,
                ..base
            },
            "iterations",
        ),
    ] {
        match W::new(opts) {
            Err(XpbdError::InvalidOption { name: n, .. }) => assert_eq!(n, name),
            other => panic!("expected InvalidOption for {name}, got {:?}", other.err()),
        }
    }
    assert!(matches!(
        W::new(SolverOptions {
            gravity: Vector3::new(0.0, f64::NAN, 0.0),
            ..base
        }),
        Err(XpbdError::NonFinite { .. })
    ));
}

#[test]
fn bad_constraints_are_typed_errors() {
    let mut w = World::<f64, SO3Matrix<f64>>::new(SolverOptions::default()).unwrap();
    let err = w
        .add_constraint(PinPosition {
            body: BodyId(3),
            target: Vector3::zeros(),
            compliance: 0.0,
        })
        .unwrap_err();
    assert_eq!(
        err,
        XpbdError::UnknownBody {
            constraint: "pin".into(),
            body: 3,
            count: 0
        }
    );
    let id = w.add_body(unit_body()).unwrap();
    assert!(matches!(
        w.add_constraint(PinPosition {
            body: id,
            target: Vector3::zeros(),
            compliance: -1.0
        }),
        Err(XpbdError::BadCompliance { row: 0, .. })
    ));
    assert!(matches!(
        w.add_constraint(PinPosition {
            body: id,
            target: Vector3::zeros(),
            compliance: f64::NAN
        }),
        Err(XpbdError::BadCompliance { .. })
    ));
    // Reported by a user: α = 1e308 is finite, but α/h² overflows at the default
    // substep and the run diverged at once; it is rejected when added.
    let h = SolverOptions::<f64>::default().substep_dt();
    assert!((1e308 / (h * h)).is_infinite());
    assert!(matches!(
        w.add_constraint(PinPosition {
            body: id,
            target: Vector3::zeros(),
            compliance: 1e308
        }),
        Err(XpbdError::BadCompliance { row: 0, .. })
    ));
    // The largest accepted compliance keeps α/h² finite.
    assert!(w
        .add_constraint(PinPosition {
            body: id,
            target: Vector3::zeros(),
            compliance: 1e300 * h * h
        })
        .is_ok());
}

#[test]
fn non_finite_force_is_reported_as_divergence_not_a_panic() {
    let mut w = World::<f64, UnitQuaternion<f64>>::new(SolverOptions::default()).unwrap();
    let id = w
        .add_body(
            Body::dynamic(
                1.0,
                Vector3::repeat(1.0),
                Vector3::zeros(),
                UnitQuaternion::identity(),
            )
            .unwrap(),
        )
        .unwrap();
    w.step().unwrap();
    w.body_mut(id).unwrap().force = Vector3::new(f64::NAN, 0.0, 0.0);
    match w.step() {
        Err(XpbdError::Diverged { body, time }) => {
            assert_eq!(body, 0);
            assert_relative_eq!(time, 2e-3, epsilon = 1e-12);
        }
        other => panic!("expected Diverged, got {other:?}"),
    }
}

#[test]
fn adding_a_non_finite_body_is_rejected() {
    let mut w = World::<f64, SO3Matrix<f64>>::new(SolverOptions::default()).unwrap();
    let mut b = Body::dynamic(
        1.0,
        Vector3::repeat(1.0),
        Vector3::zeros(),
        SO3Matrix::identity(),
    )
    .unwrap();
    b.torque = Vector3::new(0.0, 0.0, f64::INFINITY);
    assert!(matches!(w.add_body(b), Err(XpbdError::NonFinite { .. })));
}

/// C = y ≥ 0: a floor as an inequality row with λ ∈ [0, ∞) (the extension point for
/// limits and contacts).
struct Floor {
    body: BodyId,
    bounds: (f64, f64),
}

impl<G: LieGroup<f64>> Constraint<f64, G> for Floor {
    fn name(&self) -> String {
        "floor".into()
    }
    fn dim(&self) -> usize {
        1
    }
    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        [Some(self.body), None]
    }
    fn evaluate(&self, bodies: &[Body<f64, G>], out: &mut ConstraintEval<f64>) {
        out.value[0] = bodies[self.body.0].position.y;
        out.gradient[0][(0, 1)] = 1.0;
    }
    fn compliance(&self, _row: usize) -> f64 {
        0.0
    }
    fn lambda_bounds(&self, _row: usize) -> (f64, f64) {
        self.bounds
    }
}

#[test]
fn inequality_row_only_pushes_when_violated() {
    let mut w = World::<f64, SO3Matrix<f64>>::new(SolverOptions::default()).unwrap();
    let b = Body::dynamic(
        1.0,
        Vector3::repeat(1.0),
        Vector3::new(0.0, 0.05, 0.0),
        SO3Matrix::identity(),
    )
    .unwrap();
    let id = w.add_body(b).unwrap();
    let floor = w
        .add_constraint(Floor {
            body: id,
            bounds: (0.0, f64::INFINITY),
        })
        .unwrap();
    // Free fall while above the floor: λ stays 0, motion is unconstrained.
    for _ in 0..50 {
        w.step().unwrap();
        if w.body(id).unwrap().position.y > 1e-3 {
            assert_eq!(w.lambda(floor).unwrap()[0], 0.0);
        }
    }
    // After landing the body rests on the floor (y = 0 to round-off), λ ≥ 0 holds it.
    for _ in 0..200 {
        w.step().unwrap();
    }
    let y = w.body(id).unwrap().position.y;
    assert!(y.abs() < 1e-12, "y = {y}");
    assert!(w.lambda(floor).unwrap()[0] > 0.0);
    // λ = m g h² per substep for a body at rest on the floor.
    approx::assert_relative_eq!(w.lambda(floor).unwrap()[0], 9.81e-6, epsilon = 1e-12);
}

#[test]
fn lambda_bounds_that_exclude_zero_are_rejected() {
    let mut w = World::<f64, SO3Matrix<f64>>::new(SolverOptions::default()).unwrap();
    let id = w.add_body(unit_body()).unwrap();
    for bounds in [(1.0, 2.0), (-2.0, -1.0), (f64::NAN, 1.0), (1.0, -1.0)] {
        assert!(
            matches!(
                w.add_constraint(Floor { body: id, bounds }),
                Err(XpbdError::InvalidOption {
                    name: "lambda_bounds",
                    ..
                })
            ),
            "{bounds:?}"
        );
    }
}

#[test]
fn constraint_between_fixed_bodies_only_is_rejected() {
    let mut w = World::<f64, SO3Matrix<f64>>::new(SolverOptions::default()).unwrap();
    let id = w
        .add_body(Body::fixed(Vector3::zeros(), SO3Matrix::identity()).unwrap())
        .unwrap();
    let err = w
        .add_constraint(PinPosition {
            body: id,
            target: Vector3::zeros(),
            compliance: 0.0,
        })
        .unwrap_err();
    assert_eq!(
        err,
        XpbdError::NoDynamicBody {
            constraint: "pin".into()
        }
    );
    assert!(err.to_string().contains("no dynamic body"));
}

#[test]
fn masses_with_non_finite_inverse_are_rejected() {
    let z = Vector3::<f64>::zeros();
    let r = SO3Matrix::<f64>::identity();
    // Subnormal: positive and finite, but 1/m overflows.
    assert!(matches!(
        Body::dynamic(1e-320, Vector3::repeat(1.0), z, r),
        Err(XpbdError::NonPositiveMass { .. })
    ));
    assert!(matches!(
        Body::dynamic(1.0, Vector3::new(1.0, 1e-320, 1.0), z, r),
        Err(XpbdError::NonPositiveInertia { axis: 1, .. })
    ));
    assert!(matches!(
        Body::dynamic(
            1e-40_f32,
            Vector3::repeat(1.0_f32),
            Vector3::zeros(),
            SO3Matrix::<f32>::identity()
        ),
        Err(XpbdError::NonPositiveMass { .. })
    ));
}

/// Review regression: a principal inertia that no rigid body has (I₃ > I₁ + I₂) was
/// accepted by `Body::dynamic`; scene files already rejected it.
#[test]
fn non_physical_inertia_is_rejected() {
    let z = Vector3::<f64>::zeros();
    let r = SO3Matrix::<f64>::identity();
    let err = Body::dynamic(1.0, Vector3::new(1.0, 1.0, 3.0), z, r).unwrap_err();
    assert!(matches!(err, XpbdError::NonPhysicalInertia { .. }), "{err}");
    assert!(err.to_string().contains("I₁ + I₂ ≥ I₃"), "{err}");
    // A thin rod (I₁ = I₂, I₃ → 0) and the limit I₃ = I₁ + I₂ (a flat plate) are fine.
    assert!(Body::dynamic(1.0, Vector3::new(1.0, 1.0, 1e-12), z, r).is_ok());
    assert!(Body::dynamic(1.0, Vector3::new(1.0, 2.0, 3.0), z, r).is_ok());
}

/// Review regression: an orientation built without validation from a non-unit
/// quaternion (norm 2) was accepted, and every rotation then scaled vectors by 4.
#[test]
fn orientation_that_is_not_a_rotation_is_rejected() {
    let q = UnitQuaternion::new_unchecked(nalgebra::Quaternion::new(2.0, 0.0, 0.0, 0.0));
    let err = Body::dynamic(1.0, Vector3::repeat(1.0), Vector3::zeros(), q).unwrap_err();
    assert!(matches!(err, XpbdError::NotARotation(_)), "{err}");
    let m = SO3Matrix::from_matrix_unchecked(nalgebra::Matrix3::new(
        1.0, 0.1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0,
    ));
    assert!(matches!(
        Body::fixed(Vector3::<f64>::zeros(), m),
        Err(XpbdError::NotARotation(_))
    ));
}

/// Regression: after a step that returned `Diverged`, `residuals()` gave a finite
/// constraint residual (0: the pin acts on a second, finite body, and no row touches
/// the diverged one) and a primal residual from the finite parts. Both must be NaN.
fn residuals_after_divergence<T: Real, G: LieGroup<T>>() {
    let (mut w, _) = one_body_world::<T, G>(SolveMode::Block, T::zero());
    let free = w
        .add_body(
            Body::dynamic(
                T::one(),
                Vector3::repeat(T::one()),
                Vector3::zeros(),
                G::identity(),
            )
            .unwrap(),
        )
        .unwrap();
    w.step().unwrap();
    let before = w.residuals();
    assert!(before.primal.to_f64().is_finite() && before.constraint.to_f64().is_finite());
    w.body_mut(free).unwrap().force = Vector3::new(T::cast(f64::INFINITY), T::zero(), T::zero());
    assert!(matches!(w.step(), Err(XpbdError::Diverged { body: 1, .. })));
    let r = w.residuals();
    let (primal, constraint) = (r.primal.to_f64(), r.constraint.to_f64());
    assert!(primal.is_nan(), "primal residual {primal} after divergence");
    assert!(
        constraint.is_nan(),
        "constraint residual {constraint} after divergence"
    );
    // Reported by a user: once a divergence had made an orientation non-finite, the
    // next step blamed the user ("orientation was set to a value that is not a
    // rotation"); every further step reports the divergence.
    w.body_mut(free).unwrap().angular_velocity = Vector3::repeat(T::cast(f64::NAN));
    for _ in 0..2 {
        let err = w.step().unwrap_err();
        assert!(matches!(err, XpbdError::Diverged { body: 1, .. }), "{err}");
    }
}

#[test]
fn residuals_are_nan_after_divergence_matrix_f64() {
    residuals_after_divergence::<f64, SO3Matrix<f64>>();
}

#[test]
fn residuals_are_nan_after_divergence_quaternion_f32() {
    residuals_after_divergence::<f32, UnitQuaternion<f32>>();
}

/// New-user finding: an orientation that is not a rotation, written into the public
/// `Body::orientation` between steps, was simulated as if it were one (a quaternion of
/// norm 2 scales every rotated vector by 4). `World::step` checks orientations the user
/// changed and refuses with `BodyNotARotation`, leaving the state as it was; a valid
/// change steps as before.
#[test]
fn step_rejects_an_orientation_set_to_a_non_rotation() {
    // Quaternions: norm 2, and NaN.
    let (mut w, id) = one_body_world::<f64, UnitQuaternion<f64>>(SolveMode::Block, 0.0);
    w.step().unwrap();
    let before = *w.body(id).unwrap();
    for q in [
        nalgebra::Quaternion::new(2.0, 0.0, 0.0, 0.0),
        nalgebra::Quaternion::new(f64::NAN, 0.0, 0.0, 0.0),
    ] {
        w.body_mut(id).unwrap().orientation = UnitQuaternion::new_unchecked(q);
        let err = w.step().unwrap_err();
        assert!(
            matches!(err, XpbdError::BodyNotARotation { body: 0, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("body 0 orientation"), "{err}");
        assert_eq!(w.steps(), 1, "no step was taken");
        assert_eq!(w.body(id).unwrap().position, before.position);
    }
    // A rotation set by the user is used.
    let turned = <UnitQuaternion<f64> as LieGroup<f64>>::exp(&Vector3::new(0.0, 0.0, 1.0));
    w.body_mut(id).unwrap().orientation = turned;
    w.step().unwrap();
    assert_eq!(w.steps(), 2);
    // Matrices: a shear.
    let (mut w, id) = one_body_world::<f32, SO3Matrix<f32>>(SolveMode::Rows, 0.0);
    w.body_mut(id).unwrap().orientation = SO3Matrix::from_matrix_unchecked(nalgebra::Matrix3::new(
        1.0, 0.1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0,
    ));
    let err = w.step().unwrap_err();
    assert!(
        matches!(
            err,
            XpbdError::BodyNotARotation {
                body: 0,
                source: lie_xpbd::lie::LieError::NotOrthogonal { .. }
            }
        ),
        "{err}"
    );
    assert_eq!(w.steps(), 0);
}
