//! Studies of the limited hinge chain of `joint_chain/mod.rs` (print tables; run with
//! `--ignored --nocapture`): solver settings, the Gauss–Seidel convergence rate, one
//! configurable run (`probe`) and the energy over a long run. Their results are quoted
//! in the module docs of `chain_robust.rs` and `chain_direct.rs`.

use crate::joint_chain;
use joint_chain::*;

use lie_xpbd::xpbd::SolveMode;
use nalgebra::Vector3;

// ---------------------------------------------------------------------------------
// Studies (print tables; run with `--ignored --nocapture`).
// ---------------------------------------------------------------------------------

/// Study of solver settings: substeps 1–20 × iterations 1–50, block and rows, for the
/// three mass cases and both roots, f64 matrices. Prints one line per run (about 25
/// minutes in the test profile).
#[test]
#[ignore]
fn study_settings() {
    for masses in [
        Masses::Alternating,
        Masses::AlternatingHeavyRoot,
        Masses::Light,
    ] {
        for root in [Root::Limited, Root::Free] {
            for mode in [SolveMode::Block, SolveMode::Rows] {
                for substeps in [1, 2, 5, 10, 20] {
                    for iterations in [1, 5, 10, 20, 50] {
                        let setting = Setting {
                            substeps,
                            iterations,
                            mode,
                            direct: false,
                        };
                        let s = run::<f64, M64>(masses, setting, Order::Interleaved, root);
                        print(
                            &format!(
                                "{masses:?} root {root:?} {} n {substeps} it {iterations}",
                                mode.name()
                            ),
                            &s,
                        );
                    }
                }
            }
        }
    }
}

/// Spectral radius ρ of the Gauss–Seidel iteration on the linearised substep system
/// A Δλ = b, A = ∇C 𝓜⁻¹ ∇Cᵀ (hard rows), of the straight chain at release, with every
/// limit row active (as it is once the chain is stopped by its limits): block GS with
/// a 5×5 block per hinge and one row per limit (block mode) or scalar GS over all rows
/// (rows mode), in the order the constraints were added. One sweep shrinks the error
/// of the linear problem by ρ asymptotically, so reaching 1e-3 of the initial error
/// takes ln(1e-3)/ln(ρ) sweeps.
#[test]
#[ignore]
fn study_gauss_seidel_rate() {
    use lie_xpbd::xpbd::{ConstraintEval, ConstraintId};
    use nalgebra::DMatrix;
    for masses in [
        Masses::Alternating,
        Masses::AlternatingHeavyRoot,
        Masses::Light,
    ] {
        for (order, root) in [
            (Order::Interleaved, Root::Limited),
            (Order::HingesFirst, Root::Limited),
            (Order::LimitsFirst, Root::Limited),
            (Order::TipFirst, Root::Limited),
            (Order::Interleaved, Root::Free),
        ] {
            for mode in [SolveMode::Block, SolveMode::Rows] {
                let setting = Setting {
                    substeps: 20,
                    iterations: 10,
                    mode,
                    direct: false,
                };
                let ch = chain::<f64, M64>(masses, setting, order, root, G_DOWN, DT);
                let bodies = ch.world.bodies();
                // Rows: per body slot (body index, gradient row); blocks of row indices.
                let mut rows: Vec<Vec<(usize, nalgebra::SVector<f64, 6>)>> = Vec::new();
                let mut blocks: Vec<std::ops::Range<usize>> = Vec::new();
                for k in 0..ch.world.constraint_count() {
                    let con = ch.world.constraint(ConstraintId(k)).unwrap();
                    let mut eval = ConstraintEval::default();
                    con.evaluate(bodies, &mut eval);
                    let start = rows.len();
                    for j in 0..con.dim() {
                        let mut r = Vec::new();
                        for (s, id) in con.bodies().iter().enumerate() {
                            if let Some(id) = id {
                                r.push((id.0, eval.gradient[s].row(j).transpose()));
                            }
                        }
                        rows.push(r);
                    }
                    let block = mode == SolveMode::Block && con.dim() > 1;
                    if block {
                        blocks.push(start..rows.len());
                    } else {
                        blocks.extend((start..rows.len()).map(|i| i..i + 1));
                    }
                }
                let w: Vec<nalgebra::SVector<f64, 6>> = bodies
                    .iter()
                    .map(|b| {
                        let i = b.inv_inertia();
                        let m = b.inv_mass();
                        nalgebra::SVector::<f64, 6>::from([m, m, m, i.x, i.y, i.z])
                    })
                    .collect();
                let n = rows.len();
                let a = DMatrix::<f64>::from_fn(n, n, |i, j| {
                    let mut acc = 0.0;
                    for (bi, gi) in &rows[i] {
                        for (bj, gj) in &rows[j] {
                            if bi == bj {
                                acc += gi.component_mul(&w[*bi]).dot(gj);
                            }
                        }
                    }
                    acc
                });
                // Block lower triangle (with the diagonal blocks) and strict upper part.
                let mut block_of = vec![0; n];
                for (bk, r) in blocks.iter().enumerate() {
                    for i in r.clone() {
                        block_of[i] = bk;
                    }
                }
                let lower = DMatrix::<f64>::from_fn(n, n, |i, j| {
                    if block_of[j] <= block_of[i] {
                        a[(i, j)]
                    } else {
                        0.0
                    }
                });
                let upper = &a - &lower;
                let iteration = -lower.lu().solve(&upper).unwrap();
                let spectral_radius = |m: &DMatrix<f64>| {
                    m.complex_eigenvalues()
                        .iter()
                        .map(|z| z.norm())
                        .fold(0.0f64, f64::max)
                };
                let rho = spectral_radius(&iteration);
                // The in-plane rows (x, y positions and the limit rows, which act on
                // x, y, θ_z) are decoupled from the out-of-plane ones at the straight
                // state, and so is the iteration: its spectrum is the union of both.
                let planar: Vec<usize> = (0..n)
                    .filter(|&i| {
                        rows[i]
                            .iter()
                            .any(|(_, g)| g[0] != 0.0 || g[1] != 0.0 || g[5] != 0.0)
                    })
                    .collect();
                let sub = |m: &DMatrix<f64>| {
                    DMatrix::<f64>::from_fn(planar.len(), planar.len(), |i, j| {
                        m[(planar[i], planar[j])]
                    })
                };
                let rho_planar = spectral_radius(&sub(&iteration));
                // Reduction of a fixed error vector in the A-norm after k sweeps.
                let a_norm = |e: &nalgebra::DVector<f64>| e.dot(&(&a * e)).sqrt();
                let mut e = nalgebra::DVector::<f64>::from_fn(n, |i, _| {
                    ((i * 7919 % 61) as f64 - 30.0) / 30.0
                });
                let e0 = a_norm(&e);
                let mut reduction = Vec::new();
                for k in 1..=1000 {
                    e = &iteration * e;
                    if [10, 100, 1000].contains(&k) {
                        reduction.push(a_norm(&e) / e0);
                    }
                }
                let cond = |m: DMatrix<f64>| {
                    let eig = m.symmetric_eigenvalues();
                    let (lo, hi) = eig
                        .iter()
                        .fold((f64::INFINITY, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
                    hi / lo
                };
                let cond_a = cond(a.clone());
                // With Jacobi scaling D^-1/2 A D^-1/2 (unit diagonal).
                let cond_scaled = cond(DMatrix::<f64>::from_fn(n, n, |i, j| {
                    a[(i, j)] / (a[(i, i)] * a[(j, j)]).sqrt()
                }));
                eprintln!(
                    "{masses:?} {order:?} root {root:?} {}: {n} rows, cond(A) {:.2e} (Jacobi-scaled {:.2e}), GS ρ = 1 − {:.3e} \
                     (in-plane rows: 1 − {:.3e}), sweeps for 1e-3: {:.0}; error left after 10/100/1000 \
                     sweeps {:.3e} {:.3e} {:.3e}",
                    mode.name(),
                    cond_a,
                    cond_scaled,
                    1.0 - rho,
                    1.0 - rho_planar,
                    (1e-3f64).ln() / rho.ln(),
                    reduction[0],
                    reduction[1],
                    reduction[2]
                );
            }
        }
    }
}

/// One run chosen by the environment variable `PROBE` = "masses root mode substeps
/// iterations order scalar representation [gravity [dt]]", e.g.
/// `PROBE="alt limited block 20 10 inter f64 matrix"`: masses alt | altheavy | light,
/// root limited | free, mode block | rows | direct (the direct group), order inter | hinges | limits | tip, scalar
/// f64 | f32, representation matrix | quat, gravity down | tilt (10° out of the plane),
/// dt in s. Does nothing without `PROBE`.
#[test]
#[ignore]
fn probe() {
    let Ok(p) = std::env::var("PROBE") else {
        return;
    };
    let w: Vec<&str> = p.split_whitespace().collect();
    let masses = match w[0] {
        "alt" => Masses::Alternating,
        "altheavy" => Masses::AlternatingHeavyRoot,
        _ => Masses::Light,
    };
    let root = if w[1] == "limited" {
        Root::Limited
    } else {
        Root::Free
    };
    let mode = if w[2] == "rows" {
        SolveMode::Rows
    } else {
        SolveMode::Block
    };
    let setting = Setting {
        substeps: w[3].parse().unwrap(),
        iterations: w[4].parse().unwrap(),
        mode,
        direct: w[2] == "direct",
    };
    let order = match w[5] {
        "inter" => Order::Interleaved,
        "hinges" => Order::HingesFirst,
        _ => Order::LimitsFirst,
    };
    let order = if w[5] == "tip" {
        Order::TipFirst
    } else {
        order
    };
    // Optional: gravity "down" (default) or "tilt" (10° out of the plane, towards −z);
    // time step in s (default DT).
    let gravity = match w.get(8) {
        Some(&"tilt") => {
            9.81 * Vector3::new(
                0.0,
                -(10f64.to_radians().cos()),
                -(10f64.to_radians().sin()),
            )
        }
        _ => G_DOWN,
    };
    let dt = w.get(9).map_or(DT, |x| x.parse().unwrap());
    let t = std::time::Instant::now();
    let s = match (w[6], w[7]) {
        ("f64", "matrix") => simulate(
            &mut chain::<f64, M64>(masses, setting, order, root, gravity, dt),
            DURATION,
        ),
        ("f64", _) => simulate(
            &mut chain::<f64, Q64>(masses, setting, order, root, gravity, dt),
            DURATION,
        ),
        ("f32", "matrix") => simulate(
            &mut chain::<f32, M32>(masses, setting, order, root, gravity, dt),
            DURATION,
        ),
        _ => simulate(
            &mut chain::<f32, Q32>(masses, setting, order, root, gravity, dt),
            DURATION,
        ),
    };
    print(&format!("{p} ({:.2} s)", t.elapsed().as_secs_f64()), &s);
}

/// The total energy every 10 s over 120 s at 20 substeps × FAST_ITERATIONS, both mass
/// cases, f64 matrices (about a minute in the test profile).
#[test]
#[ignore]
fn study_energy_long_run() {
    for masses in [Masses::Alternating, Masses::Light] {
        let setting = Setting {
            substeps: SUBSTEPS,
            iterations: FAST_ITERATIONS,
            mode: SolveMode::Block,
            direct: false,
        };
        let mut ch = chain::<f64, M64>(
            masses,
            setting,
            Order::Interleaved,
            Root::Limited,
            G_DOWN,
            DT,
        );
        let e0 = energy(&ch.world);
        let mut line = format!("{masses:?}: E − E(0) (J) every 10 s:");
        let mut worst = f64::NEG_INFINITY;
        for _ in 0..12 {
            let start = energy(&ch.world) - e0;
            let s = simulate(&mut ch, 10.0);
            worst = worst.max(start + s.energy_rise);
            line += &format!(" {:.4e}", energy(&ch.world) - e0);
        }
        eprintln!("{line}; largest over the run {worst:.4e}");
    }
}
