//! The strain fields of an element: v(ξ) (101) and u(ξ) (103), and their gradients with
//! respect to the nodes (App. G, `proofs/rod_strains.md`).

use super::*;

impl<T: Real, G: LieGroup<T>, const N: usize> ElementKinematics<T, G, N> {
    /// The strains v(ξ) (101) and u(ξ) (103). For a linear element (N = 2) u is
    /// evaluated as θ'(s), which equals Γ(θ)θ' because θ and θ' are parallel
    /// (`proofs/rod_strains.md`).
    ///
    /// # Errors
    /// [`RodError::ParameterOutOfRange`] unless 0 ≤ ξ ≤ 1.
    pub fn strains(&self, xi: T) -> Result<Strains<T>, RodError> {
        let p = self.point(xi)?;
        Ok(Strains {
            shear: p.rotation.act_inv(&self.combine(&p.dphi_ds)),
            curvature: if N == 2 {
                p.theta_prime
            } else {
                p.gamma * p.theta_prime
            },
        })
    }

    /// The strains and their gradient with respect to every node, Appendix G with the
    /// ∂Γ/∂θ contraction (`proofs/rod_strains.md`).
    ///
    /// # Errors
    /// [`RodError::ParameterOutOfRange`] unless 0 ≤ ξ ≤ 1.
    pub fn strain_gradient(&self, xi: T) -> Result<StrainGradient<T, N>, RodError> {
        let p = self.point(xi)?;
        let mut gradient = [Matrix6::zeros(); N];
        let (strains, _) = self.strain_gradient_into(&p, &mut gradient);
        Ok(StrainGradient { strains, gradient })
    }

    /// The strains at point `p` and their gradient written into `gradient` (every
    /// entry: the zero blocks too), with R(ξ)ᵀ: the position block of node j is
    /// (φⱼ,ξ/l)·R(ξ)ᵀ, rounded entry by entry.
    #[inline(always)]
    pub(super) fn strain_gradient_into(
        &self,
        p: &Point<T, G, N>,
        gradient: &mut [Matrix6<T>; N],
    ) -> (Strains<T>, Matrix3<T>) {
        let v = p.rotation.act_inv(&self.combine(&p.dphi_ds));
        let rt = p.rotation.to_matrix().transpose();
        let v_hat = hat(&v);
        if N == 2 {
            return (
                self.linear_strain_gradient_into(p, v, &rt, &v_hat, gradient),
                rt,
            );
        }
        let u = p.gamma * p.theta_prime;
        let m = right_jacobian_derivative_contraction(&p.theta, &p.theta_prime);
        // Σ_{j≥1} φⱼ Gⱼᵀ (for D_{R₀}R) and Σ_{j≥1} Aⱼ Gⱼᵀ (for D_{R₀}u), where
        // Aⱼ = φⱼ M + (φⱼ,ξ/l) Γ.
        let mut sum_r = Matrix3::zeros();
        let mut sum_u = Matrix3::zeros();
        for (j, b) in gradient.iter_mut().enumerate().skip(1) {
            let g = self.gamma_inv[j];
            let gt = g.transpose();
            let a = m * p.phi[j] + p.gamma * p.dphi_ds[j];
            let d_rot = p.gamma * g * p.phi[j];
            b.fixed_view_mut::<3, 3>(0, 0)
                .copy_from(&(rt * p.dphi_ds[j]));
            b.fixed_view_mut::<3, 3>(0, 3).copy_from(&(v_hat * d_rot));
            b.fixed_view_mut::<3, 3>(3, 3).copy_from(&(a * g));
            sum_r += gt * p.phi[j];
            sum_u += a * gt;
        }
        let d_rot0 = p.exp_theta.to_matrix().transpose() - p.gamma * sum_r;
        let b = &mut gradient[0];
        b.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&(rt * p.dphi_ds[0]));
        b.fixed_view_mut::<3, 3>(0, 3).copy_from(&(v_hat * d_rot0));
        b.fixed_view_mut::<3, 3>(3, 3).copy_from(&(-sum_u));
        for b in gradient.iter_mut() {
            b.fixed_view_mut::<3, 3>(3, 0).fill(T::zero());
        }
        (
            Strains {
                shear: v,
                curvature: u,
            },
            rt,
        )
    }

    /// [`strain_gradient_into`](Self::strain_gradient_into) of a linear element
    /// (N = 2), given v, R(ξ)ᵀ and v̂. θ = φ₁ψ₁ and θ' = φ₁'ψ₁ are parallel, so
    /// u = Γ(θ)θ' = θ' and A₁ = φ₁M(θ, θ') + φ₁'Γ(θ) = φ₁' I for every ξ
    /// (`proofs/rod_strains.md`, "Linear elements"): D_{R₁}u = φ₁'G₁,
    /// D_{R₀}u = −φ₁'G₁ᵀ, without M. The shear blocks v̂·D_{Rⱼ}R are polynomials in ψ̂
    /// (every factor is): with s = φ₁, t = |ψ₁|, D_{Rⱼ}R = c₀ⱼI + c₁ⱼψ̂ + c₂ⱼψ̂² and
    /// v̂·D_{Rⱼ}R = (c₀ⱼ − c₂ⱼt²)v̂ + c₁ⱼ(ψvᵀ − (v·ψ)I) + c₂ⱼ(v × ψ)ψᵀ, coefficients in
    /// the proof. This replaces four 3×3 products, and keeps every entry of degree at
    /// most three in the small components (no subnormal products of round-off in f32).
    #[inline(always)]
    fn linear_strain_gradient_into(
        &self,
        p: &Point<T, G, N>,
        v: Vector3<T>,
        rt: &Matrix3<T>,
        v_hat: &Matrix3<T>,
        gradient: &mut [Matrix6<T>; N],
    ) -> Strains<T> {
        let g = self.gamma_inv[1];
        let psi = self.psi[1];
        let s = p.phi[1];
        let t2 = psi.norm_squared();
        // sinc, α, β at |θ| = s·t (θ² formed as Exp's own, for the compiler to share),
        // γ at t.
        let theta_sq = p.theta.norm_squared();
        let (sinc, alpha) = so3::sinc_alpha_sq(theta_sq);
        let beta = so3::beta(theta_sq.sqrt());
        let gamma = so3::gamma_inv_coeff_sq(t2);
        let half = crate::lie::real::c::<T>(0.5);
        // 1 − γt² = (t/2)·cot(t/2), in [0, 1] for t ≤ π.
        let q = T::one() - gamma * t2;
        let (a, b, cc) = (alpha * s * q, half * beta * theta_sq, beta * s * s * q);
        let c1 = [s * (half + a - b - sinc), s * (half - a - b)];
        let c2 = [
            s * (half * alpha * s - gamma - cc),
            s * (gamma - half * alpha * s + cc),
        ];
        let c0 = [p.phi[0], s];
        let vp = v.dot(&psi);
        let pv = psi * v.transpose();
        let w = v.cross(&psi) * psi.transpose();
        let k = p.dphi_ds[1];
        let du = [-(g.transpose() * k), g * k];
        for (j, b) in gradient.iter_mut().enumerate() {
            let mut shear = v_hat * (c0[j] - c2[j] * t2) + pv * c1[j] + w * c2[j];
            for i in 0..3 {
                shear[(i, i)] -= c1[j] * vp;
            }
            b.fixed_view_mut::<3, 3>(0, 0)
                .copy_from(&(rt * p.dphi_ds[j]));
            b.fixed_view_mut::<3, 3>(0, 3).copy_from(&shear);
            b.fixed_view_mut::<3, 3>(3, 0).fill(T::zero());
            b.fixed_view_mut::<3, 3>(3, 3).copy_from(&du[j]);
        }
        Strains {
            shear: v,
            curvature: p.theta_prime,
        }
    }
}
