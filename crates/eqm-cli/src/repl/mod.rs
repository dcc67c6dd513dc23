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
//! Everything about models goes through the `eqm` library; this module parses lines and prints
//! (`commands` the colon commands, `eval` expressions over a run, `interactive` the editor).
//! Parameter and start values set with `:set` are kept here and given to every compilation of
//! the current model, so that `:reload` and a structural change keep them where they still apply.
//! What is not done: sweeps kept as named runs (`:sweep` prints a table), and stopping a run
//! between two output rows (Ctrl-C takes effect at the next row).

mod commands;
mod eval;
mod interactive;

use crate::{finish, load};
use eqm::{Model, ModelOptions, RunReport, Session, SimulationResult};
use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Arguments of `eqm repl`.
#[derive(clap::Args)]
pub(crate) struct ReplArgs {
    /// The `.eqm` files to load at the start.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Run the commands of this file instead of reading them from standard input.
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
}

/// A run kept by name.
pub(crate) struct Run {
    pub(crate) name: String,
    pub(crate) result: SimulationResult,
    /// How the run went; `None` when it was stopped or failed before it reported.
    pub(crate) report: Option<RunReport>,
    /// The parameter and start values changed from the model's when it ran (`k=2`).
    pub(crate) changes: String,
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
    if !args.files.is_empty() {
        repl.load_files(&args.files);
    }
    if let Some(path) = &args.script {
        return match std::fs::File::open(path) {
            Ok(file) => {
                repl.run_lines(std::io::BufReader::new(file));
                ExitCode::SUCCESS
            }
            Err(e) => crate::usage(format!("cannot read {}: {e}", path.display())),
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
        } else if starts_class(trimmed) {
            self.complete_class(self.entries, line.to_string(), false);
        } else {
            self.expression(trimmed);
        }
    }

    /// Parses the class text begun at entry `entry`: incomplete (the parser's error is at the
    /// end of the text) keeps it pending unless `at_end`; with other errors it is reported and
    /// dropped; complete, it is added to the session.
    fn complete_class(&mut self, entry: usize, text: String, at_end: bool) {
        use eqm::pipeline::syntax::{FileId, parse_file};
        let name = format!("<input {entry}>");
        let (parsed, diagnostics) = parse_file(FileId(0), &text);
        if eqm::pipeline::diag::has_errors(&diagnostics) {
            let end = text.trim_end().len();
            let incomplete = diagnostics
                .iter()
                .filter(|d| d.is_error())
                .all(|d| d.primary_span().is_some_and(|s| s.start as usize >= end));
            if incomplete && !at_end {
                self.pending = Some((entry, text));
                return;
            }
            self.render_typed(&diagnostics, name, &text);
            return;
        }
        let classes: Vec<String> = parsed.classes.iter().map(|c| c.name.name.clone()).collect();
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
        if let Some(model) = classes.iter().find(|c| models.contains(c)) {
            // Changes made to a model of the same name are kept where they still apply.
            if previous.as_ref() != Some(model) {
                self.forget_changes();
            }
            self.current = Some(model.clone());
        }
        let verb = if replaced { "replaced" } else { "defined" };
        println!("{verb} {}", classes.join(", "));
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
            match text.and_then(|text| without_classes(&text, &typed_classes)) {
                Some(blanked) => texts.push((path.display().to_string(), blanked)),
                None => files.push(path.clone()),
            }
        }
        texts.extend(self.typed.iter().map(|t| (t.name.clone(), t.text.clone())));
        // An unreadable file is reported by `load` and left out; the session keeps the others.
        let session = match load(&files, self.current.as_deref(), &texts) {
            Ok(s) => s,
            Err(_) => {
                files.retain(|f| f.is_file());
                self.files.retain(|f| f.is_file());
                load(&files, self.current.as_deref(), &texts).unwrap_or_default()
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
                .is_some_and(|text| without_classes(&text, &names).is_some())
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
    fn render_typed(&self, diagnostics: &[eqm::Diagnostic], name: String, text: &str) {
        let mut map = eqm::SourceMap::new();
        map.add(name, text);
        eprint!("{}", eqm::pipeline::diag::render_all(diagnostics, &map, self.color));
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
        use eqm::pipeline::syntax::{FileId, parse_expr};
        let name = format!("<input {}>", self.entries);
        let text = &eval::spell_final(text);
        let (expr, diagnostics) = parse_expr(FileId(0), text);
        let Some(expr) = expr.filter(|_| !eqm::pipeline::diag::has_errors(&diagnostics)) else {
            self.render_typed(&diagnostics, name, text);
            eprintln!("(a line is a `:command`, the start of a class, or an expression; `:help` lists the commands)");
            return;
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

/// `text` with its top-level classes named in `classes` replaced by spaces (line breaks kept,
/// so that the rest keeps its lines and columns); `None` when it defines none of them or does
/// not parse.
fn without_classes(text: &str, classes: &[&String]) -> Option<String> {
    use eqm::pipeline::syntax::{FileId, parse_file};
    let (parsed, diagnostics) = parse_file(FileId(0), text);
    if eqm::pipeline::diag::has_errors(&diagnostics) {
        return None;
    }
    let spans: Vec<std::ops::Range<usize>> = parsed
        .classes
        .iter()
        .filter(|c| classes.contains(&&c.name.name))
        .map(|c| {
            // The class's `;` ends it too.
            let range = c.span.range();
            let after = &text[range.end.min(text.len())..];
            let gap = after.len() - after.trim_start().len();
            let end = if after[gap..].starts_with(';') {
                range.end + gap + 1
            } else {
                range.end
            };
            range.start..end
        })
        .collect();
    if spans.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        let blank = spans.iter().any(|r| r.contains(&i)) && c != '\n';
        // A blanked character keeps its width in bytes, so that later offsets stay.
        if blank {
            out.extend(std::iter::repeat_n(' ', c.len_utf8()));
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// Whether `line` begins a class definition.
fn starts_class(line: &str) -> bool {
    const STARTS: [&str; 14] = [
        "model",
        "package",
        "function",
        "connector",
        "record",
        "block",
        "type",
        "class",
        "partial",
        "encapsulated",
        "expandable",
        "operator",
        "impure",
        "pure",
    ];
    let first = line
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .next()
        .unwrap_or("");
    STARTS.contains(&first)
}
