//! `sum(u[a:b])` and `product(u[a:b])` with a range whose bounds are computed during the run
//! (`a`, `b` discrete Integers of a model, inputs or locals of a function): the slice itself has
//! no size known at compile time, but its sum or product is a scalar (MLS 3.6 §10.5 slicing,
//! §10.3.4 reductions).
//!
//! Input: the argument of `sum` or `product`, a vector of model variables or of a function's
//! local slots subscripted by one range `a:b`. Output: the reduction over every element, each
//! masked by whether its index lies in the range (`if a <= k and k <= b then u[k] else 0`), so
//! the expression has the vector's size whatever the range; a range that is not empty and not
//! inside `1..n` stops the run (E0705) with its bounds, the size and the location of the
//! reference. It deliberately handles only this form: a slice computed during the run anywhere
//! else (`u[1:n]` as a value, a range with a step, a matrix) has no fixed size and stays an
//! error (E0206).

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::value::{self, Value};
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, Callee, ExprId, FuncId, Node};
use eqm_ir::flat::{self, Message, MessagePart, ScalarType, Statement};
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// `sum(arg)` or `product(arg)` (`builtin`) when `arg` is `u[a:b]` with run-time bounds;
    /// `None` when it is not (the ordinary path evaluates it, and reports what is wrong).
    pub(crate) fn run_time_slice_reduction(
        &mut self,
        arg: &'a ast::Expr,
        builtin: Builtin,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let ast::ExprKind::Ref(c) = &arg.kind else { return None };
        let [part] = &c.parts[..] else { return None };
        let [ast::Subscript::Expr(range)] = &part.subscripts[..] else {
            return None;
        };
        let ast::ExprKind::Range {
            start,
            step: None,
            stop,
        } = &range.kind
        else {
            return None;
        };
        let (elements, ty) = self.vector_elements(&part.name.name, scope)?;
        let diagnostics = self.diagnostics.len();
        let bounds = (self.eval(start, scope, loops), self.eval(stop, scope, loops));
        let (Some(Value::Scalar(a, ScalarType::Integer)), Some(Value::Scalar(b, ScalarType::Integer))) = bounds else {
            self.diagnostics.truncate(diagnostics);
            return None;
        };
        let exprs = &mut self.model.exprs;
        if exprs.literal(a).is_some() && exprs.literal(b).is_some() {
            return None;
        }
        let (op, neutral) = match builtin {
            Builtin::Sum => (BinOp::Add, exprs.int(0)),
            _ => (BinOp::Mul, exprs.int(1)),
        };
        let mut masked = Vec::with_capacity(elements.len());
        for (k, &x) in elements.iter().enumerate() {
            let index = exprs.int(k as i64 + 1);
            let from = exprs.binary(BinOp::Le, a, index);
            let to = exprs.binary(BinOp::Le, index, b);
            let inside = exprs.binary(BinOp::And, from, to);
            masked.push(exprs.add(Node::If(inside, x, neutral)));
        }
        let reduced = value::fold_balanced(&masked, |x, y| exprs.binary(op, x, y)).unwrap_or(neutral);
        // A range that is not empty must lie inside 1..n.
        let one = exprs.int(1);
        let size = exprs.int(elements.len() as i64);
        let nonempty = exprs.binary(BinOp::Le, a, b);
        let below = exprs.binary(BinOp::Lt, a, one);
        let above = exprs.binary(BinOp::Gt, b, size);
        let outside = exprs.binary(BinOp::Or, below, above);
        let wrong = exprs.binary(BinOp::And, nonempty, outside);
        let what = eqm_syntax::pretty::print_ref(c);
        let written = eqm_syntax::pretty::print_expr(range);
        let failure = self.range_failure(&what, &written, elements.len(), ty, c.span);
        let exprs = &mut self.model.exprs;
        let fail = exprs.add(Node::Call(Callee::User(failure), Box::new([a, b])));
        Some(Value::Scalar(exprs.add(Node::If(wrong, fail, reduced)), ty))
    }

    /// The elements of the vector `name` (a local of the function being flattened, or an array
    /// of model variables of the scope's instance) and their type; `None` for anything else.
    fn vector_elements(&mut self, name: &str, scope: Scope) -> Option<(Vec<ExprId>, ScalarType)> {
        if let Some(frame) = self.context.frames.last() {
            let var = frame.locals.get(name)?;
            if var.record.is_some() || var.elements.is_some() || var.function.is_some() || var.dims.len() != 1 {
                return None;
            }
            let (slots, ty) = (var.slots.clone(), var.ty);
            let elements = slots.iter().map(|&s| self.model.exprs.add(Node::Local(s))).collect();
            return Some((elements, ty));
        }
        let Some(crate::layout::Member::VarArray(array)) = self.ensure_member(scope.instance?, name) else {
            return None;
        };
        if array.dims.len() != 1 {
            return None;
        }
        let ty = self.model.var(array.elements[0]).ty;
        Some((array.elements.iter().map(|&v| self.model.exprs.var(v)).collect(), ty))
    }

    /// The function `fail(a, b)` that stops the run because the range `written` of the
    /// reference `what` (at `span`), in a dimension of size `n`, is `a:b`.
    fn range_failure(
        &mut self,
        what: &str,
        written: &str,
        n: usize,
        ty: ScalarType,
        span: eqm_diag::source::Span,
    ) -> FuncId {
        let key = (format!("{what}|{written}|range"), span, n);
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
        let message = Message {
            parts: vec![
                MessagePart::Text(format!("the range `{written}` of `{what}` is ")),
                value(from, "start"),
                MessagePart::Text(":".to_string()),
                value(to, "stop"),
                MessagePart::Text(format!(", outside 1..{n}")),
            ],
        };
        let slot = |name: &str, ty: ScalarType| flat::FunctionSlot {
            name: name.to_string(),
            ty,
            default: None,
        };
        self.model.functions.push(flat::Function {
            name: format!("$range{}", id.0),
            inputs: 2,
            outputs: 1,
            slots: vec![
                slot("start", ScalarType::Integer),
                slot("stop", ScalarType::Integer),
                slot("element", ty),
            ],
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
