//! `lie-xpbd reproduce shear-locking`: the shear-locking study of Section 9.3
//! (Figure 14), run through the one pipeline.
//!
//! # What runs
//! The shipped scene `scenes/shear_locking.toml` ([`SCENE_TOML`]: r = 0.05 m, ν = 0.4,
//! ρ = 1000 kg/m³, a dead tip force P = 25 N, no gravity, Δt = 5e-3 s), for every
//! slenderness L/r of [`ShearLockingOptions::slenderness`] with
//! L = (L/r)·r and the Young's modulus that makes the Timoshenko tip deflection
//! (125)–(126) 0.02·L:
//!
//! ```text
//! d = P L³/(3 E I) + P L/(κ G A),   G = E/(2(1 + ν)),   κ = 6(1 + ν)/(7 + 6ν)
//! ⇒ E = P [L³/(3I) + 2(1 + ν) L/(κA)] / (0.02 L)
//! ```
//!
//! and for 3 linear, 1 quadratic and 1 cubic element, each with reduced and full
//! integration: ordinary [`run_scene`]s with `--set` overrides into
//! `DIR/runs/order<k>_<integration>_<L/r>/`. The first bending frequency of the
//! Euler–Bernoulli cantilever, ω₁ = 1.8751² √(EI/(ρAL⁴)), falls from 107 rad/s at
//! L/r = 5 to 2.6 rad/s at 200 (E ∝ L² for slender rods), so each run gets the Rayleigh
//! damping b = 2/ω₁ (critical for that mode) and a duration of max(3 s, 30/ω₁) (the
//! mode decays as e^(−ω₁t), to below 1e-13 of its amplitude).
//!
//! # What is reported
//! Per run ([`ShearLockingRun`]): the tip deflection −p_tip,y (m) at the end, the
//! analytic d of (125), and |deflection − d|/d. The analytic solution is the linear
//! beam's; at d/L = 0.02 the geometric nonlinearity it leaves out is of relative size
//! ~(d/L)² = 4e-4. Files in `DIR`: `runs.csv`, `summary.json` ([`ShearLockingReport`]),
//! `summary.md`, `rel_error.png` (relative error, log axis, against log10 L/r per
//! order and integration).

use super::super::files::OutputDir;
use super::super::plot::{ChartSpec, Series};
use super::super::run::{run_scene, RunOptions, RunStatus};
use super::cantilever::last_row;
use super::{
    check_seconds, invalid, read_err, stage_chart, stage_summaries, Completeness, ReproduceError,
};
use crate::scene::Scene;
use crate::sim::{Rotation, Scalar};
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// The Section 9.3 scene (`scenes/shear_locking.toml`).
pub const SCENE_TOML: &str = include_str!("../../../scenes/shear_locking.toml");

/// Tip force P, N.
pub const TIP_FORCE: f64 = 25.0;
/// Section radius r, m.
pub const RADIUS: f64 = 0.05;
/// Poisson ratio ν.
pub const POISSON: f64 = 0.4;
/// Density ρ, kg/m³ (the scene's).
pub const DENSITY: f64 = 1000.0;
/// Target d/L.
pub const DEFLECTION_RATIO: f64 = 0.02;

/// The configurations: (element order, elements).
pub const CONFIGURATIONS: [(usize, usize); 3] = [(1, 3), (2, 1), (3, 1)];

/// What `reproduce shear-locking` runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ShearLockingOptions {
    /// Slenderness ratios L/r.
    pub slenderness: Vec<f64>,
    /// Simulated time of every run, s (`None`: max(3 s, 30/ω₁), module docs).
    pub seconds: Option<f64>,
    /// Rotation representation.
    pub rotation: Rotation,
    /// Scalar type.
    pub scalar: Scalar,
    /// Whether this is the cheap configuration of [`Self::quick`] (`--quick`): the
    /// study's summaries say so.
    pub quick: bool,
}

impl Default for ShearLockingOptions {
    /// L/r = 5, 10, 20, 50, 100, 200; f64 rotation matrices.
    fn default() -> Self {
        Self {
            slenderness: vec![5.0, 10.0, 20.0, 50.0, 100.0, 200.0],
            seconds: None,
            rotation: Rotation::Matrix,
            scalar: Scalar::F64,
            quick: false,
        }
    }
}

impl ShearLockingOptions {
    /// Checks the options before anything runs.
    ///
    /// # Errors
    /// [`ReproduceError::InvalidOption`] if a slenderness ratio is not a positive
    /// finite number, or `seconds` is not a positive finite number of seconds within
    /// [`crate::scene::MAX_STEPS`] steps.
    pub fn validate(&self) -> Result<(), ReproduceError> {
        if let Some(s) = self
            .slenderness
            .iter()
            .find(|s| !(s.is_finite() && **s > 0.0))
        {
            return Err(invalid(
                "slenderness",
                format!("L/r must be a positive finite number, got {s}"),
            ));
        }
        if let Some(seconds) = self.seconds {
            let scene =
                Scene::from_toml(SCENE_TOML, "scenes/shear_locking.toml").map_err(|source| {
                    ReproduceError::Scene {
                        scene: "shear_locking".into(),
                        source: Box::new(source),
                    }
                })?;
            check_seconds("seconds", seconds, scene)?;
        }
        Ok(())
    }

    /// A cheap configuration: L/r = 5 and 200, 0.5 s per run (not at rest).
    pub fn quick() -> Self {
        Self {
            slenderness: vec![5.0, 200.0],
            seconds: Some(0.5),
            quick: true,
            ..Self::default()
        }
    }
}

/// One run, as written to `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShearLockingRun {
    /// Element order (1, 2, 3).
    pub order: usize,
    /// Elements.
    pub elements: usize,
    /// `reduced` or `full`.
    pub integration: String,
    /// L/r.
    pub slenderness: f64,
    /// Length L, m.
    pub length_m: f64,
    /// Young's modulus E, Pa.
    pub youngs_modulus_pa: f64,
    /// Tip deflection −p_tip,y at the end, m.
    pub deflection_m: f64,
    /// d of (125), m.
    pub analytic_m: f64,
    /// |deflection − d| / d.
    pub rel_error: f64,
    /// Largest |velocity component| at the end (m/s, rad/s).
    pub final_max_speed: f64,
    /// Rayleigh damping b = 2/ω₁ of the run, s.
    pub damping_s: f64,
    /// Simulated time, s.
    pub duration_s: f64,
    /// How the run ended.
    pub status: RunStatus,
}

/// The contents of `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShearLockingReport {
    /// How much of the study ran.
    #[serde(flatten)]
    pub completeness: Completeness,
    /// Every run (an interrupted one with status `interrupted`, unless it recorded no
    /// row).
    pub runs: Vec<ShearLockingRun>,
    /// Largest relative error of the reduced-integration quadratic and cubic runs
    /// (`null` for a partial study).
    pub max_rel_error_reduced_quadratic_cubic: Option<f64>,
    /// Smallest relative error of the full-integration runs at the largest L/r (`null`
    /// for a partial study).
    pub min_rel_error_full_at_max_slenderness: Option<f64>,
}

/// E for slenderness `s` (module docs) and the length, (E in Pa, L in m, d in m).
pub fn timoshenko(s: f64) -> (f64, f64, f64) {
    let l = s * RADIUS;
    let a = std::f64::consts::PI * RADIUS * RADIUS;
    let i = a * RADIUS * RADIUS / 4.0;
    let kappa = 6.0 * (1.0 + POISSON) / (7.0 + 6.0 * POISSON);
    let e = TIP_FORCE * (l.powi(3) / (3.0 * i) + 2.0 * (1.0 + POISSON) * l / (kappa * a))
        / (DEFLECTION_RATIO * l);
    let g = e / (2.0 * (1.0 + POISSON));
    let d = TIP_FORCE * l.powi(3) / (3.0 * e * i) + TIP_FORCE * l / (g * kappa * a);
    (e, l, d)
}

/// Runs the study into `dir` (module docs).
///
/// # Errors
/// [`ReproduceError::InvalidOption`] from [`ShearLockingOptions::validate`] (nothing is
/// run or written); [`ReproduceError`] if a run fails, its files cannot be read back,
/// or the study's files cannot be written.
pub fn reproduce_shear_locking(
    dir: &Path,
    opts: &ShearLockingOptions,
    interrupt: &AtomicBool,
    progress: &dyn Fn(usize, usize, &str),
) -> Result<ShearLockingReport, ReproduceError> {
    opts.validate()?;
    let mut out = OutputDir::create(dir)?;
    out.check_targets(&["runs.csv", "summary.json", "summary.md", "rel_error.png"])?;
    let total = opts.slenderness.len() * CONFIGURATIONS.len() * 2;
    let folder_of =
        |order: usize, integration: &str, s: f64| format!("runs/order{order}_{integration}_{s}");
    let mut completeness = Completeness::planned(CONFIGURATIONS.iter().flat_map(|&(order, _)| {
        ["reduced", "full"]
            .into_iter()
            .flat_map(move |integration| {
                opts.slenderness
                    .iter()
                    .map(move |&s| folder_of(order, integration, s))
            })
    }))
    .quick(opts.quick);
    let mut runs = Vec::new();
    let mut k = 0;
    'all: for (order, elements) in CONFIGURATIONS {
        for integration in ["reduced", "full"] {
            for &s in &opts.slenderness {
                if interrupt.load(Ordering::Relaxed) {
                    break 'all;
                }
                let what = format!("order {order}, {elements} el., {integration}, L/r = {s}");
                progress(k, total, &what);
                k += 1;
                let (e, l, d) = timoshenko(s);
                let a = std::f64::consts::PI * RADIUS * RADIUS;
                let omega = 1.8751f64.powi(2)
                    * (e * a * RADIUS * RADIUS / 4.0 / (DENSITY * a * l.powi(4))).sqrt();
                let damping = 2.0 / omega;
                let duration = opts.seconds.unwrap_or((30.0 / omega).max(3.0));
                let err = |source| ReproduceError::Scene {
                    scene: "shear_locking".into(),
                    source: Box::new(source),
                };
                let mut scene =
                    Scene::from_toml(SCENE_TOML, "scenes/shear_locking.toml").map_err(err)?;
                let set = vec![
                    ("rods.beam.order".to_string(), order.to_string()),
                    ("rods.beam.elements".to_string(), elements.to_string()),
                    ("rods.beam.integration".to_string(), integration.to_string()),
                    ("rods.beam.centerline.length".to_string(), format!("{l:?}")),
                    (
                        "rods.beam.material.youngs_modulus".to_string(),
                        format!("{e:?}"),
                    ),
                    ("rods.beam.damping".to_string(), format!("{damping:?}")),
                    ("run.duration".to_string(), format!("{duration:?}")),
                ];
                scene.set_all(&set).map_err(err)?;
                let name = folder_of(order, integration, s);
                let folder = dir.join(&name);
                let run_opts = RunOptions {
                    rotation: opts.rotation,
                    scalar: opts.scalar,
                    out: folder.clone(),
                    progress: None,
                    vtk: false,
                };
                let summary =
                    run_scene(&scene, &run_opts, interrupt).map_err(|e| ReproduceError::Run {
                        scene: "shear_locking".into(),
                        mode: what.clone(),
                        source: Box::new(e),
                    })?;
                completeness.ran(&name, summary.status);
                if summary.status == RunStatus::Interrupted && summary.rows == 0 {
                    break 'all;
                }
                let tip = scene.file().rods[0].node_count() - 1;
                let states = folder.join("states.csv");
                let (header, row) = last_row(&states)?;
                let y = header
                    .iter()
                    .position(|h| *h == format!("beam:{tip}_py"))
                    .map(|i| row[i])
                    .ok_or_else(|| read_err(&states, "no tip column"))?;
                let (_, vel) = last_row(&folder.join("velocities.csv"))?;
                runs.push(ShearLockingRun {
                    order,
                    elements,
                    integration: integration.into(),
                    slenderness: s,
                    length_m: l,
                    youngs_modulus_pa: e,
                    deflection_m: -y,
                    analytic_m: d,
                    rel_error: (-y - d).abs() / d,
                    final_max_speed: vel.iter().skip(1).fold(0.0f64, |m, v| m.max(v.abs())),
                    damping_s: damping,
                    duration_s: duration,
                    status: summary.status,
                });
            }
        }
    }
    let max_s = opts.slenderness.iter().copied().fold(0.0f64, f64::max);
    let complete = completeness.complete;
    let report = ShearLockingReport {
        max_rel_error_reduced_quadratic_cubic: complete.then(|| {
            runs.iter()
                .filter(|r| r.order >= 2 && r.integration == "reduced")
                .map(|r| r.rel_error)
                .fold(0.0, f64::max)
        }),
        min_rel_error_full_at_max_slenderness: complete.then(|| {
            runs.iter()
                .filter(|r| r.integration == "full" && r.slenderness == max_s)
                .map(|r| r.rel_error)
                .fold(f64::INFINITY, f64::min)
        }),
        completeness,
        runs,
    };
    let mut csv = String::from("order,elements,integration,slenderness,length_m,youngs_modulus_pa,deflection_m,analytic_m,rel_error,final_max_speed\n");
    for r in &report.runs {
        csv.push_str(&format!(
            "{},{},{},{},{:?},{:?},{:?},{:?},{:e},{:e}\n",
            r.order,
            r.elements,
            r.integration,
            r.slenderness,
            r.length_m,
            r.youngs_modulus_pa,
            r.deflection_m,
            r.analytic_m,
            r.rel_error,
            r.final_max_speed
        ));
    }
    out.stage_bytes("runs.csv", csv.as_bytes())?;
    let mut series = Vec::new();
    for (order, elements) in CONFIGURATIONS {
        for integration in ["reduced", "full"] {
            series.push(Series {
                label: format!("order {order} x {elements}, {integration}"),
                points: report
                    .runs
                    .iter()
                    .filter(|r| r.order == order && r.integration == integration)
                    .map(|r| (r.slenderness.log10(), r.rel_error))
                    .collect(),
            });
        }
    }
    let spec = ChartSpec {
        title: "Shear locking (Section 9.3): |d - d_Timoshenko| / d_Timoshenko".into(),
        x_label: "log10(L/r)".into(),
        y_label: "relative error".into(),
        log_y: true,
    };
    stage_chart(&mut out, "rel_error.png", &spec, &series)?;
    stage_summaries(&mut out, &report, &markdown(&report))?;
    out.commit()?;
    Ok(report)
}

/// `summary.md`: the claims and the table of runs.
pub fn markdown(r: &ShearLockingReport) -> String {
    let mut s = r.completeness.banner();
    s.push_str("# Shear locking (Section 9.3, Figure 14)\n\n");
    let agg = |x: Option<f64>| x.map_or("– (partial study)".into(), |v| format!("{v:.3e}"));
    s.push_str(&format!(
        "Largest relative error, reduced integration, 1 quadratic / 1 cubic element: {}\n\nSmallest relative error, full integration, at the largest L/r: {}\n\n",
        agg(r.max_rel_error_reduced_quadratic_cubic), agg(r.min_rel_error_full_at_max_slenderness)
    ));
    s.push_str("| order | elements | integration | L/r | E, Pa | deflection, m | Timoshenko, m | rel. error | final max speed | status |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for x in &r.runs {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {:.4e} | {:.6e} | {:.6e} | {:.3e} | {:.1e} | {} |\n",
            x.order,
            x.elements,
            x.integration,
            x.slenderness,
            x.youngs_modulus_pa,
            x.deflection_m,
            x.analytic_m,
            x.rel_error,
            x.final_max_speed,
            x.status
        ));
    }
    s
}
