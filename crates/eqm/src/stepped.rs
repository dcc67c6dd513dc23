//! A run its caller advances: the communication steps of a co-simulation (an FMU's `doStep`),
//! with the model's inputs changed between them; and a model its caller integrates (Model
//! Exchange).
//!
//! Input: a compiled [`Model`] with its parameter and start values, and [`RunSettings`] (the
//! start time, the tolerances, the method, and the stop time: the latest time the run will be
//! advanced to). Output: a [`StepPlan`], then either a [`SteppedRun`] that advances to the
//! times its caller names with every event on the way, takes new values of parameters and
//! top-level inputs at the current point, and gives every variable's value there (its steps and
//! events are those of [`Model::simulate`] with the same settings, except that each
//! communication point also ends a step), or a [`ModelExchange`] that gives the derivatives and
//! event indicators at the caller's points and handles the events the caller reports. A
//! variable-structure model (one that switches between programs) cannot be run either way yet;
//! planning one is an error. Nothing here reads files or prints.

use crate::model::Model;
use crate::run::{RunError, RunSettings};
use crate::run_state::{RunState, fingerprint};
use eqm_diag::Diagnostic;
use eqm_ir::slot::Slot;
use eqm_sim::native::NativeCode;
use eqm_sim::simulate::{Backend, Exchange, Stepping};
use std::cell::OnceCell;
use std::sync::Arc;

pub use eqm_sim::simulate::{Advanced, EventOutcome, EventPolicy, Known};

/// A run advanced by its caller; see the module documentation.
pub struct SteppedRun<'m> {
    stepping: Stepping<'m>,
    model: &'m Model,
    /// The model's fingerprint, for its states (computed at the first).
    fingerprint: OnceCell<String>,
}

/// What a stepped run needs decided before it starts: the run's options (with the model's
/// parameter and start values) and its native code. A plan is made with the model mutable
/// ([`Model::plan_stepped`]: the native code and the symbolic Jacobian are built and kept), and
/// the run started from the model shared ([`Model::start_stepped`]), so that the model can be
/// kept next to its run.
pub struct StepPlan {
    options: eqm_sim::simulate::RunOptions,
    native: Option<Arc<NativeCode>>,
}

impl Model {
    /// Plans a run of this model with `settings` that its caller advances: its options (the
    /// stop time of `settings`, else the experiment's, else one time unit after the start, is
    /// the latest time the run can reach) with the parameter and start values set on the model
    /// until now. `E0720` for a variable-structure model.
    pub fn plan_stepped(&mut self, settings: &RunSettings) -> Result<StepPlan, RunError> {
        if self.variable_structure().is_some() {
            let d = Diagnostic::error(
                "E0720",
                "a variable-structure model cannot be advanced step by step",
                self.program().model_span(),
                "this model changes its equations during a run",
            )
            .with_help("run it as a whole (`eqm run`); stepped runs (co-simulation) need a model whose equations stay the same");
            return Err(RunError::Model(Box::new(d)));
        }
        let options = self.run_options(settings, &[])?;
        let _ = self.prepare_jacobian(&options);
        // Directional derivatives take the states' block from the symbolic Jacobian; a model
        // whose Jacobian cannot be built takes central differences instead.
        let _ = self.prepare_symbolic_jacobian();
        let native = match options.backend {
            Backend::Auto => self.native().0,
            Backend::Interpreter => None,
        };
        Ok(StepPlan { options, native })
    }

    /// The model at the start of the run `plan` describes, for a caller that integrates it
    /// itself ([`ModelExchange`]): the consistent initial values and the events at the start.
    pub fn start_exchange(&self, plan: &StepPlan) -> Result<ModelExchange<'_>, RunError> {
        let exchange = Exchange::start(self.program(), self.init_program(), &plan.options, plan.native.clone())?;
        Ok(ModelExchange {
            exchange,
            model: self,
            fingerprint: OnceCell::new(),
        })
    }

    /// Starts the run `plan` describes ([`SteppedRun::advance_to`] advances it): the
    /// consistent initial values and the events at the start.
    pub fn start_stepped(&self, plan: &StepPlan) -> Result<SteppedRun<'_>, RunError> {
        let stepping = Stepping::start(self.program(), self.init_program(), &plan.options, plan.native.clone())?;
        Ok(SteppedRun {
            stepping,
            model: self,
            fingerprint: OnceCell::new(),
        })
    }
}

impl SteppedRun<'_> {
    /// The time of the current point.
    pub fn time(&self) -> f64 {
        self.stepping.time()
    }

    /// Where `terminate` ended the run (its time and message), if it did.
    pub fn terminated(&self) -> Option<&(f64, String)> {
        self.stepping.terminated()
    }

    /// Advances the run to `t` with every event on the way; a run `terminate` ended stays
    /// where it ended.
    pub fn advance_to(&mut self, t: f64) -> Result<Advanced, RunError> {
        if !(t.is_finite() && t >= self.time()) {
            return Err(RunError::Settings(format!(
                "a run can only advance to a finite time not before its current time {}, not to {t}",
                self.time()
            )));
        }
        self.stepping.advance_to(t)
    }

    /// Chooses which events [`SteppedRun::advance_to`] leaves to its caller from now on (an
    /// FMU's event mode in Co-Simulation): by default none; with [`EventPolicy::First`] the run
    /// stops just before the first event on the way, with [`EventPolicy::AtEnd`] before an event
    /// at the time advanced to, and the call answers [`Advanced::EventDue`] with the values
    /// before the event. [`SteppedRun::event`] then handles it (so does the next call that
    /// advances the run or sets a value, and the final event).
    pub fn set_event_policy(&mut self, policy: EventPolicy) {
        self.stepping.set_event_policy(policy)
    }

    /// The time of the event the run stopped before, while it waits to be handled.
    pub fn due_event(&self) -> Option<f64> {
        self.stepping.due_event()
    }

    /// Handles the event the run stopped before (nothing when none is due), exactly as a run
    /// that does not stop handles it; the values are then those after the event.
    pub fn event(&mut self) -> Result<Advanced, RunError> {
        self.stepping.event()
    }

    /// The next time event (a `sample`) after the current point, if any.
    pub fn next_time_event(&self) -> Option<f64> {
        self.stepping.next_time_event()
    }

    /// Gives parameter or top-level input `name` the value `value` from the current point on
    /// (with the event the change causes there). Only a parameter the model can change without
    /// compiling again ([`crate::ParameterInfo::settable`]) can be set.
    pub fn set_parameter(&mut self, name: &str, value: f64) -> Result<Advanced, RunError> {
        self.stepping.set_parameter(name, value)
    }

    /// The value of variable `name` at the current point (`time`, states, their derivatives,
    /// parameters, and every variable the model computes); `E0708` for a name the model does
    /// not have.
    pub fn value(&mut self, name: &str) -> Result<f64, RunError> {
        let slot = self.slot(name).map_err(|d| RunError::Model(Box::new(d)))?;
        self.stepping.value(slot)
    }

    /// Where the value of `name` is, for [`SteppedRun::value_in`].
    pub fn slot(&self, name: &str) -> Result<Slot, Diagnostic> {
        slot_of(self.model, name)
    }

    /// The value in `slot` (from [`SteppedRun::slot`]) at the current point.
    pub fn value_in(&mut self, slot: Slot) -> Result<f64, RunError> {
        self.stepping.value(slot)
    }

    /// The states at the current point.
    pub fn states(&self) -> &[f64] {
        self.stepping.states()
    }

    /// The derivative of each of `unknowns` along `seed` over `knowns` (states, parameters and
    /// inputs) at the current point, into `out`.
    pub fn directional_derivative(
        &mut self,
        unknowns: &[Slot],
        knowns: &[Known],
        seed: &[f64],
        out: &mut [f64],
    ) -> Result<(), RunError> {
        check_directional(unknowns, knowns, seed, out)?;
        self.stepping.directional(unknowns, knowns, seed, out)
    }

    /// The first derivative with respect to time of each of `unknowns` (outputs, any variable)
    /// along the solution at the current point, into `out`: the directional derivative along
    /// time and the states' derivatives, with the inputs held (as a communication step holds
    /// them) and the relations as they are at the point (after an event, the derivative on
    /// its right).
    pub fn output_derivatives(&mut self, unknowns: &[Slot], out: &mut [f64]) -> Result<(), RunError> {
        let states = self.states().len();
        let mut seed = Vec::with_capacity(states + 1);
        seed.push(1.0);
        for i in 0..states {
            seed.push(self.value_in(Slot::Der(i as u32))?);
        }
        let knowns: Vec<Known> = std::iter::once(Known::Time)
            .chain((0..states as u32).map(Known::State))
            .collect();
        self.directional_derivative(unknowns, &knowns, &seed, out)
    }

    /// Ends the run at the current point: the final event, where `terminal()` is true.
    pub fn finish(&mut self) -> Result<(), RunError> {
        self.stepping.finish()
    }

    /// The whole state of the run at the current point: time, states, discrete variables and
    /// their `pre` values, relations, pending time events, histories of `delay`s, and the
    /// changed parameters. An error for a model whose external objects keep state in C code.
    pub fn state(&mut self) -> Result<RunState, RunError> {
        let values = self.stepping.state()?;
        let fingerprint = self.fingerprint.get_or_init(|| fingerprint(self.model)).clone();
        Ok(RunState::new(values, fingerprint))
    }

    /// Puts the run back into `state`, taken of a run of this model (an error otherwise, and
    /// the run stays as it was): it continues from there as it did from that point, with its
    /// integrator restarted there as after an event.
    pub fn restore(&mut self, state: &RunState) -> Result<(), RunError> {
        let fingerprint = self.fingerprint.get_or_init(|| fingerprint(self.model));
        state.check_model(self.model, fingerprint)?;
        self.stepping.restore(&state.values)
    }
}

/// A model its caller integrates (an FMU in Model Exchange): the derivatives and event
/// indicators at the caller's time and states, and the events the caller reports. The
/// relations keep their values between events, so the field is smooth between them; each
/// event runs EQM's event iteration to its end. A model with `delay` or `spatialDistribution`
/// cannot be integrated by its caller (its history is EQM's own).
pub struct ModelExchange<'m> {
    exchange: Exchange<'m>,
    model: &'m Model,
    /// The model's fingerprint, for its states (computed at the first).
    fingerprint: OnceCell<String>,
}

impl ModelExchange<'_> {
    /// The number of continuous states and of event indicators.
    pub fn dimensions(&self) -> (usize, usize) {
        self.exchange.dimensions()
    }

    pub fn time(&self) -> f64 {
        self.exchange.time()
    }

    pub fn set_time(&mut self, t: f64) {
        self.exchange.set_time(t)
    }

    pub fn states(&self) -> &[f64] {
        self.exchange.states()
    }

    /// Sets the continuous states; a wrong number of them is an error.
    pub fn set_states(&mut self, x: &[f64]) -> Result<(), RunError> {
        let n = self.exchange.states().len();
        if x.len() != n {
            return Err(RunError::Settings(format!(
                "the model has {n} continuous states, not {}",
                x.len()
            )));
        }
        self.exchange.set_states(x);
        Ok(())
    }

    /// The derivatives of the states at the current point.
    pub fn derivatives(&mut self, out: &mut [f64]) -> Result<(), RunError> {
        self.exchange.derivatives(out)
    }

    /// The event indicators at the current point: an event is due where one changes sign.
    pub fn event_indicators(&mut self, out: &mut [f64]) -> Result<(), RunError> {
        self.exchange.event_indicators(out)
    }

    /// The event at the current point (an indicator changed sign, a time event is due, or
    /// inputs changed): EQM's event iteration to its end.
    pub fn event(&mut self) -> Result<EventOutcome, RunError> {
        self.exchange.event()
    }

    /// After the caller accepted a step: the model's assertions at its end.
    pub fn completed_step(&mut self) -> Result<(), RunError> {
        self.exchange.completed_step()
    }

    /// Where `terminate` ended the run (its time and message), if it did.
    pub fn terminated(&self) -> Option<&(f64, String)> {
        self.exchange.terminated()
    }

    /// Sets parameter or input `name`; relations that read it change at the next event.
    pub fn set_parameter(&mut self, name: &str, value: f64) -> Result<(), RunError> {
        self.exchange.set_parameter(name, value)
    }

    /// The value of `name` at the current point; `E0708` for a name the model does not have.
    pub fn value(&mut self, name: &str) -> Result<f64, RunError> {
        let slot = slot_of(self.model, name).map_err(|d| RunError::Model(Box::new(d)))?;
        self.exchange.value(slot)
    }

    /// The value in `slot` at the current point.
    pub fn value_in(&mut self, slot: Slot) -> Result<f64, RunError> {
        self.exchange.value(slot)
    }

    /// The whole state of the model at the current point (see [`SteppedRun::state`]).
    pub fn state(&mut self) -> Result<RunState, RunError> {
        let values = self.exchange.state()?;
        let fingerprint = self.fingerprint.get_or_init(|| fingerprint(self.model)).clone();
        Ok(RunState::new(values, fingerprint))
    }

    /// Puts the model back into `state`, taken of this model (an error otherwise, and the
    /// model stays as it was).
    pub fn restore(&mut self, state: &RunState) -> Result<(), RunError> {
        let fingerprint = self.fingerprint.get_or_init(|| fingerprint(self.model));
        state.check_model(self.model, fingerprint)?;
        self.exchange.restore(&state.values)
    }

    /// The derivative of each of `unknowns` along `seed` over `knowns` (states, parameters and
    /// inputs) at the current point, into `out`.
    pub fn directional_derivative(
        &mut self,
        unknowns: &[Slot],
        knowns: &[Known],
        seed: &[f64],
        out: &mut [f64],
    ) -> Result<(), RunError> {
        check_directional(unknowns, knowns, seed, out)?;
        self.exchange.directional(unknowns, knowns, seed, out)
    }
}

/// Checks the lengths of a directional derivative's arrays: a seed per known, a result per
/// unknown.
fn check_directional(unknowns: &[Slot], knowns: &[Known], seed: &[f64], out: &[f64]) -> Result<(), RunError> {
    if seed.len() != knowns.len() || out.len() != unknowns.len() {
        return Err(RunError::Settings(format!(
            "a directional derivative takes a seed per known ({} knowns, {} seeds) and gives a value per unknown ({} unknowns, room for {})",
            knowns.len(),
            seed.len(),
            unknowns.len(),
            out.len()
        )));
    }
    Ok(())
}

/// Where the value of variable `name` of `model` is.
fn slot_of(model: &Model, name: &str) -> Result<Slot, Diagnostic> {
    if name == "time" {
        return Ok(Slot::Time);
    }
    let columns = eqm_sim::simulate::columns(model.program(), Some(&[name]))?;
    Ok(columns.slots[0])
}
