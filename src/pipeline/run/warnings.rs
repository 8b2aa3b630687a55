//! The warnings of a run: joints that came apart, compliant rows far from balance,
//! non-finite residuals, energy that rose, no rows recorded (each with the settings the
//! user changed that could explain it).

use super::report;
use super::{RunOptions, RunStatus, RunSummary, ENERGY_GAIN_WARNING, RESIDUAL_WARNING};
use crate::pipeline::record::RunStats;
use crate::scene::Scene;

/// What the user changed that could explain a bad run: overrides (as given: `--set
/// KEY=VALUE`, or `--seconds S`) and a non-default scalar.
fn changed(scene: &Scene, opts: &RunOptions) -> String {
    let f = scene.file();
    let mut parts: Vec<String> = scene
        .overrides()
        .iter()
        .map(|(k, v)| scene.describe_override(k, v))
        .collect();
    if opts.scalar.is_f32() {
        parts.push(format!(
            "--scalar f32 with {} substep(s) of h = {:e} s",
            f.solver.substeps,
            f.solver.dt / f.solver.substeps as f64
        ));
    }
    if parts.is_empty() {
        format!(
            "the scene file's settings (dt = {} s, {} substep(s))",
            f.solver.dt, f.solver.substeps
        )
    } else {
        parts.join(", ")
    }
}

pub(super) fn warnings(
    scene: &Scene,
    opts: &RunOptions,
    s: &RunSummary,
    stats: &RunStats,
) -> Vec<String> {
    let mut w = Vec::new();
    if s.joints_came_apart {
        let v = s
            .max_joint_violation
            .map_or("NaN".to_string(), |v| format!("{v:.3e}"));
        w.push(format!(
            "the joints' hard rows were violated by up to {v} (m or rad, norm over those rows), above {RESIDUAL_WARNING:e}: the joints came apart, so the run is not physically meaningful; with {}, try a smaller solver.dt or more solver.substeps",
            changed(scene, opts)
        ));
    } else if let Some(m) = s
        .max_constraint_residual
        .filter(|m| m.is_nan() || *m > RESIDUAL_WARNING)
    {
        w.push(format!(
            "the largest constraint residual (52) is {m:.3e}, above {RESIDUAL_WARNING:e}, while the joints' hard rows hold (violated by at most {:.3e} m or rad): compliant rows (rods, springs, drives) end some steps far from their balance C + α̃λ = 0; more solver.iterations bring them closer",
            s.max_joint_violation.unwrap_or(f64::NAN)
        ));
    }
    let not_finite = |m: Option<f64>| m.is_some_and(|m| !m.is_finite());
    if not_finite(s.max_primal_residual) || not_finite(s.max_constraint_residual) {
        w.push(format!(
            "the residuals are not finite at some step (largest primal residual (51) {}, constraint residual (52) {}): a quantity overflowed the scalar's range ({}); the residual statistics are not meaningful",
            s.max_primal_residual.unwrap_or(f64::NAN),
            s.max_constraint_residual.unwrap_or(f64::NAN),
            if opts.scalar.is_f32() { "f32 overflows above 3.4e38: use --scalar f64" } else { "check masses, densities and forces for extreme values" }
        ));
    }
    let gain = stats.energy_max - stats.energy_initial;
    // A driven scene (prescribed motion, drives, motors) does work on the bodies: its
    // energy may rise, and a rise says nothing about the integrator.
    let driven = scene.file().is_driven();
    if !driven && s.energy_available_j > 0.0 && gain > ENERGY_GAIN_WARNING * s.energy_available_j {
        let hint = if stats.energy_max_elastic > 0.5 * gain {
            // Reported case: compliance 1e-14 on the pendulum's pivot gave 4.9e4 J of
            // "elastic energy" after 1 s (363 J available), and the f32 hint blamed
            // f32 resolution.
            "most of the rise is elastic energy (36) ½Cᵀα⁻¹C of compliant rows at that step: a very stiff row (small compliance) that the iterations leave unconverged reports ½C²/α of its leftover C, not energy it stores; make such rows hard (compliance 0) or use more solver.iterations"
        } else if opts.scalar.is_f32() {
            "position increments this small are near f32 resolution: use --scalar f64, or fewer substeps / a larger dt"
        } else {
            "try a smaller solver.dt or more solver.substeps"
        };
        w.push(format!(
            "the total energy rose by {gain:.3e} J ({}% of the {} J available above the lowest configuration reached); backward Euler only removes energy, so the run is dominated by round-off or instability. It used {}; {hint}",
            report::sig(100.0 * gain / s.energy_available_j),
            report::sig(s.energy_available_j),
            changed(scene, opts)
        ));
    }
    if s.rows == 0 && s.settings.every > s.steps && s.status == RunStatus::Completed {
        w.push(format!(
            "no rows were recorded: run.every = {} exceeds the {} steps taken",
            s.settings.every, s.steps
        ));
    }
    w
}
