//! `lie-xpbd reproduce shear-locking`: files and summary keys on the cheap
//! configuration (always), and the full Section 9.3 sweep against the paper's claims
//! (`#[ignore]`: about 7 s in a release build).

use crate::cli_common;
use cli_common::run;
use serde_json::Value;

fn reproduce(args: &[&str]) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    let mut all = vec!["reproduce", "shear-locking", "--out", "sl"];
    all.extend_from_slice(args);
    let out = run(&all, tmp.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = tmp.path().join("sl");
    assert!(dir.join("runs.csv").is_file());
    assert!(dir.join("summary.md").is_file());
    let png = std::fs::read(dir.join("rel_error.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn quick_shear_locking_writes_every_key() {
    let v = reproduce(&["--quick"]);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 12);
    for r in runs {
        for key in [
            "order",
            "slenderness",
            "deflection_m",
            "analytic_m",
            "rel_error",
        ] {
            let x = r[key].as_f64().unwrap_or_else(|| panic!("{key}: {r}"));
            assert!(x.is_finite() && x > 0.0, "{key} = {x}");
        }
        assert!(["reduced", "full"].contains(&r["integration"].as_str().unwrap()));
        // (125) with E chosen for d = 0.02 L.
        let l = r["slenderness"].as_f64().unwrap() * 0.05;
        assert!((r["analytic_m"].as_f64().unwrap() - 0.02 * l).abs() < 1e-12 * l);
    }
}

/// The paper's claims: with reduced integration 1 quadratic and 1 cubic element are
/// within 0.1 % of (125) at every L/r from 5 to 200 (measured 4.2e-4: the geometric
/// nonlinearity at d/L = 0.02 that the linear beam leaves out); with full integration
/// every configuration locks by more than 5 % at L/r = 200.
#[test]
#[ignore]
fn full_shear_locking_sweep_meets_the_claims() {
    let v = reproduce(&[]);
    let max_reduced = v["max_rel_error_reduced_quadratic_cubic"].as_f64().unwrap();
    let min_full = v["min_rel_error_full_at_max_slenderness"].as_f64().unwrap();
    println!(
        "reduced quadratic/cubic max rel error {max_reduced:e}, full at L/r = 200 min {min_full:e}"
    );
    assert!(max_reduced < 1e-3);
    assert!(min_full > 0.05);
    for r in v["runs"].as_array().unwrap() {
        assert!(r["final_max_speed"].as_f64().unwrap() < 1e-9, "{r}");
    }
}
