//! Work-precision of the explicit adaptive solvers on the damped chain of masses.
//!
//! Run with `cargo bench --bench nonstiff`. For each explicit adaptive method and chain size
//! N = 100, 1000, 10000 (`crates/eqm-testkit/src/chain.rs`: 2N states, t in [0, 100], rtol = atol =
//! 1e-6), prints the wall time (best of several runs), the time spent inside the right-hand side
//! and outside it (the solver's own overhead), the accepted steps, the right-hand-side
//! evaluations and the largest error of any state at t = 100 against the chain's closed form.
//! Words given after `--` select rows (`cargo bench --bench nonstiff -- dopri5 1000`); a word
//! `rtol=1e-8` changes the tolerance.

use eqm_testkit::chain;
mod common;

use chain::Chain;
use eqm_integrators::{Atol, Method, OdeSystem, Options, Output, RhsError, Stats, integrate, stepper_for};
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

/// The chain as a system, timing its right-hand side.
struct Timed {
    chain: Chain,
    inside: Duration,
}

impl OdeSystem for Timed {
    fn dim(&self) -> usize {
        2 * self.chain.n
    }

    fn rhs(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RhsError> {
        let start = Instant::now();
        self.chain.rhs(x, dx);
        self.inside += start.elapsed();
        Ok(())
    }
}

/// One run: the wall time, the time inside the right-hand side, the statistics and the state at
/// the end.
fn run(method: &Method, chain: Chain, rtol: f64, timed: bool) -> (Duration, Duration, Stats, Vec<f64>) {
    let options = Options {
        rtol,
        atol: Atol::Scalar(rtol),
        ..Options::default()
    };
    let mut stepper = stepper_for(method, &options);
    let mut system = Timed {
        chain,
        inside: Duration::ZERO,
    };
    let x0 = chain.initial_state();
    // Without `timed`, the same run with a right-hand side that is not timed, for the wall time.
    let mut plain = Plain(chain);
    let sys: &mut dyn OdeSystem = if timed { &mut system } else { &mut plain };
    let mut end = Vec::new();
    let start = Instant::now();
    let result = integrate(
        sys,
        &mut *stepper,
        0.0,
        &x0,
        100.0,
        &Output::Times(Vec::new()),
        |t, x| {
            if t == 100.0 {
                end = x.to_vec();
            }
            ControlFlow::Continue(())
        },
    );
    let wall = start.elapsed();
    result.expect("the chain integrates");
    (wall, system.inside, stepper.stats(), end)
}

/// The chain without timing.
struct Plain(Chain);

impl OdeSystem for Plain {
    fn dim(&self) -> usize {
        2 * self.0.n
    }

    fn rhs(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RhsError> {
        self.0.rhs(x, dx);
        Ok(())
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let rtol = args
        .iter()
        .find_map(|a| a.strip_prefix("rtol=").and_then(|v| v.parse::<f64>().ok()))
        .unwrap_or(1e-6);
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with("rtol=")).collect();
    // Every explicit method with step size control that this build knows by name.
    let methods: Vec<Method> = ["rkf45", "dopri5", "tsit5", "vern6", "vern7", "vern8", "vern9"]
        .iter()
        .filter_map(|name| Method::parse(name))
        .collect();
    println!(
        "{:>6} {:>6} {:>7} {:>10} {:>10} {:>10} {:>7} {:>8} {:>10}",
        "method", "N", "rtol", "time ms", "rhs ms", "other ms", "steps", "f evals", "max error"
    );
    for n in [100, 1000, 10000] {
        let chain = Chain::standard(n);
        let mut exact = None;
        for method in &methods {
            let label = format!("{} {n}", method.name());
            if !filters.iter().all(|f| label.split(' ').any(|word| word == f.as_str())) {
                continue;
            }
            let exact = exact.get_or_insert_with(|| chain.exact(100.0));
            let repeats = if n >= 10000 { 3 } else { 10 };
            let mut best = Duration::MAX;
            let mut outcome = None;
            for _ in 0..repeats {
                let (wall, _, stats, end) = run(method, chain, rtol, false);
                best = best.min(wall);
                outcome = Some((stats, end));
            }
            let (stats, end) = outcome.expect("at least one run");
            // The share of the right-hand side, from one more run that times each call.
            let (timed_wall, inside, _, _) = run(method, chain, rtol, true);
            let inside_ms = inside.as_secs_f64() * 1e3;
            let other_ms = (timed_wall - inside).as_secs_f64() * 1e3;
            let error = common::max_abs_difference(&end, exact);
            println!(
                "{:>6} {n:>6} {rtol:>7.0e} {:>10.3} {inside_ms:>10.3} {other_ms:>10.3} {:>7} {:>8} {error:>10.2e}",
                method.name(),
                best.as_secs_f64() * 1e3,
                stats.steps,
                stats.rhs_evals,
            );
        }
    }
}
