//! `eqm check` and `eqm run` scale on long if-chains: one `if`/`elseif` chain of n branches
//! and n if-equations nested in each other's `then` branch (`eqm_testkit::models::if_chain`
//! and `nested_if_chain`), each choosing the value of one variable.
//!
//! Run with `cargo bench --bench ifchain [n...]` (release; default n = 5 000, 10 000, 20 000
//! and 40 000). Prints, per shape and size, the wall time of each stage of `Session::check`,
//! the compilation to native code and a short run on each back end (to t = 10^-4, one event),
//! and the ratio t(2n)/t(n) of check plus native compilation. Goal: a ratio near 2 (linear in
//! n). Loading each slot read inside a branch at the top of the function once kept n values
//! live across n blocks, and a merge block per `if` made a chain of n forwarding jumps; both
//! made the native compilation take time n^2. The compiler runs on its own thread with a
//! large stack, as the front ends run it.

use eqm::{ModelOptions, RunSettings, Session};
use eqm_testkit::models::{if_chain, nested_if_chain};
use std::time::Instant;

mod common;

/// A model text of a given size.
type Generator = fn(usize) -> String;

/// One size of one shape: the time of the check, of the native compilation and of each run,
/// in ms, and the check's stages.
struct Timing {
    check: f64,
    stages: String,
    native_compile: f64,
    native_run: f64,
    interpreter_run: f64,
}

/// Checks, compiles and runs `text` on both back ends.
fn measure(text: String) -> Timing {
    eqm_syntax::stack::with_compiler_stack(move || {
        let (check, stages) = common::timed_check("chain.eqm", text.clone(), Some("M"));
        let settings = RunSettings {
            stop: Some(1e-4),
            interval: Some(1e-4),
            ..RunSettings::default()
        };
        let (native_compile, native_run) = run(&text, &settings);
        let interpreted = RunSettings {
            interpreter: true,
            ..settings
        };
        let (_, interpreter_run) = run(&text, &interpreted);
        Timing {
            check,
            stages: common::stage_list(&stages),
            native_compile,
            native_run,
            interpreter_run,
        }
    })
}

/// Compiles and runs `text` with `settings`: the native compilation's time (zero for the
/// interpreter) and the run's, in ms. A model that does not run ends the benchmark.
fn run(text: &str, settings: &RunSettings) -> (f64, f64) {
    let mut session = Session::with_sources(&[("chain.eqm".to_string(), text.to_string())], &[], None);
    let Some(mut model) = session.compile(Some("M"), &ModelOptions::default()) else {
        eprintln!("{}", session.render_diagnostics(false));
        std::process::exit(1)
    };
    let columns = model
        .columns(None)
        .unwrap_or_else(|d| panic!("no result columns: {}", d.message));
    let mut sink = |_: f64, _: &[f64]| -> std::io::Result<()> { Ok(()) };
    let start = Instant::now();
    let report = model
        .simulate_into(settings, &columns, &mut sink)
        .unwrap_or_else(|e| panic!("the model does not run: {e}"));
    let total = start.elapsed().as_secs_f64() * 1e3;
    let compile = report.compile_time.as_secs_f64() * 1e3;
    (compile, total - compile)
}

fn main() {
    let sizes: Vec<usize> = {
        let given: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
        if given.is_empty() {
            vec![5_000, 10_000, 20_000, 40_000]
        } else {
            given
        }
    };
    let shapes: [(&str, Generator); 2] = [("elseif", if_chain), ("nested", nested_if_chain)];
    for (shape, generate) in shapes {
        let mut previous: Option<(usize, f64)> = None;
        for &n in &sizes {
            let t = measure(generate(n));
            let total = t.check + t.native_compile;
            let ratio = previous.map_or(String::from("-"), |(m, before)| {
                format!("{:.2} (x{})", total / before, n / m.max(1))
            });
            println!(
                "{shape:>7} n {n:>6}: check {:>8.1} ms, native compile {:>8.1} ms, run native {:>7.1} ms, \
                 interpreter {:>7.1} ms; ratio {ratio}; {}",
                t.check, t.native_compile, t.native_run, t.interpreter_run, t.stages
            );
            previous = Some((n, total));
        }
    }
}
