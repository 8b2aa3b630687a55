//! Cosserat rods (paper Sections 6 and 8.2).
//!
//! * [`banded`]: the direct solver for the λ-system of a rod, Section 8.2: a symmetric
//!   positive definite block-banded matrix of 6×6 blocks (one block row per Gauss-point
//!   constraint (108)), its in-place block Cholesky factorisation and triangular solves
//!   in O(n) time for a fixed bandwidth, and the bandwidth of a rod's system as a
//!   function of its number of Gauss points per element
//!   ([`banded::rod_block_bandwidth`]).

pub mod banded;
