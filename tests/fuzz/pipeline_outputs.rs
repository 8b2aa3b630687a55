//! Mutated scenes through the pipeline's `run_scene` into a fresh folder: after an
//! error no file of the run exists (no partial output, no temporary left behind);
//! after a run (completed, diverged or interrupted) every file its summary lists
//! exists whole (`summary.json` reads back) and no temporary is left. Some cases go
//! through `check-jacobians` (`check_scene`, with random and out-of-range options) or
//! plan a sweep (`parse_axis` and `plan`, with random axes) instead.

use crate::harness::{CaseResult, Outcome};
use crate::scene_mutations::{self, SceneInput, MAX_FUZZ_NODES, MAX_FUZZ_WORK_PER_STEP};
use lie_xpbd::pipeline::jacobians::{check_scene, JacobianOptions};
use lie_xpbd::pipeline::run::{run_scene, RunError, RunOptions};
use lie_xpbd::pipeline::sweep::{parse_axis, plan};
use rand::rngs::StdRng;
use rand::RngExt;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// A mutated scene and how its run is started.
#[derive(Debug)]
pub struct PipelineInput {
    scene: SceneInput,
    /// Interrupted before its first step (Ctrl-C).
    interrupt: bool,
    /// Also write ParaView frames.
    vtk: bool,
    /// Instead of a run: check the Jacobians with these options.
    jacobians: Option<JacobianOptions>,
    /// Instead of a run: plan a sweep over these `--set key=v1,v2,…` axes.
    sweep: Option<Vec<String>>,
}

/// Draws one input.
pub fn generate(rng: &mut StdRng) -> PipelineInput {
    let mut scene = scene_mutations::generate(rng);
    scene.combos.truncate(1);
    let special = |rng: &mut StdRng, plain: f64| -> f64 {
        if rng.random_bool(0.2) {
            [0.0, -1.0, f64::NAN, f64::INFINITY, 1e300, 4.0][rng.random_range(0..6)]
        } else {
            plain
        }
    };
    let mode = rng.random_range(0..10);
    let jacobians = (mode == 7 || mode == 8).then(|| JacobianOptions {
        states: rng.random_range(0..3),
        position_scale: special(rng, 0.1),
        rotation_scale: special(rng, 0.5),
        seed: rng.random(),
        system_rotation_scale: special(rng, 1.0),
    });
    let sweep = (mode == 9).then(|| {
        (0..rng.random_range(0..4))
            .map(|_| {
                let key = [
                    "solver.dt",
                    "solver.substeps",
                    "run.every",
                    "solver.mode",
                    "bodies[0].mass",
                    "rods[0].elements",
                    "joints[0].compliance",
                    "x",
                    "",
                ][rng.random_range(0..9)];
                let n = [1, 2, 3, 50, 200][rng.random_range(0..5)];
                let values: Vec<String> = (0..n)
                    .map(|_| {
                        [
                            "1e-3",
                            "2",
                            "0",
                            "-1",
                            "nan",
                            "rows",
                            "[1, 2]",
                            "\"a,b\"",
                            "",
                            "{ x = 1 }",
                        ][rng.random_range(0..10)]
                        .to_string()
                    })
                    .collect();
                format!("{key}={}", values.join(","))
            })
            .collect()
    });
    PipelineInput {
        scene,
        interrupt: rng.random_bool(0.1),
        vtk: rng.random_bool(0.2),
        jacobians,
        sweep,
    }
}

/// Every file under `dir` (relative paths), recursively.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// Runs one input.
pub fn execute(input: &PipelineInput) -> CaseResult {
    let mut scene = match scene_mutations::parse(&input.scene)? {
        Ok(s) => s,
        Err(outcome) => return Ok(outcome),
    };
    let (work, nodes) = scene_mutations::work(&scene);
    if nodes > MAX_FUZZ_NODES || work > MAX_FUZZ_WORK_PER_STEP {
        return Ok(Outcome::Large(format!("{nodes} rod nodes, work {work}")));
    }
    if let Some(opts) = &input.jacobians {
        return match check_scene(&scene, opts) {
            Ok(report) => {
                let _ = report.table();
                Ok(Outcome::Built)
            }
            Err(e) if e.to_string().trim().is_empty() => Err(format!(
                "a Jacobian check error with an empty message: {e:?}"
            )),
            Err(_) => Ok(Outcome::Rejected("check-jacobians".into())),
        };
    }
    if let Some(axes) = &input.sweep {
        let mut parsed = Vec::new();
        for a in axes {
            match parse_axis(a) {
                Ok(axis) => parsed.push(axis),
                Err(e) => {
                    if e.to_string().trim().is_empty() {
                        return Err(format!("a sweep axis error with an empty message: {e:?}"));
                    }
                    return Ok(Outcome::Rejected("sweep axis".into()));
                }
            }
        }
        return match plan(&scene, &parsed, Path::new("sweep")) {
            Ok(_) => Ok(Outcome::Built),
            Err(e) if e.to_string().trim().is_empty() => {
                Err(format!("a sweep plan error with an empty message: {e:?}"))
            }
            Err(_) => Ok(Outcome::Rejected("sweep plan".into())),
        };
    }
    // A few steps only: the run's duration is what the fuzzer bounds.
    let dt = scene.file().solver.dt;
    if scene
        .set("run.duration", &format!("{:e}", 3.0 * dt))
        .is_err()
    {
        return Ok(Outcome::Rejected("duration override".into()));
    }
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let out = dir.path().join("run");
    let (rotation, scalar) = input.scene.combos[0];
    let opts = RunOptions {
        rotation,
        scalar,
        out: out.clone(),
        progress: None,
        vtk: input.vtk,
    };
    let interrupt = AtomicBool::new(input.interrupt);
    let result = run_scene(&scene, &opts, &interrupt);
    let written_after = files(&out);
    let temporaries_after: Vec<_> = written_after
        .iter()
        .filter(|f| f.rsplit('/').next().is_some_and(|n| n.starts_with('.')))
        .collect();
    if !temporaries_after.is_empty() {
        return Err(format!(
            "temporary files left in the run folder: {temporaries_after:?}"
        ));
    }
    match result {
        Err(e) => {
            if e.to_string().trim().is_empty() {
                return Err(format!("a run error with an empty message: {e:?}"));
            }
            if !written_after.is_empty() {
                return Err(format!(
                    "the run failed ({e}) but left files: {written_after:?}"
                ));
            }
            Ok(Outcome::Rejected(match e {
                RunError::Scene(_) => "build".into(),
                _ => "run".into(),
            }))
        }
        Ok(summary) => {
            for f in &summary.files {
                let p = out.join(f);
                let len = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
                if len == 0 {
                    return Err(format!("{f} is listed in the summary but missing or empty"));
                }
            }
            let json = std::fs::read_to_string(out.join("summary.json"))
                .map_err(|e| format!("summary.json: {e}"))?;
            serde_json::from_str::<serde_json::Value>(&json)
                .map_err(|e| format!("summary.json is not whole JSON: {e}"))?;
            Ok(match summary.status.name() {
                "diverged" => Outcome::Diverged,
                "completed" => Outcome::Stepped,
                "interrupted" => Outcome::Built,
                other => return Err(format!("run status {other} returned Ok")),
            })
        }
    }
}
