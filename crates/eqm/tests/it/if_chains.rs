//! Long `elseif` chains and deeply nested if-equations: both shapes check, compile and run with
//! the branch the conditions select, on the native code and the interpreter alike (bit for
//! bit), against the values computed by hand.

use crate::{check, run_both_back_ends};
use eqm_testkit::models::{if_chain, nested_if_chain};

/// The branches: more than the 1000 thresholds that lie before the end of the run, so that
/// the last ones are never taken.
const BRANCHES: usize = 1200;

// The compiler runs on its own thread with a large stack, as the front ends run it: the
// nesting of the second shape is deeper than a test thread's stack allows.

/// The end of the run: between thresholds, 0.5·10^-3 after the 999th.
const STOP: f64 = 0.9995;

/// Runs `text` on both back ends to `STOP` and checks `u` and `x` against the hand values: on
/// `((k-1)·10^-3, k·10^-3)` the value is `u = k`, so `u(0) = 1`, `u(0.4505) = 451`,
/// `u(STOP) = 1000`, `x(0.4505) = Σ_{k=1}^{450} k·10^-3 + 451·0.5·10^-3 = 101.475 + 0.2255` and
/// `x(STOP) = Σ_{k=1}^{999} k·10^-3 + 1000·0.5·10^-3 = 499.5 + 0.5 = 500`. The output times
/// lie between thresholds, where `u` has one value.
fn runs_with_the_selected_branch(text: &str) {
    let settings = eqm::RunSettings {
        stop: Some(STOP),
        interval: Some(0.4505),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..eqm::RunSettings::default()
    };
    let result = run_both_back_ends(text, settings);
    check(&result, "u", 0.0, 1.0, 0.0);
    check(&result, "u", 0.4505, 451.0, 0.0);
    check(&result, "u", STOP, 1000.0, 0.0);
    // Each of the 999 events is located to within the integrator's tolerance; x grows by at
    // most 1000 per unit time, so the error stays far below 10^-6.
    check(&result, "x", 0.4505, 101.7005, 1e-6);
    check(&result, "x", STOP, 500.0, 1e-6);
}

#[test]
fn a_long_elseif_chain_runs_with_the_branch_its_conditions_select() {
    eqm_syntax::stack::with_compiler_stack(|| runs_with_the_selected_branch(&if_chain(BRANCHES)));
}

#[test]
fn deeply_nested_if_equations_run_with_the_branch_their_conditions_select() {
    eqm_syntax::stack::with_compiler_stack(|| runs_with_the_selected_branch(&nested_if_chain(BRANCHES)));
}
