//! The Lie-group toolkit (paper Section 3, Appendices D–E): SO(3) as rotation
//! matrices or unit quaternions behind one [`LieGroup`] trait, with the right Jacobian
//! Γ, its inverse, the Jacobian blocks (20)–(28), and finite-difference derivatives on
//! the manifold ([`numdiff`]).
//!
//! Nothing here knows about physics.

pub mod error;
pub mod group;
pub mod matrix;
pub mod numdiff;
pub mod quaternion;
pub mod real;
pub mod so3;

pub use error::LieError;
pub use group::LieGroup;
pub use matrix::SO3Matrix;
pub use nalgebra::UnitQuaternion;
pub use numdiff::Pose;
pub use real::Real;
pub use so3::{
    exp_matrix, hat, log_matrix, right_jacobian, right_jacobian_derivative_contraction,
    right_jacobian_inv, vee,
};
