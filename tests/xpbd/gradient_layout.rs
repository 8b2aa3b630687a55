//! `Constraint::gradient_layout`: the block projection (124) of a constraint that
//! declares the structure of its position columns (the vector joints) skips only
//! products with exact zeros and keeps the order of the dense sums, so a world stepped
//! with the declared layouts is bit for bit the world stepped with every constraint
//! seen as dense. Checked on a chain with every vector joint kind (revolute, spherical,
//! prismatic with a turned frame, compliant fixed), one-sided and two-sided, with and
//! without the primal correction pass, in SO3Matrix/UnitQuaternion × f32/f64. Debug
//! builds also check every evaluation against the declared layout (a panic here).
//! And a layout with more rows than the constraint is rejected when it is added.

use lie_xpbd::joint::{Fixed, JointFrame, Prismatic, Revolute, Spherical};
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::xpbd::{
    Body, BodyId, Constraint, ConstraintEval, GradientLayout, SolveMode, SolverOptions,
    SubstepClock, World, XpbdError, MAX_BODIES,
};
use nalgebra::{SVector, Vector3};

/// A constraint seen through its `Constraint` methods, with `layout` in place of its
/// own gradient layout (`Dense`: the solver reads every entry).
struct Relayout<T: Real, G: LieGroup<T>> {
    inner: Box<dyn Constraint<T, G>>,
    layout: GradientLayout,
}

impl<T: Real, G: LieGroup<T>> Constraint<T, G> for Relayout<T, G> {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn bodies(&self) -> [Option<BodyId>; MAX_BODIES] {
        self.inner.bodies()
    }
    fn evaluate(&self, bodies: &[Body<T, G>], out: &mut ConstraintEval<T>) {
        self.inner.evaluate(bodies, out)
    }
    fn add_constraint_force(
        &self,
        bodies: &[Body<T, G>],
        lambda: &[T],
        force: &mut [SVector<T, 6>; MAX_BODIES],
    ) -> bool {
        self.inner.add_constraint_force(bodies, lambda, force)
    }
    fn evaluate_overwrites(&self) -> bool {
        self.inner.evaluate_overwrites()
    }
    fn gradient_layout(&self) -> GradientLayout {
        self.layout
    }
    fn compliance(&self, row: usize) -> T {
        self.inner.compliance(row)
    }
    fn damping(&self, row: usize) -> T {
        self.inner.damping(row)
    }
    fn is_smooth(&self) -> bool {
        self.inner.is_smooth()
    }
    fn solve_as_block(&self) -> bool {
        self.inner.solve_as_block()
    }
    fn lambda_bounds(&self, row: usize) -> (T, T) {
        self.inner.lambda_bounds(row)
    }
    fn end_substep(&mut self, bodies: &[Body<T, G>]) {
        self.inner.end_substep(bodies)
    }
    fn begin_substep(&mut self, clock: SubstepClock<T>, bodies: &[Body<T, G>]) {
        self.inner.begin_substep(clock, bodies)
    }
}

fn v<T: Real>(x: f64, y: f64, z: f64) -> Vector3<T> {
    Vector3::new(c(x), c(y), c(z))
}

/// The chain's joints: world–0 revolute, 0–1 spherical, 1–2 prismatic (frames turned),
/// 2–3 fixed (compliant), and a one-sided spherical on body 3.
fn joints<T: Real, G: LieGroup<T>>() -> Vec<Box<dyn Constraint<T, G>>> {
    let b = |i| Some(BodyId(i));
    let turned = G::exp(&v(0.3, -0.2, 0.5));
    vec![
        Box::new(
            Revolute::new(
                None,
                JointFrame::identity(),
                b(0),
                JointFrame::at(v(0.0, 0.5, 0.0)),
            )
            .unwrap(),
        ),
        Box::new(
            Spherical::new(
                b(0),
                JointFrame::at(v(0.0, -0.5, 0.0)),
                b(1),
                JointFrame::at(v(0.0, 0.5, 0.0)),
            )
            .unwrap(),
        ),
        Box::new(
            Prismatic::new(
                b(1),
                JointFrame::new(v(0.0, -0.5, 0.0), turned),
                b(2),
                JointFrame::new(v(0.0, 0.5, 0.0), turned),
            )
            .unwrap(),
        ),
        Box::new(
            Fixed::new(
                b(2),
                JointFrame::at(v(0.0, -0.5, 0.0)),
                b(3),
                JointFrame::at(v(0.0, 0.5, 0.0)),
            )
            .unwrap()
            .with_compliance(&[c(1e-6), c(1e-6), c(1e-6), c(1e-4), c(1e-4), c(1e-4)])
            .unwrap(),
        ),
        Box::new(
            Spherical::new(
                b(3),
                JointFrame::at(v(0.0, -0.5, 0.0)),
                None,
                JointFrame::at(v(1.2, -4.1, 0.3)),
            )
            .unwrap(),
        ),
    ]
}

/// The chain, each joint with its own layout (`dense` false) or seen as dense.
fn world<T: Real, G: LieGroup<T>>(dense: bool, pass: bool) -> World<T, G> {
    let options = SolverOptions {
        dt: c(1e-3),
        solve_mode: SolveMode::Block,
        primal_correction: pass,
        ..SolverOptions::default()
    };
    let mut w = World::new(options).unwrap();
    for i in 0..4 {
        let body = Body::dynamic(
            c(2.0 + i as f64),
            v(0.4, 0.1 + 0.05 * i as f64, 0.45),
            v(0.1 * i as f64, -(i as f64) - 0.5, 0.05 * i as f64),
            G::exp(&v(0.02 * i as f64, -0.01, 0.03)),
        )
        .unwrap()
        .with_velocity(v(0.3, 0.0, -0.2), v(1.5, -2.0, 0.7 * i as f64))
        .unwrap();
        w.add_body(body).unwrap();
    }
    for j in joints::<T, G>() {
        let layout = if dense {
            GradientLayout::Dense
        } else {
            j.gradient_layout()
        };
        assert_eq!(dense, layout == GradientLayout::Dense, "{}", j.name());
        w.add_constraint(Relayout { inner: j, layout }).unwrap();
    }
    w
}

fn same_trajectory<T: Real, G: LieGroup<T>>() {
    for pass in [false, true] {
        let mut a = world::<T, G>(false, pass);
        let mut b = world::<T, G>(true, pass);
        for step in 0..400 {
            a.step().unwrap();
            b.step().unwrap();
            for (i, (x, y)) in a.bodies().iter().zip(b.bodies()).enumerate() {
                assert!(
                    x.position == y.position
                        && x.orientation.to_matrix() == y.orientation.to_matrix()
                        && x.velocity == y.velocity
                        && x.angular_velocity == y.angular_velocity,
                    "{} {} pass {pass}: body {i} differs at step {step}",
                    G::NAME,
                    T::NAME
                );
            }
        }
        // The chain moved (the comparison is not between two resting worlds).
        let moved = (a.bodies()[2].position - v::<T>(0.2, -2.5, 0.1)).norm();
        assert!(moved > c(1e-3), "{}", moved);
    }
}

#[test]
fn structured_block_is_the_dense_block_matrix_f64() {
    same_trajectory::<f64, SO3Matrix<f64>>();
}

#[test]
fn structured_block_is_the_dense_block_quaternion_f64() {
    same_trajectory::<f64, UnitQuaternion<f64>>();
}

#[test]
fn structured_block_is_the_dense_block_matrix_f32() {
    same_trajectory::<f32, SO3Matrix<f32>>();
}

#[test]
fn structured_block_is_the_dense_block_quaternion_f32() {
    same_trajectory::<f32, UnitQuaternion<f32>>();
}

#[test]
fn layout_longer_than_the_constraint_is_rejected() {
    for layout in [
        GradientLayout::UnitPosition { rows: 4 },
        GradientLayout::LeadingPosition { rows: 6 },
    ] {
        let mut w = world::<f64, SO3Matrix<f64>>(true, false);
        let inner = joints::<f64, SO3Matrix<f64>>().remove(0); // revolute, 5 rows
        let err = w.add_constraint(Relayout { inner, layout }).unwrap_err();
        assert!(
            matches!(
                err,
                XpbdError::InvalidOption {
                    name: "gradient_layout",
                    ..
                }
            ),
            "{err:?}"
        );
    }
}
