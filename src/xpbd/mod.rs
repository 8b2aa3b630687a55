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
//! `ω = (R ⊟ Rⁿ)/h` (Alg. 1 line 10), and the velocity-level damping pass follows
//! (lines 11–14, below).
//!
//! # The primal correction pass
//! The Newton subproblem (53)–(55) neglects the residual of (51), so after a sweep
//! 𝓜(x ⊟ x̃) = Σ ∇C(x_k)ᵀλ holds with each constraint's gradient at the state x_k it
//! was projected at, not at the end state x: the constraint's own correction turns
//! its lever arms, and later constraints of the sweep move its bodies again. With
//! [`SolverOptions::primal_correction`], one pass after the sweeps (before line 10)
//! re-evaluates every constraint at x and moves each body by
//!
//! ```text
//! r = 𝓜(x ⊟ x̃) − ∇C(x)ᵀλ,      x ← x ⊞ (−𝓜⁻¹ r)
//! ```
//!
//! with λ kept, so (51) then holds up to the change of ∇C(x)ᵀλ over that move, of
//! second order in r, while (52) changes by ∇C 𝓜⁻¹r, of the order of r/m. x ⊟ x̃ is
//! taken from the corrections applied since the prediction
//! ([`Body::correction_since_prediction`]), not from the difference of two rounded
//! poses, so the pass acts on the residual and not on f32 rounding. In the triple
//! pendulum of Section 9.1 (Δt = 1 ms, one iteration, block solves) it lowers the
//! median primal residual over 0–15 s from 3.35e-9 to 6.9e-13 and leaves the
//! constraint residual at 2.08e-5, for one more evaluation of every constraint per
//! substep (about 1.55× the instructions of the plain step). It needs gradients
//! that are continuous at C = 0 ([`Constraint::is_smooth`]): for the
//! normed joints of Section 5.1, whose gradient d/‖d‖ jumps there, it would undo
//! their corrections (the pendulum in scalar mode blows up within 0.02 s), so a
//! world holding one skips the pass ([`World::primal_correction_applies`]). So does a
//! world holding a rod: the pass is an explicit step, and a rod's stiff rows on its
//! light nodes make it grow instead of contract.
//!
//! # Velocity-level damping (Section 4.4)
//! A row j may carry a Rayleigh damping b ≥ 0 (seconds, [`Constraint::damping`]). Its
//! damping coefficient is β = b·α⁻¹, so that every row has the same ratio of damping
//! to stiffness. The dissipation potential (60) and its force (61) are
//!
//! ```text
//! U_d = ½ Ċᵀ β Ċ = ½ vᵀ ∇Cᵀ β ∇C v        f_d = −∂U_d/∂v = −∇Cᵀ β ∇C v
//! ```
//!
//! where v stacks, per body, (v world, ω body frame): the same columns as the gradient
//! (59), because a body moving with (v, ω) for a time dt goes to (p + v dt, R ⊞ ω dt),
//! so Ċ = ∇C·v. After the position solve and the velocity update, backward Euler on
//! the velocities (62) is
//!
//! ```text
//! 𝓜 (vⁿ⁺¹ − vⁿ) = −h ∇Cᵀ β ∇C vⁿ⁺¹
//! ```
//!
//! with h the substep and vⁿ the velocities of Alg. 1 line 10. With multipliers
//! μ = −β̃ ∇C vⁿ⁺¹ and β̃ = h β = h b/α this is (63)–(64), the analogue of (51)–(52):
//!
//! ```text
//! 𝓜 (vⁿ⁺¹ − vⁿ) − ∇Cᵀ μ = 0
//! ∇C vⁿ⁺¹ + β̃⁻¹ μ = 0
//! ```
//!
//! ((64) is printed with ∇Cᵀ; the product needs ∇C.) Eliminating vⁿ⁺¹ = vᵏ + Δv with
//! Δv = 𝓜⁻¹∇CᵀΔμ gives (65)–(66) — (65) is printed with 𝓜 where 𝓜⁻¹ belongs, as in
//! (55):
//!
//! ```text
//! [∇C 𝓜⁻¹ ∇Cᵀ + β̃⁻¹] Δμ = −∇C vᵏ − β̃⁻¹ μᵏ        Δv = 𝓜⁻¹ ∇Cᵀ Δμ
//! ```
//!
//! The system is linear in v and ∇C does not depend on v, so ∇C is evaluated once at
//! the end-of-substep poses, and one solve per constraint (μ⁰ = 0, hence no β̃⁻¹μ
//! term) is exact for that constraint; [`World::solve_velocities`] does one
//! Gauss–Seidel sweep over the constraints, row by row (a scalar row:
//! `Δμⱼ = −∇Cⱼv/(∇Cⱼ𝓜⁻¹∇Cⱼᵀ + β̃ⱼ⁻¹)`) or as blocks by Cholesky, following
//! [`SolveMode`]. Rows with b = 0 contribute nothing and hard rows (α = 0, β̃⁻¹ = 0)
//! have Ċ = 0 already: both are skipped, so a world without damped rows is bit for bit
//! the undamped integrator.
//!
//! **No energy is added.** With A = ∇C𝓜⁻¹∇Cᵀ + β̃⁻¹ and Δμ = −A⁻¹∇C v, the kinetic
//! energy changes by
//! `vᵀ∇CᵀΔμ + ½Δμᵀ∇C𝓜⁻¹∇CᵀΔμ = −Δμᵀ(½∇C𝓜⁻¹∇Cᵀ + β̃⁻¹)Δμ ≤ 0`; a row clamped to its λ
//! bounds applies tΔμ, t ∈ [0, 1], and loses `−tΔμᵀ(A − ½t∇C𝓜⁻¹∇Cᵀ)Δμ ≤ 0`.
//!
//! **A damped spring.** One row C = x (a mass m on a spring k = α⁻¹) is the oscillator
//! `m ẍ + b k ẋ + k x = 0`: ω₀ = 1/√(αm), ζ = b ω₀/2 = b/(2√(αm)), amplitude decay rate
//! σ = ζω₀ = b/(2αm). Per substep the position solve maps (x, v) by
//! `[[1, h], [−hω₀², 1]]/(1 + h²ω₀²)` (determinant 1/(1 + h²ω₀²): the integrator's own
//! decay rate ln(1 + h²ω₀²)/(2h) ≈ hω₀²/2), and the damping pass (∇C = 1, 𝓜⁻¹ = 1/m,
//! β̃⁻¹ = α/(hb)) gives Δμ = −v/(1/m + α/(hb)) and v ← v + Δμ/m = v/(1 + hb/(αm))
//! = v/(1 + 2σh). The determinant of the product, the squared per-substep amplitude
//! ratio of the oscillating pair of eigenvalues, gives the decay rate
//! `[ln(1 + h²ω₀²) + ln(1 + 2σh)]/(2h)`: the damping adds ln(1 + 2σh)/(2h) = σ(1 − σh
//! + …) to the undamped run's rate (`tests/xpbd/damping.rs`).
//!
//! # Extension points
//! Everything the solver knows about a constraint goes through [`Constraint`]: an
//! inequality row (a limit or a contact) bounds its accumulated λ
//! ([`Constraint::lambda_bounds`]), a compliant row (α > 0) is a spring, and a
//! compliant row with a damping b > 0 ([`Constraint::damping`]) is a damped spring:
//! any constraint (joints, user constraints) opts in per row, and the velocity pass
//! ([`World::solve_velocities`]) treats them all alike.
//! Groups of rows over many bodies that are solved together, one linear system per
//! iteration (a Cosserat rod, Section 8.2), implement
//! [`System`] and are added with [`World::add_system`]; the substep projects them
//! before the constraints (Algorithm 1, line 5).
//! Constraints already in a world can be grouped into one direct solve per iteration
//! ([`World::add_direct_group`], module [`world::direct`]): all rows of a chain of
//! joints and their limits at once, exact for the linearised system whatever the mass
//! ratios, where Gauss–Seidel over the constraints converges too slowly.
//! A new constraint's gradient can be verified against finite differences with one
//! call, [`check_gradient`] or [`check_gradient_perturbed`] (module [`check`]).

pub mod body;
pub mod check;
pub mod constraint;
pub mod error;
pub mod world;

pub use body::{Body, BodyId};
pub use check::{
    check_gradient, check_gradient_perturbed, check_row_block, check_row_block_perturbed,
    GradientCheck, MAX_CONCLUSIVE_TOLERANCE, MAX_ROTATION_SCALE,
};
pub use constraint::{
    Constraint, ConstraintEval, GradientLayout, SubstepClock, MAX_BODIES, MAX_ROWS,
};
pub use error::XpbdError;
pub use world::{
    apply_body_correction, apply_last_body_correction, BreakEvent, BreakLimits, ConstraintId,
    DirectGroupId, DirectGroupStats, F32Arithmetic, Residuals, RowBlockEval, RowBlockInfo,
    SolveMode, SolverOptions, System, SystemId, World, MAX_BLOCK_BODIES,
};
