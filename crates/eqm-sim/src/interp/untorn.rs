//! The last resort of a torn loop whose solved form leaves its domain: the loop's equations as
//! written, every unknown an iteration variable.
//!
//! Input: a [`LoopProblem`] whose loop has untorn residuals
//! ([`eqm_compile::exec::LoopBlock::untorn`]), the values its unknowns held before the solve.
//! Output: every unknown of the loop written into its slot, solving the equations as written,
//! or the failure of the torn solve. The Jacobian is by difference quotients; the iteration is
//! [`LoopSolver::run`]'s own (Newton, the trust region, the homotopy). This module does not
//! decide when the untorn equations are used and never replaces a torn solve that succeeded.

use super::*;

/// The untorn equations of a loop as a loop of their own, starting from `start`.
struct UntornLoop<'x> {
    inner: &'x mut dyn LoopProblem,
    start: &'x [f64],
}

impl LoopProblem for UntornLoop<'_> {
    fn guess(&self, j: usize) -> f64 {
        self.start[j]
    }

    fn evaluate(&mut self, t: &[f64], f: &mut [f64]) -> Result<(), SolveError> {
        self.inner.evaluate_untorn(t, f)
    }

    fn partials(&mut self, _out: &mut [f64]) -> Result<(), SolveError> {
        // The untorn solver has no symbolic Jacobian, so it never asks for partials.
        Ok(())
    }

    fn inner_value(&self, _k: usize) -> f64 {
        0.0
    }

    fn evaluate_untorn(&mut self, t: &[f64], f: &mut [f64]) -> Result<(), SolveError> {
        self.inner.evaluate_untorn(t, f)
    }
}

impl LoopSolver {
    /// The solver of the untorn equations of loop `b`: the tearing unknowns (in units of their
    /// nominal values) and then the inner ones as iteration variables, difference quotients for
    /// the Jacobian.
    pub(super) fn untorn(b: &eqm_compile::exec::LoopBlock) -> LoopSolver {
        let n = b.tearing.len() + b.inner.len();
        let mut nominal = b.nominal.clone();
        nominal.resize(n, 1.0);
        LoopSolver {
            n,
            linear: false,
            pattern: None,
            partials: Vec::new(),
            t: vec![0.0; n],
            f: vec![0.0; n],
            trial: vec![0.0; n],
            f_trial: vec![0.0; n],
            step: DVector::zeros(n),
            dz: Vec::new(),
            jm: DMatrix::zeros(n, n),
            pivots: vec![0; n],
            start: vec![0.0; n],
            regular: false,
            nominal,
            jac: DMatrix::zeros(n, n),
            descent: vec![0.0; n],
            recoveries: None,
            untorn: None,
            untorn_start: Vec::new(),
            factors: None,
            continuation: false,
        }
    }

    /// Turns the continuation on the start values on or off, for the untorn solver too.
    pub(super) fn set_continuation(&mut self, on: bool) {
        self.continuation = on;
        if let Some(untorn) = self.untorn.as_mut() {
            untorn.continuation = on;
        }
    }

    /// Sets the nominal value of tearing unknown `j`, which the untorn solver shares.
    pub(super) fn set_nominal(&mut self, j: usize, value: f64) {
        self.nominal[j] = value;
        if let Some(untorn) = self.untorn.as_mut() {
            untorn.nominal[j] = value;
        }
    }

    /// Keeps the values the loop's unknowns hold before the torn solve overwrites the inner
    /// ones: the untorn solve starts from them.
    pub(super) fn keep_untorn_start(&mut self, problem: &dyn LoopProblem) {
        let n = self.n;
        self.untorn_start[..n].copy_from_slice(&self.start);
        for k in 0..self.untorn_start.len() - n {
            let value = problem.inner_value(k);
            self.untorn_start[n + k] = if value.is_finite() { value } else { 0.0 };
        }
    }

    /// Solves the loop's equations as written when the torn solve failed with `failure`;
    /// without untorn residuals, or when they are not solved either, the failure stands.
    pub(super) fn run_untorn(&mut self, problem: &mut dyn LoopProblem, failure: SolveError) -> Result<(), SolveError> {
        let Some(untorn) = self.untorn.as_mut() else {
            return Err(failure);
        };
        let mut equations = UntornLoop {
            inner: problem,
            start: &self.untorn_start,
        };
        if untorn.run(&mut equations).is_err() {
            return Err(failure);
        }
        let recovery = Recovery {
            newton: NewtonFailure::of(&failure),
            method: RecoveryMethod::Untorn,
            iterations: 0,
        };
        Recoveries::note(&mut self.recoveries, recovery);
        Ok(())
    }
}
