//! `summary.md`: a run's [`RunSummary`] as a readable Markdown page.

use super::*;

/// Seven significant digits, in scientific notation outside [1e-3, 1e7).
fn sig(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-3..1e7).contains(&x.abs()) {
        format!("{x:.6}")
    } else {
        format!("{x:.6e}")
    }
}

fn opt(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".into(), |v| format!("{v:.3e}"))
}

/// `summary.md`: the summary as a readable Markdown page.
pub fn markdown(s: &RunSummary) -> String {
    let st = &s.settings;
    let mut m = format!("# Run of `{}`\n\n", s.scene);
    m += &format!(
        "Scene `{}`, {} rotations in {}, Δt = {} s, {} substep(s), {} iteration(s), {} solves{}; lie-xpbd {}.\n\n",
        s.scene_origin, st.rotation, st.scalar, st.dt, st.substeps, st.iterations, st.mode,
        if st.primal_correction { " with the primal correction pass" } else { "" },
        s.version
    );
    if !st.overrides.is_empty() {
        m += &format!("Overrides: `{}`.\n\n", st.overrides.join("`, `"));
    }
    m += &format!(
        "**Status: {}** after {} of {} steps (t = {} s).{}\n\n",
        match s.status {
            RunStatus::Completed => "completed",
            RunStatus::Diverged => "diverged",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed (outputs could not be written)",
        },
        s.steps,
        st.steps_planned,
        s.simulated_time_s,
        s.error.as_ref().map_or(String::new(), |e| format!(" {e}"))
    );
    m += "| quantity | value |\n|---|---|\n";
    m += &format!(
        "| median primal residual (51) | {} |\n",
        opt(s.median_primal_residual)
    );
    m += &format!(
        "| max primal residual (51) | {} |\n",
        opt(s.max_primal_residual)
    );
    m += &format!(
        "| median constraint residual (52), m and rad | {} |\n",
        opt(s.median_constraint_residual)
    );
    m += &format!(
        "| max constraint residual (52), m and rad | {} |\n",
        opt(s.max_constraint_residual)
    );
    m += &format!(
        "| energy initial → final, J | {:.6} → {:.6} |\n",
        s.energy_initial_j, s.energy_final_j
    );
    m += &format!(
        "| energy change / energy available above rest ({} J) | {} |\n",
        sig(s.energy_available_j),
        s.energy_change_fraction
            .map_or_else(|| "n/a".into(), |f| format!("{:+.3}%", 100.0 * f))
    );
    m += &format!("| time per substep | {:.3} µs |\n", s.time_per_substep_us);
    m += &format!("| wall time | {:.3} s |\n", s.wall_time_s);
    m += &format!("| rows per file after t = 0 | {} |\n\n", s.rows);
    if !s.breaks.is_empty() {
        m += "## Breaks\n\n| t (s) | joint | force (N) | torque (N·m) |\n|---|---|---|---|\n";
        for b in &s.breaks {
            m += &format!(
                "| {} | {} | {:.4e} | {:.4e} |\n",
                sig(b.time_s),
                b.joint,
                b.force_n,
                b.torque_nm
            );
        }
        m += "\n";
    }
    if s.warnings.is_empty() {
        m += "No warnings.\n\n";
    } else {
        m += "## Warnings\n\n";
        for w in &s.warnings {
            m += &format!("- {w}\n");
        }
        m += "\n";
    }
    m += "## Files\n\n";
    for f in &s.files {
        m += &format!("- `{f}`\n");
    }
    m
}
