//! Random worlds through the library API: random solver options, bodies (masses,
//! inertias and poses, degenerate and non-finite ones included, orientations through
//! the checked constructors), joints of every kind between random bodies (the world,
//! one body twice, bodies the world does not have), limits (inverted, NaN), drives,
//! motors, break limits, prescribed frames, direct joint groups, and rods (FEM of order 1–3 and rigid
//! chains) with random element counts (0, 1, many) and materials.
//!
//! Every call returns `Ok` or a typed error (its message not empty), never panics; a
//! world that steps either stays finite or reports a typed divergence. Work is bounded
//! by the plan (at most 16 substeps × 8 iterations, 40 rod elements, 4 steps): the API
//! itself takes any count a caller asks for.

use crate::harness::{CaseResult, Outcome};
use lie_xpbd::joint::{
    Fixed, HeldRotation, JointFrame, NormedFixed, NormedPrismatic, NormedRevolute, NormedSpherical,
    PrescribedFrame, Prismatic, PrismaticDrive, PrismaticLimit, Revolute, RevoluteDrive,
    RevoluteLimit, Spherical, SphericalDrive, SphericalSwingLimit, SphericalTwistLimit,
    VelocityMotor,
};
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::{LieGroup, Pose, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::linalg::BandScalar;
use lie_xpbd::rod::{
    FemRod, Integration, RigidChainBuilder, RodClamp, RodMaterial, RodSolve, StraightRod,
};
use lie_xpbd::xpbd::{
    Body, BodyId, BreakLimits, Constraint, ConstraintId, F32Arithmetic, SolveMode, SolverOptions,
    World, MAX_ROWS,
};
use nalgebra::{Matrix3, Quaternion, Vector3};
use rand::rngs::StdRng;
use rand::RngExt;
use std::sync::atomic::{AtomicU64, Ordering};

/// What the worlds accepted, over a run: bodies, constraints, rods, direct groups,
/// break limits (so a test can check that the fuzzer reaches past the rejections).
pub static ACCEPTED: [AtomicU64; 5] = [
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
];

fn accepted(what: usize) {
    ACCEPTED[what].fetch_add(1, Ordering::Relaxed);
}

/// A rotation, as the caller gives it.
#[derive(Debug, Clone)]
pub enum RotPlan {
    /// `G::identity()`.
    Identity,
    /// `G::exp(θ)` (θ may be huge or non-finite).
    Exp([f64; 3]),
    /// The checked `G::from_quaternion(w, x, y, z)`.
    Quat([f64; 4]),
    /// The checked `G::from_matrix` (row-major).
    Matrix([f64; 9]),
}

/// A body.
#[derive(Debug, Clone)]
pub struct BodyPlan {
    fixed: bool,
    mass: f64,
    inertia: [f64; 3],
    position: [f64; 3],
    rotation: RotPlan,
    velocity: [f64; 3],
    spin: [f64; 3],
}

/// A joint frame.
#[derive(Debug, Clone)]
pub struct FramePlan {
    translation: [f64; 3],
    rotation: RotPlan,
    checked: bool,
}

/// What a joint is.
#[derive(Debug, Clone)]
pub enum JointKindPlan {
    Fixed,
    Revolute,
    Spherical,
    Prismatic,
    NormedFixed,
    NormedRevolute,
    NormedSpherical,
    NormedPrismatic,
    RevoluteLimit(f64, f64),
    PrismaticLimit(f64, f64),
    SwingLimit(f64),
    TwistLimit(f64, f64),
    RevoluteDrive {
        target: f64,
        stiffness: f64,
        damping: f64,
        rate: Option<f64>,
    },
    PrismaticDrive {
        target: f64,
        stiffness: f64,
        damping: f64,
        rate: Option<f64>,
    },
    SphericalDrive {
        target: [f64; 3],
        stiffness: Vec<f64>,
        damping: f64,
    },
    RevoluteMotor {
        speed: f64,
        max: f64,
        substep: f64,
    },
    PrismaticMotor {
        speed: f64,
        max: f64,
        substep: f64,
    },
    Prescribed {
        position: [bool; 3],
        rotation: u8,
        target: [f64; 3],
        velocity: [f64; 3],
    },
}

/// A joint between two bodies (indices into the plan's bodies, possibly out of range).
#[derive(Debug, Clone)]
pub struct JointPlan {
    kind: JointKindPlan,
    body1: Option<usize>,
    body2: Option<usize>,
    frame1: FramePlan,
    frame2: FramePlan,
    compliance: Option<Vec<f64>>,
    damping: Option<Vec<f64>>,
    limit_compliance: Option<f64>,
    break_limits: Option<(f64, f64, usize)>,
}

/// A rod.
#[derive(Debug, Clone)]
pub struct RodPlan {
    chain: bool,
    order: usize,
    elements: usize,
    material: [f64; 4],
    start: [f64; 3],
    direction: [f64; 3],
    length: f64,
    damping: f64,
    integration: u8,
    clamp: u8,
    gauss_point: bool,
}

/// A world and what to do with it.
#[derive(Debug, Clone)]
pub struct WorldPlan {
    quaternion: bool,
    f32: bool,
    dt: f64,
    substeps: usize,
    iterations: usize,
    mode: u8,
    gravity: [f64; 3],
    primal_correction: bool,
    plain_f32: bool,
    bodies: Vec<BodyPlan>,
    joints: Vec<JointPlan>,
    rods: Vec<RodPlan>,
    steps: usize,
    /// (body index, NaN the position) after the build: a state the step must reject.
    poison: Option<usize>,
    /// Constraints (by index, possibly repeated or missing) solved as direct groups.
    direct_groups: Vec<Vec<usize>>,
}

// ---------------------------------------------------------------- generate

fn special(rng: &mut StdRng) -> f64 {
    const S: &[f64] = &[
        0.0,
        -0.0,
        -1.0,
        1e-300,
        5e-324,
        1e-40,
        1e38,
        1e39,
        1e300,
        f64::MAX,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    S[rng.random_range(0..S.len())]
}

/// A plausible value most of the time, a special one sometimes.
fn num(rng: &mut StdRng, lo: f64, hi: f64, p_special: f64) -> f64 {
    if rng.random_bool(p_special) {
        special(rng)
    } else {
        rng.random_range(lo..hi)
    }
}

fn vec3(rng: &mut StdRng, scale: f64, p: f64) -> [f64; 3] {
    [
        num(rng, -scale, scale, p),
        num(rng, -scale, scale, p),
        num(rng, -scale, scale, p),
    ]
}

fn rot(rng: &mut StdRng, p: f64) -> RotPlan {
    match rng.random_range(0..10) {
        0 => RotPlan::Identity,
        1..=5 => RotPlan::Exp(vec3(rng, 4.0, p)),
        6..=8 => {
            let mut q = [0.0; 4];
            for x in &mut q {
                *x = num(rng, -1.0, 1.0, p);
            }
            if rng.random_bool(0.5) {
                let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
                q.iter_mut().for_each(|x| *x /= n);
            }
            RotPlan::Quat(q)
        }
        _ => {
            let mut m = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
            for (i, x) in m.iter_mut().enumerate() {
                *x = if rng.random_bool(0.7) {
                    if i % 4 == 0 {
                        1.0
                    } else {
                        0.0
                    }
                } else {
                    num(rng, -1.0, 1.0, p)
                };
            }
            RotPlan::Matrix(m)
        }
    }
}

fn frame(rng: &mut StdRng, p: f64) -> FramePlan {
    FramePlan {
        translation: vec3(rng, 1.0, p),
        rotation: if rng.random_bool(0.5) {
            RotPlan::Identity
        } else {
            rot(rng, p)
        },
        checked: rng.random_bool(0.7),
    }
}

fn body(rng: &mut StdRng, p: f64) -> BodyPlan {
    let m = num(rng, 0.01, 10.0, p);
    let i = if rng.random_bool(0.8) {
        let a: f64 = rng.random_range(0.01..1.0);
        let b: f64 = rng.random_range(0.01..1.0);
        let c2 = rng.random_range((a - b).abs() + 1e-3..a + b);
        [
            if rng.random_bool(p) { special(rng) } else { a },
            b,
            if rng.random_bool(p) { a + b + 1.0 } else { c2 },
        ]
    } else {
        vec3(rng, 1.0, p)
    };
    BodyPlan {
        fixed: rng.random_bool(0.15),
        mass: m,
        inertia: i,
        position: vec3(rng, 2.0, p / 2.0),
        rotation: rot(rng, p / 2.0),
        velocity: vec3(rng, 1.0, p / 4.0),
        spin: vec3(rng, 3.0, p / 4.0),
    }
}

fn rows(rng: &mut StdRng, p: f64) -> Vec<f64> {
    let n = [0, 1, 2, 3, 5, 6, 7][rng.random_range(0..7)];
    (0..n).map(|_| num(rng, 0.0, 1e-3, p)).collect()
}

fn side(rng: &mut StdRng, bodies: usize) -> Option<usize> {
    match rng.random_range(0..20) {
        0..=2 => None,
        3 => Some(bodies + rng.random_range(0..3)),
        _ if bodies > 0 => Some(rng.random_range(0..bodies)),
        _ => None,
    }
}

fn joint(rng: &mut StdRng, bodies: usize, p: f64) -> JointPlan {
    let lim = |rng: &mut StdRng| {
        let a = num(rng, -3.0, 3.0, p);
        let b = if rng.random_bool(0.8) {
            a.abs() + rng.random_range(0.0..2.0)
        } else {
            num(rng, -3.0, 3.0, p)
        };
        (a.min(b), if rng.random_bool(0.1) { a } else { b })
    };
    let kind = match rng.random_range(0..18) {
        0 => JointKindPlan::Fixed,
        1 => JointKindPlan::Revolute,
        2 => JointKindPlan::Spherical,
        3 => JointKindPlan::Prismatic,
        4 => JointKindPlan::NormedFixed,
        5 => JointKindPlan::NormedRevolute,
        6 => JointKindPlan::NormedSpherical,
        7 => JointKindPlan::NormedPrismatic,
        8 => {
            let (a, b) = lim(rng);
            JointKindPlan::RevoluteLimit(a, b)
        }
        9 => {
            let (a, b) = lim(rng);
            JointKindPlan::PrismaticLimit(a, b)
        }
        10 => JointKindPlan::SwingLimit(num(rng, 0.0, 4.0, p)),
        11 => {
            let (a, b) = lim(rng);
            JointKindPlan::TwistLimit(a, b)
        }
        12 => JointKindPlan::RevoluteDrive {
            target: num(rng, -4.0, 4.0, p),
            stiffness: num(rng, 0.0, 1e4, p),
            damping: num(rng, 0.0, 1.0, p),
            rate: rng.random_bool(0.3).then(|| num(rng, -2.0, 2.0, p)),
        },
        13 => JointKindPlan::PrismaticDrive {
            target: num(rng, -1.0, 1.0, p),
            stiffness: num(rng, 0.0, 1e4, p),
            damping: num(rng, 0.0, 1.0, p),
            rate: rng.random_bool(0.3).then(|| num(rng, -2.0, 2.0, p)),
        },
        14 => JointKindPlan::SphericalDrive {
            target: vec3(rng, 3.0, p),
            stiffness: (0..[1, 3, 1, 2, 4][rng.random_range(0..5)])
                .map(|_| num(rng, 0.0, 1e4, p))
                .collect(),
            damping: num(rng, 0.0, 1.0, p),
        },
        15 => JointKindPlan::RevoluteMotor {
            speed: num(rng, -5.0, 5.0, p),
            max: num(rng, 0.0, 10.0, p),
            substep: num(rng, 1e-4, 1e-2, p),
        },
        16 => JointKindPlan::PrismaticMotor {
            speed: num(rng, -1.0, 1.0, p),
            max: num(rng, 0.0, 10.0, p),
            substep: num(rng, 1e-4, 1e-2, p),
        },
        _ => JointKindPlan::Prescribed {
            position: [
                rng.random_bool(0.5),
                rng.random_bool(0.5),
                rng.random_bool(0.5),
            ],
            rotation: rng.random_range(0..3),
            target: vec3(rng, 1.0, p),
            velocity: vec3(rng, 1.0, p),
        },
    };
    // Mostly two different sides (one may be the world); sometimes anything.
    let body1 = side(rng, bodies);
    let mut body2 = side(rng, bodies);
    if rng.random_bool(0.9) && bodies > 0 {
        for _ in 0..8 {
            if body2 != body1 && (body1.is_some() || body2.is_some()) {
                break;
            }
            body2 = Some(rng.random_range(0..bodies));
        }
    }
    JointPlan {
        kind,
        body1,
        body2,
        frame1: frame(rng, p / 4.0),
        frame2: frame(rng, p / 4.0),
        compliance: rng.random_bool(0.15).then(|| rows(rng, p)),
        damping: rng.random_bool(0.1).then(|| rows(rng, p)),
        limit_compliance: rng.random_bool(0.2).then(|| num(rng, 0.0, 1e-3, p)),
        break_limits: rng.random_bool(0.1).then(|| {
            (
                num(rng, 0.0, 100.0, p),
                num(rng, 0.0, 100.0, p),
                rng.random_range(0..8),
            )
        }),
    }
}

fn rod(rng: &mut StdRng, p: f64) -> RodPlan {
    RodPlan {
        chain: rng.random_bool(0.3),
        order: [0, 1, 2, 3, 4][rng.random_range(0..5)].max(if rng.random_bool(0.9) {
            1
        } else {
            0
        }),
        elements: if rng.random_bool(0.02) {
            // Counts no memory holds: an error, never a panic or an abort.
            [usize::MAX, usize::MAX / 2, 1 << 40][rng.random_range(0..3)]
        } else {
            [0, 1, 1, 2, 3, 5, 8, 17, 40][rng.random_range(0..9)]
        },
        material: [
            num(rng, 1e5, 1e9, p),
            num(rng, -0.2, 0.6, p),
            num(rng, 100.0, 8000.0, p),
            num(rng, 0.001, 0.1, p),
        ],
        start: vec3(rng, 1.0, p / 2.0),
        direction: if rng.random_bool(0.05) {
            [0.0; 3]
        } else {
            vec3(rng, 1.0, p / 2.0)
        },
        length: num(rng, 0.01, 2.0, p),
        damping: num(rng, 0.0, 0.5, p),
        integration: rng.random_range(0..8),
        clamp: rng.random_range(0..4),
        gauss_point: rng.random_bool(0.2),
    }
}

/// Draws one world plan.
pub fn generate(rng: &mut StdRng) -> WorldPlan {
    // How often values are special (0, negative, tiny, huge, NaN, ±∞).
    let p = [0.0, 0.02, 0.1, 0.3][rng.random_range(0..4)];
    let nb = [0, 1, 2, 2, 3, 3, 4, 4, 6, 6][rng.random_range(0..10)];
    let bodies: Vec<_> = (0..nb).map(|_| body(rng, p)).collect();
    let joints = (0..rng.random_range(0..6))
        .map(|_| joint(rng, nb, p))
        .collect();
    let rods = if rng.random_bool(0.3) {
        (0..rng.random_range(1..3)).map(|_| rod(rng, p)).collect()
    } else {
        Vec::new()
    };
    WorldPlan {
        quaternion: rng.random_bool(0.5),
        f32: rng.random_bool(0.3),
        dt: if rng.random_bool(p / 3.0) {
            special(rng)
        } else {
            [1e-3, 5e-3, 1e-2, 1e-4, 0.1][rng.random_range(0..5)]
        },
        substeps: if rng.random_bool(0.03) {
            0
        } else {
            [1, 1, 2, 4, 16][rng.random_range(0..5)]
        },
        iterations: if rng.random_bool(0.03) {
            0
        } else {
            [1, 1, 2, 8][rng.random_range(0..4)]
        },
        mode: rng.random_range(0..3),
        gravity: if rng.random_bool(0.9) {
            [0.0, -9.81, 0.0]
        } else {
            vec3(rng, 20.0, p)
        },
        primal_correction: rng.random_bool(0.3),
        plain_f32: rng.random_bool(0.3),
        bodies,
        joints,
        rods,
        steps: rng.random_range(1..5),
        poison: rng.random_bool(0.03).then(|| rng.random_range(0..4)),
        direct_groups: if rng.random_bool(0.3) {
            (0..rng.random_range(1..3))
                .map(|_| {
                    let all = rng.random_bool(0.5);
                    (0..rng.random_range(0..7))
                        .map(|i| if all { i } else { rng.random_range(0..8) })
                        .collect()
                })
                .collect()
        } else {
            Vec::new()
        },
    }
}

// ---------------------------------------------------------------- execute

/// A typed error must say something.
fn typed<E: std::fmt::Display + std::fmt::Debug>(e: &E) -> Result<(), String> {
    if e.to_string().trim().is_empty() {
        return Err(format!("an error with an empty message: {e:?}"));
    }
    Ok(())
}

fn v<T: Real>(a: &[f64; 3]) -> Vector3<T> {
    Vector3::new(c(a[0]), c(a[1]), c(a[2]))
}

fn rotation<T: Real, G: LieGroup<T>>(r: &RotPlan) -> Result<Option<G>, String> {
    Ok(match r {
        RotPlan::Identity => Some(G::identity()),
        RotPlan::Exp(t) => Some(G::exp(&v(t))),
        RotPlan::Quat(q) => {
            match G::from_quaternion(&Quaternion::new(c(q[0]), c(q[1]), c(q[2]), c(q[3]))) {
                Ok(g) => Some(g),
                Err(e) => {
                    typed(&e)?;
                    None
                }
            }
        }
        RotPlan::Matrix(m) => match G::from_matrix(&Matrix3::from_row_slice(&m.map(c::<T>))) {
            Ok(g) => Some(g),
            Err(e) => {
                typed(&e)?;
                None
            }
        },
    })
}

fn frame_of<T: Real, G: LieGroup<T>>(f: &FramePlan) -> Result<Option<JointFrame<T, G>>, String> {
    let Some(r) = rotation::<T, G>(&f.rotation)? else {
        return Ok(None);
    };
    if f.checked {
        match JointFrame::try_new(v(&f.translation), r) {
            Ok(fr) => Ok(Some(fr)),
            Err(e) => typed(&e).map(|_| None),
        }
    } else {
        // Unchecked: the joint constructors must check it.
        Ok(Some(JointFrame::new(v(&f.translation), r)))
    }
}

macro_rules! with_rows {
    ($j:expr, $plan:expr) => {{
        let mut j = $j;
        if let Some(a) = &$plan.compliance {
            let a: Vec<T> = a.iter().map(|&x| c(x)).collect();
            j = j.and_then(|j| j.with_compliance(&a));
        }
        if let Some(b) = &$plan.damping {
            let b: Vec<T> = b.iter().map(|&x| c(x)).collect();
            j = j.and_then(|j| j.with_damping(&b));
        }
        j.map(|j| Box::new(j) as Box<dyn Constraint<T, G>>)
    }};
}

macro_rules! with_limit_compliance {
    ($j:expr, $plan:expr) => {{
        let mut j = $j;
        if let Some(a) = $plan.limit_compliance {
            j = j.and_then(|j| j.with_compliance(c(a)));
        }
        j.map(|j| Box::new(j) as Box<dyn Constraint<T, G>>)
    }};
}

/// Builds a joint; `Ok(None)` if a constructor rejected it (typed).
fn make_joint<T: Real, G: LieGroup<T>>(
    plan: &JointPlan,
    ids: &[BodyId],
) -> Result<Option<Box<dyn Constraint<T, G>>>, String> {
    let id = |i: Option<usize>| i.map(|i| ids.get(i).copied().unwrap_or(BodyId(i + 1000)));
    let (b1, b2) = (id(plan.body1), id(plan.body2));
    let (Some(f1), Some(f2)) = (
        frame_of::<T, G>(&plan.frame1)?,
        frame_of::<T, G>(&plan.frame2)?,
    ) else {
        return Ok(None);
    };
    let r: Result<Box<dyn Constraint<T, G>>, _> = match &plan.kind {
        JointKindPlan::Fixed => with_rows!(Fixed::new(b1, f1, b2, f2), plan),
        JointKindPlan::Revolute => with_rows!(Revolute::new(b1, f1, b2, f2), plan),
        JointKindPlan::Spherical => with_rows!(Spherical::new(b1, f1, b2, f2), plan),
        JointKindPlan::Prismatic => with_rows!(Prismatic::new(b1, f1, b2, f2), plan),
        JointKindPlan::NormedFixed => with_rows!(NormedFixed::new(b1, f1, b2, f2), plan),
        JointKindPlan::NormedRevolute => with_rows!(NormedRevolute::new(b1, f1, b2, f2), plan),
        JointKindPlan::NormedSpherical => with_rows!(NormedSpherical::new(b1, f1, b2, f2), plan),
        JointKindPlan::NormedPrismatic => with_rows!(NormedPrismatic::new(b1, f1, b2, f2), plan),
        JointKindPlan::RevoluteLimit(lo, hi) => {
            with_limit_compliance!(RevoluteLimit::new(b1, f1, b2, f2, c(*lo), c(*hi)), plan)
        }
        JointKindPlan::PrismaticLimit(lo, hi) => {
            with_limit_compliance!(PrismaticLimit::new(b1, f1, b2, f2, c(*lo), c(*hi)), plan)
        }
        JointKindPlan::SwingLimit(max) => {
            with_limit_compliance!(SphericalSwingLimit::new(b1, f1, b2, f2, c(*max)), plan)
        }
        JointKindPlan::TwistLimit(lo, hi) => {
            with_limit_compliance!(
                SphericalTwistLimit::new(b1, f1, b2, f2, c(*lo), c(*hi)),
                plan
            )
        }
        JointKindPlan::RevoluteDrive {
            target,
            stiffness,
            damping,
            rate,
        } => RevoluteDrive::new(b1, f1, b2, f2, c(*target), c(*stiffness))
            .and_then(|d| d.with_damping(c(*damping)))
            .and_then(|d| match rate {
                Some(r) => d.with_rate(c(*r)),
                None => Ok(d),
            })
            .map(|j| Box::new(j) as Box<dyn Constraint<T, G>>),
        JointKindPlan::PrismaticDrive {
            target,
            stiffness,
            damping,
            rate,
        } => PrismaticDrive::new(b1, f1, b2, f2, c(*target), c(*stiffness))
            .and_then(|d| d.with_damping(c(*damping)))
            .and_then(|d| match rate {
                Some(r) => d.with_rate(c(*r)),
                None => Ok(d),
            })
            .map(|j| Box::new(j) as Box<dyn Constraint<T, G>>),
        JointKindPlan::SphericalDrive {
            target,
            stiffness,
            damping,
        } => {
            let k: Vec<T> = stiffness.iter().map(|&x| c(x)).collect();
            SphericalDrive::new(
                b1,
                f1,
                b2,
                f2,
                v(target),
                k.first().copied().unwrap_or(T::one()),
            )
            .and_then(|d| d.with_stiffnesses(&k))
            .and_then(|d| d.with_damping(c(*damping)))
            .map(|j| Box::new(j) as Box<dyn Constraint<T, G>>)
        }
        JointKindPlan::RevoluteMotor {
            speed,
            max,
            substep,
        } => VelocityMotor::revolute(b1, f1, b2, f2, c(*speed), c(*max), c(*substep))
            .map(|j| Box::new(j) as Box<dyn Constraint<T, G>>),
        JointKindPlan::PrismaticMotor {
            speed,
            max,
            substep,
        } => VelocityMotor::prismatic(b1, f1, b2, f2, c(*speed), c(*max), c(*substep))
            .map(|j| Box::new(j) as Box<dyn Constraint<T, G>>),
        JointKindPlan::Prescribed {
            position,
            rotation: r,
            target,
            velocity,
        } => {
            let held = [
                HeldRotation::Free,
                HeldRotation::Axis,
                HeldRotation::Orientation,
            ][*r as usize];
            let body = b2.or(b1).unwrap_or(BodyId(0));
            PrescribedFrame::new(body, f1, Pose::new(v(target), f2.rotation), *position, held)
                .and_then(|p| p.with_velocity(v(velocity)))
                .map(|j| Box::new(j) as Box<dyn Constraint<T, G>>)
        }
    };
    match r {
        Ok(j) => Ok(Some(j)),
        Err(e) => typed(&e).map(|_| None),
    }
}

fn add_rod<T: BandScalar, G: LieGroup<T>>(
    world: &mut World<T, G>,
    plan: &RodPlan,
) -> Result<(), String> {
    let [e, nu, rho, r] = plan.material;
    let material = match RodMaterial::circular(c(e), c(nu), c(rho), c(r)) {
        Ok(m) => m,
        Err(err) => return typed(&err),
    };
    if plan.chain {
        let built = RigidChainBuilder::<T, G>::straight(
            material,
            v(&plan.start),
            v(&plan.direction),
            c(plan.length),
            plan.elements.saturating_add(1),
        )
        .and_then(|b| b.with_damping([c(plan.damping); 6]))
        .map(|b| {
            b.with_fixed_base(plan.clamp & 1 == 1)
                .with_fixed_tip(plan.clamp & 2 == 2)
        })
        .and_then(|b| b.build(world));
        return match built {
            Ok(_) => {
                accepted(2);
                Ok(())
            }
            Err(err) => typed(&err),
        };
    }
    let spec = StraightRod {
        start: v(&plan.start),
        direction: v(&plan.direction),
        length: c(plan.length),
        elements: plan.elements,
        integration: match plan.integration {
            0..=2 => Integration::Reduced,
            3 => Integration::Full,
            n => Integration::Points(n as usize - 3),
        },
        clamp: [
            RodClamp::Free,
            RodClamp::Start,
            RodClamp::End,
            RodClamp::Both,
        ][plan.clamp as usize],
        damping: c(plan.damping),
    };
    let solve = if plan.gauss_point {
        RodSolve::GaussPoint
    } else {
        RodSolve::Banded
    };
    let r = match plan.order {
        1 => FemRod::<T, G, 2>::add_straight_with(world, &material, &spec, solve).map(|_| ()),
        2 => FemRod::<T, G, 3>::add_straight_with(world, &material, &spec, solve).map(|_| ()),
        3 => FemRod::<T, G, 4>::add_straight_with(world, &material, &spec, solve).map(|_| ()),
        _ => return Ok(()),
    };
    match r {
        Ok(()) => {
            accepted(2);
            Ok(())
        }
        Err(err) => typed(&err),
    }
}

fn run_world<T: BandScalar, G: LieGroup<T>>(plan: &WorldPlan) -> CaseResult {
    let options = SolverOptions {
        dt: c(plan.dt),
        substeps: plan.substeps,
        iterations: plan.iterations,
        solve_mode: SolveMode::ALL[plan.mode as usize],
        gravity: v(&plan.gravity),
        primal_correction: plan.primal_correction,
        f32_arithmetic: if plan.plain_f32 {
            F32Arithmetic::Plain
        } else {
            F32Arithmetic::Compensated
        },
    };
    let mut world = match World::<T, G>::new(options) {
        Ok(w) => w,
        Err(e) => {
            typed(&e)?;
            return Ok(Outcome::Rejected("options".into()));
        }
    };
    let mut ids = Vec::new();
    for b in &plan.bodies {
        let Some(r) = rotation::<T, G>(&b.rotation)? else {
            continue;
        };
        let body = if b.fixed {
            Body::fixed(v(&b.position), r)
        } else {
            Body::dynamic(c(b.mass), v(&b.inertia), v(&b.position), r)
        };
        let body = body.and_then(|x| x.with_velocity(v(&b.velocity), v(&b.spin)));
        match body.and_then(|x| world.add_body(x)) {
            Ok(id) => {
                accepted(0);
                ids.push(id)
            }
            Err(e) => typed(&e)?,
        }
    }
    for j in &plan.joints {
        let Some(constraint) = make_joint::<T, G>(j, &ids)? else {
            continue;
        };
        match world.add_boxed_constraint(constraint) {
            Ok(cid) => {
                accepted(1);
                if let Some((f, t, row)) = j.break_limits {
                    let mut force_rows = [false; MAX_ROWS];
                    let mut torque_rows = [false; MAX_ROWS];
                    force_rows[row % MAX_ROWS] = row < 8;
                    torque_rows[(row + 3) % MAX_ROWS] = true;
                    let limits = BreakLimits {
                        max_force: c(f),
                        max_torque: c(t),
                        force_rows,
                        torque_rows,
                        dependents: vec![ConstraintId(cid.0 + row)],
                    };
                    match world.set_break_limits(cid, limits) {
                        Ok(()) => accepted(4),
                        Err(e) => typed(&e)?,
                    }
                }
            }
            Err(e) => typed(&e)?,
        }
    }
    for r in &plan.rods {
        add_rod(&mut world, r)?;
    }
    for group in &plan.direct_groups {
        let ids: Vec<ConstraintId> = group.iter().map(|&i| ConstraintId(i)).collect();
        match world.add_direct_group(&ids) {
            Ok(_) => accepted(3),
            Err(e) => typed(&e)?,
        }
    }
    if let Some(i) = plan.poison {
        if let Some(b) = world.body_mut(BodyId(i)) {
            b.position.x = c(f64::NAN);
        }
    }
    for _ in 0..plan.steps {
        match world.step() {
            Ok(()) => {
                if let Some((i, _)) = world
                    .bodies()
                    .iter()
                    .enumerate()
                    .find(|(_, b)| !b.is_finite())
                {
                    return Err(format!(
                        "step {} returned Ok with body {i} not finite",
                        world.steps()
                    ));
                }
                // The reports of a stepped world must not panic either.
                let _ = world.residuals();
                let _ = world.energy();
                let _ = world.hard_violation();
            }
            Err(e) => {
                typed(&e)?;
                return Ok(Outcome::Diverged);
            }
        }
    }
    Ok(Outcome::Stepped)
}

/// Runs one plan in its scalar and representation.
pub fn execute(plan: &WorldPlan) -> CaseResult {
    match (plan.quaternion, plan.f32) {
        (false, false) => run_world::<f64, SO3Matrix<f64>>(plan),
        (true, false) => run_world::<f64, UnitQuaternion<f64>>(plan),
        (false, true) => run_world::<f32, SO3Matrix<f32>>(plan),
        (true, true) => run_world::<f32, UnitQuaternion<f32>>(plan),
    }
}
