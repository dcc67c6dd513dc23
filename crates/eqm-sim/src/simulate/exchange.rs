//! A model whose caller integrates it: the right-hand side, the event indicators and the event
//! iteration of a model handed to another solver (an FMU in Model Exchange).
//!
//! Input: the executable program of a model (and of its initialization problem), the
//! [`RunOptions`] of the run (start time, parameters, start values) and its native code; then,
//! call by call, the time and states the caller's integrator is at, and the events it found
//! (a sign change of an event indicator, a time event it was told of). Output: the consistent
//! initial states, the derivatives and event indicators at the caller's point, the outcome of
//! each event (new states, the next time event, `terminate`), and every variable's value.
//! Between events the relations keep the values the last event gave them, exactly as in a whole
//! run, so the field the caller integrates is smooth; the event iteration is the hybrid
//! driver's ([`Resumable::event_at`]). Where the fields on both sides of a surface push the
//! solution back onto it, the derivatives are Filippov's combination, and the surface's event
//! indicator is how far the combination's coefficient is from leaving (0, 1), so the caller
//! stops where the sliding ends. The history of each `delay` is recorded at the points
//! the caller reports (each accepted step, both sides of each event) and read between them by
//! the cubic through the nearest records, beyond the last one extrapolated; a delayed jump is a
//! time event the caller is told of. The profiles of `spatialDistribution` move at the same
//! records, and between them the outputs read the last record's profile moved by the change of
//! its `x`; records come at least as often as each profile's step bound asks (a time event the
//! caller is told of, as for the delays). It deliberately integrates nothing.

use super::directional::{Known, Point, directional};
use super::point::PointValues;
use super::snapshot::{RunKind, RunState};
use super::{Prepared, prepare_run};
use crate::failure::{FailurePoint, hybrid_failure};
use crate::hybrid::{HybridError, HybridModel, HybridOutcome, Resumable};
use crate::native::NativeCode;
use crate::run::{RunOptions, SimError};
use eqm_compile::exec::ExecProgram;
use eqm_integrators::OdeSystem;
use eqm_ir::slot::Slot;
use std::ops::ControlFlow;
use std::sync::Arc;

/// What an event did.
#[derive(Debug, Clone, PartialEq)]
pub struct EventOutcome {
    /// Whether a `reinit` (or the initialization of the event) changed a state.
    pub states_changed: bool,
    /// The next time event (a sample) after this one.
    pub next_time_event: Option<f64>,
    /// `terminate` was called, with its message.
    pub terminated: Option<String>,
}

/// A model integrated by its caller; see the module documentation.
pub struct Exchange<'p> {
    program: &'p ExecProgram,
    model: HybridModel<'p>,
    /// The values of the current point.
    values: PointValues<'p>,
    run: Option<Resumable>,
    t: f64,
    x: Vec<f64>,
    /// Derivatives where the event indicators are computed.
    scratch: Vec<f64>,
    /// Where `terminate` ended the run.
    terminated: Option<(f64, String)>,
}

impl<'p> Exchange<'p> {
    /// The model at its consistent initial values, after the events at the start.
    pub fn start(
        program: &'p ExecProgram,
        init: Option<&ExecProgram>,
        options: &RunOptions,
        native: Option<Arc<NativeCode>>,
    ) -> Result<Exchange<'p>, SimError> {
        let Prepared {
            mut model, rows, x0, ..
        } = prepare_run(program, init, options, native)?;
        // The caller's steps are not bounded by the delays: a delayed value may be read beyond
        // the last point it reported.
        model.instance.extrapolate_delays();
        let mut model = HybridModel::new(model);
        let t0 = options.start;
        let (run, x, terminated) = match Resumable::begin(&mut model, t0, &x0, options.stop) {
            Ok(Ok(run)) => {
                let x = run.event_states().to_vec();
                (Some(run), x, None)
            }
            Ok(Err(HybridOutcome::Terminated { time, message })) => (None, x0, Some((time, message))),
            Ok(Err(other)) => return Err(unexpected(t0, &other)),
            Err(e) => return Err(fail(program, &mut model, e)),
        };
        let n = x.len();
        Ok(Exchange {
            program,
            model,
            values: PointValues::new(rows, n),
            run,
            t: t0,
            x,
            scratch: vec![0.0; n],
            terminated,
        })
    }

    /// The number of continuous states and of event indicators.
    pub fn dimensions(&self) -> (usize, usize) {
        (self.x.len(), self.program.events().surfaces.len())
    }

    pub fn time(&self) -> f64 {
        self.t
    }

    pub fn set_time(&mut self, t: f64) {
        self.t = t;
        self.values.invalidate();
    }

    pub fn states(&self) -> &[f64] {
        &self.x
    }

    /// Sets the states; `x` has one value per state.
    pub fn set_states(&mut self, x: &[f64]) {
        self.x.copy_from_slice(x);
        self.values.invalidate();
    }

    /// Where `terminate` ended the run, if it did.
    pub fn terminated(&self) -> Option<&(f64, String)> {
        self.terminated.as_ref()
    }

    /// The derivatives at the current point, into `out`.
    pub fn derivatives(&mut self, out: &mut [f64]) -> Result<(), SimError> {
        let (t, x) = (self.t, &self.x);
        if self.model.rhs(t, x, out).is_err() {
            let failure = self.model.ode.failure.take();
            return Err(evaluation_failure(
                self.program,
                t,
                failure,
                "the derivatives could not be computed",
            ));
        }
        Ok(())
    }

    /// The event indicators (the surfaces' values) at the current point, into `out`.
    pub fn event_indicators(&mut self, out: &mut [f64]) -> Result<(), SimError> {
        let (t, x, dx) = (self.t, &self.x, &mut self.scratch);
        match self.model.caller_indicators(t, x, dx) {
            Ok(d) => {
                out.copy_from_slice(d);
                Ok(())
            }
            Err(f) => Err(evaluation_failure(
                self.program,
                t,
                Some(f),
                "the event indicators could not be computed",
            )),
        }
    }

    /// The event at the current point: relations, samples due, when-clauses, `reinit`.
    pub fn event(&mut self) -> Result<EventOutcome, SimError> {
        self.values.invalidate();
        let Some(run) = self.run.as_mut().filter(|_| self.terminated.is_none()) else {
            let message = self.terminated.as_ref().map(|(_, m)| m.clone());
            return Ok(EventOutcome {
                states_changed: false,
                next_time_event: None,
                terminated: message,
            });
        };
        let t = self.t;
        let flow = run.event_at(&mut self.model, t, &self.x);
        let flow = flow.map_err(|e| fail(self.program, &mut self.model, e))?;
        let after = run.event_states();
        let states_changed = after != self.x.as_slice();
        self.x.copy_from_slice(after);
        // The caller's integrator restarts here: its iterations start from the event's values.
        self.model.accepted();
        let next_time_event = run.next_time_event_of(&self.model, t);
        match flow {
            ControlFlow::Continue(()) => Ok(EventOutcome {
                states_changed,
                next_time_event,
                terminated: None,
            }),
            ControlFlow::Break(HybridOutcome::Terminated { time, message }) => {
                self.terminated = Some((time, message.clone()));
                Ok(EventOutcome {
                    states_changed,
                    next_time_event: None,
                    terminated: Some(message),
                })
            }
            ControlFlow::Break(other) => Err(unexpected(t, &other)),
        }
    }

    /// After the caller accepted a step ending at the current point: the model's assertions,
    /// the delayed expressions recorded there, and the iterations' guesses kept there (see
    /// [`OdeSystem::accepted`]).
    pub fn completed_step(&mut self) -> Result<(), SimError> {
        let (t, x) = (self.t, self.x.clone());
        self.model
            .check_assertions_at(t, &x)
            .map_err(|e| fail(self.program, &mut self.model, e))?;
        if let Some(run) = self.run.as_mut().filter(|_| self.terminated.is_none()) {
            run.completed_step(&mut self.model, t, &x)
                .map_err(|e| fail(self.program, &mut self.model, e))?;
        }
        self.model.accepted();
        Ok(())
    }

    /// Sets parameter or input `name`; the relations that read it change at the next event,
    /// which the caller signals.
    pub fn set_parameter(&mut self, name: &str, value: f64) -> Result<(), SimError> {
        let model_error = |d| SimError::Model(Box::new(d));
        self.model.ode.instance.set_param(name, value).map_err(model_error)?;
        self.values.rows.set_param(name, value).map_err(model_error)?;
        self.values.invalidate();
        Ok(())
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
            t: self.t,
            x: &self.x,
            discrete: &discrete,
        };
        self.values.invalidate();
        directional(&mut self.values.rows, &point, unknowns, knowns, seed, out)
    }

    /// The value in `slot` at the current point.
    pub fn value(&mut self, slot: Slot) -> Result<f64, SimError> {
        self.values.value(&mut self.model, self.t, &self.x, slot)
    }

    /// The whole state of the model at the current point (see [`RunState`]); an error for a
    /// model whose external objects keep state in C code.
    pub fn state(&mut self) -> Result<RunState, SimError> {
        Ok(RunState {
            kind: RunKind::Exchange,
            t: self.t,
            x: self.x.clone(),
            model: self.model.snapshot().map_err(SimError::Settings)?,
            run: self.run.as_ref().map(Resumable::snapshot),
            terminated: self.terminated.clone(),
            params: Vec::new(),
        })
    }

    /// Puts the model back into `state` (taken of a model of this program). A state that does
    /// not fit is an error, and the model stays as it was.
    pub fn restore(&mut self, state: &RunState) -> Result<(), SimError> {
        let run = state.restore_model(RunKind::Exchange, self.x.len(), &mut self.model, &mut self.values.rows)?;
        let settings = SimError::Settings;
        self.values.rows.restore(&state.model.instance).map_err(settings)?;
        self.run = run;
        self.t = state.t;
        self.x.clone_from(&state.x);
        self.terminated.clone_from(&state.terminated);
        self.values.invalidate();
        Ok(())
    }
}

/// The failure of an evaluation at `t`, with the program's diagnostic of `failure`.
fn evaluation_failure(
    program: &ExecProgram,
    t: f64,
    failure: Option<eqm_ir::failure::EvalFailure>,
    message: &str,
) -> SimError {
    SimError::Failed {
        warnings: Vec::new(),
        time: t,
        message: message.to_string(),
        diagnostic: failure.map(|f| Box::new(program.failure_diagnostic(&f))),
    }
}

/// The failure of the event handling (its time is in `e`).
fn fail(program: &ExecProgram, model: &mut HybridModel<'_>, e: HybridError) -> SimError {
    hybrid_failure(program, e, model.ode.failure.take(), FailurePoint::unknown())
}

/// An outcome a model integrated by its caller cannot have (it watches no values).
fn unexpected(time: f64, outcome: &HybridOutcome) -> SimError {
    SimError::Failed {
        warnings: Vec::new(),
        time,
        message: format!("the event ended unexpectedly ({outcome:?})"),
        diagnostic: None,
    }
}
