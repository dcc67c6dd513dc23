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
//! The value is computed by a function the model holds, of the selections and the
//! expressions as two arrays, so the text grows linearly with the elements. A `d!` over a
//! dimension the element being defined has runs over every element of it, while a plain `d`
//! beside it names the element being defined. An error action that is no number from 0 to 3 is
//! E1002.

use super::expr::{ModelFunction, Writer, unsupported, wildcard_ranges};
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
        let name = "VECTOR SELECT";
        if matches!(error_action, 1..=3) {
            let indicator = |item: &Item| format!("(if noEvent({} <> 0) then 1 else 0)", item.selection);
            let count = format!("({})", items.iter().map(indicator).collect::<Vec<_>>().join(" + "));
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
        }
        let action = match literal(&args[3]) {
            Some(v) if (0.0..=10.0).contains(&v) && v.fract() == 0.0 => super::expr::number(v),
            Some(_) => {
                return Err(unsupported(
                    &args[3],
                    "`VECTOR SELECT` with a numerical action that is not a number from 0 to 10",
                ));
            }
            None => {
                // The action is known only during the run: the function reads it.
                let action = self.real(&args[3])?;
                let known: Vec<String> = (0..=10).map(|a| format!("{action} == {a}")).collect();
                self.helpers.equations.push(format!(
                    "assert(noEvent({}), \"{name}: the numerical action is not a whole number from 0 to 10\");",
                    known.join(" or ")
                ));
                action
            }
        };
        let function = self.model_function(
            ModelFunction::VectorSelect,
            "vector select",
            "Vensim's VECTOR SELECT",
            SELECT_BODY,
        );
        let list = |part: fn(&Item) -> &str| items.iter().map(part).collect::<Vec<_>>().join(", ");
        Ok(format!(
            "{function}({{{}}}, {{{}}}, {missing}, {action})",
            list(|i| i.selection.as_str()),
            list(|i| i.value.as_str())
        ))
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
}

/// The value of `VECTOR SELECT` over the elements whose selection is not 0, in their order:
/// the sum (action 0), product (1), least (2), greatest (3) or mean (4) of
/// `selection*expression`, the product of `expression^selection` (5), or the sum, product,
/// least, greatest or mean of the expression (6 to 10); `missing` where none is selected.
const SELECT_BODY: &str = "    input Real selection[:];
    input Real expression[size(selection, 1)];
    input Real missing;
    input Real action;
    output Real y;
  protected
    Integer count;
    Real term;
  algorithm
    count := 0;
    y := missing;
    for i in 1:size(selection, 1) loop
      if selection[i] <> 0 then
        if action <= 4 then
          term := selection[i]*expression[i];
        elseif action == 5 then
          term := expression[i]^selection[i];
        else
          term := expression[i];
        end if;
        if count == 0 then
          y := term;
        elseif action == 0 or action == 4 or action == 6 or action == 10 then
          y := y + term;
        elseif action == 1 or action == 5 or action == 7 then
          y := y*term;
        elseif action == 2 or action == 8 then
          y := min(y, term);
        else
          y := max(y, term);
        end if;
        count := count + 1;
      end if;
    end for;
    if count > 0 and (action == 4 or action == 10) then
      y := y/count;
    end if;
";
