//! The unrolled 6×6 block kernels of the banded Cholesky factorisation and solves
//! (private helpers of [`super::BlockBandedMatrix`]).

use super::{BandedError, Block, Cols, B};
use crate::lie::Real;

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

/// y −= x·w on one column of 6.
#[inline(always)]
pub(super) fn sub_scaled<T: Real>(y: &mut [T; B], x: &[T; B], w: T) {
    y[0] -= x[0] * w;
    y[1] -= x[1] * w;
    y[2] -= x[2] * w;
    y[3] -= x[3] * w;
    y[4] -= x[4] * w;
    y[5] -= x[5] * w;
}

/// s −= a bᵀ (6×6, column-major: `x[col][row]`): column c of s loses Σ_t a_t·b_ct.
/// Two columns at a time, so each column of a is loaded once per pair.
#[inline(always)]
pub(super) fn sub_mul_transpose<T: Real>(s: &mut Cols<T>, a: &Cols<T>, b: &Cols<T>) {
    for pair in 0..B / 2 {
        let (c0, c1) = (2 * pair, 2 * pair + 1);
        let (mut y0, mut y1) = (s[c0], s[c1]);
        for t in 0..B {
            sub_scaled(&mut y0, &a[t], b[t][c0]);
            sub_scaled(&mut y1, &a[t], b[t][c1]);
        }
        s[c0] = y0;
        s[c1] = y1;
    }
}

/// Rows `START..6` of column `col` of s −= a aᵀ.
#[inline(always)]
pub(super) fn sub_outer_column<T: Real, const START: usize>(
    s_col: &mut [T; B],
    a: &Cols<T>,
    col: usize,
) {
    let mut y = *s_col;
    for a_t in a {
        let w = a_t[col];
        for r in START..B {
            y[r] -= a_t[r] * w;
        }
    }
    *s_col = y;
}

/// s −= a aᵀ on the lower triangle (row ≥ col), computed in row pairs aligned to even
/// rows (so column 1 also updates row 0, column 3 row 2, column 5 row 4: entries above
/// the diagonal, which the Cholesky of the diagonal block ignores and clears).
#[inline(always)]
pub(super) fn sub_mul_self_transpose_lower<T: Real>(s: &mut Cols<T>, a: &Cols<T>) {
    let [c0, c1, c2, c3, c4, c5] = s;
    sub_outer_column::<T, 0>(c0, a, 0);
    sub_outer_column::<T, 0>(c1, a, 1);
    sub_outer_column::<T, 2>(c2, a, 2);
    sub_outer_column::<T, 2>(c3, a, 3);
    sub_outer_column::<T, 4>(c4, a, 4);
    sub_outer_column::<T, 4>(c5, a, 5);
}

/// Column `COL` of X with X lᵀ = S (l lower triangular, reciprocal diagonal `inv`):
/// X_c = (S_c − Σ_{t<c} X_t l_ct)·inv_c, with the columns t < c of s already X.
#[inline(always)]
pub(super) fn solve_right_column<T: Real, const COL: usize>(
    s: &mut Cols<T>,
    l: &Cols<T>,
    inv: &[T; B],
) {
    let mut x = s[COL];
    for t in 0..COL {
        sub_scaled(&mut x, &s[t], l[t][COL]);
    }
    for v in x.iter_mut() {
        *v *= inv[COL];
    }
    s[COL] = x;
}

/// s ← s l⁻ᵀ for lower-triangular l with reciprocal diagonal `inv` (column by column,
/// each with constant loop bounds).
#[inline(always)]
pub(super) fn solve_right_lower_transpose<T: Real>(s: &mut Cols<T>, l: &Cols<T>, inv: &[T; B]) {
    solve_right_column::<T, 0>(s, l, inv);
    solve_right_column::<T, 1>(s, l, inv);
    solve_right_column::<T, 2>(s, l, inv);
    solve_right_column::<T, 3>(s, l, inv);
    solve_right_column::<T, 4>(s, l, inv);
    solve_right_column::<T, 5>(s, l, inv);
}

/// Column `COL` of the Cholesky factor of the 6×6 block s, left-looking: with the
/// columns t < COL already factored, y = s_COL − Σ_t L_COL,t·L_t on rows ≥ COL, the
/// pivot is y_COL, and the column is y/√y_COL; rows above the diagonal are cleared.
/// Returns 1/√pivot.
#[inline(always)]
pub(super) fn cholesky_column<T: Real, const COL: usize>(
    s: &mut Cols<T>,
    diagonal: &[T; B],
    tiny: T,
    block_row: usize,
) -> Result<T, BandedError> {
    let mut y = s[COL];
    for s_t in &s[..COL] {
        let w = s_t[COL];
        for r in COL..B {
            y[r] -= s_t[r] * w;
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
    s[COL] = y;
    Ok(inv)
}

/// In-place Cholesky of the lower triangle of the 6×6 block s (upper triangle set to
/// zero); returns the reciprocals of the diagonal of the factor. `diagonal` holds the
/// diagonal of A at these rows, for the pivot test.
#[inline(always)]
pub(super) fn cholesky_6<T: Real>(
    s: &mut Cols<T>,
    diagonal: &[T; B],
    tiny: T,
    block_row: usize,
) -> Result<[T; B], BandedError> {
    Ok([
        cholesky_column::<T, 0>(s, diagonal, tiny, block_row)?,
        cholesky_column::<T, 1>(s, diagonal, tiny, block_row)?,
        cholesky_column::<T, 2>(s, diagonal, tiny, block_row)?,
        cholesky_column::<T, 3>(s, diagonal, tiny, block_row)?,
        cholesky_column::<T, 4>(s, diagonal, tiny, block_row)?,
        cholesky_column::<T, 5>(s, diagonal, tiny, block_row)?,
    ])
}

/// Column `COL` of the forward solve L y = t with L lower triangular (reciprocal
/// diagonal `inv`): y_COL = t_COL·inv_COL, then rows below lose L_r,COL·y_COL.
#[inline(always)]
pub(super) fn forward_column<T: Real, const COL: usize>(t: &mut [T; B], l: &Cols<T>, inv: &[T; B]) {
    let y = t[COL] * inv[COL];
    t[COL] = y;
    for r in COL + 1..B {
        t[r] -= l[COL][r] * y;
    }
}

/// t ← L⁻¹ t for a lower-triangular 6×6 block.
#[inline(always)]
pub(super) fn forward_6<T: Real>(t: &mut [T; B], l: &Cols<T>, inv: &[T; B]) {
    forward_column::<T, 0>(t, l, inv);
    forward_column::<T, 1>(t, l, inv);
    forward_column::<T, 2>(t, l, inv);
    forward_column::<T, 3>(t, l, inv);
    forward_column::<T, 4>(t, l, inv);
    forward_column::<T, 5>(t, l, inv);
}

/// Row `COL` of the back solve Lᵀ x = t: x_COL = (t_COL − Σ_{r>COL} L_r,COL·x_r)·inv_COL.
#[inline(always)]
pub(super) fn back_column<T: Real, const COL: usize>(t: &mut [T; B], l: &Cols<T>, inv: &[T; B]) {
    let mut v = t[COL];
    for r in COL + 1..B {
        v -= l[COL][r] * t[r];
    }
    t[COL] = v * inv[COL];
}

/// t ← L⁻ᵀ t for a lower-triangular 6×6 block.
#[inline(always)]
pub(super) fn back_6<T: Real>(t: &mut [T; B], l: &Cols<T>, inv: &[T; B]) {
    back_column::<T, 5>(t, l, inv);
    back_column::<T, 4>(t, l, inv);
    back_column::<T, 3>(t, l, inv);
    back_column::<T, 2>(t, l, inv);
    back_column::<T, 1>(t, l, inv);
    back_column::<T, 0>(t, l, inv);
}
