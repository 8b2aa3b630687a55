//! The report of a comparison ([`CompareReport`], `summary.json`), its conclusions in
//! words and the Markdown summary.

use super::{CompareOptions, RunKey};
use crate::pipeline::files::step_time;
use crate::pipeline::run::RunStatus;
use crate::sim::{Rotation, Scalar};
use serde::{Serialize, Serializer};
use std::fmt::Write as _;
use std::path::PathBuf;

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
    /// Whether it went to the end ([`RunStatus::Completed`]), diverged
    /// ([`RunStatus::Diverged`]) or was stopped with the study
    /// ([`RunStatus::Interrupted`]).
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

/// The outcome of [`compare`](super::compare); `summary.json` is this, serialised.
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
    /// The step after which the study was stopped (Ctrl-C), `None` if it ran to the end.
    pub interrupted_at_step: Option<u64>,
    /// Wall time of the whole study (stepping, comparing, writing rows), s.
    pub wall_time_s: f64,
    /// Name of the CSV file in the output directory.
    pub csv_file: String,
    /// Its columns (see [`columns`](super::columns)).
    pub columns: Vec<String>,
    /// Names of the charts drawn ([`POSITION_PNG`](super::POSITION_PNG), [`ROTATION_PNG`](super::ROTATION_PNG); one that could not
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
pub(super) fn secs(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e15).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

fn opt(x: Option<f64>) -> String {
    x.map_or_else(|| "–".into(), sci)
}

pub(super) fn conclusions(report: &CompareReport, opts: &CompareOptions) -> Vec<String> {
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

pub(super) fn markdown(report: &CompareReport) -> String {
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
            RunStatus::Failed => "failed".to_string(),
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
