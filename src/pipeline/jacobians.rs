//! The Jacobian study: every constraint of a scene (or of any world), and every row
//! block of its systems (each Gauss point of a [`crate::rod::FemRod`], each joint of a
//! [`crate::rod::RigidChainRod`]), checked against central finite differences of
//! boxplus perturbations ([`crate::xpbd::check`]), at its initial state and at random
//! perturbed states, in all four combinations of rotation representation and scalar.
//! `lie-xpbd check-jacobians [SCENE]` prints [`JacobianReport::table`] and exits
//! non-zero if any check fails.
//!
//! A constraint's bodies are perturbed by up to [`JacobianOptions::position_scale`]
//! and [`JacobianOptions::rotation_scale`]; a row block's by the same position scale
//! and [`JacobianOptions::system_rotation_scale`] (1 rad by default, so that relative
//! nodal rotations within a rod element reach 2 rad, where its curvature rows'
//! derivatives are hardest), lowered per block only where its bodies already turn so
//! far relative to each other that a perturbed state could reach Log's branch cut
//! ([`row_block_rotation_scale`]). A system without row blocks
//! ([`crate::xpbd::System::row_block_count`] = 0) is not checked.

use crate::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use crate::linalg::BandScalar;
use crate::scene::{Scene, SceneError};
use crate::sim::{Rotation, Scalar};
use crate::xpbd::check::{check_row_block_perturbed, within_kink_reach, MAX_ROTATION_SCALE};
use crate::xpbd::{
    check_gradient_perturbed, Body, ConstraintId, GradientCheck, System, SystemId, World, XpbdError,
};
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
    /// Largest rotation perturbation (boxplus), rad, of the bodies of a system's row
    /// block (a rod's Gauss point or joint), at most
    /// [`crate::xpbd::check::MAX_ROTATION_SCALE`]; lowered per block where the block's
    /// bodies already turn far relative to each other ([`row_block_rotation_scale`]).
    /// Large, because a rod's curvature rows at large nodal rotation differences are
    /// where derivative bugs hide (a missing ∂Γ/∂θ term is wrong by tens of percent
    /// there and invisible near straight states): with 1 rad per node, relative
    /// rotations within an element change by up to 2 rad.
    pub system_rotation_scale: f64,
}

impl Default for JacobianOptions {
    /// 100 states, 0.1 m, 0.5 rad (constraints), seed 1, 1 rad (row blocks).
    fn default() -> Self {
        Self {
            states: 100,
            position_scale: 0.1,
            rotation_scale: 0.5,
            seed: 1,
            system_rotation_scale: MAX_ROTATION_SCALE,
        }
    }
}

/// One constraint or system row block checked in one combination.
#[derive(Debug, Clone)]
pub struct JacobianEntry {
    /// Rotation representation.
    pub rotation: Rotation,
    /// Scalar type.
    pub scalar: Scalar,
    /// The check's result (constraint or row block name, kind, worst error,
    /// tolerance, where).
    pub check: GradientCheck,
}

/// The study's result.
#[derive(Debug, Clone, Default)]
pub struct JacobianReport {
    /// Every constraint and row block in every combination checked.
    pub entries: Vec<JacobianEntry>,
}

impl JacobianReport {
    /// Whether every constraint and row block passed in every combination.
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

    /// A Markdown table of the worst relative error (and its tolerance) per kind
    /// (a constraint's [`crate::xpbd::Constraint::kind`], or a row block's, e.g.
    /// `rod gauss point`, `rod joint`) and combination, with the number checked of that
    /// kind (the `constraints` column: a row block is one constraint of the paper, a
    /// Gauss point (108) or a joint (93)), followed by one line per failing check.
    pub fn table(&self) -> String {
        // Per kind and combination: the check with the worst error (a NaN error is
        // the worst), and how many were checked.
        let mut worst: BTreeMap<(String, Rotation, Scalar), (&GradientCheck, usize)> =
            BTreeMap::new();
        for e in &self.entries {
            let w = worst
                .entry((e.check.kind.to_string(), e.rotation, e.scalar))
                .or_insert((&e.check, 0));
            let err = e.check.worst_relative_error;
            if err.is_nan() || err > w.0.worst_relative_error {
                w.0 = &e.check;
            }
            w.1 += 1;
        }
        let mut s = String::from("| constraint type | rotation | scalar | constraints | worst relative error | tolerance | result |\n|---|---|---|---|---|---|---|\n");
        for ((kind, r, sc), (c, n)) in &worst {
            let result = if !c.conclusive() {
                "INCONCLUSIVE"
            } else if c.passed() {
                "pass"
            } else {
                "FAIL"
            };
            let (err, tol) = (c.worst_relative_error, c.tolerance);
            s += &format!("| {kind} | {r} | {sc} | {n} | {err:.2e} | {tol:.2e} | {result} |\n");
        }
        s += &format!(
            "\nThe tolerance is that of the check with the worst error: {:.0e} in f64 and \
             {:.0e} in f32, times max(1, L/1 m) with L the largest distance of its bodies \
             from the origin (the round-off of differencing world points grows with L); from \
             {} on a check cannot tell a wrong gradient and is inconclusive (a failure).\n",
            <f64 as Real>::fd_tolerance(),
            <f32 as Real>::fd_tolerance(),
            crate::xpbd::MAX_CONCLUSIVE_TOLERANCE,
        );
        let skipped: Vec<&JacobianEntry> = self
            .entries
            .iter()
            .filter(|e| e.check.states_skipped > 0)
            .collect();
        if !skipped.is_empty() {
            let states: usize = skipped.iter().map(|e| e.check.states_skipped).sum();
            s += &format!(
                "\n{states} state(s) of {} check(s) skipped where the constraint is not \
                 differentiable or too curved for a central difference (a limit at the \
                 middle of its range, a swing limit at zero swing, a motor before its first \
                 substep, a normed row of scalar mode near zero), e.g. {} ({} {}).\n",
                skipped.len(),
                skipped[0].check.constraint,
                skipped[0].rotation,
                skipped[0].scalar
            );
        }
        for e in self.failures() {
            s += &format!("\nFAILED ({} {}): {}\n", e.rotation, e.scalar, e.check);
        }
        s
    }
}

/// Checks every constraint of `world`, then every row block of its systems (labelled
/// with its representation and scalar).
///
/// # Errors
/// As [`check_gradient_perturbed`] and [`check_row_block_perturbed`] (a constraint or
/// block the checker cannot evaluate, or an invalid option).
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

/// Distance (rad) from Log's branch cut at π that the relative rotations between a
/// row block's bodies keep in every perturbed state (module docs of
/// [`crate::xpbd::check`], Validity).
const BRANCH_CUT_MARGIN: f64 = 0.1;

/// As [`check_world`], looking at `interrupt` every `STATES_PER_CHUNK` (64) random states:
/// once it is set, the constraint or row block being checked keeps the states checked
/// so far ([`GradientCheck::states_checked`] says how many) and nothing further is
/// checked. Returns the entries and whether it was interrupted. Uninterrupted, the
/// result is that of one [`check_gradient_perturbed`] call per constraint, then one
/// [`check_row_block_perturbed`] call per row block of every system (systems in the
/// order added, blocks in order; rotation scale [`row_block_rotation_scale`]), all
/// drawing from one random sequence seeded by [`JacobianOptions::seed`], in chunks.
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
    let bodies = world.bodies();
    for j in 0..world.constraint_count() {
        if interrupt.load(Ordering::Relaxed) {
            return Ok((out, true));
        }
        let Some(c) = world.constraint(ConstraintId(j)) else {
            continue;
        };
        // Whether the given state is skipped (a kink there): every chunk meets it again.
        let given_skipped = within_kink_reach(c, bodies);
        let (check, complete) =
            in_chunks(opts.states, given_skipped, &mut rng, interrupt, |rng, n| {
                check_gradient_perturbed(
                    c,
                    bodies,
                    rng,
                    n,
                    opts.position_scale,
                    opts.rotation_scale,
                )
            })?;
        out.push(JacobianEntry {
            rotation,
            scalar,
            check,
        });
        if !complete {
            return Ok((out, true));
        }
    }
    for s in 0..world.system_count() {
        let Some(system) = world.system(SystemId(s)) else {
            continue;
        };
        for k in 0..system.row_block_count() {
            if interrupt.load(Ordering::Relaxed) {
                return Ok((out, true));
            }
            let rotation_scale = row_block_rotation_scale(system, k, bodies, opts);
            let (check, complete) =
                in_chunks(opts.states, false, &mut rng, interrupt, |rng, n| {
                    check_row_block_perturbed(
                        system,
                        k,
                        bodies,
                        rng,
                        n,
                        opts.position_scale,
                        rotation_scale,
                    )
                })?;
            out.push(JacobianEntry {
                rotation,
                scalar,
                check,
            });
            if !complete {
                return Ok((out, true));
            }
        }
    }
    Ok((out, interrupt.load(Ordering::Relaxed)))
}

/// The rotation scale (rad) the study perturbs the bodies of row block `k` of
/// `system` by: [`JacobianOptions::system_rotation_scale`], lowered to
/// (π − 0.1 − ψ)/2 (not below 0) where ψ is the largest angle between two of the
/// block's bodies' orientations in `bodies`, so that no perturbed state brings a
/// relative rotation within 0.1 rad of Log's branch cut at π (both rods take Log of
/// relative rotations between a block's bodies only: (100) and (90)). A scale outside
/// [0, [`MAX_ROTATION_SCALE`]] is returned unchanged, for the checker to reject. The
/// shipped scenes' elements turn by at most 0.79 rad (the spring), so they are
/// perturbed by the full scale.
pub fn row_block_rotation_scale<T: Real, G: LieGroup<T>>(
    system: &dyn System<T, G>,
    k: usize,
    bodies: &[Body<T, G>],
    opts: &JacobianOptions,
) -> f64 {
    let scale = opts.system_rotation_scale;
    if !(0.0..=MAX_ROTATION_SCALE).contains(&scale) {
        return scale;
    }
    let Some(info) = system.row_block(k) else {
        return scale;
    };
    let ids = info.bodies();
    let mut largest = 0.0f64;
    for (i, a) in ids.iter().enumerate() {
        for b in &ids[i + 1..] {
            if let (Some(a), Some(b)) = (bodies.get(a.0), bodies.get(b.0)) {
                let angle = a.orientation.boxminus(&b.orientation).norm().to_f64();
                largest = largest.max(angle);
            }
        }
    }
    let safe = ((std::f64::consts::PI - BRANCH_CUT_MARGIN - largest) / 2.0).max(0.0);
    scale.min(safe)
}

/// Runs `check(rng, n)` over `states` random states in chunks of `STATES_PER_CHUNK`,
/// looking at `interrupt` between chunks, and merges the chunks. Returns the merged
/// check and whether all states were checked.
fn in_chunks<F>(
    states: usize,
    given_skipped: bool,
    rng: &mut StdRng,
    interrupt: &AtomicBool,
    mut check: F,
) -> Result<(GradientCheck, bool), XpbdError>
where
    F: FnMut(&mut StdRng, usize) -> Result<GradientCheck, XpbdError>,
{
    let mut merged: Option<GradientCheck> = None;
    let mut done = 0;
    loop {
        let n = STATES_PER_CHUNK.min(states - done);
        let chunk = check(rng, n)?;
        let m = merge_chunk(merged, chunk, done, given_skipped);
        done += n;
        if done == states || interrupt.load(Ordering::Relaxed) {
            return Ok((m, done == states));
        }
        merged = Some(m);
    }
}

/// Combines the check of random states `offset + 1 ..` (`chunk`, whose states are
/// numbered from 1, and which also checked the given state 0) with the checks so far.
fn merge_chunk(
    so_far: Option<GradientCheck>,
    mut chunk: GradientCheck,
    offset: usize,
    given_skipped: bool,
) -> GradientCheck {
    if chunk.worst_state > 0 {
        chunk.worst_state += offset;
    }
    let Some(mut best) = so_far else {
        return chunk;
    };
    let tolerance = best.tolerance.max(chunk.tolerance);
    // Every chunk also checks (or skips) the given state 0: count it once.
    let (again_checked, again_skipped) = if given_skipped { (0, 1) } else { (1, 0) };
    let states = best.states_checked + chunk.states_checked - again_checked;
    let skipped = best.states_skipped + chunk.states_skipped - again_skipped;
    if chunk.worst_relative_error > best.worst_relative_error {
        best = chunk;
    }
    best.tolerance = tolerance;
    best.states_checked = states;
    best.states_skipped = skipped;
    best
}

/// Why the study could not run.
#[derive(Debug, thiserror::Error)]
pub enum JacobianError {
    /// The scene cannot be built.
    #[error(transparent)]
    Scene(#[from] SceneError),
    /// A constraint or row block could not be checked.
    #[error(transparent)]
    Xpbd(#[from] XpbdError),
}

fn one<T: BandScalar, G: LieGroup<T>>(
    scene: &Scene,
    r: Rotation,
    s: Scalar,
    opts: &JacobianOptions,
    interrupt: &AtomicBool,
) -> Result<(Vec<JacobianEntry>, bool), JacobianError> {
    let mut world = scene.build::<T, G>()?.world;
    // As the solver sees the constraints: within a substep (motors have their start).
    let _ = world.begin_next_substep();
    Ok(check_world_until(&world, r, s, opts, interrupt)?)
}

/// Checks every constraint and system row block of `scene` in all four combinations.
///
/// # Errors
/// [`JacobianError`] if the scene cannot be built or a constraint or row block cannot
/// be checked.
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
