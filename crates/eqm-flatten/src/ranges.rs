//! Ranges `start:step:stop` whose bounds and step are known at compile time: of Integers (the
//! indices of loops and subscripts), of Booleans (`false:true`) and of Reals (`1.0:1.5:5.5`).
//!
//! Input: the range's parts and their scope. Output: the range as a [`Value`] vector, or a
//! diagnostic (a step of zero, a part known only during the run). It deliberately leaves the
//! ranges computed during the run to `range_values` and `real_loops`.

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_ir::expr::ExprId;
use eqm_ir::flat::ScalarType;
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// A range `start:step:stop` known at compile time: of Integers, Booleans or Reals.
    pub(crate) fn eval_range(
        &mut self,
        e: &'a ast::Expr,
        start: &'a ast::Expr,
        step: Option<&'a ast::Expr>,
        stop: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        if step.is_none()
            && let Some(range) = self.boolean_range(start, stop, scope, loops)
        {
            return range;
        }
        if let Some(range) = self.real_range(e, start, step, stop, scope, loops) {
            return range;
        }
        let a = self.eval_structural_int_in(start, scope, loops, "a range bound")?;
        let s = match step {
            Some(s) => self.eval_structural_int_in(s, scope, loops, "a range step")?,
            None => 1,
        };
        let b = self.eval_structural_int_in(stop, scope, loops, "a range bound")?;
        if s == 0 {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                "range step is zero",
                e.span,
                "would never end",
            ));
            return None;
        }
        // The count is computed before any element is made, in 128 bits so that no
        // bound can overflow it.
        let count = if (s > 0 && a <= b) || (s < 0 && a >= b) {
            (i128::from(b) - i128::from(a)) / i128::from(s) + 1
        } else {
            0
        };
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        self.check_array_size(&[count], e.span, "this range")?;
        let mut elems = Vec::with_capacity(count);
        let mut i = a;
        while (s > 0 && i <= b) || (s < 0 && i >= b) {
            elems.push(self.model.exprs.int(i));
            i += s;
        }
        Some(Value::Array(vec![elems.len()], elems, ScalarType::Integer))
    }

    /// A range with a Real bound or step known at compile time (`1.0:1.5:5.5` is `{1.0, 2.5,
    /// 4.0, 5.5}`): `{a, a + s, ..., a + n*s}` with `n = floor((b - a)/s)`, each element
    /// computed from `a` so that no rounding accumulates. `None` when every part is an
    /// Integer; `Some(None)` after a diagnostic.
    fn real_range(
        &mut self,
        e: &'a ast::Expr,
        start: &'a ast::Expr,
        step: Option<&'a ast::Expr>,
        stop: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Option<Value>> {
        let parts: Vec<&'a ast::Expr> = [Some(start), step, Some(stop)].into_iter().flatten().collect();
        let mut values = Vec::with_capacity(3);
        for part in &parts {
            let Value::Scalar(x, ty) = self.eval(part, scope, loops)? else {
                return None;
            };
            values.push((x, ty, part.span));
        }
        if values.iter().all(|(_, ty, _)| *ty != ScalarType::Real) {
            return None;
        }
        let mut known = Vec::with_capacity(3);
        for (x, _, span) in values {
            match self.structural_scalar(x, span, "a range bound or step") {
                Some(v) => known.push(v),
                None => return Some(None),
            }
        }
        let (a, s, b) = match known.as_slice() {
            [a, s, b] => (*a, *s, *b),
            [a, b] => (*a, 1.0, *b),
            _ => return None,
        };
        if s == 0.0 {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                "range step is zero",
                e.span,
                "would never end",
            ));
            return Some(None);
        }
        let n = ((b - a) / s).floor();
        let count = if n >= 0.0 { n as usize + 1 } else { 0 };
        self.check_array_size(&[count], e.span, "this range")?;
        let elements: Vec<ExprId> = (0..count).map(|k| self.model.exprs.real(a + k as f64 * s)).collect();
        Some(Some(Value::Array(vec![count], elements, ScalarType::Real)))
    }

    /// A range of Booleans `start:stop` (`false:true` is `{false, true}`), when `start` is a
    /// Boolean known at translation; `None` when it is not a Boolean, `Some(None)` after a
    /// diagnostic.
    fn boolean_range(
        &mut self,
        start: &'a ast::Expr,
        stop: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Option<Value>> {
        let first = self.eval(start, scope, loops)?;
        if first.ty() != ScalarType::Boolean {
            return None;
        }
        let a = self.eval_structural_int_in(start, scope, loops, "a range bound");
        let b = self.eval_structural_int_in(stop, scope, loops, "a range bound");
        let (Some(a), Some(b)) = (a, b) else {
            return Some(None);
        };
        let elements: Vec<ExprId> = (a..=b).map(|v| self.model.exprs.boolean(v != 0)).collect();
        Some(Some(Value::Array(vec![elements.len()], elements, ScalarType::Boolean)))
    }
}
