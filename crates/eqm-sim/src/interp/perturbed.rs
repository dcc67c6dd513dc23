//! The last resort of a nonlinear loop whose Jacobian is singular where its unknowns stand:
//! Newton from points moved off that point.
//!
//! Input: a torn loop ([`LoopProblem`] with its [`LoopSolver`]) whose solve from the held values
//! failed with a singular Jacobian, and those values with that failure. Output: the solution in
//! the slots and the [`Recovery`] that found it, or `None` with the slots holding values the
//! caller evaluates again. A loop like `x = sin(time) + r`, `r = sin(x)` starts at its triple root `x = 0`, where
//! `1 - cos(x)` vanishes: no Newton step, trust-region step or homotopy leaves a point where
//! every derivative is zero, yet Newton from a point beside it finds the root the time moved
//! to. It deliberately does not touch a linear loop: a linear loop singular at one point is
//! singular at every point, and its consistent equations have infinitely many solutions, which
//! stays an error rather than one of them picked.
//!
//! When the held values already solve the loop (residuals exactly zero) and only the Jacobian
//! there is singular, they are accepted only when Newton from the moved points comes back to
//! them: a root that is isolated though degenerate (`x = sin(x)` at 0). Where the solutions
//! form a curve through the held values (`x² + y² = 1` twice), Newton from a point beside it
//! lands elsewhere on the curve, and the failure stands: no run picks one of many solutions.

use super::*;

/// How far the moved points lie from the held values, relative to each unknown's magnitude (its
/// value, at least its nominal value).
const PERTURBATION: f64 = 1e-3;

/// How close Newton from a moved point must come back to held values that already solve the
/// loop, relative to the distance the point was moved, for them to count as an isolated root.
const ISOLATION: f64 = 1e-2;

/// Newton from the held values moved by `PERTURBATION` of each unknown's magnitude, by
/// different fractions and in two directions, so that no symmetry of the equations keeps the
/// moved point singular: the first that solves the loop (see the module's description). `None`
/// when the loop is linear, the failure was not a singular Jacobian, or no moved point leads
/// to a root.
pub(super) fn from_perturbed_starts(
    solver: &mut LoopSolver,
    problem: &mut dyn LoopProblem,
    (held, failure): (&[f64], &SolveError),
) -> Result<Option<Recovery>, SolveError> {
    if solver.linear || !matches!(failure, SolveError::Kind(FailureKind::Singular)) {
        return Ok(None);
    }
    let n = solver.n;
    let mut residuals = vec![0.0; n];
    if problem.evaluate(held, &mut residuals).is_err() || !residuals.iter().all(|v| v.is_finite()) {
        return Ok(None);
    }
    if max_abs(&residuals) == 0.0 {
        return isolated_root(solver, problem, held);
    }
    for direction in directions(n) {
        let point = moved(held, &solver.nominal, &direction);
        if problem.evaluate(&point, &mut residuals).is_err() || !residuals.iter().all(|v| v.is_finite()) {
            continue;
        }
        let before = max_abs(&residuals);
        if solver.newton(problem).is_err() {
            continue;
        }
        let solution: Vec<f64> = (0..n).map(|j| problem.guess(j)).collect();
        if problem.evaluate(&solution, &mut residuals).is_ok() && reduced(before, max_abs(&residuals)) {
            return Ok(Some(recovery(failure)));
        }
    }
    Ok(None)
}

/// Held values that solve the loop exactly where its Jacobian is singular: accepted when
/// Newton from points moved off them in two directions comes back to them each time (an
/// isolated root), with the slots holding them again; `None` when one does not (a curve of
/// solutions through them, or no convergence).
fn isolated_root(
    solver: &mut LoopSolver,
    problem: &mut dyn LoopProblem,
    held: &[f64],
) -> Result<Option<Recovery>, SolveError> {
    let mut residuals = vec![0.0; solver.n];
    for direction in directions(solver.n).into_iter().step_by(2) {
        let point = moved(held, &solver.nominal, &direction);
        if problem.evaluate(&point, &mut residuals).is_err() {
            return Ok(None);
        }
        // Newton toward a degenerate root converges slowly and may stop beside it where the
        // Jacobian rounds to singular: where it stopped is what tells.
        let _ = solver.newton(problem);
        let back = scaled_distance(&solver.t, held, &solver.nominal);
        if back > ISOLATION * scaled_distance(&point, held, &solver.nominal) {
            problem.evaluate(held, &mut residuals)?;
            return Ok(None);
        }
    }
    problem.evaluate(held, &mut residuals)?;
    Ok(Some(Recovery {
        newton: NewtonFailure::Singular,
        method: RecoveryMethod::Perturbed,
        iterations: 1,
    }))
}

/// The directions of the moves, in units of `PERTURBATION` of each unknown's magnitude: a
/// factor in [1, 2) that differs between unknowns, all of one sign; the opposite; and with
/// alternating signs (for one unknown, the opposite again).
fn directions(n: usize) -> [Vec<f64>; 3] {
    let spread: Vec<f64> = (0..n)
        .map(|j| 1.0 + (j as f64 * 0.618_033_988_749_895).fract())
        .collect();
    let opposite = spread.iter().map(|s| -s).collect();
    let alternating = match n {
        1 => spread.iter().map(|s| -s).collect(),
        _ => spread
            .iter()
            .enumerate()
            .map(|(j, s)| if j % 2 == 0 { *s } else { -s })
            .collect(),
    };
    [spread, opposite, alternating]
}

/// `held` moved along `direction`, each unknown by `PERTURBATION` of its magnitude (its value,
/// at least its nominal value).
fn moved(held: &[f64], nominal: &[f64], direction: &[f64]) -> Vec<f64> {
    held.iter()
        .zip(nominal)
        .zip(direction)
        .map(|((h, n), d)| h + PERTURBATION * h.abs().max(unit(*n)) * d)
        .collect()
}

/// A nominal value usable as a unit (1 where none is usable).
fn unit(nominal: f64) -> f64 {
    if nominal.is_finite() && nominal > 0.0 {
        nominal
    } else {
        1.0
    }
}

/// The largest distance between `a` and `b` in any unknown, in units of its nominal value.
fn scaled_distance(a: &[f64], b: &[f64], nominal: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .zip(nominal)
        .map(|((x, y), n)| (x - y).abs() / unit(*n))
        .fold(0.0, f64::max)
}

fn recovery(failure: &SolveError) -> Recovery {
    Recovery {
        newton: NewtonFailure::of(failure),
        method: RecoveryMethod::Perturbed,
        iterations: 1,
    }
}
