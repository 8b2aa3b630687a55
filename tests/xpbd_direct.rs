//! scratch
use lie_xpbd::joint::{JointFrame, Revolute, RevoluteLimit};
use lie_xpbd::lie::{LieGroup, SO3Matrix};
use lie_xpbd::xpbd::{Body, ConstraintId, SolverOptions, World};
use nalgebra::Vector3;

fn pendulum(direct: bool, limit: bool, iterations: usize) -> World<f64, SO3Matrix<f64>> {
    let options = SolverOptions { iterations, ..SolverOptions::default() };
    let mut w = World::<f64, SO3Matrix<f64>>::new(options).unwrap();
    let r = SO3Matrix::exp(&Vector3::new(0.0, 0.0, 1.2));
    let jp = Vector3::new(0.0, 0.5, 0.0);
    let body = Body::dynamic(1.0, Vector3::new(0.02, 0.03, 0.04), -r.act(&jp), r).unwrap();
    let id = w.add_body(body).unwrap();
    let f = JointFrame::at(jp);
    let h = w.add_constraint(Revolute::new(None, JointFrame::identity(), Some(id), f).unwrap()).unwrap();
    let mut ids = vec![h];
    if limit {
        ids.push(w.add_constraint(RevoluteLimit::new(None, JointFrame::identity(), Some(id), f, -0.5, 0.5).unwrap()).unwrap());
    }
    if direct {
        w.add_direct_group(&ids).unwrap();
    }
    w
}

#[test]
fn scratch() {
    for limit in [false, true] {
        for it in [1, 3, 20] {
            let mut a = pendulum(false, limit, it);
            let mut b = pendulum(true, limit, it);
            for _ in 0..200 {
                a.step().unwrap();
                b.step().unwrap();
            }
            let pa = a.bodies()[0].position;
            let pb = b.bodies()[0].position;
            eprintln!("limit {limit} it {it}: gs {pa:?} direct {pb:?} diff {:e} lambda {:?} {:?}", (pa - pb).norm(), a.lambda(ConstraintId(1)), b.lambda(ConstraintId(1)));
        }
    }
}

#[test]
fn scratch2() {
    let mut a = pendulum(false, true, 3);
    let mut b = pendulum(true, true, 3);
    for s in 0..30 {
        a.step().unwrap();
        b.step().unwrap();
        let ang = |w: &World<f64, SO3Matrix<f64>>| w.bodies()[0].orientation.log().z;
        eprintln!("{s}: gs {:.5} λ {:?} direct {:.5} λ {:?} w {:.4} {:.4}", ang(&a), a.lambda(ConstraintId(1)).unwrap(), ang(&b), b.lambda(ConstraintId(1)).unwrap(), a.bodies()[0].angular_velocity.z, b.bodies()[0].angular_velocity.z);
    }
}
