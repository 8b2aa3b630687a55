//! One factorisation and one solve of a block-banded SPD matrix
//! (`lie_xpbd::rod::banded`, paper Section 8.2), for instruction counts under callgrind:
//!
//! ```text
//! cargo build --release --example rod_banded_profile
//! valgrind --tool=callgrind --toggle-collect='*measured_factor_solve*' \
//!     target/release/examples/rod_banded_profile 1000 3 f64
//! callgrind_annotate --inclusive=yes callgrind.out.<pid>
//! ```
//!
//! Arguments: number of block rows n (default 1000), block bandwidth p (default 3),
//! scalar (`f64` (default), `f32`). The matrix is diagonally dominant with entries in
//! [−1, 1]. Only `measured_factor_solve` (one `factor` and one `solve_in_place`) is
//! collected with the toggle above.

use lie_xpbd::linalg::banded::{BandScalar, Block, BlockBandedMatrix};
use std::hint::black_box;

#[inline(never)]
fn measured_factor_solve<T: BandScalar>(m: &mut BlockBandedMatrix<T>, x: &mut [T]) {
    m.factor().expect("the matrix is SPD");
    m.solve_in_place(x).expect("the solution is finite");
    black_box(&*x);
}

fn run<T: BandScalar>(n: usize, p: usize) {
    let mut state = 0x1234_5678u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        T::cast(2.0 * ((state >> 11) as f64 / (1u64 << 53) as f64) - 1.0)
    };
    let mut m = BlockBandedMatrix::<T>::new(n, p).expect("a valid shape");
    let diag = T::cast(1.0 + (6 * (2 * p + 1)) as f64);
    for i in 0..n {
        for j in i.saturating_sub(p)..=i {
            let mut b = Block::<T>::from_fn(|_, _| next());
            if i == j {
                for r in 0..6 {
                    b[(r, r)] = diag;
                }
            }
            m.add_block(i, j, &b).expect("in band");
        }
    }
    let mut x: Vec<T> = (0..6 * n).map(|_| next()).collect();
    measured_factor_solve(&mut m, &mut x);
    println!("{} n = {n} p = {p}: x[0] = {}", T::NAME, x[0]);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.into());
    let n: usize = arg(1, "1000").parse().expect("a number of block rows");
    let p: usize = arg(2, "3").parse().expect("a block bandwidth");
    match arg(3, "f64").as_str() {
        "f32" => run::<f32>(n, p),
        _ => run::<f64>(n, p),
    }
}
