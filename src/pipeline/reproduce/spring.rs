//! `lie-xpbd reproduce spring`: the buckling of a compressed helical spring, Section 9.4
//! (Figure 15), run through the one pipeline.
//!
//! # What runs
//! The shipped scene `scenes/spring.toml` ([`SCENE_TOML`]: steel wire, E = 60 GPa,
//! ν = 0.3, ρ = 7650 kg/m³, diameter 0.01 m; 15 coils of radius 0.1 m around +z over a
//! rest length of 1.4 m; no gravity; both ends clamped; the end at z = 1.4 m moves along
//! −z at 0.02 m/s for 25 s, 0.5 m of compression; Rayleigh damping b = 0.1 s; Δt =
//! 2e-3 s, one iteration), once per entry of [`SpringOptions::configurations`] with
//! `--set` overrides of `rods.spring.discretization`, `order` and `elements`, each an
//! ordinary [`run_scene`] into `DIR/runs/<discretization>_<elements>/`. No imperfection
//! is added: the helix itself is not symmetric about its axis, and its middle node moves
//! sideways from the first step on; that motion is the pre-buckling trend below.
//!
//! # Buckling point
//! From every recorded row (every 25 steps, 1 mm of compression): the compression
//! c = 1.4 m − z of the moving end and the lateral displacement δ = |(x, y) − (x₀, y₀)|
//! of the middle node (node (n − 1)/2 of n, at half the wire length; for the rigid
//! chain the middle body, which at rest lies on the wider coaxial helix of radius
//! r θ/sin θ, [`crate::rod::RigidChainBuilder::from_rest_frames`]). The pre-buckling
//! trend is the least-squares line of δ against c over c ≤ [`TREND_MAX_M`]; the buckling
//! compression is the c from which on δ stays above that line by more than
//! [`THRESHOLD_M`] (1 % of the coil radius) to the end of the run: the last upward
//! crossing of the threshold, `null` if the last row is not above it
//! ([`buckling_point`]). Buckling is the permanent departure from the trend: before
//! it δ jitters about the trend and can poke above the threshold for a few rows (the
//! quick 40-segment rigid chain did at 0.247 m, then fell back below until 0.31 m),
//! which a first crossing would take for the buckling point. `summary.json` also
//! gives it for the thresholds of [`SENSITIVITY_M`], to show how much the choice
//! matters.
//!
//! Files in `DIR`, written whole at the end of the study (an interrupted one is marked
//! partial, [`super::Completeness`]): `lateral.csv` (compression and
//! δ per run, row by row), `lateral.png` (δ against c), `summary.json`
//! ([`SpringReport`]: `runs` with `discretization, elements, buckling_compression_m,
//! step_ms`) and `summary.md`.

use super::super::files::OutputDir;
use super::super::plot::{ChartSpec, Series};
use super::super::run::{run_scene, RunOptions, RunStatus};
use super::{
    check_seconds, invalid, read_columns, stage_chart, stage_summaries, Completeness,
    ReproduceError,
};
use crate::scene::Scene;
use crate::sim::{Rotation, Scalar};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// The Section 9.4 scene (`scenes/spring.toml`).
pub const SCENE_TOML: &str = include_str!("../../../scenes/spring.toml");

/// Rest length of the spring, m (the scene's).
pub const REST_LENGTH_M: f64 = 1.4;
/// The theoretical buckling compression the paper quotes, m.
pub const THEORY_M: f64 = 0.32;
/// The pre-buckling trend is fitted over compressions up to this, m.
pub const TREND_MAX_M: f64 = 0.15;
/// Departure from the trend that marks buckling, m.
pub const THRESHOLD_M: f64 = 1e-3;
/// Further thresholds reported, m.
pub const SENSITIVITY_M: [f64; 3] = [5e-4, 2e-3, 5e-3];

/// What `reproduce spring` runs.
#[derive(Debug, Clone, PartialEq)]
pub struct SpringOptions {
    /// (key in `summary.json`, scene discretization, order, elements).
    pub configurations: Vec<(String, String, usize, usize)>,
    /// Compression speed, m/s (`None`: the scene's 0.02 m/s).
    pub speed: Option<f64>,
    /// Rotation representation.
    pub rotation: Rotation,
    /// Scalar type.
    pub scalar: Scalar,
    /// Whether this is the cheap configuration of [`Self::quick`] (`--quick`): the
    /// study's summaries say so.
    pub quick: bool,
}

fn config(key: &str, disc: &str, order: usize, elements: usize) -> (String, String, usize, usize) {
    (key.into(), disc.into(), order, elements)
}

impl Default for SpringOptions {
    /// The paper's: rigid chain 120, linear 120 and 250, quadratic 66, cubic 40.
    fn default() -> Self {
        Self {
            configurations: vec![
                config("rigid_chain", "rigid_chain", 1, 120),
                config("linear", "fem", 1, 120),
                config("linear", "fem", 1, 250),
                config("quadratic", "fem", 2, 66),
                config("cubic", "fem", 3, 40),
            ],
            speed: None,
            rotation: Rotation::Matrix,
            scalar: Scalar::F64,
            quick: false,
        }
    }
}

impl SpringOptions {
    /// Checks the options before anything runs.
    ///
    /// # Errors
    /// [`ReproduceError::InvalidOption`] if `speed` is not a positive finite number of
    /// m/s (or makes a run of more than [`crate::scene::MAX_STEPS`] steps), or a
    /// configuration has no elements.
    pub fn validate(&self) -> Result<(), ReproduceError> {
        if let Some((key, ..)) = self.configurations.iter().find(|c| c.3 == 0) {
            return Err(invalid(
                "configurations",
                format!("{key}: elements must be at least 1, got 0"),
            ));
        }
        if let Some(v) = self.speed {
            if !(v.is_finite() && v > 0.0) {
                return Err(invalid(
                    "speed",
                    format!("must be a positive finite number of m/s, got {v}"),
                ));
            }
            let scene = Scene::from_toml(SCENE_TOML, "scenes/spring.toml").map_err(|source| {
                ReproduceError::Scene {
                    scene: "spring".into(),
                    source: Box::new(source),
                }
            })?;
            check_seconds("speed", 0.5 / v, scene)?;
        }
        Ok(())
    }

    /// A cheap configuration: 40 elements of each discretization (an element may turn by
    /// at most 0.9π: 3/8 of a coil), pushed at 0.1 m/s (5 s; not quasi-static).
    pub fn quick() -> Self {
        Self {
            configurations: vec![
                config("rigid_chain", "rigid_chain", 1, 40),
                config("linear", "fem", 1, 40),
                config("quadratic", "fem", 2, 40),
                config("cubic", "fem", 3, 40),
            ],
            speed: Some(0.1),
            quick: true,
            ..Self::default()
        }
    }
}

/// One run, as written to `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpringRun {
    /// `rigid_chain`, `linear`, `quadratic` or `cubic`.
    pub discretization: String,
    /// Elements (rigid chain: segments).
    pub elements: usize,
    /// Detected buckling compression at [`THRESHOLD_M`], m (`null`: not detected, or
    /// the run was interrupted: the detection needs the whole curve).
    pub buckling_compression_m: Option<f64>,
    /// |buckling compression − 0.32 m| / 0.32 m.
    pub rel_error_vs_theory: Option<f64>,
    /// Buckling compression per threshold of [`SENSITIVITY_M`] (keyed in m).
    pub buckling_compression_at_threshold_m: BTreeMap<String, Option<f64>>,
    /// Slope of the pre-buckling trend, m of δ per m of compression.
    pub trend_slope: f64,
    /// Largest compression reached, m.
    pub max_compression_m: f64,
    /// Lateral displacement of the middle node at the largest compression, m.
    pub final_lateral_m: f64,
    /// Time per step, ms (the steps alone).
    pub step_ms: f64,
    /// How the run ended.
    pub status: RunStatus,
}

/// The contents of `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpringReport {
    /// How much of the study ran.
    #[serde(flatten)]
    pub completeness: Completeness,
    /// Every run (an interrupted one with status `interrupted`, unless it recorded no
    /// row).
    pub runs: Vec<SpringRun>,
    /// Largest |buckling compression − 0.32| / 0.32 over the runs (`null` if one was not
    /// detected, or for a partial study).
    pub max_rel_error_vs_theory: Option<f64>,
    /// Threshold, m.
    pub threshold_m: f64,
    /// Trend fit range, m.
    pub trend_max_m: f64,
}

/// (slope, intercept) of δ against c over c ≤ [`TREND_MAX_M`] (m of δ per m of c, m),
/// and the buckling compression, m: of the rows with c > [`TREND_MAX_M`], in order, the
/// c of the first row of the final stretch of rows whose δ exceeds the line by more
/// than `threshold` (m), i.e. the last upward crossing; `None` if the last row does
/// not exceed it (or there is no row past the fit range). A row whose δ is NaN counts
/// as not exceeding. `c` and `d` are the compressions and lateral displacements, row
/// by row (equal lengths; extra entries of the longer are ignored).
pub fn buckling_point(c: &[f64], d: &[f64], threshold: f64) -> (f64, f64, Option<f64>) {
    let pts: Vec<(f64, f64)> = c
        .iter()
        .zip(d)
        .filter(|(x, _)| **x <= TREND_MAX_M)
        .map(|(x, y)| (*x, *y))
        .collect();
    let k = pts.len().max(1) as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / k;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / k;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let icpt = my - slope * mx;
    // Walking back from the last row: the earliest row of the trailing stretch above.
    let mut at = None;
    for (x, y) in c.iter().zip(d).filter(|(x, _)| **x > TREND_MAX_M).rev() {
        if *y - (icpt + slope * *x) > threshold {
            at = Some(*x);
        } else {
            break;
        }
    }
    (slope, icpt, at)
}

/// Runs the study into `dir` (module docs); `progress(k, n, what)` is called before
/// each run. `interrupt` stops it after the current run.
///
/// # Errors
/// [`ReproduceError::InvalidOption`] from [`SpringOptions::validate`] (nothing is run
/// or written); [`ReproduceError`] if a run fails, its files cannot be read back, or
/// the study's files cannot be written.
pub fn reproduce_spring(
    dir: &Path,
    opts: &SpringOptions,
    interrupt: &AtomicBool,
    progress: &dyn Fn(usize, usize, &str),
) -> Result<SpringReport, ReproduceError> {
    opts.validate()?;
    let mut out = OutputDir::create(dir)?;
    out.check_targets(&["lateral.csv", "lateral.png", "summary.json", "summary.md"])?;
    let mut completeness = Completeness::planned(
        opts.configurations
            .iter()
            .map(|(key, _, _, elements)| format!("runs/{key}_{elements}")),
    )
    .quick(opts.quick);
    let mut runs = Vec::new();
    let mut curves: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let n = opts.configurations.len();
    for (k, (key, disc, order, elements)) in opts.configurations.iter().enumerate() {
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
        let what = format!("{key}, {elements} elements");
        progress(k, n, &what);
        let err = |source| ReproduceError::Scene {
            scene: "spring".into(),
            source: Box::new(source),
        };
        let mut scene = Scene::from_toml(SCENE_TOML, "scenes/spring.toml").map_err(err)?;
        let mut set = vec![
            ("rods.spring.discretization".to_string(), disc.clone()),
            ("rods.spring.order".to_string(), order.to_string()),
            ("rods.spring.elements".to_string(), elements.to_string()),
        ];
        if let Some(v) = opts.speed {
            let t = 0.5 / v;
            set.push((
                "rods.spring.motion[0].velocity".into(),
                format!("[0.0, 0.0, {:?}]", -v),
            ));
            set.push(("rods.spring.motion[0].until".into(), format!("{t:?}")));
            set.push(("run.duration".into(), format!("{t:?}")));
            let every = ((1e-3 / v / 2e-3).round() as u64).max(1);
            set.push(("run.every".into(), every.to_string()));
        }
        scene.set_all(&set).map_err(err)?;
        let folder = dir.join(format!("runs/{key}_{elements}"));
        let run_opts = RunOptions {
            rotation: opts.rotation,
            scalar: opts.scalar,
            out: folder.clone(),
            progress: None,
            vtk: false,
        };
        let summary = run_scene(&scene, &run_opts, interrupt).map_err(|e| ReproduceError::Run {
            scene: "spring".into(),
            mode: what.clone(),
            source: Box::new(e),
        })?;
        completeness.ran(&format!("runs/{key}_{elements}"), summary.status);
        if summary.status == RunStatus::Interrupted && summary.rows == 0 {
            break;
        }
        let nodes = scene.file().rods[0].node_count();
        let (mid, end) = ((nodes - 1) / 2, nodes - 1);
        let cols = [
            format!("spring:{mid}_px"),
            format!("spring:{mid}_py"),
            format!("spring:{end}_pz"),
        ];
        let rows = read_columns(
            &folder.join("states.csv"),
            &[cols[0].as_str(), cols[1].as_str(), cols[2].as_str()],
        )?;
        let (x0, y0) = rows.first().map_or((0.0, 0.0), |r| (r[0], r[1]));
        let c: Vec<f64> = rows.iter().map(|r| REST_LENGTH_M - r[2]).collect();
        let d: Vec<f64> = rows.iter().map(|r| (r[0] - x0).hypot(r[1] - y0)).collect();
        // An interrupted curve ends early: its last crossing is not the buckling point.
        let whole = summary.status != RunStatus::Interrupted;
        let (slope, _, at) = buckling_point(&c, &d, THRESHOLD_M);
        let at = at.filter(|_| whole);
        let sensitivity = SENSITIVITY_M
            .iter()
            .map(|&t| {
                (
                    format!("{t}"),
                    buckling_point(&c, &d, t).2.filter(|_| whole),
                )
            })
            .collect();
        runs.push(SpringRun {
            discretization: key.clone(),
            elements: *elements,
            buckling_compression_m: at,
            rel_error_vs_theory: at.map(|x| (x - THEORY_M).abs() / THEORY_M),
            buckling_compression_at_threshold_m: sensitivity,
            trend_slope: slope,
            max_compression_m: c.iter().copied().fold(0.0, f64::max),
            final_lateral_m: d.last().copied().unwrap_or(0.0),
            step_ms: summary.time_per_substep_us * summary.settings.substeps as f64 / 1e3,
            status: summary.status,
        });
        curves.push((format!("{key} {elements}"), c.into_iter().zip(d).collect()));
    }
    let max_rel_error_vs_theory = runs
        .iter()
        .map(|r| r.rel_error_vs_theory)
        .try_fold(0.0f64, |m, e| e.map(|e| m.max(e)))
        .filter(|_| completeness.complete);
    let report = SpringReport {
        completeness,
        runs,
        max_rel_error_vs_theory,
        threshold_m: THRESHOLD_M,
        trend_max_m: TREND_MAX_M,
    };
    let mut csv = String::from("run,compression_m,lateral_m\n");
    for (label, pts) in &curves {
        for (x, y) in pts {
            csv.push_str(&format!("{},{x:?},{y:?}\n", label.replace(' ', "_")));
        }
    }
    out.stage_bytes("lateral.csv", csv.as_bytes())?;
    let series: Vec<Series> = curves
        .into_iter()
        .map(|(label, points)| Series { label, points })
        .collect();
    let spec = ChartSpec {
        title: "Spring (Section 9.4): lateral displacement of the middle node".into(),
        x_label: "compression, m".into(),
        y_label: "lateral displacement, m".into(),
        log_y: false,
    };
    stage_chart(&mut out, "lateral.png", &spec, &series)?;
    stage_summaries(&mut out, &report, &markdown(&report))?;
    out.commit()?;
    Ok(report)
}

fn opt(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:.3}"))
}

/// `summary.md`: the criterion and the table of runs.
pub fn markdown(r: &SpringReport) -> String {
    let mut s = r.completeness.banner();
    s.push_str("# Helical spring buckling (Section 9.4, Figure 15)\n\n");
    s.push_str(&format!(
        "Buckling: lateral displacement of the middle node above its linear trend (fitted over compression ≤ {} m) by {} m. Theory: {} m. Largest relative deviation: {}\n\n",
        r.trend_max_m, r.threshold_m, THEORY_M, opt(r.max_rel_error_vs_theory)
    ));
    s.push_str("| discretization | elements | buckling compression, m | rel. to 0.32 m | at 0.5 / 2 / 5 mm, m | final lateral, m | step, ms | status |\n|---|---|---|---|---|---|---|---|\n");
    for x in &r.runs {
        let at: Vec<String> = SENSITIVITY_M
            .iter()
            .map(|t| {
                opt(x
                    .buckling_compression_at_threshold_m
                    .get(&format!("{t}"))
                    .copied()
                    .flatten())
            })
            .collect();
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.4} | {:.3} | {} |\n",
            x.discretization,
            x.elements,
            opt(x.buckling_compression_m),
            opt(x.rel_error_vs_theory),
            at.join(" / "),
            x.final_lateral_m,
            x.step_ms,
            x.status
        ));
    }
    s
}
