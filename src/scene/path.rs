//! Field paths (`joints[2].body2`) and finding them in a TOML source.

use std::fmt;
use toml::de::{DeTable, DeValue};

/// One step of a field path: a table key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A key of a table.
    Key(String),
    /// An index into an array (0-based).
    Index(usize),
}

/// A path to a field of a scene file, printed as `joints[2].frame1.position`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldPath(pub Vec<Segment>);

impl FieldPath {
    /// The empty path (the whole file).
    pub fn root() -> Self {
        Self(Vec::new())
    }

    /// This path followed by key `k`.
    pub fn key(&self, k: &str) -> Self {
        let mut p = self.clone();
        p.0.push(Segment::Key(k.to_string()));
        p
    }

    /// This path followed by index `i`.
    pub fn index(&self, i: usize) -> Self {
        let mut p = self.clone();
        p.0.push(Segment::Index(i));
        p
    }

    /// Converts a path reported by `serde_path_to_error`.
    pub(crate) fn from_serde(path: &serde_path_to_error::Path) -> Self {
        use serde_path_to_error::Segment as S;
        Self(
            path.iter()
                .filter_map(|s| match s {
                    S::Seq { index } => Some(Segment::Index(*index)),
                    S::Map { key } => Some(Segment::Key(key.clone())),
                    S::Enum { .. } | S::Unknown => None,
                })
                .collect(),
        )
    }

    /// Whether `prefix` is this path or a leading part of it.
    pub fn starts_with(&self, prefix: &FieldPath) -> bool {
        self.0.starts_with(&prefix.0)
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Segment::Key(k) if i == 0 => write!(f, "{k}")?,
                Segment::Key(k) => write!(f, ".{k}")?,
                Segment::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// Byte offset in `source` of the deepest part of `path` that exists there: the value
/// of the last key found (or the key itself for a key the file has but the path ends
/// in, e.g. an unknown field), else the enclosing table. `None` if `source` is not
/// valid TOML.
pub(crate) fn locate(source: &str, path: &FieldPath) -> Option<usize> {
    let doc = DeTable::parse(source).ok()?;
    let mut table: &DeTable = doc.get_ref();
    let mut value: Option<&toml::Spanned<DeValue>> = None;
    let mut best: Option<usize> = None;
    for seg in &path.0 {
        match seg {
            Segment::Key(k) => {
                let t = match value.map(|v| v.get_ref()) {
                    None => table,
                    Some(DeValue::Table(t)) => t,
                    _ => break,
                };
                let Some((key, v)) = t.get_key_value(k.as_str()) else {
                    break;
                };
                best = Some(key.span().start);
                table = t;
                value = Some(v);
                // Point at the value for scalars, at the key for tables and arrays.
                if !matches!(v.get_ref(), DeValue::Table(_) | DeValue::Array(_)) {
                    best = Some(v.span().start);
                }
            }
            Segment::Index(i) => {
                let Some(DeValue::Array(a)) = value.map(|v| v.get_ref()) else {
                    break;
                };
                let Some(v) = a.get(*i) else { break };
                best = Some(v.span().start);
                value = Some(v);
            }
        }
    }
    best
}
