//! The structural analysis of one model as one function, the choice of the form in which a
//! high-index model is simulated, and the building of its executable programs.
//!
//! Input: a [`FlatModel`] and [`AnalysisOptions`]. [`analyze`] runs the stages in order (DAE
//! lowering, alias elimination, index reduction, event extraction, causalisation, the
//! initialization problem, and the same last stages on the embedding form of a high-index
//! model) and decides the form to simulate ([`FormChoice::choose`], the only place that
//! decides it). Output: an [`Analysis`], what `explain` prints and [`compile`] turns into the
//! executable programs of a [`Compiled`] model. Each stage's wall time goes to a [`Timings`].
//! This module sequences stages; it implements none of them.

use crate::alias::AliasReport;
use crate::dae::Dae;
use crate::events::Hybrid;
use crate::exec::ExecProgram;
use crate::index::{IndexReduction, Invariant};
use crate::init::{InitPlan, InitSystem};
use crate::plan::Plan;
use eqm_diag::Diagnostic;
use eqm_diag::timing::Timings;
use eqm_ir::flat::{Experiment, FlatModel};

/// How to analyse a model.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnalysisOptions {
    /// Keep alias equations (`a = b`) in the system, which shows the equations exactly as the
    /// model writes them (`explain --keep-aliases`).
    pub keep_aliases: bool,
    /// The form of a high-index model to simulate.
    pub index_form: IndexForm,
}

/// The result of the structural analysis of one model: what `explain`, code generation and the
/// interpreter read.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub dae: Dae<Hybrid>,
    pub aliases: AliasReport,
    /// What index reduction did; `None` when the DAE needed none.
    pub index: Option<IndexReduction>,
    pub plan: Plan,
    /// The initialization problem and its plan.
    pub init: InitPlan,
    /// The embedding form of a high-index model, when it could be analysed.
    pub embedding: Option<EmbeddingForm>,
    /// The form simulated, for a model that needed index reduction.
    pub form: Option<FormChoice>,
}

/// The embedding form of a high-index model, analysed: every differentiated variable a state,
/// the differentiated constraints kept as invariants.
#[derive(Debug, Clone)]
pub struct EmbeddingForm {
    /// The DAE with its events extracted.
    pub dae: Dae<Hybrid>,
    pub plan: Plan,
    pub invariants: Vec<Invariant>,
    /// Whether a static state choice stays valid for the whole run (see
    /// [`crate::index::Embedding::static_choice_is_valid`]).
    pub static_choice_valid: bool,
}

/// Which form of a high-index model to simulate (`--index-reduction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexForm {
    /// The embedding form where a static state choice cannot be shown valid for the whole run,
    /// otherwise the dummy-derivative form.
    #[default]
    Auto,
    /// Dummy derivatives: a static state choice (fewer states, no projection).
    Dummy,
    /// The embedding form: every differentiated variable a state, the differentiated
    /// constraints kept as invariants by the projection.
    Embedding,
}

/// The form chosen for a high-index model, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormChoice {
    pub embedding: bool,
    pub why: FormReason,
}

/// Why a form was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormReason {
    /// The embedding form could not be analysed.
    EmbeddingUnavailable,
    /// `--index-reduction dummy` or `embedding`.
    Requested,
    /// The differentiated constraints are linear with constant coefficients.
    StaticChoiceValid,
    /// A static state choice may become singular during the run.
    StaticChoiceMayFail,
    /// The embedding form was chosen by default but could not be compiled, for this reason.
    EmbeddingNotCompiled(String),
}

impl FormChoice {
    /// The form to simulate for the index reduction `index` and embedding form `embedding`,
    /// when `requested` was asked for; `None` for a model that needed no index reduction.
    pub fn choose(
        index: Option<&IndexReduction>,
        embedding: Option<&EmbeddingForm>,
        requested: IndexForm,
    ) -> Option<FormChoice> {
        index?;
        let (embedding, why) = match (embedding, requested) {
            (None, _) => (false, FormReason::EmbeddingUnavailable),
            (Some(_), IndexForm::Dummy) => (false, FormReason::Requested),
            (Some(_), IndexForm::Embedding) => (true, FormReason::Requested),
            (Some(e), IndexForm::Auto) if e.static_choice_valid => (false, FormReason::StaticChoiceValid),
            (Some(_), IndexForm::Auto) => (true, FormReason::StaticChoiceMayFail),
        };
        Some(FormChoice { embedding, why })
    }

    /// The choice in words, for `-v`.
    pub fn reason(&self) -> String {
        match (&self.why, self.embedding) {
            (FormReason::EmbeddingUnavailable, _) => {
                "dummy derivatives (the embedding form is not available for this model)".to_string()
            }
            (FormReason::Requested, false) => "dummy derivatives (--index-reduction dummy)".to_string(),
            (FormReason::Requested, true) => {
                "embedding form with projection (--index-reduction embedding)".to_string()
            }
            (FormReason::StaticChoiceValid, _) => "dummy derivatives: the differentiated constraints are linear with constant coefficients, so the static state choice stays valid".to_string(),
            (FormReason::StaticChoiceMayFail, _) => {
                "embedding form with projection: a static state choice may become singular during the run".to_string()
            }
            (FormReason::EmbeddingNotCompiled(why), _) => {
                format!("dummy derivatives (the embedding form could not be compiled: {why})")
            }
        }
    }
}

/// Runs the structural analysis of `flat`. Warnings (conflicting start values of aliases,
/// start values assumed fixed) come back with the analysis; errors instead of it.
pub fn analyze(
    flat: FlatModel,
    options: &AnalysisOptions,
    timings: &mut Timings,
) -> Result<(Analysis, Vec<Diagnostic>), Vec<Diagnostic>> {
    let mut warnings = Vec::new();
    let mut dae = timings.time("lower", || crate::dae::lower(flat));
    crate::starts::resolve(&mut dae)?;
    let dae = timings.time("alias", || {
        if options.keep_aliases {
            (crate::alias::keep(dae), AliasReport::default())
        } else {
            let (dae, aliases, mut found) = crate::alias::eliminate(dae);
            warnings.append(&mut found);
            (dae, aliases)
        }
    });
    let (dae, aliases) = dae;
    // Aliases with contradicting fixed start values are an error of the initial system.
    if eqm_diag::has_errors(&warnings) {
        return Err(warnings);
    }
    let (dae, reduction) = timings.time("index reduction", || crate::index::reduce(dae))?;
    let (index, embedding) = match reduction {
        Some((index, embedding)) => (Some(index), embedding),
        None => (None, None),
    };
    warnings.extend(crate::index::state_select_warnings(&dae, &aliases, index.as_ref()));
    let mut dae = timings.time("events", || crate::events::extract(dae));
    // The simulation runs the actual expressions of `homotopy`; the initialization, the blend.
    let blended = crate::homotopy::split(&mut dae);
    let plan = timings.time("structural", || crate::plan::analyze(&mut dae))?;
    crate::discrete_values::check(&dae, &plan)?;
    // The initialization may share the simulation system unless another form (the embedding
    // form, with other states) may be simulated.
    let shared = embedding.is_none();
    let (init, mut init_warnings) = timings.time("initialization", || match blended {
        Some(mut blended) => crate::init::analyze_with_homotopy(&mut blended),
        None => crate::init::analyze(&mut dae, &plan, shared),
    })?;
    warnings.append(&mut init_warnings);
    // The when-clauses on `initial()` did their work in the initialization.
    crate::init::drop_initial_from_active_branches(&mut dae);
    // The embedding form goes through the same last stages; when it cannot be sorted it is not
    // available (its diagnostics are dropped: the dummy-derivative form is simulated instead).
    let embedding = timings.time("structural", || {
        embedding.and_then(|mut e| {
            let static_choice_valid = e.static_choice_is_valid();
            let mut dae = crate::events::extract(e.dae);
            // (The initialization is the dummy-derivative form's, built above.)
            crate::init::drop_initial_from_active_branches(&mut dae);
            crate::homotopy::to_actual(&mut dae);
            let plan = crate::plan::analyze(&mut dae).ok()?;
            Some(EmbeddingForm {
                dae,
                plan,
                invariants: e.invariants,
                static_choice_valid,
            })
        })
    });
    let form = FormChoice::choose(index.as_ref(), embedding.as_ref(), options.index_form);
    let analysis = Analysis {
        dae,
        aliases,
        index,
        plan,
        init,
        embedding,
        form,
    };
    Ok((analysis, warnings))
}

/// The executable programs of one model, ready to simulate.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub program: ExecProgram,
    /// The initialization problem's program: run once to get consistent initial values;
    /// `None` when the initialization is the simulation program at the states' start values
    /// ([`InitSystem::Simulation`]).
    pub init: Option<ExecProgram>,
    pub experiment: Experiment,
    /// For a model that needed index reduction: which form is simulated, and why.
    pub form: Option<FormChoice>,
}

/// Builds the executable programs of `analysis` in the form it chose. When the embedding form
/// was chosen by default but cannot be compiled, the dummy-derivative form is compiled instead
/// (its state choice is checked during the run) and the choice says why.
pub fn compile(analysis: Analysis, timings: &mut Timings) -> Result<Compiled, Vec<Diagnostic>> {
    timings.time("codegen", || {
        let experiment = analysis.dae.flat.experiment.clone();
        let mut form = analysis.form;
        // The initialization problem is the dummy-derivative form's in both cases: it gives
        // every variable consistent values, and the states of either form are read by name.
        let init = match analysis.init.system {
            InitSystem::Own { dae, plan } => ExecProgram::build(*dae, &plan).map(Some),
            InitSystem::Simulation { .. } => Ok(None),
        };
        let embedding = analysis
            .embedding
            .filter(|_| form.as_ref().is_some_and(|c| c.embedding));
        let program = match embedding.map(|e| embedding_program(e, init.as_ref().ok().and_then(Option::as_ref))) {
            Some(Ok(program)) => Ok(program),
            Some(Err(d)) if form.as_ref().is_some_and(|c| c.why != FormReason::Requested) => {
                form = Some(FormChoice {
                    embedding: false,
                    why: FormReason::EmbeddingNotCompiled(
                        d.first().map_or("no reason given", |d| d.message.as_str()).to_string(),
                    ),
                });
                ExecProgram::build(analysis.dae, &analysis.plan)
            }
            Some(Err(d)) => Err(d),
            None => ExecProgram::build(analysis.dae, &analysis.plan),
        };
        match (program, init) {
            (Ok(program), Ok(init)) => Ok(Compiled {
                program,
                init,
                experiment,
                form,
            }),
            (Err(mut a), Err(mut b)) => {
                a.append(&mut b);
                Err(a)
            }
            (Err(d), _) | (_, Err(d)) => Err(d),
        }
    })
}

/// The program of the embedding form, initialized by `init` (the dummy-derivative form's
/// initialization program): refused (`E0610`) when `init` reads a relation that none of the
/// embedding form's relations sets, since the simulation sets the initialization's relations
/// from the model's surfaces and such a relation would keep a value no surface gave it.
fn embedding_program(embedding: EmbeddingForm, init: Option<&ExecProgram>) -> Result<ExecProgram, Vec<Diagnostic>> {
    let program = ExecProgram::build(embedding.dae, &embedding.plan)?;
    let Some(init) = init else {
        return Ok(program);
    };
    let unset = crate::exec::InitLink::new(&program, init).unset_relations(&program, init);
    match unset.first() {
        None => Ok(program),
        Some(first) => Err(vec![
            Diagnostic::error(
                "E0610",
                format!(
                    "the embedding form cannot be initialized: the initialization reads {first}, which no relation of the embedding form sets"
                ),
                program.model_span(),
                "the model",
            )
            .with_help("simulate the dummy-derivative form: --index-reduction dummy"),
        ]),
    }
}
