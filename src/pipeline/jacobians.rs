//! The Jacobian study: every constraint of a scene (or of any world) checked against
//! central finite differences of boxplus perturbations ([`crate::xpbd::check`]), at its
//! initial state and at random perturbed states, in all four combinations of rotation
//! representation and scalar. `lie-xpbd check-jacobians [SCENE]` prints
//! [`JacobianReport::table`] and exits non-zero if any constraint fails.

use crate::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use crate::scene::{Scene, SceneError};
use crate::sim::{Rotation, Scalar};
use crate::xpbd::{check_gradient_perturbed, ConstraintId, GradientCheck, World, XpbdError};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::collections::BTreeMap;

/// Settings of the study.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JacobianOptions {
    /// Random perturbed states per constraint (besides the initial state).
    pub states: usize,
    /// Largest position perturbation, m.
    pub position_scale: f64,
    /// Largest rotation perturbation (boxplus), rad (at most
    /// [`crate::xpbd::check::MAX_ROTATION_SCALE`]).
    pub rotation_scale: f64,
    /// Seed of the random states (the study is reproducible).
    pub seed: u64,
}

impl Default for JacobianOptions {
    /// 100 states, 0.1 m, 0.5 rad, seed 1.
    fn default() -> Self {
        Self {
            states: 100,
            position_scale: 0.1,
            rotation_scale: 0.5,
            seed: 1,
        }
    }
}

/// One constraint checked in one combination.
#[derive(Debug, Clone)]
pub struct JacobianEntry {
    /// Rotation representation.
    pub rotation: Rotation,
    /// Scalar type.
    pub scalar: Scalar,
    /// The check's result (constraint name, kind, worst error, tolerance, where).
    pub check: GradientCheck,
}

/// The study's result.
#[derive(Debug, Clone, Default)]
pub struct JacobianReport {
    /// Every constraint in every combination checked.
    pub entries: Vec<JacobianEntry>,
}

impl JacobianReport {
    /// Whether every constraint passed in every combination.
    pub fn passed(&self) -> bool {
        self.entries.iter().all(|e| e.check.passed())
    }

    /// The exit code of `lie-xpbd check-jacobians` for this report: 0 if every check
    /// passed, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        if self.passed() {
            0
        } else {
            1
        }
    }

    /// The failing entries.
    pub fn failures(&self) -> Vec<&JacobianEntry> {
        self.entries.iter().filter(|e| !e.check.passed()).collect()
    }

    /// A Markdown table of the worst relative error (and its tolerance) per constraint
    /// kind and combination, followed by one line per failing constraint.
    pub fn table(&self) -> String {
        let mut worst: BTreeMap<(String, Rotation, Scalar), (f64, f64, usize)> = BTreeMap::new();
        for e in &self.entries {
            let w = worst
                .entry((e.check.kind.to_string(), e.rotation, e.scalar))
                .or_insert((0.0, e.check.tolerance, 0));
            if e.check.worst_relative_error.is_nan() || e.check.worst_relative_error > w.0 {
                *w = (e.check.worst_relative_error, e.check.tolerance, w.2);
            }
            w.2 += 1;
        }
        let mut s = String::from("| constraint type | rotation | scalar | constraints | worst relative error | tolerance | result |\n|---|---|---|---|---|---|---|\n");
        for ((kind, r, sc), (err, tol, n)) in &worst {
            let ok = *err <= *tol;
            s += &format!(
                "| {kind} | {r} | {sc} | {n} | {err:.2e} | {tol:.2e} | {} |\n",
                if ok { "pass" } else { "FAIL" }
            );
        }
        for e in self.failures() {
            s += &format!("\nFAILED ({} {}): {}\n", e.rotation, e.scalar, e.check);
        }
        s
    }
}

/// Checks every constraint of `world` (labelled with its representation and scalar).
///
/// # Errors
/// As [`check_gradient_perturbed`] (a constraint the checker cannot evaluate).
pub fn check_world<T: Real, G: LieGroup<T>>(
    world: &World<T, G>,
    rotation: Rotation,
    scalar: Scalar,
    opts: &JacobianOptions,
) -> Result<Vec<JacobianEntry>, XpbdError> {
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let mut out = Vec::with_capacity(world.constraint_count());
    for j in 0..world.constraint_count() {
        let Some(c) = world.constraint(ConstraintId(j)) else {
            continue;
        };
        let check = check_gradient_perturbed(
            c,
            world.bodies(),
            &mut rng,
            opts.states,
            opts.position_scale,
            opts.rotation_scale,
        )?;
        out.push(JacobianEntry {
            rotation,
            scalar,
            check,
        });
    }
    Ok(out)
}

/// Why the study could not run.
#[derive(Debug, thiserror::Error)]
pub enum JacobianError {
    /// The scene cannot be built.
    #[error(transparent)]
    Scene(#[from] SceneError),
    /// A constraint could not be checked.
    #[error(transparent)]
    Xpbd(#[from] XpbdError),
}

fn one<T: Real, G: LieGroup<T>>(
    scene: &Scene,
    r: Rotation,
    s: Scalar,
    opts: &JacobianOptions,
) -> Result<Vec<JacobianEntry>, JacobianError> {
    let built = scene.build::<T, G>()?;
    Ok(check_world(&built.world, r, s, opts)?)
}

/// Checks every constraint of `scene` in all four combinations.
///
/// # Errors
/// [`JacobianError`] if the scene cannot be built or a constraint cannot be checked.
pub fn check_scene(scene: &Scene, opts: &JacobianOptions) -> Result<JacobianReport, JacobianError> {
    let mut entries = one::<f64, SO3Matrix<f64>>(scene, Rotation::Matrix, Scalar::F64, opts)?;
    entries.extend(one::<f64, UnitQuaternion<f64>>(
        scene,
        Rotation::Quaternion,
        Scalar::F64,
        opts,
    )?);
    entries.extend(one::<f32, SO3Matrix<f32>>(
        scene,
        Rotation::Matrix,
        Scalar::F32,
        opts,
    )?);
    entries.extend(one::<f32, UnitQuaternion<f32>>(
        scene,
        Rotation::Quaternion,
        Scalar::F32,
        opts,
    )?);
    Ok(JacobianReport { entries })
}
