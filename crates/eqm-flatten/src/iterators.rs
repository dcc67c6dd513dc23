//! Iterators in expressions: array constructors `{e for i in r, j in s}`, reductions
//! `sum(e for i in r)` (also `product`, `min`, `max`, and `array(...)`, the constructor), and
//! `end` in subscripts.
//!
//! Input: the AST of those expressions, the [`Scope`] they are written in and the loop indices in
//! scope. Output: [`Value`]s like every other expression: a constructor's elements stacked along
//! new leading dimensions, a reduction folded into one scalar (or one array, element-wise, for
//! `sum` of arrays). Every range is evaluated once, before any iterator is bound, in the scope
//! around the expression. An iterator over Integers known at compile time is a loop index like a
//! for-loop's (so it may subscript arrays); an iterator over any other values (Reals, unknowns,
//! rows of a matrix) is bound to each element's value. The last iterator is the outermost
//! dimension of a constructor (`{10*i + j for i in 1:2, j in 1:3}` is 3x2). An iterator without
//! a range takes `1:n` from the array dimensions it subscripts in its body (`{x[i] for i}`),
//! which must agree.

use crate::eval::Loops;
use crate::eval_context::BoundIterator;
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::value::{self, Value};
use eqm_diag::Diagnostic;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, ExprId};
use eqm_ir::flat::ScalarType;
use eqm_syntax::ast;

/// The values an iterator takes.
pub(crate) enum Range {
    /// Integers known at compile time: bound as loop indices.
    Indices(Vec<i64>),
    /// Any other elements: bound to their values.
    Values(Vec<Value>),
}

impl Range {
    pub(crate) fn len(&self) -> usize {
        match self {
            Range::Indices(v) => v.len(),
            Range::Values(v) => v.len(),
        }
    }
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// The value an iterator named `name` is bound to, unless a loop index of that name was
    /// bound after it.
    pub(crate) fn bound_iterator(&self, name: &str, loops: &Loops) -> Option<Value> {
        let bound = self.context.iterators.iter().rev().find(|b| b.name == name)?;
        let index_after = loops
            .iter()
            .rposition(|(n, _)| n == name)
            .is_some_and(|p| p >= bound.loops_below);
        (!index_after).then(|| bound.value.clone())
    }

    /// `end` in a subscript: the size of the dimension being indexed.
    pub(crate) fn eval_end(&mut self, e: &ast::Expr) -> Option<Value> {
        match self.context.end_sizes.last() {
            Some(&n) => Some(Value::Scalar(self.model.exprs.int(n as i64), ScalarType::Integer)),
            None => {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    "`end` stands for the size of a dimension only inside a subscript",
                    e.span,
                    "not in a subscript",
                ));
                None
            }
        }
    }

    /// The values of every iterator's range, evaluated in the scope around the expression.
    fn ranges(
        &mut self,
        indices: &'a [ast::ForIndex],
        body: &'a ast::Expr,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Vec<Range>> {
        let mut ranges = Vec::with_capacity(indices.len());
        for index in indices {
            let range = match &index.range {
                Some(range) => self.iterator_range(range, scope, loops)?,
                None => {
                    let mut refs = Vec::new();
                    eqm_syntax::visit::refs_in_expr(body, &mut |c| refs.push(c));
                    self.deduced_range(index, &refs, scope)?
                }
            };
            ranges.push(range);
        }
        Some(ranges)
    }

    /// The range of an iterator written without one (`{x[i] for i}`, `for i loop`): `1:n` for
    /// the size `n` of every array dimension it subscripts alone among `refs` (the references
    /// in its body), which must all agree.
    pub(crate) fn deduced_range(
        &mut self,
        index: &ast::ForIndex,
        refs: &[&ast::ComponentRef],
        scope: Scope,
    ) -> Option<Range> {
        let name = &index.name.name;
        let mut sizes: Vec<usize> = Vec::new();
        let mut boolean = false;
        for c in refs {
            for (k, part) in c.parts.iter().enumerate() {
                for (d, sub) in part.subscripts.iter().enumerate() {
                    let ast::Subscript::Expr(e) = sub else { continue };
                    let ast::ExprKind::Ref(r) = &e.kind else { continue };
                    if r.parts.len() != 1 || !r.parts[0].subscripts.is_empty() || r.parts[0].name.name != *name {
                        continue;
                    }
                    if let Some(n) = self.dimension_of(c, k, d, scope) {
                        sizes.push(n);
                        boolean |= self.dimension_is_boolean(c, k, d, scope);
                    }
                }
            }
        }
        sizes.sort_unstable();
        sizes.dedup();
        match sizes.as_slice() {
            // A dimension declared `Boolean` is iterated over `false:true` (an enumeration's
            // positions are its values, so its range is the Integer one).
            [2] if boolean => {
                let elements = [false, true].map(|b| Value::Scalar(self.model.exprs.boolean(b), ScalarType::Boolean));
                Some(Range::Values(elements.to_vec()))
            }
            [n] => Some(Range::Indices((1..=*n as i64).collect())),
            [] => {
                self.diagnostics.push(Diagnostic::error(
                    "E0206",
                    format!("the range of `{name}` cannot be deduced: it subscripts no array"),
                    index.name.span,
                    format!("write `{name} in 1:n`"),
                ));
                None
            }
            _ => {
                self.diagnostics.push(Diagnostic::error(
                    "E0206",
                    format!(
                        "the ranges deduced for `{name}` from the arrays it subscripts differ: {}",
                        sizes.iter().map(|n| format!("1:{n}")).collect::<Vec<_>>().join(", ")
                    ),
                    index.name.span,
                    "ranges differ",
                ));
                None
            }
        }
    }

    /// Whether dimension `d` of part `k` of reference `c` is declared as `Boolean` after the
    /// component's name or its type (`Real x[Boolean]`, `Real[Boolean] x`). A Boolean
    /// dimension that a type definition adds (`type Flags = Real[Boolean]`) is not seen, and
    /// its iterator counts 1, 2 as for any dimension.
    fn dimension_is_boolean(&mut self, c: &ast::ComponentRef, k: usize, d: usize, scope: Scope) -> bool {
        let Some(mut current) = scope.instance else {
            return false;
        };
        for part in &c.parts[..k] {
            match self.ensure_member(current, &part.name.name) {
                Some(crate::layout::Member::Inst(i)) => current = i,
                _ => return false,
            }
        }
        let layout = self.instances[current.0 as usize].layout.clone();
        let Some(index) = layout.index(&c.parts[k].name.name) else {
            return false;
        };
        let element = &layout.elements[index];
        let declared = element.decl.dims.iter().chain(element.clause.type_dims.iter());
        let Some(ast::Subscript::Expr(e)) = declared.clone().nth(d) else {
            return false;
        };
        let ast::ExprKind::Ref(type_name) = &e.kind else {
            return false;
        };
        let scope = Scope {
            instance: Some(current),
            class: element.class,
        };
        self.names_boolean(type_name, scope)
    }

    /// The size of dimension `d` of part `k` of reference `c` (a component array of the
    /// instance, or a local array of the function), if it is an array.
    pub(crate) fn dimension_of(&mut self, c: &ast::ComponentRef, k: usize, d: usize, scope: Scope) -> Option<usize> {
        if scope.instance.is_none() && k == 0 {
            let var = self.context.frames.last()?.locals.get(&c.parts[0].name.name)?;
            return var.dims.get(d).copied();
        }
        let mut current = scope.instance?;
        for (j, part) in c.parts.iter().enumerate() {
            let member = self.ensure_member(current, &part.name.name)?;
            if j == k {
                return match member {
                    crate::layout::Member::VarArray(a) => a.dims.get(d).copied(),
                    crate::layout::Member::InstArray(a) => a.dims.get(d).copied(),
                    _ => None,
                };
            }
            match member {
                crate::layout::Member::Inst(i) => current = i,
                _ => return None,
            }
        }
        None
    }

    /// The values an iterator (of a constructor, a reduction or a for-loop) over `range` takes:
    /// loop indices when they are Integers known at compile time, otherwise the elements.
    pub(crate) fn iterator_range(&mut self, range: &'a ast::Expr, scope: Scope, loops: &mut Loops) -> Option<Range> {
        let values = self.eval(range, scope, loops)?;
        if !self.range_is_vector(&values, range) {
            return None;
        }
        let integers: Option<Vec<i64>> = (values.ty() == ScalarType::Integer)
            .then(|| {
                values
                    .as_slice()
                    .iter()
                    .map(|&x| self.known_value(x).map(|v| v as i64))
                    .collect()
            })
            .flatten();
        Some(match integers {
            Some(v) => Range::Indices(v),
            None => Range::Values((0..values.dims()[0]).filter_map(|k| values.index_first(k)).collect()),
        })
    }

    /// Whether the value of an iterator's range is a vector, as it must be (`for i in 1 loop`
    /// is E0304).
    pub(crate) fn range_is_vector(&mut self, values: &Value, range: &ast::Expr) -> bool {
        if values.dims().len() == 1 {
            return true;
        }
        self.diagnostics.push(Diagnostic::error(
            "E0304",
            "the range of an iterator must be a vector",
            range.span,
            if values.dims().is_empty() {
                "a scalar"
            } else {
                "an array of more than one dimension"
            },
        ));
        false
    }

    /// Binds iterator `name` to value `k` of `range` (undone by [`Self::unbind_iterator`]).
    pub(crate) fn bind_iterator(&mut self, name: &str, range: &Range, k: usize, loops: &mut Loops) {
        match range {
            Range::Indices(v) => loops.push((name.to_string(), v[k])),
            Range::Values(v) => self.context.iterators.push(BoundIterator {
                name: name.to_string(),
                value: v[k].clone(),
                loops_below: loops.len(),
            }),
        }
    }

    pub(crate) fn unbind_iterator(&mut self, range: &Range, loops: &mut Loops) {
        match range {
            Range::Indices(_) => {
                loops.pop();
            }
            Range::Values(_) => {
                self.context.iterators.pop();
            }
        }
    }

    /// The ranges of the iterators and `body`'s value for every combination of their values,
    /// the first iterator varying fastest.
    fn iterated(
        &mut self,
        body: &'a ast::Expr,
        indices: &'a [ast::ForIndex],
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<(Vec<Range>, Vec<Value>)> {
        let ranges = self.ranges(indices, body, scope, loops)?;
        let mut values = Vec::new();
        self.combinations(body, indices, &ranges, scope, loops, &mut values)?;
        Some((ranges, values))
    }

    fn combinations(
        &mut self,
        body: &'a ast::Expr,
        indices: &'a [ast::ForIndex],
        ranges: &[Range],
        scope: Scope,
        loops: &mut Loops,
        out: &mut Vec<Value>,
    ) -> Option<()> {
        let Some((last, inner)) = ranges.split_last() else {
            out.push(self.eval(body, scope, loops)?);
            return Some(());
        };
        let name = &indices[ranges.len() - 1].name.name;
        for k in 0..last.len() {
            self.bind_iterator(name, last, k, loops);
            let result = self.combinations(body, indices, inner, scope, loops, out);
            self.unbind_iterator(last, loops);
            result?;
        }
        Some(())
    }

    /// `{body for i in r, j in s}` and `array(body for ...)`.
    pub(crate) fn eval_comprehension(
        &mut self,
        e: &'a ast::Expr,
        body: &'a ast::Expr,
        indices: &'a [ast::ForIndex],
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let (ranges, values) = self.iterated(body, indices, scope, loops)?;
        // The values come with the first iterator fastest, which is row-major order of
        // dimensions (last iterator, ..., first iterator, body's own).
        let inner: Vec<usize> = values.first().map(|v| v.dims().to_vec()).unwrap_or_default();
        let mut dims: Vec<usize> = ranges.iter().rev().map(Range::len).collect();
        dims.extend(inner.iter().copied());
        // `{Point(i, 2*i) for i in 1:3}`: an array of records, in the same order.
        if values
            .iter()
            .any(|v| matches!(v, Value::Record(_) | Value::Records(..)))
        {
            let Value::Records(_, records) = self.record_array(values, e)? else {
                return None;
            };
            return Some(Value::Records(dims, records));
        }
        let mut ty = ScalarType::Integer;
        let mut elements = Vec::new();
        for v in &values {
            if !value::same_dims(v.dims(), &inner) || matches!(v, Value::Str(_) | Value::Record(_) | Value::Records(..))
            {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    "the elements of this array constructor have different sizes or kinds",
                    e.span,
                    "elements must agree",
                ));
                return None;
            }
            if v.ty() != ScalarType::Integer {
                ty = v.ty();
            }
            elements.extend_from_slice(v.as_slice());
        }
        Some(Value::Array(dims, elements, ty))
    }

    /// `sum(body for ...)`, `product`, `min`, `max`, or `array(...)`.
    pub(crate) fn eval_reduction(
        &mut self,
        e: &'a ast::Expr,
        function: &'a ast::ComponentRef,
        body: &'a ast::Expr,
        indices: &'a [ast::ForIndex],
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let name = eqm_syntax::pretty::print_ref(function);
        let builtin = match name.as_str() {
            "array" => return self.eval_comprehension(e, body, indices, scope, loops),
            "sum" => Builtin::Sum,
            "product" => Builtin::Product,
            "min" => Builtin::Min,
            "max" => Builtin::Max,
            _ => {
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0309",
                        format!("`{name}` takes no iterator: only `sum`, `product`, `min`, `max` and `array` do"),
                        function.span,
                        "not a reduction",
                    )
                    .with_help(format!("pass an array instead: `{name}({{... for ...}})`")),
                );
                return None;
            }
        };
        if let Some(reduced) = self.run_time_iterator_reduction(builtin, body, indices, scope, loops) {
            return reduced;
        }
        let (_, values) = self.iterated(body, indices, scope, loops)?;
        let shape = values.first().map(|v| v.dims().to_vec()).unwrap_or_default();
        let wrong = |v: &Value| {
            !value::same_dims(v.dims(), &shape) || matches!(v, Value::Str(_) | Value::Record(_) | Value::Records(..))
        };
        if values.iter().any(wrong) || (builtin != Builtin::Sum && !shape.is_empty()) {
            let problem = if shape.is_empty() || builtin == Builtin::Sum {
                "numbers of one size"
            } else {
                "scalars"
            };
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                format!("the values of `{name}(... for ...)` must be {problem}"),
                body.span,
                "values must agree",
            ));
            return None;
        }
        let ty = if values.iter().all(|v| v.ty() == ScalarType::Integer) {
            ScalarType::Integer
        } else {
            ScalarType::Real
        };
        // Element by element (a sum of arrays adds them element-wise), as a flat expression of
        // bounded depth, like `sum` of an array.
        let count = shape.iter().product::<usize>();
        let mut elements = Vec::with_capacity(count);
        for k in 0..count {
            let column: Vec<ExprId> = values.iter().map(|v| v.as_slice()[k]).collect();
            let arena = &mut self.model.exprs;
            let folded = value::fold_balanced(&column, |a, b| match builtin {
                Builtin::Sum => arena.binary(BinOp::Add, a, b),
                Builtin::Product => arena.binary(BinOp::Mul, a, b),
                _ => arena.builtin(builtin, vec![a, b]),
            });
            // An empty range: the neutral element (the most extreme Real for `min`/`max`).
            elements.push(folded.unwrap_or_else(|| match builtin {
                Builtin::Sum => arena.int(0),
                Builtin::Product => arena.int(1),
                Builtin::Min => arena.real(f64::MAX),
                _ => arena.real(f64::MIN),
            }));
        }
        let ty = if values.is_empty() && matches!(builtin, Builtin::Min | Builtin::Max) {
            ScalarType::Real
        } else {
            ty
        };
        Some(match shape.as_slice() {
            [] => Value::Scalar(elements[0], ty),
            _ => Value::Array(shape, elements, ty),
        })
    }
}
