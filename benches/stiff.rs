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
//! model's instance are made before the timed runs, as diffsol's benchmark builds its problem),
//! and for the model simulated whole through the `eqm` library ("sim": everything a run does
//! after compiling, so the difference to "model" is the fixed cost of a simulation). Words given after `--` select rows
//! (`cargo bench --bench stiff -- HIRES bdf jac`). The same
//! problems in SciPy (Radau, BDF, LSODA) and SUNDIALS CVODE: `python3 benches/stiff_compare.py`.
//! Before them, the chain of masses (`crates/eqm-testkit/src/chain.rs`) at 32 to 20,000 states: see
//! `chain_rows`.

mod common;

use eqm_testkit::{chain, chain_system, stiff};

use chain::Chain;
use chain_system::ChainSystem;
use eqm_integrators::{Atol, Method, Options, Output, Stats, integrate, stepper_for};
use std::ops::ControlFlow;
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
    chain_rows(&filters);
    for (problem, atol_factor) in &mut problems {
        let rows: Vec<(&str, Method)> = [Method::Bdf, Method::Radau5, Method::Auto]
            .into_iter()
            .flat_map(|m| [("dq", m.clone()), ("jac", m.clone()), ("model", m.clone()), ("sim", m)])
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
        // The "sim" path's model, compiled when its first row runs and shared by its rows.
        let mut sim_model = None;
        for (path, method) in rows {
            for rtol in [1e-4, 1e-6, 1e-8] {
                let atol = rtol * atol_factor * if problem.name == "Robertson" { 1e-4 } else { 1.0 };
                if path == "sim" {
                    let model = sim_model.get_or_insert_with(|| compile_sim(problem));
                    sim_row(model, problem, &method, rtol, atol);
                    continue;
                }
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
                    print_failed(problem.name, &method, path, rtol);
                    continue;
                };
                let error = common::scaled_error(&x, &problem.reference, rtol, atol);
                let label = format!("{} t={}", problem.name, problem.t_end);
                print_row(&label, &method, path, rtol, best, &stats, Some(error));
            }
        }
    }
}

/// The "sim" path: the problem's model simulated whole through the `eqm` library
/// (`Model::simulate`, what `eqm run` and an embedding program call: instances, initialization,
/// the output rows), compiled once and not timed, with one output row at the end time. The
/// time beyond the "model" row's is the fixed cost of a simulation. No error is printed: the
/// columns of the result are the model's variables, not the problem's state vector.
fn sim_row(model: &mut eqm::Model, problem: &StiffProblem, method: &Method, rtol: f64, atol: f64) {
    let settings = eqm::RunSettings {
        stop: Some(problem.t_end),
        interval: Some(problem.t_end),
        rtol: Some(rtol),
        atol: Some(atol),
        method: Some(method.clone()),
        ..eqm::RunSettings::default()
    };
    let mut best = f64::INFINITY;
    let mut outcome = None;
    for _ in 0..20 {
        let start = Instant::now();
        outcome = model.simulate(&settings).ok();
        best = best.min(start.elapsed().as_secs_f64() * 1e3);
    }
    let Some(result) = outcome else {
        print_failed(problem.name, method, "sim", rtol);
        return;
    };
    let label = format!("{} t={}", problem.name, problem.t_end);
    print_row(&label, method, "sim", rtol, best, &result.summary.stats, None);
}

/// The "sim" path's model: the problem's `.eqm` text compiled through the `eqm` library.
fn compile_sim(problem: &StiffProblem) -> eqm::Model {
    let files = [("stiff.eqm".to_string(), problem.model.to_string())];
    let mut session = eqm::Session::with_sources(&files, &[], None);
    session
        .compile(None, &eqm::ModelOptions::default())
        .unwrap_or_else(|| panic!("{}: {}", problem.name, session.render_diagnostics(false)))
}

/// One row of the table: the best time in ms, the counters and, where a reference measures it,
/// the error.
fn print_row(label: &str, method: &Method, path: &str, rtol: f64, best: f64, stats: &Stats, error: Option<f64>) {
    print!(
        "{label:<26} {:>6} {path:>5} {rtol:>7.0e} {best:>10.3} {:>7} {:>7} {:>6} {:>6}",
        method.name(),
        stats.steps,
        stats.rhs_evals,
        stats.jacobians,
        stats.factorizations
    );
    match error {
        Some(error) => println!(" {error:>10.2e}"),
        None => println!(),
    }
}

/// The row of a solve that failed: its label and no numbers.
fn print_failed(label: &str, method: &Method, path: &str, rtol: f64) {
    println!("{label:<26} {:>6} {path:>5} {rtol:>7.0e} failed", method.name());
}

/// The chain of masses at N = 16, 100, 1000 and 10,000 (32 to 20,000 states) to t = 100 with BDF
/// (and Radau IIA up to N = 1000) at rtol 1e-6 and 1e-8 (atol = rtol): wall time (best of several runs), the
/// counters, and the largest absolute error against the closed form. Paths: "dq" and "jac" give
/// the Jacobian's pattern (BDF's sparse LU where `linalg::prefers_sparse` chooses it),
/// "dense" gives the exact Jacobian without a pattern (dense LU at every size; up to N = 100).
/// Selected by the words
/// `chain`, the size `N=…:`, the method and the path (`-- chain N=1000: bdf jac`).
fn chain_rows(filters: &[String]) {
    for n in [16usize, 100, 1000, 10_000] {
        // The closed form costs O(n²): computed once per size, and only for a selected row.
        let mut exact = None;
        for method in [Method::Bdf, Method::Radau5] {
            // Radau IIA factors a real and a complex system per Jacobian, each step costing
            // about four of BDF's here: at N = 10,000 its rows would take most of this bench.
            if method == Method::Radau5 && n > 1000 {
                continue;
            }
            for path in ["dq", "jac", "dense"] {
                if path == "dense" && n > 100 {
                    continue;
                }
                // "N=100:" selects one size ("N=100" alone also matches N=1000).
                let label = format!("chain N={n}: {} {path}", method.name());
                if !filters.iter().all(|f| label.contains(f.as_str())) {
                    continue;
                }
                let mut system = ChainSystem::new(Chain::standard(n), path != "dq", path != "dense");
                let x0 = system.chain.initial_state();
                for rtol in [1e-6, 1e-8] {
                    let options = Options {
                        rtol,
                        atol: Atol::Scalar(rtol),
                        ..Options::default()
                    };
                    let runs = if n >= 10_000 { 2 } else { 5 };
                    let mut best = f64::INFINITY;
                    let mut outcome = None;
                    for _ in 0..runs {
                        let start = Instant::now();
                        let mut stepper = stepper_for(&method, &options);
                        let mut last = Vec::new();
                        let result = integrate(
                            &mut system,
                            stepper.as_mut(),
                            0.0,
                            &x0,
                            100.0,
                            &Output::Times(vec![100.0]),
                            |_, x| {
                                last = x.to_vec();
                                ControlFlow::Continue(())
                            },
                        );
                        best = best.min(start.elapsed().as_secs_f64() * 1e3);
                        outcome = result.ok().map(|_| (last, stepper.stats()));
                    }
                    let Some((x, stats)) = outcome else {
                        print_failed(&format!("chain N={n}"), &method, path, rtol);
                        continue;
                    };
                    let exact = exact.get_or_insert_with(|| system.chain.exact(100.0));
                    let error = common::max_abs_difference(&x, exact);
                    print_row(
                        &format!("chain N={n} t=100"),
                        &method,
                        path,
                        rtol,
                        best,
                        &stats,
                        Some(error),
                    );
                }
            }
        }
    }
}
