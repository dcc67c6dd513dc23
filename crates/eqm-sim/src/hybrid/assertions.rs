//! The assertions of a model's equation sections during a run.
//!
//! Input: the hybrid model at a point of the solution (the end of an accepted step, an output
//! time within one, either side of an event, the start). Output: nothing when every assertion holds; a
//! [`HybridError::Assertion`] for a false one of level error; a warning (`W0701`) in the run's
//! statistics for a false one of level warning, once each time it stops holding. Assertions on
//! parameters alone, and those of initial sections, are checked once, at the start. An assertion found false at the end of a
//! step is traced back on the step's dense output to the instant it stopped holding, so the
//! report names that time and no row after it is written.

use super::*;
use eqm_compile::exec::ExecAssertion;
use eqm_diag::Diagnostic;
use eqm_ir::flat::AssertionLevel;

impl HybridModel<'_> {
    /// Checks the assertions at `(t, x)`, after evaluating the model there; `start` includes
    /// those on parameters alone.
    pub(super) fn check_assertions(&mut self, t: f64, x: &[f64], start: bool) -> Result<(), HybridError> {
        match self.false_assertion(t, x, start)? {
            Some(k) => Err(self.assertion_error(k, t, x)),
            None => Ok(()),
        }
    }

    /// Checks the assertions at the end of the step `(t_prev, t]` just taken; when one of level
    /// error is false, `Err` holds the last time the step's dense output still satisfies it
    /// (rows may be written up to there) and the failure at the first time it does not.
    pub(super) fn check_step(
        &mut self,
        stepper: &dyn Stepper,
        t_prev: f64,
        t: f64,
        x: &[f64],
    ) -> Result<(), (f64, HybridError)> {
        let k = match self.false_assertion(t, x, false) {
            Ok(None) => return Ok(()),
            Ok(Some(k)) => k,
            Err(e) => return Err((t_prev, e)),
        };
        // Bisection on the dense output between the step's start, where it held, and its end.
        let (mut holds, mut fails) = (t_prev, t);
        let mut point = std::mem::take(&mut self.probe_point);
        for _ in 0..200 {
            let mid = 0.5 * (holds + fails);
            if !(mid > holds && mid < fails) {
                break;
            }
            stepper.interpolate(mid, &mut point);
            match self.assertion_holds(k, mid, &point) {
                Ok(true) => holds = mid,
                Ok(false) => fails = mid,
                Err(e) => {
                    self.probe_point = point;
                    return Err((holds, e));
                }
            }
        }
        stepper.interpolate(fails, &mut point);
        let error = self.assertion_error(k, fails, &point);
        self.probe_point = point;
        Err((holds, error))
    }

    /// The failure of assertion `k` at `(t, x)`, its message showing the values there.
    fn assertion_error(&mut self, k: usize, t: f64, x: &[f64]) -> HybridError {
        let program = self.program;
        let a = &program.assertions()[k];
        let mut dx = std::mem::take(&mut self.check_dx);
        let message = self.message_at(&a.message, t, x, &mut dx);
        self.check_dx = dx;
        HybridError::Assertion {
            time: t,
            message: format!("{}: {message}", what_failed(a)),
            span: a.span,
            condition: a.text.clone(),
        }
    }

    /// The text of `message` with its values at `(t, x)`; one that cannot be computed there is
    /// shown as written.
    fn message_at(&mut self, message: &eqm_ir::flat::Message, t: f64, x: &[f64], dx: &mut [f64]) -> String {
        if message.exprs().next().is_none() {
            return message.written();
        }
        let span = self.program.model_span();
        let settled = self.surfaces_at(t, x, dx).is_ok();
        message.render(&mut |e| {
            settled
                .then(|| self.ode.instance.event_value(e, span, t, x, dx).ok())
                .flatten()
        })
    }

    /// Whether assertion `k` holds at `(t, x)`.
    fn assertion_holds(&mut self, k: usize, t: f64, x: &[f64]) -> Result<bool, HybridError> {
        let a = &self.program.assertions()[k];
        let mut dx = std::mem::take(&mut self.check_dx);
        let result = (|| {
            self.surfaces_at(t, x, &mut dx)?;
            self.ode.instance.event_value(a.condition, a.span, t, x, &mut dx)
        })();
        self.check_dx = dx;
        Ok(result? != 0.0)
    }

    /// The first assertion of level error that is false at `(t, x)`, reporting those of level
    /// warning that stopped holding; `start` includes those on parameters alone.
    fn false_assertion(&mut self, t: f64, x: &[f64], start: bool) -> Result<Option<usize>, HybridError> {
        let assertions = self.program.assertions();
        if !assertions.iter().any(|a| start || !(a.parametric || a.initial)) {
            return Ok(None);
        }
        let mut dx = std::mem::take(&mut self.check_dx);
        let result = self.assertions_at(assertions, t, x, &mut dx, start);
        self.check_dx = dx;
        result
    }

    fn assertions_at(
        &mut self,
        assertions: &[ExecAssertion],
        t: f64,
        x: &[f64],
        dx: &mut [f64],
        start: bool,
    ) -> Result<Option<usize>, HybridError> {
        self.surfaces_at(t, x, dx)?;
        for (k, a) in assertions.iter().enumerate() {
            if (a.parametric || a.initial) && !start {
                continue;
            }
            let holds = self.ode.instance.event_value(a.condition, a.span, t, x, dx)? != 0.0;
            let held = std::mem::replace(&mut self.assertions_holding[k], holds);
            match a.level {
                _ if holds => {}
                AssertionLevel::Error => return Ok(Some(k)),
                AssertionLevel::Warning if held => {
                    let text = self.message_at(&a.message, t, x, dx);
                    let message = format!("at t = {t} {}: {text}", what_failed(a));
                    self.stats.warnings.push(
                        Diagnostic::warning("W0701", message, a.span, "this assertion")
                            .with_note(format!("`{}` is false; the run goes on", a.text)),
                    );
                }
                AssertionLevel::Warning => {}
            }
        }
        Ok(None)
    }
}

/// What a false assertion means: on parameters alone, that they are not valid; with the
/// component whose equations hold it, so that a message written once in a library class says
/// which of its instances failed.
fn what_failed(a: &ExecAssertion) -> String {
    let of = if a.component.is_empty() {
        String::new()
    } else {
        format!(" of `{}`", a.component)
    };
    if a.parametric {
        format!("the parameters violate an assertion{of}")
    } else {
        format!("an assertion{of} does not hold")
    }
}
