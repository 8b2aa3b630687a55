//! The program end to end: `run` and `pendulum` share one path, bad input exits 2 with
//! nothing written, divergence exits 3 with the rows before it, check-jacobians and
//! compare work on the shipped scene.

use std::fs;

use crate::cli_common;
use cli_common::run;

fn scene_path() -> String {
    format!("{}/scenes/pendulum.toml", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn run_scene_file_and_pendulum_shortcut_write_identical_files() {
    let dir = tempfile::tempdir().unwrap();
    let a = run(
        &["run", &scene_path(), "--seconds", "1", "--out", "a"],
        dir.path(),
    );
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let b = run(&["pendulum", "--seconds", "1", "--out", "b"], dir.path());
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    for f in ["states.csv", "residuals.csv", "energy.csv", "lambda.csv"] {
        let x = fs::read(dir.path().join("a").join(f)).unwrap();
        let y = fs::read(dir.path().join("b").join(f)).unwrap();
        assert!(x == y, "{f} differs");
        // Header, the t = 0 row in the state files, then a row per step.
        let rows = if f == "states.csv" || f == "energy.csv" {
            1002
        } else {
            1001
        };
        assert_eq!(String::from_utf8_lossy(&x).lines().count(), rows, "{f}");
    }
    // The same run twice gives byte-identical files.
    let c = run(&["pendulum", "--seconds", "1", "--out", "c"], dir.path());
    assert!(c.status.success());
    assert_eq!(
        fs::read(dir.path().join("a/states.csv")).unwrap(),
        fs::read(dir.path().join("c/states.csv")).unwrap()
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("a/summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "completed");
    assert_eq!(summary["steps"], 1000);
    assert!(summary["median_constraint_residual"].as_f64().unwrap() < 1e-3);
    assert!(summary["energy_available_j"].as_f64().unwrap() > 300.0);
    // No temporary files are left behind.
    let left: Vec<_> = fs::read_dir(dir.path().join("a"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(left.is_empty());
}

#[test]
fn no_arguments_runs_the_pendulum_and_says_where_the_output_went() {
    let dir = tempfile::tempdir().unwrap();
    // The default is 10 s; a shorter check of the same path runs `pendulum` with no options.
    let out = run(&[], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Outputs written to out/pendulum"));
    for f in [
        "residuals.csv",
        "states.csv",
        "summary.json",
        "summary.md",
        "scene.toml",
    ] {
        assert!(dir.path().join("out/pendulum").join(f).is_file(), "{f}");
    }
}

#[test]
fn bad_scene_exits_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = format!(
        "{}/tests/scenes/bad/unknown_body.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = run(&["run", &bad, "--out", "x"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown_body.toml:9:") && err.contains("joints[0].body2"),
        "{err}"
    );
    assert!(!dir.path().join("x").exists());
    for args in [
        vec!["pendulum", "--set", "solver.dt=-1"],
        vec!["pendulum", "--seconds", "1e300", "--set", "solver.dt=1e-9"],
        vec!["pendulum", "--scalar", "f16"],
        vec!["run", "no-such-scene"],
        vec!["pendulum", "--scalar", "f32", "--set", "solver.dt=1e-50"],
    ] {
        let out = run(&args, dir.path());
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(!dir.path().join("out").exists());
}

#[test]
fn divergence_exits_3_and_keeps_the_rows_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &[
            "pendulum",
            "--scalar",
            "f32",
            "--set",
            "solver.dt=1e18",
            "--seconds",
            "1e19",
            "--out",
            "d",
        ],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("d/summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "diverged");
    assert!(summary["error"].as_str().unwrap().contains("step"));
}

#[test]
fn check_jacobians_passes_on_the_shipped_scene() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &["check-jacobians", &scene_path(), "--states", "20"],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for combo in [
        "| matrix | f64 |",
        "| matrix | f32 |",
        "| quaternion | f64 |",
        "| quaternion | f32 |",
    ] {
        assert!(text.contains(combo), "{combo} missing: {text}");
    }
    assert!(!text.contains("FAIL"));
}

/// New-user finding: `check-jacobians` failed every normed ("scalar" mode) joint and the
/// normed prescribed frame at the initial state, where the joints are satisfied and the
/// norms have their kink (C = 0, gradient undefined). Such states are now skipped like
/// the limits' kinks, and the random states pass.
#[test]
fn check_jacobians_skips_the_kink_of_scalar_mode_norms() {
    let dir = tempfile::tempdir().unwrap();
    for scene in ["pendulum", "rps"] {
        let out = run(
            &[
                "check-jacobians",
                scene,
                "--set",
                "solver.mode=scalar",
                "--states",
                "8",
            ],
            dir.path(),
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{scene}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!text.contains("FAIL"), "{scene}: {text}");
        assert!(
            text.contains("skipped"),
            "{scene}: the kink state is reported: {text}"
        );
    }
}

/// check-jacobians covers rods: the shear-locking cantilever's 3 Gauss points, in all
/// four combinations (`tests/rod/check_jacobians.rs` checks every shipped rod scene).
#[test]
fn check_jacobians_covers_rods() {
    let dir = tempfile::tempdir().unwrap();
    let scene = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/shear_locking.toml");
    let out = run(&["check-jacobians", scene, "--states", "2"], dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for combo in ["| matrix | f64 |", "| quaternion | f32 |"] {
        assert!(
            text.contains(&format!("| rod gauss point {combo} 3 |")),
            "{combo} missing: {text}"
        );
    }
    assert!(text.contains("All 12 constraint checks passed."), "{text}");
}

#[test]
fn compare_reports_representation_and_precision_differences() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &[
            "compare",
            "pendulum",
            "--set",
            "run.every=100",
            "--out",
            "c",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("f32 runs"), "{text}");
    let json: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("c/summary.json")).unwrap()).unwrap();
    let d = json["quaternion_f64_difference"]["position_m"]
        .as_f64()
        .unwrap();
    assert!(d < 1e-8, "{d}");
    assert!(dir.path().join("c/compare.csv").is_file());
}

/// New-user finding: `compare` exited 0 when its runs diverged, where `run` exits 3.
/// A link placed at 1e30 m makes the f32 runs diverge at once.
#[test]
fn compare_exits_3_when_a_run_diverges() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &[
            "compare",
            "pendulum",
            "--seconds",
            "0.01",
            "--set",
            "bodies.link0.position=[1e30,0,0]",
            "--out",
            "c",
        ],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("diverged at step"));
    assert!(dir.path().join("c/compare.csv").is_file());
}

/// Review finding: joints violated by the initial poses gave only "try a smaller dt".
#[test]
fn joints_violated_at_the_start_are_named_as_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &[
            "pendulum",
            "--seconds",
            "0.05",
            "--set",
            "bodies.link0.orientation={quaternion=[1,0,0,0]}",
            "--out",
            "v",
        ],
        dir.path(),
    );
    // The solver yanks the bodies together, opening the joints: exit 4.
    assert_eq!(out.status.code(), Some(4));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("before the first step") && err.contains("frame1/frame2"),
        "{err}"
    );
}

/// Review finding: a rod with a precurvature starts bent away from its rest shape, and
/// the run warned that "the initial poses do not satisfy the joints". Only hard rows
/// count as a mismatch; a deformed rod (or spring) is a state.
#[test]
fn precurved_rod_starts_without_a_joint_warning() {
    let dir = tempfile::tempdir().unwrap();
    let scene = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/cantilever.toml");
    let out = run(
        &[
            "run",
            scene,
            "--seconds",
            "0.01",
            "--set",
            "rods.beam.precurvature=[0.0, 2.0, 0.0]",
            // With one substep the released rod's first step leaves a constraint
            // residual of 2e-2 (the joints-apart warning, exit 4); four keep it small.
            "--set",
            "solver.substeps=4",
            "--out",
            "o",
        ],
        dir.path(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("before the first step"), "{err}");
    // The rod's bending energy is in the recorded energy from the first row on.
    let summary = fs::read_to_string(dir.path().join("o/summary.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert!(
        json["energy_initial_j"].as_f64().unwrap() > 0.0,
        "{summary}"
    );
}

/// Review finding: check-jacobians on a scene without constraints said "All 0 passed".
#[test]
fn check_jacobians_with_nothing_to_check_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("free.toml"),
        "version = 1\n[[bodies]]\nname = \"a\"\nmass = 1.0\ninertia = [1.0, 1.0, 1.0]\n",
    )
    .unwrap();
    let out = run(&["check-jacobians", "free.toml"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to check"));
}

/// Fresh-user finding: `check-jacobians pendulum --states 1000000` ignored Ctrl-C. It
/// now stops within a few states, prints the checks made so far and exits 130.
#[cfg(unix)]
#[test]
fn check_jacobians_stops_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let child = cli_common::bin()
        .args(["check-jacobians", "pendulum", "--states", "1000000"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1000));
    cli_common::signal(&child, "INT");
    let out = cli_common::wait_at_most(child, 5.0).expect("exits within 5 s of Ctrl-C");
    assert_eq!(out.status.code(), Some(130));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("| constraint type"), "{stdout}");
    assert!(!stdout.contains("passed"), "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
}

/// Fresh-user finding: a run whose single step takes minutes ignored SIGINT and
/// SIGTERM. The first signal stops after the current step; a second exits at once
/// (130), leaving its staged temporaries, which the next run into the folder deletes.
/// (The second comes 0.8 s after the first: closer ones count as one.) The long step:
/// a 200-element cubic rod at the bound of 10⁴ substeps per step (about a minute).
#[cfg(unix)]
#[test]
fn second_ctrl_c_exits_at_once_and_next_run_removes_temporaries() {
    let dir = tempfile::tempdir().unwrap();
    let scene = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/cantilever.toml");
    let child = cli_common::bin()
        .args([
            "run",
            scene,
            "--seconds",
            "0.01",
            "--set",
            "solver.substeps=1e4",
            "--set",
            "rods.beam.elements=200",
            "--out",
            "o",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1000));
    cli_common::signal(&child, "INT");
    std::thread::sleep(std::time::Duration::from_millis(800));
    cli_common::signal(&child, "TERM");
    let out = cli_common::wait_at_most(child, 5.0).expect("exits at once on the second signal");
    assert_eq!(out.status.code(), Some(130));
    let temporaries = |d: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(d)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.') && n.ends_with(".tmp"))
            .collect()
    };
    let o = dir.path().join("o");
    assert!(
        !temporaries(&o).is_empty(),
        "the aborted run leaves temporaries"
    );
    assert!(!o.join("summary.json").exists(), "nothing half-written");
    // A ParaView frame being written when killed leaves `vtk/.tmp-XXXXXX`.
    fs::create_dir_all(o.join("vtk")).unwrap();
    fs::write(o.join("vtk/.tmp-a1B2c3"), "partial").unwrap();
    fs::write(o.join("vtk/.tmp-keep"), "not ours").unwrap();
    let next = run(&["pendulum", "--seconds", "0.01", "--out", "o"], dir.path());
    assert!(next.status.success());
    assert!(temporaries(&o).is_empty(), "{:?}", temporaries(&o));
    assert!(!o.join("vtk/.tmp-a1B2c3").exists());
    assert!(
        o.join("vtk/.tmp-keep").exists(),
        "only names this program makes"
    );
}

/// Fresh-user finding: `--set rods.beam.elements=1e1` was rejected ("invalid type:
/// floating point 10.0, expected usize") while `solver.substeps=1e3` was accepted. Rod
/// counts take whole-number floats like every count; a fraction is still an error.
#[test]
fn rod_counts_accept_whole_number_floats() {
    let dir = tempfile::tempdir().unwrap();
    let scene = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/cantilever.toml");
    let out = run(
        &[
            "run",
            scene,
            "--seconds",
            "0.01",
            "--set",
            "rods.beam.elements=1e1",
            "--set",
            "rods.beam.order=2e0",
            "--out",
            "o",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let toml = fs::read_to_string(dir.path().join("o/scene.toml")).unwrap();
    assert!(toml.contains("elements = 10"), "{toml}");
    assert!(toml.contains("order = 2"), "{toml}");
    let bad = run(
        &[
            "run",
            scene,
            "--set",
            "rods.beam.elements=2.5",
            "--out",
            "b",
        ],
        dir.path(),
    );
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("rods[0].elements") && stderr.contains("2.5"),
        "{stderr}"
    );
    assert!(!dir.path().join("b").exists());
}

/// Fresh-user finding: `--set rods.beam.radius=1e300` blamed `rods[0].elements` for an
/// infinite body mass. The field that makes the mass or inertia non-finite is named.
#[test]
fn rod_section_overflow_names_radius_or_density() {
    let dir = tempfile::tempdir().unwrap();
    let scene = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/cantilever.toml");
    // The last: area and second moment finite, but ρ·π r⁴/4 overflows.
    for (set, field) in [
        (["rods.beam.radius=1e300", "run.every=1"], "rods[0].radius"),
        (["rods.beam.radius=1e-100", "run.every=1"], "rods[0].radius"),
        (
            ["rods.beam.radius=1e70", "rods.beam.material.density=1e100"],
            "rods[0].material.density",
        ),
    ] {
        let out = run(
            &["run", scene, "--set", set[0], "--set", set[1], "--out", "o"],
            dir.path(),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{set:?}: {stderr}");
        assert!(stderr.contains(&format!("{field}: ")), "{set:?}: {stderr}");
        assert!(!stderr.contains("elements"), "{set:?}: {stderr}");
        assert!(!dir.path().join("o").exists(), "{set:?}");
    }
}

/// `timeout -s INT` signals the program and its process group, so the program gets
/// the signal twice at once: that is one interrupt (rows kept, summary written, 130),
/// not the second that aborts.
#[cfg(unix)]
#[test]
fn two_signals_at_once_count_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let child = cli_common::bin()
        .args([
            "pendulum",
            "--seconds",
            "100000",
            "--set",
            "run.every=100",
            "--out",
            "o",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    cli_common::signal(&child, "INT");
    cli_common::signal(&child, "INT");
    let out = cli_common::wait_at_most(child, 10.0).expect("stops after the current step");
    assert_eq!(out.status.code(), Some(130));
    let summary = fs::read_to_string(dir.path().join("o/summary.json")).unwrap();
    assert!(summary.contains("\"interrupted\""), "{summary}");
}

/// New-user finding: `--seconds NaN` and `--seconds 1e400` gave a raw parse message
/// ("invalid type: string \"NaN\", expected f64"), and `--seconds -1` was taken for an
/// unknown flag. Every numeric option of `run`, `compare`, `sweep`, `check-jacobians`
/// and `reproduce` now reads negative numbers and says what is allowed, naming the
/// option: exit 2, nothing written.
#[test]
fn bad_numeric_options_are_named_with_what_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let positive = "must be positive and finite";
    let whole = "must be a whole number >= 0";
    for (args, option, says) in [
        (
            vec!["run", "pendulum", "--seconds", "NaN"],
            "--seconds",
            positive,
        ),
        (
            vec!["pendulum", "--seconds", "1e400"],
            "--seconds",
            positive,
        ),
        (vec!["pendulum", "--seconds", "-1"], "--seconds", positive),
        (vec!["pendulum", "--seconds", "0"], "--seconds", positive),
        (
            vec!["pendulum", "--seconds", "ten"],
            "--seconds",
            "number of seconds",
        ),
        (
            vec!["compare", "pendulum", "--seconds", "-1"],
            "--seconds",
            positive,
        ),
        (
            vec![
                "sweep",
                "pendulum",
                "--seconds",
                "inf",
                "--set",
                "solver.dt=1e-3",
            ],
            "--seconds",
            positive,
        ),
        (
            vec![
                "sweep",
                "pendulum",
                "--jobs",
                "-1",
                "--set",
                "solver.dt=1e-3",
            ],
            "--jobs",
            whole,
        ),
        (vec!["check-jacobians", "--states", "-1"], "--states", whole),
        (
            vec!["check-jacobians", "--states", "NaN"],
            "--states",
            whole,
        ),
        (vec!["check-jacobians", "--seed", "-1"], "--seed", whole),
        (
            vec!["check-jacobians", "--seed", "99999999999999999999"],
            "--seed",
            "must be at most",
        ),
        (
            vec!["reproduce", "figure11", "--seconds", "-1"],
            "--seconds",
            positive,
        ),
        (
            vec!["reproduce", "rigid", "--rps-seconds", "-2"],
            "--rps-seconds",
            positive,
        ),
        (
            vec!["reproduce", "rigid", "--pendulum-seconds", "1e400"],
            "--pendulum-seconds",
            positive,
        ),
        (
            vec!["reproduce", "cantilever", "--reference-elements", "-1"],
            "--reference-elements",
            whole,
        ),
    ] {
        let mut full = args.clone();
        full.extend(["--out", "x"]);
        if args[0] == "check-jacobians" {
            full.truncate(args.len());
        }
        let out = run(&full, dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("'{option} <")) && stderr.contains(says),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("expected f64"), "{args:?}: {stderr}");
        assert!(!dir.path().join("x").exists(), "{args:?}");
    }
    assert!(!dir.path().join("out").exists());
    // A number TOML would not read as typed (`.05`) runs with its value.
    let out = run(&["pendulum", "--seconds", ".05", "--out", "p"], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let toml = fs::read_to_string(dir.path().join("p/scene.toml")).unwrap();
    assert!(toml.contains("duration = 0.05"), "{toml}");
}

/// New-user finding: the warnings of a run given `--seconds 0.5` blamed
/// `--set run.duration=0.5`, an option the user never typed. They name `--seconds`, in
/// `run` and in the runs of a `sweep`, on stderr and in the summaries.
#[test]
fn warnings_name_seconds_as_given() {
    let dir = tempfile::tempdir().unwrap();
    // Δt = 0.05 s lets the pendulum's joints come apart: a warning naming the settings.
    let out = run(
        &[
            "pendulum",
            "--seconds",
            "0.5",
            "--set",
            "solver.dt=0.05",
            "--out",
            "w",
        ],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("joints came apart")
            && stderr.contains("with --seconds 0.5, --set solver.dt=0.05"),
        "{stderr}"
    );
    let md = fs::read_to_string(dir.path().join("w/summary.md")).unwrap();
    assert!(md.contains("with --seconds 0.5,"), "{md}");
    let sweep = run(
        &[
            "sweep",
            "pendulum",
            "--seconds",
            "0.5",
            "--set",
            "solver.dt=0.05",
            "--out",
            "s",
        ],
        dir.path(),
    );
    let summary = fs::read_to_string(dir.path().join("s/run_000/summary.json"))
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&sweep.stderr)));
    assert!(
        summary.contains("with --seconds 0.5, --set solver.dt=0.05"),
        "{summary}"
    );
    for text in [&stderr.to_string(), &md, &summary] {
        assert!(!text.contains("--set run.duration"), "{text}");
    }
}

/// New-user finding: compliance 1e-14 on the pendulum's pivot reported 4.9e4 J of
/// elastic energy after 1 s (363 J available): (36) ½C²/α of a stiff row that one
/// iteration leaves unconverged. The energy warning blamed f32 resolution; it now names
/// the elastic energy of stiff compliant rows, in f64 and f32.
#[test]
fn energy_warning_names_stiff_compliant_rows() {
    let dir = tempfile::tempdir().unwrap();
    for scalar in ["f64", "f32"] {
        let out = run(
            &[
                "pendulum",
                "--seconds",
                "1",
                "--set",
                "joints.pivot.compliance=1e-14",
                "--scalar",
                scalar,
                "--out",
                scalar,
            ],
            dir.path(),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("the total energy rose")
                && stderr.contains("elastic energy (36)")
                && stderr.contains("make such rows hard")
                && !stderr.contains("f32 resolution"),
            "{stderr}"
        );
    }
}

/// New-user finding: `solver.substeps` had no bound, so one step could run for hours
/// (`1e7` substeps of the cantilever: about half an hour) and Ctrl-C, honoured between
/// steps, could not stop it. The value is rejected, naming the key (exit 2); at the
/// bound a step of the cantilever takes about a second, and Ctrl-C during it stops the
/// run when that step ends, with its outputs written (exit 130).
#[cfg(unix)]
#[test]
fn substeps_are_bounded_and_ctrl_c_ends_a_long_step() {
    let dir = tempfile::tempdir().unwrap();
    let scene = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/cantilever.toml");
    let out = run(
        &["run", scene, "--set", "solver.substeps=1e7", "--out", "b"],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("solver.substeps: substeps must be at most 10000")
            && stderr.contains("(set by --set solver.substeps=1e7)"),
        "{stderr}"
    );
    assert!(!dir.path().join("b").exists());
    let child = cli_common::bin()
        .args([
            "run",
            scene,
            "--seconds",
            "100",
            "--set",
            "solver.substeps=1e4",
            "--out",
            "o",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    cli_common::signal(&child, "INT");
    let out = cli_common::wait_at_most(child, 60.0).expect("stops when the step ends");
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("o/summary.json")).unwrap()).unwrap();
    assert_eq!(json["status"], "interrupted", "{json}");
    assert_eq!(json["settings"]["substeps"], 10000, "{json}");
    assert!(json["steps"].as_u64().unwrap() < json["settings"]["steps_planned"].as_u64().unwrap());
}

/// New-user finding: a run whose joints came apart (the summary warns "joints came
/// apart") exited 0, so scripts took it for a good run. It exits 4, with every output
/// written; a sweep with such a run exits 4 too, unless a run did worse (diverged: 3).
#[test]
fn joints_coming_apart_exits_4_with_all_outputs() {
    let dir = tempfile::tempdir().unwrap();
    // Δt = 0.05 s: the pendulum's joints open by centimetres.
    let out = run(
        &[
            "pendulum",
            "--seconds",
            "0.5",
            "--set",
            "solver.dt=0.05",
            "--out",
            "a",
        ],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("joints came apart"), "{stderr}");
    let json: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("a/summary.json")).unwrap()).unwrap();
    assert_eq!(json["status"], "completed", "{json}");
    assert_eq!(json["joints_came_apart"], true, "{json}");
    for f in json["files"].as_array().unwrap() {
        let f = f.as_str().unwrap();
        assert!(dir.path().join("a").join(f).is_file(), "{f} missing");
    }
    assert_eq!(
        fs::read_to_string(dir.path().join("a/states.csv"))
            .unwrap()
            .lines()
            .count(),
        12
    );
    // The same scene at the shipped Δt keeps its joints: exit 0, flag false.
    let good = run(&["pendulum", "--seconds", "0.5", "--out", "g"], dir.path());
    assert_eq!(good.status.code(), Some(0));
    let json: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("g/summary.json")).unwrap()).unwrap();
    assert_eq!(json["joints_came_apart"], false, "{json}");
    // A sweep: 4 if a run came apart and none did worse; 3 if one also diverged.
    for (gravity, code) in [
        ("[0,-9.81,0],[0,-1.62,0]", 4),
        ("[0,-9.81,0],[0,-1e30,0]", 3),
    ] {
        let out = run(
            &[
                "sweep",
                "pendulum",
                "--scalar",
                "f32",
                "--seconds",
                "0.5",
                "--set",
                "solver.dt=0.05",
                "--set",
                &format!("solver.gravity={gravity}"),
                "--out",
                "s",
            ],
            dir.path(),
        );
        assert_eq!(
            out.status.code(),
            Some(code),
            "{gravity}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(dir.path().join("s/sweep.csv").is_file());
    }
}

/// A closed stdout (`lie-xpbd ... | head -1`) does not panic the program (it exited 101
/// with "failed printing to stdout: Broken pipe"): the run completes, writes its outputs
/// and exits with its own code.
#[cfg(unix)]
#[test]
fn closed_stdout_does_not_panic() {
    use std::process::Stdio;
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        vec!["run", "pendulum", "--seconds", "0.05", "--out", "o"],
        vec!["check-jacobians", "pendulum", "--states", "1"],
    ] {
        let mut child = cli_common::bin()
            .args(&args)
            .current_dir(tmp.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before the program writes anything.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    assert!(tmp.path().join("o/summary.json").exists());
}

/// check-jacobians on correct joints that start where their rows are not
/// differentiable (regression: it reported "analytic ±1, finite difference 0" FAILs): a
/// spherical swing limit at zero swing, revolute, twist and prismatic limits at the
/// middle of their ranges, a revolute motor (checked within a substep, so it has its
/// start). Those states are skipped and counted; everything else is checked and passes.
#[test]
fn check_jacobians_skips_kinks_and_checks_motors() {
    let dir = tempfile::tempdir().unwrap();
    let scene = format!(
        "{}/tests/scenes/every_joint_kind_at_rest.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = run(&["check-jacobians", &scene, "--states", "20"], dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for kind in [
        "| revolute_motor | matrix | f64 |",
        "| spherical_swing_limit | quaternion | f32 |",
        "| revolute_limit | matrix | f64 |",
        "| prismatic_limit | quaternion | f64 |",
        "| spherical_twist_limit | matrix | f32 |",
    ] {
        assert!(text.contains(kind), "{kind} missing: {text}");
    }
    assert!(!text.contains("FAIL"), "{text}");
    assert!(
        text.contains("skipped where the constraint is not differentiable"),
        "{text}"
    );
}

/// A bob hung from a rod's tip by a limited revolute joint: the rod's compliant rows end
/// steps far from balance (constraint residual ~2.7) while the joint holds (~4e-4 m).
/// Regression: this exited 4 ("the joints came apart"); now it warns about the
/// compliant rows, exits 0 and reports `max_joint_violation`.
#[test]
fn rod_residual_is_not_reported_as_joints_coming_apart() {
    let dir = tempfile::tempdir().unwrap();
    let scene = format!(
        "{}/tests/scenes/rod_tip_bob_with_limit.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = run(&["run", &scene, "--out", "o"], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("came apart"), "{stderr}");
    assert!(
        stderr.contains("while the joints' hard rows hold"),
        "{stderr}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("o/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["joints_came_apart"], false);
    let v = summary["max_joint_violation"].as_f64().unwrap();
    assert!(v > 0.0 && v < 1e-2, "{v}");
    assert!(summary["max_constraint_residual"].as_f64().unwrap() > 1e-2);
}

/// A second run into the same folder leaves only its own files (regression: the first
/// run's velocities.csv and vtk frames stayed next to the second run's files).
#[test]
fn second_run_into_a_folder_removes_the_first_runs_leftovers() {
    let dir = tempfile::tempdir().unwrap();
    let first = run(
        &[
            "run",
            "pendulum",
            "--seconds",
            "0.02",
            "--vtk",
            "--set",
            "run.record=[\"residuals\",\"velocities\"]",
            "--set",
            "run.every=1",
            "--out",
            "d",
        ],
        dir.path(),
    );
    assert!(first.status.success());
    let d = dir.path().join("d");
    std::fs::write(d.join("notes.txt"), "mine").unwrap();
    assert!(d.join("velocities.csv").is_file() && d.join("vtk/frame_000019.vtp").is_file());
    let second = run(
        &[
            "run",
            "pendulum",
            "--seconds",
            "0.01",
            "--vtk",
            "--set",
            "run.every=1",
            "--out",
            "d",
        ],
        dir.path(),
    );
    assert!(second.status.success());
    assert!(
        !d.join("velocities.csv").exists(),
        "stale velocities.csv kept"
    );
    // Frames 0 (t = 0) to 10.
    assert!(d.join("vtk/frame_000010.vtp").is_file());
    assert!(
        !d.join("vtk/frame_000011.vtp").exists(),
        "stale frames kept"
    );
    assert!(d.join("vtk/frames.pvd").is_file());
    assert_eq!(
        std::fs::read_to_string(d.join("notes.txt")).unwrap(),
        "mine"
    );
    // Without --vtk the frames of the earlier runs go too.
    let third = run(
        &["run", "pendulum", "--seconds", "0.01", "--out", "d"],
        dir.path(),
    );
    assert!(third.status.success());
    assert!(!d.join("vtk/frame_000000.vtp").exists() && !d.join("vtk/frames.pvd").exists());
    // New-user finding: an empty vtk/ was left behind; the emptied folder goes too.
    assert!(!d.join("vtk").exists(), "empty vtk/ left");
}

/// New-user finding: a run into a folder that no run had written deleted the user's own
/// files that merely had a run file's name (`states.csv`, `lambda.csv`, a
/// `vtk/frame_000001.vtp`). Only files an earlier run's summary lists are removed.
#[test]
fn run_keeps_a_users_own_files_of_run_file_names() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("own");
    std::fs::create_dir_all(d.join("vtk")).unwrap();
    for name in [
        "states.csv",
        "lambda.csv",
        "velocities.csv",
        "vtk/frame_000001.vtp",
    ] {
        std::fs::write(d.join(name), "my,own,data\n1,2,3\n").unwrap();
    }
    let out = run(
        &[
            "run",
            "pendulum",
            "--seconds",
            "0.01",
            "--set",
            "run.record=[\"residuals\"]",
            "--out",
            "own",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in [
        "states.csv",
        "lambda.csv",
        "velocities.csv",
        "vtk/frame_000001.vtp",
    ] {
        assert_eq!(
            std::fs::read_to_string(d.join(name)).unwrap(),
            "my,own,data\n1,2,3\n",
            "{name} was not the run's and must be kept"
        );
    }
    assert!(d.join("residuals.csv").is_file());
}

/// Review finding: the CSV files had no t = 0 row, and the final state was dropped when
/// `run.every` does not divide the step count. The state files now start at t = 0 and
/// every file ends with the last step (10 steps, a row every 4: after 4, 8 and 10).
#[test]
fn csv_files_start_at_t0_and_end_with_the_last_step() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &[
            "run",
            "pendulum",
            "--seconds",
            "0.01",
            "--vtk",
            "--set",
            "run.every=4",
            "--set",
            "run.record=[\"residuals\",\"energy\",\"poses\",\"velocities\",\"lambda\"]",
            "--out",
            "e",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let times = |f: &str| -> Vec<String> {
        fs::read_to_string(dir.path().join("e").join(f))
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.split(',').next().unwrap().to_string())
            .collect()
    };
    for f in ["states.csv", "energy.csv", "velocities.csv"] {
        assert_eq!(times(f), ["0", "0.004", "0.008", "0.01"], "{f}");
    }
    for f in ["residuals.csv", "lambda.csv"] {
        assert_eq!(times(f), ["0.004", "0.008", "0.01"], "{f}");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("e/summary.json")).unwrap()).unwrap();
    assert_eq!(json["rows"], 3, "{json}");
    // The t = 0 row is the scene's initial pose (link0 at scenes/pendulum.toml's
    // position, read back exactly).
    let states = fs::read_to_string(dir.path().join("e/states.csv")).unwrap();
    let first: Vec<f64> = states
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(first[1..4], [0.492403876506104, -0.08682408883346521, 0.0]);
    // ParaView frames: t = 0, after 4 and 8 steps, and the last.
    for k in 0..4 {
        assert!(
            dir.path().join(format!("e/vtk/frame_{k:06}.vtp")).is_file(),
            "frame {k}"
        );
    }
    assert!(!dir.path().join("e/vtk/frame_000004.vtp").exists());
}

/// Review finding: check-jacobians had no `--set`, so a scene variant had to be copied
/// to a file to be checked. It takes the same overrides as `run`; a bad one exits 2.
#[test]
fn check_jacobians_takes_set_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let ok = run(
        &[
            "check-jacobians",
            "pendulum",
            "--states",
            "3",
            "--set",
            "joints.hinge1.type=\"spherical\"",
        ],
        dir.path(),
    );
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(stdout.contains("spherical"), "{stdout}");
    let bad = run(
        &["check-jacobians", "pendulum", "--set", "solver.dt=-1"],
        dir.path(),
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("solver.dt"));
}

/// New-user finding: `--set $'solver.dt=2e-3\nsubsteps=3'` exited 0 with the second
/// line dropped, and `--set $'solver.dt=1e-3\n[foo]\nx=1'` was accepted. A `--set`
/// value must be one TOML value: exit 2, naming the argument, nothing written.
#[test]
fn set_value_with_a_newline_exits_2_and_names_the_set_argument() {
    let dir = tempfile::tempdir().unwrap();
    for set in ["solver.dt=2e-3\nsubsteps=3", "solver.dt=1e-3\n[foo]\nx=1"] {
        let out = run(&["pendulum", "--set", set, "--out", "o"], dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{set:?}: {stderr}");
        assert!(
            stderr.contains("--set solver.dt=") && stderr.contains("a single TOML value"),
            "{set:?}: {stderr}"
        );
        assert!(!dir.path().join("o").exists(), "{set:?}");
    }
}

/// New-user finding: `lie-xpbd run /dev/zero` read until the out-of-memory killer
/// stopped it. Reading stops past 16 MiB: exit 2, naming the file and the limit.
#[test]
fn run_scene_file_larger_than_16_mib_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.toml");
    let f = fs::File::create(&huge).unwrap();
    f.set_len(lie_xpbd::scene::MAX_SCENE_FILE_BYTES + 1)
        .unwrap();
    drop(f);
    let mut files = vec![huge.display().to_string()];
    if cfg!(unix) && std::path::Path::new("/dev/zero").exists() {
        files.push("/dev/zero".into());
    }
    for file in &files {
        let out = run(&["run", file, "--out", "o"], dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {stderr}");
        assert!(
            stderr.contains(file.as_str())
                && stderr.contains("is larger than 16777216 bytes (16 MiB)"),
            "{file}: {stderr}"
        );
        assert!(!dir.path().join("o").exists(), "{file}");
    }
}

/// New-user finding: after a failed write (disk full) the program printed a summary
/// with `energy initial → final, J | 0.000000 → 0.000000`, `rows per file 0` and a list
/// of files that did not exist. It now prints only the error (exit 1). The disk is
/// made "full" with a file-size limit (`ulimit -f`, SIGXFSZ ignored so that a write
/// past it fails with EFBIG rather than killing the program).
#[cfg(unix)]
#[test]
fn failed_write_prints_only_the_error_not_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            "trap '' XFSZ; ulimit -f 64 && exec \"$0\" \"$@\"",
            env!("CARGO_BIN_EXE_lie-xpbd"),
            "pendulum",
            "--seconds",
            "1",
            "--out",
            "o",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("error: the outputs could not be written"),
        "{stderr}"
    );
    for claim in [
        "energy initial",
        "rows per file",
        "Files",
        "Outputs written",
    ] {
        assert!(!stdout.contains(claim), "'{claim}' printed: {stdout}");
    }
    for f in ["states.csv", "summary.json", "summary.md", "scene.toml"] {
        assert!(!dir.path().join("o").join(f).exists(), "{f}");
    }
}
