//! Mutated scenes through the pipeline's `run_scene` into a fresh folder: after an
//! error no file of the run exists (no partial output, no temporary left behind);
//! after a run (completed, diverged or interrupted) every file its summary lists
//! exists whole (`summary.json` reads back) and no temporary is left.

use crate::harness::{CaseResult, Outcome};
use crate::scene_mutations::{self, SceneInput, MAX_FUZZ_NODES, MAX_FUZZ_WORK_PER_STEP};
use lie_xpbd::pipeline::run::{run_scene, RunError, RunOptions};
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
}

/// Draws one input.
pub fn generate(rng: &mut StdRng) -> PipelineInput {
    let mut scene = scene_mutations::generate(rng);
    scene.combos.truncate(1);
    PipelineInput {
        scene,
        interrupt: rng.random_bool(0.1),
        vtk: rng.random_bool(0.2),
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
    // A few steps only: the run's duration is what the fuzzer bounds.
    let dt = scene.file().solver.dt;
    if scene.set("run.duration", &format!("{:e}", 3.0 * dt)).is_err() {
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
        return Err(format!("temporary files left in the run folder: {temporaries_after:?}"));
    }
    match result {
        Err(e) => {
            if e.to_string().trim().is_empty() {
                return Err(format!("a run error with an empty message: {e:?}"));
            }
            if !written_after.is_empty() {
                return Err(format!("the run failed ({e}) but left files: {written_after:?}"));
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
