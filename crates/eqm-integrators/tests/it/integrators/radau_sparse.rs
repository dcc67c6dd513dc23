//! Radau IIA with sparse factors: on the chain of masses (`crates/eqm-testkit/src/chain.rs`), a linear
//! stiff system with a closed form, Radau5 factors its real and complex iteration matrices with
//! the sparse LU when the system gives the Jacobian's pattern, follows the closed form as the
//! tolerance asks, and agrees with its dense factors on the same problem.

use super::chain::run_on_chain;
use super::*;
use crate::chain::Chain;
use crate::chain_system::ChainSystem;

/// Radau5 on the chain of `n` masses from its initial state to `t_end` at `rtol` (and atol
/// `rtol`): the state at `t_end`, the largest error against the closed form there, and the
/// counters.
fn radau_on_chain(sys: &mut ChainSystem, t_end: f64, rtol: f64) -> (Vec<f64>, f64, Stats) {
    let options = Options {
        rtol,
        atol: Atol::Scalar(rtol),
        ..Options::default()
    };
    run_on_chain(&mut Radau::new(options), sys, t_end)
}

/// The chain of 50 masses (100 states, above `linalg::MIN_SPARSE_STATES`) to t = 10.
const MASSES: usize = 50;
const T_END: f64 = 10.0;

/// With the pattern, Radau5 factors sparse matrices and follows the closed form as the
/// tolerance asks: within 10·rtol at rtol 1e-4 and 1e-6 (measured 1.5 to 3.3 rtol; the
/// tolerance bounds the error of each step, and the chain's oscillations carry the phase errors
/// along), twenty times closer at the hundred times tighter tolerance, with the Jacobian's
/// values from difference quotients by colour and exact ones alike. The factors are kept
/// across steps as with dense ones: a few dozen factorisations in hundreds of steps.
#[test]
fn radau5_with_sparse_factors_follows_the_closed_form_of_the_chain() {
    for exact in [false, true] {
        let mut errors = Vec::new();
        for rtol in [1e-4, 1e-6] {
            let (_, error, stats) =
                radau_on_chain(&mut ChainSystem::new(Chain::standard(MASSES), exact, true), T_END, rtol);
            assert!(
                error < 10.0 * rtol,
                "rtol {rtol:e} (exact Jacobian: {exact}): error {error:.2e}"
            );
            assert!(
                stats.jacobians > 0 && stats.sparse_jacobians == stats.jacobians,
                "{stats:?}"
            );
            assert_eq!(stats.symbolic_jacobians > 0, exact, "{stats:?}");
            assert!(stats.factorizations * 5 < stats.steps, "{stats:?}");
            errors.push(error);
        }
        assert!(errors[1] * 20.0 < errors[0], "{errors:?}");
    }
}

/// The sparse and the dense factors of the same iteration matrices give the same solution:
/// both solve the same stage equations with the same Jacobian and differ only by the rounding
/// of their eliminations, which Newton's iteration and the error estimate carry along far below
/// the tolerance (within 1e-6·rtol; measured 1e-13 and below on states of size 1).
#[test]
fn radau5_sparse_and_dense_factors_agree() {
    for exact in [false, true] {
        for rtol in [1e-4, 1e-6] {
            let (sparse, _, sparse_stats) =
                radau_on_chain(&mut ChainSystem::new(Chain::standard(MASSES), exact, true), T_END, rtol);
            let (dense, _, dense_stats) = radau_on_chain(
                &mut ChainSystem::new(Chain::standard(MASSES), exact, false),
                T_END,
                rtol,
            );
            let difference = max_abs_error(&sparse, &dense);
            assert!(
                difference <= 1e-6 * rtol,
                "rtol {rtol:e} (exact Jacobian: {exact}): sparse and dense differ by {difference:.2e}"
            );
            assert!(sparse_stats.sparse_jacobians > 0, "{sparse_stats:?}");
            assert_eq!(dense_stats.sparse_jacobians, 0, "{dense_stats:?}");
        }
    }
}

/// Below `linalg::MIN_SPARSE_STATES` (32) states Radau5 keeps the dense factors even when the
/// system gives a pattern, and still follows the closed form within 10·rtol.
#[test]
fn radau5_keeps_dense_factors_for_a_small_system_with_a_pattern() {
    let rtol = 1e-6;
    let (_, error, stats) = radau_on_chain(&mut ChainSystem::new(Chain::standard(10), false, true), T_END, rtol);
    assert_eq!(stats.sparse_jacobians, 0, "{stats:?}");
    assert!(error < 10.0 * rtol, "error {error:.2e}");
}

/// In the fixed-step mode the sparse factors give Radau IIA's order 5 on the chain of 20 masses
/// (40 states) to t = 1 (the step halved from 0.05: hω ≤ 1 for the fastest mode, ω ≈ 20), and
/// the same numbers as the dense ones to rounding.
#[test]
fn fixed_step_radau5_with_sparse_factors_has_order_five() {
    let t_end = 1.0;
    let mut points = Vec::new();
    for h in [0.05, 0.025, 0.0125] {
        let mut ends = Vec::new();
        for sparse in [true, false] {
            let (x, error, stats) = run_on_chain(
                &mut Radau::new(fixed(h)),
                &mut ChainSystem::new(Chain::standard(20), false, sparse),
                t_end,
            );
            assert_eq!(stats.sparse_jacobians > 0, sparse, "{stats:?}");
            ends.push((error, x));
        }
        let difference = max_abs_error(&ends[0].1, &ends[1].1);
        assert!(
            difference < 1e-12,
            "h = {h}: sparse and dense differ by {difference:.2e}"
        );
        points.push((h, ends[0].0));
    }
    assert_order("radau5 with sparse factors", slope(&points), 5.0, 0.5);
}
