//! `lie-xpbd reproduce f32` on its cheap configuration: every scene has its three
//! variants with every key, and `compare --scalar f64,f32,f32-plain` makes plain f32 a
//! run of its own.

use crate::cli_common;
use cli_common::run;
use serde_json::Value;

#[test]
fn quick_f32_study_writes_every_variant() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(&["reproduce", "f32", "--quick", "--out", "f"], tmp.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = tmp.path().join("f");
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        md.contains("| f32 plain |") && md.contains("QUICK RUN"),
        "{md}"
    );
    let v: Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let scenes = v["scenes"].as_array().unwrap();
    let keys: Vec<&str> = scenes
        .iter()
        .map(|s| s["scene"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        ["pendulum_10s", "pendulum_100s", "cantilever_cubic_40"]
    );
    for s in scenes {
        let variants = s["variants"].as_array().unwrap();
        let names: Vec<&str> = variants
            .iter()
            .map(|x| x["variant"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["f64", "f32", "f32-plain"], "{s}");
        for x in variants {
            assert!(x["completed"].as_bool().unwrap(), "{x}");
            assert!(x["time_per_step_us"].as_f64().unwrap() > 0.0, "{x}");
            assert!(x["energy_rise"].as_f64().unwrap() >= 0.0, "{x}");
        }
        assert_eq!(variants[0]["max_position_gap_m"].as_f64(), Some(0.0));
        // The f32 runs differ from f64, and plain from compensated.
        let gap = |k: usize| variants[k]["max_position_gap_m"].as_f64().unwrap();
        assert!(gap(1) > 0.0 && gap(2) > 0.0 && gap(1) != gap(2), "{s}");
    }
    // --scalar does not apply: the study runs all three.
    let out = run(
        &["reproduce", "f32", "--scalar", "f32", "--out", "g"],
        tmp.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!tmp.path().join("g").exists());
}

#[test]
fn compare_runs_plain_f32_as_its_own_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(
        &[
            "compare",
            "pendulum",
            "--rotation",
            "matrix",
            "--scalar",
            "f64,f32,f32-plain",
            "--seconds",
            "0.2",
            "--out",
            "c",
        ],
        tmp.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = tmp.path().join("c");
    let csv = std::fs::read_to_string(dir.join("compare.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(header.contains("matrix_f32_position_m"), "{header}");
    assert!(header.contains("matrix_f32-plain_position_m"), "{header}");
    let v: Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let runs: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run"].as_str().unwrap())
        .collect();
    assert_eq!(runs, ["matrix_f64", "matrix_f32", "matrix_f32-plain"]);
    // A bad scalar name lists the valid ones.
    let out = run(&["compare", "pendulum", "--scalar", "f16"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("f32-plain"));
}
