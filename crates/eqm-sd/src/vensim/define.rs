//! One Vensim variable's definition built from the entries that define it.
//!
//! Input: the entries of one variable (one for a scalar or an apply-to-all array, several for
//! element-wise definitions) with the dimensions the first pass gave it. Output: a
//! [`Variable`] with its kind (stock, auxiliary, lookup), its [`Definition`] (uniform where one
//! equation covers the dimensions, else element-wise, lists of numbers and `:EXCEPT:` written
//! out element by element, a range used as a value given the number of each element), units,
//! range and comment. Diagnostics: E1006 for a list of numbers that does not fit, or a range
//! on the right that stands for none of the left-hand side's; E1007 for elements defined
//! twice; E1002 for a variable that is a stock for some elements and not others. This module
//! does not check the names an equation references: the parser does.

use super::entry::{self, Lhs, Named, Right};
use super::lexer::{self, Token};
use super::parser::{Parsed, Parser, RANGE_VALUE, Scope};
use crate::ir::{Definition, Equation, Expr, ExprKind, Kind, Subscript, Variable};
use crate::names::canonical;
use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, Span};
use std::collections::HashSet;

/// One entry that defines the variable.
pub struct ItemView<'a> {
    pub lhs: &'a Lhs,
    pub tokens: &'a [Token],
    pub rhs: usize,
    pub is_lookup: bool,
    pub units: Option<(usize, usize)>,
    pub comment: Option<(usize, usize)>,
    pub end: usize,
}

/// Builds a variable, or `None` when one of its equations could not be read (the diagnostic
/// is already given).
pub fn variable(
    file: FileId,
    text: &str,
    items: Vec<ItemView>,
    dims: &[String],
    scope: &Scope,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Variable> {
    let first = items.first()?;
    let name = first.lhs.name.clone();
    if let Some(other) = items.iter().find(|i| i.is_lookup != first.is_lookup) {
        diagnostics.push(Diagnostic::error(
            "E1007",
            format!("`{}` is defined both as a lookup table and by an equation", name.name),
            other.lhs.name.span,
            "defined again here",
        ));
        return None;
    }
    let mut equations: Vec<(Vec<String>, Equation)> = Vec::new();
    let mut uniform = items.len() == 1 && first.lhs.except.is_empty();
    let mut stocks = 0;
    let mut failed = false;
    let mut seen: HashSet<Vec<String>> = HashSet::new();
    for item in &items {
        let mut p = Parser::new(&item.tokens[item.rhs..], text, item.end, file, scope, diagnostics);
        let right = if item.is_lookup {
            lookup_table(&mut p)
        } else {
            entry::right(&mut p)
        };
        let Ok(right) = right else {
            failed = true;
            continue;
        };
        let is_stock = matches!(right, Right::Stock { .. });
        let is_list = matches!(right, Right::Numbers { .. } | Right::Data(_));
        match item_equations(item, items.len() == 1, right, scope, &mut seen, diagnostics) {
            Some(mut found) => {
                stocks += usize::from(is_stock);
                // A list of numbers over dimensions is written out element by element.
                uniform = uniform && (dims.is_empty() || !is_list);
                equations.append(&mut found);
            }
            None => failed = true,
        }
    }
    if failed {
        return None;
    }
    if stocks != 0 && stocks != items.len() {
        diagnostics.push(Diagnostic::error(
            "E1002",
            format!(
                "`{}` is a stock (`INTEG`) for some elements and not for others, which is not supported",
                name.name
            ),
            name.span,
            "not supported",
        ));
        return None;
    }
    let kind = if items.iter().all(|i| i.is_lookup) {
        Kind::Lookup
    } else if stocks > 0 {
        Kind::Stock {
            inflows: Vec::new(),
            outflows: Vec::new(),
            non_negative: false,
            special: None,
        }
    } else {
        Kind::Aux
    };
    let covers_all = equations.len() == 1
        && equations[0].0.len() == dims.len()
        && equations[0]
            .0
            .iter()
            .zip(dims)
            .all(|(a, b)| canonical(a) == canonical(b));
    let definition = if uniform && covers_all {
        Definition::Uniform(equations.pop().expect("one equation").1)
    } else {
        Definition::Elements(equations)
    };
    let (units, range) = items
        .iter()
        .find_map(|i| units_of(text, i.units))
        .unwrap_or((None, None));
    let doc = items.iter().find_map(|i| {
        let (a, b) = i.comment?;
        let doc = lexer::collapse_space(without_flag(&text[a..b]));
        (!doc.is_empty()).then_some(doc)
    });
    Some(Variable {
        name: name.name.clone(),
        kind,
        dimensions: dims.to_vec(),
        definition,
        units,
        doc,
        origin: name.span,
        position: None,
        range,
    })
}

/// The equations one entry gives, keyed by the subscripts they cover: the entry's own
/// subscripts, or element by element for a list of numbers or an entry with `:EXCEPT:`.
fn item_equations(
    item: &ItemView,
    alone: bool,
    right: Right,
    scope: &Scope,
    seen: &mut HashSet<Vec<String>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<(Vec<String>, Equation)>> {
    let name = &item.lhs.name;
    let key = subscripts_of(&item.lhs.subscripts, scope, diagnostics).ok()?;
    let mut data_call = None;
    let (mut equation, numbers_at) = match right {
        Right::Numbers { rows, span } => (None, Some((rows, span))),
        Right::Data(call) => {
            data_call = Some(call);
            (None, None)
        }
        Right::Value(e) => (Some(Equation::Value(e)), None),
        Right::Stock { rate, initial } => (
            Some(Equation::Stock {
                rate: Some(rate),
                initial,
            }),
            None,
        ),
        Right::Graph { input, graph } => (Some(Equation::Graph { input, graph }), None),
        Right::Table(graph) => (Some(Equation::Table(graph)), None),
        Right::Undefined => (Some(Equation::Undefined), None),
    };
    let ranges_as_values = match &equation {
        Some(equation) => {
            check_ranges(equation, &key, scope, diagnostics)?;
            range_values(equation)
        }
        None => Vec::new(),
    };
    // The elements one by one are needed only to find elements defined twice, and to write
    // an equation out element by element; a variable's only equation, over its ranges, needs
    // neither.
    if alone
        && item.lhs.except.is_empty()
        && ranges_as_values.is_empty()
        && let Some(equation) = equation.take()
    {
        return Some(vec![(key, equation)]);
    }
    let tuples = tuples(item.lhs, &key, scope, diagnostics).ok()?;
    if let Some(repeated) = tuples
        .iter()
        .find(|t| !seen.insert(t.iter().map(|e| canonical(e)).collect()))
    {
        let what = if repeated.is_empty() {
            format!("`{}`", name.name)
        } else {
            format!("`{}[{}]`", name.name, repeated.join(","))
        };
        diagnostics.push(Diagnostic::error(
            "E1007",
            format!("{what} is defined twice"),
            name.span,
            "defined again here",
        ));
        return None;
    }
    let equation = match (equation, numbers_at) {
        (Some(equation), _) => equation,
        (None, Some((rows, span))) => return numbers(name, &key, rows, span, tuples, scope, diagnostics),
        (None, None) => {
            let call = data_call?;
            return super::data::equations(&call, item.lhs.data, &key, tuples, scope, diagnostics);
        }
    };
    if item.lhs.except.is_empty() && ranges_as_values.is_empty() {
        return Some(vec![(key, equation)]);
    }
    // Written out element by element, each copy names the elements its left-hand side's
    // ranges stand for, and a range used as a value becomes the number of its element.
    let bound: Vec<(usize, String)> = key
        .iter()
        .enumerate()
        .filter(|(_, s)| scope.dimensions.contains_key(&canonical(s)))
        .map(|(i, s)| (i, s.clone()))
        .collect();
    let mut numbered = Vec::with_capacity(ranges_as_values.len());
    for (range, span) in ranges_as_values {
        let Some(at) = place_of_range(&range, &key, scope) else {
            diagnostics.push(Diagnostic::error(
                "E1002",
                format!(
                    "the subscript range `{range}` used as a value where it is not a subscript of `{}` is not supported",
                    name.name
                ),
                span,
                "not supported",
            ));
            return None;
        };
        numbered.push((range, at));
    }
    let copies = tuples.into_iter().map(|tuple| {
        let mut copy = equation.clone();
        let binding: Vec<(&str, &str)> = bound.iter().map(|(i, d)| (d.as_str(), tuple[*i].as_str())).collect();
        let values: Vec<(String, f64)> = numbered
            .iter()
            .map(|(range, at)| {
                let number = scope.element_numbers[&canonical(&tuple[*at])];
                (format!("{RANGE_VALUE}{range}"), number as f64)
            })
            .collect();
        bind_equation(&mut copy, &binding, &values);
        (tuple, copy)
    });
    Some(copies.collect())
}

/// Checks that each range an equation's references are subscripted with stands for a range
/// of its left-hand side: the same range, one mapped onto it, or one holding or held by it.
fn check_ranges(equation: &Equation, key: &[String], scope: &Scope, diagnostics: &mut Vec<Diagnostic>) -> Option<()> {
    let lhs: Vec<String> = key
        .iter()
        .map(|s| canonical(s))
        .filter(|k| scope.dimensions.contains_key(k))
        .collect();
    let mut stack: Vec<&Expr> = equation_exprs(equation);
    while let Some(e) = stack.pop() {
        match &e.kind {
            ExprKind::Number(_) => {}
            ExprKind::Variable { subscripts, .. } => {
                for subscript in subscripts {
                    let Subscript::Dimension(range) = subscript else {
                        continue;
                    };
                    let range_key = canonical(range);
                    if !lhs.iter().any(|l| scope.ranges_fit(&range_key, l)) {
                        diagnostics.push(Diagnostic::error(
                            "E1006",
                            format!("the subscript range `{range}` is not among the ranges the left-hand side is defined over, nor mapped onto one"),
                            e.span,
                            "subscripts do not fit",
                        ));
                        return None;
                    }
                }
            }
            ExprKind::Unary { .. } | ExprKind::Binary { .. } | ExprKind::If { .. } | ExprKind::Call { .. } => {
                stack.extend(e.operands())
            }
        }
    }
    Some(())
}

/// The expressions of an equation.
fn equation_exprs(equation: &Equation) -> Vec<&Expr> {
    match equation {
        Equation::Value(e) => vec![e],
        Equation::Stock { rate, initial } => rate.iter().chain([initial]).collect(),
        Equation::Graph { input, .. } => vec![input],
        Equation::Table(_) | Equation::Undefined => Vec::new(),
    }
}

/// The place of the left-hand side that a range used as a value stands for: the place
/// subscripted by that range, or by a range all of whose elements it holds.
fn place_of_range(range: &str, key: &[String], scope: &Scope) -> Option<usize> {
    let range_key = canonical(range);
    if let Some(at) = key.iter().position(|s| canonical(s) == range_key) {
        return Some(at);
    }
    let (_, elements) = scope.dimensions.get(&range_key)?;
    let holds: HashSet<String> = elements.iter().map(|e| canonical(e)).collect();
    key.iter().position(|s| {
        scope
            .dimensions
            .get(&canonical(s))
            .is_some_and(|(_, inner)| inner.iter().all(|e| holds.contains(&canonical(e))))
    })
}

/// The ranges an equation uses as values (the parser's placeholders), with their spans.
fn range_values(equation: &Equation) -> Vec<(String, Span)> {
    let mut out = Vec::new();
    let mut stack = equation_exprs(equation);
    while let Some(e) = stack.pop() {
        match &e.kind {
            ExprKind::Number(_) => {}
            ExprKind::Variable { name, .. } => {
                if let Some(range) = name.strip_prefix(RANGE_VALUE)
                    && !out.iter().any(|(r, _)| r == range)
                {
                    out.push((range.to_string(), e.span));
                }
            }
            ExprKind::Unary { .. } | ExprKind::Binary { .. } | ExprKind::If { .. } | ExprKind::Call { .. } => {
                stack.extend(e.operands())
            }
        }
    }
    out
}

/// Replaces each subscript naming one of `binding`'s ranges by the element it is bound to,
/// and each placeholder of `values` by its number.
fn bind_equation(equation: &mut Equation, binding: &[(&str, &str)], values: &[(String, f64)]) {
    match equation {
        Equation::Value(e) => bind(e, binding, values),
        Equation::Stock { rate, initial } => {
            if let Some(rate) = rate {
                bind(rate, binding, values);
            }
            bind(initial, binding, values);
        }
        Equation::Graph { input, .. } => bind(input, binding, values),
        Equation::Table(_) | Equation::Undefined => {}
    }
}

/// [`bind_equation`] for one expression, walked with an explicit stack.
fn bind(expr: &mut Expr, binding: &[(&str, &str)], values: &[(String, f64)]) {
    let mut stack = vec![expr];
    while let Some(e) = stack.pop() {
        if let ExprKind::Variable { name, .. } = &e.kind
            && let Some((_, number)) = values.iter().find(|(placeholder, _)| placeholder == name)
        {
            e.kind = ExprKind::Number(*number);
            continue;
        }
        match &mut e.kind {
            ExprKind::Number(_) => {}
            ExprKind::Variable { subscripts, .. } => {
                for s in subscripts.iter_mut() {
                    if let Subscript::Dimension(d) = s
                        && let Some((_, element)) = binding.iter().find(|(range, _)| range == d)
                    {
                        *s = Subscript::Element(element.to_string());
                    }
                }
            }
            ExprKind::Unary { operand, .. } => stack.push(operand),
            ExprKind::Binary { left, right, .. } => {
                stack.push(left);
                stack.push(right);
            }
            ExprKind::If {
                condition,
                then,
                otherwise,
            } => {
                stack.push(condition);
                stack.push(then);
                stack.push(otherwise);
            }
            ExprKind::Call { args, .. } => stack.extend(args.iter_mut()),
        }
    }
}

/// A list of numbers given to the elements a left-hand side covers, in row-major order;
/// where the list has several rows, each row must be as long as the last varying subscript.
fn numbers(
    name: &Named,
    key: &[String],
    rows: Vec<Vec<f64>>,
    span: Span,
    tuples: Vec<Vec<String>>,
    scope: &Scope,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<(Vec<String>, Equation)>> {
    let row_length = key
        .iter()
        .rev()
        .find_map(|s| scope.dimensions.get(&canonical(s)).map(|(_, e)| e.len()));
    let rows_fit = rows.len() <= 1 || row_length.is_some_and(|n| rows.iter().all(|r| r.len() == n));
    let values: Vec<f64> = rows.into_iter().flatten().collect();
    if values.len() != tuples.len() || !rows_fit {
        let message = if rows_fit {
            format!(
                "{} numbers given for the {} elements of `{}` defined here",
                values.len(),
                tuples.len(),
                name.name
            )
        } else {
            format!(
                "the rows of numbers given for `{}` do not match its last subscript range",
                name.name
            )
        };
        diagnostics.push(Diagnostic::error(
            "E1006",
            message,
            span,
            "the numbers do not fit the subscripts",
        ));
        return None;
    }
    let number = |value| Expr {
        kind: ExprKind::Number(value),
        span,
    };
    Some(
        tuples
            .into_iter()
            .zip(values)
            .map(|(tuple, value)| (tuple, Equation::Value(number(value))))
            .collect(),
    )
}

/// A comment without Vensim's trailing `~ :SUPPLEMENTARY` flag (which marks a variable the
/// model does not need; it does not change the results).
fn without_flag(comment: &str) -> &str {
    match comment.rfind('~') {
        Some(at) if comment[at + 1..].trim().to_ascii_uppercase().starts_with(":SUP") => &comment[..at],
        _ => comment,
    }
}

/// A named lookup's table, through the end of its entry.
fn lookup_table(p: &mut Parser) -> Parsed<Right> {
    // `name = GET XLS LOOKUPS(...)`: the table is read from a file.
    if let Some(call) = super::data::call(p) {
        let call = call?;
        if p.pos < p.tokens.len() {
            let span = p.here();
            return Err(p.error("E1003", "unexpected text after the lookup table", span, "syntax error"));
        }
        return Ok(Right::Data(call));
    }
    // `name( GET XLS LOOKUPS(...) )`: the same, in a lookup's own parentheses.
    if p.peek_is("(") {
        p.pos += 1;
        if let Some(call) = super::data::call(p) {
            let call = call?;
            p.expect(")")?;
            if p.pos < p.tokens.len() {
                let span = p.here();
                return Err(p.error("E1003", "unexpected text after the lookup table", span, "syntax error"));
            }
            return Ok(Right::Data(call));
        }
        p.pos -= 1;
    }
    let graph = entry::table(p)?;
    if p.pos < p.tokens.len() {
        let span = p.here();
        return Err(p.error("E1003", "unexpected text after the lookup table", span, "syntax error"));
    }
    Ok(Right::Table(graph))
}

/// The left-hand side's subscripts as declared (a dimension's or an element's own spelling).
fn subscripts_of(subscripts: &[Named], scope: &Scope, diagnostics: &mut Vec<Diagnostic>) -> Result<Vec<String>, ()> {
    subscripts
        .iter()
        .map(|named| {
            let key = canonical(&named.name);
            if let Some((declared, _)) = scope.dimensions.get(&key) {
                return Ok(declared.clone());
            }
            if let Some(declared) = scope.elements.get(&key) {
                return Ok(declared.clone());
            }
            diagnostics.push(Diagnostic::error(
                "E1004",
                format!("unknown subscript `{}`", named.name),
                named.span,
                "no dimension or element of this name",
            ));
            Err(())
        })
        .collect()
}

/// The elements a subscript stands for: a range's elements, or the element itself.
fn elements_of(subscript: &str, scope: &Scope) -> Vec<String> {
    match scope.dimensions.get(&canonical(subscript)) {
        Some((_, elements)) => elements.clone(),
        None => vec![subscript.to_string()],
    }
}

/// Every element tuple a left-hand side defines, in row-major order, less its `:EXCEPT:`
/// tuples.
fn tuples(lhs: &Lhs, key: &[String], scope: &Scope, diagnostics: &mut Vec<Diagnostic>) -> Result<Vec<Vec<String>>, ()> {
    let mut excepted: HashSet<Vec<String>> = HashSet::new();
    for except in &lhs.except {
        if except.len() != key.len() {
            let span = except.first().map_or(lhs.name.span, |n| n.span);
            diagnostics.push(Diagnostic::error(
                "E1006",
                format!(
                    "`:EXCEPT:` names {} subscript(s) for {} dimension(s)",
                    except.len(),
                    key.len()
                ),
                span,
                "subscripts do not fit",
            ));
            return Err(());
        }
        let names = subscripts_of(except, scope, diagnostics)?;
        for tuple in product(&names, scope) {
            excepted.insert(tuple.iter().map(|e| canonical(e)).collect());
        }
    }
    let all = product(key, scope);
    Ok(all
        .into_iter()
        .filter(|t| !excepted.contains(&t.iter().map(|e| canonical(e)).collect::<Vec<_>>()))
        .collect())
}

/// The row-major product of the elements each subscript stands for.
fn product(subscripts: &[String], scope: &Scope) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    for subscript in subscripts {
        let elements = elements_of(subscript, scope);
        let mut next = Vec::with_capacity(out.len() * elements.len());
        for prefix in &out {
            for element in &elements {
                let mut tuple = prefix.clone();
                tuple.push(element.clone());
                next.push(tuple);
            }
        }
        out = next;
    }
    out
}

/// Units and the declared range from a units part (`Minutes [0, inf]`, `[0,?]`).
/// A variable's units and its declared range of values.
type UnitsAndRange = (Option<String>, Option<(f64, f64)>);

fn units_of(text: &str, units: Option<(usize, usize)>) -> Option<UnitsAndRange> {
    let (a, b) = units?;
    let raw = lexer::collapse_space(&text[a..b]);
    let (unit, range) = match (raw.rfind('['), raw.ends_with(']')) {
        (Some(open), true) => (
            raw[..open].trim().to_string(),
            parse_range(&raw[open + 1..raw.len() - 1]),
        ),
        _ => (raw.trim().to_string(), None),
    };
    if unit.is_empty() && range.is_none() {
        return None;
    }
    Some(((!unit.is_empty()).then_some(unit), range))
}

fn parse_range(inside: &str) -> Option<(f64, f64)> {
    let mut parts = inside.split(',').map(str::trim);
    let bound = |s: Option<&str>, open: f64| -> Option<f64> {
        match s? {
            "?" | "" => Some(open),
            s => s.parse::<f64>().ok().filter(|v| !v.is_nan()),
        }
    };
    let low = bound(parts.next(), f64::NEG_INFINITY)?;
    let high = bound(parts.next(), f64::INFINITY)?;
    Some((low, high))
}
