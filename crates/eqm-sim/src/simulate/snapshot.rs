//! The whole state of a run its caller drives (a stepped run or a model its caller
//! integrates), as an owned value: what [`super::Stepping::state`] and
//! [`super::Exchange::state`] take and their `restore` puts back.
//!
//! Input: the parts of a run. Output: a [`RunState`] that serde can write (the library's byte
//! format with its header is the front end's). It deliberately holds no integrator state: a
//! restored stepped run restarts its integrator at the restored point, as the run does after
//! an event, so a state is small, the same for every method, and can be written to bytes.

use crate::hybrid::{HybridModel, ModelSnapshot, Resumable, ResumableSnapshot};
use crate::instance::Instance;
use crate::run::SimError;

/// Which kind of run a state is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RunKind {
    /// A run advanced in communication steps ([`super::Stepping`]).
    Stepped,
    /// A model its caller integrates ([`super::Exchange`]).
    Exchange,
}

/// The state of a run; see the module documentation.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunState {
    pub(super) kind: RunKind,
    /// The time and the states of the current point.
    pub(super) t: f64,
    pub(super) x: Vec<f64>,
    pub(super) model: ModelSnapshot,
    /// The run, unless `terminate` ended it at its start.
    pub(super) run: Option<ResumableSnapshot>,
    pub(super) terminated: Option<(f64, String)>,
    /// The parameters a stepped run has changed since its start (for its failure reports).
    pub(super) params: Vec<(String, f64)>,
}

impl RunState {
    pub fn kind(&self) -> RunKind {
        self.kind
    }

    /// The time of the state's point.
    pub fn time(&self) -> f64 {
        self.t
    }

    /// The continuous states at the state's point.
    pub fn states(&self) -> &[f64] {
        &self.x
    }

    /// An error unless this state is of a run of `kind` with `states` continuous states.
    pub(super) fn check(&self, kind: RunKind, states: usize) -> Result<(), SimError> {
        if self.kind != kind {
            return Err(SimError::Settings(format!(
                "the state is one of {}, not of {}",
                kind_text(self.kind),
                kind_text(kind)
            )));
        }
        if self.x.len() != states || !self.t.is_finite() {
            return Err(SimError::Settings(format!(
                "the state has {} continuous states at t = {}; this model has {states}",
                self.x.len(),
                self.t
            )));
        }
        Ok(())
    }
}

impl RunState {
    /// The part of restoring that both kinds of run share: checks that this state fits a run
    /// of `kind` with `states` continuous states, of `model` and of `rows` (the instance its
    /// values are read from), restores the hybrid run it holds for `model` and puts `model`
    /// back into the state. An error leaves `model` as it was.
    pub(super) fn restore_model(
        &self,
        kind: RunKind,
        states: usize,
        model: &mut HybridModel<'_>,
        rows: &mut Instance<'_>,
    ) -> Result<Option<Resumable>, SimError> {
        self.check(kind, states)?;
        let settings = SimError::Settings;
        model.check_snapshot(&self.model).map_err(settings)?;
        rows.check_snapshot(&self.model.instance).map_err(settings)?;
        let run = match &self.run {
            Some(run) => Some(Resumable::restored(model, run, self.t).map_err(settings)?),
            None => None,
        };
        model.restore(&self.model).map_err(settings)?;
        Ok(run)
    }
}

fn kind_text(kind: RunKind) -> &'static str {
    match kind {
        RunKind::Stepped => "a stepped run (co-simulation)",
        RunKind::Exchange => "a model its caller integrates (model exchange)",
    }
}
