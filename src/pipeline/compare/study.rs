//! The study itself: the runs stepped in lockstep, compared with the reference, the rows
//! streamed to `compare.csv`, the charts drawn and the report written.

use super::report::{conclusions, markdown, secs};
use super::{
    columns, CompareError, CompareOptions, CompareReport, Drift, RunComparison, RunKey, CSV_FILE,
    PLOT_POINTS, POSITION_PNG, REFERENCE, ROTATION_PNG, SUMMARY_JSON, SUMMARY_MD,
};
use crate::lie::log_matrix;
use crate::pipeline::files::{step_time, OutputDir, OutputError, StagedWriter};
use crate::pipeline::plot::{render_png, ChartSpec, Decimator, Series};
use crate::pipeline::run::RunStatus;
use crate::scene::Scene;
use crate::sim::{build_simulation, Rotation, Scalar, Simulation};
use nalgebra::{Matrix3, Vector3};
use std::fmt::Write as _;
use std::io::Write as _;
use std::ops::ControlFlow;
use std::path::Path;
use std::time::{Duration, Instant};

/// Running statistics of one quantity: max (NaN wins), mean, last.
#[derive(Debug, Clone, Copy, Default)]
struct Running {
    n: u64,
    sum: f64,
    max: f64,
    max_at: u64,
    last: f64,
}

impl Running {
    fn push(&mut self, x: f64, step: u64) {
        if self.n == 0 || x.total_cmp(&self.max).is_gt() {
            self.max = x;
            self.max_at = step;
        }
        self.n += 1;
        self.sum += x;
        self.last = x;
    }
    fn max(&self) -> Option<f64> {
        (self.n > 0).then_some(self.max)
    }
    fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }
    fn last(&self) -> Option<f64> {
        (self.n > 0).then_some(self.last)
    }
}

/// One run's simulation and bookkeeping.
struct Run {
    key: RunKey,
    sim: Box<dyn Simulation>,
    alive: bool,
    error: Option<String>,
    attempted: u64,
    step_time: Duration,
    primal: Running,
    constraint: Running,
    position: Running,
    rotation: Running,
    /// Values of this step: primal, constraint, position diff, rotation diff.
    now: [f64; 4],
    /// Position and rotation differences against time, for the charts.
    curves: [Decimator; 2],
}

/// Runs the comparison of `scene` described by `opts` and writes `compare.csv`, the
/// charts `compare.png` and `compare_rotation.png`, `summary.json` and `summary.md` to
/// `out_dir` (created if needed). See the
/// [module documentation](super) for what is computed and written.
///
/// # Errors
/// [`CompareError::NoRotations`], [`CompareError::NoScalars`],
/// [`CompareError::ZeroInterval`] for bad options; [`CompareError::Scene`] if the scene
/// cannot be built; [`CompareError::Output`] if the directory or a file cannot be
/// written (then no file appears). A diverging run is not an error.
pub fn compare(
    scene: &Scene,
    opts: &CompareOptions,
    out_dir: &Path,
) -> Result<CompareReport, CompareError> {
    compare_with_progress(scene, opts, out_dir, |_, _| ControlFlow::Continue(()))
}

/// [`compare`], calling `progress(steps_done, steps_total)` after every time step; a
/// [`ControlFlow::Break`] stops the study there (e.g. on Ctrl-C): the files are written
/// with the steps compared so far, the runs are marked
/// [`RunStatus::Interrupted`](crate::pipeline::run::RunStatus::Interrupted) and
/// [`CompareReport::interrupted_at_step`] says where.
///
/// # Errors
/// As [`compare`].
pub fn compare_with_progress(
    scene: &Scene,
    opts: &CompareOptions,
    out_dir: &Path,
    mut progress: impl FnMut(u64, u64) -> ControlFlow<()>,
) -> Result<CompareReport, CompareError> {
    let wall = Instant::now();
    let keys = opts.runs()?;
    let every = opts.every.unwrap_or(scene.file().run.every);
    if every == 0 {
        return Err(CompareError::ZeroInterval);
    }
    let steps = scene.steps()?;
    let dt = scene.file().solver.dt;
    let substeps = scene.file().solver.substeps;

    let mut runs = Vec::with_capacity(keys.len());
    for &key in &keys {
        runs.push(Run {
            key,
            sim: build_simulation(scene, key.rotation, key.scalar)?,
            alive: true,
            error: None,
            attempted: 0,
            step_time: Duration::ZERO,
            primal: Running::default(),
            constraint: Running::default(),
            position: Running::default(),
            rotation: Running::default(),
            now: [f64::NAN; 4],
            curves: [Decimator::new(PLOT_POINTS), Decimator::new(PLOT_POINTS)],
        });
    }
    let bodies: Vec<usize> = (0..runs[0].sim.body_names().len())
        .filter(|&i| !runs[0].sim.is_fixed(i))
        .collect();

    let mut out = OutputDir::create(out_dir)?;
    out.check_targets(&[
        CSV_FILE,
        POSITION_PNG,
        ROTATION_PNG,
        SUMMARY_JSON,
        SUMMARY_MD,
    ])?;
    let cols = columns(&keys);
    let mut csv = out.stage_stream(CSV_FILE)?;
    write_line(&mut csv, &cols.join(","))?;

    let mut ref_pos = vec![Vector3::<f64>::zeros(); bodies.len()];
    let mut ref_rot = vec![Matrix3::<f64>::identity(); bodies.len()];
    let mut line = String::new();
    let mut rows = 0u64;
    let mut interrupted_at_step = None;
    for k in 1..=steps {
        for run in runs.iter_mut().filter(|r| r.alive) {
            let start = Instant::now();
            let result = run.sim.step();
            run.step_time += start.elapsed();
            run.attempted += 1;
            match result {
                Ok(()) => {
                    let (p, c) = run.sim.residuals();
                    run.primal.push(p, k);
                    run.constraint.push(c, k);
                    run.now = [p, c, f64::NAN, f64::NAN];
                }
                Err(e) => {
                    run.alive = false;
                    run.error = Some(e.to_string());
                    run.now = [f64::NAN; 4];
                }
            }
        }
        let (reference, others) = runs.split_at_mut(1);
        let reference = &reference[0];
        if reference.alive {
            for (n, &i) in bodies.iter().enumerate() {
                ref_pos[n] = reference.sim.position(i);
                ref_rot[n] = reference.sim.rotation_matrix(i);
            }
            for run in others.iter_mut().filter(|r| r.alive) {
                let (mut dp, mut dr) = (0.0f64, 0.0f64);
                for (n, &i) in bodies.iter().enumerate() {
                    let p = (run.sim.position(i) - ref_pos[n]).norm();
                    let rel = ref_rot[n].transpose() * run.sim.rotation_matrix(i);
                    let r = log_matrix(&rel).norm();
                    // NaN wins, so that a broken comparison is not hidden.
                    dp = if p.is_nan() { p } else { dp.max(p) };
                    dr = if r.is_nan() { r } else { dr.max(r) };
                }
                run.position.push(dp, k);
                run.rotation.push(dr, k);
                // Plain f64 time: a chart needs no exact decimals.
                let t = k as f64 * dt;
                run.curves[0].push(t, dp);
                run.curves[1].push(t, dr);
                run.now[2] = dp;
                run.now[3] = dr;
            }
        }
        if k.is_multiple_of(every) {
            line.clear();
            line.push_str(&secs(step_time(0.0, k, dt)));
            for run in &runs {
                let [p, c, dp, dr] = run.now;
                if !run.key.is_reference() {
                    push_num(&mut line, dp, Scalar::F64);
                    push_num(&mut line, dr, Scalar::F64);
                }
                push_num(&mut line, p, run.key.scalar);
                push_num(&mut line, c, run.key.scalar);
            }
            write_line(&mut csv, &line)?;
            rows += 1;
        }
        if progress(k, steps).is_break() {
            interrupted_at_step = Some(k);
            break;
        }
        if runs.iter().all(|r| !r.alive) {
            break;
        }
    }
    out.add(csv)?;

    let mut warnings = Vec::new();
    let mut plot_files = Vec::new();
    let [position_curves, rotation_curves]: [Vec<Series>; 2] = std::array::from_fn(|q| {
        runs.iter()
            .filter(|r| !r.key.is_reference())
            .map(|r| Series {
                label: r.key.name(),
                points: r.curves[q].clone().finish(),
            })
            .collect()
    });
    for (name, what, y_label, series) in [
        (
            POSITION_PNG,
            "position difference",
            "position difference, m",
            position_curves,
        ),
        (
            ROTATION_PNG,
            "rotation difference",
            "rotation difference, rad",
            rotation_curves,
        ),
    ] {
        let spec = ChartSpec {
            title: format!("{}: {what} from {}", scene.name(), REFERENCE.name()),
            x_label: "t, s".into(),
            y_label: y_label.into(),
            log_y: true,
        };
        if stage_chart(&mut out, name, &spec, &series, &mut warnings)? {
            plot_files.push(name.to_string());
        }
    }

    let results: Vec<RunComparison> = runs
        .iter()
        .map(|r| {
            let mut c = summarise(r, opts, dt, substeps);
            if interrupted_at_step.is_some() && c.status == RunStatus::Completed {
                c.status = RunStatus::Interrupted;
            }
            c
        })
        .collect();
    let f32_drift = drift(&results, |r| r.scalar == Scalar::F32, dt);
    let quaternion_f64_difference = drift(
        &results,
        |r| r.rotation == Rotation::Quaternion && r.scalar == Scalar::F64,
        dt,
    );
    let duration_s = step_time(0.0, steps, dt);
    let dir = out.path().to_path_buf();
    let mut report = CompareReport {
        scene: scene.name(),
        origin: scene.origin().to_string(),
        overrides: scene.overrides().to_vec(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        dt_s: dt,
        substeps,
        steps,
        duration_s,
        every,
        rows,
        bodies_compared: bodies.len(),
        reference: REFERENCE.name(),
        reference_added: !opts.requests_reference(),
        runs: results,
        f32_drift,
        quaternion_f64_difference,
        conclusions: Vec::new(),
        wall_time_s: 0.0,
        csv_file: CSV_FILE.to_string(),
        columns: cols,
        plot_files,
        warnings,
        interrupted_at_step,
        csv_path: dir.join(CSV_FILE),
        files: Vec::new(),
    };
    report.conclusions = conclusions(&report, opts);
    if let Some(k) = interrupted_at_step {
        report.conclusions.insert(
            0,
            format!(
                "Interrupted after {k} of {steps} steps: the files hold the steps compared so far."
            ),
        );
    }
    report.wall_time_s = wall.elapsed().as_secs_f64();
    out.stage_json(SUMMARY_JSON, &report)?;
    let md = markdown(&report);
    out.stage_with(
        SUMMARY_MD,
        |w| std::io::Write::write_all(w, md.as_bytes()),
        |path, source| OutputError::Write { path, source },
    )?;
    report.files = out.commit()?;
    Ok(report)
}

/// Draws `series` and stages the chart as `name`; returns whether it was staged. A
/// chart that cannot be drawn is not an error: a line in `warnings` says why.
///
/// # Errors
/// [`OutputError`] if the drawn chart cannot be staged.
fn stage_chart(
    out: &mut OutputDir,
    name: &str,
    spec: &ChartSpec,
    series: &[Series],
    warnings: &mut Vec<String>,
) -> Result<bool, OutputError> {
    match render_png(spec, series) {
        Ok(png) => {
            out.stage_bytes(name, &png)?;
            Ok(true)
        }
        Err(e) => {
            warnings.push(format!("{name} was not drawn: {e}"));
            Ok(false)
        }
    }
}

fn write_line(w: &mut StagedWriter, line: &str) -> Result<(), OutputError> {
    w.write_all(line.as_bytes())
        .and_then(|()| w.write_all(b"\n"))
        .map_err(|source| OutputError::Write {
            path: w.path().to_path_buf(),
            source,
        })
}

/// Appends `,x`: the shortest text that reads back to `x` at `scalar`'s precision,
/// plain for 0 and 1e-4 ≤ |x| < 1e15, else in scientific notation (`1.5e-9`);
/// `NaN`, `inf`, `-inf` as such.
fn push_num(line: &mut String, x: f64, scalar: Scalar) {
    line.push(',');
    let plain = x == 0.0 || !x.is_finite() || (1e-4..1e15).contains(&x.abs());
    // Writing to a String cannot fail.
    let _ = match (scalar, plain) {
        (Scalar::F64, true) => write!(line, "{x}"),
        (Scalar::F64, false) => write!(line, "{x:e}"),
        (Scalar::F32 | Scalar::F32Plain, true) => write!(line, "{}", x as f32),
        (Scalar::F32 | Scalar::F32Plain, false) => write!(line, "{:e}", x as f32),
    };
}

fn summarise(r: &Run, opts: &CompareOptions, dt: f64, substeps: usize) -> RunComparison {
    // `Simulation::steps` also counts a step that failed.
    let steps = r.primal.n;
    let secs = r.step_time.as_secs_f64();
    let per = |n: u64| (n > 0).then(|| secs * 1e6 / n as f64);
    let compared = !r.key.is_reference() && r.position.n > 0;
    let diff = |x: Option<f64>| if compared { x } else { None };
    let at = |run: &Running| diff(Some(step_time(0.0, run.max_at, dt)));
    RunComparison {
        run: r.key.name(),
        rotation: r.key.rotation,
        scalar: r.key.scalar,
        reference: r.key.is_reference(),
        requested: opts.rotations.contains(&r.key.rotation) && opts.scalars.contains(&r.key.scalar),
        status: if r.error.is_some() {
            RunStatus::Diverged
        } else {
            RunStatus::Completed
        },
        error: r.error.clone(),
        steps,
        simulated_time_s: step_time(0.0, steps, dt),
        diverged_at_step: r.error.is_some().then_some(r.attempted),
        compared_steps: r.position.n,
        max_position_diff_m: diff(r.position.max()),
        max_position_diff_t_s: at(&r.position),
        final_position_diff_m: diff(r.position.last()),
        max_rotation_diff_rad: diff(r.rotation.max()),
        max_rotation_diff_t_s: at(&r.rotation),
        final_rotation_diff_rad: diff(r.rotation.last()),
        max_primal_residual: r.primal.max(),
        mean_primal_residual: r.primal.mean(),
        final_primal_residual: r.primal.last(),
        max_constraint_residual: r.constraint.max(),
        mean_constraint_residual: r.constraint.mean(),
        final_constraint_residual: r.constraint.last(),
        step_time_s: secs,
        time_per_step_us: per(r.attempted),
        time_per_substep_us: per(r.attempted.saturating_mul(substeps as u64)),
    }
}

/// The largest differences among the compared runs that `select` picks, over the time
/// all of them were compared.
fn drift(
    runs: &[RunComparison],
    select: impl Fn(&RunComparison) -> bool,
    dt: f64,
) -> Option<Drift> {
    let picked: Vec<&RunComparison> = runs
        .iter()
        .filter(|r| !r.reference && select(r) && r.compared_steps > 0)
        .collect();
    if picked.is_empty() {
        return None;
    }
    let worst = |f: fn(&RunComparison) -> Option<f64>| {
        picked
            .iter()
            .filter_map(|r| f(r))
            .max_by(f64::total_cmp)
            .unwrap_or(f64::NAN)
    };
    let over = picked.iter().map(|r| r.compared_steps).min().unwrap_or(0);
    Some(Drift {
        runs: picked.iter().map(|r| r.run.clone()).collect(),
        position_m: worst(|r| r.max_position_diff_m),
        rotation_rad: worst(|r| r.max_rotation_diff_rad),
        over_s: step_time(0.0, over, dt),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_back_at_their_precision() {
        let mut s = String::new();
        push_num(&mut s, 0.1, Scalar::F64);
        push_num(&mut s, f64::from(0.1f32), Scalar::F32);
        push_num(&mut s, 1.5e-9, Scalar::F64);
        push_num(&mut s, 0.0, Scalar::F64);
        push_num(&mut s, f64::NAN, Scalar::F32);
        push_num(&mut s, f64::from(3e-7f32), Scalar::F32);
        assert_eq!(s, ",0.1,0.1,1.5e-9,0,NaN,3e-7");
    }

    #[test]
    fn a_chart_that_cannot_be_drawn_is_a_warning() -> Result<(), Box<dyn std::error::Error>> {
        let root = tempfile::tempdir()?;
        let mut out = OutputDir::create(root.path())?;
        let spec = ChartSpec {
            log_y: true,
            ..ChartSpec::default()
        };
        // An x range whose width overflows f64 cannot be drawn.
        let wide = [Series {
            label: "x".into(),
            points: vec![(-1e308, 1.0), (1e308, 2.0)],
        }];
        let mut warnings = Vec::new();
        assert!(!stage_chart(
            &mut out,
            "bad.png",
            &spec,
            &wide,
            &mut warnings
        )?);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("bad.png was not drawn: "),
            "{warnings:?}"
        );
        let fine = [Series {
            label: "y".into(),
            points: vec![(0.0, 1e-9), (1.0, 1e-3)],
        }];
        assert!(stage_chart(
            &mut out,
            "good.png",
            &spec,
            &fine,
            &mut warnings
        )?);
        assert_eq!(warnings.len(), 1);
        assert_eq!(out.commit()?, [root.path().join("good.png")]);
        Ok(())
    }

    #[test]
    fn running_statistics() {
        let mut r = Running::default();
        assert_eq!(r.max(), None);
        r.push(1.0, 1);
        r.push(3.0, 2);
        r.push(2.0, 3);
        assert_eq!(
            (r.max(), r.mean(), r.last(), r.max_at),
            (Some(3.0), Some(2.0), Some(2.0), 2)
        );
    }
}
