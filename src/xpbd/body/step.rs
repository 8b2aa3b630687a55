//! The substep of a [`Body`]: the inertial prediction (46), (48) with its rotational
//! Newton solve, the corrections of the projections (58), and the velocity update
//! (Alg. 1 line 10), all in compensated arithmetic (the struct's docs).

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
            self.add_position(&(self.predicted_velocity * h));
            // One Exp serves the increment and the orientation.
            let (increment, omega, step) = self.predict_rotation(h);
            self.rotation_increment = increment;
            self.predicted_angular_velocity = omega;
            self.omega_step = step;
            self.add_rotation(&increment, true);
        }
        self.predicted_position = self.position;
        self.predicted_orientation = self.orientation;
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
            let k = crate::lie::real::c::<T>;
            let a = self.predicted_angular_velocity * h;
            // |rest| > 64ε|a|, compared squared (no square roots).
            let noise = T::default_epsilon() * k(64.0);
            // Squares compared scaled by a power of two from a (`inverse_binade`:
            // the same decisions, without subnormal squares in f32): threshold_sq is
            // (64ε|a|)²·scale².
            let scale = inverse_binade(abs_max3(&a), 60);
            let threshold_sq = noise * noise * (a * scale).norm_squared();
            let full = || {
                let increment = self.rotation_increment * self.correction;
                <UnitQuaternion<T> as LieGroup<T>>::log(&increment) - a
            };
            let linear = || {
                let c = <UnitQuaternion<T> as LieGroup<T>>::log(&self.correction);
                gamma_inv_times(&a, scale, &c)
            };
            let d = match bch_remainder_side(&a, &self.correction, scale, threshold_sq) {
                Some(true) => full(),
                Some(false) => linear(),
                None => {
                    let (full, linear) = (full(), linear());
                    let rest = full - linear;
                    if (rest * scale).norm_squared() > threshold_sq {
                        full
                    } else {
                        linear
                    }
                }
            };
            dw += d * inv_h;
        }
        two_sum(&mut self.velocity, &mut self.velocity_lo, &dv);
        two_sum(&mut self.angular_velocity, &mut self.omega_lo, &dw);
        // The base is renormalised at each fold; the increment since then is a product
        // of unit quaternions, renormalised here (for a small rotation this moves its
        // vector part by a relative ε only).
        self.since_base = UnitQuaternion::new_normalize(self.since_base.into_inner());
        self.orientation = self
            .orientation_base
            .compose(&G::from_unit_quaternion_unchecked(&self.since_base));
        self.written_orientation = self.orientation;
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
    #[inline]
    fn add_position(&mut self, dp: &Vector3<T>) {
        two_sum(&mut self.position, &mut self.position_lo, dp);
        // Within a substep only the f64 pose of the wide constraint values reads it
        // (`pose_f64`); otherwise `update_velocity`, which ends every substep, records it.
        if T::WIDE_CONSTRAINT_VALUES {
            self.written_position = self.position;
        }
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
    #[inline(always)]
    fn add_rotation(&mut self, q: &UnitQuaternion<T>, compose: bool) {
        self.since_base *= q;
        let v = self.since_base.imag();
        let limit = crate::lie::real::c::<T>(FOLD_SIN_HALF);
        if v.norm_squared() > limit * limit {
            self.set_orientation_base(
                self.orientation_base
                    .compose(&G::from_unit_quaternion_unchecked(&self.since_base))
                    .renormalize(),
            );
            self.since_base = UnitQuaternion::identity();
            self.orientation = self.orientation_base;
        } else if compose {
            self.orientation = self
                .orientation_base
                .compose(&G::from_unit_quaternion_unchecked(&self.since_base));
        } else {
            return;
        }
        // As in `add_position`: `update_velocity` records it at the end of the substep.
        if T::WIDE_CONSTRAINT_VALUES {
            self.written_orientation = self.orientation;
        }
    }
}

/// Which side of the threshold √`threshold_sq` (64ε|a|) the BCH remainder
/// r = Log(Exp(a)·C) − a − Γ⁻¹(a)·Log(C) of `Body::update_velocity` is certainly on,
/// from bounds alone: `Some(true)` above, `Some(false)` below, `None` if the bounds do
/// not decide (the caller then forms r and compares). The velocity update then forms
/// only the one formula it takes. The choice is the one the comparison makes, except
/// where the comparison would see only round-off of the difference above 64ε|a| (|a|
/// far below |c|, e.g. a pendulum at a turning point): "below" then takes the linear
/// form, as the rule intends (round-off is not fed back).
///
/// Every term of the Baker–Campbell–Hausdorff series of Log(Exp(â)Exp(ĉ)) beyond
/// â + ĉ is a nested bracket around [â, ĉ] = (a×c)^, so the terms of second and higher
/// order in c — r, the terms of first order being Γ⁻¹(a)c (26) — are bounded by
/// |c|·|c×a| times a series in |a| and |c|, led by (1/12)[ĉ,[ĉ,â]] = (1/12)·c×(c×a),
/// of size |c|·|c×a|/12 exactly (c ⊥ c×a). With |a| ≤ 0.1 and |c| ≤ 0.01 the higher
/// terms (of relative size ≲ 2|a| + |c|) and the estimate c ≈ 2·vec(C) (relative error
/// ≲ |c|²/12) keep |r| within a quarter of the leading term, hence:
/// * below: |c||c×a|/6 ≤ ¼·64ε|a| (e.g. c ∥ a, a planar motion: r = 0 exactly);
/// * above: |c||c×a|/12 > 8·64ε|a|, and sin∠(c, a) ≥ ¼ (so that the leading term is
///   not itself small against |c|²|a|/12, which bounds the rest).
///
/// Either margin is far beyond the round-off of the computed difference (a few ε|a|).
/// In f32 "above" never decides (|c| ≤ 0.01 cannot give 8·64ε|a|).
///
/// `threshold_sq` is (64ε|a|)² times `a_scale`², a power of two
/// ([`inverse_binade`] of a): the bounds are compared on a and c scaled by powers of
/// two, which decides as on the unscaled values (the scalings are exact) but keeps
/// the products of squares, of degree six in the small |a| and |c|, out of `f32`'s
/// subnormal range.
#[inline]
fn bch_remainder_side<T: Real>(
    a: &Vector3<T>,
    correction: &UnitQuaternion<T>,
    a_scale: T,
    threshold_sq: T,
) -> Option<bool> {
    let k = crate::lie::real::c::<T>;
    let q = correction.quaternion();
    let c = if q.w < T::zero() {
        -q.imag() * k(2.0)
    } else {
        q.imag() * k(2.0)
    };
    // a and c scaled by powers of two sa = `a_scale` and sc, exactly: every
    // comparison below is the unscaled one with both sides multiplied by the same
    // power of two (sa² for |a|², sc² for |c|², sc²sa² for |c×a|²; `threshold_sq`
    // carries sa²), so it decides alike, without subnormal products in f32.
    let c_scale = inverse_binade(abs_max3(&c), 30);
    let (a, c) = (a * a_scale, c * c_scale);
    let (sa2, sc2) = (a_scale * a_scale, c_scale * c_scale);
    let ca = c.cross(&a);
    let (aa, cc, caa) = (a.norm_squared(), c.norm_squared(), ca.norm_squared());
    if !(aa <= k(0.01) * sa2 && cc <= k(1e-4) * sc2) {
        return None;
    }
    // (|c||c×a|/6)² ≤ (threshold/4)²; both sides times sc⁴sa².
    let sc4 = sc2 * sc2;
    if cc * caa * k(16.0) <= k(36.0) * threshold_sq * sc4 {
        return Some(false);
    }
    // (|c||c×a|/12)² > (8·threshold)², sin²∠ ≥ 1/16.
    if caa * k(16.0) >= cc * aa && cc * caa > k(144.0 * 64.0) * threshold_sq * sc4 {
        return Some(true);
    }
    None
}

/// Γ⁻¹(a)·c = c + ½ a×c + γ(|a|) a×(a×c) (27), as vectors, for `a_scale` =
/// [`inverse_binade`] of a. Formed on sa = s·a and tc = t·c (s = `a_scale`, t the
/// same for c: powers of two that bring the largest component into [1, 2); 1 in
/// f64) and scaled back: t·Γ⁻¹(a)c = tc + (½/s)·u + (γ/s²)·(sa × u), u = sa × tc.
/// The scalings are exact (the unscaled result to the bit), but triple products of a
/// planar rod node's out-of-plane round-off (|a| ~ 1e-5, components ~ 1e-14) no longer
/// fall into f32's subnormals (~100 cycles each on x86: unscaled, 9 of 10 velocity
/// updates of the f32 cantilever of 1,000 cubic elements took one; 3.0 → 2.86 ms/step).
#[inline(always)]
fn gamma_inv_times<T: Real>(a: &Vector3<T>, a_scale: T, c: &Vector3<T>) -> Vector3<T> {
    let t = inverse_binade(abs_max3(c), 60);
    let inv_s = T::one() / a_scale;
    let (sa, tc) = (a * a_scale, c * t);
    let u = sa.cross(&tc);
    let g = crate::lie::so3::gamma_inv_coeff_sq(sa.norm_squared() * inv_s * inv_s);
    let half = crate::lie::real::c::<T>(0.5);
    (tc + u * (half * inv_s) + sa.cross(&u) * (g * inv_s * inv_s)) / t
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
    use super::{bch_remainder_side, gamma_inv_times, solve3};
    use crate::lie::real::{abs_max3, c, inverse_binade};
    use crate::lie::Real;
    use nalgebra::{Matrix3, UnitQuaternion, Vector3};

    /// Uniform samples in [0, 1) (xorshift from `state`).
    fn uniform(mut state: u64) -> impl FnMut() -> f64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Components uniform in [−size/2, size/2).
    fn vector<T: Real>(next: &mut impl FnMut() -> f64, size: f64) -> Vector3<T> {
        let v = Vector3::new(next() - 0.5, next() - 0.5, next() - 0.5);
        v.map(|x| c::<T>(x * size))
    }

    /// The unscaled bounds of `bch_remainder_side` (its form before the scaling).
    fn side_unscaled<T: Real>(a: &Vector3<T>, q: &UnitQuaternion<T>, thr: T) -> Option<bool> {
        let k = c::<T>;
        let q = q.quaternion();
        let s = if q.w < T::zero() { -k(2.0) } else { k(2.0) };
        let c = q.imag() * s;
        let ca = c.cross(a);
        let (aa, cc, caa) = (a.norm_squared(), c.norm_squared(), ca.norm_squared());
        if !(aa <= k(0.01) && cc <= k(1e-4)) {
            return None;
        }
        if cc * caa * k(16.0) <= k(36.0) * thr {
            return Some(false);
        }
        if caa * k(16.0) >= cc * aa && cc * caa > k(144.0 * 64.0) * thr {
            return Some(true);
        }
        None
    }

    /// The scaled bounds decide as the unscaled ones wherever the unscaled products
    /// stay normal (in f64 at these sizes, always), over magnitudes of a and c
    /// from 1e-7 to 0.3 and every angle between them.
    fn scaled_side_matches<T: Real>(smallest: f64) {
        let mut next = uniform(0x2545_f491_4f6c_dd1d);
        let mut decided = [0usize; 3];
        for _ in 0..20000 {
            let sa = smallest * (0.3 / smallest).powf(next());
            let sc = smallest * (0.3 / smallest).powf(next());
            let a = vector::<T>(&mut next, sa);
            // Sometimes c nearly parallel to a (a small c×a).
            let cv = if next() < 0.3 {
                a * c::<T>(sc / sa) + vector::<T>(&mut next, sc * 1e-4)
            } else {
                vector::<T>(&mut next, sc)
            };
            let q = <UnitQuaternion<T> as crate::lie::LieGroup<T>>::exp(&cv);
            let noise = T::default_epsilon() * c::<T>(64.0);
            let scale = inverse_binade(abs_max3(&a), 60);
            let thr = noise * noise * a.norm_squared();
            let thr_scaled = noise * noise * (a * scale).norm_squared();
            let want = side_unscaled(&a, &q, thr);
            assert_eq!(
                bch_remainder_side(&a, &q, scale, thr_scaled),
                want,
                "{a} {q}"
            );
            decided[match want {
                None => 0,
                Some(false) => 1,
                Some(true) => 2,
            }] += 1;
        }
        // Every outcome occurs (f32: "above" never decides, see the docs).
        assert!(decided[0] > 0 && decided[1] > 0, "{decided:?}");
        assert!(decided[2] > 0 || T::NAME == "f32", "{decided:?}");
    }

    /// The unscaled form of `gamma_inv_times`.
    fn gamma_inv_times_unscaled<T: Real>(a: &Vector3<T>, v: &Vector3<T>) -> Vector3<T> {
        let ac = a.cross(v);
        let g = crate::lie::so3::gamma_inv_coeff_sq(a.norm_squared());
        v + ac * c::<T>(0.5) + a.cross(&ac) * g
    }

    /// Scaled and unscaled Γ⁻¹(a)·c agree to the bit where the unscaled products stay
    /// normal (magnitudes 1e-6 to 0.3: the smallest triple product ~1e-18·1e-2).
    fn scaled_gamma_inv_matches<T: Real>() {
        let mut next = uniform(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20000 {
            let size_a = 1e-6 * (0.3e6_f64).powf(next());
            let size_c = 1e-6 * (0.3e6_f64).powf(next());
            let a = vector::<T>(&mut next, size_a);
            let cv = vector::<T>(&mut next, size_c);
            let scale = inverse_binade(abs_max3(&a), 60);
            assert_eq!(
                gamma_inv_times(&a, scale, &cv),
                gamma_inv_times_unscaled(&a, &cv),
                "{a} {cv}"
            );
        }
    }

    #[test]
    fn scaled_gamma_inv_times_is_the_unscaled_formula() {
        scaled_gamma_inv_matches::<f64>();
        scaled_gamma_inv_matches::<f32>();
    }

    /// Regression (subnormal assists in 9 of 10 velocity updates of the f32
    /// cantilever): a rod node's a and c (in-plane ~1e-5, out-of-plane ~1e-11, ~1e-14)
    /// give no subnormal (MXCSR flags DE, UE clear) where the unscaled formula
    /// underflows (a_z·(a×c)_x ≈ 6e-39); the two agree to an ulp of |Γ⁻¹(a)c|.
    #[cfg(target_arch = "x86_64")]
    #[test]
    #[allow(deprecated)] // _mm_getcsr / _mm_setcsr: only to read and clear the flags
    fn planar_rod_node_velocity_update_makes_no_subnormals() {
        use std::arch::x86_64::{_mm_getcsr, _mm_setcsr};
        use std::hint::black_box;
        let a = black_box(Vector3::new(
            6.546_584_2e-6_f32,
            7.539_093e-12,
            1.103_965_4e-14,
        ));
        let cv = black_box(Vector3::new(
            9.881_637e-6_f32,
            -1.884_772_7e-11,
            -9.571_112e-14,
        ));
        let flags = 0x12; // MXCSR DE (denormal operand) | UE (underflow)

        // SAFETY: reads and clears the status flags only.
        let run = |f: &dyn Fn() -> Vector3<f32>| unsafe {
            _mm_setcsr(_mm_getcsr() & !0x3f);
            let r = black_box(f());
            (r, _mm_getcsr() & flags)
        };
        let (scaled, scaled_flags) =
            run(&|| gamma_inv_times(&a, inverse_binade(abs_max3(&a), 60), &cv));
        let (unscaled, unscaled_flags) = run(&|| gamma_inv_times_unscaled(&a, &cv));
        assert_eq!(scaled_flags, 0, "the scaled form met a subnormal");
        assert_ne!(unscaled_flags, 0, "the case no longer underflows unscaled");
        assert!((scaled - unscaled).norm() <= f32::EPSILON * scaled.norm());
    }

    #[test]
    fn scaled_bch_bounds_decide_as_unscaled() {
        scaled_side_matches::<f64>(1e-7);
        // f32: squares of components down to ~1e-9 stay normal.
        scaled_side_matches::<f32>(1e-3);
    }

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
