//! Helpers shared by the tests that run the built program.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// The built `lie-xpbd` program.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lie-xpbd"))
}

/// Runs the program with `args` in `cwd` and waits for it.
pub fn run(args: &[&str], cwd: &Path) -> Output {
    bin()
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the program starts")
}

/// Starts a long pendulum run writing to `cwd/out`, sends it `signal` (`INT`, `TERM`)
/// after 1.5 s, and returns its output and parsed `summary.json`.
#[cfg(unix)]
pub fn stopped_run(cwd: &Path, out: &str, signal: &str) -> (Output, serde_json::Value) {
    let child = bin()
        .args([
            "pendulum",
            "--seconds",
            "100000",
            "--set",
            "run.every=100",
            "--out",
            out,
        ])
        .current_dir(cwd)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let kill = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let output = child.wait_with_output().unwrap();
    let text = std::fs::read(cwd.join(out).join("summary.json")).unwrap();
    (output, serde_json::from_slice(&text).unwrap())
}

/// Sends `signal` (`INT`, `TERM`) to `child`.
#[cfg(unix)]
pub fn signal(child: &std::process::Child, signal: &str) {
    let kill = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
}

/// Waits up to `seconds` for `child` to exit and returns its output; kills it and
/// returns `None` if it is still running then.
pub fn wait_at_most(mut child: std::process::Child, seconds: f64) -> Option<Output> {
    let start = std::time::Instant::now();
    while start.elapsed().as_secs_f64() < seconds {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}
