//! The Model Exchange calls of an instance: the importer's time and states in, the derivatives,
//! event indicators and events out.
//!
//! Input: an [`Instance`] instantiated for Model Exchange and initialized, and the importer's
//! calls. Output: values, and the outcome of each event (`fmi2NewDiscreteStates`). A value that
//! cannot be computed at a point the importer tried (a square root of a negative number on a
//! step it will reject) is `fmi2Discard`, so the importer can try a shorter step; a failed
//! event breaks the instance. It deliberately holds no C types.

use crate::instance::{Error, Instance, Phase, Run};
use eqm::{EventOutcome, ModelExchange, RunError};

impl Instance {
    /// Runs `call` on the model the importer integrates.
    fn exchanged<T>(
        &mut self,
        call: impl FnOnce(&mut ModelExchange<'_>) -> Result<T, RunError>,
    ) -> Result<Result<T, RunError>, Error> {
        let Phase::Running(running) = &mut self.phase else {
            return Err(Error::Error("the model is not initialized".into()));
        };
        running
            .with_dependent_mut(|_, run| match run {
                Run::Exchange(model) => Some(call(model)),
                Run::Steps(_) => None,
            })
            .ok_or_else(|| Error::Error("this instance is one of Co-Simulation".into()))
    }

    /// The number of continuous states and of event indicators.
    pub fn dimensions(&mut self) -> Result<(usize, usize), Error> {
        self.exchanged(|m| Ok(m.dimensions()))?.map_err(|e| self.failed(e))
    }

    /// `fmi2SetTime`.
    pub fn set_time(&mut self, t: f64) -> Result<(), Error> {
        if !t.is_finite() {
            return Err(Error::Error(format!("the time {t} is not a number")));
        }
        self.exchanged(|m| {
            m.set_time(t);
            Ok(())
        })?
        .map_err(|e| self.failed(e))
    }

    /// `fmi2SetContinuousStates`.
    pub fn set_states(&mut self, x: &[f64]) -> Result<(), Error> {
        self.exchanged(|m| m.set_states(x))?.map_err(|e| self.failed(e))
    }

    /// `fmi2GetContinuousStates`.
    pub fn states(&mut self, out: &mut [f64]) -> Result<(), Error> {
        self.exchanged(|m| {
            let x = m.states();
            if x.len() != out.len() {
                return Err(RunError::Settings(format!(
                    "the model has {} continuous states, not {}",
                    x.len(),
                    out.len()
                )));
            }
            out.copy_from_slice(x);
            Ok(())
        })?
        .map_err(|e| self.failed(e))
    }

    /// `fmi2GetDerivatives`: a point where they cannot be computed is discarded.
    pub fn derivatives(&mut self, out: &mut [f64]) -> Result<(), Error> {
        let (n, _) = self.dimensions()?;
        check_length("derivatives", n, out.len())?;
        self.exchanged(|m| m.derivatives(out))?.map_err(|e| self.discarded(e))
    }

    /// `fmi2GetEventIndicators`: a point where they cannot be computed is discarded.
    pub fn event_indicators(&mut self, out: &mut [f64]) -> Result<(), Error> {
        let (_, n) = self.dimensions()?;
        check_length("event indicators", n, out.len())?;
        self.exchanged(|m| m.event_indicators(out))?
            .map_err(|e| self.discarded(e))
    }

    /// `fmi2NewDiscreteStates`: the event at the current point, to its end.
    pub fn new_discrete_states(&mut self) -> Result<EventOutcome, Error> {
        let outcome = self.exchanged(|m| m.event())?.map_err(|e| self.broken(e))?;
        if outcome.terminated.is_some() {
            self.mark_terminated();
        }
        Ok(outcome)
    }

    /// `fmi2CompletedIntegratorStep`: the model's assertions at the accepted point.
    pub fn completed_integrator_step(&mut self) -> Result<(), Error> {
        self.exchanged(|m| m.completed_step())?.map_err(|e| self.broken(e))
    }

    /// An error that leaves the instance as it was.
    fn failed(&self, e: RunError) -> Error {
        Error::Error(self.render(&e))
    }

    /// A point the importer should not have tried: discarded, the instance stays usable.
    fn discarded(&self, e: RunError) -> Error {
        Error::Discard(self.render(&e))
    }
}

/// Checks that an array of `what` has the `expected` length.
fn check_length(what: &str, expected: usize, given: usize) -> Result<(), Error> {
    match expected == given {
        true => Ok(()),
        false => Err(Error::Error(format!("the model has {expected} {what}, not {given}"))),
    }
}
