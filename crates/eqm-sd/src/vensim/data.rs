//! Vensim's functions that read data files: `GET XLS CONSTANTS` and `GET DIRECT CONSTANTS`,
//! `GET ... LOOKUPS`, `GET ... DATA` and `GET ... SUBSCRIPT`, with the data options of a
//! data variable (`:INTERPOLATE:`, `:HOLD BACKWARD:`, `:LOOK FORWARD:`, `:RAW:`).
//!
//! Input: the call as the equation writes it (the texts of its arguments), the left-hand side
//! it defines (its subscripts, the elements they stand for) and the import's
//! [`DataFiles`]. Output: the values written into the model: a constant per element, a
//! graphical function per element for lookups, and for data a graphical function of `Time`
//! per element that reads between the data's times as the option says. So the `.eqm` text
//! holds the data as tables and needs no file when it runs.
//!
//! How cells are read (Vensim's rules): a constant's cell is the first of a block that runs
//! across a row for the last varying subscript and down the rows for the one before it; a
//! reference ending in `*` turns the block (down for the last, across for the one before). A
//! reference that is no cell is a named range of the workbook, whose first cell starts the
//! block. A series (lookups, data) has its times in a row (a number: `'4'`), a column (letters:
//! `'A'`) or a named range, from the column or row of the first value cell through the end of
//! the sheet's row or column (or of the named range); the elements' values follow each other
//! in the rows below or the columns to the right. A time cell without a number, and a value
//! cell left empty, are missing: that time is left out of the element's table, so the values
//! on both sides are read across it.
//!
//! Diagnostics: E1008 for a file, sheet or named range that cannot be found or read, a cell
//! where a number is needed that holds none, or a series with no times; E1002 for a file tag
//! (`'?name'`, set in Vensim's settings, which the file does not hold) and a constant over
//! more than two varying subscripts. What it does not do: read data from
//! another model's run (a data variable without an equation) or Vensim's `.vdf` files.

use super::lexer::Tok;
use super::parser::{Parsed, Parser, Scope};
use crate::data::{Book, Cell, DataFiles, Grid, cells};
use crate::ir::{Builtin, Equation, Expr, ExprKind, Function, GraphKind, GraphicalFunction, UnaryOp};
use crate::names::canonical;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use std::rc::Rc;

/// How a data variable reads between the times of its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Straight lines between the times (Vensim's default for `GET ... DATA`).
    Interpolate,
    /// The value of the last time at or before the current time.
    HoldBackward,
    /// The value of the first time at or after the current time.
    LookForward,
    /// The value at a time of the data, Vensim's `:NA:` at any other time.
    Raw,
}

/// What a `GET` function reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    Constants,
    Lookups,
    Data,
    Subscript,
}

/// A call of a `GET` function: what it reads and its arguments' texts with their spans.
#[derive(Debug, Clone)]
pub struct Call {
    pub what: What,
    /// The function's name as written.
    pub name: String,
    pub args: Vec<(String, Span)>,
    pub span: Span,
}

/// What the `GET` function named `name` reads, if it is one.
pub fn what(name: &str) -> Option<What> {
    let key = canonical(name);
    let rest = key
        .strip_prefix("get xls ")
        .or_else(|| key.strip_prefix("get direct "))?;
    match rest {
        "constants" => Some(What::Constants),
        "lookups" => Some(What::Lookups),
        "data" => Some(What::Data),
        "subscript" | "subscripts" => Some(What::Subscript),
        _ => None,
    }
}

/// Reads a call of a `GET` function at the parser's place (its name, then texts in
/// parentheses), or `None` when no such call starts there.
pub fn call(p: &mut Parser) -> Option<Parsed<Call>> {
    let Some(Tok::Name(name)) = p.peek() else {
        return None;
    };
    let what = what(name)?;
    if !p.tokens.get(p.pos + 1).is_some_and(|t| t.tok == Tok::Punct("(")) {
        return None;
    }
    let start = p.start();
    let name = name.clone();
    p.pos += 2;
    let mut args = Vec::new();
    loop {
        let Some(token) = p.tokens.get(p.pos).filter(|t| t.tok == Tok::Text) else {
            let span = p.here();
            return Some(Err(p.error(
                "E1003",
                format!("expected a quoted text as an argument of `{name}` here"),
                span,
                "syntax error",
            )));
        };
        let text = p.source_text[token.start + 1..token.end - 1].to_string();
        args.push((text, Span::new(p.file, token.start, token.end)));
        p.pos += 1;
        if p.peek_is(",") {
            p.pos += 1;
            continue;
        }
        if let Err(e) = p.expect(")") {
            return Some(Err(e));
        }
        break;
    }
    let span = p.span_from(start);
    let wanted = match what {
        What::Constants => 3,
        What::Lookups | What::Data => 4,
        What::Subscript => 5,
    };
    if args.len() != wanted {
        return Some(Err(p.error(
            "E1005",
            format!("`{name}` takes {wanted} arguments, not {}", args.len()),
            span,
            "wrong number of arguments",
        )));
    }
    Some(Ok(Call { what, name, args, span }))
}

fn error<T>(diagnostics: &mut Vec<Diagnostic>, code: &'static str, message: String, span: Span) -> Option<T> {
    diagnostics.push(Diagnostic::error(code, message, span, "cannot be read"));
    None
}

/// The sheet a call reads: its file (first argument) and sheet or delimiter (second).
fn sheet(call: &Call, files: &DataFiles, diagnostics: &mut Vec<Diagnostic>) -> Option<(Rc<Book>, usize)> {
    let (file, file_span) = &call.args[0];
    let (tab, tab_span) = &call.args[1];
    if file.starts_with('?') {
        return error(
            diagnostics,
            "E1002",
            format!(
                "the file tag `{file}` names a file in Vensim's settings, which the model file does not hold; write the file's name"
            ),
            *file_span,
        );
    }
    let book = match files.book(file, tab) {
        Ok(book) => book,
        Err(message) => return error(diagnostics, "E1008", message, *file_span),
    };
    // A text file has one sheet, which its delimiter names.
    let found = if book.text {
        Some(0)
    } else {
        book.sheets.iter().position(|(n, _)| n.eq_ignore_ascii_case(tab.trim()))
    };
    let index = match found {
        Some(i) => i,
        None => {
            return error(
                diagnostics,
                "E1008",
                format!("the data file `{file}` has no sheet `{tab}`"),
                *tab_span,
            );
        }
    };
    Some((book, index))
}

/// The first cell a reference names, and whether the block it starts is turned (`*`): a cell
/// (`B2`), or a named range of the book as `sheet` sees it.
fn start_cell(reference: &str, book: &Book, sheet: &str) -> Option<((usize, usize), bool)> {
    let (reference, turned) = match reference.trim().strip_suffix('*') {
        Some(r) => (r, true),
        None => (reference.trim(), false),
    };
    if let Some(at) = cells::cell(reference) {
        return Some((at, turned));
    }
    book.named(reference, sheet).map(|n| (n.first, turned))
}

/// The positions of a left-hand side's varying subscripts and, for each element tuple the
/// definition covers, the index of its element along each of them.
fn places(key: &[String], tuples: &[Vec<String>], scope: &Scope) -> (Vec<usize>, Vec<Vec<usize>>) {
    let varying: Vec<usize> = (0..key.len())
        .filter(|&i| scope.dimensions.contains_key(&canonical(&key[i])))
        .collect();
    let indices = tuples
        .iter()
        .map(|tuple| {
            varying
                .iter()
                .map(|&i| {
                    let (_, elements) = &scope.dimensions[&canonical(&key[i])];
                    let wanted = canonical(&tuple[i]);
                    elements.iter().position(|e| canonical(e) == wanted).unwrap_or(0)
                })
                .collect()
        })
        .collect();
    (varying, indices)
}

/// The equations a `GET ... CONSTANTS`, `LOOKUPS` or `DATA` call gives the element tuples
/// `tuples` of the left-hand side `key` (its subscripts as declared).
pub fn equations(
    call: &Call,
    mode: Option<Mode>,
    key: &[String],
    tuples: Vec<Vec<String>>,
    scope: &Scope,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<(Vec<String>, Equation)>> {
    let (book, index) = sheet(call, &scope.data, diagnostics)?;
    let (sheet_name, grid) = &book.sheets[index];
    let (varying, indices) = places(key, &tuples, scope);
    let reference = &call.args[call.args.len() - 1];
    let Some(((row, column), turned)) = start_cell(&reference.0, &book, sheet_name) else {
        return error(
            diagnostics,
            "E1008",
            format!(
                "`{}` is neither a cell nor a named range of the sheet `{sheet_name}`",
                reference.0
            ),
            reference.1,
        );
    };
    let equations = match call.what {
        What::Constants => {
            if varying.len() > 2 {
                return error(
                    diagnostics,
                    "E1002",
                    format!("`{}` over more than two varying subscripts is not supported", call.name),
                    call.span,
                );
            }
            let mut out = Vec::with_capacity(tuples.len());
            for (tuple, at) in tuples.into_iter().zip(indices) {
                let (down, across) = match (at.as_slice(), turned) {
                    ([], _) => (0, 0),
                    ([j], false) => (0, *j),
                    ([j], true) => (*j, 0),
                    ([i, j], false) => (*i, *j),
                    ([i, j], true) => (*j, *i),
                    _ => unreachable!("at most two varying subscripts"),
                };
                let value = number_at(grid, row + down, column + across, sheet_name, reference.1, diagnostics)?;
                let number = Expr {
                    kind: ExprKind::Number(value),
                    span: call.span,
                };
                out.push((tuple, Equation::Value(number)));
            }
            out
        }
        What::Lookups | What::Data => {
            let time = series_times(call, &book, sheet_name, grid, (row, column), diagnostics)?;
            let mut out = Vec::with_capacity(tuples.len());
            for (k, tuple) in tuples.into_iter().enumerate() {
                let graph = series(call, grid, &time, k, diagnostics)?;
                out.push((tuple, series_equation(call, graph, mode)));
            }
            out
        }
        What::Subscript => unreachable!("a subscript range is read by `subscript_elements`"),
    };
    Some(equations)
}

/// The number in a cell, or E1008.
fn number_at(
    grid: &Grid,
    row: usize,
    column: usize,
    sheet: &str,
    span: Span,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<f64> {
    match grid.cell(row, column) {
        Cell::Number(v) => Some(*v),
        other => {
            let what = match other {
                Cell::Text(t) => format!("the text `{t}`"),
                _ => "nothing".to_string(),
            };
            error(
                diagnostics,
                "E1008",
                format!(
                    "the cell {} of the sheet `{sheet}` holds {what} where a number is needed",
                    cell_name(row, column)
                ),
                span,
            )
        }
    }
}

/// A cell's name (`B2`) from its row and column from 0.
pub fn cell_name(row: usize, column: usize) -> String {
    let mut letters = Vec::new();
    let mut n = column + 1;
    while n > 0 {
        let d = (n - 1) % 26;
        letters.push((b'A' + d as u8) as char);
        n = (n - 1) / 26;
    }
    letters.reverse();
    format!("{}{}", letters.into_iter().collect::<String>(), row + 1)
}

/// The times of a series: where they are, their direction, and their cells.
struct Times {
    /// True where the times run across a row (each element's values in a row below).
    across: bool,
    /// The cells of the times: (row, column) of each, and its value.
    cells: Vec<((usize, usize), f64)>,
    /// The first value cell.
    first: (usize, usize),
}

/// The times of a series from the call's third argument: a row's number, a column's letters
/// or a named range; the values start at `first`.
fn series_times(
    call: &Call,
    book: &Book,
    sheet: &str,
    grid: &Grid,
    first: (usize, usize),
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Times> {
    let (reference, span) = &call.args[2];
    let (across, start, limit) = if let Some(row) = cells::row(reference) {
        (true, (row, first.1), None)
    } else if let Some(column) = cells::column(reference) {
        (false, (first.0, column), None)
    } else if let Some(named) = book.named(reference, sheet) {
        let across = named.first.0 == named.last.0 && named.first.1 != named.last.1;
        let length = if across {
            named.last.1 - named.first.1 + 1
        } else {
            named.last.0 - named.first.0 + 1
        };
        (across, named.first, Some(length))
    } else {
        return error(
            diagnostics,
            "E1008",
            format!("`{reference}` is neither a row, a column nor a named range of the sheet `{sheet}`"),
            *span,
        );
    };
    // Through the named range, else through the end of the sheet's row or column; a cell
    // without a number is a missing time, left out.
    let length = limit.unwrap_or_else(|| {
        if across {
            grid.rows.get(start.0).map_or(0, |r| r.len().saturating_sub(start.1))
        } else {
            grid.rows.len().saturating_sub(start.0)
        }
    });
    let mut cells = Vec::new();
    for n in 0..length {
        let at = if across {
            (start.0, start.1 + n)
        } else {
            (start.0 + n, start.1)
        };
        if let Some(value) = grid.cell(at.0, at.1).number() {
            cells.push((at, value));
        }
    }
    if cells.is_empty() {
        return error(
            diagnostics,
            "E1008",
            format!(
                "the times of `{}` (from the cell {} of the sheet `{sheet}`) hold no number",
                call.name,
                cell_name(start.0, start.1)
            ),
            *span,
        );
    }
    Some(Times { across, cells, first })
}

/// The graphical function of the `k`-th element of a series: its values in the `k`-th row
/// below (times across) or column to the right (times down) of the first value cell, each at
/// its time; an empty value cell leaves its time out.
fn series(
    call: &Call,
    grid: &Grid,
    times: &Times,
    k: usize,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<GraphicalFunction> {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for &((row, column), time) in &times.cells {
        let at = if times.across {
            (times.first.0 + k, column)
        } else {
            (row, times.first.1 + k)
        };
        if let Some(value) = grid.cell(at.0, at.1).number() {
            x.push(time);
            y.push(value);
        }
    }
    if x.is_empty() {
        let at = if times.across {
            (times.first.0 + k, times.first.1)
        } else {
            (times.first.0, times.first.1 + k)
        };
        return error(
            diagnostics,
            "E1008",
            format!(
                "`{}` finds no value for an element (from the cell {})",
                call.name,
                cell_name(at.0, at.1)
            ),
            call.span,
        );
    }
    if x.windows(2).any(|w| w[1] < w[0]) {
        let mut points: Vec<(f64, f64)> = x.into_iter().zip(y).collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        (x, y) = points.into_iter().unzip();
    }
    Some(GraphicalFunction {
        kind: GraphKind::Continuous,
        x,
        y,
        origin: call.span,
    })
}

/// A lookup's table, or a data variable's value at the current time as `mode` reads it.
/// Looking forward is holding backward in reversed time: the table's times negated (and put
/// in order) and read at `-Time`, so that the value at a time between two of the data's is
/// the later one's.
fn series_equation(call: &Call, mut graph: GraphicalFunction, mode: Option<Mode>) -> Equation {
    if call.what == What::Lookups {
        return Equation::Table(graph);
    }
    let time = Expr {
        kind: ExprKind::Call {
            function: Function::Builtin(Builtin::Time),
            args: Vec::new(),
        },
        span: call.span,
    };
    match mode.unwrap_or(Mode::Interpolate) {
        Mode::Interpolate => Equation::Graph { input: time, graph },
        Mode::HoldBackward => {
            graph.kind = GraphKind::Discrete;
            Equation::Graph { input: time, graph }
        }
        Mode::Raw => {
            graph.kind = GraphKind::Raw;
            Equation::Graph { input: time, graph }
        }
        Mode::LookForward => {
            graph.kind = GraphKind::Discrete;
            graph.x = graph.x.iter().rev().map(|x| -x).collect();
            graph.y.reverse();
            let input = Expr {
                kind: ExprKind::Unary {
                    op: UnaryOp::Minus,
                    operand: Box::new(time),
                },
                span: call.span,
            };
            Equation::Graph { input, graph }
        }
    }
}

/// The elements of a subscript range read by `GET ... SUBSCRIPT(file, tab, first, last,
/// prefix)`: the cells from the first to the last (down a column or across a row; an empty
/// last reads until the first empty cell), each with the prefix before it.
pub fn subscript_elements(call: &Call, files: &DataFiles, diagnostics: &mut Vec<Diagnostic>) -> Option<Vec<String>> {
    let (book, index) = sheet(call, files, diagnostics)?;
    let (sheet_name, grid) = &book.sheets[index];
    let (first_ref, first_span) = &call.args[2];
    let Some(first) = cells::cell(first_ref) else {
        return error(diagnostics, "E1008", format!("`{first_ref}` is no cell"), *first_span);
    };
    let (last_ref, last_span) = &call.args[3];
    let last = if last_ref.trim().is_empty() {
        None
    } else {
        let Some(last) = cells::cell(last_ref) else {
            return error(diagnostics, "E1008", format!("`{last_ref}` is no cell"), *last_span);
        };
        Some(last)
    };
    // Down a column unless the last cell is in the first's row.
    let across = last.is_some_and(|l| l.0 == first.0 && l.1 != first.1);
    let prefix = &call.args[4].0;
    let mut elements = Vec::new();
    for n in 0.. {
        let at = if across {
            (first.0, first.1 + n)
        } else {
            (first.0 + n, first.1)
        };
        if last.is_some_and(|l| at.0 > l.0 || at.1 > l.1) {
            break;
        }
        let name = match grid.cell(at.0, at.1) {
            Cell::Empty => break,
            Cell::Number(v) => v.to_string(),
            Cell::Text(t) => t.clone(),
        };
        elements.push(format!("{prefix}{name}"));
    }
    if elements.is_empty() {
        return error(
            diagnostics,
            "E1008",
            format!(
                "the cell {} of the sheet `{sheet_name}` holds no element of a subscript range",
                cell_name(first.0, first.1)
            ),
            *first_span,
        );
    }
    Some(elements)
}
