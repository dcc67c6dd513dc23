//! Functions as arguments of functions: functional inputs and partial application, as
//! Modelica defines them.
//!
//! Input: a function whose input is declared with a function type (`input Integrand f;`), the
//! arguments of its calls (`function g(a = 2)`, or a functional input passed on by name), and the
//! calls of functional inputs inside function bodies. Output: [`FunctionRef`]s (a function and
//! the values bound to some of its inputs) and
//! [`FunctionalKey`](crate::function_table::FunctionalKey)s, which choose the instance of the
//! called function: like the sizes of `:` inputs, the functions passed are known when the
//! model is compiled, so each combination gets its own flat function in which a call of the
//! functional input is an ordinary call of the function passed. The values bound by a partial
//! application become hidden inputs of that instance, so they may be any expression of the
//! caller (a parameter, a variable of the model). Nothing is interpreted at run time; the JIT
//! compiles these calls like any other. It deliberately does not support storing functions in
//! variables or returning them: Modelica has neither.

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::function_table::{FunctionRef, FunctionalLocal, FunctionalParameter};
use crate::layout::Member;
use crate::modifier::{Modifier, Scope};
use crate::resolve::ClassId;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_syntax::ast;
use std::rc::Rc;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The functional input `name` of the function being flattened, if it is one.
    pub(crate) fn functional_local(&self, scope: Scope, name: &str) -> Option<Rc<FunctionalLocal>> {
        if scope.instance.is_some() {
            return None;
        }
        self.context.frames.last()?.locals.get(name)?.function.clone()
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
            partial: None,
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
                let callee = self.not_a_passed_partial_derivative(callee, function.span)?;
                self.with_bound_defaults(callee)
            }
            ast::ExprKind::Ref(c) if c.parts.iter().all(|p| p.subscripts.is_empty()) => {
                if c.parts.len() == 1
                    && let Some(local) = self.functional_local(scope, &c.parts[0].name.name)
                {
                    return Some(self.functional_ref(&local));
                }
                // A function passed by its name (`quadrature(0, 1, Parabola)`) is the partial
                // application that binds nothing, `function Parabola()`.
                match self.function_class(c, scope) {
                    Some(callee) => {
                        let callee = self.not_a_passed_partial_derivative(callee, c.span)?;
                        self.with_bound_defaults(callee)
                    }
                    None => {
                        self.not_a_function_argument(e.span);
                        None
                    }
                }
            }
            _ => {
                self.not_a_function_argument(e.span);
                None
            }
        }
    }

    /// `callee` with the defaults of its short definitions (`function g = f(a = 2)`) bound
    /// like the arguments of a partial application: the function instance only sees values.
    fn with_bound_defaults(&mut self, mut callee: FunctionRef<'a>) -> Option<FunctionRef<'a>> {
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

    fn not_a_function_argument(&mut self, span: Span) {
        self.diagnostics.push(
            Diagnostic::error("E0306", "a functional input takes a function", span, "not a function")
                .with_help("pass a function by its name `f`, or with some inputs bound `function f(a = 2)`"),
        );
    }

    /// Checks that `passed` fits the functional input of type `formal`: its unbound inputs
    /// start with the formal's inputs and its outputs with the formal's outputs, by name and in
    /// order (Modelica's function compatibility).
    /// `what` names the place: "functional input" or "functional parameter".
    pub(crate) fn check_function_fits(
        &mut self,
        passed: &FunctionRef<'a>,
        formal: ClassId,
        span: Span,
        what: &str,
    ) -> Option<()> {
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
                    "`{}` does not fit the {what} of type `{}`",
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

/// How deeply bodies of functional parameters may call others: a cycle is reported, not
/// followed until the stack runs out.
const MAX_LAMBDA_DEPTH: usize = 64;

impl<'t, 'a> Flattener<'t, 'a> {
    /// Makes the member for a functional parameter declared with the function type `formal`,
    /// given `binding`: a function written out (`function(s) = ...`), a partial application
    /// (`function f(k = 2)`), a function's name, or a functional parameter of the scope the
    /// binding is written in (passed on).
    pub(crate) fn functional_parameter(
        &mut self,
        formal: ClassId,
        path: &str,
        name: &ast::Ident,
        binding: Option<&crate::modifier::Binding<'a>>,
    ) -> Member {
        let Some(binding) = binding else {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0306",
                    format!("the functional parameter `{path}` is given no function"),
                    name.span,
                    "no function",
                )
                .with_help("give one in a modifier: `law = function(u) = 2*u` or `law = function f(k = 2)`"),
            );
            return Member::Failed;
        };
        if !binding.select.is_empty() {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0317",
                    "a functional parameter of an array of components takes one function for all of them",
                    binding.expr.span,
                    "needs `each`",
                )
                .with_help("write `each law = ...`"),
            );
            return Member::Failed;
        }
        let scope = binding.scope;
        let parameter = match &binding.expr.kind {
            ast::ExprKind::Lambda { params, body } => {
                let inputs = self.input_names(formal);
                let outputs = self.output_names(formal);
                if params.len() != inputs.len() || outputs.len() != 1 {
                    self.diagnostics.push(
                        Diagnostic::error(
                            "E0306",
                            format!(
                                "this function takes {} argument(s), but `{}` takes ({}) and gives ({})",
                                params.len(),
                                self.table.get(formal).full_name,
                                inputs.join(", "),
                                outputs.join(", ")
                            ),
                            binding.expr.span,
                            "wrong function",
                        )
                        .with_help(
                            "a function written as an expression has one argument per input and gives one output",
                        ),
                    );
                    return Member::Failed;
                }
                FunctionalParameter::Lambda {
                    params,
                    body,
                    scope,
                    formal,
                }
            }
            ast::ExprKind::Ref(c) if let Some(k) = self.functional_parameter_named(c, scope) => {
                self.functional_parameters[k as usize].clone()
            }
            ast::ExprKind::Ref(c) => match self.function_class(c, scope) {
                Some(f) => match self.not_a_passed_partial_derivative(f, c.span) {
                    Some(f) => FunctionalParameter::Named(f),
                    None => return Member::Failed,
                },
                None => {
                    self.not_a_functional_value(binding.expr.span);
                    return Member::Failed;
                }
            },
            ast::ExprKind::PartialApplication { .. } => {
                match self.function_argument(binding.expr, scope, &mut Vec::new()) {
                    Some(f) => FunctionalParameter::Named(f),
                    None => return Member::Failed,
                }
            }
            _ => {
                self.not_a_functional_value(binding.expr.span);
                return Member::Failed;
            }
        };
        match &parameter {
            FunctionalParameter::Named(f)
                if self
                    .check_function_fits(f, formal, binding.expr.span, "functional parameter")
                    .is_none() =>
            {
                return Member::Failed;
            }
            FunctionalParameter::Lambda { formal: given, .. } if *given != formal => {
                // A lambda passed on keeps the names of its own type; they must agree.
                let (a, b) = (self.input_names(*given), self.input_names(formal));
                if a != b {
                    self.diagnostics.push(Diagnostic::error(
                        "E0306",
                        format!(
                            "`{}` does not fit the functional parameter of type `{}`",
                            self.table.get(*given).full_name,
                            self.table.get(formal).full_name
                        ),
                        binding.expr.span,
                        "wrong function",
                    ));
                    return Member::Failed;
                }
            }
            _ => {}
        }
        self.functional_parameters.push(parameter);
        Member::Function(self.functional_parameters.len() as u32 - 1)
    }

    fn not_a_functional_value(&mut self, span: Span) {
        self.diagnostics.push(
            Diagnostic::error(
                "E0306",
                "a functional parameter takes a function",
                span,
                "not a function",
            )
            .with_help("write `function(u) = 2*u`, `function f(k = 2)`, or the name of a function"),
        );
    }

    /// The named function that a functional parameter denoted by `c` stands for, if it is one.
    pub(crate) fn named_functional_parameter(
        &mut self,
        c: &ast::ComponentRef,
        scope: Scope,
    ) -> Option<FunctionRef<'a>> {
        let k = self.functional_parameter_named(c, scope)?;
        match &self.functional_parameters[k as usize] {
            FunctionalParameter::Named(f) => Some(f.clone()),
            FunctionalParameter::Lambda { .. } => None,
        }
    }

    /// The functional parameter that a one-part name denotes in `scope`, if it is one. Only
    /// asked for names that are no class, so ordinary calls never pay for it.
    pub(crate) fn functional_parameter_named(&mut self, c: &ast::ComponentRef, scope: Scope) -> Option<u32> {
        match self.member_named(c, scope)? {
            Member::Function(k) => Some(k),
            _ => None,
        }
    }

    /// The member of the scope's instance that a one-part name denotes.
    pub(crate) fn member_named(&mut self, c: &ast::ComponentRef, scope: Scope) -> Option<Member> {
        let [part] = &c.parts[..] else { return None };
        if !part.subscripts.is_empty() {
            return None;
        }
        self.ensure_member(scope.instance?, &part.name.name)
    }

    /// A call of the functional parameter `k` written as an expression: its body, evaluated
    /// where it was written with its parameters bound to the arguments. A named function is
    /// called like any other (see `function_class`).
    pub(crate) fn call_lambda(
        &mut self,
        k: u32,
        function: &ast::ComponentRef,
        args: &'a ast::CallArgs,
        span: Span,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let FunctionalParameter::Lambda {
            params,
            body,
            scope: body_scope,
            formal,
        } = self.functional_parameters[k as usize].clone()
        else {
            return None;
        };
        let inputs = self.input_names(formal);
        let mut given: Vec<Option<Value>> = vec![None; params.len()];
        let name = eqm_syntax::pretty::print_ref(function);
        if args.positional.len() > params.len() {
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!(
                    "`{name}` takes {} argument(s), found {}",
                    params.len(),
                    args.positional.len()
                ),
                args.span,
                "too many arguments",
            ));
            return None;
        }
        for (slot, a) in given.iter_mut().zip(&args.positional) {
            *slot = Some(self.eval(a, scope, loops)?);
        }
        for (arg_name, a) in &args.named {
            match inputs.iter().position(|n| *n == arg_name.name) {
                Some(j) if given[j].is_none() => given[j] = Some(self.eval(a, scope, loops)?),
                _ => {
                    self.diagnostics.push(Diagnostic::error(
                        "E0309",
                        format!("`{name}` has no other input named `{}`", arg_name.name),
                        arg_name.span,
                        "no such input",
                    ));
                    return None;
                }
            }
        }
        if let Some(j) = given.iter().position(Option::is_none) {
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!(
                    "missing argument `{}` of `{name}`",
                    inputs.get(j).copied().unwrap_or("?")
                ),
                span,
                "argument missing",
            ));
            return None;
        }
        if self.context.lambda_depth >= MAX_LAMBDA_DEPTH {
            self.diagnostics.push(Diagnostic::error(
                "E0216",
                format!("the function given to `{name}` calls itself"),
                span,
                "cyclic definition",
            ));
            return None;
        }
        // The body sees its own parameters and the names of its scope, not the iterators or
        // array sizes around the call.
        let outer_iterators = std::mem::take(&mut self.context.iterators);
        let outer_ends = std::mem::take(&mut self.context.end_sizes);
        for (p, value) in params.iter().zip(given.into_iter().flatten()) {
            self.context.iterators.push(crate::eval_context::BoundIterator {
                name: p.name.clone(),
                value,
                loops_below: 0,
            });
        }
        self.context.lambda_depth += 1;
        let result = self.eval(body, body_scope, &mut Vec::new());
        self.context.lambda_depth -= 1;
        self.context.iterators = outer_iterators;
        self.context.end_sizes = outer_ends;
        let value = result?;
        self.check_lambda_value(&value, formal, body.span)?;
        Some(value)
    }

    /// Checks that the value of a function written out fits its type's output when that is a
    /// scalar of a built-in type (the usual case: `output Real y;`).
    fn check_lambda_value(&mut self, value: &Value, formal: ClassId, span: Span) -> Option<()> {
        let Some((clause, decl, part)) = self
            .function_components(formal)
            .find(|(clause, _, part)| self.declared_causality(clause, *part) == ast::Causality::Output)
        else {
            return Some(());
        };
        if !clause.type_dims.is_empty() || !decl.dims.is_empty() {
            return Some(());
        }
        let Some(resolved) = self.resolve_type(part, &clause.type_name, 0) else {
            return Some(());
        };
        let crate::resolve::TypeRef::Builtin(ty) = resolved.target else {
            return Some(());
        };
        if resolved.dims.is_empty()
            && let Value::Scalar(_, actual) = value
            && crate::value::types_compatible(ty, *actual)
        {
            return Some(());
        }
        let found = match value {
            Value::Scalar(_, t) => crate::value::type_name(*t).to_string(),
            Value::Array(dims, ..) => format!("an array of size {dims:?}"),
            Value::Str(_) => "a String".to_string(),
            Value::Record(_) | Value::Records(..) => "a record".to_string(),
        };
        self.diagnostics.push(Diagnostic::error(
            "E0306",
            format!(
                "this function must give a scalar {} (the output `{}` of `{}`), found {found}",
                crate::value::type_name(ty),
                decl.name.name,
                self.table.get(formal).full_name
            ),
            span,
            "wrong value",
        ));
        None
    }
}
