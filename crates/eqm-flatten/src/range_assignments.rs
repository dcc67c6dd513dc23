//! An assignment to a slice of a vector whose range is computed during the run, from a value
//! whose ranges are computed during the run too (`y[1:n] := u[1:n]`, `y[2:n] := y[1:n - 1]`):
//! neither side has a size known at compile time, but both are as long as the target's range,
//! which selects at most all `m` elements of the vector. So the assignment is `m` conditional
//! element assignments: the value's element `p` (its ranges evaluated as `a + p*s`, see
//! `range_values`) is held while `p` is below the number of elements of the target's range, and
//! then assigned to the target's element `p` under the same condition, the whole value being
//! held before any element is assigned (as every assignment of an array).
//!
//! Input: the target `y[a:s:b]` (a vector of model variables or a function's local vector)
//! and the value's expression. Output: the statements, preceded by the checks that stop the run
//! (E0705): a step of zero, a target range with more elements than the vector, and a range of
//! the value whose number of elements is not the target's, each with the values of the ranges.
//! An element of a range outside the array stops the run where it is read or assigned
//! (`subscripts`). It deliberately handles only a target that is a vector with one subscript;
//! the other forms stay errors (E0206).

use crate::eval::Loops;
use crate::eval_context::{BoundedRange, RangeLength};
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::statements::StatementContext;
use crate::subscripts::Pick;
use crate::value::Value;
use eqm_diag::source::Span;
use eqm_ir::expr::{BinOp, Callee, ExprId, FuncId, Node};
use eqm_ir::flat::{self, Message, MessagePart, Place, ScalarType, Statement};
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// `target := value` when `target` is `y[a:s:b]`, `y` a vector of `m` elements and the
    /// range computed during the run, and `value` has ranges computed during the run: the
    /// statements are appended to `out` and `Some(())` returned (also after a diagnostic).
    /// `None` when the assignment is not of this form; the value is then not evaluated.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn masked_range_assignment(
        &mut self,
        target: &'a ast::ComponentRef,
        value: &'a ast::Expr,
        span: Span,
        scope: Scope,
        loops: &mut Loops,
        cx: &mut StatementContext,
        out: &mut Vec<Statement>,
    ) -> Option<()> {
        let [part] = &target.parts[..] else { return None };
        let [ast::Subscript::Expr(range_expr)] = &part.subscripts[..] else {
            return None;
        };
        let ast::ExprKind::Range { start, step, stop } = &range_expr.kind else {
            return None;
        };
        let (slots, vars) = self.assignable_vector(&part.name.name, scope, cx)?;
        let m = slots.len().max(vars.len());
        if m == 0 {
            return None;
        }
        // The target's range, with `end` the size of the vector.
        let diagnostics = self.diagnostics.len();
        self.context.end_sizes.push(m);
        let mut parts = Vec::with_capacity(3);
        for e in [Some(&**start), step.as_deref(), Some(&**stop)].into_iter().flatten() {
            match self.eval(e, scope, loops) {
                Some(Value::Scalar(x, ScalarType::Integer)) => parts.push(x),
                _ => break,
            }
        }
        self.context.end_sizes.pop();
        let known = parts.iter().all(|&x| self.consts.eval(&self.model, x).is_some());
        if self.diagnostics.len() != diagnostics || parts.len() != 1 + usize::from(step.is_some()) + 1 || known {
            self.diagnostics.truncate(diagnostics);
            return None;
        }
        let (a, s, b) = match parts[..] {
            [a, b] => (a, self.model.exprs.int(1), b),
            [a, s, b] => (a, s, b),
            _ => return None,
        };
        let written = eqm_syntax::pretty::print_expr(range_expr);
        if !self.choices_within_limit(m, m, &written, range_expr.span) {
            return Some(());
        }
        let target_range = BoundedRange {
            start: a,
            step: s,
            stop: b,
            written: written.clone(),
            span: range_expr.span,
        };
        // The value, its ranges evaluated as `m` elements each and recorded.
        let saved = (
            self.context.range_length.replace(RangeLength {
                length: m,
                against: String::new(),
                bound: true,
            }),
            std::mem::take(&mut self.context.bounded_ranges),
        );
        let v = self.eval(value, scope, loops);
        let ranges = std::mem::replace(&mut self.context.bounded_ranges, saved.1);
        self.context.range_length = saved.0;
        let Some(v) = v.filter(|_| !ranges.is_empty()) else {
            // A value of its own size (or a wrong one): the ordinary path assigns it (or reports
            // what is wrong), evaluating it again.
            self.diagnostics.truncate(diagnostics);
            return None;
        };
        if v.dims() != [m] {
            self.diagnostics.push(eqm_diag::Diagnostic::error(
                "E0304",
                "the value assigned to a slice whose range is computed during the run must be a vector",
                value.span,
                "not a vector",
            ));
            return Some(());
        }
        let what = eqm_syntax::pretty::print_ref(target);
        let count = self.checked_count(&target_range, &what, m, span, out);
        for range in &ranges {
            let other = self.checked_count(range, &what, usize::MAX, span, out);
            let condition = self.model.exprs.binary(BinOp::Eq, other, count);
            let message = length_message(range, other, &what, count);
            out.push(Statement::Assert {
                condition,
                message,
                span: range.span,
            });
        }
        // Every element is held under its condition, then assigned under it.
        let ty = v.ty();
        let mut held = Vec::with_capacity(m);
        let mut conditions = Vec::with_capacity(m);
        for (p, &x) in v.as_slice().iter().enumerate() {
            let exprs = &mut self.model.exprs;
            let index = exprs.int(p as i64);
            let selected = exprs.binary(BinOp::Lt, index, count);
            let zero = match ty {
                ScalarType::Integer => exprs.int(0),
                ScalarType::Boolean => exprs.boolean(false),
                _ => exprs.real(0.0),
            };
            let guarded = exprs.add(Node::If(selected, x, zero));
            held.push(self.held_of_type(guarded, ty, "held", span, cx, out));
            conditions.push(selected);
        }
        let dims = [m];
        for (p, (&x, &selected)) in held.iter().zip(&conditions).enumerate() {
            let exprs = &mut self.model.exprs;
            let offset = exprs.int(p as i64);
            let distance = exprs.binary(BinOp::Mul, offset, s);
            let index = exprs.binary(BinOp::Add, a, distance);
            let picks = [Pick::Dynamic(index, written.clone())];
            let mut place = |f: &mut Self, cx: &mut StatementContext, k: usize| match slots.get(k) {
                Some(&slot) => Some(Place::Local(slot)),
                None => f.assigned_variable(vars[k], target, cx),
            };
            let element = Value::Scalar(x, ty);
            let body = self.dynamic_assignment_of(target, &dims, &picks, &element, span, cx, &mut place)?;
            out.push(Statement::If {
                branches: vec![(selected, body)],
                else_branch: Vec::new(),
                span,
            });
        }
        Some(())
    }

    /// The slots (in a function) or the variables (in a model) of the vector `name` that an
    /// algorithm may assign; `None` for anything else.
    fn assignable_vector(
        &mut self,
        name: &str,
        scope: Scope,
        cx: &StatementContext,
    ) -> Option<(Vec<u32>, Vec<eqm_ir::expr::VarId>)> {
        if cx.function.is_some() {
            let var = self.context.frames.last()?.locals.get(name)?;
            let plain = var.record.is_none() && var.elements.is_none() && var.function.is_none();
            return (plain && var.assignable && var.dims.len() == 1).then(|| (var.slots.clone(), Vec::new()));
        }
        match self.ensure_member(scope.instance?, name) {
            Some(crate::layout::Member::VarArray(array)) if array.dims.len() == 1 => {
                Some((Vec::new(), array.elements.to_vec()))
            }
            _ => None,
        }
    }

    /// The number of elements of `range`, after the statements that stop the run when its step
    /// is zero or it has more than `most` elements (the vector `what` has `most`).
    fn checked_count(
        &mut self,
        range: &BoundedRange,
        what: &str,
        most: usize,
        span: Span,
        out: &mut Vec<Statement>,
    ) -> ExprId {
        let count_function = self.range_count_function(span);
        let exprs = &mut self.model.exprs;
        let (a, s, b) = (range.start, range.step, range.stop);
        let count = exprs.add(Node::Call(Callee::User(count_function), Box::new([a, s, b])));
        if exprs.literal(s).is_none() {
            let zero = exprs.int(0);
            let condition = exprs.binary(BinOp::Ne, s, zero);
            let mut parts = range_parts(range);
            parts.push(MessagePart::Text(", whose step is 0".to_string()));
            out.push(Statement::Assert {
                condition,
                message: Message { parts },
                span: range.span,
            });
        }
        if most != usize::MAX {
            let exprs = &mut self.model.exprs;
            let limit = exprs.int(most as i64);
            let condition = exprs.binary(BinOp::Le, count, limit);
            let mut parts = range_parts(range);
            parts[0] = MessagePart::Text(format!("the range `{}` of `{what}` is ", range.written));
            parts.push(MessagePart::Text(format!(", outside 1..{most}")));
            out.push(Statement::Assert {
                condition,
                message: Message { parts },
                span: range.span,
            });
        }
        count
    }

    /// The function `count(a, s, b)`: the number of elements of the range `a:s:b` (0 for a
    /// step of zero, which the callers refuse before). A function, so that its division makes
    /// no event in a model.
    pub(crate) fn range_count_function(&mut self, span: Span) -> FuncId {
        self.range_function(
            "$rangecount",
            ScalarType::Integer,
            ["start", "step", "stop", "count"],
            span,
            crate::range_values::element_count,
        )
    }

    /// The generated function `name(a, s, b)` of three inputs of type `ty` whose one output is
    /// `value(a, s, b)`, made once per flattening (later calls return it): the computations on a
    /// range that must make no event in a model, because a function's relations make none.
    pub(crate) fn range_function(
        &mut self,
        name: &str,
        ty: ScalarType,
        slot_names: [&str; 4],
        span: Span,
        value: impl FnOnce(&mut eqm_ir::expr::ExprArena, ExprId, ExprId, ExprId) -> ExprId,
    ) -> FuncId {
        let key = (name.to_string(), Span::default(), 0);
        if let Some(&id) = self.functions.bounds_failures.get(&key) {
            return id;
        }
        let id = FuncId(self.model.functions.len() as u32);
        let exprs = &mut self.model.exprs;
        let (a, s, b) = (
            exprs.add(Node::Local(0)),
            exprs.add(Node::Local(1)),
            exprs.add(Node::Local(2)),
        );
        let result = value(exprs, a, s, b);
        self.model.functions.push(flat::Function {
            name: format!("{name}{}", id.0),
            inputs: 3,
            outputs: 1,
            slots: slot_names
                .iter()
                .map(|slot| flat::FunctionSlot {
                    name: slot.to_string(),
                    ty,
                    default: None,
                })
                .collect(),
            body: vec![Statement::Assign {
                target: Place::Local(3),
                value: result,
                span,
            }],
            span,
        });
        self.functions.signatures.push(Default::default());
        self.functions.bounds_failures.insert(key, id);
        id
    }
}

/// "the range `1:n` is 1:1:3": the range's text and values, as message parts.
fn range_parts(range: &BoundedRange) -> Vec<MessagePart> {
    let value = |expr: ExprId, written: &str| MessagePart::Value {
        expr,
        ty: ScalarType::Integer,
        written: written.to_string(),
    };
    vec![
        MessagePart::Text(format!("the range `{}` is ", range.written)),
        value(range.start, "start"),
        MessagePart::Text(":".to_string()),
        value(range.step, "step"),
        MessagePart::Text(":".to_string()),
        value(range.stop, "stop"),
    ]
}

/// "the range `1:n` is 1:1:3, with 3 elements where `y[2:n]` has 2": a range of the value
/// whose number of elements (`count`) is not the target's (`target_count`).
fn length_message(range: &BoundedRange, count: ExprId, what: &str, target_count: ExprId) -> Message {
    let mut parts = range_parts(range);
    let value = |expr: ExprId, written: &str| MessagePart::Value {
        expr,
        ty: ScalarType::Integer,
        written: written.to_string(),
    };
    parts.extend([
        MessagePart::Text(", with ".to_string()),
        value(count, "count"),
        MessagePart::Text(format!(" elements where `{what}` has ")),
        value(target_count, "target"),
    ]);
    Message { parts }
}
