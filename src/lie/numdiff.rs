//! Finite-difference derivatives on the manifold, for checking analytic Jacobians.
//!
//! These implement the paper's definitions of differentiation with respect to a
//! rotation, (14) and (16) for functions `SO(3) → ℝⁿ` and (18) for `SO(3) → SO(3)`, by
//! **central** differences of body-frame (right) boxplus perturbations:
//!
//! ```text
//! column i of D_R f(R)  ≈  [ f(R ⊞ h eᵢ) − f(R ⊞ −h eᵢ) ] / 2h                 (14),(16)
//! column i of D_R g(R)  ≈  [ (g(R ⊞ h eᵢ) ⊟ g(R)) − (g(R ⊞ −h eᵢ) ⊟ g(R)) ] / 2h  (18)
//! ```
//!
//! Central differences have truncation error O(h²) and round-off O(ε/h). The
//! recommended step is [`Real::fd_step`] (1e-5 for f64, 1e-3 for f32), and
//! [`Real::fd_tolerance`] is the relative error such checks meet on this library's
//! Jacobians (1e-7 for f64, 2e-3 for f32), measured with [`max_relative_error`].
//!
//! Keep the evaluation point at least 10·h away from a rotation angle of π: the
//! perturbed rotations then stay on one side of Log's branch cut. Test π itself through
//! identities instead.
//!
//! ```
//! use lie_xpbd::lie::{numdiff, LieGroup, Real, SO3Matrix};
//! use nalgebra::{DVector, Vector3};
//! // Check (20): D_R(R p) = −R p̂.
//! let r = SO3Matrix::<f64>::exp(&Vector3::new(0.3, -1.2, 0.5));
//! let p = Vector3::new(1.0, 2.0, -0.5);
//! let fd = numdiff::rotation_to_vector(|r: &SO3Matrix<f64>| DVector::from_column_slice(r.act(&p).as_slice()), &r, f64::fd_step());
//! let analytic = r.jacobian_act(&p);
//! assert!(numdiff::max_relative_error(&analytic, &fd) < f64::fd_tolerance());
//! ```

use super::group::LieGroup;
pub use super::pose::Pose;
use super::real::{c, Real};
use nalgebra::{DMatrix, DVector, Dim, Matrix, Matrix3, Matrix6, RawStorage, Vector3, Vector6};

fn unit<T: Real>(i: usize, h: T) -> Vector3<T> {
    let mut e = Vector3::zeros();
    e[i] = h;
    e
}

/// (14)/(16): the n×3 derivative of `f: SO(3) → ℝⁿ` at `r`, by central differences of
/// boxplus perturbations with step `h` (rad).
pub fn rotation_to_vector<T, G, F>(f: F, r: &G, h: T) -> DMatrix<T>
where
    T: Real,
    G: LieGroup<T>,
    F: Fn(&G) -> DVector<T>,
{
    let mut cols = Vec::with_capacity(3);
    for i in 0..3 {
        let plus = f(&r.boxplus(&unit(i, h)));
        let minus = f(&r.boxplus(&unit(i, -h)));
        cols.push((plus - minus) / (c::<T>(2.0) * h));
    }
    DMatrix::from_columns(&cols)
}

/// (18): the 3×3 derivative of `g: SO(3) → SO(3)` at `r`, by central differences:
/// column i is `[(g(r ⊞ heᵢ) ⊟ g(r)) − (g(r ⊞ −heᵢ) ⊟ g(r))]/2h`.
pub fn rotation_to_rotation<T, G, H, F>(g: F, r: &G, h: T) -> Matrix3<T>
where
    T: Real,
    G: LieGroup<T>,
    H: LieGroup<T>,
    F: Fn(&G) -> H,
{
    let g0 = g(r);
    let mut m = Matrix3::zeros();
    for i in 0..3 {
        let plus = g(&r.boxplus(&unit(i, h))).boxminus(&g0);
        let minus = g(&r.boxplus(&unit(i, -h))).boxminus(&g0);
        m.set_column(i, &((plus - minus) / (c::<T>(2.0) * h)));
    }
    m
}

/// The 3×3 derivative of `g: ℝ³ → SO(3)` at `v` (e.g. Exp, whose derivative is Γ):
/// column i is `[(g(v + heᵢ) ⊟ g(v)) − (g(v − heᵢ) ⊟ g(v))]/2h`.
pub fn vector_to_rotation<T, H, F>(g: F, v: &Vector3<T>, h: T) -> Matrix3<T>
where
    T: Real,
    H: LieGroup<T>,
    F: Fn(&Vector3<T>) -> H,
{
    let g0 = g(v);
    let mut m = Matrix3::zeros();
    for i in 0..3 {
        let plus = g(&(v + unit(i, h))).boxminus(&g0);
        let minus = g(&(v - unit(i, h))).boxminus(&g0);
        m.set_column(i, &((plus - minus) / (c::<T>(2.0) * h)));
    }
    m
}

/// The ordinary n×m derivative of `f: ℝᵐ → ℝⁿ` at `x`, by central differences.
pub fn vector_to_vector<T, F>(f: F, x: &DVector<T>, h: T) -> DMatrix<T>
where
    T: Real,
    F: Fn(&DVector<T>) -> DVector<T>,
{
    let mut cols = Vec::with_capacity(x.len());
    for i in 0..x.len() {
        let mut xp = x.clone();
        let mut xm = x.clone();
        xp[i] += h;
        xm[i] -= h;
        cols.push((f(&xp) - f(&xm)) / (c::<T>(2.0) * h));
    }
    DMatrix::from_columns(&cols)
}

/// The n×6k gradient of `f: (SE-pose)ᵏ → ℝⁿ` in the layout of (59): for each pose j,
/// three columns ∂f/∂pⱼ (world-frame position perturbations, per m) followed by three
/// columns D_{Rⱼ} f (body-frame rotation perturbations, per rad).
pub fn poses_to_vector<T, G, F>(f: F, poses: &[Pose<T, G>], h: T) -> DMatrix<T>
where
    T: Real,
    G: LieGroup<T>,
    F: Fn(&[Pose<T, G>]) -> DVector<T>,
{
    let mut cols = Vec::with_capacity(6 * poses.len());
    let zero = Vector3::zeros();
    let mut work = poses.to_vec();
    for j in 0..poses.len() {
        for k in 0..6 {
            let (dp, dt) = if k < 3 {
                (unit(k, h), zero)
            } else {
                (zero, unit(k - 3, h))
            };
            work[j] = poses[j].perturbed(&dp, &dt);
            let plus = f(&work);
            work[j] = poses[j].perturbed(&-dp, &-dt);
            let minus = f(&work);
            work[j] = poses[j];
            cols.push((plus - minus) / (c::<T>(2.0) * h));
        }
    }
    DMatrix::from_columns(&cols)
}

/// The 6×6 derivative of `g: pose → pose` at `x` in the (59) layout of
/// [`Pose::boxplus`] on both sides: column i is
/// `[(g(x ⊞ heᵢ) ⊟ g(x)) − (g(x ⊞ −heᵢ) ⊟ g(x))]/2h`.
pub fn pose_to_pose<T, G, F>(g: F, x: &Pose<T, G>, h: T) -> Matrix6<T>
where
    T: Real,
    G: LieGroup<T>,
    F: Fn(&Pose<T, G>) -> Pose<T, G>,
{
    let g0 = g(x);
    let mut m = Matrix6::zeros();
    for i in 0..6 {
        let mut e = Vector6::zeros();
        e[i] = h;
        let plus = g(&x.boxplus(&e)).boxminus(&g0);
        let minus = g(&x.boxplus(&-e)).boxminus(&g0);
        m.set_column(i, &((plus - minus) / (c::<T>(2.0) * h)));
    }
    m
}

/// `max|a − b| / max(1, max|a|)`: the error metric behind [`Real::fd_tolerance`]
/// (absolute for entries below one, relative to the largest analytic entry above).
/// `a` is the analytic Jacobian, `b` the finite-difference one. Returns +∞ if the
/// shapes differ or if any entry of either is NaN or infinite (so such a comparison
/// always fails a tolerance).
///
/// ```
/// use lie_xpbd::lie::numdiff::max_relative_error;
/// use nalgebra::{DMatrix, Matrix2};
/// let a = Matrix2::new(1.0, 0.0, 0.0, 4.0);
/// let b = Matrix2::new(1.0, 0.0, 0.0, 4.004);
/// let e: f64 = max_relative_error(&a, &b); // |0.004| / max(1, 4)
/// assert!((e - 1e-3).abs() < 1e-12);
/// let nan = Matrix2::new(f64::NAN, 0.0, 0.0, 4.0);
/// assert_eq!(max_relative_error(&nan, &b), f64::INFINITY);
/// assert_eq!(max_relative_error(&a, &DMatrix::<f64>::zeros(3, 3)), f64::INFINITY);
/// ```
pub fn max_relative_error<T, R1, C1, S1, R2, C2, S2>(
    a: &Matrix<T, R1, C1, S1>,
    b: &Matrix<T, R2, C2, S2>,
) -> T
where
    T: Real,
    R1: Dim,
    C1: Dim,
    S1: RawStorage<T, R1, C1>,
    R2: Dim,
    C2: Dim,
    S2: RawStorage<T, R2, C2>,
{
    let infinity = crate::lie::real::c::<T>(f64::INFINITY);
    if a.shape() != b.shape() {
        return infinity;
    }
    let mut scale = T::one();
    let mut err = T::zero();
    let (nr, nc) = a.shape();
    for j in 0..nc {
        for i in 0..nr {
            let x = a[(i, j)];
            let y = b[(i, j)];
            scale = scale.max(x.abs());
            let d = (x - y).abs();
            if !d.is_finite() {
                return infinity;
            }
            err = err.max(d);
        }
    }
    err / scale
}
