//! [`FemRod`]: a finite-element Cosserat rod in an XPBD [`World`], its elastic
//! Gauss-point constraints (108) solved together by the block-banded direct solver of
//! Section 8.2 (Algorithm 1, line 5).
//!
//! # The rod
//! A rod of n elements of order N − 1 has n(N − 1) + 1 nodes; element e owns nodes
//! e(N − 1) … e(N − 1) + N − 1, so adjacent elements share their end node (Section
//! 6.3.1). Every node is a [`Body`] of the world whose body frame is the director
//! frame (d₁, d₂, d₃ = tangent), with the lumped mass and rotational inertia of Section
//! 6.3.6: each element's ρAl and ρ diag(I₁, I₂, J) l split by the row sums of its
//! consistent mass matrix (½, ½; ⅙, ⅔, ⅙; ⅛, ⅜, ⅜, ⅛), a shared node receiving the
//! sum of both elements' shares.
//!
//! # The solve
//! The rod's constraints are the q Gauss-point constraints (108) of every element,
//! numbered element by element along the rod: Gauss point r of element e is block row
//! g = e·q + r. Each [`System::project`] evaluates all of them and their gradients at
//! the current state, assembles
//!
//! ```text
//! A = ∇C 𝓜⁻¹ ∇Cᵀ + α̃,     A_gg' = Σ_{nodes k of both g and g'} ∇C_gk 𝓜ₖ⁻¹ ∇C_g'kᵀ (+ α̃_g if g = g')
//! ```
//!
//! (6×6 blocks; α̃ = α/h² with α of (109)) into a [`BlockBandedMatrix`] of block
//! bandwidth 2q − 1 ([`rod_block_bandwidth`]: points of the same element share all N
//! nodes, points of adjacent elements the one end node), factors it by block Cholesky
//! and solves `A Δλ = −C − α̃λ` (55) in O(n) time; then λ ← λ + Δλ and every node moves
//! by `𝓜⁻¹ ∇CᵀΔλ` (57)–(58). One projection is one Newton step of the whole rod, so the
//! rod keeps its stiffness with a single iteration per substep (Fig. 11).
//!
//! For a long rod (band and Gauss-point cache together larger than about an L2
//! cache, 512 KiB) the projection makes one pass along the rod: element by element
//! it evaluates the element's points, assembles their block rows (which need the
//! points of this and the previous element only), factors those rows (which need
//! only the rows above) and forward-substitutes them, so each element's data is used
//! while it is in cache. The points themselves are kept for two elements only; what
//! the node corrections need of their gradients is kept packed (R(ξ)ᵀ once per
//! point and the rotation columns, 9 + 19N scalars instead of 36N + 16). A second
//! pass, backwards, back-substitutes element by element and forms the corrections
//! 𝓜⁻¹∇CᵀΔλ of the element's nodes at once. The operations, and so the results
//! (bit for bit), are those of assembling everything, then factoring, then solving,
//! which is what a shorter rod does (faster while everything is in cache).
//!
//! The band is given the rod's profile ([`BlockBandedMatrix::set_profile`]): row
//! e·q + r couples only with the points of elements e − 1 and e, so its first
//! non-zero block is in column (e − 1)·q; only the blocks from there on are stored
//! (cubic: 15 blocks per element instead of the band's 18), and the factorisation
//! skips the blocks left of it (a third of the block products for cubic elements). The assembly uses the
//! structure of a gradient block `[∂C/∂pₖ | D_{Rₖ}C]`: its position columns are zero
//! in the curvature rows (∂u/∂pₖ = 0), so one product ∇C_gk 𝓜ₖ⁻¹ ∇C_g'kᵀ costs 135
//! multiply-adds, not 216 (a diagonal block, of which only the lower triangle is
//! used, 117); 𝓜ₖ⁻¹ (diagonal) scales the columns once per point and node; fixed
//! nodes (𝓜ₖ⁻¹ = 0) are skipped; every block of the profile is written once, so the
//! band is not zeroed first. The basis values at the Gauss points are
//! constants of the element, computed by [`RodElement::new`].
//!
//! # One Gauss point at a time
//! With [`RodSolve::GaussPoint`] ([`FemRod::with_solve`], [`FemRod::add_straight_with`])
//! the same constraints are instead projected one Gauss point at a time, in order along
//! the rod: each point re-evaluates its constraint at the current poses and solves its
//! own 6×6 system (a block Gauss–Seidel sweep, the comparison of Figure 11). It needs
//! many iterations to approach the stiffness of one banded solve, and its fixed point
//! is not the banded one: each point moves the nodes along its gradient at the state
//! it sees, so the λ accumulated over a sweep does not satisfy the primal equation
//! (51) with the final gradients; the difference shrinks with the substep size
//! (`tests/rod/gauss_point.rs` measures it).
//!
//! # Clamped ends
//! A clamped end is a node that is a fixed body (infinite mass and inertia): its
//! 𝓜⁻¹ = 0, so its columns of ∇C contribute nothing to A and it is never moved, while
//! the Gauss points next to it still measure the strain relative to its fixed pose.
//! This clamps both the position and the orientation of that end exactly (no
//! compliance, no extra constraint rows). To drive a clamped end, move the fixed body
//! between steps.
//!
//! # Damping
//! With a Rayleigh damping b > 0 (s), the rod's rows take part in the velocity-level
//! pass (Section 4.4, Algorithm 1 line 12) with β̃ = h·b/α: the same banded assembly
//! with α̃ replaced by β̃⁻¹ = α/(h b), solving `A Δμ = −∇C v` and v ← v + 𝓜⁻¹∇CᵀΔμ, at
//! the end-of-substep poses. Damping changes the path to rest, not the rest state.
//!
//! Nothing here allocates after [`FemRod::new`]: the Gauss-point cache, λ, the
//! right-hand side, the per-node corrections and the band are sized there (both
//! [`RodSolve`]s).

mod kernels;
mod projection;
#[cfg(target_arch = "x86_64")]
mod simd;
mod spec;
mod streaming;
mod system;
pub use spec::{FemRodError, FemRodIds, RodClamp, RodSolve, StraightRod};
pub use system::ROD_GAUSS_POINT_KIND;

use super::banded::rod_block_bandwidth;
use super::element::{ElementKinematics, GaussPointConstraint, RodElement};
use super::error::RodError;
use super::material::RodMaterial;
use crate::lie::real::c;
use crate::lie::{LieGroup, Pose, Real};
use crate::linalg::banded::{BandBlock, BandScalar, BandedError, BlockBandedMatrix};
use crate::xpbd::{apply_body_correction, apply_last_body_correction, Body, BodyId, System, World};
use nalgebra::{Matrix6, SVector, Vector3, Vector6};
use std::marker::PhantomData;

/// Working set (bytes of band plus Gauss-point cache) from which [`FemRod`]'s banded
/// projection makes one streaming pass instead of separate passes: the size of a
/// per-core L2 cache. Separate passes are faster while both fit (the 40-element
/// quadratic and cubic rods); beyond, every pass misses the cache (the 100-element
/// cubic rod, 0.9 MB in f64, missed L2 about 400 times per element and step in
/// separate passes under callgrind's cache simulation).
const STREAMING_BYTES: usize = 512 * 1024;

/// A rod of linear elements (2 nodes each): [`FemRod`] with `N = 2`.
///
/// ```
/// use lie_xpbd::lie::SO3Matrix;
/// use lie_xpbd::rod::{LinearRod, RodMaterial, StraightRod};
/// use lie_xpbd::xpbd::{SolverOptions, World};
/// let mut world = World::<f64, SO3Matrix<f64>>::new(SolverOptions::default())?;
/// let material = RodMaterial::circular(5e6, 0.4, 1000.0, 0.05)?;
/// let rod = LinearRod::add_straight(&mut world, &material, &StraightRod::cantilever(1.0, 4))?;
/// assert_eq!(rod.nodes.len(), 5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type LinearRod<T, G> = FemRod<T, G, 2>;

/// A rod of quadratic elements (3 nodes each): [`FemRod`] with `N = 3`.
pub type QuadraticRod<T, G> = FemRod<T, G, 3>;

/// A rod of cubic elements (4 nodes each): [`FemRod`] with `N = 4`.
pub type CubicRod<T, G> = FemRod<T, G, 4>;

/// A finite-element Cosserat rod of elements with `N` nodes (order N − 1), whose nodes
/// are bodies of a world, projected as one block-banded λ-system per iteration (module
/// docs). Implements [`System`]; add it with [`World::add_system`] or build a straight
/// one with [`FemRod::add_straight`]. [`LinearRod`], [`QuadraticRod`] and [`CubicRod`]
/// name the three orders without spelling out `N`.
///
/// ```
/// use lie_xpbd::lie::SO3Matrix;
/// use lie_xpbd::rod::{FemRod, RodMaterial, StraightRod};
/// use lie_xpbd::xpbd::{SolverOptions, World};
/// // A 1 m cantilever of 4 quadratic elements along x under gravity −y.
/// let mut world = World::<f64, SO3Matrix<f64>>::new(SolverOptions::default())?;
/// let material = RodMaterial::circular(5e6, 0.4, 1000.0, 0.05)?;
/// let rod = FemRod::<f64, SO3Matrix<f64>, 3>::add_straight(
///     &mut world,
///     &material,
///     &StraightRod::cantilever(1.0, 4),
/// )?;
/// assert_eq!(rod.nodes.len(), 9);
/// for _ in 0..100 {
///     world.step()?;
/// }
/// let tip = world.body(*rod.nodes.last().unwrap()).unwrap().position;
/// assert!(tip.y < 0.0 && tip.y > -0.5); // sagging, held by the rod's stiffness
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Each Gauss point is a row block of the system ([`System::row_block`]), whose
/// gradient [`crate::xpbd::check_row_block`] checks against finite differences:
///
/// ```
/// use lie_xpbd::lie::{LieGroup, UnitQuaternion};
/// use lie_xpbd::rod::{FemRod, RodMaterial, StraightRod};
/// use lie_xpbd::xpbd::{check_row_block, SolverOptions, System, World};
/// let mut world = World::<f64, UnitQuaternion<f64>>::new(SolverOptions::default())?;
/// let material = RodMaterial::circular(5e6, 0.4, 1000.0, 0.05)?;
/// // Two cubic elements: one block (6 rows over 4 nodes) per Gauss point.
/// let ids = FemRod::<f64, UnitQuaternion<f64>, 4>::add_straight(
///     &mut world, &material, &StraightRod::cantilever(1.0, 2))?;
/// let rod = world.system(ids.system).unwrap();
/// assert_eq!(rod.row_block_count(), 6);
/// let report = check_row_block(rod, 4, world.bodies())?;
/// assert!(report.passed(), "{report}");
/// assert_eq!(report.kind, "rod gauss point");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct FemRod<T: BandScalar, G: LieGroup<T>, const N: usize> {
    name: String,
    nodes: Vec<BodyId>,
    elements: Vec<RodElement<T, N>>,
    /// Gauss points per element q.
    q: usize,
    /// Rayleigh damping b, s.
    damping: T,
    /// λ, 6 per Gauss point.
    lambda: Vec<T>,
    /// Right-hand side, then solution, of the banded solve.
    rhs: Vec<T>,
    matrix: BlockBandedMatrix<T>,
    /// The Gauss-point constraints at the last evaluated state.
    points: Vec<GaussPointConstraint<T, N>>,
    /// 𝓜⁻¹ diagonal per node (zero for a fixed node).
    inv_mass: Vec<Vector6<T>>,
    /// Per node scratch: ∇CᵀΔλ (then 𝓜⁻¹∇CᵀΔλ).
    correction: Vec<Vector6<T>>,
    /// Scratch: the kinematics of the element being evaluated.
    kinematics: ElementKinematics<T, G, N>,
    /// Whether the banded projection streams ([`STREAMING_BYTES`]).
    streaming: bool,
    /// Streaming only: the gradients of all Gauss points, packed, for the back
    /// substitution's node corrections (empty otherwise).
    packed: Vec<kernels::PackedGradient<T, N>>,
    /// Streaming only: the Gauss points of two consecutive elements, element e at
    /// e mod 2 (the assembly of e's rows needs e − 1's points); empty otherwise.
    window: Vec<GaussPointConstraint<T, N>>,
    failed_solves: u64,
    solve: RodSolve,
    _group: PhantomData<fn() -> G>,
}

impl<T: BandScalar, G: LieGroup<T>, const N: usize> FemRod<T, G, N> {
    /// A rod over the node bodies `nodes` (in order along the rod) and `elements`
    /// (element e spans nodes e(N − 1) … e(N − 1) + N − 1), with Rayleigh damping
    /// `damping` (s) on every row. The node bodies must be in the world the rod is
    /// added to, with body frames = director frames; their masses and inertias are
    /// read from the world at every solve (a fixed node is a clamp).
    ///
    /// # Errors
    /// [`FemRodError::InvalidRod`] for no elements, `nodes.len()` ≠ n(N − 1) + 1,
    /// elements with different numbers of Gauss points (the band needs one q), or a
    /// negative or non-finite damping; [`FemRodError::Banded`] if the band does not
    /// fit in memory.
    pub fn new(
        name: impl Into<String>,
        nodes: Vec<BodyId>,
        elements: Vec<RodElement<T, N>>,
        damping: T,
    ) -> Result<Self, FemRodError> {
        if elements.is_empty() {
            return Err(FemRodError::InvalidRod {
                field: "elements",
                value: "0".into(),
                reason: "a rod needs at least one element",
            });
        }
        let expected = elements.len() * (N - 1) + 1;
        if nodes.len() != expected {
            return Err(FemRodError::InvalidRod {
                field: "nodes",
                value: nodes.len().to_string(),
                reason: "a rod of n elements with N nodes each has n(N − 1) + 1 nodes",
            });
        }
        let q = elements[0].gauss_point_count();
        if elements.iter().any(|e| e.gauss_point_count() != q) {
            return Err(FemRodError::InvalidRod {
                field: "gauss points",
                value: format!("{q} in element 0"),
                reason: "every element of a rod must have the same number of Gauss points",
            });
        }
        if !(damping.is_finite() && damping >= T::zero()) {
            return Err(FemRodError::InvalidRod {
                field: "damping",
                value: damping.to_string(),
                reason: "the Rayleigh damping must be finite and >= 0 (s)",
            });
        }
        let blocks = elements.len() * q;
        let mut matrix = BlockBandedMatrix::new(blocks, rod_block_bandwidth(q))?;
        // Row e·q + r couples with the points of elements e − 1 and e only.
        matrix.set_profile(|g| (g / q).saturating_sub(1) * q)?;
        let zero_point = GaussPointConstraint {
            xi: T::zero(),
            weight: T::zero(),
            value: Vector6::zeros(),
            gradient: [Matrix6::zeros(); N],
            compliance: Vector6::zeros(),
        };
        let kinematics = elements[0].kinematics(&[Pose::identity(); N])?;
        let node_count = nodes.len();
        let band_bytes =
            matrix.blocks() * (matrix.bandwidth() + 1) * std::mem::size_of::<T::Block>();
        let point_bytes = blocks * std::mem::size_of::<GaussPointConstraint<T, N>>();
        let streaming = band_bytes + point_bytes >= STREAMING_BYTES;
        let (packed, window) = if streaming {
            (
                vec![kernels::PackedGradient::zeros(); blocks],
                vec![zero_point; 2 * q],
            )
        } else {
            (Vec::new(), Vec::new())
        };
        Ok(Self {
            name: name.into(),
            nodes,
            elements,
            q,
            damping,
            lambda: vec![T::zero(); 6 * blocks],
            rhs: vec![T::zero(); 6 * blocks],
            matrix,
            points: vec![zero_point; blocks],
            inv_mass: vec![Vector6::zeros(); node_count],
            correction: vec![Vector6::zeros(); node_count],
            kinematics,
            streaming,
            packed,
            window,
            failed_solves: 0,
            solve: RodSolve::Banded,
            _group: PhantomData,
        })
    }

    /// Adds a straight, unstressed rod of `material` described by `spec` to `world`:
    /// its node bodies (lumped inertia of Section 6.3.6, clamped ends fixed) and the
    /// rod system. Named `"rod <k>"` after the number of systems already in the world.
    ///
    /// # Errors
    /// [`FemRodError::InvalidRod`] for zero elements, a zero or non-finite direction,
    /// a non-finite start, a non-positive or non-finite length, or a bad damping;
    /// [`FemRodError::Rod`] for an element the material rejects;
    /// [`FemRodError::World`] if the world rejects a node body or the system. The
    /// rod and its node bodies are checked before the first body is added: only the
    /// world's own rejection of a body or of the system leaves bodies added.
    pub fn add_straight(
        world: &mut World<T, G>,
        material: &RodMaterial<T>,
        spec: &StraightRod<T>,
    ) -> Result<FemRodIds, FemRodError> {
        Self::add_straight_with(world, material, spec, RodSolve::Banded)
    }

    /// [`add_straight`](Self::add_straight) with the projection `solve` instead of the
    /// banded solve.
    ///
    /// # Errors
    /// As [`add_straight`](Self::add_straight).
    pub fn add_straight_with(
        world: &mut World<T, G>,
        material: &RodMaterial<T>,
        spec: &StraightRod<T>,
        solve: RodSolve,
    ) -> Result<FemRodIds, FemRodError> {
        if spec.elements == 0 {
            return Err(FemRodError::InvalidRod {
                field: "elements",
                value: "0".into(),
                reason: "a rod needs at least one element",
            });
        }
        if !spec.start.iter().all(|x| x.is_finite()) {
            return Err(FemRodError::InvalidRod {
                field: "start",
                value: format!("{:?}", spec.start.as_slice()),
                reason: "the start point must be finite (m)",
            });
        }
        let norm = spec.direction.norm();
        if !(norm.is_finite() && norm > T::zero()) {
            return Err(FemRodError::InvalidRod {
                field: "direction",
                value: format!("{:?}", spec.direction.as_slice()),
                reason: "the direction must be finite and non-zero",
            });
        }
        if !(spec.length.is_finite() && spec.length > T::zero()) {
            return Err(FemRodError::InvalidRod {
                field: "length",
                value: spec.length.to_string(),
                reason: "the rod length must be finite and > 0 (m)",
            });
        }
        let d = spec.direction / norm;
        let rotation = rotation_from_z::<T, G>(&d);
        let n = spec.elements;
        let l = spec.length / c::<T>(n as f64);
        let element = RodElement::<T, N>::new(l, material, spec.integration)?;
        let share = element.lumped_nodal_inertia(material);
        // A count whose storage cannot be allocated is an error, not a panic.
        let too_large = || {
            FemRodError::Banded(BandedError::TooLarge {
                blocks: n,
                bandwidth: N - 1,
            })
        };
        let node_count = n
            .checked_mul(N - 1)
            .and_then(|k| k.checked_add(1))
            .ok_or_else(too_large)?;
        let mut mass = Vec::new();
        let mut inertia = Vec::new();
        mass.try_reserve_exact(node_count)
            .map_err(|_| too_large())?;
        inertia
            .try_reserve_exact(node_count)
            .map_err(|_| too_large())?;
        mass.resize(node_count, T::zero());
        inertia.resize(node_count, Vector3::zeros());
        for e in 0..n {
            for (j, s) in share.iter().enumerate() {
                mass[e * (N - 1) + j] += s.mass;
                inertia[e * (N - 1) + j] += s.inertia;
            }
        }
        let step = spec.length / c::<T>((node_count - 1) as f64);
        // The rod (damping, band storage) and every node body are made and checked
        // before the first body is added: the world adds body k as BodyId(first + k).
        let first = world.bodies().len();
        let ids: Vec<BodyId> = (first..first + node_count).map(BodyId).collect();
        let name = format!("rod {}", world.system_count());
        let rod = Self::new(name, ids.clone(), vec![element; n], spec.damping)?.with_solve(solve);
        let mut nodes = Vec::new();
        nodes
            .try_reserve_exact(node_count)
            .map_err(|_| too_large())?;
        for k in 0..node_count {
            let position = spec.start + d * (step * c::<T>(k as f64));
            let clamped = match spec.clamp {
                RodClamp::Free => false,
                RodClamp::Start => k == 0,
                RodClamp::End => k + 1 == node_count,
                RodClamp::Both => k == 0 || k + 1 == node_count,
            };
            nodes.push(if clamped {
                Body::fixed(position, rotation)?
            } else {
                Body::dynamic(mass[k], inertia[k], position, rotation)?
            });
        }
        for body in nodes {
            world.add_body(body)?;
        }
        let system = world.add_system(rod)?;
        Ok(FemRodIds { system, nodes: ids })
    }

    /// The same rod projected by `solve` (the default is [`RodSolve::Banded`]).
    pub fn with_solve(mut self, solve: RodSolve) -> Self {
        self.solve = solve;
        self
    }

    /// How the rod's constraints are projected.
    pub fn solve(&self) -> RodSolve {
        self.solve
    }

    /// The node bodies, in order along the rod.
    pub fn nodes(&self) -> &[BodyId] {
        &self.nodes
    }

    /// The elements, in order along the rod.
    pub fn elements(&self) -> &[RodElement<T, N>] {
        &self.elements
    }

    /// Gauss points per element q (block bandwidth 2q − 1).
    pub fn gauss_points_per_element(&self) -> usize {
        self.q
    }

    /// How many projections or damping solves were skipped because the state was not
    /// finite or the banded matrix could not be factored.
    pub fn failed_solves(&self) -> u64 {
        self.failed_solves
    }

    /// The nodal 𝓜⁻¹ at the bodies' state.
    fn load_inv_mass(&mut self, bodies: &[Body<T, G>]) {
        for (k, id) in self.nodes.iter().enumerate() {
            let b = &bodies[id.0];
            let (m, i) = (b.inv_mass(), b.inv_inertia());
            self.inv_mass[k] = Vector6::new(m, m, m, i.x, i.y, i.z);
        }
    }

    /// Evaluates the Gauss-point constraints of element `e` at the bodies' state.
    #[inline(never)]
    fn evaluate_element(&mut self, bodies: &[Body<T, G>], e: usize) -> Result<(), RodError> {
        self.kinematics(bodies, e)?;
        let (element, kin, q) = (&self.elements[e], &self.kinematics, self.q);
        for (r, point) in self.points[e * q..(e + 1) * q].iter_mut().enumerate() {
            element.gauss_point_constraint_into(kin, r, point)?;
        }
        Ok(())
    }

    /// The kinematics of element `e` at the bodies' state into the rod's scratch
    /// `self.kinematics`.
    #[inline(always)]
    fn kinematics(&mut self, bodies: &[Body<T, G>], e: usize) -> Result<(), RodError> {
        let nodes = &self.nodes[e * (N - 1)..e * (N - 1) + N];
        self.kinematics.set_nodes(&self.elements[e], |j| {
            let b = &bodies[nodes[j].0];
            (&b.position, &b.orientation)
        })
    }

    /// Evaluates every Gauss-point constraint and the nodal 𝓜⁻¹ at the bodies' state.
    fn evaluate(&mut self, bodies: &[Body<T, G>]) -> Result<(), RodError> {
        self.load_inv_mass(bodies);
        for e in 0..self.elements.len() {
            self.evaluate_element(bodies, e)?;
        }
        Ok(())
    }

    /// Assembles A = ∇C 𝓜⁻¹ ∇Cᵀ + diag(α)·`scale` from the cached points into the band
    /// (lower blocks only), skipping the nodes with 𝓜⁻¹ = 0 (fixed). Every block of
    /// every row's profile (row e·q + r: columns (e − 1)·q … e·q + r) is written once,
    /// so the band needs no zeroing first.
    fn assemble(&mut self, scale: T) {
        self.matrix.begin_overwrite();
        for e in 0..self.elements.len() {
            self.assemble_element(e, scale);
        }
    }

    /// The block rows e·q … e·q + q − 1 of A (element `e`, [`Self::assemble`]) from
    /// the cached points.
    #[inline(always)]
    fn assemble_element(&mut self, e: usize, scale: T) {
        let q = self.q;
        let Self {
            matrix,
            points,
            inv_mass,
            ..
        } = self;
        let prev = if e > 0 {
            &points[(e - 1) * q..e * q]
        } else {
            &[]
        };
        Self::assemble_rows(
            matrix,
            inv_mass,
            &points[e * q..(e + 1) * q],
            prev,
            e,
            scale,
        );
    }

    /// The block rows e·q … e·q + q − 1 of A (element `e`, [`Self::assemble`]): they
    /// need the points `cur` of element e and `prev` of element e − 1 (empty for
    /// e = 0). Diagonal blocks get their lower triangle only (the Cholesky reads no
    /// more). On the AVX2 + FMA path when the CPU has it ([`crate::linalg::simd`]).
    #[inline(always)]
    fn assemble_rows(
        matrix: &mut BlockBandedMatrix<T>,
        inv_mass: &[Vector6<T>],
        cur: &[GaussPointConstraint<T, N>],
        prev: &[GaussPointConstraint<T, N>],
        e: usize,
        scale: T,
    ) {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if crate::linalg::simd::fma_enabled() {
            // SAFETY: the CPU supports AVX2 and FMA (detected at run time).
            return unsafe { Self::assemble_rows_fma(matrix, inv_mass, cur, prev, e, scale) };
        }
        Self::assemble_rows_with::<false>(matrix, inv_mass, cur, prev, e, scale);
    }

    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    #[target_feature(enable = "avx2,fma")]
    fn assemble_rows_fma(
        matrix: &mut BlockBandedMatrix<T>,
        inv_mass: &[Vector6<T>],
        cur: &[GaussPointConstraint<T, N>],
        prev: &[GaussPointConstraint<T, N>],
        e: usize,
        scale: T,
    ) {
        Self::assemble_rows_with::<true>(matrix, inv_mass, cur, prev, e, scale);
    }

    /// [`Self::assemble_rows`] with fused multiply-adds iff `F`.
    #[inline(always)]
    fn assemble_rows_with<const F: bool>(
        matrix: &mut BlockBandedMatrix<T>,
        inv_mass: &[Vector6<T>],
        cur: &[GaussPointConstraint<T, N>],
        prev: &[GaussPointConstraint<T, N>],
        e: usize,
        scale: T,
    ) {
        let q = cur.len();
        let first = e * (N - 1);
        let w: [[T; 6]; N] = std::array::from_fn(|j| inv_mass[first + j].into());
        let active: [bool; N] = std::array::from_fn(|j| w[j].iter().any(|x| *x != T::zero()));
        for (r, point) in cur.iter().enumerate() {
            let g = e * q + r;
            // ∇C_gk 𝓜ₖ⁻¹ for the element's nodes k.
            // (Written in place: `array::from_fn` of blocks goes through memcpy.)
            let mut y = [crate::linalg::banded::Stored::<T>::ZERO; N];
            for (yj, (grad, wj)) in y.iter_mut().zip(point.gradient.iter().zip(&w)) {
                kernels::scale_columns_into(yj, &grad.data.0, wj);
            }
            let y_refs: [&crate::linalg::banded::Stored<T>; N] = std::array::from_fn(|j| &y[j]);
            for (r2, point2) in cur[..=r].iter().enumerate() {
                let out = matrix.lower_block_cols_mut(g, e * q + r2);
                let g2s: [&kernels::Block6<T>; N] =
                    std::array::from_fn(|j| &point2.gradient[j].data.0);
                if r2 == r {
                    kernels::sum_mul_transpose_lower::<T, F, N>(out, &y_refs, &g2s, &active);
                    for i in 0..6 {
                        out.col_mut(i)[i] += point.compliance[i] * scale;
                    }
                } else {
                    kernels::sum_mul_transpose::<T, F, N>(out, &y_refs, &g2s, &active);
                }
            }
            // The shared node: local 0 of e, local N − 1 of e − 1.
            for (r2, point2) in prev.iter().enumerate() {
                let out = matrix.lower_block_cols_mut(g, (e - 1) * q + r2);
                kernels::sum_mul_transpose::<T, F, 1>(
                    out,
                    &[&y[0]],
                    &[&point2.gradient[N - 1].data.0],
                    &[active[0]],
                );
            }
        }
    }
}

/// The smallest rotation taking world z to the unit vector `d` (a half turn about x
/// when d = −z).
pub(crate) fn rotation_from_z<T: Real, G: LieGroup<T>>(d: &Vector3<T>) -> G {
    let z = Vector3::z();
    let axis = z.cross(d);
    let s = axis.norm();
    let cos = z.dot(d);
    if s <= T::default_epsilon() {
        if cos > T::zero() {
            G::identity()
        } else {
            G::exp(&(Vector3::x() * T::pi()))
        }
    } else {
        G::exp(&(axis * (s.atan2(cos) / s)))
    }
}
