//! [`VectorJoint`]: the one implementation shared by the vector joints [`super::Fixed`],
//! [`super::Revolute`], [`super::Spherical`] and [`super::Prismatic`].
//!
//! A vector joint is two [`JointAttachments`], a compliance and a damping per row and the
//! [`Constraint`] plumbing around them; all that differs between joints is a name, a
//! number of rows and how the rows are written from the [`JointKinematics`]. That part
//! is a zero-sized [`JointKind`] marker ([`super::FixedKind`], [`super::RevoluteKind`],
//! [`super::SphericalKind`], [`super::PrismaticKind`]); each public joint type is an
//! alias such as `Revolute<T, G> = VectorJoint<T, G, RevoluteKind>`.

use super::attachments::JointAttachments;
use super::frame::JointFrame;
use super::kinematics::{Block3, JointKinematics, PosCols, Rows3};
use crate::lie::{LieGroup, Real};
use crate::xpbd::{
    Body, BodyId, Constraint, ConstraintEval, GradientLayout, XpbdError, MAX_BODIES, MAX_ROWS,
};
use nalgebra::{SVector, Vector3};
use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;

/// What makes a vector joint the joint it is: its name, its number of rows and how it
/// writes C and ∇C. Implemented by zero-sized markers, one per joint.
pub trait JointKind: Copy + PartialEq + Send + Sync + 'static {
    /// The joint's name in [`Constraint::name`], e.g. `"revolute"`.
    const NAME: &'static str;

    /// Number of rows n, 1 ≤ n ≤ [`MAX_ROWS`] (checked at compile time).
    const DIM: usize;

    /// The structure of the position columns [`Self::write`] gives the gradient
    /// blocks ([`Constraint::gradient_layout`]). Default: [`GradientLayout::Dense`].
    const LAYOUT: GradientLayout = GradientLayout::Dense;

    /// Writes the [`Self::DIM`] rows of C, in order, with their per-body gradient
    /// blocks `[∂C/∂p | D_R C]`, from the joint kinematics `k` at the current state
    /// (debug builds check that exactly [`Self::DIM`] rows are pushed).
    fn write<T: Real, G: LieGroup<T>>(k: &JointKinematics<T, G>, rows: &mut JointRows<'_, T>);
}

/// The output of [`JointKind::write`]: the constraint rows written so far, and which
/// sides are bodies (nothing is written for a fixed-world side: its gradient block
/// stays as the caller left it, zero if cleared). The rows go either into a
/// [`ConstraintEval`] ([`Constraint::evaluate`]) or, multiplied by λ, into the two
/// constraint forces ∇C_kᵀλ ([`Constraint::add_constraint_force`]); a kind writes its
/// rows the same way for both.
pub struct JointRows<'a, T: Real> {
    sink: Sink<'a, T>,
    active: [bool; 2],
    next: usize,
}

/// Where [`JointRows`] puts the rows.
enum Sink<'a, T: Real> {
    /// Values and gradient blocks.
    Eval(&'a mut ConstraintEval<T>),
    /// Σ_row gradient row · λ_row per side, added to `force`.
    Force {
        lambda: &'a [T],
        force: &'a mut [SVector<T, 6>; MAX_BODIES],
    },
}

impl<T: Real> JointRows<'_, T> {
    /// Appends the components `src` of a 3-vector quantity, given as `(value, gradient)`
    /// with one 3×6 block per side (as returned by the [`JointKinematics`] methods), as
    /// the next `src.len()` constraint rows.
    #[inline(always)]
    pub fn push(&mut self, (value, gradient): (Vector3<T>, [Block3<T>; 2]), src: Range<usize>) {
        let first = self.next;
        self.next += src.len();
        let active = self.active;
        match &mut self.sink {
            Sink::Eval(out) => {
                for (row, c) in (first..).zip(src) {
                    out.value[row] = value[c];
                    for (side, g) in gradient.iter().enumerate() {
                        if active[side] {
                            for col in 0..6 {
                                out.gradient[side][(row, col)] = g[(c, col)];
                            }
                        }
                    }
                }
            }
            Sink::Force { lambda, force } => {
                for (row, c) in (first..).zip(src) {
                    let l = lambda[row];
                    for (side, (g, f)) in gradient.iter().zip(force.iter_mut()).enumerate() {
                        if active[side] {
                            for col in 0..6 {
                                f[col] += g[(c, col)] * l;
                            }
                        }
                    }
                }
            }
        }
    }

    /// Appends rows `src` of Δp = p̄₁ − p̄₂
    /// ([`JointKinematics::position_error_gradient`]).
    #[inline(always)]
    pub fn position_error<G: LieGroup<T>>(&mut self, k: &JointKinematics<T, G>, src: Range<usize>) {
        if self.push_position_error_force(k, src.clone()) {
            return;
        }
        // Nothing is written for a world side: its block is not computed.
        let q = k.position_error_rows_for(self.active);
        self.push_rows(q, src);
    }

    /// Appends rows `src` of e = R̄₁ ⊟ R̄₂
    /// ([`JointKinematics::rotation_error_gradient`]).
    #[inline(always)]
    pub fn rotation_error<G: LieGroup<T>>(&mut self, k: &JointKinematics<T, G>, src: Range<usize>) {
        // Nothing is written for a world side: its block is not computed.
        let q = k.rotation_error_rows_for(self.active);
        self.push_rows(q, src);
    }

    /// Appends rows `src` of u = R̄₁ᵀ(p̄₂ − p̄₁)
    /// ([`JointKinematics::relative_position_gradient`]).
    #[inline(always)]
    pub fn relative_position<G: LieGroup<T>>(
        &mut self,
        k: &JointKinematics<T, G>,
        src: Range<usize>,
    ) {
        let q = k.relative_position_rows();
        self.push_rows(q, src);
    }

    /// The force sink's form of [`Self::position_error`] (false, nothing done, for the
    /// evaluation sink): adds the rows `src` of Δp times λ to the constraint forces
    /// without forming their blocks, as ±l for the position columns and
    /// ±r × (Rᵀl) for the rotation columns
    /// ([`JointKinematics::position_error_torques`]), l the rows' multipliers in
    /// components `src` (zero elsewhere). The same ∇Cᵀλ, rounded differently; it
    /// skips the value Δp and the entries of −R r̂, which the primal correction pass
    /// never reads: callgrind, triple pendulum with the pass, 12.10k → 11.74k
    /// instructions per step.
    #[inline(always)]
    fn push_position_error_force<G: LieGroup<T>>(
        &mut self,
        k: &JointKinematics<T, G>,
        src: Range<usize>,
    ) -> bool {
        let Sink::Force { lambda, force } = &mut self.sink else {
            return false;
        };
        let first = self.next;
        self.next += src.len();
        let mut l = Vector3::zeros();
        for (row, c) in (first..).zip(src) {
            l[c] = lambda[row];
        }
        let torques = k.position_error_torques(&l, self.active);
        for (side, f) in force.iter_mut().enumerate() {
            if !self.active[side] {
                continue;
            }
            let s = if side == 0 { T::one() } else { -T::one() };
            for c in 0..3 {
                f[c] += s * l[c];
                f[c + 3] += torques[side][c];
            }
        }
        true
    }

    /// As [`Self::push`] for a quantity in the structured form of the kinematics
    /// (`*_rows` methods): the same rows, with zero and identity position columns
    /// stored as constants (no 3×6 blocks built and copied).
    #[inline(always)]
    fn push_rows(&mut self, q: Rows3<T>, src: Range<usize>) {
        let first = self.next;
        self.next += src.len();
        match &mut self.sink {
            Sink::Eval(out) => {
                for (row, c) in (first..).zip(src) {
                    out.value[row] = q.value[c];
                    for side in 0..2 {
                        if !self.active[side] {
                            continue;
                        }
                        let g = &mut out.gradient[side];
                        for col in 0..3 {
                            g[(row, col)] = match q.pos[side] {
                                PosCols::Zero => T::zero(),
                                PosCols::Identity(s) if col == c => s,
                                PosCols::Identity(_) => T::zero(),
                                PosCols::Matrix(m) => m[(c, col)],
                            };
                            g[(row, col + 3)] = q.rot[side][(c, col)];
                        }
                    }
                }
            }
            Sink::Force { lambda, force } => {
                for (row, c) in (first..).zip(src) {
                    let l = lambda[row];
                    for side in 0..2 {
                        if !self.active[side] {
                            continue;
                        }
                        let f = &mut force[side];
                        match q.pos[side] {
                            PosCols::Zero => {}
                            PosCols::Identity(s) => f[c] += s * l,
                            PosCols::Matrix(m) => {
                                for col in 0..3 {
                                    f[col] += m[(c, col)] * l;
                                }
                            }
                        }
                        for col in 0..3 {
                            f[col + 3] += q.rot[side][(c, col)] * l;
                        }
                    }
                }
            }
        }
    }
}

/// A vector joint of kind `K` between two attachments, with a compliance α and a
/// Rayleigh damping b per row.
///
/// Use it through its aliases [`super::Fixed`], [`super::Revolute`],
/// [`super::Spherical`] and [`super::Prismatic`], whose docs give the constraint, its
/// gradient and the units of each row.
#[derive(Clone, Copy, PartialEq)]
pub struct VectorJoint<T: Real, G: LieGroup<T>, K: JointKind> {
    attachments: JointAttachments<T, G>,
    /// Compliance of rows 0..K::DIM; the remaining entries stay zero.
    compliance: [T; MAX_ROWS],
    /// Damping b (s) of rows 0..K::DIM; the remaining entries stay zero.
    damping: [T; MAX_ROWS],
    kind: PhantomData<K>,
}

impl<T: Real, G: LieGroup<T>, K: JointKind> VectorJoint<T, G, K> {
    /// Number of rows of the joint ([`JointKind::DIM`]).
    pub const DIM: usize = K::DIM;

    /// A hard (α = 0) joint between `body1` at `frame1` and `body2` at `frame2`; a
    /// `None` body is the fixed world, whose frame is then given in world coordinates
    /// (Section 5.2.1).
    ///
    /// # Errors
    /// As [`JointAttachments::new`]: [`XpbdError::InvalidJoint`] if both bodies are
    /// `None` or equal; [`XpbdError::NonFinite`] / [`XpbdError::Lie`] for an invalid
    /// frame.
    pub fn new(
        body1: Option<BodyId>,
        frame1: JointFrame<T, G>,
        body2: Option<BodyId>,
        frame2: JointFrame<T, G>,
    ) -> Result<Self, XpbdError> {
        const {
            assert!(
                K::DIM >= 1 && K::DIM <= MAX_ROWS,
                "JointKind::DIM must be in 1..=MAX_ROWS"
            )
        };
        Ok(Self {
            attachments: JointAttachments::new(body1, frame1, body2, frame2)?,
            compliance: [T::zero(); MAX_ROWS],
            damping: [T::zero(); MAX_ROWS],
            kind: PhantomData,
        })
    }

    /// Sets the compliance of each of the [`Self::DIM`] rows, in the constraint's units
    /// per newton (m/N for length rows, rad/(N·m) for angle rows; 0 = hard).
    ///
    /// # Errors
    /// [`XpbdError::InvalidJoint`] (field `"compliance"`) unless exactly
    /// [`Self::DIM`] values are given; [`XpbdError::BadCompliance`] naming the first
    /// negative or non-finite row.
    pub fn with_compliance(mut self, compliance: &[T]) -> Result<Self, XpbdError> {
        self.check_rows(
            compliance,
            "compliance",
            "give exactly one compliance per constraint row",
            |constraint, row, value| XpbdError::BadCompliance {
                constraint,
                row,
                value,
            },
        )?;
        self.compliance[..K::DIM].copy_from_slice(compliance);
        Ok(self)
    }

    /// One finite, non-negative value per row, or the errors of [`Self::with_compliance`]
    /// and [`Self::with_damping`].
    fn check_rows(
        &self,
        values: &[T],
        field: &'static str,
        reason: &'static str,
        bad: impl FnOnce(String, usize, f64) -> XpbdError,
    ) -> Result<(), XpbdError> {
        checked_rows(values, K::DIM, &self.name(), field, reason, bad)
    }

    /// Sets the Rayleigh damping b of each of the [`Self::DIM`] rows, in seconds
    /// (0 = undamped): row j is damped with β = b/α (paper Section 4.4, see
    /// [`Constraint::damping`]), in the velocity-level pass after each substep's
    /// position solve. For a length row of stiffness k = α⁻¹ (N/m) b is the damping
    /// coefficient per unit stiffness, (N·s/m)/(N/m); for an angle row
    /// (N·m·s/rad)/(N·m/rad). Hard rows (α = 0) are never damped, so a value on them has
    /// no effect: give the compliance first or alongside (order of the builder calls
    /// does not matter).
    ///
    /// # Errors
    /// [`XpbdError::InvalidJoint`] (field `"damping"`) unless exactly [`Self::DIM`]
    /// values are given; [`XpbdError::BadDamping`] naming the first negative or
    /// non-finite row.
    pub fn with_damping(mut self, damping: &[T]) -> Result<Self, XpbdError> {
        self.check_rows(
            damping,
            "damping",
            "give exactly one damping per constraint row",
            |constraint, row, value| XpbdError::BadDamping {
                constraint,
                row,
                value,
            },
        )?;
        self.damping[..K::DIM].copy_from_slice(damping);
        Ok(self)
    }

    /// The two attachments (bodies and joint frames).
    #[inline]
    pub fn attachments(&self) -> &JointAttachments<T, G> {
        &self.attachments
    }

    /// The compliance of every row ([`Self::DIM`] values).
    #[inline]
    pub fn compliances(&self) -> &[T] {
        &self.compliance[..K::DIM]
    }

    /// The damping b (s) of every row ([`Self::DIM`] values).
    #[inline]
    pub fn dampings(&self) -> &[T] {
        &self.damping[..K::DIM]
    }
}

impl<T: Real, G: LieGroup<T>, K: JointKind> VectorJoint<T, G, K> {
    /// Runs [`JointKind::write`] on the kinematics of the two sides into `sink`.
    #[inline(always)]
    fn write_rows(&self, b1: Option<&Body<T, G>>, b2: Option<&Body<T, G>>, sink: Sink<'_, T>) {
        let k = self.attachments.kinematics_of(b1, b2);
        let mut rows = JointRows {
            sink,
            active: self.attachments.bodies().map(|b| b.is_some()),
            next: 0,
        };
        K::write(&k, &mut rows);
        debug_assert_eq!(
            rows.next,
            K::DIM,
            "{} wrote a wrong number of rows",
            K::NAME
        );
    }
}

impl<T: Real, G: LieGroup<T>, K: JointKind> fmt::Debug for VectorJoint<T, G, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VectorJoint")
            .field("kind", &K::NAME)
            .field("attachments", &self.attachments)
            .field("compliance", &self.compliances())
            .field("damping", &self.dampings())
            .finish()
    }
}

impl<T: Real, G: LieGroup<T>, K: JointKind> Constraint<T, G> for VectorJoint<T, G, K> {
    /// `"<kind>(<body 1>, <body 2>)"`, a side being a body index or `world`, e.g.
    /// `"revolute(world, 0)"`.
    fn name(&self) -> String {
        self.attachments.label(K::NAME)
    }

    /// [`JointKind::NAME`]: `"fixed"`, `"revolute"`, `"spherical"` or `"prismatic"`.
    fn kind(&self) -> &'static str {
        K::NAME
    }

    fn dim(&self) -> usize {
        K::DIM
    }

    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        self.attachments.bodies()
    }

    /// Writes C and its gradient by [`JointKind::write`] (see the joint's docs for the
    /// rows). The block of a world side is left zero. If a body id is not in `bodies`
    /// (impossible for a joint accepted by [`crate::xpbd::World::add_constraint`]) the
    /// values are NaN and the gradients zero.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        let Some([b1, b2]) = self.attachments.side_bodies(bodies) else {
            write_missing(out, K::DIM);
            return;
        };
        self.write_rows(b1, b2, Sink::Eval(out));
    }

    /// ∇C_kᵀλ by the same [`JointKind::write`] as [`Constraint::evaluate`], with the
    /// rows multiplied by `lambda` (at least [`JointKind::DIM`] entries) and summed into
    /// `force[k]` instead of stored. False (nothing written) if a body id is not in
    /// `bodies` or `lambda` is shorter than [`JointKind::DIM`].
    fn add_constraint_force(
        &self,
        bodies: &[Body<T, G>],
        lambda: &[T],
        force: &mut [SVector<T, 6>; MAX_BODIES],
    ) -> bool {
        let Some([b1, b2]) = self.attachments.side_bodies(bodies) else {
            return false;
        };
        if lambda.len() < K::DIM {
            return false;
        }
        self.write_rows(b1, b2, Sink::Force { lambda, force });
        true
    }

    /// [`Constraint::evaluate`] into a buffer on the stack followed by the world's block
    /// solve of its [`JointKind::DIM`] rows and [`JointKind::LAYOUT`], inlined into one
    /// function per joint kind: the gradient entries go from the kinematics to the
    /// assembly of A without a round trip through memory, and entries no row uses are
    /// never formed. Same arithmetic as the world's path, so the same result. `None`
    /// (the world's path) if a body id is not in `bodies` or fewer than
    /// [`JointKind::DIM`] compliances or multipliers are given.
    fn project_block_fused(
        &self,
        bodies: &mut [Body<T, G>],
        compliance: &[T],
        inv_h2: T,
        lambda: &mut [T],
    ) -> Option<bool> {
        let ids = self.attachments.bodies();
        let dx = {
            let [b1, b2] = self.attachments.side_bodies(bodies)?;
            // 𝓜⁻¹ diagonal of a side that is a dynamic body.
            let inv_mass =
                |b: Option<&Body<T, G>>| b.filter(|b| !b.is_fixed()).map(Body::inv_mass_diag);
            let w = [inv_mass(b1), inv_mass(b2)];
            if w.iter().all(Option::is_none) {
                return Some(true);
            }
            let mut eval = ConstraintEval::default();
            self.write_rows(b1, b2, Sink::Eval(&mut eval));
            match crate::xpbd::world::block_corrections(
                K::DIM,
                K::LAYOUT,
                &eval,
                &w,
                compliance.get(..K::DIM)?,
                inv_h2,
                lambda.get_mut(..K::DIM)?,
            ) {
                Some(dx) => (dx, w.map(|w| w.is_some())),
                None => return Some(false),
            }
        };
        let (dx, dynamic) = dx;
        for ((id, d), dynamic) in ids.iter().zip(dx.iter()).zip(dynamic) {
            if let (Some(BodyId(b)), true) = (id, dynamic) {
                bodies[*b].apply_correction(
                    &Vector3::new(d[0], d[1], d[2]),
                    &Vector3::new(d[3], d[4], d[5]),
                );
            }
        }
        Some(true)
    }

    /// True: [`JointKind::write`] pushes all [`JointKind::DIM`] rows, and
    /// [`JointRows::push`] writes every column of a pushed row for each side that is a
    /// body.
    fn evaluate_overwrites(&self) -> bool {
        true
    }

    /// [`JointKind::LAYOUT`].
    fn gradient_layout(&self) -> GradientLayout {
        K::LAYOUT
    }

    fn compliance(&self, row: usize) -> T {
        self.compliances().get(row).copied().unwrap_or_else(T::zero)
    }

    /// The row's damping b (s) from [`VectorJoint::with_damping`] (default 0).
    fn damping(&self, row: usize) -> T {
        self.dampings().get(row).copied().unwrap_or_else(T::zero)
    }
}

/// `Ok(())` if `values` holds exactly `dim` finite, non-negative values (one per row of
/// the joint named `constraint`).
///
/// # Errors
/// [`XpbdError::InvalidJoint`] (`field`, with `reason`) for a wrong count; otherwise
/// `bad(constraint, row, value)` for the first negative or non-finite row.
pub(super) fn checked_rows<T: Real>(
    values: &[T],
    dim: usize,
    constraint: &str,
    field: &'static str,
    reason: &'static str,
    bad: impl FnOnce(String, usize, f64) -> XpbdError,
) -> Result<(), XpbdError> {
    if values.len() != dim {
        return Err(XpbdError::InvalidJoint {
            field,
            value: format!("{} values for '{constraint}'", values.len()),
            reason,
        });
    }
    match values
        .iter()
        .enumerate()
        .find(|(_, &x)| !(x.is_finite() && x >= T::zero()))
    {
        Some((row, &x)) => Err(bad(constraint.to_string(), row, x.to_f64())),
        None => Ok(()),
    }
}

/// Marks an evaluation as failed (a body id not in the body list): NaN values in the
/// first `dim` rows, zero gradients. The world rejects such joints in
/// `add_constraint`, so this is reached only by calling `evaluate` by hand.
fn write_missing<T: Real>(out: &mut ConstraintEval<T>, dim: usize) {
    out.clear();
    for v in out.value.iter_mut().take(dim) {
        *v = crate::lie::real::c::<T>(f64::NAN);
    }
}
