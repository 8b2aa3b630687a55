//! The substep of a [`Body`]: the inertial prediction (46), (48) with its rotational
//! Newton solve, the corrections of the projections (58), and the velocity update
//! (Alg. 1 line 10), all in compensated arithmetic (the struct's docs).

use super::velocity_rotation::rotation_change;
use super::*;
use crate::lie::real::{abs_max3, inverse_binade};

impl<T: Real, G: LieGroup<T>> Body<T, G> {
    /// Inertial prediction of a substep of length `h` (s) under gravity `g` (m/s²):
    /// (48) p̃ = p + h v + h²(g + f/m) and (46) R̃ = R ⊞ hΩ, with
    /// Ω = ω + h𝓘⁻¹(τ − Ω×𝓘Ω) + O(h²) from the momentum-conserving implicit form of
    /// (46) (see `predict_rotation`).
    /// Stores the start pose and the prediction, and moves the body to the prediction.
    /// Fixed bodies stay where they are.
    ///
    /// With `resync` false the caller has already called `resync_compensation` since
    /// the public fields could last be changed (`World::step` does, once per step).
    pub(crate) fn predict(&mut self, h: T, gravity: &Vector3<T>, resync: bool) {
        if resync {
            self.resync_compensation(true);
        }
        self.prev_position = self.position;
        self.displacement = Vector3::zeros();
        self.prev_orientation = self.orientation;
        self.rotation_increment = UnitQuaternion::identity();
        self.corrected = false;
        if !self.fixed {
            let acc = gravity + self.force * self.inv_mass;
            self.velocity_step = acc * h;
            self.correction = UnitQuaternion::identity();
            self.predicted_velocity = self.velocity + self.velocity_step;
            let position = self.add_position(&(self.predicted_velocity * h));
            // One Exp serves the increment and the orientation.
            let (increment, omega, step) = self.predict_rotation(h);
            self.rotation_increment = increment;
            self.predicted_angular_velocity = omega;
            self.omega_step = step;
            // Copied from the values just written, not reloaded from their fields
            // (`two_sum`).
            self.predicted_position = position;
            self.predicted_orientation = self.add_rotation(&increment, true);
        } else {
            self.predicted_position = self.position;
            self.predicted_orientation = self.orientation;
        }
    }

    /// The rotation increment F = Exp(hΩ) of the inertial prediction (46), from the
    /// Lie group variational integrator of the free rigid body (Lee, Leok & McClamroch,
    /// "Lie group variational integrators for the full body problem", Comput. Methods
    /// Appl. Mech. Engrg. 196, 2007), so that a free body conserves its angular
    /// momentum to round-off and its kinetic energy without drift.
    ///
    /// With the nonstandard inertia 𝓙 = ½tr(𝓘)·𝟙 − 𝓘, the discrete body-frame angular
    /// momentum at the start of the substep is read from the last increment Exp(hω)
    /// (ω is the velocity the last velocity update left: that increment over h), plus
    /// the torque impulse hτ, and the new increment F = Exp(φ), φ = hΩ, solves
    ///
    /// ```text
    /// hΠ = vee(𝓙·Exp(hω) − Exp(hω)ᵀ·𝓙) + h²τ,     vee(F𝓙 − 𝓙Fᵀ) = hΠ.
    /// ```
    ///
    /// Both sides are written without cancellation: with a = sin θ/θ and
    /// b = (1 − cos θ)/θ² of Exp (6), θ = |φ|, and φ̂𝓙 + 𝓙φ̂ = (𝓘φ)^,
    /// φ̂²𝓙 − 𝓙φ̂² = (𝓙φ × φ)^ and φ × 𝓙φ = −φ × 𝓘φ,
    ///
    /// ```text
    /// vee(Exp(φ)𝓙 − 𝓙Exp(φ)ᵀ) = a·𝓘φ + b·φ × 𝓘φ,
    /// vee(𝓙Exp(φ) − Exp(φ)ᵀ𝓙) = a·𝓘φ − b·φ × 𝓘φ,
    /// ```
    ///
    /// so every term keeps relative precision for small hω (forming the matrices and
    /// subtracting would cost ε/h of momentum per substep, a random walk that f32 shows
    /// within seconds). To first order in h the equation is 𝓘Ω = 𝓘ω + h(τ − ω×𝓘ω),
    /// which is (46); unlike (46), whose explicit gyroscopic term gains kinetic energy
    /// ½h²|𝓘⁻¹(ω×𝓘ω)|²_𝓘 every substep (a free body spun at ω = (3, −2, 5) rad/s with
    /// 𝓘 = (1, 2, 3) kg·m² reaches 10⁶ times its energy within 2·10⁵ steps of 1 ms),
    /// the integrator is symplectic and momentum-preserving. A body spinning about a
    /// principal axis (the planar pendulum) gets exactly Ω = ω: φ × 𝓘φ = 0.
    ///
    /// φ is found by Newton's method, from the guess Ω₀ = ω + Δ with Δ the solution
    /// of the equation linearised about ω, 𝓘Δ + ½h(ω × 𝓘Δ + Δ × 𝓘ω) = h(τ − ω × 𝓘ω),
    /// to first order in h: one step of the Neumann series from the (46) guess
    /// Δ₀ = h𝓘⁻¹(τ − ω × 𝓘ω), Δ = Δ₀ − ½h𝓘⁻¹(ω × 𝓘Δ₀ + Δ₀ × 𝓘ω), which leaves a
    /// relative error O(θ²) of Δ instead of the O(θ) of Δ₀ (θ = h|ω|). The Jacobian is
    /// a·𝓘 + b·(φ̂𝓘 − (𝓘φ)^) (the derivatives of a and b dropped: exact up to O(θ²)
    /// relative, so each iteration gains about 2·log₁₀(1/θ) digits), written entry by
    /// entry: off the diagonal, (φ̂𝓘 − (𝓘φ)^)ᵢⱼ = φ̂ᵢⱼ(Iⱼ − Iₖ), k the third index.
    /// The iteration stops when the residual is below ε/2·h|Π| (the round-off of the
    /// right side: a looser stop leaves a residual of one sign step after step, which
    /// f32 turns into an energy drift), or when an iteration no longer halves the
    /// residual (it has reached the round-off of its own evaluation, which can exceed
    /// ε/2·h|Π|; the iterate with the smaller residual is kept), or after 8 iterations.
    /// For |φ| ≳ π/2 the left side saturates (like sin θ) and the equation may have no
    /// solution; a singular Jacobian or a non-finite iterate or residual then keeps the
    /// last iterate with a finite residual, so the prediction is always finite for finite
    /// state. Without torque, when the inertia is isotropic or φ × 𝓘φ at φ = hω is
    /// exactly zero (a spin about a principal axis, as in the planar pendulum, or no
    /// spin), Ω = ω solves the equation exactly (φ × 𝓘φ = 0, so both sides are a·𝓘φ)
    /// and no iteration is made (for an isotropic body, the rounding of the computed
    /// φ × 𝓘φ is not iterated on). Otherwise Ω = ω is still taken without iteration
    /// when its residual a·𝓘φ + b·φ × 𝓘φ − (a·𝓘φ − b·φ × 𝓘φ + h²τ) already meets the
    /// stopping rule: a rod node (𝓘 = (I, I, 2I)) bending with a twist rate of
    /// round-off size, whose residual is 2b·φ × 𝓘φ ≈ h|ω_twist| relative. This skips the
    /// linearised guess and one evaluation of the left side (callgrind, cantilever of
    /// 160 linear elements, f64: 765.9k → 739.2k instructions per step).
    ///
    /// Returns the increment Exp(hΩ), Ω, and Ω − ω as iterated (not as the difference of
    /// the rounded Ω and ω, whose rounding would repeat step after step).
    fn predict_rotation(&self, h: T) -> (UnitQuaternion<T>, Vector3<T>, Vector3<T>) {
        let i = self.inertia;
        // a, b, 𝓘φ and a·𝓘φ + b·φ × 𝓘φ at φ.
        #[inline(always)]
        fn lhs<T: Real>(i: &Vector3<T>, phi: &Vector3<T>) -> (T, T, Vector3<T>, Vector3<T>) {
            let (a, b) = crate::lie::so3::sinc_alpha_sq(phi.norm_squared());
            let ip = i.component_mul(phi);
            (a, b, ip, ip * a + phi.cross(&ip) * b)
        }
        let lhs = |phi: &Vector3<T>| lhs(&i, phi);
        let w = self.angular_velocity;
        let phi_w = w * h;
        let ip = i.component_mul(&phi_w);
        let gyro_phi = phi_w.cross(&ip);
        let zero = Vector3::zeros();
        let isotropic = i.x == i.y && i.y == i.z;
        if self.torque == zero && (isotropic || gyro_phi == zero) {
            return (<UnitQuaternion<T> as LieGroup<T>>::exp(&phi_w), w, zero);
        }
        let (a, b) = crate::lie::so3::sinc_alpha_sq(phi_w.norm_squared());
        let target = ip * a - gyro_phi * b + self.torque * (h * h);
        let half = crate::lie::real::c::<T>(0.5);
        let tol = T::default_epsilon() * half;
        // The squared residuals are compared scaled by a power of two from the
        // target (`inverse_binade`: the same decisions, without subnormal squares of
        // round-off components).
        let scale = inverse_binade(abs_max3(&target), 60);
        let tol_sq = tol * tol * (target * scale).norm_squared();
        // Ω = ω when it already meets the stopping rule: its residual
        // a·𝓘φ + b·φ × 𝓘φ − target is formed from the terms above (a rod node,
        // 𝓘 = (I, I, 2I), bending with a round-off twist rate).
        let g0 = ip * a + gyro_phi * b - target;
        if (g0 * scale).norm_squared() <= tol_sq {
            return (<UnitQuaternion<T> as LieGroup<T>>::exp(&phi_w), w, zero);
        }
        // Newton on the rate Ω (φ = hΩ), from the linearised solution Δ.
        let iw = i.component_mul(&w);
        let delta0 = (self.torque - w.cross(&iw)).component_mul(&self.inv_inertia) * h;
        let coupling = w.cross(&i.component_mul(&delta0)) + delta0.cross(&iw);
        let mut delta = delta0 - coupling.component_mul(&self.inv_inertia) * (half * h);
        let quarter = crate::lie::real::c::<T>(0.25);
        // Inertia differences of the Jacobian's off-diagonal entries.
        let (d21, d02, d10) = (i.z - i.y, i.x - i.z, i.y - i.x);
        // (squared residual, iterate) of the previous iteration.
        let mut prev: Option<(T, Vector3<T>)> = None;
        for _ in 0..8 {
            let phi = (w + delta) * h;
            let (a, b, _, value) = lhs(&phi);
            let g = value - target;
            let r2 = (g * scale).norm_squared();
            if !r2.is_finite() {
                if let Some((_, d)) = prev {
                    delta = d;
                }
                break;
            }
            if r2 <= tol_sq {
                break;
            }
            if let Some((p2, d)) = prev {
                if r2 > p2 * quarter {
                    if r2 > p2 {
                        delta = d;
                    }
                    break;
                }
            }
            let (ah, bh) = (a * h, b * h);
            let (px, py, pz) = (phi.x * bh, phi.y * bh, phi.z * bh);
            let jac = nalgebra::Matrix3::new(
                ah * i.x,
                pz * d21,
                py * d21,
                pz * d02,
                ah * i.y,
                px * d02,
                py * d10,
                px * d10,
                ah * i.z,
            );
            let Some(step) = solve3(&jac, &g) else {
                break;
            };
            let next = delta - step;
            if !next.iter().all(|x| x.is_finite()) {
                break;
            }
            prev = Some((r2, delta));
            delta = next;
        }
        let omega = w + delta;
        (
            <UnitQuaternion<T> as LieGroup<T>>::exp(&(omega * h)),
            omega,
            delta,
        )
    }

    /// Velocity update after the position solve (Alg. 1 line 10):
    /// v = (p − pⁿ)/h, ω = (R ⊟ Rⁿ)/h; re-normalises R.
    ///
    /// Both are accumulated as changes over the substep added to the previous velocity
    /// in compensated arithmetic (TwoSum; a low part is kept per component):
    ///
    /// ```text
    /// v ← v + [h(g + f/m) + Σδp/h]
    /// ω ← ω + [(Ω − ω) + (Log(Exp(hΩ)·C) − hΩ)/h],   C = Exp(δθ₁)Exp(δθ₂)…
    /// ```
    ///
    /// Σδp and C are the substep's corrections, accumulated as they are applied. The
    /// bracketed changes are small and known to a relative ε; adding them to v or ω
    /// rounds, and since they vary slowly those roundings have the same sign substep
    /// after substep: uncompensated, the velocities drift from the forces (in f32 with
    /// substeps of 1 µs, about 1 J/s of energy gain in the triple pendulum). For the
    /// rotation, Log(Exp(a)·C) − a = Γ⁻¹(a)·Log(C) + r with a remainder r of second
    /// order in Log(C) (BCH); r is taken from the difference of the two Logs only where it
    /// exceeds that difference's own round-off 64ε|a| (always in f64 at ordinary steps;
    /// never where it is below f32 resolution), so that round-off is not fed back.
    pub(crate) fn update_velocity(&mut self, h: T) {
        if self.fixed {
            return;
        }
        let inv_h = T::one() / h;
        let dv = self.velocity_step + self.displacement * inv_h;
        let mut dw = self.omega_step;
        if self.corrected {
            let a = self.predicted_angular_velocity * h;
            let full = || {
                let increment = self.rotation_increment * self.correction;
                <UnitQuaternion<T> as LieGroup<T>>::log(&increment) - a
            };
            let d = rotation_change(&a, &self.correction, full);
            dw += d * inv_h;
        }
        (self.velocity, self.velocity_lo) = two_sum(&self.velocity, &self.velocity_lo, &dv);
        (self.angular_velocity, self.omega_lo) =
            two_sum(&self.angular_velocity, &self.omega_lo, &dw);
        // The base is renormalised at each fold; the increment since then is a product
        // of unit quaternions, renormalised here (for a small rotation this moves its
        // vector part by a relative ε only).
        let since_base = UnitQuaternion::new_normalize(self.since_base.into_inner());
        self.since_base = since_base;
        // Stored twice from the value (`two_sum`).
        let orientation = self
            .orientation_base
            .compose(&G::from_unit_quaternion_unchecked(&since_base));
        self.orientation = orientation;
        self.written_orientation = orientation;
        self.written_position = self.position;
    }

    /// Applies a correction δp (m, world) and δθ (rad, body): p += δp, R ← R ⊞ δθ (58).
    #[inline]
    pub(crate) fn apply_correction(&mut self, dp: &Vector3<T>, dtheta: &Vector3<T>) {
        self.correct(dp.x, dp.y, dp.z, dtheta.x, dtheta.y, dtheta.z, true);
    }

    /// As `apply_correction`, for the last correction of a substep, followed by
    /// the velocity update before anything reads the orientation: the rotation is
    /// recorded (and folded, if due), but the public `orientation` is left to
    /// `update_velocity`, which composes it anyway (one composition instead of two).
    #[inline]
    pub(crate) fn apply_last_correction(&mut self, dp: &Vector3<T>, dtheta: &Vector3<T>) {
        self.correct(dp.x, dp.y, dp.z, dtheta.x, dtheta.y, dtheta.z, false);
    }

    // Kept out of line (one copy for the solver's many call sites). The six
    // components are passed as scalars, in registers: the callers build δp and δθ
    // entry by entry, and a vector passed by reference is reloaded with wider loads
    // than its stores, which the store buffer cannot forward (a stall of the order of
    // ten cycles on every correction; an array would be passed by reference too).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn correct(&mut self, dx: T, dy: T, dz: T, tx: T, ty: T, tz: T, compose: bool) {
        let dp = &Vector3::new(dx, dy, dz);
        let dtheta = &Vector3::new(tx, ty, tz);
        if *dp == Vector3::zeros() && *dtheta == Vector3::zeros() {
            return;
        }
        self.add_position(dp);
        self.displacement += dp;
        self.corrected = true;
        // One Exp serves the correction product and the orientation (R ⊞ δθ = R·Exp(δθ)).
        let e = <UnitQuaternion<T> as LieGroup<T>>::exp(dtheta);
        self.correction *= e;
        self.add_rotation(&e, compose && !self.defer_compose);
    }

    /// Checks an orientation written into the public field since the solver last wrote
    /// it (a user's change between steps): it must be a rotation within
    /// [`Real::orthogonality_tolerance`], as [`Body::fixed`] requires. A body whose
    /// orientation the solver wrote last costs one comparison.
    /// Returns whether the orientation was changed (the check's result otherwise).
    pub(crate) fn check_changed_orientation(&self) -> Result<bool, crate::lie::LieError> {
        if self.orientation == self.written_orientation {
            return Ok(false);
        }
        crate::lie::matrix::validate_rotation_matrix(&self.orientation.to_matrix()).map(|_| true)
    }

    /// Restarts the compensation if the public `position` or (with `orientation` true)
    /// `orientation` was changed since the solver last wrote it (a user moving the body
    /// between steps). `orientation` false: the caller knows it was not.
    pub(crate) fn resync_compensation(&mut self, orientation: bool) {
        if self.position != self.written_position {
            self.position_lo = Vector3::zeros();
            self.written_position = self.position;
        }
        if orientation && self.orientation != self.written_orientation {
            self.set_orientation_base(self.orientation);
            self.since_base = UnitQuaternion::identity();
            self.written_orientation = self.orientation;
        }
    }

    /// p ← p + dp in compensated arithmetic ([`two_sum`]): the stored position is the
    /// exact sum of the increments rounded once, however many were added.
    /// Returns the new position.
    #[inline]
    fn add_position(&mut self, dp: &Vector3<T>) -> Vector3<T> {
        let (position, lo) = two_sum(&self.position, &self.position_lo, dp);
        self.position = position;
        self.position_lo = lo;
        // Within a substep only the f64 pose of the wide constraint values reads it
        // (`pose_f64`); otherwise `update_velocity`, which ends every substep, records it.
        if T::WIDE_CONSTRAINT_VALUES {
            self.written_position = position;
        }
        position
    }

    /// R ← R·q for a unit quaternion q: composed into `since_base`, which is folded into
    /// the base orientation once it exceeds [`FOLD_SIN_HALF`]; `orientation` is then the
    /// base composed with `since_base`, rounded once.
    /// With `compose` false (and no fold), `orientation` is left as it was, for the
    /// caller to compose.
    ///
    /// Inlined into its callers, so that q stays in registers: passed by reference to
    /// an out-of-line copy, it was stored by the caller and reloaded with loads
    /// spanning two of its stores, which the store buffer cannot forward.
    ///
    /// Returns `orientation` (the value it holds after the call).
    #[inline(always)]
    fn add_rotation(&mut self, q: &UnitQuaternion<T>, compose: bool) -> G {
        let since_base = self.since_base * q;
        let v = since_base.imag();
        let limit = crate::lie::real::c::<T>(FOLD_SIN_HALF);
        // Each field stored from the value, never reloaded right after (`two_sum`).
        let orientation = if v.norm_squared() > limit * limit {
            let base = self
                .orientation_base
                .compose(&G::from_unit_quaternion_unchecked(&since_base))
                .renormalize();
            self.set_orientation_base(base);
            self.since_base = UnitQuaternion::identity();
            base
        } else {
            self.since_base = since_base;
            if !compose {
                return self.orientation;
            }
            self.orientation_base
                .compose(&G::from_unit_quaternion_unchecked(&since_base))
        };
        self.orientation = orientation;
        // As in `add_position`: `update_velocity` records it at the end of the substep.
        if T::WIDE_CONSTRAINT_VALUES {
            self.written_orientation = orientation;
        }
        orientation
    }
}

/// Solves the 3×3 system `m x = b` by the adjugate (Cramer's rule through cross products
/// of the rows rᵢ: m⁻¹ = [r₁×r₂ | r₂×r₀ | r₀×r₁]/det, det = r₀·(r₁×r₂)), about 40 flops
/// against the ~300 instructions of a pivoted LU; `None` if det is 0 or the solution is
/// not finite. Used on the Newton Jacobian of the rotational prediction, a·𝓘 plus
/// O(θ) terms, which is well conditioned wherever the Newton iteration is used.
#[inline]
fn solve3<T: Real>(m: &nalgebra::Matrix3<T>, b: &Vector3<T>) -> Option<Vector3<T>> {
    let r0 = Vector3::new(m[(0, 0)], m[(0, 1)], m[(0, 2)]);
    let r1 = Vector3::new(m[(1, 0)], m[(1, 1)], m[(1, 2)]);
    let r2 = Vector3::new(m[(2, 0)], m[(2, 1)], m[(2, 2)]);
    let c0 = r1.cross(&r2);
    let c1 = r2.cross(&r0);
    let c2 = r0.cross(&r1);
    let det = r0.dot(&c0);
    if det == T::zero() {
        return None;
    }
    let x = (c0 * b.x + c1 * b.y + c2 * b.z) / det;
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::solve3;
    use crate::lie::real::{abs_max3, inverse_binade};
    use nalgebra::{Matrix3, Vector3};

    #[test]
    fn inverse_binade_is_the_power_of_two() {
        for x in [
            1.0_f32,
            1.5,
            0.75,
            3e-9,
            -7e12,
            1e-30,
            f32::MIN_POSITIVE,
            1e-40,
        ] {
            let s = inverse_binade(x, 60);
            assert_eq!(s.log2().fract(), 0.0, "{x}");
            if x.abs().log2().abs() < 60.0 {
                assert!((1.0..2.0).contains(&(x.abs() * s)), "{x} {s}");
            } else {
                assert!(s == 2f32.powi(60) || s == 2f32.powi(-60), "{x} {s}");
            }
        }
        for x in [0.0, f32::INFINITY, f32::NAN] {
            assert_eq!(inverse_binade(x, 60), 1.0);
        }
        assert_eq!(inverse_binade(1e-20_f32, 30), 2f32.powi(30));
        // f64 needs no scaling: always 1.
        assert_eq!(inverse_binade(1e-200_f64, 60), 1.0);
        assert_eq!(abs_max3(&Vector3::new(-3.0, 2.0, 1.0)), 3.0);
    }

    #[test]
    fn solve3_matches_lu() {
        // Fixed, non-symmetric, well- and moderately-conditioned systems.
        let cases = [
            Matrix3::new(2.0, 0.1, -0.3, 0.2, 3.0, 0.5, -0.1, 0.4, 1.5),
            Matrix3::new(1.0, 2.0, 3.0, 0.0, 1.0, 4.0, 5.0, 6.0, 0.0),
            Matrix3::from_diagonal(&Vector3::new(1e-3, 2.0, 3e3)),
        ];
        let b = Vector3::new(0.3, -1.2, 2.5);
        for m in cases {
            let x = solve3(&m, &b).unwrap();
            let y = m.lu().solve(&b).unwrap();
            // Both are backward stable here; the residual is at round-off of |m||x|.
            assert!((m * x - b).norm() <= 1e-13 * m.norm() * x.norm(), "{m} {x}");
            assert!((x - y).norm() <= 1e-12 * y.norm(), "{x} {y}");
        }
        assert!(solve3(&Matrix3::<f64>::zeros(), &b).is_none());
        let singular = Matrix3::new(1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 0.0, 1.0, 1.0);
        assert!(solve3(&singular, &b).is_none_or(|x| !x.iter().all(|v| v.abs() < 1e15)));
    }
}
