//! # lie-xpbd
//!
//! Extended Position-Based Dynamics (XPBD) where rotations are handled with Lie theory,
//! implementing "Orientation in Extended Position-Based Dynamics: Application to Rigid
//! Bodies and Cosserat Rods" (equation numbers in the docs refer to that paper).
//!
//! Layers, bottom to top (nothing imports from above):
//! * [`lie`]: the `LieGroup` trait over SO(3) (rotation matrices or unit quaternions,
//!   f32 or f64), Exp/Log, boxplus/boxminus, Γ, Γ⁻¹, Jacobian blocks, and
//!   finite-difference derivatives on the manifold.
//! * [`xpbd`]: bodies, the `Constraint` trait, the time step (Algorithm 1) with row or
//!   block projection, and the primal and constraint residuals.
//! * [`joint`]: vector joint constraints (fixed, revolute, spherical, prismatic).
//! * [`scenes`]: the paper's experiments as builders.
//! * [`output`]: recording runs and writing CSV/JSON outputs (used by the CLI).
//!
//! # Quick start
//!
//! A body hinged to the world by a revolute joint (72), stepped with block solves (124),
//! in f64 with rotation matrices; swap `SO3Matrix<f64>` for `UnitQuaternion<f32>` and
//! nothing else changes.
//!
//! ```
//! use lie_xpbd::joint::{JointFrame, Revolute};
//! use lie_xpbd::lie::{LieGroup, SO3Matrix};
//! use lie_xpbd::xpbd::{Body, SolverOptions, World};
//! use nalgebra::Vector3;
//!
//! type G = SO3Matrix<f64>;
//! let mut world = World::<f64, G>::new(SolverOptions::default())?; // Δt = 1 ms, g = −9.81 ŷ
//! // A 1 kg rod 1 m long along body y, its centre 0.5 m right of the pivot.
//! let rod = Body::dynamic(1.0, Vector3::new(1.0 / 12.0, 1e-3, 1.0 / 12.0),
//!                         Vector3::new(0.5, 0.0, 0.0), G::exp(&(Vector3::z() * std::f64::consts::FRAC_PI_2)))?;
//! let id = world.add_body(rod)?;
//! // Hinge about z at the world origin and at the rod's end (0, 0.5, 0) in its body frame.
//! world.add_constraint(Revolute::new(None, JointFrame::identity(),
//!                                    Some(id), JointFrame::at(Vector3::new(0.0, 0.5, 0.0)))?)?;
//! for _ in 0..500 {
//!     world.step()?;
//! }
//! let r = world.residuals(); // primal (51) and constraint (52) residuals
//! assert!(r.constraint < 1e-4);
//! assert!((world.body(id).unwrap().position.norm() - 0.5).abs() < 1e-4);
//! # Ok::<(), lie_xpbd::xpbd::XpbdError>(())
//! ```
#![warn(missing_docs)]

pub mod joint;
pub mod lie;
pub mod output;
pub mod scenes;
pub mod xpbd;

/// The code blocks of README.md, compiled and run as doc tests by `cargo test` so the
/// README's library example cannot rot. (Only exists under `cfg(doctest)`.)
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
