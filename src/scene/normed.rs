//! The joints of a scene in `solver.mode = "scalar"`: each `[[joints]]` entry becomes
//! the normed joint of its type ([`crate::joint::normed`], paper Section 5.1) instead
//! of the vector joint.
//!
//! # Compliance and damping
//! A scene's `compliance` and `damping` are written per row of the vector joint
//! (`type`'s row count, e.g. 5 for a revolute joint), so that the same file runs in
//! every mode. A normed row is the norm of a group of those rows
//! ([`NormedKind::VECTOR_ROWS`]) and takes one value: that of its group. A single value
//! applies to every normed row; a list must give every row of a group the same value
//! (a normed row ‖w‖ with compliance α stores the potential ‖w‖²/(2α), which equals the
//! vector rows' Σᵢ wᵢ²/(2α) only when they share α), otherwise the scene is rejected
//! with the field path of the first row that differs.

use super::format::{ComplianceSpec, DampingSpec, JointSpec, JointType};
use crate::joint::{FixedKind, PrismaticKind, RevoluteKind, SphericalKind};
use crate::joint::{JointFrame, NormedJoint, NormedKind};
use crate::lie::real::c;
use crate::lie::{LieGroup, Real};
use crate::xpbd::{BodyId, Constraint, XpbdError};

/// Why a normed joint could not be made.
pub(super) enum NormedJointError {
    /// A per-row `compliance` or `damping` list that gives one group of vector rows
    /// different values: the field (`"compliance"` or `"damping"`), the index of the
    /// first row that differs, and the message.
    Rows {
        field: &'static str,
        row: usize,
        message: String,
    },
    /// Rejected by the joint's constructor.
    Joint(XpbdError),
}

impl From<XpbdError> for NormedJointError {
    fn from(e: XpbdError) -> Self {
        NormedJointError::Joint(e)
    }
}

/// The normed joint of `j`'s type between `b1` at `f1` and `b2` at `f2`, with the
/// compliance and damping of `j` mapped to its rows (module docs).
pub(super) fn normed_joint<T: Real, G: LieGroup<T>>(
    j: &JointSpec,
    b1: Option<BodyId>,
    f1: JointFrame<T, G>,
    b2: Option<BodyId>,
    f2: JointFrame<T, G>,
) -> Result<Box<dyn Constraint<T, G>>, NormedJointError> {
    match j.kind {
        JointType::Fixed => make::<T, G, FixedKind>(j, b1, f1, b2, f2),
        JointType::Revolute => make::<T, G, RevoluteKind>(j, b1, f1, b2, f2),
        JointType::Spherical => make::<T, G, SphericalKind>(j, b1, f1, b2, f2),
        JointType::Prismatic => make::<T, G, PrismaticKind>(j, b1, f1, b2, f2),
    }
}

/// What each normed row of a joint type is, for messages.
fn parts(kind: JointType) -> &'static [&'static str] {
    match kind {
        JointType::Fixed => &["‖p̄₁ − p̄₂‖", "‖R̄₁ ⊟ R̄₂‖"],
        JointType::Revolute => &["‖p̄₁ − p̄₂‖", "‖[R̄₁ ⊟ R̄₂]₁₋₂‖"],
        JointType::Spherical => &["‖p̄₁ − p̄₂‖"],
        JointType::Prismatic => &["‖[R̄₁ᵀ(p̄₂ − p̄₁)]₁₋₂‖", "‖R̄₁ ⊟ R̄₂‖"],
    }
}

fn make<T: Real, G: LieGroup<T>, K: NormedKind>(
    j: &JointSpec,
    b1: Option<BodyId>,
    f1: JointFrame<T, G>,
    b2: Option<BodyId>,
    f2: JointFrame<T, G>,
) -> Result<Box<dyn Constraint<T, G>>, NormedJointError> {
    let mut joint = NormedJoint::<T, G, K>::new(b1, f1, b2, f2)?;
    let compliance = j.compliance.as_ref().map(|cs| match cs {
        ComplianceSpec::Uniform(a) => Ok(vec![*a; K::VECTOR_ROWS.len()]),
        ComplianceSpec::PerRow(v) => per_group::<K>(j.kind, "compliance", v),
    });
    if let Some(cs) = compliance {
        let cs: Vec<T> = cs?.into_iter().map(c::<T>).collect();
        joint = joint.with_compliance(&cs)?;
    }
    let damping = j.damping.as_ref().map(|ds| match ds {
        DampingSpec::Uniform(b) => Ok(vec![*b; K::VECTOR_ROWS.len()]),
        DampingSpec::PerRow(v) => per_group::<K>(j.kind, "damping", v),
    });
    if let Some(ds) = damping {
        let ds: Vec<T> = ds?.into_iter().map(c::<T>).collect();
        joint = joint.with_damping(&ds)?;
    }
    Ok(Box::new(joint))
}

/// One value per normed row from one value per vector row `v` (already checked to have
/// the vector joint's length): the common value of each group of
/// [`NormedKind::VECTOR_ROWS`], or an error naming the first row that differs from its
/// group's first row.
fn per_group<K: NormedKind>(
    kind: JointType,
    field: &'static str,
    v: &[f64],
) -> Result<Vec<f64>, NormedJointError> {
    let mut out = Vec::with_capacity(K::VECTOR_ROWS.len());
    for rows in K::VECTOR_ROWS {
        let Some(&first) = v.get(rows.start) else {
            // Cannot happen for a validated scene (the list has the vector joint's
            // length); reported rather than indexed out of bounds.
            return Err(NormedJointError::Rows {
                field,
                row: v.len(),
                message: format!(
                    "a {} joint has {} rows, so give {} {field} values, not {}",
                    kind.name(),
                    kind.rows(),
                    kind.rows(),
                    v.len()
                ),
            });
        };
        if let Some(row) = rows.clone().find(|&r| v.get(r) != Some(&first)) {
            let list = K::VECTOR_ROWS
                .iter()
                .zip(parts(kind))
                .map(|(r, p)| format!("{p} over rows {}–{}", r.start, r.end - 1))
                .collect::<Vec<_>>()
                .join(" and ");
            return Err(NormedJointError::Rows {
                field,
                row,
                message: format!(
                    "in scalar mode (solver.mode = \"scalar\") a {} joint is the normed joint \
                     of Section 5.1, {list}, and each normed row takes one {field}: rows \
                     {}–{} must have the same value, but row {} has {} and row {row} has {}; \
                     give them one value, or one {field} for the whole joint",
                    kind.name(),
                    rows.start,
                    rows.end - 1,
                    rows.start,
                    super::error::num(first),
                    v.get(row)
                        .map_or_else(|| "nothing".into(), |x| super::error::num(*x)),
                ),
            });
        }
        out.push(first);
    }
    Ok(out)
}
