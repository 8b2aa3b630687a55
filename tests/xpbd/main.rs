//! Integration tests of the XPBD core (`lie_xpbd::xpbd`: bodies, the world and its
//! solvers, damping, residuals, the gradient checker) and the pendulum:
//! one test binary (`cargo test --test xpbd`), one module per topic.

// The counting global allocator of the no-allocation tests (one per binary; it counts
// per thread, so tests running in parallel do not disturb each other's counts).
#[path = "../alloc_counter/mod.rs"]
mod alloc_counter;

mod check;
mod damping;
mod direct;
mod dt_limits;
mod f32_arithmetic;
mod f32_trust;
mod free_spin;
mod gradient_layout;
mod no_alloc;
mod pendulum;
mod primal_correction;
mod residuals_bounded_rows;
mod solver;
