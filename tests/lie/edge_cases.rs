//! Edge cases of the Lie-group toolkit, for all four combinations
//! SO3Matrix / UnitQuaternion × f32 / f64 (and f32 / f64 for representation-free code):
//!
//! * the small-angle series cut-offs `T::SERIES_*` (one per coefficient function): every
//!   coefficient function (sinc, α, β, γ = Γ⁻¹'s coefficient, α'/θ, β'/θ) and every
//!   matrix built from them (Γ, Γ⁻¹, Exp, the ∂Γ/∂θ contraction) is accurate on both
//!   sides and continuous across each cut-off, within a bound derived from the
//!   cancellation in each closed form (in f64 only for cut-offs ≤ 1.5 rad, where the
//!   references below are accurate enough; `tests/lie/coefficients.rs` checks every
//!   coefficient at every cut-off against 50-digit references);
//! * the matrix Log's π-window boundary `π − T::log_pi_window()`;
//! * θ = π exactly and just below it, for axis-aligned, diagonal and generic axes with
//!   negative components; |θ| > π; quaternions with w < 0 and w = 0;
//! * tiny angles (down to subnormals) and a sweep over 300+ orders of magnitude: nothing
//!   is ever NaN or infinite.
//!
//! # Reference values
//! The coefficient functions are compared with independent f64 references: their Taylor
//! series summed to 30 terms (smallest first) for θ ≤ 1.5, where every series has
//! decreasing terms and no cancellation, so the reference is good to ~2ε₆₄; above 1.5
//! (only needed for the f32 checks) the f64 closed forms, whose cancellation error
//! (≤ 360ε₆₄/θ⁴ < 1e-13) is negligible against ε₃₂. γ's series uses the Bernoulli
//! numbers: γ(θ) = Σₙ≥₁ |B₂ₙ| θ²ⁿ⁻² / (2n)!.
//!
//! # Accuracy bounds (relative, in units of ε of the precision tested)
//! Below its cut-off each series is truncated so that the first omitted term (γ: the
//! tail) is below ε/16 there (`Real::SERIES_*`), and Horner's rule adds ~2ε: bound 4ε.
//! Above it, the closed forms lose accuracy by cancellation (the cut-offs sit where this
//! is a few ε; the bounds below hold at any θ):
//! * sinc = sin θ/θ and α = ½(sin(θ/2)/(θ/2))²: no cancellation, 4ε;
//! * β = (θ − sin θ)/θ³: θ − sin θ ≈ θ³/6 carries the absolute error ≈ εθ of sin θ,
//!   i.e. a relative error 6ε/θ²; bound 8ε + 12ε/θ² (a factor 2 of margin on the
//!   cancellation term, as for all below);
//! * γ = 1/θ² − cot(θ/2)/(2θ): two terms ≈ 1/θ², each good to ~2ε, leave ≈ 1/12;
//!   relative error 48ε/θ²; bound 8ε + 96ε/θ²;
//! * α'/θ = (sinc − 2α)/θ²: absolute error ≈ 5ε on a difference ≈ θ²/12: 60ε/θ²;
//!   bound 8ε + 120ε/θ²;
//! * β'/θ = (α − 3β)/θ²: the absolute error of 3β (3ε/θ², from β above) plus α's 1.5ε,
//!   on a difference ≈ θ²/60: (90ε + 180ε/θ²)/θ²; bound 8ε + 180ε/θ² + 360ε/θ⁴.
//!
//! These are upper bounds (a factor 2 of margin on each cancellation term, worst-case
//! rounding); the errors measured on the grid below are at least 3× smaller everywhere
//! (`[lie-report]` lines), and far smaller near the cut-off.
//! α'/θ and β'/θ use their series on all of [0, π] (cut-off 3.2 rad), so their
//! closed-form bounds only apply above π.
//!
//! A jump across the cut-off is then bounded by the sum of the two sides' bounds: the
//! test checks `|f(x₊) − f(x₋) − (ref(x₊) − ref(x₋))| ≤ (bound(x₋) + bound(x₊))·|ref|`,
//! for x± the cut-off ∓ 1..4 ulps and the cut-off·(1 ∓ 1e-6).

use crate::lie_harness;

use lie_harness::*;
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::so3::{
    self, exp_matrix, hat, right_jacobian, right_jacobian_derivative_contraction,
    right_jacobian_inv,
};
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use nalgebra::{Matrix3, Quaternion, Vector3};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use std::f64::consts::PI;

// =======================================================================================
// Reference coefficient functions (f64)
// =======================================================================================

fn factorial(n: u32) -> f64 {
    (1..=n).map(f64::from).product()
}

/// Σ_{k=k0}^{k0+29} term(k), summed smallest-first.
fn series_sum(k0: u32, term: impl Fn(u32) -> f64) -> f64 {
    (k0..k0 + 30).rev().map(term).sum()
}

fn sign(k: u32) -> f64 {
    if k.is_multiple_of(2) {
        1.0
    } else {
        -1.0
    }
}

/// |B₂ₙ| for n = 1..15.
const BERNOULLI_ABS: [f64; 15] = [
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
    854513.0 / 138.0,
    236364091.0 / 2730.0,
    8553103.0 / 6.0,
    23749461029.0 / 870.0,
    8615841276005.0 / 14322.0,
];

/// The six coefficient functions of `so3`, with their references and accuracy bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Coef {
    Sinc,
    Alpha,
    Beta,
    Gamma,
    AlphaPrime,
    BetaPrime,
}

const COEFS: [Coef; 6] = [
    Coef::Sinc,
    Coef::Alpha,
    Coef::Beta,
    Coef::Gamma,
    Coef::AlphaPrime,
    Coef::BetaPrime,
];

impl Coef {
    fn name(self) -> &'static str {
        match self {
            Coef::Sinc => "sinc",
            Coef::Alpha => "alpha",
            Coef::Beta => "beta",
            Coef::Gamma => "gamma_inv_coeff",
            Coef::AlphaPrime => "alpha_prime_over_theta",
            Coef::BetaPrime => "beta_prime_over_theta",
        }
    }

    /// Report label for the relative error of the series or closed-form branch.
    fn label(self, series: bool) -> &'static str {
        match (self, series) {
            (Coef::Sinc, true) => "sinc series",
            (Coef::Sinc, false) => "sinc closed form",
            (Coef::Alpha, true) => "alpha series",
            (Coef::Alpha, false) => "alpha closed form",
            (Coef::Beta, true) => "beta series",
            (Coef::Beta, false) => "beta closed form",
            (Coef::Gamma, true) => "gamma_inv_coeff series",
            (Coef::Gamma, false) => "gamma_inv_coeff closed form",
            (Coef::AlphaPrime, true) => "alpha_prime_over_theta series",
            (Coef::AlphaPrime, false) => "alpha_prime_over_theta closed form",
            (Coef::BetaPrime, true) => "beta_prime_over_theta series",
            (Coef::BetaPrime, false) => "beta_prime_over_theta closed form",
        }
    }

    /// The library's value at `t` (computed in T).
    fn eval<T: Real>(self, t: T) -> T {
        match self {
            Coef::Sinc => so3::sinc(t),
            Coef::Alpha => so3::alpha(t),
            Coef::Beta => so3::beta(t),
            Coef::Gamma => so3::gamma_inv_coeff(t),
            Coef::AlphaPrime => so3::alpha_prime_over_theta(t),
            Coef::BetaPrime => so3::beta_prime_over_theta(t),
        }
    }

    /// Independent f64 reference (module docs).
    fn reference(self, t: f64) -> f64 {
        let t2 = t * t;
        if t <= 1.5 {
            match self {
                Coef::Sinc => series_sum(0, |k| sign(k) * t2.powi(k as i32) / factorial(2 * k + 1)),
                Coef::Alpha => {
                    series_sum(0, |k| sign(k) * t2.powi(k as i32) / factorial(2 * k + 2))
                }
                Coef::Beta => series_sum(0, |k| sign(k) * t2.powi(k as i32) / factorial(2 * k + 3)),
                Coef::Gamma => (1..=15)
                    .rev()
                    .map(|n: u32| {
                        BERNOULLI_ABS[n as usize - 1] * t2.powi(n as i32 - 1) / factorial(2 * n)
                    })
                    .sum(),
                Coef::AlphaPrime => series_sum(1, |k| {
                    sign(k) * f64::from(2 * k) * t2.powi(k as i32 - 1) / factorial(2 * k + 2)
                }),
                Coef::BetaPrime => series_sum(1, |k| {
                    sign(k) * f64::from(2 * k) * t2.powi(k as i32 - 1) / factorial(2 * k + 3)
                }),
            }
        } else {
            let (s, co) = (t.sin(), t.cos());
            let alpha = (1.0 - co) / t2;
            let beta = (t - s) / (t2 * t);
            match self {
                Coef::Sinc => s / t,
                Coef::Alpha => alpha,
                Coef::Beta => beta,
                Coef::Gamma => 1.0 / t2 - (1.0 + co) / (2.0 * t * s),
                Coef::AlphaPrime => (s / t - 2.0 * alpha) / t2,
                Coef::BetaPrime => (alpha - 3.0 * beta) / t2,
            }
        }
    }

    /// The angle (rad) below which the library uses this function's series.
    fn cutoff<T: Real>(self) -> f64 {
        match self {
            Coef::Sinc => T::SERIES_SINC.cutoff,
            Coef::Alpha => T::SERIES_ALPHA.cutoff,
            Coef::Beta => T::SERIES_BETA.cutoff,
            Coef::Gamma => T::SERIES_GAMMA_INV.cutoff,
            Coef::AlphaPrime => T::SERIES_ALPHA_PRIME.cutoff,
            Coef::BetaPrime => T::SERIES_BETA_PRIME.cutoff,
        }
    }

    /// Relative accuracy bound (in units of ε) of the library's value at `t` (module docs).
    fn bound_in_eps<T: Real>(self, t: f64) -> f64 {
        if t < Real::to_f64(c::<T>(self.cutoff::<T>())) {
            return 4.0;
        }
        let t2 = t * t;
        match self {
            Coef::Sinc | Coef::Alpha => 4.0,
            Coef::Beta => 8.0 + 12.0 / t2,
            Coef::Gamma => 8.0 + 96.0 / t2,
            Coef::AlphaPrime => 8.0 + 120.0 / t2,
            Coef::BetaPrime => 8.0 + 180.0 / t2 + 360.0 / (t2 * t2),
        }
    }
}

/// Reference Exp, Γ, Γ⁻¹ and contraction in f64 from the reference coefficients.
fn ref_exp(th: &V) -> Matrix3<f64> {
    let t = th.norm();
    let k = hat(th);
    Matrix3::identity() + k * Coef::Sinc.reference(t) + k * k * Coef::Alpha.reference(t)
}
fn ref_gamma(th: &V) -> Matrix3<f64> {
    let t = th.norm();
    let k = hat(th);
    Matrix3::identity() - k * Coef::Alpha.reference(t) + k * k * Coef::Beta.reference(t)
}
fn ref_gamma_inv(th: &V) -> Matrix3<f64> {
    let t = th.norm();
    let k = hat(th);
    Matrix3::identity() + k * 0.5 + k * k * Coef::Gamma.reference(t)
}
fn ref_contraction(th: &V, w: &V) -> Matrix3<f64> {
    let t = th.norm();
    let (a, b) = (Coef::Alpha.reference(t), Coef::Beta.reference(t));
    let (da, db) = (Coef::AlphaPrime.reference(t), Coef::BetaPrime.reference(t));
    let tw = th.cross(w);
    let ttw = th.cross(&tw);
    hat(w) * a
        + (ttw * db - tw * da) * th.transpose()
        + (th * w.transpose() - w * th.transpose() * 2.0 + Matrix3::identity() * th.dot(w)) * b
}

/// Absolute error bound (max-abs entry) of a matrix built from coefficients: 16ε·`scale`
/// for assembling e.g. I + c₁K + c₂K² (a few rounded products of entries ≤ `scale`), plus
/// each coefficient's relative bound times its size times the size (max-abs) of the matrix
/// it multiplies (`weight`).
fn assembly_bound<T: Real>(terms: &[(Coef, f64)], t: f64, scale: f64) -> f64 {
    let e = eps::<T>();
    16.0 * e * scale
        + terms
            .iter()
            .map(|&(cf, weight)| cf.bound_in_eps::<T>(t) * e * cf.reference(t).abs() * weight)
            .sum::<f64>()
}

/// Steps `x > 0` by `k` ulps of `T`.
fn ulps<T: Real>(x: T, k: i64) -> T {
    let xf = Real::to_f64(x);
    if T::NAME == "f32" {
        let b = ((xf as f32).to_bits() as i64 + k) as u32;
        c::<T>(f64::from(f32::from_bits(b)))
    } else {
        c::<T>(f64::from_bits((xf.to_bits() as i64 + k) as u64))
    }
}

/// The distinct series cut-offs of the six coefficient functions, as T, ascending, that
/// the f64 references here can check: all in f32, those ≤ 1.5 rad in f64 (above 1.5 the
/// f64 reference is a closed form, not more accurate than the library's f64 value).
fn cutoffs<T: Real>() -> Vec<T> {
    let top = if T::NAME == "f32" { f64::INFINITY } else { 1.5 };
    let mut v: Vec<f64> = COEFS.iter().map(|cf| cf.cutoff::<T>()).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v.into_iter().filter(|&x| x <= top).map(c::<T>).collect()
}

/// Pairs (x₋, x₊) straddling `x0` (x₊ ≥ x0 > x₋): 1..4 ulps on each side, and x0·(1 ∓ 1e-6).
fn straddle<T: Real>(x0: T) -> Vec<(T, T)> {
    let mut v: Vec<(T, T)> = (1..=4).map(|k| (ulps(x0, -k), ulps(x0, k - 1))).collect();
    v.push((x0 * c::<T>(1.0 - 1e-6), x0 * c::<T>(1.0 + 1e-6)));
    v
}

const W: [f64; 3] = [0.7, -1.3, 0.4];

// =======================================================================================
// Series cut-off: scalar coefficients
// =======================================================================================

fn check_coefficient_accuracy<T: Real>(t: &Tracker) -> CheckResult {
    // f64: only where the reference is more accurate than the code (θ ≤ 1.5);
    // f32: up to 3 rad (sinc stays away from its zero at π).
    let top = if T::NAME == "f32" { 3.0 } else { 1.5 };
    let mut grid: Vec<f64> = vec![0.0];
    grid.extend((0..=44).map(|i| 10f64.powf(-12.0 + 0.25 * f64::from(i))));
    grid.extend((1..=300).map(|i| f64::from(i) * 0.01));
    for x0 in cutoffs::<T>() {
        grid.extend(
            straddle(x0)
                .iter()
                .flat_map(|(a, b)| [Real::to_f64(*a), Real::to_f64(*b)]),
        );
    }
    for &x in grid.iter().filter(|&&x| x <= top) {
        let xt = c::<T>(x);
        let xf = Real::to_f64(xt);
        for cf in COEFS {
            let got = Real::to_f64(cf.eval(xt));
            let want = cf.reference(xf);
            let rel = (got - want).abs() / want.abs();
            t.check(
                cf.label(xf < Real::to_f64(c::<T>(cf.cutoff::<T>()))),
                rel,
                cf.bound_in_eps::<T>(xf) * eps::<T>(),
            )
            .map_err(|e| TestCaseError::fail(format!("θ = {xf:e}: {e}")))?;
        }
    }
    // Exact values at 0.
    let z = T::zero();
    for (cf, v) in [
        (Coef::Sinc, 1.0),
        (Coef::Alpha, 0.5),
        (Coef::Beta, 1.0 / 6.0),
        (Coef::Gamma, 1.0 / 12.0),
        (Coef::AlphaPrime, -1.0 / 12.0),
        (Coef::BetaPrime, -1.0 / 60.0),
    ] {
        t.check(
            "value at 0",
            (Real::to_f64(cf.eval(z)) - v).abs(),
            eps::<T>(),
        )?;
    }
    Ok(())
}

scalar_fixed_tests! { check_coefficient_accuracy;
    fn coefficient_accuracy_f32: f32;
    fn coefficient_accuracy_f64: f64;
}

fn check_series_cutoff_continuity_scalars<T: Real>(t: &Tracker) -> CheckResult {
    for cf in COEFS {
        let x0 = c::<T>(cf.cutoff::<T>());
        if !cutoffs::<T>().contains(&x0) {
            continue;
        }
        for (lo, hi) in straddle(x0) {
            let (lf, hf) = (Real::to_f64(lo), Real::to_f64(hi));
            let jump = Real::to_f64(cf.eval(hi)) - Real::to_f64(cf.eval(lo));
            let true_change = cf.reference(hf) - cf.reference(lf);
            let scale = cf.reference(hf).abs();
            let bound = (cf.bound_in_eps::<T>(lf) + cf.bound_in_eps::<T>(hf)) * eps::<T>() * scale;
            t.check(cf.name(), (jump - true_change).abs(), bound)
                .map_err(|e| {
                    TestCaseError::fail(format!("jump across cut-off ({lf:e}, {hf:e}): {e}"))
                })?;
        }
    }
    Ok(())
}

scalar_fixed_tests! { check_series_cutoff_continuity_scalars;
    fn series_cutoff_continuity_scalars_f32: f32;
    fn series_cutoff_continuity_scalars_f64: f64;
}

// =======================================================================================
// Series cut-off: Γ, Γ⁻¹, Exp, contraction
// =======================================================================================

/// Checks F(θ) for F ∈ {Γ, Γ⁻¹, Exp, contraction} at θ = `x·a` against the reference,
/// within the bound derived from the coefficients' bounds; returns the four values (as
/// f64) and their bounds for the jump check.
fn matrices_at<T: Real>(
    t: &Tracker,
    x: T,
    a: &V,
) -> Result<([Matrix3<f64>; 4], [f64; 4]), TestCaseError> {
    let th = v3::<T>(a) * x;
    let w = v3::<T>(&V::from(W));
    let thf = vf(&th);
    let tf = thf.norm();
    let wn = V::from(W).norm();
    let got = [
        mf(&right_jacobian(&th)),
        mf(&right_jacobian_inv(&th)),
        mf(&exp_matrix(&th)),
        mf(&right_jacobian_derivative_contraction(&th, &w)),
    ];
    let want = [
        ref_gamma(&thf),
        ref_gamma_inv(&thf),
        ref_exp(&thf),
        ref_contraction(&thf, &V::from(W)),
    ];
    // Sizes (max-abs) of what each coefficient multiplies: ‖θ̂‖ ≤ |θ|, ‖θ̂²‖ ≤ |θ|²;
    // in the contraction ‖ŵ‖ ≤ |w|, ‖(θ×w)θᵀ‖ ≤ |θ|²|w|, ‖(θ×(θ×w))θᵀ‖ ≤ |θ|³|w|,
    // ‖θwᵀ + (θ·w)I − 2wθᵀ‖ ≤ 4|θ||w|.
    let bounds = [
        assembly_bound::<T>(&[(Coef::Alpha, tf), (Coef::Beta, tf * tf)], tf, 1.0),
        assembly_bound::<T>(&[(Coef::Gamma, tf * tf)], tf, 1.0),
        assembly_bound::<T>(&[(Coef::Sinc, tf), (Coef::Alpha, tf * tf)], tf, 1.0),
        assembly_bound::<T>(
            &[
                (Coef::Alpha, wn),
                (Coef::AlphaPrime, tf * tf * wn),
                (Coef::BetaPrime, tf * tf * tf * wn),
                (Coef::Beta, 4.0 * tf * wn),
            ],
            tf,
            wn,
        ),
    ];
    let labels = [
        "Γ vs reference",
        "Γ⁻¹ vs reference",
        "Exp vs reference",
        "contraction vs reference",
    ];
    for i in 0..4 {
        t.check(labels[i], max_abs(&(got[i] - want[i])), bounds[i])?;
    }
    Ok((got, bounds))
}

/// Γ, Γ⁻¹, Exp and the contraction on both sides of the cut-off, along every named axis:
/// each side is within its bound of the reference, so the jump minus the true change is
/// within the sum of the two sides' bounds.
fn check_series_cutoff_continuity_matrices<T: Real>(t: &Tracker) -> CheckResult {
    let labels = ["Γ jump", "Γ⁻¹ jump", "Exp jump", "contraction jump"];
    let w = V::from(W);
    for a in named_axes() {
        for (lo, hi) in cutoffs::<T>().into_iter().flat_map(straddle) {
            let (m_lo, b_lo) = matrices_at::<T>(t, lo, &a)?;
            let (m_hi, b_hi) = matrices_at::<T>(t, hi, &a)?;
            let (thl, thh) = (vf(&(v3::<T>(&a) * lo)), vf(&(v3::<T>(&a) * hi)));
            let true_change = [
                ref_gamma(&thh) - ref_gamma(&thl),
                ref_gamma_inv(&thh) - ref_gamma_inv(&thl),
                ref_exp(&thh) - ref_exp(&thl),
                ref_contraction(&thh, &w) - ref_contraction(&thl, &w),
            ];
            for i in 0..4 {
                let jump = m_hi[i] - m_lo[i];
                t.check(
                    labels[i],
                    max_abs(&(jump - true_change[i])),
                    b_lo[i] + b_hi[i],
                )?;
            }
        }
    }
    Ok(())
}

scalar_fixed_tests! { check_series_cutoff_continuity_matrices;
    fn series_cutoff_continuity_matrices_f32: f32;
    fn series_cutoff_continuity_matrices_f64: f64;
}

/// The group Exp (and Log back) across the cut-off: the matrix Exp switches series at
/// |θ| = the sinc and α cut-offs, the quaternion Exp at |θ|/2 = the sinc cut-off.
fn check_exp_continuity_at_cutoff<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    let two = c::<T>(2.0);
    let sinc_cut = c::<T>(T::SERIES_SINC.cutoff);
    for x0 in [sinc_cut, sinc_cut * two, c::<T>(T::SERIES_ALPHA.cutoff)] {
        for a in named_axes() {
            for (lo, hi) in straddle(x0) {
                let (thl, thh) = (v3::<T>(&a) * lo, v3::<T>(&a) * hi);
                let (el, eh) = (mf(&G::exp(&thl).to_matrix()), mf(&G::exp(&thh).to_matrix()));
                let (rl, rh) = (ref_exp(&vf(&thl)), ref_exp(&vf(&thh)));
                let tf = vf(&thh).norm();
                // Conversion quaternion → matrix adds a few ε to the assembly bound.
                let bound =
                    assembly_bound::<T>(&[(Coef::Sinc, tf), (Coef::Alpha, tf * tf)], tf, 2.0);
                t.check("Exp vs reference", max_abs(&(el - rl)), bound)?;
                t.check("Exp vs reference", max_abs(&(eh - rh)), bound)?;
                t.check("Exp jump", max_abs(&((eh - el) - (rh - rl))), 2.0 * bound)?;
                // Log comes back continuously too.
                let (ll, lh) = (G::exp(&thl).log(), G::exp(&thh).log());
                let rel = vf(&((lh - ll) - (thh - thl))).norm() / vf(&thh).norm();
                t.check("Log jump", rel, 32.0 * eps::<T>())?;
            }
        }
    }
    Ok(())
}

group_fixed_tests! { check_exp_continuity_at_cutoff;
    fn exp_continuity_at_cutoff_matrix_f32: f32, SO3Matrix;
    fn exp_continuity_at_cutoff_matrix_f64: f64, SO3Matrix;
    fn exp_continuity_at_cutoff_quaternion_f32: f32, UnitQuaternion;
    fn exp_continuity_at_cutoff_quaternion_f64: f64, UnitQuaternion;
}

// =======================================================================================
// Log's π window
// =======================================================================================

/// Log(Exp(θa)) on both sides of θ = π − `log_pi_window()`, where the matrix Log switches
/// from the skew-part axis to the symmetric-part axis. Both branches recover θ to a few ε
/// (identities.rs measures ≤ 2.4ε), so the jump minus the true change is bounded by
/// twice the round-trip tolerance 16ε·|θ|.
fn check_log_pi_window_continuity<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    let x0 = T::pi() - T::log_pi_window();
    let tol = 16.0 * eps::<T>();
    for a in named_axes() {
        for (lo, hi) in straddle(x0) {
            let (thl, thh) = (v3::<T>(&a) * lo, v3::<T>(&a) * hi);
            let (ll, lh) = (G::exp(&thl).log(), G::exp(&thh).log());
            let n = vf(&thh).norm();
            t.check(
                "Log(Exp θ) = θ below window",
                vf(&(ll - thl)).norm() / n,
                tol,
            )?;
            t.check(
                "Log(Exp θ) = θ above window",
                vf(&(lh - thh)).norm() / n,
                tol,
            )?;
            t.check(
                "Log jump",
                vf(&((lh - ll) - (thh - thl))).norm() / n,
                2.0 * tol,
            )?;
            // Γ⁻¹ of the result (what jacobian_log / boxminus Jacobians use) is continuous:
            // per side, Log's error tol·|θ| times Γ⁻¹'s Lipschitz constant (≤ 2 in max-abs
            // for |θ| ≤ π), plus 16ε assembly rounding of entries up to 4.
            let (jl, jh) = (
                mf(&G::exp(&thl).jacobian_log()),
                mf(&G::exp(&thh).jacobian_log()),
            );
            let (rl, rh) = (ref_gamma_inv(&vf(&thl)), ref_gamma_inv(&vf(&thh)));
            let side = 2.0 * tol * n + 64.0 * eps::<T>();
            t.check(
                "jacobian_log jump",
                max_abs(&((jh - jl) - (rh - rl))),
                2.0 * side,
            )?;
        }
    }
    Ok(())
}

group_fixed_tests! { check_log_pi_window_continuity;
    fn log_pi_window_continuity_matrix_f32: f32, SO3Matrix;
    fn log_pi_window_continuity_matrix_f64: f64, SO3Matrix;
    fn log_pi_window_continuity_quaternion_f32: f32, UnitQuaternion;
    fn log_pi_window_continuity_quaternion_f64: f64, UnitQuaternion;
}

// =======================================================================================
// θ = π and just below
// =======================================================================================

/// Rotation round-trip tolerance (max-abs matrix entry), as in identities.rs.
fn rot_tol<T: Real>() -> f64 {
    64.0 * eps::<T>()
}

/// Checks the Log `l` of a rotation `r` about axis ±a whose angle should be `angle`
/// (π, or just below): finite, |l| = angle (within 8ε·π), parallel to a, Exp(l) = r, and
/// the Jacobians that use it are finite.
fn check_pi_log<T: Real, G: LieGroup<T>>(t: &Tracker, r: &G, a: &V, angle: f64) -> CheckResult {
    let l = r.log();
    t.require("Log finite", finite_v(&l), || {
        format!("Log = {l:?} for axis {a:?}")
    })?;
    let lf = vf(&l);
    let n = lf.norm();
    t.check("||Log| − angle|", (n - angle).abs(), 8.0 * eps::<T>() * PI)?;
    t.check("Log ∥ axis", (lf / n).cross(a).norm(), 16.0 * eps::<T>())?;
    t.check("Exp(Log R) = R", rot_dist(&G::exp(&l), r), rot_tol::<T>())?;
    for (name, m) in [
        ("jacobian_log finite", r.jacobian_log()),
        (
            "jacobian_boxminus_lhs finite",
            r.jacobian_boxminus_lhs(&G::identity()),
        ),
        (
            "jacobian_boxminus_rhs finite",
            r.jacobian_boxminus_rhs(&G::identity()),
        ),
    ] {
        t.require(name, finite_m(&m), || format!("{m:?}"))?;
    }
    Ok(())
}

fn check_log_at_pi<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    for a in named_axes() {
        let at = v3::<T>(&a);
        // (i) Exp(π a) computed in T.
        check_pi_log(t, &G::exp(&(at * T::pi())), &a, PI)?;
        // (ii) the exactly symmetric matrix 2aaᵀ − I (skew part exactly zero).
        let m = at * at.transpose() * c::<T>(2.0) - Matrix3::identity();
        let r = G::from_matrix(&m).map_err(|e| TestCaseError::fail(e.to_string()))?;
        check_pi_log(t, &r, &a, PI)?;
        // (iii) the quaternion (0, a) (w exactly 0), and its negative (w = −0).
        for s in [1.0, -1.0] {
            let q = Quaternion::new(
                c::<T>(0.0) * c::<T>(s),
                at.x * c::<T>(s),
                at.y * c::<T>(s),
                at.z * c::<T>(s),
            );
            let r = G::from_quaternion(&q).map_err(|e| TestCaseError::fail(e.to_string()))?;
            check_pi_log(t, &r, &a, PI)?;
        }
        // Both ±π a are valid Logs: each gives back the same rotation.
        let r = G::exp(&(at * T::pi()));
        t.check(
            "Exp(−Log R) = R at π",
            rot_dist(&G::exp(&-r.log()), &r),
            rot_tol::<T>(),
        )?;
        // boxminus at π from either side.
        let id = G::identity();
        t.check(
            "|R ⊟ I| = π",
            (Real::to_f64(r.boxminus(&id).norm()) - PI).abs(),
            8.0 * eps::<T>() * PI,
        )?;
        t.check(
            "|I ⊟ R| = π",
            (Real::to_f64(id.boxminus(&r).norm()) - PI).abs(),
            8.0 * eps::<T>() * PI,
        )?;
    }
    Ok(())
}

group_fixed_tests! { check_log_at_pi;
    fn log_at_pi_matrix_f32: f32, SO3Matrix;
    fn log_at_pi_matrix_f64: f64, SO3Matrix;
    fn log_at_pi_quaternion_f32: f32, UnitQuaternion;
    fn log_at_pi_quaternion_f64: f64, UnitQuaternion;
}

/// Angles π − d for d = 1e-7 (the brief's case), 1e-5, 1e-3, 1e-2. When d is many ulps of
/// π in T (always in f64; d ≥ 1e-5 in f32, the f32 ulp of π being 2.4e-7) the rotation
/// vector is unambiguous and Log must return it with the same sign, to 16ε·π. For
/// d = 1e-7 in f32, π − d rounds to within an ulp of π and either sign is right: the
/// checks are then those of θ = π.
fn check_log_near_pi<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    for d in [1e-7, 1e-5, 1e-3, 1e-2] {
        for a in named_axes() {
            let th = v3::<T>(&(a * (PI - d)));
            let r = G::exp(&th);
            let l = r.log();
            // The angle of the rotation actually built in T (its |θ| may round past π
            // in f32, in which case Log correctly returns 2π − |θ|).
            let n_in = vf(&th).norm();
            check_pi_log(t, &r, &a, PI - (PI - n_in).abs())?;
            let unambiguous = d >= 40.0 * eps::<T>() * PI;
            if unambiguous {
                t.check(
                    "Log(Exp θ) = θ near π (same sign)",
                    vf(&(l - th)).norm() / PI,
                    16.0 * eps::<T>(),
                )?;
            }
        }
    }
    Ok(())
}

group_fixed_tests! { check_log_near_pi;
    fn log_near_pi_matrix_f32: f32, SO3Matrix;
    fn log_near_pi_matrix_f64: f64, SO3Matrix;
    fn log_near_pi_quaternion_f32: f32, UnitQuaternion;
    fn log_near_pi_quaternion_f64: f64, UnitQuaternion;
}

// =======================================================================================
// |θ| > π
// =======================================================================================

/// Exp of rotation vectors longer than π: Log returns the representative in the ball of
/// radius π, Exp(Log(Exp v)) = Exp(v). The expected Log is (|v| − 2πk)·v/|v| with k the
/// nearest integer to |v|/2π; the rounding of v to T moves the angle by ~ε|v|, hence the
/// tolerance 16ε·max(1, |v|) (skipped where the wrapped angle is within 1e-3 of ±π and
/// both signs are right).
fn check_exp_beyond_pi<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    for ang in [
        4.0,
        7.0,
        10.0,
        2.0 * PI - 0.1,
        2.0 * PI,
        3.0 * PI - 0.5,
        3.0 * PI,
        20.0,
        100.0,
    ] {
        for a in named_axes() {
            let v = v3::<T>(&(a * ang));
            let r = G::exp(&v);
            let l = r.log();
            t.require("Log finite", finite_v(&l), || format!("{l:?}"))?;
            let n = Real::to_f64(l.norm());
            t.check("|Log| ≤ π", (n - PI).max(0.0), 8.0 * eps::<T>() * PI)?;
            t.check(
                "Exp(Log(Exp v)) = Exp v",
                rot_dist(&G::exp(&l), &r),
                rot_tol::<T>(),
            )?;
            let angf = vf(&v).norm();
            let wrapped = angf - 2.0 * PI * (angf / (2.0 * PI)).round();
            if wrapped.abs() < PI - 1e-3 {
                let want = vf(&v) / angf * wrapped;
                t.check(
                    "Log(Exp v) = wrapped v",
                    (vf(&l) - want).norm(),
                    16.0 * eps::<T>() * angf.max(1.0),
                )?;
            }
        }
    }
    Ok(())
}

group_fixed_tests! { check_exp_beyond_pi;
    fn exp_beyond_pi_matrix_f32: f32, SO3Matrix;
    fn exp_beyond_pi_matrix_f64: f64, SO3Matrix;
    fn exp_beyond_pi_quaternion_f32: f32, UnitQuaternion;
    fn exp_beyond_pi_quaternion_f64: f64, UnitQuaternion;
}

// =======================================================================================
// Quaternions with w < 0 and w = 0
// =======================================================================================

type Q<T> = UnitQuaternion<T>;

fn neg<T: Real>(q: &Q<T>) -> Q<T> {
    <Q<T> as LieGroup<T>>::from_quaternion(&-q.into_inner())
        .expect("−q of a unit quaternion is valid")
}

/// q and −q are the same rotation: Log(−q) = Log(q) (the short way, |Log| ≤ π),
/// q ⊟ (−q) = 0, (−q) ⊟ q = 0.
fn check_quaternion_negative_w<T: Real>(t: &Tracker) -> CheckResult {
    let tol = 16.0 * eps::<T>();
    let mut vectors: Vec<V> = vec![V::zeros(), V::new(0.3, -0.2, 0.1)];
    for a in named_axes() {
        for ang in [1e-9, 1e-3, 1.0, 2.0, 3.0, PI - 1e-3] {
            vectors.push(a * ang);
        }
    }
    for v in vectors {
        let th = v3::<T>(&v);
        let q = <Q<T> as LieGroup<T>>::exp(&th);
        let nq = neg(&q);
        if q.w > T::zero() {
            t.require("−q has w < 0", nq.w < T::zero(), || format!("{nq:?}"))?;
        }
        let (lq, lnq) = (LieGroup::<T>::log(&q), LieGroup::<T>::log(&nq));
        let scale = vf(&th).norm().max(1.0);
        t.check("Log(−q) = Log(q)", vf(&(lnq - lq)).norm() / scale, tol)?;
        t.check(
            "Log(−q) = θ (short way)",
            vf(&(lnq - th)).norm() / scale,
            tol,
        )?;
        t.check("|q ⊟ (−q)| = 0", vf(&q.boxminus(&nq)).norm(), tol)?;
        t.check("|(−q) ⊟ q| = 0", vf(&nq.boxminus(&q)).norm(), tol)?;
        t.check(
            "jacobian_log(−q) = jacobian_log(q)",
            max_abs(&(mf(&nq.jacobian_log()) - mf(&q.jacobian_log()))),
            tol * 4.0,
        )?;
    }
    // Exp of |v| ∈ (π, 2π) has w = cos(|v|/2) < 0: Log goes the short way round.
    for a in named_axes() {
        for ang in [3.5, 4.0, 5.0, 6.0] {
            let q = <Q<T> as LieGroup<T>>::exp(&v3::<T>(&(a * ang)));
            t.require("w < 0 for |v| ∈ (π, 2π)", q.w < T::zero(), || {
                format!("{q:?}")
            })?;
            let l = vf(&LieGroup::<T>::log(&q));
            let want = a * (ang - 2.0 * PI);
            t.check("Log = −(2π − |v|)·axis", (l - want).norm(), tol * ang)?;
        }
    }
    Ok(())
}

scalar_fixed_tests! { check_quaternion_negative_w;
    fn quaternion_negative_w_f32: f32;
    fn quaternion_negative_w_f64: f64;
}

/// w = 0 is a rotation by exactly π: |Log| = π, Exp(Log q) = ±q, q ⊟ (−q) = 0.
fn check_quaternion_zero_w<T: Real>(t: &Tracker) -> CheckResult {
    let tol = 16.0 * eps::<T>();
    for a in named_axes() {
        let at = v3::<T>(&a);
        let q =
            <Q<T> as LieGroup<T>>::from_quaternion(&Quaternion::new(T::zero(), at.x, at.y, at.z))
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let nq = neg(&q);
        for x in [q, nq] {
            let l = LieGroup::<T>::log(&x);
            t.require("Log finite", finite_v(&l), || format!("{l:?}"))?;
            t.check(
                "|Log| = π",
                (Real::to_f64(l.norm()) - PI).abs(),
                8.0 * eps::<T>() * PI,
            )?;
            t.check("Log ∥ axis", (vf(&l) / PI).cross(&a).norm(), tol)?;
            let back = <Q<T> as LieGroup<T>>::exp(&l);
            // ±q: compare as rotations, and as quaternions up to sign.
            t.check(
                "Exp(Log q) = q as rotation",
                rot_dist(&back, &x),
                rot_tol::<T>(),
            )?;
            let d = (back.coords - x.coords)
                .amax()
                .min((back.coords + x.coords).amax());
            t.check("Exp(Log q) = ±q", Real::to_f64(d), tol)?;
        }
        t.check("|q ⊟ (−q)| = 0 at w = 0", vf(&q.boxminus(&nq)).norm(), tol)?;
    }
    Ok(())
}

scalar_fixed_tests! { check_quaternion_zero_w;
    fn quaternion_zero_w_f32: f32;
    fn quaternion_zero_w_f64: f64;
}

// =======================================================================================
// Tiny angles and never-NaN sweeps
// =======================================================================================

/// Smallest positive subnormal of T, as f64.
fn min_subnormal<T: Real>() -> f64 {
    if T::NAME == "f32" {
        f64::from(f32::from_bits(1))
    } else {
        f64::from_bits(1)
    }
}

/// θ = 1e-19 (f32; its square is subnormal) and 1e-300 (f64; its square underflows to 0),
/// plus values down to the smallest subnormal and 0: Γ, Γ⁻¹, the contraction and Exp are
/// finite and equal their θ → 0 limits (I, I, ½ŵ, I) to within |θ| + 4ε, and Log(Exp θ)
/// recovers θ to relative accuracy 16ε.
fn check_tiny_angles<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    let tiny: &[f64] = if T::NAME == "f32" {
        &[1e-19, 1e-25, 1e-30, 1e-38, 1e-40, 1e-45, 0.0]
    } else {
        &[1e-19, 1e-100, 1e-154, 1e-200, 1e-300, 1e-310, 5e-324, 0.0]
    };
    let e = eps::<T>();
    let w = v3::<T>(&V::from(W));
    let id = Matrix3::<f64>::identity();
    for &x in tiny {
        for a in named_axes() {
            let th = v3::<T>(&(a * x));
            let g = mf(&right_jacobian(&th));
            let gi = mf(&right_jacobian_inv(&th));
            let m = mf(&right_jacobian_derivative_contraction(&th, &w));
            let ex = mf(&G::exp(&th).to_matrix());
            let l = G::exp(&th).log();
            let ok = g
                .iter()
                .chain(gi.iter())
                .chain(m.iter())
                .chain(ex.iter())
                .all(|v| v.is_finite())
                && finite_v(&l);
            t.require("finite at tiny θ", ok, || format!("θ = {x:e}, axis {a:?}"))?;
            let lim = x + 4.0 * e;
            t.check("Γ ≈ I", max_abs(&(g - id)), lim)?;
            t.check("Γ⁻¹ ≈ I", max_abs(&(gi - id)), lim)?;
            t.check(
                "contraction ≈ ½ŵ",
                max_abs(&(m - hat(&V::from(W)) * 0.5)),
                lim * 4.0,
            )?;
            t.check("Exp ≈ I", max_abs(&(ex - id)), lim)?;
            // ∞-norms: |θ|² itself underflows here. Log must not collapse to 0 (it did
            // before the fix in so3::log_matrix / quaternion Log): relative accuracy 16ε,
            // plus two subnormal ulps for the halving and doubling in the quaternion.
            let err = vf(&(l - th)).amax();
            let tol = 16.0 * e * vf(&th).amax() + 2.0 * min_subnormal::<T>();
            t.check("|Log(Exp θ) − θ|∞ ≤ 16ε|θ|∞", err, tol)?;
        }
    }
    Ok(())
}

group_fixed_tests! { check_tiny_angles;
    fn tiny_angles_matrix_f32: f32, SO3Matrix;
    fn tiny_angles_matrix_f64: f64, SO3Matrix;
    fn tiny_angles_quaternion_f32: f32, UnitQuaternion;
    fn tiny_angles_quaternion_f64: f64, UnitQuaternion;
}

/// Evaluates every operation and Jacobian at rotation vector `th` and requires all
/// results finite.
fn all_finite<T: Real, G: LieGroup<T>>(t: &Tracker, th: &Vector3<T>) -> CheckResult {
    let w = v3::<T>(&V::from(W));
    let r = G::exp(th);
    let r2 = G::exp(&v3::<T>(&V::new(0.4, -2.0, 1.1)));
    let l = r.log();
    let n = Real::to_f64(th.norm());
    let mut mats = vec![
        r.to_matrix(),
        right_jacobian(th),
        right_jacobian_derivative_contraction(th, &w),
        right_jacobian_inv(&l),
        r.jacobian_act(&w),
        r.jacobian_act_inv(&w),
        r.jacobian_inverse(),
        r.jacobian_compose_lhs(&r2),
        r.jacobian_compose_rhs(&r2),
        r.jacobian_boxminus_lhs(&r2),
        r.jacobian_boxminus_rhs(&r2),
        r2.jacobian_boxminus_lhs(&r),
        r2.jacobian_boxminus_rhs(&r),
        r.jacobian_boxplus_lhs(th),
        r.jacobian_boxplus_rhs(th),
        G::jacobian_exp(th),
        r.jacobian_log(),
        r.boxplus(th).to_matrix(),
        r.compose(&r2).to_matrix(),
        r.inverse().to_matrix(),
        r.renormalize().to_matrix(),
    ];
    if n < 6.0 {
        mats.push(right_jacobian_inv(th));
    }
    let vecs = [
        l,
        r.boxminus(&r2),
        r2.boxminus(&r),
        r.act(&w),
        r.act_inv(&w),
    ];
    let ok = mats.iter().all(finite_m)
        && vecs.iter().all(finite_v)
        && r.angle().is_finite()
        && r.to_quaternion().coords.iter().all(|x| x.is_finite());
    t.require("everything finite", ok, || format!("θ = {th:?}"))?;
    // The scalar coefficient functions too (γ only below 2π, where it is defined).
    let tt = th.norm();
    for cf in COEFS {
        if cf == Coef::Gamma && n >= 6.0 {
            continue;
        }
        let v = cf.eval(tt);
        t.require("coefficients finite", v.is_finite(), || {
            format!("{}({tt})", cf.name())
        })?;
    }
    Ok(())
}

/// A deterministic sweep: |θ| = 10^k for k from the smallest positive value of T up to 1e3
/// in steps of 10^0.25, plus every boundary (cut-offs ± ulps, the π window ± ulps,
/// π ± ulps, 2·cut-off), for all named axes.
fn check_never_nan_sweep<T: Real, G: LieGroup<T>>(t: &Tracker) -> CheckResult {
    let lo = if T::NAME == "f32" { -45.0 } else { -323.0 };
    let mut angles: Vec<T> = vec![T::zero()];
    let mut k = lo;
    while k <= 3.0 {
        angles.push(c::<T>(10f64.powf(k)));
        k += 0.25;
    }
    let mut boundaries: Vec<T> = COEFS.iter().map(|cf| c::<T>(cf.cutoff::<T>())).collect();
    boundaries.push(c::<T>(T::SERIES_SINC.cutoff * 2.0));
    for x0 in
        boundaries
            .into_iter()
            .chain([T::pi() - T::log_pi_window(), T::pi(), T::pi() * c::<T>(2.0)])
    {
        for (a, b) in straddle(x0) {
            angles.push(a);
            angles.push(b);
        }
    }
    for a in named_axes() {
        for &x in &angles {
            all_finite::<T, G>(t, &(v3::<T>(&a) * x))?;
        }
    }
    Ok(())
}

group_fixed_tests! { check_never_nan_sweep;
    fn never_nan_sweep_matrix_f32: f32, SO3Matrix;
    fn never_nan_sweep_matrix_f64: f64, SO3Matrix;
    fn never_nan_sweep_quaternion_f32: f32, UnitQuaternion;
    fn never_nan_sweep_quaternion_f64: f64, UnitQuaternion;
}

/// Random rotation vectors with |θ| log-uniform over the whole range of T.
fn any_magnitude<T: Real>() -> BoxedStrategy<V> {
    let lo = if T::NAME == "f32" { -44.0 } else { -320.0 };
    (lo..3.0f64, axis())
        .prop_map(|(e, a)| a * 10f64.powf(e))
        .boxed()
}

fn check_never_nan_random<T: Real, G: LieGroup<T>>(v: V, t: &Tracker) -> CheckResult {
    all_finite::<T, G>(t, &v3::<T>(&v))
}

group_property_tests! { check_never_nan_random, any_magnitude;
    fn never_nan_random_matrix_f32: f32, SO3Matrix;
    fn never_nan_random_matrix_f64: f64, SO3Matrix;
    fn never_nan_random_quaternion_f32: f32, UnitQuaternion;
    fn never_nan_random_quaternion_f64: f64, UnitQuaternion;
}
