//! 4 + 2-lane f64 kernels of the AVX2 + FMA path (private, x86-64): a 6-row block
//! column of f64 is one 256-bit register (rows 0–3) and one 128-bit register (rows
//! 4–5), so a column multiply-add is two instructions, where the generic kernels,
//! which the compiler leaves mostly scalar, need up to six. Each kernel performs,
//! entry by entry, the same fused operations in the same order as the generic kernel
//! it replaces on the FMA path, so the results are identical (up to the sign of zero
//! sums). Only called with `T = f64` ([`is_f64`]) on the FMA path. Tested bit for bit
//! through the dispatching kernels, in f64 and f32 alike (the tests of
//! `banded::kernels`). The column loads, stores and multiply-adds are also used by a
//! rod's assembly kernels (in the rod module).

use std::arch::x86_64::*;

/// Columns of a 6×6 f64 block, `x[column][row]`.
pub(crate) type Cols64 = [[f64; 6]; 6];

/// Whether `T` is f64 (then the f64 kernels below apply).
pub(crate) use crate::lie::real::is_f64;

/// A 6-row f64 column in registers: rows 0–3 and rows 4–5.
#[derive(Clone, Copy)]
pub(crate) struct Col(pub(crate) __m256d, pub(crate) __m128d);

#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn zero() -> Col {
    Col(_mm256_setzero_pd(), _mm_setzero_pd())
}

/// Column `c` of a block.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn load(b: &Cols64, c: usize) -> Col {
    let p = b[c].as_ptr();
    // SAFETY: rows 0–3 and 4–5 of column c, within the column's 6 entries.
    unsafe { Col(_mm256_loadu_pd(p), _mm_loadu_pd(p.add(4))) }
}

/// Stores `v` to column `c` of a block.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn store(b: &mut Cols64, c: usize, v: Col) {
    let p = b[c].as_mut_ptr();
    // SAFETY: rows 0–3 and 4–5 of column c, within the column's 6 entries.
    unsafe {
        _mm256_storeu_pd(p, v.0);
        _mm_storeu_pd(p.add(4), v.1);
    }
}

/// a·w + y, fused, per row.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn fmadd(a: Col, w: f64, y: Col) -> Col {
    let w4 = _mm256_set1_pd(w);
    Col(
        _mm256_fmadd_pd(a.0, w4, y.0),
        _mm_fmadd_pd(a.1, _mm256_castpd256_pd128(w4), y.1),
    )
}

/// y − a·w, fused, per row.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn fnmadd(a: Col, w: f64, y: Col) -> Col {
    let w4 = _mm256_set1_pd(w);
    Col(
        _mm256_fnmadd_pd(a.0, w4, y.0),
        _mm_fnmadd_pd(a.1, _mm256_castpd256_pd128(w4), y.1),
    )
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn add(a: Col, b: Col) -> Col {
    Col(_mm256_add_pd(a.0, b.0), _mm_add_pd(a.1, b.1))
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn scale(a: Col, w: f64) -> Col {
    let w4 = _mm256_set1_pd(w);
    Col(
        _mm256_mul_pd(a.0, w4),
        _mm_mul_pd(a.1, _mm256_castpd256_pd128(w4)),
    )
}

/// s −= Σ_k a_k b_kᵀ (all 36 entries), as `banded::kernels::sub_sum_mul_transpose`:
/// per column c of s, y_c loses a_k,t·b_k,ct for even t and z_c (from zero) for odd
/// t, and s_c = y_c + z_c; two columns at a time.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn sub_sum_mul_transpose(s: &mut Cols64, a: &[Cols64], b: &[Cols64]) {
    for c0 in [0, 2, 4] {
        let c1 = c0 + 1;
        let (mut y0, mut y1) = (load(s, c0), load(s, c1));
        let (mut z0, mut z1) = (zero(), zero());
        for (ak, bk) in a.iter().zip(b) {
            for h in 0..3 {
                let (t0, t1) = (2 * h, 2 * h + 1);
                let (a0, a1) = (load(ak, t0), load(ak, t1));
                y0 = fnmadd(a0, bk[t0][c0], y0);
                y1 = fnmadd(a0, bk[t0][c1], y1);
                z0 = fnmadd(a1, bk[t1][c0], z0);
                z1 = fnmadd(a1, bk[t1][c1], z1);
            }
        }
        store(s, c0, add(y0, z0));
        store(s, c1, add(y1, z1));
    }
}

/// s −= Σ_k a_k a_kᵀ on the lower triangle, as
/// `banded::kernels::sub_sum_mul_self_transpose_lower` (the operations of
/// [`sub_sum_mul_transpose`] with b = a, per entry): columns 0–3 on all six rows,
/// columns 4–5 on rows 4–5 only (the entries above the diagonal are ignored by the
/// Cholesky of the diagonal block, which clears them).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn sub_sum_mul_self_transpose_lower(s: &mut Cols64, a: &[Cols64]) {
    for c0 in [0, 2] {
        let c1 = c0 + 1;
        let (mut y0, mut y1) = (load(s, c0), load(s, c1));
        let (mut z0, mut z1) = (zero(), zero());
        for ak in a {
            for h in 0..3 {
                let (t0, t1) = (2 * h, 2 * h + 1);
                let (a0, a1) = (load(ak, t0), load(ak, t1));
                y0 = fnmadd(a0, ak[t0][c0], y0);
                y1 = fnmadd(a0, ak[t0][c1], y1);
                z0 = fnmadd(a1, ak[t1][c0], z0);
                z1 = fnmadd(a1, ak[t1][c1], z1);
            }
        }
        store(s, c0, add(y0, z0));
        store(s, c1, add(y1, z1));
    }
    // Rows 4–5 of columns 4 and 5.
    let low = |b: &Cols64, c: usize| {
        // SAFETY: rows 4–5 of column c, within its 6 entries.
        unsafe { _mm_loadu_pd(b[c].as_ptr().add(4)) }
    };
    let (mut y0, mut y1) = (low(s, 4), low(s, 5));
    let (mut z0, mut z1) = (_mm_setzero_pd(), _mm_setzero_pd());
    for ak in a {
        for h in 0..3 {
            let (t0, t1) = (2 * h, 2 * h + 1);
            let (a0, a1) = (low(ak, t0), low(ak, t1));
            y0 = _mm_fnmadd_pd(a0, _mm_set1_pd(ak[t0][4]), y0);
            y1 = _mm_fnmadd_pd(a0, _mm_set1_pd(ak[t0][5]), y1);
            z0 = _mm_fnmadd_pd(a1, _mm_set1_pd(ak[t1][4]), z0);
            z1 = _mm_fnmadd_pd(a1, _mm_set1_pd(ak[t1][5]), z1);
        }
    }
    // SAFETY: rows 4–5 of columns 4 and 5.
    unsafe {
        _mm_storeu_pd(s[4].as_mut_ptr().add(4), _mm_add_pd(y0, z0));
        _mm_storeu_pd(s[5].as_mut_ptr().add(4), _mm_add_pd(y1, z1));
    }
}

/// s ← s l⁻ᵀ for lower-triangular l with reciprocal diagonal `inv`, as
/// `banded::kernels::solve_right_lower_transpose`: column c is
/// (s_c − Σ_{t<c} x_t l_ct)·inv_c, the columns held in registers until all are solved.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn solve_right_lower_transpose(s: &mut Cols64, l: &Cols64, inv: &[f64; 6]) {
    let mut x = [zero(); 6];
    for c in 0..6 {
        let mut v = load(s, c);
        for t in 0..c {
            v = fnmadd(x[t], l[t][c], v);
        }
        x[c] = scale(v, inv[c]);
    }
    for (c, v) in x.into_iter().enumerate() {
        store(s, c, v);
    }
}
