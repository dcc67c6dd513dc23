//! Relations in algorithm sections: where a section evaluates what, in execution order, and
//! the rewriting of relations whose surfaces would read a value the section changes after the
//! test.
//!
//! Input: the statements of one (non-initial) algorithm section, with the relations already
//! reading relation variables. Output: the expressions that generate events (not those of
//! `while` loops, which run to their end within one evaluation, nor assertions, which are
//! checked, not switched on), and the statements with hidden variables (`$capN`) set before
//! the tests that need them; a test whose surface reads a value the section assigned before
//! it reads, at an event, its literal value (`$event`); afterwards, the relations the rewriting
//! left unread are no longer watched. It deliberately leaves the equations and when-clauses
//! alone: their relations are extracted by the parent module.

use super::*;
use eqm_ir::flat::{Place, Statement};

/// The statements of a section in execution order: each expression that can generate events,
/// with its position and span, and the last position at which each variable is assigned.
pub(super) struct ExecutionOrder {
    pub(super) reads: Vec<(usize, ExprId, Span)>,
    pub(super) last_assigned: FxHashMap<VarId, usize>,
    pub(super) first_assigned: FxHashMap<VarId, usize>,
}

impl ExecutionOrder {
    pub(super) fn of(statements: &[Statement]) -> ExecutionOrder {
        let mut order = ExecutionOrder {
            reads: Vec::new(),
            last_assigned: FxHashMap::default(),
            first_assigned: FxHashMap::default(),
        };
        let mut position = 0;
        order.walk(statements, &mut position, true);
        order
    }

    /// Numbers the statements depth-first; with `reading` false (inside `while`) only the
    /// assignments count.
    fn walk(&mut self, statements: &[Statement], position: &mut usize, reading: bool) {
        for st in statements {
            *position += 1;
            let at = *position;
            match st {
                Statement::Assign { target, value, span } => {
                    if reading {
                        self.reads.push((at, *value, *span));
                    }
                    if let Place::Var(v) = target {
                        self.last_assigned.insert(*v, at);
                        self.first_assigned.entry(*v).or_insert(at);
                    }
                }
                Statement::If {
                    branches,
                    else_branch,
                    span,
                } => {
                    for (c, body) in branches {
                        if reading {
                            self.reads.push((at, *c, *span));
                        }
                        self.walk(body, position, reading);
                    }
                    self.walk(else_branch, position, reading);
                }
                Statement::Unrolled { iterations, .. } => {
                    for body in iterations {
                        self.walk(body, position, reading);
                    }
                }
                Statement::For { body, .. } => self.walk(body, position, reading),
                Statement::While { body, .. } => self.walk(body, position, false),
                Statement::Assert { .. }
                | Statement::Terminate { .. }
                | Statement::Print { .. }
                | Statement::Call { .. }
                | Statement::Break { .. }
                | Statement::Return { .. } => {}
            }
        }
    }
}

impl Extractor {
    /// An algorithm section with the relations whose surfaces read a variable the section
    /// assigns at or after them (`y := u; if y > ymax then y := ymax; end if;`) rewritten: a
    /// surface is evaluated after the section ran, with the last values, so such a relation
    /// gets its own surface, a hidden variable the section sets to the surface's value right
    /// before the statement that tests it. Between events the statement runs in every
    /// evaluation or in none (its branch is frozen with the relations), so the hidden value is
    /// current or constant.
    pub(super) fn capture_late_relations(
        &mut self,
        dae: &mut Dae<IndexOne>,
        statements: Vec<Statement>,
    ) -> Vec<Statement> {
        let order = ExecutionOrder::of(&statements);
        if order.last_assigned.is_empty() || self.surfaces.is_empty() {
            return statements;
        }
        let mut surface_of: FxHashMap<VarId, (usize, Test)> = FxHashMap::default();
        for (k, s) in self.surfaces.iter().enumerate() {
            for &(v, test) in &s.relations {
                surface_of.insert(v, (k, test));
            }
        }
        let mut position = 0usize;
        let late = Late {
            last_assigned: &order.last_assigned,
            first_assigned: &order.first_assigned,
            surface_of: &surface_of,
        };
        self.capture_in(dae, statements, &mut position, &late)
    }

    fn capture_in(
        &mut self,
        dae: &mut Dae<IndexOne>,
        statements: Vec<Statement>,
        position: &mut usize,
        late: &Late<'_>,
    ) -> Vec<Statement> {
        let mut out = Vec::with_capacity(statements.len());
        for st in statements {
            *position += 1;
            let at = *position;
            let st = match st {
                Statement::If {
                    branches,
                    else_branch,
                    span,
                } => {
                    let mut conditions = Vec::new();
                    let mut bodies = Vec::new();
                    for (c, body) in branches {
                        conditions.push(c);
                        bodies.push(self.capture_in(dae, body, position, late));
                    }
                    let else_branch = self.capture_in(dae, else_branch, position, late);
                    let conditions = self.captured(dae, conditions, at, span, late, &mut out);
                    Statement::If {
                        branches: conditions.into_iter().zip(bodies).collect(),
                        else_branch,
                        span,
                    }
                }
                Statement::Assign { target, value, span } => {
                    let value = self.captured(dae, vec![value], at, span, late, &mut out)[0];
                    Statement::Assign { target, value, span }
                }
                Statement::Unrolled { iterations, span } => Statement::Unrolled {
                    iterations: iterations
                        .into_iter()
                        .map(|body| self.capture_in(dae, body, position, late))
                        .collect(),
                    span,
                },
                Statement::For {
                    index,
                    start,
                    step,
                    stop,
                    body,
                    span,
                } => Statement::For {
                    index,
                    start,
                    step,
                    stop,
                    body: self.capture_in(dae, body, position, late),
                    span,
                },
                Statement::While { condition, body, span } => Statement::While {
                    condition,
                    body: self.capture_in(dae, body, position, late),
                    span,
                },
                other => other,
            };
            out.push(st);
        }
        out
    }

    /// `exprs` (of the statement at position `at`) with each relation whose surface reads a
    /// variable assigned at or after `at` replaced by a relation on a hidden variable, whose
    /// assignment is pushed to `out` (before the statement).
    fn captured(
        &mut self,
        dae: &mut Dae<IndexOne>,
        exprs: Vec<ExprId>,
        at: usize,
        span: Span,
        late: &Late<'_>,
        out: &mut Vec<Statement>,
    ) -> Vec<ExprId> {
        let mut replace: FxHashMap<ExprId, ExprId> = FxHashMap::default();
        let mut vars = Vec::new();
        let mut surface_vars = Vec::new();
        for &e in &exprs {
            vars.clear();
            dae.exprs().vars_in(e, &mut vars);
            for &r in &vars {
                let Some(&(k, test)) = late.surface_of.get(&r) else {
                    continue;
                };
                surface_vars.clear();
                dae.exprs().vars_in(self.surfaces[k].expr, &mut surface_vars);
                let is_late = surface_vars
                    .iter()
                    .any(|w| late.last_assigned.get(w).is_some_and(|&p| p >= at));
                let node = dae.flat.exprs.var(r);
                if replace.contains_key(&node) {
                    continue;
                }
                if !is_late {
                    let is_early = surface_vars
                        .iter()
                        .any(|w| late.first_assigned.get(w).is_some_and(|&p| p < at));
                    if is_early {
                        let literal = self.literal_at_event(dae, k, test, node);
                        replace.insert(node, literal);
                    }
                    continue;
                }
                let number = self.previous.len() + self.surfaces.len() + 1;
                let text = self.surfaces[k].text.clone();
                let hidden = dae.add_relation_variable(
                    format!("$cap{number}"),
                    format!("the value `{text}` tests, where the algorithm tests it"),
                    span,
                );
                if let Some(v) = dae.flat.variables.last_mut() {
                    v.ty = eqm_ir::flat::ScalarType::Real;
                }
                let hidden_node = dae.flat.exprs.var(hidden);
                let zero = dae.flat.exprs.real(0.0);
                let relation = self.relation(dae, hidden_node, zero, test, span);
                let hidden_surface = self.surface_of[&hidden_node];
                let relation = self.literal_at_event(dae, hidden_surface, test, relation);
                if let Some(surface) = self.surfaces.last_mut()
                    && surface.expr == hidden_node
                {
                    surface.text = text;
                }
                out.push(Statement::Assign {
                    target: eqm_ir::flat::Place::Var(hidden),
                    value: self.surfaces[k].expr,
                    span,
                });
                replace.insert(node, relation);
                self.captured.insert(r);
            }
        }
        if replace.is_empty() {
            return exprs;
        }
        self.previous_of_tests(dae, &exprs, &mut replace);
        exprs
            .into_iter()
            .map(|e| eqm_ir::symbolic::substitute(&mut dae.flat.exprs, e, &|_, id| replace.get(&id).copied()))
            .collect()
    }
}

impl Extractor {
    /// Adds to `replace` the `pre` values (of `edge` and `change`) that `exprs` read of a test
    /// `replace` changes: each becomes the value before the pass of the test as the section
    /// reads it, so that after a pass it holds what the pass tested, and a when-statement that
    /// fired in one pass does not fire again in the next. One per rewritten expression.
    fn previous_of_tests(
        &mut self,
        dae: &mut Dae<IndexOne>,
        exprs: &[ExprId],
        replace: &mut FxHashMap<ExprId, ExprId>,
    ) {
        // Indexed once for all sections: the `pre` values made after the index was last
        // extended are added to it.
        for p in self.previous_index.len()..self.previous.len() {
            self.previous_index.insert(self.previous[p].var, p);
        }
        let mut vars = Vec::new();
        for &e in exprs {
            dae.exprs().vars_in(e, &mut vars);
        }
        for v in vars {
            let Some(&p) = self.previous_index.get(&v) else {
                continue;
            };
            let (old, span) = (&self.previous[p], self.previous[p].span);
            let node = dae.flat.exprs.var(v);
            if old.left_limit || old.integer_part || replace.contains_key(&node) {
                continue;
            }
            let ty = dae.flat.var(old.var).ty;
            let old_expr = old.expr;
            let expr = eqm_ir::symbolic::substitute(&mut dae.flat.exprs, old_expr, &|_, id| replace.get(&id).copied());
            if expr == old_expr {
                continue;
            }
            let var = match self.literal_previous.get(&expr) {
                Some(&var) => var,
                None => {
                    let number = self.previous.len() + 1;
                    let description = format!("the value of `{}` before the event", dae.flat.expr_text(expr));
                    let var = dae.add_relation_variable(format!("$pre{number}"), description, span);
                    if let Some(variable) = dae.flat.variables.last_mut() {
                        variable.ty = ty;
                    }
                    self.previous.push(Previous::settled(var, expr, span));
                    self.literal_previous.insert(expr, var);
                    var
                }
            };
            replace.insert(node, dae.flat.exprs.var(var));
        }
    }

    /// `relation` (of surface `k` with `test`) as an algorithm's test reads it: at an event
    /// (`$event` true) the test of the surface's value where the statement runs, since a
    /// section is executed as a sequence and a test sees what the statements before it
    /// assigned in this very pass; between events the frozen relation, whose surface the
    /// crossing detection watches. `$event` is 2 at the initial event, where every relation
    /// has its literal value; at a later one a time event's surface counts as crossed at its
    /// time, as the event iteration sets its relation (`time > T` holds at `T`).
    fn literal_at_event(&mut self, dae: &mut Dae<IndexOne>, k: usize, test: Test, relation: ExprId) -> ExprId {
        let d = self.surfaces[k].expr;
        let op = match test {
            Test::Positive => BinOp::Gt,
            Test::NonNegative => BinOp::Ge,
            Test::Negative => BinOp::Lt,
            Test::NonPositive => BinOp::Le,
        };
        let zero = dae.flat.exprs.real(0.0);
        let mut literal = dae.flat.exprs.binary(op, d, zero);
        let span = self.surfaces[k].span;
        let event = *self.event.get_or_insert_with(|| {
            let v = dae.add_relation_variable("$event".to_string(), "an event is being handled".to_string(), span);
            if let Some(variable) = dae.flat.variables.last_mut() {
                variable.ty = eqm_ir::flat::ScalarType::Integer;
            }
            v
        });
        let event = dae.flat.exprs.var(event);
        if self.surfaces[k].time_event.is_some() {
            let crossed_op = if test.holds(1) { BinOp::Ge } else { BinOp::Lt };
            let crossed = dae.flat.exprs.binary(crossed_op, d, zero);
            let between = dae.flat.exprs.real(1.5);
            let later = dae.flat.exprs.binary(BinOp::Lt, event, between);
            literal = dae.flat.exprs.add(Node::If(later, crossed, literal));
        }
        let half = dae.flat.exprs.real(0.5);
        let at_event = dae.flat.exprs.binary(BinOp::Gt, event, half);
        dae.flat.exprs.add(Node::If(at_event, literal, relation))
    }
}

/// Where each variable is assigned first and last in an algorithm section, and which surface
/// each relation variable reads.
struct Late<'a> {
    last_assigned: &'a FxHashMap<VarId, usize>,
    first_assigned: &'a FxHashMap<VarId, usize>,
    surface_of: &'a FxHashMap<VarId, (usize, Test)>,
}

/// Drops the relations the algorithm rewriting replaced everywhere from the surfaces (and the
/// surfaces left without one): a relation nothing reads any more is not watched.
pub(super) fn drop_captured_relations(dae: &Dae<IndexOne>, when_conditions: &[Vec<ExprId>], x: &mut Extractor) {
    let mut used = vec![false; dae.flat.variables.len()];
    let mut vars = Vec::new();
    let mut mark = |e: ExprId, arena: &ExprArena| {
        vars.clear();
        arena.vars_in(e, &mut vars);
        for v in &vars {
            used[v.0 as usize] = true;
        }
    };
    for eq in dae.equations.iter().chain(&dae.initial_equations) {
        mark(eq.lhs, dae.exprs());
        mark(eq.rhs, dae.exprs());
    }
    for eq in &dae.flat.invariants {
        mark(eq.lhs, dae.exprs());
        mark(eq.rhs, dae.exprs());
    }
    for conditions in when_conditions {
        for &c in conditions {
            mark(c, dae.exprs());
        }
    }
    for w in &dae.flat.whens {
        let actions = w.branches.iter().flat_map(|b| &b.actions);
        for e in actions.flat_map(|a| a.expr().into_iter().chain(a.guard())) {
            mark(e, dae.exprs());
        }
    }
    for a in &dae.flat.algorithms {
        for st in &a.statements {
            st.for_each_expr(&mut |e, _| mark(e, dae.exprs()));
        }
    }
    for p in &x.previous {
        mark(p.expr, dae.exprs());
    }
    for s in &mut x.surfaces {
        s.relations
            .retain(|(v, _)| used[v.0 as usize] || !x.captured.contains(v));
    }
    x.surfaces.retain(|s| !s.relations.is_empty());
}
