//! 8-lane f32 kernels of the AVX2 + FMA path (private, x86-64): a 6-row block column
//! of f32 is one 256-bit register (rows 0–5 in lanes 0–5; lanes 6–7 zero: the
//! padding), so a column multiply-add is one instruction, where the generic kernels
//! need two (4 + 2 lanes) in f32 as in f64.
//!
//! A column of the band's blocks ([`PaddedBlockF32`]: columns of eight, rows 6–7
//! zero, aligned to 32 bytes) is one aligned 256-bit load or store. Before the band's
//! f32 columns were padded, a 6-float column was loaded and stored as rows 0–3 and
//! rows 4–5 (a 128-bit and a 64-bit access), never as one 256-bit access over the
//! column boundary: the kernels run back to back on the same blocks (the assembly
//! writes a block row that the factorisation reads at once; one block of a row is
//! solved, then read by the next), and a load is forwarded from the store buffer only
//! when one earlier store covers it. A 256-bit load across two column stores waited
//! for both to reach the cache: with it, one factorisation and solve of 2,000 block
//! rows (criterion `rod_banded_f32_p*/factor_solve/2000`) took 360.5, 532.9 and
//! 771.3 µs for bandwidths 1, 3 and 5; with the split accesses 345.0, 460.2 and
//! 704.8 µs (f64: 348, 540 and 952 µs). Six-float vectors that are not block columns
//! (a block row of the right-hand side) are still loaded as 4 + 2 ([`load6`]).
//! Each kernel performs, entry by entry, the same fused operations in the same order
//! as the generic kernel it replaces on the FMA path, so the results are identical
//! (up to the sign of zero sums). Only called with `T = f32` ([`is_f32`]) on the FMA
//! path.

use crate::linalg::banded::PaddedBlockF32;
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

/// Column `c` of a padded block (lanes 6–7 its zero padding): one aligned load.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn load_pcol(b: &PaddedBlockF32, c: usize) -> __m256 {
    // SAFETY: the 8 floats of column c, 32-byte aligned (repr(align(32)), 32-byte
    // columns).
    unsafe { _mm256_load_ps(b.0[c].as_ptr()) }
}

/// Stores all eight lanes of `v` to column `c` of a padded block (lanes 6–7 must be
/// zero, the padding).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn store_pcol(b: &mut PaddedBlockF32, c: usize, v: __m256) {
    // SAFETY: as in load_pcol.
    unsafe { _mm256_store_ps(b.0[c].as_mut_ptr(), v) }
}

/// Six floats from `p` in lanes 0–5 (lanes 6–7 zero), loaded as 4 + 2 (module docs).
///
/// # Safety
/// `p` is valid for reading six floats.
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn load6(p: *const f32) -> __m256 {
    // SAFETY: floats 0–3 and 4–5 of p (caller).
    unsafe {
        let lo = _mm_loadu_ps(p);
        let hi = _mm_castsi128_ps(_mm_loadu_si64(p.add(4).cast::<u8>()));
        _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1)
    }
}

/// s −= Σ_k a_k b_kᵀ (all 36 entries), as `banded::kernels::sub_sum_mul_transpose`:
/// per column c of s, y_c loses a_k,t·b_k,ct for even t and z_c (from zero) for odd
/// t, and s_c = y_c + z_c; three columns at a time.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn sub_sum_mul_transpose(
    s: &mut PaddedBlockF32,
    a: &[PaddedBlockF32],
    b: &[PaddedBlockF32],
) {
    for c0 in [0, 3] {
        let mut y = [load_pcol(s, c0), load_pcol(s, c0 + 1), load_pcol(s, c0 + 2)];
        let mut z = [_mm256_setzero_ps(); 3];
        for (ak, bk) in a.iter().zip(b) {
            for h in 0..3 {
                let (t0, t1) = (2 * h, 2 * h + 1);
                let (a0, a1) = (load_pcol(ak, t0), load_pcol(ak, t1));
                for i in 0..3 {
                    y[i] = _mm256_fnmadd_ps(a0, _mm256_set1_ps(bk.0[t0][c0 + i]), y[i]);
                    z[i] = _mm256_fnmadd_ps(a1, _mm256_set1_ps(bk.0[t1][c0 + i]), z[i]);
                }
            }
        }
        for i in 0..3 {
            store_pcol(s, c0 + i, _mm256_add_ps(y[i], z[i]));
        }
    }
}

/// s ← s l⁻ᵀ for lower-triangular l with reciprocal diagonal `inv`, as
/// `banded::kernels::solve_right_lower_transpose`: column c is
/// (s_c − Σ_{t<c} x_t l_ct)·inv_c, the columns held in registers until all are solved.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) fn solve_right_lower_transpose(
    s: &mut PaddedBlockF32,
    l: &PaddedBlockF32,
    inv: &[f32; 6],
) {
    let mut x = [0, 1, 2, 3, 4, 5].map(|c| load_pcol(s, c));
    for c in 0..6 {
        let mut v = x[c];
        for (t, xt) in x.iter().enumerate().take(c) {
            v = _mm256_fnmadd_ps(*xt, _mm256_set1_ps(l.0[t][c]), v);
        }
        x[c] = _mm256_mul_ps(v, _mm256_set1_ps(inv[c]));
    }
    for (c, v) in x.into_iter().enumerate() {
        store_pcol(s, c, v);
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
pub(crate) fn cholesky_6(
    s: &mut PaddedBlockF32,
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
            let mut v = load_pcol(s, c);
            for t in 0..c {
                v = _mm256_fnmadd_ps(x[t], _mm256_set1_ps(s.0[t][c]), v);
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
            store_pcol(s, c, x[c]);
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

/// The off-diagonal part of one block row i of the forward substitution Ly = b
/// (`banded::solve`): t −= Σ_j L_ij y_j over the blocks left of the diagonal and the
/// solved rows y_j, even columns of each L_ij into t and odd ones into a second
/// accumulator u (from zero), then t + u: the generic kernel's fused operations in
/// its order, per row (bit-identical), with a column of L_ij one aligned load.
pub(crate) struct ForwardSubstitution(__m256, __m256);

impl ForwardSubstitution {
    /// Starts from t = b_i.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn new(t: &[f32; 6]) -> Self {
        // SAFETY: six floats of t.
        Self(unsafe { load6(t.as_ptr()) }, _mm256_setzero_ps())
    }

    /// Subtracts block l = L_ij times the solved y_j.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn add(&mut self, l: &PaddedBlockF32, y: &[f32; 6]) {
        for h in 0..3 {
            let (c0, c1) = (2 * h, 2 * h + 1);
            self.0 = _mm256_fnmadd_ps(load_pcol(l, c0), _mm256_set1_ps(y[c0]), self.0);
            self.1 = _mm256_fnmadd_ps(load_pcol(l, c1), _mm256_set1_ps(y[c1]), self.1);
        }
    }

    /// t + u into `t`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn finish(self, t: &mut [f32; 6]) {
        let v = _mm256_add_ps(self.0, self.1);
        let mut s = [0.0f32; 8];
        // SAFETY: eight floats into an array of 8.
        unsafe { _mm256_storeu_ps(s.as_mut_ptr(), v) };
        t.copy_from_slice(&s[..6]);
    }
}

/// The off-diagonal part of one block row i of the back substitution Lᵀx = y
/// (`banded::solve`): t_c −= Σ_k Σ_r l_k,rc·x_k,r over the blocks l_k = L_ki below
/// the diagonal and the solved rows x_k, added one block at a time
/// ([`BackSubstitution::add`]) and subtracted at the end
/// ([`BackSubstitution::subtract_from`]). Column c of each block is multiplied lane
/// by lane with x_k into the accumulator of column c (one aligned load and one fused
/// multiply-add per column, where the generic kernel forms six scalar products), and
/// the six accumulators are summed across their lanes once per row.
///
/// The sums run in another order than the generic kernel's (which sums each block's
/// six products per column, even and odd rows apart, block after block), so the
/// results differ from it by round-off; the streaming and two-pass rod solves both use
/// this path and stay identical to each other.
pub(crate) struct BackSubstitution([__m256; 6]);

impl BackSubstitution {
    /// No blocks yet.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn new() -> Self {
        Self([_mm256_setzero_ps(); 6])
    }

    /// Adds block l = L_ki with the solved x_k.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn add(&mut self, l: &PaddedBlockF32, x: &[f32; 6]) {
        // SAFETY: six floats of x.
        let xv = unsafe { load6(x.as_ptr()) };
        for (c, a) in self.0.iter_mut().enumerate() {
            *a = _mm256_fmadd_ps(load_pcol(l, c), xv, *a);
        }
    }

    /// t_c −= (lane sum of accumulator c), c = 0 … 5.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn subtract_from(self, t: &mut [f32; 6]) {
        let a = self.0;
        // Lanes 6–7 of every accumulator are zero (the padding, and x's lanes 6–7).
        // Pairwise horizontal adds within each 128-bit half, then the two halves.
        let h01 = _mm256_hadd_ps(a[0], a[1]);
        let h23 = _mm256_hadd_ps(a[2], a[3]);
        let h45 = _mm256_hadd_ps(a[4], a[5]);
        let h0123 = _mm256_hadd_ps(h01, h23);
        let h4545 = _mm256_hadd_ps(h45, h45);
        let s0123 = _mm_add_ps(
            _mm256_castps256_ps128(h0123),
            _mm256_extractf128_ps(h0123, 1),
        );
        let s45 = _mm_add_ps(
            _mm256_castps256_ps128(h4545),
            _mm256_extractf128_ps(h4545, 1),
        );
        let mut s = [0.0f32; 8];
        // SAFETY: 4 + 4 floats into an array of 8.
        unsafe {
            _mm_storeu_ps(s.as_mut_ptr(), s0123);
            _mm_storeu_ps(s.as_mut_ptr().add(4), s45);
        }
        for c in 0..6 {
            t[c] -= s[c];
        }
    }
}

#[cfg(test)]
// Entries are addressed by (row, column) as in the formulas they check.
#[allow(clippy::needless_range_loop)]
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
            let mut s = pad(&a);
            // SAFETY: the CPU has AVX2 and FMA (checked above).
            let got = unsafe { cholesky_6(&mut s, &diagonal, tiny) };
            match (expected, got) {
                (Ok((e, ei)), Ok(gi)) => {
                    for c in 0..6 {
                        assert!(same(ei[c], gi[c]), "{case} {c}");
                        for r in 0..6 {
                            assert!(same(s.0[c][r], e[c][r]), "{case} {r} {c}");
                        }
                        assert_eq!(&s.0[c][6..], &[0.0, 0.0], "{case}: padding");
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

    /// A padded block holding `c` (padding zero).
    fn pad(c: &Cols32) -> PaddedBlockF32 {
        let mut p = PaddedBlockF32([[0.0; 8]; 6]);
        for (pc, cc) in p.0.iter_mut().zip(c) {
            pc[..6].copy_from_slice(cc);
        }
        p
    }

    /// `count` blocks L_j, as many 6-vectors and a right side t₀: the inputs of a
    /// forward or back substitution step.
    fn substitution_inputs(v: &mut Values, count: usize) -> (Vec<Cols32>, Vec<[f32; 6]>, [f32; 6]) {
        let l = (0..count).map(|_| v.block()).collect();
        let y = (0..count)
            .map(|_| std::array::from_fn(|_| v.next()))
            .collect();
        (l, y, std::array::from_fn(|_| v.next()))
    }

    #[test]
    fn forward_substitution_matches_the_generic_operations() {
        if !fma_path() {
            return;
        }
        let mut v = Values(11);
        for count in 0..5 {
            let (l, y, t0) = substitution_inputs(&mut v, count);
            // t −= Σ_j L_j y_j: even columns into t, odd ones into u, then t + u.
            let expected: [f32; 6] = std::array::from_fn(|r| {
                let (mut t, mut u) = (t0[r], 0.0);
                for (lj, yj) in l.iter().zip(&y) {
                    for h in 0..3 {
                        t = msub(t, lj[2 * h][r], yj[2 * h]);
                        u = msub(u, lj[2 * h + 1][r], yj[2 * h + 1]);
                    }
                }
                t + u
            });
            let mut t = t0;
            // SAFETY: as above.
            unsafe {
                let mut acc = ForwardSubstitution::new(&t);
                for (lj, yj) in l.iter().zip(&y) {
                    acc.add(&pad(lj), yj);
                }
                acc.finish(&mut t);
            }
            for r in 0..6 {
                assert!(same(t[r], expected[r]), "{count} blocks, row {r}");
            }
        }
    }

    /// The back substitution's sums run in their own order: checked against the sums
    /// in f64, within the bound of recursive summation, γ·Σ|terms| with γ = n·ε for
    /// n = 6·count + 1 rounded operations per entry (each product fused with its
    /// addition, then the lane sums and the subtraction).
    #[test]
    fn back_substitution_sums_the_transposed_products() {
        if !fma_path() {
            return;
        }
        let mut v = Values(5);
        for count in 0..6 {
            let (l, x, t0) = substitution_inputs(&mut v, count);
            let mut t = t0;
            // SAFETY: as above.
            unsafe {
                let mut acc = BackSubstitution::new();
                for (lk, xk) in l.iter().zip(&x) {
                    acc.add(&pad(lk), xk);
                }
                acc.subtract_from(&mut t);
            }
            for c in 0..6 {
                let (mut exact, mut size) = (f64::from(t0[c]), f64::from(t0[c]).abs());
                for (lk, xk) in l.iter().zip(&x) {
                    for r in 0..6 {
                        let p = f64::from(lk[c][r]) * f64::from(xk[r]);
                        exact -= p;
                        size += p.abs();
                    }
                }
                let bound = (6 * count + 1) as f64 * f64::from(f32::EPSILON) * size;
                let err = (f64::from(t[c]) - exact).abs();
                assert!(
                    err <= bound,
                    "{count} blocks, column {c}: {err:e} > {bound:e}"
                );
            }
        }
    }
}
