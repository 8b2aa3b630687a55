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
//! joint angle        θ     = −e₃ = [R̄₂ ⊟ R̄₁]₃                     (73), sign below
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
//! Every joint coordinate measures side 2 relative to side 1: the slide d_pr (80), the
//! twist angle (78) from R̄₁ᵀR̄₂ and the revolute angle θ, which is (73) with the sign
//! reversed (as printed, (73) measures side 1 relative to side 2): R̄₁ᵀR̄₂ = R_z(θ) on
//! the hinge, so a positive limit, drive target or motor speed turns side 2 positively
//! about side 1's joint z axis, the same sense for every joint type.
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
//! gradients stay in `T` (their relative ε only scales a correction). Bodies in plain
//! f32 arithmetic ([`crate::xpbd::F32Arithmetic::Plain`]) have no compensated state:
//! their joints take the values in f32 from the stored poses.

use super::frame::JointFrame;
use crate::lie::real::unit_quaternion_f64;
use crate::lie::so3::right_jacobian_inv_inline as right_jacobian_inv;
use crate::lie::Pose;
use crate::lie::{LieGroup, Real};
use crate::xpbd::Body;
use nalgebra::{Matrix3, RowVector6, SMatrix, UnitQuaternion, Vector3};

/// A 3×6 gradient block `[∂/∂p | D_R]` of a 3-vector with respect to one body.
pub type Block3<T> = SMatrix<T, 3, 6>;

/// The position columns of a 3×6 gradient block: zero, a multiple s·I of the
/// identity, or a full 3×3 matrix. The vector joints write their rows from this form
/// ([`super::vector::JointRows`]), so that known zeros and identities are stored as
/// constants instead of being built into a block and copied.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PosCols<T: Real> {
    /// ∂/∂p = 0 (a rotation quantity).
    Zero,
    /// ∂/∂p = s·I.
    Identity(T),
    /// ∂/∂p = the matrix.
    Matrix(Matrix3<T>),
}

/// A 3-vector quantity and its gradient per body in structured form: the block of side
/// k is `[pos[k] | rot[k]]` (the same blocks as the `*_gradient` methods return).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rows3<T: Real> {
    /// The value.
    pub value: Vector3<T>,
    /// The position columns per side.
    pub pos: [PosCols<T>; 2],
    /// The rotation columns per side.
    pub rot: [Matrix3<T>; 2],
}

impl<T: Real> Rows3<T> {
    /// The value and the two 3×6 blocks `[P | R]`.
    #[inline(always)]
    pub(crate) fn blocks(&self) -> (Vector3<T>, [Block3<T>; 2]) {
        let block = |k: usize| {
            Block3::from_fn(|r, c| {
                if c < 3 {
                    match self.pos[k] {
                        PosCols::Zero => T::zero(),
                        PosCols::Identity(s) if r == c => s,
                        PosCols::Identity(_) => T::zero(),
                        PosCols::Matrix(m) => m[(r, c)],
                    }
                } else {
                    self.rot[k][(r, c - 3)]
                }
            })
        };
        (self.value, [block(0), block(1)])
    }
}

/// `m·Jᵀ` = `m·D_R(R J)` (22) for a joint frame rotation J, without the product when J
/// is the identity (`plain`: joint axes = body axes, the common case).
#[inline(always)]
fn mul_frame_transpose<T: Real, G: LieGroup<T>>(m: &Matrix3<T>, j: &G, plain: bool) -> Matrix3<T> {
    if plain {
        *m
    } else {
        crate::lie::fma::mat3_mul_tr(m, &j.to_matrix())
    }
}

/// The joint frames of two sides at one state (paper (69)–(70)), with everything the
/// joint constraints and their limits need.
///
/// Side k is a body pose (pₖ, Rₖ) with a [`JointFrame`] (rₖ, Jₖ); for a fixed-world
/// side pass the identity pose and the frame's world pose (as
/// [`super::JointAttachments::kinematics`] does). The gradient of a world side is
/// still computed (it is the derivative with respect to a body that happens not to
/// move); callers ignore it. The joint rotations R̄ₖ are formed at construction: the
/// fields describe the state the kinematics were built for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointKinematics<'a, T: Real, G: LieGroup<T>> {
    /// Body poses (pₖ, Rₖ): m, world frame; body → world.
    pub body: [Pose<T, G>; 2],
    /// Joint frames (rₖ, Jₖ): m, body frame; joint → body.
    pub frame: [&'a JointFrame<T, G>; 2],
    /// The low parts of the bodies' compensated positions (m; zero unless set).
    pub position_lo: [Vector3<T>; 2],
    /// The sides' bodies (`None` = the world) when built by [`Self::from_bodies`]: where
    /// [`Real::WIDE_CONSTRAINT_VALUES`] asks for it, the values Δp, e and u are taken from
    /// the world joint frames evaluated in f64 from their compensated state (`wide`).
    bodies: Option<[Option<&'a Body<T, G>>; 2]>,
    /// Whether each frame's rotation Jₖ is the identity: R̄ₖ = Rₖ and the products with
    /// Jₖ are skipped (they would change nothing: I·x is x exactly).
    plain: [bool; 2],
    /// The world joint frames in f64 ([`Real::WIDE_CONSTRAINT_VALUES`]), formed once at
    /// construction by [`Self::from_bodies`] from the bodies' compensated state; `None`
    /// in f64, for [`Self::new`], and for bodies in plain f32 arithmetic
    /// ([`crate::xpbd::F32Arithmetic::Plain`]). Formed once, not per value: a joint
    /// asks for two or three values (callgrind, triple pendulum, block solve, f32:
    /// 11,275 → about 10,300 instructions per step).
    wide: Option<WideJointFrames>,
    /// R̄ₖ = RₖJₖ (70), formed once here from `body` and `frame` as they are at
    /// construction, for every quantity that reads it (the prismatic joint read R̄₁ three
    /// times: callgrind, 3-RPS robot, block mode, f64: −1% instructions per step).
    rotation: [G; 2],
}

/// R̄ₖ = RₖJₖ (70) of both sides: Rₖ where Jₖ is the identity (`plain[k]`), Jₖ for a world
/// side (`world[k]`: the identity pose, I·J = J).
#[inline(always)]
fn joint_rotations<T: Real, G: LieGroup<T>>(
    body: &[Pose<T, G>; 2],
    frame: [&JointFrame<T, G>; 2],
    plain: [bool; 2],
    world: [bool; 2],
) -> [G; 2] {
    let r = |k: usize| {
        if plain[k] {
            body[k].rotation
        } else if world[k] {
            frame[k].rotation
        } else {
            body[k].rotation.compose(&frame[k].rotation)
        }
    };
    [r(0), r(1)]
}

/// World joint frames (p̄ₖ, R̄ₖ), k = 1, 2, in f64: m, world frame; joint → world.
type WideJointFrames = [(Vector3<f64>, UnitQuaternion<f64>); 2];

/// A world joint frame (p̄, R̄) in f64: the frame itself for a world side (`None`), else
/// (p + R r, R J) from the body's exact pose ([`Body::pose_f64`]). `plain`: the frame's
/// rotation J is the identity.
#[inline]
fn wide_joint<T: Real, G: LieGroup<T>>(
    body: Option<&Body<T, G>>,
    frame: &JointFrame<T, G>,
    plain: bool,
) -> (Vector3<f64>, UnitQuaternion<f64>) {
    let r = frame.translation.map(|x| x.to_f64());
    // Joint axes equal to the body axes (the common case) need no conversion.
    let j = (!plain).then(|| unit_quaternion_f64(&frame.rotation.to_quaternion()));
    match (body, j) {
        (None, j) => (r, j.unwrap_or_else(UnitQuaternion::identity)),
        (Some(b), j) => {
            let (p, q) = b.pose_f64();
            (p + q.transform_vector(&r), j.map_or(q, |j| q * j))
        }
    }
}

impl<'a, T: Real, G: LieGroup<T>> JointKinematics<'a, T, G> {
    /// The kinematics of two sides given as body poses (pₖ, Rₖ) with their joint frames.
    #[inline(always)]
    pub fn new(
        pose1: &Pose<T, G>,
        frame1: &'a JointFrame<T, G>,
        pose2: &Pose<T, G>,
        frame2: &'a JointFrame<T, G>,
    ) -> Self {
        let body = [*pose1, *pose2];
        let frame = [frame1, frame2];
        let plain = [
            frame1.rotation == G::identity(),
            frame2.rotation == G::identity(),
        ];
        Self {
            body,
            frame,
            position_lo: [Vector3::zeros(); 2],
            bodies: None,
            plain,
            rotation: joint_rotations(&body, frame, plain, [false; 2]),
            wide: None,
        }
    }

    /// The kinematics of two sides given as bodies (`None` = the fixed world, whose frame
    /// is then in world coordinates), as [`Self::new`] on their poses (the identity pose
    /// for the world) with the bodies' compensated positions (`position_lo`), and, where
    /// [`Real::WIDE_CONSTRAINT_VALUES`] is set (f32), with the values taken from the joint
    /// frames evaluated in f64 from the exact state.
    #[inline(always)]
    pub fn from_bodies(
        body1: Option<&'a Body<T, G>>,
        frame1: &'a JointFrame<T, G>,
        body2: Option<&'a Body<T, G>>,
        frame2: &'a JointFrame<T, G>,
    ) -> Self {
        let plain = [
            frame1.rotation == G::identity(),
            frame2.rotation == G::identity(),
        ];
        Self::from_bodies_plain(body1, frame1, body2, frame2, plain)
    }

    /// [`Self::from_bodies`] with the frames' identity tests given (`plain[k]`: the
    /// rotation of `frame{k+1}` is the identity), as cached by the joint attachments.
    #[inline(always)]
    pub(crate) fn from_bodies_plain(
        body1: Option<&'a Body<T, G>>,
        frame1: &'a JointFrame<T, G>,
        body2: Option<&'a Body<T, G>>,
        frame2: &'a JointFrame<T, G>,
        plain: [bool; 2],
    ) -> Self {
        #[inline(always)]
        fn pose<T: Real, G: LieGroup<T>>(b: Option<&Body<T, G>>) -> Pose<T, G> {
            match b {
                None => Pose::identity(),
                Some(b) => Pose::new(b.position, b.orientation),
            }
        }
        let lo = |b: Option<&Body<T, G>>| b.map_or(Vector3::zeros(), |b| b.position_lo());
        let body = [pose(body1), pose(body2)];
        let frame = [frame1, frame2];
        let world = [body1.is_none(), body2.is_none()];
        // Plain f32 arithmetic (`F32Arithmetic::Plain`) takes the values from the f32
        // poses.
        let is_plain = |b: Option<&Body<T, G>>| b.is_some_and(|b| b.is_plain());
        let wide = (T::WIDE_CONSTRAINT_VALUES && !is_plain(body1) && !is_plain(body2)).then(|| {
            [
                wide_joint(body1, frame1, plain[0]),
                wide_joint(body2, frame2, plain[1]),
            ]
        });
        Self {
            body,
            frame,
            position_lo: [lo(body1), lo(body2)],
            bodies: Some([body1, body2]),
            plain,
            rotation: joint_rotations(&body, frame, plain, world),
            wide,
        }
    }

    /// The world joint frame (p̄ₖ, R̄ₖ) (69)–(70) of side k (0 or 1): m, world frame;
    /// joint → world.
    #[inline(always)]
    pub fn joint_pose(&self, k: usize) -> Pose<T, G> {
        Pose::new(
            self.frame[k].world_position(&self.body[k].position, &self.body[k].rotation),
            self.joint_rotation(k),
        )
    }

    /// R̄ₖ = Rₖ Jₖ (70) of side k (0 or 1): joint → world.
    #[inline(always)]
    pub fn joint_rotation(&self, k: usize) -> G {
        self.rotation[k]
    }

    /// Whether side k was built by [`Self::from_bodies`] as the fixed world (its pose
    /// is then the identity).
    #[inline(always)]
    fn is_world(&self, k: usize) -> bool {
        matches!(self.bodies, Some(b) if b[k].is_none())
    }

    /// R_Δ = R̄₁ᵀR̄₂ as an f64 matrix from the f64 joint frames, if these kinematics
    /// carry them ([`Real::WIDE_CONSTRAINT_VALUES`]); the spherical limits' angles are
    /// then taken from it (their gradients stay in `T`).
    #[inline]
    pub(crate) fn relative_rotation_f64(&self) -> Option<Matrix3<f64>> {
        self.wide()
            .map(|[(_, q1), (_, q2)]| (q1.inverse() * q2).to_rotation_matrix().into_inner())
    }

    /// The f64 world joint frames, if these kinematics carry them; `None` at compile
    /// time for f64, and for bodies in plain f32 arithmetic
    /// ([`crate::xpbd::F32Arithmetic::Plain`]).
    #[inline(always)]
    fn wide(&self) -> Option<WideJointFrames> {
        if T::WIDE_CONSTRAINT_VALUES {
            self.wide
        } else {
            None
        }
    }

    /// Δp = p̄₁ − p̄₂ (m, world frame): the position rows of (71), (72), (75).
    #[inline(always)]
    pub fn position_error(&self) -> Vector3<T> {
        if let Some([(p1, _), (p2, _)]) = self.wide() {
            return (p1 - p2).map(<T as Real>::cast);
        }
        // R r for a body; a world side (from `from_bodies`) has the identity pose, and
        // I·r = r exactly.
        let arm = |k: usize| {
            if self.is_world(k) {
                self.frame[k].translation
            } else {
                self.body[k].rotation.act(&self.frame[k].translation)
            }
        };
        let (r1, r2) = (arm(0), arm(1));
        (self.body[0].position - self.body[1].position)
            + (self.position_lo[0] - self.position_lo[1])
            + (r1 - r2)
    }

    /// Δp = p̄₁ − p̄₂ and its 3×6 gradient blocks for body 1 and body 2:
    /// `[I | −R₁ r̂₁]` and `[−I | R₂ r̂₂]` (from (20)); dimensionless and m/rad.
    #[inline(always)]
    pub fn position_error_gradient(&self) -> (Vector3<T>, [Block3<T>; 2]) {
        self.position_error_rows().blocks()
    }

    /// [`Self::position_error_gradient`] in structured form.
    #[inline(always)]
    pub(crate) fn position_error_rows(&self) -> Rows3<T> {
        self.position_error_rows_for([true; 2])
    }

    /// [`Self::position_error_rows`] with the rotation columns of side k computed only
    /// where `sides[k]` (zero elsewhere): for writers that skip a world side's block.
    #[inline(always)]
    pub(crate) fn position_error_rows_for(&self, sides: [bool; 2]) -> Rows3<T> {
        let d = |k: usize| {
            if sides[k] {
                self.body[k]
                    .rotation
                    .jacobian_act(&self.frame[k].translation)
            } else {
                Matrix3::zeros()
            }
        };
        Rows3 {
            value: self.position_error(),
            pos: [PosCols::Identity(T::one()), PosCols::Identity(-T::one())],
            rot: [d(0), -d(1)],
        }
    }

    /// The rotation columns of [`Self::position_error_rows_for`] transposed and applied
    /// to `l`, per side (zero where not `sides[k]`): D_{R₁}(Δp)ᵀl = r₁ × (R₁ᵀl) and
    /// D_{R₂}(Δp)ᵀl = −r₂ × (R₂ᵀl) (body frames; m times the units of l), from
    /// D_R(R r) = −R r̂ (20): (−R r̂)ᵀl = r̂Rᵀl. The position columns are ±I, so their
    /// part is ±l. Used for ∇Cᵀλ without forming the blocks.
    #[inline(always)]
    pub(crate) fn position_error_torques(
        &self,
        l: &Vector3<T>,
        sides: [bool; 2],
    ) -> [Vector3<T>; 2] {
        let t = |k: usize| {
            if sides[k] {
                self.frame[k]
                    .translation
                    .cross(&self.body[k].rotation.act_inv(l))
            } else {
                Vector3::zeros()
            }
        };
        [t(0), -t(1)]
    }

    /// e = R̄₁ ⊟ R̄₂ (rad, in the joint frame of side 2): the rotation rows of (71),
    /// (72), (79). |e| ≤ π.
    #[inline(always)]
    pub fn rotation_error(&self) -> Vector3<T> {
        if let Some([(_, q1), (_, q2)]) = self.wide() {
            return <UnitQuaternion<f64> as LieGroup<f64>>::log(&(q2.inverse() * q1))
                .map(<T as Real>::cast);
        }
        self.joint_rotation(0).boxminus(&self.joint_rotation(1))
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
        self.rotation_error_rows().blocks()
    }

    /// [`Self::rotation_error_gradient`] in structured form.
    #[inline(always)]
    pub(crate) fn rotation_error_rows(&self) -> Rows3<T> {
        self.rotation_error_rows_for([true; 2])
    }

    /// [`Self::rotation_error_rows`] with the rotation columns of side k computed only
    /// where `sides[k]` (zero elsewhere): for writers that skip a world side's block.
    #[inline(always)]
    pub(crate) fn rotation_error_rows_for(&self, sides: [bool; 2]) -> Rows3<T> {
        let e = self.rotation_error();
        let g = right_jacobian_inv(&e);
        // (28) then (22): D_{R₁}(R̄₁ ⊟ R̄₂) = Γ⁻¹(e)·D_{R₁}(R₁J₁) = Γ⁻¹(e)·J₁ᵀ.
        let rot1 = if sides[0] {
            mul_frame_transpose(&g, &self.frame[0].rotation, self.plain[0])
        } else {
            Matrix3::zeros()
        };
        let rot2 = if sides[1] {
            -mul_frame_transpose(&g.transpose(), &self.frame[1].rotation, self.plain[1])
        } else {
            Matrix3::zeros()
        };
        Rows3 {
            value: e,
            pos: [PosCols::Zero, PosCols::Zero],
            rot: [rot1, rot2],
        }
    }

    /// u = R̄₁ᵀ(p̄₂ − p̄₁) (m, joint frame of side 1): where side 2's joint origin is,
    /// seen from side 1's joint frame. Rows 1–2 are the position rows of (79), row 3
    /// is d_pr (80).
    #[inline(always)]
    pub fn relative_position(&self) -> Vector3<T> {
        if let Some([(p1, q1), (p2, _)]) = self.wide() {
            return q1
                .inverse_transform_vector(&(p2 - p1))
                .map(<T as Real>::cast);
        }
        let [j1, j2] = [self.joint_pose(0), self.joint_pose(1)];
        j1.rotation.act_inv(&(j2.position - j1.position))
    }

    /// u = R̄₁ᵀ(p̄₂ − p̄₁) and its 3×6 gradient blocks:
    /// body 1 `[−R̄₁ᵀ | J₁ᵀ (R₁ᵀ(p̄₂ − p₁))^]`, body 2 `[R̄₁ᵀ | −R̄₁ᵀ R₂ r̂₂]`
    /// (dimensionless and m/rad). This is the corrected (174): both p̄₁ and R̄₁ depend
    /// on R₁ (`proofs/joint_kinematics.md`).
    #[inline(always)]
    pub fn relative_position_gradient(&self) -> (Vector3<T>, [Block3<T>; 2]) {
        self.relative_position_rows().blocks()
    }

    /// [`Self::relative_position_gradient`] in structured form.
    #[inline(always)]
    pub(crate) fn relative_position_rows(&self) -> Rows3<T> {
        let rbar1 = self.joint_rotation(0).to_matrix();
        let rbar1_t = rbar1.transpose();
        let (p1, r1) = (self.body[0].position, self.body[0].rotation);
        // D_{R₁}: (R̄₁ᵀd̄)^J₁ᵀ + J₁ᵀr̂₁ = J₁ᵀ(R₁ᵀ(p̄₂ − p₁))^, d̄ = p̄₂ − p̄₁.
        let p2bar = self.frame[1].world_position(&self.body[1].position, &self.body[1].rotation);
        let d1 = r1.jacobian_act_inv(&(p2bar - p1));
        let rot1 = if self.plain[0] {
            d1
        } else {
            crate::lie::fma::mat3_tr_mul(&self.frame[0].rotation.to_matrix(), &d1)
        };
        // D_{R₂}: R̄₁ᵀ·D_{R₂}(R₂r₂) = −R̄₁ᵀR₂r̂₂ (20).
        let rot2 = crate::lie::fma::mat3_tr_mul(
            &rbar1,
            &self.body[1]
                .rotation
                .jacobian_act(&self.frame[1].translation),
        );
        Rows3 {
            value: self.relative_position(),
            pos: [PosCols::Matrix(-rbar1_t), PosCols::Matrix(rbar1_t)],
            rot: [rot1, rot2],
        }
    }

    /// The revolute joint angle θ = [R̄₂ ⊟ R̄₁]₃ = −[R̄₁ ⊟ R̄₂]₃, rad, in [−π, π): the
    /// rotation of side 2's joint frame relative to side 1's about the common z axis
    /// (R̄₁ᵀR̄₂ = R_z(θ) on the hinge; exact while rows 1–2 of the rotation error are
    /// zero). This is (73) with the opposite sign: as printed, (73) measures side 1
    /// relative to side 2, while the twist angle (78) and the slide (80) measure side 2
    /// relative to side 1; the library uses the one sense for every joint coordinate
    /// (limits, drive targets, motor speeds), so that θ > 0 turns side 2 positively
    /// about side 1's joint z axis. (Log(Rᵀ) = −Log(R), so the value is −(73) exactly.)
    #[inline]
    pub fn revolute_angle(&self) -> T {
        -self.rotation_error()[2]
    }

    /// The revolute joint angle θ ([`JointKinematics::revolute_angle`], −(73)) and its
    /// 1×6 gradient rows for body 1 and body 2 (minus row 3 of
    /// [`JointKinematics::rotation_error_gradient`], i.e. −(162)–(163) with [·]₃ in
    /// place of [·]₁₋₂), rad/m = 0 and rad/rad.
    #[inline(always)]
    pub fn revolute_angle_gradient(&self) -> (T, [RowVector6<T>; 2]) {
        let (e, [g1, g2]) = self.rotation_error_gradient();
        (-e[2], [-g1.row(2), -g2.row(2)])
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
