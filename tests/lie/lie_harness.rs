//! Shared harness for the `lie` test suite (`tests/lie/`).
//!
//! Every check is written once as a generic function over the scalar `T: Real` and, where
//! it matters, the representation `G: LieGroup<T>`, and instantiated for all four
//! combinations (`SO3Matrix` / `UnitQuaternion` × `f32` / `f64`) by the macros below. The
//! macros take the test names **literally** (`fn jacobian_act_matrix_f64: f64, SO3Matrix;`)
//! so that `tests/proofs_index.rs` can find each name as `fn NAME` in the source, and the
//! harness asserts at run time that a name ends in `_{matrix|quaternion}_{f32|f64}`
//! (resp. `_{f32|f64}`) matching the types it was instantiated with.
//!
//! Property tests run through proptest's [`TestRunner`] with 256 cases by default
//! (`PROPTEST_CASES` overrides it) and no failure-persistence files. Each check records
//! the errors it measured in a [`Tracker`]; at the end of a test the worst error per
//! quantity is printed as a `[lie-report]` line (visible with `--nocapture`), which is how
//! the measured errors quoted in the tests' comments were obtained.
//!
//! Random rotations are generated in `f64` as rotation vectors `angle · axis` and converted
//! to `T` inside the checks. Angles are drawn from a mixture that puts real weight on the
//! hard places: near zero (1e-9..1e-3 rad, log-uniform), generic, near π (gap to π
//! log-uniform down to the strategy's limit), exactly 0, exactly π (when allowed), and
//! beyond π (when allowed). Axes are uniform on the sphere, axis-aligned (±eᵢ) or diagonal
//! ((±1, ±1, ±1)/√3).

// Each test binary uses a different subset of the harness. Strategies are generic over T
// even when they do not depend on it, because the macros call them as `strategy::<T>()`.
#![allow(
    dead_code,
    unused_macros,
    unused_imports,
    clippy::extra_unused_type_parameters
)]

use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real};
use nalgebra::{DVector, Matrix3, Vector3};
use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Strategy, Union};
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::f64::consts::PI;

/// A 3-vector generated in `f64` (rotation vector, point, or weight vector).
pub type V = Vector3<f64>;

/// Result of one check on one input.
pub type CheckResult = Result<(), TestCaseError>;

// ---------------------------------------------------------------------------------------
// Conversions and small helpers
// ---------------------------------------------------------------------------------------

/// Machine epsilon of `T`, as `f64`.
pub fn eps<T: Real>() -> f64 {
    Real::to_f64(T::default_epsilon())
}

/// Converts an `f64` vector to `T` (rounding for `f32`).
pub fn v3<T: Real>(v: &V) -> Vector3<T> {
    v.map(|x| c::<T>(x))
}

/// Widens a `T` vector to `f64`.
pub fn vf<T: Real>(v: &Vector3<T>) -> V {
    v.map(|x| Real::to_f64(x))
}

/// Widens a `T` matrix to `f64`.
pub fn mf<T: Real>(m: &Matrix3<T>) -> Matrix3<f64> {
    m.map(|x| Real::to_f64(x))
}

/// A `Vector3` as a `DVector` (for `numdiff`'s ℝⁿ-valued functions).
pub fn dvec<T: Real>(v: &Vector3<T>) -> DVector<T> {
    DVector::from_column_slice(v.as_slice())
}

/// Largest absolute entry of a matrix (the `max` norm used throughout).
pub fn max_abs(m: &Matrix3<f64>) -> f64 {
    m.iter().fold(0.0, |a, x| a.max(x.abs()))
}

/// `max|a − b| / max(1, max|a|)`: the same mixed absolute/relative metric as
/// `numdiff::max_relative_error`, in `f64`.
pub fn mat_rel_err(a: &Matrix3<f64>, b: &Matrix3<f64>) -> f64 {
    max_abs(&(a - b)) / max_abs(a).max(1.0)
}

/// `|a − b| / max(1, |a|)` for vectors (∞-norm).
pub fn vec_rel_err(a: &V, b: &V) -> f64 {
    (a - b).amax() / a.amax().max(1.0)
}

/// Distance between two rotations as the largest entry of the difference of their
/// matrices (representation independent, sign independent for quaternions).
pub fn rot_dist<T: Real, G: LieGroup<T>>(a: &G, b: &G) -> f64 {
    max_abs(&(mf(&a.to_matrix()) - mf(&b.to_matrix())))
}

/// True if every entry of the matrix is finite.
pub fn finite_m<T: Real>(m: &Matrix3<T>) -> bool {
    m.iter().all(|x| x.is_finite())
}

/// True if every entry of the vector is finite.
pub fn finite_v<T: Real>(v: &Vector3<T>) -> bool {
    v.iter().all(|x| x.is_finite())
}

/// The named axes used by the deterministic edge-case tests: axis-aligned with both
/// signs, diagonal, and generic ones with negative components.
pub fn named_axes() -> Vec<V> {
    let raw = [
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [-1.0, 0.0, 0.0],
        [0.0, -1.0, 0.0],
        [0.0, 0.0, -1.0],
        [1.0, 1.0, 1.0],
        [-1.0, -1.0, 0.0],
        [0.0, 1.0, -1.0],
        [-1.0, 2.0, -3.0],
        [0.3, -0.9, 0.1],
        [-0.6, 0.0, -0.8],
        [-0.2, -0.3, -0.9],
    ];
    raw.iter()
        .map(|a| V::new(a[0], a[1], a[2]).normalize())
        .collect()
}

// ---------------------------------------------------------------------------------------
// Error tracking and reporting
// ---------------------------------------------------------------------------------------

/// The worst error seen for one measured quantity.
#[derive(Clone, Copy, Debug)]
pub struct Worst {
    /// Largest error seen (NaN if any check produced NaN).
    pub err: f64,
    /// The tolerance it was checked against (at the worst case).
    pub tol: f64,
    /// Number of checks of this quantity.
    pub count: u64,
}

/// Records the worst error per quantity over all the cases of one test.
#[derive(Default)]
pub struct Tracker {
    worst: RefCell<BTreeMap<&'static str, Worst>>,
}

impl Tracker {
    /// Checks `err ≤ tol` (NaN fails), records the error, and fails the case with a
    /// message naming the quantity otherwise.
    pub fn check(&self, label: &'static str, err: f64, tol: f64) -> CheckResult {
        let mut map = self.worst.borrow_mut();
        let w = map.entry(label).or_insert(Worst {
            err: 0.0,
            tol,
            count: 0,
        });
        w.count += 1;
        let ratio = |e: f64, t: f64| if t > 0.0 { e / t } else { e };
        // NaN is sticky: once seen, it is what the report shows.
        if err.is_nan() || (!w.err.is_nan() && ratio(err, tol) > ratio(w.err, w.tol)) {
            w.err = err;
            w.tol = tol;
        }
        if err <= tol {
            Ok(())
        } else {
            Err(TestCaseError::fail(format!(
                "{label}: error {err:.3e} exceeds tolerance {tol:.3e}"
            )))
        }
    }

    /// Checks a boolean condition (e.g. "no NaN").
    pub fn require(
        &self,
        label: &'static str,
        ok: bool,
        what: impl FnOnce() -> String,
    ) -> CheckResult {
        self.check(label, if ok { 0.0 } else { f64::INFINITY }, 0.0)
            .map_err(|_| TestCaseError::fail(format!("{label}: {}", what())))
    }

    /// Prints one `[lie-report]` line per quantity.
    pub fn report(&self, test: &str) {
        for (label, w) in self.worst.borrow().iter() {
            println!(
                "[lie-report] {test} | {label}: worst {:.3e}, tolerance {:.3e} (ratio {:.3}), {} checks",
                w.err,
                w.tol,
                if w.tol > 0.0 { w.err / w.tol } else { w.err },
                w.count
            );
        }
    }
}

/// The proptest configuration of the suite: proptest's defaults (256 cases, or
/// `PROPTEST_CASES`), without writing regression files into the source tree.
pub fn config() -> Config {
    Config {
        failure_persistence: None,
        ..Config::default()
    }
}

fn assert_suffix(name: &str, suffix: &str) {
    assert!(
        name.ends_with(suffix),
        "test `{name}` is instantiated for `{suffix}` but its name does not say so"
    );
}

/// Runs a property test of a group-generic check for one (T, G) combination.
pub fn run_group_property<T, G, S, F>(name: &str, strategy: &S, check: F)
where
    T: Real,
    G: LieGroup<T>,
    S: Strategy,
    F: Fn(S::Value, &Tracker) -> CheckResult,
{
    assert_suffix(name, &format!("_{}_{}", G::NAME, T::NAME));
    run_property(name, strategy, check);
}

/// Runs a property test of a scalar-generic check for one T.
pub fn run_scalar_property<T, S, F>(name: &str, strategy: &S, check: F)
where
    T: Real,
    S: Strategy,
    F: Fn(S::Value, &Tracker) -> CheckResult,
{
    assert_suffix(name, &format!("_{}", T::NAME));
    run_property(name, strategy, check);
}

fn run_property<S, F>(name: &str, strategy: &S, check: F)
where
    S: Strategy,
    F: Fn(S::Value, &Tracker) -> CheckResult,
{
    let tracker = Tracker::default();
    let mut runner = TestRunner::new(config());
    let result = runner.run(strategy, |input| check(input, &tracker));
    tracker.report(name);
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
}

/// Runs a deterministic group-generic check for one (T, G) combination.
pub fn run_group_fixed<T, G, F>(name: &str, check: F)
where
    T: Real,
    G: LieGroup<T>,
    F: Fn(&Tracker) -> CheckResult,
{
    assert_suffix(name, &format!("_{}_{}", G::NAME, T::NAME));
    run_fixed(name, check);
}

/// Runs a deterministic scalar-generic check for one T.
pub fn run_scalar_fixed<T, F>(name: &str, check: F)
where
    T: Real,
    F: Fn(&Tracker) -> CheckResult,
{
    assert_suffix(name, &format!("_{}", T::NAME));
    run_fixed(name, check);
}

fn run_fixed<F: Fn(&Tracker) -> CheckResult>(name: &str, check: F) {
    let tracker = Tracker::default();
    let result = check(&tracker);
    tracker.report(name);
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
}

/// Instantiates a property test `check::<T, G<T>>(input, &Tracker)` with inputs from
/// `strategy::<T>()`, once per listed `fn NAME: T, G;` line.
macro_rules! group_property_tests {
    ($check:ident, $strategy:ident; $(fn $name:ident: $t:ident, $g:ident;)+) => {$(
        #[test]
        fn $name() {
            $crate::lie_harness::run_group_property::<$t, $g<$t>, _, _>(
                stringify!($name),
                &$strategy::<$t>(),
                $check::<$t, $g<$t>>,
            );
        }
    )+};
}

/// Instantiates a property test `check::<T>(input, &Tracker)` with inputs from
/// `strategy::<T>()`, once per listed `fn NAME: T;` line.
macro_rules! scalar_property_tests {
    ($check:ident, $strategy:ident; $(fn $name:ident: $t:ident;)+) => {$(
        #[test]
        fn $name() {
            $crate::lie_harness::run_scalar_property::<$t, _, _>(
                stringify!($name),
                &$strategy::<$t>(),
                $check::<$t>,
            );
        }
    )+};
}

/// Instantiates a deterministic test `check::<T, G<T>>(&Tracker)` once per listed line.
macro_rules! group_fixed_tests {
    ($check:ident; $(fn $name:ident: $t:ident, $g:ident;)+) => {$(
        #[test]
        fn $name() {
            $crate::lie_harness::run_group_fixed::<$t, $g<$t>, _>(
                stringify!($name),
                $check::<$t, $g<$t>>,
            );
        }
    )+};
}

/// Instantiates a deterministic test `check::<T>(&Tracker)` once per listed line.
macro_rules! scalar_fixed_tests {
    ($check:ident; $(fn $name:ident: $t:ident;)+) => {$(
        #[test]
        fn $name() {
            $crate::lie_harness::run_scalar_fixed::<$t, _>(stringify!($name), $check::<$t>);
        }
    )+};
}

// ---------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------

fn log_uniform(lo: f64, hi: f64) -> BoxedStrategy<f64> {
    (lo.log10()..=hi.log10())
        .prop_map(|e| 10f64.powf(e))
        .boxed()
}

/// Rotation angles (rad) in `[0, max]`, weighted towards the numerically hard places:
/// near zero (1e-9..1e-3, log-uniform), generic (1e-3..π − 0.5), near π (π − d with d
/// log-uniform in [max(π − max, 1e-13), 0.5]), exactly 0, exactly π if `max ≥ π`, and
/// uniform in (π, max] if `max > π`.
pub fn angle_up_to(max: f64) -> BoxedStrategy<f64> {
    let gap_min = if max >= PI { 1e-13 } else { PI - max };
    let mut arms: Vec<(u32, BoxedStrategy<f64>)> = vec![
        (20, log_uniform(1e-9, 1e-3)),
        (40, (1e-3..(PI - 0.5)).boxed()),
        (30, log_uniform(gap_min, 0.5).prop_map(|d| PI - d).boxed()),
        (2, Just(0.0).boxed()),
    ];
    if max >= PI {
        arms.push((5, Just(PI).boxed()));
    }
    if max > PI {
        arms.push((30, (PI..=max).boxed()));
    }
    Union::new_weighted(arms).boxed()
}

/// Unit axes: uniform on the sphere, axis-aligned (±eᵢ), or diagonal ((±1, ±1, ±1)/√3).
pub fn axis() -> BoxedStrategy<V> {
    let sphere = (-1.0f64..=1.0, 0.0..(2.0 * PI))
        .prop_map(|(z, phi): (f64, f64)| {
            let r = (1.0 - z * z).max(0.0).sqrt();
            V::new(r * phi.cos(), r * phi.sin(), z)
        })
        .boxed();
    let aligned = (0usize..3, any::<bool>())
        .prop_map(|(i, neg)| {
            let mut v = V::zeros();
            v[i] = if neg { -1.0 } else { 1.0 };
            v
        })
        .boxed();
    let diagonal = any::<[bool; 3]>()
        .prop_map(|s| V::from_fn(|i, _| if s[i] { -1.0 } else { 1.0 }) / 3f64.sqrt())
        .boxed();
    Union::new_weighted(vec![(16, sphere), (2, aligned), (1, diagonal)]).boxed()
}

/// Rotation vectors `angle · axis` with angles from [`angle_up_to`]`(max)`.
pub fn rotation_vector(max: f64) -> BoxedStrategy<V> {
    (angle_up_to(max), axis()).prop_map(|(a, u)| u * a).boxed()
}

/// Any rotation, including angle exactly π (as a rotation vector with |θ| ≤ π).
pub fn any_rotation<T: Real>() -> BoxedStrategy<V> {
    rotation_vector(PI)
}

/// The largest angle at which finite differences with step h = `T::fd_step()` are taken:
/// π − 10h (π − 1e-4 in f64, π − 1e-2 in f32). Perturbations of ±h then never cross
/// Log's branch cut at π (`numdiff` module docs); π itself is tested through
/// identities in `identities.rs` / `edge_cases.rs`.
pub fn fd_max_angle<T: Real>() -> f64 {
    PI - 10.0 * Real::to_f64(T::fd_step())
}

/// Rotations whose angle is at most [`fd_max_angle`] (for checks that difference Log).
pub fn fd_rotation<T: Real>() -> BoxedStrategy<V> {
    rotation_vector(fd_max_angle::<T>())
}

/// Rotation vectors of any length up to 10 rad (for Exp, Γ and ⊞ with θ beyond π).
pub fn long_rotation_vector<T: Real>() -> BoxedStrategy<V> {
    rotation_vector(10.0)
}

/// Points / weight vectors with components in [−3, 3].
pub fn point<T: Real>() -> BoxedStrategy<V> {
    (-3.0f64..=3.0, -3.0f64..=3.0, -3.0f64..=3.0)
        .prop_map(|(x, y, z)| V::new(x, y, z))
        .boxed()
}

/// (rotation, point).
pub fn rotation_and_point<T: Real>() -> BoxedStrategy<(V, V)> {
    (any_rotation::<T>(), point::<T>()).boxed()
}

/// (rotation, rotation).
pub fn two_rotations<T: Real>() -> BoxedStrategy<(V, V)> {
    (any_rotation::<T>(), any_rotation::<T>()).boxed()
}

/// (base rotation R₂, relative rotation vector θ with |θ| ≤ π − 10h); R₁ = R₂ ⊞ θ.
pub fn base_and_fd_relative<T: Real>() -> BoxedStrategy<(V, V)> {
    (any_rotation::<T>(), fd_rotation::<T>()).boxed()
}

/// (base rotation R₂, relative rotation vector θ with |θ| ≤ π, exactly π included).
pub fn base_and_relative<T: Real>() -> BoxedStrategy<(V, V)> {
    (any_rotation::<T>(), any_rotation::<T>()).boxed()
}

/// (rotation, long rotation vector).
pub fn rotation_and_long_vector<T: Real>() -> BoxedStrategy<(V, V)> {
    (any_rotation::<T>(), long_rotation_vector::<T>()).boxed()
}

/// (long rotation vector θ, weight vector w), for θ ↦ Γ(θ)w.
pub fn long_vector_and_point<T: Real>() -> BoxedStrategy<(V, V)> {
    (long_rotation_vector::<T>(), point::<T>()).boxed()
}
