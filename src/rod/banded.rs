//! The block-banded direct solver as a rod uses it (paper Section 8.2): the shape of a
//! rod's λ-system, its block bandwidth ([`rod_block_bandwidth`]) and profile. The
//! matrix, its Cholesky factorisation and solves are general linear algebra and live in
//! [`crate::linalg::banded`]; they are re-exported here, so that
//! `lie_xpbd::rod::banded::BlockBandedMatrix` and the other paths of earlier versions
//! still name them.
//!
//! # The system
//! A rod's elastic constraints are one 6-row constraint (108) per Gauss point: three
//! shear/stretch rows v − e₃ and three bending/torsion rows u − u*. Solving them
//! together is the Newton step (124) over all Gauss points of the rod,
//!
//! ```text
//! A Δλ = −C − α̃λ,    A = ∇C 𝓜⁻¹ ∇Cᵀ + α̃      (6n × 6n, n = number of Gauss points)
//! ```
//!
//! with α̃ = α/h² from (109) and 𝓜 the lumped (block-diagonal per node) inertia of
//! Section 6.3.6. Block (g, g') of A is ∇C_g 𝓜⁻¹ ∇C_g'ᵀ, a sum over the nodes both
//! Gauss points depend on, so it is zero unless constraints g and g' share a node. A is
//! symmetric, and positive definite when α̃ > 0 or ∇C has full row rank.
//!
//! # Block bandwidth of a rod
//! Number the Gauss points element by element, in order along the rod: point r of
//! element e (r = 0 … q − 1, q points per element) is block row g = e·q + r. An element
//! of polynomial order k has k + 1 nodes, numbered e·k … e·k + k, and consecutive
//! elements share one end node (Section 6.3.1). Every Gauss point of element e depends
//! on all k + 1 nodes of e (the basis functions (96)–(97) are non-zero inside the
//! element), so points of elements e and e' share a node exactly when |e − e'| ≤ 1
//! (element e + 2 starts at node e·k + 2k > e·k + k). The largest |g − g'| over coupled
//! pairs is between the first point of e and the last point of e + 1:
//!
//! ```text
//! p = (e + 1)·q + (q − 1) − e·q = 2q − 1
//! ```
//!
//! whatever the order k: the bandwidth counts Gauss points, not nodes, which is the
//! paper's "2m − 1 with m Gauss points per element" ([`rod_block_bandwidth`]). With
//! "uniformly reduced" integration (Section 6.3.5, q = k) and with full integration
//! (q = k + 1, exact for the degree-2k products of basis functions):
//!
//! | element | reduced: q | p | full: q | p |
//! |---|---|---|---|---|
//! | linear (k = 1) | 1 | 1 (block-tridiagonal) | 2 | 3 |
//! | quadratic (k = 2) | 2 | 3 | 3 | 5 |
//! | cubic (k = 3) | 3 | 5 | 4 | 7 |
//!
//! A 6-row constraint fixing the base node, placed before the first Gauss point,
//! couples only with the q points of the first element (bandwidth q ≤ 2q − 1), and
//! likewise a tip constraint placed after the last one, so neither widens the band.
//! Within the band, row g = e·q + r has structural non-zeros back to column (e − 1)·q,
//! i.e. q + r + 1 blocks with the diagonal, not the p + 1 = 2q of the band: its
//! profile (envelope). [`BlockBandedMatrix::set_profile`] stores each row from its
//! first non-zero block on only (a skyline layout), and Cholesky creates no fill
//! outside the profile, so the factor fits the same storage: per element of a rod
//! (q rows) q(3q + 1)/2 blocks instead of 2q² (cubic, q = 3: 15 instead of 18;
//! quadratic: 7 instead of 8; linear: 2, the same).

pub use crate::linalg::banded::{
    BandBlock, BandScalar, BandedError, Block, BlockBandedMatrix, PaddedBlockF32, BLOCK_SIZE,
};

/// The block bandwidth p (number of non-zero block sub-diagonals) of a rod's λ-system
/// `∇C 𝓜⁻¹ ∇Cᵀ + α̃` with `gauss_points_per_element` = q Gauss-point constraints (108)
/// per element, numbered element by element along the rod: p = 2q − 1, for elements of
/// any polynomial order (module docs: linear, quadratic and cubic elements with reduced
/// and full integration). q = 0 (no constraints) gives 0. Constraints fixing the base
/// or tip node, placed first or last, fit in this band.
///
/// ```
/// use lie_xpbd::rod::banded::rod_block_bandwidth;
/// assert_eq!(rod_block_bandwidth(1), 1); // linear elements, one Gauss point
/// assert_eq!(rod_block_bandwidth(3), 5); // cubic elements, reduced integration
/// ```
pub const fn rod_block_bandwidth(gauss_points_per_element: usize) -> usize {
    (2 * gauss_points_per_element).saturating_sub(1)
}
