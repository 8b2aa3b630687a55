//! Checks of a parsed scene beyond its types (the `--set` overrides are in
//! [`super::overrides`]).

use super::error::{num, SceneError, SceneErrorKind};
use super::format::*;
use super::path::FieldPath;
use std::collections::HashSet;

/// Largest accepted |angle| in an orientation, degrees (ten turns: beyond it the value
/// is more likely a unit mistake than a choice).
pub const MAX_ANGLE_DEG: f64 = 3600.0;

pub use crate::lie::QUATERNION_NORM_TOLERANCE;

fn invalid(path: FieldPath, message: impl Into<String>) -> SceneError {
    SceneError::new(SceneErrorKind::Invalid, path, message)
}

fn root() -> FieldPath {
    FieldPath::root()
}

pub(crate) fn check_version(table: &toml::Table) -> Result<(), SceneError> {
    let path = root().key("version");
    match table.get("version") {
        None => Err(SceneError::new(
            SceneErrorKind::Version,
            root(),
            format!("missing `version = {SCENE_VERSION}` (the scene-file format version)"),
        )),
        Some(toml::Value::Integer(v)) if *v == i64::from(SCENE_VERSION) => Ok(()),
        Some(v) => Err(SceneError::new(
            SceneErrorKind::Version,
            path,
            format!("unsupported version {v}; this library reads version {SCENE_VERSION}"),
        )),
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

fn finite3(path: FieldPath, what: &str, v: &[f64]) -> Result<(), SceneError> {
    match v.iter().position(|x| !x.is_finite()) {
        None => Ok(()),
        Some(i) => Err(invalid(
            path.index(i),
            format!("{what} must be finite, got {}", num(v[i])),
        )),
    }
}

pub(crate) fn check_orientation(path: FieldPath, o: &OrientationSpec) -> Result<(), SceneError> {
    match o {
        OrientationSpec::AxisAngle { axis, angle_deg } => {
            finite3(path.key("axis"), "the rotation axis", axis)?;
            let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
            if !(n > 0.0 && n.is_finite()) {
                return Err(invalid(
                    path.key("axis"),
                    "the rotation axis must be a non-zero vector",
                ));
            }
            if !(angle_deg.is_finite() && angle_deg.abs() <= MAX_ANGLE_DEG) {
                return Err(invalid(
                    path.key("angle_deg"),
                    format!(
                        "the angle must be finite and within ±{MAX_ANGLE_DEG} degrees, got {}",
                        num(*angle_deg)
                    ),
                ));
            }
        }
        OrientationSpec::Quaternion { quaternion: q } => {
            let p = path.key("quaternion");
            finite3(p.clone(), "a quaternion component", q)?;
            let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
            if (n - 1.0).abs() > QUATERNION_NORM_TOLERANCE || n.is_nan() {
                return Err(invalid(
                    p,
                    format!(
                        "a quaternion [w, x, y, z] must have norm 1 (within {QUATERNION_NORM_TOLERANCE:e}), got norm {n}; give more digits or use {{ axis = [x, y, z], angle_deg = A }}"
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn check_shape(path: FieldPath, s: &ShapeSpec) -> Result<(), SceneError> {
    match s {
        ShapeSpec::Box { size } => {
            for (i, &x) in size.iter().enumerate() {
                positive(path.key("size").index(i), "a box edge length", "m", x)?;
            }
        }
        ShapeSpec::Sphere { radius } => positive(path.key("radius"), "the radius", "m", *radius)?,
        ShapeSpec::Cylinder { radius, length } => {
            positive(path.key("radius"), "the radius", "m", *radius)?;
            positive(path.key("length"), "the length", "m", *length)?;
        }
        ShapeSpec::Capsule { radius, length } => {
            positive(path.key("radius"), "the radius", "m", *radius)?;
            if !(length.is_finite() && *length >= 0.0) {
                return Err(invalid(
                    path.key("length"),
                    format!(
                        "the length must be finite and >= 0 (m), got {}",
                        num(*length)
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn check_body(path: &FieldPath, b: &BodySpec) -> Result<(), SceneError> {
    if b.name.trim().is_empty() {
        return Err(invalid(path.key("name"), "a body name must not be empty"));
    }
    check_name(path.key("name"), "body", &b.name)?;
    if b.name == WORLD {
        return Err(invalid(
            path.key("name"),
            "'world' is reserved for the fixed world frame; choose another body name",
        ));
    }
    if let Some(s) = &b.shape {
        check_shape(path.key("shape"), s)?;
    }
    finite3(path.key("position"), "the position", &b.position)?;
    finite3(path.key("velocity"), "the velocity", &b.velocity)?;
    finite3(
        path.key("angular_velocity"),
        "the angular velocity",
        &b.angular_velocity,
    )?;
    if let Some(o) = &b.orientation {
        check_orientation(path.key("orientation"), o)?;
    }
    if let Some(d) = b.density {
        positive(path.key("density"), "the density", "kg/m³", d)?;
    }
    if let Some(m) = b.mass {
        positive(path.key("mass"), "the mass", "kg", m)?;
    }
    if let Some(inertia) = &b.inertia {
        for (i, &x) in inertia.iter().enumerate() {
            positive(
                path.key("inertia").index(i),
                "a principal moment of inertia",
                "kg·m²",
                x,
            )?;
        }
        let [a, bb, c] = *inertia;
        let slack = 1e-9 * (a + bb + c);
        if a + bb + slack < c || a + c + slack < bb || bb + c + slack < a {
            return Err(invalid(
                path.key("inertia"),
                format!("principal inertia {inertia:?} kg·m² violates I₁ + I₂ ≥ I₃ (and its permutations), which every rigid body satisfies"),
            ));
        }
    }
    if b.fixed {
        return Ok(());
    }
    match (b.density.is_some(), b.mass.is_some(), b.inertia.is_some()) {
        (true, false, false) if b.shape.is_some() => Ok(()),
        (true, false, false) => Err(invalid(path.key("density"), "a density needs a shape to give the mass (add `shape = { type = \"box\", size = [..] }`, or give `mass` and `inertia`)")),
        (false, true, true) => Ok(()),
        (true, true, _) | (true, _, true) => Err(invalid(path.key("density"), "give either `density` (with `shape`) or `mass` and `inertia`, not both")),
        (false, true, false) => Err(invalid(path.key("mass"), "a mass needs its principal `inertia = [I1, I2, I3]` (kg·m²)")),
        (false, false, true) => Err(invalid(path.key("inertia"), "an inertia needs its `mass` (kg)")),
        (false, false, false) => Err(invalid(
            path.clone(),
            format!("dynamic body '{}' has no mass: give `shape` and `density`, or `mass` and `inertia`, or set `fixed = true`", b.name),
        )),
    }
}

fn check_joint(
    path: &FieldPath,
    j: &JointSpec,
    bodies: &[BodySpec],
    rods: &[super::rod::RodSpec],
) -> Result<(), SceneError> {
    // Whether the side is fixed (the world, a fixed body, a clamped rod end).
    let find = |key: &str, name: &str| -> Result<bool, SceneError> {
        if name == WORLD {
            return Ok(true);
        }
        if let Some(b) = bodies.iter().find(|b| b.name == name) {
            return Ok(b.fixed);
        }
        match super::rod::resolve_node(rods, name) {
            Some(Ok((r, k))) => return Ok(rods[r].is_fixed(k)),
            Some(Err(m)) => return Err(invalid(path.key(key), m)),
            None => {}
        }
        let mut names: Vec<String> = bodies.iter().map(|b| b.name.clone()).collect();
        names.extend(rods.iter().map(|r| format!("{}:<node>", r.name)));
        Err(invalid(
            path.key(key),
            format!(
                "no body is named '{name}'; valid values: {}, {WORLD}",
                names.join(", ")
            ),
        ))
    };
    let b1 = find("body1", &j.body1)?;
    let b2 = find("body2", &j.body2)?;
    if j.body1 == j.body2 {
        return Err(invalid(
            path.key("body2"),
            format!(
                "a joint must join two different bodies, but both sides are '{}'",
                j.body1
            ),
        ));
    }
    let same_node = match (
        super::rod::resolve_node(rods, &j.body1),
        super::rod::resolve_node(rods, &j.body2),
    ) {
        (Some(Ok(a)), Some(Ok(b))) => a == b,
        _ => false,
    };
    if same_node {
        return Err(invalid(
            path.key("body2"),
            format!(
                "'{}' and '{}' are the same rod node; a joint must join two different bodies",
                j.body1, j.body2
            ),
        ));
    }
    if b1 && b2 {
        return Err(invalid(
            path.clone(),
            format!("joint between '{}' and '{}' has no dynamic body: the solver could never move either side", j.body1, j.body2),
        ));
    }
    for (key, f) in [("frame1", &j.frame1), ("frame2", &j.frame2)] {
        finite3(
            path.key(key).key("position"),
            "the joint position",
            &f.position,
        )?;
        if let Some(o) = &f.orientation {
            check_orientation(path.key(key).key("orientation"), o)?;
        }
    }
    let rows = j.kind.rows();
    match &j.compliance {
        None => {}
        Some(ComplianceSpec::Uniform(a)) => check_compliance(path.key("compliance"), *a)?,
        Some(ComplianceSpec::PerRow(v)) => {
            if v.len() != rows {
                return Err(invalid(
                    path.key("compliance"),
                    format!("a {} joint has {rows} rows, so give {rows} compliances (or one for all), not {}", j.kind.name(), v.len()),
                ));
            }
            for (i, &a) in v.iter().enumerate() {
                check_compliance(path.key("compliance").index(i), a)?;
            }
        }
    }
    check_damping(path, j, rows)?;
    super::actuation::check(path, j)
}

/// `damping`: finite and ≥ 0, the right length, and only on compliant rows (β = b/α
/// needs α > 0; the solver skips hard rows, so damping there would silently do
/// nothing).
fn check_damping(path: &FieldPath, j: &JointSpec, rows: usize) -> Result<(), SceneError> {
    let compliance = |row: usize| match &j.compliance {
        None => 0.0,
        Some(ComplianceSpec::Uniform(a)) => *a,
        Some(ComplianceSpec::PerRow(v)) => v[row],
    };
    let joint = joint_label(j);
    match &j.damping {
        None => Ok(()),
        Some(DampingSpec::Uniform(b)) => {
            check_damping_value(path.key("damping"), *b)?;
            if *b > 0.0 && (0..rows).all(|r| compliance(r) == 0.0) {
                return Err(invalid(
                    path.key("damping"),
                    format!(
                        "{joint} has damping {} s but every one of its {rows} rows is hard \
                         (compliance 0), and a hard row cannot be damped (β = b/α needs α > 0): \
                         give the joint a `compliance`, or remove `damping`",
                        num(*b)
                    ),
                ));
            }
            Ok(())
        }
        Some(DampingSpec::PerRow(v)) => {
            if v.len() != rows {
                return Err(invalid(
                    path.key("damping"),
                    format!("a {} joint has {rows} rows, so give {rows} dampings (or one for all), not {}", j.kind.name(), v.len()),
                ));
            }
            for (i, &b) in v.iter().enumerate() {
                check_damping_value(path.key("damping").index(i), b)?;
                if b > 0.0 && compliance(i) == 0.0 {
                    return Err(invalid(
                        path.key("damping").index(i),
                        format!(
                            "{joint}: row {i} is hard (compliance 0), so its damping {} s would \
                             do nothing (β = b/α needs α > 0): give the row a compliance > 0 or \
                             a damping of 0",
                            num(b)
                        ),
                    ));
                }
            }
            Ok(())
        }
    }
}

fn joint_label(j: &JointSpec) -> String {
    match &j.name {
        Some(n) => format!("{} joint '{n}'", j.kind.name()),
        None => format!(
            "{} joint between '{}' and '{}'",
            j.kind.name(),
            j.body1,
            j.body2
        ),
    }
}

fn check_damping_value(path: FieldPath, b: f64) -> Result<(), SceneError> {
    if b.is_finite() && b >= 0.0 {
        Ok(())
    } else {
        Err(invalid(
            path,
            format!(
                "damping must be finite and >= 0 (s; the row's damping is β = b/α; 0 = undamped), got {}",
                num(b)
            ),
        ))
    }
}

fn check_compliance(path: FieldPath, a: f64) -> Result<(), SceneError> {
    if a.is_finite() && a >= 0.0 {
        Ok(())
    } else {
        Err(invalid(
            path,
            format!(
                "compliance must be finite and >= 0 (m/N or rad/(N·m); 0 = hard), got {}",
                num(a)
            ),
        ))
    }
}

/// Names become file and folder names (the scene's) and CSV column names (bodies',
/// joints'): no control characters, and a scene name must be a plain folder name.
fn check_name(path: FieldPath, what: &str, name: &str) -> Result<(), SceneError> {
    if name.chars().any(char::is_control) {
        return Err(invalid(path, format!("a {what} name must not contain control characters (newlines, tabs, …), got {name:?}")));
    }
    Ok(())
}

pub(crate) fn check(file: &SceneFile) -> Result<(), SceneError> {
    if let Some(name) = &file.name {
        let plain = !name.is_empty()
            && name != "."
            && name != ".."
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || "-_.+".contains(c));
        if !plain {
            return Err(invalid(
                root().key("name"),
                format!("the scene name {name:?} becomes the output folder out/<name>: use letters, digits and - _ . + only (not empty, '.' or '..')"),
            ));
        }
    }
    let solver = root().key("solver");
    positive(solver.key("dt"), "the time step", "s", file.solver.dt)?;
    if file.solver.substeps == 0 {
        return Err(invalid(
            solver.key("substeps"),
            "substeps must be at least 1",
        ));
    }
    if file.solver.iterations == 0 {
        return Err(invalid(
            solver.key("iterations"),
            "iterations must be at least 1",
        ));
    }
    let max = super::MAX_SWEEPS_PER_STEP;
    let (substeps, iterations) = (file.solver.substeps, file.solver.iterations);
    if substeps > max {
        return Err(invalid(
            solver.key("substeps"),
            format!("substeps must be at most {max} (a step makes substeps × iterations projection sweeps, and Ctrl-C stops a run only between steps), got {substeps}; use a smaller solver.dt instead"),
        ));
    }
    if substeps.saturating_mul(iterations) > max {
        return Err(invalid(
            solver.key("iterations"),
            format!("{substeps} substep(s) × {iterations} iterations is {} projection sweeps per step; at most {max} are allowed (Ctrl-C stops a run only between steps): use fewer iterations, or fewer substeps with a smaller solver.dt", substeps.saturating_mul(iterations)),
        ));
    }
    finite3(solver.key("gravity"), "gravity", &file.solver.gravity)?;
    if file.solver.joint_solve == JointSolveSpec::Direct && file.joints.is_empty() {
        return Err(invalid(
            solver.key("joint_solve"),
            "joint_solve = \"direct\" solves the [[joints]] together, but the scene has none",
        ));
    }
    let run = root().key("run");
    positive(run.key("duration"), "the duration", "s", file.run.duration)?;
    if file.solver.dt > file.run.duration {
        return Err(invalid(
            solver.key("dt"),
            format!(
                "the time step {} s exceeds the run's duration {} s",
                num(file.solver.dt),
                num(file.run.duration)
            ),
        ));
    }
    if file.run.every == 0 {
        return Err(invalid(
            run.key("every"),
            "every must be at least 1 (a row every N steps)",
        ));
    }
    let mut seen = HashSet::new();
    for (i, c) in file.run.record.iter().enumerate() {
        if !seen.insert(*c) {
            return Err(invalid(
                run.key("record").index(i),
                format!("channel '{}' is listed twice", c.name()),
            ));
        }
    }
    if file.bodies.is_empty() && file.rods.is_empty() {
        return Err(invalid(
            root().key("bodies"),
            "the scene has no bodies; add at least one [[bodies]] or [[rods]] table",
        ));
    }
    let mut names = HashSet::new();
    for (i, b) in file.bodies.iter().enumerate() {
        let p = root().key("bodies").index(i);
        check_body(&p, b)?;
        if !names.insert(b.name.as_str()) {
            return Err(invalid(
                p.key("name"),
                format!("two bodies are named '{}'; names must be unique", b.name),
            ));
        }
    }
    let max_bodies = super::MAX_SCENE_BODIES;
    if file.bodies.len() > max_bodies {
        return Err(invalid(
            root().key("bodies").index(max_bodies),
            format!(
                "the scene has {} bodies; at most {max_bodies} bodies and rod nodes together are allowed",
                file.bodies.len()
            ),
        ));
    }
    let mut total = file.bodies.len();
    for (i, r) in file.rods.iter().enumerate() {
        let p = root().key("rods").index(i);
        super::rod::check(&p, r, &file.bodies, &file.rods[..i])?;
        total = total.saturating_add(r.node_count());
        if total > max_bodies {
            return Err(invalid(
                p.key("elements"),
                format!(
                    "with this rod's {} nodes the scene has {total} bodies and rod nodes; at most {max_bodies} are allowed (each costs memory and time every step): use fewer or coarser rods",
                    r.node_count()
                ),
            ));
        }
    }
    let mut joint_names = HashSet::new();
    for (i, j) in file.joints.iter().enumerate() {
        let p = root().key("joints").index(i);
        check_joint(&p, j, &file.bodies, &file.rods)?;
        let name = joint_name(i, j);
        if name.trim().is_empty() {
            return Err(invalid(p.key("name"), "a joint name must not be empty"));
        }
        check_name(p.key("name"), "joint", &name)?;
        if !joint_names.insert(name.clone()) {
            return Err(invalid(
                p.key("name"),
                format!("two joints are named '{name}'; names must be unique"),
            ));
        }
    }
    // The constraints a joint's limit and motor add are named `<joint>_limit` etc.
    for (i, j) in file.joints.iter().enumerate() {
        for suffix in super::actuation::extra_suffixes(j) {
            let name = format!("{}{suffix}", joint_name(i, j));
            if !joint_names.insert(name.clone()) {
                return Err(invalid(
                    root().key("joints").index(i).key("name"),
                    format!("the {} of this joint is named '{name}', which is already a joint's name; rename one of them", &suffix[1..]),
                ));
            }
        }
    }
    for (i, m) in file.prescribed.iter().enumerate() {
        let p = root().key("prescribed").index(i);
        super::prescribed::check(&p, m, &file.bodies)?;
        let name = super::prescribed::prescribed_name(i, m);
        if name.trim().is_empty() {
            return Err(invalid(p.key("name"), "a name must not be empty"));
        }
        check_name(p.key("name"), "prescribed motion", &name)?;
        if !joint_names.insert(name.clone()) {
            return Err(invalid(
                p.key("name"),
                format!("'{name}' is already the name of a joint or prescribed motion; names must be unique"),
            ));
        }
    }
    Ok(())
}

/// The joint's name: `name`, or `joint{i}`.
pub(crate) fn joint_name(i: usize, j: &JointSpec) -> String {
    j.name.clone().unwrap_or_else(|| format!("joint{i}"))
}
