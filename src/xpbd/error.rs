//! Typed errors of the XPBD layer.

use crate::lie::LieError;
use thiserror::Error;

/// Everything that can be wrong with a body, a constraint, solver options or a state.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum XpbdError {
    /// A dynamic body needs a strictly positive, finite mass (kg).
    #[error("body mass must be positive and finite with a finite inverse, got {mass:e} kg")]
    NonPositiveMass {
        /// The mass given (kg).
        mass: f64,
    },
    /// Principal moments of inertia must be strictly positive and finite (kg·m²).
    #[error(
        "principal inertia must be positive and finite, got {value:e} kg·m² about body axis {axis}"
    )]
    NonPositiveInertia {
        /// Body axis index (0 = x, 1 = y, 2 = z).
        axis: usize,
        /// The value given (kg·m²).
        value: f64,
    },
    /// Principal moments of inertia that no rigid body has: each must be at most the sum
    /// of the other two (kg·m²).
    #[error("principal inertia [{}, {}, {}] kg·m² violates I₁ + I₂ ≥ I₃ (and its permutations), which every rigid body satisfies", inertia[0], inertia[1], inertia[2])]
    NonPhysicalInertia {
        /// The principal moments given (kg·m²).
        inertia: [f64; 3],
    },
    /// A body orientation that is not a rotation (e.g. a quaternion built with
    /// `new_unchecked` from a non-unit quaternion).
    #[error("body orientation is not a rotation: {0}")]
    NotARotation(LieError),
    /// A body's public [`crate::xpbd::Body::orientation`] was set between steps to a
    /// value that is not a rotation (e.g. a quaternion of norm 2 built with
    /// `new_unchecked`, a matrix that is not orthogonal, or NaN):
    /// [`crate::xpbd::World::step`] refuses to step and leaves the state as it was.
    #[error("body {body} orientation was set to a value that is not a rotation: {source}")]
    BodyNotARotation {
        /// Index of the body in the world.
        body: usize,
        /// What is wrong with the orientation.
        source: LieError,
    },
    /// A quantity that must be finite has a NaN or infinite entry.
    #[error("{what} has a non-finite entry (NaN or infinity)")]
    NonFinite {
        /// Which quantity (e.g. "body 2 position", "gravity").
        what: String,
    },
    /// A constraint refers to a body that is not in the world.
    #[error("constraint '{constraint}' refers to body {body}, but the world has {}", bodies(.count))]
    UnknownBody {
        /// Constraint name.
        constraint: String,
        /// The bad body index.
        body: usize,
        /// Number of bodies in the world.
        count: usize,
    },
    /// A constraint whose bodies are all fixed or the world: nothing it could move.
    #[error("constraint '{constraint}' has no dynamic body: both sides are fixed bodies or the world, so it can never be satisfied by the solver")]
    NoDynamicBody {
        /// Constraint name.
        constraint: String,
    },
    /// A constraint declared a dimension outside 1..=MAX_ROWS.
    #[error("constraint '{constraint}' has {dim} rows; supported are 1 to {max}")]
    BadDimension {
        /// Constraint name.
        constraint: String,
        /// Dimension declared.
        dim: usize,
        /// [`crate::xpbd::MAX_ROWS`].
        max: usize,
    },
    /// Compliance must be finite and ≥ 0, and α/h² finite (h the substep).
    #[error(
        "constraint '{constraint}' row {row}: compliance must be finite and >= 0, with compliance/h² finite for the substep h, got {value:e}"
    )]
    BadCompliance {
        /// Constraint name.
        constraint: String,
        /// Row index.
        row: usize,
        /// Value given.
        value: f64,
    },
    /// Rayleigh damping b must be finite and ≥ 0 (s).
    #[error(
        "constraint '{constraint}' row {row}: damping must be finite and >= 0 (s; β = b/α), got {value:e}"
    )]
    BadDamping {
        /// Constraint name.
        constraint: String,
        /// Row index.
        row: usize,
        /// Value given.
        value: f64,
    },
    /// A solver option is out of range.
    #[error("invalid solver option {name} = {value}: {reason}")]
    InvalidOption {
        /// Option name.
        name: &'static str,
        /// Value given, printed.
        value: String,
        /// What is allowed.
        reason: &'static str,
    },
    /// A joint was set up wrongly (its bodies, or its compliance or damping vector).
    #[error("invalid joint {field} = {value}: {reason}")]
    InvalidJoint {
        /// What is wrong ("bodies", "compliance", "damping").
        field: &'static str,
        /// The value given, printed.
        value: String,
        /// What is allowed.
        reason: &'static str,
    },
    /// The simulation produced a non-finite state (blow-up).
    #[error("simulation diverged at t = {time} s: body {body} has a non-finite state")]
    Diverged {
        /// Simulated time (s) at which it was detected.
        time: f64,
        /// The first body with a non-finite position, orientation or velocity.
        body: usize,
    },
    /// A constraint that cannot join a direct group
    /// ([`crate::xpbd::World::add_direct_group`]).
    #[error("constraint {constraint} (entry {index} of the list) cannot join the direct group: {reason}")]
    BadGroupMember {
        /// Position of the constraint in the list given.
        index: usize,
        /// Its [`crate::xpbd::ConstraintId`] index.
        constraint: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A direct group found no finite solution in an iteration of the step (module
    /// [`crate::xpbd::world::direct`], singular systems): an entry of its system was
    /// NaN or infinite, or its regularised matrix could still not be factored. That
    /// projection changed nothing.
    #[error("direct group {group} found no finite solution in the step ending at t = {time} s: {reason}")]
    DirectSolveFailed {
        /// Simulated time (s) at the end of the step.
        time: f64,
        /// The [`crate::xpbd::DirectGroupId`] index.
        group: usize,
        /// The first failure of the step, from the block-banded solver.
        reason: String,
    },
    /// A row block index past a [`crate::xpbd::System`]'s
    /// [`row_block_count`](crate::xpbd::System::row_block_count).
    #[error("system '{system}' has {count} row block(s); there is no row block {index}")]
    UnknownRowBlock {
        /// The system's name.
        system: String,
        /// The index asked for.
        index: usize,
        /// Its number of row blocks.
        count: usize,
    },
    /// Invalid rotation input.
    #[error(transparent)]
    Lie(#[from] LieError),
}

/// "1 body", "n bodies".
fn bodies(count: &usize) -> String {
    if *count == 1 {
        "1 body".to_string()
    } else {
        format!("{count} bodies")
    }
}
