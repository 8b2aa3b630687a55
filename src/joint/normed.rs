//! [`NormedJoint`]: the scalar ("normed") joints of paper Section 5.1, the baseline the
//! paper attributes to Müller et al. 2020 and compares its vector joints against in
//! Section 9.1 (Figure 12, Table 1).
//!
//! A normed joint replaces each part of a vector joint — the positional part and the
//! rotational part of (71), (72), (75), (79) — by its Euclidean norm, one scalar row per
//! part, as (67) replaces (68). With Δp = p̄₁ − p̄₂, e = R̄₁ ⊟ R̄₂ and
//! u = R̄₁ᵀ(p̄₂ − p̄₁) ([`JointKinematics`]):
//!
//! | joint | row 0 | row 1 | vector rows it replaces |
//! |---|---|---|---|
//! | [`NormedFixed`] | ‖Δp‖ (m) | ‖e‖ (rad) | 0–2, 3–5 of (71) |
//! | [`NormedRevolute`] | ‖Δp‖ (m) | ‖\[e\]₁₋₂‖ (rad) | 0–2, 3–4 of (72) |
//! | [`NormedSpherical`] | ‖Δp‖ (m) | — | 0–2 of (75) |
//! | [`NormedPrismatic`] | ‖\[u\]₁₋₂‖ (m) | ‖e‖ (rad) | 0–1, 2–4 of (79) |
//!
//! [`NormedKind::VECTOR_ROWS`] lists, per normed row, the rows of the vector joint it is
//! the norm of.
//!
//! # Gradients
//! Each row is C = ‖w‖ with w ∈ ℝᵐ (m = 2 or 3) a selection of the components of one
//! of the 3-vectors of [`JointKinematics`], whose per-body 3×6 blocks ∇w come from
//! [`JointKinematics::position_error_gradient`],
//! [`JointKinematics::rotation_error_gradient`] and
//! [`JointKinematics::relative_position_gradient`]. By the chain rule,
//!
//! ```text
//! ∇‖w‖ = wᵀ ∇w / ‖w‖        (a 1×6 row per body, [∂/∂p | D_R] of (59))
//! ```
//!
//! ([`norm_gradient`], `proofs/joint_normed.md`). For the full rotation error,
//! eᵀΓ⁻¹(e) = eᵀ and Γ⁻¹(e)e = e, so the rotational rows of [`NormedFixed`] and
//! [`NormedPrismatic`] reduce to `[0 | eᵀJ₁ᵀ/‖e‖]` and `[0 | −eᵀJ₂ᵀ/‖e‖]`: the norm
//! is the relative rotation angle, whose gradient is the unit rotation axis.
//!
//! # The kink at C = 0
//! ‖w‖ is not differentiable at w = 0, which is exactly where a satisfied joint sits:
//! every direction is a descent direction, and the subdifferential there is the unit
//! ball. [`norm_gradient`] returns C = 0 and the gradient 0 (the minimum-norm
//! subgradient) when all components of w are exactly zero. The solver's row projection
//! (56) then has the denominator ∇C 𝓜⁻¹ ∇Cᵀ + α̃ = α̃: a hard row (α = 0) is skipped,
//! a compliant row only relaxes its λ and moves nothing. For every other finite w,
//! however small (down to subnormal numbers), the norm is computed on w scaled by its
//! largest component, so neither the norm nor w/‖w‖ underflows and no NaN can arise;
//! the gradient direction of a nearly satisfied row is the direction of its (tiny)
//! violation, which is the well-defined derivative there. Non-finite input (a diverged
//! state) gives a NaN value, like the vector joints.
//!
//! Finite differences of ‖w‖ are only valid a few steps away from w = 0 (their error
//! grows like h²/‖w‖² and they straddle the kink when ‖w‖ ≲ h): `tests/joint/normed.rs`
//! checks the gradients at ‖w‖ ≥ 0.2 and the values and gradients at w = 0 separately.
//!
//! # The revolute rotational row
//! The rotational row of [`NormedRevolute`] is the norm of the two rows (72) constrains,
//! ‖[R̄₁ ⊟ R̄₂]₁₋₂‖, i.e. literally the normed form of (72) that Section 5.1 describes.
//! It is zero exactly when the joint z axes are aligned (for joint angles |θ_rev| < π):
//! \[e\]₁₋₂ = 0 ⇔ R̄₂ᵀR̄₁ is a rotation about z ⇔ R̄₁e₃ = R̄₂e₃. It is not the angle β
//! between the two z axes: for a joint angle θ and a small misalignment β,
//! ‖\[e\]₁₋₂‖ = β·(θ/2)/sin(θ/2) + O(β²), a factor between 1 (θ = 0) and π/2 (θ → π)
//! (derivation in `proofs/joint_normed.md`; checked in `tests/joint/normed.rs`). The
//! angle between the axes would need a gradient of arccos (singular at β = 0 like
//! (168)–(169)) and no [`JointKinematics`] quantity; the norm of (72)'s rows reuses
//! (162)–(163).
//!
//! # Compliance and damping
//! One compliance α and one damping b per normed row, in the units of the row (m/N or
//! rad/(N·m); s). A normed row with compliance α stores the potential ‖w‖²/(2α), which
//! is the potential of the vector rows it replaces when each of them has that same α:
//! Σᵢ wᵢ²/(2α) = ‖w‖²/(2α). Its Rayleigh damping (60), however, only resists the rate of
//! ‖w‖, not the rate of each component.
//!
//! # Validity
//! As for the vector joints, the rotation rows use Log and jump where a relative
//! rotation reaches π; keep joints away from it.

use super::attachments::JointAttachments;
use super::fixed::FixedKind;
use super::frame::JointFrame;
use super::kinematics::{Block3, JointKinematics};
use super::prismatic::PrismaticKind;
use super::revolute::RevoluteKind;
use super::spherical::SphericalKind;
use crate::lie::{LieGroup, Real};
use crate::xpbd::{Body, BodyId, Constraint, ConstraintEval, XpbdError, MAX_BODIES, MAX_ROWS};
use nalgebra::{RowVector6, Vector3};
use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;

/// The norm C = ‖w‖ of the components `src` of a 3-vector quantity given as
/// `(value, gradient)` (as returned by the [`JointKinematics`] methods: the vector and
/// one 3×6 block `[∂/∂p | D_R]` per side), and its 1×6 gradient row per side,
/// `wᵀ∇w/‖w‖` (`proofs/joint_normed.md`).
///
/// `src` must be a sub-range of `0..3` (a longer range is cut to `0..3`). Units: C has
/// the units of the quantity (m or rad); the gradient rows are in those units per m
/// (position columns) and per rad (rotation columns).
///
/// At w = 0 (all selected components exactly zero) the norm is not differentiable: the
/// result is C = 0 with zero gradient rows (module docs). For any other finite w the
/// result is finite: the norm is computed as m·‖w/m‖ with m = maxᵢ|wᵢ|, so it neither
/// underflows nor overflows.
///
/// ```
/// use lie_xpbd::joint::{norm_gradient, Block3};
/// use nalgebra::Vector3;
/// let mut g = Block3::<f64>::zeros();
/// g.fixed_view_mut::<3, 3>(0, 0).fill_with_identity();
/// let (c, [row, _]) = norm_gradient(&(Vector3::new(3.0, 4.0, 12.0), [g, g]), 0..2);
/// assert_eq!(c, 5.0);
/// assert_eq!(row[0], 0.6);
/// assert_eq!(row[1], 0.8);
/// let (c, [row, _]) = norm_gradient(&(Vector3::zeros(), [g, g]), 0..3);
/// assert_eq!((c, row.amax()), (0.0, 0.0));
/// ```
pub fn norm_gradient<T: Real>(
    quantity: &(Vector3<T>, [Block3<T>; 2]),
    src: Range<usize>,
) -> (T, [RowVector6<T>; 2]) {
    let (value, gradient) = quantity;
    let src = src.start.min(3)..src.end.min(3);
    let zero = (T::zero(), [RowVector6::zeros(); 2]);
    if value
        .rows_range(src.clone())
        .iter()
        .all(|x| *x == T::zero())
    {
        return zero;
    }
    // Largest |wᵢ| (f32/f64 `max` ignores a NaN argument; a NaN then shows up in the
    // scaled vector below and makes C NaN).
    let m = value
        .rows_range(src.clone())
        .iter()
        .fold(T::zero(), |m, x| m.max(x.abs()));
    if m == T::zero() {
        // Only NaNs (the exact zeros returned above): propagate them in C.
        return (m + value.rows_range(src).sum(), [RowVector6::zeros(); 2]);
    }
    let mut scaled = Vector3::zeros();
    for (i, c) in src.clone().enumerate() {
        scaled[i] = value[c] / m;
    }
    let r = scaled.norm(); // in [1, √3] for finite w
    let unit = scaled / r;
    let mut rows = [RowVector6::zeros(); 2];
    for (row, g) in rows.iter_mut().zip(gradient) {
        for (i, c) in src.clone().enumerate() {
            *row += g.row(c) * unit[i];
        }
    }
    (m * r, rows)
}

/// What makes a normed joint the joint it is: its name, its rows and how it writes them.
/// Implemented by the zero-sized markers of the vector joints ([`FixedKind`],
/// [`RevoluteKind`], [`SphericalKind`], [`PrismaticKind`]), so that
/// `NormedJoint<T, G, K>` is the normed form of `VectorJoint<T, G, K>`.
pub trait NormedKind: Copy + PartialEq + Send + Sync + 'static {
    /// The joint's name in [`Constraint::name`] and [`Constraint::kind`], e.g.
    /// `"revolute_scalar"`.
    const NAME: &'static str;

    /// For each normed row, in order, the rows of the vector joint of the same kind it
    /// is the norm of (e.g. `[0..3, 3..5]` for the revolute joint). Its length is the
    /// number of rows, 1 or 2.
    const VECTOR_ROWS: &'static [Range<usize>];

    /// Writes the rows of C, in order, with their per-body gradient rows, from the joint
    /// kinematics `k` at the current state (debug builds check that exactly
    /// `VECTOR_ROWS.len()` rows are pushed).
    fn write<T: Real, G: LieGroup<T>>(k: &JointKinematics<T, G>, rows: &mut NormedRows<'_, T>);
}

/// The output of [`NormedKind::write`]: the rows written so far into a cleared
/// [`ConstraintEval`], and which sides are bodies (a fixed-world side keeps a zero
/// gradient block).
pub struct NormedRows<'a, T: Real> {
    out: &'a mut ConstraintEval<T>,
    active: [bool; 2],
    next: usize,
}

impl<T: Real> NormedRows<'_, T> {
    /// Appends the norm of the components `src` of a 3-vector quantity, given as
    /// `(value, gradient)` as returned by the [`JointKinematics`] methods, as the next
    /// row ([`norm_gradient`]).
    #[inline]
    pub fn push_norm(&mut self, quantity: (Vector3<T>, [Block3<T>; 2]), src: Range<usize>) {
        let row = self.next;
        self.next += 1;
        let (c, gradient) = norm_gradient(&quantity, src);
        self.out.value[row] = c;
        for (slot, g) in gradient.iter().enumerate() {
            if self.active[slot] {
                self.out.gradient[slot].row_mut(row).copy_from(g);
            }
        }
    }
}

impl NormedKind for FixedKind {
    const NAME: &'static str = "fixed_scalar";
    const VECTOR_ROWS: &'static [Range<usize>] = &[0..3, 3..6];

    /// Row 0 ‖p̄₁ − p̄₂‖ (m), row 1 ‖R̄₁ ⊟ R̄₂‖ (rad).
    fn write<T: Real, G: LieGroup<T>>(k: &JointKinematics<T, G>, rows: &mut NormedRows<'_, T>) {
        rows.push_norm(k.position_error_gradient(), 0..3);
        rows.push_norm(k.rotation_error_gradient(), 0..3);
    }
}

impl NormedKind for RevoluteKind {
    const NAME: &'static str = "revolute_scalar";
    const VECTOR_ROWS: &'static [Range<usize>] = &[0..3, 3..5];

    /// Row 0 ‖p̄₁ − p̄₂‖ (m), row 1 ‖[R̄₁ ⊟ R̄₂]₁₋₂‖ (rad).
    fn write<T: Real, G: LieGroup<T>>(k: &JointKinematics<T, G>, rows: &mut NormedRows<'_, T>) {
        rows.push_norm(k.position_error_gradient(), 0..3);
        rows.push_norm(k.rotation_error_gradient(), 0..2);
    }
}

impl NormedKind for SphericalKind {
    const NAME: &'static str = "spherical_scalar";
    // One group of rows, 0..3 (a list of ranges, not the range's elements).
    #[allow(clippy::single_range_in_vec_init)]
    const VECTOR_ROWS: &'static [Range<usize>] = &[0..3];

    /// Row 0 ‖p̄₁ − p̄₂‖ (m).
    fn write<T: Real, G: LieGroup<T>>(k: &JointKinematics<T, G>, rows: &mut NormedRows<'_, T>) {
        rows.push_norm(k.position_error_gradient(), 0..3);
    }
}

impl NormedKind for PrismaticKind {
    const NAME: &'static str = "prismatic_scalar";
    const VECTOR_ROWS: &'static [Range<usize>] = &[0..2, 2..5];

    /// Row 0 ‖[R̄₁ᵀ(p̄₂ − p̄₁)]₁₋₂‖ (m), row 1 ‖R̄₁ ⊟ R̄₂‖ (rad).
    fn write<T: Real, G: LieGroup<T>>(k: &JointKinematics<T, G>, rows: &mut NormedRows<'_, T>) {
        rows.push_norm(k.relative_position_gradient(), 0..2);
        rows.push_norm(k.rotation_error_gradient(), 0..3);
    }
}

/// The normed (scalar) fixed joint: ‖p̄₁ − p̄₂‖ (m) and ‖R̄₁ ⊟ R̄₂‖ (rad), the norms of
/// the two parts of (71). 2 rows; `kind()` = `"fixed_scalar"`.
///
/// Gradients (per body, `[∂/∂p | D_R]`, n̂ = Δp/‖Δp‖, â = e/‖e‖):
///
/// ```text
/// body 1: [ n̂ᵀ | −n̂ᵀR₁r̂₁ ] row 0,   [ 0 | âᵀJ₁ᵀ ] row 1
/// body 2: [ −n̂ᵀ | n̂ᵀR₂r̂₂ ] row 0,   [ 0 | −âᵀJ₂ᵀ ] row 1
/// ```
pub type NormedFixed<T, G> = NormedJoint<T, G, FixedKind>;

/// The normed (scalar) revolute joint: ‖p̄₁ − p̄₂‖ (m) and ‖[R̄₁ ⊟ R̄₂]₁₋₂‖ (rad), the
/// norms of the two parts of (72). 2 rows; `kind()` = `"revolute_scalar"`. The hinge
/// axis is the joint frames' z axis.
///
/// Gradients (per body, `[∂/∂p | D_R]`, n̂ = Δp/‖Δp‖, w = \[e\]₁₋₂, P = \[I₂ 0\] the
/// selector of rows 1–2):
///
/// ```text
/// body 1: [ n̂ᵀ | −n̂ᵀR₁r̂₁ ] row 0,   [ 0 | wᵀP Γ⁻¹(e) J₁ᵀ / ‖w‖ ]   row 1   (162)
/// body 2: [ −n̂ᵀ | n̂ᵀR₂r̂₂ ] row 0,   [ 0 | −wᵀP Γ⁻¹(e)ᵀ J₂ᵀ / ‖w‖ ] row 1   (163)
/// ```
///
/// ```
/// use lie_xpbd::joint::{JointFrame, NormedRevolute};
/// use lie_xpbd::lie::SO3Matrix;
/// use lie_xpbd::xpbd::{BodyId, Constraint};
/// use nalgebra::Vector3;
/// let hinge = NormedRevolute::<f64, SO3Matrix<f64>>::new(
///     None,
///     JointFrame::identity(),
///     Some(BodyId(0)),
///     JointFrame::at(Vector3::new(0.0, 0.5, 0.0)),
/// )
/// .unwrap();
/// assert_eq!(hinge.dim(), 2);
/// assert_eq!(hinge.name(), "revolute_scalar(world, 0)");
/// ```
pub type NormedRevolute<T, G> = NormedJoint<T, G, RevoluteKind>;

/// The normed (scalar) spherical joint: ‖p̄₁ − p̄₂‖ (m), the norm of (75) and the
/// distance constraint (67) between the joint points. 1 row; `kind()` =
/// `"spherical_scalar"`.
///
/// Gradients (per body, `[∂/∂p | D_R]`, n̂ = Δp/‖Δp‖):
/// body 1 `[ n̂ᵀ | −n̂ᵀR₁r̂₁ ]`, body 2 `[ −n̂ᵀ | n̂ᵀR₂r̂₂ ]`.
pub type NormedSpherical<T, G> = NormedJoint<T, G, SphericalKind>;

/// The normed (scalar) prismatic joint: ‖[R̄₁ᵀ(p̄₂ − p̄₁)]₁₋₂‖ (m), the distance of
/// side 2's joint origin from side 1's joint z axis, and ‖R̄₁ ⊟ R̄₂‖ (rad): the norms of
/// the two parts of (79). 2 rows; `kind()` = `"prismatic_scalar"`.
///
/// Gradients (per body, `[∂/∂p | D_R]`, w = \[u\]₁₋₂ with u = R̄₁ᵀ(p̄₂ − p̄₁),
/// v̂ = (w, 0)/‖w‖, â = e/‖e‖; the R₁ block is the corrected (174)):
///
/// ```text
/// body 1: [ −v̂ᵀR̄₁ᵀ | v̂ᵀJ₁ᵀ(R₁ᵀ(p̄₂ − p₁))^ ] row 0,   [ 0 | âᵀJ₁ᵀ ]  row 1
/// body 2: [ v̂ᵀR̄₁ᵀ  | −v̂ᵀR̄₁ᵀR₂r̂₂ ]         row 0,   [ 0 | −âᵀJ₂ᵀ ] row 1
/// ```
pub type NormedPrismatic<T, G> = NormedJoint<T, G, PrismaticKind>;

/// A normed joint of kind `K` between two attachments, with a compliance α and a
/// Rayleigh damping b per row (module docs).
///
/// Use it through its aliases [`NormedFixed`], [`NormedRevolute`], [`NormedSpherical`]
/// and [`NormedPrismatic`].
#[derive(Clone, Copy, PartialEq)]
pub struct NormedJoint<T: Real, G: LieGroup<T>, K: NormedKind> {
    attachments: JointAttachments<T, G>,
    /// Compliance of rows 0..DIM; the remaining entries stay zero.
    compliance: [T; 2],
    /// Damping b (s) of rows 0..DIM; the remaining entries stay zero.
    damping: [T; 2],
    kind: PhantomData<K>,
}

impl<T: Real, G: LieGroup<T>, K: NormedKind> NormedJoint<T, G, K> {
    /// Number of rows of the joint (the length of [`NormedKind::VECTOR_ROWS`]: 2, or 1
    /// for the spherical joint).
    pub const DIM: usize = K::VECTOR_ROWS.len();

    /// A hard (α = 0) normed joint between `body1` at `frame1` and `body2` at `frame2`;
    /// a `None` body is the fixed world, whose frame is then given in world coordinates
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
                !K::VECTOR_ROWS.is_empty() && K::VECTOR_ROWS.len() <= 2 && 2 <= MAX_ROWS,
                "a normed joint has 1 or 2 rows"
            )
        };
        Ok(Self {
            attachments: JointAttachments::new(body1, frame1, body2, frame2)?,
            compliance: [T::zero(); 2],
            damping: [T::zero(); 2],
            kind: PhantomData,
        })
    }

    /// Sets the compliance of each of the [`Self::DIM`] rows, in the row's units per
    /// newton (m/N for the positional row, rad/(N·m) for the rotational row; 0 = hard).
    ///
    /// # Errors
    /// [`XpbdError::InvalidJoint`] (field `"compliance"`) unless exactly [`Self::DIM`]
    /// values are given; [`XpbdError::BadCompliance`] naming the first negative or
    /// non-finite row.
    pub fn with_compliance(mut self, compliance: &[T]) -> Result<Self, XpbdError> {
        self.check_rows(
            compliance,
            "compliance",
            "give exactly one compliance per normed row (positional, then rotational)",
            |constraint, row, value| XpbdError::BadCompliance {
                constraint,
                row,
                value,
            },
        )?;
        self.compliance[..Self::DIM].copy_from_slice(compliance);
        Ok(self)
    }

    /// Sets the Rayleigh damping b (s) of each of the [`Self::DIM`] rows (0 =
    /// undamped): row j is damped with β = b/α in the velocity-level pass (Section 4.4,
    /// [`Constraint::damping`]); hard rows (α = 0) are never damped.
    ///
    /// # Errors
    /// [`XpbdError::InvalidJoint`] (field `"damping"`) unless exactly [`Self::DIM`]
    /// values are given; [`XpbdError::BadDamping`] naming the first negative or
    /// non-finite row.
    pub fn with_damping(mut self, damping: &[T]) -> Result<Self, XpbdError> {
        self.check_rows(
            damping,
            "damping",
            "give exactly one damping per normed row (positional, then rotational)",
            |constraint, row, value| XpbdError::BadDamping {
                constraint,
                row,
                value,
            },
        )?;
        self.damping[..Self::DIM].copy_from_slice(damping);
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
        super::vector::checked_rows(values, Self::DIM, &self.name(), field, reason, bad)
    }

    /// The two attachments (bodies and joint frames).
    #[inline]
    pub fn attachments(&self) -> &JointAttachments<T, G> {
        &self.attachments
    }

    /// The compliance of every row ([`Self::DIM`] values).
    #[inline]
    pub fn compliances(&self) -> &[T] {
        &self.compliance[..Self::DIM]
    }

    /// The damping b (s) of every row ([`Self::DIM`] values).
    #[inline]
    pub fn dampings(&self) -> &[T] {
        &self.damping[..Self::DIM]
    }
}

impl<T: Real, G: LieGroup<T>, K: NormedKind> fmt::Debug for NormedJoint<T, G, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NormedJoint")
            .field("kind", &K::NAME)
            .field("attachments", &self.attachments)
            .field("compliance", &self.compliances())
            .field("damping", &self.dampings())
            .finish()
    }
}

/// The distance of a state from the kink of normed rows with values `values`
/// ([`Constraint::kink_distance`]): the smallest norm, or 0 where a norm is below
/// h·√(2/tol) (h = [`Real::fd_step`], tol = [`Real::fd_tolerance`]: 0.045 in f64,
/// 0.032 in f32, in the rows' units, m or rad), or NaN if a value is not finite.
/// A norm ‖d‖ is smooth away from d = 0 but its curvature is 1/‖d‖, so a central
/// difference of step h misses its gradient by about (h/‖d‖)²/2 relative: within
/// that radius by more than a quarter of the gradient checker's tolerance. The
/// checker ([`crate::xpbd::check`]) skips such states as it skips a kink.
pub(crate) fn norm_kink_distance<T: Real>(values: &[T]) -> T {
    let reach = T::fd_step() * (crate::lie::real::c::<T>(2.0) / T::fd_tolerance()).sqrt();
    let mut smallest = T::max_value().unwrap_or_else(T::one);
    for v in values {
        if !v.is_finite() {
            return crate::lie::real::c::<T>(f64::NAN);
        }
        smallest = smallest.min(v.abs());
    }
    if smallest < reach {
        T::zero()
    } else {
        smallest
    }
}

impl<T: Real, G: LieGroup<T>, K: NormedKind> Constraint<T, G> for NormedJoint<T, G, K> {
    /// `"<kind>(<body 1>, <body 2>)"`, a side being a body index or `world`, e.g.
    /// `"revolute_scalar(world, 0)"`.
    fn name(&self) -> String {
        self.attachments.label(K::NAME)
    }

    /// [`NormedKind::NAME`]: `"fixed_scalar"`, `"revolute_scalar"`,
    /// `"spherical_scalar"` or `"prismatic_scalar"`.
    fn kind(&self) -> &'static str {
        K::NAME
    }

    /// False: the gradient of a norm ‖d‖ is d/‖d‖, which jumps at d = 0.
    fn is_smooth(&self) -> bool {
        false
    }

    fn dim(&self) -> usize {
        Self::DIM
    }

    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        self.attachments.bodies()
    }

    /// Writes C and its gradient by [`NormedKind::write`] (module docs for the rows and
    /// for C = 0). The block of a world side is left zero. If a body id is not in
    /// `bodies` (impossible for a joint accepted by
    /// [`crate::xpbd::World::add_constraint`]) the values are NaN and the gradients
    /// zero.
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        let Some(k) = self.attachments.kinematics(bodies) else {
            out.clear();
            for v in out.value.iter_mut().take(Self::DIM) {
                *v = crate::lie::real::c::<T>(f64::NAN);
            }
            return;
        };
        let mut rows = NormedRows {
            out,
            active: self.attachments.bodies().map(|b| b.is_some()),
            next: 0,
        };
        K::write(&k, &mut rows);
        debug_assert_eq!(
            rows.next,
            Self::DIM,
            "{} wrote a wrong number of rows",
            K::NAME
        );
    }

    /// The smallest row value (m for a position row, rad for a rotation row): each row
    /// is a norm, whose gradient jumps where it is 0. Below h·√(2/tol)
    /// (h = [`Real::fd_step`], tol = [`Real::fd_tolerance`]: 0.045 in f64, 0.032 in
    /// f32) it is 0: there the norm's curvature 1/‖d‖ makes a central difference of
    /// step h miss its gradient by more than a quarter of tol. `None` if a body id is
    /// not in `bodies`.
    fn kink_distance(&self, bodies: &[Body<T, G>]) -> Option<T> {
        self.attachments.kinematics(bodies)?;
        let mut out = ConstraintEval::default();
        self.evaluate(bodies, &mut out);
        Some(norm_kink_distance(&out.value.as_slice()[..Self::DIM]))
    }

    fn compliance(&self, row: usize) -> T {
        self.compliances().get(row).copied().unwrap_or_else(T::zero)
    }

    /// The row's damping b (s) from [`NormedJoint::with_damping`] (default 0).
    fn damping(&self, row: usize) -> T {
        self.dampings().get(row).copied().unwrap_or_else(T::zero)
    }
}
