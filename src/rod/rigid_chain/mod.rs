//! The rigid-body ("rigid-chain") discretisation of a Cosserat rod (paper Section 6.2,
//! Appendix F.4–F.5): a chain of rigid bodies of the ordinary [`World`] joined by
//! elastic 6-row joints that carry the rod's shear/stretch and bending/twist energy.
//!
//! # The discretisation
//! A rod of length L is N ≥ 2 rigid bodies (pⱼ, Rⱼ), j = 0, …, N − 1 (positions m,
//! world frame; director frame {d₁, d₂, d₃} → world, d₃ along the centre line). The
//! N − 2 interior bodies have length l = L/(N − 1) and their position at their centre;
//! the two end bodies have length l/2 and their position at the rod's outer end (the base
//! s = 0 and the tip s = L), so that boundary conditions act on the rod's ends. Body
//! positions are thus l apart: p at s = 0, l, 2l, …, L. With ρ the density, A the area
//! and J = diag(I₁, I₂, I₁ + I₂) the second moments of area ([`RodMaterial`]):
//!
//! ```text
//! interior:  m = ρ A l,        𝓘 = ρ l J
//! ends:      m = ρ A l/2,      𝓘 = ρ (l/2) J + (end term, see EndInertia)
//! ```
//!
//! Between bodies j and j + 1 sits one 6-row constraint (93) with the strains (89)–(90)
//! and compliance (94), l the rest distance between the two body positions:
//!
//! ```text
//! v = (1/2l)(Rⱼᵀ + Rⱼ₊₁ᵀ)(pⱼ₊₁ − pⱼ)          (89)  shear/stretch, dimensionless
//! u = (1/l)(Rⱼ₊₁ ⊟ Rⱼ)                        (90)  bending/twist, rad/m
//! C = [ v − v* ; u − u* ]                     (93)  v* = e₃ in the paper
//! α⁻¹ = l diag(Kᵛ, Kᵘ)                         (94)
//! ```
//!
//! (89) averages the two rotation matrices, and (Rⱼ + Rⱼ₊₁)/2 is not a rotation: this is
//! the model exactly as Section 6.2 and (175) define it, and the difference to the linear
//! finite element (110), which interpolates on SO(3), is what the paper's convergence
//! study (Section 9.2) measures. The rest shear v* generalises the paper's e₃ so that a
//! curved rest shape (where the matrix average shortens the chord) can be stress-free
//! with the bodies where they are given ([`RestShape::Initial`]); it is e₃ unless
//! asked for. To discretise a curved centre line given by its frames, keep the paper's
//! v* = e₃ and place the bodies at the chain's rest state instead
//! ([`RigidChainBuilder::from_rest_frames`]): the joint forces act at the chord
//! midpoints (lever arm d/2 in (176)–(177)), and with the bodies on a coil of radius r
//! the midpoints lie at r cos(θ/2) (θ the turn per joint), which makes a helical
//! spring stiffer (+27 % at θ = π/4) and buckle earlier than the helix it samples.
//!
//! # Gradient
//! Per body, the 6×6 block `[∂C/∂p | D_R C]` of (59), with d = pⱼ₊₁ − pⱼ,
//! ψ = Rⱼ₊₁ ⊟ Rⱼ and Γ⁻¹ the inverse right Jacobian (27) (`proofs/rod_rigid_chain.md`):
//!
//! ```text
//!              ∂/∂p                      D_R
//! body j:   v  −(Rⱼᵀ + Rⱼ₊₁ᵀ)/(2l)      (Rⱼᵀd)^/(2l)       (176)
//!           u  0                        −Γ⁻¹(ψ)ᵀ/l          (179)
//! body j+1: v  (Rⱼᵀ + Rⱼ₊₁ᵀ)/(2l)       (Rⱼ₊₁ᵀd)^/(2l)     (177)
//!           u  0                        Γ⁻¹(ψ)/l            (179)
//! ```
//!
//! u needs ψ below π (Log's branch cut): consecutive bodies must not turn by π relative
//! to each other, which a discretisation fine enough for its curvature never does.

use super::element::{NodeBlock6, StrainGradient, Strains};
use super::error::RodError;
use super::material::{check_length, NodalInertia, RodMaterial};
use crate::lie::real::c;
use crate::lie::so3::{hat, right_jacobian_inv};
use crate::lie::{LieGroup, Pose, Real};
use crate::xpbd::{
    Body, BodyId, Constraint, ConstraintEval, ConstraintId, DirectGroupId, World, XpbdError,
    MAX_BODIES,
};
use nalgebra::{Matrix3, Matrix6, Vector3, Vector6};

mod builder;
mod system;
pub use builder::{EndInertia, JointSolve, RestShape, RigidChain, RigidChainBuilder};
pub use system::{RigidChainRod, RigidChainRodIds, ROD_JOINT_KIND};

/// The strains (89)–(90) of the rigid-chain joint between the bodies at poses `a`
/// (body j) and `b` (body j + 1) with rest length `length` (m), and their gradient
/// (175)–(179): per body a 6×6 block `[∂/∂p | D_R]` of the 6-vector (v, u), rows 0–2 v
/// (1/m in the position columns, dimensionless per rad in the rotation columns), rows
/// 3–5 u (zero position columns, 1/m per rad in the rotation columns). Block 0 is body
/// j, block 1 body j + 1 (`proofs/rod_rigid_chain.md`).
///
/// ```
/// use lie_xpbd::lie::{LieGroup, Pose, SO3Matrix};
/// use lie_xpbd::rod::rigid_chain::rigid_chain_strain_gradient;
/// use nalgebra::Vector3;
/// // Two bodies 0.1 m apart along z, the second twisted by 0.01 rad about d₃.
/// let a = Pose::new(Vector3::zeros(), SO3Matrix::<f64>::identity());
/// let b = Pose::new(Vector3::new(0.0, 0.0, 0.1), SO3Matrix::exp(&Vector3::new(0.0, 0.0, 0.01)));
/// let s = rigid_chain_strain_gradient(&a, &b, 0.1)?;
/// approx::assert_relative_eq!(s.strains.curvature, Vector3::new(0.0, 0.0, 0.1), epsilon = 1e-15);
/// approx::assert_relative_eq!(s.strains.shear, Vector3::z(), epsilon = 1e-15);
/// # Ok::<(), lie_xpbd::rod::RodError>(())
/// ```
///
/// # Errors
/// [`RodError::InvalidLength`] unless `length` is finite and > 0;
/// [`RodError::NonFinite`] (`"body position"` / `"body rotation"`, index 0 or 1) for a
/// pose with a NaN or infinite entry.
pub fn rigid_chain_strain_gradient<T: Real, G: LieGroup<T>>(
    a: &Pose<T, G>,
    b: &Pose<T, G>,
    length: T,
) -> Result<StrainGradient<T, 2>, RodError> {
    check_length(length)?;
    for (index, pose) in [a, b].into_iter().enumerate() {
        if !pose.position.iter().all(|x| x.is_finite()) {
            return Err(RodError::NonFinite {
                what: "body position",
                index,
            });
        }
        if !pose.rotation.to_matrix().iter().all(|x| x.is_finite()) {
            return Err(RodError::NonFinite {
                what: "body rotation",
                index,
            });
        }
    }
    Ok(strain_gradient(a, b, T::one() / length))
}

/// (89)–(90) and (175)–(179) with 1/l given, unchecked.
fn strain_gradient<T: Real, G: LieGroup<T>>(
    a: &Pose<T, G>,
    b: &Pose<T, G>,
    inv_length: T,
) -> StrainGradient<T, 2> {
    let half = c::<T>(0.5) * inv_length;
    let d = b.position - a.position;
    let da = a.rotation.act_inv(&d);
    let db = b.rotation.act_inv(&d);
    let psi = b.rotation.boxminus(&a.rotation);
    let gamma_inv = right_jacobian_inv(&psi) * inv_length;
    // (Rⱼᵀ + Rⱼ₊₁ᵀ)/(2l): the matrix average of (175), not a rotation.
    let average: Matrix3<T> = (a.rotation.to_matrix() + b.rotation.to_matrix()).transpose() * half;
    let mut gradient: [NodeBlock6<T>; 2] = [Matrix6::zeros(); 2];
    let g = &mut gradient[0];
    g.fixed_view_mut::<3, 3>(0, 0).copy_from(&(-average));
    g.fixed_view_mut::<3, 3>(0, 3).copy_from(&(hat(&da) * half));
    g.fixed_view_mut::<3, 3>(3, 3)
        .copy_from(&(-gamma_inv.transpose()));
    let g = &mut gradient[1];
    g.fixed_view_mut::<3, 3>(0, 0).copy_from(&average);
    g.fixed_view_mut::<3, 3>(0, 3).copy_from(&(hat(&db) * half));
    g.fixed_view_mut::<3, 3>(3, 3).copy_from(&gamma_inv);
    StrainGradient {
        strains: Strains {
            shear: (da + db) * half,
            curvature: psi * inv_length,
        },
        gradient,
    }
}

/// The elastic joint between two consecutive bodies j, j + 1 of a rigid-chain rod: the
/// 6-row constraint (93) with compliance (94) (module docs).
///
/// Rows 0–2: C = v − v* (shear along d₁, d₂, stretch along d₃; dimensionless), rows 3–5:
/// C = u − u* (bending about d₁, d₂, twist about d₃; rad/m), all in the body frame of
/// the chain (the average frame of (89) for v, the frame of body j for u). Compliance
/// α = (l diag(Kᵛ, Kᵘ))⁻¹: 1/(N·m) for rows 0–2, 1/(N·m³) for rows 3–5
/// ([`RodMaterial::gauss_point_compliance`] with weight 1, which is (94)). The joint
/// energy ½Cᵀα⁻¹C is the joint's term of (91)–(92).
///
/// ```
/// use lie_xpbd::lie::{LieGroup, SO3Matrix};
/// use lie_xpbd::rod::{RigidChainConstraint, RodMaterial};
/// use lie_xpbd::xpbd::{check_gradient, Body, BodyId, Constraint};
/// use nalgebra::Vector3;
/// let material = RodMaterial::<f64>::circular(5e6, 0.5, 1000.0, 0.05)?;
/// let joint = RigidChainConstraint::new(BodyId(0), BodyId(1), 0.1, &material)?;
/// // Body 1 bent by 0.2 rad about d₁ relative to body 0.
/// let bodies = [
///     Body::dynamic(1.0, Vector3::repeat(0.1), Vector3::zeros(), SO3Matrix::identity())?,
///     Body::dynamic(1.0, Vector3::repeat(0.1), Vector3::new(0.0, 0.0, 0.1),
///         SO3Matrix::exp(&Vector3::new(0.2, 0.0, 0.0)))?,
/// ];
/// let report = check_gradient(&joint, &bodies)?;
/// assert!(report.passed(), "{report}");
/// approx::assert_relative_eq!(
///     Constraint::<f64, SO3Matrix<f64>>::compliance(&joint, 3),
///     1.0 / (0.1 * material.bending_stiffness()[(0, 0)])
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RigidChainConstraint<T: Real> {
    bodies: [BodyId; 2],
    length: T,
    inv_length: T,
    rest_shear: Vector3<T>,
    precurvature: Vector3<T>,
    compliance: Vector6<T>,
    damping: Vector6<T>,
}

impl<T: Real> RigidChainConstraint<T> {
    /// The joint between `body` (j) and `next` (j + 1) with rest length `length` (m, the
    /// rest distance between the two body positions) of `material`, compliance (94),
    /// v* = e₃, u* = 0, no damping.
    ///
    /// # Errors
    /// [`RodError::SameBody`] if the two bodies are the same; [`RodError::InvalidLength`]
    /// unless the length is finite and > 0; [`RodError::NonFinite`] (`"compliance row"`)
    /// if l·k underflows to 0 in `T`, so that a compliance 1/(l k) is infinite.
    pub fn new(
        body: BodyId,
        next: BodyId,
        length: T,
        material: &RodMaterial<T>,
    ) -> Result<Self, RodError> {
        if body == next {
            return Err(RodError::SameBody { body: body.0 });
        }
        let compliance = material.gauss_point_compliance(length, T::one())?;
        if let Some(row) = compliance.iter().position(|a| !a.is_finite()) {
            // l·k underflowed to 0 in the scalar type: the row would be infinitely soft.
            return Err(RodError::NonFinite {
                what: "compliance row",
                index: row,
            });
        }
        Ok(Self {
            bodies: [body, next],
            length,
            inv_length: T::one() / length,
            rest_shear: Vector3::z(),
            precurvature: Vector3::zeros(),
            compliance,
            damping: Vector6::zeros(),
        })
    }

    /// The same joint with precurvature u* (rad/m, body frame of body j), (92)–(93).
    ///
    /// # Errors
    /// [`RodError::NonFinite`] (`"precurvature"`) for a NaN or infinite entry.
    pub fn with_precurvature(mut self, u_star: &Vector3<T>) -> Result<Self, RodError> {
        finite3(u_star, "precurvature", 0)?;
        self.precurvature = *u_star;
        Ok(self)
    }

    /// The same joint with rest shear/stretch v* (dimensionless, the average body frame
    /// of (89)) in place of the paper's e₃ of (93).
    ///
    /// # Errors
    /// [`RodError::NonFinite`] (`"rest shear"`) for a NaN or infinite entry.
    pub fn with_rest_shear(mut self, v_star: &Vector3<T>) -> Result<Self, RodError> {
        finite3(v_star, "rest shear", 0)?;
        self.rest_shear = *v_star;
        Ok(self)
    }

    /// The same joint with Rayleigh damping b (s) per row, rows 0–2 shear/stretch, 3–5
    /// bending/twist: row k resists its rate Ċₖ with β = bₖ/αₖ (Section 4.4,
    /// [`Constraint::damping`]).
    ///
    /// # Errors
    /// [`RodError::InvalidDamping`] naming the first negative or non-finite row.
    pub fn with_damping(mut self, damping: &[T; 6]) -> Result<Self, RodError> {
        check_damping(damping)?;
        self.damping = Vector6::from_column_slice(damping);
        Ok(self)
    }

    /// The two bodies, j and j + 1.
    #[inline]
    pub fn body_ids(&self) -> [BodyId; 2] {
        self.bodies
    }

    /// The rest length l, m.
    #[inline]
    pub fn length(&self) -> T {
        self.length
    }

    /// The rest shear/stretch v* (dimensionless; e₃ unless set).
    #[inline]
    pub fn rest_shear(&self) -> Vector3<T> {
        self.rest_shear
    }

    /// The precurvature u*, rad/m.
    #[inline]
    pub fn precurvature(&self) -> Vector3<T> {
        self.precurvature
    }

    /// The compliance diagonal (94): 1/(N·m) rows 0–2, 1/(N·m³) rows 3–5.
    #[inline]
    pub fn compliances(&self) -> Vector6<T> {
        self.compliance
    }

    /// The Rayleigh damping b per row, s.
    #[inline]
    pub fn dampings(&self) -> Vector6<T> {
        self.damping
    }

    fn poses<G: LieGroup<T>>(&self, bodies: &[Body<T, G>]) -> Result<[Pose<T, G>; 2], RodError> {
        let mut out = [Pose::identity(); 2];
        for (o, id) in out.iter_mut().zip(self.bodies) {
            let body = bodies.get(id.0).ok_or_else(|| {
                RodError::World(XpbdError::UnknownBody {
                    constraint: self.label(),
                    body: id.0,
                    count: bodies.len(),
                })
            })?;
            *o = body.pose();
        }
        Ok(out)
    }

    fn label(&self) -> String {
        format!(
            "rod_rigid_chain({}, {})",
            self.bodies[0].0, self.bodies[1].0
        )
    }

    /// The strains (v, u) (89)–(90) at the current poses of the joint's bodies in
    /// `bodies` (the world's body list, indexed by [`BodyId`]).
    ///
    /// # Errors
    /// [`RodError::World`] ([`XpbdError::UnknownBody`]) if a body is not in `bodies`.
    pub fn strains<G: LieGroup<T>>(&self, bodies: &[Body<T, G>]) -> Result<Strains<T>, RodError> {
        let [a, b] = self.poses(bodies)?;
        Ok(strain_gradient(&a, &b, self.inv_length).strains)
    }

    /// The joint's elastic energy ½Cᵀα⁻¹C (J): its terms of (91)–(92),
    /// ½ l (v − v*)ᵀKᵛ(v − v*) + ½ l (u − u*)ᵀKᵘ(u − u*).
    ///
    /// # Errors
    /// As [`Self::strains`].
    pub fn elastic_energy<G: LieGroup<T>>(&self, bodies: &[Body<T, G>]) -> Result<T, RodError> {
        let s = self.strains(bodies)?;
        let value = self.value(&s);
        let half = c::<T>(0.5);
        Ok((0..6).fold(T::zero(), |acc, k| {
            acc + half * value[k] * value[k] / self.compliance[k]
        }))
    }

    fn value(&self, s: &Strains<T>) -> Vector6<T> {
        let v = s.shear - self.rest_shear;
        let u = s.curvature - self.precurvature;
        Vector6::new(v.x, v.y, v.z, u.x, u.y, u.z)
    }
}

fn finite3<T: Real>(x: &Vector3<T>, what: &'static str, index: usize) -> Result<(), RodError> {
    if x.iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(RodError::NonFinite { what, index })
    }
}

fn check_damping<T: Real>(damping: &[T; 6]) -> Result<(), RodError> {
    match damping
        .iter()
        .enumerate()
        .find(|(_, &b)| !(b.is_finite() && b >= T::zero()))
    {
        Some((row, &b)) => Err(RodError::InvalidDamping {
            row,
            value: b.to_f64(),
        }),
        None => Ok(()),
    }
}

impl<T: Real, G: LieGroup<T>> Constraint<T, G> for RigidChainConstraint<T> {
    /// `"rod_rigid_chain(<body j>, <body j + 1>)"`.
    fn name(&self) -> String {
        self.label()
    }

    /// `"rod_rigid_chain"`.
    fn kind(&self) -> &'static str {
        "rod_rigid_chain"
    }

    fn dim(&self) -> usize {
        6
    }

    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        [Some(self.bodies[0]), Some(self.bodies[1])]
    }

    /// Writes C (93) and the blocks (175)–(179) (module docs). If a body id is not in
    /// `bodies` (impossible for a constraint accepted by [`World::add_constraint`]) the
    /// values are NaN and the gradients zero.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        let Ok([a, b]) = self.poses(bodies) else {
            out.clear();
            for v in out.value.iter_mut().take(6) {
                *v = c::<T>(f64::NAN);
            }
            return;
        };
        let s = strain_gradient(&a, &b, self.inv_length);
        let value = self.value(&s.strains);
        for k in 0..6 {
            out.value[k] = value[k];
        }
        for (slot, g) in s.gradient.iter().enumerate() {
            out.gradient[slot].copy_from(g);
        }
    }

    fn compliance(&self, row: usize) -> T {
        if row < 6 {
            self.compliance[row]
        } else {
            T::zero()
        }
    }

    fn damping(&self, row: usize) -> T {
        if row < 6 {
            self.damping[row]
        } else {
            T::zero()
        }
    }
}
