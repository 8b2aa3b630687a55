//! Cosserat rods (paper Section 6): the rigid-chain discretisation of Section 6.2 and
//! the finite elements of Section 6.3, Appendix G.
//!
//! * [`banded`]: the direct solver for the λ-system of a rod, Section 8.2: the
//!   block-banded matrix of 6×6 blocks of [`crate::linalg::banded`] (re-exported), one
//!   block row per Gauss-point constraint (108), with a rod's block bandwidth
//!   ([`banded::rod_block_bandwidth`]) and profile.
//! * [`basis`]: Lagrange shape functions of order 1–3 on ξ ∈ [0, 1] (95)–(97).
//! * [`gauss`]: Gauss–Legendre rules with 1–4 points on [0, 1] (107), reduced or full
//!   integration (6.3.5).
//! * [`material`]: E, ν, G, ρ and the circular section; stiffnesses (87)–(88) with the
//!   shear correction (126); Gauss-point compliances (109); lumped nodal inertias
//!   (6.3.6).
//! * [`element`]: the element's on-manifold interpolation (98)–(100), strains
//!   (101)–(104) and Gauss-point constraints (108) with their gradients.
//! * [`rigid_chain`]: the chain of rigid bodies of Section 6.2 — the joint constraint
//!   (89)–(94) with its gradient (175)–(179), and a builder that puts a whole rod
//!   (bodies with their masses and inertias, joints, precurvature) into a
//!   [`crate::xpbd::World`], as joint constraints solved together by a direct group
//!   (or one after another, for comparison: [`JointSolve`]) or as one block-banded
//!   system ([`RigidChainRod`], [`RigidChainBuilder::build_system`]).
//! * [`fem_rod`]: a rod of elements whose nodes are bodies of an XPBD world, solved
//!   as one block-banded λ-system per iteration ([`FemRod`], a [`crate::xpbd::System`]).
//! * [`fem_builder`]: a finite-element rod of any initial shape from its nodal poses
//!   ([`FemRod::add_from_poses`]).
//! * [`end_motion`]: prescribed motion of a clamped end over time ([`EndMotion`]).
//!
//! Loads: gravity comes from the world; a point force or torque at a node is the node
//! body's [`crate::xpbd::Body::force`] (N, world frame) and
//! [`crate::xpbd::Body::torque`] (N·m, the node's director frame), held over each step.

pub mod banded;
pub mod basis;
pub mod element;
pub mod end_motion;
pub mod error;
pub mod fem_builder;
pub mod fem_rod;
pub mod gauss;
pub mod material;
pub mod rigid_chain;

pub use basis::LagrangeBasis;
pub use element::{
    ElementKinematics, GaussPointConstraint, NodeBlock6, PoseGradient, RodElement, StrainGradient,
    Strains, ThetaGradient,
};
pub use end_motion::EndMotion;
pub use error::RodError;
pub use fem_builder::PosedRod;
pub use fem_rod::{
    CubicRod, FemRod, FemRodError, FemRodIds, LinearRod, QuadraticRod, RodClamp, RodSolve,
    StraightRod, ROD_GAUSS_POINT_KIND,
};
pub use gauss::{GaussRule, Integration, MAX_GAUSS_POINTS};
pub use material::{circular_shear_correction, NodalInertia, RodMaterial};
pub use rigid_chain::{
    rigid_chain_strain_gradient, EndInertia, JointSolve, RestShape, RigidChain, RigidChainBuilder,
    RigidChainConstraint, RigidChainRod, RigidChainRodIds, ROD_JOINT_KIND,
};
