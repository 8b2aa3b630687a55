//! The program's commands as library functions (the `lie-xpbd` binary only parses its
//! arguments with clap and calls these). Each prints its report and returns the exit
//! code: 0 success, 1 outputs not written, 2 invalid input, 3 diverged, 4 (`run`,
//! `pendulum`, `sweep`) the joints came apart ([`run::EXIT_JOINTS_APART`]), 130
//! interrupted.

use crate::pipeline::run::{self, RunError, RunOptions, RunSummary};
use crate::scene::Scene;
use crate::sim::{Rotation, Scalar};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

// Reports go to stdout and stderr through these instead of `print!`/`println!`/
// `eprintln!`, which panic when the stream is closed (`lie-xpbd ... | head -1`): a
// closed or failing terminal stream must not stop a run whose outputs are being written
// to files, so write errors on the report streams are ignored.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}
macro_rules! errln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

mod parse;
mod reproduce;
pub use parse::{parse_count, parse_positive_seconds, parse_seconds, parse_seed};
pub use reproduce::{
    reproduce_cantilever_command, reproduce_f32_command, reproduce_figure11_command,
    reproduce_rigid_command, reproduce_shear_locking_command, reproduce_spring_command,
};

/// The options shared by `run`, `pendulum`, `compare` and `sweep`.
#[derive(Debug, Clone, Default)]
pub struct RunArgs {
    /// Rotation representation (default: matrix).
    pub rotation: Option<Rotation>,
    /// Scalar type (default: f64).
    pub scalar: Option<Scalar>,
    /// `--seconds`: overrides `run.duration` (s), as text (as typed, see
    /// [`parse_seconds`]); messages call it `--seconds`.
    pub seconds: Option<String>,
    /// `--set KEY=VALUE` overrides, in order.
    pub set: Vec<String>,
    /// Output folder.
    pub out: Option<PathBuf>,
    /// Also write the ParaView series.
    pub vtk: bool,
}

/// Loads a scene by path or built-in name and applies the overrides.
pub fn load_scene(name: &str, args: &RunArgs) -> Result<Scene, String> {
    let path = PathBuf::from(name);
    let mut scene = if !path.exists() {
        match crate::scenes::builtin(name) {
            Some(s) => s.map_err(|e| e.to_string())?,
            None => {
                let names: Vec<&str> = crate::scenes::REGISTRY.iter().map(|(n, _)| *n).collect();
                return Err(format!(
                    "'{name}' is neither a scene file nor a built-in scene (built-in: {})",
                    names.join(", ")
                ));
            }
        }
    } else {
        Scene::load(&path).map_err(|e| e.to_string())?
    };
    let mut overrides = Vec::new();
    if let Some(s) = &args.seconds {
        // Messages and warnings call it `--seconds S`.
        scene.name_option("run.duration", "--seconds");
        overrides.push(("run.duration".to_string(), s.clone()));
    }
    for a in &args.set {
        let Some((k, v)) = a.split_once('=') else {
            return Err(format!(
                "--set '{a}' is not of the form key=value (e.g. solver.dt=5e-4)"
            ));
        };
        overrides.push((k.trim().to_string(), v.trim().to_string()));
    }
    scene.set_all(&overrides).map_err(|e| e.to_string())?;
    scene.steps().map_err(|e| e.to_string())?;
    Ok(scene)
}

static BAR: OnceLock<(ProgressBar, Instant)> = OnceLock::new();

/// Shows a progress bar on stderr once a run has taken a second, if stderr is a
/// terminal.
/// A progress bar on stderr, shown once a run has taken a second and only if stderr
/// is a terminal; (steps done, steps planned).
pub fn progress(done: u64, total: u64) {
    if !done.is_multiple_of(256) && done != total {
        return;
    }
    let (bar, start) = BAR.get_or_init(|| {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template(
            "simulating {wide_bar} {percent:>3}%  step {pos}/{len}, eta {eta}",
        ) {
            bar.set_style(style);
        }
        (bar, Instant::now())
    });
    if bar.is_hidden()
        && start.elapsed() > Duration::from_secs(1)
        && std::io::stderr().is_terminal()
    {
        bar.set_draw_target(ProgressDrawTarget::stderr());
    }
    bar.set_position(done);
    if done == total {
        bar.finish_and_clear();
    }
}

/// `lie-xpbd run SCENE` / `pendulum`: runs the scene with [`run::run_scene`] and
/// prints its summary. Exit 0, 1 (outputs not written), 2 (invalid input), 3
/// (diverged), 4 (completed, but the joints came apart: [`RunSummary::exit_code`]) or
/// 130 (interrupted).
pub fn run_command(scene_name: &str, args: &RunArgs, interrupt: &AtomicBool) -> ExitCode {
    let scene = match load_scene(scene_name, args) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let out = args.out.clone().unwrap_or_else(|| run::default_out(&scene));
    let opts = RunOptions {
        rotation: args.rotation.unwrap_or(Rotation::Matrix),
        scalar: args.scalar.unwrap_or(Scalar::F64),
        out: out.clone(),
        progress: Some(Arc::new(progress)),
        vtk: args.vtk,
    };
    match run::run_scene(&scene, &opts, interrupt) {
        Ok(summary) => {
            print_summary(&summary, &out);
            ExitCode::from(summary.exit_code())
        }
        Err(RunError::Write { source, .. }) => {
            // No summary: its files were not written and its statistics may be
            // incomplete (the recorder's, when a write failed during the run).
            errln!("error: the outputs could not be written: {source}");
            ExitCode::from(1)
        }
        Err(e) => {
            errln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// `lie-xpbd compare`: [`crate::pipeline::compare::compare_with_progress`] over the given
/// representations and scalars; prints its conclusions.
pub fn compare_command(
    scene_name: &str,
    args: &RunArgs,
    rotations: Vec<Rotation>,
    scalars: Vec<Scalar>,
    interrupt: &AtomicBool,
) -> ExitCode {
    use crate::pipeline::compare::{self, CompareOptions};
    use std::ops::ControlFlow;
    let scene = match load_scene(scene_name, args) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-compare", scene.name())));
    let opts = CompareOptions {
        rotations,
        scalars,
        every: None,
    };
    let result = compare::compare_with_progress(&scene, &opts, &out, |done, total| {
        progress(done, total);
        if interrupt.load(Ordering::Relaxed) {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    match result {
        Ok(report) => {
            for c in &report.conclusions {
                outln!("{c}");
            }
            outln!("\nOutputs written to {}", out.display());
            ExitCode::from(compare_exit_code(&report))
        }
        Err(e) => {
            errln!("error: {e}");
            ExitCode::from(match e {
                compare::CompareError::Output(_) => 1,
                _ => 2,
            })
        }
    }
}

/// The exit code of a comparison, as `run` exits for its runs: 130 if it was
/// interrupted, otherwise 3 if any run diverged (each named on stderr), otherwise 0.
fn compare_exit_code(report: &crate::pipeline::compare::CompareReport) -> u8 {
    if report.interrupted_at_step.is_some() {
        return 130;
    }
    let mut code = 0;
    for r in report
        .runs
        .iter()
        .filter(|r| r.status == run::RunStatus::Diverged)
    {
        errln!("error: {} diverged at step {}", r.run, r.steps + 1);
        code = 3;
    }
    code
}

/// `lie-xpbd sweep`: plans the cartesian product of the `set` axes
/// ([`crate::pipeline::sweep::plan`]), then either writes one command per run
/// (`emit_jobs`) or runs them in parallel and merges their summaries.
#[allow(clippy::too_many_arguments)]
pub fn sweep_command(
    scene_name: &str,
    set: &[String],
    rotation: Rotation,
    scalar: Scalar,
    seconds: Option<String>,
    out: Option<PathBuf>,
    jobs: usize,
    emit_jobs: Option<PathBuf>,
    interrupt: &AtomicBool,
) -> ExitCode {
    use crate::pipeline::sweep;
    use indicatif::MultiProgress;
    let fail = |e: String| {
        errln!("error: {e}");
        ExitCode::from(2)
    };
    let args = RunArgs {
        seconds,
        ..RunArgs::default()
    };
    let scene = match load_scene(scene_name, &args) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let axes: Result<Vec<_>, _> = set.iter().map(|a| sweep::parse_axis(a)).collect();
    let axes = match axes {
        Ok(a) => a,
        Err(e) => return fail(e.to_string()),
    };
    let mut out =
        out.unwrap_or_else(|| PathBuf::from("out").join(format!("{}-sweep", scene.name())));
    if emit_jobs.is_some() && out.is_relative() {
        // Emitted commands must work from any directory.
        if let Ok(cwd) = std::env::current_dir() {
            out = cwd.join(out);
        }
    }
    let runs = match sweep::plan(&scene, &axes, &out) {
        Ok(r) => r,
        Err(e) => return fail(e.to_string()),
    };
    let planned: Vec<_> = runs.iter().map(|(r, _)| r.clone()).collect();
    let others = sweep::other_run_folders(&out, &planned);
    let others_note = |merged_by: &str| {
        if !others.is_empty() {
            let names: Vec<String> = others
                .iter()
                .map(|p| {
                    p.file_name()
                        .map_or(String::new(), |f| f.to_string_lossy().into_owned())
                })
                .collect();
            errln!(
                "note: {} holds {} run folder(s) not part of this sweep ({}); they were left alone and {merged_by}",
                out.display(),
                others.len(),
                names.join(", ")
            );
        }
    };
    if let Some(file) = emit_jobs {
        let scene_arg = if PathBuf::from(scene_name).exists() {
            std::fs::canonicalize(scene_name)
                .map_or(scene_name.to_string(), |p| p.display().to_string())
        } else {
            scene_name.to_string()
        };
        let program =
            std::env::current_exe().map_or("lie-xpbd".to_string(), |p| p.display().to_string());
        let mut text = sweep::emit_jobs(&program, &scene_arg, &planned, rotation, scalar);
        if let Some(s) = &args.seconds {
            text = text.replace(" --out ", &format!(" --seconds {s} --out "));
        }
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let parent = file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        let written = crate::pipeline::files::OutputDir::create(parent).and_then(|mut d| {
            d.stage_bytes(&name, text.as_bytes())?;
            d.commit()
        });
        return match written {
            Ok(_) => {
                others_note(
                    "`lie-xpbd merge DIR` would include them: merge this sweep's run folders by name, or use a new DIR",
                );
                outln!(
                    "{} commands written to {}; afterwards: lie-xpbd merge {} --out {}",
                    planned.len(),
                    file.display(),
                    out.display(),
                    out.display()
                );
                ExitCode::SUCCESS
            }
            Err(e) => fail(e.to_string()),
        };
    }
    let multi = MultiProgress::with_draw_target(if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    });
    let bars: Vec<ProgressBar> = runs
        .iter()
        .map(|(r, _)| {
            let bar = multi.add(ProgressBar::new(0));
            if let Ok(style) = ProgressStyle::with_template("{prefix} {wide_bar} {percent:>3}%") {
                bar.set_style(style);
            }
            let label: Vec<String> = r
                .assignments
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            bar.set_prefix(format!(
                "{} {}",
                r.dir
                    .file_name()
                    .map_or(String::new(), |f| f.to_string_lossy().into_owned()),
                label.join(" ")
            ));
            bar
        })
        .collect();
    let progress = |i: usize| -> Option<run::Progress> {
        let bar = bars[i].clone();
        Some(Arc::new(move |done: u64, total: u64| {
            if done.is_multiple_of(256) || done == total {
                bar.set_length(total);
                bar.set_position(done);
            }
        }))
    };
    let results = sweep::run_all(&runs, rotation, scalar, jobs, interrupt, &progress);
    let mut code = 0u8;
    for ((r, _), res) in runs.iter().zip(&results) {
        let label: Vec<String> = r
            .assignments
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        match res {
            Ok(s) => {
                code = more_serious(code, s.exit_code());
                outln!(
                    "{} [{}]: {}{}, median constraint residual {}",
                    r.dir.display(),
                    label.join(" "),
                    s.status,
                    if s.joints_came_apart {
                        " (the joints came apart)"
                    } else {
                        ""
                    },
                    s.median_constraint_residual
                        .map_or("n/a".into(), |m| format!("{m:.3e}"))
                );
            }
            Err(RunError::NotStarted) => {
                errln!(
                    "{} [{}]: not started (interrupted), no folder created",
                    r.dir.display(),
                    label.join(" ")
                );
                code = more_serious(code, RunError::NotStarted.exit_code());
            }
            Err(e) => {
                errln!("{} [{}]: error: {e}", r.dir.display(), label.join(" "));
                code = more_serious(code, e.exit_code());
            }
        }
    }
    // Only this sweep's runs that wrote their summary: a run folder left by an earlier
    // sweep (or by this run index before it failed) never enters the table.
    let written: Vec<PathBuf> = runs
        .iter()
        .zip(&results)
        .filter(|(_, res)| res.is_ok())
        .map(|((r, _), _)| r.dir.clone())
        .collect();
    match sweep::merge(&written, &out) {
        Ok(report) => {
            outln!(
                "\n{} runs merged into {}",
                report.rows.len(),
                out.join("sweep.md").display()
            );
            others_note("are not in the table");
        }
        Err(e) => {
            errln!("error: could not merge the runs: {e}");
            code = more_serious(code, 1);
        }
    }
    ExitCode::from(code)
}

/// The more serious of two exit codes, for a sweep's: 130 (interrupted), then 3
/// (diverged), 2 (invalid input), 1 (outputs not written), 4 (the joints came apart),
/// then 0.
fn more_serious(a: u8, b: u8) -> u8 {
    let rank = |c: u8| match c {
        0 => 0,
        4 => 1,
        1 => 2,
        2 => 3,
        3 => 4,
        _ => 5,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

/// `lie-xpbd merge`: [`crate::pipeline::sweep::merge`]; exit 2 if no run was found.
pub fn merge_command(dirs: &[PathBuf], out: &std::path::Path) -> ExitCode {
    match crate::pipeline::sweep::merge(dirs, out) {
        Ok(report) => {
            for s in &report.skipped {
                errln!("warning: skipped {s}");
            }
            outln!(
                "{} runs merged into {}",
                report.rows.len(),
                out.join("sweep.md").display()
            );
            ExitCode::SUCCESS
        }
        Err(e @ crate::pipeline::sweep::SweepError::NoRuns(_)) => {
            errln!("error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            errln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// `lie-xpbd check-jacobians`: [`crate::pipeline::jacobians::check_scene_until`] on
/// the scene with the `set` overrides (`KEY=VALUE`, as `--set` of `run`) applied;
/// prints the table, exit 1 if any constraint or rod row block fails its tolerance. `interrupt` (Ctrl-C)
/// stops it within a few states: the table of what was checked so far is printed and
/// the exit code is 130.
pub fn check_command(
    scene_name: &str,
    set: &[String],
    states: usize,
    seed: u64,
    interrupt: &AtomicBool,
) -> ExitCode {
    use crate::pipeline::jacobians::{check_scene_until, JacobianOptions};
    let args = RunArgs {
        set: set.to_vec(),
        ..RunArgs::default()
    };
    let scene = match load_scene(scene_name, &args) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let opts = JacobianOptions {
        states,
        seed,
        ..JacobianOptions::default()
    };
    match check_scene_until(&scene, &opts, interrupt) {
        Ok((report, true)) => {
            out!("{}", report.table());
            errln!(
                "interrupted: {} constraint check(s) made so far (the last may cover fewer than {} random states); not a verdict",
                report.entries.len(),
                states
            );
            ExitCode::from(130)
        }
        Ok((report, false)) if report.entries.is_empty() => {
            errln!("error: the scene has no constraints and no rods, so there is nothing to check");
            ExitCode::from(2)
        }
        Ok((report, false)) => {
            out!("{}", report.table());
            if report.passed() {
                outln!("\nAll {} constraint checks passed.", report.entries.len());
            } else {
                errln!(
                    "error: {} constraint check(s) failed",
                    report.failures().len()
                );
            }
            ExitCode::from(report.exit_code())
        }
        Err(e) => {
            errln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Prints a run's summary (Markdown) to stdout, its warnings to stderr.
pub fn print_summary(s: &RunSummary, out: &std::path::Path) {
    out!("{}", run::markdown(s));
    for w in &s.warnings {
        errln!("warning: {w}");
    }
    if let Some(e) = &s.error {
        errln!("error: the run ended early: {e}");
    }
    outln!("\nOutputs written to {}", out.display());
}
