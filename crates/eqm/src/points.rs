//! Runs of one compiled model at a list of parameter points, on all cores.
//!
//! Input: a compiled [`Model`], the points (each a list of parameter names and values, set on
//! top of the values the model already has), the run settings and the number of threads.
//! Output: [`PointRuns`], one [`PointRun`] per point in the order given whatever thread ran
//! it, each with every row it computed and how it ended. A point whose values the model
//! cannot take (an unknown or structural parameter, a value out of its range) ends with that
//! diagnostic and runs nothing; the other points still run. Nothing is compiled again: each
//! thread runs its own copy of the model with the native code compiled once and shared. A
//! variable-structure model, whose modes are compiled as its runs enter them, runs its points
//! one after another. Not done here: grouping points by structural values (see
//! [`crate::sweep`], which compiles once per group) and any IO.

use crate::model::Model;
use crate::results::{Column, Rows};
use crate::run::{RunError, RunSettings};
use crate::sweep::thread_count;
use eqm_sim::simulate::Summary;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The stack of a worker thread, as for a sweep: evaluating deeply nested expressions recurses.
const WORKER_STACK: usize = 256 << 20;

/// One point's run.
#[derive(Debug)]
pub struct PointRun {
    /// The time of each row.
    pub time: Vec<f64>,
    /// Row-major values, one per column of [`PointRuns::columns`]: every row computed, also of
    /// a run that failed.
    pub rows: Vec<f64>,
    /// How the run ended.
    pub outcome: Result<Summary, RunError>,
}

/// The runs of a list of points; see the module documentation.
#[derive(Debug)]
pub struct PointRuns {
    /// The result columns of every run.
    pub columns: Vec<Column>,
    /// One per point, in the order given.
    pub runs: Vec<PointRun>,
    /// The settings every run used, with the stop time decided once (as for a single run).
    pub settings: RunSettings,
    /// How many threads ran the simulations.
    pub threads: usize,
}

impl Model {
    /// Runs this model once per point of `points` with `settings` on [`thread_count`]`(threads)`
    /// threads; see the module documentation. A run without a stop time stops where a single
    /// run of the model would ([`Model::with_stop_time`], decided once, so that every point
    /// has the same output times). Fails before running anything only when the settings or
    /// the columns cannot be used. The values the model had before are its values after.
    pub fn simulate_points(
        &mut self,
        points: &[Vec<(String, f64)>],
        settings: &RunSettings,
        threads: Option<usize>,
    ) -> Result<PointRuns, RunError> {
        let (settings, _) = self.with_stop_time(settings);
        self.check_settings(&settings)?;
        let columns = self
            .columns(settings.variables.as_deref())
            .map_err(|d| RunError::Model(Box::new(d)))?;
        let threads = thread_count(threads);
        let base = self.values_set();
        let one = |model: &mut Model, point: &[(String, f64)]| -> PointRun {
            model.restore_values(&base);
            let mut rows = Rows::default();
            let set = point
                .iter()
                .try_for_each(|(name, value)| model.set_parameter(name, *value));
            let outcome = match set {
                Ok(()) => model.run_into(&settings, &columns, &mut rows).map(|r| r.summary),
                Err(d) => Err(RunError::Model(Box::new(d))),
            };
            let (time, rows) = rows.into_parts();
            PointRun { time, rows, outcome }
        };
        let mut runs: Vec<Option<PointRun>> = (0..points.len()).map(|_| None).collect();
        if let Some(first) = points.first() {
            // The first point runs on the model itself, so that its native code and Jacobian
            // exist before it is copied.
            runs[0] = Some(one(self, first));
        }
        let rest = points.len().saturating_sub(1);
        let workers: Vec<Model> = (0..threads.min(rest)).map_while(|_| self.duplicate()).collect();
        let next = AtomicUsize::new(1);
        let done = Mutex::new(Vec::with_capacity(rest));
        std::thread::scope(|scope| {
            for mut worker in workers {
                let (next, done, one) = (&next, &done, &one);
                let spawned = std::thread::Builder::new()
                    .stack_size(WORKER_STACK)
                    .spawn_scoped(scope, move || {
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(point) = points.get(i) else { break };
                            let run = one(&mut worker, point);
                            // A poisoned lock means another worker panicked; this run is kept.
                            done.lock().unwrap_or_else(|e| e.into_inner()).push((i, run));
                        }
                    });
                // A thread that cannot be started leaves its share to the others.
                drop(spawned);
            }
        });
        for (i, run) in done.into_inner().unwrap_or_else(|e| e.into_inner()) {
            runs[i] = Some(run);
        }
        // The points no thread took (a variable-structure model, or no thread started) run
        // here, one after another.
        for (i, point) in points.iter().enumerate() {
            if runs[i].is_none() {
                runs[i] = Some(one(self, point));
            }
        }
        self.restore_values(&base);
        Ok(PointRuns {
            columns,
            runs: runs.into_iter().flatten().collect(),
            settings,
            threads,
        })
    }
}
