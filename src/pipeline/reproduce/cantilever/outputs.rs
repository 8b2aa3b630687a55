//! The outputs of the cantilever study, written from its [`super::CantileverReport`]:
//! `runs.csv` (one row per run, the reference first), the plots of tip error against
//! degrees of freedom and against time per step, the residual histories, and
//! `summary.json` / `summary.md` ([`markdown`]).

use super::super::{stage_chart, stage_summaries, ReproduceError};
use super::{CantileverReport, CantileverRun, DISCRETIZATIONS};
use crate::pipeline::files::OutputDir;
use crate::pipeline::plot::{ChartSpec, Series};
use crate::pipeline::run::RunStatus;

pub(super) fn write_outputs(
    out: &mut OutputDir,
    r: &CantileverReport,
) -> Result<(), ReproduceError> {
    let mut csv = String::from(
        "discretization,elements,dof,tip_error_m,step_ms,tip_x,tip_y,tip_z,final_max_speed,primal_first,primal_last,constraint_first,constraint_last,status\n",
    );
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:e}"));
    let reference = r.reference.iter().map(|run| ("reference_cubic", run));
    let others = r.runs.iter().map(|run| (run.discretization.as_str(), run));
    for (label, run) in reference.chain(others) {
        csv.push_str(&format!(
            "{},{},{},{},{},{:?},{:?},{:?},{:e},{},{},{},{},{}\n",
            label,
            run.elements,
            run.dof,
            opt(run.tip_error_m),
            run.step_ms,
            run.tip_m[0],
            run.tip_m[1],
            run.tip_m[2],
            run.final_max_speed,
            opt(run.primal_residual[0]),
            opt(run.primal_residual[1]),
            opt(run.constraint_residual[0]),
            opt(run.constraint_residual[1]),
            run.status,
        ));
    }
    out.stage_bytes("runs.csv", csv.as_bytes())?;
    let by = |x: &dyn Fn(&CantileverRun) -> f64| -> Vec<Series> {
        DISCRETIZATIONS
            .iter()
            .map(|(key, _, _)| Series {
                label: (*key).into(),
                points: r
                    .runs
                    .iter()
                    .filter(|run| run.discretization == *key)
                    .filter_map(|run| Some((x(run).log10(), run.tip_error_m?)))
                    .collect(),
            })
            .collect()
    };
    let charts: [(&str, &str, Vec<Series>); 2] = [
        (
            "error_vs_dof.png",
            "log10(degrees of freedom)",
            by(&|run| run.dof as f64),
        ),
        (
            "error_vs_step_time.png",
            "log10(time per step, ms)",
            by(&|run| run.step_ms),
        ),
    ];
    for (name, x_label, series) in charts {
        let spec = ChartSpec {
            title: format!(
                "Cantilever (Section 9.2): tip error, reference cubic {}{}",
                r.reference.as_ref().map_or(0, |x| x.elements),
                if r.completeness.complete {
                    ""
                } else {
                    " (PARTIAL)"
                }
            ),
            x_label: x_label.into(),
            y_label: "tip error, m".into(),
            log_y: true,
        };
        stage_chart(out, name, &spec, &series)?;
    }
    let mut series = Vec::new();
    for (key, h) in &r.residuals {
        for (what, v) in [("primal", &h.primal), ("constraint", &h.constraint)] {
            series.push(Series {
                label: format!("{key} {} el., {what}", h.elements),
                points: h.t_s.iter().copied().zip(v.iter().copied()).collect(),
            });
        }
    }
    let spec = ChartSpec {
        title: "Cantilever: residuals (51)-(52), rod rows included".into(),
        x_label: "t, s".into(),
        y_label: "residual".into(),
        log_y: true,
    };
    stage_chart(out, "residuals.png", &spec, &series)?;
    stage_summaries(out, r, &markdown(r))?;
    Ok(())
}

fn sci(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:.2e}"))
}

/// `summary.md`: the orders, the table of runs, the reference.
pub fn markdown(r: &CantileverReport) -> String {
    let mut s = r.completeness.banner();
    s.push_str("# Cantilever convergence (Section 9.2, Figure 13)\n\n");
    match &r.reference {
        Some(x) => s.push_str(&format!(
            "Reference: cubic rod of {} elements{}, tip ({:.12}, {:.12}, {:.3e}) m, final max speed {:.1e}. {} s per run, {} {}.\n\n",
            x.elements,
            if x.status == RunStatus::Interrupted { " (INTERRUPTED: no tip errors)" } else { "" },
            x.tip_m[0], x.tip_m[1], x.tip_m[2], x.final_max_speed, r.seconds, r.rotation, r.scalar
        )),
        None => s.push_str("Reference: not run (no tip errors).\n\n"),
    }
    s.push_str("| discretization | fitted order | runs in fit |\n|---|---|---|\n");
    for (key, _, _) in DISCRETIZATIONS {
        let order = match (
            r.orders.get(key).copied().flatten(),
            r.partial_orders.get(key),
        ) {
            (Some(o), _) => format!("{o:.2}"),
            (None, Some(Some(o))) => {
                format!("– (partial sweep: {o:.2} over the finished runs, not the order)")
            }
            (None, Some(None)) => "– (partial sweep)".into(),
            (None, None) => "–".into(),
        };
        s.push_str(&format!(
            "| {key} | {order} | {} |\n",
            r.order_points.get(key).copied().unwrap_or(0)
        ));
    }
    s.push_str(&format!(
        "\nLinear more accurate than the rigid chain at equal DOF: {}\n\n",
        r.linear_beats_rigid_chain_at_equal_dof
            .map_or("–".into(), |b| b.to_string())
    ));
    s.push_str("| discretization | elements | DOF | tip error, m | step, ms | final max speed | primal first → last | constraint first → last | status |\n|---|---|---|---|---|---|---|---|---|\n");
    for run in &r.runs {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {:.4} | {:.1e} | {} → {} | {} → {} | {} |\n",
            run.discretization,
            run.elements,
            run.dof,
            sci(run.tip_error_m),
            run.step_ms,
            run.final_max_speed,
            sci(run.primal_residual[0]),
            sci(run.primal_residual[1]),
            sci(run.constraint_residual[0]),
            sci(run.constraint_residual[1]),
            run.status,
        ));
    }
    s
}
