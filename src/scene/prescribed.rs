//! `[[prescribed]]`: prescribed motion of a body's frame (inverse dynamics), built as a
//! [`crate::joint::PrescribedFrame`].
//!
//! ```toml
//! [[prescribed]]
//! name = "plate_drive"
//! body = "plate"
//! frame = { orientation = { axis = [1, 0, 0], angle_deg = -90 } }  # on the body: z = plate normal
//! target = { position = [0.0, 0.5, 0.0], orientation = { axis = [0, 0, 1], angle_deg = 10 } }
//! velocity = [0.0, 0.0, 0.0]        # m/s, world frame (default 0)
//! spin_deg_per_s = [0.0, 500.0, 0.0] # world-frame angular velocity of the target, deg/s
//! hold = ["y", "axis"]              # rows: "x", "y", "z" (world components of the
//!                                   # position offset), and "axis" (z axes aligned, 2 rows)
//!                                   # or "orientation" (3 rows)
//! compliance = 0.0                  # one value, or one per row
//! ```
//!
//! The target frame at time t is (p₀ + v t, Exp(Ω t) R₀), with (p₀, R₀) = `target` (the
//! orientation of `target` is its z axis and frame, world frame) and Ω = `spin_deg_per_s`
//! in rad/s. Each entry is one constraint of the world, after the joints, named `name`
//! (default `prescribed{i}`) in `lambda.csv`. In solve mode `scalar` it is built in the
//! normed form of Section 5.1 ([`crate::joint::PrescribedFrame::normed`]): one row for
//! the position part and one for the rotation part.

use super::error::{num, SceneError, SceneErrorKind};
use super::format::{ComplianceSpec, FrameSpec, OrientationSpec, WORLD};
use super::path::FieldPath;
use serde::{Deserialize, Serialize};

/// The world pose of the target frame at t = 0.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// Target origin at t = 0, m, world frame.
    #[serde(default)]
    pub position: [f64; 3],
    /// Target axes at t = 0 (target → world; default identity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orientation: Option<OrientationSpec>,
}

/// A held row group, as spelled in `hold`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HoldSpec {
    /// World x of the position offset (1 row).
    X,
    /// World y of the position offset (1 row).
    Y,
    /// World z of the position offset (1 row).
    Z,
    /// The z axes aligned (2 rows).
    Axis,
    /// The frames aligned (3 rows).
    Orientation,
}

/// `[[prescribed]]`: one body frame on a moving target (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrescribedSpec {
    /// Unique name among joints and prescribed motions (default `prescribed{i}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The driven body's name.
    pub body: String,
    /// The frame on the body that follows the target (body frame).
    #[serde(default)]
    pub frame: FrameSpec,
    /// The target at t = 0 (world frame).
    #[serde(default)]
    pub target: TargetSpec,
    /// Target velocity, m/s, world frame.
    #[serde(default)]
    pub velocity: [f64; 3],
    /// Target angular velocity, degrees per second, world frame.
    #[serde(default)]
    pub spin_deg_per_s: [f64; 3],
    /// The rows held (at least one).
    pub hold: Vec<HoldSpec>,
    /// Compliance α: one value, or one per row (m/N, rad/(N·m); default 0 = hard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compliance: Option<ComplianceSpec>,
}

impl PrescribedSpec {
    /// The held world position components (x, y, z) and rotation rows.
    pub fn rows(&self) -> ([bool; 3], crate::joint::HeldRotation) {
        use crate::joint::HeldRotation;
        let mut pos = [false; 3];
        let mut rot = HeldRotation::Free;
        for h in &self.hold {
            match h {
                HoldSpec::X => pos[0] = true,
                HoldSpec::Y => pos[1] = true,
                HoldSpec::Z => pos[2] = true,
                HoldSpec::Axis => rot = HeldRotation::Axis,
                HoldSpec::Orientation => rot = HeldRotation::Orientation,
            }
        }
        (pos, rot)
    }

    /// Number of constraint rows of the vector form.
    pub fn dim(&self) -> usize {
        let (pos, rot) = self.rows();
        pos.iter().filter(|&&b| b).count() + rot.rows()
    }

    /// Number of rows of the normed form (solve mode `scalar`): one per part held.
    pub fn normed_dim(&self) -> usize {
        let (pos, rot) = self.rows();
        usize::from(pos.iter().any(|&b| b)) + usize::from(rot.rows() > 0)
    }
}

/// The entry's name: `name`, or `prescribed{i}`.
pub(crate) fn prescribed_name(i: usize, p: &PrescribedSpec) -> String {
    p.name.clone().unwrap_or_else(|| format!("prescribed{i}"))
}

fn invalid(path: FieldPath, message: impl Into<String>) -> SceneError {
    SceneError::new(SceneErrorKind::Invalid, path, message)
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

/// Checks entry `p` at `path` against the scene's body names.
pub(crate) fn check(
    path: &FieldPath,
    p: &PrescribedSpec,
    bodies: &[super::format::BodySpec],
) -> Result<(), SceneError> {
    match bodies.iter().find(|b| b.name == p.body) {
        None if p.body == WORLD => {
            return Err(invalid(
                path.key("body"),
                "the world cannot be driven: name a dynamic body",
            ))
        }
        None => {
            let names: Vec<&str> = bodies.iter().map(|b| b.name.as_str()).collect();
            return Err(invalid(
                path.key("body"),
                format!(
                    "no body is named '{}'; bodies: {}",
                    p.body,
                    names.join(", ")
                ),
            ));
        }
        Some(b) if b.fixed => {
            return Err(invalid(
                path.key("body"),
                format!(
                    "body '{}' is fixed: a prescribed motion needs a dynamic body",
                    p.body
                ),
            ))
        }
        Some(_) => {}
    }
    finite3(
        path.key("frame").key("position"),
        "the frame position",
        &p.frame.position,
    )?;
    if let Some(o) = &p.frame.orientation {
        super::validate::check_orientation(path.key("frame").key("orientation"), o)?;
    }
    finite3(
        path.key("target").key("position"),
        "the target position",
        &p.target.position,
    )?;
    if let Some(o) = &p.target.orientation {
        super::validate::check_orientation(path.key("target").key("orientation"), o)?;
    }
    finite3(path.key("velocity"), "the target velocity", &p.velocity)?;
    finite3(
        path.key("spin_deg_per_s"),
        "the target spin",
        &p.spin_deg_per_s,
    )?;
    if p.hold.is_empty() {
        return Err(invalid(
            path.key("hold"),
            "hold at least one of \"x\", \"y\", \"z\", \"axis\", \"orientation\"",
        ));
    }
    for (i, h) in p.hold.iter().enumerate() {
        if p.hold[..i].contains(h) {
            return Err(invalid(path.key("hold").index(i), "listed twice"));
        }
    }
    if p.hold.contains(&HoldSpec::Axis) && p.hold.contains(&HoldSpec::Orientation) {
        return Err(invalid(
            path.key("hold"),
            "\"axis\" and \"orientation\" exclude each other (orientation already aligns the axes)",
        ));
    }
    let rows = p.dim();
    match &p.compliance {
        None => {}
        Some(ComplianceSpec::Uniform(a)) => check_compliance(path.key("compliance"), *a)?,
        Some(ComplianceSpec::PerRow(v)) => {
            if v.len() != rows {
                return Err(invalid(
                    path.key("compliance"),
                    format!("this prescribed motion holds {rows} rows, so give {rows} compliances (or one for all), not {}", v.len()),
                ));
            }
            for (i, a) in v.iter().enumerate() {
                check_compliance(path.key("compliance").index(i), *a)?;
            }
        }
    }
    Ok(())
}

fn check_compliance(path: FieldPath, a: f64) -> Result<(), SceneError> {
    if a.is_finite() && a >= 0.0 {
        Ok(())
    } else {
        Err(invalid(
            path,
            format!(
                "a compliance must be finite and >= 0 (0 = hard), got {}",
                num(a)
            ),
        ))
    }
}

/// The constraint of entry `p` on the world's body `body`. On error, the key of `p` at
/// fault and the error.
pub(crate) fn build<T: crate::lie::Real, G: crate::lie::LieGroup<T>>(
    p: &PrescribedSpec,
    body: crate::xpbd::BodyId,
    normed: bool,
) -> Result<crate::joint::PrescribedFrame<T, G>, (&'static str, crate::xpbd::XpbdError)> {
    use crate::joint::{JointFrame, PrescribedFrame};
    use crate::lie::real::c;
    let v3 = |a: &[f64; 3]| nalgebra::Vector3::new(c::<T>(a[0]), c::<T>(a[1]), c::<T>(a[2]));
    let rot = |o: Option<&OrientationSpec>, key| {
        super::build::orientation::<T, G>(o).map_err(|e| (key, crate::xpbd::XpbdError::Lie(e)))
    };
    let frame = JointFrame::new(
        v3(&p.frame.position),
        rot(p.frame.orientation.as_ref(), "frame")?,
    );
    let target = crate::lie::Pose::new(
        v3(&p.target.position),
        rot(p.target.orientation.as_ref(), "target")?,
    );
    let (pos, held) = p.rows();
    let deg = std::f64::consts::PI / 180.0;
    let spin = p.spin_deg_per_s.map(|w| w * deg);
    let m = PrescribedFrame::new(body, frame, target, pos, held)
        .map_err(|e| ("frame", e))?
        .with_velocity(v3(&p.velocity))
        .map_err(|e| ("velocity", e))?
        .with_spin(v3(&spin))
        .map_err(|e| ("spin_deg_per_s", e))?;
    let (m, rows) = if normed {
        (m.normed(), p.normed_dim())
    } else {
        (m, p.dim())
    };
    match &p.compliance {
        None => Ok(m),
        Some(ComplianceSpec::PerRow(v)) if normed && v.iter().any(|&a| a != v[0]) => Err((
            "compliance",
            crate::xpbd::XpbdError::InvalidJoint {
                field: "compliance",
                value: format!("{v:?}"),
                reason: "in scalar mode a prescribed motion has one normed row per part: give one compliance for all rows",
            },
        )),
        Some(ComplianceSpec::PerRow(v)) if normed => m
            .with_compliance(&vec![c::<T>(v[0]); rows])
            .map_err(|e| ("compliance", e)),
        Some(ComplianceSpec::Uniform(a)) => m
            .with_compliance(&vec![c::<T>(*a); rows])
            .map_err(|e| ("compliance", e)),
        Some(ComplianceSpec::PerRow(v)) => m
            .with_compliance(&v.iter().map(|&a| c::<T>(a)).collect::<Vec<_>>())
            .map_err(|e| ("compliance", e)),
    }
}
