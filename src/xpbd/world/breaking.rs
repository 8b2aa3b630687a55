//! Breakable constraints of a [`World`]: a force or torque threshold above which a
//! joint is removed, and the break reported as a [`BreakEvent`].
//!
//! # The force a constraint carries
//! Over a substep of length h the accumulated multiplier λ of a row is its impulse
//! integrated twice: the row's generalised force is λ/h² (from (51): 𝓜(x ⊟ x̃) = ∇Cᵀλ
//! with x ⊟ x̃ = h²𝓜⁻¹f, so f = ∇Cᵀλ/h²). For a joint's length rows (m) that is a force
//! in N, for its angle rows (rad) a torque in N·m. The force of a joint is the norm
//! ‖λ_length‖/h² over its length rows and its torque ‖λ_angle‖/h² over its angle
//! rows ([`BreakLimits`] says which rows are which); both are checked after every
//! substep, with that substep's λ. A constraint whose force or torque exceeds its limit
//! is disabled from the next substep on: the solver, the damping pass and the residuals
//! skip it, and so do the constraints listed as its dependents (e.g. the joint's limit
//! and motor, which make no sense without it).

use super::{ConstraintId, World};
use crate::lie::{LieGroup, Real};
use crate::xpbd::constraint::MAX_ROWS;
use crate::xpbd::XpbdError;

/// When a constraint breaks: a largest force over its length rows and a largest torque
/// over its angle rows.
#[derive(Debug, Clone, PartialEq)]
pub struct BreakLimits<T: Real> {
    /// Largest force ‖λ_length‖/h² the constraint carries, N (+∞: never breaks by force).
    pub max_force: T,
    /// Largest torque ‖λ_angle‖/h², N·m (+∞: never breaks by torque).
    pub max_torque: T,
    /// Which rows are length rows (m), counted in the force.
    pub force_rows: [bool; MAX_ROWS],
    /// Which rows are angle rows (rad), counted in the torque.
    pub torque_rows: [bool; MAX_ROWS],
    /// Constraints removed together with this one when it breaks (e.g. its limit and
    /// motor).
    pub dependents: Vec<ConstraintId>,
}

/// A break: when, which constraint, and what it carried.
#[derive(Debug, Clone, PartialEq)]
pub struct BreakEvent<T: Real> {
    /// Time at the end of the substep in which the limit was exceeded, s.
    pub time: T,
    /// The constraint that broke.
    pub constraint: ConstraintId,
    /// Its [`crate::xpbd::Constraint::name`].
    pub name: String,
    /// The force it carried in that substep, ‖λ_length‖/h², N.
    pub force: T,
    /// The torque it carried, ‖λ_angle‖/h², N·m.
    pub torque: T,
}

/// A slot's break limits, as stored.
#[derive(Debug, Clone)]
pub(crate) struct Breaking<T: Real> {
    limits: BreakLimits<T>,
}

impl<T: Real, G: LieGroup<T>> World<T, G> {
    /// Makes constraint `id` breakable with `limits` (module docs).
    ///
    /// # Errors
    /// [`XpbdError::InvalidOption`] (`break_limits`) for an unknown id or dependent, a
    /// row outside the constraint's rows, or a limit that is NaN or not positive.
    pub fn set_break_limits(
        &mut self,
        id: ConstraintId,
        limits: BreakLimits<T>,
    ) -> Result<(), XpbdError> {
        let bad = |value: String, reason: &'static str| XpbdError::InvalidOption {
            name: "break_limits",
            value,
            reason,
        };
        let Some(slot) = self.slots.get(id.0) else {
            return Err(bad(format!("constraint {}", id.0), "no such constraint"));
        };
        for (what, x) in [
            ("max_force", limits.max_force),
            ("max_torque", limits.max_torque),
        ] {
            if x.partial_cmp(&T::zero()) != Some(std::cmp::Ordering::Greater) {
                return Err(bad(
                    format!("{what} = {x} for '{}'", slot.constraint.name()),
                    "a breaking limit must be > 0 (N or N·m; +inf: never)",
                ));
            }
        }
        let rows_used =
            |m: &[bool; MAX_ROWS]| m.iter().enumerate().any(|(r, &b)| b && r >= slot.dim);
        if rows_used(&limits.force_rows) || rows_used(&limits.torque_rows) {
            return Err(bad(
                format!(
                    "rows beyond the {} of '{}'",
                    slot.dim,
                    slot.constraint.name()
                ),
                "force and torque rows must be rows of the constraint",
            ));
        }
        if let Some(d) = limits.dependents.iter().find(|d| d.0 >= self.slots.len()) {
            return Err(bad(format!("dependent {}", d.0), "no such constraint"));
        }
        self.slots[id.0].breaking = Some(Box::new(Breaking { limits }));
        self.breakable = true;
        Ok(())
    }

    /// The breaks so far, in order.
    pub fn breaks(&self) -> &[BreakEvent<T>] {
        &self.breaks
    }

    /// Whether constraint `id` is active (false once it or the constraint it depends on
    /// broke); `None` for an unknown id.
    pub fn is_enabled(&self, id: ConstraintId) -> Option<bool> {
        self.slots.get(id.0).map(|s| s.enabled)
    }

    /// After a substep of length `h` ending at `time`: disables every enabled breakable
    /// constraint whose force or torque exceeds its limit, with its dependents, and
    /// records the break.
    pub(super) fn check_breaks(&mut self, time: T, h: T) {
        let inv_h2 = T::one() / (h * h);
        for k in 0..self.slots.len() {
            let slot = &self.slots[k];
            let Some(b) = slot.breaking.as_ref().filter(|_| slot.enabled) else {
                continue;
            };
            let norm = |mask: &[bool; MAX_ROWS]| {
                let mut sq = T::zero();
                for r in (0..slot.dim).filter(|&r| mask[r]) {
                    sq += slot.lambda[r] * slot.lambda[r];
                }
                sq.sqrt() * inv_h2
            };
            let (force, torque) = (norm(&b.limits.force_rows), norm(&b.limits.torque_rows));
            if force > b.limits.max_force || torque > b.limits.max_torque {
                let dependents = b.limits.dependents.clone();
                self.breaks.push(BreakEvent {
                    time,
                    constraint: ConstraintId(k),
                    name: slot.constraint.name(),
                    force,
                    torque,
                });
                self.slots[k].enabled = false;
                self.movers_stale = true;
                for d in dependents {
                    self.slots[d.0].enabled = false;
                }
            }
        }
    }
}
