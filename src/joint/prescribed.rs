//! [`PrescribedFrame`]: a body's joint frame held on a frame that moves with time
//! (prescribed motion, inverse dynamics; paper Section 9.1, the 3-RPS robot).
//!
//! # The target frame
//! The target is a world frame (p_t(t), R_t(t)) (m, world frame; target → world) moving
//! at a constant world-frame velocity v (m/s) and a constant world-frame angular
//! velocity Ω (rad/s):
//!
//! ```text
//! p_t(t) = p₀ + v t,        R_t(t) = Exp(Ω t) R₀
//! ```
//!
//! so R_t turns about the fixed world axis Ω/|Ω| at the rate |Ω| (for the 3-RPS drive,
//! a tilted normal that precesses about the vertical). The time is the time the solved
//! positions belong to: [`Constraint::begin_substep`] sets the target for the end of
//! the substep.
//!
//! # The rows
//! With the body's joint frame (p̄, R̄) (69)–(70), the target playing side 1 and the body
//! side 2 of a one-sided joint (Section 5.2.1), the constraint holds any subset of
//!
//! ```text
//! position:     [p_t − p̄]ᵢ,  i ∈ {x, y, z}   (world components, m)        cf. (71)
//! axis:         [R_t ⊟ R̄]₁₋₂                   (z axes aligned, rad)        cf. (72)
//! orientation:  R_t ⊟ R̄                        (frames aligned, rad)        cf. (71)
//! ```
//!
//! The "axis" rows are those of the revolute joint (72): they vanish exactly when the
//! z axes of the two frames coincide, and leave the rotation about that axis free. The
//! gradients are those of [`super::JointKinematics::position_error_gradient`] and
//! [`super::JointKinematics::rotation_error_gradient`] (body 2 blocks
//! `[−I | R r̂]` and `[0 | −Γ⁻¹(e)ᵀ J ᵀ]`, derived in `proofs/joint_kinematics.md`),
//! restricted to the rows held; the target has no gradient (it is not a body).
//!
//! # Errors
//! [`PrescribedFrame::new`] returns [`XpbdError::InvalidJoint`] if no row is held or
//! for a non-finite velocity or spin, and the errors of [`JointFrame::validate`] for a
//! bad frame.

use super::frame::JointFrame;
use super::kinematics::JointKinematics;
use crate::lie::{LieGroup, Pose, Real};
use crate::xpbd::{
    Body, BodyId, Constraint, ConstraintEval, SubstepClock, XpbdError, MAX_BODIES, MAX_ROWS,
};
use nalgebra::Vector3;

/// Which rotation rows a [`PrescribedFrame`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HeldRotation {
    /// None: only position rows.
    Free,
    /// The z axes aligned (2 rows, [R_t ⊟ R̄]₁₋₂, as the revolute joint (72)).
    Axis,
    /// The frames aligned (3 rows, R_t ⊟ R̄, as the fixed joint (71)).
    Orientation,
}

impl HeldRotation {
    /// Number of rotation rows: 0, 2 or 3.
    pub fn rows(self) -> usize {
        match self {
            HeldRotation::Free => 0,
            HeldRotation::Axis => 2,
            HeldRotation::Orientation => 3,
        }
    }
}

/// A body's joint frame held on a moving target frame: the position components in
/// `position` (world x, y, z) and the rotation rows of `rotation` (module docs).
///
/// Rows, in order: the held position components (x before y before z; m), then the
/// rotation rows (rad). Compliance α per row (m/N, rad/(N·m); default 0 = hard).
///
/// ```
/// use lie_xpbd::joint::{HeldRotation, JointFrame, PrescribedFrame};
/// use lie_xpbd::lie::{LieGroup, Pose, SO3Matrix};
/// use lie_xpbd::xpbd::{BodyId, Constraint};
/// use nalgebra::Vector3;
/// // Hold the height (world y) of body 0's centre at 0.5 m and its z axis on a target
/// // z axis turning about world y at 1 rad/s.
/// let target = Pose::new(Vector3::new(0.0, 0.5, 0.0), SO3Matrix::<f64>::identity());
/// let drive = PrescribedFrame::new(
///     BodyId(0),
///     JointFrame::identity(),
///     target,
///     [false, true, false],
///     HeldRotation::Axis,
/// )
/// .unwrap()
/// .with_spin(Vector3::new(0.0, 1.0, 0.0))
/// .unwrap();
/// assert_eq!(drive.dim(), 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrescribedFrame<T: Real, G: LieGroup<T>> {
    body: BodyId,
    frame: JointFrame<T, G>,
    /// (p₀, R₀): the target at t = 0, m, world frame; target → world.
    initial: Pose<T, G>,
    /// v, m/s, world frame.
    velocity: Vector3<T>,
    /// Ω, rad/s, world frame.
    spin: Vector3<T>,
    /// The target at the time set by the last `begin_substep` (t = 0 before).
    target: Pose<T, G>,
    time: T,
    position: [bool; 3],
    rotation: HeldRotation,
    /// The scalar ("normed") form of Section 5.1: one row per part.
    normed: bool,
    compliance: [T; MAX_ROWS],
}

impl<T: Real, G: LieGroup<T>> PrescribedFrame<T, G> {
    /// Holds `body`'s joint frame `frame` (m, body frame; joint → body) on the target
    /// `initial` (m, world frame; target → world), which stays still until given a
    /// velocity ([`Self::with_velocity`]) or a spin ([`Self::with_spin`]). `position`
    /// selects the held world components x, y, z of p_t − p̄; `rotation` the rotation
    /// rows. Hard rows.
    ///
    /// # Errors
    /// [`XpbdError::InvalidJoint`] (field `"rows"`) if no row is held;
    /// [`XpbdError::NonFinite`] / [`XpbdError::Lie`] for a bad frame or target.
    pub fn new(
        body: BodyId,
        frame: JointFrame<T, G>,
        initial: Pose<T, G>,
        position: [bool; 3],
        rotation: HeldRotation,
    ) -> Result<Self, XpbdError> {
        frame.validate("prescribed frame on the body")?;
        JointFrame::new(initial.position, initial.rotation).validate("prescribed target")?;
        let dim = position.iter().filter(|&&b| b).count() + rotation.rows();
        if dim == 0 {
            return Err(XpbdError::InvalidJoint {
                field: "rows",
                value: format!("no rows for body {}", body.0),
                reason: "hold at least one position component or the rotation",
            });
        }
        Ok(Self {
            body,
            frame,
            initial,
            velocity: Vector3::zeros(),
            spin: Vector3::zeros(),
            target: initial,
            time: T::zero(),
            position,
            rotation,
            normed: false,
            compliance: [T::zero(); MAX_ROWS],
        })
    }

    /// The scalar ("normed") form of Section 5.1, as the scalar baseline's joints
    /// ([`super::normed`]): one row ‖[p_t − p̄]_held‖ (m) if any position component is
    /// held, and one row ‖rotation rows‖ (rad) if the rotation is, each with the gradient
    /// wᵀ∇w/‖w‖ of [`super::norm_gradient`] (zero, and the row skipped by the solver,
    /// where the norm is 0 and not differentiable). Call before
    /// [`Self::with_compliance`], which then takes one value per normed row.
    pub fn normed(mut self) -> Self {
        self.normed = true;
        self.compliance = [T::zero(); MAX_ROWS];
        self
    }

    /// Whether this is the normed form ([`Self::normed`]).
    pub fn is_normed(&self) -> bool {
        self.normed
    }

    fn check_vector(&self, v: &Vector3<T>, field: &'static str) -> Result<(), XpbdError> {
        if v.iter().all(|x| x.is_finite()) {
            Ok(())
        } else {
            Err(XpbdError::InvalidJoint {
                field,
                value: format!("{v:?} for '{}'", self.name()),
                reason: "must be finite",
            })
        }
    }

    /// Sets the target's velocity v (m/s, world frame).
    ///
    /// # Errors
    /// [`XpbdError::InvalidJoint`] (field `"velocity"`) for a non-finite entry.
    pub fn with_velocity(mut self, velocity: Vector3<T>) -> Result<Self, XpbdError> {
        self.check_vector(&velocity, "velocity")?;
        self.velocity = velocity;
        Ok(self)
    }

    /// Sets the target's angular velocity Ω (rad/s, world frame): R_t(t) = Exp(Ωt)R₀.
    ///
    /// # Errors
    /// [`XpbdError::InvalidJoint`] (field `"spin"`) for a non-finite entry.
    pub fn with_spin(mut self, spin: Vector3<T>) -> Result<Self, XpbdError> {
        self.check_vector(&spin, "spin")?;
        self.spin = spin;
        Ok(self)
    }

    /// Sets the compliance of each of the [`Constraint::dim`] rows (m/N for position
    /// rows, rad/(N·m) for rotation rows; 0 = hard).
    ///
    /// # Errors
    /// [`XpbdError::InvalidJoint`] (field `"compliance"`) for the wrong number of
    /// values; [`XpbdError::BadCompliance`] for a negative or non-finite one.
    pub fn with_compliance(mut self, compliance: &[T]) -> Result<Self, XpbdError> {
        if compliance.len() != self.dim() {
            return Err(XpbdError::InvalidJoint {
                field: "compliance",
                value: format!("{} values for '{}'", compliance.len(), self.name()),
                reason: "give exactly one compliance per constraint row",
            });
        }
        if let Some((row, &a)) = compliance
            .iter()
            .enumerate()
            .find(|(_, &a)| !(a.is_finite() && a >= T::zero()))
        {
            return Err(XpbdError::BadCompliance {
                constraint: self.name(),
                row,
                value: a.to_f64(),
            });
        }
        self.compliance[..compliance.len()].copy_from_slice(compliance);
        Ok(self)
    }

    /// The target frame at time `t` (s): (p₀ + vt, Exp(Ωt)R₀).
    pub fn target_at(&self, t: T) -> Pose<T, G> {
        Pose::new(
            self.initial.position + self.velocity * t,
            G::exp(&(self.spin * t)).compose(&self.initial.rotation),
        )
    }

    /// The target the constraint currently holds, and the time it belongs to (s).
    pub fn target(&self) -> (Pose<T, G>, T) {
        (self.target, self.time)
    }

    /// The body's joint frame (m, body frame; joint → body).
    pub fn frame(&self) -> &JointFrame<T, G> {
        &self.frame
    }

    /// The angle between the z axes of the body's joint frame and of the current
    /// target (rad, in [0, π]), at `bodies`; `None` if the body is not in `bodies`.
    pub fn axis_angle(&self, bodies: &[Body<T, G>]) -> Option<T> {
        let b = bodies.get(self.body.0)?;
        let z = Vector3::z();
        let a = self.frame.world_rotation(&b.orientation).act(&z);
        let t = self.target.rotation.act(&z);
        Some(a.cross(&t).norm().atan2(a.dot(&t)))
    }

    /// The target as the world side's joint frame.
    fn target_frame(&self) -> JointFrame<T, G> {
        JointFrame::new(self.target.position, self.target.rotation)
    }

    /// The kinematics of the world side at `target` ([`Self::target_frame`]) and the
    /// body; `None` if the body is not in `bodies`.
    fn kinematics<'a>(
        &'a self,
        bodies: &'a [Body<T, G>],
        target: &'a JointFrame<T, G>,
    ) -> Option<JointKinematics<'a, T, G>> {
        let b = bodies.get(self.body.0)?;
        Some(JointKinematics::from_bodies(
            None,
            target,
            Some(b),
            &self.frame,
        ))
    }
}

const KIND: &str = "prescribed";

impl<T: Real, G: LieGroup<T>> Constraint<T, G> for PrescribedFrame<T, G> {
    /// `"prescribed(world, <body>)"`.
    fn name(&self) -> String {
        format!("{KIND}(world, {})", self.body.0)
    }

    fn kind(&self) -> &'static str {
        KIND
    }

    /// False for the normed form ([`Self::normed`]), whose rows are norms; true for
    /// the vector form.
    fn is_smooth(&self) -> bool {
        !self.normed
    }

    fn dim(&self) -> usize {
        let p = self.position.iter().filter(|&&b| b).count();
        if self.normed {
            usize::from(p > 0) + usize::from(self.rotation != HeldRotation::Free)
        } else {
            p + self.rotation.rows()
        }
    }

    /// `[None, Some(body)]`: the target is side 1 (not a body).
    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        [None, Some(self.body)]
    }

    /// Writes the held rows (type docs) into slot 1; NaN values if the body is not in
    /// `bodies`.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        let target = self.target_frame();
        let Some(k) = self.kinematics(bodies, &target) else {
            out.clear();
            for v in out.value.iter_mut().take(self.dim()) {
                *v = crate::lie::real::c::<T>(f64::NAN);
            }
            return;
        };
        if self.normed {
            let mut row = 0;
            if self.position.iter().any(|&b| b) {
                // Unheld components and their gradient rows zeroed, then the norm of all 3.
                let (mut value, [g1, mut g]) = k.position_error_gradient();
                for i in (0..3).filter(|&i| !self.position[i]) {
                    value[i] = T::zero();
                    g.row_mut(i).fill(T::zero());
                }
                let (c, [_, grad]) = super::norm_gradient(&(value, [g1, g]), 0..3);
                out.value[row] = c;
                out.gradient[1].row_mut(row).copy_from(&grad);
                row += 1;
            }
            if self.rotation != HeldRotation::Free {
                let (c, [_, grad]) =
                    super::norm_gradient(&k.rotation_error_gradient(), 0..self.rotation.rows());
                out.value[row] = c;
                out.gradient[1].row_mut(row).copy_from(&grad);
            }
            return;
        }
        let mut row = 0;
        if self.position.iter().any(|&b| b) {
            // The target side has no block: only the body's is formed.
            let (value, [_, g]) = k.position_error_rows_for([false, true]).blocks();
            for i in (0..3).filter(|&i| self.position[i]) {
                out.value[row] = value[i];
                out.gradient[1].row_mut(row).copy_from(&g.row(i));
                row += 1;
            }
        }
        if self.rotation != HeldRotation::Free {
            let (value, [_, g]) = k.rotation_error_rows_for([false, true]).blocks();
            for i in 0..self.rotation.rows() {
                out.value[row] = value[i];
                out.gradient[1].row_mut(row).copy_from(&g.row(i));
                row += 1;
            }
        }
    }

    /// True: every held row (vector or normed form) is written with its value and all
    /// six columns of the body's gradient block; the target side is not a body, so its
    /// block is never read.
    fn evaluate_overwrites(&self) -> bool {
        true
    }

    /// For the normed form, the smallest row value (m or rad), or 0 below
    /// h·√(2/tol) (h = [`Real::fd_step`], tol = [`Real::fd_tolerance`]), as for the
    /// normed joints ([`super::normed::NormedJoint`]); `None` for the vector form
    /// (smooth) or if the body is not in `bodies`.
    fn kink_distance(&self, bodies: &[Body<T, G>]) -> Option<T> {
        if !self.normed {
            return None;
        }
        bodies.get(self.body.0)?;
        let mut out = ConstraintEval::default();
        self.evaluate(bodies, &mut out);
        Some(super::normed::norm_kink_distance(
            &out.value.as_slice()[..self.dim()],
        ))
    }

    fn compliance(&self, row: usize) -> T {
        self.compliance.get(row).copied().unwrap_or_else(T::zero)
    }

    /// Moves the target to `clock.end_time`.
    fn begin_substep(&mut self, clock: SubstepClock<T>, _bodies: &[Body<T, G>]) {
        self.time = clock.end_time;
        self.target = self.target_at(clock.end_time);
    }
}

#[cfg(test)]
mod tests {
    use super::{HeldRotation, PrescribedFrame};
    use crate::joint::frame::JointFrame;
    use crate::lie::{LieGroup, Pose, SO3Matrix};
    use crate::xpbd::{Body, BodyId, Constraint, ConstraintEval};
    use nalgebra::Vector3;

    /// `evaluate_overwrites`: evaluating into a buffer full of stale values gives what
    /// the world reads (rows 0..dim of the values and of the body's block) as into a
    /// cleared buffer, for the vector and the normed form.
    #[test]
    fn evaluate_overwrites_every_read_entry() {
        let orientation = SO3Matrix::exp(&Vector3::new(0.3, -0.2, 0.5));
        let body = Body::dynamic(
            2.0,
            Vector3::new(0.1, 0.2, 0.3),
            Vector3::new(0.4, 0.9, -0.2),
            orientation,
        )
        .unwrap();
        let bodies = [body];
        let frame = JointFrame::new(
            Vector3::new(0.05, -0.1, 0.2),
            SO3Matrix::exp(&Vector3::new(-0.1, 0.2, 0.05)),
        );
        let target = Pose::new(
            Vector3::new(0.5, 1.0, 0.1),
            SO3Matrix::exp(&Vector3::new(0.2, 0.1, -0.3)),
        );
        for normed in [false, true] {
            for rotation in [
                HeldRotation::Free,
                HeldRotation::Axis,
                HeldRotation::Orientation,
            ] {
                let held = [true, false, true];
                let mut c = PrescribedFrame::new(BodyId(0), frame, target, held, rotation).unwrap();
                if normed {
                    c = c.normed();
                }
                assert!(c.evaluate_overwrites());
                let mut clean = ConstraintEval::default();
                c.evaluate(&bodies, &mut clean);
                let mut stale = ConstraintEval::default();
                stale.value.fill(7.0);
                for g in &mut stale.gradient {
                    g.fill(-3.0);
                }
                c.evaluate(&bodies, &mut stale);
                for row in 0..c.dim() {
                    assert_eq!(stale.value[row], clean.value[row]);
                    for col in 0..6 {
                        assert_eq!(stale.gradient[1][(row, col)], clean.gradient[1][(row, col)]);
                    }
                }
            }
        }
    }
}
