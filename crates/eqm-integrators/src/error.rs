//! Why an integration stops, and the checks for non-finite values that produce those errors.
//!
//! Input: a time and the values computed there. Output: an [`IntegrationError`] that names the
//! time (and for non-finite values, every offending component), with a message for users. It
//! deliberately decides nothing about retrying: the steppers decide which errors a smaller step
//! may avoid ([`IntegrationError::is_recoverable`]).

use std::fmt;

/// Which quantity was not finite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    State,
    Derivative,
}

/// Why an integration stopped. Every variant except `InvalidInput` carries the time.
#[derive(Debug, Clone, PartialEq)]
pub enum IntegrationError {
    /// NaN or infinity in the state or its derivative, with every offending component.
    NonFinite {
        time: f64,
        components: Vec<usize>,
        quantity: Quantity,
    },
    /// The step size control asked for a step too small to advance time.
    StepSizeUnderflow { time: f64, step: f64 },
    /// More than `max_steps` step attempts.
    TooManySteps { time: f64, max_steps: usize },
    /// The right-hand side reported an error at this time.
    Rhs { time: f64, message: String },
    /// The options, initial values or output request are unusable.
    InvalidInput { message: String },
}

impl IntegrationError {
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        IntegrationError::InvalidInput {
            message: message.into(),
        }
    }

    /// The time the error happened at, if it belongs to one.
    pub fn time(&self) -> Option<f64> {
        match self {
            IntegrationError::NonFinite { time, .. }
            | IntegrationError::StepSizeUnderflow { time, .. }
            | IntegrationError::TooManySteps { time, .. }
            | IntegrationError::Rhs { time, .. } => Some(*time),
            IntegrationError::InvalidInput { .. } => None,
        }
    }

    /// Failures of a trial step that a smaller step may avoid: an adaptive method rejects the
    /// step and retries instead of giving up.
    pub(crate) fn is_recoverable(&self) -> bool {
        matches!(self, IntegrationError::NonFinite { .. } | IntegrationError::Rhs { .. })
    }
}

impl fmt::Display for IntegrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntegrationError::NonFinite {
                time,
                components,
                quantity,
            } => {
                let what = match quantity {
                    Quantity::State => "state",
                    Quantity::Derivative => "derivative",
                };
                // A large model can have thousands of offending components; the message names
                // the first few, the error value keeps them all.
                const SHOWN: usize = 10;
                let listed: Vec<String> = components.iter().take(SHOWN).map(|c| c.to_string()).collect();
                write!(
                    f,
                    "at t = {time}: the {what} is NaN or infinite in component(s) {}",
                    listed.join(", ")
                )?;
                if components.len() > SHOWN {
                    write!(f, " and {} more", components.len() - SHOWN)?;
                }
                Ok(())
            }
            IntegrationError::StepSizeUnderflow { time, step } => {
                write!(f, "at t = {time}: the step size {step:e} is too small to advance time")
            }
            IntegrationError::TooManySteps { time, max_steps } => {
                write!(f, "at t = {time}: more than {max_steps} steps")
            }
            IntegrationError::Rhs { time, message } => write!(f, "at t = {time}: {message}"),
            IntegrationError::InvalidInput { message } => f.write_str(message),
        }
    }
}

impl std::error::Error for IntegrationError {}

/// An error naming every non-finite component of `values`, if there is one.
pub(crate) fn check_finite(t: f64, values: &[f64], quantity: Quantity) -> Result<(), IntegrationError> {
    // A fold without short-circuit vectorises (this runs on every stage of every step); the
    // failing components are sought only when there is one.
    if values.iter().fold(true, |finite, v| finite & v.is_finite()) {
        return Ok(());
    }
    let components = values
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_finite())
        .map(|(i, _)| i)
        .collect();
    Err(IntegrationError::NonFinite {
        time: t,
        components,
        quantity,
    })
}
