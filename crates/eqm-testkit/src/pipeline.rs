//! The pipeline from source text to the structural analysis and the executable programs, for
//! the tests of the crates below the library API (which they cannot depend on without being
//! rebuilt with everything above them): the stages in the order the API runs them, on the
//! parsed [`Sources`], with every diagnostic kept in [`Sources::diagnostics`].

use eqm_compile::analysis::{self, Analysis, AnalysisOptions, Compiled, IndexForm};
use eqm_compile::modes;
use eqm_diag::timing::Timings;
use eqm_flatten::{Options, Sources};
use eqm_ir::flat::FlatModel;

pub trait Pipeline {
    /// Flattens `model` and analyses it (alias elimination unless `keep_aliases`).
    fn analyze(&mut self, model: Option<&str>, options: &Options, keep_aliases: bool) -> Option<Analysis>;
    /// The analysis a run starts from: [`Pipeline::analyze`]'s, or for a variable-structure
    /// model the analysis of the mode its start values suggest (with that mode's branches).
    fn analyze_as_run(&mut self, model: Option<&str>, options: &Options) -> Option<Analysis>;
    /// The text of `eqm explain`.
    fn explain(&mut self, model: Option<&str>, options: &Options, keep_aliases: bool) -> Option<String>;
    /// The executable programs, the form of a high-index model chosen by `form`.
    fn compile_with(&mut self, model: Option<&str>, options: &Options, form: IndexForm) -> Option<Compiled>;
    fn compile(&mut self, model: Option<&str>, options: &Options) -> Option<Compiled> {
        self.compile_with(model, options, IndexForm::Auto)
    }
}

impl Pipeline for Sources {
    fn analyze(&mut self, model: Option<&str>, options: &Options, keep_aliases: bool) -> Option<Analysis> {
        let options_ = AnalysisOptions {
            keep_aliases,
            index_form: IndexForm::Auto,
        };
        analyze_with(self, model, options, &options_)
    }

    fn analyze_as_run(&mut self, model: Option<&str>, options: &Options) -> Option<Analysis> {
        let options_ = AnalysisOptions {
            keep_aliases: false,
            index_form: IndexForm::Auto,
        };
        let flat = self.flatten(model, options)?;
        let kept = modes::may_vary_in_structure(&flat).then(|| flat.clone());
        let analysis = analyze_flat(self, flat, &options_)?;
        match kept.and_then(|flat| Some((modes::find(&flat, &analysis)?, flat))) {
            None => Some(analysis),
            Some((structure, flat)) => {
                let key = modes::initial_key(&flat, &structure, &[], &[], flat.experiment.start_time.unwrap_or(0.0));
                analyze_flat(self, modes::specialize(&flat, &structure, &key, false), &options_)
            }
        }
    }

    fn explain(&mut self, model: Option<&str>, options: &Options, keep_aliases: bool) -> Option<String> {
        let a = self.analyze(model, options, keep_aliases)?;
        Some(eqm_compile::explain::explain(&a))
    }

    fn compile_with(&mut self, model: Option<&str>, options: &Options, form: IndexForm) -> Option<Compiled> {
        let options_ = AnalysisOptions {
            keep_aliases: false,
            index_form: form,
        };
        let analysis = if form == IndexForm::Auto {
            self.analyze_as_run(model, options)?
        } else {
            analyze_with(self, model, options, &options_)?
        };
        analysis::compile(analysis, &mut Timings::default())
            .map_err(|mut d| self.diagnostics.append(&mut d))
            .ok()
    }
}

fn analyze_with(
    sources: &mut Sources,
    model: Option<&str>,
    options: &Options,
    analysis_options: &AnalysisOptions,
) -> Option<Analysis> {
    let flat = sources.flatten(model, options)?;
    analyze_flat(sources, flat, analysis_options)
}

fn analyze_flat(sources: &mut Sources, flat: FlatModel, analysis_options: &AnalysisOptions) -> Option<Analysis> {
    match analysis::analyze(flat, analysis_options, &mut Timings::default()) {
        Ok((analysis, mut warnings)) => {
            sources.diagnostics.append(&mut warnings);
            Some(analysis)
        }
        Err(mut diagnostics) => {
            sources.diagnostics.append(&mut diagnostics);
            None
        }
    }
}

/// The model and initialization programs of the only model in `text`, with the embedded
/// standard library; panics with the rendered diagnostics when it does not compile.
pub fn compile(name: &str, text: &str) -> Compiled {
    let mut sources = Sources::new();
    sources.add_embedded_stdlib();
    sources.add_file(name, text.to_string());
    sources
        .compile(None, &Options::default())
        .unwrap_or_else(|| panic!("{name}: {}", sources.render_diagnostics(false)))
}
