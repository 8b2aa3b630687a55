//! Integration tests of the joints (`lie_xpbd::joint`: kinematics, limits, drives,
//! breaking, gradients, the limited hinge chain): one test binary
//! (`cargo test --test joint`), one module per topic.

mod joint_chain;

mod breaking;
mod chain_direct;
mod chain_robust;
mod chain_studies;
mod constraint_force;
mod drives;
mod errors;
mod gradients;
mod limits;
mod limits_prismatic;
mod limits_spherical;
mod normed;
mod prescribed;
mod world;
