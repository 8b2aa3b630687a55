//! The Lie-group toolkit (paper Section 3, Appendices D–E): SO(3) as rotation
//! matrices or unit quaternions behind one [`LieGroup`] trait, with the right Jacobian
//! Γ, its inverse, the Jacobian blocks (20)–(28), and finite-difference derivatives on
//! the manifold ([`numdiff`]).
//!
//! Nothing here knows about physics.

pub mod error;
pub mod group;
pub mod matrix;
mod mean;
pub mod numdiff;
pub mod pose;
pub mod quaternion;
pub mod real;
#[cfg(feature = "serde")]
mod serde_impls;
pub mod so3;

pub use error::LieError;
pub use group::LieGroup;
pub use matrix::{SO3Matrix, QUATERNION_NORM_TOLERANCE};
pub use nalgebra::UnitQuaternion;
pub use pose::Pose;
pub use real::Real;
pub use so3::{
    exp_matrix, hat, left_jacobian, left_jacobian_inv, log_matrix, right_jacobian,
    right_jacobian_derivative_contraction, right_jacobian_inv, vee,
};
