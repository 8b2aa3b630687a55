//! The small-angle fast paths of Exp, Log and Γ⁻¹ against independent references, in
//! f32 and f64, on both sides of their cut-offs:
//!
//! * matrix Log below `Real::SERIES_ATAN` in x = tan θ (θ/sin θ from the series of
//!   atan(x)/x instead of `atan2`), quaternion Log below it in x = tan(θ/2), and both
//!   on either side of tan(π/8), where `Real::ATAN_POLY` gives way to `atan2`, and of
//!   `Real::SERIES_ATAN_SHORT`, below which a few Taylor terms replace the polynomial;
//! * quaternion Exp below `Real::SERIES_SINC` in θ/2 (sin(θ/2)/θ and cos(θ/2) from their
//!   series in θ², no `sin_cos`);
//! * Γ⁻¹ and its coefficient γ below `Real::SERIES_GAMMA_INV_SHORT` and
//!   `Real::SERIES_GAMMA_INV_TINY` (fewer terms of the same series);
//! * both Logs below `Real::SERIES_ASIN_TINY` (θ/sin θ from the series of asin(y)/y in
//!   y² = sin²θ or sin²(θ/2)), and the quaternion Exp below `Real::SERIES_EXP_TINY`
//!   (two terms of each series).
//!
//! # References
//! Computed in f64 from the input widened to f64 (exact): the Logs as
//! `atan2(|s|, c)·s/|s|` (matrix: s the axial vector of the skew part, c = (tr R − 1)/2;
//! quaternion: `2·atan2(|v|, w)·v/|v|` with w ≥ 0), Exp as `(cos(θ/2), sin(θ/2)·θ/|θ|)`,
//! γ as its series Σₙ≥₁ |B₂ₙ| θ²ⁿ⁻²/(2n)! to 10 terms (the tail is below 1e-20 relative
//! for θ ≤ 0.3). Each reference is within ~2ε₆₄ of the exact value of the same input.
//!
//! # Bounds (ε of the type tested)
//! Log: |θ − θ_ref| ≤ 6ε·|θ_ref| (the fast path rounds ~3 times: x², the series, the
//! product; the f64 reference itself carries ~2ε₆₄). Exp: 4ε per component, relative to
//! |v| for the vector part. Γ⁻¹: 4ε per entry (Γ⁻¹ ≈ I; its θ̂² term carries γ's
//! relative error times θ² ≤ 0.09). γ: 4ε relative, and a jump across the cut-off of at
//! most the sum of the two sides' bounds.

use lie_xpbd::lie::real::c;
use lie_xpbd::lie::so3::{self, right_jacobian_inv};
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use nalgebra::{Matrix3, Quaternion, Vector3};

type V64 = Vector3<f64>;

/// Unit axes: the coordinate axes, a diagonal, and a few fixed generic directions with
/// negative components.
fn axes() -> Vec<V64> {
    let mut a = vec![
        V64::x(),
        V64::y(),
        V64::z(),
        V64::new(1.0, 1.0, 1.0).normalize(),
        V64::new(-0.3, 0.8, -0.52).normalize(),
        V64::new(0.9, -0.1, 0.42).normalize(),
        V64::new(-0.6, -0.7, 0.39).normalize(),
    ];
    a.push(-a[4]);
    a
}

/// Angles (rad): a sweep from 1e-9 to 0.3 and, for every angle in `switches` at which
/// the code switches paths (e.g. k·atan(cut) for a cut-off `cut` given as the largest
/// x = tan(θ/k) of a series, k = 1 or 2), θ a few ulps and 1e-6 relative either side.
fn angles_around<T: Real>(switches: &[f64]) -> Vec<f64> {
    let mut out: Vec<f64> = (0..=90)
        .map(|i| 1e-9 * 10f64.powf(i as f64 / 10.0))
        .collect();
    out.retain(|&t| t <= 0.3);
    for &t0 in switches {
        for f in [1.0 - 1e-6, 1.0 + 1e-6] {
            out.push(t0 * f);
        }
        // A few representable values of T either side.
        let mut t = c::<T>(t0);
        for _ in 0..4 {
            t = next_down(t);
        }
        for _ in 0..8 {
            out.push(t.to_f64());
            t = next_up(t);
        }
    }
    out
}

fn next_up<T: Real>(x: T) -> T {
    let eps = T::default_epsilon() * x.abs() * c::<T>(0.5);
    x + eps
}

fn next_down<T: Real>(x: T) -> T {
    let eps = T::default_epsilon() * x.abs() * c::<T>(0.5);
    x - eps
}

fn widen<T: Real>(v: &Vector3<T>) -> V64 {
    V64::new(v.x.to_f64(), v.y.to_f64(), v.z.to_f64())
}

fn matrix_log_ref(m: &Matrix3<f64>) -> V64 {
    let s = V64::new(
        (m[(2, 1)] - m[(1, 2)]) * 0.5,
        (m[(0, 2)] - m[(2, 0)]) * 0.5,
        (m[(1, 0)] - m[(0, 1)]) * 0.5,
    );
    let c = (m.trace() - 1.0) * 0.5;
    let n = s.norm();
    if n == 0.0 {
        return s;
    }
    s * (n.atan2(c) / n)
}

fn quaternion_log_ref(q: &Quaternion<f64>) -> V64 {
    let (w, v) = if q.w < 0.0 {
        (-q.w, -q.imag())
    } else {
        (q.w, q.imag())
    };
    let n = v.norm();
    if n == 0.0 {
        return v * 2.0;
    }
    v * (2.0 * n.atan2(w) / n)
}

fn check_log<T: Real, G: LieGroup<T>>(log_ref: impl Fn(&G) -> V64) {
    let eps = T::default_epsilon().to_f64();
    let cut = T::SERIES_ATAN.cutoff;
    // The matrix Log switches at tan θ = cut, the quaternion Log at tan(θ/2) = cut.
    let mut worst: f64 = 0.0;
    for axis in axes() {
        // …and both switch from the polynomial to atan2 at tan(π/8) in the same variable.
        let poly = std::f64::consts::FRAC_PI_8.tan();
        // Both also switch from the short Taylor series to the polynomial at
        // `Real::SERIES_ATAN_SHORT`.
        let short = T::SERIES_ATAN_SHORT.cutoff;
        // …and from asin(y)/y in y = sin θ (matrix) or sin(θ/2) (quaternion) to the
        // atan forms at `Real::SERIES_ASIN_TINY`.
        let tiny = T::SERIES_ASIN_TINY.cutoff;
        let mut switches: Vec<f64> = [
            (cut, 1.0),
            (cut, 2.0),
            (poly, 1.0),
            (poly, 2.0),
            (short, 1.0),
            (short, 2.0),
        ]
        .iter()
        .map(|&(x, k)| k * x.atan())
        .collect();
        switches.extend([tiny.asin(), 2.0 * tiny.asin()]);
        for t in angles_around::<T>(&switches) {
            let theta = Vector3::new(c::<T>(axis.x * t), c::<T>(axis.y * t), c::<T>(axis.z * t));
            let r = G::exp(&theta);
            let got = widen(&r.log());
            let want = log_ref(&r);
            let err = (got - want).norm();
            let bound = 6.0 * eps * want.norm();
            worst = worst.max(err / (eps * want.norm()).max(f64::MIN_POSITIVE));
            assert!(
                err <= bound,
                "{} {}: Log at θ = {t:e} about {axis:?}: |{got:?} − {want:?}| = {err:e} > {bound:e}",
                G::NAME,
                T::NAME
            );
        }
    }
    println!(
        "[lie-report] {} {} Log: worst error {worst:.2} ε",
        G::NAME,
        T::NAME
    );
}

fn matrix_ref<T: Real>(r: &SO3Matrix<T>) -> V64 {
    matrix_log_ref(&r.matrix().map(|x| x.to_f64()))
}

fn quaternion_ref<T: Real>(q: &UnitQuaternion<T>) -> V64 {
    let q = q.as_ref();
    quaternion_log_ref(&Quaternion::new(
        q.w.to_f64(),
        q.i.to_f64(),
        q.j.to_f64(),
        q.k.to_f64(),
    ))
}

#[test]
fn matrix_log_small_angles_f64() {
    check_log::<f64, SO3Matrix<f64>>(matrix_ref);
}

#[test]
fn matrix_log_small_angles_f32() {
    check_log::<f32, SO3Matrix<f32>>(matrix_ref);
}

#[test]
fn quaternion_log_small_angles_f64() {
    check_log::<f64, UnitQuaternion<f64>>(quaternion_ref);
}

#[test]
fn quaternion_log_small_angles_f32() {
    check_log::<f32, UnitQuaternion<f32>>(quaternion_ref);
}

fn check_quaternion_exp<T: Real>() {
    let eps = T::default_epsilon().to_f64();
    // The series is used for θ/2 below the sinc cut-off.
    let cut = T::SERIES_SINC.cutoff;
    // Two terms of each below `Real::SERIES_EXP_TINY` in θ/2.
    let tiny = T::SERIES_EXP_TINY.cutoff;
    let mut grid = angles_around::<T>(&[2.0 * tiny]);
    for t0 in [2.0 * cut, 2.0 * tiny] {
        for f in [1.0 - 1e-6, 1.0, 1.0 + 1e-6] {
            grid.push(t0 * f);
        }
    }
    for axis in axes() {
        for &t in &grid {
            let theta = Vector3::new(c::<T>(axis.x * t), c::<T>(axis.y * t), c::<T>(axis.z * t));
            let q = <UnitQuaternion<T> as LieGroup<T>>::exp(&theta);
            let th = widen(&theta);
            let n = th.norm();
            let (s, co) = (n * 0.5).sin_cos();
            let v_ref = th * (s / n);
            let q = q.as_ref();
            let v = V64::new(q.i.to_f64(), q.j.to_f64(), q.k.to_f64());
            assert!(
                (q.w.to_f64() - co).abs() <= 4.0 * eps,
                "{}: w of Exp at θ = {t:e}: {} vs {co}",
                T::NAME,
                q.w
            );
            assert!(
                (v - v_ref).norm() <= 4.0 * eps * v_ref.norm(),
                "{}: vector part of Exp at θ = {t:e}: {v:?} vs {v_ref:?}",
                T::NAME
            );
        }
    }
}

#[test]
fn quaternion_exp_small_angles_f64() {
    check_quaternion_exp::<f64>();
}

#[test]
fn quaternion_exp_small_angles_f32() {
    check_quaternion_exp::<f32>();
}

/// γ(θ) = Σₙ≥₁ |B₂ₙ| θ²ⁿ⁻²/(2n)!, ten terms, smallest first.
fn gamma_ref(t: f64) -> f64 {
    // |B₂|, |B₄|, …, |B₂₀|.
    const B: [f64; 10] = [
        1.0 / 6.0,
        1.0 / 30.0,
        1.0 / 42.0,
        1.0 / 30.0,
        5.0 / 66.0,
        691.0 / 2730.0,
        7.0 / 6.0,
        3617.0 / 510.0,
        43867.0 / 798.0,
        174611.0 / 330.0,
    ];
    let fact = |k: u32| (1..=k).map(f64::from).product::<f64>();
    (1..=10u32)
        .rev()
        .map(|n| B[n as usize - 1] * t.powi(2 * n as i32 - 2) / fact(2 * n))
        .sum()
}

fn check_gamma_inv<T: Real>() {
    let eps = T::default_epsilon().to_f64();
    // Both cut-offs of the shorter series, `Real::SERIES_GAMMA_INV_TINY` and
    // `Real::SERIES_GAMMA_INV_SHORT`, a few ulps either side.
    let cuts = [
        T::SERIES_GAMMA_INV_TINY.cutoff,
        T::SERIES_GAMMA_INV_SHORT.cutoff,
    ];
    let mut grid = angles_around::<T>(&cuts);
    for cut in cuts {
        let mut t = c::<T>(cut);
        for _ in 0..4 {
            t = next_down(t);
        }
        for _ in 0..8 {
            grid.push(t.to_f64());
            t = next_up(t);
        }
    }
    for &t in &grid {
        let g = so3::gamma_inv_coeff(c::<T>(t)).to_f64();
        let want = gamma_ref(c::<T>(t).to_f64());
        assert!(
            (g - want).abs() <= 4.0 * eps * want,
            "{}: γ({t:e}) = {g} vs {want}",
            T::NAME
        );
    }
    for axis in axes() {
        for &t in &grid {
            let theta = Vector3::new(c::<T>(axis.x * t), c::<T>(axis.y * t), c::<T>(axis.z * t));
            let got = right_jacobian_inv(&theta).map(|x| x.to_f64());
            let th = widen(&theta);
            let k = so3::hat(&th);
            let want = Matrix3::identity() + k * 0.5 + k * k * gamma_ref(th.norm());
            let err = (got - want).amax();
            assert!(
                err <= 4.0 * eps,
                "{}: Γ⁻¹ at θ = {t:e} about {axis:?}: error {err:e}",
                T::NAME
            );
        }
    }
}

#[test]
fn gamma_inv_small_angles_f64() {
    check_gamma_inv::<f64>();
}

#[test]
fn gamma_inv_small_angles_f32() {
    check_gamma_inv::<f32>();
}
