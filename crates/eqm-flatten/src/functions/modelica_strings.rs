//! The string functions of the Modelica external C library (`ModelicaStrings_length`,
//! `_substring`, `_compare`, `_skipWhiteSpace`, `_scanReal`, `_scanInteger`), evaluated by EQM
//! when the model is compiled.
//!
//! Input: a call of an external function whose external clause names one of them, with the
//! values its inputs are given. Output: the values of its outputs, computed here in Rust as the
//! library's C functions compute them, when every String it reads is known at compile time (a
//! literal, or a String parameter or constant bound to one); a diagnostic naming the function
//! when one is not (EQM has no String values while a model runs). Calls of any other external
//! function are left to `external`, which compiles them from the installation's C sources
//! (`ModelicaStrings_hashString`, the random number generators). It deliberately implements only
//! these functions: the stream functions that print or read files at run time are not provided.

use crate::flattener::Flattener;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::ExprId;
use eqm_ir::flat::{Message, ScalarType};
use eqm_syntax::ast;

/// A value an argument or a result of a string function has at compile time.
pub(super) enum Known {
    Text(String),
    Number(f64),
    Integer(i64),
    Boolean(bool),
}

/// Whether the external C function `c_name` is one EQM evaluates when the model is compiled:
/// the string functions of the Modelica external C library, its functions that read files
/// (`ModelicaInternal_countLines`, `_readLine`, `_stat`), and EQM's own string functions
/// (`EqmStrings_*`) behind the functions the Modelica Standard Library writes in Modelica.
/// Every other function of the Modelica external C libraries (`ModelicaStrings_hashString`,
/// `ModelicaRandom_*`, ...) is compiled from the installation's C sources like any external
/// function, with its String inputs passed as the texts known when the model is compiled.
fn is_compile_time_function(c_name: &str) -> bool {
    matches!(
        c_name,
        "ModelicaStrings_length"
            | "ModelicaStrings_substring"
            | "ModelicaStrings_compare"
            | "ModelicaStrings_skipWhiteSpace"
            | "ModelicaStrings_scanReal"
            | "ModelicaStrings_scanInteger"
    ) || c_name.starts_with("EqmStrings_")
        || super::modelica_files::is_file_function(c_name)
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// When `class` is an external function whose clause calls one of the string functions of
    /// the Modelica external C library, the values of its outputs for the inputs `given` (in
    /// the order of `inputs`), and the first output's expression; `None` when it calls another
    /// function, or after a diagnostic at `span` (then `reported` is set).
    pub(super) fn modelica_string_call(
        &mut self,
        class: crate::resolve::ClassId,
        inputs: &[&'a str],
        given: &[Option<(Value, Span)>],
        span: Span,
        reported: &mut bool,
    ) -> Option<(ExprId, Vec<Value>)> {
        let call = self.table.get(class).sections().iter().find_map(|s| match s {
            ast::Section::External { call: Some(call), .. } => Some(call),
            _ => None,
        })?;
        let c_name = call.function.name.as_str();
        if !is_compile_time_function(c_name) {
            return None;
        }
        let outputs = self.output_names(class);
        // Each argument of the external call names an input (read) or an output (written).
        let mut read = Vec::new();
        let mut written = Vec::new();
        for a in &call.args {
            let ast::ExprKind::Ref(r) = &a.kind else { return None };
            let name = r.parts[0].name.name.as_str();
            if let Some(k) = inputs.iter().position(|i| *i == name) {
                let value = match given.get(k)? {
                    Some((value, _)) => value.clone(),
                    // An input the call leaves out has its declared default (`caseSensitive =
                    // true`), a literal in the library's declarations.
                    None => self.literal_default(class, name)?,
                };
                let known = match &value {
                    // A literal, or an expression of constants and parameters known now (`-1`,
                    // `n - 1`): those parameters become structural, fixed when compiled.
                    Value::Scalar(x, ScalarType::Integer | ScalarType::Boolean | ScalarType::Real) => {
                        self.known_value(*x).map(Known::Number)
                    }
                    _ => self.known_string(&value).and_then(|m| m.as_literal()).map(Known::Text),
                };
                let Some(known) = known else {
                    self.diagnostics.push(Diagnostic::error(
                        "E0325",
                        format!("`{c_name}` is evaluated when the model is compiled, and its input `{name}` is not known then"),
                        span,
                        "not known at compile time",
                    ).with_help("give it a literal, or a parameter or constant bound to one"));
                    *reported = true;
                    return None;
                };
                read.push(known);
            } else if let Some(k) = outputs.iter().position(|o| *o == name) {
                written.push(k);
            } else {
                return None;
            }
        }
        let evaluated = match self.evaluate_file_function(c_name, &read) {
            Some(result) => result,
            None => evaluate(c_name, &read),
        };
        let results = match evaluated {
            Ok(results) => results,
            Err(why) => {
                self.diagnostics.push(Diagnostic::error(
                    "E0325",
                    format!("`{c_name}`: {why}"),
                    span,
                    "this call",
                ));
                *reported = true;
                return None;
            }
        };
        // The result of the call is the output it assigns, then those passed as arguments.
        let mut order: Vec<usize> = call
            .output
            .as_ref()
            .and_then(|o| outputs.iter().position(|n| *n == o.parts[0].name.name))
            .into_iter()
            .collect();
        order.extend(written);
        if order.len() != results.len() || order.len() != outputs.len() {
            return None;
        }
        let mut values: Vec<Option<Value>> = vec![None; outputs.len()];
        for (k, result) in order.into_iter().zip(results) {
            // A C `int` result is the output's declared type, as C's conversions make it (a
            // wrapper may declare `output Boolean result` for `ModelicaStrings_compare`).
            let result = match (result, self.declared_builtin_type(class, outputs[k])) {
                (Known::Integer(v), Some(ScalarType::Boolean)) => Known::Boolean(v != 0),
                (Known::Integer(v), Some(ScalarType::Real)) => Known::Number(v as f64),
                (result, _) => result,
            };
            values[k] = Some(match result {
                Known::Text(text) => Value::Str(Message::literal(text)),
                Known::Integer(v) => Value::Scalar(self.model.exprs.int(v), ScalarType::Integer),
                Known::Number(v) => Value::Scalar(self.model.exprs.real(v), ScalarType::Real),
                Known::Boolean(b) => Value::Scalar(self.model.exprs.boolean(b), ScalarType::Boolean),
            });
        }
        let values: Vec<Value> = values.into_iter().collect::<Option<_>>()?;
        let first = match &values[0] {
            Value::Scalar(x, _) => *x,
            _ => self.model.exprs.int(0),
        };
        Some((first, values))
    }
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// The predefined type a variable `name` of the function `class` is declared with
    /// (`output Boolean result`), if it is one.
    fn declared_builtin_type(&self, class: crate::resolve::ClassId, name: &str) -> Option<ScalarType> {
        self.table.get(class).elements().find_map(|(e, _)| match e {
            ast::Element::Component(clause) if clause.components.iter().any(|d| d.name.name == name) => {
                match clause.type_name.parts.as_slice() {
                    [only] => crate::resolve::builtin_type(&only.name),
                    _ => None,
                }
            }
            _ => None,
        })
    }

    /// The default of the input `name` of the function `class` when it is a literal.
    fn literal_default(&mut self, class: crate::resolve::ClassId, name: &str) -> Option<Value> {
        let binding = self
            .function_components(class)
            .find(|(_, decl, _)| decl.name.name == name)
            .and_then(|(_, decl, _)| decl.modification.as_ref()?.binding.as_ref())?;
        match &binding.kind {
            ast::ExprKind::Bool(b) => Some(Value::Scalar(self.model.exprs.boolean(*b), ScalarType::Boolean)),
            ast::ExprKind::Integer(v) => Some(Value::Scalar(self.model.exprs.int(*v), ScalarType::Integer)),
            ast::ExprKind::Real(v) => Some(Value::Scalar(self.model.exprs.real(*v), ScalarType::Real)),
            ast::ExprKind::String(s) => Some(Value::Str(Message::literal(s.clone()))),
            _ => None,
        }
    }
}

/// The results of string function `name` of the Modelica external C library for `args`: its
/// return value, then the outputs it writes through pointers, in order.
fn evaluate(name: &str, args: &[Known]) -> Result<Vec<Known>, String> {
    use Known::{Boolean, Integer, Number, Text};
    let index = |v: f64| v as i64;
    Ok(match (name, args) {
        ("ModelicaStrings_length", [Text(s)]) => vec![Integer(s.len() as i64)],
        ("ModelicaStrings_substring", [Text(s), Number(start), Number(end)]) => {
            let (start, end) = (index(*start), index(*end));
            if start < 1 || start as usize > s.len().max(1) || end > s.len() as i64 {
                return Err(format!(
                    "the indices {start} to {end} are outside the string of length {}",
                    s.len()
                ));
            }
            let text = if end < start {
                ""
            } else {
                s.get(start as usize - 1..end as usize)
                    .ok_or("the indices split a character")?
            };
            vec![Text(text.to_string())]
        }
        ("ModelicaStrings_compare", [Text(a), Text(b), Number(case_sensitive)]) => {
            let order = if *case_sensitive != 0.0 {
                a.as_bytes().cmp(b.as_bytes())
            } else {
                a.to_ascii_lowercase().cmp(&b.to_ascii_lowercase())
            };
            // `Modelica.Utilities.Types.Compare`: Less, Equal, Greater.
            vec![Integer(match order {
                std::cmp::Ordering::Less => 1,
                std::cmp::Ordering::Equal => 2,
                std::cmp::Ordering::Greater => 3,
            })]
        }
        ("ModelicaStrings_skipWhiteSpace", [Text(s), Number(start)]) => {
            vec![Integer(skip_white_space(s, index(*start)) as i64)]
        }
        ("ModelicaStrings_scanReal", [Text(s), Number(start), Number(unsigned)]) => {
            let (next, value) = scan_number(s, index(*start), *unsigned != 0.0, true);
            vec![Integer(next), Number(value)]
        }
        ("ModelicaStrings_scanInteger", [Text(s), Number(start), Number(unsigned)]) => {
            let (next, value) = scan_number(s, index(*start), *unsigned != 0.0, false);
            vec![Integer(next), Integer(value as i64)]
        }
        ("EqmStrings_isEqual", [Text(a), Text(b), Number(case_sensitive)]) => {
            vec![Boolean(fold_case(a, *case_sensitive) == fold_case(b, *case_sensitive))]
        }
        ("EqmStrings_repeat", [Number(n), Text(s)]) => {
            let n = index(*n);
            if n < 0 {
                return Err(format!("a string cannot be repeated {n} times"));
            }
            if (n as u64).saturating_mul(s.len() as u64) > LONGEST_STRING as u64 {
                return Err(format!("{n} repetitions would be longer than {LONGEST_STRING} bytes"));
            }
            vec![Text(s.repeat(n as usize))]
        }
        ("EqmStrings_find", [Text(s), Text(search), Number(start), Number(case_sensitive)]) => {
            vec![Integer(find(s, search, index(*start), *case_sensitive)?)]
        }
        (
            "EqmStrings_replace",
            [
                Text(s),
                Text(search),
                Text(replacement),
                Number(start),
                Number(all),
                Number(case_sensitive),
            ],
        ) => vec![Text(replace(
            s,
            search,
            replacement,
            index(*start),
            *all != 0.0,
            *case_sensitive,
        )?)],
        (
            "EqmStrings_scanReal" | "EqmStrings_scanInteger",
            [Text(s), Number(start), Number(unsigned), Text(message)],
        ) => {
            let real = name == "EqmStrings_scanReal";
            let (next, value) = scan_number(s, index(*start), *unsigned != 0.0, real);
            if next == index(*start) {
                let what = if real { "Real number" } else { "Integer number" };
                return Err(format!(
                    "no {what} at index {} of \"{s}\"{}{message}",
                    index(*start),
                    if message.is_empty() { "" } else { ": " }
                ));
            }
            vec![if real { Number(value) } else { Integer(value as i64) }]
        }
        _ => {
            return Err(
                "EQM does not provide this function of the Modelica external C library, or not with these arguments"
                    .to_string(),
            );
        }
    })
}

/// The 1-based index of the first character at or after `start` that is not white space, or
/// one past the end.
fn skip_white_space(s: &str, start: i64) -> usize {
    let bytes = s.as_bytes();
    let mut k = start.max(1) as usize;
    while k <= bytes.len() && bytes[k - 1].is_ascii_whitespace() {
        k += 1;
    }
    k
}

/// A number at `start` (after white space): its value and the 1-based index after it, or
/// `(start, 0)` when there is none. A Real is a sign (unless `unsigned`), digits, an optional
/// fraction and an optional exponent; an Integer is a sign and digits not followed by a
/// fraction or an exponent.
fn scan_number(s: &str, start: i64, unsigned: bool, real: bool) -> (i64, f64) {
    let bytes = s.as_bytes();
    let begin = skip_white_space(s, start) - 1;
    let mut k = begin;
    if !unsigned && k < bytes.len() && matches!(bytes[k], b'+' | b'-') {
        k += 1;
    }
    let digits = |k: &mut usize| {
        let from = *k;
        while *k < bytes.len() && bytes[*k].is_ascii_digit() {
            *k += 1;
        }
        *k > from
    };
    let mut any = digits(&mut k);
    let fraction_or_exponent = k < bytes.len() && matches!(bytes[k], b'.' | b'e' | b'E');
    if !real && fraction_or_exponent {
        return (start, 0.0);
    }
    if real && k < bytes.len() && bytes[k] == b'.' {
        k += 1;
        any |= digits(&mut k);
    }
    if !any {
        return (start, 0.0);
    }
    if real && k < bytes.len() && matches!(bytes[k], b'e' | b'E') {
        let mut e = k + 1;
        if e < bytes.len() && matches!(bytes[e], b'+' | b'-') {
            e += 1;
        }
        if digits(&mut e) {
            k = e;
        }
    }
    match s[begin..k].parse::<f64>() {
        Ok(v) => (k as i64 + 1, v),
        Err(_) => (start, 0.0),
    }
}

/// The longest string `Strings.repeat` makes, in bytes: a longer one is a mistake in a model,
/// not a text it means to print.
const LONGEST_STRING: usize = 1 << 24;

/// `s` as compared: itself, or in ASCII lower case when letter case does not count.
fn fold_case(s: &str, case_sensitive: f64) -> std::borrow::Cow<'_, str> {
    if case_sensitive != 0.0 {
        std::borrow::Cow::Borrowed(s)
    } else {
        std::borrow::Cow::Owned(s.to_ascii_lowercase())
    }
}

/// `Strings.find`: the 1-based byte index of the first `search` in `s` at or after `start`,
/// or 0 when there is none.
fn find(s: &str, search: &str, start: i64, case_sensitive: f64) -> Result<i64, String> {
    if start < 1 || start as usize > s.len() + 1 {
        return Err(format!(
            "the start index {start} is outside the string of length {}",
            s.len()
        ));
    }
    let (s, search) = (fold_case(s, case_sensitive), fold_case(search, case_sensitive));
    let from = start as usize - 1;
    Ok(s.as_bytes()
        .get(from..)
        .and_then(|rest| {
            if search.is_empty() {
                return Some(0);
            }
            rest.windows(search.len()).position(|w| w == search.as_bytes())
        })
        .map_or(0, |k| (from + k + 1) as i64))
}

/// `Strings.replace`: `s` with the first (or every, when `all`) `search` at or after `start`
/// replaced by `replacement`.
fn replace(
    s: &str,
    search: &str,
    replacement: &str,
    start: i64,
    all: bool,
    case_sensitive: f64,
) -> Result<String, String> {
    if search.is_empty() {
        return Err("the string searched for is empty".to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut from = start;
    let mut copied = 0;
    loop {
        let at = find(s, search, from, case_sensitive)?;
        if at == 0 {
            break;
        }
        let at = at as usize - 1;
        let end = at + search.len();
        // A match found with letter case folded may split a character of `s` only when the
        // search string does, which `get` refuses.
        out.push_str(s.get(copied..at).ok_or("the match splits a character")?);
        out.push_str(replacement);
        copied = end;
        from = end as i64 + 1;
        if !all || end >= s.len() {
            break;
        }
    }
    out.push_str(s.get(copied..).ok_or("the match splits a character")?);
    Ok(out)
}
