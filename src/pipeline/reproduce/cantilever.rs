//! `lie-xpbd reproduce cantilever`: the convergence study of Section 9.2 (Figure 13),
//! run through the one pipeline.
//!
//! # What runs
//! The shipped scene `scenes/cantilever.toml` ([`SCENE_TOML`]: E = 5 MPa, ν = 0.4,
//! d = 0.1 m, L = 1 m, ρ = 1000 kg/m³, Δt = 5e-3 s, Rayleigh damping 0.2 s, 12 s to
//! rest), once per discretization and element count with `--set` overrides of
//! `rods.beam.discretization`, `rods.beam.order` and `rods.beam.elements`, each an
//! ordinary [`run_scene`] into `DIR/runs/<discretization>_<elements>/` (its CSV files,
//! plots and summary are there as for `lie-xpbd run`). The reference is the same scene
//! with a fine cubic rod (`reference_elements`, recorded every 100 steps to keep its
//! `states.csv` small).
//!
//! Both discretizations are solved as one block-banded system per iteration (the fem
//! rod by [`crate::rod::FemRod`], the chain by [`crate::rod::RigidChainRod`]), one
//! iteration per step, as in the paper.
//!
//! # What is reported
//! Per run ([`CantileverRun`]): degrees of freedom (6 per dynamic node or body), the
//! tip error |p_tip − p_ref| (m) at the end of the run, the time per step (ms, the
//! steps alone), the largest velocity component at the end (m/s or rad/s: the rest
//! check), and the residuals (51)–(52) (the rod rows included) at the first and last
//! recorded step. The fitted order of each discretization is the least-squares slope
//! of log(tip error) against log(1/elements) over its runs whose error is above
//! [`ROUNDOFF_FLOOR`] (below it the error is the reference's and the rest state's
//! round-off, not the discretization's).
//!
//! Files in `DIR`, written whole at the end of the study (an interrupted one is marked
//! partial, [`super::Completeness`]): `runs.csv` (one row per
//! run), `summary.json` ([`CantileverReport`]: `orders`, `runs`, the reference, the
//! residual histories), `summary.md`, `error_vs_dof.png` and `error_vs_step_time.png`
//! (tip error on a log axis against log10 of the degrees of freedom, and of the time
//! per step), and `residuals.png` (the primal and constraint residual of the coarsest
//! run of each discretization against time, log axis).

use super::super::files::OutputDir;
use super::super::run::{run_scene, RunOptions, RunStatus};
use super::{
    check_seconds, invalid, option_message, read_columns, read_err, Completeness, ReproduceError,
};
use crate::scene::Scene;
use crate::sim::{Rotation, Scalar};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

mod outputs;

pub use outputs::markdown;
use outputs::write_outputs;

/// The Section 9.2 cantilever scene (`scenes/cantilever.toml`).
pub const SCENE_TOML: &str = include_str!("../../../scenes/cantilever.toml");

/// Tip errors below this (m) are not used in the order fits: the reference and the
/// rest states are exact to about 1e-12 m (f64; rest = velocities below 1e-12 m/s).
pub const ROUNDOFF_FLOOR: f64 = 1e-11;

/// The discretizations, as keyed in `summary.json`: (key, scene discretization, order).
pub const DISCRETIZATIONS: [(&str, &str, usize); 4] = [
    ("rigid_chain", "rigid_chain", 1),
    ("linear", "fem", 1),
    ("quadratic", "fem", 2),
    ("cubic", "fem", 3),
];

/// What `reproduce cantilever` runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CantileverOptions {
    /// Element (segment) counts of the rigid chain.
    pub rigid_chain: Vec<usize>,
    /// Element counts of the linear rod.
    pub linear: Vec<usize>,
    /// Element counts of the quadratic rod.
    pub quadratic: Vec<usize>,
    /// Element counts of the cubic rod.
    pub cubic: Vec<usize>,
    /// Elements of the cubic reference rod.
    pub reference_elements: usize,
    /// Simulated time of every run, s (`None`: the scene's 12 s, at rest).
    pub seconds: Option<f64>,
    /// Rotation representation.
    pub rotation: Rotation,
    /// Scalar type.
    pub scalar: Scalar,
    /// Whether this is the cheap configuration of [`Self::quick`] (`--quick`): the
    /// study's summaries say so.
    pub quick: bool,
}

impl Default for CantileverOptions {
    /// The full sweep: every count in the asymptotic range of its discretization down to
    /// round-off, a 100-element cubic reference, f64 rotation matrices.
    fn default() -> Self {
        Self {
            rigid_chain: vec![5, 10, 20, 40, 80, 160],
            linear: vec![5, 10, 20, 40, 80, 160],
            quadratic: vec![4, 5, 8, 12, 16],
            cubic: vec![2, 3, 5, 8, 12],
            reference_elements: 100,
            seconds: None,
            rotation: Rotation::Matrix,
            scalar: Scalar::F64,
            quick: false,
        }
    }
}

impl CantileverOptions {
    /// Checks the options before anything runs: the duration (`--seconds`) is a
    /// positive finite number of seconds within the scene's step limit, and every
    /// element count makes a valid rod (the reference's is `--reference-elements`).
    ///
    /// # Errors
    /// [`ReproduceError::InvalidOption`] naming the option and what is allowed.
    pub fn validate(&self) -> Result<(), ReproduceError> {
        if let Some(seconds) = self.seconds {
            let scene = Scene::from_toml(SCENE_TOML, "scenes/cantilever.toml")
                .map_err(|e| scene_err("cantilever", e))?;
            check_seconds("--seconds", seconds, scene)?;
        }
        let mut checks = vec![(
            "--reference-elements".to_string(),
            "fem",
            3,
            self.reference_elements,
        )];
        for (key, disc, order) in DISCRETIZATIONS {
            for &n in self.counts(key) {
                checks.push((format!("{key} element counts"), disc, order, n));
            }
        }
        for (option, disc, order, n) in checks {
            scene_for(disc, order, n, 1, self.seconds)
                .and_then(|s| s.steps().map_err(|e| scene_err("cantilever", e)))
                .map_err(|e| match e {
                    ReproduceError::Scene { source, .. } => {
                        invalid(&option, option_message(&source))
                    }
                    e => e,
                })?;
        }
        Ok(())
    }

    /// A cheap configuration (seconds in a debug build): two counts per
    /// discretization, a 6-element reference, 1 s of simulated time (not at rest).
    pub fn quick() -> Self {
        Self {
            rigid_chain: vec![4, 8],
            linear: vec![4, 8],
            quadratic: vec![2, 4],
            cubic: vec![2, 3],
            reference_elements: 6,
            seconds: Some(1.0),
            quick: true,
            ..Self::default()
        }
    }

    fn counts(&self, key: &str) -> &[usize] {
        match key {
            "rigid_chain" => &self.rigid_chain,
            "linear" => &self.linear,
            "quadratic" => &self.quadratic,
            _ => &self.cubic,
        }
    }
}

/// One run of the sweep, as written to `summary.json` and `runs.csv`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CantileverRun {
    /// `rigid_chain`, `linear`, `quadratic` or `cubic`.
    pub discretization: String,
    /// Elements (rigid chain: segments).
    pub elements: usize,
    /// Degrees of freedom: 6 per dynamic node (body).
    pub dof: usize,
    /// |p_tip − p_ref| at the end of the run, m (`null` without a finished reference,
    /// or for an interrupted run, whose end is not the study's time).
    pub tip_error_m: Option<f64>,
    /// Time per step, ms (the steps alone).
    pub step_ms: f64,
    /// The tip position at the end, m, world frame.
    pub tip_m: [f64; 3],
    /// Largest |velocity component| of any node at the end (m/s, rad/s).
    pub final_max_speed: f64,
    /// Primal residual (51) at the first and the last recorded step.
    pub primal_residual: [Option<f64>; 2],
    /// Constraint residual (52) at the first and the last recorded step.
    pub constraint_residual: [Option<f64>; 2],
    /// How the run ended.
    pub status: RunStatus,
    /// The run's folder, relative to DIR.
    pub folder: String,
}

/// A residual history (51)–(52) of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResidualHistory {
    /// Elements of the run.
    pub elements: usize,
    /// Times, s.
    pub t_s: Vec<f64>,
    /// Primal residual (51).
    pub primal: Vec<f64>,
    /// Constraint residual (52).
    pub constraint: Vec<f64>,
}

/// The contents of `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CantileverReport {
    /// How much of the study ran.
    #[serde(flatten)]
    pub completeness: Completeness,
    /// Fitted order per discretization (`null` with fewer than two points above the
    /// round-off floor, or if not every run of that discretization finished).
    pub orders: BTreeMap<String, Option<f64>>,
    /// For a partial study: the fit over the finished runs of each discretization whose
    /// sweep is incomplete (not the study's order: fewer counts than planned).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub partial_orders: BTreeMap<String, Option<f64>>,
    /// Runs used in each fit.
    pub order_points: BTreeMap<String, usize>,
    /// Every run, in sweep order.
    pub runs: Vec<CantileverRun>,
    /// The reference run (its `tip_error_m` is 0); `null` if it was interrupted before
    /// its first row. An interrupted reference gives no tip errors.
    pub reference: Option<CantileverRun>,
    /// Whether the linear rod's tip error is below the rigid chain's at every element
    /// count both were run with (equal degrees of freedom); `null` if none, or if
    /// either sweep is incomplete.
    pub linear_beats_rigid_chain_at_equal_dof: Option<bool>,
    /// The residuals of the coarsest run of each discretization over time.
    pub residuals: BTreeMap<String, ResidualHistory>,
    /// Simulated time of every run, s.
    pub seconds: f64,
    /// Rotation representation.
    pub rotation: String,
    /// Scalar type.
    pub scalar: String,
}

fn scene_err(name: &str, e: crate::scene::SceneError) -> ReproduceError {
    ReproduceError::Scene {
        scene: name.into(),
        source: Box::new(e),
    }
}

/// The scene for one run.
fn scene_for(
    disc: &str,
    order: usize,
    elements: usize,
    every: u64,
    seconds: Option<f64>,
) -> Result<Scene, ReproduceError> {
    let mut scene = Scene::from_toml(SCENE_TOML, "scenes/cantilever.toml")
        .map_err(|e| scene_err("cantilever", e))?;
    let mut set = vec![
        ("rods.beam.discretization".to_string(), disc.to_string()),
        ("rods.beam.order".to_string(), order.to_string()),
        ("rods.beam.elements".to_string(), elements.to_string()),
        ("run.every".to_string(), every.to_string()),
    ];
    if let Some(s) = seconds {
        set.push(("run.duration".into(), format!("{s:?}")));
    }
    scene
        .set_all(&set)
        .map_err(|e| scene_err("cantilever", e))?;
    Ok(scene)
}

/// The last row of a CSV file with a header: (header, values).
pub(super) fn last_row(path: &Path) -> Result<(Vec<String>, Vec<f64>), ReproduceError> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| read_err(path, e))?;
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| read_err(path, e))?
        .iter()
        .map(str::to_string)
        .collect();
    let mut last = None;
    for rec in reader.records() {
        last = Some(rec.map_err(|e| read_err(path, e))?);
    }
    let rec = last.ok_or_else(|| read_err(path, "no rows"))?;
    let values = rec
        .iter()
        .map(|x| x.trim().parse::<f64>().map_err(|e| read_err(path, e)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((headers, values))
}

/// Runs one configuration; returns the run (tip error still 0) and its residual history.
#[allow(clippy::too_many_arguments)]
fn run_one(
    dir: &Path,
    key: &str,
    disc: &str,
    order: usize,
    elements: usize,
    every: u64,
    opts: &CantileverOptions,
    interrupt: &AtomicBool,
) -> Result<Option<(CantileverRun, ResidualHistory)>, ReproduceError> {
    let scene = scene_for(disc, order, elements, every, opts.seconds)?;
    let folder = format!("runs/{key}_{elements}");
    let run_opts = RunOptions {
        rotation: opts.rotation,
        scalar: opts.scalar,
        out: dir.join(&folder),
        progress: None,
        vtk: false,
    };
    let summary = run_scene(&scene, &run_opts, interrupt).map_err(|e| ReproduceError::Run {
        scene: "cantilever".into(),
        mode: format!("{key} {elements}"),
        source: Box::new(e),
    })?;
    if summary.status == RunStatus::Interrupted && summary.rows == 0 {
        // Interrupted before its first row: nothing to read back.
        return Ok(None);
    }
    let rod = &scene.file().rods[0];
    let nodes = rod.node_count();
    let tip = nodes - 1;
    let (header, row) = last_row(&run_opts.out.join("states.csv"))?;
    let col = |name: String| {
        header
            .iter()
            .position(|h| *h == name)
            .map(|i| row[i])
            .ok_or_else(|| {
                read_err(
                    &run_opts.out.join("states.csv"),
                    format!("no column {name}"),
                )
            })
    };
    let tip_m = [
        col(format!("beam:{tip}_px"))?,
        col(format!("beam:{tip}_py"))?,
        col(format!("beam:{tip}_pz"))?,
    ];
    let (_, vel) = last_row(&run_opts.out.join("velocities.csv"))?;
    let final_max_speed = vel.iter().skip(1).fold(0.0f64, |m, v| m.max(v.abs()));
    let rows = read_columns(
        &run_opts.out.join("residuals.csv"),
        &["t", "primal_residual", "constraint_residual"],
    )?;
    let history = ResidualHistory {
        elements,
        t_s: rows.iter().map(|r| r[0]).collect(),
        primal: rows.iter().map(|r| r[1]).collect(),
        constraint: rows.iter().map(|r| r[2]).collect(),
    };
    let fixed = (0..nodes).filter(|&k| rod.is_fixed(k)).count();
    let ends = |v: &Vec<f64>| [v.first().copied(), v.last().copied()];
    Ok(Some((
        CantileverRun {
            discretization: key.into(),
            elements,
            dof: 6 * (nodes - fixed),
            tip_error_m: None,
            step_ms: summary.time_per_substep_us * summary.settings.substeps as f64 / 1e3,
            tip_m,
            final_max_speed,
            primal_residual: ends(&history.primal),
            constraint_residual: ends(&history.constraint),
            status: summary.status,
            folder,
        },
        history,
    )))
}

/// Least-squares slope of log(error) against log(1/elements) over the runs above the
/// round-off floor: (order, points used).
pub fn fitted_order(runs: &[(usize, f64)]) -> (Option<f64>, usize) {
    let pts: Vec<(f64, f64)> = runs
        .iter()
        .filter(|(_, e)| e.is_finite() && *e > ROUNDOFF_FLOOR)
        .map(|&(n, e)| ((1.0 / n as f64).ln(), e.ln()))
        .collect();
    let k = pts.len();
    if k < 2 {
        return (None, k);
    }
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / k as f64;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / k as f64;
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    (Some(sxy / sxx), k)
}

/// Runs the study into `dir` (module docs); `progress(k, n, what)` is called before
/// each run. `interrupt` stops it after the current run.
///
/// # Errors
/// [`ReproduceError::InvalidOption`] from [`CantileverOptions::validate`] (nothing is
/// run or written); [`ReproduceError`] if a run fails, its files cannot be read back,
/// or the study's files cannot be written.
pub fn reproduce_cantilever(
    dir: &Path,
    opts: &CantileverOptions,
    interrupt: &AtomicBool,
    progress: &dyn Fn(usize, usize, &str),
) -> Result<CantileverReport, ReproduceError> {
    opts.validate()?;
    let mut out = OutputDir::create(dir)?;
    let names = [
        "runs.csv",
        "summary.json",
        "summary.md",
        "error_vs_dof.png",
        "error_vs_step_time.png",
        "residuals.png",
    ];
    out.check_targets(&names)?;
    let total = 1 + DISCRETIZATIONS
        .iter()
        .map(|(k, _, _)| opts.counts(k).len())
        .sum::<usize>();
    let folder = |key: &str, n: usize| format!("runs/{key}_{n}");
    let mut completeness = Completeness::planned(
        std::iter::once(folder("reference_cubic", opts.reference_elements)).chain(
            DISCRETIZATIONS
                .iter()
                .flat_map(|(key, _, _)| opts.counts(key).iter().map(move |&n| folder(key, n))),
        ),
    )
    .quick(opts.quick);
    let mut reference = None;
    if !interrupt.load(Ordering::Relaxed) {
        progress(
            0,
            total,
            &format!("reference: cubic, {} elements", opts.reference_elements),
        );
        let run = run_one(
            dir,
            "reference_cubic",
            "fem",
            3,
            opts.reference_elements,
            100,
            opts,
            interrupt,
        )?;
        if let Some((mut r, _)) = run {
            completeness.ran(&r.folder, r.status);
            r.discretization = "cubic".into();
            reference = Some(r);
        } else {
            completeness.ran(
                &folder("reference_cubic", opts.reference_elements),
                RunStatus::Interrupted,
            );
        }
    }
    // Tip errors only against a reference at the study's end time.
    let p_ref = reference
        .as_ref()
        .filter(|r| r.status != RunStatus::Interrupted)
        .map(|r| r.tip_m);
    if let Some(r) = reference.as_mut() {
        r.tip_error_m = p_ref.map(|_| 0.0);
    }
    let mut runs = Vec::new();
    let mut residuals = BTreeMap::new();
    let mut k = 1;
    'sweep: for (key, disc, order) in DISCRETIZATIONS {
        for &n in opts.counts(key) {
            if interrupt.load(Ordering::Relaxed) {
                break 'sweep;
            }
            progress(k, total, &format!("{key}, {n} elements"));
            k += 1;
            let Some((mut run, history)) = run_one(dir, key, disc, order, n, 10, opts, interrupt)?
            else {
                completeness.ran(&folder(key, n), RunStatus::Interrupted);
                break 'sweep;
            };
            completeness.ran(&run.folder, run.status);
            if run.status != RunStatus::Interrupted {
                run.tip_error_m = p_ref.map(|p| {
                    (0..3)
                        .map(|i| (run.tip_m[i] - p[i]).powi(2))
                        .sum::<f64>()
                        .sqrt()
                });
                residuals.entry(key.to_string()).or_insert(history);
            }
            runs.push(run);
        }
    }
    let mut orders = BTreeMap::new();
    let mut partial_orders = BTreeMap::new();
    let mut order_points = BTreeMap::new();
    // A discretization's sweep is whole when each of its counts finished.
    let whole = |key: &str| {
        opts.counts(key)
            .iter()
            .all(|&n| completeness.finished(&folder(key, n)))
            && p_ref.is_some()
    };
    for (key, _, _) in DISCRETIZATIONS {
        let pts: Vec<(usize, f64)> = runs
            .iter()
            .filter(|r| r.discretization == key)
            .filter_map(|r| r.tip_error_m.map(|e| (r.elements, e)))
            .collect();
        let (o, used) = fitted_order(&pts);
        if whole(key) {
            orders.insert(key.to_string(), o);
        } else {
            orders.insert(key.to_string(), None);
            partial_orders.insert(key.to_string(), o);
        }
        order_points.insert(key.to_string(), used);
    }
    let pairs: Vec<bool> = runs
        .iter()
        .filter(|r| r.discretization == "linear")
        .filter_map(|l| {
            runs.iter()
                .find(|r| r.discretization == "rigid_chain" && r.dof == l.dof)
                .and_then(|c| Some(l.tip_error_m? < c.tip_error_m?))
        })
        .collect();
    let report = CantileverReport {
        linear_beats_rigid_chain_at_equal_dof: if pairs.is_empty()
            || !(whole("linear") && whole("rigid_chain"))
        {
            None
        } else {
            Some(pairs.iter().all(|&b| b))
        },
        completeness,
        orders,
        partial_orders,
        order_points,
        runs,
        reference,
        residuals,
        seconds: opts.seconds.unwrap_or(12.0),
        rotation: opts.rotation.name().into(),
        scalar: opts.scalar.name().into(),
    };
    write_outputs(&mut out, &report)?;
    out.commit()?;
    Ok(report)
}
