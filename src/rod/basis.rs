//! [`LagrangeBasis`]: the Lagrange shape functions of a rod element on the reference
//! interval ξ ∈ [0, 1] (paper Section 6.3.1, (95)–(97)).
//!
//! An element with `N` nodes (order `N − 1`, linear, quadratic or cubic) has
//! equispaced nodes ξⱼ = j/(N − 1), j = 0, …, N − 1 (node 0 at ξ = 0, node N − 1 at
//! ξ = 1), and the shape functions
//!
//! ```text
//! φⱼ(ξ) = Π_{m ≠ j} (ξ − ξₘ)/(ξⱼ − ξₘ)
//! ```
//!
//! with the Kronecker delta property φⱼ(ξₖ) = δⱼₖ, the partition of unity Σⱼ φⱼ = 1
//! and Σⱼ φⱼ' = 0. For N = 2 these are (96), for N = 3 they are (97). Derivatives are
//! with respect to ξ; the arc-length derivative is φⱼ'(s) = φⱼ,ξ / l (102).

use super::gauss::GaussRule;
use crate::lie::real::c;
use crate::lie::Real;

/// Lagrange shape functions with `N` equispaced nodes on [0, 1]; `N` is 2, 3 or 4
/// (linear, quadratic, cubic elements). Evaluating a basis, or building an element,
/// with any other `N` is rejected at compile time:
///
/// ```compile_fail
/// let phi = lie_xpbd::rod::LagrangeBasis::<5>::values(0.5f64);
/// ```
///
/// ```
/// use lie_xpbd::rod::basis::LagrangeBasis;
/// // Quadratic element (97): φ₀ = 2ξ² − 3ξ + 1, φ₁ = −4ξ² + 4ξ, φ₂ = 2ξ² − ξ.
/// let phi = LagrangeBasis::<3>::values(0.25f64);
/// assert!((phi[0] - 0.375).abs() < 1e-15);
/// assert!((phi[1] - 0.75).abs() < 1e-15);
/// assert!((phi[2] + 0.125).abs() < 1e-15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LagrangeBasis<const N: usize>;

impl<const N: usize> LagrangeBasis<N> {
    /// Compile-time check that `N` is a supported number of nodes.
    pub(crate) const VALID: () = assert!(
        N >= 2 && N <= 4,
        "rod elements have 2, 3 or 4 nodes (linear, quadratic, cubic)"
    );

    /// Number of nodes of the element.
    pub const NODES: usize = N;

    /// Polynomial order of the element, N − 1.
    pub const ORDER: usize = N - 1;

    /// The nodes ξⱼ = j/(N − 1) (dimensionless).
    pub fn nodes<T: Real>() -> [T; N] {
        let () = Self::VALID;
        let mut x = [T::zero(); N];
        for (j, xj) in x.iter_mut().enumerate() {
            *xj = c::<T>(j as f64 / (N - 1) as f64);
        }
        x
    }

    /// φⱼ(ξ) for j = 0, …, N − 1 (dimensionless). Defined for every ξ (extrapolates
    /// outside [0, 1]).
    pub fn values<T: Real>(xi: T) -> [T; N] {
        Self::values_and_derivatives(xi).0
    }

    /// ∂φⱼ/∂ξ for j = 0, …, N − 1 (dimensionless; divide by the element length l for
    /// the arc-length derivative (102)).
    pub fn derivatives<T: Real>(xi: T) -> [T; N] {
        Self::values_and_derivatives(xi).1
    }

    /// `(φⱼ(ξ), ∂φⱼ/∂ξ)` for j = 0, …, N − 1.
    ///
    /// With t = (N − 1)ξ the nodes are the integers 0, …, N − 1 and
    /// φⱼ = Π_{m≠j} (t − m)/(j − m), ∂φⱼ/∂ξ = (N − 1) Σ_{q≠j} 1/(j − q) Π_{m≠j,q} (t − m)/(j − m).
    pub fn values_and_derivatives<T: Real>(xi: T) -> ([T; N], [T; N]) {
        let () = Self::VALID;
        let order = c::<T>((N - 1) as f64);
        let t = xi * order;
        // Factors (t − m)/(j − m) for every pair j ≠ m.
        let mut phi = [T::zero(); N];
        let mut dphi = [T::zero(); N];
        for j in 0..N {
            let mut value = T::one();
            let mut deriv = T::zero();
            for m in 0..N {
                if m == j {
                    continue;
                }
                let denom = c::<T>(j as f64 - m as f64);
                let factor = (t - c::<T>(m as f64)) / denom;
                // Product rule: d(value·factor) = deriv·factor + value·(1/denom).
                deriv = deriv * factor + value / denom;
                value *= factor;
            }
            phi[j] = value;
            dphi[j] = deriv * order;
        }
        (phi, dphi)
    }

    /// ∫₀¹ φⱼ(ξ) dξ for each node: the row sums of the consistent mass matrix
    /// ([`Self::consistent_mass`]), i.e. the share of the element's mass that row-sum
    /// lumping gives node j (Section 6.3.6): ½, ½ (linear); ⅙, ⅔, ⅙ (quadratic);
    /// ⅛, ⅜, ⅜, ⅛ (cubic).
    pub fn lumped_weights<T: Real>() -> [T; N] {
        let m = Self::consistent_mass::<T>();
        let mut w = [T::zero(); N];
        for (wi, row) in w.iter_mut().zip(m.iter()) {
            *wi = row.iter().fold(T::zero(), |a, &x| a + x);
        }
        w
    }

    /// The consistent mass matrix of the reference element, Mᵢⱼ = ∫₀¹ φᵢ φⱼ dξ
    /// (dimensionless; times ρAl it is the translational mass matrix of an element of
    /// length l). Integrated by the 4-point Gauss–Legendre rule, exact for the
    /// polynomial degree 2(N − 1) ≤ 6.
    pub fn consistent_mass<T: Real>() -> [[T; N]; N] {
        let () = Self::VALID;
        let rule = GaussRule::<T>::with_points_unchecked(4);
        let mut m = [[T::zero(); N]; N];
        for (&x, &w) in rule.points().iter().zip(rule.weights()) {
            let phi = Self::values(x);
            for i in 0..N {
                for j in 0..N {
                    m[i][j] += w * phi[i] * phi[j];
                }
            }
        }
        m
    }
}
