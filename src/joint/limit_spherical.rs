//! Swing and twist limits of a spherical joint (paper Section 5.4.2, Appendix F.2):
//! [`SphericalSwingLimit`] (θ_swing ≤ θ_max) and [`SphericalTwistLimit`]
//! (θ_min ≤ θ_twist ≤ θ_max), each one inequality row; and the swing–twist quantities
//! of [`JointKinematics`] they are built from.
//!
//! # Swing–twist decomposition
//! With R_Δ = R̄₁ᵀR̄₂ (joint frame 2 → joint frame 1), (76) writes
//!
//! ```text
//! R_Δ = Exp(θ_swing a) R_z(θ_twist),   a ⊥ e₃ (the swing axis, joint frame 1)
//! ```
//!
//! i.e. a twist about the z axis first, then a swing about an axis in the xy plane that
//! tilts e₃ onto z = R_Δe₃ (side 2's joint z axis seen from side 1). So
//!
//! ```text
//! θ_swing = ∠(e₃, z) = atan2(|e₃ × z|, e₃·z) ∈ [0, π]                  (77)
//! a       = e₃ × z / |e₃ × z|
//! θ_twist = atan2(R_Δ(2,1) − R_Δ(1,2), R_Δ(1,1) + R_Δ(2,2)) ∈ (−π, π]   (78)
//! ```
//!
//! θ_swing is (77)'s arccos(e₃ᵀR_Δe₃) written with atan2, which keeps full precision
//! near 0 and π, where arccos loses half the digits. (78) is exactly the twist of this
//! decomposition: with x = R_Δ(1,1) + R_Δ(2,2) and y = R_Δ(2,1) − R_Δ(1,2),
//! (x, y) = (1 + cos θ_swing)(cos θ_twist, sin θ_twist)
//! (`proofs/joint_spherical_limits.md`).
//!
//! # Gradients
//! Per body, `[∂/∂p | D_R]` (59) with body-frame perturbations Rₖ ⊞ δθ; the position
//! columns are zero. From D_{R₁}R_Δ = −R_ΔᵀJ₁ᵀ (166) and D_{R₂}R_Δ = J₂ᵀ (167):
//!
//! ```text
//! D_{R₁}θ_swing = −(J₁ a)ᵀ,              D_{R₂}θ_swing = (J₂ R_Δᵀ a)ᵀ
//! D_{R₁}θ_twist = −(J₁ R_Δ t)ᵀ,          D_{R₂}θ_twist = (J₂ t)ᵀ
//! t = (x D_{R_Δ}y − y D_{R_Δ}x)ᵀ / (x² + y²)                             (171)–(172)
//! ```
//!
//! The swing rows are (168)–(169) with the factor 1/√(1 − cos²θ_swing) = 1/sin θ_swing
//! (the printed 1/√(1 − θ_swing²) is a slip): (1/sin θ)·e₃ᵀR_Δê₃ = (R_Δᵀa)ᵀ, a unit
//! row. Written through the axis a the gradient is bounded; 1/sin θ never appears.
//!
//! # Singular states and what the code does there
//! * θ_swing = 0 and θ_swing = π: θ_swing is not differentiable (a cone point) and the
//!   swing axis is undefined. When |e₃ × z| ≤ ε (machine epsilon of `T`) the code uses
//!   a = e₁, the x axis of joint frame 1: still a unit gradient, finite, never NaN. At
//!   0 the swing limit is inactive (θ_max > 0). At π every tilt lowers θ_swing at the
//!   same unit rate, so pushing along the fixed e₁ is as good as any direction and is the
//!   same at every iteration; after the first correction |e₃ × z| > ε and the true axis
//!   takes over. A swing limit of θ_max = π is never violated.
//! * θ_swing → π: the twist is undefined (x = y = 0 in (78)) and its gradient grows
//!   without bound, |t| = 1/cos(θ_swing/2) (its xy part has length tan(θ_swing/2)). No
//!   swing–twist decomposition avoids this: for a = (cos α, sin α, 0),
//!   Exp(πa)R_z(ψ) = Exp(πe₁)R_z(ψ − 2α), so at swing π one R_Δ has every twist. When 1 + cos θ_swing = √(x² + y²) ≤ √ε (θ_swing within about
//!   1.7e-4 rad of π in f64, 2.6e-2 rad in f32), where round-off ε in R_Δ leaves the
//!   twist with an error above √ε, [`JointKinematics::twist_angle`] and
//!   [`JointKinematics::twist_angle_gradient`] return `None` and the twist limit writes
//!   a released row: C = 0 with a zero gradient, which the solver skips.

use super::attachments::JointAttachments;
use super::frame::JointFrame;
use super::kinematics::JointKinematics;
use super::limit_row::UnwrappedAngle;
use super::limit_row::{
    checked_compliance, checked_limits, distance_to_middle, nearer_limit, write_row, Row,
};
use crate::lie::real::c;
use crate::lie::{LieGroup, Real};
use crate::xpbd::{Body, BodyId, Constraint, ConstraintEval, XpbdError, MAX_BODIES};
use nalgebra::{Matrix3, RowVector6, Vector3};

/// A gradient row `[0 0 0 | r]` of an angle that does not depend on positions.
#[inline]
fn rotation_row<T: Real>(r: &Vector3<T>) -> RowVector6<T> {
    RowVector6::new(T::zero(), T::zero(), T::zero(), r.x, r.y, r.z)
}

/// θ_swing and the swing axis a (joint frame 1) from the matrix of R_Δ; a = e₁ where
/// |e₃ × z| ≤ ε (module docs).
#[inline]
fn swing_of<T: Real>(m: &Matrix3<T>) -> (T, Vector3<T>) {
    // z = R_Δ e₃ = third column; e₃ × z = (−z₂, z₁, 0), |e₃ × z| = sin θ_swing.
    let (z1, z2, z3) = (m[(0, 2)], m[(1, 2)], m[(2, 2)]);
    let s = z1.hypot(z2);
    let theta = s.atan2(z3);
    let axis = if s > T::default_epsilon() {
        Vector3::new(-z2 / s, z1 / s, T::zero())
    } else {
        Vector3::x()
    };
    (theta, axis)
}

/// (x, y) of (78): x = R_Δ(1,1) + R_Δ(2,2), y = R_Δ(2,1) − R_Δ(1,2) (1-based), and
/// whether the twist is defined (√(x² + y²) = 1 + cos θ_swing > √ε).
#[inline]
fn twist_xy<T: Real>(m: &Matrix3<T>) -> (T, T, bool) {
    let x = m[(0, 0)] + m[(1, 1)];
    let y = m[(1, 0)] - m[(0, 1)];
    (x, y, x.hypot(y) > T::default_epsilon().sqrt())
}

/// The swing–twist quantities of a spherical joint (Section 5.4.2, App. F.2; module
/// docs of [`crate::joint::limit_spherical`]).
impl<T: Real, G: LieGroup<T>> JointKinematics<'_, T, G> {
    /// R_Δ = R̄₁ᵀR̄₂: the rotation from side 2's joint frame to side 1's (App. F.2).
    #[inline]
    pub fn relative_rotation(&self) -> G {
        self.joint_rotation(0)
            .inverse()
            .compose(&self.joint_rotation(1))
    }

    /// θ_swing (77), rad, in [0, π]: the angle between the two joint frames' z axes,
    /// computed as atan2(|e₃ × z|, e₃·z) with z = R_Δe₃.
    #[inline]
    pub fn swing_angle(&self) -> T {
        if let Some(m) = self.relative_rotation_f64() {
            return <T as Real>::cast(swing_of(&m).0);
        }
        swing_of(&self.relative_rotation().to_matrix()).0
    }

    /// The swing axis a of (76): the unit vector e₃ × z / |e₃ × z| in the xy plane of
    /// side 1's joint frame (dimensionless, joint frame 1), about which side 2's z axis
    /// is tilted by θ_swing. Where |e₃ × z| ≤ ε (swing 0 or π) it is undefined and
    /// e₁ is returned.
    #[inline]
    pub fn swing_axis(&self) -> Vector3<T> {
        swing_of(&self.relative_rotation().to_matrix()).1
    }

    /// θ_swing (77) and its 1×6 gradient rows for body 1 and body 2, rad/m = 0 and
    /// rad/rad: `[0 | −(J₁a)ᵀ]` and `[0 | (J₂R_Δᵀa)ᵀ]`, a =
    /// [`JointKinematics::swing_axis`]. This is (168)–(169) with the corrected factor
    /// 1/sin θ_swing (`proofs/joint_spherical_limits.md`); both rows are unit vectors
    /// and finite at every state, including swing 0 and π where θ_swing is not
    /// differentiable and the fallback axis e₁ is used.
    pub fn swing_angle_gradient(&self) -> (T, [RowVector6<T>; 2]) {
        let rd = self.relative_rotation();
        let (theta, a) = swing_of(&rd.to_matrix());
        let theta = self
            .relative_rotation_f64()
            .map_or(theta, |m| <T as Real>::cast(swing_of(&m).0));
        let g1 = -self.frame[0].rotation.act(&a);
        let g2 = self.frame[1].rotation.act(&rd.act_inv(&a));
        (theta, [rotation_row(&g1), rotation_row(&g2)])
    }

    /// θ_twist (78), rad, in [−π, π]: the rotation of side 2 about side 1's joint z
    /// axis in the decomposition (76). `None` where it is undefined to working precision:
    /// 1 + cos θ_swing ≤ √ε (swing within ~1.7e-4 rad of π in f64, ~2.6e-2 rad in f32).
    #[inline]
    pub fn twist_angle(&self) -> Option<T> {
        if let Some(m) = self.relative_rotation_f64() {
            let (x, y, _) = twist_xy(&m);
            let (_, _, defined) = twist_xy(&self.relative_rotation().to_matrix());
            return defined.then(|| <T as Real>::cast(y.atan2(x)));
        }
        let (x, y, defined) = twist_xy(&self.relative_rotation().to_matrix());
        defined.then(|| y.atan2(x))
    }

    /// θ_twist (78) and its 1×6 gradient rows for body 1 and body 2 (171)–(172), rad/m
    /// = 0 and rad/rad: `[0 | −(J₁R_Δt)ᵀ]` and `[0 | (J₂t)ᵀ]` with
    /// t = (x D_{R_Δ}y − y D_{R_Δ}x)ᵀ/(x² + y²), where (0-based entries of R_Δ)
    /// D_{R_Δ}x = (R₁₂, −R₀₂, R₀₁ − R₁₀) and D_{R_Δ}y = (−R₀₂, −R₁₂, R₀₀ + R₁₁)
    /// (`proofs/joint_spherical_limits.md`). Its third component is 1 and
    /// |t| = 1/cos(θ_swing/2). `None` where [`JointKinematics::twist_angle`] is.
    pub fn twist_angle_gradient(&self) -> Option<(T, [RowVector6<T>; 2])> {
        let rd = self.relative_rotation();
        let m = rd.to_matrix();
        let (x, y, defined) = twist_xy(&m);
        if !defined {
            return None;
        }
        // (172), as 3-vectors: D x = −(e₁ᵀR_Δê₁ + e₂ᵀR_Δê₂), D y = −(e₂ᵀR_Δê₁ − e₁ᵀR_Δê₂).
        let dx = Vector3::new(m[(1, 2)], -m[(0, 2)], m[(0, 1)] - m[(1, 0)]);
        let dy = Vector3::new(-m[(0, 2)], -m[(1, 2)], m[(0, 0)] + m[(1, 1)]);
        let t = (dy * x - dx * y) / (x * x + y * y);
        let g1 = -self.frame[0].rotation.act(&rd.act(&t));
        let g2 = self.frame[1].rotation.act(&t);
        let psi = self.relative_rotation_f64().map_or(y.atan2(x), |m| {
            let (x, y, _) = twist_xy(&m);
            <T as Real>::cast(y.atan2(x))
        });
        Some((psi, [rotation_row(&g1), rotation_row(&g2)]))
    }
}

const SWING: &str = "spherical_swing_limit";
const TWIST: &str = "spherical_twist_limit";

/// A swing limit θ_swing ≤ θ_max (164) on a spherical joint: side 2's joint z axis stays
/// within a cone of half-angle θ_max about side 1's joint z axis (Section 5.4.2). One
/// inequality row with compliance α (rad/(N·m), default 0), active only when violated:
///
/// ```text
/// C = θ_max − θ_swing ≥ 0   (rad)
/// ∇C: body 1 [ 0 | (J₁a)ᵀ ],   body 2 [ 0 | −(J₂R_Δᵀa)ᵀ ]
/// ```
///
/// with θ_swing (77), the swing axis a and R_Δ = R̄₁ᵀR̄₂ from
/// [`JointKinematics::swing_angle_gradient`] (`proofs/joint_spherical_limits.md`). The
/// gradient rows are unit vectors at every state; at swing 0 and π the fixed axis e₁
/// of joint frame 1 stands in for the undefined swing axis (module docs), so a limit up
/// to θ_max = π and states at swing exactly 0 or π give no NaN. Use the same bodies
/// and frames as the [`super::Spherical`] joint it limits.
///
/// ```
/// use lie_xpbd::joint::{JointFrame, SphericalSwingLimit};
/// use lie_xpbd::lie::SO3Matrix;
/// use lie_xpbd::xpbd::{BodyId, Constraint};
/// let cone = SphericalSwingLimit::<f64, SO3Matrix<f64>>::new(
///     None,
///     JointFrame::identity(),
///     Some(BodyId(0)),
///     JointFrame::identity(),
///     30f64.to_radians(),
/// )
/// .unwrap();
/// assert_eq!(cone.dim(), 1);
/// assert_eq!(cone.name(), "spherical_swing_limit(world, 0)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SphericalSwingLimit<T: Real, G: LieGroup<T>> {
    attachments: JointAttachments<T, G>,
    max: T,
    compliance: T,
}

impl<T: Real, G: LieGroup<T>> SphericalSwingLimit<T, G> {
    /// A hard (α = 0) swing limit θ_swing ≤ `max` (rad) between `body1` at `frame1` and
    /// `body2` at `frame2` (a `None` body is the fixed world, its frame in world
    /// coordinates).
    ///
    /// # Errors
    /// As [`JointAttachments::new`]; [`XpbdError::InvalidJoint`] (field `"limits"`)
    /// unless 0 < `max` ≤ π.
    pub fn new(
        body1: Option<BodyId>,
        frame1: JointFrame<T, G>,
        body2: Option<BodyId>,
        frame2: JointFrame<T, G>,
        max: T,
    ) -> Result<Self, XpbdError> {
        let attachments = JointAttachments::new(body1, frame1, body2, frame2)?;
        if !(max.is_finite() && max > T::zero() && max <= T::pi()) {
            return Err(XpbdError::InvalidJoint {
                field: "limits",
                value: format!("{max} for '{}'", attachments.label(SWING)),
                reason: "the swing limit must be in (0, π] rad",
            });
        }
        Ok(Self {
            attachments,
            max,
            compliance: T::zero(),
        })
    }

    /// Sets the compliance α of the row, rad/(N·m) (0 = hard).
    ///
    /// # Errors
    /// [`XpbdError::BadCompliance`] for a negative or non-finite α.
    pub fn with_compliance(mut self, compliance: T) -> Result<Self, XpbdError> {
        self.compliance = checked_compliance(self.name(), compliance)?;
        Ok(self)
    }

    /// The two attachments (bodies and joint frames).
    #[inline]
    pub fn attachments(&self) -> &JointAttachments<T, G> {
        &self.attachments
    }

    /// The limit θ_max, rad.
    #[inline]
    pub fn max_angle(&self) -> T {
        self.max
    }

    /// The swing angle θ_swing (77), rad, at `bodies`; `None` if a body id is not in
    /// `bodies`.
    pub fn angle(&self, bodies: &[Body<T, G>]) -> Option<T> {
        Some(self.attachments.kinematics(bodies)?.swing_angle())
    }

    fn row(&self, bodies: &[Body<T, G>]) -> Option<Row<T>> {
        let (theta, [g1, g2]) = self.attachments.kinematics(bodies)?.swing_angle_gradient();
        Some((self.max - theta, [-g1, -g2]))
    }
}

impl<T: Real, G: LieGroup<T>> Constraint<T, G> for SphericalSwingLimit<T, G> {
    /// `"spherical_swing_limit(<body 1>, <body 2>)"`.
    fn name(&self) -> String {
        self.attachments.label(SWING)
    }

    /// `"spherical_swing_limit"`.
    fn kind(&self) -> &'static str {
        SWING
    }

    fn dim(&self) -> usize {
        1
    }

    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        self.attachments.bodies()
    }

    /// Writes C = θ_max − θ_swing and its gradient (type docs). NaN value if a body id
    /// is not in `bodies`.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        write_row(&self.attachments, self.row(bodies), out);
    }

    /// min(θ_swing, π − θ_swing) (rad), or 0 within 0.1 rad of either: the swing angle
    /// (77) has a cone point at 0 and at π, and near them its derivatives grow like
    /// 1/θ^k, so that a central difference's truncation error ~h²/θ² exceeds the
    /// checker's tolerance within ~0.03 rad (f64) and ~0.02 rad (f32); 0.1 rad keeps
    /// a margin. (The row is inactive there for any limit θ_max > 0.1 rad.)
    fn kink_distance(&self, bodies: &[Body<T, G>]) -> Option<T> {
        let theta = self.angle(bodies)?;
        let d = theta.min(c::<T>(std::f64::consts::PI) - theta);
        Some(if d < c::<T>(0.1) { T::zero() } else { d })
    }

    fn compliance(&self, _row: usize) -> T {
        self.compliance
    }

    /// No: a bounded row is projected row by row.
    fn solve_as_block(&self) -> bool {
        false
    }

    /// `(0, +∞)`: the row only pushes the swing back into the cone.
    fn lambda_bounds(&self, _row: usize) -> (T, T) {
        (T::zero(), c::<T>(f64::INFINITY))
    }
}

/// Twist limits θ_min ≤ θ ≤ θ_max ((164) with θ_twist in place of θ_swing, Section
/// 5.4.2) on a spherical joint: the rotation of side 2 about side 1's joint z axis,
/// θ_twist (78), unwrapped across ±π like [`super::RevoluteLimit`]'s angle, so ranges
/// wider than 2π work. One inequality row, the nearer limit, with compliance α
/// (rad/(N·m), default 0):
///
/// ```text
/// θ < (θ_min + θ_max)/2:  C = θ − θ_min,  ∇C =  ∇θ_twist
/// otherwise:              C = θ_max − θ,  ∇C = −∇θ_twist
/// ∇θ_twist: body 1 [ 0 | −(J₁R_Δt)ᵀ ],  body 2 [ 0 | (J₂t)ᵀ ]
/// ```
///
/// with t from [`JointKinematics::twist_angle_gradient`] (171)–(172)
/// (`proofs/joint_spherical_limits.md`). θ = θ_ref + wrap(θ_twist − θ_ref), where the
/// reference angle θ_ref (default 0, see [`SphericalTwistLimit::with_angle`]) is the
/// unwrapped twist at the end of the last substep ([`Constraint::end_substep`]).
///
/// The twist is undefined at swing π: where 1 + cos θ_swing ≤ √ε the row is released
/// (C = 0, zero gradient, so the solver skips it) and θ_ref is kept (module docs).
/// Use the same bodies and frames as the [`super::Spherical`] joint it limits.
///
/// ```
/// use lie_xpbd::joint::{JointFrame, SphericalTwistLimit};
/// use lie_xpbd::lie::UnitQuaternion;
/// use lie_xpbd::xpbd::{BodyId, Constraint};
/// let twist = SphericalTwistLimit::<f32, UnitQuaternion<f32>>::new(
///     Some(BodyId(0)),
///     JointFrame::identity(),
///     Some(BodyId(1)),
///     JointFrame::identity(),
///     -0.5,
///     0.5,
/// )
/// .unwrap();
/// assert_eq!(twist.lambda_bounds(0), (0.0, f32::INFINITY));
/// assert_eq!(twist.kind(), "spherical_twist_limit");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SphericalTwistLimit<T: Real, G: LieGroup<T>> {
    attachments: JointAttachments<T, G>,
    lower: T,
    upper: T,
    compliance: T,
    /// θ_ref: the unwrapped twist at the last [`Constraint::end_substep`] (rad).
    reference: UnwrappedAngle<T>,
}

impl<T: Real, G: LieGroup<T>> SphericalTwistLimit<T, G> {
    /// Hard (α = 0) limits `lower` ≤ θ_twist ≤ `upper` (rad) between `body1` at
    /// `frame1` and `body2` at `frame2` (a `None` body is the fixed world, its frame in
    /// world coordinates). The reference angle is 0.
    ///
    /// # Errors
    /// As [`JointAttachments::new`]; [`XpbdError::InvalidJoint`] (field `"limits"`)
    /// unless both limits are finite and `lower < upper`.
    pub fn new(
        body1: Option<BodyId>,
        frame1: JointFrame<T, G>,
        body2: Option<BodyId>,
        frame2: JointFrame<T, G>,
        lower: T,
        upper: T,
    ) -> Result<Self, XpbdError> {
        let attachments = JointAttachments::new(body1, frame1, body2, frame2)?;
        checked_limits(
            lower,
            upper,
            &attachments.label(TWIST),
            "twist limits must be finite with lower < upper (rad)",
        )?;
        Ok(Self {
            attachments,
            lower,
            upper,
            compliance: T::zero(),
            reference: UnwrappedAngle::new(),
        })
    }

    /// Sets the compliance α of the row, rad/(N·m) (0 = hard).
    ///
    /// # Errors
    /// [`XpbdError::BadCompliance`] for a negative or non-finite α.
    pub fn with_compliance(mut self, compliance: T) -> Result<Self, XpbdError> {
        self.compliance = checked_compliance(self.name(), compliance)?;
        Ok(self)
    }

    /// Sets the reference angle θ_ref (rad): the unwrapped twist is read as the value
    /// nearest θ_ref that agrees with θ_twist modulo 2π. Use it for a joint that starts
    /// twisted past ±π; default 0.
    ///
    /// # Errors
    /// [`XpbdError::NonFinite`] for a non-finite angle.
    pub fn with_angle(mut self, angle: T) -> Result<Self, XpbdError> {
        let name = self.name();
        self.reference.set(angle, &name)?;
        Ok(self)
    }

    /// The two attachments (bodies and joint frames).
    #[inline]
    pub fn attachments(&self) -> &JointAttachments<T, G> {
        &self.attachments
    }

    /// The limits (θ_min, θ_max), rad.
    #[inline]
    pub fn limits(&self) -> (T, T) {
        (self.lower, self.upper)
    }

    /// The reference angle θ_ref (rad): the unwrapped twist at the last
    /// [`Constraint::end_substep`] at which it was defined, or the one given to
    /// [`SphericalTwistLimit::with_angle`].
    #[inline]
    pub fn reference_angle(&self) -> T {
        self.reference.reference()
    }

    /// The unwrapped twist θ = θ_ref + wrap(θ_twist − θ_ref) (rad) at `bodies`; `None`
    /// if a body id is not in `bodies` or the twist is undefined there (swing within
    /// the √ε band of π, [`JointKinematics::twist_angle`]).
    pub fn angle(&self, bodies: &[Body<T, G>]) -> Option<T> {
        let psi = self.attachments.kinematics(bodies)?.twist_angle()?;
        Some(self.reference.unwrap(psi))
    }

    fn row(&self, bodies: &[Body<T, G>]) -> Option<Row<T>> {
        let k = self.attachments.kinematics(bodies)?;
        Some(match k.twist_angle_gradient() {
            Some((psi, grads)) => {
                nearer_limit(self.lower, self.upper, (self.reference.unwrap(psi), grads))
            }
            None => (T::zero(), [RowVector6::zeros(); 2]),
        })
    }
}

impl<T: Real, G: LieGroup<T>> Constraint<T, G> for SphericalTwistLimit<T, G> {
    /// `"spherical_twist_limit(<body 1>, <body 2>)"`.
    fn name(&self) -> String {
        self.attachments.label(TWIST)
    }

    /// `"spherical_twist_limit"`.
    fn kind(&self) -> &'static str {
        TWIST
    }

    fn dim(&self) -> usize {
        1
    }

    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        self.attachments.bodies()
    }

    /// Writes the row of the nearer limit, or the released row where the twist is
    /// undefined (type docs). NaN value if a body id is not in `bodies`.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        write_row(&self.attachments, self.row(bodies), out);
    }

    /// min(|θ − (θ_min + θ_max)/2|, π − θ_swing) (rad): the row switches limits at the
    /// middle of the range and is released where the swing reaches π; 0 where the
    /// twist is undefined.
    fn kink_distance(&self, bodies: &[Body<T, G>]) -> Option<T> {
        let k = self.attachments.kinematics(bodies)?;
        let pi = c::<T>(std::f64::consts::PI);
        Some(match self.angle(bodies) {
            Some(theta) => {
                distance_to_middle(self.lower, self.upper, theta).min(pi - k.swing_angle())
            }
            None => T::zero(),
        })
    }

    fn compliance(&self, _row: usize) -> T {
        self.compliance
    }

    /// No: a bounded row is projected row by row.
    fn solve_as_block(&self) -> bool {
        false
    }

    /// `(0, +∞)`: the row only pushes the twist back into the range.
    fn lambda_bounds(&self, _row: usize) -> (T, T) {
        (T::zero(), c::<T>(f64::INFINITY))
    }

    /// Moves θ_ref to the current unwrapped twist (kept where the twist is undefined).
    fn end_substep(&mut self, bodies: &[Body<T, G>]) {
        self.reference.follow(self.angle(bodies));
    }
}
