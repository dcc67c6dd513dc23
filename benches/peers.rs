//! EQM's side of the side-by-side benchmark against SciPy, SUNDIALS CVODE and diffsol
//! (`bash benches/peers/run` runs all four and prints one table; `benches/README.md` describes
//! it).
//!
//! Input: the problems of the comparison, written out here or taken from the crate `eqm-testkit`: Van
//! der Pol with μ = 1000 (Hairer's scaling, to t = 2), Robertson to t = 1e5 and HIRES
//! (`crates/eqm-testkit/src/stiff.rs`), the regularised stick-slip oscillator of
//! `examples/stick_slip_regularised.eqm` (x0 = 1e-3, to t = 12) and the chain of N = 100, 1000
//! and 10,000 masses of `crates/eqm-testkit/src/chain.rs` (to t = 100). Output: one CSV row per
//! (problem, rtol, method, path) on standard output, with the best wall time of several solves,
//! the achieved error at the end time and the accepted steps; progress goes to standard error.
//!
//! Paths: "jac" integrates the hand-written right-hand side through the `eqm-integrators` API
//! with the hand-written exact Jacobian (the chain's as a sparse pattern with its values, so the
//! methods that can factor sparse iteration matrices do), which compares integrators alone; "model" (the chain
//! only) compiles the chain's `.eqm` text with the `eqm` library and simulates the compiled
//! model, which adds what a user of EQM pays for the compiled model (the compilation itself
//! happens before the timed runs and is reported once on standard error).
//!
//! The error is max_i |x_i − ref_i| / (|ref_i| + atol/rtol) at the end time, as in
//! `benches/stiff.rs`. The references: the published ones of Van der Pol and HIRES; for
//! Robertson to 1e5 and the stick-slip oscillator, SciPy's Radau at rtol 1e-13 (stored below;
//! SciPy's BDF and CVODES at rtol 1e-13 agree with Robertson's within 1e-10 relative, SciPy's
//! DOP853 and CVODES with the stick-slip oscillator's within 4e-11, so smaller errors only
//! measure the distance to the reference solver); for the chain its closed form
//! (`Chain::exact`).
//!
//! Deliberately not here: the peers themselves (`benches/peers/peers.py`, `benches/diffsol`),
//! the table (`benches/peers/table.py`), and any check of EQM's results beyond reporting the
//! error: a failed solve is a row with its error message, never a number.

mod common;

use eqm_testkit::{chain, chain_system, stiff};

use chain::Chain;
use chain_system::ChainSystem;
use eqm_integrators::{Atol, Method, OdeSystem, Options, Output, integrate, stepper_for};
use std::ops::ControlFlow;
use std::time::Instant;
use stiff::StiffProblem;

/// The relative tolerances, loosest first: a solve slower than [`SKIP_AFTER_S`] skips the
/// tighter ones of its row.
const RTOLS: [f64; 4] = [1e-4, 1e-6, 1e-8, 1e-10];
/// A solve that took longer than this (seconds) skips the tighter tolerances of its method,
/// since each step of tolerance costs several times more and the next would pass a minute.
const SKIP_AFTER_S: f64 = 15.0;

/// One problem of the comparison.
enum Problem {
    /// A small problem with its dense exact Jacobian; `stiff_only` keeps explicit methods off
    /// problems on which they would need millions of steps.
    Small {
        problem: StiffProblem,
        atol_factor: f64,
        stiff_only: bool,
    },
    Chain(Chain),
}

/// The regularised stick-slip oscillator, `y'' = −(2/π) atan((y' − q)/x0) − y` with q = 0.4 and
/// x0 = 1e-3, from rest to t = 12 (`examples/stick_slip_regularised.eqm`).
fn stick_slip() -> StiffProblem {
    const Q: f64 = 0.4;
    const X0: f64 = 1e-3;
    StiffProblem {
        name: "Stick-slip (x0 = 1e-3)",
        x0: vec![0.0, 0.0],
        t_end: 12.0,
        rhs: |_, y, f| {
            f[0] = y[1];
            f[1] = -2.0 / std::f64::consts::PI * ((y[1] - Q) / X0).atan() - y[0];
        },
        jacobian: |_, y, j| {
            let u = (y[1] - Q) / X0;
            j[(0, 0)] = 0.0;
            j[(0, 1)] = 1.0;
            j[(1, 0)] = -1.0;
            j[(1, 1)] = -2.0 / std::f64::consts::PI / X0 / (1.0 + u * u);
        },
        // SciPy's Radau at rtol 1e-13, atol 1e-15.
        reference: vec![1.044_859_120_664_063, -0.355_428_806_002_232_03],
        model: include_str!("../examples/stick_slip_regularised.eqm"),
    }
}

fn problems() -> Vec<Problem> {
    let mut robertson = stiff::robertson(1e5);
    // SciPy's Radau at rtol 1e-13, atol 1e-25.
    robertson.reference = vec![
        0.017_865_921_142_099_84,
        7.274_751_468_436_486e-8,
        0.982_134_006_110_383_4,
    ];
    let small = |problem, atol_factor, stiff_only| Problem::Small {
        problem,
        atol_factor,
        stiff_only,
    };
    vec![
        small(stiff::van_der_pol(), 1.0, true),
        // atol = rtol · 1e-10, as benches/stiff.rs scales it for Robertson.
        small(robertson, 1e-10, true),
        small(stiff::hires(), 1e-4, true),
        small(stick_slip(), 1.0, false),
        Problem::Chain(Chain::standard(100)),
        Problem::Chain(Chain::standard(1000)),
        Problem::Chain(Chain::standard(10_000)),
    ]
}

/// Checks the chain's hand-written Jacobian against central differences of its right-hand side
/// (exact up to rounding: the chain is linear), so a wrong pattern cannot pass as a fast solver.
fn check_chain_jacobian(system: &mut ChainSystem) {
    let dim = system.dim();
    let x: Vec<f64> = (0..dim).map(|i| ((i * 7919) % 101) as f64 / 101.0).collect();
    let mut dense = nalgebra::DMatrix::zeros(dim, dim);
    system.jacobian(0.0, &x, &mut dense);
    let (mut fp, mut fm) = (vec![0.0; dim], vec![0.0; dim]);
    // A few columns suffice: every column has the same structure away from the ends.
    for j in [0, 1, dim / 2 - 1, dim / 2, dim / 2 + 1, dim - 2, dim - 1] {
        let (mut xp, mut xm) = (x.clone(), x.clone());
        xp[j] += 0.5;
        xm[j] -= 0.5;
        system.chain.rhs(&xp, &mut fp);
        system.chain.rhs(&xm, &mut fm);
        for i in 0..dim {
            let fd = fp[i] - fm[i];
            assert!(
                (fd - dense[(i, j)]).abs() <= 1e-9 * (1.0 + fd.abs()),
                "chain {}: d f{i} / d x{j} is {} by hand, {fd} by differences",
                system.chain.n,
                dense[(i, j)]
            );
        }
    }
}

/// Integrates `sys` from `x0` at t = 0 to `t_end`: the state there, the accepted steps and
/// whether the Jacobians were sparse.
fn solve_system(
    method: &Method,
    sys: &mut dyn OdeSystem,
    x0: &[f64],
    t_end: f64,
    rtol: f64,
    atol: f64,
) -> Result<(Vec<f64>, usize, bool), String> {
    let options = Options {
        rtol,
        atol: Atol::Scalar(atol),
        // Enough for rtol 1e-10 on every problem here; the default limit is a safeguard for
        // user models, not a property of the methods.
        max_steps: 50_000_000,
        ..Options::default()
    };
    let mut stepper = stepper_for(method, &options);
    let mut last = Vec::new();
    integrate(
        sys,
        stepper.as_mut(),
        0.0,
        x0,
        t_end,
        &Output::Times(vec![t_end]),
        |_, x| {
            last = x.to_vec();
            ControlFlow::Continue(())
        },
    )
    .map_err(|e| e.to_string())?;
    let stats = stepper.stats();
    Ok((last, stats.steps, stats.sparse_jacobians > 0))
}

/// The chain's `.eqm` text compiled with the `eqm` library, ready to simulate.
fn compile_chain(chain: &Chain) -> Result<eqm::Model, String> {
    let files = [("chain.eqm".to_string(), chain.eqm_source())];
    let mut session = eqm::Session::with_sources(&files, &[], None);
    session
        .compile(None, &eqm::ModelOptions::default())
        .ok_or_else(|| session.render_diagnostics(false))
}

/// Simulates the compiled chain to `t_end` with one output row at the end: the states `s`, `v`
/// there (in the order of `Chain`), the accepted steps and whether the Jacobians were sparse.
fn simulate_chain(
    model: &mut eqm::Model,
    names: &[String],
    method: &Method,
    t_end: f64,
    rtol: f64,
    atol: f64,
) -> Result<(Vec<f64>, usize, bool), String> {
    let settings = eqm::RunSettings {
        stop: Some(t_end),
        interval: Some(t_end),
        rtol: Some(rtol),
        atol: Some(atol),
        method: Some(method.clone()),
        variables: Some(names.to_vec()),
        ..eqm::RunSettings::default()
    };
    let result = model.simulate(&settings).map_err(|e| e.to_string())?;
    let (_, last) = result.row(result.len() - 1).ok_or("the run produced no row")?;
    // The columns by name, so that the order of the result does not matter.
    let position: std::collections::HashMap<&str, usize> = result
        .columns()
        .iter()
        .enumerate()
        .map(|(i, column)| (column.name.as_str(), i))
        .collect();
    let state = names
        .iter()
        .map(|name| {
            position
                .get(name.as_str())
                .map(|&i| last[i])
                .ok_or(format!("no column {name}"))
        })
        .collect::<Result<Vec<f64>, String>>()?;
    let stats = &result.summary.stats;
    Ok((state, stats.steps, stats.sparse_jacobians > 0))
}

/// The timing protocol shared by every tool of the comparison: solve repeatedly and keep the
/// best wall time; at least 3 solves unless they take more than 10 s together, more while they
/// take less than 1 s together, at most 10. Returns the number of solves, the best time in ms
/// and the last outcome (the first failure ends the repetition).
fn best_of<T>(mut solve: impl FnMut() -> Result<T, String>) -> (usize, f64, Result<T, String>) {
    let (mut runs, mut total, mut best) = (0, 0.0, f64::INFINITY);
    loop {
        let start = Instant::now();
        let outcome = solve();
        let elapsed = start.elapsed().as_secs_f64();
        runs += 1;
        total += elapsed;
        best = best.min(elapsed);
        let more = outcome.is_ok() && runs < 10 && (total < 1.0 || (runs < 3 && total < 10.0));
        if !more {
            return (runs, best * 1e3, outcome);
        }
    }
}

/// One row of the CSV (see `benches/peers/table.py` for the columns).
struct Row<'a> {
    problem: &'a str,
    rtol: f64,
    atol: f64,
    method: String,
    jacobian: &'a str,
}

impl Row<'_> {
    fn print(&self, runs: usize, time_ms: f64, error: f64, steps: usize, status: &str) {
        self.print_with(&format!("{runs},{time_ms:.4},{error:.3e},{steps}"), status);
    }

    /// A row without numbers: a skipped or failed solve.
    fn print_status(&self, status: &str) {
        self.print_with("0,,,", status);
    }

    /// `numbers`: the columns runs, time_ms, error and steps.
    fn print_with(&self, numbers: &str, status: &str) {
        println!(
            "{},{:.3e},{:.3e},EQM,{},{},{numbers},{}",
            self.problem,
            self.rtol,
            self.atol,
            self.method,
            self.jacobian,
            status.replace([',', '\n'], ";")
        );
    }
}

/// The explicit methods EQM has: dopri5, and the Tsitouras and Verner pairs when this version
/// of `eqm-integrators` names them.
fn explicit_methods() -> Vec<Method> {
    let mut methods = vec![Method::Dopri5];
    methods.extend(
        ["tsit5", "vern6", "vern7", "vern8", "vern9"]
            .into_iter()
            .filter_map(Method::parse),
    );
    methods
}

fn main() {
    // Words given on the command line select rows: each must occur in "problem method path"
    // (`cargo bench --bench peers -- chain bdf`).
    // Words select rows regardless of case: the tools spell their methods differently
    // (EQM's `bdf`, diffsol's and SciPy's `BDF`).
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .map(|a| a.to_lowercase())
        .collect();
    let selected = |label: &str| {
        let label = label.to_lowercase();
        filters.iter().all(|f| label.contains(f.as_str()))
    };
    println!("problem,rtol,atol,tool,method,jacobian,runs,time_ms,error,steps,status");
    for problem in problems() {
        match problem {
            Problem::Small {
                problem,
                atol_factor,
                stiff_only,
            } => {
                let mut methods = if stiff_only { Vec::new() } else { explicit_methods() };
                methods.extend([Method::Bdf, Method::Radau5]);
                for method in methods {
                    let label = format!("{} {} jac", problem.name, method.name());
                    if !selected(&label) {
                        continue;
                    }
                    eprintln!("EQM: {label}");
                    let jacobian = if method.uses_jacobian() { "exact" } else { "-" };
                    let mut skip: Option<String> = None;
                    for rtol in RTOLS {
                        let atol = rtol * atol_factor;
                        let row = Row {
                            problem: problem.name,
                            rtol,
                            atol,
                            method: method.name().to_string(),
                            jacobian,
                        };
                        if let Some(reason) = &skip {
                            row.print_status(&format!("skipped: {reason}"));
                            continue;
                        }
                        let (runs, ms, outcome) = best_of(|| {
                            stiff::solve_rust(&method, &problem, rtol, atol, true)
                                .map(|(x, stats)| (x, stats.steps))
                                .map_err(|e| e.to_string())
                        });
                        match outcome {
                            Ok((x, steps)) => row.print(
                                runs,
                                ms,
                                common::scaled_error(&x, &problem.reference, rtol, atol),
                                steps,
                                "ok",
                            ),
                            Err(e) => row.print_status(&format!("failed: {e}")),
                        }
                        if ms > SKIP_AFTER_S * 1e3 {
                            skip = Some(format!("rtol {rtol:.0e} took {:.0} s", ms / 1e3));
                        }
                    }
                }
            }
            Problem::Chain(chain) => run_chain(chain, &selected),
        }
    }
}

/// The chain's rows: every method through the hand-written right-hand side ("exact" sparse
/// Jacobian) and through the compiled model ("model": the `eqm` library's symbolic Jacobian).
fn run_chain(chain: Chain, selected: &dyn Fn(&str) -> bool) {
    let name = format!("Chain N={}", chain.n);
    let t_end = 100.0;
    let x0 = chain.initial_state();
    let mut methods = explicit_methods();
    methods.extend([Method::Bdf, Method::Radau5]);
    let rows: Vec<(Method, &str)> = methods
        .into_iter()
        .flat_map(|m| [(m.clone(), "jac"), (m, "model")])
        .filter(|(m, path)| selected(&format!("{name} {} {path}", m.name())))
        .collect();
    if rows.is_empty() {
        return;
    }
    let started = Instant::now();
    let reference = chain.exact(t_end);
    eprintln!("EQM: {name}: closed form in {:.1} s", started.elapsed().as_secs_f64());
    let mut system = ChainSystem::new(chain, true, true);
    check_chain_jacobian(&mut system);
    // The compiled model, or why it does not compile: made for the first "model" row.
    let mut model: Option<Result<eqm::Model, String>> = None;
    let names: Vec<String> = (1..=chain.n)
        .map(|i| format!("s[{i}]"))
        .chain((1..=chain.n).map(|i| format!("v[{i}]")))
        .collect();
    for (method, path) in rows {
        eprintln!("EQM: {name} {} {path}", method.name());
        // What the Jacobian is, completed by "sparse" or "dense" from the statistics of the solve
        // (EQM's BDF and Radau5 factor sparse iteration matrices above a size).
        let jacobian = match (method.uses_jacobian(), path) {
            (false, _) => "-",
            (true, "jac") => "exact",
            (true, _) => "symbolic",
        };
        let method_name = if path == "jac" {
            method.name().to_string()
        } else {
            format!("{} (model)", method.name())
        };
        let mut skip: Option<String> = None;
        // The model this row simulates; `None` integrates the hand-written system.
        let mut compiled = None;
        if path == "model" {
            let model = model.get_or_insert_with(|| {
                let started = Instant::now();
                let mut compiled = compile_chain(&chain)?;
                // The first simulation builds the native code and the Jacobian's program,
                // which the model keeps for every later run: it is not part of the timing.
                let warm_up = simulate_chain(&mut compiled, &names, &Method::Bdf, t_end, 1e-2, 1e-2);
                eprintln!(
                    "EQM: {name}: compiled in {:.2} s (first run included: {})",
                    started.elapsed().as_secs_f64(),
                    if warm_up.is_ok() { "ok" } else { "failed" }
                );
                Ok(compiled)
            });
            match model {
                Ok(model) => compiled = Some(model),
                Err(diagnostics) => skip = Some(format!("the model does not compile: {diagnostics}")),
            }
        }
        for rtol in RTOLS {
            let atol = rtol;
            let row = Row {
                problem: &name,
                rtol,
                atol,
                method: method_name.clone(),
                jacobian,
            };
            if let Some(reason) = &skip {
                row.print_status(&format!("skipped: {reason}"));
                continue;
            }
            let (runs, ms, outcome) = match &mut compiled {
                Some(model) => best_of(|| simulate_chain(model, &names, &method, t_end, rtol, atol)),
                None => best_of(|| solve_system(&method, &mut system, &x0, t_end, rtol, atol)),
            };
            match outcome {
                Ok((x, steps, sparse)) => {
                    let jacobian = match jacobian {
                        "-" => "-".to_string(),
                        _ => format!("{jacobian} {}", if sparse { "sparse" } else { "dense" }),
                    };
                    let row = Row {
                        jacobian: &jacobian,
                        ..row
                    };
                    row.print(runs, ms, common::scaled_error(&x, &reference, rtol, atol), steps, "ok")
                }
                Err(e) => row.print_status(&format!("failed: {e}")),
            }
            if ms > SKIP_AFTER_S * 1e3 {
                skip = Some(format!("rtol {rtol:.0e} took {:.0} s", ms / 1e3));
            }
        }
    }
}
