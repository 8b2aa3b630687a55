//! Interrupted `reproduce` studies (Ctrl-C stops a study after the current step): the
//! study's files say the result is partial (`complete`, `interrupted_run`,
//! `finished_runs`, `not_run` in `summary.json`, a first line in `summary.md`), the
//! aggregates over runs are left out, and the finished runs' data are kept.
//!
//! The interrupt is deterministic: the studies' `progress` callback, called before run
//! k starts, sets the interrupt flag at a chosen k, so run k is cut short at its first
//! step (as a Ctrl-C during it would) and no later run starts. No timing is involved.

use lie_xpbd::pipeline::reproduce::cantilever::{reproduce_cantilever, CantileverOptions};
use lie_xpbd::pipeline::reproduce::figure11::{reproduce_figure11, Figure11Options};
use lie_xpbd::pipeline::reproduce::shear_locking::{reproduce_shear_locking, ShearLockingOptions};
use lie_xpbd::pipeline::reproduce::spring::{reproduce_spring, SpringOptions};
use lie_xpbd::pipeline::reproduce::{reproduce_rigid, RigidOptions};
use serde_json::Value;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

fn summary(dir: &Path) -> (Value, String) {
    let json = serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    (json, md)
}

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// The completeness fields of a partial study interrupted at run `interrupted`, with
/// `finished` before it and `not_run` after.
fn assert_partial(v: &Value, md: &str, interrupted: &str, finished: &[&str], not_run: usize) {
    assert_eq!(v["complete"], Value::Bool(false), "{v}");
    assert_eq!(v["interrupted_run"].as_str(), Some(interrupted), "{v}");
    assert_eq!(names(&v["finished_runs"]), finished, "{v}");
    assert_eq!(names(&v["not_run"]).len(), not_run, "{v}");
    assert!(
        after_quick_banner(v, md).starts_with("> **PARTIAL RESULT: the study was interrupted.**"),
        "{md}"
    );
    assert!(md.contains(interrupted), "{md}");
}

/// `summary.md` after the QUICK RUN banner that a `--quick` study (`"quick": true` in
/// `summary.json`) must start with, and that no other study has (user report: quick
/// summaries were not marked).
fn after_quick_banner<'a>(v: &Value, md: &'a str) -> &'a str {
    const QUICK: &str = "> **QUICK RUN (`--quick`)";
    if v["quick"] == Value::Bool(true) {
        assert!(md.starts_with(QUICK), "{md}");
        md.split_once("\n\n").map_or("", |(_, rest)| rest)
    } else {
        assert_eq!(v["quick"], Value::Bool(false), "{v}");
        assert!(!md.contains(QUICK), "{md}");
        md
    }
}

#[test]
fn interrupted_reproduce_rigid_is_marked_partial_and_keeps_finished_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rigid");
    let interrupt = AtomicBool::new(false);
    let opts = RigidOptions {
        pendulum_seconds: 0.05,
        rps_seconds: 0.05,
        ..RigidOptions::default()
    };
    let stop_at = |k: usize, _: usize, _: &str, _: &str| {
        if k == 1 {
            interrupt.store(true, Ordering::Relaxed);
        }
    };
    reproduce_rigid(&dir, &opts, &interrupt, &stop_at).unwrap();
    let (v, md) = summary(&dir);
    // 2 scenes × 5 runs: pendulum_block finished, pendulum_rows cut short, 8 not run.
    assert_partial(&v, &md, "pendulum_rows", &["pendulum_block"], 8);
    assert_eq!(v["pendulum"]["block"]["status"], "completed", "{v}");
    assert!(v["pendulum"]["block"]["median_primal"].is_number(), "{v}");
    if let Some(r) = v["pendulum"].get("rows") {
        assert_eq!(r["status"], "interrupted", "{v}");
    }
    assert!(v.get("rps").is_none(), "{v}");
    assert!(dir.join("pendulum_block/residuals.csv").is_file());
    // The ratios need the interrupted run: left out.
    assert!(
        md.contains("ratios involving an interrupted run are left out"),
        "{md}"
    );
}

#[test]
fn interrupted_reproduce_cantilever_leaves_out_the_orders_of_incomplete_sweeps() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cant");
    let interrupt = AtomicBool::new(false);
    // Run 0 is the reference, run 1 the first rigid chain (4 segments).
    let stop_at = |k: usize, _: usize, _: &str| {
        if k == 1 {
            interrupt.store(true, Ordering::Relaxed);
        }
    };
    reproduce_cantilever(&dir, &CantileverOptions::quick(), &interrupt, &stop_at).unwrap();
    let (v, md) = summary(&dir);
    assert_partial(
        &v,
        &md,
        "runs/rigid_chain_4",
        &["runs/reference_cubic_6"],
        7,
    );
    assert_eq!(v["reference"]["status"], "completed", "{v}");
    for (key, order) in v["orders"].as_object().unwrap() {
        assert!(order.is_null(), "{key}: {order} from an incomplete sweep");
    }
    assert!(v["linear_beats_rigid_chain_at_equal_dof"].is_null(), "{v}");
    assert!(md.contains("partial sweep"), "{md}");
    // The reference's data are kept.
    let csv = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .starts_with("reference_cubic,6,"),
        "{csv}"
    );
    assert!(dir.join("runs/reference_cubic_6/states.csv").is_file());
}

#[test]
fn reproduce_cantilever_interrupted_during_the_reference_has_no_tip_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cant");
    let interrupt = AtomicBool::new(false);
    let stop_at = |k: usize, _: usize, _: &str| {
        if k == 0 {
            interrupt.store(true, Ordering::Relaxed);
        }
    };
    reproduce_cantilever(&dir, &CantileverOptions::quick(), &interrupt, &stop_at).unwrap();
    let (v, md) = summary(&dir);
    assert_partial(&v, &md, "runs/reference_cubic_6", &[], 8);
    if !v["reference"].is_null() {
        assert_eq!(v["reference"]["status"], "interrupted", "{v}");
        assert!(v["reference"]["tip_error_m"].is_null(), "{v}");
    }
    assert!(v["runs"].as_array().unwrap().is_empty(), "{v}");
}

#[test]
fn interrupted_reproduce_shear_locking_leaves_out_its_aggregates() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sl");
    let interrupt = AtomicBool::new(false);
    let stop_at = |k: usize, _: usize, _: &str| {
        if k == 1 {
            interrupt.store(true, Ordering::Relaxed);
        }
    };
    reproduce_shear_locking(&dir, &ShearLockingOptions::quick(), &interrupt, &stop_at).unwrap();
    let (v, md) = summary(&dir);
    // 3 configurations × 2 integrations × 2 slenderness ratios = 12 runs.
    assert_partial(
        &v,
        &md,
        "runs/order1_reduced_200",
        &["runs/order1_reduced_5"],
        10,
    );
    assert!(v["max_rel_error_reduced_quadratic_cubic"].is_null(), "{v}");
    assert!(v["min_rel_error_full_at_max_slenderness"].is_null(), "{v}");
    let first = &v["runs"][0];
    assert_eq!(first["status"], "completed", "{v}");
    assert!(first["rel_error"].is_number(), "{v}");
}

#[test]
fn interrupted_reproduce_figure11_keeps_every_row_of_the_finished_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("f11");
    let interrupt = AtomicBool::new(false);
    let stop_at = |k: usize, _: usize, _: &str| {
        if k == 1 {
            interrupt.store(true, Ordering::Relaxed);
        }
    };
    reproduce_figure11(&dir, &Figure11Options::quick(), &interrupt, &stop_at).unwrap();
    let (v, md) = summary(&dir);
    assert_partial(&v, &md, "runs/banded_100", &["runs/banded_1"], 2);
    // The finished run's whole sag history (1 s at dt = 1e-2 s: 100 rows, or 101 with
    // the initial one) is in tip_sag.csv, not cut to the interrupted run's length.
    let csv = std::fs::read_to_string(dir.join("tip_sag.csv")).unwrap();
    let states = std::fs::read_to_string(dir.join("runs/banded_1/states.csv")).unwrap();
    assert_eq!(csv.lines().count(), states.lines().count(), "{csv}");
    assert!(csv.lines().count() > 100);
}

#[test]
fn uninterrupted_reproduce_figure11_is_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("f11");
    let interrupt = AtomicBool::new(false);
    reproduce_figure11(&dir, &Figure11Options::quick(), &interrupt, &|_, _, _| {}).unwrap();
    let (v, md) = summary(&dir);
    assert_eq!(v["complete"], Value::Bool(true), "{v}");
    assert!(v["interrupted_run"].is_null(), "{v}");
    assert_eq!(names(&v["finished_runs"]).len(), 4, "{v}");
    assert!(names(&v["not_run"]).is_empty(), "{v}");
    assert_eq!(v["quick"], Value::Bool(true), "{v}");
    assert!(after_quick_banner(&v, &md).starts_with("# Banded"), "{md}");
}

#[test]
fn interrupted_reproduce_spring_leaves_out_the_largest_deviation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sp");
    let interrupt = AtomicBool::new(false);
    let stop_at = |k: usize, _: usize, _: &str| {
        if k == 1 {
            interrupt.store(true, Ordering::Relaxed);
        }
    };
    reproduce_spring(&dir, &SpringOptions::quick(), &interrupt, &stop_at).unwrap();
    let (v, md) = summary(&dir);
    assert_partial(&v, &md, "runs/linear_40", &["runs/rigid_chain_40"], 2);
    assert!(v["max_rel_error_vs_theory"].is_null(), "{v}");
    let first = &v["runs"][0];
    assert_eq!(first["status"], "completed", "{v}");
    assert!(first["buckling_compression_m"].is_number(), "{v}");
    let csv = std::fs::read_to_string(dir.join("lateral.csv")).unwrap();
    assert!(
        csv.lines().any(|l| l.starts_with("rigid_chain_40,")),
        "{csv}"
    );
}
