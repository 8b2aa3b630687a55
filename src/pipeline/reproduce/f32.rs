//! `lie-xpbd reproduce f32`: plain f32, compensated f32 and f64 side by side
//! ([`crate::xpbd::F32Arithmetic`]), on the triple pendulum and the cantilever.
//!
//! # What runs
//! Three scenes, each in three variants, [`Scalar::F64`], [`Scalar::F32`] (the default
//! compensated arithmetic) and [`Scalar::F32Plain`], in the chosen rotation
//! representation:
//! * `pendulum_10s` and `pendulum_100s`: the shipped triple pendulum
//!   (`scenes/pendulum.toml`: block solve, Δt = 1 ms, one substep, the primal
//!   correction pass) for 10 s and 100 s (the paper's Figure 12 length);
//! * `cantilever_cubic_40`: the shipped cantilever (`scenes/cantilever.toml`, Section
//!   9.2: Δt = 5 ms) with 40 cubic elements (`rods.beam.elements = 40`), for the
//!   scene's 12 s (at rest after about 7 s).
//!
//! The three variants of a scene step in lockstep; after every step each f32 run is
//! compared with the f64 run of the same scene.
//!
//! # Measures (per variant, in `summary.md` and `summary.json`)
//! * `max_position_gap_m`: the largest distance ‖p − p_f64‖ (m, world frame) of a
//!   dynamic body's centre from the f64 run's, over every step;
//! * `energy_rise`: the largest rise of the total energy E = kinetic + gravitational +
//!   elastic ([`crate::sim::Energy`]) above its initial value E₀, max (E(t) − E₀), over
//!   the scene's energy scale S = max(|E₀|, max |E_f64(t) − E₀|): the larger of the
//!   initial energy and the most the f64 run's energy moved from it (the pendulum's
//!   step dissipates more than |E₀| within 10 s; the cantilever starts at E₀ = 0 and
//!   comes to rest). XPBD's implicit step dissipates, so E stays below E₀ unless
//!   the arithmetic adds energy;
//! * `max_energy_gain_over_f64`: max (E(t) − E_f64(t))/S, the energy a run holds above
//!   the f64 run's at the same step (the f64 run's own dissipation removed);
//! * `final_energy_offset`: (E(end) − E_f64(end))/S, where the run ends compared with
//!   the f64 run (the drift of the energy over the run, the physical change removed);
//! * `final_joint_violation`: [`crate::xpbd::World::hard_violation`] at the end (m or
//!   rad; the drift of the hard joints, 0 for the cantilever, which has none);
//! * `time_per_step_us`: wall time of one step, µs, from a separate timing pass after
//!   the lockstep runs (each variant rebuilt and stepped alone in chunks of 5,000
//!   pendulum or 50 cantilever steps, the three variants interleaved, ten rounds; the
//!   fastest chunk, as the step would take on an idle machine), so that the
//!   comparisons and the energy evaluations are not timed. Wall times on a shared
//!   machine are noisy; the criterion bench `f32_arithmetic` and the instruction
//!   counts of `examples/step_profile.rs` and `examples/rod_profile.rs` are the
//!   reference.
//!
//! Files in `DIR`: `summary.json` ([`F32Report`]) and `summary.md` (the table), written
//! whole at the end. An interrupted study (Ctrl-C) summarises the scenes it finished.

use super::super::files::OutputDir;
use super::{stage_summaries, Completeness, ReproduceError};
use crate::scene::Scene;
use crate::sim::{build_simulation, Rotation, Scalar, Simulation};
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The variants of every scene, f64 first (the reference).
pub const VARIANTS: [Scalar; 3] = [Scalar::F64, Scalar::F32, Scalar::F32Plain];

/// One scene of the study: (key, shipped scene name, overrides).
type SceneSpec = (&'static str, &'static str, Vec<(&'static str, String)>);

/// What `reproduce f32` runs.
#[derive(Debug, Clone, PartialEq)]
pub struct F32Options {
    /// Durations of the two pendulum runs, s.
    pub pendulum_seconds: [f64; 2],
    /// Duration of the cantilever run, s (`None`: the scene's 12 s).
    pub cantilever_seconds: Option<f64>,
    /// Rotation representation of every run.
    pub rotation: Rotation,
    /// Whether this is the cheap configuration of [`Self::quick`] (`--quick`).
    pub quick: bool,
}

impl Default for F32Options {
    /// The pendulum for 10 s and 100 s, the cantilever for 12 s, rotation matrices.
    fn default() -> Self {
        Self {
            pendulum_seconds: [10.0, 100.0],
            cantilever_seconds: None,
            rotation: Rotation::Matrix,
            quick: false,
        }
    }
}

impl F32Options {
    /// A cheap configuration: the pendulum for 0.5 s and 1 s, the cantilever for 0.5 s.
    pub fn quick() -> Self {
        Self {
            pendulum_seconds: [0.5, 1.0],
            cantilever_seconds: Some(0.5),
            quick: true,
            ..Self::default()
        }
    }

    fn scenes(&self) -> Vec<SceneSpec> {
        let secs = |s: f64| format!("{s:?}");
        let [short, long] = self.pendulum_seconds;
        let mut beam = vec![
            ("rods.beam.order", "3".to_string()),
            ("rods.beam.elements", "40".to_string()),
        ];
        if let Some(s) = self.cantilever_seconds {
            beam.push(("run.duration", secs(s)));
        }
        vec![
            (
                "pendulum_10s",
                "pendulum",
                vec![("run.duration", secs(short))],
            ),
            (
                "pendulum_100s",
                "pendulum",
                vec![("run.duration", secs(long))],
            ),
            ("cantilever_cubic_40", "cantilever", beam),
        ]
    }
}

/// One variant of one scene.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantResult {
    /// `f64`, `f32` (compensated) or `f32-plain`.
    pub variant: String,
    /// Steps taken.
    pub steps: u64,
    /// Whether the run stepped to its end (false: it diverged or was interrupted).
    pub completed: bool,
    /// Largest distance of a body's centre from the f64 run's, m (0 for f64).
    pub max_position_gap_m: f64,
    /// Largest rise of the total energy above E₀, relative to the scene's scale.
    pub energy_rise: f64,
    /// Largest excess of the total energy over the f64 run's at the same step,
    /// max (E(t) − E_f64(t)), relative to the scene's scale (0 for f64).
    pub max_energy_gain_over_f64: f64,
    /// (E(end) − E_f64(end)) relative to the scene's scale (0 for f64).
    pub final_energy_offset: f64,
    /// Hard joint violation at the end, m or rad.
    pub final_joint_violation: f64,
    /// Wall time per step, µs (fastest chunk of the timing pass).
    pub time_per_step_us: f64,
}

/// One scene of the study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SceneResult {
    /// `pendulum_10s`, `pendulum_100s` or `cantilever_cubic_40`.
    pub scene: String,
    /// Simulated time, s.
    pub seconds: f64,
    /// Time step, s.
    pub dt_s: f64,
    /// Initial total energy E₀, J.
    pub initial_energy_j: f64,
    /// The energy scale S, J (module docs).
    pub energy_scale_j: f64,
    /// f64, f32, f32-plain.
    pub variants: Vec<VariantResult>,
}

/// `summary.json` of `reproduce f32`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct F32Report {
    /// How much of the study ran.
    #[serde(flatten)]
    pub completeness: Completeness,
    /// Rotation representation of every run.
    pub rotation: String,
    /// The scenes, in order.
    pub scenes: Vec<SceneResult>,
}

fn scene_error(name: &str, source: crate::scene::SceneError) -> ReproduceError {
    ReproduceError::Scene {
        scene: name.into(),
        source: Box::new(source),
    }
}

/// The shipped scene `name` (`pendulum` or `cantilever`) with `overrides` applied.
fn load(name: &str, overrides: &[(&str, String)]) -> Result<Scene, ReproduceError> {
    let text = if name == "cantilever" {
        super::cantilever::SCENE_TOML
    } else {
        crate::scenes::pendulum::SCENE_TOML
    };
    let mut scene =
        Scene::from_toml(text, format!("scenes/{name}.toml")).map_err(|e| scene_error(name, e))?;
    for (key, value) in overrides {
        scene.set(key, value).map_err(|e| scene_error(name, e))?;
    }
    Ok(scene)
}

/// Centres of the dynamic bodies, m.
fn positions(sim: &dyn Simulation) -> Vec<nalgebra::Vector3<f64>> {
    (0..sim.body_names().len())
        .filter(|&i| !sim.is_fixed(i))
        .map(|i| sim.position(i))
        .collect()
}

/// Steps of a timing chunk: a few ms of stepping for either scene.
fn chunk_steps(scene: &Scene) -> u64 {
    if scene.file().rods.is_empty() {
        5_000
    } else {
        50
    }
}

/// Rounds of timing chunks (module docs).
const TIMING_ROUNDS: usize = 10;

/// Fastest wall time per step (µs) of each variant over five interleaved rounds of
/// chunks of fresh runs (module docs).
fn time_variants(scene: &Scene, rotation: Rotation, interrupt: &AtomicBool) -> Vec<f64> {
    let n = chunk_steps(scene).min(scene.steps().unwrap_or(1).max(1));
    let mut sims: Vec<Option<Box<dyn Simulation>>> = VARIANTS
        .iter()
        .map(|&s| build_simulation(scene, rotation, s).ok())
        .collect();
    let mut best = vec![f64::INFINITY; VARIANTS.len()];
    for _ in 0..TIMING_ROUNDS {
        for (k, slot) in sims.iter_mut().enumerate() {
            if interrupt.load(Ordering::Relaxed) {
                return best.into_iter().map(|_| f64::NAN).collect();
            }
            let Some(sim) = slot else { continue };
            let start = Instant::now();
            let mut ok = true;
            for _ in 0..n {
                ok &= sim.step().is_ok();
            }
            let per = start.elapsed().as_secs_f64() / n as f64 * 1e6;
            if ok {
                best[k] = best[k].min(per);
            } else {
                *slot = None;
            }
        }
    }
    best.into_iter()
        .map(|t| if t.is_finite() { t } else { f64::NAN })
        .collect()
}

/// Runs one scene's three variants in lockstep (module docs).
fn run_scene_variants(
    key: &str,
    scene: &Scene,
    rotation: Rotation,
    interrupt: &AtomicBool,
) -> Result<(SceneResult, bool), ReproduceError> {
    let steps = scene.steps().map_err(|e| scene_error(key, e))?;
    let mut sims = Vec::new();
    for &s in &VARIANTS {
        sims.push(build_simulation(scene, rotation, s).map_err(|e| scene_error(key, e))?);
    }
    let e0 = sims[0].energy().total();
    let n = VARIANTS.len();
    let mut alive = vec![true; n];
    let mut taken = vec![0u64; n];
    let mut gap = vec![0.0f64; n];
    let mut rise = vec![f64::NEG_INFINITY; n];
    let mut gain = vec![0.0f64; n];
    let mut ref_change = 0.0f64;
    let mut energy = vec![e0; n];
    let mut interrupted = false;
    for _ in 0..steps {
        if interrupt.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        for k in 0..n {
            if alive[k] {
                alive[k] = sims[k].step().is_ok();
                if alive[k] {
                    taken[k] += 1;
                }
            }
        }
        let reference = alive[0].then(|| positions(sims[0].as_ref()));
        for k in 0..n {
            if !alive[k] {
                continue;
            }
            let e = sims[k].energy().total();
            energy[k] = e;
            rise[k] = rise[k].max(e - e0);
            if k > 0 && alive[0] {
                gain[k] = gain[k].max(e - energy[0]);
            }
            if k == 0 {
                ref_change = ref_change.max((e - e0).abs());
            } else if let Some(r) = &reference {
                let p = positions(sims[k].as_ref());
                for (a, b) in p.iter().zip(r) {
                    gap[k] = gap[k].max((a - b).norm());
                }
            }
        }
    }
    let scale = e0.abs().max(ref_change);
    let times = if interrupted {
        vec![f64::NAN; n]
    } else {
        time_variants(scene, rotation, interrupt)
    };
    let variants = (0..n)
        .map(|k| VariantResult {
            variant: VARIANTS[k].name().into(),
            steps: taken[k],
            completed: taken[k] == steps,
            max_position_gap_m: gap[k],
            energy_rise: rise[k].max(0.0) / scale,
            max_energy_gain_over_f64: gain[k] / scale,
            final_energy_offset: (energy[k] - energy[0]) / scale,
            final_joint_violation: sims[k].hard_violation(),
            time_per_step_us: times[k],
        })
        .collect();
    let file = scene.file();
    Ok((
        SceneResult {
            scene: key.into(),
            seconds: steps as f64 * file.solver.dt,
            dt_s: file.solver.dt,
            initial_energy_j: e0,
            energy_scale_j: scale,
            variants,
        },
        interrupted,
    ))
}

/// Runs the study into `dir` (module docs); `progress(k, n, what)` is called before
/// scene k of n.
///
/// # Errors
/// [`ReproduceError::Scene`] if a shipped scene cannot be built (a defect), or the
/// [`ReproduceError::Output`] of writing the files.
pub fn reproduce_f32(
    dir: &Path,
    opts: &F32Options,
    interrupt: &AtomicBool,
    progress: &dyn Fn(usize, usize, &str),
) -> Result<F32Report, ReproduceError> {
    for s in opts.pendulum_seconds {
        super::check_seconds("pendulum seconds", s, load("pendulum", &[])?)?;
    }
    if let Some(s) = opts.cantilever_seconds {
        super::check_seconds("cantilever seconds", s, load("cantilever", &[])?)?;
    }
    let mut out = OutputDir::create(dir)?;
    out.check_targets(&["summary.json", "summary.md"])?;
    let specs = opts.scenes();
    let mut completeness =
        Completeness::planned(specs.iter().map(|(k, ..)| k.to_string())).quick(opts.quick);
    let mut scenes = Vec::new();
    for (k, (key, name, overrides)) in specs.iter().enumerate() {
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
        progress(k, specs.len(), key);
        let scene = load(name, overrides)?;
        let (result, interrupted) = run_scene_variants(key, &scene, opts.rotation, interrupt)?;
        let status = if interrupted {
            crate::pipeline::run::RunStatus::Interrupted
        } else {
            crate::pipeline::run::RunStatus::Completed
        };
        completeness.ran(key, status);
        scenes.push(result);
    }
    let report = F32Report {
        completeness,
        rotation: opts.rotation.name().into(),
        scenes,
    };
    stage_summaries(&mut out, &report, &markdown(&report))?;
    out.commit()?;
    Ok(report)
}

fn sci(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x.is_finite() {
        format!("{x:.2e}")
    } else {
        "—".into()
    }
}

/// `summary.md` of the study: one table row per scene and variant.
pub fn markdown(r: &F32Report) -> String {
    let mut s = r.completeness.banner();
    s.push_str("# f32 arithmetic: plain, compensated and f64\n\n");
    s.push_str(&format!(
        "Rotation representation: {}. Each f32 run is compared with the f64 run of the same scene at every step. Energy rise: max (E(t) − E₀) over the scene's energy scale S = max(|E₀|, max |E_f64(t) − E₀|) (S = {scales}); XPBD dissipates, so it is 0 unless the arithmetic adds energy. Gain over f64: max (E(t) − E_f64(t))/S at the same step. Energy offset at end: (E(end) − E_f64(end))/S. Joint violation: the hard joints' violation at the end (m or rad). Time per step: fastest of ten interleaved chunks of steps of a fresh run, without the comparisons (noisy on a shared machine).\n\n",
        r.rotation,
        scales = r
            .scenes
            .iter()
            .map(|sc| format!("{:.1} J for {}", sc.energy_scale_j, sc.scene))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    s.push_str("| scene | arithmetic | max position gap to f64, m | energy rise | gain over f64 | energy offset at end | joint violation at end | µs per step | steps |\n|---|---|---|---|---|---|---|---|---|\n");
    for sc in &r.scenes {
        for v in &sc.variants {
            let name = match v.variant.as_str() {
                "f64" => "f64",
                "f32" => "f32 compensated",
                _ => "f32 plain",
            };
            let time = if v.time_per_step_us.is_finite() {
                format!("{:.2}", v.time_per_step_us)
            } else {
                "—".into()
            };
            s.push_str(&format!(
                "| {} ({} s) | {} | {} | {} | {} | {} | {} | {} | {}{} |\n",
                sc.scene,
                sc.seconds,
                name,
                if v.variant == "f64" {
                    "(reference)".into()
                } else {
                    sci(v.max_position_gap_m)
                },
                sci(v.energy_rise),
                if v.variant == "f64" {
                    "(reference)".into()
                } else {
                    sci(v.max_energy_gain_over_f64)
                },
                if v.variant == "f64" {
                    "(reference)".into()
                } else {
                    sci(v.final_energy_offset)
                },
                sci(v.final_joint_violation),
                time,
                v.steps,
                if v.completed { "" } else { " (ended early)" },
            ));
        }
    }
    s
}
