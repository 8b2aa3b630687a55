//! What the one-row joint limits ([`super::SphericalSwingLimit`],
//! [`super::SphericalTwistLimit`], [`super::PrismaticLimit`]) share: the choice of the
//! nearer of two limits, the compliance check and writing the row.

use super::attachments::JointAttachments;
use crate::lie::real::c;
use crate::lie::{LieGroup, Real};
use crate::xpbd::{ConstraintEval, XpbdError};
use nalgebra::RowVector6;

/// A limit row: its value C and per-body gradient rows `[∂C/∂p | D_R C]`.
pub(super) type Row<T> = (T, [RowVector6<T>; 2]);

/// The row of the nearer of the limits `lower` ≤ q ≤ `upper` (74), given q and its
/// gradient: C = q − lower with ∇q below the middle of the range, C = upper − q with
/// −∇q from the middle up.
#[inline]
pub(super) fn nearer_limit<T: Real>(lower: T, upper: T, (q, [g1, g2]): Row<T>) -> Row<T> {
    let mid = (lower + upper) * c::<T>(0.5);
    if q < mid {
        (q - lower, [g1, g2])
    } else {
        (upper - q, [-g1, -g2])
    }
}

/// `Ok(compliance)` if it is finite and ≥ 0.
///
/// # Errors
/// [`XpbdError::BadCompliance`] (row 0 of `constraint`) otherwise.
pub(super) fn checked_compliance<T: Real>(
    constraint: String,
    compliance: T,
) -> Result<T, XpbdError> {
    if compliance.is_finite() && compliance >= T::zero() {
        Ok(compliance)
    } else {
        Err(XpbdError::BadCompliance {
            constraint,
            row: 0,
            value: compliance.to_f64(),
        })
    }
}

/// Writes `row` into row 0 of `out` (the gradient only for the body slots that are
/// bodies); a NaN value if `row` is `None` (a body id not in the world).
pub(super) fn write_row<T: Real, G: LieGroup<T>>(
    attachments: &JointAttachments<T, G>,
    row: Option<Row<T>>,
    out: &mut ConstraintEval<T>,
) {
    let Some((value, grads)) = row else {
        out.clear();
        out.value[0] = c::<T>(f64::NAN);
        return;
    };
    out.value[0] = value;
    for (slot, (id, g)) in attachments.bodies().iter().zip(grads).enumerate() {
        if id.is_some() {
            out.gradient[slot].row_mut(0).copy_from(&g);
        }
    }
}
