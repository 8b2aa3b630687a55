//! The comparison study (`lie_xpbd::pipeline::compare`): representations and scalars
//! side by side on the triple pendulum, its CSV, charts and summaries, whole-or-nothing
//! outputs, and runs that diverge.
#![cfg(feature = "cli")]

use lie_xpbd::pipeline::compare::{
    columns, compare, compare_with_progress, CompareError, CompareOptions, RunKey, CSV_FILE,
    POSITION_PNG, REFERENCE, ROTATION_PNG, SUMMARY_JSON, SUMMARY_MD,
};
use lie_xpbd::pipeline::files::OutputError;
use lie_xpbd::pipeline::plot::{HEIGHT, WIDTH};
use lie_xpbd::pipeline::run::RunStatus;
use lie_xpbd::scene::Scene;
use lie_xpbd::sim::{Rotation, Scalar};
use std::fs;
use std::ops::ControlFlow;
use std::path::Path;

type R<X = ()> = Result<X, Box<dyn std::error::Error>>;

fn pendulum() -> R<Scene> {
    Ok(Scene::from_toml(
        lie_xpbd::scenes::pendulum::SCENE_TOML,
        "pendulum.toml",
    )?)
}

fn entries(dir: &Path) -> R<Vec<String>> {
    let mut names = fs::read_dir(dir)?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<Vec<_>, _>>()?;
    names.sort();
    Ok(names)
}

/// Every file of a successful study, sorted by name.
const ALL_FILES: [&str; 5] = [
    CSV_FILE,
    POSITION_PNG,
    ROTATION_PNG,
    SUMMARY_JSON,
    SUMMARY_MD,
];

/// The PNG decodes to a chart of the plot size with at least `min_coloured` pixels in
/// colour (curves, legend; the axes and text are grey or black).
fn check_png(path: &Path, min_coloured: usize) -> R {
    let img = image::open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .to_rgb8();
    assert_eq!(img.dimensions(), (WIDTH, HEIGHT), "{}", path.display());
    let coloured = img
        .pixels()
        .filter(|p| {
            let [r, g, b] = p.0;
            r.max(g).max(b) - r.min(g).min(b) > 60
        })
        .count();
    assert!(
        coloured >= min_coloured,
        "{}: {coloured} coloured pixels",
        path.display()
    );
    Ok(())
}

const QUATERNION_F64: RunKey = RunKey {
    rotation: Rotation::Quaternion,
    scalar: Scalar::F64,
};

/// The 10 s pendulum in all four combinations: f64 quaternions match f64 matrices to
/// below 1e-8 m, the f32 drift is reported and finite, and the CSV has one row every
/// 10 steps.
#[test]
fn pendulum_10s_all_combinations() -> R {
    let mut scene = pendulum()?;
    scene.set("run.every", "10")?;
    scene.set("run.duration", "10.0")?;
    let dir = tempfile::tempdir()?;
    let report = compare(&scene, &CompareOptions::default(), dir.path())?;

    assert_eq!(report.steps, 10_000);
    assert_eq!(report.rows, 1000);
    assert_eq!(report.bodies_compared, 3);
    assert!(!report.reference_added);
    assert_eq!(report.runs.len(), 4);
    assert!(report.runs[0].reference);
    for r in &report.runs {
        assert_eq!(r.status, RunStatus::Completed, "{}: {:?}", r.run, r.error);
        assert_eq!(r.steps, 10_000);
        assert!(r.time_per_step_us.is_some_and(|t| t > 0.0 && t.is_finite()));
        assert!(r.max_constraint_residual.is_some_and(f64::is_finite));
    }

    let q = report.run(QUATERNION_F64).ok_or("no quaternion_f64 run")?;
    let dq = q.max_position_diff_m.ok_or("not compared")?;
    let rq = q.max_rotation_diff_rad.ok_or("not compared")?;
    let f32d = report.f32_drift.as_ref().ok_or("no f32 drift")?;
    eprintln!(
        "10 s pendulum vs matrix_f64: quaternion_f64 max {dq:.3e} m, {rq:.3e} rad \
         (final {:?} m); f32 drift max {:.3e} m, {:.3e} rad over {} s",
        q.final_position_diff_m, f32d.position_m, f32d.rotation_rad, f32d.over_s
    );
    for r in &report.runs {
        eprintln!(
            "  {}: max Δp {:?} m, max Δθ {:?} rad, final Δp {:?} m, {:?} µs/step, mean constraint {:?}",
            r.run,
            r.max_position_diff_m,
            r.max_rotation_diff_rad,
            r.final_position_diff_m,
            r.time_per_step_us,
            r.mean_constraint_residual
        );
    }
    assert!(dq < 1e-8, "f64 quaternion vs matrix differ by {dq} m");
    assert!(rq < 1e-8, "f64 quaternion vs matrix differ by {rq} rad");
    let qd = report
        .quaternion_f64_difference
        .as_ref()
        .ok_or("no quaternion difference")?;
    assert_eq!(qd.position_m, dq);
    assert_eq!(f32d.runs, ["matrix_f32", "quaternion_f32"]);
    assert!(f32d.position_m.is_finite() && f32d.position_m > 0.0);
    assert!(f32d.rotation_rad.is_finite() && f32d.rotation_rad > 0.0);
    assert_eq!(f32d.over_s, 10.0);
    // The f32 runs are further from the reference than the f64 quaternion run.
    assert!(f32d.position_m > dq);

    // Files: exactly these, no temporary file left.
    assert_eq!(entries(dir.path())?, ALL_FILES);
    assert_eq!(report.csv_path, dir.path().join(CSV_FILE));
    assert_eq!(
        report.files,
        [
            CSV_FILE,
            POSITION_PNG,
            ROTATION_PNG,
            SUMMARY_JSON,
            SUMMARY_MD
        ]
        .map(|f| dir.path().join(f))
    );
    assert_eq!(report.plot_files, [POSITION_PNG, ROTATION_PNG]);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);

    // Charts: three curves (the runs other than the reference) in each.
    check_png(&dir.path().join(POSITION_PNG), 1000)?;
    check_png(&dir.path().join(ROTATION_PNG), 1000)?;
    assert_ne!(
        fs::read(dir.path().join(POSITION_PNG))?,
        fs::read(dir.path().join(ROTATION_PNG))?
    );

    // CSV: header, 1000 rows of numbers, t = 0.01 … 10 exactly.
    let csv = fs::read_to_string(dir.path().join(CSV_FILE))?;
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().ok_or("empty CSV")?.split(',').collect();
    assert_eq!(header, report.columns);
    assert_eq!(header.len(), 1 + 2 + 3 * 4);
    assert_eq!(
        &header[..5],
        [
            "t",
            "matrix_f64_primal",
            "matrix_f64_constraint",
            "matrix_f32_position_m",
            "matrix_f32_rotation_rad"
        ]
    );
    assert!(header.contains(&"quaternion_f64_position_m"));
    assert!(header.contains(&"quaternion_f32_constraint"));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| {
            l.split(',')
                .map(str::parse)
                .collect::<Result<Vec<f64>, _>>()
        })
        .collect::<Result<_, _>>()?;
    assert_eq!(rows.len(), 1000);
    assert!(rows.iter().all(|r| r.len() == header.len()));
    assert!(rows.iter().flatten().all(|x| x.is_finite()));
    assert_eq!(rows[0][0], 0.01);
    assert_eq!(rows[999][0], 10.0);
    let k = header
        .iter()
        .position(|c| *c == "quaternion_f64_position_m")
        .ok_or("no column")?;
    assert!(rows.iter().all(|r| r[k] <= dq));

    // Summaries: JSON mirrors the report; Markdown states the drift in words.
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join(SUMMARY_JSON))?)?;
    assert_eq!(json["reference"], "matrix_f64");
    assert_eq!(json["runs"][3]["run"], "quaternion_f32");
    assert_eq!(json["runs"][3]["status"], "completed");
    assert_eq!(json["rows"], 1000);
    assert!(json["f32_drift"]["position_m"].is_f64());
    assert_eq!(json["plot_files"][0], POSITION_PNG);
    assert_eq!(json["plot_files"][1], ROTATION_PNG);
    assert_eq!(json["warnings"].as_array().map(Vec::len), Some(0));
    let md = fs::read_to_string(dir.path().join(SUMMARY_MD))?;
    assert!(
        md.contains("f32 runs (matrix_f32, quaternion_f32) stay within"),
        "{md}"
    );
    assert!(md.contains("of the f64 matrix run over 10 s"), "{md}");
    assert!(
        md.contains("quaternions and rotation matrices differ by at most"),
        "{md}"
    );
    assert!(
        md.contains("| matrix_f64 (reference) | completed |"),
        "{md}"
    );
    eprintln!("{md}");
    Ok(())
}

/// Only f32 quaternions asked for: the f64 matrix reference is added and said to be.
#[test]
fn reference_is_added_when_not_requested() -> R {
    let mut scene = pendulum()?;
    scene.set("run.duration", "0.1")?;
    let opts = CompareOptions {
        rotations: vec![Rotation::Quaternion],
        scalars: vec![Scalar::F32],
        every: Some(25),
    };
    let dir = tempfile::tempdir()?;
    let report = compare(&scene, &opts, dir.path())?;
    assert!(report.reference_added);
    assert_eq!(report.runs.len(), 2);
    assert!(!report.runs[0].requested && report.runs[0].reference);
    assert_eq!(report.every, 25);
    assert_eq!(report.rows, 4);
    assert!(report.quaternion_f64_difference.is_none());
    assert_eq!(
        report.columns,
        columns(&[
            REFERENCE,
            RunKey {
                rotation: Rotation::Quaternion,
                scalar: Scalar::F32
            }
        ])
    );
    let csv = fs::read_to_string(dir.path().join(CSV_FILE))?;
    assert_eq!(csv.lines().count(), 5);
    assert!(csv.lines().nth(4).is_some_and(|l| l.starts_with("0.1,")));
    let md = fs::read_to_string(dir.path().join(SUMMARY_MD))?;
    assert!(md.contains("added because it was not requested"), "{md}");

    // A row interval longer than the run: a header only, and the summary says so.
    let opts = CompareOptions {
        every: Some(1000),
        ..opts
    };
    let report = compare(&scene, &opts, dir.path())?;
    assert_eq!(report.rows, 0);
    assert_eq!(
        fs::read_to_string(dir.path().join(CSV_FILE))?
            .lines()
            .count(),
        1
    );
    assert!(report
        .conclusions
        .iter()
        .any(|l| l.contains("No row was written")));
    Ok(())
}

/// Files appear whole: written when the study ends (also when stopped), never when it fails.
#[test]
fn outputs_appear_only_on_success() -> R {
    let mut scene = pendulum()?;
    scene.set("run.duration", "0.2")?;
    let root = tempfile::tempdir()?;

    // Stopped midway (Ctrl-C): the files hold the steps compared so far.
    let dir = root.path().join("interrupted");
    let report = compare_with_progress(&scene, &CompareOptions::default(), &dir, |k, _| {
        if k == 150 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })?;
    assert_eq!(report.interrupted_at_step, Some(150));
    assert!(report.conclusions[0].contains("Interrupted after 150 of 200 steps"));
    assert!(report
        .runs
        .iter()
        .all(|r| r.status == lie_xpbd::pipeline::run::RunStatus::Interrupted));
    let csv = fs::read_to_string(dir.join(CSV_FILE))?;
    assert_eq!(csv.lines().count() as u64, report.rows + 1);
    assert!(report.rows > 0);

    // A target that cannot be written: refused before any step, nothing written.
    let dir = root.path().join("blocked");
    fs::create_dir_all(dir.join(SUMMARY_MD))?;
    let e = compare(&scene, &CompareOptions::default(), &dir).unwrap_err();
    assert!(
        matches!(
            e,
            CompareError::Output(OutputError::TargetIsDirectory { .. })
        ),
        "{e}"
    );
    assert_eq!(entries(&dir)?, [SUMMARY_MD]);
    // The same for a chart's name.
    let dir = root.path().join("blocked_png");
    fs::create_dir_all(dir.join(ROTATION_PNG))?;
    let e = compare(&scene, &CompareOptions::default(), &dir).unwrap_err();
    assert!(
        matches!(
            e,
            CompareError::Output(OutputError::TargetIsDirectory { .. })
        ),
        "{e}"
    );
    assert_eq!(entries(&dir)?, [ROTATION_PNG]);

    // Bad options.
    let opts = CompareOptions {
        scalars: vec![],
        ..CompareOptions::default()
    };
    assert!(matches!(
        compare(&scene, &opts, &root.path().join("x")),
        Err(CompareError::NoScalars)
    ));
    let opts = CompareOptions {
        every: Some(0),
        ..CompareOptions::default()
    };
    assert!(matches!(
        compare(&scene, &opts, &root.path().join("x")),
        Err(CompareError::ZeroInterval)
    ));
    assert!(!root.path().join("x").exists());

    // An output path that is a file.
    let file = root.path().join("file");
    fs::write(&file, "x")?;
    assert!(matches!(
        compare(&scene, &CompareOptions::default(), &file),
        Err(CompareError::Output(OutputError::NotADirectory { .. }))
    ));

    // Success replaces earlier outputs whole.
    let dir = root.path().join("ok");
    fs::create_dir_all(&dir)?;
    fs::write(dir.join(CSV_FILE), "old")?;
    compare(&scene, &CompareOptions::default(), &dir)?;
    assert_eq!(entries(&dir)?, ALL_FILES);
    assert!(fs::read_to_string(dir.join(CSV_FILE))?.starts_with("t,"));
    Ok(())
}

/// A huge time step overflows f32 (g Δt² ≈ 1e41 > 3.4e38) but not f64: the f32 runs
/// diverge and are reported, the f64 runs go on and are still compared.
#[test]
fn diverging_runs_end_and_the_others_go_on() -> R {
    let mut scene = pendulum()?;
    scene.set("run.duration", "1e21")?;
    scene.set("solver.dt", "1e20")?;
    scene.set("run.every", "1")?;
    let dir = tempfile::tempdir()?;
    let report = compare(&scene, &CompareOptions::default(), dir.path())?;
    for r in &report.runs {
        eprintln!(
            "{}: {:?} after {} steps ({:?}), max Δp {:?}",
            r.run, r.status, r.steps, r.error, r.max_position_diff_m
        );
    }
    assert_eq!(report.steps, 10);
    // The f64 runs survive the overflow of f32 and are still compared.
    let q = report.run(QUATERNION_F64).ok_or("missing run")?;
    assert_eq!(q.status, RunStatus::Completed);
    assert_eq!(q.compared_steps, 10);
    assert_eq!(report.rows, 10);
    for key in [Rotation::Matrix, Rotation::Quaternion].map(|rotation| RunKey {
        rotation,
        scalar: Scalar::F32,
    }) {
        let r = report.run(key).ok_or("missing run")?;
        assert_eq!(r.status, RunStatus::Diverged);
        assert_eq!((r.steps, r.diverged_at_step), (0, Some(1)));
        assert_eq!(r.compared_steps, 0);
        assert!(r.max_position_diff_m.is_none());
        assert!(r.error.as_ref().is_some_and(|e| !e.is_empty()));
        assert!(r.time_per_step_us.is_some());
    }
    let md = fs::read_to_string(dir.path().join(SUMMARY_MD))?;
    assert!(
        md.contains("matrix_f32 diverged at step 1 (t = 1e20 s"),
        "{md}"
    );
    assert!(
        md.contains("| matrix_f32 | diverged at step 1 | 0 |"),
        "{md}"
    );
    assert!(
        md.contains("it was never compared with the reference"),
        "{md}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join(SUMMARY_JSON))?)?;
    assert_eq!(json["runs"][1]["status"], "diverged");
    // The CSV has NaN for the diverged runs' columns after their divergence.
    let csv = fs::read_to_string(dir.path().join(CSV_FILE))?;
    let last = csv.lines().last().ok_or("empty CSV")?;
    assert!(last.contains("NaN"), "{csv}");
    // The charts are drawn from the runs that were compared (the f64 quaternions).
    assert_eq!(entries(dir.path())?, ALL_FILES);
    assert_eq!(report.plot_files, [POSITION_PNG, ROTATION_PNG]);
    check_png(&dir.path().join(POSITION_PNG), 100)?;
    check_png(&dir.path().join(ROTATION_PNG), 100)?;
    eprintln!("{md}\n{csv}");
    Ok(())
}
