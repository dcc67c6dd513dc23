//! Syntax errors as diagnostics: what was expected in words, hints for the mistakes users make
//! most, and the notes on text skipped by error recovery.
//!
//! Input: lalrpop's parse errors and recoveries. Output: `E0101`, `E0110` and `E0111`
//! diagnostics, and a record of each syntax error for the `;` repair. A syntax error found while
//! the recovery from the previous one is still skipping is recorded but not shown, since it
//! follows from that one. It deliberately repairs nothing itself (the parser driver does).

use super::{Builder, SyntaxError};
use crate::lexer::{LexicalError, Token};
use eqm_diag::Diagnostic;
use lalrpop_util::{ErrorRecovery, ParseError};

type TokenError<'src> = ParseError<usize, Token<'src>, LexicalError>;

impl<'src> Builder<'src> {
    /// Reports an error the grammar recovered from, as soon as it recovered (the grammar then
    /// skips tokens up to its resynchronisation point and calls [`Builder::skipped_to`]).
    pub fn recover(&mut self, recovery: ErrorRecovery<usize, Token<'_>, LexicalError>) {
        let dropped_end = recovery.dropped_tokens.last().map(|t| t.2);
        self.report(recovery.error, dropped_end);
    }

    /// Called when recovery from the last error has skipped the text up to `end`: notes on that
    /// error's diagnostic that errors in the skipped lines are not reported. Skipping within a
    /// line hides nothing worth a note.
    pub fn skipped_to(&mut self, end: usize) {
        if let Some((index, error_end)) = self.recovering.take()
            && self
                .text
                .get(error_end..end)
                .is_some_and(|skipped| skipped.contains('\n'))
            && let Some(d) = self.diagnostics.get_mut(index)
            && d.notes.is_empty()
        {
            d.notes
                .push("the parser skipped ahead to continue; errors in the skipped text are not reported".to_string());
        }
    }

    /// Reports a syntax error. An error found while the recovery from the previous one is still
    /// skipping (it stopped at a token its recovery point does not accept, such as the `;` of
    /// `if a > b x = 1;`, which lacks `then`) is a consequence of that error: it is recorded for
    /// the `;` repair but not shown.
    pub(super) fn report(&mut self, error: TokenError<'_>, dropped_end: Option<usize>) {
        let cascade = self.recovering.is_some();
        let diagnostic = self.diagnose(error, dropped_end);
        if cascade {
            return;
        }
        self.recovering = diagnostic
            .primary_span()
            .map(|span| (self.diagnostics.len(), span.end as usize));
        self.diagnostics.push(diagnostic);
    }

    fn diagnose(&mut self, error: TokenError<'_>, dropped_end: Option<usize>) -> Diagnostic {
        match error {
            ParseError::UnrecognizedToken {
                token: (l, token, r),
                expected,
            } => {
                self.syntax_errors.push(SyntaxError {
                    at: l,
                    wants_semicolon: expected.iter().any(|e| e == "\";\""),
                    at_end_of_file: false,
                    closes_list: closes_list(&token),
                });
                let what = describe_expected(&expected);
                let mut d = Diagnostic::error(
                    "E0110",
                    format!(
                        "unexpected {token}{}",
                        what.as_deref().map(|w| format!(", expected {w}")).unwrap_or_default()
                    ),
                    self.span(l, r),
                    match &what {
                        Some(w) => format!("expected {w}"),
                        None => "not expected here".to_string(),
                    },
                );
                if let Some(help) = hint_for(&token, &expected) {
                    d = d.with_help(help);
                }
                // Skipping within a line hides nothing; skipping lines may hide further errors.
                if let Some(end) = dropped_end
                    && self.text.get(r..end).is_some_and(|skipped| skipped.contains('\n'))
                {
                    d = d
                        .with_note("the parser skipped ahead to continue; errors in the skipped text are not reported");
                }
                d
            }
            ParseError::UnrecognizedEof { location, expected } => {
                self.syntax_errors.push(SyntaxError {
                    at: location,
                    wants_semicolon: expected.iter().any(|e| e == "\";\""),
                    at_end_of_file: true,
                    closes_list: false,
                });
                let what = describe_expected(&expected);
                Diagnostic::error(
                    "E0111",
                    format!(
                        "unexpected end of file{}",
                        what.as_deref().map(|w| format!(", expected {w}")).unwrap_or_default()
                    ),
                    self.span(location, location),
                    "the file ends here",
                )
                .with_help("a class `model M ... end M;` may be unfinished")
            }
            ParseError::ExtraToken { token: (l, token, r) } => Diagnostic::error(
                "E0110",
                format!("unexpected {token}"),
                self.span(l, r),
                "not expected here",
            ),
            ParseError::InvalidToken { location } => Diagnostic::error(
                "E0101",
                "invalid token",
                self.span(location, location + 1),
                "this is not part of the EQM language",
            ),
            ParseError::User { error } => match error {},
        }
    }
}

/// Turns lalrpop's list of expected terminals into words: "an expression", "`;` or `,`".
///
/// Terminals are grouped (expression starts, operators, declaration starts) and the optional
/// trailers (description strings, annotations) are left out, so the message names what the user
/// most likely forgot instead of listing forty tokens.
fn describe_expected(expected: &[String]) -> Option<String> {
    let names: Vec<&str> = expected.iter().map(|s| s.trim_matches('"')).collect();
    if names.is_empty() {
        return None;
    }
    let has = |n: &str| names.contains(&n);
    const EXPRESSION_START: &[&str] = &[
        "integer",
        "real",
        "string",
        "true",
        "false",
        "(",
        "{",
        "[",
        "-",
        "+",
        ".-",
        ".+",
        "not",
        "if",
        "initial",
        ".",
        "malformed number",
        "identifier",
        "end-index",
        "function",
    ];
    const OPERATORS: &[&str] = &[
        "and", "or", "+", "-", "*", "/", "^", ".+", ".-", ".*", "./", ".^", "==", "<>", "<", "<=", ">", ">=", ":",
    ];
    const DECLARATION_START: &[&str] = &[
        "model",
        "block",
        "connector",
        "expandable",
        "operator",
        "package",
        "function",
        "record",
        "type",
        "class",
        "extends",
        "import",
        "flow",
        "potential",
        "parameter",
        "constant",
        "discrete",
        "input",
        "output",
        "final",
        "encapsulated",
        "partial",
        "replaceable",
        "redeclare",
    ];
    const TRAILERS: &[&str] = &["string", "annotation"];
    let expression_start = has("integer") && has("(") && has("identifier");
    // Signs start expressions too; they only make an operator expected when other operators do.
    let operator = names
        .iter()
        .filter(|n| OPERATORS.contains(n) && !(expression_start && EXPRESSION_START.contains(n)))
        .count()
        >= 2;
    let declaration_start = has("model") && has("extends");
    let mut specific: Vec<String> = Vec::new();
    let mut trailers: Vec<String> = Vec::new();
    for name in &names {
        let grouped = (expression_start && EXPRESSION_START.contains(name))
            || (operator && OPERATORS.contains(name))
            || (declaration_start && DECLARATION_START.contains(name));
        if grouped {
            continue;
        }
        let text = match *name {
            "identifier" => "a name".to_string(),
            "string" => "a description string".to_string(),
            "annotation" => "an annotation".to_string(),
            // `end` in a subscript is only made so by the lexer; never ask for it.
            "malformed number" | "end-index" => continue,
            other => format!("`{other}`"),
        };
        if TRAILERS.contains(name) {
            trailers.push(text);
        } else {
            specific.push(text);
        }
    }
    let mut parts = specific;
    if declaration_start {
        parts.push("a declaration".to_string());
    }
    if expression_start {
        parts.push("an expression".to_string());
    }
    if operator {
        parts.push("an operator".to_string());
    }
    if parts.is_empty() {
        parts = trailers;
    }
    const MAX_LISTED: usize = 6;
    if parts.len() > MAX_LISTED {
        parts.truncate(MAX_LISTED);
        parts.push("other tokens".to_string());
    }
    Some(match parts.len() {
        0 => return None,
        1 => parts.remove(0),
        _ => {
            let last = parts.pop().unwrap_or_default();
            format!("{} or {}", parts.join(", "), last)
        }
    })
}

/// True for tokens that can only end a list of declarations, equations or statements.
fn closes_list(token: &Token<'_>) -> bool {
    matches!(
        token,
        Token::End
            | Token::Equation
            | Token::InitialEquation
            | Token::Algorithm
            | Token::InitialAlgorithm
            | Token::Invariant
            | Token::Public
            | Token::Protected
            | Token::Else
            | Token::Elseif
            | Token::Elsewhen
    )
}

/// Targeted advice for the syntax errors users make most.
fn hint_for(token: &Token<'_>, expected: &[String]) -> Option<String> {
    let expects = |n: &str| expected.iter().any(|e| e.trim_matches('"') == n);
    match token {
        Token::Minus | Token::Plus | Token::DotMinus | Token::DotPlus if expects("(") => {
            Some("a sign inside a product or after `^` needs parentheses, for example `a*(-b)` or `x^(-2)`".to_string())
        }
        Token::Caret => Some("`^` is not associative: write `a^(b^c)` or `(a^b)^c`".to_string()),
        Token::Lt | Token::Le | Token::Gt | Token::Ge | Token::EqEq | Token::NotEq => {
            Some("relations do not chain: write `a < b and b < c`".to_string())
        }
        Token::Eq if !expects("=") => {
            Some("`=` states an equation; compare with `==`, assign in algorithms with `:=`".to_string())
        }
        Token::Assign if expects("=") => Some("equations use `=`; `:=` belongs in algorithm sections".to_string()),
        Token::Not if expects("(") => {
            Some("`not` applies to a relation; write `not (not a)` for a double negation".to_string())
        }
        Token::If if expects("(") => {
            Some("an if-expression used as an operand needs parentheses: `1 + (if c then a else b)`".to_string())
        }
        _ => None,
    }
}
