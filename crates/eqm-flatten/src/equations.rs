//! Flattening of equations: simple and array equations, for-loops, if-equations, when-clauses,
//! assertions and `connect`.
//!
//! Input: the equations of an instance's layout (and invariants), each with its scope and the
//! loop indices in scope. Output: flat equations, element by element for arrays, with their
//! origin and the array element they come from; when-clauses with their actions; the resolved
//! sides of each `connect`, whose connection sets `connect` builds once every instance is
//! flattened. For-loops are unrolled and if-equations with conditions known at compile time
//! select their branch (each choice recorded in the flat model's `branch_choices` for `check`);
//! other if-equations become `if` expressions. It deliberately simplifies
//! nothing and counts nothing (the balance check is `balance`).

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::layout::Member;
use crate::modifier::Scope;
use crate::value::{self, Value};
use eqm_diag::Diagnostic;
use eqm_ir::expr::{BinOp, ExprId, Node, UnOp};
use eqm_ir::flat::{self, ArrayOrigin, InstanceId, Origin, ScalarType};
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    pub(crate) fn flatten_equation(&mut self, eq: &'a ast::Equation, scope: Scope, loops: &mut Loops, initial: bool) {
        // One buffer serves every equation (most give one flat equation), instead of a new
        // vector each; a nested instantiation simply starts its own.
        let mut out = std::mem::take(&mut self.equation_buffer);
        self.equation_into(eq, scope, loops, &mut out, initial);
        if initial {
            self.model.initial_equations.append(&mut out);
        } else {
            self.model.equations.append(&mut out);
        }
        self.equation_buffer = out;
    }

    pub(crate) fn flatten_invariant(&mut self, eq: &'a ast::Equation, scope: Scope) {
        let mut out = Vec::new();
        self.equation_into(eq, scope, &mut Vec::new(), &mut out, true);
        self.model.invariants.extend(out);
    }

    /// An equation inside an if- or for-equation. Top-level equations that ask the connection
    /// graph were set aside when their class was instantiated; a nested one can only be found
    /// here, when its enclosing equation also builds the graph and is flattened in turn.
    fn nested_equation_into(
        &mut self,
        eq: &'a ast::Equation,
        scope: Scope,
        loops: &mut Loops,
        out: &mut Vec<flat::Equation>,
        initial: bool,
    ) {
        if self.connections.graph.trees.is_none() && self.waits_for_graph(eq, scope, loops, initial) {
            return;
        }
        self.equation_into(eq, scope, loops, out, initial);
    }

    fn equation_into(
        &mut self,
        eq: &'a ast::Equation,
        scope: Scope,
        loops: &mut Loops,
        out: &mut Vec<flat::Equation>,
        initial: bool,
    ) {
        let instance = scope.instance.expect("equations are flattened inside an instance");
        let origin = Origin::Equation { instance };
        match &eq.kind {
            ast::EquationKind::Simple { lhs, rhs } if matches!(lhs.kind, ast::ExprKind::Tuple(_)) => {
                self.multi_output_equation(eq, lhs, rhs, scope, loops, out)
            }
            ast::EquationKind::Simple { lhs, rhs } => {
                let (Some(l), Some(r)) = self.eval_sides(lhs, rhs, scope, loops) else {
                    return;
                };
                let loop_index: Vec<i64> = loops.iter().map(|(_, v)| *v).collect();
                self.push_equation(eq, l, r, origin, loop_index, out);
            }
            ast::EquationKind::Connect { a, b } => {
                if self.connections.counting {
                    self.diagnostics.push(
                        Diagnostic::error(
                            "E0311",
                            "`connect` in an equation that depends on `cardinality` or the connection graph",
                            eq.span,
                            "not allowed here",
                        )
                        .with_help(
                            "the connects of a model decide what `cardinality` counts, so they cannot depend on it",
                        ),
                    );
                    return;
                }
                if initial {
                    self.diagnostics.push(Diagnostic::error(
                        "E0311",
                        "`connect` is not allowed in an initial equation section",
                        eq.span,
                        "not allowed here",
                    ));
                    return;
                }
                if self.connect_under_run_time_condition(eq.span) {
                    return;
                }
                // A connection to a conditional component that is not present is dropped.
                if self.refers_to_absent(a, scope) || self.refers_to_absent(b, scope) {
                    return;
                }
                // A connect that involves an expandable connector is elaborated once every
                // connect is known.
                let Some((left, right)) = self.expandable_sides(a, b, eq.span, scope, loops) else {
                    return;
                };
                // A diagram shows the connects of the model's own class (instance 0).
                if let Some(recorded) = &mut self.connections.root_connects
                    && scope.instance == Some(InstanceId(0))
                {
                    recorded.push(crate::connections::RootConnect {
                        left: left.elements.clone(),
                        right: right.elements.clone(),
                        span: eq.span,
                    });
                }
                self.add_connect(left, right, eq.span, a, b);
            }
            ast::EquationKind::For { indices, body } => self.for_loop(indices, 0, body, scope, loops, out, initial),
            ast::EquationKind::If { branches, else_branch } => {
                self.if_equation(eq, branches, else_branch, scope, loops, out, initial)
            }
            ast::EquationKind::When { branches } => self.when_equation(eq, branches, scope, loops),
            ast::EquationKind::Call { function, args } => {
                let name = eqm_syntax::pretty::print_ref(function);
                match (name.as_str(), args.positional.as_slice()) {
                    ("assert", [condition, message, ..]) => {
                        // A condition that cannot be evaluated has been reported already.
                        let Some(condition_value) = self.eval(condition, scope, loops) else {
                            return;
                        };
                        let Value::Scalar(c, eqm_ir::flat::ScalarType::Boolean) = condition_value else {
                            self.diagnostics.push(Diagnostic::error(
                                "E0306",
                                "the condition of `assert` must be a Boolean",
                                condition.span,
                                "not a Boolean",
                            ));
                            return;
                        };
                        let message = self.message(message, scope, loops);
                        let level = args
                            .positional
                            .get(2)
                            .or_else(|| args.named.iter().find(|(n, _)| n.name == "level").map(|(_, e)| e));
                        let level = match level {
                            None => flat::AssertionLevel::Error,
                            Some(e) => match self.assertion_level(e, scope, loops) {
                                Some(level) => level,
                                None => return,
                            },
                        };
                        let condition = self.guarded_condition(c);
                        self.model.assertions.push(flat::Assertion {
                            condition,
                            message,
                            level,
                            initial,
                            instance,
                            span: eq.span,
                        });
                    }
                    ("reinit" | "terminate", _) => self.diagnostics.push(Diagnostic::error(
                        "E0312",
                        format!("`{name}` is only allowed inside a when-clause"),
                        eq.span,
                        "outside when",
                    )),
                    _ if self.graph_equation(eq, function, args, scope, loops, initial) => {}
                    _ => match self.stream_call(function, args, scope, loops) {
                        Some(Some(_)) => self.diagnostics.push(
                            Diagnostic::error(
                                "E0312",
                                format!("`{name}` is only allowed inside a when-clause"),
                                eq.span,
                                "outside when",
                            )
                            .with_help("it acts at an event: write it in a when-clause (`when sample(0, 0.1) then ... end when;`), where it happens once per event rather than at every evaluation of the equations"),
                        ),
                        Some(None) => {}
                        None if self.unused_pure_call(eq, function, args, scope, loops) => {}
                        None => self.diagnostics.push(Diagnostic::error(
                            "E0310",
                            format!("a call of `{name}` is not an equation"),
                            eq.span,
                            "write `lhs = rhs`",
                        )),
                    },
                }
            }
        }
    }

    /// A call of a Modelica function (no external code) written as an equation for nothing
    /// (`f(a);`): checked like any call, and then left out, since its results are unused and
    /// such a function has no effect (Modelica lets a tool remove it). False for anything else.
    fn unused_pure_call(
        &mut self,
        eq: &'a ast::Equation,
        function: &'a ast::ComponentRef,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> bool {
        let Some(callee) = self.function_class(function, scope) else {
            return false;
        };
        let external = |s: &ast::Section| matches!(s, ast::Section::External { .. });
        if self.table.get(callee.class).sections().iter().any(external) {
            return false;
        }
        let _ = self.user_call(&callee, function, args, eq.span, scope, loops);
        true
    }

    /// `(a, b) = f(x);`: one equation per named target and output of a user function.
    fn multi_output_equation(
        &mut self,
        eq: &'a ast::Equation,
        lhs: &'a ast::Expr,
        rhs: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
        out: &mut Vec<flat::Equation>,
    ) {
        let ast::ExprKind::Tuple(targets) = &lhs.kind else {
            return;
        };
        let ast::ExprKind::Call { function, args } = &rhs.kind else {
            self.diagnostics.push(Diagnostic::error(
                "E0307",
                "a parenthesised list on the left needs a call of a user-defined function on the right",
                rhs.span,
                "not a function call",
            ));
            return;
        };
        let Some(outputs) = self.multi_output_call(function, args, targets.len(), lhs.span, rhs.span, scope, loops)
        else {
            return;
        };
        let instance = scope.instance.unwrap_or(flat::InstanceId(0));
        let loop_index: Vec<i64> = loops.iter().map(|(_, v)| *v).collect();
        for (target, value) in targets.iter().zip(outputs) {
            let Some(target) = target else { continue };
            let Some(l) = self.eval(target, scope, loops) else {
                continue;
            };
            self.push_equation(eq, l, value, Origin::Equation { instance }, loop_index.clone(), out);
        }
    }

    /// Whether reference `c` goes through a conditional component that is not present.
    fn refers_to_absent(&mut self, c: &ast::ComponentRef, scope: Scope) -> bool {
        let Some(mut current) = scope.instance else {
            return false;
        };
        for part in &c.parts {
            match self.ensure_member(current, &part.name.name) {
                Some(crate::layout::Member::Absent) => return !self.is_unsized_member(current, &part.name.name),
                Some(crate::layout::Member::Inst(i)) => current = i,
                _ => return false,
            }
        }
        false
    }

    /// The message of an assertion or `terminate`: a String, whose parts may be values known
    /// only during the run.
    pub(crate) fn message(&mut self, e: &'a ast::Expr, scope: Scope, loops: &mut Loops) -> flat::Message {
        let value = self.eval(e, scope, loops);
        match value.as_ref().and_then(|v| self.known_string(v)) {
            Some(s) => s,
            None => {
                self.diagnostics.push(Diagnostic::error(
                    "E0306",
                    "the message must be a String",
                    e.span,
                    "not a String",
                ));
                flat::Message::default()
            }
        }
    }

    /// Adds `l = r`, element-wise for arrays, checking sizes and types.
    fn push_equation(
        &mut self,
        eq: &ast::Equation,
        l: Value,
        r: Value,
        origin: Origin,
        loop_index: Vec<i64>,
        out: &mut Vec<flat::Equation>,
    ) {
        // An equation between records is one per field.
        if let (Value::Record(a), Value::Record(b)) = (&l, &r) {
            let same = a.len() == b.len() && a.iter().zip(b.iter()).all(|((x, _), (y, _))| x == y);
            if !same {
                self.diagnostics.push(Diagnostic::error(
                    "E0306",
                    "the two sides are records with different fields",
                    eq.span,
                    "different records",
                ));
                return;
            }
            for ((_, x), (_, y)) in a.iter().zip(b.iter()) {
                self.push_equation(eq, x.clone(), y.clone(), origin.clone(), loop_index.clone(), out);
            }
            return;
        }
        // Between arrays of records, one per element.
        if let (Value::Records(da, a), Value::Records(db, b)) = (&l, &r) {
            if da != db {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    format!("the two sides are arrays of records of sizes {da:?} and {db:?}"),
                    eq.span,
                    "sizes differ",
                ));
                return;
            }
            for (x, y) in a.iter().zip(b.iter()) {
                self.push_equation(eq, x.clone(), y.clone(), origin.clone(), loop_index.clone(), out);
            }
            return;
        }
        if !value::same_dims(l.dims(), r.dims()) {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                format!("the two sides have different sizes: {:?} and {:?}", l.dims(), r.dims()),
                eq.span,
                "sizes differ",
            ));
            return;
        }
        // Two empty arrays of one size equate nothing; the element type of an empty one is not
        // always known (a reference to a `Boolean u[0]` reads as an empty Real array), so it is
        // not compared.
        if l.as_slice().is_empty() && r.as_slice().is_empty() {
            return;
        }
        if self.string_equation(&l, &r, eq.span) {
            return;
        }
        let boolean = |v: &Value| v.ty() == eqm_ir::flat::ScalarType::Boolean;
        if boolean(&l) != boolean(&r) || matches!(l, Value::Str(_)) || matches!(r, Value::Str(_)) {
            self.diagnostics.push(Diagnostic::error(
                "E0306",
                format!(
                    "cannot equate {} with {}",
                    crate::value::type_name(l.ty()),
                    crate::value::type_name(r.ty())
                ),
                eq.span,
                "types differ",
            ));
            return;
        }
        if !self.model_has_room(
            self.model.equations.len() + out.len(),
            l.as_slice().len(),
            eq.span,
            "equations",
        ) {
            return;
        }
        let array = !l.dims().is_empty();
        let dims = l.dims().to_vec();
        for (k, (&x, &y)) in l.as_slice().iter().zip(r.as_slice()).enumerate() {
            let mut index = loop_index.clone();
            if array {
                index.extend(value::row_major_index(&dims, k).into_iter().map(|i| i as i64 + 1));
            }
            out.push(flat::Equation {
                lhs: x,
                rhs: y,
                origin: origin.clone(),
                span: eq.span,
                array: (!index.is_empty()).then(|| Box::new(ArrayOrigin { source: eq.span, index })),
            });
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn for_loop(
        &mut self,
        indices: &'a [ast::ForIndex],
        k: usize,
        body: &'a [ast::Equation],
        scope: Scope,
        loops: &mut Loops,
        out: &mut Vec<flat::Equation>,
        initial: bool,
    ) {
        let Some(index) = indices.get(k) else {
            for eq in body {
                self.nested_equation_into(eq, scope, loops, out, initial);
            }
            return;
        };
        // Integers known at compile time are loop indices (they may subscript arrays); any
        // other vector (`for x in w loop`) binds the index to each element's value. Without a
        // range, it is deduced from the arrays the index subscripts.
        let range = match &index.range {
            Some(range) => {
                let diagnostics = self.diagnostics.len();
                let values = self.iterator_range(range, scope, loops);
                if values.is_none() && self.diagnostics.len() > diagnostics {
                    self.refuse_run_time_for_equation(range, diagnostics, scope, loops);
                } else if values.is_some() {
                    self.check_for_equation_range(range, scope, loops);
                }
                values
            }
            None => {
                let mut refs = Vec::new();
                eqm_syntax::visit::refs_in_equations(body, &mut |c| refs.push(c));
                self.deduced_range(index, &refs, scope)
            }
        };
        let Some(range) = range else {
            return;
        };
        for value in 0..range.len() {
            // Past the size limit of the model (reported once by `push_equation`), or at an
            // unread library class, unrolling the rest of a huge loop would only waste time.
            if self.stopped() {
                return;
            }
            self.bind_iterator(&index.name.name, &range, value, loops);
            self.for_loop(indices, k + 1, body, scope, loops, out, initial);
            self.unbind_iterator(&range, loops);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn if_equation(
        &mut self,
        eq: &'a ast::Equation,
        branches: &'a [(ast::Expr, Vec<ast::Equation>)],
        else_branch: &'a [ast::Equation],
        scope: Scope,
        loops: &mut Loops,
        out: &mut Vec<flat::Equation>,
        initial: bool,
    ) {
        // Conditions known at compile time select one branch (structural parameters).
        let mut conditions = Vec::new();
        let mut decided: Vec<(String, bool)> = Vec::new();
        for (condition, body) in branches {
            let Some(c) = self.eval(condition, scope, loops) else {
                return;
            };
            let Value::Scalar(c, eqm_ir::flat::ScalarType::Boolean) = c else {
                self.diagnostics.push(Diagnostic::error(
                    "E0306",
                    "an if-condition must be a scalar Boolean",
                    condition.span,
                    "not a Boolean",
                ));
                return;
            };
            let known = self.consts.eval(&self.model, c);
            if known.is_some() && conditions.is_empty() {
                self.note_structural(c);
            }
            match known {
                Some(v) if conditions.is_empty() => {
                    decided.push((eqm_syntax::pretty::print_expr(condition), v != 0.0));
                    if v != 0.0 {
                        self.note_branch_choice(eq, decided, false);
                        self.chosen_branches += 1;
                        for e in body {
                            self.nested_equation_into(e, scope, loops, out, initial);
                        }
                        self.chosen_branches -= 1;
                        return;
                    }
                }
                _ => conditions.push((c, body)),
            }
        }
        if conditions.is_empty() {
            self.note_branch_choice(eq, decided, true);
            self.chosen_branches += 1;
            for e in else_branch {
                self.nested_equation_into(e, scope, loops, out, initial);
            }
            self.chosen_branches -= 1;
            return;
        }
        // Otherwise each branch must give the same number of equations, combined into
        // `lhs = if c1 then r1 elseif ... else rn` (or a residual form when the sides differ).
        let mut flattened: Vec<Vec<flat::Equation>> = Vec::new();
        // No earlier condition holds: the guard of each later branch starts from it.
        let mut none_before: Option<ExprId> = None;
        for (c, body) in &conditions {
            let guard = self.guard_with(none_before, *c);
            self.branch_guards.push(guard);
            let mut b = Vec::new();
            for e in body.iter() {
                self.nested_equation_into(e, scope, loops, &mut b, initial);
            }
            self.branch_guards.pop();
            flattened.push(b);
            let not_c = self.model.exprs.unary(UnOp::Not, *c);
            none_before = Some(self.guard_with(none_before, not_c));
        }
        let mut else_eqs = Vec::new();
        self.branch_guards.extend(none_before);
        for e in else_branch {
            self.nested_equation_into(e, scope, loops, &mut else_eqs, initial);
        }
        self.branch_guards
            .truncate(self.branch_guards.len() - usize::from(none_before.is_some()));
        let count = else_eqs.len();
        if flattened.iter().any(|b| b.len() != count) {
            // A condition that is not known may be one that an error reported before made
            // unknown (a parameter whose binding failed): the imbalance is then no news.
            if eqm_diag::has_errors(&self.diagnostics) {
                return;
            }
            let counts: Vec<String> = flattened
                .iter()
                .map(|b| b.len().to_string())
                .chain([count.to_string()])
                .collect();
            self.diagnostics.push(
                Diagnostic::error(
                    "E0313",
                    format!(
                        "the branches of this if-equation have different numbers of equations ({}), and its conditions are not parameter expressions",
                        counts.join(", ")
                    ),
                    eq.span,
                    "unbalanced branches",
                )
                .with_help(
                    "branches may differ only when every condition is known at translation (parameters and constants); otherwise each branch must give the same number of equations",
                ),
            );
            return;
        }
        let conditions: Vec<ExprId> = conditions.iter().map(|(c, _)| *c).collect();
        self.combine_branches(eq, &conditions, &flattened, &else_eqs, out);
    }

    /// `earlier and c`, or `c` when there is nothing earlier.
    fn guard_with(&mut self, earlier: Option<ExprId>, c: ExprId) -> ExprId {
        match earlier {
            Some(e) => self.model.exprs.binary(BinOp::And, e, c),
            None => c,
        }
    }

    /// An assertion's condition `c` as it holds where it is written: inside branches of
    /// if-equations decided during the run, `not (guards) or c`, so that it is checked only
    /// where its branch is the one that holds.
    fn guarded_condition(&mut self, c: ExprId) -> ExprId {
        let Some((&first, rest)) = self.branch_guards.split_first() else {
            return c;
        };
        let mut all = first;
        for &g in rest {
            all = self.model.exprs.binary(BinOp::And, all, g);
        }
        let outside = self.model.exprs.unary(UnOp::Not, all);
        self.model.exprs.binary(BinOp::Or, outside, c)
    }

    /// Records that the branch of the if-equation `eq` was chosen at translation by the
    /// conditions `decided` (the last is the chosen branch's, unless it is the `else` branch),
    /// once per place and choice: an if-equation of a class used many times is told once for
    /// each different choice.
    fn note_branch_choice(&mut self, eq: &ast::Equation, decided: Vec<(String, bool)>, is_else: bool) {
        let choice = flat::BranchChoice {
            span: eq.span,
            chosen: if is_else { decided.len() + 1 } else { decided.len() },
            is_else,
            conditions: decided,
        };
        if self.branch_choices_seen.insert((choice.span, choice.chosen)) {
            self.model.branch_choices.push(choice);
        }
    }

    /// The equations of an if-equation whose conditions are not known at compile time, one per
    /// position in its branches (each branch gives `count` of them): `lhs = if c1 then r1
    /// elseif ... else rn` when every branch has the same left side, else the residual form
    /// `0 = if c1 then l1 - r1 ...`.
    fn combine_branches(
        &mut self,
        eq: &'a ast::Equation,
        conditions: &[ExprId],
        flattened: &[Vec<flat::Equation>],
        else_eqs: &[flat::Equation],
        out: &mut Vec<flat::Equation>,
    ) {
        let count = else_eqs.len();
        for k in 0..count {
            let same_lhs = flattened.iter().all(|b| b[k].lhs == else_eqs[k].lhs);
            let (lhs, mut rhs) = if same_lhs {
                (else_eqs[k].lhs, else_eqs[k].rhs)
            } else {
                let zero = self.model.exprs.int(0);
                (
                    zero,
                    self.model.exprs.binary(BinOp::Sub, else_eqs[k].lhs, else_eqs[k].rhs),
                )
            };
            for (j, c) in conditions.iter().enumerate().rev() {
                let e = &flattened[j][k];
                let value = if same_lhs {
                    e.rhs
                } else {
                    self.model.exprs.binary(BinOp::Sub, e.lhs, e.rhs)
                };
                rhs = self.model.exprs.add(Node::If(*c, value, rhs));
            }
            out.push(flat::Equation {
                lhs,
                rhs,
                origin: else_eqs[k].origin.clone(),
                span: eq.span,
                array: else_eqs[k].array.clone(),
            });
        }
    }

    /// The elements of a when-condition (of a when-equation or a when-statement), which must
    /// be Boolean, and at least one.
    pub(crate) fn when_condition(
        &mut self,
        condition: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Vec<eqm_ir::expr::ExprId>> {
        let c = self.eval(condition, scope, loops)?;
        let problem = if c.ty() != eqm_ir::flat::ScalarType::Boolean {
            Some(("a when-condition must be Boolean", "not a Boolean"))
        } else if c.elements().is_empty() {
            Some(("a when-condition must have at least one element", "an empty array"))
        } else {
            None
        };
        if let Some((message, label)) = problem {
            self.diagnostics
                .push(Diagnostic::error("E0306", message, condition.span, label));
            return None;
        }
        Some(c.elements().to_vec())
    }

    /// `edge(e1) or edge(e2) or ...`: true at the event where any of the condition's elements
    /// becomes true, also while another one is true already.
    pub(crate) fn rising(&mut self, elements: &[eqm_ir::expr::ExprId]) -> eqm_ir::expr::ExprId {
        let edge = eqm_ir::expr::Callee::Builtin(eqm_ir::builtins::Builtin::Edge);
        let first = self.model.exprs.call(edge, vec![elements[0]]);
        elements[1..].iter().fold(first, |acc, &e| {
            let rises = self.model.exprs.call(edge, vec![e]);
            self.model.exprs.binary(BinOp::Or, acc, rises)
        })
    }

    fn when_equation(
        &mut self,
        eq: &'a ast::Equation,
        branches: &'a [(ast::Expr, Vec<ast::Equation>)],
        scope: Scope,
        loops: &mut Loops,
    ) {
        let instance = scope.instance.expect("inside an instance");
        let mut flat_branches = Vec::new();
        for (condition, body) in branches {
            let Some(elements) = self.when_condition(condition, scope, loops) else {
                return;
            };
            // A vector condition `when {a, b}` fires whenever any element becomes true, also when
            // another one is true already (unlike `a or b`): it rises with the rising edges of
            // its elements.
            let condition_id = match elements.as_slice() {
                [single] => *single,
                _ => self.rising(&elements),
            };
            let mut actions = Vec::new();
            self.connections.graph.when_depth += 1;
            for e in body {
                self.when_action(e, scope, loops, &mut actions);
            }
            self.connections.graph.when_depth -= 1;
            flat_branches.push(flat::WhenBranch {
                condition: condition_id,
                actions,
            });
        }
        self.model.whens.push(flat::WhenClause {
            branches: flat_branches,
            instance,
            span: eq.span,
        });
    }

    fn when_action(
        &mut self,
        eq: &'a ast::Equation,
        scope: Scope,
        loops: &mut Loops,
        actions: &mut Vec<flat::WhenAction>,
    ) {
        match &eq.kind {
            // `(r, k) = h(x);` in a when-clause assigns each target, as its equations say.
            ast::EquationKind::Simple { lhs, .. } if matches!(lhs.kind, ast::ExprKind::Tuple(_)) => {
                let mut out = Vec::new();
                self.equation_into(eq, scope, loops, &mut out, false);
                self.when_assignments(out, actions);
            }
            ast::EquationKind::Simple { lhs, rhs } => {
                let (Some(l), Some(r)) = self.eval_sides(lhs, rhs, scope, loops) else {
                    return;
                };
                // A String is refused here: EQM has no String values during the run.
                if self.string_equation(&l, &r, eq.span) {
                    return;
                }
                // `r = R(1, 2);` of a record (or an array of records) assigns each field.
                if matches!(l, Value::Record(_) | Value::Records(..)) {
                    let instance = scope.instance.expect("inside an instance");
                    let mut out = Vec::new();
                    let loop_index: Vec<i64> = loops.iter().map(|(_, v)| *v).collect();
                    self.push_equation(eq, l, r, Origin::Equation { instance }, loop_index, &mut out);
                    self.when_assignments(out, actions);
                    return;
                }
                if !value::same_dims(l.dims(), r.dims()) {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        "the two sides have different sizes",
                        eq.span,
                        "sizes differ",
                    ));
                    return;
                }
                for (x, y) in l.elements().into_iter().zip(r.elements()) {
                    match self.model.exprs.get(x) {
                        Node::Var(v) => actions.push(flat::WhenAction::Assign {
                            var: *v,
                            value: y,
                            span: eq.span,
                        }),
                        _ => self.diagnostics.push(Diagnostic::error(
                            "E0312",
                            "inside a when-clause the left side must be a variable",
                            lhs.span,
                            "not a variable",
                        )),
                    }
                }
            }
            ast::EquationKind::Call { function, args } => {
                self.when_call_action(eq, function, args, scope, loops, actions)
            }
            ast::EquationKind::If { .. } | ast::EquationKind::For { .. } => {
                let mut out = Vec::new();
                self.equation_into(eq, scope, loops, &mut out, false);
                self.when_assignments(out, actions);
            }
            _ => self.diagnostics.push(Diagnostic::error(
                "E0312",
                "this equation is not allowed inside a when-clause",
                eq.span,
                "not allowed in when",
            )),
        }
    }

    /// The flat equations of a when-clause's body as its assignments: each left side must be a
    /// variable.
    fn when_assignments(&mut self, equations: Vec<flat::Equation>, actions: &mut Vec<flat::WhenAction>) {
        for e in equations {
            match self.model.exprs.get(e.lhs) {
                Node::Var(v) => actions.push(flat::WhenAction::Assign {
                    var: *v,
                    value: e.rhs,
                    span: e.span,
                }),
                _ => self.diagnostics.push(Diagnostic::error(
                    "E0312",
                    "inside a when-clause the left side must be a variable",
                    e.span,
                    "not a variable",
                )),
            }
        }
    }

    /// A call in a when-clause: `reinit`, `assert`, `terminate`, or `print` or `error` of
    /// `Modelica.Utilities.Streams`; any other call is an error.
    fn when_call_action(
        &mut self,
        eq: &'a ast::Equation,
        function: &'a ast::ComponentRef,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
        actions: &mut Vec<flat::WhenAction>,
    ) {
        let name = eqm_syntax::pretty::print_ref(function);
        match (name.as_str(), args.positional.as_slice()) {
            ("reinit", [x, value]) => {
                let (Some(target), Some(v)) = (self.eval(x, scope, loops), self.eval(value, scope, loops)) else {
                    return;
                };
                match (target, v) {
                    (Value::Scalar(t, _), Value::Scalar(v, _)) if matches!(self.model.exprs.get(t), Node::Var(_)) => {
                        let Node::Var(var) = *self.model.exprs.get(t) else {
                            return;
                        };
                        actions.push(flat::WhenAction::Reinit {
                            var,
                            value: v,
                            span: eq.span,
                        });
                    }
                    _ => self.diagnostics.push(Diagnostic::error(
                        "E0312",
                        "`reinit` needs a scalar variable and a scalar value",
                        eq.span,
                        "bad reinit",
                    )),
                }
            }
            ("assert", [condition, message, ..]) => {
                let Some(Value::Scalar(c, _)) = self.eval(condition, scope, loops) else {
                    return;
                };
                let message = self.message(message, scope, loops);
                actions.push(flat::WhenAction::Assert {
                    condition: c,
                    message,
                    span: eq.span,
                });
            }
            ("terminate", [message]) => {
                let message = self.message(message, scope, loops);
                actions.push(flat::WhenAction::Terminate { message, span: eq.span });
            }
            _ => match self.stream_call(function, args, scope, loops) {
                Some(Some(crate::streams::StreamEffect::Print(message))) => actions.push(flat::WhenAction::Print {
                    message,
                    guard: None,
                    span: eq.span,
                }),
                // `error` stops the run with its message: an assertion that fails.
                Some(Some(crate::streams::StreamEffect::Error(message))) => actions.push(flat::WhenAction::Assert {
                    condition: self.model.exprs.boolean(false),
                    message,
                    span: eq.span,
                }),
                Some(None) => {}
                None => {
                    // A function that prints runs once at the event, for what it does.
                    if let Some(callee) = self.function_class(function, scope) {
                        let Some((call, _)) = self.user_call(&callee, function, args, eq.span, scope, loops) else {
                            return;
                        };
                        if self.printing_call_action(call, eq.span, actions) {
                            return;
                        }
                    }
                    self.diagnostics.push(Diagnostic::error(
                        "E0310",
                        format!("`{name}(...)` is not allowed in a when-clause"),
                        eq.span,
                        "use reinit, assert, terminate, Streams.print, a function that prints or `v = expr`",
                    ))
                }
            },
        }
    }

    /// The level of an `assert`: a value of the predefined enumeration `AssertionLevel` known
    /// at compile time.
    pub(crate) fn assertion_level(
        &mut self,
        e: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<flat::AssertionLevel> {
        let value = self.eval(e, scope, loops)?;
        let k = match value {
            Value::Scalar(x, ScalarType::Integer) => {
                let (ty, what) = (crate::predefined::ASSERTION_LEVEL, "the level of `assert`");
                self.predefined_literal(e, x, scope, &ty, what, "E0306")?
            }
            _ => {
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0306",
                        "the level of `assert` must be a value of the enumeration `AssertionLevel`",
                        e.span,
                        "not an AssertionLevel value",
                    )
                    .with_help("use AssertionLevel.warning or AssertionLevel.error"),
                );
                return None;
            }
        };
        // In the order of the literals of `AssertionLevel`.
        [flat::AssertionLevel::Warning, flat::AssertionLevel::Error]
            .get(k)
            .copied()
    }

    /// Whether `name` is a connector (or an array of connectors) of `instance`: the first part
    /// of a connect's reference that names an outside connector of the instance writing it.
    pub(crate) fn is_connector_member(&self, instance: InstanceId, name: &str) -> bool {
        match self.member(instance, name) {
            Some(Member::Inst(i)) => self.instances[i.0 as usize].is_connector,
            Some(Member::InstArray(array)) => array
                .elements
                .first()
                .is_some_and(|i| self.instances[i.0 as usize].is_connector),
            Some(Member::Var(v)) => self.var_kinds[v.0 as usize].is_connector_type,
            Some(Member::VarArray(array)) => array
                .elements
                .first()
                .is_some_and(|v| self.var_kinds[v.0 as usize].is_connector_type),
            _ => false,
        }
    }
}
