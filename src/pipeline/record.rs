//! Recording a run: named channels streamed to CSV files as the run goes, and running
//! statistics (medians, maxima, energy) over every step, in memory bounded by the size
//! of the scene, not the length of the run.
//!
//! # Channels and files
//! Each [`Channel`] of the scene's `run.record` goes to its own CSV file in the run's
//! folder (see [`Channel::file_name`]); every file starts with the column `t`
//! (simulated time, s, at the end of the step: [`step_time`], exact on Δt as typed).
//! The state files (`energy`, `poses`, `velocities`) start with the initial state at
//! `t = 0`; then every file gets a row after every `run.every`-th step, and after the
//! last step taken if `run.every` does not divide it ([`Recorder::write_final_row`]), so
//! the files end with the final state. Residuals and λ belong to a step's solve: their
//! files have no `t = 0` row.
//!
//! | channel | file | columns after `t` |
//! |---|---|---|
//! | `residuals` | `residuals.csv` | `primal_residual` (51), `constraint_residual` (52) |
//! | `energy` | `energy.csv` | `kinetic_j`, `potential_j` (gravity), `elastic_j` (36), `total_j` (J) |
//! | `poses` | `states.csv` | per body `{name}_px,_py,_pz` (m, world), `{name}_rx,_ry,_rz` (Log R, rad) |
//! | `velocities` | `velocities.csv` | per body `{name}_vx,_vy,_vz` (m/s, world), `{name}_wx,_wy,_wz` (rad/s, body) |
//! | `lambda` | `lambda.csv` | per joint row `{joint}_l{k}`: accumulated λ of the last substep |
//!
//! Numbers are the shortest text that reads back to the same value at the run's
//! precision ([`Scalar::format`]). The residuals' units: the primal residual (51) mixes
//! N·s²·… per body coordinate (kg·m for positions, kg·m²·rad for rotations, i.e. the
//! momentum-like 𝓜(x ⊟ x̃)); the constraint residual (52) is in the constraints' units
//! (m and rad).
//!
//! # Statistics
//! Both residuals of every step (whatever `run.every`) feed a [`LogHistogram`], whose
//! median is within a relative 1e-4 of the exact median, and exact maxima; the energy's
//! initial, final and extreme values are tracked too.

use super::files::{step_time, OutputDir, OutputError, StagedWriter};
use crate::scene::Channel;
use crate::sim::{Scalar, Simulation};
use std::collections::BTreeMap;
use std::io::Write;

/// A streaming quantile estimate with relative accuracy [`LogHistogram::ACCURACY`]:
/// positive values are counted in logarithmic buckets of ratio γ = (1 + a)/(1 − a), so
/// any quantile is returned within a relative `a` of a value of that rank. Memory grows
/// with the number of distinct buckets (the decades spanned ÷ 2a), not the number of
/// values: a run whose residuals span 10 decades uses at most ~115 000 buckets.
#[derive(Debug, Clone, Default)]
pub struct LogHistogram {
    buckets: BTreeMap<i32, u64>,
    zeros: u64,
    nan: u64,
    count: u64,
    max: Option<f64>,
}

impl LogHistogram {
    /// Relative accuracy a of [`LogHistogram::quantile`].
    pub const ACCURACY: f64 = 1e-4;

    fn ln_gamma() -> f64 {
        ((1.0 + Self::ACCURACY) / (1.0 - Self::ACCURACY)).ln()
    }

    /// Adds a value (≥ 0; NaN is counted and makes the maximum NaN).
    pub fn push(&mut self, x: f64) {
        self.count += 1;
        if x.is_nan() {
            self.nan += 1;
            self.max = Some(f64::NAN);
            return;
        }
        if !self.max.is_some_and(|m| m.is_nan() || m >= x) {
            self.max = Some(x);
        }
        if x <= 0.0 || x < f64::MIN_POSITIVE {
            self.zeros += 1;
            return;
        }
        let k = if x.is_finite() {
            (x.ln() / Self::ln_gamma()).ceil() as i32
        } else {
            i32::MAX
        };
        *self.buckets.entry(k).or_insert(0) += 1;
    }

    /// Number of values pushed.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Largest value (NaN if any was NaN), `None` if empty.
    pub fn max(&self) -> Option<f64> {
        self.max
    }

    /// The q-quantile (0 ≤ q ≤ 1; 0.5 = median, the lower middle value for an even
    /// count) within a relative [`LogHistogram::ACCURACY`], ignoring NaN; `None` if
    /// there are no non-NaN values.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let n = self.count - self.nan;
        if n == 0 {
            return None;
        }
        let rank = ((n - 1) as f64 * q.clamp(0.0, 1.0)).floor() as u64;
        if rank < self.zeros {
            return Some(0.0);
        }
        let mut seen = self.zeros;
        let g = Self::ln_gamma();
        for (&k, &c) in &self.buckets {
            seen += c;
            if seen > rank {
                if k == i32::MAX {
                    return Some(f64::INFINITY);
                }
                // Bucket k holds (γ^(k−1), γ^k]; its centre in relative terms.
                return Some(2.0 * (k as f64 * g).exp() / (1.0 + g.exp()));
            }
        }
        self.max
    }
}

/// Running statistics of a run, over every step.
#[derive(Debug, Clone, Default)]
pub struct RunStats {
    /// Primal residuals (51) of every step.
    pub primal: LogHistogram,
    /// Constraint residuals (52) of every step.
    pub constraint: LogHistogram,
    /// Largest violation of the joints' hard rows over the steps
    /// ([`crate::xpbd::World::hard_violation`]: m and rad; rods and compliant rows left
    /// out); NaN if it was NaN at some step.
    pub max_hard_violation: f64,
    /// Total energy before the first step, J.
    pub energy_initial: f64,
    /// Total energy after the last step taken, J.
    pub energy_final: f64,
    /// Largest total energy over the steps, J.
    pub energy_max: f64,
    /// The elastic part (36) of the energy at the step of `energy_max`, J.
    pub energy_max_elastic: f64,
    /// Σ over dynamic bodies of m g·(p₀ − p_lowest): the potential energy released if
    /// every body went down to the lowest point it reached along gravity, J; with the
    /// initial kinetic energy, the energy "available above rest" against which energy
    /// changes are reported.
    pub lowest_potential: f64,
    /// Kinetic energy before the first step, J.
    pub kinetic_initial: f64,
    /// Rows written after steps to each CSV file (the state files have one more: the
    /// initial state at t = 0).
    pub rows: u64,
    /// Both residuals against time (s), every step, decimated for plotting.
    pub plot_residuals: Vec<super::plot::Series>,
    /// Total energy against time (s), every step, decimated for plotting.
    pub plot_energy: Vec<super::plot::Series>,
}

/// Streams the channels of a run to CSV files and keeps [`RunStats`].
#[derive(Debug)]
pub struct Recorder {
    every: u64,
    dt: f64,
    scalar: Scalar,
    // Step count of the last row written (0: none after the initial state).
    last_row_step: u64,
    files: Vec<(Channel, StagedWriter)>,
    stats: RunStats,
    // Per body: gravity-direction height m g·p at start and its smallest value so far.
    lowest: Vec<(f64, f64)>,
    gravity: nalgebra::Vector3<f64>,
    masses: Vec<f64>,
    scratch: Vec<f64>,
    line: String,
    // Plot data of every step, decimated to bounded size: primal, constraint, energy.
    curves: [super::plot::Decimator; 3],
}

/// Points kept per plotted curve (min and max per bucket of steps).
pub const PLOT_POINTS: usize = 4000;

fn csv_name(name: &str) -> String {
    if name.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", name.replace('"', "\"\""))
    } else {
        name.to_string()
    }
}

/// The columns of `channel` for `sim` (after `t`).
pub fn channel_columns(channel: Channel, sim: &dyn Simulation) -> Vec<String> {
    let per_body = |suffixes: [&str; 6]| -> Vec<String> {
        sim.body_names()
            .iter()
            .flat_map(|n| suffixes.iter().map(move |s| format!("{n}_{s}")))
            .collect()
    };
    match channel {
        Channel::Residuals => vec!["primal_residual".into(), "constraint_residual".into()],
        Channel::Energy => vec![
            "kinetic_j".into(),
            "potential_j".into(),
            "elastic_j".into(),
            "total_j".into(),
        ],
        Channel::Poses => per_body(["px", "py", "pz", "rx", "ry", "rz"]),
        Channel::Velocities => per_body(["vx", "vy", "vz", "wx", "wy", "wz"]),
        Channel::Lambda => sim
            .joints()
            .iter()
            .flat_map(|j| (0..j.rows).map(move |k| format!("{}_l{k}", j.name)))
            .collect(),
    }
}

impl Recorder {
    /// Opens one CSV stream per channel in `out` and writes the headers. `every` ≥ 1
    /// steps between rows, `dt` the time step as given (for exact times).
    ///
    /// # Errors
    /// [`OutputError`] if a file cannot be created or written, or
    /// [`OutputError::ZeroInterval`] for `every` = 0.
    pub fn new(
        out: &OutputDir,
        sim: &dyn Simulation,
        channels: &[Channel],
        every: u64,
        dt: f64,
    ) -> Result<Self, OutputError> {
        if every == 0 {
            return Err(OutputError::ZeroInterval);
        }
        let mut files = Vec::with_capacity(channels.len());
        for &c in channels {
            let mut f = out.stage_stream(c.file_name())?;
            let mut header = String::from("t");
            for col in channel_columns(c, sim) {
                header.push(',');
                header.push_str(&csv_name(&col));
            }
            header.push('\n');
            let path = f.path().to_path_buf();
            f.write_all(header.as_bytes())
                .map_err(|source| OutputError::Write { path, source })?;
            files.push((c, f));
        }
        let gravity = sim.gravity();
        let masses: Vec<f64> = (0..sim.body_names().len()).map(|i| sim.mass(i)).collect();
        let energy0 = sim.energy();
        let e0 = energy0.total();
        let lowest = (0..sim.body_names().len())
            .map(|i| {
                let h = -masses[i] * gravity.dot(&sim.position(i));
                (h, h)
            })
            .collect();
        let mut rec = Self {
            every,
            dt,
            scalar: sim.scalar(),
            last_row_step: 0,
            files,
            stats: RunStats {
                energy_initial: e0,
                energy_final: e0,
                energy_max: e0,
                energy_max_elastic: energy0.elastic,
                kinetic_initial: energy0.kinetic,
                ..RunStats::default()
            },
            lowest,
            gravity,
            masses,
            scratch: Vec::new(),
            line: String::new(),
            curves: std::array::from_fn(|_| super::plot::Decimator::new(PLOT_POINTS)),
        };
        rec.write_rows(sim, None, &energy0)?;
        Ok(rec)
    }

    /// Records the state after a step: statistics always, a row in every file if the
    /// step count is a multiple of `every`.
    ///
    /// # Errors
    /// [`OutputError::Write`] if a row cannot be written.
    pub fn observe(&mut self, sim: &dyn Simulation) -> Result<(), OutputError> {
        let (primal, constraint) = sim.residuals();
        self.stats.primal.push(primal);
        self.stats.constraint.push(constraint);
        let violation = sim.hard_violation();
        if violation.is_nan() || violation > self.stats.max_hard_violation {
            self.stats.max_hard_violation = violation;
        }
        let energy = sim.energy();
        let total = energy.total();
        self.stats.energy_final = total;
        if total > self.stats.energy_max || total.is_nan() {
            self.stats.energy_max = total;
            self.stats.energy_max_elastic = energy.elastic;
        }
        for (i, l) in self.lowest.iter_mut().enumerate() {
            let h = -self.masses[i] * self.gravity.dot(&sim.position(i));
            if h < l.1 {
                l.1 = h;
            }
        }
        let step = sim.steps();
        let t_step = step as f64 * self.dt;
        self.curves[0].push(t_step, primal);
        self.curves[1].push(t_step, constraint);
        self.curves[2].push(t_step, total);
        if !step.is_multiple_of(self.every) {
            return Ok(());
        }
        self.write_rows(sim, Some((primal, constraint)), &energy)
    }

    /// Writes the row of the last step taken if `run.every` skipped it, so that the
    /// files end with the final state of a run that completed or was interrupted
    /// (between steps). Call once, after the last [`Recorder::observe`]; nothing is
    /// written if that step already has its row or no step was taken.
    ///
    /// # Errors
    /// [`OutputError::Write`] if a row cannot be written.
    pub fn write_final_row(&mut self, sim: &dyn Simulation) -> Result<(), OutputError> {
        let step = sim.steps();
        if step == 0 || step == self.last_row_step {
            return Ok(());
        }
        let residuals = sim.residuals();
        self.write_rows(sim, Some(residuals), &sim.energy())
    }

    /// One row in every file for the state after `sim.steps()` steps. `residuals` is
    /// `None` for the initial state, which only the state files (`energy`, `poses`,
    /// `velocities`) get: residuals and λ belong to a step's solve.
    fn write_rows(
        &mut self,
        sim: &dyn Simulation,
        residuals: Option<(f64, f64)>,
        energy: &crate::sim::Energy,
    ) -> Result<(), OutputError> {
        let step = sim.steps();
        if residuals.is_some() {
            self.stats.rows += 1;
            self.last_row_step = step;
        }
        let t = step_time(0.0, step, self.dt);
        for (channel, file) in &mut self.files {
            self.scratch.clear();
            match (channel, residuals) {
                (Channel::Residuals, Some((primal, constraint))) => {
                    self.scratch.extend([primal, constraint])
                }
                (Channel::Residuals | Channel::Lambda, None) => continue,
                (Channel::Energy, _) => self.scratch.extend([
                    energy.kinetic,
                    energy.potential,
                    energy.elastic,
                    energy.total(),
                ]),
                (Channel::Poses, _) => {
                    for i in 0..sim.body_names().len() {
                        self.scratch.extend(sim.position(i).iter());
                        self.scratch.extend(sim.log(i).iter());
                    }
                }
                (Channel::Velocities, _) => {
                    for i in 0..sim.body_names().len() {
                        self.scratch.extend(sim.velocity(i).iter());
                        self.scratch.extend(sim.angular_velocity(i).iter());
                    }
                }
                (Channel::Lambda, _) => {
                    for j in 0..sim.joints().len() {
                        sim.lambda(j, &mut self.scratch);
                    }
                }
            }
            self.line.clear();
            self.line.push_str(&Scalar::F64.format(t));
            for &x in &self.scratch {
                self.line.push(',');
                self.line.push_str(&self.scalar.format(x));
            }
            self.line.push('\n');
            let path = file.path().to_path_buf();
            file.write_all(self.line.as_bytes())
                .map_err(|source| OutputError::Write { path, source })?;
        }
        Ok(())
    }

    /// The statistics so far.
    pub fn stats(&self) -> &RunStats {
        &self.stats
    }

    /// Stages every CSV file in `out` (whatever was written so far: an interrupted or
    /// diverged run keeps its rows) and returns the statistics.
    ///
    /// # Errors
    /// [`OutputError::Write`] if a file cannot be flushed.
    pub fn finish(mut self, out: &mut OutputDir) -> Result<RunStats, OutputError> {
        self.stats.lowest_potential = self.lowest.iter().map(|(h0, lo)| h0 - lo).sum();
        for (_, f) in self.files {
            out.add(f)?;
        }
        let [p, c, e] = self.curves;
        self.stats.plot_residuals = vec![
            super::plot::Series {
                label: "primal residual (51)".into(),
                points: p.finish(),
            },
            super::plot::Series {
                label: "constraint residual (52), m and rad".into(),
                points: c.finish(),
            },
        ];
        self.stats.plot_energy = vec![super::plot::Series {
            label: "total energy, J".into(),
            points: e.finish(),
        }];
        Ok(self.stats)
    }
}

#[cfg(test)]
mod tests {
    use super::LogHistogram;

    #[test]
    fn log_histogram_median_is_within_its_accuracy() {
        let mut h = LogHistogram::default();
        let mut v: Vec<f64> = (0..100_001)
            .map(|i| 1e-12 * 1.0001f64.powi(i % 50_000) * (1 + i % 7) as f64)
            .collect();
        for &x in &v {
            h.push(x);
        }
        v.sort_by(f64::total_cmp);
        let exact = v[(v.len() - 1) / 2];
        let est = h.quantile(0.5).unwrap();
        assert!(
            ((est - exact) / exact).abs() <= LogHistogram::ACCURACY,
            "{est} vs {exact}"
        );
        assert_eq!(h.max(), Some(*v.last().unwrap()));
        assert_eq!(h.count(), 100_001);
    }

    #[test]
    fn log_histogram_zeros_nan_empty() {
        let mut h = LogHistogram::default();
        assert_eq!(h.quantile(0.5), None);
        h.push(0.0);
        h.push(0.0);
        h.push(1.0);
        assert_eq!(h.quantile(0.5), Some(0.0));
        h.push(f64::NAN);
        assert!(h.max().unwrap().is_nan());
        // 1.0 = γ⁰ sits on a bucket edge, where the error is exactly the accuracy a
        // (up to round-off in γ).
        let top = h.quantile(1.0).unwrap();
        assert!(
            (top - 1.0).abs() <= LogHistogram::ACCURACY * (1.0 + 1e-9),
            "{top}"
        );
    }
}
