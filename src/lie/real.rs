//! The scalar types the library runs on, with the per-precision constants that the
//! Lie-group series, the finite-difference checks and input validation depend on.
//!
//! Everything in the crate is generic over `T: Real`, which is
//! `nalgebra::RealField + Copy` plus a handful of constants chosen separately for `f32`
//! and `f64`. The choice of each constant is justified next to its value below.

use nalgebra::RealField;

/// Where one coefficient function of [`crate::lie::so3`] switches from its Taylor series
/// (used for |θ| < `cutoff`) to its closed form, and how many series terms it sums.
///
/// Each function gets its own pair: the cut-off sits where the closed form's
/// cancellation has become small (its sum of magnitudes over its result ≲ 5, so a few ε),
/// and `terms` is the smallest count whose first omitted term (for γ, whose series has
/// positive terms, the whole tail) is below ε/16 relative at the cut-off. Horner's rule
/// on the truncated series then adds ≤ ~1.5ε (measured), and every coefficient is within
/// a few ε of its exact value on [0, π].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeriesCut {
    /// Angle (rad): the series is used for |θ| below it, the closed form at and above.
    pub cutoff: f64,
    /// Number of series terms summed (in powers of θ²).
    pub terms: usize,
}

impl SeriesCut {
    /// A cut-off (rad) and a number of terms.
    pub const fn new(cutoff: f64, terms: usize) -> Self {
        Self { cutoff, terms }
    }
}

/// A floating-point scalar usable by every type in this crate: `f32` or `f64`.
///
/// This is `nalgebra::RealField + Copy` (simba 0.10) plus constants whose right value
/// depends on the precision. Implemented for `f32` and `f64` only.
pub trait Real: RealField + Copy + Send + Sync + std::fmt::Display + 'static {
    /// Short name used in outputs (`"f32"` or `"f64"`).
    const NAME: &'static str;

    /// Series cut-off and length for [`crate::lie::so3::sinc`] (sin θ/θ).
    const SERIES_SINC: SeriesCut;
    /// Series cut-off and length for [`crate::lie::so3::alpha`] ((1 − cos θ)/θ²).
    const SERIES_ALPHA: SeriesCut;
    /// Series cut-off and length for [`crate::lie::so3::beta`] ((θ − sin θ)/θ³).
    const SERIES_BETA: SeriesCut;
    /// Series cut-off and length for [`crate::lie::so3::gamma_inv_coeff`]
    /// (1/θ² − (1 + cos θ)/(2θ sin θ)).
    const SERIES_GAMMA_INV: SeriesCut;
    /// Series cut-off and length for [`crate::lie::so3::alpha_prime_over_theta`].
    const SERIES_ALPHA_PRIME: SeriesCut;
    /// Series cut-off and length for [`crate::lie::so3::beta_prime_over_theta`].
    const SERIES_BETA_PRIME: SeriesCut;
    /// A shorter series for [`crate::lie::so3::gamma_inv_coeff`] at small angles (the
    /// joints' rotation errors): below this cut-off fewer terms of the same series reach
    /// the same accuracy.
    const SERIES_GAMMA_INV_SHORT: SeriesCut;
    /// A medium series for [`crate::lie::so3::gamma_inv_coeff`] between
    /// [`Self::SERIES_GAMMA_INV_SHORT`] and this cut-off (taken from θ², no square
    /// root): fewer terms of the same series than [`Self::SERIES_GAMMA_INV`] up to 1 rad.
    const SERIES_GAMMA_INV_MID: SeriesCut;
    /// The shortest series for [`crate::lie::so3::gamma_inv_coeff`], below this
    /// cut-off: the joints' rotation errors (10⁻⁶–10⁻³ rad) need only its first terms,
    /// and a shorter Horner chain is a shorter wait in the projections, each of which
    /// depends on the one before.
    const SERIES_GAMMA_INV_TINY: SeriesCut;
    /// Cut-off in the half angle θ/2 and length of the series of sin(θ/2)/(θ/2) and
    /// (1 − cos(θ/2))/(θ/2)² in the quaternion Exp for the smallest rotations (the
    /// projections' corrections), where their first terms reach the same accuracy as
    /// [`Self::SERIES_SINC`] and [`Self::SERIES_ALPHA`].
    const SERIES_EXP_TINY: SeriesCut;
    /// Cut-off in y = |sin θ| (matrix Log) or y = |sin(θ/2)| (quaternion Log), and
    /// length of the Taylor series 1 + y²/6 + 3y⁴/40 + … of asin(y)/y, with which the
    /// Logs of the smallest rotations (θ < π/2) take θ/sin θ from |sin θ|² alone: no
    /// division by cos θ and no atan polynomial.
    const SERIES_ASIN_TINY: SeriesCut;
    /// Cut-off and length of the polynomial [`Self::ATAN_POLY`] for atan(x)/x, in
    /// x = tan θ (matrix Log) or x = tan(θ/2) (quaternion Log): at and below the
    /// cut-off tan(π/8) the Logs take θ from it instead of `atan2`, and need no square
    /// root.
    const SERIES_ATAN: SeriesCut;
    /// Cut-off (in x, as [`Self::SERIES_ATAN`]) and length of the Taylor series
    /// 1 − x²/3 + x⁴/5 − … of atan(x)/x that replaces [`Self::ATAN_POLY`] below it: the
    /// small rotations of the bodies' substep increments and corrections need only its
    /// first terms.
    const SERIES_ATAN_SHORT: SeriesCut;
    /// Coefficients (of x⁰, x², x⁴, …) of a near-minimax polynomial for atan(x)/x on
    /// |x| ≤ tan(π/8), accurate to a small fraction of ε (the fit and its measured error
    /// are documented at its definition in `lie::so3`). Used by the Logs' small-angle
    /// path and by their `atan2` for larger angles.
    const ATAN_POLY: &'static [f64];

    /// Short series for small arguments: `(bound, terms)` pairs, by increasing bound.
    /// Every truncated Taylor series of [`crate::lie::so3`] (and the Logs' atan and
    /// asin polynomials), evaluated at x = θ² with |x| below a bound, sums at most that
    /// many leading terms: there the omitted ones add up to less than ε/16 of the
    /// leading coefficient, so the value is the longer series' to within its rounding.
    /// Above the last bound the series' own [`SeriesCut::terms`] are summed.
    const SERIES_SHORT_TIERS: &'static [(f64, usize)];

    /// Whether joints evaluate their values C (position error, rotation error, relative
    /// position: the joint module's `JointKinematics`) in `f64` from the bodies' compensated
    /// state (the exact position p + p_lo and the orientation as base·since-base), rather
    /// than from the pose rounded to `Self`. A value rounded to ε·|p| is projected away
    /// every substep, which turns its rounding into a velocity of ε·|p|/h: negligible in
    /// f64, but 0.06 m/s in f32 for |p| = 1 m and h = 1 µs, a noise that heats the system.
    const WIDE_CONSTRAINT_VALUES: bool;

    /// Whether squares compared in the solver's stopping and branching tests (sums of
    /// squares of round-off-sized rotation components, and their products, of degree up
    /// to six in quantities of size ε) can fall below the smallest normal number of
    /// `Self`. Where they can, those tests first scale their vectors by an exact power
    /// of two (`inverse_binade`: the rotational prediction and the small SPD solves) or
    /// are evaluated on the values widened to f64 (the velocity update's choice of
    /// its rotation formula), since on x86 every operation with a subnormal result
    /// costs a microcode assist of about 100 cycles.
    const SUBNORMAL_SQUARES: bool;

    /// Half-width (rad) of the window below π in which the matrix Log takes the rotation
    /// axis from the symmetric part of R instead of its skew part. The skew part carries
    /// sin θ·axis, so its relative accuracy degrades like ε/sin θ near π.
    fn log_pi_window() -> Self;

    /// Default central-difference step for [`crate::lie::numdiff`].
    fn fd_step() -> Self;

    /// Relative tolerance that central differences with [`Real::fd_step`] meet on this
    /// library's Jacobians, measured as `|J_fd − J| ≤ tol · max(1, max|J|)`.
    fn fd_tolerance() -> Self;

    /// Largest `‖RᵀR − I‖_F` accepted by `from_matrix` before the input is rejected as
    /// not a rotation. Accepted matrices are re-orthonormalised.
    fn orthogonality_tolerance() -> Self;

    /// Lossless widening to `f64` (for output).
    fn to_f64(self) -> f64;

    /// Conversion from an `f64` constant (rounds to nearest for `f32`). Named `cast`
    /// rather than `from_f64` to avoid clashing with `num_traits::FromPrimitive`.
    fn cast(x: f64) -> Self;
}

impl Real for f64 {
    const NAME: &'static str = "f64";
    /// No cancellation in sin θ/θ; the series only avoids 0/0. First omitted term at
    /// 0.1: θ¹⁰/11! = 2.5e-18 = 0.011ε relative.
    const SERIES_SINC: SeriesCut = SeriesCut::new(0.1, 5);
    /// No cancellation in ½(sin(θ/2)/(θ/2))²; the series only avoids 0/0. First omitted
    /// term at 0.1: θ¹⁰/12! = 4.2e-19 = 0.002ε relative.
    const SERIES_ALPHA: SeriesCut = SeriesCut::new(0.1, 5);
    /// θ − sin θ cancels: (θ + |sin θ|)/(θ − sin θ) is 5.0 at 1.5 rad and grows like
    /// 12/θ² below; at 1.5 the closed form is good to ~2ε (measured ≤ 1.4ε). First
    /// omitted term at 1.5: θ²⁰/23! = 0.004ε relative.
    const SERIES_BETA: SeriesCut = SeriesCut::new(1.5, 10);
    /// 1/θ² − cot(θ/2)/(2θ) cancels by a factor (sum of magnitudes / result) of 2.4 at
    /// 2.5 rad, 4.6 at 2 and ~24/θ² below. The series has positive terms with ratio
    /// → (θ/2π)² ≤ 0.16 at 2.5; the tail after 21 terms is ≤ 0.045ε relative there.
    const SERIES_GAMMA_INV: SeriesCut = SeriesCut::new(2.5, 21);
    /// (sin θ/θ − 2α)/θ² cancels by a factor > 2 everywhere below ~2.6 rad (~24/θ² near
    /// 0), so the series covers all of [0, π]; at 3.2 it has no cancellation. First
    /// omitted term at 3.2: 0.002ε relative.
    const SERIES_ALPHA_PRIME: SeriesCut = SeriesCut::new(3.2, 14);
    /// (α − 3β)/θ² cancels by a factor ≥ 4.7 on all of [0, 3.2] (~60/θ² near 0), so
    /// the series covers all of [0, π]. First omitted term at 3.2: 0.02ε relative.
    const SERIES_BETA_PRIME: SeriesCut = SeriesCut::new(3.2, 13);
    /// Ratio of successive terms ≤ 1.7e-4 at 0.1 rad; the tail after 5 terms is
    /// 6.3e-19 = 0.003ε relative there (after 4 it would be 11ε).
    const SERIES_GAMMA_INV_SHORT: SeriesCut = SeriesCut::new(0.1, 5);
    /// The tail after 11 terms is 0.008ε relative at 1 rad (after 10 it would be 0.3ε).
    const SERIES_GAMMA_INV_MID: SeriesCut = SeriesCut::new(1.0, 11);
    /// Below 5e-3 rad, 3 terms: the first omitted one, θ⁶/1209600, is 1.6e-19 = 0.0007ε
    /// relative to γ ≥ 1/12 there (the terms are positive and fall by more than 1e6 each).
    const SERIES_GAMMA_INV_TINY: SeriesCut = SeriesCut::new(5e-3, 3);
    /// θ/2 below 1e-4, 2 terms: sin x/x = 1 − x²/6 with the first omitted term
    /// x⁴/120 ≤ 8.3e-19 = 0.004ε; cos x = 1 − x²(½ − x²/24) with x²·x⁴/720 ≤ 1.4e-27
    /// omitted (both series alternate with decreasing terms).
    const SERIES_EXP_TINY: SeriesCut = SeriesCut::new(1e-4, 2);
    /// y ≤ 1e-3, 3 terms: the terms are positive and fall by more than 1e6 each, and the
    /// first omitted one, 5y⁶/112, is 4.5e-20 = 0.0002ε relative.
    const SERIES_ASIN_TINY: SeriesCut = SeriesCut::new(1e-3, 3);
    /// tan(π/8), with the degree-10 polynomial in x² (12 coefficients): largest relative
    /// error 7.1e-18 = 0.03ε on [0, tan(π/8)] (a Taylor series would need 20 terms).
    const SERIES_ATAN: SeriesCut = SeriesCut::new(
        crate::lie::so3::TAN_PI_8,
        crate::lie::so3::ATAN_POLY_F64.len(),
    );
    /// x ≤ 2⁻⁷, 4 terms: the series alternates with decreasing terms, so the first
    /// omitted one bounds the error, x⁸/9 ≤ 2⁻⁵⁶/9 = 0.007ε relative.
    const SERIES_ATAN_SHORT: SeriesCut = SeriesCut::new(1.0 / 128.0, 4);
    const ATAN_POLY: &'static [f64] = &crate::lie::so3::ATAN_POLY_F64;
    /// None: the f64 series are summed by Estrin's scheme, whose dependency chain is
    /// short whatever the number of terms, and the test for a tier cost more than the
    /// terms it saved (measured: the f64 cantilever of 1,000 cubic elements took 2–6 %
    /// longer per step with tiers at θ² < 2⁻²⁰ and 2⁻¹²).
    const SERIES_SHORT_TIERS: &'static [(f64, usize)] = &[];
    /// No: ε·|p|/h is 2e-10 m/s at |p| = 1 m and h = 1 µs.
    const WIDE_CONSTRAINT_VALUES: bool = false;
    /// No: ε⁶ = 1.2e-94 is far above the smallest normal f64, 2.2e-308.
    const SUBNORMAL_SQUARES: bool = false;
    /// 0.5 rad: outside it the skew-part axis is accurate to ε/sin(π−0.5) ≈ 2ε.
    fn log_pi_window() -> Self {
        0.5
    }
    /// 1e-5 ≈ ε^(1/3) balances the O(h²) truncation and O(ε/h) round-off of central
    /// differences.
    fn fd_step() -> Self {
        1e-5
    }
    /// (h² + ε/h) ≈ 1.2e-10 at unit curvature; third derivatives of Log grow like
    /// 1/(π−θ)² near π, and 1e-7 held over 10⁶ random cases with θ ≤ π − 1e-3.
    fn fd_tolerance() -> Self {
        1e-7
    }
    /// √ε·10 ≈ 1.5e-7: accepts matrices that went through a text format with ~8
    /// significant digits, rejects anything that is visibly not a rotation.
    fn orthogonality_tolerance() -> Self {
        1.5e-7
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn cast(x: f64) -> Self {
        x
    }
}

impl Real for f32 {
    const NAME: &'static str = "f32";
    /// As for f64 (no cancellation); 1.0 rad because the f32 series is short. First
    /// omitted term at 1.0: 1/13! = 0.002ε relative.
    const SERIES_SINC: SeriesCut = SeriesCut::new(1.0, 6);
    /// As for f64. First omitted term at 1.0: 1/12! = 0.04ε relative.
    const SERIES_ALPHA: SeriesCut = SeriesCut::new(1.0, 5);
    /// As for f64 (cancellation factor 5.0 at 1.5 rad). First omitted term at 1.5:
    /// θ¹²/15! = 0.006ε relative.
    const SERIES_BETA: SeriesCut = SeriesCut::new(1.5, 6);
    /// As for f64 (cancellation factor 2.4 at 2.5 rad). Tail after 10 terms at 2.5:
    /// ≤ 0.053ε relative.
    const SERIES_GAMMA_INV: SeriesCut = SeriesCut::new(2.5, 10);
    /// As for f64. First omitted term at 3.2: 0.005ε relative.
    const SERIES_ALPHA_PRIME: SeriesCut = SeriesCut::new(3.2, 9);
    /// As for f64. First omitted term at 3.2: 0.04ε relative.
    const SERIES_BETA_PRIME: SeriesCut = SeriesCut::new(3.2, 8);
    /// As for f64. Tail after 3 terms at 0.1 rad: 1e-11 = 1e-4ε relative (after 2 it
    /// would be 0.34ε).
    const SERIES_GAMMA_INV_SHORT: SeriesCut = SeriesCut::new(0.1, 3);
    /// The tail after 6 terms is 0.001ε relative at 1 rad (after 5 it would be 0.05ε).
    const SERIES_GAMMA_INV_MID: SeriesCut = SeriesCut::new(1.0, 6);
    /// Below 0.03 rad, 2 terms: the first omitted one, θ⁴/30240, is 3.2e-10 = 0.003ε
    /// relative to γ ≥ 1/12 there.
    const SERIES_GAMMA_INV_TINY: SeriesCut = SeriesCut::new(0.03, 2);
    /// θ/2 below 0.01, 2 terms: first omitted term of sin x/x, x⁴/120 ≤ 8.3e-11 =
    /// 0.0007ε; of cos x, x⁶/720 ≤ 1.4e-15.
    const SERIES_EXP_TINY: SeriesCut = SeriesCut::new(0.01, 2);
    /// y ≤ 0.03, 3 terms: first omitted term 5y⁶/112 = 3.3e-11 = 0.0003ε relative.
    const SERIES_ASIN_TINY: SeriesCut = SeriesCut::new(0.03, 3);
    /// tan(π/8), with the degree-4 polynomial in x² (6 coefficients): largest relative
    /// error 2.5e-9 = 0.02ε on [0, tan(π/8)].
    const SERIES_ATAN: SeriesCut = SeriesCut::new(
        crate::lie::so3::TAN_PI_8,
        crate::lie::so3::ATAN_POLY_F32.len(),
    );
    /// x ≤ 2⁻⁷, 2 terms: first omitted term x⁴/5 ≤ 2⁻²⁸/5 = 0.006ε relative.
    const SERIES_ATAN_SHORT: SeriesCut = SeriesCut::new(1.0 / 128.0, 2);
    const ATAN_POLY: &'static [f64] = &crate::lie::so3::ATAN_POLY_F32;
    /// θ² < 2⁻¹⁶ (θ < 0.0039 rad): 2 terms; θ² < 2⁻⁸ (θ < 0.0625 rad): 4 terms. The
    /// largest omitted tail of any series at these bounds is below ε/16 relative
    /// (tested). The f32 series are summed by Horner's rule (Estrin's scheme would
    /// form subnormal powers of small θ²), one dependent multiply-add per term: at the
    /// relative rotations of a rod's nodes (θ ~ 1e-3) the 8 to 10 terms of α′, β′
    /// and Γ⁻¹ were a latency the f64 code does not have.
    const SERIES_SHORT_TIERS: &'static [(f64, usize)] = &[(1.0 / 65536.0, 2), (1.0 / 256.0, 4)];
    /// Yes: ε·|p|/h is 0.06 m/s at |p| = 1 m and h = 1 µs; in the triple pendulum with
    /// 1000 substeps per 1 ms step that noise raised the energy by up to 0.43 J
    /// (5.6e-3 of |E₀|) within 2 s. The values are small differences of nearly equal
    /// poses, so f64 arithmetic on the exact state makes them accurate to ε_f64·|p|, and
    /// rounding the small result to f32 costs only ε relative of it.
    const WIDE_CONSTRAINT_VALUES: bool = true;
    /// Yes: ε⁶ = 2.9e-42 is below the smallest normal f32, 1.2e-38. In the f32
    /// cantilever of 1,000 elements 98.5 % of the node predictions and 25 % of the
    /// velocity updates produced subnormals before the scaling.
    const SUBNORMAL_SQUARES: bool = true;
    /// 0.5 rad, as for f64; a 1e-2 window left 4e-6 errors in f32.
    fn log_pi_window() -> Self {
        0.5
    }
    /// 1e-3: with ε = 1.2e-7 the round-off ε/h is 1.2e-4 and the truncation h²/6 is
    /// 2e-7, so the error is dominated by round-off; larger steps straddle the Log
    /// branch cut near π.
    fn fd_step() -> Self {
        1e-3
    }
    /// 2e-3 ≈ 16·ε/h: the round-off term of a central difference, times the
    /// conditioning of the functions checked; held over 10⁶ random cases with
    /// θ ≤ π − 1e-3.
    fn fd_tolerance() -> Self {
        2e-3
    }
    /// √ε·10 ≈ 3.5e-3.
    fn orthogonality_tolerance() -> Self {
        3.5e-3
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn cast(x: f64) -> Self {
        x as f32
    }
}

/// `x` as the `f64` of its shortest decimal form in `T`, for messages: an f32 time of
/// 8 steps of 0.001 prints as 0.008, not as its exact value widened to f64,
/// 0.00800000037997961. (For f64 this is `x` itself.)
pub(crate) fn decimal_f64<T: Real>(x: T) -> f64 {
    x.to_string().parse().unwrap_or_else(|_| x.to_f64())
}

/// Converts an `f64` constant to `T` (the crate's one place for numeric constants).
#[inline(always)]
pub fn c<T: Real>(x: f64) -> T {
    <T as Real>::cast(x)
}

/// The power of two 2⁻ᵉ for the binary exponent e of `x` (|x|·2⁻ᵉ ∈ [1, 2)), with e
/// clamped to [−`limit`, `limit`]; 1 for a zero or non-finite `x`, and always 1 in
/// `f64`. Scaling by it is exact (no rounding) while the products stay in the normal
/// range, so comparisons of sums of squares of scaled vectors decide as the unscaled
/// ones would, but without the underflow of squares of tiny components: in `f32` a
/// subnormal result costs a microcode assist of ~100 cycles on x86 (the rod's nodes,
/// whose out-of-plane rotation components are round-off, made every step of the f32
/// cantilever of 1,000 linear to cubic elements 5–12 % slower, `examples/rod_profile.rs`
/// at low load). Where [`Real::SUBNORMAL_SQUARES`] is false (`f64`, whose subnormals
/// start at 2.2e-308, out of reach of these squares) it is 1, which the compiler folds
/// away (x·1 = x), so that code is unchanged. `limit` ≤ 60 keeps the scale and its
/// square inside `f32`'s range.
#[inline(always)]
pub(crate) fn inverse_binade<T: Real>(x: T, limit: i64) -> T {
    if !T::SUBNORMAL_SQUARES {
        return T::one();
    }
    if is_f32::<T>() {
        // SAFETY: T is f32 (checked above), so the copies are identities.
        let x: f32 = unsafe { std::mem::transmute_copy(&x) };
        let s = inverse_binade_f32(x, limit);
        // SAFETY: as above (T is f32).
        return unsafe { std::mem::transmute_copy(&s) };
    }
    let bits = x.to_f64().to_bits();
    let e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    if x == T::zero() || e == 1024 {
        return T::one();
    }
    let e = e.clamp(-limit, limit);
    c(f64::from_bits(((1023 - e) as u64) << 52))
}

/// Whether `T` is f32 (a type test folded at compile time), for code paths written
/// for one precision.
#[inline(always)]
pub(crate) fn is_f32<T: 'static>() -> bool {
    std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>()
}

/// Whether `T` is f64, as [`is_f32`] (used by the x86-64 kernels only).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn is_f64<T: 'static>() -> bool {
    std::any::TypeId::of::<T>() == std::any::TypeId::of::<f64>()
}

/// [`inverse_binade`] on the bits of an `f32`: the same value (a normal f32 has the
/// exponent of its f64 widening; a subnormal one, below 2⁻¹²⁶, is clamped to −`limit`
/// either way), without the two conversions through f64 on the dependency chain of
/// every scaled comparison.
#[inline(always)]
fn inverse_binade_f32(x: f32, limit: i64) -> f32 {
    let e = ((x.to_bits() >> 23) & 0xff) as i64 - 127;
    if x == 0.0 || e == 128 {
        return 1.0;
    }
    let e = e.clamp(-limit, limit);
    f32::from_bits(((127 - e) as u32) << 23)
}

/// The largest absolute entry of a 3-vector, max(|x|, |y|, |z|) (NaN-ignoring, as
/// `f64::max`).
#[inline(always)]
pub(crate) fn abs_max3<T: Real>(v: &nalgebra::Vector3<T>) -> T {
    v.x.abs().max(v.y.abs()).max(v.z.abs())
}

/// A quaternion of `T` widened to `f64` and normalised there, so that a norm error of the
/// `T` value (≈ ε_T) does not scale the vectors it rotates. Used where constraint values
/// are evaluated in f64 ([`Real::WIDE_CONSTRAINT_VALUES`]).
#[inline]
pub(crate) fn unit_quaternion_f64<T: Real>(
    q: &nalgebra::Quaternion<T>,
) -> nalgebra::UnitQuaternion<f64> {
    nalgebra::UnitQuaternion::new_normalize(nalgebra::Quaternion::new(
        q.w.to_f64(),
        q.i.to_f64(),
        q.j.to_f64(),
        q.k.to_f64(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`inverse_binade`] through f64, as it is computed for any `T` without the f32
    /// shortcut.
    fn through_f64(x: f32, limit: i64) -> f32 {
        let bits = f64::from(x).to_bits();
        let e = ((bits >> 52) & 0x7ff) as i64 - 1023;
        if x == 0.0 || e == 1024 {
            return 1.0;
        }
        let e = e.clamp(-limit, limit);
        f64::from_bits(((1023 - e) as u64) << 52) as f32
    }

    /// The f32 shortcut gives the f64 route's value bit for bit: every exponent
    /// (subnormals, zero, infinities and NaN included), both signs, several
    /// mantissas, both limits the solver uses.
    #[test]
    fn inverse_binade_f32_matches_the_route_through_f64() {
        for exponent in 0u32..=255 {
            for mantissa in [0u32, 1, 0x2a_aaaa, 0x7f_ffff] {
                for sign in [0u32, 1] {
                    let x = f32::from_bits(sign << 31 | exponent << 23 | mantissa);
                    for limit in [30, 60] {
                        assert_eq!(
                            inverse_binade(x, limit).to_bits(),
                            through_f64(x, limit).to_bits(),
                            "{x:e}, limit {limit}"
                        );
                    }
                }
            }
        }
    }

    /// Messages show an f32 time as typed: 8 steps of 0.001 are 0.008 s, not
    /// 0.00800000037997961 s (a new user's report); f64 values are unchanged.
    #[test]
    fn decimal_f64_is_the_shortest_decimal() {
        let t = 8.0_f32 * 0.001_f32;
        assert_eq!(super::decimal_f64(t), 0.008);
        assert_ne!(t.to_f64(), 0.008);
        let x = 8.0_f64 * 0.001;
        assert_eq!(super::decimal_f64(x), x);
        assert!(super::decimal_f64(f32::NAN).is_nan());
    }
}
