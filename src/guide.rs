//! # Guide: your own constraint, from gradient to simulation
//!
//! The path a researcher takes on day one: write a constraint with an analytic
//! gradient, check that gradient against finite differences, and run it in a
//! [`World`], all generic over the scalar `T` (f32, f64) and the rotation
//! representation `G` ([`SO3Matrix`], [`UnitQuaternion`]). Equation numbers refer to
//! "Orientation in Extended Position-Based Dynamics: Application to Rigid Bodies and
//! Cosserat Rods". This module holds documentation only.
//!
//! # 1. What a constraint is here
//!
//! A constraint is a function C(x) ∈ ℝⁿ (1 ≤ n ≤ [`MAX_ROWS`]) of the poses
//! (pₖ, Rₖ) of at most two bodies ([`MAX_BODIES`]), which the solver drives to
//! C(x) + α̃λ = 0 (52). You implement [`Constraint`]: [`Constraint::dim`] gives n,
//! [`Constraint::bodies`] the body of slot 0 and slot 1 (`None` = the fixed world),
//! [`Constraint::compliance`] the compliance α of each row, and
//! [`Constraint::evaluate`] writes C and its gradient into a [`ConstraintEval`] that
//! the caller has zeroed. Optionally, [`Constraint::damping`] gives a compliant row a
//! Rayleigh damping b (seconds, β = b/α, Section 4.4), applied by the world's
//! velocity-level pass through the same gradient.
//!
//! The gradient is stored per body slot k as an n×6 block in the layout of (59):
//!
//! ```text
//! gradient[k] = [ ∂C/∂pₖ | D_{Rₖ}C ]      columns 0..3          columns 3..6
//!                 world-frame δp, per m    body-frame δθ, per rad
//! ```
//!
//! The position columns are ordinary partial derivatives with respect to the world
//! coordinates of pₖ. The rotation columns are derivatives with respect to a
//! body-frame perturbation (9), (14)/(16):
//!
//! ```text
//! R ⊞ δθ = R·Exp(δθ),      D_R C = ∂C(R ⊞ δθ)/∂δθ at δθ = 0
//! ```
//!
//! so column 3 + i answers "how fast does C change when the body turns about its own
//! i-th axis". The frame is not a matter of taste. For one row j (56) the solver
//! computes, with α̃ = α/h² and h the substep,
//!
//! ```text
//! Δλ = −(C + α̃λ) / (∇C M⁻¹ ∇Cᵀ + α̃)                                  (56)
//! Δpₖ = (1/mₖ) (∂C/∂pₖ)ᵀ Δλ,   Δθₖ = 𝓘ₖ⁻¹ (D_{Rₖ}C)ᵀ Δλ,   Rₖ ← Rₖ ⊞ Δθₖ   (57)–(58)
//! ```
//!
//! where M⁻¹ = diag(1/m I₃, 𝓘⁻¹) per body and 𝓘 is the body's **body-frame** principal
//! inertia. The rotation columns are multiplied by that body-frame inertia and the
//! correction is applied on the right, in the body frame: columns written in the
//! world frame give the wrong effective mass and turn the body about the wrong axis.
//! (A vector constraint can also be projected as one block (124); see section 4.)
//!
//! The one derivative almost every position constraint needs is that of a body point
//! in the world, (20) ([`LieGroup::jacobian_act`]):
//!
//! ```text
//! D_R(R r) = −R r̂        (r̂ = hat(r), the cross-product matrix: r̂ v = r × v)
//! ```
//!
//! The built-in joints of [`crate::joint`] are written this way; for instance the
//! spherical joint's p̄₁ − p̄₂ has the blocks `[I | −R₁ r̂₁]` and `[−I | R₂ r̂₂]`
//! ([`crate::joint::JointKinematics::position_error_gradient`]).
//!
//! # 2. A worked example: a distance constraint
//!
//! A massless rigid rod of length L between a point r₁ on body 1 and a point r₂ on
//! body 2 (each in its body frame; for a world slot the point is given in the world):
//!
//! ```text
//! p̄ₖ = pₖ + Rₖ rₖ,     d = p̄₁ − p̄₂,     C = |d| − L   (1 row, m)
//! ```
//!
//! With n = d/|d| the unit direction, ∂C/∂p̄₁ = nᵀ and ∂C/∂p̄₂ = −nᵀ. By the chain rule
//! and (20):
//!
//! ```text
//! ∂C/∂p₁ =  nᵀ,     D_{R₁}C =  nᵀ D_{R₁}(R₁ r₁) = −nᵀ R₁ r̂₁ = (r₁ × R₁ᵀn)ᵀ
//! ∂C/∂p₂ = −nᵀ,     D_{R₂}C = −nᵀ D_{R₂}(R₂ r₂) =  nᵀ R₂ r̂₂ = −(r₂ × R₂ᵀn)ᵀ
//! ```
//!
//! The rotation block is the lever arm r crossed with the direction n expressed in the
//! body frame (Rᵀn): the body-frame torque arm. In code that is the 1×3 row
//! ±nᵀ times the 3×3 block `jacobian_act(r)`. The gradient is undefined at d = 0 (no
//! direction); the example then leaves it zero, which makes the solver skip the row.
//! That is the only singular state: checks and simulations keep |d| well away from 0.
//!
//! The test below defines the constraint once for every `T` and `G`, checks its
//! gradient in the four combinations of f64/f32 and [`SO3Matrix`]/[`UnitQuaternion`],
//! at a rotated state with both slots used and at 50 seeded random states around it,
//! then hangs a 1 kg, 1 m rod from the world origin by a 0.5 m rope attached at one of
//! its ends, throws it sideways, and simulates 1 s.
//!
//! ```rust
//! use lie_xpbd::lie::{real::c, LieGroup, Real, SO3Matrix, UnitQuaternion};
//! use lie_xpbd::xpbd::{
//!     check_gradient, check_gradient_perturbed, Body, BodyId, Constraint, ConstraintEval,
//!     SolverOptions, World, XpbdError, MAX_BODIES,
//! };
//! use nalgebra::Vector3;
//! use rand::SeedableRng;
//!
//! /// A massless rigid rod of length `length` between two attachment points.
//! struct Distance<T: Real> {
//!     /// The body of each slot; `None` is the fixed world.
//!     bodies: [Option<BodyId>; MAX_BODIES],
//!     /// Attachment point of each slot: r in the body frame (m), or the world point
//!     /// itself (m) for a `None` slot.
//!     anchors: [Vector3<T>; MAX_BODIES],
//!     /// L, m.
//!     length: T,
//!     /// α, m/N (0 = rigid).
//!     compliance: T,
//! }
//!
//! impl<T: Real> Distance<T> {
//!     /// p̄ₖ = pₖ + Rₖ rₖ (m, world frame), or rₖ itself for the world.
//!     fn world_point<G: LieGroup<T>>(&self, k: usize, bodies: &[Body<T, G>]) -> Vector3<T> {
//!         match self.bodies[k] {
//!             Some(BodyId(i)) => bodies[i].position + bodies[i].orientation.act(&self.anchors[k]),
//!             None => self.anchors[k],
//!         }
//!     }
//! }
//!
//! // One impl for every scalar and every rotation representation.
//! impl<T: Real, G: LieGroup<T>> Constraint<T, G> for Distance<T> {
//!     fn name(&self) -> String {
//!         let side = |b: Option<BodyId>| b.map_or("world".to_string(), |b| b.0.to_string());
//!         format!("distance({}, {})", side(self.bodies[0]), side(self.bodies[1]))
//!     }
//!     fn kind(&self) -> &'static str {
//!         "distance"
//!     }
//!     fn dim(&self) -> usize {
//!         1
//!     }
//!     fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
//!         self.bodies
//!     }
//!     fn compliance(&self, _row: usize) -> T {
//!         self.compliance
//!     }
//!     fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
//!         let d = self.world_point(0, bodies) - self.world_point(1, bodies);
//!         let len = d.norm();
//!         out.value[0] = len - self.length; // C = |p̄₁ − p̄₂| − L
//!         if len <= T::default_epsilon() {
//!             return; // no direction: leave ∇C = 0 (the solver skips the row)
//!         }
//!         let n = d / len;
//!         // ∂C/∂p̄₁ = nᵀ, ∂C/∂p̄₂ = −nᵀ; a world slot has no block.
//!         for (k, sign) in [(0, T::one()), (1, -T::one())] {
//!             let Some(BodyId(i)) = self.bodies[k] else { continue };
//!             let dc = (n * sign).transpose(); // 1×3: columns 0..3, world frame, per m
//!             // D_R(R r) = −R r̂ (20): columns 3..6, body frame (R ⊞ δθ), per rad.
//!             let rot = dc * bodies[i].orientation.jacobian_act(&self.anchors[k]);
//!             let g = &mut out.gradient[k];
//!             g.fixed_view_mut::<1, 3>(0, 0).copy_from(&dc);
//!             g.fixed_view_mut::<1, 3>(0, 3).copy_from(&rot);
//!         }
//!     }
//! }
//!
//! fn v<T: Real>(x: f64, y: f64, z: f64) -> Vector3<T> {
//!     Vector3::new(c(x), c(y), c(z))
//! }
//!
//! /// The analytic gradient against central differences: at a state with both slots
//! /// used and both bodies rotated (at R = I a world-frame mistake goes unnoticed,
//! /// section 3), then at 50 seeded random states within 0.2 m and 0.5 rad of it.
//! fn check<T: Real, G: LieGroup<T>>() -> Result<(), XpbdError> {
//!     let inertia = v::<T>(0.1, 0.02, 0.1);
//!     let bodies = [
//!         Body::dynamic(T::one(), inertia, v(0.3, -0.2, 0.1), G::exp(&v(0.4, -0.3, 0.2)))?,
//!         Body::dynamic(c(2.0), inertia, v(1.8, -0.9, 0.5), G::exp(&v(-0.2, 0.5, 0.7)))?,
//!     ];
//!     let rod = Distance {
//!         bodies: [Some(BodyId(0)), Some(BodyId(1))],
//!         anchors: [v(0.0, 0.5, 0.0), v(0.1, -0.4, 0.2)],
//!         length: c(1.0),
//!         compliance: T::zero(),
//!     };
//!     let report = check_gradient(&rod, &bodies)?;
//!     assert!(report.passed(), "{report}");
//!     let mut rng = rand::rngs::StdRng::seed_from_u64(7);
//!     let report = check_gradient_perturbed(&rod, &bodies, &mut rng, 50, 0.2, 0.5)?;
//!     assert!(report.passed(), "{report}");
//!     assert_eq!((report.kind, report.states_checked), ("distance", 51));
//!     // Measured worst errors: ≤ 4.1e-11 in f64 and ≤ 2.1e-4 in f32, against
//!     // tolerances of 2.2e-7 and 4.5e-3 (1e-7 and 2e-3 times the 2.2 m reach).
//!     Ok(())
//! }
//!
//! check::<f64, SO3Matrix<f64>>()?;
//! check::<f64, UnitQuaternion<f64>>()?;
//! check::<f32, SO3Matrix<f32>>()?;
//! check::<f32, UnitQuaternion<f32>>()?;
//!
//! /// A 1 kg rod, 1 m along its body y axis, lying along world x with its end
//! /// r = (0, 0.5, 0) at (0.5, 0, 0), hung from the world origin by a 0.5 m rope
//! /// attached at that end, thrown at 1 m/s along z and simulated for 1 s
//! /// (Δt = 1 ms, one substep, one iteration). Returns the final centre of mass (m).
//! fn swing<T: Real, G: LieGroup<T>>() -> Result<Vector3<f64>, XpbdError> {
//!     let mut world = World::<T, G>::new(SolverOptions::default())?; // g = −9.81 ŷ
//!     let inertia = v::<T>(1.0 / 12.0, 1e-3, 1.0 / 12.0);
//!     let turn = G::exp(&Vector3::new(T::zero(), T::zero(), T::frac_pi_2())); // y → −x
//!     let rod = Body::dynamic(T::one(), inertia, v(1.0, 0.0, 0.0), turn)?
//!         .with_velocity(v(0.0, 0.0, 1.0), Vector3::zeros())?;
//!     let id = world.add_body(rod)?;
//!     let rope = world.add_constraint(Distance {
//!         bodies: [None, Some(id)],
//!         anchors: [Vector3::zeros(), v(0.0, 0.5, 0.0)],
//!         length: c(0.5),
//!         compliance: T::zero(),
//!     })?;
//!
//!     let e0 = world.energy().to_f64(); // kinetic + gravity + elastic, J
//!     let (mut max_c, mut max_gain, mut max_reach) = (0.0f64, f64::NEG_INFINITY, 0.0f64);
//!     let mut eval = ConstraintEval::default();
//!     for _ in 0..1000 {
//!         world.step()?;
//!         eval.clear();
//!         world.constraint(rope).unwrap().evaluate(world.bodies(), &mut eval);
//!         max_c = max_c.max(eval.value[0].to_f64().abs());
//!         max_gain = max_gain.max(world.energy().to_f64() - e0);
//!         max_reach = max_reach.max(world.body(id).unwrap().position.norm().to_f64());
//!     }
//!
//!     // The rope holds. Measured max |C| over the run: 9.4e-10 m in f64, what one
//!     // projection per substep leaves of a nonlinear C: the correction is of order
//!     // v²h²/L ≈ 3e-5 m (rope end speed v ≤ 3.8 m/s), the C left after one Newton
//!     // step of order its square over L, ~1e-9 m. In f32: 1.2e-7 to 1.5e-7 m, one or
//!     // two ulps of a 1 m coordinate (ε = 1.2e-7). Bound: max(1e-8 m, 8 ε·1 m).
//!     let bound = 1e-8f64.max(8.0 * T::default_epsilon().to_f64());
//!     assert!(max_c <= bound, "max |C| = {max_c:e} m > {bound:e} m");
//!     // The centre of mass is at most 0.5 m (rope) + 0.5 m (half rod) from the anchor;
//!     // measured max: 1 m − 5e-7 m, when rope and rod line up.
//!     assert!(max_reach <= 1.0 + bound, "the rod reached {max_reach} m");
//!     // Backward Euler (42)–(43) only removes energy: the total never exceeded its
//!     // initial value (measured: at most −5.0e-5 J, the first step's loss), and after
//!     // 1 s it has lost 0.284 J (f64 and f32) of the ~10 J that the fall makes
//!     // available: numerical damping, not a leak. Bound on the loss: 0.35 J.
//!     assert!(max_gain <= 0.0, "energy rose by {max_gain:e} J");
//!     let lost = e0 - world.energy().to_f64();
//!     assert!(lost > 0.0 && lost < 0.35, "energy lost: {lost} J");
//!     Ok(world.body(id).unwrap().position.map(|x| x.to_f64()))
//! }
//!
//! let reference = swing::<f64, SO3Matrix<f64>>()?;
//! // Matrices and quaternions compute the same trajectory (measured: 7e-14 m apart);
//! // f32 follows it to 6e-5 m after 1 s (bound 1e-3 m).
//! approx::assert_relative_eq!(swing::<f64, UnitQuaternion<f64>>()?, reference, epsilon = 1e-9);
//! approx::assert_relative_eq!(swing::<f32, SO3Matrix<f32>>()?, reference, epsilon = 1e-3);
//! approx::assert_relative_eq!(swing::<f32, UnitQuaternion<f32>>()?, reference, epsilon = 1e-3);
//! # Ok::<(), XpbdError>(())
//! ```
//!
//! # 3. When the check fails
//!
//! [`check_gradient`] builds the analytic n × 6k matrix J (k distinct bodies, one 6-column
//! block each, slots in order) and its central-difference estimate J_fd, perturbing each
//! position coordinate by ±h (m) and each body by R ⊞ (±h eᵢ) (rad), exactly the
//! perturbations of (59). [`check_gradient_perturbed`] does the same at random states
//! around the given one. The [`GradientCheck`] it returns (its `Display` is one line,
//! made for `assert!(report.passed(), "{report}")`) says:
//!
//! * [`worst_relative_error`](crate::xpbd::GradientCheck::worst_relative_error):
//!   max |J − J_fd| / max(1, max |J|), absolute for gradients with entries below one;
//! * where the largest |J − J_fd| is: [`worst_state`](crate::xpbd::GradientCheck::worst_state)
//!   (0 = the state you passed, i = the i-th random one),
//!   [`worst_row`](crate::xpbd::GradientCheck::worst_row) (row of C),
//!   [`worst_body_slot`](crate::xpbd::GradientCheck::worst_body_slot) (slot 0 or 1, as in
//!   [`Constraint::bodies`]) and [`worst_column`](crate::xpbd::GradientCheck::worst_column)
//!   (0..3 = dp.x, dp.y, dp.z in the world frame; 3..6 = dθ.x, dθ.y, dθ.z about the
//!   body's axes), with the two values there, [`analytic`](crate::xpbd::GradientCheck::analytic)
//!   and [`finite_difference`](crate::xpbd::GradientCheck::finite_difference);
//! * the [`tolerance`](crate::xpbd::GradientCheck::tolerance) it was judged against.
//!
//! **Tolerances.** The step is h = [`Real::fd_step`] (1e-5 in f64, 1e-3 in f32) and the
//! tolerance [`Real::fd_tolerance`] (1e-7 in f64, 2e-3 in f32), multiplied by
//! max(1, L/1 m) with L the largest distance of a checked body from the origin. A
//! central difference errs by about h²·|C‴|/6 (truncation) plus ε·|C|/h (round-off):
//! about 1e-10 + 2e-11 in f64 but 1e-6 + 1.2e-4 in f32, where round-off dominates and
//! the tolerance has to be that loose. Round-off grows with the size of the world
//! coordinates being differenced, hence the factor L. In the example the reach is
//! L = 2.1 to 2.2 m, and the measured errors (≤ 4.1e-11 in f64, ≤ 2.1e-4 in f32) sit
//! about four and one orders of magnitude below the tolerance. A real mistake gives an
//! error of order one (of the size of the gradient's entries), far above either
//! tolerance; an error just above the tolerance usually means a large lever arm or a
//! state near a kink of C, not a wrong formula.
//!
//! **Common mistakes**, and what the report shows for them (reports of the example's
//! constraint at its check state, f64, with the mistake made on purpose):
//!
//! * *Rotation columns in the world frame*: using D(Exp(δθ)R r) = −(R r)^ instead of
//!   −R r̂ (they differ by a factor Rᵀ on the right). The position columns pass and
//!   the worst entry is a rotation column (3..6) (the report is one line, wrapped here):
//!   ```text
//!   gradient of 'distance(0, 1)' (distance, f64): FAILED with worst relative error 1.634e-1 (tolerance 2.074e-7)
//!   over 1 state(s); worst at state 0, row 0, body slot 0, column 4 (dθ.y): analytic -1.634453e-1, finite difference 0.000000e0
//!   ```
//!   At R = I the two conventions coincide and the same wrong gradient **passes**:
//!   always check at rotated states (as the example does), or with
//!   [`check_gradient_perturbed`] and a non-zero `rotation_scale`.
//! * *Forgotten lever arm* (rotation columns left zero, as for a point at the centre of
//!   mass): analytic exactly 0 in a rotation column, finite difference not
//!   (`column 5 (dθ.z): analytic 0.000000e0, finite difference 3.752761e-1`).
//! * *Sign*: analytic = −finite difference. Only the rotation columns flipped (e.g.
//!   `+R r̂` for `−R r̂`, or the cross product in the wrong order) shows up in a
//!   column 3..6; the second body's block written with the first body's sign shows up
//!   in slot 1, typically in a position column
//!   (`body slot 1, column 0 (dp.x): analytic -8.280276e-1, finite difference 8.280276e-1`).
//! * *A non-finite value* (e.g. dividing by |d| = 0): the error is +∞ and the check
//!   fails; guard the singular state as the example does.
//!
//! # 4. Compliance and row versus block solves
//!
//! **Compliance** α is the inverse stiffness of a row (36), in the row's units squared
//! per joule: m/N for a length row such as the example's, rad/(N·m) for an angle row.
//! α = 0 is a hard constraint; α > 0 a spring of stiffness 1/α whose force is −C/α,
//! independent of the time step and the iteration count (the point of XPBD over PBD).
//! The solver uses α̃ = α/h² next to the generalized inverse mass
//! w = ∇C M⁻¹ ∇Cᵀ of the row (56): with α ≪ w·h² the row behaves as hard (for the
//! example's 1 kg rod, w is between 1 and 4 kg⁻¹ and h² = 1e-6 s², so α ≲ 1e-8 m/N,
//! where α̃ is at most 1 % of w, is rigid in practice), while e.g. α = 1e-3 m/N is a
//! 1000 N/m spring that the rope's tension in the example (1 to 38 N, measured)
//! stretches by up to 4 cm. A one-sided constraint (a slack
//! rope: L − |d| ≥ 0) keeps the same gradient and declares the bounds (0, +∞) in
//! [`Constraint::lambda_bounds`].
//!
//! **Row or block.** With [`SolverOptions::solve_mode`] = [`SolveMode::Block`] (the
//! default) the n rows of a vector constraint are projected together by one n×n
//! Cholesky solve of `[∇C M⁻¹ ∇Cᵀ + α̃] Δλ = −C − α̃λ` (124), which accounts for the
//! coupling between rows that move the same body (the three position rows of a joint
//! with a lever arm); [`SolveMode::Rows`] projects one row at a time (56),
//! re-evaluating C and ∇C before each. For a scalar constraint like the example both
//! are the same. Return `false` from [`Constraint::solve_as_block`] to keep one
//! constraint on row solves in block mode, e.g. when its rows can become linearly
//! dependent, where the n×n system is singular (the world then also falls back to rows
//! for that projection). A constraint with a bounded row ([`Constraint::lambda_bounds`])
//! is always solved row by row, so that each row's λ can be clamped. A constraint whose
//! position columns (∂C/∂p) are known zeros or unit rows, as a joint's Δp = p̄₁ − p̄₂
//! followed by rotation rows, can say so in [`Constraint::gradient_layout`]; the block
//! solve then skips those products and gives the same result.
//!
//! [`World`]: crate::xpbd::World
//! [`SO3Matrix`]: crate::lie::SO3Matrix
//! [`UnitQuaternion`]: crate::lie::UnitQuaternion
//! [`MAX_ROWS`]: crate::xpbd::MAX_ROWS
//! [`MAX_BODIES`]: crate::xpbd::MAX_BODIES
//! [`Constraint`]: crate::xpbd::Constraint
//! [`Constraint::dim`]: crate::xpbd::Constraint::dim
//! [`Constraint::bodies`]: crate::xpbd::Constraint::bodies
//! [`Constraint::compliance`]: crate::xpbd::Constraint::compliance
//! [`Constraint::damping`]: crate::xpbd::Constraint::damping
//! [`Constraint::evaluate`]: crate::xpbd::Constraint::evaluate
//! [`Constraint::lambda_bounds`]: crate::xpbd::Constraint::lambda_bounds
//! [`Constraint::solve_as_block`]: crate::xpbd::Constraint::solve_as_block
//! [`Constraint::gradient_layout`]: crate::xpbd::Constraint::gradient_layout
//! [`ConstraintEval`]: crate::xpbd::ConstraintEval
//! [`LieGroup::jacobian_act`]: crate::lie::LieGroup::jacobian_act
//! [`check_gradient`]: crate::xpbd::check_gradient
//! [`check_gradient_perturbed`]: crate::xpbd::check_gradient_perturbed
//! [`GradientCheck`]: crate::xpbd::GradientCheck
//! [`Real::fd_step`]: crate::lie::Real::fd_step
//! [`Real::fd_tolerance`]: crate::lie::Real::fd_tolerance
//! [`SolverOptions::solve_mode`]: crate::xpbd::SolverOptions::solve_mode
//! [`SolveMode::Block`]: crate::xpbd::SolveMode::Block
//! [`SolveMode::Rows`]: crate::xpbd::SolveMode::Rows
