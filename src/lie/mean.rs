//! Averages and random sampling of rotations, behind [`LieGroup::mean`],
//! [`LieGroup::weighted_mean`] and [`LieGroup::random`].

use super::error::LieError;
use super::group::LieGroup;
use super::real::{c, Real};
use nalgebra::Vector3;
use rand::{Rng, RngExt};

/// Largest number of fixed-point iterations of the mean.
const MAX_ITERATIONS: usize = 100;

/// The weighted Karcher mean (docs on [`LieGroup::weighted_mean`]); `None` = equal weights.
pub(crate) fn weighted_mean<T: Real, G: LieGroup<T>>(
    rotations: &[G],
    weights: Option<&[T]>,
) -> Result<G, LieError> {
    let what = if weights.is_some() {
        "weighted mean"
    } else {
        "mean"
    };
    if rotations.is_empty() {
        return Err(LieError::Empty { what });
    }
    if let Some(index) = rotations
        .iter()
        .position(|r| !r.to_matrix().iter().all(|x| x.is_finite()))
    {
        return Err(LieError::NonFiniteRotation { what, index });
    }
    let mut start = 0;
    // Weights are divided by the largest one, so that their sum cannot overflow (n weights
    // near T::MAX) and products with tiny differences do not go subnormal (tiny weights):
    // the mean depends only on the ratios, and scaling by a power of two is exact.
    let mut largest = T::one();
    if let Some(w) = weights {
        if w.len() != rotations.len() {
            return Err(LieError::LengthMismatch {
                what,
                expected: rotations.len(),
                found: w.len(),
            });
        }
        for (index, &x) in w.iter().enumerate() {
            if !x.is_finite() || x < T::zero() {
                return Err(LieError::InvalidWeight {
                    index,
                    value: x.to_f64(),
                });
            }
            if x > w[start] {
                start = index;
            }
        }
        largest = w[start];
        if largest <= T::zero() {
            return Err(LieError::ZeroWeights {
                what,
                count: w.len(),
            });
        }
    }
    let weight = |i: usize| weights.map_or(T::one(), |w| w[i] / largest);
    let total = (0..rotations.len()).fold(T::zero(), |acc, i| acc + weight(i));
    let mut m = rotations[start];
    let tiny = T::default_epsilon() * c::<T>(16.0);
    let floor = T::default_epsilon().sqrt();
    let mut previous = c::<T>(f64::INFINITY);
    let mut step = T::zero();
    for _ in 0..MAX_ITERATIONS {
        let mut delta = Vector3::zeros();
        for (i, r) in rotations.iter().enumerate() {
            delta += r.boxminus(&m) * weight(i);
        }
        delta /= total;
        step = delta.norm();
        if !step.is_finite() {
            break;
        }
        // An update at the round-off level (≤ 16ε) is the last one: applied, it takes the
        // residual from up to 16ε down to the noise of the Logs (a few ε); the rotation
        // moves by at most 16ε, so it needs no renormalisation, and a zero update (all
        // rotations equal) returns m exactly.
        if step <= tiny {
            return Ok(m.boxplus(&delta));
        }
        // Between 16ε and √ε an update that no longer shrinks is noise: stop before
        // applying it, so the result does not random-walk.
        if step <= floor && step >= previous {
            return Ok(m);
        }
        m = m.boxplus(&delta).renormalize();
        previous = step;
    }
    Err(LieError::NotConverged {
        what,
        iterations: MAX_ITERATIONS,
        step: step.to_f64(),
    })
}

/// A uniformly distributed unit quaternion `[w, x, y, z]` (Shoemake 1992).
pub(crate) fn shoemake<R: Rng + ?Sized>(rng: &mut R) -> [f64; 4] {
    let u1: f64 = rng.random();
    let u2: f64 = rng.random_range(0.0..std::f64::consts::TAU);
    let u3: f64 = rng.random_range(0.0..std::f64::consts::TAU);
    let a = (1.0 - u1).sqrt();
    let b = u1.sqrt();
    [b * u3.cos(), a * u2.sin(), a * u2.cos(), b * u3.sin()]
}
