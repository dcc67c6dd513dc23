//! Calls of functions of scalars with array arguments, applied element by element.
//!
//! Input: a checked call's arguments, where an input declared as a scalar is given an array
//! (`to_deg(phi[1:n])` with `input Real radian`), or an input declared as one record is given
//! an array of records (`Modelica.ComplexMath.abs(v)` with `v` a vector of `Complex`). Output:
//! the array of the results of one call per element (numbers, or records for a function whose
//! output is one record), the arrays' elements taken together and the scalar arguments passed
//! to each, as Modelica defines the vectorisation of a function with one output. It
//! deliberately does not vectorise a function with several outputs or an input declared as an
//! array (a size mismatch there stays the error it is).

use crate::flattener::Flattener;
use crate::function_table::{FunctionRef, PartialDerivative};
use crate::resolve::{ClassId, TypeRef};
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::ExprId;
use eqm_syntax::ast;

/// How an input is declared, as far as vectorisation asks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum InputShape {
    /// A scalar of a built-in type (`input Real x;`, `input SI.Angle phi;`).
    Scalar,
    /// One record (`input Complex c;`).
    Record,
    /// Anything else: an array, a functional input.
    Other,
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// The call applied element by element when an input declared as a scalar of a built-in
    /// type is given an array, or one declared as a record an array of records: `None` when no
    /// such argument is given; `Some(None)` after a reported error (arrays of different sizes, a
    /// function without exactly one scalar or record output). With `partial`, each element calls
    /// that partial derivative of the function (`der(f, x)`).
    #[allow(clippy::type_complexity)]
    pub(super) fn vectorised_call(
        &mut self,
        class: ClassId,
        name: &str,
        declared: &[(&'a str, bool, Option<ClassId>)],
        given: &[Option<(Value, Span)>],
        passed: &[Option<FunctionRef<'a>>],
        (partial, span): (Option<&PartialDerivative>, Span),
    ) -> Option<Option<(ExprId, Vec<Value>)>> {
        let shapes = self.input_shapes(class);
        let mut dims: Option<Vec<usize>> = None;
        let mut vectorised = vec![false; given.len()];
        for (k, value) in given.iter().enumerate() {
            let (d, at) = match (value, shapes.get(k)) {
                (Some((Value::Array(d, _, _), at)), Some(InputShape::Scalar)) => (d, at),
                (Some((Value::Records(d, _), at)), Some(InputShape::Record)) => (d, at),
                _ => continue,
            };
            if declared[k].2.is_some() {
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
        let mut records = Vec::new();
        let mut ty = eqm_ir::flat::ScalarType::Real;
        for e in 0..count {
            let element_args: Vec<Option<(Value, Span)>> = given
                .iter()
                .zip(&vectorised)
                .map(|(value, &v)| match value {
                    Some((Value::Array(_, xs, t), at)) if v => Some((Value::Scalar(xs[e], *t), *at)),
                    Some((Value::Records(_, rs), at)) if v => Some((rs[e].clone(), *at)),
                    other => other.clone(),
                })
                .collect();
            let Some((call, outputs)) =
                self.instance_call(class, name, declared, element_args, passed, (partial, span))
            else {
                return Some(None);
            };
            match outputs.as_slice() {
                [Value::Scalar(x, t)] => {
                    ty = *t;
                    elements.push(*x);
                }
                [record @ Value::Record(_)] => {
                    self.remember_output_record(class, &outputs);
                    records.push(record.clone());
                }
                _ => {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        format!(
                            "`{name}` is given an array for a scalar input, which applies it element by element; that needs a function with one scalar or record output"
                        ),
                        span,
                        "not a function of one scalar output",
                    ));
                    return Some(None);
                }
            }
            first_call.get_or_insert(call);
        }
        // No element: a call with the arrays' first elements does not exist; the empty array.
        let call = first_call.unwrap_or_else(|| self.model.exprs.int(0));
        let value = match records.is_empty() {
            true => Value::Array(dims, elements, ty),
            false => Value::Records(dims, records.into()),
        };
        Some(Some((call, vec![value])))
    }

    /// For each input of a function, in order, how it is declared (see [`InputShape`]).
    fn input_shapes(&mut self, class: ClassId) -> Vec<InputShape> {
        let inputs: Vec<_> = self
            .function_components(class)
            .filter(|(clause, _, part)| self.declared_causality(clause, *part) == ast::Causality::Input)
            .collect();
        inputs
            .into_iter()
            .map(|(clause, decl, part)| {
                if !clause.type_dims.is_empty() || !decl.dims.is_empty() {
                    return InputShape::Other;
                }
                match self.resolve_type(part, &clause.type_name, 0) {
                    Some(r) if r.dims.is_empty() && matches!(r.target, TypeRef::Builtin(_)) => InputShape::Scalar,
                    Some(r) if r.dims.is_empty() && matches!(r.target, TypeRef::Class(c) if self.is_record(c)) => {
                        InputShape::Record
                    }
                    _ => InputShape::Other,
                }
            })
            .collect()
    }
}
