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
//! ([`RestShape::Initial`]); it is e₃ unless asked for.
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
    Body, BodyId, Constraint, ConstraintEval, ConstraintId, World, XpbdError, MAX_BODIES,
};
use nalgebra::{Matrix3, Matrix6, Vector3, Vector6};

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

/// The rotational inertia of the two half-length end bodies of a rigid chain, whose
/// position (the degree of freedom) sits at the rod's end rather than at their centre.
/// With l_end = l/2 and m_end = ρ A l_end:
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EndInertia {
    /// 𝓘_end = ρ l_end J + m_end (l_end/2)² diag(1, 1, 0): the section inertia of
    /// the half segment, as for every body, moved from the segment's centre to the end
    /// point by the parallel-axis theorem (offset l_end/2 along d₃). Always the inertia
    /// of a rigid body. The default.
    #[default]
    ParallelAxis,
    /// 𝓘_end = ρ l_end J + m_end diag(0, l_end², 0), as printed in Section 6.2. The term
    /// acts on d₂ only, and the result is a rigid body's inertia only when
    /// 𝓘₂ ≤ 𝓘₁ + 𝓘₃, i.e. l_end ≤ r/√2 (r the section radius): coarser chains are
    /// rejected by [`Body::dynamic`] (→ [`RodError::World`] with
    /// [`XpbdError::NonPhysicalInertia`]).
    AsPrinted,
    /// 𝓘_end = ρ l_end J: the interior bodies' rule, with no end term (the lumping of
    /// Section 6.3.6).
    Lumped,
}

/// The rest shape of a rigid-chain rod: the v* and u* of each joint's constraint (93).
#[derive(Debug, Clone, PartialEq)]
pub enum RestShape<T: Real> {
    /// Straight and unsheared: v* = e₃, u* = 0 (93).
    Straight,
    /// v* = e₃ and the precurvature u*ⱼ (rad/m, body frame of body j) of each of the
    /// N − 1 joints (92)–(93).
    Precurvature(Vec<Vector3<T>>),
    /// v* = e₃ and the same precurvature u* (rad/m) at every joint.
    UniformPrecurvature(Vector3<T>),
    /// The rod's initial configuration is its rest state: v*ⱼ and u*ⱼ are the strains
    /// (89)–(90) there, so that C = 0 initially. For a curved centre line this includes
    /// the shortening of v₃ by the matrix average of (89) (v₃ = cos(φ/2) for a planar
    /// turn φ between two bodies on a chord of length l).
    Initial,
}

/// A rigid-chain Cosserat rod to be built into a [`World`] (Section 6.2, module docs):
/// the body poses (centre-line points and director frames), the rest lengths, the
/// material, the rest shape, the end inertia rule, which ends are clamped and the joint
/// damping.
///
/// ```
/// use lie_xpbd::lie::{LieGroup, SO3Matrix};
/// use lie_xpbd::rod::{RigidChainBuilder, RodMaterial};
/// use lie_xpbd::xpbd::{Constraint, SolverOptions, World};
/// use nalgebra::Vector3;
/// // The rod of Section 9.2: E = 5 MPa, diameter 0.1 m, L = 1 m, ρ = 1000 kg/m³,
/// // 11 bodies along world x, clamped at the base.
/// let material = RodMaterial::<f64>::circular(5e6, 0.5, 1000.0, 0.05)?;
/// let rod = RigidChainBuilder::<f64, SO3Matrix<f64>>::straight(
///     material, Vector3::zeros(), Vector3::x(), 1.0, 11,
/// )?
/// .with_fixed_base(true);
/// let mut world = World::new(SolverOptions::default())?;
/// let chain = rod.build(&mut world)?;
/// assert_eq!((chain.bodies.len(), chain.constraints.len()), (11, 10));
/// // Body positions 0.1 m apart, from the base (s = 0) to the tip (s = 1 m).
/// let tip = world.body(chain.tip()).unwrap();
/// approx::assert_relative_eq!(tip.position, Vector3::x(), epsilon = 1e-15);
/// // Half-length end body: mass ρ A l/2.
/// approx::assert_relative_eq!(tip.mass(), 1000.0 * material.area() * 0.05, epsilon = 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RigidChainBuilder<T: Real, G: LieGroup<T>> {
    material: RodMaterial<T>,
    poses: Vec<Pose<T, G>>,
    lengths: Vec<T>,
    rest: RestShape<T>,
    end_inertia: EndInertia,
    fixed_base: bool,
    fixed_tip: bool,
    damping: [T; 6],
}

/// What [`RigidChainBuilder::build`] added to the world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RigidChain {
    /// The N bodies, base (s = 0) first, tip (s = L) last.
    pub bodies: Vec<BodyId>,
    /// The N − 1 joint constraints ([`RigidChainConstraint`]); constraint j joins
    /// `bodies[j]` and `bodies[j + 1]`.
    pub constraints: Vec<ConstraintId>,
}

impl RigidChain {
    /// The base body (s = 0; its position is the rod's base end).
    pub fn base(&self) -> BodyId {
        self.bodies[0]
    }

    /// The tip body (s = L; its position is the rod's tip end).
    pub fn tip(&self) -> BodyId {
        self.bodies[self.bodies.len() - 1]
    }
}

/// The unit vector along `x`, or an error naming `what`.
fn unit<T: Real>(x: &Vector3<T>, what: &'static str) -> Result<Vector3<T>, RodError> {
    let n = x.norm();
    if !(n.is_finite() && n > T::zero()) {
        return Err(RodError::InvalidDirection {
            what,
            reason: "must be finite and non-zero",
        });
    }
    Ok(x / n)
}

/// A rotation with d₃ = `t` (unit): d₁ is the world axis least aligned with t, made
/// orthogonal to it; d₂ = d₃ × d₁.
fn frame_along<T: Real, G: LieGroup<T>>(t: &Vector3<T>) -> Result<G, RodError> {
    let axes = [Vector3::x(), Vector3::y(), Vector3::z()];
    let mut best = axes[0];
    for a in axes {
        if a.dot(t).abs() < best.dot(t).abs() {
            best = a;
        }
    }
    let d1 = (best - t * t.dot(&best)).normalize();
    let d2 = t.cross(&d1);
    let m = Matrix3::from_columns(&[d1, d2, *t]);
    G::from_matrix(&m).map_err(|e| RodError::World(XpbdError::Lie(e)))
}

/// The rotation vector (world frame) of the smallest rotation taking unit `a` to unit
/// `b`, or `None` if they are opposite.
fn minimal_rotation<T: Real>(a: &Vector3<T>, b: &Vector3<T>) -> Option<Vector3<T>> {
    let cross = a.cross(b);
    let s = cross.norm();
    let cos = a.dot(b);
    if s <= T::default_epsilon() * c::<T>(16.0) {
        return if cos > T::zero() {
            Some(Vector3::zeros())
        } else {
            None
        };
    }
    Some(cross * (s.atan2(cos) / s))
}

impl<T: Real, G: LieGroup<T>> RigidChainBuilder<T, G> {
    /// A straight rod of length `length` (m) from `origin` (m, world frame; the base end,
    /// s = 0) along `direction` (world frame, any non-zero length), discretised into
    /// `bodies` = N ≥ 2 rigid bodies (N − 1 joints, l = L/(N − 1)). Every director frame
    /// has d₃ = the direction and d₁ the world axis least aligned with it, made
    /// orthogonal ([`Self::with_normal`] turns it). Rest shape straight, end inertia
    /// [`EndInertia::ParallelAxis`], both ends free, no damping.
    ///
    /// # Errors
    /// [`RodError::TooFewBodies`] for N < 2; [`RodError::InvalidLength`] unless L is
    /// finite and > 0; [`RodError::InvalidDirection`] for a zero or non-finite
    /// direction; [`RodError::NonFinite`] for a non-finite origin.
    pub fn straight(
        material: RodMaterial<T>,
        origin: Vector3<T>,
        direction: Vector3<T>,
        length: T,
        bodies: usize,
    ) -> Result<Self, RodError> {
        if bodies < 2 {
            return Err(RodError::TooFewBodies {
                count: bodies,
                min: 2,
            });
        }
        check_length(length)?;
        finite3(&origin, "rod origin", 0)?;
        let t = unit(&direction, "direction")?;
        let l = length / c::<T>((bodies - 1) as f64);
        check_length(l)?;
        let frame = frame_along::<T, G>(&t)?;
        let poses = (0..bodies)
            .map(|j| Pose::new(origin + t * (l * c::<T>(j as f64)), frame))
            .collect();
        Self::with_lengths(material, poses, vec![l; bodies - 1])
    }

    /// A rod whose body positions are the points of a polyline (m, world frame), base
    /// first: N = `points.len()` ≥ 2 bodies, joint j of rest length |pⱼ₊₁ − pⱼ|. Body j's
    /// d₃ is the tangent there: the first and last segment's direction at the ends, the
    /// bisector of the two adjacent segments' directions inside. The frames are carried
    /// along by parallel transport (the smallest rotation from one tangent to the next),
    /// so the polyline itself adds no twist; the first frame's d₁ is the world axis least
    /// aligned with its tangent, made orthogonal ([`Self::with_normal`] turns all).
    /// The mass of body j is ρA times half the length of its adjacent segments. Rest
    /// shape straight (the polyline is then a deformed initial state; use
    /// [`RestShape::Initial`] to make it the rest shape).
    ///
    /// # Errors
    /// [`RodError::TooFewBodies`] for fewer than 2 points; [`RodError::NonFinite`]
    /// (`"polyline point"`) for a non-finite point; [`RodError::DegenerateSegment`] for
    /// two consecutive equal points; [`RodError::ReversedSegment`] where the polyline
    /// turns back by 180° (or two consecutive tangents are opposite).
    pub fn polyline(material: RodMaterial<T>, points: &[Vector3<T>]) -> Result<Self, RodError> {
        let n = points.len();
        if n < 2 {
            return Err(RodError::TooFewBodies { count: n, min: 2 });
        }
        for (index, p) in points.iter().enumerate() {
            finite3(p, "polyline point", index)?;
        }
        let mut lengths = Vec::with_capacity(n - 1);
        let mut dirs = Vec::with_capacity(n - 1);
        for (index, w) in points.windows(2).enumerate() {
            let d = w[1] - w[0];
            let l = d.norm();
            if !(l.is_finite() && l > T::zero()) {
                return Err(RodError::DegenerateSegment {
                    index,
                    length: l.to_f64(),
                });
            }
            lengths.push(l);
            dirs.push(d / l);
        }
        let mut tangents = Vec::with_capacity(n);
        tangents.push(dirs[0]);
        for j in 1..n - 1 {
            let b = dirs[j - 1] + dirs[j];
            let norm = b.norm();
            if norm <= c::<T>(16.0) * T::default_epsilon() {
                return Err(RodError::ReversedSegment { index: j });
            }
            tangents.push(b / norm);
        }
        tangents.push(dirs[n - 2]);
        let mut frame = frame_along::<T, G>(&tangents[0])?;
        let mut poses = Vec::with_capacity(n);
        poses.push(Pose::new(points[0], frame));
        for j in 1..n {
            let w = minimal_rotation(&tangents[j - 1], &tangents[j])
                .ok_or(RodError::ReversedSegment { index: j })?;
            // Exp(w)·R = R·Exp(Rᵀw) (L3): the world-frame turn as a body-frame boxplus.
            frame = frame.boxplus(&frame.act_inv(&w));
            poses.push(Pose::new(points[j], frame));
        }
        Self::with_lengths(material, poses, lengths)
    }

    /// A rod with the given body poses (positions m, world frame; director frames
    /// d₁, d₂, d₃ → world), base first, N = `poses.len()` ≥ 2; joint j has rest length
    /// |pⱼ₊₁ − pⱼ|. Use it for initial states the other constructors do not make
    /// (twisted frames, frames not along the centre line); with [`RestShape::Initial`]
    /// they are the rest state.
    ///
    /// # Errors
    /// [`RodError::TooFewBodies`] for N < 2; [`RodError::NonFinite`] (`"body position"`
    /// / `"body rotation"`) for a non-finite pose; [`RodError::DegenerateSegment`] for
    /// two consecutive equal positions.
    pub fn from_poses(material: RodMaterial<T>, poses: Vec<Pose<T, G>>) -> Result<Self, RodError> {
        let n = poses.len();
        if n < 2 {
            return Err(RodError::TooFewBodies { count: n, min: 2 });
        }
        for (index, p) in poses.iter().enumerate() {
            finite3(&p.position, "body position", index)?;
            if !p.rotation.to_matrix().iter().all(|x| x.is_finite()) {
                return Err(RodError::NonFinite {
                    what: "body rotation",
                    index,
                });
            }
        }
        let mut lengths = Vec::with_capacity(n - 1);
        for (index, w) in poses.windows(2).enumerate() {
            let l = (w[1].position - w[0].position).norm();
            if !(l.is_finite() && l > T::zero()) {
                return Err(RodError::DegenerateSegment {
                    index,
                    length: l.to_f64(),
                });
            }
            lengths.push(l);
        }
        Self::with_lengths(material, poses, lengths)
    }

    fn with_lengths(
        material: RodMaterial<T>,
        poses: Vec<Pose<T, G>>,
        lengths: Vec<T>,
    ) -> Result<Self, RodError> {
        for (index, &l) in lengths.iter().enumerate() {
            if !(l.is_finite() && l > T::zero()) {
                return Err(RodError::DegenerateSegment {
                    index,
                    length: l.to_f64(),
                });
            }
        }
        Ok(Self {
            material,
            poses,
            lengths,
            rest: RestShape::Straight,
            end_inertia: EndInertia::default(),
            fixed_base: false,
            fixed_tip: false,
            damping: [T::zero(); 6],
        })
    }

    /// Turns every director frame about its own d₃ by the same angle, so that the
    /// first body's d₁ points along `normal` (world frame) projected orthogonally to its
    /// d₃. A common turn about d₃ leaves the strains (89)–(90) of a straight chain
    /// unchanged, and for parallel-transported frames (the polyline) keeps them
    /// parallel-transported.
    ///
    /// # Errors
    /// [`RodError::InvalidDirection`] (`"normal"`) for a zero or non-finite normal, or
    /// one parallel to the first body's d₃.
    pub fn with_normal(mut self, normal: Vector3<T>) -> Result<Self, RodError> {
        let n = unit(&normal, "normal")?;
        let r0 = self.poses[0].rotation;
        let local = r0.act_inv(&n);
        let planar = (local.x * local.x + local.y * local.y).sqrt();
        if planar <= c::<T>(1e3) * T::default_epsilon() {
            return Err(RodError::InvalidDirection {
                what: "normal",
                reason: "must not be parallel to the rod's tangent at the base",
            });
        }
        let turn = G::exp(&Vector3::new(T::zero(), T::zero(), local.y.atan2(local.x)));
        for p in &mut self.poses {
            p.rotation = p.rotation.compose(&turn);
        }
        Ok(self)
    }

    /// The same rod with rest shape `rest` (default [`RestShape::Straight`]).
    ///
    /// # Errors
    /// [`RodError::CountMismatch`] (`"precurvature"`) unless a
    /// [`RestShape::Precurvature`] list has one entry per joint (N − 1);
    /// [`RodError::NonFinite`] (`"precurvature"`, joint index) for a non-finite entry.
    pub fn with_rest_shape(mut self, rest: RestShape<T>) -> Result<Self, RodError> {
        match &rest {
            RestShape::Precurvature(u) => {
                if u.len() != self.lengths.len() {
                    return Err(RodError::CountMismatch {
                        what: "precurvature",
                        given: u.len(),
                        expected: self.lengths.len(),
                    });
                }
                for (index, x) in u.iter().enumerate() {
                    finite3(x, "precurvature", index)?;
                }
            }
            RestShape::UniformPrecurvature(u) => finite3(u, "precurvature", 0)?,
            RestShape::Straight | RestShape::Initial => {}
        }
        self.rest = rest;
        Ok(self)
    }

    /// The same rod with end inertia rule `rule` (default [`EndInertia::ParallelAxis`]).
    pub fn with_end_inertia(mut self, rule: EndInertia) -> Self {
        self.end_inertia = rule;
        self
    }

    /// Makes the base body (s = 0) a fixed body (infinite mass, never moved): a clamped
    /// base (position and orientation held).
    pub fn with_fixed_base(mut self, fixed: bool) -> Self {
        self.fixed_base = fixed;
        self
    }

    /// Makes the tip body (s = L) a fixed body: a clamped tip.
    pub fn with_fixed_tip(mut self, fixed: bool) -> Self {
        self.fixed_tip = fixed;
        self
    }

    /// Rayleigh damping b (s) of every joint's rows, 0–2 shear/stretch, 3–5
    /// bending/twist ([`RigidChainConstraint::with_damping`]).
    ///
    /// # Errors
    /// [`RodError::InvalidDamping`] naming the first negative or non-finite row.
    pub fn with_damping(mut self, damping: [T; 6]) -> Result<Self, RodError> {
        check_damping(&damping)?;
        self.damping = damping;
        Ok(self)
    }

    /// The material.
    pub fn material(&self) -> &RodMaterial<T> {
        &self.material
    }

    /// The initial body poses, base first.
    pub fn poses(&self) -> &[Pose<T, G>] {
        &self.poses
    }

    /// The rest length of each joint (m): the rest distance between consecutive body
    /// positions, l of (89)–(94).
    pub fn rest_lengths(&self) -> &[T] {
        &self.lengths
    }

    /// The rest shape.
    pub fn rest_shape(&self) -> &RestShape<T> {
        &self.rest
    }

    /// Mass (kg) and principal inertia (kg·m², body axes d₁, d₂, d₃) of every body
    /// (Section 6.2, module docs): an interior body carries half of each adjacent
    /// segment, ρA(lⱼ₋₁ + lⱼ)/2 and ρJ(lⱼ₋₁ + lⱼ)/2; an end body half of its one segment,
    /// with the [`EndInertia`] rule. (For a fixed end the values are computed but not
    /// used.)
    pub fn body_inertias(&self) -> Vec<NodalInertia<T>> {
        let n = self.poses.len();
        let half = c::<T>(0.5);
        let rho_a = self.material.mass_per_length();
        let rho_j = self.material.rotational_inertia_per_length();
        (0..n)
            .map(|j| {
                if j == 0 || j == n - 1 {
                    let l_end = self.lengths[if j == 0 { 0 } else { n - 2 }] * half;
                    let mass = rho_a * l_end;
                    let extra = match self.end_inertia {
                        EndInertia::ParallelAxis => {
                            let d = l_end * half;
                            Vector3::new(mass * d * d, mass * d * d, T::zero())
                        }
                        EndInertia::AsPrinted => {
                            Vector3::new(T::zero(), mass * l_end * l_end, T::zero())
                        }
                        EndInertia::Lumped => Vector3::zeros(),
                    };
                    NodalInertia {
                        mass,
                        inertia: rho_j * l_end + extra,
                    }
                } else {
                    let l = (self.lengths[j - 1] + self.lengths[j]) * half;
                    NodalInertia {
                        mass: rho_a * l,
                        inertia: rho_j * l,
                    }
                }
            })
            .collect()
    }

    /// The N − 1 joint constraints for bodies with ids `first`, `first + 1`, … (body j
    /// has id `first + j`), with the rest shape's v*, u* and the damping.
    ///
    /// # Errors
    /// As [`RigidChainConstraint::new`] (cannot fail for a builder made by its
    /// constructors).
    pub fn constraints(&self, first: usize) -> Result<Vec<RigidChainConstraint<T>>, RodError> {
        let mut out = Vec::with_capacity(self.lengths.len());
        for (j, &l) in self.lengths.iter().enumerate() {
            let mut k = RigidChainConstraint::new(
                BodyId(first + j),
                BodyId(first + j + 1),
                l,
                &self.material,
            )?
            .with_damping(&self.damping)?;
            k = match &self.rest {
                RestShape::Straight => k,
                RestShape::Precurvature(u) => k.with_precurvature(&u[j])?,
                RestShape::UniformPrecurvature(u) => k.with_precurvature(u)?,
                RestShape::Initial => {
                    let s =
                        strain_gradient(&self.poses[j], &self.poses[j + 1], T::one() / l).strains;
                    k.with_rest_shear(&s.shear)?
                        .with_precurvature(&s.curvature)?
                }
            };
            out.push(k);
        }
        Ok(out)
    }

    /// Adds the rod to `world`: its N bodies at rest (base first; a clamped end as a
    /// fixed body) and its N − 1 joint constraints, in order from base to tip. All bodies
    /// and constraints are validated before the world is changed, so on error the world
    /// is left as it was.
    ///
    /// # Errors
    /// [`RodError::World`] with the world's error: [`XpbdError::NonPhysicalInertia`] for
    /// [`EndInertia::AsPrinted`] on a coarse chain, [`XpbdError::NotARotation`] or
    /// [`XpbdError::NonFinite`] for a bad pose, [`XpbdError::NoDynamicBody`] for a
    /// two-body rod with both ends clamped.
    pub fn build(&self, world: &mut World<T, G>) -> Result<RigidChain, RodError> {
        let n = self.poses.len();
        let inertias = self.body_inertias();
        let mut bodies = Vec::with_capacity(n);
        for (j, (pose, inertia)) in self.poses.iter().zip(&inertias).enumerate() {
            let fixed = (j == 0 && self.fixed_base) || (j == n - 1 && self.fixed_tip);
            let body = if fixed {
                Body::fixed(pose.position, pose.rotation)?
            } else {
                Body::dynamic(inertia.mass, inertia.inertia, pose.position, pose.rotation)?
            };
            bodies.push(body);
        }
        let first = world.bodies().len();
        let constraints = self.constraints(first)?;
        if n == 2 && self.fixed_base && self.fixed_tip {
            return Err(RodError::World(XpbdError::NoDynamicBody {
                constraint: Constraint::<T, G>::name(&constraints[0]),
            }));
        }
        let mut ids = Vec::with_capacity(n);
        for body in bodies {
            ids.push(world.add_body(body)?);
        }
        let mut cids = Vec::with_capacity(n - 1);
        for k in constraints {
            cids.push(world.add_constraint(k)?);
        }
        Ok(RigidChain {
            bodies: ids,
            constraints: cids,
        })
    }
}
