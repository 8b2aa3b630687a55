//! Fused multiply-add forms of the small products on the solver's hot paths (3×3
//! matrix products, matrix–vector products, the Hamilton product and a unit
//! quaternion's rotation matrix).
//!
//! Where the build targets a processor with FMA (`target_feature = "fma"`; builds
//! inside this repository do, through `.cargo/config.toml`), each sum of products is
//! formed with fused multiply-adds, left to right: every product but the first is
//! added without rounding it first, so each entry is rounded 3 times instead of 5 (a
//! dot product of three terms). Without FMA the same sums are formed with separate
//! multiplications and additions, in the same order. The two builds therefore agree
//! to round-off, not bit for bit.
//!
//! Used by the matrix group (compose, act, act⁻¹, ⊟, the quaternion → matrix
//! conversion, and its `*` operators, which stay equal to compose and act), the bodies'
//! quaternion products (corrections, the velocity update), the joints' Jacobians and
//! their block solves, the series of `so3` (Horner's rule and Estrin's scheme) and the
//! rotational prediction's sums and 3×3 solve. The unit-quaternion group's own compose keeps nalgebra's
//! unfused product: fused, a pendulum looping through swing π under inactive swing and
//! twist limits no longer matched the same pendulum without limits bit for bit (5e-17
//! in f64; `tests/joint/limits_spherical.rs`, `loop_over_the_top`).
//!
//! Measured on the development machine (wall time of a step, fastest of chunks of
//! 100,000 steps of `examples/step_profile`, the old and new binaries alternated):
//! 3-RPS block 2.87 → 2.49 µs, triple pendulum block 0.75 → 0.67 µs; criterion medians
//! of one substep (`benches/rps.rs`, `benches/pendulum.rs`): 2.87 → 2.44 µs and
//! 0.99 → 0.85 µs.

use super::real::Real;

/// a·b + y, rounded once (a fused multiply-add) where the build targets a processor
/// with FMA (`target_feature = "fma"`, as `.cargo/config.toml` sets for builds inside
/// this repository), otherwise rounded twice: a software `mul_add` would cost a library
/// call per operation.
#[inline(always)]
pub(crate) fn fmadd<T: Real>(a: T, b: T, y: T) -> T {
    if cfg!(target_feature = "fma") {
        a.mul_add(b, y)
    } else {
        a * b + y
    }
}

/// a₀b₀ + a₁b₁ + a₂b₂, summed left to right with [`fmadd`].
#[inline(always)]
pub(crate) fn dot3<T: Real>(a: [T; 3], b: [T; 3]) -> T {
    fmadd(a[2], b[2], fmadd(a[1], b[1], a[0] * b[0]))
}

/// M·v for a 3×3 matrix, each entry a [`dot3`].
#[inline(always)]
pub(crate) fn mat3_mul_vec<T: Real>(
    m: &nalgebra::Matrix3<T>,
    v: &nalgebra::Vector3<T>,
) -> nalgebra::Vector3<T> {
    nalgebra::Vector3::from_fn(|i, _| dot3([m[(i, 0)], m[(i, 1)], m[(i, 2)]], [v.x, v.y, v.z]))
}

/// Mᵀ·v for a 3×3 matrix, as [`mat3_mul_vec`].
#[inline(always)]
pub(crate) fn mat3_tr_mul_vec<T: Real>(
    m: &nalgebra::Matrix3<T>,
    v: &nalgebra::Vector3<T>,
) -> nalgebra::Vector3<T> {
    nalgebra::Vector3::from_fn(|i, _| dot3([m[(0, i)], m[(1, i)], m[(2, i)]], [v.x, v.y, v.z]))
}

/// A·B for 3×3 matrices, each entry a [`dot3`] of a row of A and a column of B.
#[inline(always)]
pub(crate) fn mat3_mul<T: Real>(
    a: &nalgebra::Matrix3<T>,
    b: &nalgebra::Matrix3<T>,
) -> nalgebra::Matrix3<T> {
    nalgebra::Matrix3::from_fn(|i, j| dot3(row(a, i), col(b, j)))
}

/// Aᵀ·B for 3×3 matrices, as [`mat3_mul`].
#[inline(always)]
pub(crate) fn mat3_tr_mul<T: Real>(
    a: &nalgebra::Matrix3<T>,
    b: &nalgebra::Matrix3<T>,
) -> nalgebra::Matrix3<T> {
    nalgebra::Matrix3::from_fn(|i, j| dot3(col(a, i), col(b, j)))
}

/// A·Bᵀ for 3×3 matrices, as [`mat3_mul`].
#[inline(always)]
pub(crate) fn mat3_mul_tr<T: Real>(
    a: &nalgebra::Matrix3<T>,
    b: &nalgebra::Matrix3<T>,
) -> nalgebra::Matrix3<T> {
    nalgebra::Matrix3::from_fn(|i, j| dot3(row(a, i), row(b, j)))
}

#[inline(always)]
fn row<T: Real>(m: &nalgebra::Matrix3<T>, i: usize) -> [T; 3] {
    [m[(i, 0)], m[(i, 1)], m[(i, 2)]]
}

#[inline(always)]
fn col<T: Real>(m: &nalgebra::Matrix3<T>, j: usize) -> [T; 3] {
    [m[(0, j)], m[(1, j)], m[(2, j)]]
}

/// The Hamilton product p·q of unit quaternions, each component a sum of four
/// products with [`fmadd`]; the result is not renormalised.
#[inline(always)]
pub(crate) fn quat_mul<T: Real>(
    p: &nalgebra::UnitQuaternion<T>,
    q: &nalgebra::UnitQuaternion<T>,
) -> nalgebra::UnitQuaternion<T> {
    let (a, b) = (p.quaternion(), q.quaternion());
    let (aw, ax, ay, az) = (a.w, a.i, a.j, a.k);
    let (bw, bx, by, bz) = (b.w, b.i, b.j, b.k);
    let w = fmadd(-az, bz, fmadd(-ay, by, fmadd(-ax, bx, aw * bw)));
    let x = fmadd(-az, by, fmadd(ay, bz, fmadd(ax, bw, aw * bx)));
    let y = fmadd(az, bx, fmadd(-ax, bz, fmadd(ay, bw, aw * by)));
    let z = fmadd(-ay, bx, fmadd(ax, by, fmadd(az, bw, aw * bz)));
    nalgebra::UnitQuaternion::new_unchecked(nalgebra::Quaternion::new(w, x, y, z))
}

/// The rotation matrix of a unit quaternion (w, i, j, k) in nalgebra's form of
/// `to_rotation_matrix` (diagonal w² + i² − j² − k² and its permutations, off-diagonal
/// entries 2(ij − wk) and the like), each sum with [`fmadd`].
#[inline(always)]
pub(crate) fn quat_to_mat3<T: Real>(q: &nalgebra::UnitQuaternion<T>) -> nalgebra::Matrix3<T> {
    let (w, i, j, k) = (q.w, q.i, q.j, q.k);
    let two = T::one() + T::one();
    let (w2, i2, j2) = (w * two, i * two, j * two);
    let ww = w * w;
    let d0 = fmadd(-k, k, fmadd(-j, j, fmadd(i, i, ww)));
    let d1 = fmadd(-k, k, fmadd(j, j, fmadd(-i, i, ww)));
    let d2 = fmadd(k, k, fmadd(-j, j, fmadd(-i, i, ww)));
    let (wk, wj, wi) = (w2 * k, w2 * j, w2 * i);
    nalgebra::Matrix3::new(
        d0,
        fmadd(i2, j, -wk),
        fmadd(i2, k, wj),
        fmadd(i2, j, wk),
        d1,
        fmadd(j2, k, -wi),
        fmadd(i2, k, -wj),
        fmadd(j2, k, wi),
        d2,
    )
}

/// a·s + y for a vector a, a scalar s and a vector y, componentwise with [`fmadd`].
#[inline(always)]
pub(crate) fn axpy3<T: Real>(
    a: &nalgebra::Vector3<T>,
    s: T,
    y: &nalgebra::Vector3<T>,
) -> nalgebra::Vector3<T> {
    nalgebra::Vector3::new(fmadd(a.x, s, y.x), fmadd(a.y, s, y.y), fmadd(a.z, s, y.z))
}
