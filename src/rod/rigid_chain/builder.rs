//! [`RigidChainBuilder`]: a whole rigid-chain rod (bodies, masses, inertias, joints,
//! rest shape) put into a world (paper Section 6.2).

use super::*;

/// The rotational inertia of the two half-length end bodies of a rigid chain, whose
/// position (the degree of freedom) sits at the rod's end rather than at their centre.
/// With l_end = l/2 and m_end = ρ A l_end:
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EndInertia {
    /// 𝓘_end = ρ l_end J + m_end (l_end/2)² diag(1, 1, 0): the section inertia of
    /// the half segment, as for every body, moved from the segment's centre to the end
    /// point by the parallel-axis theorem (offset l_end/2 along d₃). Always the inertia
    /// of a rigid body. The default.
    #[default]
    ParallelAxis,
    /// 𝓘_end = ρ l_end J + m_end diag(0, l_end², 0), as printed in Section 6.2. The term
    /// acts on d₂ only, and the result is a rigid body's inertia only when
    /// 𝓘₂ ≤ 𝓘₁ + 𝓘₃, i.e. l_end ≤ r/√2 (r the section radius): coarser chains are
    /// rejected by [`Body::dynamic`] (→ [`RodError::World`] with
    /// [`XpbdError::NonPhysicalInertia`]).
    AsPrinted,
    /// 𝓘_end = ρ l_end J: the interior bodies' rule, with no end term (the lumping of
    /// Section 6.3.6).
    Lumped,
}

/// The rest shape of a rigid-chain rod: the v* and u* of each joint's constraint (93).
#[derive(Debug, Clone, PartialEq)]
pub enum RestShape<T: Real> {
    /// Straight and unsheared: v* = e₃, u* = 0 (93).
    Straight,
    /// v* = e₃ and the precurvature u*ⱼ (rad/m, body frame of body j) of each of the
    /// N − 1 joints (92)–(93).
    Precurvature(Vec<Vector3<T>>),
    /// v* = e₃ and the same precurvature u* (rad/m) at every joint.
    UniformPrecurvature(Vector3<T>),
    /// The rod's initial configuration is its rest state: v*ⱼ and u*ⱼ are the strains
    /// (89)–(90) there, so that C = 0 initially. For a curved centre line this includes
    /// the shortening of v₃ by the matrix average of (89) (v₃ = cos(φ/2) for a planar
    /// turn φ between two bodies on a chord of length l).
    Initial,
}

/// How the world solves the joints of a chain added by [`RigidChainBuilder::build`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JointSolve {
    /// All N − 1 joints form one direct group ([`World::add_direct_group`], base to
    /// tip, so block bandwidth 1): every iteration is one Newton step (53)–(55) of the
    /// whole chain, A Δλ = −C − α̃λ with A = ∇C 𝓜⁻¹ ∇Cᵀ + α̃ block-tridiagonal, solved in
    /// O(N). This is the paper's scheme for rods (Section 8.2) and gives the same
    /// trajectory as [`RigidChainBuilder::build_system`] (to round-off).
    #[default]
    Direct,
    /// Every joint is its own constraint, projected one after another (a block (124)
    /// or rows (56), in the world's [`SolveMode`](crate::xpbd::SolveMode)): Gauss–Seidel
    /// over the chain, the iterative solve the paper compares against (Figure 11).
    ///
    /// Not a rod solver at practical iteration counts. With λ = 0 at the start of the
    /// substep, one sweep solves (D + L)Δλ = −C̃ in place of AΔλ = −C̃ (A = L + D + Lᵀ,
    /// L its strictly lower block triangle): under a steady load the fixed point of the
    /// step has C = −α̃λ + Lᵀλ instead of C = −α̃λ, so where the joints are stiff
    /// (α̃ = α/h² small against ∇C𝓜⁻¹∇Cᵀ, i.e. large h or a stiff material) the chain
    /// is far softer than the rod it discretises, its strains are far larger than the
    /// load explains, and the elastic energy stored in them exceeds the work the load
    /// did: the total energy rises above its initial value until the large rotations
    /// make the chain diverge. Measured on the cantilever of Section 9.2 (E = 5 MPa,
    /// ν = 0.4, r = 0.05 m, L = 1 m, 11 bodies, clamped base, gravity, Δt = 5e-3 s, one
    /// substep, 400 steps, f64): one iteration gains 5.4e4 J in block mode and 3.9e8 J
    /// in rows mode (the direct solve loses energy at every step); 10 iterations still
    /// gain 31 J, 30 gain 1.2 J, 100 gain none and end with the tip 5.9 mm above the
    /// direct solve's. At Δt = 1e-3 s one iteration gains 14 J over 2 s.
    /// (`tests/rod/rigid_chain_energy.rs`.)
    GaussSeidel,
}

/// A rigid-chain Cosserat rod to be built into a [`World`] (Section 6.2, module docs):
/// the body poses (centre-line points and director frames), the rest lengths, the
/// material, the rest shape, the end inertia rule, which ends are clamped, the joint
/// damping and how the world solves the joints ([`JointSolve`]).
///
/// ```
/// use lie_xpbd::lie::{LieGroup, SO3Matrix};
/// use lie_xpbd::rod::{RigidChainBuilder, RodMaterial};
/// use lie_xpbd::xpbd::{Constraint, SolverOptions, World};
/// use nalgebra::Vector3;
/// // The rod of Section 9.2: E = 5 MPa, diameter 0.1 m, L = 1 m, ρ = 1000 kg/m³,
/// // 11 bodies along world x, clamped at the base.
/// let material = RodMaterial::<f64>::circular(5e6, 0.5, 1000.0, 0.05)?;
/// let rod = RigidChainBuilder::<f64, SO3Matrix<f64>>::straight(
///     material, Vector3::zeros(), Vector3::x(), 1.0, 11,
/// )?
/// .with_fixed_base(true);
/// let mut world = World::new(SolverOptions::default())?;
/// let chain = rod.build(&mut world)?;
/// assert_eq!((chain.bodies.len(), chain.constraints.len()), (11, 10));
/// // Body positions 0.1 m apart, from the base (s = 0) to the tip (s = 1 m).
/// let tip = world.body(chain.tip()).unwrap();
/// approx::assert_relative_eq!(tip.position, Vector3::x(), epsilon = 1e-15);
/// // Half-length end body: mass ρ A l/2.
/// approx::assert_relative_eq!(tip.mass(), 1000.0 * material.area() * 0.05, epsilon = 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RigidChainBuilder<T: Real, G: LieGroup<T>> {
    material: RodMaterial<T>,
    poses: Vec<Pose<T, G>>,
    lengths: Vec<T>,
    rest: RestShape<T>,
    end_inertia: EndInertia,
    fixed_base: bool,
    fixed_tip: bool,
    damping: [T; 6],
    joint_solve: JointSolve,
}

/// What [`RigidChainBuilder::build`] added to the world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RigidChain {
    /// The N bodies, base (s = 0) first, tip (s = L) last.
    pub bodies: Vec<BodyId>,
    /// The N − 1 joint constraints ([`RigidChainConstraint`]); constraint j joins
    /// `bodies[j]` and `bodies[j + 1]`.
    pub constraints: Vec<ConstraintId>,
    /// The direct group of the joints ([`JointSolve::Direct`]), `None` for
    /// [`JointSolve::GaussSeidel`].
    pub group: Option<DirectGroupId>,
}

impl RigidChain {
    /// The base body (s = 0; its position is the rod's base end).
    pub fn base(&self) -> BodyId {
        self.bodies[0]
    }

    /// The tip body (s = L; its position is the rod's tip end).
    pub fn tip(&self) -> BodyId {
        self.bodies[self.bodies.len() - 1]
    }
}

/// The unit vector along `x`, or an error naming `what`.
fn unit<T: Real>(x: &Vector3<T>, what: &'static str) -> Result<Vector3<T>, RodError> {
    let n = x.norm();
    if !(n.is_finite() && n > T::zero()) {
        return Err(RodError::InvalidDirection {
            what,
            reason: "must be finite and non-zero",
        });
    }
    Ok(x / n)
}

/// A rotation with d₃ = `t` (unit): the smallest rotation taking world z to t (a half
/// turn about x for t = −z), the frame of a straight FEM rod too
/// ([`crate::rod::StraightRod`], the scenes' `straight` centre line), so every builder
/// gives a straight rod along t the same director frames.
fn frame_along<T: Real, G: LieGroup<T>>(t: &Vector3<T>) -> Result<G, RodError> {
    let r = crate::rod::fem_rod::rotation_from_z::<T, G>(t);
    if r.to_matrix().iter().all(|x| x.is_finite()) {
        Ok(r)
    } else {
        Err(RodError::InvalidDirection {
            what: "tangent",
            reason: "must be finite and non-zero",
        })
    }
}

/// The rotation vector (world frame) of the smallest rotation taking unit `a` to unit
/// `b`, or `None` if they are opposite.
fn minimal_rotation<T: Real>(a: &Vector3<T>, b: &Vector3<T>) -> Option<Vector3<T>> {
    let cross = a.cross(b);
    let s = cross.norm();
    let cos = a.dot(b);
    if s <= T::default_epsilon() * c::<T>(16.0) {
        return if cos > T::zero() {
            Some(Vector3::zeros())
        } else {
            None
        };
    }
    Some(cross * (s.atan2(cos) / s))
}

impl<T: Real, G: LieGroup<T>> RigidChainBuilder<T, G> {
    /// A straight rod of length `length` (m) from `origin` (m, world frame; the base end,
    /// s = 0) along `direction` (world frame, any non-zero length), discretised into
    /// `bodies` = N ≥ 2 rigid bodies (N − 1 joints, l = L/(N − 1)). Every director frame
    /// is the smallest rotation taking world z to the direction, as for a straight FEM
    /// rod ([`Self::with_normal`] turns it). Rest shape straight, end inertia
    /// [`EndInertia::ParallelAxis`], both ends free, no damping.
    ///
    /// # Errors
    /// [`RodError::TooFewBodies`] for N < 2; [`RodError::TooManyBodies`] for an N whose
    /// storage cannot be allocated; [`RodError::InvalidLength`] unless L is
    /// finite and > 0; [`RodError::InvalidDirection`] for a zero or non-finite
    /// direction; [`RodError::NonFinite`] for a non-finite origin.
    pub fn straight(
        material: RodMaterial<T>,
        origin: Vector3<T>,
        direction: Vector3<T>,
        length: T,
        bodies: usize,
    ) -> Result<Self, RodError> {
        if bodies < 2 {
            return Err(RodError::TooFewBodies {
                count: bodies,
                min: 2,
            });
        }
        check_length(length)?;
        finite3(&origin, "rod origin", 0)?;
        let t = unit(&direction, "direction")?;
        let l = length / c::<T>((bodies - 1) as f64);
        check_length(l)?;
        let frame = frame_along::<T, G>(&t)?;
        // A count whose storage cannot be allocated is an error, not a panic or an abort.
        let too_many = |_| RodError::TooManyBodies { count: bodies };
        let mut poses = Vec::new();
        poses.try_reserve_exact(bodies).map_err(too_many)?;
        let mut lengths = Vec::new();
        lengths.try_reserve_exact(bodies - 1).map_err(too_many)?;
        poses.extend((0..bodies).map(|j| Pose::new(origin + t * (l * c::<T>(j as f64)), frame)));
        lengths.resize(bodies - 1, l);
        Self::with_lengths(material, poses, lengths)
    }

    /// A rod whose body positions are the points of a polyline (m, world frame), base
    /// first: N = `points.len()` ≥ 2 bodies, joint j of rest length |pⱼ₊₁ − pⱼ|. Body j's
    /// d₃ is the tangent there: the first and last segment's direction at the ends, the
    /// bisector of the two adjacent segments' directions inside. The frames are carried
    /// along by parallel transport (the smallest rotation from one tangent to the next),
    /// so the polyline itself adds no twist; the first frame is the smallest rotation
    /// taking world z to its tangent, so a straight polyline has the frames of a
    /// straight rod ([`Self::with_normal`] turns all).
    /// The mass of body j is ρA times half the length of its adjacent segments. Rest
    /// shape straight (the polyline is then a deformed initial state; use
    /// [`RestShape::Initial`] to make it the rest shape).
    ///
    /// # Errors
    /// [`RodError::TooFewBodies`] for fewer than 2 points; [`RodError::NonFinite`]
    /// (`"polyline point"`) for a non-finite point; [`RodError::DegenerateSegment`] for
    /// two consecutive equal points; [`RodError::ReversedSegment`] where the polyline
    /// turns back by 180° (or two consecutive tangents are opposite).
    pub fn polyline(material: RodMaterial<T>, points: &[Vector3<T>]) -> Result<Self, RodError> {
        let n = points.len();
        if n < 2 {
            return Err(RodError::TooFewBodies { count: n, min: 2 });
        }
        for (index, p) in points.iter().enumerate() {
            finite3(p, "polyline point", index)?;
        }
        let mut lengths = Vec::with_capacity(n - 1);
        let mut dirs = Vec::with_capacity(n - 1);
        for (index, w) in points.windows(2).enumerate() {
            let d = w[1] - w[0];
            let l = d.norm();
            if !(l.is_finite() && l > T::zero()) {
                return Err(RodError::DegenerateSegment {
                    index,
                    length: l.to_f64(),
                });
            }
            lengths.push(l);
            dirs.push(d / l);
        }
        let mut tangents = Vec::with_capacity(n);
        tangents.push(dirs[0]);
        for j in 1..n - 1 {
            let b = dirs[j - 1] + dirs[j];
            let norm = b.norm();
            if norm <= c::<T>(16.0) * T::default_epsilon() {
                return Err(RodError::ReversedSegment { index: j });
            }
            tangents.push(b / norm);
        }
        tangents.push(dirs[n - 2]);
        let mut frame = frame_along::<T, G>(&tangents[0])?;
        let mut poses = Vec::with_capacity(n);
        poses.push(Pose::new(points[0], frame));
        for j in 1..n {
            let w = minimal_rotation(&tangents[j - 1], &tangents[j])
                .ok_or(RodError::ReversedSegment { index: j })?;
            // Exp(w)·R = R·Exp(Rᵀw) (L3): the world-frame turn as a body-frame boxplus.
            frame = frame.boxplus(&frame.act_inv(&w));
            poses.push(Pose::new(points[j], frame));
        }
        Self::with_lengths(material, poses, lengths)
    }

    /// A rod with the given body poses (positions m, world frame; director frames
    /// d₁, d₂, d₃ → world), base first, N = `poses.len()` ≥ 2; joint j has rest length
    /// |pⱼ₊₁ − pⱼ|. Use it for initial states the other constructors do not make
    /// (twisted frames, frames not along the centre line); with [`RestShape::Initial`]
    /// they are the rest state.
    ///
    /// # Errors
    /// [`RodError::TooFewBodies`] for N < 2; [`RodError::NonFinite`] (`"body position"`
    /// / `"body rotation"`) for a non-finite pose; [`RodError::DegenerateSegment`] for
    /// two consecutive equal positions.
    pub fn from_poses(material: RodMaterial<T>, poses: Vec<Pose<T, G>>) -> Result<Self, RodError> {
        let n = poses.len();
        if n < 2 {
            return Err(RodError::TooFewBodies { count: n, min: 2 });
        }
        for (index, p) in poses.iter().enumerate() {
            finite3(&p.position, "body position", index)?;
            if !p.rotation.to_matrix().iter().all(|x| x.is_finite()) {
                return Err(RodError::NonFinite {
                    what: "body rotation",
                    index,
                });
            }
        }
        let mut lengths = Vec::with_capacity(n - 1);
        for (index, w) in poses.windows(2).enumerate() {
            let l = (w[1].position - w[0].position).norm();
            if !(l.is_finite() && l > T::zero()) {
                return Err(RodError::DegenerateSegment {
                    index,
                    length: l.to_f64(),
                });
            }
            lengths.push(l);
        }
        Self::with_lengths(material, poses, lengths)
    }

    /// The chain whose rest state (93), with the paper's v* = e₃, has the director
    /// frames `frames` (d₁, d₂, d₃ → world, base first, N = `frames.len()` ≥ 2) and the
    /// rest lengths `lengths` (m, N − 1 of them, l of (89)–(94); for a rod of length L
    /// sampled evenly, lⱼ = L/(N − 1) as in Section 6.2). This is how a rigid chain
    /// discretises a curved centre line given by its frames R(s) at sⱼ = Σ_{i<j} lᵢ:
    ///
    /// ```text
    /// u*ⱼ = (Rⱼ₊₁ ⊟ Rⱼ)/lⱼ                                  precurvature (92)–(93)
    /// pⱼ₊₁ = pⱼ + 2 lⱼ (Rⱼᵀ + Rⱼ₊₁ᵀ)⁻¹ e₃,   p₀ = `base`    so that vⱼ = e₃ (89)
    /// ```
    ///
    /// so the initial state is the rest state (C = 0 in every joint, up to round-off).
    /// For frames that turn at a constant rate (a circle, a helix: u* constant, the
    /// continuum precurvature exactly) the bodies do not lie on the centre line: the
    /// matrix average of (89) scales the part of the chord normal to the turn axis by
    /// cos(θ/2) (θ = |lⱼ u*| per joint), so the chords lengthen by 1/cos(θ/2) and a coil of
    /// radius r becomes a polygon whose vertices (the bodies) lie at r θ/sin θ and whose
    /// chord midpoints (where the joint forces act, the lever arm d/2 of (176)–(177)) lie
    /// at r (θ/2)/sin(θ/2) from the axis, at the coil's pitch: the wider spring of the
    /// paper's Section 9.4. The rest shape is [`RestShape::Precurvature`] with these u*.
    ///
    /// # Errors
    /// [`RodError::TooFewBodies`] for N < 2; [`RodError::CountMismatch`] (`"rest
    /// lengths"`) unless there are N − 1 lengths; [`RodError::DegenerateSegment`] for a
    /// length that is not finite and > 0; [`RodError::NonFinite`] (`"rod origin"` /
    /// `"body rotation"`) for a non-finite base or frame; [`RodError::HalfTurn`] where
    /// two consecutive frames are turned by π (to round-off) relative to each other.
    pub fn from_rest_frames(
        material: RodMaterial<T>,
        base: Vector3<T>,
        frames: &[G],
        lengths: Vec<T>,
    ) -> Result<Self, RodError> {
        let n = frames.len();
        if n < 2 {
            return Err(RodError::TooFewBodies { count: n, min: 2 });
        }
        if lengths.len() != n - 1 {
            return Err(RodError::CountMismatch {
                what: "rest lengths",
                given: lengths.len(),
                expected: n - 1,
            });
        }
        finite3(&base, "rod origin", 0)?;
        for (index, r) in frames.iter().enumerate() {
            if !r.to_matrix().iter().all(|x| x.is_finite()) {
                return Err(RodError::NonFinite {
                    what: "body rotation",
                    index,
                });
            }
        }
        for (index, &l) in lengths.iter().enumerate() {
            if !(l.is_finite() && l > T::zero()) {
                return Err(RodError::DegenerateSegment {
                    index,
                    length: l.to_f64(),
                });
            }
        }
        let two = c::<T>(2.0);
        let mut poses = Vec::with_capacity(n);
        let mut u_star = Vec::with_capacity(n - 1);
        let mut p = base;
        poses.push(Pose::new(p, frames[0]));
        for (j, &l) in lengths.iter().enumerate() {
            let (a, b) = (&frames[j], &frames[j + 1]);
            let psi = b.boxminus(a);
            // Near |ψ| = π the average is singular and Log is at its branch cut.
            let turn = psi.norm();
            let limit = c::<T>(std::f64::consts::PI) - c::<T>(1e3) * T::default_epsilon();
            if !turn.is_finite() || turn >= limit {
                return Err(RodError::HalfTurn { index: j });
            }
            let average = (a.to_matrix() + b.to_matrix()).transpose();
            let d = average
                .lu()
                .solve(&(Vector3::z() * (two * l)))
                .ok_or(RodError::HalfTurn { index: j })?;
            p += d;
            poses.push(Pose::new(p, *b));
            u_star.push(psi / l);
        }
        let mut out = Self::with_lengths(material, poses, lengths)?;
        out.rest = RestShape::Precurvature(u_star);
        Ok(out)
    }

    fn with_lengths(
        material: RodMaterial<T>,
        poses: Vec<Pose<T, G>>,
        lengths: Vec<T>,
    ) -> Result<Self, RodError> {
        for (index, &l) in lengths.iter().enumerate() {
            if !(l.is_finite() && l > T::zero()) {
                return Err(RodError::DegenerateSegment {
                    index,
                    length: l.to_f64(),
                });
            }
        }
        Ok(Self {
            material,
            poses,
            lengths,
            rest: RestShape::Straight,
            end_inertia: EndInertia::default(),
            fixed_base: false,
            fixed_tip: false,
            damping: [T::zero(); 6],
            joint_solve: JointSolve::Direct,
        })
    }

    /// Turns every director frame about its own d₃ by the same angle, so that the
    /// first body's d₁ points along `normal` (world frame) projected orthogonally to its
    /// d₃. A common turn about d₃ leaves the strains (89)–(90) of a straight chain
    /// unchanged, and for parallel-transported frames (the polyline) keeps them
    /// parallel-transported.
    ///
    /// # Errors
    /// [`RodError::InvalidDirection`] (`"normal"`) for a zero or non-finite normal, or
    /// one parallel to the first body's d₃.
    pub fn with_normal(mut self, normal: Vector3<T>) -> Result<Self, RodError> {
        let n = unit(&normal, "normal")?;
        let r0 = self.poses[0].rotation;
        let local = r0.act_inv(&n);
        let planar = (local.x * local.x + local.y * local.y).sqrt();
        if planar <= c::<T>(1e3) * T::default_epsilon() {
            return Err(RodError::InvalidDirection {
                what: "normal",
                reason: "must not be parallel to the rod's tangent at the base",
            });
        }
        let turn = G::exp(&Vector3::new(T::zero(), T::zero(), local.y.atan2(local.x)));
        for p in &mut self.poses {
            p.rotation = p.rotation.compose(&turn);
        }
        Ok(self)
    }

    /// The same rod with rest shape `rest` (default [`RestShape::Straight`]).
    ///
    /// # Errors
    /// [`RodError::CountMismatch`] (`"precurvature"`) unless a
    /// [`RestShape::Precurvature`] list has one entry per joint (N − 1);
    /// [`RodError::NonFinite`] (`"precurvature"`, joint index) for a non-finite entry.
    pub fn with_rest_shape(mut self, rest: RestShape<T>) -> Result<Self, RodError> {
        match &rest {
            RestShape::Precurvature(u) => {
                if u.len() != self.lengths.len() {
                    return Err(RodError::CountMismatch {
                        what: "precurvature",
                        given: u.len(),
                        expected: self.lengths.len(),
                    });
                }
                for (index, x) in u.iter().enumerate() {
                    finite3(x, "precurvature", index)?;
                }
            }
            RestShape::UniformPrecurvature(u) => finite3(u, "precurvature", 0)?,
            RestShape::Straight | RestShape::Initial => {}
        }
        self.rest = rest;
        Ok(self)
    }

    /// The same rod with end inertia rule `rule` (default [`EndInertia::ParallelAxis`]).
    pub fn with_end_inertia(mut self, rule: EndInertia) -> Self {
        self.end_inertia = rule;
        self
    }

    /// Makes the base body (s = 0) a fixed body (infinite mass, never moved): a clamped
    /// base (position and orientation held).
    pub fn with_fixed_base(mut self, fixed: bool) -> Self {
        self.fixed_base = fixed;
        self
    }

    /// Makes the tip body (s = L) a fixed body: a clamped tip.
    pub fn with_fixed_tip(mut self, fixed: bool) -> Self {
        self.fixed_tip = fixed;
        self
    }

    /// Rayleigh damping b (s) of every joint's rows, 0–2 shear/stretch, 3–5
    /// bending/twist ([`RigidChainConstraint::with_damping`]).
    ///
    /// # Errors
    /// [`RodError::InvalidDamping`] naming the first negative or non-finite row.
    pub fn with_damping(mut self, damping: [T; 6]) -> Result<Self, RodError> {
        check_damping(&damping)?;
        self.damping = damping;
        Ok(self)
    }

    /// The same rod with its joints solved as `solve` by [`Self::build`] (default
    /// [`JointSolve::Direct`]; [`Self::build_system`] always solves the chain at once).
    pub fn with_joint_solve(mut self, solve: JointSolve) -> Self {
        self.joint_solve = solve;
        self
    }

    /// How [`Self::build`] has the joints solved.
    pub fn joint_solve(&self) -> JointSolve {
        self.joint_solve
    }

    /// The material.
    pub fn material(&self) -> &RodMaterial<T> {
        &self.material
    }

    /// The initial body poses, base first.
    pub fn poses(&self) -> &[Pose<T, G>] {
        &self.poses
    }

    /// The rest length of each joint (m): the rest distance between consecutive body
    /// positions, l of (89)–(94).
    pub fn rest_lengths(&self) -> &[T] {
        &self.lengths
    }

    /// The rest shape.
    pub fn rest_shape(&self) -> &RestShape<T> {
        &self.rest
    }

    /// Mass (kg) and principal inertia (kg·m², body axes d₁, d₂, d₃) of every body
    /// (Section 6.2, module docs): an interior body carries half of each adjacent
    /// segment, ρA(lⱼ₋₁ + lⱼ)/2 and ρJ(lⱼ₋₁ + lⱼ)/2; an end body half of its one segment,
    /// with the [`EndInertia`] rule. (For a fixed end the values are computed but not
    /// used.)
    pub fn body_inertias(&self) -> Vec<NodalInertia<T>> {
        let n = self.poses.len();
        let half = c::<T>(0.5);
        let rho_a = self.material.mass_per_length();
        let rho_j = self.material.rotational_inertia_per_length();
        (0..n)
            .map(|j| {
                if j == 0 || j == n - 1 {
                    let l_end = self.lengths[if j == 0 { 0 } else { n - 2 }] * half;
                    let mass = rho_a * l_end;
                    let extra = match self.end_inertia {
                        EndInertia::ParallelAxis => {
                            let d = l_end * half;
                            Vector3::new(mass * d * d, mass * d * d, T::zero())
                        }
                        EndInertia::AsPrinted => {
                            Vector3::new(T::zero(), mass * l_end * l_end, T::zero())
                        }
                        EndInertia::Lumped => Vector3::zeros(),
                    };
                    NodalInertia {
                        mass,
                        inertia: rho_j * l_end + extra,
                    }
                } else {
                    let l = (self.lengths[j - 1] + self.lengths[j]) * half;
                    NodalInertia {
                        mass: rho_a * l,
                        inertia: rho_j * l,
                    }
                }
            })
            .collect()
    }

    /// The N − 1 joint constraints for bodies with ids `first`, `first + 1`, … (body j
    /// has id `first + j`), with the rest shape's v*, u* and the damping.
    ///
    /// # Errors
    /// As [`RigidChainConstraint::new`] (cannot fail for a builder made by its
    /// constructors).
    pub fn constraints(&self, first: usize) -> Result<Vec<RigidChainConstraint<T>>, RodError> {
        let mut out = Vec::with_capacity(self.lengths.len());
        for (j, &l) in self.lengths.iter().enumerate() {
            let mut k = RigidChainConstraint::new(
                BodyId(first + j),
                BodyId(first + j + 1),
                l,
                &self.material,
            )?
            .with_damping(&self.damping)?;
            k = match &self.rest {
                RestShape::Straight => k,
                RestShape::Precurvature(u) => k.with_precurvature(&u[j])?,
                RestShape::UniformPrecurvature(u) => k.with_precurvature(u)?,
                RestShape::Initial => {
                    let s =
                        strain_gradient(&self.poses[j], &self.poses[j + 1], T::one() / l).strains;
                    k.with_rest_shear(&s.shear)?
                        .with_precurvature(&s.curvature)?
                }
            };
            out.push(k);
        }
        Ok(out)
    }

    /// Adds the rod to `world`: its N bodies at rest (base first; a clamped end as a
    /// fixed body), its N − 1 joint constraints, in order from base to tip, and, for
    /// [`JointSolve::Direct`] (the default), the direct group that solves them together.
    /// All bodies and constraints are validated before the world is changed, so on
    /// error the world is left as it was.
    ///
    /// # Errors
    /// [`RodError::World`] with the world's error: [`XpbdError::NonPhysicalInertia`] for
    /// [`EndInertia::AsPrinted`] on a coarse chain, [`XpbdError::NotARotation`] or
    /// [`XpbdError::NonFinite`] for a bad pose, [`XpbdError::NoDynamicBody`] for a
    /// two-body rod with both ends clamped.
    pub fn build(&self, world: &mut World<T, G>) -> Result<RigidChain, RodError> {
        let mut chain = self.build_joints(world)?;
        if self.joint_solve == JointSolve::Direct {
            // Cannot fail for constraints just added (none is in a group yet); the band
            // of bandwidth 1 is O(N), like the bodies.
            chain.group = Some(world.add_direct_group(&chain.constraints)?);
        }
        Ok(chain)
    }

    /// [`Self::build`] without the direct group.
    pub(super) fn build_joints(&self, world: &mut World<T, G>) -> Result<RigidChain, RodError> {
        let n = self.poses.len();
        let inertias = self.body_inertias();
        let mut bodies = Vec::with_capacity(n);
        for (j, (pose, inertia)) in self.poses.iter().zip(&inertias).enumerate() {
            let fixed = (j == 0 && self.fixed_base) || (j == n - 1 && self.fixed_tip);
            let body = if fixed {
                Body::fixed(pose.position, pose.rotation)?
            } else {
                Body::dynamic(inertia.mass, inertia.inertia, pose.position, pose.rotation)?
            };
            bodies.push(body);
        }
        let first = world.bodies().len();
        let constraints = self.constraints(first)?;
        if n == 2 && self.fixed_base && self.fixed_tip {
            return Err(RodError::World(XpbdError::NoDynamicBody {
                constraint: Constraint::<T, G>::name(&constraints[0]),
            }));
        }
        let mut ids = Vec::with_capacity(n);
        for body in bodies {
            ids.push(world.add_body(body)?);
        }
        let mut cids = Vec::with_capacity(n - 1);
        for k in constraints {
            cids.push(world.add_constraint(k)?);
        }
        Ok(RigidChain {
            bodies: ids,
            constraints: cids,
            group: None,
        })
    }
}
