//! Functions as arguments of functions: functional inputs and partial application (Modelica 3.6
//! §12.4.2).
//!
//! Input: a function whose input is declared with a function type (`input Integrand f;`), the
//! arguments of its calls (`function g(a = 2)`, or a functional input passed on by name), and the
//! calls of functional inputs inside function bodies. Output: [`FunctionRef`]s (a function and
//! the values bound to some of its inputs) and [`FunctionalKey`]s, which choose the instance of
//! the called function: like the sizes of `:` inputs, the functions passed are known when the
//! model is compiled, so each combination gets its own flat function in which a call of the
//! functional input is an ordinary call of the function passed. The values bound by a partial
//! application become hidden inputs of that instance, so they may be any expression of the
//! caller (a parameter, a variable of the model). Nothing is interpreted at run time; the JIT
//! compiles these calls like any other. It deliberately does not support storing functions in
//! variables or returning them: Modelica has neither.

use crate::Flattener;
use crate::eval::Loops;
use crate::functions::LocalVar;
use crate::modifier::{Modifier, Scope};
use crate::resolve::ClassId;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::flat::ScalarType;
use eqm_syntax::ast;
use std::rc::Rc;

/// A function as it is called: its class (short definitions followed), the defaults that short
/// definitions and redeclarations give its inputs, and the inputs a partial application or a
/// functional input bound, with their values.
#[derive(Clone, Debug)]
pub(crate) struct FunctionRef<'a> {
    pub(crate) class: ClassId,
    pub(crate) defaults: Modifier<'a>,
    pub(crate) bound: Vec<(String, Value)>,
}

impl<'a> FunctionRef<'a> {
    pub(crate) fn plain(class: ClassId, defaults: Modifier<'a>) -> FunctionRef<'a> {
        FunctionRef {
            class,
            defaults,
            bound: Vec::new(),
        }
    }

    /// What a function instance specialises on when this function is passed to one of its
    /// functional inputs.
    pub(crate) fn key(&self) -> FunctionalKey {
        FunctionalKey {
            class: self.class,
            bound: self
                .bound
                .iter()
                .map(|(name, v)| (name.clone(), v.dims().to_vec(), type_code(v.ty())))
                .collect(),
        }
    }
}

/// The function passed to a functional input and the names, sizes and types of the inputs it
/// binds: part of the key of a function instance.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct FunctionalKey {
    pub(crate) class: ClassId,
    pub(crate) bound: Vec<(String, Vec<usize>, u8)>,
}

/// A functional input inside the function instance made for it: the function passed, and the
/// hidden inputs that carry the values it binds.
#[derive(Clone, Debug)]
pub(crate) struct FunctionalLocal {
    pub(crate) class: ClassId,
    pub(crate) bound: Vec<(String, LocalVar)>,
}

fn type_code(t: ScalarType) -> u8 {
    match t {
        ScalarType::Real => 0,
        ScalarType::Integer => 1,
        ScalarType::Boolean => 2,
        ScalarType::String => 3,
    }
}

pub(crate) fn type_of_code(code: u8) -> ScalarType {
    match code {
        1 => ScalarType::Integer,
        2 => ScalarType::Boolean,
        3 => ScalarType::String,
        _ => ScalarType::Real,
    }
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// The functional input `name` of the function being flattened, if it is one.
    pub(crate) fn functional_local(&self, scope: Scope, name: &str) -> Option<Rc<FunctionalLocal>> {
        if scope.instance.is_some() {
            return None;
        }
        self.frames.last()?.locals.get(name)?.function.clone()
    }

    /// A call of the functional input `local`: the function passed, with the values it binds
    /// read from their hidden inputs.
    pub(crate) fn functional_ref(&mut self, local: &FunctionalLocal) -> FunctionRef<'a> {
        let bound = local
            .bound
            .iter()
            .map(|(name, var)| (name.clone(), var.value(&mut self.model.exprs)))
            .collect();
        FunctionRef {
            class: local.class,
            defaults: Modifier::default(),
            bound,
        }
    }

    /// The argument of a functional input: `function g(a = 2)` (a partial application) or a
    /// functional input of the enclosing function passed on by name.
    pub(crate) fn function_argument(
        &mut self,
        e: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<FunctionRef<'a>> {
        match &e.kind {
            ast::ExprKind::PartialApplication { function, args } => {
                let Some(mut callee) = self.function_class(function, scope) else {
                    self.diagnostics.push(Diagnostic::error(
                        "E0204",
                        format!("unknown function `{}`", eqm_syntax::pretty::print_ref(function)),
                        function.span,
                        "no such function",
                    ));
                    return None;
                };
                if let Some(first) = args.positional.first() {
                    self.diagnostics.push(
                        Diagnostic::error(
                            "E0309",
                            "the arguments of a partial application are named",
                            first.span,
                            "positional argument",
                        )
                        .with_help("bind inputs by name: `function f(a = 2)`"),
                    );
                    return None;
                }
                let declared = self.input_names(callee.class);
                for (name, expr) in &args.named {
                    if !declared.iter().any(|d| *d == name.name) {
                        let mut d = Diagnostic::error(
                            "E0309",
                            format!(
                                "`{}` has no input named `{}`",
                                self.table.get(callee.class).full_name,
                                name.name
                            ),
                            name.span,
                            "no such input",
                        );
                        if let Some(s) = eqm_diag::did_you_mean(&name.name, declared.iter().copied()) {
                            d = d.with_help(format!("did you mean `{s}`?"));
                        }
                        self.diagnostics.push(d);
                        return None;
                    }
                    let value = self.eval(expr, scope, loops)?;
                    callee.bound.push((name.name.clone(), value));
                }
                // The defaults of short definitions become bound values too: the function
                // instance only sees values.
                let defaults = std::mem::take(&mut callee.defaults);
                for arg in &defaults.args {
                    if callee.bound.iter().any(|(n, _)| n == arg.name) {
                        continue;
                    }
                    if let Some(b) = &arg.modifier.binding {
                        let value = self.eval(b.expr, b.scope, &mut Vec::new())?;
                        callee.bound.push((arg.name.to_string(), value));
                    }
                }
                Some(callee)
            }
            ast::ExprKind::Ref(c) if c.parts.len() == 1 && c.parts[0].subscripts.is_empty() => {
                if let Some(local) = self.functional_local(scope, &c.parts[0].name.name) {
                    return Some(self.functional_ref(&local));
                }
                self.not_a_function_argument(e.span);
                None
            }
            _ => {
                self.not_a_function_argument(e.span);
                None
            }
        }
    }

    fn not_a_function_argument(&mut self, span: Span) {
        self.diagnostics.push(
            Diagnostic::error("E0306", "a functional input takes a function", span, "not a function")
                .with_help("pass `function f()`, or with some inputs bound `function f(a = 2)`"),
        );
    }

    /// Checks that `passed` fits the functional input of type `formal`: its unbound inputs
    /// start with the formal's inputs and its outputs with the formal's outputs, by name and in
    /// order (Modelica's function compatibility, §6.6).
    pub(crate) fn check_function_fits(&mut self, passed: &FunctionRef<'a>, formal: ClassId, span: Span) -> Option<()> {
        let formal_inputs = self.input_names(formal);
        let passed_inputs: Vec<&str> = self
            .input_names(passed.class)
            .into_iter()
            .filter(|n| !passed.bound.iter().any(|(b, _)| b == n))
            .collect();
        let formal_outputs = self.output_names(formal);
        let passed_outputs = self.output_names(passed.class);
        let inputs_fit =
            passed_inputs.len() >= formal_inputs.len() && formal_inputs.iter().zip(&passed_inputs).all(|(a, b)| a == b);
        let outputs_fit = passed_outputs.len() >= formal_outputs.len()
            && formal_outputs.iter().zip(&passed_outputs).all(|(a, b)| a == b);
        if inputs_fit && outputs_fit {
            return Some(());
        }
        self.diagnostics.push(
            Diagnostic::error(
                "E0306",
                format!(
                    "`{}` does not fit the functional input of type `{}`",
                    self.table.get(passed.class).full_name,
                    self.table.get(formal).full_name
                ),
                span,
                "wrong function",
            )
            .with_note(format!(
                "`{}` takes ({}) and gives ({}); the function passed takes ({}) and gives ({}) once its bound inputs are removed",
                self.table.get(formal).full_name,
                formal_inputs.join(", "),
                formal_outputs.join(", "),
                passed_inputs.join(", "),
                passed_outputs.join(", ")
            ))
            .with_help("the inputs and outputs must have the same names in the same order; bind any extra inputs (`function f(a = 2)`)"),
        );
        None
    }
}
