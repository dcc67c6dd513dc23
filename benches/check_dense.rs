//! `eqm check` scale on a neural-network-like model whose parameter matrices are built by array
//! constructors: `n` hidden neurons, `W1[n, 2]`, `W2[n, n]` and `W3[2, n]` from constructors,
//! `h = tanh(W1*x + b1)`, `g = tanh(W2*h)`, `der(x) = W3*g - x`, `y = sum(g)`; about n^2 flat
//! multiply-adds.
//!
//! Run with `cargo bench --bench check_dense [n...]` (release; default n = 16, 32, 64 and 128).
//! Prints the wall time of each stage of `Session::check`, the rest of its time (the run of the
//! initialization, with the symbolic Jacobian it builds) and the ratio t(2n)/t(n) of the whole
//! check. Goal: a ratio near 4 (the flat size). Flattening once took time n^4 (each element
//! of an n x n matrix evaluated the whole constructor again); `structural` solved every row
//! `g[i] = tanh(...)` once for each of the n unknowns it reads, and the symbolic Jacobian of the
//! initialization run differentiated each row once per variable, both about n^3. Now a row is
//! walked once for the unknowns it cannot be solved for, and differentiated once in reverse
//! mode for all its variables.

use eqm_testkit::models::dense_network;

mod common;

fn main() {
    let sizes: Vec<usize> = {
        let given: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
        if given.is_empty() { vec![16, 32, 64, 128] } else { given }
    };
    let mut previous: Option<(usize, f64)> = None;
    for n in sizes {
        let (total, mut stages) = common::timed_check("net.eqm", dense_network(n), None);
        // `check` also runs the initialization once (which builds the symbolic Jacobian when
        // the method needs one); the stages do not time it, so it is what remains of the total.
        let staged: f64 = stages.iter().map(|(_, ms)| ms).sum();
        stages.push(("rest (initialization run)".to_string(), total - staged));
        let ratio = previous.map_or(String::from("-"), |(m, t)| {
            format!("{:.2} (x{})", total / t, n / m.max(1))
        });
        println!(
            "n = {n:>5}: check {total:>9.1} ms, ratio {ratio}; {}",
            common::stage_list(&stages)
        );
        previous = Some((n, total));
    }
}
