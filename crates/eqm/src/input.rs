//! Text a user types into a front end outside any file: a class entered line by line, an
//! expression over results, a misspelt name.
//!
//! Input: the text typed so far. Output: whether it is a complete class and which classes it
//! defines ([`class_input`]), an expression's syntax tree ([`parse_expression`], its types in
//! [`expr`]), a file's text without some of its classes ([`without_classes`]), the rendering
//! of diagnostics about typed text that belongs to no session ([`render_typed`]), and the
//! closest of some names ([`did_you_mean`]). Nothing here keeps state, reads or prints: the
//! REPL owns the entries, this module only answers questions about their text.

use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, SourceMap};

/// The closest candidate to a misspelt name, if it is close enough to be a plausible typo
/// (ranked by edit distance, then by how common the name is).
pub use eqm_diag::did_you_mean;

/// The syntax tree of an expression ([`parse_expression`]), for a front end that evaluates
/// expressions over results itself.
pub mod expr {
    pub use eqm_syntax::ast::{BinaryOp, Expr, ExprKind, Subscript, UnaryOp};
}

/// What a typed text is as a class definition.
#[derive(Debug)]
pub enum ClassInput {
    /// One or more complete classes, by name, without syntax errors.
    Complete(Vec<String>),
    /// The start of a class: every syntax error is at the end of the text, so more lines may
    /// complete it. The diagnostics say what is missing, should the input end here.
    Incomplete(Vec<Diagnostic>),
    /// A text with a syntax error before its end.
    Invalid(Vec<Diagnostic>),
}

/// Whether `line` begins a class definition (its first word is a class keyword or a prefix
/// of one: `model`, `partial`, `function`, ...).
pub fn starts_class(line: &str) -> bool {
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
        .trim_start()
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .next()
        .unwrap_or("");
    STARTS.contains(&first)
}

/// Parses `text` as class definitions; see [`ClassInput`]. The diagnostics' locations are in
/// `text`, for [`render_typed`].
pub fn class_input(text: &str) -> ClassInput {
    let (parsed, diagnostics) = eqm_syntax::parse_file(FileId(0), text);
    if !eqm_diag::has_errors(&diagnostics) {
        return ClassInput::Complete(parsed.classes.iter().map(|c| c.name.name.clone()).collect());
    }
    let end = text.trim_end().len();
    let at_end = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .all(|d| d.primary_span().is_some_and(|s| s.start as usize >= end));
    if at_end {
        ClassInput::Incomplete(diagnostics)
    } else {
        ClassInput::Invalid(diagnostics)
    }
}

/// Parses `text` as one expression, or gives the diagnostics of its syntax errors (located in
/// `text`, for [`render_typed`]).
pub fn parse_expression(text: &str) -> Result<expr::Expr, Vec<Diagnostic>> {
    let (expr, diagnostics) = eqm_syntax::parse_expr(FileId(0), text);
    match expr {
        Some(expr) if !eqm_diag::has_errors(&diagnostics) => Ok(expr),
        _ => Err(diagnostics),
    }
}

/// Renders `diagnostics` about the typed `text` (from [`class_input`] or
/// [`parse_expression`]) with excerpts of it, the text named `name` (`<input 3>`), in colour
/// when `color`.
pub fn render_typed(diagnostics: &[Diagnostic], name: &str, text: &str, color: bool) -> String {
    let mut map = SourceMap::new();
    map.add(name.to_string(), text.to_string());
    eqm_diag::render_all(diagnostics, &map, color)
}

/// `text` with its top-level classes named in `classes` replaced by spaces (line breaks kept,
/// so that the rest keeps its lines and columns); `None` when it defines none of them or does
/// not parse. A front end gives a file so when a class typed since replaces one of its classes.
pub fn without_classes(text: &str, classes: &[&String]) -> Option<String> {
    let (parsed, diagnostics) = eqm_syntax::parse_file(FileId(0), text);
    if eqm_diag::has_errors(&diagnostics) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_is_complete_incomplete_or_invalid() {
        assert!(matches!(class_input("model M\n  Real x;\nend M;"), ClassInput::Complete(c) if c == ["M"]));
        assert!(matches!(class_input("model M\n  Real x;"), ClassInput::Incomplete(_)));
        assert!(matches!(
            class_input("model M\n  Real x = ;\nend M;"),
            ClassInput::Invalid(_)
        ));
        assert!(starts_class("partial model M") && !starts_class("max(x)"));
    }

    #[test]
    fn an_expression_parses_or_says_why_not() {
        assert!(parse_expression("max(x) - 1").is_ok());
        let errors = parse_expression("1 +").unwrap_err();
        assert!(render_typed(&errors, "<input 1>", "1 +", false).contains("<input 1>"));
    }

    #[test]
    fn a_replaced_class_is_blanked_in_place() {
        let text = "model A end A;\nmodel B end B;\n";
        let blanked = without_classes(text, &[&"A".to_string()]).unwrap();
        assert_eq!(blanked.len(), text.len());
        assert!(!blanked.contains("model A") && blanked.contains("model B"));
        assert!(without_classes(text, &[&"C".to_string()]).is_none());
    }
}
