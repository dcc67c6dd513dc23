//! Partial derivatives of functions declared as classes: `function f_T = der(f, T);`.
//!
//! Input: a function instance just made for a call of such a class, and the inputs the
//! definition names (those of nested definitions first: `der(der(f, x), y)` is the derivative
//! by `y` of the derivative by `x`). Output: a function instance with the same inputs and one
//! Real output, whose body assigns the partial derivative of `f`'s output, computed by
//! eqm-ir's symbolic differentiation of `f`'s body run on its own inputs; one instance per
//! function instance and list of inputs. It deliberately does not differentiate a body whose
//! value is not one expression (a loop over a range known only during the run, an early
//! `return`): that is a diagnostic naming the function, as for index reduction.

use crate::flattener::Flattener;
use crate::function_table::PartialDerivative;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::FuncId;
use eqm_ir::flat::{self, Place, ScalarType, Statement};
use eqm_ir::symbolic::{FunctionCalls, partial_derivative_of_body};
use eqm_syntax::ast;

/// The function and the inputs a short definition `der(f, x, y)` names, when `body` is one
/// (Modelica reserves `der`, so no class of that name can be meant).
pub(crate) fn partial_derivative_definition(body: &ast::ClassBody) -> Option<(&ast::Name, Vec<String>)> {
    let ast::ClassBody::Short { base, modification, .. } = body else {
        return None;
    };
    if base.global || base.parts.len() != 1 || base.parts[0].name != "der" {
        return None;
    }
    let (function, inputs) = modification.as_ref()?.arguments.split_first()?;
    let inputs = inputs.iter().map(|a| {
        a.name
            .parts
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(".")
    });
    Some((&function.name, inputs.collect()))
}

/// `der(f, x, y)` as written, for messages and the derivative function's name.
fn written(function: &str, by: &[String]) -> String {
    let names: Vec<&str> = std::iter::once(function).chain(by.iter().map(String::as_str)).collect();
    format!("der({})", names.join(", "))
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// The instance of the partial derivative `partial` of function instance `id` (see the
    /// module documentation), called at `span`; `None` after a diagnostic.
    pub(crate) fn partial_derivative_function(
        &mut self,
        id: FuncId,
        partial: &PartialDerivative,
        span: Span,
    ) -> Option<FuncId> {
        let key = (id, partial.by.clone());
        if let Some(known) = self.functions.partial_derivatives.get(&key) {
            return *known;
        }
        let made = self.make_partial_derivative(id, partial, span);
        self.functions.partial_derivatives.insert(key, made);
        made
    }

    fn make_partial_derivative(&mut self, id: FuncId, partial: &PartialDerivative, span: Span) -> Option<FuncId> {
        let signature = self.functions.signatures[id.0 as usize].clone();
        let name = self.model.functions[id.0 as usize].name.clone();
        let wrt = &partial.by;
        let slots = self.partial_derivative_inputs(&name, &signature, partial, span)?;
        let calls = FunctionCalls::new(
            &self.model.functions,
            &self.model.function_derivatives,
            &self.model.externals,
        );
        let value = match partial_derivative_of_body(&mut self.model.exprs, &calls, id, &slots) {
            Ok(value) => value,
            Err(why) => {
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0317",
                        format!("the partial derivative of `{name}` cannot be computed: {why}"),
                        span,
                        "called here",
                    )
                    .with_label(partial.definition, "the partial derivative declared here")
                    .with_help("write the derivative as a function of its own"),
                );
                return None;
            }
        };
        let original = &self.model.functions[id.0 as usize];
        let output = original.inputs;
        let function = flat::Function {
            name: written(&name, wrt),
            inputs: original.inputs,
            outputs: 1,
            // The inputs (with their defaults) and the output; the body needs no other slot.
            slots: original.slots[..=output as usize].to_vec(),
            body: vec![Statement::Assign {
                target: Place::Local(output),
                value,
                span,
            }],
            span: original.span,
        };
        let derivative = FuncId(self.model.functions.len() as u32);
        self.model.functions.push(function);
        self.functions.signatures.push(signature);
        Some(derivative)
    }

    /// The input slots of the inputs `partial` is taken by in a function of `signature`, named
    /// `name`: each must be a scalar Real input, and the function must have one output, a
    /// scalar Real (Modelica's rule for a partial derivative); `None` after a diagnostic at the
    /// definition, with the call at `span`.
    fn partial_derivative_inputs(
        &mut self,
        name: &str,
        signature: &crate::function_table::Signature,
        partial: &PartialDerivative,
        span: Span,
    ) -> Option<Vec<u32>> {
        let wrt = &partial.by;
        let scalar_real = |var: &crate::function_table::LocalVar| {
            var.ty == ScalarType::Real && var.dims.is_empty() && var.record.is_none() && var.slots.len() == 1
        };
        let mut rule = |why: String| {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0217",
                    format!(
                        "`{}` is not a partial derivative Modelica defines: {why}",
                        written(name, wrt)
                    ),
                    partial.definition,
                    "declared here",
                )
                .with_label(span, "called here"),
            );
            None
        };
        if wrt.is_empty() {
            return rule("it names no input to differentiate by".into());
        }
        if !matches!(&signature.outputs[..], [(_, var)] if scalar_real(var)) {
            return rule(format!("`{name}` must have exactly one output, a scalar Real"));
        }
        let mut slots = Vec::with_capacity(wrt.len());
        for input in wrt {
            match signature.inputs.iter().find(|(n, ..)| n == input) {
                Some((_, var, _)) if scalar_real(var) => slots.push(var.slots[0]),
                Some(_) => return rule(format!("`{input}` is not a scalar Real input")),
                None => return rule(format!("`{name}` has no input `{input}`")),
            }
        }
        Some(slots)
    }

    /// E0317 at `span` when `callee` is a partial derivative passed as a functional argument,
    /// which EQM does not support; `callee` otherwise.
    pub(crate) fn not_a_passed_partial_derivative(
        &mut self,
        callee: crate::function_table::FunctionRef<'a>,
        span: Span,
    ) -> Option<crate::function_table::FunctionRef<'a>> {
        if callee.partial.is_none() {
            return Some(callee);
        }
        self.diagnostics.push(
            Diagnostic::error(
                "E0317",
                "a partial derivative of a function (`der(f, x)`) passed as a functional argument is not supported",
                span,
                "partial derivative passed",
            )
            .with_help("call it inside a function of your own and pass that function"),
        );
        None
    }
}
