//! The crate's layering rule as a test: a module of `src/` names nothing of a layer
//! above its own, in code or in docs.
//!
//! Layers, bottom to top (the crate docs, `src/lib.rs`, state the same order):
//!
//! ```text
//! lie ← linalg ← xpbd ← joint ← rod, guide ← scene ← scenes ← sim ← pipeline ← bin
//! ```
//!
//! A file belongs to the layer of its top-level module (`src/rod/fem_rod/kernels.rs`
//! to `rod`, `src/sim.rs` to `sim`, `src/bin/*` to `bin`); `src/lib.rs`, the crate root
//! that declares every layer, belongs to none and is not checked. A file may name its
//! own layer and any layer below; `rod` and `guide` share a level and may not name each
//! other. Every top-level module of `src/` must have a layer here, so a new one (e.g.
//! contacts) is placed before it can be imported.
//!
//! What counts as naming a layer, found by plain text scanning of each file (code,
//! comments, doc comments and doc examples alike, so that docs do not point up
//! either):
//! * a path `crate::x…` (also `$crate::x`), and each member of a group
//!   `crate::{x::…, y::…}` (which may span lines), whatever precedes it (`use`,
//!   `pub(crate) use`, a doc link, an expression);
//! * a path `lie_xpbd::x…` or `lie_xpbd::{…}` (doc examples and the binary name the
//!   crate so);
//! * a path `super::…::x` whose `super`s leave the file's top-level module (resolved
//!   from the file's module path; a `super` inside an inline `mod` is resolved as if
//!   from the file's module, which can only report more, never less).
//!
//! Prose that names a higher layer's concept without a path (e.g. "a Cosserat rod")
//! is not an arrow. Paths whose first segment is not a layer (`crate::nalgebra`, the
//! root's re-exports) are not arrows either.

use std::fmt;
use std::path::{Path, PathBuf};

/// The layers with their level, bottom to top: a module may name modules of a lower
/// level, and itself; modules of one level are siblings and may not name each other.
const LAYERS: &[(&str, u32)] = &[
    ("lie", 0),
    ("linalg", 1),
    ("xpbd", 2),
    ("joint", 3),
    ("rod", 4),
    ("guide", 4),
    ("scene", 5),
    ("scenes", 6),
    ("sim", 7),
    ("pipeline", 8),
    ("bin", 9),
];

fn level(layer: &str) -> Option<u32> {
    LAYERS.iter().find(|(l, _)| *l == layer).map(|&(_, n)| n)
}

/// One upward (or sideways) reference: `file:line` names `target` from `layer`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Violation {
    file: String,
    line: usize,
    layer: String,
    target: String,
    text: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {} names {} (`{}`)",
            self.file, self.line, self.layer, self.target, self.text
        )
    }
}

/// The module path of a file relative to the crate (`src/rod/banded.rs` →
/// `["rod", "banded"]`, `src/xpbd/world/mod.rs` → `["xpbd", "world"]`); `None` for
/// the crate root.
fn module_path(rel: &str) -> Option<Vec<String>> {
    let rel = rel.strip_prefix("src/")?.strip_suffix(".rs")?;
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts.is_empty() || parts == ["lib"] {
        return None;
    }
    Some(parts)
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The identifier at the start of `s` (after white space and the `//`, `//!`, `///`
/// markers of a doc comment that a group may span), with its offset in `s`.
fn leading_ident(s: &str) -> Option<(usize, &str)> {
    let start = s.find(|c: char| !(c.is_whitespace() || c == '/' || c == '!' || c == '*'))?;
    let rest = &s[start..];
    let end = rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len());
    let ident = &rest[..end];
    (!ident.is_empty() && !ident.starts_with(|c: char| c.is_ascii_digit()))
        .then_some((start, ident))
}

/// The first path segments after a `prefix::` at `at` in `src`: one identifier, or
/// the first identifier of each member of a `{…}` group, each with its offset.
fn targets_after(src: &str, at: usize) -> Vec<(usize, String)> {
    let rest = &src[at..];
    if let Some(group) = rest.strip_prefix('{') {
        let mut out = Vec::new();
        let (mut depth, mut member) = (0usize, 0usize);
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    if let Some((o, id)) = leading_ident(&group[member..i]) {
                        out.push((at + 1 + member + o, id.to_string()));
                    }
                    return out;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    if let Some((o, id)) = leading_ident(&group[member..i]) {
                        out.push((at + 1 + member + o, id.to_string()));
                    }
                    member = i + 1;
                }
                _ => {}
            }
        }
        out
    } else {
        let end = rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len());
        match &rest[..end] {
            "" => Vec::new(),
            id => vec![(at, id.to_string())],
        }
    }
}

/// Offsets just after each `word::` in `src` that is not the tail of a longer
/// identifier (`$crate::` counts as `crate::`).
fn path_starts(src: &str, word: &str) -> Vec<usize> {
    let pat = format!("{word}::");
    src.match_indices(&pat)
        .filter(|&(i, _)| !src[..i].chars().next_back().is_some_and(is_ident_char))
        .map(|(i, _)| i + pat.len())
        .collect()
}

/// Every reference in `src` (the text of the file at `rel`, relative to the crate,
/// e.g. `src/lie/real.rs`) to a layer above the file's own or to a sibling, in order.
/// Files outside the layers' table (other than the crate root) are reported by
/// [`unplaced_modules`], not here.
fn upward_references(rel: &str, src: &str) -> Vec<Violation> {
    let Some(module) = module_path(rel) else {
        return Vec::new();
    };
    let layer = module[0].as_str();
    let Some(own) = level(layer) else {
        return Vec::new();
    };
    let mut found: Vec<(usize, String)> = Vec::new();
    for word in ["crate", "lie_xpbd"] {
        for at in path_starts(src, word) {
            found.extend(targets_after(src, at));
        }
    }
    // super::super::…::x: the supers leave the top-level module when there are at
    // least as many as the file's module path is deep.
    for at in path_starts(src, "super") {
        if src[..at - "super::".len()].ends_with("super::") {
            continue; // counted from the first super of the chain
        }
        let mut supers = 1;
        let mut next = at;
        while src[next..].starts_with("super::") {
            supers += 1;
            next += "super::".len();
        }
        if supers >= module.len() {
            found.extend(targets_after(src, next));
        }
    }
    found.sort();
    let mut out = Vec::new();
    for (offset, target) in found {
        let Some(theirs) = level(&target) else {
            continue; // not a layer: the root's re-exports, `*`, `self`
        };
        if target == layer || theirs < own {
            continue;
        }
        let line_start = src[..offset].rfind('\n').map_or(0, |i| i + 1);
        let line_end = src[offset..].find('\n').map_or(src.len(), |i| offset + i);
        out.push(Violation {
            file: rel.to_string(),
            line: src[..offset].matches('\n').count() + 1,
            layer: layer.to_string(),
            target,
            text: src[line_start..line_end].trim().to_string(),
        });
    }
    out
}

/// Top-level modules of `src/` (directories and files other than `lib.rs`) that
/// have no layer in [`LAYERS`].
fn unplaced_modules(src_dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(src_dir).expect("src/ is readable") {
        let path = entry.expect("src/ entry").path();
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let is_module = path.is_dir() || path.extension().is_some_and(|e| e == "rs");
        if is_module && name != "lib" && level(name).is_none() {
            out.push(name.to_string());
        }
    }
    out.sort();
    out
}

/// Every `.rs` file below `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("directory is readable") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
}

#[test]
fn no_module_names_a_layer_above_its_own() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let unplaced = unplaced_modules(&src);
    assert!(
        unplaced.is_empty(),
        "top-level modules without a layer (add them to LAYERS and to the crate docs): {unplaced:?}"
    );
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 50,
        "found only {} files under src/",
        files.len()
    );
    let mut violations = Vec::new();
    for path in &files {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(path).unwrap();
        violations.extend(upward_references(&rel, &text));
    }
    let list: Vec<String> = violations.iter().map(Violation::to_string).collect();
    assert!(
        violations.is_empty(),
        "{} reference(s) to a layer above (or beside) the file's own:\n{}",
        violations.len(),
        list.join("\n")
    );
}

/// The targets the checker reports for `src` placed at `rel`.
fn reported(rel: &str, src: &str) -> Vec<(usize, String)> {
    upward_references(rel, src)
        .into_iter()
        .map(|v| (v.line, v.target))
        .collect()
}

#[test]
fn checker_reports_an_upward_use() {
    let src = "use crate::lie::Real;\nuse crate::rod::Foo;\n";
    assert_eq!(reported("src/lie/extra.rs", src), [(2, "rod".to_string())]);
    let v = &upward_references("src/lie/extra.rs", src)[0];
    assert_eq!(
        v.to_string(),
        "src/lie/extra.rs:2: lie names rod (`use crate::rod::Foo;`)"
    );
}

#[test]
fn checker_reports_members_of_groups_and_restricted_uses() {
    let src = "pub(crate) use crate::{\n    lie::{Real, c},\n    xpbd::World,\n};\n";
    assert_eq!(reported("src/linalg/x.rs", src), [(3, "xpbd".to_string())]);
    let src = "pub(crate) use crate::joint::Fixed;\npub use crate::{scene::Scene, rod};\n";
    assert_eq!(
        reported("src/xpbd/world/x.rs", src),
        [
            (1, "joint".to_string()),
            (2, "scene".to_string()),
            (2, "rod".to_string())
        ]
    );
}

#[test]
fn checker_reports_doc_links_doc_examples_and_macros() {
    let src = "//! See [`crate::rod::FemRod`].\n/// ```\n/// use lie_xpbd::{joint::Fixed, xpbd::World};\n/// ```\nmacro_rules! m { () => { $crate::scene::X } }\n";
    assert_eq!(
        reported("src/xpbd/check/mod.rs", src),
        [
            (1, "rod".to_string()),
            (3, "joint".to_string()),
            (5, "scene".to_string())
        ]
    );
}

#[test]
fn checker_reports_super_paths_that_leave_the_module() {
    // From crate::xpbd::x, super::super is the crate root.
    assert_eq!(
        reported("src/xpbd/x.rs", "use super::super::rod::Foo;\n"),
        [(1, "rod".to_string())]
    );
    // From crate::xpbd (its mod.rs), one super is the crate root.
    assert_eq!(
        reported("src/xpbd/mod.rs", "use super::joint::Fixed;\n"),
        [(1, "joint".to_string())]
    );
    // Within the module: not an arrow, whatever the name.
    assert!(reported("src/xpbd/world/x.rs", "use super::super::joint::X;\n").is_empty());
}

#[test]
fn checker_reports_siblings_but_not_downward_or_own_layer_paths() {
    assert_eq!(
        reported("src/guide.rs", "//! [`crate::rod::FemRod`]\n"),
        [(1, "rod".to_string())]
    );
    let src = "use crate::rod::banded::Block;\nuse crate::xpbd::World;\nuse crate::lie::{Real, c};\nuse crate::linalg::BandScalar;\nuse crate::nalgebra::Vector3;\nuse super::*;\n";
    assert!(reported("src/rod/fem_rod/x.rs", src).is_empty());
    // Longer identifiers ending in `crate` are not paths; the crate root is unchecked.
    assert!(reported("src/lie/x.rs", "let my_crate::rod = 1;\n").is_empty());
    assert!(reported("src/lib.rs", "pub mod rod;\n//! [`crate::pipeline`]\n").is_empty());
    // The binary may name every layer.
    assert!(reported("src/bin/lie-xpbd.rs", "use lie_xpbd::pipeline::run;\n").is_empty());
}
