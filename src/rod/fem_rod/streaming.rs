//! The banded projection of a long [`FemRod`] (band and Gauss-point cache together
//! larger than [`STREAMING_BYTES`]): two passes along the rod, each touching every
//! element's data once.
//!
//! Forward, element by element: load the element's nodal 𝓜⁻¹, evaluate its Gauss
//! points into a window of two elements (the assembly of element e's rows needs the
//! points of e and e − 1 only), keep their gradients packed
//! ([`kernels::PackedGradient`]: 9 + 19N scalars per point instead of the 36N + 16
//! of a [`GaussPointConstraint`]), assemble the element's block rows, factor them and
//! forward-substitute them. Backward, element by element: back-substitute the
//! element's rows, and at once form ∇CᵀΔλ of its nodes from the packed gradients;
//! a node is complete, and scaled by 𝓜⁻¹, once the elements on both sides of it are
//! done. Then, if the solution is finite, λ ← λ + Δλ and every node moves (57)–(58).
//!
//! The arithmetic is that of [`FemRod::project_banded_in_passes`] operation for
//! operation, in the same order for every sum (a node shared by elements e − 1 and
//! e sums e − 1's terms first, as there), so the results are the same bit for bit;
//! only the order in which independent values are computed differs.

use super::*;
use crate::rod::gauss::MAX_GAUSS_POINTS;
use nalgebra::Matrix3;

impl<T: BandScalar, G: LieGroup<T>, const N: usize> FemRod<T, G, N> {
    /// The streaming banded projection (module docs); `last` as in
    /// [`Self::apply_corrections`].
    pub(super) fn project_streaming(&mut self, bodies: &mut [Body<T, G>], inv_h2: T, last: bool) {
        self.matrix.begin_streaming_factor();
        let q = self.q;
        // Σ 0·b: NaN iff an entry of the right-hand side is not finite.
        let mut rhs_check = T::zero();
        for e in 0..self.elements.len() {
            let first = e * (N - 1);
            for k in first..first + N {
                let b = &bodies[self.nodes[k].0];
                let (m, i) = (b.inv_mass(), b.inv_inertia());
                self.inv_mass[k] = Vector6::new(m, m, m, i.x, i.y, i.z);
            }
            if self.evaluate_packed(bodies, e).is_err() {
                self.failed_solves += 1;
                return;
            }
            let Self {
                matrix,
                inv_mass,
                window,
                rhs,
                lambda,
                ..
            } = self;
            let (even, odd) = window.split_at(q);
            let (cur, prev) = if e % 2 == 0 { (even, odd) } else { (odd, even) };
            let prev = if e > 0 { prev } else { &[] };
            Self::assemble_rows(matrix, inv_mass, cur, prev, e, inv_h2);
            for (r, point) in cur.iter().enumerate() {
                let g = e * q + r;
                if matrix.factor_row(g).is_err() {
                    self.failed_solves += 1;
                    return;
                }
                for i in 0..6 {
                    let alpha = point.compliance[i] * inv_h2;
                    let b = -point.value[i] - alpha * lambda[6 * g + i];
                    rhs_check += b * T::zero();
                    rhs[6 * g + i] = b;
                }
                matrix.forward_row(rhs, g);
            }
        }
        self.matrix.end_streaming_factor();
        if rhs_check != T::zero() || !self.backward() {
            self.failed_solves += 1;
            return;
        }
        self.apply_corrections(bodies, last);
    }

    /// Evaluates the Gauss points of element `e` into its half of the window and
    /// their packed gradients.
    #[inline(never)]
    fn evaluate_packed(&mut self, bodies: &[Body<T, G>], e: usize) -> Result<(), RodError> {
        let q = self.q;
        self.kinematics(bodies, e)?;
        let (element, kin) = (&self.elements[e], &self.kinematics);
        let half = &mut self.window[(e % 2) * q..(e % 2 + 1) * q];
        let packed = &mut self.packed[e * q..(e + 1) * q];
        let mut rt = Matrix3::zeros();
        let mut dphi_ds = [T::zero(); N];
        for (r, (point, pg)) in half.iter_mut().zip(packed).enumerate() {
            element.gauss_point_constraint_rt_into(kin, r, point, &mut rt, &mut dphi_ds)?;
            pg.pack_from(&point.gradient, &rt, &dphi_ds);
        }
        Ok(())
    }

    /// The backward pass (module docs): `rhs` becomes Δλ and `correction` 𝓜⁻¹∇CᵀΔλ;
    /// false if an entry of Δλ is not finite.
    fn backward(&mut self) -> bool {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if crate::linalg::simd::fma_enabled() {
            // SAFETY: the CPU supports AVX2 and FMA (detected at run time).
            return unsafe { self.backward_fma() };
        }
        self.backward_with::<false>()
    }

    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    #[target_feature(enable = "avx2,fma")]
    fn backward_fma(&mut self) -> bool {
        self.backward_with::<true>()
    }

    /// [`Self::backward`] with fused multiply-adds iff `F`.
    #[inline(always)]
    fn backward_with<const F: bool>(&mut self) -> bool {
        let q = self.q;
        let n = self.elements.len();
        let Self {
            matrix,
            rhs,
            packed,
            inv_mass,
            correction,
            ..
        } = self;
        // Σ 0·Δλ: NaN iff an entry of the solution is not finite.
        let mut check = T::zero();
        // Per point of element e + 1 its terms for that element's node 0, which is
        // node N − 1 of element e (summed after e's own terms).
        // (Two buffers in turns: element e's terms for its node 0 are element e − 1's
        // pending ones.)
        let mut terms = [[[T::zero(); 6]; MAX_GAUSS_POINTS]; 2];
        for e in (0..n).rev() {
            matrix.back_rows(rhs, e * q..(e + 1) * q);
            let first = e * (N - 1);
            let mut sum = [[T::zero(); 6]; N];
            let (a, b) = terms.split_at_mut(1);
            let (own, pending) = if e % 2 == 0 {
                (&mut a[0], &b[0])
            } else {
                (&mut b[0], &a[0])
            };
            for (r, p) in packed[e * q..(e + 1) * q].iter().enumerate() {
                let g = e * q + r;
                let d: [T; 6] = std::array::from_fn(|i| rhs[6 * g + i]);
                for x in d {
                    check += x * T::zero();
                }
                let terms = p.transpose_mul_all::<F>(&d);
                own[r] = terms[0];
                for (s, t) in sum.iter_mut().zip(&terms).skip(1) {
                    for (a, b) in s.iter_mut().zip(t) {
                        *a += *b;
                    }
                }
            }
            if e + 1 < n {
                for t in &pending[..q] {
                    for (a, b) in sum[N - 1].iter_mut().zip(t) {
                        *a += *b;
                    }
                }
            }
            if e == 0 {
                for t in &own[..q] {
                    for (a, b) in sum[0].iter_mut().zip(t) {
                        *a += *b;
                    }
                }
            }
            let done = if e == 0 { 0 } else { 1 };
            for j in done..N {
                correction[first + j] = Vector6::from(sum[j]).component_mul(&inv_mass[first + j]);
            }
        }
        check == T::zero()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lie::SO3Matrix;
    use crate::rod::{RodMaterial, StraightRod};
    use crate::xpbd::SolverOptions;

    /// A cantilever of `elements` elements with N nodes, gravity −y; with
    /// `streaming` = false the rod is projected in separate passes whatever its size.
    fn world<T: BandScalar, const N: usize>(
        elements: usize,
        streaming: bool,
    ) -> World<T, SO3Matrix<T>> {
        let options = SolverOptions {
            dt: c(5e-3),
            ..SolverOptions::default()
        };
        let mut world = World::new(options).unwrap();
        let material = RodMaterial::circular(c(5e6), c(0.4), c(1000.0), c(0.05)).unwrap();
        let spec = StraightRod::cantilever(T::one(), elements);
        let d = Vector3::x();
        let l = T::one() / c::<T>(elements as f64);
        let element = RodElement::<T, N>::new(l, &material, spec.integration).unwrap();
        let share = element.lumped_nodal_inertia(&material);
        let count = elements * (N - 1) + 1;
        let mut nodes = Vec::new();
        for k in 0..count {
            let position = d * (c::<T>(k as f64) / c::<T>((count - 1) as f64));
            let rotation = rotation_from_z::<T, SO3Matrix<T>>(&d);
            let body = if k == 0 {
                Body::fixed(position, rotation).unwrap()
            } else {
                // Interior nodes carry one share, or two where elements meet.
                let j = k % (N - 1);
                let twice = j == 0 && k + 1 < count;
                let scale = if twice { c::<T>(2.0) } else { T::one() };
                let s = share[if j == 0 { N - 1 } else { j }];
                Body::dynamic(s.mass * scale, s.inertia * scale, position, rotation).unwrap()
            };
            nodes.push(world.add_body(body).unwrap());
        }
        let mut rod =
            FemRod::<T, SO3Matrix<T>, N>::new("rod", nodes, vec![element; elements], T::zero())
                .unwrap();
        assert!(rod.streaming, "{elements} elements stream");
        rod.streaming = streaming;
        world.add_system(rod).unwrap();
        world
    }

    /// The streaming projection of a long rod gives the results of the separate
    /// passes bit for bit (module docs), in every order and both scalars.
    fn streaming_matches_passes<T: BandScalar, const N: usize>(elements: usize) {
        let mut a = world::<T, N>(elements, true);
        let mut b = world::<T, N>(elements, false);
        for _ in 0..20 {
            a.step().unwrap();
            b.step().unwrap();
        }
        let moved = a.bodies().iter().any(|x| x.position.y != T::zero());
        assert!(moved, "the rod sags");
        for (x, y) in a.bodies().iter().zip(b.bodies()) {
            assert_eq!(x.position, y.position, "{N} nodes, {}", T::NAME);
            assert_eq!(x.velocity, y.velocity, "{N} nodes, {}", T::NAME);
            assert_eq!(x.angular_velocity, y.angular_velocity);
        }
    }

    #[test]
    fn streaming_projection_matches_separate_passes() {
        streaming_matches_passes::<f64, 2>(1200);
        streaming_matches_passes::<f64, 3>(300);
        streaming_matches_passes::<f64, 4>(150);
        streaming_matches_passes::<f32, 2>(2000);
        streaming_matches_passes::<f32, 4>(250);
    }
}
