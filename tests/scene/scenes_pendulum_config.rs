//! Validation of the pendulum scene's configuration: every bad field is a typed error
//! naming that field.

use lie_xpbd::lie::SO3Matrix;
use lie_xpbd::scenes::pendulum::{self, PendulumConfig};
use lie_xpbd::scenes::ScenarioError;

fn field_of(cfg: PendulumConfig) -> &'static str {
    match pendulum::build::<f64, SO3Matrix<f64>>(&cfg) {
        Err(ScenarioError::InvalidConfig { field, .. }) => field,
        Err(e) => panic!("expected InvalidConfig, got {e}"),
        Ok(_) => panic!("expected an error for {cfg:?}"),
    }
}

#[test]
fn huge_release_angle_is_rejected_by_name() {
    let d = PendulumConfig::default();
    for a in [1e160, -1e160, f64::NAN, f64::INFINITY, 3600.5] {
        assert_eq!(
            field_of(PendulumConfig {
                initial_angle_deg: a,
                ..d
            }),
            "angle"
        );
    }
    // Up to ten turns either way is accepted.
    for a in [-3600.0, 440.0, 3600.0] {
        pendulum::build::<f64, SO3Matrix<f64>>(&PendulumConfig {
            initial_angle_deg: a,
            ..d
        })
        .unwrap();
    }
}

#[test]
fn bad_durations_and_counts_are_rejected_by_name() {
    let d = PendulumConfig::default();
    assert_eq!(field_of(PendulumConfig { seconds: 0.0, ..d }), "seconds");
    assert_eq!(
        field_of(PendulumConfig {
            seconds: f64::NAN,
            ..d
        }),
        "seconds"
    );
    assert_eq!(field_of(PendulumConfig { dt: -1e-3, ..d }), "dt");
    assert_eq!(field_of(PendulumConfig { dt: 20.0, ..d }), "dt");
    assert_eq!(field_of(PendulumConfig { substeps: 0, ..d }), "substeps");
    assert_eq!(
        field_of(PendulumConfig { iterations: 0, ..d }),
        "iterations"
    );
}

#[test]
fn step_count_rounds_up_and_tolerates_round_off() {
    let d = PendulumConfig::default();
    assert_eq!(
        PendulumConfig {
            seconds: 0.0105,
            ..d
        }
        .steps(),
        11
    );
    assert_eq!(
        PendulumConfig {
            seconds: 0.3,
            dt: 0.1,
            ..d
        }
        .steps(),
        3
    );
    assert_eq!(
        PendulumConfig {
            seconds: 100.0,
            ..d
        }
        .steps(),
        100_000
    );
}
