//! The values at the current point of a run its caller drives (a stepped run, a model its
//! caller integrates).
//!
//! Input: the rows' instance of the run (not the integrator's, so that evaluating does not
//! disturb it), the discrete values and relations the events left, the time and the states.
//! Output: the value in any slot there, computed once per point; and the value in a slot of an
//! instance that has evaluated a point ([`slot_value`], which the row writer and the
//! directional derivatives read with too). It deliberately keeps no
//! point of its own: the caller says when the point changed ([`PointValues::invalidate`]).

use crate::hybrid::HybridModel;
use crate::instance::Instance;
use crate::interp::OdeRhs;
use crate::run::SimError;
use eqm_ir::slot::Slot;

/// The values of the current point; see the module documentation.
pub(super) struct PointValues<'p> {
    pub(super) rows: Instance<'p>,
    dx: Vec<f64>,
    /// Whether `rows` and `dx` hold the values of the current point.
    evaluated: bool,
}

impl<'p> PointValues<'p> {
    /// The values of a run with `states` states, evaluated on `rows`.
    pub(super) fn new(rows: Instance<'p>, states: usize) -> PointValues<'p> {
        PointValues {
            rows,
            dx: vec![0.0; states],
            evaluated: false,
        }
    }

    /// The point moved (or a value changed): the next value is computed afresh.
    pub(super) fn invalidate(&mut self) {
        self.evaluated = false;
    }

    /// The value in `slot` at `(t, x)` with the discrete values of `model`.
    pub(super) fn value(&mut self, model: &HybridModel<'_>, t: f64, x: &[f64], slot: Slot) -> Result<f64, SimError> {
        if !self.evaluated {
            for (k, value) in model.discrete_values() {
                self.rows.set_work(k, value);
            }
            let (rows, dx) = (&mut self.rows, &mut self.dx);
            if let Err(f) = OdeRhs::rhs(rows, t, x, dx).and_then(|()| rows.outputs(t, x, dx)) {
                return Err(SimError::Failed {
                    warnings: Vec::new(),
                    time: t,
                    message: "the values at this point could not be computed".to_string(),
                    diagnostic: Some(Box::new(rows.program().failure_diagnostic(&f))),
                });
            }
            self.evaluated = true;
        }
        Ok(slot_value(&self.rows, slot, t, x, &self.dx))
    }
}

/// The value in `slot` at `(t, x)` with derivatives `dx`, after `rows` evaluated the point.
pub(super) fn slot_value(rows: &Instance<'_>, slot: Slot, t: f64, x: &[f64], dx: &[f64]) -> f64 {
    match slot {
        Slot::Time => t,
        Slot::State(i) => x[i as usize],
        Slot::Der(i) => dx[i as usize],
        Slot::Param(i) => rows.p()[i as usize],
        Slot::Work(i) => rows.work()[i as usize],
    }
}
