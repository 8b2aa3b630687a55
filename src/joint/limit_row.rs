//! What the one-row joint limits ([`super::RevoluteLimit`],
//! [`super::SphericalSwingLimit`], [`super::SphericalTwistLimit`],
//! [`super::PrismaticLimit`]) share: the checks of the limits and of the compliance, the
//! choice of the nearer of two limits, the unwrapped angle of the angle limits and
//! writing the row.

use super::attachments::JointAttachments;
use super::limit::wrap_angle;
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

/// |q − (lower + upper)/2|: the distance from q to where [`nearer_limit`] switches
/// rows, the kink of the row ([`crate::xpbd::Constraint::kink_distance`]).
#[inline]
pub(super) fn distance_to_middle<T: Real>(lower: T, upper: T, q: T) -> T {
    (q - (lower + upper) * c::<T>(0.5)).abs()
}

/// `Ok(())` if `lower` and `upper` are finite with `lower < upper`.
///
/// # Errors
/// [`XpbdError::InvalidJoint`] (field `"limits"`, naming `constraint`, with `reason`)
/// otherwise.
pub(super) fn checked_limits<T: Real>(
    lower: T,
    upper: T,
    constraint: &str,
    reason: &'static str,
) -> Result<(), XpbdError> {
    if lower.is_finite() && upper.is_finite() && lower < upper {
        Ok(())
    } else {
        Err(XpbdError::InvalidJoint {
            field: "limits",
            value: format!("[{lower}, {upper}] for '{constraint}'"),
            reason,
        })
    }
}

/// The reference angle θ_ref of an angle read modulo 2π (rad): the wrapped reading is
/// unwrapped to the value nearest θ_ref, θ = θ_ref + wrap(θ_wrapped − θ_ref), and θ_ref
/// follows the unwrapped angle from substep to substep, so that a limit range may
/// extend past ±π.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct UnwrappedAngle<T: Real> {
    reference: T,
}

impl<T: Real> UnwrappedAngle<T> {
    /// θ_ref = 0.
    pub(super) fn new() -> Self {
        Self {
            reference: T::zero(),
        }
    }

    /// θ_ref (rad).
    #[inline]
    pub(super) fn reference(&self) -> T {
        self.reference
    }

    /// Sets θ_ref = `angle` (rad).
    ///
    /// # Errors
    /// [`XpbdError::NonFinite`] (naming the reference angle of `constraint`) for a
    /// non-finite angle.
    pub(super) fn set(&mut self, angle: T, constraint: &str) -> Result<(), XpbdError> {
        if !angle.is_finite() {
            return Err(XpbdError::NonFinite {
                what: format!("reference angle of '{constraint}'"),
            });
        }
        self.reference = angle;
        Ok(())
    }

    /// θ_ref + wrap(`wrapped` − θ_ref), rad.
    #[inline]
    pub(super) fn unwrap(&self, wrapped: T) -> T {
        self.reference + wrap_angle(wrapped - self.reference)
    }

    /// Moves θ_ref to `angle` if it is defined and finite (kept otherwise).
    pub(super) fn follow(&mut self, angle: Option<T>) {
        if let Some(theta) = angle {
            if theta.is_finite() {
                self.reference = theta;
            }
        }
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
