//! [`RodMaterial`]: an isotropic linear-elastic rod with a solid circular cross-section,
//! its stiffness matrices (87)–(88), the Gauss-point compliances (109) and the lumped
//! nodal inertias of Section 6.3.6.
//!
//! ```text
//! G   = E / (2(1 + ν))                      shear modulus (Pa)
//! A   = π r²,  I₁ = I₂ = π r⁴/4,  J = I₁ + I₂ = π r⁴/2      (m², m⁴)
//! κ   = 6(1 + ν)/(7 + 6ν)                   shear correction, circular section (126)
//! Kᵛ  = diag(κGA, κGA, EA)                  (87), N
//! Kᵘ  = diag(EI₁, EI₂, GJ)                  (88), N·m²
//! αₖ  = (l wₖ diag(Kᵛ, Kᵘ))⁻¹               (109)
//! ```
//!
//! The shear rows of (87) use the shear-corrected area A* = κA of (125)–(126) (Timoshenko
//! beam); `with_shear_correction(1)` gives the uncorrected (87) as printed.

use super::basis::LagrangeBasis;
use super::error::RodError;
use crate::lie::real::c;
use crate::lie::Real;
use nalgebra::{Matrix3, Vector3, Vector6};

/// The shear correction factor of a solid circular section, κ = 6(1 + ν)/(7 + 6ν)
/// (126) (dimensionless; 0.857 at ν = 0, 0.886 at ν = 0.3, 0.9 at ν = 0.5).
#[inline]
pub fn circular_shear_correction<T: Real>(poisson_ratio: T) -> T {
    c::<T>(6.0) * (T::one() + poisson_ratio) / (c::<T>(7.0) + c::<T>(6.0) * poisson_ratio)
}

/// The lumped inertia of one element node (Section 6.3.6): translational mass (kg) and
/// principal rotational inertia about the node's body axes d₁, d₂, d₃ (kg·m²).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodalInertia<T: Real> {
    /// Mass, kg.
    pub mass: T,
    /// Principal moments about the body axes (d₁, d₂, d₃ = tangent), kg·m².
    pub inertia: Vector3<T>,
}

/// An isotropic linear-elastic rod material with a solid circular cross-section of
/// radius r: Young's modulus E (Pa), Poisson ratio ν, density ρ (kg/m³), and the shear
/// correction κ applied to the shear stiffness (default (126)).
///
/// ```
/// use lie_xpbd::rod::RodMaterial;
/// // The cantilever of Section 9.2: E = 5 MPa, diameter 0.1 m, ρ = 1000 kg/m³.
/// let m = RodMaterial::<f64>::circular(5e6, 0.5, 1000.0, 0.05)?;
/// let ku = m.bending_stiffness();
/// assert!((ku[(0, 0)] - 5e6 * std::f64::consts::PI * 0.05f64.powi(4) / 4.0).abs() < 1e-9);
/// // Compliance of the single Gauss point of a 0.1 m linear element (109).
/// let alpha = m.gauss_point_compliance(0.1, 1.0)?;
/// assert!((alpha[2] - 1.0 / (0.1 * 5e6 * m.area())).abs() < 1e-18);
/// # Ok::<(), lie_xpbd::rod::RodError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RodMaterial<T: Real> {
    youngs_modulus: T,
    poisson_ratio: T,
    density: T,
    radius: T,
    shear_correction: T,
}

fn positive<T: Real>(parameter: &'static str, value: T) -> Result<(), RodError> {
    if value.is_finite() && value > T::zero() {
        Ok(())
    } else {
        Err(RodError::InvalidMaterial {
            parameter,
            value: value.to_f64(),
            reason: "must be finite and > 0",
        })
    }
}

impl<T: Real> RodMaterial<T> {
    /// A solid circular rod of radius `radius` (m) with Young's modulus
    /// `youngs_modulus` (Pa), Poisson ratio `poisson_ratio` and density `density`
    /// (kg/m³); the shear correction is κ of (126).
    ///
    /// # Errors
    /// [`RodError::InvalidMaterial`] naming the parameter unless E, ρ and r are finite
    /// and > 0 and ν is in (−1, 0.5] (the range of an isotropic elastic solid).
    pub fn circular(
        youngs_modulus: T,
        poisson_ratio: T,
        density: T,
        radius: T,
    ) -> Result<Self, RodError> {
        positive("youngs_modulus", youngs_modulus)?;
        positive("density", density)?;
        positive("radius", radius)?;
        if !(poisson_ratio.is_finite() && poisson_ratio > -T::one() && poisson_ratio <= c::<T>(0.5))
        {
            return Err(RodError::InvalidMaterial {
                parameter: "poisson_ratio",
                value: poisson_ratio.to_f64(),
                reason: "must be in (-1, 0.5]",
            });
        }
        Ok(Self {
            youngs_modulus,
            poisson_ratio,
            density,
            radius,
            shear_correction: circular_shear_correction(poisson_ratio),
        })
    }

    /// The same material with shear correction factor κ (dimensionless) on the shear
    /// rows of (87); κ = 1 switches the correction off.
    ///
    /// # Errors
    /// [`RodError::InvalidMaterial`] for `"shear_correction"` unless κ is finite and > 0.
    pub fn with_shear_correction(mut self, kappa: T) -> Result<Self, RodError> {
        positive("shear_correction", kappa)?;
        self.shear_correction = kappa;
        Ok(self)
    }

    /// Young's modulus E, Pa.
    #[inline]
    pub fn youngs_modulus(&self) -> T {
        self.youngs_modulus
    }

    /// Poisson ratio ν (dimensionless).
    #[inline]
    pub fn poisson_ratio(&self) -> T {
        self.poisson_ratio
    }

    /// Density ρ, kg/m³.
    #[inline]
    pub fn density(&self) -> T {
        self.density
    }

    /// Section radius r, m.
    #[inline]
    pub fn radius(&self) -> T {
        self.radius
    }

    /// Shear correction factor κ on the shear stiffness (dimensionless).
    #[inline]
    pub fn shear_correction(&self) -> T {
        self.shear_correction
    }

    /// Shear modulus G = E/(2(1 + ν)), Pa.
    #[inline]
    pub fn shear_modulus(&self) -> T {
        self.youngs_modulus / (c::<T>(2.0) * (T::one() + self.poisson_ratio))
    }

    /// Cross-section area A = π r², m².
    #[inline]
    pub fn area(&self) -> T {
        T::pi() * self.radius * self.radius
    }

    /// Second moment of area about either principal axis, I₁ = I₂ = π r⁴/4, m⁴.
    #[inline]
    pub fn second_moment_of_area(&self) -> T {
        let r2 = self.radius * self.radius;
        T::pi() * r2 * r2 * c::<T>(0.25)
    }

    /// Polar second moment of area J = I₁ + I₂ = π r⁴/2, m⁴ (Section 6.1).
    #[inline]
    pub fn polar_moment_of_area(&self) -> T {
        c::<T>(2.0) * self.second_moment_of_area()
    }

    /// Kᵛ (87) with the shear rows on κA: diag(κGA, κGA, EA), N. Rows: shear along
    /// d₁, d₂, stretch along d₃ (body frame).
    pub fn shear_stiffness(&self) -> Matrix3<T> {
        let ga = self.shear_correction * self.shear_modulus() * self.area();
        Matrix3::from_diagonal(&Vector3::new(ga, ga, self.youngs_modulus * self.area()))
    }

    /// Kᵘ (88): diag(EI₁, EI₂, GJ), N·m². Rows: bending about d₁, d₂, twist about d₃
    /// (body frame).
    pub fn bending_stiffness(&self) -> Matrix3<T> {
        let ei = self.youngs_modulus * self.second_moment_of_area();
        Matrix3::from_diagonal(&Vector3::new(
            ei,
            ei,
            self.shear_modulus() * self.polar_moment_of_area(),
        ))
    }

    /// The diagonal of diag(Kᵛ, Kᵘ): N for rows 0–2, N·m² for rows 3–5.
    pub fn stiffness_diagonal(&self) -> Vector6<T> {
        let kv = self.shear_stiffness();
        let ku = self.bending_stiffness();
        Vector6::new(
            kv[(0, 0)],
            kv[(1, 1)],
            kv[(2, 2)],
            ku[(0, 0)],
            ku[(1, 1)],
            ku[(2, 2)],
        )
    }

    /// The compliance of one Gauss-point constraint (109),
    /// α = (l w diag(Kᵛ, Kᵘ))⁻¹, as the diagonal of the 6×6 matrix: 1/(N·m) for the
    /// shear rows 0–2 (C dimensionless), 1/(N·m³) for the curvature rows 3–5 (C in
    /// 1/m). `length` is the element rest length l (m), `weight` the Gauss weight w
    /// on [0, 1] (dimensionless).
    ///
    /// # Errors
    /// [`RodError::InvalidLength`] unless l is finite and > 0;
    /// [`RodError::InvalidGaussWeight`] unless w is finite and > 0.
    pub fn gauss_point_compliance(&self, length: T, weight: T) -> Result<Vector6<T>, RodError> {
        check_length(length)?;
        if !(weight.is_finite() && weight > T::zero()) {
            return Err(RodError::InvalidGaussWeight {
                weight: weight.to_f64(),
            });
        }
        let lw = length * weight;
        Ok(self.stiffness_diagonal().map(|k| T::one() / (lw * k)))
    }

    /// Translational mass per unit length ρA, kg/m.
    #[inline]
    pub fn mass_per_length(&self) -> T {
        self.density * self.area()
    }

    /// Rotational inertia per unit length ρ·diag(I₁, I₂, J) about the body axes d₁,
    /// d₂, d₃, kg·m.
    pub fn rotational_inertia_per_length(&self) -> Vector3<T> {
        let i = self.second_moment_of_area();
        Vector3::new(i, i, self.polar_moment_of_area()) * self.density
    }

    /// The lumped inertias of the `N` nodes of one element of rest length `length` (m)
    /// (Section 6.3.6): the element's mass ρAl and rotational inertia ρ diag(I₁, I₂, J) l
    /// split by the row sums of the consistent mass matrix,
    /// [`LagrangeBasis::lumped_weights`] (½, ½; ⅙, ⅔, ⅙; ⅛, ⅜, ⅜, ⅛). A node shared by
    /// two elements receives the sum of both contributions (the caller adds them).
    ///
    /// # Errors
    /// [`RodError::InvalidLength`] unless l is finite and > 0.
    pub fn lumped_nodal_inertia<const N: usize>(
        &self,
        length: T,
    ) -> Result<[NodalInertia<T>; N], RodError> {
        check_length(length)?;
        let weights = LagrangeBasis::<N>::lumped_weights::<T>();
        let mass = self.mass_per_length() * length;
        let inertia = self.rotational_inertia_per_length() * length;
        Ok(weights.map(|w| NodalInertia {
            mass: mass * w,
            inertia: inertia * w,
        }))
    }
}

/// [`RodError::InvalidLength`] unless `length` is finite and > 0.
pub(crate) fn check_length<T: Real>(length: T) -> Result<(), RodError> {
    // The strains scale as 1/l and the compliances and inertias as powers of l: with l²
    // or 1/l² out of range (l < 1.5e-154 or > 1.3e154 m in f64, 1.1e-19 / 1.8e19 in
    // f32) they overflow or vanish, and the rod silently stops acting.
    let sq = length * length;
    if length.is_finite()
        && length > T::zero()
        && sq.is_finite()
        && sq > T::zero()
        && (T::one() / sq).is_finite()
    {
        Ok(())
    } else {
        Err(RodError::InvalidLength {
            length: length.to_f64(),
        })
    }
}
