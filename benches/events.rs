//! Event handling at scale (the goal: 1000 state events with 8000 zero-crossing functions
//! in under 1 s).
//!
//! Run with `cargo bench --bench events`. The model: a clock state `s` (der(s) = 1) and `n`
//! outputs `y[i] = if s > i/1000 then 1 else 0` plus a bouncing ball that keeps the integrator
//! busy; over one second of simulated time 1000 of the `n` relations cross, each one a state
//! event located on the dense output. Prints the compile and simulation times, the events and
//! the evaluations.

use eqm::{ModelOptions, Session};
use eqm_sim::simulate::{Backend, RunOptions, simulate};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.iter().skip(1).find_map(|a| a.parse().ok()).unwrap_or(8000);
    let text = format!(
        "model Many\n  parameter Integer n = {n};\n  Real s(start = 0, fixed = true);\n  Real y[n];\n  \
         Real h(start = 1, fixed = true);\n  Real v(start = 0, fixed = true);\nequation\n  der(s) = 1;\n  \
         for i in 1:n loop\n    y[i] = if s > i/1000 then 1 else 0;\n  end for;\n  der(h) = v;\n  der(v) = -9.81;\n  \
         when h < 0 then\n    reinit(v, -0.9*pre(v));\n  end when;\nend Many;\n"
    );
    let start = Instant::now();
    let mut session = Session::new();
    session.add_file("many.eqm", text);
    let Some(model) = session.compile(Some("Many"), &ModelOptions::default()) else {
        eprintln!("{}", session.render_diagnostics(false));
        std::process::exit(1);
    };
    let compile = start.elapsed();
    let options = RunOptions {
        start: 0.0,
        stop: 1.0,
        method: eqm_integrators::Method::Dopri5,
        integrator: eqm_integrators::Options::default(),
        interval: Some(0.01),
        params: Vec::new(),
        starts: Vec::new(),
        backend: Backend::Auto,
        stabilize: eqm_sim::simulate::Stabilize::Default,
        origin: None,
        watch: Default::default(),
        cancel: None,
        final_event: true,
    };
    let columns = eqm_sim::simulate::columns(model.program(), Some(&["s".to_string(), "h".to_string()]))
        .expect("the columns exist");
    let mut rows = 0usize;
    let start = Instant::now();
    let summary = simulate(
        model.program(),
        model.init_program(),
        &options,
        &columns,
        &mut |_, _| {
            rows += 1;
            Ok(())
        },
    );
    let simulated = start.elapsed();
    match summary {
        Ok(s) => println!(
            "n = {n} zero-crossing functions: compile {:.1} ms, simulate {:.1} ms ({} events, {} steps, {} rhs evaluations, {} rows, {})",
            compile.as_secs_f64() * 1e3,
            simulated.as_secs_f64() * 1e3,
            s.events.events,
            s.stats.steps,
            s.stats.rhs_evals,
            rows,
            s.backend
        ),
        Err(_) => {
            println!("n = {n}: the simulation failed");
            std::process::exit(1);
        }
    }
}
