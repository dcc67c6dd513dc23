//! The homotopy continuation of an initialization whose equations call `homotopy(actual,
//! simplified)`, as Modelica defines the operator.
//!
//! Input: the initialization program's instance, whose `homotopy` calls the compiler blended
//! into `λ*actual + (1 - λ)*simplified` with λ in one work slot. Output: the instance holding
//! the solution at λ = 1, which is the actual problem, reached along the path from the
//! simplified problem at λ = 0; or the failure where the path was lost. The spec leaves the
//! method to the tool and recommends that the actual problem not be solved directly first:
//! a direct solve may land on another solution than the one the simplified problem leads to,
//! so the continuation is always taken when the initialization has a `homotopy` call.
//!
//! The path is followed by [`path::follow`] (a secant predictor, step control in λ), with the
//! program's own solvers as corrector (Newton on every implicit block at that fixed λ). It
//! deliberately does not search for roots by bracketing along the path, which could jump to
//! another branch.

use crate::instance::Instance;
use crate::interp::path::{self, PathSteps};
use eqm_ir::failure::EvalFailure;

/// How the continuation went: the steps taken and the corrections that failed; and, when the
/// path was lost, the last λ reached (the actual problem was then solved directly).
#[derive(Debug, Clone, Copy)]
pub struct Path {
    pub steps: usize,
    pub rejected: usize,
    pub lost_at: Option<f64>,
}

impl Path {
    /// The path in words, for `-v`.
    pub fn describe(&self) -> String {
        match self.lost_at {
            None => format!(
                "initialization: homotopy continuation over λ from 0 to 1 in {} steps ({} rejected)",
                self.steps, self.rejected
            ),
            Some(lambda) => format!(
                "initialization: the homotopy continuation lost its path at λ = {} after {} steps ({} rejected); the actual problem was solved directly from the start values",
                eqm_diag::text::format_number(lambda),
                self.steps,
                self.rejected
            ),
        }
    }
}

/// Where the continuation stopped: the last λ solved and the failure of the next correction.
pub struct Lost {
    pub lambda: f64,
    pub failure: EvalFailure,
}

/// Solves the initialization in `solver` at λ = 0 and follows the solution to λ = 1, λ being
/// work slot `lambda` of `solver`; `evaluate` runs the initialization program once. The
/// simplified problem at λ = 0 is solved as any initialization is (with bracketing, which the
/// initialization turns on); the corrections along the path only with Newton from the
/// prediction.
///
/// When the path is lost (a simplified problem without solution, or a path too steep in λ to
/// follow, such as an exponential blended with a line far from its root), the actual problem is
/// solved directly from the start values, as a tool may always do (the spec allows
/// `homotopy(actual, simplified)` to be `actual`); the path says so. Only when that fails too
/// is the failure where the path was lost returned.
pub fn follow(
    solver: &mut Instance<'_>,
    lambda: u32,
    evaluate: &mut dyn FnMut(&mut Instance<'_>) -> Result<(), EvalFailure>,
) -> Result<Path, Lost> {
    let start_values = solver.work().to_vec();
    let mut path = Path {
        steps: 0,
        rejected: 0,
        lost_at: None,
    };
    solver.set_work(lambda, 0.0);
    let followed = match evaluate(solver) {
        Ok(()) => {
            solver.interpreter().set_bracketing(false);
            let result = follow_from_zero(solver, lambda, evaluate, &mut path);
            // The initialization's own passes after the path search roots by bracketing again.
            solver.interpreter().set_bracketing(true);
            result
        }
        Err(failure) => Err((0.0, Some(failure))),
    };
    let Err((lost_at, path_failure)) = followed else {
        return Ok(path);
    };
    restore(solver, &start_values);
    solver.set_work(lambda, 1.0);
    match evaluate(solver) {
        Ok(()) => Ok(Path {
            lost_at: Some(lost_at),
            ..path
        }),
        // The failure where the path was lost, or, when the path was lost because every
        // correction jumped away from it, the direct solve's own.
        Err(direct) => Err(Lost {
            lambda: lost_at,
            failure: path_failure.unwrap_or(direct),
        }),
    }
}

/// The path from the solution at λ = 0 that `solver` holds to λ = 1, followed by
/// [`path::follow`] with the program's own solvers as corrector; when it is lost, the last λ
/// reached with the failure of the last correction, and `solver` holds the last solution.
fn follow_from_zero(
    solver: &mut Instance<'_>,
    lambda: u32,
    evaluate: &mut dyn FnMut(&mut Instance<'_>) -> Result<(), EvalFailure>,
    path: &mut Path,
) -> Result<(), (f64, Option<EvalFailure>)> {
    let mut solution = solver.work().to_vec();
    let mut taken = PathSteps::default();
    let mut correct = |next: f64, values: &mut [f64]| {
        restore(solver, values);
        solver.set_work(lambda, next);
        evaluate(solver)?;
        values.copy_from_slice(solver.work());
        Ok(())
    };
    let followed = path::follow(&mut solution, &mut correct, &mut taken);
    path.steps = taken.steps;
    path.rejected = taken.rejected;
    if followed.is_err() {
        restore(solver, &solution);
    }
    followed
}

/// Writes `solution` back into `solver`.
fn restore(solver: &mut Instance<'_>, solution: &[f64]) {
    for (k, &value) in solution.iter().enumerate() {
        solver.set_work(k as u32, value);
    }
}
