//! Truncated Taylor series of the SO(3) coefficient functions (sinc, α, β, Γ⁻¹, …) by
//! Horner's rule, below the per-precision cut-offs of [`Real`] ([`SeriesCut`]).

use crate::lie::real::{c, Real, SeriesCut};

/// Horner's rule in θ² on the first `cut.terms` of `coeffs` (the series coefficients of
/// θ⁰, θ², θ⁴, …), or `None` when |θ| ≥ `cut.cutoff` and the closed form is to be used.
#[inline(always)]
pub(super) fn series<T: Real>(theta: T, cut: SeriesCut, coeffs: &[f64]) -> Option<T> {
    if theta.abs() >= c::<T>(cut.cutoff) {
        return None;
    }
    Some(horner_sq(theta * theta, cut, coeffs))
}

/// As [`series`], from θ² (no square root): Horner's rule on the first `cut.terms` of
/// `coeffs` at x² = `theta_sq`, or `None` when θ² ≥ `cut.cutoff`² (and for a NaN θ²).
#[inline(always)]
pub(crate) fn series_sq<T: Real>(theta_sq: T, cut: SeriesCut, coeffs: &[f64]) -> Option<T> {
    if theta_sq < c::<T>(cut.cutoff * cut.cutoff) {
        Some(horner_sq(theta_sq, cut, coeffs))
    } else {
        None
    }
}

/// Horner's rule in `T` on the first `cut.terms` of `coeffs` at x² = `theta_sq`,
/// unchecked (the caller has checked θ² against the cut-off).
#[inline(always)]
fn horner_sq<T: Real>(theta_sq: T, cut: SeriesCut, coeffs: &[f64]) -> T {
    let mut acc = T::zero();
    for &k in coeffs[..cut.terms].iter().rev() {
        acc = acc * theta_sq + c::<T>(k);
    }
    acc
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
