//! Runs the generated LR parser and turns its errors into diagnostics.
//!
//! Input: one source text and its [`FileId`]. Output: the [`StoredDefinition`] and every lexical
//! and syntax diagnostic (`E01xx`). Parsing never fails: after a syntax error the grammar resumes
//! at the next `;` (or at `then`/`loop` after a broken condition), a missing `;` is repaired by
//! parsing again with it inserted, and errors that merely follow from a lexical error are
//! dropped, so one run reports each independent mistake once.
//!
//! The grammar's actions build nodes through [`Builder`], whose constructors (with the checks
//! that belong to building a node: matching `end` names, literal ranges, the depth bound) are in
//! `build`, and whose reporting of syntax errors (words for the expected tokens, hints for the
//! most common mistakes) is in `errors`; this module runs the parser and repairs missing `;`.
//! Nothing here interprets the tree (no names, no types).

mod annotations;
mod build;
mod errors;

pub use build::{ElementFlags, branches};

use crate::ast::*;
use crate::lexer::{Lexer, Token};
use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, Span};

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
/// there and a precise "missing `;`" diagnostic, for up to `MAX_REPAIR_ROUNDS` rounds.
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
        if let Some(stored) = &stored {
            diagnostics.extend(too_deep_class(stored));
            diagnostics.extend(too_deep_block(stored));
        }
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

/// E0112 for the first class (in the order of the file) nested more than [`MAX_CLASS_DEPTH`]
/// levels deep, found by an iterative walk. Every later stage names each class by its full
/// dotted name, so n nested classes take memory n^2: 30 000 of them need gigabytes.
fn too_deep_class(stored: &StoredDefinition) -> Option<Diagnostic> {
    let mut stack: Vec<(&ClassDef, usize)> = stored.classes.iter().rev().map(|c| (c, 1)).collect();
    while let Some((class, depth)) = stack.pop() {
        if depth > MAX_CLASS_DEPTH {
            return Some(
                Diagnostic::error(
                    "E0112",
                    format!("classes nested too deeply (more than {MAX_CLASS_DEPTH} levels)"),
                    class.name.span,
                    "this class is too deep",
                )
                .with_help("write the classes one after another, or in fewer levels of packages"),
            );
        }
        if let ClassBody::Long { sections, .. } = &class.body {
            let nested = sections.iter().flat_map(|section| match section {
                Section::Elements { elements, .. } => elements.as_slice(),
                _ => &[],
            });
            let nested: Vec<&ClassDef> = nested
                .filter_map(|element| match element {
                    Element::Class(def) => Some(&**def),
                    _ => None,
                })
                .collect();
            stack.extend(nested.into_iter().rev().map(|c| (c, depth + 1)));
        }
    }
    None
}

/// One node of the walk of [`too_deep_block`]: a class, or an equation or statement with its
/// nesting depth (1 for one written directly in a section).
enum BlockNode<'t> {
    Class(&'t ClassDef),
    Equation(&'t Equation, usize),
    Statement(&'t Statement, usize),
}

/// E0113 for the first equation or statement (in the order of the file) nested more than
/// [`MAX_BLOCK_DEPTH`] levels deep in if, for, when and while blocks, found by an iterative
/// walk. The later stages walk these blocks recursively, so a bound on their depth is what
/// keeps the compiler's stack from overflowing, whatever the input.
fn too_deep_block(stored: &StoredDefinition) -> Option<Diagnostic> {
    let mut stack: Vec<BlockNode> = stored.classes.iter().rev().map(BlockNode::Class).collect();
    while let Some(node) = stack.pop() {
        let (span, depth) = match node {
            BlockNode::Class(class) => {
                push_class_contents(class, &mut stack);
                continue;
            }
            BlockNode::Equation(equation, depth) => {
                if depth <= MAX_BLOCK_DEPTH {
                    let bodies: Vec<&[Equation]> = match &equation.kind {
                        EquationKind::If { branches, else_branch } => branches
                            .iter()
                            .map(|(_, body)| body.as_slice())
                            .chain([else_branch.as_slice()])
                            .collect(),
                        EquationKind::For { body, .. } => vec![body.as_slice()],
                        EquationKind::When { branches } => branches.iter().map(|(_, body)| body.as_slice()).collect(),
                        _ => Vec::new(),
                    };
                    let inner = bodies.into_iter().rev().flat_map(|body| body.iter().rev());
                    stack.extend(inner.map(|e| BlockNode::Equation(e, depth + 1)));
                }
                (equation.span, depth)
            }
            BlockNode::Statement(statement, depth) => {
                if depth <= MAX_BLOCK_DEPTH {
                    let bodies: Vec<&[Statement]> = match &statement.kind {
                        StatementKind::If { branches, else_branch } => branches
                            .iter()
                            .map(|(_, body)| body.as_slice())
                            .chain([else_branch.as_slice()])
                            .collect(),
                        StatementKind::For { body, .. } | StatementKind::While { body, .. } => vec![body.as_slice()],
                        StatementKind::When { branches } => branches.iter().map(|(_, body)| body.as_slice()).collect(),
                        _ => Vec::new(),
                    };
                    let inner = bodies.into_iter().rev().flat_map(|body| body.iter().rev());
                    stack.extend(inner.map(|s| BlockNode::Statement(s, depth + 1)));
                }
                (statement.span, depth)
            }
        };
        if depth > MAX_BLOCK_DEPTH {
            // The span of the whole block would cover the rest of the file: point at its start.
            let start = Span {
                end: span.start,
                ..span
            };
            return Some(
                Diagnostic::error(
                    "E0113",
                    format!("equations or statements nested too deeply (more than {MAX_BLOCK_DEPTH} levels)"),
                    start,
                    "this is nested too deeply",
                )
                .with_help("write the conditions as one `if ... elseif ...` chain, or in fewer levels of blocks"),
            );
        }
    }
    None
}

/// Pushes the sections of `class` onto the walk of [`too_deep_block`], in reverse, so that
/// they are popped in the order of the file.
fn push_class_contents<'t>(class: &'t ClassDef, stack: &mut Vec<BlockNode<'t>>) {
    let ClassBody::Long { sections, .. } = &class.body else {
        return;
    };
    for section in sections.iter().rev() {
        match section {
            Section::Elements { elements, .. } => {
                let nested = elements.iter().rev().filter_map(|element| match element {
                    Element::Class(def) => Some(BlockNode::Class(def)),
                    _ => None,
                });
                stack.extend(nested);
            }
            Section::Equations { equations, .. } | Section::Invariants { equations, .. } => {
                stack.extend(equations.iter().rev().map(|e| BlockNode::Equation(e, 1)));
            }
            Section::Algorithm { statements, .. } => {
                stack.extend(statements.iter().rev().map(|s| BlockNode::Statement(s, 1)));
            }
            _ => {}
        }
    }
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
    /// The class annotations read as items of a class body and not yet taken by the class that
    /// holds them, in the order of the text: each with where it starts and ends.
    annotations: Vec<(usize, usize, Annotation)>,
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
            annotations: Vec::new(),
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
}
