//! For-loops of a model's algorithm whose range is computed during the run (`for i in 1:n loop`
//! with `n` a discrete Integer), as Modelica defines them: the range is evaluated once,
//! before the first iteration, and the body runs once for each of its values in order.
//!
//! Input: the loop's index, its range `a:b` or `a:s:b` (Integer scalars) and its body. Output:
//! statements that run it with the back ends' existing `while` loop, the index and the range's
//! step and stop held in hidden variables of the section (`$indexN`, `$stepN`, `$stopN`; a
//! model's algorithm has no local slots): `i := a; while (s > 0 and i <= b) or (s < 0 and
//! i >= b) loop body; i := i + s; end while;`, after an assertion that the step is not zero.
//! Inside the body the index is an Integer known only during the run, so it may subscript
//! arrays (the element is chosen where it is read, see `subscripts`). Every variable the body
//! may assign is an output of the section, whatever the range turns out to be. It deliberately
//! handles only Integer ranges: a range of Reals computed during the run stays an error.

use crate::eval::Loops;
use crate::eval_context::BoundIterator;
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::statements::StatementContext;
use crate::value::Value;
use eqm_diag::source::Span;
use eqm_ir::expr::{BinOp, ExprId, Node};
use eqm_ir::flat::{Message, Place, ScalarType, Statement};
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// `for index in range loop body end for;` (with the further indices `rest`) of a model's
    /// algorithm, `range` a range whose bounds are computed during the run.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn model_run_time_loop(
        &mut self,
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
        // The step and the stop are held, so that the body cannot change the range.
        let step = self.held(step, "step", span, cx, out);
        let stop = self.held(stop, "stop", span, cx, out);
        let step_value = self.model.exprs.literal(step);
        if step_value.is_none_or(|s| s == 0.0) {
            let zero = self.model.exprs.int(0);
            let condition = self.model.exprs.binary(BinOp::Ne, step, zero);
            out.push(Statement::Assert {
                condition,
                message: Message::literal("the step of the range of this for-loop is 0"),
                span: range.span,
            });
        }
        let Place::Var(index_var) = self.temporary_of_type(ScalarType::Integer, "index", span, cx) else {
            return;
        };
        let i = self.model.exprs.var(index_var);
        out.push(Statement::Assign {
            target: Place::Var(index_var),
            value: start,
            span,
        });
        let exprs = &mut self.model.exprs;
        let upwards = exprs.binary(BinOp::Le, i, stop);
        let downwards = exprs.binary(BinOp::Ge, i, stop);
        let condition = match step_value {
            Some(s) if s > 0.0 => upwards,
            Some(_) => downwards,
            None => {
                let zero = exprs.int(0);
                let positive = exprs.binary(BinOp::Gt, step, zero);
                let negative = exprs.binary(BinOp::Lt, step, zero);
                let up = exprs.binary(BinOp::And, positive, upwards);
                let down = exprs.binary(BinOp::And, negative, downwards);
                exprs.binary(BinOp::Or, up, down)
            }
        };
        let next = exprs.binary(BinOp::Add, i, step);
        self.context.iterators.push(BoundIterator {
            name: index.name.name.clone(),
            value: Value::Scalar(i, ScalarType::Integer),
            loops_below: loops.len(),
        });
        cx.loop_depth += 1;
        let mut inner = Vec::new();
        self.for_statement(rest, body, span, scope, loops, cx, &mut inner);
        cx.loop_depth -= 1;
        self.context.iterators.pop();
        inner.push(Statement::Assign {
            target: Place::Var(index_var),
            value: next,
            span,
        });
        out.push(Statement::While {
            condition,
            body: inner,
            span,
        });
    }

    /// `x` itself when it is a literal, else a new place of type `ty` (a hidden variable of a
    /// model's algorithm, a local slot of a function) assigned `x` here.
    pub(crate) fn held_of_type(
        &mut self,
        x: ExprId,
        ty: ScalarType,
        what: &str,
        span: Span,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) -> ExprId {
        if self.model.exprs.literal(x).is_some() {
            return x;
        }
        let place = self.temporary_of_type(ty, what, span, cx);
        out.push(Statement::Assign {
            target: place,
            value: x,
            span,
        });
        self.place_value(place)
    }

    /// The value of `place`.
    fn place_value(&mut self, place: Place) -> ExprId {
        match place {
            Place::Var(v) => self.model.exprs.var(v),
            Place::Local(slot) => self.model.exprs.add(Node::Local(slot)),
        }
    }

    /// `x` itself when it is a literal, else a hidden Integer variable assigned `x` here.
    fn held(
        &mut self,
        x: ExprId,
        what: &str,
        span: Span,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) -> ExprId {
        if self.model.exprs.literal(x).is_some() {
            return x;
        }
        let Place::Var(v) = self.temporary_of_type(ScalarType::Integer, what, span, cx) else {
            return x;
        };
        out.push(Statement::Assign {
            target: Place::Var(v),
            value: x,
            span,
        });
        self.model.exprs.var(v)
    }

    /// A for-equation whose range `a:b` has Integer bounds computed during the run: the
    /// diagnostics since `diagnostics` are replaced by the rule it breaks. The equations of a
    /// for-equation are its body once per value of the range, so a range that changes during
    /// the run would change the number of equations.
    pub(crate) fn refuse_run_time_for_equation(
        &mut self,
        range: &'a ast::Expr,
        diagnostics: usize,
        scope: Scope,
        loops: &mut Loops,
    ) {
        let ast::ExprKind::Range { start, step, stop } = &range.kind else {
            return;
        };
        let reported = self.diagnostics.split_off(diagnostics);
        let Some(bounds) = self.loop_bounds(start, step.as_deref(), stop, scope, loops) else {
            self.diagnostics.truncate(diagnostics);
            self.diagnostics.extend(reported);
            return;
        };
        if bounds.iter().all(|&x| self.model.exprs.literal(x).is_some()) {
            self.diagnostics.extend(reported);
            return;
        }
        self.diagnostics.push(
            eqm_diag::Diagnostic::error(
                "E0206",
                "the range of a for-equation changes during the run: its bounds must be parameter expressions, since each value of the range is an equation and the number of equations cannot change",
                range.span,
                "computed during the run",
            )
            .with_help("write the loop in an algorithm section, where its range may change (`algorithm for i in 1:n loop ... end for;`), or give it a parameter range and select with `if`"),
        );
    }

    /// E0206 when the range of a for-equation, known at compile time, reads a variable that
    /// is not a parameter or constant (`for i in y loop` with `Integer y[3] = {1, 2, 3}`): its
    /// value is known only because its binding happens to be constant, and Modelica asks for
    /// a parameter expression. Only the names the range reads directly or through arithmetic
    /// are judged: `size(x, 1)` of a variable `x` is a parameter expression.
    pub(crate) fn check_for_equation_range(&mut self, range: &'a ast::Expr, scope: Scope, loops: &mut Loops) {
        if !self.caches.judged_ranges.insert(range as *const ast::Expr) {
            return;
        }
        let mut names = Vec::new();
        range_operands(range, &mut names);
        for c in names {
            if c.parts.len() == 1 && self.bound_iterator(&c.parts[0].name.name, loops).is_some() {
                continue;
            }
            let before = self.diagnostics.len();
            let targets = self.resolve_targets(c, scope, loops);
            self.diagnostics.truncate(before);
            let Some((_, targets)) = targets else { continue };
            let reads_variable = targets.iter().any(|t| match t {
                crate::layout::Target::Var(v) => matches!(
                    self.model.var(*v).variability,
                    eqm_ir::flat::Variability::Discrete | eqm_ir::flat::Variability::Continuous
                ),
                crate::layout::Target::Inst(_) => false,
            });
            if reads_variable {
                let name = eqm_syntax::pretty::print_ref(c);
                self.diagnostics.push(
                    eqm_diag::Diagnostic::error(
                        "E0206",
                        format!(
                            "the range of a for-equation reads `{name}`, a variable: it must be a parameter expression"
                        ),
                        c.span,
                        "not a parameter",
                    )
                    .with_help("declare what the range reads as a `parameter` or `constant`"),
                );
                return;
            }
        }
    }
}

/// The component references that a range expression reads directly or through arithmetic,
/// ranges, arrays and conditions, but not through function calls.
fn range_operands<'e>(e: &'e ast::Expr, out: &mut Vec<&'e ast::ComponentRef>) {
    match &e.kind {
        ast::ExprKind::Ref(c) => out.push(c),
        ast::ExprKind::Unary { operand, .. } => range_operands(operand, out),
        ast::ExprKind::Binary { lhs, rhs, .. } => {
            range_operands(lhs, out);
            range_operands(rhs, out);
        }
        ast::ExprKind::Range { start, step, stop } => {
            range_operands(start, out);
            if let Some(step) = step {
                range_operands(step, out);
            }
            range_operands(stop, out);
        }
        ast::ExprKind::Array(items) => items.iter().for_each(|item| range_operands(item, out)),
        _ => {}
    }
}
