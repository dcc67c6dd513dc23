//! For-loops of algorithms and functions over a range of Reals (`for r in 0.0:h:tEnd loop`),
//! with a bound or step computed during the run or not, as Modelica defines the range: the
//! vector `{a, a + s, ..., a + m*s}` with `m = floor((b - a)/s)` (empty when `m < 0`), evaluated
//! once before the first iteration. The loop counts `k` from 0 to `m` and the index is
//! `a + k*s`, so the index takes exactly the values of that vector, whatever rounding the sum
//! `r + s` would accumulate.
//!
//! Input: the loop's index, its range (a bound or the step a Real) and body. Output: in a
//! function, a `for` statement over a new Integer local `k`, with the start and step held in
//! new locals so that the body cannot change them; in a model's algorithm, the loop of
//! `algorithm_loops` over an Integer index, the range being read again at each iteration
//! (`m` by a generated function, so that its `floor` makes no event). A model's algorithm
//! has no local places to hold Reals in, so the range's bounds and step must not read a
//! variable the body assigns (E0306 otherwise: the range would change while the loop runs).
//! A step of zero stops the run (or is an error at compile time when it is known).

use crate::eval::Loops;
use crate::eval_context::BoundIterator;
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::statements::StatementContext;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, Callee, ExprId, FuncId, Node, VarId};
use eqm_ir::flat::{self, Message, Place, ScalarType, Statement};
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// `for index in a:s:b loop body end for;` (with the further indices `rest`) when a bound
    /// or the step is a Real: true when the range is one of Reals (run here, or reported),
    /// false when it is not (the Integer paths run it).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn real_range_loop(
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
    ) -> bool {
        let ast::ExprKind::Range { start, step, stop } = &range.kind else {
            return false;
        };
        let diagnostics = self.diagnostics.len();
        let mut parts = Vec::with_capacity(3);
        for e in [Some(&**start), step.as_deref(), Some(&**stop)].into_iter().flatten() {
            match self.eval(e, scope, loops) {
                Some(Value::Scalar(x, ty @ (ScalarType::Integer | ScalarType::Real)))
                    if self.diagnostics.len() == diagnostics =>
                {
                    parts.push((x, ty))
                }
                _ => {
                    self.diagnostics.truncate(diagnostics);
                    return false;
                }
            }
        }
        if parts.iter().all(|&(_, ty)| ty == ScalarType::Integer) {
            return false;
        }
        let (a, s, b) = match parts[..] {
            [(a, _), (b, _)] => (a, self.model.exprs.real(1.0), b),
            [(a, _), (s, _), (b, _)] => (a, s, b),
            _ => return false,
        };
        if self.model.exprs.literal(s) == Some(0.0) {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                "range step is zero",
                range.span,
                "would never end",
            ));
            return true;
        }
        match cx.function {
            Some(function) => self.function_real_loop(
                function,
                index,
                (a, s, b),
                range,
                rest,
                body,
                span,
                scope,
                loops,
                cx,
                out,
            ),
            None => self.model_real_loop(index, (a, s, b), range, rest, body, span, scope, loops, cx, out),
        }
        true
    }

    /// The loop in a function: `a` and `s` held in locals, `for k in 0:m loop` over a new local
    /// `k`, the index `a + k*s`.
    #[allow(clippy::too_many_arguments)]
    fn function_real_loop(
        &mut self,
        function: FuncId,
        index: &'a ast::ForIndex,
        (a, s, b): (ExprId, ExprId, ExprId),
        range: &'a ast::Expr,
        rest: &'a [ast::ForIndex],
        body: &'a [ast::Statement],
        span: Span,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) {
        // `m` is computed from the values before they are held (the `for` evaluates it once).
        let last = self.real_range_last(a, s, b, span);
        let a = self.held_of_type(a, ScalarType::Real, "start", span, cx, out);
        let s = self.held_of_type(s, ScalarType::Real, "step", span, cx, out);
        self.assert_step_not_zero(s, range.span, out);
        let slots = &mut self.model.functions[function.0 as usize].slots;
        let slot = slots.len() as u32;
        slots.push(flat::FunctionSlot {
            name: format!("$count{slot}"),
            ty: ScalarType::Integer,
            default: None,
        });
        let exprs = &mut self.model.exprs;
        let k = exprs.add(Node::Local(slot));
        let offset = exprs.binary(BinOp::Mul, k, s);
        let value = exprs.binary(BinOp::Add, a, offset);
        let zero = exprs.int(0);
        let one = exprs.int(1);
        // The index is a value, not a place: a local of the same name is shadowed by it.
        let shadowed = self
            .context
            .frames
            .last_mut()
            .and_then(|f| f.locals.remove(&index.name.name));
        let inner = self.real_loop_body(index, value, rest, body, span, scope, loops, cx);
        if let (Some(frame), Some(previous)) = (self.context.frames.last_mut(), shadowed) {
            frame.locals.insert(index.name.name.clone(), previous);
        }
        out.push(Statement::For {
            index: slot,
            start: zero,
            step: one,
            stop: last,
            body: inner,
            span,
        });
    }

    /// The loop in a model's algorithm: `k := 0; while k <= m(a, s, b) loop body; k := k + 1;
    /// end while;` with `k` the hidden Integer index of `algorithm_loops`, the range read again
    /// at each test, which is why the body must not assign what it reads.
    #[allow(clippy::too_many_arguments)]
    fn model_real_loop(
        &mut self,
        index: &'a ast::ForIndex,
        (a, s, b): (ExprId, ExprId, ExprId),
        range: &'a ast::Expr,
        rest: &'a [ast::ForIndex],
        body: &'a [ast::Statement],
        span: Span,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) {
        self.assert_step_not_zero(s, range.span, out);
        let Place::Var(counter) = self.temporary_of_type(ScalarType::Integer, "index", span, cx) else {
            return;
        };
        let last = self.real_range_last(a, s, b, span);
        let exprs = &mut self.model.exprs;
        let k = exprs.var(counter);
        let zero = exprs.int(0);
        let one = exprs.int(1);
        let condition = exprs.binary(BinOp::Le, k, last);
        let offset = exprs.binary(BinOp::Mul, k, s);
        let value = exprs.binary(BinOp::Add, a, offset);
        let next = exprs.binary(BinOp::Add, k, one);
        out.push(Statement::Assign {
            target: Place::Var(counter),
            value: zero,
            span,
        });
        let mut inner = self.real_loop_body(index, value, rest, body, span, scope, loops, cx);
        // The range must read nothing the body assigns: it is read again at each test.
        let mut read = Vec::new();
        for x in [a, s, b] {
            self.model.exprs.vars_in(x, &mut read);
        }
        if let Some(&changed) = read.iter().find(|v| assigns(&inner, **v)) {
            let name = self.model.var(changed).name.clone();
            self.diagnostics.push(
                Diagnostic::error(
                    "E0306",
                    format!("the range of this for-loop over Reals reads `{name}`, which the loop's body assigns"),
                    range.span,
                    "would change while the loop runs",
                )
                .with_help(format!(
                    "assign the range's bounds and step to variables before the loop, or do not assign `{name}` in it"
                )),
            );
            return;
        }
        inner.push(Statement::Assign {
            target: Place::Var(counter),
            value: next,
            span,
        });
        out.push(Statement::While {
            condition,
            body: inner,
            span,
        });
    }

    /// The body flattened with the loop's index bound to `value` (a Real known during the run).
    #[allow(clippy::too_many_arguments)]
    fn real_loop_body(
        &mut self,
        index: &'a ast::ForIndex,
        value: ExprId,
        rest: &'a [ast::ForIndex],
        body: &'a [ast::Statement],
        span: Span,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
    ) -> Vec<Statement> {
        self.context.iterators.push(BoundIterator {
            name: index.name.name.clone(),
            value: Value::Scalar(value, ScalarType::Real),
            loops_below: loops.len(),
        });
        cx.loop_depth += 1;
        cx.run_time_depth += 1;
        let mut inner = Vec::new();
        self.for_statement(rest, body, span, scope, loops, cx, &mut inner);
        cx.run_time_depth -= 1;
        cx.loop_depth -= 1;
        self.context.iterators.pop();
        inner
    }

    /// An assertion that the step `s` is not zero, unless it is a literal (which is not).
    fn assert_step_not_zero(&mut self, s: ExprId, span: Span, out: &mut Vec<Statement>) {
        if self.model.exprs.literal(s).is_some() {
            return;
        }
        let zero = self.model.exprs.real(0.0);
        let condition = self.model.exprs.binary(BinOp::Ne, s, zero);
        out.push(Statement::Assert {
            condition,
            message: Message::literal("the step of the range of this for-loop is 0"),
            span,
        });
    }

    /// `m = floor((b - a)/s)`, the last count of the range `a:s:b`: a call of a generated
    /// function, so that its `floor` makes no event in a model.
    fn real_range_last(&mut self, a: ExprId, s: ExprId, b: ExprId, span: Span) -> ExprId {
        let id = self.range_function(
            "$realrangelast",
            ScalarType::Real,
            ["start", "step", "stop", "last"],
            span,
            |exprs, a, s, b| {
                let distance = exprs.binary(BinOp::Sub, b, a);
                let steps = exprs.binary(BinOp::Div, distance, s);
                exprs.builtin(Builtin::Floor, vec![steps])
            },
        );
        self.model.exprs.add(Node::Call(Callee::User(id), Box::new([a, s, b])))
    }
}

/// Whether `statements` (and the statements nested in them) assign the model variable `v`.
fn assigns(statements: &[Statement], v: VarId) -> bool {
    Statement::any_in(
        statements,
        |s| matches!(s, Statement::Assign { target: Place::Var(w), .. } if *w == v),
    )
}
