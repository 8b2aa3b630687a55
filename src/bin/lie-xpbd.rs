//! `lie-xpbd`: runs scene files through the experiment pipeline
//! ([`lie_xpbd::pipeline`]). Thin by design: every experiment is a scene file (or a
//! built-in scene name) and every command is a library function.

use clap::{Args, Parser, Subcommand};
use lie_xpbd::pipeline::commands::{
    check_command, compare_command, merge_command, parse_count, parse_positive_seconds,
    parse_seconds, parse_seed, reproduce_rigid_command, run_command, sweep_command, RunArgs,
};
use lie_xpbd::sim::{Rotation, Scalar};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A second interrupt signal at least this long after the first exits at once; closer
/// ones count as the first (`timeout` signals the program twice at the same moment).
const SECOND_SIGNAL_AFTER: Duration = Duration::from_millis(500);

#[derive(Parser, Debug)]
#[command(
    name = "lie-xpbd",
    version,
    about = "XPBD with rotations on SO(3): runs scene files and writes CSV, JSON, Markdown and plots",
    long_about = "XPBD with rotations on SO(3). Runs a scene file (or a built-in scene name such as \
                  `pendulum`) and writes its recorded channels as CSV, a summary as JSON and \
                  Markdown, into the run's folder. Without a command it runs the built-in \
                  pendulum with its defaults.\n\nExit codes: 0 success (possibly with warnings), \
                  1 the outputs could not be written, 2 invalid input or an uncreatable output folder (nothing written), 3 the \
                  simulation diverged (the rows before it are written), 4 the run completed but \
                  its joints came apart (hard joint rows violated by more than 1e-2 m or rad; all outputs are written; \
                  run, pendulum and sweep), 130 interrupted by Ctrl-C or SIGTERM (the rows so far \
                  are written; a second Ctrl-C exits at once). A sweep exits with the most \
                  serious code of its runs: 130, 3, 2, 1, 4, then 0."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scene file (or a built-in scene name) and write its outputs.
    Run {
        /// Scene file (TOML), or the name of a built-in scene (pendulum, rps).
        scene: String,
        #[command(flatten)]
        opts: RunCli,
    },
    /// The paper's triple pendulum (Section 9.1): `run pendulum`.
    Pendulum {
        #[command(flatten)]
        opts: RunCli,
    },
    /// Run a scene in several rotation representations and scalars in lockstep and
    /// write their differences from the f64 matrix run (compare.csv, compare.png,
    /// compare_rotation.png, summary.json/md).
    Compare {
        /// Scene file (TOML), or the name of a built-in scene.
        scene: String,
        /// Rotation representations, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "matrix,quaternion", value_name = "matrix|quaternion", value_parser = parse_rotation)]
        rotation: Vec<Rotation>,
        /// Scalar types, comma-separated; `f32-plain` is f32 in plain arithmetic
        /// (`solver.f32_arithmetic = "plain"`), `f32` the scene's (compensated by default).
        #[arg(long, value_delimiter = ',', default_value = "f64,f32", value_name = "f64|f32|f32-plain", value_parser = parse_scalar)]
        scalar: Vec<Scalar>,
        /// Simulated duration, s (overrides run.duration).
        #[arg(long, value_name = "S", allow_negative_numbers = true, value_parser = parse_seconds)]
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
        #[arg(long, default_value = "matrix", value_name = "matrix|quaternion", value_parser = parse_rotation)]
        rotation: Rotation,
        /// Scalar type of every run.
        #[arg(long, default_value = "f64", value_name = "f64|f32|f32-plain", value_parser = parse_scalar)]
        scalar: Scalar,
        /// Simulated duration of every run, s (overrides run.duration).
        #[arg(long, value_name = "S", allow_negative_numbers = true, value_parser = parse_seconds)]
        seconds: Option<String>,
        /// Output folder (default: out/<scene name>-sweep).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Runs at once (default: one per core; never more than the runs).
        #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = parse_count)]
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
    /// Reproduce the paper's results: `rigid` runs the triple pendulum (100 s) and the
    /// 3-RPS robot (10 s) in the block, rows and scalar solve modes and writes each
    /// residual history, plots per scene, summary.md and summary.json; `cantilever`
    /// runs the rod convergence sweep of Section 9.2 (scenes/cantilever.toml) and writes
    /// runs.csv, error plots, residuals, summary.md and summary.json; `shear-locking`
    /// the slenderness sweep of Section 9.3 (scenes/shear_locking.toml); `figure11` the
    /// banded against Gauss-point projection of Figure 11 (scenes/figure11.toml); `spring`
    /// the buckling of a compressed helical spring, Section 9.4 (scenes/spring.toml);
    /// `f32` plain f32, compensated f32 and f64 side by side on the pendulum (10 s and
    /// 100 s) and the cubic cantilever: position gap to f64, energy rise and drift, time
    /// per step (summary.md, summary.json).
    Reproduce {
        /// Which results: `rigid` (Section 9.1, Figure 12, Table 1), `cantilever`
        /// (Section 9.2, Figure 13), `shear-locking` (Section 9.3, Figure 14),
        /// `figure11` (Figure 11), `spring` (Section 9.4, Figure 15) or `f32` (the f32
        /// arithmetic study).
        #[arg(value_parser = ["rigid", "cantilever", "shear-locking", "figure11", "spring", "f32"])]
        what: String,
        /// Output folder (default: out/reproduce-WHAT).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// cantilever, shear-locking, figure11, spring: the cheap configuration, marked
        /// QUICK RUN in summary.md and `"quick": true` in summary.json (cantilever: two
        /// counts per discretization, a 6-element reference, 1 s per run; shear-locking:
        /// L/r = 5 and 200, 0.5 s per run; figure11: 1 s per run; none at rest; spring:
        /// 40 elements of each discretization pushed at 0.1 m/s; f32: the pendulum for
        /// 0.5 s and 1 s, the cantilever for 0.5 s).
        #[arg(long)]
        quick: bool,
        /// figure11: simulated time of every run, s (default: the scene's 10 s).
        #[arg(long, value_name = "S", allow_negative_numbers = true, value_parser = parse_positive_seconds)]
        seconds: Option<f64>,
        /// cantilever: elements of the cubic reference rod (default 100).
        #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = parse_count)]
        reference_elements: Option<usize>,
        /// rigid: duration of the pendulum runs, s (default 100).
        #[arg(long, value_name = "S", allow_negative_numbers = true, value_parser = parse_positive_seconds)]
        pendulum_seconds: Option<f64>,
        /// rigid: duration of the 3-RPS runs, s (default 10).
        #[arg(long, value_name = "S", allow_negative_numbers = true, value_parser = parse_positive_seconds)]
        rps_seconds: Option<f64>,
        /// Rotation representation of every run.
        #[arg(long, default_value = "matrix", value_name = "matrix|quaternion", value_parser = parse_rotation)]
        rotation: Rotation,
        /// Scalar type of every run (default f64; not for `f32`, which runs f64, f32 and
        /// f32-plain).
        #[arg(long, value_name = "f64|f32|f32-plain", value_parser = parse_scalar)]
        scalar: Option<Scalar>,
    },
    /// Check every constraint's analytic gradient, and every rod's (each Gauss point
    /// of a FEM rod, each joint of a rigid chain), against finite differences, at the
    /// initial state and at random perturbed states, in all four combinations; exits 1
    /// if any exceeds its tolerance.
    CheckJacobians {
        /// Scene file (TOML), or the name of a built-in scene.
        #[arg(default_value = "pendulum")]
        scene: String,
        /// Random perturbed states per constraint or rod row block.
        #[arg(long, default_value_t = 100, allow_negative_numbers = true, value_parser = parse_count)]
        states: usize,
        /// Seed of the random states.
        #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = parse_seed)]
        seed: u64,
        /// Override a scene field, as for `run` (repeatable; the value is TOML).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
}

#[derive(Args, Debug, Clone, Default)]
struct RunCli {
    /// Rotation representation.
    #[arg(long, default_value = "matrix", value_name = "matrix|quaternion", value_parser = parse_rotation)]
    rotation: Option<Rotation>,
    /// Scalar type.
    #[arg(long, default_value = "f64", value_name = "f64|f32|f32-plain", value_parser = parse_scalar)]
    scalar: Option<Scalar>,
    /// Simulated duration, s (overrides run.duration).
    #[arg(long, value_name = "S", allow_negative_numbers = true, value_parser = parse_seconds)]
    seconds: Option<String>,
    /// Override a scene field, e.g. --set solver.dt=5e-4 --set bodies.link0.density=500
    /// (repeatable; the value is TOML, a bare word is a string).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Output folder (default: out/<scene name>); created if missing. It holds one run:
    /// files of the same names are replaced, and the run files (and vtk frames) an
    /// earlier run wrote there (as its summary.json lists them) and this one does not
    /// are removed; other files stay.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Also write a ParaView time series (DIR/vtk/frames.pvd and one .vtp per row).
    #[arg(long)]
    vtk: bool,
}

impl From<RunCli> for RunArgs {
    fn from(c: RunCli) -> Self {
        RunArgs {
            rotation: c.rotation,
            scalar: c.scalar,
            seconds: c.seconds,
            set: c.set,
            out: c.out,
            vtk: c.vtk,
        }
    }
}

fn parse_rotation(s: &str) -> Result<Rotation, String> {
    s.parse()
}

fn parse_scalar(s: &str) -> Result<Scalar, String> {
    s.parse()
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let interrupt = Arc::new(AtomicBool::new(false));
    {
        let flag = Arc::clone(&interrupt);
        // The first Ctrl-C / SIGTERM / SIGHUP asks the command to stop after its current
        // step (what was computed is written); another one at least
        // `SECOND_SIGNAL_AFTER` later exits at once with 130, writing nothing more (an
        // output file being written stays a hidden temporary file, which the next run
        // into the folder removes). Signals closer together count as one: `timeout`
        // sends its signal to the program and to its process group, i.e. twice. If a
        // handler cannot be installed, Ctrl-C simply ends the process as usual.
        let mut first: Option<Instant> = None;
        let _ = ctrlc::set_handler(move || match first {
            Some(t) if t.elapsed() >= SECOND_SIGNAL_AFTER => {
                eprintln!("\ninterrupted again: exiting now");
                std::process::exit(130);
            }
            Some(_) => {}
            None => {
                first = Some(Instant::now());
                flag.store(true, Ordering::Relaxed);
                eprintln!(
                    "\ninterrupted: stopping after the current step (interrupt again to exit at once)"
                );
            }
        });
    }
    match cli.command {
        None => run_command("pendulum", &RunArgs::default(), &interrupt),
        Some(Command::Pendulum { opts }) => run_command("pendulum", &opts.into(), &interrupt),
        Some(Command::Run { scene, opts }) => run_command(&scene, &opts.into(), &interrupt),
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
        Some(Command::Reproduce {
            what,
            out,
            quick,
            seconds,
            reference_elements,
            pendulum_seconds,
            rps_seconds,
            rotation,
            scalar,
        }) => {
            use lie_xpbd::pipeline::commands as cmd;
            use lie_xpbd::pipeline::reproduce::{
                cantilever::CantileverOptions, figure11::Figure11Options,
                shear_locking::ShearLockingOptions, spring::SpringOptions, RigidOptions,
            };
            /// The study's cheap configuration with `--quick`, else its default.
            fn options<O: Default>(quick: bool, cheap: fn() -> O) -> O {
                if quick {
                    cheap()
                } else {
                    O::default()
                }
            }
            // An option that the chosen study does not use is an error, not ignored.
            let given = [
                (
                    "--quick",
                    quick,
                    "cantilever, shear-locking, figure11, spring and f32",
                ),
                (
                    "--scalar",
                    scalar.is_some(),
                    "rigid, cantilever, shear-locking, figure11 and spring",
                ),
                ("--seconds", seconds.is_some(), "figure11"),
                (
                    "--reference-elements",
                    reference_elements.is_some(),
                    "cantilever",
                ),
                ("--pendulum-seconds", pendulum_seconds.is_some(), "rigid"),
                ("--rps-seconds", rps_seconds.is_some(), "rigid"),
            ];
            for (option, set, applies) in given {
                if set && !applies.split([',', ' ']).any(|w| w == what) {
                    eprintln!(
                        "error: {option} does not apply to `reproduce {what}` (it applies to {applies})"
                    );
                    return ExitCode::from(2);
                }
            }
            let out = out.unwrap_or_else(|| PathBuf::from(format!("out/reproduce-{what}")));
            let scalar = scalar.unwrap_or(Scalar::F64);
            match what.as_str() {
                "f32" => {
                    use lie_xpbd::pipeline::reproduce::f32::F32Options;
                    let mut opts = options(quick, F32Options::quick);
                    opts.rotation = rotation;
                    cmd::reproduce_f32_command(&out, &opts, &interrupt)
                }
                "cantilever" => {
                    let mut opts = options(quick, CantileverOptions::quick);
                    if let Some(n) = reference_elements {
                        opts.reference_elements = n;
                    }
                    (opts.rotation, opts.scalar) = (rotation, scalar);
                    cmd::reproduce_cantilever_command(&out, &opts, &interrupt)
                }
                "shear-locking" => {
                    let mut opts = options(quick, ShearLockingOptions::quick);
                    (opts.rotation, opts.scalar) = (rotation, scalar);
                    cmd::reproduce_shear_locking_command(&out, &opts, &interrupt)
                }
                "figure11" => {
                    let mut opts = options(quick, Figure11Options::quick);
                    if seconds.is_some() {
                        opts.seconds = seconds;
                    }
                    (opts.rotation, opts.scalar) = (rotation, scalar);
                    cmd::reproduce_figure11_command(&out, &opts, &interrupt)
                }
                "spring" => {
                    let mut opts = options(quick, SpringOptions::quick);
                    (opts.rotation, opts.scalar) = (rotation, scalar);
                    cmd::reproduce_spring_command(&out, &opts, &interrupt)
                }
                _ => {
                    let defaults = RigidOptions::default();
                    let opts = RigidOptions {
                        pendulum_seconds: pendulum_seconds.unwrap_or(defaults.pendulum_seconds),
                        rps_seconds: rps_seconds.unwrap_or(defaults.rps_seconds),
                        rotation,
                        scalar,
                    };
                    reproduce_rigid_command(&out, &opts, &interrupt)
                }
            }
        }
        Some(Command::CheckJacobians {
            scene,
            states,
            seed,
            set,
        }) => check_command(&scene, &set, states, seed, &interrupt),
    }
}
