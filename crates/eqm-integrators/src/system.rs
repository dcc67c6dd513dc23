//! The problem the integrators solve: a system `x' = f(t, x)` of fixed dimension, and the one
//! place its right-hand side is evaluated.
//!
//! Input: an [`OdeSystem`] (a compiled model's right-hand side, or any test problem). Output:
//! derivatives, counted in the stepper's [`Stats`], with a failing or non-finite evaluation
//! turned into an [`IntegrationError`] at its time. Jacobians are built in `jacobian`; this
//! module deliberately knows nothing about methods or step sizes.

use crate::error::{IntegrationError, Quantity, check_finite};
use crate::stats::Stats;
use std::fmt;

/// The right-hand side failed to evaluate (for example a nonlinear solve inside the model did
/// not converge, or an assertion failed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RhsError {
    pub message: String,
}

impl RhsError {
    /// An error with the given message.
    pub fn new(message: impl Into<String>) -> Self {
        RhsError {
            message: message.into(),
        }
    }
}

impl fmt::Display for RhsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RhsError {}

/// A system of ordinary differential equations `x' = f(t, x)` with a fixed dimension.
pub trait OdeSystem {
    /// The number of states.
    fn dim(&self) -> usize;
    /// Writes `f(t, x)` into `dx`; both slices have `dim()` elements.
    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RhsError>;
    /// Writes the Jacobian `∂f/∂x` at `(t, x)` into `jacobian` (`dim() × dim()`, every entry)
    /// when the system can compute it exactly (a model's symbolic Jacobian). `None` means it
    /// cannot, at this point or at all, and the integrator uses difference quotients.
    fn jacobian(&mut self, t: f64, x: &[f64], jacobian: &mut nalgebra::DMatrix<f64>) -> Option<Result<(), RhsError>> {
        let _ = (t, x, jacobian);
        None
    }
    /// The rows of the pattern of `∂f/∂x` (row `i` lists the columns its entries may be nonzero
    /// in, sorted), when the system knows it; large systems then get sparse Jacobians and a
    /// sparse LU ([`linalg`](crate::linalg)).
    fn jacobian_pattern(&self) -> Option<&[Vec<u32>]> {
        None
    }
    /// Writes the values of the pattern's entries of `∂f/∂x` at `(t, x)`, row by row, when the
    /// system can compute them exactly; `None` as for [`OdeSystem::jacobian`].
    fn sparse_jacobian(&mut self, t: f64, x: &[f64], values: &mut [f64]) -> Option<Result<(), RhsError>> {
        let _ = (t, x, values);
        None
    }
    /// The stepper accepted a step, or the caller (re)started the integration, at the point of
    /// the system's last evaluation: a system whose evaluations iterate (a model's algebraic
    /// loops) keeps what the next evaluations start from, so that trials the stepper rejects
    /// leave no trace in them.
    fn accepted(&mut self) {}
    /// Whether whoever started the run asked it to stop (a front end's cancel flag, set on
    /// Ctrl-C). The driving loops look before every step, so that a run whose next output row
    /// is far away still stops soon; they end as if the observer had stopped the run there.
    fn cancelled(&self) -> bool {
        false
    }
}

/// Evaluates the right-hand side, counting the call and turning failures and non-finite
/// derivatives into errors at time `t`.
pub(crate) fn eval_rhs(
    sys: &mut dyn OdeSystem,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
    stats: &mut Stats,
) -> Result<(), IntegrationError> {
    stats.rhs_evals += 1;
    sys.rhs(t, x, dx).map_err(|e| IntegrationError::Rhs {
        time: t,
        message: e.message,
    })?;
    check_finite(t, dx, Quantity::Derivative)
}
