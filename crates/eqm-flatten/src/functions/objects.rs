//! External objects: classes extending Modelica's predefined `ExternalObject`, each with an
//! external function `constructor` that returns the object and `destructor` that frees it.
//!
//! Input: the classes and functions the flattener meets. Output: whether a class is an external
//! object class (a component of one is a parameter holding the object's handle, a C pointer's
//! bits in a double; a call of the class's name calls its constructor), the inputs and outputs
//! of a function that are external objects (passed to C as `void*`), the linked destructor of
//! a constructor, and the diagnostics (`E0329`) of an object used as a number. It deliberately
//! creates no object: the run does, once, through the constructor's call in the parameter
//! program, and destroys each object at its end (`eqm-sim`'s object store).

use super::external::ExternalArg;
use crate::flattener::Flattener;
use crate::resolve::{ClassId, TypeRef};
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{Callee, ExprId, Node, VarId};
use eqm_ir::external::LinkedSymbol;
use eqm_ir::flat::{ScalarType, WhenAction};
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// Whether `class` is an external object class: a long class with `extends ExternalObject`
    /// where no class of that name is visible (the predefined one).
    pub(crate) fn is_external_object(&self, class: ClassId) -> bool {
        let entry = self.table.get(class);
        matches!(entry.def.body, ast::ClassBody::Long { .. })
            && entry.extends().any(|e| {
                e.base.parts.len() == 1
                    && e.base.parts[0].name == "ExternalObject"
                    && self.table.extends_base(class, e).is_err()
            })
    }

    /// The function `name` (`constructor` or `destructor`) of external object class `class`;
    /// `None` after a diagnostic at `span`.
    pub(crate) fn object_function(&mut self, class: ClassId, name: &str, span: Span) -> Option<ClassId> {
        let found = self
            .table
            .member_class(class, name, 0)
            .filter(|&f| self.table.get(f).def.kind.is_function());
        if found.is_none() {
            self.diagnostics.push(Diagnostic::error(
                "E0329",
                format!(
                    "the external object class `{}` has no function `{name}` (Modelica requires a `constructor` and a `destructor`)",
                    self.table.get(class).full_name
                ),
                span,
                "this external object",
            ));
        }
        found
    }

    /// The names of the inputs and outputs of function `class` whose type is an external
    /// object class.
    pub(super) fn object_components(&self, class: ClassId) -> Vec<&'a str> {
        self.function_components(class)
            .filter(|(clause, _, part)| {
                matches!(self.table.lookup(*part, &clause.type_name), Ok(TypeRef::Class(c)) if self.is_external_object(c))
            })
            .map(|(_, decl, _)| decl.name.name.as_str())
            .collect()
    }

    /// The external object class whose `constructor` function `class` is, if it is one.
    pub(super) fn constructed_object_class(&self, class: ClassId) -> Option<ClassId> {
        let entry = self.table.get(class);
        let parent = entry.parent?;
        (entry.def.name.name == "constructor" && self.is_external_object(parent)).then_some(parent)
    }

    /// The linked wrapper of the `destructor` of external object class `object_class`, which
    /// takes the object's handle: its external clause calls a C function with the object as
    /// its only argument (`external "C" close(object);`, or the default call of the function's
    /// own name). `None` after a diagnostic at `span`.
    pub(super) fn link_destructor(&mut self, object_class: ClassId, span: Span) -> Option<LinkedSymbol> {
        let destructor = self.object_function(object_class, "destructor", span)?;
        let entry = self.table.get(destructor);
        let function = entry.full_name.clone();
        let inputs = self.input_names(destructor);
        let clause = entry.sections().iter().find_map(|s| match s {
            ast::Section::External {
                language,
                call,
                annotation,
                span,
            } => Some((language, call, annotation.as_ref(), *span)),
            _ => None,
        });
        let not_fit = |why: &str| {
            Diagnostic::error(
                "E0329",
                format!("the destructor `{function}` of an external object {why}"),
                span,
                "this external object",
            )
        };
        let Some((language, call, annotation, clause_span)) = clause else {
            self.diagnostics
                .push(not_fit("is not an external function (Modelica requires one)"));
            return None;
        };
        if !matches!(language.as_deref(), None | Some("C")) {
            self.diagnostics.push(not_fit("is not an external \"C\" function"));
            return None;
        }
        let c_function = match call {
            Some(call) => {
                let passes_object = matches!(call.args.as_slice(), [ast::Expr { kind: ast::ExprKind::Ref(r), .. }]
                    if r.parts.len() == 1 && inputs.first() == Some(&r.parts[0].name.name.as_str()));
                if !passes_object || call.output.is_some() || inputs.len() != 1 {
                    self.diagnostics.push(
                        not_fit("must call its C function with the object as the only argument, and return nothing")
                            .with_label(clause_span, "this external clause"),
                    );
                    return None;
                }
                call.function.name.clone()
            }
            None if inputs.len() == 1 => entry.def.name.name.clone(),
            None => {
                self.diagnostics.push(not_fit("must have the object as its only input"));
                return None;
            }
        };
        let handle = self.model.exprs.real(0.0);
        let args = [ExternalArg {
            value: Value::Scalar(handle, ScalarType::Real),
            is_size: false,
            is_object: true,
            output: None,
            span: clause_span,
        }];
        self.external_c_call(&function, &c_function, &args, None, false, annotation, clause_span)?;
        // The destructor is called by the run's object store, never by the model: its entry
        // would be an external function nobody calls.
        self.model.externals.pop().map(|f| f.symbol)
    }

    /// Reports every use of an external object as a number (`E0329`): in arithmetic, a
    /// comparison, a condition or an equation, anywhere but as an argument of a function call
    /// or as the whole binding of another external object; and every call of a constructor
    /// other than the whole binding of an external object (an object made anywhere else would
    /// have no owner to destroy it). One walk over each expression reached from the model's
    /// equations, bindings, assertions, when-clauses, algorithms and function bodies, each node
    /// checked once.
    // Long function: the roots of every kind are gathered, then walked in one loop.
    pub(crate) fn check_object_uses(&mut self) {
        if self.model.objects.is_empty() && self.model.externals.iter().all(|f| f.destructor.is_none()) {
            return;
        }
        let mut is_object = vec![false; self.model.variables.len()];
        for v in &self.model.objects {
            is_object[v.0 as usize] = true;
        }
        // The functions whose body calls a constructor's C function: the constructors.
        let mut is_constructor = vec![false; self.model.functions.len()];
        for (k, function) in self.model.functions.iter().enumerate() {
            for statement in &function.body {
                statement.for_each_expr(&mut |e, _| {
                    if let Node::Call(Callee::External(x), _) = self.model.exprs.get(e)
                        && self.model.externals[*x as usize].destructor.is_some()
                    {
                        is_constructor[k] = true;
                    }
                });
            }
        }
        let mut roots: Vec<(ExprId, Span, bool)> = Vec::new();
        for eq in self.model.equations.iter().chain(&self.model.initial_equations) {
            roots.extend([(eq.lhs, eq.span, false), (eq.rhs, eq.span, false)]);
        }
        for (k, var) in self.model.variables.iter().enumerate() {
            if let Some(b) = var.binding {
                roots.push((b, var.span, is_object[k]));
            }
        }
        roots.extend(self.model.assertions.iter().map(|a| (a.condition, a.span, false)));
        for when in &self.model.whens {
            for branch in &when.branches {
                roots.push((branch.condition, when.span, false));
                for action in &branch.actions {
                    match action {
                        WhenAction::Assign { value, span, .. } | WhenAction::Reinit { value, span, .. } => {
                            roots.push((*value, *span, false));
                        }
                        WhenAction::Assert { condition, .. } => roots.push((*condition, when.span, false)),
                        _ => {}
                    }
                }
            }
        }
        let statements = (self.model.algorithms.iter().flat_map(|a| &a.statements)).chain(
            (self.model.functions.iter().enumerate())
                .filter(|(k, _)| !is_constructor[*k])
                .flat_map(|(_, f)| &f.body),
        );
        for statement in statements {
            statement.for_each_expr(&mut |e, span| roots.push((e, span, false)));
        }
        // What a node is: an external object, a call of a constructor, or neither.
        let misuse_of = |exprs: &eqm_ir::expr::ExprArena, e: ExprId| match exprs.get(e) {
            Node::Var(v) if is_object[v.0 as usize] => Some(Some(*v)),
            Node::Call(Callee::User(f), _) if is_constructor[f.0 as usize] => Some(None),
            _ => None,
        };
        let mut seen = vec![false; self.model.exprs.len()];
        let mut stack = Vec::new();
        let mut misused: Vec<(Option<VarId>, Span)> = Vec::new();
        for (root, span, object_binding) in roots {
            if !object_binding && let Some(what) = misuse_of(&self.model.exprs, root) {
                misused.push((what, span));
                continue;
            }
            stack.push(root);
            while let Some(e) = stack.pop() {
                if std::mem::replace(&mut seen[e.0 as usize], true) {
                    continue;
                }
                let passes_objects = matches!(
                    self.model.exprs.get(e),
                    Node::Call(Callee::User(_) | Callee::External(_), _)
                );
                for child in self.model.exprs.children(e) {
                    match misuse_of(&self.model.exprs, child) {
                        Some(Some(v)) if !passes_objects => misused.push((Some(v), span)),
                        Some(Some(_)) => {}
                        Some(None) => misused.push((None, span)),
                        None => stack.push(child),
                    }
                }
            }
        }
        misused.sort_by_key(|(v, span)| (span.file, span.start, v.map(|v| v.0)));
        misused.dedup_by_key(|(_, span)| (span.file, span.start));
        for (what, span) in misused {
            let d = match what {
                Some(v) => Diagnostic::error(
                    "E0329",
                    format!(
                        "`{}` is an external object, not a number",
                        self.model.variables[v.0 as usize].name
                    ),
                    span,
                    "an external object used as a number here",
                )
                .with_help("an external object can only be passed to functions (as an input declared with its class)"),
                None => Diagnostic::error(
                    "E0329",
                    "an external object's constructor is called here, outside the binding of an external object",
                    span,
                    "a constructor call",
                )
                .with_help(
                    "declare a component of the external object's class bound to the call, and pass the component",
                ),
            };
            self.diagnostics.push(d);
        }
    }
}
