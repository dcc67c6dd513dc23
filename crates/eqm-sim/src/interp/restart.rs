//! Restarts of a solve that failed from the values its unknowns held: again from the block's
//! last solution, then from the values its first solve started from, and for a loop from points
//! ever farther along the Newton step of the held values and last (a nonlinear loop singular
//! where it stands) from points moved off them (`super::perturbed`).
//!
//! Input: a scalar implicit equation ([`ScalarProblem`]) or a torn loop ([`LoopProblem`] with
//! its [`LoopSolver`]), and the block's [`SoundPoints`]. Output: the solution in the slots, or
//! the failure of the solve from the values held, with those slots holding again the values
//! where that solve stopped. Each solve starts from the value its unknowns hold, which after a
//! failed solve (an integrator's trial step beyond the point where the equation has a root) is
//! where a diverging iteration stopped; the next trial, closer to the last accepted point, must
//! not start from there. This module deliberately does not decide which methods one solve
//! tries ([`solve_scalar`] and [`LoopSolver::run`] do) and keeps no history beyond the two
//! points of each block.

use super::*;

/// The points a block's solve restarts from: its last solution and the values its first solve
/// started from (the start values, or what the initialization handed over). Empty until known.
#[derive(Debug, Clone, Default)]
pub(super) struct SoundPoints {
    last: Vec<f64>,
    first: Vec<f64>,
    /// The values a loop's solve started from, kept in a buffer so that a solve allocates
    /// nothing once the buffers have grown.
    held: Vec<f64>,
}

/// How far a restarted solve must reduce the residuals from those at its restart point: Newton
/// accepts a point where a tiny step no longer reduces them as a solution (a root at the level
/// of rounding), which at the edge of a domain (`sqrt(y) = u` with `u < 0`, stopped at y = 0)
/// is no root at all. A true root from a restart point is far below this.
pub(super) const RESTART_REDUCTION: f64 = 1e-8;

/// Whether residuals `after` a solve are a root's compared with those `before` it.
pub(super) fn reduced(before: f64, after: f64) -> bool {
    after == 0.0 || after <= RESTART_REDUCTION * before
}

/// Whether a failed solve may succeed from another start: it stopped for lack of progress or at
/// a value outside the equations' domain, not because the model failed (an assertion, a
/// limit of the evaluation).
fn may_restart(e: &SolveError) -> bool {
    matches!(
        e,
        SolveError::Kind(FailureKind::NoConvergence { .. } | FailureKind::Singular | FailureKind::NotFinite { .. })
    )
}

impl SoundPoints {
    /// The restart points that differ from `held` and from each other, last solution first.
    fn candidates(&self, held: &[f64]) -> Vec<Vec<f64>> {
        let mut out: Vec<Vec<f64>> = Vec::new();
        for point in [&self.last, &self.first] {
            let usable = point.len() == held.len() && point.iter().all(|v| v.is_finite());
            if usable && point.as_slice() != held && !out.iter().any(|p| p == point) {
                out.push(point.clone());
            }
        }
        out
    }

    /// Notes the values a solve starts from (kept when it is the block's first) and, after it
    /// succeeded, its solution.
    fn note(&mut self, start: &[f64], solution: Option<&[f64]>) {
        if self.first.is_empty() && start.iter().all(|v| v.is_finite()) {
            self.first = start.to_vec();
        }
        if let Some(solution) = solution {
            self.last.clear();
            self.last.extend_from_slice(solution);
        }
    }
}

impl SoundPoints {
    /// Keeps the solution the tearing slots of a loop of `n` unknowns hold.
    fn keep_solution(&mut self, n: usize, problem: &dyn LoopProblem) {
        self.last.clear();
        self.last.extend((0..n).map(|j| problem.guess(j)));
    }
}

/// [`solve_scalar`] from `guess`; when it fails, again from each point of `sound`. A solve
/// that needed a restart counts as recovered by it.
pub(super) fn solve_scalar_restarting(
    guess: f64,
    sound: &mut SoundPoints,
    f: &mut dyn ScalarProblem,
    bracketing: bool,
) -> Result<Option<Recovery>, SolveError> {
    sound.note(&[guess], None);
    let failure = match solve_scalar(guess, f, bracketing) {
        Ok(recovery) => {
            sound.note(&[guess], Some(&[f.value()]));
            return Ok(recovery);
        }
        Err(e) if !may_restart(&e) => return Err(e),
        Err(e) => e,
    };
    let stopped = f.value();
    for point in sound.candidates(&[guess]) {
        let Ok(before) = f.residual(point[0]) else { continue };
        if solve_scalar(point[0], f, bracketing).is_ok()
            && let Ok(after) = f.residual(f.value())
            && reduced(before.abs(), after.abs())
        {
            sound.note(&point, Some(&[f.value()]));
            return Ok(Some(Recovery {
                newton: NewtonFailure::of(&failure),
                method: RecoveryMethod::Restart,
                iterations: 1,
            }));
        }
    }
    // Where the solve from the held value stopped, as without restarts: the failure's
    // diagnosis (the state choice of a dummy-derivative form) reads it.
    let _ = f.residual(stopped);
    Err(failure)
}

/// [`LoopSolver::run`] from the values the tearing slots hold; when it fails, again from each
/// point of `sound`.
pub(super) fn run_loop_restarting(
    solver: &mut LoopSolver,
    sound: &mut SoundPoints,
    problem: &mut dyn LoopProblem,
) -> Result<(), SolveError> {
    let mut held = std::mem::take(&mut sound.held);
    held.clear();
    held.extend((0..solver.n).map(|j| problem.guess(j)));
    sound.note(&held, None);
    let outcome = solver.run(problem);
    if outcome.is_ok() {
        sound.keep_solution(solver.n, problem);
    }
    sound.held = held;
    let failure = match outcome {
        Ok(()) => return Ok(()),
        Err(e) if !may_restart(&e) => return Err(e),
        Err(e) => e,
    };
    let held = sound.held.clone();
    let stopped: Vec<f64> = (0..solver.n).map(|j| problem.guess(j)).collect();
    let mut residuals = vec![0.0; solver.n];
    for point in sound.candidates(&held) {
        // The tearing slots take the point (the inner values follow it), so the solve's first
        // guesses are the point's.
        if problem.evaluate(&point, &mut residuals).is_err() {
            continue;
        }
        let before = max_abs(&residuals);
        if solver.run(problem).is_ok() {
            sound.keep_solution(solver.n, problem);
            // The slots hold the solution again after its residuals are evaluated.
            if problem.evaluate(&sound.last, &mut residuals).is_err() || !reduced(before, max_abs(&residuals)) {
                continue;
            }
            let recovery = Recovery {
                newton: NewtonFailure::of(&failure),
                method: RecoveryMethod::Restart,
                iterations: 1,
            };
            Recoveries::note(&mut solver.recoveries, recovery);
            return Ok(());
        }
    }
    if let Some(recovery) = search_along_newton_ray(solver, sound, problem, &held, &failure)? {
        Recoveries::note(&mut solver.recoveries, recovery);
        return Ok(());
    }
    if let Some(recovery) = super::perturbed::from_perturbed_starts(solver, problem, (&held, &failure))? {
        sound.keep_solution(solver.n, problem);
        Recoveries::note(&mut solver.recoveries, recovery);
        return Ok(());
    }
    // Where the solve from the held values stopped, as without restarts.
    let _ = problem.evaluate(&stopped, &mut residuals);
    Err(failure)
}

/// How many points the search of [`search_along_newton_ray`] tries, each twice as far out as
/// the one before: 2^40 Newton steps reach any root a double can tell from the held values.
const RAY_PROBES: i32 = 40;

/// The last resort of a loop whose residuals have a local minimum that is no root between the
/// held values and the root: a solution that vanished where it met another (a saturated
/// amplifier with positive feedback past its switching point, whose next solution is the other
/// saturation). The Newton step at the held values points past that minimum; Newton is tried
/// from points ever farther along it (2, 4, 8, ... Newton steps out) until one converges to a
/// root (its residuals reduced as a restart's must be). None when no point does.
fn search_along_newton_ray(
    solver: &mut LoopSolver,
    sound: &mut SoundPoints,
    problem: &mut dyn LoopProblem,
    held: &[f64],
    failure: &SolveError,
) -> Result<Option<Recovery>, SolveError> {
    let n = solver.n;
    solver.trial.copy_from_slice(held);
    if !solver.evaluate(problem)? {
        return Ok(None);
    }
    solver.accept();
    if !solver.jacobian(problem)? || !solver.factor() || !solver.solve() {
        return Ok(None);
    }
    let direction: Vec<f64> = solver.step.iter().copied().collect();
    let mut point = vec![0.0; n];
    let mut residuals = vec![0.0; n];
    for k in 1..=RAY_PROBES {
        let scale = 2f64.powi(k);
        for j in 0..n {
            point[j] = held[j] + scale * direction[j];
        }
        if !point.iter().all(|v| v.is_finite()) {
            break;
        }
        if problem.evaluate(&point, &mut residuals).is_err() || !residuals.iter().all(|v| v.is_finite()) {
            continue;
        }
        let before = max_abs(&residuals);
        if solver.newton(problem).is_err() {
            continue;
        }
        sound.keep_solution(n, problem);
        if problem.evaluate(&sound.last, &mut residuals).is_ok() && reduced(before, max_abs(&residuals)) {
            return Ok(Some(Recovery {
                newton: NewtonFailure::of(failure),
                method: RecoveryMethod::NewtonRay,
                iterations: k as u32,
            }));
        }
    }
    Ok(None)
}
