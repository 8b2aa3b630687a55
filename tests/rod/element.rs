//! Cosserat rod finite elements (paper Section 6.3, Appendix G): basis functions, Gauss
//! rules, material, and every analytic gradient of `lie_xpbd::rod::element` against
//! central finite differences of boxplus perturbations ([`numdiff`]), for linear,
//! quadratic and cubic elements, SO3Matrix and UnitQuaternion, f32 and f64.
//!
//! # States
//! Three families of nodal configurations, drawn from a seeded generator (in f64, then
//! rounded to the scalar under test):
//! * `large`: node 0 anywhere (random position in a 0.2 m box, random orientation),
//!   node j ≥ 1 at Rⱼ = R₀ Exp(ψⱼ) with ψⱼ of random direction and angle uniform in
//!   [1, 2.6] rad, positions along a random direction plus random offsets of up to
//!   0.3 l. Neighbouring nodes differ by up to ~π in rotation.
//! * `helix`: a bent and twisted curve of constant strain, R(s) = R₀ Exp(s u),
//!   p(s) = p₀ + R₀ s Jₗ(s u) v with |u| l ∈ [1, 2.3] rad and a small shear in v,
//!   sampled at the nodes, then every node rotated by up to 0.25 rad and moved by up to
//!   0.05 l at random.
//! * `small`: as `large` with angles in [0, 1e-6] or [0, 1e-2] rad (the series branches
//!   of Γ, Γ⁻¹ and of the ∂Γ/∂θ contraction).
//!
//! Rest lengths l are uniform in [0.5, 1.5] m. Every relative rotation Rⱼ ⊟ R₀ stays
//! below π − 0.1 rad, so with h ≤ 1e-3 every perturbed one stays on one side of Log's
//! branch cut (lie::numdiff docs). Gradients are checked at ξ = 0, 1, the Gauss points
//! of reduced and full integration, and a random ξ.
//!
//! # Tolerance
//! The metric is [`numdiff::max_relative_error`] (`max|J − J_fd| / max(1, max|J|)`)
//! with the steps of [`Real::fd_step`]: h = 1e-5 in f64 (≈ ε^(1/3), balancing the O(h²)
//! truncation against the O(ε/h) round-off) and h = 1e-3 in f32 (round-off ε/h ≈ 1.2e-4
//! dominates; a larger h would bring the truncation error h²·f'''/6 up, and near π would
//! straddle Log's branch cut). The tolerances are [`Real::fd_tolerance`] unchanged:
//! 1e-7 (f64) and 2e-3 ≈ 16·ε/h (f32). The shear rows difference nodal positions,
//! v = R(ξ)ᵀ Σ φⱼ,ξ pⱼ / l, so their round-off is ε·(Σ|φⱼ,ξ| |pⱼ|/l)/h rather than
//! ε/h: the states keep |pⱼ| ≤ 2.2 m and l ≥ 0.5 m so that this stays inside the
//! unscaled tolerance (measured worst values are printed with `--nocapture` and quoted
//! in `proofs/rod_strains.md`). A check far from the origin would need the f32
//! tolerance scaled by |p|/l, not because the gradient is wrong.

use lie_xpbd::lie::numdiff::{self, Pose};
use lie_xpbd::lie::real::c;
use lie_xpbd::lie::so3;
use lie_xpbd::lie::{LieGroup, Real, SO3Matrix, UnitQuaternion};
use lie_xpbd::rod::{
    circular_shear_correction, ElementKinematics, GaussRule, Integration, LagrangeBasis,
    RodElement, RodError, RodMaterial, MAX_GAUSS_POINTS,
};
use nalgebra::{DMatrix, DVector, Matrix3, Matrix6, Vector3, Vector6};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::f64::consts::PI;

// =====================================================================================
// Random states (f64), converted to the scalar and representation under test
// =====================================================================================

/// A nodal configuration of one element, in f64.
#[derive(Debug, Clone)]
struct Config {
    /// Rest length, m.
    length: f64,
    /// Node positions, m.
    positions: Vec<[f64; 3]>,
    /// Node rotations, each the product Exp(w₀)·Exp(w₁)·… of these rotation vectors.
    rotations: Vec<Vec<[f64; 3]>>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Family {
    Large,
    Helix,
    Small,
}

const FAMILIES: [Family; 3] = [Family::Large, Family::Helix, Family::Small];

fn unit_vector(rng: &mut StdRng) -> [f64; 3] {
    let z: f64 = rng.random_range(-1.0..=1.0);
    let phi: f64 = rng.random_range(0.0..std::f64::consts::TAU);
    let s = (1.0 - z * z).max(0.0).sqrt();
    [s * phi.cos(), s * phi.sin(), z]
}

fn scaled(a: [f64; 3], s: f64) -> [f64; 3] {
    [a[0] * s, a[1] * s, a[2] * s]
}

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn random_vector(rng: &mut StdRng, lo: f64, hi: f64) -> [f64; 3] {
    let len = rng.random_range(lo..=hi);
    scaled(unit_vector(rng), len)
}

fn v64(a: [f64; 3]) -> Vector3<f64> {
    Vector3::new(a[0], a[1], a[2])
}

fn arr(v: Vector3<f64>) -> [f64; 3] {
    [v.x, v.y, v.z]
}

fn random_config(rng: &mut StdRng, n: usize, family: Family) -> Config {
    let length = rng.random_range(0.5..=1.5);
    let base = random_vector(rng, 0.0, 0.2);
    let r0 = random_vector(rng, 0.0, PI - 0.1);
    match family {
        Family::Large | Family::Small => {
            let (lo, hi) = match family {
                Family::Large => (1.0, 2.6),
                _ if rng.random::<bool>() => (0.0, 1e-6),
                _ => (0.0, 1e-2),
            };
            let dir = unit_vector(rng);
            let mut positions = Vec::new();
            let mut rotations = Vec::new();
            for j in 0..n {
                let xi = j as f64 / (n - 1) as f64;
                let offset = random_vector(rng, 0.0, 0.3 * length);
                positions.push(add(add(base, scaled(dir, xi * length)), offset));
                if j == 0 {
                    rotations.push(vec![r0]);
                } else {
                    rotations.push(vec![r0, random_vector(rng, lo, hi)]);
                }
            }
            Config {
                length,
                positions,
                rotations,
            }
        }
        Family::Helix => {
            let u = random_vector(rng, 1.0 / length, 2.3 / length);
            let shear = add([0.0, 0.0, 1.0], random_vector(rng, 0.0, 0.1));
            let r0m = so3::exp_matrix(&v64(r0));
            let mut positions = Vec::new();
            let mut rotations = Vec::new();
            for j in 0..n {
                let s = length * j as f64 / (n - 1) as f64;
                let su = v64(u) * s;
                let p = v64(base) + r0m * (so3::left_jacobian(&su) * v64(shear)) * s;
                let jitter = random_vector(rng, 0.0, 0.05 * length);
                positions.push(add(arr(p), jitter));
                rotations.push(vec![r0, arr(su), random_vector(rng, 0.0, 0.25)]);
            }
            Config {
                length,
                positions,
                rotations,
            }
        }
    }
}

fn vt<T: Real>(a: [f64; 3]) -> Vector3<T> {
    Vector3::new(c::<T>(a[0]), c::<T>(a[1]), c::<T>(a[2]))
}

impl Config {
    fn nodes<T: Real, G: LieGroup<T>, const N: usize>(&self) -> [Pose<T, G>; N] {
        assert_eq!(self.positions.len(), N);
        std::array::from_fn(|j| {
            let r = self.rotations[j]
                .iter()
                .fold(G::identity(), |r, w| r.compose(&G::exp(&vt(*w))));
            Pose::new(vt(self.positions[j]), r)
        })
    }

    /// Largest angle of Rⱼ ⊟ R₀ (rad), in f64.
    fn max_relative_angle(&self) -> f64 {
        let nodes = match self.positions.len() {
            2 => self.nodes::<f64, SO3Matrix<f64>, 2>().to_vec(),
            3 => self.nodes::<f64, SO3Matrix<f64>, 3>().to_vec(),
            _ => self.nodes::<f64, SO3Matrix<f64>, 4>().to_vec(),
        };
        nodes
            .iter()
            .map(|p| p.rotation.boxminus(&nodes[0].rotation).norm())
            .fold(0.0, f64::max)
    }
}

/// Seeded configurations of `family` for N nodes, all with relative angles ≤ π − 0.1.
fn configs(n: usize, family: Family, count: usize, seed: u64) -> Vec<Config> {
    let mut rng = StdRng::seed_from_u64(seed ^ (n as u64) << 8 ^ family as u64);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let cfg = random_config(&mut rng, n, family);
        if cfg.max_relative_angle() <= PI - 0.1 {
            out.push(cfg);
        }
    }
    out
}

/// ξ at which gradients are checked: both ends, the Gauss points of reduced and full
/// integration, and one random point.
fn sample_xis(order: usize, rng: &mut StdRng) -> Vec<f64> {
    let mut xis = vec![0.0, 1.0, rng.random_range(0.0..=1.0)];
    for m in [order, order + 1] {
        xis.extend_from_slice(GaussRule::<f64>::new(m).unwrap().points());
    }
    xis
}

// =====================================================================================
// Helpers
// =====================================================================================

/// N blocks of R×6 side by side: the R × 6N gradient in the (59) layout.
fn cat<T: Real, const R: usize, const N: usize>(
    blocks: &[nalgebra::SMatrix<T, R, 6>; N],
) -> DMatrix<T> {
    let mut m = DMatrix::zeros(R, 6 * N);
    for (k, b) in blocks.iter().enumerate() {
        m.view_mut((0, 6 * k), (R, 6)).copy_from(b);
    }
    m
}

fn to_array<T: Real, G: LieGroup<T>, const N: usize>(ps: &[Pose<T, G>]) -> [Pose<T, G>; N] {
    std::array::from_fn(|j| ps[j])
}

fn dvec<T: Real>(v: &[T]) -> DVector<T> {
    DVector::from_column_slice(v)
}

/// The 6 × 6N derivative of the pose-valued `f` of the nodes, by central differences in
/// the (59) layout on both sides: column (k, i) is
/// `[(f(nodes with node k ⊞ h eᵢ) ⊟ f₀) − (… ⊞ −h eᵢ) ⊟ f₀)]/2h`.
fn poses_to_pose<T: Real, G: LieGroup<T>, F>(f: F, nodes: &[Pose<T, G>], h: T) -> DMatrix<T>
where
    F: Fn(&[Pose<T, G>]) -> Pose<T, G>,
{
    let f0 = f(nodes);
    let mut m = DMatrix::zeros(6, 6 * nodes.len());
    let mut work = nodes.to_vec();
    for k in 0..nodes.len() {
        for i in 0..6 {
            let mut e = Vector6::zeros();
            e[i] = h;
            work[k] = nodes[k].boxplus(&e);
            let plus = f(&work).boxminus(&f0);
            work[k] = nodes[k].boxplus(&-e);
            let minus = f(&work).boxminus(&f0);
            work[k] = nodes[k];
            m.set_column(6 * k + i, &((plus - minus) / (c::<T>(2.0) * h)));
        }
    }
    m
}

/// Worst error over a set of checks, with a label for printing.
#[derive(Debug, Default, Clone, Copy)]
struct Worst {
    err: f64,
}

impl Worst {
    fn add(&mut self, e: f64) {
        // NaN counts as infinitely bad.
        self.err = if e.is_nan() {
            f64::INFINITY
        } else {
            self.err.max(e)
        };
    }
}

// =====================================================================================
// Basis
// =====================================================================================

fn basis_properties<T: Real, const N: usize>() {
    let eps = T::default_epsilon().to_f64();
    let nodes = LagrangeBasis::<N>::nodes::<T>();
    // Kronecker delta at the nodes.
    for (k, &xk) in nodes.iter().enumerate() {
        let phi = LagrangeBasis::<N>::values(xk);
        for (j, &pj) in phi.iter().enumerate() {
            let expect = if j == k { 1.0 } else { 0.0 };
            assert!(
                (pj.to_f64() - expect).abs() <= 8.0 * eps,
                "N={N}: phi_{j}(xi_{k}) = {pj}"
            );
        }
    }
    let mut rng = StdRng::seed_from_u64(3);
    for _ in 0..200 {
        let x: f64 = rng.random_range(0.0..=1.0);
        let xi = c::<T>(x);
        let (phi, dphi) = LagrangeBasis::<N>::values_and_derivatives(xi);
        // Partition of unity and its derivative.
        let sum: f64 = phi.iter().map(|p| p.to_f64()).sum();
        let dsum: f64 = dphi.iter().map(|p| p.to_f64()).sum();
        assert!((sum - 1.0).abs() <= 16.0 * eps, "N={N}: sum phi = {sum}");
        assert!(dsum.abs() <= 64.0 * eps, "N={N}: sum dphi = {dsum}");
        // Reproduces every polynomial of degree ≤ N − 1: Σ φⱼ ξⱼᵈ = ξᵈ.
        let xi64 = xi.to_f64();
        for d in 0..N as i32 {
            let interp: f64 = phi
                .iter()
                .zip(&nodes)
                .map(|(p, xj)| p.to_f64() * xj.to_f64().powi(d))
                .sum();
            assert!(
                (interp - xi64.powi(d)).abs() <= 32.0 * eps,
                "N={N}: degree {d} not reproduced"
            );
            // And its derivative: Σ φⱼ' ξⱼᵈ = d ξᵈ⁻¹.
            let dinterp: f64 = dphi
                .iter()
                .zip(&nodes)
                .map(|(p, xj)| p.to_f64() * xj.to_f64().powi(d))
                .sum();
            let dexact = if d == 0 {
                0.0
            } else {
                d as f64 * xi64.powi(d - 1)
            };
            assert!(
                (dinterp - dexact).abs() <= 128.0 * eps,
                "N={N}: derivative of degree {d} not reproduced"
            );
        }
        // Derivatives against central differences in f64.
        if T::NAME == "f64" {
            let h = 1e-6;
            let plus = LagrangeBasis::<N>::values(xi64 + h);
            let minus = LagrangeBasis::<N>::values(xi64 - h);
            for j in 0..N {
                let fd = (plus[j] - minus[j]) / (2.0 * h);
                assert!((fd - dphi[j].to_f64()).abs() < 1e-8, "N={N}: dphi_{j}");
            }
        }
    }
}

#[test]
fn basis_partition_of_unity_and_nodal_interpolation_f64() {
    basis_properties::<f64, 2>();
    basis_properties::<f64, 3>();
    basis_properties::<f64, 4>();
}

#[test]
fn basis_partition_of_unity_and_nodal_interpolation_f32() {
    basis_properties::<f32, 2>();
    basis_properties::<f32, 3>();
    basis_properties::<f32, 4>();
}

#[test]
fn basis_matches_paper_formulas() {
    for i in 0..=20 {
        let x = i as f64 / 20.0;
        // (96)
        let l = LagrangeBasis::<2>::values(x);
        assert!((l[0] - (1.0 - x)).abs() < 1e-15 && (l[1] - x).abs() < 1e-15);
        // (97)
        let q = LagrangeBasis::<3>::values(x);
        let dq = LagrangeBasis::<3>::derivatives(x);
        let expect = [
            2.0 * x * x - 3.0 * x + 1.0,
            -4.0 * x * x + 4.0 * x,
            2.0 * x * x - x,
        ];
        let dexpect = [4.0 * x - 3.0, -8.0 * x + 4.0, 4.0 * x - 1.0];
        for j in 0..3 {
            assert!((q[j] - expect[j]).abs() < 1e-14, "quadratic phi_{j}({x})");
            assert!(
                (dq[j] - dexpect[j]).abs() < 1e-13,
                "quadratic dphi_{j}({x})"
            );
        }
        // Cubic, nodes 0, 1/3, 2/3, 1: e.g. φ₀ = −(9/2)(ξ − 1/3)(ξ − 2/3)(ξ − 1).
        let cu = LagrangeBasis::<4>::values(x);
        let t = 1.0 / 3.0;
        let expect = [
            -4.5 * (x - t) * (x - 2.0 * t) * (x - 1.0),
            13.5 * x * (x - 2.0 * t) * (x - 1.0),
            -13.5 * x * (x - t) * (x - 1.0),
            4.5 * x * (x - t) * (x - 2.0 * t),
        ];
        for j in 0..4 {
            assert!((cu[j] - expect[j]).abs() < 1e-14, "cubic phi_{j}({x})");
        }
    }
}

// =====================================================================================
// Gauss rules
// =====================================================================================

fn gauss_exactness<T: Real>() {
    let eps = T::default_epsilon().to_f64();
    for m in 1..=MAX_GAUSS_POINTS {
        let rule = GaussRule::<T>::new(m).unwrap();
        assert_eq!(rule.len(), m);
        let wsum: f64 = rule.weights().iter().map(|w| w.to_f64()).sum();
        assert!((wsum - 1.0).abs() <= 4.0 * eps);
        for (k, x) in rule.points().iter().enumerate() {
            // Inside the element, ascending, symmetric about 1/2.
            let x = x.to_f64();
            assert!(x > 0.0 && x < 1.0);
            let mirror = rule.points()[m - 1 - k].to_f64();
            assert!((x + mirror - 1.0).abs() <= 4.0 * eps);
            if k > 0 {
                assert!(x > rule.points()[k - 1].to_f64());
            }
        }
        // Exact for ξᵈ, d ≤ 2m − 1 …
        for d in 0..(2 * m) as i32 {
            let q = rule.integrate(|x| x.powi(d)).to_f64();
            let exact = 1.0 / (d + 1) as f64;
            assert!(
                (q - exact).abs() <= 16.0 * eps,
                "{}: {m}-point rule on x^{d}: {q} vs {exact}",
                T::NAME
            );
        }
        // … and not for ξ^{2m}: the rule is not over-claimed.
        let d = (2 * m) as i32;
        let q = rule.integrate(|x| x.powi(d)).to_f64();
        assert!((q - 1.0 / (d + 1) as f64).abs() > 1e-5);
    }
}

#[test]
fn gauss_rules_integrate_degree_2m_minus_1_exactly_f64() {
    gauss_exactness::<f64>();
}

#[test]
fn gauss_rules_integrate_degree_2m_minus_1_exactly_f32() {
    gauss_exactness::<f32>();
}

#[test]
fn gauss_rules_match_known_abscissae_and_reject_bad_counts() {
    let r2 = GaussRule::<f64>::new(2).unwrap();
    let s = 3f64.sqrt() / 6.0;
    assert!((r2.points()[0] - (0.5 - s)).abs() < 1e-16);
    assert!((r2.points()[1] - (0.5 + s)).abs() < 1e-16);
    assert_eq!(r2.weights(), &[0.5, 0.5]);
    let r3 = GaussRule::<f64>::new(3).unwrap();
    assert!((r3.points()[0] - (0.5 - 15f64.sqrt() / 10.0)).abs() < 1e-16);
    assert!((r3.weights()[1] - 4.0 / 9.0).abs() < 1e-16);
    let r4 = GaussRule::<f64>::new(4).unwrap();
    assert!((r4.points()[0] - 0.5 * (1.0 - 0.861_136_311_594_052_6)).abs() < 1e-15);
    assert!((r4.weights()[1] - 0.5 * 0.652_145_154_862_546_1).abs() < 1e-15);
    for m in [0, 5, 100] {
        assert_eq!(
            GaussRule::<f64>::new(m),
            Err(RodError::GaussPointCount { count: m, max: 4 })
        );
    }
    assert_eq!(Integration::Reduced.point_count(2), 2);
    assert_eq!(Integration::Full.point_count(3), 4);
    assert_eq!(Integration::Points(3).point_count(1), 3);
}

// =====================================================================================
// Material and lumped inertia
// =====================================================================================

#[test]
fn material_stiffness_compliance_and_lumping() {
    let (e, nu, rho, r) = (5e6, 0.4, 1000.0, 0.05);
    let m = RodMaterial::<f64>::circular(e, nu, rho, r).unwrap();
    let g = e / (2.0 * (1.0 + nu));
    let area = PI * r * r;
    let i = PI * r.powi(4) / 4.0;
    let kappa = 6.0 * (1.0 + nu) / (7.0 + 6.0 * nu);
    assert!((m.shear_modulus() - g).abs() < 1e-9);
    assert!((m.shear_correction() - kappa).abs() < 1e-15);
    assert!((circular_shear_correction(0.0f64) - 6.0 / 7.0).abs() < 1e-15);
    let expect = [
        kappa * g * area,
        kappa * g * area,
        e * area,
        e * i,
        e * i,
        g * 2.0 * i,
    ];
    let k = m.stiffness_diagonal();
    for j in 0..6 {
        assert!((k[j] - expect[j]).abs() <= 1e-12 * expect[j], "row {j}");
    }
    assert_eq!(m.shear_stiffness()[(0, 1)], 0.0);
    // κ = 1 is (87) as printed.
    let m1 = m.with_shear_correction(1.0).unwrap();
    assert!((m1.shear_stiffness()[(0, 0)] - g * area).abs() < 1e-9);
    // (109): α = 1/(l w K).
    let (l, w) = (0.3, 5.0 / 18.0);
    let alpha = m.gauss_point_compliance(l, w).unwrap();
    for j in 0..6 {
        assert!((alpha[j] * l * w * expect[j] - 1.0).abs() < 1e-12);
    }
    // Element compliances use the rule's weights.
    let el = RodElement::<f64, 4>::new(l, &m, Integration::Reduced).unwrap();
    assert_eq!(el.gauss_point_count(), 3);
    for kgp in 0..3 {
        let wk = el.gauss_rule().weights()[kgp];
        assert_eq!(
            el.compliance(kgp).unwrap(),
            m.gauss_point_compliance(l, wk).unwrap()
        );
    }
    // Lumping (6.3.6): ½ ½; ⅙ ⅔ ⅙; ⅛ ⅜ ⅜ ⅛ of ρAl and ρ diag(I, I, 2I) l.
    let check = |w: &[f64], got: &[lie_xpbd::rod::NodalInertia<f64>]| {
        for (wj, n) in w.iter().zip(got) {
            assert!((n.mass - wj * rho * area * l).abs() < 1e-12);
            let ie = Vector3::new(i, i, 2.0 * i) * (rho * l * wj);
            assert!((n.inertia - ie).norm() < 1e-15);
        }
    };
    check(&[0.5, 0.5], &m.lumped_nodal_inertia::<2>(l).unwrap());
    check(
        &[1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0],
        &m.lumped_nodal_inertia::<3>(l).unwrap(),
    );
    check(&[0.125, 0.375, 0.375, 0.125], &el.lumped_nodal_inertia(&m));
    // Row sums of the consistent mass matrix, which is symmetric with total 1.
    let cm = LagrangeBasis::<4>::consistent_mass::<f64>();
    let total: f64 = cm.iter().flatten().sum();
    assert!((total - 1.0).abs() < 1e-15);
    assert!((cm[0][1] - cm[1][0]).abs() < 1e-16);
    // Linear: M = [[1/3, 1/6], [1/6, 1/3]].
    let cm2 = LagrangeBasis::<2>::consistent_mass::<f64>();
    assert!((cm2[0][0] - 1.0 / 3.0).abs() < 1e-16 && (cm2[0][1] - 1.0 / 6.0).abs() < 1e-16);
}

#[test]
fn material_and_element_reject_bad_input() {
    let bad = |p: &str, r: Result<RodMaterial<f64>, RodError>| match r {
        Err(RodError::InvalidMaterial { parameter, .. }) => assert_eq!(parameter, p),
        other => panic!("expected InvalidMaterial({p}), got {other:?}"),
    };
    bad("youngs_modulus", RodMaterial::circular(0.0, 0.3, 1.0, 0.1));
    bad(
        "youngs_modulus",
        RodMaterial::circular(f64::NAN, 0.3, 1.0, 0.1),
    );
    bad("poisson_ratio", RodMaterial::circular(1.0, 0.6, 1.0, 0.1));
    bad("poisson_ratio", RodMaterial::circular(1.0, -1.0, 1.0, 0.1));
    bad("density", RodMaterial::circular(1.0, 0.3, -1.0, 0.1));
    bad(
        "radius",
        RodMaterial::circular(1.0, 0.3, 1.0, f64::INFINITY),
    );
    let m = RodMaterial::circular(1.0, 0.3, 1.0, 0.1).unwrap();
    bad("shear_correction", m.with_shear_correction(0.0));
    assert_eq!(
        m.gauss_point_compliance(-1.0, 0.5),
        Err(RodError::InvalidLength { length: -1.0 })
    );
    assert_eq!(
        m.gauss_point_compliance(1.0, 0.0),
        Err(RodError::InvalidGaussWeight { weight: 0.0 })
    );
    assert!(matches!(
        RodElement::<f64, 2>::new(0.0, &m, Integration::Reduced),
        Err(RodError::InvalidLength { .. })
    ));
    // Regression (fresh-user report): a 1e-300 m rod was accepted, its strains (∝ 1/l)
    // overflowed, and the run "completed" with an infinite residual while the nodes
    // fell freely. Lengths whose square or inverse square leave the range are rejected.
    for length in [1e-300, 2e-5 * 1e-150, 1e160] {
        assert!(matches!(
            RodElement::<f64, 3>::new(length, &m, Integration::Reduced),
            Err(RodError::InvalidLength { .. })
        ));
    }
    for length in [1e-20f32, 1e20] {
        let m32 = RodMaterial::circular(1.0f32, 0.3, 1.0, 0.1).unwrap();
        assert!(matches!(
            RodElement::<f32, 2>::new(length, &m32, Integration::Reduced),
            Err(RodError::InvalidLength { .. })
        ));
    }
    assert!(RodElement::<f64, 2>::new(1e-100, &m, Integration::Reduced).is_ok());
    assert!(matches!(
        RodElement::<f64, 4>::new(1.0, &m, Integration::Points(5)),
        Err(RodError::GaussPointCount { count: 5, max: 4 })
    ));
    let el = RodElement::<f64, 3>::new(1.0, &m, Integration::Reduced).unwrap();
    assert_eq!(
        el.precurvature(2),
        Err(RodError::GaussPointIndex { index: 2, count: 2 })
    );
    assert!(matches!(
        el.with_precurvature(&Vector3::new(0.0, f64::NAN, 0.0)),
        Err(RodError::NonFinite { .. })
    ));
    let nodes =
        [0.0, 0.5, 1.0].map(|z| Pose::new(Vector3::new(0.0, 0.0, z), SO3Matrix::identity()));
    let kin = el.kinematics(&nodes).unwrap();
    assert_eq!(
        el.gauss_point_constraint(&kin, 2).unwrap_err(),
        RodError::GaussPointIndex { index: 2, count: 2 }
    );
    let other = ElementKinematics::new(&nodes, 2.0).unwrap();
    assert!(matches!(
        el.gauss_point_constraint(&other, 0),
        Err(RodError::LengthMismatch { .. })
    ));
    for xi in [-0.1, 1.0 + 1e-12, f64::NAN] {
        assert!(matches!(
            kin.strains(xi),
            Err(RodError::ParameterOutOfRange { .. })
        ));
        assert!(kin.pose_gradient(xi).is_err() && kin.position(xi).is_err());
    }
    let mut bad_nodes = nodes;
    bad_nodes[1].position.x = f64::NAN;
    assert_eq!(
        ElementKinematics::new(&bad_nodes, 1.0).unwrap_err(),
        RodError::NonFinite {
            what: "node position",
            index: 1
        }
    );
    let q = UnitQuaternion::new_unchecked(nalgebra::Quaternion::new(f64::NAN, 0.0, 0.0, 0.0));
    let qnodes = [0.0, 0.5, 1.0].map(|z| Pose::new(Vector3::new(0.0, 0.0, z), q));
    assert_eq!(
        ElementKinematics::new(&qnodes, 1.0).unwrap_err(),
        RodError::NonFinite {
            what: "node rotation",
            index: 0
        }
    );
}

// =====================================================================================
// Interpolation
// =====================================================================================

fn interpolation_properties<T: Real, G: LieGroup<T>, const N: usize>() {
    let tol = 64.0 * T::default_epsilon().to_f64();
    for family in FAMILIES {
        for cfg in configs(N, family, 50, 11) {
            let nodes = cfg.nodes::<T, G, N>();
            let kin = ElementKinematics::new(&nodes, c::<T>(cfg.length)).unwrap();
            // Nodal interpolation: (p(ξⱼ), R(ξⱼ)) = (pⱼ, Rⱼ).
            for (j, &xj) in LagrangeBasis::<N>::nodes::<T>().iter().enumerate() {
                let pose = kin.pose(xj).unwrap();
                let d = pose.boxminus(&nodes[j]);
                let scale = 1.0 + nodes[j].position.norm().to_f64();
                assert!(d.norm().to_f64() <= tol * scale, "N={N} node {j}: {d}");
            }
            // Linear elements: R(ξ) is the geodesic (SLERP) from R₀ to R₁.
            if N == 2 {
                for x in [0.25, 0.5, 0.8] {
                    let r = kin.rotation(c::<T>(x)).unwrap();
                    let g = nodes[0].rotation.interpolate(&nodes[1].rotation, c::<T>(x));
                    assert!(r.boxminus(&g).norm().to_f64() <= tol);
                }
            }
        }
    }
}

#[test]
fn interpolation_hits_the_nodes() {
    interpolation_properties::<f64, SO3Matrix<f64>, 2>();
    interpolation_properties::<f64, SO3Matrix<f64>, 3>();
    interpolation_properties::<f64, UnitQuaternion<f64>, 4>();
    interpolation_properties::<f32, UnitQuaternion<f32>, 2>();
    interpolation_properties::<f32, UnitQuaternion<f32>, 3>();
    interpolation_properties::<f32, SO3Matrix<f32>, 4>();
}

/// Worst FD errors of the interpolation gradients: (θ and θ', pose, material point).
fn interpolation_gradient_errors<T: Real, G: LieGroup<T>, const N: usize>() -> [f64; 3] {
    let h = T::fd_step();
    let mut worst = [Worst::default(); 3];
    let mut rng = StdRng::seed_from_u64(5);
    for family in FAMILIES {
        for cfg in configs(N, family, 60, 21) {
            let nodes = cfg.nodes::<T, G, N>();
            let l = c::<T>(cfg.length);
            let kin_of =
                |ps: &[Pose<T, G>]| ElementKinematics::new(&to_array::<T, G, N>(ps), l).unwrap();
            let kin = kin_of(&nodes);
            let offset = vt::<T>(random_vector(&mut rng, 0.0, 0.1));
            for x in sample_xis(N - 1, &mut rng) {
                let xi = c::<T>(x);
                // θ and θ' (rotation blocks only: they do not depend on positions).
                let tg = kin.theta_gradient(xi).unwrap();
                let mut a = DMatrix::zeros(6, 6 * N);
                for k in 0..N {
                    a.view_mut((0, 6 * k + 3), (3, 3)).copy_from(&tg.d_theta[k]);
                    a.view_mut((3, 6 * k + 3), (3, 3))
                        .copy_from(&tg.d_theta_prime[k]);
                }
                let fd = numdiff::poses_to_vector(
                    |ps: &[Pose<T, G>]| {
                        let t = kin_of(ps).theta_gradient(xi).unwrap();
                        dvec(&[
                            t.theta.x,
                            t.theta.y,
                            t.theta.z,
                            t.theta_prime.x,
                            t.theta_prime.y,
                            t.theta_prime.z,
                        ])
                    },
                    &nodes,
                    h,
                );
                worst[0].add(numdiff::max_relative_error(&a, &fd).to_f64());
                // Pose.
                let pg = kin.pose_gradient(xi).unwrap();
                let fd = poses_to_pose(|ps: &[Pose<T, G>]| kin_of(ps).pose(xi).unwrap(), &nodes, h);
                worst[1].add(numdiff::max_relative_error(&cat(&pg.gradient), &fd).to_f64());
                // Material point p(ξ) + R(ξ) r.
                let (x0, blocks) = kin.point_gradient(xi, &offset).unwrap();
                let fd = numdiff::poses_to_vector(
                    |ps: &[Pose<T, G>]| {
                        dvec(kin_of(ps).point_gradient(xi, &offset).unwrap().0.as_slice())
                    },
                    &nodes,
                    h,
                );
                worst[2].add(numdiff::max_relative_error(&cat(&blocks), &fd).to_f64());
                let direct = kin.position(xi).unwrap() + kin.rotation(xi).unwrap().act(&offset);
                assert!((x0 - direct).norm().to_f64() < 1e-5);
            }
        }
    }
    worst.map(|w| w.err)
}

fn check_interpolation_gradients<T: Real, G: LieGroup<T>>() {
    let tol = T::fd_tolerance().to_f64();
    for (order, e) in [
        interpolation_gradient_errors::<T, G, 2>(),
        interpolation_gradient_errors::<T, G, 3>(),
        interpolation_gradient_errors::<T, G, 4>(),
    ]
    .iter()
    .enumerate()
    {
        println!(
            "interpolation gradients, order {} {} {}: theta {:.2e}, pose {:.2e}, point {:.2e} (tol {tol:.0e})",
            order + 1,
            G::NAME,
            T::NAME,
            e[0],
            e[1],
            e[2]
        );
        assert!(e.iter().all(|&x| x < tol), "order {}: {e:?}", order + 1);
    }
}

#[test]
fn interpolation_gradients_matrix_f64() {
    check_interpolation_gradients::<f64, SO3Matrix<f64>>();
}

#[test]
fn interpolation_gradients_quaternion_f64() {
    check_interpolation_gradients::<f64, UnitQuaternion<f64>>();
}

#[test]
fn interpolation_gradients_matrix_f32() {
    check_interpolation_gradients::<f32, SO3Matrix<f32>>();
}

#[test]
fn interpolation_gradients_quaternion_f32() {
    check_interpolation_gradients::<f32, UnitQuaternion<f32>>();
}

// =====================================================================================
// Strains and their gradient
// =====================================================================================

/// Worst FD errors of the strain gradient (the library's, with the ∂Γ/∂θ term), overall
/// and per family, and the distribution over the Gauss points of the `large` and
/// `helix` states of the curvature-row error of the same gradient without the term,
/// max|ΔJᵤ| / max|Jᵤ|.
#[derive(Debug, Default, Clone, Copy)]
struct StrainErrors {
    full: f64,
    full_by_family: [f64; 3],
    without_term_min: f64,
    without_term_max: f64,
    without_term_median: f64,
}

fn strain_gradient_errors<T: Real, G: LieGroup<T>, const N: usize>(seed: u64) -> StrainErrors {
    let h = T::fd_step();
    let mut out = StrainErrors {
        without_term_min: f64::INFINITY,
        ..Default::default()
    };
    let mut without = Vec::new();
    let mut rng = StdRng::seed_from_u64(seed);
    for (fi, family) in FAMILIES.into_iter().enumerate() {
        let mut worst = Worst::default();
        for cfg in configs(N, family, 150, seed) {
            let nodes = cfg.nodes::<T, G, N>();
            let l = c::<T>(cfg.length);
            let kin_of =
                |ps: &[Pose<T, G>]| ElementKinematics::new(&to_array::<T, G, N>(ps), l).unwrap();
            let kin = kin_of(&nodes);
            for (ix, x) in sample_xis(N - 1, &mut rng).into_iter().enumerate() {
                let xi = c::<T>(x);
                let sg = kin.strain_gradient(xi).unwrap();
                assert_eq!(sg.strains, kin.strains(xi).unwrap());
                let a = cat(&sg.gradient);
                let fd = numdiff::poses_to_vector(
                    |ps: &[Pose<T, G>]| {
                        dvec(kin_of(ps).strains(xi).unwrap().to_vector().as_slice())
                    },
                    &nodes,
                    h,
                );
                worst.add(numdiff::max_relative_error(&a, &fd).to_f64());
                // The same gradient without M(θ, θ')·D_{Rₖ}θ, the ∂Γ/∂θ contraction, at
                // the Gauss points (entries 3.. of `sample_xis`) of the large-rotation
                // states. (At ξ = 0 the term vanishes: θ(0) = 0 and D_{Rₖ}θ(0) = 0.)
                if family != Family::Small && ix >= 3 {
                    let tg = kin.theta_gradient(xi).unwrap();
                    let m = so3::right_jacobian_derivative_contraction(&tg.theta, &tg.theta_prime);
                    let mut wrong = a.clone();
                    for k in 0..N {
                        let term = m * tg.d_theta[k];
                        let mut view = wrong.view_mut((3, 6 * k + 3), (3, 3));
                        view -= term;
                    }
                    let ju = a.rows(3, 3).into_owned();
                    let du = (wrong.rows(3, 3) - fd.rows(3, 3)).abs().max();
                    without.push(du.to_f64() / ju.abs().max().to_f64());
                }
            }
        }
        out.full_by_family[fi] = worst.err;
        out.full = out.full.max(worst.err);
    }
    without.sort_by(|a, b| a.partial_cmp(b).unwrap());
    out.without_term_min = without[0];
    out.without_term_max = without[without.len() - 1];
    out.without_term_median = without[without.len() / 2];
    out
}

fn check_strain_gradients<T: Real, G: LieGroup<T>>() {
    let tol = T::fd_tolerance().to_f64();
    let all = [
        strain_gradient_errors::<T, G, 2>(31),
        strain_gradient_errors::<T, G, 3>(32),
        strain_gradient_errors::<T, G, 4>(33),
    ];
    for (order, e) in all.iter().enumerate() {
        println!(
            "strain gradient, order {} {} {}: max rel err {:.2e} (large {:.2e}, helix {:.2e}, small {:.2e}; tol {tol:.0e}); \
             without the dGamma/dtheta term, curvature rows: min {:.1}%, median {:.1}%, max {:.1}%",
            order + 1,
            G::NAME,
            T::NAME,
            e.full,
            e.full_by_family[0],
            e.full_by_family[1],
            e.full_by_family[2],
            100.0 * e.without_term_min,
            100.0 * e.without_term_median,
            100.0 * e.without_term_max,
        );
        assert!(e.full < tol, "order {}: {e:?}", order + 1);
        // Leaving out the ∂Γ/∂θ contraction fails the check at every Gauss point of
        // every large-rotation state, and the typical error is tens of percent.
        assert!(e.without_term_min > tol, "order {}: {e:?}", order + 1);
        assert!(e.without_term_median > 0.2, "order {}: {e:?}", order + 1);
        assert!(e.without_term_max > 0.5, "order {}: {e:?}", order + 1);
    }
}

#[test]
fn strain_gradient_matrix_f64() {
    check_strain_gradients::<f64, SO3Matrix<f64>>();
}

#[test]
fn strain_gradient_quaternion_f64() {
    check_strain_gradients::<f64, UnitQuaternion<f64>>();
}

#[test]
fn strain_gradient_matrix_f32() {
    check_strain_gradients::<f32, SO3Matrix<f32>>();
}

#[test]
fn strain_gradient_quaternion_f32() {
    check_strain_gradients::<f32, UnitQuaternion<f32>>();
}

// =====================================================================================
// Gauss-point constraints
// =====================================================================================

/// Worst FD error of the Gauss-point constraint gradients of N-node elements, reduced
/// and full integration, with a random precurvature per Gauss point.
fn gauss_point_constraint_error<T: Real, G: LieGroup<T>, const N: usize>(seed: u64) -> f64 {
    let h = T::fd_step();
    let material = RodMaterial::<T>::circular(c(5e6), c(0.4), c(1000.0), c(0.05)).unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut worst = Worst::default();
    for family in FAMILIES {
        for cfg in configs(N, family, 60, seed) {
            let nodes = cfg.nodes::<T, G, N>();
            for integration in [Integration::Reduced, Integration::Full] {
                let mut el =
                    RodElement::<T, N>::new(c(cfg.length), &material, integration).unwrap();
                for k in 0..el.gauss_point_count() {
                    let u_star = vt::<T>(random_vector(&mut rng, 0.0, 2.0));
                    el = el.with_gauss_point_precurvature(k, &u_star).unwrap();
                }
                let kin = el.kinematics(&nodes).unwrap();
                for k in 0..el.gauss_point_count() {
                    let gp = el.gauss_point_constraint(&kin, k).unwrap();
                    // The value is (v − e₃, u − u*) at ξ̃ₖ.
                    let s = kin.strains(gp.xi).unwrap();
                    let expect = s.to_vector()
                        - Vector6::new(
                            T::zero(),
                            T::zero(),
                            T::one(),
                            T::zero(),
                            T::zero(),
                            T::zero(),
                        )
                        - {
                            let u = el.precurvature(k).unwrap();
                            Vector6::new(T::zero(), T::zero(), T::zero(), u.x, u.y, u.z)
                        };
                    assert_eq!(gp.value, expect);
                    assert_eq!(gp.xi, el.gauss_rule().points()[k]);
                    assert_eq!(gp.compliance, el.compliance(k).unwrap());
                    let fd = numdiff::poses_to_vector(
                        |ps: &[Pose<T, G>]| {
                            let kin = el.kinematics(&to_array::<T, G, N>(ps)).unwrap();
                            dvec(el.gauss_point_constraint(&kin, k).unwrap().value.as_slice())
                        },
                        &nodes,
                        h,
                    );
                    worst.add(numdiff::max_relative_error(&cat(&gp.gradient), &fd).to_f64());
                }
            }
        }
    }
    worst.err
}

fn check_gauss_point_constraints<T: Real, G: LieGroup<T>>() {
    let tol = T::fd_tolerance().to_f64();
    let errs = [
        gauss_point_constraint_error::<T, G, 2>(41),
        gauss_point_constraint_error::<T, G, 3>(42),
        gauss_point_constraint_error::<T, G, 4>(43),
    ];
    for (order, e) in errs.iter().enumerate() {
        println!(
            "gauss-point constraint gradient, order {} {} {}: max rel err {e:.2e} (tol {tol:.0e})",
            order + 1,
            G::NAME,
            T::NAME
        );
        assert!(*e < tol, "order {}: {e}", order + 1);
    }
}

#[test]
fn gauss_point_constraint_gradient_matrix_f64() {
    check_gauss_point_constraints::<f64, SO3Matrix<f64>>();
}

#[test]
fn gauss_point_constraint_gradient_quaternion_f64() {
    check_gauss_point_constraints::<f64, UnitQuaternion<f64>>();
}

#[test]
fn gauss_point_constraint_gradient_matrix_f32() {
    check_gauss_point_constraints::<f32, SO3Matrix<f32>>();
}

#[test]
fn gauss_point_constraint_gradient_quaternion_f32() {
    check_gauss_point_constraints::<f32, UnitQuaternion<f32>>();
}

/// (110): with linear bases and one Gauss point, C = (1/l)([R₀ ⊞ ½(R₁ ⊟ R₀)]ᵀ(p₁ − p₀))
/// − e₃ and (1/l)(R₁ ⊟ R₀) − u* (the 1/l does not divide e₃ or u*).
#[test]
fn linear_one_point_constraint_is_eq_110() {
    let material = RodMaterial::<f64>::circular(1e6, 0.3, 1000.0, 0.01).unwrap();
    let mut rng = StdRng::seed_from_u64(110);
    for family in FAMILIES {
        for cfg in configs(2, family, 100, 110) {
            let u_star = v64(random_vector(&mut rng, 0.0, 2.0));
            let el = RodElement::<f64, 2>::new(cfg.length, &material, Integration::Reduced)
                .unwrap()
                .with_precurvature(&u_star)
                .unwrap();
            assert_eq!(el.gauss_point_count(), 1);
            let nodes = cfg.nodes::<f64, UnitQuaternion<f64>, 2>();
            let gp = el
                .gauss_point_constraint(&el.kinematics(&nodes).unwrap(), 0)
                .unwrap();
            let l = cfg.length;
            let psi = nodes[1].rotation.boxminus(&nodes[0].rotation);
            let mid = nodes[0].rotation.boxplus(&(psi * 0.5));
            let cv = mid.act_inv(&(nodes[1].position - nodes[0].position)) / l - Vector3::z();
            let cu = psi / l - u_star;
            let expect = Vector6::new(cv.x, cv.y, cv.z, cu.x, cu.y, cu.z);
            assert!((gp.value - expect).norm() <= 1e-13 * (1.0 + expect.norm()));
            // The curvature of a linear element is constant along it, ψ/l (105).
            let kin = el.kinematics(&nodes).unwrap();
            for x in [0.0, 0.3, 1.0] {
                let u = kin.strains(x).unwrap().curvature;
                assert!((u - psi / l).norm() <= 1e-13 * (1.0 + u.norm()));
            }
            // And its gradient with respect to R₁ is Γ⁻¹(ψ)/l (as (179) for (90)).
            let b = kin.strain_gradient(0.5).unwrap().gradient;
            let du1: Matrix3<f64> = b[1].fixed_view::<3, 3>(3, 3).into_owned();
            assert!((du1 - so3::right_jacobian_inv(&psi) / l).norm() <= 1e-12 * (1.0 + du1.norm()));
        }
    }
}

// =====================================================================================
// Unstressed states, objectivity, representation agreement
// =====================================================================================

/// A straight rod along its director d₃ with all nodes at the same rotation has C = 0 to
/// round-off at every point, for every order, anywhere and in any orientation.
fn straight_rod_is_unstressed<T: Real, G: LieGroup<T>, const N: usize>() -> f64 {
    let eps = T::default_epsilon().to_f64();
    let material = RodMaterial::<T>::circular(c(1e7), c(0.3), c(1000.0), c(0.02)).unwrap();
    let mut rng = StdRng::seed_from_u64(7);
    let mut worst: f64 = 0.0;
    for _ in 0..200 {
        let l: f64 = rng.random_range(0.2..=2.0);
        let p0 = random_vector(&mut rng, 0.0, 1.0);
        let r0 = G::exp(&vt(random_vector(&mut rng, 0.0, PI)));
        let axis = r0.act(&Vector3::z());
        let nodes: [Pose<T, G>; N] = std::array::from_fn(|j| {
            let s = c::<T>(l * j as f64 / (N - 1) as f64);
            Pose::new(vt::<T>(p0) + axis * s, r0)
        });
        let pmax = nodes
            .iter()
            .map(|n| n.position.norm().to_f64())
            .fold(0.0, f64::max);
        for integration in [Integration::Reduced, Integration::Full] {
            let el = RodElement::<T, N>::new(c(l), &material, integration).unwrap();
            let kin = el.kinematics(&nodes).unwrap();
            for k in 0..el.gauss_point_count() {
                let cv = el.gauss_point_constraint(&kin, k).unwrap().value;
                // Round-off of p'(s) = Σ φⱼ,ξ pⱼ / l is ~ε Σ|φⱼ,ξ| |pⱼ| / l; Σ|φⱼ,ξ| ≤ 6.
                let scale = eps * (1.0 + 6.0 * pmax / l);
                worst = worst.max(cv.norm().to_f64() / scale);
            }
        }
    }
    worst
}

#[test]
fn straight_unstressed_rod_has_zero_constraint() {
    let all = [
        straight_rod_is_unstressed::<f64, SO3Matrix<f64>, 2>(),
        straight_rod_is_unstressed::<f64, SO3Matrix<f64>, 3>(),
        straight_rod_is_unstressed::<f64, SO3Matrix<f64>, 4>(),
        straight_rod_is_unstressed::<f64, UnitQuaternion<f64>, 2>(),
        straight_rod_is_unstressed::<f64, UnitQuaternion<f64>, 3>(),
        straight_rod_is_unstressed::<f64, UnitQuaternion<f64>, 4>(),
        straight_rod_is_unstressed::<f32, SO3Matrix<f32>, 2>(),
        straight_rod_is_unstressed::<f32, SO3Matrix<f32>, 3>(),
        straight_rod_is_unstressed::<f32, SO3Matrix<f32>, 4>(),
        straight_rod_is_unstressed::<f32, UnitQuaternion<f32>, 2>(),
        straight_rod_is_unstressed::<f32, UnitQuaternion<f32>, 3>(),
        straight_rod_is_unstressed::<f32, UnitQuaternion<f32>, 4>(),
    ];
    println!("straight rod |C| / (eps (1 + 6 max|p|/l)), worst: {all:.2?}");
    // A few ε per operation of a handful of operations.
    assert!(all.iter().all(|&w| w < 8.0), "{all:?}");
}

/// A rod of constant strain (helix: R(s) = R₀ Exp(s u), p(s) = p₀ + R₀ s Jₗ(su) v).
/// The rotation interpolation reproduces it exactly (θ(ξ) = ξ l u, since Lagrange bases
/// reproduce linear functions), so u(ξ) = u to round-off for every order; p is
/// interpolated by polynomials, so v(ξ) → v at the rate of the order.
fn helix_nodes<T: Real, G: LieGroup<T>, const N: usize>(
    l: f64,
    u: Vector3<f64>,
    v: Vector3<f64>,
    r0: Vector3<f64>,
) -> [Pose<T, G>; N] {
    let r0m = so3::exp_matrix(&r0);
    std::array::from_fn(|j| {
        let s = l * j as f64 / (N - 1) as f64;
        let p = r0m * (so3::left_jacobian(&(u * s)) * v) * s;
        let r = G::exp(&vt(arr(r0))).compose(&G::exp(&vt(arr(u * s))));
        Pose::new(vt(arr(p)), r)
    })
}

fn helix_curvature_is_exact<T: Real, G: LieGroup<T>, const N: usize>() -> f64 {
    let eps = T::default_epsilon().to_f64();
    let mut rng = StdRng::seed_from_u64(8);
    let mut worst: f64 = 0.0;
    let material = RodMaterial::<T>::circular(c(1e7), c(0.3), c(1000.0), c(0.02)).unwrap();
    for _ in 0..100 {
        let l: f64 = rng.random_range(0.3..=1.5);
        let u = v64(random_vector(&mut rng, 0.0, 2.5 / l));
        let v = v64(add([0.0, 0.0, 1.0], random_vector(&mut rng, 0.0, 0.2)));
        let r0 = v64(random_vector(&mut rng, 0.0, PI));
        let nodes = helix_nodes::<T, G, N>(l, u, v, r0);
        let kin = ElementKinematics::new(&nodes, c::<T>(l)).unwrap();
        for i in 0..=10 {
            let cu = kin.strains(c::<T>(i as f64 / 10.0)).unwrap().curvature;
            let err = (cu - vt::<T>(arr(u))).norm().to_f64() / (eps * (1.0 + u.norm()));
            worst = worst.max(err);
        }
        // With the precurvature set from the rest shape, the curvature rows vanish.
        let el = RodElement::<T, N>::new(c(l), &material, Integration::Full)
            .unwrap()
            .with_rest_curvature(&nodes)
            .unwrap();
        for k in 0..el.gauss_point_count() {
            let value = el.gauss_point_constraint(&kin, k).unwrap().value;
            assert_eq!(value.fixed_rows::<3>(3).norm(), T::zero());
        }
    }
    worst
}

#[test]
fn constant_curvature_is_reproduced_exactly() {
    let all = [
        helix_curvature_is_exact::<f64, SO3Matrix<f64>, 2>(),
        helix_curvature_is_exact::<f64, SO3Matrix<f64>, 3>(),
        helix_curvature_is_exact::<f64, UnitQuaternion<f64>, 4>(),
        helix_curvature_is_exact::<f32, UnitQuaternion<f32>, 2>(),
        helix_curvature_is_exact::<f32, SO3Matrix<f32>, 3>(),
        helix_curvature_is_exact::<f32, SO3Matrix<f32>, 4>(),
    ];
    println!("helix |u - u*| / (eps (1 + |u*|)), worst: {all:.2?}");
    assert!(all.iter().all(|&w| w < 64.0), "{all:?}");
}

/// Max over ξ ∈ [0, 1] and over the reduced Gauss points of |v(ξ) − v| on one element of
/// a helix of constant strain with length l.
fn helix_shear_error<const N: usize>(l: f64) -> (f64, f64) {
    let u = Vector3::new(1.5, -0.8, 2.0);
    let v = Vector3::new(0.1, 0.0, 1.0);
    let nodes = helix_nodes::<f64, SO3Matrix<f64>, N>(l, u, v, Vector3::new(0.3, 0.2, 0.1));
    let kin = ElementKinematics::new(&nodes, l).unwrap();
    let everywhere = (0..=50)
        .map(|i| (kin.strains(i as f64 / 50.0).unwrap().shear - v).norm())
        .fold(0.0, f64::max);
    let rule = GaussRule::<f64>::for_order(N - 1, Integration::Reduced).unwrap();
    let at_gauss = rule
        .points()
        .iter()
        .map(|&x| (kin.strains(x).unwrap().shear - v).norm())
        .fold(0.0, f64::max);
    (everywhere, at_gauss)
}

fn observed_rate<const N: usize>() -> (f64, f64) {
    let (l1, l2) = (0.2, 0.1);
    let (e1, g1) = helix_shear_error::<N>(l1);
    let (e2, g2) = helix_shear_error::<N>(l2);
    ((e1 / e2).log2(), (g1 / g2).log2())
}

#[test]
fn shear_strain_of_a_helix_converges_at_the_order_of_the_element() {
    for (order, (everywhere, gauss)) in [
        observed_rate::<2>(),
        observed_rate::<3>(),
        observed_rate::<4>(),
    ]
    .into_iter()
    .enumerate()
    {
        let p = (order + 1) as f64;
        println!(
            "helix shear error rate, order {}: {everywhere:.2} over the element, {gauss:.2} at the reduced Gauss points",
            order + 1
        );
        assert!(
            everywhere > p - 0.1,
            "order {}: rate {everywhere}",
            order + 1
        );
        assert!(gauss > p - 0.1, "order {}: rate {gauss}", order + 1);
    }
}

/// Objectivity: moving every node by the same rigid motion (Q, t) leaves v and u
/// unchanged; the rotation blocks of the gradient (body frame) are unchanged and the
/// position blocks turn into (∂/∂pₖ) Qᵀ.
fn objectivity<T: Real, G: LieGroup<T>, const N: usize>() {
    let mut rng = StdRng::seed_from_u64(9);
    let tol = 1e3 * T::default_epsilon().to_f64();
    for family in FAMILIES {
        for cfg in configs(N, family, 30, 9) {
            let nodes = cfg.nodes::<T, G, N>();
            let q = G::exp(&vt(random_vector(&mut rng, 0.0, PI - 0.1)));
            let t = vt::<T>(random_vector(&mut rng, 0.0, 0.5));
            let moved = nodes.map(|n| Pose::new(q.act(&n.position) + t, q.compose(&n.rotation)));
            let l = c::<T>(cfg.length);
            let a = ElementKinematics::new(&nodes, l).unwrap();
            let b = ElementKinematics::new(&moved, l).unwrap();
            let qm = q.to_matrix();
            for x in [0.0, 0.37, 1.0] {
                let ga = a.strain_gradient(c::<T>(x)).unwrap();
                let gb = b.strain_gradient(c::<T>(x)).unwrap();
                let d = (ga.strains.to_vector() - gb.strains.to_vector())
                    .norm()
                    .to_f64();
                assert!(
                    d <= tol * (1.0 + ga.strains.to_vector().norm().to_f64()),
                    "{d}"
                );
                for k in 0..N {
                    let mut expect: Matrix6<T> = ga.gradient[k];
                    let pos = expect.fixed_view::<6, 3>(0, 0) * qm.transpose();
                    expect.fixed_view_mut::<6, 3>(0, 0).copy_from(&pos);
                    let e = numdiff::max_relative_error(&expect, &gb.gradient[k]).to_f64();
                    assert!(e <= tol, "node {k}: {e}");
                }
            }
        }
    }
}

#[test]
fn strains_are_objective() {
    objectivity::<f64, SO3Matrix<f64>, 2>();
    objectivity::<f64, UnitQuaternion<f64>, 3>();
    objectivity::<f64, SO3Matrix<f64>, 4>();
    objectivity::<f32, UnitQuaternion<f32>, 2>();
    objectivity::<f32, SO3Matrix<f32>, 3>();
    objectivity::<f32, UnitQuaternion<f32>, 4>();
}

/// SO3Matrix and UnitQuaternion give the same strains and gradients.
fn representations_agree<const N: usize>() -> f64 {
    let mut worst: f64 = 0.0;
    for family in FAMILIES {
        for cfg in configs(N, family, 50, 10) {
            let a =
                ElementKinematics::new(&cfg.nodes::<f64, SO3Matrix<f64>, N>(), cfg.length).unwrap();
            let b = ElementKinematics::new(&cfg.nodes::<f64, UnitQuaternion<f64>, N>(), cfg.length)
                .unwrap();
            for x in [0.0, 0.21, 0.5, 0.93, 1.0] {
                let ga = a.strain_gradient(x).unwrap();
                let gb = b.strain_gradient(x).unwrap();
                worst = worst.max(numdiff::max_relative_error(
                    &cat(&ga.gradient),
                    &cat(&gb.gradient),
                ));
                worst = worst.max(numdiff::max_relative_error(
                    &ga.strains.to_vector(),
                    &gb.strains.to_vector(),
                ));
            }
        }
    }
    worst
}

#[test]
fn matrix_and_quaternion_agree() {
    let all = [
        representations_agree::<2>(),
        representations_agree::<3>(),
        representations_agree::<4>(),
    ];
    println!("matrix vs quaternion, worst relative difference: {all:?}");
    assert!(all.iter().all(|&w| w < 1e-12), "{all:?}");
}
