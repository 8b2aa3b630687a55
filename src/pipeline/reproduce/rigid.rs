//! `lie-xpbd reproduce rigid`: the paper's rigid-body results (Section 9.1, Figure 12
//! and Table 1), run through the one pipeline.
//!
//! # What runs
//! The two shipped scenes, `pendulum` (100 s) and `rps` (10 s), each in the paper's
//! three solve modes ([`MODES`]): `block` (vector constraints, block solves (124)),
//! `rows` (vector constraints, one row at a time (56)) and `scalar` (the normed
//! constraints of Section 5.1, row by row), as the scene files set them: the pendulum
//! turns on the primal correction pass
//! ([`crate::xpbd::SolverOptions::primal_correction`]), which never acts on the normed
//! joints; the robot, where the plain step already meets the targets, does not. Then
//! `block_uncorrected` and `rows_uncorrected`: both scenes without the pass, the
//! paper's plain XPBD step ([`RUNS`]; for the robot the same runs as `block` and
//! `rows`). Every run is an ordinary [`crate::pipeline::run::run_scene`] with
//! `--set solver.mode=MODE` (and `solver.primal_correction=false`) into
//! `DIR/SCENE_RUN/` (its CSV files, plots and summary are there as for `lie-xpbd run`).
//!
//! # What is reported
//! From each run's `residuals.csv` (the residuals (51)–(52) after every step):
//! * the median primal and constraint residual over 0–15 s ([`EARLY_WINDOW_S`]) and over
//!   the whole run (exact medians of the recorded steps);
//! * the blow-up time: the first time at which the state diverged or the constraint
//!   residual exceeded [`BLOWUP_RESIDUAL`] (1 m or rad), `null` if neither happened;
//!   and the first time the constraint residual exceeded
//!   [`crate::pipeline::run::RESIDUAL_WARNING`] (1e-2: the joints came visibly apart);
//! * the time per substep (µs) of the steps alone ([`crate::pipeline::run::RunSummary`]).
//!
//! For the `rps` runs also the largest angle between the plate normal and its
//! prescribed direction after the first 0.1 s (rad), from `states.csv`.
//!
//! Files in `DIR`, written whole at the end of the study (also when interrupted: then
//! marked partial, [`Completeness`]): `summary.json` (the [`Completeness`] fields and,
//! keyed `{scene: {run: {...}}}` with the run keys of [`RUNS`], see [`ModeResult`]),
//! `summary.md` (the table and the ratios of the modes' medians, with and without the
//! pass), and per scene `SCENE_primal.png` and
//! `SCENE_constraint.png`: the residual of every mode against time on a log axis.

use super::{check_seconds, median, read_columns, read_err, Completeness, ReproduceError};
use crate::pipeline::files::OutputDir;
use crate::pipeline::plot::{render_png, series_from_csv, ChartSpec};
use crate::pipeline::run::{run_scene, RunOptions, RunStatus, RESIDUAL_WARNING};
use crate::scene::Scene;
use crate::sim::{Rotation, Scalar};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// The solve modes compared, in the paper's order.
pub const MODES: [&str; 3] = ["block", "rows", "scalar"];

/// The runs of every scene, as (key in `summary.json`, solve mode, primal correction
/// pass forced off): the three modes as the scene files set them (the shipped pendulum
/// turns the pass on, the robot does not; it never acts on the normed joints of
/// `scalar` mode), then
/// `block` and `rows` without the pass (the paper's plain XPBD step), so that the
/// modes also compare as the paper ran them.
pub const RUNS: [(&str, &str, bool); 5] = [
    ("block", "block", false),
    ("rows", "rows", false),
    ("scalar", "scalar", false),
    ("block_uncorrected", "block", true),
    ("rows_uncorrected", "rows", true),
];

/// End of the early window of the medians, s (the paper compares 0–15 s).
pub const EARLY_WINDOW_S: f64 = 15.0;

/// A constraint residual (52) above this (m or rad) counts as a blow-up: the joints are
/// a link length apart, the mechanism no longer exists.
pub const BLOWUP_RESIDUAL: f64 = 1.0;

/// The rps normal error is reported after this start-up time, s.
pub const RPS_SETTLE_S: f64 = 0.1;

/// What `reproduce rigid` runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RigidOptions {
    /// Duration of the pendulum runs, s (the paper's Figure 12: 100 s).
    pub pendulum_seconds: f64,
    /// Duration of the 3-RPS runs, s (the paper: 10 s).
    pub rps_seconds: f64,
    /// Rotation representation of every run.
    pub rotation: Rotation,
    /// Scalar type of every run.
    pub scalar: Scalar,
}

impl Default for RigidOptions {
    /// The paper's durations, f64 rotation matrices.
    fn default() -> Self {
        Self {
            pendulum_seconds: 100.0,
            rps_seconds: 10.0,
            rotation: Rotation::Matrix,
            scalar: Scalar::F64,
        }
    }
}

/// The numbers of one (scene, mode) run, as written to `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeResult {
    /// Median primal residual (51) over 0–15 s.
    pub median_primal_0_15: Option<f64>,
    /// Median constraint residual (52) over 0–15 s, m and rad.
    pub median_constraint_0_15: Option<f64>,
    /// Median primal residual over the whole run.
    pub median_primal: Option<f64>,
    /// Median constraint residual over the whole run, m and rad.
    pub median_constraint: Option<f64>,
    /// First time (s) the run diverged or its constraint residual exceeded 1 (m or
    /// rad); `null` if never.
    pub blowup_time_s: Option<f64>,
    /// First time (s) the constraint residual exceeded 1e-2 (m or rad); `null` if never.
    pub apart_time_s: Option<f64>,
    /// Time per substep, µs (steps alone).
    pub substep_us: f64,
    /// Whether the primal correction pass acted
    /// ([`crate::xpbd::SolverOptions::primal_correction`]).
    pub primal_correction: bool,
    /// How the run ended (`completed`, `diverged`, `interrupted`, `failed`).
    pub status: RunStatus,
    /// Steps taken.
    pub steps: u64,
    /// rps only: largest angle between the plate normal and its prescribed direction
    /// after the first 0.1 s, rad.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_normal_error_rad: Option<f64>,
}

/// The contents of `summary.json`: the [`Completeness`] fields, then
/// `{scene: {run: result}}` (run keys of [`RUNS`]) at the top level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RigidReport {
    /// How much of the study ran (folders `SCENE_RUN`).
    #[serde(flatten)]
    pub completeness: Completeness,
    /// `{scene: {run: result}}`; a run interrupted before its first row is left out.
    #[serde(flatten)]
    pub scenes: BTreeMap<String, BTreeMap<String, ModeResult>>,
}

impl RigidOptions {
    /// Checks the options before anything runs.
    ///
    /// # Errors
    /// [`ReproduceError::InvalidOption`] naming `--pendulum-seconds` or `--rps-seconds`
    /// if a duration is not a positive finite number of seconds, or makes more than
    /// [`crate::scene::MAX_STEPS`] steps.
    pub fn validate(&self) -> Result<(), ReproduceError> {
        for (option, name, seconds) in [
            ("--pendulum-seconds", "pendulum", self.pendulum_seconds),
            ("--rps-seconds", "rps", self.rps_seconds),
        ] {
            let scene = crate::scenes::builtin(name)
                .expect("shipped scene")
                .map_err(|source| ReproduceError::Scene {
                    scene: name.into(),
                    source: Box::new(source),
                })?;
            check_seconds(option, seconds, scene)?;
        }
        Ok(())
    }
}

fn load(name: &str, mode: &str, seconds: f64, plain: bool) -> Result<Scene, ReproduceError> {
    let err = |source| ReproduceError::Scene {
        scene: name.into(),
        source: Box::new(source),
    };
    let mut scene = crate::scenes::builtin(name)
        .expect("shipped scene")
        .map_err(err)?;
    scene.set("solver.mode", mode).map_err(err)?;
    if plain {
        scene
            .set("solver.primal_correction", "false")
            .map_err(err)?;
    }
    scene
        .set("run.duration", &format!("{seconds:?}"))
        .map_err(err)?;
    Ok(scene)
}

fn analyse(
    dir: &Path,
    scene: &str,
    summary: &crate::pipeline::run::RunSummary,
) -> Result<ModeResult, ReproduceError> {
    let path = dir.join("residuals.csv");
    let rows = read_columns(&path, &["t", "primal_residual", "constraint_residual"])?;
    let early = |r: &&Vec<f64>| r[0] <= EARLY_WINDOW_S + 1e-9;
    let apart = rows
        .iter()
        .find(|r| r[2].is_nan() || r[2] > RESIDUAL_WARNING || !r[1].is_finite())
        .map(|r| r[0]);
    let blowup = rows
        .iter()
        .find(|r| r[2].is_nan() || r[2] > BLOWUP_RESIDUAL || !r[1].is_finite())
        .map(|r| r[0])
        .or(if summary.status == RunStatus::Diverged {
            Some(summary.simulated_time_s + summary.settings.dt)
        } else {
            None
        });
    let max_normal_error_rad = if scene == "rps" {
        rps_normal_error(dir)?
    } else {
        None
    };
    Ok(ModeResult {
        median_primal_0_15: median(rows.iter().filter(early).map(|r| r[1])),
        median_constraint_0_15: median(rows.iter().filter(early).map(|r| r[2])),
        median_primal: median(rows.iter().map(|r| r[1])),
        median_constraint: median(rows.iter().map(|r| r[2])),
        blowup_time_s: blowup,
        apart_time_s: apart,
        substep_us: summary.time_per_substep_us,
        primal_correction: summary.settings.primal_correction,
        status: summary.status,
        steps: summary.steps,
        max_normal_error_rad,
    })
}

/// Largest angle between the plate normal (from the plate's rotation vector in
/// `states.csv`) and the prescribed normal after [`RPS_SETTLE_S`], rad; `None` if no
/// row is past it (a run interrupted early).
fn rps_normal_error(dir: &Path) -> Result<Option<f64>, ReproduceError> {
    let path = dir.join("states.csv");
    let rows = read_columns(&path, &["t", "plate_rx", "plate_ry", "plate_rz"])?;
    let mut worst: Option<f64> = None;
    for r in rows.iter().filter(|r| r[0] > RPS_SETTLE_S) {
        let m = crate::lie::so3::exp_matrix(&nalgebra::Vector3::new(r[1], r[2], r[3]));
        let e = crate::scenes::rps::normal_error(&m, r[0]);
        let e = if e.is_nan() { f64::INFINITY } else { e };
        worst = Some(worst.map_or(e, |w| w.max(e)));
    }
    Ok(worst)
}

/// Runs the study into `out` (module docs). `interrupt` stops the current run (its
/// files keep the steps taken) and the study after it; what was computed is still
/// summarised. `progress` is told (run index, run count, scene, mode) before each run.
///
/// # Errors
/// [`ReproduceError::InvalidOption`] from [`RigidOptions::validate`] (nothing is run or
/// written); [`ReproduceError`] if a run or the study's files cannot be written.
pub fn reproduce_rigid(
    out: &Path,
    opts: &RigidOptions,
    interrupt: &AtomicBool,
    progress: &dyn Fn(usize, usize, &str, &str),
) -> Result<RigidReport, ReproduceError> {
    opts.validate()?;
    let scenes = [
        ("pendulum", opts.pendulum_seconds),
        ("rps", opts.rps_seconds),
    ];
    let mut dir = OutputDir::create(out)?;
    let mut names = vec!["summary.json".to_string(), "summary.md".to_string()];
    for (s, _) in &scenes {
        names.push(format!("{s}_primal.png"));
        names.push(format!("{s}_constraint.png"));
    }
    dir.check_targets(&names.iter().map(String::as_str).collect::<Vec<_>>())?;
    let mut completeness = Completeness::planned(
        scenes
            .iter()
            .flat_map(|(s, _)| RUNS.iter().map(move |(key, _, _)| format!("{s}_{key}"))),
    );
    let mut report = BTreeMap::new();
    let total = scenes.len() * RUNS.len();
    let mut k = 0;
    'all: for (scene_name, seconds) in scenes {
        for (key, mode, plain) in RUNS {
            if interrupt.load(std::sync::atomic::Ordering::Relaxed) {
                break 'all;
            }
            progress(k, total, scene_name, key);
            k += 1;
            let scene = load(scene_name, mode, seconds, plain)?;
            let run_dir = out.join(format!("{scene_name}_{key}"));
            let run_opts = RunOptions {
                rotation: opts.rotation,
                scalar: opts.scalar,
                out: run_dir.clone(),
                progress: None,
                vtk: false,
            };
            let summary =
                run_scene(&scene, &run_opts, interrupt).map_err(|source| ReproduceError::Run {
                    scene: scene_name.into(),
                    mode: key.into(),
                    source: Box::new(source),
                })?;
            completeness.ran(&format!("{scene_name}_{key}"), summary.status);
            if summary.status == RunStatus::Interrupted && summary.rows == 0 {
                // Nothing recorded: nothing to analyse (its folder says so).
                continue;
            }
            let result = analyse(&run_dir, scene_name, &summary)?;
            report
                .entry(scene_name.to_string())
                .or_insert_with(BTreeMap::new)
                .insert(key.to_string(), result);
        }
        plots(&mut dir, out, scene_name, report.get(scene_name))?;
    }
    let report = RigidReport {
        completeness,
        scenes: report,
    };
    dir.stage_json("summary.json", &report)?;
    dir.stage_bytes("summary.md", markdown(&report, opts).as_bytes())?;
    dir.commit()?;
    Ok(report)
}

fn plots(
    dir: &mut OutputDir,
    out: &Path,
    scene: &str,
    runs: Option<&BTreeMap<String, ModeResult>>,
) -> Result<(), ReproduceError> {
    let Some(runs) = runs else { return Ok(()) };
    for (column, what, unit) in [
        ("primal_residual", "primal", "primal residual (51)"),
        (
            "constraint_residual",
            "constraint",
            "constraint residual (52), m and rad",
        ),
    ] {
        let mut series = Vec::new();
        for mode in RUNS.iter().map(|r| r.0).filter(|m| runs.contains_key(*m)) {
            let path = out.join(format!("{scene}_{mode}")).join("residuals.csv");
            let mut s =
                series_from_csv(&path, "t", &[column], 4000).map_err(|e| read_err(&path, e))?;
            let interrupted = runs[mode].status == RunStatus::Interrupted;
            for x in &mut s {
                x.label = if interrupted {
                    format!("{mode} (interrupted)")
                } else {
                    mode.to_string()
                };
            }
            series.extend(s);
        }
        let spec = ChartSpec {
            title: format!("{scene}: {what} residual per solve mode"),
            x_label: "t (s)".into(),
            y_label: unit.into(),
            log_y: true,
        };
        // A chart that cannot be drawn is left out; the data are in the CSV files.
        if let Ok(png) = render_png(&spec, &series) {
            dir.stage_bytes(&format!("{scene}_{what}.png"), &png)?;
        }
    }
    Ok(())
}

fn e(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:.3e}"))
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.3e}", a / b),
        _ => "–".into(),
    }
}

/// The Markdown summary of a report.
pub fn markdown(report: &RigidReport, opts: &RigidOptions) -> String {
    let mut s = report.completeness.banner();
    s += "# Rigid-body results (Section 9.1, Figure 12, Table 1)\n\n";
    s += &format!(
        "Pendulum {} s, 3-RPS {} s; {} rotations in {}. Residuals (51)–(52) after every step; medians are exact over the recorded steps.\n\n",
        opts.pendulum_seconds, opts.rps_seconds, opts.rotation, opts.scalar
    );
    s += "The shipped pendulum scene turns on the primal correction pass (`solver.primal_correction`: after the projections, every body moves by −𝓜⁻¹r, r the residual of (51) at the end state); it never acts on the normed joints of `scalar` mode, whose gradients jump at C = 0. The shipped 3-RPS scene leaves it off. `block_uncorrected` and `rows_uncorrected` are the paper's plain XPBD step (for the 3-RPS robot the same as `block` and `rows`).\n\n";
    s += "| scene | run | primal correction | median primal 0–15 s | median constraint 0–15 s | median primal | median constraint | blow-up (s) | apart > 1e-2 (s) | µs/substep | status |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (scene, runs) in &report.scenes {
        for (mode, _, _) in RUNS {
            let Some(r) = runs.get(mode) else { continue };
            s += &format!(
                "| {scene} | {mode} | {} | {} | {} | {} | {} | {} | {} | {:.3} | {} |\n",
                if r.primal_correction { "on" } else { "off" },
                e(r.median_primal_0_15),
                e(r.median_constraint_0_15),
                e(r.median_primal),
                e(r.median_constraint),
                r.blowup_time_s.map_or("none".into(), |t| format!("{t:.3}")),
                r.apart_time_s.map_or("none".into(), |t| format!("{t:.3}")),
                r.substep_us,
                r.status
            );
        }
    }
    s += "\n## Ratios of the medians over 0–15 s\n\n| scene | block, rows | primal scalar/block | primal rows/block | constraint scalar/block | constraint rows/block | µs block/scalar |\n|---|---|---|---|---|---|---|\n";
    s += if report.completeness.complete {
        ""
    } else {
        "Partial study: ratios involving an interrupted run are left out (–).\n\n"
    };
    for (scene, runs) in &report.scenes {
        for (block, rows, label) in [
            ("block", "rows", "as the scene sets"),
            ("block_uncorrected", "rows_uncorrected", "uncorrected"),
        ] {
            // An interrupted run's medians cover part of its duration: no ratio.
            let get = |m: &str, f: fn(&ModeResult) -> Option<f64>| {
                runs.get(m)
                    .filter(|r| r.status != RunStatus::Interrupted)
                    .and_then(f)
            };
            s += &format!(
                "| {scene} | {label} | {} | {} | {} | {} | {} |\n",
                ratio(
                    get("scalar", |r| r.median_primal_0_15),
                    get(block, |r| r.median_primal_0_15)
                ),
                ratio(
                    get(rows, |r| r.median_primal_0_15),
                    get(block, |r| r.median_primal_0_15)
                ),
                ratio(
                    get("scalar", |r| r.median_constraint_0_15),
                    get(block, |r| r.median_constraint_0_15)
                ),
                ratio(
                    get(rows, |r| r.median_constraint_0_15),
                    get(block, |r| r.median_constraint_0_15)
                ),
                ratio(
                    get(block, |r| Some(r.substep_us)),
                    get("scalar", |r| Some(r.substep_us))
                ),
            );
        }
    }
    if let Some(runs) = report.scenes.get("rps") {
        s += "\n## 3-RPS: plate normal against its prescribed direction after 0.1 s\n\n";
        for (mode, _, _) in RUNS {
            if let Some(r) = runs.get(mode) {
                s += &format!(
                    "- {mode}: largest angle {} rad\n",
                    e(r.max_normal_error_rad)
                );
            }
        }
    }
    s += "\nEach run's files (residuals.csv, states.csv, energy.csv, lambda.csv, plots, summary) are in `SCENE_RUN/`.\n";
    s
}
