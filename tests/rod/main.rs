//! Integration tests of the Cosserat rods (`lie_xpbd::rod`: elements, Gauss points,
//! the block-banded solver, rigid-chain rods, loads): one test binary
//! (`cargo test --test rod`), one module per topic.

// The counting global allocator of the no-allocation tests (one per binary; it counts
// per thread, so tests running in parallel do not disturb each other's counts).
#[path = "../alloc_counter/mod.rs"]
mod alloc_counter;

mod banded;
mod check_jacobians;
mod element;
mod gauss_point;
mod loads;
mod no_alloc;
mod rigid_chain;
mod rigid_chain_energy;
mod rigid_chain_spring;
mod rigid_chain_system;
mod world;
