//! A symmetric positive definite block-banded matrix of 6×6 blocks, its in-place block
//! Cholesky factorisation A = L Lᵀ, and the forward and back substitutions that solve
//! A x = b with it (paper Section 8.2, where it solves a Cosserat rod's λ-system; the
//! world's direct groups of joints solve theirs with it too).
//!
//! # Band and profile
//! Block (i, j) of A is zero for |i − j| > p, the block bandwidth. Within the band, a
//! row may have structural zeros left of its first non-zero block: its profile (or
//! envelope) starts there. [`BlockBandedMatrix::set_profile`] stores each row from its
//! first non-zero block on only (a skyline layout), and Cholesky creates no fill
//! outside the profile, so the factor fits the same storage. (A rod's bandwidth and
//! profile, and what the profile saves there, are derived in the rod module's
//! `banded` docs.)
//!
//! # Algorithm and cost
//! Storage is the lower band only: for each block row i its blocks (i, sᵢ) … (i, i)
//! from its profile start sᵢ (i − p, or 0 in the first rows, unless set), as
//! fixed-size column-major 6×6 blocks ([`BandScalar::Block`]: for `f64` six columns of
//! six, for `f32` six columns padded to eight and aligned, [`PaddedBlockF32`]), rows
//! one after the other in one flat `Vec`. [`BlockBandedMatrix::block`] returns a
//! block as an `SMatrix<T, 6, 6>`.
//! [`BlockBandedMatrix::factor`] overwrites it with the Cholesky factor L (same
//! profile: Cholesky creates no fill left of a row's first non-zero), row by row
//! (left-looking), shown for the full band:
//!
//! ```text
//! for i = 0 … n−1, for j = max(0, i−p) … i:
//!     S = A_ij − Σ_{k = max(0, i−p)}^{j−1} L_ik L_jkᵀ
//!     j < i:  L_ij = S L_jj⁻ᵀ                 (triangular solve on the right)
//!     j = i:  L_ii = chol(S)                  (unrolled 6×6 Cholesky, lower triangle)
//! ```
//!
//! which is p(p + 1)/2 block products (6³ multiply-adds each; two thirds of that for
//! the p diagonal updates, which skip the row pairs above the diagonal), p block
//! triangular solves and one 6×6 Cholesky per block row:
//! O(n·p²·6³) flops. The reciprocals of the diagonals of the L_ii are kept, so the
//! factorisation and the solves divide only in those 6n reciprocals. The solve
//! ([`BlockBandedMatrix::solve_in_place`]) is L y = b then Lᵀ x = y, 2·p block
//! matrix–vector products and two 6×6 triangular solves per block row: O(n·p·36).
//!
//! On x86-64 CPUs with AVX2 and FMA the factorisation and the solves run with fused
//! multiply-adds (detected at run time, `LIE_XPBD_PORTABLE` forces the portable code),
//! and the block products L_ik L_jkᵀ and triangular solves take a 6-row block column
//! as registers: in f32 one 8-lane register (a padded column, loaded and stored with
//! one aligned access; its padding lanes compute zeros), one instruction per column
//! multiply-add, in f64 a 4-lane and a 2-lane register, two instructions (the compiler
//! leaves the generic f64 code mostly scalar). Both perform the generic code's fused
//! operations in the same order, so the results do not change, except in the f32 back
//! substitution, which sums each row's transposed products lane by lane and then
//! across the lanes (one multiply-add per block column instead of six scalar ones):
//! there f32 results differ from the portable path's by round-off.
//!
//! Neither allocates: the band and the 6n reciprocals are allocated by
//! [`BlockBandedMatrix::new`] (or grown by [`BlockBandedMatrix::reshape`]) and reused
//! after [`BlockBandedMatrix::reset`].
//!
//! # Example
//! A block-tridiagonal system (p = 1) of three block rows:
//!
//! ```
//! use lie_xpbd::nalgebra::{SMatrix, SVector};
//! use lie_xpbd::linalg::banded::{BandedError, BlockBandedMatrix};
//!
//! let mut a = BlockBandedMatrix::<f64>::new(3, 1)?;
//! let coupling = SMatrix::<f64, 6, 6>::from_element(-0.1);
//! for i in 0..3 {
//!     a.add_diagonal(i, &SVector::<f64, 6>::repeat(4.0))?;
//!     if i > 0 {
//!         a.add_block(i, i - 1, &coupling)?; // lower part only: (i, i − 1)
//!     }
//! }
//! let assembled = a.clone(); // factor() overwrites A with L
//! let b: Vec<f64> = (0..18).map(|k| k as f64).collect();
//! let mut x = b.clone();
//! a.factor()?;
//! a.solve_in_place(&mut x)?; // x = A⁻¹ b
//! let mut ax = vec![0.0; 18];
//! assembled.mul_vec(&x, &mut ax)?;
//! assert!(ax.iter().zip(&b).all(|(u, v)| (u - v).abs() < 1e-12));
//! // The storage now holds L: assembling needs reset() first.
//! assert!(matches!(a.add_block(1, 0, &coupling), Err(BandedError::NotAssembling { .. })));
//! # Ok::<(), BandedError>(())
//! ```

use crate::lie::real::c;
use nalgebra::{DVector, SMatrix, SVector};

mod assemble;
mod error;
mod kernels;
mod solve;
mod storage;
pub use error::BandedError;
use kernels::*;
pub(crate) use storage::{from_matrix, to_matrix};
pub use storage::{BandBlock, BandScalar, PaddedBlockF32};

/// Rows (and columns) of one block: 6, the rows of a rigid body's pose (3 position,
/// 3 rotation), of a rod's Gauss-point constraint (108) and of a full joint.
pub const BLOCK_SIZE: usize = 6;

const B: usize = BLOCK_SIZE;

/// One 6×6 block of a [`BlockBandedMatrix`].
pub type Block<T> = SMatrix<T, BLOCK_SIZE, BLOCK_SIZE>;

/// Columns of a block, as nalgebra stores them (column-major, `data.0[column][row]`).
pub(crate) type Cols<T> = [[T; B]; B];

/// One block as the band stores it ([`BandScalar::Block`]).
pub(crate) type Stored<T> = <T as BandScalar>::Block;

/// What the band storage currently holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// The matrix A being assembled.
    Assembling,
    /// Its Cholesky factor L.
    Factored,
    /// A partial factor left by a failed [`BlockBandedMatrix::factor`].
    Failed,
    /// Rows being assembled and factored in order
    /// ([`BlockBandedMatrix::begin_streaming_factor`]).
    Streaming,
}

/// A symmetric positive definite matrix of n × n blocks of 6×6 with block bandwidth p
/// (blocks (i, j) with |i − j| > p are zero), stored as its lower band, and factored in
/// place into its Cholesky factor L (A = L Lᵀ) to solve A x = b (module docs: layout,
/// algorithm, costs; paper Section 8.2).
///
/// Life cycle: [`new`](Self::new) → assemble with [`add_block`](Self::add_block),
/// [`add_diagonal`](Self::add_diagonal), [`set_diagonal`](Self::set_diagonal) →
/// [`factor`](Self::factor) → any number of [`solve_in_place`](Self::solve_in_place) →
/// [`reset`](Self::reset) (or [`reshape`](Self::reshape)) → assemble again. After
/// construction nothing allocates except a `reshape` to more storage than ever held.
///
/// Units are those of the system (for a rod's λ-system, A is in the units of C per unit
/// of λ); the type does not interpret them.
#[derive(Debug, Clone)]
pub struct BlockBandedMatrix<T: BandScalar> {
    /// Number of block rows n.
    blocks: usize,
    /// Block bandwidth p (≤ n − 1).
    bandwidth: usize,
    /// Block (i, j), `row_start[i]` ≤ j ≤ i, at `offset[i] + j − row_start[i]`.
    band: Vec<Stored<T>>,
    /// Per block row i the index in `band` of its first stored block (n + 1
    /// entries, the last one the number of stored blocks).
    offset: Vec<usize>,
    /// Reciprocals of the diagonal entries of L_ii (valid when factored).
    inv_diag: Vec<[T; B]>,
    /// Per block row i the first block column of its profile (i − p unless set by
    /// [`BlockBandedMatrix::set_row_start`]): blocks left of it are zero in A and in L.
    row_start: Vec<usize>,
    state: State,
}

impl<T: BandScalar> BlockBandedMatrix<T> {
    /// A zero matrix of `blocks` × `blocks` blocks of 6×6 (6·`blocks` rows) with block
    /// bandwidth `bandwidth` (number of non-zero block sub-diagonals; 0 is
    /// block-diagonal, 1 block-tridiagonal; 2q − 1 for a rod of q Gauss points per element). A
    /// bandwidth above `blocks − 1` is stored as `blocks − 1` (the band is then the
    /// whole lower triangle). Allocates at most (p + 1)·n blocks and 6n scalars, once.
    ///
    /// # Errors
    /// [`BandedError::TooLarge`] if the storage size overflows `usize`,
    /// [`BandedError::OutOfMemory`] if it cannot be allocated.
    pub fn new(blocks: usize, bandwidth: usize) -> Result<Self, BandedError> {
        let mut m = Self {
            blocks: 0,
            bandwidth: 0,
            band: Vec::new(),
            offset: Vec::new(),
            inv_diag: Vec::new(),
            row_start: Vec::new(),
            state: State::Assembling,
        };
        m.reshape(blocks, bandwidth)?;
        Ok(m)
    }

    /// Changes the shape to `blocks` block rows and block bandwidth `bandwidth` (clamped
    /// as in [`new`](Self::new)) and clears to zero, ready to assemble. Reuses the
    /// storage; allocates only if the new band is larger than any held before.
    ///
    /// # Errors
    /// [`BandedError::TooLarge`] if the storage size overflows `usize`,
    /// [`BandedError::OutOfMemory`] if it cannot be allocated; the matrix is then
    /// unchanged (its storage may have grown).
    pub fn reshape(&mut self, blocks: usize, bandwidth: usize) -> Result<(), BandedError> {
        let p = bandwidth.min(blocks.saturating_sub(1));
        let len = blocks
            .checked_mul(p + 1)
            .filter(|len| len.checked_mul(std::mem::size_of::<Stored<T>>()).is_some())
            .ok_or(BandedError::TooLarge { blocks, bandwidth })?;
        // Capacity for the new shape first, fallibly: a refused allocation is an error,
        // not an abort of the process.
        let oom = || BandedError::OutOfMemory {
            blocks,
            bandwidth,
            bytes: len * std::mem::size_of::<Stored<T>>(),
        };
        self.band
            .try_reserve(len.saturating_sub(self.band.len()))
            .map_err(|_| oom())?;
        self.inv_diag
            .try_reserve(blocks.saturating_sub(self.inv_diag.len()))
            .map_err(|_| oom())?;
        self.row_start
            .try_reserve(blocks.saturating_sub(self.row_start.len()))
            .map_err(|_| oom())?;
        self.offset
            .try_reserve((blocks + 1).saturating_sub(self.offset.len()))
            .map_err(|_| oom())?;
        self.blocks = blocks;
        self.bandwidth = p;
        // The band rows are shorter in the first p rows: reserve the full count, so
        // that no later profile change allocates.
        self.band.clear();
        self.band.reserve(len);
        self.inv_diag.clear();
        self.inv_diag.resize(blocks, [T::zero(); B]);
        self.row_start.clear();
        self.row_start
            .extend((0..blocks).map(|i| i.saturating_sub(p)));
        self.offset.clear();
        self.offset.reserve(blocks + 1);
        self.lay_out();
        self.state = State::Assembling;
        Ok(())
    }

    /// Recomputes `offset` from `row_start` and sizes the band to it, all zero.
    fn lay_out(&mut self) {
        self.offset.clear();
        let mut next = 0;
        for (i, &first) in self.row_start.iter().enumerate() {
            self.offset.push(next);
            next += i - first + 1;
        }
        self.offset.push(next);
        self.band.clear();
        self.band.resize(next, Stored::<T>::ZERO);
    }

    /// Number of 6×6 blocks stored: (p + 1)·n − p(p + 1)/2 for the full band, fewer
    /// with a profile ([`set_profile`](Self::set_profile)).
    pub fn stored_blocks(&self) -> usize {
        self.band.len()
    }

    /// Sets every block to zero, ready to assemble a new matrix of the same shape (also
    /// after a factorisation, successful or failed). No allocation.
    pub fn reset(&mut self) {
        self.band.fill(Stored::<T>::ZERO);
        self.state = State::Assembling;
    }

    /// Number of block rows (and block columns) n.
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// Number of scalar rows (and columns), 6n.
    pub fn dim(&self) -> usize {
        self.blocks * B
    }

    /// Block bandwidth p: blocks (i, j) with |i − j| > p are zero.
    pub fn bandwidth(&self) -> usize {
        self.bandwidth
    }

    /// Declares that block row `row` has no non-zero blocks left of block column
    /// `first` (its profile, or envelope, starts there; a `first` below row − p means
    /// the whole band). Cholesky creates no fill left of a row's first non-zero
    /// (Section 8.2: the factor has the profile of A), so [`factor`](Self::factor)
    /// and the solves skip those blocks: for a rod's Gauss points, row e·q + r needs
    /// only the q + r + 1 blocks from column (e − 1)·q on, not all 2q of the band
    /// (module docs). Only the row's profile is stored: the blocks of the row left of
    /// `first` are dropped (adding to them later is an error), blocks newly inside it
    /// are zero, and the rows after it move, in O(stored blocks) without allocation
    /// ([`set_profile`](Self::set_profile) sets every row at once). Kept by
    /// [`reset`](Self::reset), cleared by [`reshape`](Self::reshape).
    ///
    /// # Errors
    /// [`BandedError::OutOfRange`] for row ≥ n; [`BandedError::UpperBlock`] for
    /// first > row; [`BandedError::NotAssembling`] after [`factor`](Self::factor).
    /// On error the matrix is unchanged.
    pub fn set_row_start(&mut self, row: usize, first: usize) -> Result<(), BandedError> {
        self.require_assembling("set_row_start")?;
        if row >= self.blocks {
            return Err(BandedError::OutOfRange {
                row,
                col: first,
                blocks: self.blocks,
            });
        }
        if first > row {
            return Err(BandedError::UpperBlock { row, col: first });
        }
        let first = first.max(row.saturating_sub(self.bandwidth));
        let old = self.row_start[row];
        let at = self.offset[row];
        let len = self.band.len();
        if first > old {
            // Drop the row's first first − old blocks, shift the rows after it.
            let k = first - old;
            self.band.copy_within(at + k..len, at);
            self.band.truncate(len - k);
            for o in &mut self.offset[row + 1..] {
                *o -= k;
            }
        } else if first < old {
            // Insert old − first zero blocks in front (within the reserved capacity).
            let k = old - first;
            self.band.resize(len + k, Stored::<T>::ZERO);
            self.band.copy_within(at..len, at + k);
            self.band[at..at + k].fill(Stored::<T>::ZERO);
            for o in &mut self.offset[row + 1..] {
                *o += k;
            }
        }
        self.row_start[row] = first;
        Ok(())
    }

    /// Sets the profile of every block row at once, `first(row)` being the first
    /// block column of block row `row` (as [`set_row_start`](Self::set_row_start),
    /// clamped to row − p), and lays the storage out for it: each row stored from its
    /// first column on (module docs), in O(stored blocks) and without allocation. The
    /// matrix is then zero, ready to assemble. A rod's λ-system: `first(e·q + r)` =
    /// (e − 1)·q (module docs: the profile of a rod).
    ///
    /// # Errors
    /// [`BandedError::UpperBlock`] if `first(row)` > row for a row;
    /// [`BandedError::NotAssembling`] after [`factor`](Self::factor). On error the
    /// matrix is unchanged.
    pub fn set_profile(&mut self, first: impl Fn(usize) -> usize) -> Result<(), BandedError> {
        self.require_assembling("set_profile")?;
        if let Some(row) = (0..self.blocks).find(|&row| first(row) > row) {
            return Err(BandedError::UpperBlock {
                row,
                col: first(row),
            });
        }
        let p = self.bandwidth;
        for (row, start) in self.row_start.iter_mut().enumerate() {
            *start = first(row).max(row.saturating_sub(p));
        }
        self.lay_out();
        Ok(())
    }

    /// The first block column of block row `row`'s profile (row − p, or as set by
    /// [`set_row_start`](Self::set_row_start)); `None` for row ≥ n.
    pub fn row_start(&self, row: usize) -> Option<usize> {
        self.row_start.get(row).copied()
    }

    /// Whether the storage holds the Cholesky factor L (after a successful
    /// [`factor`](Self::factor)), so that [`solve_in_place`](Self::solve_in_place) works.
    pub fn is_factored(&self) -> bool {
        self.state == State::Factored
    }

    /// Flat index of block (row, col), or why there is none.
    fn index(&self, row: usize, col: usize) -> Result<usize, BandedError> {
        if row >= self.blocks || col >= self.blocks {
            return Err(BandedError::OutOfRange {
                row,
                col,
                blocks: self.blocks,
            });
        }
        if col > row {
            return Err(BandedError::UpperBlock { row, col });
        }
        if row - col > self.bandwidth {
            return Err(BandedError::OutOfBand {
                row,
                col,
                bandwidth: self.bandwidth,
            });
        }
        if col < self.row_start[row] {
            return Err(BandedError::OutsideProfile {
                row,
                col,
                first: self.row_start[row],
            });
        }
        Ok(self.slot(row, col))
    }

    /// Flat index of a block in the row's profile (no checks).
    #[inline(always)]
    fn slot(&self, row: usize, col: usize) -> usize {
        self.offset[row] + col - self.row_start[row]
    }

    fn require_assembling(&self, operation: &'static str) -> Result<(), BandedError> {
        if self.state == State::Assembling {
            Ok(())
        } else {
            Err(BandedError::NotAssembling { operation })
        }
    }

    /// A copy of the stored block (row, col), row − p ≤ col ≤ row: while assembling, the sum of
    /// what was added (a diagonal block as added; only its lower triangle is used);
    /// after [`factor`](Self::factor), the block L_row,col of the Cholesky factor (a
    /// diagonal block is then lower triangular).
    ///
    /// # Errors
    /// [`BandedError::OutOfRange`], [`BandedError::UpperBlock`],
    /// [`BandedError::OutOfBand`] for a block that is not stored;
    /// [`BandedError::OutsideProfile`] for a block left of the row's profile start.
    pub fn block(&self, row: usize, col: usize) -> Result<Block<T>, BandedError> {
        Ok(to_matrix::<T>(&self.band[self.index(row, col)?]))
    }

    /// Makes the matrix ready to assemble without zeroing it, for assembly code of the
    /// crate that then overwrites every block of every row's profile (blocks outside
    /// the profiles are zero already: nothing writes them). No allocation.
    #[inline]
    pub(crate) fn begin_overwrite(&mut self) {
        self.state = State::Assembling;
    }

    /// The stored block (row, col) of the matrix being assembled, as columns
    /// (`[column][row]`), for assembly kernels of the crate that add into it in place.
    /// The caller guarantees col ≤ row ≤ col + p and the assembling state (checked by
    /// debug assertions only), and leaves non-finite entries to
    /// [`factor`](Self::factor), which reports them as a non-finite or non-positive pivot.
    #[inline(always)]
    pub(crate) fn lower_block_cols_mut(&mut self, row: usize, col: usize) -> &mut Stored<T> {
        debug_assert!(matches!(self.state, State::Assembling | State::Streaming));
        debug_assert!(col <= row && row - col <= self.bandwidth && row < self.blocks);
        debug_assert!(col >= self.row_start[row]);
        let k = self.slot(row, col);
        &mut self.band[k]
    }

    fn check_len(&self, what: &'static str, found: usize) -> Result<(), BandedError> {
        if found == self.dim() {
            Ok(())
        } else {
            Err(BandedError::LengthMismatch {
                what,
                expected: self.dim(),
                found,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Block, BlockBandedMatrix, BLOCK_SIZE};

    /// A diagonally dominant (so SPD) block-banded matrix with deterministic entries.
    fn spd(blocks: usize, bandwidth: usize) -> BlockBandedMatrix<f64> {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let mut m = BlockBandedMatrix::new(blocks, bandwidth).unwrap();
        for i in 0..blocks {
            for j in i.saturating_sub(bandwidth)..i {
                let b = Block::from_fn(|_, _| next());
                m.add_block(i, j, &b).unwrap();
            }
            let s = Block::from_fn(|_, _| next());
            let d = (s + s.transpose()) * 0.5
                + Block::identity() * (2.0 * (2 * bandwidth + 1) as f64 * BLOCK_SIZE as f64);
            m.add_block(i, i, &d).unwrap();
        }
        m
    }

    /// The streaming pass (factor and forward-substitute row by row, then back
    /// substitution), which large rods use, gives the same solution as `factor` and
    /// `solve_in_place`: both run the same per-row code, so bit for bit.
    #[test]
    fn streaming_factor_and_solve_match_the_separate_passes() {
        for (blocks, bandwidth) in [(1, 1), (7, 1), (40, 3), (25, 5)] {
            let mut a = spd(blocks, bandwidth);
            let mut b = a.clone();
            let n = blocks * BLOCK_SIZE;
            let rhs: Vec<f64> = (0..n)
                .map(|k| ((k * 7919) % 113) as f64 / 17.0 - 3.0)
                .collect();
            let mut x = rhs.clone();
            a.factor().unwrap();
            a.solve_in_place(&mut x).unwrap();
            let mut y = rhs.clone();
            b.begin_streaming_factor();
            for i in 0..blocks {
                b.factor_row(i).unwrap();
                b.forward_row(&mut y, i);
            }
            b.end_streaming_factor();
            // Back substitution in chunks of rows, last first (as a rod's elements).
            for end in (1..=blocks).rev().step_by(3) {
                b.back_rows(&mut y, end.saturating_sub(3)..end);
            }
            assert_eq!(x, y, "{blocks} blocks, bandwidth {bandwidth}");
        }
    }
}
