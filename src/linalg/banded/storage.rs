//! How a [`super::BlockBandedMatrix`] stores one 6×6 block, per scalar
//! ([`BandScalar::Block`]): six columns of six entries, column-major, each column of
//! an `f32` block padded to eight entries.
//!
//! Why `f32` is padded: the x86-64 kernels of the factorisation and solves hold one
//! 6-row column of `f32` in one 256-bit register. A column of six `f32` (24 bytes)
//! must be loaded as rows 0–3 and 4–5 and put together (three instructions, one of
//! them a shuffle), and stored the same way, because a single 256-bit access would
//! reach into the next column, and a load that spans two earlier stores cannot be
//! forwarded from the store buffer. With columns of eight (32 bytes, aligned), a
//! column is one aligned load or store. Measured on a model of the rod's
//! factorisation (3,000 block rows of bandwidth 5, each row written just before it is
//! factored, as the rod's streaming assembly does): 782–854 µs with 6-entry columns,
//! 572–627 µs with padded ones. The two padding rows are zero and stay zero: every
//! kernel's result in them is a sum of products with a zero factor. `f64` columns
//! (48 bytes) take two accesses (4 + 2 rows) either way, so `f64` blocks are not
//! padded (padding would only add a third to the band's memory).

use crate::lie::Real;
use nalgebra::SMatrix;
use std::fmt::Debug;

/// Storage of one 6×6 block (`B` = 6 rows and columns): columns of 6 entries, possibly
/// padded to [`Self::STRIDE`] entries with zeros.
pub trait BandBlock<T>: Copy + Debug + PartialEq + Send + Sync + 'static {
    /// Entries per stored column (6, or 8 where padded).
    const STRIDE: usize;
    /// The zero block.
    const ZERO: Self;
    /// Rows 0–5 of column `c` (< 6).
    fn col(&self, c: usize) -> &[T; 6];
    /// Rows 0–5 of column `c` (< 6), mutable (the padding is not reachable).
    fn col_mut(&mut self, c: usize) -> &mut [T; 6];
}

/// A scalar the block-banded solver runs on, with its choice of block storage: `f64`
/// stores a block as nalgebra stores a 6×6 matrix (`[[f64; 6]; 6]`, columns of six),
/// `f32` as [`PaddedBlockF32`] (columns padded to eight and aligned, module docs).
///
/// Implemented for `f32` and `f64`, the two [`Real`] types. Generic code that holds a
/// [`super::BlockBandedMatrix<T>`] (or builds something that does, such as a rod) bounds
/// its scalar by `T: BandScalar` instead of `T: Real`; both scalars satisfy it.
pub trait BandScalar: Real {
    /// How a 6×6 block of this scalar is stored in the band.
    type Block: BandBlock<Self>;
}

impl BandScalar for f64 {
    type Block = [[f64; 6]; 6];
}

impl BandScalar for f32 {
    type Block = PaddedBlockF32;
}

/// `f64`: the columns as nalgebra stores a 6×6 matrix.
impl BandBlock<f64> for [[f64; 6]; 6] {
    const STRIDE: usize = 6;
    const ZERO: Self = [[0.0; 6]; 6];
    #[inline(always)]
    fn col(&self, c: usize) -> &[f64; 6] {
        &self[c]
    }
    #[inline(always)]
    fn col_mut(&mut self, c: usize) -> &mut [f64; 6] {
        &mut self[c]
    }
}

/// A 6×6 block of `f32` with each column padded to eight entries (rows 6–7 zero),
/// aligned to 32 bytes, so that a column is one 256-bit register (module docs).
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PaddedBlockF32(pub(crate) [[f32; 8]; 6]);

impl BandBlock<f32> for PaddedBlockF32 {
    const STRIDE: usize = 8;
    const ZERO: Self = Self([[0.0; 8]; 6]);
    #[inline(always)]
    fn col(&self, c: usize) -> &[f32; 6] {
        let col = &self.0[c];
        // SAFETY: the first six of eight contiguous f32.
        unsafe { &*col.as_ptr().cast::<[f32; 6]>() }
    }
    #[inline(always)]
    fn col_mut(&mut self, c: usize) -> &mut [f32; 6] {
        let col = &mut self.0[c];
        // SAFETY: the first six of eight contiguous f32.
        unsafe { &mut *col.as_mut_ptr().cast::<[f32; 6]>() }
    }
}

/// The block as a matrix.
#[inline]
pub(crate) fn to_matrix<T: BandScalar>(b: &T::Block) -> SMatrix<T, 6, 6> {
    SMatrix::from_fn(|r, c| b.col(c)[r])
}

/// A matrix as a stored block (padding zero).
#[inline]
pub(crate) fn from_matrix<T: BandScalar>(m: &SMatrix<T, 6, 6>) -> T::Block {
    let mut b = <T::Block as BandBlock<T>>::ZERO;
    for c in 0..6 {
        *b.col_mut(c) = m.data.0[c];
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_blocks_are_padded_aligned_columns() {
        assert_eq!(std::mem::size_of::<PaddedBlockF32>(), 6 * 8 * 4);
        assert_eq!(std::mem::align_of::<PaddedBlockF32>(), 32);
        assert_eq!(<f32 as BandScalar>::Block::STRIDE, 8);
        assert_eq!(<f64 as BandScalar>::Block::STRIDE, 6);
        let m = SMatrix::<f32, 6, 6>::from_fn(|r, c| (6 * c + r) as f32 + 1.0);
        let b = from_matrix::<f32>(&m);
        assert_eq!(to_matrix::<f32>(&b), m);
        for col in &b.0 {
            assert_eq!(&col[6..], &[0.0, 0.0], "padding stays zero");
        }
        let m = SMatrix::<f64, 6, 6>::from_fn(|r, c| (6 * c + r) as f64 + 1.0);
        assert_eq!(to_matrix::<f64>(&from_matrix::<f64>(&m)), m);
    }
}
