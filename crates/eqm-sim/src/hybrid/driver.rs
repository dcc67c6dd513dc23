//! The driver of a hybrid run: the steps, the events between them and the rows.
//!
//! Input: a [`HybridModel`] at its consistent initial states, a [`Stepper`], the time span, the
//! output request and a row observer. Output: the rows handed to the observer (the output
//! times, and the rows on both sides of each event) and how the run ended
//! ([`HybridOutcome`]); or a [`HybridError`]. It carries the run's state from step to step
//! ([`Run`]): the start (the initial event iteration, `initial()`, samples at the start), each
//! accepted step without a crossing (its rows, the delays' history, a sample at its end), each
//! step with one (the crossing located, the event iteration, sliding begun or ended), and the
//! end (`terminal()`). It deliberately leaves the search for crossings (`isolate`, `crossing`)
//! and the event iteration itself (`events`) to their modules.

use super::crossing::{self, decide_sides, decide_sliding, emit_through, locate, sign_of};
use super::events::{self, Clocks, event_iteration};
use super::isolate::{Bracket, Probe, isolate};
use super::zeno;
use super::{
    ACCUMULATION_COUNT, ACCUMULATION_GAP, Crossing, Firings, HybridError, HybridModel, HybridOutcome, PIN_TOLERANCE,
    WhenState,
};
use eqm_integrators::{IntegrationError, OdeSystem, Output, Schedule, StepInfo, Stepper};
use std::ops::ControlFlow;

mod caller;
mod due;
mod snapshot;
pub use due::EventPolicy;
use due::{Due, TimeEvent};
pub use snapshot::{ModelSnapshot, ResumableSnapshot};

/// What happened since the last restart, to tell a crossing from noise: a surface must move
/// beyond this distance on the wrong side to count (a tiny hysteresis that keeps the point an
/// event leaves, which lies within rounding of the surface, from counting as a new crossing).
pub(super) fn hysteresis(d0: f64) -> f64 {
    1e-12 * (1.0 + d0.abs())
}

/// Ends the pin of every pinned surface whose value at the end of the accepted step at `t` has
/// left its threshold's neighbourhood: from then on it is an ordinary surface, whose next
/// crossing (also one back towards the side it was pinned to, a run leaving a mode the way it
/// came in) changes its relation like any other. Its band of hysteresis shrinks back to the
/// ordinary one, which the pin had widened to the threshold.
fn unpin_departed(
    model: &mut HybridModel<'_>,
    stepper: &dyn Stepper,
    t: f64,
    near: &mut [f64],
    x: &mut [f64],
    dx: &mut [f64],
) -> Result<(), HybridError> {
    x.copy_from_slice(stepper.state());
    model.surfaces_at(t, x, dx)?;
    let d = &model.d;
    model.pinned.retain(|&(k, threshold)| {
        let stays = d[k].abs() <= threshold;
        if !stays {
            near[k] = hysteresis(d[k]);
        }
        stays
    });
    Ok(())
}

/// A row observer: called with the model, the time and the states of each row; `Break` stops
/// the run.
trait Rows: FnMut(&mut HybridModel<'_>, f64, &[f64]) -> ControlFlow<()> {}

impl<F: FnMut(&mut HybridModel<'_>, f64, &[f64]) -> ControlFlow<()>> Rows for F {}

/// Runs the hybrid simulation of `model` from `(t0, x0)` to `t_end`; `row(model, t, x)` is
/// called for each output row and may stop the run.
pub fn integrate(
    model: &mut HybridModel<'_>,
    stepper: &mut dyn Stepper,
    t0: f64,
    x0: &[f64],
    t_end: f64,
    output: &Output,
    mut row: impl FnMut(&mut HybridModel<'_>, f64, &[f64]) -> ControlFlow<()>,
) -> Result<HybridOutcome, HybridError> {
    if !(t0.is_finite() && t_end.is_finite() && t_end >= t0) {
        return Err(IntegrationError::InvalidInput {
            message: format!("the end time {t_end} must be finite and not before the start time {t0}"),
        }
        .into());
    }
    let schedule = Schedule::new(output, t0, t_end)?;
    let mut run = match Run::begin(model, schedule, t0, x0, t_end, &mut row)? {
        ControlFlow::Continue(run) => run,
        ControlFlow::Break(outcome) => return Ok(outcome),
    };
    if let ControlFlow::Break(outcome) = run.first_rows(model, t0, &mut row)? {
        return Ok(outcome);
    }
    stepper.initialize(model, t0, &run.x)?;
    if let ControlFlow::Break(outcome) = run.advance(model, stepper, t_end, &mut row)? {
        return Ok(outcome);
    }
    run.finish(model, stepper, &mut row)
}

/// A hybrid run its caller advances in segments of its own choosing (the communication steps
/// of a co-simulation), writing no rows: the same start, steps, events and end as
/// [`integrate`], with the run's state kept between the segments.
pub struct Resumable {
    run: Run<'static>,
    /// Whether `terminal()` has been evaluated.
    finished: bool,
}

/// No output times: a resumable run reports its state at the end of each segment instead.
static NO_ROWS: Output = Output::Times(Vec::new());

/// A row observer that takes every row and writes nothing.
fn no_rows(_: &mut HybridModel<'_>, _: f64, _: &[f64]) -> ControlFlow<()> {
    ControlFlow::Continue(())
}

impl Resumable {
    /// Starts a run of `model` from its consistent initial states `(t0, x0)`: the initial
    /// event iteration, `initial()`, the samples due at the start, and the stepper's first
    /// point. Delays' breaking points are kept up to `t_end` (the latest time the caller will
    /// advance to, `f64::MAX` when it does not know). `Err(outcome)` when the run ends at the
    /// start (`terminate` there, or a watched value that changed).
    pub fn start(
        model: &mut HybridModel<'_>,
        stepper: &mut dyn Stepper,
        t0: f64,
        x0: &[f64],
        t_end: f64,
    ) -> Result<Result<Resumable, HybridOutcome>, HybridError> {
        let run = Resumable::begin(model, t0, x0, t_end)?;
        if let Ok(run) = &run {
            stepper.initialize(model, t0, &run.run.x)?;
        }
        Ok(run)
    }

    /// [`Resumable::start`] without a stepper, for a caller that integrates itself (an FMU
    /// importer in Model Exchange): the events at the start, after which
    /// [`Resumable::event_states`] holds the states the integration starts from.
    pub fn begin(
        model: &mut HybridModel<'_>,
        t0: f64,
        x0: &[f64],
        t_end: f64,
    ) -> Result<Result<Resumable, HybridOutcome>, HybridError> {
        let schedule = Schedule::new(&NO_ROWS, t0, t_end)?;
        let mut run = match Run::begin(model, schedule, t0, x0, t_end, &mut no_rows)? {
            ControlFlow::Continue(run) => run,
            ControlFlow::Break(outcome) => return Ok(Err(outcome)),
        };
        if let ControlFlow::Break(outcome) = run.first_rows(model, t0, &mut no_rows)? {
            return Ok(Err(outcome));
        }
        Ok(Ok(Resumable { run, finished: false }))
    }

    /// The next time event (a sample) after the last event, if any.
    pub fn next_time_event(&self) -> Option<f64> {
        self.run.clocks.next()
    }

    /// Advances the run to `t_stop` (not beyond the `t_end` it started with), handling every
    /// event on the way except those its [`EventPolicy`] leaves to the caller, before which it
    /// stops ([`Resumable::due_time`]); an event still due from the last call is handled first.
    /// `Break(outcome)` when it ended before (`terminate`, a watched value). The states at the
    /// end are [`Stepper::state`] at [`Stepper::time`].
    pub fn advance(
        &mut self,
        model: &mut HybridModel<'_>,
        stepper: &mut dyn Stepper,
        t_stop: f64,
    ) -> Result<ControlFlow<HybridOutcome>, HybridError> {
        if let ControlFlow::Break(outcome) = self.handle_due(model, stepper)? {
            return Ok(ControlFlow::Break(outcome));
        }
        self.run
            .advance(model, stepper, t_stop.min(self.run.t_end), &mut no_rows)
    }

    /// The event at the current point `t` after the caller changed values the relations or
    /// when-conditions may read (inputs set between segments): the relations from the surfaces'
    /// values there, the event iteration, and the stepper restarted from the states it leaves.
    pub fn event_now(
        &mut self,
        model: &mut HybridModel<'_>,
        stepper: &mut dyn Stepper,
    ) -> Result<ControlFlow<HybridOutcome>, HybridError> {
        // At an event the run stopped before, that event is the one the new values take part in.
        if self.run.due.is_some() {
            return self.handle_due(model, stepper);
        }
        let t = stepper.time();
        let x = stepper.state().to_vec();
        let flow = self.event_at(model, t, &x)?;
        if flow.is_continue() {
            model.restart(stepper, t, &self.run.x)?;
        }
        Ok(flow)
    }

    /// The end of the run at the stepper's time: the final event with `terminal()` true, once.
    pub fn finish(
        &mut self,
        model: &mut HybridModel<'_>,
        stepper: &mut dyn Stepper,
    ) -> Result<HybridOutcome, HybridError> {
        if std::mem::replace(&mut self.finished, true) {
            return Ok(HybridOutcome::Finished);
        }
        // An event the run stopped before happens before the final one.
        if let ControlFlow::Break(outcome) = self.handle_due(model, stepper)? {
            return Ok(outcome);
        }
        self.run.t_end = stepper.time();
        self.run.end(model, stepper, &mut no_rows)
    }
}

/// What a hybrid run carries from step to step.
struct Run<'o> {
    schedule: Schedule<'o>,
    t_end: f64,
    /// The states at the current point, the derivatives there, and a point of the dense output.
    x: Vec<f64>,
    dx: Vec<f64>,
    buffer: Vec<f64>,
    whens: WhenState,
    /// Per surface, how far it must move beyond zero on the wrong side to count as crossed.
    near: Vec<f64>,
    clocks: Clocks,
    /// The fixed delay times, whether the history of delayed expressions is recorded, and the
    /// breaking points ahead with their orders.
    delays: Vec<f64>,
    recording: bool,
    breaking: Vec<(f64, u32)>,
    /// The times of the latest events, to notice an accumulation.
    recent_events: Vec<f64>,
    /// The watched functions at the end of the last step, while nothing has changed since.
    last_probe: Option<Probe>,
    /// Which events a step leaves to its caller, the end of the segment being advanced to, and
    /// the event due at the current point that the caller has not had handled yet.
    policy: EventPolicy,
    segment_end: f64,
    due: Option<Due>,
}

impl<'o> Run<'o> {
    /// The initial event iteration and the event of `initial()`, up to the start of the
    /// delayed expressions' history; `Break` when the run ends there (terminated or switched).
    fn begin(
        model: &mut HybridModel<'_>,
        schedule: Schedule<'o>,
        t0: f64,
        x0: &[f64],
        t_end: f64,
        row: &mut impl Rows,
    ) -> Result<ControlFlow<HybridOutcome, Run<'o>>, HybridError> {
        let mut x = x0.to_vec();
        let mut dx = vec![0.0; x0.len()];
        let program = model.program;
        let events = program.events();
        let mut whens = WhenState {
            conditions: events.whens.iter().map(|w| vec![false; w.branches.len()]).collect(),
            firings: events
                .whens
                .iter()
                .map(|w| vec![Firings::default(); w.branches.len()])
                .collect(),
        };
        // The consistent initial values choose the structure the run starts in: where they
        // differ from the watched ones, the initialization was that of another mode, and no
        // event at the start may be computed with this mode's equations.
        if !model.watch.resume && model.watch_differs_now() {
            return Ok(ControlFlow::Break(HybridOutcome::Switched {
                time: t0,
                x,
                at_initialization: true,
            }));
        }
        let mut zero_surfaces = initial_relations(model, t0, &x, &mut dx)?;
        if let Some(terminated) = event_iteration(model, t0, &mut x, &mut dx, &mut whens, true)? {
            let outcome = end_terminated(model, t0, &mut x, &mut dx, &mut whens, terminated, row)?;
            return Ok(ControlFlow::Break(outcome));
        }
        let mut near: Vec<f64> = model.d.iter().map(|d| hysteresis(*d)).collect();
        for &(k, threshold) in &model.pinned {
            near[k] = near[k].max(threshold);
        }
        decide_sides(model, t0, &x, &mut zero_surfaces)?;
        if model.switched(t0, &x)? {
            return Ok(ControlFlow::Break(HybridOutcome::Switched {
                time: t0,
                x,
                at_initialization: false,
            }));
        }
        // `initial()` is true for one event right after the initialization: when-clauses on it
        // fire there (not again where a run resumes).
        if let Some((slot, _)) = events.initial.filter(|_| !model.watch.resume) {
            model.ode.instance.set_work(slot, 1.0);
            let outcome = event_iteration(model, t0, &mut x, &mut dx, &mut whens, false)?;
            model.ode.instance.set_work(slot, 0.0);
            let outcome = match outcome {
                Some(terminated) => Some(terminated),
                None => event_iteration(model, t0, &mut x, &mut dx, &mut whens, false)?,
            };
            if let Some(terminated) = outcome {
                let outcome = end_terminated(model, t0, &mut x, &mut dx, &mut whens, terminated, row)?;
                return Ok(ControlFlow::Break(outcome));
            }
            if model.switched(t0, &x)? {
                return Ok(ControlFlow::Break(HybridOutcome::Switched {
                    time: t0,
                    x,
                    at_initialization: false,
                }));
            }
        }
        let clocks = Clocks::new(model, t0, &x, &mut dx)?;
        // The delayed expressions' history starts here. Where a delayed value jumps (the start or
        // an event plus the delay: a breaking point), a step ends and the stepper restarts.
        let delays = model.ode.instance.delay_times();
        let mut breaking: Vec<(f64, u32)> = Vec::new();
        record_delays(model, &mut breaking, &delays, t0, &x, &mut dx, t_end, 0)?;
        let n = x.len();
        Ok(ControlFlow::Continue(Run {
            schedule,
            t_end,
            x,
            dx,
            buffer: vec![0.0; n],
            whens,
            near,
            clocks,
            recording: model.ode.instance.has_delays(),
            delays,
            breaking,
            recent_events: Vec::new(),
            last_probe: None,
            policy: EventPolicy::Handle,
            segment_end: t_end,
            due: None,
        }))
    }

    /// The assertions and the row at the start, and the event right after the initialization
    /// when a sample or a relation on time is due at the start time.
    fn first_rows(
        &mut self,
        model: &mut HybridModel<'_>,
        t0: f64,
        row: &mut impl Rows,
    ) -> Result<ControlFlow<HybridOutcome>, HybridError> {
        // Assertions on parameters alone are checked here once; the others at every accepted step
        // and on both sides of every event.
        model.check_assertions(t0, &self.x, true)?;
        if row(model, t0, &self.x).is_break() {
            return Ok(ControlFlow::Break(HybridOutcome::Stopped { time: t0 }));
        }
        // A sample at the start time is an event right after the initialization, and so is a
        // relation on time whose threshold is the start time (`time > 0` from 0 holds right after).
        if self.clocks.next() == Some(t0) || self.clocks.at_start {
            let outcome = if self.clocks.next() == Some(t0) {
                self.clocks
                    .fire(model, t0, &mut self.x, &mut self.dx, &mut self.whens)?
            } else {
                event_iteration(model, t0, &mut self.x, &mut self.dx, &mut self.whens, false)?
            };
            if let Some(terminated) = outcome {
                return self.terminated(model, t0, terminated, row).map(ControlFlow::Break);
            }
            if model.switched(t0, &self.x)? {
                return Ok(self.switched(t0));
            }
            model.stats.events += 1;
            model.check_assertions(t0, &self.x, false)?;
            self.record_jump(model, t0)?;
            if row(model, t0, &self.x).is_break() {
                return Ok(ControlFlow::Break(HybridOutcome::Stopped { time: t0 }));
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// The steps from the stepper's time to `t_stop`, with the events between them.
    fn advance(
        &mut self,
        model: &mut HybridModel<'_>,
        stepper: &mut dyn Stepper,
        t_stop: f64,
        row: &mut impl Rows,
    ) -> Result<ControlFlow<HybridOutcome>, HybridError> {
        // An event within rounding of the end (a sample at 0.1 + 3·0.3 = 0.9999999999999999 of a
        // run to 1) leaves a remainder no step can take: that is the end.
        let end_reached = |t: f64| t_stop - t <= 4.0 * f64::EPSILON * t_stop.abs().max(1.0);
        // The states where the step began, and the end of a step retaken shorter.
        let mut before: Vec<f64> = Vec::new();
        let mut shorter: Option<f64> = None;
        self.segment_end = t_stop;
        // A step that stopped before an event it leaves to the caller ends the segment there.
        while !end_reached(stepper.time()) && self.due.is_none() {
            if model.cancelled() {
                return Ok(ControlFlow::Break(HybridOutcome::Stopped { time: stepper.time() }));
            }
            let limit = self.step_limit(model, stepper.time(), t_stop);
            let limit = shorter.map_or(limit, |s| limit.min(s));
            before.clear();
            before.extend_from_slice(stepper.state());
            let info = stepper.step(model, limit)?;
            // Every watched function over the whole step, so that a surface crossed there and
            // back within one step is not lost.
            let (found, end) = match isolate(model, stepper, info.t_prev, info.t, &self.near, self.last_probe.take()) {
                // The step's dense output led inside the step to states where the model cannot
                // be evaluated (an algebraic loop without a solution there): the interpolant of
                // a long step is not the solution, so the step is taken again, ending before
                // that point. Only a point that a step of the rounding of time cannot avoid stops
                // the run.
                Err(HybridError::Evaluation(f)) if f.time - info.t_prev > 1e-12 * info.t_prev.abs().max(1e-3) => {
                    stepper.restart(info.t_prev, &before)?;
                    shorter = Some(info.t_prev + 0.5 * (f.time - info.t_prev));
                    continue;
                }
                other => other?,
            };
            shorter = None;
            model.accepted();
            let flow = match found {
                None => {
                    self.last_probe = end;
                    self.after_step(model, stepper, info, row)?
                }
                Some(bracket) => self.at_crossing(model, stepper, info, &bracket, row)?,
            };
            if flow.is_break() {
                return Ok(flow);
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// The end of the next step from `t`: time events (samples) end a step exactly, and a step
    /// is no longer than the shortest fixed delay, so every delayed value it reads is already
    /// recorded (and no longer than half a delay time that changes, as it was at the last
    /// record).
    fn step_limit(&self, model: &HybridModel<'_>, t: f64, t_stop: f64) -> f64 {
        let clock = self.clocks.next();
        // A breaking point within rounding of a sample instant is that instant: a step between
        // them could not be taken. The step ends at the sample, whose event passes the breaking
        // point (0.5 + 0.2 = 0.7 is one rounding before the sample 7·0.1 = 0.7000000000000001).
        let breaking = self
            .breaking
            .first()
            .map(|&(b, _)| b)
            .filter(|&b| !clock.is_some_and(|c| (b - c).abs() <= BREAKING_RESOLUTION * (1.0 + c.abs())));
        let event = [clock, breaking].into_iter().flatten().fold(f64::INFINITY, f64::min);
        // An end within rounding before the next time event is that event: the step goes to
        // the event, which the run then has passed, instead of leaving a remainder no step can
        // take (a communication point 0.7 before that sample). The end of the whole run stays
        // its end.
        let merged = t_stop < self.t_end && event - t_stop <= 4.0 * f64::EPSILON * t_stop.abs().max(1.0);
        let mut limit = match merged {
            true => event,
            false => t_stop.min(event),
        };
        let shortest = match self.recording {
            true => model.ode.instance.delay_step_bound(),
            false => None,
        };
        if let Some(d) = shortest {
            limit = limit.min(t + d);
        }
        limit
    }

    /// The assertions over the step `info`: at each output time within it and at its end, so
    /// that an assertion false only between two step ends is still found wherever a row would
    /// show it; a failure is traced back from the first point it is false at (see
    /// [`HybridModel::check_step`]).
    fn check_assertions_over(
        &mut self,
        model: &mut HybridModel<'_>,
        stepper: &dyn Stepper,
        info: StepInfo,
    ) -> Result<(), (f64, HybridError)> {
        if model.program.assertions().is_empty() {
            return Ok(());
        }
        let mut from = info.t_prev;
        let mut rows = self.schedule.clone();
        while let Some(time) = rows.next_until(info.t).filter(|&time| time < info.t) {
            stepper.interpolate(time, &mut self.buffer);
            model.check_step(stepper, from, time, &self.buffer)?;
            from = time;
        }
        model.check_step(stepper, from, info.t, stepper.state())
    }

    /// After a step in which no surface was crossed: the assertions over the step, its rows,
    /// the delays' history, and a sample due at its end.
    fn after_step(
        &mut self,
        model: &mut HybridModel<'_>,
        stepper: &mut dyn Stepper,
        info: StepInfo,
        row: &mut impl Rows,
    ) -> Result<ControlFlow<HybridOutcome>, HybridError> {
        if !model.pinned.is_empty() {
            unpin_departed(model, stepper, info.t, &mut self.near, &mut self.x, &mut self.dx)?;
        }
        if self.whens.watching() {
            let x = stepper.state().to_vec();
            if let Err((until, failure)) = zeno::passed_accumulations(model, &mut self.whens, info.t, &x, &mut self.dx)
            {
                if let ControlFlow::Break(time) = self.rows_through(model, stepper, until, row)? {
                    return Ok(ControlFlow::Break(HybridOutcome::Stopped { time }));
                }
                return Err(failure);
            }
        }
        if let Err((holds_until, failure)) = self.check_assertions_over(model, stepper, info) {
            // Rows up to the last instant the assertions held, then the failure.
            if let ControlFlow::Break(time) = self.rows_through(model, stepper, holds_until, row)? {
                return Ok(ControlFlow::Break(HybridOutcome::Stopped { time }));
            }
            return Err(failure);
        }
        if let ControlFlow::Break(time) = self.rows_through(model, stepper, info.t, row)? {
            return Ok(ControlFlow::Break(HybridOutcome::Stopped { time }));
        }
        if self.recording {
            record_within(model, stepper, info.t_prev, info.t, &mut self.buffer, &mut self.dx)?;
            self.x.copy_from_slice(stepper.state());
            model.ode.instance.record_delays(info.t, &self.x, &mut self.dx)?;
            // A breaking point the step reached (or passed by a rounding, on its way to a
            // sample instant just after it).
            if let Some(&(at, order)) = self.breaking.first()
                && at <= info.t
            {
                // The history is not smooth here: a second record keeps the interpolation
                // from reaching across, and the next breaking point is one order smoother.
                self.breaking.remove(0);
                record_delays(
                    model,
                    &mut self.breaking,
                    &self.delays,
                    info.t,
                    &self.x,
                    &mut self.dx,
                    self.t_end,
                    order + 1,
                )?;
                if self.clocks.next() != Some(info.t) {
                    model.restart(stepper, info.t, &self.x)?;
                }
            }
        }
        // A delayed value that jumps here (a discrete signal, delayed) is a time event: the
        // step reached it with the values before the jump, the event takes the values after it.
        let delayed_jump = self.recording && model.ode.instance.delays_jump_at(info.t);
        if self.clocks.next() == Some(info.t) {
            return self.time_event(model, stepper, info.t, row, TimeEvent::Sample);
        }
        if delayed_jump {
            return self.time_event(model, stepper, info.t, row, TimeEvent::DelayedJump);
        }
        Ok(ControlFlow::Continue(()))
    }

    /// A step in which a surface was crossed (or sliding ended): the rows up to the earliest
    /// crossing, the row just before it, the event iteration there and the row after it.
    fn at_crossing(
        &mut self,
        model: &mut HybridModel<'_>,
        stepper: &mut dyn Stepper,
        info: StepInfo,
        bracket: &Bracket,
        row: &mut impl Rows,
    ) -> Result<ControlFlow<HybridOutcome>, HybridError> {
        let first = bracket.candidates[0];
        // Locate the earliest crossing in the step.
        let te = locate(model, stepper, bracket, &self.near, &mut self.buffer)?;
        // The assertions held up to the event? Otherwise the run stops where one stopped
        // holding, before the event, with the rows up to there.
        stepper.interpolate(te, &mut self.x);
        if let Err((holds_until, failure)) = model.check_step(stepper, info.t_prev, te, &self.x) {
            if let ControlFlow::Break(time) = self.rows_through(model, stepper, holds_until, row)? {
                return Ok(ControlFlow::Break(HybridOutcome::Stopped { time }));
            }
            return Err(failure);
        }
        if let ControlFlow::Break(time) = self.rows_through(model, stepper, te, row)? {
            return Ok(ControlFlow::Break(HybridOutcome::Stopped { time }));
        }
        stepper.interpolate(te, &mut self.x);
        // The row just before the event, with the relations as they were.
        if row(model, te, &self.x).is_break() {
            return Ok(ControlFlow::Break(HybridOutcome::Stopped { time: te }));
        }
        model.check_assertions(te, &self.x, false)?;
        model.stats.events += 1;
        events::capture_left_limits(model, te, &self.x, &mut self.dx)?;
        if self.recording {
            record_within(model, stepper, info.t_prev, te, &mut self.buffer, &mut self.dx)?;
            model.ode.instance.record_delays(te, &self.x, &mut self.dx)?;
        }
        if self.leaves_to_caller(te) {
            // The run stops at the event with the states before it: the integrator starts
            // again there, and the event itself waits for the caller.
            self.due = Some(Due::crossing(te, first));
            model.restart(stepper, te, &self.x)?;
            return Ok(ControlFlow::Continue(()));
        }
        self.crossing_event(model, stepper, te, first, row)
    }

    /// The event at the crossing `first` located at `te`, whose left limits are taken: the
    /// event iteration there, sliding begun or ended, the integrator restarted and the row after.
    fn crossing_event(
        &mut self,
        model: &mut HybridModel<'_>,
        stepper: &mut dyn Stepper,
        te: f64,
        first: Crossing,
        row: &mut impl Rows,
    ) -> Result<ControlFlow<HybridOutcome>, HybridError> {
        self.count_event(model, te, first)?;
        let before: Vec<i8> = model.signs.clone();
        if let Crossing::SlidingEnds(positive) = first {
            end_sliding(model, te, positive);
        }
        let sliding_surface = model.sliding.as_ref().map(|s| s.surface);
        // A delayed value that jumps at this instant (up to a rounding) jumps in this event.
        if self.recording && model.ode.instance.delays_jump_at(te) {
            model.ode.instance.pass_delay_jumps(te);
        }
        let iteration = event_iteration(model, te, &mut self.x, &mut self.dx, &mut self.whens, false);
        let held = model.held.take();
        if let Some(terminated) = iteration? {
            return self.terminated(model, te, terminated, row).map(ControlFlow::Break);
        }
        zeno::measure_after_event(model, &mut self.whens, te, &self.x, &mut self.dx)?;
        if model.switched(te, &self.x)? {
            return Ok(self.switched(te));
        }
        self.after_event(model, te, first, &before, sliding_surface, held)?;
        model.restart(stepper, te, &self.x)?;
        self.record_jump(model, te)?;
        if row(model, te, &self.x).is_break() {
            return Ok(ControlFlow::Break(HybridOutcome::Stopped { time: te }));
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Counts the event at `te` (where `first` was crossed) among the recent ones; an error when
    /// the last [`ACCUMULATION_COUNT`] happened within a span that makes them an accumulation.
    /// While a when-branch's accumulation is watched, that watch decides (`zeno`).
    fn count_event(&mut self, model: &HybridModel<'_>, te: f64, first: Crossing) -> Result<(), HybridError> {
        if self.whens.watching() {
            return Ok(());
        }
        self.recent_events.push(te);
        if self.recent_events.len() <= ACCUMULATION_COUNT {
            return Ok(());
        }
        self.recent_events.remove(0);
        let span = self.recent_events[ACCUMULATION_COUNT - 1] - self.recent_events[0];
        if span > ACCUMULATION_GAP * ACCUMULATION_COUNT as f64 * (1.0 + te.abs()) {
            return Ok(());
        }
        let s = &model.program.events().surfaces[match first {
            Crossing::Surface(k) => k,
            Crossing::SlidingEnds(_) => model.sliding.as_ref().map_or(0, |s| s.surface),
        }];
        Err(HybridError::Event {
            code: "E0711",
            time: te,
            message: format!(
                "events accumulate at t ≈ {te}: the last {ACCUMULATION_COUNT} events happened within {span:e} s (Zeno behaviour), the last at the relation `{}`",
                s.text
            ),
            span: s.span,
            help: "the model switches infinitely often in finite time (a bouncing ball coming to rest); add a condition that ends the switching, for example a when-clause that holds the state at rest below a small velocity".to_string(),
        })
    }

    /// After the event iteration at `te`: the surfaces that changed sign (besides the one
    /// sliding, `sliding_surface`) may start sliding, the bands of hysteresis shrink back to
    /// the ordinary ones, and the assertions are checked. `held` is the surface whose sliding
    /// ended here, if any; `before` the signs before the event.
    fn after_event(
        &mut self,
        model: &mut HybridModel<'_>,
        te: f64,
        first: Crossing,
        before: &[i8],
        sliding_surface: Option<usize>,
        held: Option<usize>,
    ) -> Result<(), HybridError> {
        // Surfaces that changed sign now may start sliding.
        let mut changed: Vec<usize> = (0..model.signs.len())
            .filter(|&k| model.signs[k] != before[k] && Some(k) != sliding_surface)
            .collect();
        if let Crossing::Surface(k) = first
            && !changed.contains(&k)
        {
            changed.push(k);
        }
        if model.sliding.is_none() {
            decide_sliding(model, te, &self.x, before, &changed, true)?;
        }
        for (k, n) in self.near.iter_mut().enumerate() {
            if Some(k) != model.sliding.as_ref().map(|s| s.surface) {
                *n = n.min(hysteresis(model.d[k])).max(hysteresis(0.0));
            }
        }
        if let Some(k) = held {
            // The surface left by sliding is on its chosen side even where its value, within
            // the drift of sliding, says otherwise.
            self.near[k] = self.near[k].max(2.0 * model.d[k].abs());
        }
        model.check_assertions(te, &self.x, false)
    }

    /// The rows at the output times up to `t`; `Break(time)` when the observer stopped.
    fn rows_through(
        &mut self,
        model: &mut HybridModel<'_>,
        stepper: &dyn Stepper,
        t: f64,
        row: &mut impl Rows,
    ) -> Result<ControlFlow<f64>, HybridError> {
        emit_through(model, stepper, &mut self.schedule, t, &mut self.buffer, row)
    }

    /// Records the delayed expressions on the right side of a jump at `t` (the states in `x`),
    /// with the breaking points it causes.
    fn record_jump(&mut self, model: &mut HybridModel<'_>, t: f64) -> Result<(), HybridError> {
        // The jump's own breaking points follow from this record.
        self.pass_event(model, t)?;
        record_delays(
            model,
            &mut self.breaking,
            &self.delays,
            t,
            &self.x,
            &mut self.dx,
            self.t_end,
            0,
        )
    }

    /// Passes the event at `t`: the breaking points up to it dropped (a delayed jump that is
    /// itself an event, or one within a rounding of it, which no step could reach: the stepper
    /// restarts here) and the time events ahead refreshed. An event that changed nothing takes
    /// no more: a second record of the history would keep its interpolation from reaching
    /// across.
    fn pass_event(&mut self, model: &mut HybridModel<'_>, t: f64) -> Result<(), HybridError> {
        let passed = self
            .breaking
            .partition_point(|&(b, _)| b <= t + BREAKING_RESOLUTION * (1.0 + t.abs()));
        self.breaking.drain(..passed);
        self.clocks.refresh(model, t, &self.x, &mut self.dx)
    }

    /// The end of a run that `terminate` stopped at `t` (see [`end_terminated`]).
    fn terminated(
        &mut self,
        model: &mut HybridModel<'_>,
        t: f64,
        terminated: HybridOutcome,
        row: &mut impl Rows,
    ) -> Result<HybridOutcome, HybridError> {
        end_terminated(model, t, &mut self.x, &mut self.dx, &mut self.whens, terminated, row)
    }

    /// The end of a run where a watched value changed at `t`, with the states there.
    fn switched(&mut self, t: f64) -> ControlFlow<HybridOutcome> {
        ControlFlow::Break(HybridOutcome::Switched {
            time: t,
            x: std::mem::take(&mut self.x),
            at_initialization: false,
        })
    }

    /// The rows up to the end, and the final event with `terminal()` true.
    fn finish(
        mut self,
        model: &mut HybridModel<'_>,
        stepper: &mut dyn Stepper,
        row: &mut impl Rows,
    ) -> Result<HybridOutcome, HybridError> {
        self.end(model, stepper, row)
    }

    /// [`Run::finish`] of a run that stays: the rows up to the end and the final event.
    fn end(
        &mut self,
        model: &mut HybridModel<'_>,
        stepper: &mut dyn Stepper,
        row: &mut impl Rows,
    ) -> Result<HybridOutcome, HybridError> {
        if stepper.time() < self.t_end
            && let ControlFlow::Break(time) = self.rows_through(model, stepper, self.t_end, row)?
        {
            return Ok(HybridOutcome::Stopped { time });
        }
        // `terminal()` is true for one event at the end.
        if let Some((slot, _)) = model.program.events().terminal.filter(|_| model.final_event) {
            self.x.copy_from_slice(stepper.state());
            let t = stepper.time();
            events::capture_left_limits(model, t, &self.x, &mut self.dx)?;
            model.ode.instance.set_work(slot, 1.0);
            let outcome = event_iteration(model, t, &mut self.x, &mut self.dx, &mut self.whens, false)?;
            // The row after the final event shows what its when-clauses computed.
            let _ = row(model, t, &self.x);
            if let Some(terminated) = outcome {
                return Ok(terminated);
            }
        }
        Ok(HybridOutcome::Finished)
    }
}

/// The relations from the initial values at `t0`: each surface's sign there (a watched one of a
/// resumed run pinned to the side the run was started for). Returns the surfaces exactly at
/// zero, whose side the caller decides from their fields.
fn initial_relations(
    model: &mut HybridModel<'_>,
    t0: f64,
    x: &[f64],
    dx: &mut [f64],
) -> Result<Vec<usize>, HybridError> {
    // The initial event iteration: relations from the initial values (a surface exactly at zero
    // takes the side its fields lead to), conditions true at the start do not fire.
    model.surfaces_at(t0, x, dx)?;
    // Carried-over states are within the rounding of the located switch of the threshold.
    let threshold = PIN_TOLERANCE * (1.0 + x.iter().fold(0.0f64, |m, v| m.max(v.abs())));
    for k in 0..model.signs.len() {
        model.signs[k] = sign_of(model.d[k]);
        if let Some(side) = model.watched_side(k, threshold) {
            model.signs[k] = side;
            model.pinned.push((k, threshold));
        }
        model.write_relations(k, model.signs[k], None);
    }
    // A surface exactly at zero takes the side its fields lead to, except a time event's: time
    // only moves forward, and its relation changes (if at all) at the event right after the
    // start. Probing its other side would evaluate branches that are not taken there (the
    // `time/T` of a ramp whose duration `T` is 0 at `time < T`).
    let program = model.program;
    Ok((0..model.signs.len())
        .filter(|&k| model.signs[k] == 0 && !crossing::is_timed(program, k))
        .collect())
}

/// Ends sliding at `te`, where the sliding coefficient left `[0, 1]` towards the `positive`
/// side (or the negative one): the surface takes that side and is held there by the event
/// iteration.
fn end_sliding(model: &mut HybridModel<'_>, te: f64, positive: bool) {
    let since = model.sliding_since().unwrap_or(te);
    let k = model.sliding.take().map_or(0, |s| s.surface);
    let side = if positive { 1 } else { -1 };
    model.signs[k] = side;
    model.write_relations(k, side, None);
    model.stats.notes.push(format!(
        "t = {te}: sliding on `{}` ends after {} s; the solution leaves on the {} side",
        model.program.events().surfaces[k].text,
        te - since,
        if positive { "positive" } else { "negative" }
    ));
    model.held = Some(k);
}

/// The points of the history within each step besides its ends: the stepper's dense output
/// there is of the method's order, while the cubic through the steps' ends alone would make the
/// history (and through it the solution) no better than the cubic's order.
const DELAY_POINTS_WITHIN_STEP: usize = 3;

/// Records the delayed expressions at the points within the accepted step `(t0, t1)` (see
/// [`DELAY_POINTS_WITHIN_STEP`]), on the stepper's dense output.
fn record_within(
    model: &mut HybridModel<'_>,
    stepper: &dyn Stepper,
    t0: f64,
    t1: f64,
    buffer: &mut [f64],
    dx: &mut [f64],
) -> Result<(), HybridError> {
    let parts = DELAY_POINTS_WITHIN_STEP + 1;
    for k in 1..parts {
        let t = t0 + (t1 - t0) * k as f64 / parts as f64;
        if t <= t0 || t >= t1 {
            continue;
        }
        stepper.interpolate(t, buffer);
        model.ode.instance.record_delays(t, buffer, dx)?;
    }
    Ok(())
}

/// Breaking points closer than this (relative to the time) are one.
const BREAKING_RESOLUTION: f64 = 1e-10;

/// How many times a jump is carried forward by the delays: a jump of a delayed expression makes
/// the delayed value jump `d` later, the derivative of what integrates it jump `2d` later, and so
/// on, each time one order smoother; beyond the order of the history's cubic interpolation that
/// no longer matters.
const BREAKING_ORDERS: u32 = 4;

/// Records the delayed expressions at `(t, x)`, where the history is not smooth (the start, the
/// right side of an event's jump, or a breaking point of order `order`), and adds the breaking
/// points `t + d` for each delay `d` before the end to the sorted `breaking`.
#[allow(clippy::too_many_arguments)]
fn record_delays(
    model: &mut HybridModel<'_>,
    breaking: &mut Vec<(f64, u32)>,
    delays: &[f64],
    t: f64,
    x: &[f64],
    dx: &mut [f64],
    t_end: f64,
    order: u32,
) -> Result<(), HybridError> {
    if !model.ode.instance.has_delays() {
        return Ok(());
    }
    model.ode.instance.record_delays(t, x, dx)?;
    if order >= BREAKING_ORDERS {
        return Ok(());
    }
    for &d in delays {
        let at = t + d;
        // Breaking points within rounding of each other (0.2 + 0.5 and 0.5000000000000002 + 0.2)
        // are one: a step between them could not be taken.
        let close = |b: f64| (b - at).abs() <= BREAKING_RESOLUTION * (1.0 + at.abs());
        if at < t_end && !close(t_end) && !breaking.iter().any(|&(b, _)| close(b)) {
            let k = breaking.partition_point(|&(b, _)| b < at);
            breaking.insert(k, (at, order));
        }
    }
    Ok(())
}

/// The end of a run that `terminate` stopped at `t`: the row of that instant, then the final
/// event with `terminal()` true (its when-clauses capture the final values) and the row after it.
fn end_terminated(
    model: &mut HybridModel<'_>,
    t: f64,
    x: &mut [f64],
    dx: &mut [f64],
    whens: &mut WhenState,
    terminated: HybridOutcome,
    row: &mut impl FnMut(&mut HybridModel<'_>, f64, &[f64]) -> ControlFlow<()>,
) -> Result<HybridOutcome, HybridError> {
    let _ = row(model, t, x);
    if let Some((slot, _)) = model.program.events().terminal {
        model.ode.instance.set_work(slot, 1.0);
        // A second `terminate` in the final event changes nothing: the run ends here anyway.
        event_iteration(model, t, x, dx, whens, false)?;
        let _ = row(model, t, x);
    }
    Ok(terminated)
}
