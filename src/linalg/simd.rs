//! Runtime selection of the arithmetic path of the block-banded solver and of the
//! kernels built on it (private): the banded Cholesky factorisation and solves (and a
//! rod's assembly kernels, in the rod module) are compiled twice, once portable and
//! once for x86-64 CPUs with AVX2 and FMA (`#[target_feature]`), and the second is used
//! when the CPU has both (detected once per process).
//!
//! The two paths run the same operations in the same order; the FMA path rounds each
//! multiply-add once instead of twice, so results differ by round-off only. In f32 the
//! FMA path runs the block products of the factorisation and the solves on 8 lanes
//! (`simd_f32`: a 6-row column in one 256-bit register, where the generic code takes
//! 4 + 2 lanes; the band stores f32 columns padded to 8,
//! [`PaddedBlockF32`](super::banded::PaddedBlockF32)), and in f64 on 4 + 2 lanes
//! (`simd_f64`: the compiler leaves the generic f64 kernels mostly scalar), both with
//! the same fused operations in the same order as the generic FMA code, so the results
//! do not change (except the f32 back substitution's off-diagonal sums, which run in
//! another order: `simd_f32::BackSubstitution`). Setting the environment variable
//! `LIE_XPBD_PORTABLE` (to anything) before the first solve forces the portable path,
//! e.g. to run the tests on both.

use crate::lie::Real;

/// Whether the AVX2 + FMA path is used: the CPU supports both and
/// `LIE_XPBD_PORTABLE` is not set. Detected on the first call, then cached.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[inline]
pub(crate) fn fma_enabled() -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    // 0: not yet detected, 1: portable, 2: AVX2 + FMA.
    static PATH: AtomicU8 = AtomicU8::new(0);
    match PATH.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let fma = std::env::var_os("LIE_XPBD_PORTABLE").is_none()
                && std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma");
            PATH.store(if fma { 2 } else { 1 }, Ordering::Relaxed);
            fma
        }
    }
}

/// y + a·b: one fused multiply-add on the FMA path (`F`), a multiply and an add on
/// the portable path (where `mul_add` would be a slow library call).
#[inline(always)]
pub(crate) fn madd<T: Real, const F: bool>(y: T, a: T, b: T) -> T {
    if F {
        a.mul_add(b, y)
    } else {
        y + a * b
    }
}

/// y − a·b, as [`madd`].
#[inline(always)]
pub(crate) fn msub<T: Real, const F: bool>(y: T, a: T, b: T) -> T {
    if F {
        (-a).mul_add(b, y)
    } else {
        y - a * b
    }
}

/// `b` reinterpreted as a `Y` (a kernel's view of a block whose type the caller knows to
/// be `Y` for this scalar, e.g. `T::BandBlock` as the padded f32 block when `T` is f32).
///
/// # Safety
/// `X` must have the layout of `Y` (checked for size in debug builds only).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn reinterpret<X, Y>(b: &X) -> &Y {
    debug_assert!(std::mem::size_of::<X>() == std::mem::size_of::<Y>());
    // SAFETY: X has Y's layout (caller).
    unsafe { &*(b as *const X).cast::<Y>() }
}

/// As [`reinterpret`], mutable.
///
/// # Safety
/// As [`reinterpret`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn reinterpret_mut<X, Y>(b: &mut X) -> &mut Y {
    debug_assert!(std::mem::size_of::<X>() == std::mem::size_of::<Y>());
    // SAFETY: as in reinterpret.
    unsafe { &mut *(b as *mut X).cast::<Y>() }
}

/// As [`reinterpret`], for a slice.
///
/// # Safety
/// As [`reinterpret`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn reinterpret_slice<X, Y>(b: &[X]) -> &[Y] {
    debug_assert!(std::mem::size_of::<X>() == std::mem::size_of::<Y>());
    // SAFETY: as in reinterpret (element by element).
    unsafe { std::slice::from_raw_parts(b.as_ptr().cast::<Y>(), b.len()) }
}

/// Helpers of the kernel tests that compare the FMA path with the generic operations.
#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) mod testing {
    use crate::lie::Real;

    /// Whether the CPU runs the AVX2 + FMA path (the tests of that path skip otherwise).
    pub(crate) fn fma_path() -> bool {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }

    /// Deterministic values in (−1, 1) from `seed` (a linear congruential sequence).
    pub(crate) fn values<T: Real>(mut seed: u64) -> impl FnMut() -> T {
        move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            crate::lie::real::c::<T>(((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0)
        }
    }

    /// `got` is `want` bit for bit (the sign of zero included), else panics with `what`.
    pub(crate) fn assert_same<T: Real>(got: T, want: T, what: &str) {
        assert!(
            got == want && got.is_sign_negative() == want.is_sign_negative(),
            "{} {what}: {got} against {want}",
            T::NAME
        );
    }
}
