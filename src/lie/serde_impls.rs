//! `serde` support (feature `serde`) for [`SO3Matrix`] and [`Pose`].
//!
//! * `SO3Matrix` is written as its three rows, `[[r00, r01, r02], [r10, …], […]]`, and
//!   read back through [`LieGroup::from_matrix`]: a matrix that is not a rotation within
//!   [`crate::lie::Real::orthogonality_tolerance`] is an error, an accepted one is
//!   re-orthonormalised.
//! * `Pose` is written as `{ position: [x, y, z], rotation: [w, x, y, z] }` (m; unit
//!   quaternion with w ≥ 0) whatever the representation, so a pose saved from a matrix
//!   run loads into a quaternion run and back; the quaternion written is normalised. On
//!   reading, its norm must be within [`crate::lie::QUATERNION_NORM_TOLERANCE`] of 1 (as
//!   in scene files); it is then normalised.

use super::group::LieGroup;
use super::matrix::{validate_unit_quaternion, SO3Matrix};
use super::pose::Pose;
use super::real::Real;
use nalgebra::{Matrix3, Quaternion, Vector3};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

impl<T: Real + Serialize> Serialize for SO3Matrix<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = self.matrix();
        let rows: [[T; 3]; 3] = std::array::from_fn(|i| std::array::from_fn(|j| m[(i, j)]));
        rows.serialize(s)
    }
}

impl<'de, T: Real + Deserialize<'de>> Deserialize<'de> for SO3Matrix<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let rows = <[[T; 3]; 3]>::deserialize(d)?;
        let m = Matrix3::from_fn(|i, j| rows[i][j]);
        <SO3Matrix<T> as LieGroup<T>>::from_matrix(&m).map_err(D::Error::custom)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PoseRepr<T> {
    position: [T; 3],
    rotation: [T; 4],
}

impl<T: Real + Serialize, G: LieGroup<T>> Serialize for Pose<T, G> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Normalised: a matrix that drifted from orthonormality by round-off (products
        // without `renormalize`) gives a quaternion whose norm is off by about the drift,
        // which reading would reject beyond QUATERNION_NORM_TOLERANCE (1e-6, reached after
        // a few dozen f32 products).
        let q = self.rotation.to_quaternion();
        let q = q / q.norm();
        let q = if q.w < T::zero() { -q } else { q };
        // `+ 0` turns a w of −0 (a half turn) into +0, so the output never shows w = −0.
        PoseRepr {
            position: [self.position.x, self.position.y, self.position.z],
            rotation: [q.w + T::zero(), q.i, q.j, q.k],
        }
        .serialize(s)
    }
}

impl<'de, T: Real + Deserialize<'de>, G: LieGroup<T>> Deserialize<'de> for Pose<T, G> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = PoseRepr::<T>::deserialize(d)?;
        if let Some(i) = r.position.iter().position(|x| !x.is_finite()) {
            return Err(D::Error::custom(format!(
                "pose position has a non-finite entry at index {i}"
            )));
        }
        let [w, x, y, z] = r.rotation;
        let q = Quaternion::new(w, x, y, z);
        // The error says what is wrong (norm and tolerance for NotUnit); only say where.
        let u = validate_unit_quaternion(&q)
            .map_err(|e| D::Error::custom(format!("pose rotation [w, x, y, z]: {e}")))?;
        let rotation = G::from_quaternion(u.as_ref()).map_err(D::Error::custom)?;
        Ok(Pose::new(Vector3::from(r.position), rotation))
    }
}
