//! The executable program and the reference interpreter on a generated DAE: building the
//! program (layout, programs, symbolic derivatives, validation), compiling it for the
//! interpreter, and one evaluation of the right-hand side.
//!
//! Run with `cargo bench --bench exec` (release mode). The model is the chain of masses and
//! springs of `crates/eqm-testkit/src/dae_chain.rs` (seven equations a stage, four of them aliases) at
//! 10^3 to 10^6 equations. Prints the best of several runs and the growth ratio t(2N)/t(N) of
//! each phase: all of them should stay near 2 (linear in the size of the model).

mod common;

use eqm_testkit::dae_chain;

use common::best_of;
use eqm_compile::exec::ExecProgram;
use eqm_sim::instance::Instance;
use eqm_sim::interp::OdeRhs;
use std::time::Duration;

const SIZES: [usize; 6] = [1_000, 2_000, 100_000, 200_000, 500_000, 1_000_000];

fn main() {
    // `cargo test --benches` runs this once in the test profile: small sizes only.
    let quick = std::env::args().any(|a| a == "--test") || cfg!(debug_assertions);
    let sizes: &[usize] = if quick { &SIZES[..4] } else { &SIZES };
    println!(
        "{:>10} {:>10} {:>12} {:>10} {:>12}",
        "equations", "build ms", "compile ms", "rhs µs", "rhs ns/eq"
    );
    let mut rows: Vec<(usize, [Duration; 3])> = Vec::new();
    for &n in sizes {
        let stages = n.div_ceil(dae_chain::STAGE);
        let dae = eqm_compile::dae::lower(dae_chain::chain(stages));
        let (dae, _, _) = eqm_compile::alias::eliminate(dae);
        let (dae, _) = eqm_compile::index::reduce(dae).expect("no index reduction needed");
        let mut dae = eqm_compile::events::extract(dae);
        let plan = eqm_compile::plan::analyze(&mut dae).expect("solvable");
        let runs = if n >= 500_000 { 2 } else { 5 };
        let build = best_of(runs, || ExecProgram::build(dae.clone(), &plan).expect("builds"));
        let program = ExecProgram::build(dae.clone(), &plan).expect("builds");
        let compile = best_of(runs, || Instance::new(&program).expect("compiles"));
        let mut instance = Instance::new(&program).expect("compiles");
        let x = instance.start_values().expect("start values");
        let mut dx = vec![0.0; x.len()];
        let rhs = best_of(runs * 4, || instance.rhs(0.0, &x, &mut dx).expect("evaluates"));
        let equations = stages * dae_chain::STAGE;
        println!(
            "{:>10} {:>10.1} {:>12.1} {:>10.1} {:>12.1}",
            equations,
            build.as_secs_f64() * 1e3,
            compile.as_secs_f64() * 1e3,
            rhs.as_secs_f64() * 1e6,
            rhs.as_secs_f64() * 1e9 / equations as f64
        );
        rows.push((n, [build, compile, rhs]));
    }
    for pair in rows.windows(2).filter(|w| w[1].0 == 2 * w[0].0) {
        let ratio = |k: usize| pair[1].1[k].as_secs_f64() / pair[0].1[k].as_secs_f64();
        println!(
            "t({})/t({}): build {:.2}, compile {:.2}, rhs {:.2}",
            pair[1].0,
            pair[0].0,
            ratio(0),
            ratio(1),
            ratio(2)
        );
    }
}
