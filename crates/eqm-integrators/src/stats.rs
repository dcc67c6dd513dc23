//! The counters every stepper keeps ([`Stats`]) and the budget of step attempts they bound.
//!
//! Input: the counts a stepper makes as it evaluates, factors and steps. Output: the public
//! [`Stats`] and the `TooManySteps` error once the attempts reach the budget. It sits below
//! the system's evaluation (`system`, which counts right-hand sides) and the stepper interface
//! (`stepper`), and deliberately knows nothing about either.

use crate::error::IntegrationError;

/// Counters of one stepper since `initialize` (restarts keep counting).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Accepted steps.
    pub steps: usize,
    /// Rejected step attempts (error too large, or the trial produced a failure).
    pub rejected: usize,
    /// Evaluations of the right-hand side (those for Jacobians included).
    pub rhs_evals: usize,
    /// Jacobians built (symbolic ones and difference quotients).
    pub jacobians: usize,
    /// Of those, the ones the system computed itself
    /// ([`crate::OdeSystem::jacobian`]).
    pub symbolic_jacobians: usize,
    /// Of those, the sparse ones (whose iteration matrices the sparse LU factors).
    pub sparse_jacobians: usize,
    /// LU factorisations of iteration matrices.
    pub factorizations: usize,
}

impl Stats {
    pub(crate) fn attempts(&self) -> usize {
        self.steps + self.rejected
    }
}

/// The `TooManySteps` error once `max_steps` attempts have been made.
pub(crate) fn check_budget(t: f64, stats: &Stats, max_steps: usize) -> Result<(), IntegrationError> {
    if stats.attempts() < max_steps {
        Ok(())
    } else {
        Err(IntegrationError::TooManySteps { time: t, max_steps })
    }
}
