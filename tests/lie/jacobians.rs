//! Every analytic Jacobian of `lie_xpbd::lie` against central finite differences
//! (`lie::numdiff`) of body-frame boxplus perturbations, for all four combinations
//! SO3Matrix / UnitQuaternion × f32 / f64 (paper (14), (16), (18); blocks (20)–(28)).
//!
//! # Tolerance
//! Every check uses step `h = T::fd_step()` and passes if
//! `numdiff::max_relative_error(analytic, fd) ≤ T::fd_tolerance()`, i.e.
//! `max|J − J_fd| ≤ tol · max(1, max|J|)`. Why these values (see the docs of
//! `Real::fd_step` / `Real::fd_tolerance` in `src/lie/real.rs`): a central difference has
//! truncation error ≈ h²/6·|f'''| and round-off ≈ ε·|f|/h.
//! * f64: h = 1e-5 ≈ ε^(1/3) balances the two at ≈ 1e-10 for functions with unit
//!   derivatives; tol = 1e-7 leaves a factor ~100–1000 for the larger third derivatives
//!   of Exp/Γ at |θ| up to 10 rad and of the matrix entries multiplied by |p| ≤ 3.
//! * f32: h = 1e-3, round-off ε/h ≈ 1.2e-4 dominates (truncation h²/6 ≈ 2e-7);
//!   tol = 2e-3 ≈ 16·ε/h covers the round-off of the group operations that go into one
//!   difference (a handful of rounded products, |p| ≤ 3).
//!
//! Rotations whose Log is differenced stay at angles ≤ π − 10h (harness
//! `fd_max_angle`): Log is smooth up to its branch cut at π (its derivative Γ⁻¹ is smooth
//! for |θ| < 2π), so the FD error does not grow near π as long as ±h does not cross the
//! cut. Checks that only take Log of *small* relative rotations (act, inverse, compose,
//! ⊞) use any rotation, π included. Exp, Γ and the ∂Γ/∂θ contraction are checked for
//! rotation vectors up to 10 rad.
//!
//! Measured worst `max_relative_error` over all Jacobians (`[lie-report]` lines of
//! `cargo test --test lie jacobians:: -- --nocapture`, release, PROPTEST_CASES=20000):
//! f64 1.9e-10 (0.002·tol), f32 9.8e-4 (0.49·tol); with 200000 cases per f32 test the
//! f32 worst is 1.09e-3 (0.54·tol, ⊟ w.r.t. its first argument, matrix), so the f32
//! tolerance is not flaky at the default 256 cases.

use crate::lie_harness;

use lie_harness::*;
use lie_xpbd::lie::numdiff;
use lie_xpbd::lie::so3::{
    alpha, beta, hat, right_jacobian, right_jacobian_derivative_contraction, right_jacobian_inv,
};
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use nalgebra::{DMatrix, DVector, Matrix3, Vector3};

/// Records `max_relative_error(analytic, fd)` against `T::fd_tolerance()` (module docs).
fn fd_check<T: Real>(
    t: &Tracker,
    label: &'static str,
    analytic: &Matrix3<T>,
    fd: &DMatrix<T>,
) -> CheckResult {
    let err = numdiff::max_relative_error(analytic, fd);
    t.check(label, Real::to_f64(err), Real::to_f64(T::fd_tolerance()))
}

/// Same as [`fd_check`] for a 3×3 finite-difference result.
fn fd_check3<T: Real>(
    t: &Tracker,
    label: &'static str,
    analytic: &Matrix3<T>,
    fd: &Matrix3<T>,
) -> CheckResult {
    let err = numdiff::max_relative_error(analytic, fd);
    t.check(label, Real::to_f64(err), Real::to_f64(T::fd_tolerance()))
}

// ------------------------------------------------------------------- (20) D_R(R p) = −R p̂

fn check_jacobian_act<T: Real, G: LieGroup<T>>((r, p): (V, V), t: &Tracker) -> CheckResult {
    let r = G::exp(&v3::<T>(&r));
    let p = v3::<T>(&p);
    let fd = numdiff::rotation_to_vector(|x: &G| dvec(&x.act(&p)), &r, T::fd_step());
    fd_check(t, "jacobian_act vs FD", &r.jacobian_act(&p), &fd)
}

group_property_tests! { check_jacobian_act, rotation_and_point;
    fn jacobian_act_matrix_f32: f32, SO3Matrix;
    fn jacobian_act_matrix_f64: f64, SO3Matrix;
    fn jacobian_act_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_act_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------------------ D_R(Rᵀ p) = (Rᵀp)^ from (20), (21)

fn check_jacobian_act_inv<T: Real, G: LieGroup<T>>((r, p): (V, V), t: &Tracker) -> CheckResult {
    let r = G::exp(&v3::<T>(&r));
    let p = v3::<T>(&p);
    let fd = numdiff::rotation_to_vector(|x: &G| dvec(&x.act_inv(&p)), &r, T::fd_step());
    fd_check(t, "jacobian_act_inv vs FD", &r.jacobian_act_inv(&p), &fd)
}

group_property_tests! { check_jacobian_act_inv, rotation_and_point;
    fn jacobian_act_inv_matrix_f32: f32, SO3Matrix;
    fn jacobian_act_inv_matrix_f64: f64, SO3Matrix;
    fn jacobian_act_inv_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_act_inv_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------------------------ (21) D_R(R⁻¹) = −R

fn check_jacobian_inverse<T: Real, G: LieGroup<T>>(r: V, t: &Tracker) -> CheckResult {
    let r = G::exp(&v3::<T>(&r));
    let fd = numdiff::rotation_to_rotation(|x: &G| x.inverse(), &r, T::fd_step());
    fd_check3(t, "jacobian_inverse vs FD", &r.jacobian_inverse(), &fd)
}

group_property_tests! { check_jacobian_inverse, any_rotation;
    fn jacobian_inverse_matrix_f32: f32, SO3Matrix;
    fn jacobian_inverse_matrix_f64: f64, SO3Matrix;
    fn jacobian_inverse_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_inverse_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------------------ (22) D_R₁(R₁R₂) = R₂ᵀ

fn check_jacobian_compose_lhs<T: Real, G: LieGroup<T>>(
    (r1, r2): (V, V),
    t: &Tracker,
) -> CheckResult {
    let r1 = G::exp(&v3::<T>(&r1));
    let r2 = G::exp(&v3::<T>(&r2));
    let fd = numdiff::rotation_to_rotation(|x: &G| x.compose(&r2), &r1, T::fd_step());
    fd_check3(
        t,
        "jacobian_compose_lhs vs FD",
        &r1.jacobian_compose_lhs(&r2),
        &fd,
    )
}

group_property_tests! { check_jacobian_compose_lhs, two_rotations;
    fn jacobian_compose_lhs_matrix_f32: f32, SO3Matrix;
    fn jacobian_compose_lhs_matrix_f64: f64, SO3Matrix;
    fn jacobian_compose_lhs_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_compose_lhs_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------------------ (23) D_R₂(R₁R₂) = I

fn check_jacobian_compose_rhs<T: Real, G: LieGroup<T>>(
    (r1, r2): (V, V),
    t: &Tracker,
) -> CheckResult {
    let r1 = G::exp(&v3::<T>(&r1));
    let r2 = G::exp(&v3::<T>(&r2));
    let fd = numdiff::rotation_to_rotation(|x: &G| r1.compose(x), &r2, T::fd_step());
    fd_check3(
        t,
        "jacobian_compose_rhs vs FD",
        &r1.jacobian_compose_rhs(&r2),
        &fd,
    )
}

group_property_tests! { check_jacobian_compose_rhs, two_rotations;
    fn jacobian_compose_rhs_matrix_f32: f32, SO3Matrix;
    fn jacobian_compose_rhs_matrix_f64: f64, SO3Matrix;
    fn jacobian_compose_rhs_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_compose_rhs_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------- (28) D_R₁(R₁ ⊟ R₂) = Γ⁻¹(R₁ ⊟ R₂)

fn check_jacobian_boxminus_lhs<T: Real, G: LieGroup<T>>(
    (base, rel): (V, V),
    t: &Tracker,
) -> CheckResult {
    let r2 = G::exp(&v3::<T>(&base));
    let r1 = r2.boxplus(&v3::<T>(&rel));
    let fd = numdiff::rotation_to_vector(|x: &G| dvec(&x.boxminus(&r2)), &r1, T::fd_step());
    fd_check(
        t,
        "jacobian_boxminus_lhs vs FD",
        &r1.jacobian_boxminus_lhs(&r2),
        &fd,
    )
}

group_property_tests! { check_jacobian_boxminus_lhs, base_and_fd_relative;
    fn jacobian_boxminus_lhs_matrix_f32: f32, SO3Matrix;
    fn jacobian_boxminus_lhs_matrix_f64: f64, SO3Matrix;
    fn jacobian_boxminus_lhs_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_boxminus_lhs_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------ (28) D_R₂(R₁ ⊟ R₂) = −Γ⁻¹(R₁ ⊟ R₂)ᵀ

fn check_jacobian_boxminus_rhs<T: Real, G: LieGroup<T>>(
    (base, rel): (V, V),
    t: &Tracker,
) -> CheckResult {
    let r2 = G::exp(&v3::<T>(&base));
    let r1 = r2.boxplus(&v3::<T>(&rel));
    let fd = numdiff::rotation_to_vector(|x: &G| dvec(&r1.boxminus(x)), &r2, T::fd_step());
    fd_check(
        t,
        "jacobian_boxminus_rhs vs FD",
        &r1.jacobian_boxminus_rhs(&r2),
        &fd,
    )
}

group_property_tests! { check_jacobian_boxminus_rhs, base_and_fd_relative;
    fn jacobian_boxminus_rhs_matrix_f32: f32, SO3Matrix;
    fn jacobian_boxminus_rhs_matrix_f64: f64, SO3Matrix;
    fn jacobian_boxminus_rhs_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_boxminus_rhs_quaternion_f64: f64, UnitQuaternion;
}

// --------------------------------------------------------- D_R(R ⊞ θ) = Exp(θ)ᵀ, from (22)

fn check_jacobian_boxplus_lhs<T: Real, G: LieGroup<T>>(
    (r, theta): (V, V),
    t: &Tracker,
) -> CheckResult {
    let r = G::exp(&v3::<T>(&r));
    let theta = v3::<T>(&theta);
    let fd = numdiff::rotation_to_rotation(|x: &G| x.boxplus(&theta), &r, T::fd_step());
    fd_check3(
        t,
        "jacobian_boxplus_lhs vs FD",
        &r.jacobian_boxplus_lhs(&theta),
        &fd,
    )
}

group_property_tests! { check_jacobian_boxplus_lhs, rotation_and_long_vector;
    fn jacobian_boxplus_lhs_matrix_f32: f32, SO3Matrix;
    fn jacobian_boxplus_lhs_matrix_f64: f64, SO3Matrix;
    fn jacobian_boxplus_lhs_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_boxplus_lhs_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------ D_θ(R ⊞ θ) = Γ(θ), from (23) and (26)

fn check_jacobian_boxplus_rhs<T: Real, G: LieGroup<T>>(
    (r, theta): (V, V),
    t: &Tracker,
) -> CheckResult {
    let r = G::exp(&v3::<T>(&r));
    let theta = v3::<T>(&theta);
    let fd = numdiff::vector_to_rotation(|v: &Vector3<T>| r.boxplus(v), &theta, T::fd_step());
    fd_check3(
        t,
        "jacobian_boxplus_rhs vs FD",
        &r.jacobian_boxplus_rhs(&theta),
        &fd,
    )
}

group_property_tests! { check_jacobian_boxplus_rhs, rotation_and_long_vector;
    fn jacobian_boxplus_rhs_matrix_f32: f32, SO3Matrix;
    fn jacobian_boxplus_rhs_matrix_f64: f64, SO3Matrix;
    fn jacobian_boxplus_rhs_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_boxplus_rhs_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------------------ (25)/(26) D_θ Exp(θ) = Γ(θ)

fn check_jacobian_exp<T: Real, G: LieGroup<T>>(theta: V, t: &Tracker) -> CheckResult {
    let theta = v3::<T>(&theta);
    let fd = numdiff::vector_to_rotation(|v: &Vector3<T>| G::exp(v), &theta, T::fd_step());
    fd_check3(t, "jacobian_exp vs FD", &G::jacobian_exp(&theta), &fd)
}

group_property_tests! { check_jacobian_exp, long_rotation_vector;
    fn jacobian_exp_matrix_f32: f32, SO3Matrix;
    fn jacobian_exp_matrix_f64: f64, SO3Matrix;
    fn jacobian_exp_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_exp_quaternion_f64: f64, UnitQuaternion;
}

// ----------------------------------------------------------- (27) D_R Log(R) = Γ⁻¹(Log R)

fn check_jacobian_log<T: Real, G: LieGroup<T>>(r: V, t: &Tracker) -> CheckResult {
    let r = G::exp(&v3::<T>(&r));
    let fd = numdiff::rotation_to_vector(|x: &G| dvec(&x.log()), &r, T::fd_step());
    fd_check(t, "jacobian_log vs FD", &r.jacobian_log(), &fd)
}

group_property_tests! { check_jacobian_log, fd_rotation;
    fn jacobian_log_matrix_f32: f32, SO3Matrix;
    fn jacobian_log_matrix_f64: f64, SO3Matrix;
    fn jacobian_log_quaternion_f32: f32, UnitQuaternion;
    fn jacobian_log_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------- App. G: M = ∂(Γ(θ)w)/∂θ (the ∂Γ/∂θ contraction)

fn check_right_jacobian_derivative_contraction<T: Real>(
    (theta, w): (V, V),
    t: &Tracker,
) -> CheckResult {
    let theta = v3::<T>(&theta);
    let w = v3::<T>(&w);
    let f = |x: &DVector<T>| dvec(&(right_jacobian(&Vector3::new(x[0], x[1], x[2])) * w));
    let fd = numdiff::vector_to_vector(f, &dvec(&theta), T::fd_step());
    let analytic = right_jacobian_derivative_contraction(&theta, &w);
    fd_check(t, "contraction vs FD", &analytic, &fd)
}

scalar_property_tests! { check_right_jacobian_derivative_contraction, long_vector_and_point;
    fn right_jacobian_derivative_contraction_f32: f32;
    fn right_jacobian_derivative_contraction_f64: f64;
}

// ------------------------------------------------------------- the checks are not vacuous

/// Plausible wrong formulas fail the same finite-difference check by a wide margin (error
/// ≥ 10× the tolerance) on a generic input: a sign error in (20), Γ⁻¹ without the
/// transpose in (28), the left Jacobian Γᵀ instead of Γ for Exp, Γ instead of Γ⁻¹ for
/// Log, R instead of Rᵀ in (22), and the ∂Γ/∂θ contraction without its α'/β' terms
/// (which is what leaving out ∂Γ/∂θ's dependence on |θ| would give).
fn check_fd_rejects_wrong_jacobians<T: Real>(t: &Tracker) -> CheckResult {
    type G<T> = SO3Matrix<T>;
    let h = T::fd_step();
    let tol = Real::to_f64(T::fd_tolerance());
    let r = G::<T>::exp(&v3::<T>(&V::new(0.4, -1.1, 2.0)));
    let r2 = G::<T>::exp(&v3::<T>(&V::new(-0.3, 0.8, 0.5)));
    let rel = v3::<T>(&V::new(0.7, 0.2, -0.9));
    let r1 = r2.boxplus(&rel);
    let p = v3::<T>(&V::new(1.0, -2.0, 0.5));
    let w = v3::<T>(&V::new(0.7, -1.3, 0.4));
    let th = v3::<T>(&V::new(1.2, -0.4, 0.9));
    // Reported as 10·tol / error, which must be ≤ 1.
    let reject = |label: &'static str, wrong: &Matrix3<T>, fd: &DMatrix<T>| {
        let err = Real::to_f64(numdiff::max_relative_error(wrong, fd));
        t.check(label, 10.0 * tol / err, 1.0)
    };
    let as_d = |m: Matrix3<T>| DMatrix::from_column_slice(3, 3, m.as_slice());

    let fd = numdiff::rotation_to_vector(|x: &G<T>| dvec(&x.act(&p)), &r, h);
    reject("+R p̂ for (20)", &(-r.jacobian_act(&p)), &fd)?;
    let fd = numdiff::rotation_to_vector(|x: &G<T>| dvec(&r1.boxminus(x)), &r2, h);
    reject(
        "−Γ⁻¹ (no ᵀ) for (28)",
        &(-right_jacobian_inv(&r1.boxminus(&r2))),
        &fd,
    )?;
    let fd = numdiff::vector_to_rotation(|v: &Vector3<T>| G::<T>::exp(v), &th, h);
    reject(
        "Γᵀ for D Exp",
        &G::<T>::jacobian_exp(&th).transpose(),
        &as_d(fd),
    )?;
    let fd = numdiff::rotation_to_vector(|x: &G<T>| dvec(&x.log()), &r, h);
    reject("Γ for D Log", &right_jacobian(&r.log()), &fd)?;
    let fd = numdiff::rotation_to_rotation(|x: &G<T>| x.compose(&r2), &r, h);
    reject("R₂ for (22)", &r2.to_matrix(), &as_d(fd))?;
    let f = |x: &DVector<T>| dvec(&(right_jacobian(&Vector3::new(x[0], x[1], x[2])) * w));
    let fd = numdiff::vector_to_vector(f, &dvec(&th), h);
    let full = right_jacobian_derivative_contraction(&th, &w);
    let (a, b) = (alpha(th.norm()), beta(th.norm()));
    let two = T::one() + T::one();
    let partial = hat(&w) * a
        + (th * w.transpose() - w * th.transpose() * two + Matrix3::identity() * th.dot(&w)) * b;
    reject("contraction without α', β' terms", &partial, &fd)?;
    // ... while the full formula passes.
    fd_check(t, "full contraction passes", &full, &fd)
}

scalar_fixed_tests! { check_fd_rejects_wrong_jacobians;
    fn fd_check_rejects_wrong_jacobians_f32: f32;
    fn fd_check_rejects_wrong_jacobians_f64: f64;
}
