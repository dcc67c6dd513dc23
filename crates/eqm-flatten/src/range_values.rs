//! Ranges whose bounds or step are computed during the run, used as values: `y = u[1:n]`,
//! `y := A[1:n, 1]`, `y := u[1:k:n]`, `y[1:n] := v`, `y := {f(j) for j in 1:k}`. Such a range
//! has no size known at compile time, so Modelica allows it only where the size is implied by
//! what it is assigned to or equated with. EQM takes the number of elements from there: the
//! range `a:s:b` becomes the vector `{a, a + s, ..., a + (m - 1)*s}` of the `m` elements the
//! other side has, and each element checks during the run that the range has exactly `m`
//! elements (and a step that is not zero); if not, the run stops (E0705) with the range's
//! values, the number of elements expected, and the location of the range. The elements then
//! subscript arrays like any index computed during the run (`subscripts`), so an element outside
//! the array stops the run too.
//!
//! Input: the range's bounds and step, and the length required where it is evaluated
//! ([`RangeLength`], set by [`Flattener::eval_with_range_length`] and
//! [`Flattener::eval_sides`]). Output: the vector of its elements. It deliberately handles only
//! ranges whose required length comes from a whole vector on the other side, or whose length is
//! proved from the bounds themselves (`u[i - 1:i]`, see `range_lengths`): where no length is
//! known (a value whose size is not implied, a side that is a matrix, an empty other side, a
//! range inside a call's arguments or a reduction) the range stays an error (E0206).

use crate::eval::Loops;
use crate::eval_context::{BoundedRange, RangeLength};
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::statements::StatementContext;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, Callee, ExprId, FuncId, Node, UnOp};
use eqm_ir::flat::{self, Message, MessagePart, ScalarType, Statement};
use eqm_syntax::ast;

/// The most choices a slice computed during the run may take: each of its `m` elements is
/// chosen among the `n` of the dimension it indexes, so `m*n` nodes of expression, which must
/// stay within what flattening builds in a moment and a little memory.
pub(crate) const MAX_RUN_TIME_CHOICES: usize = 1_000_000;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The range `start:step:stop` (written `e`) when one of its parts is computed during the
    /// run: its elements when the expression around it requires a length, `Some(None)` after a
    /// diagnostic, and `None` when the range is known at compile time or no length is required
    /// (the compile-time path evaluates it then, and reports what is wrong).
    pub(crate) fn run_time_range_value(
        &mut self,
        e: &'a ast::Expr,
        start: &'a ast::Expr,
        step: Option<&'a ast::Expr>,
        stop: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Option<Value>> {
        let diagnostics = self.diagnostics.len();
        let mut parts = Vec::with_capacity(3);
        for part in [Some(start), step, Some(stop)].into_iter().flatten() {
            match self.eval(part, scope, loops) {
                Some(Value::Scalar(x, ScalarType::Integer)) if self.diagnostics.len() == diagnostics => parts.push(x),
                _ => {
                    self.diagnostics.truncate(diagnostics);
                    return None;
                }
            }
        }
        let (a, s, b) = match parts[..] {
            [a, b] => (a, self.model.exprs.int(1), b),
            [a, s, b] => (a, s, b),
            _ => return None,
        };
        // A range of constants and parameters is the compile-time path's.
        if [a, s, b].iter().all(|&x| self.consts.eval(&self.model, x).is_some()) {
            return None;
        }
        let mut structural = Vec::new();
        let proven =
            crate::range_lengths::proven_range_length(&self.model, &mut self.consts, (a, s, b), &mut structural);
        let required = self.context.range_length.clone().filter(|r| r.length > 0);
        // A range whose number of elements is known although its bounds are not
        // (`u[i - 1:i]`) has that size wherever it is, with no check during the run; only a
        // masked assignment, which works element by element, still needs its bounded form.
        if let Some(m) = proven.filter(|&m| required.as_ref().is_none_or(|r| !r.bound && r.length == m)) {
            for e in structural {
                self.note_structural(e);
            }
            return Some(self.proven_range_elements(e, a, s, m));
        }
        let Some(required) = required else {
            self.context.run_time_ranges_refused += 1;
            self.diagnostics.push(
                Diagnostic::error(
                    "E0206",
                    format!(
                        "the range `{}` is computed during the run, and nothing here gives its number of elements",
                        eqm_syntax::pretty::print_expr(e)
                    ),
                    e.span,
                    "size not known at compile time",
                )
                .with_help("assign it to a vector or equate it with one, whose size it then has, or reduce it with `sum`, `product`, `min` or `max`"),
            );
            return Some(None);
        };
        if self.model.exprs.literal(s) == Some(0.0) {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                "range step is zero",
                e.span,
                "would never end",
            ));
            return Some(None);
        }
        let m = required.length;
        let written = eqm_syntax::pretty::print_expr(e);
        let among = self.context.end_sizes.last().copied().unwrap_or(1);
        if !self.choices_within_limit(m, among, &written, e.span) {
            return Some(None);
        }
        if required.bound {
            // The assignment that asked checks the number of elements and masks the rest.
            self.context.bounded_ranges.push(BoundedRange {
                start: a,
                step: s,
                stop: b,
                written,
                span: e.span,
            });
            // An element past the range's end is 1, a valid index whose element is never used,
            // so that no index past the array is known at compile time.
            let count_function = self.range_count_function(e.span);
            let exprs = &mut self.model.exprs;
            let count = exprs.add(Node::Call(Callee::User(count_function), Box::new([a, s, b])));
            let one = exprs.int(1);
            let elements = (0..m)
                .map(|p| {
                    let offset = exprs.int(p as i64);
                    let distance = exprs.binary(BinOp::Mul, offset, s);
                    let element = exprs.binary(BinOp::Add, a, distance);
                    let within = exprs.binary(BinOp::Lt, offset, count);
                    exprs.add(Node::If(within, element, one))
                })
                .collect();
            return Some(Some(Value::Array(vec![m], elements, ScalarType::Integer)));
        }
        let wrong = self.range_length_wrong(a, s, b, m);
        let failure = self.range_length_failure(&written, step.is_some(), &required, e.span);
        let exprs = &mut self.model.exprs;
        let stop_run = exprs.add(Node::Call(Callee::User(failure), Box::new([a, s, b])));
        let elements = (0..m)
            .map(|p| {
                let offset = exprs.int(p as i64);
                let distance = exprs.binary(BinOp::Mul, offset, s);
                let element = match p {
                    0 => a,
                    _ => exprs.binary(BinOp::Add, a, distance),
                };
                exprs.add(Node::If(wrong, stop_run, element))
            })
            .collect();
        Some(Some(Value::Array(vec![m], elements, ScalarType::Integer)))
    }

    /// The `m` elements `a, a + s, ..., a + (m - 1)*s` of the range `e` whose number of
    /// elements is proved to be `m`; `None` after a diagnostic when they are too many choices.
    fn proven_range_elements(&mut self, e: &ast::Expr, a: ExprId, s: ExprId, m: usize) -> Option<Value> {
        let written = eqm_syntax::pretty::print_expr(e);
        let among = self.context.end_sizes.last().copied().unwrap_or(1);
        if !self.choices_within_limit(m, among, &written, e.span) {
            return None;
        }
        let exprs = &mut self.model.exprs;
        let elements = (0..m)
            .map(|p| match p {
                0 => a,
                _ => {
                    let offset = exprs.int(p as i64);
                    let distance = exprs.binary(BinOp::Mul, offset, s);
                    exprs.binary(BinOp::Add, a, distance)
                }
            })
            .collect();
        Some(Value::Array(vec![m], elements, ScalarType::Integer))
    }

    /// False, after a diagnostic, when choosing `m` elements each among `n` during the run (for
    /// the range `written` at `span`) would build more than [`MAX_RUN_TIME_CHOICES`] choices.
    pub(crate) fn choices_within_limit(&mut self, m: usize, n: usize, written: &str, span: Span) -> bool {
        let choices = m.saturating_mul(n);
        if choices <= MAX_RUN_TIME_CHOICES {
            return true;
        }
        self.diagnostics.push(
            Diagnostic::error(
                "E0206",
                format!(
                    "the range `{written}` is computed during the run and selects up to {m} elements, each chosen among {n} during the run: {choices} choices, more than the limit of {MAX_RUN_TIME_CHOICES}"
                ),
                span,
                "too many choices",
            )
            .with_help("give the range parameter bounds, or select the elements in a for-loop of an algorithm"),
        );
        false
    }

    /// The value of `e` where a range computed during the run in it must have `length`
    /// elements (`against` says what has them, for the run-time diagnostic).
    pub(crate) fn eval_with_range_length(
        &mut self,
        e: &'a ast::Expr,
        length: usize,
        against: String,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let saved = self.context.range_length.replace(RangeLength {
            length,
            against,
            bound: false,
        });
        let value = self.eval(e, scope, loops);
        self.context.range_length = saved;
        value
    }

    /// The value of `e`, evaluated without a required length for the ranges in it: the
    /// arguments of a call and the body of a reduction have sizes of their own.
    pub(crate) fn eval_without_range_length<T>(&mut self, evaluate: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.context.range_length.take();
        let value = evaluate(self);
        self.context.range_length = saved;
        value
    }

    /// The values of the two sides of an equation `lhs = rhs`: a side that is refused because a
    /// range in it is computed during the run is evaluated again with the length of the other
    /// side when that is a vector (`y = u[1:n]`).
    pub(crate) fn eval_sides(
        &mut self,
        lhs: &'a ast::Expr,
        rhs: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
    ) -> (Option<Value>, Option<Value>) {
        let (before_left, refused) = (self.diagnostics.len(), self.context.run_time_ranges_refused);
        let left = self.eval(lhs, scope, loops);
        let left_refused = self.context.run_time_ranges_refused > refused;
        let (before_right, refused) = (self.diagnostics.len(), self.context.run_time_ranges_refused);
        let right = self.eval(rhs, scope, loops);
        let right_refused = self.context.run_time_ranges_refused > refused;
        match (left, right) {
            (None, Some(r)) if left_refused && r.dims().len() == 1 => {
                self.diagnostics.drain(before_left..before_right);
                let against = format!("`{}` has {}", eqm_syntax::pretty::print_expr(rhs), r.dims()[0]);
                let l = self.eval_with_range_length(lhs, r.dims()[0], against, scope, loops);
                (l, Some(r))
            }
            (Some(l), None) if right_refused && l.dims().len() == 1 => {
                self.diagnostics.truncate(before_right);
                let against = format!("`{}` has {}", eqm_syntax::pretty::print_expr(lhs), l.dims()[0]);
                let r = self.eval_with_range_length(rhs, l.dims()[0], against, scope, loops);
                (Some(l), r)
            }
            sides => sides,
        }
    }

    /// The value of `value` assigned to `target`: when a range computed during the run in it
    /// is refused, evaluated again with the length of the target if that is a vector
    /// (`y := u[1:n]`).
    pub(crate) fn eval_assigned_value(
        &mut self,
        target: &'a ast::ComponentRef,
        value: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
        cx: &StatementContext,
    ) -> Option<Value> {
        let (diagnostics, refused) = (self.diagnostics.len(), self.context.run_time_ranges_refused);
        if let Some(v) = self.eval(value, scope, loops) {
            return Some(v);
        }
        if self.context.run_time_ranges_refused == refused {
            return None;
        }
        let reported = self.diagnostics.split_off(diagnostics);
        let dims = match cx.function {
            Some(_) => self.local_places(target, scope, loops).map(|(dims, ..)| dims),
            None => self.resolve_targets(target, scope, loops).map(|(dims, _)| dims),
        };
        self.diagnostics.truncate(diagnostics);
        let Some(&[length]) = dims.as_deref() else {
            self.diagnostics.extend(reported);
            return None;
        };
        let against = format!("`{}` has {length}", eqm_syntax::pretty::print_ref(target));
        self.eval_with_range_length(value, length, against, scope, loops)
    }

    /// The length a range computed during the run in the subscripts of `target` must have
    /// when `value` (written `written`) is assigned to it: the size of a vector value. `None`
    /// when the target's subscripts have no range or the value is no vector.
    pub(crate) fn target_range_length(
        &mut self,
        target: &ast::ComponentRef,
        written: &ast::Expr,
        value: &Value,
    ) -> Option<RangeLength> {
        let is_range =
            |s: &ast::Subscript| matches!(s, ast::Subscript::Expr(e) if matches!(e.kind, ast::ExprKind::Range { .. }));
        if !target.parts.iter().any(|p| p.subscripts.iter().any(is_range)) {
            return None;
        }
        let &[length] = value.dims() else { return None };
        Some(RangeLength {
            length,
            against: format!("`{}` has {length}", eqm_syntax::pretty::print_expr(written)),
            bound: false,
        })
    }

    /// The value of a binding's expression: when a range computed during the run in it is
    /// refused, evaluated again with the size of the vector component being declared
    /// (`Real y[2] = u[1:n]`).
    pub(crate) fn eval_binding_expression(&mut self, binding: &crate::modifier::Binding<'a>) -> Option<Value> {
        let (diagnostics, refused) = (self.diagnostics.len(), self.context.run_time_ranges_refused);
        if let Some(v) = self.eval(binding.expr, binding.scope, &mut Vec::new()) {
            return Some(v);
        }
        let retry = self.context.run_time_ranges_refused > refused && binding.select.len() == 1;
        let (length, name) = self.context.declared_vector.clone().filter(|_| retry)?;
        self.diagnostics.truncate(diagnostics);
        let against = format!("`{name}` has {length}");
        self.eval_with_range_length(binding.expr, length, against, binding.scope, &mut Vec::new())
    }

    /// The value of `e` that initialises a variable of size `dims`: when a range computed during
    /// the run in it is refused, evaluated again with the variable's length if it is a vector
    /// (`output Real y[2] = u[k:k + 1];` in a function).
    pub(crate) fn eval_initial_value(&mut self, e: &'a ast::Expr, dims: &[usize], scope: Scope) -> Option<Value> {
        let (diagnostics, refused) = (self.diagnostics.len(), self.context.run_time_ranges_refused);
        if let Some(v) = self.eval(e, scope, &mut Vec::new()) {
            return Some(v);
        }
        let &[length] = dims else { return None };
        if self.context.run_time_ranges_refused == refused {
            return None;
        }
        self.diagnostics.truncate(diagnostics);
        let against = format!("the variable it initialises has {length}");
        self.eval_with_range_length(e, length, against, scope, &mut Vec::new())
    }

    /// Whether the range `a:s:b` does not have exactly `m` elements (`m` > 0): its step is
    /// zero, or its `m`-th element is beyond `b`, or its `m + 1`-th is not.
    fn range_length_wrong(&mut self, a: ExprId, s: ExprId, b: ExprId, m: usize) -> ExprId {
        let exprs = &mut self.model.exprs;
        let before_last = exprs.int(m as i64 - 1);
        let count = exprs.int(m as i64);
        let to_last = exprs.binary(BinOp::Mul, before_last, s);
        let last = exprs.binary(BinOp::Add, a, to_last);
        let to_next = exprs.binary(BinOp::Mul, count, s);
        let next = exprs.binary(BinOp::Add, a, to_next);
        // Upwards: a + (m - 1)s <= b < a + ms; downwards: a + (m - 1)s >= b > a + ms.
        let up_last = exprs.binary(BinOp::Le, last, b);
        let up_next = exprs.binary(BinOp::Lt, b, next);
        let up = exprs.binary(BinOp::And, up_last, up_next);
        let down_last = exprs.binary(BinOp::Ge, last, b);
        let down_next = exprs.binary(BinOp::Gt, b, next);
        let down = exprs.binary(BinOp::And, down_last, down_next);
        let right = match exprs.literal(s) {
            Some(step) if step > 0.0 => up,
            Some(_) => down,
            None => {
                let zero = exprs.int(0);
                let positive = exprs.binary(BinOp::Gt, s, zero);
                let negative = exprs.binary(BinOp::Lt, s, zero);
                let up = exprs.binary(BinOp::And, positive, up);
                let down = exprs.binary(BinOp::And, negative, down);
                exprs.binary(BinOp::Or, up, down)
            }
        };
        exprs.unary(UnOp::Not, right)
    }

    /// The function `fail(a, s, b)` that stops the run because the range `written` (at `span`)
    /// is `a:s:b` and has not the `required` number of elements (or a step of zero).
    fn range_length_failure(&mut self, written: &str, has_step: bool, required: &RangeLength, span: Span) -> FuncId {
        let key = (format!("{written}|length|{}", required.against), span, required.length);
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
        let zero = exprs.int(0);
        let never = exprs.boolean(false);
        let step_not_zero = exprs.binary(BinOp::Ne, s, zero);
        let count = element_count(exprs, a, s, b);
        let value = |expr: ExprId, written: &str| MessagePart::Value {
            expr,
            ty: ScalarType::Integer,
            written: written.to_string(),
        };
        let lead = MessagePart::Text(format!("the range `{written}` is "));
        let mut range = vec![lead, value(a, "start"), MessagePart::Text(":".to_string())];
        if has_step {
            range.extend([value(s, "step"), MessagePart::Text(":".to_string())]);
        }
        range.push(value(b, "stop"));
        let mut zero_step = range.clone();
        zero_step.push(MessagePart::Text(", whose step is 0".to_string()));
        let mut length = range;
        length.extend([
            MessagePart::Text(", with ".to_string()),
            value(count, "count"),
            MessagePart::Text(format!(" elements where {} elements", required.against)),
        ]);
        let slot = |name: &str| flat::FunctionSlot {
            name: name.to_string(),
            ty: ScalarType::Integer,
            default: None,
        };
        self.model.functions.push(flat::Function {
            name: format!("$rangelength{}", id.0),
            inputs: 3,
            outputs: 1,
            slots: vec![slot("start"), slot("step"), slot("stop"), slot("element")],
            body: vec![
                Statement::Assert {
                    condition: step_not_zero,
                    message: Message { parts: zero_step },
                    span,
                },
                Statement::Assert {
                    condition: never,
                    message: Message { parts: length },
                    span,
                },
            ],
            span,
        });
        self.functions.signatures.push(Default::default());
        self.functions.bounds_failures.insert(key, id);
        id
    }
}

/// The number of elements of the Integer range `a:s:b`, as an expression: `(b - a) div s + 1`
/// when the range is not empty, else 0 (also for a step of zero, which callers refuse apart).
pub(crate) fn element_count(exprs: &mut eqm_ir::expr::ExprArena, a: ExprId, s: ExprId, b: ExprId) -> ExprId {
    let zero = exprs.int(0);
    let positive = exprs.binary(BinOp::Gt, s, zero);
    let negative = exprs.binary(BinOp::Lt, s, zero);
    let a_le_b = exprs.binary(BinOp::Le, a, b);
    let a_ge_b = exprs.binary(BinOp::Ge, a, b);
    let up = exprs.binary(BinOp::And, positive, a_le_b);
    let down = exprs.binary(BinOp::And, negative, a_ge_b);
    let not_empty = exprs.binary(BinOp::Or, up, down);
    let distance = exprs.binary(BinOp::Sub, b, a);
    let steps = exprs.builtin(Builtin::Div, vec![distance, s]);
    let one = exprs.int(1);
    let elements = exprs.binary(BinOp::Add, steps, one);
    exprs.add(Node::If(not_empty, elements, zero))
}
