//! `lie-xpbd reproduce figure11`: the banded solve against the one-Gauss-point-at-a-time
//! projection of a rod (paper Figure 11), run through the one pipeline.
//!
//! # What runs
//! The shipped scene `scenes/figure11.toml` ([`SCENE_TOML`]: the Section 9.2 cantilever,
//! E = 5 MPa, ν = 0.4, d = 0.1 m, L = 1 m, ρ = 1000 kg/m³, gravity 9.81 m/s² along −y,
//! as 5 cubic elements with reduced integration, Δt = 1e-2 s, one substep, Rayleigh
//! damping b = 0.2 s, 10 s), once per entry of [`RUNS`] with `--set` overrides of
//! `rods.beam.solve` (`banded`: one block-banded λ-system of the whole rod per
//! iteration, a Newton step; `gauss_point`: one Gauss point at a time, see
//! [`crate::rod::RodSolve`]) and `solver.iterations` (1 and 100), each an ordinary
//! [`run_scene`] into `DIR/runs/<solve>_<iterations>/`.
//!
//! The default 10 s (1,000 steps) brings the banded rod to rest (node speeds below
//! 1e-13 m/s) but not the Gauss-point ones, whose softer rods settle far more slowly
//! (about 1.5·10⁴ steps for 100 iterations): their `final_max_speed` says how far from
//! rest they are, and [`Figure11Options::seconds`] (`--seconds`) runs longer.
//!
//! # What is reported
//! Per run ([`Figure11Run`]): the tip sag −p_tip,y (m) at the end, the lowest tip y
//! over the run, the tip x at the end, the largest velocity component at the end, the
//! time per step and the residuals (51)–(52) at the end. Files in `DIR`, written whole
//! when the study completes: `tip_sag.csv` (t and the sag of every run, every step),
//! `tip_sag.png` (sag against time), `summary.json` ([`Figure11Report`]) and
//! `summary.md`.

use super::super::files::OutputDir;
use super::super::plot::{ChartSpec, Series};
use super::super::run::{run_scene, RunOptions, RunStatus};
use super::cantilever::last_row;
use super::{
    check_seconds, read_columns, read_err, stage_chart, stage_summaries, Completeness,
    ReproduceError,
};
use crate::scene::Scene;
use crate::sim::{Rotation, Scalar};
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// The Figure 11 scene (`scenes/figure11.toml`).
pub const SCENE_TOML: &str = include_str!("../../../scenes/figure11.toml");

/// The runs: (solve as in the scene file, iterations per substep).
pub const RUNS: [(&str, usize); 4] = [
    ("banded", 1),
    ("banded", 100),
    ("gauss_point", 1),
    ("gauss_point", 100),
];

/// What `reproduce figure11` runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure11Options {
    /// Simulated time of every run, s (`None`: the scene's 10 s).
    pub seconds: Option<f64>,
    /// Rotation representation.
    pub rotation: Rotation,
    /// Scalar type.
    pub scalar: Scalar,
    /// Whether this is the cheap configuration of [`Self::quick`] (`--quick`): the
    /// study's summaries say so.
    pub quick: bool,
}

impl Default for Figure11Options {
    /// The scene's 10 s, f64 rotation matrices.
    fn default() -> Self {
        Self {
            seconds: None,
            rotation: Rotation::Matrix,
            scalar: Scalar::F64,
            quick: false,
        }
    }
}

impl Figure11Options {
    /// Checks the options before anything runs.
    ///
    /// # Errors
    /// [`ReproduceError::InvalidOption`] naming `--seconds` if it is not a positive
    /// finite number of seconds or makes more than [`crate::scene::MAX_STEPS`] steps.
    pub fn validate(&self) -> Result<(), ReproduceError> {
        if let Some(seconds) = self.seconds {
            let scene = Scene::from_toml(SCENE_TOML, "scenes/figure11.toml").map_err(|source| {
                ReproduceError::Scene {
                    scene: "figure11".into(),
                    source: Box::new(source),
                }
            })?;
            check_seconds("--seconds", seconds, scene)?;
        }
        Ok(())
    }

    /// A cheap configuration: 1 s per run (none at rest).
    pub fn quick() -> Self {
        Self {
            seconds: Some(1.0),
            quick: true,
            ..Self::default()
        }
    }
}

/// One run, as written to `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure11Run {
    /// `banded` or `gauss_point`.
    pub solve: String,
    /// Solver iterations per substep.
    pub iterations: usize,
    /// Tip sag −p_tip,y at the end, m.
    pub tip_sag_m: f64,
    /// Largest tip sag over the run, m.
    pub max_tip_sag_m: f64,
    /// Tip x at the end, m (1 m for the undeformed rod).
    pub tip_x_m: f64,
    /// Largest |velocity component| of any node at the end (m/s, rad/s).
    pub final_max_speed: f64,
    /// Time per step, ms (the steps alone).
    pub step_ms: f64,
    /// Primal residual (51) at the last step.
    pub primal_residual: Option<f64>,
    /// Constraint residual (52) at the last step.
    pub constraint_residual: Option<f64>,
    /// Simulated time, s.
    pub duration_s: f64,
    /// How the run ended.
    pub status: RunStatus,
}

/// The contents of `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure11Report {
    /// How much of the study ran.
    #[serde(flatten)]
    pub completeness: Completeness,
    /// Every run, in the order of [`RUNS`] (an interrupted one with status
    /// `interrupted`, unless it recorded no row).
    pub runs: Vec<Figure11Run>,
    /// Rotation representation.
    pub rotation: String,
    /// Scalar type.
    pub scalar: String,
}

/// Runs the study into `dir` (module docs); `progress(k, n, what)` is called before
/// each run. `interrupt` stops it after the current run.
///
/// # Errors
/// [`ReproduceError::InvalidOption`] from [`Figure11Options::validate`] (nothing is run
/// or written); [`ReproduceError`] if a run fails, its files cannot be read back, or
/// the study's files cannot be written.
pub fn reproduce_figure11(
    dir: &Path,
    opts: &Figure11Options,
    interrupt: &AtomicBool,
    progress: &dyn Fn(usize, usize, &str),
) -> Result<Figure11Report, ReproduceError> {
    opts.validate()?;
    let mut out = OutputDir::create(dir)?;
    out.check_targets(&["tip_sag.csv", "tip_sag.png", "summary.json", "summary.md"])?;
    let mut completeness = Completeness::planned(
        RUNS.iter()
            .map(|(solve, iterations)| format!("runs/{solve}_{iterations}")),
    )
    .quick(opts.quick);
    let mut runs = Vec::new();
    let mut histories: Vec<Vec<(f64, f64)>> = Vec::new();
    for (k, (solve, iterations)) in RUNS.into_iter().enumerate() {
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
        let what = format!("{solve}, {iterations} iterations");
        progress(k, RUNS.len(), &what);
        let err = |source| ReproduceError::Scene {
            scene: "figure11".into(),
            source: Box::new(source),
        };
        let mut scene = Scene::from_toml(SCENE_TOML, "scenes/figure11.toml").map_err(err)?;
        let mut set = vec![
            ("rods.beam.solve".to_string(), solve.to_string()),
            ("solver.iterations".to_string(), iterations.to_string()),
        ];
        if let Some(s) = opts.seconds {
            set.push(("run.duration".into(), format!("{s:?}")));
        }
        scene.set_all(&set).map_err(err)?;
        let folder = dir.join(format!("runs/{solve}_{iterations}"));
        let run_opts = RunOptions {
            rotation: opts.rotation,
            scalar: opts.scalar,
            out: folder.clone(),
            progress: None,
            vtk: false,
        };
        let summary = run_scene(&scene, &run_opts, interrupt).map_err(|e| ReproduceError::Run {
            scene: "figure11".into(),
            mode: what.clone(),
            source: Box::new(e),
        })?;
        completeness.ran(&format!("runs/{solve}_{iterations}"), summary.status);
        if summary.status == RunStatus::Interrupted && summary.rows == 0 {
            break;
        }
        let tip = scene.file().rods[0].node_count() - 1;
        let states = folder.join("states.csv");
        let (px, py) = (format!("beam:{tip}_px"), format!("beam:{tip}_py"));
        let rows = read_columns(&states, &["t", &px, &py])?;
        let last = rows
            .last()
            .ok_or_else(|| read_err(&states, "no rows"))?
            .clone();
        let history: Vec<(f64, f64)> = rows.iter().map(|r| (r[0], -r[2])).collect();
        let (_, vel) = last_row(&folder.join("velocities.csv"))?;
        let residuals = read_columns(
            &folder.join("residuals.csv"),
            &["primal_residual", "constraint_residual"],
        )?;
        runs.push(Figure11Run {
            solve: solve.into(),
            iterations,
            tip_sag_m: -last[2],
            max_tip_sag_m: history.iter().map(|p| p.1).fold(f64::MIN, f64::max),
            tip_x_m: last[1],
            final_max_speed: vel.iter().skip(1).fold(0.0f64, |m, v| m.max(v.abs())),
            step_ms: summary.time_per_substep_us * summary.settings.substeps as f64 / 1e3,
            primal_residual: residuals.last().map(|r| r[0]),
            constraint_residual: residuals.last().map(|r| r[1]),
            duration_s: summary.simulated_time_s,
            status: summary.status,
        });
        histories.push(history);
    }
    let report = Figure11Report {
        completeness,
        runs,
        rotation: opts.rotation.name().into(),
        scalar: opts.scalar.name().into(),
    };
    let mut csv = String::from("t");
    for r in &report.runs {
        csv.push_str(&format!(",{}_{}_sag_m", r.solve, r.iterations));
    }
    csv.push('\n');
    // Every row of every run: a run that ended earlier (interrupted, diverged) has
    // empty cells past its last row; t from the longest run (all share the scene's
    // step and recording interval).
    let longest = histories.iter().max_by_key(|h| h.len());
    for (i, (t, _)) in longest.into_iter().flatten().enumerate() {
        csv.push_str(&format!("{t:?}"));
        for h in &histories {
            match h.get(i) {
                Some((_, sag)) => csv.push_str(&format!(",{sag:?}")),
                None => csv.push(','),
            }
        }
        csv.push('\n');
    }
    out.stage_bytes("tip_sag.csv", csv.as_bytes())?;
    let series: Vec<Series> = report
        .runs
        .iter()
        .zip(&histories)
        .map(|(r, h)| Series {
            label: format!("{}, {} it.", r.solve, r.iterations),
            points: h.clone(),
        })
        .collect();
    let spec = ChartSpec {
        title: "Figure 11: 5 cubic elements, dt = 1e-2 s, tip sag".into(),
        x_label: "t, s".into(),
        y_label: "tip sag -y, m".into(),
        log_y: false,
    };
    stage_chart(&mut out, "tip_sag.png", &spec, &series)?;
    stage_summaries(&mut out, &report, &markdown(&report))?;
    out.commit()?;
    Ok(report)
}

fn sci(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:.2e}"))
}

/// `summary.md`: the table of runs.
pub fn markdown(r: &Figure11Report) -> String {
    let mut s = r.completeness.banner();
    s.push_str(
        "# Banded against Gauss-point projection (Figure 11)\n\n5 cubic elements, dt = 1e-2 s, one substep, Rayleigh damping 0.2 s.\n\n",
    );
    s.push_str("| solve | iterations | tip sag at end, m | largest sag, m | tip x, m | final max speed | step, ms | primal | constraint | t, s | status |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for x in &r.runs {
        s.push_str(&format!(
            "| {} | {} | {:.4} | {:.4} | {:.4} | {:.1e} | {:.4} | {} | {} | {} | {} |\n",
            x.solve,
            x.iterations,
            x.tip_sag_m,
            x.max_tip_sag_m,
            x.tip_x_m,
            x.final_max_speed,
            x.step_ms,
            sci(x.primal_residual),
            sci(x.constraint_residual),
            x.duration_s,
            x.status
        ));
    }
    s
}
