//! [`FemRod`] as an xpbd [`System`]: the banded or Gauss-point projection, the damping
//! pass and the residuals, called by the world's substep.

use super::*;

impl<T: Real, G: LieGroup<T>, const N: usize> System<T, G> for FemRod<T, G, N> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn bodies(&self) -> &[BodyId] {
        &self.nodes
    }

    fn row_count(&self) -> usize {
        self.lambda.len()
    }

    fn lambda(&self) -> &[T] {
        &self.lambda
    }

    fn reset_lambda(&mut self) {
        self.lambda.fill(T::zero());
    }

    fn project(&mut self, bodies: &mut [Body<T, G>], inv_h2: T) {
        match self.solve {
            RodSolve::Banded => self.project_banded(bodies, inv_h2),
            RodSolve::GaussPoint => self.project_gauss_points(bodies, inv_h2),
        }
    }

    fn solve_velocities(&mut self, bodies: &mut [Body<T, G>], h: T) {
        if self.damping <= T::zero() {
            return;
        }
        // β̃⁻¹ = α/(h b).
        let scale = T::one() / (h * self.damping);
        match self.solve {
            RodSolve::Banded => self.damp_banded(bodies, scale),
            RodSolve::GaussPoint => self.damp_gauss_points(bodies, scale),
        }
    }

    /// Σ over the Gauss points of ½Cᵀα⁻¹C (the quadrature (107)–(109) of the strain
    /// energy); NaN if an element's poses cannot be evaluated.
    fn potential_energy(&self, bodies: &[Body<T, G>]) -> T {
        let half = c::<T>(0.5);
        let mut energy = T::zero();
        for (e, element) in self.elements.iter().enumerate() {
            let first = e * (N - 1);
            let poses: [Pose<T, G>; N] =
                std::array::from_fn(|j| bodies[self.nodes[first + j].0].pose());
            let Ok(kin) = element.kinematics(&poses) else {
                return c::<T>(f64::NAN);
            };
            for r in 0..self.q {
                let Ok(point) = element.gauss_point_constraint(&kin, r) else {
                    return c::<T>(f64::NAN);
                };
                for k in 0..6 {
                    let alpha = point.compliance[k];
                    if alpha > T::zero() {
                        energy += half * point.value[k] * point.value[k] / alpha;
                    }
                }
            }
        }
        energy
    }

    fn residuals(&self, bodies: &[Body<T, G>], inv_h2: T, primal: &mut [SVector<T, 6>]) -> T {
        let mut csq = T::zero();
        for (e, element) in self.elements.iter().enumerate() {
            let first = e * (N - 1);
            let poses: [Pose<T, G>; N] =
                std::array::from_fn(|j| bodies[self.nodes[first + j].0].pose());
            let Ok(kin) = element.kinematics(&poses) else {
                return c::<T>(f64::NAN);
            };
            for r in 0..self.q {
                let g = e * self.q + r;
                let Ok(point) = element.gauss_point_constraint(&kin, r) else {
                    return c::<T>(f64::NAN);
                };
                let lambda = Vector6::from_column_slice(&self.lambda[6 * g..6 * g + 6]);
                let res = point.value + point.compliance.component_mul(&lambda) * inv_h2;
                csq += res.norm_squared();
                for (j, grad) in point.gradient.iter().enumerate() {
                    let b = self.nodes[first + j].0;
                    if !bodies[b].is_fixed() {
                        primal[b] -= grad.tr_mul(&lambda);
                    }
                }
            }
        }
        csq
    }
}
