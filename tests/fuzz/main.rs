//! Structure-aware fuzzing on stable Rust (issue 36, part 4): no input may panic, hang
//! or write a partial output.
//!
//! * [`scene_mutations`]: every shipped scene, mutated, through parse → validate →
//!   overrides → `Scene::build` (f64/f32, matrix/quaternion) → a few steps;
//! * [`world_api`]: random worlds through the library API (bodies, joints, limits,
//!   drives, motors, rods, solver options);
//! * [`pipeline_outputs`]: mutated scenes through the pipeline's `run_scene`: whole
//!   files or none;
//! * [`cli_args`]: the `lie-xpbd` program on mutated scene files with random
//!   arguments (a child process per case, so few cases): exit codes, no panics;
//! * [`regressions`]: one test per crash the fuzzer found, named after it.
//!
//! Every case is reproducible from (seed, case index) and runs on a worker thread
//! under `catch_unwind` with a deadline ([`harness`]). The quick pass runs with the
//! rest of the tests:
//!
//! ```text
//! cargo test --all-features --test fuzz                 # quick pass (a few thousand cases)
//! cargo test --all-features --test fuzz -- --ignored --nocapture   # long pass (≥ 100 000 cases)
//! FUZZ_SEED=7 FUZZ_CASES=500000 cargo test --all-features --test fuzz -- --ignored --nocapture
//! FUZZ_SEED=1 FUZZ_CASE=123 cargo test --all-features --test fuzz scene   # replay one case
//! ```
//!
//! `FUZZ_SEED` and `FUZZ_CASES` set every target's seed and case count; `FUZZ_CASE`
//! replays one case (its input is printed with `--nocapture`); `FUZZ_DEADLINE_S` (60)
//! is the time after which a case counts as a hang.

#[cfg(feature = "cli")]
mod cli_args;
mod harness;
#[cfg(feature = "cli")]
mod pipeline_outputs;
mod regressions;
mod scene_mutations;
mod world_api;

use harness::Config;

/// Quick-pass case counts (CI): scene mutations, API worlds, pipeline runs, program
/// runs.
const QUICK: (u64, u64, u64, u64) = (5_000, 5_000, 200, 20);
/// Long-pass case counts (together ≥ 100 000).
const LONG: (u64, u64, u64, u64) = (200_000, 200_000, 5_000, 500);

/// The share of cases that must build and step a world, so that the fuzzer is not
/// only exercising rejections.
const MIN_STEPPED_SCENES: f64 = 0.10;
const MIN_STEPPED_WORLDS: f64 = 0.15;
const MIN_STEPPED_PIPELINE: f64 = 0.05;
const MIN_STEPPED_CLI: f64 = 0.0;

fn scenes(seed: u64, cases: u64) {
    let report = harness::run(
        Config::from_env(seed, cases),
        scene_mutations::generate,
        scene_mutations::execute,
    );
    report.assert_clean("scene mutations", MIN_STEPPED_SCENES);
}

fn worlds(seed: u64, cases: u64) {
    let report = harness::run(
        Config::from_env(seed, cases),
        world_api::generate,
        world_api::execute,
    );
    report.assert_clean("world API", MIN_STEPPED_WORLDS);
    let accepted = world_api::ACCEPTED
        .each_ref()
        .map(|n| n.load(std::sync::atomic::Ordering::Relaxed));
    println!(
        "world API accepted: {} bodies, {} constraints, {} rods, {} direct groups, {} break limits",
        accepted[0], accepted[1], accepted[2], accepted[3], accepted[4]
    );
    if report.cases >= 1000 {
        assert!(
            accepted.iter().all(|&n| n > 0),
            "some kind of world item was never accepted: {accepted:?}"
        );
    }
}

#[cfg(feature = "cli")]
fn pipeline(seed: u64, cases: u64) {
    let report = harness::run(
        Config::from_env(seed, cases),
        pipeline_outputs::generate,
        pipeline_outputs::execute,
    );
    report.assert_clean("pipeline outputs", MIN_STEPPED_PIPELINE);
}

#[cfg(feature = "cli")]
fn cli(seed: u64, cases: u64) {
    let report = harness::run(
        Config::from_env(seed, cases),
        cli_args::generate,
        cli_args::execute,
    );
    report.assert_clean("program", MIN_STEPPED_CLI);
}

#[test]
fn fuzz_scene_mutations_quick() {
    scenes(0x5CE4E, QUICK.0);
}

#[test]
fn fuzz_world_api_quick() {
    worlds(0xA91, QUICK.1);
}

#[cfg(feature = "cli")]
#[test]
fn fuzz_pipeline_outputs_quick() {
    pipeline(0x0F11E5, QUICK.2);
}

#[cfg(feature = "cli")]
#[test]
fn fuzz_program_quick() {
    cli(0xC11, QUICK.3);
}

#[test]
#[ignore = "long pass (≥ 100 000 cases, minutes): cargo test --all-features --test fuzz -- --ignored"]
fn fuzz_scene_mutations_long() {
    scenes(0x10_5CE4E, LONG.0);
}

#[test]
#[ignore = "long pass (≥ 100 000 cases, minutes): cargo test --all-features --test fuzz -- --ignored"]
fn fuzz_world_api_long() {
    worlds(0x10_0A91, LONG.1);
}

#[cfg(feature = "cli")]
#[test]
#[ignore = "long pass (≥ 100 000 cases, minutes): cargo test --all-features --test fuzz -- --ignored"]
fn fuzz_pipeline_outputs_long() {
    pipeline(0x10_0F11E5, LONG.2);
}

#[cfg(feature = "cli")]
#[test]
#[ignore = "long pass (≥ 100 000 cases, minutes): cargo test --all-features --test fuzz -- --ignored"]
fn fuzz_program_long() {
    cli(0x10_0C11, LONG.3);
}
