//! The homotopy continuation of an initialization whose equations call `homotopy(actual,
//! simplified)`.
//!
//! Input: the initialization program's instance, whose `homotopy` calls the compiler blended
//! into `λ*actual + (1 - λ)*simplified` with λ in one work slot. Output: the instance holding
//! the solution at λ = 1, which is the actual problem, reached along the path from the
//! simplified problem at λ = 0; or the failure where the path was lost. The spec leaves the
//! method to the tool and recommends that the actual problem not be solved directly first:
//! a direct solve may land on another solution than the one the simplified problem leads to,
//! so the continuation is always taken when the initialization has a `homotopy` call.
//!
//! Each step predicts the solution at the next λ by the secant through the last two solutions
//! (the last solution alone after the first step), corrects it with the program's own
//! solvers (Newton on every implicit block at that fixed λ), halves the step when the
//! correction fails or jumps away from the prediction (another branch, past a turning point of
//! the path) and doubles it after a success. It deliberately does not search for roots
//! by bracketing along the path, which could jump to another branch.

use crate::instance::Instance;
use eqm_ir::failure::EvalFailure;

/// The first step in λ.
const FIRST_STEP: f64 = 0.05;
/// The largest step in λ: a larger one may jump to another branch of the solution path.
const LARGEST_STEP: f64 = 0.25;
/// The largest correction of a value from its prediction, relative to its magnitude, that
/// still counts as following the path.
const LARGEST_CORRECTION: f64 = 0.5;
/// The smallest step in λ before the continuation gives up.
const SMALLEST_STEP: f64 = 1e-6;

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

/// The path from the solution at λ = 0 that `solver` holds to λ = 1; when it is lost, the last
/// λ reached with the failure of the last correction (none when the corrections converged but
/// jumped away from the path).
fn follow_from_zero(
    solver: &mut Instance<'_>,
    lambda: u32,
    evaluate: &mut dyn FnMut(&mut Instance<'_>) -> Result<(), EvalFailure>,
    path: &mut Path,
) -> Result<(), (f64, Option<EvalFailure>)> {
    let mut at = 0.0;
    let mut solution = solver.work().to_vec();
    // The solution before the last and its λ, for the secant predictor.
    let mut before: Option<(f64, Vec<f64>)> = None;
    let mut step = FIRST_STEP;
    while at < 1.0 {
        let next = if at + step >= 1.0 - SMALLEST_STEP {
            1.0
        } else {
            at + step
        };
        predict(
            solver,
            &solution,
            before.as_ref().map(|(l, w)| (at - l, w.as_slice())),
            next - at,
        );
        solver.set_work(lambda, next);
        let prediction = solver.work().to_vec();
        let corrected = evaluate(solver);
        let failure = match corrected {
            Ok(()) if stays_on_path(&solution, &prediction, solver.work()) => {
                path.steps += 1;
                let previous = std::mem::replace(&mut solution, solver.work().to_vec());
                before = Some((at, previous));
                at = next;
                step = (2.0 * step).min(LARGEST_STEP);
                continue;
            }
            Ok(()) => None,
            Err(failure) => Some(failure),
        };
        path.rejected += 1;
        step /= 2.0;
        if step < SMALLEST_STEP {
            restore(solver, &solution);
            return Err((at, failure));
        }
    }
    Ok(())
}

/// Whether a converged correction stayed on the path: no value moved, in one step, by more than
/// [`LARGEST_CORRECTION`] of its magnitude at the last `solution` (of 1 for values below 1),
/// neither from that solution nor from its `prediction`. A larger move means Newton left the
/// path for another branch, as it does past a turning point of the path in λ, where no
/// solution is near; a path that is followed moves less the smaller the step.
fn stays_on_path(solution: &[f64], prediction: &[f64], corrected: &[f64]) -> bool {
    solution.iter().zip(prediction).zip(corrected).all(|((s, p), c)| {
        let scale = s.abs().max(1.0);
        (c - p).abs() <= LARGEST_CORRECTION * scale.max(p.abs()) && (c - s).abs() <= LARGEST_CORRECTION * scale
    })
}

/// Writes into `solver` the prediction of the solution a step `h` beyond `solution`: the
/// secant through the solution before (`h_before` earlier) and `solution` when there is one,
/// `solution` itself otherwise. Values that do not change along the path (discrete variables,
/// relations) stay as they are; a non-finite prediction falls back to the last solution.
fn predict(solver: &mut Instance<'_>, solution: &[f64], before: Option<(f64, &[f64])>, h: f64) {
    for (k, &value) in solution.iter().enumerate() {
        let predicted = match before {
            Some((h_before, older)) if h_before > 0.0 => {
                let slope = (value - older[k]) / h_before;
                let p = value + slope * h;
                if p.is_finite() { p } else { value }
            }
            _ => value,
        };
        solver.set_work(k as u32, predicted);
    }
}

/// Writes `solution` back into `solver`.
fn restore(solver: &mut Instance<'_>, solution: &[f64]) {
    for (k, &value) in solution.iter().enumerate() {
        solver.set_work(k as u32, value);
    }
}
