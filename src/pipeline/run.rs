//! Running a scene to files: the one path every experiment takes.
//!
//! [`run_scene`] builds the scene in the requested representation and scalar, steps it
//! for the scene's duration while a [`Recorder`] streams the channels to disk, and
//! writes, in the run's folder:
//! * the channel CSV files (see [`super::record`]);
//! * `scene.toml`: the scene as run, overrides included;
//! * `summary.json` ([`RunSummary`]) and `summary.md` (the same, readable).
//!
//! Every file appears whole under its final name or not at all: all are written as
//! hidden temporary files in the folder, then renamed together. A run that diverges or
//! is interrupted (the `interrupt` flag, set by Ctrl-C in the program) still writes its
//! files with the rows computed so far, and says so in `status`.

use super::files::{OutputDir, OutputError};
use super::record::{Recorder, RunStats};
use crate::scene::{Channel, Scene, SceneError};
use crate::sim::{build_simulation, Rotation, Scalar};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use thiserror::Error;

mod report;
mod warnings;
pub use report::markdown;
use warnings::warnings;

/// A constraint residual (52) above this (m or rad) means the joints came apart: the
/// run is reported as not physically meaningful ([`RunSummary::joints_came_apart`];
/// the program exits with [`EXIT_JOINTS_APART`]).
pub const RESIDUAL_WARNING: f64 = 1e-2;

/// The program's exit code for a run that took all its steps but whose joints came
/// apart ([`RunSummary::joints_came_apart`]): its outputs are all written, but they do
/// not describe the jointed system.
pub const EXIT_JOINTS_APART: u8 = 4;

/// An energy rise above this fraction of the energy available above rest is reported:
/// backward Euler only removes energy, so a rise is round-off or an unstable setting.
/// Not checked in a driven scene ([`crate::scene::SceneFile::is_driven`]), which is given
/// work.
pub const ENERGY_GAIN_WARNING: f64 = 1e-3;

/// A progress callback: (steps done, steps planned), called after every step.
pub type Progress = std::sync::Arc<dyn Fn(u64, u64) + Send + Sync>;

/// How a run is run.
#[derive(Clone)]
pub struct RunOptions {
    /// Rotation representation.
    pub rotation: Rotation,
    /// Scalar type.
    pub scalar: Scalar,
    /// The run's folder (created if missing; files of the same names are replaced, and
    /// the run files and vtk frames an earlier run wrote there (as its `summary.json`
    /// lists them) that this run does not are removed once this run's files are
    /// written; other files are left alone).
    pub out: PathBuf,
    /// Called after every step with (steps done, steps planned); e.g. a progress bar.
    pub progress: Option<Progress>,
    /// Also write a ParaView time series (`vtk/frame_NNNNNN.vtp` every `run.every`
    /// steps and `vtk/frames.pvd`; see [`super::vtk`]).
    pub vtk: bool,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// All steps were taken.
    Completed,
    /// A step produced a non-finite state; the files hold the steps before it.
    Diverged,
    /// Stopped by the user (Ctrl-C or SIGTERM); the files hold the steps taken.
    Interrupted,
    /// Writing the outputs failed during the run, which stopped there (see `error`).
    Failed,
}

impl RunStatus {
    /// The status as `summary.json` and every table write it: `completed`,
    /// `diverged`, `interrupted` or `failed`.
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Diverged => "diverged",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The settings a run used.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSettings {
    /// Rotation representation.
    pub rotation: String,
    /// Scalar type.
    pub scalar: String,
    /// Time step, s.
    pub dt: f64,
    /// Substeps per step.
    pub substeps: usize,
    /// Iterations per substep.
    pub iterations: usize,
    /// `block`, `rows` or `scalar`.
    pub mode: String,
    /// Whether the primal correction pass acted
    /// ([`crate::xpbd::SolverOptions::primal_correction`]; skipped for the normed
    /// constraints of `scalar` mode and in scenes with rods).
    pub primal_correction: bool,
    /// `gauss_seidel` or `direct` (`[solver] joint_solve`).
    pub joint_solve: String,
    /// Gravity, m/s².
    pub gravity: [f64; 3],
    /// Duration asked for, s.
    pub duration_s: f64,
    /// A row every this many steps.
    pub every: u64,
    /// Channels recorded.
    pub record: Vec<String>,
    /// `--set` overrides applied to the scene file, as `key=value`.
    pub overrides: Vec<String>,
    /// Steps planned: ⌈duration/dt⌉.
    pub steps_planned: u64,
}

/// The contents of `summary.json`. Non-finite numbers are written as `null`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// Scene name.
    pub scene: String,
    /// Where the scene came from.
    pub scene_origin: String,
    /// Version of this crate.
    pub version: String,
    /// Settings used.
    pub settings: RunSettings,
    /// How the run ended.
    pub status: RunStatus,
    /// The error that ended the run early, if any.
    pub error: Option<String>,
    /// Steps taken.
    pub steps: u64,
    /// Substeps taken.
    pub substeps: u64,
    /// Simulated time reached, s.
    pub simulated_time_s: f64,
    /// Rows after steps in each CSV file (the state files `energy.csv`, `states.csv`
    /// and `velocities.csv` also start with the initial state at t = 0).
    pub rows: u64,
    /// Wall time of the simulation loop (stepping, residuals, rows written to the
    /// buffered files), s.
    pub wall_time_s: f64,
    /// Wall time inside the steps alone, s.
    pub step_time_s: f64,
    /// `step_time_s` per substep, µs (the measure of the paper's Table 1).
    pub time_per_substep_us: f64,
    /// Median over every step of the primal residual (51) (within a relative 1e-4).
    pub median_primal_residual: Option<f64>,
    /// Median over every step of the constraint residual (52), m and rad (within a
    /// relative 1e-4).
    pub median_constraint_residual: Option<f64>,
    /// Largest primal residual over every step.
    pub max_primal_residual: Option<f64>,
    /// Largest constraint residual over every step, m and rad.
    pub max_constraint_residual: Option<f64>,
    /// Largest violation of the joints' hard rows over every step
    /// ([`crate::xpbd::World::hard_violation`]: √ΣC² over the hard rows of the joints
    /// and other constraints, violated inequality rows included; rods and compliant
    /// rows left out), m and rad; `null` if it was NaN.
    pub max_joint_violation: Option<f64>,
    /// Total energy (kinetic + gravitational potential) before the first step, J.
    pub energy_initial_j: f64,
    /// Total energy after the last step, J.
    pub energy_final_j: f64,
    /// Initial kinetic energy plus the potential energy released down to the lowest
    /// point each body reached, J: the energy against which changes are judged.
    pub energy_available_j: f64,
    /// (final − initial) / available energy.
    pub energy_change_fraction: Option<f64>,
    /// The joints that broke (`break_force` / `break_torque`), in order.
    pub breaks: Vec<crate::sim::Break>,
    /// Whether the joints' hard rows were violated by more than [`RESIDUAL_WARNING`] at
    /// some step (`max_joint_violation`, or NaN): the joints came apart, and `warnings`
    /// says so. A large constraint residual (52) of compliant rows (a rod, a spring)
    /// alone is warned about but does not count.
    pub joints_came_apart: bool,
    /// Signs that the run is not physically meaningful; empty if none.
    pub warnings: Vec<String>,
    /// Files written, relative to the run's folder.
    pub files: Vec<String>,
}

impl RunSummary {
    /// The program's exit code for this run: 0 completed, [`EXIT_JOINTS_APART`] (4)
    /// completed but the joints came apart, 3 diverged, 130 interrupted, 1 the outputs
    /// could not be written.
    pub fn exit_code(&self) -> u8 {
        match self.status {
            RunStatus::Completed if self.joints_came_apart => EXIT_JOINTS_APART,
            RunStatus::Completed => 0,
            RunStatus::Diverged => 3,
            RunStatus::Interrupted => 130,
            RunStatus::Failed => 1,
        }
    }
}

/// Why [`run_scene`] failed.
#[derive(Debug, Error)]
pub enum RunError {
    /// The scene cannot be built in this representation and scalar (exit code 2).
    #[error(transparent)]
    Scene(#[from] SceneError),
    /// The output folder is unusable (exit code 2: nothing was run).
    #[error(transparent)]
    OutputDir(OutputError),
    /// The run finished but its files could not be written (exit code 1); the summary
    /// is still available, with status [`RunStatus::Failed`] and in `files` only the
    /// files actually written (none, unless a commit failed part-way). Its statistics
    /// may be incomplete (zero if the recorder failed), so the program does not print
    /// it.
    #[error("{source}")]
    Write {
        /// What failed.
        source: OutputError,
        /// The run's summary.
        summary: Box<RunSummary>,
    },
    /// An interrupt came before the run started (a sweep's later runs): nothing was
    /// run and no folder was created (exit code 130).
    #[error("not started: interrupted before this run began (no folder created)")]
    NotStarted,
}

impl RunError {
    /// The program's exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::Scene(_) | RunError::OutputDir(_) => 2,
            RunError::Write { .. } => 1,
            RunError::NotStarted => 130,
        }
    }
}

/// Runs `scene` with `opts`; `interrupt`, when set, stops the run after the current
/// step (the files then hold the steps taken).
///
/// # Errors
/// [`RunError`]: the scene cannot be built, the folder is unusable, or the files could
/// not be written (the summary is then inside the error).
pub fn run_scene(
    scene: &Scene,
    opts: &RunOptions,
    interrupt: &AtomicBool,
) -> Result<RunSummary, RunError> {
    let file = scene.file();
    let steps_planned = scene.steps()?;
    let mut sim = build_simulation(scene, opts.rotation, opts.scalar)?;
    let mut out = OutputDir::create(&opts.out).map_err(RunError::OutputDir)?;
    // What an earlier run wrote here, by its summary, read before anything is replaced.
    let earlier = earlier_run_files(&opts.out);
    // Temporaries of an earlier run into this folder that was killed before writing its
    // files (e.g. by a second Ctrl-C).
    out.remove_stale_temporaries();
    super::vtk::remove_stale_temporaries(&opts.out.join("vtk"));
    let mut names: Vec<&str> = file.run.record.iter().map(|c| c.file_name()).collect();
    names.extend([
        "scene.toml",
        "summary.json",
        "summary.md",
        "residuals.png",
        "energy.png",
    ]);
    out.check_targets(&names).map_err(RunError::OutputDir)?;
    let mut rec = Recorder::new(
        &out,
        sim.as_ref(),
        &file.run.record,
        file.run.every,
        file.solver.dt,
    )
    .map_err(RunError::OutputDir)?;

    let mut vtk = if opts.vtk {
        // The file's bodies with their shapes, then the rods' nodes (no shape).
        let bodies: Vec<_> = sim
            .body_names()
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), file.bodies.get(i).and_then(|b| b.shape)))
            .collect();
        Some(super::vtk::VtkWriter::new(&opts.out, &bodies).map_err(|e| {
            RunError::OutputDir(OutputError::Write {
                path: opts.out.join("vtk"),
                source: std::io::Error::other(e.to_string()),
            })
        })?)
    } else {
        None
    };
    if let Some(w) = vtk.as_mut() {
        w.write_frame(0.0, sim.as_ref()).map_err(|e| {
            RunError::OutputDir(OutputError::Write {
                path: opts.out.join("vtk"),
                source: std::io::Error::other(e.to_string()),
            })
        })?;
    }
    // Only the hard rows: compliant rows (springs, rods) may start deformed.
    let initial_violation = sim.hard_violation();
    let start = Instant::now();
    let mut in_step = Duration::ZERO;
    let mut status = RunStatus::Completed;
    let mut error = None;
    let mut write_error = None;
    for k in 0..steps_planned {
        if interrupt.load(Ordering::Relaxed) {
            status = RunStatus::Interrupted;
            break;
        }
        let t0 = Instant::now();
        let r = sim.step();
        in_step += t0.elapsed();
        if let Err(e) = r {
            status = RunStatus::Diverged;
            let t = super::files::step_time(0.0, k + 1, file.solver.dt);
            error = Some(format!("{e} (at step {}, t = {t} s)", k + 1));
            break;
        }
        if let Err(e) = rec.observe(sim.as_ref()) {
            status = RunStatus::Failed;
            error = Some(format!("writing the outputs failed at step {}: {e}", k + 1));
            write_error = Some(e);
            break;
        }
        let last = k + 1 == steps_planned || interrupt.load(Ordering::Relaxed);
        if let Some(w) = vtk
            .as_mut()
            .filter(|_| last || (k + 1).is_multiple_of(file.run.every))
        {
            let t = super::files::step_time(0.0, k + 1, file.solver.dt);
            if let Err(e) = w.write_frame(t, sim.as_ref()) {
                status = RunStatus::Failed;
                error = Some(format!(
                    "writing the ParaView frame at t = {t} s failed: {e}"
                ));
                write_error = Some(OutputError::Write {
                    path: opts.out.join("vtk"),
                    source: std::io::Error::other(e.to_string()),
                });
                break;
            }
        }
        if let Some(p) = &opts.progress {
            p(k + 1, steps_planned);
        }
    }
    let wall = start.elapsed();
    let steps = sim.steps();
    // The final state, if `run.every` skipped it (a diverged step's state is not one).
    if matches!(status, RunStatus::Completed | RunStatus::Interrupted) {
        if let Err(e) = rec.write_final_row(sim.as_ref()) {
            status = RunStatus::Failed;
            error = Some(format!("writing the outputs failed at the last step: {e}"));
            write_error = Some(e);
        }
    }
    let stats = match rec.finish(&mut out) {
        Ok(s) => s,
        Err(e) => {
            write_error.get_or_insert(e);
            RunStats::default()
        }
    };
    // Frames written and whether a `.pvd` lists them (not if the writer failed).
    let mut vtk_written = (0, false);
    if let Some(w) = vtk {
        vtk_written.0 = w.frames();
        if let Err(e) = w.finish() {
            write_error.get_or_insert(OutputError::Write {
                path: opts.out.join("vtk"),
                source: std::io::Error::other(e.to_string()),
            });
        } else {
            vtk_written.1 = true;
        }
    }
    let mut summary = summarize(
        initial_violation,
        scene,
        opts,
        steps_planned,
        steps,
        status,
        error,
        wall,
        in_step,
        &stats,
    );
    summary.settings.primal_correction = sim.primal_correction();
    summary.breaks = sim.breaks();
    let staged = (|| {
        out.stage_with(
            "scene.toml",
            |w| std::io::Write::write_all(w, scene.to_toml().as_bytes()),
            |path, source| OutputError::Write { path, source },
        )?;
        for (name, title, y, series) in [
            (
                "residuals.png",
                "Residuals (51)-(52)",
                "residual",
                &stats.plot_residuals,
            ),
            (
                "energy.png",
                "Total energy",
                "energy, J",
                &stats.plot_energy,
            ),
        ] {
            let spec = super::plot::ChartSpec {
                title: format!("{}: {title}", summary.scene),
                x_label: "t, s".into(),
                y_label: y.into(),
                log_y: name == "residuals.png",
            };
            // A plot that cannot be drawn is reported, never fatal to the run's data.
            match super::plot::render_png(&spec, series) {
                Ok(png) => {
                    out.stage_bytes(name, &png)?;
                    summary.files.push(name.to_string());
                }
                Err(e) => summary.warnings.push(format!("{name} was not drawn: {e}")),
            }
        }
        if opts.vtk {
            summary
                .files
                .push(format!("{}/{}", super::vtk::VTK_DIR, super::vtk::PVD_FILE));
        }
        out.stage_json("summary.json", &summary)?;
        out.stage_bytes("summary.md", markdown(&summary).as_bytes())?;
        Ok::<_, OutputError>(())
    })();
    if let Some(e) = write_error.or(staged.err()) {
        return Err(write_failed(e, summary));
    }
    if let Err(e) = out.commit() {
        return Err(write_failed(e, summary));
    }
    retire_stale_outputs(&opts.out, &summary.files, &earlier, vtk_written);
    Ok(summary)
}

/// The files (relative to `dir`) that an earlier run into `dir` listed as written in its
/// `summary.json`; empty if there is no such summary or it cannot be read (then no
/// earlier run's files are known, and none are deleted).
fn earlier_run_files(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("summary.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|v| {
            v.get("files")?.as_array().map(|files| {
                files
                    .iter()
                    .filter_map(|f| f.as_str().map(str::to_string))
                    .collect()
            })
        })
        .unwrap_or_default()
}

/// After a run's files are committed, deletes what an earlier run into the same folder
/// wrote and this run did not, so that the folder holds one run: the program's own run
/// files (the channel CSVs, plots, `scene.toml`, summaries) that the earlier run's
/// summary lists (`earlier`) and that are not in `written`, and, if the earlier run
/// wrote a ParaView series (`vtk/frames.pvd` in `earlier`), in `vtk/` the frames beyond
/// the `vtk.0` written now and a `frames.pvd` this run did not write (`vtk.1`). Files
/// no earlier run of the program wrote (a user's own files, even of the same names) are
/// never touched.
fn retire_stale_outputs(dir: &Path, written: &[String], earlier: &[String], vtk: (usize, bool)) {
    use crate::scene::Channel;
    let channels = [
        Channel::Residuals,
        Channel::Energy,
        Channel::Poses,
        Channel::Velocities,
        Channel::Lambda,
    ];
    let own = channels.iter().map(|c| c.file_name()).chain([
        "scene.toml",
        "summary.json",
        "summary.md",
        "residuals.png",
        "energy.png",
    ]);
    for name in own {
        let path = dir.join(name);
        let stale = earlier.iter().any(|e| e == name) && !written.iter().any(|w| w == name);
        if stale && path.is_file() {
            let _ = std::fs::remove_file(path);
        }
    }
    let pvd = format!("{}/{}", super::vtk::VTK_DIR, super::vtk::PVD_FILE);
    if earlier.contains(&pvd) {
        super::vtk::remove_frames_from(&dir.join(super::vtk::VTK_DIR), vtk.0, vtk.1);
    }
}

/// The error of a run whose outputs could not all be written: its summary says so
/// (status failed, with the write error), whatever the simulation loop ended with.
fn write_failed(source: OutputError, mut summary: RunSummary) -> RunError {
    // Nothing staged was kept, but for the files a commit replaced before it failed.
    summary.files = match &source {
        OutputError::Commit { replaced, .. } => replaced
            .iter()
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect(),
        _ => Vec::new(),
    };
    if summary.status != RunStatus::Failed {
        summary.status = RunStatus::Failed;
        summary
            .error
            .get_or_insert_with(|| format!("writing the outputs failed: {source}"));
    }
    RunError::Write {
        source,
        summary: Box::new(summary),
    }
}

fn finite(x: Option<f64>) -> Option<f64> {
    x.filter(|v| v.is_finite())
}

#[allow(clippy::too_many_arguments)]
fn summarize(
    initial_violation: f64,
    scene: &Scene,
    opts: &RunOptions,
    steps_planned: u64,
    steps: u64,
    status: RunStatus,
    error: Option<String>,
    wall: Duration,
    in_step: Duration,
    stats: &RunStats,
) -> RunSummary {
    let f = scene.file();
    let substeps = steps * f.solver.substeps as u64;
    let settings = RunSettings {
        rotation: opts.rotation.name().into(),
        scalar: opts.scalar.name().into(),
        dt: f.solver.dt,
        substeps: f.solver.substeps,
        iterations: f.solver.iterations,
        mode: match f.solver.mode {
            crate::scene::ModeSpec::Block => "block".into(),
            crate::scene::ModeSpec::Rows => "rows".into(),
            crate::scene::ModeSpec::Scalar => "scalar".into(),
        },
        primal_correction: false,
        joint_solve: f.solver.joint_solve.name().into(),
        gravity: f.solver.gravity,
        duration_s: f.run.duration,
        every: f.run.every,
        record: f
            .run
            .record
            .iter()
            .map(|c: &Channel| c.name().to_string())
            .collect(),
        overrides: scene
            .overrides()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect(),
        steps_planned,
    };
    // Kinetic energy at the start is the total minus the potential; the lowest-point
    // potential release is measured.
    let available = stats.lowest_potential.max(0.0) + stats.kinetic_initial;
    let change = stats.energy_final - stats.energy_initial;
    let mut summary = RunSummary {
        scene: scene.name(),
        scene_origin: scene.origin().to_string(),
        version: env!("CARGO_PKG_VERSION").into(),
        settings,
        status,
        error,
        steps,
        substeps,
        simulated_time_s: super::files::step_time(0.0, steps, f.solver.dt),
        rows: stats.rows,
        wall_time_s: wall.as_secs_f64(),
        step_time_s: in_step.as_secs_f64(),
        time_per_substep_us: if substeps > 0 {
            in_step.as_secs_f64() * 1e6 / substeps as f64
        } else {
            0.0
        },
        median_primal_residual: finite(stats.primal.quantile(0.5)),
        median_constraint_residual: finite(stats.constraint.quantile(0.5)),
        max_primal_residual: stats.primal.max(),
        max_constraint_residual: stats.constraint.max(),
        energy_initial_j: stats.energy_initial,
        energy_final_j: stats.energy_final,
        energy_available_j: available,
        energy_change_fraction: (available > 0.0 && change.is_finite()).then(|| change / available),
        breaks: Vec::new(),
        max_joint_violation: Some(stats.max_hard_violation).filter(|v| v.is_finite()),
        joints_came_apart: stats.max_hard_violation.is_nan()
            || stats.max_hard_violation > RESIDUAL_WARNING,
        warnings: Vec::new(),
        files: Vec::new(),
    };
    summary.warnings = warnings(scene, opts, &summary, stats);
    if initial_violation.is_nan() || initial_violation > RESIDUAL_WARNING {
        summary.warnings.insert(0, format!(
            "the joints' hard rows are violated by {initial_violation:.3e} (m or rad, norm over those rows) before the first step: the initial poses do not satisfy the joints, so the solver yanks the bodies together; check the bodies' positions and orientations against the joints' frame1/frame2"
        ));
    }
    if !(summary.energy_final_j.is_finite() && summary.energy_initial_j.is_finite()) {
        summary.warnings.push(format!(
            "the energy is not finite ({} J → {} J): some state is beyond the scalar's range (e.g. a velocity or gravity near 1e300); the run is not meaningful",
            summary.energy_initial_j, summary.energy_final_j
        ));
    }
    let mut files: Vec<String> = f
        .run
        .record
        .iter()
        .map(|c| c.file_name().to_string())
        .collect();
    files.extend(["scene.toml", "summary.json", "summary.md"].map(String::from));
    summary.files = files;
    summary
}

/// The folder a run of `scene` writes to by default: `out/<scene name>`.
pub fn default_out(scene: &Scene) -> PathBuf {
    Path::new("out").join(scene.name())
}
