//! Extended Position-Based Dynamics with oriented particles (paper Sections 4 and 8,
//! Algorithm 1, Appendix C).
//!
//! # Theory
//! The state x = (p₁, R₁, …, p_N, R_N) holds positions and orientations. One substep
//! of length h discretises Newton–Euler with backward Euler (42)–(43) and, after the
//! inertial predictions (48) and (46)
//!
//! ```text
//! p̃ = pⁿ + h vⁿ + h² M⁻¹ f_ext
//! R̃ = Rⁿ ⊞ (h ωⁿ + h² 𝓘⁻¹(τ_ext − ωⁿ × 𝓘ωⁿ))
//! ```
//!
//! solves the nonlinear system (51)–(52) with α̃ = α/h²:
//!
//! ```text
//! 𝓜 (x ⊟ x̃) − ∇C(x)ᵀ λ = 0          (primal residual)
//! C(x) + α̃ λ = 0                      (constraint residual)
//! ```
//!
//! by Gauss–Seidel sweeps over the constraints, each a step of the Newton subproblem
//! (53)–(55) restricted to that constraint:
//!
//! * **rows** (56): one scalar row j at a time,
//!   `Δλⱼ = (−Cⱼ − α̃ⱼλⱼ)/(∇Cⱼ 𝓜⁻¹ ∇Cⱼᵀ + α̃ⱼ)`;
//! * **block** (124): all n rows of a vector constraint at once,
//!   `[∇C 𝓜⁻¹ ∇Cᵀ + α̃] Δλ = −C − α̃λ`, an n×n SPD system (n ≤ 6) solved by Cholesky.
//!
//! Either way the state moves by (57)–(58): `Δx = 𝓜⁻¹∇CᵀΔλ`, `p ← p + Δp`,
//! `R ← R ⊞ Δθ`. After the sweeps, velocities are `v = (p − pⁿ)/h`,
//! `ω = (R ⊟ Rⁿ)/h` (Alg. 1 line 10).
//!
//! # Extension points
//! Everything the solver knows about a constraint goes through [`Constraint`]: an
//! inequality row (a limit or a contact) bounds its accumulated λ
//! ([`Constraint::lambda_bounds`]), and a compliant row (α > 0) is a spring. There is
//! no velocity-level damping pass (Section 4.4) and no rod solver.
//! A new constraint's gradient can be verified against finite differences with one
//! call, [`check_gradient`] or [`check_gradient_perturbed`] (module [`check`]).

pub mod body;
pub mod check;
pub mod constraint;
pub mod error;
pub mod world;

pub use body::{Body, BodyId};
pub use check::{check_gradient, check_gradient_perturbed, GradientCheck, MAX_ROTATION_SCALE};
pub use constraint::{Constraint, ConstraintEval, MAX_BODIES, MAX_ROWS};
pub use error::XpbdError;
pub use world::{ConstraintId, Residuals, SolveMode, SolverOptions, World};
