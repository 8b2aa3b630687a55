//! Oriented particles: rigid bodies with a position, an orientation in SO(3), velocities
//! and a diagonal body-frame inertia (paper Section 4.2).

use super::error::XpbdError;
use crate::lie::{LieGroup, Real};
use nalgebra::{UnitQuaternion, Vector3};

/// Index of a body in a [`crate::xpbd::World`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BodyId(pub usize);

/// A rigid body ("oriented particle"), dynamic or fixed.
///
/// State: position p (m, world frame, centre of mass), orientation R (body → world),
/// linear velocity v (m/s, world frame), angular velocity ω (rad/s, **body** frame,
/// eq. 1/12). Mass m (kg) and principal inertia 𝓘 = diag(I₁, I₂, I₃) (kg·m², body
/// frame, body axes = principal axes), or fixed (infinite mass: never moved by the
/// solver). External force f (N, world frame) and torque τ (N·m, body frame) are held
/// constant over a step and enter the inertial prediction (46), (48).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Body<T: Real, G: LieGroup<T>> {
    /// Position of the centre of mass, m, world frame.
    pub position: Vector3<T>,
    /// Orientation, body → world.
    pub orientation: G,
    /// Linear velocity, m/s, world frame.
    pub velocity: Vector3<T>,
    /// Angular velocity, rad/s, body frame.
    pub angular_velocity: Vector3<T>,
    /// External force, N, world frame (gravity is added by the world, not here).
    pub force: Vector3<T>,
    /// External torque, N·m, body frame.
    pub torque: Vector3<T>,
    mass: T,
    inertia: Vector3<T>,
    inv_mass: T,
    inv_inertia: Vector3<T>,
    fixed: bool,
    // Solver state of the current substep: pose at its start (xⁿ) and the inertial
    // prediction (x̃).
    pub(crate) prev_position: Vector3<T>,
    // The sum of the substep's position corrections, so that v = (p − pⁿ)/h is taken as
    // ṽ + Σδp/h: no cancellation of two nearly equal positions (ε·|p|/h of velocity per
    // step, severe in f32 far from the origin), and no round trip (ṽh)/h of the
    // predicted part, whose rounding repeats step after step in a steady motion.
    displacement: Vector3<T>,
    // The rotation increment Exp(hΩ) of the substep's prediction, as a unit quaternion;
    // Rⁿᵀ·R = Exp(hΩ)·C with C = `correction` below. Their product, formed once in the
    // velocity update, keeps the ε relative accuracy of the vector parts for small
    // rotations: ω = Log(Rⁿᵀ R)/h then carries an error of ε·|ω|, not the ε/h of
    // Log(RⁿᵀR) taken from two rounded rotations.
    rotation_increment: UnitQuaternion<T>,
    // The predicted velocities (v + h(g + f/m), Ω) of the substep, and whether a
    // correction has moved the body since the prediction: an uncorrected body keeps
    // them exactly, instead of the round trip (v·h)/h and Log(Exp(hΩ))/h, whose
    // rounding repeats identically step after step for a steady motion and so drifts
    // linearly (ε per step: 3e-3 relative in 10⁶ f32 steps of a free spin).
    predicted_velocity: Vector3<T>,
    predicted_angular_velocity: Vector3<T>,
    corrected: bool,
    pub(crate) prev_orientation: G,
    pub(crate) predicted_position: Vector3<T>,
    pub(crate) predicted_orientation: G,
    // Compensated state (see `add_position` and `add_rotation`): the low part of the
    // position, p = position + position_lo exactly (|position_lo| ≤ ½ ulp), and the
    // orientation as orientation_base·since_base, with since_base a unit quaternion of at
    // most FOLD_ANGLE; `position`/`orientation` are their values rounded once. Without
    // it, every substep rounds the stored state once, and since the increment vh (or
    // ωh) changes slowly, the rounding errors have the same sign step after step: the
    // pose drifts from the integrated velocities, which f32 shows as an energy gain
    // (1 J/s in the triple pendulum with 1000 substeps).
    position_lo: Vector3<T>,
    // Low parts of the compensated velocities (see `update_velocity`), and the
    // substep's changes of them known before the solve: h(g + f/m) and Ω − ω.
    velocity_lo: Vector3<T>,
    omega_lo: Vector3<T>,
    velocity_step: Vector3<T>,
    omega_step: Vector3<T>,
    // The product of the substep's correction rotations Exp(δθ₁)Exp(δθ₂)… (the
    // increment after the prediction Exp(hΩ)), as a unit quaternion.
    correction: UnitQuaternion<T>,
    orientation_base: G,
    since_base: UnitQuaternion<T>,
    // The values last written to `position` and `orientation`, to notice a user's
    // change of the public fields between steps (the compensation then restarts).
    written_position: Vector3<T>,
    written_orientation: G,
}

/// Largest rotation kept in `since_base` before it is folded into the base orientation,
/// as sin(θ/2) of the quaternion's vector part (θ ≈ 0.0625 rad). A fold rounds the
/// orientation once (an unbiased error of about ε, at irregular times); the quaternion
/// holds the rotation since the fold to a relative ε of its (small) angle.
const FOLD_SIN_HALF: f64 = 1.0 / 32.0;

/// (hi, lo) ← (hi, lo) + d componentwise, exactly up to the rounding of lo: TwoSum of
/// hi and d, its error added to lo, then Fast2Sum to renormalise (|lo| ≤ ½ ulp(hi)).
/// Knuth, The Art of Computer Programming vol. 2, 4.2.2; Dekker 1971.
#[inline]
fn two_sum<T: Real>(hi: &mut Vector3<T>, lo: &mut Vector3<T>, d: &Vector3<T>) {
    for i in 0..3 {
        let (x, y) = (hi[i], d[i]);
        let s = x + y;
        let bv = s - x;
        let err = (x - (s - bv)) + (y - bv);
        let l = lo[i] + err;
        let top = s + l;
        lo[i] = l - (top - s);
        hi[i] = top;
    }
}

fn check_vec<T: Real>(v: &Vector3<T>, what: &str) -> Result<(), XpbdError> {
    if v.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(XpbdError::NonFinite {
            what: what.to_string(),
        })
    }
}

impl<T: Real, G: LieGroup<T>> Body<T, G> {
    /// A dynamic body at rest with mass `mass` (kg) and principal inertia `inertia`
    /// (kg·m², body frame).
    ///
    /// # Errors
    /// [`XpbdError::NonPositiveMass`], [`XpbdError::NonPositiveInertia`],
    /// [`XpbdError::NonPhysicalInertia`] if a moment exceeds the sum of the other two,
    /// [`XpbdError::NonFinite`] for a non-finite position or orientation, or
    /// [`XpbdError::NotARotation`] for an orientation that is not a rotation within
    /// [`crate::lie::Real::orthogonality_tolerance`].
    pub fn dynamic(
        mass: T,
        inertia: Vector3<T>,
        position: Vector3<T>,
        orientation: G,
    ) -> Result<Self, XpbdError> {
        // 1/m and 1/I must be finite and non-zero too (rejects subnormal masses, whose
        // inverse overflows, and masses so large that 1/m underflows to 0).
        let finite_inverse = |x: T| {
            let inv = T::one() / x;
            inv.is_finite() && inv > T::zero()
        };
        if !(mass.is_finite() && mass > T::zero() && finite_inverse(mass)) {
            return Err(XpbdError::NonPositiveMass {
                mass: mass.to_f64(),
            });
        }
        for (axis, &value) in inertia.iter().enumerate() {
            if !(value.is_finite() && value > T::zero() && finite_inverse(value)) {
                return Err(XpbdError::NonPositiveInertia {
                    axis,
                    value: value.to_f64(),
                });
            }
        }
        // Every rigid body has I₁ + I₂ ≥ I₃ (and permutations); the slack of 1e-9 of the
        // sum (as in scene files) admits thin rods and flat plates given to round-off.
        let (a, b2, c) = (inertia.x, inertia.y, inertia.z);
        let slack = (a + b2 + c) * crate::lie::real::c::<T>(1e-9);
        if a + b2 + slack < c || a + c + slack < b2 || b2 + c + slack < a {
            return Err(XpbdError::NonPhysicalInertia {
                inertia: [a.to_f64(), b2.to_f64(), c.to_f64()],
            });
        }
        let mut b = Self::fixed(position, orientation)?;
        b.mass = mass;
        b.inertia = inertia;
        b.inv_mass = T::one() / mass;
        b.inv_inertia = inertia.map(|i| T::one() / i);
        b.fixed = false;
        Ok(b)
    }

    /// A fixed body (infinite mass and inertia) at the given pose.
    ///
    /// # Errors
    /// [`XpbdError::NonFinite`] for a non-finite position or orientation,
    /// [`XpbdError::NotARotation`] for an orientation that is not a rotation.
    pub fn fixed(position: Vector3<T>, orientation: G) -> Result<Self, XpbdError> {
        check_vec(&position, "body position")?;
        if !orientation.to_matrix().iter().all(|x| x.is_finite()) {
            return Err(XpbdError::NonFinite {
                what: "body orientation".into(),
            });
        }
        crate::lie::matrix::validate_rotation_matrix(&orientation.to_matrix())
            .map_err(XpbdError::NotARotation)?;
        let z = Vector3::zeros();
        Ok(Self {
            position,
            orientation,
            velocity: z,
            angular_velocity: z,
            force: z,
            torque: z,
            mass: T::zero(),
            inertia: z,
            inv_mass: T::zero(),
            inv_inertia: z,
            fixed: true,
            prev_position: position,
            displacement: z,
            rotation_increment: UnitQuaternion::identity(),
            predicted_velocity: z,
            predicted_angular_velocity: z,
            corrected: false,
            prev_orientation: orientation,
            predicted_position: position,
            predicted_orientation: orientation,
            position_lo: z,
            velocity_lo: z,
            omega_lo: z,
            velocity_step: z,
            omega_step: z,
            correction: UnitQuaternion::identity(),
            orientation_base: orientation,
            since_base: UnitQuaternion::identity(),
            written_position: position,
            written_orientation: orientation,
        })
    }

    /// Sets the linear (m/s, world) and angular (rad/s, body) velocities.
    ///
    /// # Errors
    /// [`XpbdError::NonFinite`] if either has a non-finite entry.
    pub fn with_velocity(
        mut self,
        velocity: Vector3<T>,
        angular_velocity: Vector3<T>,
    ) -> Result<Self, XpbdError> {
        check_vec(&velocity, "body velocity")?;
        check_vec(&angular_velocity, "body angular velocity")?;
        self.velocity = velocity;
        self.angular_velocity = angular_velocity;
        Ok(self)
    }

    /// The current pose (position, m, world; orientation, body → world).
    #[inline]
    pub fn pose(&self) -> crate::lie::Pose<T, G> {
        crate::lie::Pose::new(self.position, self.orientation)
    }

    /// Whether the body is fixed (infinite mass).
    #[inline]
    pub fn is_fixed(&self) -> bool {
        self.fixed
    }

    /// Mass, kg (0 for a fixed body, meaning infinite).
    #[inline]
    pub fn mass(&self) -> T {
        self.mass
    }

    /// Principal inertia, kg·m², body frame (0 for a fixed body, meaning infinite).
    #[inline]
    pub fn inertia(&self) -> Vector3<T> {
        self.inertia
    }

    /// 1/m, 1/kg (0 for a fixed body).
    #[inline]
    pub fn inv_mass(&self) -> T {
        self.inv_mass
    }

    /// 𝓘⁻¹ diagonal, 1/(kg·m²), body frame (0 for a fixed body).
    #[inline]
    pub fn inv_inertia(&self) -> Vector3<T> {
        self.inv_inertia
    }

    /// Kinetic energy ½m|v|² + ½ωᵀ𝓘ω, J (0 for a fixed body).
    pub fn kinetic_energy(&self) -> T {
        let half = crate::lie::real::c::<T>(0.5);
        let rot = self
            .inertia
            .component_mul(&self.angular_velocity)
            .dot(&self.angular_velocity);
        half * (self.mass * self.velocity.norm_squared() + rot)
    }

    /// Inertial prediction of a substep of length `h` (s) under gravity `g` (m/s²):
    /// (48) p̃ = p + h v + h²(g + f/m) and (46) R̃ = R ⊞ hΩ, with
    /// Ω = ω + h𝓘⁻¹(τ − Ω×𝓘Ω) + O(h²) from the momentum-conserving implicit form of
    /// (46) (see `predict_rotation`).
    /// Stores the start pose and the prediction, and moves the body to the prediction.
    /// Fixed bodies stay where they are.
    pub(crate) fn predict(&mut self, h: T, gravity: &Vector3<T>) {
        self.resync_compensation();
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
    /// φ × 𝓘φ is not iterated on).
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
        // Newton on the rate Ω (φ = hΩ), from the linearised solution Δ.
        let iw = i.component_mul(&w);
        let delta0 = (self.torque - w.cross(&iw)).component_mul(&self.inv_inertia) * h;
        let coupling = w.cross(&i.component_mul(&delta0)) + delta0.cross(&iw);
        let mut delta = delta0 - coupling.component_mul(&self.inv_inertia) * (half * h);
        let tol = T::default_epsilon() * half;
        let tol_sq = tol * tol * target.norm_squared();
        let quarter = crate::lie::real::c::<T>(0.25);
        // Inertia differences of the Jacobian's off-diagonal entries.
        let (d21, d02, d10) = (i.z - i.y, i.x - i.z, i.y - i.x);
        // (squared residual, iterate) of the previous iteration.
        let mut prev: Option<(T, Vector3<T>)> = None;
        for _ in 0..8 {
            let phi = (w + delta) * h;
            let (a, b, _, value) = lhs(&phi);
            let g = value - target;
            let r2 = g.norm_squared();
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
            let c = <UnitQuaternion<T> as LieGroup<T>>::log(&self.correction);
            // Γ⁻¹(a)·c = c + ½ a×c + γ(|a|) a×(a×c) (27), as vectors.
            let ac = a.cross(&c);
            let g = crate::lie::so3::gamma_inv_coeff_sq(a.norm_squared());
            let linear = c + ac * crate::lie::real::c::<T>(0.5) + a.cross(&ac) * g;
            let increment = self.rotation_increment * self.correction;
            let full = <UnitQuaternion<T> as LieGroup<T>>::log(&increment) - a;
            let rest = full - linear;
            // |rest| > 64ε|a|, compared squared (no square roots).
            let noise = T::default_epsilon() * crate::lie::real::c::<T>(64.0);
            let d = if rest.norm_squared() > noise * noise * a.norm_squared() {
                full
            } else {
                linear
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
    }

    /// Applies a correction δp (m, world) and δθ (rad, body): p += δp, R ← R ⊞ δθ (58).
    #[inline]
    pub(crate) fn apply_correction(&mut self, dp: &Vector3<T>, dtheta: &Vector3<T>) {
        self.correct(dp, dtheta, true);
    }

    /// As `apply_correction`, for the last correction of a substep, followed by
    /// the velocity update before anything reads the orientation: the rotation is
    /// recorded (and folded, if due), but the public `orientation` is left to
    /// `update_velocity`, which composes it anyway (one composition instead of two).
    #[inline]
    pub(crate) fn apply_last_correction(&mut self, dp: &Vector3<T>, dtheta: &Vector3<T>) {
        self.correct(dp, dtheta, false);
    }

    // Kept out of line (one copy for the solver's many call sites).
    #[inline(never)]
    fn correct(&mut self, dp: &Vector3<T>, dtheta: &Vector3<T>, compose: bool) {
        if *dp == Vector3::zeros() && *dtheta == Vector3::zeros() {
            return;
        }
        self.add_position(dp);
        self.displacement += dp;
        self.corrected = true;
        // One Exp serves the correction product and the orientation (R ⊞ δθ = R·Exp(δθ)).
        let e = <UnitQuaternion<T> as LieGroup<T>>::exp(dtheta);
        self.correction *= e;
        self.add_rotation(&e, compose);
    }

    /// Restarts the compensation if the public `position` or `orientation` was changed
    /// since the solver last wrote it (a user moving the body between steps).
    fn resync_compensation(&mut self) {
        if self.position != self.written_position {
            self.position_lo = Vector3::zeros();
            self.written_position = self.position;
        }
        if self.orientation != self.written_orientation {
            self.orientation_base = self.orientation;
            self.since_base = UnitQuaternion::identity();
            self.written_orientation = self.orientation;
        }
    }

    /// p ← p + dp in compensated arithmetic ([`two_sum`]): the stored position is the
    /// exact sum of the increments rounded once, however many were added.
    #[inline]
    fn add_position(&mut self, dp: &Vector3<T>) {
        two_sum(&mut self.position, &mut self.position_lo, dp);
        self.written_position = self.position;
    }

    /// R ← R·q for a unit quaternion q: composed into `since_base`, which is folded into
    /// the base orientation once it exceeds [`FOLD_SIN_HALF`]; `orientation` is then the
    /// base composed with `since_base`, rounded once.
    /// With `compose` false (and no fold), `orientation` is left as it was, for the
    /// caller to compose.
    #[inline]
    fn add_rotation(&mut self, q: &UnitQuaternion<T>, compose: bool) {
        self.since_base *= q;
        let v = self.since_base.imag();
        let limit = crate::lie::real::c::<T>(FOLD_SIN_HALF);
        if v.norm_squared() > limit * limit {
            self.orientation_base = self
                .orientation_base
                .compose(&G::from_unit_quaternion_unchecked(&self.since_base))
                .renormalize();
            self.since_base = UnitQuaternion::identity();
            self.orientation = self.orientation_base;
        } else if compose {
            self.orientation = self
                .orientation_base
                .compose(&G::from_unit_quaternion_unchecked(&self.since_base));
        } else {
            return;
        }
        self.written_orientation = self.orientation;
    }

    /// The low part of the compensated position (m, world): the body is at
    /// `position + position_lo()` to within ε² |p|, |position_lo| ≤ ½ ulp(position).
    #[inline]
    pub fn position_lo(&self) -> Vector3<T> {
        self.position_lo
    }

    /// Whether every state entry is finite.
    pub fn is_finite(&self) -> bool {
        // x·0 is 0 for finite x and NaN for ±∞ or NaN, and NaN stays NaN in a sum: one
        // test instead of one per entry.
        let r = self.orientation.to_matrix();
        let z = T::zero();
        let (p, v, w) = (&self.position, &self.velocity, &self.angular_velocity);
        let mut acc = z;
        for i in 0..3 {
            acc += p[i] * z + v[i] * z + w[i] * z;
        }
        for x in r.iter() {
            acc += *x * z;
        }
        acc == z
    }

    /// The pose at the start of the last substep, (pⁿ, Rⁿ).
    pub fn previous_pose(&self) -> (Vector3<T>, G) {
        (self.prev_position, self.prev_orientation)
    }

    /// x ⊟ x̃ of the last substep, (p − p̃, R ⊟ R̃): position in m (world frame),
    /// rotation in rad (body frame of R̃), from the corrections applied since the
    /// inertial prediction (their sum, and the Log of their product), not from the
    /// difference of two rounded poses, which in f32 loses ε·|p| (≈ 1.5e-7 m at 2.5 m)
    /// of a correction of ~1e-5 m. Zero for a fixed body and before the first step.
    pub fn correction_since_prediction(&self) -> (Vector3<T>, Vector3<T>) {
        if self.fixed {
            return (Vector3::zeros(), Vector3::zeros());
        }
        (
            self.displacement,
            <UnitQuaternion<T> as LieGroup<T>>::log(&self.correction),
        )
    }

    /// The inertial prediction of the last substep, (p̃, R̃) (46), (48).
    pub fn predicted_pose(&self) -> (Vector3<T>, G) {
        (self.predicted_position, self.predicted_orientation)
    }

    /// The pose (p, R) in `f64` from the compensated state, for constraint values that
    /// must not carry the rounding of the stored pose ([`Real::WIDE_CONSTRAINT_VALUES`]):
    /// p = position + position_lo (exact in f64 for an f32 body) and
    /// R = base·since_base, the two factors widened, normalised and multiplied as unit
    /// quaternions in f64. The base's own rounding is a constant of the state between folds, not a
    /// noise. A public field changed since the solver wrote it is taken as it is.
    pub(crate) fn pose_f64(&self) -> (Vector3<f64>, nalgebra::UnitQuaternion<f64>) {
        let wide = |v: &Vector3<T>| v.map(|x| x.to_f64());
        let quat = |q: &nalgebra::Quaternion<T>| {
            nalgebra::Quaternion::new(q.w.to_f64(), q.i.to_f64(), q.j.to_f64(), q.k.to_f64())
        };
        let p = if self.position == self.written_position {
            wide(&self.position) + wide(&self.position_lo)
        } else {
            wide(&self.position)
        };
        let q = if self.orientation == self.written_orientation {
            nalgebra::UnitQuaternion::new_normalize(quat(&self.orientation_base.to_quaternion()))
                // Normalised in f64: the f32 norm error (ε, a new one every substep)
                // would otherwise scale rotated vectors by 1 ± ε.
                * nalgebra::UnitQuaternion::new_normalize(quat(self.since_base.quaternion()))
        } else {
            nalgebra::UnitQuaternion::new_normalize(quat(&self.orientation.to_quaternion()))
        };
        (p, q)
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
    use nalgebra::{Matrix3, Vector3};

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
