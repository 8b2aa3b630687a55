//! The Lie-group toolkit (paper Section 3, Appendices D–E): SO(3) as rotation
//! matrices ([`SO3Matrix`]) or unit quaternions (nalgebra's [`UnitQuaternion`]) behind
//! one [`LieGroup`] trait, for `f32` and `f64`; the pose ℝ³ × SO(3) ([`Pose`]); the
//! right and left Jacobians and their inverses; and finite-difference derivatives on the
//! manifold ([`numdiff`]). Nothing here knows about physics.
//!
//! # Conventions
//! Tangent vectors are rotation vectors θ ∈ ℝ³ in radians. The paper's operations are
//! the body-frame (right) ones: `R ⊞ θ = R·Exp(θ)` (9), `R₁ ⊟ R₂ = Log(R₂ᵀR₁)` (10). Every
//! Jacobian "with respect to a rotation" is a 3-column block for a body-frame
//! perturbation `R ⊞ δθ`, and a rotation-valued output is perturbed in its own body
//! frame, (14)–(19). Rotations act on column vectors: `R·v` maps body to world.
//!
//! # Operations
//! Each operation has its Jacobians next to it, as provided methods of [`LieGroup`]
//! shared by both representations (for SO(3) every derivative of a quaternion expression
//! equals that of its matrix, (34)). Each Jacobian is derived in `proofs/` and checked
//! against finite differences in all four combinations of representation and scalar.
//!
//! | operation | here | Jacobians | manif / Sophus |
//! |---|---|---|---|
//! | Exp, Log (6), (8) | [`LieGroup::exp`], [`LieGroup::log`] | [`LieGroup::jacobian_exp`] = Γ, [`LieGroup::jacobian_log`] = Γ⁻¹ | `exp`/`log`, `exp`/`log` |
//! | product, inverse | [`LieGroup::compose`], [`LieGroup::inverse`] | `jacobian_compose_{lhs,rhs}` (22)–(23), [`LieGroup::jacobian_inverse`] (21) | `compose`, `inverse` |
//! | rotate a vector | [`LieGroup::act`], [`LieGroup::act_inv`] | [`LieGroup::jacobian_act`] (20), [`LieGroup::jacobian_act_point`], [`LieGroup::jacobian_act_inv`], [`LieGroup::jacobian_act_inv_point`] | `act` |
//! | right ⊞, ⊟ (9)–(10) | [`LieGroup::boxplus`], [`LieGroup::boxminus`] | `jacobian_boxplus_{lhs,rhs}`, `jacobian_boxminus_{lhs,rhs}` (28) | `rplus`, `rminus` |
//! | left ⊞, ⊟ | [`LieGroup::boxplus_left`], [`LieGroup::boxminus_left`] | `jacobian_boxplus_left_{lhs,rhs}`, `jacobian_boxminus_left_{lhs,rhs}` | `lplus`, `lminus` |
//! | R₁⁻¹R₂ | [`LieGroup::between`] | `jacobian_between_{lhs,rhs}` | `between` |
//! | adjoint | [`LieGroup::adjoint`] (= R) | | `adj`, `Adj` |
//! | right Jacobian | [`right_jacobian`] Γ (25), [`right_jacobian_inv`] Γ⁻¹ (27), [`right_jacobian_derivative_contraction`] (∂Γ/∂θ, App. G) | | `rjac`, `rjacinv` |
//! | left Jacobian | [`left_jacobian`] = Γᵀ = Exp(θ)·Γ, [`left_jacobian_inv`] | | `ljac`, `ljacinv`, `leftJacobian`, `leftJacobianInverse` |
//! | geodesic interpolation | [`LieGroup::interpolate`] | `jacobian_interpolate_{lhs,rhs,t}` | `interpolate` |
//! | bi-invariant mean | [`LieGroup::mean`], [`LieGroup::weighted_mean`] | | `average` |
//! | uniform sampling | [`LieGroup::random`] (Haar measure) | | `Random`, `sampleUniform` |
//! | pose ℝ³ × SO(3) | [`Pose::boxplus`], [`Pose::boxminus`] in the (59) layout, [`Pose::transform_point`] | `Pose::jacobian_*` | |
//!
//! [`SO3Matrix`] also has `*` (product and action on vectors); [`SO3Matrix`] and
//! [`Pose`] have `Display` and the `approx` traits, which compare rotations by the angle
//! between them (so q and −q are equal). `abs_diff_eq` (angle ≤ ε) is bi-invariant;
//! `relative_eq` scales its tolerance by the rotations' own angles from the identity,
//! so it depends on the frame: prefer `abs_diff_eq` with an angle in radians. With the
//! feature `serde`, [`SO3Matrix`] and [`Pose`] serialize, deserializing validates, and
//! a rotation survives a save and load bit for bit.
//!
//! [`Pose`] is ℝ³ × SO(3) with the (59) layout, not SE(3): it has ⊞, ⊟ and the point
//! maps, and no group product.
//!
//! # Accuracy
//! The coefficient functions of Exp, Γ, Γ⁻¹ and ∂Γ/∂θ are each within a few ε of their
//! exact values over [0, π] in both precisions ([`so3`] module docs, [`Real`]).

pub mod error;
pub(crate) mod fma;
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
