//! Reductions over values whose number is known only during the run: `sum`, `product`, `min`
//! and `max` of a slice `u[a:b]`, `u[a:s:b]` or `A[a:b, j]` whose range has bounds computed
//! during the run (`a`, `b` discrete Integers of a model, inputs or locals of a function), and
//! the reductions `sum(e for j in a:b)` (also `product`, `min`, `max`) whose iterator ranges
//! over such a range. The slice itself has no size known at compile time, but its reduction is
//! a scalar (Modelica's rules for slicing and reductions).
//!
//! Input: the argument of the reduction. Output: the reduction over every element the range
//! may select, each masked by whether its index lies in the range (`if a <= k and k <= b then
//! u[k] else 0`), so the expression has the array's size whatever the range. A range that is
//! not empty and reaches outside `1..n` stops the run (E0705) with its bounds, the size and the
//! location of the reference; `min` and `max` of an empty range stop it too (the array form of
//! `min` of an empty array is an error at compile time). An iterator's range is bounded by the
//! arrays it subscripts alone in the body (`u[j]`): its body is evaluated once per index of
//! them, and a range reaching beyond them stops the run the same way. It deliberately handles
//! only these forms: a slice computed during the run as a value is `range_values`' (`y = u[1:n]`),
//! an iterator that subscripts no array `reduction_functions`' (`sum(j for j in 1:k)`), and a
//! step computed during the run stays an error (E0206).

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::value::{self, Value};
use eqm_diag::source::Span;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, Callee, ExprId, FuncId, Node};
use eqm_ir::flat::{self, Message, MessagePart, ScalarType, Statement};
use eqm_syntax::ast;

/// A range `a:s:b` whose bounds or step are computed during the run: a step known at compile
/// time is not zero.
struct RunTimeRange {
    start: ExprId,
    step: Step,
    stop: ExprId,
    written: String,
}

/// The step of a [`RunTimeRange`].
#[derive(Clone, Copy)]
enum Step {
    Known(i64),
    /// Computed during the run: zero stops the run.
    RunTime(ExprId),
}

/// Why a range computed during the run stops the run.
#[derive(Clone, Copy, PartialEq)]
enum RangeFault {
    /// It is not empty and one of its values lies outside `1..n`.
    Outside,
    /// It is empty, and `min` or `max` of it has no value.
    Empty,
    /// Its step, computed during the run, is zero.
    ZeroStep,
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// `sum(arg)`, `product(arg)`, `min(arg)` or `max(arg)` (`builtin`) when `arg` is a slice
    /// of an array whose subscripts include a range with run-time bounds; `None` when it is not
    /// (the ordinary path evaluates it, and reports what is wrong).
    pub(crate) fn run_time_slice_reduction(
        &mut self,
        arg: &'a ast::Expr,
        builtin: Builtin,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let ast::ExprKind::Ref(c) = &arg.kind else {
            return self.masked_expression_reduction(arg, builtin, scope, loops);
        };
        let [part] = &c.parts[..] else { return None };
        let is_range =
            |s: &ast::Subscript| matches!(s, ast::Subscript::Expr(e) if matches!(e.kind, ast::ExprKind::Range { .. }));
        if !part.subscripts.iter().any(is_range) {
            return None;
        }
        let (dims, elements, ty) = self.array_elements(&part.name.name, scope)?;
        if part.subscripts.len() > dims.len() {
            return None;
        }
        let diagnostics = self.diagnostics.len();
        let what = eqm_syntax::pretty::print_ref(c);
        let mut checks = Vec::new();
        // Per dimension: the indices (from 0) it may select, each with the condition under
        // which it does (`None`: always).
        let mut axes: Vec<Vec<(usize, Option<ExprId>)>> = Vec::with_capacity(dims.len());
        for (k, &n) in dims.iter().enumerate() {
            let axis = match part.subscripts.get(k) {
                None | Some(ast::Subscript::Colon(_)) => (0..n).map(|i| (i, None)).collect(),
                Some(ast::Subscript::Expr(e)) => match self.run_time_range(e, Some(n), scope, loops) {
                    Some(range) => {
                        if matches!(range.step, Step::RunTime(_)) {
                            checks.push(self.range_check(&range, n, RangeFault::ZeroStep, &what, ty, c.span));
                        }
                        checks.push(self.range_check(&range, n, RangeFault::Outside, &what, ty, c.span));
                        if matches!(builtin, Builtin::Min | Builtin::Max) {
                            checks.push(self.range_check(&range, n, RangeFault::Empty, &what, ty, c.span));
                        }
                        (0..n)
                            .map(|i| (i, Some(self.range_holds(&range, i as i64 + 1))))
                            .collect()
                    }
                    None => {
                        let known = self.eval_subscript(e, n, scope, loops).and_then(|v| {
                            v.as_slice()
                                .iter()
                                .map(|&x| self.known_value(x).map(|i| i as i64))
                                .collect::<Option<Vec<i64>>>()
                        });
                        match known {
                            Some(v) if v.iter().all(|i| (1..=n as i64).contains(i)) => {
                                v.iter().map(|&i| (i as usize - 1, None)).collect()
                            }
                            _ => Vec::new(),
                        }
                    }
                },
            };
            axes.push(axis);
        }
        if checks.is_empty() || self.diagnostics.len() != diagnostics || axes.iter().any(Vec::is_empty) {
            self.diagnostics.truncate(diagnostics);
            return None;
        }
        let sizes: Vec<usize> = axes.iter().map(Vec::len).collect();
        let count: usize = sizes.iter().product();
        let mut masked = Vec::with_capacity(count);
        for flat in 0..count {
            let position = value::row_major_index(&sizes, flat);
            let (mut offset, mut condition) = (0, None);
            for ((axis, &p), &n) in axes.iter().zip(&position).zip(&dims) {
                let (index, holds) = axis[p];
                offset = offset * n + index;
                condition = match (condition, holds) {
                    (Some(c), Some(h)) => Some(self.model.exprs.binary(BinOp::And, c, h)),
                    (c, h) => c.or(h),
                };
            }
            masked.push((elements[offset], condition));
        }
        Some(Value::Scalar(self.masked_reduction(builtin, &masked, &checks), ty))
    }

    /// `sum(body for j in a:b)` (or `product`, `min`, `max`: `builtin`) whose one iterator
    /// ranges over bounds computed during the run: the body once per index `j` of the arrays it
    /// subscripts, masked by whether `j` lies in the range. `None` when the reduction is not of
    /// this form; `Some(None)` after a diagnostic.
    pub(crate) fn run_time_iterator_reduction(
        &mut self,
        builtin: Builtin,
        body: &'a ast::Expr,
        indices: &'a [ast::ForIndex],
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Option<Value>> {
        let [index] = indices else {
            return self.several_iterator_reduction(builtin, body, indices, scope, loops);
        };
        let range_expr = index.range.as_ref()?;
        let diagnostics = self.diagnostics.len();
        let Some(range) = self.run_time_range(range_expr, None, scope, loops) else {
            self.diagnostics.truncate(diagnostics);
            return None;
        };
        let name = &index.name.name;
        let mut refs = Vec::new();
        eqm_syntax::visit::refs_in_expr(body, &mut |c| refs.push(c));
        let Some(bound) = self.subscripted_size(name, &refs, scope) else {
            // No array bounds the range: a generated function loops over it.
            let step = match range.step {
                Step::Known(s) => self.model.exprs.int(s),
                Step::RunTime(s) => s,
            };
            let looped = crate::reduction_functions::IteratorRange {
                start: range.start,
                step,
                stop: range.stop,
                written: range.written.clone(),
            };
            return Some(self.reduction_function(builtin, body, indices, &[looped], scope, loops));
        };
        // The body at each index the arrays allow, up to the first index where it cannot be
        // evaluated (`u[j + 1]` at the last one): the range may not reach that far.
        let mut values = Vec::with_capacity(bound);
        let mut ty = ScalarType::Integer;
        for j in 1..=bound {
            let before = self.diagnostics.len();
            loops.push((name.clone(), j as i64));
            let value = self.eval(body, scope, loops);
            loops.pop();
            match value {
                Some(Value::Scalar(x, t)) if self.diagnostics.len() == before && t != ScalarType::String => {
                    if t != ScalarType::Integer {
                        ty = ScalarType::Real;
                    }
                    values.push(x);
                }
                Some(_) if self.diagnostics.len() == before => {
                    self.diagnostics.push(eqm_diag::Diagnostic::error(
                        "E0206",
                        format!(
                            "the values of a reduction over the range `{}`, computed during the run, must be numbers",
                            range.written
                        ),
                        body.span,
                        "not a scalar number",
                    ));
                    return Some(None);
                }
                _ if j == 1 => return Some(None),
                _ => {
                    self.diagnostics.truncate(before);
                    break;
                }
            }
        }
        let n = values.len();
        let mut checks = Vec::new();
        if matches!(range.step, Step::RunTime(_)) {
            checks.push(self.range_check(&range, n, RangeFault::ZeroStep, name, ty, index.name.span));
        }
        checks.push(self.range_check(&range, n, RangeFault::Outside, name, ty, index.name.span));
        if matches!(builtin, Builtin::Min | Builtin::Max) {
            checks.push(self.range_check(&range, n, RangeFault::Empty, name, ty, index.name.span));
        }
        let masked: Vec<(ExprId, Option<ExprId>)> = values
            .iter()
            .enumerate()
            .map(|(k, &x)| (x, Some(self.range_holds(&range, k as i64 + 1))))
            .collect();
        Some(Some(Value::Scalar(
            self.masked_reduction(builtin, &masked, &checks),
            ty,
        )))
    }

    /// The reduction `builtin` of the elements whose condition holds (an element without one
    /// always counts), under the `checks` (`(wrong, stop)`: `stop` where `wrong` holds).
    pub(crate) fn masked_reduction(
        &mut self,
        builtin: Builtin,
        masked: &[(ExprId, Option<ExprId>)],
        checks: &[(ExprId, ExprId)],
    ) -> ExprId {
        let exprs = &mut self.model.exprs;
        let neutral = match builtin {
            Builtin::Sum => exprs.int(0),
            Builtin::Product => exprs.int(1),
            // Never chosen: an empty range stops the run before.
            Builtin::Min => exprs.real(f64::MAX),
            _ => exprs.real(f64::MIN),
        };
        let terms: Vec<ExprId> = masked
            .iter()
            .map(|&(x, condition)| match condition {
                Some(c) => exprs.add(Node::If(c, x, neutral)),
                None => x,
            })
            .collect();
        let reduced = value::fold_balanced(&terms, |x, y| match builtin {
            Builtin::Sum => exprs.binary(BinOp::Add, x, y),
            Builtin::Product => exprs.binary(BinOp::Mul, x, y),
            _ => exprs.builtin(builtin, vec![x, y]),
        })
        .unwrap_or(neutral);
        checks.iter().rev().fold(reduced, |otherwise, &(wrong, stop)| {
            exprs.add(Node::If(wrong, stop, otherwise))
        })
    }

    /// `e` when it is a range `a:b` or `a:s:b` with Integer bounds of which one at least is
    /// computed during the run and a step known at compile time that is not zero; `end` in
    /// the bounds stands for `size` when given. `None` otherwise (diagnostics may remain).
    fn run_time_range(
        &mut self,
        e: &'a ast::Expr,
        size: Option<usize>,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<RunTimeRange> {
        let ast::ExprKind::Range { start, step, stop } = &e.kind else {
            return None;
        };
        let mut bound = |f: &mut Self, x: &'a ast::Expr| match size {
            Some(n) => f.eval_subscript(x, n, scope, loops),
            None => f.eval(x, scope, loops),
        };
        let (Some(Value::Scalar(a, ScalarType::Integer)), Some(Value::Scalar(b, ScalarType::Integer))) =
            (bound(self, start), bound(self, stop))
        else {
            return None;
        };
        let step = match step {
            Some(s) => match bound(self, s)? {
                Value::Scalar(s, ScalarType::Integer) => match self.known_value(s) {
                    Some(known) => Step::Known(Some(known).filter(|&s| s != 0.0)? as i64),
                    None => Step::RunTime(s),
                },
                _ => return None,
            },
            None => Step::Known(1),
        };
        let literal = |f: &Self, x: ExprId| f.model.exprs.literal(x).is_some();
        if literal(self, a) && literal(self, b) && matches!(step, Step::Known(_)) {
            return None;
        }
        Some(RunTimeRange {
            start: a,
            step,
            stop: b,
            written: eqm_syntax::pretty::print_expr(e),
        })
    }

    /// Whether the index `k` is one of the values of `range`: between its bounds and a whole
    /// number of steps from its start.
    fn range_holds(&mut self, range: &RunTimeRange, k: i64) -> ExprId {
        let exprs = &mut self.model.exprs;
        let index = exprs.int(k);
        let step = match range.step {
            Step::Known(step) => step,
            Step::RunTime(s) => {
                // Between the bounds in the step's direction, and a multiple of it from the
                // start (no index is one for a step of zero, which stops the run before).
                let (a, b) = (range.start, range.stop);
                let zero = exprs.int(0);
                let positive = exprs.binary(BinOp::Gt, s, zero);
                let negative = exprs.binary(BinOp::Lt, s, zero);
                let from_a = exprs.binary(BinOp::Le, a, index);
                let to_b = exprs.binary(BinOp::Le, index, b);
                let from_b = exprs.binary(BinOp::Le, b, index);
                let to_a = exprs.binary(BinOp::Le, index, a);
                let up = exprs.binary(BinOp::And, from_a, to_b);
                let up = exprs.binary(BinOp::And, positive, up);
                let down = exprs.binary(BinOp::And, from_b, to_a);
                let down = exprs.binary(BinOp::And, negative, down);
                let between = exprs.binary(BinOp::Or, up, down);
                let distance = exprs.binary(BinOp::Sub, index, a);
                let remainder = exprs.builtin(Builtin::Mod, vec![distance, s]);
                let on_step = exprs.binary(BinOp::Eq, remainder, zero);
                return exprs.binary(BinOp::And, between, on_step);
            }
        };
        let (low, high, from) = match step > 0 {
            true => (range.start, range.stop, range.start),
            false => (range.stop, range.start, range.start),
        };
        let above = exprs.binary(BinOp::Le, low, index);
        let below = exprs.binary(BinOp::Le, index, high);
        let between = exprs.binary(BinOp::And, above, below);
        if step.abs() == 1 {
            return between;
        }
        let distance = exprs.binary(BinOp::Sub, index, from);
        let step = exprs.int(step.abs());
        let remainder = exprs.builtin(Builtin::Mod, vec![distance, step]);
        let zero = exprs.int(0);
        let on_step = exprs.binary(BinOp::Eq, remainder, zero);
        exprs.binary(BinOp::And, between, on_step)
    }

    /// `(wrong, stop)`: the condition under which `range`, in a dimension of size `n`, has the
    /// `fault`, and the call that then stops the run naming the reference `what` at `span`.
    fn range_check(
        &mut self,
        range: &RunTimeRange,
        n: usize,
        fault: RangeFault,
        what: &str,
        ty: ScalarType,
        span: Span,
    ) -> (ExprId, ExprId) {
        let failure = self.range_failure(what, range, n, fault, ty, span);
        let exprs = &mut self.model.exprs;
        let (a, b) = (range.start, range.stop);
        let s = match range.step {
            Step::Known(s) => s,
            Step::RunTime(s) => {
                let stop = exprs.add(Node::Call(Callee::User(failure), Box::new([a, b, s])));
                return (run_time_step_fault(exprs, a, s, b, n, fault), stop);
            }
        };
        let stop = exprs.add(Node::Call(Callee::User(failure), Box::new([a, b])));
        if fault == RangeFault::Empty {
            let empty = exprs.binary(if s > 0 { BinOp::Gt } else { BinOp::Lt }, a, b);
            return (empty, stop);
        }
        let nonempty = exprs.binary(if s > 0 { BinOp::Le } else { BinOp::Ge }, a, b);
        // The last value, `b` less the remainder of the distance to it, and the first, `a`.
        let last = match s.abs() {
            1 => b,
            step => {
                let (distance, step) = match s > 0 {
                    true => (exprs.binary(BinOp::Sub, b, a), exprs.int(step)),
                    false => (exprs.binary(BinOp::Sub, a, b), exprs.int(step)),
                };
                let remainder = exprs.builtin(Builtin::Mod, vec![distance, step]);
                match s > 0 {
                    true => exprs.binary(BinOp::Sub, b, remainder),
                    false => exprs.binary(BinOp::Add, b, remainder),
                }
            }
        };
        let (low, high) = if s > 0 { (a, last) } else { (last, a) };
        let one = exprs.int(1);
        let size = exprs.int(n as i64);
        let below = exprs.binary(BinOp::Lt, low, one);
        let above = exprs.binary(BinOp::Gt, high, size);
        let outside = exprs.binary(BinOp::Or, below, above);
        (exprs.binary(BinOp::And, nonempty, outside), stop)
    }

    /// The smallest size of the array dimensions that the iterator `name` subscripts alone
    /// among `refs`: the indices every value of its range must lie in.
    fn subscripted_size(&mut self, name: &str, refs: &[&ast::ComponentRef], scope: Scope) -> Option<usize> {
        let mut smallest: Option<usize> = None;
        for c in refs {
            for (k, part) in c.parts.iter().enumerate() {
                for (d, sub) in part.subscripts.iter().enumerate() {
                    let ast::Subscript::Expr(e) = sub else { continue };
                    let ast::ExprKind::Ref(r) = &e.kind else { continue };
                    if r.parts.len() != 1 || !r.parts[0].subscripts.is_empty() || r.parts[0].name.name != name {
                        continue;
                    }
                    if let Some(n) = self.dimension_of(c, k, d, scope) {
                        smallest = Some(smallest.map_or(n, |m| m.min(n)));
                    }
                }
            }
        }
        smallest
    }

    /// The sizes, elements (row-major) and type of the array `name`: a local of the function
    /// being flattened, or an array of model variables of the scope's instance; `None` for
    /// anything else.
    fn array_elements(&mut self, name: &str, scope: Scope) -> Option<(Vec<usize>, Vec<ExprId>, ScalarType)> {
        if let Some(frame) = self.context.frames.last() {
            let var = frame.locals.get(name)?;
            if var.record.is_some() || var.elements.is_some() || var.function.is_some() || var.dims.is_empty() {
                return None;
            }
            let (dims, slots, ty) = (var.dims.clone(), var.slots.clone(), var.ty);
            let elements = slots.iter().map(|&s| self.model.exprs.add(Node::Local(s))).collect();
            return Some((dims, elements, ty));
        }
        let Some(crate::layout::Member::VarArray(array)) = self.ensure_member(scope.instance?, name) else {
            return None;
        };
        let ty = self.model.var(*array.elements.first()?).ty;
        let elements = array.elements.iter().map(|&v| self.model.exprs.var(v)).collect();
        Some((array.dims.to_vec(), elements, ty))
    }

    /// The function `fail(a, b)` that stops the run because the range of the reference `what`
    /// (at `span`), in a dimension of size `n`, is `a:b` and has the `fault`.
    fn range_failure(
        &mut self,
        what: &str,
        range: &RunTimeRange,
        n: usize,
        fault: RangeFault,
        ty: ScalarType,
        span: Span,
    ) -> FuncId {
        let written = &range.written;
        let reason = match fault {
            RangeFault::Outside => format!(", outside 1..{n}"),
            RangeFault::Empty => ", which is empty: its `min` or `max` has no value".to_string(),
            RangeFault::ZeroStep => ", whose step is 0".to_string(),
        };
        let run_time_step = matches!(range.step, Step::RunTime(_));
        let key = (format!("{what}|{written}|range{reason}|{run_time_step}"), span, n);
        if let Some(&id) = self.functions.bounds_failures.get(&key) {
            return id;
        }
        let id = FuncId(self.model.functions.len() as u32);
        let exprs = &mut self.model.exprs;
        let (from, to) = (exprs.add(Node::Local(0)), exprs.add(Node::Local(1)));
        let never = exprs.boolean(false);
        let value = |expr: ExprId, written: &str| MessagePart::Value {
            expr,
            ty: ScalarType::Integer,
            written: written.to_string(),
        };
        let mut parts = vec![
            MessagePart::Text(format!("the range `{written}` of `{what}` is ")),
            value(from, "start"),
        ];
        match range.step {
            Step::Known(1) => parts.push(MessagePart::Text(":".to_string())),
            Step::Known(s) => parts.push(MessagePart::Text(format!(":{s}:"))),
            Step::RunTime(_) => {
                let step = exprs.add(Node::Local(2));
                parts.extend([
                    MessagePart::Text(":".to_string()),
                    value(step, "step"),
                    MessagePart::Text(":".to_string()),
                ]);
            }
        }
        parts.extend([value(to, "stop"), MessagePart::Text(reason)]);
        let message = Message { parts };
        let slot = |name: &str, ty: ScalarType| flat::FunctionSlot {
            name: name.to_string(),
            ty,
            default: None,
        };
        self.model.functions.push(flat::Function {
            name: format!("$range{}", id.0),
            inputs: 2 + u32::from(run_time_step),
            outputs: 1,
            slots: [
                slot("start", ScalarType::Integer),
                slot("stop", ScalarType::Integer),
                slot("step", ScalarType::Integer),
                slot("element", ty),
            ]
            .into_iter()
            .enumerate()
            .filter(|&(k, _)| k != 2 || run_time_step)
            .map(|(_, slot)| slot)
            .collect(),
            body: vec![Statement::Assert {
                condition: never,
                message,
                span,
            }],
            span,
        });
        self.functions.signatures.push(Default::default());
        self.functions.bounds_failures.insert(key, id);
        id
    }
}

/// The condition under which the range `a:s:b` with a step `s` computed during the run, in a
/// dimension of size `n`, has the `fault`.
fn run_time_step_fault(
    exprs: &mut eqm_ir::expr::ExprArena,
    a: ExprId,
    s: ExprId,
    b: ExprId,
    n: usize,
    fault: RangeFault,
) -> ExprId {
    let zero = exprs.int(0);
    if fault == RangeFault::ZeroStep {
        return exprs.binary(BinOp::Eq, s, zero);
    }
    let positive = exprs.binary(BinOp::Gt, s, zero);
    let negative = exprs.binary(BinOp::Lt, s, zero);
    let upwards = exprs.binary(BinOp::Le, a, b);
    let downwards = exprs.binary(BinOp::Ge, a, b);
    let up = exprs.binary(BinOp::And, positive, upwards);
    let down = exprs.binary(BinOp::And, negative, downwards);
    let nonempty = exprs.binary(BinOp::Or, up, down);
    if fault == RangeFault::Empty {
        return exprs.unary(eqm_ir::expr::UnOp::Not, nonempty);
    }
    // The last value `a + div(b - a, s)*s` (the quotient is not negative when the range is not
    // empty) and the first `a`, in either order.
    let distance = exprs.binary(BinOp::Sub, b, a);
    let steps = exprs.builtin(Builtin::Div, vec![distance, s]);
    let span = exprs.binary(BinOp::Mul, steps, s);
    let last = exprs.binary(BinOp::Add, a, span);
    let low = exprs.builtin(Builtin::Min, vec![a, last]);
    let high = exprs.builtin(Builtin::Max, vec![a, last]);
    let one = exprs.int(1);
    let size = exprs.int(n as i64);
    let below = exprs.binary(BinOp::Lt, low, one);
    let above = exprs.binary(BinOp::Gt, high, size);
    let outside = exprs.binary(BinOp::Or, below, above);
    exprs.binary(BinOp::And, nonempty, outside)
}
