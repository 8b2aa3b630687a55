//! Cost of one time step of a world holding one Cosserat rod: finite-element rods
//! (`lie_xpbd::rod::FemRod`, the block-banded solve of paper Section 8.2) and the rigid
//! chain (`lie_xpbd::rod::RigidChainBuilder::build_system`, Section 6.2, its joints as
//! one block-banded system, as the experiments run it), one substep, one iteration,
//! undamped, rotation matrices. Every case runs 50 warm-up steps first (the rod is
//! moving, as in the experiments), then criterion times `World::step`.
//!
//! Criterion groups:
//! * `rod_step/<order>_<elements>`: the Section 9.2 cantilever (E = 5 MPa, ν = 0.4,
//!   diameter 0.1 m, L = 1 m, ρ = 1000 kg/m³, Δt = 5e-3 s, gravity −y, clamped at the
//!   start), f64: cubic 40 elements, quadratic 40, linear 160 (the paper's Table 2 sizes
//!   of the same order).
//! * `rod_scaling_<discretization>/step/<elements>`: the same cantilever from 100 to
//!   2,000 elements (rigid chain: joints, i.e. bodies − 1), f64, with throughput set to
//!   the element count. `benches/fit_rod_scaling.py` fits the exponent of time per step
//!   against element count from the estimates.
//! * `rod_scalar/<order>_1000/<f32|f64>`: the cantilever of 1,000 elements in both
//!   scalars; `rod_scalar/cubic_1000_quaternion/<f32|f64>` the cubic one with unit
//!   quaternions.
//! * `rod_spring/<discretization>_<elements>`: the Table 2 spring (Section 9.4): a
//!   helical steel spring (E = 60 GPa, ν = 0.3, ρ = 7650 kg/m³, wire diameter 0.01 m),
//!   15 coils of radius 0.1 m, rest length 1.4 m (wire length 9.53 m), no gravity,
//!   Δt = 5e-3 s, both ends clamped, the top end (and every node proportionally)
//!   pushed down by 0.1 m before the warm-up: rigid chain 120, linear 120 and 250,
//!   quadratic 66, cubic 40 elements. The finite-element rest state is the helix
//!   itself (rest curvature per Gauss point from the nodal frames; the Lagrange
//!   interpolation of the helix leaves a small rest shear), the rigid chain's its
//!   initial configuration (`RestShape::Initial`).
//!
//! Run with `cargo bench --bench rod -- --warm-up-time 1 --measurement-time 3` (a group
//! alone: append its name, e.g. `rod_spring`).

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput,
};
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Pose, SO3Matrix, UnitQuaternion};
use lie_xpbd::linalg::BandScalar;
use lie_xpbd::rod::{
    FemRod, Integration, RestShape, RigidChainBuilder, RodElement, RodMaterial, StraightRod,
};
use lie_xpbd::xpbd::{Body, SolverOptions, World};
use nalgebra::{Matrix3, Vector3};
use std::hint::black_box;

const WARM_UP_STEPS: usize = 50;
const SCALING_SIZES: [usize; 5] = [100, 200, 500, 1000, 2000];

fn options<T: BandScalar>(gravity: T) -> SolverOptions<T> {
    SolverOptions {
        dt: c(5e-3),
        gravity: Vector3::new(T::zero(), -gravity, T::zero()),
        ..SolverOptions::default()
    }
}

fn warm_up<T: BandScalar, G: LieGroup<T>>(mut world: World<T, G>) -> World<T, G> {
    for _ in 0..WARM_UP_STEPS {
        world.step().expect("no divergence");
    }
    // The rod moves (its projections succeed: a skipped solve would leave the
    // gravity-free spring still) and stays bounded.
    let speed = world
        .bodies()
        .iter()
        .map(|b| b.velocity.norm().to_f64())
        .fold(0.0, f64::max);
    assert!(
        speed > 1e-9 && speed < 100.0,
        "max node speed {speed:e} m/s"
    );
    if std::env::var_os("ROD_BENCH_VERBOSE").is_some() {
        eprintln!("after warm-up: max node speed {speed:e} m/s");
    }
    world
}

/// The Section 9.2 cantilever of `elements` elements with N nodes each, rotation
/// matrices.
fn cantilever<T: BandScalar, const N: usize>(elements: usize) -> World<T, SO3Matrix<T>> {
    cantilever_in::<T, SO3Matrix<T>, N>(elements)
}

/// [`cantilever`] in the rotation representation `G`.
fn cantilever_in<T: BandScalar, G: LieGroup<T>, const N: usize>(elements: usize) -> World<T, G> {
    let mut world = World::new(options(c(9.81))).expect("valid options");
    let material =
        RodMaterial::circular(c(5e6), c(0.4), c(1000.0), c(0.05)).expect("valid material");
    FemRod::<T, G, N>::add_straight(
        &mut world,
        &material,
        &StraightRod::cantilever(T::one(), elements),
    )
    .expect("rod");
    warm_up(world)
}

/// The Section 9.2 cantilever as a rigid chain of `joints` joints (joints + 1 bodies).
fn cantilever_chain(joints: usize) -> World<f64, SO3Matrix<f64>> {
    let mut world = World::new(options(9.81)).expect("valid options");
    let material = RodMaterial::circular(5e6, 0.4, 1000.0, 0.05).expect("valid material");
    RigidChainBuilder::<f64, SO3Matrix<f64>>::straight(
        material,
        Vector3::zeros(),
        Vector3::x(),
        1.0,
        joints + 1,
    )
    .expect("chain")
    .with_fixed_base(true)
    .build_system(&mut world, "chain")
    .expect("chain in the world");
    warm_up(world)
}

fn time_step<T: BandScalar, G: LieGroup<T>>(b: &mut criterion::Bencher, world: &mut World<T, G>) {
    b.iter(|| {
        world.step().expect("no divergence");
        black_box(&*world);
    })
}

/// Times `World::step` of the world `make` builds (and warms up), built only if
/// criterion's filter selects the benchmark, and only once.
fn bench_lazy<T: BandScalar, G: LieGroup<T>>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: BenchmarkId,
    make: impl Fn() -> World<T, G>,
) {
    let mut world = None;
    group.bench_function(id, |b| time_step(b, world.get_or_insert_with(&make)));
}

fn rod_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("rod_step");
    bench_lazy(&mut group, BenchmarkId::from_parameter("cubic_40"), || {
        cantilever::<f64, 4>(40)
    });
    bench_lazy(
        &mut group,
        BenchmarkId::from_parameter("quadratic_40"),
        || cantilever::<f64, 3>(40),
    );
    bench_lazy(
        &mut group,
        BenchmarkId::from_parameter("linear_160"),
        || cantilever::<f64, 2>(160),
    );
    group.finish();
}

fn scaling_fem<const N: usize>(c: &mut Criterion, name: &str) {
    let mut group = c.benchmark_group(format!("rod_scaling_{name}"));
    for n in SCALING_SIZES {
        group.throughput(Throughput::Elements(n as u64));
        bench_lazy(&mut group, BenchmarkId::new("step", n), || {
            cantilever::<f64, N>(n)
        });
    }
    group.finish();
}

fn rod_scaling(c: &mut Criterion) {
    let mut group = c.benchmark_group("rod_scaling_rigid_chain");
    for n in SCALING_SIZES {
        group.throughput(Throughput::Elements(n as u64));
        bench_lazy(&mut group, BenchmarkId::new("step", n), || {
            cantilever_chain(n)
        });
    }
    group.finish();
    scaling_fem::<2>(c, "linear");
    scaling_fem::<3>(c, "quadratic");
    scaling_fem::<4>(c, "cubic");
}

fn rod_scalar(c: &mut Criterion) {
    let mut group = c.benchmark_group("rod_scalar");
    bench_lazy(
        &mut group,
        BenchmarkId::from_parameter("cubic_1000/f64"),
        || cantilever::<f64, 4>(1000),
    );
    bench_lazy(
        &mut group,
        BenchmarkId::from_parameter("cubic_1000/f32"),
        || cantilever::<f32, 4>(1000),
    );
    bench_lazy(
        &mut group,
        BenchmarkId::from_parameter("cubic_1000_quaternion/f64"),
        || cantilever_in::<f64, UnitQuaternion<f64>, 4>(1000),
    );
    bench_lazy(
        &mut group,
        BenchmarkId::from_parameter("cubic_1000_quaternion/f32"),
        || cantilever_in::<f32, UnitQuaternion<f32>, 4>(1000),
    );
    bench_lazy(
        &mut group,
        BenchmarkId::from_parameter("quadratic_1000/f64"),
        || cantilever::<f64, 3>(1000),
    );
    bench_lazy(
        &mut group,
        BenchmarkId::from_parameter("quadratic_1000/f32"),
        || cantilever::<f32, 3>(1000),
    );
    bench_lazy(
        &mut group,
        BenchmarkId::from_parameter("linear_1000/f64"),
        || cantilever::<f64, 2>(1000),
    );
    bench_lazy(
        &mut group,
        BenchmarkId::from_parameter("linear_1000/f32"),
        || cantilever::<f32, 2>(1000),
    );
    group.finish();
}

/// The Table 2 spring (module docs).
struct Spring;

impl Spring {
    const COILS: f64 = 15.0;
    const COIL_RADIUS: f64 = 0.1;
    const REST_LENGTH: f64 = 1.4;
    const COMPRESSION: f64 = 0.1;

    fn material() -> RodMaterial<f64> {
        RodMaterial::circular(60e9, 0.3, 7650.0, 0.005).expect("valid material")
    }

    /// Wire length of the helix (m).
    fn wire_length() -> f64 {
        let turn = 2.0 * std::f64::consts::PI * Self::COIL_RADIUS;
        Self::COILS * (turn * turn + (Self::REST_LENGTH / Self::COILS).powi(2)).sqrt()
    }

    /// The centre-line point and director frame at arc length fraction t ∈ [0, 1]:
    /// d₃ the unit tangent, d₁ the inward normal (towards the axis), d₂ = d₃ × d₁.
    fn pose(t: f64) -> Pose<f64, SO3Matrix<f64>> {
        let phi = 2.0 * std::f64::consts::PI * Self::COILS * t;
        let (r, h) = (Self::COIL_RADIUS, Self::REST_LENGTH);
        let p = Vector3::new(r * phi.cos(), r * phi.sin(), h * t);
        let dphi = 2.0 * std::f64::consts::PI * Self::COILS;
        let d3 = Vector3::new(-r * dphi * phi.sin(), r * dphi * phi.cos(), h).normalize();
        let d1 = Vector3::new(-phi.cos(), -phi.sin(), 0.0);
        let d2 = d3.cross(&d1);
        let m = Matrix3::from_columns(&[d1, d2, d3]);
        Pose::new(p, SO3Matrix::from_matrix(&m).expect("orthonormal frame"))
    }

    /// The position pushed down: z scaled so that the top end moves by COMPRESSION.
    fn compressed(p: &Vector3<f64>) -> Vector3<f64> {
        Vector3::new(
            p.x,
            p.y,
            p.z * (1.0 - Self::COMPRESSION / Self::REST_LENGTH),
        )
    }

    /// A finite-element spring of `elements` elements with N nodes each.
    fn fem<const N: usize>(elements: usize) -> World<f64, SO3Matrix<f64>> {
        let mut world = World::new(options(0.0)).expect("valid options");
        let material = Self::material();
        let nodes = elements * (N - 1) + 1;
        let rest: Vec<_> = (0..nodes)
            .map(|k| Self::pose(k as f64 / (nodes - 1) as f64))
            .collect();
        let l = Self::wire_length() / elements as f64;
        let element =
            RodElement::<f64, N>::new(l, &material, Integration::Reduced).expect("element");
        let share = element.lumped_nodal_inertia(&material);
        let mut mass = vec![0.0; nodes];
        let mut inertia = vec![Vector3::zeros(); nodes];
        let mut elements_vec = Vec::with_capacity(elements);
        for e in 0..elements {
            let first = e * (N - 1);
            for (j, s) in share.iter().enumerate() {
                mass[first + j] += s.mass;
                inertia[first + j] += s.inertia;
            }
            let poses: [Pose<f64, SO3Matrix<f64>>; N] = std::array::from_fn(|j| rest[first + j]);
            elements_vec.push(element.with_rest_curvature(&poses).expect("rest curvature"));
        }
        let ids: Vec<_> = rest
            .iter()
            .enumerate()
            .map(|(k, pose)| {
                let p = Self::compressed(&pose.position);
                let body = if k == 0 || k + 1 == nodes {
                    Body::fixed(p, pose.rotation)
                } else {
                    Body::dynamic(mass[k], inertia[k], p, pose.rotation)
                };
                world
                    .add_body(body.expect("body"))
                    .expect("body in the world")
            })
            .collect();
        let rod =
            FemRod::<f64, SO3Matrix<f64>, N>::new("spring", ids, elements_vec, 0.0).expect("rod");
        world.add_system(rod).expect("rod in the world");
        warm_up(world)
    }

    /// A rigid-chain spring of `joints` joints.
    fn chain(joints: usize) -> World<f64, SO3Matrix<f64>> {
        let mut world = World::new(options(0.0)).expect("valid options");
        let poses: Vec<_> = (0..=joints)
            .map(|k| Self::pose(k as f64 / joints as f64))
            .collect();
        let chain = RigidChainBuilder::from_poses(Self::material(), poses)
            .expect("chain")
            .with_rest_shape(RestShape::Initial)
            .expect("rest shape")
            .with_fixed_base(true)
            .with_fixed_tip(true)
            .build_system(&mut world, "chain")
            .expect("chain in the world");
        for id in chain.bodies {
            let b = world.body_mut(id).expect("body");
            b.position = Self::compressed(&b.position);
        }
        warm_up(world)
    }
}

fn rod_spring(c: &mut Criterion) {
    let mut group = c.benchmark_group("rod_spring");
    bench_lazy(
        &mut group,
        BenchmarkId::from_parameter("rigid_chain_120"),
        || Spring::chain(120),
    );
    bench_lazy(
        &mut group,
        BenchmarkId::from_parameter("linear_120"),
        || Spring::fem::<2>(120),
    );
    bench_lazy(
        &mut group,
        BenchmarkId::from_parameter("linear_250"),
        || Spring::fem::<2>(250),
    );
    bench_lazy(
        &mut group,
        BenchmarkId::from_parameter("quadratic_66"),
        || Spring::fem::<3>(66),
    );
    bench_lazy(&mut group, BenchmarkId::from_parameter("cubic_40"), || {
        Spring::fem::<4>(40)
    });
    group.finish();
}

criterion_group!(benches, rod_step, rod_scaling, rod_scalar, rod_spring);
criterion_main!(benches);
