//! [`RigidChainRod`]: a rigid chain's joints solved as one block-banded system per
//! iteration. The Section 9.2 cantilever (E = 5 MPa, ν = 0.4, d = 0.1 m, L = 1 m,
//! ρ = 1000 kg/m³, Δt = 5e-3 s, one iteration, Rayleigh damping 0.2 s) comes to rest
//! with one iteration per step, converges at second order to the finite-element
//! reference, agrees between representations and scalars, and allocates nothing in a
//! steady-state step.

use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::linalg::BandScalar;
use lie_xpbd::rod::{FemRod, RigidChainBuilder, RodError, RodMaterial, StraightRod};
use lie_xpbd::xpbd::{BodyId, SolverOptions, World};
use nalgebra::Vector3;

use crate::alloc_counter;
use alloc_counter::allocations;

fn material<T: Real>() -> RodMaterial<T> {
    RodMaterial::circular(c(5e6), c(0.4), c(1000.0), c(0.05)).unwrap()
}

fn options<T: Real>() -> SolverOptions<T> {
    SolverOptions {
        dt: c(5e-3),
        gravity: Vector3::new(T::zero(), c(-9.81), T::zero()),
        ..SolverOptions::default()
    }
}

/// A chain of `n` segments along x, base clamped, damped, as one system.
fn chain<T: BandScalar, G: LieGroup<T>>(n: usize) -> (World<T, G>, Vec<BodyId>) {
    let mut world = World::new(options()).unwrap();
    let ids = RigidChainBuilder::<T, G>::straight(
        material(),
        Vector3::zeros(),
        Vector3::x(),
        T::one(),
        n + 1,
    )
    .unwrap()
    .with_fixed_base(true)
    .with_damping([c(0.2); 6])
    .unwrap()
    .build_system(&mut world, "chain")
    .unwrap();
    assert_eq!(world.system_count(), 1);
    assert_eq!(world.constraint_count(), 0);
    (world, ids.bodies)
}

/// Steps until every velocity component stayed below `v_rest` for 200 steps.
fn settle<T: Real, G: LieGroup<T>>(world: &mut World<T, G>, v_rest: f64) -> usize {
    let mut quiet = 0;
    for k in 1..=20_000 {
        world.step().unwrap();
        let v = world
            .bodies()
            .iter()
            .map(|b| {
                b.velocity
                    .amax()
                    .to_f64()
                    .max(b.angular_velocity.amax().to_f64())
            })
            .fold(0.0, f64::max);
        quiet = if v < v_rest { quiet + 1 } else { 0 };
        if quiet >= 200 {
            return k;
        }
    }
    panic!("not at rest");
}

fn tip<T: BandScalar, G: LieGroup<T>>(n: usize) -> Vector3<f64> {
    let (mut w, bodies) = chain::<T, G>(n);
    settle(&mut w, if T::NAME == "f32" { 1e-4 } else { 1e-12 });
    w.body(*bodies.last().unwrap())
        .unwrap()
        .position
        .map(|x| x.to_f64())
}

/// Reference: the cubic fem rod of 40 elements (within ~1e-12 m of the converged tip,
/// `tests/rod/world.rs`).
fn reference() -> Vector3<f64> {
    let mut world = World::<f64, SO3Matrix<f64>>::new(options()).unwrap();
    let mut spec = StraightRod::cantilever(1.0, 40);
    spec.damping = 0.2;
    let ids =
        FemRod::<f64, SO3Matrix<f64>, 4>::add_straight(&mut world, &material(), &spec).unwrap();
    settle(&mut world, 1e-12);
    world.body(*ids.nodes.last().unwrap()).unwrap().position
}

/// With one iteration per step the banded chain reaches its discrete equilibrium (its
/// constraint residual (52) falls to round-off), and its tip error against the
/// continuum falls at second order: measured 2.84e-3, 6.81e-4, 1.69e-4 m for 5, 10, 20
/// segments (pairwise orders 2.06, 2.01).
#[test]
fn banded_chain_converges_at_second_order() {
    let r = reference();
    let errors: Vec<f64> = [5, 10, 20]
        .iter()
        .map(|&n| (tip::<f64, SO3Matrix<f64>>(n) - r).norm())
        .collect();
    println!("rigid chain tip errors (5, 10, 20 segments): {errors:?}");
    for w in errors.windows(2) {
        let order = (w[0] / w[1]).log2();
        assert!(order > 1.9 && order < 2.2, "order {order}");
    }
    assert!(errors[0] < 3e-3 && errors[0] > 2e-3, "{}", errors[0]);
    let (mut w, _) = chain::<f64, SO3Matrix<f64>>(10);
    w.step().unwrap();
    let first = w.residuals().constraint;
    settle(&mut w, 1e-12);
    let last = w.residuals().constraint;
    println!("constraint residual {first:e} → {last:e}");
    assert!(last < 1e-7 * first, "{first:e} → {last:e}");
}

/// Quaternions reach the matrix rest state to round-off; f32 to its resolution
/// (velocity floor ε|p|/h ≈ 1.2e-5 m/s: rest at 1e-4 m/s, within the amplitude
/// 1e-4/ω₁ ≈ 2e-5 m of such a motion; tolerance 5e-5 m).
#[test]
fn representations_and_scalars_agree() {
    let m = tip::<f64, SO3Matrix<f64>>(8);
    let q = tip::<f64, UnitQuaternion<f64>>(8);
    let f = tip::<f32, UnitQuaternion<f32>>(8);
    println!("matrix {m:?}, quaternion {q:?}, f32 {f:?}");
    assert!((m - q).norm() < 1e-11, "{:e}", (m - q).norm());
    assert!((m - f).norm() < 5e-5, "{:e}", (m - f).norm());
}

/// A steady-state step allocates nothing.
#[test]
fn chain_step_does_not_allocate() {
    fn count<T: BandScalar, G: LieGroup<T>>() -> u64 {
        let (mut w, _) = chain::<T, G>(6);
        for _ in 0..10 {
            w.step().unwrap();
        }
        let before = allocations();
        for _ in 0..100 {
            w.step().unwrap();
        }
        allocations() - before
    }
    assert_eq!(count::<f64, SO3Matrix<f64>>(), 0);
    assert_eq!(count::<f32, UnitQuaternion<f32>>(), 0);
}

/// Rows with different dampings are rejected (the banded velocity pass takes one b).
#[test]
fn mixed_damping_is_rejected() {
    let mut world = World::<f64, SO3Matrix<f64>>::new(options()).unwrap();
    let b = RigidChainBuilder::<f64, SO3Matrix<f64>>::straight(
        material(),
        Vector3::zeros(),
        Vector3::x(),
        1.0,
        4,
    )
    .unwrap()
    .with_damping([0.1, 0.1, 0.1, 0.2, 0.2, 0.2])
    .unwrap();
    assert!(matches!(
        b.build_system(&mut world, "c"),
        Err(RodError::InvalidDamping { row: 3, .. })
    ));
    assert!(world.bodies().is_empty());
}
