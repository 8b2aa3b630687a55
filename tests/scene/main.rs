//! Integration tests of scene files (`lie_xpbd::scene`: format, errors, rods,
//! actuation) and of the shipped scenes in `scenes/` (`scenes_*` modules): one test
//! binary (`cargo test --test scene`), one module per topic. Malformed and extra
//! scene files used here live in `tests/scenes/`.

mod actuation;
mod errors;
mod format;
mod joint_solve;
mod rods;
mod scenes_pendulum_config;
mod scenes_rps;
