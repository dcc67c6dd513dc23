//! Calls of user-defined functions: the checks of arity, named arguments, defaults, argument
//! types and sizes, the call node and the values of its outputs, and the function a reference
//! names.
//!
//! Input: a call's function reference and arguments, in a scope. Output: the `Call` node of the
//! function instance made for these arguments and the values of its outputs. It deliberately
//! does not inline or evaluate the function.

use super::EFFECT_OUTPUT;
use super::partial_derivatives::partial_derivative_definition;
use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::function_table::{FunctionRef, FunctionalKey, KnownIntegers, KnownStrings, PartialDerivative};
use crate::function_table::{Signature, broadcast, record_scalars};
use crate::modifier::{Modifier, Scope};
use crate::resolve::{ClassId, TypeRef};
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{Callee, ExprId, Node};
use eqm_ir::flat::{Place, ScalarType, Statement};
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// What a call statement (`f(x);`, checked as `call`, written `name`) runs: nothing when
    /// the function has outputs (its results are unused); when it has none, it is called for its
    /// effect (an external C function that keeps a state), so in the function `caller` it is the
    /// assignment of the callee's hidden output to a slot of its own, and in a model's algorithm
    /// it is not run, which a warning says.
    pub(crate) fn effect_statement(
        &mut self,
        call: Option<(ExprId, Vec<Value>)>,
        name: &str,
        span: Span,
        caller: Option<eqm_ir::expr::FuncId>,
    ) -> Option<Statement> {
        let (call, outputs) = call?;
        if !outputs.is_empty() {
            return None;
        }
        let Some(id) = caller else {
            self.diagnostics.push(
                Diagnostic::warning(
                    "W0301",
                    format!("the call of `{name}`, a function without outputs, is checked but not run: EQM runs such a call for its effect only in a function"),
                    span,
                    "not run",
                )
                .with_help("make the call in a function, and call that function from the algorithm"),
            );
            return None;
        };
        let slots = &mut self.model.functions[id.0 as usize].slots;
        let slot = slots.len() as u32;
        slots.push(eqm_ir::flat::FunctionSlot {
            name: format!("{EFFECT_OUTPUT}{slot}"),
            ty: ScalarType::Integer,
            default: None,
        });
        Some(Statement::Assign {
            target: Place::Local(slot),
            value: call,
            span,
        })
    }

    /// Evaluates the argument `a` of input `k` of a call: a value, or for a functional input a
    /// function (checked against the input's function type).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call_argument(
        &mut self,
        k: usize,
        a: &'a ast::Expr,
        declared: &[(&'a str, bool, Option<ClassId>)],
        given: &mut [Option<(Value, Span)>],
        passed: &mut [Option<FunctionRef<'a>>],
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<()> {
        match declared[k].2 {
            Some(formal) => {
                let f = self.function_argument(a, scope, loops)?;
                self.check_function_fits(&f, formal, a.span, "functional input")?;
                passed[k] = Some(f);
                // Marks the input as given; its value is the function's bound values.
                given[k] = Some((Value::Str(eqm_ir::flat::Message::default()), a.span));
            }
            None => given[k] = Some((self.eval(a, scope, loops)?, a.span)),
        }
        Some(())
    }

    /// Checks a call of a user-defined function and returns the call node and the values of all
    /// its outputs (the first output is the call itself, further scalar outputs are
    /// `CallOutput(call, k)`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn user_call(
        &mut self,
        callee: &FunctionRef<'a>,
        function: &'a ast::ComponentRef,
        args: &'a ast::CallArgs,
        span: Span,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<(ExprId, Vec<Value>)> {
        let name = eqm_syntax::pretty::print_ref(function);
        let class = callee.class;
        if self.table.get(class).def.partial {
            self.diagnostics.push(Diagnostic::error(
                "E0214",
                format!(
                    "`{}` is a partial function and cannot be called",
                    self.table.get(class).full_name
                ),
                span,
                "partial function",
            ));
            return None;
        }
        // The arguments first: the sizes of those of inputs declared with `:` and the functions
        // passed to functional inputs choose the function's instance.
        let declared = self.input_declarations(class);
        let (given, passed) = self.given_arguments(callee, &name, &declared, args, span, scope, loops)?;
        // The string functions of the Modelica external C library are evaluated here, on
        // arguments known at compile time.
        let inputs: Vec<&'a str> = declared.iter().map(|d| d.0).collect();
        let mut reported = false;
        let partial = callee.partial.as_ref();
        if partial.is_none()
            && let Some(result) = self.modelica_string_call(class, &inputs, &given, span, &mut reported)
        {
            return Some(result);
        }
        if reported {
            return None;
        }
        // A function of scalars called with arrays is applied to their elements.
        if let Some(result) = self.vectorised_call(class, &name, &declared, &given, &passed, (partial, span)) {
            return result;
        }
        let result = self.instance_call(class, &name, &declared, given, &passed, (partial, span))?;
        self.remember_output_record(class, &result.1);
        Some(result)
    }

    /// The call of the function instance for the arguments `given` (and the functions `passed`),
    /// with the values of its outputs (see [`Self::user_call`]); with `partial`, the call of the
    /// instance's partial derivative it names (`der(f, x)`).
    #[allow(clippy::type_complexity)]
    pub(crate) fn instance_call(
        &mut self,
        class: ClassId,
        name: &str,
        declared: &[(&'a str, bool, Option<ClassId>)],
        given: Vec<Option<(Value, Span)>>,
        passed: &[Option<FunctionRef<'a>>],
        (partial, span): (Option<&PartialDerivative>, Span),
    ) -> Option<(ExprId, Vec<Value>)> {
        let (sizes, functionals) = self.instance_key(class, name, declared, &given, passed, span)?;
        let strings = self.known_string_inputs(class, declared, &given);
        let mut integers = self.known_size_inputs(class, name, &given)?;
        if !strings.is_empty() {
            self.literal_scalar_inputs(class, &given, &mut integers);
        }
        let templates = self.template_string_inputs(declared, &given);
        let mut id = self.function_for(class, &sizes, &functionals, strings, integers, templates)?;
        if let Some(partial) = partial {
            id = self.partial_derivative_function(id, partial, span)?;
        }
        let signature = self.functions.signatures[id.0 as usize].clone();
        let known = self
            .functions
            .known_strings
            .get(id.0 as usize)
            .cloned()
            .unwrap_or_default();
        let call_args = self.call_arguments(&signature, name, given, passed, &known, span)?;
        if signature.outputs.is_empty() {
            return Some((self.model.exprs.call(Callee::User(id), call_args), Vec::new()));
        }
        let call = self.model.exprs.call(Callee::User(id), call_args);
        let mut outputs = Vec::new();
        let mut k = 0u32;
        for (name_of_output, var) in &signature.outputs {
            let elems: Vec<ExprId> = (0..var.slots.len())
                .map(|_| {
                    let e = if k == 0 {
                        call
                    } else {
                        self.model.exprs.add(Node::CallOutput(call, k))
                    };
                    k += 1;
                    e
                })
                .collect();
            // A String output whose text the instance knows is that text.
            let text = (self.functions.output_texts.get(id.0 as usize))
                .and_then(|texts| texts.iter().find(|(n, _)| n == name_of_output))
                .map(|(_, text)| Value::Str(text.clone()));
            outputs.push(text.unwrap_or_else(|| var.value_of(&elems)));
        }
        Some((call, outputs))
    }

    /// The values (or passed functions) of a call's inputs, by the callee's input order: those
    /// a partial application binds, the positional and named arguments, then the defaults of a
    /// short definition or redeclaration; `None` after a reported error.
    #[allow(clippy::too_many_arguments)]
    #[allow(clippy::type_complexity)]
    fn given_arguments(
        &mut self,
        callee: &FunctionRef<'a>,
        name: &str,
        declared: &[(&'a str, bool, Option<ClassId>)],
        args: &'a ast::CallArgs,
        span: Span,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<(Vec<Option<(Value, Span)>>, Vec<Option<FunctionRef<'a>>>)> {
        let class = callee.class;
        let mut given: Vec<Option<(Value, Span)>> = vec![None; declared.len()];
        let mut passed: Vec<Option<FunctionRef<'a>>> = vec![None; declared.len()];
        // Inputs bound by a partial application are no longer inputs of the call: positional
        // arguments skip them.
        for (bound, value) in &callee.bound {
            if let Some(k) = declared.iter().position(|(n, ..)| n == bound) {
                given[k] = Some((value.clone(), span));
            }
        }
        let open: Vec<usize> = (0..declared.len()).filter(|&k| given[k].is_none()).collect();
        if args.positional.len() > open.len() {
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!(
                    "`{name}` takes {} input(s), found {} positional argument(s)",
                    open.len(),
                    args.positional.len()
                ),
                args.span,
                "too many arguments",
            ));
            return None;
        }
        for (a, &k) in args.positional.iter().zip(&open) {
            self.call_argument(k, a, declared, &mut given, &mut passed, scope, loops)?;
        }
        for (arg_name, a) in &args.named {
            let Some(k) = declared.iter().position(|(n, ..)| *n == arg_name.name) else {
                let mut d = Diagnostic::error(
                    "E0309",
                    format!("`{name}` has no input named `{}`", arg_name.name),
                    arg_name.span,
                    "no such input",
                );
                if let Some(s) = eqm_diag::did_you_mean(&arg_name.name, declared.iter().map(|(n, ..)| *n)) {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                self.diagnostics.push(d);
                return None;
            };
            if given[k].is_some() {
                self.diagnostics.push(Diagnostic::error(
                    "E0309",
                    format!("input `{}` of `{name}` is given twice", arg_name.name),
                    arg_name.span,
                    "given twice",
                ));
                return None;
            }
            self.call_argument(k, a, declared, &mut given, &mut passed, scope, loops)?;
        }
        // Defaults from a short definition or a redeclaration (`function f = g(a = 1)`) count as
        // if written in the call.
        for arg in &callee.defaults.args {
            let Some(k) = declared.iter().position(|(n, ..)| *n == arg.name) else {
                self.diagnostics.push(Diagnostic::error(
                    "E0317",
                    format!(
                        "`{}` modifies `{}`, which is not an input of `{name}`; EQM supports modifying only a function's inputs",
                        self.table.get(class).full_name,
                        arg.name
                    ),
                    arg.span,
                    "not an input",
                ));
                return None;
            };
            if given[k].is_some() {
                continue;
            }
            let Some(binding) = &arg.modifier.binding else { continue };
            given[k] = Some((
                self.eval(binding.expr, binding.scope, &mut Vec::new())?,
                binding.expr.span,
            ));
        }
        Some((given, passed))
    }

    /// What the function instance for a call is made for: the sizes of the arguments of inputs
    /// declared with `:` and the functions passed to functional inputs; `None` after reporting
    /// a missing one.
    fn instance_key(
        &mut self,
        class: ClassId,
        name: &str,
        declared: &[(&'a str, bool, Option<ClassId>)],
        given: &[Option<(Value, Span)>],
        passed: &[Option<FunctionRef<'a>>],
        span: Span,
    ) -> Option<(Vec<Vec<usize>>, Vec<FunctionalKey>)> {
        let mut sizes = Vec::new();
        let mut functionals = Vec::new();
        for (k, (input, open, functional)) in declared.iter().enumerate() {
            let missing = match (functional, &passed[k], open, &given[k]) {
                (Some(_), Some(f), ..) => {
                    functionals.push(f.key());
                    continue;
                }
                (Some(_), None, ..) => "it takes a function",
                (None, _, true, Some((v, _))) => {
                    sizes.push(v.dims().to_vec());
                    continue;
                }
                // An omitted argument takes the size of the input's default, when that is
                // known without the other inputs (`input Real p[:] = fill(0, 0)`).
                (None, _, true, None) => match self.open_input_default_dims(class, k) {
                    Some(dims) => {
                        sizes.push(dims);
                        continue;
                    }
                    None => "its size `:` comes from the argument",
                },
                (None, _, false, _) => continue,
            };
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!("missing argument `{input}` of `{name}`: {missing}"),
                span,
                "argument missing",
            ));
            return None;
        }
        Some((sizes, functionals))
    }

    /// The String inputs of a call whose texts are known now: the function is instantiated for
    /// them. An external function passes them to C as constants (Modelica: `const char*`);
    /// in any function's body the input reads as its text, so that the string functions it
    /// calls are evaluated when the model is compiled (EQM has no String values during the
    /// run). An input the call does not give takes its default (Modelica), so a literal default
    /// is known as well.
    fn known_string_inputs(
        &mut self,
        class: ClassId,
        declared: &[(&'a str, bool, Option<ClassId>)],
        given: &[Option<(Value, Span)>],
    ) -> KnownStrings {
        // A String parameter or constant counts through its binding; it becomes structural,
        // since the C code is made for its text.
        let mut known = Vec::new();
        let mut defaults = None;
        for ((name, _, functional), value) in declared.iter().zip(given) {
            if functional.is_some() {
                continue;
            }
            let Some((value, _)) = value.as_ref() else {
                let defaults = defaults.get_or_insert_with(|| self.literal_string_defaults(class));
                if let Some((_, text)) = defaults.iter().find(|(n, _)| n == *name) {
                    known.push((name.to_string(), text.clone()));
                }
                continue;
            };
            if !matches!(value, Value::Str(_) | Value::Scalar(_, ScalarType::String)) {
                continue;
            }
            if let Some(text) = self.known_string(value).and_then(|m| m.as_literal()) {
                known.push((name.to_string(), text));
            }
        }
        known
    }

    /// The inputs of a function class whose default is a String literal, with its text: the
    /// binding an `extends` modifier gives wins over the declaration's, and a derived class's
    /// declaration over its base's. A default computed from other inputs is not known before
    /// the call and is left out.
    fn literal_string_defaults(&self, class: ClassId) -> Vec<(String, String)> {
        let mut parts = Vec::new();
        // A function with errors in its `extends` is reported when it is instantiated.
        let _ = self.function_parts(class, 0, Modifier::default(), &mut parts);
        let mut defaults: Vec<(String, Option<String>)> = Vec::new();
        for (part, sections, modifier) in &parts {
            let clauses = sections
                .iter()
                .flat_map(|s| match s {
                    ast::Section::Elements { elements, .. } => elements.as_slice(),
                    _ => &[],
                })
                .filter_map(|e| match e {
                    ast::Element::Component(clause)
                        if self.declared_causality(clause, *part) == ast::Causality::Input =>
                    {
                        Some(clause)
                    }
                    _ => None,
                });
            for decl in clauses.flat_map(|c| &c.components) {
                let name = &decl.name.name;
                let rebound = modifier.child(name).0.binding.map(|b| b.expr);
                let binding = rebound.or_else(|| decl.modification.as_ref().and_then(|m| m.binding.as_ref()));
                let text = match binding.map(|b| &b.kind) {
                    Some(ast::ExprKind::String(text)) => Some(text.clone()),
                    _ => None,
                };
                defaults.retain(|(n, _)| n != name);
                defaults.push((name.clone(), text));
            }
        }
        defaults
            .into_iter()
            .filter_map(|(name, text)| Some((name, text?)))
            .collect()
    }

    /// The values of the Integer inputs of a call that give sizes of the function's variables
    /// (see [`KnownIntegers`]): each argument must be known at compile time (a literal, a
    /// parameter or constant, an expression of them); an omitted argument takes its default
    /// when that is known, and otherwise is reported where the function uses it. `None` after
    /// reporting an argument known only during the run.
    fn known_size_inputs(
        &mut self,
        class: ClassId,
        name: &str,
        given: &[Option<(Value, Span)>],
    ) -> Option<KnownIntegers> {
        let mut known = Vec::new();
        for (k, input, default) in self.size_inputs(class) {
            let value = match (&given[k], default) {
                (Some((Value::Scalar(x, _), at)), _) => {
                    let x = *x;
                    match self.consts.eval(&self.model, x) {
                        Some(v) => {
                            self.note_structural(x);
                            v
                        }
                        None => {
                            self.diagnostics.push(
                                Diagnostic::error(
                                    "E0206",
                                    format!(
                                        "the argument `{input}` of `{name}` gives the size of an array of the function, so it must be known at compile time"
                                    ),
                                    *at,
                                    "depends on values only known during the run",
                                )
                                .with_help("pass a literal, a parameter or constant, or an expression of them"),
                            );
                            return None;
                        }
                    }
                }
                (None, Some((default, part))) => match self.default_value_now(default, part) {
                    Some(v) => v,
                    None => continue,
                },
                // A missing argument or one of the wrong shape is reported with the call's other
                // arguments.
                _ => continue,
            };
            if value.fract() == 0.0 {
                known.push((input.to_string(), value as i64));
            }
        }
        Some(known)
    }

    /// The value of an input's default when it is known at compile time (a literal or
    /// constant), evaluated in the function's class, outside any function body; `None`
    /// without a diagnostic when it needs the other inputs or values of the run.
    fn default_value_now(&mut self, default: &'a ast::Expr, part: ClassId) -> Option<f64> {
        let Some(Value::Scalar(x, _)) = self.default_now(default, part) else {
            return None;
        };
        let v = self.consts.eval(&self.model, x)?;
        self.note_structural(x);
        Some(v)
    }

    /// The sizes of the default of the `k`-th input of `class` when it can be evaluated
    /// without the other inputs.
    fn open_input_default_dims(&mut self, class: ClassId, k: usize) -> Option<Vec<usize>> {
        let (_, decl, part) = self
            .function_components(class)
            .filter(|(clause, _, part)| self.declared_causality(clause, *part) == ast::Causality::Input)
            .nth(k)?;
        let default = decl.modification.as_ref().and_then(|m| m.binding.as_ref())?;
        self.default_now(default, part).map(|v| v.dims().to_vec())
    }

    /// An input's default evaluated in the function's class, outside any function body;
    /// `None` without a diagnostic when it needs the other inputs.
    pub(super) fn default_now(&mut self, default: &'a ast::Expr, part: ClassId) -> Option<Value> {
        let mark = self.diagnostics.len();
        // An empty frame: the default must not read the locals of the function making the call.
        self.context.frames.push(crate::function_table::Frame {
            locals: Default::default(),
            strings: Vec::new(),
            integers: Vec::new(),
            reals: Vec::new(),
            templates: Vec::new(),
            texts: Vec::new(),
        });
        let scope = Scope {
            instance: None,
            class: part,
        };
        let value = self.eval(default, scope, &mut Vec::new());
        self.context.frames.pop();
        self.diagnostics.truncate(mark);
        value
    }

    /// The scalar arguments of a call in the order of the function instance's input slots:
    /// each given value checked against its input, or the input's default.
    fn call_arguments(
        &mut self,
        signature: &Signature,
        name: &str,
        given: Vec<Option<(Value, Span)>>,
        passed: &[Option<FunctionRef<'a>>],
        known: &KnownStrings,
        span: Span,
    ) -> Option<Vec<ExprId>> {
        let mut call_args: Vec<ExprId> = Vec::new();
        for (k, ((input, var, default), value)) in signature.inputs.iter().zip(given).enumerate() {
            if known.iter().any(|(n, _)| n == input) {
                // The instance was made for this String's text, which it passes to C itself;
                // its slot is never read.
                let unused = self.model.exprs.int(0);
                call_args.extend(std::iter::repeat_n(unused, var.slots.len()));
                continue;
            }
            // A String with values known only during the run passes its values, one per hidden
            // slot of the instance made for its shape.
            if var.ty == ScalarType::String
                && let Some((Value::Str(message), _)) = &value
                && message.as_literal().is_none()
            {
                let values = super::string_inputs::template_arguments(message);
                if values.len() != var.slots.len() {
                    return None;
                }
                call_args.extend(values);
                continue;
            }
            if let Some(local) = &var.function {
                // The values the passed function binds, in the order of its hidden inputs.
                let Some(f) = &passed[k] else { return None };
                for (bound, _) in &local.bound {
                    let v = f.bound.iter().find(|(n, _)| n == bound).map(|(_, v)| v)?;
                    call_args.extend(v.elements());
                }
                continue;
            }
            match value {
                Some((v, at)) if var.record.is_some() || var.elements.is_some() => match record_scalars(&v) {
                    Some(scalars) if scalars.len() == var.slots.len() && v.dims() == var.dims.as_slice() => {
                        call_args.extend(scalars)
                    }
                    _ => {
                        self.diagnostics.push(Diagnostic::error(
                            "E0306",
                            format!("argument `{input}` of `{name}`: expected a record of its type"),
                            at,
                            "not that record",
                        ));
                        return None;
                    }
                },
                Some((v, at)) => {
                    self.check_assignable(&v, &var.dims, var.ty, at, &|| {
                        format!("argument `{input}` of `{name}`: ")
                    })?;
                    call_args.extend(broadcast(&v, var.slots.len()));
                }
                None => {
                    let Some(default) = default else {
                        self.diagnostics.push(Diagnostic::error(
                            "E0309",
                            format!("missing argument `{input}` of `{name}`"),
                            span,
                            "argument missing",
                        ));
                        return None;
                    };
                    // A default may refer to earlier inputs; it is evaluated with the actual
                    // arguments in their place.
                    let values: Vec<ExprId> = default
                        .iter()
                        .map(|&d| {
                            eqm_ir::symbolic::substitute(&mut self.model.exprs, d, &|arena, id| match arena.get(id) {
                                Node::Local(k) => call_args.get(*k as usize).copied(),
                                _ => None,
                            })
                        })
                        .collect();
                    call_args.extend(values);
                }
            }
        }
        Some(call_args)
    }

    /// The outputs of `function(args)` assigned to a list of `targets` places (`(a, b) = f(x)`
    /// or `(a, b) := f(x)`): the call must be of a user function with at least that many
    /// outputs.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn multi_output_call(
        &mut self,
        function: &'a ast::ComponentRef,
        args: &'a ast::CallArgs,
        targets: usize,
        targets_span: Span,
        call_span: Span,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Vec<Value>> {
        let Some(callee) = self.function_class(function, scope) else {
            // The one built-in operator with two outputs.
            if let [part] = &function.parts[..]
                && !function.global
                && part.name.name == "spatialDistribution"
            {
                return self.spatial_distribution(args, (targets, targets_span), call_span, scope, loops);
            }
            self.diagnostics.push(Diagnostic::error(
                "E0307",
                "a parenthesised list on the left needs a call of a user-defined function on the right",
                call_span,
                "not a user-defined function",
            ));
            return None;
        };
        let (_, outputs) = self.user_call(&callee, function, args, call_span, scope, loops)?;
        if targets > outputs.len() {
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!(
                    "`{}` has {} output(s), but {targets} are listed",
                    eqm_syntax::pretty::print_ref(function),
                    outputs.len(),
                ),
                targets_span,
                "too many targets",
            ));
            return None;
        }
        Some(outputs)
    }

    /// The class a reference without subscripts names (`f`, `Pkg.Point`), looked up from `scope`.
    pub(crate) fn class_named(&self, c: &ast::ComponentRef, scope: Scope) -> Option<ClassId> {
        if c.parts.is_empty() || c.parts.iter().any(|p| !p.subscripts.is_empty()) {
            return None;
        }
        let name = ast::Name {
            global: c.global,
            parts: c.parts.iter().map(|p| p.name.clone()).collect(),
            span: c.span,
        };
        match self.table.lookup(scope.class, &name) {
            Ok(TypeRef::Class(class)) => Some(class),
            _ => None,
        }
    }

    /// Whether a call written with a built-in function's name calls a function of the model's
    /// own instead (`import Modelica.ComplexMath.sum;`, or a function declared in an enclosing
    /// class): Modelica looks the name up like any other, and finds the built-in function only
    /// where no class of that name encloses the call. A function that is the built-in one
    /// itself (`external "builtin"`) stands for it.
    pub(crate) fn shadows_builtin(&self, c: &ast::ComponentRef, scope: Scope) -> bool {
        if c.global || c.parts.len() != 1 {
            return false;
        }
        let Some(class) = self.class_named(c, scope) else {
            return false;
        };
        let entry = self.table.get(class);
        entry.def.kind.is_function()
            && !entry
                .sections()
                .iter()
                .any(|s| matches!(s, ast::Section::External { language: Some(language), .. } if language == "builtin"))
    }

    /// The function a reference names, if it names one: its class, after short definitions
    /// (`function f = g(a = 1)`) and redeclarations of replaceable functions are followed, and
    /// the defaults that those give to its inputs (outermost first).
    /// Inside a function, a functional input names the function passed to it.
    /// The function `c.f` names when `c` is a scalar component of the scope's instance (or a
    /// component of one, `a.b.f`): `f` looked up in the component's class, its modifiers read
    /// in the component, as Modelica allows for a function reached through a component.
    fn function_of_component(&mut self, function: &ast::ComponentRef, scope: Scope) -> Option<FunctionRef<'a>> {
        let mut instance = scope.instance?;
        let mut rest = function.parts.as_slice();
        while rest.len() > 1 {
            let name = &rest[0].name.name;
            let Some(crate::layout::Member::Inst(inner)) = self.ensure_member(instance, name) else {
                break;
            };
            // A conditional component may only be connected (Modelica), not looked into.
            let layout = &self.instances[instance.0 as usize].layout;
            if layout
                .index(name)
                .is_some_and(|k| layout.elements[k].decl.condition.is_some())
            {
                self.diagnostics.push(Diagnostic::error(
                    "E0205",
                    format!("`{name}` is a conditional component: it may be used only in connect equations"),
                    rest[0].name.span,
                    "conditional component",
                ));
                return None;
            }
            instance = inner;
            rest = &rest[1..];
        }
        if rest.len() == function.parts.len() {
            return None;
        }
        let inner = ast::ComponentRef {
            global: false,
            parts: rest.to_vec(),
            span: function.span,
        };
        let class = self.instances[instance.0 as usize].class;
        let scope = Scope {
            instance: Some(instance),
            class,
        };
        let found = self.function_class(&inner, scope)?;
        if rest.len() == 1 && self.declares_protected_class(class, &rest[0].name.name) {
            self.diagnostics.push(Diagnostic::error(
                "E0205",
                format!(
                    "`{}` is protected: it cannot be called through a component",
                    crate::names::ref_text(function)
                ),
                function.span,
                "protected function",
            ));
            return None;
        }
        Some(found)
    }

    /// Whether `class` itself declares a class `name` in a protected section (the name a call
    /// through a component writes; what a redeclaration makes of it does not matter).
    fn declares_protected_class(&self, class: ClassId, name: &str) -> bool {
        self.table.get(class).elements().any(|(element, visibility)| {
            visibility == ast::Visibility::Protected && matches!(element, ast::Element::Class(c) if c.name.name == name)
        })
    }

    /// False, after E0317, for a function named through a package (`P.f`) that inherits it from
    /// the package declaring it with modifiers or redeclarations: its body would read the
    /// declaring package's constants and classes instead of `P`'s.
    fn called_through_its_package(&mut self, class: ClassId, name: &ast::Name, scope: Scope) -> bool {
        let Some(declaring) = self.table.get(class).parent else {
            return true;
        };
        if name.parts.len() < 2 {
            return true;
        }
        let package = ast::Name {
            global: name.global,
            parts: name.parts[..name.parts.len() - 1].to_vec(),
            span: name.span,
        };
        let Ok((TypeRef::Class(through), _)) = self.lookup_class(scope, &package) else {
            return true;
        };
        if through == declaring || !self.inherited_with_other_meaning(through, declaring) {
            return true;
        }
        self.diagnostics.push(
            Diagnostic::error(
                "E0317",
                format!(
                    "`{}` is declared in `{}` and inherited by `{}` with modifiers or redeclarations; EQM would evaluate it with the values of `{}`, so it does not call it",
                    eqm_syntax::pretty::name_text(name),
                    self.table.get(declaring).full_name,
                    self.table.get(through).full_name,
                    self.table.get(declaring).full_name,
                ),
                name.span,
                "inherited function of a modified package",
            )
            .with_help("EQM evaluates a function with the constants of the package that declares it; inherited through modifiers, these are not the values of the package it is called through"),
        );
        false
    }

    pub(crate) fn function_class(&mut self, function: &ast::ComponentRef, scope: Scope) -> Option<FunctionRef<'a>> {
        if function.parts.is_empty() || function.parts.iter().any(|p| !p.subscripts.is_empty()) {
            return None;
        }
        if function.parts.len() == 1
            && let Some(local) = self.functional_local(scope, &function.parts[0].name.name)
        {
            return Some(self.functional_ref(&local));
        }
        let name = ast::Name {
            global: function.global,
            parts: function.parts.iter().map(|p| p.name.clone()).collect(),
            span: function.span,
        };
        let Ok((TypeRef::Class(mut class), mut defaults)) = self.lookup_class(scope, &name) else {
            // A function of a component's class (`world.gravityAcceleration(r)`), or else
            // perhaps a functional parameter of the instance.
            if let Some(found) = self.function_of_component(function, scope) {
                return Some(found);
            }
            return self.named_functional_parameter(function, scope);
        };
        if !self.called_through_its_package(class, &name, scope) {
            return None;
        }
        // The name of an external object class called is its constructor, Modelica.
        if self.is_external_object(class) {
            class = self.object_function(class, "constructor", function.span)?;
        }
        // A chain of short definitions names each class once, so one longer than the table is
        // a cycle.
        let mut partial: Option<PartialDerivative> = None;
        for _ in 0..=self.table.classes.len() {
            let entry = self.table.get(class);
            if !entry.def.kind.is_function() {
                return None;
            }
            let ast::ClassBody::Short { base, modification, .. } = &entry.def.body else {
                let mut found = FunctionRef::plain(class, defaults);
                found.partial = partial;
                return Some(found);
            };
            let parent = entry.parent.unwrap_or(class);
            // The modifiers are evaluated where the definition stands: in the instance when a
            // model declares it (`function g = f(k = k)` using the model's parameter `k`).
            let base_scope = Scope {
                instance: scope
                    .instance
                    .filter(|i| self.instances[i.0 as usize].layout.classes.contains(&parent)),
                class: parent,
            };
            // `function f_T = der(f, T)`: the derivatives of an inner definition come first.
            if let Some((differentiated, by)) = partial_derivative_definition(&entry.def.body) {
                let definition = entry.def.name.span;
                let outer = partial.get_or_insert_with(|| PartialDerivative {
                    by: Vec::new(),
                    definition,
                });
                outer.by.splice(0..0, by);
                let Ok((TypeRef::Class(next), more)) = self.lookup_class(base_scope, differentiated) else {
                    self.diagnostics.push(Diagnostic::error(
                        "E0204",
                        format!("unknown function `{}`", eqm_syntax::pretty::name_text(differentiated)),
                        differentiated.span,
                        "no such function to differentiate",
                    ));
                    return None;
                };
                defaults = defaults.merge_owned(more);
                class = next;
                continue;
            }
            if let Some(m) = modification {
                defaults = defaults.merge_owned(Modifier::from_class_modification(m, base_scope));
            }
            let (TypeRef::Class(next), more) = self.lookup_class(base_scope, base).ok()? else {
                return None;
            };
            defaults = defaults.merge_owned(more);
            class = next;
        }
        None
    }

    /// The statement that makes call `call` for what it does, when it is a call of a function
    /// instance whose body can stop the run (an assertion, `terminate`, or a call statement of
    /// such a function); `None` for any other call (evaluated at compile time, or of a function
    /// that only computes its outputs).
    pub(crate) fn effect_call(&self, call: ExprId, span: Span) -> Option<eqm_ir::flat::Statement> {
        let Node::Call(Callee::User(id), args) = self.model.exprs.get(call) else {
            return None;
        };
        let body = &self.model.functions.get(id.0 as usize)?.body;
        use eqm_ir::flat::Statement as S;
        let acts = S::any_in(body, |s| {
            matches!(
                s,
                S::Assert { .. } | S::Terminate { .. } | S::Call { .. } | S::Print { .. }
            )
        });
        acts.then(|| eqm_ir::flat::Statement::Call {
            function: *id,
            args: args.to_vec(),
            span,
        })
    }
}
