//! The row writer: each output row evaluated on its own instance and handed to the sink.
//!
//! Input: the points `(t, x)` the integrator (or the hybrid driver) reports, the run's
//! [`Columns`], and for a sliding row the two sides of its surface. Output: the row's values in
//! column order handed to the sink, the invariant residuals of the rows and the state-choice
//! check at each row; the first error, which stops the run. It deliberately leaves the
//! integrator's instance alone: rows are evaluated on a second instance, every value checked.

use super::columns::Columns;
use super::point::{PositiveSide, evaluate_point, point_value};
use super::state_choice::{ChoiceCheck, state_choice_failure};
use crate::hybrid::HybridModel;
use crate::hybrid::PrintedLine;
use crate::instance::Instance;
use crate::run::{RunSink, SimError};
use eqm_compile::exec::ExecProgram;
use std::ops::ControlFlow;

/// The invariant residuals of the rows written.
struct Residuals {
    g: Vec<f64>,
    last: f64,
    max: f64,
}

/// Evaluates each output row on its own instance and hands it to the sink; keeps the first
/// error, which stops the run.
pub(super) struct RowWriter<'a, 'p> {
    program: &'p ExecProgram,
    columns: &'a Columns,
    residuals: Option<Residuals>,
    choice: Option<ChoiceCheck>,
    rows: Instance<'p>,
    dx: Vec<f64>,
    values: Vec<f64>,
    /// While the run slides on a surface: the share `α` of its positive side and, per relation
    /// variable of the surface, its slot and its values on the positive and the negative side.
    /// Every output of such a row is the Filippov combination `α·out⁺ + (1 − α)·out⁻`.
    sliding: Option<crate::hybrid::SlidingSides>,
    plus: PositiveSide,
    written: usize,
    error: Option<SimError>,
    sink: &'a mut dyn RunSink,
    /// How many of the run's printed lines the sink has.
    printed: usize,
}

/// What the row writer leaves when the run ends: the rows written, the first error, and the
/// invariant residuals (the last row's and the largest) when the run checked them.
pub(super) struct RowsWritten {
    pub(super) rows: usize,
    pub(super) error: Option<SimError>,
    pub(super) residuals: Option<(f64, f64)>,
}

impl<'a, 'p> RowWriter<'a, 'p> {
    /// A writer of `columns` evaluated on `rows` (an instance of `program` with the run's
    /// consistent initial values) for `states` states; `invariants` says whether the run checks
    /// the program's invariant residuals at each row.
    pub(super) fn new(
        program: &'p ExecProgram,
        columns: &'a Columns,
        rows: Instance<'p>,
        states: usize,
        invariants: bool,
        sink: &'a mut dyn RunSink,
    ) -> Self {
        RowWriter {
            program,
            columns,
            residuals: invariants.then(|| Residuals {
                g: vec![0.0; program.invariants().len()],
                last: 0.0,
                max: 0.0,
            }),
            choice: program
                .state_choice()
                .filter(|_| program.jacobian().is_some())
                .map(|c| ChoiceCheck::new(program, c)),
            rows,
            dx: vec![0.0; states],
            values: vec![0.0; columns.slots.len()],
            sliding: None,
            plus: PositiveSide::default(),
            written: 0,
            error: None,
            sink,
            printed: 0,
        }
    }

    /// The rows written, the first error and the residuals, once the run is over.
    pub(super) fn finish(self) -> RowsWritten {
        RowsWritten {
            rows: self.written,
            error: self.error,
            residuals: self.residuals.map(|r| (r.last, r.max)),
        }
    }
}

impl RowWriter<'_, '_> {
    /// Writes the row at a point of a hybrid run: the rows' instance first gets the discrete
    /// values and relations of this moment, and the sides of the surface the run slides on.
    pub(super) fn write_hybrid(&mut self, model: &mut HybridModel<'_>, t: f64, x: &[f64]) -> ControlFlow<()> {
        for (k, value) in model.discrete_values() {
            self.rows.set_work(k, value);
        }
        self.sliding = model.sliding_sides(t, x);
        if !self.deliver_printed(&model.stats.printed) {
            return ControlFlow::Break(());
        }
        self.write(t, x)
    }

    /// Hands the sink the lines of `printed` (all the run printed so far) it does not have yet;
    /// `false` after an error of the sink, which is kept and stops the run.
    pub(super) fn deliver_printed(&mut self, printed: &[PrintedLine]) -> bool {
        for line in printed.get(self.printed..).unwrap_or_default() {
            self.printed += 1;
            if let Err(e) = self.sink.print(line.time, &line.text) {
                self.error.get_or_insert(SimError::Io(e));
                return false;
            }
        }
        true
    }

    /// Writes the row at `(t, x)`; a failure stops the run and is kept for its end.
    pub(super) fn write(&mut self, t: f64, x: &[f64]) -> ControlFlow<()> {
        match self.evaluate(t, x) {
            Ok(()) => {
                self.written += 1;
                ControlFlow::Continue(())
            }
            Err(e) => {
                self.error = Some(e);
                ControlFlow::Break(())
            }
        }
    }

    fn evaluate(&mut self, t: f64, x: &[f64]) -> Result<(), SimError> {
        let checked = self.residuals.is_some() || self.choice.is_some();
        let sliding = self.sliding.take();
        let sides = sliding.is_some();
        // While sliding, the checks evaluate the point with the relations the run holds, before
        // the two sides are evaluated.
        if checked && sides {
            self.check_row(t, x, false)?;
        }
        self.values_at(t, x, sliding)?;
        // Without sliding, the invariants and the state choice from the evaluation the row just
        // made.
        if checked && !sides {
            self.check_row(t, x, true)?;
        }
        self.sink.row(t, &self.values).map_err(SimError::Io)
    }

    /// The invariant residuals and the state-choice check at `(t, x)`: after `values_at` there
    /// (`evaluated`, whose right-hand side it reuses) or evaluating it afresh.
    fn check_row(&mut self, t: f64, x: &[f64], evaluated: bool) -> Result<(), SimError> {
        let (rows, dx) = (&mut self.rows, &mut self.dx);
        let out = crate::interp::JacobianOut {
            g: self.residuals.as_mut().map(|r| &mut r.g[..]),
            extra: self.choice.as_mut().map(|c| &mut c.values[..]),
            ..Default::default()
        };
        let result = if evaluated {
            rows.jacobian_at_last(t, x, dx, out)
        } else {
            rows.jacobian(t, x, dx, out)
        };
        if result.is_ok() {
            if let Some(res) = &mut self.residuals {
                res.last = res.g.iter().fold(0.0f64, |a, v| a.max(v.abs()));
                res.max = res.max.max(res.last);
            }
            if let Some(choice) = &mut self.choice
                && let Some(problem) = choice.check()
            {
                return Err(state_choice_failure(self.program, t, &problem));
            }
        }
        Ok(())
    }

    /// The columns at `(t, x)` with the relations the rows' instance holds, into `values`; while
    /// sliding, the Filippov combination of the two sides' values.
    fn values_at(&mut self, t: f64, x: &[f64], sliding: Option<crate::hybrid::SlidingSides>) -> Result<(), SimError> {
        let (rows, dx) = (&mut self.rows, &mut self.dx);
        if let Err(f) = evaluate_point(rows, t, x, dx, sliding, &mut self.plus) {
            return Err(SimError::Failed {
                warnings: Vec::new(),
                time: t,
                message: "the output values could not be computed".to_string(),
                diagnostic: Some(Box::new(self.program.failure_diagnostic(&f))),
            });
        }
        for ((value, slot), factor) in self
            .values
            .iter_mut()
            .zip(&self.columns.slots)
            .zip(&self.columns.factors)
        {
            let v = point_value(rows, &self.plus, *slot, t, x, dx);
            *value = if *factor == 1.0 { v } else { factor * v };
        }
        Ok(())
    }
}
