//! Reductions whose iterator ranges over bounds computed during the run and subscripts no
//! array that would bound it (`sum(j for j in 1:k)`, `product(x + j for j in a:b)`): the
//! number of terms is known only during the run, so no expression of fixed size computes it.
//! It is computed by a generated function that loops over the range: `f(a, s, b, c1, ...,
//! cn)` whose body is `acc := neutral; for j in a:s:b loop acc := acc op e(j, c1, ..., cn);
//! end for;`, the values `c1 ... cn` being what the body reads (variables, `time`, a function's
//! locals, operators such as `pre(x)` as a whole), passed in.
//!
//! Input: the reduction (`sum`, `product`, `min`, `max`), its scalar body and its iterator's
//! range. Output: the call, a scalar. `min` and `max` of an empty range stop the run (E0705)
//! with its bounds. It deliberately refuses (E0206), in a model, a body with a relation or a
//! function that makes events (`sign`, `floor`, ...): inside a function they would make none,
//! which would change what the model computes.

use crate::eval::Loops;
use crate::eval_context::BoundIterator;
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::builtins::{Builtin, BuiltinKind};
use eqm_ir::expr::{BinOp, Callee, ExprId, FuncId, FxHashMap, FxHashSet, Node};
use eqm_ir::flat::{self, Message, MessagePart, Place, ScalarType, Statement};
use eqm_syntax::ast;

/// The range `start:step:stop` of a reduction's iterator, as written.
pub(crate) struct IteratorRange {
    pub start: ExprId,
    pub step: ExprId,
    pub stop: ExprId,
    pub written: String,
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// `builtin(body for i in a:s:b, j in c:t:d, ...)` whose ranges are Integer ranges of
    /// which one at least is computed during the run, with several iterators: the call of a
    /// generated function that loops over them. `None` when the reduction is not of this form;
    /// `Some(None)` after a diagnostic.
    pub(crate) fn several_iterator_reduction(
        &mut self,
        builtin: Builtin,
        body: &'a ast::Expr,
        indices: &'a [ast::ForIndex],
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Option<Value>> {
        if indices.len() < 2 {
            return None;
        }
        let diagnostics = self.diagnostics.len();
        let mut ranges = Vec::with_capacity(indices.len());
        for index in indices {
            let range = index.range.as_ref()?;
            let ast::ExprKind::Range { start, step, stop } = &range.kind else {
                return None;
            };
            let mut parts = Vec::with_capacity(3);
            for e in [Some(&**start), step.as_deref(), Some(&**stop)].into_iter().flatten() {
                match self.eval(e, scope, loops) {
                    Some(Value::Scalar(x, ScalarType::Integer)) if self.diagnostics.len() == diagnostics => {
                        parts.push(x)
                    }
                    _ => {
                        self.diagnostics.truncate(diagnostics);
                        return None;
                    }
                }
            }
            let (start, step, stop) = match parts[..] {
                [a, b] => (a, self.model.exprs.int(1), b),
                [a, s, b] => (a, s, b),
                _ => return None,
            };
            let written = eqm_syntax::pretty::print_expr(range);
            ranges.push(IteratorRange {
                start,
                step,
                stop,
                written,
            });
        }
        let bounds: Vec<ExprId> = ranges.iter().flat_map(|r| [r.start, r.step, r.stop]).collect();
        if bounds.iter().all(|&x| self.consts.eval(&self.model, x).is_some()) {
            return None;
        }
        Some(self.reduction_function(builtin, body, indices, &ranges, scope, loops))
    }

    /// `builtin(body for i in range_1, j in range_2, ...)` as a call of a generated function
    /// that loops over the ranges (the last iterator outermost); `None` after a diagnostic.
    pub(crate) fn reduction_function(
        &mut self,
        builtin: Builtin,
        body: &'a ast::Expr,
        indices: &'a [ast::ForIndex],
        ranges: &[IteratorRange],
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        // Each iterator is a placeholder local no function has, replaced by its loop's index.
        let mut placeholders = Vec::with_capacity(indices.len());
        for index in indices {
            self.context.reduction_depth += 1;
            let placeholder = self
                .model
                .exprs
                .add(Node::Local(u32::MAX - self.context.reduction_depth));
            self.context.iterators.push(BoundIterator {
                name: index.name.name.clone(),
                value: Value::Scalar(placeholder, ScalarType::Integer),
                loops_below: loops.len(),
            });
            placeholders.push(placeholder);
        }
        let value = self.eval(body, scope, loops);
        for _ in indices {
            self.context.iterators.pop();
            self.context.reduction_depth -= 1;
        }
        let written = ranges
            .iter()
            .map(|r| format!("`{}`", r.written))
            .collect::<Vec<_>>()
            .join(", ");
        let name = indices
            .iter()
            .map(|i| format!("`{}`", i.name.name))
            .collect::<Vec<_>>()
            .join(", ");
        let (x, ty) = match value? {
            Value::Scalar(x, ty @ (ScalarType::Integer | ScalarType::Real)) => (x, ty),
            _ => {
                self.diagnostics.push(Diagnostic::error(
                    "E0206",
                    format!(
                        "the values of a reduction over the range {written}, computed during the run, must be numbers"
                    ),
                    body.span,
                    "not a scalar number",
                ));
                return None;
            }
        };
        let captured = self.captured_values(x, &placeholders);
        if self.context.frames.is_empty() && self.makes_events(x) {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0206",
                    format!(
                        "the range {written} of {name} is computed during the run and {name} subscripts no array, so the reduction is computed by a loop, where this relation or function would make no event"
                    ),
                    body.span,
                    "relation or event-making function",
                )
                .with_help("use the iterator as a subscript (`u[j]`), give the range parameter bounds, or write the loop in an algorithm"),
            );
            return None;
        }
        let ty = match builtin {
            Builtin::Sum | Builtin::Product => ty,
            _ => ScalarType::Real,
        };
        let iterators: Vec<(ExprId, &IteratorRange, &str)> = placeholders
            .iter()
            .zip(ranges)
            .zip(indices)
            .map(|((&p, r), i)| (p, r, i.name.name.as_str()))
            .collect();
        let function = self.loop_function(builtin, x, &iterators, &captured, ty, body.span);
        let mut args: Vec<ExprId> = ranges.iter().flat_map(|r| [r.start, r.step, r.stop]).collect();
        args.extend(captured.iter().copied());
        let call = self
            .model
            .exprs
            .add(Node::Call(Callee::User(function), args.into_boxed_slice()));
        Some(Value::Scalar(call, ty))
    }

    /// What `x` reads besides the `placeholder`, in a deterministic order: variables, `time`,
    /// locals of the function around it and operator calls (`pre(v)`), which are passed whole.
    fn captured_values(&self, x: ExprId, placeholders: &[ExprId]) -> Vec<ExprId> {
        let exprs = &self.model.exprs;
        let mut captured = Vec::new();
        let mut seen = FxHashSet::default();
        let mut stack = vec![x];
        while let Some(e) = stack.pop() {
            if placeholders.contains(&e) || !seen.insert(e) {
                continue;
            }
            match exprs.get(e) {
                Node::Var(_) | Node::Time | Node::Local(_) => captured.push(e),
                Node::Call(Callee::Builtin(b), _) if b.info().kind == BuiltinKind::Operator => captured.push(e),
                _ => stack.extend(exprs.children(e)),
            }
        }
        captured.sort_unstable();
        captured
    }

    /// Whether `x` has a relation or a built-in that makes events (outside operator calls)
    /// whose operands change continuously (read `time` or a continuous Real variable): one on
    /// discrete values and the iterators changes only at events anyway.
    fn makes_events(&self, x: ExprId) -> bool {
        let exprs = &self.model.exprs;
        let mut seen = FxHashSet::default();
        let mut stack = vec![x];
        while let Some(e) = stack.pop() {
            if !seen.insert(e) {
                continue;
            }
            match exprs.get(e) {
                Node::Binary(op, ..) if op.is_relation() && self.reads_continuous(e) => return true,
                Node::Call(Callee::Builtin(b), _)
                    if b.info().kind == BuiltinKind::EventMath && self.reads_continuous(e) =>
                {
                    return true;
                }
                Node::Call(Callee::Builtin(b), _) if b.info().kind == BuiltinKind::Operator => continue,
                _ => stack.extend(exprs.children(e)),
            }
        }
        false
    }

    /// Whether `x` reads `time`, a continuous Real variable or an operator other than `pre`
    /// (such as `der`).
    fn reads_continuous(&self, x: ExprId) -> bool {
        let exprs = &self.model.exprs;
        let mut seen = FxHashSet::default();
        let mut stack = vec![x];
        while let Some(e) = stack.pop() {
            if !seen.insert(e) {
                continue;
            }
            match exprs.get(e) {
                Node::Time => return true,
                &Node::Var(v) => {
                    let var = self.model.var(v);
                    if var.ty == ScalarType::Real && var.variability == flat::Variability::Continuous {
                        return true;
                    }
                }
                Node::Call(Callee::Builtin(Builtin::Pre), _) => {}
                Node::Call(Callee::Builtin(b), _) if b.info().kind == BuiltinKind::Operator => return true,
                _ => stack.extend(exprs.children(e)),
            }
        }
        false
    }

    /// The function `f(start_1, step_1, stop_1, ..., captured...)` that reduces `x` (of type
    /// `ty`) over the ranges of the `iterators` (their placeholders, ranges and names), the
    /// last outermost, `captured` being its other leaves.
    fn loop_function(
        &mut self,
        builtin: Builtin,
        x: ExprId,
        iterators: &[(ExprId, &IteratorRange, &str)],
        captured: &[ExprId],
        ty: ScalarType,
        span: Span,
    ) -> FuncId {
        let id = FuncId(self.model.functions.len() as u32);
        let ranges = 3 * iterators.len() as u32;
        let inputs = ranges + captured.len() as u32;
        let acc_slot = inputs;
        let index_slot = |k: usize| inputs + 1 + k as u32;
        let exprs = &mut self.model.exprs;
        // The body with its leaves replaced by the function's slots.
        let mut slots: FxHashMap<ExprId, ExprId> = FxHashMap::default();
        for (k, &(placeholder, ..)) in iterators.iter().enumerate() {
            slots.insert(placeholder, exprs.add(Node::Local(index_slot(k))));
        }
        for (k, &c) in captured.iter().enumerate() {
            slots.insert(c, exprs.add(Node::Local(ranges + k as u32)));
        }
        let term = eqm_ir::symbolic::substitute(exprs, x, &|_, e| slots.get(&e).copied());
        let acc = exprs.add(Node::Local(acc_slot));
        let (neutral, combined) = match builtin {
            Builtin::Sum => (exprs.int(0), exprs.binary(BinOp::Add, acc, term)),
            Builtin::Product => (exprs.int(1), exprs.binary(BinOp::Mul, acc, term)),
            Builtin::Min => (exprs.real(f64::MAX), exprs.builtin(Builtin::Min, vec![acc, term])),
            _ => (exprs.real(f64::MIN), exprs.builtin(Builtin::Max, vec![acc, term])),
        };
        let mut body = vec![Statement::Assign {
            target: Place::Local(acc_slot),
            value: neutral,
            span,
        }];
        let bounds = |exprs: &mut eqm_ir::expr::ExprArena, k: usize| {
            let first = 3 * k as u32;
            (
                exprs.add(Node::Local(first)),
                exprs.add(Node::Local(first + 1)),
                exprs.add(Node::Local(first + 2)),
            )
        };
        if matches!(builtin, Builtin::Min | Builtin::Max) {
            for (k, &(_, range, name)) in iterators.iter().enumerate() {
                let (start, step, stop) = bounds(exprs, k);
                body.push(empty_range_assertion(
                    exprs,
                    (start, step, stop),
                    &range.written,
                    name,
                    span,
                ));
            }
        }
        // The innermost loop adds the term; each enclosing one runs the loop inside it.
        let mut inner = vec![Statement::Assign {
            target: Place::Local(acc_slot),
            value: combined,
            span,
        }];
        for k in 0..iterators.len() {
            let (start, step, stop) = bounds(exprs, k);
            inner = vec![Statement::For {
                index: index_slot(k),
                start,
                step,
                stop,
                body: inner,
                span,
            }];
        }
        body.extend(inner);
        let slot = |name: String, ty: ScalarType| flat::FunctionSlot {
            name,
            ty,
            default: None,
        };
        let mut function_slots = Vec::with_capacity(inputs as usize + 1 + iterators.len());
        for &(_, _, name) in iterators {
            for part in ["start", "step", "stop"] {
                function_slots.push(slot(format!("{name}_{part}"), ScalarType::Integer));
            }
        }
        function_slots.extend((0..captured.len()).map(|k| slot(format!("value{}", k + 1), ScalarType::Real)));
        function_slots.push(slot("result".to_string(), ty));
        function_slots.extend(
            iterators
                .iter()
                .map(|&(_, _, name)| slot(name.to_string(), ScalarType::Integer)),
        );
        self.model.functions.push(flat::Function {
            name: format!("$reduction{}", id.0),
            inputs,
            outputs: 1,
            slots: function_slots,
            body,
            span,
        });
        self.functions.signatures.push(Default::default());
        id
    }
}

/// The assertion that the range `start:step:stop` (written `written`, of the iterator `name`)
/// is not empty: `min` and `max` over it have no value otherwise.
fn empty_range_assertion(
    exprs: &mut eqm_ir::expr::ExprArena,
    (start, step, stop): (ExprId, ExprId, ExprId),
    written: &str,
    name: &str,
    span: Span,
) -> Statement {
    // Not empty: the step goes from the start towards the stop.
    let zero = exprs.int(0);
    let positive = exprs.binary(BinOp::Gt, step, zero);
    let negative = exprs.binary(BinOp::Lt, step, zero);
    let upwards = exprs.binary(BinOp::Le, start, stop);
    let downwards = exprs.binary(BinOp::Ge, start, stop);
    let up = exprs.binary(BinOp::And, positive, upwards);
    let down = exprs.binary(BinOp::And, negative, downwards);
    let not_empty = exprs.binary(BinOp::Or, up, down);
    let value = |expr: ExprId, written: &str| MessagePart::Value {
        expr,
        ty: ScalarType::Integer,
        written: written.to_string(),
    };
    Statement::Assert {
        condition: not_empty,
        message: Message {
            parts: vec![
                MessagePart::Text(format!("the range `{written}` of `{name}` is ")),
                value(start, "start"),
                MessagePart::Text(":".to_string()),
                value(stop, "stop"),
                MessagePart::Text(", which is empty: its `min` or `max` has no value".to_string()),
            ],
        },
        span,
    }
}
