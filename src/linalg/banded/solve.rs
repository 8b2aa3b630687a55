//! The factorisation and the solves of a [`BlockBandedMatrix`]: the in-place block
//! Cholesky A = L Lᵀ, forward and back substitution, and the row-by-row streaming form
//! that a rod uses to evaluate, assemble, factor and forward-substitute in one pass
//! (module docs of [`super`]: algorithm).

use super::*;
use crate::linalg::simd::madd;
#[cfg(target_arch = "x86_64")]
use crate::linalg::simd_f32::{self, is_f32};

impl<T: BandScalar> BlockBandedMatrix<T> {
    /// Overwrites the assembled A with its Cholesky factor L (A = L Lᵀ, L lower
    /// triangular with positive diagonal, in the same band), in O(n·p²·6³) flops and
    /// without allocation (module docs: algorithm).
    ///
    /// # Errors
    /// [`BandedError::NotPositiveDefinite`] naming the block row and the row inside it
    /// whose pivot is not positive (relative to 64ε of its diagonal entry);
    /// [`BandedError::NonFinitePivot`] on overflow; the storage then holds a partial
    /// factor and must be [`reset`](Self::reset). [`BandedError::NotAssembling`] if
    /// already factored.
    #[inline(never)]
    pub fn factor(&mut self) -> Result<(), BandedError> {
        self.require_assembling("factor")?;
        self.state = State::Failed;
        for i in 0..self.blocks {
            self.factor_row_unchecked(i)?;
        }
        self.state = State::Factored;
        Ok(())
    }

    /// Block row i of the factorisation (module docs: algorithm), rows before i
    /// already factored, row i assembled: on the AVX2 + FMA path when the CPU has it
    /// ([`crate::linalg::simd`]), else portable.
    #[inline(always)]
    fn factor_row_unchecked(&mut self, i: usize) -> Result<(), BandedError> {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if crate::linalg::simd::fma_enabled() {
            // SAFETY: the CPU supports AVX2 and FMA (detected at run time).
            return unsafe { self.factor_row_fma(i) };
        }
        self.factor_row_with::<false>(i)
    }

    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    #[target_feature(enable = "avx2,fma")]
    fn factor_row_fma(&mut self, i: usize) -> Result<(), BandedError> {
        self.factor_row_with::<true>(i)
    }

    /// [`Self::factor_row_unchecked`] with fused multiply-adds iff `F`.
    #[inline(always)]
    fn factor_row_with<const F: bool>(&mut self, i: usize) -> Result<(), BandedError> {
        let tiny = c::<T>(64.0) * T::default_epsilon();
        let lo = self.row_start[i];
        // Rows before i (read) and row i (written): block (i, j) is cur[j − lo],
        // block (j, k) of an earlier row j is prev[offset[j] + k − row_start[j]].
        let (prev, rest) = self.band.split_at_mut(self.offset[i]);
        let cur = &mut rest[..i - lo + 1];
        for j in lo..i {
            let (left, at) = cur.split_at_mut(j - lo);
            let s = &mut at[0];
            let first_j = self.row_start[j];
            let row_j = &prev[self.offset[j]..self.offset[j + 1]];
            let k0 = lo.max(first_j);
            sub_sum_mul_transpose::<T, F>(s, &left[k0 - lo..], &row_j[k0 - first_j..j - first_j]);
            solve_right_lower_transpose::<T, F>(s, &row_j[j - first_j], &self.inv_diag[j]);
        }
        let (left, at) = cur.split_at_mut(i - lo);
        let s = &mut at[0];
        let diagonal: [T; B] = std::array::from_fn(|r| s.col(r)[r]);
        sub_sum_mul_self_transpose_lower::<T, F>(s, left);
        self.inv_diag[i] = cholesky_6::<T, F>(s, &diagonal, tiny, i)?;
        Ok(())
    }

    /// Starts a streaming factorisation, for assembly code of the crate that
    /// interleaves assembling and factoring: block row i may be factored by
    /// [`factor_row`](Self::factor_row) once rows 0 … i are assembled (a row's
    /// factorisation reads only its own blocks and the rows above it), and then
    /// forward-substituted by [`forward_row`](Self::forward_row) while later rows are
    /// still being assembled, so that each row is processed while it is in cache.
    /// Every block of every row's profile must be overwritten before its row is
    /// factored (as after [`begin_overwrite`](Self::begin_overwrite)). The result is
    /// the same, operation for operation, as [`factor`](Self::factor) after the whole
    /// assembly. No allocation.
    #[inline]
    pub(crate) fn begin_streaming_factor(&mut self) {
        self.state = State::Streaming;
    }

    /// Factors block row `i` of a streaming factorisation, rows 0 … i − 1 factored
    /// (in order) before.
    ///
    /// # Errors
    /// As [`factor`](Self::factor); the matrix is then failed (a partial factor).
    #[inline(never)]
    pub(crate) fn factor_row(&mut self, i: usize) -> Result<(), BandedError> {
        debug_assert!(self.state == State::Streaming && i < self.blocks);
        let result = self.factor_row_unchecked(i);
        if result.is_err() {
            self.state = State::Failed;
        }
        result
    }

    /// Block row i of the forward substitution L y = b of a streaming factorisation:
    /// rows 0 … i of L factored, `rhs` holding y in the rows before i and b in row i.
    #[inline(never)]
    pub(crate) fn forward_row(&self, rhs: &mut [T], i: usize) {
        debug_assert!(self.state == State::Streaming && rhs.len() == self.dim());
        self.forward_row_unchecked(rhs, i);
    }

    /// Ends a streaming factorisation whose rows were all factored: the matrix holds L.
    #[inline]
    pub(crate) fn end_streaming_factor(&mut self) {
        debug_assert!(self.state == State::Streaming);
        self.state = State::Factored;
    }

    /// Block row i of the forward substitution (dispatched as
    /// [`Self::factor_row_unchecked`]).
    #[inline(always)]
    fn forward_row_unchecked(&self, rhs: &mut [T], i: usize) {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if crate::linalg::simd::fma_enabled() {
            // SAFETY: the CPU supports AVX2 and FMA (detected at run time).
            return unsafe { self.forward_rows_fma(rhs, i..i + 1) };
        }
        self.forward_rows_with::<false>(rhs, i..i + 1);
    }

    /// The whole forward substitution L y = b (dispatched once).
    fn forward_substitute_unchecked(&self, rhs: &mut [T]) {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if crate::linalg::simd::fma_enabled() {
            // SAFETY: the CPU supports AVX2 and FMA (detected at run time).
            return unsafe { self.forward_rows_fma(rhs, 0..self.blocks) };
        }
        self.forward_rows_with::<false>(rhs, 0..self.blocks);
    }

    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    #[target_feature(enable = "avx2,fma")]
    fn forward_rows_fma(&self, rhs: &mut [T], rows: std::ops::Range<usize>) {
        self.forward_rows_with::<true>(rhs, rows);
    }

    /// Block rows `rows` (in order) of L y = b, the rows before them already y: row i
    /// loses Σ_j L_ij y_j (even and odd columns of each L_ij in two accumulators),
    /// then the 6×6 forward solve with L_ii.
    #[inline(always)]
    fn forward_rows_with<const F: bool>(&self, rhs: &mut [T], rows: std::ops::Range<usize>) {
        for i in rows {
            let mut t = seg(rhs, i);
            // The off-diagonal part: on 8 lanes in f32 on the FMA path, else generic.
            #[allow(unused_mut)]
            let mut done = false;
            #[cfg(target_arch = "x86_64")]
            if F && is_f32::<T>() {
                // SAFETY: as in back_rows_with (T is f32, the FMA path).
                unsafe {
                    let t32 = &mut *(&mut t as *mut [T; B]).cast::<[f32; B]>();
                    let mut acc = simd_f32::ForwardSubstitution::new(t32);
                    for j in self.row_start[i]..i {
                        let l = crate::linalg::simd::reinterpret(&self.band[self.slot(i, j)]);
                        let y = &*rhs[B * j..B * j + B].as_ptr().cast::<[f32; B]>();
                        acc.add(l, y);
                    }
                    acc.finish(t32);
                }
                done = true;
            }
            if !done {
                let mut u = [T::zero(); B];
                for j in self.row_start[i]..i {
                    let l = &self.band[self.slot(i, j)];
                    let yj = seg(rhs, j);
                    for h in 0..B / 2 {
                        sub_scaled::<T, F>(&mut t, l.col(2 * h), yj[2 * h]);
                        sub_scaled::<T, F>(&mut u, l.col(2 * h + 1), yj[2 * h + 1]);
                    }
                }
                for (a, b) in t.iter_mut().zip(&u) {
                    *a += *b;
                }
            }
            forward_6::<T, F>(&mut t, &self.band[self.slot(i, i)], &self.inv_diag[i]);
            put(rhs, i, &t);
        }
    }

    /// The back substitution Lᵀ x = y (dispatched as [`Self::factor_row_unchecked`]).
    fn back_substitute_unchecked(&self, rhs: &mut [T]) {
        self.back_rows(rhs, 0..self.blocks);
    }

    /// Block rows `rows` of the back substitution Lᵀ x = y, last row first, for a
    /// factored matrix (or the end of a streaming factorisation): `rhs` holds x in
    /// the rows after `rows` and y in `rows`, which then hold x. A rod's streaming
    /// projection solves an element's rows at a time and uses them at once. No
    /// checks beyond debug assertions; the caller checks the solution is finite.
    #[inline(never)]
    pub(crate) fn back_rows(&self, rhs: &mut [T], rows: std::ops::Range<usize>) {
        debug_assert!(self.state == State::Factored && rhs.len() == self.dim());
        debug_assert!(rows.end <= self.blocks);
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if crate::linalg::simd::fma_enabled() {
            // SAFETY: the CPU supports AVX2 and FMA (detected at run time).
            return unsafe { self.back_rows_fma(rhs, rows) };
        }
        self.back_rows_with::<false>(rhs, rows);
    }

    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    #[target_feature(enable = "avx2,fma")]
    fn back_rows_fma(&self, rhs: &mut [T], rows: std::ops::Range<usize>) {
        self.back_rows_with::<true>(rhs, rows);
    }

    #[inline(always)]
    fn back_rows_with<const F: bool>(&self, rhs: &mut [T], rows: std::ops::Range<usize>) {
        let (n, p) = (self.blocks, self.bandwidth);
        for i in rows.rev() {
            let mut t = seg(rhs, i);
            // The off-diagonal part: on 8 lanes in f32 on the FMA path, else generic.
            #[allow(unused_mut)]
            let mut done = false;
            #[cfg(target_arch = "x86_64")]
            if F && is_f32::<T>() {
                // SAFETY: T is f32 (the casts are identities, the blocks padded f32
                // blocks), and F is only set on the AVX2 + FMA path, whose CPU support
                // was detected (crate::linalg::simd). Shared with forward_rows_with.
                unsafe {
                    let mut acc = simd_f32::BackSubstitution::new();
                    for k in i + 1..n.min(i + p + 1) {
                        if self.row_start[k] > i {
                            continue;
                        }
                        let l = crate::linalg::simd::reinterpret(&self.band[self.slot(k, i)]);
                        let x = &*rhs[B * k..B * k + B].as_ptr().cast::<[f32; B]>();
                        acc.add(l, x);
                    }
                    acc.subtract_from(&mut *(&mut t as *mut [T; B]).cast::<[f32; B]>());
                }
                done = true;
            }
            if !done {
                for k in i + 1..n.min(i + p + 1) {
                    if self.row_start[k] > i {
                        continue;
                    }
                    let l = &self.band[self.slot(k, i)];
                    let xk = seg(rhs, k);
                    for (col, tc) in t.iter_mut().enumerate() {
                        let l = l.col(col);
                        let mut acc = l[0] * xk[0];
                        let mut acc2 = l[1] * xk[1];
                        for h in 1..B / 2 {
                            acc = madd::<T, F>(acc, l[2 * h], xk[2 * h]);
                            acc2 = madd::<T, F>(acc2, l[2 * h + 1], xk[2 * h + 1]);
                        }
                        *tc -= acc + acc2;
                    }
                }
            }
            back_6::<T, F>(&mut t, &self.band[self.slot(i, i)], &self.inv_diag[i]);
            put(rhs, i, &t);
        }
    }

    /// Solves A x = b with the factor: `rhs` holds b on entry and x on return (L y = b,
    /// then Lᵀ x = y), in O(n·p·36) flops and without allocation.
    ///
    /// # Errors
    /// [`BandedError::NotFactored`] before a successful [`factor`](Self::factor);
    /// [`BandedError::LengthMismatch`] unless `rhs` has 6n entries;
    /// [`BandedError::NonFiniteVector`] for a non-finite entry of b (`rhs` unchanged) or
    /// of x (overflow; `rhs` then holds the overflowed x).
    #[inline(never)]
    pub fn solve_in_place(&self, rhs: &mut [T]) -> Result<(), BandedError> {
        if self.state != State::Factored {
            return Err(BandedError::NotFactored {
                operation: "solve_in_place",
            });
        }
        self.check_len("right-hand side", rhs.len())?;
        if let Some(index) = first_non_finite_entry(rhs) {
            return Err(BandedError::NonFiniteVector {
                what: "right-hand side",
                index,
            });
        }
        // Forward: L y = b, then back: Lᵀ x = y.
        self.forward_substitute_unchecked(rhs);
        self.back_substitute_unchecked(rhs);
        if let Some(index) = first_non_finite_entry(rhs) {
            return Err(BandedError::NonFiniteVector {
                what: "solution",
                index,
            });
        }
        Ok(())
    }

    /// [`solve_in_place`](Self::solve_in_place) on a `DVector` of 6n entries (b in, x
    /// out). No allocation.
    ///
    /// # Errors
    /// As [`solve_in_place`](Self::solve_in_place).
    pub fn solve_vector_in_place(&self, rhs: &mut DVector<T>) -> Result<(), BandedError> {
        self.solve_in_place(rhs.as_mut_slice())
    }
}
