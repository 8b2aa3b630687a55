//! `lie-xpbd reproduce NAME`: the paper's experiments as studies, each a set of
//! ordinary scene runs ([`super::run::run_scene`]) through the one pipeline, with
//! summaries, tables and plots written whole into the study's directory.
//!
//! One module per study: [`rigid`] (Section 9.1, Figure 12, Table 1), [`cantilever`]
//! (Section 9.2, Figure 13), [`shear_locking`] (Section 9.3, Figure 14), [`spring`]
//! (Section 9.4, Figure 15), [`figure11`] (Figure 11), and [`f32`](mod@f32) (plain f32, compensated
//! f32 and f64 side by side). This module holds what they
//! share: how much of a study ran ([`Completeness`]), the error type
//! ([`ReproduceError`]), the checks of duration options, reading a run's CSV columns
//! back, medians, and staging charts and summaries.

pub mod cantilever;
pub mod f32;
pub mod figure11;
pub mod rigid;
pub mod shear_locking;
pub mod spring;

pub use rigid::{
    markdown, reproduce_rigid, ModeResult, RigidOptions, RigidReport, BLOWUP_RESIDUAL,
    EARLY_WINDOW_S, MODES, RPS_SETTLE_S, RUNS,
};

use super::files::{OutputDir, OutputError};
use super::plot::{render_png, ChartSpec};
use super::run::{RunError, RunStatus};
use crate::scene::{Scene, SceneError};
use serde::Serialize;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// How much of a study ran, and whether it was the cheap `--quick` configuration, at
/// the top of every study's `summary.json` (flattened into its report) and, when partial
/// or quick, as the first lines of its `summary.md` ([`Completeness::banner`]). Runs are named by their folder relative to the study's
/// `DIR` (e.g. `pendulum_block`, `runs/linear_4`).
///
/// A study interrupted by Ctrl-C (the `interrupt` flag) stops after its current step:
/// that run is `interrupted_run` (its folder holds the steps taken), the runs before it
/// are `finished_runs` (their data are kept and summarised), and the runs never started
/// are `not_run`. Aggregates over runs (fitted orders, ratios, largest errors) are then
/// left out (`null`) or flagged as partial in the study's summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Completeness {
    /// Whether every planned run ran to its end (completed or diverged).
    pub complete: bool,
    /// The run that was cut short by the interrupt, if any.
    pub interrupted_run: Option<String>,
    /// The runs that ran to their end, in order.
    pub finished_runs: Vec<String>,
    /// The planned runs never started, in order.
    pub not_run: Vec<String>,
    /// Whether the study ran its cheap configuration (`--quick`): fewer or shorter
    /// runs than the study's own, not at rest; its numbers are not the study's result.
    pub quick: bool,
}

impl Completeness {
    /// A study that will run `planned` (none run yet).
    pub(crate) fn planned(planned: impl IntoIterator<Item = String>) -> Self {
        Self {
            complete: false,
            interrupted_run: None,
            finished_runs: Vec::new(),
            not_run: planned.into_iter().collect(),
            quick: false,
        }
    }

    /// The same, marked as the study's cheap configuration if `quick` (`--quick`).
    pub(crate) fn quick(mut self, quick: bool) -> Self {
        self.quick = quick;
        self
    }

    /// Records that run `name` ended with `status` (an interrupted one is the
    /// interrupted run, any other status finished it).
    pub(crate) fn ran(&mut self, name: &str, status: RunStatus) {
        self.not_run.retain(|n| n != name);
        if status == RunStatus::Interrupted {
            self.interrupted_run = Some(name.to_string());
        } else {
            self.finished_runs.push(name.to_string());
        }
        self.complete = self.interrupted_run.is_none() && self.not_run.is_empty();
    }

    /// Whether run `name` ran to its end.
    pub fn finished(&self, name: &str) -> bool {
        self.finished_runs.iter().any(|n| n == name)
    }

    /// The first lines of the `summary.md` of a quick or partial study (empty for a
    /// complete study of the study's own configuration).
    pub fn banner(&self) -> String {
        let quick = if self.quick {
            "> **QUICK RUN (`--quick`): the study's cheap configuration (fewer element counts or slenderness ratios, shorter runs, not at rest). Its numbers show that the study runs; they are not the study's result.**\n\n"
        } else {
            ""
        };
        if self.complete {
            return quick.to_string();
        }
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        quick.to_string() + &format!(
            "> **PARTIAL RESULT: the study was interrupted.** Interrupted run: {}. Finished runs ({}): {}. Not run ({}): {}. The tables below hold the runs made; aggregates over runs are left out or marked partial, and none of it is the study's result.\n\n",
            self.interrupted_run.as_deref().unwrap_or("none"),
            self.finished_runs.len(),
            list(&self.finished_runs),
            self.not_run.len(),
            list(&self.not_run),
        )
    }
}

/// Why a `reproduce` study failed.
#[derive(Debug, Error)]
pub enum ReproduceError {
    /// A shipped scene could not be loaded or overridden (a defect).
    #[error("scene {scene}: {source}")]
    Scene {
        /// The scene.
        scene: String,
        /// The error.
        source: Box<SceneError>,
    },
    /// A run failed.
    #[error("run {scene}/{mode}: {source}")]
    Run {
        /// The scene.
        scene: String,
        /// The mode.
        mode: String,
        /// The error.
        source: Box<RunError>,
    },
    /// A run's CSV could not be read back.
    #[error("reading {path}: {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The study's own files could not be written.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// An option of the study is out of range; checked before anything is run or
    /// written.
    #[error("{option}: {message}")]
    InvalidOption {
        /// The option as the program spells it, e.g. `--rps-seconds`.
        option: String,
        /// What is wrong and what is allowed.
        message: String,
    },
}

impl ReproduceError {
    /// The program's exit code for this error: 2 for [`ReproduceError::InvalidOption`]
    /// (invalid input, nothing written), 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::InvalidOption { .. } => 2,
            _ => 1,
        }
    }
}

/// [`ReproduceError::InvalidOption`] for `option`.
pub(crate) fn invalid(option: &str, message: impl Into<String>) -> ReproduceError {
    ReproduceError::InvalidOption {
        option: option.into(),
        message: message.into(),
    }
}

/// Checks a duration option: a positive finite number of seconds that makes at most
/// [`crate::scene::MAX_STEPS`] steps of `scene` (which the duration is applied to).
pub(crate) fn check_seconds(
    option: &str,
    seconds: f64,
    mut scene: Scene,
) -> Result<(), ReproduceError> {
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(invalid(
            option,
            format!("must be positive and finite (s), got {seconds}"),
        ));
    }
    scene
        .set("run.duration", &format!("{seconds:?}"))
        .and_then(|_| scene.steps().map(|_| ()))
        .map_err(|e| invalid(option, option_message(&e)))
}

/// A scene error's message for an option that made it: without the `(set by --set …)`
/// the scene adds, since the option, not a `--set`, set the field.
pub(crate) fn option_message(e: &SceneError) -> String {
    match e.message.find(" (set by --set ") {
        Some(i) => e.message[..i].to_string(),
        None => e.message.clone(),
    }
}

pub(crate) fn read_err(path: &Path, e: impl std::fmt::Display) -> ReproduceError {
    ReproduceError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Renders `series` as a PNG chart and stages it in `out` as `name`.
///
/// # Errors
/// [`ReproduceError::Read`] naming the chart if it cannot be rendered, or the
/// [`OutputError`] of staging it.
pub(crate) fn stage_chart(
    out: &mut OutputDir,
    name: &str,
    spec: &ChartSpec,
    series: &[super::plot::Series],
) -> Result<(), ReproduceError> {
    let png = render_png(spec, series).map_err(|e| ReproduceError::Read {
        path: name.into(),
        message: e.to_string(),
    })?;
    out.stage_bytes(name, &png)?;
    Ok(())
}

/// Stages a study's `summary.json` (its report) and `summary.md` in `out`.
///
/// # Errors
/// The [`OutputError`] of staging either file.
pub(crate) fn stage_summaries<R: Serialize>(
    out: &mut OutputDir,
    report: &R,
    markdown: &str,
) -> Result<(), ReproduceError> {
    out.stage_json("summary.json", report)?;
    out.stage_bytes("summary.md", markdown.as_bytes())?;
    Ok(())
}

/// Columns `names` of a CSV file with a header, as f64 rows.
pub(crate) fn read_columns(path: &Path, names: &[&str]) -> Result<Vec<Vec<f64>>, ReproduceError> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| read_err(path, e))?;
    let headers = reader.headers().map_err(|e| read_err(path, e))?.clone();
    let idx: Vec<usize> = names
        .iter()
        .map(|n| {
            headers
                .iter()
                .position(|h| h == *n)
                .ok_or_else(|| read_err(path, format!("no column {n}")))
        })
        .collect::<Result<_, _>>()?;
    let mut rows = Vec::new();
    for rec in reader.records() {
        let rec = rec.map_err(|e| read_err(path, e))?;
        let row = idx
            .iter()
            .map(|&i| {
                rec.get(i)
                    .unwrap_or("")
                    .trim()
                    .parse::<f64>()
                    .map_err(|e| read_err(path, e))
            })
            .collect::<Result<Vec<f64>, _>>()?;
        rows.push(row);
    }
    Ok(rows)
}

/// The exact median of the finite values (mean of the two middle ones for an even
/// count); `None` if there are none. A non-finite value counts as +∞ (a blown-up step
/// is worse than any finite one).
pub fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values
        .into_iter()
        .map(|x| if x.is_nan() { f64::INFINITY } else { x })
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    })
}
