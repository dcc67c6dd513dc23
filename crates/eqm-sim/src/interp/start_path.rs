//! The continuation on the start values of one block of the initialization that Newton (and,
//! for a loop, the trust-region method) did not solve: the path of the fixed-point homotopy
//! `H(x, λ) = λ F(x) + (1 - λ) s (x - x_start) / nominal` from the start values at λ = 0 to
//! the block's own equations at λ = 1, as Modelica allows a tool to do when the model has no
//! `homotopy()`.
//!
//! Input: a scalar implicit equation ([`ScalarProblem`]) or a torn loop ([`LoopProblem`] with
//! its [`LoopSolver`]) whose unknowns hold the start values. Output: the solution in the slots
//! with the steps the path took, or nothing when the path was lost. The path is followed by
//! [`super::path::follow`], the code the `homotopy()` continuation uses, with Newton on the
//! homotopy at fixed λ as corrector. The sign `s` is tried as +1 and then as -1: with +1 the
//! path has no turning point where the Jacobian has no negative real eigenvalue, with -1 where
//! it has no positive one, so a residual written with either sign has a chance. This module
//! deliberately does not run during integration, where a root reached along such a path may
//! belong to another branch than the last solution.

use super::path::{self, PathSteps};
use super::*;

/// The signs of the fixed-point term tried in turn.
const SIGNS: [f64; 2] = [1.0, -1.0];

/// A scalar equation blended with the fixed-point term at one λ.
struct FixedPointScalar<'x> {
    inner: &'x mut dyn ScalarProblem,
    lambda: f64,
    start: f64,
    /// The sign of the fixed-point term over the unknown's scale.
    slope: f64,
}

impl ScalarProblem for FixedPointScalar<'_> {
    fn residual(&mut self, z: f64) -> Result<f64, SolveError> {
        let r = self.inner.residual(z)?;
        Ok(self.lambda * r + (1.0 - self.lambda) * self.slope * (z - self.start))
    }

    fn derivative(&mut self) -> Option<Result<f64, SolveError>> {
        let (lambda, slope) = (self.lambda, self.slope);
        self.inner
            .derivative()
            .map(|d| d.map(|d| lambda * d + (1.0 - lambda) * slope))
    }

    fn value(&self) -> f64 {
        self.inner.value()
    }
}

/// The continuation on the start value of a scalar equation from `start`; on success the target
/// holds the solution (certified by Newton on the equation itself, its residual reduced by
/// [`RESTART_REDUCTION`] from the start's) and the steps are returned.
pub(super) fn scalar_start_path(start: f64, f: &mut dyn ScalarProblem) -> Option<u32> {
    let scale = start.abs().max(1.0);
    let before = f.residual(start).ok()?.abs();
    for sign in SIGNS {
        let mut solution = vec![start];
        let mut taken = PathSteps::default();
        let mut correct = |lambda: f64, values: &mut [f64]| -> Result<(), SolveError> {
            let mut blended = FixedPointScalar {
                inner: &mut *f,
                lambda,
                start,
                slope: sign / scale,
            };
            values[0] = newton_scalar(values[0], &mut blended)?;
            Ok(())
        };
        if path::follow(&mut solution, &mut correct, &mut taken).is_ok()
            && let Ok(z) = newton_scalar(solution[0], f)
            && let Ok(after) = f.residual(z)
            && reduced(before, after.abs())
        {
            return Some(taken.steps as u32);
        }
    }
    None
}

/// A loop blended with the fixed-point term at one λ, its first guesses the prediction.
struct FixedPointLoop<'x> {
    inner: &'x mut dyn LoopProblem,
    lambda: f64,
    start: &'x [f64],
    /// The sign of the fixed-point term over each tearing unknown's nominal value.
    slopes: &'x [f64],
    from: &'x [f64],
}

impl LoopProblem for FixedPointLoop<'_> {
    fn guess(&self, j: usize) -> f64 {
        self.from[j]
    }

    fn evaluate(&mut self, t: &[f64], f: &mut [f64]) -> Result<(), SolveError> {
        self.inner.evaluate(t, f)?;
        for (j, r) in f.iter_mut().enumerate() {
            *r = self.lambda * *r + (1.0 - self.lambda) * self.slopes[j] * (t[j] - self.start[j]);
        }
        Ok(())
    }

    fn partials(&mut self, out: &mut [f64]) -> Result<(), SolveError> {
        // The corrector differentiates the blend by difference quotients.
        self.inner.partials(out)
    }

    fn inner_value(&self, k: usize) -> f64 {
        self.inner.inner_value(k)
    }

    fn evaluate_untorn(&mut self, z: &[f64], f: &mut [f64]) -> Result<(), SolveError> {
        self.inner.evaluate_untorn(z, f)
    }
}

impl LoopSolver {
    /// The continuation on the start values of the loop from `start` (the values its solve
    /// started from); on success the slots hold the solution (certified by Newton on the loop
    /// itself) and the steps are returned. The corrector is a copy of this solver that
    /// differentiates by difference quotients: the symbolic partial derivatives are those of
    /// the loop, not of the blend.
    pub(super) fn start_path(&mut self, problem: &mut dyn LoopProblem) -> Option<u32> {
        let start = self.start.clone();
        let mut corrector = LoopSolver {
            pattern: None,
            untorn: None,
            factors: None,
            ..self.clone()
        };
        let mut f = vec![0.0; self.n];
        problem.evaluate(&start, &mut f).ok()?;
        let before = max_abs(&f);
        for sign in SIGNS {
            let slopes: Vec<f64> = self.nominal.iter().map(|s| sign / s).collect();
            let mut solution = start.clone();
            let mut taken = PathSteps::default();
            let mut correct = |lambda: f64, values: &mut [f64]| -> Result<(), SolveError> {
                let mut blended = FixedPointLoop {
                    inner: &mut *problem,
                    lambda,
                    start: &start,
                    slopes: &slopes,
                    from: values,
                };
                corrector.newton(&mut blended)?;
                values.copy_from_slice(&corrector.t);
                Ok(())
            };
            if path::follow(&mut solution, &mut correct, &mut taken).is_err() {
                continue;
            }
            // The tearing slots take the solution, from which Newton on the loop itself
            // confirms it.
            if problem.evaluate(&solution, &mut f).is_err() || self.newton(problem).is_err() {
                continue;
            }
            // The root must be one, not a point where Newton's steps became too small.
            let root: Vec<f64> = (0..self.n).map(|j| problem.guess(j)).collect();
            if problem.evaluate(&root, &mut f).is_ok() && reduced(before, max_abs(&f)) {
                return Some(taken.steps as u32);
            }
        }
        None
    }
}
