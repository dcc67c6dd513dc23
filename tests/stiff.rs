//! The stiff solvers against published reference solutions of the standard stiff test problems
//! (Robertson to t = 40 and 1e11, HIRES, Van der Pol with μ = 1000, the Oregonator), at
//! tolerances where the reference values are far more accurate than the solver.

#[path = "common/stiff.rs"]
mod stiff;

use eqm::integrators::{Atol, Method, OdeSystem, Options, Output, RhsError, integrate, stepper_for};
use std::ops::ControlFlow;
use stiff::StiffProblem;

struct System {
    dim: usize,
    rhs: fn(f64, &[f64], &mut [f64]),
}

impl OdeSystem for System {
    fn dim(&self) -> usize {
        self.dim
    }

    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RhsError> {
        (self.rhs)(t, x, dx);
        Ok(())
    }
}

/// The solution at the end time, and the statistics.
fn solve(method: &Method, problem: &StiffProblem, rtol: f64, atol: f64) -> (Vec<f64>, eqm::integrators::Stats) {
    let options = Options {
        rtol,
        atol: Atol::Scalar(atol),
        ..Options::default()
    };
    let mut stepper = stepper_for(method, &options);
    let mut sys = System {
        dim: problem.x0.len(),
        rhs: problem.rhs,
    };
    let mut last = Vec::new();
    let outcome = integrate(
        &mut sys,
        stepper.as_mut(),
        0.0,
        &problem.x0,
        problem.t_end,
        &Output::Times(vec![problem.t_end]),
        |_, x| {
            last = x.to_vec();
            ControlFlow::Continue(())
        },
    );
    assert!(outcome.is_ok(), "{}: {outcome:?}", problem.name);
    (last, stepper.stats())
}

/// The largest error relative to the reference, for components above `floor` (smaller ones
/// count absolutely against `floor`).
fn relative_error(x: &[f64], reference: &[f64], floor: f64) -> f64 {
    x.iter()
        .zip(reference)
        .map(|(a, b)| (a - b).abs() / b.abs().max(floor))
        .fold(0.0, f64::max)
}

#[test]
fn bdf_matches_the_reference_solutions_of_the_stiff_test_set() {
    // (problem, rtol, atol, allowed relative error, floor for tiny components)
    let cases = [
        (stiff::robertson(40.0), 1e-8, 1e-14, 1e-6, 1e-12),
        (stiff::robertson(1e11), 1e-8, 1e-20, 1e-4, 1e-15),
        (stiff::hires(), 1e-8, 1e-12, 1e-5, 1e-8),
        (stiff::van_der_pol(), 1e-8, 1e-8, 1e-5, 1e-8),
        (stiff::oregonator(), 1e-8, 1e-8, 1e-5, 1e-8),
    ];
    for (problem, rtol, atol, allowed, floor) in cases {
        let (x, stats) = solve(&Method::Bdf, &problem, rtol, atol);
        let error = relative_error(&x, &problem.reference, floor);
        assert!(
            error < allowed,
            "{} at t = {}: relative error {error:e} (x = {x:?}, stats {stats:?})",
            problem.name,
            problem.t_end
        );
        // Stiff problems must not need explicit-method step counts.
        assert!(stats.steps < 20_000, "{}: {stats:?}", problem.name);
    }
}

#[test]
fn bdf_error_follows_the_tolerance() {
    // Tighter tolerances give proportionally smaller errors on HIRES (the error at each
    // tolerance stays within a modest factor of it).
    let problem = stiff::hires();
    let mut previous = f64::INFINITY;
    for rtol in [1e-4, 1e-6, 1e-8] {
        let (x, _) = solve(&Method::Bdf, &problem, rtol, rtol * 1e-4);
        let error = relative_error(&x, &problem.reference, 1e-6);
        assert!(error < 100.0 * rtol, "rtol {rtol}: error {error:e}");
        assert!(error < previous, "rtol {rtol}: error {error:e} not below {previous:e}");
        previous = error;
    }
}
