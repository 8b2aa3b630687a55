//! The program itself (`lie-xpbd`, run as a child process, sparingly: each case is a
//! process start) on mutated scene files with random arguments: `run`, `compare`,
//! `check-jacobians` and `sweep`, with `--seconds`, `--rotation`, `--scalar`, `--set`,
//! `--jobs` and `--states` drawn from valid and invalid values. A case must exit with
//! one of the program's codes (never 101, a panic, nor a signal) within the deadline,
//! print a message on stderr when it fails, and leave no hidden temporary file in its
//! output folder; after a failure before the run (exit 2) no output file exists.

use crate::harness::{CaseResult, Outcome};
use crate::scene_mutations::{self, SceneInput};
use rand::rngs::StdRng;
use rand::RngExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A scene file and a command line.
#[derive(Debug)]
pub struct CliInput {
    scene: SceneInput,
    args: Vec<String>,
}

fn pick<'a>(rng: &mut StdRng, xs: &[&'a str]) -> &'a str {
    xs[rng.random_range(0..xs.len())]
}

/// Draws one input.
pub fn generate(rng: &mut StdRng) -> CliInput {
    let mut scene = scene_mutations::generate(rng);
    if rng.random_bool(0.5) {
        // Half the cases run a shipped scene as it is, so that the arguments are reached.
        scene.edits.clear();
        scene.overrides.clear();
        let c = scene_mutations::corpus();
        let (name, text) = &c[rng.random_range(0..c.len())];
        scene.base = name.clone();
        scene.bytes = text.clone().into_bytes();
    }
    let command = pick(
        rng,
        &["run", "run", "run", "compare", "check-jacobians", "sweep"],
    );
    let mut args = vec![command.to_string(), "SCENE".to_string()];
    if command != "check-jacobians" {
        // Always bounded: a valid --seconds is at most a few steps of any shipped dt.
        args.push("--seconds".into());
        args.push(
            if rng.random_bool(0.7) {
                pick(rng, &["0.004", "0.01"])
            } else {
                pick(rng, &["0", "-1", "nan", "inf", "1e-300", "abc", ""])
            }
            .into(),
        );
    }
    let list = command == "compare";
    if rng.random_bool(0.3) {
        args.push("--rotation".into());
        args.push(
            pick(
                rng,
                if list {
                    &["matrix,quaternion", "matrix", "quat", ",", "matrix,matrix"]
                } else {
                    &["matrix", "quaternion", "euler", ""]
                },
            )
            .into(),
        );
    }
    if rng.random_bool(0.3) {
        args.push("--scalar".into());
        args.push(
            pick(
                rng,
                if list {
                    &["f64,f32", "f32", "f16", "f64,,f32"]
                } else {
                    &["f64", "f32", "f128", "F64"]
                },
            )
            .into(),
        );
    }
    for _ in 0..rng.random_range(0..3) {
        args.push("--set".into());
        let value = if command == "sweep" {
            pick(
                rng,
                &[
                    "solver.substeps=1,2",
                    "solver.dt=1e-3,nan",
                    "solver.mode=rows,block",
                    "x=1",
                    "=1",
                    "solver.dt",
                ],
            )
        } else {
            pick(
                rng,
                &[
                    "solver.substeps=2",
                    "solver.dt=nan",
                    "solver.mode=rows",
                    "bodies[0].mass=-1",
                    "rods[0].elements=100001",
                    "run.duration=1",
                    "a.b.c=1",
                    "solver.dt",
                    "=",
                    "solver.dt=1e-3\nsolver.substeps=2",
                    "joints[0].limit.lower_deg=1e400",
                ],
            )
        };
        args.push(value.into());
    }
    if command == "sweep" && rng.random_bool(0.5) {
        args.push("--jobs".into());
        args.push(pick(rng, &["0", "1", "2", "18446744073709551616", "-3"]).into());
    }
    if command == "check-jacobians" {
        args.push("--states".into());
        args.push(pick(rng, &["0", "1", "2", "-1", "99999999999999999999"]).into());
    }
    CliInput { scene, args }
}

fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out
}

/// Runs one input.
pub fn execute(input: &CliInput) -> CaseResult {
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let scene = dir.path().join("fuzz.toml");
    std::fs::write(&scene, &input.scene.bytes).map_err(|e| format!("write: {e}"))?;
    let out = dir.path().join("out");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lie-xpbd"));
    for a in &input.args {
        if a == "SCENE" {
            cmd.arg(&scene);
        } else {
            cmd.arg(a);
        }
    }
    if input.args[0] != "check-jacobians" {
        cmd.arg("--out").arg(&out);
    }
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| format!("wait: {e}"))? {
            break s;
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            return Err("the program did not finish within 30 s".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    let Some(code) = status.code() else {
        return Err(format!(
            "the program was killed by a signal: {status}\n{stderr}"
        ));
    };
    if code == 101 || stderr.contains("panicked") {
        return Err(format!("the program panicked (exit {code}):\n{stderr}"));
    }
    if !matches!(code, 0..=4 | 130) {
        return Err(format!("unexpected exit code {code}:\n{stderr}"));
    }
    if code != 0 && stderr.trim().is_empty() {
        return Err(format!("exit {code} without a message"));
    }
    let written = files(&out);
    if let Some(t) = written
        .iter()
        .find(|f| f.rsplit('/').next().is_some_and(|n| n.starts_with('.')))
    {
        return Err(format!("a temporary file was left: {t}"));
    }
    if code == 2 && !written.is_empty() && input.args[0] == "run" {
        return Err(format!(
            "exit 2 (nothing run) but files were written: {written:?}"
        ));
    }
    Ok(match code {
        0 | 3 | 4 => Outcome::Stepped,
        1 => Outcome::Diverged,
        c => Outcome::Rejected(format!("program (exit {c})")),
    })
}
