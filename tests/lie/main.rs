//! Integration tests of `lie_xpbd::lie` (SO(3) in both representations, f32 and f64):
//! one test binary (`cargo test --test lie`), one module per topic.
//! `lie_harness` instantiates each generic check for the four scalar/representation
//! combinations; its macros are visible in every module declared after it.

#[macro_use]
mod lie_harness;

mod coefficients;
mod edge_cases;
mod errors;
mod identities;
mod jacobians;
mod serde_support;
mod small_angle_paths;
mod toolkit;
mod toolkit_jacobians;
