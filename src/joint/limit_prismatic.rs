//! [`PrismaticLimit`]: the translation limits of a prismatic joint (paper Section
//! 5.5.2), inequalities of the form (74) on the slide d_pr (80), as one row.

use super::attachments::JointAttachments;
use super::frame::JointFrame;
use super::limit_row::{
    checked_compliance, checked_limits, distance_to_middle, nearer_limit, write_row, Row,
};
use crate::lie::real::c;
use crate::lie::{LieGroup, Real};
use crate::xpbd::{Body, BodyId, Constraint, ConstraintEval, XpbdError, MAX_BODIES};

const KIND: &str = "prismatic_limit";

/// Translation limits d_min ≤ d_pr ≤ d_max on the slide of a prismatic joint, d_pr =
/// [R̄₁ᵀ(p̄₂ − p̄₁)]₃ (80): where side 2's joint origin is along side 1's joint z axis
/// (m). One inequality row, the nearer limit, with compliance α (m/N, default 0),
/// active only when violated:
///
/// ```text
/// d_pr < (d_min + d_max)/2:  C = d_pr − d_min,  ∇C =  ∇d_pr
/// otherwise:                 C = d_max − d_pr,  ∇C = −∇d_pr
/// ∇d_pr: body 1 [ −[R̄₁ᵀ]₃ | [J₁ᵀ(R₁ᵀ(p̄₂ − p₁))^]₃ ],  body 2 [ [R̄₁ᵀ]₃ | −[R̄₁ᵀR₂r̂₂]₃ ]
/// ```
///
/// (C in m; gradient dimensionless and m/rad), row 3 of the relative-position gradient
/// of [`super::JointKinematics::prismatic_offset_gradient`]
/// (`proofs/joint_prismatic_limit.md`). Use the same bodies and frames as the
/// [`super::Prismatic`] joint it limits.
///
/// ```
/// use lie_xpbd::joint::{JointFrame, PrismaticLimit};
/// use lie_xpbd::lie::SO3Matrix;
/// use lie_xpbd::xpbd::{BodyId, Constraint};
/// let stops = PrismaticLimit::<f64, SO3Matrix<f64>>::new(
///     None,
///     JointFrame::identity(),
///     Some(BodyId(0)),
///     JointFrame::identity(),
///     -0.1,
///     0.2,
/// )
/// .unwrap()
/// .with_compliance(1e-6)
/// .unwrap();
/// assert_eq!(stops.compliance(0), 1e-6);
/// assert_eq!(stops.name(), "prismatic_limit(world, 0)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrismaticLimit<T: Real, G: LieGroup<T>> {
    attachments: JointAttachments<T, G>,
    lower: T,
    upper: T,
    compliance: T,
}

impl<T: Real, G: LieGroup<T>> PrismaticLimit<T, G> {
    /// Hard (α = 0) limits `lower` ≤ d_pr ≤ `upper` (m) on the slide of the prismatic
    /// joint between `body1` at `frame1` and `body2` at `frame2` (a `None` body is the
    /// fixed world, its frame in world coordinates).
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
            &attachments.label(KIND),
            "translation limits must be finite with lower < upper (m)",
        )?;
        Ok(Self {
            attachments,
            lower,
            upper,
            compliance: T::zero(),
        })
    }

    /// Sets the compliance α of the row, m/N (0 = hard).
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

    /// The limits (d_min, d_max), m.
    #[inline]
    pub fn limits(&self) -> (T, T) {
        (self.lower, self.upper)
    }

    /// The slide d_pr (80), m, at `bodies`; `None` if a body id is not in `bodies`.
    pub fn offset(&self, bodies: &[Body<T, G>]) -> Option<T> {
        Some(self.attachments.kinematics(bodies)?.prismatic_offset())
    }

    fn row(&self, bodies: &[Body<T, G>]) -> Option<Row<T>> {
        let k = self.attachments.kinematics(bodies)?;
        Some(nearer_limit(
            self.lower,
            self.upper,
            k.prismatic_offset_gradient(),
        ))
    }
}

impl<T: Real, G: LieGroup<T>> Constraint<T, G> for PrismaticLimit<T, G> {
    /// `"prismatic_limit(<body 1>, <body 2>)"`.
    fn name(&self) -> String {
        self.attachments.label(KIND)
    }

    /// `"prismatic_limit"`.
    fn kind(&self) -> &'static str {
        KIND
    }

    fn dim(&self) -> usize {
        1
    }

    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        self.attachments.bodies()
    }

    /// Writes the row of the nearer limit (type docs). NaN value if a body id is not in
    /// `bodies`.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        write_row(&self.attachments, self.row(bodies), out);
    }

    /// |d − (d_min + d_max)/2| (m): the row switches limits there.
    fn kink_distance(&self, bodies: &[Body<T, G>]) -> Option<T> {
        let d = self.offset(bodies)?;
        Some(distance_to_middle(self.lower, self.upper, d))
    }

    fn compliance(&self, _row: usize) -> T {
        self.compliance
    }

    /// No: a bounded row is projected row by row.
    fn solve_as_block(&self) -> bool {
        false
    }

    /// `(0, +∞)`: the row only pushes the slide back into the range.
    fn lambda_bounds(&self, _row: usize) -> (T, T) {
        (T::zero(), c::<T>(f64::INFINITY))
    }
}
