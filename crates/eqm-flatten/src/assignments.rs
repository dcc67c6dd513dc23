//! One assignment statement of several elements (`y := {y[2], y[1]};`, `x := A*x;`, a record
//! assigned field by field) as scalar assignments with the meaning of the whole statement: the
//! right-hand side is evaluated before any element is assigned (MLS 3.6 §11.2.1.1).
//!
//! Input: the places assigned, in order, and the value of each. Output: the scalar assignments.
//! When no element's value reads a place that an earlier element assigns (the usual case,
//! found in one pass over the values' expressions), they are the assignments in order. In a
//! function the values are otherwise first assigned to new local slots, then copied. A model's
//! algorithm has no local slots: such an assignment there is an error (E0317) instead of a
//! silently different result. It deliberately does not reorder the assignments.

use crate::flattener::Flattener;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::builtins::BuiltinKind;
use eqm_ir::expr::{Callee, ExprArena, ExprId, FuncId, Node};
use eqm_ir::flat::{self, Place, Statement};
use std::collections::{HashMap, HashSet};

impl<'t, 'a> Flattener<'t, 'a> {
    /// The assignments of `values` to `places` (as many), evaluated as one statement `span`
    /// of the function `function` (or of a model's algorithm).
    pub(crate) fn simultaneous_assignment(
        &mut self,
        places: Vec<Place>,
        values: Vec<ExprId>,
        span: Span,
        function: Option<FuncId>,
        out: &mut Vec<Statement>,
    ) {
        if places.len() < 2 || !reads_an_earlier_place(&self.model.exprs, &places, &values) {
            out.extend(
                places
                    .into_iter()
                    .zip(values)
                    .map(|(target, value)| Statement::Assign { target, value, span }),
            );
            return;
        }
        let Some(function) = function else {
            self.diagnostics.push(Diagnostic::error(
                "E0317",
                "an array or record assignment whose value reads an element it assigns earlier is not supported in a model's algorithm",
                span,
                "reads what it assigns",
            )
            .with_help("assign the elements in separate statements, or compute the value in a function"));
            return;
        };
        // Each value into a slot of its own, then each slot into its place.
        let slots = &mut self.model.functions[function.0 as usize].slots;
        let mut temporaries = Vec::with_capacity(values.len());
        for (place, value) in places.iter().zip(&values) {
            let ty = match place {
                Place::Local(k) => slots[*k as usize].ty,
                Place::Var(_) => flat::ScalarType::Real,
            };
            let slot = slots.len() as u32;
            slots.push(flat::FunctionSlot {
                name: format!("$value{slot}"),
                ty,
                default: None,
            });
            temporaries.push(slot);
            out.push(Statement::Assign {
                target: Place::Local(slot),
                value: *value,
                span,
            });
        }
        for (place, slot) in places.into_iter().zip(temporaries) {
            let value = self.model.exprs.add(Node::Local(slot));
            out.push(Statement::Assign {
                target: place,
                value,
                span,
            });
        }
    }
}

/// A place as a key of a map: model variables and local slots apart.
fn key(place: Place) -> (bool, u32) {
    match place {
        Place::Local(k) => (true, k),
        Place::Var(v) => (false, v.0),
    }
}

/// Whether `e` is an operator such as `pre`, which reads no current value of its argument.
fn is_operator(exprs: &ExprArena, e: ExprId) -> bool {
    matches!(exprs.get(e), Node::Call(Callee::Builtin(b), _) if b.info().kind == BuiltinKind::Operator)
}

/// Whether the value of some element reads a place assigned by an element before it. One pass
/// over the nodes the values reach, children before parents (the arena's order): for each node
/// the first position among `places` of what it reads.
fn reads_an_earlier_place(exprs: &ExprArena, places: &[Place], values: &[ExprId]) -> bool {
    let mut position: HashMap<(bool, u32), usize> = HashMap::with_capacity(places.len());
    for (k, p) in places.iter().enumerate() {
        position.entry(key(*p)).or_insert(k);
    }
    let mut reached: Vec<ExprId> = Vec::new();
    let mut seen = HashSet::new();
    let mut stack: Vec<ExprId> = values.to_vec();
    while let Some(e) = stack.pop() {
        if !seen.insert(e) {
            continue;
        }
        reached.push(e);
        if !is_operator(exprs, e) {
            stack.extend(exprs.children(e));
        }
    }
    reached.sort_unstable();
    let mut first_read: HashMap<ExprId, usize> = HashMap::with_capacity(reached.len());
    for &e in &reached {
        let read = match exprs.get(e) {
            Node::Local(k) => position.get(&(true, *k)).copied(),
            Node::Var(v) => position.get(&(false, v.0)).copied(),
            _ if is_operator(exprs, e) => None,
            _ => exprs.children(e).filter_map(|c| first_read.get(&c).copied()).min(),
        };
        if let Some(k) = read {
            first_read.insert(e, k);
        }
    }
    values
        .iter()
        .enumerate()
        .any(|(j, v)| first_read.get(v).is_some_and(|&k| k < j))
}
