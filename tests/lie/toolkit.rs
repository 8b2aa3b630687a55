//! The non-Jacobian operations of the Lie-group toolkit, for all four combinations
//! SO3Matrix / UnitQuaternion × f32 / f64 (the Jacobians are in
//! `tests/lie/toolkit_jacobians.rs`, serde in `tests/lie/serde_support.rs`):
//!
//! 1. `LieGroup::random` (Shoemake): uniform on SO(3) — Kolmogorov–Smirnov tests of the
//!    angle against P(angle ≤ θ) = (θ − sin θ)/π, of the axis' z-component and azimuth
//!    against uniform laws (also separately for small and large angles, i.e. axis
//!    independent of angle), mean axis ≈ 0, every sample a rotation to round-off.
//! 2. `mean` / `weighted_mean` (bi-invariant Karcher mean): single input, symmetric
//!    pairs, identical inputs (and q, −q), bi-invariance, first-order optimality,
//!    weights (1, 0), scale invariance of the weights (down to subnormal and up to
//!    overflowing sums), every error, and rotations spread over all of SO(3) (a rotation
//!    or `NotConverged`, never NaN or a panic).
//! 3. `interpolate` (values): end points, constant angular speed, identical and nearly
//!    identical inputs, matrix/quaternion agreement, rotations (nearly) π apart.
//! 4. `between`, `adjoint`, `boxplus_left`, `boxminus_left` identities.
//! 5. `SO3Matrix`: the `approx` traits (by angle), `Mul`/`MulAssign`, `Display`; `Pose`
//!    `Display` and `approx`.
//! 6. `Pose`: ⊞/⊟ round trips, `transform_point`/`inverse_transform_point`,
//!    `cast_rotation`.
//!
//! # Tolerances
//! Tolerances are `k·ε` with ε = `T::default_epsilon()` (2.2e-16 in f64, 1.2e-7 in f32)
//! on rotation distances (largest entry of the difference of the rotation matrices, see
//! `lie_harness::rot_dist`) or on rotation vectors (rad, |θ| ≤ π, so absolute and
//! relative-to-π errors differ by a factor ≤ π). Each is a short chain of rounded
//! operations (Exp, Log, products) with no cancellation that the implementation does not
//! already avoid, so the errors are a few ε; the factors `k` are 4–10× the worst error
//! measured over `PROPTEST_CASES=20000` random cases per test (the `[lie-report]` lines of
//! `--nocapture`), quoted next to each constant. The statistical tests use a fixed seed,
//! so they are deterministic; their critical values are stated with their significance.

use crate::lie_harness;

use lie_harness::*;
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieError, LieGroup, Pose, Real, SO3Matrix, UnitQuaternion};
use nalgebra::{Matrix3, Vector3, Vector6};
use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Union};
use proptest::test_runner::TestCaseError;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::f64::consts::PI;

// ------------------------------------------------------------ tolerances (in units of ε)

/// A sample of `random` is a rotation: ‖RᵀR − I‖ (max entry), |det R − 1| and |‖q‖ − 1|.
/// The f64 quaternion is rounded to T and normalised (a few ε), then turned into a matrix
/// (sums of products of two entries); det is a further sum of triple products. Measured
/// worst (fixed seed, 20000 samples): 7.0ε (det, f64), 6.5ε (det, f32), 5.1ε (RᵀR).
const K_RANDOM_VALID: f64 = 32.0;
/// A mean over rotations spread over SO(3) is a rotation: up to 100 updates, each
/// renormalised, the last one (≤ 16ε) not. Measured worst: 6.0ε.
const K_MEAN_SPREAD_VALID: f64 = 32.0;
/// Mean of a single rotation, of identical rotations, or of q and −q, against the input:
/// the update is Log of RᵀR ≈ I, exactly 0 for matrices (RᵀR is computed exactly
/// symmetric) and ~ε for quaternions; it is below 16ε and applied as the last update.
/// Measured worst: 1.75ε (q, −q in f32), 1.0ε (single quaternion), 0 (single matrix).
const K_MEAN_EXACT: f64 = 8.0;
/// Mean of R ⊞ v and R ⊞ (−v) against R, |v| < π/2: two boxplus (each a few ε), the
/// updates of the mean, the last one at round-off level. Measured worst: 5.0ε (f64 and
/// f32).
const K_MEAN_SYMMETRIC: f64 = 32.0;
/// Bi-invariance: mean(A rᵢ B) against A·mean(rᵢ)·B, clusters of radius 1 rad. Both
/// means end with a residual at the noise of the Logs (a few ε, see
/// K_MEAN_OPTIMALITY), the Hessian of the cost is ≥ ~0.6 on such clusters, and the
/// products add a few ε. Measured worst: 7.0ε (f64 and f32).
const K_MEAN_INVARIANT: f64 = 64.0;
/// First-order optimality |Σ wᵢ (rᵢ ⊟ m)| / Σ wᵢ at the result, evaluated in f64 from
/// the T rotations: the last update (≤ 16ε) is applied, which leaves the round-off of
/// the Logs at the new point (~ε·|θ| each, |θ| ≤ 2 rad in a cluster of radius 1, ≤ π in
/// the π/2 ball), plus the T round-off of the last product. Measured worst: 2.4ε (f64),
/// 3.1ε (f32).
const K_MEAN_OPTIMALITY: f64 = 16.0;
/// Weighted mean with scaled weights (× 3, × 2⁻²⁰, × 1e20, largest weight T::MAX/2 or
/// 2⁻¹⁰⁰) against the unscaled one: the weights are divided by the largest, so a power
/// of two changes nothing and other factors change the ratios by ~ε; plus both
/// residuals (a few ε each). Measured worst: 3.0ε (f64 and f32); 0 for powers of two.
const K_MEAN_SCALE: f64 = 16.0;
/// interpolate at t = 1 against b: the round trip (11), a few ε. Measured worst: 10.3ε
/// (f64), 11.0ε (f32), both matrices.
const K_INTERP_END: f64 = 64.0;
/// interpolate(a, a, t) = a: a ⊞ t·(a ⊟ a) with a ⊟ a the round-off of Log(aᵀa) (0 for
/// matrices, ~ε for quaternions) times |t| ≤ 2.5. Measured worst: 2.5ε (quaternion f64),
/// 0.5ε for interpolate(q, −q, t).
const K_INTERP_IDENTICAL: f64 = 16.0;
/// Constant angular speed: |interpolate(a, b, t) ⊟ a − t·(b ⊟ a)| (rad), absolute: each
/// side is a Log (≤ ~2ε·π) of a product of rotations with round-off of a few ε, and
/// the matrix Log near π (symmetric-part axis) adds a few ε more. Measured worst: 18.5ε
/// (matrix f64), 16.4ε (matrix f32), 8.4ε (quaternions).
const K_INTERP_SPEED: f64 = 128.0;
/// Matrix against quaternion interpolation (t ∈ [−1, 2]), rotation distance: two
/// independent implementations of Exp, Log and products, a few ε each. Measured worst:
/// 13ε (f64), 11.2ε (f32).
const K_INTERP_AGREE: f64 = 64.0;
/// Identities of between/adjoint/boxplus_left/boxminus_left (rotation distance, or rad
/// relative to max(1, |θ|) for the Exp of a long θ): a product, an Exp and a Log at
/// most on each side. Measured worst: 20.3ε (a ⊟ₗ b = R_b·(a ⊟ b), matrix f64: two
/// Logs near π via the symmetric part), 18.4ε (f32); others ≤ 16.1ε.
const K_LEFT: f64 = 128.0;
/// Pose round trips (positions relative to max(1, |p|, |x|), rotations as above).
/// Measured worst: 20.2ε (transform(inverse_transform(p)), quaternion f32: two
/// quaternion rotations of a vector, ~9 rounded operations each), 18.6ε (f64).
const K_POSE: f64 = 128.0;

fn tol<T: Real>(k: f64) -> f64 {
    k * eps::<T>()
}

/// The smallest positive normal number of `T`.
fn min_positive<T: Real>() -> T {
    if T::NAME == "f64" {
        c::<T>(f64::MIN_POSITIVE)
    } else {
        c::<T>(f32::MIN_POSITIVE as f64)
    }
}

/// `T` rotation → `f64` rotation matrix, re-orthonormalised in f64 (for residuals
/// evaluated in f64 from `T` data).
fn widen<T: Real, G: LieGroup<T>>(g: &G) -> SO3Matrix<f64> {
    SO3Matrix::from_matrix_unchecked(mf(&g.to_matrix()))
        .renormalize()
        .renormalize()
}

/// ‖RᵀR − I‖ (largest entry), in f64.
fn orthogonality_defect(m: &Matrix3<f64>) -> f64 {
    max_abs(&(m.transpose() * m - Matrix3::identity()))
}

/// Rotation vectors are compared up to sign when their angle is within this of π: the
/// two vectors ±π·u are the same rotation, and T round-off of the inputs (a few ε) can
/// carry a relative rotation near π across the branch cut of Log. 1e4·ε (2.2e-12 rad in
/// f64, 1.2e-3 rad in f32) is far above that round-off.
fn pi_margin<T: Real>() -> f64 {
    1e4 * eps::<T>()
}

// =======================================================================================
// 1. random: uniform on SO(3)
// =======================================================================================

/// Number of samples of the uniformity tests.
const N_RANDOM: usize = 20_000;

/// Asymptotic Kolmogorov–Smirnov critical value for significance α = 0.01:
/// √(−ln(α/2)/2) = 1.628, divided by √n. The seed is fixed, so the test is deterministic;
/// with a correct sampler it fails for 1% of seeds.
fn ks_critical(n: usize) -> f64 {
    (-(0.01f64 / 2.0).ln() / 2.0).sqrt() / (n as f64).sqrt()
}

/// The Kolmogorov–Smirnov statistic sup |F_n − F| of the samples against the CDF `cdf`.
fn ks_statistic(samples: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).expect("no NaN samples"));
    let n = s.len() as f64;
    s.iter().enumerate().fold(0.0, |d: f64, (i, &x)| {
        let f = cdf(x);
        d.max(((i + 1) as f64 / n - f).abs())
            .max((f - i as f64 / n).abs())
    })
}

fn angle_cdf(theta: f64) -> f64 {
    (theta - theta.sin()) / PI
}

fn uniform_cdf(lo: f64, hi: f64) -> impl Fn(f64) -> f64 {
    move |x| ((x - lo) / (hi - lo)).clamp(0.0, 1.0)
}

fn check_random_uniform<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    let mut rng = StdRng::seed_from_u64(0x5EED_2026);
    let mut angles = Vec::with_capacity(N_RANDOM);
    let mut axes = Vec::with_capacity(N_RANDOM);
    for _ in 0..N_RANDOM {
        let g = G::random(&mut rng);
        let m = mf(&g.to_matrix());
        t.check(
            "random: RᵀR = I",
            orthogonality_defect(&m),
            tol::<T>(K_RANDOM_VALID),
        )?;
        t.check(
            "random: det R = 1",
            (m.determinant() - 1.0).abs(),
            tol::<T>(K_RANDOM_VALID),
        )?;
        let q = g.to_quaternion();
        let qn = q
            .coords
            .iter()
            .map(|x| Real::to_f64(*x).powi(2))
            .sum::<f64>();
        t.check(
            "random: |q| = 1",
            (qn.sqrt() - 1.0).abs(),
            tol::<T>(K_RANDOM_VALID),
        )?;
        let v = vf(&g.log());
        let a = v.norm();
        angles.push(a);
        if a > 1e-6 {
            axes.push((v / a, a));
        }
    }
    let n = N_RANDOM;
    t.check(
        "random: KS angle vs (θ − sin θ)/π",
        ks_statistic(&angles, angle_cdf),
        ks_critical(n),
    )?;
    let z: Vec<f64> = axes.iter().map(|(u, _)| u.z).collect();
    t.check(
        "random: KS axis z vs U[-1, 1]",
        ks_statistic(&z, uniform_cdf(-1.0, 1.0)),
        ks_critical(z.len()),
    )?;
    let phi: Vec<f64> = axes.iter().map(|(u, _)| u.y.atan2(u.x)).collect();
    t.check(
        "random: KS axis azimuth vs U[-π, π]",
        ks_statistic(&phi, uniform_cdf(-PI, PI)),
        ks_critical(phi.len()),
    )?;
    // Axis independent of angle: the axis law is the same below and above the median
    // angle (2.31 rad: (θ − sin θ)/π = 1/2).
    for (label, small) in [
        ("random: KS axis z, angles below median", true),
        ("random: KS axis z, angles above median", false),
    ] {
        let z: Vec<f64> = axes
            .iter()
            .filter(|(_, a)| (*a < 2.3099) == small)
            .map(|(u, _)| u.z)
            .collect();
        t.check(
            label,
            ks_statistic(&z, uniform_cdf(-1.0, 1.0)),
            ks_critical(z.len()),
        )?;
    }
    // Mean axis: each component has variance 1/3; 4 standard errors (two-sided
    // probability 6e-5 per component under uniformity).
    let mean = axes.iter().fold(V::zeros(), |s, (u, _)| s + u) / axes.len() as f64;
    t.check(
        "random: |mean axis component|",
        mean.amax(),
        4.0 * (1.0 / (3.0 * axes.len() as f64)).sqrt(),
    )?;
    // The samples are not all the same and the rng advances.
    let a = G::random(&mut rng);
    let b = G::random(&mut rng);
    t.require("random: consecutive samples differ", a != b, || {
        format!("{a:?} == {b:?}")
    })?;
    // Same seed, same samples (reproducible).
    let mut r1 = StdRng::seed_from_u64(7);
    let mut r2 = StdRng::seed_from_u64(7);
    let (x, y) = (G::random(&mut r1), G::random(&mut r2));
    t.require("random: reproducible with a seed", x == y, || {
        format!("{x:?} != {y:?}")
    })
}

group_fixed_tests! { check_random_uniform;
    fn random_uniform_matrix_f32: f32, SO3Matrix;
    fn random_uniform_matrix_f64: f64, SO3Matrix;
    fn random_uniform_quaternion_f32: f32, UnitQuaternion;
    fn random_uniform_quaternion_f64: f64, UnitQuaternion;
}

// =======================================================================================
// 2. mean and weighted_mean
// =======================================================================================

/// Rotation vectors in the ball of radius `max` < π − 0.5 (the harness' `rotation_vector`
/// needs `max` near π): angles near zero (1e-9..1e-3, log-uniform), uniform in [0, max],
/// exactly 0 and exactly `max`; axes from the harness.
fn ball_vector(max: f64) -> BoxedStrategy<V> {
    let angle = Union::new_weighted(vec![
        (2, (-9.0f64..=-3.0).prop_map(|e| 10f64.powf(e)).boxed()),
        (8, (0.0..=max).boxed()),
        (1, Just(0.0).boxed()),
        (1, Just(max).boxed()),
    ]);
    (angle, axis()).prop_map(|(a, u)| u * a).boxed()
}

/// A weight: mostly in [0.05, 3], sometimes exactly 0.
fn weight() -> BoxedStrategy<f64> {
    Union::new_weighted(vec![(4, (0.05f64..3.0).boxed()), (1, Just(0.0).boxed())]).boxed()
}

/// (centre, [(offset within 1 rad, weight)], A, B): a cluster of 1 to 8 rotations
/// `centre ⊞ offset` of radius ≤ 1 rad, with weights, and two rotations to multiply by.
type Cluster = (V, Vec<(V, f64)>, V, V);

fn cluster<T: Real>() -> BoxedStrategy<Cluster> {
    (
        any_rotation::<T>(),
        prop::collection::vec((ball_vector(1.0), weight()), 1..8),
        any_rotation::<T>(),
        any_rotation::<T>(),
    )
        .boxed()
}

fn build_cluster<T: Real, G: LieGroup<T>>((centre, members, _, _): &Cluster) -> (Vec<G>, Vec<T>) {
    let c0 = G::exp(&v3::<T>(centre));
    let rs = members
        .iter()
        .map(|(v, _)| c0.boxplus(&v3::<T>(v)))
        .collect();
    let mut ws: Vec<T> = members.iter().map(|(_, w)| c::<T>(*w)).collect();
    if ws.iter().all(|w| *w == T::zero()) {
        ws[0] = T::one();
    }
    (rs, ws)
}

/// |Σ wᵢ (rᵢ ⊟ m)| / Σ wᵢ evaluated in f64 (rad).
fn mean_residual<T: Real, G: LieGroup<T>>(rs: &[G], ws: &[T], m: &G) -> f64 {
    let m64 = widen(m);
    let mut sum = V::zeros();
    let mut total = 0.0;
    for (r, w) in rs.iter().zip(ws) {
        let w = Real::to_f64(*w);
        sum += widen(r).boxminus(&m64) * w;
        total += w;
    }
    (sum / total).norm()
}

fn ok_or_fail<G>(what: &str, r: Result<G, LieError>) -> Result<G, TestCaseError> {
    r.map_err(|e| TestCaseError::fail(format!("{what}: unexpected error {e}")))
}

fn check_mean_cluster<T: Real, G: LieGroup<T>>(input: Cluster, t: &Tracker) -> CheckResult {
    let (rs, ws) = build_cluster::<T, G>(&input);
    let a = G::exp(&v3::<T>(&input.2));
    let b = G::exp(&v3::<T>(&input.3));
    let ones = vec![T::one(); rs.len()];

    // Unweighted.
    let m = ok_or_fail("mean", G::mean(&rs))?;
    t.require("mean: finite", finite_m(&m.to_matrix()), || {
        format!("{m:?}")
    })?;
    t.check(
        "mean: first-order optimality Σ(rᵢ ⊟ m) = 0",
        mean_residual(&rs, &ones, &m),
        tol::<T>(K_MEAN_OPTIMALITY),
    )?;
    let moved: Vec<G> = rs.iter().map(|r| a.compose(r).compose(&b)).collect();
    let mm = ok_or_fail("mean of A rᵢ B", G::mean(&moved))?;
    t.check(
        "mean: bi-invariance mean(A rᵢ B) = A mean(rᵢ) B",
        rot_dist(&mm, &a.compose(&m).compose(&b)),
        tol::<T>(K_MEAN_INVARIANT),
    )?;
    // Equal weights (any positive value) give the unweighted mean.
    let equal = vec![c::<T>(0.3); rs.len()];
    let me = ok_or_fail(
        "weighted mean, equal weights",
        G::weighted_mean(&rs, &equal),
    )?;
    t.check(
        "weighted mean: equal weights = mean",
        rot_dist(&me, &m),
        tol::<T>(K_MEAN_SCALE),
    )?;

    // Weighted.
    let mw = ok_or_fail("weighted mean", G::weighted_mean(&rs, &ws))?;
    t.check(
        "weighted mean: first-order optimality Σwᵢ(rᵢ ⊟ m) = 0",
        mean_residual(&rs, &ws, &mw),
        tol::<T>(K_MEAN_OPTIMALITY),
    )?;
    let mwm = ok_or_fail("weighted mean of A rᵢ B", G::weighted_mean(&moved, &ws))?;
    t.check(
        "weighted mean: bi-invariance",
        rot_dist(&mwm, &a.compose(&mw).compose(&b)),
        tol::<T>(K_MEAN_INVARIANT),
    )?;
    // Scale invariance of the weights: a generic factor, powers of two, and scalings that
    // make the largest weight T::MAX/2 (the sum overflows) or 2⁻¹⁰⁰ (normal in f32 too,
    // but its products with small differences are subnormal).
    let wmax = ws.iter().fold(T::zero(), |a, &b| a.max(b));
    let to_max = |w: T| w / wmax * (T::max_value().expect("bounded") * c::<T>(0.5));
    let to_tiny = |w: T| w / wmax * c::<T>(2f64.powi(-100));
    let scalings: [(&'static str, &dyn Fn(T) -> T); 5] = [
        ("weighted mean: weights × 3", &|w| w * c::<T>(3.0)),
        ("weighted mean: weights × 2⁻²⁰", &|w| {
            w * c::<T>(2f64.powi(-20))
        }),
        ("weighted mean: weights × 1e20", &|w| w * c::<T>(1e20)),
        ("weighted mean: largest weight T::MAX/2", &to_max),
        ("weighted mean: largest weight 2⁻¹⁰⁰", &to_tiny),
    ];
    for (label, f) in scalings {
        let scaled: Vec<T> = ws.iter().map(|w| f(*w)).collect();
        let r = G::weighted_mean(&rs, &scaled);
        let ms = r.map_err(|e| TestCaseError::fail(format!("{label}: {e}")))?;
        t.check(label, rot_dist(&ms, &mw), tol::<T>(K_MEAN_SCALE))?;
    }
    Ok(())
}

group_property_tests! { check_mean_cluster, cluster;
    fn mean_cluster_matrix_f32: f32, SO3Matrix;
    fn mean_cluster_matrix_f64: f64, SO3Matrix;
    fn mean_cluster_quaternion_f32: f32, UnitQuaternion;
    fn mean_cluster_quaternion_f64: f64, UnitQuaternion;
}

/// (R, v) with |v| < π/2.
fn rotation_and_half_pi_vector<T: Real>() -> BoxedStrategy<(V, V)> {
    (any_rotation::<T>(), ball_vector(PI / 2.0 - 1e-6)).boxed()
}

fn check_mean_symmetric<T: Real, G: LieGroup<T>>((r, v): (V, V), t: &Tracker) -> CheckResult {
    let r = G::exp(&v3::<T>(&r));
    let v = v3::<T>(&v);
    let pair = [r.boxplus(&v), r.boxplus(&-v)];
    let m = ok_or_fail("mean of R ⊞ ±v", G::mean(&pair))?;
    t.check(
        "mean(R ⊞ v, R ⊞ −v) = R",
        rot_dist(&m, &r),
        tol::<T>(K_MEAN_SYMMETRIC),
    )?;
    // Single rotation and identical rotations: the input itself.
    let one = ok_or_fail("mean of one", G::mean(&[r]))?;
    t.check(
        "mean of one rotation",
        rot_dist(&one, &r),
        tol::<T>(K_MEAN_EXACT),
    )?;
    let same = ok_or_fail("mean of identical", G::mean(&[r; 5]))?;
    t.check(
        "mean of 5 identical rotations",
        rot_dist(&same, &r),
        tol::<T>(K_MEAN_EXACT),
    )?;
    let ws = [c::<T>(0.2), c::<T>(5.0), c::<T>(0.0), c::<T>(1.0)];
    let same_w = ok_or_fail("weighted mean of identical", G::weighted_mean(&[r; 4], &ws))?;
    t.check(
        "weighted mean of identical rotations",
        rot_dist(&same_w, &r),
        tol::<T>(K_MEAN_EXACT),
    )?;
    // q and −q (for matrices: the same matrix twice).
    let neg = G::from_quaternion(&-r.to_quaternion()).expect("unit quaternion");
    let pm = ok_or_fail("mean of q, −q", G::mean(&[r, neg, r, neg]))?;
    t.check(
        "mean of q and −q",
        rot_dist(&pm, &r),
        tol::<T>(K_MEAN_EXACT),
    )?;
    // Weights (1, 0) and (0, 1): the first, resp. the second.
    let w10 = ok_or_fail(
        "weights (1, 0)",
        G::weighted_mean(&pair, &[T::one(), T::zero()]),
    )?;
    t.check(
        "weighted mean, weights (1, 0) = first",
        rot_dist(&w10, &pair[0]),
        tol::<T>(K_MEAN_EXACT),
    )?;
    let w01 = ok_or_fail(
        "weights (0, 1)",
        G::weighted_mean(&pair, &[T::zero(), T::one()]),
    )?;
    t.check(
        "weighted mean, weights (0, 1) = second",
        rot_dist(&w01, &pair[1]),
        tol::<T>(K_MEAN_EXACT),
    )
}

group_property_tests! { check_mean_symmetric, rotation_and_half_pi_vector;
    fn mean_symmetric_matrix_f32: f32, SO3Matrix;
    fn mean_symmetric_matrix_f64: f64, SO3Matrix;
    fn mean_symmetric_quaternion_f32: f32, UnitQuaternion;
    fn mean_symmetric_quaternion_f64: f64, UnitQuaternion;
}

/// (centre, offsets of radius < π/2): the doc's convergence ball.
fn wide_cluster<T: Real>() -> BoxedStrategy<(V, Vec<V>)> {
    (
        any_rotation::<T>(),
        prop::collection::vec(ball_vector(PI / 2.0 - 1e-3), 1..12),
    )
        .boxed()
}

/// Inside a ball of radius π/2 the mean exists, is unique and the iteration converges
/// (as documented).
fn check_mean_converges_in_half_pi_ball<T: Real, G: LieGroup<T>>(
    (centre, offsets): (V, Vec<V>),
    t: &Tracker,
) -> CheckResult {
    let c0 = G::exp(&v3::<T>(&centre));
    let rs: Vec<G> = offsets.iter().map(|v| c0.boxplus(&v3::<T>(v))).collect();
    let m = ok_or_fail("mean in the π/2 ball", G::mean(&rs))?;
    let ones = vec![T::one(); rs.len()];
    t.check(
        "mean in the π/2 ball: first-order optimality",
        mean_residual(&rs, &ones, &m),
        tol::<T>(K_MEAN_OPTIMALITY),
    )
}

group_property_tests! { check_mean_converges_in_half_pi_ball, wide_cluster;
    fn mean_converges_in_half_pi_ball_matrix_f32: f32, SO3Matrix;
    fn mean_converges_in_half_pi_ball_matrix_f64: f64, SO3Matrix;
    fn mean_converges_in_half_pi_ball_quaternion_f32: f32, UnitQuaternion;
    fn mean_converges_in_half_pi_ball_quaternion_f64: f64, UnitQuaternion;
}

fn expect_err<G: std::fmt::Debug>(
    t: &Tracker,
    label: &'static str,
    r: Result<G, LieError>,
    ok: impl Fn(&LieError) -> bool,
) -> CheckResult {
    match r {
        Err(e) if ok(&e) => t.require(label, !e.to_string().is_empty(), || "empty message".into()),
        other => t.require(label, false, || format!("unexpected {other:?}")),
    }
}

fn check_mean_errors<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    let r = G::exp(&v3::<T>(&V::new(0.3, -0.2, 0.9)));
    let s = G::exp(&v3::<T>(&V::new(-0.1, 0.5, 0.2)));
    expect_err(t, "mean of nothing → Empty", G::mean(&[]), |e| {
        matches!(e, LieError::Empty { what: "mean" })
    })?;
    expect_err(
        t,
        "weighted mean of nothing → Empty",
        G::weighted_mean(&[], &[]),
        |e| matches!(e, LieError::Empty { .. }),
    )?;
    expect_err(
        t,
        "2 rotations, 3 weights → LengthMismatch",
        G::weighted_mean(&[r, s], &[T::one(); 3]),
        |e| {
            matches!(
                e,
                LieError::LengthMismatch {
                    expected: 2,
                    found: 3,
                    ..
                }
            )
        },
    )?;
    expect_err(
        t,
        "2 rotations, 1 weight → LengthMismatch",
        G::weighted_mean(&[r, s], &[T::one()]),
        |e| {
            matches!(
                e,
                LieError::LengthMismatch {
                    expected: 2,
                    found: 1,
                    ..
                }
            )
        },
    )?;
    let bad = [
        ("weight −1 → InvalidWeight", c::<T>(-1.0)),
        ("weight −tiny → InvalidWeight", -min_positive::<T>()),
        ("weight NaN → InvalidWeight", c::<T>(f64::NAN)),
        ("weight +∞ → InvalidWeight", c::<T>(f64::INFINITY)),
        ("weight −∞ → InvalidWeight", c::<T>(f64::NEG_INFINITY)),
    ];
    for (label, w) in bad {
        expect_err(
            t,
            label,
            G::weighted_mean(&[r, s, r], &[T::one(), w, T::one()]),
            |e| matches!(e, LieError::InvalidWeight { index: 1, .. }),
        )?;
    }
    expect_err(
        t,
        "all-zero weights → ZeroWeights",
        G::weighted_mean(&[r, s], &[T::zero(), T::zero()]),
        |e| matches!(e, LieError::ZeroWeights { count: 2, .. }),
    )?;
    expect_err(
        t,
        "weights ±0 → ZeroWeights",
        G::weighted_mean(&[r, s], &[T::zero(), -T::zero()]),
        |e| matches!(e, LieError::ZeroWeights { count: 2, .. }),
    )?;
    // Non-finite rotations (built without validation) are named before any iteration.
    let nan = G::exp(&Vector3::new(c::<T>(f64::NAN), T::zero(), T::zero()));
    expect_err(
        t,
        "NaN rotation → NonFiniteRotation",
        G::mean(&[r, nan]),
        |e| matches!(e, LieError::NonFiniteRotation { index: 1, .. }),
    )?;
    expect_err(
        t,
        "NaN rotation with weight 0 → NonFiniteRotation",
        G::weighted_mean(&[r, nan], &[T::one(), T::zero()]),
        |e| matches!(e, LieError::NonFiniteRotation { index: 1, .. }),
    )?;
    // Messages say what is wrong.
    let msg = G::weighted_mean(&[r, s], &[T::one(), c::<T>(-2.0)])
        .unwrap_err()
        .to_string();
    t.require(
        "InvalidWeight message names the weight",
        msg.contains("weight 1") && msg.contains("-2"),
        || msg.clone(),
    )
}

group_fixed_tests! { check_mean_errors;
    fn mean_errors_matrix_f32: f32, SO3Matrix;
    fn mean_errors_matrix_f64: f64, SO3Matrix;
    fn mean_errors_quaternion_f32: f32, UnitQuaternion;
    fn mean_errors_quaternion_f64: f64, UnitQuaternion;
}

/// Accepts a valid rotation (finite, orthonormal to round-off) or `NotConverged`.
fn valid_or_not_converged<T: Real, G: LieGroup<T>>(
    t: &Tracker,
    label: &'static str,
    r: Result<G, LieError>,
) -> CheckResult {
    match r {
        Ok(m) => {
            let mm = mf(&m.to_matrix());
            t.require(label, mm.iter().all(|x| x.is_finite()), || {
                format!("non-finite mean {m:?}")
            })?;
            t.check(
                label,
                orthogonality_defect(&mm),
                tol::<T>(K_MEAN_SPREAD_VALID),
            )
        }
        // Counted in the report (a check that always passes).
        Err(LieError::NotConverged { .. }) => t.check("spread: NotConverged (count)", 0.0, 0.0),
        Err(e) => t.require(label, false, || format!("unexpected error {e}")),
    }
}

/// Rotations spread over SO(3): antipodal pairs, rotations exactly π apart, the three
/// half-turns about the axes, uniform samples. The mean need not be unique; the result
/// must be a rotation or `NotConverged`, never NaN or a panic.
fn check_mean_spread<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    let mut rng = StdRng::seed_from_u64(99);
    let label = "spread rotations: a rotation or NotConverged";
    for k in 0..200 {
        let r = G::random(&mut rng);
        let u = G::random(&mut rng).log();
        let u = if u.norm() > T::zero() {
            u.normalize()
        } else {
            Vector3::x()
        };
        let half_turn = r.boxplus(&(u * T::pi()));
        valid_or_not_converged(t, label, G::mean(&[r, half_turn]))?;
        valid_or_not_converged(
            t,
            label,
            G::weighted_mean(&[r, half_turn], &[c::<T>(0.7), c::<T>(0.3)]),
        )?;
        let n = 2 + k % 40;
        let sample: Vec<G> = (0..n).map(|_| G::random(&mut rng)).collect();
        valid_or_not_converged(t, label, G::mean(&sample))?;
        let ws: Vec<T> = (0..n).map(|i| c::<T>(1.0 + (i % 3) as f64)).collect();
        valid_or_not_converged(t, label, G::weighted_mean(&sample, &ws))?;
    }
    let half_turns: Vec<G> = (0..3)
        .map(|i| {
            let mut v = Vector3::zeros();
            v[i] = T::pi();
            G::exp(&v)
        })
        .collect();
    valid_or_not_converged(t, label, G::mean(&half_turns))?;
    let mut with_identity = half_turns.clone();
    with_identity.push(G::identity());
    valid_or_not_converged(t, label, G::mean(&with_identity))
}

group_fixed_tests! { check_mean_spread;
    fn mean_spread_matrix_f32: f32, SO3Matrix;
    fn mean_spread_matrix_f64: f64, SO3Matrix;
    fn mean_spread_quaternion_f32: f32, UnitQuaternion;
    fn mean_spread_quaternion_f64: f64, UnitQuaternion;
}

// =======================================================================================
// 3. interpolate (values)
// =======================================================================================

/// (a, b ⊟ a, t) with t ∈ [0, 1].
fn interp_input<T: Real>() -> BoxedStrategy<(V, V, f64)> {
    (
        any_rotation::<T>(),
        any_rotation::<T>(),
        Union::new_weighted(vec![
            (6, (0.0f64..=1.0).boxed()),
            (1, Just(0.0).boxed()),
            (1, Just(0.5).boxed()),
            (1, Just(1.0).boxed()),
        ]),
    )
        .boxed()
}

fn check_interpolate<T: Real, G: LieGroup<T>>(
    (a, rel, tt): (V, V, f64),
    t: &Tracker,
) -> CheckResult {
    let a = G::exp(&v3::<T>(&a));
    let b = a.boxplus(&v3::<T>(&rel));
    let s = c::<T>(tt);
    let phi = vf(&b.boxminus(&a));
    let it = a.interpolate(&b, s);
    t.require("interpolate: finite", finite_m(&it.to_matrix()), || {
        format!("{it:?}")
    })?;
    t.check(
        "interpolate(a, b, 0) = a",
        rot_dist(&a.interpolate(&b, T::zero()), &a),
        tol::<T>(K_INTERP_IDENTICAL),
    )?;
    t.check(
        "interpolate(a, b, 1) = b",
        rot_dist(&a.interpolate(&b, T::one()), &b),
        tol::<T>(K_INTERP_END),
    )?;
    // Constant angular speed along the geodesic: it ⊟ a = tφ and b ⊟ it = (1 − t)φ,
    // where those are below π by the margin (else Log may return the other sign).
    let ts = Real::to_f64(s);
    let lim = PI - pi_margin::<T>();
    if ts * phi.norm() < lim {
        t.check(
            "interpolate: it ⊟ a = t·(b ⊟ a)",
            (vf(&it.boxminus(&a)) - phi * ts).norm(),
            tol::<T>(K_INTERP_SPEED),
        )?;
    }
    if (1.0 - ts) * phi.norm() < lim {
        t.check(
            "interpolate: b ⊟ it = (1 − t)·(b ⊟ a)",
            (vf(&b.boxminus(&it)) - phi * (1.0 - ts)).norm(),
            tol::<T>(K_INTERP_SPEED),
        )?;
    }
    // Distances (sign-free, so also at exactly π): |it ⊟ a| = t|φ|, |b ⊟ it| = (1 − t)|φ|.
    t.check(
        "interpolate: angle(it, a) = t·angle(b, a)",
        (Real::to_f64(it.boxminus(&a).norm()) - ts * phi.norm()).abs(),
        tol::<T>(K_INTERP_SPEED),
    )?;
    t.check(
        "interpolate: angle(b, it) = (1 − t)·angle(b, a)",
        (Real::to_f64(b.boxminus(&it).norm()) - (1.0 - ts) * phi.norm()).abs(),
        tol::<T>(K_INTERP_SPEED),
    )?;
    // Identical inputs: a for every t, including extrapolation.
    for u in [0.0, 0.3, 1.0, -1.0, 2.5] {
        let ii = a.interpolate(&a, c::<T>(u));
        t.check(
            "interpolate(a, a, t) = a",
            rot_dist(&ii, &a),
            tol::<T>(K_INTERP_IDENTICAL),
        )?;
    }
    Ok(())
}

group_property_tests! { check_interpolate, interp_input;
    fn interpolate_values_matrix_f32: f32, SO3Matrix;
    fn interpolate_values_matrix_f64: f64, SO3Matrix;
    fn interpolate_values_quaternion_f32: f32, UnitQuaternion;
    fn interpolate_values_quaternion_f64: f64, UnitQuaternion;
}

/// (a, δ with |δ| log-uniform in [1e-12, 1e-3] rad, t ∈ [0, 1]).
fn nearly_identical<T: Real>() -> BoxedStrategy<(V, V, f64)> {
    (
        any_rotation::<T>(),
        ((-12.0f64..=-3.0).prop_map(|e| 10f64.powf(e)), axis()).prop_map(|(d, u)| u * d),
        0.0f64..=1.0,
    )
        .boxed()
}

fn check_interpolate_nearly_identical<T: Real, G: LieGroup<T>>(
    (a, d, tt): (V, V, f64),
    t: &Tracker,
) -> CheckResult {
    let a = G::exp(&v3::<T>(&a));
    let d = v3::<T>(&d);
    let b = a.boxplus(&d);
    let s = c::<T>(tt);
    let it = a.interpolate(&b, s);
    t.require(
        "nearly identical: finite",
        finite_m(&it.to_matrix()),
        || format!("{it:?}"),
    )?;
    // Absolute errors: b ⊟ a carries an absolute round-off of a few ε (from the entries
    // of a and b), which is large relative to a tiny δ, so only an absolute bound holds.
    t.check(
        "nearly identical: interpolate = a ⊞ tδ",
        rot_dist(&it, &a.boxplus(&(d * s))),
        tol::<T>(K_INTERP_SPEED),
    )?;
    let phi = b.boxminus(&a);
    t.check(
        "nearly identical: it ⊟ a = t·(b ⊟ a)",
        vf(&(it.boxminus(&a) - phi * s)).norm(),
        tol::<T>(K_INTERP_SPEED),
    )
}

group_property_tests! { check_interpolate_nearly_identical, nearly_identical;
    fn interpolate_nearly_identical_matrix_f32: f32, SO3Matrix;
    fn interpolate_nearly_identical_matrix_f64: f64, SO3Matrix;
    fn interpolate_nearly_identical_quaternion_f32: f32, UnitQuaternion;
    fn interpolate_nearly_identical_quaternion_f64: f64, UnitQuaternion;
}

/// (a, b ⊟ a with angle ≤ π − 1e4·ε (so both Logs pick the same geodesic), t ∈ [−1, 2]).
fn interp_agree_input<T: Real>() -> BoxedStrategy<(V, V, f64)> {
    (
        any_rotation::<T>(),
        rotation_vector(PI - pi_margin::<T>()),
        -1.0f64..=2.0,
    )
        .boxed()
}

fn check_interpolate_agree<T: Real>((a, rel, tt): (V, V, f64), t: &Tracker) -> CheckResult {
    let am = SO3Matrix::<T>::exp(&v3::<T>(&a));
    let aq = <UnitQuaternion<T> as LieGroup<T>>::exp(&v3::<T>(&a));
    let bm = am.boxplus(&v3::<T>(&rel));
    let bq = aq.boxplus(&v3::<T>(&rel));
    let s = c::<T>(tt);
    let im = am.interpolate(&bm, s);
    let iq = aq.interpolate(&bq, s);
    t.check(
        "interpolate: matrix = quaternion",
        max_abs(&(mf(&im.to_matrix()) - mf(&iq.to_matrix()))),
        tol::<T>(K_INTERP_AGREE),
    )
}

scalar_property_tests! { check_interpolate_agree, interp_agree_input;
    fn interpolate_matrix_quaternion_agree_f32: f32;
    fn interpolate_matrix_quaternion_agree_f64: f64;
}

/// Rotations (nearly) π apart: gap π − angle = 0 or log-uniform in [1e-13, 1e-2].
fn near_pi_input<T: Real>() -> BoxedStrategy<(V, V, f64, f64)> {
    (
        any_rotation::<T>(),
        axis(),
        Union::new_weighted(vec![
            (1, Just(0.0).boxed()),
            (4, (-13.0f64..=-2.0).prop_map(|e| 10f64.powf(e)).boxed()),
        ]),
        0.0f64..=1.0,
    )
        .boxed()
}

fn check_interpolate_near_pi<T: Real, G: LieGroup<T>>(
    (a, u, gap, tt): (V, V, f64, f64),
    t: &Tracker,
) -> CheckResult {
    let a = G::exp(&v3::<T>(&a));
    let b = a.boxplus(&v3::<T>(&(u * (PI - gap))));
    let s = c::<T>(tt);
    let it = a.interpolate(&b, s);
    t.require("near π: finite", finite_m(&it.to_matrix()), || {
        format!("{it:?}")
    })?;
    t.check(
        "near π: interpolate(a, b, 1) = b",
        rot_dist(&a.interpolate(&b, T::one()), &b),
        tol::<T>(K_INTERP_END),
    )?;
    let phi = Real::to_f64(b.boxminus(&a).norm());
    let ts = Real::to_f64(s);
    t.check(
        "near π: angle(it, a) = t·angle(b, a)",
        (Real::to_f64(it.boxminus(&a).norm()) - ts * phi).abs(),
        tol::<T>(K_INTERP_SPEED),
    )?;
    t.check(
        "near π: angle(b, it) = (1 − t)·angle(b, a)",
        (Real::to_f64(b.boxminus(&it).norm()) - (1.0 - ts) * phi).abs(),
        tol::<T>(K_INTERP_SPEED),
    )
}

group_property_tests! { check_interpolate_near_pi, near_pi_input;
    fn interpolate_near_pi_matrix_f32: f32, SO3Matrix;
    fn interpolate_near_pi_matrix_f64: f64, SO3Matrix;
    fn interpolate_near_pi_quaternion_f32: f32, UnitQuaternion;
    fn interpolate_near_pi_quaternion_f64: f64, UnitQuaternion;
}

/// q and −q are the same rotation: interpolating between them stays put.
fn check_interpolate_antipodal_quaternion<T: Real>(t: &Tracker) -> CheckResult {
    for a in named_axes() {
        for angle in [0.0, 1e-8, 0.7, 2.0, PI - 1e-6, PI] {
            let q = <UnitQuaternion<T> as LieGroup<T>>::exp(&v3::<T>(&(a * angle)));
            let nq = UnitQuaternion::new_unchecked(-q.into_inner());
            for s in [0.0, 0.25, 0.5, 1.0] {
                let it = q.interpolate(&nq, c::<T>(s));
                t.check(
                    "interpolate(q, −q, t) = q",
                    rot_dist(&it, &q),
                    tol::<T>(K_INTERP_IDENTICAL),
                )?;
            }
        }
    }
    Ok(())
}

scalar_fixed_tests! { check_interpolate_antipodal_quaternion;
    fn interpolate_antipodal_quaternion_f32: f32;
    fn interpolate_antipodal_quaternion_f64: f64;
}

// =======================================================================================
// 4. between, adjoint, boxplus_left, boxminus_left
// =======================================================================================

fn check_left_operations<T: Real, G: LieGroup<T>>(
    (a, bv, theta): (V, V, V),
    t: &Tracker,
) -> CheckResult {
    let a = G::exp(&v3::<T>(&a));
    let b = G::exp(&v3::<T>(&bv));
    let th = v3::<T>(&theta);
    let (am, bm) = (mf(&a.to_matrix()), mf(&b.to_matrix()));
    let k = tol::<T>(K_LEFT);

    // between(a, b) = a⁻¹b, and a·between(a, b) = b.
    let bt = a.between(&b);
    t.check(
        "between(a, b) = aᵀb",
        max_abs(&(mf(&bt.to_matrix()) - am.transpose() * bm)),
        k,
    )?;
    t.check("a·between(a, b) = b", rot_dist(&a.compose(&bt), &b), k)?;
    t.check(
        "between(a, a) = I",
        rot_dist(&a.between(&a), &G::identity()),
        k,
    )?;

    // boxplus_left(θ) = boxplus(Rᵀθ) = Exp(θ)·R; θ up to 10 rad: Exp's round-off grows
    // like ε·|θ| (the angle itself is rounded), so relative to max(1, |θ|).
    let scale = theta.norm().max(1.0);
    let bl = a.boxplus_left(&th);
    t.check(
        "boxplus_left(θ) = boxplus(Rᵀθ)",
        rot_dist(&bl, &a.boxplus(&a.act_inv(&th))) / scale,
        k,
    )?;
    t.check(
        "boxplus_left(θ) = Exp(θ)·R",
        max_abs(&(mf(&bl.to_matrix()) - mf(&G::exp(&th).to_matrix()) * am)) / scale,
        k,
    )?;
    // Adjoint: R·Exp(θ) = Exp(Ad(R)θ)·R.
    t.check(
        "R ⊞ θ = Exp(Ad(R)θ)·R",
        rot_dist(&a.boxplus(&th), &a.boxplus_left(&(a.adjoint() * th))) / scale,
        k,
    )?;

    // other.boxplus_left(self.boxminus_left(other)) = self (at any angle: ±π·u are the
    // same rotation).
    let phi_l = a.boxminus_left(&b);
    t.check(
        "b.boxplus_left(a.boxminus_left(b)) = a",
        rot_dist(&b.boxplus_left(&phi_l), &a),
        k,
    )?;
    // boxminus_left(a, b) = Log(a bᵀ) = Log(b (bᵀa) bᵀ) = b·Log(bᵀa) = R_b·(a ⊟ b), since
    // Log(R X Rᵀ) = R Log(X) (Exp(Rθ) = R Exp(θ) Rᵀ). Up to sign within the margin of π.
    let phi_r = a.boxminus(&b);
    let lhs = vf(&phi_l);
    let rhs = vf(&b.act(&phi_r));
    let mut err = (lhs - rhs).norm();
    if lhs.norm() > PI - pi_margin::<T>() {
        err = err.min((lhs + rhs).norm());
    }
    t.check("a ⊟ₗ b = R_b·(a ⊟ b)", err, k)?;
    t.check(
        "a ⊟ₗ b = Ad(b)·(a ⊟ b)",
        {
            let adj = vf(&(b.adjoint() * phi_r));
            let e = (lhs - adj).norm();
            if lhs.norm() > PI - pi_margin::<T>() {
                e.min((lhs + adj).norm())
            } else {
                e
            }
        },
        k,
    )?;
    // Left ⊞ then ⊟ₗ returns θ when |θ| < π (below the margin).
    if theta.norm() < PI - pi_margin::<T>() {
        t.check(
            "(Exp(θ)·a) ⊟ₗ a = θ",
            vf(&(a.boxplus_left(&th).boxminus_left(&a) - th)).norm(),
            k,
        )?;
    }
    Ok(())
}

fn left_input<T: Real>() -> BoxedStrategy<(V, V, V)> {
    (
        any_rotation::<T>(),
        any_rotation::<T>(),
        long_rotation_vector::<T>(),
    )
        .boxed()
}

group_property_tests! { check_left_operations, left_input;
    fn left_operations_matrix_f32: f32, SO3Matrix;
    fn left_operations_matrix_f64: f64, SO3Matrix;
    fn left_operations_quaternion_f32: f32, UnitQuaternion;
    fn left_operations_quaternion_f64: f64, UnitQuaternion;
}

// =======================================================================================
// 5. SO3Matrix: approx, Mul, Display; Pose: Display, approx
// =======================================================================================

fn check_matrix_approx<T: Real>(t: &Tracker) -> CheckResult {
    use approx::{AbsDiffEq, RelativeEq, UlpsEq};
    let e = eps::<T>();
    // A perturbation d far above the round-off of the angle between two rotations (a few
    // ε, measured 0.3ε below) and small: 1e6·ε = 2.2e-10 rad in f64, 1e3·ε = 1.2e-4 rad in
    // f32. The factors 2 and 1/2 around d then decide every comparison with a margin.
    let d = if T::NAME == "f64" { 1e6 * e } else { 1e3 * e };
    for ax in named_axes() {
        for angle in [0.0, 0.4, 2.0, PI - 1e-3] {
            let a = SO3Matrix::<T>::exp(&v3::<T>(&(ax * angle)));
            let u = v3::<T>(&named_axes()[9]);
            let b = a.boxplus(&(u * c::<T>(d)));
            // The measured angle between a and b is d to within a few ε.
            let dab = Real::to_f64(a.boxminus(&b).norm());
            t.check("approx: angle(a, a ⊞ d) = d", (dab - d).abs(), 16.0 * e)?;
            let ok = |x: bool, what: &str| -> CheckResult {
                t.require("approx: expected result", x, || {
                    format!("{what} at angle {angle}, axis {ax:?}")
                })
            };
            ok(a.abs_diff_eq(&b, c::<T>(2.0 * d)), "abs_diff_eq(2d)")?;
            ok(!a.abs_diff_eq(&b, c::<T>(0.5 * d)), "!abs_diff_eq(d/2)")?;
            ok(a.abs_diff_eq(&a, T::zero()), "abs_diff_eq(a, a, 0)")?;
            // relative_eq: epsilon alone, or max_relative × the larger angle.
            ok(
                a.relative_eq(&b, c::<T>(2.0 * d), T::zero()),
                "relative_eq(2d, 0)",
            )?;
            ok(
                !a.relative_eq(&b, c::<T>(0.5 * d), T::zero()),
                "!relative_eq(d/2, 0)",
            )?;
            if angle > 0.1 {
                let big = Real::to_f64(a.angle().max(b.angle()));
                ok(
                    a.relative_eq(&b, T::zero(), c::<T>(2.0 * d / big)),
                    "relative_eq(0, 2d/angle)",
                )?;
                ok(
                    !a.relative_eq(&b, T::zero(), c::<T>(0.5 * d / big)),
                    "!relative_eq(0, d/(2·angle))",
                )?;
            }
            // ulps_eq: the angle test with epsilon, or entries within max_ulps.
            ok(a.ulps_eq(&b, c::<T>(2.0 * d), 0), "ulps_eq(2d, 0)")?;
            ok(!a.ulps_eq(&b, c::<T>(0.5 * d), 4), "!ulps_eq(d/2, 4)")?;
            ok(a.ulps_eq(&a, T::zero(), 0), "ulps_eq(a, a, 0, 0)")?;
            // The same rotation renormalised: equal within a few ε of angle.
            let rn = a.renormalize();
            let drn = Real::to_f64(a.boxminus(&rn).norm());
            t.check("approx: angle(a, renormalize(a))", drn, 4.0 * e)?;
            ok(
                a.abs_diff_eq(&rn, c::<T>(4.0 * e)),
                "abs_diff_eq renormalised",
            )?;
            ok(
                a.relative_eq(&rn, c::<T>(4.0 * e), T::zero()),
                "relative_eq renormalised",
            )?;
            approx::assert_abs_diff_eq!(a, rn, epsilon = c::<T>(4.0 * e));
            approx::assert_relative_eq!(a, b, epsilon = c::<T>(2.0 * d));
            approx::assert_abs_diff_ne!(a, b, epsilon = c::<T>(0.5 * d));
        }
    }
    // The ulps test is on the entries alone: a rotation by 1.2·epsilon about (1,1,1)/√3
    // moves every entry by at most 1.2·epsilon·√(2/3) < epsilon (the columns of û have
    // norm √(2/3)), but its angle exceeds epsilon, so the angle test fails; an entry-wise
    // "within epsilon" test would pass.
    let a = SO3Matrix::<T>::exp(&v3::<T>(&V::new(0.3, 0.2, -0.5)));
    let eps_a = if T::NAME == "f64" { 1e-9 } else { 1e-3 };
    let diag = v3::<T>(&(V::new(1.0, 1.0, 1.0).normalize() * (1.2 * eps_a)));
    let b = a.boxplus(&diag);
    t.require(
        "ulps_eq precondition: entries within epsilon",
        max_abs(&(mf(a.matrix()) - mf(b.matrix()))) < eps_a,
        || "entries differ by more than epsilon".into(),
    )?;
    t.require(
        "ulps_eq is the angle test (not an entry-wise epsilon test)",
        !a.ulps_eq(&b, c::<T>(eps_a), 4),
        || "a rotation 1.2·epsilon away compared ulps_eq within epsilon".into(),
    )?;
    // Defaults.
    t.require(
        "approx defaults",
        SO3Matrix::<T>::default_epsilon() == T::default_epsilon()
            && SO3Matrix::<T>::default_max_relative() == T::default_epsilon()
            && SO3Matrix::<T>::default_max_ulps() == 4,
        || "defaults changed".into(),
    )
}

scalar_fixed_tests! { check_matrix_approx;
    fn matrix_approx_f32: f32;
    fn matrix_approx_f64: f64;
}

// The reference forms are what is tested.
#[allow(clippy::op_ref)]
fn check_matrix_mul<T: Real>(((a, b), p): ((V, V), V), t: &Tracker) -> CheckResult {
    let a = SO3Matrix::<T>::exp(&v3::<T>(&a));
    let b = SO3Matrix::<T>::exp(&v3::<T>(&b));
    let p = v3::<T>(&p);
    let ab = a.compose(&b);
    let same = |x: bool, what: &str| -> CheckResult {
        t.require("Mul agrees with compose/act exactly", x, || {
            what.to_string()
        })
    };
    same(a * b == ab, "a * b")?;
    same(&a * b == ab, "&a * b")?;
    same(a * &b == ab, "a * &b")?;
    same(&a * &b == ab, "&a * &b")?;
    let mut m = a;
    m *= b;
    same(m == ab, "a *= b")?;
    same(a * p == a.act(&p), "a * p")?;
    same(&a * p == a.act(&p), "&a * p")?;
    same(a * &p == a.act(&p), "a * &p")?;
    same(&a * &p == a.act(&p), "&a * &p")?;
    // Against the plain matrix product (independent of the implementation).
    t.check(
        "a * b = matrix product",
        max_abs(&(mf((a * b).matrix()) - mf(a.matrix()) * mf(b.matrix()))),
        4.0 * eps::<T>(),
    )?;
    // Associativity with vectors: (a * b) * p = a * (b * p) to round-off.
    t.check(
        "(a * b) * p = a * (b * p)",
        vec_rel_err(&vf(&((a * b) * p)), &vf(&(a * (b * p)))),
        16.0 * eps::<T>(),
    )
}

fn mul_input<T: Real>() -> BoxedStrategy<((V, V), V)> {
    (two_rotations::<T>(), point::<T>()).boxed()
}

scalar_property_tests! { check_matrix_mul, mul_input;
    fn matrix_mul_f32: f32;
    fn matrix_mul_f64: f64;
}

fn check_display<T: Real>(t: &Tracker) -> CheckResult {
    // Angle 0.5 about (2, 3, 6)/7.
    let axis = V::new(2.0, 3.0, 6.0) / 7.0;
    let r = SO3Matrix::<T>::exp(&v3::<T>(&(axis * 0.5)));
    let s = format!("{r:.3}");
    let want = "SO3Matrix: angle 0.500 rad about [0.286, 0.429, 0.857]";
    t.require("Display {:.3} first line", s.starts_with(want), || {
        s.clone()
    })?;
    // The matrix follows, with 3 decimals.
    let m00 = format!("{:.3}", Real::to_f64(r.matrix()[(0, 0)]));
    t.require("Display {:.3} shows the matrix", s.contains(&m00), || {
        format!("{s} lacks {m00}")
    })?;
    let decimals_ok = s
        .lines()
        .skip(1)
        .flat_map(|l| l.split_whitespace())
        .filter(|w| w.parse::<f64>().is_ok())
        .all(|w| w.split('.').nth(1).is_some_and(|f| f.len() == 3));
    t.require("Display {:.3}: 3 decimals", decimals_ok, || s.clone())?;
    // Without a precision: the full angle.
    let full = format!("{r}");
    let angle = format!("{}", r.angle());
    t.require(
        "Display shows the angle",
        full.starts_with("SO3Matrix: angle ") && full.contains(&format!("angle {angle} rad")),
        || full.clone(),
    )?;
    // Identity: angle 0, no NaN in the axis.
    let id = format!("{:.2}", SO3Matrix::<T>::identity());
    t.require(
        "Display identity",
        id.starts_with("SO3Matrix: angle 0.00 rad") && !id.contains("NaN"),
        || id.clone(),
    )?;
    // A half turn (the sign of the axis, and of its zero components, is round-off).
    let h = format!("{:.4}", SO3Matrix::<T>::exp(&v3::<T>(&(V::z() * PI))));
    let hz = h.replace("-0.0000", "0.0000").replace("-1.0000", "1.0000");
    t.require(
        "Display half turn",
        hz.starts_with("SO3Matrix: angle 3.1416 rad about [0.0000, 0.0000, 1.0000]"),
        || h.clone(),
    )?;
    // Pose.
    let p = Pose::new(Vector3::new(c::<T>(1.0), c::<T>(-2.5), c::<T>(0.125)), r);
    let ps = format!("{p:.3}");
    let lg = r.log();
    let want = format!(
        "position [1.000, -2.500, 0.125] m, rotation vector [{:.3}, {:.3}, {:.3}] rad",
        lg.x, lg.y, lg.z
    );
    t.require("Pose Display {:.3}", ps == want, || {
        format!("{ps} != {want}")
    })?;
    let pq = Pose::new(p.position, <UnitQuaternion<T> as LieGroup<T>>::exp(&lg));
    let pqs = format!("{pq:.3}");
    t.require("Pose Display, quaternion = matrix", pqs == ps, || {
        format!("{pqs} != {ps}")
    })?;
    let full = format!("{p}");
    t.require(
        "Pose Display",
        full.starts_with("position [1, -2.5, 0.125] m, rotation vector [")
            && full.ends_with("] rad"),
        || full.clone(),
    )
}

scalar_fixed_tests! { check_display;
    fn display_f32: f32;
    fn display_f64: f64;
}

fn check_pose_approx<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    use approx::{AbsDiffEq, RelativeEq};
    let e = eps::<T>();
    let d = if T::NAME == "f64" { 1e-9 } else { 1e-3 };
    let r = G::exp(&v3::<T>(&V::new(0.4, -1.0, 2.2)));
    let p = Pose::new(v3::<T>(&V::new(1.0, 2.0, -3.0)), r);
    let ok = |x: bool, what: &str| -> CheckResult {
        t.require("Pose approx: expected result", x, || what.to_string())
    };
    // q and −q.
    let neg = G::from_quaternion(&-r.to_quaternion()).expect("unit");
    let pn = Pose::new(p.position, neg);
    ok(p.abs_diff_eq(&pn, c::<T>(4.0 * e)), "pose with −q")?;
    ok(
        p.relative_eq(&pn, c::<T>(4.0 * e), c::<T>(4.0 * e)),
        "pose with −q (relative)",
    )?;
    // Position off by d along x.
    let px = Pose::new(p.position + Vector3::x() * c::<T>(d), r);
    ok(p.abs_diff_eq(&px, c::<T>(2.0 * d)), "position within 2d")?;
    ok(!p.abs_diff_eq(&px, c::<T>(0.5 * d)), "position beyond d/2")?;
    // Rotation off by d.
    let pr = Pose::new(p.position, r.boxplus(&v3::<T>(&(V::y() * d))));
    ok(p.abs_diff_eq(&pr, c::<T>(2.0 * d)), "rotation within 2d")?;
    ok(!p.abs_diff_eq(&pr, c::<T>(0.5 * d)), "rotation beyond d/2")?;
    ok(
        !p.relative_eq(&pr, c::<T>(0.5 * d), T::zero()),
        "rotation beyond d/2 (relative)",
    )?;
    ok(
        p.relative_eq(&pr, T::zero(), c::<T>(2.0 * d / Real::to_f64(r.angle()))),
        "rotation within max_relative·angle",
    )?;
    approx::assert_relative_eq!(p, pn, epsilon = c::<T>(4.0 * e));
    approx::assert_abs_diff_ne!(p, pr, epsilon = c::<T>(0.5 * d));
    ok(
        Pose::<T, G>::default() == Pose::identity(),
        "default = identity",
    )
}

group_fixed_tests! { check_pose_approx;
    fn pose_approx_matrix_f32: f32, SO3Matrix;
    fn pose_approx_matrix_f64: f64, SO3Matrix;
    fn pose_approx_quaternion_f32: f32, UnitQuaternion;
    fn pose_approx_quaternion_f64: f64, UnitQuaternion;
}

// =======================================================================================
// 6. Pose: ⊞/⊟ round trips, points, cast_rotation
// =======================================================================================

/// (pose x = (p, R), pose y, δ = (δp, δθ) with |δθ| < π − margin, a point).
type PoseInput = ((V, V), (V, V), (V, V), V);

fn pose_input<T: Real>() -> BoxedStrategy<PoseInput> {
    (
        (point::<T>(), any_rotation::<T>()),
        (point::<T>(), any_rotation::<T>()),
        (point::<T>(), rotation_vector(PI - pi_margin::<T>())),
        point::<T>(),
    )
        .boxed()
}

fn pose_of<T: Real, G: LieGroup<T>>((p, r): &(V, V)) -> Pose<T, G> {
    Pose::new(v3::<T>(p), G::exp(&v3::<T>(r)))
}

fn pose_dist<T: Real, G: LieGroup<T>>(a: &Pose<T, G>, b: &Pose<T, G>) -> f64 {
    let scale = vf(&a.position).amax().max(1.0);
    (vf(&(a.position - b.position)).amax() / scale).max(rot_dist(&a.rotation, &b.rotation))
}

fn check_pose<T: Real, G: LieGroup<T>>((x, y, d, pt): PoseInput, t: &Tracker) -> CheckResult {
    let x = pose_of::<T, G>(&x);
    let y = pose_of::<T, G>(&y);
    let dd: Vector6<T> = Vector6::new(
        c::<T>(d.0.x),
        c::<T>(d.0.y),
        c::<T>(d.0.z),
        c::<T>(d.1.x),
        c::<T>(d.1.y),
        c::<T>(d.1.z),
    );
    let k = tol::<T>(K_POSE);
    t.check(
        "pose: x ⊞ (y ⊟ x) = y",
        pose_dist(&x.boxplus(&y.boxminus(&x)), &y),
        k,
    )?;
    let back = x.boxplus(&dd).boxminus(&x);
    let err = (back - dd).amax() / dd.amax().max(T::one());
    t.check("pose: (x ⊞ δ) ⊟ x = δ", Real::to_f64(err), k)?;
    t.check(
        "pose: perturbed = boxplus",
        pose_dist(
            &x.perturbed(&dd.fixed_rows::<3>(0).into(), &dd.fixed_rows::<3>(3).into()),
            &x.boxplus(&dd),
        ),
        0.0,
    )?;
    t.check("pose: x ⊟ x = 0", Real::to_f64(x.boxminus(&x).amax()), k)?;
    // Points: world ↔ body.
    let p = v3::<T>(&pt);
    let scale = pt.amax().max(vf(&x.position).amax()).max(1.0);
    t.check(
        "pose: inverse_transform(transform(p)) = p",
        vf(&(x.inverse_transform_point(&x.transform_point(&p)) - p)).amax() / scale,
        k,
    )?;
    t.check(
        "pose: transform(inverse_transform(p)) = p",
        vf(&(x.transform_point(&x.inverse_transform_point(&p)) - p)).amax() / scale,
        k,
    )?;
    t.check(
        "pose: transform(p) = position + R p",
        vf(&(x.transform_point(&p) - (x.position + x.rotation.act(&p)))).amax() / scale,
        0.0,
    )?;
    // cast_rotation: to the other representations and back.
    let xm: Pose<T, SO3Matrix<T>> = x.cast_rotation();
    let xq: Pose<T, UnitQuaternion<T>> = x.cast_rotation();
    t.require(
        "pose: cast keeps the position",
        xm.position == x.position && xq.position == x.position,
        || "position changed".into(),
    )?;
    t.check(
        "pose: cast to matrix",
        max_abs(&(mf(&xm.rotation.to_matrix()) - mf(&x.rotation.to_matrix()))),
        k,
    )?;
    t.check(
        "pose: cast to quaternion",
        max_abs(&(mf(&xq.rotation.to_matrix()) - mf(&x.rotation.to_matrix()))),
        k,
    )?;
    let xx: Pose<T, G> = xq.cast_rotation::<SO3Matrix<T>>().cast_rotation();
    t.check("pose: cast round trip", pose_dist(&xx, &x), k)?;
    t.check(
        "pose: transform_point agrees across casts",
        vf(&(xq.transform_point(&p) - xm.transform_point(&p))).amax() / scale,
        k,
    )
}

group_property_tests! { check_pose, pose_input;
    fn pose_roundtrips_matrix_f32: f32, SO3Matrix;
    fn pose_roundtrips_matrix_f64: f64, SO3Matrix;
    fn pose_roundtrips_quaternion_f32: f32, UnitQuaternion;
    fn pose_roundtrips_quaternion_f64: f64, UnitQuaternion;
}
