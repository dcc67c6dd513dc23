//! The values of a program instance that a run's state keeps: the parameters, the work array
//! (discrete variables, their `pre` values, the relations the last event froze, the guesses of
//! the iterations), the derivatives the iterations start from, and the histories of `delay`s
//! and `spatialDistribution`s.
//!
//! Input: an [`Instance`]; later, an [`InstanceSnapshot`] taken of an instance of the same
//! program. Output: the snapshot, and the instance with its values put back. It deliberately
//! keeps nothing that lives outside EQM's values: a run that created external objects (state
//! in C code) has no snapshot.

use super::Instance;
use crate::delay::DelayLines;
use crate::spatial::SpatialProfile;

/// The values of an instance; see the module documentation.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InstanceSnapshot {
    p: Vec<f64>,
    work: Vec<f64>,
    derivative_guess: Vec<f64>,
    delays: Option<DelayLines>,
    spatials: Option<Vec<SpatialProfile>>,
}

impl Instance<'_> {
    /// The instance's values; an error for a run with external objects.
    pub(crate) fn snapshot(&mut self) -> Result<InstanceSnapshot, String> {
        if self.interpreter.has_external_objects() {
            return Err(
                "the model's external objects keep their state in C code, which a run's state cannot hold".into(),
            );
        }
        Ok(InstanceSnapshot {
            p: self.p.clone(),
            work: self.work.clone(),
            derivative_guess: self.interpreter.derivative_guess().clone(),
            delays: self.delays.as_deref().map(copied),
            spatials: self.spatials.as_deref().map(copied),
        })
    }

    /// Whether `snapshot` fits this instance's program (the sizes of its arrays and histories).
    pub(crate) fn check_snapshot(&mut self, snapshot: &InstanceSnapshot) -> Result<(), String> {
        let layout = self.program().layout();
        let fits = snapshot.p.len() == layout.params
            && snapshot.work.len() == layout.work
            && snapshot.derivative_guess.len() == self.interpreter.derivative_guess().len()
            && snapshot.delays.is_some() == self.delays.is_some()
            && snapshot.spatials.as_ref().map(Vec::len)
                == self
                    .spatials
                    .as_deref()
                    .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).len());
        match fits {
            true => Ok(()),
            false => Err("the state's values do not fit this model's program".into()),
        }
    }

    /// Puts the values of `snapshot` back ([`Instance::check_snapshot`] first). The histories
    /// are shared with the run's other instances, which thereby see them too.
    pub(crate) fn restore(&mut self, snapshot: &InstanceSnapshot) -> Result<(), String> {
        self.check_snapshot(snapshot)?;
        self.p.copy_from_slice(&snapshot.p);
        self.work.copy_from_slice(&snapshot.work);
        self.interpreter
            .derivative_guess()
            .copy_from_slice(&snapshot.derivative_guess);
        if let (Some(lines), Some(saved)) = (&self.delays, &snapshot.delays) {
            *lines.lock().unwrap_or_else(|e| e.into_inner()) = saved.clone();
        }
        if let (Some(profiles), Some(saved)) = (&self.spatials, &snapshot.spatials) {
            *profiles.lock().unwrap_or_else(|e| e.into_inner()) = saved.clone();
        }
        Ok(())
    }
}

/// A copy of the value `shared` holds (a poisoned lock still holds a whole value: every
/// writer replaces it in one assignment or appends to it).
fn copied<T: Clone>(shared: &std::sync::Mutex<T>) -> T {
    shared.lock().unwrap_or_else(|e| e.into_inner()).clone()
}
