//! The 10-link limited hinge chain of `tests/joint/joint_chain.rs`, shared by the
//! `joint_chain` bench and the `chain_profile` example: links 0.1 × 0.02 × 0.02 m
//! (boxes) with masses alternating 1 kg and 1000 kg, revolute joints about z with ±30°
//! limits, released straight along x; Δt = 1/60 s, one substep, `iterations` per
//! substep; the hinges and limits in one direct group (ordered along the chain) if
//! `direct`, otherwise projected one after another by Gauss–Seidel.

use lie_xpbd::joint::{JointFrame, Revolute, RevoluteLimit};
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real};
use lie_xpbd::xpbd::{Body, SolverOptions, World};
use nalgebra::Vector3;

pub fn chain<T: Real, G: LieGroup<T>>(direct: bool, iterations: usize) -> World<T, G> {
    let options = SolverOptions {
        dt: c(1.0 / 60.0),
        iterations,
        ..SolverOptions::default()
    };
    let mut world = World::<T, G>::new(options).expect("valid options");
    let v = |x: f64, y: f64, z: f64| Vector3::<T>::new(c(x), c(y), c(z));
    let (a, b) = (0.1, 0.02);
    let plus = JointFrame::<T, G>::at(v(0.5 * a, 0.0, 0.0));
    let minus = JointFrame::<T, G>::at(v(-0.5 * a, 0.0, 0.0));
    let mut ids = Vec::new();
    let mut prev = None;
    for i in 0..10 {
        let m = [1.0, 1000.0][i % 2];
        let inertia = v(
            m * 2.0 * b * b / 12.0,
            m * (a * a + b * b) / 12.0,
            m * (a * a + b * b) / 12.0,
        );
        let body = Body::dynamic(
            c(m),
            inertia,
            v((i as f64 + 0.5) * a, 0.0, 0.0),
            G::identity(),
        )
        .expect("valid body");
        let id = world.add_body(body).expect("body added");
        let (b1, f1) = match prev {
            None => (None, JointFrame::identity()),
            Some(p) => (Some(p), plus),
        };
        let hinge = Revolute::new(b1, f1, Some(id), minus).expect("valid hinge");
        ids.push(world.add_constraint(hinge).expect("hinge added"));
        let limit = RevoluteLimit::new(
            b1,
            f1,
            Some(id),
            minus,
            c(-30f64.to_radians()),
            c(30f64.to_radians()),
        )
        .expect("valid limit");
        ids.push(world.add_constraint(limit).expect("limit added"));
        prev = Some(id);
    }
    if direct {
        world.add_direct_group(&ids).expect("a valid group");
    }
    world
}
