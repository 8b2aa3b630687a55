//! The comparison study: one scene run in several rotation representations and scalar
//! types side by side, each measured against the `f64` rotation-matrix run (what
//! `lie-xpbd compare SCENE --rotation matrix,quaternion --scalar f64,f32` does).
//!
//! # How it runs
//! Every requested combination of [`Rotation`] × [`Scalar`] is built from the same
//! scene, plus the **reference**, the `f64` matrix run ([`REFERENCE`]), which is always
//! included (and reported as added when it was not requested). The runs advance in
//! lockstep: for each time step, every run takes its step, then the runs are compared
//! with the reference at that step. No trajectory is kept, so memory does not grow with
//! the length of the run; the rows are streamed to disk as they are made. The wall time
//! of each run's [`Simulation::step`] is measured on its own.
//!
//! A run whose step fails (e.g. [`crate::xpbd::XpbdError::Diverged`]) ends there: it is
//! marked diverged in the summary, its columns hold `NaN` from then on, and the other
//! runs go on. If the reference ends, the others keep stepping (their residuals and
//! timing are still recorded) but there is nothing left to compare them with.
//!
//! # Differences
//! At each step, over the dynamic bodies (fixed bodies do not move and are skipped):
//! * position difference: the largest ‖p − p_ref‖ (Euclidean, m, world frame) of a
//!   body's centre of mass;
//! * rotation difference: the largest ‖Log(R_refᵀ R)‖ (rad, in [0, π]), the angle of
//!   the rotation taking the reference orientation (body → world) to the run's, computed
//!   in `f64` from the matrices with [`log_matrix`] (an `f32` run's matrix widened to
//!   `f64` is orthonormal only to ~1e-7, which bounds the accuracy of its angle).
//!
//! # Files
//! * `compare.csv` ([`CSV_FILE`]): a header, then a row every `every` steps (at steps
//!   `every`, `2·every`, …; no row for the initial state). Columns ([`columns`]): `t`
//!   (simulated time at the end of the step, s, exact decimal from
//!   [`super::files::step_time`]); for the reference `matrix_f64_primal`,
//!   `matrix_f64_constraint`; then for each other run `{rotation}_{scalar}_position_m`,
//!   `{rotation}_{scalar}_rotation_rad`, `{rotation}_{scalar}_primal`,
//!   `{rotation}_{scalar}_constraint` (primal residual (51) and constraint residual (52)
//!   of that run after the step, see [`crate::xpbd::Residuals`]). Residuals are printed
//!   at the run's precision; differences in `f64`. A value that does not exist (a run
//!   ended) is `NaN`.
//! * `compare.png` ([`POSITION_PNG`]) and `compare_rotation.png` ([`ROTATION_PNG`]):
//!   the position difference (m) and the rotation difference (rad) of each run other
//!   than the reference against simulated time (s), on a logarithmic axis. They are
//!   drawn from every compared step (not only the CSV rows), reduced as the study goes
//!   by a [`Decimator`] per curve (min and max per bucket of steps, [`PLOT_POINTS`]
//!   points at most), so memory stays bounded. A difference of exactly 0 cannot be
//!   shown on the log axis (the chart notes how many points it left out). A chart that
//!   cannot be drawn is not an error: it is left out and a line in
//!   [`CompareReport::warnings`] says why; the data are all in `compare.csv`.
//! * `summary.json` ([`SUMMARY_JSON`]): the [`CompareReport`] (non-finite numbers as
//!   `null`).
//! * `summary.md` ([`SUMMARY_MD`]): the same as a Markdown table, with the conclusions
//!   in words.
//!
//! All of them are staged in the output directory and appear under their final names
//! only when the study completed ([`OutputDir::commit`]); on an error nothing is left.
//!
//! # Example
//! ```no_run
//! use lie_xpbd::pipeline::compare::{compare, CompareOptions};
//! use lie_xpbd::scene::Scene;
//!
//! let mut scene = Scene::from_toml(lie_xpbd::scenes::pendulum::SCENE_TOML, "pendulum.toml")?;
//! scene.set("run.every", "10")?;
//! let report = compare(&scene, &CompareOptions::default(), std::path::Path::new("out"))?;
//! for line in &report.conclusions {
//!     println!("{line}");
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::files::{step_time, OutputDir, OutputError, StagedWriter};
use super::plot::{render_png, ChartSpec, Decimator, Series};
use super::run::RunStatus;
use crate::lie::log_matrix;
use crate::scene::{Scene, SceneError};
use crate::sim::{build_simulation, Rotation, Scalar, Simulation};
use nalgebra::{Matrix3, Vector3};
use serde::{Serialize, Serializer};
use std::fmt::Write as _;
use std::io::Write as _;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Name of the streamed table of differences and residuals.
pub const CSV_FILE: &str = "compare.csv";
/// Name of the JSON summary (a [`CompareReport`]).
pub const SUMMARY_JSON: &str = "summary.json";
/// Name of the Markdown summary.
pub const SUMMARY_MD: &str = "summary.md";
/// Name of the chart of position differences.
pub const POSITION_PNG: &str = "compare.png";
/// Name of the chart of rotation differences.
pub const ROTATION_PNG: &str = "compare_rotation.png";
/// Points kept per curve of the charts (min and max per bucket of steps).
pub const PLOT_POINTS: usize = 4000;

/// The reference every run is compared with: `f64` rotation matrices.
pub const REFERENCE: RunKey = RunKey {
    rotation: Rotation::Matrix,
    scalar: Scalar::F64,
};

/// What can stop a comparison. A run that diverges does not: it is reported in the
/// [`CompareReport`].
#[derive(Debug, Error)]
pub enum CompareError {
    /// [`CompareOptions::rotations`] is empty.
    #[error("no rotation representation to compare; give at least one of: matrix, quaternion")]
    NoRotations,
    /// [`CompareOptions::scalars`] is empty.
    #[error("no scalar type to compare; give at least one of: f64, f32")]
    NoScalars,
    /// [`CompareOptions::every`] is 0.
    #[error("the recording interval must be at least 1 step")]
    ZeroInterval,
    /// The scene could not be built (or asks for too many steps).
    #[error(transparent)]
    Scene(Box<SceneError>),
    /// An output file could not be written; nothing was left under a final name unless
    /// the error is [`OutputError::Commit`], which lists the files replaced.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The progress callback asked to stop; no file was written.
    #[error("the comparison was stopped after {steps} of {total} steps; no file was written")]
    Cancelled {
        /// Steps taken.
        steps: u64,
        /// Steps planned.
        total: u64,
    },
}

impl From<SceneError> for CompareError {
    fn from(e: SceneError) -> Self {
        CompareError::Scene(Box::new(e))
    }
}

/// Which runs to compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompareOptions {
    /// Rotation representations (at least one; duplicates are ignored).
    pub rotations: Vec<Rotation>,
    /// Scalar types (at least one; duplicates are ignored).
    pub scalars: Vec<Scalar>,
    /// Write a CSV row every this many steps (≥ 1); `None` takes the scene's
    /// `run.every`.
    pub every: Option<u64>,
}

impl Default for CompareOptions {
    /// Both representations in both scalars, rows as the scene says.
    fn default() -> Self {
        Self {
            rotations: Rotation::ALL.to_vec(),
            scalars: Scalar::ALL.to_vec(),
            every: None,
        }
    }
}

impl CompareOptions {
    /// The runs, in column order: the reference ([`REFERENCE`]) first, then every
    /// requested combination (rotations outer, scalars inner) other than it, each once.
    ///
    /// # Errors
    /// [`CompareError::NoRotations`] or [`CompareError::NoScalars`] if a list is empty.
    pub fn runs(&self) -> Result<Vec<RunKey>, CompareError> {
        if self.rotations.is_empty() {
            return Err(CompareError::NoRotations);
        }
        if self.scalars.is_empty() {
            return Err(CompareError::NoScalars);
        }
        let mut runs = vec![REFERENCE];
        for &rotation in &self.rotations {
            for &scalar in &self.scalars {
                let key = RunKey { rotation, scalar };
                if !runs.contains(&key) {
                    runs.push(key);
                }
            }
        }
        Ok(runs)
    }

    /// Whether the reference was asked for (otherwise it is added).
    pub fn requests_reference(&self) -> bool {
        self.rotations.contains(&REFERENCE.rotation) && self.scalars.contains(&REFERENCE.scalar)
    }
}

/// One combination of rotation representation and scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RunKey {
    /// Rotation representation.
    pub rotation: Rotation,
    /// Scalar type.
    pub scalar: Scalar,
}

impl RunKey {
    /// `{rotation}_{scalar}`, e.g. `quaternion_f32`: the prefix of the run's columns.
    pub fn name(&self) -> String {
        format!("{}_{}", self.rotation, self.scalar)
    }

    /// Whether this is the reference ([`REFERENCE`]).
    pub fn is_reference(&self) -> bool {
        *self == REFERENCE
    }
}

/// Column names of `compare.csv` for `runs` (reference first, as from
/// [`CompareOptions::runs`]): `t`; per run `{name}_position_m`, `{name}_rotation_rad`
/// (not for the reference), `{name}_primal`, `{name}_constraint`.
pub fn columns(runs: &[RunKey]) -> Vec<String> {
    let mut cols = vec!["t".to_string()];
    for run in runs {
        let name = run.name();
        if !run.is_reference() {
            cols.push(format!("{name}_position_m"));
            cols.push(format!("{name}_rotation_rad"));
        }
        cols.push(format!("{name}_primal"));
        cols.push(format!("{name}_constraint"));
    }
    cols
}

fn ser_name<S: Serializer, T: std::fmt::Display>(x: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(x)
}

/// The result for one run. Differences are `None` for the reference (and for a run
/// that was never compared); residual statistics are over every step the run took.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunComparison {
    /// `{rotation}_{scalar}`, the prefix of its CSV columns.
    pub run: String,
    /// Rotation representation.
    #[serde(serialize_with = "ser_name")]
    pub rotation: Rotation,
    /// Scalar type.
    #[serde(serialize_with = "ser_name")]
    pub scalar: Scalar,
    /// Whether this is the reference (`f64` matrices).
    pub reference: bool,
    /// Whether the run was asked for (only the reference can be added unasked).
    pub requested: bool,
    /// Whether it went to the end ([`RunStatus::Completed`]) or diverged
    /// ([`RunStatus::Diverged`]); never [`RunStatus::Interrupted`]: a comparison that is
    /// stopped writes nothing and ends with [`CompareError::Cancelled`].
    pub status: RunStatus,
    /// The error that ended it early, if any.
    pub error: Option<String>,
    /// Steps taken successfully.
    pub steps: u64,
    /// Simulated time reached by the successful steps, s.
    pub simulated_time_s: f64,
    /// The step (counted from 1) that failed, if the run diverged.
    pub diverged_at_step: Option<u64>,
    /// Steps at which it was compared with the reference (both still running).
    pub compared_steps: u64,
    /// Largest position difference from the reference over the compared steps, m.
    pub max_position_diff_m: Option<f64>,
    /// Simulated time of that largest position difference, s.
    pub max_position_diff_t_s: Option<f64>,
    /// Position difference at the last compared step, m.
    pub final_position_diff_m: Option<f64>,
    /// Largest rotation difference ‖Log(R_refᵀ R)‖ over the compared steps, rad.
    pub max_rotation_diff_rad: Option<f64>,
    /// Simulated time of that largest rotation difference, s.
    pub max_rotation_diff_t_s: Option<f64>,
    /// Rotation difference at the last compared step, rad.
    pub final_rotation_diff_rad: Option<f64>,
    /// Largest primal residual (51) over its steps.
    pub max_primal_residual: Option<f64>,
    /// Mean primal residual (51) over its steps.
    pub mean_primal_residual: Option<f64>,
    /// Primal residual (51) after its last step.
    pub final_primal_residual: Option<f64>,
    /// Largest constraint residual (52) over its steps.
    pub max_constraint_residual: Option<f64>,
    /// Mean constraint residual (52) over its steps.
    pub mean_constraint_residual: Option<f64>,
    /// Constraint residual (52) after its last step.
    pub final_constraint_residual: Option<f64>,
    /// Wall time inside its `step()` calls (the failed one included), s.
    pub step_time_s: f64,
    /// `step_time_s` per step attempted, µs.
    pub time_per_step_us: Option<f64>,
    /// `step_time_s` per substep attempted, µs (the measure of the paper's Table 1).
    pub time_per_substep_us: Option<f64>,
}

/// How far a group of runs strays from the reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Drift {
    /// The runs, by name.
    pub runs: Vec<String>,
    /// Largest position difference among them, m.
    pub position_m: f64,
    /// Largest rotation difference among them, rad.
    pub rotation_rad: f64,
    /// Simulated time over which all of them were compared, s (shorter than the
    /// scene's duration if one of them or the reference diverged).
    pub over_s: f64,
}

/// The outcome of [`compare`]; `summary.json` is this, serialised.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareReport {
    /// Scene name.
    pub scene: String,
    /// Where the scene came from.
    pub origin: String,
    /// Overrides applied to the scene, as (key, value).
    pub overrides: Vec<(String, String)>,
    /// Version of this crate.
    pub version: String,
    /// Time step Δt, s.
    pub dt_s: f64,
    /// Substeps per step.
    pub substeps: usize,
    /// Steps planned (⌈duration/Δt⌉).
    pub steps: u64,
    /// Simulated time planned, s.
    pub duration_s: f64,
    /// CSV row interval, steps.
    pub every: u64,
    /// Rows written to `compare.csv` (header not counted).
    pub rows: u64,
    /// Dynamic bodies compared.
    pub bodies_compared: usize,
    /// Name of the reference run (`matrix_f64`).
    pub reference: String,
    /// Whether the reference was added because it was not requested.
    pub reference_added: bool,
    /// Every run, reference first, in column order.
    pub runs: Vec<RunComparison>,
    /// How far the `f32` runs stray from the reference (`None` without an `f32` run or
    /// if none was compared).
    pub f32_drift: Option<Drift>,
    /// How far the `f64` quaternion run is from the `f64` matrix run (`None` if it was
    /// not requested or never compared).
    pub quaternion_f64_difference: Option<Drift>,
    /// The findings in words (also in `summary.md`).
    pub conclusions: Vec<String>,
    /// Wall time of the whole study (stepping, comparing, writing rows), s.
    pub wall_time_s: f64,
    /// Name of the CSV file in the output directory.
    pub csv_file: String,
    /// Its columns (see [`columns`]).
    pub columns: Vec<String>,
    /// Names of the charts drawn ([`POSITION_PNG`], [`ROTATION_PNG`]; one that could not
    /// be drawn is missing and named in `warnings`).
    pub plot_files: Vec<String>,
    /// Problems that did not stop the study (e.g. a chart that could not be drawn);
    /// empty if none.
    pub warnings: Vec<String>,
    /// Full path of `compare.csv` after the commit (for plotting it).
    #[serde(skip)]
    pub csv_path: PathBuf,
    /// Full paths of the files written, in order: CSV, the charts drawn, JSON,
    /// Markdown.
    #[serde(skip)]
    pub files: Vec<PathBuf>,
}

impl CompareReport {
    /// The result for run `key`, if it was part of the study.
    pub fn run(&self, key: RunKey) -> Option<&RunComparison> {
        self.runs
            .iter()
            .find(|r| r.rotation == key.rotation && r.scalar == key.scalar)
    }
}

/// Running statistics of one quantity: max (NaN wins), mean, last.
#[derive(Debug, Clone, Copy, Default)]
struct Running {
    n: u64,
    sum: f64,
    max: f64,
    max_at: u64,
    last: f64,
}

impl Running {
    fn push(&mut self, x: f64, step: u64) {
        if self.n == 0 || x.total_cmp(&self.max).is_gt() {
            self.max = x;
            self.max_at = step;
        }
        self.n += 1;
        self.sum += x;
        self.last = x;
    }
    fn max(&self) -> Option<f64> {
        (self.n > 0).then_some(self.max)
    }
    fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }
    fn last(&self) -> Option<f64> {
        (self.n > 0).then_some(self.last)
    }
}

/// One run's simulation and bookkeeping.
struct Run {
    key: RunKey,
    sim: Box<dyn Simulation>,
    alive: bool,
    error: Option<String>,
    attempted: u64,
    step_time: Duration,
    primal: Running,
    constraint: Running,
    position: Running,
    rotation: Running,
    /// Values of this step: primal, constraint, position diff, rotation diff.
    now: [f64; 4],
    /// Position and rotation differences against time, for the charts.
    curves: [Decimator; 2],
}

/// Runs the comparison of `scene` described by `opts` and writes `compare.csv`, the
/// charts `compare.png` and `compare_rotation.png`, `summary.json` and `summary.md` to
/// `out_dir` (created if needed). See the
/// [module documentation](self) for what is computed and written.
///
/// # Errors
/// [`CompareError::NoRotations`], [`CompareError::NoScalars`],
/// [`CompareError::ZeroInterval`] for bad options; [`CompareError::Scene`] if the scene
/// cannot be built; [`CompareError::Output`] if the directory or a file cannot be
/// written (then no file appears). A diverging run is not an error.
pub fn compare(
    scene: &Scene,
    opts: &CompareOptions,
    out_dir: &Path,
) -> Result<CompareReport, CompareError> {
    compare_with_progress(scene, opts, out_dir, |_, _| ControlFlow::Continue(()))
}

/// [`compare`], calling `progress(steps_done, steps_total)` after every time step; a
/// [`ControlFlow::Break`] stops the study with [`CompareError::Cancelled`] and writes
/// nothing.
///
/// # Errors
/// As [`compare`], and [`CompareError::Cancelled`].
pub fn compare_with_progress(
    scene: &Scene,
    opts: &CompareOptions,
    out_dir: &Path,
    mut progress: impl FnMut(u64, u64) -> ControlFlow<()>,
) -> Result<CompareReport, CompareError> {
    let wall = Instant::now();
    let keys = opts.runs()?;
    let every = opts.every.unwrap_or(scene.file().run.every);
    if every == 0 {
        return Err(CompareError::ZeroInterval);
    }
    let steps = scene.steps()?;
    let dt = scene.file().solver.dt;
    let substeps = scene.file().solver.substeps;

    let mut runs = Vec::with_capacity(keys.len());
    for &key in &keys {
        runs.push(Run {
            key,
            sim: build_simulation(scene, key.rotation, key.scalar)?,
            alive: true,
            error: None,
            attempted: 0,
            step_time: Duration::ZERO,
            primal: Running::default(),
            constraint: Running::default(),
            position: Running::default(),
            rotation: Running::default(),
            now: [f64::NAN; 4],
            curves: [Decimator::new(PLOT_POINTS), Decimator::new(PLOT_POINTS)],
        });
    }
    let bodies: Vec<usize> = (0..runs[0].sim.body_names().len())
        .filter(|&i| !runs[0].sim.is_fixed(i))
        .collect();

    let mut out = OutputDir::create(out_dir)?;
    out.check_targets(&[
        CSV_FILE,
        POSITION_PNG,
        ROTATION_PNG,
        SUMMARY_JSON,
        SUMMARY_MD,
    ])?;
    let cols = columns(&keys);
    let mut csv = out.stage_stream(CSV_FILE)?;
    write_line(&mut csv, &cols.join(","))?;

    let mut ref_pos = vec![Vector3::<f64>::zeros(); bodies.len()];
    let mut ref_rot = vec![Matrix3::<f64>::identity(); bodies.len()];
    let mut line = String::new();
    let mut rows = 0u64;
    for k in 1..=steps {
        for run in runs.iter_mut().filter(|r| r.alive) {
            let start = Instant::now();
            let result = run.sim.step();
            run.step_time += start.elapsed();
            run.attempted += 1;
            match result {
                Ok(()) => {
                    let (p, c) = run.sim.residuals();
                    run.primal.push(p, k);
                    run.constraint.push(c, k);
                    run.now = [p, c, f64::NAN, f64::NAN];
                }
                Err(e) => {
                    run.alive = false;
                    run.error = Some(e.to_string());
                    run.now = [f64::NAN; 4];
                }
            }
        }
        let (reference, others) = runs.split_at_mut(1);
        let reference = &reference[0];
        if reference.alive {
            for (n, &i) in bodies.iter().enumerate() {
                ref_pos[n] = reference.sim.position(i);
                ref_rot[n] = reference.sim.rotation_matrix(i);
            }
            for run in others.iter_mut().filter(|r| r.alive) {
                let (mut dp, mut dr) = (0.0f64, 0.0f64);
                for (n, &i) in bodies.iter().enumerate() {
                    let p = (run.sim.position(i) - ref_pos[n]).norm();
                    let rel = ref_rot[n].transpose() * run.sim.rotation_matrix(i);
                    let r = log_matrix(&rel).norm();
                    // NaN wins, so that a broken comparison is not hidden.
                    dp = if p.is_nan() { p } else { dp.max(p) };
                    dr = if r.is_nan() { r } else { dr.max(r) };
                }
                run.position.push(dp, k);
                run.rotation.push(dr, k);
                // Plain f64 time: a chart needs no exact decimals.
                let t = k as f64 * dt;
                run.curves[0].push(t, dp);
                run.curves[1].push(t, dr);
                run.now[2] = dp;
                run.now[3] = dr;
            }
        }
        if k.is_multiple_of(every) {
            line.clear();
            line.push_str(&secs(step_time(0.0, k, dt)));
            for run in &runs {
                let [p, c, dp, dr] = run.now;
                if !run.key.is_reference() {
                    push_num(&mut line, dp, Scalar::F64);
                    push_num(&mut line, dr, Scalar::F64);
                }
                push_num(&mut line, p, run.key.scalar);
                push_num(&mut line, c, run.key.scalar);
            }
            write_line(&mut csv, &line)?;
            rows += 1;
        }
        if progress(k, steps).is_break() {
            return Err(CompareError::Cancelled {
                steps: k,
                total: steps,
            });
        }
        if runs.iter().all(|r| !r.alive) {
            break;
        }
    }
    out.add(csv)?;

    let mut warnings = Vec::new();
    let mut plot_files = Vec::new();
    let [position_curves, rotation_curves]: [Vec<Series>; 2] = std::array::from_fn(|q| {
        runs.iter()
            .filter(|r| !r.key.is_reference())
            .map(|r| Series {
                label: r.key.name(),
                points: r.curves[q].clone().finish(),
            })
            .collect()
    });
    for (name, what, y_label, series) in [
        (
            POSITION_PNG,
            "position difference",
            "position difference, m",
            position_curves,
        ),
        (
            ROTATION_PNG,
            "rotation difference",
            "rotation difference, rad",
            rotation_curves,
        ),
    ] {
        let spec = ChartSpec {
            title: format!("{}: {what} from {}", scene.name(), REFERENCE.name()),
            x_label: "t, s".into(),
            y_label: y_label.into(),
            log_y: true,
        };
        if stage_chart(&mut out, name, &spec, &series, &mut warnings)? {
            plot_files.push(name.to_string());
        }
    }

    let results: Vec<RunComparison> = runs
        .iter()
        .map(|r| summarise(r, opts, dt, substeps))
        .collect();
    let f32_drift = drift(&results, |r| r.scalar == Scalar::F32, dt);
    let quaternion_f64_difference = drift(
        &results,
        |r| r.rotation == Rotation::Quaternion && r.scalar == Scalar::F64,
        dt,
    );
    let duration_s = step_time(0.0, steps, dt);
    let dir = out.path().to_path_buf();
    let mut report = CompareReport {
        scene: scene.name(),
        origin: scene.origin().to_string(),
        overrides: scene.overrides().to_vec(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        dt_s: dt,
        substeps,
        steps,
        duration_s,
        every,
        rows,
        bodies_compared: bodies.len(),
        reference: REFERENCE.name(),
        reference_added: !opts.requests_reference(),
        runs: results,
        f32_drift,
        quaternion_f64_difference,
        conclusions: Vec::new(),
        wall_time_s: 0.0,
        csv_file: CSV_FILE.to_string(),
        columns: cols,
        plot_files,
        warnings,
        csv_path: dir.join(CSV_FILE),
        files: Vec::new(),
    };
    report.conclusions = conclusions(&report, opts);
    report.wall_time_s = wall.elapsed().as_secs_f64();
    out.stage_json(SUMMARY_JSON, &report)?;
    let md = markdown(&report);
    out.stage_with(
        SUMMARY_MD,
        |w| std::io::Write::write_all(w, md.as_bytes()),
        |path, source| OutputError::Write { path, source },
    )?;
    report.files = out.commit()?;
    Ok(report)
}

/// Draws `series` and stages the chart as `name`; returns whether it was staged. A
/// chart that cannot be drawn is not an error: a line in `warnings` says why.
///
/// # Errors
/// [`OutputError`] if the drawn chart cannot be staged.
fn stage_chart(
    out: &mut OutputDir,
    name: &str,
    spec: &ChartSpec,
    series: &[Series],
    warnings: &mut Vec<String>,
) -> Result<bool, OutputError> {
    match render_png(spec, series) {
        Ok(png) => {
            out.stage_bytes(name, &png)?;
            Ok(true)
        }
        Err(e) => {
            warnings.push(format!("{name} was not drawn: {e}"));
            Ok(false)
        }
    }
}

fn write_line(w: &mut StagedWriter, line: &str) -> Result<(), OutputError> {
    w.write_all(line.as_bytes())
        .and_then(|()| w.write_all(b"\n"))
        .map_err(|source| OutputError::Write {
            path: w.path().to_path_buf(),
            source,
        })
}

/// Appends `,x`: the shortest text that reads back to `x` at `scalar`'s precision,
/// plain for 0 and 1e-4 ≤ |x| < 1e15, else in scientific notation (`1.5e-9`);
/// `NaN`, `inf`, `-inf` as such.
fn push_num(line: &mut String, x: f64, scalar: Scalar) {
    line.push(',');
    let plain = x == 0.0 || !x.is_finite() || (1e-4..1e15).contains(&x.abs());
    // Writing to a String cannot fail.
    let _ = match (scalar, plain) {
        (Scalar::F64, true) => write!(line, "{x}"),
        (Scalar::F64, false) => write!(line, "{x:e}"),
        (Scalar::F32, true) => write!(line, "{}", x as f32),
        (Scalar::F32, false) => write!(line, "{:e}", x as f32),
    };
}

fn summarise(r: &Run, opts: &CompareOptions, dt: f64, substeps: usize) -> RunComparison {
    // `Simulation::steps` also counts a step that failed.
    let steps = r.primal.n;
    let secs = r.step_time.as_secs_f64();
    let per = |n: u64| (n > 0).then(|| secs * 1e6 / n as f64);
    let compared = !r.key.is_reference() && r.position.n > 0;
    let diff = |x: Option<f64>| if compared { x } else { None };
    let at = |run: &Running| diff(Some(step_time(0.0, run.max_at, dt)));
    RunComparison {
        run: r.key.name(),
        rotation: r.key.rotation,
        scalar: r.key.scalar,
        reference: r.key.is_reference(),
        requested: opts.rotations.contains(&r.key.rotation) && opts.scalars.contains(&r.key.scalar),
        status: if r.error.is_some() {
            RunStatus::Diverged
        } else {
            RunStatus::Completed
        },
        error: r.error.clone(),
        steps,
        simulated_time_s: step_time(0.0, steps, dt),
        diverged_at_step: r.error.is_some().then_some(r.attempted),
        compared_steps: r.position.n,
        max_position_diff_m: diff(r.position.max()),
        max_position_diff_t_s: at(&r.position),
        final_position_diff_m: diff(r.position.last()),
        max_rotation_diff_rad: diff(r.rotation.max()),
        max_rotation_diff_t_s: at(&r.rotation),
        final_rotation_diff_rad: diff(r.rotation.last()),
        max_primal_residual: r.primal.max(),
        mean_primal_residual: r.primal.mean(),
        final_primal_residual: r.primal.last(),
        max_constraint_residual: r.constraint.max(),
        mean_constraint_residual: r.constraint.mean(),
        final_constraint_residual: r.constraint.last(),
        step_time_s: secs,
        time_per_step_us: per(r.attempted),
        time_per_substep_us: per(r.attempted.saturating_mul(substeps as u64)),
    }
}

/// The largest differences among the compared runs that `select` picks, over the time
/// all of them were compared.
fn drift(
    runs: &[RunComparison],
    select: impl Fn(&RunComparison) -> bool,
    dt: f64,
) -> Option<Drift> {
    let picked: Vec<&RunComparison> = runs
        .iter()
        .filter(|r| !r.reference && select(r) && r.compared_steps > 0)
        .collect();
    if picked.is_empty() {
        return None;
    }
    let worst = |f: fn(&RunComparison) -> Option<f64>| {
        picked
            .iter()
            .filter_map(|r| f(r))
            .max_by(f64::total_cmp)
            .unwrap_or(f64::NAN)
    };
    let over = picked.iter().map(|r| r.compared_steps).min().unwrap_or(0);
    Some(Drift {
        runs: picked.iter().map(|r| r.run.clone()).collect(),
        position_m: worst(|r| r.max_position_diff_m),
        rotation_rad: worst(|r| r.max_rotation_diff_rad),
        over_s: step_time(0.0, over, dt),
    })
}

/// `x` to three significant digits in scientific notation (`4.21e-5`), or `0`.
fn sci(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else {
        format!("{x:.2e}")
    }
}

/// A time (or any number) as typed: plain for 0 and 1e-4 ≤ |x| < 1e15, else in
/// scientific notation, shortest round-trip either way.
fn secs(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e15).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

fn opt(x: Option<f64>) -> String {
    x.map_or_else(|| "–".into(), sci)
}

fn conclusions(report: &CompareReport, opts: &CompareOptions) -> Vec<String> {
    let mut lines = Vec::new();
    let reference = &report.runs[0];
    lines.push(format!(
        "Reference: the f64 rotation-matrix run (matrix_f64){}. Differences are the largest over the {} dynamic bodies of the centre-of-mass distance (m) and of the angle ‖Log(R_refᵀ R)‖ (rad).",
        if report.reference_added {
            ", added because it was not requested"
        } else {
            ""
        },
        report.bodies_compared
    ));
    if let Some(e) = &reference.error {
        lines.push(format!(
            "The reference diverged at step {} ({e}); the other runs were compared up to t = {} s only.",
            reference.steps + 1,
            secs(reference.simulated_time_s)
        ));
    }
    for r in report.runs.iter().skip(1) {
        if let Some(e) = &r.error {
            let before = match (r.max_position_diff_m, r.max_rotation_diff_rad) {
                (Some(p), Some(a)) => format!(
                    "before that it stayed within {} m and {} rad of the reference",
                    sci(p),
                    sci(a)
                ),
                _ => "it was never compared with the reference".into(),
            };
            lines.push(format!(
                "{} diverged at step {} (t = {} s: {e}); {before}.",
                r.run,
                r.steps + 1,
                secs(step_time(0.0, r.steps + 1, report.dt_s)),
            ));
        }
    }
    if report.rows == 0 {
        lines.push(format!(
            "No row was written to {}: the row interval ({} steps) exceeds the steps taken.",
            report.csv_file, report.every
        ));
    }
    if opts.scalars.contains(&Scalar::F32) {
        match &report.f32_drift {
            Some(d) => lines.push(format!(
                "f32 runs ({}) stay within {} m and {} rad of the f64 matrix run over {} s.",
                d.runs.join(", "),
                sci(d.position_m),
                sci(d.rotation_rad),
                secs(d.over_s)
            )),
            None => lines.push("No f32 run could be compared with the reference.".into()),
        }
    }
    if opts.rotations.contains(&Rotation::Quaternion) && opts.scalars.contains(&Scalar::F64) {
        match &report.quaternion_f64_difference {
            Some(d) => lines.push(format!(
                "In f64, quaternions and rotation matrices differ by at most {} m and {} rad over {} s.",
                sci(d.position_m),
                sci(d.rotation_rad),
                secs(d.over_s)
            )),
            None => lines.push(
                "The f64 quaternion run could not be compared with the reference.".into(),
            ),
        }
    }
    lines
}

fn markdown(report: &CompareReport) -> String {
    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(s, "# Comparison: {}\n", report.scene);
    let _ = writeln!(
        s,
        "Scene `{}`, Δt = {} s, {} substep(s), {} steps ({} s); a row of `{}` every {} step(s), {} rows.\n",
        report.origin,
        secs(report.dt_s),
        report.substeps,
        report.steps,
        secs(report.duration_s),
        report.csv_file,
        report.every,
        report.rows
    );
    if !report.overrides.is_empty() {
        let o: Vec<String> = report
            .overrides
            .iter()
            .map(|(k, v)| format!("`{k}={v}`"))
            .collect();
        let _ = writeln!(s, "Overrides: {}.\n", o.join(", "));
    }
    for line in &report.conclusions {
        let _ = writeln!(s, "- {line}");
    }
    if !report.plot_files.is_empty() {
        let charts: Vec<String> = report.plot_files.iter().map(|f| format!("`{f}`")).collect();
        let _ = writeln!(
            s,
            "\nCharts of the differences against time: {}.",
            charts.join(", ")
        );
    }
    if !report.warnings.is_empty() {
        let _ = writeln!(s, "\nWarnings:\n");
        for w in &report.warnings {
            let _ = writeln!(s, "- {w}");
        }
    }
    let _ = writeln!(
        s,
        "\n| run | status | steps | max Δp (m) | final Δp (m) | max Δθ (rad) | final Δθ (rad) | mean primal | max primal | mean constraint | max constraint | µs/step |"
    );
    let _ = writeln!(
        s,
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for r in &report.runs {
        let name = if r.reference {
            format!("{} (reference)", r.run)
        } else {
            r.run.clone()
        };
        let status = match r.status {
            RunStatus::Completed => "completed".to_string(),
            RunStatus::Diverged => format!("diverged at step {}", r.steps + 1),
            RunStatus::Interrupted => "interrupted".to_string(),
        };
        let _ = writeln!(
            s,
            "| {name} | {status} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.steps,
            opt(r.max_position_diff_m),
            opt(r.final_position_diff_m),
            opt(r.max_rotation_diff_rad),
            opt(r.final_rotation_diff_rad),
            opt(r.mean_primal_residual),
            opt(r.max_primal_residual),
            opt(r.mean_constraint_residual),
            opt(r.max_constraint_residual),
            r.time_per_step_us
                .map_or_else(|| "–".into(), |t| format!("{t:.2}")),
        );
    }
    let _ = writeln!(
        s,
        "\nResiduals: primal (51) and constraint (52) over every step of each run. Times: wall time inside each run's `step()` alone."
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_put_the_reference_first_once() -> Result<(), CompareError> {
        let opts = CompareOptions {
            rotations: vec![Rotation::Quaternion, Rotation::Quaternion],
            scalars: vec![Scalar::F32],
            every: None,
        };
        let runs = opts.runs()?;
        assert_eq!(runs.len(), 2);
        assert!(runs[0].is_reference());
        assert_eq!(runs[1].name(), "quaternion_f32");
        assert!(!opts.requests_reference());
        assert_eq!(
            columns(&runs),
            [
                "t",
                "matrix_f64_primal",
                "matrix_f64_constraint",
                "quaternion_f32_position_m",
                "quaternion_f32_rotation_rad",
                "quaternion_f32_primal",
                "quaternion_f32_constraint"
            ]
        );
        let all = CompareOptions::default().runs()?;
        assert_eq!(all.len(), 4);
        assert!(CompareOptions::default().requests_reference());
        assert!(matches!(
            CompareOptions {
                rotations: vec![],
                ..CompareOptions::default()
            }
            .runs(),
            Err(CompareError::NoRotations)
        ));
        assert!(matches!(
            CompareOptions {
                scalars: vec![],
                ..CompareOptions::default()
            }
            .runs(),
            Err(CompareError::NoScalars)
        ));
        Ok(())
    }

    #[test]
    fn numbers_read_back_at_their_precision() {
        let mut s = String::new();
        push_num(&mut s, 0.1, Scalar::F64);
        push_num(&mut s, f64::from(0.1f32), Scalar::F32);
        push_num(&mut s, 1.5e-9, Scalar::F64);
        push_num(&mut s, 0.0, Scalar::F64);
        push_num(&mut s, f64::NAN, Scalar::F32);
        push_num(&mut s, f64::from(3e-7f32), Scalar::F32);
        assert_eq!(s, ",0.1,0.1,1.5e-9,0,NaN,3e-7");
    }

    #[test]
    fn a_chart_that_cannot_be_drawn_is_a_warning() -> Result<(), Box<dyn std::error::Error>> {
        let root = tempfile::tempdir()?;
        let mut out = OutputDir::create(root.path())?;
        let spec = ChartSpec {
            log_y: true,
            ..ChartSpec::default()
        };
        // An x range whose width overflows f64 cannot be drawn.
        let wide = [Series {
            label: "x".into(),
            points: vec![(-1e308, 1.0), (1e308, 2.0)],
        }];
        let mut warnings = Vec::new();
        assert!(!stage_chart(
            &mut out,
            "bad.png",
            &spec,
            &wide,
            &mut warnings
        )?);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("bad.png was not drawn: "),
            "{warnings:?}"
        );
        let fine = [Series {
            label: "y".into(),
            points: vec![(0.0, 1e-9), (1.0, 1e-3)],
        }];
        assert!(stage_chart(
            &mut out,
            "good.png",
            &spec,
            &fine,
            &mut warnings
        )?);
        assert_eq!(warnings.len(), 1);
        assert_eq!(out.commit()?, [root.path().join("good.png")]);
        Ok(())
    }

    #[test]
    fn running_statistics() {
        let mut r = Running::default();
        assert_eq!(r.max(), None);
        r.push(1.0, 1);
        r.push(3.0, 2);
        r.push(2.0, 3);
        assert_eq!(
            (r.max(), r.mean(), r.last(), r.max_at),
            (Some(3.0), Some(2.0), Some(2.0), 2)
        );
    }
}
