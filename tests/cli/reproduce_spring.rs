//! `lie-xpbd reproduce spring`: files and summary keys on the cheap configuration
//! (always), and the Section 9.4 configurations against the theoretical buckling
//! compression (`#[ignore]`: about 30 s in a release build).

use crate::cli_common;
use cli_common::run;
use lie_xpbd::pipeline::reproduce::spring::{buckling_point, THRESHOLD_M, TREND_MAX_M};
use serde_json::Value;

fn reproduce(args: &[&str]) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    let mut all = vec!["reproduce", "spring", "--out", "sp"];
    all.extend_from_slice(args);
    let out = run(&all, tmp.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = tmp.path().join("sp");
    assert!(dir.join("summary.md").is_file());
    let csv = std::fs::read_to_string(dir.join("lateral.csv")).unwrap();
    assert!(csv.starts_with("run,compression_m,lateral_m\n"));
    let png = std::fs::read(dir.join("lateral.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

/// The cheap configuration: every run compresses the spring by 0.5 m and has its keys.
#[test]
fn quick_spring_writes_every_key() {
    let v = reproduce(&["--quick"]);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    for r in runs {
        assert!(r["discretization"].is_string(), "{r}");
        assert!(r["elements"].as_u64().unwrap() > 0, "{r}");
        assert!(r["step_ms"].as_f64().unwrap() > 0.0, "{r}");
        let c = r["max_compression_m"].as_f64().unwrap();
        assert!((c - 0.5).abs() < 2e-3, "{r}");
        assert!(r.get("buckling_compression_m").is_some(), "{r}");
        assert!(r["final_lateral_m"].as_f64().unwrap() > 0.0, "{r}");
    }
}

/// Section 9.4: rigid chain 120, linear 120 and 250, quadratic 66, cubic 40, pushed at
/// 0.02 m/s. Measured buckling compressions (1 mm above the pre-buckling trend): rigid
/// chain 120 0.310 m, linear 120 0.299, linear 250 0.310, quadratic 66 0.311, cubic 40
/// 0.315: every discretization within 7 % of the theoretical 0.32 m. (The rigid chain
/// buckled at 0.248 m while its bodies sat on the helix, which put its joints at
/// r cos(θ/2) from the axis: `tests/rod/rigid_chain_spring.rs`.)
#[test]
#[ignore]
fn spring_buckles_near_theory() {
    let v = reproduce(&[]);
    for r in v["runs"].as_array().unwrap() {
        let c = r["buckling_compression_m"].as_f64().unwrap();
        let e = (c - 0.32).abs() / 0.32;
        println!(
            "{} {}: buckling at {c:.3} m ({:.1} %)",
            r["discretization"],
            r["elements"],
            100.0 * e
        );
        assert!(e < 0.15, "{r}");
    }
}

/// A synthetic lateral displacement, one row per mm of compression: a linear trend
/// (0.01 m per m) with a ±0.3 mm jitter, a blip 1.6 mm above the trend over
/// 0.247–0.249 m, back below, then a permanent departure (1.5 mm above, growing) from
/// `onset` m on, if any.
fn jittery_curve(onset: Option<f64>) -> (Vec<f64>, Vec<f64>) {
    let c: Vec<f64> = (0..=500).map(|k| k as f64 * 1e-3).collect();
    let d = c
        .iter()
        .map(|&x| {
            let mut y = 0.01 * x + 3e-4 * (x * 2000.0).sin();
            if (0.2465..0.2495).contains(&x) {
                y += 1.6e-3;
            }
            if let Some(o) = onset {
                if x >= o - 1e-9 {
                    y += 1.5e-3 + 0.05 * (x - o);
                }
            }
            y
        })
        .collect();
    (c, d)
}

/// Regression: the quick rigid chain's buckling point was 0.247 m (theory 0.32 m)
/// because the detector took the first upward crossing of the threshold, a jitter
/// below the buckling. It must be the last upward crossing, the start of the departure
/// that lasts to the end.
#[test]
fn buckling_point_is_the_last_upward_crossing_of_a_jittery_curve() {
    const { assert!(TREND_MAX_M < 0.247 && THRESHOLD_M < 1.5e-3) };
    let (c, d) = jittery_curve(Some(0.31));
    let (slope, _, at) = buckling_point(&c, &d, THRESHOLD_M);
    // The fit over c <= 0.15 m sees the trend plus the jitter: slope 0.00994 (computed
    // by hand from the same rows). Within 1e-3 of 0.01 the line moves by at most
    // 0.5 mm at c = 0.5 m, so the ±0.3 mm jitter stays below the 1 mm threshold and
    // only the blip and the departure cross it.
    assert!((slope - 0.01).abs() < 1e-3, "slope {slope}");
    // Rows are exact multiples of 1 mm; the onset row is c = 0.310 m (0.31 as the
    // float 310·1e-3).
    assert_eq!(at, Some(c[310]), "detected at {at:?}");
    // The blip alone is crossed upward and back: not a buckling point.
    let (c, d) = jittery_curve(None);
    assert_eq!(buckling_point(&c, &d, THRESHOLD_M).2, None);
    // No row past the fit range: nothing to detect.
    assert_eq!(buckling_point(&c[..100], &d[..100], THRESHOLD_M).2, None);
}
