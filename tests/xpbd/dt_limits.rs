//! Regression tests for [`SolverOptions::validate`] on time steps too small for the
//! scalar type: a substep h = Δt/substeps whose 1/h² overflows (or that rounds to 0)
//! must be rejected up front with an error naming `dt`, not accepted and reported
//! later as a divergence.

use lie_xpbd::lie::{SO3Matrix, UnitQuaternion};
use lie_xpbd::xpbd::{SolverOptions, World, XpbdError};

fn options<T: lie_xpbd::lie::Real>(dt: f64, substeps: usize) -> SolverOptions<T> {
    SolverOptions {
        dt: lie_xpbd::lie::real::c(dt),
        substeps,
        ..SolverOptions::default()
    }
}

fn assert_dt_rejected<T: lie_xpbd::lie::Real>(o: &SolverOptions<T>) {
    match o.validate() {
        Err(XpbdError::InvalidOption { name: "dt", .. }) => {}
        other => panic!(
            "dt = {} with {} substeps: expected a dt error, got {other:?}",
            o.dt, o.substeps
        ),
    }
}

#[test]
fn f32_dt_whose_inverse_square_overflows_is_rejected() {
    // h = 5e-20 s: h² = 2.5e-39 (subnormal), 1/h² = 4e38 > f32::MAX = 3.4e38.
    let o = options::<f32>(5e-20, 1);
    assert!((1.0f32 / (o.dt * o.dt)).is_infinite());
    assert_dt_rejected(&o);
    let err = World::<f32, SO3Matrix<f32>>::new(o)
        .err()
        .expect("rejected");
    assert!(err.to_string().contains("dt"), "{err}");
}

#[test]
fn f32_dt_whose_substep_inverse_square_overflows_is_rejected() {
    // Δt = 1e-15 s is fine on its own, but h = Δt/1e5 = 1e-20 s is not.
    assert!(options::<f32>(1e-15, 1).validate().is_ok());
    assert_dt_rejected(&options::<f32>(1e-15, 100_000));
    assert!(World::<f32, UnitQuaternion<f32>>::new(options(1e-15, 100_000)).is_err());
}

#[test]
fn f32_smallest_positive_dt_is_rejected() {
    // The smallest subnormal: h² rounds to 0.
    let o = SolverOptions::<f32> {
        dt: f32::from_bits(1),
        ..SolverOptions::default()
    };
    assert_dt_rejected(&o);
}

#[test]
fn f64_dt_whose_inverse_square_overflows_is_rejected() {
    assert_dt_rejected(&options::<f64>(5e-155, 1));
    assert_dt_rejected(&options::<f64>(1e-150, 1_000_000));
    // The same Δt that f32 rejects is fine in f64.
    assert!(options::<f64>(5e-20, 1).validate().is_ok());
}

#[test]
fn dt_just_above_the_f32_limit_is_accepted_and_steps() {
    // h = 1e-19 s: 1/h² = 1e38 < f32::MAX; a world with a body steps without diverging.
    let o = options::<f32>(1e-19, 1);
    assert!(o.validate().is_ok());
    let mut w = World::<f32, SO3Matrix<f32>>::new(o).unwrap();
    let b = lie_xpbd::xpbd::Body::dynamic(
        1.0,
        nalgebra::Vector3::repeat(0.1),
        nalgebra::Vector3::zeros(),
        <SO3Matrix<f32> as lie_xpbd::lie::LieGroup<f32>>::identity(),
    )
    .unwrap();
    w.add_body(b).unwrap();
    for _ in 0..10 {
        w.step().unwrap();
    }
}
