//! Building the `[[rods]]` of a scene ([`super::rod`]) into a world: the centre-line
//! geometry, the rods' bodies and systems or joints, their loads, and the schedules
//! applied before every step ([`super::BuiltScene::step`]).

use super::path::FieldPath;
use super::rod::{
    CenterlineSpec, Discretization, EndCondition, IntegrationSpec, RodEnd, RodSolveSpec, RodSpec,
};
use crate::lie::real::c;
use crate::lie::{LieGroup, Pose, Real};
use crate::linalg::BandScalar;
use crate::rod::fem_rod::rotation_from_z;
use crate::rod::{
    EndMotion, FemRod, Integration, PosedRod, RestShape, RigidChainBuilder, RodClamp, RodMaterial,
    RodSolve,
};
use crate::xpbd::{BodyId, SystemId, World, XpbdError};
use nalgebra::{Matrix3, Quaternion, Rotation3, UnitQuaternion, Vector3};

/// What a `[[rods]]` entry added to the world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltRod {
    /// The rod's name.
    pub name: String,
    /// `fem` or `rigid_chain`.
    pub discretization: Discretization,
    /// The node bodies, start (s = 0) first; body k is named `"<rod>:<k>"`.
    pub nodes: Vec<BodyId>,
    /// The rod's system: a [`crate::rod::FemRod`] (fem) or a
    /// [`crate::rod::RigidChainRod`] (rigid_chain), both solved as one block-banded
    /// λ-system per iteration.
    pub system: SystemId,
}

/// Per-step schedules of the rods: end motions and dead moments.
pub(crate) struct RodDrivers<T: Real, G: LieGroup<T>> {
    pub(crate) motions: Vec<EndMotion<T, G>>,
    /// (node, moment in N·m, world frame), one entry per node.
    pub(crate) torques: Vec<(BodyId, Vector3<T>)>,
}

impl<T: Real, G: LieGroup<T>> Default for RodDrivers<T, G> {
    fn default() -> Self {
        Self {
            motions: Vec::new(),
            torques: Vec::new(),
        }
    }
}

impl<T: Real, G: LieGroup<T>> RodDrivers<T, G> {
    /// Sets the driven ends to their poses at `t` (s) and the dead moments into the
    /// nodes' body frames.
    pub(crate) fn apply(&self, world: &mut World<T, G>, t: T) -> Result<(), XpbdError> {
        for m in &self.motions {
            if let Err(crate::rod::RodError::World(e)) = m.apply(world, t) {
                return Err(e);
            }
        }
        for (id, tau) in &self.torques {
            if let Some(b) = world.body_mut(*id) {
                b.torque = b.orientation.act_inv(tau);
            }
        }
        Ok(())
    }
}

fn v3<T: Real>(a: &[f64; 3]) -> Vector3<T> {
    Vector3::new(c::<T>(a[0]), c::<T>(a[1]), c::<T>(a[2]))
}

/// A rotation from an orthonormal f64 matrix, through its unit quaternion (Shepperd's
/// method, accurate at every angle; the rotation vector is not near π).
fn rotation<T: Real, G: LieGroup<T>>(m: &Matrix3<f64>) -> Result<G, String> {
    let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(*m));
    G::from_quaternion(&Quaternion::new(
        c::<T>(q.w),
        c::<T>(q.i),
        c::<T>(q.j),
        c::<T>(q.k),
    ))
    .map_err(|e| e.to_string())
}

fn unit(a: &[f64; 3]) -> Vector3<f64> {
    Vector3::from(*a).normalize()
}

/// An error of a rod: the key under the rod's path, and the message.
type Failure = (FieldPath, String);

/// Node poses and the rest length of each element (segment).
type Centerline<T, G> = (Vec<Pose<T, G>>, Vec<T>);

/// Node poses along the centre line (`count` nodes, equispaced in arc length, or the
/// polyline's vertices with `per_segment` − 1 nodes between) and the rest length of each
/// of the `segments` pieces.
fn centerline<T: Real, G: LieGroup<T>>(
    rod: &RodSpec,
    path: &FieldPath,
    material: &RodMaterial<T>,
    per_segment: usize,
) -> Result<Centerline<T, G>, Failure> {
    let n = rod.elements;
    let count = n * per_segment + 1;
    match &rod.centerline {
        CenterlineSpec::Straight {
            start,
            direction,
            length,
        } => {
            let d = v3::<T>(direction).normalize();
            let r = rotation_from_z::<T, G>(&d);
            let l = c::<T>(*length);
            let step = l / c::<T>((count - 1) as f64);
            let p0 = v3::<T>(start);
            let poses = (0..count)
                .map(|k| Pose::new(p0 + d * (step * c::<T>(k as f64)), r))
                .collect();
            Ok((poses, vec![l / c::<T>(n as f64); n]))
        }
        CenterlineSpec::Helix {
            centre,
            axis,
            radius,
            turns,
            pitch,
            length,
        } => {
            let a = unit(axis);
            let e = [Vector3::x(), Vector3::y(), Vector3::z()]
                .into_iter()
                .min_by(|u, v| a.dot(u).abs().total_cmp(&a.dot(v).abs()))
                .unwrap_or_else(Vector3::x);
            let e1 = (e - a * a.dot(&e)).normalize();
            let e2 = a.cross(&e1);
            let total = 2.0 * std::f64::consts::PI * turns;
            let rise = match (pitch, length) {
                (Some(p), _) => p / (2.0 * std::f64::consts::PI),
                (None, Some(l)) => l / total,
                (None, None) => 0.0,
            };
            let speed = (radius * radius + rise * rise).sqrt();
            let poses = (0..count)
                .map(|k| {
                    let phi = total * k as f64 / (count - 1) as f64;
                    let radial = e1 * phi.cos() + e2 * phi.sin();
                    let p = Vector3::from(*centre) + radial * *radius + a * (rise * phi);
                    let t =
                        (e2 * phi.cos() - e1 * phi.sin()) * (radius / speed) + a * (rise / speed);
                    let nrm = -radial;
                    let b = t.cross(&nrm);
                    let m = Matrix3::from_columns(&[nrm, b, t]);
                    rotation::<T, G>(&m)
                        .map(|r| Pose::new(p.map(c::<T>), r))
                        .map_err(|e| (path.key("centerline"), e))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let l = c::<T>(total * speed / n as f64);
            Ok((poses, vec![l; n]))
        }
        CenterlineSpec::Polyline { points } => {
            let pts: Vec<Vector3<T>> = points.iter().map(v3::<T>).collect();
            let chain = RigidChainBuilder::<T, G>::polyline(*material, &pts)
                .map_err(|e| (path.key("centerline").key("points"), e.to_string()))?;
            let vertices = chain.poses();
            let mut poses = Vec::with_capacity(count);
            for (s, w) in vertices.windows(2).enumerate() {
                if s == 0 {
                    poses.push(w[0]);
                }
                let turn = w[1].rotation.boxminus(&w[0].rotation);
                for j in 1..per_segment {
                    let f = c::<T>(j as f64 / per_segment as f64);
                    poses.push(Pose::new(
                        w[0].position + (w[1].position - w[0].position) * f,
                        w[0].rotation.boxplus(&(turn * f)),
                    ));
                }
                poses.push(w[1]);
            }
            Ok((poses, chain.rest_lengths().to_vec()))
        }
    }
}

/// Adds rod `rod` (at `path`) to `world`: bodies, system or joints, forces; returns what
/// was added, and pushes its schedules into `drivers`.
pub(crate) fn add_rod<T: BandScalar, G: LieGroup<T>>(
    rod: &RodSpec,
    path: &FieldPath,
    world: &mut World<T, G>,
    drivers: &mut RodDrivers<T, G>,
) -> Result<BuiltRod, Failure> {
    let m = &rod.material;
    let mpath = path.key("material");
    let mut material = RodMaterial::circular(
        c::<T>(m.youngs_modulus),
        c::<T>(m.poisson_ratio),
        c::<T>(m.density),
        c::<T>(rod.radius),
    )
    .map_err(|e| {
        let key = match &e {
            crate::rod::RodError::InvalidMaterial {
                parameter: "radius",
                ..
            } => path.key("radius"),
            crate::rod::RodError::InvalidMaterial { parameter, .. } => mpath.key(parameter),
            _ => mpath.clone(),
        };
        (key, e.to_string())
    })?;
    if let Some(k) = m.shear_correction {
        material = material
            .with_shear_correction(c::<T>(k))
            .map_err(|e| (mpath.key("shear_correction"), e.to_string()))?;
    }
    let precurvature = rod.precurvature.as_ref().map(v3::<T>);
    let damping = c::<T>(rod.damping);
    let clamp = match (rod.start, rod.end) {
        (EndCondition::Free, EndCondition::Free) => RodClamp::Free,
        (EndCondition::Clamped, EndCondition::Free) => RodClamp::Start,
        (EndCondition::Free, EndCondition::Clamped) => RodClamp::End,
        (EndCondition::Clamped, EndCondition::Clamped) => RodClamp::Both,
    };
    let at_elements = |e: &dyn std::fmt::Display| (path.key("elements"), e.to_string());
    let (nodes, system) = match rod.discretization {
        Discretization::Fem => {
            let (poses, element_lengths) = centerline::<T, G>(rod, path, &material, rod.order)?;
            check_element_turns(&poses, rod.order).map_err(|m| (path.key("elements"), m))?;
            let spec = PosedRod {
                name: rod.name.clone(),
                poses,
                element_lengths,
                integration: match rod.integration {
                    IntegrationSpec::Reduced => Integration::Reduced,
                    IntegrationSpec::Full => Integration::Full,
                },
                clamp,
                damping,
                precurvature,
            };
            let solve = match rod.solve {
                RodSolveSpec::Banded => RodSolve::Banded,
                RodSolveSpec::GaussPoint => RodSolve::GaussPoint,
            };
            let ids = match rod.order {
                1 => FemRod::<T, G, 2>::add_from_poses_with(world, &material, &spec, solve),
                2 => FemRod::<T, G, 3>::add_from_poses_with(world, &material, &spec, solve),
                _ => FemRod::<T, G, 4>::add_from_poses_with(world, &material, &spec, solve),
            }
            .map_err(|e| at_elements(&e))?;
            (ids.nodes, ids.system)
        }
        Discretization::RigidChain => {
            let (poses, lengths) = centerline::<T, G>(rod, path, &material, 1)?;
            check_element_turns(&poses, 1).map_err(|m| (path.key("elements"), m))?;
            let chain = match &rod.centerline {
                // The helix's frames and arc lengths are the chain's rest state (93)
                // with v* = e₃: the bodies lie on the coaxial helix of radius
                // r θ/sin θ (θ the turn per segment), the joints near radius r.
                CenterlineSpec::Helix {
                    centre,
                    axis,
                    radius,
                    turns,
                    ..
                } => {
                    let theta = 2.0 * std::f64::consts::PI * turns / rod.elements as f64;
                    let widen = if theta.abs() > 1e-12 {
                        theta / theta.sin()
                    } else {
                        1.0
                    };
                    let a = unit(axis);
                    let start = poses[0].position.map(|x| x.to_f64());
                    let radial = start - Vector3::from(*centre);
                    let radial = radial - a * a.dot(&radial);
                    let base = Vector3::from(*centre)
                        + a.dot(&(start - Vector3::from(*centre))) * a
                        + radial * (widen * radius / radial.norm().max(f64::MIN_POSITIVE));
                    let frames: Vec<G> = poses.iter().map(|p| p.rotation).collect();
                    let b = RigidChainBuilder::from_rest_frames(
                        material,
                        base.map(c::<T>),
                        &frames,
                        lengths,
                    );
                    match precurvature {
                        Some(u) => {
                            b.and_then(|b| b.with_rest_shape(RestShape::UniformPrecurvature(u)))
                        }
                        None => b,
                    }
                }
                _ => {
                    let rest = match precurvature {
                        Some(u) => RestShape::UniformPrecurvature(u),
                        None => RestShape::Initial,
                    };
                    RigidChainBuilder::from_poses(material, poses)
                        .and_then(|b| b.with_rest_shape(rest))
                }
            };
            let chain = chain
                .and_then(|b| b.with_damping([damping; 6]))
                .map_err(|e| at_elements(&e))?
                .with_fixed_base(rod.start == EndCondition::Clamped)
                .with_fixed_tip(rod.end == EndCondition::Clamped);
            let built = chain
                .build_system(world, rod.name.clone())
                .map_err(|e| at_elements(&e))?;
            (built.bodies, built.system)
        }
    };
    let mut torques: Vec<(BodyId, Vector3<T>)> = Vec::new();
    for (i, load) in rod.loads.iter().enumerate() {
        let p = path.key("loads").index(i);
        let k = super::rod::node_index(rod, &load.node).map_err(|m| (p.key("node"), m))?;
        let id = nodes[k];
        let f = v3::<T>(&load.force);
        let tau = v3::<T>(&load.torque);
        if !f.iter().chain(tau.iter()).all(|x| x.is_finite()) {
            return Err((p.clone(), format!("the load is not finite in {}", T::NAME)));
        }
        if let Some(b) = world.body_mut(id) {
            b.force += f;
        }
        if tau != Vector3::zeros() {
            match torques.iter_mut().find(|(b, _)| *b == id) {
                Some((_, t)) => *t += tau,
                None => torques.push((id, tau)),
            }
        }
    }
    drivers.torques.extend(torques);
    let deg = std::f64::consts::PI / 180.0;
    for (i, mspec) in rod.motion.iter().enumerate() {
        let p = path.key("motion").index(i);
        let id = match mspec.end {
            RodEnd::Start => nodes[0],
            RodEnd::End => nodes[nodes.len() - 1],
        };
        let pose = world.bodies()[id.0].pose();
        let stop = mspec.until.map_or(c::<T>(f64::INFINITY), c::<T>);
        let motion = EndMotion::new(
            id,
            pose,
            v3::<T>(&mspec.velocity),
            v3::<T>(&mspec.spin_deg_per_s.map(|w| w * deg)),
            stop,
        )
        .map_err(|e| (p, e.to_string()))?;
        drivers.motions.push(motion);
    }
    Ok(BuiltRod {
        name: rod.name.clone(),
        discretization: rod.discretization,
        nodes,
        system,
    })
}

/// The element interpolation (99)–(100) is relative to each element's first node and
/// needs every node within angle π of it (Log's branch cut), as the rigid chain's
/// curvature (90) needs consecutive bodies within π; a curved centre line with too few
/// elements breaks that. Checked with a margin (0.9 π).
fn check_element_turns<T: Real, G: LieGroup<T>>(
    poses: &[Pose<T, G>],
    order: usize,
) -> Result<(), String> {
    let limit = 0.9 * std::f64::consts::PI;
    for (e, nodes) in poses.windows(order + 1).step_by(order).enumerate() {
        for (j, p) in nodes.iter().enumerate().skip(1) {
            let angle = p.rotation.boxminus(&nodes[0].rotation).norm().to_f64();
            if angle.is_nan() || angle > limit {
                return Err(format!(
                    "element {e}: node {j} is turned by {angle:.3} rad from the element's first node; an element may turn by at most 0.9π: use more elements"
                ));
            }
        }
    }
    Ok(())
}
