//! The toolkit operations added next to the paper's blocks — act w.r.t. the point, the
//! adjoint, `between`, left (world-frame) ⊞/⊟, geodesic interpolation, the left Jacobian
//! Jl and its inverse, and the ℝ³ × SO(3) [`Pose`] with its (59)-layout ⊞/⊟ and point
//! maps — against central finite differences, for all four combinations
//! SO3Matrix / UnitQuaternion × f32 / f64 (derivations in `proofs/`, one file per family,
//! listed in `proofs/README.md`).
//!
//! Every derivative with respect to a rotation is taken with body-frame (right)
//! perturbations `R ⊞ δ`, and rotation-valued outputs are compared in the body frame of the
//! output (`numdiff::rotation_to_rotation`, `numdiff::vector_to_rotation`,
//! `numdiff::pose_to_pose`). The exceptions are the left Jacobian and its inverse, whose
//! finite differences are written out below with world-frame (left) perturbations — of
//! the output of Exp for Jl, of the input of Log for Jl⁻¹ — which is what they describe.
//!
//! # Tolerances
//! **Finite differences.** Every FD check uses step `h = T::fd_step()` and passes if
//! `numdiff::max_relative_error(analytic, fd) ≤ T::fd_tolerance()`, the same criterion as
//! `tests/lie/jacobians.rs` (whose module docs and `Real::fd_tolerance` explain the
//! values): a central difference has truncation error ≈ h²/6·|f'''| and round-off
//! ≈ ε·|f|/h. In f64 (h = 1e-5, tol = 1e-7) both are ≈ 1e-10 for unit derivatives and the
//! tolerance leaves a factor ~100–1000 for larger third derivatives (Exp and Γ at |θ| up
//! to 10 rad, Γ⁻¹ near π, t up to 1.5 in interpolate); in f32 (h = 1e-3, tol = 2e-3 ≈
//! 16·ε/h) round-off dominates and the tolerance covers the handful of rounded products
//! in one difference. Nothing here is looser than in `jacobians.rs`.
//!
//! Whenever a Log of a rotation that is *not* close to the identity is differenced —
//! `boxminus_left`, `interpolate` (through `b ⊟ a`), `Pose::boxminus`, and the world-frame
//! Log of the Jl⁻¹ check — that rotation's angle stays ≤ π − 10h (harness
//! `fd_max_angle`), so the ±h perturbations never cross Log's branch cut at π. Checks that
//! only take Log of small relative rotations (act, between, left ⊞, Pose ⊞, the point
//! maps, the Jl check) use any rotation, π included, and rotation vectors up to 10 rad
//! where Exp or Γ of a free vector is involved.
//!
//! **Identities** (adjoint, Jl = Exp(θ)Γ(θ) = Γ(θ)ᵀ, Jl·Jl⁻¹ = I, the exact values of
//! interpolate at b = a) are round-off bounds `k·ε` on a relative error, ε =
//! `T::default_epsilon()`, as in `tests/lie/identities.rs`: each side is a short chain of
//! rounded products with no cancellation the implementation does not avoid. Each `K_*`
//! constant below states the worst error measured with `PROPTEST_CASES=20000`; the
//! factors are 4–10× that.
//!
//! **No NaN.** `interpolate` and its three Jacobians are also evaluated at b = a exactly
//! and at b = a ⊞ φ with |φ| ∈ [1e-9, 1e-3] rad, for t ∈ [−0.5, 1.5] including exactly 0
//! and 1, and every entry of the value and of the Jacobians must be finite.
//!
//! Measured worst `max_relative_error` of the FD checks (`[lie-report]` lines of
//! `cargo test --release --test lie toolkit_jacobians:: -- --nocapture`,
//! `PROPTEST_CASES=20000`): f64 2.0e-10 (0.002·tol, Pose ⊟ w.r.t. X₂); f32 1.07e-3
//! (0.54·tol, `jacobian_boxplus_left_rhs`, quaternion, |θ| up to 10 rad). With 200000
//! cases per f32 test the f32 worst is 1.14e-3 (0.57·tol, Pose ⊟ w.r.t. X₂, matrix), the
//! same as the worst of `jacobians.rs` (⊟ at relative angles near π, where Γ⁻¹ has
//! entries ≈ 2 and multiplies the ~10ε round-off of the differenced Logs, divided by 2h),
//! so the f32 tolerance is not flaky at the default 256 cases.

use crate::lie_harness;

use lie_harness::*;
use lie_xpbd::lie::numdiff;
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::so3::{
    exp_matrix, left_jacobian, left_jacobian_inv, log_matrix, right_jacobian, right_jacobian_inv,
};
use lie_xpbd::lie::{LieGroup, Pose, Real, SO3Matrix, UnitQuaternion};
use nalgebra::{DMatrix, DVector, Matrix3, Matrix6, Vector3, Vector6};
use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Union};

// ------------------------------------------------------------ tolerances (in units of ε)

/// R·Exp(θ)·Rᵀ = Exp(Ad θ) and R·Exp(θ) = Exp(Ad θ)·R, max-abs entry of the matrix
/// difference divided by max(1, |θ|) (rounding Ad·θ moves the rotation vector by ~ε|θ|),
/// |θ| ≤ 10 rad. Measured worst: 9.5ε (f32; 10ε with 200000 cases), 9.0ε (f64).
const K_ADJOINT: f64 = 64.0;
/// Ad(R₁R₂) = Ad(R₁)Ad(R₂), relative: one product of rotation matrices (and, for
/// quaternions, one quaternion product and two conversions). Measured worst 2.7ε.
const K_ADJOINT_HOM: f64 = 16.0;
/// Jl(θ) = Exp(θ)Γ(θ), relative, |θ| ≤ 10 rad (Jl = Γᵀ and Jl = Γ(−θ) are exact: the
/// same coefficients with the sign of θ̂ flipped). Measured worst 4.4ε (f32 and f64).
const K_LEFT: f64 = 32.0;
/// Jl(θ)Jl⁻¹(θ) = I, |θ| ≤ 3 rad, relative to ‖Jl‖·‖Jl⁻¹‖ (as K_GAMMA_INV in
/// identities.rs). Measured worst 3.2ε (f32), 3.7ε (f64).
const K_LEFT_INV: f64 = 32.0;
/// interpolate(a, a, t) = a, and its Jacobians at b = a: (1 − t)I, tI, 0 (exact for
/// matrices; for quaternions a*·a is the identity only to round-off). Measured worst
/// 1.3ε.
const K_INTERP_SAME: f64 = 8.0;
/// D_a + D_b = I for interpolate, relative (a dozen rounded products of entries up to ~3
/// at |t| ≤ 1.5, |φ| < π). Measured worst 13.5ε (f32), 11.3ε (f64); 17ε (f32)
/// with 200000 cases.
const K_INTERP_SUM: f64 = 64.0;

fn tol<T: Real>(k: f64) -> f64 {
    k * eps::<T>()
}

// ----------------------------------------------------------------------------- helpers

/// Records `max_relative_error(analytic, fd) ≤ T::fd_tolerance()` (module docs).
fn fd_check<T: Real, A, B>(t: &Tracker, label: &'static str, analytic: &A, fd: &B) -> CheckResult
where
    A: AsDMatrix<T>,
    B: AsDMatrix<T>,
{
    let err = numdiff::max_relative_error(&analytic.as_dmatrix(), &fd.as_dmatrix());
    t.check(label, Real::to_f64(err), Real::to_f64(T::fd_tolerance()))
}

/// Any fixed-size or dynamic matrix, as a `DMatrix` (so one `fd_check` serves all shapes).
trait AsDMatrix<T: Real> {
    fn as_dmatrix(&self) -> DMatrix<T>;
}

impl<T: Real, R: nalgebra::Dim, C: nalgebra::Dim, S> AsDMatrix<T> for nalgebra::Matrix<T, R, C, S>
where
    S: nalgebra::RawStorage<T, R, C>,
{
    fn as_dmatrix(&self) -> DMatrix<T> {
        let (nr, nc) = self.shape();
        DMatrix::from_fn(nr, nc, |i, j| self[(i, j)])
    }
}

fn unit<T: Real>(i: usize, h: T) -> Vector3<T> {
    let mut e = Vector3::zeros();
    e[i] = h;
    e
}

fn all_finite<T: Real>(m: &DMatrix<T>) -> bool {
    m.iter().all(|x| x.is_finite())
}

fn pose<T: Real, G: LieGroup<T>>(p: &V, r: &V) -> Pose<T, G> {
    Pose::new(v3::<T>(p), G::exp(&v3::<T>(r)))
}

fn vec6<T: Real>(a: &Vector3<T>, b: &Vector3<T>) -> Vector6<T> {
    Vector6::new(a.x, a.y, a.z, b.x, b.y, b.z)
}

// -------------------------------------------------------------------------- strategies

/// Interpolation parameters: uniform in [−0.5, 1.5], exactly 0, exactly 1, and the ends.
fn interp_t() -> BoxedStrategy<f64> {
    Union::new_weighted(vec![
        (10, (-0.5f64..=1.5).boxed()),
        (2, Just(0.0).boxed()),
        (2, Just(1.0).boxed()),
        (1, Just(0.5).boxed()),
        (1, Just(-0.5).boxed()),
        (1, Just(1.5).boxed()),
    ])
    .boxed()
}

/// (a, φ, t): b = a ⊞ φ with |φ| ≤ π − 10h (b ⊟ a is differenced).
fn interp_inputs<T: Real>() -> BoxedStrategy<(V, V, f64)> {
    (any_rotation::<T>(), fd_rotation::<T>(), interp_t()).boxed()
}

/// (a, φ or None, t) with |φ| ∈ [1e-9, 1e-3] rad log-uniform; None means b = a exactly.
fn interp_near_identical<T: Real>() -> BoxedStrategy<(V, Option<V>, f64)> {
    let tiny = ((-9.0f64..=-3.0).prop_map(|e| 10f64.powf(e)), axis())
        .prop_map(|(a, u)| Some(u * a))
        .boxed();
    let rel = Union::new_weighted(vec![(1, Just(None).boxed()), (3, tiny)]).boxed();
    (any_rotation::<T>(), rel, interp_t()).boxed()
}

/// (rotation, long rotation vector, rotation).
fn adjoint_inputs<T: Real>() -> BoxedStrategy<(V, V, V)> {
    (
        any_rotation::<T>(),
        long_rotation_vector::<T>(),
        any_rotation::<T>(),
    )
        .boxed()
}

/// Rotation vectors up to 3 rad (where Jl⁻¹ is checked against Jl; valid below 2π).
/// Generic over T only because the macros call strategies as `strategy::<T>()`.
#[allow(clippy::extra_unused_type_parameters)]
fn left_inv_vector<T: Real>() -> BoxedStrategy<V> {
    rotation_vector(3.0)
}

/// A pose (position, rotation vector) and a pose increment (δp, δθ), |δθ| ≤ 10 rad.
fn pose_and_delta<T: Real>() -> BoxedStrategy<((V, V), (V, V))> {
    (
        (point::<T>(), any_rotation::<T>()),
        (point::<T>(), long_rotation_vector::<T>()),
    )
        .boxed()
}

/// X₂ = (position, rotation vector) and X₁ = X₂ ⊞ (δp, φ) with |φ| ≤ π − 10h.
fn pose_and_fd_relative<T: Real>() -> BoxedStrategy<((V, V), (V, V))> {
    (
        (point::<T>(), any_rotation::<T>()),
        (point::<T>(), fd_rotation::<T>()),
    )
        .boxed()
}

/// A pose and a point.
fn pose_and_point<T: Real>() -> BoxedStrategy<((V, V), V)> {
    ((point::<T>(), any_rotation::<T>()), point::<T>()).boxed()
}

// ======================================================================================
// act and act_inv w.r.t. the point (proofs/jacobian_act_point.md)
// ======================================================================================

fn check_jacobian_act_point<T: Real, G: LieGroup<T>>((r, p): (V, V), t: &Tracker) -> CheckResult {
    let r = G::exp(&v3::<T>(&r));
    let p = dvec(&v3::<T>(&p));
    let h = T::fd_step();
    let as3 = |x: &DVector<T>| Vector3::new(x[0], x[1], x[2]);
    let fd = numdiff::vector_to_vector(|x| dvec(&r.act(&as3(x))), &p, h);
    fd_check(t, "jacobian_act_point vs FD", &r.jacobian_act_point(), &fd)?;
    let fd = numdiff::vector_to_vector(|x| dvec(&r.act_inv(&as3(x))), &p, h);
    fd_check(
        t,
        "jacobian_act_inv_point vs FD",
        &r.jacobian_act_inv_point(),
        &fd,
    )
}

group_property_tests! { check_jacobian_act_point, rotation_and_point;
    fn jacobian_act_point_matrix_f32: f32, SO3Matrix;
    fn jacobian_act_point_matrix_f64: f64, SO3Matrix;
    fn jacobian_act_point_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_act_point_quaternion_f64: f64, UnitQuaternion;
}

// ======================================================================================
// adjoint (proofs/adjoint.md)
// ======================================================================================

fn check_adjoint<T: Real, G: LieGroup<T>>((r, th, r2): (V, V, V), t: &Tracker) -> CheckResult {
    let r = G::exp(&v3::<T>(&r));
    let r2 = G::exp(&v3::<T>(&r2));
    let theta = v3::<T>(&th);
    let ad = r.adjoint();
    let scale = th.norm().max(1.0);
    // Defining identity: R·Exp(θ)·Rᵀ = Exp(Ad(R)·θ).
    let lhs = r.compose(&G::exp(&theta)).compose(&r.inverse());
    let rhs = G::exp(&(ad * theta));
    t.check(
        "R Exp(θ) Rᵀ = Exp(Ad θ)",
        rot_dist(&lhs, &rhs) / scale,
        tol::<T>(K_ADJOINT),
    )?;
    // The form of the doc comment: R·Exp(θ) = Exp(Ad θ)·R, i.e. R ⊞ θ = R ⊞ₗ Ad θ.
    let lhs = r.boxplus(&theta);
    let rhs = r.boxplus_left(&(ad * theta));
    t.check(
        "R ⊞ θ = R ⊞ₗ (Ad θ)",
        rot_dist(&lhs, &rhs) / scale,
        tol::<T>(K_ADJOINT),
    )?;
    // Homomorphism: Ad(R₁R₂) = Ad(R₁)Ad(R₂).
    let ad12 = mf(&r.compose(&r2).adjoint());
    let prod = mf(&ad) * mf(&r2.adjoint());
    t.check(
        "Ad(R1 R2) = Ad(R1) Ad(R2)",
        mat_rel_err(&prod, &ad12),
        tol::<T>(K_ADJOINT_HOM),
    )
}

group_property_tests! { check_adjoint, adjoint_inputs;
    fn adjoint_identities_matrix_f32: f32, SO3Matrix;
    fn adjoint_identities_matrix_f64: f64, SO3Matrix;
    fn adjoint_identities_quaternion_f32: f32, UnitQuaternion;
    fn adjoint_identities_quaternion_f64: f64, UnitQuaternion;
}

// ======================================================================================
// between (proofs/jacobian_between.md)
// ======================================================================================

fn check_jacobian_between<T: Real, G: LieGroup<T>>((r1, r2): (V, V), t: &Tracker) -> CheckResult {
    let r1 = G::exp(&v3::<T>(&r1));
    let r2 = G::exp(&v3::<T>(&r2));
    let h = T::fd_step();
    let fd = numdiff::rotation_to_rotation(|x: &G| x.between(&r2), &r1, h);
    fd_check(
        t,
        "jacobian_between_lhs vs FD",
        &r1.jacobian_between_lhs(&r2),
        &fd,
    )?;
    let fd = numdiff::rotation_to_rotation(|x: &G| r1.between(x), &r2, h);
    fd_check(
        t,
        "jacobian_between_rhs vs FD",
        &r1.jacobian_between_rhs(&r2),
        &fd,
    )
}

group_property_tests! { check_jacobian_between, two_rotations;
    fn jacobian_between_matrix_f32: f32, SO3Matrix;
    fn jacobian_between_matrix_f64: f64, SO3Matrix;
    fn jacobian_between_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_between_quaternion_f64: f64, UnitQuaternion;
}

// ======================================================================================
// left boxplus (proofs/jacobian_boxplus_left.md)
// ======================================================================================

fn check_jacobian_boxplus_left<T: Real, G: LieGroup<T>>(
    (r, theta): (V, V),
    t: &Tracker,
) -> CheckResult {
    let r = G::exp(&v3::<T>(&r));
    let theta = v3::<T>(&theta);
    let h = T::fd_step();
    let fd = numdiff::rotation_to_rotation(|x: &G| x.boxplus_left(&theta), &r, h);
    fd_check(
        t,
        "jacobian_boxplus_left_lhs vs FD",
        &r.jacobian_boxplus_left_lhs(&theta),
        &fd,
    )?;
    let fd = numdiff::vector_to_rotation(|v: &Vector3<T>| r.boxplus_left(v), &theta, h);
    fd_check(
        t,
        "jacobian_boxplus_left_rhs vs FD",
        &r.jacobian_boxplus_left_rhs(&theta),
        &fd,
    )
}

group_property_tests! { check_jacobian_boxplus_left, rotation_and_long_vector;
    fn jacobian_boxplus_left_matrix_f32: f32, SO3Matrix;
    fn jacobian_boxplus_left_matrix_f64: f64, SO3Matrix;
    fn jacobian_boxplus_left_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_boxplus_left_quaternion_f64: f64, UnitQuaternion;
}

// ======================================================================================
// left boxminus (proofs/jacobian_boxminus_left.md)
// ======================================================================================

/// R₂ = Exp(base), R₁ = Exp(φ)·R₂ (so R₁ ⊟ₗ R₂ = φ, |φ| ≤ π − 10h).
fn check_jacobian_boxminus_left<T: Real, G: LieGroup<T>>(
    (base, phi): (V, V),
    t: &Tracker,
) -> CheckResult {
    let r2 = G::exp(&v3::<T>(&base));
    let r1 = r2.boxplus_left(&v3::<T>(&phi));
    let h = T::fd_step();
    let fd = numdiff::rotation_to_vector(|x: &G| dvec(&x.boxminus_left(&r2)), &r1, h);
    fd_check(
        t,
        "jacobian_boxminus_left_lhs vs FD",
        &r1.jacobian_boxminus_left_lhs(&r2),
        &fd,
    )?;
    let fd = numdiff::rotation_to_vector(|x: &G| dvec(&r1.boxminus_left(x)), &r2, h);
    fd_check(
        t,
        "jacobian_boxminus_left_rhs vs FD",
        &r1.jacobian_boxminus_left_rhs(&r2),
        &fd,
    )
}

group_property_tests! { check_jacobian_boxminus_left, base_and_fd_relative;
    fn jacobian_boxminus_left_matrix_f32: f32, SO3Matrix;
    fn jacobian_boxminus_left_matrix_f64: f64, SO3Matrix;
    fn jacobian_boxminus_left_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_boxminus_left_quaternion_f64: f64, UnitQuaternion;
}

// ======================================================================================
// interpolate (proofs/jacobian_interpolate.md)
// ======================================================================================

/// Central difference in t of the body-frame change of `interpolate(a, b, t)`.
fn fd_interpolate_t<T: Real, G: LieGroup<T>>(a: &G, b: &G, s: T, h: T) -> Vector3<T> {
    let g0 = a.interpolate(b, s);
    let plus = a.interpolate(b, s + h).boxminus(&g0);
    let minus = a.interpolate(b, s - h).boxminus(&g0);
    (plus - minus) / (c::<T>(2.0) * h)
}

/// FD checks of the three Jacobians of interpolate at (a, b, s).
fn interpolate_fd_checks<T: Real, G: LieGroup<T>>(a: &G, b: &G, s: T, t: &Tracker) -> CheckResult {
    let h = T::fd_step();
    let fd = numdiff::rotation_to_rotation(|x: &G| x.interpolate(b, s), a, h);
    fd_check(
        t,
        "jacobian_interpolate_lhs vs FD",
        &a.jacobian_interpolate_lhs(b, s),
        &fd,
    )?;
    let fd = numdiff::rotation_to_rotation(|x: &G| a.interpolate(x, s), b, h);
    fd_check(
        t,
        "jacobian_interpolate_rhs vs FD",
        &a.jacobian_interpolate_rhs(b, s),
        &fd,
    )?;
    let fd = fd_interpolate_t(a, b, s, h);
    fd_check(
        t,
        "jacobian_interpolate_t vs FD",
        &a.jacobian_interpolate_t(b, s),
        &fd,
    )
}

fn check_jacobian_interpolate<T: Real, G: LieGroup<T>>(
    (a, phi, s): (V, V, f64),
    t: &Tracker,
) -> CheckResult {
    let a = G::exp(&v3::<T>(&a));
    let b = a.boxplus(&v3::<T>(&phi));
    let s = c::<T>(s);
    // The end points (exactly at t = 0; to round-off at t = 1).
    if s == T::zero() {
        t.check(
            "interpolate(a, b, 0) = a",
            rot_dist(&a.interpolate(&b, s), &a),
            tol::<T>(K_INTERP_SAME),
        )?;
    }
    // Same body-frame perturbation of a and b moves the result by it: D_a + D_b = I.
    let sum = mf(&(a.jacobian_interpolate_lhs(&b, s) + a.jacobian_interpolate_rhs(&b, s)));
    t.check(
        "D_a + D_b = I",
        mat_rel_err(&Matrix3::identity(), &sum),
        tol::<T>(K_INTERP_SUM),
    )?;
    interpolate_fd_checks(&a, &b, s, t)
}

group_property_tests! { check_jacobian_interpolate, interp_inputs;
    fn jacobian_interpolate_matrix_f32: f32, SO3Matrix;
    fn jacobian_interpolate_matrix_f64: f64, SO3Matrix;
    fn jacobian_interpolate_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_interpolate_quaternion_f64: f64, UnitQuaternion;
}

/// b = a exactly, or b = a ⊞ φ with tiny φ: no NaN in the value or any Jacobian, the
/// exact values at b = a, and the FD checks still pass.
fn check_interpolate_near_identical<T: Real, G: LieGroup<T>>(
    (a, phi, s): (V, Option<V>, f64),
    t: &Tracker,
) -> CheckResult {
    let a = G::exp(&v3::<T>(&a));
    let b = match &phi {
        None => a,
        Some(phi) => a.boxplus(&v3::<T>(phi)),
    };
    let s = c::<T>(s);
    let value = a.interpolate(&b, s);
    let jl = a.jacobian_interpolate_lhs(&b, s);
    let jr = a.jacobian_interpolate_rhs(&b, s);
    let jt = a.jacobian_interpolate_t(&b, s);
    let finite = finite_m(&value.to_matrix())
        && finite_v(&value.log())
        && finite_m(&jl)
        && finite_m(&jr)
        && finite_v(&jt);
    t.require("no NaN/∞ in interpolate or its Jacobians", finite, || {
        format!("phi = {phi:?}, t = {s:?}: value {value:?}, D_a {jl:?}, D_b {jr:?}, D_t {jt:?}")
    })?;
    if phi.is_none() {
        let ident = Matrix3::<f64>::identity();
        let sf = Real::to_f64(s);
        t.check(
            "b = a: interpolate = a",
            rot_dist(&value, &a),
            tol::<T>(K_INTERP_SAME),
        )?;
        t.check(
            "b = a: D_a = (1 − t) I",
            mat_rel_err(&(ident * (1.0 - sf)), &mf(&jl)),
            tol::<T>(K_INTERP_SAME),
        )?;
        t.check(
            "b = a: D_b = t I",
            mat_rel_err(&(ident * sf), &mf(&jr)),
            tol::<T>(K_INTERP_SAME),
        )?;
        // D_t = φ = a ⊟ a: exactly 0 for matrices, a few ε for quaternions (the vector
        // part of the rounded product a*·a).
        t.check("b = a: D_t = 0", vf(&jt).amax(), tol::<T>(K_INTERP_SAME))?;
    }
    interpolate_fd_checks(&a, &b, s, t)?;
    // The finite differences themselves must not produce NaN either.
    let h = T::fd_step();
    let fd = numdiff::rotation_to_rotation(|x: &G| x.interpolate(&b, s), &a, h);
    t.require(
        "no NaN in FD of interpolate",
        all_finite(&fd.as_dmatrix()),
        || format!("{fd:?}"),
    )
}

group_property_tests! { check_interpolate_near_identical, interp_near_identical;
    fn interpolate_near_identical_no_nan_matrix_f32: f32, SO3Matrix;
    fn interpolate_near_identical_no_nan_matrix_f64: f64, SO3Matrix;
    fn interpolate_near_identical_no_nan_quaternion_f32: f32, UnitQuaternion;
    fn interpolate_near_identical_no_nan_quaternion_f64: f64, UnitQuaternion;
}

// ======================================================================================
// left Jacobian (proofs/left_jacobian.md)
// ======================================================================================

/// (a) Jl(θ) = Exp(θ)·Γ(θ) (= R·Jr) and Jl(θ) = Γ(θ)ᵀ = Γ(−θ), |θ| ≤ 10 rad;
/// (c) Jl against the world-frame finite difference, written out:
/// column i = [Log(Exp(θ+heᵢ)Exp(θ)ᵀ) − Log(Exp(θ−heᵢ)Exp(θ)ᵀ)]/2h.
fn check_left_jacobian<T: Real>(th: V, t: &Tracker) -> CheckResult {
    let theta = v3::<T>(&th);
    let jl = left_jacobian(&theta);
    let r = exp_matrix(&theta);
    let jr = right_jacobian(&theta);
    t.check(
        "Jl = Exp(θ) Γ(θ)",
        mat_rel_err(&mf(&(r * jr)), &mf(&jl)),
        tol::<T>(K_LEFT),
    )?;
    t.check(
        "Jl = Γ(θ)ᵀ",
        mat_rel_err(&mf(&jr.transpose()), &mf(&jl)),
        tol::<T>(K_LEFT),
    )?;
    t.check(
        "Jl = Γ(−θ)",
        mat_rel_err(&mf(&right_jacobian(&-theta)), &mf(&jl)),
        tol::<T>(K_LEFT),
    )?;
    let h = T::fd_step();
    let rt = r.transpose();
    let mut fd = Matrix3::<T>::zeros();
    for i in 0..3 {
        let plus = log_matrix(&(exp_matrix(&(theta + unit(i, h))) * rt));
        let minus = log_matrix(&(exp_matrix(&(theta - unit(i, h))) * rt));
        fd.set_column(i, &((plus - minus) / (c::<T>(2.0) * h)));
    }
    fd_check(t, "left_jacobian vs world-frame FD", &jl, &fd)
}

scalar_property_tests! { check_left_jacobian, long_rotation_vector;
    fn left_jacobian_f32: f32;
    fn left_jacobian_f64: f64;
}

/// (b) Jl(θ)·Jl⁻¹(θ) = I and Jl⁻¹ = Γ⁻¹(θ)ᵀ, |θ| ≤ 3 rad.
fn check_left_jacobian_inv<T: Real>(th: V, t: &Tracker) -> CheckResult {
    let theta = v3::<T>(&th);
    let jl = mf(&left_jacobian(&theta));
    let jli = mf(&left_jacobian_inv(&theta));
    let cond = max_abs(&jl) * max_abs(&jli);
    t.check(
        "Jl Jl⁻¹ = I",
        max_abs(&(jl * jli - Matrix3::identity())) / cond,
        tol::<T>(K_LEFT_INV),
    )?;
    t.check(
        "Jl⁻¹ Jl = I",
        max_abs(&(jli * jl - Matrix3::identity())) / cond,
        tol::<T>(K_LEFT_INV),
    )?;
    t.check(
        "Jl⁻¹ = Γ⁻¹(θ)ᵀ",
        mat_rel_err(&mf(&right_jacobian_inv(&theta).transpose()), &jli),
        tol::<T>(K_LEFT),
    )
}

scalar_property_tests! { check_left_jacobian_inv, left_inv_vector;
    fn left_jacobian_inv_identities_f32: f32;
    fn left_jacobian_inv_identities_f64: f64;
}

/// Jl⁻¹ is the derivative of the world-frame Log: column i =
/// [Log(Exp(heᵢ)R) − Log(Exp(−heᵢ)R)]/2h = Jl⁻¹(Log R) eᵢ, |Log R| ≤ π − 10h.
fn check_left_jacobian_inv_fd<T: Real, G: LieGroup<T>>(th: V, t: &Tracker) -> CheckResult {
    let r = G::exp(&v3::<T>(&th));
    let h = T::fd_step();
    let mut fd = Matrix3::<T>::zeros();
    for i in 0..3 {
        let plus = r.boxplus_left(&unit(i, h)).log();
        let minus = r.boxplus_left(&unit(i, -h)).log();
        fd.set_column(i, &((plus - minus) / (c::<T>(2.0) * h)));
    }
    fd_check(
        t,
        "left_jacobian_inv vs world-frame FD of Log",
        &left_jacobian_inv(&r.log()),
        &fd,
    )
}

group_property_tests! { check_left_jacobian_inv_fd, fd_rotation;
    fn left_jacobian_inv_fd_matrix_f32: f32, SO3Matrix;
    fn left_jacobian_inv_fd_matrix_f64: f64, SO3Matrix;
    fn left_jacobian_inv_fd_quaternion_f32: f32, UnitQuaternion;
    fn left_jacobian_inv_fd_quaternion_f64: f64, UnitQuaternion;
}

// ======================================================================================
// Pose (proofs/pose.md)
// ======================================================================================

/// D_X(X ⊞ δ) by `numdiff::pose_to_pose`, D_δ(X ⊞ δ) by the explicit difference
/// column i = [((X ⊞ (δ + heᵢ)) ⊟ (X ⊞ δ)) − ((X ⊞ (δ − heᵢ)) ⊟ (X ⊞ δ))]/2h.
fn check_jacobian_pose_boxplus<T: Real, G: LieGroup<T>>(
    ((p, r), (dp, dt)): ((V, V), (V, V)),
    t: &Tracker,
) -> CheckResult {
    let x = pose::<T, G>(&p, &r);
    let delta = vec6(&v3::<T>(&dp), &v3::<T>(&dt));
    let h = T::fd_step();
    let fd = numdiff::pose_to_pose(|y: &Pose<T, G>| y.boxplus(&delta), &x, h);
    fd_check(
        t,
        "jacobian_boxplus_pose vs FD",
        &x.jacobian_boxplus_pose(&delta),
        &fd,
    )?;
    let y0 = x.boxplus(&delta);
    let mut fd = Matrix6::<T>::zeros();
    for i in 0..6 {
        let mut e = Vector6::zeros();
        e[i] = h;
        let plus = x.boxplus(&(delta + e)).boxminus(&y0);
        let minus = x.boxplus(&(delta - e)).boxminus(&y0);
        fd.set_column(i, &((plus - minus) / (c::<T>(2.0) * h)));
    }
    fd_check(
        t,
        "jacobian_boxplus_delta vs FD",
        &x.jacobian_boxplus_delta(&delta),
        &fd,
    )
}

group_property_tests! { check_jacobian_pose_boxplus, pose_and_delta;
    fn jacobian_pose_boxplus_matrix_f32: f32, SO3Matrix;
    fn jacobian_pose_boxplus_matrix_f64: f64, SO3Matrix;
    fn jacobian_pose_boxplus_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_pose_boxplus_quaternion_f64: f64, UnitQuaternion;
}

/// X₁ ⊟ X₂ differentiated w.r.t. both poses at once by `numdiff::poses_to_vector`
/// (6×12: columns 0..6 are D_{X₁}, 6..12 are D_{X₂}).
fn check_jacobian_pose_boxminus<T: Real, G: LieGroup<T>>(
    ((p, r), (dp, phi)): ((V, V), (V, V)),
    t: &Tracker,
) -> CheckResult {
    let x2 = pose::<T, G>(&p, &r);
    let x1 = x2.boxplus(&vec6(&v3::<T>(&dp), &v3::<T>(&phi)));
    let h = T::fd_step();
    let fd = numdiff::poses_to_vector(
        |xs: &[Pose<T, G>]| DVector::from_column_slice(xs[0].boxminus(&xs[1]).as_slice()),
        &[x1, x2],
        h,
    );
    fd_check(
        t,
        "jacobian_boxminus_pose_lhs vs FD",
        &x1.jacobian_boxminus_pose_lhs(&x2),
        &fd.columns(0, 6),
    )?;
    fd_check(
        t,
        "jacobian_boxminus_pose_rhs vs FD",
        &x1.jacobian_boxminus_pose_rhs(&x2),
        &fd.columns(6, 6),
    )
}

group_property_tests! { check_jacobian_pose_boxminus, pose_and_fd_relative;
    fn jacobian_pose_boxminus_matrix_f32: f32, SO3Matrix;
    fn jacobian_pose_boxminus_matrix_f64: f64, SO3Matrix;
    fn jacobian_pose_boxminus_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_pose_boxminus_quaternion_f64: f64, UnitQuaternion;
}

/// p + R x and Rᵀ(y − p), w.r.t. the pose, by `numdiff::poses_to_vector` (3×6).
fn check_jacobian_pose_points<T: Real, G: LieGroup<T>>(
    ((p, r), x): ((V, V), V),
    t: &Tracker,
) -> CheckResult {
    let pose = pose::<T, G>(&p, &r);
    let x = v3::<T>(&x);
    let h = T::fd_step();
    let fd = numdiff::poses_to_vector(
        |xs: &[Pose<T, G>]| dvec(&xs[0].transform_point(&x)),
        &[pose],
        h,
    );
    fd_check(
        t,
        "jacobian_transform_point_pose vs FD",
        &pose.jacobian_transform_point_pose(&x),
        &fd,
    )?;
    let fd = numdiff::poses_to_vector(
        |xs: &[Pose<T, G>]| dvec(&xs[0].inverse_transform_point(&x)),
        &[pose],
        h,
    );
    fd_check(
        t,
        "jacobian_inverse_transform_point_pose vs FD",
        &pose.jacobian_inverse_transform_point_pose(&x),
        &fd,
    )
}

group_property_tests! { check_jacobian_pose_points, pose_and_point;
    fn jacobian_pose_points_matrix_f32: f32, SO3Matrix;
    fn jacobian_pose_points_matrix_f64: f64, SO3Matrix;
    fn jacobian_pose_points_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_pose_points_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------------------- the checks are not vacuous

/// Plausible wrong formulas fail the same checks by a wide margin (error ≥ 10× the
/// tolerance) on a generic input: the right Jacobian Γ in place of the left one (the
/// world-frame FD tells them apart), Γ⁻¹ without R₂ for left ⊟, Γ(θ) without Rᵀ for left
/// ⊞, +R₂ᵀR₁ for `between`, and Γ⁻¹ without the transpose in D_a interpolate.
fn check_toolkit_fd_rejects_wrong_jacobians<T: Real>(t: &Tracker) -> CheckResult {
    type G<T> = SO3Matrix<T>;
    let h = T::fd_step();
    let tol = Real::to_f64(T::fd_tolerance());
    let r1 = G::<T>::exp(&v3::<T>(&V::new(0.4, -1.1, 2.0)));
    let r2 = G::<T>::exp(&v3::<T>(&V::new(-0.3, 0.8, 0.5)));
    let th = v3::<T>(&V::new(1.2, -0.4, 0.9));
    let s = c::<T>(0.7);
    let reject = |label: &'static str, wrong: &Matrix3<T>, fd: &Matrix3<T>| {
        let err = Real::to_f64(numdiff::max_relative_error(wrong, fd));
        t.check(label, 10.0 * tol / err, 1.0)
    };
    let to3 = |m: DMatrix<T>| Matrix3::from_fn(|i, j| m[(i, j)]);

    let rt = exp_matrix(&th).transpose();
    let mut fd = Matrix3::<T>::zeros();
    for i in 0..3 {
        let plus = log_matrix(&(exp_matrix(&(th + unit(i, h))) * rt));
        let minus = log_matrix(&(exp_matrix(&(th - unit(i, h))) * rt));
        fd.set_column(i, &((plus - minus) / (c::<T>(2.0) * h)));
    }
    reject("Γ for Jl (world-frame FD)", &right_jacobian(&th), &fd)?;
    fd_check(t, "Jl passes the same FD", &left_jacobian(&th), &fd)?;

    let fd = to3(numdiff::rotation_to_vector(
        |x: &G<T>| dvec(&x.boxminus_left(&r2)),
        &r1,
        h,
    ));
    reject(
        "Γ⁻¹(φ) without R₂ for left ⊟",
        &right_jacobian_inv(&r1.boxminus_left(&r2)),
        &fd,
    )?;
    let fd = numdiff::vector_to_rotation(|v: &Vector3<T>| r1.boxplus_left(v), &th, h);
    reject("Γ(θ) without Rᵀ for left ⊞", &right_jacobian(&th), &fd)?;
    let fd = numdiff::rotation_to_rotation(|x: &G<T>| x.between(&r2), &r1, h);
    reject("+R₂ᵀR₁ for between", &(-r1.jacobian_between_lhs(&r2)), &fd)?;
    let fd = numdiff::rotation_to_rotation(|x: &G<T>| x.interpolate(&r2, s), &r1, h);
    let phi = r2.boxminus(&r1);
    let wrong = exp_matrix(&(phi * s)).transpose()
        - right_jacobian(&(phi * s)) * right_jacobian_inv(&phi) * s;
    reject("Γ⁻¹ without ᵀ in D_a interpolate", &wrong, &fd)?;
    fd_check(
        t,
        "D_a interpolate passes",
        &r1.jacobian_interpolate_lhs(&r2, s),
        &fd,
    )
}

scalar_fixed_tests! { check_toolkit_fd_rejects_wrong_jacobians;
    fn toolkit_fd_check_rejects_wrong_jacobians_f32: f32;
    fn toolkit_fd_check_rejects_wrong_jacobians_f64: f64;
}
