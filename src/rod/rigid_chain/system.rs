//! [`RigidChainRod`]: a whole rigid-chain rod's joint constraints (89)–(94) solved as one
//! block-banded λ-system per iteration (Section 8.2, Algorithm 1 line 5), like
//! [`crate::rod::FemRod`], instead of one joint at a time by Gauss–Seidel.
//!
//! Joint j joins bodies j and j + 1, so joints j − 1 and j share body j and nothing
//! else: the matrix A = ∇C 𝓜⁻¹ ∇Cᵀ + α̃ is block tridiagonal (6×6 blocks, block
//! bandwidth 1),
//!
//! ```text
//! A_jj = Σ_{b ∈ {j, j+1}} ∇C_jb 𝓜_b⁻¹ ∇C_jbᵀ + α̃_j,     A_j,j−1 = ∇C_j,j 𝓜_j⁻¹ ∇C_j−1,jᵀ,
//! ```
//!
//! solved by the block Cholesky factorisation of [`crate::linalg::banded`] in O(N) per
//! iteration; then λ ← λ + Δλ and every body moves by 𝓜⁻¹∇CᵀΔλ (55)–(58). One
//! projection is one Newton step of the whole chain, so the chain keeps its stiffness
//! with a single iteration per substep (Gauss–Seidel sweeps propagate a correction one
//! joint per sweep). With a Rayleigh damping b > 0 the same system solves the
//! velocity-level pass (Section 4.4) with α̃ replaced by α/(h b).

use super::builder::RigidChainBuilder;
use super::RigidChainConstraint;
use crate::lie::real::c;
use crate::lie::{LieGroup, Real};
use crate::linalg::banded::{BandScalar, BandedError, BlockBandedMatrix};
use crate::rod::error::RodError;
use crate::xpbd::{
    apply_body_correction, Body, BodyId, Constraint, ConstraintEval, RowBlockEval, RowBlockInfo,
    System, SystemId, World, XpbdError,
};
use nalgebra::{Matrix6, SMatrix, SVector, Vector3, Vector6};
use std::marker::PhantomData;

/// [`RowBlockInfo::kind`] of a [`RigidChainRod`] joint.
pub const ROD_JOINT_KIND: &str = "rod joint";

/// A rigid-chain rod's joints as one [`System`] (module docs). Build it with
/// [`RigidChainBuilder::build_system`].
#[derive(Debug, Clone)]
pub struct RigidChainRod<T: BandScalar, G: LieGroup<T>> {
    name: String,
    bodies: Vec<BodyId>,
    joints: Vec<RigidChainConstraint<T>>,
    compliance: Vec<Vector6<T>>,
    damping: T,
    lambda: Vec<T>,
    rhs: Vec<T>,
    matrix: BlockBandedMatrix<T>,
    evals: Vec<ConstraintEval<T>>,
    inv_mass: Vec<Vector6<T>>,
    correction: Vec<Vector6<T>>,
    failed_solves: u64,
    _group: PhantomData<fn() -> G>,
}

/// What [`RigidChainBuilder::build_system`] added to the world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RigidChainRodIds {
    /// The chain's system.
    pub system: SystemId,
    /// The N bodies, base (s = 0) first.
    pub bodies: Vec<BodyId>,
}

fn block6<T: Real>(m: &SMatrix<T, 6, 6>) -> Matrix6<T> {
    *m
}

impl<T: BandScalar, G: LieGroup<T>> RigidChainBuilder<T, G> {
    /// Adds the rod to `world` as N bodies (as [`Self::build`]) and one
    /// [`RigidChainRod`] system holding its N − 1 joint constraints (module docs), named
    /// `name`. The damping of every row must be the same (the banded velocity pass
    /// uses one b).
    ///
    /// # Errors
    /// As [`Self::build`]; [`RodError::InvalidDamping`] (the first row whose damping
    /// differs from row 0's) for rows with different dampings;
    /// [`RodError::World`] with [`XpbdError::BadDimension`] if the band does not fit in
    /// memory.
    pub fn build_system(
        &self,
        world: &mut World<T, G>,
        name: impl Into<String>,
    ) -> Result<RigidChainRodIds, RodError> {
        let first = world.bodies().len();
        let joints = self.constraints(first)?;
        let b = Constraint::<T, G>::damping(&joints[0], 0);
        for row in 1..6 {
            let d = Constraint::<T, G>::damping(&joints[0], row);
            if d != b {
                return Err(RodError::InvalidDamping {
                    row,
                    value: d.to_f64(),
                });
            }
        }
        // Validates and adds the bodies (and checks the world would accept the joints).
        let n = self.poses().len();
        let mut probe = World::<T, G>::new(*world.options())?;
        let chain = self.build_joints(&mut probe)?;
        let mut bodies = Vec::with_capacity(n);
        for id in &chain.bodies {
            bodies.push(world.add_body(probe.bodies()[id.0])?);
        }
        let blocks = joints.len();
        let matrix = BlockBandedMatrix::new(blocks, 1).map_err(|_| {
            RodError::World(XpbdError::BadDimension {
                constraint: "rigid chain band".into(),
                dim: 6 * blocks,
                max: usize::MAX,
            })
        })?;
        let compliance = joints
            .iter()
            .map(|k| Vector6::from_fn(|r, _| Constraint::<T, G>::compliance(k, r)))
            .collect();
        let rod = RigidChainRod {
            name: name.into(),
            bodies: bodies.clone(),
            joints,
            compliance,
            damping: b,
            lambda: vec![T::zero(); 6 * blocks],
            rhs: vec![T::zero(); 6 * blocks],
            matrix,
            evals: vec![ConstraintEval::default(); blocks],
            inv_mass: vec![Vector6::zeros(); n],
            correction: vec![Vector6::zeros(); n],
            failed_solves: 0,
            _group: PhantomData,
        };
        let system = world.add_system(rod)?;
        Ok(RigidChainRodIds { system, bodies })
    }
}

impl<T: BandScalar, G: LieGroup<T>> RigidChainRod<T, G> {
    /// The joint constraints, base first (joint j joins bodies j and j + 1).
    pub fn joints(&self) -> &[RigidChainConstraint<T>] {
        &self.joints
    }

    /// How many projections or damping solves were skipped because the state was not
    /// finite or the matrix could not be factored.
    pub fn failed_solves(&self) -> u64 {
        self.failed_solves
    }

    fn evaluate(&mut self, bodies: &[Body<T, G>]) -> bool {
        for (k, id) in self.bodies.iter().enumerate() {
            let b = &bodies[id.0];
            let (m, i) = (b.inv_mass(), b.inv_inertia());
            self.inv_mass[k] = Vector6::new(m, m, m, i.x, i.y, i.z);
        }
        for (j, joint) in self.joints.iter().enumerate() {
            Constraint::<T, G>::evaluate(joint, bodies, &mut self.evals[j]);
            if !self.evals[j].value.iter().all(|x| x.is_finite()) {
                return false;
            }
        }
        true
    }

    /// A = ∇C 𝓜⁻¹ ∇Cᵀ + diag(α)·`scale`, factored.
    fn assemble_and_factor(&mut self, scale: T) -> Result<(), BandedError> {
        self.matrix.reset();
        for j in 0..self.joints.len() {
            let weighted = |slot: usize, body: usize| {
                let mut m = block6(&self.evals[j].gradient[slot]);
                for (col, &wc) in self.inv_mass[body].iter().enumerate() {
                    m.column_mut(col).scale_mut(wc);
                }
                m
            };
            let (ga, gb) = (weighted(0, j), weighted(1, j + 1));
            let mut diag = ga * self.evals[j].gradient[0].transpose();
            diag.gemm(
                T::one(),
                &gb,
                &self.evals[j].gradient[1].transpose(),
                T::one(),
            );
            for i in 0..6 {
                diag[(i, i)] += self.compliance[j][i] * scale;
            }
            self.matrix.add_block(j, j, &diag)?;
            if j > 0 {
                let off = ga * self.evals[j - 1].gradient[1].transpose();
                self.matrix.add_block(j, j - 1, &off)?;
            }
        }
        self.matrix.factor()
    }

    /// Per body 𝓜⁻¹ Σ_j ∇C_jᵀ Δ_j from the solution in `rhs`.
    fn body_corrections(&mut self) {
        for c in &mut self.correction {
            *c = Vector6::zeros();
        }
        for (j, e) in self.evals.iter().enumerate() {
            let d = Vector6::from_column_slice(&self.rhs[6 * j..6 * j + 6]);
            self.correction[j].gemv_tr(T::one(), &e.gradient[0], &d, T::one());
            self.correction[j + 1].gemv_tr(T::one(), &e.gradient[1], &d, T::one());
        }
        for (c, w) in self.correction.iter_mut().zip(&self.inv_mass) {
            *c = c.component_mul(w);
        }
    }
}

impl<T: BandScalar, G: LieGroup<T>> System<T, G> for RigidChainRod<T, G> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn bodies(&self) -> &[BodyId] {
        &self.bodies
    }

    fn row_count(&self) -> usize {
        self.lambda.len()
    }

    fn lambda(&self) -> &[T] {
        &self.lambda
    }

    fn reset_lambda(&mut self) {
        self.lambda.fill(T::zero());
    }

    fn project(&mut self, bodies: &mut [Body<T, G>], inv_h2: T) {
        if !self.evaluate(bodies) || self.assemble_and_factor(inv_h2).is_err() {
            self.failed_solves += 1;
            return;
        }
        for (j, e) in self.evals.iter().enumerate() {
            for i in 0..6 {
                let alpha = self.compliance[j][i] * inv_h2;
                self.rhs[6 * j + i] = -e.value[i] - alpha * self.lambda[6 * j + i];
            }
        }
        if self.matrix.solve_in_place(&mut self.rhs).is_err() {
            self.failed_solves += 1;
            return;
        }
        for (l, d) in self.lambda.iter_mut().zip(&self.rhs) {
            *l += *d;
        }
        self.body_corrections();
        for (id, dx) in self.bodies.iter().zip(&self.correction) {
            apply_body_correction(
                &mut bodies[id.0],
                &Vector3::new(dx[0], dx[1], dx[2]),
                &Vector3::new(dx[3], dx[4], dx[5]),
            );
        }
    }

    fn solve_velocities(&mut self, bodies: &mut [Body<T, G>], h: T) {
        if self.damping <= T::zero() {
            return;
        }
        let scale = T::one() / (h * self.damping);
        if !self.evaluate(bodies) || self.assemble_and_factor(scale).is_err() {
            self.failed_solves += 1;
            return;
        }
        for (j, e) in self.evals.iter().enumerate() {
            let mut cdot = Vector6::zeros();
            for (slot, body) in [j, j + 1].into_iter().enumerate() {
                let b = &bodies[self.bodies[body].0];
                let (v, w) = (b.velocity, b.angular_velocity);
                cdot += e.gradient[slot] * Vector6::new(v.x, v.y, v.z, w.x, w.y, w.z);
            }
            for i in 0..6 {
                self.rhs[6 * j + i] = -cdot[i];
            }
        }
        if self.matrix.solve_in_place(&mut self.rhs).is_err() {
            self.failed_solves += 1;
            return;
        }
        self.body_corrections();
        for (id, dv) in self.bodies.iter().zip(&self.correction) {
            let b = &mut bodies[id.0];
            if !b.is_fixed() {
                b.velocity += Vector3::new(dv[0], dv[1], dv[2]);
                b.angular_velocity += Vector3::new(dv[3], dv[4], dv[5]);
            }
        }
    }

    /// Σ over the joints of ½Cᵀα⁻¹C, the chain's terms (91)–(92).
    fn potential_energy(&self, bodies: &[Body<T, G>]) -> T {
        self.joints.iter().fold(T::zero(), |acc, joint| {
            acc + Constraint::<T, G>::potential_energy(joint, bodies)
        })
    }

    /// One block per joint: N − 1 blocks, block j the joint between bodies j and
    /// j + 1, i.e. rows 6j … 6j + 5 of the system (and of [`System::lambda`]).
    fn row_block_count(&self) -> usize {
        self.joints.len()
    }

    /// Joint j: `"<rod>: joint j"`, kind `"rod joint"`, 6 rows (93) (rows 0–2 v − v*,
    /// dimensionless; 3–5 u − u*, rad/m) over bodies j and j + 1.
    fn row_block(&self, k: usize) -> Option<RowBlockInfo> {
        if k >= self.joints.len() {
            return None;
        }
        RowBlockInfo::new(
            format!("{}: joint {k}", self.name),
            ROD_JOINT_KIND,
            6,
            &self.bodies[k..k + 2],
        )
        .ok()
    }

    /// C (93) and the blocks (175)–(179) of joint k, by the joint's
    /// [`Constraint::evaluate`], the evaluation the projection uses. NaN values and
    /// zero gradients if a body is not in `bodies`.
    ///
    /// # Errors
    /// [`XpbdError::UnknownRowBlock`] unless k < N − 1.
    fn evaluate_row_block(
        &self,
        k: usize,
        bodies: &[Body<T, G>],
        out: &mut RowBlockEval<T>,
    ) -> Result<(), XpbdError> {
        let Some(joint) = self.joints.get(k) else {
            return Err(XpbdError::UnknownRowBlock {
                system: self.name.clone(),
                index: k,
                count: self.joints.len(),
            });
        };
        let mut eval = ConstraintEval::default();
        Constraint::<T, G>::evaluate(joint, bodies, &mut eval);
        out.value = eval.value;
        for (o, g) in out.gradient.iter_mut().zip(&eval.gradient) {
            o.copy_from(g);
        }
        for o in out.gradient.iter_mut().skip(eval.gradient.len()) {
            o.fill(T::zero());
        }
        Ok(())
    }

    fn residuals(&self, bodies: &[Body<T, G>], inv_h2: T, primal: &mut [SVector<T, 6>]) -> T {
        let mut csq = T::zero();
        let mut eval = ConstraintEval::default();
        for (j, joint) in self.joints.iter().enumerate() {
            Constraint::<T, G>::evaluate(joint, bodies, &mut eval);
            let lambda = Vector6::from_column_slice(&self.lambda[6 * j..6 * j + 6]);
            for i in 0..6 {
                let r = eval.value[i] + self.compliance[j][i] * inv_h2 * lambda[i];
                csq += r * r;
            }
            for (slot, body) in [j, j + 1].into_iter().enumerate() {
                let b = self.bodies[body].0;
                if !bodies[b].is_fixed() {
                    primal[b] -= eval.gradient[slot].tr_mul(&lambda);
                }
            }
        }
        if csq.is_finite() {
            csq
        } else {
            c::<T>(f64::NAN)
        }
    }
}
