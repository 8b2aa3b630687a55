//! Truncated Taylor series of the SO(3) coefficient functions (sinc, α, β, Γ⁻¹, …),
//! below the per-precision cut-offs of [`Real`] ([`SeriesCut`]), by Estrin's scheme or
//! Horner's rule ([`poly`]).

use crate::lie::real::{c, Real, SeriesCut};

/// The polynomial in θ² ([`poly`]) of the first `cut.terms` of `coeffs` (the series coefficients of
/// θ⁰, θ², θ⁴, …), or `None` when |θ| ≥ `cut.cutoff` and the closed form is to be used.
#[inline(always)]
pub(super) fn series<T: Real>(theta: T, cut: SeriesCut, coeffs: &[f64]) -> Option<T> {
    if theta.abs() >= c::<T>(cut.cutoff) {
        return None;
    }
    Some(poly_sq(theta * theta, cut, coeffs))
}

/// As [`series`], from θ² (no square root): [`poly`] on the first `cut.terms` of
/// `coeffs` at x² = `theta_sq`, or `None` when θ² ≥ `cut.cutoff`² (and for a NaN θ²).
#[inline(always)]
pub(crate) fn series_sq<T: Real>(theta_sq: T, cut: SeriesCut, coeffs: &[f64]) -> Option<T> {
    if theta_sq < c::<T>(cut.cutoff * cut.cutoff) {
        Some(poly_sq(theta_sq, cut, coeffs))
    } else {
        None
    }
}

/// [`poly`] in `T` on the first `cut.terms` of `coeffs` at x² = `theta_sq`,
/// unchecked (the caller has checked θ² against the cut-off).
#[inline(always)]
fn poly_sq<T: Real>(theta_sq: T, cut: SeriesCut, coeffs: &[f64]) -> T {
    poly(theta_sq, &coeffs[..cut.terms])
}

/// Σₖ cₖ xᵏ over `coeffs` (c₀ first) in `T`: by [`estrin`] in f64 for 4 to 16 terms,
/// otherwise by Horner's rule. In f32 ([`Real::SUBNORMAL_SQUARES`]) always by Horner's
/// rule: Estrin's scheme forms x², x⁴, … explicitly, and at the small rotations of rods
/// (x = θ² ≈ 1e-10) x⁴ would be subnormal, each product with it a microcode assist.
#[inline(always)]
pub(crate) fn poly<T: Real>(x: T, coeffs: &[f64]) -> T {
    if !T::SUBNORMAL_SQUARES && (4..=16).contains(&coeffs.len()) {
        return estrin(x, coeffs);
    }
    let mut acc = T::zero();
    for &k in coeffs.iter().rev() {
        acc = acc * x + c::<T>(k);
    }
    acc
}

/// Σₖ cₖ xᵏ over 4 to 16 `coeffs` by Estrin's scheme: pairs c₂ⱼ + c₂ⱼ₊₁x, pairs of those
/// with x², then with x⁴ and x⁸. The same sum as Horner's rule to within a few rounding
/// errors, with a dependency chain 4 multiply-adds deep instead of n − 1: these series
/// lie on the critical path of the projections (each waits on the one before), where an
/// 11-term Horner chain alone is ~90 cycles. Every loop has a constant trip count and
/// the tests on `n` fold once `coeffs` (a per-precision constant) is known.
#[inline(always)]
// Fixed trip counts with tests on the index, so that the loops unroll and fold.
#[allow(clippy::needless_range_loop)]
fn estrin<T: Real>(x: T, coeffs: &[f64]) -> T {
    let n = coeffs.len();
    let k = |i: usize| if i < n { c::<T>(coeffs[i]) } else { T::zero() };
    let mut p = [T::zero(); 8];
    for j in 0..8 {
        if 2 * j + 1 < n {
            p[j] = k(2 * j) + k(2 * j + 1) * x;
        } else if 2 * j < n {
            p[j] = k(2 * j);
        }
    }
    let x2 = x * x;
    let mut q = [T::zero(); 4];
    for j in 0..4 {
        if 4 * j + 2 < n {
            q[j] = p[2 * j] + p[2 * j + 1] * x2;
        } else if 4 * j < n {
            q[j] = p[2 * j];
        }
    }
    if n <= 4 {
        return q[0];
    }
    let x4 = x2 * x2;
    let lo = q[0] + q[1] * x4;
    if n <= 8 {
        return lo;
    }
    let hi = if n > 12 { q[2] + q[3] * x4 } else { q[2] };
    lo + hi * (x4 * x4)
}

/// As [`series`], by Horner's rule in f64 for both scalars, rounded to `T` once (for
/// f32 within ½ ulp of the truncated series). For the two series that [`super::sinc_alpha`]
/// evaluates side by side, for speed, not accuracy: the compiler packs two Horner
/// chains into one SIMD register. In f32 they fill two of its four lanes, and the
/// other two hold whatever the register held before; Horner's rule multiplies those by
/// θ² over and over, so at small θ they decay into the subnormal range, where every
/// further operation on them takes a microcode assist on x86 (LLVM issue 61002,
/// "Garbage in undemanded vector elements can cause fp performance drops"). Two f64
/// chains fill the register exactly. For f64 this is [`series`].
///
/// Measured with `rod_profile` (fastest of 20 chunks, alternating binaries): the f32
/// cantilever of 1,000 linear elements with rotation matrices took 648–683 → 615–640 µs
/// per step, after which setting flush-to-zero changed nothing; quadratic, cubic and
/// quaternion rods within noise; f64 the same instructions (callgrind). Every single
/// series stays in `T`: there the conversions only add latency (all series in f64
/// cost the f32 quadratic and cubic rods 2–4%).
#[inline(always)]
pub(super) fn series_wide<T: Real>(theta: T, cut: SeriesCut, coeffs: &[f64]) -> Option<T> {
    if theta.abs() >= c::<T>(cut.cutoff) {
        return None;
    }
    Some(horner_f64((theta * theta).to_f64(), cut, coeffs))
}

/// As [`series_sq`], by Horner's rule in f64 ([`series_wide`]).
#[inline(always)]
pub(super) fn series_sq_wide<T: Real>(theta_sq: T, cut: SeriesCut, coeffs: &[f64]) -> Option<T> {
    if theta_sq < c::<T>(cut.cutoff * cut.cutoff) {
        Some(horner_f64(theta_sq.to_f64(), cut, coeffs))
    } else {
        None
    }
}

/// Horner's rule on the first `cut.terms` of `coeffs` at x² = `x2` in f64, rounded to `T`.
#[inline(always)]
fn horner_f64<T: Real>(x2: f64, cut: SeriesCut, coeffs: &[f64]) -> T {
    c::<T>(
        coeffs[..cut.terms]
            .iter()
            .rev()
            .fold(0.0, |acc, &k| acc * x2 + k),
    )
}
