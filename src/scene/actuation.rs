//! A joint's limits, drive, motor and breaking thresholds in the scene file: the
//! `limit`, `drive`, `motor`, `break_force` and `break_torque` keys of `[[joints]]`.
//!
//! A `drive` replaces the joint: the drive (81) is the joint with its driven rows
//! sprung ([`crate::joint::JointDrive`]; 6 rows, named `<joint>`). A `limit` and a
//! `motor` are built as their own constraints on the joint's two bodies and joint
//! frames, next to the joint (so a revolute joint with a limit and a motor is three
//! constraints, each with its own λ columns in `lambda.csv`, named `<joint>`,
//! `<joint>_limit`, `<joint>_motor`; a spherical limit gives `<joint>_swing_limit`
//! and/or `<joint>_twist_limit`). In solve mode `scalar` the joint is normed but its
//! drive, limits and motor are the same constraints (limits and motors are single rows
//! already).
//!
//! ```toml
//! [[joints]]
//! name = "elbow"
//! type = "revolute"
//! body1 = "upper"
//! body2 = "lower"
//! limit = { lower_deg = -45.0, upper_deg = 45.0 }           # (74)
//! drive = { target_deg = 30.0, stiffness = 200.0 }           # (81): N·m/rad
//! # motor = { speed = 2.0, max_torque = 5.0 }                # rad/s, N·m
//! break_torque = 500.0                                       # N·m
//!
//! [[joints]]
//! type = "prismatic"                                         # slide along joint z
//! limit = { lower = -0.1, upper = 0.1 }                      # m, (80)
//! drive = { target = 0.05, rate = 0.01, stiffness = 1e4 }    # m, m/s, N/m
//! motor = { speed = 0.2, max_force = 50.0 }                  # m/s, N
//!
//! [[joints]]
//! type = "spherical"
//! limit = { swing_deg = 30.0, twist_lower_deg = -10.0, twist_upper_deg = 10.0 }  # (76)–(78)
//! drive = { target = { axis = [0, 0, 1], angle_deg = 20.0 }, stiffness = [50.0, 50.0, 10.0] }
//! ```
//!
//! Which keys a joint type takes:
//!
//! | key | revolute | prismatic | spherical | fixed |
//! |---|---|---|---|---|
//! | `limit` | `lower_deg`, `upper_deg` | `lower`, `upper` (m) | `swing_deg`, `twist_lower_deg`, `twist_upper_deg` | – |
//! | `drive` | `target_deg`, `rate_deg_per_s`, `stiffness` (N·m/rad) | `target`, `rate` (m, m/s), `stiffness` (N/m) | `target` (orientation), `stiffness` (N·m/rad, one or three) | – |
//! | `motor` | `speed` (rad/s), `max_torque` (N·m) | `speed` (m/s), `max_force` (N) | – | – |
//! | `break_force`, `break_torque` | N, N·m | N, N·m | N, – | N, N·m |
//!
//! Every joint coordinate is body 2 relative to body 1, about or along body 1's joint
//! frame axes: a revolute angle θ > 0 (limit, target, motor speed) turns body 2
//! positively about joint z (R̄₁ᵀR̄₂ = R_z(θ); [`crate::joint::JointKinematics::revolute_angle`]),
//! as a spherical target's angle and twist limits do, and a prismatic slide > 0 moves
//! body 2 along +z.
//!
//! A drive target moves at its constant `rate`: target(t) = target + rate·t. Every
//! table also takes `compliance` (limit) or `damping` (drive, s; Rayleigh b of
//! Section 4.4) where it says so below; unknown keys are errors.

use serde::{Deserialize, Serialize};

use super::format::OrientationSpec;

/// `limit = { ... }`: joint limits, inequality constraints active only when violated
/// ((74), (76)–(78), (80)). Give the keys of the joint's type (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitSpec {
    /// Revolute: lowest joint angle θ_rev (73), degrees (lower < upper; the range may
    /// exceed ±180°).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower_deg: Option<f64>,
    /// Revolute: highest joint angle, degrees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper_deg: Option<f64>,
    /// Prismatic: lowest slide d_pr (80), m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<f64>,
    /// Prismatic: highest slide, m.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<f64>,
    /// Spherical: largest swing (angle between the joint frames' z axes), degrees,
    /// in (0, 180].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swing_deg: Option<f64>,
    /// Spherical: lowest twist about the joint axis, degrees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twist_lower_deg: Option<f64>,
    /// Spherical: highest twist about the joint axis, degrees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twist_upper_deg: Option<f64>,
    /// Compliance of every limit row (rad/(N·m) or m/N; default 0 = hard).
    #[serde(default)]
    pub compliance: f64,
}

/// Drive stiffness: one value for every driven degree of freedom, or one per degree of
/// freedom (spherical: three, about the joint frame's x, y, z axes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "a stiffness: one number, or a list with one number per driven degree of freedom"
)]
pub enum StiffnessSpec {
    /// The same stiffness for every driven degree of freedom.
    Uniform(f64),
    /// One stiffness per driven degree of freedom.
    PerAxis(Vec<f64>),
}

/// `drive = { ... }`: a target constraint (81) with compliance α = 1/k per driven
/// degree of freedom (Section 5.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriveSpec {
    /// Revolute: target joint angle at t = 0, degrees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_deg: Option<f64>,
    /// Revolute: rate of the target angle, degrees per second (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_deg_per_s: Option<f64>,
    /// Prismatic: target slide (m) at t = 0; spherical: target relative orientation of
    /// the joint frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<DriveTarget>,
    /// Prismatic: rate of the target slide, m/s (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Stiffness k > 0 per driven degree of freedom (N·m/rad or N/m).
    pub stiffness: StiffnessSpec,
    /// Rayleigh damping b ≥ 0 of every drive row, s (default 0; Section 4.4).
    #[serde(default)]
    pub damping: f64,
}

/// A drive target: a slide (m, prismatic) or an orientation (spherical).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged, expecting = "a target: a number (m) or an orientation table")]
pub enum DriveTarget {
    /// A slide, m.
    Slide(f64),
    /// A relative orientation of the joint frames (R̄₁ᵀR̄₂).
    Orientation(OrientationSpec),
}

/// `motor = { speed = .., max_torque = .. }` (revolute) or `{ speed = .., max_force =
/// .. }` (prismatic): a velocity motor.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MotorSpec {
    /// Target joint speed, rad/s (revolute) or m/s (prismatic).
    pub speed: f64,
    /// Revolute: largest torque the motor gives, N·m (> 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_torque: Option<f64>,
    /// Prismatic: largest force the motor gives, N (> 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_force: Option<f64>,
}

use super::error::{num, SceneError, SceneErrorKind};
use super::format::{JointSpec, JointType};
use super::path::FieldPath;

fn invalid(path: FieldPath, message: impl Into<String>) -> SceneError {
    SceneError::new(SceneErrorKind::Invalid, path, message)
}

fn finite(path: FieldPath, what: &str, unit: &str, x: f64) -> Result<(), SceneError> {
    if x.is_finite() {
        Ok(())
    } else {
        Err(invalid(
            path,
            format!("{what} must be finite ({unit}), got {}", num(x)),
        ))
    }
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

/// A key the joint type does not take.
fn not_for(path: FieldPath, kind: JointType, key: &str, hint: &str) -> SceneError {
    invalid(
        path,
        format!("a {} joint has no `{key}`; {hint}", kind.name()),
    )
}

/// Lower and upper bound: both given, finite, lower < upper.
fn bounds(
    path: &FieldPath,
    (lo_key, lo): (&str, Option<f64>),
    (hi_key, hi): (&str, Option<f64>),
    unit: &str,
) -> Result<(), SceneError> {
    let lo = lo.ok_or_else(|| invalid(path.key(lo_key), format!("missing `{lo_key}` ({unit})")))?;
    let hi = hi.ok_or_else(|| invalid(path.key(hi_key), format!("missing `{hi_key}` ({unit})")))?;
    finite(path.key(lo_key), "a limit", unit, lo)?;
    finite(path.key(hi_key), "a limit", unit, hi)?;
    if lo < hi {
        Ok(())
    } else {
        Err(invalid(
            path.key(hi_key),
            format!(
                "`{hi_key}` = {} must exceed `{lo_key}` = {} (equal bounds lock the joint: use a fixed joint or a drive)",
                num(hi),
                num(lo)
            ),
        ))
    }
}

/// The name suffixes of the constraints joint `j`'s keys add next to it, in the order
/// they are built ([`extras`]).
pub(crate) fn extra_suffixes(j: &JointSpec) -> Vec<&'static str> {
    let mut v = Vec::new();
    if let Some(l) = &j.limit {
        match j.kind {
            JointType::Revolute | JointType::Prismatic => v.push("_limit"),
            JointType::Spherical => {
                if l.swing_deg.is_some() {
                    v.push("_swing_limit");
                }
                if l.twist_lower_deg.is_some() {
                    v.push("_twist_limit");
                }
            }
            JointType::Fixed => {}
        }
    }
    if j.motor.is_some() {
        v.push("_motor");
    }
    v
}

/// Checks `limit`, `drive`, `motor`, `break_force` and `break_torque` of joint `j` at
/// `path` against its type (see the module table).
pub(crate) fn check(path: &FieldPath, j: &JointSpec) -> Result<(), SceneError> {
    let kind = j.kind;
    if j.drive.is_some() && (j.compliance.is_some() || j.damping.is_some()) {
        let key = if j.compliance.is_some() {
            "compliance"
        } else {
            "damping"
        };
        return Err(invalid(
            path.key(key),
            format!("a driven joint takes its spring from `drive.stiffness` and its damping from `drive.damping`; its other rows are hard: remove `{key}`"),
        ));
    }
    if let Some(l) = &j.limit {
        let p = path.key("limit");
        let angle_keys = [l.lower_deg, l.upper_deg];
        let slide_keys = [l.lower, l.upper];
        let sph_keys = [l.swing_deg, l.twist_lower_deg, l.twist_upper_deg];
        let given = |keys: &[Option<f64>]| keys.iter().any(|k| k.is_some());
        match kind {
            JointType::Revolute => {
                if given(&slide_keys) || given(&sph_keys) {
                    return Err(invalid(
                        p,
                        "a revolute limit takes `lower_deg` and `upper_deg` (degrees)",
                    ));
                }
                bounds(
                    &p,
                    ("lower_deg", l.lower_deg),
                    ("upper_deg", l.upper_deg),
                    "degrees",
                )?;
            }
            JointType::Prismatic => {
                if given(&angle_keys) || given(&sph_keys) {
                    return Err(invalid(
                        p,
                        "a prismatic limit takes `lower` and `upper` (m, along the joint z axis)",
                    ));
                }
                bounds(&p, ("lower", l.lower), ("upper", l.upper), "m")?;
            }
            JointType::Spherical => {
                if given(&angle_keys) || given(&slide_keys) {
                    return Err(invalid(p, "a spherical limit takes `swing_deg` and/or `twist_lower_deg` with `twist_upper_deg` (degrees)"));
                }
                if !given(&sph_keys) {
                    return Err(invalid(p, "give `swing_deg`, or `twist_lower_deg` and `twist_upper_deg`, or all three"));
                }
                if let Some(s) = l.swing_deg {
                    if !(s.is_finite() && s > 0.0 && s <= 180.0) {
                        return Err(invalid(
                            p.key("swing_deg"),
                            format!(
                                "the swing limit must be in (0, 180] degrees, got {}",
                                num(s)
                            ),
                        ));
                    }
                }
                if l.twist_lower_deg.is_some() || l.twist_upper_deg.is_some() {
                    bounds(
                        &p,
                        ("twist_lower_deg", l.twist_lower_deg),
                        ("twist_upper_deg", l.twist_upper_deg),
                        "degrees",
                    )?;
                }
            }
            JointType::Fixed => {
                return Err(not_for(
                    p,
                    kind,
                    "limit",
                    "a fixed joint has no free motion to limit",
                ))
            }
        }
        if !(l.compliance.is_finite() && l.compliance >= 0.0) {
            return Err(invalid(
                p.key("compliance"),
                format!(
                    "compliance must be finite and >= 0 (0 = hard), got {}",
                    num(l.compliance)
                ),
            ));
        }
    }
    if let Some(d) = &j.drive {
        let p = path.key("drive");
        let dofs = match kind {
            JointType::Revolute => {
                if d.target.is_some() || d.rate.is_some() {
                    return Err(invalid(p, "a revolute drive takes `target_deg` and `rate_deg_per_s` (degrees, degrees per second)"));
                }
                let t = d.target_deg.ok_or_else(|| {
                    invalid(p.key("target_deg"), "missing `target_deg` (degrees)")
                })?;
                finite(p.key("target_deg"), "the target angle", "degrees", t)?;
                finite(
                    p.key("rate_deg_per_s"),
                    "the target rate",
                    "degrees per second",
                    d.rate_deg_per_s.unwrap_or(0.0),
                )?;
                1
            }
            JointType::Prismatic => {
                if d.target_deg.is_some() || d.rate_deg_per_s.is_some() {
                    return Err(invalid(
                        p,
                        "a prismatic drive takes `target` and `rate` (m, m/s)",
                    ));
                }
                match d.target {
                    Some(DriveTarget::Slide(t)) => {
                        finite(p.key("target"), "the target slide", "m", t)?
                    }
                    Some(DriveTarget::Orientation(_)) => {
                        return Err(invalid(
                            p.key("target"),
                            "a prismatic target is a slide in m, not an orientation",
                        ))
                    }
                    None => return Err(invalid(p.key("target"), "missing `target` (m)")),
                }
                finite(
                    p.key("rate"),
                    "the target rate",
                    "m/s",
                    d.rate.unwrap_or(0.0),
                )?;
                1
            }
            JointType::Spherical => {
                if d.target_deg.is_some() || d.rate_deg_per_s.is_some() || d.rate.is_some() {
                    return Err(invalid(p, "a spherical drive takes `target` (an orientation table) and `stiffness`; its target does not move"));
                }
                match &d.target {
                    Some(DriveTarget::Orientation(o)) => super::validate::check_orientation(p.key("target"), o)?,
                    Some(DriveTarget::Slide(_)) => return Err(invalid(p.key("target"), "a spherical target is an orientation: `{ axis = [x, y, z], angle_deg = A }` or `{ quaternion = [w, x, y, z] }`")),
                    None => return Err(invalid(p.key("target"), "missing `target` (an orientation table)")),
                }
                3
            }
            JointType::Fixed => {
                return Err(not_for(
                    p,
                    kind,
                    "drive",
                    "drive a revolute, prismatic or spherical joint",
                ))
            }
        };
        match &d.stiffness {
            StiffnessSpec::Uniform(k) => positive(
                p.key("stiffness"),
                "a drive stiffness",
                "N·m/rad or N/m",
                *k,
            )?,
            StiffnessSpec::PerAxis(v) => {
                if v.len() != dofs {
                    return Err(invalid(p.key("stiffness"), format!("a {} drive drives {dofs} degree(s) of freedom, so give {dofs} stiffnesses (or one for all), not {}", kind.name(), v.len())));
                }
                for (i, k) in v.iter().enumerate() {
                    positive(
                        p.key("stiffness").index(i),
                        "a drive stiffness",
                        "N·m/rad or N/m",
                        *k,
                    )?;
                }
            }
        }
        if !(d.damping.is_finite() && d.damping >= 0.0) {
            return Err(invalid(
                p.key("damping"),
                format!(
                    "damping must be finite and >= 0 (s), got {}",
                    num(d.damping)
                ),
            ));
        }
    }
    if let Some(m) = &j.motor {
        let p = path.key("motor");
        finite(p.key("speed"), "the motor speed", "rad/s or m/s", m.speed)?;
        match (kind, m.max_torque, m.max_force) {
            (JointType::Revolute, Some(t), None) => {
                positive(p.key("max_torque"), "the motor's largest torque", "N·m", t)?
            }
            (JointType::Revolute, _, _) => {
                return Err(invalid(
                    p,
                    "a revolute motor takes `speed` (rad/s) and `max_torque` (N·m)",
                ))
            }
            (JointType::Prismatic, None, Some(f)) => {
                positive(p.key("max_force"), "the motor's largest force", "N", f)?
            }
            (JointType::Prismatic, _, _) => {
                return Err(invalid(
                    p,
                    "a prismatic motor takes `speed` (m/s) and `max_force` (N)",
                ))
            }
            _ => {
                return Err(not_for(
                    p,
                    kind,
                    "motor",
                    "motors drive revolute and prismatic joints",
                ))
            }
        }
    }
    if let Some(f) = j.break_force {
        positive(path.key("break_force"), "a breaking force", "N", f)?;
    }
    if let Some(t) = j.break_torque {
        if kind == JointType::Spherical {
            return Err(not_for(
                path.key("break_torque"),
                kind,
                "break_torque",
                "a spherical joint carries no torque",
            ));
        }
        positive(path.key("break_torque"), "a breaking torque", "N·m", t)?;
    }
    Ok(())
}

/// A constraint a joint's keys add to the world, with the suffix of its name.
pub(crate) type Extra<T, G> = (&'static str, Box<dyn crate::xpbd::Constraint<T, G>>);

/// The sides of a joint as built: bodies and frames.
pub(crate) struct Sides<T: crate::lie::Real, G: crate::lie::LieGroup<T>> {
    pub b1: Option<crate::xpbd::BodyId>,
    pub f1: crate::joint::JointFrame<T, G>,
    pub b2: Option<crate::xpbd::BodyId>,
    pub f2: crate::joint::JointFrame<T, G>,
}

/// The key of the joint at fault and the error, for the builder to locate.
pub(crate) type BuildError = (&'static str, crate::xpbd::XpbdError);

fn stiffness<T: crate::lie::Real>(s: &StiffnessSpec) -> (T, Option<Vec<T>>) {
    use crate::lie::real::c;
    match s {
        StiffnessSpec::Uniform(k) => (c::<T>(*k), None),
        StiffnessSpec::PerAxis(v) => (c::<T>(v[0]), Some(v.iter().map(|&k| c::<T>(k)).collect())),
    }
}

/// The drive of joint `j` (already checked), which replaces the joint: a revolute,
/// spherical or prismatic [`crate::joint::JointDrive`] (81); `None` without a `drive`.
pub(crate) fn drive<T: crate::lie::Real, G: crate::lie::LieGroup<T>>(
    j: &JointSpec,
    s: &Sides<T, G>,
) -> Result<Option<Box<dyn crate::xpbd::Constraint<T, G>>>, BuildError> {
    use crate::joint::{relative_rotation_target, PrismaticDrive, RevoluteDrive, SphericalDrive};
    use crate::lie::real::c;
    let Some(d) = &j.drive else { return Ok(None) };
    let at = |e| ("drive", e);
    let (k, per_axis) = stiffness::<T>(&d.stiffness);
    let damping = c::<T>(d.damping);
    let boxed: Box<dyn crate::xpbd::Constraint<T, G>> = match j.kind {
        JointType::Revolute => {
            let target = c::<T>(d.target_deg.unwrap_or(0.0).to_radians());
            let mut drive =
                RevoluteDrive::<T, G>::new(s.b1, s.f1, s.b2, s.f2, target, k).map_err(at)?;
            if let Some(r) = d.rate_deg_per_s {
                drive = drive.with_rate(c::<T>(r.to_radians())).map_err(at)?;
            }
            Box::new(drive.with_damping(damping).map_err(at)?)
        }
        JointType::Prismatic => {
            let target = match d.target {
                Some(DriveTarget::Slide(x)) => c::<T>(x),
                _ => T::zero(),
            };
            let mut drive =
                PrismaticDrive::<T, G>::new(s.b1, s.f1, s.b2, s.f2, target, k).map_err(at)?;
            if let Some(r) = d.rate {
                drive = drive.with_rate(c::<T>(r)).map_err(at)?;
            }
            Box::new(drive.with_damping(damping).map_err(at)?)
        }
        JointType::Spherical => {
            let relative = match &d.target {
                Some(DriveTarget::Orientation(o)) => {
                    super::build::orientation::<T, G>(Some(o)).map_err(|e| at(e.into()))?
                }
                _ => G::identity(),
            };
            let mut drive = SphericalDrive::<T, G>::new(
                s.b1,
                s.f1,
                s.b2,
                s.f2,
                relative_rotation_target(&relative),
                k,
            )
            .map_err(at)?;
            if let Some(v) = per_axis {
                drive = drive.with_stiffnesses(&v).map_err(at)?;
            }
            Box::new(drive.with_damping(damping).map_err(at)?)
        }
        JointType::Fixed => return Ok(None),
    };
    Ok(Some(boxed))
}

/// The limits and motor joint `j` (already checked) adds next to itself, in order, with
/// their name suffixes: `_limit` (revolute, prismatic), `_swing_limit` and
/// `_twist_limit` (spherical), `_motor`. `h` is the world's substep, s.
pub(crate) fn extras<T: crate::lie::Real, G: crate::lie::LieGroup<T>>(
    j: &JointSpec,
    s: &Sides<T, G>,
    h: T,
) -> Result<Vec<Extra<T, G>>, BuildError> {
    use crate::joint::{
        PrismaticLimit, RevoluteLimit, SphericalSwingLimit, SphericalTwistLimit, VelocityMotor,
    };
    use crate::lie::real::c;
    let mut out: Vec<Extra<T, G>> = Vec::new();
    let deg = |x: Option<f64>| c::<T>(x.unwrap_or(0.0).to_radians());
    if let Some(l) = &j.limit {
        let at = |e| ("limit", e);
        let alpha = c::<T>(l.compliance);
        match j.kind {
            JointType::Revolute => {
                let lim =
                    RevoluteLimit::new(s.b1, s.f1, s.b2, s.f2, deg(l.lower_deg), deg(l.upper_deg))
                        .and_then(|x| x.with_compliance(alpha))
                        .map_err(at)?;
                out.push(("_limit", Box::new(lim)));
            }
            JointType::Prismatic => {
                let lo = c::<T>(l.lower.unwrap_or(0.0));
                let hi = c::<T>(l.upper.unwrap_or(0.0));
                let lim = PrismaticLimit::new(s.b1, s.f1, s.b2, s.f2, lo, hi)
                    .and_then(|x| x.with_compliance(alpha))
                    .map_err(at)?;
                out.push(("_limit", Box::new(lim)));
            }
            JointType::Spherical => {
                if let Some(max) = l.swing_deg {
                    // 180° must not exceed π after rounding to T.
                    let max = c::<T>(max.to_radians()).min(T::pi());
                    let lim = SphericalSwingLimit::new(s.b1, s.f1, s.b2, s.f2, max)
                        .and_then(|x| x.with_compliance(alpha))
                        .map_err(at)?;
                    out.push(("_swing_limit", Box::new(lim)));
                }
                if l.twist_lower_deg.is_some() {
                    let lim = SphericalTwistLimit::new(
                        s.b1,
                        s.f1,
                        s.b2,
                        s.f2,
                        deg(l.twist_lower_deg),
                        deg(l.twist_upper_deg),
                    )
                    .and_then(|x| x.with_compliance(alpha))
                    .map_err(at)?;
                    out.push(("_twist_limit", Box::new(lim)));
                }
            }
            JointType::Fixed => {}
        }
    }
    if let Some(m) = &j.motor {
        let at = |e| ("motor", e);
        let inf = f64::INFINITY;
        let motor = match j.kind {
            JointType::Revolute => VelocityMotor::revolute(
                s.b1,
                s.f1,
                s.b2,
                s.f2,
                c::<T>(m.speed),
                c::<T>(m.max_torque.unwrap_or(inf)),
                h,
            ),
            JointType::Prismatic => VelocityMotor::prismatic(
                s.b1,
                s.f1,
                s.b2,
                s.f2,
                c::<T>(m.speed),
                c::<T>(m.max_force.unwrap_or(inf)),
                h,
            ),
            _ => return Ok(out),
        }
        .map_err(at)?;
        out.push(("_motor", Box::new(motor)));
    }
    Ok(out)
}

/// The length rows (force) and angle rows (torque) of a joint constraint of kind `kind`
/// ([`crate::xpbd::Constraint::kind`]) with `rows` rows, for its break limits.
pub(crate) fn break_rows(kind: &str, rows: usize) -> ([bool; 6], [bool; 6]) {
    let mask = |r: std::ops::Range<usize>| {
        let mut m = [false; 6];
        for i in r.filter(|&i| i < rows.min(6)) {
            m[i] = true;
        }
        m
    };
    if kind.ends_with("_scalar") {
        // Normed joints: one positional row, then one rotational row.
        return (mask(0..1), mask(1..2));
    }
    match kind {
        "prismatic" => (mask(0..2), mask(2..5)),
        // fixed, revolute, spherical, and the drives (81): [u or Δp ; rotation].
        _ => (mask(0..3), mask(3..6)),
    }
}
