//! The case runner shared by the fuzz targets: seeded, reproducible cases, each run on a
//! worker thread under `catch_unwind` with a deadline, and a tally of how they ended.
//!
//! Case `i` of a run with seed `s` draws everything from `StdRng::seed_from_u64(mix(s,
//! i))`, so `FUZZ_SEED=s FUZZ_CASE=i` replays exactly that case (input printed). A case
//! is generated on the calling thread (so its input can be printed even if running it
//! never returns) and executed on a worker thread; a panic is caught and counted, a case
//! that does not return within the deadline is counted as a hang and ends the run.

use rand::rngs::StdRng;
use rand::SeedableRng;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How a case ended (a panic or a hang is not an outcome: it is a failure).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// Rejected with a typed error by the named layer (e.g. `"parse"`, `"build"`).
    Rejected(String),
    /// Accepted, but not built or stepped: legitimately large work (`why`).
    Large(String),
    /// Built; stepping was skipped (too much work per step) or asked for none.
    Built,
    /// Built and stepped; a step reported a typed divergence.
    Diverged,
    /// Built and stepped the requested steps, every state finite.
    Stepped,
}

impl Outcome {
    /// Whether the case built a world and stepped it.
    pub fn stepped(&self) -> bool {
        matches!(self, Outcome::Stepped | Outcome::Diverged)
    }
}

/// A case that panicked, hung or broke a checked property.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The run's seed.
    pub seed: u64,
    /// The case index.
    pub case: u64,
    /// `panic`, `hang` or `property`.
    pub what: &'static str,
    /// The panic message or the property that failed.
    pub message: String,
    /// The generated input.
    pub input: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} in case {} (replay: FUZZ_SEED={} FUZZ_CASE={}): {}\ninput: {}",
            self.what, self.case, self.seed, self.case, self.message, self.input
        )
    }
}

/// The tally of one fuzz run.
#[derive(Debug, Default)]
pub struct Report {
    /// Cases run.
    pub cases: u64,
    /// Outcomes, by kind.
    pub outcomes: BTreeMap<Outcome, u64>,
    /// Failures (panics, hangs, broken properties).
    pub failures: Vec<Failure>,
    /// The slowest case: (time, case index).
    pub slowest: (Duration, u64),
    /// Wall time of the run.
    pub wall: Duration,
}

impl Report {
    /// Cases that built a world and stepped it.
    pub fn stepped(&self) -> u64 {
        self.outcomes
            .iter()
            .filter(|(o, _)| o.stepped())
            .map(|(_, n)| n)
            .sum()
    }

    /// Failures of one kind.
    pub fn count(&self, what: &str) -> usize {
        self.failures.iter().filter(|f| f.what == what).count()
    }

    /// One paragraph: cases, panics, hangs, outcomes, slowest case.
    pub fn summary(&self, name: &str) -> String {
        let mut by_kind: BTreeMap<String, u64> = BTreeMap::new();
        for (o, n) in &self.outcomes {
            let k = match o {
                Outcome::Rejected(layer) => format!("rejected by {layer}"),
                Outcome::Large(_) => "large (validated, not built)".into(),
                other => format!("{other:?}").to_lowercase(),
            };
            *by_kind.entry(k).or_default() += n;
        }
        format!(
            "fuzz {name}: {} cases in {:.1} s, {} panics, {} hangs, {} property failures; slowest case {} took {:.3} s; outcomes {:?}",
            self.cases,
            self.wall.as_secs_f64(),
            self.count("panic"),
            self.count("hang"),
            self.count("property"),
            self.slowest.1,
            self.slowest.0.as_secs_f64(),
            by_kind
        )
    }

    /// Asserts no panic, hang or broken property, and that at least `min_stepped` of the
    /// cases built and stepped a world.
    pub fn assert_clean(&self, name: &str, min_stepped: f64) {
        println!("{}", self.summary(name));
        for f in &self.failures {
            println!("{f}");
        }
        assert!(
            self.failures.is_empty(),
            "fuzz {name}: {} failures, first: {}",
            self.failures.len(),
            self.failures[0]
        );
        let stepped = self.stepped() as f64 / self.cases.max(1) as f64;
        assert!(
            stepped >= min_stepped,
            "fuzz {name}: only {:.1}% of the cases built and stepped a world (at least {:.1}% expected): the fuzzer mostly exercises rejections",
            100.0 * stepped,
            100.0 * min_stepped
        );
    }
}

/// Seed and count of a run: `FUZZ_SEED` (default `default_seed`), `FUZZ_CASES`
/// (default `default_cases`); `FUZZ_CASE=i` runs case `i` alone.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// The run's seed.
    pub seed: u64,
    /// The first case.
    pub first: u64,
    /// Number of cases.
    pub cases: u64,
    /// A case taking longer than this is a hang.
    pub deadline: Duration,
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    match v.trim().parse() {
        Ok(x) => Some(x),
        Err(_) => panic!("{name}={v} is not a whole number"),
    }
}

impl Config {
    /// The configuration from the environment, with these defaults.
    pub fn from_env(default_seed: u64, default_cases: u64) -> Self {
        let seed = env_u64("FUZZ_SEED").unwrap_or(default_seed);
        let deadline = Duration::from_secs(env_u64("FUZZ_DEADLINE_S").unwrap_or(60));
        match env_u64("FUZZ_CASE") {
            Some(i) => Self {
                seed,
                first: i,
                cases: 1,
                deadline,
            },
            None => Self {
                seed,
                first: 0,
                cases: env_u64("FUZZ_CASES").unwrap_or(default_cases),
                deadline,
            },
        }
    }
}

/// The random source of case `case` of a run seeded `seed`.
pub fn case_rng(seed: u64, case: u64) -> StdRng {
    // SplitMix64 of the pair: nearby (seed, case) pairs give unrelated streams.
    let mut z = seed ^ case.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    StdRng::seed_from_u64(z ^ (z >> 31))
}

/// What a case's execution returns: its outcome, or a broken property.
pub type CaseResult = Result<Outcome, String>;

/// Runs `cfg.cases` cases: `generate` draws an input from the case's random source,
/// `execute` runs it (on a worker thread with a 2 MiB stack, the size of a spawned
/// thread's, under `catch_unwind`, within `cfg.deadline`).
pub fn run<I, Gen, Exec>(cfg: Config, mut generate: Gen, execute: Exec) -> Report
where
    I: Debug + Send + 'static,
    Gen: FnMut(&mut StdRng) -> I,
    Exec: Fn(&I) -> CaseResult + Send + Sync + 'static,
{
    let start = Instant::now();
    let mut report = Report::default();
    let (to_worker, inputs) = mpsc::channel::<I>();
    let (to_main, results) = mpsc::channel::<(Result<CaseResult, String>, Duration, I)>();
    let worker = std::thread::Builder::new()
        .name("fuzz-worker".into())
        .stack_size(2 << 20)
        .spawn(move || {
            for input in inputs {
                let t0 = Instant::now();
                let r = catch_unwind(AssertUnwindSafe(|| execute(&input))).map_err(|p| {
                    p.downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "(non-string panic payload)".into())
                });
                if to_main.send((r, t0.elapsed(), input)).is_err() {
                    return;
                }
            }
        })
        .expect("spawn the fuzz worker");
    for case in cfg.first..cfg.first + cfg.cases {
        let input = generate(&mut case_rng(cfg.seed, case));
        let shown = format!("{input:?}");
        to_worker.send(input).expect("the fuzz worker is alive");
        report.cases += 1;
        let fail = |what, message| Failure {
            seed: cfg.seed,
            case,
            what,
            message,
            input: shown.clone(),
        };
        match results.recv_timeout(cfg.deadline) {
            Ok((r, t, _)) => {
                if cfg.cases == 1 {
                    // A replayed case: show it.
                    println!("case {case} ({:.3} s): {r:?}\n{shown}", t.as_secs_f64());
                }
                if t > report.slowest.0 {
                    report.slowest = (t, case);
                }
                match r {
                    Ok(Ok(outcome)) => *report.outcomes.entry(outcome).or_default() += 1,
                    Ok(Err(property)) => report.failures.push(fail("property", property)),
                    Err(panic) => report.failures.push(fail("panic", panic)),
                }
            }
            Err(_) => {
                // The worker cannot be stopped: report and leave it behind.
                report.failures.push(fail(
                    "hang",
                    format!("no result within {} s", cfg.deadline.as_secs()),
                ));
                report.wall = start.elapsed();
                return report;
            }
        }
    }
    drop(to_worker);
    let _ = worker.join();
    report.wall = start.elapsed();
    report
}
