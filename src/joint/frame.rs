//! [`JointFrame`]: where a joint sits on a body (paper Section 5.2.1, eqs. 69–70).

use crate::lie::Pose;
use crate::lie::{LieGroup, Real};
use crate::xpbd::XpbdError;
use nalgebra::Vector3;

/// A joint frame fixed to a body: the translation r^J (m, body frame) from the body
/// origin (centre of mass) to the joint origin, and the rotation R^J (body → joint)
/// of the joint axes relative to the body axes.
///
/// On a body with pose (p, R) the joint frame's world pose is (69)–(70):
///
/// ```text
/// p̄ = p + R r^J        (69)
/// R̄ = R R^J            (70)
/// ```
///
/// For the fixed world side of a one-sided joint (Section 5.2.1) the "body" pose is
/// the identity, so the frame *is* the joint's world pose: `translation` is the joint
/// origin in world coordinates (m) and `rotation` its orientation (joint → world).
///
/// The fields are public; a frame built from its fields is not checked. Joint
/// constructors validate their frames ([`JointFrame::validate`]), so a non-finite frame
/// is rejected when the joint is built, never silently simulated.
///
/// ```
/// use lie_xpbd::joint::JointFrame;
/// use lie_xpbd::lie::{LieGroup, SO3Matrix};
/// use nalgebra::Vector3;
/// // Joint half a metre up the body's y axis, joint axes = body axes.
/// let f = JointFrame::<f64, SO3Matrix<f64>>::at(Vector3::new(0.0, 0.5, 0.0));
/// // Body turned by 90° about z, at (1, 0, 0): the joint sits at (0.5, 0, 0).
/// let r = SO3Matrix::exp(&Vector3::new(0.0, 0.0, std::f64::consts::FRAC_PI_2));
/// let p = f.world_position(&Vector3::new(1.0, 0.0, 0.0), &r);
/// approx::assert_relative_eq!(p, Vector3::new(0.5, 0.0, 0.0), epsilon = 1e-15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointFrame<T: Real, G: LieGroup<T>> {
    /// r^J: joint origin relative to the body origin, m, body frame.
    pub translation: Vector3<T>,
    /// R^J: orientation of the joint axes relative to the body axes (joint → body;
    /// the paper calls it the rotation "from the body frame to the joint frame").
    pub rotation: G,
}

impl<T: Real, G: LieGroup<T>> JointFrame<T, G> {
    /// A frame from its parts, unchecked (see [`JointFrame::try_new`]).
    #[inline]
    pub fn new(translation: Vector3<T>, rotation: G) -> Self {
        Self {
            translation,
            rotation,
        }
    }

    /// A frame at `translation` (m, body frame) with the joint axes equal to the body
    /// axes (R^J = I).
    #[inline]
    pub fn at(translation: Vector3<T>) -> Self {
        Self::new(translation, <G as LieGroup<T>>::identity())
    }

    /// The body frame itself: r^J = 0, R^J = I.
    #[inline]
    pub fn identity() -> Self {
        Self::at(Vector3::zeros())
    }

    /// A validated frame.
    ///
    /// # Errors
    /// As [`JointFrame::validate`].
    pub fn try_new(translation: Vector3<T>, rotation: G) -> Result<Self, XpbdError> {
        let f = Self::new(translation, rotation);
        f.validate("joint frame")?;
        Ok(f)
    }

    /// The frame whose world pose, on a body at `body`, is `joint` (m, world frame;
    /// joint → world): the inverse of (69)–(70), r^J = Rᵀ(p̄ − p), R^J = RᵀR̄.
    /// Useful to place a joint at a world point and let each body find its own frame.
    pub fn from_world(body: &Pose<T, G>, joint: &Pose<T, G>) -> Self {
        Self::new(
            body.rotation.act_inv(&(joint.position - body.position)),
            body.rotation.inverse().compose(&joint.rotation),
        )
    }

    /// Checks that the translation is finite and the rotation is a finite rotation
    /// (‖RᵀR − I‖_F within [`Real::orthogonality_tolerance`], det R > 0). `what` names
    /// the frame in the error (e.g. "joint frame 1").
    ///
    /// # Errors
    /// [`XpbdError::NonFinite`] for a NaN/∞ entry; [`XpbdError::Lie`] wrapping
    /// [`crate::lie::LieError::NotOrthogonal`] or [`crate::lie::LieError::Reflection`]
    /// for a rotation that is not one (e.g. an unnormalised quaternion built with
    /// `new_unchecked`).
    pub fn validate(&self, what: &str) -> Result<(), XpbdError> {
        if !self.translation.iter().all(|x| x.is_finite()) {
            return Err(XpbdError::NonFinite {
                what: format!("{what} translation"),
            });
        }
        let m = self.rotation.to_matrix();
        if !m.iter().all(|x| x.is_finite()) {
            return Err(XpbdError::NonFinite {
                what: format!("{what} rotation"),
            });
        }
        G::from_matrix(&m)?;
        Ok(())
    }

    /// (69) World position of the joint origin, p̄ = p + R r^J (m, world frame), for a
    /// body at position `position` (m, world) with orientation `rotation` (body → world).
    #[inline]
    pub fn world_position(&self, position: &Vector3<T>, rotation: &G) -> Vector3<T> {
        position + rotation.act(&self.translation)
    }

    /// (70) World orientation of the joint axes, R̄ = R R^J (joint → world), for a body
    /// with orientation `rotation` (body → world).
    #[inline]
    pub fn world_rotation(&self, rotation: &G) -> G {
        // R·I = R exactly: skip the product for joint axes equal to the body axes.
        if self.rotation == G::identity() {
            *rotation
        } else {
            rotation.compose(&self.rotation)
        }
    }

    /// (69)–(70) together: the joint frame's world pose (p̄, R̄) on a body at `body`.
    #[inline(always)]
    pub fn world_pose(&self, body: &Pose<T, G>) -> Pose<T, G> {
        Pose::new(
            self.world_position(&body.position, &body.rotation),
            self.world_rotation(&body.rotation),
        )
    }
}

impl<T: Real, G: LieGroup<T>> Default for JointFrame<T, G> {
    /// [`JointFrame::identity`].
    fn default() -> Self {
        Self::identity()
    }
}
