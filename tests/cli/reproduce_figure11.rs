//! `lie-xpbd reproduce figure11`: files and summary keys on the cheap configuration
//! (always), and the default 10 s runs against Figure 11's claims (`#[ignore]`: about
//! 4 s in a release build, far longer in a debug one).

use crate::cli_common;
use cli_common::run;
use serde_json::Value;

fn reproduce(args: &[&str]) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    let mut all = vec!["reproduce", "figure11", "--out", "f11"];
    all.extend_from_slice(args);
    let out = run(&all, tmp.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = tmp.path().join("f11");
    assert!(dir.join("summary.md").is_file());
    // Statuses read as in summary.json (`completed`), not `Completed`.
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        md.contains("| completed |") && !md.contains("Completed"),
        "{md}"
    );
    let csv = std::fs::read_to_string(dir.join("tip_sag.csv")).unwrap();
    assert!(csv.starts_with(
        "t,banded_1_sag_m,banded_100_sag_m,gauss_point_1_sag_m,gauss_point_100_sag_m\n"
    ));
    let png = std::fs::read(dir.join("tip_sag.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

fn sag(v: &Value, solve: &str, iterations: u64) -> f64 {
    v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["solve"] == solve && r["iterations"] == iterations)
        .unwrap_or_else(|| panic!("no run {solve} {iterations}"))["tip_sag_m"]
        .as_f64()
        .unwrap()
}

/// 0.3 s (30 steps): every key is there, and the two projections already differ
/// (one Gauss-point iteration is softer than one banded one).
#[test]
fn quick_figure11_writes_every_key() {
    let v = reproduce(&["--seconds", "0.3"]);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    for r in runs {
        for key in [
            "tip_sag_m",
            "max_tip_sag_m",
            "tip_x_m",
            "step_ms",
            "duration_s",
        ] {
            let x = r[key].as_f64().unwrap_or_else(|| panic!("{key}: {r}"));
            assert!(x.is_finite() && x > 0.0, "{key} = {x}");
        }
        assert!(
            (r["duration_s"].as_f64().unwrap() - 0.3).abs() < 1e-9,
            "{r}"
        );
    }
    assert!(sag(&v, "gauss_point", 1) > sag(&v, "banded", 1), "{v}");
}

/// The default 10 s runs: one banded iteration is at rest at the rest sag of many
/// (measured 0.3551 m for 1 and 100 iterations, speeds 1e-14), one Gauss-point iteration
/// is far too soft (sag 1.094 m at 10 s: the 1 m rod hangs, tip x ≈ 0) and 100 are in
/// between (0.669 m at 10 s, still swinging; its rest sag is 0.5862 m,
/// `tests/rod/gauss_point.rs`).
#[test]
#[ignore]
fn figure11_default_runs_show_the_flaccid_rod() {
    let v = reproduce(&[]);
    let (b1, b100) = (sag(&v, "banded", 1), sag(&v, "banded", 100));
    let (g1, g100) = (sag(&v, "gauss_point", 1), sag(&v, "gauss_point", 100));
    println!("sag: banded 1 {b1}, banded 100 {b100}, Gauss-point 1 {g1}, 100 {g100}");
    assert!((b1 - b100).abs() < 1e-10, "{b1} {b100}");
    assert!((b1 - 0.3551).abs() < 1e-4, "{b1}");
    for r in v["runs"].as_array().unwrap() {
        if r["solve"] == "banded" {
            assert!(r["final_max_speed"].as_f64().unwrap() < 1e-9, "{r}");
        }
    }
    assert!(g1 > 2.0 * b1, "{g1} {b1}");
    assert!(b1 < g100 && g100 < g1, "{b1} {g100} {g1}");
}
