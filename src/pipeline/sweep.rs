//! Parameter sweeps: the cartesian product of `--set KEY=V1,V2,…` axes, run in parallel
//! (rayon) on one machine, or emitted as one self-contained command per run for a
//! cluster (a Slurm job array, GNU parallel), and [`merge`] to gather the runs'
//! summaries into one table.
//!
//! Each run is an ordinary [`run_scene`] into its own folder `DIR/run_NNN`, so its
//! files are exactly those of `lie-xpbd run` with the same overrides. The sweep then
//! merges the summaries of its own runs (never those of older `run_NNN` folders in
//! `DIR`, see [`other_run_folders`]) into `DIR/sweep.csv`, `DIR/sweep.md` and
//! `DIR/sweep.json`.
//! Runs share the machine, so their times per substep are only comparable within a
//! sweep run on an otherwise idle machine with one run per core.

use super::files::{OutputDir, OutputError};
use super::run::{run_scene, Progress, RunError, RunOptions, RunSummary};
use crate::scene::{Scene, SceneError};
use crate::sim::{Rotation, Scalar};
use rayon::prelude::*;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use thiserror::Error;

/// Largest number of runs one sweep may plan (a guard against a typo such as a
/// thousand-value list multiplied by another).
pub const MAX_RUNS: usize = 10_000;

/// One axis of a sweep: a scene key and the values it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepAxis {
    /// Dotted key, as for `--set` (e.g. `solver.dt`).
    pub key: String,
    /// Values (TOML text), in order.
    pub values: Vec<String>,
}

/// One planned run: its index, its overrides and its folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepRun {
    /// 0-based index in the cartesian product (last axis fastest).
    pub index: usize,
    /// The overrides of this run, one per axis, as (key, value).
    pub assignments: Vec<(String, String)>,
    /// The run's folder.
    pub dir: PathBuf,
}

/// What can go wrong planning, running or merging a sweep.
#[derive(Debug, Error)]
pub enum SweepError {
    /// An axis is not of the form `key=v1,v2,…`.
    #[error(
        "--set '{0}' is not of the form key=value or key=v1,v2,... (e.g. solver.dt=1e-3,5e-4)"
    )]
    BadAxis(String),
    /// A combination makes an invalid scene (nothing was run).
    #[error("run {index} ({assignments}): {source}")]
    Scene {
        /// The run's index.
        index: usize,
        /// Its overrides, `key=value` joined by spaces.
        assignments: String,
        /// What is wrong.
        source: Box<SceneError>,
    },
    /// Two `--set` arguments (or `--set` and an override already applied to the scene,
    /// such as `--seconds`) set the same key: the runs would be labelled with values
    /// they did not run with, so nothing is run.
    #[error("--set {key} is given twice ({first} and {second}); give each key once, with all its values in one --set {key}=v1,v2,...")]
    RepeatedKey {
        /// The key.
        key: String,
        /// The first setting, e.g. `--set solver.dt=1e-3,2e-3`.
        first: String,
        /// The second.
        second: String,
    },
    /// Too many runs.
    #[error("the sweep has {0} runs; at most {MAX_RUNS} are allowed")]
    TooMany(usize),
    /// [`merge`] found no run summary in the folders given (nothing is written).
    #[error("no run summary found: {0}")]
    NoRuns(String),
    /// The merged table could not be written.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// A folder given to [`merge`] has no `summary.json`, or one that is not a run's.
    #[error("'{}': {reason}", path.display())]
    NotARun {
        /// The folder or file.
        path: PathBuf,
        /// Why it was skipped.
        reason: String,
    },
}

/// Splits `a,b,[c,d],"e,f"` at the commas outside brackets and quotes.
fn split_values(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut cur) = (0i32, None::<char>, String::new());
    for ch in text.chars() {
        match (ch, quote) {
            ('"' | '\'', None) => quote = Some(ch),
            (c, Some(q)) if c == q => quote = None,
            ('[' | '{', None) => depth += 1,
            (']' | '}', None) => depth -= 1,
            (',', None) if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    out.push(cur.trim().to_string());
    out
}

/// Parses one `--set key=v1,v2,…` (a single value is an axis of length one).
///
/// # Errors
/// [`SweepError::BadAxis`] without `=`, with an empty key or an empty value.
pub fn parse_axis(text: &str) -> Result<SweepAxis, SweepError> {
    let (key, values) = text
        .split_once('=')
        .ok_or_else(|| SweepError::BadAxis(text.into()))?;
    let values = split_values(values);
    if key.trim().is_empty() || values.iter().any(|v| v.is_empty()) {
        return Err(SweepError::BadAxis(text.into()));
    }
    Ok(SweepAxis {
        key: key.trim().into(),
        values,
    })
}

/// The cartesian product of `axes` (last axis fastest), each combination checked by
/// applying it to a copy of `scene`, with folders `out/run_NNN`.
///
/// # Errors
/// [`SweepError::RepeatedKey`] if two axes have the same key, or an axis sets a key
/// that `scene` already overrides; [`SweepError::Scene`] for the first combination
/// that makes an invalid scene (including two keys naming the same field, by index
/// and by name; nothing has run), [`SweepError::TooMany`] beyond [`MAX_RUNS`].
pub fn plan(
    scene: &Scene,
    axes: &[SweepAxis],
    out: &Path,
) -> Result<Vec<(SweepRun, Scene)>, SweepError> {
    let text = |a: &SweepAxis| format!("--set {}={}", a.key, a.values.join(","));
    for (j, a) in axes.iter().enumerate() {
        let earlier = scene
            .overrides()
            .iter()
            .find(|(k, _)| *k == a.key)
            .map(|(k, v)| scene.describe_override(k, v))
            .or_else(|| axes[..j].iter().find(|b| b.key == a.key).map(text));
        if let Some(first) = earlier {
            return Err(SweepError::RepeatedKey {
                key: a.key.clone(),
                first,
                second: text(a),
            });
        }
    }
    let total = axes
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.values.len()));
    match total {
        Some(n) if n <= MAX_RUNS => {}
        Some(n) => return Err(SweepError::TooMany(n)),
        None => return Err(SweepError::TooMany(usize::MAX)),
    }
    let total = total.unwrap_or(0);
    let width = total.saturating_sub(1).to_string().len().max(3);
    let mut runs = Vec::with_capacity(total);
    for index in 0..total {
        let mut rest = index;
        let mut assignments = vec![(String::new(), String::new()); axes.len()];
        for (a, axis) in axes.iter().enumerate().rev() {
            let n = axis.values.len();
            assignments[a] = (axis.key.clone(), axis.values[rest % n].clone());
            rest /= n;
        }
        let mut s = scene.clone();
        s.set_all(&assignments)
            .map_err(|source| SweepError::Scene {
                index,
                assignments: join(&assignments),
                source: Box::new(source),
            })?;
        s.steps().map_err(|source| SweepError::Scene {
            index,
            assignments: join(&assignments),
            source: Box::new(source),
        })?;
        let dir = out.join(format!("run_{index:0width$}"));
        runs.push((
            SweepRun {
                index,
                assignments,
                dir,
            },
            s,
        ));
    }
    Ok(runs)
}

/// The folders `out/run_NNN` (any number of digits) that are not among `runs`: run
/// folders of an earlier sweep into the same `out`, in name order. A sweep leaves them
/// alone and does not merge them (they hold other runs' results).
pub fn other_run_folders(out: &Path, runs: &[SweepRun]) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            e.file_name().to_str().is_some_and(|n| {
                n.strip_prefix("run_")
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            })
        })
        .map(|e| e.path())
        .filter(|p| !runs.iter().any(|r| r.dir == *p))
        .collect();
    found.sort();
    found
}

fn join(a: &[(String, String)]) -> String {
    a.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Quotes `s` for a POSIX shell (single quotes).
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// One self-contained shell command per run, one per line: `PROGRAM run SCENE
/// --rotation R --scalar S [--set K=V …] --out DIR`. `scene_arg` is the scene as
/// the runs should find it (an absolute path, or a built-in name); `extra` are the
/// sweep's fixed `--set` overrides (single-valued axes are included in the runs'
/// assignments already).
pub fn emit_jobs(
    program: &str,
    scene_arg: &str,
    runs: &[SweepRun],
    rotation: Rotation,
    scalar: Scalar,
) -> String {
    let mut text = String::new();
    for r in runs {
        let mut parts = vec![
            shell_quote(program),
            "run".into(),
            shell_quote(scene_arg),
            "--rotation".into(),
            rotation.name().into(),
            "--scalar".into(),
            scalar.name().into(),
        ];
        for (k, v) in &r.assignments {
            parts.push("--set".into());
            parts.push(shell_quote(&format!("{k}={v}")));
        }
        parts.push("--out".into());
        parts.push(shell_quote(&r.dir.display().to_string()));
        text += &parts.join(" ");
        text.push('\n');
    }
    text
}

/// Runs every planned run in parallel (rayon; at most `threads` at once, 0 = one per
/// core, and never more threads than runs). `progress(index)` gives each run its
/// progress callback.
///
/// Each run writes its own folder; a failing run does not stop the others. Once
/// `interrupt` is set, the runs under way stop after their current step (their
/// folders hold the steps taken) and the runs not yet begun are not started: they
/// create no folder and come back as [`RunError::NotStarted`]. Returns the outcome of
/// every run, in index order.
pub fn run_all(
    runs: &[(SweepRun, Scene)],
    rotation: Rotation,
    scalar: Scalar,
    threads: usize,
    interrupt: &AtomicBool,
    progress: &(dyn Fn(usize) -> Option<Progress> + Sync),
) -> Vec<Result<RunSummary, RunError>> {
    let work = || {
        runs.par_iter()
            .map(|(r, scene)| {
                if interrupt.load(Ordering::SeqCst) {
                    return Err(RunError::NotStarted);
                }
                let opts = RunOptions {
                    rotation,
                    scalar,
                    out: r.dir.clone(),
                    progress: progress(r.index),
                    vtk: false,
                };
                run_scene(scene, &opts, interrupt)
            })
            .collect()
    };
    // Never more threads than runs (`--jobs 1000000` for two runs once started a
    // million threads); 0 is rayon's default, one per core, also capped.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = if threads == 0 { cores } else { threads };
    let threads = threads.min(runs.len()).max(1);
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    }
}

/// One row of the merged table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MergedRow {
    /// The run's folder.
    pub dir: String,
    /// The scene's name.
    pub scene: String,
    /// Its overrides as (key, value), from its summary.
    pub overrides: Vec<(String, String)>,
    /// Rotation representation.
    pub rotation: String,
    /// Scalar type.
    pub scalar: String,
    /// `completed`, `diverged` or `interrupted`.
    pub status: String,
    /// Steps taken.
    pub steps: u64,
    /// Median primal residual (51).
    pub median_primal_residual: Option<f64>,
    /// Median constraint residual (52), m and rad.
    pub median_constraint_residual: Option<f64>,
    /// Largest constraint residual (52), m and rad.
    pub max_constraint_residual: Option<f64>,
    /// Energy change / energy available above rest.
    pub energy_change_fraction: Option<f64>,
    /// Time per substep, µs.
    pub time_per_substep_us: Option<f64>,
    /// Number of warnings.
    pub warnings: usize,
}

/// The merged summaries.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MergeReport {
    /// One row per run found, in folder order.
    pub rows: Vec<MergedRow>,
    /// Folders given that held no run summary, with the reason.
    pub skipped: Vec<String>,
}

fn read_row(path: &Path) -> Result<MergedRow, SweepError> {
    let not = |reason: String| SweepError::NotARun {
        path: path.to_path_buf(),
        reason,
    };
    let text = std::fs::read_to_string(path.join("summary.json"))
        .map_err(|e| not(format!("no readable summary.json ({e})")))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| not(format!("summary.json is not JSON ({e})")))?;
    let s = &v["settings"];
    if !s.is_object() || v["status"].as_str().is_none() {
        return Err(not(
            "summary.json is not a run summary (no settings/status)".into(),
        ));
    }
    let f = |k: &str| v[k].as_f64();
    Ok(MergedRow {
        dir: path.display().to_string(),
        scene: v["scene"].as_str().unwrap_or("").into(),
        overrides: s["overrides"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| {
                        x.as_str()?
                            .split_once('=')
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        rotation: s["rotation"].as_str().unwrap_or("").into(),
        scalar: s["scalar"].as_str().unwrap_or("").into(),
        status: v["status"].as_str().unwrap_or("").into(),
        steps: v["steps"].as_u64().unwrap_or(0),
        median_primal_residual: f("median_primal_residual"),
        median_constraint_residual: f("median_constraint_residual"),
        max_constraint_residual: f("max_constraint_residual"),
        energy_change_fraction: f("energy_change_fraction"),
        time_per_substep_us: f("time_per_substep_us"),
        warnings: v["warnings"].as_array().map_or(0, |a| a.len()),
    })
}

/// Gathers the summaries of run folders: each of `dirs` is a run's folder (it has a
/// `summary.json`) or a folder of runs (its subfolders that have one, in name order).
/// Writes `sweep.csv`, `sweep.md` and `sweep.json` into `out` (whole or not at all).
///
/// # Errors
/// [`SweepError::Output`] if the table cannot be written. Folders without a run summary
/// are listed in [`MergeReport::skipped`], not errors.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<MergeReport, SweepError> {
    let mut report = MergeReport::default();
    // Each run folder once, however many arguments name it (directly, or as a run
    // of a sweep folder also given), compared by canonical path.
    let mut seen = std::collections::HashSet::new();
    let mut read_once = |report: &mut MergeReport, d: &Path| {
        let key = std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf());
        if !seen.insert(key) {
            report.skipped.push(format!(
                "'{}': the same run as an earlier argument, merged once",
                d.display()
            ));
            return;
        }
        match read_row(d) {
            Ok(r) => report.rows.push(r),
            Err(e) => report.skipped.push(e.to_string()),
        }
    };
    for d in dirs {
        if d.join("summary.json").is_file() {
            read_once(&mut report, d);
            continue;
        }
        let mut subs: Vec<PathBuf> = match std::fs::read_dir(d) {
            Ok(it) => it
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.join("summary.json").is_file())
                .collect(),
            Err(e) => {
                report.skipped.push(format!("'{}': {e}", d.display()));
                continue;
            }
        };
        if subs.is_empty() {
            report.skipped.push(format!(
                "'{}': no summary.json in it or its subfolders",
                d.display()
            ));
        }
        subs.sort();
        for s in subs {
            read_once(&mut report, &s);
        }
    }
    let mut keys: Vec<String> = Vec::new();
    for r in &report.rows {
        for (k, _) in &r.overrides {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let mut csv = String::from("dir,scene");
    for k in &keys {
        csv += &format!(",{k}");
    }
    csv += ",rotation,scalar,status,steps,median_primal_residual,median_constraint_residual,max_constraint_residual,energy_change_fraction,time_per_substep_us,warnings\n";
    let mut md = format!("# Sweep: {} runs\n\n| run |", report.rows.len());
    for k in &keys {
        md += &format!(" {k} |");
    }
    md += " rotation | scalar | status | median primal (51) | median constraint (52) | max constraint (52) | energy change | µs/substep | warnings |\n|---|";
    md += &"---|".repeat(keys.len() + 9);
    md.push('\n');
    let quote = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    for r in &report.rows {
        // Numbers as the shortest text that reads back at the run's precision (an f32
        // run's residuals carry no more digits than f32 has), and the time per substep
        // to the nanosecond, the clock's resolution: no float noise such as
        // 4.260059999999999.
        let scalar = r.scalar.parse().unwrap_or(Scalar::F64);
        let num = |x: Option<f64>| x.map_or_else(String::new, |v| scalar.format(v));
        let micros = |x: Option<f64>| {
            x.map_or_else(String::new, |t| Scalar::F64.format((t * 1e3).round() / 1e3))
        };
        let val = |k: &String| {
            r.overrides
                .iter()
                .find(|(kk, _)| kk == k)
                .map_or("", |(_, v)| v.as_str())
                .to_string()
        };
        csv += &quote(&r.dir);
        csv.push(',');
        csv += &quote(&r.scene);
        md += &format!(
            "| {} |",
            Path::new(&r.dir)
                .file_name()
                .map_or(r.dir.clone(), |f| f.to_string_lossy().into_owned())
        );
        for k in &keys {
            csv += &format!(",{}", quote(&val(k)));
            md += &format!(" {} |", val(k));
        }
        csv += &format!(
            ",{},{},{},{},{},{},{},{},{},{}\n",
            r.rotation,
            r.scalar,
            r.status,
            r.steps,
            num(r.median_primal_residual),
            num(r.median_constraint_residual),
            num(r.max_constraint_residual),
            num(r.energy_change_fraction),
            micros(r.time_per_substep_us),
            r.warnings
        );
        let short = |x: Option<f64>| x.map_or_else(|| "n/a".into(), |v| format!("{v:.3e}"));
        md += &format!(
            " {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.rotation,
            r.scalar,
            r.status,
            short(r.median_primal_residual),
            short(r.median_constraint_residual),
            short(r.max_constraint_residual),
            r.energy_change_fraction
                .map_or_else(|| "n/a".into(), |f| format!("{:+.3}%", 100.0 * f)),
            r.time_per_substep_us
                .map_or_else(|| "n/a".into(), |t| format!("{t:.3}")),
            r.warnings
        );
    }
    if !report.skipped.is_empty() {
        md += "\nSkipped:\n\n";
        for s in &report.skipped {
            md += &format!("- {s}\n");
        }
    }
    if report.rows.is_empty() {
        return Err(SweepError::NoRuns(report.skipped.join("; ")));
    }
    let mut dir = OutputDir::create(out)?;
    dir.stage_bytes("sweep.csv", csv.as_bytes())?;
    dir.stage_bytes("sweep.md", md.as_bytes())?;
    dir.stage_json("sweep.json", &report)?;
    dir.commit()?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_split_outside_brackets_and_quotes() {
        assert_eq!(split_values("1e-3, 5e-4"), ["1e-3", "5e-4"]);
        assert_eq!(
            split_values("[0, -9.81, 0],[0, 0, 0]"),
            ["[0, -9.81, 0]", "[0, 0, 0]"]
        );
        assert_eq!(split_values("\"a,b\",c"), ["\"a,b\"", "c"]);
        assert!(parse_axis("solver.dt").is_err());
        assert!(parse_axis("solver.dt=1,").is_err());
        assert!(parse_axis("=1").is_err());
    }

    /// Review finding: after Ctrl-C, a sweep still created folders (with empty,
    /// interrupted runs) for the runs it had not begun.
    #[test]
    fn runs_not_begun_before_an_interrupt_create_no_folder() {
        let dir = tempfile::tempdir().unwrap();
        let scene = crate::scenes::builtin("pendulum").unwrap().unwrap();
        let axes = [parse_axis("solver.dt=1e-3,2e-3").unwrap()];
        let runs = plan(&scene, &axes, dir.path()).unwrap();
        let interrupt = AtomicBool::new(true);
        let results = run_all(&runs, Rotation::Matrix, Scalar::F64, 1, &interrupt, &|_| {
            None
        });
        assert_eq!(results.len(), 2);
        for ((r, _), res) in runs.iter().zip(&results) {
            assert!(matches!(res, Err(RunError::NotStarted)), "{res:?}");
            assert_eq!(res.as_ref().unwrap_err().exit_code(), 130);
            assert!(!r.dir.exists(), "{} was created", r.dir.display());
        }
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("solver.dt=1e-3"), "solver.dt=1e-3");
        assert_eq!(shell_quote("gravity=[0, 0]"), "'gravity=[0, 0]'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
