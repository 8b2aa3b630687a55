//! The substep of a [`Body`] after its prediction (`predict.rs`): the corrections of
//! the projections (58) and the velocity update (Alg. 1 line 10), in compensated
//! arithmetic (the struct's docs).

use super::predict::BATCH;
use super::velocity_rotation::rotation_change;
use super::*;

/// Plain arithmetic renormalises a body's orientation every this many substeps. Each
/// composition R·Exp(δθ) (three or four per substep) moves R off the rotations by about
/// ε (a random walk); 16 substeps leave it within ~10ε of a rotation, below the ε·|r|
/// rounding of the rotated vectors it feeds, while the renormalisation of a matrix,
/// R(3I − RᵀR)/2, costs two 3×3 products (about 150 instructions per body).
const PLAIN_RENORMALIZE_EVERY: u32 = 16;

impl<T: Real, G: LieGroup<T>> Body<T, G> {
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
    ///
    /// This part returns the bracketed changes (`None` for a fixed body);
    /// `add_velocity_change` adds them and composes the orientation.
    ///
    /// In plain arithmetic ([`crate::xpbd::F32Arithmetic::Plain`]) it returns the new
    /// velocities themselves, each formed in `T` with one rounding per operation:
    ///
    /// ```text
    /// v = ṽ + Σδp/h,   ω = Log(Exp(hΩ)·C)/h   (ω = Ω for a body no correction moved)
    /// ```
    ///
    /// which is v = (p − pⁿ)/h and ω = (R ⊟ Rⁿ)/h of Algorithm 1 with p − pⁿ and
    /// Rⁿᵀ·R taken from the substep's increments (not from two rounded poses), without
    /// the compensated sums and without the split of the rotation change into Γ⁻¹ and
    /// its remainder that keeps round-off from being fed back.
    #[inline(always)]
    fn velocity_change(&self, h: T) -> Option<(Vector3<T>, Vector3<T>)> {
        if self.fixed {
            return None;
        }
        let inv_h = T::one() / h;
        if self.is_plain() {
            let v = self.predicted_velocity + self.displacement * inv_h;
            if !self.corrected {
                return Some((v, self.predicted_angular_velocity));
            }
            let increment = crate::lie::fma::quat_mul(&self.rotation_increment, &self.correction);
            let w = <UnitQuaternion<T> as LieGroup<T>>::log(&increment) * inv_h;
            return Some((v, w));
        }
        let dv = self.velocity_step + self.displacement * inv_h;
        let mut dw = self.omega_step;
        if self.corrected {
            let a = self.predicted_angular_velocity * h;
            let full = || {
                let increment =
                    crate::lie::fma::quat_mul(&self.rotation_increment, &self.correction);
                <UnitQuaternion<T> as LieGroup<T>>::log(&increment) - a
            };
            let d = rotation_change(&a, &self.correction, full);
            dw += d * inv_h;
        }
        Some((dv, dw))
    }

    /// Adds the velocity changes of `velocity_change` (compensated) and composes the
    /// orientation: the second part of the velocity update.
    /// In plain arithmetic ([`crate::xpbd::F32Arithmetic::Plain`]) `dv` and `dw` are the
    /// new velocities (`velocity_change`), stored as they are, and the orientation,
    /// composed directly by every correction, is renormalised every
    /// [`PLAIN_RENORMALIZE_EVERY`] substeps.
    #[inline(always)]
    fn add_velocity_change(&mut self, dv: &Vector3<T>, dw: &Vector3<T>) {
        if self.is_plain() {
            self.velocity = *dv;
            self.angular_velocity = *dw;
            self.plain_substeps = self.plain_substeps.wrapping_add(1);
            let orientation = if self.plain_substeps.is_multiple_of(PLAIN_RENORMALIZE_EVERY) {
                self.orientation.renormalize()
            } else {
                self.orientation
            };
            self.orientation = orientation;
            self.written_orientation = orientation;
            self.written_position = self.position;
            return;
        }
        (self.velocity, self.velocity_lo) = two_sum(&self.velocity, &self.velocity_lo, dv);
        (self.angular_velocity, self.omega_lo) =
            two_sum(&self.angular_velocity, &self.omega_lo, dw);
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
    /// `update_velocities`, which composes it anyway (one composition instead of two).
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
        self.correction = crate::lie::fma::quat_mul(&self.correction, &e);
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
    /// exact sum of the increments rounded once, however many were added; in plain
    /// arithmetic, p + dp rounded.
    /// Returns the new position.
    #[inline]
    pub(super) fn add_position(&mut self, dp: &Vector3<T>) -> Vector3<T> {
        if self.is_plain() {
            let position = self.position + dp;
            self.position = position;
            return position;
        }
        let (position, lo) = two_sum(&self.position, &self.position_lo, dp);
        self.position = position;
        self.position_lo = lo;
        // Within a substep only the f64 pose of the wide constraint values reads it
        // (`pose_f64`); otherwise `update_velocities`, which ends every substep, records it.
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
    /// In plain arithmetic, R·q is composed onto `orientation` directly (whatever
    /// `compose` says), rounded, and renormalised by the velocity update (every
    /// [`PLAIN_RENORMALIZE_EVERY`] substeps).
    ///
    /// Returns `orientation` (the value it holds after the call).
    #[inline(always)]
    pub(super) fn add_rotation(&mut self, q: &UnitQuaternion<T>, compose: bool) -> G {
        if self.is_plain() {
            let orientation = self
                .orientation
                .compose(&G::from_unit_quaternion_unchecked(q));
            self.orientation = orientation;
            return orientation;
        }
        let since_base = crate::lie::fma::quat_mul(&self.since_base, q);
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
        // As in `add_position`: `update_velocities` records it at the end of the substep.
        if T::WIDE_CONSTRAINT_VALUES {
            self.written_orientation = orientation;
        }
        orientation
    }
}

/// The velocity update (Alg. 1 line 10; `Body::velocity_change`) of every body of
/// `bodies` after a substep of length `h` (s), with `defer_compose` cleared, in two
/// stages per batch of [`BATCH`] bodies: the velocity changes of the batch (the
/// rotation's is a chain of dependent operations), then their sums and the
/// orientations. Each body's arithmetic is what it would be alone; in stages, the
/// bodies' chains run side by side (`predict.rs`, module docs). (3-RPS robot, block
/// mode, f64: 830–867 → 742–752 rdtsc ticks per substep for its seven moving bodies.)
pub(crate) fn update_velocities<T: Real, G: LieGroup<T>>(bodies: &mut [Body<T, G>], h: T) {
    for batch in bodies.chunks_mut(BATCH) {
        let mut changes = [None; BATCH];
        for (body, change) in batch.iter().zip(&mut changes) {
            *change = body.velocity_change(h);
        }
        for (body, change) in batch.iter_mut().zip(&changes) {
            body.defer_compose = false;
            if let Some((dv, dw)) = change {
                body.add_velocity_change(dv, dw);
            }
        }
    }
}
