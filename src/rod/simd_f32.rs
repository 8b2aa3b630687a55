//! 8-lane f32 kernels of the AVX2 + FMA path (private, x86-64): a 6-row block column
//! of f32 is one 256-bit register (rows 0–5 in lanes 0–5; lanes 6–7 zero on load and
//! never stored), so a column multiply-add is one instruction, where the generic
//! kernels need two (4 + 2 lanes) in f32 as in f64.
//!
//! A column is loaded and stored as rows 0–3 and rows 4–5 (a 128-bit and a 64-bit
//! access), never as one 256-bit access over the column boundary: the kernels run
//! back to back on the same blocks (the assembly writes a block row that the
//! factorisation reads at once; one block of a row is solved, then read by the next),
//! and a load is forwarded from the store buffer only when one earlier store covers
//! it. A 256-bit load across two column stores waited for both to reach the cache:
//! with it, one factorisation and solve of 2,000 block rows (criterion
//! `rod_banded_f32_p*/factor_solve/2000`) took 360.5, 532.9 and 771.3 µs for
//! bandwidths 1, 3 and 5; with the split accesses 345.0, 460.2 and 704.8 µs (f64:
//! 348, 540 and 952 µs).
//! Each kernel performs, entry by entry, the same fused operations in the same order
//! as the generic kernel it replaces on the FMA path, so the results are identical
//! (up to the sign of zero sums). Only called with `T = f32` ([`is_f32`]) on the FMA
//! path.

use nalgebra::SMatrix;
use std::arch::x86_64::*;

/// Columns of a 6×6 f32 block, `x[column][row]`.
pub(crate) type Cols32 = [[f32; 6]; 6];

/// Whether `T` is f32 (then the f32 kernels below apply).
pub(crate) use crate::lie::real::is_f32;

/// A block of `T` as f32 columns.
///
/// # Safety
/// `T` must be f32 ([`is_f32`]).
#[inline(always)]
pub(crate) unsafe fn cols32<T>(b: &[[T; 6]; 6]) -> &Cols32 {
    debug_assert!(std::mem::size_of::<T>() == 4);
    // SAFETY: T is f32 (caller).
    unsafe { &*(b as *const [[T; 6]; 6]).cast::<Cols32>() }
}

/// A mutable block of `T` as f32 columns.
///
/// # Safety
/// `T` must be f32 ([`is_f32`]).
#[inline(always)]
pub(crate) unsafe fn cols32_mut<T>(b: &mut [[T; 6]; 6]) -> &mut Cols32 {
    debug_assert!(std::mem::size_of::<T>() == 4);
    // SAFETY: T is f32 (caller).
    unsafe { &mut *(b as *mut [[T; 6]; 6]).cast::<Cols32>() }
}

/// Column `c` of a block in lanes 0–5 (lanes 6–7 zero), loaded as rows 0–3 and 4–5
/// (module docs).
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn load_col(b: &Cols32, c: usize) -> __m256 {
    let p = b.as_ptr().cast::<f32>();
    // SAFETY: rows 0–3 and 4–5 of column c, within the block (6c + 6 ≤ 36 floats).
    unsafe {
        let lo = _mm_loadu_ps(p.add(6 * c));
        let hi = _mm_castsi128_ps(_mm_loadu_si64(p.add(6 * c + 4).cast::<u8>()));
        _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1)
    }
}

/// Stores lanes 0–5 of `v` to column `c`, as rows 0–3 and 4–5 (module docs).
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn store_col(b: &mut Cols32, c: usize, v: __m256) {
    let p = b.as_mut_ptr().cast::<f32>();
    // SAFETY: rows 0–3 and 4–5 of column c, within the block (6c + 6 ≤ 36 floats).
    unsafe {
        _mm_storeu_ps(p.add(6 * c), _mm256_castps256_ps128(v));
        _mm_storeu_si64(
            p.add(6 * c + 4).cast::<u8>(),
            _mm_castps_si128(_mm256_extractf128_ps(v, 1)),
        );
    }
}

/// s −= Σ_k a_k b_kᵀ (all 36 entries), as `banded::kernels::sub_sum_mul_transpose`:
/// per column c of s, y_c loses a_k,t·b_k,ct for even t and z_c (from zero) for odd
/// t, and s_c = y_c + z_c; three columns at a time.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn sub_sum_mul_transpose(
    s: &mut Cols32,
    a: &[SMatrix<f32, 6, 6>],
    b: &[SMatrix<f32, 6, 6>],
) {
    for c0 in [0, 3] {
        // SAFETY (all below): in-block loads and stores (load_col, store_col).
        let mut y = unsafe { [load_col(s, c0), load_col(s, c0 + 1), load_col(s, c0 + 2)] };
        let mut z = [_mm256_setzero_ps(); 3];
        for (ak, bk) in a.iter().zip(b) {
            let (ak, bk) = (&ak.data.0, &bk.data.0);
            for h in 0..3 {
                let (t0, t1) = (2 * h, 2 * h + 1);
                let (a0, a1) = unsafe { (load_col(ak, t0), load_col(ak, t1)) };
                for i in 0..3 {
                    y[i] = _mm256_fnmadd_ps(a0, _mm256_set1_ps(bk[t0][c0 + i]), y[i]);
                    z[i] = _mm256_fnmadd_ps(a1, _mm256_set1_ps(bk[t1][c0 + i]), z[i]);
                }
            }
        }
        for i in 0..3 {
            let v = _mm256_add_ps(y[i], z[i]);
            unsafe { store_col(s, c0 + i, v) };
        }
    }
}

/// Columns `B0..B0 + 3` of Σ_j y_j g2_jᵀ over the active nodes j into `out`
/// (overwritten), as `fem_rod::kernels::sum_mul_transpose_half` on the FMA path: per
/// node the rotation columns c = 3–5, then for B0 < 3 the position columns (whose rows
/// 3–5 are zero, so all six rows may be summed). Rows above `START` of the generic
/// kernel (upper-triangle entries of a diagonal block, unused) are summed too.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn sum_mul_transpose_half<const N: usize, const B0: usize>(
    out: &mut Cols32,
    y: &[&Cols32; N],
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
            // SAFETY: in-block load.
            let yc = unsafe { load_col(yj, c) };
            for (i, a) in acc.iter_mut().enumerate() {
                *a = _mm256_fmadd_ps(yc, _mm256_set1_ps(gc[B0 + i]), *a);
            }
        }
        if B0 < 3 {
            for (c, gc) in gj.iter().enumerate().take(3) {
                // SAFETY: in-block load.
                let yc = unsafe { load_col(yj, c) };
                for (i, a) in acc.iter_mut().enumerate() {
                    *a = _mm256_fmadd_ps(yc, _mm256_set1_ps(gc[B0 + i]), *a);
                }
            }
        }
    }
    for (i, a) in acc.into_iter().enumerate() {
        // SAFETY: in-block stores (store_col).
        unsafe { store_col(out, B0 + i, a) };
    }
}

/// s ← s l⁻ᵀ for lower-triangular l with reciprocal diagonal `inv`, as
/// `banded::kernels::solve_right_lower_transpose`: column c is
/// (s_c − Σ_{t<c} x_t l_ct)·inv_c, the columns held in registers until all are solved.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn solve_right_lower_transpose(s: &mut Cols32, l: &Cols32, inv: &[f32; 6]) {
    // SAFETY (loads and stores): in-block (load_col, store_col).
    let mut x = unsafe { [0, 1, 2, 3, 4, 5].map(|c| load_col(s, c)) };
    for c in 0..6 {
        let mut v = x[c];
        for t in 0..c {
            v = _mm256_fnmadd_ps(x[t], _mm256_set1_ps(l[t][c]), v);
        }
        x[c] = _mm256_mul_ps(v, _mm256_set1_ps(inv[c]));
    }
    for (c, v) in x.into_iter().enumerate() {
        unsafe { store_col(s, c, v) };
    }
}

/// In-place Cholesky of the lower triangle of a 6×6 block, as
/// `banded::kernels::cholesky_6` on the FMA path: column c is
/// y = s_c − Σ_{t<c} L_t·L_ct (fused, t in order, on all eight lanes: the rows above
/// the diagonal are cleared afterwards), the pivot is d = y_c, and the column becomes
/// (0, …, 0, √d, y_{c+1}·(1/√d), …). Returns the reciprocals 1/√d of the diagonal,
/// or the first column whose pivot is not finite or not above `tiny`·|`diagonal`_c|,
/// with that pivot (the columns before it factored and stored, the rest untouched, as
/// the generic kernel leaves them).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn cholesky_6(
    s: &mut Cols32,
    diagonal: &[f32; 6],
    tiny: f32,
) -> Result<[f32; 6], (usize, f32)> {
    let mut inv = [0.0; 6];
    let mut x = [_mm256_setzero_ps(); 6];
    let index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    // One column, `$c` a literal (constant loop bounds: x stays in registers).
    macro_rules! column {
        ($c:literal) => {{
            let c: usize = $c;
            // SAFETY: in-block load (load_col).
            let mut v = unsafe { load_col(s, c) };
            for t in 0..c {
                v = _mm256_fnmadd_ps(x[t], _mm256_set1_ps(s[t][c]), v);
            }
            let k = _mm256_set1_epi32($c);
            let d = _mm256_cvtss_f32(_mm256_permutevar8x32_ps(v, k));
            if !d.is_finite() || d <= tiny * diagonal[c].abs() {
                return Err((c, d));
            }
            let l = d.sqrt();
            inv[c] = 1.0 / l;
            let y = _mm256_mul_ps(v, _mm256_set1_ps(inv[c]));
            // Rows below the diagonal scaled, the diagonal √d, rows above it +0.
            let below = _mm256_and_ps(y, _mm256_castsi256_ps(_mm256_cmpgt_epi32(index, k)));
            let diagonal_lane = _mm256_castsi256_ps(_mm256_cmpeq_epi32(index, k));
            x[c] = _mm256_blendv_ps(below, _mm256_set1_ps(l), diagonal_lane);
            // SAFETY: in-block store (store_col).
            unsafe { store_col(s, c, x[c]) };
        }};
    }
    column!(0);
    column!(1);
    column!(2);
    column!(3);
    column!(4);
    column!(5);
    Ok(inv)
}

#[cfg(test)]
mod tests {
    //! Each kernel against the generic FMA kernel's operations written out per entry
    //! (the same fused operations in the same order), bit for bit.
    use super::*;
    use nalgebra::Matrix6;

    /// Deterministic values in (−1, 1).
    struct Values(u64);

    impl Values {
        fn next(&mut self) -> f32 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        }
        fn block(&mut self) -> Cols32 {
            std::array::from_fn(|_| std::array::from_fn(|_| self.next()))
        }
    }

    fn fma_path() -> bool {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }

    /// y − x·w as the generic kernels' `msub` on the FMA path.
    fn msub(y: f32, x: f32, w: f32) -> f32 {
        (-x).mul_add(w, y)
    }

    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits()
    }

    /// The generic FMA Cholesky of a 6×6 block, per entry (`banded::kernels`).
    fn cholesky_expected(s0: &Cols32, tiny: f32) -> Result<(Cols32, [f32; 6]), (usize, f32)> {
        let mut s = *s0;
        let mut inv = [0.0; 6];
        for c in 0..6 {
            let mut y = s[c];
            for st in &s[..c] {
                let w = st[c];
                for r in c..6 {
                    y[r] = msub(y[r], st[r], w);
                }
            }
            let d = y[c];
            if !d.is_finite() || d <= tiny * s0[c][c].abs() {
                return Err((c, d));
            }
            let l = d.sqrt();
            inv[c] = 1.0 / l;
            y[..c].fill(0.0);
            y[c] = l;
            for v in &mut y[c + 1..] {
                *v *= inv[c];
            }
            s[c] = y;
        }
        Ok((s, inv))
    }

    #[test]
    fn cholesky_6_matches_the_generic_operations() {
        if !fma_path() {
            return;
        }
        let mut v = Values(17);
        let tiny = 64.0 * f32::EPSILON;
        for case in 0..8 {
            // A = M Mᵀ + shift·𝟙 (positive definite for case < 6), lower triangle;
            // case 6 indefinite, case 7 with a NaN.
            let m = Matrix6::from(v.block());
            let shift = if case == 6 { -3.0 } else { 0.1 };
            let mut a = (m * m.transpose() + Matrix6::identity() * shift).data.0;
            if case == 7 {
                a[3][4] = f32::NAN;
            }
            let diagonal = std::array::from_fn(|r| a[r][r]);
            let expected = cholesky_expected(&a, tiny);
            let mut s = a;
            // SAFETY: the CPU has AVX2 and FMA (checked above).
            let got = unsafe { cholesky_6(&mut s, &diagonal, tiny) };
            match (expected, got) {
                (Ok((e, ei)), Ok(gi)) => {
                    for c in 0..6 {
                        assert!(same(ei[c], gi[c]), "{case} {c}");
                        for r in 0..6 {
                            assert!(same(s[c][r], e[c][r]), "{case} {r} {c}");
                        }
                    }
                }
                (Err((ec, ed)), Err((gc, gd))) => {
                    assert_eq!(ec, gc, "{case}");
                    assert!(same(ed, gd) || (ed.is_nan() && gd.is_nan()), "{case}");
                }
                (e, g) => panic!("{case}: {e:?} against {g:?}"),
            }
        }
    }
}
