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
use std::sync::atomic::{AtomicBool, Ordering};

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
    Ok(check_world_until(world, rotation, scalar, opts, &AtomicBool::new(false))?.0)
}

/// Random states checked between two looks at the interrupt flag.
const STATES_PER_CHUNK: usize = 64;

/// As [`check_world`], looking at `interrupt` every `STATES_PER_CHUNK` (64) random states:
/// once it is set, the constraint being checked keeps the states checked so far
/// ([`GradientCheck::states_checked`] says how many) and no further constraint is
/// checked. Returns the entries and whether it was interrupted. Uninterrupted, the
/// result is that of one [`check_gradient_perturbed`] call per constraint (the states
/// are drawn from the same random sequence, in chunks).
///
/// # Errors
/// As [`check_world`].
pub fn check_world_until<T: Real, G: LieGroup<T>>(
    world: &World<T, G>,
    rotation: Rotation,
    scalar: Scalar,
    opts: &JacobianOptions,
    interrupt: &AtomicBool,
) -> Result<(Vec<JacobianEntry>, bool), XpbdError> {
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let mut out = Vec::with_capacity(world.constraint_count());
    for j in 0..world.constraint_count() {
        if interrupt.load(Ordering::Relaxed) {
            return Ok((out, true));
        }
        let Some(c) = world.constraint(ConstraintId(j)) else {
            continue;
        };
        let mut check: Option<GradientCheck> = None;
        let mut done = 0;
        loop {
            let n = STATES_PER_CHUNK.min(opts.states - done);
            let chunk = check_gradient_perturbed(
                c,
                world.bodies(),
                &mut rng,
                n,
                opts.position_scale,
                opts.rotation_scale,
            )?;
            check = Some(merge_chunk(check, chunk, done));
            done += n;
            if done == opts.states || interrupt.load(Ordering::Relaxed) {
                break;
            }
        }
        if let Some(check) = check {
            out.push(JacobianEntry {
                rotation,
                scalar,
                check,
            });
        }
        if done < opts.states {
            return Ok((out, true));
        }
    }
    Ok((out, interrupt.load(Ordering::Relaxed)))
}

/// Combines the check of random states `offset + 1 ..` (`chunk`, whose states are
/// numbered from 1, and which also checked the given state 0) with the checks so far.
fn merge_chunk(
    so_far: Option<GradientCheck>,
    mut chunk: GradientCheck,
    offset: usize,
) -> GradientCheck {
    if chunk.worst_state > 0 {
        chunk.worst_state += offset;
    }
    let Some(mut best) = so_far else {
        return chunk;
    };
    let tolerance = best.tolerance.max(chunk.tolerance);
    let states = best.states_checked + chunk.states_checked - 1;
    if chunk.worst_relative_error > best.worst_relative_error {
        best = chunk;
    }
    best.tolerance = tolerance;
    best.states_checked = states;
    best
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
    interrupt: &AtomicBool,
) -> Result<(Vec<JacobianEntry>, bool), JacobianError> {
    let built = scene.build::<T, G>()?;
    Ok(check_world_until(&built.world, r, s, opts, interrupt)?)
}

/// Checks every constraint of `scene` in all four combinations.
///
/// # Errors
/// [`JacobianError`] if the scene cannot be built or a constraint cannot be checked.
pub fn check_scene(scene: &Scene, opts: &JacobianOptions) -> Result<JacobianReport, JacobianError> {
    Ok(check_scene_until(scene, opts, &AtomicBool::new(false))?.0)
}

/// As [`check_scene`], stopping soon after `interrupt` is set ([`check_world_until`]):
/// the report then holds the checks made so far. Returns it and whether it was
/// interrupted.
///
/// # Errors
/// As [`check_scene`].
pub fn check_scene_until(
    scene: &Scene,
    opts: &JacobianOptions,
    interrupt: &AtomicBool,
) -> Result<(JacobianReport, bool), JacobianError> {
    let runs = [
        one::<f64, SO3Matrix<f64>>,
        one::<f64, UnitQuaternion<f64>>,
        one::<f32, SO3Matrix<f32>>,
        one::<f32, UnitQuaternion<f32>>,
    ];
    let combinations = [
        (Rotation::Matrix, Scalar::F64),
        (Rotation::Quaternion, Scalar::F64),
        (Rotation::Matrix, Scalar::F32),
        (Rotation::Quaternion, Scalar::F32),
    ];
    let mut entries = Vec::new();
    for (run, (r, s)) in runs.into_iter().zip(combinations) {
        let (more, stopped) = run(scene, r, s, opts, interrupt)?;
        entries.extend(more);
        if stopped {
            return Ok((JacobianReport { entries }, true));
        }
    }
    Ok((JacobianReport { entries }, false))
}
