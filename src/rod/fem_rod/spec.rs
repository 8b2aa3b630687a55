//! The descriptions and errors of [`FemRod`](super::FemRod): what can go wrong, clamped
//! ends, the solve, a straight rod's geometry, and the ids of an added rod.

#[cfg(doc)]
use super::FemRod;
use crate::lie::Real;
use crate::linalg::banded::BandedError;
use crate::rod::error::RodError;
use crate::rod::gauss::Integration;
use crate::xpbd::{BodyId, SystemId, XpbdError};
use nalgebra::Vector3;
use thiserror::Error;

/// What can go wrong building a [`FemRod`] or adding it to a world.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum FemRodError {
    /// A rod material, element or evaluation error.
    #[error(transparent)]
    Rod(#[from] RodError),
    /// The world rejected a node body or the rod system.
    #[error(transparent)]
    World(#[from] XpbdError),
    /// The banded λ-system could not be set up.
    #[error(transparent)]
    Banded(#[from] BandedError),
    /// A rod description that is not valid.
    #[error("invalid rod {field} = {value}: {reason}")]
    InvalidRod {
        /// Which field (`"elements"`, `"nodes"`, `"direction"`, `"length"`, `"start"`,
        /// `"damping"`, `"gauss points"`).
        field: &'static str,
        /// The value given, printed.
        value: String,
        /// What is allowed.
        reason: &'static str,
    },
}

/// Which ends of a straight rod are clamped (fixed bodies, see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RodClamp {
    /// Both ends free.
    #[default]
    Free,
    /// The start node (s = 0) is fixed: a cantilever.
    Start,
    /// The end node (s = L) is fixed.
    End,
    /// Both end nodes are fixed.
    Both,
}

/// How a [`FemRod`] projects its elastic Gauss-point constraints (108) in each solver
/// iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RodSolve {
    /// All Gauss points of the rod at once: one block-banded λ-system (Section 8.2,
    /// Algorithm 1 line 5), a Newton step of the whole rod per iteration.
    #[default]
    Banded,
    /// One Gauss point at a time, in order along the rod (Gauss–Seidel over the
    /// points): each point re-evaluates its constraint at the current poses, solves its
    /// own 6×6 system `A_g Δλ_g = −C_g − α̃_g λ_g` with A_g = Σₖ ∇C_gk 𝓜ₖ⁻¹ ∇C_gkᵀ + α̃_g
    /// (Cholesky), and moves the element's nodes before the next point. This is the
    /// comparison of Figure 11: it needs many iterations to reach the stiffness that
    /// one banded solve has.
    GaussPoint,
}

/// A straight, unstressed rod for [`FemRod::add_straight`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StraightRod<T: Real> {
    /// Position of the first node (s = 0), m, world frame.
    pub start: Vector3<T>,
    /// Direction of the centre line, world frame (any non-zero length; normalised).
    /// The nodes' director d₃ is this direction; d₁, d₂ are the images of the world x
    /// and y axes under the smallest rotation taking world z to it.
    pub direction: Vector3<T>,
    /// Rest length L, m (> 0).
    pub length: T,
    /// Number of elements n (≥ 1), each of rest length L/n.
    pub elements: usize,
    /// Gauss points per element (Section 6.3.5).
    pub integration: Integration,
    /// Clamped ends.
    pub clamp: RodClamp,
    /// Rayleigh damping b of every row, s (≥ 0; 0 = undamped).
    pub damping: T,
}

impl<T: Real> StraightRod<T> {
    /// A rod of `length` (m) from the origin along world x, with `elements` elements,
    /// reduced integration, clamped at the start, undamped.
    pub fn cantilever(length: T, elements: usize) -> Self {
        Self {
            start: Vector3::zeros(),
            direction: Vector3::x(),
            length,
            elements,
            integration: Integration::Reduced,
            clamp: RodClamp::Start,
            damping: T::zero(),
        }
    }
}

/// What [`FemRod::add_straight`] added to the world.
#[derive(Debug, Clone, PartialEq)]
pub struct FemRodIds {
    /// The rod's system.
    pub system: SystemId,
    /// The node bodies, in order along the rod (first = s = 0, last = s = L).
    pub nodes: Vec<BodyId>,
}
