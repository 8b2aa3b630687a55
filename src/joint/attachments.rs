//! [`JointAttachments`]: the two sides of a joint, each a body (or the fixed world)
//! with a [`JointFrame`] on it (paper Section 5.2.1).

use super::frame::JointFrame;
use super::kinematics::JointKinematics;
use crate::lie::Pose;
use crate::lie::{LieGroup, Real};
use crate::xpbd::{Body, BodyId, XpbdError};
use nalgebra::Vector3;

/// The two attachments of a joint: `body1` with `frame1` and `body2` with `frame2`.
///
/// A `None` body is the fixed world (a one-sided joint, Section 5.2.1); its frame is
/// then the joint frame's pose in the world (m, world frame; joint → world). Built
/// only through [`JointAttachments::new`], which guarantees at least one body, two
/// different bodies, and valid frames.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointAttachments<T: Real, G: LieGroup<T>> {
    body1: Option<BodyId>,
    frame1: JointFrame<T, G>,
    body2: Option<BodyId>,
    frame2: JointFrame<T, G>,
    // Whether each frame's rotation is the identity (joint axes = body axes), decided
    // once here: the kinematics then skip the products with it without comparing
    // nine entries at every evaluation. The frames never change after `new`.
    plain: [bool; 2],
}

fn side(body: Option<BodyId>) -> String {
    match body {
        Some(BodyId(i)) => i.to_string(),
        None => "world".to_string(),
    }
}

impl<T: Real, G: LieGroup<T>> JointAttachments<T, G> {
    /// Checks and stores the two attachments.
    ///
    /// # Errors
    /// * [`XpbdError::InvalidJoint`] (field `"bodies"`) if both bodies are `None`
    ///   (nothing to move) or both are the same body (a joint of a body with itself
    ///   constrains nothing that can be solved).
    /// * [`XpbdError::NonFinite`] or [`XpbdError::Lie`] from
    ///   [`JointFrame::validate`] for a non-finite translation or a rotation that is
    ///   not a finite rotation.
    pub fn new(
        body1: Option<BodyId>,
        frame1: JointFrame<T, G>,
        body2: Option<BodyId>,
        frame2: JointFrame<T, G>,
    ) -> Result<Self, XpbdError> {
        match (body1, body2) {
            (None, None) => {
                return Err(XpbdError::InvalidJoint {
                    field: "bodies",
                    value: "(world, world)".into(),
                    reason: "a joint needs at least one body; both sides are the fixed world",
                })
            }
            (Some(a), Some(b)) if a == b => {
                return Err(XpbdError::InvalidJoint {
                    field: "bodies",
                    value: format!("({}, {})", a.0, b.0),
                    reason: "a joint must connect two different bodies",
                })
            }
            _ => {}
        }
        frame1.validate("joint frame 1")?;
        frame2.validate("joint frame 2")?;
        let plain = [
            frame1.rotation == G::identity(),
            frame2.rotation == G::identity(),
        ];
        Ok(Self {
            body1,
            frame1,
            body2,
            frame2,
            plain,
        })
    }

    /// Body of side 1 (`None` = fixed world).
    #[inline]
    pub fn body1(&self) -> Option<BodyId> {
        self.body1
    }

    /// Body of side 2 (`None` = fixed world).
    #[inline]
    pub fn body2(&self) -> Option<BodyId> {
        self.body2
    }

    /// Joint frame on side 1 (in the world frame if `body1` is `None`).
    #[inline]
    pub fn frame1(&self) -> &JointFrame<T, G> {
        &self.frame1
    }

    /// Joint frame on side 2 (in the world frame if `body2` is `None`).
    #[inline]
    pub fn frame2(&self) -> &JointFrame<T, G> {
        &self.frame2
    }

    /// `[body1, body2]`, the body slots of [`crate::xpbd::Constraint::bodies`].
    #[inline]
    pub fn bodies(&self) -> [Option<BodyId>; 2] {
        [self.body1, self.body2]
    }

    /// `"<kind>(<side 1>, <side 2>)"`, each side a body index or `world`, e.g.
    /// `"revolute(world, 0)"`.
    pub fn label(&self, kind: &str) -> String {
        format!("{kind}({}, {})", side(self.body1), side(self.body2))
    }

    /// The pose (p, R) of each side's body in `bodies` (indexed by [`BodyId`]); the
    /// identity pose for a world side. `None` if a body id is not in `bodies`.
    pub fn body_poses(&self, bodies: &[Body<T, G>]) -> Option<[Pose<T, G>; 2]> {
        let pose = |id: Option<BodyId>| -> Option<Pose<T, G>> {
            match id {
                None => Some(Pose::new(Vector3::zeros(), <G as LieGroup<T>>::identity())),
                Some(BodyId(i)) => bodies.get(i).map(|b| Pose::new(b.position, b.orientation)),
            }
        };
        Some([pose(self.body1)?, pose(self.body2)?])
    }

    /// The joint kinematics (world joint frames and their derivatives) at the current
    /// poses of `bodies`; `None` if a body id is not in `bodies`.
    #[inline(always)]
    pub fn kinematics<'a>(&'a self, bodies: &'a [Body<T, G>]) -> Option<JointKinematics<'a, T, G>> {
        let [b1, b2] = self.side_bodies(bodies)?;
        Some(self.kinematics_of(b1, b2))
    }

    /// [`Self::kinematics`] with the two sides' bodies given (`None` = the world): as
    /// [`JointKinematics::new`] on [`Self::body_poses`], with a world side's joint pose
    /// taken as its frame (the identity pose moves nothing).
    #[inline(always)]
    pub(crate) fn kinematics_of<'a>(
        &'a self,
        b1: Option<&'a Body<T, G>>,
        b2: Option<&'a Body<T, G>>,
    ) -> JointKinematics<'a, T, G> {
        JointKinematics::from_bodies_plain(b1, &self.frame1, b2, &self.frame2, self.plain)
    }

    /// The bodies of the two sides in `bodies` (`None` = the world), or `None` if a
    /// body id is not in `bodies`.
    #[inline(always)]
    pub(crate) fn side_bodies<'a>(
        &self,
        bodies: &'a [Body<T, G>],
    ) -> Option<[Option<&'a Body<T, G>>; 2]> {
        let get = |id: Option<BodyId>| match id {
            None => Some(None),
            Some(BodyId(i)) => bodies.get(i).map(Some),
        };
        Some([get(self.body1)?, get(self.body2)?])
    }
}
