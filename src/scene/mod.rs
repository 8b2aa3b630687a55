//! Scenes as data: the versioned TOML scene format, its validation, and one generic
//! builder from a scene to a [`crate::xpbd::World`] for any scalar and rotation
//! representation.
//!
//! A scene file (format in [the `format` module](self::format)) names its bodies, joints, solver settings and
//! what to record. [`Scene::from_toml`] / [`Scene::load`] read and check it;
//! [`Scene::set`] applies `key=value` overrides (what the program's `--set` does);
//! [`Scene::build`] makes the world.
//!
//! ```
//! use lie_xpbd::lie::{SO3Matrix, UnitQuaternion};
//! use lie_xpbd::scene::Scene;
//!
//! let text = r#"
//! version = 1
//! [run]
//! duration = 0.5
//! [[bodies]]
//! name = "bar"
//! shape = { type = "box", size = [0.1, 1.0, 0.1] }
//! density = 1000.0
//! position = [0.0, -0.5, 0.0]
//! [[joints]]
//! type = "spherical"
//! body1 = "world"
//! body2 = "bar"
//! frame2 = { position = [0.0, 0.5, 0.0] }
//! "#;
//! let mut scene = Scene::from_toml(text, "bar.toml")?;
//! scene.set("solver.substeps", "4")?;
//! let mut built = scene.build::<f32, UnitQuaternion<f32>>()?;
//! for _ in 0..scene.steps()? {
//!     built.world.step().unwrap();
//! }
//! assert_eq!(built.body_names, ["bar"]);
//! # Ok::<(), lie_xpbd::scene::SceneError>(())
//! ```
//!
//! # Errors
//! Every mistake is a [`SceneError`] naming the file, the line and column, the field
//! path and what is allowed; reading a scene never panics.

pub mod actuation;
pub mod build;
pub mod error;
pub mod format;
mod normed;
mod overrides;
pub mod path;
pub mod prescribed;
pub mod rod;
mod rod_build;
mod validate;

pub use build::{BuiltScene, JointInfo};
pub use error::{SceneError, SceneErrorKind};
pub use format::{
    BodySpec, Channel, ComplianceSpec, DampingSpec, F32ArithmeticSpec, FrameSpec, JointSolveSpec,
    JointSpec, JointType, ModeSpec, OrientationSpec, RunSpec, SceneFile, ShapeSpec, SolverSpec,
    SCENE_VERSION, WORLD,
};
pub use path::{FieldPath, Segment};
pub use rod_build::BuiltRod;

use std::path::Path;

/// Largest number of steps a scene may ask for (10¹²): beyond it the step count no
/// longer fits the exact-time bookkeeping, and the run would take weeks.
pub const MAX_STEPS: u64 = 1_000_000_000_000;

/// Largest scene file [`Scene::load`] reads: 16 MiB (16 777 216 bytes). The shipped
/// scenes are a few kilobytes.
pub const MAX_SCENE_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Most projection sweeps one step may make: `solver.substeps` × `solver.iterations`
/// must not exceed 10⁴ (so neither alone may).
///
/// A run checks for Ctrl-C (and SIGTERM) between steps only, and a step makes
/// substeps × iterations sweeps over the scene's constraints. One sweep took about
/// 0.01 ms for the triple pendulum, 0.02 ms for the 3-RPS robot, 0.15 ms for the
/// 5-element cantilevers and 0.6 ms for the 15-coil spring (optimised build, one core),
/// so a step at the bound takes from 0.1 s to about 6 s for the shipped scenes, while
/// `substeps = 1e7`, accepted before, made one step of the cantilever last about half an
/// hour, with only a second Ctrl-C (which abandons the outputs) to stop it. More
/// substeps than this are better had as a smaller `solver.dt`: the same work, in steps
/// between which an interrupt is honoured; and iterations stop paying off long before
/// (the paper's studies use at most 100, Figure 11). A much larger scene can still make
/// a long step within the bound: its interrupt then waits for the step to end.
pub const MAX_SWEEPS_PER_STEP: usize = 10_000;

/// Most bodies a scene may build: its `[[bodies]]` and the nodes of all its rods
/// together (10⁵). A rod node costs about 5 KB of memory (the band of its rod's
/// solve, its element's Gauss points, its body) and a step's time in proportion, so the
/// bound keeps a world within half a gigabyte and a step of the largest world within
/// seconds; without it, a scene file of a few lines could ask for hundreds of rods of
/// 10⁵ elements and exhaust the machine's memory while building. The paper's studies
/// use at most a few hundred nodes.
pub const MAX_SCENE_BODIES: usize = 100_000;

/// A checked scene: the parsed file, where it came from, and the overrides applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    file: SceneFile,
    origin: String,
    source: Option<String>,
    table: toml::Table,
    overrides: Vec<(String, String)>,
    // Program options standing for the override of a key, as (key, option):
    // `--seconds` for `run.duration` ([`Scene::name_option`]).
    options: Vec<(String, String)>,
}

impl Scene {
    /// Reads and checks the scene file at `path`, of at most [`MAX_SCENE_FILE_BYTES`]
    /// (16 MiB = 16 777 216 bytes): no more is read, so that a huge file or an endless
    /// one (`/dev/zero`) is an error rather than a run out of memory.
    ///
    /// # Errors
    /// [`SceneErrorKind::Io`] if it cannot be read, is not UTF-8 or is larger than
    /// [`MAX_SCENE_FILE_BYTES`]; otherwise as [`Scene::from_toml`].
    pub fn load(path: impl AsRef<Path>) -> Result<Self, SceneError> {
        use std::io::Read;
        let path = path.as_ref();
        let origin = path.display().to_string();
        let io_error = |message: String| {
            let mut err = SceneError::new(SceneErrorKind::Io, FieldPath::root(), message);
            err.origin = origin.clone();
            err
        };
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_SCENE_FILE_BYTES + 1).read_to_end(&mut bytes))
            .map_err(|e| io_error(format!("cannot read the scene file: {e}")))?;
        if bytes.len() as u64 > MAX_SCENE_FILE_BYTES {
            return Err(io_error(format!(
                "the scene file is larger than {MAX_SCENE_FILE_BYTES} bytes ({} MiB), the most a scene file may have",
                MAX_SCENE_FILE_BYTES >> 20
            )));
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            io_error(format!(
                "cannot read the scene file: it is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ))
        })?;
        Self::from_toml(&text, origin)
    }

    /// Parses and checks a scene from TOML text; `origin` names it in errors (a path,
    /// or e.g. `<built-in pendulum>`).
    ///
    /// # Errors
    /// [`SceneError`] of kind `Syntax` (not TOML), `Version` (missing or unsupported
    /// `version`), `Schema` (wrong type, unknown or missing field) or `Invalid` (a value
    /// out of range or inconsistent), with line, column and field path.
    pub fn from_toml(text: &str, origin: impl Into<String>) -> Result<Self, SceneError> {
        let origin = origin.into();
        let with_origin = |mut e: SceneError| {
            e.origin = origin.clone();
            e
        };
        let table: toml::Table = match text.parse::<toml::Table>() {
            Ok(t) => t,
            Err(e) => {
                let mut message = first_line(e.message());
                // toml says only "duplicate key": name it from the span (the key).
                if let Some(key) = e
                    .span()
                    .filter(|_| message.trim() == "duplicate key")
                    .and_then(|span| text.get(span))
                    .and_then(|s| s.split('=').next())
                    .map(str::trim)
                    .filter(|k| !k.is_empty())
                {
                    message = format!("duplicate key `{key}`");
                }
                let mut err = SceneError::new(SceneErrorKind::Syntax, FieldPath::root(), message);
                if let Some(span) = e.span() {
                    err = err.at_offset(text, span.start);
                }
                return Err(with_origin(err));
            }
        };
        let mut scene = Self {
            file: SceneFile {
                version: SCENE_VERSION,
                name: None,
                description: None,
                solver: SolverSpec::default(),
                run: RunSpec::default(),
                bodies: Vec::new(),
                rods: Vec::new(),
                joints: Vec::new(),
                prescribed: Vec::new(),
            },
            origin,
            source: Some(text.to_string()),
            table,
            overrides: Vec::new(),
            options: Vec::new(),
        };
        scene.reparse()?;
        Ok(scene)
    }

    /// A scene from an already-built [`SceneFile`] (e.g. made by a scene module).
    ///
    /// # Errors
    /// As [`Scene::from_toml`], without line numbers.
    pub fn from_file(file: SceneFile, origin: impl Into<String>) -> Result<Self, SceneError> {
        let origin = origin.into();
        let table = toml::Table::try_from(&file).map_err(|e| {
            let mut err = SceneError::new(SceneErrorKind::Schema, FieldPath::root(), e.to_string());
            err.origin = origin.clone();
            err
        })?;
        let mut scene = Self {
            file,
            origin,
            source: None,
            table,
            overrides: Vec::new(),
            options: Vec::new(),
        };
        scene.reparse()?;
        Ok(scene)
    }

    /// Overrides one field, as `--set key=value` does: `key` is a dotted path
    /// (`solver.dt`, `run.duration`, `bodies[0].mass`, or a body or joint by name,
    /// `bodies.link1.density`), `value` a single TOML value (`1e-3`, `"rows"`,
    /// `[0, -9.81, 0]`; a bare word is taken as a string). The scene is checked again
    /// afterwards.
    ///
    /// # Errors
    /// [`SceneErrorKind::Override`] if the key does not lead to a field that can be
    /// set, or if `value` is not a single TOML value (it has a line break, or more
    /// after the value: `2e-3\nsubsteps=3`); otherwise as [`Scene::from_toml`] for the
    /// resulting scene (the error says which override made it invalid). On error the
    /// scene is unchanged.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), SceneError> {
        self.set_all(&[(key.to_string(), value.to_string())])
    }

    /// Applies several overrides together and checks the scene once, after the last:
    /// so `run.duration=1e-6` with `solver.dt=1e-7` is valid in either order.
    ///
    /// # Errors
    /// [`SceneErrorKind::Override`] if two of `overrides` set the same field (by the
    /// same key, or by index and by name: `bodies[0].mass` and `bodies.link0.mass`):
    /// which one should win is ambiguous, so neither is applied. Otherwise as
    /// [`Scene::set`]; on error the scene is unchanged.
    pub fn set_all(&mut self, overrides: &[(String, String)]) -> Result<(), SceneError> {
        for (j, (k2, v2)) in overrides.iter().enumerate() {
            let p2 = overrides::override_path(&self.file, k2);
            if let Some((k1, v1)) = overrides[..j].iter().find(|(k1, _)| {
                k1 == k2 || (p2.is_some() && overrides::override_path(&self.file, k1) == p2)
            }) {
                let mut e = SceneError::new(
                    SceneErrorKind::Override,
                    FieldPath::root(),
                    format!(
                        "{k2} is set twice ({} and --set {k2}={v2}); give each key once",
                        self.describe_override(k1, v1)
                    ),
                );
                e.origin = self.origin.clone();
                return Err(e);
            }
        }
        let before = (
            self.table.clone(),
            self.file.clone(),
            self.overrides.clone(),
        );
        let result = overrides
            .iter()
            .try_for_each(|(key, value)| {
                overrides::apply_override(&mut self.table, key, value)?;
                self.overrides.push((key.clone(), value.clone()));
                Ok(())
            })
            .and_then(|_| self.reparse());
        if let Err(mut e) = result {
            if e.origin.is_empty() {
                e.origin = self.origin.clone();
            }
            (self.table, self.file, self.overrides) = before;
            return Err(e);
        }
        Ok(())
    }

    /// Names the program option that stands for the override of `key`, e.g. `--seconds`
    /// for `run.duration`: errors and a run's warnings then show that override as
    /// `--seconds VALUE`, as the user typed it, not as `--set run.duration=VALUE`
    /// ([`Scene::describe_override`]). Give the option's override first among the
    /// overrides of `key` (any later one is an error: a key is set once).
    pub fn name_option(&mut self, key: &str, option: &str) {
        self.options.retain(|(k, _)| k != key);
        self.options.push((key.to_string(), option.to_string()));
    }

    /// How the user gave the override `key=value`: `--set key=value`, or `OPTION value`
    /// for a key named with [`Scene::name_option`].
    pub fn describe_override(&self, key: &str, value: &str) -> String {
        match self.options.iter().find(|(k, _)| k == key) {
            Some((_, option)) => format!("{option} {value}"),
            None => format!("--set {key}={value}"),
        }
    }

    /// Applies `key=value` (one `--set` argument).
    ///
    /// # Errors
    /// [`SceneErrorKind::Override`] if there is no `=`; otherwise as [`Scene::set`].
    pub fn set_assignment(&mut self, assignment: &str) -> Result<(), SceneError> {
        let Some((key, value)) = assignment.split_once('=') else {
            let mut e = SceneError::new(
                SceneErrorKind::Override,
                FieldPath::root(),
                format!("--set '{assignment}' is not of the form key=value (e.g. solver.dt=5e-4)"),
            );
            e.origin = self.origin.clone();
            return Err(e);
        };
        self.set(key.trim(), value.trim())
    }

    fn reparse(&mut self) -> Result<(), SceneError> {
        let result = validate::check_version(&self.table)
            .and_then(|_| {
                serde_path_to_error::deserialize::<_, SceneFile>(self.table.clone()).map_err(|e| {
                    SceneError::new(
                        SceneErrorKind::Schema,
                        FieldPath::from_serde(e.path()),
                        first_line(&e.inner().to_string()),
                    )
                })
            })
            .and_then(|file| {
                validate::check(&file)?;
                Ok(file)
            });
        match result {
            Ok(file) => {
                self.file = file;
                Ok(())
            }
            Err(e) => Err(self.locate(e)),
        }
    }

    /// Adds origin, line and column (from the field path) and the override that set
    /// the field, if any.
    pub(crate) fn locate(&self, mut e: SceneError) -> SceneError {
        e.origin = self.origin.clone();
        let path = e.path.clone();
        if let Some((k, v)) = self.overrides.iter().rev().find(|(k, _)| {
            overrides::override_path(&self.file, k)
                .is_some_and(|p| path.starts_with(&p) || p.starts_with(&path))
        }) {
            e.message = format!("{} (set by {})", e.message, self.describe_override(k, v));
            return e;
        }
        if e.line.is_none() {
            if let Some(src) = &self.source {
                if let Some(off) = path::locate(src, &path) {
                    e = e.at_offset(src, off);
                }
            }
        }
        e
    }

    /// The checked contents.
    pub fn file(&self) -> &SceneFile {
        &self.file
    }

    /// Where the scene came from (a path or a description).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The scene's name: `name` from the file, else the file stem of its origin.
    pub fn name(&self) -> String {
        self.file.name.clone().unwrap_or_else(|| {
            Path::new(&self.origin)
                .file_stem()
                .map_or_else(|| "scene".to_string(), |s| s.to_string_lossy().into_owned())
        })
    }

    /// The overrides applied so far, as (key, value).
    pub fn overrides(&self) -> &[(String, String)] {
        &self.overrides
    }

    /// The scene as TOML, overrides included (what a run records next to its outputs).
    pub fn to_toml(&self) -> String {
        toml::to_string(&self.file).unwrap_or_default()
    }

    /// Number of steps: ⌈duration/dt⌉, ignoring 1e-9 relative round-off
    /// (`duration = 0.0105, dt = 0.001` gives 11).
    ///
    /// # Errors
    /// [`SceneErrorKind::Invalid`] at `run.duration` if the count exceeds
    /// [`MAX_STEPS`].
    pub fn steps(&self) -> Result<u64, SceneError> {
        let n = self.file.run.duration / self.file.solver.dt;
        // Checked before the round-off correction: inf − inf would be NaN.
        let n = if n.is_finite() {
            (n - 1e-9 * n).ceil().max(1.0)
        } else {
            f64::INFINITY
        };
        if n.is_nan() || n > MAX_STEPS as f64 {
            let e = SceneError::new(
                SceneErrorKind::Invalid,
                FieldPath::root().key("run").key("duration"),
                format!(
                    "duration {} s at dt = {} s is {n:.3e} steps; at most {MAX_STEPS:.0e} are allowed (shorten run.duration or raise solver.dt)",
                    error::num(self.file.run.duration),
                    error::num(self.file.solver.dt)
                ),
            );
            return Err(self.locate(e));
        }
        Ok(n as u64)
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_string()
}
