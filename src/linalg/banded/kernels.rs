//! The unrolled 6×6 block kernels of the banded Cholesky factorisation and solves
//! (private helpers of [`super::BlockBandedMatrix`]).

use super::{BandBlock, BandScalar, BandedError, Block, Stored, B};
use crate::lie::Real;
use crate::linalg::simd::msub;
#[cfg(target_arch = "x86_64")]
use crate::linalg::simd_f32::{self, is_f32};
#[cfg(target_arch = "x86_64")]
use crate::linalg::simd_f64::{self, is_f64};

/// Block row i of a vector (6 entries).
#[inline(always)]
pub(super) fn seg<T: Copy>(v: &[T], i: usize) -> [T; B] {
    let s = &v[B * i..B * i + B];
    [s[0], s[1], s[2], s[3], s[4], s[5]]
}

/// Writes block row i of a vector.
#[inline(always)]
pub(super) fn put<T: Copy>(v: &mut [T], i: usize, x: &[T; B]) {
    v[B * i..B * i + B].copy_from_slice(x);
}

/// Index of the first non-finite entry of a vector of 6n entries. The common case (all
/// finite) is one multiply-add per entry in 6 independent lanes: 0·x is ±0 for finite
/// x and NaN for NaN or ±∞, and NaN stays NaN in a sum; only then is the vector scanned.
pub(super) fn first_non_finite_entry<T: Real>(v: &[T]) -> Option<usize> {
    let mut acc = [T::zero(); B];
    for chunk in v.chunks_exact(B) {
        for r in 0..B {
            acc[r] += chunk[r] * T::zero();
        }
    }
    if acc.iter().all(|a| *a == T::zero()) {
        None
    } else {
        v.iter().position(|x| !x.is_finite())
    }
}

/// (row, column) of the first non-finite entry of a block, column by column.
/// The common case (all finite) is one multiply-add per entry in 6 independent lanes,
/// as in [`first_non_finite_entry`]; only a block with a bad entry is scanned.
pub(super) fn first_non_finite<T: Real>(m: &Block<T>) -> Option<(usize, usize)> {
    let cols = &m.data.0;
    let mut acc = [T::zero(); B];
    for col in cols {
        for r in 0..B {
            acc[r] += col[r] * T::zero();
        }
    }
    if acc.iter().all(|a| *a == T::zero()) {
        return None;
    }
    let k = m.iter().position(|v| !v.is_finite())?;
    Some((k % B, k / B))
}

/// y −= x·w on one column of 6 (fused on the FMA path `F`, [`crate::linalg::simd`]).
#[inline(always)]
pub(super) fn sub_scaled<T: Real, const F: bool>(y: &mut [T; B], x: &[T; B], w: T) {
    for r in 0..B {
        y[r] = msub::<T, F>(y[r], x[r], w);
    }
}

/// y + z on one column of 6.
#[inline(always)]
fn add_column<T: Real>(y: &[T; B], z: &[T; B]) -> [T; B] {
    std::array::from_fn(|r| y[r] + z[r])
}

/// s −= Σ_k a_k b_kᵀ over paired blocks (6×6, column-major: `x[col][row]`): column c
/// of s loses Σ_k Σ_t a_k,t·b_k,ct. Two columns at a time, so each column of a_k is
/// loaded once per pair, and two independent accumulators per column (even and odd
/// t, summed at the end) halve the chain of dependent multiply-adds.
#[inline(always)]
pub(super) fn sub_sum_mul_transpose<T: BandScalar, const F: bool>(
    s: &mut Stored<T>,
    a: &[Stored<T>],
    b: &[Stored<T>],
) {
    debug_assert_eq!(a.len(), b.len());
    if a.is_empty() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if F && is_f32::<T>() {
        // SAFETY: T is f32 (so the blocks are padded f32 blocks), and F is only set on
        // the AVX2 + FMA path, whose CPU support was detected (crate::linalg::simd).
        unsafe {
            return simd_f32::sub_sum_mul_transpose(
                crate::linalg::simd::reinterpret_mut(s),
                crate::linalg::simd::reinterpret_slice(a),
                crate::linalg::simd::reinterpret_slice(b),
            );
        }
    }
    #[cfg(target_arch = "x86_64")]
    if F && is_f64::<T>() {
        // SAFETY: T is f64 (so the blocks are f64 columns), and F is only set on the
        // AVX2 + FMA path, whose CPU support was detected (crate::linalg::simd).
        unsafe {
            return simd_f64::sub_sum_mul_transpose(
                crate::linalg::simd::reinterpret_mut(s),
                crate::linalg::simd::reinterpret_slice(a),
                crate::linalg::simd::reinterpret_slice(b),
            );
        }
    }
    for pair in 0..B / 2 {
        let (c0, c1) = (2 * pair, 2 * pair + 1);
        let (mut y0, mut y1) = (*s.col(c0), *s.col(c1));
        let (mut z0, mut z1) = ([T::zero(); B], [T::zero(); B]);
        for (ak, bk) in a.iter().zip(b) {
            for h in 0..B / 2 {
                let (t0, t1) = (2 * h, 2 * h + 1);
                sub_scaled::<T, F>(&mut y0, ak.col(t0), bk.col(t0)[c0]);
                sub_scaled::<T, F>(&mut y1, ak.col(t0), bk.col(t0)[c1]);
                sub_scaled::<T, F>(&mut z0, ak.col(t1), bk.col(t1)[c0]);
                sub_scaled::<T, F>(&mut z1, ak.col(t1), bk.col(t1)[c1]);
            }
        }
        *s.col_mut(c0) = add_column(&y0, &z0);
        *s.col_mut(c1) = add_column(&y1, &z1);
    }
}

/// Rows `START..6` of column `col` of s −= Σ_k a_k a_kᵀ (even and odd t in two
/// accumulators, as [`sub_sum_mul_transpose`]).
#[inline(always)]
fn sub_sum_outer_column<T: BandScalar, const F: bool, const START: usize>(
    s: &mut Stored<T>,
    a: &[Stored<T>],
    col: usize,
) {
    let mut y = *s.col(col);
    let mut z = [T::zero(); B];
    for ak in a {
        for h in 0..B / 2 {
            let (t0, t1) = (2 * h, 2 * h + 1);
            let (a0, a1) = (ak.col(t0), ak.col(t1));
            let (w0, w1) = (a0[col], a1[col]);
            for r in START..B {
                y[r] = msub::<T, F>(y[r], a0[r], w0);
                z[r] = msub::<T, F>(z[r], a1[r], w1);
            }
        }
    }
    for r in START..B {
        y[r] += z[r];
    }
    *s.col_mut(col) = y;
}

/// s −= Σ_k a_k a_kᵀ on the lower triangle (row ≥ col), computed in row pairs aligned
/// to even rows (so column 1 also updates row 0, column 3 row 2, column 5 row 4:
/// entries above the diagonal, which the Cholesky of the diagonal block ignores and
/// clears).
#[inline(always)]
pub(super) fn sub_sum_mul_self_transpose_lower<T: BandScalar, const F: bool>(
    s: &mut Stored<T>,
    a: &[Stored<T>],
) {
    if a.is_empty() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if F && is_f32::<T>() {
        // The whole block on 8 lanes (rows above the diagonal too: ignored, as above).
        // SAFETY: as in sub_sum_mul_transpose.
        unsafe {
            let a = crate::linalg::simd::reinterpret_slice(a);
            return simd_f32::sub_sum_mul_transpose(crate::linalg::simd::reinterpret_mut(s), a, a);
        }
    }
    #[cfg(target_arch = "x86_64")]
    if F && is_f64::<T>() {
        // SAFETY: as in sub_sum_mul_transpose (T is f64, the FMA path).
        unsafe {
            let a = crate::linalg::simd::reinterpret_slice(a);
            return simd_f64::sub_sum_mul_self_transpose_lower(
                crate::linalg::simd::reinterpret_mut(s),
                a,
            );
        }
    }
    sub_sum_outer_column::<T, F, 0>(s, a, 0);
    sub_sum_outer_column::<T, F, 0>(s, a, 1);
    sub_sum_outer_column::<T, F, 2>(s, a, 2);
    sub_sum_outer_column::<T, F, 2>(s, a, 3);
    sub_sum_outer_column::<T, F, 4>(s, a, 4);
    sub_sum_outer_column::<T, F, 4>(s, a, 5);
}

/// Column `COL` of X with X lᵀ = S (l lower triangular, reciprocal diagonal `inv`):
/// X_c = (S_c − Σ_{t<c} X_t l_ct)·inv_c, with the columns t < c of s already X.
#[inline(always)]
pub(super) fn solve_right_column<T: BandScalar, const F: bool, const COL: usize>(
    s: &mut Stored<T>,
    l: &Stored<T>,
    inv: &[T; B],
) {
    let mut x = *s.col(COL);
    for t in 0..COL {
        sub_scaled::<T, F>(&mut x, s.col(t), l.col(t)[COL]);
    }
    for v in x.iter_mut() {
        *v *= inv[COL];
    }
    *s.col_mut(COL) = x;
}

/// s ← s l⁻ᵀ for lower-triangular l with reciprocal diagonal `inv` (column by column,
/// each with constant loop bounds).
#[inline(always)]
pub(super) fn solve_right_lower_transpose<T: BandScalar, const F: bool>(
    s: &mut Stored<T>,
    l: &Stored<T>,
    inv: &[T; B],
) {
    #[cfg(target_arch = "x86_64")]
    if F && is_f32::<T>() {
        // SAFETY: as in sub_sum_mul_transpose (T is f32, the FMA path).
        unsafe {
            return simd_f32::solve_right_lower_transpose(
                crate::linalg::simd::reinterpret_mut(s),
                crate::linalg::simd::reinterpret(l),
                &*(inv as *const [T; B]).cast::<[f32; 6]>(),
            );
        }
    }
    #[cfg(target_arch = "x86_64")]
    if F && is_f64::<T>() {
        // SAFETY: as in sub_sum_mul_transpose (T is f64, the FMA path).
        unsafe {
            return simd_f64::solve_right_lower_transpose(
                crate::linalg::simd::reinterpret_mut(s),
                crate::linalg::simd::reinterpret(l),
                &*(inv as *const [T; B]).cast::<[f64; 6]>(),
            );
        }
    }
    solve_right_column::<T, F, 0>(s, l, inv);
    solve_right_column::<T, F, 1>(s, l, inv);
    solve_right_column::<T, F, 2>(s, l, inv);
    solve_right_column::<T, F, 3>(s, l, inv);
    solve_right_column::<T, F, 4>(s, l, inv);
    solve_right_column::<T, F, 5>(s, l, inv);
}

/// Column `COL` of the Cholesky factor of the 6×6 block s, left-looking: with the
/// columns t < COL already factored, y = s_COL − Σ_t L_COL,t·L_t on rows ≥ COL, the
/// pivot is y_COL, and the column is y/√y_COL; rows above the diagonal are cleared.
/// Returns 1/√pivot.
#[inline(always)]
pub(super) fn cholesky_column<T: BandScalar, const F: bool, const COL: usize>(
    s: &mut Stored<T>,
    diagonal: &[T; B],
    tiny: T,
    block_row: usize,
) -> Result<T, BandedError> {
    let mut y = *s.col(COL);
    for t in 0..COL {
        let s_t = s.col(t);
        let w = s_t[COL];
        for r in COL..B {
            y[r] = msub::<T, F>(y[r], s_t[r], w);
        }
    }
    let d = y[COL];
    if !d.is_finite() {
        return Err(BandedError::NonFinitePivot {
            block_row,
            pivot: COL,
        });
    }
    if d <= tiny * diagonal[COL].abs() {
        return Err(BandedError::NotPositiveDefinite {
            block_row,
            pivot: COL,
            value: d.to_f64(),
            diagonal: diagonal[COL].to_f64(),
        });
    }
    let l = d.sqrt();
    let inv = T::one() / l;
    for v in &mut y[..COL] {
        *v = T::zero();
    }
    y[COL] = l;
    for v in &mut y[COL + 1..] {
        *v *= inv;
    }
    *s.col_mut(COL) = y;
    Ok(inv)
}

/// In-place Cholesky of the lower triangle of the 6×6 block s (upper triangle set to
/// zero); returns the reciprocals of the diagonal of the factor. `diagonal` holds the
/// diagonal of A at these rows, for the pivot test.
#[inline(always)]
pub(super) fn cholesky_6<T: BandScalar, const F: bool>(
    s: &mut Stored<T>,
    diagonal: &[T; B],
    tiny: T,
    block_row: usize,
) -> Result<[T; B], BandedError> {
    // The failing column's error, as `cholesky_column` reports it. (The f64 path
    // stays scalar: the compiler's code for it takes fewer instructions than 4 + 2
    // lanes with the masking of the rows above the diagonal.)
    #[cfg(target_arch = "x86_64")]
    let error = |(pivot, d): (usize, T)| {
        if d.is_finite() {
            BandedError::NotPositiveDefinite {
                block_row,
                pivot,
                value: d.to_f64(),
                diagonal: diagonal[pivot].to_f64(),
            }
        } else {
            BandedError::NonFinitePivot { block_row, pivot }
        }
    };
    #[cfg(target_arch = "x86_64")]
    if F && is_f32::<T>() {
        // SAFETY: as in sub_sum_mul_transpose (T is f32, the FMA path).
        unsafe {
            let cast = |x: &[T; B]| *(x as *const [T; B]).cast::<[f32; 6]>();
            return simd_f32::cholesky_6(
                crate::linalg::simd::reinterpret_mut(s),
                &cast(diagonal),
                tiny.to_f64() as f32,
            )
            .map(|inv| *(&inv as *const [f32; 6]).cast::<[T; B]>())
            .map_err(|(c, d)| error((c, crate::lie::real::c::<T>(f64::from(d)))));
        }
    }
    Ok([
        cholesky_column::<T, F, 0>(s, diagonal, tiny, block_row)?,
        cholesky_column::<T, F, 1>(s, diagonal, tiny, block_row)?,
        cholesky_column::<T, F, 2>(s, diagonal, tiny, block_row)?,
        cholesky_column::<T, F, 3>(s, diagonal, tiny, block_row)?,
        cholesky_column::<T, F, 4>(s, diagonal, tiny, block_row)?,
        cholesky_column::<T, F, 5>(s, diagonal, tiny, block_row)?,
    ])
}

/// Column `COL` of the forward solve L y = t with L lower triangular (reciprocal
/// diagonal `inv`): y_COL = t_COL·inv_COL, then rows below lose L_r,COL·y_COL.
#[inline(always)]
pub(super) fn forward_column<T: BandScalar, const F: bool, const COL: usize>(
    t: &mut [T; B],
    l: &Stored<T>,
    inv: &[T; B],
) {
    let y = t[COL] * inv[COL];
    t[COL] = y;
    let l = l.col(COL);
    for r in COL + 1..B {
        t[r] = msub::<T, F>(t[r], l[r], y);
    }
}

/// t ← L⁻¹ t for a lower-triangular 6×6 block.
#[inline(always)]
pub(super) fn forward_6<T: BandScalar, const F: bool>(t: &mut [T; B], l: &Stored<T>, inv: &[T; B]) {
    forward_column::<T, F, 0>(t, l, inv);
    forward_column::<T, F, 1>(t, l, inv);
    forward_column::<T, F, 2>(t, l, inv);
    forward_column::<T, F, 3>(t, l, inv);
    forward_column::<T, F, 4>(t, l, inv);
    forward_column::<T, F, 5>(t, l, inv);
}

/// Row `COL` of the back solve Lᵀ x = t: x_COL = (t_COL − Σ_{r>COL} L_r,COL·x_r)·inv_COL.
#[inline(always)]
pub(super) fn back_column<T: BandScalar, const F: bool, const COL: usize>(
    t: &mut [T; B],
    l: &Stored<T>,
    inv: &[T; B],
) {
    let mut v = t[COL];
    let l = l.col(COL);
    for r in COL + 1..B {
        v = msub::<T, F>(v, l[r], t[r]);
    }
    t[COL] = v * inv[COL];
}

/// t ← L⁻ᵀ t for a lower-triangular 6×6 block.
#[inline(always)]
pub(super) fn back_6<T: BandScalar, const F: bool>(t: &mut [T; B], l: &Stored<T>, inv: &[T; B]) {
    back_column::<T, F, 5>(t, l, inv);
    back_column::<T, F, 4>(t, l, inv);
    back_column::<T, F, 3>(t, l, inv);
    back_column::<T, F, 2>(t, l, inv);
    back_column::<T, F, 1>(t, l, inv);
    back_column::<T, F, 0>(t, l, inv);
}

#[cfg(all(test, target_arch = "x86_64"))]
// Entries are addressed by (row, column) as in the formulas they check.
#[allow(clippy::needless_range_loop)]
mod tests {
    //! The block products of the factorisation on the AVX2 + FMA path (8 lanes in f32,
    //! 4 + 2 in f64) against the generic kernel's fused operations written out per
    //! entry, in both scalars, bit for bit.
    use super::*;
    use crate::lie::real::c;
    use crate::linalg::simd::testing::{assert_same, fma_path, values};

    fn sub_sum_kernels_match_the_generic_operations<T: BandScalar>() {
        let mut next = values::<T>(7);
        let mut block = || {
            let mut b = Stored::<T>::ZERO;
            for col in 0..B {
                *b.col_mut(col) = std::array::from_fn(|_| next());
            }
            b
        };
        for count in 0..4 {
            let a: Vec<Stored<T>> = (0..count).map(|_| block()).collect();
            let b: Vec<Stored<T>> = (0..count).map(|_| block()).collect();
            let s0 = block();
            for (other, lower) in [(&b, false), (&a, true)] {
                // Column col of s loses Σ_k Σ_t a_k,t·b_k,col t: even t into y, odd t
                // into z (from zero), then y + z.
                let expected = |col: usize, r: usize| {
                    let (mut y, mut z) = (s0.col(col)[r], T::zero());
                    for (ak, bk) in a.iter().zip(other.iter()) {
                        for h in 0..B / 2 {
                            let (t0, t1) = (2 * h, 2 * h + 1);
                            y = (-ak.col(t0)[r]).mul_add(bk.col(t0)[col], y);
                            z = (-ak.col(t1)[r]).mul_add(bk.col(t1)[col], z);
                        }
                    }
                    y + z
                };
                let mut s = s0;
                if lower {
                    sub_sum_mul_self_transpose_lower::<T, true>(&mut s, &a);
                } else {
                    sub_sum_mul_transpose::<T, true>(&mut s, &a, other);
                }
                for col in 0..B {
                    for r in (0..B).filter(|&r| !lower || r >= col) {
                        let what = format!("{count} {lower} ({r}, {col})");
                        assert_same(s.col(col)[r], expected(col, r), &what);
                    }
                }
            }
        }
    }

    /// s ← s l⁻ᵀ: column c is (s_c − Σ_{t<c} x_t l_ct)·inv_c.
    fn right_solve_matches_the_generic_operations<T: BandScalar>() {
        let mut next = values::<T>(11);
        let mut block = || {
            let mut b = Stored::<T>::ZERO;
            for col in 0..B {
                *b.col_mut(col) = std::array::from_fn(|_| next());
            }
            b
        };
        let (s0, l) = (block(), block());
        let inv: [T; B] = std::array::from_fn(|k| T::one() / (c::<T>(2.0) + l.col(k)[k].abs()));
        let mut expected = s0;
        for col in 0..B {
            let mut x = *expected.col(col);
            for t in 0..col {
                for r in 0..B {
                    x[r] = (-expected.col(t)[r]).mul_add(l.col(t)[col], x[r]);
                }
            }
            *expected.col_mut(col) = x.map(|x| x * inv[col]);
        }
        let mut s = s0;
        solve_right_lower_transpose::<T, true>(&mut s, &l, &inv);
        // Every stored entry, the f32 padding (zero) included.
        assert!(s == expected, "{}: {s:?} against {expected:?}", T::NAME);
    }

    #[test]
    fn block_products_match_the_generic_operations() {
        if !fma_path() {
            return;
        }
        sub_sum_kernels_match_the_generic_operations::<f64>();
        sub_sum_kernels_match_the_generic_operations::<f32>();
        right_solve_matches_the_generic_operations::<f64>();
        right_solve_matches_the_generic_operations::<f32>();
    }
}
