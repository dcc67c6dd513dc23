//! FMI 3's event mode in Co-Simulation: the step stops just before an event and the importer
//! has it handled in Event Mode (`fmi3EnterEventMode`, `fmi3UpdateDiscreteStates`,
//! `fmi3EnterStepMode`).
//!
//! Input: an [`Instance`] of Co-Simulation instantiated with `eventModeUsed` (and
//! `earlyReturnAllowed`), and the importer's calls. Output: for each step, whether it stopped
//! before an event (`eventHandlingNeeded`) and where; for each `fmi3UpdateDiscreteStates`, the
//! event handled and the next time event. Where the run stops is the library's
//! ([`eqm::EventPolicy`]): with early return at the first event in the step, without it only
//! at an event at the step's end (a time event the importer stepped to, as
//! `nextEventTime` told it), the events inside the step handled there as without event mode.
//! It deliberately holds no C types.

use super::{Error, Instance, Interface, Phase, Run};
use eqm::{Advanced, EventPolicy};

/// The outcome of `fmi3UpdateDiscreteStates` in Co-Simulation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CsEvent {
    /// `terminate` was called in the event.
    pub terminated: bool,
    /// The next time event (a sample), if any.
    pub next_time_event: Option<f64>,
}

impl Instance {
    /// The instance of an importer that uses event mode (`eventModeUsed`), and allows early
    /// return from a step (`earlyReturnAllowed`), in Co-Simulation.
    pub fn with_event_mode(mut self, used: bool, early_return_allowed: bool) -> Instance {
        self.event_mode_used = used && self.interface == Interface::CoSimulation;
        self.early_return_allowed = early_return_allowed && self.interface == Interface::CoSimulation;
        self
    }

    /// Whether the importer may be answered with an early return from a step.
    pub fn early_return_allowed(&self) -> bool {
        self.early_return_allowed
    }

    /// The events a step leaves to the importer, from how it was instantiated.
    pub(super) fn event_policy(&self) -> EventPolicy {
        match (self.event_mode_used, self.early_return_allowed) {
            (false, _) => EventPolicy::Handle,
            (true, false) => EventPolicy::AtEnd,
            (true, true) => EventPolicy::First,
        }
    }

    /// Whether the run stopped before an event the importer has not had handled yet.
    pub fn event_due(&self) -> bool {
        match &self.phase {
            Phase::Running(running) => running.with_dependent(|_, run| match run {
                Run::Steps(run) => run.due_event().is_some(),
                Run::Exchange(_) => false,
            }),
            _ => false,
        }
    }

    /// `fmi3EnterEventMode` in Co-Simulation: only for an importer that said it uses event
    /// mode, after the initialization.
    pub fn enter_event_mode(&mut self) -> Result<(), Error> {
        if !self.event_mode_used {
            return Err(Error::Error(
                "the instance was created with eventModeUsed = false, so it has no Event Mode".into(),
            ));
        }
        if !self.initialized || !matches!(self.phase, Phase::Running(_)) {
            return Err(Error::Error("Event Mode is entered after the initialization".into()));
        }
        self.in_event_mode = true;
        Ok(())
    }

    /// `fmi3EnterStepMode`: from Event Mode into Step Mode (without event mode the instance
    /// is in Step Mode after the initialization already).
    pub fn enter_step_mode(&mut self) -> Result<(), Error> {
        if self.event_mode_used && !self.in_event_mode {
            return Err(Error::Error("Step Mode is entered from Event Mode".into()));
        }
        self.in_event_mode = false;
        Ok(())
    }

    /// `fmi3UpdateDiscreteStates` in Co-Simulation: the event the step stopped before, handled
    /// to its end (EQM's event iteration needs no further call), and the next time event.
    pub fn update_discrete_states_cs(&mut self) -> Result<CsEvent, Error> {
        if !self.in_event_mode {
            return Err(Error::Error(
                "the discrete states are updated in Event Mode (fmi3EnterEventMode first)".into(),
            ));
        }
        let Phase::Running(running) = &mut self.phase else {
            return Err(Error::Error("the model is not running".into()));
        };
        let handled = running.with_dependent_mut(|_, run| match run {
            Run::Steps(run) => run.event().map(|advanced| (advanced, run.next_time_event())),
            Run::Exchange(_) => Ok((Advanced::Reached, None)),
        });
        let (advanced, next_time_event) = match handled {
            Ok((advanced, next)) => (advanced, next),
            Err(e) => return Err(self.broken(e)),
        };
        let terminated = matches!(advanced, Advanced::Terminated { .. });
        match self.settle(Ok(advanced)) {
            Ok(()) => {}
            // `terminate` in the event is told by `terminateSimulation`, not by a status.
            Err(Error::Discard(_)) if terminated => {}
            Err(e) => return Err(e),
        }
        Ok(CsEvent {
            terminated,
            next_time_event: next_time_event.filter(|_| !terminated),
        })
    }
}
