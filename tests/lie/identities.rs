//! Identities of the Lie-group toolkit, for all four combinations
//! SO3Matrix / UnitQuaternion × f32 / f64:
//! (11) R₂ ⊞ (R₁ ⊟ R₂) = R₁; (147) Γ⁻¹(θ)ᵀ = Γ⁻¹(θ)R₁ᵀR₂ with θ = R₁ ⊟ R₂;
//! (148) Γθ = θ, Γ⁻¹θ = θ (and for the transposes); Exp/Log round trips; Γ·Γ⁻¹ = I;
//! conversions; and the matrix and quaternion implementations agreeing on every operation
//! and every Jacobian.
//!
//! # Tolerances
//! All tolerances are `k·ε` with ε = `T::default_epsilon()` (2.2e-16 in f64, 1.2e-7 in
//! f32), applied to a relative error (absolute below magnitude one, see each check). They
//! are round-off bounds, not finite-difference bounds: each operation checked is a short
//! chain of O(10) rounded products of entries of magnitude ≤ π², and none of the
//! identities involves a cancellation that the implementation does not already avoid
//! (series near 0, atan2 and the symmetric-part axis near π), so the errors are a few ε.
//! The factors `k` below are 4–10× the worst error measured over 20000 random cases per
//! test in release mode (`PROPTEST_CASES=20000`, see the `[lie-report]` lines), so that
//! they are not flaky while still catching any O(√ε), O(ε/θ) or O(ε/(π − θ)) loss of
//! accuracy (those would show up as 1e-8 or worse in f64).

use crate::lie_harness;

use lie_harness::*;
use lie_xpbd::lie::so3::{right_jacobian, right_jacobian_inv};
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use nalgebra::{Matrix3, Vector3};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use std::f64::consts::PI;

// ------------------------------------------------------------ tolerances (in units of ε)

/// (11), Exp(Log R) = R and the conversions, max-abs entry of the matrix difference
/// (entries of magnitude ≤ 1): a boxminus, a boxplus and a product, or a conversion and
/// back. Measured worst: 11.6ε (f64), 11.0ε (f32).
const K_ROUNDTRIP_ROTATION: f64 = 64.0;
/// (147), relative: Γ⁻¹ (entries up to ~2 at |θ| = π) times two rotation matrices.
/// Measured worst: 13.0ε (f64), 14.5ε (f32).
const K_147: f64 = 64.0;
/// (148): every term of Γθ − θ other than Iθ − θ vanishes in exact arithmetic (θ̂θ = 0);
/// what remains is rounding of θ̂²-products, relative to |θ|. Measured worst 3.5ε.
const K_148: f64 = 32.0;
/// Log(Exp θ) = θ relative to |θ| (axis and angle are both recovered to a few ulps at
/// every angle, thanks to the series below the cut-off and the atan2 form; no
/// conditioning loss near 0 or π). Measured worst: 2.2ε (f64), 2.4ε (f32), i.e.
/// 4.8e-16 and 2.9e-7.
const K_EXP_LOG: f64 = 16.0;
/// Γ(θ)Γ⁻¹(θ) = I for |θ| ≤ 5 rad, relative to ‖Γ‖·‖Γ⁻¹‖. Measured worst 3.6ε.
const K_GAMMA_INV: f64 = 32.0;
/// Matrix vs quaternion implementation of the same operation, relative. Measured worst:
/// 7.5ε (f64), 8.1ε (f32).
const K_AGREE: f64 = 64.0;
/// |Log R| ≤ π, relative to π: 2·atan2(|v|, 0) and the norm of the result each round.
/// Measured worst 1.5ε·π (f32).
const K_LOG_PI: f64 = 8.0;

fn tol<T: Real>(k: f64) -> f64 {
    k * eps::<T>()
}

// ------------------------------------------------------ (11) R₂ ⊞ (R₁ ⊟ R₂) = R₁

fn check_boxplus_boxminus_roundtrip<T: Real, G: LieGroup<T>>(
    (base, rel): (V, V),
    t: &Tracker,
) -> CheckResult {
    let r2 = G::exp(&v3::<T>(&base));
    let r1 = r2.boxplus(&v3::<T>(&rel));
    let back = r2.boxplus(&r1.boxminus(&r2));
    t.check(
        "(11) R2 ⊞ (R1 ⊟ R2) = R1",
        rot_dist(&back, &r1),
        tol::<T>(K_ROUNDTRIP_ROTATION),
    )?;
    // Also with unrelated R1, R2 (relative rotation uniformly spread).
    let r1b = G::exp(&v3::<T>(&rel));
    let back = r2.boxplus(&r1b.boxminus(&r2));
    t.check(
        "(11) unrelated R1, R2",
        rot_dist(&back, &r1b),
        tol::<T>(K_ROUNDTRIP_ROTATION),
    )
}

group_property_tests! { check_boxplus_boxminus_roundtrip, base_and_relative;
    fn boxplus_boxminus_roundtrip_matrix_f32: f32, SO3Matrix;
    fn boxplus_boxminus_roundtrip_matrix_f64: f64, SO3Matrix;
    fn boxplus_boxminus_roundtrip_quaternion_f32: f32, UnitQuaternion;
    fn boxplus_boxminus_roundtrip_quaternion_f64: f64, UnitQuaternion;
}

// -------------------------------------------- (147) Γ⁻¹(θ)ᵀ = Γ⁻¹(θ) R₁ᵀ R₂, θ = R₁ ⊟ R₂

fn check_identity_147<T: Real, G: LieGroup<T>>((base, rel): (V, V), t: &Tracker) -> CheckResult {
    let r2 = G::exp(&v3::<T>(&base));
    let r1 = r2.boxplus(&v3::<T>(&rel));
    let theta = r1.boxminus(&r2);
    let gi = right_jacobian_inv(&theta);
    let lhs = mf(&gi.transpose());
    let rhs = mf(&(gi * r1.to_matrix().transpose() * r2.to_matrix()));
    t.check("(147)", mat_rel_err(&lhs, &rhs), tol::<T>(K_147))?;
    // The form used in the proof of (28): Γ⁻¹(θ)Exp(−θ) = Γ⁻¹(θ)ᵀ.
    let rhs2 = mf(&(gi * G::exp(&-theta).to_matrix()));
    t.check(
        "(147) via Exp(−θ)",
        mat_rel_err(&lhs, &rhs2),
        tol::<T>(K_147),
    )
}

group_property_tests! { check_identity_147, base_and_relative;
    fn identity_147_matrix_f32: f32, SO3Matrix;
    fn identity_147_matrix_f64: f64, SO3Matrix;
    fn identity_147_quaternion_f32: f32, UnitQuaternion;
    fn identity_147_quaternion_f64: f64, UnitQuaternion;
}

// --------------------------------------------------------- (148) Γθ = θ and Γ⁻¹θ = θ

fn check_identity_148<T: Real>(theta: V, t: &Tracker) -> CheckResult {
    let th = v3::<T>(&theta);
    let scale = |v: &Vector3<T>| Real::to_f64(v.amax()).max(1.0);
    let g = right_jacobian(&th);
    let tol = tol::<T>(K_148);
    t.check(
        "(148) Γθ = θ",
        Real::to_f64((g * th - th).amax()) / scale(&th),
        tol,
    )?;
    t.check(
        "(148) Γᵀθ = θ",
        Real::to_f64((g.transpose() * th - th).amax()) / scale(&th),
        tol,
    )?;
    // Γ⁻¹ is singular at |θ| = 2π: use the Log range |θ| ≤ π, and up to 5 rad.
    if theta.norm() <= 5.0 {
        let gi = right_jacobian_inv(&th);
        t.check(
            "(148) Γ⁻¹θ = θ",
            Real::to_f64((gi * th - th).amax()) / scale(&th),
            tol,
        )?;
        t.check(
            "(148) Γ⁻ᵀθ = θ",
            Real::to_f64((gi.transpose() * th - th).amax()) / scale(&th),
            tol,
        )?;
    }
    Ok(())
}

scalar_property_tests! { check_identity_148, long_rotation_vector;
    fn identity_148_f32: f32;
    fn identity_148_f64: f64;
}

// ------------------------------------------------------------ Exp/Log round trips

/// Rotation vectors with |θ| < π strictly, far enough from π (≥ 1e-5 in f32, ≥ 1e-12 in
/// f64, i.e. many ulps) that rounding θ to `T` cannot push it past π, where Log would
/// return the other representative −(2π − |θ|)θ/|θ|.
fn below_pi<T: Real>() -> BoxedStrategy<V> {
    let margin = if eps::<T>() > 1e-10 { 1e-5 } else { 1e-12 };
    rotation_vector(PI - margin)
}

fn check_exp_log_roundtrip<T: Real, G: LieGroup<T>>(theta: V, t: &Tracker) -> CheckResult {
    let th = v3::<T>(&theta);
    let back = G::exp(&th).log();
    let n = Real::to_f64(th.norm());
    let err = vf(&(back - th)).norm();
    let rel = if n > 0.0 { err / n } else { err };
    t.check("|Log(Exp θ) − θ| / |θ|", rel, tol::<T>(K_EXP_LOG))
}

group_property_tests! { check_exp_log_roundtrip, below_pi;
    fn exp_log_roundtrip_matrix_f32: f32, SO3Matrix;
    fn exp_log_roundtrip_matrix_f64: f64, SO3Matrix;
    fn exp_log_roundtrip_quaternion_f32: f32, UnitQuaternion;
    fn exp_log_roundtrip_quaternion_f64: f64, UnitQuaternion;
}

fn check_log_exp_roundtrip<T: Real, G: LieGroup<T>>(
    (base, rel): (V, V),
    t: &Tracker,
) -> CheckResult {
    // R = Exp(a) ⊞ b covers every rotation, angle π included, built by products.
    let r = G::exp(&v3::<T>(&base)).boxplus(&v3::<T>(&rel));
    let th = r.log();
    t.require("Log finite", finite_v(&th), || format!("Log = {th:?}"))?;
    let n = Real::to_f64(th.norm());
    t.check("|Log R| ≤ π", (n - PI).max(0.0), PI * tol::<T>(K_LOG_PI))?;
    t.check(
        "Exp(Log R) = R",
        rot_dist(&G::exp(&th), &r),
        tol::<T>(K_ROUNDTRIP_ROTATION),
    )
}

group_property_tests! { check_log_exp_roundtrip, base_and_relative;
    fn log_exp_roundtrip_matrix_f32: f32, SO3Matrix;
    fn log_exp_roundtrip_matrix_f64: f64, SO3Matrix;
    fn log_exp_roundtrip_quaternion_f32: f32, UnitQuaternion;
    fn log_exp_roundtrip_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------------------------------ Γ·Γ⁻¹ = I

#[allow(clippy::extra_unused_type_parameters)] // called as `up_to_five::<T>()`
fn up_to_five<T: Real>() -> BoxedStrategy<V> {
    rotation_vector(5.0)
}

fn check_right_jacobian_times_inverse<T: Real>(theta: V, t: &Tracker) -> CheckResult {
    let th = v3::<T>(&theta);
    let g = mf(&right_jacobian(&th));
    let gi = mf(&right_jacobian_inv(&th));
    let id = Matrix3::<f64>::identity();
    // Scale by ‖Γ‖·‖Γ⁻¹‖ (max-abs), which bounds how round-off in either factor shows.
    let cond = max_abs(&g).max(1.0) * max_abs(&gi).max(1.0);
    let tol = tol::<T>(K_GAMMA_INV);
    t.check("Γ·Γ⁻¹ = I", max_abs(&(g * gi - id)) / cond, tol)?;
    t.check("Γ⁻¹·Γ = I", max_abs(&(gi * g - id)) / cond, tol)
}

scalar_property_tests! { check_right_jacobian_times_inverse, up_to_five;
    fn right_jacobian_times_inverse_f32: f32;
    fn right_jacobian_times_inverse_f64: f64;
}

// ------------------------------------------------------------------------ conversions

fn check_conversions<T: Real, G: LieGroup<T>>(theta: V, t: &Tracker) -> CheckResult {
    let r = G::exp(&v3::<T>(&theta));
    let tol = tol::<T>(K_ROUNDTRIP_ROTATION);
    let from_m = G::from_matrix(&r.to_matrix()).map_err(|e| TestCaseError::fail(e.to_string()))?;
    t.check("from_matrix(to_matrix(R)) = R", rot_dist(&from_m, &r), tol)?;
    let from_q =
        G::from_quaternion(&r.to_quaternion()).map_err(|e| TestCaseError::fail(e.to_string()))?;
    t.check(
        "from_quaternion(to_quaternion(R)) = R",
        rot_dist(&from_q, &r),
        tol,
    )?;
    // Across representations.
    let m = SO3Matrix::<T>::from_quaternion(&r.to_quaternion())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    t.check(
        "SO3Matrix::from_quaternion",
        max_abs(&(mf(m.matrix()) - mf(&r.to_matrix()))),
        tol,
    )?;
    let q = <UnitQuaternion<T> as LieGroup<T>>::from_matrix(&r.to_matrix())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    t.check(
        "UnitQuaternion::from_matrix",
        max_abs(&(mf(&LieGroup::<T>::to_matrix(&q)) - mf(&r.to_matrix()))),
        tol,
    )?;
    // to_quaternion is a unit quaternion; to_matrix is orthonormal with det +1.
    t.check(
        "|to_quaternion| = 1",
        (Real::to_f64(r.to_quaternion().norm()) - 1.0).abs(),
        tol,
    )?;
    let rm = mf(&r.to_matrix());
    t.check(
        "to_matrix orthonormal",
        max_abs(&(rm.transpose() * rm - Matrix3::identity())),
        tol,
    )?;
    t.check("det to_matrix = 1", (rm.determinant() - 1.0).abs(), tol)?;
    // renormalize is idempotent to round-off on a valid rotation.
    t.check("renormalize(R) = R", rot_dist(&r.renormalize(), &r), tol)
}

group_property_tests! { check_conversions, any_rotation;
    fn conversions_roundtrip_matrix_f32: f32, SO3Matrix;
    fn conversions_roundtrip_matrix_f64: f64, SO3Matrix;
    fn conversions_roundtrip_quaternion_f32: f32, UnitQuaternion;
    fn conversions_roundtrip_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------- matrix and quaternion agree everywhere

type M<T> = SO3Matrix<T>;
type Q<T> = UnitQuaternion<T>;

/// Rotations, kept a margin (1e-4 in f32, 1e-9 in f64, i.e. hundreds of ulps) below π so
/// that both representations pick the same one of ±θ in Log; at π itself both answers
/// are valid and are checked in edge_cases.rs.
fn agree_rotation<T: Real>() -> BoxedStrategy<V> {
    let margin = if eps::<T>() > 1e-10 { 1e-4 } else { 1e-9 };
    rotation_vector(PI - margin)
}

/// (a, b, θ, p): R₁ = Exp(a), R₂ = R₁ ⊞ b (so R₂ ⊟ R₁ = b, below π), θ a long rotation
/// vector for Exp/⊞, p a point.
fn agree_input<T: Real>() -> BoxedStrategy<(V, V, V, V)> {
    (
        agree_rotation::<T>(),
        agree_rotation::<T>(),
        long_rotation_vector::<T>(),
        point::<T>(),
    )
        .boxed()
}

fn check_matrix_quaternion_agree<T: Real>(
    (a, b, theta, p): (V, V, V, V),
    t: &Tracker,
) -> CheckResult {
    let tol = tol::<T>(K_AGREE);
    let (a, b, theta, p) = (v3::<T>(&a), v3::<T>(&b), v3::<T>(&theta), v3::<T>(&p));
    let m1 = M::<T>::exp(&a);
    let q1 = <Q<T> as LieGroup<T>>::exp(&a);
    let m2 = m1.boxplus(&b);
    let q2 = q1.boxplus(&b);
    let mm = |x: &Matrix3<T>| mf(x);
    let mat = |label: &'static str, x: Matrix3<T>, y: Matrix3<T>| {
        t.check(label, mat_rel_err(&mm(&x), &mm(&y)), tol)
    };
    let vec = |label: &'static str, x: Vector3<T>, y: Vector3<T>| {
        t.check(label, vec_rel_err(&vf(&x), &vf(&y)), tol)
    };
    let qm = |q: &Q<T>| LieGroup::<T>::to_matrix(q);

    mat("exp / to_matrix", m1.to_matrix(), qm(&q1))?;
    mat(
        "exp of long θ",
        M::<T>::exp(&theta).to_matrix(),
        qm(&<Q<T> as LieGroup<T>>::exp(&theta)),
    )?;
    vec("log", m1.log(), LieGroup::<T>::log(&q1))?;
    mat(
        "boxplus",
        m1.boxplus(&theta).to_matrix(),
        qm(&q1.boxplus(&theta)),
    )?;
    vec("boxminus", m2.boxminus(&m1), q2.boxminus(&q1))?;
    mat("compose", m1.compose(&m2).to_matrix(), qm(&q1.compose(&q2)))?;
    mat(
        "inverse",
        LieGroup::<T>::inverse(&m1).to_matrix(),
        qm(&LieGroup::<T>::inverse(&q1)),
    )?;
    vec("act", m1.act(&p), q1.act(&p))?;
    vec("act_inv", m1.act_inv(&p), q1.act_inv(&p))?;
    mat("jacobian_act", m1.jacobian_act(&p), q1.jacobian_act(&p))?;
    mat(
        "jacobian_act_inv",
        m1.jacobian_act_inv(&p),
        q1.jacobian_act_inv(&p),
    )?;
    mat(
        "jacobian_inverse",
        m1.jacobian_inverse(),
        q1.jacobian_inverse(),
    )?;
    mat(
        "jacobian_compose_lhs",
        m1.jacobian_compose_lhs(&m2),
        q1.jacobian_compose_lhs(&q2),
    )?;
    mat(
        "jacobian_compose_rhs",
        m1.jacobian_compose_rhs(&m2),
        q1.jacobian_compose_rhs(&q2),
    )?;
    mat(
        "jacobian_boxminus_lhs",
        m2.jacobian_boxminus_lhs(&m1),
        q2.jacobian_boxminus_lhs(&q1),
    )?;
    mat(
        "jacobian_boxminus_rhs",
        m2.jacobian_boxminus_rhs(&m1),
        q2.jacobian_boxminus_rhs(&q1),
    )?;
    mat(
        "jacobian_boxplus_lhs",
        m1.jacobian_boxplus_lhs(&theta),
        q1.jacobian_boxplus_lhs(&theta),
    )?;
    mat(
        "jacobian_boxplus_rhs",
        m1.jacobian_boxplus_rhs(&theta),
        q1.jacobian_boxplus_rhs(&theta),
    )?;
    mat(
        "jacobian_exp",
        M::<T>::jacobian_exp(&theta),
        <Q<T> as LieGroup<T>>::jacobian_exp(&theta),
    )?;
    mat("jacobian_log", m1.jacobian_log(), q1.jacobian_log())?;
    t.check(
        "angle",
        (Real::to_f64(m1.angle()) - Real::to_f64(LieGroup::<T>::angle(&q1))).abs(),
        tol,
    )
}

scalar_property_tests! { check_matrix_quaternion_agree, agree_input;
    fn matrix_quaternion_agree_f32: f32;
    fn matrix_quaternion_agree_f64: f64;
}
