//! `summary.md`: a run's [`RunSummary`] as a readable Markdown page.

use super::*;

/// `x` with six decimals when 1e-3 ≤ |x| < 1e7 (or 0, or not finite), otherwise in
/// scientific notation, so that huge and tiny values stay readable.
pub(super) fn sig(x: f64) -> String {
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
        "| energy initial → final, J | {} → {} |\n",
        sig(s.energy_initial_j),
        sig(s.energy_final_j)
    );
    m += &format!(
        "| energy change / energy available above rest ({} J) | {} |\n",
        sig(s.energy_available_j),
        s.energy_change_fraction
            .map_or_else(|| "n/a".into(), |f| format!("{:+.3}%", 100.0 * f))
    );
    m += &format!("| time per substep | {} µs |\n", sig(s.time_per_substep_us));
    m += &format!("| wall time | {} s |\n", sig(s.wall_time_s));
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

#[cfg(test)]
mod tests {
    use super::sig;

    /// Review finding: a run whose energy grew to 1e30 J printed a 31-digit number in
    /// summary.md (and a tiny one printed 0.000000).
    #[test]
    fn huge_and_tiny_values_are_printed_in_scientific_notation() {
        assert_eq!(sig(1e30), "1.000000e30");
        assert_eq!(sig(-2.5e-7), "-2.500000e-7");
        assert_eq!(sig(12.5), "12.500000");
        assert_eq!(sig(0.0), "0.000000");
        assert_eq!(sig(f64::INFINITY), "inf");
    }
}
