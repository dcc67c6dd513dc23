//! Evaluation of AST expressions into flat values: literals, operators, if-expressions, arrays,
//! ranges, and the compile-time evaluation of structural expressions (array sizes, ranges,
//! conditions of conditional components).
//!
//! Input: an AST expression, the [`Scope`] it is written in and the loop indices in scope.
//! Output: a [`Value`] whose scalars are nodes of the flat model's expression arena, or `None`
//! after a reported diagnostic (types and sizes are checked here). References are resolved in
//! `names` and calls in `calls`. It deliberately simplifies nothing beyond taking a branch whose
//! condition is known at compile time: the flat model keeps the expressions as written.

use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::value::{self, CHAIN_GROUP, Value};
use eqm_diag::Diagnostic;
use eqm_ir::expr::{BinOp, ExprId, Node, UnOp};
use eqm_ir::flat::{ScalarType, Variability};
use eqm_syntax::ast;

/// Loop indices in scope: `for i in 1:N` binds `i` to an integer while its body is flattened.
pub type Loops = Vec<(String, i64)>;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The value of `e` as a condition of a statement: a Boolean scalar, else a diagnostic.
    pub(crate) fn condition(&mut self, e: &'a ast::Expr, scope: Scope, loops: &mut Loops) -> Option<ExprId> {
        match self.eval(e, scope, loops)? {
            Value::Scalar(c, ScalarType::Boolean) => Some(c),
            _ => {
                self.diagnostics.push(Diagnostic::error(
                    "E0306",
                    "a condition must be a Boolean scalar",
                    e.span,
                    "not a Boolean",
                ));
                None
            }
        }
    }

    /// The text of a String value known at compile time: a String expression, or a reference to
    /// a String parameter or constant whose binding (followed from variable to variable) is one,
    /// which then becomes structural. `None` for a String known only during the run.
    pub(crate) fn known_string(&mut self, value: &Value) -> Option<eqm_ir::flat::Message> {
        let mut expr = match value {
            Value::Str(s) => return Some(s.clone()),
            Value::Scalar(x, ScalarType::String) => *x,
            _ => return None,
        };
        let root = expr;
        // A cycle of bindings ends at the count of variables, since it cannot visit more
        // distinct ones.
        for _ in 0..=self.model.variables.len() {
            match self.model.exprs.get(expr) {
                Node::Str(s) => {
                    let s = s.to_string();
                    self.note_structural(root);
                    return Some(eqm_ir::flat::Message::literal(s));
                }
                &Node::Var(v) => {
                    let var = self.model.var(v);
                    match (var.variability, var.binding) {
                        (Variability::Parameter | Variability::Constant, Some(binding)) => expr = binding,
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
        None
    }

    /// The value of an expression in `scope`, with the loop indices `loops` bound; `None` after
    /// a reported error.
    pub(crate) fn eval(&mut self, e: &'a ast::Expr, scope: Scope, loops: &mut Loops) -> Option<Value> {
        use ast::ExprKind as K;
        let arena = &mut self.model.exprs;
        Some(match &e.kind {
            K::Integer(v) => Value::Scalar(arena.int(*v), ScalarType::Integer),
            K::Real(v) => Value::Scalar(arena.real(*v), ScalarType::Real),
            K::Bool(b) => Value::Scalar(arena.boolean(*b), ScalarType::Boolean),
            K::String(s) => Value::Str(eqm_ir::flat::Message::literal(s.clone())),
            K::Error => return None,
            K::Ref(c) => return self.eval_ref(c, scope, loops),
            K::Call { function, args } => {
                return self.eval_without_range_length(|f| f.eval_call(e, function, args, scope, loops));
            }
            K::PartialApplication { .. } => {
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0306",
                        "a partial application `function f(...)` is a function, not a value",
                        e.span,
                        "only an argument of a functional input",
                    )
                    .with_help("pass it to a function input declared with a function type (`input Integrand f;`)"),
                );
                return None;
            }
            K::Lambda { .. } => {
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0306",
                        "`function(...) = ...` is a function, not a value",
                        e.span,
                        "only the value of a functional parameter",
                    )
                    .with_help("give it to a parameter declared with a function type (`parameter Law law;`)"),
                );
                return None;
            }
            K::End => return self.eval_end(e),
            K::Index { base, subscripts } => {
                let v = self.eval(base, scope, loops)?;
                return self.subscripted(v, subscripts, e, scope, loops);
            }
            K::Comprehension { body, indices } => return self.eval_comprehension(e, body, indices, scope, loops),
            K::Reduction {
                function,
                body,
                indices,
            } => {
                // `array(...)` is a constructor: its size may come from what it meets.
                if eqm_syntax::pretty::print_ref(function) == "array" {
                    return self.eval_comprehension(e, body, indices, scope, loops);
                }
                return self.eval_without_range_length(|f| f.eval_reduction(e, function, body, indices, scope, loops));
            }
            K::Unary { op, operand } => {
                let v = self.eval(operand, scope, loops)?;
                match op {
                    ast::UnaryOp::Plus | ast::UnaryOp::ElemPlus => v,
                    ast::UnaryOp::Neg | ast::UnaryOp::ElemNeg if v.is_record() => {
                        return self.overloaded_unary(e, "'-'", v, operand, scope);
                    }
                    ast::UnaryOp::Not if v.is_record() => {
                        return self.overloaded_unary(e, "'not'", v, operand, scope);
                    }
                    ast::UnaryOp::Neg | ast::UnaryOp::ElemNeg => {
                        self.expect_numeric(&v, operand)?;
                        let ty = v.ty();
                        value::map_unary(&mut self.model.exprs, UnOp::Neg, &v, ty)
                    }
                    ast::UnaryOp::Not => {
                        self.expect_type(&v, ScalarType::Boolean, operand)?;
                        value::map_unary(&mut self.model.exprs, UnOp::Not, &v, ScalarType::Boolean)
                    }
                }
            }
            K::Binary { op, lhs, rhs } => {
                let a = self.eval(lhs, scope, loops)?;
                let b = self.eval(rhs, scope, loops)?;
                return self.eval_binary(e, *op, a, b, (lhs, rhs), scope);
            }
            K::Chain { first, rest } => return self.eval_chain(e, first, rest, scope, loops),
            K::If { branches, else_value } => return self.eval_if(e, branches, else_value, scope, loops),
            K::Array(items) => {
                let values: Option<Vec<Value>> = items.iter().map(|i| self.eval(i, scope, loops)).collect();
                return self.concat(values?, e);
            }
            K::Matrix(rows) => {
                let mut blocks = Vec::with_capacity(rows.len());
                for row in rows {
                    let values: Option<Vec<Value>> = row.iter().map(|i| self.eval(i, scope, loops)).collect();
                    blocks.push(values?);
                }
                return self.block_matrix(blocks, e);
            }
            K::Range { start, step, stop } => {
                if let Some(v) = self.run_time_range_value(e, start, step.as_deref(), stop, scope, loops) {
                    return v;
                }
                return self.eval_range(e, start, step.as_deref(), stop, scope, loops);
            }
            K::Tuple(_) => {
                self.diagnostics.push(Diagnostic::error(
                    "E0307",
                    "a parenthesised list is only allowed on the left of a multi-output call",
                    e.span,
                    "not a value",
                ));
                return None;
            }
        })
    }

    /// An if-expression: the branches' values chosen element by element by their conditions
    /// (the last first), or a branch taken directly when its condition is known.
    ///
    /// Modelica evaluates a branch only when its condition is true, so a branch that conditions
    /// known at compile time exclude is never elaborated: with `i = 1` in a for-loop,
    /// `if i == 1 then a else b[i - 1]` does not index `b[0]`. The conditions are looked at
    /// first to last; a literal true one takes its branch and excludes the rest. A part that
    /// fails to elaborate (a condition or a value) is excluded the same way when parameter
    /// conditions exclude it: its own condition is false, or an earlier one is true, with the
    /// parameters' values (those conditions then become structural). Otherwise its error stands.
    ///
    /// Every part is evaluated first as written, the else-value first and then the branches
    /// last to first (the order the flat model's expressions are made in); only when a part
    /// fails is the expression evaluated again with the excluded branches left out, the
    /// if-expressions inside it that way at once (so a failing chain of nested ones is
    /// evaluated at most twice per level).
    fn eval_if(
        &mut self,
        e: &'a ast::Expr,
        branches: &'a [(ast::Expr, ast::Expr)],
        else_value: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        if !self.context.excluding_branches {
            let (mark, entered) = (self.diagnostics.len(), self.functions.entered.len());
            let value = self.eval_if_as_written(e, branches, else_value, scope, loops);
            if value.is_some() && !eqm_diag::has_errors(&self.diagnostics[mark..]) {
                return value;
            }
            let failed = self.diagnostics.split_off(mark);
            // The function instances made on the way are made again, so that the attempt
            // below sees (and reports, or excludes) their errors too.
            for key in self.functions.entered.split_off(entered) {
                self.functions.ids.remove(&key);
            }
            self.context.excluding_branches = true;
            let value = self.eval_if_excluding(e, branches, else_value, scope, loops);
            self.context.excluding_branches = false;
            if value.is_none() {
                // The first attempt's diagnostics say what is wrong as written.
                self.diagnostics.truncate(mark);
                self.diagnostics.extend(failed);
            }
            return value;
        }
        self.eval_if_excluding(e, branches, else_value, scope, loops)
    }

    /// [`Self::eval_if`] with every part evaluated: the else-value, then each branch from the
    /// last, a branch whose condition is a literal taken or dropped directly.
    fn eval_if_as_written(
        &mut self,
        e: &'a ast::Expr,
        branches: &'a [(ast::Expr, ast::Expr)],
        else_value: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let mut result = self.eval(else_value, scope, loops)?;
        for (condition, then_value) in branches.iter().rev() {
            let c = self.eval(condition, scope, loops)?;
            self.expect_type(&c, ScalarType::Boolean, condition)?;
            let Value::Scalar(c, _) = c else { return None };
            let t = self.eval(then_value, scope, loops)?;
            // EQM has no String values during the run: a choice between Strings is made when
            // the model is compiled, so its condition must be known then.
            let is_string = |v: &Value| {
                matches!(
                    v,
                    Value::Str(_) | Value::Scalar(_, ScalarType::String) | Value::Array(_, _, ScalarType::String)
                )
            };
            if is_string(&t) || is_string(&result) {
                let Some(known) = self.consts.eval(&self.model, c) else {
                    self.diagnostics.push(Diagnostic::error(
                        "E0206",
                        "the condition of an if-expression choosing between Strings must be known at compile time",
                        condition.span,
                        "depends on values only known during simulation",
                    ));
                    return None;
                };
                self.note_structural(c);
                if known != 0.0 {
                    result = t;
                }
                continue;
            }
            let known = match self.model.exprs.literal(c) {
                Some(known) => Some(known),
                None => self.structural_choice(c, &t, &result),
            };
            result = match known {
                Some(known) if !matches!(t, Value::Record(_) | Value::Records(..)) => {
                    if known != 0.0 {
                        t
                    } else {
                        result
                    }
                }
                _ => self.if_value(e, c, t, result)?,
            };
        }
        Some(result)
    }

    /// The value of the condition `c` of an if-expression whose values `a` and `b` differ in
    /// what they differentiate (one has a `der(...)`), when `c` is a parameter expression known
    /// now: which variables appear differentiated is the structure of the model (its states,
    /// what index reduction differentiates), so Modelica makes such a parameter structural and
    /// the branch is chosen when the model is compiled. `None` otherwise.
    fn structural_choice(&mut self, c: ExprId, a: &Value, b: &Value) -> Option<f64> {
        match (
            differentiates(&self.model.exprs, a),
            differentiates(&self.model.exprs, b),
        ) {
            (Some(x), Some(y)) if x != y => {}
            _ => return None,
        }
        let known = self.consts.eval(&self.model, c)?;
        self.note_structural(c);
        Some(known)
    }

    /// [`Self::eval_if`] leaving out the branches that known conditions exclude.
    fn eval_if_excluding(
        &mut self,
        e: &'a ast::Expr,
        branches: &'a [(ast::Expr, ast::Expr)],
        else_value: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        // The branches still possible, first to last, with their condition's value.
        let mut open: Vec<(ExprId, &'a ast::Expr)> = Vec::new();
        let mut last = else_value;
        for (condition, then_value) in branches {
            let mark = self.diagnostics.len();
            let Some(c) = self.eval(condition, scope, loops) else {
                if self.exclude_after_known_true(&mut open, &mut last, mark) {
                    break;
                }
                return None;
            };
            self.expect_type(&c, ScalarType::Boolean, condition)?;
            let Value::Scalar(c, _) = c else { return None };
            match self.model.exprs.literal(c) {
                Some(known) if known != 0.0 => {
                    last = then_value;
                    break;
                }
                Some(_) => {}
                None => open.push((c, then_value)),
            }
        }
        // Each open branch's value, or `None` for one its own false condition excludes.
        let mut values: Vec<Option<Value>> = Vec::with_capacity(open.len());
        while values.len() < open.len() {
            let (c, then_value) = open[values.len()];
            let (mark, entered) = (self.diagnostics.len(), self.functions.entered.len());
            let t = self.eval(then_value, scope, loops);
            if t.is_some() && !eqm_diag::has_errors(&self.diagnostics[mark..]) {
                values.push(t);
            } else if self.consts.eval(&self.model, c) == Some(0.0) {
                // A branch that cannot be flattened (a String function of a String known only
                // at run time, say) is never taken: its errors go, and so do the function
                // instances made for it, so that a later call reports their errors again.
                self.diagnostics.truncate(mark);
                for key in self.functions.entered.split_off(entered) {
                    self.functions.ids.remove(&key);
                }
                self.note_structural(c);
                values.push(None);
            } else {
                open.truncate(values.len());
                if !self.exclude_after_known_true(&mut open, &mut last, mark) {
                    return None;
                }
                values.truncate(open.len());
            }
        }
        let mark = self.diagnostics.len();
        let mut result = match self.eval(last, scope, loops) {
            Some(value) => value,
            None if self.exclude_after_known_true(&mut open, &mut last, mark) => {
                values.truncate(open.len());
                self.eval(last, scope, loops)?
            }
            None => return None,
        };
        for (&(c, _), t) in open.iter().zip(values).rev() {
            let Some(t) = t else { continue };
            result = self.if_value(e, c, t, result)?;
        }
        Some(result)
    }

    /// After a part of an if-expression failed to elaborate (its diagnostics from `mark` on):
    /// whether an `open` branch before it has a condition that the parameters' values make
    /// true, so that the part is never evaluated. If so, that branch becomes the `last` one
    /// (the branches after it are dropped), its condition structural, and the diagnostics go.
    fn exclude_after_known_true(
        &mut self,
        open: &mut Vec<(ExprId, &'a ast::Expr)>,
        last: &mut &'a ast::Expr,
        mark: usize,
    ) -> bool {
        let Some(j) = open
            .iter()
            .position(|&(c, _)| self.consts.eval(&self.model, c).is_some_and(|v| v != 0.0))
        else {
            return false;
        };
        self.diagnostics.truncate(mark);
        self.note_structural(open[j].0);
        *last = open[j].1;
        open.truncate(j);
        true
    }

    /// `if c then t else otherwise`, element by element, for a condition known only during the
    /// run (or a parameter's, whose value chooses between branches of different sizes).
    fn if_value(&mut self, e: &'a ast::Expr, c: ExprId, t: Value, otherwise: Value) -> Option<Value> {
        if matches!(t, Value::Record(_) | Value::Records(..))
            || matches!(otherwise, Value::Record(_) | Value::Records(..))
        {
            return self.select_records(e, c, t, otherwise);
        }
        if matches!(t, Value::Str(_)) || matches!(otherwise, Value::Str(_)) {
            return self.select_strings(e, c, t, otherwise);
        }
        if !value::same_dims(t.dims(), otherwise.dims()) {
            // Branches of different sizes are fine under a parameter condition: the one its
            // value takes is the expression's (`tab[:, 2] = if linear then [0, 1; 1, 2] else
            // table`), and the condition becomes structural, since the size depends on it.
            if let Some(known) = self.consts.eval(&self.model, c) {
                self.note_structural(c);
                return Some(if known != 0.0 { t } else { otherwise });
            }
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                "the branches of this if-expression have different array sizes",
                e.span,
                "branches must agree",
            ));
            return None;
        }
        let ty = if t.ty() == ScalarType::Integer && otherwise.ty() == ScalarType::Integer {
            ScalarType::Integer
        } else {
            t.ty()
        };
        let elements: Vec<ExprId> = t
            .elements()
            .into_iter()
            .zip(otherwise.elements())
            .map(|(x, y)| self.model.exprs.add(Node::If(c, x, y)))
            .collect();
        Some(match t.dims() {
            [] => Value::Scalar(elements[0], ty),
            d => Value::Array(d.to_vec(), elements, ty),
        })
    }

    /// A chain `first op1 x1 op2 x2 ...`. Up to [`CHAIN_GROUP`] operands it is folded left, as
    /// written. A longer one of a single associative operator (`+` and `-`, `*`, `and`, `or`)
    /// is folded left in groups of [`CHAIN_GROUP`] operands and the groups are combined
    /// pairwise, so that its flat expression is about `CHAIN_GROUP + log2(n)` deep instead of
    /// n, and no later pass recurses once per term. A group after a `-` has its inner signs
    /// flipped: `a - b + c` is `a - (b - c)`. Other long chains (element-wise or mixed `*` and
    /// `/`, whose regrouping could change which sizes are valid) are folded left.
    fn eval_chain(
        &mut self,
        e: &'a ast::Expr,
        first: &'a ast::Expr,
        rest: &'a [(ast::BinaryOp, ast::Expr)],
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        use ast::BinaryOp as B;
        let ops = || rest.iter().map(|(op, _)| *op);
        let regroup = rest.len() >= CHAIN_GROUP
            && (ops().all(|op| matches!(op, B::Add | B::Sub))
                || ops().all(|op| op == B::Mul)
                || ops().all(|op| op == B::And)
                || ops().all(|op| op == B::Or));
        let operands: Vec<(Option<B>, &'a ast::Expr)> = std::iter::once((None, first))
            .chain(rest.iter().map(|(op, x)| (Some(*op), x)))
            .collect();
        let group_size = if regroup { CHAIN_GROUP } else { operands.len() };
        let flip = |op: B| match op {
            B::Add => B::Sub,
            B::Sub => B::Add,
            other => other,
        };
        // Each group: the operator before it (none for the first), its value, its first operand.
        let mut groups: Vec<(Option<B>, Value, &'a ast::Expr)> = Vec::new();
        for chunk in operands.chunks(group_size) {
            let (lead, head) = chunk[0];
            let negated = lead == Some(B::Sub);
            let mut acc = self.eval(head, scope, loops)?;
            for &(op, operand) in &chunk[1..] {
                let op = op.unwrap_or(B::Add);
                let op = if negated { flip(op) } else { op };
                let b = self.eval(operand, scope, loops)?;
                acc = self.eval_binary(e, op, acc, b, (head, operand), scope)?;
            }
            groups.push((lead, acc, head));
        }
        while groups.len() > 1 {
            let mut next = Vec::with_capacity(groups.len().div_ceil(2));
            let mut pairs = groups.into_iter();
            while let Some((lead, a, head)) = pairs.next() {
                match pairs.next() {
                    Some((op, b, other)) => {
                        let op = op.unwrap_or(B::Add);
                        let op = if lead == Some(B::Sub) { flip(op) } else { op };
                        next.push((lead, self.eval_binary(e, op, a, b, (head, other), scope)?, head));
                    }
                    None => next.push((lead, a, head)),
                }
            }
            groups = next;
        }
        groups.pop().map(|(_, value, _)| value)
    }

    pub(crate) fn expect_numeric(&mut self, v: &Value, at: &ast::Expr) -> Option<()> {
        if matches!(v.ty(), ScalarType::Real | ScalarType::Integer) {
            return Some(());
        }
        // The operators written on records are overloaded before they get here; what is left
        // is a built-in function of numbers given a record.
        if matches!(v, Value::Record(_) | Value::Records(..)) {
            self.diagnostics.push(
                Diagnostic::error("E0306", "expected a number, found a record", at.span, "a record").with_help(
                    "a built-in function takes numbers: give it the fields, or call a function that takes the record",
                ),
            );
            return None;
        }
        self.diagnostics.push(Diagnostic::error(
            "E0306",
            format!("expected a number, found {}", crate::value::type_name(v.ty())),
            at.span,
            format!("this is {}", crate::value::type_name(v.ty())),
        ));
        None
    }

    fn expect_type(&mut self, v: &Value, ty: ScalarType, at: &ast::Expr) -> Option<()> {
        if v.ty() == ty {
            return Some(());
        }
        self.diagnostics.push(Diagnostic::error(
            "E0306",
            format!(
                "expected {}, found {}",
                crate::value::type_name(ty),
                crate::value::type_name(v.ty())
            ),
            at.span,
            format!("this is {}", crate::value::type_name(v.ty())),
        ));
        None
    }

    /// A relation of two Strings (`fileName <> "NoName"`), decided when the model is compiled
    /// (EQM has no String values during the run): Modelica compares Strings lexicographically.
    fn string_relation(&mut self, e: &ast::Expr, op: BinOp, a: &Value, b: &Value) -> Option<Value> {
        let text = |f: &mut Self, v: &Value| f.known_string(v).and_then(|m| m.as_literal());
        let (Some(x), Some(y)) = (text(self, a), text(self, b)) else {
            let mut d = Diagnostic::error(
                "E0206",
                "a comparison of Strings must be known at compile time (both Strings known then)",
                e.span,
                "depends on values only known during simulation",
            );
            if let Some(name) = self.open_string_name(a).or_else(|| self.open_string_name(b)) {
                d = d.with_help(format!("the String variable `{name}` has no text yet here: a String given its text by an equation can be compared in the equations after that one, not in bindings or before it"));
            }
            self.diagnostics.push(d);
            return None;
        };
        let holds = match op {
            BinOp::Eq => x == y,
            BinOp::Ne => x != y,
            BinOp::Lt => x < y,
            BinOp::Le => x <= y,
            BinOp::Gt => x > y,
            _ => x >= y,
        };
        Some(Value::Scalar(self.model.exprs.boolean(holds), ScalarType::Boolean))
    }

    fn eval_binary(
        &mut self,
        e: &ast::Expr,
        op: ast::BinaryOp,
        a: Value,
        b: Value,
        (lhs, rhs): (&'a ast::Expr, &'a ast::Expr),
        scope: Scope,
    ) -> Option<Value> {
        use ast::BinaryOp as B;
        if a.is_record() || b.is_record() {
            return self.overloaded_binary(e, op, a, b, lhs, rhs, scope);
        }
        let (flat_op, logical) = match op {
            B::Add | B::ElemAdd => (BinOp::Add, false),
            B::Sub | B::ElemSub => (BinOp::Sub, false),
            B::Mul | B::ElemMul => (BinOp::Mul, false),
            B::Div | B::ElemDiv => (BinOp::Div, false),
            B::Pow | B::ElemPow => (BinOp::Pow, false),
            B::Eq => (BinOp::Eq, false),
            B::Ne => (BinOp::Ne, false),
            B::Lt => (BinOp::Lt, false),
            B::Le => (BinOp::Le, false),
            B::Gt => (BinOp::Gt, false),
            B::Ge => (BinOp::Ge, false),
            B::And => (BinOp::And, true),
            B::Or => (BinOp::Or, true),
        };
        if flat_op == BinOp::Add
            && (a.ty() == ScalarType::String || b.ty() == ScalarType::String)
            && let (Some(x), Some(y)) = (self.known_string(&a), self.known_string(&b))
        {
            // Text joined with text, also a String parameter's (`"stopped: " + reason`).
            return Some(Value::Str(x.concat(&y)));
        }
        let is_string = |v: &Value| matches!(v, Value::Str(_) | Value::Scalar(_, ScalarType::String));
        if flat_op.is_relation() && (is_string(&a) || is_string(&b)) {
            return self.string_relation(e, flat_op, &a, &b);
        }
        let ty = if logical {
            self.expect_type(&a, ScalarType::Boolean, lhs)?;
            self.expect_type(&b, ScalarType::Boolean, rhs)?;
            ScalarType::Boolean
        } else if flat_op.is_relation() {
            if a.ty() == ScalarType::Boolean || b.ty() == ScalarType::Boolean {
                if a.ty() != b.ty() || !matches!(flat_op, BinOp::Eq | BinOp::Ne) {
                    self.expect_numeric(
                        if a.ty() == ScalarType::Boolean { &a } else { &b },
                        if a.ty() == ScalarType::Boolean { lhs } else { rhs },
                    )?;
                }
            } else {
                self.expect_numeric(&a, lhs)?;
                self.expect_numeric(&b, rhs)?;
                if !self.relation_operands_agree((&a, &b), (lhs, rhs), scope) {
                    return None;
                }
            }
            ScalarType::Boolean
        } else {
            self.expect_numeric(&a, lhs)?;
            self.expect_numeric(&b, rhs)?;
            value::numeric_result(a.ty(), b.ty(), flat_op)
        };
        if flat_op.is_relation() && (!a.dims().is_empty() || !b.dims().is_empty()) {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                "relations compare scalars, not arrays",
                e.span,
                "array operand",
            ));
            return None;
        }
        // `/` and `^` take a scalar on the right (MLS 10.6): an element-wise quotient or
        // power of arrays is written `./` or `.^`.
        if matches!(op, B::Div | B::Pow) && !b.dims().is_empty() {
            let (operator, elementwise) = if op == B::Div { ("/", "./") } else { ("^", ".^") };
            self.diagnostics.push(
                Diagnostic::error(
                    "E0304",
                    format!(
                        "`{operator}` takes a scalar on its right, not an array of size {:?}",
                        b.dims()
                    ),
                    rhs.span,
                    "an array",
                )
                .with_help(format!("element by element, write `{elementwise}`")),
            );
            return None;
        }
        if op == B::Pow && !a.dims().is_empty() {
            return self.matrix_power(e, &a, &b, rhs);
        }
        // Matrix and vector products: `*` on two arrays is not element-wise in Modelica.
        if op == B::Mul && !a.dims().is_empty() && !b.dims().is_empty() {
            return self.matrix_product(e, &a, &b, ty);
        }
        match value::elementwise(&mut self.model.exprs, flat_op, &a, &b, ty) {
            Some(v) => Some(v),
            None => {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    format!("array sizes {:?} and {:?} do not match", a.dims(), b.dims()),
                    e.span,
                    "operands of different sizes",
                ));
                None
            }
        }
    }

    pub(crate) fn matrix_product(
        &mut self,
        e: &ast::Expr,
        a: &Value,
        b: &Value,
        ty: eqm_ir::flat::ScalarType,
    ) -> Option<Value> {
        let (ad, bd) = (a.dims().to_vec(), b.dims().to_vec());
        let (ae, be) = (a.elements(), b.elements());
        let inner = *ad.last()?;
        if inner != bd[0] || ad.len() > 2 || bd.len() > 2 {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                format!("cannot multiply arrays of sizes {ad:?} and {bd:?}"),
                e.span,
                "inner dimensions differ",
            ));
            return None;
        }
        let rows = if ad.len() == 2 { ad[0] } else { 1 };
        let cols = if bd.len() == 2 { bd[1] } else { 1 };
        let mut out = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            for c in 0..cols {
                let terms: Vec<ExprId> = (0..inner)
                    .map(|k| self.model.exprs.binary(BinOp::Mul, ae[r * inner + k], be[k * cols + c]))
                    .collect();
                out.push(value::sum(&mut self.model.exprs, &terms));
            }
        }
        Some(match (ad.len(), bd.len()) {
            (1, 1) => Value::Scalar(out[0], ty),
            (2, 1) => Value::Array(vec![rows], out, ty),
            (1, 2) => Value::Array(vec![cols], out, ty),
            _ => Value::Array(vec![rows, cols], out, ty),
        })
    }

    /// `[a, b; c, d]`: Modelica's `cat(1, cat(2, a, b), cat(2, c, d))` with every block first
    /// given the rank `n` of the highest-rank block, at least 2, by trailing dimensions of size 1
    /// (a scalar is 1x1, a vector a column, a matrix among rank-3 blocks r x c x 1). The blocks
    /// of a row are joined along the second dimension (equal sizes in every other one), the rows
    /// stacked along the first (equal sizes in every other one).
    fn block_matrix(&mut self, rows: Vec<Vec<Value>>, e: &ast::Expr) -> Option<Value> {
        let rank = rows.iter().flatten().map(|v| v.dims().len()).max().unwrap_or(0).max(2);
        let mut ty = ScalarType::Integer;
        let mut out_rows = 0;
        // The sizes of the result after its first dimension: the columns, then the rest.
        let mut out_tail: Option<Vec<usize>> = None;
        let mut elements = Vec::new();
        for row in &rows {
            let mut shapes: Vec<Vec<usize>> = Vec::with_capacity(row.len());
            for v in row {
                if matches!(v, Value::Str(_) | Value::Record(_) | Value::Records(..)) {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        "the blocks of a matrix `[...]` must be numbers or arrays of numbers",
                        e.span,
                        "not a matrix block",
                    ));
                    return None;
                }
                if v.ty() != ScalarType::Integer {
                    ty = v.ty();
                }
                let mut shape = v.dims().to_vec();
                shape.resize(rank, 1);
                shapes.push(shape);
            }
            let height = shapes.first().map_or(0, |s| s[0]);
            let rest: &[usize] = shapes.first().map_or(&[], |s| &s[2..]);
            let width: usize = shapes.iter().map(|s| s[1]).sum();
            let mut tail = vec![width];
            tail.extend_from_slice(rest);
            if shapes.iter().any(|s| s[0] != height || s[2..] != *rest) || out_tail.as_ref().is_some_and(|t| *t != tail)
            {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    "the blocks of this matrix do not fit: blocks side by side need equal sizes in every dimension but the second, rows of blocks in every dimension but the first",
                    e.span,
                    "sizes differ",
                ));
                return None;
            }
            // Each block contributes, to each index of the first dimension, the run of its
            // elements below that index: its width times the sizes of the rest.
            let below: usize = rest.iter().product();
            for i in 0..height {
                for (v, shape) in row.iter().zip(&shapes) {
                    let run = shape[1] * below;
                    elements.extend_from_slice(&v.as_slice()[i * run..(i + 1) * run]);
                }
            }
            out_tail = Some(tail);
            out_rows += height;
        }
        let mut dims = vec![out_rows];
        dims.extend(out_tail.unwrap_or_else(|| vec![0; rank - 1]));
        Some(Value::Array(dims, elements, ty))
    }

    /// `{a, b, c}`: stacks values of equal shape along a new first dimension.
    pub(crate) fn concat(&mut self, values: Vec<Value>, e: &ast::Expr) -> Option<Value> {
        // A text known now is an element of an array of Strings (`{"a", "b"}`); one known only
        // during the run is not (EQM has no String values during the run).
        let values: Vec<Value> = values
            .into_iter()
            .map(|v| match v {
                Value::Str(m) => match m.as_literal() {
                    Some(text) => Value::Scalar(self.model.exprs.add(Node::Str(text.into())), ScalarType::String),
                    None => Value::Str(m),
                },
                v => v,
            })
            .collect();
        let strings = (values.iter())
            .filter(|v| !v.is_record() && v.ty() == ScalarType::String)
            .count();
        if strings != 0 && strings != values.len() {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                "array elements have different sizes or kinds",
                e.span,
                "Strings and values of another type",
            ));
            return None;
        }
        let Some(first) = values.first() else {
            return Some(Value::Array(vec![0], Vec::new(), ScalarType::Real));
        };
        let inner = first.dims().to_vec();
        let mut ty = first.ty();
        let mut elems = Vec::new();
        if values
            .iter()
            .any(|v| matches!(v, Value::Record(_) | Value::Records(..)))
        {
            return self.record_array(values, e);
        }
        for v in &values {
            if !value::same_dims(v.dims(), &inner) || matches!(v, Value::Str(_)) {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    "array elements have different sizes or kinds",
                    e.span,
                    "elements must agree",
                ));
                return None;
            }
            if v.ty() == ScalarType::Real {
                ty = ScalarType::Real;
            }
            elems.extend(v.elements());
        }
        let mut dims = vec![values.len()];
        dims.extend(inner);
        Some(Value::Array(dims, elems, ty))
    }

    /// Evaluates an expression that must be an integer known at compile time.
    pub(crate) fn eval_structural_int(&mut self, e: &'a ast::Expr, scope: Scope, what: &str) -> Option<i64> {
        self.eval_structural_int_in(e, scope, &mut Vec::new(), what)
    }

    /// [`Self::eval_structural_int`] with the loop indices `loops` bound (a range bound
    /// `3*(i - 1) + 1` in an unrolled loop).
    pub(crate) fn eval_structural_int_in(
        &mut self,
        e: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
        what: &str,
    ) -> Option<i64> {
        let v = self.structural(e, scope, loops, what)?;
        if v.fract() != 0.0 {
            self.diagnostics.push(Diagnostic::error(
                "E0306",
                format!("{what} must be an integer, found {v}"),
                e.span,
                "not an integer",
            ));
            return None;
        }
        Some(v as i64)
    }

    /// The value of a flat condition made only of literals (no variable, parameter or local),
    /// which no run can change; `None` for any other.
    pub(crate) fn literal_condition(&mut self, c: ExprId) -> Option<bool> {
        let mut vars = Vec::new();
        self.model.exprs.vars_in(c, &mut vars);
        if !vars.is_empty() {
            return None;
        }
        self.consts.eval(&self.model, c).map(|v| v != 0.0)
    }

    pub(crate) fn eval_structural_bool(&mut self, e: &'a ast::Expr, scope: Scope, what: &str) -> Option<bool> {
        match self.eval(e, scope, &mut Vec::new())? {
            Value::Scalar(x, ScalarType::Boolean) => self.structural_scalar(x, e.span, what).map(|v| v != 0.0),
            Value::Scalar(..) => {
                self.diagnostics.push(Diagnostic::error(
                    "E0306",
                    format!("{what} must be a Boolean"),
                    e.span,
                    "not a Boolean",
                ));
                None
            }
            _ => {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    format!("{what} must be a scalar"),
                    e.span,
                    "array value",
                ));
                None
            }
        }
    }

    fn structural(&mut self, e: &'a ast::Expr, scope: Scope, loops: &mut Loops, what: &str) -> Option<f64> {
        let v = self.eval(e, scope, loops)?;
        let Value::Scalar(x, _) = v else {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                format!("{what} must be a scalar"),
                e.span,
                "array value",
            ));
            return None;
        };
        self.structural_scalar(x, e.span, what)
    }

    /// The compile-time value of the flat scalar `x` (written at `span`), recorded as shaping
    /// the model; a diagnostic when it depends on values known only during the run.
    pub(crate) fn structural_scalar(&mut self, x: ExprId, span: eqm_diag::source::Span, what: &str) -> Option<f64> {
        match self.consts.eval(&self.model, x) {
            Some(v) => {
                self.note_structural(x);
                Some(v)
            }
            None => {
                let mut d = Diagnostic::error(
                    "E0206",
                    format!("{what} must be known at compile time"),
                    span,
                    "depends on values only known during simulation",
                );
                if let Some(var) = self.consts.blocker(&self.model, x) {
                    let v = self.model.var(var);
                    d = d.with_label(
                        v.span,
                        format!("`{}` is not a parameter or constant with a known value", v.name),
                    );
                }
                self.diagnostics.push(
                    d.with_help("use parameters or constants with bindings for sizes, ranges and such conditions"),
                );
                None
            }
        }
    }
}

/// Whether `v` contains a `der(...)`: `Some(true)` or `Some(false)`, or `None` when it is too
/// large to look at (an if-expression over huge values is then left as it is).
fn differentiates(arena: &eqm_ir::expr::ExprArena, v: &Value) -> Option<bool> {
    const LIMIT: usize = 10_000;
    let mut stack: Vec<ExprId> = match v {
        Value::Scalar(e, _) => vec![*e],
        Value::Array(..) => v.elements(),
        _ => return Some(false),
    };
    let mut visited = 0;
    while let Some(e) = stack.pop() {
        visited += 1;
        if visited > LIMIT {
            return None;
        }
        if let Node::Call(eqm_ir::expr::Callee::Builtin(eqm_ir::builtins::Builtin::Der), _) = arena.get(e) {
            return Some(true);
        }
        stack.extend(arena.children(e));
    }
    Some(false)
}
