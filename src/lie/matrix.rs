//! [`SO3Matrix`]: a rotation stored as a 3×3 orthonormal matrix.

use super::error::LieError;
use super::group::{check_finite, LieGroup};
use super::real::{c, Real};
use super::so3;
use nalgebra::{Matrix3, Quaternion, Rotation3, UnitQuaternion, Vector3};

/// A rotation in SO(3) stored as a 3×3 rotation matrix (paper Section 3.1).
///
/// Construct it with [`LieGroup::exp`], [`LieGroup::identity`], or the checked
/// [`LieGroup::from_matrix`]; the matrix is private so it stays a rotation.
///
/// ```
/// use lie_xpbd::lie::{LieGroup, SO3Matrix};
/// use nalgebra::Vector3;
/// let r = SO3Matrix::<f64>::exp(&Vector3::new(0.0, 0.0, std::f64::consts::FRAC_PI_2));
/// let x = r.act(&Vector3::x());
/// approx::assert_relative_eq!(x, Vector3::y(), epsilon = 1e-15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SO3Matrix<T: Real> {
    m: Matrix3<T>,
}

impl<T: Real> SO3Matrix<T> {
    /// The 3×3 matrix (body → world).
    #[inline]
    pub fn matrix(&self) -> &Matrix3<T> {
        &self.m
    }

    /// Wraps a matrix without checking it is a rotation. The caller guarantees
    /// orthonormality to round-off and det = +1; otherwise every result is meaningless.
    #[inline]
    pub fn from_matrix_unchecked(m: Matrix3<T>) -> Self {
        Self { m }
    }
}

/// Validates a 3×3 matrix as a rotation (shared by both representations); returns its
/// deviation ‖RᵀR − I‖_F.
pub(crate) fn validate_rotation_matrix<T: Real>(m: &Matrix3<T>) -> Result<T, LieError> {
    check_finite("rotation matrix", m.iter())?;
    let dev = (m.transpose() * m - Matrix3::identity()).norm();
    // A non-finite deviation must be rejected too: finite but huge entries can make RᵀR
    // overflow to ∞ − ∞ = NaN, for which `dev > tol` alone is false.
    if !dev.is_finite() || dev > T::orthogonality_tolerance() {
        return Err(LieError::NotOrthogonal {
            deviation: dev.to_f64(),
            tolerance: T::orthogonality_tolerance().to_f64(),
        });
    }
    let det = m.determinant();
    if det < T::zero() {
        return Err(LieError::Reflection {
            determinant: det.to_f64(),
        });
    }
    Ok(dev)
}

/// How far from 1 the norm of a stored unit quaternion may be (scene files, serialized
/// poses) before it is normalised: tight enough to catch a typo, loose enough for
/// values printed to 7 digits.
pub const QUATERNION_NORM_TOLERANCE: f64 = 1e-6;

/// Validates a quaternion that must already be a unit quaternion (norm within
/// [`QUATERNION_NORM_TOLERANCE`] of 1), then normalises it. Used by the `serde` feature
/// only.
#[cfg(feature = "serde")]
pub(crate) fn validate_unit_quaternion<T: Real>(
    q: &Quaternion<T>,
) -> Result<UnitQuaternion<T>, LieError> {
    let u = validate_quaternion(q)?;
    let n = q
        .coords
        .iter()
        .map(|x| x.to_f64() * x.to_f64())
        .sum::<f64>()
        .sqrt();
    if (n - 1.0).abs() > QUATERNION_NORM_TOLERANCE || !n.is_finite() {
        return Err(LieError::NotUnit {
            norm: n,
            tolerance: QUATERNION_NORM_TOLERANCE,
        });
    }
    Ok(u)
}

/// Validates and normalises a quaternion (shared by both representations).
pub(crate) fn validate_quaternion<T: Real>(
    q: &Quaternion<T>,
) -> Result<UnitQuaternion<T>, LieError> {
    check_finite("quaternion", q.coords.iter())?;
    // Scale by the largest entry first: |q|² overflows for entries above ~1e154 (f64) /
    // ~1e19 (f32), which made q/|q| = 0, and underflows for tiny entries.
    let scale = q.coords.amax();
    if scale == T::zero() {
        return Err(LieError::ZeroQuaternion { norm: 0.0 });
    }
    // A quaternion that is already unit to round-off (|‖q‖² − 1| ≤ 4ε) is kept bit for bit,
    // so that saving and loading a rotation gives back exactly the same value.
    let n2 = q.norm_squared();
    if (n2 - T::one()).abs() <= T::default_epsilon() * c::<T>(4.0) {
        return Ok(UnitQuaternion::new_unchecked(*q));
    }
    let qs = q / scale;
    let ns = qs.norm(); // in [1, 2]
    let n = ns * scale; // may round to ∞ for entries near T::MAX; only compared/reported
    if n < T::default_epsilon().sqrt() {
        return Err(LieError::ZeroQuaternion { norm: n.to_f64() });
    }
    Ok(UnitQuaternion::new_unchecked(qs / ns))
}

impl<T: Real> LieGroup<T> for SO3Matrix<T> {
    const NAME: &'static str = "matrix";

    #[inline]
    fn identity() -> Self {
        Self {
            m: Matrix3::identity(),
        }
    }

    #[inline]
    fn exp(theta: &Vector3<T>) -> Self {
        Self {
            m: so3::exp_matrix(theta),
        }
    }

    #[inline]
    fn log(&self) -> Vector3<T> {
        so3::log_matrix(&self.m)
    }

    #[inline]
    fn compose(&self, other: &Self) -> Self {
        Self {
            m: super::fma::mat3_mul(&self.m, &other.m),
        }
    }

    #[inline]
    fn inverse(&self) -> Self {
        Self {
            m: self.m.transpose(),
        }
    }

    #[inline]
    fn act(&self, v: &Vector3<T>) -> Vector3<T> {
        super::fma::mat3_mul_vec(&self.m, v)
    }

    #[inline]
    fn act_inv(&self, v: &Vector3<T>) -> Vector3<T> {
        super::fma::mat3_tr_mul_vec(&self.m, v)
    }

    #[inline]
    fn to_matrix(&self) -> Matrix3<T> {
        self.m
    }

    /// Branch-free: 0·x is ±0 for finite x and NaN for NaN or ±∞, and NaN stays NaN
    /// in a sum.
    #[inline]
    fn is_finite(&self) -> bool {
        self.m.iter().fold(T::zero(), |acc, x| acc + *x * T::zero()) == T::zero()
    }

    fn to_quaternion(&self) -> Quaternion<T> {
        UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(self.m)).into_inner()
    }

    fn from_matrix(m: &Matrix3<T>) -> Result<Self, LieError> {
        let dev = validate_rotation_matrix(m)?;
        // A matrix already orthonormal to round-off (deviation ≤ 8ε) is kept bit for bit,
        // so that saving and loading a rotation gives back exactly the same value.
        if dev <= T::default_epsilon() * c::<T>(8.0) {
            return Ok(Self { m: *m });
        }
        // Two Newton steps: an accepted deviation δ ≤ orthogonality_tolerance (3.5e-3 in
        // f32, 1.5e-7 in f64) becomes O(δ²) after one and O(δ⁴) < ε after two, so the
        // result is orthonormal to round-off (one step left ~40ε).
        Ok(Self { m: *m }.renormalize().renormalize())
    }

    #[inline]
    fn from_unit_quaternion_unchecked(q: &UnitQuaternion<T>) -> Self {
        Self {
            m: super::fma::quat_to_mat3(q),
        }
    }

    fn from_quaternion(q: &Quaternion<T>) -> Result<Self, LieError> {
        let u = validate_quaternion(q)?;
        Ok(Self {
            m: u.to_rotation_matrix().into_inner(),
        })
    }

    /// One Newton step of the polar decomposition, `R ← R(3I − RᵀR)/2`, which is
    /// quadratically convergent: a drift of δ from orthogonality becomes O(δ²).
    #[inline]
    fn renormalize(&self) -> Self {
        let e = self.m.tr_mul(&self.m);
        let three = Matrix3::identity() * c::<T>(3.0);
        Self {
            m: self.m * (three - e) * c::<T>(0.5),
        }
    }

    #[inline]
    fn boxminus(&self, other: &Self) -> Vector3<T> {
        so3::log_matrix(&super::fma::mat3_tr_mul(&other.m, &self.m))
    }
}

/// The angle between two rotations (rad, in [0, π]): |R₁ ⊟ R₂|.
#[inline]
pub(crate) fn angle_between<T: Real, G: LieGroup<T>>(a: &G, b: &G) -> T {
    a.boxminus(b).norm()
}

/// Rotations equal within `max(epsilon, max_relative · max(|a|, |b|))` of angle (rad),
/// where |·| is a rotation's angle.
pub(crate) fn rotations_relative_eq<T: Real, G: LieGroup<T>>(
    a: &G,
    b: &G,
    epsilon: T,
    max_relative: T,
) -> bool {
    let d = angle_between(a, b);
    d <= epsilon || d <= max_relative * a.angle().max(b.angle())
}

/// Compares by the angle between the rotations (rad): equal iff `|self ⊟ other| ≤
/// epsilon`.
///
/// ```
/// use approx::assert_abs_diff_eq;
/// use lie_xpbd::lie::{LieGroup, SO3Matrix};
/// use nalgebra::Vector3;
/// let a = SO3Matrix::<f64>::exp(&Vector3::new(0.0, 0.0, 1.0));
/// let b = SO3Matrix::<f64>::exp(&Vector3::new(0.0, 0.0, 1.0 + 1e-9));
/// assert_abs_diff_eq!(a, b, epsilon = 2e-9);
/// assert!(approx::abs_diff_ne!(a, b, epsilon = 1e-10));
/// ```
impl<T: Real> approx::AbsDiffEq for SO3Matrix<T> {
    type Epsilon = T;

    fn default_epsilon() -> T {
        T::default_epsilon()
    }

    fn abs_diff_eq(&self, other: &Self, epsilon: T) -> bool {
        angle_between(self, other) <= epsilon
    }
}

/// Equal iff the angle between the rotations is at most `epsilon` or at most
/// `max_relative` times the larger of their two angles.
impl<T: Real> approx::RelativeEq for SO3Matrix<T> {
    fn default_max_relative() -> T {
        T::default_epsilon()
    }

    fn relative_eq(&self, other: &Self, epsilon: T, max_relative: T) -> bool {
        rotations_relative_eq(self, other, epsilon, max_relative)
    }
}

/// Equal iff the angle test of [`approx::AbsDiffEq`] passes with `epsilon`, or every
/// matrix entry is within `max_ulps` units in the last place.
impl<T: Real> approx::UlpsEq for SO3Matrix<T> {
    fn default_max_ulps() -> u32 {
        4
    }

    fn ulps_eq(&self, other: &Self, epsilon: T, max_ulps: u32) -> bool {
        // The entries are compared by ulps alone (epsilon 0): nalgebra's matrix `ulps_eq`
        // would also accept entries within `epsilon` of each other, which lets rotations up
        // to √(3/2)·epsilon apart in angle through.
        angle_between(self, other) <= epsilon
            || self
                .m
                .iter()
                .zip(other.m.iter())
                .all(|(a, b)| a.ulps_eq(b, T::zero(), max_ulps))
    }
}

/// One line: the angle (rad) and unit axis of the rotation, then the matrix by rows,
/// e.g. `SO3Matrix: angle 1.571 rad about [0.000, 0.000, 1.000], rows [[0.000, -1.000,
/// 0.000], [1.000, 0.000, 0.000], [0.000, 0.000, 1.000]]` for `{:.3}`. The axis of the
/// identity is printed as [0, 0, 0].
impl<T: Real> std::fmt::Display for SO3Matrix<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.log();
        let angle = v.norm();
        let axis = if angle > T::zero() { v / angle } else { v };
        let m = &self.m;
        let num = |f: &mut std::fmt::Formatter<'_>, x: T| match f.precision() {
            Some(n) => write!(f, "{x:.n$}"),
            None => write!(f, "{x}"),
        };
        write!(f, "SO3Matrix: angle ")?;
        num(f, angle)?;
        write!(f, " rad about [")?;
        for i in 0..3 {
            if i > 0 {
                write!(f, ", ")?;
            }
            num(f, axis[i])?;
        }
        write!(f, "], rows [")?;
        for i in 0..3 {
            write!(f, "{}[", if i > 0 { ", " } else { "" })?;
            for j in 0..3 {
                if j > 0 {
                    write!(f, ", ")?;
                }
                num(f, m[(i, j)])?;
            }
            write!(f, "]")?;
        }
        write!(f, "]")
    }
}

macro_rules! impl_mul {
    ($($lhs:ty, $rhs:ty;)+) => {$(
        /// Group product (same as [`LieGroup::compose`]).
        impl<T: Real> std::ops::Mul<$rhs> for $lhs {
            type Output = SO3Matrix<T>;
            #[inline]
            fn mul(self, rhs: $rhs) -> SO3Matrix<T> {
                SO3Matrix {
                    m: super::fma::mat3_mul(&self.m, &rhs.m),
                }
            }
        }
    )+};
}
impl_mul! {
    SO3Matrix<T>, SO3Matrix<T>;
    &SO3Matrix<T>, SO3Matrix<T>;
    SO3Matrix<T>, &SO3Matrix<T>;
    &SO3Matrix<T>, &SO3Matrix<T>;
}

macro_rules! impl_mul_vector {
    ($($lhs:ty, $rhs:ty;)+) => {$(
        /// Rotates a vector (same as [`LieGroup::act`]).
        impl<T: Real> std::ops::Mul<$rhs> for $lhs {
            type Output = Vector3<T>;
            #[inline]
            fn mul(self, rhs: $rhs) -> Vector3<T> {
                #[allow(clippy::needless_borrow)]
                super::fma::mat3_mul_vec(&self.m, &rhs)
            }
        }
    )+};
}
impl_mul_vector! {
    SO3Matrix<T>, Vector3<T>;
    &SO3Matrix<T>, Vector3<T>;
    SO3Matrix<T>, &Vector3<T>;
    &SO3Matrix<T>, &Vector3<T>;
}

/// `a *= b` is `a = a·b`.
impl<T: Real> std::ops::MulAssign<SO3Matrix<T>> for SO3Matrix<T> {
    #[inline]
    fn mul_assign(&mut self, rhs: SO3Matrix<T>) {
        self.m = super::fma::mat3_mul(&self.m, &rhs.m);
    }
}
