//! One assignment statement of several elements (`y := {y[2], y[1]};`, `x := A*x;`, a record
//! assigned field by field) as scalar assignments with the meaning of the whole statement: the
//! right-hand side is evaluated before any element is assigned.
//!
//! Input: the places assigned, in order, and the value of each. Output: the scalar assignments.
//! When no element's value reads a place that an earlier element assigns (the usual case,
//! found in one pass over the values' expressions), they are the assignments in order.
//! Otherwise the values are first assigned to temporaries, then copied: in a function new local
//! slots, in a model's algorithm (which has no local slots) new hidden variables (`$valueN`),
//! outputs of the section like the variables it assigns, so that both back ends run the section
//! unchanged. It deliberately does not reorder the assignments.

use crate::flattener::Flattener;
use crate::statements::StatementContext;
use eqm_diag::source::Span;
use eqm_ir::builtins::BuiltinKind;
use eqm_ir::expr::{Callee, ExprArena, ExprId, Node, VarId};
use eqm_ir::flat::{self, Place, Statement};
use std::collections::{HashMap, HashSet};

impl<'t, 'a> Flattener<'t, 'a> {
    /// The assignments of `values` to `places` (as many), evaluated as one statement `span`
    /// of the function of `cx` (or of a model's algorithm).
    pub(crate) fn simultaneous_assignment(
        &mut self,
        places: Vec<Place>,
        values: Vec<ExprId>,
        span: Span,
        cx: &mut StatementContext,
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
        // Each value into a temporary of its own, then each temporary into its place.
        let mut temporaries = Vec::with_capacity(values.len());
        for (place, value) in places.iter().zip(&values) {
            let temporary = self.temporary(*place, "value", span, cx);
            temporaries.push(temporary);
            out.push(Statement::Assign {
                target: temporary,
                value: *value,
                span,
            });
        }
        for (place, temporary) in places.into_iter().zip(temporaries) {
            let value = match temporary {
                Place::Local(k) => self.model.exprs.add(Node::Local(k)),
                Place::Var(v) => self.model.exprs.var(v),
            };
            out.push(Statement::Assign {
                target: place,
                value,
                span,
            });
        }
    }

    /// A new place of the type of `like` that the statements of `cx` assign before they read
    /// it: a local slot of the function, or in a model's algorithm a hidden variable named
    /// `$<what>N` (hidden from results by its `$`), recorded as an output of the section.
    pub(crate) fn temporary(&mut self, like: Place, what: &str, span: Span, cx: &mut StatementContext) -> Place {
        let ty = match like {
            Place::Local(k) => cx.function.map_or(flat::ScalarType::Real, |f| {
                self.model.functions[f.0 as usize].slots[k as usize].ty
            }),
            Place::Var(v) => self.model.var(v).ty,
        };
        self.temporary_of_type(ty, what, span, cx)
    }

    /// [`Self::temporary`] of scalar type `ty`.
    pub(crate) fn temporary_of_type(
        &mut self,
        ty: flat::ScalarType,
        what: &str,
        span: Span,
        cx: &mut StatementContext,
    ) -> Place {
        if let Some(function) = cx.function {
            let slots = &mut self.model.functions[function.0 as usize].slots;
            let slot = slots.len() as u32;
            slots.push(flat::FunctionSlot {
                name: format!("${what}{slot}"),
                ty,
                default: None,
            });
            return Place::Local(slot);
        }
        let v = VarId(self.model.variables.len() as u32);
        // As a declaration without a prefix: an Integer or Boolean is discrete-time by its type.
        let variability = flat::Variability::Continuous;
        self.model.variables.push(flat::Variable {
            name: format!("${what}{}", v.0),
            instance: cx.instance.unwrap_or(flat::InstanceId(0)),
            variability,
            ty,
            causality: flat::Causality::None,
            role: flat::ConnectorRole::None,
            attributes: self.caches.no_attributes.clone(),
            binding: None,
            value: None,
            description: Some("a value an algorithm statement holds while it assigns".into()),
            span,
        });
        self.var_kinds.push(crate::layout::VarKind {
            variability,
            role: flat::ConnectorRole::None,
            causality: flat::Causality::None,
            ty,
            is_connector_type: false,
        });
        cx.record_assigned(v);
        Place::Var(v)
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
