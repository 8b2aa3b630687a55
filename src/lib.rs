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
