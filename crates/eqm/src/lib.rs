//! EQM's library: everything a front end (the `eqm` command line, a REPL, an analysis tool,
//! an export) does with models, behind one API that holds no IO.
//!
//! A [`Session`] takes the source texts a front end read, lists their models, and gives every
//! product of the compiler on request: the flat model ([`Session::flatten`]), the structural
//! analysis ([`Session::analyze`]), the text of `eqm explain` ([`Session::explain`]), the
//! component diagram ([`Session::diagram`], drawn as SVG by [`diagram::svg`]) and a
//! compiled [`Model`] ([`Session::compile`]). A model is compiled once and simulated any number
//! of times; parameters and start values change between runs without recompiling, and a run
//! goes into memory ([`Model::simulate`]) or row by row to any [`RowSink`]
//! ([`Model::simulate_into`]), for example as CSV ([`CsvWriter`]). Every decision of a run is
//! made here, the same for every front end: [`Model::plan_run`] decides the stop time of a run
//! that names none (see [`RunSettings`]), checks the settings and chooses the columns with the
//! plotted variables among them. A compiled model is also analysed before it is simulated
//! ([`analyze`]: steady state, invariants, linearisation, eigenvalues, time scales and
//! stiffness; [`Session::compile_for_analysis`] and [`AnalyzeOptions::of_model`] decide the form
//! and the inputs and outputs). Every problem is a [`Diagnostic`] kept in the session, rendered
//! with its source excerpt by [`Session::render_diagnostics`]. `eqm check` of a file of several
//! classes ([`Session::check_classes`]) checks each complete model as a model and each component
//! for its local balance. A parameter sweep ([`sweep::sweep`]) checks its axes and runs a
//! model for every combination of parameter values on all cores; [`stability`] judges the integration methods for a model's eigenvalues
//! and draws their stability regions. Text typed into an interactive front end (a class line
//! by line, an expression) is parsed by [`input`]. A result is compared with a reference result
//! by the tube method of the Modelica Association's reference results ([`compare`]). A compiled
//! model is described and packed as a Functional Mock-up Unit by [`fmi`].
//!
//! ```
//! use eqm::{ModelOptions, RunSettings, Session};
//!
//! let text = "model Decay
//!   parameter Real k = 2;
//!   Real x(start = 1, fixed = true);
//! equation
//!   der(x) = -k*x;
//! end Decay;";
//! let mut session = Session::with_sources(&[("decay.eqm".into(), text.into())], &[], None);
//! let mut model = session.compile(None, &ModelOptions::default()).expect("the model compiles");
//!
//! let settings = RunSettings { stop: Some(1.0), ..RunSettings::default() };
//! let result = model.simulate(&settings).expect("the run finishes");
//! let x1 = result.final_value("x").unwrap();
//! assert!((x1 - (-2.0f64).exp()).abs() < 1e-5);
//!
//! // A parameter changes without recompiling.
//! model.set_parameter("k", 1.0).unwrap();
//! let result = model.simulate(&settings).unwrap();
//! assert!((result.final_value("x").unwrap() - (-1.0f64).exp()).abs() < 1e-5);
//! ```
//!
//! Errors are diagnostics with a code, a location and a labelled excerpt:
//!
//! ```
//! use eqm::{ModelOptions, Session};
//!
//! let text = "model M\n  Real x;\nequation\n  der(x) = -y;\nend M;\n";
//! let mut session = Session::with_sources(&[("m.eqm".into(), text.into())], &[], None);
//! assert!(session.check(None, &ModelOptions::default()).is_none());
//! assert_eq!(session.diagnostics()[0].code, "E0205");
//! let rendered = session.render_diagnostics(false);
//! assert!(rendered.contains("m.eqm:4:"));
//! ```
//!
//! Nothing here reads files or the environment: a front end reads the sources (and any
//! replacement of a standard-library file, [`Session::with_stdlib_replaced`]) and hands over
//! their texts. The stages and the types crossing their boundaries are described in
//! `ARCHITECTURE.md`; the crates of the pipeline are reachable through [`pipeline`] for the
//! tests and benches of what the API does not wrap.

pub mod analyze;
pub mod compare;
pub mod counters;
pub mod diagram;
pub mod fmi;
pub mod input;
pub mod library_doc;
mod model;
mod modes;
mod package_check;
mod plan;
pub mod points;
pub mod result_files;
mod results;
mod run;
mod run_state;
mod session;
pub mod stability;
pub mod stepped;
pub mod sweep;
pub mod worker;
mod zero_coefficients;

pub use analyze::{AnalyzeOptions, ModelAnalysis};
pub use diagram::Diagram;
pub use eqm_sd::{Format as SdFormat, Imported as SdImported, import as import_system_dynamics};
pub use model::{Model, ParameterInfo, RunReport, VariableInfo, VariableKind};
pub use package_check::{ClassCheck, ClassVerdict, LocalBalance, check_lines, check_report};
pub use plan::RunPlan;
pub use points::{PointRun, PointRuns};
pub use result_files::{ResultFileInfo, ResultFormat, ResultWriter, result_writer};
pub use results::{Column, CsvWriter, RowSink, SimulationResult};
pub use run::{DEFAULT_MAX_ROWS, RunError, RunSettings};
pub use run_state::RunState;
pub use session::{CheckSummary, LibraryPath, ModelInfo, ModelOptions, Session};
pub use stepped::{Advanced, EventOutcome, EventPolicy, Known, ModelExchange, StepPlan, SteppedRun};
pub use sweep::{Sweep, SweepAxis, SweepError, SweepRun};

pub use eqm_compile::analysis::{Analysis, FormChoice, IndexForm};
pub use eqm_compile::explain::explain;
pub use eqm_compile::graphview::{GraphView, ReplayStep, TooLarge};
pub use eqm_compile::modes::VariableStructure;
pub use eqm_diag::source::ReadData;
pub use eqm_diag::source::{FileId, SourceMap, Span};
pub use eqm_diag::timing::{StageTime, Timings};
pub use eqm_diag::{Diagnostic, Severity};
pub use eqm_flatten::library::{DirEntry, LibraryStore};
pub use eqm_integrators::Method;
pub use eqm_integrators::tableau::Tableau;
pub use eqm_ir::external::{ExternalUnit, LinkError, LinkExternal, LinkedSymbol};
pub use eqm_ir::flat::{Experiment, FlatModel};
pub use eqm_sim::simulate::{Stabilize, Summary};
pub use eqm_syntax::TreeCache;
pub use worker::with_compiler_stack;

/// The crates of the pipeline, for the tests and benches of products the API does not wrap
/// (the executable program, the structural graph, the integrators). Front ends use the API
/// above only.
pub mod pipeline {
    pub use eqm_compile as compile;
    pub use eqm_diag as diag;
    pub use eqm_flatten as flatten;
    pub use eqm_integrators as integrators;
    pub use eqm_ir as ir;
    pub use eqm_sim as sim;
    pub use eqm_syntax as syntax;
}

/// The number text of every output: the shortest form that reads back to the same value.
pub use eqm_diag::text::format_number;

/// The file names of the standard library's files (`Mechanics.eqm`, ...): the names that
/// replacements given to [`Session::with_stdlib_replaced`] go by.
pub fn stdlib_file_names() -> Vec<&'static str> {
    (0..eqm_flatten::stdlib::FILES.len())
        .map(eqm_flatten::stdlib::file_name)
        .collect()
}
