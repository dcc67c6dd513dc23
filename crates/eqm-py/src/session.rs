//! `NativeSession`: the sources of a session and the library's products of them.
//!
//! Input: the user's files as `(name, bytes)` (read by the Python package), the library
//! directories in search order with the Python object that lists and reads them (the
//! package's, so that the files are read by Python; the same object reads the data files the
//! models name, a Vensim `GET XLS ...` or a Modelica `readMatrix`), a model name, the
//! parameter values given to the compiler. Output: the model list, the check summary, the flat
//! model's text, the explanation (text, sorting table, bipartite graph SVG), the component
//! diagram SVG, the analysis (its JSON form and its matrices as bytes), and compiled
//! [`NativeModel`]s. Each product is made in a fresh library session on a thread of the
//! library's with the GIL released (parsing again is cheap next to analysing), so that no library
//! object has to live across Python threads. Not done here: reading files (the library asks
//! the package's store for a library file only when a lookup reaches its class), and choosing
//! the library directories or their order (the package passes them).

use crate::convert::{diagnostic_list, model_error};
use crate::model::NativeModel;
use crate::work;
use eqm::pipeline::diag::source::SourceMap;
use eqm::{AnalyzeOptions, Diagnostic, GraphView, LibraryPath, ModelOptions, Session};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A library session's sources; see the module documentation.
#[pyclass(module = "eqm._native", frozen)]
pub(crate) struct NativeSession {
    files: Vec<(String, Vec<u8>)>,
    /// The library directories in search order, read through `store` as lookups reach their
    /// classes; `None` without directories.
    libraries: Option<LibraryPath>,
    /// How the data files the models name are read: through the store's `read_data`.
    data: Option<Arc<dyn eqm::ReadData>>,
    /// How external C functions are compiled and linked, as on the command line (the compiler
    /// `CC` names, the cache of built objects), shared by every compilation of the session.
    linker: Arc<dyn eqm::LinkExternal>,
}

/// Library directories as the Python package reads them: an object with the methods
/// `list_dir(path)` (a list of `(name, is_dir)`), `read_file(path)` (the text) and
/// `is_file(path)`, and `read_data(path)` (the bytes of a data file a model names). The library calls it from its own thread, which takes the GIL for each
/// call (the calling Python thread released it while it waits).
struct PythonStore {
    store: Py<PyAny>,
}

impl PythonStore {
    /// `store.method(path)` converted by `extract`; the message of the exception it raised (an
    /// `OSError`'s reason without the path, which the library's diagnostic shows).
    fn call<T>(
        &self,
        method: &str,
        path: &Path,
        extract: impl for<'py> FnOnce(&Bound<'py, PyAny>) -> PyResult<T>,
    ) -> Result<T, String> {
        Python::attach(|py| {
            let value = self.store.bind(py).call_method1(method, (path,));
            value.and_then(|v| extract(&v)).map_err(|e| {
                let value = e.value(py);
                match value.getattr("strerror").and_then(|s| s.extract::<String>()) {
                    Ok(reason) => reason,
                    Err(_) => e.to_string(),
                }
            })
        })
    }
}

impl eqm::LibraryStore for PythonStore {
    fn list_dir(&self, dir: &Path) -> Result<Vec<eqm::DirEntry>, String> {
        let entries = self.call("list_dir", dir, |v| v.extract::<Vec<(String, bool)>>())?;
        Ok(entries
            .into_iter()
            .map(|(name, is_dir)| eqm::DirEntry { name, is_dir })
            .collect())
    }

    fn read_file(&self, path: &Path) -> Result<String, String> {
        self.call("read_file", path, |v| v.extract::<String>())
    }

    fn is_file(&self, path: &Path) -> bool {
        self.call("is_file", path, |v| v.extract::<bool>()).unwrap_or(false)
    }
}

impl eqm::ReadData for PythonStore {
    /// The bytes `read_data(path)` returns; a `FileNotFoundError` is a file that is not there
    /// (which `Files.exist` asks), any other exception a failure with its message.
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        Python::attach(|py| {
            let value = self.store.bind(py).call_method1("read_data", (path,));
            value
                .and_then(|v| Ok(v.cast::<PyBytes>()?.as_bytes().to_vec()))
                .map_err(|e| {
                    let kind = if e.is_instance_of::<pyo3::exceptions::PyFileNotFoundError>(py) {
                        std::io::ErrorKind::NotFound
                    } else if e.is_instance_of::<pyo3::exceptions::PyIsADirectoryError>(py) {
                        std::io::ErrorKind::IsADirectory
                    } else {
                        std::io::ErrorKind::Other
                    };
                    let value = e.value(py);
                    let message = match value.getattr("strerror").and_then(|s| s.extract::<String>()) {
                        Ok(reason) => reason,
                        Err(_) => e.to_string(),
                    };
                    std::io::Error::new(kind, message)
                })
        })
    }
}

/// The sources a job makes a library session of: the user's files, the library directories
/// with their store, the reader of data files.
type JobSources = (
    Vec<(String, Vec<u8>)>,
    Option<LibraryPath>,
    Option<Arc<dyn eqm::ReadData>>,
);

/// What a job returns: its value or nothing, the diagnostics of the session and its sources
/// (to render them).
type Outcome<T> = (Option<T>, Vec<Diagnostic>, SourceMap);

impl NativeSession {
    /// Runs `job` on a fresh library session of these sources with `parameters` given to the
    /// compiler, off the Python thread; `ModelError` when it returns nothing.
    fn with_session<T: Send + 'static>(
        &self,
        py: Python<'_>,
        model: Option<String>,
        parameters: Vec<(String, f64)>,
        job: impl FnOnce(&mut Session, Option<&str>, &ModelOptions) -> Option<T> + Send + 'static,
    ) -> PyResult<(T, Vec<Diagnostic>, SourceMap)> {
        let (files, libraries, data) = self.sources();
        let linker = self.linker.clone();
        let outcome: Outcome<T> = work::run(py, None, move || {
            let mut session =
                Session::with_libraries_reading_data(Vec::new(), files, &[], libraries, data, model.as_deref());
            session.set_shared_external_linker(linker);
            let options = ModelOptions {
                parameters,
                ..ModelOptions::default()
            };
            let value = if session.has_errors() {
                None
            } else {
                job(&mut session, model.as_deref(), &options)
            };
            let diagnostics = session.take_diagnostics();
            (value, diagnostics, session.source_map().clone())
        })?;
        match outcome {
            (Some(value), diagnostics, sources) => Ok((value, diagnostics, sources)),
            (None, diagnostics, sources) => Err(model_error(py, &diagnostics, &sources)),
        }
    }

    /// What a job needs to make a library session of these sources (a job owns what it uses).
    fn sources(&self) -> JobSources {
        (self.files.clone(), self.libraries.clone(), self.data.clone())
    }
}

#[pymethods]
impl NativeSession {
    /// The sources: the user's `files`, and the library `directories` in search order, listed
    /// and read through `store` (see [`PythonStore`]), the `.eqm` files of
    /// `eqm_file_directories` read in full.
    #[new]
    #[pyo3(signature = (files, directories=Vec::new(), store=None, eqm_file_directories=Vec::new()))]
    fn new(
        files: Vec<(String, Vec<u8>)>,
        directories: Vec<PathBuf>,
        store: Option<Py<PyAny>>,
        eqm_file_directories: Vec<PathBuf>,
    ) -> PyResult<NativeSession> {
        let data = store.as_ref().map(|store| {
            let reader: Arc<dyn eqm::ReadData> = Arc::new(PythonStore {
                store: Python::attach(|py| store.clone_ref(py)),
            });
            reader
        });
        let libraries = match store {
            _ if directories.is_empty() => None,
            Some(store) => Some(LibraryPath {
                store: Arc::new(PythonStore { store }),
                directories,
                eqm_file_directories,
                tree_cache: Some(Arc::new(eqm_cc::DiskTreeCache::from_environment())),
            }),
            None => {
                return Err(pyo3::exceptions::PyTypeError::new_err(
                    "library directories need the store that reads them",
                ));
            }
        };
        Ok(NativeSession {
            files,
            libraries,
            data,
            linker: Arc::new(eqm_cc::SystemCompiler::from_environment()),
        })
    }

    /// The models of the user's files: `(name, kind, description)`; `ModelError` for a file
    /// that does not parse.
    fn models(&self, py: Python<'_>) -> PyResult<Vec<(String, String, Option<String>)>> {
        let (models, ..) = self.with_session(py, None, Vec::new(), |session, _, _| {
            Some(
                session
                    .models()
                    .into_iter()
                    .map(|m| (m.name, m.kind.to_string(), m.description))
                    .collect::<Vec<_>>(),
            )
        })?;
        Ok(models)
    }

    /// `eqm check`: a dictionary with the model's name, its numbers of variables and
    /// equations, the branches chosen at translation and the warnings.
    #[pyo3(signature = (model, parameters))]
    fn check<'py>(
        &self,
        py: Python<'py>,
        model: Option<String>,
        parameters: Vec<(String, f64)>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (summary, warnings, sources) = self.with_session(py, model, parameters, |session, model, options| {
            session.check(model, options)
        })?;
        let dict = PyDict::new(py);
        dict.set_item("model", summary.model)?;
        dict.set_item("variables", summary.variables)?;
        dict.set_item("equations", summary.equations)?;
        dict.set_item("branch_choices", summary.branch_choices)?;
        dict.set_item("zero_coefficients", summary.zero_coefficients)?;
        dict.set_item("warnings", diagnostic_list(py, &warnings, &sources)?)?;
        Ok(dict)
    }

    /// The flat model's text, as `eqm flatten` prints it.
    #[pyo3(signature = (model, parameters))]
    fn flatten(&self, py: Python<'_>, model: Option<String>, parameters: Vec<(String, f64)>) -> PyResult<String> {
        let (text, ..) = self.with_session(py, model, parameters, |session, model, options| {
            session.flatten(model, options).map(|f| f.print())
        })?;
        Ok(text)
    }

    /// `eqm explain`: a dictionary with the text, the sorting as rows `(block, equation,
    /// text, solves, in_loop)`, and the bipartite graph as SVG (or why it is too large).
    /// With `keep_aliases`, alias equations (`a = b`) stay, to show every equation as written.
    #[pyo3(signature = (model, parameters, keep_aliases=false))]
    fn explain<'py>(
        &self,
        py: Python<'py>,
        model: Option<String>,
        parameters: Vec<(String, f64)>,
        keep_aliases: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let ((text, sorting, svg), ..) = self.with_session(py, model, parameters, move |session, model, options| {
            let options = ModelOptions {
                keep_aliases,
                ..options.clone()
            };
            let (analysis, text) = session.analyze_explained(model, &options)?;
            let view = GraphView::new(&analysis);
            Some((text, sorting_rows(&view), view.svg().map_err(|e| e.to_string())))
        })?;
        let dict = PyDict::new(py);
        dict.set_item("text", text)?;
        dict.set_item("sorting", sorting)?;
        match svg {
            Ok(svg) => dict.set_item("graph_svg", svg)?,
            Err(why) => dict.set_item("graph_note", why)?,
        }
        Ok(dict)
    }

    /// `eqm fmu`: the FMU of the model, `(model identifier, bytes)`, for FMI `version` (2 or 3)
    /// with the interfaces `kind` (`me`, `cs` or `both`). The runtime library is found as the
    /// command line finds it: `EQM_FMU_RUNTIME`, else in `runtime_near` (the directories of an
    /// `eqm` installation).
    #[pyo3(signature = (model, parameters, version, kind, runtime_near))]
    fn fmu<'py>(
        &self,
        py: Python<'py>,
        model: Option<String>,
        parameters: Vec<(String, f64)>,
        version: u32,
        kind: &str,
        runtime_near: Vec<String>,
    ) -> PyResult<(String, Bound<'py, pyo3::types::PyBytes>)> {
        let version = match version {
            2 => eqm::fmi::FmiVersion::Fmi2,
            3 => eqm::fmi::FmiVersion::Fmi3,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "fmi must be 2 or 3, not {other}"
                )));
            }
        };
        let kinds = match kind {
            "me" => eqm::fmi::Kinds { me: true, cs: false },
            "cs" => eqm::fmi::Kinds { me: false, cs: true },
            "both" => eqm::fmi::Kinds { me: true, cs: true },
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "kind must be 'me', 'cs' or 'both', not {other:?}"
                )));
            }
        };
        let near: Vec<std::path::PathBuf> = runtime_near.iter().map(std::path::PathBuf::from).collect();
        let near: Vec<&std::path::Path> = near.iter().map(|p| p.as_path()).collect();
        let runtime = eqm_cc::fmu_runtime_bytes(&near).map_err(pyo3::exceptions::PyFileNotFoundError::new_err)?;
        let (exported, ..) = self.with_session(py, model, parameters, move |session, model, options| {
            let compiled = session.compile(model, options)?;
            let export = eqm::fmi::ExportOptions {
                version,
                kinds,
                parameters: options.parameters.clone(),
            };
            match eqm::fmi::export(session, &compiled, &export, &runtime, &eqm_cc::host_platform()) {
                Ok(fmu) => Some(fmu),
                Err(d) => {
                    session.push_diagnostic(d);
                    None
                }
            }
        })?;
        Ok((exported.identifier, pyo3::types::PyBytes::new(py, &exported.bytes)))
    }

    /// The component diagram of the model as SVG.
    #[pyo3(signature = (model, parameters))]
    fn diagram(&self, py: Python<'_>, model: Option<String>, parameters: Vec<(String, f64)>) -> PyResult<String> {
        let (svg, ..) = self.with_session(py, model, parameters, |session, model, options| {
            session.diagram(model, options).map(|d| eqm::diagram::svg(&d))
        })?;
        Ok(svg)
    }

    /// `eqm analyze`: a dictionary with the JSON and text forms, the state names, `A` as
    /// row-major doubles (`a`, `n` by `n`), the eigenvalues (`eig_re`, `eig_im`) and the
    /// stability picture of the recommended method (SVG) when there is one.
    #[pyo3(signature = (model, parameters, at=None))]
    fn analyze<'py>(
        &self,
        py: Python<'py>,
        model: Option<String>,
        parameters: Vec<(String, f64)>,
        at: Option<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (result, _, sources) = self.with_session(py, model, parameters, move |session, model, options| {
            let mut compiled = session.compile_for_analysis(model, options)?;
            Some(compiled.analyze(&AnalyzeOptions::of_model(at, Vec::new())).map(|a| {
                let advice = a.advice(None);
                let picture = advice.as_ref().and_then(|advice| {
                    let method = eqm::Method::parse(&advice.recommended.as_ref()?.method)?;
                    eqm::stability::svg(&method, &a.timed_eigenvalues(), advice.step)
                });
                let eigenvalues = a.eigenvalues();
                (
                    eqm::analyze::json(&a, advice.as_ref()),
                    eqm::analyze::text(&a, advice.as_ref()),
                    a.state_names().iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                    a.linearization.a.transpose().iter().copied().collect::<Vec<f64>>(),
                    eigenvalues.iter().map(|e| e.re).collect::<Vec<_>>(),
                    eigenvalues.iter().map(|e| e.im).collect::<Vec<_>>(),
                    picture,
                )
            }))
        })?;
        let (json, text, states, a, re, im, picture) = match result {
            Ok(parts) => parts,
            Err(e) => return Err(crate::convert::run_error(py, e, &sources, py.None())),
        };
        let dict = PyDict::new(py);
        dict.set_item("json", json)?;
        dict.set_item("text", text)?;
        dict.set_item("n", states.len())?;
        dict.set_item("states", states)?;
        let bytes: Vec<u8> = a.iter().flat_map(|v| v.to_ne_bytes()).collect();
        dict.set_item("a", PyBytes::new(py, &bytes))?;
        dict.set_item("eig_re", re)?;
        dict.set_item("eig_im", im)?;
        dict.set_item("stability_svg", picture)?;
        Ok(dict)
    }

    /// The model compiled once, with `parameters` given to the compiler (structural ones
    /// among them); `ModelError` when it does not compile.
    #[pyo3(signature = (model, parameters))]
    fn compile(&self, py: Python<'_>, model: Option<String>, parameters: Vec<(String, f64)>) -> PyResult<NativeModel> {
        let (compiled, _, sources) = self.with_session(py, model, parameters, |session, model, options| {
            session.compile(model, options)
        })?;
        Ok(NativeModel::new(compiled, sources))
    }

    /// The diagnostics of the sources alone (syntax), as dictionaries.
    fn diagnostics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let (files, libraries, data) = self.sources();
        let (diagnostics, sources) = work::run(py, None, move || {
            let mut session = Session::with_libraries_reading_data(Vec::new(), files, &[], libraries, data, None);
            (session.take_diagnostics(), session.source_map().clone())
        })?;
        diagnostic_list(py, &diagnostics, &sources)
    }
}

/// The sorting of a graph as table rows: block number (from 1), equation label, equation
/// text, the unknown it solves for, and whether it is part of an algebraic loop.
fn sorting_rows(view: &GraphView) -> Vec<(usize, String, String, Option<String>, bool)> {
    let mut rows = Vec::new();
    for (b, block) in view.blocks.iter().enumerate() {
        for &e in &block.equations {
            let node = &view.equations[e];
            let solves = node.solves.map(|v| view.variables[v].clone());
            rows.push((b + 1, node.label.clone(), node.text.clone(), solves, node.in_loop));
        }
    }
    rows
}
