//! The values at the current point of a run its caller drives (a stepped run, a model its
//! caller integrates), and the evaluation of a point that the row writer shares with them.
//!
//! Input: the rows' instance of the run (not the integrator's, so that evaluating does not
//! disturb it), the discrete values and relations the events left, the time and the states,
//! and while the run slides on a surface, the two sides of it. Output: the value in any slot
//! there, computed once per point; while sliding, the Filippov combination of the values on
//! the two sides ([`evaluate_point`] and [`point_value`], which the row writer uses too); and
//! the value in a slot of an instance that has evaluated a point ([`slot_value`], which the
//! directional derivatives read with). It deliberately keeps no point of its own: the caller
//! says when the point changed ([`PointValues::invalidate`]).

use crate::hybrid::{HybridModel, SlidingSides};
use crate::instance::Instance;
use crate::interp::OdeRhs;
use crate::run::SimError;
use eqm_ir::failure::EvalFailure;
use eqm_ir::slot::Slot;

/// The values of the current point; see the module documentation.
pub(super) struct PointValues<'p> {
    pub(super) rows: Instance<'p>,
    dx: Vec<f64>,
    /// The positive side of the surface the run slides on at this point.
    plus: PositiveSide,
    /// Whether `rows` and `dx` hold the values of the current point.
    evaluated: bool,
}

impl<'p> PointValues<'p> {
    /// The values of a run with `states` states, evaluated on `rows`.
    pub(super) fn new(rows: Instance<'p>, states: usize) -> PointValues<'p> {
        PointValues {
            rows,
            dx: vec![0.0; states],
            plus: PositiveSide::default(),
            evaluated: false,
        }
    }

    /// The point moved (or a value changed): the next value is computed afresh.
    pub(super) fn invalidate(&mut self) {
        self.evaluated = false;
    }

    /// The value in `slot` at `(t, x)` with the discrete values of `model`, and while it slides
    /// on a surface, the Filippov combination of the two sides' values.
    pub(super) fn value(
        &mut self,
        model: &mut HybridModel<'_>,
        t: f64,
        x: &[f64],
        slot: Slot,
    ) -> Result<f64, SimError> {
        if !self.evaluated {
            for (k, value) in model.discrete_values() {
                self.rows.set_work(k, value);
            }
            let sliding = model.sliding_sides(t, x);
            let evaluated = evaluate_point(&mut self.rows, t, x, &mut self.dx, sliding, &mut self.plus);
            if let Err(f) = evaluated {
                return Err(SimError::Failed {
                    warnings: Vec::new(),
                    time: t,
                    message: "the values at this point could not be computed".to_string(),
                    diagnostic: Some(Box::new(self.rows.program().failure_diagnostic(&f))),
                });
            }
            self.evaluated = true;
        }
        Ok(point_value(&self.rows, &self.plus, slot, t, x, &self.dx))
    }
}

/// The values of a point on the positive side of the surface the run slides on, and the share
/// `α` of that side (none when the run does not slide).
#[derive(Default)]
pub(super) struct PositiveSide {
    alpha: Option<f64>,
    work: Vec<f64>,
    dx: Vec<f64>,
}

/// Evaluates `rows` at `(t, x)` (derivatives into `dx`) with the relations it holds; while the
/// run slides (`sliding`), once with the relations of the surface's positive side, whose values
/// `plus` keeps, and then with those of its negative side, which `rows` and `dx` keep:
/// [`point_value`] combines them.
pub(super) fn evaluate_point(
    rows: &mut Instance<'_>,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
    sliding: Option<SlidingSides>,
    plus: &mut PositiveSide,
) -> Result<(), EvalFailure> {
    plus.alpha = None;
    let Some(sides) = sliding else {
        return OdeRhs::rhs(rows, t, x, dx).and_then(|()| rows.outputs(t, x, dx));
    };
    for &(slot, positive, _) in &sides.relations {
        rows.set_work(slot, positive);
    }
    OdeRhs::rhs(rows, t, x, dx).and_then(|()| rows.outputs(t, x, dx))?;
    plus.work.clear();
    plus.work.extend_from_slice(rows.work());
    plus.dx.clear();
    plus.dx.extend_from_slice(dx);
    for &(slot, _, negative) in &sides.relations {
        rows.set_work(slot, negative);
    }
    OdeRhs::rhs(rows, t, x, dx).and_then(|()| rows.outputs(t, x, dx))?;
    plus.alpha = Some(sides.alpha);
    Ok(())
}

/// The value in `slot` at `(t, x)` after [`evaluate_point`]: while sliding, the Filippov
/// combination `α·v⁺ + (1 − α)·v⁻` of the values on the two sides where they differ (time and
/// states are those of the point itself).
pub(super) fn point_value(rows: &Instance<'_>, plus: &PositiveSide, slot: Slot, t: f64, x: &[f64], dx: &[f64]) -> f64 {
    let value = slot_value(rows, slot, t, x, dx);
    let Some(alpha) = plus.alpha else {
        return value;
    };
    let positive = match slot {
        Slot::Der(i) => plus.dx[i as usize],
        Slot::Work(i) => plus.work[i as usize],
        Slot::Time | Slot::State(_) | Slot::Param(_) => return value,
    };
    match positive == value {
        true => value,
        false => alpha * positive + (1.0 - alpha) * value,
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
