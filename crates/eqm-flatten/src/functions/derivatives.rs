//! The `derivative` annotations of functions.
//!
//! Input: a function instance just made for a call, and its class's annotation. Output: one
//! [`FunctionDerivative`] in the flat model for each `derivative(...) = f_der` the class
//! declares, with the derivative function instantiated for the same argument sizes. Index
//! reduction uses them to differentiate a call (Modelica's rule: the derivative function takes
//! the inputs of the function, then the derivatives of its Real inputs other than those
//! declared `noDerivative` or `zeroDerivative`). An annotation that names no function, or whose
//! function does not take and return what the rule says, is left out without a diagnostic:
//! index reduction then differentiates the function's body, or says why it cannot, only when
//! a call needs it. This module deliberately neither differentiates nor calls anything.

use crate::flattener::Flattener;
use crate::function_table::{FunctionalKey, KnownIntegers, KnownStrings};
use crate::modifier::Scope;
use crate::resolve::ClassId;
use eqm_ir::expr::FuncId;
use eqm_ir::flat::{FunctionDerivative, ScalarType};
use eqm_syntax::ast;

/// One `derivative` annotation as written: the function named, its order and the inputs named
/// `noDerivative` and `zeroDerivative`.
struct Written<'a> {
    function: &'a ast::Expr,
    order: u32,
    no_derivative: Vec<&'a str>,
    zero_derivative: Vec<&'a str>,
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// Records the `derivative` annotations of function class `class`, instance `id`, made for
    /// the sizes `sizes` of its inputs declared with `:`, the known strings `strings` and the
    /// values `integers` of its Integer inputs that give sizes (the derivative function is
    /// instantiated for the same).
    pub(super) fn derivative_annotations(
        &mut self,
        class: ClassId,
        id: FuncId,
        sizes: &[Vec<usize>],
        functionals: &[FunctionalKey],
        known: (&KnownStrings, &KnownIntegers),
    ) {
        // A function taking functions is instantiated per function passed; its derivative
        // would need the same, which no annotation can say.
        if !functionals.is_empty() {
            return;
        }
        let annotation = match &self.table.get(class).def.body {
            ast::ClassBody::Long { annotation, .. } | ast::ClassBody::Short { annotation, .. } => annotation.as_ref(),
            ast::ClassBody::Enumeration { .. } => None,
        };
        let Some(annotation) = annotation else {
            return;
        };
        let written: Vec<Written<'a>> = annotation.modification.arguments.iter().filter_map(written).collect();
        for w in written {
            if let Some(d) = self.derivative_function(class, id, sizes, known, &w) {
                self.model.function_derivatives.push(d);
            }
        }
    }

    /// The derivative that annotation `w` of function `id` declares, instantiated; `None` when
    /// it does not fit Modelica's rule (any diagnostic of instantiating it is dropped: the
    /// annotation is then as good as absent).
    fn derivative_function(
        &mut self,
        class: ClassId,
        id: FuncId,
        sizes: &[Vec<usize>],
        (strings, integers): (&KnownStrings, &KnownIntegers),
        w: &Written<'a>,
    ) -> Option<FunctionDerivative> {
        let ast::ExprKind::Ref(reference) = &w.function.kind else {
            return None;
        };
        let scope = Scope { instance: None, class };
        let derivative_class = self.class_named(reference, scope)?;
        let signature = self.functions.signatures[id.0 as usize].clone();
        let objects = self.object_components(class);
        let open: Vec<bool> = self.input_declarations(class).iter().map(|d| d.1).collect();
        // The inputs whose derivatives an order-1 derivative function takes, in order, with the
        // sizes of those declared with `:`.
        let mut differentiated = Vec::new();
        let mut zero_derivative = Vec::new();
        let mut derivative_sizes = sizes.to_vec();
        let mut open_sizes = sizes.iter();
        for (k, (name, var, _)) in signature.inputs.iter().enumerate() {
            let size = if open.get(k).copied().unwrap_or(false) {
                open_sizes.next()
            } else {
                None
            };
            if w.zero_derivative.contains(&name.as_str()) {
                zero_derivative.extend(&var.slots);
                continue;
            }
            let excluded = w.no_derivative.contains(&name.as_str()) || objects.contains(&name.as_str());
            if var.ty != ScalarType::Real || excluded || var.function.is_some() {
                continue;
            }
            differentiated.extend(&var.slots);
            derivative_sizes.extend(size.cloned());
        }
        let mark = self.diagnostics.len();
        let derivative = self.function_for(
            derivative_class,
            &derivative_sizes,
            &[],
            strings.clone(),
            integers.clone(),
            Vec::new(),
        );
        let derivative = match derivative {
            Some(d) if self.diagnostics.len() == mark => d,
            _ => {
                self.diagnostics.truncate(mark);
                return None;
            }
        };
        let inputs = self.model.functions[id.0 as usize].inputs;
        let derivative_inputs = self.model.functions[derivative.0 as usize].inputs;
        let extra = derivative_inputs.checked_sub(inputs)?;
        if w.order > 1 {
            // A derivative of order n is declared on the derivative of order n - 1: it takes
            // that function's inputs, then the derivatives of the last ones, which are the
            // derivatives of order n - 1 of the original function's inputs.
            differentiated = (inputs - extra..inputs).collect();
        }
        (differentiated.len() == extra as usize).then_some(FunctionDerivative {
            function: id,
            derivative,
            order: w.order,
            differentiated,
            zero_derivative,
        })
    }
}

/// The `derivative` annotation an annotation argument is, if it is one.
fn written(argument: &ast::ModArgument) -> Option<Written<'_>> {
    if argument.name.parts.len() != 1 || argument.name.parts[0].name != "derivative" {
        return None;
    }
    let modification = argument.modification.as_ref()?;
    let function = modification.binding.as_ref()?;
    let mut w = Written {
        function,
        order: 1,
        no_derivative: Vec::new(),
        zero_derivative: Vec::new(),
    };
    for option in modification.class_modification.iter().flat_map(|m| &m.arguments) {
        let Some(value) = option.modification.as_ref().and_then(|m| m.binding.as_ref()) else {
            continue;
        };
        let named = match &value.kind {
            ast::ExprKind::Ref(r) if r.parts.len() == 1 => Some(r.parts[0].name.name.as_str()),
            _ => None,
        };
        match (option.name.parts.last().map(|p| p.name.as_str()), &value.kind, named) {
            (Some("order"), ast::ExprKind::Integer(n), _) => w.order = u32::try_from(*n).ok()?,
            (Some("noDerivative"), _, Some(name)) => w.no_derivative.push(name),
            (Some("zeroDerivative"), _, Some(name)) => w.zero_derivative.push(name),
            _ => {}
        }
    }
    Some(w)
}
