//! Checking a constraint's (or a system row block's) analytic gradient against finite
//! differences, with one call.
//!
//! A [`Constraint`] hands the solver its value C(x) and, per body slot, the n×6 block
//! `[∂C/∂p | D_R C]` of (59): three columns for world-frame position perturbations
//! `p + δp` (per m) and three for body-frame rotation perturbations `R ⊞ δθ` (per rad,
//! eq. 14/16). A wrong sign or a missing term there does not make the solver fail
//! loudly: it converges more slowly, drifts, or gains energy. [`check_gradient`]
//! compares those blocks with central differences of C under exactly these
//! perturbations ([`numdiff::poses_to_vector`](crate::lie::numdiff::poses_to_vector)), and [`check_gradient_perturbed`] does
//! so at the given state and at random states around it, so a constraint written
//! outside this crate can be verified in a unit test:
//!
//! ```
//! use lie_xpbd::lie::{LieGroup, SO3Matrix};
//! use lie_xpbd::xpbd::{
//!     check_gradient_perturbed, Body, BodyId, Constraint, ConstraintEval, MAX_BODIES,
//! };
//! use nalgebra::{Matrix3, Vector3};
//! use rand::SeedableRng;
//!
//! /// Holds the point r (m, body frame) of body 0 at the world origin: C = p + R r
//! /// (3 rows, m).
//! struct Pin(Vector3<f64>);
//!
//! impl Constraint<f64, SO3Matrix<f64>> for Pin {
//!     fn name(&self) -> String {
//!         "pin".to_string()
//!     }
//!     fn kind(&self) -> &'static str {
//!         "pin"
//!     }
//!     fn dim(&self) -> usize {
//!         3
//!     }
//!     fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
//!         [Some(BodyId(0)), None]
//!     }
//!     fn compliance(&self, _row: usize) -> f64 {
//!         0.0
//!     }
//!     fn evaluate(&self, bodies: &[Body<f64, SO3Matrix<f64>>], out: &mut ConstraintEval<f64>) {
//!         let (p, r) = (bodies[0].position, &bodies[0].orientation);
//!         out.value.fixed_rows_mut::<3>(0).copy_from(&(p + r.act(&self.0)));
//!         // ∂C/∂p = I (per m); D_R(R r) = −R r̂ (20), body frame (per rad).
//!         let g = &mut out.gradient[0];
//!         g.fixed_view_mut::<3, 3>(0, 0).copy_from(&Matrix3::identity());
//!         g.fixed_view_mut::<3, 3>(0, 3).copy_from(&r.jacobian_act(&self.0));
//!     }
//! }
//!
//! let r = SO3Matrix::<f64>::exp(&Vector3::new(0.2, -0.4, 0.1));
//! let bodies = [Body::dynamic(1.0, Vector3::repeat(0.1), Vector3::new(0.1, -0.5, 0.0), r).unwrap()];
//! let pin = Pin(Vector3::new(0.0, 0.5, 0.0));
//! let mut rng = rand::rngs::StdRng::seed_from_u64(1);
//! let report = check_gradient_perturbed(&pin, &bodies, &mut rng, 20, 0.5, 0.5).unwrap();
//! assert!(report.passed(), "{report}");
//! assert_eq!((report.kind, report.states_checked), ("pin", 21));
//! ```
//!
//! # Row blocks of systems
//! A [`System`] (a rod) is not a [`Constraint`], but it may expose its rows as row
//! blocks ([`System::row_block`], [`System::evaluate_row_block`]; module docs of
//! `xpbd::world::systems`): n ≤ 6 rows over any number of bodies up to
//! [`MAX_BLOCK_BODIES`](super::MAX_BLOCK_BODIES) = 4 (a cubic rod element's nodes),
//! with one n×6 block `[∂C/∂p | D_R C]` per body. [`check_row_block`] and
//! [`check_row_block_perturbed`] check one block exactly as a constraint is checked:
//! every body of the block (fixed ones too) is perturbed by `p + δp` and `R ⊞ δθ`,
//! with the same metric, step and tolerance. `lie-xpbd check-jacobians` checks every
//! row block of every system of a scene: each Gauss point of a finite-element rod
//! (kind `"rod gauss point"`) and each joint of a rigid-chain rod (`"rod joint"`).
//!
//! # Error metric
//! At one state, with J the analytic gradient and J_fd the central differences, both
//! n × 6k for the k distinct bodies the constraint or row block names (a body named in both slots
//! gets the sum of its two blocks, which is what perturbing it measures), the error is
//! [`numdiff::max_relative_error`](crate::lie::numdiff::max_relative_error):
//!
//! ```text
//! err = max_ij |J_ij − J_fd,ij| / max(1, max_ij |J_ij|)
//! ```
//!
//! i.e. absolute for gradients with entries below one and relative to the largest
//! analytic entry above, so zero entries (most of a joint's blocks) cannot blow it up.
//! It is computed in `T`; any NaN or infinity in either matrix (a constraint that
//! evaluates to NaN, a gradient with an infinite entry) makes it +∞, which always fails. (Mismatched shapes, the other
//! case that function guards against, cannot occur here: both matrices are built as
//! n × 6k.) The reported error is the worst over all states checked, with the entry
//! where |J − J_fd| is largest at that state ([`GradientCheck::worst_row`],
//! [`GradientCheck::worst_body_slot`], [`GradientCheck::worst_column`]).
//!
//! # Step and tolerance
//! The step is [`Real::fd_step`] (1e-5 in f64, 1e-3 in f32, in m for position columns
//! and rad for rotation columns), which balances the O(h²) truncation and the O(ε/h)
//! round-off of a central difference (see [`Real`]). The tolerance is
//! [`Real::fd_tolerance`] (1e-7 in f64, 2e-3 in f32), the bound these differences meet
//! on this crate's own Jacobians and joints, scaled by `max(1, L/1 m)` with L the
//! largest distance from the origin of a checked body (over all states checked):
//! constraints on positions subtract world points of size L, whose round-off ε·L/h
//! grows with L, not the gradient's error (`tests/joint/gradients.rs` measured 8.7e-4
//! in f32 with L ≤ 2.7 m). A sign error or a missing term gives an error of order one,
//! far above either tolerance near the origin. Far from it the scaled tolerance is too
//! loose to tell: from [`MAX_CONCLUSIVE_TOLERANCE`] = 0.1 on (L ≥ 50 m in f32, 1e6 m in
//! f64) the check is reported inconclusive ([`GradientCheck::conclusive`] false, and
//! [`GradientCheck::passed`] false with it); check such a constraint with its bodies
//! moved near the origin. Lever arms inside the constraint (joint frame offsets)
//! are invisible here; keep them O(1 m) or compare
//! [`GradientCheck::worst_relative_error`] with a tolerance of your own.
//!
//! Rod rows need no other tolerance. Their gradient entries are of order 1/l (l the
//! element or segment length: ∂v/∂pₖ = (φₖ,ξ/l)Rᵀ, D_R u ∝ Γ⁻¹/l), so the metric is
//! relative to max|J| ≳ 1/l there. The value v = Rᵀ(1/l)Σφⱼ,ξ pⱼ differences world
//! points of size L, round-off ε·L/l, whose central difference errs by ε·L/(l h):
//! relative to 1/l that is ε·L/h, the position scaling above; the curvature rows
//! difference relative rotations ψ = Rⱼ ⊟ R₀ (round-off ε/l in u, ε/h relative), and
//! their truncation error h²·|∂³C|/6 is of order h² relative to 1/l away from the
//! branch cut. Measured by `lie-xpbd check-jacobians` (100 states, nodes perturbed by
//! up to 0.1 m and 1 rad) on the shipped rod scenes (linear and cubic elements, up to
//! L = 1.4 m), worst over them and both representations, f64 / f32: Gauss points
//! 6.9e-11 / 3.4e-4, and the same scenes as rigid chains 6.9e-11 / 3.4e-4, i.e. at most
//! 17 % of the tolerance; quadratic and cubic springs (40 elements, each turning by
//! 2.4 rad, so perturbed by 0.34 rad, 300 states) 1.1e-10 / 5.2e-4. A flipped sign, or
//! the curvature rows' missing ∂Γ/∂θ term at large relative nodal rotations, errs by
//! more than 1e-2 (`tests/rod/check_jacobians.rs`).
//!
//! # Validity
//! Finite differences are meaningless across a discontinuity of C. Constraints on
//! relative rotations through Log (every joint's rotation rows) jump where that
//! rotation reaches π, the branch cut (see [`crate::lie::numdiff`]): check states whose
//! relative rotations stay at least 10·h (and better 0.1 rad) below π. A random
//! perturbation of each body by at most `rotation_scale` rad changes a relative rotation
//! by at most 2·`rotation_scale`, which is why [`check_gradient_perturbed`] accepts at
//! most [`MAX_ROTATION_SCALE`] = 1 rad: from a state with relative rotations up to
//! π − 2.1 rad every perturbed state stays ≥ 0.1 rad from the cut. A rod's rows take
//! Log of the relative rotations between the bodies of one block (Rⱼ ⊟ R₀ in an
//! element (100), Rⱼ₊₁ ⊟ Rⱼ at a joint (90)): perturb a block only by a
//! `rotation_scale` that keeps those below π − 0.1 rad (`lie-xpbd check-jacobians`
//! lowers it per block). Inequality rows
//! ([`Constraint::lambda_bounds`]) are checked like equality rows: C itself must be
//! differentiable at the states checked. A state where the constraint reports a point
//! of non-differentiability within the differences' reach ([`Constraint::kink_distance`],
//! [`KINK_REACH`]) is skipped and counted ([`GradientCheck::states_skipped`]): a joint
//! limit at the middle of its range (where its row switches limits), a swing limit at
//! zero swing (the cone point of (77)), a velocity motor before its first substep.

use super::body::Body;
use super::constraint::Constraint;
use super::error::XpbdError;
use super::world::System;
use crate::lie::{LieGroup, Real};
use rand::Rng;
use std::fmt;

mod setup;
use setup::Setup;

/// The tolerance from which a check is inconclusive ([`GradientCheck::conclusive`],
/// never passed): an error of order one, such as a missing rotation block at a lever
/// arm of a few tenths of a metre, can then be within the tolerance. The tolerance
/// [`Real::fd_tolerance`]·max(1, L/1 m) reaches it at L = 50 m in f32 and 1e6 m in f64.
pub const MAX_CONCLUSIVE_TOLERANCE: f64 = 0.1;

/// Largest `rotation_scale` (rad) accepted by [`check_gradient_perturbed`]: two bodies
/// perturbed by at most 1 rad each change a relative rotation by at most 2 rad, so a
/// state with relative rotations ≤ π − 2.1 rad keeps every perturbed one ≥ 0.1 rad
/// away from Log's branch cut at π.
pub const MAX_ROTATION_SCALE: f64 = 1.0;

/// The result of a gradient check ([`check_gradient`], [`check_gradient_perturbed`]):
/// the worst error over the states checked, where it occurred, and the tolerance it is
/// judged against. `Display` prints all of it in one line, for assertion messages.
#[derive(Debug, Clone, PartialEq)]
pub struct GradientCheck {
    /// [`Constraint::name`] of the constraint checked, or the row block's
    /// [`RowBlockInfo::name`](super::RowBlockInfo::name).
    pub constraint: String,
    /// [`Constraint::kind`] of the constraint checked (e.g. `"revolute"`, `"custom"`),
    /// or the row block's kind (`"rod gauss point"`, `"rod joint"`).
    pub kind: &'static str,
    /// The scalar type, [`Real::NAME`] (`"f32"` or `"f64"`).
    pub scalar: &'static str,
    /// Worst `max|J − J_fd| / max(1, max|J|)` over the states checked (module docs),
    /// dimensionless; `f64::INFINITY` if a value or gradient entry was NaN or infinite.
    pub worst_relative_error: f64,
    /// The tolerance the error is judged against: [`Real::fd_tolerance`] ·
    /// max(1, L/1 m), L the largest |position| (m) of a checked body over the states.
    pub tolerance: f64,
    /// The state of the worst error: 0 = the state given, i ≥ 1 = the i-th random
    /// perturbation of it.
    pub worst_state: usize,
    /// Row (0-based, < [`Constraint::dim`] or the block's
    /// [`RowBlockInfo::dim`](super::RowBlockInfo::dim)) of the entry with the largest
    /// |J − J_fd| at the worst state.
    pub worst_row: usize,
    /// Body slot of that entry: 0 or 1 as in [`Constraint::bodies`], or for a row
    /// block the position in [`RowBlockInfo::bodies`](super::RowBlockInfo::bodies)
    /// (0 to 3); for a body named in two slots, the first.
    pub worst_body_slot: usize,
    /// Column of that entry in the slot's block: 0..3 = ∂C/∂p along world x, y, z (per
    /// m), 3..6 = D_R C about body x, y, z (per rad).
    pub worst_column: usize,
    /// The analytic gradient entry there (per m or per rad).
    pub analytic: f64,
    /// The finite-difference estimate of that entry (per m or per rad).
    pub finite_difference: f64,
    /// Number of states checked (the given one plus the random ones), not counting
    /// the skipped ones.
    pub states_checked: usize,
    /// Number of states not checked because C is not differentiable within the reach of
    /// the finite differences there ([`Constraint::kink_distance`] below
    /// [`KINK_REACH`]·h·max(1, L/1 m)): e.g. a two-sided joint limit at the middle of
    /// its range, where its row switches from one limit to the other. 0 for row blocks.
    pub states_skipped: usize,
}

impl GradientCheck {
    /// Whether the check could tell a wrong gradient from a right one: the tolerance
    /// is below [`MAX_CONCLUSIVE_TOLERANCE`] (module docs, "Step and tolerance").
    /// False for bodies so far from the origin that the round-off of the differences
    /// could hide an error of order one (beyond about 50 m in f32, 1e6 m in f64).
    pub fn conclusive(&self) -> bool {
        self.tolerance < MAX_CONCLUSIVE_TOLERANCE
    }

    /// Whether the check is conclusive ([`Self::conclusive`]) and the worst error is
    /// within the tolerance (false if it is NaN or ∞).
    pub fn passed(&self) -> bool {
        self.conclusive() && self.worst_relative_error <= self.tolerance
    }

    /// The worst error as a multiple of the tolerance (≤ 1 when passed).
    pub fn ratio(&self) -> f64 {
        self.worst_relative_error / self.tolerance
    }
}

impl fmt::Display for GradientCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const COLUMNS: [&str; 6] = ["dp.x", "dp.y", "dp.z", "dθ.x", "dθ.y", "dθ.z"];
        write!(
            f,
            "gradient of '{}' ({}, {}): {} with worst relative error {:.3e} (tolerance {:.3e}) \
             over {} state(s); worst at state {}, row {}, body slot {}, column {} ({}): \
             analytic {:.6e}, finite difference {:.6e}",
            self.constraint,
            self.kind,
            self.scalar,
            if !self.conclusive() {
                "INCONCLUSIVE (tolerance too loose, bodies too far from the origin)"
            } else if self.passed() {
                "passed"
            } else {
                "FAILED"
            },
            self.worst_relative_error,
            self.tolerance,
            self.states_checked,
            self.worst_state,
            self.worst_row,
            self.worst_body_slot,
            self.worst_column,
            COLUMNS.get(self.worst_column).unwrap_or(&"?"),
            self.analytic,
            self.finite_difference,
        )?;
        if self.states_skipped > 0 {
            write!(
                f,
                "; {} state(s) skipped where C is not differentiable",
                self.states_skipped
            )?;
        }
        Ok(())
    }
}

/// Checks the analytic gradient of `constraint` at the state `bodies` (the world's
/// whole body list, indexed by [`BodyId`](super::BodyId)) against central finite differences of
/// world-frame position and body-frame boxplus rotation perturbations of every body it
/// names. Metric, step and tolerance are in the module docs; the result fails
/// ([`GradientCheck::passed`] is false) when the gradient is wrong or not finite.
///
/// An example, on a constraint written for it, is in the module docs.
///
/// # Errors
/// Invalid input, never a wrong gradient: [`XpbdError::BadDimension`] unless
/// 1 ≤ [`Constraint::dim`] ≤ [`MAX_ROWS`](super::constraint::MAX_ROWS); [`XpbdError::NoDynamicBody`] if both slots
/// are the world (there is no gradient to check); [`XpbdError::UnknownBody`] if a slot
/// names a body not in `bodies`; [`XpbdError::NonFinite`] if a named body's position or
/// orientation is not finite.
pub fn check_gradient<T: Real, G: LieGroup<T>>(
    constraint: &dyn Constraint<T, G>,
    bodies: &[Body<T, G>],
) -> Result<GradientCheck, XpbdError> {
    Ok(Setup::for_constraint(constraint, bodies)?.check_given(bodies))
}

/// As [`check_gradient`], at the state `bodies` and at `states` random states around
/// it; reports the worst error over all `states + 1`. Each random state moves every
/// body the constraint names (and no other) by a world-frame offset of uniformly random
/// direction and length uniform in [0, `position_scale`] m, and rotates it by `R ⊞ δθ`
/// with δθ of uniformly random direction and angle uniform in [0, `rotation_scale`]
/// rad. With a seeded `rng` the check is reproducible.
///
/// Start from a state where the constraint is smooth and keep `rotation_scale` small
/// enough that no relative rotation the constraint takes Log of gets near π (module
/// docs, Validity).
///
/// # Errors
/// As [`check_gradient`], and [`XpbdError::InvalidOption`] naming `position_scale`
/// unless it is finite and ≥ 0 (m), or `rotation_scale` unless it is in
/// [0, [`MAX_ROTATION_SCALE`]] rad.
pub fn check_gradient_perturbed<T, G, R>(
    constraint: &dyn Constraint<T, G>,
    bodies: &[Body<T, G>],
    rng: &mut R,
    states: usize,
    position_scale: f64,
    rotation_scale: f64,
) -> Result<GradientCheck, XpbdError>
where
    T: Real,
    G: LieGroup<T>,
    R: Rng + ?Sized,
{
    check_scales(position_scale, rotation_scale)?;
    let setup = Setup::for_constraint(constraint, bodies)?;
    Ok(setup.check_perturbed(bodies, rng, states, position_scale, rotation_scale))
}

/// Checks the analytic gradient of row block `k` of `system` (module docs of
/// [`crate::xpbd::world`]'s systems, [`System::row_block`]) at the state `bodies` (the
/// world's whole body list) against central finite differences, exactly as
/// [`check_gradient`] checks a constraint, over the block's bodies, however many
/// (1 to [`MAX_BLOCK_BODIES`](super::MAX_BLOCK_BODIES); fixed bodies are perturbed and
/// checked like the others: the rows depend on their poses). The report's
/// [`GradientCheck::constraint`] and [`GradientCheck::kind`] are the block's
/// [`RowBlockInfo::name`](super::RowBlockInfo::name) and kind, and
/// [`GradientCheck::worst_body_slot`] indexes the block's bodies.
///
/// A rod's Gauss points are checked so in the rod module's docs of `FemRod`.
///
/// # Errors
/// Invalid input, never a wrong gradient: [`XpbdError::UnknownRowBlock`] unless
/// `k` < [`System::row_block_count`] (and [`System::row_block`] describes it);
/// [`XpbdError::UnknownBody`] if the block names a body not in `bodies`;
/// [`XpbdError::NonFinite`] if a block body's position or orientation is not finite;
/// any error of [`System::evaluate_row_block`] at the state given.
pub fn check_row_block<T: Real, G: LieGroup<T>>(
    system: &dyn System<T, G>,
    k: usize,
    bodies: &[Body<T, G>],
) -> Result<GradientCheck, XpbdError> {
    Ok(Setup::for_row_block(system, k, bodies)?.check_given(bodies))
}

/// As [`check_row_block`], at the state `bodies` and at `states` random states around
/// it, each moving every body of the block (and no other) as
/// [`check_gradient_perturbed`] does; reports the worst error over all `states + 1`.
///
/// With the block's bodies perturbed independently by up to `rotation_scale` rad each,
/// a relative rotation between two of them changes by up to 2·`rotation_scale`: start
/// from a state whose relative rotations are at most π − 0.1 − 2·`rotation_scale`
/// (module docs, Validity), e.g. rod elements turning by at most 1.04 rad with the
/// largest scale, 1 rad.
///
/// # Errors
/// As [`check_row_block`] and [`check_gradient_perturbed`].
pub fn check_row_block_perturbed<T, G, R>(
    system: &dyn System<T, G>,
    k: usize,
    bodies: &[Body<T, G>],
    rng: &mut R,
    states: usize,
    position_scale: f64,
    rotation_scale: f64,
) -> Result<GradientCheck, XpbdError>
where
    T: Real,
    G: LieGroup<T>,
    R: Rng + ?Sized,
{
    check_scales(position_scale, rotation_scale)?;
    let setup = Setup::for_row_block(system, k, bodies)?;
    Ok(setup.check_perturbed(bodies, rng, states, position_scale, rotation_scale))
}

/// [`XpbdError::InvalidOption`] unless `position_scale` is finite and ≥ 0 and
/// `rotation_scale` is in [0, [`MAX_ROTATION_SCALE`]].
fn check_scales(position_scale: f64, rotation_scale: f64) -> Result<(), XpbdError> {
    if !(position_scale.is_finite() && position_scale >= 0.0) {
        return Err(XpbdError::InvalidOption {
            name: "position_scale",
            value: position_scale.to_string(),
            reason: "the largest random position offset must be finite and >= 0 (m)",
        });
    }
    if !(0.0..=MAX_ROTATION_SCALE).contains(&rotation_scale) {
        return Err(XpbdError::InvalidOption {
            name: "rotation_scale",
            value: rotation_scale.to_string(),
            reason: "the largest random rotation must be in [0, 1] rad, so that perturbed \
                     relative rotations stay away from Log's branch cut at π",
        });
    }
    Ok(())
}

/// A state is skipped by the checker when the constraint's [`Constraint::kink_distance`]
/// is below `KINK_REACH`·h·max(1, L/1 m) (h = [`Real::fd_step`], L the largest |position|
/// of a checked body): a central difference moves one pose coordinate by ±h, which
/// moves a joint angle by at most |∇θ|·h (|∇θ| ≤ |Γ⁻¹| < 2 below 2.5 rad) and a slide by
/// at most h·max(1, lever arm); 10 covers both with margin, and is small enough that
/// random states are skipped with probability ~20·h/(range of the perturbation).
pub const KINK_REACH: f64 = 10.0;

/// Whether the checker skips the state `bodies` for `constraint`: its
/// [`Constraint::kink_distance`] is NaN or at most [`KINK_REACH`]·h·max(1, L/1 m), with
/// h = [`Real::fd_step`] and L the largest |position| (m) of the bodies it names (an
/// unknown body id counts as no kink: the check itself reports it).
pub fn within_kink_reach<T: Real, G: LieGroup<T>>(
    constraint: &dyn Constraint<T, G>,
    bodies: &[Body<T, G>],
) -> bool {
    constraint.kink_distance(bodies).is_some_and(|d| {
        let scale = constraint
            .bodies()
            .iter()
            .flatten()
            .filter_map(|b| bodies.get(b.0))
            .map(|b| b.position.norm().to_f64())
            .fold(1.0, f64::max);
        let d = d.to_f64();
        d.is_nan() || d <= KINK_REACH * T::fd_step().to_f64() * scale
    })
}
