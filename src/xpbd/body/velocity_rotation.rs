//! The rotation part of the velocity update (Alg. 1 line 10) of a [`super::Body`]:
//! Log(Exp(a)·C) − a as Γ⁻¹(a)·Log(C) (26) plus the Baker–Campbell–Hausdorff remainder
//! where it exceeds round-off, with bounds that decide most cases without forming it.

use crate::lie::{LieGroup, Real};
use nalgebra::{UnitQuaternion, Vector3};

/// The rotation part of the velocity change of the velocity update (`Body::velocity_change`), times h:
/// Log(Exp(a)·C) − a for a = hΩ and the substep's correction product C, taken as
/// Γ⁻¹(a)·Log(C) (26) plus the BCH remainder r = Log(Exp(a)·C) − a − Γ⁻¹(a)·Log(C) where
/// |r| exceeds 64ε|a| (ε of `T`: the round-off of the full form in `T`), and without r
/// otherwise, so that round-off is not fed back. `full` forms Log(Exp(a)·C) − a in `T`;
/// it is called only where the bounds of [`bch_remainder_side`] do not decide.
///
/// Where [`Real::SUBNORMAL_SQUARES`] holds (f32), the bounds and the linear form are
/// evaluated on a and C widened to f64 (exactly), with ε still that of `T`, and the
/// result is rounded once to `T`. The bounds are products of degree up to six in
/// components that are round-off for a planar rod node (|a| ~ 1e-5, out-of-plane
/// components ~ 1e-14), which fall below f32's normal range, where an operation costs a
/// microcode assist of about 100 cycles on x86. Widened, they stay normal and cost what
/// they cost in f64. (The f32 form with its products scaled by powers of two instead
/// cost the velocity update of the f32 cantilever of 1,000 cubic elements 460k cycles
/// per step, against 275k in f64; `examples/rod_profile.rs`.)
#[inline(always)]
pub(super) fn rotation_change<T: Real>(
    a: &Vector3<T>,
    correction: &UnitQuaternion<T>,
    full: impl Fn() -> Vector3<T>,
) -> Vector3<T> {
    let noise = T::default_epsilon() * crate::lie::real::c::<T>(64.0);
    if !T::SUBNORMAL_SQUARES {
        return rotation_change_in(a, correction, noise, full);
    }
    let wide = |v: &Vector3<T>| v.map(|x| x.to_f64());
    let q = correction.quaternion();
    let q = UnitQuaternion::new_unchecked(nalgebra::Quaternion::new(
        q.w.to_f64(),
        q.i.to_f64(),
        q.j.to_f64(),
        q.k.to_f64(),
    ));
    rotation_change_in(&wide(a), &q, noise.to_f64(), || wide(&full())).map(crate::lie::real::c::<T>)
}

/// [`rotation_change`] evaluated in `W`, with the threshold `noise`·|a|.
#[inline(always)]
fn rotation_change_in<W: Real>(
    a: &Vector3<W>,
    correction: &UnitQuaternion<W>,
    noise: W,
    full: impl Fn() -> Vector3<W>,
) -> Vector3<W> {
    let threshold_sq = noise * noise * a.norm_squared();
    let linear = || {
        let c = <UnitQuaternion<W> as LieGroup<W>>::log(correction);
        gamma_inv_times(a, &c)
    };
    match bch_remainder_side(a, correction, threshold_sq) {
        Some(true) => full(),
        Some(false) => linear(),
        None => {
            let (full, linear) = (full(), linear());
            if (full - linear).norm_squared() > threshold_sq {
                full
            } else {
                linear
            }
        }
    }
}

/// Which side of the threshold √`threshold_sq` (64ε|a|) the BCH remainder
/// r = Log(Exp(a)·C) − a − Γ⁻¹(a)·Log(C) of [`rotation_change`] is certainly on,
/// from bounds alone: `Some(true)` above, `Some(false)` below, `None` if the bounds do
/// not decide (the caller then forms r and compares). The velocity update then forms
/// only the one formula it takes. The choice is the one the comparison makes, except
/// where the comparison would see only round-off of the difference above 64ε|a| (|a|
/// far below |c|, e.g. a pendulum at a turning point): "below" then takes the linear
/// form, as the rule intends (round-off is not fed back).
///
/// Every term of the Baker–Campbell–Hausdorff series of Log(Exp(â)Exp(ĉ)) beyond
/// â + ĉ is a nested bracket around [â, ĉ] = (a×c)^, so the terms of second and higher
/// order in c — r, the terms of first order being Γ⁻¹(a)c (26) — are bounded by
/// |c|·|c×a| times a series in |a| and |c|, led by (1/12)[ĉ,[ĉ,â]] = (1/12)·c×(c×a),
/// of size |c|·|c×a|/12 exactly (c ⊥ c×a). With |a| ≤ 0.1 and |c| ≤ 0.01 the higher
/// terms (of relative size ≲ 2|a| + |c|) and the estimate c ≈ 2·vec(C) (relative error
/// ≲ |c|²/12) keep |r| within a quarter of the leading term, hence:
/// * below: |c||c×a|/6 ≤ ¼·64ε|a| (e.g. c ∥ a, a planar motion: r = 0 exactly);
/// * above: |c||c×a|/12 > 8·64ε|a|, and sin∠(c, a) ≥ ¼ (so that the leading term is
///   not itself small against |c|²|a|/12, which bounds the rest).
///
/// Either margin is far beyond the round-off of the computed difference (a few ε|a|).
/// With ε of f32, "above" never decides (|c| ≤ 0.01 cannot give 8·64ε|a|).
#[inline]
fn bch_remainder_side<T: Real>(
    a: &Vector3<T>,
    correction: &UnitQuaternion<T>,
    threshold_sq: T,
) -> Option<bool> {
    let k = crate::lie::real::c::<T>;
    let q = correction.quaternion();
    let c = if q.w < T::zero() {
        -q.imag() * k(2.0)
    } else {
        q.imag() * k(2.0)
    };
    let ca = c.cross(a);
    let (aa, cc, caa) = (a.norm_squared(), c.norm_squared(), ca.norm_squared());
    if !(aa <= k(0.01) && cc <= k(1e-4)) {
        return None;
    }
    // (|c||c×a|/6)² ≤ (threshold/4)².
    if cc * caa * k(16.0) <= k(36.0) * threshold_sq {
        return Some(false);
    }
    // (|c||c×a|/12)² > (8·threshold)², sin²∠ ≥ 1/16.
    if caa * k(16.0) >= cc * aa && cc * caa > k(144.0 * 64.0) * threshold_sq {
        return Some(true);
    }
    None
}

/// Γ⁻¹(a)·c = c + ½ a×c + γ(|a|) a×(a×c) (27), as vectors.
#[inline(always)]
fn gamma_inv_times<T: Real>(a: &Vector3<T>, c: &Vector3<T>) -> Vector3<T> {
    let u = a.cross(c);
    let g = crate::lie::so3::gamma_inv_coeff_sq(a.norm_squared());
    c + u * crate::lie::real::c::<T>(0.5) + a.cross(&u) * g
}

#[cfg(test)]
mod tests {
    use super::{bch_remainder_side, gamma_inv_times, rotation_change, rotation_change_in};
    use crate::lie::real::c;
    use crate::lie::{LieGroup, Real};
    use nalgebra::{UnitQuaternion, Vector3};

    /// Uniform samples in [0, 1) (xorshift from `state`).
    fn uniform(mut state: u64) -> impl FnMut() -> f64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Components uniform in [−size/2, size/2).
    fn vector<T: Real>(next: &mut impl FnMut() -> f64, size: f64) -> Vector3<T> {
        let v = Vector3::new(next() - 0.5, next() - 0.5, next() - 0.5);
        v.map(|x| c::<T>(x * size))
    }

    /// Log(Exp(a)·C) − a, the full form of the velocity update.
    fn full<T: Real>(a: &Vector3<T>, q: &UnitQuaternion<T>) -> Vector3<T> {
        let e = <UnitQuaternion<T> as LieGroup<T>>::exp(a);
        <UnitQuaternion<T> as LieGroup<T>>::log(&(e * q)) - a
    }

    /// A vector c, sometimes nearly parallel to a (a small c×a), of size ~`size`.
    fn correction(next: &mut impl FnMut() -> f64, a: &Vector3<f64>, size: f64) -> Vector3<f64> {
        if next() < 0.3 {
            a * (size / a.norm()) + vector::<f64>(next, size * 1e-4)
        } else {
            vector::<f64>(next, size)
        }
    }

    /// Where the bounds of `bch_remainder_side` decide, the comparison of the remainder
    /// r = (Log(Exp(a)C) − a) − Γ⁻¹(a)Log(C) with the threshold decides alike. In f64
    /// with the thresholds of f64 (64ε|a|, with |c| ≤ 4|a|, so that the round-off of the
    /// full form, a few ε·max(|a|, |c|), stays below the bounds' margins of 4 and 8) and
    /// of f32 (as the f32 velocity update evaluates them: the round-off is then 10⁹
    /// times below the threshold), over magnitudes from 1e-7 to 0.3.
    #[test]
    fn bch_bounds_decide_as_the_remainder() {
        let mut next = uniform(0x2545_f491_4f6c_dd1d);
        for (eps, ratio) in [(f64::EPSILON, 4.0), (f32::EPSILON as f64, f64::INFINITY)] {
            let mut decided = [0usize; 3];
            let mut n = 0;
            while n < 20000 {
                let sa = 1e-7 * (0.3e7_f64).powf(next());
                let sc = 1e-7 * (0.3e7_f64).powf(next());
                let a = vector::<f64>(&mut next, sa);
                let cv = correction(&mut next, &a, sc);
                if cv.norm() > ratio * a.norm() {
                    continue;
                }
                n += 1;
                let q = <UnitQuaternion<f64> as LieGroup<f64>>::exp(&cv);
                let threshold_sq = (64.0 * eps).powi(2) * a.norm_squared();
                let linear =
                    gamma_inv_times(&a, &(<UnitQuaternion<f64> as LieGroup<f64>>::log(&q)));
                let above = (full(&a, &q) - linear).norm_squared() > threshold_sq;
                let side = bch_remainder_side(&a, &q, threshold_sq);
                if let Some(side) = side {
                    assert_eq!(side, above, "{a} {cv}");
                }
                decided[match side {
                    None => 0,
                    Some(false) => 1,
                    Some(true) => 2,
                }] += 1;
            }
            // Every outcome occurs (with ε of f32, "above" never decides: the docs).
            assert!(decided[0] > 0 && decided[1] > 0, "{decided:?}");
            assert!(decided[2] > 0 || eps > 1e-10, "{decided:?}");
        }
    }

    /// The f32 velocity change (bounds and linear form in f64) is the f64 reference on
    /// the same inputs within the threshold it applies, 64ε|a| (the remainder it may
    /// leave out), plus the f32 round-off of the full form where it takes that,
    /// 4ε(|a| + |c|), and the final rounding.
    #[test]
    fn f32_rotation_change_is_the_f64_value_within_its_threshold() {
        let mut next = uniform(0x9e37_79b9_7f4a_7c15);
        let eps = f32::EPSILON as f64;
        for _ in 0..20000 {
            let sa = 1e-6 * (0.1e6_f64).powf(next());
            let sc = 1e-6 * (1e4_f64).powf(next());
            let a = vector::<f32>(&mut next, sa);
            let a64 = a.map(f64::from);
            let cv = correction(&mut next, &a64, sc).map(|x| x as f32);
            let q = <UnitQuaternion<f32> as LieGroup<f32>>::exp(&cv);
            let d = rotation_change(&a, &q, || full(&a, &q)).map(f64::from);
            let q64 = UnitQuaternion::new_normalize(q.into_inner().cast::<f64>());
            let reference =
                rotation_change_in(&a64, &q64, 64.0 * f64::EPSILON, || full(&a64, &q64));
            let bound = 64.0 * eps * a64.norm()
                + 4.0 * eps * (a64.norm() + cv.map(f64::from).norm())
                + eps * reference.norm();
            assert!((d - reference).norm() <= bound, "{a} {cv}: {d} {reference}");
        }
    }

    /// Regression (subnormal assists in 9 of 10 velocity updates of the f32
    /// cantilever): for a rod node's a and c (in-plane ~1e-5, out-of-plane ~1e-11,
    /// ~1e-14), the f32 velocity change meets no subnormal (MXCSR flags DE, UE clear),
    /// where Γ⁻¹(a)c formed in f32 underflows (a_z·(a×c)_x ≈ 6e-39); the bounds decide
    /// (the full form is not formed) and the two agree to an ulp of |Γ⁻¹(a)c|.
    #[cfg(target_arch = "x86_64")]
    #[test]
    #[allow(deprecated)] // _mm_getcsr / _mm_setcsr: only to read and clear the flags
    fn planar_rod_node_velocity_update_makes_no_subnormals() {
        use std::arch::x86_64::{_mm_getcsr, _mm_setcsr};
        use std::hint::black_box;
        let a = black_box(Vector3::new(
            6.546_584_2e-6_f32,
            7.539_093e-12,
            1.103_965_4e-14,
        ));
        let cv = black_box(Vector3::new(
            9.881_637e-6_f32,
            -1.884_772_7e-11,
            -9.571_112e-14,
        ));
        let q = <UnitQuaternion<f32> as LieGroup<f32>>::exp(&cv);
        let c_log = <UnitQuaternion<f32> as LieGroup<f32>>::log(&q);
        let flags = 0x12; // MXCSR DE (denormal operand) | UE (underflow)

        // SAFETY: reads and clears the status flags only.
        let run = |f: &dyn Fn() -> Vector3<f32>| unsafe {
            _mm_setcsr(_mm_getcsr() & !0x3f);
            let r = black_box(f());
            (r, _mm_getcsr() & flags)
        };
        let (wide, wide_flags) =
            run(&|| rotation_change(&a, &q, || panic!("the bounds decide this case")));
        let (narrow, narrow_flags) = run(&|| gamma_inv_times(&a, &c_log));
        assert_eq!(wide_flags, 0, "the f32 velocity change met a subnormal");
        assert_ne!(narrow_flags, 0, "the case no longer underflows in f32");
        assert!((wide - narrow).norm() <= f32::EPSILON * wide.norm());
    }
}
