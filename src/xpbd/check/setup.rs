//! The checker's machinery behind [`super::check_gradient`] and the other entry points:
//! a validated constraint or row block ([`Setup`]), its evaluation at perturbed
//! states, the finite differences, the error metric and the report.

use super::GradientCheck;
use crate::lie::numdiff;
use crate::lie::real::c;
use crate::lie::Pose;
use crate::lie::{LieGroup, Real};
use crate::xpbd::body::{Body, BodyId};
use crate::xpbd::constraint::{Constraint, ConstraintEval};
use crate::xpbd::error::XpbdError;
use crate::xpbd::world::{RowBlockEval, System};
use nalgebra::{DMatrix, DVector, Vector3};
use rand::{Rng, RngExt};
use std::cell::RefCell;

/// A vector of uniformly random direction and length uniform in [0, `len`].
fn random_vector<T: Real, R: Rng + ?Sized>(rng: &mut R, len: f64) -> Vector3<T> {
    let z: f64 = rng.random_range(-1.0..=1.0);
    let phi: f64 = rng.random_range(0.0..std::f64::consts::TAU);
    let l: f64 = len * rng.random::<f64>();
    let s = (1.0 - z * z).max(0.0).sqrt();
    Vector3::new(c(l * s * phi.cos()), c(l * s * phi.sin()), c(l * z))
}

/// The worst error at one or more states and where it occurred.
#[derive(Debug, Clone, Copy)]
struct Worst {
    error: f64,
    state: usize,
    row: usize,
    slot: usize,
    column: usize,
    analytic: f64,
    fd: f64,
    /// max(1, L/1 m), the tolerance factor.
    scale: f64,
}

impl Worst {
    /// No error yet (no state checked), tolerance factor `scale`.
    fn none(scale: f64) -> Self {
        Self {
            error: 0.0,
            state: 0,
            row: 0,
            slot: 0,
            column: 0,
            analytic: 0.0,
            fd: 0.0,
            scale,
        }
    }
}

/// What is checked: a constraint, or one row block of a system.
#[derive(Clone, Copy)]
enum Source<'a, T: Real, G: LieGroup<T>> {
    Constraint(&'a dyn Constraint<T, G>),
    RowBlock {
        system: &'a dyn System<T, G>,
        index: usize,
    },
}

/// A validated constraint or row block: its name, kind, rows and the distinct bodies
/// it names, each with the slots naming it (a constraint's two slots, or the positions
/// in a block's body list).
pub(super) struct Setup<'a, T: Real, G: LieGroup<T>> {
    source: Source<'a, T, G>,
    name: String,
    kind: &'static str,
    dim: usize,
    distinct: Vec<(usize, Vec<usize>)>,
}

impl<'a, T: Real, G: LieGroup<T>> Setup<'a, T, G> {
    pub(super) fn for_constraint(
        constraint: &'a dyn Constraint<T, G>,
        bodies: &[Body<T, G>],
    ) -> Result<Self, XpbdError> {
        let (dim, slots) = crate::xpbd::constraint::checked_slots(constraint, bodies)?;
        let setup = Self::new(
            Source::Constraint(constraint),
            constraint.name(),
            constraint.kind(),
            dim,
            &slots,
            bodies,
        )?;
        if setup.distinct.is_empty() {
            return Err(XpbdError::NoDynamicBody {
                constraint: constraint.name(),
            });
        }
        Ok(setup)
    }

    pub(super) fn for_row_block(
        system: &'a dyn System<T, G>,
        index: usize,
        bodies: &[Body<T, G>],
    ) -> Result<Self, XpbdError> {
        let info = system
            .row_block(index)
            .filter(|_| index < system.row_block_count())
            .ok_or_else(|| XpbdError::UnknownRowBlock {
                system: system.name(),
                index,
                count: system.row_block_count(),
            })?;
        let mut slots = Vec::with_capacity(info.bodies().len());
        for &BodyId(b) in info.bodies() {
            if b >= bodies.len() {
                return Err(XpbdError::UnknownBody {
                    constraint: info.name().to_string(),
                    body: b,
                    count: bodies.len(),
                });
            }
            slots.push(Some(b));
        }
        let setup = Self::new(
            Source::RowBlock { system, index },
            info.name().to_string(),
            info.kind(),
            info.dim(),
            &slots,
            bodies,
        )?;
        // Errors the block reports at a valid state are input errors too.
        system.evaluate_row_block(index, bodies, &mut RowBlockEval::default())?;
        Ok(setup)
    }

    fn new(
        source: Source<'a, T, G>,
        name: String,
        kind: &'static str,
        dim: usize,
        slots: &[Option<usize>],
        bodies: &[Body<T, G>],
    ) -> Result<Self, XpbdError> {
        let mut distinct: Vec<(usize, Vec<usize>)> = Vec::new();
        for (slot, b) in slots.iter().enumerate() {
            let Some(b) = *b else { continue };
            let body = &bodies[b];
            let pose_finite = body.position.iter().all(|x| x.is_finite())
                && body
                    .orientation
                    .to_quaternion()
                    .coords
                    .iter()
                    .all(|x| x.is_finite());
            if !pose_finite {
                return Err(XpbdError::NonFinite {
                    what: format!("body {b} pose"),
                });
            }
            match distinct.iter_mut().find(|(d, _)| *d == b) {
                Some((_, slots)) => slots.push(slot),
                None => distinct.push((b, vec![slot])),
            }
        }
        Ok(Self {
            source,
            name,
            kind,
            dim,
            distinct,
        })
    }

    /// C and the gradient blocks (per slot) at the state `bodies`.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut RowBlockEval<T>) {
        match self.source {
            Source::Constraint(constraint) => {
                let mut eval = ConstraintEval::default();
                constraint.evaluate(bodies, &mut eval);
                out.value = eval.value;
                for (o, g) in out.gradient.iter_mut().zip(&eval.gradient) {
                    *o = *g;
                }
            }
            Source::RowBlock { system, index } => {
                if system.evaluate_row_block(index, bodies, out).is_err() {
                    // Not after the trial evaluation of `for_row_block`; fails as ∞.
                    out.value.fill(c(f64::NAN));
                }
            }
        }
    }

    /// max(1, largest |position| / 1 m) of the named bodies.
    fn position_scale(&self, bodies: &[Body<T, G>]) -> f64 {
        self.distinct
            .iter()
            .map(|&(b, _)| bodies[b].position.norm().to_f64())
            .fold(1.0, f64::max)
    }

    /// Whether the constraint is not differentiable within the reach of the finite
    /// differences at the state `work` ([`Constraint::kink_distance`] below
    /// [`KINK_REACH`]·h·max(1, L/1 m), or NaN). Row blocks are smooth.
    fn at_kink(&self, work: &[Body<T, G>]) -> bool {
        let Source::Constraint(constraint) = self.source else {
            return false;
        };
        super::within_kink_reach(constraint, work)
    }

    /// The check at the state `bodies` alone (none if it is at a kink).
    pub(super) fn check_given(&self, bodies: &[Body<T, G>]) -> GradientCheck {
        if self.at_kink(bodies) {
            return self.report(Worst::none(self.position_scale(bodies)), 0, 1);
        }
        let mut work = bodies.to_vec();
        let mut worst = self.check_state(&mut work);
        worst.scale = worst.scale.max(self.position_scale(bodies));
        self.report(worst, 1, 0)
    }

    /// The check at the state `bodies` and `states` random states around it (the
    /// docs of [`super::check_gradient_perturbed`]); the scales are valid.
    pub(super) fn check_perturbed<R: Rng + ?Sized>(
        &self,
        bodies: &[Body<T, G>],
        rng: &mut R,
        states: usize,
        position_scale: f64,
        rotation_scale: f64,
    ) -> GradientCheck {
        let mut work = bodies.to_vec();
        let mut skipped = 0;
        let mut worst = if self.at_kink(bodies) {
            skipped += 1;
            Worst::none(1.0)
        } else {
            self.check_state(&mut work)
        };
        worst.scale = worst.scale.max(self.position_scale(bodies));
        for i in 1..=states {
            // Only the checked bodies differ from `bodies`: set them from it.
            for &(b, _) in &self.distinct {
                let dp = random_vector::<T, R>(rng, position_scale);
                let dtheta = random_vector::<T, R>(rng, rotation_scale);
                work[b].position = bodies[b].position + dp;
                work[b].orientation = bodies[b].orientation.boxplus(&dtheta);
            }
            let scale = worst.scale.max(self.position_scale(&work));
            if self.at_kink(&work) {
                skipped += 1;
                worst.scale = scale;
                continue;
            }
            let mut w = self.check_state(&mut work);
            w.state = i;
            if w.error > worst.error {
                worst = w;
            }
            worst.scale = scale;
        }
        self.report(worst, states + 1 - skipped, skipped)
    }

    /// The error at the state `work` (state index 0, scale 1); `work` is left as given.
    fn check_state(&self, work: &mut [Body<T, G>]) -> Worst {
        let dim = self.dim;
        let k = self.distinct.len();
        let poses: Vec<Pose<T, G>> = self
            .distinct
            .iter()
            .map(|&(b, _)| Pose::new(work[b].position, work[b].orientation))
            .collect();
        let mut out = RowBlockEval::default();
        self.evaluate(work, &mut out);
        let cell = RefCell::new(&mut *work);
        let f = |ps: &[Pose<T, G>]| {
            let mut w = cell.borrow_mut();
            for (&(b, _), p) in self.distinct.iter().zip(ps) {
                w[b].position = p.position;
                w[b].orientation = p.rotation;
            }
            let mut out = RowBlockEval::default();
            self.evaluate(&w, &mut out);
            DVector::from_column_slice(&out.value.as_slice()[..dim])
        };
        let fd = numdiff::poses_to_vector(f, &poses, T::fd_step());
        for (&(b, _), p) in self.distinct.iter().zip(&poses) {
            work[b].position = p.position;
            work[b].orientation = p.rotation;
        }
        let mut analytic = DMatrix::<T>::zeros(dim, 6 * k);
        for (j, (_, slots)) in self.distinct.iter().enumerate() {
            for &s in slots {
                let mut block = analytic.view_mut((0, 6 * j), (dim, 6));
                block += out.gradient[s].rows(0, dim);
            }
        }
        let e = numdiff::max_relative_error(&analytic, &fd);
        // +∞ for NaN or infinite entries (see `max_relative_error`).
        let error = e.to_f64();
        // Where |J − J_fd| is largest (the first non-finite difference, if any).
        let mut at = (0, 0);
        let mut largest = -1.0f64;
        for col in 0..6 * k {
            for row in 0..dim {
                let d = (analytic[(row, col)].to_f64() - fd[(row, col)].to_f64()).abs();
                let d = if d.is_nan() { f64::INFINITY } else { d };
                if d > largest {
                    largest = d;
                    at = (row, col);
                }
            }
        }
        let (row, col) = at;
        Worst {
            error,
            state: 0,
            row,
            slot: self.distinct[col / 6].1[0],
            column: col % 6,
            analytic: analytic[(row, col)].to_f64(),
            fd: fd[(row, col)].to_f64(),
            scale: 1.0,
        }
    }

    fn report(&self, w: Worst, states: usize, skipped: usize) -> GradientCheck {
        GradientCheck {
            constraint: self.name.clone(),
            kind: self.kind,
            scalar: T::NAME,
            worst_relative_error: w.error,
            tolerance: T::fd_tolerance().to_f64() * w.scale,
            worst_state: w.state,
            worst_row: w.row,
            worst_body_slot: w.slot,
            worst_column: w.column,
            analytic: w.analytic,
            finite_difference: w.fd,
            states_checked: states,
            states_skipped: skipped,
        }
    }
}
