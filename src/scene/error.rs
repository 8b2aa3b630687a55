//! [`SceneError`]: what is wrong with a scene file, and where.

use super::path::FieldPath;
use std::fmt;

/// What kind of mistake a [`SceneError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SceneErrorKind {
    /// The file could not be read.
    Io,
    /// Not valid TOML.
    Syntax,
    /// `version` missing or not supported.
    Version,
    /// A wrong type, a missing or an unknown field.
    Schema,
    /// A value out of range or inconsistent with the rest of the scene (a negative
    /// density, a joint naming a body that does not exist, a non-unit quaternion, …).
    Invalid,
    /// A `--set key=value` override that does not apply.
    Override,
}

/// A scene-file error, naming the file, the line and column (1-based) where they are
/// known, the field path (`joints[2].body2`) and what is allowed.
///
/// Displayed as `FILE:LINE:COLUMN: PATH: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SceneError {
    /// What kind of mistake.
    pub kind: SceneErrorKind,
    /// The file's path as given, or a description such as `<built-in pendulum>`.
    pub origin: String,
    /// 1-based line of the offending key or value, if known.
    pub line: Option<usize>,
    /// 1-based column (in characters) of the offending key or value, if known.
    pub column: Option<usize>,
    /// Field path, e.g. `joints[2].body2` (empty for the whole file).
    pub path: FieldPath,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl SceneError {
    pub(crate) fn new(kind: SceneErrorKind, path: FieldPath, message: impl Into<String>) -> Self {
        Self {
            kind,
            origin: String::new(),
            line: None,
            column: None,
            path,
            message: message.into(),
        }
    }

    /// Sets line and column from a byte offset into `source`.
    pub(crate) fn at_offset(mut self, source: &str, offset: usize) -> Self {
        let (line, column) = line_column(source, offset);
        self.line = Some(line);
        self.column = Some(column);
        self
    }
}

impl fmt::Display for SceneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        write!(f, ": ")?;
        if !self.path.0.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for SceneError {}

/// 1-based (line, column in characters) of byte `offset` in `source`.
pub(crate) fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = &source[..floor_char_boundary(source, offset)];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A number for a message: its shortest round-trip form, in scientific notation when
/// very large or small (`1e300`, not three hundred digits).
pub fn num(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e6).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}
