//! Fixed-size kernels of [`super::FemRod`]'s assembly and corrections (private).
//!
//! A Gauss-point gradient block `[∂C/∂pₖ | D_{Rₖ}C]` of (59) has zero rows 3–5 in its
//! three position columns (∂u/∂pₖ = 0, App. G): the curvature does not depend on the
//! nodal positions. The kernels below skip those zeros, so one block product
//! ∇C_gk 𝓜ₖ⁻¹ ∇C_g'kᵀ costs 3·3·3 + 3·6·6 = 135 multiply-adds instead of 216. Blocks
//! are nalgebra's column-major storage, `x[column][row]`.

use crate::lie::Real;
use crate::linalg::banded::{BandBlock, BandScalar, Cols, Stored};
use crate::linalg::simd::madd;
#[cfg(target_arch = "x86_64")]
use crate::linalg::{simd_f32, simd_f64};
use nalgebra::{Matrix3, Matrix6};

/// Columns of one 6×6 gradient block.
pub(super) type Block6<T> = Cols<T>;

/// The block with column c scaled by `w[c]` (∇C_gk 𝓜ₖ⁻¹ for a diagonal 𝓜ₖ⁻¹), into
/// `y`, a block in the band's storage ([`Stored`]: in f32 its columns padded, so that
/// the assembly kernels load each with one aligned access).
#[inline(always)]
pub(super) fn scale_columns_into<T: BandScalar>(y: &mut Stored<T>, g: &Block6<T>, w: &[T; 6]) {
    for (c, (gc, &wc)) in g.iter().zip(w).enumerate() {
        for (v, &x) in y.col_mut(c).iter_mut().zip(gc) {
            *v = x * wc;
        }
    }
}

/// The block with column c scaled by `w[c]` (∇C_gk 𝓜ₖ⁻¹ for a diagonal 𝓜ₖ⁻¹), as
/// [`scale_columns_into`].
#[inline(always)]
pub(super) fn scale_columns<T: BandScalar>(g: &Block6<T>, w: &[T; 6]) -> Stored<T> {
    let mut y = Stored::<T>::ZERO;
    scale_columns_into(&mut y, g, w);
    y
}

/// Columns `B0..B0 + 3`, rows `START..6`, of Σ_j y_j g2_jᵀ over the nodes j with
/// `active[j]`, into `out` (overwritten): column b gains Σ_c y_jc g2_jbc, per node the
/// rotation columns c = 3–5 first, then (for b < 3) the position columns c < 3 on rows
/// 0–2. The three output columns stay in registers over all nodes while each column
/// y_jc is loaded once (an outer-product update), which fits the 16 vector registers
/// of x86-64 for f64 and f32.
#[inline(always)]
fn sum_mul_transpose_half<
    T: BandScalar,
    const F: bool,
    const N: usize,
    const B0: usize,
    const START: usize,
>(
    out: &mut Stored<T>,
    y: &[&Stored<T>; N],
    g2: &[&Block6<T>; N],
    active: &[bool; N],
) {
    #[cfg(target_arch = "x86_64")]
    if F && simd_f32::is_f32::<T>() {
        // SAFETY: T is f32 (so the casts are identities and `out` is a padded f32
        // block), and F is only set on the AVX2 + FMA path, whose CPU support was
        // detected (crate::linalg::simd).
        unsafe {
            return super::simd::f32::sum_mul_transpose_half::<N, B0>(
                crate::linalg::simd::reinterpret_mut(out),
                &y.map(|b| crate::linalg::simd::reinterpret(b)),
                &g2.map(|b| simd_f32::cols32(b)),
                active,
            );
        }
    }
    #[cfg(target_arch = "x86_64")]
    if F && simd_f64::is_f64::<T>() {
        // SAFETY: T is f64 (so the casts are identities), and F is only set on the
        // AVX2 + FMA path, whose CPU support was detected (crate::linalg::simd).
        unsafe {
            return super::simd::f64::sum_mul_transpose_half::<N, B0>(
                crate::linalg::simd::reinterpret_mut(out),
                &y.map(|b| crate::linalg::simd::reinterpret(b)),
                &g2.map(|b| crate::linalg::simd::reinterpret(b)),
                active,
            );
        }
    }
    let zero = [T::zero(); 6];
    let (mut a0, mut a1, mut a2) = (zero, zero, zero);
    for j in 0..N {
        if !active[j] {
            continue;
        }
        let (yj, gj) = (y[j], g2[j]);
        for (c, gc) in gj.iter().enumerate().skip(3) {
            let yc = yj.col(c);
            let (w0, w1, w2) = (gc[B0], gc[B0 + 1], gc[B0 + 2]);
            for r in START..6 {
                a0[r] = madd::<T, F>(a0[r], yc[r], w0);
                a1[r] = madd::<T, F>(a1[r], yc[r], w1);
                a2[r] = madd::<T, F>(a2[r], yc[r], w2);
            }
        }
        if B0 < 3 {
            for (c, gc) in gj.iter().enumerate().take(3) {
                let yc = yj.col(c);
                let (w0, w1, w2) = (gc[B0], gc[B0 + 1], gc[B0 + 2]);
                for r in START..3 {
                    a0[r] = madd::<T, F>(a0[r], yc[r], w0);
                    a1[r] = madd::<T, F>(a1[r], yc[r], w1);
                    a2[r] = madd::<T, F>(a2[r], yc[r], w2);
                }
            }
        }
    }
    *out.col_mut(B0) = a0;
    *out.col_mut(B0 + 1) = a1;
    *out.col_mut(B0 + 2) = a2;
}

/// Σ_j y_j g2_jᵀ over the nodes j with `active[j]` (overwrites `out`), for gradient
/// blocks y_j, g2_j whose position columns (0–2) are zero in rows 3–5: block (row a,
/// column b) gains Σ_c y_ac g2_bc, where the position columns c < 3 contribute only to
/// a, b < 3.
#[inline(always)]
pub(super) fn sum_mul_transpose<T: BandScalar, const F: bool, const N: usize>(
    out: &mut Stored<T>,
    y: &[&Stored<T>; N],
    g2: &[&Block6<T>; N],
    active: &[bool; N],
) {
    sum_mul_transpose_half::<T, F, N, 0, 0>(out, y, g2, active);
    sum_mul_transpose_half::<T, F, N, 3, 0>(out, y, g2, active);
}

/// [`sum_mul_transpose`] on the lower triangle (row ≥ column) of a diagonal block of
/// the symmetric A, plus some entries above it: columns 3–5 from row 2 on, rows 0–1 of
/// them zero. The banded Cholesky reads only the lower triangle.
#[inline(always)]
pub(super) fn sum_mul_transpose_lower<T: BandScalar, const F: bool, const N: usize>(
    out: &mut Stored<T>,
    y: &[&Stored<T>; N],
    g2: &[&Block6<T>; N],
    active: &[bool; N],
) {
    sum_mul_transpose_half::<T, F, N, 0, 0>(out, y, g2, active);
    sum_mul_transpose_half::<T, F, N, 3, 2>(out, y, g2, active);
}

/// s += y g2ᵀ for one node ([`sum_mul_transpose`] of one term, added to s).
#[inline(always)]
pub(super) fn add_mul_transpose<T: BandScalar>(s: &mut Block6<T>, y: &Stored<T>, g2: &Block6<T>) {
    let mut t = Stored::<T>::ZERO;
    sum_mul_transpose::<T, false, 1>(&mut t, &[y], &[g2], &[true]);
    for (c, sc) in s.iter_mut().enumerate() {
        for (a, b) in sc.iter_mut().zip(t.col(c)) {
            *a += *b;
        }
    }
}

/// out += gᵀ d for a gradient block g (position columns zero in rows 3–5) and a
/// 6-vector d: the position entries sum rows 0–2 only.
#[inline(always)]
pub(super) fn add_transpose_mul<T: Real, const F: bool>(
    out: &mut [T; 6],
    g: &Block6<T>,
    d: &[T; 6],
) {
    for c in 0..3 {
        out[c] += madd::<T, F>(madd::<T, F>(g[c][0] * d[0], g[c][1], d[1]), g[c][2], d[2]);
    }
    for c in 3..6 {
        let mut acc = g[c][0] * d[0];
        for r in 1..6 {
            acc = madd::<T, F>(acc, g[c][r], d[r]);
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

/// The part of a Gauss point's gradient `[∂C/∂pⱼ | D_{Rⱼ}C]` (N blocks of 6×6) that
/// the node corrections 𝓜⁻¹∇CᵀΔλ need, packed for a long rod's streaming
/// projection: the position block of node j is (φⱼ,ξ/l)·R(ξ)ᵀ in rows 0–2 and zero
/// in rows 3–5 ([`crate::rod::RodElement`], App. G), so R(ξ)ᵀ is kept once with the
/// N factors φⱼ,ξ/l, and only the three rotation columns of every block are kept:
/// 9 + N + 18N scalars instead of 36N (cubic: 85 instead of 144). Both are stored
/// row by row across the nodes (`[row][node][column]`), so that ∇CᵀΔλ of all N
/// nodes is a sequence of multiply-adds on 3N independent lanes
/// ([`Self::transpose_mul_all`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct PackedGradient<T: Real, const N: usize> {
    /// R(ξ)ᵀ by rows, `[row][column]`, dimensionless.
    rt: [[T; 3]; 3],
    /// φⱼ,ξ(ξ)/l per node, 1/m.
    dphi_ds: [T; N],
    /// Columns 3–5 (rotation) of every node's block, `[row][node][column − 3]`.
    rotation: [[[T; 3]; N]; 6],
}

impl<T: Real, const N: usize> PackedGradient<T, N> {
    /// All zero.
    pub(super) fn zeros() -> Self {
        Self {
            rt: [[T::zero(); 3]; 3],
            dphi_ds: [T::zero(); N],
            rotation: [[[T::zero(); 3]; N]; 6],
        }
    }

    /// Packs `gradient`, whose position blocks are `dphi_ds[j]`·`rt` (as the element
    /// computes them), into `self` (in place: no temporary copies).
    #[inline(always)]
    pub(super) fn pack_from(
        &mut self,
        gradient: &[Matrix6<T>; N],
        rt: &Matrix3<T>,
        dphi_ds: &[T; N],
    ) {
        for (k, row) in self.rt.iter_mut().enumerate() {
            for (c, x) in row.iter_mut().enumerate() {
                *x = rt[(k, c)];
            }
        }
        self.dphi_ds = *dphi_ds;
        for (r, row) in self.rotation.iter_mut().enumerate() {
            for (node, src) in row.iter_mut().zip(gradient) {
                for (c, x) in node.iter_mut().enumerate() {
                    *x = src[(r, 3 + c)];
                }
            }
        }
    }

    /// The terms every node j's block adds to ∇CᵀΔλ for Δλ = `d`, `[node][entry]`:
    /// the values [`add_transpose_mul`] adds, bit for bit (per entry the same
    /// operations in the same order: the position entries formed as the element forms
    /// them, (φⱼ,ξ/l)·Rᵀ, then g₀d₀ + g₁d₁ + g₂d₂ fused left to right; the rotation
    /// entries g₀d₀ + … + g₅d₅ likewise), computed on the 3N lanes (node, column).
    #[inline(always)]
    pub(super) fn transpose_mul_all<const F: bool>(&self, d: &[T; 6]) -> [[T; 6]; N] {
        let mut position = [[T::zero(); 3]; N];
        for (k, row) in self.rt.iter().enumerate() {
            for (out, &s) in position.iter_mut().zip(&self.dphi_ds) {
                for (o, &g) in out.iter_mut().zip(row) {
                    *o = if k == 0 {
                        (g * s) * d[0]
                    } else {
                        madd::<T, F>(*o, g * s, d[k])
                    };
                }
            }
        }
        let mut rotation = [[T::zero(); 3]; N];
        for (r, row) in self.rotation.iter().enumerate() {
            for (out, node) in rotation.iter_mut().zip(row) {
                for (o, &g) in out.iter_mut().zip(node) {
                    *o = if r == 0 {
                        g * d[0]
                    } else {
                        madd::<T, F>(*o, g, d[r])
                    };
                }
            }
        }
        std::array::from_fn(|j| {
            let (p, q) = (position[j], rotation[j]);
            [p[0], p[1], p[2], q[0], q[1], q[2]]
        })
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    //! The assembly's block products on the AVX2 + FMA path (8 lanes in f32, 4 + 2 in
    //! f64) against the generic kernel's fused operations written out per entry, in
    //! both scalars, bit for bit.
    use super::*;
    use crate::linalg::simd::testing::{assert_same, fma_path, values};

    /// y·w + acc, as the generic kernel's `madd` on the FMA path.
    fn fused<T: Real>(acc: T, y: T, w: T) -> T {
        y.mul_add(w, acc)
    }

    fn sum_mul_transpose_matches_the_generic_operations<T: BandScalar>() {
        let mut next = values::<T>(13);
        // Gradient blocks: position columns zero in rows 3–5.
        let mut gradient = || {
            let mut b: Block6<T> = std::array::from_fn(|_| std::array::from_fn(|_| next()));
            for col in b.iter_mut().take(3) {
                col[3..].fill(T::zero());
            }
            b
        };
        let (y, g) = (
            [gradient(), gradient(), gradient()],
            [gradient(), gradient(), gradient()],
        );
        let active = [true, false, true];
        // Per node the rotation columns, then (output columns b < 3) the position
        // columns, whose rows 3–5 add products with a zero factor.
        let expected = |b: usize, r: usize| {
            let mut acc = T::zero();
            for j in (0..3).filter(|&j| active[j]) {
                for c in 3..6 {
                    acc = fused(acc, y[j][c][r], g[j][c][b]);
                }
                if b < 3 {
                    for c in 0..3 {
                        acc = fused(acc, y[j][c][r], g[j][c][b]);
                    }
                }
            }
            acc
        };
        let ys = y.map(|b| {
            let mut s = Stored::<T>::ZERO;
            for (c, col) in b.iter().enumerate() {
                *s.col_mut(c) = *col;
            }
            s
        });
        let mut out = Stored::<T>::ZERO;
        sum_mul_transpose::<T, true, 3>(&mut out, &ys.each_ref(), &g.each_ref(), &active);
        for b in 0..6 {
            for r in 0..6 {
                assert_same(out.col(b)[r], expected(b, r), &format!("({r}, {b})"));
            }
        }
    }

    #[test]
    fn block_products_match_the_generic_operations() {
        if !fma_path() {
            return;
        }
        sum_mul_transpose_matches_the_generic_operations::<f64>();
        sum_mul_transpose_matches_the_generic_operations::<f32>();
    }
}
