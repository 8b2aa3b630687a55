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

/// Largest accepted element count of one rod (10⁶): beyond it the band does not fit a
/// workstation's memory.
pub const MAX_ROD_ELEMENTS: usize = 1_000_000;

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
    /// Number of elements (fem) or segments (rigid_chain), ≥ 1; a whole-number float
    /// (`1e2`) is accepted, as for every count.
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

fn invalid(path: FieldPath, message: impl Into<String>) -> SceneError {
    SceneError::new(SceneErrorKind::Invalid, path, message)
}

fn positive(path: FieldPath, what: &str, unit: &str, x: f64) -> Result<(), SceneError> {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        Err(invalid(
            path,
            format!(
                "{what} must be positive and finite ({unit}), got {}",
                num(x)
            ),
        ))
    }
}

fn finite3(path: FieldPath, what: &str, v: &[f64; 3]) -> Result<(), SceneError> {
    match v.iter().position(|x| !x.is_finite()) {
        None => Ok(()),
        Some(i) => Err(invalid(
            path.index(i),
            format!("{what} must be finite, got {}", num(v[i])),
        )),
    }
}

fn nonzero3(path: FieldPath, what: &str, v: &[f64; 3]) -> Result<(), SceneError> {
    finite3(path.clone(), what, v)?;
    if v.iter().all(|&x| x == 0.0) {
        return Err(invalid(path, format!("{what} must be a non-zero vector")));
    }
    Ok(())
}

/// A resolved node reference: the node index, or what is wrong.
pub(crate) fn node_index(rod: &RodSpec, node: &NodeRef) -> Result<usize, String> {
    let n = rod.node_count();
    match node {
        NodeRef::Name(s) if s == "base" => Ok(0),
        NodeRef::Name(s) if s == "tip" => Ok(n - 1),
        NodeRef::Name(s) => s
            .parse::<i64>()
            .map_err(|_| {
                format!(
                    "'{s}' is not a node of rod '{}': use base, tip or an index 0..{}",
                    rod.name,
                    n - 1
                )
            })
            .and_then(|i| node_index(rod, &NodeRef::Index(i))),
        NodeRef::Index(i) => usize::try_from(*i).ok().filter(|&k| k < n).ok_or_else(|| {
            format!(
                "rod '{}' has nodes 0..{} ({n} nodes), so there is no node {i}",
                rod.name,
                n - 1
            )
        }),
    }
}

/// If `name` is `"<rod>:<node>"` for a rod of `rods`: the rod's index and the node's,
/// or the message saying why the node does not exist. `None` if it names no rod.
pub(crate) fn resolve_node(rods: &[RodSpec], name: &str) -> Option<Result<(usize, usize), String>> {
    let (rod, node) = name.split_once(':')?;
    let r = rods.iter().position(|x| x.name == rod)?;
    Some(node_index(&rods[r], &NodeRef::Name(node.to_string())).map(|k| (r, k)))
}

/// The section's area π r² and second moment π r⁴/4, the mass ρA and rotational
/// inertia ρI per metre and the stiffnesses EA, EI must be positive and finite (in
/// f64), else the rod's bodies get an infinite or zero mass or inertia: names the field
/// that makes them so (the radius, then the density, then Young's modulus).
fn check_section(path: &FieldPath, rod: &RodSpec) -> Result<(), SceneError> {
    let ok = |x: f64| x.is_finite() && x > 0.0;
    let r = rod.radius;
    let area = std::f64::consts::PI * r * r;
    let moment = 0.25 * area * r * r;
    if !(ok(area) && ok(moment)) {
        return Err(invalid(
            path.key("radius"),
            format!(
                "the radius {} m makes the section's area π r² = {} m² and second moment π r⁴/4 = {} m⁴; both must be positive and finite",
                num(r),
                num(area),
                num(moment)
            ),
        ));
    }
    let m = &rod.material;
    for (key, what, unit, value, per_m) in [
        (
            "density",
            "density",
            "kg/m³",
            m.density,
            [("mass ρA", "kg/m"), ("inertia ρI", "kg·m")],
        ),
        (
            "youngs_modulus",
            "Young's modulus",
            "Pa",
            m.youngs_modulus,
            [
                ("axial stiffness EA", "N"),
                ("bending stiffness EI", "N·m²"),
            ],
        ),
    ] {
        for ((name, u), x) in per_m.iter().zip([value * area, value * moment]) {
            if !ok(x) {
                return Err(invalid(
                    path.key("material").key(key),
                    format!(
                        "the {what} {} {unit} with radius {} m makes the {name} per metre = {} {u}; it must be positive and finite",
                        num(value),
                        num(r),
                        num(x)
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn check_material(path: FieldPath, m: &RodMaterialSpec) -> Result<(), SceneError> {
    positive(
        path.key("youngs_modulus"),
        "Young's modulus",
        "Pa",
        m.youngs_modulus,
    )?;
    positive(path.key("density"), "the density", "kg/m³", m.density)?;
    let nu = m.poisson_ratio;
    if !(nu.is_finite() && nu > -1.0 && nu <= 0.5) {
        return Err(invalid(
            path.key("poisson_ratio"),
            format!("the Poisson ratio must be in (-1, 0.5], got {}", num(nu)),
        ));
    }
    if let Some(k) = m.shear_correction {
        positive(
            path.key("shear_correction"),
            "the shear correction κ",
            "dimensionless; 1 = none",
            k,
        )?;
    }
    Ok(())
}

fn check_centerline(path: FieldPath, rod: &RodSpec) -> Result<(), SceneError> {
    match &rod.centerline {
        CenterlineSpec::Straight {
            start,
            direction,
            length,
        } => {
            finite3(path.key("start"), "the start point", start)?;
            nonzero3(path.key("direction"), "the direction", direction)?;
            positive(path.key("length"), "the length", "m", *length)
        }
        CenterlineSpec::Helix {
            centre,
            axis,
            radius,
            turns,
            pitch,
            length,
        } => {
            finite3(path.key("centre"), "the centre", centre)?;
            nonzero3(path.key("axis"), "the axis", axis)?;
            positive(path.key("radius"), "the coil radius", "m", *radius)?;
            positive(path.key("turns"), "the number of turns", "turns", *turns)?;
            match (pitch, length) {
                (Some(p), None) => positive(path.key("pitch"), "the pitch", "m per turn", *p),
                (None, Some(l)) => positive(path.key("length"), "the axial length", "m", *l),
                _ => Err(invalid(
                    path,
                    "a helix needs exactly one of `pitch` (m per turn) or `length` (m along the axis)",
                )),
            }
        }
        CenterlineSpec::Polyline { points } => {
            if points.len() < 2 {
                return Err(invalid(
                    path.key("points"),
                    format!("a polyline needs at least 2 points, got {}", points.len()),
                ));
            }
            for (i, p) in points.iter().enumerate() {
                finite3(path.key("points").index(i), "a polyline point", p)?;
            }
            let dir = |i: usize| {
                let d: Vec<f64> = (0..3).map(|k| points[i + 1][k] - points[i][k]).collect();
                let n = d.iter().map(|x| x * x).sum::<f64>().sqrt();
                (d, n)
            };
            for i in 0..points.len() - 1 {
                let (d, n) = dir(i);
                if !(n > 0.0 && n.is_finite()) {
                    return Err(invalid(
                        path.key("points").index(i + 1),
                        format!("polyline points {i} and {} coincide; consecutive points must be distinct", i + 1),
                    ));
                }
                if i > 0 {
                    let (e, m) = dir(i - 1);
                    let cos = (0..3).map(|k| d[k] * e[k]).sum::<f64>() / (n * m);
                    if cos < -1.0 + 1e-12 {
                        return Err(invalid(
                            path.key("points").index(i),
                            format!("the polyline turns back on itself at point {i}: the tangent there is undefined"),
                        ));
                    }
                }
            }
            if rod.elements != points.len() - 1 {
                return Err(invalid(
                    path.parent_key("elements"),
                    format!(
                        "a polyline rod has one element (segment) per polyline segment: elements must be {} for {} points, got {}",
                        points.len() - 1,
                        points.len(),
                        rod.elements
                    ),
                ));
            }
            Ok(())
        }
    }
}

trait ParentKey {
    fn parent_key(&self, k: &str) -> FieldPath;
}

impl ParentKey for FieldPath {
    /// The sibling `k` of this path's last key.
    fn parent_key(&self, k: &str) -> FieldPath {
        let mut p = self.clone();
        p.0.pop();
        p.key(k)
    }
}

/// Checks rod `i` at `path` against the bodies and the rods before it.
pub(crate) fn check(
    path: &FieldPath,
    rod: &RodSpec,
    bodies: &[BodySpec],
    earlier: &[RodSpec],
) -> Result<(), SceneError> {
    let name = &rod.name;
    let np = path.key("name");
    if name.trim().is_empty() {
        return Err(invalid(np, "a rod name must not be empty"));
    }
    if name.contains(':') || name.chars().any(char::is_control) {
        return Err(invalid(
            np,
            format!("a rod name must not contain ':' (its nodes are named '<rod>:<index>') or control characters, got {name:?}"),
        ));
    }
    if name == WORLD {
        return Err(invalid(
            np,
            "'world' is reserved for the fixed world frame; choose another rod name",
        ));
    }
    if bodies.iter().any(|b| &b.name == name) {
        return Err(invalid(
            np,
            format!("'{name}' is already a body's name; rod and body names must differ"),
        ));
    }
    if earlier.iter().any(|r| &r.name == name) {
        return Err(invalid(
            np,
            format!("two rods are named '{name}'; names must be unique"),
        ));
    }
    if let Some(b) = bodies
        .iter()
        .find(|b| b.name.split_once(':').is_some_and(|(r, _)| r == name))
    {
        return Err(invalid(
            np,
            format!("body '{}' has a name of the form '{name}:…', which names this rod's nodes; rename the body or the rod", b.name),
        ));
    }
    match rod.discretization {
        Discretization::Fem if !(1..=3).contains(&rod.order) => {
            return Err(invalid(
                path.key("order"),
                format!("a finite-element rod has order 1 (linear), 2 (quadratic) or 3 (cubic), got {}", rod.order),
            ))
        }
        Discretization::RigidChain if rod.order != 1 => {
            return Err(invalid(
                path.key("order"),
                format!("a rigid chain has no element order: give 1 or leave `order` out, got {}", rod.order),
            ))
        }
        Discretization::RigidChain if rod.solve == RodSolveSpec::GaussPoint => {
            return Err(invalid(
                path.key("solve"),
                "a rigid chain is always solved as one block-banded system: only \"banded\" applies",
            ))
        }
        Discretization::RigidChain if rod.integration == IntegrationSpec::Full => {
            return Err(invalid(
                path.key("integration"),
                "a rigid chain evaluates its strains at one point per segment: only \"reduced\" applies",
            ))
        }
        _ => {}
    }
    if rod.elements == 0 || rod.elements > MAX_ROD_ELEMENTS {
        return Err(invalid(
            path.key("elements"),
            format!(
                "elements must be between 1 and {MAX_ROD_ELEMENTS}, got {}",
                rod.elements
            ),
        ));
    }
    if rod.node_count() == 2
        && rod.start == EndCondition::Clamped
        && rod.end == EndCondition::Clamped
    {
        return Err(invalid(
            path.key("elements"),
            "a rod of two nodes clamped at both ends has no node left to move",
        ));
    }
    check_material(path.key("material"), &rod.material)?;
    positive(path.key("radius"), "the radius", "m", rod.radius)?;
    check_section(path, rod)?;
    if !(rod.damping.is_finite() && rod.damping >= 0.0) {
        return Err(invalid(
            path.key("damping"),
            format!(
                "damping must be finite and >= 0 (s; 0 = undamped), got {}",
                num(rod.damping)
            ),
        ));
    }
    check_centerline(path.key("centerline"), rod)?;
    if let Some(u) = &rod.precurvature {
        finite3(path.key("precurvature"), "the precurvature", u)?;
    }
    for (i, load) in rod.loads.iter().enumerate() {
        let p = path.key("loads").index(i);
        let k = node_index(rod, &load.node).map_err(|m| invalid(p.key("node"), m))?;
        if rod.is_fixed(k) {
            return Err(invalid(
                p.key("node"),
                format!("node {k} of rod '{name}' is a clamped end: a load there would do nothing"),
            ));
        }
        finite3(p.key("force"), "the force", &load.force)?;
        finite3(p.key("torque"), "the torque", &load.torque)?;
    }
    for (i, m) in rod.motion.iter().enumerate() {
        let p = path.key("motion").index(i);
        let (cond, key) = match m.end {
            RodEnd::Start => (rod.start, "start"),
            RodEnd::End => (rod.end, "end"),
        };
        if cond != EndCondition::Clamped {
            return Err(invalid(
                p.key("end"),
                format!("a prescribed motion moves a clamped end: set `{key} = \"clamped\"` on rod '{name}'"),
            ));
        }
        if rod.motion[..i].iter().any(|o| o.end == m.end) {
            return Err(invalid(
                p.key("end"),
                format!("the {key} of rod '{name}' has two motions; give one"),
            ));
        }
        finite3(p.key("velocity"), "the velocity", &m.velocity)?;
        finite3(p.key("spin_deg_per_s"), "the spin", &m.spin_deg_per_s)?;
        if let Some(t) = m.until {
            positive(p.key("until"), "the stop time", "s", t)?;
        }
    }
    Ok(())
}
