//! The comparison study: one scene run in several rotation representations and scalar
//! types side by side, each measured against the `f64` rotation-matrix run (what
//! `lie-xpbd compare SCENE --rotation matrix,quaternion --scalar f64,f32` does).
//!
//! # How it runs
//! Every requested combination of [`Rotation`] × [`Scalar`] is built from the same
//! scene ([`Scalar::F32Plain`], `--scalar f32-plain`, is f32 in plain arithmetic,
//! [`crate::xpbd::F32Arithmetic::Plain`]: a run of its own, named e.g.
//! `matrix_f32-plain`), plus the **reference**, the `f64` matrix run ([`REFERENCE`]), which is always
//! included (and reported as added when it was not requested). The runs advance in
//! lockstep: for each time step, every run takes its step, then the runs are compared
//! with the reference at that step. No trajectory is kept, so memory does not grow with
//! the length of the run; the rows are streamed to disk as they are made. The wall time
//! of each run's [`Simulation::step`] is measured on its own.
//!
//! A run whose step fails (e.g. [`crate::xpbd::XpbdError::Diverged`]) ends there: it is
//! marked diverged in the summary, its columns hold `NaN` from then on, and the other
//! runs go on. If the reference ends, the others keep stepping (their residuals and
//! timing are still recorded) but there is nothing left to compare them with.
//!
//! # Differences
//! At each step, over the dynamic bodies (fixed bodies do not move and are skipped):
//! * position difference: the largest ‖p − p_ref‖ (Euclidean, m, world frame) of a
//!   body's centre of mass;
//! * rotation difference: the largest ‖Log(R_refᵀ R)‖ (rad, in [0, π]), the angle of
//!   the rotation taking the reference orientation (body → world) to the run's, computed
//!   in `f64` from the matrices with [`log_matrix`] (an `f32` run's matrix widened to
//!   `f64` is orthonormal only to ~1e-7, which bounds the accuracy of its angle).
//!
//! # Files
//! * `compare.csv` ([`CSV_FILE`]): a header, then a row every `every` steps (at steps
//!   `every`, `2·every`, …; no row for the initial state). Columns ([`columns`]): `t`
//!   (simulated time at the end of the step, s, exact decimal from
//!   [`super::files::step_time`]); for the reference `matrix_f64_primal`,
//!   `matrix_f64_constraint`; then for each other run `{rotation}_{scalar}_position_m`,
//!   `{rotation}_{scalar}_rotation_rad`, `{rotation}_{scalar}_primal`,
//!   `{rotation}_{scalar}_constraint` (primal residual (51) and constraint residual (52)
//!   of that run after the step, see [`crate::xpbd::Residuals`]). Residuals are printed
//!   at the run's precision; differences in `f64`. A value that does not exist (a run
//!   ended) is `NaN`.
//! * `compare.png` ([`POSITION_PNG`]) and `compare_rotation.png` ([`ROTATION_PNG`]):
//!   the position difference (m) and the rotation difference (rad) of each run other
//!   than the reference against simulated time (s), on a logarithmic axis. They are
//!   drawn from every compared step (not only the CSV rows), reduced as the study goes
//!   by a [`Decimator`] per curve (min and max per bucket of steps, [`PLOT_POINTS`]
//!   points at most), so memory stays bounded. A difference of exactly 0 cannot be
//!   shown on the log axis (the chart notes how many points it left out). A chart that
//!   cannot be drawn is not an error: it is left out and a line in
//!   [`CompareReport::warnings`] says why; the data are all in `compare.csv`.
//! * `summary.json` ([`SUMMARY_JSON`]): the [`CompareReport`] (non-finite numbers as
//!   `null`).
//! * `summary.md` ([`SUMMARY_MD`]): the same as a Markdown table, with the conclusions
//!   in words.
//!
//! All of them are staged in the output directory and appear under their final names
//! only when the study completed ([`OutputDir::commit`]); on an error nothing is left.
//!
//! # Example
//! ```no_run
//! use lie_xpbd::pipeline::compare::{compare, CompareOptions};
//! use lie_xpbd::scene::Scene;
//!
//! let mut scene = Scene::from_toml(lie_xpbd::scenes::pendulum::SCENE_TOML, "pendulum.toml")?;
//! scene.set("run.every", "10")?;
//! let report = compare(&scene, &CompareOptions::default(), std::path::Path::new("out"))?;
//! for line in &report.conclusions {
//!     println!("{line}");
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`log_matrix`]: crate::lie::log_matrix
//! [`Decimator`]: crate::pipeline::plot::Decimator
//! [`OutputDir::commit`]: crate::pipeline::files::OutputDir::commit
//! [`Simulation::step`]: crate::sim::Simulation::step

mod report;
mod study;

pub use report::{CompareReport, Drift, RunComparison};
pub use study::{compare, compare_with_progress};

use super::files::OutputError;
use crate::scene::SceneError;
use crate::sim::{Rotation, Scalar};
use thiserror::Error;

/// Name of the streamed table of differences and residuals.
pub const CSV_FILE: &str = "compare.csv";
/// Name of the JSON summary (a [`CompareReport`]).
pub const SUMMARY_JSON: &str = "summary.json";
/// Name of the Markdown summary.
pub const SUMMARY_MD: &str = "summary.md";
/// Name of the chart of position differences.
pub const POSITION_PNG: &str = "compare.png";
/// Name of the chart of rotation differences.
pub const ROTATION_PNG: &str = "compare_rotation.png";
/// Points kept per curve of the charts (min and max per bucket of steps).
pub const PLOT_POINTS: usize = 4000;

/// The reference every run is compared with: `f64` rotation matrices.
pub const REFERENCE: RunKey = RunKey {
    rotation: Rotation::Matrix,
    scalar: Scalar::F64,
};

/// What can stop a comparison. A run that diverges does not: it is reported in the
/// [`CompareReport`].
#[derive(Debug, Error)]
pub enum CompareError {
    /// [`CompareOptions::rotations`] is empty.
    #[error("no rotation representation to compare; give at least one of: matrix, quaternion")]
    NoRotations,
    /// [`CompareOptions::scalars`] is empty.
    #[error("no scalar type to compare; give at least one of: f64, f32, f32-plain")]
    NoScalars,
    /// [`CompareOptions::every`] is 0.
    #[error("the recording interval must be at least 1 step")]
    ZeroInterval,
    /// The scene could not be built (or asks for too many steps).
    #[error(transparent)]
    Scene(Box<SceneError>),
    /// An output file could not be written; nothing was left under a final name unless
    /// the error is [`OutputError::Commit`], which lists the files replaced.
    #[error(transparent)]
    Output(#[from] OutputError),
}

impl From<SceneError> for CompareError {
    fn from(e: SceneError) -> Self {
        CompareError::Scene(Box::new(e))
    }
}

/// Which runs to compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompareOptions {
    /// Rotation representations (at least one; duplicates are ignored).
    pub rotations: Vec<Rotation>,
    /// Scalar types (at least one; duplicates are ignored).
    pub scalars: Vec<Scalar>,
    /// Write a CSV row every this many steps (≥ 1); `None` takes the scene's
    /// `run.every`.
    pub every: Option<u64>,
}

impl Default for CompareOptions {
    /// Both representations in both scalars, rows as the scene says.
    fn default() -> Self {
        Self {
            rotations: Rotation::ALL.to_vec(),
            scalars: Scalar::ALL.to_vec(),
            every: None,
        }
    }
}

impl CompareOptions {
    /// The runs, in column order: the reference ([`REFERENCE`]) first, then every
    /// requested combination (rotations outer, scalars inner) other than it, each once.
    ///
    /// # Errors
    /// [`CompareError::NoRotations`] or [`CompareError::NoScalars`] if a list is empty.
    pub fn runs(&self) -> Result<Vec<RunKey>, CompareError> {
        if self.rotations.is_empty() {
            return Err(CompareError::NoRotations);
        }
        if self.scalars.is_empty() {
            return Err(CompareError::NoScalars);
        }
        let mut runs = vec![REFERENCE];
        for &rotation in &self.rotations {
            for &scalar in &self.scalars {
                let key = RunKey { rotation, scalar };
                if !runs.contains(&key) {
                    runs.push(key);
                }
            }
        }
        Ok(runs)
    }

    /// Whether the reference was asked for (otherwise it is added).
    pub fn requests_reference(&self) -> bool {
        self.rotations.contains(&REFERENCE.rotation) && self.scalars.contains(&REFERENCE.scalar)
    }
}

/// One combination of rotation representation and scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RunKey {
    /// Rotation representation.
    pub rotation: Rotation,
    /// Scalar type.
    pub scalar: Scalar,
}

impl RunKey {
    /// `{rotation}_{scalar}`, e.g. `quaternion_f32`: the prefix of the run's columns.
    pub fn name(&self) -> String {
        format!("{}_{}", self.rotation, self.scalar)
    }

    /// Whether this is the reference ([`REFERENCE`]).
    pub fn is_reference(&self) -> bool {
        *self == REFERENCE
    }
}

/// Column names of `compare.csv` for `runs` (reference first, as from
/// [`CompareOptions::runs`]): `t`; per run `{name}_position_m`, `{name}_rotation_rad`
/// (not for the reference), `{name}_primal`, `{name}_constraint`.
pub fn columns(runs: &[RunKey]) -> Vec<String> {
    let mut cols = vec!["t".to_string()];
    for run in runs {
        let name = run.name();
        if !run.is_reference() {
            cols.push(format!("{name}_position_m"));
            cols.push(format!("{name}_rotation_rad"));
        }
        cols.push(format!("{name}_primal"));
        cols.push(format!("{name}_constraint"));
    }
    cols
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_put_the_reference_first_once() -> Result<(), CompareError> {
        let opts = CompareOptions {
            rotations: vec![Rotation::Quaternion, Rotation::Quaternion],
            scalars: vec![Scalar::F32],
            every: None,
        };
        let runs = opts.runs()?;
        assert_eq!(runs.len(), 2);
        assert!(runs[0].is_reference());
        assert_eq!(runs[1].name(), "quaternion_f32");
        assert!(!opts.requests_reference());
        assert_eq!(
            columns(&runs),
            [
                "t",
                "matrix_f64_primal",
                "matrix_f64_constraint",
                "quaternion_f32_position_m",
                "quaternion_f32_rotation_rad",
                "quaternion_f32_primal",
                "quaternion_f32_constraint"
            ]
        );
        let all = CompareOptions::default().runs()?;
        assert_eq!(all.len(), 4);
        assert!(CompareOptions::default().requests_reference());
        assert!(matches!(
            CompareOptions {
                rotations: vec![],
                ..CompareOptions::default()
            }
            .runs(),
            Err(CompareError::NoRotations)
        ));
        assert!(matches!(
            CompareOptions {
                scalars: vec![],
                ..CompareOptions::default()
            }
            .runs(),
            Err(CompareError::NoScalars)
        ));
        Ok(())
    }
}
