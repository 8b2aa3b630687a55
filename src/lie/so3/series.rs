//! Truncated Taylor series of the SO(3) coefficient functions (sinc, α, β, Γ⁻¹, …),
//! below the per-precision cut-offs of [`Real`] ([`SeriesCut`]), by Estrin's scheme or
//! Horner's rule ([`poly`]).

use crate::lie::fma::fmadd;
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

/// Σₖ cₖ xᵏ over `coeffs` (c₀ first) in `T`, the terms first cut to those that matter
/// at x ([`short_terms`]): by [`estrin`] in f64 for 4 to 16 terms, otherwise by Horner's
/// rule. In f32 ([`Real::SUBNORMAL_SQUARES`]) always by Horner's rule: Estrin's scheme
/// forms x², x⁴, … explicitly, and at the small rotations of rods (x = θ² ≈ 1e-10) x⁴
/// would be subnormal, each product with it a microcode assist.
#[inline(always)]
pub(crate) fn poly<T: Real>(x: T, coeffs: &[f64]) -> T {
    let coeffs = short_terms(x, coeffs);
    if !T::SUBNORMAL_SQUARES && (4..=16).contains(&coeffs.len()) {
        return estrin(x, coeffs);
    }
    horner(x, coeffs)
}

/// Horner's rule in `T`, from the last coefficient (the first step c·x + c′ of a sum
/// started at 0 gives the same value for finite x, one multiplication later).
#[inline(always)]
fn horner<T: Real>(x: T, coeffs: &[f64]) -> T {
    let Some((&last, rest)) = coeffs.split_last() else {
        return T::zero();
    };
    let mut acc = c::<T>(last);
    for &k in rest.iter().rev() {
        acc = fmadd(acc, x, c::<T>(k));
    }
    acc
}

/// The leading terms of `coeffs` that a series in x = θ² needs at `x`:
/// [`Real::SERIES_SHORT_TIERS`] gives, for |x| below each bound, a number of terms whose
/// omitted tail is below ε/16 of the leading coefficient for every series of this
/// module (tested: `short_tiers_drop_only_round_off`); above the last bound, all of
/// `coeffs`. A rod's elements relate nodes a fraction of a degree apart, where two
/// terms do what ten did (the f32 series are summed by Horner's rule, whose chain of
/// dependent multiply-adds is the latency of every term).
#[inline(always)]
fn short_terms<T: Real>(x: T, coeffs: &[f64]) -> &[f64] {
    for &(bound, terms) in T::SERIES_SHORT_TIERS {
        if coeffs.len() <= terms {
            break;
        }
        if x.abs() < c::<T>(bound) {
            return &coeffs[..terms];
        }
    }
    coeffs
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
            p[j] = fmadd(k(2 * j + 1), x, k(2 * j));
        } else if 2 * j < n {
            p[j] = k(2 * j);
        }
    }
    let x2 = x * x;
    let mut q = [T::zero(); 4];
    for j in 0..4 {
        if 4 * j + 2 < n {
            q[j] = fmadd(p[2 * j + 1], x2, p[2 * j]);
        } else if 4 * j < n {
            q[j] = p[2 * j];
        }
    }
    if n <= 4 {
        return q[0];
    }
    let x4 = x2 * x2;
    let lo = fmadd(q[1], x4, q[0]);
    if n <= 8 {
        return lo;
    }
    let hi = if n > 12 { fmadd(q[3], x4, q[2]) } else { q[2] };
    fmadd(hi, x4 * x4, lo)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lie::so3::{
        ALPHA_PRIME_SERIES, ALPHA_SERIES, ASIN_TAYLOR, ATAN_TAYLOR, BETA_PRIME_SERIES, BETA_SERIES,
        GAMMA_INV_SERIES, SINC_SERIES,
    };

    /// Every coefficient table summed by [`poly`] in `T`.
    fn tables<T: Real>() -> [(&'static str, &'static [f64]); 9] {
        [
            ("sinc", &SINC_SERIES),
            ("alpha", &ALPHA_SERIES),
            ("beta", &BETA_SERIES),
            ("gamma_inv", &GAMMA_INV_SERIES),
            ("alpha_prime", &ALPHA_PRIME_SERIES),
            ("beta_prime", &BETA_PRIME_SERIES),
            ("atan_taylor", &ATAN_TAYLOR),
            ("asin_taylor", &ASIN_TAYLOR),
            ("atan_poly", T::ATAN_POLY),
        ]
    }

    /// The terms a tier drops are below ε/16 of the leading coefficient at the
    /// tier's bound, summed in magnitude (a bound on the tail whatever its signs),
    /// for every table; and the tiers are ordered (a larger bound, more terms).
    fn short_tiers_drop_only_round_off<T: Real>() {
        let eps = T::default_epsilon().to_f64();
        let mut last = (0.0, 0);
        for &(bound, terms) in T::SERIES_SHORT_TIERS {
            assert!(
                bound > last.0 && terms > last.1,
                "{}: tiers ordered",
                T::NAME
            );
            last = (bound, terms);
            for (name, coeffs) in tables::<T>() {
                let tail: f64 = (terms..coeffs.len())
                    .map(|k| coeffs[k].abs() * bound.powi(k as i32))
                    .sum();
                assert!(
                    tail <= eps / 16.0 * coeffs[0].abs(),
                    "{} {name}: {terms} terms below x = {bound:e} leave {tail:e}",
                    T::NAME
                );
            }
        }
    }

    /// Below each tier's bound the short sum is the full one to within the rounding of
    /// the two evaluations: Horner's rule adds at most ~1.5ε each ([`SeriesCut`]'s
    /// measurement), the dropped tail less than ε/16, so 4ε relative bounds the
    /// difference with room.
    fn short_sums_match_full_sums<T: Real>() {
        let eps = T::default_epsilon();
        for (name, coeffs) in tables::<T>() {
            for &(bound, _) in T::SERIES_SHORT_TIERS {
                for k in 0..=64 {
                    // x from the bound down over 16 binades, just below it first.
                    let x = c::<T>(bound * 0.999 * 2f64.powf(-(k as f64) / 4.0));
                    let short = poly(x, coeffs);
                    let full = horner(x, coeffs);
                    let tol = c::<T>(4.0) * eps * full.abs();
                    assert!(
                        (short - full).abs() <= tol,
                        "{} {name} at x = {x}: {short} against {full}",
                        T::NAME
                    );
                }
            }
        }
    }

    /// Only f32 has tiers (f64's are empty: [`Real::SERIES_SHORT_TIERS`]); the checks
    /// are generic so that any tier given to f64 would be checked the same way.
    #[test]
    fn short_tiers_drop_only_round_off_f32() {
        assert!(!f32::SERIES_SHORT_TIERS.is_empty());
        short_tiers_drop_only_round_off::<f32>();
        short_sums_match_full_sums::<f32>();
    }

    /// Horner's rule from the last coefficient is the sum started at zero, bit for
    /// bit, for finite x.
    #[test]
    fn horner_from_the_last_coefficient_is_the_sum_from_zero() {
        for x in [0.0f32, -0.0, 1e-30, 3e-4, 0.2, 1.7, -0.6] {
            for (_, coeffs) in tables::<f32>() {
                let from_zero = coeffs
                    .iter()
                    .rev()
                    .fold(0.0f32, |a, &k| fmadd(a, x, k as f32));
                assert_eq!(horner(x, coeffs).to_bits(), from_zero.to_bits());
            }
        }
    }
}
