//! Solver options of a [`World`](super::World): time step, substeps, iterations, solve
//! mode and gravity.

use crate::lie::Real;
use crate::xpbd::error::XpbdError;
use nalgebra::Vector3;

/// How vector constraints are projected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SolveMode {
    /// All rows of a vector constraint at once with one n×n SPD solve (124).
    Block,
    /// Each scalar row on its own, re-evaluating the constraint before each (56).
    Rows,
    /// The scalar ("normed") baseline of Section 5.1: each joint is one norm per
    /// positional and rotational part (Müller et al. 2020), projected row by row (56).
    /// The world projects whatever constraints it holds row by row in this mode; the
    /// scene builder (`Scene::build` of the `scene` module) gives it the normed joints.
    Scalar,
}

impl SolveMode {
    /// Every mode, in the order of the paper's comparison.
    pub const ALL: [SolveMode; 3] = [SolveMode::Block, SolveMode::Rows, SolveMode::Scalar];

    /// `"block"`, `"rows"` or `"scalar"`.
    pub fn name(self) -> &'static str {
        match self {
            SolveMode::Block => "block",
            SolveMode::Rows => "rows",
            SolveMode::Scalar => "scalar",
        }
    }
}

/// How the solver does its arithmetic in `f32` ([`SolverOptions::f32_arithmetic`]).
/// In `f64` the setting has no effect: an f64 world always runs the scheme described
/// under [`F32Arithmetic::Compensated`] (its TwoSum low parts included), bit for bit
/// whichever value is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum F32Arithmetic {
    /// Compensated state (the default). The bodies keep the low parts of their
    /// positions and velocities, each increment added by TwoSum (Knuth, The Art of
    /// Computer Programming vol. 2, 4.2.2; Dekker, "A floating-point technique for
    /// extending the available precision", Numer. Math. 18, 1971), so that the stored
    /// values are the exact sums of the increments rounded once; each orientation is
    /// kept as a base rotation times the small rotation since the base, folded into the
    /// base every 0.0625 rad; the joints evaluate their values C (position error,
    /// rotation error, relative position) in `f64` from that exact state
    /// ([`crate::lie::Real::WIDE_CONSTRAINT_VALUES`]), and the velocity update evaluates
    /// its rotation formula in `f64` from exactly widened inputs. Without it the
    /// roundings of the stored state have the same sign substep after substep and f32
    /// gains energy (about 1 J/s in the triple pendulum at 1,000 substeps per step).
    /// Cost: in the triple pendulum (block solve, Δt = 1 ms) 1.14 times the
    /// instructions of an f64 step, about 1.3 times its time (the f64 joint values lie
    /// on the solver's dependency chain); in the cantilever fewer than f64 (README,
    /// "f32 arithmetic").
    #[default]
    Compensated,
    /// Every operation in `f32`, as other engines and GPU solvers do it: positions,
    /// velocities and orientations are stored as single values, each correction added
    /// with one rounding (p ← p + δp, R ← R·Exp(δθ), R renormalised every 16 substeps);
    /// the joints take their values from the `f32` poses; the velocity update forms
    /// v = ṽ + Σδp/h and ω = Log(Exp(hΩ)·C)/h in `f32` (C the product of the substep's
    /// correction rotations: Algorithm 1's (p − pⁿ)/h and (R ⊟ Rⁿ)/h from the substep's
    /// increments rather than from two rounded poses, as the compensated scheme takes
    /// them too). What is gone is the extra precision: no low parts, no base rotation,
    /// no `f64` joint values, no split of the rotation change that keeps round-off from
    /// being fed back. The exact power-of-two scaling of the squares compared in the
    /// rotational prediction and the small solves is kept (it changes no value, only
    /// avoids subnormal squares, each a microcode assist of ~100 cycles on x86). For
    /// f32-versus-f64 studies: it costs fewer instructions per step than f64, and its
    /// rounding errors are not compensated, so it drifts where the compensated scheme
    /// does not (README, "f32 arithmetic").
    Plain,
}

impl F32Arithmetic {
    /// Both settings, the default first.
    pub const ALL: [F32Arithmetic; 2] = [F32Arithmetic::Compensated, F32Arithmetic::Plain];

    /// `"compensated"` or `"plain"` (the scene files' spelling).
    pub fn name(self) -> &'static str {
        match self {
            F32Arithmetic::Compensated => "compensated",
            F32Arithmetic::Plain => "plain",
        }
    }

    /// The setting named `name` (`"compensated"` or `"plain"`), `None` for any other
    /// string.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// Time-stepping options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SolverOptions<T: Real> {
    /// Time step Δt, s (> 0).
    pub dt: T,
    /// Substeps per step (≥ 1); each has length Δt/substeps.
    pub substeps: usize,
    /// Gauss–Seidel sweeps over all constraints per substep (≥ 1).
    pub iterations: usize,
    /// Row (56) or block (124) projection.
    pub solve_mode: SolveMode,
    /// Gravitational acceleration, m/s², world frame.
    pub gravity: Vector3<T>,
    /// After the projections of each substep, one pass that makes the discrete
    /// equations of motion (51) hold at the end state with the accumulated λ: with
    /// r = 𝓜(x ⊟ x̃) − ∇C(x)ᵀλ, every dynamic body moves by x ← x ⊞ (−𝓜⁻¹r).
    ///
    /// The XPBD Newton step (53)–(55) neglects the residual of (51); what remains of
    /// it after a projection is the change of ∇Cᵀλ between the state a constraint was
    /// linearised at and the end state (its own correction turns its lever arms, and
    /// later constraints in the Gauss–Seidel sweep move its bodies again). The pass
    /// re-evaluates every constraint (and every [`System`](super::System)) once at the
    /// end state, so the primal residual drops to the change of ∇Cᵀλ over the pass's
    /// own move, which is of second order in r. λ is unchanged; the constraint
    /// residual (52) changes by ∇C·𝓜⁻¹r, of the order of r/m. Cost: one more
    /// evaluation of every constraint per substep (not per iteration). Skipped where
    /// it would not contract ([`World::primal_correction_applies`](super::World::primal_correction_applies):
    /// normed joints, rods).
    pub primal_correction: bool,
    /// Compensated (default) or plain arithmetic in `f32` ([`F32Arithmetic`]); no
    /// effect in `f64`.
    pub f32_arithmetic: F32Arithmetic,
}

impl<T: Real> Default for SolverOptions<T> {
    /// Δt = 1e-3 s, one substep, one iteration, block solve, g = 9.81 m/s² along −y, no
    /// primal correction pass, compensated f32 arithmetic.
    fn default() -> Self {
        Self {
            dt: crate::lie::real::c(1e-3),
            substeps: 1,
            iterations: 1,
            solve_mode: SolveMode::Block,
            gravity: Vector3::new(T::zero(), crate::lie::real::c(-9.81), T::zero()),
            primal_correction: false,
            f32_arithmetic: F32Arithmetic::Compensated,
        }
    }
}

impl<T: Real> SolverOptions<T> {
    /// Checks every option.
    ///
    /// # Errors
    /// [`XpbdError::InvalidOption`] for a non-positive or non-finite `dt`, zero
    /// `substeps` or `iterations`; [`XpbdError::InvalidOption`] naming `dt` for a time
    /// step whose substep h = Δt/substeps is so small in the scalar type `T` that h
    /// rounds to 0 or 1/h² (the factor of the compliance α̃ = α/h², eq. 51–52)
    /// overflows to +∞: h below about 5.4e-20 s in f32 (1/h² > 3.4e38) or 7.5e-155 s in
    /// f64 (1/h² > 1.8e308). Such a step would otherwise be accepted and the run fail
    /// later as a "divergence" (NaN from ∞·0); [`XpbdError::NonFinite`] for
    /// non-finite gravity.
    pub fn validate(&self) -> Result<(), XpbdError> {
        if !(self.dt.is_finite() && self.dt > T::zero()) {
            return Err(XpbdError::InvalidOption {
                name: "dt",
                value: self.dt.to_string(),
                reason: "the time step must be positive and finite (s)",
            });
        }
        if self.substeps == 0 {
            return Err(XpbdError::InvalidOption {
                name: "substeps",
                value: "0".into(),
                reason: "at least one substep is needed",
            });
        }
        let h = self.substep_dt();
        if !(h > T::zero() && (T::one() / (h * h)).is_finite()) {
            return Err(XpbdError::InvalidOption {
                name: "dt",
                value: format!(
                    "{:e} (substep h = dt/{} = {:e} s)",
                    self.dt.to_f64(),
                    self.substeps,
                    h.to_f64()
                ),
                reason: "the substep h = dt/substeps is so small that h or 1/h² is not \
                         representable in the scalar type (f32 needs h > ~5.4e-20 s, f64 \
                         h > ~7.5e-155 s)",
            });
        }
        if self.iterations == 0 {
            return Err(XpbdError::InvalidOption {
                name: "iterations",
                value: "0".into(),
                reason: "at least one iteration is needed",
            });
        }
        if !self.gravity.iter().all(|x| x.is_finite()) {
            return Err(XpbdError::NonFinite {
                what: "gravity".into(),
            });
        }
        Ok(())
    }

    /// Substep length h = Δt/substeps, s.
    pub fn substep_dt(&self) -> T {
        self.dt / crate::lie::real::c(self.substeps as f64)
    }
}
