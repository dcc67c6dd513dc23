//! The options every method reads, and their checks.
//!
//! Input: [`Options`] as a caller fills them in (tolerances, a fixed step, step limits). Output:
//! the checked values a stepper works with (its fixed step, its absolute tolerance per
//! component), or an [`IntegrationError::InvalidInput`] naming the unusable option. It
//! deliberately does not pick defaults per method: every method reads the same options.

use crate::error::IntegrationError;

/// The absolute tolerance: one for all components, or one per component.
#[derive(Debug, Clone, PartialEq)]
pub enum Atol {
    Scalar(f64),
    PerComponent(Vec<f64>),
}

/// Method options. Adaptive methods read `rtol`, `atol`, `initial_step` and `max_step`; fixed-step
/// methods read `step`; all read `max_steps`. The methods with both modes
/// ([`Method::adapts_without_step`](crate::Method::adapts_without_step)) take fixed steps when
/// `step` is given (and then read `rtol` and `atol` only as the scale of their Newton tolerance).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Relative tolerance (≥ 0).
    pub rtol: f64,
    /// Absolute tolerance (> 0, so that the error scale `atol + rtol·|x|` is never zero).
    pub atol: Atol,
    /// The step size of fixed-step methods; required by them. Implicit Euler, the trapezoid,
    /// BDF, Radau5 and diagonally implicit tableaux take fixed steps when it is given and
    /// control their step size when it is not.
    pub step: Option<f64>,
    /// The most steps (accepted and rejected) one stepper may attempt.
    pub max_steps: usize,
    /// The first step of an adaptive method; chosen automatically when `None`.
    pub initial_step: Option<f64>,
    /// An upper bound on the step of an adaptive method.
    pub max_step: Option<f64>,
}

/// Default for [`Options::max_steps`].
pub const DEFAULT_MAX_STEPS: usize = 1_000_000;

impl Default for Options {
    fn default() -> Self {
        Options {
            rtol: 1e-6,
            atol: Atol::Scalar(1e-6),
            step: None,
            max_steps: DEFAULT_MAX_STEPS,
            initial_step: None,
            max_step: None,
        }
    }
}

impl Options {
    /// Checks the options every method reads.
    fn check_common(&self) -> Result<(), IntegrationError> {
        if self.max_steps == 0 {
            return Err(IntegrationError::invalid(
                "the maximum number of steps must be at least 1",
            ));
        }
        for (what, value) in [("initial step", self.initial_step), ("maximum step", self.max_step)] {
            if let Some(h) = value
                && (h.is_nan() || h <= 0.0)
            {
                return Err(IntegrationError::invalid(format!(
                    "the {what} must be positive, not {h}"
                )));
            }
        }
        Ok(())
    }

    /// The fixed step `h` of a fixed-step method, checked.
    pub(crate) fn fixed_step(&self, method: &str) -> Result<f64, IntegrationError> {
        self.check_common()?;
        match self.step {
            Some(h) if h > 0.0 && h.is_finite() => Ok(h),
            Some(h) => Err(IntegrationError::invalid(format!(
                "the step size must be positive and finite, not {h}"
            ))),
            None => Err(IntegrationError::invalid(format!(
                "{method} is a fixed-step method and needs a step size"
            ))),
        }
    }

    /// The absolute tolerance expanded to one value per component, checked together with
    /// `rtol`.
    pub(crate) fn atol_per_component(&self, dim: usize) -> Result<Vec<f64>, IntegrationError> {
        self.check_common()?;
        if !(self.rtol >= 0.0 && self.rtol.is_finite()) {
            return Err(IntegrationError::invalid(format!(
                "the relative tolerance must be ≥ 0, not {}",
                self.rtol
            )));
        }
        let atol = match &self.atol {
            Atol::Scalar(a) => vec![*a; dim],
            Atol::PerComponent(v) if v.len() == dim => v.clone(),
            Atol::PerComponent(v) => {
                return Err(IntegrationError::invalid(format!(
                    "{} absolute tolerances given for {dim} states",
                    v.len()
                )));
            }
        };
        if let Some(bad) = atol.iter().find(|a| !(**a > 0.0 && a.is_finite())) {
            return Err(IntegrationError::invalid(format!(
                "absolute tolerances must be positive, not {bad}"
            )));
        }
        Ok(atol)
    }
}
