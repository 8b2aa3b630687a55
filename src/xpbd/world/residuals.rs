//! Diagnostics of a [`World`]: the residuals (51)–(52) and the total energy.

use super::{Residuals, World};
use crate::lie::{LieGroup, Real};
use crate::xpbd::constraint::{ConstraintEval, MAX_BODIES};
use nalgebra::SVector;

impl<T: Real, G: LieGroup<T>> World<T, G> {
    /// Primal and constraint residuals (51)–(52) at the current state, with the λ and
    /// inertial predictions of the last substep. Before the first step both are
    /// computed with λ = 0 and x̃ = x.
    ///
    /// Allocates one buffer of 6 scalars per body (the time step itself allocates
    /// nothing).
    pub fn residuals(&self) -> Residuals<T> {
        let h = self.options.substep_dt();
        let inv_h2 = T::one() / (h * h);
        // 𝓜(x ⊟ x̃) per body, then subtract ∇Cᵀλ.
        let mut primal: Vec<SVector<T, 6>> = self
            .bodies
            .iter()
            .map(|b| {
                if b.is_fixed() {
                    return SVector::zeros();
                }
                let (pp, rp) = b.predicted_pose();
                let dp = (b.position - pp) * b.mass();
                let dr = b.orientation.boxminus(&rp).component_mul(&b.inertia());
                SVector::<T, 6>::from([dp.x, dp.y, dp.z, dr.x, dr.y, dr.z])
            })
            .collect();
        let mut csq = T::zero();
        let mut eval = ConstraintEval::default();
        for slot in self.slots.iter().filter(|s| s.enabled) {
            eval.clear();
            slot.constraint.evaluate(&self.bodies, &mut eval);
            for j in 0..slot.dim {
                let r = eval.value[j] + slot.constraint.compliance(j) * inv_h2 * slot.lambda[j];
                csq += r * r;
            }
            for s in 0..MAX_BODIES {
                if let Some(b) = slot.bodies[s] {
                    if !self.bodies[b].is_fixed() {
                        primal[b] -= eval.gradient[s].tr_mul(&slot.lambda);
                    }
                }
            }
        }
        csq += self.systems_residuals(inv_h2, &mut primal);
        let psq = primal
            .iter()
            .fold(T::zero(), |acc, r| acc + r.norm_squared());
        Residuals {
            primal: psq.sqrt(),
            constraint: csq.sqrt(),
        }
    }

    /// Total mechanical energy: Σ kinetic + gravitational potential −m g·p, J.
    pub fn energy(&self) -> T {
        let g = self.options.gravity;
        self.bodies
            .iter()
            .filter(|b| !b.is_fixed())
            .fold(T::zero(), |acc, b| {
                acc + b.kinetic_energy() - b.mass() * g.dot(&b.position)
            })
    }
}
