//! Radau IIA with sparse factors: on the chain of masses (`tests/support/chain.rs`), a linear
//! stiff system with a closed form, Radau5 factors its real and complex iteration matrices with
//! the sparse LU when the system gives the Jacobian's pattern, follows the closed form as the
//! tolerance asks, and agrees with its dense factors on the same problem.

use super::*;
use crate::chain::Chain;

/// The chain as a system: its Jacobian's pattern when `sparse`, and, when `exact`, its exact
/// Jacobian (dense and sparse) instead of difference quotients.
struct ChainSys {
    chain: Chain,
    pattern: Vec<Vec<u32>>,
    sparse: bool,
    /// The Jacobian of the linear right-hand side: column `j` is `f(e_j)`, exact up to the
    /// rounding of a few additions. `None` leaves the Jacobian to difference quotients.
    exact: Option<nalgebra::DMatrix<f64>>,
}

impl ChainSys {
    fn new(n: usize, sparse: bool, exact: bool) -> ChainSys {
        let chain = Chain::standard(n);
        let exact = exact.then(|| {
            let dim = 2 * n;
            let mut jacobian = nalgebra::DMatrix::zeros(dim, dim);
            let (mut unit, mut column) = (vec![0.0; dim], vec![0.0; dim]);
            for j in 0..dim {
                unit[j] = 1.0;
                chain.rhs(&unit, &mut column);
                unit[j] = 0.0;
                jacobian.set_column(j, &nalgebra::DVector::from_column_slice(&column));
            }
            jacobian
        });
        ChainSys {
            pattern: chain.jacobian_pattern(),
            chain,
            sparse,
            exact,
        }
    }
}

impl OdeSystem for ChainSys {
    fn dim(&self) -> usize {
        2 * self.chain.n
    }

    fn rhs(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RhsError> {
        self.chain.rhs(x, dx);
        Ok(())
    }

    fn jacobian(&mut self, _t: f64, _x: &[f64], jacobian: &mut nalgebra::DMatrix<f64>) -> Option<Result<(), RhsError>> {
        jacobian.copy_from(self.exact.as_ref()?);
        Some(Ok(()))
    }

    fn jacobian_pattern(&self) -> Option<&[Vec<u32>]> {
        self.sparse.then_some(self.pattern.as_slice())
    }

    fn sparse_jacobian(&mut self, _t: f64, _x: &[f64], values: &mut [f64]) -> Option<Result<(), RhsError>> {
        let exact = self.exact.as_ref()?;
        let entries = self
            .pattern
            .iter()
            .enumerate()
            .flat_map(|(i, row)| row.iter().map(move |&j| exact[(i, j as usize)]));
        for (v, e) in values.iter_mut().zip(entries) {
            *v = e;
        }
        Some(Ok(()))
    }
}

/// Radau5 on the chain of `n` masses from its initial state to `t_end` at `rtol` (and atol
/// `rtol`): the state at `t_end`, the largest error against the closed form there, and the
/// counters.
fn radau_on_chain(sys: &mut ChainSys, t_end: f64, rtol: f64) -> (Vec<f64>, f64, Stats) {
    let options = Options {
        rtol,
        atol: Atol::Scalar(rtol),
        ..Options::default()
    };
    let mut stepper = Radau::new(options);
    let x0 = sys.chain.initial_state();
    let r = run_with(&mut stepper, sys, &x0, t_end, &Output::Times(vec![t_end]));
    assert_eq!(r.result, Ok(Outcome::Finished));
    let (t, x) = r.rows.last().expect("the end row").clone();
    assert_eq!(t, t_end);
    let error = max_abs_error(&x, &sys.chain.exact(t_end));
    (x, error, r.stats)
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
            let (_, error, stats) = radau_on_chain(&mut ChainSys::new(MASSES, true, exact), T_END, rtol);
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
            let (sparse, _, sparse_stats) = radau_on_chain(&mut ChainSys::new(MASSES, true, exact), T_END, rtol);
            let (dense, _, dense_stats) = radau_on_chain(&mut ChainSys::new(MASSES, false, exact), T_END, rtol);
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
    let (_, error, stats) = radau_on_chain(&mut ChainSys::new(10, true, false), T_END, rtol);
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
            let mut sys = ChainSys::new(20, sparse, false);
            let mut stepper = Radau::new(fixed(h));
            let x0 = sys.chain.initial_state();
            let r = run_with(&mut stepper, &mut sys, &x0, t_end, &Output::Times(vec![t_end]));
            assert_eq!(r.result, Ok(Outcome::Finished));
            assert_eq!(r.stats.sparse_jacobians > 0, sparse, "{:?}", r.stats);
            let (t, x) = r.rows.last().expect("the end row").clone();
            assert_eq!(t, t_end);
            ends.push((max_abs_error(&x, &sys.chain.exact(t_end)), x));
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
