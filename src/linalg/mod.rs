//! General linear algebra for the solvers above it, which knows nothing of bodies,
//! joints or rods: the layer between [`crate::lie`] and `xpbd` (crate docs: layers).
//!
//! * [`banded`]: a symmetric positive definite block-banded matrix of 6×6 blocks
//!   ([`BlockBandedMatrix`]), its in-place block Cholesky factorisation and the
//!   triangular solves, in O(n) time for a fixed block bandwidth (paper Section 8.2).
//!   A rod's λ-system and a world's direct group of joints are solved with it.
//! * [`BandScalar`]: the scalars the block-banded solver runs on (`f32` and `f64`),
//!   each with its choice of block storage ([`BandScalar::Block`]).
//!
//! The x86-64 kernels of the factorisation and solves (AVX2 + FMA, chosen at run time)
//! are private to the crate; their runtime switch, `LIE_XPBD_PORTABLE`, is described
//! in the [`banded`] docs.

pub mod banded;
pub(crate) mod simd;
#[cfg(target_arch = "x86_64")]
pub(crate) mod simd_f32;
#[cfg(target_arch = "x86_64")]
pub(crate) mod simd_f64;

pub use banded::{BandBlock, BandScalar, BandedError, BlockBandedMatrix, PaddedBlockF32};
