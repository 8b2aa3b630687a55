//! [`JointKinematics`]: the world joint frames of a body pair at one state, the
//! quantities every joint is built from, and their gradients (Appendix F.1, F.3).
//!
//! With body poses (pₖ, Rₖ) and joint frames (rₖ, Jₖ) = (r^J_k, R^J_k), k = 1, 2:
//!
//! ```text
//! p̄ₖ = pₖ + Rₖ rₖ,   R̄ₖ = Rₖ Jₖ                                     (69)–(70)
//! position error     Δp = p̄₁ − p̄₂                                   (71), (75)
//! rotation error     e  = R̄₁ ⊟ R̄₂                                   (71)
//! relative position  u  = R̄₁ᵀ (p̄₂ − p̄₁)                            (79)–(80)
//! joint angle        θ_rev = e₃                                      (73)
//! prismatic offset   d_pr  = u₃                                      (80)
//! ```
//!
//! Gradients are per body, n×6 blocks `[∂/∂pₖ | D_{Rₖ}]` in the layout of (59):
//! world-frame position perturbations (per m) then body-frame rotation perturbations
//! `Rₖ ⊞ δθ` (per rad). Derived by the chain rule from (20)–(23) and (28) in
//! `proofs/joint_kinematics.md`:
//!
//! ```text
//! ∂Δp:  body 1 [ I | −R₁ r̂₁ ],                body 2 [ −I | R₂ r̂₂ ]
//! D e:  body 1 [ 0 | Γ⁻¹(e) J₁ᵀ ]  (162),      body 2 [ 0 | −Γ⁻¹(e)ᵀ J₂ᵀ ]  (163)
//! ∂u:   body 1 [ −R̄₁ᵀ | J₁ᵀ (R₁ᵀ(p̄₂ − p₁))^ ], body 2 [ R̄₁ᵀ | −R̄₁ᵀ R₂ r̂₂ ]
//! ```
//!
//! The u block for R₁ is the corrected (174) of the spec README: p̄₁ depends on R₁
//! too, which turns p̄₂ − p̄₁ into p̄₂ − p₁ (the body position, not the joint point).
//!
//! # Precision of the values
//!
//! Built from bodies ([`JointKinematics::from_bodies`], as every joint in a world is),
//! the values Δp, e, u and the spherical limits' angles are computed from the bodies'
//! compensated state (the position's low part, and the orientation as a base rotation
//! times the small rotation since it): in `T` for f64, and in f64 for f32
//! ([`crate::lie::Real::WIDE_CONSTRAINT_VALUES`]). A value rounded to ε·|p| is
//! projected away every substep, which turns its rounding into a velocity noise of
//! ε·|p|/h; in f32 with substeps of 1 µs that is 0.06 m/s at 1 m and heated the triple
//! pendulum by up to 0.43 J within 2 s. The f64 values are accurate to ε_f64·|p|; the
//! gradients stay in `T` (their relative ε only scales a correction).

use super::frame::JointFrame;
use crate::lie::real::unit_quaternion_f64;
use crate::lie::so3::right_jacobian_inv_inline as right_jacobian_inv;
use crate::lie::Pose;
use crate::lie::{LieGroup, Real};
use crate::xpbd::Body;
use nalgebra::{Matrix3, RowVector6, SMatrix, UnitQuaternion, Vector3};

/// A 3×6 gradient block `[∂/∂p | D_R]` of a 3-vector with respect to one body.
pub type Block3<T> = SMatrix<T, 3, 6>;

/// Stacks a 3×3 position block and a 3×3 rotation block into `[P | R]`.
#[inline(always)]
fn block<T: Real>(pos: &Matrix3<T>, rot: &Matrix3<T>) -> Block3<T> {
    Block3::from_fn(|r, c| if c < 3 { pos[(r, c)] } else { rot[(r, c - 3)] })
}

/// `m·Jᵀ` = `m·D_R(R J)` (22) for a joint frame rotation J, without the product when J
/// is the identity (joint axes = body axes, the common case).
#[inline(always)]
fn mul_frame_transpose<T: Real, G: LieGroup<T>>(m: &Matrix3<T>, j: &G) -> Matrix3<T> {
    if *j == G::identity() {
        *m
    } else {
        m * j.to_matrix().transpose()
    }
}

/// The joint frames of two sides at one state (paper (69)–(70)), with everything the
/// joint constraints and their limits need.
///
/// Side k is a body pose (pₖ, Rₖ) with a [`JointFrame`] (rₖ, Jₖ); for a fixed-world
/// side pass the identity pose and the frame's world pose (as
/// [`super::JointAttachments::kinematics`] does). The gradient of a world side is
/// still computed (it is the derivative with respect to a body that happens not to
/// move); callers ignore it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointKinematics<T: Real, G: LieGroup<T>> {
    /// Body poses (pₖ, Rₖ): m, world frame; body → world.
    pub body: [Pose<T, G>; 2],
    /// Joint frames (rₖ, Jₖ): m, body frame; joint → body.
    pub frame: [JointFrame<T, G>; 2],
    /// World joint frames (p̄ₖ, R̄ₖ) (69)–(70): m, world frame; joint → world.
    pub joint: [Pose<T, G>; 2],
    /// The low parts of the bodies' compensated positions (m; zero unless set).
    pub position_lo: [Vector3<T>; 2],
    /// The world joint frames (p̄ₖ, R̄ₖ) in f64 from the bodies' compensated state, when
    /// [`Real::WIDE_CONSTRAINT_VALUES`] asks for them and the kinematics were built from
    /// bodies ([`Self::from_bodies`]); the values Δp, e and u are then taken from these.
    wide: Option<[(Vector3<f64>, UnitQuaternion<f64>); 2]>,
}

/// A world joint frame (p̄, R̄) in f64: the frame itself for a world side (`None`), else
/// (p + R r, R J) from the body's exact pose ([`Body::pose_f64`]).
#[inline]
fn wide_joint<T: Real, G: LieGroup<T>>(
    body: Option<&Body<T, G>>,
    frame: &JointFrame<T, G>,
) -> (Vector3<f64>, UnitQuaternion<f64>) {
    let r = frame.translation.map(|x| x.to_f64());
    let j = unit_quaternion_f64(&frame.rotation.to_quaternion());
    match body {
        None => (r, j),
        Some(b) => {
            let (p, q) = b.pose_f64();
            (p + q.transform_vector(&r), q * j)
        }
    }
}

impl<T: Real, G: LieGroup<T>> JointKinematics<T, G> {
    /// Evaluates (69)–(70) for both sides.
    #[inline(always)]
    pub fn new(
        pose1: &Pose<T, G>,
        frame1: &JointFrame<T, G>,
        pose2: &Pose<T, G>,
        frame2: &JointFrame<T, G>,
    ) -> Self {
        Self {
            body: [*pose1, *pose2],
            frame: [*frame1, *frame2],
            joint: [frame1.world_pose(pose1), frame2.world_pose(pose2)],
            position_lo: [Vector3::zeros(); 2],
            wide: None,
        }
    }

    /// The kinematics of two sides given as bodies (`None` = the fixed world, whose frame
    /// is then in world coordinates), as [`Self::new`] on their poses with the bodies'
    /// compensated positions (`position_lo`), and, where [`Real::WIDE_CONSTRAINT_VALUES`]
    /// is set (f32), with the joint frames also evaluated in f64 from the exact state.
    #[inline(always)]
    pub fn from_bodies(
        body1: Option<&Body<T, G>>,
        frame1: &JointFrame<T, G>,
        body2: Option<&Body<T, G>>,
        frame2: &JointFrame<T, G>,
    ) -> Self {
        #[inline(always)]
        fn pose<T: Real, G: LieGroup<T>>(b: Option<&Body<T, G>>) -> Pose<T, G> {
            match b {
                None => Pose::identity(),
                Some(b) => Pose::new(b.position, b.orientation),
            }
        }
        #[inline(always)]
        fn joint<T: Real, G: LieGroup<T>>(
            b: Option<&Body<T, G>>,
            f: &JointFrame<T, G>,
        ) -> Pose<T, G> {
            match b {
                None => Pose::new(f.translation, f.rotation),
                Some(b) => Pose::new(
                    f.world_position(&b.position, &b.orientation),
                    f.world_rotation(&b.orientation),
                ),
            }
        }
        let lo = |b: Option<&Body<T, G>>| b.map_or(Vector3::zeros(), |b| b.position_lo());
        Self {
            body: [pose(body1), pose(body2)],
            frame: [*frame1, *frame2],
            joint: [joint(body1, frame1), joint(body2, frame2)],
            position_lo: [lo(body1), lo(body2)],
            wide: if T::WIDE_CONSTRAINT_VALUES {
                Some([wide_joint(body1, frame1), wide_joint(body2, frame2)])
            } else {
                None
            },
        }
    }

    /// R_Δ = R̄₁ᵀR̄₂ as an f64 matrix from the f64 joint frames, if these kinematics
    /// carry them ([`Real::WIDE_CONSTRAINT_VALUES`]); the spherical limits' angles are
    /// then taken from it (their gradients stay in `T`).
    #[inline]
    pub(crate) fn relative_rotation_f64(&self) -> Option<Matrix3<f64>> {
        self.wide()
            .map(|[(_, q1), (_, q2)]| (q1.inverse() * q2).to_rotation_matrix().into_inner())
    }

    /// The f64 world joint frames, if these kinematics carry them.
    #[inline(always)]
    fn wide(&self) -> Option<&[(Vector3<f64>, UnitQuaternion<f64>); 2]> {
        if T::WIDE_CONSTRAINT_VALUES {
            self.wide.as_ref()
        } else {
            None
        }
    }

    /// Δp = p̄₁ − p̄₂ (m, world frame): the position rows of (71), (72), (75).
    #[inline]
    pub fn position_error(&self) -> Vector3<T> {
        if let Some([(p1, _), (p2, _)]) = self.wide() {
            return (p1 - p2).map(<T as Real>::cast);
        }
        let r1 = self.body[0].rotation.act(&self.frame[0].translation);
        let r2 = self.body[1].rotation.act(&self.frame[1].translation);
        (self.body[0].position - self.body[1].position)
            + (self.position_lo[0] - self.position_lo[1])
            + (r1 - r2)
    }

    /// Δp = p̄₁ − p̄₂ and its 3×6 gradient blocks for body 1 and body 2:
    /// `[I | −R₁ r̂₁]` and `[−I | R₂ r̂₂]` (from (20)); dimensionless and m/rad.
    #[inline(always)]
    pub fn position_error_gradient(&self) -> (Vector3<T>, [Block3<T>; 2]) {
        let i = Matrix3::identity();
        let d1 = self.body[0]
            .rotation
            .jacobian_act(&self.frame[0].translation);
        let d2 = self.body[1]
            .rotation
            .jacobian_act(&self.frame[1].translation);
        (
            self.position_error(),
            [block(&i, &d1), block(&(-i), &(-d2))],
        )
    }

    /// e = R̄₁ ⊟ R̄₂ (rad, in the joint frame of side 2): the rotation rows of (71),
    /// (72), (79). |e| ≤ π.
    #[inline]
    pub fn rotation_error(&self) -> Vector3<T> {
        if let Some([(_, q1), (_, q2)]) = self.wide() {
            return <UnitQuaternion<f64> as LieGroup<f64>>::log(&(q2.inverse() * q1))
                .map(<T as Real>::cast);
        }
        self.joint[0].rotation.boxminus(&self.joint[1].rotation)
    }

    /// e = R̄₁ ⊟ R̄₂ and its 3×6 gradient blocks (162)–(163), with all three rows
    /// (the paper's [·]₁₋₂ keeps two of them):
    /// body 1 `[0 | Γ⁻¹(e) J₁ᵀ]`, body 2 `[0 | −Γ⁻¹(e)ᵀ J₂ᵀ]` (rad/rad).
    ///
    /// Γ⁻¹ (27) is finite for |e| ≤ π, so this never produces NaN for finite input;
    /// at |e| = π the rotation error itself jumps (Log's branch cut), so keep
    /// constraints away from relative rotations of π.
    #[inline(always)]
    pub fn rotation_error_gradient(&self) -> (Vector3<T>, [Block3<T>; 2]) {
        let e = self.rotation_error();
        let g = right_jacobian_inv(&e);
        let z = Matrix3::zeros();
        // (28) then (22): D_{R₁}(R̄₁ ⊟ R̄₂) = Γ⁻¹(e)·D_{R₁}(R₁J₁) = Γ⁻¹(e)·J₁ᵀ.
        let rot1 = mul_frame_transpose(&g, &self.frame[0].rotation);
        let rot2 = -mul_frame_transpose(&g.transpose(), &self.frame[1].rotation);
        (e, [block(&z, &rot1), block(&z, &rot2)])
    }

    /// u = R̄₁ᵀ(p̄₂ − p̄₁) (m, joint frame of side 1): where side 2's joint origin is,
    /// seen from side 1's joint frame. Rows 1–2 are the position rows of (79), row 3
    /// is d_pr (80).
    #[inline]
    pub fn relative_position(&self) -> Vector3<T> {
        if let Some([(p1, q1), (p2, _)]) = self.wide() {
            return q1
                .inverse_transform_vector(&(p2 - p1))
                .map(<T as Real>::cast);
        }
        self.joint[0]
            .rotation
            .act_inv(&(self.joint[1].position - self.joint[0].position))
    }

    /// u = R̄₁ᵀ(p̄₂ − p̄₁) and its 3×6 gradient blocks:
    /// body 1 `[−R̄₁ᵀ | J₁ᵀ (R₁ᵀ(p̄₂ − p₁))^]`, body 2 `[R̄₁ᵀ | −R̄₁ᵀ R₂ r̂₂]`
    /// (dimensionless and m/rad). This is the corrected (174): both p̄₁ and R̄₁ depend
    /// on R₁ (`proofs/joint_kinematics.md`).
    #[inline(always)]
    pub fn relative_position_gradient(&self) -> (Vector3<T>, [Block3<T>; 2]) {
        let rbar1_t = self.joint[0].rotation.to_matrix().transpose();
        let j1_t = self.frame[0].rotation.to_matrix().transpose();
        let (p1, r1) = (self.body[0].position, self.body[0].rotation);
        // D_{R₁}: (R̄₁ᵀd̄)^J₁ᵀ + J₁ᵀr̂₁ = J₁ᵀ(R₁ᵀ(p̄₂ − p₁))^, d̄ = p̄₂ − p̄₁.
        let rot1 = j1_t * r1.jacobian_act_inv(&(self.joint[1].position - p1));
        // D_{R₂}: R̄₁ᵀ·D_{R₂}(R₂r₂) = −R̄₁ᵀR₂r̂₂ (20).
        let rot2 = rbar1_t
            * self.body[1]
                .rotation
                .jacobian_act(&self.frame[1].translation);
        (
            self.relative_position(),
            [block(&(-rbar1_t), &rot1), block(&rbar1_t, &rot2)],
        )
    }

    /// θ_rev = [R̄₁ ⊟ R̄₂]₃ (73), rad, in (−π, π]: the revolute joint angle about the
    /// joint z axis (exact while rows 1–2 of the rotation error are zero).
    #[inline]
    pub fn revolute_angle(&self) -> T {
        self.rotation_error()[2]
    }

    /// θ_rev (73) and its 1×6 gradient rows for body 1 and body 2 (row 3 of
    /// [`JointKinematics::rotation_error_gradient`], i.e. (162)–(163) with [·]₃ in place
    /// of [·]₁₋₂), rad/m = 0 and rad/rad.
    #[inline(always)]
    pub fn revolute_angle_gradient(&self) -> (T, [RowVector6<T>; 2]) {
        let (e, [g1, g2]) = self.rotation_error_gradient();
        (e[2], [g1.row(2).into_owned(), g2.row(2).into_owned()])
    }

    /// d_pr = [R̄₁ᵀ(p̄₂ − p̄₁)]₃ (80), m: the prismatic translation along side 1's joint
    /// z axis.
    #[inline]
    pub fn prismatic_offset(&self) -> T {
        self.relative_position()[2]
    }

    /// d_pr (80) and its 1×6 gradient rows for body 1 and body 2 (row 3 of
    /// [`JointKinematics::relative_position_gradient`]), dimensionless and m/rad.
    #[inline(always)]
    pub fn prismatic_offset_gradient(&self) -> (T, [RowVector6<T>; 2]) {
        let (u, [g1, g2]) = self.relative_position_gradient();
        (u[2], [g1.row(2).into_owned(), g2.row(2).into_owned()])
    }
}
