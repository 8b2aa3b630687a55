//! Fixed-size kernels of [`super::FemRod`]'s assembly and corrections (private).
//!
//! A Gauss-point gradient block `[∂C/∂pₖ | D_{Rₖ}C]` of (59) has zero rows 3–5 in its
//! three position columns (∂u/∂pₖ = 0, App. G): the curvature does not depend on the
//! nodal positions. The kernels below skip those zeros, so one block product
//! ∇C_gk 𝓜ₖ⁻¹ ∇C_g'kᵀ costs 3·3·3 + 3·6·6 = 135 multiply-adds instead of 216. Blocks
//! are nalgebra's column-major storage, `x[column][row]`.

use crate::lie::Real;
use crate::rod::banded::Cols;

/// Columns of one 6×6 gradient block.
pub(super) type Block6<T> = Cols<T>;

/// The block with column c scaled by `w[c]` (∇C_gk 𝓜ₖ⁻¹ for a diagonal 𝓜ₖ⁻¹).
#[inline(always)]
pub(super) fn scale_columns<T: Real>(g: &Block6<T>, w: &[T; 6]) -> Block6<T> {
    let mut y = *g;
    for (col, &wc) in y.iter_mut().zip(w) {
        for v in col.iter_mut() {
            *v *= wc;
        }
    }
    y
}

/// s += y g2ᵀ for two gradient blocks y, g2 whose position columns (0–2) are zero in
/// rows 3–5: block (row a, column b) of s gains Σ_c y_ac g2_bc, where the position
/// columns c < 3 contribute only to a, b < 3.
#[inline(always)]
pub(super) fn add_mul_transpose<T: Real>(s: &mut Block6<T>, y: &Block6<T>, g2: &Block6<T>) {
    for b in 0..6 {
        let mut col = s[b];
        for c in 3..6 {
            let w = g2[c][b];
            for r in 0..6 {
                col[r] += y[c][r] * w;
            }
        }
        if b < 3 {
            for c in 0..3 {
                let w = g2[c][b];
                for r in 0..3 {
                    col[r] += y[c][r] * w;
                }
            }
        }
        s[b] = col;
    }
}

/// out += gᵀ d for a gradient block g (position columns zero in rows 3–5) and a
/// 6-vector d: the position entries sum rows 0–2 only.
#[inline(always)]
pub(super) fn add_transpose_mul<T: Real>(out: &mut [T; 6], g: &Block6<T>, d: &[T; 6]) {
    for c in 0..3 {
        out[c] += g[c][0] * d[0] + g[c][1] * d[1] + g[c][2] * d[2];
    }
    for c in 3..6 {
        let mut acc = T::zero();
        for r in 0..6 {
            acc += g[c][r] * d[r];
        }
        out[c] += acc;
    }
}

/// g x for a gradient block g and a 6-vector x (Ċ = ∇C v for the damping pass).
#[inline(always)]
pub(super) fn add_mul<T: Real>(out: &mut [T; 6], g: &Block6<T>, x: &[T; 6]) {
    for c in 0..3 {
        for r in 0..3 {
            out[r] += g[c][r] * x[c];
        }
    }
    for c in 3..6 {
        for r in 0..6 {
            out[r] += g[c][r] * x[c];
        }
    }
}
