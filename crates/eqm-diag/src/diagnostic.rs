//! Diagnostics as data, and their one renderer.
//!
//! Input: [`Diagnostic`] values produced by any stage (parse, resolve, flatten, structural,
//! simulation), each with a stable code from [`crate::codes`], a message and labelled spans.
//! Output: text rendered by ariadne with `file:line:col` and a labelled source excerpt, in colour
//! on a terminal and plain otherwise.
//! This is the only module that knows ariadne; stages never format diagnostics themselves.

use crate::source::{FileId, SourceMap, Span};
use std::fmt::Write as _;

/// How bad a diagnostic is. Errors make `eqm` exit with code 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

/// A span with a message explaining its part in the diagnostic.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub span: Span,
    pub message: String,
    /// The primary label marks where the problem is; secondary labels give context.
    pub primary: bool,
}

/// One user-facing message with a stable code (`E0101`, defined in [`crate::codes`]), located by at
/// least one span.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Option<String>,
}

impl Diagnostic {
    /// An error with a primary label. `code` must be registered as an error in [`crate::codes`]
    /// (checked in debug builds).
    pub fn error(code: &'static str, message: impl Into<String>, span: Span, label: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Error, code, message.into(), span, label.into())
    }

    /// A warning with a primary label. `code` must be registered as a warning in
    /// [`crate::codes`] (checked in debug builds).
    pub fn warning(code: &'static str, message: impl Into<String>, span: Span, label: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Warning, code, message.into(), span, label.into())
    }

    fn new(severity: Severity, code: &'static str, message: String, span: Span, label: String) -> Diagnostic {
        debug_assert!(
            crate::codes::describe(code).is_some_and(|info| info.severity == severity),
            "diagnostic code `{code}` is not registered as {severity:?} in eqm_diag::codes::CODES"
        );
        Diagnostic {
            code,
            severity,
            message,
            labels: vec![Label {
                span,
                message: label,
                primary: true,
            }],
            notes: Vec::new(),
            help: None,
        }
    }

    /// Adds a secondary label.
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The span of the primary label (the first label if none is marked primary).
    pub fn primary_span(&self) -> Option<Span> {
        self.labels
            .iter()
            .find(|l| l.primary)
            .or_else(|| self.labels.first())
            .map(|l| l.span)
    }
}

/// True when any diagnostic is an error.
pub fn has_errors(diagnostics: &[Diagnostic]) -> bool {
    diagnostics.iter().any(Diagnostic::is_error)
}

/// Sorts diagnostics by location (file, offset) so output order never depends on stage internals.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(|d| d.primary_span().map(|s| (s.file, s.start, s.end)));
}

/// Renders diagnostics to text. Colour is used only when `color` is true (a terminal).
pub fn render_all(diagnostics: &[Diagnostic], sources: &SourceMap, color: bool) -> String {
    let mut cache = AriadneCache::new(sources);
    let mut out = String::new();
    for diagnostic in diagnostics {
        out.push_str(&render_one(diagnostic, &mut cache, color));
    }
    out
}

/// Renders one diagnostic.
pub fn render(diagnostic: &Diagnostic, sources: &SourceMap, color: bool) -> String {
    render_one(diagnostic, &mut AriadneCache::new(sources), color)
}

fn render_one(diagnostic: &Diagnostic, cache: &mut AriadneCache<'_>, color: bool) -> String {
    use ariadne::{Color, Config, IndexType, Label as ALabel, Report, ReportKind};
    let sources = cache.sources;
    let kind = match diagnostic.severity {
        Severity::Error => ReportKind::Error,
        Severity::Warning => ReportKind::Warning,
        Severity::Note => ReportKind::Advice,
    };
    let Some(primary) = diagnostic.primary_span() else {
        // A diagnostic without a location (rare: for example an empty command line) has no excerpt.
        let mut s = format!(
            "{}[{}]: {}\n",
            severity_word(diagnostic.severity),
            diagnostic.code,
            diagnostic.message
        );
        for note in &diagnostic.notes {
            let _ = writeln!(s, "  = note: {note}");
        }
        if let Some(help) = &diagnostic.help {
            let _ = writeln!(s, "  = help: {help}");
        }
        return s;
    };
    let id = primary.file.0 as usize;
    let mut builder = Report::build(kind, (id, clamp_range(sources, primary)))
        .with_code(diagnostic.code)
        .with_message(&diagnostic.message)
        .with_config(Config::default().with_color(color).with_index_type(IndexType::Byte));
    for (order, label) in diagnostic.labels.iter().enumerate() {
        let mut l =
            ALabel::new((label.span.file.0 as usize, clamp_range(sources, label.span))).with_order(order as i32);
        if !label.message.is_empty() {
            l = l.with_message(&label.message);
        }
        if color {
            l = l.with_color(if label.primary { Color::Red } else { Color::Blue });
        }
        builder = builder.with_label(l);
    }
    for note in &diagnostic.notes {
        builder = builder.with_note(note);
    }
    if let Some(help) = &diagnostic.help {
        builder = builder.with_help(help);
    }
    let mut buf = Vec::new();
    if builder.finish().write(&mut *cache, &mut buf).is_err() {
        // Rendering into memory only fails on a cache miss, which cannot happen for spans from
        // this source map; fall back to a plain line rather than losing the diagnostic.
        return format!(
            "{}[{}]: {} at {}\n",
            severity_word(diagnostic.severity),
            diagnostic.code,
            diagnostic.message,
            sources.location(primary)
        );
    }
    String::from_utf8_lossy(&buf).into_owned()
}

fn severity_word(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

/// Keeps a span inside its file so that a stale or synthetic span can never make ariadne panic.
fn clamp_range(sources: &SourceMap, span: Span) -> std::ops::Range<usize> {
    let len = sources.get(span.file).text.len();
    let start = (span.start as usize).min(len);
    let end = (span.end as usize).clamp(start, len);
    start..end
}

/// Lazily builds ariadne's line tables, once per file per rendering run.
struct AriadneCache<'a> {
    sources: &'a SourceMap,
    built: Vec<Option<ariadne::Source<&'a str>>>,
}

impl<'a> AriadneCache<'a> {
    fn new(sources: &'a SourceMap) -> Self {
        AriadneCache {
            sources,
            built: (0..sources.len()).map(|_| None).collect(),
        }
    }
}

impl<'a> ariadne::Cache<usize> for AriadneCache<'a> {
    type Storage = &'a str;

    fn fetch(&mut self, id: &usize) -> Result<&ariadne::Source<&'a str>, impl std::fmt::Debug> {
        let sources = self.sources;
        match self.built.get_mut(*id) {
            Some(slot) => {
                Ok(&*slot.get_or_insert_with(|| ariadne::Source::from(sources.get(FileId(*id as u32)).text.as_str())))
            }
            None => Err(format!("no source file {id}")),
        }
    }

    fn display<'b>(&self, id: &'b usize) -> Option<impl std::fmt::Display + 'b> {
        (*id < self.sources.len()).then(|| self.sources.get(FileId(*id as u32)).name.clone())
    }
}
