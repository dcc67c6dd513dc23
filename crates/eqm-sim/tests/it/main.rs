//! Integration tests of `eqm-sim`. Running programs: the interpreter, native code against it bit for bit, the symbolic Jacobian, and the stiff and sparse solvers on models.
//!
//! One test binary for the crate; each module is one family of tests.

use eqm_testkit::pipeline;
use eqm_testkit::stiff as stiff_problems;

mod backends;
mod degenerate_roots;
mod exec;
mod jacobian;
mod jit;
mod nominal_tolerance;
mod nonlinear;
mod sparse;
mod start_path;
mod state_choice;
mod stiff;

pub use eqm_testkit::REPO;

use eqm_compile::analysis::Compiled;
use eqm_integrators::{Atol, Method};
use eqm_sim::simulate::{Backend, RunOptions, Stabilize, Summary};

/// The options of a run from 0 to `stop` with `method` at `rtol` and the scalar `atol`, rows
/// every `interval`, and nothing overridden: the settings the model runs of these tests vary.
pub fn run_options(stop: f64, method: Method, rtol: f64, atol: f64, interval: f64) -> RunOptions {
    RunOptions {
        start: 0.0,
        stop,
        method,
        integrator: eqm_integrators::Options {
            rtol,
            atol: Atol::Scalar(atol),
            ..Default::default()
        },
        interval: Some(interval),
        params: Vec::new(),
        starts: Vec::new(),
        backend: Backend::Auto,
        stabilize: Stabilize::Default,
        origin: None,
        watch: Default::default(),
        cancel: None,
        final_event: true,
    }
}

/// Runs `compiled` with `options`, handing each row of the columns `names` (every column when
/// `None`) with its time to `row`; the summary, or `what` in the panic when the run fails.
pub fn run(
    compiled: &Compiled,
    options: &RunOptions,
    names: Option<&[String]>,
    what: &str,
    mut row: impl FnMut(f64, &[f64]),
) -> Summary {
    let columns = eqm_sim::simulate::columns(&compiled.program, names).expect("columns");
    eqm_sim::simulate::simulate(
        &compiled.program,
        compiled.init.as_ref(),
        options,
        &columns,
        &mut |t, values| {
            row(t, values);
            Ok(())
        },
    )
    .unwrap_or_else(|e| panic!("{what}: {e:?}"))
}

/// The failure of a run of the model in `text` (named `name`) from 0 to 1 at the default
/// settings of these tests: its message and diagnostic; a panic when it runs.
pub fn failure_of(name: &str, text: &str) -> (String, eqm_diag::Diagnostic) {
    let compiled = pipeline::compile(name, text);
    let options = run_options(1.0, Method::Dopri5, 1e-6, 1e-9, 1.0);
    let columns = eqm_sim::simulate::columns(&compiled.program, None::<&[String]>).expect("columns");
    let outcome = eqm_sim::simulate::simulate(
        &compiled.program,
        compiled.init.as_ref(),
        &options,
        &columns,
        &mut |_, _| Ok(()),
    );
    let Err(eqm_sim::simulate::SimError::Failed {
        diagnostic, message, ..
    }) = outcome
    else {
        panic!("{name}: the run must fail: {outcome:?}");
    };
    (message, *diagnostic.expect("a diagnostic"))
}
