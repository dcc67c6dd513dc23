//! The sizes of the values bindings give array components: the size `:` stands for
//! (`parameter Real p[:] = {1, 2, 3}`), and the check that a binding's value has the
//! component's sizes (`Real y[2] = {1, 2, 3}` is E0304, not two of the three values).
//!
//! Input: a component's modifier (its binding with the element and field selections that the
//! enclosing arrays and records made) and its declared sizes. Output: the size of one
//! dimension, or whether the value fits, with E0304 where it does not; and the sizes a binding
//! reads of its own component (`Real x[2, 3] = ones(size(x, 1), size(x, 2))`) before that
//! component exists. It deliberately leaves a scalar binding of an array alone, and a binding
//! it cannot evaluate here to the code that evaluates it element by element.

use crate::flattener::Flattener;
use crate::modifier::{Modifier, Scope};
use crate::value::{self, Value};
use eqm_diag::Diagnostic;
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The sizes of the component `array` names when it is one being made in the instance of
    /// `scope` (its binding is being evaluated): its sizes are known before its value.
    pub(crate) fn sizes_being_declared(&self, array: &ast::Expr, scope: Scope) -> Option<Vec<usize>> {
        let ast::ExprKind::Ref(r) = &array.kind else {
            return None;
        };
        let [part] = r.parts.as_slice() else {
            return None;
        };
        let name = part.name.name.as_str();
        let shadowed = self.context.iterators.iter().any(|i| i.name == name)
            || self.context.frames.last().is_some_and(|f| f.locals.contains_key(name));
        if r.global || !part.subscripts.is_empty() || shadowed {
            return None;
        }
        let instance = scope.instance?;
        (self.declaring.iter().rev())
            .find(|(i, declared, _)| *i == instance && *declared == name)
            .map(|(_, _, dims)| dims.clone())
    }

    /// The value `modifier`'s binding gives the component: the binding's own value, or the
    /// element of it an array component's element picks, or the field of it a record
    /// component's field takes (`CellData d = data` gives `d.table` the value of
    /// `data.table`). `Ok(None)` without a binding or where no part can be picked; `Err` when
    /// the binding cannot be evaluated (already reported).
    fn bound_value(&mut self, modifier: &Modifier<'a>) -> Result<Option<Value>, ()> {
        let Some(binding) = modifier.binding.as_ref() else {
            return Ok(None);
        };
        let whole = self.binding_value(binding).ok_or(())?;
        let Ok(mut value) = crate::variables::select_elements(&whole, &binding.select) else {
            return Ok(None);
        };
        for (field, after) in &binding.fields {
            let value::Value::Record(fields) = &value else {
                return Ok(None);
            };
            let Some((_, v)) = fields.iter().find(|(n, _)| n == field) else {
                return Ok(None);
            };
            let Ok(part) = crate::variables::select_elements(v, after) else {
                return Ok(None);
            };
            value = part;
        }
        Ok(Some(value))
    }

    /// The size of dimension `k` of the value that `modifier`'s binding gives, if it has one
    /// (see [`Self::bound_value`]).
    pub(crate) fn binding_size(&mut self, modifier: &Modifier<'a>, k: usize) -> Result<Option<usize>, ()> {
        Ok(self.bound_value(modifier)?.and_then(|v| v.dims().get(k).copied()))
    }

    /// Whether the array value `modifier`'s binding gives has the component's sizes `dims`:
    /// E0304 otherwise, as Modelica requires (a binding too long or too short would leave
    /// values out or elements unbound). A scalar component, or a binding whose value is a
    /// scalar, is left alone.
    pub(crate) fn binding_fits(&mut self, modifier: &Modifier<'a>, dims: &[usize], decl: &ast::ComponentDecl) -> bool {
        if dims.is_empty() || modifier.binding.is_none() {
            return true;
        }
        let Ok(Some(value)) = self.bound_value(modifier) else {
            return true;
        };
        let given = value.dims();
        if given.is_empty() || given == dims {
            return true;
        }
        let span = modifier.binding.as_ref().map_or(decl.name.span, |b| b.expr.span);
        self.diagnostics.push(
            Diagnostic::error(
                "E0304",
                format!(
                    "`{}` has size {:?}, its binding a value of size {:?}",
                    decl.name.name, dims, given
                ),
                span,
                "a value of another size",
            )
            .with_label(decl.name.span, "declared here"),
        );
        false
    }
}
