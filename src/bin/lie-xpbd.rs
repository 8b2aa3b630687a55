//! `lie-xpbd`: runs scene files through the experiment pipeline
//! ([`lie_xpbd::pipeline`]). Thin by design: every experiment is a scene file (or a
//! built-in scene name) and every command is a library function.

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lie_xpbd::pipeline::run::{self, RunError, RunOptions, RunStatus, RunSummary};
use lie_xpbd::scene::Scene;
use lie_xpbd::sim::{Rotation, Scalar};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

#[derive(Parser, Debug)]
#[command(
    name = "lie-xpbd",
    version,
    about = "XPBD with rotations on SO(3): runs scene files and writes CSV, JSON, Markdown and plots",
    long_about = "XPBD with rotations on SO(3). Runs a scene file (or a built-in scene name such as \
                  `pendulum`) and writes its recorded channels as CSV, a summary as JSON and \
                  Markdown, into the run's folder. Without a command it runs the built-in \
                  pendulum with its defaults.\n\nExit codes: 0 success (possibly with warnings), \
                  1 the outputs could not be written, 2 invalid input (nothing written), 3 the \
                  simulation diverged (the rows before it are written), 130 interrupted by Ctrl-C \
                  (the rows so far are written)."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scene file (or a built-in scene name) and write its outputs.
    Run {
        /// Scene file (TOML), or the name of a built-in scene (pendulum).
        scene: String,
        #[command(flatten)]
        opts: RunArgs,
    },
    /// The paper's triple pendulum (Section 9.1): `run pendulum`.
    Pendulum {
        #[command(flatten)]
        opts: RunArgs,
    },
    /// Run a scene in several rotation representations and scalars in lockstep and
    /// write their differences from the f64 matrix run (compare.csv, summary.json/md).
    Compare {
        /// Scene file (TOML), or the name of a built-in scene.
        scene: String,
        /// Rotation representations, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "matrix,quaternion", value_parser = parse_rotation)]
        rotation: Vec<Rotation>,
        /// Scalar types, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "f64,f32", value_parser = parse_scalar)]
        scalar: Vec<Scalar>,
        /// Simulated duration, s (overrides run.duration).
        #[arg(long, value_name = "S")]
        seconds: Option<String>,
        /// Override a scene field (repeatable), as for `run`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Output folder (default: out/<scene name>-compare).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Run the cartesian product of --set KEY=V1,V2,... in parallel, one folder per run
    /// (DIR/run_NNN), then merge their summaries into DIR/sweep.{csv,md,json}.
    Sweep {
        /// Scene file (TOML), or the name of a built-in scene.
        scene: String,
        /// A sweep axis KEY=V1,V2,... or a fixed override KEY=VALUE (repeatable).
        #[arg(long = "set", value_name = "KEY=V1,V2,...")]
        set: Vec<String>,
        /// Rotation representation of every run.
        #[arg(long, default_value = "matrix", value_parser = parse_rotation)]
        rotation: Rotation,
        /// Scalar type of every run.
        #[arg(long, default_value = "f64", value_parser = parse_scalar)]
        scalar: Scalar,
        /// Simulated duration of every run, s (overrides run.duration).
        #[arg(long, value_name = "S")]
        seconds: Option<String>,
        /// Output folder (default: out/<scene name>-sweep).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Runs at once (default: one per core).
        #[arg(long, default_value_t = 0)]
        jobs: usize,
        /// Do not run: write one self-contained `lie-xpbd run ...` command per run to
        /// FILE (for a Slurm job array or GNU parallel), then `lie-xpbd merge DIR`.
        #[arg(long, value_name = "FILE")]
        emit_jobs: Option<PathBuf>,
    },
    /// Gather the summaries of run folders (or folders of runs) into one table
    /// (sweep.csv, sweep.md, sweep.json in --out).
    Merge {
        /// Run folders, or folders whose subfolders are runs.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where to write the table.
        #[arg(long, value_name = "DIR", default_value = "out/merged")]
        out: PathBuf,
    },
    /// Check every constraint's analytic gradient against finite differences, at the
    /// initial state and at random perturbed states, in all four combinations; exits 1
    /// if any exceeds its tolerance.
    CheckJacobians {
        /// Scene file (TOML), or the name of a built-in scene.
        #[arg(default_value = "pendulum")]
        scene: String,
        /// Random perturbed states per constraint.
        #[arg(long, default_value_t = 100)]
        states: usize,
        /// Seed of the random states.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

#[derive(Args, Debug, Clone, Default)]
struct RunArgs {
    /// Rotation representation.
    #[arg(long, default_value = "matrix", value_parser = parse_rotation)]
    rotation: Option<Rotation>,
    /// Scalar type.
    #[arg(long, default_value = "f64", value_parser = parse_scalar)]
    scalar: Option<Scalar>,
    /// Simulated duration, s (overrides run.duration).
    #[arg(long, value_name = "S")]
    seconds: Option<String>,
    /// Override a scene field, e.g. --set solver.dt=5e-4 --set bodies.link0.density=500
    /// (repeatable; the value is TOML, a bare word is a string).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Output folder (default: out/<scene name>); created if missing, files of the same
    /// names are replaced.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Also write a ParaView time series (DIR/vtk/frames.pvd and one .vtp per row).
    #[arg(long)]
    vtk: bool,
}

fn parse_rotation(s: &str) -> Result<Rotation, String> {
    s.parse()
}

fn parse_scalar(s: &str) -> Result<Scalar, String> {
    s.parse()
}

/// Loads a scene by path or built-in name and applies the overrides.
fn load_scene(name: &str, args: &RunArgs) -> Result<Scene, String> {
    let path = PathBuf::from(name);
    let mut scene = if !path.exists() {
        match lie_xpbd::scenes::builtin(name) {
            Some(s) => s.map_err(|e| e.to_string())?,
            None => {
                let names: Vec<&str> = lie_xpbd::scenes::REGISTRY.iter().map(|(n, _)| *n).collect();
                return Err(format!(
                    "'{name}' is neither a scene file nor a built-in scene (built-in: {})",
                    names.join(", ")
                ));
            }
        }
    } else {
        Scene::load(&path).map_err(|e| e.to_string())?
    };
    if let Some(s) = &args.seconds {
        scene
            .set("run.duration", s)
            .map_err(|e| format!("--seconds {s}: {e}"))?;
    }
    for a in &args.set {
        scene.set_assignment(a).map_err(|e| e.to_string())?;
    }
    Ok(scene)
}

static BAR: OnceLock<(ProgressBar, Instant)> = OnceLock::new();

/// Shows a progress bar on stderr once a run has taken a second, if stderr is a
/// terminal.
fn progress(done: u64, total: u64) {
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

fn run_command(scene_name: &str, args: &RunArgs, interrupt: &AtomicBool) -> ExitCode {
    let scene = match load_scene(scene_name, args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
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
            ExitCode::from(match summary.status {
                RunStatus::Completed => 0,
                RunStatus::Diverged => 3,
                RunStatus::Interrupted => 130,
            })
        }
        Err(RunError::Write { source, summary }) => {
            print!("{}", run::markdown(&summary));
            eprintln!("error: the run finished but its outputs could not be written: {source}");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn compare_command(
    scene_name: &str,
    args: &RunArgs,
    rotations: Vec<Rotation>,
    scalars: Vec<Scalar>,
    interrupt: &AtomicBool,
) -> ExitCode {
    use lie_xpbd::pipeline::compare::{self, CompareOptions};
    use std::ops::ControlFlow;
    let scene = match load_scene(scene_name, args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
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
                println!("{c}");
            }
            println!("\nOutputs written to {}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(match e {
                compare::CompareError::Output(_) => 1,
                compare::CompareError::Cancelled { .. } => 130,
                _ => 2,
            })
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn sweep_command(
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
    use indicatif::MultiProgress;
    use lie_xpbd::pipeline::sweep;
    let fail = |e: String| {
        eprintln!("error: {e}");
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
    if let Some(file) = emit_jobs {
        let scene_arg = if PathBuf::from(scene_name).exists() {
            std::fs::canonicalize(scene_name)
                .map_or(scene_name.to_string(), |p| p.display().to_string())
        } else {
            scene_name.to_string()
        };
        let program =
            std::env::current_exe().map_or("lie-xpbd".to_string(), |p| p.display().to_string());
        let planned: Vec<_> = runs.iter().map(|(r, _)| r.clone()).collect();
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
        let written = lie_xpbd::pipeline::files::OutputDir::create(parent).and_then(|mut d| {
            d.stage_bytes(&name, text.as_bytes())?;
            d.commit()
        });
        return match written {
            Ok(_) => {
                println!(
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
                let status = format!("{:?}", s.status).to_lowercase();
                println!(
                    "{} [{}]: {status}, median constraint residual {}",
                    r.dir.display(),
                    label.join(" "),
                    s.median_constraint_residual
                        .map_or("n/a".into(), |m| format!("{m:.3e}"))
                );
            }
            Err(e) => {
                eprintln!("{} [{}]: error: {e}", r.dir.display(), label.join(" "));
                code = code.max(e.exit_code());
            }
        }
    }
    match sweep::merge(std::slice::from_ref(&out), &out) {
        Ok(report) => println!(
            "\n{} runs merged into {}",
            report.rows.len(),
            out.join("sweep.md").display()
        ),
        Err(e) => {
            eprintln!("error: could not merge the runs: {e}");
            code = code.max(1);
        }
    }
    ExitCode::from(code)
}

fn merge_command(dirs: &[PathBuf], out: &std::path::Path) -> ExitCode {
    match lie_xpbd::pipeline::sweep::merge(dirs, out) {
        Ok(report) => {
            for s in &report.skipped {
                eprintln!("warning: skipped {s}");
            }
            println!(
                "{} runs merged into {}",
                report.rows.len(),
                out.join("sweep.md").display()
            );
            if report.rows.is_empty() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn check_command(scene_name: &str, states: usize, seed: u64) -> ExitCode {
    use lie_xpbd::pipeline::jacobians::{check_scene, JacobianOptions};
    let scene = match load_scene(scene_name, &RunArgs::default()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let opts = JacobianOptions {
        states,
        seed,
        ..JacobianOptions::default()
    };
    match check_scene(&scene, &opts) {
        Ok(report) => {
            print!("{}", report.table());
            if report.passed() {
                println!("\nAll {} constraint checks passed.", report.entries.len());
                ExitCode::SUCCESS
            } else {
                eprintln!(
                    "error: {} constraint check(s) failed",
                    report.failures().len()
                );
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn print_summary(s: &RunSummary, out: &std::path::Path) {
    print!("{}", run::markdown(s));
    for w in &s.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(e) = &s.error {
        eprintln!("error: the run ended early: {e}");
    }
    println!("\nOutputs written to {}", out.display());
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let interrupt = Arc::new(AtomicBool::new(false));
    {
        let flag = Arc::clone(&interrupt);
        // If a handler cannot be installed, Ctrl-C simply ends the process as usual.
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed));
    }
    match cli.command {
        None => run_command("pendulum", &RunArgs::default(), &interrupt),
        Some(Command::Pendulum { opts }) => run_command("pendulum", &opts, &interrupt),
        Some(Command::Run { scene, opts }) => run_command(&scene, &opts, &interrupt),
        Some(Command::Compare {
            scene,
            rotation,
            scalar,
            seconds,
            set,
            out,
        }) => {
            let args = RunArgs {
                seconds,
                set,
                out,
                ..RunArgs::default()
            };
            compare_command(&scene, &args, rotation, scalar, &interrupt)
        }
        Some(Command::Sweep {
            scene,
            set,
            rotation,
            scalar,
            seconds,
            out,
            jobs,
            emit_jobs,
        }) => sweep_command(
            &scene, &set, rotation, scalar, seconds, out, jobs, emit_jobs, &interrupt,
        ),
        Some(Command::Merge { dirs, out }) => merge_command(&dirs, &out),
        Some(Command::CheckJacobians {
            scene,
            states,
            seed,
        }) => check_command(&scene, states, seed),
    }
}
