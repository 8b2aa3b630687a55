//! Oriented particles: rigid bodies with a position, an orientation in SO(3), velocities
//! and a diagonal body-frame inertia (paper Section 4.2).

use super::error::XpbdError;
use crate::lie::real::unit_quaternion_f64;
use crate::lie::{LieGroup, Real};
use nalgebra::{SVector, UnitQuaternion, Vector3};

mod predict;
mod step;
mod velocity_rotation;

pub(crate) use predict::predict_bodies;
pub(crate) use step::update_velocities;

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
    // Low parts of the compensated velocities (see `Body::velocity_change`), and the
    // substep's changes of them known before the solve: h(g + f/m) and Ω − ω.
    velocity_lo: Vector3<T>,
    omega_lo: Vector3<T>,
    velocity_step: Vector3<T>,
    omega_step: Vector3<T>,
    // The product of the substep's correction rotations Exp(δθ₁)Exp(δθ₂)… (the
    // increment after the prediction Exp(hΩ)), as a unit quaternion.
    correction: UnitQuaternion<T>,
    orientation_base: G,
    // orientation_base widened to f64 and normalised there, for `pose_f64`; kept only
    // where the f64 pose is used (Real::WIDE_CONSTRAINT_VALUES, f32), identity
    // otherwise. Set with the base (`set_orientation_base`): the base changes only at a
    // fold or a resync, while the f64 pose is read at every joint evaluation.
    base_f64: nalgebra::UnitQuaternion<f64>,
    since_base: UnitQuaternion<T>,
    // The values last written to `position` and `orientation`, to notice a user's
    // change of the public fields between steps (the compensation then restarts).
    written_position: Vector3<T>,
    written_orientation: G,
    // Set by the world before the last projection of a substep that moves the body and
    // cleared before `update_velocities`: the corrections in between leave `orientation`
    // to `update_velocities`, which composes it anyway (as `apply_last_correction`).
    pub(crate) defer_compose: bool,
    // Plain f32 arithmetic ([`crate::xpbd::F32Arithmetic::Plain`]): no low parts, the
    // orientation composed directly, no f64 joint values. Set by the world when the body
    // is added; read through `is_plain`, which is false at compile time in f64.
    plain: bool,
    // Substeps in plain arithmetic, for the periodic renormalisation (`step.rs`).
    plain_substeps: u32,
}

/// Largest rotation kept in `since_base` before it is folded into the base orientation,
/// as sin(θ/2) of the quaternion's vector part (θ ≈ 0.0625 rad). A fold rounds the
/// orientation once (an unbiased error of about ε, at irregular times); the quaternion
/// holds the rotation since the fold to a relative ε of its (small) angle.
const FOLD_SIN_HALF: f64 = 1.0 / 32.0;

/// (hi, lo) + d componentwise, exactly up to the rounding of lo: TwoSum of hi and d, its
/// error added to lo, then Fast2Sum to renormalise (|lo| ≤ ½ ulp(hi)); returns the new
/// (hi, lo). Knuth, The Art of Computer Programming vol. 2, 4.2.2; Dekker 1971.
///
/// Returned by value, for the caller to store each vector whole (and copy it from the
/// registers): written into the fields component by component, a vector read back
/// at once (`written_position`, `predicted_position`) was loaded across several
/// recent stores, which the store buffer cannot forward.
#[inline]
fn two_sum<T: Real>(hi: &Vector3<T>, lo: &Vector3<T>, d: &Vector3<T>) -> (Vector3<T>, Vector3<T>) {
    let (mut new_hi, mut new_lo) = (*hi, *lo);
    for i in 0..3 {
        let (x, y) = (hi[i], d[i]);
        let s = x + y;
        let bv = s - x;
        let err = (x - (s - bv)) + (y - bv);
        let l = lo[i] + err;
        let top = s + l;
        new_lo[i] = l - (top - s);
        new_hi[i] = top;
    }
    (new_hi, new_lo)
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
            base_f64: wide_base(&orientation),
            since_base: UnitQuaternion::identity(),
            written_position: position,
            written_orientation: orientation,
            defer_compose: false,
            plain: false,
            plain_substeps: 0,
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

    /// 𝓜⁻¹ diagonal as a 6-vector: (1/m, 1/m, 1/m, 𝓘⁻¹ diagonal), position part in
    /// 1/kg (world frame), orientation part in 1/(kg·m²) (body frame); zero for a fixed
    /// body.
    #[inline]
    pub fn inv_mass_diag(&self) -> SVector<T, 6> {
        let (m, i) = (self.inv_mass, self.inv_inertia);
        SVector::<T, 6>::from([m, m, m, i.x, i.y, i.z])
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
            crate::lie::quaternion::log_inline(&self.correction),
        )
    }

    /// The inertial prediction of the last substep, (p̃, R̃) (46), (48).
    pub fn predicted_pose(&self) -> (Vector3<T>, G) {
        (self.predicted_position, self.predicted_orientation)
    }

    /// Whether the orientation the solver last wrote is finite: false after a step
    /// that diverged, whatever the user wrote into the public field since.
    pub(crate) fn solver_orientation_is_finite(&self) -> bool {
        self.written_orientation
            .to_matrix()
            .iter()
            .all(|x| x.is_finite())
    }

    /// Whether this body runs in plain arithmetic ([`crate::xpbd::F32Arithmetic::Plain`]):
    /// only ever in `f32` (a constant `false` in `f64`, which the compiler folds, so the
    /// f64 code is the compensated code unchanged).
    #[inline(always)]
    pub(crate) fn is_plain(&self) -> bool {
        crate::lie::real::is_f32::<T>() && self.plain
    }

    /// Switches the body to plain (`true`: its low parts are dropped, the stored pose and
    /// velocities are taken as they are) or compensated arithmetic (its state is left
    /// as it is). No effect in `f64`.
    pub(crate) fn set_plain(&mut self, plain: bool) {
        self.plain = plain && crate::lie::real::is_f32::<T>();
        if !self.plain {
            return;
        }
        self.position_lo = Vector3::zeros();
        self.velocity_lo = Vector3::zeros();
        self.omega_lo = Vector3::zeros();
        self.set_orientation_base(self.orientation);
        self.since_base = UnitQuaternion::identity();
        self.written_position = self.position;
        self.written_orientation = self.orientation;
    }

    /// Sets the base orientation of the compensated state, and its f64 form.
    #[inline]
    pub(super) fn set_orientation_base(&mut self, base: G) {
        self.orientation_base = base;
        self.base_f64 = wide_base(&base);
    }

    /// The pose (p, R) in `f64` from the compensated state, for constraint values that
    /// must not carry the rounding of the stored pose ([`Real::WIDE_CONSTRAINT_VALUES`]):
    /// p = position + position_lo (exact in f64 for an f32 body) and
    /// R = base·since_base, the two factors widened, normalised and multiplied as unit
    /// quaternions in f64. The base's own rounding is a constant of the state between folds, not a
    /// noise. A public field changed since the solver wrote it is taken as it is.
    pub(crate) fn pose_f64(&self) -> (Vector3<f64>, nalgebra::UnitQuaternion<f64>) {
        let wide = |v: &Vector3<T>| v.map(|x| x.to_f64());
        let p = if self.position == self.written_position {
            wide(&self.position) + wide(&self.position_lo)
        } else {
            wide(&self.position)
        };
        let q = if self.orientation == self.written_orientation {
            // Each factor normalised in f64: the f32 norm error (ε, a new one every
            // substep) would otherwise scale rotated vectors by 1 ± ε. The base's is
            // kept from when the base was set.
            let base = if T::WIDE_CONSTRAINT_VALUES {
                debug_assert_eq!(self.base_f64, wide_base(&self.orientation_base));
                self.base_f64
            } else {
                unit_quaternion_f64(&self.orientation_base.to_quaternion())
            };
            base * unit_quaternion_f64(self.since_base.quaternion())
        } else {
            unit_quaternion_f64(&self.orientation.to_quaternion())
        };
        (p, q)
    }
}

/// `base` as a unit quaternion in f64, normalised there, where the f64 pose is used
/// ([`Real::WIDE_CONSTRAINT_VALUES`]); the identity otherwise (never read).
#[inline]
fn wide_base<T: Real, G: LieGroup<T>>(base: &G) -> nalgebra::UnitQuaternion<f64> {
    if T::WIDE_CONSTRAINT_VALUES {
        unit_quaternion_f64(&base.to_quaternion())
    } else {
        nalgebra::UnitQuaternion::identity()
    }
}
