//! Writing simulation outputs: per-step tables recorded in memory, then CSV files and a
//! JSON summary, each written whole or not at all.
//!
//! # File formats
//! * `residuals.csv`: columns [`RESIDUAL_COLUMNS`] = `t,primal_residual,
//!   constraint_residual,energy`: simulated time (s) at the end of a step (see
//!   [`step_time`]: `t0 + k·Δt` computed exactly in decimal, so `0.009`, never
//!   `0.009000000000000001`), the primal
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
//! staged, so an error midway leaves no partial file behind. The commit first checks
//! every target (none may be a directory) and renames only if all pass, so a failure
//! it can foresee leaves the earlier files untouched. (A rename within one directory
//! is atomic; a rename that still fails, or a crash, between two renames can leave
//! some new files next to older ones, never a truncated file: the error
//! [`OutputError::Commit`] then lists the files already replaced.)
//!
//! # Example
//! ```
//! use lie_xpbd::lie::{LieGroup, SO3Matrix};
//! use lie_xpbd::pipeline::files::{OutputDir, Recorder};
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
use std::collections::TryReserveError;
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
    /// A file to be written exists as a directory, so it cannot be replaced.
    #[error("'{}' is a directory, so the file of that name cannot be written", path.display())]
    TargetIsDirectory {
        /// The path of the file to be written.
        path: PathBuf,
    },
    /// Renaming a staged file to its final name failed after the targets were checked;
    /// the files in `replaced` already hold this run's contents, the others (including
    /// `path`) still hold whatever was there before.
    #[error("cannot write '{}': {source}; {}", path.display(), replaced_note(replaced))]
    Commit {
        /// The file whose rename failed.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
        /// The files already replaced by this commit, in order.
        replaced: Vec<PathBuf>,
    },
    /// [`Recorder::try_reserve`] could not allocate the memory for a run.
    #[error(
        "cannot allocate about {} MB to record {steps} steps and {rows} rows: {source}",
        bytes.div_ceil(1_000_000)
    )]
    OutOfMemory {
        /// Steps planned.
        steps: u64,
        /// Rows planned.
        rows: u64,
        /// Bytes requested in total (saturated at `u64::MAX`).
        bytes: u64,
        /// The allocator's error.
        source: TryReserveError,
    },
}

/// The part of [`OutputError::Commit`]'s message that says which files were replaced.
fn replaced_note(replaced: &[PathBuf]) -> String {
    if replaced.is_empty() {
        "no file was replaced".into()
    } else {
        let names: Vec<String> = replaced
            .iter()
            .map(|p| format!("'{}'", p.display()))
            .collect();
        format!(
            "already replaced with this run's output: {} (the other files are older)",
            names.join(", ")
        )
    }
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
    ///
    /// # Errors
    /// The allocator's error if the memory cannot be had (instead of aborting).
    pub fn try_reserve(&mut self, rows: usize) -> Result<(), TryReserveError> {
        self.data
            .try_reserve(rows.saturating_mul(self.columns.len()))
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
pub fn state_row<T: Real, G: LieGroup<T>>(t: f64, bodies: &[Body<T, G>], row: &mut Vec<f64>) {
    row.push(t);
    for b in bodies {
        let r = b.orientation.log();
        row.extend(b.position.iter().chain(r.iter()).map(|&x| x.to_f64()));
    }
}

/// `x` as the shortest decimal that reads back to it at precision `T` (so the `f32`
/// value nearest 0.001 gives the `f64` nearest 0.001, not 0.0010000000474974513).
pub fn shortest_f64<T: Real>(x: T) -> f64 {
    let wide = x.to_f64();
    match Precision::of::<T>() {
        Precision::F64 => wide,
        // Lossless narrowing (the value was f32), then its shortest decimal.
        Precision::F32 => (wide as f32).to_string().parse().unwrap_or(wide),
    }
}

/// `x` as an exact decimal `m × 10^e`, from its shortest round-trip representation.
fn decimal(x: f64) -> Option<(i128, i32)> {
    if !x.is_finite() {
        return None;
    }
    let s = format!("{x:e}"); // e.g. "1e-3", "-1.25e2", "0e0"
    let (mantissa, exp) = s.split_once('e')?;
    let exp: i32 = exp.parse().ok()?;
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let m: i128 = format!("{int}{frac}").parse().ok()?;
    Some((m, exp - i32::try_from(frac.len()).ok()?))
}

/// Simulated time after `steps` steps of `dt` from `t0`, s: `t0 + steps·dt` computed
/// exactly on the decimal values of `t0` and `dt` (their shortest representations, i.e.
/// the numbers as typed) and rounded once to the nearest `f64`.
///
/// Repeated or multiplied binary floating point drifts (`9 × 0.001` is
/// `0.009000000000000001` in `f64`, `0.90000004` in `f32`); this prints `0.009`, `0.3`,
/// `4512.458` at any magnitude. It is at least as exact as rounding to a 1e-12 s grid,
/// and unlike such a grid it also stays exact beyond t ≈ 4500 s (where 1e-12 s drops
/// below the spacing of `f64`) and for sub-picosecond `dt`. Falls back to plain `f64`
/// arithmetic only if the decimals do not fit in 128 bits (e.g. `dt` = 1e-300 with a
/// non-zero `t0`).
///
/// ```
/// assert_eq!(lie_xpbd::pipeline::files::step_time(0.0, 9, 0.001), 0.009);
/// assert_eq!(lie_xpbd::pipeline::files::step_time(0.0, 3, 0.1), 0.3);
/// ```
pub fn step_time(t0: f64, steps: u64, dt: f64) -> f64 {
    let exact = || -> Option<f64> {
        let (m0, e0) = decimal(t0)?;
        let (m1, e1) = decimal(dt)?;
        let m1 = m1.checked_mul(i128::from(steps))?;
        let e = match (m0, m1) {
            (0, _) => e1,
            (_, 0) => e0,
            _ => e0.min(e1),
        };
        let scale = |m: i128, from: i32| -> Option<i128> {
            if m == 0 {
                return Some(0);
            }
            m.checked_mul(10i128.checked_pow(u32::try_from(from - e).ok()?)?)
        };
        let m = scale(m0, e0)?.checked_add(scale(m1, e1)?)?;
        format!("{m}e{e}").parse().ok()
    };
    exact().unwrap_or(t0 + steps as f64 * dt)
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
///
/// The time `t` written with each row is [`step_time`]`(t0, k, dt)` for the k-th step
/// since the recorder was made, where `t0` is the world's time then and `dt` its time
/// step (both as the shortest decimals at the world's precision, so an `f32` world
/// with Δt = 0.001 writes `0.009`, not `0.009000000427`); [`Recorder::with_time_step`]
/// sets `dt` exactly (e.g. as given on a command line).
#[derive(Debug, Clone)]
pub struct Recorder {
    every: u64,
    bodies: usize,
    steps: u64,
    t0: f64,
    dt: f64,
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
            t0: shortest_f64(world.time()),
            dt: shortest_f64(world.options().dt),
            residuals: Table::new(RESIDUAL_COLUMNS, p),
            states: Table::new(state_columns(bodies), p),
            primal: Vec::new(),
            constraint: Vec::new(),
            step_time: Duration::ZERO,
        })
    }

    /// The same recorder with time step `dt` (s) for the times it writes, instead of
    /// the world's Δt read back at the world's precision.
    #[must_use]
    pub fn with_time_step(mut self, dt: f64) -> Self {
        self.dt = dt;
        self
    }

    /// Bytes of memory one recorded row takes (both tables).
    pub fn bytes_per_row(&self) -> u64 {
        let values = self.residuals.columns.len() + self.states.columns.len();
        8 * values as u64
    }

    /// Bytes of memory one step takes for its residuals (kept for every step).
    pub const BYTES_PER_STEP: u64 = 16;

    /// Reserves the memory for a run of `steps` more steps (the per-step residuals and
    /// the rows), so that recording them allocates nothing more.
    ///
    /// # Errors
    /// [`OutputError::OutOfMemory`] if the memory cannot be had; the recorder is then
    /// unchanged but for spare capacity, and the process has not aborted.
    pub fn try_reserve(&mut self, steps: u64) -> Result<(), OutputError> {
        let rows = steps / self.every;
        let bytes = steps
            .saturating_mul(Self::BYTES_PER_STEP)
            .saturating_add(rows.saturating_mul(self.bytes_per_row()));
        let oom = |source| OutputError::OutOfMemory {
            steps,
            rows,
            bytes,
            source,
        };
        let steps_n = usize::try_from(steps).unwrap_or(usize::MAX);
        let rows_n = usize::try_from(rows).unwrap_or(usize::MAX);
        self.primal.try_reserve(steps_n).map_err(oom)?;
        self.constraint.try_reserve(steps_n).map_err(oom)?;
        self.residuals.try_reserve(rows_n).map_err(oom)?;
        self.states.try_reserve(rows_n).map_err(oom)?;
        Ok(())
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
            let t = self.time();
            let energy = world.energy().to_f64();
            self.residuals
                .data
                .extend_from_slice(&[t, primal, constraint, energy]);
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

    /// Simulated time after `step` recorded steps, s (see [`step_time`]).
    pub fn time_at(&self, step: u64) -> f64 {
        step_time(self.t0, step, self.dt)
    }

    /// Simulated time after the steps recorded so far, s (see [`step_time`]).
    pub fn time(&self) -> f64 {
        self.time_at(self.steps)
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
    /// Signs that the run, although it completed, is not physically meaningful (e.g.
    /// the joints did not hold); empty if none.
    pub warnings: Vec<String>,
    /// Names of the files written, relative to the output directory.
    pub files: Vec<String>,
}

/// A file being written for an [`OutputDir`] (from [`OutputDir::stage_stream`]): a
/// hidden temporary file in the destination directory behind a [`BufWriter`]. Write to
/// it with [`std::io::Write`], then hand it to [`OutputDir::add`]; dropped instead, it
/// deletes its file.
#[derive(Debug)]
pub struct StagedWriter {
    writer: BufWriter<NamedTempFile>,
    path: PathBuf,
}

impl StagedWriter {
    /// The path the file will have after [`OutputDir::commit`].
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Write for StagedWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer.write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
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

    /// Checks that files `names` (plain file names) could be written in the directory:
    /// none of them exists as a directory. [`OutputDir::commit`] checks again.
    ///
    /// # Errors
    /// [`OutputError::BadFileName`] or [`OutputError::TargetIsDirectory`] for the first
    /// name that fails.
    pub fn check_targets(&self, names: &[&str]) -> Result<(), OutputError> {
        for name in names {
            Self::check_name(name)?;
            Self::check_target(&self.dir.join(name))?;
        }
        Ok(())
    }

    fn check_name(name: &str) -> Result<(), OutputError> {
        let plain = Path::new(name).file_name().is_some_and(|f| f == name);
        if plain {
            Ok(())
        } else {
            Err(OutputError::BadFileName { name: name.into() })
        }
    }

    /// A rename replaces a file or a symbolic link, but not a directory.
    fn check_target(path: &Path) -> Result<(), OutputError> {
        match fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => Err(OutputError::TargetIsDirectory {
                path: path.to_path_buf(),
            }),
            _ => Ok(()),
        }
    }

    /// Stages `bytes` as file `name`. Returns its final path.
    ///
    /// # Errors
    /// As [`OutputDir::stage_with`].
    pub fn stage_bytes(&mut self, name: &str, bytes: &[u8]) -> Result<PathBuf, OutputError> {
        let path = self.dir.join(name);
        self.stage_with(
            name,
            |w| w.write_all(bytes),
            |_, source| OutputError::Write { path, source },
        )
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
        Self::check_name(name)?;
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

    /// Opens file `name` (a plain file name) for streaming: a hidden temporary file in
    /// the directory, written through a buffer. Hand it back with [`OutputDir::add`] to
    /// stage it; a [`StagedWriter`] dropped without being added deletes its file, and
    /// nothing appears under the final name before [`OutputDir::commit`].
    ///
    /// # Errors
    /// [`OutputError::BadFileName`], or [`OutputError::Write`] if the temporary file
    /// cannot be created.
    pub fn stage_stream(&self, name: &str) -> Result<StagedWriter, OutputError> {
        Self::check_name(name)?;
        let path = self.dir.join(name);
        let tmp = Self::temp_file(&self.dir, name).map_err(|source| OutputError::Write {
            path: path.clone(),
            source,
        })?;
        Ok(StagedWriter {
            writer: BufWriter::new(tmp),
            path,
        })
    }

    /// Stages a file opened by [`OutputDir::stage_stream`]: flushes and syncs it, and
    /// adds it to the files [`OutputDir::commit`] renames (to the final path it was
    /// opened with). Returns that final path.
    ///
    /// # Errors
    /// [`OutputError::Write`] if flushing or syncing fails (the file is then deleted).
    pub fn add(&mut self, writer: StagedWriter) -> Result<PathBuf, OutputError> {
        let StagedWriter { writer, path } = writer;
        let io_err = |source| OutputError::Write {
            path: path.clone(),
            source,
        };
        let tmp = writer.into_inner().map_err(|e| io_err(e.into_error()))?;
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
    /// returns the final paths in staging order. Every target is checked before the
    /// first rename, so that the files of the directory stay those of one run.
    ///
    /// # Errors
    /// [`OutputError::TargetIsDirectory`] if a target is a directory (nothing is
    /// renamed); [`OutputError::Commit`] if a rename fails anyway, listing the files
    /// already replaced. The staged files not renamed are deleted.
    pub fn commit(mut self) -> Result<Vec<PathBuf>, OutputError> {
        for (_, path) in &self.staged {
            Self::check_target(path)?;
        }
        let mut done = Vec::with_capacity(self.staged.len());
        for (tmp, path) in self.staged.drain(..) {
            if let Err(e) = tmp.persist(&path) {
                return Err(OutputError::Commit {
                    path,
                    source: e.error,
                    replaced: done,
                });
            }
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
        rec.try_reserve(10)?;
        for _ in 0..10 {
            rec.step(&mut w)?;
        }
        assert_eq!(rec.steps(), 10);
        assert_eq!(rec.primal_residuals().len(), 10);
        assert_eq!(rec.constraint_residuals().len(), 10);
        assert_eq!(rec.residuals().len(), 3);
        assert_eq!(rec.states().len(), 3);
        assert_eq!(rec.states().columns().len(), 7);
        // Third recorded row is step 9: t = 9 ms exactly (as a decimal, at both
        // precisions); free fall y = −g t (t + Δt)/2.
        let row = rec.states().row(2).ok_or("no row 2")?;
        assert_eq!(row[0], 0.009);
        assert_eq!(rec.residuals().row(2).ok_or("no row 2")?[0], 0.009);
        assert_eq!(rec.time(), 0.01);
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
    fn streamed_files_appear_only_on_commit() -> R {
        let root = tempfile::tempdir()?;
        let dir = root.path();
        let mut out = OutputDir::create(dir)?;
        let mut w = out.stage_stream("s.csv")?;
        assert_eq!(w.path(), dir.join("s.csv"));
        for i in 0..1000 {
            writeln!(w, "{i}")?;
        }
        let dropped = out.stage_stream("dropped.csv")?;
        drop(dropped);
        assert!(matches!(
            out.stage_stream("a/b"),
            Err(OutputError::BadFileName { .. })
        ));
        assert_eq!(out.add(w)?, dir.join("s.csv"));
        assert!(!dir.join("s.csv").exists());
        let paths = out.commit()?;
        assert_eq!(paths, vec![dir.join("s.csv")]);
        let text = read(&dir.join("s.csv"))?;
        assert_eq!(text.lines().count(), 1000);
        assert_eq!(fs::read_dir(dir)?.count(), 1, "no temporary files left");
        // Streamed but never committed: nothing is left.
        let mut out = OutputDir::create(dir.join("d"))?;
        let mut w = out.stage_stream("x.csv")?;
        writeln!(w, "x")?;
        out.add(w)?;
        drop(out);
        assert_eq!(fs::read_dir(dir.join("d"))?.count(), 0);
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
            warnings: vec!["w".into()],
            files: vec![],
        };
        let v = serde_json::to_value(&s)?;
        assert_eq!(v["status"], "diverged");
        assert!(v["median_primal_residual"].is_null());
        assert_eq!(v["settings"]["dt"], 0.001);
        assert_eq!(v["warnings"][0], "w");
        Ok(())
    }

    #[test]
    fn times_do_not_drift() {
        // Plain f64/f32 arithmetic drifts; step_time does not, at any magnitude.
        assert_ne!(9.0 * 0.001, 0.009);
        assert_eq!(step_time(0.0, 9, 0.001), 0.009);
        assert_eq!(step_time(0.0, 300, 0.001), 0.3);
        assert_eq!(step_time(0.0, 3, 0.1), 0.3);
        assert_eq!(step_time(0.0, 4_512_458, 0.001), 4512.458);
        assert_eq!(step_time(0.0, 10_000_001, 0.001), 10000.001);
        assert_eq!(step_time(0.0, 0, 0.001), 0.0);
        assert_eq!(step_time(1.5, 2, 0.25), 2.0);
        assert_eq!(step_time(0.1, 2, 0.1), 0.3);
        assert_eq!(step_time(0.0, 7, 1e-15), 7e-15);
        assert_eq!(step_time(0.0, 3, 1e-300), 3e-300);
        assert_eq!(step_time(0.0, 11, 2.5e10), 2.75e11);
        // Falls back to f64 arithmetic when the decimals do not fit.
        assert_eq!(step_time(1.0, 1, 1e-300), 1.0);
        assert!(step_time(0.0, 1, f64::NAN).is_nan());
        for k in 0..2000u64 {
            let t = step_time(0.0, k, 0.001);
            let s = t.to_string();
            assert!(s.split('.').nth(1).is_none_or(|f| f.len() <= 3), "{s}");
        }
        assert_eq!(shortest_f64(0.001f32), 0.001);
        assert_eq!(shortest_f64(0.001f64), 0.001);
    }

    #[test]
    fn f32_recorder_times_are_decimal() -> R {
        let mut w = ball_world::<f32, SO3Matrix<f32>>()?;
        let mut rec = Recorder::new(&w, 1)?.with_time_step(0.1);
        for _ in 0..9 {
            rec.step(&mut w)?;
        }
        let mut buf = Vec::new();
        rec.residuals().write_csv(&mut buf)?;
        let text = String::from_utf8(buf)?;
        let ts: Vec<&str> = text
            .lines()
            .skip(1)
            .map(|l| l.split(',').next().unwrap_or_default())
            .collect();
        assert_eq!(ts[2], "0.3");
        assert_eq!(ts[8], "0.9", "not 0.90000004");
        assert_eq!(rec.time(), 0.9);
        Ok(())
    }

    #[test]
    fn try_reserve_reports_instead_of_aborting() -> R {
        let w = ball_world::<f64, SO3Matrix<f64>>()?;
        let mut rec = Recorder::new(&w, 1)?;
        assert_eq!(rec.bytes_per_row(), 8 * (4 + 7));
        let e = rec.try_reserve(u64::MAX).unwrap_err();
        assert!(matches!(e, OutputError::OutOfMemory { .. }), "{e}");
        assert!(e.to_string().contains("cannot allocate"), "{e}");
        rec.try_reserve(1000)?;
        Ok(())
    }

    #[test]
    fn commit_checks_every_target_before_renaming() -> R {
        let root = tempfile::tempdir()?;
        let dir = root.path();
        fs::write(dir.join("a.csv"), "old a")?;
        fs::create_dir(dir.join("b.csv"))?;
        let mut out = OutputDir::create(dir)?;
        assert!(matches!(
            out.check_targets(&["a.csv", "b.csv"]),
            Err(OutputError::TargetIsDirectory { .. })
        ));
        out.stage_json("a.csv", &1)?;
        out.stage_json("b.csv", &2)?;
        let e = out.commit().unwrap_err();
        assert!(matches!(e, OutputError::TargetIsDirectory { .. }), "{e}");
        assert!(e.to_string().contains("b.csv"), "{e}");
        assert_eq!(read(&dir.join("a.csv"))?, "old a", "nothing was replaced");
        assert!(dir.join("b.csv").is_dir());
        assert_eq!(fs::read_dir(dir)?.count(), 2, "no temporary files left");
        Ok(())
    }

    #[test]
    fn commit_failing_midway_names_the_replaced_files() -> R {
        let root = tempfile::tempdir()?;
        let dir = root.path();
        let mut out = OutputDir::create(dir)?;
        out.stage_json("a.json", &1)?;
        out.stage_json("b.json", &2)?;
        // Make the second rename fail after the checks: its staged file vanishes.
        fs::remove_file(out.staged[1].0.path())?;
        let e = out.commit().unwrap_err();
        let OutputError::Commit { path, replaced, .. } = &e else {
            panic!("expected a commit error, got {e}");
        };
        assert_eq!(path, &dir.join("b.json"));
        assert_eq!(replaced, &vec![dir.join("a.json")]);
        let msg = e.to_string();
        assert!(
            msg.contains("b.json") && msg.contains("already replaced"),
            "{msg}"
        );
        assert!(msg.contains("a.json"), "{msg}");
        assert_eq!(read(&dir.join("a.json"))?, "1\n");
        Ok(())
    }
}
