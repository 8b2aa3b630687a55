//! `lie-xpbd`: runs the paper's experiments and writes their outputs.
//!
//! `lie-xpbd` with no subcommand runs `lie-xpbd pendulum` with its defaults. See
//! README.md for the options and the output formats, and [`lie_xpbd::pipeline::files`] for the
//! writers. Exit codes: 0 success (possibly with warnings that the run is not
//! physically meaningful), 1 the run's memory could not be allocated or its outputs
//! could not be written, 2 invalid input (including an unusable `--out`), 3 the
//! simulation diverged (the steps before it are still written).

use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::pipeline::files::{self, OutputDir, Recorder, RunStatus, RunSummary};
use lie_xpbd::scenes::pendulum::{self, PendulumConfig};
use lie_xpbd::scenes::ScenarioError;
use lie_xpbd::xpbd::{SolveMode, World, XpbdError};
use serde::Serialize;
use std::fmt::Display;
use std::num::IntErrorKind;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Most time steps one run may take. Both residuals of every step are kept in memory
/// for the medians, 16 bytes per step ([`Recorder::BYTES_PER_STEP`]): at most 160 MB,
/// plus as much again briefly while a median is computed (it sorts a copy).
const MAX_STEPS: u64 = 10_000_000;
/// Most rows one run may record. A pendulum row takes 184 bytes in memory (4 values
/// of `residuals.csv` and 19 of `states.csv`, 8 bytes each): at most 184 MB. With
/// [`MAX_STEPS`], a run needs at most about 350 MB (500 MB while a median is taken),
/// reserved up front with `try_reserve` so that a shortage is a clean error.
const MAX_ROWS: u64 = 1_000_000;
/// Most substep-iterations (steps × substeps × iterations: Gauss–Seidel sweeps over the
/// three joints) one run may take. A pendulum sweep costs about 2–3 µs in a release
/// build (2.8 µs per one-iteration substep, 2.1 µs per extra iteration, measured), so
/// this is a run of about 20–25 minutes, or an hour on a machine 2–3 times slower;
/// the paper's 100 s run takes 1e5.
const MAX_WORK: u64 = 500_000_000;
/// Wall time after which the progress bar appears.
const PROGRESS_DELAY: Duration = Duration::from_secs(1);
/// Redraw period of the visible progress bar (its clock runs even during a long step).
const PROGRESS_TICK: Duration = Duration::from_millis(250);
/// Substep-iterations between updates of the progress bar's position.
const PROGRESS_WORK: u64 = 256;
/// Largest constraint residual (52) of a meaningful run, m or rad: far above the
/// ~1e-4 of the paper's settings, far below a joint that came apart.
const RESIDUAL_WARNING: f64 = 1e-2;
/// Distance beyond its geometric reach ([`pendulum::max_reach`]) at which a body
/// shows that the joints did not hold, m.
const REACH_WARNING: f64 = 1e-2;
/// Energy gain, relative to max(|E₀|, 1 J), above which a run is flagged: backward
/// Euler only dissipates, so a gain is round-off or a broken run. f32 round-off on the
/// pendulum's ~100 J is ~1e-5 J per evaluation (gains of up to 5e-3 J were seen at the
/// default settings); a time step too small for the precision, e.g. `--dt 1e-6` in f32,
/// gains hundreds of joules.
const ENERGY_GAIN_WARNING: f64 = 1e-3;
/// Names of the files a run writes, in the order they are written.
const FILES: [&str; 3] = ["residuals.csv", "states.csv", "summary.json"];

#[derive(Parser, Debug)]
#[command(
    name = "lie-xpbd",
    version,
    about = "XPBD with rotations on SO(3): runs the paper's experiments and writes CSV/JSON outputs",
    long_about = "XPBD with rotations on SO(3): runs the paper's experiments and writes \
                  CSV/JSON outputs.\n\nWithout a subcommand, runs `pendulum` (the options \
                  below are the pendulum's).",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    pendulum: PendulumArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The triple pendulum of Section 9.1 (the default command).
    ///
    /// Three 1 m boxes hinged end to end, released from rest at --angle degrees from the
    /// downward vertical. Writes DIR/residuals.csv, DIR/states.csv and DIR/summary.json.
    Pendulum(PendulumArgs),
}

/// Projection of the joints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Solver {
    /// All rows of a joint at once (eq. 124).
    Block,
    /// One scalar row at a time (eq. 56).
    Rows,
}

/// Rotation representation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Rotation {
    /// 3×3 rotation matrices.
    Matrix,
    /// Unit quaternions.
    Quaternion,
}

/// Scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Scalar {
    /// 64-bit floats.
    F64,
    /// 32-bit floats.
    F32,
}

#[derive(Args, Debug, Clone)]
struct PendulumArgs {
    /// Simulated duration, s.
    #[arg(long, value_name = "S", default_value_t = 10.0,
          value_parser = positive_f64, allow_negative_numbers = true)]
    seconds: f64,
    /// Time step Δt, s.
    #[arg(long, value_name = "DT", default_value_t = 1e-3,
          value_parser = positive_f64, allow_negative_numbers = true)]
    dt: f64,
    /// Substeps per time step.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = positive_usize, allow_negative_numbers = true)]
    substeps: usize,
    /// Solver iterations (Gauss–Seidel sweeps) per substep.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = positive_usize, allow_negative_numbers = true)]
    iterations: usize,
    /// Joint projection: block (eq. 124) or rows (eq. 56).
    #[arg(long, value_enum, default_value_t = Solver::Block)]
    solver: Solver,
    /// Rotation representation.
    #[arg(long, value_enum, default_value_t = Rotation::Matrix)]
    rotation: Rotation,
    /// Scalar type.
    #[arg(long, value_enum, default_value_t = Scalar::F64)]
    scalar: Scalar,
    /// Release angle of the straight chain from the downward vertical, degrees (within
    /// ±3600).
    #[arg(long, value_name = "DEG", default_value_t = 80.0,
          value_parser = finite_f64, allow_negative_numbers = true)]
    angle: f64,
    /// Write a row of each CSV every N steps (the median residuals still use every step).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = positive_u64, allow_negative_numbers = true)]
    every: u64,
    /// Output directory (created if missing; existing files of the same names are
    /// replaced).
    #[arg(long, value_name = "DIR", default_value = "out/pendulum", value_parser = non_empty_path)]
    out: PathBuf,
}

fn finite_f64(s: &str) -> Result<f64, String> {
    let x: f64 = s
        .trim()
        .parse()
        .map_err(|e| format!("not a number ({e})"))?;
    if x.is_finite() {
        Ok(x)
    } else if x.is_nan() || s.to_ascii_lowercase().contains("inf") {
        Err("must be a finite number".into())
    } else {
        Err(format!("is too large (at most {:e})", f64::MAX))
    }
}

fn positive_f64(s: &str) -> Result<f64, String> {
    let bad = || "must be a positive, finite number".to_string();
    let x = finite_f64(s).map_err(|e| {
        if e.starts_with("is too large") {
            e
        } else {
            bad()
        }
    })?;
    if x > 0.0 {
        Ok(x)
    } else {
        Err(bad())
    }
}

fn positive_u64(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        Err(e) if *e.kind() == IntErrorKind::PosOverflow => {
            Err(format!("is too large (at most {})", u64::MAX))
        }
        _ => Err("must be a whole number of at least 1".into()),
    }
}

fn positive_usize(s: &str) -> Result<usize, String> {
    let n = positive_u64(s)?;
    usize::try_from(n).map_err(|_| format!("is too large (at most {})", usize::MAX))
}

fn non_empty_path(s: &str) -> Result<PathBuf, String> {
    if s.is_empty() {
        Err("must not be empty".into())
    } else {
        Ok(PathBuf::from(s))
    }
}

/// How a run failed; each kind has its exit code.
#[derive(Debug)]
enum Failure {
    /// Invalid input (exit 2, like clap's own usage errors).
    Usage(String),
    /// The run's memory could not be allocated, or writing the outputs failed (exit 1).
    Io(String),
    /// The simulation diverged (exit 3); the steps before it were written.
    Diverged(String),
}

impl Failure {
    fn exit_code(&self) -> ExitCode {
        ExitCode::from(match self {
            Failure::Io(_) => 1,
            Failure::Usage(_) => 2,
            Failure::Diverged(_) => 3,
        })
    }
}

impl Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Usage(m) | Failure::Io(m) | Failure::Diverged(m) => f.write_str(m),
        }
    }
}

/// Names the command-line option behind a configuration error.
fn usage(e: ScenarioError) -> Failure {
    let option = |field: &str, value: &str, reason: &str| {
        Failure::Usage(format!("invalid value '{value}' for '--{field}': {reason}"))
    };
    match e {
        // The value as typed may be long (1e160 printed in full has 161 digits).
        ScenarioError::InvalidConfig {
            field,
            value,
            reason,
        } => option(field, &value.parse().map_or(value, num), reason),
        ScenarioError::Xpbd(XpbdError::InvalidOption {
            name,
            value,
            reason,
        }) => option(name, &value, reason),
        other => Failure::Usage(format!("invalid pendulum settings: {other}")),
    }
}

/// Settings of a pendulum run, as written to `summary.json`.
#[derive(Debug, Clone, Serialize)]
struct Settings {
    seconds: f64,
    dt: f64,
    substeps: usize,
    iterations: usize,
    solver: &'static str,
    rotation: &'static str,
    scalar: &'static str,
    angle_deg: f64,
    every: u64,
    steps_planned: u64,
    out: String,
}

impl PendulumArgs {
    fn config(&self) -> PendulumConfig {
        PendulumConfig {
            seconds: self.seconds,
            dt: self.dt,
            substeps: self.substeps,
            iterations: self.iterations,
            solve_mode: match self.solver {
                Solver::Block => SolveMode::Block,
                Solver::Rows => SolveMode::Rows,
            },
            initial_angle_deg: self.angle,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let args = match cli.command {
        Some(Command::Pendulum(a)) => a,
        None => cli.pendulum,
    };
    let result = match (args.rotation, args.scalar) {
        (Rotation::Matrix, Scalar::F64) => run::<f64, SO3Matrix<f64>>(&args),
        (Rotation::Matrix, Scalar::F32) => run::<f32, SO3Matrix<f32>>(&args),
        (Rotation::Quaternion, Scalar::F64) => run::<f64, UnitQuaternion<f64>>(&args),
        (Rotation::Quaternion, Scalar::F32) => run::<f32, UnitQuaternion<f32>>(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}

/// Checks the size of the run `args` asks for: its steps, its total work and its rows.
/// Returns the number of steps.
fn check_size(args: &PendulumArgs, cfg: &PendulumConfig) -> Result<u64, Failure> {
    // Checked in f64 first: `cfg.steps()` saturates for absurd ratios.
    // With the same 1e-9 relative round-off allowance as `PendulumConfig::steps`.
    let ratio = args.seconds / args.dt;
    let planned = (ratio - 1e-9 * ratio).ceil();
    if planned > MAX_STEPS as f64 {
        return Err(Failure::Usage(format!(
            "invalid value '{}' for '--seconds': with --dt {} that is {} steps; at most \
             {MAX_STEPS} are supported (pass a shorter --seconds or a larger --dt)",
            num(args.seconds),
            num(args.dt),
            if planned < 1e15 {
                format!("{planned:.0}")
            } else {
                num(planned)
            }
        )));
    }
    let steps = cfg.steps();
    let work = u128::from(steps)
        .saturating_mul(args.substeps as u128)
        .saturating_mul(args.iterations as u128);
    if work > u128::from(MAX_WORK) {
        return Err(Failure::Usage(format!(
            "invalid values for '--substeps' and '--iterations': {} × {} × {} = {} \
             substep-iterations (--seconds/--dt steps × --substeps × --iterations); at \
             most {} are supported (about half an hour), so lower --substeps, \
             --iterations or --seconds, or raise --dt",
            plural(steps, "step"),
            plural(args.substeps as u64, "substep"),
            plural(args.iterations as u64, "iteration"),
            num(work as f64),
            num(MAX_WORK as f64),
        )));
    }
    if steps / args.every > MAX_ROWS {
        return Err(Failure::Usage(format!(
            "invalid value '{}' for '--every': {} rows would be recorded; at most {MAX_ROWS} \
             are supported (184 bytes each in memory), so pass a larger --every",
            args.every,
            steps / args.every
        )));
    }
    Ok(steps)
}

/// Runs the pendulum with scalar `T` and rotations `G`, writes the outputs and prints a
/// summary. Nothing is created on disk before every check has passed and the memory for
/// the run is reserved.
fn run<T: Real, G: LieGroup<T>>(args: &PendulumArgs) -> Result<(), Failure> {
    let cfg = args.config();
    cfg.validate().map_err(usage)?;
    let steps = check_size(args, &cfg)?;
    let world = pendulum::build::<T, G>(&cfg).map_err(usage)?;
    let mut rec = Recorder::new(&world, args.every)
        .map_err(|e| Failure::Usage(format!("invalid value for '--every': {e}")))?
        .with_time_step(args.dt);
    rec.try_reserve(steps).map_err(|e| {
        Failure::Io(format!(
            "{e}; pass a larger --every, a shorter --seconds or a larger --dt"
        ))
    })?;
    let bad_out = |e| Failure::Usage(format!("invalid value for '--out <DIR>': {e}"));
    let out = OutputDir::create(&args.out).map_err(bad_out)?;
    out.check_targets(&FILES).map_err(bad_out)?;
    simulate(world, rec, args, steps, out)
}

/// Updates of the progress bar come every this many steps: about every
/// [`PROGRESS_WORK`] substep-iterations, and after every step when steps are long.
fn progress_interval(substeps: usize, iterations: usize) -> u64 {
    let work = (substeps as u64).saturating_mul(iterations as u64).max(1);
    (PROGRESS_WORK / work).max(1)
}

/// The largest total energy over a run, above its initial value.
#[derive(Debug, Clone, Copy, Default)]
struct EnergyGain {
    /// Largest E(t) − E₀, J (≤ 0 if the energy never rose).
    gain: f64,
    /// Step at which it occurred.
    step: u64,
}

impl EnergyGain {
    fn check<T: Real, G: LieGroup<T>>(&mut self, world: &World<T, G>, step: u64, e0: f64) {
        let gain = world.energy().to_f64() - e0;
        if gain > self.gain {
            *self = EnergyGain { gain, step };
        }
    }
}

/// How far the bodies strayed beyond their geometric reach over a run.
#[derive(Debug, Clone, Copy, Default)]
struct Reach {
    /// Largest distance beyond [`pendulum::max_reach`], m (≤ 0 if none strayed).
    excess: f64,
    /// The body, its distance from the pivot (m) and the step of that excess.
    body: usize,
    distance: f64,
    step: u64,
}

impl Reach {
    fn check<T: Real, G: LieGroup<T>>(&mut self, world: &World<T, G>, step: u64) {
        for (i, b) in world.bodies().iter().enumerate() {
            let distance = b.position.norm().to_f64();
            let excess = distance - pendulum::max_reach(i);
            if excess > self.excess {
                *self = Reach {
                    excess,
                    body: i,
                    distance,
                    step,
                };
            }
        }
    }
}

/// Warnings that a run is not physically meaningful, from its largest constraint
/// residual and the farthest a body strayed beyond its reach.
fn warnings(
    max_constraint: Option<f64>,
    reach: &Reach,
    energy: (&EnergyGain, f64),
    rec: &Recorder,
) -> Vec<String> {
    let advice = "try a smaller --dt or more --substeps";
    let mut w = Vec::new();
    let (gain, e0) = energy;
    if rec.steps() > 0 && rec.residuals().rows().next().is_none() {
        w.push(format!(
            "no rows were recorded: --every is larger than the {} steps taken, so the CSV \
             files hold only their headers (pass a smaller --every)",
            rec.steps()
        ));
    }
    if gain.gain > ENERGY_GAIN_WARNING * e0.abs().max(1.0) {
        w.push(format!(
            "the total energy rose by {} J above its initial {} J (at t = {} s): backward \
             Euler only removes energy, so round-off dominates this run; with f32 a very \
             small --dt loses the position increments to rounding (use --scalar f64 or a \
             larger --dt)",
            sig4(gain.gain),
            sig4(e0),
            num(rec.time_at(gain.step)),
        ));
    }
    if let Some(r) = max_constraint.filter(|&r| r > RESIDUAL_WARNING) {
        w.push(format!(
            "the constraint residual reached {r:.3e} (above {RESIDUAL_WARNING:e} m or rad): \
             the joints did not hold, so the motion is not physically meaningful; {advice}"
        ));
    }
    if reach.excess > REACH_WARNING {
        w.push(format!(
            "body {} was {} m from the pivot at t = {} s, {} m beyond its reach of {} m: \
             the joints came apart, so the motion is not physically meaningful; {advice}",
            reach.body,
            sig4(reach.distance),
            num(rec.time_at(reach.step)),
            sig4(reach.excess),
            num(pendulum::max_reach(reach.body)),
        ));
    }
    w
}

/// Takes `steps` steps of `world` (the pendulum of `args`) recorded by `rec`, writes
/// the outputs to `out` and prints the summary; a divergence ends the loop early and is
/// reported after the steps before it have been written.
fn simulate<T: Real, G: LieGroup<T>>(
    mut world: World<T, G>,
    mut rec: Recorder,
    args: &PendulumArgs,
    steps: u64,
    out: OutputDir,
) -> Result<(), Failure> {
    let energy_initial = world.energy().to_f64();

    // The simulation loop: nothing but stepping, residuals, rows in memory and the
    // reach check (three norms a step).
    let progress = progress_bar(steps);
    // Reveals the bar after PROGRESS_DELAY unless the loop is done by then; its steady
    // tick keeps the clock moving even while one long step runs.
    let (done, done_rx) = mpsc::channel::<()>();
    let reveal = {
        let bar = progress.clone();
        std::thread::spawn(move || {
            if let Err(RecvTimeoutError::Timeout) = done_rx.recv_timeout(PROGRESS_DELAY) {
                bar.set_draw_target(ProgressDrawTarget::stderr());
                bar.enable_steady_tick(PROGRESS_TICK);
            }
        })
    };
    let interval = progress_interval(args.substeps, args.iterations);
    let start = Instant::now();
    let mut reach = Reach::default();
    let mut gain = EnergyGain::default();
    let mut diverged = None;
    for k in 1..=steps {
        if let Err(e) = rec.step(&mut world) {
            diverged = Some(e);
            break;
        }
        reach.check(&world, k);
        gain.check(&world, k, energy_initial);
        if k.is_multiple_of(interval) {
            progress.set_position(k);
        }
    }
    let wall = start.elapsed();
    drop(done);
    // The thread only waits on the channel (now closed) and touches the bar.
    let _ = reveal.join();
    progress.finish_and_clear();

    // After a divergence the world's state is not finite: use the last row instead.
    let energy_final = match (&diverged, rec.residuals().rows().last()) {
        (None, _) => world.energy().to_f64(),
        (Some(_), Some(row)) => row[3],
        (Some(_), None) => energy_initial,
    };
    let substeps = rec.steps() * args.substeps as u64;
    let step_time = rec.step_time().as_secs_f64();
    let summary = RunSummary {
        scene: "pendulum".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        settings: Settings {
            seconds: args.seconds,
            dt: args.dt,
            substeps: args.substeps,
            iterations: args.iterations,
            solver: world.options().solve_mode.name(),
            rotation: G::NAME,
            scalar: T::NAME,
            angle_deg: args.angle,
            every: args.every,
            steps_planned: steps,
            out: args.out.display().to_string(),
        },
        warnings: warnings(
            files::max(rec.constraint_residuals()),
            &reach,
            (&gain, energy_initial),
            &rec,
        ),
        status: if diverged.is_some() {
            RunStatus::Diverged
        } else {
            RunStatus::Completed
        },
        error: diverged.as_ref().map(ToString::to_string),
        steps: rec.steps(),
        substeps,
        simulated_time_s: rec.time(),
        rows: rec.residuals().len(),
        wall_time_s: wall.as_secs_f64(),
        step_time_s: step_time,
        time_per_substep_us: if substeps > 0 {
            step_time * 1e6 / substeps as f64
        } else {
            0.0
        },
        median_primal_residual: files::median(rec.primal_residuals()),
        median_constraint_residual: files::median(rec.constraint_residuals()),
        max_primal_residual: files::max(rec.primal_residuals()),
        max_constraint_residual: files::max(rec.constraint_residuals()),
        energy_initial_j: energy_initial,
        energy_final_j: energy_final,
        files: FILES.iter().map(|f| f.to_string()).collect(),
    };
    write_outputs(out, &rec, &summary)?;
    print_summary(&summary, &args.out);
    for w in &summary.warnings {
        eprintln!("warning: {w}");
    }
    match diverged {
        None => Ok(()),
        Some(e) => Err(Failure::Diverged(format!(
            "{e}; wrote the {} rows before it to {}",
            rec.residuals().len(),
            args.out.display()
        ))),
    }
}

/// A progress bar on stderr that stays hidden until [`PROGRESS_DELAY`] has passed (the
/// loop reveals it) and never draws when stderr is not a terminal.
fn progress_bar(steps: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(steps), ProgressDrawTarget::hidden());
    let style = ProgressStyle::with_template(
        "simulating {wide_bar} {percent:>3}%  step {pos}/{len}, {elapsed} elapsed, eta {eta}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

fn write_outputs(
    mut out: OutputDir,
    rec: &Recorder,
    summary: &RunSummary<Settings>,
) -> Result<(), Failure> {
    let dir = out.path().display().to_string();
    // Before the commit's renames, a failure leaves every file as it was.
    let untouched = |e: files::OutputError| {
        Failure::Io(format!(
            "could not write the outputs: {e}; the files in '{dir}' were left as they were"
        ))
    };
    out.stage_csv(FILES[0], rec.residuals())
        .map_err(untouched)?;
    out.stage_csv(FILES[1], rec.states()).map_err(untouched)?;
    out.stage_json(FILES[2], summary).map_err(untouched)?;
    out.commit().map_err(|e| match e {
        // Its message lists the files already replaced.
        files::OutputError::Commit { .. } => {
            Failure::Io(format!("could not write all the outputs: {e}"))
        }
        other => untouched(other),
    })?;
    Ok(())
}

/// A number as a person writes it: plain in [1e-4, 1e6), else in scientific notation.
fn num(x: f64) -> String {
    if x == 0.0 || (1e-4..1e6).contains(&x.abs()) || !x.is_finite() {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// `x` to four significant digits, plain in [1e-3, 1e6), else in scientific notation.
fn sig4(x: f64) -> String {
    if !x.is_finite() || x == 0.0 || !(1e-3..1e6).contains(&x.abs()) {
        return format!("{x:.3e}");
    }
    let decimals = (3 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn sci(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.3e}"))
}

fn plural(n: impl Into<u64>, word: &str) -> String {
    let n = n.into();
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// The one-screen summary on stdout.
fn print_summary(s: &RunSummary<Settings>, dir: &Path) {
    let c = &s.settings;
    println!(
        "Triple pendulum (Section 9.1), released at {}° from the vertical",
        c.angle_deg
    );
    println!(
        "  solver      {} solve, {} rotations, {}; dt {} s, {}, {}",
        c.solver,
        c.rotation,
        c.scalar,
        num(c.dt),
        plural(c.substeps as u64, "substep"),
        plural(c.iterations as u64, "iteration")
    );
    let status = match s.status {
        RunStatus::Completed => "completed".to_string(),
        RunStatus::Diverged => format!("DIVERGED after {} s", num(s.simulated_time_s)),
    };
    println!(
        "  run         {} s simulated of {} s ({status}): {}, {}",
        num(s.simulated_time_s),
        num(c.seconds),
        plural(s.steps, "step"),
        plural(s.substeps, "substep")
    );
    println!(
        "  timing      {:.3} s simulation loop; {:.3} µs per substep (inside World::step)",
        s.wall_time_s, s.time_per_substep_us
    );
    println!(
        "  residuals   primal median {} (max {}); constraint median {} (max {})",
        sci(s.median_primal_residual),
        sci(s.max_primal_residual),
        sci(s.median_constraint_residual),
        sci(s.max_constraint_residual)
    );
    println!(
        "  energy      {:.6} J at start, {:.6} J at end (change {:+.6} J)",
        s.energy_initial_j,
        s.energy_final_j,
        s.energy_final_j - s.energy_initial_j
    );
    let every = if c.every == 1 {
        "every step".to_string()
    } else {
        format!("every {} steps", c.every)
    };
    println!(
        "  output      {} ({every}) written to {}/",
        plural(s.rows as u64, "row"),
        dir.display()
    );
    for f in &s.files {
        println!("                {}", dir.join(f).display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    type R = Result<(), Box<dyn std::error::Error>>;
    use clap::CommandFactory;
    use lie_xpbd::xpbd::BodyId;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults_are_the_papers() -> R {
        let cli = Cli::try_parse_from(["lie-xpbd"])?;
        assert!(cli.command.is_none());
        let a = cli.pendulum;
        assert_eq!(a.config(), PendulumConfig::default());
        assert_eq!(
            (a.solver, a.rotation, a.scalar, a.every),
            (Solver::Block, Rotation::Matrix, Scalar::F64, 1)
        );
        assert_eq!(a.out, PathBuf::from("out/pendulum"));
        let sub = Cli::try_parse_from(["lie-xpbd", "pendulum"])?;
        let Some(Command::Pendulum(b)) = sub.command else {
            panic!("expected the pendulum subcommand");
        };
        assert_eq!(b.config(), a.config());
        Ok(())
    }

    #[test]
    fn options_parse_and_reject() -> R {
        let cli = Cli::try_parse_from([
            "lie-xpbd",
            "pendulum",
            "--seconds",
            "0.5",
            "--solver",
            "rows",
            "--rotation",
            "quaternion",
            "--scalar",
            "f32",
            "--angle",
            "-30",
            "--every",
            "5",
        ])?;
        let Some(Command::Pendulum(a)) = cli.command else {
            panic!("expected the pendulum subcommand");
        };
        assert_eq!(a.seconds, 0.5);
        assert_eq!(a.angle, -30.0);
        assert_eq!(a.config().solve_mode, SolveMode::Rows);
        for bad in [
            ["--seconds", "-1"],
            ["--seconds", "NaN"],
            ["--dt", "0"],
            ["--dt", "inf"],
            ["--every", "0"],
            ["--substeps", "-2"],
            ["--iterations", "x"],
            ["--angle", "nan"],
            ["--out", ""],
        ] {
            let e = Cli::try_parse_from(["lie-xpbd", "pendulum", bad[0], bad[1]]).unwrap_err();
            assert!(e.to_string().contains(bad[0]), "{bad:?}: {e}");
            assert_eq!(e.exit_code(), 2);
        }
        Ok(())
    }

    #[test]
    fn divergence_is_reported_and_written() -> R {
        let tmp = tempfile::tempdir()?;
        let cli = Cli::try_parse_from(["lie-xpbd", "--seconds", "0.1"])?;
        let args = PendulumArgs {
            out: tmp.path().to_path_buf(),
            ..cli.pendulum
        };
        let mut world = pendulum::build::<f64, SO3Matrix<f64>>(&args.config())?;
        world.body_mut(BodyId(1)).ok_or("no body 1")?.velocity.y = f64::NAN;
        let out = OutputDir::create(tmp.path())?;
        let rec = Recorder::new(&world, 1)?;
        let e = simulate(world, rec, &args, 100, out).unwrap_err();
        assert!(matches!(e, Failure::Diverged(_)));
        assert_eq!(e.exit_code(), ExitCode::from(3));
        assert!(e.to_string().contains("t = 0.001 s"), "{e}");
        let read = |f: &str| std::fs::read_to_string(tmp.path().join(f));
        assert!(read("residuals.csv")?.starts_with("t,primal_residual,"));
        let summary: serde_json::Value = serde_json::from_str(&read("summary.json")?)?;
        assert_eq!(summary["status"], "diverged");
        assert_eq!(summary["steps"], 0);
        assert!(summary["error"]
            .as_str()
            .unwrap_or_default()
            .contains("diverged"));
        Ok(())
    }

    #[test]
    fn config_errors_name_the_option() {
        let e = usage(ScenarioError::InvalidConfig {
            field: "dt",
            value: "2".into(),
            reason: "must not exceed the duration",
        });
        assert!(e.to_string().contains("'--dt'"), "{e}");
        assert_eq!(e.exit_code(), ExitCode::from(2));
        let e = usage(ScenarioError::InvalidConfig {
            field: "angle",
            value: "1e160".into(),
            reason: "must be finite and within ±3600 degrees",
        });
        assert!(e.to_string().contains("'1e160' for '--angle'"), "{e}");
        assert_eq!(sig4(2.0764130705047431e6), "2.076e6");
        assert_eq!(sig4(2.5), "2.5");
        assert_eq!(sig4(0.0123456), "0.01235");
        assert_eq!(sig4(1234.5678), "1235");
    }

    #[test]
    fn progress_updates_every_step_for_long_steps() {
        // Short steps: about every 256 substep-iterations.
        assert_eq!(progress_interval(1, 1), 256);
        assert_eq!(progress_interval(2, 4), 32);
        // Long steps: after every one of them.
        assert_eq!(progress_interval(256, 1), 1);
        assert_eq!(progress_interval(1000, 1000), 1);
        assert_eq!(progress_interval(usize::MAX, usize::MAX), 1);
    }

    #[test]
    fn too_large_counts_say_too_large() {
        for parse in [positive_u64, |s: &str| positive_usize(s).map(|n| n as u64)] {
            let e = parse("99999999999999999999999").unwrap_err();
            assert!(e.contains("too large"), "{e}");
            for bad in ["0", "-2", "x", "1.5"] {
                let e = parse(bad).unwrap_err();
                assert!(e.contains("at least 1"), "{bad}: {e}");
            }
        }
        assert!(positive_f64("1e400").unwrap_err().contains("too large"));
        assert!(positive_f64("inf").unwrap_err().contains("finite"));
        assert!(finite_f64("-1e400").unwrap_err().contains("too large"));
    }

    #[test]
    fn work_cap_rejects_huge_substeps_and_iterations() -> R {
        for extra in [
            ["--substeps", "1000000000", "--seconds", "0.001"],
            ["--iterations", "4000000000", "--seconds", "10"],
        ] {
            let cli = Cli::try_parse_from(std::iter::once("lie-xpbd").chain(extra))?;
            let a = cli.pendulum;
            let e = check_size(&a, &a.config()).unwrap_err();
            assert!(matches!(e, Failure::Usage(_)), "{e}");
            for opt in ["--substeps", "--iterations", "--seconds", "--dt"] {
                assert!(e.to_string().contains(opt), "{e}");
            }
        }
        // The paper's 100 s run is far inside.
        let cli = Cli::try_parse_from(["lie-xpbd", "--seconds", "100"])?;
        assert_eq!(
            check_size(&cli.pendulum, &cli.pendulum.config()).ok(),
            Some(100_000)
        );
        Ok(())
    }

    #[test]
    fn meaningless_run_warns() -> R {
        let cli = Cli::try_parse_from(["lie-xpbd"])?;
        let world = pendulum::build::<f64, SO3Matrix<f64>>(&cli.pendulum.config())?;
        let rec = Recorder::new(&world, 1)?;
        let mut reach = Reach::default();
        reach.check(&world, 0);
        let none = EnergyGain::default();
        assert!(warnings(Some(1e-4), &reach, (&none, -76.0), &rec).is_empty());
        let far = Reach {
            excess: 2.0,
            body: 2,
            distance: 4.5,
            step: 3,
        };
        let w = warnings(Some(5.0), &far, (&none, -76.0), &rec);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w
            .iter()
            .all(|m| m.contains("--dt") && m.contains("--substeps")));
        assert!(
            w[1].contains("body 2") && w[1].contains("t = 0.003 s"),
            "{w:?}"
        );
        Ok(())
    }

    #[test]
    fn every_beyond_the_step_count_warns() -> R {
        let cli = Cli::try_parse_from(["lie-xpbd", "--seconds", "0.01"])?;
        let mut world = pendulum::build::<f64, SO3Matrix<f64>>(&cli.pendulum.config())?;
        let mut rec = Recorder::new(&world, 100)?;
        for _ in 0..10 {
            rec.step(&mut world)?;
        }
        let none = EnergyGain::default();
        let w = warnings(None, &Reach::default(), (&none, -76.0), &rec);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("--every") && w[0].contains("10 steps"),
            "{w:?}"
        );
        // One step per row: no warning.
        let mut rec = Recorder::new(&world, 1)?;
        rec.step(&mut world)?;
        assert!(warnings(None, &Reach::default(), (&none, -76.0), &rec).is_empty());
        Ok(())
    }

    #[test]
    fn energy_gain_warns_only_above_round_off() -> R {
        let cli = Cli::try_parse_from(["lie-xpbd"])?;
        let world = pendulum::build::<f64, SO3Matrix<f64>>(&cli.pendulum.config())?;
        let rec = Recorder::new(&world, 1)?;
        let reach = Reach::default();
        // 5e-3 J on −76 J: f32 round-off seen at the default settings, no warning.
        let small = EnergyGain {
            gain: 5e-3,
            step: 1,
        };
        assert!(warnings(None, &reach, (&small, -76.0), &rec).is_empty());
        let big = EnergyGain {
            gain: 1300.0,
            step: 2,
        };
        let w = warnings(None, &reach, (&big, -76.0), &rec);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("energy rose") && w[0].contains("f64"),
            "{w:?}"
        );
        Ok(())
    }
}
