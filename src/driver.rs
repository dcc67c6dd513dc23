//! Runs the pipeline stages in order for the CLI and the REPL.
//!
//! Input: source texts already read by the caller (the CLI reads files; tests pass strings).
//! Output: the products of each stage plus all diagnostics, and per-stage wall times for `-v`.
//! This module sequences stages; it implements none of them and does no IO itself.

use crate::diag::{self, Diagnostic};
use crate::flat::FlatModel;
use crate::flatten;
use crate::resolve::ClassTable;
use crate::source::{FileId, SourceMap};
use crate::syntax::{self, ast};
use std::time::{Duration, Instant};

/// Stack size for threads that run the compiler on user input. Expression depth is bounded by
/// the parser, but nesting of classes, equations and statements is not, and every stage walks
/// those recursively; a large (lazily committed) stack keeps hostile input from overflowing it.
pub const COMPILER_STACK_SIZE: usize = 1 << 30;

/// Runs `f` on a thread with [`COMPILER_STACK_SIZE`] bytes of stack and returns its result.
pub fn with_compiler_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let handle = std::thread::Builder::new()
        .name("eqm-compiler".to_string())
        .stack_size(COMPILER_STACK_SIZE)
        .spawn(f)
        .expect("the operating system refused to start the compiler thread");
    match handle.join() {
        Ok(value) => value,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Wall time of one named stage, printed by `-v`/`--timings`.
#[derive(Debug, Clone)]
pub struct StageTime {
    pub stage: &'static str,
    pub time: Duration,
}

/// The parsed input of one compilation.
/// The result of the structural analysis of one model: what `explain`, code generation and the
/// interpreter read.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub dae: crate::dae::Dae,
    pub aliases: crate::alias::AliasReport,
    /// What index reduction did; `None` when the DAE needed none.
    pub index: Option<crate::index::IndexReduction>,
    pub plan: crate::plan::Plan,
    /// The initialization problem and its plan.
    pub init: crate::init::InitPlan,
}

/// The executable programs of one model, ready to simulate.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub program: crate::exec::ExecProgram,
    /// The initialization problem's program: run once to get consistent initial values.
    pub init: crate::exec::ExecProgram,
    pub experiment: crate::flat::Experiment,
    /// For a model that needed index reduction: which form is simulated, and why.
    pub form: Option<FormChoice>,
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
    /// Seed 002's embedding form: every differentiated variable a state, the differentiated
    /// constraints kept as invariants by the projection.
    Embedding,
}

/// The form chosen for a high-index model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormChoice {
    pub embedding: bool,
    pub reason: String,
}

#[derive(Debug, Default)]
pub struct Session {
    pub sources: SourceMap,
    pub files: Vec<(FileId, ast::StoredDefinition)>,
    /// Library files: the embedded stdlib, then `EQMPATH` directories.
    pub library: Vec<(FileId, ast::StoredDefinition)>,
    pub diagnostics: Vec<Diagnostic>,
    pub timings: Vec<StageTime>,
}

impl Session {
    pub fn new() -> Session {
        Session::default()
    }

    /// Parses a user file and keeps its AST and diagnostics.
    pub fn add_file(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let start = Instant::now();
        let id = self.sources.add(name, text);
        let (ast, mut diagnostics) = syntax::parse_file(id, &self.sources.get(id).text);
        self.files.push((id, ast));
        self.diagnostics.append(&mut diagnostics);
        self.record("parse", start.elapsed());
        id
    }

    /// Parses a library file (embedded stdlib or an `EQMPATH` file).
    pub fn add_library_file(&mut self, name: impl Into<String>, text: impl Into<String>) {
        let start = Instant::now();
        let id = self.sources.add(name, text);
        let (ast, mut diagnostics) = syntax::parse_file(id, &self.sources.get(id).text);
        self.library.push((id, ast));
        self.diagnostics.append(&mut diagnostics);
        self.record("parse", start.elapsed());
    }

    /// Adds the standard library that is compiled into the binary.
    pub fn add_embedded_stdlib(&mut self) {
        for (name, text) in crate::stdlib::FILES {
            self.add_library_file(format!("<stdlib>/{name}"), *text);
        }
    }

    /// Adds the stdlib packages that `texts` mention by name (as an identifier, so not in
    /// comments or strings), and the packages those mention in turn. A package named nowhere
    /// cannot be referred to, so leaving it out changes nothing but the time spent parsing it.
    pub fn add_embedded_stdlib_used_by(&mut self, texts: &[&str]) {
        use logos::Logos;
        let packages = crate::stdlib::PACKAGES;
        let mut needed = vec![false; packages.len()];
        let mut queue: Vec<&str> = texts.to_vec();
        while let Some(text) = queue.pop() {
            // A text without any package name needs no lexing at all.
            if !packages.iter().any(|name| text.contains(name)) {
                continue;
            }
            for token in crate::syntax::lexer::Token::lexer(text).flatten() {
                if let crate::syntax::lexer::Token::Ident(ident) = token
                    && let Some(k) = packages.iter().position(|p| *p == ident)
                    && !needed[k]
                {
                    needed[k] = true;
                    queue.push(crate::stdlib::FILES[k].1);
                }
            }
        }
        for (k, (name, text)) in crate::stdlib::FILES.iter().enumerate() {
            if needed[k] {
                self.add_library_file(format!("<stdlib>/{name}"), *text);
            }
        }
    }

    /// Resolves and flattens `model` (or the only model in the user's files).
    pub fn flatten(&mut self, model: Option<&str>, options: &flatten::Options) -> Option<FlatModel> {
        let start = Instant::now();
        let library: Vec<&ast::StoredDefinition> = self.library.iter().map(|(_, f)| f).collect();
        let user: Vec<&ast::StoredDefinition> = self.files.iter().map(|(_, f)| f).collect();
        let name = match model {
            Some(m) => m.to_string(),
            None => match flatten::default_model(&user) {
                Ok(m) => m,
                Err(candidates) => {
                    let message = if candidates.is_empty() {
                        "the files define no model".to_string()
                    } else {
                        format!(
                            "the files define several models ({}); choose one with --model",
                            candidates.join(", ")
                        )
                    };
                    self.diagnostics.push(Diagnostic {
                        code: "E0201",
                        severity: diag::Severity::Error,
                        message,
                        labels: Vec::new(),
                        notes: Vec::new(),
                        help: None,
                    });
                    return None;
                }
            },
        };
        let table = ClassTable::build(&library, &user);
        let mut diagnostics = table.diagnostics.clone();
        let (flat, mut more) = flatten::flatten(&table, &name, options);
        diagnostics.append(&mut more);
        self.diagnostics.append(&mut diagnostics);
        self.record("flatten", start.elapsed());
        flat
    }

    /// Flattens `model` and runs DAE lowering, alias elimination and the structural analysis.
    /// With `keep_aliases` the alias equations stay in the system, which shows the equations
    /// exactly as the model writes them (seed 000's view of the sorting).
    pub fn analyze(&mut self, model: Option<&str>, options: &flatten::Options, keep_aliases: bool) -> Option<Analysis> {
        let flat = self.flatten(model, options)?;
        let start = Instant::now();
        let mut dae = crate::dae::lower(flat);
        self.record("lower", start.elapsed());
        let start = Instant::now();
        let aliases = if keep_aliases {
            crate::alias::AliasReport::default()
        } else {
            let (aliases, mut warnings) = crate::alias::eliminate(&mut dae);
            self.diagnostics.append(&mut warnings);
            aliases
        };
        self.record("alias", start.elapsed());
        let start = Instant::now();
        let index = match crate::index::reduce(&mut dae) {
            Ok(index) => index,
            Err(mut diagnostics) => {
                self.diagnostics.append(&mut diagnostics);
                return None;
            }
        };
        self.record("index reduction", start.elapsed());
        let start = Instant::now();
        crate::events::extract(&mut dae);
        self.record("events", start.elapsed());
        let start = Instant::now();
        let plan = crate::plan::analyze(&mut dae);
        self.record("structural", start.elapsed());
        let plan = match plan {
            Ok(plan) => plan,
            Err(mut diagnostics) => {
                self.diagnostics.append(&mut diagnostics);
                return None;
            }
        };
        let start = Instant::now();
        let init = crate::init::analyze(&dae, &plan);
        self.record("initialization", start.elapsed());
        match init {
            Ok((init, mut warnings)) => {
                self.diagnostics.append(&mut warnings);
                Some(Analysis {
                    dae,
                    aliases,
                    index,
                    plan,
                    init,
                })
            }
            Err(mut diagnostics) => {
                self.diagnostics.append(&mut diagnostics);
                None
            }
        }
    }

    /// The text of `eqm explain` for `model` (see [`Session::analyze`]).
    pub fn explain(&mut self, model: Option<&str>, options: &flatten::Options, keep_aliases: bool) -> Option<String> {
        let a = self.analyze(model, options, keep_aliases)?;
        Some(crate::explain::explain(&a))
    }

    /// Analyses `model` and builds the executable programs of its simulation and of its
    /// initialization problem (a high-index model in the form [`IndexForm::Auto`] chooses).
    pub fn compile(&mut self, model: Option<&str>, options: &flatten::Options) -> Option<Compiled> {
        self.compile_with(model, options, IndexForm::Auto)
    }

    /// [`Session::compile`] with the form of a high-index model chosen by `form`.
    pub fn compile_with(
        &mut self,
        model: Option<&str>,
        options: &flatten::Options,
        form: IndexForm,
    ) -> Option<Compiled> {
        let mut analysis = self.analyze(model, options, false)?;
        let start = Instant::now();
        // The analysis is not needed afterwards: its DAEs move into the programs.
        let experiment = analysis.dae.flat.experiment;
        let mut embedding = analysis.index.as_mut().and_then(|r| r.embedding.take());
        let statically_valid =
            form == IndexForm::Auto && embedding.as_mut().is_some_and(|e| e.static_choice_is_valid());
        let choice = match (&embedding, form) {
            (None, _) => analysis.index.as_ref().map(|_| FormChoice {
                embedding: false,
                reason: "dummy derivatives (the embedding form is not available for this model)".to_string(),
            }),
            (Some(_), IndexForm::Dummy) => Some(FormChoice {
                embedding: false,
                reason: "dummy derivatives (--index-reduction dummy)".to_string(),
            }),
            (Some(_), IndexForm::Embedding) => Some(FormChoice {
                embedding: true,
                reason: "embedding form with projection (--index-reduction embedding)".to_string(),
            }),
            (Some(_), IndexForm::Auto) if statically_valid => Some(FormChoice {
                embedding: false,
                reason: "dummy derivatives: the differentiated constraints are linear with constant coefficients, so the static state choice stays valid".to_string(),
            }),
            (Some(_), IndexForm::Auto) => Some(FormChoice {
                embedding: true,
                reason: "embedding form with projection: a static state choice may become singular during the run".to_string(),
            }),
        };
        let mut choice = choice;
        let embedding_program = embedding
            .filter(|_| choice.as_ref().is_some_and(|c| c.embedding))
            .map(|e| {
                // The embedding DAE was split off before event extraction: extract its events
                // and sort it again.
                let mut dae = e.dae;
                crate::events::extract(&mut dae);
                crate::plan::analyze(&mut dae).and_then(|plan| crate::exec::ExecProgram::build(dae, &plan))
            });
        let program = match embedding_program {
            Some(Ok(program)) => Ok(program),
            // Chosen by default but not executable: the dummy-derivative form, which the
            // state-choice check guards, and `-v` says why.
            Some(Err(d)) if form == IndexForm::Auto => {
                choice = Some(FormChoice {
                    embedding: false,
                    reason: format!(
                        "dummy derivatives (the embedding form could not be compiled: {})",
                        d.first().map_or("no reason given", |d| d.message.as_str())
                    ),
                });
                crate::exec::ExecProgram::build(analysis.dae, &analysis.plan)
            }
            Some(Err(d)) => Err(d),
            None => crate::exec::ExecProgram::build(analysis.dae, &analysis.plan),
        };
        // The initialization problem is the dummy-derivative form's in both cases: it gives
        // every variable consistent values, and the states of either form are read by name.
        let init = crate::exec::ExecProgram::build(analysis.init.dae, &analysis.init.plan);
        self.record("codegen", start.elapsed());
        match (program, init) {
            (Ok(program), Ok(init)) => Some(Compiled {
                experiment,
                program,
                init,
                form: choice,
            }),
            (Err(mut a), Err(mut b)) => {
                self.diagnostics.append(&mut a);
                self.diagnostics.append(&mut b);
                None
            }
            (Err(mut d), _) | (_, Err(mut d)) => {
                self.diagnostics.append(&mut d);
                None
            }
        }
    }

    /// Adds `time` to the wall time of `stage` (stages run outside the driver, such as the
    /// simulation itself, report here so that `-v` lists them too).
    pub fn record_time(&mut self, stage: &'static str, time: Duration) {
        self.record(stage, time);
    }

    fn record(&mut self, stage: &'static str, time: Duration) {
        match self.timings.iter_mut().find(|t| t.stage == stage) {
            Some(t) => t.time += time,
            None => self.timings.push(StageTime { stage, time }),
        }
    }

    pub fn has_errors(&self) -> bool {
        diag::has_errors(&self.diagnostics)
    }

    /// Renders all diagnostics collected so far, sorted by location.
    pub fn render_diagnostics(&mut self, color: bool) -> String {
        diag::sort(&mut self.diagnostics);
        diag::render_all(&self.diagnostics, &self.sources, color)
    }
}
