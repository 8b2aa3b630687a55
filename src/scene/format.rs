//! The scene file format, version 1: serde structs that mirror the TOML one to one.
//!
//! Every table rejects unknown fields, so a misspelt key is an error, not a silent
//! default. Numbers are read as `f64` and converted to the run's scalar when the world
//! is built ([`super::Scene::build`]). Units are SI throughout; angles in the file are
//! degrees where the key says so (`angle_deg`), radians elsewhere.
//!
//! ```toml
//! version = 1
//! name = "hinge"
//!
//! [solver]            # all optional: these are the defaults
//! dt = 1e-3           # s
//! substeps = 1
//! iterations = 1
//! mode = "block"      # "block" (eq. 124), "rows" (eq. 56) or "scalar" (Section 5.1)
//! joint_solve = "gauss_seidel"   # or "direct": all joints solved together
//! gravity = [0.0, -9.81, 0.0]
//!
//! [run]
//! duration = 2.0      # s
//! every = 10          # write a row every 10 steps
//! record = ["residuals", "energy", "poses", "lambda"]
//!
//! [[bodies]]
//! name = "bar"
//! shape = { type = "box", size = [0.1, 1.0, 0.1] }
//! density = 1000.0
//! position = [0.5, 0.0, 0.0]
//! orientation = { axis = [0.0, 0.0, 1.0], angle_deg = 90.0 }
//!
//! [[joints]]
//! name = "hinge"
//! type = "revolute"
//! body1 = "world"
//! body2 = "bar"
//! frame2 = { position = [0.0, 0.5, 0.0] }
//! ```
//!
//! # Limits
//! A scene that validates is bounded in memory and in the time of one step; what it
//! asks for beyond these is rejected with a [`super::SceneError`] at the field:
//! * a scene file of at most 16 MiB ([`super::MAX_SCENE_FILE_BYTES`], [`super::Scene::load`]);
//! * `solver.substeps` × `solver.iterations` ≤ 10⁴ sweeps a step ([`super::MAX_SWEEPS_PER_STEP`]);
//! * at most 10¹² steps (`run.duration` / `solver.dt`, [`super::MAX_STEPS`]);
//! * at most 10⁵ elements a rod ([`super::rod::MAX_ROD_ELEMENTS`]) and 10⁵ bodies and
//!   rod nodes in the whole scene ([`super::MAX_SCENE_BODIES`]);
//! * angles within ±3600°.
//!
//! The number of steps is the only one that can make a run long by itself: a run is
//! stopped between steps by Ctrl-C.

use serde::{Deserialize, Serialize};

/// The only scene-file version this library reads.
pub const SCENE_VERSION: u32 = 1;

/// The name that stands for the fixed world frame in `body1`/`body2`.
pub const WORLD: &str = "world";

/// A whole scene file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    /// Format version; must be [`SCENE_VERSION`].
    pub version: u32,
    /// Short name of the scene, used in summaries (default: the file's stem).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Free text shown in summaries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Solver settings.
    #[serde(default)]
    pub solver: SolverSpec,
    /// Run settings: duration, output interval, channels.
    #[serde(default)]
    pub run: RunSpec,
    /// Rigid bodies, in order; their names must be unique and not `world`.
    #[serde(default)]
    pub bodies: Vec<BodySpec>,
    /// Cosserat rods (see [`super::rod`]), built after the bodies; their nodes are
    /// bodies named `"<rod>:<index>"` that joints can name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rods: Vec<super::rod::RodSpec>,
    /// Joints between bodies (or a body and the world).
    #[serde(default)]
    pub joints: Vec<JointSpec>,
    /// Prescribed motions of body frames (see [`super::prescribed`]), built after the
    /// joints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prescribed: Vec<super::prescribed::PrescribedSpec>,
}

impl SceneFile {
    /// Whether something in the scene does work on the bodies: a prescribed motion, a
    /// joint drive or motor, or a rod's load or end motion. The energy of a driven scene
    /// is not expected to fall.
    pub fn is_driven(&self) -> bool {
        !self.prescribed.is_empty()
            || self.rods.iter().any(|r| r.is_driven())
            || self
                .joints
                .iter()
                .any(|j| j.drive.is_some() || j.motor.is_some())
    }
}

/// `[solver]`: the XPBD time step (Algorithm 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolverSpec {
    /// Time step Δt, s (> 0).
    #[serde(default = "default_dt")]
    pub dt: f64,
    /// Substeps per step (≥ 1; substeps × iterations ≤
    /// [`crate::scene::MAX_SWEEPS_PER_STEP`]).
    #[serde(default = "one", deserialize_with = "count::deserialize")]
    pub substeps: usize,
    /// Gauss–Seidel sweeps per substep (≥ 1; substeps × iterations ≤
    /// [`crate::scene::MAX_SWEEPS_PER_STEP`]).
    #[serde(default = "one", deserialize_with = "count::deserialize")]
    pub iterations: usize,
    /// Solve mode: `block` (vector joints, one solve each (124)), `rows` (vector joints,
    /// row by row (56)) or `scalar` (the normed joints of Section 5.1, row by row).
    #[serde(default)]
    pub mode: ModeSpec,
    /// Gravitational acceleration, m/s², world frame.
    #[serde(default = "default_gravity")]
    pub gravity: [f64; 3],
    /// The primal correction pass after the projections of every substep
    /// ([`crate::xpbd::SolverOptions::primal_correction`]); default false. Skipped in
    /// scenes with rods ([`crate::xpbd::World::primal_correction_applies`]).
    #[serde(default)]
    pub primal_correction: bool,
    /// How the joints' constraints are solved in each iteration: one after another
    /// (`gauss_seidel`, the default) or all together (`direct`).
    #[serde(default, skip_serializing_if = "JointSolveSpec::is_default")]
    pub joint_solve: JointSolveSpec,
    /// Arithmetic of an `f32` run: `compensated` (the default) or `plain`
    /// ([`crate::xpbd::F32Arithmetic`]); no effect on an `f64` run.
    #[serde(default, skip_serializing_if = "F32ArithmeticSpec::is_default")]
    pub f32_arithmetic: F32ArithmeticSpec,
}

/// `[solver] f32_arithmetic` as spelled in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum F32ArithmeticSpec {
    /// [`crate::xpbd::F32Arithmetic::Compensated`].
    #[default]
    Compensated,
    /// [`crate::xpbd::F32Arithmetic::Plain`].
    Plain,
}

impl F32ArithmeticSpec {
    /// Whether this is the default (`compensated`; it is then not written).
    pub fn is_default(&self) -> bool {
        *self == F32ArithmeticSpec::Compensated
    }

    /// The solver setting.
    pub fn arithmetic(self) -> crate::xpbd::F32Arithmetic {
        match self {
            F32ArithmeticSpec::Compensated => crate::xpbd::F32Arithmetic::Compensated,
            F32ArithmeticSpec::Plain => crate::xpbd::F32Arithmetic::Plain,
        }
    }
}

impl Default for SolverSpec {
    fn default() -> Self {
        Self {
            dt: default_dt(),
            substeps: 1,
            iterations: 1,
            mode: ModeSpec::Block,
            gravity: default_gravity(),
            primal_correction: false,
            joint_solve: JointSolveSpec::GaussSeidel,
            f32_arithmetic: F32ArithmeticSpec::Compensated,
        }
    }
}

/// `[solver] joint_solve` as spelled in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JointSolveSpec {
    /// Each constraint projected on its own, one after another, as `mode` says (rows
    /// (56) or blocks (124)).
    #[default]
    GaussSeidel,
    /// Every constraint of every `[[joints]]` entry (the joint, its limits, drives and
    /// motor), in file order, in one direct group
    /// ([`crate::xpbd::World::add_direct_group`]): all their rows solved together by
    /// one block-banded Cholesky solve per iteration, limits and motors by an active
    /// set. List chains from one end to the other for a block-tridiagonal system.
    /// Prescribed motions are still projected one by one.
    Direct,
}

impl JointSolveSpec {
    /// Whether this is the default (`gauss_seidel`; it is then not written).
    pub fn is_default(&self) -> bool {
        *self == JointSolveSpec::GaussSeidel
    }

    /// `"gauss_seidel"` or `"direct"`, as in the file.
    pub fn name(self) -> &'static str {
        match self {
            JointSolveSpec::GaussSeidel => "gauss_seidel",
            JointSolveSpec::Direct => "direct",
        }
    }
}

/// Solve mode as spelled in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModeSpec {
    /// One dense solve per vector constraint (124).
    #[default]
    Block,
    /// One scalar row at a time (56).
    Rows,
    /// The scalar ("normed") joints of Section 5.1, row by row (56): every `[[joints]]`
    /// entry becomes the [`crate::joint::NormedJoint`] of its type (2 rows, spherical
    /// 1). Its `compliance` and `damping` are still given per vector row (or as one
    /// value); each normed row takes the common value of the vector rows it is the norm
    /// of ([`crate::joint::NormedKind::VECTOR_ROWS`]), and a list that gives those rows
    /// different values is rejected when the scene is built.
    Scalar,
}

/// `[run]`: how long to simulate and what to record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Simulated duration, s (> 0). The run takes ⌈duration/dt⌉ steps.
    #[serde(default = "default_duration")]
    pub duration: f64,
    /// Write a row every this many steps (≥ 1).
    #[serde(default = "one_u64", deserialize_with = "count::deserialize")]
    pub every: u64,
    /// Channels to record (each once).
    #[serde(default = "default_channels")]
    pub record: Vec<Channel>,
}

impl Default for RunSpec {
    fn default() -> Self {
        Self {
            duration: default_duration(),
            every: 1,
            record: default_channels(),
        }
    }
}

/// A recorded channel; each goes to its own CSV file of the run's folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    /// `residuals.csv`: primal (51) and constraint (52) residuals.
    Residuals,
    /// `energy.csv`: kinetic, potential and total energy, J.
    Energy,
    /// `states.csv`: every body's position (m, world) and rotation vector Log(R) (rad).
    Poses,
    /// `velocities.csv`: every body's linear (m/s, world) and angular (rad/s, body)
    /// velocity.
    Velocities,
    /// `lambda.csv`: every constraint row's accumulated Lagrange multiplier λ of the last
    /// substep (N·s² for length rows, N·m·s² for angle rows).
    Lambda,
}

impl Channel {
    /// Every channel, in file order.
    pub const ALL: [Channel; 5] = [
        Channel::Residuals,
        Channel::Energy,
        Channel::Poses,
        Channel::Velocities,
        Channel::Lambda,
    ];

    /// The name as written in the scene file.
    pub fn name(self) -> &'static str {
        match self {
            Channel::Residuals => "residuals",
            Channel::Energy => "energy",
            Channel::Poses => "poses",
            Channel::Velocities => "velocities",
            Channel::Lambda => "lambda",
        }
    }

    /// The CSV file this channel is written to.
    pub fn file_name(self) -> &'static str {
        match self {
            Channel::Residuals => "residuals.csv",
            Channel::Energy => "energy.csv",
            Channel::Poses => "states.csv",
            Channel::Velocities => "velocities.csv",
            Channel::Lambda => "lambda.csv",
        }
    }
}

/// `[[bodies]]`: one rigid body.
///
/// Mass properties come either from `shape` and `density`, or from `mass` and
/// `inertia` (principal moments about the body axes through the centre of mass); a
/// `fixed` body needs neither. A shape given together with `mass`/`inertia` is only
/// drawn (VTK output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// Unique name (not `world`).
    pub name: String,
    /// Geometry, body frame, centred at the centre of mass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<ShapeSpec>,
    /// Density, kg/m³ (> 0), with `shape`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub density: Option<f64>,
    /// Mass, kg (> 0), with `inertia`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mass: Option<f64>,
    /// Principal inertia (I₁, I₂, I₃), kg·m², body frame (each > 0), with `mass`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inertia: Option<[f64; 3]>,
    /// Centre of mass, m, world frame.
    #[serde(default)]
    pub position: [f64; 3],
    /// Orientation body → world (default: identity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orientation: Option<OrientationSpec>,
    /// Linear velocity, m/s, world frame.
    #[serde(default)]
    pub velocity: [f64; 3],
    /// Angular velocity, rad/s, **body** frame.
    #[serde(default)]
    pub angular_velocity: [f64; 3],
    /// A fixed body never moves (infinite mass).
    #[serde(default)]
    pub fixed: bool,
}

/// A body's geometry, centred at its centre of mass, in its body frame.
///
/// Capsules and cylinders have their axis along body z.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum ShapeSpec {
    /// A box with edge lengths `size` = (x, y, z), m.
    Box {
        /// Edge lengths along body x, y, z, m (each > 0).
        size: [f64; 3],
    },
    /// A ball of radius `radius`, m.
    Sphere {
        /// Radius, m (> 0).
        radius: f64,
    },
    /// A cylinder of radius `radius` and length `length` along body z, m.
    Cylinder {
        /// Radius, m (> 0).
        radius: f64,
        /// Length along body z, m (> 0).
        length: f64,
    },
    /// A cylinder of length `length` along body z capped by two half-balls of radius
    /// `radius` (total length `length + 2 radius`), m.
    Capsule {
        /// Radius, m (> 0).
        radius: f64,
        /// Length of the cylindrical part along body z, m (≥ 0).
        length: f64,
    },
}

/// An orientation: a rotation axis (any non-zero length; normalised) and an angle in
/// degrees, or a unit quaternion `[w, x, y, z]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged, try_from = "OrientationRaw")]
pub enum OrientationSpec {
    /// Rotation by `angle_deg` degrees about `axis` (right-hand rule).
    AxisAngle {
        /// Rotation axis, world frame for bodies, body frame for joint frames.
        axis: [f64; 3],
        /// Angle, degrees.
        angle_deg: f64,
    },
    /// Unit quaternion, scalar first: `[w, x, y, z]`.
    Quaternion {
        /// `[w, x, y, z]`; its norm must be 1 within 1e-6 (it is then normalised).
        quaternion: [f64; 4],
    },
}

/// What an orientation table may hold; checked into an [`OrientationSpec`], so that a
/// misspelt key or a wrong-length list gets its own error.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OrientationRaw {
    axis: Option<[f64; 3]>,
    angle_deg: Option<f64>,
    quaternion: Option<[f64; 4]>,
}

impl TryFrom<OrientationRaw> for OrientationSpec {
    type Error = String;
    fn try_from(r: OrientationRaw) -> Result<Self, String> {
        match (r.axis, r.angle_deg, r.quaternion) {
            (Some(axis), Some(angle_deg), None) => Ok(OrientationSpec::AxisAngle { axis, angle_deg }),
            (None, None, Some(quaternion)) => Ok(OrientationSpec::Quaternion { quaternion }),
            (Some(_), None, None) => Err("an axis needs its angle: add `angle_deg = A` (degrees)".into()),
            (None, Some(_), None) => Err("an angle needs its rotation axis: add `axis = [x, y, z]`".into()),
            (None, None, None) => Err("an orientation needs `axis = [x, y, z], angle_deg = A` or `quaternion = [w, x, y, z]`".into()),
            _ => Err("give either `axis` and `angle_deg`, or `quaternion`, not both".into()),
        }
    }
}

/// `[[joints]]`: a vector joint (Sections 5.2–5.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointSpec {
    /// Unique name (default: `joint{i}`), used for the joint's columns in `lambda.csv`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Joint type.
    #[serde(rename = "type")]
    pub kind: JointType,
    /// First body's name, or `world`.
    pub body1: String,
    /// Second body's name, or `world`.
    pub body2: String,
    /// Joint frame on body 1 (body frame; world frame if body 1 is the world).
    #[serde(default)]
    pub frame1: FrameSpec,
    /// Joint frame on body 2 (body frame; world frame if body 2 is the world).
    #[serde(default)]
    pub frame2: FrameSpec,
    /// Compliance α, one value for every row or one per row (m/N for length rows,
    /// rad/(N·m) for angle rows; 0 = hard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compliance: Option<ComplianceSpec>,
    /// Rayleigh damping b (s), one value for every row or one per row (0 = undamped):
    /// row j is damped with β = b/α in the velocity-level pass after each substep
    /// (Section 4.4), so a spring of stiffness k = 1/α on a mass m gets the damping
    /// ratio ζ = b/(2√(α m)). Only compliant rows (α > 0) can be damped: a value > 0 for
    /// a hard row is an error, and a single value with every row hard too; a single
    /// value over a mix of hard and compliant rows damps the compliant ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping: Option<DampingSpec>,
    /// Joint limits (see [`super::actuation`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<super::actuation::LimitSpec>,
    /// A drive towards a target (81) (see [`super::actuation`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drive: Option<super::actuation::DriveSpec>,
    /// A velocity motor (see [`super::actuation`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub motor: Option<super::actuation::MotorSpec>,
    /// The joint breaks (is removed, and the break is reported) when the force it
    /// carries, |λ_length|/h² over its length rows, exceeds this, N.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub break_force: Option<f64>,
    /// The joint breaks when the torque it carries, |λ_angle|/h² over its angle rows,
    /// exceeds this, N·m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub break_torque: Option<f64>,
}

impl JointSpec {
    /// A joint of type `kind` between the bodies named `body1` and `body2` (or
    /// [`WORLD`]), with identity frames and nothing else set.
    pub fn new(kind: JointType, body1: impl Into<String>, body2: impl Into<String>) -> Self {
        Self {
            name: None,
            kind,
            body1: body1.into(),
            body2: body2.into(),
            frame1: FrameSpec::default(),
            frame2: FrameSpec::default(),
            compliance: None,
            damping: None,
            limit: None,
            drive: None,
            motor: None,
            break_force: None,
            break_torque: None,
        }
    }
}

/// Joint types. The revolute axis and the prismatic slide axis are the joint frames'
/// z axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JointType {
    /// Six rows: position and rotation locked (71).
    Fixed,
    /// Five rows: rotation about z free (72).
    Revolute,
    /// Three rows: positions coincide (75).
    Spherical,
    /// Five rows: translation along z free (79).
    Prismatic,
}

impl JointType {
    /// The name as written in the scene file.
    pub fn name(self) -> &'static str {
        match self {
            JointType::Fixed => "fixed",
            JointType::Revolute => "revolute",
            JointType::Spherical => "spherical",
            JointType::Prismatic => "prismatic",
        }
    }

    /// Number of constraint rows.
    pub fn rows(self) -> usize {
        match self {
            JointType::Fixed => 6,
            JointType::Revolute | JointType::Prismatic => 5,
            JointType::Spherical => 3,
        }
    }
}

/// A joint frame on a body: position (m) and orientation relative to the body frame
/// (69)–(70).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrameSpec {
    /// Joint origin, m, body frame.
    #[serde(default)]
    pub position: [f64; 3],
    /// Joint axes relative to the body axes (default: identity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orientation: Option<OrientationSpec>,
}

/// Compliance: one value for all rows, or one per row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "a compliance: one number for every row, or a list with one number per row"
)]
pub enum ComplianceSpec {
    /// The same α for every row.
    Uniform(f64),
    /// One α per row, in row order.
    PerRow(Vec<f64>),
}

/// Damping: one value for all rows, or one per row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "a damping (s): one number for every row, or a list with one number per row"
)]
pub enum DampingSpec {
    /// The same b for every row.
    Uniform(f64),
    /// One b per row, in row order.
    PerRow(Vec<f64>),
}

fn default_dt() -> f64 {
    1e-3
}
fn default_duration() -> f64 {
    10.0
}
fn default_gravity() -> [f64; 3] {
    [0.0, -9.81, 0.0]
}
fn default_channels() -> Vec<Channel> {
    vec![
        Channel::Residuals,
        Channel::Energy,
        Channel::Poses,
        Channel::Lambda,
    ]
}
fn one() -> usize {
    1
}
fn one_u64() -> u64 {
    1
}

/// Counts accept an integer, or a float that is a whole number (`1e3`), so that
/// `--set solver.substeps=1e3` means 1000.
pub(crate) mod count {
    use serde::de::{Deserializer, Error, Visitor};
    use std::fmt;

    struct V;
    impl Visitor<'_> for V {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a whole number")
        }
        fn visit_i64<E: Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v)
                .map_err(|_| E::custom(format!("{v} is negative; expected a whole number")))
        }
        fn visit_u64<E: Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_f64<E: Error>(self, v: f64) -> Result<u64, E> {
            if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 1.8e19 {
                Ok(v as u64)
            } else {
                Err(E::custom(format!("{v} is not a whole number ≥ 0")))
            }
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>, N: TryFrom<u64>>(d: D) -> Result<N, D::Error> {
        let v = d.deserialize_any(V)?;
        N::try_from(v).map_err(|_| D::Error::custom(format!("{v} is too large")))
    }
}
