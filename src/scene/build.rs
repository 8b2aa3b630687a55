//! [`Scene::build`]: one generic builder from a checked scene to a [`World`], for any
//! scalar `T` and rotation representation `G`.

use super::error::{SceneError, SceneErrorKind};
use super::format::*;
use super::normed::NormedJointError;
use super::path::FieldPath;
use super::validate::joint_name;
use super::Scene;
use crate::joint::{Fixed, JointFrame, Prismatic, Revolute, Spherical};
use crate::lie::real::c;
use crate::lie::{LieGroup, Real};
use crate::linalg::BandScalar;
use crate::xpbd::{Body, BodyId, Constraint, SolveMode, SolverOptions, World, XpbdError};
use nalgebra::{Quaternion, Vector3};
use std::f64::consts::PI;

/// A constraint of a built scene (a joint, one of its limits or motors, or a
/// prescribed motion), in the order of the world's constraints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JointInfo {
    /// The constraint's name: the joint's `name` (or `joint{i}`), `<joint>_limit` /
    /// `<joint>_motor` for what a joint adds, a prescribed motion's `name` (or
    /// `prescribed{i}`).
    pub name: String,
    /// The constraint's kind ([`Constraint::kind`]), e.g. `"revolute"`,
    /// `"revolute_scalar"`, `"revolute_limit"`, `"prescribed"`.
    pub kind: &'static str,
    /// Number of constraint rows: the vector joint's ([`JointType::rows`]), in scalar
    /// mode the normed joint's (2, spherical 1; [`crate::joint::normed`]).
    pub rows: usize,
}

/// A world built from a scene, with the names of its bodies and joints.
///
/// Step it with [`BuiltScene::step`], which applies the rods' end motions and dead
/// moments before each step ([`super::rod`]); `world.step()` alone leaves them out.
pub struct BuiltScene<T: Real, G: LieGroup<T>> {
    /// The world, ready to step; body `i < bodies.len()` is `bodies[i]` of the file, the
    /// rods' nodes follow (rod by rod, start first); constraint `j` is `joints[j]` of
    /// this struct.
    pub world: World<T, G>,
    /// Body names, indexed like [`World::bodies`]: the file's bodies, then each rod's
    /// nodes `"<rod>:<index>"`.
    pub body_names: Vec<String>,
    /// The world's constraints that are the scene's joints and prescribed motions, in
    /// order: the joints (each followed by what its `limit`/`motor` keys add), then the
    /// prescribed motions. (Rods are systems of the world, [`super::BuiltRod::system`].)
    pub joints: Vec<JointInfo>,
    /// The rods, in file order.
    pub rods: Vec<super::rod_build::BuiltRod>,
    /// Index of the first constraint of [`Self::joints`] in the world.
    pub first_joint: usize,
    pub(crate) drivers: super::rod_build::RodDrivers<T, G>,
}

impl<T: Real, G: LieGroup<T>> BuiltScene<T, G> {
    /// One step Δt: sets the rods' prescribed ends to their poses at the step's end
    /// time and their dead moments into the nodes' body frames, then [`World::step`].
    ///
    /// # Errors
    /// As [`World::step`].
    pub fn step(&mut self) -> Result<(), XpbdError> {
        let t = c::<T>((self.world.steps() + 1) as f64) * self.world.options().dt;
        self.drivers.apply(&mut self.world, t)?;
        self.world.step()
    }
}

/// Mass (kg) and principal inertia (kg·m², body frame) of `shape` at `density`
/// (kg/m³). Capsules and cylinders have their axis along body z. Sources: the standard
/// solid-body formulas (e.g. the tables of moments of inertia in any mechanics text);
/// for the capsule, a cylinder plus two half-balls whose centres of mass sit 3r/8 from
/// the flat faces (parallel-axis theorem).
pub fn mass_properties(shape: &ShapeSpec, density: f64) -> (f64, [f64; 3]) {
    match *shape {
        ShapeSpec::Box { size: [a, b, cc] } => {
            let m = density * a * b * cc;
            (
                m,
                [
                    m / 12.0 * (b * b + cc * cc),
                    m / 12.0 * (a * a + cc * cc),
                    m / 12.0 * (a * a + b * b),
                ],
            )
        }
        ShapeSpec::Sphere { radius: r } => {
            let m = density * 4.0 / 3.0 * PI * r * r * r;
            let i = 0.4 * m * r * r;
            (m, [i, i, i])
        }
        ShapeSpec::Cylinder {
            radius: r,
            length: l,
        } => {
            let m = density * PI * r * r * l;
            let ixx = m * (3.0 * r * r + l * l) / 12.0;
            (m, [ixx, ixx, 0.5 * m * r * r])
        }
        ShapeSpec::Capsule {
            radius: r,
            length: l,
        } => {
            let mc = density * PI * r * r * l;
            let ms = density * 4.0 / 3.0 * PI * r * r * r; // both half-balls
            let izz = 0.5 * mc * r * r + 0.4 * ms * r * r;
            let ixx = mc * (l * l / 12.0 + r * r / 4.0)
                + ms * (0.4 * r * r + l * l / 4.0 + 3.0 * l * r / 8.0);
            (mc + ms, [ixx, ixx, izz])
        }
    }
}

fn v3<T: Real>(a: &[f64; 3]) -> Vector3<T> {
    Vector3::new(c::<T>(a[0]), c::<T>(a[1]), c::<T>(a[2]))
}

/// The rotation of an orientation spec (identity for `None`).
pub(crate) fn orientation<T: Real, G: LieGroup<T>>(
    o: Option<&OrientationSpec>,
) -> Result<G, crate::lie::LieError> {
    match o {
        None => Ok(G::identity()),
        Some(OrientationSpec::AxisAngle { axis, angle_deg }) => {
            let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
            let s = angle_deg.to_radians() / n;
            G::try_exp(&v3::<T>(&[axis[0] * s, axis[1] * s, axis[2] * s]))
        }
        Some(OrientationSpec::Quaternion { quaternion: q }) => {
            let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
            G::from_quaternion(&Quaternion::new(
                c::<T>(q[0] / n),
                c::<T>(q[1] / n),
                c::<T>(q[2] / n),
                c::<T>(q[3] / n),
            ))
        }
    }
}

impl Scene {
    /// Builds the world for scalar `T` and rotation representation `G`. `T` is
    /// [`BandScalar`] (`f32` or `f64`, as every [`Real`]) because a scene's rods are
    /// solved by the block-banded solver.
    ///
    /// # Errors
    /// [`SceneErrorKind::Invalid`] with the field's path when a value that is valid in
    /// `f64` is not in `T` (e.g. a time step whose 1/h² overflows `f32`, or a mass
    /// that underflows).
    pub fn build<T: BandScalar, G: LieGroup<T>>(&self) -> Result<BuiltScene<T, G>, SceneError> {
        let file = self.file();
        let at = |path: FieldPath, e: &dyn std::fmt::Display| {
            self.locate(SceneError::new(
                SceneErrorKind::Invalid,
                path,
                format!("{e} (in {})", T::NAME),
            ))
        };
        let options = SolverOptions {
            dt: c::<T>(file.solver.dt),
            substeps: file.solver.substeps,
            iterations: file.solver.iterations,
            solve_mode: match file.solver.mode {
                ModeSpec::Block => SolveMode::Block,
                ModeSpec::Rows => SolveMode::Rows,
                ModeSpec::Scalar => SolveMode::Scalar,
            },
            gravity: v3::<T>(&file.solver.gravity),
            primal_correction: file.solver.primal_correction,
            f32_arithmetic: file.solver.f32_arithmetic.arithmetic(),
        };
        let solver = FieldPath::root().key("solver");
        let mut world = World::<T, G>::new(options).map_err(|e| {
            if matches!(e, XpbdError::InvalidOption { .. }) {
                let h = file.solver.dt / file.solver.substeps as f64;
                let why = format!(
                    "the time step {} s (substep h = {} s) cannot be used in {}: h or 1/h² under- or overflows there (f32 needs h > ~5.4e-20 s, f64 h > ~7.5e-155 s)",
                    super::error::num(file.solver.dt),
                    super::error::num(h),
                    T::NAME
                );
                self.locate(SceneError::new(SceneErrorKind::Invalid, solver.key("dt"), why))
            } else {
                // The only other rejection is a non-finite gravity in T.
                at(solver.key("gravity"), &e)
            }
        })?;
        let mut ids = Vec::with_capacity(file.bodies.len());
        for (i, b) in file.bodies.iter().enumerate() {
            let p = FieldPath::root().key("bodies").index(i);
            let rot = orientation::<T, G>(b.orientation.as_ref())
                .map_err(|e| at(p.key("orientation"), &e))?;
            let pos = v3::<T>(&b.position);
            let body = if b.fixed {
                Body::fixed(pos, rot).map_err(|e| at(p.key("position"), &e))?
            } else {
                let (m, inertia, field) = match (&b.shape, b.density, b.mass, b.inertia) {
                    (_, _, Some(m), Some(inertia)) => (m, inertia, "mass"),
                    (Some(s), Some(d), _, _) => {
                        let (m, i) = mass_properties(s, d);
                        (m, i, "density")
                    }
                    _ => {
                        return Err(at(
                            p.clone(),
                            &"a dynamic body needs shape and density, or mass and inertia",
                        ))
                    }
                };
                Body::dynamic(c::<T>(m), v3::<T>(&inertia), pos, rot).map_err(|e| {
                    let key = match (&e, field) {
                        (XpbdError::NonFinite { .. }, _) => "position",
                        (XpbdError::NonPositiveInertia { .. }, "mass") => "inertia",
                        (_, f) => f,
                    };
                    at(p.key(key), &e)
                })?
            };
            let body = body
                .with_velocity(v3::<T>(&b.velocity), v3::<T>(&b.angular_velocity))
                .map_err(|e| at(p.key("velocity"), &e))?;
            ids.push(world.add_body(body).map_err(|e| at(p.clone(), &e))?);
        }
        let mut drivers = super::rod_build::RodDrivers::default();
        let mut rods = Vec::with_capacity(file.rods.len());
        let mut body_names: Vec<String> = file.bodies.iter().map(|b| b.name.clone()).collect();
        for (i, r) in file.rods.iter().enumerate() {
            let p = FieldPath::root().key("rods").index(i);
            let built = super::rod_build::add_rod::<T, G>(r, &p, &mut world, &mut drivers)
                .map_err(|(path, e)| at(path, &e))?;
            body_names.extend((0..built.nodes.len()).map(|k| r.node_name(k)));
            rods.push(built);
        }
        let first_joint = world.constraint_count();
        let index = |name: &str| -> Option<BodyId> {
            if let Some(i) = file.bodies.iter().position(|b| b.name == name) {
                return Some(ids[i]);
            }
            match super::rod::resolve_node(&file.rods, name) {
                Some(Ok((r, k))) => Some(rods[r].nodes[k]),
                _ => None,
            }
        };
        let mut joints = Vec::with_capacity(file.joints.len());
        // Every constraint of every joint entry, in file order, for `joint_solve`.
        let mut joint_constraints = Vec::new();
        for (i, j) in file.joints.iter().enumerate() {
            let p = FieldPath::root().key("joints").index(i);
            let frame = |f: &FrameSpec, key: &str| -> Result<JointFrame<T, G>, SceneError> {
                let rot = orientation::<T, G>(f.orientation.as_ref())
                    .map_err(|e| at(p.key(key).key("orientation"), &e))?;
                Ok(JointFrame::new(v3::<T>(&f.position), rot))
            };
            let (b1, f1) = (index(&j.body1), frame(&j.frame1, "frame1")?);
            let (b2, f2) = (index(&j.body2), frame(&j.frame2, "frame2")?);
            let rows = j.kind.rows();
            let compliance: Option<Vec<T>> = j.compliance.as_ref().map(|cs| match cs {
                ComplianceSpec::Uniform(a) => vec![c::<T>(*a); rows],
                ComplianceSpec::PerRow(v) => v.iter().map(|&a| c::<T>(a)).collect(),
            });
            let damping: Option<Vec<T>> = j.damping.as_ref().map(|ds| match ds {
                DampingSpec::Uniform(b) => vec![c::<T>(*b); rows],
                DampingSpec::PerRow(v) => v.iter().map(|&b| c::<T>(b)).collect(),
            });
            let (cs, ds) = (compliance.as_deref(), damping.as_deref());
            let sides = super::actuation::Sides { b1, f1, b2, f2 };
            let drive = super::actuation::drive::<T, G>(j, &sides)
                .map_err(|(key, e)| at(p.key(key), &e))?;
            let constraint = if let Some(d) = drive {
                // A drive (81) is the joint with some rows sprung (it replaces it), in
                // every solve mode.
                d
            } else if file.solver.mode == ModeSpec::Scalar {
                // Section 5.1's normed joints (scene/normed.rs).
                super::normed::normed_joint(j, b1, f1, b2, f2).map_err(|e| match e {
                    NormedJointError::Rows {
                        field,
                        row,
                        message,
                    } => self.locate(SceneError::new(
                        SceneErrorKind::Invalid,
                        p.key(field).index(row),
                        message,
                    )),
                    NormedJointError::Joint(e) => at(p.clone(), &e),
                })?
            } else {
                let boxed: Result<Box<dyn Constraint<T, G>>, XpbdError> = (|| {
                    Ok(match j.kind {
                        JointType::Fixed => boxed(Fixed::new(b1, f1, b2, f2)?, cs, ds)?,
                        JointType::Revolute => boxed(Revolute::new(b1, f1, b2, f2)?, cs, ds)?,
                        JointType::Spherical => boxed(Spherical::new(b1, f1, b2, f2)?, cs, ds)?,
                        JointType::Prismatic => boxed(Prismatic::new(b1, f1, b2, f2)?, cs, ds)?,
                    })
                })();
                boxed.map_err(|e| at(p.clone(), &e))?
            };
            let rows = constraint.dim();
            let kind = constraint.kind();
            let id = world
                .add_boxed_constraint(constraint)
                .map_err(|e| at(p.clone(), &e))?;
            joint_constraints.push(id);
            joints.push(JointInfo {
                name: joint_name(i, j),
                kind,
                rows,
            });
            let first_extra = world.constraint_count();
            for (suffix, extra) in
                super::actuation::extras::<T, G>(j, &sides, world.options().substep_dt())
                    .map_err(|(key, e)| at(p.key(key), &e))?
            {
                let (kind, rows) = (extra.kind(), extra.dim());
                let extra_id = world
                    .add_boxed_constraint(extra)
                    .map_err(|e| at(p.clone(), &e))?;
                joint_constraints.push(extra_id);
                joints.push(JointInfo {
                    name: format!("{}{suffix}", joint_name(i, j)),
                    kind,
                    rows,
                });
            }
            if j.break_force.is_some() || j.break_torque.is_some() {
                let (force_rows, torque_rows) = super::actuation::break_rows(kind, rows);
                let inf = c::<T>(f64::INFINITY);
                let limits = crate::xpbd::BreakLimits {
                    max_force: j.break_force.map_or(inf, c::<T>),
                    max_torque: j.break_torque.map_or(inf, c::<T>),
                    force_rows,
                    torque_rows,
                    dependents: (first_extra..world.constraint_count())
                        .map(crate::xpbd::ConstraintId)
                        .collect(),
                };
                let key = if j.break_force.is_some() {
                    "break_force"
                } else {
                    "break_torque"
                };
                world
                    .set_break_limits(id, limits)
                    .map_err(|e| at(p.key(key), &e))?;
            }
        }
        if file.solver.joint_solve == JointSolveSpec::Direct {
            world
                .add_direct_group(&joint_constraints)
                .map_err(|e| at(solver.key("joint_solve"), &e))?;
        }
        for (i, m) in file.prescribed.iter().enumerate() {
            let p = FieldPath::root().key("prescribed").index(i);
            let body = index(&m.body).ok_or_else(|| at(p.key("body"), &"no such body"))?;
            let normed = file.solver.mode == ModeSpec::Scalar;
            let constraint = super::prescribed::build::<T, G>(m, body, normed)
                .map_err(|(key, e)| at(p.key(key), &e))?;
            let rows = constraint.dim();
            world
                .add_constraint(constraint)
                .map_err(|e| at(p.clone(), &e))?;
            joints.push(JointInfo {
                name: super::prescribed::prescribed_name(i, m),
                kind: "prescribed",
                rows,
            });
        }
        Ok(BuiltScene {
            world,
            body_names,
            joints,
            rods,
            first_joint,
            drivers,
        })
    }
}

fn boxed<T: Real, G: LieGroup<T>, K: crate::joint::JointKind + 'static>(
    joint: crate::joint::VectorJoint<T, G, K>,
    compliance: Option<&[T]>,
    damping: Option<&[T]>,
) -> Result<Box<dyn Constraint<T, G>>, XpbdError> {
    let joint = match compliance {
        Some(cs) => joint.with_compliance(cs)?,
        None => joint,
    };
    let joint = match damping {
        Some(ds) => joint.with_damping(ds)?,
        None => joint,
    };
    Ok(Box::new(joint))
}
