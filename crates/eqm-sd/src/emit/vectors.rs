//! Vensim's `VECTOR SELECT(selection[d!], expression[d!], missing, action, error)` written out
//! over the elements its `!` subscripts name.
//!
//! Input: the call in the context of the element being defined. Output: an expression of the
//! selected elements (those whose selection value is not 0): the sum (action 0), product (1),
//! minimum (2), maximum (3) or mean (4) of `selection*expression`, the product of
//! `expression^selection` (5), or the sum, product, minimum, maximum or mean of the expression
//! itself (6 to 10); `missing` where nothing is selected. An action that is no number written
//! in the call is chosen during the run among the eleven; one outside them stops the run, as do
//! the checks the error action asks for (1: nothing selected, 2: more than one, 3: either).
//! A minimum or maximum is a chain of helper variables, one per element, so the text grows
//! linearly. A `d!` over a dimension the element being defined has runs over every element of
//! it, while a plain `d` beside it names the element being defined. An error action that is no
//! number from 0 to 3 is E1002.

use super::expr::{Writer, unsupported, wildcard_ranges};
use crate::ir::{Expr, ExprKind};
use eqm_diag::Diagnostic;

/// One selected element: the selection's value and the expression's, as text.
struct Item {
    selection: String,
    value: String,
}

impl Writer<'_, '_> {
    /// The value of a `VECTOR SELECT` call for the element being defined.
    pub(super) fn vector_select(&mut self, expr: &Expr, args: &[Expr]) -> Result<String, Diagnostic> {
        let literal = |e: &Expr| match e.kind {
            ExprKind::Number(v) => Some(v),
            _ => None,
        };
        let error_action = match literal(&args[4]) {
            Some(v) if [0.0, 1.0, 2.0, 3.0].contains(&v) => v as u8,
            _ => {
                return Err(unsupported(
                    &args[4],
                    "`VECTOR SELECT` with an error action that is not a number from 0 to 3",
                ));
            }
        };
        let items = self.selected_items(expr, &args[0], &args[1])?;
        let missing = self.real(&args[2])?;
        let indicator = |item: &Item| format!("(if noEvent({} <> 0) then 1 else 0)", item.selection);
        let count = format!("({})", items.iter().map(indicator).collect::<Vec<_>>().join(" + "));
        let name = "VECTOR SELECT";
        if matches!(error_action, 1 | 3) {
            self.helpers.equations.push(format!(
                "assert(noEvent({count} > 0), \"{name}: the selection holds only zeros\");"
            ));
        }
        if matches!(error_action, 2 | 3) {
            self.helpers.equations.push(format!(
                "assert(noEvent({count} <= 1), \"{name}: the selection holds more than one value that is not zero\");"
            ));
        }
        let value = match literal(&args[3]) {
            Some(v) if (0.0..=10.0).contains(&v) && v.fract() == 0.0 => self.selected(&items, v as u8, &count),
            Some(_) => {
                return Err(unsupported(
                    &args[3],
                    "`VECTOR SELECT` with a numerical action that is not a number from 0 to 10",
                ));
            }
            None => {
                // The action is known only during the run: each one written, the one chosen read.
                let action = self.real(&args[3])?;
                let known: Vec<String> = (0..=10).map(|a| format!("{action} == {a}")).collect();
                self.helpers.equations.push(format!(
                    "assert(noEvent({}), \"{name}: the numerical action is not a whole number from 0 to 10\");",
                    known.join(" or ")
                ));
                let mut text = "0".to_string();
                for a in (0..=10u8).rev() {
                    let v = self.selected(&items, a, &count);
                    text = format!("(if noEvent({action} == {a}) then {v} else {text})");
                }
                text
            }
        };
        Ok(format!("(if noEvent({count} == 0) then {missing} else {value})"))
    }

    /// The selection and the expression written for each element of the dimensions their
    /// `dim!` subscripts name, each of them bound to that element.
    fn selected_items(&mut self, expr: &Expr, selection: &Expr, expression: &Expr) -> Result<Vec<Item>, Diagnostic> {
        let mut ranges = Vec::new();
        wildcard_ranges(expr, selection, &mut ranges)?;
        wildcard_ranges(expr, expression, &mut ranges)?;
        let Some(elements) = self.scope.arrays.elements_of(&ranges) else {
            return Err(unsupported(expr, "`VECTOR SELECT` over an unknown dimension"));
        };
        let mut items = Vec::with_capacity(elements.len());
        for bound in elements {
            // Each `d!` is bound as `d!`: a plain `d` beside it still names the element of `d`
            // the equation defines (`x[d2] = VECTOR SELECT(s[d1!, d2], e[d2!], ...)` runs over
            // every element of `d2` in `e` while `s` stays at the one being defined).
            let mut context = self.element.clone();
            context.extend(bound.into_iter().map(|(d, i)| (format!("{d}!"), i)));
            let mut writer = Writer {
                scope: self.scope,
                helpers: &mut *self.helpers,
                element: &context,
            };
            let selection = format!("({})", writer.real(selection)?);
            let value = format!("({})", writer.real(expression)?);
            items.push(Item { selection, value });
        }
        if items.is_empty() {
            return Err(unsupported(expr, "`VECTOR SELECT` of no elements"));
        }
        Ok(items)
    }

    /// The value of numerical action `action` over the selected items (the caller gives
    /// `missing` where the count is 0).
    fn selected(&mut self, items: &[Item], action: u8, count: &str) -> String {
        let term = |item: &Item| match action {
            0..=4 => format!("{}*{}", item.selection, item.value),
            5 => format!("{}^{}", item.value, item.selection),
            _ => item.value.clone(),
        };
        let guarded = |item: &Item, neutral: &str| {
            format!(
                "(if noEvent({} <> 0) then {} else {neutral})",
                item.selection,
                term(item)
            )
        };
        match action {
            0 | 6 => format!(
                "({})",
                items.iter().map(|i| guarded(i, "0")).collect::<Vec<_>>().join(" + ")
            ),
            1 | 5 | 7 => format!(
                "({})",
                items.iter().map(|i| guarded(i, "1")).collect::<Vec<_>>().join("*")
            ),
            4 | 10 => format!(
                "({})/max({count}, 1)",
                items.iter().map(|i| guarded(i, "0")).collect::<Vec<_>>().join(" + ")
            ),
            _ => {
                // The least (2, 8) or greatest (3, 9) selected term: a chain of helpers, each
                // the extreme so far, the first selected term starting it.
                let f = if matches!(action, 2 | 8) { "min" } else { "max" };
                let mut so_far = "0".to_string();
                let mut seen = "0".to_string();
                for item in items {
                    let id = self.helpers.fresh("vector select");
                    self.helpers
                        .declarations
                        .push(format!("Real {id} \"The {f} of a VECTOR SELECT so far\";"));
                    self.helpers.equations.push(format!(
                        "{id} = if noEvent({sel} <> 0) then (if noEvent({seen} == 0) then {t} else {f}({so_far}, {t})) else {so_far};",
                        sel = item.selection,
                        t = term(item),
                    ));
                    seen = format!("{seen} + (if noEvent({} <> 0) then 1 else 0)", item.selection);
                    so_far = id;
                }
                so_far
            }
        }
    }
}
