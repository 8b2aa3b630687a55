//! The rest strains v*, u* of an element taken from a rest configuration
//! ([`RodElement::with_rest_strains`]).

use super::RodElement;
use crate::lie::{LieGroup, Pose, Real};
use crate::rod::error::RodError;
use nalgebra::Vector3;

impl<T: Real, const N: usize> RodElement<T, N> {
    /// The same element with both rest strains at each Gauss point set to those of the
    /// configuration `rest` (nodal poses): u*(ξ̃ₖ) = u(ξ̃ₖ) (103) as
    /// [`Self::with_rest_curvature`], and the shear/stretch rest value
    /// v*(ξ̃ₖ) = v(ξ̃ₖ) (101) in place of e₃, so that all six rows of C vanish there.
    /// For a curved rest shape (a helix) the interpolated tangent between nodes is not
    /// exactly unit and along d₃; this makes the discrete shape itself stress-free. The
    /// constraint becomes C = (v − v*, u − u*), with the same gradient.
    ///
    /// # Errors
    /// As [`super::ElementKinematics::new`] for `rest`.
    pub fn with_rest_strains<G: LieGroup<T>>(
        mut self,
        rest: &[Pose<T, G>; N],
    ) -> Result<Self, RodError> {
        let kin = self.kinematics(rest)?;
        for k in 0..self.rule.len() {
            let s = kin.strains(self.rule.points()[k])?;
            self.precurvature[k] = s.curvature;
            self.rest_shear[k] = s.shear;
        }
        Ok(self)
    }

    /// The rest value v*(ξ̃ₖ) of the shear/stretch strain at Gauss point k
    /// (dimensionless, director frame; e₃ unless set by [`Self::with_rest_strains`]).
    ///
    /// # Errors
    /// [`RodError::GaussPointIndex`] if k is past the rule.
    pub fn rest_shear(&self, k: usize) -> Result<Vector3<T>, RodError> {
        self.check_index(k)?;
        Ok(self.rest_shear[k])
    }
}
