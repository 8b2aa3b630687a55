//! The triple pendulum of Section 9.1 (Figure 12, left; Table 1).
//!
//! Three boxes 0.1 × 1.0 × 0.1 m (long axis = body y), density 1000 kg/m³ (10 kg
//! each), hinged end to end by revolute joints (72) at body points (0, ±0.5, 0) about
//! the z axis; the top box is hinged at its upper end to a fixed point at the world
//! origin (a one-sided joint). Released from rest with the chain straight at 80° from
//! the downward vertical, under gravity 9.81 m/s² along −y. Defaults: Δt = 1e-3 s, one
//! substep, one iteration, block solves.
//!
//! The scene ships as `scenes/pendulum.toml` ([`SCENE_TOML`]), which is exactly
//! [`scene_file`] of the default [`PendulumConfig`] (a test checks it); [`build`] makes
//! the world of any other configuration through the same scene builder.

use super::ScenarioError;
use crate::lie::LieGroup;
use crate::linalg::BandScalar;
use crate::scene::{
    BodySpec, Channel, F32ArithmeticSpec, FrameSpec, JointSpec, JointType, ModeSpec,
    OrientationSpec, RunSpec, Scene, SceneFile, ShapeSpec, SolverSpec, SCENE_VERSION, WORLD,
};
use crate::xpbd::{F32Arithmetic, SolveMode, World};

/// The shipped scene file `scenes/pendulum.toml`.
pub const SCENE_TOML: &str = include_str!("../../scenes/pendulum.toml");

/// Number of bodies (0 = top).
pub const BODY_COUNT: usize = 3;
/// Box dimensions (x, y, z), m. The long axis is body y.
pub const BOX_SIZE: [f64; 3] = [0.1, 1.0, 0.1];
/// Density, kg/m³.
pub const DENSITY: f64 = 1000.0;
/// Gravitational acceleration, m/s² (along −y).
pub const GRAVITY: f64 = 9.81;

/// Largest accepted |release angle|, degrees (ten turns; beyond it the angle is more
/// likely a unit mistake than a choice, and f64 degrees lose precision).
pub const MAX_ANGLE_DEG: f64 = 3600.0;

/// Settings of a pendulum run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PendulumConfig {
    /// Simulated duration, s (> 0, finite).
    pub seconds: f64,
    /// Time step Δt, s (> 0).
    pub dt: f64,
    /// Substeps per step (≥ 1).
    pub substeps: usize,
    /// Solver iterations per substep (≥ 1).
    pub iterations: usize,
    /// Block (124) or row (56) projection of the joints.
    pub solve_mode: SolveMode,
    /// Release angle of the straight chain from the downward vertical, degrees.
    pub initial_angle_deg: f64,
    /// The primal correction pass of every substep
    /// ([`crate::xpbd::SolverOptions::primal_correction`]; on by default, off for the
    /// paper's plain XPBD step).
    pub primal_correction: bool,
    /// Arithmetic of an `f32` world ([`crate::xpbd::SolverOptions::f32_arithmetic`];
    /// compensated by default, no effect in `f64`).
    pub f32_arithmetic: F32Arithmetic,
}

impl Default for PendulumConfig {
    /// The paper's solver setting (Δt = 1e-3 s, 1 substep, 1 iteration, block solves,
    /// released at 80°) for 10 s of simulated time, with the primal correction pass;
    /// the paper's Figure 12 runs 100 s (`seconds: 100.0`).
    fn default() -> Self {
        Self {
            seconds: 10.0,
            dt: 1e-3,
            substeps: 1,
            iterations: 1,
            solve_mode: SolveMode::Block,
            initial_angle_deg: 80.0,
            primal_correction: true,
            f32_arithmetic: F32Arithmetic::Compensated,
        }
    }
}

impl PendulumConfig {
    /// Checks every field.
    ///
    /// # Errors
    /// [`ScenarioError::InvalidConfig`] naming the first bad field.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let bad = |field, value: String, reason| {
            Err(ScenarioError::InvalidConfig {
                field,
                value,
                reason,
            })
        };
        if !(self.seconds.is_finite() && self.seconds > 0.0) {
            return bad(
                "seconds",
                self.seconds.to_string(),
                "must be positive and finite",
            );
        }
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return bad("dt", self.dt.to_string(), "must be positive and finite");
        }
        if self.dt > self.seconds {
            return bad("dt", self.dt.to_string(), "must not exceed the duration");
        }
        // As a scene file's duration (`crate::scene::MAX_STEPS`): beyond it `steps`
        // no longer counts exactly (a user's 1e300 s gave u64::MAX steps).
        if self.seconds / self.dt > crate::scene::MAX_STEPS as f64 {
            return bad(
                "seconds",
                self.seconds.to_string(),
                "must be at most 1e12 steps of dt",
            );
        }
        if self.substeps == 0 {
            return bad("substeps", "0".into(), "must be at least 1");
        }
        if self.iterations == 0 {
            return bad("iterations", "0".into(), "must be at least 1");
        }
        if !(self.initial_angle_deg.is_finite() && self.initial_angle_deg.abs() <= MAX_ANGLE_DEG) {
            return bad(
                "angle",
                self.initial_angle_deg.to_string(),
                "must be finite and within ±3600 degrees",
            );
        }
        Ok(())
    }

    /// Number of steps: ⌈seconds/dt⌉ (rounded, tolerant of 1e-9 relative round-off),
    /// at least 1. Meaningful for a configuration that passes [`Self::validate`] (as
    /// [`build`] requires): at most [`crate::scene::MAX_STEPS`].
    pub fn steps(&self) -> u64 {
        let n = self.seconds / self.dt;
        (n - 1e-9 * n).ceil().max(1.0) as u64
    }
}

/// Mass of one box, kg.
pub fn box_mass() -> f64 {
    DENSITY * BOX_SIZE[0] * BOX_SIZE[1] * BOX_SIZE[2]
}

/// Principal inertia of one box about its centre, kg·m², body frame:
/// m/12·(b² + c², a² + c², a² + b²).
pub fn box_inertia() -> [f64; 3] {
    crate::scene::build::mass_properties(&ShapeSpec::Box { size: BOX_SIZE }, DENSITY).1
}

/// Largest possible distance (m) of body `body`'s centre of mass from the origin while
/// the joints hold: `body` + 0.5 box lengths; `None` unless `body` < [`BODY_COUNT`].
pub fn max_reach(body: usize) -> Option<f64> {
    (body < BODY_COUNT).then(|| (body as f64 + 0.5) * BOX_SIZE[1])
}

/// The pendulum as a scene description: bodies `link0` (top) to `link2`, joints
/// `pivot` (world–link0), `hinge1` (link0–link1) and `hinge2` (link1–link2).
pub fn scene_file(cfg: &PendulumConfig) -> SceneFile {
    let phi = cfg.initial_angle_deg.to_radians();
    let half = 0.5 * BOX_SIZE[1];
    let bodies = (0..BODY_COUNT)
        .map(|i| {
            let r = (i as f64 + 0.5) * BOX_SIZE[1];
            BodySpec {
                name: format!("link{i}"),
                shape: Some(ShapeSpec::Box { size: BOX_SIZE }),
                density: Some(DENSITY),
                mass: None,
                inertia: None,
                position: [phi.sin() * r, -phi.cos() * r, 0.0],
                orientation: Some(OrientationSpec::AxisAngle {
                    axis: [0.0, 0.0, 1.0],
                    angle_deg: cfg.initial_angle_deg,
                }),
                velocity: [0.0; 3],
                angular_velocity: [0.0; 3],
                fixed: false,
            }
        })
        .collect();
    let frame = |y: f64| FrameSpec {
        position: [0.0, y, 0.0],
        orientation: None,
    };
    let mut joints = vec![JointSpec {
        name: Some("pivot".into()),
        frame2: frame(half),
        ..JointSpec::new(JointType::Revolute, WORLD, "link0")
    }];
    for i in 1..BODY_COUNT {
        joints.push(JointSpec {
            name: Some(format!("hinge{i}")),
            frame1: frame(-half),
            frame2: frame(half),
            ..JointSpec::new(
                JointType::Revolute,
                format!("link{}", i - 1),
                format!("link{i}"),
            )
        });
    }
    SceneFile {
        version: SCENE_VERSION,
        name: Some("pendulum".into()),
        description: Some("Triple pendulum of Section 9.1 (Figure 12, Table 1)".into()),
        solver: SolverSpec {
            dt: cfg.dt,
            substeps: cfg.substeps,
            iterations: cfg.iterations,
            mode: match cfg.solve_mode {
                SolveMode::Block => ModeSpec::Block,
                SolveMode::Rows => ModeSpec::Rows,
                SolveMode::Scalar => ModeSpec::Scalar,
            },
            gravity: [0.0, -GRAVITY, 0.0],
            primal_correction: cfg.primal_correction,
            f32_arithmetic: match cfg.f32_arithmetic {
                F32Arithmetic::Compensated => F32ArithmeticSpec::Compensated,
                F32Arithmetic::Plain => F32ArithmeticSpec::Plain,
            },
            ..SolverSpec::default()
        },
        run: RunSpec {
            duration: cfg.seconds,
            every: 1,
            record: vec![
                Channel::Residuals,
                Channel::Energy,
                Channel::Poses,
                Channel::Lambda,
            ],
        },
        bodies,
        rods: Vec::new(),
        joints,
        prescribed: Vec::new(),
    }
}

/// Builds the pendulum world for scalar `T` (`f32` or `f64`: [`BandScalar`], as
/// [`Scene::build`] asks) and rotation representation `G`.
///
/// # Errors
/// [`ScenarioError::InvalidConfig`] from [`PendulumConfig::validate`]; a
/// [`ScenarioError::Scene`] error cannot occur for a valid config but is propagated.
pub fn build<T: BandScalar, G: LieGroup<T>>(
    cfg: &PendulumConfig,
) -> Result<World<T, G>, ScenarioError> {
    cfg.validate()?;
    let scene = Scene::from_file(scene_file(cfg), "<pendulum>")?;
    Ok(scene.build::<T, G>()?.world)
}
