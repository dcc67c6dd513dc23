//! Library values to Python values and back: run settings from keyword arguments, diagnostics
//! to the package's exceptions, result rows to one row-major buffer.
//!
//! Input: Python dictionaries of settings, the library's diagnostics with their source map,
//! run errors and rows. Output: [`eqm::RunSettings`], the exceptions of `eqm._errors` and the
//! row-major buffers that numpy arrays take over. Deliberately no policy: every default of a
//! run is the library's.

use eqm::pipeline::diag::source::SourceMap;
use eqm::{Diagnostic, RunError, RunSettings, Severity};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The run settings named by `settings` (keys `start`, `stop`, `interval`, `rtol`, `atol`,
/// `step`, `solver`, `interpreter`, `vars`, `max_rows`; `None` values left to the library).
pub(crate) fn run_settings(settings: Option<&Bound<'_, PyDict>>) -> PyResult<RunSettings> {
    let mut run = RunSettings::default();
    let Some(settings) = settings else { return Ok(run) };
    for (key, value) in settings.iter() {
        let key: String = key.extract()?;
        if value.is_none() {
            continue;
        }
        let number = || -> PyResult<Option<f64>> { Ok(Some(value.extract::<f64>()?)) };
        match key.as_str() {
            "start" => run.start = number()?,
            "stop" => run.stop = number()?,
            "interval" => run.interval = number()?,
            "rtol" => run.rtol = number()?,
            "atol" => run.atol = number()?,
            "step" => run.step = number()?,
            "interpreter" => run.interpreter = value.extract()?,
            "max_rows" => run.max_rows = Some(value.extract()?),
            "vars" => run.variables = Some(value.extract()?),
            "solver" => {
                let name: String = value.extract()?;
                run.method = Some(eqm::Method::parse(&name).ok_or_else(|| {
                    let known: Vec<&str> = eqm::Method::NAMED.iter().map(|m| m.name()).collect();
                    PyValueError::new_err(format!("`{name}` is no method; known: {}", known.join(", ")))
                })?);
            }
            other => return Err(PyTypeError::new_err(format!("unknown run setting `{other}`"))),
        }
    }
    Ok(run)
}

/// The file, one-based line and column of a diagnostic's primary label.
fn location(d: &Diagnostic, sources: &SourceMap) -> (Option<String>, Option<usize>, Option<usize>) {
    let Some(label) = d.labels.iter().find(|l| l.primary).or(d.labels.first()) else {
        return (None, None, None);
    };
    if label.span.file.0 as usize >= sources.len() {
        return (None, None, None);
    }
    let file = sources.get(label.span.file);
    let (line, column) = file.line_col(label.span.start);
    (Some(file.name.clone()), Some(line), Some(column))
}

/// One diagnostic as a dictionary: code, severity, message, file, line, column, rendered.
pub(crate) fn diagnostic_dict<'py>(
    py: Python<'py>,
    d: &Diagnostic,
    sources: &SourceMap,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    let (file, line, column) = location(d, sources);
    dict.set_item("code", d.code)?;
    dict.set_item(
        "severity",
        match d.severity {
            Severity::Error => "error",
            _ => "warning",
        },
    )?;
    dict.set_item("message", &d.message)?;
    dict.set_item("file", file)?;
    dict.set_item("line", line)?;
    dict.set_item("column", column)?;
    dict.set_item("rendered", eqm::pipeline::diag::render(d, sources, false))?;
    Ok(dict)
}

/// Every diagnostic as a list of dictionaries ([`diagnostic_dict`]).
pub(crate) fn diagnostic_list<'py>(
    py: Python<'py>,
    ds: &[Diagnostic],
    sources: &SourceMap,
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for d in ds {
        list.append(diagnostic_dict(py, d, sources)?)?;
    }
    Ok(list)
}

/// The exception class `name` of `eqm._errors`.
fn error_class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("eqm._errors")?.getattr(name)
}

/// `ModelError` (or `StructuralParameterError` for `E0707`) for the first error of
/// `diagnostics`, its text every diagnostic rendered.
pub(crate) fn model_error(py: Python<'_>, diagnostics: &[Diagnostic], sources: &SourceMap) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let mut sorted = diagnostics.to_vec();
        eqm::pipeline::diag::sort(&mut sorted);
        let first = sorted.iter().find(|d| d.severity == Severity::Error).or(sorted.first());
        let rendered = eqm::pipeline::diag::render_all(&sorted, sources, false);
        let class = match first {
            Some(d) if d.code == "E0707" => "StructuralParameterError",
            _ => "ModelError",
        };
        let (code, (file, line, column)) = match first {
            Some(d) => (Some(d.code), location(d, sources)),
            None => (None, (None, None, None)),
        };
        let list = diagnostic_list(py, &sorted, sources)?;
        let value = error_class(py, class)?.call1((rendered.trim_end(), code, file, line, column, list))?;
        Ok(PyErr::from_value(value))
    };
    build().unwrap_or_else(|e| e)
}

/// The exception for a run that did not finish: `SimulationError` with the rows computed
/// before (`partial`), `KeyboardInterrupt` for a cancelled run, `ModelError` for a request the
/// model does not fit, `ValueError` for settings that cannot be used.
pub(crate) fn run_error(py: Python<'_>, error: RunError, sources: &SourceMap, partial: Py<PyAny>) -> PyErr {
    if eqm::counters::is_cancelled(&error) {
        return pyo3::exceptions::PyKeyboardInterrupt::new_err("the run was cancelled");
    }
    match error {
        RunError::Settings(message) => PyValueError::new_err(message),
        RunError::Model(d) => model_error(py, &[*d], sources),
        RunError::Io(e) => pyo3::exceptions::PyOSError::new_err(e.to_string()),
        RunError::Failed {
            time,
            message,
            diagnostic,
            ..
        } => {
            let build = || -> PyResult<PyErr> {
                let (code, (file, line, column), rendered) = match &diagnostic {
                    Some(d) => (
                        Some(d.code),
                        location(d, sources),
                        eqm::pipeline::diag::render(d, sources, false),
                    ),
                    None => (None, (None, None, None), String::new()),
                };
                let text = format!("the simulation failed at time {time}: {message}\n{rendered}");
                let value = error_class(py, "SimulationError")?.call1((
                    text.trim_end(),
                    code,
                    file,
                    line,
                    column,
                    time,
                    partial,
                ))?;
                Ok(PyErr::from_value(value))
            };
            build().unwrap_or_else(|e| e)
        }
    }
}

/// Appends rows to `out`: for each row `prefix` (the same for every row), its time, then its
/// values (`values` row-major). The layout of the numpy array handed to Python, which owns
/// `out` afterwards.
pub(crate) fn append_rows(out: &mut Vec<f64>, prefix: &[f64], time: &[f64], values: &[f64]) {
    let width = if time.is_empty() { 0 } else { values.len() / time.len() };
    for (i, t) in time.iter().enumerate() {
        out.extend_from_slice(prefix);
        out.push(*t);
        out.extend_from_slice(&values[i * width..(i + 1) * width]);
    }
}
