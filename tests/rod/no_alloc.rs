//! Evaluating a rod element allocates nothing on the heap: the kinematics, the
//! interpolated pose and its gradient, the strains and their gradient and every
//! Gauss-point constraint are fixed-size values. Checked with a counting global
//! allocator for linear, quadratic and cubic elements in all four combinations of scalar
//! and representation.

use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Pose, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::rod::{Integration, RodElement, RodMaterial};
use nalgebra::Vector3;

use crate::alloc_counter;
use alloc_counter::allocations;

/// Allocations made by 100 evaluations of everything an element offers, on a bent and
/// twisted state, with the element and material built beforehand. Returns the count and
/// a checksum of the results (so the work cannot be optimised away).
fn element_allocations<T: Real, G: LieGroup<T>, const N: usize>() -> (u64, f64) {
    let material = RodMaterial::<T>::circular(c(5e6), c(0.4), c(1000.0), c(0.05)).unwrap();
    let element = RodElement::<T, N>::new(c(0.4), &material, Integration::Full)
        .unwrap()
        .with_precurvature(&Vector3::new(c(0.5), T::zero(), c(-0.2)))
        .unwrap();
    let nodes: [Pose<T, G>; N] = std::array::from_fn(|j| {
        let s = c::<T>(j as f64 / (N - 1) as f64);
        Pose::new(
            Vector3::new(s * c(0.1), s * s * c(0.05), s * c(0.4)),
            G::exp(&Vector3::new(s * c(1.2), s * c(-0.7), s * c(0.9))),
        )
    });
    let before = allocations();
    let mut checksum = T::zero();
    for i in 0..100 {
        let kin = element.kinematics(&nodes).unwrap();
        for k in 0..element.gauss_point_count() {
            let gp = element.gauss_point_constraint(&kin, k).unwrap();
            checksum += gp.value[3] + gp.gradient[N - 1][(4, 5)];
        }
        let xi = c::<T>(i as f64 / 99.0);
        let pg = kin.pose_gradient(xi).unwrap();
        let (x, dx) = kin
            .point_gradient(xi, &Vector3::new(c(0.01), T::zero(), T::zero()))
            .unwrap();
        let tg = kin.theta_gradient(xi).unwrap();
        let s = kin.strain_gradient(xi).unwrap();
        checksum +=
            pg.gradient[0][(3, 3)] + x[0] + dx[0][(0, 4)] + tg.theta[1] + s.strains.shear[2];
        let _ = element.lumped_nodal_inertia(&material);
    }
    (allocations() - before, checksum.to_f64())
}

fn check<T: Real, G: LieGroup<T>>() {
    for (n, (count, sum)) in [
        element_allocations::<T, G, 2>(),
        element_allocations::<T, G, 3>(),
        element_allocations::<T, G, 4>(),
    ]
    .into_iter()
    .enumerate()
    {
        assert!(sum.is_finite());
        assert_eq!(
            count,
            0,
            "{} nodes, {} {}: {count} allocations",
            n + 2,
            G::NAME,
            T::NAME
        );
    }
}

#[test]
fn rod_element_evaluation_does_not_allocate_matrix_f64() {
    check::<f64, SO3Matrix<f64>>();
}

#[test]
fn rod_element_evaluation_does_not_allocate_quaternion_f64() {
    check::<f64, UnitQuaternion<f64>>();
}

#[test]
fn rod_element_evaluation_does_not_allocate_matrix_f32() {
    check::<f32, SO3Matrix<f32>>();
}

#[test]
fn rod_element_evaluation_does_not_allocate_quaternion_f32() {
    check::<f32, UnitQuaternion<f32>>();
}
