//! `--set KEY=VALUE` overrides: the key's path into the scene's TOML table, the value
//! parsed as TOML (or taken as a string), and the located errors of a bad key or value.

use super::error::{SceneError, SceneErrorKind};
use super::format::*;
use super::path::{FieldPath, Segment};
use super::validate::joint_name;

/// Splits `bodies[0].mass` / `bodies.link1.mass` into segments; names stay keys.
fn parse_key(key: &str) -> Option<Vec<Segment>> {
    let mut out = Vec::new();
    for part in key.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if name.is_empty() {
            return None;
        }
        out.push(Segment::Key(name.to_string()));
        while !rest.is_empty() {
            let close = rest.find(']')?;
            out.push(Segment::Index(rest[1..close].trim().parse().ok()?));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return None;
            }
        }
    }
    Some(out)
}

/// What a value that is not exactly one TOML value is told.
const NOT_ONE_VALUE: &str = "the value must be a single TOML value (such as 1e-3, \"rows\" or [0, -9.81, 0]), with no line break and nothing after it";

/// The value of an override: one TOML value, or else a bare word taken as a string.
/// A line break is an error (one TOML value written out, in a `"…"` string, uses `\n`),
/// so that `2e-3\nsubsteps=3` or a `[table]` after a line break is rejected rather than
/// read as its first value with the rest dropped or added to the scene.
fn parse_value(value: &str) -> Result<toml::Value, &'static str> {
    if value.contains(['\n', '\r']) {
        return Err(NOT_ONE_VALUE);
    }
    match format!("v = {value}").parse::<toml::Table>() {
        Ok(mut t) if t.len() == 1 => t.remove("v").ok_or(NOT_ONE_VALUE),
        Ok(_) => Err(NOT_ONE_VALUE),
        Err(_) => Ok(toml::Value::String(value.to_string())),
    }
}

fn override_error(key: &str, value: &str, message: impl Into<String>) -> SceneError {
    // Control characters (a line break in the value) are shown escaped, on one line.
    let shown: String = value
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    SceneError::new(
        SceneErrorKind::Override,
        FieldPath::root(),
        format!("--set {key}={shown}: {}", message.into()),
    )
}

/// Applies one override to the document table.
pub(crate) fn apply_override(
    table: &mut toml::Table,
    key: &str,
    value: &str,
) -> Result<(), SceneError> {
    let segs = parse_key(key).ok_or_else(|| {
        override_error(
            key,
            value,
            "the key must be a dotted path such as solver.dt, bodies[0].mass or bodies.NAME.mass",
        )
    })?;
    if segs.first() == Some(&Segment::Key("version".into())) {
        return Err(override_error(
            key,
            value,
            "the format version cannot be overridden",
        ));
    }
    let new = parse_value(value).map_err(|m| override_error(key, value, m))?;
    let mut root = toml::Value::Table(std::mem::take(table));
    let result = set_in(&mut root, &segs, new, "").map_err(|m| override_error(key, value, m));
    if let toml::Value::Table(t) = root {
        *table = t;
    }
    result
}

/// Sets `segs` under `cur` to `new`; missing table keys are created, array elements
/// are found by index or by their `name` field.
fn set_in(
    cur: &mut toml::Value,
    segs: &[Segment],
    new: toml::Value,
    walked: &str,
) -> Result<(), String> {
    let Some((seg, rest)) = segs.split_first() else {
        *cur = new;
        return Ok(());
    };
    let here = match seg {
        Segment::Key(k) if walked.is_empty() => k.clone(),
        Segment::Key(k) => format!("{walked}.{k}"),
        Segment::Index(i) => format!("{walked}[{i}]"),
    };
    let shown = if walked.is_empty() {
        "the scene"
    } else {
        walked
    };
    let next = match (seg, cur) {
        (Segment::Key(k), toml::Value::Table(t)) => Some(
            t.entry(k.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new())),
        ),
        (Segment::Key(k), toml::Value::Array(a)) => {
            let found = a
                .iter_mut()
                .find(|v| v.get("name").and_then(|n| n.as_str()) == Some(k.as_str()));
            if found.is_none() {
                return Err(format!("'{shown}' has no element named '{k}'"));
            }
            found
        }
        (Segment::Index(i), toml::Value::Array(a)) => {
            let len = a.len();
            match a.get_mut(*i) {
                Some(v) => Some(v),
                None => {
                    return Err(format!(
                        "'{shown}' has {len} elements, so there is no [{i}]"
                    ))
                }
            }
        }
        (Segment::Index(i), _) => {
            return Err(format!("'{shown}' is not a list, so [{i}] does not apply"))
        }
        (Segment::Key(k), _) => {
            return Err(format!(
                "'{shown}' is a value, not a table, so .{k} does not apply"
            ))
        }
    };
    match next {
        Some(v) => set_in(v, rest, new, &here),
        None => Err(format!("'{here}' not found")),
    }
}

/// The field path that an override key designates in `file` (names resolved to
/// indices), for attributing errors to `--set`.
pub(crate) fn override_path(file: &SceneFile, key: &str) -> Option<FieldPath> {
    let segs = parse_key(key)?;
    let mut out = Vec::new();
    let mut it = segs.into_iter().peekable();
    while let Some(seg) = it.next() {
        match &seg {
            Segment::Key(k) if k == "bodies" || k == "joints" || k == "rods" => {
                out.push(seg.clone());
                if let Some(Segment::Key(name)) = it.peek().cloned() {
                    let idx = if k == "bodies" {
                        file.bodies.iter().position(|b| b.name == name)
                    } else if k == "rods" {
                        file.rods.iter().position(|r| r.name == name)
                    } else {
                        file.joints
                            .iter()
                            .enumerate()
                            .position(|(i, j)| joint_name(i, j) == name)
                    };
                    if let Some(idx) = idx {
                        it.next();
                        out.push(Segment::Index(idx));
                    }
                }
            }
            _ => out.push(seg),
        }
    }
    Some(FieldPath(out))
}
