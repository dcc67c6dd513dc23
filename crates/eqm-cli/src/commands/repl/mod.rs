//! `eqm repl`: an interactive session over the library API.
//!
//! Input: lines, from a terminal (through `rustyline`, with history, completion and hints), from
//! standard input when it is not a terminal, or from `--script FILE`. A line starting with `:`
//! is a command (`:help` lists them); a line starting a class (`model`, `package`, `function`,
//! ...) begins a class definition that continues over the next lines until the parser finds it
//! complete, and is then added to the session, replacing an earlier typed class of the same
//! name; any other line is an expression evaluated over the last run (`max(x) - min(x)`).
//!
//! Output: results on standard output, plain text without colours or cursor control when it is
//! not a terminal; diagnostics on standard error as `eqm check` prints them, with source excerpts
//! also for typed-in text, which is named `<input N>` after the entry's number. An error never
//! ends the session; the exit code is 0 unless the script cannot be read.
//!
//! Everything about models goes through the public API of the `eqm` library (typed text through
//! `eqm::input`); this module keeps the session's state, parses lines and prints (`commands` the
//! colon commands, `runs` `:run` and `:sweep`, `help` the list of commands, `eval` expressions
//! over a run, `interactive` the editor).
//! Parameter and start values set with `:set` are kept here and given to every compilation of
//! the current model, so that `:reload` and a structural change keep them where they still apply.
//! What is not done: sweeps kept as named runs (`:sweep` prints a table), and stopping a run
//! between two output rows (Ctrl-C takes effect at the next row).

mod commands;
mod eval;
mod help;
mod interactive;
mod runs;

use crate::args::ReplArgs;
use crate::load::load;
use crate::output::{finish, usage};
use eqm::input::ClassInput;
use eqm::{Model, ModelOptions, RunReport, Session, SimulationResult};
use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// A run kept by name.
pub(crate) struct Run {
    pub(crate) name: String,
    pub(crate) result: SimulationResult,
    /// How the run went; `None` when it was stopped or failed before it reported.
    pub(crate) report: Option<RunReport>,
    /// The parameter and start values changed from the model's when it ran (`k=2`).
    pub(crate) changes: String,
    /// What a result file of the run says about it (`:save`): the model and the experiment.
    pub(crate) info: eqm::ResultFileInfo,
}

/// A class definition typed into the session.
struct Typed {
    /// `<input N>`.
    name: String,
    text: String,
    classes: Vec<String>,
}

/// The state of a session; see the module documentation.
pub(crate) struct Repl {
    /// The library directories of `--library`, searched before `EQMPATH` and `MODELICAPATH`.
    libraries: Vec<PathBuf>,
    files: Vec<PathBuf>,
    typed: Vec<Typed>,
    session: Session,
    /// The model chosen with `:use` (or the last typed-in model); `None`: the only model.
    current: Option<String>,
    /// The compiled current model, compiled when first needed.
    model: Option<Model>,
    /// Structural parameter values: the model is compiled with them.
    structural: Vec<(String, f64)>,
    /// Parameter values set without recompiling, and start values.
    parameters: Vec<(String, f64)>,
    starts: Vec<(String, f64)>,
    runs: Vec<Run>,
    /// Entries so far, for naming typed input.
    entries: usize,
    /// A class being typed: its first entry number and its text so far.
    pending: Option<(usize, String)>,
    /// Set by Ctrl-C during a run (interactive mode); the run stops at its next row.
    pub(crate) interrupted: Arc<AtomicBool>,
    timings: bool,
    /// Whether diagnostics are coloured (on a terminal without `NO_COLOR`).
    pub(crate) color: bool,
    /// The terminal's size in cells, when the session runs on one (plots fill it).
    terminal: Option<(usize, usize)>,
    /// Set by `:quit`.
    quit: bool,
}

/// Runs `eqm repl`; see the module documentation.
pub(crate) fn main(args: &ReplArgs, timings: bool) -> ExitCode {
    let mut repl = Repl::new(timings);
    repl.libraries = args.libraries.clone();
    if !args.files.is_empty() {
        repl.load_files(&args.files);
    } else {
        // Without files the session still finds the classes of the library directories.
        repl.rebuild();
    }
    if let Some(path) = &args.script {
        return match std::fs::File::open(path) {
            Ok(file) => {
                repl.run_lines(std::io::BufReader::new(file));
                ExitCode::SUCCESS
            }
            Err(e) => usage(format!("cannot read {}: {e}", path.display())),
        };
    }
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        interactive::run(&mut repl);
    } else {
        repl.run_lines(std::io::stdin().lock());
    }
    ExitCode::SUCCESS
}

impl Repl {
    fn new(timings: bool) -> Repl {
        Repl {
            libraries: Vec::new(),
            files: Vec::new(),
            typed: Vec::new(),
            session: Session::new(),
            current: None,
            model: None,
            structural: Vec::new(),
            parameters: Vec::new(),
            starts: Vec::new(),
            runs: Vec::new(),
            entries: 0,
            pending: None,
            interrupted: Arc::new(AtomicBool::new(false)),
            timings,
            color: false,
            terminal: None,
            quit: false,
        }
    }

    /// Reads and handles every line of `input` until its end or `:quit`.
    /// Bytes that are not UTF-8 are read as the replacement character, so that they are
    /// reported where they stand instead of ending the input.
    fn run_lines(&mut self, mut input: impl BufRead) {
        let mut bytes = Vec::new();
        loop {
            bytes.clear();
            match input.read_until(b'\n', &mut bytes) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    eprintln!("error: the input cannot be read any further: {e}");
                    break;
                }
            }
            let line = String::from_utf8_lossy(&bytes);
            self.handle(line.trim_end_matches(['\n', '\r']));
            if self.quit {
                return;
            }
        }
        self.end_of_input();
    }

    /// At the end of the input: a class still being typed is incomplete; its error is shown.
    fn end_of_input(&mut self) {
        if let Some((entry, text)) = self.pending.take() {
            self.complete_class(entry, text, true);
        }
    }

    /// The prompt: the current model's name.
    fn prompt(&self) -> String {
        if self.pending.is_some() {
            return "...> ".to_string();
        }
        match self.model_name() {
            Some(name) => format!("{name}> "),
            None => "eqm> ".to_string(),
        }
    }

    /// The name of the current model: the chosen one, or the only model of the session.
    fn model_name(&self) -> Option<String> {
        if let Some(name) = &self.current {
            return Some(name.clone());
        }
        let models = self.session.models();
        (models.len() == 1).then(|| models[0].name.clone())
    }

    /// Handles one line of input.
    pub(crate) fn handle(&mut self, line: &str) {
        let trimmed = line.trim();
        if let Some((entry, mut text)) = self.pending.take() {
            if trimmed.starts_with(':') {
                eprintln!("note: the class begun at <input {entry}> was abandoned for the command");
                self.handle(line);
                return;
            }
            text.push('\n');
            text.push_str(line);
            self.complete_class(entry, text, false);
            return;
        }
        if trimmed.is_empty() || trimmed.starts_with("//") {
            return;
        }
        self.entries += 1;
        if let Some(command) = trimmed.strip_prefix(':') {
            self.command(command.trim());
        } else if eqm::input::starts_class(trimmed) {
            self.complete_class(self.entries, line.to_string(), false);
        } else {
            self.expression(trimmed);
        }
    }

    /// Parses the class text begun at entry `entry`: incomplete (the parser's error is at the
    /// end of the text) keeps it pending unless `at_end`; with other errors it is reported and
    /// dropped; complete, it is added to the session and checked at once, so that its errors
    /// show now and not at the next `:run` (the class is kept, to be typed again corrected).
    fn complete_class(&mut self, entry: usize, text: String, at_end: bool) {
        let name = format!("<input {entry}>");
        let classes = match eqm::input::class_input(&text) {
            ClassInput::Complete(classes) => classes,
            ClassInput::Incomplete(_) if !at_end => {
                self.pending = Some((entry, text));
                return;
            }
            ClassInput::Incomplete(diagnostics) | ClassInput::Invalid(diagnostics) => {
                self.render_typed(&diagnostics, &name, &text);
                return;
            }
        };
        let before = self.typed.len();
        self.typed.retain(|t| !t.classes.iter().any(|c| classes.contains(c)));
        let replaced = before != self.typed.len() || self.file_defines(&classes);
        self.typed.push(Typed {
            name,
            text,
            classes: classes.clone(),
        });
        let previous = self.model_name();
        self.rebuild();
        let models: Vec<String> = self.session.models().into_iter().map(|m| m.name).collect();
        let typed_model = classes.iter().find(|c| models.contains(c));
        if let Some(model) = typed_model {
            // Changes made to a model of the same name are kept where they still apply.
            if previous.as_ref() != Some(model) {
                self.forget_changes();
            }
            self.current = Some(model.clone());
        }
        let verb = if replaced { "replaced" } else { "defined" };
        println!("{verb} {}", classes.join(", "));
        if typed_model.is_some() && !self.session.has_errors() {
            let options = self.options();
            let checked = self.session.check(self.current.as_deref(), &options);
            if self.report() && checked.is_none() {
                eprintln!("note: the class is kept; type it again to correct it");
            }
        }
    }

    /// Reads the files again and parses them with the typed classes; the compiled model is
    /// dropped (compiled again when next needed, with the changes that still apply).
    fn rebuild(&mut self) {
        let typed_classes: Vec<&String> = self.typed.iter().flat_map(|t| &t.classes).collect();
        // A file that defines a class typed since is given without that class (blanked, so
        // that its lines and columns stay), so that the typed class replaces it.
        let mut files: Vec<PathBuf> = Vec::new();
        let mut texts: Vec<(String, String)> = Vec::new();
        for path in &self.files {
            let text = std::fs::read_to_string(path).ok();
            match text.and_then(|text| eqm::input::without_classes(&text, &typed_classes)) {
                Some(blanked) => texts.push((path.display().to_string(), blanked)),
                None => files.push(path.clone()),
            }
        }
        texts.extend(self.typed.iter().map(|t| (t.name.clone(), t.text.clone())));
        // An unreadable file is reported by `load` and left out; the session keeps the others.
        let session = match load(&files, self.current.as_deref(), &texts, &self.libraries, None) {
            Ok(s) => s,
            Err(_) => {
                files.retain(|f| f.is_file());
                self.files.retain(|f| f.is_file());
                load(&files, self.current.as_deref(), &texts, &self.libraries, None).unwrap_or_default()
            }
        };
        self.session = session;
        self.model = None;
        self.report();
    }

    /// Whether a loaded file defines one of `classes` at its top level.
    fn file_defines(&self, classes: &[String]) -> bool {
        let names: Vec<&String> = classes.iter().collect();
        self.files.iter().any(|path| {
            std::fs::read_to_string(path)
                .ok()
                .is_some_and(|text| eqm::input::without_classes(&text, &names).is_some())
        })
    }

    /// Adds `files` to the session.
    fn load_files(&mut self, files: &[PathBuf]) {
        for file in files {
            if let Err(e) = std::fs::metadata(file) {
                eprintln!("error: cannot read {}: {e}", file.display());
                continue;
            }
            if !self.files.contains(file) {
                self.files.push(file.clone());
            }
        }
        self.rebuild();
        if let Some(current) = &self.current
            && !self.session.models().iter().any(|m| m.name == *current)
        {
            self.current = None;
        }
    }

    /// Forgets parameter and start values set for the previous model.
    fn forget_changes(&mut self) {
        self.structural.clear();
        self.parameters.clear();
        self.starts.clear();
        self.model = None;
    }

    /// Prints the diagnostics of typed text that never became part of the session (a class
    /// with syntax errors, an expression), with excerpts of the text under the name `name`.
    fn render_typed(&self, diagnostics: &[eqm::Diagnostic], name: &str, text: &str) {
        eprint!("{}", eqm::input::render_typed(diagnostics, name, text, self.color));
    }

    /// Prints the session's diagnostics as the command line does, and forgets them.
    fn report(&mut self) -> bool {
        let errors = self.session.has_errors();
        finish(&mut self.session, self.color);
        self.session.take_diagnostics();
        errors
    }

    /// The options every stage is given: every parameter value set so far.
    fn options(&self) -> ModelOptions {
        let mut parameters = self.structural.clone();
        parameters.extend(self.parameters.iter().cloned());
        ModelOptions {
            parameters,
            ..ModelOptions::default()
        }
    }

    /// The compiled current model, compiled now when needed with the structural values, then
    /// given the other changes (those that no longer apply are dropped with a note).
    fn compiled(&mut self) -> Option<&mut Model> {
        if self.model.is_none() {
            let options = ModelOptions {
                parameters: self.structural.clone(),
                ..ModelOptions::default()
            };
            let model = if self.session.has_errors() {
                None
            } else {
                self.session.compile(self.current.as_deref(), &options)
            };
            self.report();
            let mut model = model?;
            self.parameters
                .retain(|(name, value)| match model.set_parameter(name, *value) {
                    Ok(()) => true,
                    Err(_) => {
                        eprintln!("note: `{name}` = {value} no longer applies and was dropped");
                        false
                    }
                });
            self.starts.retain(|(name, value)| match model.set_start(name, *value) {
                Ok(()) => true,
                Err(_) => {
                    eprintln!("note: the start value {name} = {value} no longer applies and was dropped");
                    false
                }
            });
            self.model = Some(model);
        }
        self.model.as_mut()
    }

    /// The run named `name` (`last`: the latest).
    fn run_named(&self, name: &str) -> Option<&Run> {
        if name == "last" {
            return self.runs.last();
        }
        self.runs.iter().rev().find(|r| r.name == name)
    }

    /// Evaluates an expression over the last run.
    fn expression(&mut self, text: &str) {
        let name = format!("<input {}>", self.entries);
        let text = &eval::spell_final(text);
        let expr = match eqm::input::parse_expression(text) {
            Ok(expr) => expr,
            Err(diagnostics) => {
                self.render_typed(&diagnostics, &name, text);
                eprintln!(
                    "(a line is a `:command`, the start of a class, or an expression; `:help` lists the commands)"
                );
                return;
            }
        };
        let parameters: Vec<(String, f64)> = match &self.model {
            Some(model) => model
                .parameters()
                .into_iter()
                .filter_map(|p| p.value.map(|v| (p.name, v)))
                .collect(),
            None => Vec::new(),
        };
        let scope = eval::Scope {
            run: self.runs.last().map(|r| &r.result),
            parameters: &parameters,
            text,
        };
        match scope.eval(&expr) {
            Ok(value) => println!("{}", eqm::format_number(value)),
            Err(message) => eprintln!("error: {name}: {message}"),
        }
    }
}
