//! `[[rods]]`: Cosserat rods in the scene file (paper Section 6), as a chain of rigid
//! bodies (6.2, [`crate::rod::RigidChainBuilder`]) or finite elements (6.3,
//! [`crate::rod::FemRod`]), built after the `[[bodies]]` and before the joints.
//!
//! ```toml
//! [[rods]]
//! name = "beam"
//! discretization = "fem"          # "fem" or "rigid_chain"
//! order = 3                       # fem: 1 linear, 2 quadratic, 3 cubic; rigid_chain: 1
//! elements = 5                    # fem: elements; rigid_chain: segments (bodies − 1)
//! integration = "reduced"         # "reduced" (order points) or "full" (order + 1);
//!                                 # rigid_chain: "reduced" only (one point per segment)
//! solve = "banded"                # fem: "banded" (all Gauss points in one block-banded
//!                                 # system, default) or "gauss_point" (one point at a
//!                                 # time, Figure 11); rigid_chain: "banded" only
//! radius = 0.05                   # m, solid circular section
//! damping = 0.2                   # Rayleigh b of every row, s (default 0)
//! material = { youngs_modulus = 5e6, poisson_ratio = 0.4, density = 1000.0 }
//!                                 # Pa, –, kg/m³; optional shear_correction = κ
//!                                 # (default (126); 1 switches the correction off)
//! centerline = { type = "straight", start = [0, 0, 0], direction = [1, 0, 0], length = 1.0 }
//! # centerline = { type = "helix", centre = [0, 0, 0], axis = [0, 0, 1], radius = 0.1,
//! #                turns = 15, length = 1.4 }   # or pitch = m per turn instead of length
//! # centerline = { type = "polyline", points = [[0, 0, 0], [0.5, 0, 0], [1, 0.2, 0]] }
//! precurvature = [0.0, 0.0, 0.0]  # constant u*, 1/m, director frame (optional)
//! start = "clamped"               # "clamped" or "free" (default free), s = 0
//! end = "free"                    # s = L
//!
//! [[rods.loads]]
//! node = "tip"                    # "tip", "base" or a node index (0 = base)
//! force = [0.0, -25.0, 0.0]       # N, world frame (a dead load)
//! torque = [0.0, 0.0, 0.0]        # N·m, world frame (a dead moment)
//!
//! [[rods.motion]]                 # prescribed motion of a clamped end
//! end = "start"                   # "start" or "end"; that end must be clamped
//! velocity = [0.0, 0.0, -0.01]    # m/s, world frame
//! spin_deg_per_s = [0.0, 0.0, 0.0] # deg/s, world frame
//! until = 10.0                    # s: the end holds still afterwards (default never)
//! ```
//!
//! # Nodes
//! A rod of n elements of order k has n·k + 1 nodes (fem), a rigid chain of n segments
//! n + 1 bodies; node 0 is the start (s = 0), the last the end (s = L). Every node is a
//! body of the world named `"<rod>:<index>"` (its columns in `states.csv`), and
//! `[[joints]]` take `"<rod>:<index>"`, `"<rod>:base"` (node 0) and `"<rod>:tip"` (the
//! last node) as `body1`/`body2`. A rod name must therefore not contain `:`, and no
//! body may be named `"<rod>:…"`.
//!
//! # Centre lines
//! * `straight`: from `start` along `direction` (normalised) for `length`; every
//!   director frame is the smallest rotation taking world z to the direction.
//! * `helix`: around the axis through `centre` along `axis` (normalised), of coil
//!   `radius`, `turns` turns rising `pitch` per turn (or `length` in all, along the
//!   axis), right-handed about the axis, starting at `centre + radius·e` (e the world
//!   axis least aligned with the axis, made orthogonal to it). Nodes are equispaced in
//!   arc length; the director frames are the Frenet frames (d₁ towards the axis,
//!   d₃ the tangent). A rigid chain takes the frames and the arc lengths
//!   l = L/(N − 1) as its rest state (93) with v* = e₃
//!   ([`crate::rod::RigidChainBuilder::from_rest_frames`], Section 6.2): its bodies
//!   then lie on the coaxial helix of the same pitch and radius r θ/sin θ (θ the turn
//!   per segment; 1.11 r at θ = π/4), its joints (the chord midpoints) at
//!   r (θ/2)/sin(θ/2) ≈ r, and it has the helix's spring rate. (Bodies on the helix
//!   itself would put the joints at r cos(θ/2): a spring of smaller coil radius.)
//! * `polyline`: through `points`; `elements` must be the number of segments
//!   (points − 1): the points are the element end nodes (fem; the interior nodes of an
//!   element lie on its segment, their frames interpolated geodesically) or the bodies
//!   (rigid chain). Frames as [`crate::rod::RigidChainBuilder::polyline`].
//!
//! # Rest shape
//! Without `precurvature` the initial shape is the rest shape: both rest strains are
//! those of the initial nodes (fem: [`crate::rod::RodElement::with_rest_strains`],
//! rigid chain: [`crate::rod::RestShape::Initial`], or for a helix the rest state of
//! [`crate::rod::RigidChainBuilder::from_rest_frames`]), so a helix starts unstressed;
//! with it, u* is that constant vector and the shear rest value v* = e₃.
//!
//! # Solve
//! Each rod is one system of the world ([`crate::rod::FemRod`],
//! [`crate::rod::RigidChainRod`]): its rows are assembled into one block-banded
//! λ-system and solved at once in every iteration, before the joints (Section 8.2), and
//! they are part of the residuals (51)–(52).
//!
//! # Loads and motion
//! `force` is the node body's [`crate::xpbd::Body::force`]; `torque` is a dead moment,
//! converted to the node's body frame before every step. A prescribed end is a fixed
//! body moved by its schedule before every step ([`crate::rod::end_motion`]): exact
//! for the rod's solve. Loads on a clamped node are rejected (they would do nothing).

use super::error::{num, SceneError, SceneErrorKind};
use super::format::{BodySpec, WORLD};
use super::path::FieldPath;
use serde::{Deserialize, Serialize};

mod check;
pub(crate) use check::{check, node_index, resolve_node};

/// Largest accepted element count of one rod (10⁵); the scene's bodies and the nodes
/// of all its rods together are bounded too ([`super::MAX_SCENE_BODIES`], 10⁵).
pub const MAX_ROD_ELEMENTS: usize = 100_000;

/// How a rod is discretised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Discretization {
    /// The chain of rigid bodies of Section 6.2.
    RigidChain,
    /// Finite elements of Section 6.3.
    Fem,
}

impl Discretization {
    /// The name as written in the scene file.
    pub fn name(self) -> &'static str {
        match self {
            Discretization::RigidChain => "rigid_chain",
            Discretization::Fem => "fem",
        }
    }
}

/// Gauss points per element (Section 6.3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IntegrationSpec {
    /// `order` points.
    #[default]
    Reduced,
    /// `order + 1` points.
    Full,
}

/// How a fem rod projects its Gauss-point constraints each iteration
/// ([`crate::rod::RodSolve`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RodSolveSpec {
    /// `banded`: all Gauss points at once, one block-banded system (Section 8.2).
    #[default]
    Banded,
    /// `gauss_point`: one Gauss point at a time (the comparison of Figure 11).
    GaussPoint,
}

/// A rod end's boundary condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndCondition {
    /// Free.
    #[default]
    Free,
    /// Position and orientation held (a fixed body).
    Clamped,
}

/// Which end of a rod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RodEnd {
    /// s = 0 (node 0).
    Start,
    /// s = L (the last node).
    End,
}

/// `material = { ... }`: isotropic linear elasticity of the rod.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RodMaterialSpec {
    /// Young's modulus E, Pa (> 0).
    pub youngs_modulus: f64,
    /// Poisson ratio ν, in (−1, 0.5].
    pub poisson_ratio: f64,
    /// Density ρ, kg/m³ (> 0).
    pub density: f64,
    /// Shear correction κ on the shear stiffness (> 0; default (126); 1 = none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shear_correction: Option<f64>,
}

/// `centerline = { type = ... }`: the initial centre line (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum CenterlineSpec {
    /// A straight line.
    Straight {
        /// The start point, m, world frame (default the origin).
        #[serde(default)]
        start: [f64; 3],
        /// The direction, world frame (non-zero).
        direction: [f64; 3],
        /// The length L, m (> 0).
        length: f64,
    },
    /// A circular helix.
    Helix {
        /// A point on the axis at the start of the helix, m, world frame.
        #[serde(default)]
        centre: [f64; 3],
        /// The axis direction, world frame (non-zero).
        axis: [f64; 3],
        /// The coil radius, m (> 0).
        radius: f64,
        /// Number of turns (> 0).
        turns: f64,
        /// Rise per turn along the axis, m (> 0); give this or `length`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pitch: Option<f64>,
        /// Total rise along the axis, m (> 0); give this or `pitch`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        length: Option<f64>,
    },
    /// A polyline.
    Polyline {
        /// The points, m, world frame (at least 2, consecutive ones distinct).
        points: Vec<[f64; 3]>,
    },
}

/// A node of a rod: `"base"`, `"tip"` or an index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "a rod node: \"base\", \"tip\" or a node index (0 = base)"
)]
pub enum NodeRef {
    /// A node index (0-based from the start).
    Index(i64),
    /// `"base"` or `"tip"`.
    Name(String),
}

/// `[[rods.loads]]`: a point load at a node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RodLoadSpec {
    /// The loaded node.
    pub node: NodeRef,
    /// Force, N, world frame.
    #[serde(default)]
    pub force: [f64; 3],
    /// Moment, N·m, world frame.
    #[serde(default)]
    pub torque: [f64; 3],
}

/// `[[rods.motion]]`: prescribed motion of a clamped end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RodMotionSpec {
    /// Which end.
    pub end: RodEnd,
    /// Velocity, m/s, world frame.
    #[serde(default)]
    pub velocity: [f64; 3],
    /// Angular velocity, degrees per second, world frame.
    #[serde(default)]
    pub spin_deg_per_s: [f64; 3],
    /// The motion stops at this time, s (> 0; default never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<f64>,
}

/// `[[rods]]`: one rod (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RodSpec {
    /// Unique name among rods (no `:`, not `world`, not a body's name).
    pub name: String,
    /// `fem` or `rigid_chain`.
    pub discretization: Discretization,
    /// Element order: fem 1, 2 or 3; rigid_chain 1 (default 1).
    /// A whole-number float (`1e0`) is accepted, as for every count.
    #[serde(
        default = "one",
        deserialize_with = "super::format::count::deserialize"
    )]
    pub order: usize,
    /// Number of elements (fem) or segments (rigid_chain), 1 to [`MAX_ROD_ELEMENTS`]
    /// (10⁵), the scene's bodies and rod nodes together at most
    /// [`super::MAX_SCENE_BODIES`] (10⁵); a whole-number float (`1e2`) is accepted, as
    /// for every count.
    #[serde(deserialize_with = "super::format::count::deserialize")]
    pub elements: usize,
    /// Gauss points per element.
    #[serde(default)]
    pub integration: IntegrationSpec,
    /// fem: how the Gauss points are projected (default `banded`); rigid_chain:
    /// `banded` only.
    #[serde(default)]
    pub solve: RodSolveSpec,
    /// The material.
    pub material: RodMaterialSpec,
    /// Section radius r, m (> 0).
    pub radius: f64,
    /// Rayleigh damping b of every row, s (≥ 0).
    #[serde(default)]
    pub damping: f64,
    /// The initial centre line.
    #[serde(alias = "centreline")]
    pub centerline: CenterlineSpec,
    /// Constant precurvature u*, 1/m, director frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precurvature: Option<[f64; 3]>,
    /// Boundary condition at s = 0.
    #[serde(default)]
    pub start: EndCondition,
    /// Boundary condition at s = L.
    #[serde(default)]
    pub end: EndCondition,
    /// Point loads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loads: Vec<RodLoadSpec>,
    /// Prescribed end motions (at most one per end).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub motion: Vec<RodMotionSpec>,
}

fn one() -> usize {
    1
}

impl RodSpec {
    /// Number of nodes (bodies): fem n·order + 1, rigid_chain n + 1.
    pub fn node_count(&self) -> usize {
        match self.discretization {
            Discretization::Fem => self.elements * self.order + 1,
            Discretization::RigidChain => self.elements + 1,
        }
    }

    /// Whether node `k` is a fixed body (a clamped end).
    pub fn is_fixed(&self, k: usize) -> bool {
        (k == 0 && self.start == EndCondition::Clamped)
            || (k + 1 == self.node_count() && self.end == EndCondition::Clamped)
    }

    /// The body name of node `k`: `"<rod>:<k>"`.
    pub fn node_name(&self, k: usize) -> String {
        format!("{}:{k}", self.name)
    }

    /// Whether the rod does work on the scene (a load or a prescribed motion).
    pub fn is_driven(&self) -> bool {
        !self.loads.is_empty() || !self.motion.is_empty()
    }
}
