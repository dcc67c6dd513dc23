//! `sum`, `product`, `min` and `max` of an expression of slices whose ranges are computed during
//! the run (`sum(u[1:n] .* w[1:n])`, `max(time*u[1:n] - w[1:n])`): the slices have no size known
//! at compile time, but all have the same number of elements, at most `m`, the smallest size of
//! the dimensions they subscript. So the expression is evaluated as `m` elements (each range
//! `a:s:b` giving `a + p*s`, see `range_values`), and the reduction takes element `p` only when
//! `p` is below the number of elements of the first range.
//!
//! Input: the reduction's argument. Output: the masked reduction, a scalar, which stops the run
//! (E0705) with the ranges' values when a step is zero, when the first range has more than `m`
//! elements, when another range has another number of elements, and, for `min` and `max`, when
//! the ranges are empty. It deliberately handles only arguments built by operators and slices:
//! a call inside (`sum(abs(u[1:n]))`) keeps its own size rules and stays an error (E0206).

use crate::eval::Loops;
use crate::eval_context::{BoundedRange, RangeLength};
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::value::Value;
use eqm_diag::source::Span;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, Callee, ExprId, FuncId, Node};
use eqm_ir::flat::{self, Message, MessagePart, ScalarType, Statement};
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// `builtin(arg)` when `arg` is an expression (not a single reference) of slices whose
    /// ranges are computed during the run; `None` when it is not (the ordinary path evaluates
    /// it, and reports what is wrong).
    pub(crate) fn masked_expression_reduction(
        &mut self,
        arg: &'a ast::Expr,
        builtin: Builtin,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        if matches!(arg.kind, ast::ExprKind::Ref(_)) {
            return None;
        }
        // Every slice has as many elements as the first, so at most the smallest size of the
        // dimensions they subscript.
        let m = self.smallest_sliced_dimension(arg, scope)?;
        let diagnostics = self.diagnostics.len();
        let saved = (
            self.context.range_length.replace(RangeLength {
                length: m,
                against: String::new(),
                bound: true,
            }),
            std::mem::take(&mut self.context.bounded_ranges),
        );
        let value = self.eval(arg, scope, loops);
        let ranges = std::mem::replace(&mut self.context.bounded_ranges, saved.1);
        self.context.range_length = saved.0;
        let (first, rest) = match (value, ranges.split_first()) {
            (Some(Value::Array(dims, elements, ty)), Some((first, rest)))
                if dims.len() == 1 && self.diagnostics.len() == diagnostics =>
            {
                ((elements, ty, first.clone()), rest.to_vec())
            }
            _ => {
                self.diagnostics.truncate(diagnostics);
                return None;
            }
        };
        let (elements, ty, first) = first;
        let count_function = self.range_count_function(arg.span);
        let count_of = |f: &mut Self, r: &BoundedRange| {
            f.model.exprs.add(Node::Call(
                Callee::User(count_function),
                Box::new([r.start, r.step, r.stop]),
            ))
        };
        let count = count_of(self, &first);
        let mut checks = Vec::new();
        for range in std::iter::once(&first).chain(&rest) {
            if self.model.exprs.literal(range.step).is_none() {
                let zero = self.model.exprs.int(0);
                let wrong = self.model.exprs.binary(BinOp::Eq, range.step, zero);
                checks.push(self.range_fault(range, wrong, None, ", whose step is 0".to_string(), ty));
            }
        }
        let limit = self.model.exprs.int(m as i64);
        let beyond = self.model.exprs.binary(BinOp::Gt, count, limit);
        let reason = format!(", with more than {m} elements, the smallest size of the dimensions the slices subscript");
        checks.push(self.range_fault(&first, beyond, None, reason, ty));
        for range in &rest {
            let other = count_of(self, range);
            let wrong = self.model.exprs.binary(BinOp::Ne, other, count);
            let reason = format!(" elements where `{}` has ", first.written);
            checks.push(self.range_fault(range, wrong, Some((other, count)), reason, ty));
        }
        if matches!(builtin, Builtin::Min | Builtin::Max) {
            let zero = self.model.exprs.int(0);
            let empty = self.model.exprs.binary(BinOp::Eq, count, zero);
            let reason = ", which is empty: its `min` or `max` has no value".to_string();
            checks.push(self.range_fault(&first, empty, None, reason, ty));
        }
        let masked: Vec<(ExprId, Option<ExprId>)> = elements
            .iter()
            .enumerate()
            .map(|(p, &x)| {
                let index = self.model.exprs.int(p as i64);
                (x, Some(self.model.exprs.binary(BinOp::Lt, index, count)))
            })
            .collect();
        let ty = match builtin {
            Builtin::Sum | Builtin::Product => ty,
            _ => ScalarType::Real,
        };
        Some(Value::Scalar(self.masked_reduction(builtin, &masked, &checks), ty))
    }

    /// `(wrong, stop)`: the call that stops the run, where `wrong` holds, because of `range`:
    /// "the range `1:n` is 1:1:5" followed by `reason` (after the counts `(count, other)` when
    /// given: "with 3 elements where `1:k` has 2").
    fn range_fault(
        &mut self,
        range: &BoundedRange,
        wrong: ExprId,
        counts: Option<(ExprId, ExprId)>,
        reason: String,
        ty: ScalarType,
    ) -> (ExprId, ExprId) {
        let failure = self.range_fault_function(range, counts.is_some(), reason, ty, range.span);
        let mut args = vec![range.start, range.step, range.stop];
        if let Some((count, other)) = counts {
            args.extend([count, other]);
        }
        let stop = self
            .model
            .exprs
            .add(Node::Call(Callee::User(failure), args.into_boxed_slice()));
        (wrong, stop)
    }

    /// The function behind [`Self::range_fault`]: inputs the range's start, step and stop (and
    /// the two counts), an output of type `ty` never given.
    fn range_fault_function(
        &mut self,
        range: &BoundedRange,
        counts: bool,
        reason: String,
        ty: ScalarType,
        span: Span,
    ) -> FuncId {
        let id = FuncId(self.model.functions.len() as u32);
        let exprs = &mut self.model.exprs;
        let local = |exprs: &mut eqm_ir::expr::ExprArena, k: u32| exprs.add(Node::Local(k));
        let value = |expr: ExprId, written: &str| MessagePart::Value {
            expr,
            ty: ScalarType::Integer,
            written: written.to_string(),
        };
        let mut parts = vec![
            MessagePart::Text(format!("the range `{}` is ", range.written)),
            value(local(exprs, 0), "start"),
            MessagePart::Text(":".to_string()),
            value(local(exprs, 1), "step"),
            MessagePart::Text(":".to_string()),
            value(local(exprs, 2), "stop"),
        ];
        let mut inputs = 3;
        if counts {
            parts.extend([
                MessagePart::Text(", with ".to_string()),
                value(local(exprs, 3), "count"),
            ]);
            parts.push(MessagePart::Text(reason));
            parts.push(value(local(exprs, 4), "other"));
            inputs = 5;
        } else {
            parts.push(MessagePart::Text(reason));
        }
        let never = exprs.boolean(false);
        let slot = |name: &str, ty: ScalarType| flat::FunctionSlot {
            name: name.to_string(),
            ty,
            default: None,
        };
        let mut slots: Vec<flat::FunctionSlot> = ["start", "step", "stop", "count", "other"]
            .iter()
            .take(inputs as usize)
            .map(|name| slot(name, ScalarType::Integer))
            .collect();
        slots.push(slot("element", ty));
        self.model.functions.push(flat::Function {
            name: format!("$rangefault{}", id.0),
            inputs,
            outputs: 1,
            slots,
            body: vec![Statement::Assert {
                condition: never,
                message: Message { parts },
                span,
            }],
            span,
        });
        self.functions.signatures.push(Default::default());
        id
    }
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// The smallest size of the array dimensions that a range subscripts in `e`; `None` when
    /// no range subscripts an array there.
    fn smallest_sliced_dimension(&mut self, e: &ast::Expr, scope: Scope) -> Option<usize> {
        let mut refs = Vec::new();
        eqm_syntax::visit::refs_in_expr(e, &mut |c| refs.push(c));
        let mut smallest: Option<usize> = None;
        for c in refs {
            for (k, part) in c.parts.iter().enumerate() {
                for (d, sub) in part.subscripts.iter().enumerate() {
                    let ast::Subscript::Expr(x) = sub else { continue };
                    if !matches!(x.kind, ast::ExprKind::Range { .. }) {
                        continue;
                    }
                    if let Some(n) = self.dimension_of(c, k, d, scope) {
                        smallest = Some(smallest.map_or(n, |s| s.min(n)));
                    }
                }
            }
        }
        smallest
    }
}
