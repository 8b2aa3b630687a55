//! Sweeps, emitted jobs, merging, and Ctrl-C, through the program.

use std::fs;
use std::process::Command;

use crate::cli_common;
use cli_common::run;

#[test]
fn sweep_runs_the_cartesian_product_and_merges_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &[
            "sweep",
            "pendulum",
            "--seconds",
            "0.2",
            "--set",
            "solver.dt=1e-3,5e-4",
            "--set",
            "solver.mode=block,rows",
            "--out",
            "s",
            "--jobs",
            "2",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for i in 0..4 {
        assert!(dir.path().join(format!("s/run_00{i}/states.csv")).is_file());
    }
    let csv = fs::read_to_string(dir.path().join("s/sweep.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5, "{csv}");
    assert!(
        lines[0].starts_with("dir,scene,run.duration,solver.dt,solver.mode,rotation"),
        "{}",
        lines[0]
    );
    assert!(
        lines[4].contains(",5e-4,rows,matrix,f64,completed,400,"),
        "{}",
        lines[4]
    );
    // Each run is the same as a single run with the same overrides.
    let single = run(
        &[
            "run",
            "pendulum",
            "--seconds",
            "0.2",
            "--set",
            "solver.dt=5e-4",
            "--set",
            "solver.mode=rows",
            "--out",
            "one",
        ],
        dir.path(),
    );
    assert!(single.status.success());
    assert_eq!(
        fs::read(dir.path().join("one/states.csv")).unwrap(),
        fs::read(dir.path().join("s/run_003/states.csv")).unwrap()
    );
}

/// Reported case: `--jobs 1000000` for a sweep of two runs started one thread per job
/// (15,638 threads after 10 minutes, no output). The pool is capped at the number of
/// runs, so this sweep takes as long as `--jobs 2` (well under the timeout of `run`).
#[test]
fn sweep_with_a_million_jobs_starts_only_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let start = std::time::Instant::now();
    let out = run(
        &[
            "sweep",
            "pendulum",
            "--seconds",
            "0.05",
            "--set",
            "solver.dt=1e-3,5e-4",
            "--jobs",
            "1000000",
            "--out",
            "s",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("s/sweep.csv").is_file());
    // Generous for a loaded CI machine: the two runs take milliseconds; the uncapped
    // pool took 7.9 s already for --jobs 2000.
    assert!(
        start.elapsed().as_secs_f64() < 60.0,
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn emitted_jobs_are_self_contained_and_merge() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &[
            "sweep",
            "pendulum",
            "--seconds",
            "0.1",
            "--set",
            "solver.substeps=1,2,3",
            "--emit-jobs",
            "jobs.txt",
            "--out",
            "j",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dir.path().join("j").exists(), "emitting jobs runs nothing");
    let jobs = fs::read_to_string(dir.path().join("jobs.txt")).unwrap();
    let lines: Vec<&str> = jobs.lines().collect();
    assert_eq!(lines.len(), 3);
    // Run every command from another directory, as a cluster node would.
    let elsewhere = tempfile::tempdir().unwrap();
    for l in &lines {
        let st = Command::new("sh")
            .args(["-c", l])
            .current_dir(elsewhere.path())
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "{l}: {}",
            String::from_utf8_lossy(&st.stderr)
        );
    }
    let merged = run(&["merge", "j", "--out", "m"], dir.path());
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    let csv = fs::read_to_string(dir.path().join("m/sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 4, "{csv}");
    // New-user finding: a folder named twice was merged twice ("8 runs merged" for 4).
    // Each run is merged once, and the repeat is reported.
    let twice = run(&["merge", "j", "j", "--out", "m3"], dir.path());
    assert!(twice.status.success());
    let csv3 = fs::read_to_string(dir.path().join("m3/sweep.csv")).unwrap();
    assert_eq!(csv3.lines().count(), 4, "each run merged once: {csv3}");
    assert!(String::from_utf8_lossy(&twice.stderr).contains("merged once"));
    // A folder with no run in it is skipped with a warning, and nothing to merge exits 2.
    fs::create_dir(dir.path().join("empty")).unwrap();
    let none = run(&["merge", "empty", "--out", "m2"], dir.path());
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no summary.json"));
}

#[test]
fn invalid_sweep_axes_exit_2_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec![
            "sweep",
            "pendulum",
            "--set",
            "solver.dt=1e-3,-1",
            "--out",
            "x",
        ],
        vec!["sweep", "pendulum", "--set", "solver.dt", "--out", "x"],
        vec![
            "sweep",
            "pendulum",
            "--set",
            "bodies.nope.mass=1,2",
            "--out",
            "x",
        ],
    ] {
        let out = run(&args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!dir.path().join("x").exists(), "{args:?}");
    }
}

/// Ctrl-C stops a run after the current step; the rows so far are written and the
/// summary says `interrupted` (exit 130).
#[cfg(unix)]
#[test]
fn interrupted_run_keeps_what_it_computed() {
    let dir = tempfile::tempdir().unwrap();
    let (out, summary) = cli_common::stopped_run(dir.path(), "i", "INT");
    assert_eq!(out.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&out.stdout).contains("interrupted"));
    assert_eq!(summary["status"], "interrupted");
    let rows = summary["rows"].as_u64().unwrap();
    assert!(rows > 0);
    let csv = fs::read_to_string(dir.path().join("i/residuals.csv")).unwrap();
    assert_eq!(csv.lines().count() as u64, rows + 1);
}

/// Review finding: a sweep with a diverging run exited 0.
#[test]
fn sweep_exit_code_reports_a_diverged_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &[
            "sweep",
            "pendulum",
            "--seconds",
            "0.01",
            "--scalar",
            "f32",
            "--set",
            "solver.gravity=[0,-9.81,0],[0,-1e30,0]",
            "--out",
            "s",
        ],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("s/sweep.csv").is_file());
}

/// Review finding: `merge` of folders with no run wrote an empty table and exited 2.
#[test]
fn merge_with_no_runs_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["merge", "nonexistent", "--out", "m"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.path().join("m").exists());
}

/// SIGTERM (what `timeout` and Slurm send) stops a run like Ctrl-C: rows kept, exit 130.
#[cfg(unix)]
#[test]
fn sigterm_keeps_what_it_computed() {
    let dir = tempfile::tempdir().unwrap();
    let (out, summary) = cli_common::stopped_run(dir.path(), "t", "TERM");
    assert_eq!(out.status.code(), Some(130));
    assert_eq!(summary["status"], "interrupted");
    assert!(summary["rows"].as_u64().unwrap() > 0);
}

/// Fresh-user finding: a second, smaller sweep into the same DIR merged the first
/// sweep's run_001 into its table ("2 runs merged" for a 1-run sweep).
#[test]
fn sweep_into_a_used_dir_merges_only_its_own_runs() {
    let dir = tempfile::tempdir().unwrap();
    let first = run(
        &[
            "sweep",
            "pendulum",
            "--seconds",
            "0.05",
            "--set",
            "solver.gravity=[0,-9.81,0],[0,-1.62,0]",
            "--out",
            "sw2",
        ],
        dir.path(),
    );
    assert!(first.status.success());
    let second = run(
        &["sweep", "pendulum", "--seconds", "0.05", "--out", "sw2"],
        dir.path(),
    );
    let stdout = String::from_utf8_lossy(&second.stdout);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{stderr}");
    assert!(stdout.contains("1 runs merged"), "{stdout}");
    assert!(
        stderr.contains("run_001") && stderr.contains("left alone"),
        "{stderr}"
    );
    // The old folder is kept, but not in the table.
    assert!(dir.path().join("sw2/run_001/summary.json").is_file());
    let csv = fs::read_to_string(dir.path().join("sw2/sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2, "{csv}");
    assert!(!csv.contains("run_001"), "{csv}");
    assert!(!csv.contains("gravity"), "{csv}");
}

/// Fresh-user finding: `--set solver.dt=1e-3,2e-3 --set solver.dt=5e-4` ran 5e-4
/// twice and labelled the rows 1e-3 and 2e-3. A repeated key is an error everywhere.
#[test]
fn repeated_set_key_exits_2_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec![
            "sweep",
            "pendulum",
            "--seconds",
            "0.1",
            "--set",
            "solver.dt=1e-3,2e-3",
            "--set",
            "solver.dt=5e-4",
            "--out",
            "x",
        ],
        vec![
            "sweep",
            "pendulum",
            "--seconds",
            "0.1",
            "--set",
            "run.duration=0.1,0.2",
            "--out",
            "x",
        ],
        vec![
            "run",
            "pendulum",
            "--seconds",
            "0.1",
            "--set",
            "solver.dt=1e-3",
            "--set",
            "solver.dt=5e-4",
            "--out",
            "x",
        ],
        vec![
            "run",
            "pendulum",
            "--set",
            "bodies[0].density=500",
            "--set",
            "bodies.link0.density=600",
            "--out",
            "x",
        ],
        vec![
            "compare",
            "pendulum",
            "--seconds",
            "0.1",
            "--set",
            "solver.dt=1e-3",
            "--set",
            "solver.dt=5e-4",
            "--out",
            "x",
        ],
    ] {
        let out = run(&args, dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("twice"), "{args:?}: {stderr}");
        let key = if args.contains(&"run.duration=0.1,0.2") {
            "--seconds 0.1"
        } else if args.contains(&"bodies[0].density=500") {
            "bodies.link0.density"
        } else {
            "solver.dt"
        };
        assert!(stderr.contains(key), "{args:?}: {stderr}");
        assert!(!dir.path().join("x").exists(), "{args:?}");
    }
}

/// New-user finding: `sweep.csv` carried float noise (`4.260059999999999` µs per
/// substep; an f32 run's residuals with f64 digits). Override values are written as
/// typed, numbers as the shortest text that reads back at the run's precision, and the
/// time per substep to the nanosecond.
#[test]
fn sweep_table_has_no_float_noise() {
    use lie_xpbd::sim::Scalar;
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &[
            "sweep",
            "pendulum",
            "--scalar",
            "f32",
            "--seconds",
            "0.03",
            "--set",
            "solver.dt=1e-3,0.0015",
            "--set",
            "bodies.link0.density=0.3e3",
            "--out",
            "s",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = fs::read_to_string(dir.path().join("s/sweep.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    assert_eq!(lines.len(), 3, "{csv}");
    for (line, dt) in lines[1..].iter().zip(["1e-3", "0.0015"]) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f[col("run.duration")], "0.03", "{line}");
        assert_eq!(f[col("solver.dt")], dt, "{line}");
        assert_eq!(f[col("bodies.link0.density")], "0.3e3", "{line}");
        assert_eq!(f[col("status")], "completed", "{line}");
        for name in [
            "median_primal_residual",
            "median_constraint_residual",
            "max_constraint_residual",
            "energy_change_fraction",
        ] {
            let text = f[col(name)];
            let x: f64 = text.parse().unwrap();
            assert_eq!(text, Scalar::F32.format(x), "{name} of {line}");
        }
        let micros = f[col("time_per_substep_us")];
        let decimals = micros.split_once('.').map_or(0, |(_, d)| d.len());
        assert!(decimals <= 3 && !micros.contains('e'), "{micros}");
    }
}
