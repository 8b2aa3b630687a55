//! Bad input to the checked constructors of `lie_xpbd::lie`, for all four combinations
//! SO3Matrix / UnitQuaternion × f32 / f64: NaN and ±∞ (`LieError::NonFinite` with the
//! index of the first bad entry), non-orthogonal matrices (`NotOrthogonal`), reflections
//! (`Reflection`), zero quaternions (`ZeroQuaternion`); the `Display` text of each error
//! says what is wrong; valid but sloppy input (non-unit quaternions of any scale, matrices
//! a little off orthogonal) is accepted and projected onto the group; and arbitrary input,
//! including every special float, never panics.

use crate::lie_harness;

use lie_harness::*;
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieError, LieGroup, Real, SO3Matrix, UnitQuaternion};
use nalgebra::{Matrix3, Quaternion, Vector3};
use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Union};
use proptest::test_runner::TestCaseError;

fn bad_values<T: Real>() -> [T; 3] {
    [
        c::<T>(f64::NAN),
        c::<T>(f64::INFINITY),
        c::<T>(f64::NEG_INFINITY),
    ]
}

fn fail(msg: String) -> TestCaseError {
    TestCaseError::fail(msg)
}

/// A generic rotation to corrupt.
fn some_rotation<T: Real>() -> Matrix3<T> {
    SO3Matrix::<T>::exp(&v3::<T>(&V::new(0.4, -1.1, 2.0))).to_matrix()
}

/// Requires `Err(NonFinite { what, index })` and a Display naming the input and index.
fn expect_non_finite<T: Real, G: LieGroup<T>>(
    t: &Tracker,
    r: Result<G, LieError>,
    what: &str,
    index: usize,
) -> CheckResult {
    match r {
        Err(LieError::NonFinite { what: w, index: i }) if w == what && i == index => {
            let msg = LieError::NonFinite { what: w, index: i }.to_string();
            t.require(
                "NonFinite display",
                msg.contains(what)
                    && msg.contains("non-finite")
                    && msg.contains(&format!("index {index}")),
                || format!("unhelpful message: {msg}"),
            )
        }
        other => Err(fail(format!(
            "expected NonFinite {{ what: {what}, index: {index} }}, got {other:?}"
        ))),
    }
}

// ------------------------------------------------------------------- NaN / ∞

/// Every entry of the matrix (column-major index), each of NaN, +∞, −∞; and with two bad
/// entries, the first one (in column-major order) is reported.
fn check_from_matrix_non_finite<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    for index in 0..9 {
        for bad in bad_values::<T>() {
            let mut m = some_rotation::<T>();
            m.as_mut_slice()[index] = bad;
            expect_non_finite::<T, G>(t, G::from_matrix(&m), "rotation matrix", index)?;
            if index < 8 {
                m.as_mut_slice()[8] = c::<T>(f64::NAN);
                expect_non_finite::<T, G>(t, G::from_matrix(&m), "rotation matrix", index)?;
            }
        }
    }
    // Column-major: entry (row 2, column 0) is index 2, (row 0, column 1) is index 3.
    let mut m = some_rotation::<T>();
    m[(0, 1)] = c::<T>(f64::NAN);
    expect_non_finite::<T, G>(t, G::from_matrix(&m), "rotation matrix", 3)
}

group_fixed_tests! { check_from_matrix_non_finite;
    fn from_matrix_non_finite_matrix_f32: f32, SO3Matrix;
    fn from_matrix_non_finite_matrix_f64: f64, SO3Matrix;
    fn from_matrix_non_finite_quaternion_f32: f32, UnitQuaternion;
    fn from_matrix_non_finite_quaternion_f64: f64, UnitQuaternion;
}

/// Quaternion entries are indexed i, j, k, w (nalgebra's `coords` order).
fn check_from_quaternion_non_finite<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    for index in 0..4 {
        for bad in bad_values::<T>() {
            let mut q = Quaternion::new(c::<T>(0.5), c::<T>(-0.5), c::<T>(0.5), c::<T>(0.5));
            q.coords[index] = bad;
            expect_non_finite::<T, G>(t, G::from_quaternion(&q), "quaternion", index)?;
        }
    }
    // Quaternion::new(w, i, j, k): a NaN in w is index 3.
    let q = Quaternion::new(c::<T>(f64::NAN), T::one(), T::zero(), T::zero());
    expect_non_finite::<T, G>(t, G::from_quaternion(&q), "quaternion", 3)
}

group_fixed_tests! { check_from_quaternion_non_finite;
    fn from_quaternion_non_finite_matrix_f32: f32, SO3Matrix;
    fn from_quaternion_non_finite_matrix_f64: f64, SO3Matrix;
    fn from_quaternion_non_finite_quaternion_f32: f32, UnitQuaternion;
    fn from_quaternion_non_finite_quaternion_f64: f64, UnitQuaternion;
}

fn check_try_exp_non_finite<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    for index in 0..3 {
        for bad in bad_values::<T>() {
            let mut v = v3::<T>(&V::new(0.1, 0.2, 0.3));
            v[index] = bad;
            expect_non_finite::<T, G>(t, G::try_exp(&v), "rotation vector", index)?;
        }
    }
    // Finite input: same as exp, for any length.
    for v in [
        V::zeros(),
        V::new(0.1, -0.2, 0.3),
        V::new(3.0, 4.0, -12.0),
        V::new(1e-30, 0.0, 0.0),
    ] {
        let v = v3::<T>(&v);
        let r = G::try_exp(&v).map_err(|e| fail(e.to_string()))?;
        t.check("try_exp = exp", rot_dist(&r, &G::exp(&v)), 0.0)?;
    }
    Ok(())
}

group_fixed_tests! { check_try_exp_non_finite;
    fn try_exp_non_finite_matrix_f32: f32, SO3Matrix;
    fn try_exp_non_finite_matrix_f64: f64, SO3Matrix;
    fn try_exp_non_finite_quaternion_f32: f32, UnitQuaternion;
    fn try_exp_non_finite_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------------------------- not orthogonal

fn check_from_matrix_not_orthogonal<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    let r = some_rotation::<T>();
    let tol = T::orthogonality_tolerance();
    let huge = c::<T>(if T::NAME == "f32" { 1e30 } else { 1e200 });
    let mut shear = Matrix3::<T>::identity();
    shear[(0, 1)] = c::<T>(0.1);
    // Finite entries whose products overflow: RᵀR has ∞ − ∞ = NaN off the diagonal and
    // det = +∞, so neither `dev > tol` nor `det < 0` would catch it.
    let overflow = Matrix3::new(
        huge,
        huge,
        T::zero(),
        huge,
        -huge,
        T::zero(),
        T::zero(),
        T::zero(),
        -T::one(),
    );
    let mut rank1 = Matrix3::<T>::zeros();
    rank1.set_column(0, &Vector3::x());
    let cases = [
        ("scaled rotation 1.01 R", r * c::<T>(1.01)),
        ("scaled rotation 0.5 R", r * c::<T>(0.5)),
        ("shear", shear),
        ("zero matrix", Matrix3::zeros()),
        ("rank one", rank1),
        ("all ones", Matrix3::repeat(T::one())),
        (
            "rotation plus 10·tolerance",
            r + Matrix3::repeat(tol * c::<T>(10.0)),
        ),
        ("huge entries", Matrix3::identity() * huge),
        ("RᵀR overflowing to NaN", overflow),
    ];
    for (name, m) in cases {
        match G::from_matrix(&m) {
            Err(LieError::NotOrthogonal {
                deviation,
                tolerance,
            }) => {
                let want = mf(&(m.transpose() * m - Matrix3::identity())).norm();
                t.require(
                    "NotOrthogonal fields",
                    tolerance == Real::to_f64(tol),
                    || format!("{name}: tolerance {tolerance} is not orthogonality_tolerance()"),
                )?;
                let dev_ok = (!deviation.is_finite() && !want.is_finite())
                    || (deviation - want).abs() <= 1e-5 * want;
                t.require(
                    "NotOrthogonal fields",
                    dev_ok && (deviation.is_nan() || deviation > tolerance),
                    || format!("{name}: deviation {deviation} vs ‖RᵀR − I‖ = {want}"),
                )?;
                let msg = LieError::NotOrthogonal {
                    deviation,
                    tolerance,
                }
                .to_string();
                t.require(
                    "NotOrthogonal display",
                    msg.contains("not a rotation")
                        && msg.contains("RᵀR")
                        && msg.contains("tolerance"),
                    || format!("unhelpful message: {msg}"),
                )?;
            }
            other => {
                return Err(fail(format!(
                    "{name}: expected NotOrthogonal, got {other:?}"
                )))
            }
        }
    }
    Ok(())
}

group_fixed_tests! { check_from_matrix_not_orthogonal;
    fn from_matrix_not_orthogonal_matrix_f32: f32, SO3Matrix;
    fn from_matrix_not_orthogonal_matrix_f64: f64, SO3Matrix;
    fn from_matrix_not_orthogonal_quaternion_f32: f32, UnitQuaternion;
    fn from_matrix_not_orthogonal_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------------------------- reflection

fn check_from_matrix_reflection<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    let r = some_rotation::<T>();
    let n = v3::<T>(&V::new(1.0, -2.0, 2.0).normalize());
    let cases = [
        ("−I", -Matrix3::<T>::identity()),
        (
            "diag(1, 1, −1)",
            Matrix3::from_diagonal(&Vector3::new(T::one(), T::one(), -T::one())),
        ),
        (
            "R·diag(1, −1, 1)",
            r * Matrix3::from_diagonal(&Vector3::new(T::one(), -T::one(), T::one())),
        ),
        (
            "Householder I − 2nnᵀ",
            Matrix3::identity() - n * n.transpose() * c::<T>(2.0),
        ),
        ("−R", -r),
    ];
    for (name, m) in cases {
        match G::from_matrix(&m) {
            Err(LieError::Reflection { determinant }) => {
                t.check(
                    "Reflection determinant = −1",
                    (determinant + 1.0).abs(),
                    16.0 * eps::<T>(),
                )?;
                let msg = LieError::Reflection { determinant }.to_string();
                t.require(
                    "Reflection display",
                    msg.contains("reflection") && msg.contains("det"),
                    || format!("unhelpful message: {msg}"),
                )?;
            }
            other => return Err(fail(format!("{name}: expected Reflection, got {other:?}"))),
        }
    }
    Ok(())
}

group_fixed_tests! { check_from_matrix_reflection;
    fn from_matrix_reflection_matrix_f32: f32, SO3Matrix;
    fn from_matrix_reflection_matrix_f64: f64, SO3Matrix;
    fn from_matrix_reflection_quaternion_f32: f32, UnitQuaternion;
    fn from_matrix_reflection_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------------------------- zero quaternion

/// The norm threshold is √ε (1.5e-8 in f64, 3.5e-4 in f32).
fn check_from_quaternion_zero<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    let small = c::<T>(eps::<T>().sqrt() * 0.1);
    let cases = [
        (
            "zero",
            Quaternion::new(T::zero(), T::zero(), T::zero(), T::zero()),
        ),
        (
            "negative zero",
            Quaternion::new(-T::zero(), -T::zero(), -T::zero(), -T::zero()),
        ),
        ("below √ε", Quaternion::new(small, small, T::zero(), -small)),
        (
            "smallest subnormal",
            Quaternion::new(c::<T>(min_positive::<T>()), T::zero(), T::zero(), T::zero()),
        ),
    ];
    for (name, q) in cases {
        match G::from_quaternion(&q) {
            Err(LieError::ZeroQuaternion { norm }) => {
                // |q| computed without underflow: scale by the largest entry.
                let qf = q.coords.map(|x| Real::to_f64(x));
                let m = qf.amax();
                let want = if m == 0.0 { 0.0 } else { m * (qf / m).norm() };
                t.check("ZeroQuaternion norm", (norm - want).abs(), 1e-6 * want)?;
                let msg = LieError::ZeroQuaternion { norm }.to_string();
                t.require(
                    "ZeroQuaternion display",
                    msg.contains("quaternion") && msg.contains("norm") && msg.contains("too small"),
                    || format!("unhelpful message: {msg}"),
                )?;
            }
            other => {
                return Err(fail(format!(
                    "{name}: expected ZeroQuaternion, got {other:?}"
                )))
            }
        }
    }
    Ok(())
}

fn min_positive<T: Real>() -> f64 {
    if T::NAME == "f32" {
        f64::from(f32::from_bits(1))
    } else {
        f64::from_bits(1)
    }
}

group_fixed_tests! { check_from_quaternion_zero;
    fn from_quaternion_zero_matrix_f32: f32, SO3Matrix;
    fn from_quaternion_zero_matrix_f64: f64, SO3Matrix;
    fn from_quaternion_zero_quaternion_f32: f32, UnitQuaternion;
    fn from_quaternion_zero_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------------- accepted, and projected to the group

/// Tolerance for "is a rotation" on accepted input: ‖RᵀR − I‖_max, |det − 1| and
/// |‖q‖ − 1| within 16ε, i.e. as good as a rotation built by Exp (identities.rs
/// measures ≤ 9ε for those).
fn group_tol<T: Real>() -> f64 {
    16.0 * eps::<T>()
}

/// Checks that an accepted rotation is on the group to round-off.
fn check_on_group<T: Real, G: LieGroup<T>>(t: &Tracker, r: &G, what: &str) -> CheckResult {
    let m = mf(&r.to_matrix());
    let q = r.to_quaternion();
    t.require("accepted output finite", finite_m(&r.to_matrix()), || {
        format!("{what}: {m:?}")
    })?;
    t.check(
        "accepted output orthonormal",
        max_abs(&(m.transpose() * m - Matrix3::identity())),
        group_tol::<T>(),
    )?;
    t.check(
        "accepted output det = 1",
        (m.determinant() - 1.0).abs(),
        group_tol::<T>(),
    )?;
    t.check(
        "accepted output |q| = 1",
        (Real::to_f64(q.norm()) - 1.0).abs(),
        group_tol::<T>(),
    )
}

/// Non-unit quaternions of any scale that does not overflow are normalised; the rotation
/// is that of q/|q|.
fn check_from_quaternion_scaling<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    let big: &[f64] = if T::NAME == "f32" {
        &[1e19, 1e25, 1e37]
    } else {
        &[1e100, 1e160, 1e300]
    };
    let q0 = Quaternion::new(c::<T>(0.5), c::<T>(-0.5), c::<T>(0.5), c::<T>(0.5));
    let want = G::from_quaternion(&q0).map_err(|e| fail(e.to_string()))?;
    let mut scales = vec![1e-3, 0.7, 1.0, 3.0, 1e6];
    scales.extend_from_slice(big);
    for s in scales {
        let q = q0 * c::<T>(s);
        let r = G::from_quaternion(&q).map_err(|e| fail(format!("scale {s:e}: {e}")))?;
        check_on_group::<T, G>(t, &r, &format!("quaternion scaled by {s:e}"))?;
        t.check(
            "from_quaternion(s·q) = from_quaternion(q)",
            rot_dist(&r, &want),
            group_tol::<T>(),
        )?;
        let rn = G::from_quaternion(&-q).map_err(|e| fail(e.to_string()))?;
        t.check(
            "from_quaternion(−q) = from_quaternion(q)",
            rot_dist(&rn, &want),
            group_tol::<T>(),
        )?;
    }
    Ok(())
}

group_fixed_tests! { check_from_quaternion_scaling;
    fn from_quaternion_scaling_matrix_f32: f32, SO3Matrix;
    fn from_quaternion_scaling_matrix_f64: f64, SO3Matrix;
    fn from_quaternion_scaling_quaternion_f32: f32, UnitQuaternion;
    fn from_quaternion_scaling_quaternion_f64: f64, UnitQuaternion;
}

/// (rotation vector, perturbation direction, fraction of the tolerance in [0, 0.9]).
fn near_orthogonal_input<T: Real>() -> BoxedStrategy<(V, [f64; 9], f64)> {
    (
        any_rotation::<T>(),
        proptest::array::uniform9(-1.0f64..1.0),
        0.0f64..0.9,
    )
        .boxed()
}

/// A rotation plus a perturbation E scaled so that ‖RᵀR − I‖_F ≈ f·tolerance with f < 0.9:
/// accepted, projected onto the group to round-off, and within ~‖E‖ of R.
fn check_from_matrix_near_orthogonal<T: Real, G: LieGroup<T>>(
    (theta, dir, frac): (V, [f64; 9], f64),
    t: &Tracker,
) -> CheckResult {
    let r = SO3Matrix::<f64>::exp(&theta).to_matrix();
    let e = Matrix3::from_column_slice(&dir);
    if e.norm() == 0.0 {
        return Ok(());
    }
    // ‖RᵀR − I‖_F ≈ ‖RᵀE + EᵀR‖_F ≤ 2‖E‖_F: scale E so this is at most frac·tol.
    let tol = Real::to_f64(T::orthogonality_tolerance());
    let e = e * (frac * tol / (2.0 * e.norm()));
    let m = r + e;
    let mt = m.map(|x| c::<T>(x));
    let g = G::from_matrix(&mt).map_err(|err| fail(format!("rejected: {err}")))?;
    check_on_group::<T, G>(t, &g, "near-orthogonal matrix")?;
    // The polar factor of M = R + E is within ‖E‖_F of R (plus rounding of M to T).
    let dist = max_abs(&(mf(&g.to_matrix()) - r));
    t.check("from_matrix(R + E) ≈ R", dist, e.norm() + group_tol::<T>())
}

group_property_tests! { check_from_matrix_near_orthogonal, near_orthogonal_input;
    fn from_matrix_near_orthogonal_matrix_f32: f32, SO3Matrix;
    fn from_matrix_near_orthogonal_matrix_f64: f64, SO3Matrix;
    fn from_matrix_near_orthogonal_quaternion_f32: f32, UnitQuaternion;
    fn from_matrix_near_orthogonal_quaternion_f64: f64, UnitQuaternion;
}

// ------------------------------------------------------------------- no panics, ever

/// Any f64 (normal, subnormal, zero, ±∞, NaN of any sign) mixed with small values, so
/// that some inputs are finite and near the group.
fn any_entry() -> BoxedStrategy<f64> {
    Union::new_weighted(vec![
        (3, any::<f64>().boxed()),
        (5, (-1.5f64..1.5).boxed()),
        (1, Just(0.0).boxed()),
    ])
    .boxed()
}

#[allow(clippy::extra_unused_type_parameters)] // called as `arbitrary_input::<T>()`
fn arbitrary_input<T: Real>() -> BoxedStrategy<([f64; 9], [f64; 4], [f64; 3])> {
    (
        proptest::array::uniform9(any_entry()),
        proptest::array::uniform4(any_entry()),
        proptest::array::uniform3(any_entry()),
    )
        .boxed()
}

/// from_matrix / from_quaternion / try_exp on arbitrary input never panic, and whatever
/// they accept is a rotation to round-off.
fn check_arbitrary_input_never_panics<T: Real, G: LieGroup<T>>(
    (m, q, v): ([f64; 9], [f64; 4], [f64; 3]),
    t: &Tracker,
) -> CheckResult {
    let m = Matrix3::from_column_slice(&m).map(|x| c::<T>(x));
    let q = Quaternion::new(c::<T>(q[3]), c::<T>(q[0]), c::<T>(q[1]), c::<T>(q[2]));
    let v = Vector3::new(c::<T>(v[0]), c::<T>(v[1]), c::<T>(v[2]));
    if let Ok(r) = G::from_matrix(&m) {
        check_on_group::<T, G>(t, &r, &format!("from_matrix({m:?})"))?;
    }
    if let Ok(r) = G::from_quaternion(&q) {
        check_on_group::<T, G>(t, &r, &format!("from_quaternion({q:?})"))?;
    }
    match G::try_exp(&v) {
        // Exp of any finite vector whose norm is representable is a rotation (its angle
        // only matters mod 2π, and for |θ| ≫ 1/ε not even that, but it stays on the group).
        // For |θ| beyond √(T::MAX) (1.3e154 in f64, 1.8e19 in f32) |θ|² overflows:
        // try_exp rejects that as NormOverflow (checked below), so Ok always means finite.
        Ok(r) => {
            t.require(
                "try_exp finite on finite input",
                finite_m(&r.to_matrix()),
                || format!("{v:?}"),
            )?;
            check_on_group::<T, G>(t, &r, &format!("try_exp({v:?})"))
        }
        Err(LieError::NormOverflow { .. }) => t.require(
            "try_exp reports NormOverflow only for an overflowing norm",
            finite_v(&v) && !v.norm().is_finite(),
            || format!("{v:?}"),
        ),
        Err(LieError::NonFinite { .. }) => t.require(
            "try_exp rejects only non-finite input",
            !finite_v(&v),
            || format!("{v:?}"),
        ),
        Err(e) => Err(fail(format!("try_exp: unexpected error {e:?}"))),
    }
}

group_property_tests! { check_arbitrary_input_never_panics, arbitrary_input;
    fn arbitrary_input_never_panics_matrix_f32: f32, SO3Matrix;
    fn arbitrary_input_never_panics_matrix_f64: f64, SO3Matrix;
    fn arbitrary_input_never_panics_quaternion_f32: f32, UnitQuaternion;
    fn arbitrary_input_never_panics_quaternion_f64: f64, UnitQuaternion;
}

#[test]
fn try_exp_rejects_overflowing_norm() {
    // Every entry finite, but |θ|² overflows: rejected rather than a NaN rotation.
    let v = Vector3::new(1e200_f64, 1e200, 0.0);
    assert!(matches!(
        <SO3Matrix<f64> as LieGroup<f64>>::try_exp(&v),
        Err(LieError::NormOverflow { .. })
    ));
    let v = Vector3::new(1e20_f32, 0.0, 0.0);
    assert!(matches!(
        <UnitQuaternion<f32> as LieGroup<f32>>::try_exp(&v),
        Err(LieError::NormOverflow { .. })
    ));
}
