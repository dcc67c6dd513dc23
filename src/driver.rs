//! Runs the pipeline stages in order for the CLI and the REPL.
//!
//! Input: source texts already read by the caller (the CLI reads files; tests pass strings).
//! Output: the products of each stage plus all diagnostics, and per-stage wall times for `-v`.
//! This module sequences stages; it implements none of them and does no IO itself.

use crate::diag::{self, Diagnostic};
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
#[derive(Debug, Default)]
pub struct Session {
    pub sources: SourceMap,
    pub files: Vec<(FileId, ast::StoredDefinition)>,
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

    fn record(&mut self, stage: &'static str, time: Duration) {
        match self.timings.iter_mut().find(|t| t.stage == stage) {
            Some(t) => t.time += time,
            None => self.timings.push(StageTime { stage, time }),
        }
    }

    /// Reports when no parsed file defines `model` (a dotted path through nested classes).
    ///
    /// This is a syntactic lookup; name resolution with the library path replaces it.
    pub fn check_model_exists(&mut self, model: &str) {
        let path: Vec<&str> = model.split('.').collect();
        let found = self.files.iter().any(|(_, f)| find_class(&f.classes, &path).is_some());
        if !found {
            let mut top: Vec<&str> = self
                .files
                .iter()
                .flat_map(|(_, f)| f.classes.iter().map(|c| c.name.name.as_str()))
                .collect();
            top.sort_unstable();
            let mut d = Diagnostic {
                code: "E0201",
                severity: diag::Severity::Error,
                message: format!("no model named `{model}` in the given files"),
                labels: Vec::new(),
                notes: Vec::new(),
                help: None,
            };
            if !top.is_empty() {
                d = d.with_note(format!("the files define: {}", top.join(", ")));
            }
            self.diagnostics.push(d);
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

fn find_class<'a>(classes: &'a [ast::ClassDef], path: &[&str]) -> Option<&'a ast::ClassDef> {
    let (first, rest) = path.split_first()?;
    let class = classes.iter().find(|c| c.name.name == *first)?;
    if rest.is_empty() {
        return Some(class);
    }
    let ast::ClassBody::Long { sections, .. } = &class.body else {
        return None;
    };
    sections.iter().find_map(|s| match s {
        ast::Section::Elements { elements, .. } => elements.iter().find_map(|e| match e {
            ast::Element::Class(c) if c.name.name == rest[0] => find_class(std::slice::from_ref(c), rest),
            _ => None,
        }),
        _ => None,
    })
}
