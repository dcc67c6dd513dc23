//! A run its caller advances step by step: the communication steps of a co-simulation.
//!
//! Input: the executable program of a model (and of its initialization problem), the
//! [`RunOptions`] of the run, its native code, and then, one call at a time, the times to
//! advance to and the values of parameters (the model's inputs) changed between calls. Output:
//! the value of every variable at the current point, and how the run ended when it ended
//! (`terminate`). The steps, events and their iteration are the hybrid driver's
//! ([`Resumable`]): the run takes exactly the steps and events a whole run would, except that a
//! communication point also ends a step. A model without events runs through the same driver.
//! It deliberately writes no rows and chooses no settings: the library decides them, and a
//! variable-structure model (one that switches programs) is not run here.

use super::directional::{Known, Point, directional};
use super::point::PointValues;
use super::snapshot::{RunKind, RunState};
use super::{Prepared, integrator_options, prepare_run};
use crate::failure::{failure_point, hybrid_failure};
use crate::hybrid::{EventPolicy, HybridModel, HybridOutcome, Resumable};
use crate::native::NativeCode;
use crate::run::{RunOptions, SimError};
use eqm_compile::exec::ExecProgram;
use eqm_integrators::Stepper;
use eqm_ir::slot::Slot;
use std::ops::ControlFlow;
use std::sync::Arc;

/// How a call that advances the run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Advanced {
    /// The run is at the time asked for.
    Reached,
    /// `terminate` was called at `time` with `message`; the run is at `time` and cannot go on.
    Terminated { time: f64, message: String },
    /// The run stopped at `time`, with the values just before the event due there, which its
    /// [`EventPolicy`] leaves to the caller ([`Stepping::event`] handles it).
    EventDue { time: f64 },
}

/// A run advanced by its caller; see the module documentation.
pub struct Stepping<'p> {
    program: &'p ExecProgram,
    model: HybridModel<'p>,
    /// The values of the current point.
    values: PointValues<'p>,
    stepper: Box<dyn Stepper>,
    /// The run, until `terminate` ended it at its start.
    run: Option<Resumable>,
    options: RunOptions,
    /// The states at the current point.
    x: Vec<f64>,
    /// Where `terminate` ended the run.
    terminated: Option<(f64, String)>,
    /// Which events the run leaves to its caller.
    policy: EventPolicy,
}

impl<'p> Stepping<'p> {
    /// Starts a run of `program` with `options` (its start time, tolerances, parameters and
    /// start values; its stop time is the latest time the run will be advanced to): the
    /// consistent initial values and the events at the start.
    pub fn start(
        program: &'p ExecProgram,
        init: Option<&ExecProgram>,
        options: &RunOptions,
        native: Option<Arc<NativeCode>>,
    ) -> Result<Stepping<'p>, SimError> {
        let Prepared { model, rows, x0, .. } = prepare_run(program, init, options, native)?;
        let mut stepper = eqm_integrators::stepper_for(&options.method, &integrator_options(program, options, &x0));
        let mut model = HybridModel::new(model);
        let started = Resumable::start(&mut model, stepper.as_mut(), options.start, &x0, options.stop);
        let (run, terminated) = match started {
            Ok(Ok(run)) => (Some(run), None),
            Ok(Err(HybridOutcome::Terminated { time, message })) => {
                // A run `terminate` ended at its start stays there, with its initial values.
                let initialized = stepper.initialize(&mut model, time, &x0);
                if let Err(e) = initialized {
                    return Err(fail(program, &mut model, stepper.as_mut(), options, e.into()));
                }
                (None, Some((time, message)))
            }
            Ok(Err(other)) => return Err(unexpected(options.start, &other)),
            Err(e) => return Err(fail(program, &mut model, stepper.as_mut(), options, e)),
        };
        let n = x0.len();
        Ok(Stepping {
            program,
            model,
            values: PointValues::new(rows, n),
            stepper,
            run,
            options: options.clone(),
            x: x0,
            terminated,
            policy: EventPolicy::Handle,
        })
    }

    /// Chooses which events [`Stepping::advance_to`] leaves to the caller from now on: with
    /// [`EventPolicy::First`] or [`EventPolicy::AtEnd`] a call may end in
    /// [`Advanced::EventDue`], and [`Stepping::event`] handles the event.
    pub fn set_event_policy(&mut self, policy: EventPolicy) {
        self.policy = policy;
        if let Some(run) = &mut self.run {
            run.set_event_policy(policy);
        }
    }

    /// The time of the event the run stopped before ([`Advanced::EventDue`]), while it waits.
    pub fn due_event(&self) -> Option<f64> {
        self.run.as_ref().filter(|_| self.terminated.is_none())?.due_time()
    }

    /// The next time event (a sample) after the current point, if any.
    pub fn next_time_event(&self) -> Option<f64> {
        self.run
            .as_ref()
            .filter(|_| self.terminated.is_none())?
            .next_time_event()
    }

    /// Handles the event the run stopped before (nothing when none is due), as a whole run
    /// handles it: the event iteration at its time, after which the values are those after it.
    pub fn event(&mut self) -> Result<Advanced, SimError> {
        if let Some(terminated) = self.terminated_outcome() {
            return Ok(terminated);
        }
        self.values.invalidate();
        let Some(run) = &mut self.run else {
            return Ok(Advanced::Reached);
        };
        let outcome = run.handle_due(&mut self.model, self.stepper.as_mut());
        self.x.copy_from_slice(self.stepper.state());
        self.ended(outcome)
    }

    /// The time of the current point.
    pub fn time(&self) -> f64 {
        match &self.terminated {
            Some((time, _)) => *time,
            None => self.stepper.time(),
        }
    }

    /// Where `terminate` ended the run, if it did.
    pub fn terminated(&self) -> Option<&(f64, String)> {
        self.terminated.as_ref()
    }

    /// What advancing or handling an event answers once `terminate` ended the run: where it
    /// did, for the run does not move.
    fn terminated_outcome(&self) -> Option<Advanced> {
        let (time, message) = self.terminated.as_ref()?;
        Some(Advanced::Terminated {
            time: *time,
            message: message.clone(),
        })
    }

    /// Advances the run to `t` (at most its stop time), with every event on the way. A run
    /// that `terminate` ended does not move.
    pub fn advance_to(&mut self, t: f64) -> Result<Advanced, SimError> {
        if let Some(terminated) = self.terminated_outcome() {
            return Ok(terminated);
        }
        self.values.invalidate();
        let Some(run) = &mut self.run else {
            return Ok(Advanced::Reached);
        };
        let outcome = run.advance(&mut self.model, self.stepper.as_mut(), t);
        self.x.copy_from_slice(self.stepper.state());
        match (self.ended(outcome)?, self.due_event()) {
            (Advanced::Reached, Some(time)) => Ok(Advanced::EventDue { time }),
            (advanced, _) => Ok(advanced),
        }
    }

    /// Sets the value of parameter (or top-level input) `name` at the current point: the run
    /// continues from here with it, after the event it may cause (a relation or
    /// when-condition that reads it changes here).
    pub fn set_parameter(&mut self, name: &str, value: f64) -> Result<Advanced, SimError> {
        let model_error = |d| SimError::Model(Box::new(d));
        self.model.ode.instance.set_param(name, value).map_err(model_error)?;
        self.values.rows.set_param(name, value).map_err(model_error)?;
        if let Some(p) = self.options.params.iter_mut().find(|(n, _)| n == name) {
            p.1 = value;
        } else {
            self.options.params.push((name.to_string(), value));
        }
        self.values.invalidate();
        let Some(run) = self.run.as_mut().filter(|_| self.terminated.is_none()) else {
            return Ok(Advanced::Reached);
        };
        let outcome = run.event_now(&mut self.model, self.stepper.as_mut());
        self.x.copy_from_slice(self.stepper.state());
        self.ended(outcome)
    }

    /// The final event (`terminal()`), at the current point.
    pub fn finish(&mut self) -> Result<(), SimError> {
        self.values.invalidate();
        let Some(run) = self.run.as_mut().filter(|_| self.terminated.is_none()) else {
            return Ok(());
        };
        let outcome = run.finish(&mut self.model, self.stepper.as_mut());
        self.ended(outcome.map(ControlFlow::Break)).map(|_| ())
    }

    /// The value in `slot` at the current point (states, derivatives, parameters and every
    /// variable the program computes, with the discrete values the events left).
    pub fn value(&mut self, slot: Slot) -> Result<f64, SimError> {
        let t = self.time();
        self.values.value(&mut self.model, t, &self.x, slot)
    }

    /// The derivative of each of `unknowns` along `seed` over `knowns` at the current point,
    /// into `out` (see [`Known`]).
    pub fn directional(
        &mut self,
        unknowns: &[Slot],
        knowns: &[Known],
        seed: &[f64],
        out: &mut [f64],
    ) -> Result<(), SimError> {
        let discrete: Vec<(u32, f64)> = self.model.discrete_values().collect();
        let point = Point {
            t: self.time(),
            x: &self.x,
            discrete: &discrete,
        };
        self.values.invalidate();
        directional(&mut self.values.rows, &point, unknowns, knowns, seed, out)
    }

    /// The states at the current point.
    pub fn states(&self) -> &[f64] {
        &self.x
    }

    /// The whole state of the run at the current point (see [`RunState`]); an error for a run
    /// whose external objects keep state in C code.
    pub fn state(&mut self) -> Result<RunState, SimError> {
        Ok(RunState {
            kind: RunKind::Stepped,
            t: self.time(),
            x: self.x.clone(),
            model: self.model.snapshot().map_err(SimError::Settings)?,
            run: self.run.as_ref().map(Resumable::snapshot),
            terminated: self.terminated.clone(),
            params: self.options.params.clone(),
        })
    }

    /// Puts the run back into `state` (taken of a run of this program): it continues from
    /// there with a new integrator started at that point, as after an event, so that a state
    /// continues the same whatever the run did before it was restored. A state that does not
    /// fit is an error, and the run stays as it was.
    pub fn restore(&mut self, state: &RunState) -> Result<(), SimError> {
        let run = state.restore_model(RunKind::Stepped, self.x.len(), &mut self.model, &mut self.values.rows)?;
        let settings = SimError::Settings;
        let options = integrator_options(self.program, &self.options, &state.x);
        self.stepper = eqm_integrators::stepper_for(&self.options.method, &options);
        let initialized = self.stepper.initialize(&mut self.model, state.t, &state.x);
        if let Err(e) = initialized {
            return Err(fail(
                self.program,
                &mut self.model,
                self.stepper.as_mut(),
                &self.options,
                e.into(),
            ));
        }
        self.values.rows.restore(&state.model.instance).map_err(settings)?;
        self.run = run;
        self.set_event_policy(self.policy);
        self.x.clone_from(&state.x);
        self.terminated.clone_from(&state.terminated);
        self.options.params.clone_from(&state.params);
        self.values.invalidate();
        Ok(())
    }

    /// The result of a call that moved the run: reached, terminated, or failed.
    fn ended(
        &mut self,
        outcome: Result<ControlFlow<HybridOutcome>, crate::hybrid::HybridError>,
    ) -> Result<Advanced, SimError> {
        let outcome = match outcome {
            Ok(ControlFlow::Continue(())) | Ok(ControlFlow::Break(HybridOutcome::Finished)) => {
                return Ok(Advanced::Reached);
            }
            Ok(ControlFlow::Break(outcome)) => outcome,
            Err(e) => {
                return Err(fail(
                    self.program,
                    &mut self.model,
                    self.stepper.as_mut(),
                    &self.options,
                    e,
                ));
            }
        };
        match outcome {
            HybridOutcome::Terminated { time, message } => {
                // The run stays at the event that terminated it, with the states there.
                if let Some(run) = &self.run {
                    self.x.copy_from_slice(run.event_states());
                }
                self.terminated = Some((time, message.clone()));
                Ok(Advanced::Terminated { time, message })
            }
            other => Err(unexpected(self.time(), &other)),
        }
    }
}

/// The failure of a run, with the time, the equations and the variables involved.
fn fail(
    program: &ExecProgram,
    model: &mut HybridModel<'_>,
    stepper: &mut dyn Stepper,
    options: &RunOptions,
    e: crate::hybrid::HybridError,
) -> SimError {
    hybrid_failure(
        program,
        e,
        model.ode.failure.take(),
        failure_point(&mut model.ode, stepper, options),
    )
}

/// An outcome a stepped run cannot have (it watches no values and takes no rows).
fn unexpected(time: f64, outcome: &HybridOutcome) -> SimError {
    SimError::Failed {
        warnings: Vec::new(),
        time,
        message: format!("the run ended unexpectedly ({outcome:?})"),
        diagnostic: None,
    }
}
