//! BDF and Radau IIA on the chain of masses (`crates/eqm-testkit/src/chain.rs`) against its closed form,
//! with the dense LU and, for BDF, the sparse LU the chain's Jacobian pattern selects; and the
//! policy that keeps BDF's factors across steps: few factorisations, no loss of accuracy.

use super::chain::run_on_chain;
use super::*;
use crate::chain::Chain;
use crate::chain_system::ChainSystem;

/// Integrates the chain of `n` masses to t = 100: the largest error against the closed form,
/// and the counters.
fn chain_error(method: &Method, n: usize, sparse: bool, rtol: f64, atol: f64) -> (f64, Stats) {
    let options = Options {
        rtol,
        atol: Atol::Scalar(atol),
        ..Options::default()
    };
    let mut stepper = stepper_for(method, &options);
    let (_, error, stats) = run_on_chain(
        stepper.as_mut(),
        &mut ChainSystem::new(Chain::standard(n), false, sparse),
        100.0,
    );
    (error, stats)
}

/// The error at t = 100 against the closed form at rtol 1e-8 (atol 1e-10) stays below 1e-5 for
/// the chains of `sizes` masses.
fn follows_the_chain(method: Method, sparse: bool, sizes: &[usize]) {
    for &n in sizes {
        let (error, stats) = chain_error(&method, n, sparse, 1e-8, 1e-10);
        assert!(
            error < 1e-5,
            "{} on the chain of {n} (sparse pattern: {sparse}): error {error:.2e}",
            method.name()
        );
        // The sparse LU from 32 states on (`linalg::MIN_SPARSE_STATES`).
        assert_eq!(stats.sparse_jacobians > 0, sparse && 2 * n >= 32, "{stats:?}");
    }
}

#[test]
fn bdf_follows_the_chain_of_masses_with_dense_factors() {
    follows_the_chain(Method::Bdf, false, &[10, 100]);
}

#[test]
fn bdf_follows_the_chain_of_masses_with_sparse_factors() {
    follows_the_chain(Method::Bdf, true, &[10, 100]);
}

#[test]
fn radau5_follows_the_chain_of_masses() {
    follows_the_chain(Method::Radau5, false, &[10]);
}

/// The factors of `I − cJ` are kept while `c` changes by less than 30 %: on the chain (a
/// constant Jacobian) BDF factors a few dozen times in thousands of steps, and its error still
/// follows the tolerance: a hundred times smaller tolerance gives at least ten times smaller
/// error. (The global error is far above the tolerance, which bounds the error made in each
/// step: the chain's fastest modes oscillate about 300 times until t = 100 and their phase
/// errors add up.)
#[test]
fn kept_factors_do_not_cost_accuracy() {
    let (coarse, stats) = chain_error(&Method::Bdf, 10, true, 1e-6, 1e-6);
    assert!(stats.steps > 1000, "{stats:?}");
    assert!(stats.factorizations * 20 < stats.steps, "{stats:?}");
    let (fine, _) = chain_error(&Method::Bdf, 10, true, 1e-8, 1e-8);
    assert!(coarse < 1e-2, "rtol 1e-6: error {coarse:.2e}");
    assert!(fine < 1e-4, "rtol 1e-8: error {fine:.2e}");
    assert!(
        fine * 10.0 < coarse,
        "rtol 1e-8: error {fine:.2e}, rtol 1e-6: {coarse:.2e}"
    );
}

/// The step size stays while the error estimates ask for a factor between 0.9 and 2 (see
/// `KEEP_STEP` in `bdf.rs`). On the chain of 100 masses with its exact Jacobian (constant, so
/// Newton's first iteration solves the linear corrector exactly), a step then needs about one
/// evaluation of `f` (Newton's rate estimate carries over to the next step with the same step
/// size) where a step size changed after every `order + 1` steps needed nearly two; and the
/// error at t = 100 against the closed form is below 1e-3 at rtol 1e-6 (1.1e-3 with the step
/// size changed every time).
#[test]
fn bdf_keeps_its_step_size_through_small_changes_of_the_estimate() {
    let options = Options {
        rtol: 1e-6,
        atol: Atol::Scalar(1e-6),
        ..Options::default()
    };
    let mut stepper = stepper_for(&Method::Bdf, &options);
    let (_, error, stats) = run_on_chain(
        stepper.as_mut(),
        &mut ChainSystem::new(Chain::standard(100), true, true),
        100.0,
    );
    assert!(error < 1e-3, "error {error:.2e}");
    assert_eq!(stats.jacobians, 1, "{stats:?}");
    assert!(10 * stats.rhs_evals < 12 * stats.steps, "{stats:?}");
}
