//! Runs the generated LR parser and turns its errors into diagnostics.
//!
//! Input: one source text and its [`FileId`]. Output: the [`StoredDefinition`] and every lexical
//! and syntax diagnostic (`E01xx`). Parsing never fails: after a syntax error the grammar resumes
//! at the next `;` (or at `then`/`loop` after a broken condition), a missing `;` is repaired by
//! parsing again with it inserted, and errors that merely follow from a lexical error are
//! dropped, so one run reports each independent mistake once. This module builds nodes for the
//! grammar's actions and deliberately interprets nothing (no names, no types).

use crate::ast::*;
use crate::lexer::{self, Lexer, LexicalError, Token};
use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, Span};
use lalrpop_util::{ErrorRecovery, ParseError};

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_parens, dead_code)]
    generated,
    "/eqm.rs"
);

/// How many times one file may be parsed again to insert missing `;`. Each round inserts at least
/// one, so this bounds the work on hostile input; later missing `;` are then reported as plain
/// syntax errors ("expected `;`").
const MAX_REPAIR_ROUNDS: usize = 16;

/// Parses one file. Never fails: problems are returned as diagnostics next to whatever could be
/// parsed (the classes before the point where the top level itself broke).
///
/// A missing `;` is the most common syntax error, and lalrpop's recovery (skip to the next `;`)
/// would swallow the following declaration or `end Name;`. So when a syntax error after the last
/// repair is a token where a `;` was expected, and that token starts a new line, is a keyword
/// like `end` or `equation`, or is the end of the file, the parse is repeated with a `;` inserted
/// there and a precise "missing `;`" diagnostic, for up to [`MAX_REPAIR_ROUNDS`] rounds.
pub fn parse_file(file: FileId, text: &str) -> (StoredDefinition, Vec<Diagnostic>) {
    let mut inserted: Vec<usize> = Vec::new();
    let mut repair_diagnostics = Vec::new();
    for round in 0.. {
        let mut lexer = Lexer::new(text, file);
        let mut builder = Builder::new(file, text);
        let tokens = InsertSemicolons {
            inner: &mut lexer,
            at: &inserted,
            next: 0,
            pending: None,
        };
        let parsed = generated::StoredDefinitionParser::new().parse(&mut builder, tokens);
        let stored = match parsed {
            Ok(stored) => Some(stored),
            Err(error) => {
                builder.report(error, None);
                None
            }
        };
        let repairs = if round < MAX_REPAIR_ROUNDS {
            builder.semicolon_repairs(text, &inserted, lexer.unterminated)
        } else {
            Vec::new()
        };
        if !repairs.is_empty() {
            for (at, end_of_previous) in repairs.iter().copied().zip(ends_of_previous_tokens(text, &repairs)) {
                repair_diagnostics.push(
                    Diagnostic::error(
                        "E0107",
                        "missing `;`",
                        Span::new(file, end_of_previous, end_of_previous),
                        "expected `;` here",
                    )
                    .with_help("every declaration, equation and statement ends with `;`"),
                );
                // The token stream needs the offsets in order.
                let index = inserted.partition_point(|&i| i < at);
                inserted.insert(index, at);
            }
            continue;
        }
        let mut diagnostics = std::mem::take(&mut lexer.diagnostics);
        let mut syntax = std::mem::take(&mut builder.diagnostics);
        drop_consequences(&mut syntax, &diagnostics, text, lexer.unterminated);
        diagnostics.append(&mut repair_diagnostics);
        diagnostics.append(&mut syntax);
        eqm_diag::sort(&mut diagnostics);
        let stored = stored.unwrap_or_else(|| StoredDefinition {
            within: None,
            classes: Vec::new(),
            span: Span::new(file, 0, text.len()),
        });
        return (stored, diagnostics);
    }
    unreachable!("the repair loop returns once the rounds are used up")
}

/// For each offset in `offsets` (sorted; each a token start or the end of the last token), the
/// end of the last token before it. One pass of the lexer serves a whole round of repairs, so the
/// work stays linear however many `;` are missing; lexing (rather than scanning the text
/// backwards) skips comments correctly.
fn ends_of_previous_tokens(text: &str, offsets: &[usize]) -> Vec<usize> {
    let mut ends = Vec::with_capacity(offsets.len());
    let mut last_end = 0;
    for (start, _, end) in Lexer::new(text, FileId::default()).filter_map(Result::ok) {
        while ends.len() < offsets.len() && offsets[ends.len()] <= start {
            ends.push(last_end);
        }
        if ends.len() == offsets.len() {
            break;
        }
        last_end = end;
    }
    ends.resize(offsets.len(), last_end);
    ends
}

/// How far back [`starts_line`] looks for the start of a block comment. A longer comment right
/// before an error token only costs the "missing `;`" repair, never correctness, and the bound
/// keeps checking every error of a hostile file linear.
const MAX_COMMENT_LOOKBACK: usize = 4096;

/// True when a line break separates the token at `at` from the token before it. Only the
/// whitespace and block comments right before `at` are looked at, so that checking every error of
/// a file full of them stays linear.
fn starts_line(text: &str, at: usize) -> bool {
    let bytes = text.as_bytes();
    let mut end = at.min(text.len());
    loop {
        let before = &text[..end];
        let trimmed = before.trim_end();
        if before[trimmed.len()..].contains('\n') {
            return true;
        }
        if !trimmed.ends_with("*/") {
            return false;
        }
        // A block comment ends here; comments do not nest, so it starts at the nearest `/*`.
        let body_end = trimmed.len() - 2;
        let window = body_end.saturating_sub(MAX_COMMENT_LOOKBACK);
        let Some(start) = bytes[window..body_end].windows(2).rposition(|w| w == b"/*") else {
            return false;
        };
        let start = window + start;
        if bytes[start..body_end].contains(&b'\n') {
            return true;
        }
        end = start;
    }
}

/// Removes syntax errors that only repeat a lexical error: the token right after invalid
/// characters (`1 $ 2` leaves `1 2`), a token inside a malformed number or unterminated string,
/// and the unexpected end of a file that ends inside an unterminated string or comment. The user
/// sees the lexical error, which names the actual problem, and nothing else for it.
fn drop_consequences(syntax: &mut Vec<Diagnostic>, lexical: &[Diagnostic], text: &str, unterminated: bool) {
    // Lexical errors do not overlap, so sorted by start they are sorted by end too, and the only
    // candidate for a syntax error at `at` is the last one starting at or before it.
    let mut lexical_spans: Vec<(usize, usize)> = lexical
        .iter()
        .filter_map(Diagnostic::primary_span)
        .map(|s| (s.start as usize, s.end as usize))
        .collect();
    lexical_spans.sort_unstable();
    syntax.retain(|d| {
        let Some(span) = d.primary_span() else {
            return true;
        };
        match d.code {
            "E0111" => !unterminated,
            "E0110" => {
                let at = span.start as usize;
                let index = lexical_spans.partition_point(|&(start, _)| start <= at);
                let Some(&(_, end)) = index.checked_sub(1).map(|i| &lexical_spans[i]) else {
                    return true;
                };
                let inside = at < end;
                let right_after = text.get(end..at).is_some_and(|gap| gap.trim().is_empty());
                !(inside || right_after)
            }
            _ => true,
        }
    });
}

/// Passes tokens through, inserting a `;` before the token starting at each offset in `at`.
struct InsertSemicolons<'l, 'src> {
    inner: &'l mut Lexer<'src>,
    at: &'l [usize],
    next: usize,
    pending: Option<<Lexer<'src> as Iterator>::Item>,
}

impl<'src> Iterator for InsertSemicolons<'_, 'src> {
    type Item = <Lexer<'src> as Iterator>::Item;

    fn next(&mut self) -> Option<Self::Item> {
        let item = match self.pending.take().or_else(|| self.inner.next()) {
            Some(item) => item,
            None => {
                // A `;` missing at the very end of the file.
                let &at = self.at.get(self.next)?;
                self.next += 1;
                return Some(Ok((at, Token::Semi, at)));
            }
        };
        if let (Ok((start, _, _)), Some(&at)) = (&item, self.at.get(self.next))
            && *start >= at
        {
            self.next += 1;
            self.pending = Some(item);
            return Some(Ok((at, Token::Semi, at)));
        }
        Some(item)
    }
}

/// Parses a single expression (used by `--param NAME=EXPR` and the REPL).
pub fn parse_expr(file: FileId, text: &str) -> (Option<Expr>, Vec<Diagnostic>) {
    let mut lexer = Lexer::new(text, file);
    let mut builder = Builder::new(file, text);
    let parsed = generated::ExprParser::new().parse(&mut builder, &mut lexer);
    let mut diagnostics = std::mem::take(&mut lexer.diagnostics);
    let expr = match parsed {
        Ok(e) => Some(e),
        Err(error) => {
            builder.report(error, None);
            None
        }
    };
    drop_consequences(&mut builder.diagnostics, &diagnostics, text, lexer.unterminated);
    diagnostics.append(&mut builder.diagnostics);
    eqm_diag::sort(&mut diagnostics);
    (expr, diagnostics)
}

/// Joins the first branch of an `if` or `when` with its `elseif`/`elsewhen` branches, which the
/// grammar boxes (see the performance note in the grammar).
pub fn branches<T>(condition: Expr, body: T, rest: Vec<Box<(Expr, T)>>) -> Vec<(Expr, T)> {
    let mut all = Vec::with_capacity(rest.len() + 1);
    all.push((condition, body));
    all.extend(rest.into_iter().map(|b| *b));
    all
}

type TokenError<'src> = ParseError<usize, Token<'src>, LexicalError>;

/// State shared by the grammar's actions: the file being parsed and the diagnostics found so far.
pub struct Builder<'src> {
    file: FileId,
    /// The text being parsed, for the few messages that depend on its layout.
    text: &'src str,
    pub diagnostics: Vec<Diagnostic>,
    /// Every syntax error, for deciding whether inserting a `;` would repair one.
    syntax_errors: Vec<SyntaxError>,
    /// The reported syntax error whose recovery is still skipping tokens: its diagnostic's index
    /// and where its unexpected token ends (see [`Builder::skipped_to`]).
    recovering: Option<(usize, usize)>,
}

/// What the `;` repair needs to know about one syntax error.
#[derive(Debug, Clone, Copy)]
struct SyntaxError {
    /// Where the unexpected token starts (for the end of the file: where the last token ends).
    at: usize,
    /// `;` was one of the expected tokens.
    wants_semicolon: bool,
    /// The unexpected token is the end of the file.
    at_end_of_file: bool,
    /// The unexpected token is `end` or a section keyword, which can never continue a
    /// declaration, equation or statement, so a `;` before it is surely what is missing.
    closes_list: bool,
}

impl<'src> Builder<'src> {
    fn new(file: FileId, text: &'src str) -> Builder<'src> {
        Builder {
            file,
            text,
            diagnostics: Vec::new(),
            syntax_errors: Vec::new(),
            recovering: None,
        }
    }

    /// The offsets, other than those `inserted` already, where inserting a `;` repairs a syntax
    /// error: a `;` was expected there, and the unexpected token starts a new line, closes a list,
    /// or is the end of the file. An end of file inside an unterminated string or comment is left
    /// alone: the lexer has reported the real problem.
    ///
    /// This is the first such error and the ones right after it (up to the next error that is not
    /// a missing `;`), so that a file with many missing `;` needs few rounds. Errors after another
    /// kind of error wait for the next round: that error's recovery may have confused the parser
    /// about where it is, so they may not be real.
    fn semicolon_repairs(&self, text: &str, inserted: &[usize], unterminated: bool) -> Vec<usize> {
        let repairable = |e: &SyntaxError| {
            e.wants_semicolon
                && if e.at_end_of_file {
                    !unterminated
                } else {
                    e.closes_list || starts_line(text, e.at)
                }
        };
        // Errors are recorded in source order. An error at an inserted `;` means the parse went
        // wrong before it; inserting there again would loop, so such errors are plain errors.
        let mut repairs: Vec<usize> = self
            .syntax_errors
            .iter()
            .filter(|e| inserted.binary_search(&e.at).is_err())
            .skip_while(|e| !repairable(e))
            .take_while(|e| repairable(e))
            .map(|e| e.at)
            .collect();
        repairs.dedup();
        repairs
    }

    pub fn span(&self, l: usize, r: usize) -> Span {
        Span::new(self.file, l, r)
    }

    pub fn ident(&self, s: &str, l: usize, r: usize) -> Ident {
        Ident {
            name: s.to_string(),
            span: self.span(l, r),
        }
    }

    /// Decodes a string literal, reporting unknown escapes.
    pub fn string(&mut self, literal: &str, l: usize, _r: usize) -> String {
        let (text, bad) = lexer::unescape(literal);
        for (start, end) in bad {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0102",
                    "unknown escape sequence in string",
                    self.span(l + start, l + end),
                    "not a valid escape",
                )
                .with_help(r#"the escapes are \" \\ \' \? \n \t \r \a \b \f \v"#),
            );
        }
        text
    }

    pub fn description(&mut self, first: String, rest: Vec<String>, l: usize, r: usize) -> Description {
        let mut text = first;
        for s in rest {
            text.push_str(&s);
        }
        Description {
            text,
            span: self.span(l, r),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn class_def(
        &mut self,
        encapsulated: bool,
        partial: bool,
        kind: ClassKind,
        name: Ident,
        body: ClassBody,
        l: usize,
        r: usize,
    ) -> ClassDef {
        if let ClassBody::Long { end_name, .. } = &body
            && end_name.name != name.name
        {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0108",
                    format!("`end {}` does not match the class name `{}`", end_name.name, name.name),
                    end_name.span,
                    format!("expected `end {}`", name.name),
                )
                .with_label(name.span, "the class is declared here"),
            );
        }
        ClassDef {
            encapsulated,
            partial,
            kind,
            name,
            body,
            span: self.span(l, r),
        }
    }

    /// The unlabelled first element list is a public section; it is dropped when empty so that a
    /// pretty-printed class parses back to the same sections.
    pub fn composition(&self, elements: Vec<Element>, rest: Vec<Section>, l: usize, r: usize) -> Vec<Section> {
        let mut sections = Vec::with_capacity(rest.len() + 1);
        if !elements.is_empty() {
            sections.push(Section::Elements {
                visibility: Visibility::Public,
                elements,
                span: self.span(l, r),
            });
        }
        sections.extend(rest);
        sections
    }

    pub fn component_clause(
        &self,
        is_final: bool,
        body: (TypePrefix, Name, Vec<Subscript>, Vec<ComponentDecl>),
        l: usize,
        r: usize,
    ) -> Element {
        let (prefixes, type_name, type_dims, components) = body;
        Element::Component(ComponentClause {
            is_final,
            prefixes,
            type_name,
            type_dims,
            components,
            span: self.span(l, r),
        })
    }

    /// Builds an expression node, enforcing [`MAX_EXPR_DEPTH`] in O(1): a node that would be too
    /// deep becomes an error node of maximal depth, so its parents become error nodes too without
    /// reporting again, and the tree never grows deeper than the bound.
    pub fn expr(&mut self, kind: ExprKind, l: usize, r: usize) -> Expr {
        let span = self.span(l, r);
        let expr = Expr::new(kind, span);
        if expr.depth <= MAX_EXPR_DEPTH {
            return expr;
        }
        let already_reported = expr.depth == MAX_EXPR_DEPTH + 1 && contains_depth_error(&expr.kind);
        if !already_reported {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0106",
                    format!("expression nested too deeply (more than {MAX_EXPR_DEPTH} levels)"),
                    span,
                    "this expression is too deep",
                )
                .with_help("split it into several equations with intermediate variables, or use `sum` for long sums"),
            );
        }
        Expr {
            kind: ExprKind::Error,
            span,
            depth: MAX_EXPR_DEPTH,
        }
    }

    pub fn unary(&mut self, op: UnaryOp, operand: Expr, l: usize, r: usize) -> Expr {
        self.expr(
            ExprKind::Unary {
                op,
                operand: Box::new(operand),
            },
            l,
            r,
        )
    }

    pub fn binary(&mut self, op: BinaryOp, lhs: Expr, rhs: Expr, l: usize, r: usize) -> Expr {
        self.expr(
            ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
            l,
            r,
        )
    }

    /// Parentheses are not kept as nodes (the pretty-printer re-inserts the needed ones), but
    /// they count towards the depth bound, since they are what makes hostile input deep.
    pub fn parenthesized(&mut self, mut inner: Expr, l: usize, r: usize) -> Expr {
        inner.span = self.span(l, r);
        if inner.depth >= MAX_EXPR_DEPTH && !inner.is_error() {
            return self.expr(
                ExprKind::Unary {
                    op: UnaryOp::Plus,
                    operand: Box::new(inner),
                },
                l,
                r,
            );
        }
        inner.depth = (inner.depth + 1).min(MAX_EXPR_DEPTH);
        inner
    }

    pub fn integer(&mut self, text: &str, l: usize, r: usize) -> Expr {
        match text.parse::<i64>() {
            Ok(v) => self.expr(ExprKind::Integer(v), l, r),
            Err(_) => {
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0105",
                        "integer literal too large",
                        self.span(l, r),
                        "does not fit in a 64-bit integer",
                    )
                    .with_help(format!("write it as a real number, for example `{text}.0`")),
                );
                self.expr(ExprKind::Error, l, r)
            }
        }
    }

    pub fn real(&mut self, text: &str, l: usize, r: usize) -> Expr {
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => self.expr(ExprKind::Real(v), l, r),
            _ => {
                self.diagnostics.push(Diagnostic::error(
                    "E0105",
                    "real literal out of range",
                    self.span(l, r),
                    "larger than the largest 64-bit floating-point number",
                ));
                self.expr(ExprKind::Error, l, r)
            }
        }
    }

    /// The lexer already reported the malformed number; the parser goes on with an error node.
    pub fn malformed_number(&mut self, _text: &str, l: usize, r: usize) -> Expr {
        self.expr(ExprKind::Error, l, r)
    }

    /// `initial()` is a call although `initial` is a keyword.
    pub fn initial_call(&mut self, il: usize, ir: usize, args: CallArgs, l: usize, r: usize) -> Expr {
        let name = self.ident("initial", il, ir);
        let function = ComponentRef {
            global: false,
            span: name.span,
            parts: vec![RefPart {
                name,
                subscripts: Vec::new(),
            }],
        };
        self.expr(ExprKind::Call { function, args }, l, r)
    }

    /// A placeholder for an expression whose syntax error was reported by error recovery.
    pub fn error_expr(&mut self, l: usize, r: usize) -> Expr {
        self.expr(ExprKind::Error, l, r)
    }

    /// Reports a block closed by the wrong keyword (`when ... end if;`). `opener` and `closer`
    /// are the keywords with their spans.
    pub fn check_end(&mut self, opener: (&str, Span), closer: (&str, Span)) {
        if opener.0 != closer.0 {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0108",
                    format!("`end {}` does not match the `{}` it closes", closer.0, opener.0),
                    closer.1,
                    format!("expected `end {}`", opener.0),
                )
                .with_label(opener.1, format!("the `{}` starts here", opener.0)),
            );
        }
    }

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
    fn report(&mut self, error: TokenError<'_>, dropped_end: Option<usize>) {
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

/// True when a direct child of `kind` is a depth-limit error node (see [`Builder::expr`]).
fn contains_depth_error(kind: &ExprKind) -> bool {
    let deep = |e: &Expr| e.is_error() && e.depth == MAX_EXPR_DEPTH;
    match kind {
        ExprKind::Unary { operand, .. } => deep(operand),
        ExprKind::Binary { lhs, rhs, .. } => deep(lhs) || deep(rhs),
        ExprKind::If { branches, else_value } => deep(else_value) || branches.iter().any(|(c, v)| deep(c) || deep(v)),
        ExprKind::Range { start, step, stop } => deep(start) || deep(stop) || step.as_deref().is_some_and(deep),
        ExprKind::Array(items) => items.iter().any(deep),
        ExprKind::Matrix(rows) => rows.iter().flatten().any(deep),
        ExprKind::Tuple(items) => items.iter().flatten().any(deep),
        ExprKind::Call { function, args } => {
            args.positional
                .iter()
                .chain(args.named.iter().map(|(_, e)| e))
                .any(deep)
                || function
                    .parts
                    .iter()
                    .flat_map(|p| &p.subscripts)
                    .any(|s| matches!(s, Subscript::Expr(e) if deep(e)))
        }
        ExprKind::Ref(c) => c
            .parts
            .iter()
            .flat_map(|p| &p.subscripts)
            .any(|s| matches!(s, Subscript::Expr(e) if deep(e))),
        _ => false,
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
    ];
    const OPERATORS: &[&str] = &[
        "and", "or", "+", "-", "*", "/", "^", ".+", ".-", ".*", "./", ".^", "==", "<>", "<", "<=", ">", ">=", ":",
    ];
    const DECLARATION_START: &[&str] = &[
        "model",
        "block",
        "connector",
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
            "malformed number" => continue,
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

/// Targeted advice for the syntax errors users make most.
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
