//! The state of a hybrid run between two calls of its caller, as values: the model's frozen
//! relations, sliding, pins and assertions ([`ModelSnapshot`], with the instance's values), and
//! what the run carries from step to step ([`ResumableSnapshot`]: the when-conditions and their
//! firings, the bands of hysteresis, the clocks and the time events ahead, the delays' breaking
//! points, the recent events).
//!
//! Input: a [`HybridModel`] and a [`Resumable`]; later, snapshots taken of a run of the same
//! program. Output: the snapshots, and the model and run put back, after a check that the
//! snapshots fit the program (a snapshot of another model is an error, never an index out of
//! bounds). It deliberately keeps no stepper: the caller restarts its integrator at the
//! restored point, as the run does after an event.

use super::{Due, EventPolicy, NO_ROWS, Resumable, Run};
use crate::hybrid::events::Clocks;
use crate::hybrid::{Firings, HybridModel, Sliding, WhenState};
use crate::instance::InstanceSnapshot;
use eqm_integrators::Schedule;

/// The model's part of a hybrid run's state; see the module documentation.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ModelSnapshot {
    pub(crate) instance: InstanceSnapshot,
    signs: Vec<i8>,
    /// The sliding surface, its coefficient and since when it slides.
    sliding: Option<(usize, f64, f64)>,
    held: Option<usize>,
    assertions_holding: Vec<bool>,
    pinned: Vec<(usize, f64)>,
    /// The events handled so far.
    events: usize,
}

/// The run's part of a hybrid run's state; see the module documentation.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ResumableSnapshot {
    t_end: f64,
    /// The states at the last event.
    x: Vec<f64>,
    conditions: Vec<Vec<bool>>,
    firings: Vec<Vec<Firings>>,
    near: Vec<f64>,
    /// Per `sample`: its work slot, start, interval and next index.
    clocks: Vec<(u32, f64, f64, u64)>,
    pending: Vec<f64>,
    moving: Vec<f64>,
    at_start: bool,
    delays: Vec<f64>,
    recording: bool,
    breaking: Vec<(f64, u32)>,
    recent_events: Vec<f64>,
    finished: bool,
    /// The event the run stopped before, which its caller has not had handled yet.
    due: Option<Due>,
}

/// An error unless `fits`: the snapshot is of another program.
fn fit(fits: bool) -> Result<(), String> {
    match fits {
        true => Ok(()),
        false => Err("the state's events do not fit this model's program".into()),
    }
}

impl HybridModel<'_> {
    /// The model's part of the run's state; an error for a run with external objects.
    pub fn snapshot(&mut self) -> Result<ModelSnapshot, String> {
        Ok(ModelSnapshot {
            instance: self.ode.instance.snapshot()?,
            signs: self.signs.clone(),
            sliding: self.sliding.as_ref().map(|s| (s.surface, s.alpha, s.since)),
            held: self.held,
            assertions_holding: self.assertions_holding.clone(),
            pinned: self.pinned.clone(),
            events: self.stats.events,
        })
    }

    /// Whether `snapshot` fits this model's program.
    pub fn check_snapshot(&mut self, snapshot: &ModelSnapshot) -> Result<(), String> {
        self.ode.instance.check_snapshot(&snapshot.instance)?;
        let surfaces = self.signs.len();
        fit(snapshot.signs.len() == surfaces
            && snapshot.assertions_holding.len() == self.assertions_holding.len()
            && snapshot.sliding.is_none_or(|(k, _, _)| k < surfaces)
            && snapshot.held.is_none_or(|k| k < surfaces)
            && snapshot.pinned.iter().all(|&(k, _)| k < surfaces))
    }

    /// Puts the model's part of a run's state back ([`HybridModel::check_snapshot`] first).
    pub fn restore(&mut self, snapshot: &ModelSnapshot) -> Result<(), String> {
        self.check_snapshot(snapshot)?;
        self.ode.instance.restore(&snapshot.instance)?;
        self.signs.clone_from(&snapshot.signs);
        self.sliding = snapshot
            .sliding
            .map(|(surface, alpha, since)| Sliding { surface, alpha, since });
        self.held = snapshot.held;
        self.assertions_holding.clone_from(&snapshot.assertions_holding);
        self.pinned.clone_from(&snapshot.pinned);
        self.stats.events = snapshot.events;
        self.ode.failure = None;
        Ok(())
    }
}

impl Resumable {
    /// The run's part of its state.
    pub fn snapshot(&self) -> ResumableSnapshot {
        let run = &self.run;
        ResumableSnapshot {
            t_end: run.t_end,
            x: run.x.clone(),
            conditions: run.whens.conditions.clone(),
            firings: run.whens.firings.clone(),
            near: run.near.clone(),
            clocks: run.clocks.clocks.clone(),
            pending: run.clocks.pending.clone(),
            moving: run.clocks.moving.clone(),
            at_start: run.clocks.at_start,
            delays: run.delays.clone(),
            recording: run.recording,
            breaking: run.breaking.clone(),
            recent_events: run.recent_events.clone(),
            finished: self.finished,
            due: run.due,
        }
    }

    /// Whether `snapshot` fits the program of `model`.
    pub fn check_snapshot(model: &HybridModel<'_>, snapshot: &ResumableSnapshot) -> Result<(), String> {
        let events = model.program.events();
        let branches = |w: &Vec<bool>| w.len();
        fit(snapshot.x.len() == model.program.layout().states
            && snapshot.near.len() == events.surfaces.len()
            && snapshot.due.is_none_or(|d| d.fits(events.surfaces.len()))
            && snapshot.clocks.len() == events.samples.len()
            && snapshot.conditions.len() == events.whens.len()
            && snapshot.firings.len() == events.whens.len()
            && snapshot
                .conditions
                .iter()
                .zip(&events.whens)
                .all(|(c, w)| c.len() == w.branches.len())
            && snapshot
                .firings
                .iter()
                .map(Vec::len)
                .eq(snapshot.conditions.iter().map(branches)))
    }

    /// The run a snapshot describes, at time `t` ([`Resumable::check_snapshot`] first).
    pub fn restored(model: &HybridModel<'_>, snapshot: &ResumableSnapshot, t: f64) -> Result<Resumable, String> {
        Resumable::check_snapshot(model, snapshot)?;
        let schedule = Schedule::new(&NO_ROWS, t, snapshot.t_end).map_err(|e| e.to_string())?;
        let n = snapshot.x.len();
        let run = Run {
            schedule,
            t_end: snapshot.t_end,
            x: snapshot.x.clone(),
            dx: vec![0.0; n],
            buffer: vec![0.0; n],
            whens: WhenState {
                conditions: snapshot.conditions.clone(),
                firings: snapshot.firings.clone(),
            },
            near: snapshot.near.clone(),
            clocks: Clocks {
                clocks: snapshot.clocks.clone(),
                pending: snapshot.pending.clone(),
                moving: snapshot.moving.clone(),
                at_start: snapshot.at_start,
            },
            delays: snapshot.delays.clone(),
            recording: snapshot.recording,
            breaking: snapshot.breaking.clone(),
            recent_events: snapshot.recent_events.clone(),
            // Nothing is known of the watched functions at the restored point yet.
            last_probe: None,
            // The caller sets its policy again: it belongs to the caller, not to the state.
            policy: EventPolicy::Handle,
            segment_end: snapshot.t_end,
            due: snapshot.due,
        };
        Ok(Resumable {
            run,
            finished: snapshot.finished,
        })
    }
}
