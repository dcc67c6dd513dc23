//! Events a resumable run leaves to its caller: an FMU in Co-Simulation with event mode stops
//! its step just before an event and handles the event when the importer asks for it.
//!
//! Input: a [`Run`] between two steps, the [`EventPolicy`] its caller chose, and the time
//! events (samples, delayed jumps) and located crossings the steps meet. Output: either the
//! event handled at once, as a whole run handles it, or the run stopped at the event's time
//! with the states before it and the event kept as [`Due`], handled later by
//! [`Resumable::handle_due`] exactly as it would have been at once. It deliberately decides no
//! event itself: where an event is and what it does stay the driver's and `events`'.

use super::{Crossing, HybridError, HybridModel, HybridOutcome, Resumable, Rows, Run, no_rows};
use crate::hybrid::events::event_iteration;
use eqm_integrators::Stepper;
use std::ops::ControlFlow;

/// Which events a resumable run leaves to its caller instead of handling them inside
/// [`Resumable::advance`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EventPolicy {
    /// Every event is handled where the run meets it (a whole run; Co-Simulation without event
    /// mode).
    #[default]
    Handle,
    /// An event at the end of the segment being advanced to is left to the caller; the events
    /// before it are handled (Co-Simulation with event mode, without early return).
    AtEnd,
    /// The run stops at the first event on the way and leaves it to the caller (Co-Simulation
    /// with event mode and early return).
    First,
}

/// A time event at the end of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TimeEvent {
    /// A sample is due.
    Sample,
    /// A delayed value jumps.
    DelayedJump,
}

/// The event a run stopped before, at `time`, which its caller has not had handled yet.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Due {
    /// Surface `k` was crossed; its left limits are taken.
    Surface { time: f64, k: usize },
    /// Sliding ended towards the positive side (or the negative one); the left limits are taken.
    SlidingEnds { time: f64, positive: bool },
    /// A sample is due at the end of the step.
    Sample { time: f64 },
    /// A delayed value jumps at the end of the step.
    DelayedJump { time: f64 },
}

impl Due {
    pub(super) fn crossing(time: f64, crossing: Crossing) -> Due {
        match crossing {
            Crossing::Surface(k) => Due::Surface { time, k },
            Crossing::SlidingEnds(positive) => Due::SlidingEnds { time, positive },
        }
    }

    pub(crate) fn time(&self) -> f64 {
        match *self {
            Due::Surface { time, .. }
            | Due::SlidingEnds { time, .. }
            | Due::Sample { time }
            | Due::DelayedJump { time } => time,
        }
    }

    /// Whether the event fits a program with `surfaces` zero-crossing surfaces.
    pub(crate) fn fits(&self, surfaces: usize) -> bool {
        match *self {
            Due::Surface { k, .. } => k < surfaces,
            _ => true,
        }
    }
}

impl Run<'_> {
    /// Whether the event at `te` is left to the caller under the run's policy.
    pub(super) fn leaves_to_caller(&self, te: f64) -> bool {
        match self.policy {
            EventPolicy::Handle => false,
            EventPolicy::First => true,
            // The end of the segment, up to the rounding the step's end merges with.
            EventPolicy::AtEnd => self.segment_end - te <= 4.0 * f64::EPSILON * self.segment_end.abs().max(1.0),
        }
    }

    /// A time event at the end `te` of an accepted step: the row before it, then the event
    /// ([`Run::fire_time_event`]) or, when the caller handles it, the stop before it.
    pub(super) fn time_event(
        &mut self,
        model: &mut HybridModel<'_>,
        stepper: &mut dyn Stepper,
        te: f64,
        row: &mut impl Rows,
        kind: TimeEvent,
    ) -> Result<ControlFlow<HybridOutcome>, HybridError> {
        self.last_probe = None;
        self.x.copy_from_slice(stepper.state());
        if row(model, te, &self.x).is_break() {
            return Ok(ControlFlow::Break(HybridOutcome::Stopped { time: te }));
        }
        if self.leaves_to_caller(te) {
            self.due = Some(match kind {
                TimeEvent::Sample => Due::Sample { time: te },
                TimeEvent::DelayedJump => Due::DelayedJump { time: te },
            });
            return Ok(ControlFlow::Continue(()));
        }
        self.fire_time_event(model, stepper, te, row, kind)
    }

    /// The time event at `te`, the stepper's time: its event iteration (a sample fired, or the
    /// delayed values after their jump), the checks, the stepper restarted, the row after it.
    fn fire_time_event(
        &mut self,
        model: &mut HybridModel<'_>,
        stepper: &mut dyn Stepper,
        te: f64,
        row: &mut impl Rows,
        kind: TimeEvent,
    ) -> Result<ControlFlow<HybridOutcome>, HybridError> {
        model.stats.events += 1;
        // A delayed value that jumps at the same instant as a sample jumps in its event.
        if self.recording && model.ode.instance.delays_jump_at(te) {
            model.ode.instance.pass_delay_jumps(te);
        }
        let fired = match kind {
            TimeEvent::Sample => self
                .clocks
                .fire(model, te, &mut self.x, &mut self.dx, &mut self.whens)?,
            TimeEvent::DelayedJump => event_iteration(model, te, &mut self.x, &mut self.dx, &mut self.whens, false)?,
        };
        if let Some(terminated) = fired {
            return self.terminated(model, te, terminated, row).map(ControlFlow::Break);
        }
        if model.switched(te, &self.x)? {
            return Ok(self.switched(te));
        }
        model.check_assertions(te, &self.x, false)?;
        model.restart(stepper, te, &self.x)?;
        self.record_jump(model, te)?;
        if row(model, te, &self.x).is_break() {
            return Ok(ControlFlow::Break(HybridOutcome::Stopped { time: te }));
        }
        Ok(ControlFlow::Continue(()))
    }

    /// The event `due`, which the run stopped before, handled as it would have been at once.
    fn resolve(
        &mut self,
        model: &mut HybridModel<'_>,
        stepper: &mut dyn Stepper,
        due: Due,
        row: &mut impl Rows,
    ) -> Result<ControlFlow<HybridOutcome>, HybridError> {
        let te = due.time();
        match due {
            Due::Surface { k, .. } => self.crossing_event(model, stepper, te, Crossing::Surface(k), row),
            Due::SlidingEnds { positive, .. } => {
                self.crossing_event(model, stepper, te, Crossing::SlidingEnds(positive), row)
            }
            Due::Sample { .. } => self.fire_time_event(model, stepper, te, row, TimeEvent::Sample),
            Due::DelayedJump { .. } => self.fire_time_event(model, stepper, te, row, TimeEvent::DelayedJump),
        }
    }
}

impl Resumable {
    /// Chooses which events [`Resumable::advance`] leaves to the caller from now on.
    pub fn set_event_policy(&mut self, policy: EventPolicy) {
        self.run.policy = policy;
    }

    /// The time of the event the run stopped before, if it did: the run is there with the
    /// states before the event, until [`Resumable::handle_due`] handles it.
    pub fn due_time(&self) -> Option<f64> {
        self.run.due.as_ref().map(Due::time)
    }

    /// The event the run stopped before, handled as the run would have handled it at once
    /// (nothing when none is due); the stepper restarts from the states it leaves.
    pub fn handle_due(
        &mut self,
        model: &mut HybridModel<'_>,
        stepper: &mut dyn Stepper,
    ) -> Result<ControlFlow<HybridOutcome>, HybridError> {
        match self.run.due.take() {
            Some(due) => self.run.resolve(model, stepper, due, &mut no_rows),
            None => Ok(ControlFlow::Continue(())),
        }
    }
}
