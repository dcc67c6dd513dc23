//! The chain of masses of `crates/eqm-testkit/src/chain.rs` (the benchmark problem of the non-stiff
//! integrators) against its own equations: its closed form starts at the initial state and
//! satisfies the right-hand side. Also the chain as the [`OdeSystem`] the other tests integrate.

use super::{OdeSystem, Outcome, Output, Stats, Stepper, max_abs_error, run_with};
use crate::chain::{Chain, damped_oscillator};
use crate::chain_system::ChainSystem;

/// `stepper` on `sys` from the chain's initial state to `t_end`, with an output row there
/// only: the state at `t_end`, its largest error against the closed form, and the counters.
pub(super) fn run_on_chain(stepper: &mut dyn Stepper, sys: &mut ChainSystem, t_end: f64) -> (Vec<f64>, f64, Stats) {
    let x0 = sys.chain.initial_state();
    let r = run_with(stepper, sys, &x0, t_end, &Output::Times(vec![t_end]));
    assert_eq!(r.result, Ok(Outcome::Finished));
    let (t, x) = r.rows.last().expect("the end row").clone();
    assert_eq!(t, t_end);
    let error = max_abs_error(&x, &sys.chain.exact(t_end));
    (x, error, r.stats)
}

/// Chains of one and several masses, standard and with other constants.
fn chains() -> [Chain; 4] {
    [
        Chain::standard(1),
        Chain::standard(5),
        Chain::standard(20),
        Chain {
            n: 4,
            c: 3.0,
            d: 2.5,
            m: 0.5,
        },
    ]
}

/// The system's exact Jacobian (values written out per entry of the pattern) against the
/// columns of the linear right-hand side, `f(e_j)`, dense and sparse.
#[test]
fn the_chain_system_has_the_jacobian_of_its_equations() {
    for chain in chains() {
        let dim = 2 * chain.n;
        let mut sys = ChainSystem::new(chain, true, true);
        let mut dense = nalgebra::DMatrix::zeros(dim, dim);
        assert!(matches!(sys.jacobian(0.0, &vec![0.0; dim], &mut dense), Some(Ok(()))));
        let pattern = sys.jacobian_pattern().expect("a pattern").to_vec();
        let mut values = vec![0.0; pattern.iter().map(Vec::len).sum()];
        assert!(matches!(
            sys.sparse_jacobian(0.0, &vec![0.0; dim], &mut values),
            Some(Ok(()))
        ));
        let (mut unit, mut column) = (vec![0.0; dim], vec![0.0; dim]);
        for j in 0..dim {
            unit[j] = 1.0;
            chain.rhs(&unit, &mut column);
            unit[j] = 0.0;
            for i in 0..dim {
                assert!((dense[(i, j)] - column[i]).abs() < 1e-12, "{chain:?}: entry ({i}, {j})");
            }
        }
        let entries = pattern
            .iter()
            .enumerate()
            .flat_map(|(i, row)| row.iter().map(move |&j| (i, j as usize)));
        for ((i, j), v) in entries.zip(values) {
            assert_eq!(v, dense[(i, j)], "{chain:?}: entry ({i}, {j})");
        }
    }
}

#[test]
fn the_exact_solution_starts_at_the_initial_state() {
    for n in [1, 2, 7, 50] {
        let chain = Chain::standard(n);
        let start = chain.exact(0.0);
        for (e, x) in start.iter().zip(chain.initial_state()) {
            assert!((e - x).abs() < 1e-12, "n = {n}: {e} vs {x}");
        }
    }
}

/// Central differences of `exact` (truncation error δ²/6·x''' ≈ 1e-9 with δ = 1e-6 and third
/// derivatives up to about ω³ ≈ 8000, rounding about 1e-9) against the right-hand side at the exact state.
#[test]
fn the_exact_solution_satisfies_the_equations() {
    for chain in chains() {
        let dim = 2 * chain.n;
        let delta = 1e-6;
        for t in [0.3, 1.7, 10.0] {
            let (before, after) = (chain.exact(t - delta), chain.exact(t + delta));
            let mut dx = vec![0.0; dim];
            chain.rhs(&chain.exact(t), &mut dx);
            for i in 0..dim {
                let fd = (after[i] - before[i]) / (2.0 * delta);
                assert!(
                    (fd - dx[i]).abs() < 1e-7 * (1.0 + dx[i].abs()),
                    "{chain:?} at t = {t}, component {i}: {fd} vs {}",
                    dx[i]
                );
            }
        }
    }
}

/// The three regimes of the oscillator against its equation, by central differences.
#[test]
fn the_oscillator_solves_its_equation() {
    for zeta in [0.01, 0.5, 1.0, 3.0] {
        let (omega, delta) = (2.0, 1e-4);
        let (q, dq) = damped_oscillator(0.7, omega, zeta, 0.0);
        assert!((q - 0.7).abs() < 1e-14 && dq.abs() < 1e-14, "ζ = {zeta}");
        for t in [0.5, 2.0] {
            let (q, dq) = damped_oscillator(0.7, omega, zeta, t);
            let (qa, dqa) = damped_oscillator(0.7, omega, zeta, t + delta);
            let (qb, dqb) = damped_oscillator(0.7, omega, zeta, t - delta);
            let ddq = (dqa - dqb) / (2.0 * delta);
            assert!(((qa - qb) / (2.0 * delta) - dq).abs() < 1e-7, "ζ = {zeta}");
            assert!(
                (ddq + 2.0 * zeta * omega * dq + omega * omega * q).abs() < 1e-6,
                "ζ = {zeta}"
            );
        }
    }
}
