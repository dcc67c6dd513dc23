//! One Vensim equation entry: what its left-hand side defines and the forms that stand only
//! at the top of a right-hand side.
//!
//! Input: the tokens of an entry's equation part. Output: [`Head`], what the entry defines
//! (a variable's equation, a named graphical function, a subscript range, an equivalence of
//! ranges, a reality check that takes no part in a run), and, given a [`Parser`] over the right-hand side, its [`Right`] side: an ordinary
//! expression, a stock's `INTEG(rate, initial)`, a `WITH LOOKUP(input, table)`, a list of
//! numbers (`1, 2; 3, 4` or `TABBED ARRAY`), or a declaration without value
//! (`A FUNCTION OF`), a call of a `GET` function that reads a data file (read by the `data`
//! module). Data equations (`:=`) are read as equations, with their option (`:INTERPOLATE:`,
//! `:HOLD BACKWARD:`, `:LOOK FORWARD:`, `:RAW:`); a data variable without an equation (its
//! values from another model's run) and any other option are E1002 diagnostics.

use super::data::{self, Mode};
use super::lexer::{Tok, Token};
use super::parser::{Parsed, Parser, Reported};
use crate::ir::{Expr, GraphKind, GraphicalFunction};
use crate::names::canonical;
use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, Span};

/// A name on a left-hand side, as written, with its span.
#[derive(Debug, Clone)]
pub struct Named {
    pub name: String,
    pub span: Span,
}

/// A left-hand side `name[subscripts] :EXCEPT: [..], [..]`.
#[derive(Debug, Clone)]
pub struct Lhs {
    pub name: Named,
    pub subscripts: Vec<Named>,
    pub except: Vec<Vec<Named>>,
    /// A data equation's (`:=`) option for reading between the data's times, where it gives
    /// one.
    pub data: Option<Mode>,
}

/// One element of a range definition: a name, or a numeric run `(a1-a5)`.
#[derive(Debug, Clone)]
pub enum RangeItem {
    Name(Named),
    Run(Named, Named),
}

/// What an entry defines.
#[derive(Debug, Clone)]
pub enum Head {
    /// `lhs = ...` (or `==`); the right-hand side starts at token `rhs`.
    Equation { lhs: Lhs, rhs: usize },
    /// `lhs(table)`: a named graphical function; its table starts at token `table`.
    Lookup { lhs: Lhs, table: usize },
    /// `name: a, b, (c1-c9) -> other` or `-> (other: x, y)`.
    Range {
        name: Named,
        items: Vec<RangeItem>,
        mappings: Vec<(Named, Vec<Named>)>,
    },
    /// `name <-> other`.
    Equivalence { name: Named, other: Named },
    /// A reality check (`name :THE CONDITION: ...`, `name :TEST INPUT: ...`): a test of the
    /// model's behaviour that takes no part in a run.
    RealityCheck { name: Named },
}

fn named(token: &Token, name: &str, file: FileId) -> Named {
    Named {
        name: name.to_string(),
        span: Span::new(file, token.start, token.end),
    }
}

fn expect_name(p: &mut Parser, what: &str) -> Parsed<Named> {
    if let Some(Tok::Name(name)) = p.peek() {
        let token = &p.tokens[p.pos];
        p.pos += 1;
        return Ok(named(token, name, p.file));
    }
    let span = p.here();
    Err(p.error("E1003", format!("expected {what} here"), span, "syntax error"))
}

/// Subscript names in brackets, through `]`, without resolving them.
fn subscript_names(p: &mut Parser) -> Parsed<Vec<Named>> {
    p.expect("[")?;
    let mut out = Vec::new();
    loop {
        let name = expect_name(p, "a subscript name")?;
        if p.peek_is("!") {
            p.pos += 1;
        }
        out.push(name);
        if p.peek_is(",") {
            p.pos += 1;
            continue;
        }
        p.expect("]")?;
        return Ok(out);
    }
}

/// What the `GET` function whose call the tokens from `at` start reads (after a lookup's
/// `(`), if they start one.
pub fn reads_file(tokens: &[Token], at: usize) -> Option<data::What> {
    let skip = usize::from(tokens.get(at).is_some_and(|t| t.tok == Tok::Punct("(")));
    match tokens.get(at + skip).map(|t| &t.tok) {
        Some(Tok::Name(name)) => data::what(name),
        _ => None,
    }
}

/// Reads what an entry defines.
pub fn head(p: &mut Parser) -> Parsed<Head> {
    let name = expect_name(p, "the name of a variable")?;
    if p.peek_is(":") {
        p.pos += 1;
        return range(p, name);
    }
    if p.peek_is("<->") {
        p.pos += 1;
        let other = expect_name(p, "the name of a subscript range")?;
        return Ok(Head::Equivalence { name, other });
    }
    let subscripts = if p.peek_is("[") {
        subscript_names(p)?
    } else {
        Vec::new()
    };
    let mut except = Vec::new();
    let mut mode = None;
    while let Some(Tok::Keyword(k)) = p.peek() {
        let span = p.here();
        if k == "EXCEPT" {
            p.pos += 1;
            loop {
                except.push(subscript_names(p)?);
                if !p.peek_is(",") {
                    break;
                }
                p.pos += 1;
            }
            continue;
        }
        if k == "THE CONDITION" || k == "TEST INPUT" {
            return Ok(Head::RealityCheck { name });
        }
        let option = match k.as_str() {
            "INTERPOLATE" => Some(Mode::Interpolate),
            "HOLD BACKWARD" => Some(Mode::HoldBackward),
            "LOOK FORWARD" => Some(Mode::LookForward),
            "RAW" => Some(Mode::Raw),
            _ => None,
        };
        if option.is_some() {
            mode = option;
            p.pos += 1;
            continue;
        }
        let k = k.clone();
        return Err(p.error(
            "E1002",
            format!("the data option `:{k}:` is not supported"),
            span,
            "not supported",
        ));
    }
    let lhs = Lhs {
        name,
        subscripts,
        except,
        data: mode,
    };
    match p.peek() {
        // A data equation is an equation whose values are read once, before the run.
        Some(Tok::Punct("=" | "==" | ":=")) => {
            p.pos += 1;
            Ok(Head::Equation { lhs, rhs: p.pos })
        }
        Some(Tok::Punct("(")) => Ok(Head::Lookup { lhs, table: p.pos }),
        None => {
            let span = lhs.name.span;
            Err(p.error(
                "E1002",
                format!(
                    "the data variable `{}` (defined by no equation) is not supported",
                    lhs.name.name
                ),
                span,
                "not supported",
            ))
        }
        _ => {
            let span = p.here();
            Err(p.error("E1003", "expected `=` or a lookup table here", span, "syntax error"))
        }
    }
}

/// The rest of a range definition after `name :`.
fn range(p: &mut Parser, name: Named) -> Parsed<Head> {
    let mut items = Vec::new();
    if let Some(call) = data::call(p) {
        let call = call?;
        if call.what != data::What::Subscript {
            return Err(p.error(
                "E1003",
                format!("`{}` gives no elements of a subscript range", call.name),
                call.span,
                "not a subscript range",
            ));
        }
        let elements = data::subscript_elements(&call, &p.scope.data, p.diagnostics).ok_or(Reported)?;
        let span = call.span;
        items.extend(elements.into_iter().map(|name| RangeItem::Name(Named { name, span })));
        return range_rest(p, name, items);
    }
    loop {
        if p.peek_is("(") {
            p.pos += 1;
            let first = expect_name(p, "the first element of a numbered run")?;
            p.expect("-")?;
            let last = expect_name(p, "the last element of a numbered run")?;
            p.expect(")")?;
            items.push(RangeItem::Run(first, last));
        } else {
            items.push(RangeItem::Name(expect_name(p, "a subscript element")?));
        }
        if p.peek_is(",") {
            p.pos += 1;
            continue;
        }
        break;
    }
    range_rest(p, name, items)
}

/// The mappings after a range's elements (`-> other`), through the end of the tokens.
fn range_rest(p: &mut Parser, name: Named, items: Vec<RangeItem>) -> Parsed<Head> {
    let mut mappings = Vec::new();
    if p.peek_is("->") {
        p.pos += 1;
        loop {
            if p.peek_is("(") {
                p.pos += 1;
                let to = expect_name(p, "the name of a subscript range")?;
                p.expect(":")?;
                let mut elements = vec![expect_name(p, "a subscript element")?];
                while p.peek_is(",") {
                    p.pos += 1;
                    elements.push(expect_name(p, "a subscript element")?);
                }
                p.expect(")")?;
                mappings.push((to, elements));
            } else {
                mappings.push((expect_name(p, "the name of a subscript range")?, Vec::new()));
            }
            if !p.peek_is(",") {
                break;
            }
            p.pos += 1;
        }
    }
    if p.pos < p.tokens.len() {
        let span = p.here();
        return Err(p.error(
            "E1003",
            "unexpected text after the subscript range",
            span,
            "syntax error",
        ));
    }
    Ok(Head::Range { name, items, mappings })
}

/// The right-hand side of an equation.
#[derive(Debug)]
pub enum Right {
    Value(Expr),
    Stock {
        rate: Expr,
        initial: Expr,
    },
    Graph {
        input: Expr,
        graph: GraphicalFunction,
    },
    /// A named lookup's own table.
    Table(GraphicalFunction),
    /// Numbers in rows (`;` ends a row); one row for a list.
    Numbers {
        rows: Vec<Vec<f64>>,
        span: Span,
    },
    /// A call of a `GET` function, read from its file once the left-hand side's elements are
    /// known.
    Data(data::Call),
    Undefined,
}

/// Reads a right-hand side through the end of the tokens.
pub fn right(p: &mut Parser) -> Parsed<Right> {
    let start = p.start();
    let form = match p.peek() {
        Some(Tok::Name(name)) if p.tokens.get(p.pos + 1).is_some_and(|t| t.tok == Tok::Punct("(")) => canonical(name),
        _ => String::new(),
    };
    let result = match form.as_str() {
        _ if data::what(&form).is_some_and(|w| w != data::What::Subscript) => {
            Right::Data(data::call(p).expect("a `GET` call starts here")?)
        }
        "integ" => {
            p.pos += 2;
            let rate = p.expr()?;
            p.expect(",")?;
            let initial = p.expr()?;
            p.expect(")")?;
            Right::Stock { rate, initial }
        }
        "with lookup" => {
            p.pos += 2;
            let input = p.expr()?;
            p.expect(",")?;
            let graph = table(p)?;
            p.expect(")")?;
            Right::Graph { input, graph }
        }
        "a function of" => {
            p.pos = p.tokens.len();
            Right::Undefined
        }
        "tabbed array" => {
            p.pos += 2;
            let rows = numbers(p, true)?;
            p.expect(")")?;
            Right::Numbers {
                rows,
                span: p.span_from(start),
            }
        }
        _ if is_number_list(&p.tokens[p.pos..]) => {
            let rows = numbers(p, false)?;
            Right::Numbers {
                rows,
                span: p.span_from(start),
            }
        }
        _ => Right::Value(p.expr()?),
    };
    if p.pos < p.tokens.len() {
        let span = p.here();
        return Err(p.error(
            "E1003",
            "unexpected text after the end of the equation",
            span,
            "syntax error",
        ));
    }
    Ok(result)
}

/// Whether tokens are a list of numbers with at least one separator (`1, 2` or `1; 2;`).
fn is_number_list(tokens: &[Token]) -> bool {
    let separated = tokens.iter().any(|t| matches!(t.tok, Tok::Punct("," | ";")));
    separated
        && tokens
            .iter()
            .all(|t| matches!(t.tok, Tok::Number(_) | Tok::Punct("," | ";" | "-" | "+")))
}

/// Numbers in rows: separated by `,` within a row and `;` between rows, or (in a tabbed
/// array) by white space within a row and line breaks between rows.
fn numbers(p: &mut Parser, tabbed: bool) -> Parsed<Vec<Vec<f64>>> {
    let mut rows: Vec<Vec<f64>> = vec![Vec::new()];
    let mut last_line_end = None;
    while let Some(token) = p.tokens.get(p.pos) {
        match &token.tok {
            Tok::Punct(";") => rows.push(Vec::new()),
            Tok::Punct(",") if !tabbed => {}
            Tok::Punct(")") if tabbed => break,
            Tok::Number(_) | Tok::Punct("-" | "+") => {
                let start = token.start;
                let value = signed_number(p)?;
                if tabbed && last_line_end.is_some_and(|end| line_break_between(p, end, start)) {
                    rows.push(Vec::new());
                }
                last_line_end = Some(p.tokens[p.pos - 1].end);
                rows.last_mut().expect("rows start non-empty").push(value);
                continue;
            }
            _ => {
                let span = p.here();
                return Err(p.error("E1003", "expected a number here", span, "syntax error"));
            }
        }
        p.pos += 1;
    }
    rows.retain(|row| !row.is_empty());
    Ok(rows)
}

/// Whether the file has a line break between two byte offsets of the tokens' text.
fn line_break_between(p: &Parser, from: usize, to: usize) -> bool {
    p.source_text.get(from..to).is_some_and(|gap| gap.contains('\n'))
}

fn signed_number(p: &mut Parser) -> Parsed<f64> {
    let mut sign = 1.0;
    while let Some(Tok::Punct(s @ ("-" | "+"))) = p.peek() {
        if *s == "-" {
            sign = -sign;
        }
        p.pos += 1;
    }
    if let Some(Tok::Number(value)) = p.peek() {
        p.pos += 1;
        return Ok(sign * value);
    }
    let span = p.here();
    Err(p.error("E1003", "expected a number here", span, "syntax error"))
}

/// A graphical function's table: `( [(xmin,ymin)-(xmax,ymax)], (x,y), ... )`, the range
/// optional.
pub fn table(p: &mut Parser) -> Parsed<GraphicalFunction> {
    let start = p.start();
    p.expect("(")?;
    if p.peek_is("[") {
        p.pos += 1;
        point(p)?;
        p.expect("-")?;
        point(p)?;
        // Vensim may keep reference points of its editor after the corners.
        while p.peek_is(",") {
            p.pos += 1;
            point(p)?;
        }
        p.expect("]")?;
        if p.peek_is(",") {
            p.pos += 1;
        }
    }
    let (mut x, mut y) = (Vec::new(), Vec::new());
    loop {
        let (px, py) = point(p)?;
        x.push(px);
        y.push(py);
        if p.peek_is(",") {
            p.pos += 1;
            continue;
        }
        p.expect(")")?;
        break;
    }
    let origin = p.span_from(start);
    if x.windows(2).any(|w| w[1] < w[0]) {
        // Vensim reads the points in the order of their x values (points of equal x keep
        // their order, a step).
        let mut points: Vec<(f64, f64)> = x.into_iter().zip(y).collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        (x, y) = points.into_iter().unzip();
    }
    Ok(GraphicalFunction {
        kind: GraphKind::Continuous,
        x,
        y,
        origin,
    })
}

fn point(p: &mut Parser) -> Parsed<(f64, f64)> {
    p.expect("(")?;
    let x = signed_number(p)?;
    p.expect(",")?;
    let y = signed_number(p)?;
    p.expect(")")?;
    Ok((x, y))
}

/// Reports an error the lexer found.
pub fn lex_error(diagnostics: &mut Vec<Diagnostic>, file: FileId, error: super::lexer::LexError) -> Reported {
    let span = Span::new(file, error.at, error.at + error.len);
    diagnostics.push(Diagnostic::error(
        "E1003",
        format!("{} in an equation", error.what),
        span,
        "cannot be read",
    ));
    Reported
}
