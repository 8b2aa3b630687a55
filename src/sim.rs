//! [`Simulation`]: a built scene behind one object-safe trait, whatever its scalar and
//! rotation representation, so that a runner, a comparison of representations or a
//! sweep handles every combination with the same code.
//!
//! All quantities come out in `f64` (an `f32` run's values converted exactly), in SI
//! units, in the frames stated on each method.
//!
//! ```
//! use lie_xpbd::scene::Scene;
//! use lie_xpbd::sim::{build_simulation, Rotation, Scalar};
//!
//! let scene = Scene::from_toml(lie_xpbd::scenes::pendulum::SCENE_TOML, "pendulum.toml")?;
//! let mut sim = build_simulation(&scene, Rotation::Quaternion, Scalar::F32)?;
//! for _ in 0..100 {
//!     sim.step().unwrap();
//! }
//! assert_eq!(sim.steps(), 100);
//! assert!(sim.residuals().1 < 1e-2); // constraint residual (52), m and rad
//! # Ok::<(), lie_xpbd::scene::SceneError>(())
//! ```

use crate::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use crate::linalg::BandScalar;
use crate::scene::{BuiltScene, JointInfo, Scene, SceneError};
use crate::xpbd::{ConstraintId, F32Arithmetic, XpbdError};
use nalgebra::{Matrix3, Vector3};
use std::fmt;
use std::str::FromStr;

/// Rotation representation of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rotation {
    /// [`SO3Matrix`]: 3×3 rotation matrices.
    Matrix,
    /// [`UnitQuaternion`]: unit quaternions.
    Quaternion,
}

/// Scalar type of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    /// Double precision.
    F64,
    /// Single precision, in the arithmetic the scene's `solver.f32_arithmetic` names
    /// (compensated unless it says otherwise: [`crate::xpbd::F32Arithmetic`]).
    F32,
    /// Single precision in plain arithmetic: every operation in `f32`
    /// ([`crate::xpbd::F32Arithmetic::Plain`]), whatever the scene's
    /// `solver.f32_arithmetic` says. Named `f32-plain`.
    F32Plain,
}

impl Rotation {
    /// Both representations.
    pub const ALL: [Rotation; 2] = [Rotation::Matrix, Rotation::Quaternion];
    /// `"matrix"` or `"quaternion"`.
    pub fn name(self) -> &'static str {
        match self {
            Rotation::Matrix => "matrix",
            Rotation::Quaternion => "quaternion",
        }
    }
}

impl Scalar {
    /// Both scalar types (in their default arithmetic; [`Scalar::F32Plain`] is asked
    /// for by name).
    pub const ALL: [Scalar; 2] = [Scalar::F64, Scalar::F32];
    /// `"f64"`, `"f32"` or `"f32-plain"`.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::F64 => "f64",
            Scalar::F32 => "f32",
            Scalar::F32Plain => "f32-plain",
        }
    }

    /// Whether the run's scalar type is `f32` (compensated or plain).
    pub fn is_f32(self) -> bool {
        self != Scalar::F64
    }

    /// The shortest decimal text that reads back to `x` at this precision (an `f32`
    /// run writes `0.1`, not `0.10000000149011612`): plain for 1e-3 ≤ |x| < 1e7 and
    /// for 0, scientific otherwise (`7.79e-11`, `1.25e-5`); `NaN`, `inf`, `-inf` as
    /// such.
    pub fn format(self, x: f64) -> String {
        let plain = x == 0.0 || !x.is_finite() || (1e-3..1e7).contains(&x.abs());
        match (self, plain) {
            (Scalar::F64, true) => format!("{x}"),
            (Scalar::F64, false) => format!("{x:e}"),
            (Scalar::F32 | Scalar::F32Plain, true) => format!("{}", x as f32),
            (Scalar::F32 | Scalar::F32Plain, false) => format!("{:e}", x as f32),
        }
    }
}

impl fmt::Display for Rotation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Rotation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "matrix" => Ok(Rotation::Matrix),
            "quaternion" => Ok(Rotation::Quaternion),
            _ => Err(format!(
                "'{s}' is not a rotation representation; valid values: matrix, quaternion"
            )),
        }
    }
}

impl FromStr for Scalar {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "f64" => Ok(Scalar::F64),
            "f32" => Ok(Scalar::F32),
            "f32-plain" => Ok(Scalar::F32Plain),
            _ => Err(format!(
                "'{s}' is not a scalar type; valid values: f64, f32, f32-plain"
            )),
        }
    }
}

/// Kinetic, gravitational potential and elastic energy, J.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Energy {
    /// Σ ½m|v|² + ½ωᵀ𝓘ω over dynamic bodies, J.
    pub kinetic: f64,
    /// Σ −m g·p over dynamic bodies (zero at the world origin), J.
    pub potential: f64,
    /// Elastic energy (36) ½Cᵀα⁻¹C of the compliant constraints and rods, J
    /// ([`crate::xpbd::World::elastic_energy`]).
    pub elastic: f64,
}

impl Energy {
    /// Kinetic + gravitational + elastic, J.
    pub fn total(&self) -> f64 {
        self.kinetic + self.potential + self.elastic
    }
}

/// A running scene of any scalar and representation (object-safe).
pub trait Simulation: Send {
    /// The rotation representation.
    fn rotation(&self) -> Rotation;
    /// The scalar type.
    fn scalar(&self) -> Scalar;
    /// Advances one time step (Algorithm 1).
    ///
    /// # Errors
    /// [`XpbdError::Diverged`] if the state became non-finite.
    fn step(&mut self) -> Result<(), XpbdError>;
    /// Time steps taken.
    fn steps(&self) -> u64;
    /// Body names, in body order.
    fn body_names(&self) -> &[String];
    /// Joints, in constraint order.
    fn joints(&self) -> &[JointInfo];
    /// Whether body `i` is fixed.
    ///
    /// # Panics
    /// This and every other method taking a body index `i` (`mass`, `position`,
    /// `rotation_matrix`, `log`, `velocity`, `angular_velocity`) index the body list as
    /// a slice does: `i` must be below `body_names().len()`, or the call panics.
    fn is_fixed(&self, i: usize) -> bool;
    /// Mass of body `i`, kg (0 for a fixed body).
    fn mass(&self, i: usize) -> f64;
    /// Gravitational acceleration, m/s², world frame.
    fn gravity(&self) -> Vector3<f64>;
    /// Centre of mass of body `i`, m, world frame.
    fn position(&self, i: usize) -> Vector3<f64>;
    /// Orientation of body `i` (body → world) as a rotation matrix (orthonormal to the
    /// run's precision).
    fn rotation_matrix(&self, i: usize) -> Matrix3<f64>;
    /// Rotation vector Log(R) of body `i`, rad, |θ| ≤ π, computed at the run's precision.
    fn log(&self, i: usize) -> Vector3<f64>;
    /// Linear velocity of body `i`, m/s, world frame.
    fn velocity(&self, i: usize) -> Vector3<f64>;
    /// Angular velocity of body `i`, rad/s, body frame.
    fn angular_velocity(&self, i: usize) -> Vector3<f64>;
    /// Primal (51) and constraint (52) residuals after the last step.
    fn residuals(&self) -> (f64, f64);
    /// Energy at the current state.
    fn energy(&self) -> Energy;
    /// How far the current poses are from satisfying the hard joint rows, m or rad
    /// ([`crate::xpbd::World::hard_violation`]).
    fn hard_violation(&self) -> f64;
    /// Accumulated λ of joint `j`'s rows over the last substep (appended to `out`;
    /// nothing is appended for a `j` that is not below `joints().len()`).
    fn lambda(&self, j: usize, out: &mut Vec<f64>);
    /// The joints that broke so far ([`crate::xpbd::World::breaks`]), in order.
    fn breaks(&self) -> Vec<Break>;
    /// Whether the primal correction pass acts in this world: asked for
    /// ([`crate::xpbd::SolverOptions::primal_correction`]) and not skipped
    /// ([`crate::xpbd::World::primal_correction_applies`]).
    fn primal_correction(&self) -> bool;
}

/// A joint that broke (its force or torque exceeded `break_force` / `break_torque`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Break {
    /// Time of the break (end of the substep), s.
    pub time_s: f64,
    /// The joint's name in the scene (see [`JointInfo`]).
    pub joint: String,
    /// The force it carried, ‖λ_length‖/h², N.
    pub force_n: f64,
    /// The torque it carried, ‖λ_angle‖/h², N·m.
    pub torque_nm: f64,
}

struct SceneSimulation<T: Real, G: LieGroup<T>> {
    built: BuiltScene<T, G>,
    rotation: Rotation,
    scalar: Scalar,
}

fn f64v<T: Real>(v: &Vector3<T>) -> Vector3<f64> {
    v.map(|x| x.to_f64())
}

impl<T: Real, G: LieGroup<T>> Simulation for SceneSimulation<T, G> {
    fn rotation(&self) -> Rotation {
        self.rotation
    }
    fn scalar(&self) -> Scalar {
        self.scalar
    }
    fn step(&mut self) -> Result<(), XpbdError> {
        self.built.step()
    }
    fn steps(&self) -> u64 {
        self.built.world.steps()
    }
    fn body_names(&self) -> &[String] {
        &self.built.body_names
    }
    fn joints(&self) -> &[JointInfo] {
        &self.built.joints
    }
    fn is_fixed(&self, i: usize) -> bool {
        self.built.world.bodies()[i].is_fixed()
    }
    fn mass(&self, i: usize) -> f64 {
        self.built.world.bodies()[i].mass().to_f64()
    }
    fn gravity(&self) -> Vector3<f64> {
        f64v(&self.built.world.options().gravity)
    }
    fn position(&self, i: usize) -> Vector3<f64> {
        f64v(&self.built.world.bodies()[i].position)
    }
    fn rotation_matrix(&self, i: usize) -> Matrix3<f64> {
        self.built.world.bodies()[i]
            .orientation
            .to_matrix()
            .map(|x| x.to_f64())
    }
    fn log(&self, i: usize) -> Vector3<f64> {
        f64v(&self.built.world.bodies()[i].orientation.log())
    }
    fn velocity(&self, i: usize) -> Vector3<f64> {
        f64v(&self.built.world.bodies()[i].velocity)
    }
    fn angular_velocity(&self, i: usize) -> Vector3<f64> {
        f64v(&self.built.world.bodies()[i].angular_velocity)
    }
    fn residuals(&self) -> (f64, f64) {
        let r = self.built.world.residuals();
        (r.primal.to_f64(), r.constraint.to_f64())
    }
    fn energy(&self) -> Energy {
        let w = &self.built.world;
        let g = w.options().gravity;
        let mut e = Energy::default();
        for b in w.bodies().iter().filter(|b| !b.is_fixed()) {
            e.kinetic += b.kinetic_energy().to_f64();
            e.potential -= (b.mass() * g.dot(&b.position)).to_f64();
        }
        e.elastic = w.elastic_energy().to_f64();
        e
    }
    fn hard_violation(&self) -> f64 {
        self.built.world.hard_violation().to_f64()
    }
    fn lambda(&self, j: usize, out: &mut Vec<f64>) {
        if let Some(l) = self
            .built
            .world
            .lambda(ConstraintId(self.built.first_joint + j))
        {
            out.extend(l.iter().map(|x| x.to_f64()));
        }
    }
    fn primal_correction(&self) -> bool {
        let w = &self.built.world;
        w.options().primal_correction && w.primal_correction_applies()
    }
    fn breaks(&self) -> Vec<Break> {
        self.built
            .world
            .breaks()
            .iter()
            .map(|b| Break {
                time_s: b.time.to_f64(),
                joint: self
                    .built
                    .joints
                    .get(b.constraint.0.wrapping_sub(self.built.first_joint))
                    .map_or_else(|| b.name.clone(), |j| j.name.clone()),
                force_n: b.force.to_f64(),
                torque_nm: b.torque.to_f64(),
            })
            .collect()
    }
}

fn boxed<T: BandScalar, G: LieGroup<T>>(
    scene: &Scene,
    rotation: Rotation,
    scalar: Scalar,
) -> Result<Box<dyn Simulation>, SceneError> {
    Ok(Box::new(SceneSimulation {
        built: scene.build::<T, G>()?,
        rotation,
        scalar,
    }))
}

/// Builds `scene` in the given representation and scalar ([`Scalar::F32Plain`]: in
/// `f32` with `solver.f32_arithmetic` set to `plain`).
///
/// # Errors
/// As [`Scene::build`].
pub fn build_simulation(
    scene: &Scene,
    rotation: Rotation,
    scalar: Scalar,
) -> Result<Box<dyn Simulation>, SceneError> {
    if scalar == Scalar::F32Plain {
        let mut plain = scene.clone();
        if plain.file().solver.f32_arithmetic.arithmetic() != F32Arithmetic::Plain {
            plain.set("solver.f32_arithmetic", F32Arithmetic::Plain.name())?;
        }
        return match rotation {
            Rotation::Matrix => boxed::<f32, SO3Matrix<f32>>(&plain, rotation, scalar),
            Rotation::Quaternion => boxed::<f32, UnitQuaternion<f32>>(&plain, rotation, scalar),
        };
    }
    match (rotation, scalar) {
        (Rotation::Matrix, Scalar::F64) => boxed::<f64, SO3Matrix<f64>>(scene, rotation, scalar),
        (Rotation::Matrix, _) => boxed::<f32, SO3Matrix<f32>>(scene, rotation, scalar),
        (Rotation::Quaternion, Scalar::F64) => {
            boxed::<f64, UnitQuaternion<f64>>(scene, rotation, scalar)
        }
        (Rotation::Quaternion, _) => boxed::<f32, UnitQuaternion<f32>>(scene, rotation, scalar),
    }
}
