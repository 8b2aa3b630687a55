//! The AVX2 + FMA versions of the assembly kernel `kernels::sum_mul_transpose_half`
//! (private, x86-64), in f32 on 8 lanes
//! (a padded block column in one register) and in f64 on 4 + 2 lanes, built on the
//! column loads and stores of the banded solver's kernels (`crate::linalg::simd_f32`
//! and `simd_f64`). Each performs, entry by entry, the same fused operations in the
//! same order as the generic kernel, so the results are identical (up to the sign of
//! zero sums); tested bit for bit in `kernels`' tests.

/// The f32 kernel: only called with `T = f32` on the FMA path.
pub(crate) mod f32 {
    use crate::linalg::banded::PaddedBlockF32;
    use crate::linalg::simd_f32::{load_pcol, store_pcol, Cols32};
    use std::arch::x86_64::*;

    /// Columns `B0..B0 + 3` of Σ_j y_j g2_jᵀ over the active nodes j into `out`
    /// (overwritten), as `fem_rod::kernels::sum_mul_transpose_half` on the FMA path: per
    /// node the rotation columns c = 3–5, then for B0 < 3 the position columns (whose rows
    /// 3–5 are zero, so all six rows may be summed). Rows above `START` of the generic
    /// kernel (upper-triangle entries of a diagonal block, unused) are summed too.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) unsafe fn sum_mul_transpose_half<const N: usize, const B0: usize>(
        out: &mut PaddedBlockF32,
        y: &[&PaddedBlockF32; N],
        g2: &[&Cols32; N],
        active: &[bool; N],
    ) {
        let mut acc = [_mm256_setzero_ps(); 3];
        for j in 0..N {
            if !active[j] {
                continue;
            }
            let (yj, gj) = (y[j], g2[j]);
            for (c, gc) in gj.iter().enumerate().skip(3) {
                let yc = load_pcol(yj, c);
                for (i, a) in acc.iter_mut().enumerate() {
                    *a = _mm256_fmadd_ps(yc, _mm256_set1_ps(gc[B0 + i]), *a);
                }
            }
            if B0 < 3 {
                for (c, gc) in gj.iter().enumerate().take(3) {
                    let yc = load_pcol(yj, c);
                    for (i, a) in acc.iter_mut().enumerate() {
                        *a = _mm256_fmadd_ps(yc, _mm256_set1_ps(gc[B0 + i]), *a);
                    }
                }
            }
        }
        // Lanes 6–7 are zero (y's padding), as the padding must be.
        for (i, a) in acc.into_iter().enumerate() {
            store_pcol(out, B0 + i, a);
        }
    }
}

/// The f64 kernel: only called with `T = f64` on the FMA path.
pub(crate) mod f64 {
    use crate::linalg::simd_f64::{fmadd, load, store, zero, Cols64};
    use std::arch::x86_64::*;

    /// Columns `B0..B0 + 3` of Σ_j y_j g2_jᵀ over the active nodes j into `out`
    /// (overwritten), as `fem_rod::kernels::sum_mul_transpose_half` on the FMA path: per
    /// node the rotation columns c = 3–5, then for B0 < 3 the position columns on rows
    /// 0–3 (row 3 of a position column is zero, so it adds nothing). Rows above `START`
    /// of the generic kernel (upper-triangle entries of a diagonal block, unused) are
    /// summed too.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn sum_mul_transpose_half<const N: usize, const B0: usize>(
        out: &mut Cols64,
        y: &[&Cols64; N],
        g2: &[&Cols64; N],
        active: &[bool; N],
    ) {
        let mut acc = [zero(); 3];
        for j in 0..N {
            if !active[j] {
                continue;
            }
            let (yj, gj) = (y[j], g2[j]);
            for (c, gc) in gj.iter().enumerate().skip(3) {
                let yc = load(yj, c);
                for (i, a) in acc.iter_mut().enumerate() {
                    *a = fmadd(yc, gc[B0 + i], *a);
                }
            }
            if B0 < 3 {
                // The position columns touch rows 0–2 only: rows 0–3 of the accumulators
                // (row 3 gains y_c3·w = 0).
                for (c, gc) in gj.iter().enumerate().take(3) {
                    // SAFETY: rows 0–3 of column c, within its 6 entries.
                    let yc = unsafe { _mm256_loadu_pd(yj[c].as_ptr()) };
                    for (i, a) in acc.iter_mut().enumerate() {
                        a.0 = _mm256_fmadd_pd(yc, _mm256_set1_pd(gc[B0 + i]), a.0);
                    }
                }
            }
        }
        for (i, a) in acc.into_iter().enumerate() {
            store(out, B0 + i, a);
        }
    }
}
