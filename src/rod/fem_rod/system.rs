//! [`FemRod`] as an xpbd [`System`]: the banded or Gauss-point projection, the damping
//! pass and the residuals, called by the world's substep, and its Gauss points as row
//! blocks for the gradient checker.

use super::*;
use crate::xpbd::{RowBlockEval, RowBlockInfo, XpbdError};

/// [`RowBlockInfo::kind`] of a [`FemRod`] Gauss point.
pub const ROD_GAUSS_POINT_KIND: &str = "rod gauss point";

impl<T: BandScalar, G: LieGroup<T>, const N: usize> System<T, G> for FemRod<T, G, N> {
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
            RodSolve::Banded => self.project_banded(bodies, inv_h2, false),
            RodSolve::GaussPoint => self.project_gauss_points(bodies, inv_h2),
        }
    }

    fn project_last(&mut self, bodies: &mut [Body<T, G>], inv_h2: T) {
        match self.solve {
            RodSolve::Banded => self.project_banded(bodies, inv_h2, true),
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

    /// One block per Gauss point (108): n·q blocks, block g = e·q + r being Gauss
    /// point r of element e, i.e. rows 6g … 6g + 5 of the system (and of
    /// [`System::lambda`]).
    fn row_block_count(&self) -> usize {
        self.points.len()
    }

    /// Gauss point r of element e (block e·q + r): `"<rod>: element e, Gauss point r"`,
    /// kind `"rod gauss point"`, 6 rows (rows 0–2 shear/stretch v − v*, dimensionless;
    /// 3–5 curvature u − u*, rad/m) over the element's N nodes (fixed ones included),
    /// in order along the rod.
    fn row_block(&self, k: usize) -> Option<RowBlockInfo> {
        if k >= self.points.len() {
            return None;
        }
        let (e, r) = (k / self.q, k % self.q);
        let first = e * (N - 1);
        RowBlockInfo::new(
            format!("{}: element {e}, Gauss point {r}", self.name),
            ROD_GAUSS_POINT_KIND,
            6,
            &self.nodes[first..first + N],
        )
        .ok()
    }

    /// C (108) and the per-node blocks `[∂C/∂pₖ | D_{Rₖ}C]` of the Gauss point, by
    /// [`RodElement::kinematics`] and the Gauss-point evaluation the projections use
    /// (the one derivation of `proofs/rod_gauss_point_constraint.md`). NaN values and
    /// zero gradients if the element's poses are not finite.
    ///
    /// # Errors
    /// [`XpbdError::UnknownRowBlock`] unless k < n·q; [`XpbdError::UnknownBody`] if a
    /// node of the element is not in `bodies`.
    fn evaluate_row_block(
        &self,
        k: usize,
        bodies: &[Body<T, G>],
        out: &mut RowBlockEval<T>,
    ) -> Result<(), XpbdError> {
        if k >= self.points.len() {
            return Err(XpbdError::UnknownRowBlock {
                system: self.name.clone(),
                index: k,
                count: self.points.len(),
            });
        }
        let (e, r) = (k / self.q, k % self.q);
        let first = e * (N - 1);
        let mut poses = [Pose::identity(); N];
        for (pose, id) in poses.iter_mut().zip(&self.nodes[first..first + N]) {
            let body = bodies.get(id.0).ok_or_else(|| XpbdError::UnknownBody {
                constraint: self.name.clone(),
                body: id.0,
                count: bodies.len(),
            })?;
            *pose = body.pose();
        }
        let element = &self.elements[e];
        let mut point = self.points[k];
        let evaluated = element
            .kinematics(&poses)
            .and_then(|kin| element.gauss_point_constraint_into(&kin, r, &mut point));
        for g in out.gradient.iter_mut() {
            g.fill(T::zero());
        }
        match evaluated {
            Ok(()) => {
                out.value = point.value;
                for (o, g) in out.gradient.iter_mut().zip(&point.gradient) {
                    o.copy_from(g);
                }
            }
            Err(_) => out.value.fill(c::<T>(f64::NAN)),
        }
        Ok(())
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
