//! `NativeModel`: a compiled model, its parameters and variables, and its runs.
//!
//! Input: a compiled [`eqm::Model`] with the sources it was compiled from (to render its
//! diagnostics), run settings, parameter and start values for a run, lists of parameter
//! points. Output: the parameter and variable tables, and results as one numpy array of
//! row-major doubles that owns the buffer the run wrote its rows into (handed over without a
//! copy), with the column names, units and descriptions and the run's summary.
//! Parameter and start values change without compiling again (the library checks them and
//! refuses a structural parameter with `E0707`, raised as `StructuralParameterError`). Not
//! done here: grids, DataFrames, plots (the Python package's).

use crate::convert::{model_error, run_error, run_settings};
use crate::work;
use eqm::pipeline::diag::source::SourceMap;
use eqm::{Column, Diagnostic, Model, RunError, RunSettings, Summary};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};

/// A compiled model; see the module documentation.
#[pyclass(module = "eqm._native", frozen)]
pub(crate) struct NativeModel {
    /// Shared with the library's thread that runs it (a job owns what it uses).
    model: Arc<Mutex<Model>>,
    sources: SourceMap,
}

impl NativeModel {
    pub(crate) fn new(model: Model, sources: SourceMap) -> NativeModel {
        NativeModel {
            model: Arc::new(Mutex::new(model)),
            sources,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Model> {
        lock(&self.model)
    }
}

fn lock(model: &Mutex<Model>) -> MutexGuard<'_, Model> {
    // A panic while the model was locked left it as it was between two runs.
    model.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sets a run's parameter and start values on `model` after forgetting earlier ones; the
/// diagnostic of the first it cannot take.
fn set_values(model: &mut Model, params: &[(String, f64)], starts: &[(String, f64)]) -> Result<(), Diagnostic> {
    model.reset();
    for (name, value) in params {
        model.set_parameter(name, *value)?;
    }
    for (name, value) in starts {
        model.set_start(name, *value)?;
    }
    Ok(())
}

/// The column names, units and descriptions of a result.
type Header = (Vec<String>, Vec<Option<String>>, Vec<Option<String>>);

fn header(columns: &[Column]) -> Header {
    (
        columns.iter().map(|c| c.name.clone()).collect(),
        columns.iter().map(|c| c.unit.as_deref().map(str::to_string)).collect(),
        columns
            .iter()
            .map(|c| c.description.as_deref().map(str::to_string))
            .collect(),
    )
}

/// A run's summary as a dictionary: back end, rows, steps, rejected steps, right-hand side
/// evaluations, Jacobians, events, compile time and the notes and warnings in words.
fn summary_dict<'py>(py: Python<'py>, s: &Summary, simulate_seconds: f64) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("backend", s.backend)?;
    d.set_item("rows", s.rows)?;
    d.set_item("steps", s.stats.steps)?;
    d.set_item("rejected", s.stats.rejected)?;
    d.set_item("rhs_evals", s.stats.rhs_evals)?;
    d.set_item("jacobians", s.stats.jacobians)?;
    d.set_item("events", s.events.events)?;
    d.set_item("compile_seconds", s.compile_time.as_secs_f64())?;
    d.set_item("simulate_seconds", simulate_seconds)?;
    d.set_item("solver_notes", s.solver_notes.clone())?;
    d.set_item("event_notes", s.events.notes.clone())?;
    d.set_item("terminated", s.terminated.clone())?;
    let warnings: Vec<String> = s
        .warnings
        .iter()
        .map(|w| format!("[{}] {}", w.code, w.message))
        .collect();
    d.set_item("warnings", warnings)?;
    Ok(d)
}

/// A result as a tuple `(names, units, descriptions, rows, row count)`: `rows` a
/// one-dimensional numpy array of row-major doubles, time first in each row, which takes over
/// `rows` as the run wrote it (no copy).
fn result_tuple<'py>(py: Python<'py>, header: Header, rows: Vec<f64>, count: usize) -> PyResult<Bound<'py, PyTuple>> {
    let buffer = PyArray1::from_vec(py, rows);
    let (names, units, descriptions) = header;
    PyTuple::new(
        py,
        [
            names.into_pyobject(py)?.into_any(),
            units.into_pyobject(py)?.into_any(),
            descriptions.into_pyobject(py)?.into_any(),
            buffer.into_any(),
            count.into_pyobject(py)?.into_any(),
        ],
    )
}

#[pymethods]
impl NativeModel {
    /// The model's name.
    #[getter]
    fn name(&self) -> String {
        self.lock().name().to_string()
    }

    /// Every parameter: `(name, value or None, settable, structural, unit, description)`.
    #[allow(clippy::type_complexity)]
    fn parameters(&self) -> Vec<(String, Option<f64>, bool, bool, Option<String>, Option<String>)> {
        self.lock()
            .parameters()
            .into_iter()
            .map(|p| {
                (
                    p.name,
                    p.value,
                    p.settable,
                    p.structural,
                    p.unit.as_deref().map(str::to_string),
                    p.description.as_deref().map(str::to_string),
                )
            })
            .collect()
    }

    /// Every variable: `(name, kind, unit, description)`.
    fn variables(&self) -> Vec<(String, String, Option<String>, Option<String>)> {
        self.lock()
            .variables()
            .into_iter()
            .map(|v| {
                (
                    v.name,
                    format!("{:?}", v.kind).to_lowercase(),
                    v.unit.as_deref().map(str::to_string),
                    v.description.as_deref().map(str::to_string),
                )
            })
            .collect()
    }

    /// Checks parameter and start values as a run would set them, without running:
    /// `ModelError` for an unknown name or a value the model cannot take,
    /// `StructuralParameterError` for a structural parameter.
    fn check_values(&self, py: Python<'_>, params: Vec<(String, f64)>, starts: Vec<(String, f64)>) -> PyResult<()> {
        let mut model = self.lock();
        let checked = set_values(&mut model, &params, &starts);
        model.reset();
        checked.map_err(|d| model_error(py, &[d], &self.sources))
    }

    /// One run with `params` and `starts` set for it (on top of the compiled values) and
    /// `settings`: `(names, units, descriptions, rows, row count, summary)`; a failed run
    /// raises `SimulationError` with the rows before the failure.
    #[pyo3(signature = (params, starts, settings=None))]
    fn simulate<'py>(
        &self,
        py: Python<'py>,
        params: Vec<(String, f64)>,
        starts: Vec<(String, f64)>,
        settings: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let mut settings = run_settings(settings)?;
        let cancel = Arc::new(AtomicBool::new(false));
        settings.cancel = Some(cancel.clone());
        let model = self.model.clone();
        let (columns, rows, count, outcome, seconds) = work::run(py, Some(&cancel), move || {
            let mut model = lock(&model);
            let started = std::time::Instant::now();
            let columns =
                set_values(&mut model, &params, &starts).and_then(|()| model.columns(settings.variables.as_deref()));
            let columns = match columns {
                Ok(c) => c,
                Err(d) => return (Vec::new(), Vec::new(), 0, Err(RunError::Model(Box::new(d))), 0.0),
            };
            // The rows are written as they come in the layout Python reads (time first in
            // each row), into the buffer numpy then owns, so that handing them over copies
            // nothing.
            let mut rows: Vec<f64> = Vec::new();
            let mut count = 0;
            let outcome = model.simulate_into(&settings, &columns, &mut |t: f64, row: &[f64]| {
                crate::convert::append_rows(&mut rows, &[], &[t], row);
                count += 1;
                Ok(())
            });
            (columns, rows, count, outcome, started.elapsed().as_secs_f64())
        })?;
        let table = result_tuple(py, header(&columns), rows, count)?;
        match outcome {
            Ok(report) => {
                let summary = summary_dict(py, &report.summary, seconds)?;
                let notes = PyList::new(py, report.notes)?;
                let mut items: Vec<Bound<'py, PyAny>> = table.iter().collect();
                items.push(summary.into_any());
                items.push(notes.into_any());
                PyTuple::new(py, items)
            }
            Err(e) => Err(run_error(py, e, &self.sources, table.into_any().unbind())),
        }
    }

    /// Runs at many parameter points on `threads` threads (all cores when `None`), each point
    /// giving one value per name of `names`: `(names, units, descriptions, rows, row count,
    /// rows per point, failures)`, the rows of every point one after another, each row the
    /// point's values, then the time and the variables; `failures` as `(point index, error)`.
    #[pyo3(signature = (names, points, starts, settings=None, threads=None))]
    fn simulate_points<'py>(
        &self,
        py: Python<'py>,
        names: Vec<String>,
        points: Vec<Vec<f64>>,
        starts: Vec<(String, f64)>,
        settings: Option<&Bound<'py, PyDict>>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let mut settings: RunSettings = run_settings(settings)?;
        let cancel = Arc::new(AtomicBool::new(false));
        settings.cancel = Some(cancel.clone());
        let named: Vec<Vec<(String, f64)>> = points
            .iter()
            .map(|p| names.iter().cloned().zip(p.iter().copied()).collect())
            .collect();
        let model = self.model.clone();
        let runs = work::run(py, Some(&cancel), move || {
            let mut model = lock(&model);
            set_values(&mut model, &[], &starts).map_err(|d| RunError::Model(Box::new(d)))?;
            model.simulate_points(&named, &settings, threads)
        })?
        .map_err(|e| run_error(py, e, &self.sources, py.None()))?;
        let width = names.len() + 1 + runs.columns.len();
        let total: usize = runs.runs.iter().map(|r| r.time.len()).sum();
        let mut rows = Vec::with_capacity(total * width);
        let mut counts = Vec::with_capacity(runs.runs.len());
        let failures = PyList::empty(py);
        for (i, (run, point)) in runs.runs.into_iter().zip(&points).enumerate() {
            crate::convert::append_rows(&mut rows, point, &run.time, &run.rows);
            counts.push(run.time.len());
            if let Err(e) = run.outcome {
                if eqm::counters::is_cancelled(&e) {
                    return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(
                        "the runs were cancelled",
                    ));
                }
                failures.append((i, run_error(py, e, &self.sources, py.None()).into_value(py)))?;
            }
        }
        let buffer = PyArray1::from_vec(py, rows);
        let mut all_names = names;
        all_names.push("time".into());
        let (column_names, units, descriptions) = header(&runs.columns);
        all_names.extend(column_names);
        PyTuple::new(
            py,
            [
                all_names.into_pyobject(py)?.into_any(),
                units.into_pyobject(py)?.into_any(),
                descriptions.into_pyobject(py)?.into_any(),
                buffer.into_any(),
                total.into_pyobject(py)?.into_any(),
                counts.into_pyobject(py)?.into_any(),
                failures.into_any(),
            ],
        )
    }
}
