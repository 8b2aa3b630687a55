//! Diagnostics of a [`World`]: the residuals (51)–(52) and the total energy.

use super::{Residuals, Slot, System, World};
use crate::lie::{LieGroup, Real};
use crate::xpbd::body::Body;
use crate::xpbd::constraint::{ConstraintEval, MAX_BODIES};
#[cfg(doc)]
use crate::xpbd::{Constraint, SolverOptions, XpbdError};
use nalgebra::{SVector, Vector3};

impl<T: Real, G: LieGroup<T>> World<T, G> {
    /// Primal and constraint residuals (51)–(52) at the current state, with the λ and
    /// inertial predictions of the last substep. Before the first step both are
    /// computed with λ = 0 and x̃ = x.
    ///
    /// If a body's state is non-finite (a step returned [`XpbdError::Diverged`]), both
    /// residuals are NaN: the state satisfies nothing, and a finite number computed
    /// from the finite parts (e.g. a constraint residual of 0 with no constraint
    /// touching the diverged body) would misreport it.
    ///
    /// Allocates one buffer of 6 scalars per body (the time step itself allocates
    /// nothing).
    pub fn residuals(&self) -> Residuals<T> {
        if self.bodies.iter().any(|b| !b.is_finite()) {
            return Residuals {
                primal: crate::lie::real::c(f64::NAN),
                constraint: crate::lie::real::c(f64::NAN),
            };
        }
        let mut primal = vec![SVector::<T, 6>::zeros(); self.bodies.len()];
        let csq = self.primal_vectors(&mut ConstraintEval::default(), &mut primal);
        let psq = primal
            .iter()
            .fold(T::zero(), |acc, r| acc + r.norm_squared());
        Residuals {
            primal: psq.sqrt(),
            constraint: csq.sqrt(),
        }
    }

    /// Writes the primal residual (51) of every body into `primal` (one per body, zero
    /// for fixed bodies): 𝓜(x ⊟ x̃) − Σ ∇C(x)ᵀλ over the enabled constraints and the
    /// systems, at the current state, with x ⊟ x̃ from the corrections applied since
    /// the prediction ([`Body::correction_since_prediction`]); returns the squared
    /// constraint residual (52), C + α̃λ over the rows, where a bounded row
    /// ([`Constraint::lambda_bounds`]) whose λ sits at a bound with C + α̃λ pushing it
    /// outward (an inactive limit, a saturated motor) counts 0: the residual of its
    /// complementarity conditions.
    /// `eval` is scratch. Allocates nothing.
    pub(super) fn primal_vectors(
        &self,
        eval: &mut ConstraintEval<T>,
        primal: &mut [SVector<T, 6>],
    ) -> T {
        primal_vectors_of(
            self.options.substep_dt(),
            &self.bodies,
            &self.slots,
            &self.systems,
            eval,
            primal,
            true,
        )
    }

    /// Whether [`SolverOptions::primal_correction`] acts: false while any enabled
    /// constraint has a gradient that jumps at C = 0
    /// ([`Constraint::is_smooth`]), e.g. the normed joints of Section 5.1, and false in
    /// a world holding a [`System`] (a rod). The pass is an explicit step
    /// x ← x ⊞ (−𝓜⁻¹r): it contracts only while 𝓜⁻¹ times the change of ∇Cᵀλ per unit
    /// move stays below 1, and a rod's stiff rows acting on its light nodal inertias
    /// exceed that. Measured: a cantilever of 5 cubic elements (E = 5 MPa, d = 0.1 m,
    /// L = 1 m, Δt = 5e-3 s, one substep) along world x gained 6.7e5 J within 3 s with
    /// the pass and diverged without damping, from the round-off of its out-of-plane
    /// components (along z, exactly planar, it stayed put).
    pub fn primal_correction_applies(&self) -> bool {
        self.systems.is_empty() && self.slots.iter().all(|s| !s.enabled || s.continuous)
    }

    /// The primal correction pass ([`SolverOptions::primal_correction`]): with the
    /// primal residual r = 𝓜(x ⊟ x̃) − ∇C(x)ᵀλ of (51) at the end of the projections,
    /// moves every dynamic body by x ← x ⊞ (−𝓜⁻¹r) (position by −r_p/m, world frame;
    /// orientation by −I⁻¹r_θ, body frame). λ is kept, so the constraint residual (52)
    /// changes only by ∇C·𝓜⁻¹r, and the new primal residual is the change of ∇Cᵀλ
    /// over that move. The substep's velocity update must follow before anything reads
    /// the bodies' orientations: it composes them (the pass only records the rotations).
    pub(super) fn primal_correction_pass(&mut self) {
        debug_assert!(self.primal_correction_applies());
        // The world's evaluation buffer and scratch, borrowed beside the bodies and
        // constraints (no copy of the buffer).
        let mut primal = std::mem::take(&mut self.primal_scratch);
        primal_vectors_of(
            self.options.substep_dt(),
            &self.bodies,
            &self.slots,
            &self.systems,
            &mut self.eval,
            &mut primal,
            false,
        );
        for (b, r) in self.bodies.iter_mut().zip(primal.iter()) {
            if b.is_fixed() {
                continue;
            }
            let m = b.inv_mass();
            let i = b.inv_inertia();
            // The substep's velocity update follows at once and composes the
            // orientation.
            b.apply_last_correction(
                &Vector3::new(-r[0] * m, -r[1] * m, -r[2] * m),
                &Vector3::new(-r[3] * i.x, -r[4] * i.y, -r[5] * i.z),
            );
        }
        self.primal_scratch = primal;
    }

    /// Total mechanical energy, J: over the dynamic bodies Σ ½m|v|² + ½ωᵀ𝓘ω − m g·p
    /// (kinetic and gravitational, zero at rest at the world origin), plus
    /// [`World::elastic_energy`].
    pub fn energy(&self) -> T {
        self.kinetic_and_gravity_energy() + self.elastic_energy()
    }

    /// How far the current poses are from satisfying the hard rows (α = 0) of the
    /// enabled constraints: √Σ C² over their equality rows, plus the violated part
    /// min(C, 0) of their inequality rows C ≥ 0 (bounds `(0, +∞)`), in the rows' units
    /// (m or rad). Compliant rows are left out: a deformed spring or a rod bent away
    /// from its rest shape is a state, not a mismatch. Systems (rods) are left out too.
    /// NaN if a value is NaN. Used to warn when initial poses do not fit the joints.
    pub fn hard_violation(&self) -> T {
        let inf = crate::lie::real::c::<T>(f64::INFINITY);
        let mut eval = ConstraintEval::default();
        let mut sum = T::zero();
        for s in self.slots.iter().filter(|s| s.enabled) {
            eval.clear();
            s.constraint.evaluate(&self.bodies, &mut eval);
            for j in 0..s.dim {
                if s.constraint.compliance(j) != T::zero() {
                    continue;
                }
                let c = eval.value[j];
                let v = match s.constraint.lambda_bounds(j) {
                    (lo, hi) if lo == -inf && hi == inf => c,
                    (lo, hi) if lo == T::zero() && hi == inf => c.min(T::zero()),
                    _ => T::zero(),
                };
                sum += v * v;
                if !c.is_finite() && c.partial_cmp(&T::zero()).is_none() {
                    sum = c;
                }
            }
        }
        sum.sqrt()
    }

    /// Σ ½m|v|² + ½ωᵀ𝓘ω − m g·p over the dynamic bodies, J.
    pub fn kinetic_and_gravity_energy(&self) -> T {
        let g = self.options.gravity;
        self.bodies
            .iter()
            .filter(|b| !b.is_fixed())
            .fold(T::zero(), |acc, b| {
                acc + b.kinetic_energy() - b.mass() * g.dot(&b.position)
            })
    }

    /// The elastic energy (36) U = ½ Cᵀα⁻¹C stored in the compliant rows of every
    /// enabled constraint ([`Constraint::potential_energy`]) and every system
    /// ([`System::potential_energy`], e.g. a rod's strain energy (91)–(92)) at the
    /// current poses, J. Zero in a world of hard constraints.
    pub fn elastic_energy(&self) -> T {
        let constraints = self
            .slots
            .iter()
            .filter(|s| s.enabled)
            .fold(T::zero(), |acc, s| {
                acc + s.constraint.potential_energy(&self.bodies)
            });
        self.systems
            .iter()
            .fold(constraints, |acc, s| acc + s.potential_energy(&self.bodies))
    }
}

/// [`World::primal_vectors`] on the world's parts, so that the primal correction pass
/// can pass the world's own evaluation buffer. With `values` false only the primal
/// vectors are wanted (the correction pass): constraints that implement
/// [`Constraint::add_constraint_force`] then give ∇Cᵀλ without their values, and the
/// returned constraint residual leaves their rows out.
#[allow(clippy::too_many_arguments)]
fn primal_vectors_of<T: Real, G: LieGroup<T>>(
    h: T,
    bodies: &[Body<T, G>],
    slots: &[Slot<T, G>],
    systems: &[Box<dyn System<T, G>>],
    eval: &mut ConstraintEval<T>,
    primal: &mut [SVector<T, 6>],
    values: bool,
) -> T {
    let inv_h2 = T::one() / (h * h);
    for (b, r) in bodies.iter().zip(primal.iter_mut()) {
        *r = if b.is_fixed() {
            SVector::zeros()
        } else {
            let (dp, dr) = b.correction_since_prediction();
            let dp = dp * b.mass();
            let dr = dr.component_mul(&b.inertia());
            SVector::<T, 6>::from([dp.x, dp.y, dp.z, dr.x, dr.y, dr.z])
        };
    }
    let mut csq = T::zero();
    for slot in slots.iter().filter(|s| s.enabled) {
        if !values {
            let mut force = [SVector::<T, 6>::zeros(); MAX_BODIES];
            if slot.constraint.add_constraint_force(
                bodies,
                &slot.lambda.as_slice()[..slot.dim],
                &mut force,
            ) {
                for (s, f) in force.iter().enumerate() {
                    if let Some(b) = slot.bodies[s] {
                        if !bodies[b].is_fixed() {
                            primal[b] -= f;
                        }
                    }
                }
                continue;
            }
        }
        // As in the projections: an overwriting constraint writes every entry read
        // below (rows 0..dim of the blocks of its bodies), the rest may be stale.
        if !slot.overwrites {
            eval.clear();
        }
        slot.constraint.evaluate(bodies, eval);
        let dim = slot.dim;
        for j in 0..dim {
            let phi = eval.value[j] + slot.compliance[j] * inv_h2 * slot.lambda[j];
            // A bounded row (an inequality, a motor's force limit) whose λ is at a
            // bound, with C + α̃λ on the side that would push λ past it, satisfies its
            // complementarity conditions (λ = lo ⇒ C + α̃λ ≥ 0, λ = hi ⇒ C + α̃λ ≤ 0):
            // an inactive limit or a saturated motor, no residual.
            let lambda = slot.lambda[j];
            let satisfied = (lambda <= slot.lambda_lo[j] && phi > T::zero())
                || (lambda >= slot.lambda_hi[j] && phi < T::zero());
            if !satisfied {
                csq += phi * phi;
            }
        }
        for s in 0..MAX_BODIES {
            if let Some(b) = slot.bodies[s] {
                if !bodies[b].is_fixed() {
                    // ∇C_bᵀλ over the dim rows.
                    let g = &eval.gradient[s];
                    let mut f = SVector::<T, 6>::zeros();
                    for j in 0..dim {
                        let l = slot.lambda[j];
                        for c in 0..6 {
                            f[c] += g[(j, c)] * l;
                        }
                    }
                    primal[b] -= f;
                }
            }
        }
    }
    let sys = systems.iter().fold(T::zero(), |acc, s| {
        acc + s.residuals(bodies, inv_h2, primal)
    });
    csq + sys
}
