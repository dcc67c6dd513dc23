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
//! function that makes events (`abs`, `floor`, ...): inside a function they would make none,
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
pub(crate) struct IteratorRange<'r> {
    pub start: ExprId,
    pub step: ExprId,
    pub stop: ExprId,
    pub written: &'r str,
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// `builtin(body for index in range)` as a call of a generated function that loops over
    /// the range; `None` after a diagnostic.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn reduction_function(
        &mut self,
        builtin: Builtin,
        body: &'a ast::Expr,
        index: &'a ast::ForIndex,
        range: &IteratorRange<'_>,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let name = &index.name.name;
        // The iterator is a placeholder local no function has, replaced by the loop's index.
        self.context.reduction_depth += 1;
        let placeholder_slot = u32::MAX - self.context.reduction_depth;
        let placeholder = self.model.exprs.add(Node::Local(placeholder_slot));
        self.context.iterators.push(BoundIterator {
            name: name.clone(),
            value: Value::Scalar(placeholder, ScalarType::Integer),
            loops_below: loops.len(),
        });
        let value = self.eval(body, scope, loops);
        self.context.iterators.pop();
        self.context.reduction_depth -= 1;
        let (x, ty) = match value? {
            Value::Scalar(x, ty @ (ScalarType::Integer | ScalarType::Real)) => (x, ty),
            _ => {
                self.diagnostics.push(Diagnostic::error(
                    "E0206",
                    format!(
                        "the values of a reduction over the range `{}`, computed during the run, must be numbers",
                        range.written
                    ),
                    body.span,
                    "not a scalar number",
                ));
                return None;
            }
        };
        let captured = self.captured_values(x, placeholder);
        if self.context.frames.is_empty() && self.makes_events(x) {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0206",
                    format!(
                        "the range `{}` of `{name}` is computed during the run and `{name}` subscripts no array, so the reduction is computed by a loop, where this relation or function would make no event",
                        range.written
                    ),
                    body.span,
                    "relation or event-making function",
                )
                .with_help(format!("use `{name}` as a subscript (`u[{name}]`), give the range parameter bounds, or write the loop in an algorithm")),
            );
            return None;
        }
        let ty = match builtin {
            Builtin::Sum | Builtin::Product => ty,
            _ => ScalarType::Real,
        };
        let function = self.loop_function(builtin, x, placeholder, &captured, ty, range, name, body.span);
        let mut args = vec![range.start, range.step, range.stop];
        args.extend(captured.iter().copied());
        let call = self
            .model
            .exprs
            .add(Node::Call(Callee::User(function), args.into_boxed_slice()));
        Some(Value::Scalar(call, ty))
    }

    /// What `x` reads besides the `placeholder`, in a deterministic order: variables, `time`,
    /// locals of the function around it and operator calls (`pre(v)`), which are passed whole.
    fn captured_values(&self, x: ExprId, placeholder: ExprId) -> Vec<ExprId> {
        let exprs = &self.model.exprs;
        let mut captured = Vec::new();
        let mut seen = FxHashSet::default();
        let mut stack = vec![x];
        while let Some(e) = stack.pop() {
            if e == placeholder || !seen.insert(e) {
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

    /// Whether `x` has a relation or a built-in that makes events (outside operator calls).
    fn makes_events(&self, x: ExprId) -> bool {
        let exprs = &self.model.exprs;
        let mut seen = FxHashSet::default();
        let mut stack = vec![x];
        while let Some(e) = stack.pop() {
            if !seen.insert(e) {
                continue;
            }
            match exprs.get(e) {
                Node::Binary(op, ..) if op.is_relation() => return true,
                Node::Call(Callee::Builtin(b), _) if b.info().kind == BuiltinKind::EventMath => return true,
                Node::Call(Callee::Builtin(b), _) if b.info().kind == BuiltinKind::Operator => continue,
                _ => stack.extend(exprs.children(e)),
            }
        }
        false
    }

    /// The function `f(start, step, stop, captured...)` that reduces `x` (of type `ty`) over
    /// the range, `placeholder` being its iterator and `captured` its other leaves.
    #[allow(clippy::too_many_arguments)]
    fn loop_function(
        &mut self,
        builtin: Builtin,
        x: ExprId,
        placeholder: ExprId,
        captured: &[ExprId],
        ty: ScalarType,
        range: &IteratorRange<'_>,
        name: &str,
        span: Span,
    ) -> FuncId {
        let id = FuncId(self.model.functions.len() as u32);
        let inputs = 3 + captured.len() as u32;
        let (acc_slot, index_slot) = (inputs, inputs + 1);
        let exprs = &mut self.model.exprs;
        // The body with its leaves replaced by the function's slots.
        let mut slots: FxHashMap<ExprId, ExprId> = FxHashMap::default();
        slots.insert(placeholder, exprs.add(Node::Local(index_slot)));
        for (k, &c) in captured.iter().enumerate() {
            slots.insert(c, exprs.add(Node::Local(3 + k as u32)));
        }
        let term = eqm_ir::symbolic::substitute(exprs, x, &|_, e| slots.get(&e).copied());
        let acc = exprs.add(Node::Local(acc_slot));
        let (start, step, stop) = (
            exprs.add(Node::Local(0)),
            exprs.add(Node::Local(1)),
            exprs.add(Node::Local(2)),
        );
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
        if matches!(builtin, Builtin::Min | Builtin::Max) {
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
            body.push(Statement::Assert {
                condition: not_empty,
                message: Message {
                    parts: vec![
                        MessagePart::Text(format!("the range `{}` of `{name}` is ", range.written)),
                        value(start, "start"),
                        MessagePart::Text(":".to_string()),
                        value(stop, "stop"),
                        MessagePart::Text(", which is empty: its `min` or `max` has no value".to_string()),
                    ],
                },
                span,
            });
        }
        body.push(Statement::For {
            index: index_slot,
            start,
            step,
            stop,
            body: vec![Statement::Assign {
                target: Place::Local(acc_slot),
                value: combined,
                span,
            }],
            span,
        });
        let slot = |name: String, ty: ScalarType| flat::FunctionSlot {
            name,
            ty,
            default: None,
        };
        let mut function_slots = vec![
            slot("start".to_string(), ScalarType::Integer),
            slot("step".to_string(), ScalarType::Integer),
            slot("stop".to_string(), ScalarType::Integer),
        ];
        function_slots.extend((0..captured.len()).map(|k| slot(format!("value{}", k + 1), ScalarType::Real)));
        function_slots.push(slot("result".to_string(), ty));
        function_slots.push(slot(name.to_string(), ScalarType::Integer));
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
