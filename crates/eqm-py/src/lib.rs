//! The Python extension module `eqm._native`: the `eqm` library's sessions, models and runs
//! handed to Python.
//!
//! Input: source texts (the Python package reads the files), model names, run settings as
//! Python values. Output: Python objects with the library's answers: model lists, flat and
//! explained texts, SVG drawings, analyses, and results as one numpy array of row-major
//! doubles that owns the buffer the run wrote (no copy); the tube comparison of a result with
//! a reference (`compare`). Errors become the exceptions of
//! `eqm._errors` (`ModelError`, `SimulationError`, `StructuralParameterError`), built with the
//! rendered diagnostic and its location. The GIL is released while compiling and simulating,
//! and a run is cancelled (through the library's cancel flag) when Python has a signal
//! pending (Ctrl-C). Deliberately not here: any decision of a run (the library makes them),
//! reading files, and the conveniences of the Python package (pandas, plots, notebooks).

mod compare;
mod convert;
mod model;
mod session;
mod work;

use pyo3::prelude::*;

/// The compilations this process has done: `(models, native)`.
#[pyfunction]
fn compilations() -> (usize, usize) {
    let c = eqm::counters::compilations();
    (c.models, c.native)
}

/// The names of the integration methods a run can name.
#[pyfunction]
fn methods() -> Vec<String> {
    eqm::Method::NAMED.iter().map(|m| m.name().to_string()).collect()
}

/// The library directories in the library's search order (those named, then those of the
/// values of `EQMPATH` and `MODELICAPATH` the package read from its environment), and the
/// directories whose `.eqm` files are read in full (those of `EQMPATH`).
#[pyfunction]
#[pyo3(signature = (named, eqmpath, modelicapath))]
fn library_directories(
    named: Vec<String>,
    eqmpath: Option<&str>,
    modelicapath: Option<&str>,
) -> (Vec<String>, Vec<String>) {
    let named: Vec<std::path::PathBuf> = named.into_iter().map(Into::into).collect();
    let text = |dirs: Vec<std::path::PathBuf>| dirs.into_iter().map(|d| d.to_string_lossy().into_owned()).collect();
    (
        text(eqm::LibraryPath::search_order(&named, eqmpath, modelicapath)),
        text(eqm::LibraryPath::eqm_file_directories(eqmpath)),
    )
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<session::NativeSession>()?;
    m.add_class::<model::NativeModel>()?;
    m.add_function(wrap_pyfunction!(compilations, m)?)?;
    m.add_function(wrap_pyfunction!(methods, m)?)?;
    m.add_function(wrap_pyfunction!(library_directories, m)?)?;
    m.add_function(wrap_pyfunction!(compare::compare, m)?)?;
    m.add_function(wrap_pyfunction!(compare::parse_csv, m)?)?;
    m.add_function(wrap_pyfunction!(compare::parse_signal_list, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
