//! The paper's experiments (Section 9) as scene builders: each returns a ready
//! [`crate::xpbd::World`] for any scalar and rotation representation.

pub mod pendulum;
pub mod rps;

use crate::scene::{Scene, SceneError};

/// The scenes that ship with the library, by name: `(name, scene file text)`. The
/// program accepts these names wherever it takes a scene file
/// (`lie-xpbd run pendulum`); each is also a file under `scenes/`.
pub const REGISTRY: &[(&str, &str)] =
    &[("pendulum", pendulum::SCENE_TOML), ("rps", rps::SCENE_TOML)];

/// The built-in scene `name`, parsed (origin `scenes/NAME.toml`), or `None` if no
/// scene of that name ships.
///
/// # Errors
/// Cannot fail for the shipped files (a test parses each), but propagates a
/// [`SceneError`] rather than panicking.
pub fn builtin(name: &str) -> Option<Result<Scene, SceneError>> {
    REGISTRY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, text)| Scene::from_toml(text, format!("scenes/{n}.toml")))
}

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
