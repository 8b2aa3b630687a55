//! serde support of `lie_xpbd::lie` (feature `serde`): `SO3Matrix` as its rows and
//! `Pose` as `{ position, rotation: [w, x, y, z] }`, for f32 and f64 and both rotation
//! representations. Round trips (JSON), validation on reading (non-orthogonal matrices,
//! reflections, NaN, quaternions of norm ≠ 1, unknown fields, wrong shapes) with messages
//! that say what is wrong, poses crossing representations, and w ≥ 0 in the output.
//!
//! Run with `cargo test --features serde --test lie serde_support::`; without the feature this
//! file compiles to nothing.
//!
//! # Tolerances
//! In units of ε = `T::default_epsilon()`, on the largest entry of the difference of two
//! rotation matrices (`lie_harness::rot_dist`). Numbers go through JSON to within 1 ulp:
//! serde_json prints the shortest round-trip form, but without its `float_roundtrip`
//! feature (not enabled here) its parser is only guaranteed to 1 ulp, and f64 values do
//! come back 1 ulp off. What remains is the re-orthonormalisation
//! on reading (SO3Matrix: two Newton steps, a few ε) or a quaternion ↔ matrix conversion
//! and a normalisation (Pose, a few ε); the factors are 4–10× the worst error measured
//! over `PROPTEST_CASES=20000` cases.
#![cfg(feature = "serde")]

use crate::lie_harness;

use lie_harness::*;
use lie_xpbd::lie::{LieGroup, Pose, Real, SO3Matrix, UnitQuaternion};
use nalgebra::{Matrix3, Quaternion, Vector3};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// SO3Matrix JSON round trip: the entries come back within 1 ulp, then two Newton steps
/// of re-orthonormalisation (each a 3×3 product chain) on an input orthonormal to
/// round-off. Measured worst: 5.5ε (f64), 5.0ε (f32) for the rotation; 2.1ε for RᵀR − I.
const K_MATRIX_ROUNDTRIP: f64 = 32.0;
/// Pose JSON round trip, possibly across representations: matrix → quaternion (nalgebra,
/// a square root and a division) → normalised → (1 ulp through JSON) → matrix. Measured
/// worst: 6.0ε (from a matrix), 3.5ε (from a quaternion); |‖q‖ − 1| of the written
/// quaternion 1.2ε.
const K_POSE_ROUNDTRIP: f64 = 32.0;
/// A number through JSON: within 1 ulp (serde_json's default parser), and 1 ulp of x is
/// at most ε·max(1, |x|), exactly at that bound for x in [1, 2), so allow 2 ulps.
/// Measured worst: 1.0ε (positions in [1, 2), f64), 0.5ε (matrix entries).
const K_JSON_NUMBER: f64 = 2.0;

fn tol<T: Real>(k: f64) -> f64 {
    k * eps::<T>()
}

fn fail(msg: String) -> TestCaseError {
    TestCaseError::fail(msg)
}

fn to_json<S: Serialize>(x: &S) -> Result<String, TestCaseError> {
    serde_json::to_string(x).map_err(|e| fail(format!("serialize: {e}")))
}

fn from_json<D: DeserializeOwned>(s: &str) -> Result<D, TestCaseError> {
    serde_json::from_str(s).map_err(|e| fail(format!("deserialize {s}: {e}")))
}

/// Requires `serde_json::from_str::<D>(s)` to fail with a message containing every one of
/// `needles`.
fn expect_json_error<D: DeserializeOwned + std::fmt::Debug>(
    t: &Tracker,
    label: &'static str,
    s: &str,
    needles: &[&str],
) -> CheckResult {
    match serde_json::from_str::<D>(s) {
        Ok(v) => t.require(label, false, || format!("{s} was accepted as {v:?}")),
        Err(e) => {
            let msg = e.to_string();
            t.require(label, needles.iter().all(|n| msg.contains(n)), || {
                format!("message `{msg}` lacks one of {needles:?}")
            })
        }
    }
}

// ------------------------------------------------------------------ SO3Matrix

fn check_matrix_roundtrip<T>(r: V, t: &Tracker) -> CheckResult
where
    T: Real + Serialize + DeserializeOwned,
{
    let r = SO3Matrix::<T>::exp(&v3::<T>(&r));
    let s = to_json(&r)?;
    // Written as rows.
    let rows: [[T; 3]; 3] = from_json(&s)?;
    let rows_err = (0..3)
        .flat_map(|i| (0..3).map(move |j| (i, j)))
        .map(|(i, j)| Real::to_f64((rows[i][j] - r.matrix()[(i, j)]).abs()))
        .fold(0.0, f64::max);
    t.check(
        "SO3Matrix is written as its rows",
        rows_err,
        tol::<T>(K_JSON_NUMBER),
    )?;
    let back: SO3Matrix<T> = from_json(&s)?;
    t.check(
        "SO3Matrix JSON round trip",
        rot_dist(&back, &r),
        tol::<T>(K_MATRIX_ROUNDTRIP),
    )?;
    // Re-orthonormalised on reading.
    let m = mf(back.matrix());
    t.check(
        "SO3Matrix read back is orthonormal",
        max_abs(&(m.transpose() * m - Matrix3::identity())),
        tol::<T>(K_MATRIX_ROUNDTRIP),
    )
}

scalar_property_tests! { check_matrix_roundtrip, any_rotation;
    fn matrix_json_roundtrip_f32: f32;
    fn matrix_json_roundtrip_f64: f64;
}

/// A struct around a rotation, for TOML (whose top level must be a table), which unlike
/// JSON can write NaN and infinity.
#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Holder<R> {
    r: R,
}

fn check_matrix_errors<T>(t: &Tracker) -> CheckResult
where
    T: Real + Serialize + DeserializeOwned,
{
    type M<T> = SO3Matrix<T>;
    expect_json_error::<M<T>>(
        t,
        "scaled matrix → not a rotation",
        "[[1, 0, 0], [0, 1, 0], [0, 0, 1.1]]",
        &["not a rotation", "exceeds the tolerance"],
    )?;
    expect_json_error::<M<T>>(
        t,
        "sheared matrix → not a rotation",
        "[[1, 0.2, 0], [0, 1, 0], [0, 0, 1]]",
        &["not a rotation"],
    )?;
    expect_json_error::<M<T>>(
        t,
        "reflection → error",
        "[[1, 0, 0], [0, 1, 0], [0, 0, -1]]",
        &["reflection", "det = -1"],
    )?;
    expect_json_error::<M<T>>(
        t,
        "zero matrix",
        "[[0, 0, 0], [0, 0, 0], [0, 0, 0]]",
        &["not a rotation"],
    )?;
    expect_json_error::<M<T>>(
        t,
        "null entry (JSON NaN)",
        "[[null, 0, 0], [0, 1, 0], [0, 0, 1]]",
        &["null"],
    )?;
    expect_json_error::<M<T>>(t, "2 columns", "[[1, 0], [0, 1], [0, 0]]", &["length"])?;
    expect_json_error::<M<T>>(t, "2 rows", "[[1, 0, 0], [0, 1, 0]]", &["length"])?;
    expect_json_error::<M<T>>(t, "not an array", "{\"m\": 1}", &["expected"])?;
    // NaN and infinity through TOML.
    for (label, text, needle) in [
        (
            "TOML nan entry → non-finite",
            "r = [[nan, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]",
            "non-finite",
        ),
        (
            "TOML inf entry → non-finite",
            "r = [[1.0, 0.0, 0.0], [0.0, inf, 0.0], [0.0, 0.0, 1.0]]",
            "non-finite",
        ),
    ] {
        match toml::from_str::<Holder<M<T>>>(text) {
            Ok(v) => t.require(label, false, || format!("accepted {v:?}"))?,
            Err(e) => {
                let msg = e.to_string();
                t.require(label, msg.contains(needle), || msg.clone())?
            }
        }
    }
    // A matrix a little off orthogonal (as printed with 7 digits) is accepted and
    // re-orthonormalised.
    let r = SO3Matrix::<f64>::exp(&Vector3::new(0.3, -0.7, 1.1));
    let m = r.matrix();
    let text = format!(
        "[[{:.7}, {:.7}, {:.7}], [{:.7}, {:.7}, {:.7}], [{:.7}, {:.7}, {:.7}]]",
        m[(0, 0)],
        m[(0, 1)],
        m[(0, 2)],
        m[(1, 0)],
        m[(1, 1)],
        m[(1, 2)],
        m[(2, 0)],
        m[(2, 1)],
        m[(2, 2)]
    );
    let back: M<T> = from_json(&text)?;
    let bm = mf(back.matrix());
    t.check(
        "7-digit matrix accepted and re-orthonormalised",
        max_abs(&(bm.transpose() * bm - Matrix3::identity())),
        tol::<T>(K_MATRIX_ROUNDTRIP),
    )?;
    // ... and is within the printing error of r: 5e-8 per entry from 7 decimals, about as
    // much again from the projection onto SO(3), and 6e-8 of f32 rounding. Measured
    // worst: 5.2e-8 (f32), 4.8e-8 (f64).
    t.check(
        "7-digit matrix close to the original",
        max_abs(&(bm - m)),
        2e-7,
    )
}

scalar_fixed_tests! { check_matrix_errors;
    fn matrix_json_errors_f32: f32;
    fn matrix_json_errors_f64: f64;
}

// ------------------------------------------------------------------------- Pose

fn pose_input<T: Real>() -> BoxedStrategy<(V, V)> {
    (point::<T>(), any_rotation::<T>()).boxed()
}

/// Saves a pose from representation G and loads it as G (same) and as H (other), in T.
fn check_pose_roundtrip<T, G, H>((p, r): (V, V), t: &Tracker) -> CheckResult
where
    T: Real + Serialize + DeserializeOwned,
    G: LieGroup<T>,
    H: LieGroup<T>,
{
    let pose = Pose::new(v3::<T>(&p), G::exp(&v3::<T>(&r)));
    let s = to_json(&pose)?;
    let same: Pose<T, G> = from_json(&s)?;
    let other: Pose<T, H> = from_json(&s)?;
    let scale = vf(&pose.position).amax().max(1.0);
    t.check(
        "Pose round trip keeps the position (to 1 ulp)",
        vf(&(same.position - pose.position))
            .amax()
            .max(vf(&(other.position - pose.position)).amax())
            / scale,
        tol::<T>(K_JSON_NUMBER),
    )?;
    t.check(
        "Pose round trip, same representation",
        rot_dist(&same.rotation, &pose.rotation),
        tol::<T>(K_POSE_ROUNDTRIP),
    )?;
    t.check(
        "Pose round trip, other representation",
        max_abs(&(mf(&other.rotation.to_matrix()) - mf(&pose.rotation.to_matrix()))),
        tol::<T>(K_POSE_ROUNDTRIP),
    )?;
    // Layout: position, then [w, x, y, z] with w ≥ 0 (and not −0).
    let v: serde_json::Value = from_json(&s)?;
    let obj = v
        .as_object()
        .ok_or_else(|| fail(format!("not an object: {s}")))?;
    t.require(
        "Pose fields are position and rotation",
        obj.len() == 2 && obj.contains_key("position") && obj.contains_key("rotation"),
        || s.clone(),
    )?;
    let w = v["rotation"][0]
        .as_f64()
        .ok_or_else(|| fail(format!("no w in {s}")))?;
    t.require(
        "Pose output has w ≥ 0",
        w >= 0.0 && !w.is_sign_negative(),
        || s.clone(),
    )?;
    // The written quaternion is the rotation (up to sign, fixed by w ≥ 0).
    let q: Vec<f64> = (0..4)
        .map(|i| v["rotation"][i].as_f64().unwrap_or(f64::NAN))
        .collect();
    let qn = q.iter().map(|x| x * x).sum::<f64>().sqrt();
    t.check(
        "Pose output quaternion has norm 1",
        (qn - 1.0).abs(),
        tol::<T>(K_POSE_ROUNDTRIP),
    )
}

fn check_pose_roundtrip_matrix<T: Real + Serialize + DeserializeOwned, G: LieGroup<T>>(
    input: (V, V),
    t: &Tracker,
) -> CheckResult {
    check_pose_roundtrip::<T, G, UnitQuaternion<T>>(input, t)
}

fn check_pose_roundtrip_quaternion<T: Real + Serialize + DeserializeOwned, G: LieGroup<T>>(
    input: (V, V),
    t: &Tracker,
) -> CheckResult {
    check_pose_roundtrip::<T, G, SO3Matrix<T>>(input, t)
}

group_property_tests! { check_pose_roundtrip_matrix, pose_input;
    fn pose_json_roundtrip_matrix_f32: f32, SO3Matrix;
    fn pose_json_roundtrip_matrix_f64: f64, SO3Matrix;
}

group_property_tests! { check_pose_roundtrip_quaternion, pose_input;
    fn pose_json_roundtrip_quaternion_f32: f32, UnitQuaternion;
    fn pose_json_roundtrip_quaternion_f64: f64, UnitQuaternion;
}

fn check_pose_errors<T, G>(t: &Tracker) -> CheckResult
where
    T: Real + Serialize + DeserializeOwned,
    G: LieGroup<T>,
{
    type P<T, G> = Pose<T, G>;
    expect_json_error::<P<T, G>>(
        t,
        "quaternion of norm 1.1 → error naming the norm",
        r#"{"position": [0, 0, 0], "rotation": [1.1, 0, 0, 0]}"#,
        &["norm 1.1", "not 1 within"],
    )?;
    expect_json_error::<P<T, G>>(
        t,
        "quaternion of norm 0 → error",
        r#"{"position": [0, 0, 0], "rotation": [0, 0, 0, 0]}"#,
        &["norm"],
    )?;
    expect_json_error::<P<T, G>>(
        t,
        "unknown field → error",
        r#"{"position": [0, 0, 0], "rotation": [1, 0, 0, 0], "velocity": [0, 0, 0]}"#,
        &["unknown field", "velocity"],
    )?;
    expect_json_error::<P<T, G>>(
        t,
        "missing rotation → error",
        r#"{"position": [0, 0, 0]}"#,
        &["missing field", "rotation"],
    )?;
    expect_json_error::<P<T, G>>(
        t,
        "3-component rotation → error",
        r#"{"position": [0, 0, 0], "rotation": [1, 0, 0]}"#,
        &["length"],
    )?;
    for (label, text, needle) in [
        (
            "TOML nan position → non-finite",
            "[r]\nposition = [nan, 0.0, 0.0]\nrotation = [1.0, 0.0, 0.0, 0.0]",
            "entry 0 is not finite",
        ),
        (
            "TOML inf rotation → non-finite",
            "[r]\nposition = [0.0, 0.0, 0.0]\nrotation = [1.0, 0.0, inf, 0.0]",
            "non-finite",
        ),
    ] {
        match toml::from_str::<Holder<P<T, G>>>(text) {
            Ok(v) => t.require(label, false, || format!("accepted {v:?}"))?,
            Err(e) => {
                let msg = e.to_string();
                t.require(label, msg.contains(needle), || msg.clone())?
            }
        }
    }
    // Within the tolerance: accepted and normalised; w < 0 is the same rotation.
    let p: P<T, G> = from_json(r#"{"position": [1, 2, 3], "rotation": [1.0000005, 0, 0, 0]}"#)?;
    t.check(
        "norm 1 + 5e-7 accepted as the identity",
        rot_dist(&p.rotation, &G::identity()),
        tol::<T>(K_POSE_ROUNDTRIP),
    )?;
    let p: P<T, G> = from_json(r#"{"position": [0, 0, 0], "rotation": [-0.6, 0.8, 0, 0]}"#)?;
    let q: P<T, G> = from_json(r#"{"position": [0, 0, 0], "rotation": [0.6, -0.8, 0, 0]}"#)?;
    t.check(
        "q and −q read as the same rotation",
        rot_dist(&p.rotation, &q.rotation),
        tol::<T>(K_POSE_ROUNDTRIP),
    )?;
    // Written back with w ≥ 0.
    let s = to_json(&p)?;
    let v: serde_json::Value = from_json(&s)?;
    t.require(
        "w < 0 input written back with w > 0",
        v["rotation"][0].as_f64().is_some_and(|w| w > 0.0),
        || s.clone(),
    )
}

group_fixed_tests! { check_pose_errors;
    fn pose_json_errors_matrix_f32: f32, SO3Matrix;
    fn pose_json_errors_matrix_f64: f64, SO3Matrix;
    fn pose_json_errors_quaternion_f32: f32, UnitQuaternion;
    fn pose_json_errors_quaternion_f64: f64, UnitQuaternion;
}

/// Edge cases of the written quaternion: a half turn with w exactly ±0 must not be
/// written as `-0.0`, and a rotation that drifted from orthonormality by round-off (many
/// products without renormalising, allowed between `renormalize` calls) must still be
/// written as a quaternion that reads back (norm within 1e-6 of 1).
fn check_pose_output_edge_cases<T>(t: &Tracker) -> CheckResult
where
    T: Real + Serialize + DeserializeOwned,
{
    let half_turn =
        UnitQuaternion::new_unchecked(Quaternion::new(-T::zero(), T::zero(), T::one(), T::zero()));
    let s = to_json(&Pose::new(Vector3::zeros(), half_turn))?;
    let v: serde_json::Value = from_json(&s)?;
    t.require(
        "half turn with w = −0 is written with w = +0",
        v["rotation"][0]
            .as_f64()
            .is_some_and(|w| w == 0.0 && !w.is_sign_negative()),
        || s.clone(),
    )?;
    let back: Pose<T, UnitQuaternion<T>> = from_json(&s)?;
    t.check(
        "half turn round trip",
        rot_dist(&back.rotation, &half_turn),
        tol::<T>(K_POSE_ROUNDTRIP),
    )?;
    // Drift: a long chain of products without renormalising.
    let step = SO3Matrix::<T>::exp(&v3::<T>(&V::new(0.31, -0.52, 0.83)));
    let mut r = SO3Matrix::<T>::identity();
    for _ in 0..2000 {
        r = r.compose(&step);
    }
    let m = mf(r.matrix());
    let drift = max_abs(&(m.transpose() * m - Matrix3::identity()));
    t.check(
        "drift of 2000 products (measured, not a requirement)",
        drift,
        1.0,
    )?;
    let s = to_json(&Pose::new(Vector3::zeros(), r))?;
    let back: Pose<T, SO3Matrix<T>> = serde_json::from_str(&s).map_err(|e| {
        fail(format!(
            "a pose whose matrix drifted by {drift:.1e} was written as {s}, which does not \
             read back: {e}"
        ))
    })?;
    // The rotation read back is the projection of the drifted one: within the drift
    // (measured: half of it).
    t.check(
        "drifted matrix: pose read back",
        rot_dist(&back.rotation, &r),
        drift + tol::<T>(K_POSE_ROUNDTRIP),
    )?;
    // The drifted SO3Matrix itself is written as is and read back (its drift is far
    // below the orthogonality tolerance), projected onto SO(3).
    let back: SO3Matrix<T> = from_json(&to_json(&r)?)?;
    t.check(
        "drifted matrix: SO3Matrix read back",
        rot_dist(&back, &r),
        drift + tol::<T>(K_MATRIX_ROUNDTRIP),
    )
}

scalar_fixed_tests! { check_pose_output_edge_cases;
    fn pose_json_output_edge_cases_f32: f32;
    fn pose_json_output_edge_cases_f64: f64;
}

/// The documented layout, exactly.
#[test]
fn pose_json_layout_example() {
    let p = Pose::new(
        Vector3::new(1.0, 2.0, 3.0),
        <UnitQuaternion<f64> as LieGroup<f64>>::identity(),
    );
    assert_eq!(
        serde_json::to_string(&p).expect("serializes"),
        r#"{"position":[1.0,2.0,3.0],"rotation":[1.0,0.0,0.0,0.0]}"#
    );
}

// ---------------------------------------------------------------------------------------
// Bit-exact save and load
// ---------------------------------------------------------------------------------------

/// A rotation that is orthonormal (matrix) or unit (quaternion, w ≥ 0) to round-off is
/// written and read back bit for bit (serde_json with `float_roundtrip` reads numbers
/// exactly): a restarted run continues from exactly the saved state. Checked on 1000
/// random rotations (Shoemake, seeded) per combination.
fn check_exact_roundtrip<T>()
where
    T: Real + Serialize + DeserializeOwned,
{
    use rand::SeedableRng;
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    for k in 0..1000 {
        let m = SO3Matrix::<T>::random(&mut rng);
        let back: SO3Matrix<T> = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m, "SO3Matrix {} case {k}", T::NAME);
        let q = <UnitQuaternion<T> as LieGroup<T>>::random(&mut rng);
        let q = if q.w < T::zero() {
            UnitQuaternion::new_unchecked(-q.into_inner())
        } else {
            q
        };
        let p = Pose::new(
            Vector3::new(T::cast(0.1 * k as f64), T::cast(-1.0 / 3.0), T::cast(1e-7)),
            q,
        );
        let back: Pose<T, UnitQuaternion<T>> =
            serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p, "Pose<UnitQuaternion> {} case {k}", T::NAME);
    }
}

#[test]
fn json_roundtrip_is_bit_exact_f32() {
    check_exact_roundtrip::<f32>();
}

#[test]
fn json_roundtrip_is_bit_exact_f64() {
    check_exact_roundtrip::<f64>();
}
