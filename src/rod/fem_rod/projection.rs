//! The projections of a [`FemRod`]: the banded solve of all its Gauss-point
//! constraints (Section 8.2, in separate passes; the streaming pass of a long rod is
//! in `streaming.rs`), the
//! Gauss-point-at-a-time projection (Figure 11), and the velocity-level damping (4.4).

use super::*;

impl<T: BandScalar, G: LieGroup<T>, const N: usize> FemRod<T, G, N> {
    /// After `rhs` holds the solution Δ: per node 𝓜⁻¹ Σ_g ∇C_gᵀ Δ_g into `correction`
    /// (on the AVX2 + FMA path when the CPU has it, [`crate::linalg::simd`]).
    #[inline(never)]
    fn node_corrections(&mut self) {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if crate::linalg::simd::fma_enabled() {
            // SAFETY: the CPU supports AVX2 and FMA (detected at run time).
            return unsafe { self.node_corrections_fma() };
        }
        self.node_corrections_with::<false>();
    }

    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    #[target_feature(enable = "avx2,fma")]
    fn node_corrections_fma(&mut self) {
        self.node_corrections_with::<true>();
    }

    #[inline(always)]
    fn node_corrections_with<const F: bool>(&mut self) {
        for c in &mut self.correction {
            *c = Vector6::zeros();
        }
        for (g, point) in self.points.iter().enumerate() {
            let first = (g / self.q) * (N - 1);
            let d: [T; 6] = std::array::from_fn(|i| self.rhs[6 * g + i]);
            for (j, grad) in point.gradient.iter().enumerate() {
                kernels::add_transpose_mul::<T, F>(
                    &mut self.correction[first + j].data.0[0],
                    &grad.data.0,
                    &d,
                );
            }
        }
        for (c, w) in self.correction.iter_mut().zip(&self.inv_mass) {
            *c = c.component_mul(w);
        }
    }

    /// One banded projection (module docs: the solve): in one streaming pass for a
    /// long rod ([`Self::project_streaming`]), in separate passes while band and
    /// points fit in about an L2 cache. `last` as in [`Self::apply_corrections`].
    pub(super) fn project_banded(&mut self, bodies: &mut [Body<T, G>], inv_h2: T, last: bool) {
        if self.streaming {
            self.project_streaming(bodies, inv_h2, last);
        } else {
            self.project_banded_in_passes(bodies, inv_h2, last);
        }
    }

    /// λ ← λ + Δλ from the solved `rhs`, and every node moved by its correction
    /// 𝓜⁻¹∇Cᵀ Δλ (57)–(58).
    fn apply_solution(&mut self, bodies: &mut [Body<T, G>], last: bool) {
        self.node_corrections();
        self.apply_corrections(bodies, last);
    }

    /// λ ← λ + Δλ from the solved `rhs`, and every node moved by the correction
    /// 𝓜⁻¹∇Cᵀ Δλ already in `correction`. With `last` (the world's last projection
    /// of the substep, [`System::project_last`]) the nodes' public orientations are
    /// left to the velocity update, which composes them anyway
    /// ([`apply_last_body_correction`]: the same poses bit for bit, one composition
    /// per node instead of two).
    pub(super) fn apply_corrections(&mut self, bodies: &mut [Body<T, G>], last: bool) {
        for (l, d) in self.lambda.iter_mut().zip(&self.rhs) {
            *l += *d;
        }
        let apply = if last {
            apply_last_body_correction::<T, G>
        } else {
            apply_body_correction::<T, G>
        };
        for (id, dx) in self.nodes.iter().zip(&self.correction) {
            apply(
                &mut bodies[id.0],
                &Vector3::new(dx[0], dx[1], dx[2]),
                &Vector3::new(dx[3], dx[4], dx[5]),
            );
        }
    }

    /// [`Self::project_banded`] in separate passes over the whole rod (evaluate,
    /// assemble, factor, solve): the same operations in another order, faster while
    /// the band fits in cache.
    fn project_banded_in_passes(&mut self, bodies: &mut [Body<T, G>], inv_h2: T, last: bool) {
        if self.evaluate(bodies).is_err() {
            self.failed_solves += 1;
            return;
        }
        self.assemble(inv_h2);
        if self.matrix.factor().is_err() {
            self.failed_solves += 1;
            return;
        }
        for (g, point) in self.points.iter().enumerate() {
            for i in 0..6 {
                let alpha = point.compliance[i] * inv_h2;
                self.rhs[6 * g + i] = -point.value[i] - alpha * self.lambda[6 * g + i];
            }
        }
        if self.matrix.solve_in_place(&mut self.rhs).is_err() {
            self.failed_solves += 1;
            return;
        }
        self.apply_solution(bodies, last);
    }

    /// The 6×6 system of Gauss point g alone, A_g = Σₖ ∇C_gk 𝓜ₖ⁻¹ ∇C_gkᵀ + diag(α)·`scale`
    /// (element e, nodes from `first`), solved for `rhs` by Cholesky; `None` if A_g is
    /// not positive definite.
    fn point_solve(
        &self,
        g: usize,
        first: usize,
        scale: T,
        rhs: &Vector6<T>,
    ) -> Option<Vector6<T>> {
        let point = &self.points[g];
        let mut a = Matrix6::<T>::zeros();
        for (j, grad) in point.gradient.iter().enumerate() {
            let w: [T; 6] = self.inv_mass[first + j].into();
            if w.iter().all(|x| *x == T::zero()) {
                continue;
            }
            let y = kernels::scale_columns(&grad.data.0, &w);
            kernels::add_mul_transpose(&mut a.data.0, &y, &grad.data.0);
        }
        for i in 0..6 {
            a[(i, i)] += point.compliance[i] * scale;
        }
        a.cholesky().map(|ch| ch.solve(rhs))
    }

    /// One Gauss–Seidel sweep over the Gauss points ([`RodSolve::GaussPoint`]).
    pub(super) fn project_gauss_points(&mut self, bodies: &mut [Body<T, G>], inv_h2: T) {
        for k in 0..self.nodes.len() {
            let b = &bodies[self.nodes[k].0];
            let (m, i) = (b.inv_mass(), b.inv_inertia());
            self.inv_mass[k] = Vector6::new(m, m, m, i.x, i.y, i.z);
        }
        for e in 0..self.elements.len() {
            let first = e * (N - 1);
            for r in 0..self.q {
                let g = e * self.q + r;
                let poses: [Pose<T, G>; N] =
                    std::array::from_fn(|j| bodies[self.nodes[first + j].0].pose());
                let element = &self.elements[e];
                let Ok(point) = element
                    .kinematics(&poses)
                    .and_then(|kin| element.gauss_point_constraint(&kin, r))
                else {
                    self.failed_solves += 1;
                    return;
                };
                self.points[g] = point;
                let lambda = Vector6::from_column_slice(&self.lambda[6 * g..6 * g + 6]);
                let rhs = -point.value - point.compliance.component_mul(&lambda) * inv_h2;
                let Some(d) = self
                    .point_solve(g, first, inv_h2, &rhs)
                    .filter(|d| d.iter().all(|x| x.is_finite()))
                else {
                    self.failed_solves += 1;
                    return;
                };
                for i in 0..6 {
                    self.lambda[6 * g + i] += d[i];
                }
                for (j, grad) in point.gradient.iter().enumerate() {
                    let dx = grad.tr_mul(&d).component_mul(&self.inv_mass[first + j]);
                    apply_body_correction(
                        &mut bodies[self.nodes[first + j].0],
                        &Vector3::new(dx[0], dx[1], dx[2]),
                        &Vector3::new(dx[3], dx[4], dx[5]),
                    );
                }
            }
        }
    }

    /// The damping pass one Gauss point at a time ([`RodSolve::GaussPoint`]): the
    /// points evaluated once at the end-of-substep poses, then per point
    /// A_g Δμ = −∇C_g v and v ← v + 𝓜⁻¹∇C_gᵀΔμ in order along the rod.
    pub(super) fn damp_gauss_points(&mut self, bodies: &mut [Body<T, G>], scale: T) {
        if self.evaluate(bodies).is_err() {
            self.failed_solves += 1;
            return;
        }
        for g in 0..self.points.len() {
            let first = (g / self.q) * (N - 1);
            let cdot = self.point_velocity(bodies, g, first);
            let Some(d) = self
                .point_solve(g, first, scale, &-Vector6::from(cdot))
                .filter(|d| d.iter().all(|x| x.is_finite()))
            else {
                self.failed_solves += 1;
                return;
            };
            for (j, grad) in self.points[g].gradient.iter().enumerate() {
                let dv = grad.tr_mul(&d).component_mul(&self.inv_mass[first + j]);
                let b = &mut bodies[self.nodes[first + j].0];
                if !b.is_fixed() {
                    b.velocity += Vector3::new(dv[0], dv[1], dv[2]);
                    b.angular_velocity += Vector3::new(dv[3], dv[4], dv[5]);
                }
            }
        }
    }

    /// Ċ_g = ∇C_g v of Gauss point g (element nodes from `first`).
    fn point_velocity(&self, bodies: &[Body<T, G>], g: usize, first: usize) -> [T; 6] {
        let mut cdot = [T::zero(); 6];
        for (j, grad) in self.points[g].gradient.iter().enumerate() {
            let b = &bodies[self.nodes[first + j].0];
            let (v, w) = (b.velocity, b.angular_velocity);
            kernels::add_mul(&mut cdot, &grad.data.0, &[v.x, v.y, v.z, w.x, w.y, w.z]);
        }
        cdot
    }

    /// The banded damping pass (module docs: damping).
    pub(super) fn damp_banded(&mut self, bodies: &mut [Body<T, G>], scale: T) {
        if self.evaluate(bodies).is_err() {
            self.failed_solves += 1;
            return;
        }
        self.assemble(scale);
        if self.matrix.factor().is_err() {
            self.failed_solves += 1;
            return;
        }
        for g in 0..self.points.len() {
            let first = (g / self.q) * (N - 1);
            let cdot = self.point_velocity(bodies, g, first);
            for (r, c) in self.rhs[6 * g..6 * g + 6].iter_mut().zip(cdot) {
                *r = -c;
            }
        }
        if self.matrix.solve_in_place(&mut self.rhs).is_err() {
            self.failed_solves += 1;
            return;
        }
        self.node_corrections();
        for (id, dv) in self.nodes.iter().zip(&self.correction) {
            let b = &mut bodies[id.0];
            if !b.is_fixed() {
                b.velocity += Vector3::new(dv[0], dv[1], dv[2]);
                b.angular_velocity += Vector3::new(dv[3], dv[4], dv[5]);
            }
        }
    }
}
