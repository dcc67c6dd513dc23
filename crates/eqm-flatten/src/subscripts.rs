//! Subscripts computed during the run: `gain[mode]` with a discrete Integer (or enumeration)
//! `mode` of a model, `u[i]` with a function's input or local `i`.
//!
//! Input: a subscripted reference to an array of model variables or of a function's local
//! slots, whose subscripts evaluate to at least one scalar Integer not known at compile time.
//! Output: the selected element (or the array of them, for subscripts that also keep
//! dimensions) as an if-expression over the possible indices, `if i == 1 then a[1] elseif ...
//! elseif i == n then a[n] else fail(i)`: linear in the size of the dimension per use, and lazy,
//! so a subscript guarded by an `if` (`if k <= n then a[k] else 0`) is only checked where it
//! is evaluated. `fail` is a generated function whose only statement is an assertion that stops
//! the run (E0705) with the subscript's value, the array's size and the location of the
//! reference; no slot is ever read in place of another. A vector of run-time indices
//! (`a[{i, j}]`) keeps its length and chooses each element the same way; assigned, its whole
//! value is held first and then its elements are assigned in order, so that with equal indices
//! the last one wins. It deliberately does not handle a range with a run-time bound (`a[1:n]`),
//! which has no fixed size (E0206; `slices` computes its reductions).

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::statements::StatementContext;
use crate::value::{self, Value};
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{BinOp, Callee, ExprId, FuncId, Node, VarId};
use eqm_ir::flat::{self, Message, MessagePart, ScalarType, Statement};
use eqm_syntax::ast;

/// How one subscript of a dynamic selection picks: every index, indices known at compile time
/// (a scalar keeps no dimension, a vector keeps one), or one index computed at run time (its
/// value and its text).
#[derive(Clone)]
pub(crate) enum Pick {
    All,
    Known(Vec<usize>, bool),
    Dynamic(ExprId, String),
    /// A vector of indices of which some are computed at run time (`u[{i, j}]`): keeps one
    /// dimension of its length, each element chosen like a [`Pick::Dynamic`] one.
    DynamicVector(Vec<(ExprId, String)>),
}

/// The elements a dynamic selection chooses among, row-major: model variables, the slots of
/// a function's local variable, or the elements of a constant's value.
#[derive(Clone, Copy)]
pub(crate) enum Elements<'e> {
    Vars(&'e [VarId]),
    Locals(&'e [u32]),
    /// The elements of a constant array, such as a package's table.
    Values(&'e [ExprId]),
}

impl Elements<'_> {
    fn expr(self, exprs: &mut eqm_ir::expr::ExprArena, k: usize) -> ExprId {
        match self {
            Elements::Vars(v) => exprs.var(v[k]),
            Elements::Locals(s) => exprs.add(Node::Local(s[k])),
            Elements::Values(x) => x[k],
        }
    }
}

/// What a failed bounds check names: the reference as written and where it is.
struct Site<'s> {
    what: &'s str,
    span: Span,
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// `a[i]` with an Integer `i` that changes during the run (`gain[mode]`), `a` an array of
    /// model variables. `None` when the reference has no such subscript (the ordinary path
    /// handles it, and reports what is wrong with it).
    pub(crate) fn dynamic_selection(
        &mut self,
        c: &'a ast::ComponentRef,
        instance: eqm_ir::flat::InstanceId,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let [part] = &c.parts[..] else { return None };
        let Some(crate::layout::Member::VarArray(array)) = self.ensure_member(instance, &part.name.name) else {
            return None;
        };
        let picks = self.dynamic_picks(&part.subscripts, &array.dims, scope, loops)?;
        let ty = self.model.var(array.elements[0]).ty;
        let what = eqm_syntax::pretty::print_ref(c);
        let site = Site {
            what: &what,
            span: c.span,
        };
        Some(self.dynamic_value(&array.dims, Elements::Vars(&array.elements), &picks, ty, &site))
    }

    /// `u[i]` or `r.u[i]` with `i` an input or local of the function being flattened (or
    /// computed from them), `u` a local array of scalars or a record field holding one. `None`
    /// when the reference is no such selection.
    pub(crate) fn dynamic_local_selection(
        &mut self,
        c: &'a ast::ComponentRef,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        // A local (`u[i]`) or a field of a local record (`R.T[i, :]`), whose local is named by
        // the dotted path.
        let (part, path) = c.parts.split_last()?;
        if path.iter().any(|p| !p.subscripts.is_empty()) {
            return None;
        }
        let frame = self.context.frames.last()?;
        let var = match path {
            [] => frame.locals.get(&part.name.name)?,
            _ => {
                let names: Vec<&str> = c.parts.iter().map(|p| p.name.name.as_str()).collect();
                frame.locals.get(&names.join("."))?
            }
        };
        if var.record.is_some() || var.elements.is_some() || var.function.is_some() {
            return None;
        }
        let (dims, slots, ty) = (var.dims.clone(), var.slots.clone(), var.ty);
        let picks = self.dynamic_picks(&part.subscripts, &dims, scope, loops)?;
        let what = eqm_syntax::pretty::print_ref(c);
        let site = Site {
            what: &what,
            span: c.span,
        };
        Some(self.dynamic_value(&dims, Elements::Locals(&slots), &picks, ty, &site))
    }

    /// The constant `value` of a package (`Tables.T`) with the subscripts of the reference `c`
    /// to it applied, as the reference's last part writes them (`Tables.T[i, j]`; none: the
    /// whole value): the elements picked when the subscripts are known at compile time, or, when
    /// one is computed during the run (a table indexed by a discrete variable), the element as an
    /// if-expression over the indices it may take, as for an array of variables. `None` after a
    /// diagnostic.
    pub(crate) fn subscripted_constant(
        &mut self,
        value: Value,
        c: &'a ast::ComponentRef,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let subscripts = &c.parts.last()?.subscripts;
        if subscripts.is_empty() {
            return Some(value);
        }
        let Value::Array(dims, elements, ty) = &value else {
            let what = if matches!(value, Value::Scalar(..)) {
                "is not an array"
            } else {
                "is not an array of numbers, Booleans or enumeration values, which EQM subscripts"
            };
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                format!("the constant `{}` {what}", eqm_syntax::pretty::print_ref(c)),
                c.span,
                "cannot be subscripted",
            ));
            return None;
        };
        if let Some(picks) = self.dynamic_picks(subscripts, dims, scope, loops) {
            let what = eqm_syntax::pretty::print_ref(c);
            let site = Site {
                what: &what,
                span: c.span,
            };
            return Some(self.dynamic_value(dims, Elements::Values(elements), &picks, *ty, &site));
        }
        let (out_dims, picked) = self.subscript_selection(subscripts, dims, scope, loops, c)?;
        let selected: Vec<ExprId> = picked.iter().map(|&k| elements[k]).collect();
        Some(match out_dims.as_slice() {
            [] => Value::Scalar(selected[0], *ty),
            _ => Value::Array(out_dims, selected, *ty),
        })
    }

    /// How each subscript of an array with `dims` picks, when at least one is a scalar Integer
    /// computed during the run and the others are known. `None` otherwise, and after any
    /// diagnostic (the ordinary path evaluates the subscripts again and reports it).
    pub(crate) fn dynamic_picks(
        &mut self,
        subscripts: &'a [ast::Subscript],
        dims: &[usize],
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Vec<Pick>> {
        if subscripts.is_empty() || subscripts.len() > dims.len() {
            return None;
        }
        let diagnostics = self.diagnostics.len();
        let mut picks = Vec::with_capacity(dims.len());
        for (k, &n) in dims.iter().enumerate() {
            let pick = match subscripts.get(k) {
                None | Some(ast::Subscript::Colon(_)) => Pick::All,
                Some(ast::Subscript::Expr(e)) => {
                    let v = self.eval_subscript(e, n, scope, loops)?;
                    let known: Option<Vec<i64>> = v
                        .as_slice()
                        .iter()
                        .map(|&x| self.known_value(x).map(|i| i as i64))
                        .collect();
                    match (known, &v) {
                        // An index known to be out of bounds is reported by the ordinary path.
                        (Some(indices), _) if indices.iter().any(|i| !(1..=n as i64).contains(i)) => return None,
                        (Some(indices), _) => {
                            Pick::Known(indices.iter().map(|&i| i as usize - 1).collect(), !v.dims().is_empty())
                        }
                        (None, Value::Scalar(x, ScalarType::Integer)) => {
                            Pick::Dynamic(*x, eqm_syntax::pretty::print_expr(e))
                        }
                        (None, Value::Array(d, xs, ScalarType::Integer)) if d.len() == 1 => {
                            Pick::DynamicVector(element_texts(e, xs))
                        }
                        _ => return None,
                    }
                }
            };
            picks.push(pick);
        }
        let dynamic = |p: &Pick| matches!(p, Pick::Dynamic(..) | Pick::DynamicVector(..));
        if self.diagnostics.len() != diagnostics || !picks.iter().any(dynamic) {
            self.diagnostics.truncate(diagnostics);
            return None;
        }
        Some(picks)
    }

    /// The elements `picks` select, in row-major order of the dimensions that remain.
    fn dynamic_value(
        &mut self,
        dims: &[usize],
        elements: Elements<'_>,
        picks: &[Pick],
        ty: ScalarType,
        site: &Site<'_>,
    ) -> Value {
        let mut out_dims = Vec::new();
        for (pick, &n) in picks.iter().zip(dims.iter()) {
            match pick {
                Pick::All => out_dims.push(n),
                Pick::Known(v, true) => out_dims.push(v.len()),
                Pick::DynamicVector(v) => out_dims.push(v.len()),
                _ => {}
            }
        }
        let count: usize = out_dims.iter().product();
        let mut selected = Vec::with_capacity(count);
        for flat in 0..count {
            let position = value::row_major_index(&out_dims, flat);
            selected.push(self.select(dims, elements, picks, &position, 0, 0, ty, site));
        }
        match out_dims.as_slice() {
            [] => Value::Scalar(selected[0], ty),
            _ => Value::Array(out_dims, selected, ty),
        }
    }

    /// The element of the array (`dims`, `elements`) at dimension `k` onwards, `offset` being
    /// the flat offset chosen so far and `position` the indices of the remaining dimensions.
    /// Recursive once per dimension of the array, so its depth is the number of dimensions.
    #[allow(clippy::too_many_arguments)]
    fn select(
        &mut self,
        dims: &[usize],
        elements: Elements<'_>,
        picks: &[Pick],
        position: &[usize],
        k: usize,
        offset: usize,
        ty: ScalarType,
        site: &Site<'_>,
    ) -> ExprId {
        let Some(pick) = picks.get(k) else {
            return elements.expr(&mut self.model.exprs, offset);
        };
        let n = dims[k];
        let (next_position, index) = match pick {
            Pick::All => (&position[1..], position[0]),
            Pick::Known(v, true) => (&position[1..], v[position[0]]),
            Pick::Known(v, false) => (position, v[0]),
            Pick::Dynamic(x, written) => {
                return self.select_among(dims, elements, picks, position, k, offset, (*x, written), ty, site);
            }
            Pick::DynamicVector(v) => {
                let (x, written) = &v[position[0]];
                let rest = &position[1..];
                return self.select_among(dims, elements, picks, rest, k, offset, (*x, written), ty, site);
            }
        };
        self.select(
            dims,
            elements,
            picks,
            next_position,
            k + 1,
            offset * n + index,
            ty,
            site,
        )
    }

    /// `if x == 1 then a[1] elseif ... elseif x == n then a[n] else fail(x)`: the element of
    /// dimension `k` that the run-time index `x` (written as `written`) selects, the further
    /// dimensions as in [`Self::select`].
    #[allow(clippy::too_many_arguments)]
    fn select_among(
        &mut self,
        dims: &[usize],
        elements: Elements<'_>,
        picks: &[Pick],
        position: &[usize],
        k: usize,
        offset: usize,
        (x, written): (ExprId, &str),
        ty: ScalarType,
        site: &Site<'_>,
    ) -> ExprId {
        let n = dims[k];
        let failure = self.bounds_failure(written, n, ty, site);
        let mut chosen = self.model.exprs.add(Node::Call(Callee::User(failure), Box::new([x])));
        for i in (0..n).rev() {
            let branch = self.select(dims, elements, picks, position, k + 1, offset * n + i, ty, site);
            let literal = self.model.exprs.int(i as i64 + 1);
            let condition = self.model.exprs.binary(BinOp::Eq, x, literal);
            chosen = self.model.exprs.add(Node::If(condition, branch, chosen));
        }
        chosen
    }

    /// The function `fail(i)` that stops the run because the subscript `written` of
    /// `site.what`, in a dimension of size `n`, is `i`: one per reference, subscript and size.
    fn bounds_failure(&mut self, written: &str, n: usize, ty: ScalarType, site: &Site<'_>) -> FuncId {
        let key = (format!("{}|{written}", site.what), site.span, n);
        if let Some(&id) = self.functions.bounds_failures.get(&key) {
            return id;
        }
        let id = FuncId(self.model.functions.len() as u32);
        let index = self.model.exprs.add(Node::Local(0));
        let never = self.model.exprs.boolean(false);
        let message = bounds_message(site.what, &[(index, written.to_string(), n)]);
        self.model.functions.push(flat::Function {
            name: format!("$subscript{}", id.0),
            inputs: 1,
            outputs: 1,
            slots: vec![
                flat::FunctionSlot {
                    name: written.to_string(),
                    ty: ScalarType::Integer,
                    default: None,
                },
                flat::FunctionSlot {
                    name: "element".to_string(),
                    ty,
                    default: None,
                },
            ],
            body: vec![Statement::Assert {
                condition: never,
                message,
                span: site.span,
            }],
            span: site.span,
        });
        self.functions.signatures.push(Default::default());
        self.functions.bounds_failures.insert(key, id);
        id
    }

    /// `b[n] := v` (or `B[i, :] := v`) with subscripts computed during the run, `b` an array
    /// of scalars with `dims`: an `if` over the values the run-time subscripts may take, each
    /// branch assigning the elements they then select (as one assignment, see
    /// [`Self::simultaneous_assignment`]), and an assertion with the subscripts' values when
    /// they select none. `place(f, k)` is the place of element `k` (`None` after a diagnostic).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn dynamic_assignment_of(
        &mut self,
        target: &ast::ComponentRef,
        dims: &[usize],
        picks: &[Pick],
        value: &Value,
        span: Span,
        cx: &mut StatementContext,
        place: &mut dyn FnMut(&mut Self, &mut StatementContext, usize) -> Option<flat::Place>,
    ) -> Option<Vec<Statement>> {
        if let Some(k) = picks.iter().position(|p| matches!(p, Pick::DynamicVector(..))) {
            return self.vector_subscript_assignment(target, dims, picks, k, value, span, cx, place);
        }
        let mut selected_dims = Vec::new();
        for (pick, &n) in picks.iter().zip(dims) {
            match pick {
                Pick::All => selected_dims.push(n),
                Pick::Known(v, true) => selected_dims.push(v.len()),
                _ => {}
            }
        }
        let count: usize = selected_dims.iter().product();
        if !value.dims().is_empty() && !value::same_dims(value.dims(), &selected_dims) {
            self.diagnostics.push(eqm_diag::Diagnostic::error(
                "E0304",
                format!(
                    "`{}` selects elements of size {selected_dims:?}, but the value has size {:?}",
                    eqm_syntax::pretty::print_ref(target),
                    value.dims()
                ),
                span,
                "sizes differ",
            ));
            return None;
        }
        let values = crate::function_table::broadcast(value, count);
        // The dimensions with a run-time subscript: their positions and sizes.
        let dynamic: Vec<(usize, usize)> = picks
            .iter()
            .zip(dims)
            .enumerate()
            .filter(|(_, (p, _))| matches!(p, Pick::Dynamic(..)))
            .map(|(k, (_, &n))| (k, n))
            .collect();
        let sizes: Vec<usize> = dynamic.iter().map(|&(_, n)| n).collect();
        let combinations: usize = sizes.iter().product();
        let mut branches = Vec::with_capacity(combinations);
        for combination in 0..combinations {
            let chosen = value::row_major_index(&sizes, combination);
            let mut condition = None;
            for (&(k, _), &i) in dynamic.iter().zip(&chosen) {
                let Pick::Dynamic(x, _) = picks[k] else { continue };
                let exprs = &mut self.model.exprs;
                let literal = exprs.int(i as i64 + 1);
                let equal = exprs.binary(BinOp::Eq, x, literal);
                condition = Some(match condition {
                    Some(c) => exprs.binary(BinOp::And, c, equal),
                    None => equal,
                });
            }
            let mut places = Vec::with_capacity(count);
            for flat in 0..count {
                let position = value::row_major_index(&selected_dims, flat);
                let (mut kept, mut element) = (0, 0);
                let mut dynamic_index = 0;
                for (pick, &n) in picks.iter().zip(dims) {
                    let index = match pick {
                        Pick::All => {
                            kept += 1;
                            position[kept - 1]
                        }
                        Pick::Known(v, true) => {
                            kept += 1;
                            v[position[kept - 1]]
                        }
                        Pick::Known(v, false) => v[0],
                        Pick::Dynamic(..) => {
                            dynamic_index += 1;
                            chosen[dynamic_index - 1]
                        }
                        // Refused at the top of this function.
                        Pick::DynamicVector(..) => return None,
                    };
                    element = element * n + index;
                }
                places.push(place(self, cx, element)?);
            }
            let mut body = Vec::with_capacity(count);
            self.simultaneous_assignment(places, values.clone(), span, cx, &mut body);
            branches.push((condition?, body));
        }
        let never = self.model.exprs.boolean(false);
        let reported: Vec<(ExprId, String, usize)> = picks
            .iter()
            .zip(dims)
            .filter_map(|(p, &n)| match p {
                Pick::Dynamic(x, written) => Some((*x, written.clone(), n)),
                _ => None,
            })
            .collect();
        let message = bounds_message(&eqm_syntax::pretty::print_ref(target), &reported);
        Some(vec![Statement::If {
            branches,
            else_branch: vec![Statement::Assert {
                condition: never,
                message,
                span,
            }],
            span,
        }])
    }
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// `y[{i, j}] := v` (the vector of run-time subscripts at dimension `k` of `picks`): the
    /// value is held, then each element of the vector is assigned its part of it in order, as
    /// `y[i] := v[1]; y[j] := v[2];`, so that the last of equal indices wins.
    #[allow(clippy::too_many_arguments)]
    fn vector_subscript_assignment(
        &mut self,
        target: &ast::ComponentRef,
        dims: &[usize],
        picks: &[Pick],
        k: usize,
        value: &Value,
        span: Span,
        cx: &mut StatementContext,
        place: &mut dyn FnMut(&mut Self, &mut StatementContext, usize) -> Option<flat::Place>,
    ) -> Option<Vec<Statement>> {
        let Pick::DynamicVector(indices) = &picks[k] else {
            return None;
        };
        // The dimensions the selection keeps, and which of them the vector is.
        let kept = |p: &Pick| matches!(p, Pick::All | Pick::Known(_, true) | Pick::DynamicVector(..));
        let axis = picks[..k].iter().filter(|p| kept(p)).count();
        let mut out = Vec::new();
        let held = match value {
            _ if value.dims().is_empty() => value.clone(),
            _ => {
                let ty = value.ty();
                let mut elements = Vec::with_capacity(value.as_slice().len());
                for &x in value.as_slice() {
                    elements.push(self.held_of_type(x, ty, "held", span, cx, &mut out));
                }
                Value::Array(value.dims().to_vec(), elements, ty)
            }
        };
        if !held.dims().is_empty() && held.dims().get(axis) != Some(&indices.len()) {
            self.diagnostics.push(eqm_diag::Diagnostic::error(
                "E0304",
                format!(
                    "`{}` selects {} elements along its vector of subscripts, but the value has size {:?}",
                    eqm_syntax::pretty::print_ref(target),
                    indices.len(),
                    held.dims()
                ),
                span,
                "sizes differ",
            ));
            return None;
        }
        for (m, (x, written)) in indices.iter().enumerate() {
            let mut single = picks.to_vec();
            single[k] = Pick::Dynamic(*x, written.clone());
            let part = match held.dims() {
                [] => held.clone(),
                _ => part_along(&held, axis, m),
            };
            out.extend(self.dynamic_assignment_of(target, dims, &single, &part, span, cx, &mut *place)?);
        }
        Some(out)
    }
}

/// The part of the array `v` at index `m` of its dimension `axis`, which it loses.
fn part_along(v: &Value, axis: usize, m: usize) -> Value {
    let dims = v.dims();
    let elements: Vec<ExprId> = (0..v.as_slice().len())
        .filter(|&flat| value::row_major_index(dims, flat)[axis] == m)
        .map(|flat| v.as_slice()[flat])
        .collect();
    let mut rest = dims.to_vec();
    rest.remove(axis);
    match rest.as_slice() {
        [] => Value::Scalar(elements[0], v.ty()),
        _ => Value::Array(rest, elements, v.ty()),
    }
}

/// "the subscript `i` of `x[i]` is 7, outside 1..3": the values of the subscripts computed
/// during the run (value, text, size of their dimension) of the reference `what`.
fn bounds_message(what: &str, subscripts: &[(ExprId, String, usize)]) -> Message {
    let mut parts = Vec::new();
    for (k, (x, written, n)) in subscripts.iter().enumerate() {
        let lead = if k == 0 { "the subscript" } else { "; the subscript" };
        parts.push(MessagePart::Text(format!("{lead} `{written}` of `{what}` is ")));
        parts.push(MessagePart::Value {
            expr: *x,
            ty: ScalarType::Integer,
            written: written.clone(),
        });
        parts.push(MessagePart::Text(format!(", outside 1..{n}")));
    }
    Message { parts }
}

/// The text of each run-time index of the vector subscript `e` with elements `xs`: the text of
/// each element when `e` is written as an array (`{i, j}`), else `e[k]`.
fn element_texts(e: &ast::Expr, xs: &[ExprId]) -> Vec<(ExprId, String)> {
    let written = eqm_syntax::pretty::print_expr(e);
    let elements = match &e.kind {
        ast::ExprKind::Array(elements) if elements.len() == xs.len() => Some(elements),
        // Each element of a range computed during the run is named by the range.
        ast::ExprKind::Range { .. } => return xs.iter().map(|&x| (x, written.clone())).collect(),
        _ => None,
    };
    xs.iter()
        .enumerate()
        .map(|(k, &x)| {
            let text = match elements {
                Some(elements) => eqm_syntax::pretty::print_expr(&elements[k]),
                None => format!("{written}[{}]", k + 1),
            };
            (x, text)
        })
        .collect()
}
