//! SO(3) in coordinates: hat/vee, the Exp/Log maps of rotation matrices, the right
//! Jacobian Γ and its inverse, and the contraction of ∂Γ/∂θ used by Cosserat rods.
//!
//! Conventions (paper Section 3): rotation vectors θ ∈ ℝ³ are body-frame (right)
//! tangent vectors, `R ⊞ θ = R·Exp(θ)`, `R₁ ⊟ R₂ = Log(R₂ᵀR₁)`. All angles in radians.
//!
//! # Accuracy
//! Each function of |θ| that appears below has a closed form and a Taylor series. Each
//! uses its own series cut-off and number of terms ([`Real::SERIES_SINC`] and the other
//! `SERIES_*` constants, justified there): the series is used wherever the closed form
//! would lose digits to cancellation, which for α'/θ and β'/θ is all of [0, π]. Every
//! coefficient is within a few ε (relative) of its exact value on [0, π] in f32 and f64
//! (`tests/lie/coefficients.rs`). The closed forms avoid cancellation where possible:
//! (1 − cos θ)/θ² is evaluated as ½·(sin(θ/2)/(θ/2))² and (1 + cos θ)/(2θ sin θ) as
//! cot(θ/2)/(2θ), which has no 0/0 at θ = π.
//!
//! The matrix Log uses θ = atan2(|s|, (tr R − 1)/2) with s the axial vector of the skew
//! part (never `acos`, which loses half the digits near 0 and π) — for tan θ up to
//! tan(π/8) ([`Real::SERIES_ATAN`]) θ/sin θ as atan(x)/x from the polynomial
//! [`Real::ATAN_POLY`] in x² = |s|²/cos²θ (below [`Real::SERIES_ATAN_SHORT`] the first
//! terms of its Taylor series), divided by cos θ (no square root, no atan2), and
//! for the smallest angles (|s| below [`Real::SERIES_ASIN_TINY`], cos θ > 0) as asin(y)/y
//! from the first terms of its series in y² = |s|² (no division either);
//! beyond it atan2 by the same polynomial after an argument reduction — and within
//! [`Real::log_pi_window`] of π takes the axis from the symmetric part of R, with its
//! sign from s. It never returns NaN for a finite rotation matrix.

use super::real::{c, Real};
use nalgebra::{Matrix3, Vector3};

/// Hat map (2): ℝ³ → so(3), `hat(ω)·v = ω × v`. Returns the 3×3 skew-symmetric matrix.
#[inline]
pub fn hat<T: Real>(w: &Vector3<T>) -> Matrix3<T> {
    let z = T::zero();
    Matrix3::new(z, -w.z, w.y, w.z, z, -w.x, -w.y, w.x, z)
}

/// Vee map (3): so(3) → ℝ³, the inverse of [`hat`].
///
/// For a matrix that is not exactly skew-symmetric it returns the axial vector of its
/// skew part, `vee((M − Mᵀ)/2)`, so `vee(hat(ω)) = ω` exactly and round-off in M does
/// not bias the result.
#[inline]
pub fn vee<T: Real>(m: &Matrix3<T>) -> Vector3<T> {
    let h = c::<T>(0.5);
    Vector3::new(
        (m[(2, 1)] - m[(1, 2)]) * h,
        (m[(0, 2)] - m[(2, 0)]) * h,
        (m[(1, 0)] - m[(0, 1)]) * h,
    )
}

mod series;
pub(crate) use series::series_sq;
use series::{series, series_sq_wide, series_wide};

/// Whether x² = `num`/`den`² is at most tan²(π/8), where [`atan_over_x`] applies, tested
/// without dividing (`den` > 0 is checked by the caller).
#[inline(always)]
pub(crate) fn atan_series_applies<T: Real>(num: T, den: T) -> bool {
    num <= c::<T>(TAN_PI_8 * TAN_PI_8) * (den * den)
}

/// atan(x)/x from x² ≤ tan²(π/8) (unchecked), by the polynomial [`Real::ATAN_POLY`], or
/// below [`Real::SERIES_ATAN_SHORT`] by the first terms of its Taylor series
/// ([`ATAN_TAYLOR`]): no square root, no division. Relative error ~1ε.
#[inline(always)]
pub(crate) fn atan_over_x<T: Real>(x_sq: T) -> T {
    if let Some(a) = series_sq(x_sq, T::SERIES_ATAN_SHORT, &ATAN_TAYLOR) {
        return a;
    }
    series::poly(x_sq, T::ATAN_POLY)
}

/// atan2(y, x) for y ≥ 0: the angle of (x, y) in [0, π], to ~1 ulp (relative for
/// angles in [0, π/2], absolute ½ulp(π) beyond), with one division and the polynomial
/// [`Real::ATAN_POLY`] instead of libm's `atan2` (a third of its instructions).
///
/// The first quadrant angle of (|x|, y) is reduced to off ± atan(u) with
/// |u| ≤ tan(π/8), by atan(t) = π/4 + atan((t − 1)/(t + 1)) and
/// atan(t) = π/2 − atan(1/t), so that the result never cancels (it is at least π/8
/// wherever an offset is added), then reflected to π − angle for x < 0. (0, ±0) gives
/// 0; a NaN input gives NaN. Used by the Logs for θ = atan2(|s|, cos θ) with
/// |s| = sin θ ≥ 0.
#[inline]
pub(crate) fn atan2_nonneg<T: Real>(y: T, x: T) -> T {
    // Offsets as (high, low) pairs, high + low = the constant to ~2⁻¹⁰⁷ relative (the low
    // part is below the rounding of an f32 result): for x ≥ 0 the angle is
    // off + sign·atan(u); for x < 0 it is π − that = (π − off) − sign·atan(u).
    const ZERO: (f64, f64) = (0.0, 0.0);
    const PI_4: (f64, f64) = (std::f64::consts::FRAC_PI_4, 3.061616997868383e-17);
    const PI_2: (f64, f64) = (std::f64::consts::FRAC_PI_2, 6.123233995736766e-17);
    const PI_3_4: (f64, f64) = (2.356194490192345, 9.184850993605148e-17);
    const PI: (f64, f64) = (std::f64::consts::PI, 1.2246467991473532e-16);
    let ax = x.abs();
    let tau = c::<T>(TAN_PI_8);
    // y − ax and ax − y (used for ratios in (tan(π/8), 1/tan(π/8))) round at most once.
    let (num, den, (off, refl), sign) = if y <= ax {
        if y <= tau * ax {
            (y, ax, (ZERO, PI), T::one())
        } else {
            (y - ax, y + ax, (PI_4, PI_3_4), T::one())
        }
    } else if ax <= tau * y {
        (ax, y, (PI_2, PI_2), -T::one())
    } else {
        (ax - y, ax + y, (PI_4, PI_3_4), -T::one())
    };
    let u = if den > T::zero() { num / den } else { num };
    let a = sign * (u * atan_over_x(u * u));
    if x < T::zero() {
        c::<T>(refl.0) + (c::<T>(refl.1) - a)
    } else {
        c::<T>(off.0) + (c::<T>(off.1) + a)
    }
}

// Series coefficients (of θ⁰, θ², θ⁴, …), from the Taylor expansions of the definitions:
// sin θ = Σ (−1)ᵏ θ²ᵏ⁺¹/(2k+1)! and cos θ = Σ (−1)ᵏ θ²ᵏ/(2k)! give
//   sinc  = Σₖ (−1)ᵏ θ²ᵏ/(2k+1)!,   α = Σₖ (−1)ᵏ θ²ᵏ/(2k+2)!,   β = Σₖ (−1)ᵏ θ²ᵏ/(2k+3)!;
// differentiating α = Σ aₖθ²ᵏ term by term, α'/θ = Σₖ≥₁ 2k·aₖ θ²ᵏ⁻², and likewise β'/θ;
// (θ/2)·cot(θ/2) = Σₙ≥₀ B₂ₙ θ²ⁿ/(2n)! (Bernoulli numbers, (−1)ⁿ⁺¹B₂ₙ > 0 for n ≥ 1) gives
//   γ = (1 − (θ/2)cot(θ/2))/θ² = Σₙ≥₁ |B₂ₙ| θ²ⁿ⁻²/(2n)!.
// Each table holds at least as many terms as the longest `SeriesCut::terms` using it; the
// values are the f64 nearest the exact rationals.
pub(crate) const SINC_SERIES: [f64; 6] = [
    1.0,
    -0.16666666666666666,
    0.008333333333333333,
    -0.0001984126984126984,
    2.7557319223985893e-06,
    -2.505210838544172e-08,
];
pub(crate) const ALPHA_SERIES: [f64; 5] = [
    0.5,
    -0.041666666666666664,
    0.001388888888888889,
    -2.48015873015873e-05,
    2.755731922398589e-07,
];
const BETA_SERIES: [f64; 10] = [
    0.16666666666666666,
    -0.008333333333333333,
    0.0001984126984126984,
    -2.7557319223985893e-06,
    2.505210838544172e-08,
    -1.6059043836821613e-10,
    7.647163731819816e-13,
    -2.8114572543455206e-15,
    8.22063524662433e-18,
    -1.9572941063391263e-20,
];
const GAMMA_INV_SERIES: [f64; 21] = [
    0.08333333333333333,
    0.001388888888888889,
    3.306878306878307e-05,
    8.267195767195768e-07,
    2.08767569878681e-08,
    5.284190138687493e-10,
    1.3382536530684679e-11,
    3.3896802963225827e-13,
    8.586062056277845e-15,
    2.174868698558062e-16,
    5.5090028283602295e-18,
    1.3954464685812522e-19,
    3.534707039629467e-21,
    8.953517427037546e-23,
    2.267952452337683e-24,
    5.744790668872202e-26,
    1.455172475614865e-27,
    3.6859949406653103e-29,
    9.336734257095045e-31,
    2.36502241570063e-32,
    5.990671762482134e-34,
];
// atan(u)/u on |u| ≤ tan(π/8), as a polynomial in z = u² (coefficients of z⁰, z¹, …):
// near-minimax (Chebyshev) fits of (atan(u)/u − 1)/z on z ∈ [0, tan²(π/8)], computed
// with mpmath at 50 digits (`mpmath.chebyfit`), with the exact leading 1 prepended.
// Degree 10 (f64): largest relative error of atan(u) 7.1e-18 = 0.03ε₆₄; degree 4 (f32):
// 2.5e-9 = 0.02ε₃₂ (both measured at 2,001 points in 50-digit arithmetic with the
// coefficients rounded to f64). Evaluating it ([`series::poly`]) adds ~1ε.
// [`Real::ATAN_POLY`] selects one.
pub(crate) const ATAN_POLY_F64: [f64; 12] = [
    1.0,
    -0.3333333333333333,
    0.1999999999999552,
    -0.14285714284666542,
    0.11111111015256361,
    -0.09090904578123903,
    0.07692183190826087,
    -0.06664511447381948,
    0.0585814891280221,
    -0.0508544973794026,
    0.03923165829558719,
    -0.01917688711906226,
];
pub(crate) const ATAN_POLY_F32: [f64; 6] = [
    1.0,
    -0.3333333176116852,
    0.19999540483648964,
    -0.1426395559798464,
    0.10743731490791084,
    -0.06451928208121749,
];
/// The Taylor series of atan(x)/x in x²: (−1)ᵏ/(2k + 1), the f64 nearest each.
pub(crate) const ATAN_TAYLOR: [f64; 4] = [1.0, -1.0 / 3.0, 1.0 / 5.0, -1.0 / 7.0];
/// The Taylor series of asin(y)/y in y²: (2k)!/(4ᵏ(k!)²(2k + 1)), the f64 nearest each.
pub(crate) const ASIN_TAYLOR: [f64; 3] = [1.0, 1.0 / 6.0, 3.0 / 40.0];

/// θ/sin θ = asin(y)/y from y² = sin²θ below [`Real::SERIES_ASIN_TINY`] (θ < π/2 is the
/// caller's to check), `None` above it: the Logs' path for the smallest rotations, with
/// neither a division nor a square root.
#[inline(always)]
pub(crate) fn asin_over_y_tiny<T: Real>(y_sq: T) -> Option<T> {
    series_sq(y_sq, T::SERIES_ASIN_TINY, &ASIN_TAYLOR)
}
/// tan(π/8), the end of the interval of [`ATAN_POLY_F64`] and [`ATAN_POLY_F32`].
pub(crate) const TAN_PI_8: f64 = 0.41421356237309503;
const ALPHA_PRIME_SERIES: [f64; 14] = [
    -0.08333333333333333,
    0.005555555555555556,
    -0.00014880952380952382,
    2.204585537918871e-06,
    -2.08767569878681e-08,
    1.376489471727567e-10,
    -6.691268265342339e-13,
    2.499073114973796e-15,
    -7.398571721961897e-18,
    1.7793582784901146e-20,
    -3.54582265641146e-23,
    5.951031031739514e-26,
    -8.527712016381578e-29,
    1.0555965360684537e-31,
];
const BETA_PRIME_SERIES: [f64; 13] = [
    -0.016666666666666666,
    0.0007936507936507937,
    -1.6534391534391536e-05,
    2.0041686708353376e-07,
    -1.6059043836821615e-09,
    9.17659647818378e-12,
    -3.936040156083729e-14,
    1.3153016394598927e-16,
    -3.523129391410427e-19,
    7.736340341261368e-22,
    -1.4183290625645841e-24,
    2.204085567310931e-27,
    -2.9405903504764064e-30,
];

/// sin θ / θ (the Exp coefficient of θ̂ in (6)). Series below [`Real::SERIES_SINC`].
#[inline]
pub fn sinc<T: Real>(theta: T) -> T {
    series(theta, T::SERIES_SINC, &SINC_SERIES).unwrap_or_else(|| theta.sin() / theta)
}

/// α(θ) = (1 − cos θ)/θ² (the Exp coefficient of θ̂² in (6), and of −θ̂ in Γ (25)).
///
/// Closed form ½·(sin(θ/2)/(θ/2))², series below [`Real::SERIES_ALPHA`].
#[inline]
pub fn alpha<T: Real>(theta: T) -> T {
    series(theta, T::SERIES_ALPHA, &ALPHA_SERIES).unwrap_or_else(|| {
        let h = theta * c::<T>(0.5);
        let s = h.sin() / h;
        c::<T>(0.5) * s * s
    })
}

/// β(θ) = (θ − sin θ)/θ³ (the coefficient of θ̂² in Γ (25)). Series below
/// [`Real::SERIES_BETA`].
#[inline]
pub fn beta<T: Real>(theta: T) -> T {
    series(theta, T::SERIES_BETA, &BETA_SERIES)
        .unwrap_or_else(|| (theta - theta.sin()) / (theta * theta * theta))
}

/// γ(θ) = 1/θ² − (1 + cos θ)/(2θ sin θ), the coefficient of θ̂² in Γ⁻¹ (27).
///
/// Series below [`Real::SERIES_GAMMA_INV`] (with fewer terms below
/// [`Real::SERIES_GAMMA_INV_TINY`], [`Real::SERIES_GAMMA_INV_SHORT`] and
/// [`Real::SERIES_GAMMA_INV_MID`]); above, evaluated
/// as 1/θ² − cot(θ/2)/(2θ),
/// which is finite at θ = π (γ(π) = 1/π²). Singular at |θ| = 2π, where Γ is not
/// invertible; Log never returns |θ| > π.
#[inline]
pub fn gamma_inv_coeff<T: Real>(theta: T) -> T {
    gamma_inv_short_series(theta * theta).unwrap_or_else(|| gamma_inv_long(theta))
}

/// γ from its series in θ² below [`Real::SERIES_GAMMA_INV_MID`] (the shortest series
/// whose cut-off θ² is below), `None` above.
#[inline(always)]
fn gamma_inv_short_series<T: Real>(t2: T) -> Option<T> {
    series_sq(t2, T::SERIES_GAMMA_INV_TINY, &GAMMA_INV_SERIES)
        .or_else(|| series_sq(t2, T::SERIES_GAMMA_INV_SHORT, &GAMMA_INV_SERIES))
        .or_else(|| series_sq(t2, T::SERIES_GAMMA_INV_MID, &GAMMA_INV_SERIES))
}

/// γ at or above [`Real::SERIES_GAMMA_INV_MID`]: the full series below
/// [`Real::SERIES_GAMMA_INV`], the closed form above.
fn gamma_inv_long<T: Real>(theta: T) -> T {
    series(theta, T::SERIES_GAMMA_INV, &GAMMA_INV_SERIES).unwrap_or_else(|| gamma_inv_closed(theta))
}

/// γ(θ) in closed form, 1/θ² − cot(θ/2)/(2θ) (for θ at or above the series cut-off).
#[inline(never)]
fn gamma_inv_closed<T: Real>(theta: T) -> T {
    let h = theta * c::<T>(0.5);
    T::one() / (theta * theta) - h.cos() / (c::<T>(2.0) * theta * h.sin())
}

/// γ(θ) of [`gamma_inv_coeff`] from θ² (no square root below the series cut-offs).
#[inline]
pub(crate) fn gamma_inv_coeff_sq<T: Real>(t2: T) -> T {
    gamma_inv_short_series(t2).unwrap_or_else(|| gamma_inv_long(t2.sqrt()))
}

/// α'(θ)/θ where α is [`alpha`]: (sin θ/θ − 2α)/θ². Finite at 0 (−1/12).
///
/// Series below [`Real::SERIES_ALPHA_PRIME`] (all of [0, π]).
#[inline]
pub fn alpha_prime_over_theta<T: Real>(theta: T) -> T {
    series(theta, T::SERIES_ALPHA_PRIME, &ALPHA_PRIME_SERIES)
        .unwrap_or_else(|| (sinc(theta) - c::<T>(2.0) * alpha(theta)) / (theta * theta))
}

/// β'(θ)/θ where β is [`beta`]: (α − 3β)/θ². Finite at 0 (−1/60).
///
/// Series below [`Real::SERIES_BETA_PRIME`] (all of [0, π]).
#[inline]
pub fn beta_prime_over_theta<T: Real>(theta: T) -> T {
    series(theta, T::SERIES_BETA_PRIME, &BETA_PRIME_SERIES)
        .unwrap_or_else(|| (alpha(theta) - c::<T>(3.0) * beta(theta)) / (theta * theta))
}

/// sin θ/θ and (1 − cos θ)/θ² together (the two coefficients of Exp (6)), with one
/// `sin_cos` of θ/2 above the series cut-offs: sin θ = 2·sin(θ/2)·cos(θ/2) and
/// 1 − cos θ = 2·sin²(θ/2), neither of which cancels. Each value equals [`sinc`] and
/// [`alpha`] to a few ε.
#[inline]
pub fn sinc_alpha<T: Real>(theta: T) -> (T, T) {
    let s = series_wide(theta, T::SERIES_SINC, &SINC_SERIES);
    let a = series_wide(theta, T::SERIES_ALPHA, &ALPHA_SERIES);
    match (s, a) {
        (Some(s), Some(a)) => (s, a),
        _ => {
            let (sh, ch) = (theta * c::<T>(0.5)).sin_cos();
            let q = sh / theta;
            let two = c::<T>(2.0);
            (s.unwrap_or(two * q * ch), a.unwrap_or(two * q * q))
        }
    }
}

/// [`sinc_alpha`] from θ² (no square root below the series cut-offs).
#[inline(always)]
pub(crate) fn sinc_alpha_sq<T: Real>(theta_sq: T) -> (T, T) {
    match (
        series_sq_wide(theta_sq, T::SERIES_SINC, &SINC_SERIES),
        series_sq_wide(theta_sq, T::SERIES_ALPHA, &ALPHA_SERIES),
    ) {
        (Some(s), Some(a)) => (s, a),
        _ => sinc_alpha(theta_sq.sqrt()),
    }
}

/// Exp (6) of a rotation vector θ (rad, any length) as a 3×3 rotation matrix
/// (Rodrigues): `I + (sin θ/θ)·θ̂ + ((1 − cos θ)/θ²)·θ̂²`, written out entry by entry
/// with `θ̂² = θθᵀ − |θ|²I`.
#[inline]
pub fn exp_matrix<T: Real>(theta: &Vector3<T>) -> Matrix3<T> {
    let (x, y, z) = (theta.x, theta.y, theta.z);
    let (xx, yy, zz) = (x * x, y * y, z * z);
    let t = (xx + yy + zz).sqrt();
    let (s, a) = sinc_alpha(t);
    let one = T::one();
    let (axy, axz, ayz) = (a * x * y, a * x * z, a * y * z);
    let (sx, sy, sz) = (s * x, s * y, s * z);
    Matrix3::new(
        one - a * (yy + zz),
        axy - sz,
        axz + sy,
        axy + sz,
        one - a * (xx + zz),
        ayz - sx,
        axz - sy,
        ayz + sx,
        one - a * (xx + yy),
    )
}

/// Log (8) of a rotation matrix: the rotation vector θ with |θ| ∈ [0, π] and
/// `exp_matrix(θ) = R`.
///
/// `R` is assumed to be a rotation (orthonormal, det +1) to round-off; use
/// [`crate::lie::LieGroup::from_matrix`] to validate untrusted input. At exactly
/// |θ| = π both ±θ are valid; the one returned has a non-negative component along the
/// largest diagonal entry of R + Rᵀ.
#[inline]
pub fn log_matrix<T: Real>(r: &Matrix3<T>) -> Vector3<T> {
    let half = c::<T>(0.5);
    // s = sin θ · axis and cos θ from the trace, formed here (inlined where R is
    // formed) and passed on in registers; R itself is read again only near π. A
    // matrix passed by reference to a call is stored and reloaded with loads wider
    // than its stores, which the store buffer cannot forward: a stall of the order of
    // ten cycles per Log (measured: triple pendulum, block mode, 1.58–1.61 → 1.40 µs
    // per step together with the same change to `Body`'s corrections).
    let s = vee(r);
    let cos_t = (r.trace() - T::one()) * half;
    log_matrix_from(s.x, s.y, s.z, cos_t, r)
}

/// [`log_matrix`] from s = sin θ · axis = vee(R) and cos θ = (tr R − 1)/2.
#[inline(never)]
fn log_matrix_from<T: Real>(sx: T, sy: T, sz: T, cos_t: T, r: &Matrix3<T>) -> Vector3<T> {
    let half = c::<T>(0.5);
    let one = T::one();
    let s = Vector3::new(sx, sy, sz);
    // Small angles (tan θ below the atan series cut-off): θ = atan(x), x = sin θ/cos θ,
    // so s·θ/sin θ = s·(atan(x)/x)/cos θ, from |s|² without a square root or atan2.
    let ss = s.norm_squared();
    // The smallest angles: θ/sin θ = asin(|s|)/|s| from |s|² (θ < π/2: cos θ > 0).
    if cos_t > T::zero() {
        if let Some(a) = asin_over_y_tiny(ss) {
            return s * a;
        }
    }
    if cos_t > T::zero() && atan_series_applies(ss, cos_t) {
        let inv_c = one / cos_t;
        let a = atan_over_x(ss * inv_c * inv_c);
        return s * (a * inv_c);
    }
    let sin_t = ss.sqrt();
    let theta = atan2_nonneg(sin_t, cos_t);
    if theta < T::pi() - T::log_pi_window() {
        if sin_t == T::zero() {
            // |s|² underflowed (|θ| below ~1e-154 in f64, ~1e-19 in f32) or R = I: then
            // θ = s to within rounding (θ/sin θ = 1), and s = 0 exactly for R = I.
            return s;
        }
        // θ/sin θ has no cancellation for θ < π − window.
        return s * (theta / sin_t);
    }
    // Near π: R + Rᵀ = 2cos θ I + 2(1 − cos θ) a aᵀ.
    let sym = (r + r.transpose()) * half;
    let denom = one - cos_t;
    let mut b = sym;
    for i in 0..3 {
        b[(i, i)] -= cos_t;
    }
    b /= denom;
    // Largest diagonal entry of a aᵀ gives the best-conditioned column.
    let mut k = 0;
    for i in 1..3 {
        if b[(i, i)] > b[(k, k)] {
            k = i;
        }
    }
    let mut axis: Vector3<T> = b.column(k).into_owned();
    let n = axis.norm();
    if n == T::zero() {
        return Vector3::zeros();
    }
    axis /= n;
    if axis.dot(&s) < T::zero() {
        axis = -axis;
    }
    axis * theta
}

/// Right Jacobian Γ(θ) of Exp (25), 3×3:
/// `Γ = I − ((1 − cos θ)/θ²)·θ̂ + ((θ − sin θ)/θ³)·θ̂²`.
///
/// `Exp(θ + δ) ≈ Exp(θ) ⊞ Γ(θ)δ` (26).
#[inline]
pub fn right_jacobian<T: Real>(theta: &Vector3<T>) -> Matrix3<T> {
    let t = theta.norm();
    let k = hat(theta);
    Matrix3::identity() - k * alpha(t) + k * k * beta(t)
}

/// [`right_jacobian`] written out entry by entry with `θ̂² = θθᵀ − |θ|²I` and the
/// coefficients from |θ|² (no square root below the series cut-offs), always inlined
/// (for the rod elements' Gauss points). Equal to [`right_jacobian`] to round-off.
#[inline(always)]
pub(crate) fn right_jacobian_inline<T: Real>(theta: &Vector3<T>) -> Matrix3<T> {
    let (x, y, z) = (theta.x, theta.y, theta.z);
    let (xx, yy, zz) = (x * x, y * y, z * z);
    let t2 = xx + yy + zz;
    let (a, b) = match (
        series_sq(t2, T::SERIES_ALPHA, &ALPHA_SERIES),
        series_sq(t2, T::SERIES_BETA, &BETA_SERIES),
    ) {
        (Some(a), Some(b)) => (a, b),
        _ => {
            let t = t2.sqrt();
            (alpha(t), beta(t))
        }
    };
    let one = T::one();
    // I − α·θ̂ + β·θ̂².
    let (bxy, bxz, byz) = (b * x * y, b * x * z, b * y * z);
    let (ax, ay, az) = (a * x, a * y, a * z);
    Matrix3::new(
        one - b * (yy + zz),
        bxy + az,
        bxz - ay,
        bxy - az,
        one - b * (xx + zz),
        byz + ax,
        bxz + ay,
        byz - ax,
        one - b * (xx + yy),
    )
}

/// Inverse right Jacobian Γ⁻¹(θ) (27), the Jacobian of Log, 3×3:
/// `Γ⁻¹ = I + ½θ̂ + (1/θ² − (1 + cos θ)/(2θ sin θ))·θ̂²`. Valid for |θ| < 2π.
#[inline]
pub fn right_jacobian_inv<T: Real>(theta: &Vector3<T>) -> Matrix3<T> {
    right_jacobian_inv_inline(theta)
}

/// [`right_jacobian_inv`], always inlined (for the joints' evaluation, where the rows a
/// joint does not use are then never computed).
#[inline(always)]
pub(crate) fn right_jacobian_inv_inline<T: Real>(theta: &Vector3<T>) -> Matrix3<T> {
    let (x, y, z) = (theta.x, theta.y, theta.z);
    let (xx, yy, zz) = (x * x, y * y, z * z);
    let g = gamma_inv_coeff_sq(xx + yy + zz);
    let h = c::<T>(0.5);
    let one = T::one();
    // I + ½θ̂ + γ·θ̂², θ̂² = θθᵀ − |θ|²I written out entry by entry.
    let (gxy, gxz, gyz) = (g * x * y, g * x * z, g * y * z);
    let (hx, hy, hz) = (h * x, h * y, h * z);
    Matrix3::new(
        one - g * (yy + zz),
        gxy - hz,
        gxz + hy,
        gxy + hz,
        one - g * (xx + zz),
        gyz - hx,
        gxz - hy,
        gyz + hx,
        one - g * (xx + yy),
    )
}

/// Contraction of the third-order tensor ∂Γ/∂θ with a vector `w` over Γ's column index
/// (Appendix G): returns the 3×3 matrix `M` with `M[a][c] = Σ_b ∂Γ_ab/∂θ_c · w_b`,
/// i.e. `M = ∂(Γ(θ)·w)/∂θ` with `w` held fixed.
///
/// Closed form used (derived in `proofs/right_jacobian_derivative.md`), with
/// α = (1 − cos θ)/θ², β = (θ − sin θ)/θ³:
/// `M = −α'/θ·(θ̂w)θᵀ + α·ŵ + β'/θ·(θ̂²w)θᵀ + β·(θwᵀ + (θ·w)I − 2wθᵀ)`.
/// Finite and continuous at θ = 0, where it equals ½ŵ.
pub fn right_jacobian_derivative_contraction<T: Real>(
    theta: &Vector3<T>,
    w: &Vector3<T>,
) -> Matrix3<T> {
    let t = theta.norm();
    let a = alpha(t);
    let b = beta(t);
    let da = alpha_prime_over_theta(t);
    let db = beta_prime_over_theta(t);
    let tw = theta.cross(w);
    let ttw = theta.cross(&tw);
    let mut m = hat(w) * a;
    m += (ttw * db - tw * da) * theta.transpose();
    m += (theta * w.transpose() - w * theta.transpose() * c::<T>(2.0)
        + Matrix3::identity() * theta.dot(w))
        * b;
    m
}

/// Left Jacobian Jl(θ) of Exp, 3×3: `Exp(θ + δ) ≈ Exp(Jl(θ)δ)·Exp(θ)` (the world-frame
/// counterpart of (26)). `Jl(θ) = Γ(−θ) = Γ(θ)ᵀ = I + ((1 − cos θ)/θ²)·θ̂ +
/// ((θ − sin θ)/θ³)·θ̂²`, and `Jl(θ) = Exp(θ)·Γ(θ)` (`proofs/left_jacobian.md`).
#[inline]
pub fn left_jacobian<T: Real>(theta: &Vector3<T>) -> Matrix3<T> {
    let t = theta.norm();
    let k = hat(theta);
    Matrix3::identity() + k * alpha(t) + k * k * beta(t)
}

/// Inverse left Jacobian Jl⁻¹(θ) = Γ⁻¹(θ)ᵀ = Γ⁻¹(−θ), 3×3:
/// `I − ½θ̂ + (1/θ² − (1 + cos θ)/(2θ sin θ))·θ̂²`. The derivative of the world-frame
/// Log: `Log(Exp(δ)·R) ≈ Log R + Jl⁻¹(Log R)·δ`. Valid for |θ| < 2π.
#[inline]
pub fn left_jacobian_inv<T: Real>(theta: &Vector3<T>) -> Matrix3<T> {
    let t = theta.norm();
    let k = hat(theta);
    Matrix3::identity() - k * c::<T>(0.5) + k * k * gamma_inv_coeff(t)
}

#[cfg(test)]
mod tests {
    use super::atan2_nonneg;
    use rand::{RngExt, SeedableRng};

    /// Units in the last place of `x` (f64).
    fn ulp64(x: f64) -> f64 {
        let x = x.abs();
        f64::from_bits(x.to_bits() + 1) - x
    }

    /// Inputs: both axes, the octant boundaries, tiny and huge magnitudes, and random
    /// directions over 40 decades of scale.
    fn inputs() -> Vec<(f64, f64)> {
        let mut v = vec![
            (0.0, 1.0),
            (0.0, -1.0),
            (1.0, 0.0),
            (1.0, 1.0),
            (1.0, -1.0),
            (super::TAN_PI_8, 1.0),
            (1.0, super::TAN_PI_8),
            (1e-300, 1.0),
            (1.0, 1e-300),
            (1e-300, -1.0),
            (3e-8, -1.0),
        ];
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        for _ in 0..200_000 {
            let a: f64 = rng.random_range(0.0..std::f64::consts::PI);
            let s = 10f64.powf(rng.random_range(-20.0..20.0));
            v.push((s * a.sin(), s * a.cos()));
        }
        v
    }

    /// f64: within 3 ulp of libm's atan2 (itself within 1 ulp of the exact angle). The
    /// reduced argument u carries up to ~1 ulp of its own (the division, and the
    /// difference of the reduction where the two inputs are not within a factor 2),
    /// which reaches the result scaled by at most 1; the polynomial adds ~1 ulp and the
    /// final addition rounds once more; the offsets are added as (high, low) pairs, so
    /// they add no error of their own. Measured: at most 2 ulp.
    #[test]
    fn atan2_nonneg_f64_matches_libm() {
        let mut worst: f64 = 0.0;
        for (y, x) in inputs() {
            let got = atan2_nonneg(y, x);
            let want = y.atan2(x);
            let err = (got - want).abs() / ulp64(want).max(f64::MIN_POSITIVE);
            worst = worst.max(err);
            assert!(
                err <= 3.0,
                "atan2({y:e}, {x:e}): {got:e} vs {want:e} ({err} ulp)"
            );
        }
        println!("atan2_nonneg f64: worst {worst} ulp");
        assert!(atan2_nonneg(f64::NAN, 1.0).is_nan());
        assert!(atan2_nonneg(1.0, f64::NAN).is_nan());
        assert_eq!(atan2_nonneg(0.0, 0.0), 0.0);
    }

    /// f32: within 3 ulp (f32) of the f64 angle of the same (widened, exact) inputs, for
    /// the reasons of the f64 bound (the degree-4 polynomial's own error is 0.02ε₃₂).
    /// Measured: at most 2.7 ulp.
    #[test]
    fn atan2_nonneg_f32_matches_f64() {
        let mut worst: f64 = 0.0;
        for (y, x) in inputs() {
            let (y, x) = (y as f32, x as f32);
            if y == 0.0 && x == 0.0 {
                continue;
            }
            let got = atan2_nonneg(y, x) as f64;
            let want = (y as f64).atan2(x as f64);
            let ulp = {
                let w = want.abs() as f32;
                (f32::from_bits(w.to_bits() + 1) - w) as f64
            };
            let err = (got - want).abs() / ulp.max(f64::MIN_POSITIVE);
            worst = worst.max(err);
            assert!(
                err <= 3.0,
                "atan2({y:e}, {x:e}): {got:e} vs {want:e} ({err} ulp)"
            );
        }
        println!("atan2_nonneg f32: worst {worst} ulp");
    }
}
