//! `lie-xpbd check-jacobians` on rods: the row blocks of [`FemRod`] (one per Gauss
//! point (108), over the element's 2–4 nodes) and [`RigidChainRod`] (one per joint
//! (93)) checked against central finite differences of boxplus perturbations by the
//! study of `pipeline::jacobians`, in all four combinations f64/f32 ×
//! SO3Matrix/UnitQuaternion.
//!
//! * Every shipped scene with a rod (cantilever, figure11, spring, shear_locking: all
//!   FEM rods) passes, and so do the cantilever and the spring discretised as rigid
//!   chains (`rods.<name>.discretization = "rigid_chain"`).
//! * A deliberately wrong gradient fails: a test-only system whose Gauss point has one
//!   gradient block with its sign flipped is named in the report, and one whose
//!   curvature gradient lacks the ∂Γ/∂θ term (the M term of `rod::element`), which is
//!   exact at the straight initial state, fails at the perturbed states only.
//! * The row blocks are the rows the solver projects: their values make up
//!   [`System::residuals`] with λ = 0.
//!
//! The study runs few random states here (CI has 2 cores): 3 per block, drawn with
//! up to 1 rad of rotation per node, so that relative nodal rotations within an
//! element reach 2 rad, where the curvature rows' derivatives are hardest. Tolerances
//! are the checker's own ([`lie_xpbd::lie::Real::fd_tolerance`] scaled by the
//! distance of the bodies from the origin, module docs of `xpbd::check`); the worst
//! errors measured with 100 states are listed there.

use lie_xpbd::lie::so3::right_jacobian;
use lie_xpbd::lie::{LieGroup, Pose, SO3Matrix};
use lie_xpbd::pipeline::jacobians::{check_scene, check_world, JacobianOptions, JacobianReport};
use lie_xpbd::rod::{
    FemRod, Integration, RodElement, RodMaterial, StraightRod, ROD_GAUSS_POINT_KIND, ROD_JOINT_KIND,
};
use lie_xpbd::scene::Scene;
use lie_xpbd::sim::{Rotation, Scalar};
use lie_xpbd::xpbd::{
    check_row_block, check_row_block_perturbed, Body, BodyId, RowBlockEval, RowBlockInfo,
    SolverOptions, System, World, XpbdError, MAX_BLOCK_BODIES,
};
use nalgebra::{SVector, Vector3};
use rand::rngs::StdRng;
use rand::SeedableRng;

const STATES: usize = 3;

fn opts() -> JacobianOptions {
    JacobianOptions {
        states: STATES,
        ..JacobianOptions::default()
    }
}

fn scene(name: &str) -> Scene {
    Scene::load(format!("{}/scenes/{name}.toml", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Checks `scene`: every entry passes, all are of `kind`, and there are `blocks` of
/// them per combination, each over STATES + 1 states.
fn assert_scene_passes(scene: &Scene, kind: &str, blocks: usize) -> JacobianReport {
    let report = check_scene(scene, &opts()).unwrap();
    assert!(report.passed(), "{}", report.table());
    assert_eq!(report.entries.len(), 4 * blocks, "{}", report.table());
    for (r, s) in [
        (Rotation::Matrix, Scalar::F64),
        (Rotation::Quaternion, Scalar::F64),
        (Rotation::Matrix, Scalar::F32),
        (Rotation::Quaternion, Scalar::F32),
    ] {
        let n = report
            .entries
            .iter()
            .filter(|e| e.rotation == r && e.scalar == s)
            .count();
        assert_eq!(n, blocks, "{r} {s}");
    }
    for e in &report.entries {
        assert_eq!(e.check.kind, kind);
        assert_eq!(e.check.states_checked, STATES + 1);
    }
    println!("{}", report.table());
    report
}

#[test]
fn shipped_fem_rod_scenes_pass_in_all_four_combinations() {
    // Gauss points: 5 cubic elements × 3 (reduced), 120 linear × 1, 3 linear × 1.
    for (name, blocks) in [
        ("cantilever", 15),
        ("figure11", 15),
        ("spring", 120),
        ("shear_locking", 3),
    ] {
        let report = assert_scene_passes(&scene(name), ROD_GAUSS_POINT_KIND, blocks);
        assert!(report.entries[0]
            .check
            .constraint
            .contains("element 0, Gauss point 0"));
    }
}

/// The overrides that make rod `rod` a rigid chain of `elements` segments.
fn chain(rod: &str, elements: usize) -> [(String, String); 3] {
    [
        (format!("rods.{rod}.discretization"), "rigid_chain".into()),
        (format!("rods.{rod}.order"), "1".into()),
        (format!("rods.{rod}.elements"), elements.to_string()),
    ]
}

#[test]
fn rigid_chain_rods_pass_in_all_four_combinations() {
    // A chain of `elements` segments has `elements` joints.
    for (name, rod, elements) in [("cantilever", "beam", 8), ("spring", "spring", 120)] {
        let mut s = scene(name);
        s.set_all(&chain(rod, elements)).unwrap();
        assert_scene_passes(&s, ROD_JOINT_KIND, elements);
    }
}

/// Changes a row block's evaluation (block index, bodies, the rod's evaluation).
type Flaw = Box<dyn Fn(usize, &[Body<f64, SO3Matrix<f64>>], &mut RowBlockEval<f64>) + Send + Sync>;

/// A test-only system: a [`FemRod`] whose row block evaluation is changed by `flaw`
/// after the rod's own (the solver's rows are untouched).
struct Flawed {
    inner: FemRod<f64, SO3Matrix<f64>, 4>,
    flaw: Flaw,
}

impl System<f64, SO3Matrix<f64>> for Flawed {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn bodies(&self) -> &[BodyId] {
        System::bodies(&self.inner)
    }
    fn row_count(&self) -> usize {
        self.inner.row_count()
    }
    fn lambda(&self) -> &[f64] {
        self.inner.lambda()
    }
    fn reset_lambda(&mut self) {
        self.inner.reset_lambda()
    }
    fn project(&mut self, bodies: &mut [Body<f64, SO3Matrix<f64>>], inv_h2: f64) {
        self.inner.project(bodies, inv_h2)
    }
    fn residuals(
        &self,
        bodies: &[Body<f64, SO3Matrix<f64>>],
        inv_h2: f64,
        primal: &mut [SVector<f64, 6>],
    ) -> f64 {
        self.inner.residuals(bodies, inv_h2, primal)
    }
    fn row_block_count(&self) -> usize {
        self.inner.row_block_count()
    }
    fn row_block(&self, k: usize) -> Option<RowBlockInfo> {
        self.inner.row_block(k)
    }
    fn evaluate_row_block(
        &self,
        k: usize,
        bodies: &[Body<f64, SO3Matrix<f64>>],
        out: &mut RowBlockEval<f64>,
    ) -> Result<(), XpbdError> {
        self.inner.evaluate_row_block(k, bodies, out)?;
        (self.flaw)(k, bodies, out);
        Ok(())
    }
}

const ELEMENTS: usize = 2;

fn material() -> RodMaterial<f64> {
    RodMaterial::circular(5e6, 0.4, 1000.0, 0.05).unwrap()
}

fn element() -> RodElement<f64, 4> {
    RodElement::new(0.5, &material(), Integration::Reduced).unwrap()
}

/// A straight 1 m rod of two cubic elements along x, clamped at the start (Gauss
/// points 0–5, 3 per element), wrapped with `flaw`, in a world of its own.
fn flawed_world(flaw: Flaw) -> World<f64, SO3Matrix<f64>> {
    let mut scratch = World::new(SolverOptions::default()).unwrap();
    let spec = StraightRod::cantilever(1.0, ELEMENTS);
    let ids =
        FemRod::<f64, SO3Matrix<f64>, 4>::add_straight(&mut scratch, &material(), &spec).unwrap();
    let mut world = World::new(SolverOptions::default()).unwrap();
    for b in scratch.bodies() {
        world.add_body(*b).unwrap();
    }
    let inner = FemRod::new("flawed", ids.nodes, vec![element(); ELEMENTS], 0.0).unwrap();
    world.add_system(Flawed { inner, flaw }).unwrap();
    world
}

#[test]
fn a_flipped_gradient_block_is_reported_as_failing() {
    // Block 4 (element 1, Gauss point 1): D_R u of its second node, sign flipped.
    let world = flawed_world(Box::new(|k, _, out| {
        if k == 4 {
            let mut b = out.gradient[1].fixed_view_mut::<3, 3>(3, 3);
            b.neg_mut();
        }
    }));
    let entries = check_world(&world, Rotation::Matrix, Scalar::F64, &opts()).unwrap();
    assert_eq!(entries.len(), 3 * ELEMENTS);
    let report = JacobianReport { entries };
    assert!(!report.passed());
    assert_eq!(report.exit_code(), 1);
    let failures = report.failures();
    assert_eq!(failures.len(), 1, "{}", report.table());
    let check = &failures[0].check;
    assert_eq!(check.constraint, "flawed: element 1, Gauss point 1");
    assert_eq!(check.kind, ROD_GAUSS_POINT_KIND);
    // Located: a curvature row (3–5), the second node, a rotation column (3–5); a
    // flipped sign is wrong by twice the entry, far above the tolerance.
    assert!((3..6).contains(&check.worst_row), "{check}");
    assert_eq!(check.worst_body_slot, 1, "{check}");
    assert!((3..6).contains(&check.worst_column), "{check}");
    assert!(
        (check.analytic + check.finite_difference).abs() < 1e-6,
        "{check}"
    );
    assert!(check.ratio() > 1e4, "{check}");
    let table = report.table();
    assert!(
        table.contains("FAIL") && table.contains(&check.constraint),
        "{table}"
    );
}

/// D_{Rₖ}u without the ∂Γ/∂θ term: Γ(θ) D_{Rₖ}θ', the derivative that forgets that Γ
/// depends on θ (module docs of `rod::element`). At the straight state (θ = θ' = 0)
/// it is exact.
#[test]
fn a_missing_curvature_term_fails_at_perturbed_states_only() {
    let element = element();
    let q = element.gauss_point_count();
    let nodes: Vec<BodyId> = (0..=3 * ELEMENTS).map(BodyId).collect();
    let world = flawed_world(Box::new(move |k, bodies, out| {
        let (e, r) = (k / q, k % q);
        let poses: [Pose<f64, SO3Matrix<f64>>; 4] =
            std::array::from_fn(|j| bodies[nodes[3 * e + j].0].pose());
        let kin = element.kinematics(&poses).unwrap();
        let xi = element.gauss_rule().points()[r];
        let t = kin.theta_gradient(xi).unwrap();
        let gamma = right_jacobian(&t.theta);
        for (g, d) in out.gradient.iter_mut().zip(&t.d_theta_prime) {
            g.fixed_view_mut::<3, 3>(3, 3).copy_from(&(gamma * d));
        }
    }));
    let system = world.system(lie_xpbd::xpbd::SystemId(0)).unwrap();
    for k in 0..system.row_block_count() {
        let at_rest = check_row_block(system, k, world.bodies()).unwrap();
        assert!(at_rest.passed(), "{at_rest}");
    }
    let report = JacobianReport {
        entries: check_world(&world, Rotation::Matrix, Scalar::F64, &opts()).unwrap(),
    };
    assert_eq!(report.failures().len(), 3 * ELEMENTS, "{}", report.table());
    for f in report.failures() {
        assert!(f.check.worst_state > 0, "{}", f.check);
        assert!((3..6).contains(&f.check.worst_row), "{}", f.check);
        // Tens of percent of the largest entry, not round-off.
        assert!(f.check.worst_relative_error > 1e-2, "{}", f.check);
    }
}

/// The row blocks are the solver's rows: with λ = 0, `System::residuals` is Σ|C|²
/// over them (checked away from rest, at a bent and stretched state).
#[test]
fn row_blocks_are_the_rows_the_solver_projects() {
    for (name, rod, discretization) in [
        ("cantilever", "beam", "fem"),
        ("spring", "spring", "fem"),
        ("cantilever", "beam", "rigid_chain"),
    ] {
        let mut s = scene(name);
        if discretization == "rigid_chain" {
            s.set_all(&chain(rod, 8)).unwrap();
        }
        let mut world = s.build::<f64, SO3Matrix<f64>>().unwrap().world;
        let n = world.bodies().len();
        for i in 0..n {
            let b = world.body_mut(BodyId(i)).unwrap();
            let t = i as f64;
            b.position += Vector3::new(0.01 * t.sin(), 0.02 * t.cos(), 0.005 * t);
            b.orientation = b
                .orientation
                .boxplus(&Vector3::new(0.1 * t.cos(), 0.05, 0.2));
        }
        let system = world.system(lie_xpbd::xpbd::SystemId(0)).unwrap();
        let mut primal = vec![SVector::<f64, 6>::zeros(); n];
        let residual = system.residuals(world.bodies(), 1.0, &mut primal);
        let mut sum = 0.0;
        let mut rows = 0;
        let mut eval = RowBlockEval::default();
        for k in 0..system.row_block_count() {
            let info = system.row_block(k).unwrap();
            assert!(info.bodies().len() <= MAX_BLOCK_BODIES);
            system
                .evaluate_row_block(k, world.bodies(), &mut eval)
                .unwrap();
            sum += eval.value.rows(0, info.dim()).norm_squared();
            rows += info.dim();
        }
        assert_eq!(rows, system.row_count(), "{name} {discretization}");
        assert!(residual > 1e-3, "{name} {discretization}: {residual}");
        approx::assert_relative_eq!(sum, residual, max_relative = 1e-12);
    }
}

#[test]
fn row_block_errors_are_typed() {
    let world = flawed_world(Box::new(|_, _, _| {}));
    let system = world.system(lie_xpbd::xpbd::SystemId(0)).unwrap();
    let count = system.row_block_count();
    assert_eq!(count, 3 * ELEMENTS);
    assert!(system.row_block(count).is_none());
    let mut eval = RowBlockEval::default();
    let unknown = XpbdError::UnknownRowBlock {
        system: "flawed".into(),
        index: count,
        count,
    };
    assert_eq!(
        system.evaluate_row_block(count, world.bodies(), &mut eval),
        Err(unknown.clone())
    );
    assert_eq!(check_row_block(system, count, world.bodies()), Err(unknown));
    // A body list without the rod's nodes.
    assert!(matches!(
        check_row_block(system, 0, &world.bodies()[..2]),
        Err(XpbdError::UnknownBody { .. })
    ));
    let mut rng = StdRng::seed_from_u64(1);
    assert!(matches!(
        check_row_block_perturbed(system, 0, world.bodies(), &mut rng, 1, 0.1, 1.5),
        Err(XpbdError::InvalidOption {
            name: "rotation_scale",
            ..
        })
    ));
    // Block descriptions are checked: 1–6 rows over 1–4 bodies.
    let ids = [BodyId(0); MAX_BLOCK_BODIES + 1];
    assert!(RowBlockInfo::new("b", "k", 6, &ids).is_err());
    assert!(RowBlockInfo::new("b", "k", 6, &[]).is_err());
    assert!(RowBlockInfo::new("b", "k", 0, &ids[..1]).is_err());
    assert!(RowBlockInfo::new("b", "k", 7, &ids[..1]).is_err());
    let info = RowBlockInfo::new("b", "k", 6, &ids[..4]).unwrap();
    assert_eq!((info.name(), info.kind(), info.dim()), ("b", "k", 6));
    assert_eq!(info.bodies().len(), 4);
}
