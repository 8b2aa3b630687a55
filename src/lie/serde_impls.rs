//! `serde` support (feature `serde`) for [`SO3Matrix`] and [`Pose`].
//!
//! * `SO3Matrix` is written as its three rows, `[[r00, r01, r02], [r10, …], […]]`, and
//!   read back through [`LieGroup::from_matrix`]: a matrix that is not a rotation within
//!   [`crate::lie::Real::orthogonality_tolerance`] is an error, an accepted one is
//!   re-orthonormalised unless it is orthonormal to round-off already (then it is kept
//!   bit for bit, so a save and load gives back the same matrix). Rows, not nalgebra's
//!   column-major storage that `Debug` prints.
//! * `Pose` is written as `{ position: [x, y, z], rotation: [w, x, y, z] }` (m; unit
//!   quaternion with w ≥ 0) whatever the representation, so a pose saved from a matrix
//!   run loads into a quaternion run and back (nalgebra's `Debug` prints quaternions as
//!   `[x, y, z, w]`; this format puts w first, as scene files do). The quaternion
//!   written is normalised unless it is unit to round-off already. On reading, its norm
//!   must be within [`crate::lie::QUATERNION_NORM_TOLERANCE`] of 1 (as in scene files);
//!   it is then normalised unless unit to round-off. A unit quaternion with w ≥ 0 thus
//!   survives a save and load bit for bit (with a JSON parser that reads numbers
//!   exactly, e.g. serde_json with its `float_roundtrip` feature).

use super::group::LieGroup;
use super::matrix::{validate_unit_quaternion, SO3Matrix};
use super::pose::Pose;
use super::real::{c, Real};
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
        // A quaternion already unit to round-off is written bit for bit (reading keeps it
        // bit for bit too), so a pose with w ≥ 0 survives a save and load exactly.
        let q = self.rotation.to_quaternion();
        let n2 = q.norm_squared();
        let q = if (n2 - T::one()).abs() <= T::default_epsilon() * c::<T>(4.0) {
            q
        } else {
            q / n2.sqrt()
        };
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
                "pose position [x, y, z]: entry {i} is not finite in {} (NaN, infinity, or a number too large for {})",
                T::NAME,
                T::NAME
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
