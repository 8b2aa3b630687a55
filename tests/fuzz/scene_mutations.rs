//! Structure-aware mutations of every shipped scene, through the parser, the validator,
//! `--set` overrides, `Scene::build` (both scalars, both representations) and a few
//! steps.
//!
//! The corpus is every scene file under `scenes/`, every built-in scene
//! (`scenes::REGISTRY`), the valid test scenes under `tests/scenes/` (they use every
//! joint option) and the fuzzer's seeds under `tests/fuzz/seeds/` (what none of those
//! uses: `joint_solve = "direct"`, a rigid-chain rod with precurvature, drive rates,
//! per-row compliance and damping). A case takes one of them and either edits its TOML tree (1 to 4
//! edits: remove a field, duplicate an entry, change a value's type, set an extreme,
//! non-finite, huge, negative or zero number, a unicode, empty or very long name, nest a
//! value deeply, swap entries, splice in a subtree of another scene, rename a key) or
//! edits its text (truncation at any byte, also mid-character through `Scene::load`;
//! byte flips; deep nesting and dotted keys thousands of levels deep).
//!
//! Every case must end in `Ok` or a typed [`SceneError`] (whose message is not empty),
//! never a panic; a scene that validates must print back as TOML that validates again
//! (`Scene::to_toml`, what a run records as `scene.toml`); a world that steps either
//! stays finite or reports a typed divergence.

use crate::harness::{CaseResult, Outcome};
use lie_xpbd::scene::{Scene, SceneError};
use lie_xpbd::sim::{build_simulation, Rotation, Scalar, Simulation};
use rand::rngs::StdRng;
use rand::RngExt;
use std::path::PathBuf;
use std::sync::OnceLock;
use toml::{Table, Value};

/// At most this many steps are taken per world (a scene may ask for 10¹²).
pub const MAX_FUZZ_STEPS: u64 = 3;
/// A scene whose estimated work per step (bodies, rod nodes and joints × substeps ×
/// iterations) exceeds this is built but not stepped.
pub const MAX_FUZZ_WORK_PER_STEP: usize = 200_000;
/// A scene with more rod nodes than this is validated but not built: its size is
/// within the format's limits (10⁶ elements a rod) but not the fuzzer's budget.
pub const MAX_FUZZ_NODES: usize = 20_000;

/// The corpus: (name, TOML text).
pub fn corpus() -> &'static [(String, String)] {
    static CORPUS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let mut out = Vec::new();
        for dir in ["scenes", "tests/scenes", "tests/fuzz/seeds"] {
            let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
                .expect("scene folder")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect();
            files.sort();
            for p in files {
                let text = std::fs::read_to_string(&p).expect("scene file");
                out.push((
                    format!("{dir}/{}", p.file_name().unwrap().to_string_lossy()),
                    text,
                ));
            }
        }
        for (name, text) in lie_xpbd::scenes::REGISTRY {
            out.push((format!("builtin:{name}"), text.to_string()));
        }
        assert!(out.len() >= 10, "the corpus has the shipped scenes");
        out
    })
}

/// Every key used anywhere in the corpus (for renames and unknown-field edits).
fn corpus_keys() -> &'static [String] {
    static KEYS: OnceLock<Vec<String>> = OnceLock::new();
    KEYS.get_or_init(|| {
        fn walk(v: &Value, out: &mut Vec<String>) {
            match v {
                Value::Table(t) => {
                    for (k, x) in t {
                        out.push(k.clone());
                        walk(x, out);
                    }
                }
                Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        for (_, text) in corpus() {
            walk(
                &Value::Table(text.parse::<Table>().expect("corpus scene is TOML")),
                &mut out,
            );
        }
        out.sort();
        out.dedup();
        out
    })
}

/// A fuzz input: which scene, how it was changed, and how it is run.
pub struct SceneInput {
    /// Corpus entry.
    pub base: String,
    /// The edits made (for the report).
    pub edits: Vec<String>,
    /// The scene text; bytes that may not be UTF-8 (then read through `Scene::load`).
    pub bytes: Vec<u8>,
    /// Read through `Scene::load` from a temporary file rather than `from_toml`.
    pub via_load: bool,
    /// `--set` overrides applied after a successful parse.
    pub overrides: Vec<(String, String)>,
    /// Representations and scalars to build in.
    pub combos: Vec<(Rotation, Scalar)>,
}

impl std::fmt::Debug for SceneInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = String::from_utf8_lossy(&self.bytes);
        let shown: String = if text.len() > 20_000 {
            format!("{}… ({} bytes)", cut(&text, 20_000), text.len())
        } else {
            text.into_owned()
        };
        write!(
            f,
            "scene {} edits {:?} via_load {} overrides {:?} combos {:?}\n--- text ---\n{shown}\n--- end ---",
            self.base, self.edits, self.via_load, self.overrides, self.combos
        )
    }
}

// ---------------------------------------------------------------- random values

const NUMBERS: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2.0,
    1e-300,
    5e-324,
    -5e-324,
    1e-45,
    1e-9,
    1e9,
    1e30,
    1e39,
    1e300,
    f64::MAX,
    f64::MIN,
    f64::MIN_POSITIVE,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    3600.0,
    3600.0001,
    180.0,
    -180.0,
    360.0,
    90.0,
    1e4,
    10001.0,
    1e6,
    1000001.0,
    1e12,
    1.0000001e12,
    4294967296.0,
    9007199254740993.0,
];

const INTEGERS: &[i64] = &[
    0,
    1,
    -1,
    2,
    3,
    4,
    5,
    7,
    100,
    9999,
    10_000,
    10_001,
    1_000_000,
    1_000_001,
    u32::MAX as i64,
    u32::MAX as i64 + 1,
    i64::MAX,
    i64::MIN,
    -(1 << 53),
];

const STRINGS: &[&str] = &[
    "",
    " ",
    "world",
    "World",
    "link0",
    "link1",
    "bar",
    "a",
    "beam",
    "plate",
    "链接🦀",
    "\u{202e}evil",
    "tab\there",
    "new\nline",
    "nul\u{0}byte",
    "a.b",
    "bodies[0]",
    "ǅ̸̢",
    "fem",
    "rigid_chain",
    "clamped",
    "free",
    "block",
    "rows",
    "scalar",
    "direct",
    "gauss_seidel",
    "revolute",
    "fixed",
    "spherical",
    "prismatic",
    "helix",
    "straight",
    "box",
    "sphere",
    "capsule",
    "cylinder",
    "residuals",
    "energy",
    "poses",
    "lambda",
    "velocities",
    "reduced",
    "full",
    "start",
    "end",
];

fn number(rng: &mut StdRng, current: Option<f64>) -> f64 {
    match rng.random_range(0..6) {
        0..=2 => NUMBERS[rng.random_range(0..NUMBERS.len())],
        3 => current.map_or(0.0, |x| -x),
        4 => current.map_or(1.0, |x| x * 10f64.powi(rng.random_range(-12..13))),
        _ => rng.random_range(-10.0..10.0),
    }
}

fn string(rng: &mut StdRng) -> String {
    match rng.random_range(0..10) {
        0 => "x".repeat(rng.random_range(1000..70_000)),
        1 => (0..rng.random_range(1..40))
            .map(|_| char::from_u32(rng.random_range(0..0x11_0000)).unwrap_or('\u{fffd}'))
            .collect(),
        _ => STRINGS[rng.random_range(0..STRINGS.len())].to_string(),
    }
}

/// A random value; `depth` bounds nested arrays and tables.
fn value(rng: &mut StdRng, depth: usize) -> Value {
    match rng.random_range(0..if depth == 0 { 5 } else { 8 }) {
        0 => Value::Float(number(rng, None)),
        1 => Value::Integer(INTEGERS[rng.random_range(0..INTEGERS.len())]),
        2 => Value::String(string(rng)),
        3 => Value::Boolean(rng.random_bool(0.5)),
        4 => Value::Datetime("1979-05-27T07:32:00Z".parse().expect("datetime")),
        5 | 6 => Value::Array(
            (0..rng.random_range(0..5))
                .map(|_| value(rng, depth - 1))
                .collect(),
        ),
        _ => {
            let mut t = Table::new();
            let keys = corpus_keys();
            for _ in 0..rng.random_range(0..4) {
                t.insert(
                    keys[rng.random_range(0..keys.len())].clone(),
                    value(rng, depth - 1),
                );
            }
            Value::Table(t)
        }
    }
}

/// A value of another type than `v`, or of the same type and extreme.
fn retyped(rng: &mut StdRng, v: &Value) -> Value {
    match (v, rng.random_range(0..3)) {
        (Value::Float(x), 0) => Value::Float(number(rng, Some(*x))),
        (Value::Integer(x), 0) => match rng.random_range(0..3) {
            0 => Value::Integer(INTEGERS[rng.random_range(0..INTEGERS.len())]),
            1 => Value::Integer(x.wrapping_neg()),
            _ => Value::Float(*x as f64 + 0.5),
        },
        (Value::String(_), 0) => Value::String(string(rng)),
        (Value::Array(a), 0) if !a.is_empty() => {
            let mut a = a.clone();
            let i = rng.random_range(0..a.len());
            a[i] = Value::Float(number(rng, a[i].as_float()));
            Value::Array(a)
        }
        _ => value(rng, 2),
    }
}

// ---------------------------------------------------------------- tree edits

#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

fn paths(v: &Value, here: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match v {
        Value::Table(t) => {
            for (k, x) in t {
                here.push(Seg::Key(k.clone()));
                out.push(here.clone());
                paths(x, here, out);
                here.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                here.push(Seg::Index(i));
                out.push(here.clone());
                paths(x, here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

fn show(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

fn get_mut<'a>(v: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    let mut cur = v;
    for seg in path {
        cur = match (seg, cur) {
            (Seg::Key(k), Value::Table(t)) => t.get_mut(k)?,
            (Seg::Index(i), Value::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Gives a duplicated table a new `name` (most copies then still validate).
fn rename(v: &mut Value, suffix: usize) {
    if let Value::Table(t) = v {
        if let Some(Value::String(n)) = t.get_mut("name") {
            n.push_str(&format!("_{suffix}"));
        }
    }
}

/// One edit of the tree; returns what was done.
fn edit(rng: &mut StdRng, root: &mut Value) -> String {
    let mut all = Vec::new();
    paths(root, &mut Vec::new(), &mut all);
    if all.is_empty() {
        return "empty".into();
    }
    let path = all[rng.random_range(0..all.len())].clone();
    let (last, parent_path) = path.split_last().expect("non-empty path");
    let at = show(&path);
    let op = rng.random_range(0..14);
    // A donor subtree from another corpus scene, for splices.
    let donor = || -> Value {
        let c = corpus();
        let mut r = crate::harness::case_rng(op as u64, all.len() as u64);
        let t: Table = c[r.random_range(0..c.len())]
            .1
            .parse()
            .expect("corpus TOML");
        Value::Table(t)
    };
    let Some(parent) = get_mut(root, parent_path) else {
        return "no parent".into();
    };
    match (op, parent, last) {
        (0, Value::Table(t), Seg::Key(k)) => {
            t.remove(k);
            format!("remove {at}")
        }
        (0, Value::Array(a), Seg::Index(i)) => {
            a.remove(*i);
            format!("remove {at}")
        }
        (1, Value::Array(a), Seg::Index(i)) => {
            let n = if rng.random_bool(0.8) {
                1
            } else {
                rng.random_range(2..200)
            };
            let rename_copies = rng.random_bool(0.7);
            for j in 0..n {
                let mut copy = a[*i].clone();
                if rename_copies {
                    rename(&mut copy, j);
                }
                a.push(copy);
            }
            format!("duplicate {at} x{n} (renamed: {rename_copies})")
        }
        (1, Value::Table(t), Seg::Key(k)) => {
            // A key twice can only be written as text; duplicate its value into an array.
            let v = t[k].clone();
            t.insert(k.clone(), Value::Array(vec![v.clone(), v]));
            format!("arrayify {at}")
        }
        (2..=4, parent, last) => {
            let slot = match (parent, last) {
                (Value::Table(t), Seg::Key(k)) => t.get_mut(k),
                (Value::Array(a), Seg::Index(i)) => a.get_mut(*i),
                _ => None,
            };
            match slot {
                Some(v) => {
                    let nv = retyped(rng, v);
                    let s = format!("set {at} = {}", short(&nv));
                    *v = nv;
                    s
                }
                None => "no slot".into(),
            }
        }
        (5, Value::Array(a), Seg::Index(i)) if a.len() > 1 => {
            let j = rng.random_range(0..a.len());
            a.swap(*i, j);
            format!("swap {at} with [{j}]")
        }
        (6, parent, last) => {
            let depth = [2, 10, 64, 200, 500][rng.random_range(0..5)];
            let slot = match (parent, last) {
                (Value::Table(t), Seg::Key(k)) => t.get_mut(k),
                (Value::Array(a), Seg::Index(i)) => a.get_mut(*i),
                _ => None,
            };
            if let Some(v) = slot {
                let tables = rng.random_bool(0.5);
                for _ in 0..depth {
                    let inner = std::mem::replace(v, Value::Boolean(false));
                    *v = if tables {
                        let mut t = Table::new();
                        t.insert("x".into(), inner);
                        Value::Table(t)
                    } else {
                        Value::Array(vec![inner])
                    };
                }
            }
            format!("nest {at} {depth} deep")
        }
        (7, Value::Table(t), _) => {
            let keys = corpus_keys();
            let k = keys[rng.random_range(0..keys.len())].clone();
            let v = value(rng, 2);
            let s = format!("add {}.{k} = {}", show(parent_path), short(&v));
            t.insert(k, v);
            s
        }
        (8, Value::Table(t), Seg::Key(k)) => {
            let keys = corpus_keys();
            let nk = keys[rng.random_range(0..keys.len())].clone();
            if let Some(v) = t.remove(k) {
                t.insert(nk.clone(), v);
            }
            format!("rename {at} to {nk}")
        }
        (9, Value::Table(t), _) => {
            // Splice a top-level section of another scene (e.g. rods into the pendulum).
            let Value::Table(d) = donor() else {
                unreachable!()
            };
            let keys: Vec<_> = d.keys().cloned().collect();
            let k = &keys[rng.random_range(0..keys.len())];
            t.insert(k.clone(), d[k].clone());
            format!("splice {k} into {}", show(parent_path))
        }
        (10, Value::Table(t), Seg::Key(k)) if k == "name" || k.starts_with("body") => {
            t.insert(k.clone(), Value::String(string(rng)));
            format!("rename the name at {at}")
        }
        (11, Value::Table(t), Seg::Key(k)) => {
            // Numbers of every leaf of this table set extreme.
            let mut n = 0;
            if let Some(Value::Table(inner)) = t.get_mut(k) {
                for (_, v) in inner.iter_mut() {
                    if v.is_float() || v.is_integer() {
                        *v = Value::Float(number(rng, v.as_float()));
                        n += 1;
                    }
                }
            }
            format!("extreme numbers in {at} ({n})")
        }
        (12, Value::Array(a), _) => {
            let keep = rng.random_range(0..=a.len());
            a.truncate(keep);
            format!("truncate array {} to {keep}", show(parent_path))
        }
        (_, Value::Table(t), Seg::Key(k)) => {
            let v = Value::Float(number(rng, t.get(k).and_then(Value::as_float)));
            let s = format!("set {at} = {}", short(&v));
            t.insert(k.clone(), v);
            s
        }
        (_, Value::Array(a), Seg::Index(i)) => {
            let v = Value::Float(number(rng, a[*i].as_float()));
            let s = format!("set {at} = {}", short(&v));
            a[*i] = v;
            s
        }
        _ => "mismatch".into(),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 80 {
        format!("{}… ({} chars)", cut(&s, 80), s.len())
    } else {
        s
    }
}

/// The longest prefix of `s` of at most `n` bytes that ends on a character boundary.
pub fn cut(s: &str, n: usize) -> &str {
    let mut n = n.min(s.len());
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    &s[..n]
}

// ---------------------------------------------------------------- text edits

fn text_edit(rng: &mut StdRng, bytes: &mut Vec<u8>) -> (String, bool) {
    match rng.random_range(0..6) {
        0 | 1 => {
            let at = rng.random_range(0..=bytes.len());
            bytes.truncate(at);
            (format!("truncate at byte {at}"), false)
        }
        2 => {
            let n = rng.random_range(1..4);
            for _ in 0..n {
                if bytes.is_empty() {
                    break;
                }
                let at = rng.random_range(0..bytes.len());
                bytes[at] = rng.random();
            }
            (format!("flip {n} bytes"), false)
        }
        3 => {
            let depth = [100, 1_000, 10_000, 100_000][rng.random_range(0..4)];
            let open = if rng.random_bool(0.5) { "[" } else { "{ a = " };
            let close = if open == "[" { "]" } else { " }" };
            let s = format!("\ndeep = {}1{}\n", open.repeat(depth), close.repeat(depth));
            bytes.extend_from_slice(s.as_bytes());
            (
                format!("append a value nested {depth} deep ({open})"),
                false,
            )
        }
        4 => {
            let depth = [100, 1_000, 10_000][rng.random_range(0..3)];
            let key = vec!["k"; depth].join(".");
            bytes.extend_from_slice(format!("\n{key} = 1\n").as_bytes());
            (format!("append a dotted key {depth} deep"), false)
        }
        _ => {
            // A line of the scene repeated (duplicate keys, tables).
            let text = String::from_utf8_lossy(bytes).into_owned();
            let lines: Vec<&str> = text.lines().collect();
            if lines.is_empty() {
                return ("nothing to repeat".into(), false);
            }
            let i = rng.random_range(0..lines.len());
            let mut out: Vec<&str> = lines.clone();
            out.insert(i, lines[i]);
            *bytes = out.join("\n").into_bytes();
            (format!("repeat line {}", i + 1), false)
        }
    }
}

// ---------------------------------------------------------------- overrides

fn override_key(rng: &mut StdRng, root: &Value) -> String {
    let mut all = Vec::new();
    paths(root, &mut Vec::new(), &mut all);
    match rng.random_range(0..8) {
        0 => string(rng),
        1 => format!(
            "bodies[{}].mass",
            INTEGERS[rng.random_range(0..INTEGERS.len())]
        ),
        2 => vec!["a"; rng.random_range(1..300)].join("."),
        3 => "run.duration".into(),
        _ if !all.is_empty() => show(&all[rng.random_range(0..all.len())]),
        _ => "solver.dt".into(),
    }
}

fn override_value(rng: &mut StdRng) -> String {
    match rng.random_range(0..6) {
        0 => string(rng),
        1 => "2e-3\nsubsteps = 3".into(),
        2 => format!("{}", INTEGERS[rng.random_range(0..INTEGERS.len())]),
        _ => value(rng, 2).to_string(),
    }
}

// ---------------------------------------------------------------- generate, run

const COMBOS: [(Rotation, Scalar); 4] = [
    (Rotation::Matrix, Scalar::F64),
    (Rotation::Quaternion, Scalar::F64),
    (Rotation::Matrix, Scalar::F32),
    (Rotation::Quaternion, Scalar::F32),
];

/// Draws one input.
pub fn generate(rng: &mut StdRng) -> SceneInput {
    let corpus = corpus();
    let (base, text) = &corpus[rng.random_range(0..corpus.len())];
    let mut edits = Vec::new();
    let mut via_load = rng.random_bool(0.05);
    let mut tree = Value::Table(text.parse::<Table>().expect("corpus TOML"));
    let bytes = if rng.random_bool(0.2) {
        let mut bytes = text.clone().into_bytes();
        let (what, _) = text_edit(rng, &mut bytes);
        edits.push(what);
        if std::str::from_utf8(&bytes).is_err() {
            via_load = true;
        }
        bytes
    } else {
        let n = match rng.random_range(0..10) {
            0 => 0,
            1..=5 => 1,
            6 | 7 => 2,
            _ => rng.random_range(3..5),
        };
        for _ in 0..n {
            edits.push(edit(rng, &mut tree));
        }
        let Value::Table(t) = &tree else {
            unreachable!()
        };
        match toml::to_string(t) {
            Ok(s) => s.into_bytes(),
            Err(e) => {
                edits.push(format!(
                    "(not printable as TOML: {e}; the base text is used)"
                ));
                text.clone().into_bytes()
            }
        }
    };
    let overrides = if rng.random_bool(0.25) {
        (0..rng.random_range(1..4))
            .map(|_| (override_key(rng, &tree), override_value(rng)))
            .collect()
    } else {
        Vec::new()
    };
    let combos = if rng.random_bool(0.05) {
        COMBOS.to_vec()
    } else {
        vec![COMBOS[rng.random_range(0..4)]]
    };
    SceneInput {
        base: base.clone(),
        edits,
        bytes,
        via_load,
        overrides,
        combos,
    }
}

/// A typed scene error must say something.
fn typed(e: &SceneError) -> Result<(), String> {
    let shown = e.to_string();
    if shown.trim().is_empty() || e.message.trim().is_empty() {
        return Err(format!(
            "a SceneError of kind {:?} with an empty message",
            e.kind
        ));
    }
    Ok(())
}

/// Estimated work of one step, and the number of rod nodes.
pub fn work(scene: &Scene) -> (usize, usize) {
    let f = scene.file();
    let nodes: usize = f
        .rods
        .iter()
        .map(|r| r.node_count())
        .fold(0, usize::saturating_add);
    let items = f
        .bodies
        .len()
        .saturating_add(f.joints.len())
        .saturating_add(f.prescribed.len())
        .saturating_add(nodes);
    let sweeps = f.solver.substeps.saturating_mul(f.solver.iterations);
    (items.saturating_mul(sweeps), nodes)
}

/// Parses, overrides and checks the input's scene.
pub fn parse(input: &SceneInput) -> Result<Result<Scene, Outcome>, String> {
    let scene = if input.via_load {
        let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
        let path = dir.path().join("fuzz.toml");
        std::fs::write(&path, &input.bytes).map_err(|e| format!("write: {e}"))?;
        Scene::load(&path)
    } else {
        let text = std::str::from_utf8(&input.bytes).map_err(|_| "generated text is not UTF-8")?;
        Scene::from_toml(text, "fuzz.toml")
    };
    let mut scene = match scene {
        Ok(s) => s,
        Err(e) => {
            typed(&e)?;
            return Ok(Err(Outcome::Rejected("parse/validate".into())));
        }
    };
    for (k, v) in &input.overrides {
        let before = scene.clone();
        if let Err(e) = scene.set(k, v) {
            typed(&e)?;
            if scene != before {
                return Err(format!("a failed override {k}={v:?} changed the scene"));
            }
        }
    }
    // What a run records as scene.toml must read back.
    let printed = scene.to_toml();
    if let Err(e) = Scene::from_toml(&printed, "printed.toml") {
        return Err(format!(
            "the validated scene printed as TOML does not read back: {e}\n--- printed ---\n{printed}"
        ));
    }
    if let Err(e) = scene.steps() {
        typed(&e)?;
        return Ok(Err(Outcome::Rejected("steps".into())));
    }
    Ok(Ok(scene))
}

/// Steps a built simulation up to `steps` times: Ok(true) if every step kept the state
/// finite, Ok(false) after a typed divergence.
pub fn step(sim: &mut dyn Simulation, steps: u64) -> Result<bool, String> {
    for _ in 0..steps {
        match sim.step() {
            Ok(()) => {
                for i in 0..sim.body_names().len() {
                    let finite = sim.position(i).iter().all(|x| x.is_finite())
                        && sim.velocity(i).iter().all(|x| x.is_finite())
                        && sim.angular_velocity(i).iter().all(|x| x.is_finite())
                        && sim.rotation_matrix(i).iter().all(|x| x.is_finite());
                    if !finite {
                        return Err(format!(
                            "step {} returned Ok with body {i} ({}) not finite",
                            sim.steps(),
                            sim.body_names()[i]
                        ));
                    }
                }
            }
            Err(e) => {
                if e.to_string().trim().is_empty() {
                    return Err("a step error with an empty message".into());
                }
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// Runs one input.
pub fn execute(input: &SceneInput) -> CaseResult {
    let scene = match parse(input)? {
        Ok(s) => s,
        Err(outcome) => return Ok(outcome),
    };
    let (work, nodes) = work(&scene);
    if nodes > MAX_FUZZ_NODES {
        return Ok(Outcome::Large(format!("{nodes} rod nodes")));
    }
    let steps = scene
        .steps()
        .map_err(|e| e.to_string())?
        .min(MAX_FUZZ_STEPS);
    let mut outcome = Outcome::Built;
    for &(rotation, scalar) in &input.combos {
        let mut sim = match build_simulation(&scene, rotation, scalar) {
            Ok(s) => s,
            Err(e) => {
                typed(&e)?;
                return Ok(Outcome::Rejected("build".into()));
            }
        };
        if work > MAX_FUZZ_WORK_PER_STEP {
            continue;
        }
        outcome = if step(sim.as_mut(), steps)? {
            Outcome::Stepped
        } else {
            Outcome::Diverged
        };
    }
    Ok(outcome)
}
