//! The value types of an element's evaluation: strains, the interpolated rotation
//! vector's and pose's gradients, the strain gradient and a Gauss-point constraint.

use super::NodeBlock6;
use crate::lie::{LieGroup, Pose, Real};
use nalgebra::{Matrix3, Vector3, Vector6};

/// The strains at one point of an element (101)–(103), both in the body frame of R(ξ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Strains<T: Real> {
    /// v = R(ξ)ᵀ p'(s) (101): shear along d₁, d₂ and stretch along d₃ (dimensionless;
    /// e₃ when unstrained).
    pub shear: Vector3<T>,
    /// u = Γ(θ) θ'(s) (103): bending about d₁, d₂ and twist about d₃ (rad/m).
    pub curvature: Vector3<T>,
}

impl<T: Real> Strains<T> {
    /// `(v, u)` stacked into a 6-vector, v first.
    pub fn to_vector(&self) -> Vector6<T> {
        let (v, u) = (self.shear, self.curvature);
        Vector6::new(v.x, v.y, v.z, u.x, u.y, u.z)
    }
}

/// The local rotation vector θ(ξ) (100), its arc-length derivative θ'(s) (104), and
/// their derivatives with respect to every nodal rotation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThetaGradient<T: Real, const N: usize> {
    /// θ(ξ), rad, in the body frame of node 0.
    pub theta: Vector3<T>,
    /// θ'(s), rad/m.
    pub theta_prime: Vector3<T>,
    /// D_{Rₖ}θ (3×3 each, dimensionless): θ does not depend on the positions.
    pub d_theta: [Matrix3<T>; N],
    /// D_{Rₖ}θ' (3×3 each, 1/m).
    pub d_theta_prime: [Matrix3<T>; N],
}

/// The interpolated pose (p(ξ), R(ξ)) and its derivative with respect to every node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoseGradient<T: Real, G: LieGroup<T>, const N: usize> {
    /// (p(ξ), R(ξ)) (98)–(99): m, world frame; director frame → world.
    pub pose: Pose<T, G>,
    /// Per node k the 6×6 block mapping (δpₖ, δθₖ) to (δp(ξ), δθ(ξ)), δp world frame,
    /// δθ body frame (of Rₖ, and of R(ξ)), the tangent layout of [`Pose::boxplus`]:
    /// `[[φₖ I, 0], [0, D_{Rₖ}R(ξ)]]`.
    pub gradient: [NodeBlock6<T>; N],
}

/// The strains at one point and their gradient with respect to every node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StrainGradient<T: Real, const N: usize> {
    /// v and u at the point.
    pub strains: Strains<T>,
    /// Per node k the 6×6 block `[∂/∂pₖ | D_{Rₖ}]` of the 6-vector (v, u): rows 0–2 v
    /// (1/m in the position columns, 1/rad in the rotation columns), rows 3–5 u (zero
    /// position columns; 1/m per rad in the rotation columns).
    pub gradient: [NodeBlock6<T>; N],
}

/// One Gauss-point constraint of an element (108) with its gradient and compliance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaussPointConstraint<T: Real, const N: usize> {
    /// The Gauss point ξ̃ₖ ∈ (0, 1).
    pub xi: T,
    /// The Gauss weight wₖ (dimensionless, on [0, 1]).
    pub weight: T,
    /// C = (v(ξ̃ₖ) − e₃, u(ξ̃ₖ) − u*(ξ̃ₖ)) (108): dimensionless rows 0–2, rad/m rows 3–5.
    pub value: Vector6<T>,
    /// Per node k the 6×6 block `[∂C/∂pₖ | D_{Rₖ}C]` (59): the 6 × 6N gradient as N
    /// blocks, in node order.
    pub gradient: [NodeBlock6<T>; N],
    /// The diagonal of the compliance α (109): 1/(N·m) rows 0–2, 1/(N·m³) rows 3–5.
    pub compliance: Vector6<T>,
}
