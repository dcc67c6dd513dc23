//! Diagnostics as data, and their one renderer.
//!
//! Input: [`Diagnostic`] values produced by any stage (parse, resolve, flatten, structural,
//! simulation), each with a stable code from [`crate::codes`], a message and labelled spans.
//! Output: text rendered by ariadne with `file:line:col` and a labelled source excerpt, in colour
//! on a terminal and plain otherwise; a diagnostic labelling a line longer than
//! [`MAX_EXCERPT_LINE`] bytes is drawn here in ariadne's layout, its lines cut around the labels.
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
    if long_lines_labelled(diagnostic, sources) {
        return render_cut(diagnostic, sources, primary);
    }
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

/// Lines longer than this many bytes are cut in excerpts, so that a diagnostic in a file with a
/// huge line (a generated model, a megabyte-long literal) does not echo all of it.
const MAX_EXCERPT_LINE: usize = 160;

/// How many bytes of a cut line are shown on each side of a label, and at most of the label.
const EXCERPT_CONTEXT: usize = 40;

/// What stands for the bytes of a cut line left out.
const ELLIPSIS: &str = "...";

/// True when a label of `diagnostic` starts on a line longer than [`MAX_EXCERPT_LINE`].
fn long_lines_labelled(diagnostic: &Diagnostic, sources: &SourceMap) -> bool {
    diagnostic.labels.iter().any(|label| {
        let range = clamp_range(sources, label.span);
        let (_, bounds) = sources.get(label.span.file).line_of(range.start);
        bounds.len() > MAX_EXCERPT_LINE
    })
}

/// Renders a diagnostic with a label on a long line in ariadne's layout, drawn here: each label
/// on its own excerpt of its line, cut to the bytes around the label with [`ELLIPSIS`] where
/// bytes were left out, a label longer than [`EXCERPT_CONTEXT`] shown by its beginning. The
/// location in the header is the one in the file.
fn render_cut(diagnostic: &Diagnostic, sources: &SourceMap, primary: Span) -> String {
    let kind = match diagnostic.severity {
        Severity::Error => "Error",
        Severity::Warning => "Warning",
        Severity::Note => "Advice",
    };
    let lines: Vec<usize> = diagnostic
        .labels
        .iter()
        .map(|l| sources.get(l.span.file).line_col(l.span.start).0)
        .collect();
    let width = lines.iter().max().map_or(1, |n| n.to_string().len());
    let pad = " ".repeat(width + 1);
    let mut s = format!("[{}] {kind}: {}\n", diagnostic.code, diagnostic.message);
    let _ = writeln!(s, "{pad}╭─[ {} ]", sources.location(primary));
    let mut file = primary.file;
    for label in &diagnostic.labels {
        if label.span.file != file {
            file = label.span.file;
            let _ = writeln!(s, "{pad}├─[ {} ]", sources.location(label.span));
        }
        let source = sources.get(label.span.file);
        let text = source.text.as_str();
        let range = clamp_range(sources, label.span);
        // A synthetic span may split a character; the excerpt starts at its beginning.
        let start = floor_boundary(text, range.start);
        let (line, bounds) = source.line_of(start);
        let end = range.end.clamp(start, bounds.end);
        let shown_end = floor_boundary(text, end.min(start + EXCERPT_CONTEXT));
        let from = floor_boundary(text, start.saturating_sub(EXCERPT_CONTEXT).max(bounds.start));
        let to = floor_boundary(text, (shown_end + EXCERPT_CONTEXT).min(bounds.end));
        let mut excerpt = String::new();
        if from > bounds.start {
            excerpt.push_str(ELLIPSIS);
        }
        let column = excerpt.chars().count() + text[from..start].chars().count();
        excerpt.push_str(&text[from..to]);
        if to < bounds.end {
            excerpt.push_str(ELLIPSIS);
        }
        let marks = text[start..shown_end].chars().count().max(1);
        let marks = if shown_end < end {
            format!("{}{ELLIPSIS}", "^".repeat(marks))
        } else {
            "^".repeat(marks)
        };
        let _ = writeln!(s, "{pad}│");
        let _ = writeln!(s, "{:>width$} │ {excerpt}", line + 1);
        let _ = writeln!(s, "{pad}│ {}{marks} {}", " ".repeat(column), label.message);
    }
    for note in &diagnostic.notes {
        let _ = writeln!(s, "{pad}│ Note: {note}");
    }
    if let Some(help) = &diagnostic.help {
        let _ = writeln!(s, "{pad}│ Help: {help}");
    }
    let _ = writeln!(s, "{}╯", "─".repeat(width + 1));
    s
}

/// The largest character boundary of `text` at or below `offset`.
fn floor_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
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
