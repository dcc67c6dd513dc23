//! Runs the pipeline stages in order for every front end.
//!
//! Input: source texts already read by the caller (the CLI reads files; tests pass strings).
//! Output: the products of each stage plus all diagnostics, and per-stage wall times for `-v`.
//! This module sequences stages; it implements none of them and does no IO itself.

use eqm_compile::analysis::{self, Analysis, AnalysisOptions, Compiled, IndexForm};
use eqm_diag::Diagnostic;
use eqm_diag::source::FileId;
use eqm_diag::timing::Timings;
use eqm_flatten::Sources;
use eqm_ir::flat::FlatModel;
use std::time::Duration;

#[derive(Debug, Default)]
pub struct Session {
    pub sources: Sources,
    pub diagnostics: Vec<Diagnostic>,
    pub timings: Timings,
}

impl Session {
    pub fn new() -> Session {
        Session::default()
    }

    /// Parses a user file and keeps its syntax tree and diagnostics.
    pub fn add_file(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let id = self.timings.time("parse", || self.sources.add_file(name, text));
        self.take_source_diagnostics();
        id
    }

    /// Parses a library file (embedded stdlib or an `EQMPATH` file).
    pub fn add_library_file(&mut self, name: impl Into<String>, text: impl Into<String>) {
        self.timings.time("parse", || self.sources.add_library_file(name, text));
        self.take_source_diagnostics();
    }

    /// Adds the standard library that is compiled into the binary.
    pub fn add_embedded_stdlib(&mut self) {
        self.timings.time("parse", || self.sources.add_embedded_stdlib());
        self.take_source_diagnostics();
    }

    /// Adds the stdlib packages that `texts` mention by name, and those they mention in turn.
    pub fn add_embedded_stdlib_used_by(&mut self, texts: &[&str]) {
        self.timings
            .time("parse", || self.sources.add_embedded_stdlib_used_by(texts));
        self.take_source_diagnostics();
    }

    fn take_source_diagnostics(&mut self) {
        self.diagnostics.append(&mut self.sources.diagnostics);
    }

    /// Resolves and flattens `model` (or the only model in the user's files).
    pub fn flatten(&mut self, model: Option<&str>, options: &eqm_flatten::Options) -> Option<FlatModel> {
        let flat = self.timings.time("flatten", || self.sources.flatten(model, options));
        self.take_source_diagnostics();
        flat
    }

    /// Flattens `model` and runs DAE lowering, alias elimination and the structural analysis.
    /// With `keep_aliases` the alias equations stay in the system, which shows the equations
    /// exactly as the model writes them.
    pub fn analyze(
        &mut self,
        model: Option<&str>,
        options_flatten: &eqm_flatten::Options,
        keep_aliases: bool,
    ) -> Option<Analysis> {
        let options = AnalysisOptions {
            keep_aliases,
            index_form: IndexForm::Auto,
        };
        self.analyze_with(model, options_flatten, &options)
    }

    fn analyze_with(
        &mut self,
        model: Option<&str>,
        flatten: &eqm_flatten::Options,
        options: &AnalysisOptions,
    ) -> Option<Analysis> {
        let flat = self.flatten(model, flatten)?;
        match analysis::analyze(flat, options, &mut self.timings) {
            Ok((analysis, mut warnings)) => {
                self.diagnostics.append(&mut warnings);
                Some(analysis)
            }
            Err(mut diagnostics) => {
                self.diagnostics.append(&mut diagnostics);
                None
            }
        }
    }

    /// The text of `eqm explain` for `model` (see [`Session::analyze`]).
    pub fn explain(
        &mut self,
        model: Option<&str>,
        options: &eqm_flatten::Options,
        keep_aliases: bool,
    ) -> Option<String> {
        let a = self.analyze(model, options, keep_aliases)?;
        Some(eqm_compile::explain::explain(&a))
    }

    /// Analyses `model` and builds the executable programs of its simulation and of its
    /// initialization problem (a high-index model in the form [`IndexForm::Auto`] chooses).
    pub fn compile(&mut self, model: Option<&str>, options: &eqm_flatten::Options) -> Option<Compiled> {
        self.compile_with(model, options, IndexForm::Auto)
    }

    /// [`Session::compile`] with the form of a high-index model chosen by `form`.
    pub fn compile_with(
        &mut self,
        model: Option<&str>,
        options: &eqm_flatten::Options,
        form: IndexForm,
    ) -> Option<Compiled> {
        let analysis_options = AnalysisOptions {
            keep_aliases: false,
            index_form: form,
        };
        let analysis = self.analyze_with(model, options, &analysis_options)?;
        match analysis::compile(analysis, &mut self.timings) {
            Ok(compiled) => Some(compiled),
            Err(mut diagnostics) => {
                self.diagnostics.append(&mut diagnostics);
                None
            }
        }
    }

    /// Adds `time` to the wall time of `stage` (stages run outside the driver, such as the
    /// simulation itself, report here so that `-v` lists them too).
    pub fn record_time(&mut self, stage: &'static str, time: Duration) {
        self.timings.record(stage, time);
    }

    pub fn has_errors(&self) -> bool {
        eqm_diag::has_errors(&self.diagnostics)
    }

    /// Renders all diagnostics collected so far, sorted by location.
    pub fn render_diagnostics(&mut self, color: bool) -> String {
        eqm_diag::sort(&mut self.diagnostics);
        eqm_diag::render_all(&self.diagnostics, &self.sources.map, color)
    }
}
