//! `eqm check` scale on a flat model written out by hand: N scalar declarations and N scalar
//! equations, one per line (`Real x1; ... equation x1 = 1; ...`).
//!
//! Run with `cargo bench --bench check_lines [N...]` (release; default N = 10 000 and 100 000).
//! Prints the wall time of each stage of `Session::check` and the ratio t(10N)/t(N) of the
//! whole check. Goal: linear scaling. A class with many components once took time quadratic in
//! their number (every type lookup scanned all elements of the class for `extends` clauses),
//! which this shape exposes and the mass-spring chain of `flatten_chain` does not.

mod common;

fn main() {
    let sizes: Vec<usize> = {
        let given: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
        if given.is_empty() { vec![10_000, 100_000] } else { given }
    };
    let mut previous: Option<(usize, f64)> = None;
    for n in sizes {
        let mut text = String::with_capacity(n * 30);
        text.push_str("model Big\n");
        for i in 1..=n {
            text.push_str(&format!("  Real x{i};\n"));
        }
        text.push_str("equation\n");
        for i in 1..=n {
            text.push_str(&format!("  x{i} = {i};\n"));
        }
        text.push_str("end Big;\n");
        let (total, stages) = common::timed_check("big.eqm", text, None);
        let stages = common::stage_list(&stages);
        let ratio = previous.map_or(String::from("-"), |(m, t)| {
            format!("{:.2} (x{})", total / t, n / m.max(1))
        });
        println!("N = {n:>8}: check {total:>9.1} ms, ratio {ratio}; {}", stages);
        previous = Some((n, total));
    }
}
