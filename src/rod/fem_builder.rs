//! [`FemRod::add_from_poses`]: a finite-element rod of any initial shape (a helix, a
//! polyline, a straight rod with twisted frames) put into a world from its nodal poses.

use super::element::RodElement;
use super::fem_rod::{FemRod, FemRodError, FemRodIds, RodClamp, RodSolve};
use super::gauss::Integration;
use super::material::RodMaterial;
use crate::lie::{LieGroup, Pose, Real};
use crate::linalg::BandScalar;
use crate::xpbd::{Body, World};
use nalgebra::Vector3;

/// A rod given by its nodal poses, for [`FemRod::add_from_poses`].
#[derive(Debug, Clone, PartialEq)]
pub struct PosedRod<T: Real, G: LieGroup<T>> {
    /// Name of the rod's system (diagnostics).
    pub name: String,
    /// The node poses in order along the rod (positions m, world frame; director frames
    /// d₁, d₂, d₃ → world): n(N − 1) + 1 of them for n elements of N nodes, element e
    /// owning nodes e(N − 1) … e(N − 1) + N − 1.
    pub poses: Vec<Pose<T, G>>,
    /// The rest length l of each element, m (n entries, each > 0): the arc length of
    /// the centre line it spans.
    pub element_lengths: Vec<T>,
    /// Gauss points per element (Section 6.3.5).
    pub integration: Integration,
    /// Clamped ends (fixed bodies).
    pub clamp: RodClamp,
    /// Rayleigh damping b of every row, s (≥ 0).
    pub damping: T,
    /// Constant precurvature u* (rad/m, director frame) at every Gauss point, with the
    /// shear rest value v* = e₃; `None`: both rest strains are those of the initial
    /// poses at each Gauss point ([`RodElement::with_rest_strains`]: the initial shape
    /// is the rest shape).
    pub precurvature: Option<Vector3<T>>,
}

impl<T: BandScalar, G: LieGroup<T>, const N: usize> FemRod<T, G, N> {
    /// Adds the rod `spec` of `material` to `world`: one body per node with the lumped
    /// mass and inertia of Section 6.3.6 (computed from each element's rest length),
    /// the clamped ends as fixed bodies, and the rod system. Without a precurvature
    /// the initial shape is stress-free; with one, the shear rows have v* = e₃ (108)
    /// and the curvature rows u* = the precurvature.
    ///
    /// # Errors
    /// [`FemRodError::InvalidRod`] for no elements (`"elements"`), a node count that is
    /// not n(N − 1) + 1 (`"nodes"`), or a bad damping; [`FemRodError::Rod`] for a rest
    /// length the element rejects ([`super::RodError::InvalidLength`]), a non-finite
    /// precurvature, or initial poses whose curvature cannot be evaluated;
    /// [`FemRodError::World`] if the world rejects a node body (non-finite pose, a mass
    /// that is not representable). On error the world may hold some of the node bodies
    /// already added.
    pub fn add_from_poses(
        world: &mut World<T, G>,
        material: &RodMaterial<T>,
        spec: &PosedRod<T, G>,
    ) -> Result<FemRodIds, FemRodError> {
        Self::add_from_poses_with(world, material, spec, RodSolve::Banded)
    }

    /// As [`FemRod::add_from_poses`], with the rod projected by `solve`
    /// ([`RodSolve`]).
    ///
    /// # Errors
    /// As [`FemRod::add_from_poses`].
    pub fn add_from_poses_with(
        world: &mut World<T, G>,
        material: &RodMaterial<T>,
        spec: &PosedRod<T, G>,
        solve: RodSolve,
    ) -> Result<FemRodIds, FemRodError> {
        let n = spec.element_lengths.len();
        if n == 0 {
            return Err(FemRodError::InvalidRod {
                field: "elements",
                value: "0".into(),
                reason: "a rod needs at least one element",
            });
        }
        let node_count = n * (N - 1) + 1;
        if spec.poses.len() != node_count {
            return Err(FemRodError::InvalidRod {
                field: "nodes",
                value: spec.poses.len().to_string(),
                reason: "a rod of n elements with N nodes each has n(N − 1) + 1 nodes",
            });
        }
        let mut elements = Vec::with_capacity(n);
        let mut mass = vec![T::zero(); node_count];
        let mut inertia = vec![Vector3::zeros(); node_count];
        for (e, &l) in spec.element_lengths.iter().enumerate() {
            let first = e * (N - 1);
            let element = RodElement::<T, N>::new(l, material, spec.integration)?;
            let element = match &spec.precurvature {
                Some(u) => element.with_precurvature(u)?,
                None => {
                    let rest: [Pose<T, G>; N] = std::array::from_fn(|j| spec.poses[first + j]);
                    element.with_rest_strains(&rest)?
                }
            };
            for (j, s) in element.lumped_nodal_inertia(material).iter().enumerate() {
                mass[first + j] += s.mass;
                inertia[first + j] += s.inertia;
            }
            elements.push(element);
        }
        let mut nodes = Vec::with_capacity(node_count);
        for (k, pose) in spec.poses.iter().enumerate() {
            let clamped = match spec.clamp {
                RodClamp::Free => false,
                RodClamp::Start => k == 0,
                RodClamp::End => k + 1 == node_count,
                RodClamp::Both => k == 0 || k + 1 == node_count,
            };
            let body = if clamped {
                Body::fixed(pose.position, pose.rotation)?
            } else {
                Body::dynamic(mass[k], inertia[k], pose.position, pose.rotation)?
            };
            nodes.push(world.add_body(body)?);
        }
        let rod =
            Self::new(spec.name.clone(), nodes.clone(), elements, spec.damping)?.with_solve(solve);
        let system = world.add_system(rod)?;
        Ok(FemRodIds { system, nodes })
    }
}
