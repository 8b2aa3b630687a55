//! Validation of `[[rods]]` entries: every field checked against its range, the
//! section and material against overflow, the centre line, the loads and motions, and
//! the node names that joints and loads refer to, each error naming its field.

use super::*;

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
                    "'{s}' is not a node of rod '{}': use base, tip or an index from 0 to {}",
                    rod.name,
                    n - 1
                )
            })
            .and_then(|i| node_index(rod, &NodeRef::Index(i))),
        NodeRef::Index(i) => usize::try_from(*i).ok().filter(|&k| k < n).ok_or_else(|| {
            format!(
                "rod '{}' has nodes 0 to {} ({n} nodes), so there is no node {i}",
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
