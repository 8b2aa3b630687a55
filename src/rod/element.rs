//! Cosserat rod finite elements (paper Section 6.3, Appendix G): the on-manifold
//! interpolation of an element's nodal poses, its strains, and the Gauss-point
//! constraints with their gradients.
//!
//! # The element
//! An element of rest length l has `N` nodes (pⱼ, Rⱼ), j = 0, …, N − 1 (N = 2, 3, 4:
//! linear, quadratic, cubic), at the equispaced parameters ξⱼ = j/(N − 1) of the
//! reference interval ξ = s/l ∈ [0, 1] (95). With the Lagrange shape functions φⱼ
//! ([`LagrangeBasis`]) and ψⱼ = Rⱼ ⊟ R₀ (rad, body frame of the reference node 0):
//!
//! ```text
//! p(ξ) = Σⱼ φⱼ(ξ) pⱼ                          (98)    p'(s) = (1/l) Σⱼ φⱼ,ξ pⱼ
//! θ(ξ) = Σⱼ φⱼ(ξ) ψⱼ                          (100)   θ'(s) = (1/l) Σⱼ φⱼ,ξ ψⱼ   (104)
//! R(ξ) = R₀ ⊞ θ(ξ) = R₀ Exp(θ(ξ))             (99)
//! v(ξ) = R(ξ)ᵀ p'(s)                           (101)   shear/stretch, dimensionless
//! u(ξ) = Γ(θ) θ'(s)                            (103)   curvature/twist, 1/m
//! ```
//!
//! (ψ₀ = 0, so the sums for θ run over j ≥ 1 as in (100).) The interpolation is
//! relative to node 0, which makes the strains objective: rotating every node by the
//! same world rotation leaves v and u unchanged. It needs every nodal rotation within
//! angle π of node 0 (Log's branch cut): elements whose nodes turn by more than π
//! relative to node 0 are not representable.
//!
//! # Gradients
//! Every gradient is per node, a block in the layout of (59): three columns for the
//! world-frame position perturbation δpₖ (per m), then three for the body-frame rotation
//! perturbation Rₖ ⊞ δθₖ (per rad). With Gⱼ = Γ⁻¹(ψⱼ) (28), derived in
//! `proofs/rod_interpolation.md`, `proofs/rod_strains.md`:
//!
//! ```text
//! D_{Rₖ}θ  = φₖ Gₖ (k ≥ 1),        D_{R₀}θ  = −Σ_{j≥1} φⱼ Gⱼᵀ
//! D_{Rₖ}θ' = (φₖ,ξ/l) Gₖ,          D_{R₀}θ' = −Σ_{j≥1} (φⱼ,ξ/l) Gⱼᵀ
//! D_{Rₖ}R(ξ) = Γ(θ) D_{Rₖ}θ (k ≥ 1),   D_{R₀}R(ξ) = Exp(θ)ᵀ + Γ(θ) D_{R₀}θ
//! ∂v/∂pₖ = (φₖ,ξ/l) R(ξ)ᵀ,         D_{Rₖ}v = v̂ D_{Rₖ}R(ξ)
//! ∂u/∂pₖ = 0,                      D_{Rₖ}u = M(θ, θ') D_{Rₖ}θ + Γ(θ) D_{Rₖ}θ'
//! ```
//!
//! where `M(θ, w) = ∂(Γ(θ)w)/∂θ` is the contraction of the third-order tensor ∂Γ/∂θ
//! with w = θ' of Appendix G ([`so3::right_jacobian_derivative_contraction`]). The
//! M term is the derivative of Γ(θ(ξ)) itself; leaving it out makes the curvature
//! rows wrong by tens of percent at large nodal rotation differences
//! (`tests/rod/element.rs` measures it).
//!
//! Nothing here allocates: all per-node quantities are fixed-size arrays.

use super::basis::LagrangeBasis;
use super::error::RodError;
use super::gauss::{GaussRule, Integration, MAX_GAUSS_POINTS};
use super::material::{check_length, NodalInertia, RodMaterial};
use crate::lie::so3::{self, hat, right_jacobian_derivative_contraction};
use crate::lie::{LieGroup, Pose, Real};
use nalgebra::{Matrix3, Matrix3x6, Matrix6, Vector3, Vector6};

mod rest_strains;
mod strains;
mod types;
pub use types::{GaussPointConstraint, PoseGradient, StrainGradient, Strains, ThetaGradient};

/// A 6×6 gradient block `[∂/∂pₖ | D_{Rₖ}]` of a 6-vector with respect to one node.
pub type NodeBlock6<T> = Matrix6<T>;

/// [`RodError::ParameterOutOfRange`] unless 0 ≤ ξ ≤ 1.
fn check_xi<T: Real>(xi: T) -> Result<(), RodError> {
    if xi >= T::zero() && xi <= T::one() {
        Ok(())
    } else {
        Err(RodError::ParameterOutOfRange { xi: xi.to_f64() })
    }
}

/// The quantities at one ξ every evaluation starts from.
struct Point<T: Real, G: LieGroup<T>, const N: usize> {
    phi: [T; N],
    /// φⱼ,ξ / l (1/m).
    dphi_ds: [T; N],
    theta: Vector3<T>,
    theta_prime: Vector3<T>,
    /// Exp(θ).
    exp_theta: G,
    /// R(ξ) = R₀ Exp(θ).
    rotation: G,
    /// Γ(θ).
    gamma: Matrix3<T>,
}

/// The nodal poses of one element at one state, with the relative rotations
/// ψⱼ = Rⱼ ⊟ R₀ and Γ⁻¹(ψⱼ) (computed once, shared by every point evaluated).
///
/// ```
/// use lie_xpbd::lie::{LieGroup, Pose, SO3Matrix};
/// use lie_xpbd::rod::ElementKinematics;
/// use nalgebra::Vector3;
/// // A straight, unstrained linear element of length 0.5 m along world z.
/// let nodes = [
///     Pose::new(Vector3::zeros(), SO3Matrix::<f64>::identity()),
///     Pose::new(Vector3::new(0.0, 0.0, 0.5), SO3Matrix::identity()),
/// ];
/// let kin = ElementKinematics::new(&nodes, 0.5)?;
/// let s = kin.strains(0.5)?;
/// assert_eq!(s.shear, Vector3::z());
/// assert_eq!(s.curvature, Vector3::zeros());
/// # Ok::<(), lie_xpbd::rod::RodError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ElementKinematics<T: Real, G: LieGroup<T>, const N: usize> {
    nodes: [Pose<T, G>; N],
    length: T,
    inv_length: T,
    /// ψⱼ = Rⱼ ⊟ R₀ (ψ₀ = 0).
    psi: [Vector3<T>; N],
    /// Γ⁻¹(ψⱼ) (index 0: identity, unused).
    gamma_inv: [Matrix3<T>; N],
}

impl<T: Real, G: LieGroup<T>, const N: usize> ElementKinematics<T, G, N> {
    /// The element with nodal poses `nodes` (node 0 at ξ = 0, node N − 1 at ξ = 1;
    /// positions m, world frame) and rest length `length` (m).
    ///
    /// # Errors
    /// [`RodError::InvalidLength`] unless the length is finite and > 0;
    /// [`RodError::NonFinite`] naming the node if a position or rotation has a NaN or
    /// infinite entry.
    pub fn new(nodes: &[Pose<T, G>; N], length: T) -> Result<Self, RodError> {
        let () = LagrangeBasis::<N>::VALID;
        check_length(length)?;
        let mut kin = Self {
            nodes: *nodes,
            length,
            inv_length: T::one() / length,
            psi: [Vector3::zeros(); N],
            gamma_inv: [Matrix3::identity(); N],
        };
        kin.relate_nodes()?;
        Ok(kin)
    }

    /// [`Self::new`] in place, for the nodal poses given as references to the
    /// position and rotation of node j, `pose(j)`, and the rest length of `element`
    /// (no copy of the kinematics through a returned `Result`). On error `self` holds
    /// the new poses and stale relative rotations.
    ///
    /// The fields are copied from where they are, not through a pose built on the
    /// stack: that copy reloaded the temporary with loads straddling its stores, which
    /// the store buffer cannot forward (a stall per node).
    ///
    /// # Errors
    /// As [`Self::new`] (the element checked its length).
    #[inline(always)]
    pub(crate) fn set_nodes<'b>(
        &mut self,
        element: &RodElement<T, N>,
        pose: impl Fn(usize) -> (&'b Vector3<T>, &'b G),
    ) -> Result<(), RodError> {
        if self.length != element.length {
            self.length = element.length;
            self.inv_length = T::one() / element.length;
        }
        for (j, node) in self.nodes.iter_mut().enumerate() {
            let (position, rotation) = pose(j);
            node.position = *position;
            node.rotation = *rotation;
        }
        self.relate_nodes()
    }

    /// Checks the nodal poses and sets ψⱼ = Rⱼ ⊟ R₀ and Γ⁻¹(ψⱼ) from them.
    #[inline(always)]
    fn relate_nodes(&mut self) -> Result<(), RodError> {
        let nodes = &self.nodes;
        // One branch for the common case (0·x is NaN only for a NaN or ±∞ x), then
        // the node named.
        let finite = nodes.iter().fold(true, |ok, node| {
            let p = node.position * T::zero();
            ok & (p.x + p.y + p.z == T::zero()) & node.rotation.is_finite()
        });
        for (index, node) in nodes.iter().enumerate().filter(|_| !finite) {
            if !node.position.iter().all(|x| x.is_finite()) {
                return Err(RodError::NonFinite {
                    what: "node position",
                    index,
                });
            }
            if !node.rotation.is_finite() {
                return Err(RodError::NonFinite {
                    what: "node rotation",
                    index,
                });
            }
        }
        let r0 = nodes[0].rotation;
        for j in 1..N {
            self.psi[j] = self.nodes[j].rotation.boxminus(&r0);
            self.gamma_inv[j] = so3::right_jacobian_inv(&self.psi[j]);
        }
        Ok(())
    }

    /// The nodal poses.
    #[inline]
    pub fn nodes(&self) -> &[Pose<T, G>; N] {
        &self.nodes
    }

    /// The rest length l (m).
    #[inline]
    pub fn length(&self) -> T {
        self.length
    }

    /// ψⱼ = Rⱼ ⊟ R₀ (rad, body frame of node 0), ψ₀ = 0: the nodal rotations relative
    /// to the reference node, as interpolated by (100).
    #[inline]
    pub fn relative_rotations(&self) -> &[Vector3<T>; N] {
        &self.psi
    }

    fn point(&self, xi: T) -> Result<Point<T, G, N>, RodError> {
        check_xi(xi)?;
        let (phi, dphi) = LagrangeBasis::<N>::values_and_derivatives(xi);
        Ok(self.point_with_basis(phi, dphi.map(|d| d * self.inv_length)))
    }

    /// The point with basis values φⱼ and arc-length derivatives φⱼ,ξ/l given.
    #[inline(always)]
    fn point_with_basis(&self, phi: [T; N], dphi_ds: [T; N]) -> Point<T, G, N> {
        let mut theta = Vector3::zeros();
        let mut theta_prime = Vector3::zeros();
        for j in 1..N {
            theta += self.psi[j] * phi[j];
            theta_prime += self.psi[j] * dphi_ds[j];
        }
        let exp_theta = G::exp(&theta);
        Point {
            phi,
            dphi_ds,
            theta,
            theta_prime,
            exp_theta,
            rotation: self.nodes[0].rotation.compose(&exp_theta),
            gamma: so3::right_jacobian_inline(&theta),
        }
    }

    /// θ(ξ) = Σⱼ φⱼ(ξ)(Rⱼ ⊟ R₀) (100), rad, body frame of node 0.
    ///
    /// # Errors
    /// [`RodError::ParameterOutOfRange`] unless 0 ≤ ξ ≤ 1.
    pub fn theta(&self, xi: T) -> Result<Vector3<T>, RodError> {
        Ok(self.point(xi)?.theta)
    }

    /// θ(ξ), θ'(s) (100), (104) and their derivatives with respect to every nodal
    /// rotation (`proofs/rod_interpolation.md`).
    ///
    /// # Errors
    /// [`RodError::ParameterOutOfRange`] unless 0 ≤ ξ ≤ 1.
    pub fn theta_gradient(&self, xi: T) -> Result<ThetaGradient<T, N>, RodError> {
        let p = self.point(xi)?;
        let mut d_theta = [Matrix3::zeros(); N];
        let mut d_theta_prime = [Matrix3::zeros(); N];
        for j in 1..N {
            let g = self.gamma_inv[j];
            d_theta[j] = g * p.phi[j];
            d_theta_prime[j] = g * p.dphi_ds[j];
            let gt = g.transpose();
            d_theta[0] -= gt * p.phi[j];
            d_theta_prime[0] -= gt * p.dphi_ds[j];
        }
        Ok(ThetaGradient {
            theta: p.theta,
            theta_prime: p.theta_prime,
            d_theta,
            d_theta_prime,
        })
    }

    /// p(ξ) = Σⱼ φⱼ(ξ) pⱼ (98), m, world frame.
    ///
    /// # Errors
    /// [`RodError::ParameterOutOfRange`] unless 0 ≤ ξ ≤ 1.
    pub fn position(&self, xi: T) -> Result<Vector3<T>, RodError> {
        check_xi(xi)?;
        let phi = LagrangeBasis::<N>::values(xi);
        Ok(self.combine(&phi))
    }

    /// p'(s) = (1/l) Σⱼ φⱼ,ξ(ξ) pⱼ (101)–(102), dimensionless, world frame.
    ///
    /// # Errors
    /// [`RodError::ParameterOutOfRange`] unless 0 ≤ ξ ≤ 1.
    pub fn tangent(&self, xi: T) -> Result<Vector3<T>, RodError> {
        check_xi(xi)?;
        let dphi = LagrangeBasis::<N>::derivatives(xi);
        Ok(self.combine(&dphi) * self.inv_length)
    }

    fn combine(&self, w: &[T; N]) -> Vector3<T> {
        let mut x = Vector3::zeros();
        for (node, &wj) in self.nodes.iter().zip(w) {
            x += node.position * wj;
        }
        x
    }

    /// R(ξ) = R₀ ⊞ θ(ξ) (99), director frame → world.
    ///
    /// # Errors
    /// [`RodError::ParameterOutOfRange`] unless 0 ≤ ξ ≤ 1.
    pub fn rotation(&self, xi: T) -> Result<G, RodError> {
        Ok(self.point(xi)?.rotation)
    }

    /// (p(ξ), R(ξ)) (98)–(99).
    ///
    /// # Errors
    /// [`RodError::ParameterOutOfRange`] unless 0 ≤ ξ ≤ 1.
    pub fn pose(&self, xi: T) -> Result<Pose<T, G>, RodError> {
        let p = self.point(xi)?;
        Ok(Pose::new(self.combine(&p.phi), p.rotation))
    }

    /// D_{Rₖ}R(ξ) for every node (3×3 each), from the point's data.
    fn rotation_blocks(&self, p: &Point<T, G, N>) -> [Matrix3<T>; N] {
        let mut d = [Matrix3::zeros(); N];
        let mut sum = Matrix3::zeros();
        for (j, dj) in d.iter_mut().enumerate().skip(1) {
            let g = self.gamma_inv[j];
            *dj = p.gamma * g * p.phi[j];
            sum += g.transpose() * p.phi[j];
        }
        d[0] = p.exp_theta.to_matrix().transpose() - p.gamma * sum;
        d
    }

    /// The interpolated pose (p(ξ), R(ξ)) and its derivative with respect to every
    /// node's (δp, δθ) (`proofs/rod_interpolation.md`).
    ///
    /// # Errors
    /// [`RodError::ParameterOutOfRange`] unless 0 ≤ ξ ≤ 1.
    pub fn pose_gradient(&self, xi: T) -> Result<PoseGradient<T, G, N>, RodError> {
        let p = self.point(xi)?;
        let d_rot = self.rotation_blocks(&p);
        let mut gradient = [Matrix6::zeros(); N];
        for k in 0..N {
            let b = &mut gradient[k];
            b.fixed_view_mut::<3, 3>(0, 0)
                .copy_from(&(Matrix3::identity() * p.phi[k]));
            b.fixed_view_mut::<3, 3>(3, 3).copy_from(&d_rot[k]);
        }
        Ok(PoseGradient {
            pose: Pose::new(self.combine(&p.phi), p.rotation),
            gradient,
        })
    }

    /// The world position of the material point with offset `offset` (m, director
    /// frame of the cross-section at ξ), x = p(ξ) + R(ξ) r, and its derivative with
    /// respect to every node, 3×6 `[φₖ I | −R(ξ) r̂ D_{Rₖ}R(ξ)]`
    /// (`proofs/rod_interpolation.md`). With r = 0 this is the centre line.
    ///
    /// # Errors
    /// [`RodError::ParameterOutOfRange`] unless 0 ≤ ξ ≤ 1.
    pub fn point_gradient(
        &self,
        xi: T,
        offset: &Vector3<T>,
    ) -> Result<(Vector3<T>, [Matrix3x6<T>; N]), RodError> {
        let p = self.point(xi)?;
        let d_rot = self.rotation_blocks(&p);
        let act = p.rotation.jacobian_act(offset);
        let mut gradient = [Matrix3x6::zeros(); N];
        for k in 0..N {
            let b = &mut gradient[k];
            b.fixed_view_mut::<3, 3>(0, 0)
                .copy_from(&(Matrix3::identity() * p.phi[k]));
            b.fixed_view_mut::<3, 3>(0, 3).copy_from(&(act * d_rot[k]));
        }
        Ok((self.combine(&p.phi) + p.rotation.act(offset), gradient))
    }
}

/// A Cosserat rod finite element with `N` nodes (order N − 1): its rest length, its
/// Gauss rule (reduced or full integration, Section 6.3.5), the precurvature u* at
/// each Gauss point and the compliances (109). Evaluates the Gauss-point constraints
/// (108) at a state given as [`ElementKinematics`].
///
/// ```
/// use lie_xpbd::lie::{LieGroup, Pose, UnitQuaternion};
/// use lie_xpbd::rod::{Integration, RodElement, RodMaterial};
/// use nalgebra::Vector3;
/// let material = RodMaterial::<f64>::circular(5e6, 0.5, 1000.0, 0.05)?;
/// // A quadratic element 0.2 m long with reduced (2-point) integration.
/// let element = RodElement::<f64, 3>::new(0.2, &material, Integration::Reduced)?;
/// let nodes = [0.0, 0.1, 0.2].map(|z| {
///     Pose::new(Vector3::new(0.0, 0.0, z), UnitQuaternion::<f64>::identity())
/// });
/// let kin = element.kinematics(&nodes)?;
/// for k in 0..element.gauss_point_count() {
///     let c = element.gauss_point_constraint(&kin, k)?;
///     assert!(c.value.norm() < 1e-15); // straight and unstressed
/// }
/// # Ok::<(), lie_xpbd::rod::RodError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RodElement<T: Real, const N: usize> {
    length: T,
    rule: GaussRule<T>,
    /// φⱼ(ξ̃ₖ) and φⱼ,ξ(ξ̃ₖ)/l at each Gauss point k (constants of the rule).
    basis: [([T; N], [T; N]); MAX_GAUSS_POINTS],
    precurvature: [Vector3<T>; MAX_GAUSS_POINTS],
    /// Rest value v* of the shear/stretch strain per Gauss point (e₃ unless set by
    /// [`RodElement::with_rest_strains`]).
    rest_shear: [Vector3<T>; MAX_GAUSS_POINTS],
    compliance: [Vector6<T>; MAX_GAUSS_POINTS],
}

impl<T: Real, const N: usize> RodElement<T, N> {
    /// Polynomial order of the element, N − 1.
    pub const ORDER: usize = N - 1;

    /// An element of rest length `length` (m) of `material`, with Gauss points chosen
    /// by `integration` (reduced: N − 1 points, full: N points), no precurvature.
    ///
    /// # Errors
    /// [`RodError::InvalidLength`] unless the length is finite and > 0;
    /// [`RodError::GaussPointCount`] if the integration asks for a number of points
    /// outside 1..=[`MAX_GAUSS_POINTS`].
    pub fn new(
        length: T,
        material: &RodMaterial<T>,
        integration: Integration,
    ) -> Result<Self, RodError> {
        let () = LagrangeBasis::<N>::VALID;
        check_length(length)?;
        let rule = GaussRule::for_order(LagrangeBasis::<N>::ORDER, integration)?;
        let mut compliance = [Vector6::zeros(); MAX_GAUSS_POINTS];
        for (k, &w) in rule.weights().iter().enumerate() {
            compliance[k] = material.gauss_point_compliance(length, w)?;
        }
        let inv_length = T::one() / length;
        let mut basis = [([T::zero(); N], [T::zero(); N]); MAX_GAUSS_POINTS];
        for (b, &xi) in basis.iter_mut().zip(rule.points()) {
            let (phi, dphi) = LagrangeBasis::<N>::values_and_derivatives(xi);
            *b = (phi, dphi.map(|d| d * inv_length));
        }
        Ok(Self {
            length,
            rule,
            basis,
            precurvature: [Vector3::zeros(); MAX_GAUSS_POINTS],
            rest_shear: [Vector3::z(); MAX_GAUSS_POINTS],
            compliance,
        })
    }

    /// The same element with the constant precurvature `u_star` (rad/m, director
    /// frame) at every Gauss point.
    ///
    /// # Errors
    /// [`RodError::NonFinite`] for `"precurvature"` if an entry is NaN or infinite.
    pub fn with_precurvature(mut self, u_star: &Vector3<T>) -> Result<Self, RodError> {
        for k in 0..self.rule.len() {
            self = self.with_gauss_point_precurvature(k, u_star)?;
        }
        Ok(self)
    }

    /// The same element with precurvature `u_star` (rad/m, director frame) at Gauss
    /// point `k` (0-based, ascending ξ̃).
    ///
    /// # Errors
    /// [`RodError::GaussPointIndex`] if k is past the rule; [`RodError::NonFinite`]
    /// for `"precurvature"` if an entry is NaN or infinite.
    pub fn with_gauss_point_precurvature(
        mut self,
        k: usize,
        u_star: &Vector3<T>,
    ) -> Result<Self, RodError> {
        self.check_index(k)?;
        if !u_star.iter().all(|x| x.is_finite()) {
            return Err(RodError::NonFinite {
                what: "precurvature at Gauss point",
                index: k,
            });
        }
        self.precurvature[k] = *u_star;
        Ok(self)
    }

    /// The same element with the precurvature at each Gauss point set to the
    /// curvature u(ξ̃ₖ) (103) of the rest configuration `rest` (nodal poses, m and
    /// director → world), so that the curvature rows of C vanish there.
    ///
    /// # Errors
    /// As [`ElementKinematics::new`] for `rest`.
    pub fn with_rest_curvature<G: LieGroup<T>>(
        mut self,
        rest: &[Pose<T, G>; N],
    ) -> Result<Self, RodError> {
        let kin = self.kinematics(rest)?;
        for k in 0..self.rule.len() {
            self.precurvature[k] = kin.strains(self.rule.points()[k])?.curvature;
        }
        Ok(self)
    }

    fn check_index(&self, k: usize) -> Result<(), RodError> {
        if k < self.rule.len() {
            Ok(())
        } else {
            Err(RodError::GaussPointIndex {
                index: k,
                count: self.rule.len(),
            })
        }
    }

    /// The rest length l (m).
    #[inline]
    pub fn length(&self) -> T {
        self.length
    }

    /// The Gauss rule on [0, 1].
    #[inline]
    pub fn gauss_rule(&self) -> &GaussRule<T> {
        &self.rule
    }

    /// Number of Gauss points, i.e. of 6-row constraints, of the element.
    #[inline]
    pub fn gauss_point_count(&self) -> usize {
        self.rule.len()
    }

    /// The precurvature u*(ξ̃ₖ) at Gauss point k (rad/m, director frame).
    ///
    /// # Errors
    /// [`RodError::GaussPointIndex`] if k is past the rule.
    pub fn precurvature(&self, k: usize) -> Result<Vector3<T>, RodError> {
        self.check_index(k)?;
        Ok(self.precurvature[k])
    }

    /// The compliance diagonal (109) at Gauss point k: 1/(N·m) rows 0–2, 1/(N·m³)
    /// rows 3–5 ([`RodMaterial::gauss_point_compliance`]).
    ///
    /// # Errors
    /// [`RodError::GaussPointIndex`] if k is past the rule.
    pub fn compliance(&self, k: usize) -> Result<Vector6<T>, RodError> {
        self.check_index(k)?;
        Ok(self.compliance[k])
    }

    /// The element's state at nodal poses `nodes` (see [`ElementKinematics::new`]).
    ///
    /// # Errors
    /// As [`ElementKinematics::new`].
    pub fn kinematics<G: LieGroup<T>>(
        &self,
        nodes: &[Pose<T, G>; N],
    ) -> Result<ElementKinematics<T, G, N>, RodError> {
        ElementKinematics::new(nodes, self.length)
    }

    /// The constraint (108) at Gauss point k, C = (v(ξ̃ₖ) − v*(ξ̃ₖ), u(ξ̃ₖ) − u*(ξ̃ₖ)) (v* = e₃
    /// unless set by [`Self::with_rest_strains`]), its
    /// gradient (Appendix G, the ∂Γ/∂θ term included) and compliance (109)
    /// (`proofs/rod_gauss_point_constraint.md`).
    ///
    /// # Errors
    /// [`RodError::GaussPointIndex`] if k is past the rule; [`RodError::LengthMismatch`]
    /// if `kinematics` was built with another rest length than the element's.
    pub fn gauss_point_constraint<G: LieGroup<T>>(
        &self,
        kinematics: &ElementKinematics<T, G, N>,
        k: usize,
    ) -> Result<GaussPointConstraint<T, N>, RodError> {
        let mut out = GaussPointConstraint {
            xi: T::zero(),
            weight: T::zero(),
            value: Vector6::zeros(),
            gradient: [Matrix6::zeros(); N],
            compliance: Vector6::zeros(),
        };
        self.gauss_point_constraint_into(kinematics, k, &mut out)?;
        Ok(out)
    }

    /// [`gauss_point_constraint`](Self::gauss_point_constraint) written into `out`
    /// (every field), with the basis values at the Gauss point taken from the ones
    /// computed at construction.
    ///
    /// # Errors
    /// As [`gauss_point_constraint`](Self::gauss_point_constraint); `out` is then
    /// unchanged.
    #[inline]
    pub(crate) fn gauss_point_constraint_into<G: LieGroup<T>>(
        &self,
        kinematics: &ElementKinematics<T, G, N>,
        k: usize,
        out: &mut GaussPointConstraint<T, N>,
    ) -> Result<(), RodError> {
        let mut rt = Matrix3::zeros();
        let mut dphi_ds = [T::zero(); N];
        self.gauss_point_constraint_rt_into(kinematics, k, out, &mut rt, &mut dphi_ds)
    }

    /// [`gauss_point_constraint_into`](Self::gauss_point_constraint_into), also
    /// writing R(ξ̃ₖ)ᵀ into `rt` and the φⱼ,ξ(ξ̃ₖ)/l (1/m) into `dphi_ds` (out
    /// parameters: a returned value would be copied through the `Result`): the
    /// position block (rows and
    /// columns 0–2) of node j's gradient block is exactly their product (φⱼ,ξ/l)·Rᵀ,
    /// entry by entry, so a cache of the gradient can store Rᵀ once per point
    /// instead of N blocks.
    ///
    /// # Errors
    /// As [`gauss_point_constraint_into`](Self::gauss_point_constraint_into).
    #[inline(always)]
    pub(crate) fn gauss_point_constraint_rt_into<G: LieGroup<T>>(
        &self,
        kinematics: &ElementKinematics<T, G, N>,
        k: usize,
        out: &mut GaussPointConstraint<T, N>,
        rt: &mut Matrix3<T>,
        dphi_ds: &mut [T; N],
    ) -> Result<(), RodError> {
        self.check_index(k)?;
        if kinematics.length() != self.length {
            return Err(RodError::LengthMismatch {
                element: self.length.to_f64(),
                kinematics: kinematics.length().to_f64(),
            });
        }
        let (phi, dphi) = self.basis[k];
        let p = kinematics.point_with_basis(phi, dphi);
        let strains;
        (strains, *rt) = kinematics.strain_gradient_into(&p, &mut out.gradient);
        *dphi_ds = dphi;
        let v = strains.shear - self.rest_shear[k];
        let u = strains.curvature - self.precurvature[k];
        out.xi = self.rule.points()[k];
        out.weight = self.rule.weights()[k];
        out.value = Vector6::new(v.x, v.y, v.z, u.x, u.y, u.z);
        out.compliance = self.compliance[k];
        Ok(())
    }

    /// The lumped inertias of the element's nodes for `material` (Section 6.3.6): as
    /// [`RodMaterial::lumped_nodal_inertia`] with this element's rest length.
    pub fn lumped_nodal_inertia(&self, material: &RodMaterial<T>) -> [NodalInertia<T>; N] {
        let weights = LagrangeBasis::<N>::lumped_weights::<T>();
        let mass = material.mass_per_length() * self.length;
        let inertia = material.rotational_inertia_per_length() * self.length;
        weights.map(|w| NodalInertia {
            mass: mass * w,
            inertia: inertia * w,
        })
    }
}
