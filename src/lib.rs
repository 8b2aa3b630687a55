//! # lie-xpbd
//!
//! Extended Position-Based Dynamics (XPBD) where rotations are handled with Lie theory,
//! implementing "Orientation in Extended Position-Based Dynamics: Application to Rigid
//! Bodies and Cosserat Rods" (equation numbers in the docs refer to that paper).
//!
//! Layers, bottom to top; a module names only its own layer and those below it, in
//! code and in docs (checked by `tests/layers.rs`):
//!
//! ```text
//! lie ← linalg ← xpbd ← joint ← rod, guide ← scene ← scenes ← sim ← pipeline ← lie-xpbd (bin)
//! ```
//!
//! * [`lie`]: the `LieGroup` trait over SO(3) (rotation matrices or unit quaternions,
//!   f32 or f64), Exp/Log, boxplus/boxminus, Γ, Γ⁻¹, Jacobian blocks, and
//!   finite-difference derivatives on the manifold. Knows nothing of solvers.
//! * [`linalg`]: general linear algebra: the block-banded Cholesky solver of 6×6 blocks
//!   (Section 8.2) with its x86-64 kernels, and [`linalg::BandScalar`], the scalars it
//!   runs on with their block storage.
//! * [`xpbd`]: bodies, the `Constraint` trait, the time step (Algorithm 1) with row or
//!   block projection, direct groups of constraints, and the primal and constraint
//!   residuals.
//! * [`joint`]: vector joint constraints (fixed, revolute, spherical, prismatic), joint
//!   limits, drives to targets (81) and velocity motors.
//! * [`rod`]: Cosserat rod finite elements and rigid chains: interpolation, strains and
//!   Gauss-point constraints with their gradients, and the rod's λ-system for the
//!   block-banded solver (Section 8.2).
//! * [`guide`] (beside `rod`, which it does not use): writing your own constraint.
//! * [`scene`]: the TOML scene format and the generic builder from a scene to a world.
//! * [`scenes`]: the paper's experiments as builders (on scene files).
//! * [`sim`]: a built scene behind one object-safe trait, for any scalar and representation.
//! * `pipeline` (feature `cli`, on by default): runs, outputs, plots and studies, under
//!   the `lie-xpbd` program.
//!
//! Writing your own constraint: the [`guide`] derives, checks and simulates one, step by step.
//!
//! # Quick start
//!
//! A body hinged to the world by a revolute joint (72), stepped with block solves (124).
//! Written once against `T: Real, G: LieGroup<T>`, it runs on rotation matrices or unit
//! quaternions, in f64 or f32.
//!
//! ```
//! use lie_xpbd::joint::{JointFrame, Revolute};
//! use lie_xpbd::lie::{real::c, LieGroup, Real, SO3Matrix, UnitQuaternion};
//! use lie_xpbd::xpbd::{Body, SolverOptions, World, XpbdError};
//! use nalgebra::Vector3;
//!
//! fn hinge<T: Real, G: LieGroup<T>>() -> Result<(), XpbdError> {
//!     let mut world = World::<T, G>::new(SolverOptions::default())?; // Δt = 1 ms, g = −9.81 ŷ
//!     // A 1 kg rod 1 m long along body y, turned to lie along x, centre 0.5 m from the pivot.
//!     let inertia = Vector3::new(c(1.0 / 12.0), c(1e-3), c(1.0 / 12.0));
//!     let turn = G::exp(&Vector3::new(T::zero(), T::zero(), T::frac_pi_2()));
//!     let rod = Body::dynamic(T::one(), inertia, Vector3::new(c(0.5), T::zero(), T::zero()), turn)?;
//!     let id = world.add_body(rod)?;
//!     // Hinge about z at the world origin and at the rod's end (0, 0.5, 0), body frame.
//!     let end = JointFrame::at(Vector3::new(T::zero(), c(0.5), T::zero()));
//!     world.add_constraint(Revolute::new(None, JointFrame::identity(), Some(id), end)?)?;
//!     for _ in 0..500 {
//!         world.step()?;
//!     }
//!     let r = world.residuals(); // primal (51) and constraint (52) residuals
//!     assert!(r.constraint.to_f64() < 1e-3);
//!     let radius = world.body(id).unwrap().position.norm().to_f64();
//!     assert!((radius - 0.5).abs() < 1e-3);
//!     Ok(())
//! }
//!
//! hinge::<f64, SO3Matrix<f64>>()?;
//! hinge::<f32, UnitQuaternion<f32>>()?;
//! # Ok::<(), XpbdError>(())
//! ```
#![warn(missing_docs)]

/// The nalgebra this crate is built on, re-exported so that users name the same
/// `Vector3`, `Matrix3` and `UnitQuaternion` types without a second nalgebra version.
pub use nalgebra;
/// The `rand` whose generators this crate's samplers take ([`lie::LieGroup::random`]):
/// make the generator with it so that the versions match, e.g.
/// `lie_xpbd::rand::rngs::StdRng::seed_from_u64(7)`.
pub use rand;

pub mod guide;
pub mod joint;
pub mod lie;
pub mod linalg;
#[cfg(feature = "cli")]
pub mod pipeline;
pub mod rod;
pub mod scene;
pub mod scenes;
pub mod sim;
pub mod xpbd;

/// The code blocks of README.md, compiled and run as doc tests by `cargo test` so the
/// README's library example cannot rot. (Only exists under `cfg(doctest)`.)
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
