//! End-to-end tests of `lie-xpbd pendulum`: runs the built binary on short simulations
//! and checks the files it writes, and that bad input fails cleanly.

use lie_xpbd::scenes::pendulum::{max_reach, BODY_COUNT};
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_lie-xpbd");
const FILES: [&str; 3] = ["residuals.csv", "states.csv", "summary.json"];

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the lie-xpbd binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Header and rows of a CSV file, every value parsed as a number.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let mut r = csv::Reader::from_path(path).expect("CSV opens");
    let header = r
        .headers()
        .expect("CSV has a header")
        .iter()
        .map(String::from)
        .collect();
    let rows = r
        .records()
        .map(|rec| {
            rec.expect("CSV row parses")
                .iter()
                .map(|v| v.parse::<f64>().expect("CSV value is a number"))
                .collect()
        })
        .collect();
    (header, rows)
}

fn state_header() -> Vec<String> {
    let mut h = vec!["t".to_string()];
    for i in 0..BODY_COUNT {
        for q in ["px", "py", "pz", "rx", "ry", "rz"] {
            h.push(format!("b{i}_{q}"));
        }
    }
    h
}

/// Names in `dir`, sorted (hidden temporary files included).
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = match fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

type Run = (Vec<Vec<f64>>, Vec<Vec<f64>>, Value);

/// Runs a pendulum simulation of `seconds` at time step `dt`, a row every `every`
/// steps, into a fresh directory; asserts success and the files' consistency, and
/// returns (residual rows, state rows, summary).
fn check_run(extra: &[&str], seconds: f64, dt: f64, every: usize) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let out: PathBuf = tmp.path().join("out");
    let secs = seconds.to_string();
    let dt_s = dt.to_string();
    let every_s = every.to_string();
    let mut args = vec![
        "pendulum",
        "--seconds",
        &secs,
        "--dt",
        &dt_s,
        "--every",
        &every_s,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = run(&args, tmp.path());
    assert!(
        o.status.success(),
        "{args:?} failed: {}\n{}",
        text(&o.stderr),
        text(&o.stdout)
    );
    let stdout = text(&o.stdout);
    assert!(stdout.contains("residuals"), "summary printed: {stdout}");
    assert!(
        stdout.contains(out.to_str().unwrap()),
        "names the output dir: {stdout}"
    );
    assert_eq!(
        listing(&out),
        ["residuals.csv", "states.csv", "summary.json"]
    );

    let steps = (seconds / dt).round() as usize;
    let expected_rows = steps / every;
    let (rh, res) = read_csv(&out.join("residuals.csv"));
    assert_eq!(
        rh,
        ["t", "primal_residual", "constraint_residual", "energy"]
    );
    let (sh, states) = read_csv(&out.join("states.csv"));
    assert_eq!(sh, state_header());
    assert_eq!(res.len(), expected_rows, "{args:?}");
    assert_eq!(states.len(), expected_rows, "{args:?}");
    for (k, (r, s)) in res.iter().zip(&states).enumerate() {
        assert_eq!(r.len(), 4);
        assert_eq!(s.len(), 1 + 6 * BODY_COUNT);
        assert!(
            r.iter().chain(s).all(|x| x.is_finite()),
            "row {k}: {r:?} {s:?}"
        );
        let t = ((k + 1) * every) as f64 * dt;
        assert!(
            (r[0] - t).abs() < 1e-6 && (s[0] - t).abs() < 1e-6,
            "t of row {k}"
        );
        assert!(r[1] >= 0.0 && r[2] >= 0.0, "residuals are norms");
        for i in 0..BODY_COUNT {
            let p = &s[1 + 6 * i..4 + 6 * i];
            let reach = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
            assert!(
                reach <= max_reach(i) + 1e-2,
                "body {i} at {reach} m in row {k}"
            );
            let rv = &s[4 + 6 * i..7 + 6 * i];
            let angle = (rv[0] * rv[0] + rv[1] * rv[1] + rv[2] * rv[2]).sqrt();
            assert!(angle <= std::f64::consts::PI + 1e-5, "Log(R) has |θ| ≤ π");
        }
    }

    let summary: Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap())
            .expect("summary.json parses");
    for field in [
        "scene",
        "version",
        "settings",
        "status",
        "steps",
        "substeps",
        "rows",
        "wall_time_s",
        "step_time_s",
        "time_per_substep_us",
        "median_primal_residual",
        "median_constraint_residual",
        "energy_initial_j",
        "energy_final_j",
        "files",
    ] {
        assert!(summary.get(field).is_some(), "summary.json has {field}");
    }
    assert_eq!(summary["scene"], "pendulum");
    assert_eq!(summary["status"], "completed");
    assert_eq!(summary["steps"], steps as u64);
    assert_eq!(summary["rows"], expected_rows as u64);
    assert_eq!(summary["settings"]["every"], every as u64);
    assert_eq!(summary["settings"]["seconds"], seconds);
    for f in [
        "wall_time_s",
        "step_time_s",
        "time_per_substep_us",
        "median_primal_residual",
        "median_constraint_residual",
    ] {
        let v = summary[f].as_f64().unwrap_or(-1.0);
        assert!(v.is_finite() && v >= 0.0, "{f} = {}", summary[f]);
    }
    assert!(summary["time_per_substep_us"].as_f64().unwrap() > 0.0);
    assert_eq!(summary["warnings"], Value::Array(vec![]), "no warnings");
    assert!(!text(&o.stderr).contains("warning"), "{}", text(&o.stderr));
    (res, states, summary)
}

macro_rules! combination {
    ($name:ident, $solver:literal, $rotation:literal, $scalar:literal) => {
        #[test]
        fn $name() {
            let (_, _, s) = check_run(
                &[
                    "--solver",
                    $solver,
                    "--rotation",
                    $rotation,
                    "--scalar",
                    $scalar,
                ],
                0.2,
                1e-3,
                1,
            );
            let set = &s["settings"];
            assert_eq!(
                (&set["solver"], &set["rotation"], &set["scalar"]),
                (
                    &Value::from($solver),
                    &Value::from($rotation),
                    &Value::from($scalar)
                )
            );
        }
    };
}

combination!(block_matrix_f64, "block", "matrix", "f64");
combination!(block_matrix_f32, "block", "matrix", "f32");
combination!(block_quaternion_f64, "block", "quaternion", "f64");
combination!(block_quaternion_f32, "block", "quaternion", "f32");
combination!(rows_matrix_f64, "rows", "matrix", "f64");
combination!(rows_matrix_f32, "rows", "matrix", "f32");
combination!(rows_quaternion_f64, "rows", "quaternion", "f64");
combination!(rows_quaternion_f32, "rows", "quaternion", "f32");

#[test]
fn every_thins_the_rows_but_not_the_medians() {
    let (res7, _, s7) = check_run(&[], 0.2, 1e-3, 7);
    assert_eq!(res7.len(), 28);
    let (res1, _, s1) = check_run(&[], 0.2, 1e-3, 1);
    // Row k of the thinned run is row 7k+6 of the full one, to the digit.
    for (k, r) in res7.iter().enumerate() {
        assert_eq!(r, &res1[7 * k + 6]);
    }
    assert_eq!(s7["median_primal_residual"], s1["median_primal_residual"]);
    assert_eq!(
        s7["median_constraint_residual"],
        s1["median_constraint_residual"]
    );
}

#[test]
fn options_reach_the_simulation() {
    let (_, _, s) = check_run(
        &["--substeps", "2", "--iterations", "3", "--angle", "30"],
        0.1,
        0.002,
        1,
    );
    assert_eq!(s["steps"], 50);
    assert_eq!(s["substeps"], 100);
    let set = &s["settings"];
    assert_eq!(set["dt"], 0.002);
    assert_eq!(set["substeps"], 2);
    assert_eq!(set["iterations"], 3);
    assert_eq!(set["angle_deg"], 30.0);
}

#[test]
fn no_arguments_runs_the_default_scene() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(&[], tmp.path());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    assert!(stdout.contains("out/pendulum"), "says where: {stdout}");
    let out = tmp.path().join("out/pendulum");
    assert_eq!(listing(&out), FILES);
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let set = &summary["settings"];
    assert_eq!(set["seconds"], 10.0);
    assert_eq!(set["dt"], 0.001);
    assert_eq!(set["solver"], "block");
    assert_eq!(set["rotation"], "matrix");
    assert_eq!(set["scalar"], "f64");
    assert_eq!(set["angle_deg"], 80.0);
    assert_eq!(summary["rows"], 10_000);
}

#[test]
fn rerun_replaces_outputs_and_leaves_no_temporaries() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let o = out.to_str().unwrap();
    for seconds in ["0.05", "0.02"] {
        let r = run(&["--seconds", seconds, "--out", o], tmp.path());
        assert!(r.status.success(), "{}", text(&r.stderr));
    }
    assert_eq!(listing(&out), FILES);
    let (_, rows) = read_csv(&out.join("residuals.csv"));
    assert_eq!(rows.len(), 20);
}

/// Runs with bad input into `out`; asserts a clean failure that names `option` and
/// that nothing was written.
fn check_rejected(args: &[&str], option: &str, out: &Path, cwd: &Path) {
    let before = listing(out);
    let o = run(args, cwd);
    let stderr = text(&o.stderr);
    assert!(!o.status.success(), "{args:?} should fail");
    assert_eq!(o.status.code(), Some(2), "{args:?}: usage error exit code");
    assert!(
        stderr.contains(option),
        "{args:?}: message names {option}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{args:?}: no panic: {stderr}");
    assert_eq!(listing(out), before, "{args:?}: nothing written");
    assert!(
        listing(cwd).iter().all(|n| n != "out"),
        "{args:?}: no default dir"
    );
}

#[test]
fn bad_input_fails_cleanly_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("empty");
    fs::create_dir(&out).unwrap();
    let o = out.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--seconds", "-1"], "--seconds"),
        (&["--seconds", "0"], "--seconds"),
        (&["--seconds", "NaN"], "--seconds"),
        (&["--seconds", "inf"], "--seconds"),
        (&["--seconds", "ten"], "--seconds"),
        (&["--dt", "0"], "--dt"),
        (&["--dt", "-0.001"], "--dt"),
        (&["--dt", "nan"], "--dt"),
        (&["--dt", "2", "--seconds", "1"], "--dt"),
        (&["--dt", "1e-300"], "--seconds"),
        (&["--every", "0"], "--every"),
        (&["--every", "-3"], "--every"),
        (&["--substeps", "0"], "--substeps"),
        (&["--iterations", "0"], "--iterations"),
        (&["--angle", "NaN"], "--angle"),
        (&["--angle", "1e160"], "--angle"),
        (&["--substeps", "99999999999999999999999"], "--substeps"),
        (
            &["--substeps", "1000000000", "--seconds", "0.001"],
            "--substeps",
        ),
        (&["--iterations", "4000000000"], "--iterations"),
        (&["--seconds", "100000", "--every", "10"], "--seconds"),
        (&["--seconds", "10000"], "--every"),
        (&["--solver", "cg"], "--solver"),
        (&["--rotation", "euler"], "--rotation"),
        (&["--scalar", "f16"], "--scalar"),
        (&["--out", ""], "--out"),
    ];
    for (bad, option) in cases {
        for sub in [true, false] {
            let mut args: Vec<&str> = if sub { vec!["pendulum"] } else { vec![] };
            args.extend_from_slice(bad);
            if !bad.contains(&"--out") {
                args.extend_from_slice(&["--out", o]);
            }
            check_rejected(&args, option, &out, tmp.path());
        }
    }
}

#[test]
fn out_that_is_a_file_is_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    fs::write(&file, "keep me").unwrap();
    let f = file.to_str().unwrap();
    check_rejected(
        &["--seconds", "0.01", "--out", f],
        "--out",
        tmp.path(),
        tmp.path(),
    );
    let sub = file.join("sub");
    let s = sub.to_str().unwrap();
    check_rejected(
        &["--seconds", "0.01", "--out", s],
        "--out",
        tmp.path(),
        tmp.path(),
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), "keep me");
}

#[cfg(target_os = "linux")]
#[test]
fn unwritable_out_is_rejected() {
    // /proc accepts no new files, not even from root.
    let tmp = tempfile::tempdir().unwrap();
    let o = run(&["--seconds", "0.01", "--out", "/proc"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("--out") && stderr.contains("/proc"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn help_lists_the_options() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(&["pendulum", "--help"], tmp.path());
    assert!(o.status.success());
    let help = text(&o.stdout);
    for opt in [
        "--seconds",
        "--dt",
        "--substeps",
        "--iterations",
        "--solver",
        "--rotation",
        "--scalar",
        "--angle",
        "--every",
        "--out",
    ] {
        assert!(help.contains(opt), "help mentions {opt}");
    }
    assert!(listing(tmp.path()).is_empty(), "--help writes nothing");
}

/// Runs `args` (which must be rejected) with `--out` a directory that does not exist;
/// returns stderr after asserting exit 2, no panic, and that the directory (and the
/// default one) was not created.
fn check_rejected_creates_nothing(args: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("new/out");
    let mut all = args.to_vec();
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let o = run(&all, tmp.path());
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{all:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        !tmp.path().join("new").exists(),
        "{all:?} created the out dir"
    );
    assert!(listing(tmp.path()).is_empty(), "{all:?} wrote nothing");
    stderr
}

#[test]
fn work_cap_rejects_huge_substeps_and_iterations() {
    for args in [
        &["--substeps", "1000000000", "--seconds", "0.001"][..],
        &["--iterations", "4000000000"][..],
        &[
            "--substeps",
            "1000",
            "--iterations",
            "1000",
            "--seconds",
            "1",
        ][..],
    ] {
        let stderr = check_rejected_creates_nothing(args);
        for opt in ["--substeps", "--iterations", "--seconds", "--dt"] {
            assert!(stderr.contains(opt), "{args:?}: names {opt}: {stderr}");
        }
    }
}

#[test]
fn huge_runs_are_rejected_before_allocating() {
    // Used to reserve ~3.4 GB up front and could abort with exit 134.
    let stderr = check_rejected_creates_nothing(&["--seconds", "100000", "--every", "10"]);
    assert!(
        stderr.contains("--seconds") && stderr.contains("steps"),
        "{stderr}"
    );
    let stderr = check_rejected_creates_nothing(&["--seconds", "10000"]);
    assert!(
        stderr.contains("--every") && stderr.contains("rows"),
        "{stderr}"
    );
}

#[test]
fn invalid_angle_creates_no_out_dir() {
    let stderr = check_rejected_creates_nothing(&["--angle", "1e160"]);
    assert!(stderr.contains("'--angle'"), "{stderr}");
}

#[test]
fn too_large_count_says_too_large() {
    for opt in ["--substeps", "--iterations", "--every"] {
        let stderr = check_rejected_creates_nothing(&[opt, "99999999999999999999999"]);
        assert!(
            stderr.contains(opt) && stderr.contains("too large"),
            "{opt}: {stderr}"
        );
        assert!(!stderr.contains("at least 1"), "{opt}: {stderr}");
    }
}

#[test]
fn failed_write_keeps_outputs_of_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("m");
    let o = out.to_str().unwrap();
    let first = run(&["--seconds", "1", "--out", o], tmp.path());
    assert!(first.status.success(), "{}", text(&first.stderr));
    let before: Vec<Vec<u8>> = ["residuals.csv", "summary.json"]
        .iter()
        .map(|f| fs::read(out.join(f)).unwrap())
        .collect();
    fs::remove_file(out.join("states.csv")).unwrap();
    fs::create_dir(out.join("states.csv")).unwrap();
    let second = run(&["--seconds", "0.5", "--out", o], tmp.path());
    let stderr = text(&second.stderr);
    assert!(!second.status.success(), "{stderr}");
    assert!(
        stderr.contains("states.csv"),
        "names the obstacle: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let after: Vec<Vec<u8>> = ["residuals.csv", "summary.json"]
        .iter()
        .map(|f| fs::read(out.join(f)).unwrap())
        .collect();
    assert_eq!(after, before, "the files are still all from the first run");
    assert_eq!(listing(&out), FILES, "no temporary files left");
}

#[test]
fn times_print_without_drift() {
    for scalar in ["f64", "f32"] {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("o");
        let args = [
            "--seconds",
            "1",
            "--scalar",
            scalar,
            "--out",
            out.to_str().unwrap(),
        ];
        let o = run(&args, tmp.path());
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(
            text(&o.stdout).contains(" 1 s simulated of 1 s"),
            "{}",
            text(&o.stdout)
        );
        for file in ["residuals.csv", "states.csv"] {
            let csv = fs::read_to_string(out.join(file)).unwrap();
            let ts: Vec<&str> = csv
                .lines()
                .skip(1)
                .map(|l| l.split(',').next().unwrap())
                .collect();
            assert_eq!(ts.len(), 1000);
            assert_eq!(
                (ts[8], ts[299], ts[899]),
                ("0.009", "0.3", "0.9"),
                "{scalar}"
            );
            for (k, t) in ts.iter().enumerate() {
                let decimals = t.split('.').nth(1).map_or(0, str::len);
                assert!(decimals <= 3, "{scalar} {file} row {k}: t = {t}");
            }
        }
        let summary: Value =
            serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["simulated_time_s"], 1.0);
    }
    // ⌈seconds/dt⌉ steps; the last time is exact too.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let o = run(
        &["--seconds", "0.0105", "--out", out.to_str().unwrap()],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["steps"], 11);
    assert_eq!(summary["simulated_time_s"], 0.011);
}

#[test]
fn meaningless_run_warns_but_succeeds() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let o = run(
        &[
            "--seconds",
            "1000",
            "--dt",
            "100",
            "--out",
            out.to_str().unwrap(),
        ],
        tmp.path(),
    );
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "exit code stays 0: {stderr}");
    assert!(stderr.contains("warning:"), "{stderr}");
    assert!(
        stderr.contains("constraint residual") && stderr.contains("reach"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--dt") && stderr.contains("--substeps"),
        "{stderr}"
    );
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "completed");
    let w = summary["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 2, "{w:?}");
}
