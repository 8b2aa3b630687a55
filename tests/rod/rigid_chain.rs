//! The rigid-chain Cosserat rod (paper Section 6.2, (89)–(94), Appendix F.4–F.5):
//! gradient of the joint constraint against finite differences in all four combinations
//! SO3Matrix/UnitQuaternion × f32/f64, values at known states, the builder (masses,
//! inertias, frames, rest shapes, errors), and a cantilever under gravity against the
//! geometrically exact continuum solution.
//!
//! # Gradient tolerance
//! [`check_gradient`] / [`check_gradient_perturbed`] with their own step and tolerance
//! ([`Real::fd_step`]: 1e-5 in f64, 1e-3 in f32; [`Real::fd_tolerance`]: 1e-7 in f64,
//! 2e-3 in f32, on `max|J − J_fd| / max(1, max|J|)`), unchanged. The states keep every
//! body within 1 m of the origin (so the tolerance is not scaled) and every relative
//! rotation ψ = Rⱼ₊₁ ⊟ Rⱼ at most 2 rad, perturbed by at most 0.5 rad per body, hence
//! |ψ| ≤ 3 rad < π − 0.1: one side of Log's branch cut. The gradient entries are O(1/l)
//! (l = 0.1 m and 0.5 m here), and the metric is relative to the largest one.
//!
//! # Cantilever
//! The large-deflection cantilever of Section 9.2: E = 5 MPa, ν = 0.5 (κ = 0.9 by (126)),
//! diameter 0.1 m, L = 1 m, ρ = 1000 kg/m³, g = 9.81 m/s², clamped (fixed base body)
//! with its axis along world x, gravity along −y. The reference is the geometrically
//! exact, extensible and shearable planar Cosserat rod with the same stiffnesses
//! (87)–(88), solved by shooting on the base moment (RK4, 4000 steps, bisection): tip
//! (0.925498, −0.355301) m. (Linear Euler–Bernoulli gives a deflection qL⁴/(8EI) =
//! 0.392 m, Timoshenko adds qL²/(2κGA) = 0.0033 m: the deflection is large enough for
//! the geometric stiffening to matter, 10 %.) For a stiffer rod (E = 500 MPa) the
//! reference agrees with Timoshenko's formula, which checks the reference itself.

use lie_xpbd::joint::{Fixed, JointFrame};
use lie_xpbd::lie::numdiff::{self, Pose};
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::rod::{
    rigid_chain_strain_gradient, EndInertia, Integration, RestShape, RigidChainBuilder,
    RigidChainConstraint, RodElement, RodError, RodMaterial,
};
use lie_xpbd::xpbd::{
    check_gradient, check_gradient_perturbed, Body, BodyId, Constraint, ConstraintEval, SolveMode,
    SolverOptions, World, XpbdError,
};
use nalgebra::{DMatrix, DVector, Vector3};
use rand::rngs::StdRng;
use rand::SeedableRng;

type M64 = SO3Matrix<f64>;
type Q64 = UnitQuaternion<f64>;
type M32 = SO3Matrix<f32>;
type Q32 = UnitQuaternion<f32>;

fn v<T: Real>(x: f64, y: f64, z: f64) -> Vector3<T> {
    Vector3::new(c(x), c(y), c(z))
}

/// The Section 9.2 rod (ν = 0.5).
fn material<T: Real>() -> RodMaterial<T> {
    RodMaterial::circular(c(5e6), c(0.5), c(1000.0), c(0.05)).unwrap()
}

fn body<T: Real, G: LieGroup<T>>(position: Vector3<T>, orientation: G) -> Body<T, G> {
    Body::dynamic(c(1.0), v(0.02, 0.03, 0.04), position, orientation).unwrap()
}

// =======================================================================================
// Gradient (175)–(179)
// =======================================================================================

/// One pair of bodies (j, j + 1): (label, p_j, rotation vector of R_j,
/// p_{j+1} − p_j in the frame of R_j, ψ = R_{j+1} ⊟ R_j); m and rad.
type State = (&'static str, [f64; 3], [f64; 3], [f64; 3], [f64; 3]);

/// The states of the gradient checks for rest length `l`.
fn states(l: f64) -> Vec<State> {
    vec![
        ("straight", [0.0; 3], [0.0; 3], [0.0, 0.0, l], [0.0; 3]),
        (
            "straight, tilted",
            [0.2, -0.1, 0.3],
            [0.4, -0.7, 0.2],
            [0.0; 3],
            [0.0; 3],
        ),
        (
            "bent about d1",
            [0.1, 0.2, -0.1],
            [0.3, 0.1, -0.2],
            [0.0; 3],
            [0.5, 0.0, 0.0],
        ),
        (
            "bent about d2, large",
            [0.0; 3],
            [-0.2, 0.5, 0.1],
            [0.0; 3],
            [0.0, 1.9, 0.0],
        ),
        (
            "twisted",
            [0.3, 0.0, 0.1],
            [0.0, 0.0, 1.1],
            [0.0; 3],
            [0.0, 0.0, 1.0],
        ),
        (
            "twisted, large",
            [0.0; 3],
            [0.6, 0.2, -0.4],
            [0.0; 3],
            [0.0, 0.0, -2.0],
        ),
        (
            "bent and twisted",
            [0.1, -0.3, 0.2],
            [1.0, -0.5, 0.8],
            [0.0; 3],
            [0.7, -0.9, 1.2],
        ),
        (
            "tiny relative rotation",
            [0.0; 3],
            [0.2, 0.3, 0.4],
            [0.0; 3],
            [1e-7, -2e-7, 1e-7],
        ),
        (
            "sheared and stretched",
            [0.2, 0.1, 0.0],
            [0.1, 0.2, 0.3],
            [0.3 * l, -0.2 * l, 1.4 * l],
            [0.3, 0.2, -0.4],
        ),
    ]
}

/// The two bodies of one state. A zero `d` means "along d₃ of the average frame, length
/// l", i.e. the rest length along the rod.
fn pair<T: Real, G: LieGroup<T>>(l: f64, (_, p, r, d, psi): State) -> [Body<T, G>; 2] {
    let r0 = G::exp(&v(r[0], r[1], r[2]));
    let r1 = r0.boxplus(&v(psi[0], psi[1], psi[2]));
    let p0 = v::<T>(p[0], p[1], p[2]);
    let d = if d == [0.0; 3] {
        // Half-way rotation: d along its d₃.
        r0.boxplus(&v(psi[0] / 2.0, psi[1] / 2.0, psi[2] / 2.0))
            .act(&v(0.0, 0.0, l))
    } else {
        r0.act(&v(d[0], d[1], d[2]))
    };
    [body(p0, r0), body(p0 + d, r1)]
}

fn gradient_cases<T: Real, G: LieGroup<T>>() -> f64 {
    let mut rng = StdRng::seed_from_u64(17);
    let mut worst = 0.0f64;
    for l in [0.1, 0.5] {
        let joint = RigidChainConstraint::new(BodyId(0), BodyId(1), c::<T>(l), &material())
            .unwrap()
            .with_precurvature(&v(0.5, -1.0, 0.25))
            .unwrap()
            .with_rest_shear(&v(0.01, 0.0, 0.98))
            .unwrap();
        for s in states(l) {
            let bodies = pair::<T, G>(l, s);
            let report = check_gradient(&joint, &bodies).unwrap();
            assert!(report.passed(), "{} l = {l}: {report}", s.0);
            worst = worst.max(report.worst_relative_error);
            let report = check_gradient_perturbed(&joint, &bodies, &mut rng, 8, 0.05, 0.5).unwrap();
            assert!(report.passed(), "{} l = {l}, perturbed: {report}", s.0);
            worst = worst.max(report.worst_relative_error);
            // The body order reversed is the joint of the other direction along the rod.
            let reversed =
                RigidChainConstraint::new(BodyId(1), BodyId(0), c::<T>(l), &material()).unwrap();
            let report = check_gradient(&reversed, &bodies).unwrap();
            assert!(report.passed(), "{} l = {l}, reversed: {report}", s.0);
            worst = worst.max(report.worst_relative_error);
        }
    }
    eprintln!(
        "rigid-chain gradient {} {}: worst relative error {worst:.3e} (tolerance {:.0e})",
        G::NAME,
        T::NAME,
        T::fd_tolerance().to_f64()
    );
    worst
}

#[test]
fn rigid_chain_gradient_matrix_f64() {
    gradient_cases::<f64, M64>();
}

#[test]
fn rigid_chain_gradient_quaternion_f64() {
    gradient_cases::<f64, Q64>();
}

#[test]
fn rigid_chain_gradient_matrix_f32() {
    gradient_cases::<f32, M32>();
}

#[test]
fn rigid_chain_gradient_quaternion_f32() {
    gradient_cases::<f32, Q32>();
}

/// The free function against central differences of boxplus perturbations of both
/// poses directly ([`numdiff::poses_to_vector`]), and equal to what the constraint
/// writes.
fn free_function<T: Real, G: LieGroup<T>>() {
    let l = 0.2;
    for s in states(l) {
        let bodies = pair::<T, G>(l, s);
        let poses = [bodies[0].pose(), bodies[1].pose()];
        let g = rigid_chain_strain_gradient(&poses[0], &poses[1], c::<T>(l)).unwrap();
        let f = |ps: &[Pose<T, G>]| {
            let s = rigid_chain_strain_gradient(&ps[0], &ps[1], c::<T>(l)).unwrap();
            let x = s.strains.shear;
            let u = s.strains.curvature;
            DVector::from_column_slice(&[x.x, x.y, x.z, u.x, u.y, u.z])
        };
        let fd = numdiff::poses_to_vector(f, &poses, T::fd_step());
        let mut analytic = DMatrix::<T>::zeros(6, 12);
        analytic.view_mut((0, 0), (6, 6)).copy_from(&g.gradient[0]);
        analytic.view_mut((0, 6), (6, 6)).copy_from(&g.gradient[1]);
        let err = numdiff::max_relative_error(&analytic, &fd).to_f64();
        assert!(err < T::fd_tolerance().to_f64(), "{}: {err:e}", s.0);
        let joint =
            RigidChainConstraint::new(BodyId(0), BodyId(1), c::<T>(l), &material()).unwrap();
        let mut out = ConstraintEval::default();
        Constraint::<T, G>::evaluate(&joint, &bodies, &mut out);
        for k in 0..2 {
            assert_eq!(out.gradient[k], g.gradient[k]);
        }
        let strains = joint.strains(&bodies).unwrap();
        assert_eq!(strains, g.strains);
    }
}

#[test]
fn rigid_chain_strain_gradient_fd_all_representations() {
    free_function::<f64, M64>();
    free_function::<f64, Q64>();
    free_function::<f32, M32>();
    free_function::<f32, Q32>();
}

/// Matrices and quaternions give the same values and gradients (to round-off).
#[test]
fn matrix_and_quaternion_agree() {
    let l = 0.1;
    let joint = RigidChainConstraint::new(BodyId(0), BodyId(1), l, &material()).unwrap();
    for s in states(l) {
        let bm = pair::<f64, M64>(l, s);
        let bq = pair::<f64, Q64>(l, s);
        let (mut om, mut oq) = (ConstraintEval::default(), ConstraintEval::default());
        Constraint::<f64, M64>::evaluate(&joint, &bm, &mut om);
        Constraint::<f64, Q64>::evaluate(&joint, &bq, &mut oq);
        assert!((om.value - oq.value).abs().max() < 1e-12, "{}", s.0);
        for k in 0..2 {
            assert!(
                (om.gradient[k] - oq.gradient[k]).abs().max() < 1e-10,
                "{}",
                s.0
            );
        }
    }
}

// =======================================================================================
// Values, compliance, energy
// =======================================================================================

/// A straight, unstressed rod built in any direction gives C = 0 at every joint, in
/// all four combinations.
fn straight_is_unstressed<T: Real, G: LieGroup<T>>(tol: f64) {
    for dir in [v::<T>(1.0, 0.0, 0.0), v(0.0, 0.0, -1.0), v(0.3, -0.8, 0.5)] {
        let rod =
            RigidChainBuilder::<T, G>::straight(material(), v(0.1, 0.2, -0.3), dir, c(1.0), 7)
                .unwrap()
                .with_normal(v(0.0, 1.0, 1.0))
                .unwrap();
        let mut world = World::<T, G>::new(SolverOptions::default()).unwrap();
        let chain = rod.build(&mut world).unwrap();
        let mut out = ConstraintEval::default();
        for &id in &chain.constraints {
            out.clear();
            world
                .constraint(id)
                .unwrap()
                .evaluate(world.bodies(), &mut out);
            let worst = out
                .value
                .iter()
                .map(|x| x.to_f64().abs())
                .fold(0.0, f64::max);
            assert!(worst <= tol, "{} {}: |C| = {worst:e}", G::NAME, T::NAME);
        }
    }
}

#[test]
fn straight_rod_has_zero_constraint() {
    // C is O(ε/l) of round-off: the strains are |d|/l and ψ/l with l = 1/6 m.
    straight_is_unstressed::<f64, M64>(1e-14);
    straight_is_unstressed::<f64, Q64>(1e-14);
    straight_is_unstressed::<f32, M32>(2e-6);
    straight_is_unstressed::<f32, Q32>(2e-6);
}

/// A planar turn by φ between two bodies whose positions lie on the chord of length
/// l, symmetric about both tangents: (89) averages the two matrices and gives
/// v = cos(φ/2) e₃ (the average frame's d₃ is shortened), (90) gives u = φ/l about d₁.
/// The linear finite element (110) interpolates on SO(3) and gives v = e₃ exactly; the
/// two differ at O(φ²), which is the paper's point about the rigid chain.
#[test]
fn matrix_average_shortens_the_chord() {
    let l = 0.25;
    let material = material::<f64>();
    for phi in [0.1f64, 0.5, 1.5] {
        let r0 = M64::exp(&Vector3::new(-phi / 2.0, 0.0, 0.0));
        let r1 = M64::exp(&Vector3::new(phi / 2.0, 0.0, 0.0));
        let a = Pose::new(Vector3::new(0.3, 0.1, 0.0), r0);
        let b = Pose::new(a.position + Vector3::new(0.0, 0.0, l), r1);
        let s = rigid_chain_strain_gradient(&a, &b, l).unwrap().strains;
        approx::assert_relative_eq!(s.shear, Vector3::z() * (phi / 2.0).cos(), epsilon = 1e-14);
        approx::assert_relative_eq!(s.curvature, Vector3::x() * (phi / l), epsilon = 1e-13);
        let element = RodElement::<f64, 2>::new(l, &material, Integration::Reduced).unwrap();
        let fe = element
            .gauss_point_constraint(&element.kinematics(&[a, b]).unwrap(), 0)
            .unwrap();
        assert!(fe.value.fixed_rows::<3>(0).norm() < 1e-14, "{}", fe.value);
        approx::assert_relative_eq!(
            fe.value.fixed_rows::<3>(3).into_owned(),
            s.curvature,
            epsilon = 1e-12
        );
        let gap = 1.0 - s.shear.z;
        approx::assert_relative_eq!(gap, phi * phi / 8.0, max_relative = phi * phi / 10.0);
    }
}

/// Compliance (94) and the joint energy ½Cᵀα⁻¹C = the joint's terms of (91)–(92).
#[test]
fn compliance_and_energy_are_eq_94_and_91_92() {
    let l = 0.1;
    let m = material::<f64>();
    let joint = RigidChainConstraint::new(BodyId(0), BodyId(1), l, &m)
        .unwrap()
        .with_precurvature(&Vector3::new(0.2, 0.0, -0.1))
        .unwrap();
    let kv = m.shear_stiffness();
    let ku = m.bending_stiffness();
    let alpha = Constraint::<f64, M64>::compliance;
    for k in 0..3 {
        approx::assert_relative_eq!(
            alpha(&joint, k),
            1.0 / (l * kv[(k, k)]),
            max_relative = 1e-15
        );
        approx::assert_relative_eq!(
            alpha(&joint, k + 3),
            1.0 / (l * ku[(k, k)]),
            max_relative = 1e-15
        );
    }
    assert_eq!(alpha(&joint, 6), 0.0);
    let bodies = pair::<f64, M64>(l, states(l)[8]);
    let s = joint.strains(&bodies).unwrap();
    let dv = s.shear - Vector3::z();
    let du = s.curvature - joint.precurvature();
    let expect = 0.5 * l * (dv.transpose() * kv * dv)[0] + 0.5 * l * (du.transpose() * ku * du)[0];
    approx::assert_relative_eq!(
        joint.elastic_energy(&bodies).unwrap(),
        expect,
        max_relative = 1e-12
    );
    // Row values: C = (v − e₃, u − u*).
    let mut out = ConstraintEval::default();
    Constraint::<f64, M64>::evaluate(&joint, &bodies, &mut out);
    for k in 0..3 {
        assert_eq!(out.value[k], dv[k]);
        assert_eq!(out.value[k + 3], du[k]);
    }
}

// =======================================================================================
// Builder
// =======================================================================================

#[test]
fn builder_masses_and_inertias_follow_section_6_2() {
    let m = material::<f64>();
    let n = 6;
    let l = 1.0 / 5.0;
    let rho_a = m.mass_per_length();
    let rho_j = m.rotational_inertia_per_length();
    for rule in [
        EndInertia::ParallelAxis,
        EndInertia::AsPrinted,
        EndInertia::Lumped,
    ] {
        let rod =
            RigidChainBuilder::<f64, M64>::straight(m, Vector3::zeros(), Vector3::x(), 1.0, n)
                .unwrap()
                .with_end_inertia(rule);
        let inertias = rod.body_inertias();
        assert_eq!(inertias.len(), n);
        let total: f64 = inertias.iter().map(|i| i.mass).sum();
        approx::assert_relative_eq!(total, rho_a * 1.0, max_relative = 1e-14);
        for i in &inertias[1..n - 1] {
            approx::assert_relative_eq!(i.mass, rho_a * l, max_relative = 1e-14);
            approx::assert_relative_eq!(i.inertia, rho_j * l, max_relative = 1e-14);
        }
        let l_end = l / 2.0;
        let m_end = rho_a * l_end;
        let extra = match rule {
            EndInertia::ParallelAxis => Vector3::new(1.0, 1.0, 0.0) * (m_end * l_end * l_end / 4.0),
            EndInertia::AsPrinted => Vector3::new(0.0, m_end * l_end * l_end, 0.0),
            EndInertia::Lumped => Vector3::zeros(),
        };
        for i in [inertias[0], inertias[n - 1]] {
            approx::assert_relative_eq!(i.mass, m_end, max_relative = 1e-14);
            approx::assert_relative_eq!(i.inertia, rho_j * l_end + extra, max_relative = 1e-14);
        }
        let mut world = World::<f64, M64>::new(SolverOptions::default()).unwrap();
        let built = rod.build(&mut world);
        match rule {
            // l_end = 0.1 m > r/√2 = 0.035 m: the printed end inertia is not a rigid
            // body's (𝓘₂ > 𝓘₁ + 𝓘₃), and the world says so without changing.
            EndInertia::AsPrinted => {
                assert!(
                    matches!(
                        built,
                        Err(RodError::World(XpbdError::NonPhysicalInertia { .. }))
                    ),
                    "{built:?}"
                );
                assert_eq!((world.bodies().len(), world.constraint_count()), (0, 0));
            }
            _ => {
                let chain = built.unwrap();
                for (j, &id) in chain.bodies.iter().enumerate() {
                    let b = world.body(id).unwrap();
                    approx::assert_relative_eq!(b.mass(), inertias[j].mass);
                    approx::assert_relative_eq!(
                        b.position,
                        Vector3::x() * (l * j as f64),
                        epsilon = 1e-15
                    );
                }
            }
        }
    }
    // Fine enough (l_end ≤ r/√2) the printed end inertia is accepted.
    let fine = RigidChainBuilder::<f64, M64>::straight(m, Vector3::zeros(), Vector3::x(), 1.0, 16)
        .unwrap()
        .with_end_inertia(EndInertia::AsPrinted);
    let mut world = World::<f64, M64>::new(SolverOptions::default()).unwrap();
    fine.build(&mut world).unwrap();
}

/// A polyline: rest lengths are the segment lengths, d₃ is the tangent (bisector
/// inside), frames are parallel-transported (no twist, u₃ = 0), masses are half the
/// adjacent segments; with the initial shape as rest shape every C is 0.
#[test]
fn polyline_frames_and_rest_shape() {
    let m = material::<f64>();
    let points = [
        Vector3::new(0.0, 0.0, 0.0),
        Vector3::new(0.2, 0.0, 0.0),
        Vector3::new(0.35, 0.1, 0.05),
        Vector3::new(0.4, 0.3, 0.1),
        Vector3::new(0.3, 0.45, 0.3),
    ];
    let rod = RigidChainBuilder::<f64, Q64>::polyline(m, &points).unwrap();
    let poses = rod.poses();
    let lengths = rod.rest_lengths();
    for j in 0..points.len() - 1 {
        approx::assert_relative_eq!(
            lengths[j],
            (points[j + 1] - points[j]).norm(),
            max_relative = 1e-15
        );
    }
    for (j, pose) in poses.iter().enumerate() {
        let seg = |k: usize| (points[k + 1] - points[k]).normalize();
        let t = if j == 0 {
            seg(0)
        } else if j == points.len() - 1 {
            seg(j - 1)
        } else {
            (seg(j - 1) + seg(j)).normalize()
        };
        approx::assert_relative_eq!(pose.rotation.act(&Vector3::z()), t, epsilon = 1e-14);
        approx::assert_relative_eq!(pose.position, points[j]);
    }
    let inertias = rod.body_inertias();
    approx::assert_relative_eq!(
        inertias[2].mass,
        m.mass_per_length() * (lengths[1] + lengths[2]) / 2.0,
        max_relative = 1e-14
    );
    let total: f64 = inertias.iter().map(|i| i.mass).sum();
    approx::assert_relative_eq!(
        total,
        m.mass_per_length() * lengths.iter().sum::<f64>(),
        max_relative = 1e-14
    );
    // Parallel transport: no twist in the relative rotations.
    let bodies: Vec<Body<f64, Q64>> = poses.iter().map(|p| body(p.position, p.rotation)).collect();
    for k in rod.constraints(0).unwrap() {
        assert!(k.strains(&bodies).unwrap().curvature.z.abs() < 1e-13);
    }
    // Rest shape = initial shape: C = 0; straight rest shape: C ≠ 0.
    for (rest, zero) in [(RestShape::Initial, true), (RestShape::Straight, false)] {
        let rod = rod.clone().with_rest_shape(rest).unwrap();
        let mut world = World::<f64, Q64>::new(SolverOptions::default()).unwrap();
        let chain = rod.build(&mut world).unwrap();
        let mut worst = 0.0f64;
        let mut out = ConstraintEval::default();
        for &id in &chain.constraints {
            out.clear();
            world
                .constraint(id)
                .unwrap()
                .evaluate(world.bodies(), &mut out);
            worst = worst.max(out.value.abs().max());
        }
        assert_eq!(worst < 1e-13, zero, "{worst:e}");
    }
}

/// Precurvature: a straight rod with u* gives C = (0, −u*) per joint; a per-joint list
/// is taken joint by joint. `with_normal` turns d₁ of body 0 onto the projected normal.
#[test]
fn precurvature_and_normal() {
    let m = material::<f64>();
    let u = Vector3::new(0.5, -0.2, 1.0);
    let rod = RigidChainBuilder::<f64, M64>::straight(
        m,
        Vector3::zeros(),
        Vector3::new(0.0, 1.0, 0.0),
        0.8,
        5,
    )
    .unwrap()
    .with_normal(Vector3::new(1.0, 0.3, 1.0))
    .unwrap();
    let d1 = rod.poses()[0].rotation.act(&Vector3::x());
    approx::assert_relative_eq!(d1, Vector3::new(1.0, 0.0, 1.0).normalize(), epsilon = 1e-15);
    let list: Vec<Vector3<f64>> = (0..4).map(|j| u * j as f64).collect();
    for (rest, expect) in [
        (RestShape::UniformPrecurvature(u), vec![u; 4]),
        (RestShape::Precurvature(list.clone()), list.clone()),
    ] {
        let rod = rod.clone().with_rest_shape(rest).unwrap();
        let mut world = World::<f64, M64>::new(SolverOptions::default()).unwrap();
        let chain = rod.build(&mut world).unwrap();
        let mut out = ConstraintEval::default();
        for (j, &id) in chain.constraints.iter().enumerate() {
            out.clear();
            world
                .constraint(id)
                .unwrap()
                .evaluate(world.bodies(), &mut out);
            assert!(out.value.fixed_rows::<3>(0).norm() < 1e-14);
            approx::assert_relative_eq!(
                out.value.fixed_rows::<3>(3).into_owned(),
                -expect[j],
                epsilon = 1e-13
            );
        }
    }
}

#[test]
fn builder_rejects_bad_input() {
    let m = material::<f64>();
    type B = RigidChainBuilder<f64, M64>;
    let (o, x) = (Vector3::zeros(), Vector3::x());
    assert_eq!(
        B::straight(m, o, x, 1.0, 1).unwrap_err(),
        RodError::TooFewBodies { count: 1, min: 2 }
    );
    assert!(matches!(
        B::straight(m, o, x, 0.0, 5),
        Err(RodError::InvalidLength { .. })
    ));
    assert!(matches!(
        B::straight(m, o, x, f64::NAN, 5),
        Err(RodError::InvalidLength { .. })
    ));
    assert!(matches!(
        B::straight(m, o, Vector3::zeros(), 1.0, 5),
        Err(RodError::InvalidDirection {
            what: "direction",
            ..
        })
    ));
    assert!(matches!(
        B::straight(m, o, Vector3::new(f64::NAN, 0.0, 0.0), 1.0, 5),
        Err(RodError::InvalidDirection { .. })
    ));
    assert!(matches!(
        B::straight(m, Vector3::new(0.0, f64::INFINITY, 0.0), x, 1.0, 5),
        Err(RodError::NonFinite { .. })
    ));
    let rod = B::straight(m, o, x, 1.0, 5).unwrap();
    assert!(matches!(
        rod.clone().with_normal(x * 2.0),
        Err(RodError::InvalidDirection { what: "normal", .. })
    ));
    assert!(matches!(
        rod.clone().with_normal(Vector3::zeros()),
        Err(RodError::InvalidDirection { .. })
    ));
    assert_eq!(
        rod.clone()
            .with_rest_shape(RestShape::Precurvature(vec![Vector3::zeros(); 3]))
            .unwrap_err(),
        RodError::CountMismatch {
            what: "precurvature",
            given: 3,
            expected: 4
        }
    );
    let mut bad = vec![Vector3::zeros(); 4];
    bad[2].y = f64::NAN;
    assert_eq!(
        rod.clone()
            .with_rest_shape(RestShape::Precurvature(bad))
            .unwrap_err(),
        RodError::NonFinite {
            what: "precurvature",
            index: 2
        }
    );
    assert_eq!(
        rod.clone()
            .with_damping([0.0, 0.0, -1.0, 0.0, 0.0, 0.0])
            .unwrap_err(),
        RodError::InvalidDamping {
            row: 2,
            value: -1.0
        }
    );
    // Polylines.
    assert_eq!(
        B::polyline(m, &[o]).unwrap_err(),
        RodError::TooFewBodies { count: 1, min: 2 }
    );
    assert_eq!(
        B::polyline(m, &[o, x, x, x * 2.0]).unwrap_err(),
        RodError::DegenerateSegment {
            index: 1,
            length: 0.0
        }
    );
    assert_eq!(
        B::polyline(m, &[o, x, o]).unwrap_err(),
        RodError::ReversedSegment { index: 1 }
    );
    assert!(matches!(
        B::polyline(m, &[o, Vector3::new(f64::NAN, 0.0, 0.0)]),
        Err(RodError::NonFinite {
            what: "polyline point",
            index: 1
        })
    ));
    // Poses.
    let p = Pose::new(o, M64::identity());
    assert_eq!(
        B::from_poses(m, vec![p, p]).unwrap_err(),
        RodError::DegenerateSegment {
            index: 0,
            length: 0.0
        }
    );
    // Constraint.
    assert_eq!(
        RigidChainConstraint::new(BodyId(3), BodyId(3), 0.1, &m).unwrap_err(),
        RodError::SameBody { body: 3 }
    );
    assert!(matches!(
        RigidChainConstraint::new(BodyId(0), BodyId(1), -0.1, &m),
        Err(RodError::InvalidLength { .. })
    ));
    let joint = RigidChainConstraint::new(BodyId(0), BodyId(1), 0.1, &m).unwrap();
    assert!(joint
        .with_precurvature(&Vector3::new(0.0, f64::INFINITY, 0.0))
        .is_err());
    assert!(joint
        .with_rest_shear(&Vector3::new(f64::NAN, 0.0, 0.0))
        .is_err());
    assert!(joint
        .with_damping(&[0.0, 0.0, 0.0, f64::NAN, 0.0, 0.0])
        .is_err());
    assert!(matches!(
        rigid_chain_strain_gradient(&p, &Pose::new(x, M64::identity()), 0.0),
        Err(RodError::InvalidLength { .. })
    ));
    assert!(matches!(
        rigid_chain_strain_gradient(
            &p,
            &Pose::new(Vector3::new(f64::NAN, 0.0, 0.0), M64::identity()),
            1.0
        ),
        Err(RodError::NonFinite {
            what: "body position",
            index: 1
        })
    ));
    // A body id outside the body list: typed error from `strains`, NaN from `evaluate`.
    let bodies = [body(o, M64::identity())];
    assert!(matches!(
        joint.strains(&bodies),
        Err(RodError::World(XpbdError::UnknownBody { body: 1, .. }))
    ));
    let mut out = ConstraintEval::default();
    Constraint::<f64, M64>::evaluate(&joint, &bodies, &mut out);
    assert!(out.value.iter().all(|x| x.is_nan()));
    // Two bodies, both clamped: nothing could move; the world is left unchanged.
    let both = B::straight(m, o, x, 1.0, 2)
        .unwrap()
        .with_fixed_base(true)
        .with_fixed_tip(true);
    let mut world = World::<f64, M64>::new(SolverOptions::default()).unwrap();
    assert!(matches!(
        both.build(&mut world),
        Err(RodError::World(XpbdError::NoDynamicBody { .. }))
    ));
    assert_eq!(world.bodies().len(), 0);
    // The names and kinds.
    assert_eq!(
        Constraint::<f64, M64>::name(&joint),
        "rod_rigid_chain(0, 1)"
    );
    assert_eq!(Constraint::<f64, M64>::kind(&joint), "rod_rigid_chain");
}

/// A second rod in the same world gets its own body ids and joints.
#[test]
fn two_rods_in_one_world() {
    let m = material::<f64>();
    let mut world = World::<f64, M64>::new(SolverOptions::default()).unwrap();
    let a = RigidChainBuilder::straight(m, Vector3::zeros(), Vector3::x(), 1.0, 3)
        .unwrap()
        .build(&mut world)
        .unwrap();
    let b = RigidChainBuilder::straight(m, Vector3::y(), Vector3::x(), 1.0, 4)
        .unwrap()
        .build(&mut world)
        .unwrap();
    assert_eq!(a.bodies, vec![BodyId(0), BodyId(1), BodyId(2)]);
    assert_eq!(b.bodies, vec![BodyId(3), BodyId(4), BodyId(5), BodyId(6)]);
    assert_eq!(
        world.constraint(b.constraints[0]).unwrap().bodies(),
        [Some(BodyId(3)), Some(BodyId(4))]
    );
    assert_eq!(
        (a.base(), a.tip(), b.tip()),
        (BodyId(0), BodyId(2), BodyId(6))
    );
}

// =======================================================================================
// Cantilever
// =======================================================================================

const G_ACC: f64 = 9.81;

/// Tip (x, y) of the clamped planar Cosserat rod of `m` and length `l` under its own
/// weight (module docs): n(s) = −ρAg(L − s) ŷ is known, and with θ the tangent angle,
/// m = EI θ', the body-frame force components n_t, n_n and v = (1 + n_t/EA, n_n/κGA):
/// p' = v_t t + v_n n̂, m' = −(p' × n)_z, θ(0) = 0, m(L) = 0. Shooting on m(0).
fn reference_tip(m: &RodMaterial<f64>, l: f64) -> (f64, f64) {
    let q = m.mass_per_length() * G_ACC;
    let ei = m.bending_stiffness()[(0, 0)];
    let ea = m.shear_stiffness()[(2, 2)];
    let ga = m.shear_stiffness()[(0, 0)];
    let rhs = |s: f64, st: [f64; 4]| -> [f64; 4] {
        let (th, mo) = (st[2], st[3]);
        let n = [0.0, -q * (l - s)];
        let (t, nn) = ([th.cos(), th.sin()], [-th.sin(), th.cos()]);
        let vt = 1.0 + (n[0] * t[0] + n[1] * t[1]) / ea;
        let vn = (n[0] * nn[0] + n[1] * nn[1]) / ga;
        let pp = [vt * t[0] + vn * nn[0], vt * t[1] + vn * nn[1]];
        [pp[0], pp[1], mo / ei, -(pp[0] * n[1] - pp[1] * n[0])]
    };
    let integrate = |m0: f64| -> [f64; 4] {
        let steps = 4000;
        let ds = l / steps as f64;
        let mut st = [0.0, 0.0, 0.0, m0];
        for i in 0..steps {
            let s = i as f64 * ds;
            let add = |k: [f64; 4], h: f64| std::array::from_fn(|j| st[j] + h * k[j]);
            let k1 = rhs(s, st);
            let k2 = rhs(s + ds / 2.0, add(k1, ds / 2.0));
            let k3 = rhs(s + ds / 2.0, add(k2, ds / 2.0));
            let k4 = rhs(s + ds, add(k3, ds));
            for j in 0..4 {
                st[j] += ds / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
            }
        }
        st
    };
    // The base moment lies between −qL² (twice the straight-beam value) and 0.
    let (mut lo, mut hi) = (-q * l * l, 0.0);
    let f_lo = integrate(lo)[3];
    assert!(f_lo * integrate(hi)[3] < 0.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if integrate(mid)[3] * f_lo > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let st = integrate(0.5 * (lo + hi));
    (st[0], st[1])
}

/// The cantilever rod: `n` bodies along world x from the origin, base clamped.
fn cantilever<T: Real, G: LieGroup<T>>(m: RodMaterial<T>, n: usize) -> RigidChainBuilder<T, G> {
    RigidChainBuilder::straight(m, Vector3::zeros(), Vector3::x(), T::one(), n)
        .unwrap()
        .with_fixed_base(true)
}

/// The discrete static equilibrium of a rigid-chain rod with a fixed base body under
/// gravity −g ŷ: the state where every dynamic body's generalized force
/// Σ_k ∇C_kᵀ α_k⁻¹ C_k − (0, m g, 0, 0, 0, 0) vanishes (the gradient of the energy
/// (91)–(92) minus the weight, in the (59) layout), found by Newton's method with a
/// central-difference Jacobian in the boxplus chart and the load applied in 8 stages.
/// The force uses the analytic constraint gradient checked above. Returns the body
/// poses and the final residual norm relative to the rod's weight ρAgL. Its floor is
/// the round-off of the internal forces α⁻¹C, whose terms are of size l·EA·|C|, not of
/// the weight: about 1e-11 of the weight at E = 5 MPa, 5e-10 at E = 500 MPa.
fn static_equilibrium(rod: &RigidChainBuilder<f64, M64>) -> (Vec<Pose<f64, M64>>, f64) {
    let inertias = rod.body_inertias();
    let mut bodies: Vec<Body<f64, M64>> = rod
        .poses()
        .iter()
        .zip(&inertias)
        .enumerate()
        .map(|(j, (p, i))| {
            if j == 0 {
                Body::fixed(p.position, p.rotation).unwrap()
            } else {
                Body::dynamic(i.mass, i.inertia, p.position, p.rotation).unwrap()
            }
        })
        .collect();
    let joints = rod.constraints(0).unwrap();
    let n = bodies.len();
    let dof = 6 * (n - 1);
    let residual = |bodies: &[Body<f64, M64>], load: f64| {
        let mut r = DVector::<f64>::zeros(dof);
        for j in 1..n {
            r[6 * (j - 1) + 1] = load * G_ACC * bodies[j].mass();
        }
        let mut out = ConstraintEval::default();
        for k in &joints {
            out.clear();
            Constraint::<f64, M64>::evaluate(k, bodies, &mut out);
            for (slot, id) in k.body_ids().iter().enumerate() {
                if id.0 == 0 {
                    continue;
                }
                for col in 0..6 {
                    let mut acc = 0.0;
                    for row in 0..6 {
                        acc += out.gradient[slot][(row, col)] * out.value[row]
                            / Constraint::<f64, M64>::compliance(k, row);
                    }
                    r[6 * (id.0 - 1) + col] += acc;
                }
            }
        }
        r
    };
    let apply = |bodies: &mut [Body<f64, M64>], dx: &DVector<f64>| {
        for (j, b) in bodies.iter_mut().enumerate().skip(1) {
            let o = 6 * (j - 1);
            b.position += Vector3::new(dx[o], dx[o + 1], dx[o + 2]);
            b.orientation = b
                .orientation
                .boxplus(&Vector3::new(dx[o + 3], dx[o + 4], dx[o + 5]));
        }
    };
    let weight = rod.material().mass_per_length() * G_ACC * rod.rest_lengths().iter().sum::<f64>();
    for stage in 1..=8 {
        let load = stage as f64 / 8.0;
        for _ in 0..30 {
            let r = residual(&bodies, load);
            if r.norm() < 1e-13 * weight {
                break;
            }
            let h = 1e-6;
            let mut jac = DMatrix::<f64>::zeros(dof, dof);
            for col in 0..dof {
                let mut e = DVector::zeros(dof);
                e[col] = h;
                let mut plus = bodies.clone();
                apply(&mut plus, &e);
                let mut minus = bodies.clone();
                apply(&mut minus, &(-e));
                jac.set_column(
                    col,
                    &((residual(&plus, load) - residual(&minus, load)) / (2.0 * h)),
                );
            }
            let dx = jac.lu().solve(&(-r)).expect("Newton step");
            apply(&mut bodies, &dx);
            if dx.norm() < 1e-14 {
                break;
            }
        }
    }
    let r = residual(&bodies, 1.0).norm() / weight;
    (bodies.iter().map(|b| b.pose()).collect(), r)
}

fn distance(a: (f64, f64), b: (f64, f64)) -> f64 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}

/// Least-squares slope of log(error) against log(segment length l = L/(N − 1)).
fn fitted_order(points: &[(usize, f64)]) -> f64 {
    let xs: Vec<f64> = points
        .iter()
        .map(|&(n, _)| (1.0 / (n - 1) as f64).ln())
        .collect();
    let ys: Vec<f64> = points.iter().map(|&(_, e)| e.ln()).collect();
    let k = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / k, ys.iter().sum::<f64>() / k);
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

/// For a stiff rod (E = 500 MPa, deflection 0.4 % of L) the shooting reference and the
/// rigid chain's discrete equilibrium (33 bodies) both agree with Timoshenko's linear
/// tip deflection qL⁴/(8EI) + qL²/(2κGA) (the distributed-load analogue of (125)).
#[test]
fn small_deflection_matches_timoshenko() {
    let m = RodMaterial::<f64>::circular(5e8, 0.5, 1000.0, 0.05).unwrap();
    let q = m.mass_per_length() * G_ACC;
    let ei = m.bending_stiffness()[(0, 0)];
    let ga = m.shear_stiffness()[(0, 0)];
    let timoshenko = q / (8.0 * ei) + q / (2.0 * ga);
    let (_, y) = reference_tip(&m, 1.0);
    let (poses, residual) = static_equilibrium(&cantilever(m, 33));
    let chain = -poses[32].position.y;
    eprintln!(
        "small deflection: Timoshenko {timoshenko:.6e} m (Euler–Bernoulli {:.6e}), \
         shooting {:.6e}, rigid chain N = 33 {chain:.6e} (relative residual {residual:.1e})",
        q / (8.0 * ei),
        -y
    );
    // Geometric nonlinearity at d/L = 0.004 is O((d/L)²) relative.
    assert!(((-y) - timoshenko).abs() < 1e-4 * timoshenko);
    // The chain's discretization error at N = 33 is O(l²) (see the convergence test).
    assert!((chain - timoshenko).abs() < 2e-3 * timoshenko);
    assert!(residual < 1e-8, "relative residual {residual:e}");
}

/// The discrete static equilibrium of the Section 9.2 cantilever converges to the
/// continuum solution at second order in l = L/(N − 1), the rate the paper reports for
/// the rigid chain (Section 9.2). Errors (m) are tip distances to the reference.
#[test]
fn rigid_chain_converges_at_second_order() {
    let m = material::<f64>();
    let reference = reference_tip(&m, 1.0);
    let mut errors = Vec::new();
    for n in [3, 5, 9, 17, 33] {
        let (poses, residual) = static_equilibrium(&cantilever(m, n));
        assert!(residual < 1e-8, "N = {n}: residual {residual:e}");
        let tip = poses[n - 1].position;
        let e = distance((tip.x, tip.y), reference);
        eprintln!(
            "N = {n:3} bodies (l = {:.4} m): tip ({:.6}, {:.6}) m, error {e:.3e} m",
            1.0 / (n - 1) as f64,
            tip.x,
            tip.y
        );
        errors.push((n, e));
    }
    let order = fitted_order(&errors);
    eprintln!(
        "reference tip ({:.6}, {:.6}) m; fitted order {order:.3}",
        reference.0, reference.1
    );
    for w in errors.windows(2) {
        assert!(w[1].1 < w[0].1 / 3.5, "{errors:?}");
    }
    assert!((1.9..2.1).contains(&order), "order {order}");
}

/// The XPBD simulation of the cantilever settles, from straight, onto the discrete
/// equilibrium, and its tip approaches the continuum tip as N grows.
///
/// Δt = 5e-3 s (Section 9.2), 100 substeps of 1 Gauss–Seidel iteration each (block
/// solves (124)), 600 steps (3 s). Gauss–Seidel sweeps propagate along the chain slowly
/// and leave the fixed point of a step off the equilibrium by O((h ω_max)²), h the
/// substep and ω_max the chain's highest (stretch) frequency ∝ 1/l: substeps shrink
/// it quadratically, iterations only linearly (at N = 9 with Δt = 5e-3 s and 50
/// iterations and no substeps the tip was 0.077 m from the equilibrium, still sinking,
/// after 2000 steps). The rod is brought to rest
/// by mass-proportional viscous damping, v ← v e^(−cΔt) with c = 12 /s after every step
/// (critical for the first bending mode, ω₁ ≈ 6 rad/s), which does not change the
/// equilibrium; the Rayleigh damping of the joint rows ([`Constraint::damping`]) acts
/// in a single local velocity sweep and hardly damps the first bending mode of a chain
/// whose bodies have little rotational inertia.
///
/// With `joint_clamp` the base body is dynamic and held by a hard [`Fixed`] joint to the
/// world instead of being a fixed body.
fn settle<T: Real, G: LieGroup<T>>(n: usize, joint_clamp: bool) -> ((f64, f64), f64) {
    let options = SolverOptions {
        dt: c(5e-3),
        substeps: 100,
        iterations: 1,
        solve_mode: SolveMode::Block,
        gravity: v(0.0, -G_ACC, 0.0),
        primal_correction: false,
        ..SolverOptions::default()
    };
    let mut world = World::<T, G>::new(options).unwrap();
    let rod = cantilever::<T, G>(material(), n).with_fixed_base(!joint_clamp);
    let chain = rod.build(&mut world).unwrap();
    if joint_clamp {
        let base = rod.poses()[0];
        let clamp = Fixed::new(
            None,
            JointFrame::new(base.position, base.rotation),
            Some(chain.base()),
            JointFrame::identity(),
        )
        .unwrap();
        world.add_constraint(clamp).unwrap();
    }
    let factor = c::<T>((-12.0f64 * 5e-3).exp());
    for _ in 0..600 {
        world.step().unwrap();
        for &id in &chain.bodies {
            let b = world.body_mut(id).unwrap();
            b.velocity *= factor;
            b.angular_velocity *= factor;
        }
    }
    let tip = world.body(chain.tip()).unwrap();
    (
        (tip.position.x.to_f64(), tip.position.y.to_f64()),
        tip.velocity.norm().to_f64(),
    )
}

#[test]
fn cantilever_settles_onto_the_equilibrium() {
    let m = material::<f64>();
    let reference = reference_tip(&m, 1.0);
    let mut last = f64::INFINITY;
    for n in [3, 5, 9] {
        let (tip, speed) = settle::<f64, M64>(n, false);
        let (poses, _) = static_equilibrium(&cantilever(m, n));
        let exact = (poses[n - 1].position.x, poses[n - 1].position.y);
        let bias = distance(tip, exact);
        let error = distance(tip, reference);
        let discretization = distance(exact, reference);
        eprintln!(
            "XPBD N = {n}: tip ({:.6}, {:.6}) m, speed {speed:.1e} m/s; error to reference \
             {error:.3e} m (discrete equilibrium {discretization:.3e} m, XPBD off it by {bias:.3e} m)",
            tip.0, tip.1
        );
        assert!(
            speed < 1e-4,
            "N = {n}: not at rest, tip speed {speed:e} m/s"
        );
        assert!(bias < 0.25 * discretization, "N = {n}: bias {bias:e}");
        assert!(error < last, "N = {n}: error {error:e} not below {last:e}");
        last = error;
    }
}

/// The same run in f32 and with quaternions lands where f64 does.
#[test]
fn cantilever_f32_and_quaternion_agree_with_f64() {
    let (tip64, _) = settle::<f64, M64>(5, false);
    let (tipq, _) = settle::<f64, Q64>(5, false);
    let (tip32, speed32) = settle::<f32, Q32>(5, false);
    eprintln!(
        "N = 5: f64 matrix ({:.6}, {:.6}), f64 quaternion ({:.6}, {:.6}), f32 quaternion \
         ({:.6}, {:.6}) m (speed {speed32:.1e} m/s)",
        tip64.0, tip64.1, tipq.0, tipq.1, tip32.0, tip32.1
    );
    assert!(distance(tip64, tipq) < 1e-9);
    assert!(distance(tip64, tip32) < 1e-3);
}

/// Clamping the base with a hard fixed joint (71) to the world instead of a fixed base
/// body gives the same equilibrium; the joint's rows are solved after the rod's in each
/// sweep, so the base body moves a little within a substep, which adds to the solver's
/// bias but not to the discretisation.
#[test]
fn cantilever_clamped_by_a_fixed_joint() {
    let (body_clamp, _) = settle::<f64, M64>(3, false);
    let (joint_clamp, speed) = settle::<f64, M64>(3, true);
    let gap = distance(body_clamp, joint_clamp);
    eprintln!(
        "N = 3: fixed base body ({:.6}, {:.6}), fixed joint ({:.6}, {:.6}) m, gap {gap:.1e} m",
        body_clamp.0, body_clamp.1, joint_clamp.0, joint_clamp.1
    );
    assert!(speed < 1e-4);
    assert!(gap < 1e-4, "{gap:e}");
}

/// The joint damping b reaches the world per row; the world accepts it.
#[test]
fn damping_reaches_the_world() {
    let b = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6];
    let rod =
        RigidChainBuilder::<f64, M64>::straight(material(), Vector3::zeros(), Vector3::x(), 1.0, 4)
            .unwrap()
            .with_damping(b)
            .unwrap();
    let mut world = World::<f64, M64>::new(SolverOptions::default()).unwrap();
    let chain = rod.build(&mut world).unwrap();
    for &id in &chain.constraints {
        let k = world.constraint(id).unwrap();
        for (row, &value) in b.iter().enumerate() {
            assert_eq!(k.damping(row), value);
        }
        assert_eq!(k.damping(6), 0.0);
    }
}
