//! Work-precision of the stiff solvers on the stiff test set.
//!
//! Run with `cargo bench --bench stiff`. For each problem (Robertson to t = 40 and 1e5, HIRES,
//! Van der Pol with μ = 1000, the Oregonator) and rtol 1e-4, 1e-6, 1e-8 (atol scaled per
//! problem), prints the wall time (best of several runs), the steps, the right-hand-side and
//! Jacobian evaluations, LU factorisations and the achieved error at the end time against the
//! reference (published values; for Robertson to 1e5 a BDF run at rtol 1e-12), for the
//! hand-written right-hand side with difference-quotient Jacobians ("dq"), with the hand-written
//! exact Jacobian ("jac", what the diffsol benchmark in `benches/diffsol` gives diffsol, so
//! these rows compare the solvers alone), and for the problem written as an `.eqm` model,
//! compiled with its symbolic Jacobian ("model", what `eqm run` does; the compilation and the
//! model's instance are made before the timed runs, as diffsol's benchmark builds its problem). Words given after `--` select rows
//! (`cargo bench --bench stiff -- HIRES bdf jac`). The same
//! problems in SciPy (Radau, BDF, LSODA) and SUNDIALS CVODE: `python3 benches/stiff_compare.py`.

#[path = "../tests/support/pipeline.rs"]
mod pipeline;
#[path = "../tests/support/stiff.rs"]
mod stiff;

use eqm_integrators::{Method, Stats};
use std::time::Instant;
use stiff::StiffProblem;

fn solve(method: &Method, problem: &StiffProblem, rtol: f64, atol: f64) -> Option<(Vec<f64>, Stats)> {
    stiff::solve(method, problem, rtol, atol).ok()
}

/// The hand-written right-hand side with difference-quotient Jacobians ("dq") or with the
/// hand-written exact Jacobian ("jac", what the diffsol benchmark gives diffsol).
fn solve_rust(method: &Method, problem: &StiffProblem, rtol: f64, atol: f64, path: &str) -> Option<(Vec<f64>, Stats)> {
    stiff::solve_rust(method, problem, rtol, atol, path == "jac").ok()
}

fn main() {
    // Words given on the command line select rows: each must occur in "problem method path"
    // (`cargo bench --bench stiff -- HIRES bdf jac`), for profiling one solver on one problem.
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    // (problem, atol relative to rtol). Robertson to 1e5 has no published reference: it is
    // computed (a long BDF run at rtol 1e-12) when one of its rows is selected.
    let mut problems = [
        (stiff::robertson(40.0), 1e-6),
        (stiff::robertson(1e5), 1e-6),
        (stiff::hires(), 1e-4),
        (stiff::van_der_pol(), 1.0),
        (stiff::oregonator(), 1.0),
    ];
    println!(
        "{:<26} {:>6} {:>5} {:>7} {:>10} {:>7} {:>7} {:>6} {:>6} {:>10}",
        "problem", "method", "path", "rtol", "time ms", "steps", "f evals", "jac", "LU", "error"
    );
    for (problem, atol_factor) in &mut problems {
        let rows: Vec<(&str, Method)> = [Method::Bdf, Method::Radau5, Method::Auto]
            .into_iter()
            .flat_map(|m| [("dq", m.clone()), ("jac", m.clone()), ("model", m)])
            .filter(|(path, method)| {
                let label = format!("{} {} {path}", problem.name, method.name());
                filters.iter().all(|f| label.contains(f.as_str()))
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        if problem.reference.is_empty() {
            problem.reference = solve(&Method::Bdf, problem, 1e-12, 1e-22).expect("the reference run").0;
        }
        let (problem, atol_factor) = (&*problem, *atol_factor);
        // The model path: the problem compiled from its `.eqm` text, right-hand side and
        // symbolic Jacobian in native code (compiled once, not timed), as `eqm run` runs it.
        let program = stiff::compile_model(problem);
        let native = std::sync::Arc::new(eqm_sim::native::NativeCode::compile(&program).expect("native code"));
        for (path, method) in rows {
            for rtol in [1e-4, 1e-6, 1e-8] {
                let atol = rtol * atol_factor * if problem.name == "Robertson" { 1e-4 } else { 1.0 };
                let mut best = f64::INFINITY;
                let mut outcome = None;
                // The model's instance is made once, as the diffsol benchmark builds its problem
                // once: every run integrates afresh from the initial values.
                let mut system = (path == "model").then(|| stiff::ModelSystem::new(&program, &native));
                for _ in 0..20 {
                    let start = Instant::now();
                    outcome = match &mut system {
                        None => solve_rust(&method, problem, rtol, atol, path),
                        Some(system) => stiff::solve_model(&method, system, problem, rtol, atol).ok(),
                    };
                    best = best.min(start.elapsed().as_secs_f64() * 1e3);
                }
                let Some((x, stats)) = outcome else {
                    println!(
                        "{:<26} {:>6} {:>5} {rtol:>7.0e} failed",
                        problem.name,
                        method.name(),
                        path
                    );
                    continue;
                };
                let error = x
                    .iter()
                    .zip(&problem.reference)
                    .map(|(a, b)| (a - b).abs() / (b.abs() + atol / rtol))
                    .fold(0.0, f64::max);
                println!(
                    "{:<26} {:>6} {:>5} {rtol:>7.0e} {best:>10.3} {:>7} {:>7} {:>6} {:>6} {error:>10.2e}",
                    format!("{} t={}", problem.name, problem.t_end),
                    method.name(),
                    path,
                    stats.steps,
                    stats.rhs_evals,
                    stats.jacobians,
                    stats.factorizations
                );
            }
        }
    }
}
