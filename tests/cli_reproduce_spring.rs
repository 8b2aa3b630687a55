//! `lie-xpbd reproduce spring`: files and summary keys on the cheap configuration
//! (always), and the Section 9.4 configurations against the theoretical buckling
//! compression (`#[ignore]`: about 30 s in a release build).

mod cli_common;
use cli_common::run;
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
/// r cos(θ/2) from the axis: `tests/rod_rigid_chain_spring.rs`.)
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
