//! Statements: the `algorithm` sections of model instances and the bodies of user functions.
//!
//! Input: AST statements with their [`Scope`] (inside a function, its locals are in scope).
//! Output: flat [`Statement`]s; for an algorithm section a [`flat::Algorithm`] with the model
//! variables it assigns. A for-loop whose range is known at compile time is unrolled (its index
//! may then be used in subscripts); inside functions a loop over a run-time range stays a loop
//! with the index in a local slot, in a model's algorithm it becomes a `while` loop over a hidden
//! index variable (`algorithm_loops`). Assignments are checked against their targets: inputs,
//! parameters and constants cannot be assigned. A when-statement of a model's algorithm becomes
//! an `if` on the rising edges (`edge`) of its conditions, and what it assigns is recorded as
//! discrete-time. It deliberately runs nothing: `break`,
//! `return`, `assert` and `terminate` stay statements for later stages.

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::function_table::{LocalVar, broadcast};
use crate::layout::Target;
use crate::modifier::Scope;
use crate::streams::StreamEffect;
use crate::value::Value;
use crate::when_guards::IfGuard;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{ExprId, FuncId, VarId};
use eqm_ir::flat::{self, Place, ScalarType, Statement, Variability};
use eqm_syntax::ast;
use std::collections::BTreeSet;

/// Bookkeeping while one statement list is flattened.
#[derive(Default)]
pub(crate) struct StatementContext {
    pub(crate) function: Option<FuncId>,
    /// The model instance whose algorithm this is (its temporaries belong to it).
    pub(crate) instance: Option<flat::InstanceId>,
    /// Model variables assigned so far (algorithm sections), in first-assignment order.
    pub(crate) outputs: Vec<VarId>,
    assigned: BTreeSet<VarId>,
    pub(crate) loop_depth: u32,
    /// If-, while- and for-statements around the current one whose conditions or ranges are
    /// known only during the run (a String variable of a function is not assigned inside one).
    pub(crate) run_time_depth: u32,
    /// A `return` or `break` was flattened: the statements after it may not run.
    pub(crate) left_early: bool,
    /// `if` statements around the current one (a when-statement may not be inside one).
    pub(crate) if_depth: u32,
    /// Inside the body of a when-statement: what is assigned there is discrete-time.
    pub(crate) in_when: bool,
    /// An `initial algorithm` (no when-statements there).
    pub(crate) initial: bool,
    /// Model variables assigned inside when-statements, in first-assignment order.
    when_assigned: Vec<VarId>,
    /// Model variables assigned outside when-statements, in first-assignment order.
    assigned_outside_when: Vec<VarId>,
    outside_when: BTreeSet<VarId>,
    /// Every assignment of a model variable so far, in execution order.
    pub(crate) assignments: Vec<VarId>,
    /// The `reinit`s of the when-statement branch being flattened.
    pub(crate) reinits: Vec<flat::WhenAction>,
    /// Each `reinit` of the section: its value, the number of assignments before it and where
    /// it is, to refuse a value that reads what the section assigns after it.
    pub(crate) reinit_reads: Vec<(ExprId, usize, Span, &'static str)>,
    /// Inside a when-statement: the condition under which each if-statement around the
    /// current statement runs the branch it is in, with the number of assignments before that
    /// if-statement (a print or call there happens at the event only when all of them hold).
    pub(crate) guards: Vec<(ExprId, usize)>,
}

impl StatementContext {
    /// The context of the body of function `id`, whose locals the statements assign.
    pub(crate) fn in_function(id: FuncId) -> Self {
        StatementContext {
            function: Some(id),
            ..StatementContext::default()
        }
    }

    /// Records model variable `v` as assigned by the statement being flattened: an output of
    /// the section, of the when-statement it is in or of the statements outside them.
    pub(crate) fn record_assigned(&mut self, v: VarId) {
        if self.assigned.insert(v) {
            self.outputs.push(v);
        }
        if self.in_when && !self.when_assigned.contains(&v) {
            self.when_assigned.push(v);
        }
        if !self.in_when && self.outside_when.insert(v) {
            self.assigned_outside_when.push(v);
        }
        self.assignments.push(v);
    }
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// Flattens the `algorithm` section of a model instance.
    pub(crate) fn flatten_algorithm(
        &mut self,
        statements: &'a [ast::Statement],
        scope: Scope,
        initial: bool,
        span: Span,
    ) {
        let mut cx = StatementContext {
            initial,
            instance: scope.instance,
            ..StatementContext::default()
        };
        let statements = self.statements(statements, scope, &mut Vec::new(), &mut cx);
        self.check_reinit_reads(&cx);
        let instance = scope.instance.unwrap_or(flat::InstanceId(0));
        // A section that assigns nothing is no unknown's equation: what it checks is kept as
        // the model's assertions (`algorithm_checks`), an initial section's checked at the
        // start only.
        if cx.outputs.is_empty() {
            self.section_checks(&statements, instance, initial);
            return;
        }
        self.model.algorithms.push(flat::Algorithm {
            statements,
            outputs: cx.outputs,
            when_assigned: cx.when_assigned,
            assigned_outside_when: cx.assigned_outside_when,
            previous: Vec::new(),
            instance,
            initial,
            span,
        });
    }

    pub(crate) fn statements(
        &mut self,
        statements: &'a [ast::Statement],
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
    ) -> Vec<Statement> {
        let mut out = Vec::new();
        for s in statements {
            self.statement(s, scope, loops, cx, &mut out);
        }
        out
    }

    fn statement(
        &mut self,
        s: &'a ast::Statement,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) {
        use ast::StatementKind as K;
        let span = s.span;
        match &s.kind {
            K::Assign { target, value } => self.assign_statement(target, value, span, scope, loops, cx, out),
            K::MultiAssign {
                targets,
                function,
                args,
            } => {
                if cx.function.is_some()
                    && !function.global
                    && eqm_syntax::pretty::print_ref(function) == "spatialDistribution"
                {
                    // Its profile is kept between the accepted points of a run, which a function
                    // call does not have.
                    self.diagnostics.push(Diagnostic::error(
                        "E0310",
                        "`spatialDistribution` cannot be called inside a function",
                        span,
                        "inside a function",
                    ));
                    return;
                }
                let Some(outputs) = self.multi_output_call(function, args, targets.len(), span, span, scope, loops)
                else {
                    return;
                };
                // One statement: every output is taken from the call as it was before any
                // is assigned (`(a, b) := f(a)` passes the old `a` for `b` too).
                let (mut all_places, mut all_values) = (Vec::new(), Vec::new());
                for (target, value) in targets.iter().zip(outputs) {
                    let Some(target) = target else { continue };
                    let Some(record_places) = self.whole_record_places(target, scope, loops, cx) else {
                        return;
                    };
                    if let Some(places) = record_places {
                        self.record_assignment(places, &value, target.span, span, cx, out);
                        continue;
                    }
                    let Some((dims, places, ty)) = self.places(target, scope, loops, cx) else {
                        return;
                    };
                    if self
                        .check_assignable(&value, &dims, ty, target.span, &String::new)
                        .is_none()
                    {
                        return;
                    }
                    for (place, value) in places.into_iter().zip(value.elements()) {
                        all_places.push(place);
                        all_values.push(value);
                    }
                }
                self.simultaneous_assignment(all_places, all_values, span, cx, out);
            }
            K::Call { function, args } => self.call_statement(function, args, span, scope, loops, cx, out),
            K::If { branches, else_branch } => {
                // A branch whose condition is a constant of literals (`order == 2` in a function
                // instance made for `order = 4`) is taken or dropped here, unelaborated when it
                // can never run: Modelica evaluates only the branch a condition selects, so an
                // index valid only for another value of `order` is no error there.
                let mut flat_branches = Vec::new();
                let mut chosen: &'a [ast::Statement] = else_branch;
                let mut guard = IfGuard::new(cx.in_when && cx.function.is_none(), cx.assignments.len());
                for (condition, body) in branches {
                    let Some(c) = self.condition(condition, scope, loops) else {
                        guard.leave(&mut cx.guards);
                        return;
                    };
                    match self.literal_condition(c) {
                        Some(false) => continue,
                        Some(true) => {
                            chosen = body;
                            break;
                        }
                        None => {}
                    }
                    cx.if_depth += 1;
                    cx.run_time_depth += 1;
                    guard.enter(Some(c), &mut self.model.exprs, &mut cx.guards);
                    flat_branches.push((c, self.statements(body, scope, loops, cx)));
                    guard.leave(&mut cx.guards);
                    cx.run_time_depth -= 1;
                    cx.if_depth -= 1;
                }
                let conditional = u32::from(!flat_branches.is_empty());
                cx.if_depth += 1;
                cx.run_time_depth += conditional;
                guard.enter(None, &mut self.model.exprs, &mut cx.guards);
                let else_branch = self.statements(chosen, scope, loops, cx);
                guard.leave(&mut cx.guards);
                cx.run_time_depth -= conditional;
                cx.if_depth -= 1;
                if flat_branches.is_empty() {
                    out.extend(else_branch);
                    return;
                }
                out.push(Statement::If {
                    branches: flat_branches,
                    else_branch,
                    span,
                });
            }
            K::For { indices, body } => self.for_statement(indices, body, span, scope, loops, cx, out),
            K::While { condition, body } => {
                let Some(c) = self.condition(condition, scope, loops) else {
                    return;
                };
                cx.loop_depth += 1;
                cx.run_time_depth += 1;
                let body = self.statements(body, scope, loops, cx);
                cx.run_time_depth -= 1;
                cx.loop_depth -= 1;
                out.push(Statement::While {
                    condition: c,
                    body,
                    span,
                });
            }
            K::When { branches } => self.when_statement(branches, span, scope, loops, cx, out),
            K::Break => {
                cx.left_early = true;
                let allowed = cx.loop_depth > 0;
                let refusal = ("`break` outside a loop", "no loop to leave");
                self.jump(allowed, Statement::Break { span }, span, refusal, out);
            }
            K::Return => {
                cx.left_early = true;
                let allowed = cx.function.is_some();
                let refusal = ("`return` is only allowed in a function", "not in a function");
                self.jump(allowed, Statement::Return { span }, span, refusal, out);
            }
        }
    }

    /// `target := value;`: the scalar assignments of its elements (of a record, of its
    /// fields), or the dynamic assignment of an element chosen during the run.
    #[allow(clippy::too_many_arguments)]
    fn assign_statement(
        &mut self,
        target: &'a ast::ComponentRef,
        value: &'a ast::Expr,
        span: Span,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) {
        if self
            .masked_range_assignment(target, value, span, scope, loops, cx, out)
            .is_some()
        {
            return;
        }
        if self.string_variable_assignment(target, value, scope, loops, cx) {
            return;
        }
        let Some(v) = self.eval_assigned_value(target, value, scope, loops, cx) else {
            return;
        };
        // A range computed during the run in the target's subscripts (`y[1:n] := v`) has as
        // many elements as a vector value.
        let length = self.target_range_length(target, value, &v);
        let saved = std::mem::replace(&mut self.context.range_length, length);
        let dynamic = self.dynamic_assignment(target, &v, span, scope, loops, cx);
        self.context.range_length = saved;
        if let Some(dynamic) = dynamic {
            out.extend(dynamic.into_iter().flatten());
            return;
        }
        let Some(record_places) = self.whole_record_places(target, scope, loops, cx) else {
            return;
        };
        if let Some(places) = record_places {
            self.record_assignment(places, &v, value.span, span, cx, out);
            return;
        }
        let Some((dims, places, ty)) = self.places(target, scope, loops, cx) else {
            return;
        };
        // A record is assigned field by field, in their order.
        if let Some(scalars) = crate::function_table::record_scalars(&v) {
            if scalars.len() != places.len() {
                self.diagnostics.push(Diagnostic::error(
                    "E0306",
                    "this record value does not fit the variable assigned",
                    value.span,
                    "another record",
                ));
                return;
            }
            self.simultaneous_assignment(places, scalars, span, cx, out);
            return;
        }
        if self.check_assignable(&v, &dims, ty, value.span, &String::new).is_none() {
            return;
        }
        let values = broadcast(&v, dims.iter().product());
        self.simultaneous_assignment(places, values, span, cx, out);
    }

    /// `places` of a model's record assigned the record value `v` written at `at`: every
    /// field, the right side evaluated before any is assigned.
    fn record_assignment(
        &mut self,
        places: Vec<Place>,
        v: &Value,
        at: Span,
        span: Span,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) {
        match crate::function_table::record_scalars(v) {
            Some(scalars) if scalars.len() == places.len() => {
                self.simultaneous_assignment(places, scalars, span, cx, out)
            }
            _ => self.diagnostics.push(Diagnostic::error(
                "E0306",
                "this value does not fit the record assigned: it must be a record of the same fields",
                at,
                "not that record",
            )),
        }
    }

    /// A call as a statement: `assert`, `terminate`, `reinit` at the top level of a
    /// when-statement, or a user function whose results are unused (only checked); other calls
    /// are errors.
    #[allow(clippy::too_many_arguments)]
    fn call_statement(
        &mut self,
        function: &'a ast::ComponentRef,
        args: &'a ast::CallArgs,
        span: Span,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) {
        let name = eqm_syntax::pretty::print_ref(function);
        match (name.as_str(), args.positional.as_slice()) {
            ("assert", [condition, message, ..]) => {
                self.assert_statement(args, (condition, message), span, scope, loops, cx, out)
            }
            ("reinit", arguments) if cx.in_when && cx.loop_depth == 0 => {
                self.reinit_statement(arguments, span, scope, loops, cx)
            }
            ("reinit", _) => self.diagnostics.push(
                Diagnostic::error(
                    "E0219",
                    "`reinit` is allowed only in a when-statement, outside its loops",
                    span,
                    "reinit here",
                )
                .with_help("write it in the body of a when-statement (`when c then reinit(x, e); end when;`), in an algorithm section of a model"),
            ),
            ("terminate", [message]) => self.terminate_statement(message, span, scope, loops, cx, out),
            _ => match self.stream_call(function, args, scope, loops) {
                // `error` stops the run with its message: an assertion that fails.
                Some(Some(StreamEffect::Error(message))) => out.push(Statement::Assert {
                    condition: self.model.exprs.boolean(false),
                    message,
                    span,
                }),
                Some(Some(StreamEffect::Print(message))) => self.print_statement(&name, message, span, cx, out),
                Some(None) => {}
                None => match self.function_class(function, scope) {
                    // A call whose results are unused still runs what its function does to
                    // the run (an assertion, `terminate`), and a function without outputs is
                    // called for its effect; a call of a function that does nothing but compute
                    // its outputs is only checked.
                    Some(callee) => {
                        let call = self.user_call(&callee, function, args, span, scope, loops);
                        if let Some((c, _)) = &call
                            && self.printing_call_statement(*c, span, cx)
                        {
                            return;
                        }
                        match call.as_ref().and_then(|(c, _)| self.effect_call(*c, span)) {
                            Some(statement) => out.push(statement),
                            None => out.extend(self.effect_statement(call, &name, span, cx.function)),
                        }
                    }
                    None => self.diagnostics.push(Diagnostic::error(
                        "E0310",
                        format!("a call of `{name}` is not a statement"),
                        span,
                        "write `x := expression;`",
                    )),
                },
            },
        }
    }

    /// A when-statement of an algorithm section: an `if` on the rising edges of its conditions
    /// (`elsewhen` as `elseif`; a vector condition rises when any element does), so that its body
    /// runs only at the event where a condition becomes true. What it assigns is discrete-time:
    /// the section starts from its value before the event, which holds it between events.
    fn when_statement(
        &mut self,
        branches: &'a [(ast::Expr, Vec<ast::Statement>)],
        span: Span,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) {
        let refusal = if cx.function.is_some() {
            Some(("a when-statement is not allowed in a function", "in a function"))
        } else if cx.initial {
            Some((
                "a when-statement is not allowed in an initial algorithm",
                "in an initial algorithm",
            ))
        } else if cx.in_when {
            Some(("when-statements cannot be nested", "inside another when-statement"))
        } else if cx.loop_depth > 0 || cx.if_depth > 0 {
            Some((
                "a when-statement cannot be inside an if-, for- or while-statement",
                "inside another statement",
            ))
        } else {
            None
        };
        if let Some((message, label)) = refusal {
            self.diagnostics.push(
                Diagnostic::error("E0219", message, span, label)
                    .with_help("write the when-statement at the top level of an algorithm section of a model"),
            );
            return;
        }
        let mut flat_branches = Vec::new();
        let mut reinit_branches = Vec::new();
        for (condition, body) in branches {
            let Some(elements) = self.when_condition(condition, scope, loops) else {
                return;
            };
            let rises = self.rising(&elements);
            cx.in_when = true;
            let body = self.statements(body, scope, loops, cx);
            cx.in_when = false;
            flat_branches.push((rises, body));
            // The same branch as a when-equation holds its `reinit`s (none is also a branch:
            // it keeps a later `elsewhen` from firing).
            let condition = match elements.as_slice() {
                [single] => *single,
                _ => self.rising(&elements),
            };
            reinit_branches.push(flat::WhenBranch {
                condition,
                actions: std::mem::take(&mut cx.reinits),
            });
        }
        out.push(Statement::If {
            branches: flat_branches,
            else_branch: Vec::new(),
            span,
        });
        // A `reinit` restarts a state after the event, as in a when-equation: the statement's
        // `reinit`s are a when-clause with its conditions, which fires when the statement's
        // branch runs and reads the values the section computes at that event.
        if reinit_branches.iter().any(|b| !b.actions.is_empty()) {
            self.model.whens.push(flat::WhenClause {
                branches: reinit_branches,
                instance: scope.instance.unwrap_or(flat::InstanceId(0)),
                span,
            });
        }
    }

    /// A `break` or `return` (at `span`) where the context `allowed` it; else the `refusal`
    /// (message and label) is reported there.
    fn jump(&mut self, allowed: bool, jump: Statement, span: Span, refusal: (&str, &str), out: &mut Vec<Statement>) {
        if allowed {
            out.push(jump);
        } else {
            let (message, label) = refusal;
            self.diagnostics.push(Diagnostic::error("E0219", message, span, label));
        }
    }

    /// The places an assignment target denotes, with dimensions and element type.
    fn places(
        &mut self,
        target: &'a ast::ComponentRef,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
    ) -> Option<(Vec<usize>, Vec<Place>, ScalarType)> {
        let text = eqm_syntax::pretty::print_ref(target);
        if cx.function.is_some() {
            if !self.is_local(scope, &target.parts[0].name.name) {
                self.diagnostics.push(Diagnostic::error(
                    "E0205",
                    format!("`{text}` is not a variable of this function"),
                    target.span,
                    "unknown variable",
                ));
                return None;
            }
            let (dims, slots, ty, assignable) = self.local_places(target, scope, loops)?;
            if !assignable {
                self.diagnostics.push(Diagnostic::error(
                    "E0220",
                    format!("`{text}` is an input and cannot be assigned"),
                    target.span,
                    "input",
                ));
                return None;
            }
            return Some((dims, slots.into_iter().map(Place::Local).collect(), ty));
        }
        if self.uses_conditional(target, scope) {
            return None;
        }
        let (dims, targets) = self.resolve_targets(target, scope, loops)?;
        let mut places = Vec::with_capacity(targets.len());
        let mut ty = ScalarType::Real;
        for t in targets {
            let Target::Var(v) = t else {
                self.diagnostics.push(Diagnostic::error(
                    "E0308",
                    format!("`{text}` is a component, not a variable"),
                    target.span,
                    "cannot be assigned",
                ));
                return None;
            };
            ty = self.model.var(v).ty;
            places.push(self.assigned_variable(v, target, cx)?);
        }
        Some((dims, places, ty))
    }

    /// The places of a record (or an array of records) of a model assigned whole (`r := f(x)`,
    /// `r := R(1, 2)`, `r := r2`): its variables field by field in declaration order, the order
    /// `record_scalars` gives the value assigned; `Some(None)` when `target`
    /// is no record of a model, `None` after a diagnostic.
    fn whole_record_places(
        &mut self,
        target: &'a ast::ComponentRef,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
    ) -> Option<Option<Vec<Place>>> {
        let is_model_record = cx.function.is_none()
            && scope
                .instance
                .and_then(|instance| self.member(instance, &target.parts[0].name.name))
                .is_some();
        if !is_model_record {
            return Some(None);
        }
        let (_, targets) = self.resolve_targets(target, scope, loops)?;
        let Some(Target::Inst(first)) = targets.first() else {
            return Some(None);
        };
        if !self.is_record(self.instances[first.0 as usize].class) {
            return Some(None);
        }
        let mut places = Vec::new();
        for t in &targets {
            let Target::Inst(i) = *t else { return Some(None) };
            let record = self.record_value(i, target)?;
            for scalar in crate::function_table::record_scalars(&record).unwrap_or_default() {
                let eqm_ir::expr::Node::Var(v) = *self.model.exprs.get(scalar) else {
                    self.diagnostics.push(Diagnostic::error(
                        "E0220",
                        format!(
                            "`{}` has a field fixed when the model is compiled, which cannot be assigned",
                            eqm_syntax::pretty::print_ref(target)
                        ),
                        target.span,
                        "record with a constant field",
                    ));
                    return None;
                };
                places.push(self.assigned_variable(v, target, cx)?);
            }
        }
        Some(Some(places))
    }

    /// Model variable `v` as the place of an assignment written as `target`: not a parameter
    /// or constant, and recorded as an output of the section (and of its when-statement). A
    /// parameter with `fixed = false` is an unknown of the initialization, so an initial
    /// algorithm may compute it; it stays constant during the simulation.
    pub(crate) fn assigned_variable(
        &mut self,
        v: VarId,
        target: &ast::ComponentRef,
        cx: &mut StatementContext,
    ) -> Option<Place> {
        let var = self.model.var(v);
        let computed_at_initialization =
            cx.initial && var.variability == Variability::Parameter && var.attributes.fixed == Some(false);
        if matches!(var.variability, Variability::Parameter | Variability::Constant) && !computed_at_initialization {
            self.diagnostics.push(Diagnostic::error(
                "E0220",
                format!(
                    "`{}` is a {} and cannot be assigned",
                    var.name,
                    if var.variability == Variability::Parameter {
                        "parameter"
                    } else {
                        "constant"
                    }
                ),
                target.span,
                "fixed during simulation",
            ));
            return None;
        }
        cx.record_assigned(v);
        Some(Place::Var(v))
    }

    /// `b[n] := v` or `B[i, :] := v` with a subscript known only during the run (a discrete
    /// Integer of a model, an input or local of a function): for each value the run-time
    /// subscripts may take, the assignment of the elements they select then, and an assertion
    /// that they select some. `None` when every subscript is known when the model is compiled
    /// (the ordinary assignment), or the target is no array of scalar variables; `Some(None)`
    /// after a diagnostic.
    #[allow(clippy::too_many_arguments)]
    fn dynamic_assignment(
        &mut self,
        target: &'a ast::ComponentRef,
        value: &Value,
        span: Span,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
    ) -> Option<Option<Vec<Statement>>> {
        let [part] = &target.parts[..] else { return None };
        if part.subscripts.is_empty() || matches!(value, Value::Records(..)) {
            return None;
        }
        // The array's sizes and elements: a function's local array of scalars that may be
        // assigned, or an array of model variables.
        let (dims, slots, vars) = if cx.function.is_some() {
            if !self.is_local(scope, &part.name.name) {
                return None;
            }
            let var = self.context.frames.last()?.locals.get(&part.name.name)?;
            if var.record.is_some() || var.elements.is_some() || var.function.is_some() || !var.assignable {
                return None;
            }
            (var.dims.clone(), var.slots.clone(), Vec::new())
        } else {
            let Some(crate::layout::Member::VarArray(array)) = self.ensure_member(scope.instance?, &part.name.name)
            else {
                return None;
            };
            (array.dims.to_vec(), Vec::new(), array.elements.to_vec())
        };
        let picks = self.dynamic_picks(&part.subscripts, &dims, scope, loops)?;
        let mut place = |f: &mut Self, cx: &mut StatementContext, k: usize| match slots.get(k) {
            Some(&slot) => Some(Place::Local(slot)),
            None => f.assigned_variable(vars[k], target, cx),
        };
        Some(self.dynamic_assignment_of(target, &dims, &picks, value, span, cx, &mut place))
    }

    /// A for-loop unrolled: one iteration of the remaining indices and the body per value of
    /// `index`'s range, the index bound to each value.
    #[allow(clippy::too_many_arguments)]
    fn unroll(
        &mut self,
        index: &'a ast::ForIndex,
        values: &crate::iterators::Range,
        rest: &'a [ast::ForIndex],
        body: &'a [ast::Statement],
        span: Span,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) {
        let mut iterations = Vec::with_capacity(values.len());
        cx.loop_depth += 1;
        for k in 0..values.len() {
            self.bind_iterator(&index.name.name, values, k, loops);
            let mut iteration = Vec::new();
            self.for_statement(rest, body, span, scope, loops, cx, &mut iteration);
            self.unbind_iterator(values, loops);
            iterations.push(iteration);
        }
        cx.loop_depth -= 1;
        out.push(Statement::Unrolled { iterations, span });
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn for_statement(
        &mut self,
        indices: &'a [ast::ForIndex],
        body: &'a [ast::Statement],
        span: Span,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) {
        let Some((index, rest)) = indices.split_first() else {
            cx.loop_depth += 1;
            out.extend(self.statements(body, scope, loops, cx));
            cx.loop_depth -= 1;
            return;
        };
        let Some(range) = &index.range else {
            // Without a range, the range deduced from the arrays the index subscripts, unrolled.
            let mut refs = Vec::new();
            eqm_syntax::visit::refs_in_statements(body, &mut |c| refs.push(c));
            if let Some(values) = self.deduced_range(index, &refs, scope) {
                self.unroll(index, &values, rest, body, span, scope, loops, cx, out);
            }
            return;
        };
        // A range known at compile time is unrolled, so the index may be used in subscripts.
        let diagnostics_before = self.diagnostics.len();
        // A range of Booleans keeps its values (`b[i]` with `i` Boolean picks by `false`/`true`).
        let value = self.eval(range, scope, loops);
        if value.as_ref().is_some_and(|v| !self.range_is_vector(v, range)) {
            return;
        }
        let booleans = value.as_ref().is_some_and(|v| v.ty() == ScalarType::Boolean);
        let known = value.filter(|_| !booleans).and_then(|v| {
            v.elements()
                .iter()
                .map(|&x| {
                    self.model
                        .exprs
                        .literal(x)
                        .filter(|v| v.fract() == 0.0)
                        .map(|v| v as i64)
                })
                .collect::<Option<Vec<i64>>>()
        });
        if let Some(values) = known {
            let values = crate::iterators::Range::Indices(values);
            self.unroll(index, &values, rest, body, span, scope, loops, cx, out);
            return;
        }
        // A vector of other values (`for x in w loop`, w Real) is unrolled with the index bound
        // to each element's value; inside a function a range `a:b` may depend on inputs, and
        // the loop then stays a loop.
        let is_range = matches!(range.kind, ast::ExprKind::Range { .. });
        if (cx.function.is_none() || !is_range) && self.diagnostics.len() == diagnostics_before {
            if let Some(values) = self.iterator_range(range, scope, loops) {
                self.unroll(index, &values, rest, body, span, scope, loops, cx, out);
            }
            return;
        }
        if !is_range {
            if self.diagnostics.len() == diagnostics_before {
                self.diagnostics.push(Diagnostic::error(
                    "E0206",
                    "the range of this for-loop is not known at compile time",
                    range.span,
                    "must be a range of integers known at compile time",
                ));
            }
            return;
        }
        self.diagnostics.truncate(diagnostics_before);
        if self.real_range_loop(index, range, rest, body, span, scope, loops, cx, out) {
            return;
        }
        match cx.function {
            Some(function) => self.run_time_loop(function, index, range, rest, body, span, scope, loops, cx, out),
            None => self.model_run_time_loop(index, range, rest, body, span, scope, loops, cx, out),
        }
    }

    /// A for-loop of a function over a range `a:b` or `a:s:b` that may depend on inputs: a
    /// `for` statement whose index is a new local slot, shadowing a local of the same name.
    #[allow(clippy::too_many_arguments)]
    fn run_time_loop(
        &mut self,
        function: FuncId,
        index: &'a ast::ForIndex,
        range: &'a ast::Expr,
        rest: &'a [ast::ForIndex],
        body: &'a [ast::Statement],
        span: Span,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) {
        let ast::ExprKind::Range { start, step, stop } = &range.kind else {
            return;
        };
        let Some([start, step, stop]) = self.loop_bounds(start, step.as_deref(), stop, scope, loops) else {
            return;
        };
        let slots = &mut self.model.functions[function.0 as usize].slots;
        let slot = slots.len() as u32;
        slots.push(flat::FunctionSlot {
            name: index.name.name.clone(),
            ty: ScalarType::Integer,
            default: None,
        });
        let local = LocalVar {
            dims: Vec::new(),
            slots: vec![slot],
            ty: ScalarType::Integer,
            assignable: false,
            record: None,
            function: None,
            elements: None,
        };
        let Some(frame) = self.context.frames.last_mut() else {
            return;
        };
        let shadowed = frame.locals.insert(index.name.name.clone(), local);
        cx.loop_depth += 1;
        cx.run_time_depth += 1;
        let mut inner = Vec::new();
        self.for_statement(rest, body, span, scope, loops, cx, &mut inner);
        cx.run_time_depth -= 1;
        cx.loop_depth -= 1;
        if let Some(frame) = self.context.frames.last_mut() {
            match shadowed {
                Some(previous) => frame.locals.insert(index.name.name.clone(), previous),
                None => frame.locals.remove(&index.name.name),
            };
        }
        out.push(Statement::For {
            index: slot,
            start,
            step,
            stop,
            body: inner,
            span,
        });
    }

    /// The start, step (1 when none is written) and stop of a for-loop's range `a:b` or
    /// `a:s:b` computed during the run: Integer scalars, else a diagnostic and `None`.
    pub(crate) fn loop_bounds(
        &mut self,
        start: &'a ast::Expr,
        step: Option<&'a ast::Expr>,
        stop: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<[ExprId; 3]> {
        let mut bound = |f: &mut Self, e: &'a ast::Expr| -> Option<ExprId> {
            match f.eval(e, scope, loops)? {
                Value::Scalar(x, ScalarType::Integer) => Some(x),
                _ => {
                    f.diagnostics.push(Diagnostic::error(
                        "E0306",
                        "a for-loop bound must be an Integer scalar",
                        e.span,
                        "not an Integer",
                    ));
                    None
                }
            }
        };
        let start = bound(self, start)?;
        let step = match step {
            Some(s) => bound(self, s)?,
            None => self.model.exprs.int(1),
        };
        let stop = bound(self, stop)?;
        Some([start, step, stop])
    }
}
