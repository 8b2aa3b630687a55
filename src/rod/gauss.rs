//! [`GaussRule`]: Gauss–Legendre quadrature on the reference interval [0, 1] with 1 to
//! [`MAX_GAUSS_POINTS`] points (paper Section 6.3.4, (107), and 6.3.5), and the choice
//! of reduced or full integration ([`Integration`]).
//!
//! An m-point rule integrates polynomials of degree ≤ 2m − 1 exactly:
//! `∫₀¹ f(ξ) dξ ≈ Σₖ wₖ f(ξ̃ₖ)`. The rules are the classical ones on [−1, 1] mapped by
//! ξ = (1 + x)/2, w = w₋₁,₁/2:
//!
//! ```text
//! m = 1:  ξ̃ = ½                                   w = 1
//! m = 2:  ξ̃ = ½ ∓ √3/6                           w = ½, ½
//! m = 3:  ξ̃ = ½ − √15/10, ½, ½ + √15/10           w = 5/18, 8/18, 5/18
//! m = 4:  ξ̃ = ½ ∓ ½√(3/7 + (2/7)√(6/5)), ½ ∓ ½√(3/7 − (2/7)√(6/5))
//!         w = (18 − √30)/72 (outer), (18 + √30)/72 (inner)
//! ```
//!
//! (The paper prints the two-point abscissae as ½ ± √3/2, which lies outside the
//! element; ½ ± √3/6 is the Gauss–Legendre rule.)

use super::error::RodError;
use crate::lie::real::c;
use crate::lie::Real;

/// Largest number of Gauss points provided (full integration of a cubic element).
pub const MAX_GAUSS_POINTS: usize = 4;

/// How many Gauss points an element of a given order integrates with (Section 6.3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Integration {
    /// "Uniformly reduced" integration, m = order (1, 2, 3 points for linear,
    /// quadratic, cubic elements): the paper's default, free of shear locking.
    #[default]
    Reduced,
    /// "Full" integration, m = order + 1: locks in shear for slender rods (Fig. 14).
    Full,
    /// An explicit number of points, 1 to [`MAX_GAUSS_POINTS`].
    Points(usize),
}

impl Integration {
    /// The number of Gauss points for an element of polynomial order `order`.
    pub fn point_count(self, order: usize) -> usize {
        match self {
            Integration::Reduced => order,
            Integration::Full => order + 1,
            Integration::Points(m) => m,
        }
    }
}

/// An m-point Gauss–Legendre rule on [0, 1]: abscissae ξ̃ₖ (ascending) and weights wₖ
/// (summing to 1). Fixed capacity, no heap allocation.
///
/// ```
/// use lie_xpbd::rod::gauss::GaussRule;
/// let rule = GaussRule::<f64>::new(2)?;
/// assert!((rule.points()[0] - (0.5 - 3f64.sqrt() / 6.0)).abs() < 1e-16);
/// // Exact for cubics: ∫₀¹ ξ³ dξ = 1/4.
/// let integral = rule.integrate(|x| x * x * x);
/// assert!((integral - 0.25).abs() < 1e-16);
/// # Ok::<(), lie_xpbd::rod::RodError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaussRule<T: Real> {
    len: usize,
    points: [T; MAX_GAUSS_POINTS],
    weights: [T; MAX_GAUSS_POINTS],
}

impl<T: Real> GaussRule<T> {
    /// The m-point rule.
    ///
    /// # Errors
    /// [`RodError::GaussPointCount`] unless 1 ≤ m ≤ [`MAX_GAUSS_POINTS`].
    pub fn new(m: usize) -> Result<Self, RodError> {
        if !(1..=MAX_GAUSS_POINTS).contains(&m) {
            return Err(RodError::GaussPointCount {
                count: m,
                max: MAX_GAUSS_POINTS,
            });
        }
        Ok(Self::with_points_unchecked(m))
    }

    /// The rule for an element of polynomial order `order` under `integration`.
    ///
    /// # Errors
    /// [`RodError::GaussPointCount`] if the resulting number of points is not in
    /// 1..=[`MAX_GAUSS_POINTS`].
    pub fn for_order(order: usize, integration: Integration) -> Result<Self, RodError> {
        Self::new(integration.point_count(order))
    }

    /// The m-point rule for m in 1..=4 (caller guarantees the range).
    pub(crate) fn with_points_unchecked(m: usize) -> Self {
        // Abscissae on [−1, 1] (ascending, non-negative half) and weights, in f64.
        let (x, w): (&[f64], &[f64]) = match m {
            1 => (&[0.0], &[2.0]),
            2 => (&[1.0 / 3f64.sqrt()], &[1.0]),
            3 => (&[0.0, (3.0f64 / 5.0).sqrt()], &[8.0 / 9.0, 5.0 / 9.0]),
            _ => {
                let r = 2.0 / 7.0 * (6.0f64 / 5.0).sqrt();
                let s30 = 30f64.sqrt();
                (
                    &[(3.0 / 7.0 - r).sqrt(), (3.0 / 7.0 + r).sqrt()],
                    &[(18.0 + s30) / 36.0, (18.0 - s30) / 36.0],
                )
            }
        };
        // Expand the symmetric half to all m points, ascending in ξ = (1 + x)/2.
        let mut full_x = [0.0f64; MAX_GAUSS_POINTS];
        let mut full_w = [0.0f64; MAX_GAUSS_POINTS];
        let mut k = 0;
        for i in (0..x.len()).rev() {
            if x[i] > 0.0 {
                full_x[k] = -x[i];
                full_w[k] = w[i];
                k += 1;
            }
        }
        for i in 0..x.len() {
            full_x[k] = x[i];
            full_w[k] = w[i];
            k += 1;
        }
        debug_assert_eq!(k, m);
        let mut points = [T::zero(); MAX_GAUSS_POINTS];
        let mut weights = [T::zero(); MAX_GAUSS_POINTS];
        for i in 0..m {
            // ½ ± √3/6 etc. formed in f64 and rounded once.
            points[i] = c::<T>(0.5 * (1.0 + full_x[i]));
            weights[i] = c::<T>(0.5 * full_w[i]);
        }
        Self {
            len: m,
            points,
            weights,
        }
    }

    /// Number of points m.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a rule has at least one point.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The abscissae ξ̃ₖ ∈ (0, 1), ascending (dimensionless).
    #[inline]
    pub fn points(&self) -> &[T] {
        &self.points[..self.len]
    }

    /// The weights wₖ > 0, summing to 1 (dimensionless; times the element length l
    /// they integrate over the physical element, (107)).
    #[inline]
    pub fn weights(&self) -> &[T] {
        &self.weights[..self.len]
    }

    /// `Σₖ wₖ f(ξ̃ₖ)`, the rule applied to `f` on [0, 1].
    pub fn integrate<F: Fn(T) -> T>(&self, f: F) -> T {
        self.points()
            .iter()
            .zip(self.weights())
            .fold(T::zero(), |acc, (&x, &w)| acc + w * f(x))
    }
}
