//! The paper's experiments (Section 9) as scene builders: each returns a ready
//! [`crate::xpbd::World`] for any scalar and rotation representation.

pub mod pendulum;

use crate::xpbd::XpbdError;
use thiserror::Error;

/// What can be wrong with a scene's configuration.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ScenarioError {
    /// A configuration field is out of range.
    #[error("invalid scene setting {field} = {value}: {reason}")]
    InvalidConfig {
        /// Field name as the user spells it (e.g. "seconds").
        field: &'static str,
        /// The value given, printed.
        value: String,
        /// What is allowed.
        reason: &'static str,
    },
    /// The world rejected a body, constraint or option.
    #[error(transparent)]
    Xpbd(#[from] XpbdError),
    /// The scene description was rejected.
    #[error(transparent)]
    Scene(#[from] crate::scene::SceneError),
}
