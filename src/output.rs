//! Writing simulation outputs: per-step tables recorded in memory, then CSV files and a
//! JSON summary, each written whole or not at all.
//!
//! # File formats
//! * `residuals.csv`: columns [`RESIDUAL_COLUMNS`] = `t,primal_residual,
//!   constraint_residual,energy`: simulated time (s) at the end of a step, the primal
//!   residual (51) and the constraint residual (52) of that step (see
//!   [`crate::xpbd::Residuals`] for their units), and the total mechanical energy
//!   kinetic + gravitational potential (J, [`crate::xpbd::World::energy`]).
//! * `states.csv`: columns [`state_columns`] = `t`, then for each body i (in the order
//!   of [`crate::xpbd::World::bodies`]) `b{i}_px,b{i}_py,b{i}_pz` (centre of mass, m,
//!   world frame) and `b{i}_rx,b{i}_ry,b{i}_rz` (rotation vector Log(R) of the
//!   body → world orientation, rad, |θ| ≤ π).
//! * `summary.json`: a [`RunSummary`].
//!
//! Numbers are written in the shortest form that reads back to the same value at the
//! run's precision ([`Precision`]): an `f32` run writes `0.1`, not `0.10000000149…`.
//!
//! # Whole or not at all
//! [`OutputDir`] stages every file as a hidden temporary file in the destination
//! directory (written, flushed and synced), and only [`OutputDir::commit`] renames them
//! to their final names. Dropping an `OutputDir` before the commit deletes whatever was
//! staged, so an error midway leaves no partial file behind. (A rename within one
//! directory is atomic; a crash between two renames can leave some new files next to
//! older ones, never a truncated file.)
//!
//! # Example
//! ```
//! use lie_xpbd::lie::{LieGroup, SO3Matrix};
//! use lie_xpbd::output::{OutputDir, Recorder};
//! use lie_xpbd::xpbd::{Body, SolverOptions, World};
//! use nalgebra::Vector3;
//!
//! let mut world = World::<f64, SO3Matrix<f64>>::new(SolverOptions::default()).unwrap();
//! let ball = Body::dynamic(1.0, Vector3::repeat(0.1), Vector3::zeros(), SO3Matrix::identity());
//! world.add_body(ball.unwrap()).unwrap();
//! let mut rec = Recorder::new(&world, 10).unwrap();
//! for _ in 0..100 {
//!     rec.step(&mut world).unwrap(); // one time step; a row every 10 steps
//! }
//! assert_eq!(rec.residuals().len(), 10);
//!
//! let dir = tempfile::tempdir().unwrap();
//! let mut out = OutputDir::create(dir.path()).unwrap();
//! out.stage_csv("residuals.csv", rec.residuals()).unwrap();
//! out.stage_csv("states.csv", rec.states()).unwrap();
//! let written = out.commit().unwrap();
//! assert!(written[1].ends_with("states.csv"));
//! ```

use crate::lie::{LieGroup, Real};
use crate::xpbd::{Body, World, XpbdError};
use serde::Serialize;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tempfile::NamedTempFile;
use thiserror::Error;

/// Everything that can go wrong while recording or writing outputs.
#[derive(Debug, Error)]
pub enum OutputError {
    /// The output path exists but is a file (or something else), not a directory.
    #[error("'{}' exists and is not a directory", path.display())]
    NotADirectory {
        /// The path given.
        path: PathBuf,
    },
    /// The output directory could not be created.
    #[error("cannot create directory '{}': {source}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// No file can be created in the output directory (e.g. no permission).
    #[error("cannot create files in directory '{}': {source}", path.display())]
    NotWritable {
        /// The directory.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// A file in the output directory could not be created, written or renamed.
    #[error("cannot write '{}': {source}", path.display())]
    Write {
        /// The file (or directory, for the write probe).
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// The CSV writer failed.
    #[error("cannot write CSV '{}': {source}", path.display())]
    Csv {
        /// The destination file.
        path: PathBuf,
        /// The writer's error.
        source: csv::Error,
    },
    /// A value could not be serialised to JSON.
    #[error("cannot write JSON '{}': {source}", path.display())]
    Json {
        /// The destination file.
        path: PathBuf,
        /// The serialiser's error.
        source: serde_json::Error,
    },
    /// A file name given to [`OutputDir`] is not a plain name (empty, `.`/`..`, or
    /// contains a path separator).
    #[error("'{name}' is not a plain file name")]
    BadFileName {
        /// The name given.
        name: String,
    },
    /// A row does not have one value per column.
    #[error("row has {got} values but the table has {expected} columns")]
    RowWidth {
        /// Number of columns.
        expected: usize,
        /// Number of values given.
        got: usize,
    },
    /// [`Recorder::new`] was asked to record every 0th step.
    #[error("the recording interval must be at least 1 step")]
    ZeroInterval,
}

/// Precision at which numbers are printed: that of the simulation's scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// Values are `f32` (stored widened to `f64`, printed as the shortest `f32`).
    F32,
    /// Values are `f64`.
    F64,
}

impl Precision {
    /// The precision of scalar type `T`.
    pub fn of<T: Real>() -> Self {
        if std::mem::size_of::<T>() == std::mem::size_of::<f32>() {
            Precision::F32
        } else {
            Precision::F64
        }
    }
}

/// A table of numbers with named columns, filled row by row in memory and written as
/// CSV (a header line, then one line per row).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    columns: Vec<String>,
    precision: Precision,
    data: Vec<f64>,
}

impl Table {
    /// An empty table with the given column names.
    pub fn new<I, S>(columns: I, precision: Precision) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            columns: columns.into_iter().map(Into::into).collect(),
            precision,
            data: Vec::new(),
        }
    }

    /// Column names.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Precision the values are printed at.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.columns.len()).unwrap_or(0)
    }

    /// True if the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Reserves room for `rows` more rows.
    pub fn reserve(&mut self, rows: usize) {
        self.data.reserve(rows.saturating_mul(self.columns.len()));
    }

    /// Appends a row.
    ///
    /// # Errors
    /// [`OutputError::RowWidth`] unless `row` has one value per column.
    pub fn push_row(&mut self, row: &[f64]) -> Result<(), OutputError> {
        if row.len() != self.columns.len() {
            return Err(OutputError::RowWidth {
                expected: self.columns.len(),
                got: row.len(),
            });
        }
        self.data.extend_from_slice(row);
        Ok(())
    }

    /// Row `i`, or `None` past the end.
    pub fn row(&self, i: usize) -> Option<&[f64]> {
        let w = self.columns.len();
        self.data.get(i.checked_mul(w)?..(i + 1).checked_mul(w)?)
    }

    /// All rows in order.
    pub fn rows(&self) -> impl Iterator<Item = &[f64]> + '_ {
        self.data.chunks(self.columns.len().max(1))
    }

    /// The values of the column named `name`, or `None` if there is no such column.
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let k = self.columns.iter().position(|c| c == name)?;
        Some(self.rows().map(|r| r[k]).collect())
    }

    /// Writes the header and all rows as CSV to `writer`.
    ///
    /// # Errors
    /// The CSV writer's error (e.g. an I/O failure).
    pub fn write_csv<W: Write>(&self, writer: W) -> Result<(), csv::Error> {
        let mut w = csv::Writer::from_writer(writer);
        w.write_record(&self.columns)?;
        match self.precision {
            Precision::F64 => {
                for row in self.rows() {
                    w.serialize(row)?;
                }
            }
            Precision::F32 => {
                let mut narrow = Vec::with_capacity(self.columns.len());
                for row in self.rows() {
                    narrow.clear();
                    // Lossless: the values were f32 before they were widened.
                    narrow.extend(row.iter().map(|&x| x as f32));
                    w.serialize(&narrow)?;
                }
            }
        }
        w.flush()?;
        Ok(())
    }
}

/// Columns of `residuals.csv`.
pub const RESIDUAL_COLUMNS: [&str; 4] = ["t", "primal_residual", "constraint_residual", "energy"];

/// Columns of `states.csv` for `bodies` bodies: `t`, then per body i
/// `b{i}_px,b{i}_py,b{i}_pz,b{i}_rx,b{i}_ry,b{i}_rz`.
pub fn state_columns(bodies: usize) -> Vec<String> {
    let mut cols = Vec::with_capacity(1 + 6 * bodies);
    cols.push("t".to_string());
    for i in 0..bodies {
        for q in ["px", "py", "pz", "rx", "ry", "rz"] {
            cols.push(format!("b{i}_{q}"));
        }
    }
    cols
}

/// Appends `t` and each body's position (m, world) and rotation vector Log(R) (rad) to
/// `row`, in the order of [`state_columns`].
pub fn state_row<T: Real, G: LieGroup<T>>(t: T, bodies: &[Body<T, G>], row: &mut Vec<f64>) {
    row.push(t.to_f64());
    for b in bodies {
        let r = b.orientation.log();
        row.extend(b.position.iter().chain(r.iter()).map(|&x| x.to_f64()));
    }
}

/// Median of `values` (mean of the two middle values for an even count), `None` if
/// empty. NaN sorts above every number (IEEE total order).
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    let mid = v.len() / 2;
    let (lower, &mut upper, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    if !values.len().is_multiple_of(2) {
        return Some(upper);
    }
    let below = lower.iter().copied().max_by(f64::total_cmp)?;
    Some(below + (upper - below) / 2.0)
}

/// Largest of `values` in IEEE total order (so NaN wins), `None` if empty.
pub fn max(values: &[f64]) -> Option<f64> {
    values.iter().copied().max_by(f64::total_cmp)
}

/// Steps a [`World`] and records, every `every`-th step, a row of `residuals.csv` and of
/// `states.csv`; it also keeps both residuals of every step (for medians) and the wall
/// time spent inside [`World::step`].
#[derive(Debug, Clone)]
pub struct Recorder {
    every: u64,
    bodies: usize,
    steps: u64,
    residuals: Table,
    states: Table,
    primal: Vec<f64>,
    constraint: Vec<f64>,
    step_time: Duration,
}

impl Recorder {
    /// A recorder for `world` (its current bodies, at its precision), writing a row
    /// after every `every`-th step (1 = every step). Bodies added to the world later are
    /// not recorded.
    ///
    /// # Errors
    /// [`OutputError::ZeroInterval`] if `every` is 0.
    pub fn new<T: Real, G: LieGroup<T>>(
        world: &World<T, G>,
        every: u64,
    ) -> Result<Self, OutputError> {
        if every == 0 {
            return Err(OutputError::ZeroInterval);
        }
        let p = Precision::of::<T>();
        let bodies = world.bodies().len();
        Ok(Self {
            every,
            bodies,
            steps: 0,
            residuals: Table::new(RESIDUAL_COLUMNS, p),
            states: Table::new(state_columns(bodies), p),
            primal: Vec::new(),
            constraint: Vec::new(),
            step_time: Duration::ZERO,
        })
    }

    /// Reserves memory for a run of `steps` steps.
    pub fn reserve(&mut self, steps: u64) {
        let steps = usize::try_from(steps).unwrap_or(usize::MAX);
        let rows = steps / usize::try_from(self.every).unwrap_or(usize::MAX);
        self.residuals.reserve(rows);
        self.states.reserve(rows);
        self.primal.reserve(steps);
        self.constraint.reserve(steps);
    }

    /// Advances `world` by one time step and records it. Only the call to
    /// [`World::step`] counts towards [`Recorder::step_time`]; the residuals
    /// ([`World::residuals`]), the energy and the rows are computed afterwards.
    ///
    /// # Errors
    /// The error of [`World::step`] (e.g. [`XpbdError::Diverged`]); the failed step is
    /// then not recorded, and earlier rows stay.
    pub fn step<T: Real, G: LieGroup<T>>(
        &mut self,
        world: &mut World<T, G>,
    ) -> Result<(), XpbdError> {
        let start = Instant::now();
        let result = world.step();
        self.step_time += start.elapsed();
        result?;
        self.steps += 1;
        let r = world.residuals();
        let (primal, constraint) = (r.primal.to_f64(), r.constraint.to_f64());
        self.primal.push(primal);
        self.constraint.push(constraint);
        if self.steps.is_multiple_of(self.every) {
            let t = world.time();
            let energy = world.energy().to_f64();
            self.residuals
                .data
                .extend_from_slice(&[t.to_f64(), primal, constraint, energy]);
            // Exactly the bodies the table has columns for (bodies cannot be removed).
            state_row(t, &world.bodies()[..self.bodies], &mut self.states.data);
        }
        Ok(())
    }

    /// Recording interval, steps.
    pub fn every(&self) -> u64 {
        self.every
    }

    /// Steps recorded so far (successful calls to [`Recorder::step`]).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The `residuals.csv` table.
    pub fn residuals(&self) -> &Table {
        &self.residuals
    }

    /// The `states.csv` table.
    pub fn states(&self) -> &Table {
        &self.states
    }

    /// Primal residual (51) after each step, every step.
    pub fn primal_residuals(&self) -> &[f64] {
        &self.primal
    }

    /// Constraint residual (52) after each step, every step.
    pub fn constraint_residuals(&self) -> &[f64] {
        &self.constraint
    }

    /// Wall time spent inside [`World::step`] so far.
    pub fn step_time(&self) -> Duration {
        self.step_time
    }
}

/// Whether a run went to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// All steps were taken.
    Completed,
    /// A step produced a non-finite state; the outputs hold the steps before it.
    Diverged,
}

/// The contents of `summary.json`: the run's settings `S`, how it ended, its timing and
/// its residual statistics. Non-finite numbers are written as `null`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary<S: Serialize> {
    /// Scene name, e.g. `"pendulum"`.
    pub scene: String,
    /// Version of this crate.
    pub version: String,
    /// The settings of the run, as given (after defaults).
    pub settings: S,
    /// How the run ended.
    pub status: RunStatus,
    /// The error that ended the run early, if any.
    pub error: Option<String>,
    /// Time steps taken (successfully).
    pub steps: u64,
    /// Substeps taken: `steps × substeps per step`.
    pub substeps: u64,
    /// Simulated time reached, s.
    pub simulated_time_s: f64,
    /// Rows in each CSV file.
    pub rows: usize,
    /// Wall time of the simulation loop (stepping, residuals, recording in memory; no
    /// file I/O), s.
    pub wall_time_s: f64,
    /// Wall time spent inside `World::step` alone, s.
    pub step_time_s: f64,
    /// `step_time_s` per substep, µs (the measure of the paper's Table 1).
    pub time_per_substep_us: f64,
    /// Median over all steps of the primal residual (51).
    pub median_primal_residual: Option<f64>,
    /// Median over all steps of the constraint residual (52).
    pub median_constraint_residual: Option<f64>,
    /// Largest primal residual over all steps.
    pub max_primal_residual: Option<f64>,
    /// Largest constraint residual over all steps.
    pub max_constraint_residual: Option<f64>,
    /// Total mechanical energy before the first step, J.
    pub energy_initial_j: f64,
    /// Total mechanical energy at the end of the run (after a divergence: in the last
    /// row written), J.
    pub energy_final_j: f64,
    /// Names of the files written, relative to the output directory.
    pub files: Vec<String>,
}

/// An output directory whose files are staged as hidden temporary files and appear
/// under their final names only on [`OutputDir::commit`].
#[derive(Debug)]
pub struct OutputDir {
    dir: PathBuf,
    staged: Vec<(NamedTempFile, PathBuf)>,
}

impl OutputDir {
    /// Creates `dir` (and its parents) if needed, and checks that files can be created
    /// in it.
    ///
    /// # Errors
    /// [`OutputError::NotADirectory`] if the path exists and is not a directory,
    /// [`OutputError::CreateDir`] if it cannot be created, [`OutputError::NotWritable`]
    /// if a file cannot be created in it (e.g. no permission).
    pub fn create(dir: impl AsRef<Path>) -> Result<Self, OutputError> {
        let dir = dir.as_ref().to_path_buf();
        if dir.exists() && !dir.is_dir() {
            return Err(OutputError::NotADirectory { path: dir });
        }
        fs::create_dir_all(&dir).map_err(|source| {
            // A parent that is a file reports the path as "not a directory".
            OutputError::CreateDir {
                path: dir.clone(),
                source,
            }
        })?;
        // Probe: the staged files are created the same way.
        Self::temp_file(&dir, "probe").map_err(|source| OutputError::NotWritable {
            path: dir.clone(),
            source,
        })?;
        Ok(Self {
            dir,
            staged: Vec::new(),
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    fn temp_file(dir: &Path, name: &str) -> io::Result<NamedTempFile> {
        let prefix = format!(".{name}.");
        let mut b = tempfile::Builder::new();
        b.prefix(&prefix).suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Like a file made by `File::create` (the umask still applies), not 0600.
            b.permissions(fs::Permissions::from_mode(0o644));
        }
        b.tempfile_in(dir)
    }

    /// Stages file `name` (a plain file name) with contents written by `write`.
    /// Returns its final path.
    ///
    /// # Errors
    /// [`OutputError::BadFileName`], or [`OutputError::Write`] if the temporary file
    /// cannot be created, written or synced; `write`'s own errors are passed to
    /// `map_err` together with the final path.
    pub fn stage_with<E>(
        &mut self,
        name: &str,
        write: impl FnOnce(&mut BufWriter<&File>) -> Result<(), E>,
        map_err: impl FnOnce(PathBuf, E) -> OutputError,
    ) -> Result<PathBuf, OutputError> {
        let plain = Path::new(name).file_name().is_some_and(|f| f == name);
        if !plain {
            return Err(OutputError::BadFileName { name: name.into() });
        }
        let path = self.dir.join(name);
        let io_err = |source| OutputError::Write {
            path: path.clone(),
            source,
        };
        let tmp = Self::temp_file(&self.dir, name).map_err(io_err)?;
        {
            let mut w = BufWriter::new(tmp.as_file());
            write(&mut w).map_err(|e| map_err(path.clone(), e))?;
            w.flush().map_err(io_err)?;
        }
        tmp.as_file().sync_all().map_err(io_err)?;
        self.staged.push((tmp, path.clone()));
        Ok(path)
    }

    /// Stages `table` as CSV file `name`. Returns its final path.
    ///
    /// # Errors
    /// As [`OutputDir::stage_with`], with [`OutputError::Csv`] for writer errors.
    pub fn stage_csv(&mut self, name: &str, table: &Table) -> Result<PathBuf, OutputError> {
        self.stage_with(
            name,
            |w| table.write_csv(w),
            |path, source| OutputError::Csv { path, source },
        )
    }

    /// Stages `value` as pretty-printed JSON file `name` (with a final newline).
    /// Returns its final path.
    ///
    /// # Errors
    /// As [`OutputDir::stage_with`], with [`OutputError::Json`] for serialiser errors.
    pub fn stage_json<S: Serialize + ?Sized>(
        &mut self,
        name: &str,
        value: &S,
    ) -> Result<PathBuf, OutputError> {
        self.stage_with(
            name,
            |w| {
                serde_json::to_writer_pretty(&mut *w, value)?;
                w.write_all(b"\n").map_err(serde_json::Error::io)
            },
            |path, source| OutputError::Json { path, source },
        )
    }

    /// Renames every staged file to its final name (replacing an existing file) and
    /// returns the final paths in staging order.
    ///
    /// # Errors
    /// [`OutputError::Write`] if a rename fails; the files not yet renamed are deleted.
    pub fn commit(mut self) -> Result<Vec<PathBuf>, OutputError> {
        let mut done = Vec::with_capacity(self.staged.len());
        for (tmp, path) in self.staged.drain(..) {
            tmp.persist(&path).map_err(|e| OutputError::Write {
                path: path.clone(),
                source: e.error,
            })?;
            done.push(path);
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    type R<X = ()> = Result<X, Box<dyn std::error::Error>>;
    use crate::lie::SO3Matrix;
    use crate::xpbd::{BodyId, SolverOptions};
    use nalgebra::{UnitQuaternion, Vector3};

    fn ball_world<T: Real, G: LieGroup<T>>() -> R<World<T, G>> {
        let mut w = World::new(SolverOptions::default())?;
        let b = Body::dynamic(
            T::one(),
            Vector3::repeat(crate::lie::real::c(0.1)),
            Vector3::zeros(),
            G::exp(&Vector3::new(
                T::zero(),
                T::zero(),
                crate::lie::real::c(0.3),
            )),
        )?;
        w.add_body(b)?;
        Ok(w)
    }

    fn read(path: &Path) -> R<String> {
        Ok(fs::read_to_string(path)?)
    }

    #[test]
    fn median_odd_even_empty() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[1.0, f64::NAN, 0.0]), Some(1.0));
        assert_eq!(max(&[1.0, 5.0, 2.0]), Some(5.0));
        assert_eq!(max(&[]), None);
    }

    #[test]
    fn state_columns_layout() {
        let c = state_columns(2);
        assert_eq!(c.len(), 13);
        assert_eq!(c[0], "t");
        assert_eq!(
            &c[1..7],
            ["b0_px", "b0_py", "b0_pz", "b0_rx", "b0_ry", "b0_rz"]
        );
        assert_eq!(c[12], "b1_rz");
    }

    #[test]
    fn table_rejects_wrong_width_and_reads_back() -> R {
        let mut t = Table::new(["a", "b"], Precision::F64);
        assert!(t.is_empty());
        assert!(matches!(
            t.push_row(&[1.0]),
            Err(OutputError::RowWidth {
                expected: 2,
                got: 1
            })
        ));
        t.push_row(&[1.0, 2.0])?;
        t.push_row(&[3.0, 4.5])?;
        assert_eq!(t.len(), 2);
        assert_eq!(t.row(1), Some(&[3.0, 4.5][..]));
        assert_eq!(t.row(2), None);
        assert_eq!(t.column("b"), Some(vec![2.0, 4.5]));
        assert_eq!(t.column("c"), None);
        let mut buf = Vec::new();
        t.write_csv(&mut buf)?;
        assert_eq!(String::from_utf8(buf)?, "a,b\n1.0,2.0\n3.0,4.5\n");
        Ok(())
    }

    #[test]
    fn f32_tables_print_shortest_f32() -> R {
        let mut t = Table::new(["x"], Precision::F32);
        t.push_row(&[f64::from(0.1f32)])?;
        let mut buf = Vec::new();
        t.write_csv(&mut buf)?;
        assert_eq!(String::from_utf8(buf)?, "x\n0.1\n");
        assert_eq!(Precision::of::<f32>(), Precision::F32);
        assert_eq!(Precision::of::<f64>(), Precision::F64);
        Ok(())
    }

    fn recorder_counts<T: Real, G: LieGroup<T>>() -> R {
        let mut w = ball_world::<T, G>()?;
        assert!(matches!(
            Recorder::new(&w, 0),
            Err(OutputError::ZeroInterval)
        ));
        let mut rec = Recorder::new(&w, 3)?;
        rec.reserve(10);
        for _ in 0..10 {
            rec.step(&mut w)?;
        }
        assert_eq!(rec.steps(), 10);
        assert_eq!(rec.primal_residuals().len(), 10);
        assert_eq!(rec.constraint_residuals().len(), 10);
        assert_eq!(rec.residuals().len(), 3);
        assert_eq!(rec.states().len(), 3);
        assert_eq!(rec.states().columns().len(), 7);
        // Third recorded row is step 9: t = 9 ms; free fall y = −g t (t + Δt)/2.
        let row = rec.states().row(2).ok_or("no row 2")?;
        assert!((row[0] - 0.009).abs() < 1e-6);
        assert!((row[2] + 9.81 * 0.009 * 0.010 / 2.0).abs() < 1e-5);
        // Rotation vector of the (non-spinning) body stays (0, 0, 0.3).
        assert!((row[6] - 0.3).abs() < 1e-6);
        assert!(rec.step_time() > Duration::ZERO);
        Ok(())
    }

    #[test]
    fn recorder_counts_all_representations() -> R {
        recorder_counts::<f64, SO3Matrix<f64>>()?;
        recorder_counts::<f32, SO3Matrix<f32>>()?;
        recorder_counts::<f64, UnitQuaternion<f64>>()?;
        recorder_counts::<f32, UnitQuaternion<f32>>()?;
        Ok(())
    }

    #[test]
    fn recorder_keeps_rows_before_divergence() -> R {
        let mut w = ball_world::<f64, SO3Matrix<f64>>()?;
        let mut rec = Recorder::new(&w, 1)?;
        for _ in 0..5 {
            rec.step(&mut w)?;
        }
        w.body_mut(BodyId(0)).ok_or("no body 0")?.velocity.x = f64::NAN;
        let err = rec.step(&mut w).unwrap_err();
        assert!(matches!(err, XpbdError::Diverged { .. }));
        assert_eq!(rec.steps(), 5);
        assert_eq!(rec.residuals().len(), 5);
        assert_eq!(rec.states().len(), 5);
        assert!(rec.states().rows().flatten().all(|x| x.is_finite()));
        Ok(())
    }

    #[test]
    fn output_dir_commits_whole_files() -> R {
        let root = tempfile::tempdir()?;
        let dir = root.path().join("a/b");
        let mut out = OutputDir::create(&dir)?;
        let mut t = Table::new(["t"], Precision::F64);
        t.push_row(&[1.0])?;
        out.stage_csv("x.csv", &t)?;
        out.stage_json("s.json", &serde_json::json!({"k": 1}))?;
        // Nothing visible under the final names before the commit.
        assert!(!dir.join("x.csv").exists());
        let paths = out.commit()?;
        assert_eq!(paths, vec![dir.join("x.csv"), dir.join("s.json")]);
        assert_eq!(read(&dir.join("x.csv"))?, "t\n1.0\n");
        let v: serde_json::Value = serde_json::from_str(&read(&dir.join("s.json"))?)?;
        assert_eq!(v["k"], 1);
        let names = fs::read_dir(&dir)?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<Vec<_>, _>>()?;
        assert_eq!(names.len(), 2, "no temporary files left: {names:?}");
        Ok(())
    }

    #[test]
    fn output_dir_dropped_leaves_nothing() -> R {
        let root = tempfile::tempdir()?;
        let mut out = OutputDir::create(root.path())?;
        out.stage_json("s.json", &[1, 2])?;
        drop(out);
        assert_eq!(fs::read_dir(root.path())?.count(), 0);
        Ok(())
    }

    #[test]
    fn output_dir_rejects_files_and_bad_names() -> R {
        let root = tempfile::tempdir()?;
        let file = root.path().join("f");
        fs::write(&file, "x")?;
        assert!(matches!(
            OutputDir::create(&file),
            Err(OutputError::NotADirectory { .. })
        ));
        assert!(matches!(
            OutputDir::create(file.join("sub")),
            Err(OutputError::CreateDir { .. })
        ));
        let mut out = OutputDir::create(root.path().join("d"))?;
        for bad in ["", ".", "..", "a/b"] {
            assert!(matches!(
                out.stage_json(bad, &1),
                Err(OutputError::BadFileName { .. })
            ));
        }
        Ok(())
    }

    #[test]
    fn summary_serialises_non_finite_as_null() -> R {
        let s = RunSummary {
            scene: "test".into(),
            version: "0".into(),
            settings: serde_json::json!({"dt": 0.001}),
            status: RunStatus::Diverged,
            error: Some("boom".into()),
            steps: 1,
            substeps: 1,
            simulated_time_s: 0.001,
            rows: 1,
            wall_time_s: 0.0,
            step_time_s: 0.0,
            time_per_substep_us: 0.0,
            median_primal_residual: Some(f64::NAN),
            median_constraint_residual: None,
            max_primal_residual: None,
            max_constraint_residual: None,
            energy_initial_j: 0.0,
            energy_final_j: 0.0,
            files: vec![],
        };
        let v = serde_json::to_value(&s)?;
        assert_eq!(v["status"], "diverged");
        assert!(v["median_primal_residual"].is_null());
        assert_eq!(v["settings"]["dt"], 0.001);
        Ok(())
    }
}
