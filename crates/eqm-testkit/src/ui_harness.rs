//! Inline diagnostic expectations for UI tests of any compiler stage.
//!
//! A test file marks each line that must get a diagnostic with a trailing comment naming the
//! severity, the code and a substring of the message:
//!
//! ```text
//! x = a < b < c;   // error[E0110]: unexpected `<`
//! ```
//!
//! Several expectations on one line are separated by further `//`:
//! `// error[E0107]: missing // error[E0110]: unexpected`. [`check_annotations`] requires a
//! one-to-one match: every expectation is met by a diagnostic whose primary span starts on that
//! line with that severity, code and message substring, and every diagnostic located in the file
//! is expected. Expectations are found textually, so they also work inside an unterminated string
//! or block comment, where the lexer would not see a comment.
//!
//! [`render_snapshot`] renders source and diagnostics in one text (Gleam style) for insta.
//!
//! Used by the UI tests of the syntax, of flattening and of the compiler's passes.

use eqm_diag::source::SourceMap;
use eqm_diag::{self as diag, Diagnostic, Severity};
use std::fmt::Write as _;

/// One expected diagnostic: `// error[E0110]: unexpected` on line `line` (one-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    pub line: usize,
    pub severity: Severity,
    pub code: String,
    pub message: String,
}

/// Reads every expectation in `text`. Malformed annotations (an unknown severity, a missing
/// `]:`) panic, so that a typo in a test cannot silently turn into "expect nothing".
pub fn parse_annotations(text: &str) -> Vec<Expectation> {
    let mut expectations = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = find_marker(rest) {
            let annotation = &rest[at + 2..];
            let end = annotation.find("//").unwrap_or(annotation.len());
            expectations.push(parse_one(annotation[..end].trim(), index + 1));
            rest = &annotation[end..];
        }
    }
    expectations
}

/// Finds the next `// error[`, `// warning[` or `// note[` in a line.
fn find_marker(line: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(offset) = line[from..].find("//") {
        let at = from + offset;
        let after = line[at + 2..].trim_start();
        if ["error[", "warning[", "note["].iter().any(|m| after.starts_with(m)) {
            return Some(at);
        }
        from = at + 2;
    }
    None
}

fn parse_one(annotation: &str, line: usize) -> Expectation {
    let malformed =
        || -> ! { panic!("line {line}: malformed expectation `{annotation}`, expected `error[E0000]: message`") };
    let (severity, rest) = annotation.split_once('[').unwrap_or_else(|| malformed());
    let severity = match severity.trim() {
        "error" => Severity::Error,
        "warning" => Severity::Warning,
        "note" => Severity::Note,
        _ => malformed(),
    };
    let (code, message) = rest.split_once("]:").unwrap_or_else(|| malformed());
    let message = message.trim();
    if code.is_empty() || message.is_empty() {
        malformed();
    }
    Expectation {
        line,
        severity,
        code: code.to_string(),
        message: message.to_string(),
    }
}

/// Checks `diagnostics` against the expectations written in `text`, which is the source file
/// named `file_name` in `sources`. Panics with a readable report listing every expectation that
/// was not met and every diagnostic that was not expected (rendered with its source excerpt).
///
/// Diagnostics located in other files, or in no file, count as unexpected: a UI test states
/// everything its input produces.
pub fn check_annotations(file_name: &str, text: &str, diagnostics: Vec<Diagnostic>, sources: &SourceMap) {
    let expectations = parse_annotations(text);
    let line_of = |d: &Diagnostic| -> Option<usize> {
        let span = d.primary_span()?;
        let file = sources.get(span.file);
        (file.name == file_name).then(|| file.line_col(span.start).0)
    };
    let mut unmatched: Vec<Option<Diagnostic>> = diagnostics.into_iter().map(Some).collect();
    let mut missing = Vec::new();
    for expectation in &expectations {
        let found = unmatched.iter_mut().find(|slot| {
            slot.as_ref().is_some_and(|d| {
                line_of(d) == Some(expectation.line)
                    && d.severity == expectation.severity
                    && d.code == expectation.code
                    && d.message.contains(&expectation.message)
            })
        });
        match found {
            Some(slot) => *slot = None,
            None => missing.push(expectation),
        }
    }
    let unexpected: Vec<Diagnostic> = unmatched.into_iter().flatten().collect();
    if missing.is_empty() && unexpected.is_empty() {
        return;
    }
    let mut report = format!("{file_name}: diagnostics differ from the annotations\n");
    for e in &missing {
        let _ = writeln!(
            report,
            "\nmissing on line {}: {}[{}]: {}",
            e.line,
            severity_word(e.severity),
            e.code,
            e.message
        );
    }
    for d in &unexpected {
        let line = line_of(d).map_or("another file".to_string(), |l| format!("line {l}"));
        let _ = writeln!(
            report,
            "\nunexpected on {line}: {}[{}]: {}",
            severity_word(d.severity),
            d.code,
            d.message
        );
        report.push_str(&diag::render(d, sources, false));
    }
    panic!("{report}");
}

/// Source and rendered diagnostics in one snapshot text, so a reviewer sees both side by side.
pub fn render_snapshot(text: &str, diagnostics: &[Diagnostic], sources: &SourceMap) -> String {
    let mut out = String::from("----- SOURCE CODE\n");
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("----- DIAGNOSTICS\n");
    out.push_str(&diag::render_all(diagnostics, sources, false));
    out
}

fn severity_word(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}
