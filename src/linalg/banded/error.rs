//! [`BandedError`]: what can be wrong with a call on a
//! [`BlockBandedMatrix`](super::BlockBandedMatrix).

#[cfg(doc)]
use super::BlockBandedMatrix;
use super::BLOCK_SIZE;
use thiserror::Error;

/// What was wrong with a call on a [`BlockBandedMatrix`]. Indices are block indices
/// (0-based) unless named `entry` or `index`.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum BandedError {
    /// A block index at or past the number of block rows.
    #[error("block ({row}, {col}) is outside the matrix of {blocks}×{blocks} blocks")]
    OutOfRange {
        /// Block row asked for.
        row: usize,
        /// Block column asked for.
        col: usize,
        /// Number of block rows (and columns) of the matrix.
        blocks: usize,
    },
    /// A block below the diagonal farther from it than the block bandwidth.
    #[error(
        "block ({row}, {col}) is outside the band: row − col = {} exceeds the block bandwidth {bandwidth}",
        row - col
    )]
    OutOfBand {
        /// Block row asked for.
        row: usize,
        /// Block column asked for.
        col: usize,
        /// The matrix's block bandwidth p.
        bandwidth: usize,
    },
    /// A block above the diagonal: only the lower band is stored, so block (i, j) with
    /// j > i is given as its transpose at (j, i).
    #[error("block ({row}, {col}) is above the diagonal; only the lower band is stored: add its transpose at ({col}, {row})")]
    UpperBlock {
        /// Block row asked for.
        row: usize,
        /// Block column asked for.
        col: usize,
    },
    /// A block left of the row's profile start ([`BlockBandedMatrix::set_row_start`]):
    /// the row was declared to have no non-zero blocks there.
    #[error("block ({row}, {col}) is left of the start {first} of block row {row}'s profile")]
    OutsideProfile {
        /// Block row asked for.
        row: usize,
        /// Block column asked for.
        col: usize,
        /// The first block column of the row's profile.
        first: usize,
    },
    /// An entry added to block (row, col) is NaN or infinite, or would make the stored
    /// entry so (overflow). The matrix is left unchanged.
    #[error("block ({row}, {col}) entry ({}, {}) would be non-finite (NaN or infinity)", entry.0, entry.1)]
    NonFiniteBlock {
        /// Block row.
        row: usize,
        /// Block column.
        col: usize,
        /// (row, column) of the first bad entry inside the 6×6 block.
        entry: (usize, usize),
    },
    /// A vector passed in (or a solution computed) has a NaN or infinite entry.
    #[error("{what} has a non-finite entry (NaN or infinity) at index {index} (block row {}, entry {})", index / BLOCK_SIZE, index % BLOCK_SIZE)]
    NonFiniteVector {
        /// Which vector ("right-hand side", "solution", "x").
        what: &'static str,
        /// Index of the first bad entry.
        index: usize,
    },
    /// A vector of the wrong length: it must have 6 entries per block row.
    #[error("{what} has {found} entries, but the matrix has {expected} rows")]
    LengthMismatch {
        /// Which vector.
        what: &'static str,
        /// 6 × number of block rows.
        expected: usize,
        /// Length given.
        found: usize,
    },
    /// The matrix is not (numerically) positive definite: the Cholesky pivot of scalar
    /// row `pivot` of block row `block_row`, after eliminating all earlier rows, is not
    /// larger than 64ε times the original diagonal entry (ε the machine epsilon of the
    /// scalar), i.e. zero, negative, or indistinguishable from zero in rounding.
    /// The storage then holds a partial factor: [`BlockBandedMatrix::reset`] it.
    #[error("matrix is not positive definite: pivot {pivot} of block row {block_row} (row {}) is {value:e} after elimination, against a diagonal entry of {diagonal:e}", block_row * BLOCK_SIZE + pivot)]
    NotPositiveDefinite {
        /// Block row of the failing pivot.
        block_row: usize,
        /// Row (0–5) inside the block.
        pivot: usize,
        /// The pivot found.
        value: f64,
        /// The diagonal entry of A at that row.
        diagonal: f64,
    },
    /// A Cholesky pivot overflowed to a non-finite value (entries near the largest
    /// representable number). The storage then holds a partial factor.
    #[error(
        "Cholesky factorisation overflowed: pivot {pivot} of block row {block_row} is not finite"
    )]
    NonFinitePivot {
        /// Block row of the failing pivot.
        block_row: usize,
        /// Row (0–5) inside the block.
        pivot: usize,
    },
    /// An operation on the assembled matrix (adding blocks, multiplying, factoring)
    /// after [`BlockBandedMatrix::factor`] has overwritten it with its factor (or tried
    /// to). Call [`BlockBandedMatrix::reset`] and assemble again.
    #[error("{operation}: the storage holds a Cholesky factor (or a failed one), not an assembled matrix; reset() and assemble first")]
    NotAssembling {
        /// The operation attempted.
        operation: &'static str,
    },
    /// A solve before a successful [`BlockBandedMatrix::factor`].
    #[error("{operation}: the matrix is not factored; call factor() first")]
    NotFactored {
        /// The operation attempted.
        operation: &'static str,
    },
    /// The storage for the requested shape does not fit in memory addresses.
    #[error("{blocks} block rows with block bandwidth {bandwidth} overflow the address space")]
    TooLarge {
        /// Block rows requested.
        blocks: usize,
        /// Block bandwidth requested.
        bandwidth: usize,
    },
    /// The storage for the requested shape could not be allocated (the system refused
    /// the memory).
    #[error("{blocks} block rows with block bandwidth {bandwidth} need {bytes} bytes, which could not be allocated")]
    OutOfMemory {
        /// Block rows requested.
        blocks: usize,
        /// Block bandwidth requested.
        bandwidth: usize,
        /// Bytes of the band asked for.
        bytes: usize,
    },
}
