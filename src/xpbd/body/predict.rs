//! The inertial prediction of a substep (46), (48) for a slice of bodies, with the
//! rotational Newton solve of each ([`RotationNewton`]).
//!
//! # Stages
//! The bodies are predicted in batches of [`BATCH`], in three stages over the batch:
//! the start of each body's prediction (the translation, and the rotation's first
//! residual), then the Newton iterations of the rotations in lockstep (iteration k of
//! every body still iterating, then iteration k + 1), then the increments Exp(hΩ) and
//! the predicted orientations. Each body's arithmetic is what it would be alone, operation
//! for operation; only the order in which independent bodies are computed changes.
//!
//! One body's prediction is a chain of dependent operations (the residual, a 3×3 solve
//! with its division, the next residual, Exp): several hundred instructions that the
//! processor's reorder window cannot overlap with the next body's. In stages, each
//! body's part of a stage is short and independent of the other bodies', so the parts of
//! a batch run side by side. (3-RPS robot, block mode, f64, rdtsc ticks per substep for
//! its seven moving bodies: before this, about 1,900 for the prediction; the figures
//! after are in the commit that introduced the stages.)

use super::*;
use crate::lie::fma::axpy3;
use crate::lie::real::{abs_max3, c, inverse_binade};

/// Bodies predicted together (module docs: stages). Eight keep a batch's bodies and their
/// Newton states in the level-1 cache (a [`Body`] is up to about 1 KiB).
pub(super) const BATCH: usize = 8;

/// Predicts every body of `bodies` for a substep of length `h` (s) under gravity `g`
/// (m/s²), each as `Body::predict` describes, in stages (module docs). With `resync`
/// false the caller has already called `resync_compensation` of every body since the
/// public fields could last be changed (`World::step` does, once per step).
pub(crate) fn predict_bodies<T: Real, G: LieGroup<T>>(
    bodies: &mut [Body<T, G>],
    h: T,
    gravity: &Vector3<T>,
    resync: bool,
) {
    for batch in bodies.chunks_mut(BATCH) {
        let mut newton: [Option<RotationNewton<T>>; BATCH] = [None; BATCH];
        for (body, state) in batch.iter_mut().zip(&mut newton) {
            *state = body.predict_translation(h, gravity, resync);
        }
        for _ in 0..MAX_ITERATIONS {
            let mut any = false;
            for state in newton.iter_mut().flatten().filter(|s| s.active) {
                state.iterate();
                any |= state.active;
            }
            if !any {
                break;
            }
        }
        for (body, state) in batch.iter_mut().zip(&newton) {
            if let Some(state) = state {
                let (omega, step) = state.result(&body.torque);
                body.predict_orientation(h, omega, step);
            }
        }
    }
}

/// At most this many iterations of [`RotationNewton`].
const MAX_ITERATIONS: usize = 8;

/// The residual within which an iteration that stops halving it counts as converged,
/// in multiples of the tolerance (its evaluation's round-off is a few ε·h|Π|, the
/// tolerance ε/2·h|Π|).
const CONVERGED_WITHIN: f64 = 100.0;

/// |φ| = h|Ω| (rad) from which [`RotationNewton`] iterates with the exact Jacobian
/// (type docs).
const EXACT_JACOBIAN_FROM: f64 = 0.1;

impl<T: Real, G: LieGroup<T>> Body<T, G> {
    /// Inertial prediction of a substep of length `h` (s) under gravity `g` (m/s²):
    /// (48) p̃ = p + h v + h²(g + f/m) and (46) R̃ = R ⊞ hΩ, with
    /// Ω = ω + h𝓘⁻¹(τ − Ω×𝓘Ω) + O(h²) from the momentum-conserving implicit form of
    /// (46) ([`RotationNewton`]).
    /// Stores the start pose and the prediction, and moves the body to the prediction.
    /// Fixed bodies stay where they are. The same as [`predict_bodies`] on this body
    /// alone.
    #[cfg(test)]
    pub(crate) fn predict(&mut self, h: T, gravity: &Vector3<T>, resync: bool) {
        predict_bodies(std::slice::from_mut(self), h, gravity, resync);
    }

    /// The first stage of the prediction: the start pose, the translation, and for a
    /// dynamic body the start of its rotational Newton solve. `None` if no iteration is
    /// needed (a fixed body, or Ω = ω: [`RotationNewton::begin`]); the prediction is
    /// then complete.
    #[inline(always)]
    fn predict_translation(
        &mut self,
        h: T,
        gravity: &Vector3<T>,
        resync: bool,
    ) -> Option<RotationNewton<T>> {
        if resync {
            self.resync_compensation(true);
        }
        self.prev_position = self.position;
        self.displacement = Vector3::zeros();
        self.prev_orientation = self.orientation;
        self.rotation_increment = UnitQuaternion::identity();
        self.corrected = false;
        if self.fixed {
            self.predicted_position = self.position;
            self.predicted_orientation = self.orientation;
            return None;
        }
        let acc = gravity + self.force * self.inv_mass;
        self.velocity_step = acc * h;
        self.correction = UnitQuaternion::identity();
        self.predicted_velocity = self.velocity + self.velocity_step;
        // Copied from the value just written, not reloaded from its field (`two_sum`).
        self.predicted_position = self.add_position(&(self.predicted_velocity * h));
        let newton = RotationNewton::begin(self, h);
        if newton.is_none() {
            // Ω = ω: the prediction is complete without iterations.
            let w = self.angular_velocity;
            self.predict_orientation(h, w, Vector3::zeros());
        }
        newton
    }

    /// The last stage of the prediction of a dynamic body: the increment Exp(hΩ) of the
    /// solved rotation, and the predicted orientation. One Exp serves the increment and
    /// the orientation.
    #[inline(always)]
    fn predict_orientation(&mut self, h: T, omega: Vector3<T>, step: Vector3<T>) {
        let increment = <UnitQuaternion<T> as LieGroup<T>>::exp(&(omega * h));
        self.rotation_increment = increment;
        self.predicted_angular_velocity = omega;
        self.omega_step = step;
        self.predicted_orientation = self.add_rotation(&increment, true);
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
/// From |φ| ≥ 0.1 rad on, where that gain would no longer reach the tolerance within
/// the 8 iterations (the iteration stalled from |φ| ≈ 0.4 rad on), the derivatives are
/// included: ∇a = (a′/θ)φ with a′/θ = β − b (β = (θ − sin θ)/θ³,
/// [`crate::lie::so3::beta`]) and ∇b = (b′/θ)φ
/// ([`crate::lie::so3::alpha_prime_over_theta`]) add the rank-one term
/// (a′/θ·𝓘φ + b′/θ·φ × 𝓘φ)φᵀ, and the iteration converges quadratically
/// (`proofs/rotational_prediction.md`).
/// The iteration stops when the residual is below ε/2·h|Π| (the round-off of the
/// right side: a looser stop leaves a residual of one sign step after step, which
/// f32 turns into an energy drift), or when an iteration no longer halves the
/// residual (it has reached the round-off of its own evaluation, which can exceed
/// ε/2·h|Π|; the iterate with the smaller residual is kept), or after 8 iterations.
/// For |φ| ≳ π/2 the left side saturates (like sin θ) and the equation may have no
/// solution; a singular Jacobian or a non-finite iterate or residual then keeps the
/// last iterate with a finite residual, so the prediction is always finite for finite
/// state. An iteration that ends without converging (its residual above 100 times the
/// tolerance) has no energy guarantee: its Ω is scaled down, where needed, to the
/// kinetic energy ½ωᵀ𝓘ω + hτ·Ω, so that a body spinning faster than the step can
/// follow never gains energy from the prediction (it may lose some, until its spin is
/// one the step can follow; before, 19 free bodies with anisotropic inertia at up to
/// 1,400 rad/s, h = 1 ms, reached 1e257 J within 8 steps). The angular momentum of
/// such a step is not conserved. Without torque, when the inertia is isotropic or
/// φ × 𝓘φ at φ = hω is exactly zero (a spin about a principal axis, as in the planar
/// pendulum, or no spin), Ω = ω solves the equation exactly (φ × 𝓘φ = 0, so both
/// sides are a·𝓘φ) and no iteration is made (for an isotropic body, the rounding of
/// the computed φ × 𝓘φ is not iterated on). Otherwise Ω = ω is still taken without
/// iteration when its residual a·𝓘φ + b·φ × 𝓘φ − (a·𝓘φ − b·φ × 𝓘φ + h²τ) already meets the
/// stopping rule: a rod node (𝓘 = (I, I, 2I)) bending with a twist rate of
/// round-off size, whose residual is 2b·φ × 𝓘φ ≈ h|ω_twist| relative. This skips the
/// linearised guess and one evaluation of the left side (callgrind, cantilever of
/// 160 linear elements, f64: 765.9k → 739.2k instructions per step).
///
/// The result is Ω and Ω − ω as iterated (not as the difference of the rounded Ω and
/// ω, whose rounding would repeat step after step); the increment is Exp(hΩ).
#[derive(Debug, Clone, Copy)]
struct RotationNewton<T: Real> {
    /// ω (rad/s, body frame).
    w: Vector3<T>,
    h: T,
    /// 𝓘 (kg·m², principal, body frame).
    inertia: Vector3<T>,
    /// The right side a·𝓘φ − b·φ × 𝓘φ + h²τ at φ = hω.
    target: Vector3<T>,
    /// The power of two the residuals are scaled by before squaring.
    scale: T,
    /// The squared stopping tolerance (scaled).
    tol_sq: T,
    /// Ω − ω of the current iterate.
    delta: Vector3<T>,
    /// (squared residual, iterate) of the previous iteration.
    prev: Option<(T, Vector3<T>)>,
    /// Whether the iteration goes on.
    active: bool,
    /// Whether the iteration stopped at a solution: its residual within the
    /// tolerance, or within [`CONVERGED_WITHIN`] times it where an iteration stopped
    /// halving the residual.
    converged: bool,
}

/// a, b, 𝓘φ and a·𝓘φ + b·φ × 𝓘φ at φ.
#[inline(always)]
fn lhs<T: Real>(i: &Vector3<T>, phi: &Vector3<T>) -> (T, T, Vector3<T>, Vector3<T>) {
    let (a, b) = crate::lie::so3::sinc_alpha_sq(phi.norm_squared());
    let ip = i.component_mul(phi);
    (a, b, ip, axpy3(&phi.cross(&ip), b, &(ip * a)))
}

impl<T: Real> RotationNewton<T> {
    /// The state of `body` before the first iteration, from the linearised guess Δ;
    /// `None` where Ω = ω is decided without iteration (type docs).
    #[inline(always)]
    fn begin<G: LieGroup<T>>(body: &Body<T, G>, h: T) -> Option<Self> {
        let i = body.inertia;
        let w = body.angular_velocity;
        let zero = Vector3::zeros();
        let phi_w = w * h;
        let ip = i.component_mul(&phi_w);
        let gyro_phi = phi_w.cross(&ip);
        let isotropic = i.x == i.y && i.y == i.z;
        if body.torque == zero && (isotropic || gyro_phi == zero) {
            return None;
        }
        let (a, b) = crate::lie::so3::sinc_alpha_sq(phi_w.norm_squared());
        let target = axpy3(&gyro_phi, -b, &(ip * a)) + body.torque * (h * h);
        let half = c::<T>(0.5);
        let tol = T::default_epsilon() * half;
        // The squared residuals are compared scaled by a power of two from the
        // target (`inverse_binade`: the same decisions, without subnormal squares of
        // round-off components).
        let scale = inverse_binade(abs_max3(&target), 60);
        let tol_sq = tol * tol * (target * scale).norm_squared();
        // Ω = ω when it already meets the stopping rule: its residual
        // a·𝓘φ + b·φ × 𝓘φ − target is formed from the terms above (a rod node,
        // 𝓘 = (I, I, 2I), bending with a round-off twist rate).
        let g0 = axpy3(&gyro_phi, b, &(ip * a)) - target;
        if (g0 * scale).norm_squared() <= tol_sq {
            return None;
        }
        // Newton on the rate Ω (φ = hΩ), from the linearised solution Δ.
        let iw = i.component_mul(&w);
        let delta0 = (body.torque - w.cross(&iw)).component_mul(&body.inv_inertia) * h;
        let coupling = w.cross(&i.component_mul(&delta0)) + delta0.cross(&iw);
        Some(Self {
            w,
            h,
            inertia: i,
            target,
            scale,
            tol_sq,
            delta: delta0 - coupling.component_mul(&body.inv_inertia) * (half * h),
            prev: None,
            active: true,
            converged: false,
        })
    }

    /// (Ω, Ω − ω) of the solve. Where the iteration did not converge, Ω is scaled down
    /// (if needed) to the kinetic energy ½ωᵀ𝓘ω + hτ·Ω (torque `torque`, N·m, body
    /// frame) and Ω − ω taken from the scaled Ω (type docs).
    #[inline(always)]
    fn result(&self, torque: &Vector3<T>) -> (Vector3<T>, Vector3<T>) {
        let omega = self.w + self.delta;
        if self.converged {
            return (omega, self.delta);
        }
        let i = self.inertia;
        let twice = omega.dot(&i.component_mul(&omega));
        let allowed =
            self.w.dot(&i.component_mul(&self.w)) + torque.dot(&omega) * (c::<T>(2.0) * self.h);
        if twice <= allowed {
            return (omega, self.delta);
        }
        let scaled = omega * (allowed.max(T::zero()) / twice).sqrt();
        (scaled, scaled - self.w)
    }

    /// One iteration: the residual at the current iterate, the stopping rules (type
    /// docs), and if none stops, the Newton step. Sets `active` false when the iteration
    /// stops.
    #[inline(always)]
    fn iterate(&mut self) {
        let (i, h) = (self.inertia, self.h);
        let phi = (self.w + self.delta) * h;
        let (a, b, ip, value) = lhs(&i, &phi);
        let g = value - self.target;
        let r2 = (g * self.scale).norm_squared();
        self.active = false;
        if !r2.is_finite() {
            if let Some((_, d)) = self.prev {
                self.delta = d;
            }
            return;
        }
        if r2 <= self.tol_sq {
            self.converged = true;
            return;
        }
        // Set only where the iteration stops (`converged` is false while it goes on).
        let near = |r2: T| r2 <= self.tol_sq * c::<T>(CONVERGED_WITHIN * CONVERGED_WITHIN);
        if let Some((p2, d)) = self.prev {
            if r2 > p2 * c::<T>(0.25) {
                let kept = if r2 > p2 {
                    self.delta = d;
                    p2
                } else {
                    r2
                };
                self.converged = near(kept);
                return;
            }
        }
        let jac = newton_jacobian(&i, &phi, h, a, b, &ip);
        let Some(step) = solve3(&jac, &g) else {
            self.converged = near(r2);
            return;
        };
        let next = self.delta - step;
        if !next.iter().all(|x| x.is_finite()) {
            self.converged = near(r2);
            return;
        }
        self.prev = Some((r2, self.delta));
        self.delta = next;
        self.active = true;
    }
}

/// The Jacobian with respect to Ω of the left side a·𝓘φ + b·φ × 𝓘φ at φ = hΩ
/// ([`RotationNewton`] docs), given a, b and 𝓘φ at φ: a·𝓘 + b·(φ̂𝓘 − (𝓘φ)^) times h,
/// with the derivatives of a and b from |φ| ≥ [`EXACT_JACOBIAN_FROM`] on.
#[inline(always)]
fn newton_jacobian<T: Real>(
    i: &Vector3<T>,
    phi: &Vector3<T>,
    h: T,
    a: T,
    b: T,
    ip: &Vector3<T>,
) -> nalgebra::Matrix3<T> {
    // Inertia differences of the Jacobian's off-diagonal entries.
    let (d21, d02, d10) = (i.z - i.y, i.x - i.z, i.y - i.x);
    let (ah, bh) = (a * h, b * h);
    let (px, py, pz) = (phi.x * bh, phi.y * bh, phi.z * bh);
    let mut jac = nalgebra::Matrix3::new(
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
    let t2 = phi.norm_squared();
    if t2 >= c::<T>(EXACT_JACOBIAN_FROM * EXACT_JACOBIAN_FROM) {
        jac += coefficient_derivatives(phi, h, b, ip, t2);
    }
    jac
}

/// The part of [`newton_jacobian`] from the derivatives of a and b at φ (θ² = `t2`,
/// b and 𝓘φ given): ∇a = (a′/θ)φ, ∇b = (b′/θ)φ, with a′/θ = β − b
/// (β = (θ − sin θ)/θ³) and b′/θ of `alpha_prime_over_theta`, give
/// h·(𝓘φ ∇aᵀ + (φ × 𝓘φ) ∇bᵀ), one rank-one matrix along φᵀ
/// (`proofs/rotational_prediction.md`). Out of line: only fast spins need it.
#[cold]
#[inline(never)]
fn coefficient_derivatives<T: Real>(
    phi: &Vector3<T>,
    h: T,
    b: T,
    ip: &Vector3<T>,
    t2: T,
) -> nalgebra::Matrix3<T> {
    let t = t2.sqrt();
    let da = crate::lie::so3::beta(t) - b;
    let db = crate::lie::so3::alpha_prime_over_theta(t);
    let gyro = phi.cross(ip);
    (ip * (da * h) + gyro * (db * h)) * phi.transpose()
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
    let x = axpy3(&c2, b.z, &axpy3(&c1, b.y, &(c0 * b.x))) / det;
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::{lhs, newton_jacobian, predict_bodies, solve3, BATCH};
    use crate::lie::real::{abs_max3, c, inverse_binade};
    use crate::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
    use crate::xpbd::Body;
    use nalgebra::{Matrix3, Vector3};

    /// Bodies whose predictions take every path of the rotational Newton solve: fixed,
    /// isotropic, a spin about a principal axis (Ω = ω exactly), tumbling (iterated),
    /// under torque, and a rotation too fast for the equation (|hω| ≳ π/2: the iteration
    /// stops on its safeguards), in a number that leaves a partial last batch.
    fn bodies<T: Real, G: LieGroup<T>>() -> Vec<Body<T, G>> {
        let v = |x: f64, y: f64, z: f64| Vector3::new(c::<T>(x), c::<T>(y), c::<T>(z));
        let rotation = G::exp(&v(0.3, -0.2, 0.5));
        let mut out = vec![Body::fixed(v(0.0, 1.0, 0.0), rotation).unwrap()];
        let cases = [
            ((1.0, 1.0, 1.0), (3.0, -2.0, 5.0), (0.0, 0.0, 0.0)),
            ((1.0, 2.0, 3.0), (0.0, 0.0, 4.0), (0.0, 0.0, 0.0)),
            ((1.0, 2.0, 3.0), (3.0, -2.0, 5.0), (0.0, 0.0, 0.0)),
            ((0.1, 0.2, 0.25), (-1.0, 7.0, 0.5), (0.3, 0.0, -0.2)),
            ((2.0, 2.0, 4.0), (1e-9, 2.0, 0.0), (0.0, 0.0, 0.0)),
            ((1.0, 5.0, 5.5), (400.0, -300.0, 900.0), (0.0, 0.0, 0.0)),
        ];
        for k in 0..2 * BATCH {
            let (i, w, tau) = cases[k % cases.len()];
            let scale = c::<T>(1.0 + k as f64 / 8.0);
            let mut b = Body::dynamic(
                T::one(),
                v(i.0, i.1, i.2) * scale,
                v(0.0, k as f64, 0.0),
                rotation,
            )
            .unwrap();
            b.angular_velocity = v(w.0, w.1, w.2);
            b.torque = v(tau.0, tau.1, tau.2);
            b.velocity = v(1.0, -2.0, 0.5);
            out.push(b);
        }
        out
    }

    /// The staged prediction of a slice of bodies gives every body the prediction it
    /// gets alone, bit for bit (module docs: stages): the lockstep iterations keep each
    /// body's own sequence of iterates and stopping decisions.
    fn staged_prediction_is_per_body<T: Real, G: LieGroup<T>>() {
        let (h, g) = (
            c::<T>(1e-3),
            Vector3::new(T::zero(), c::<T>(-9.81), T::zero()),
        );
        let mut together = bodies::<T, G>();
        let mut alone = together.clone();
        for _ in 0..3 {
            predict_bodies(&mut together, h, &g, true);
            for b in &mut alone {
                b.predict(h, &g, true);
            }
            assert_eq!(together, alone, "{} {}", T::NAME, G::NAME);
        }
        let moved = together
            .iter()
            .skip(1)
            .all(|b| b.predicted_orientation != b.prev_orientation);
        assert!(moved, "every dynamic body turns");
    }

    #[test]
    fn staged_prediction_matches_each_body_alone() {
        staged_prediction_is_per_body::<f64, SO3Matrix<f64>>();
        staged_prediction_is_per_body::<f64, UnitQuaternion<f64>>();
        staged_prediction_is_per_body::<f32, SO3Matrix<f32>>();
        staged_prediction_is_per_body::<f32, UnitQuaternion<f32>>();
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

    /// The Newton Jacobian against central differences of the left side in Ω, from
    /// |hΩ| = 0.1 rad (where the derivatives of a and b are included) to 1.4 rad, at
    /// random triaxial inertias and directions (a deterministic sequence), in `T`, with
    /// step `step` (rad, in φ) and tolerance `tol` (relative to the largest entry).
    fn jacobian_matches_differences<T: Real>(step: f64, tol: f64) {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let h = c::<T>(1e-3);
        for _ in 0..2000 {
            let i = Vector3::from_fn(|_, _| c::<T>(rng.random_range(0.2..6.0)));
            let dir = Vector3::from_fn(|_, _| rng.random_range(-1.0..1.0_f64)).normalize();
            let theta = rng.random_range(super::EXACT_JACOBIAN_FROM..1.4);
            let omega = dir.map(|x| c::<T>(x * theta)) / h;
            let phi = omega * h;
            let (a, b, ip, _) = lhs(&i, &phi);
            let jac = newton_jacobian(&i, &phi, h, a, b, &ip);
            let d = c::<T>(step) / h;
            let scale = jac.abs().max();
            for k in 0..3 {
                let mut e = Vector3::zeros();
                e[k] = d;
                let plus = lhs(&i, &((omega + e) * h)).3;
                let minus = lhs(&i, &((omega - e) * h)).3;
                let fd = (plus - minus) / (c::<T>(2.0) * d);
                let err = (fd - jac.column(k)).abs().max();
                assert!(
                    err <= c::<T>(tol) * scale,
                    "{}: θ = {theta}, 𝓘 = {i:?}, column {k}: error {:e} of {:e}",
                    T::NAME,
                    err.to_f64(),
                    scale.to_f64()
                );
            }
        }
    }

    /// [`jacobian_matches_differences`] in both scalars (the solve has no rotation
    /// representation: it works on vectors). f64: step 1e-5 rad, truncation O(1e-10)
    /// relative, round-off ε·|a𝓘φ|/1e-5 ≈ 1e-10 of the derivative's size, tolerance
    /// 1e-7 (the Lie toolkit's f64 finite-difference tolerance). f32: step 1e-2 rad,
    /// truncation O(1e-4), round-off 1.2e-7/1e-2 ≈ 1e-5, tolerance 1e-3 (the toolkit's
    /// f32 pair). The Jacobian without the derivatives misses by O(θ²), 1.3e-3 of the
    /// largest entry in f64.
    #[test]
    fn newton_jacobian_matches_finite_differences() {
        jacobian_matches_differences::<f64>(1e-5, 1e-7);
        jacobian_matches_differences::<f32>(1e-2, 1e-3);
    }
}
