//! `lie-xpbd reproduce cantilever`: the files and summary keys on the cheap
//! configuration (`--quick`, always run), and the full Section 9.2 sweep with the
//! issue's targets (`#[ignore]`: about 25 s in a release build, minutes in debug).

use crate::cli_common;
use cli_common::run;
use serde_json::Value;

const KEYS: [&str; 4] = ["rigid_chain", "linear", "quadratic", "cubic"];

fn reproduce(args: &[&str]) -> (tempfile::TempDir, Value) {
    let tmp = tempfile::tempdir().unwrap();
    let mut all = vec!["reproduce", "cantilever", "--out", "rc"];
    all.extend_from_slice(args);
    let out = run(&all, tmp.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = tmp.path().join("rc");
    for f in ["runs.csv", "summary.md", "summary.json"] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    // Statuses read as in summary.json (`completed`), not `Completed`.
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        md.contains("| completed |") && !md.contains("Completed"),
        "{md}"
    );
    for png in [
        "error_vs_dof.png",
        "error_vs_step_time.png",
        "residuals.png",
    ] {
        let bytes = std::fs::read(dir.join(png)).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{png}");
    }
    let v: Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    (tmp, v)
}

fn run_of<'a>(v: &'a Value, key: &str, elements: u64) -> &'a Value {
    v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["discretization"] == key && r["elements"] == elements)
        .unwrap_or_else(|| panic!("no run {key} {elements}"))
}

#[test]
fn quick_cantilever_writes_every_file_and_key() {
    let (tmp, v) = reproduce(&["--quick"]);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 8);
    for r in runs {
        for key in ["elements", "dof", "tip_error_m", "step_ms"] {
            let x = r[key].as_f64().unwrap_or_else(|| panic!("{key}: {r}"));
            assert!(x.is_finite() && x > 0.0, "{key} = {x}");
        }
        let folder = tmp.path().join("rc").join(r["folder"].as_str().unwrap());
        assert!(folder.join("states.csv").is_file());
        assert!(folder.join("residuals.csv").is_file());
        // The residuals (51)–(52), rod rows included, fall over the run.
        let (p, c) = (&r["primal_residual"], &r["constraint_residual"]);
        assert!(p[1].as_f64().unwrap() < p[0].as_f64().unwrap(), "{r}");
        assert!(c[1].as_f64().unwrap() < c[0].as_f64().unwrap(), "{r}");
    }
    // DOF: 6 per dynamic node (rigid chain n + 1 bodies, fem n·order + 1 nodes, base
    // clamped).
    assert_eq!(run_of(&v, "rigid_chain", 4)["dof"], 24);
    assert_eq!(run_of(&v, "quadratic", 4)["dof"], 48);
    assert_eq!(run_of(&v, "cubic", 3)["dof"], 54);
    for key in KEYS {
        assert!(
            v["orders"][key].as_f64().is_some(),
            "{key}: {}",
            v["orders"]
        );
        assert!(v["residuals"][key]["primal"].as_array().unwrap().len() > 5);
    }
    assert_eq!(v["reference"]["elements"], 6);
}

/// The full sweep against the targets: fitted orders linear ≥ 1.8, quadratic
/// ≥ 3.5, cubic ≥ 5, linear more accurate than the rigid chain at equal DOF, and the
/// 5-element tip errors of the paper's own code (2.5e-4, 8.2e-6, 7.7e-8 m, quoted to
/// two digits: an error that rounds to the quoted value or below meets it), every run
/// at rest (velocities below 1e-12) with its constraint residual fallen by 1e5.
#[test]
#[ignore]
fn full_cantilever_sweep_meets_the_targets() {
    let (_tmp, v) = reproduce(&[]);
    println!("orders {}", v["orders"]);
    let order = |k: &str| v["orders"][k].as_f64().unwrap();
    assert!(order("linear") >= 1.8);
    assert!(order("quadratic") >= 3.5);
    assert!(order("cubic") >= 5.0);
    assert_eq!(v["linear_beats_rigid_chain_at_equal_dof"], true);
    let bound = |q: f64| q + 0.5 * 10f64.powf(q.log10().floor() - 1.0);
    let err = |k: &str| run_of(&v, k, 5)["tip_error_m"].as_f64().unwrap();
    assert!(err("linear") < bound(2.5e-4), "{}", err("linear"));
    assert!(err("quadratic") < bound(8.2e-6), "{}", err("quadratic"));
    assert!(err("cubic") < bound(7.7e-8), "{}", err("cubic"));
    for r in v["runs"].as_array().unwrap() {
        assert!(r["final_max_speed"].as_f64().unwrap() < 1e-12, "{r}");
        let c = &r["constraint_residual"];
        assert!(
            c[1].as_f64().unwrap() < 1e-5 * c[0].as_f64().unwrap(),
            "{r}"
        );
    }
}
