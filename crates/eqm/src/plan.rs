//! The decisions of a run that belong to the library, not to a front end: the stop time of a
//! run that names none, the check of the settings, and the result columns with the plotted
//! variables among them.
//!
//! Input: a compiled [`Model`], the [`RunSettings`] a user gave and the names of the variables
//! a front end will plot. Output: a [`RunPlan`] (the settings as the run uses them, the notes
//! for the user, the columns and where the plotted variables are among them) from
//! [`Model::plan_run`], and the runs themselves ([`Model::simulate`], [`Model::simulate_into`])
//! with the same decisions. Every front end (`eqm run`, the REPL's `:run`, a library user)
//! gets the same run of the same model this way. Nothing here prints, opens a sink or shows
//! progress: those are the front end's.

use crate::model::Model;
use crate::results::{Column, RowSink, Rows, SimulationResult};
use crate::run::{RunError, RunSettings};
use crate::stability;
use crate::{RunReport, format_number};

/// A run with every decision made before its first row; see the module documentation.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// The settings the run uses: those given, with the stop time decided when none was.
    pub settings: RunSettings,
    /// The result columns: the variables asked for (or the default ones), and the plotted ones
    /// after them when they are not among those asked for.
    pub columns: Vec<Column>,
    /// The index in [`RunPlan::columns`] of each plotted variable, in the order given.
    pub plotted: Vec<usize>,
}

impl Model {
    /// Decides a run of this model with `settings` whose variables `plotted` are drawn: the
    /// stop time (see [`RunSettings`]), the check of the settings against the model's
    /// experiment, and the columns. Returns the notes for the user (the stop time chosen,
    /// settings that will have no effect), also when the plan fails, and the plan or the
    /// reason there is none: a setting that cannot be used, a variable the model does not
    /// have (`E0708`, with the closest one).
    pub fn plan_run(&mut self, settings: &RunSettings, plotted: &[String]) -> (Vec<String>, Result<RunPlan, RunError>) {
        let (settings, stop_note) = self.with_stop_time(settings);
        let mut notes: Vec<String> = stop_note.into_iter().collect();
        match self.check_settings(&settings) {
            Ok(mut more) => notes.append(&mut more),
            Err(e) => return (notes, Err(e)),
        }
        let model_error = |d| RunError::Model(Box::new(d));
        // The plotted variables are columns too, so that the rows carry their values.
        let wanted = settings.clone().with_plotted(plotted).variables;
        let columns = match self.columns(wanted.as_deref()) {
            Ok(columns) => columns,
            Err(d) => return (notes, Err(model_error(d))),
        };
        let plotted = match self.find_columns(&columns, plotted) {
            Ok(indices) => indices,
            Err(d) => return (notes, Err(model_error(d))),
        };
        let plan = RunPlan {
            settings,
            columns,
            plotted,
        };
        (notes, Ok(plan))
    }

    /// `settings` with a stop time when neither they nor the model's experiment give one: five
    /// times the model's slowest time scale after the start, with the note that says so; one
    /// time unit after the start when the time scales cannot be found, with a note when the
    /// model is too large to look for them. The stop time is always written into the settings
    /// returned, so that a run given them decides nothing again.
    pub fn with_stop_time(&mut self, settings: &RunSettings) -> (RunSettings, Option<String>) {
        if settings.stop.is_some() || self.experiment().stop_time.is_some() {
            return (settings.clone(), None);
        }
        let start = settings.start.or(self.experiment().start_time).unwrap_or(0.0);
        let stopping_at = |stop: f64| RunSettings {
            stop: Some(stop),
            ..settings.clone()
        };
        // The time scales come from a dense eigenvalue decomposition, whose cost grows with the
        // cube of the number of states: a large model keeps the fixed stop time instead of
        // paying more for choosing it than for the run.
        let states = self.program().states().len();
        if states > stability::MAX_STATES_FOR_TIME_SCALES {
            let note = format!(
                "no stop time given: the run ends at the default stop time; the model has {states} states, too many to find its time scales quickly (give --stop)"
            );
            return (stopping_at(start + 1.0), Some(note));
        }
        let Some(scales) = stability::time_scales_for(self) else {
            return (stopping_at(start + 1.0), None);
        };
        let stop = start + 5.0 * scales.t_max;
        let note = format!(
            "no stop time given: the run ends at {}, five times the model's slowest time scale T_max = {} after the start",
            format_number(stop),
            format_number(scales.t_max)
        );
        (stopping_at(stop), Some(note))
    }

    /// Simulates with `settings` (the stop time decided as [`Model::plan_run`] decides it) and
    /// keeps every row in memory.
    pub fn simulate(&mut self, settings: &RunSettings) -> Result<SimulationResult, RunError> {
        let columns = self
            .columns(settings.variables.as_deref())
            .map_err(|d| RunError::Model(Box::new(d)))?;
        let mut rows = Rows::default();
        let report = self.simulate_into(settings, &columns, &mut rows)?;
        Ok(SimulationResult::new(columns, rows, report.summary))
    }

    /// Simulates with `settings` (the stop time decided as [`Model::plan_run`] decides it, its
    /// note among the report's), handing each row of `columns` (from [`Model::columns`] or a
    /// [`RunPlan`]) to `sink` as it is computed; a run that fails has delivered every row
    /// before the failure.
    pub fn simulate_into(
        &mut self,
        settings: &RunSettings,
        columns: &[Column],
        sink: &mut dyn RowSink,
    ) -> Result<RunReport, RunError> {
        let (settings, stop_note) = self.with_stop_time(settings);
        let mut report = self.run_into(&settings, columns, sink)?;
        report.notes.splice(0..0, stop_note);
        Ok(report)
    }
}
