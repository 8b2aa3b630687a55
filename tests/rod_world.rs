use lie_xpbd::lie::{real::c, LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::rod::{FemRod, RodMaterial, StraightRod};
use lie_xpbd::xpbd::{SolverOptions, World};
use nalgebra::Vector3;

fn cantilever<T: Real, G: LieGroup<T>, const N: usize>(
    elements: usize,
    damping: f64,
    iterations: usize,
) -> (World<T, G>, Vec<lie_xpbd::xpbd::BodyId>) {
    let options = SolverOptions {
        dt: c(5e-3),
        iterations,
        ..SolverOptions::default()
    };
    let mut world = World::<T, G>::new(options).unwrap();
    let material = RodMaterial::circular(c(5e6), c(0.4), c(1000.0), c(0.05)).unwrap();
    let mut spec = StraightRod::cantilever(T::one(), elements);
    spec.damping = c(damping);
    let ids = FemRod::<T, G, N>::add_straight(&mut world, &material, &spec).unwrap();
    (world, ids.nodes)
}

fn explore<const N: usize>(elements: usize, damping: f64, iterations: usize) {
    let (mut w, nodes) = cantilever::<f64, SO3Matrix<f64>, N>(elements, damping, iterations);
    let tip = *nodes.last().unwrap();
    let t0 = std::time::Instant::now();
    let mut k = 0;
    loop {
        w.step().unwrap();
        k += 1;
        let vmax = w
            .bodies()
            .iter()
            .map(|b| b.velocity.norm())
            .fold(0.0, f64::max);
        if k % 2000 == 0 || vmax < 1e-11 || k > 200000 {
            let r = w.residuals();
            println!("N={N} n={elements} b={damping} it={iterations} step {k} tip {:?} vmax {vmax:e} res {:e} {:e}", w.body(tip).unwrap().position, r.primal, r.constraint);
        }
        if vmax < 1e-11 || k > 200000 {
            break;
        }
    }
    println!("  {:?} per step {:?}", t0.elapsed(), t0.elapsed() / k);
}

#[test]
fn explore_rest() {
    explore::<4>(5, 0.0, 1);
    explore::<4>(5, 0.05, 1);
    explore::<4>(5, 0.2, 1);
}
