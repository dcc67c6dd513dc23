//! Calls of functions of scalars with array arguments, applied element by element.
//!
//! Input: a checked call's arguments, where an input declared as a scalar is given an array
//! (`to_deg(phi[1:n])` with `input Real radian`). Output: the array of the results of one call
//! per element, the arrays' elements taken together and the scalar arguments passed to each,
//! as Modelica defines the vectorisation of a function with one output. It deliberately does
//! not vectorise a function with several outputs or an input declared as an array (a size
//! mismatch there stays the error it is).

use crate::flattener::Flattener;
use crate::function_table::FunctionRef;
use crate::resolve::{ClassId, TypeRef};
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::ExprId;
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The call applied element by element when an input declared as a scalar of a built-in
    /// type is given an array: `None` when no such argument is given; `Some(None)` after a
    /// reported error (arrays of different sizes, a function without exactly one scalar
    /// output).
    #[allow(clippy::type_complexity)]
    pub(super) fn vectorised_call(
        &mut self,
        class: ClassId,
        name: &str,
        declared: &[(&'a str, bool, Option<ClassId>)],
        given: &[Option<(Value, Span)>],
        passed: &[Option<FunctionRef<'a>>],
        span: Span,
    ) -> Option<Option<(ExprId, Vec<Value>)>> {
        let scalar_inputs = self.scalar_inputs(class);
        let mut dims: Option<Vec<usize>> = None;
        let mut vectorised = vec![false; given.len()];
        for (k, value) in given.iter().enumerate() {
            let Some((Value::Array(d, _, _), at)) = value else {
                continue;
            };
            if !scalar_inputs.get(k).copied().unwrap_or(false) || declared[k].2.is_some() {
                continue;
            }
            match &dims {
                Some(first) if first != d => {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        format!(
                            "`{name}` is applied element by element to arrays of different sizes: {first:?} and {d:?}"
                        ),
                        *at,
                        "sizes differ",
                    ));
                    return Some(None);
                }
                _ => dims = Some(d.clone()),
            }
            vectorised[k] = true;
        }
        let dims = dims?;
        let count = dims.iter().product::<usize>();
        let mut first_call = None;
        let mut elements = Vec::with_capacity(count);
        let mut ty = eqm_ir::flat::ScalarType::Real;
        for e in 0..count {
            let element_args: Vec<Option<(Value, Span)>> = given
                .iter()
                .zip(&vectorised)
                .map(|(value, &v)| match value {
                    Some((Value::Array(_, xs, t), at)) if v => Some((Value::Scalar(xs[e], *t), *at)),
                    other => other.clone(),
                })
                .collect();
            let Some((call, outputs)) = self.instance_call(class, name, declared, element_args, passed, span) else {
                return Some(None);
            };
            let Some(Value::Scalar(x, t)) = outputs.first().filter(|_| outputs.len() == 1) else {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    format!(
                        "`{name}` is given an array for a scalar input, which applies it element by element; that needs a function with one scalar output"
                    ),
                    span,
                    "not a function of one scalar output",
                ));
                return Some(None);
            };
            first_call.get_or_insert(call);
            ty = *t;
            elements.push(*x);
        }
        // No element: a call with the arrays' first elements does not exist; the empty array.
        let call = first_call.unwrap_or_else(|| self.model.exprs.int(0));
        Some(Some((call, vec![Value::Array(dims, elements, ty)])))
    }

    /// For each input of a function, in order, whether it is declared as a scalar of a
    /// built-in type (`input Real x;`, `input SI.Angle phi;`).
    fn scalar_inputs(&mut self, class: ClassId) -> Vec<bool> {
        let inputs: Vec<_> = self
            .function_components(class)
            .filter(|(clause, ..)| clause.prefixes.causality == ast::Causality::Input)
            .collect();
        inputs
            .into_iter()
            .map(|(clause, decl, part)| {
                clause.type_dims.is_empty()
                    && decl.dims.is_empty()
                    && self
                        .resolve_type(part, &clause.type_name, 0)
                        .is_some_and(|r| r.dims.is_empty() && matches!(r.target, TypeRef::Builtin(_)))
            })
            .collect()
    }
}
