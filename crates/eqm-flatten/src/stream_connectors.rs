//! Stream connectors (Modelica chapter 15): `inStream`, `actualStream`, the check that each
//! stream connector has exactly one scalar flow variable, and the stream connection equations.
//!
//! Input: the calls `inStream(v)` and `actualStream(v)` met while flattening, and, once every
//! connect is known, the connection sets of stream variables that `connect` formed (which give no
//! equations there). Output: for each stream variable `v` whose `inStream` is used, a variable
//! `$inStream(v)` with its mixing equation (section 15.2), for each `actualStream(v)` a variable
//! `$actualStream(v)` equal to `if m_flow > 0 then inStream(v) else v` (section 15.3), and one
//! equation for each stream variable of an outside connector of a set (the value carried out
//! of the set through it). A call is answered with a variable because the connection sets are
//! only known after every equation is flattened; the variable's equation is written then.
//!
//! The mixing is the spec's recommended regularised form: the terms of connectors that cannot
//! give flow into the set (an inside connector whose flow has `min >= 0`, an outside one with
//! `max <= 0`) are dropped; no term left gives the variable itself (an unconnected inside
//! connector) or 0 (an outside one); one term gives its value exactly (two connectors, the
//! pass-through of an outside connector); more terms are weighted by
//! `positiveMax(q, s) = alpha*max(q, 0) + (1 - alpha)*eps`, where `s` is the sum of the inflows
//! `max(q, 0)` and `alpha` goes smoothly from 0 at `s = 0` to 1 at `s >= eps`, so the weights
//! are the exact inflows when any real flow enters and the denominator never vanishes.
//! It deliberately does not simplify with flows that the equations fix to zero (a closed valve),
//! which the spec leaves optional.

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::layout::{Target, VarKind};
use crate::modifier::Scope;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, ExprId, FxHashMap, Node, UnOp, VarId};
use eqm_ir::flat::{self, ConnectorRole, InstanceId, Origin, ScalarType};
use eqm_syntax::ast;

/// The `eps` of the regularisation relative to the smallest nominal value of a set's flows: a
/// flow this small is "no flow" for the mixing. It is larger than the relative tolerance of the
/// nonlinear solver (10^-6 and below), as the spec asks, so that the solver never has to
/// resolve the smooth transition.
const RELATIVE_EPS: f64 = 1e-5;

impl<'t, 'a> Flattener<'t, 'a> {
    /// `inStream(v)` or `actualStream(v)` of a stream variable or an array of them (element by
    /// element); `None` when `name` is neither, `Some(None)` after a diagnostic.
    pub(crate) fn stream_operator(
        &mut self,
        e: &'a ast::Expr,
        name: &str,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Option<Value>> {
        let actual = match name {
            "inStream" => false,
            "actualStream" => true,
            _ => return None,
        };
        let not_stream = |f: &mut Self, at: eqm_diag::source::Span, what: &str| {
            f.diagnostics.push(
                Diagnostic::error(
                    "E0340",
                    format!("`{name}` needs a stream variable"),
                    at,
                    what.to_string(),
                )
                .with_help("its argument is a variable declared `stream` in a connector, or an array of them"),
            );
            Some(None)
        };
        let ([arg], []) = (&args.positional[..], &args.named[..]) else {
            return not_stream(self, e.span, "takes one argument");
        };
        let ast::ExprKind::Ref(c) = &arg.kind else {
            return not_stream(self, arg.span, "not a variable");
        };
        // A function has no connectors: its inputs are no stream variables.
        if scope.instance.is_none() {
            return not_stream(self, arg.span, "not a stream variable of a connector");
        }
        // A name that does not resolve has been reported; the operator is known all the same.
        let Some((dims, targets)) = self.resolve_targets(c, scope, loops) else {
            return Some(None);
        };
        let mut elements = Vec::with_capacity(targets.len());
        for t in targets {
            let v = match t {
                Target::Var(v) if self.var_kinds[v.0 as usize].role == ConnectorRole::Stream => v,
                _ => return not_stream(self, arg.span, "not a stream variable"),
            };
            let answer = if actual {
                self.actual_stream_var(v)
            } else {
                self.in_stream_var(v)
            };
            elements.push(self.model.exprs.var(answer));
        }
        Some(Some(match dims.is_empty() {
            true => Value::Scalar(elements[0], ScalarType::Real),
            false => Value::Array(dims, elements, ScalarType::Real),
        }))
    }

    /// The variable `$inStream(v)`, made when first asked for.
    fn in_stream_var(&mut self, v: VarId) -> VarId {
        if let Some(&w) = self.streams.in_stream.get(&v) {
            return w;
        }
        let w = self.stream_answer(
            v,
            "inStream",
            "inStream of a stream variable: what flows in through its connector",
        );
        self.streams.in_stream.insert(v, w);
        self.streams.pending.push(v);
        w
    }

    /// The variable `$actualStream(v)`, made when first asked for.
    fn actual_stream_var(&mut self, v: VarId) -> VarId {
        if let Some(&w) = self.streams.actual.get(&v) {
            return w;
        }
        let w = self.stream_answer(
            v,
            "actualStream",
            "actualStream of a stream variable: the value in the actual flow direction",
        );
        self.streams.actual.insert(v, w);
        self.streams.actual_order.push((v, w));
        w
    }

    /// A new variable answering operator `what` of stream variable `v`, with its attributes (the
    /// same unit, nominal value and start, a good first guess for the solver). It belongs to
    /// the model itself, where its equation is counted.
    fn stream_answer(&mut self, v: VarId, what: &str, description: &'static str) -> VarId {
        let id = VarId(self.model.variables.len() as u32);
        let of = self.model.var(v);
        let variable = flat::Variable {
            name: format!("${what}({})", of.name),
            instance: InstanceId(0),
            variability: flat::Variability::Continuous,
            ty: ScalarType::Real,
            causality: flat::Causality::None,
            role: ConnectorRole::None,
            attributes: of.attributes.clone(),
            binding: None,
            value: None,
            description: Some(description.into()),
            span: of.span,
        };
        self.model.variables.push(variable);
        self.var_kinds.push(VarKind {
            variability: flat::Variability::Continuous,
            role: ConnectorRole::None,
            causality: flat::Causality::None,
            ty: ScalarType::Real,
            is_connector_type: false,
        });
        id
    }

    /// Checks every stream connector and writes the stream connection equations: those of
    /// the outside connectors of each set, then those of the `$inStream` and `$actualStream`
    /// variables. Runs once the connection sets are built. Linear in the number of variables,
    /// plus, for each equation, the members of its set: each connector's mixing leaves out that
    /// connector, so a set of n connectors whose every `inStream` is used writes n equations
    /// of n - 1 terms (the size of the formula itself; such sets are small in practice).
    pub(crate) fn build_stream_equations(&mut self) {
        let Some(flow_of) = self.stream_flows() else {
            return;
        };
        // The set in which each stream variable is an inside member.
        let mut inside_set: FxHashMap<VarId, u32> = FxHashMap::default();
        for (k, set) in self.model.connection_sets.iter().enumerate() {
            if set.role == ConnectorRole::Stream {
                for &(v, sign) in &set.members {
                    if sign > 0 {
                        inside_set.insert(v, k as u32);
                    }
                }
            }
        }
        let mixing = Mixing { flow_of, inside_set };
        for k in 0..self.model.connection_sets.len() {
            if self.model.connection_sets[k].role != ConnectorRole::Stream {
                continue;
            }
            let members = self.model.connection_sets[k].members.clone();
            for &(q, sign) in members.iter().filter(|m| m.1 < 0) {
                let mix = self.mix(&mixing, k, (q, sign), true);
                let lhs = self.model.exprs.var(q);
                self.add_stream_equation(lhs, mix, Origin::OutsideStream { var: q }, q);
            }
        }
        self.write_in_streams(&mixing);
        for (v, w) in std::mem::take(&mut self.streams.actual_order) {
            let Some(&flow) = mixing.flow_of.get(&v) else { continue };
            let into = self.model.exprs.var(flow);
            let zero = self.model.exprs.real(0.0);
            let positive = self.model.exprs.binary(BinOp::Gt, into, zero);
            let inflow = self.in_stream_var(v);
            let inflow = self.model.exprs.var(inflow);
            let outflow = self.model.exprs.var(v);
            let value = self.model.exprs.add(Node::If(positive, inflow, outflow));
            let lhs = self.model.exprs.var(w);
            self.add_stream_equation(lhs, value, Origin::ActualStream { var: v }, v);
        }
        // The `$inStream` that the `actualStream` above asked for.
        self.write_in_streams(&mixing);
    }

    /// The equations of the `$inStream` variables without one. Each may ask for those of
    /// outside connectors one level up, which are written in turn (the hierarchy is a tree,
    /// so this ends).
    fn write_in_streams(&mut self, mixing: &Mixing) {
        // In the order they were asked, the ones asked meanwhile after them.
        let mut next = 0;
        while let Some(&v) = self.streams.pending.get(next) {
            next += 1;
            let w = self.streams.in_stream[&v];
            let mix = match mixing.inside_set.get(&v) {
                Some(&k) => self.mix(mixing, k as usize, (v, 1), false),
                // Alone in a set of its own: an unconnected inside connector.
                None => self.model.exprs.var(v),
            };
            let lhs = self.model.exprs.var(w);
            self.add_stream_equation(lhs, mix, Origin::InStream { var: v }, v);
        }
        self.streams.pending.clear();
    }

    /// The flow variable of the connector of each stream variable; reports (E0340) a connector
    /// with stream variables that has not exactly one scalar flow variable. `None` after a
    /// diagnostic.
    fn stream_flows(&mut self) -> Option<FxHashMap<VarId, VarId>> {
        let instances = &self.model.instances;
        // The connector a variable belongs to: the nearest enclosing connector instance (a
        // record of stream variables in a connector is part of that connector).
        let connector = |mut i: InstanceId| loop {
            let inst = &instances[i.0 as usize];
            match inst.parent {
                _ if inst.is_connector => return Some(i),
                Some(p) => i = p,
                None => return None,
            }
        };
        let mut flows: FxHashMap<InstanceId, (u32, VarId)> = FxHashMap::default();
        let mut streams: Vec<(VarId, Option<InstanceId>)> = Vec::new();
        for (k, var) in self.model.variables.iter().enumerate() {
            let v = VarId(k as u32);
            match var.role {
                ConnectorRole::Flow => {
                    if let Some(c) = connector(var.instance) {
                        flows.entry(c).or_insert((0, v)).0 += 1;
                    }
                }
                ConnectorRole::Stream => streams.push((v, connector(var.instance))),
                _ => {}
            }
        }
        let mut flow_of = FxHashMap::default();
        // Reported once per declaration: every element of an array of such connectors is wrong
        // for the same reason.
        let mut reported: FxHashMap<eqm_diag::source::Span, ()> = FxHashMap::default();
        let mut ok = true;
        for (v, c) in streams {
            let found = c.and_then(|c| flows.get(&c).copied());
            match found {
                Some((1, flow)) => {
                    flow_of.insert(v, flow);
                }
                _ => {
                    ok = false;
                    let var = self.model.var(v);
                    if reported.insert(var.span, ()).is_some() {
                        continue;
                    }
                    let n = found.map_or(0, |f| f.0);
                    self.diagnostics.push(
                        Diagnostic::error(
                            "E0340",
                            format!("the connector of stream variable `{}` has {n} flow variables", var.name),
                            var.span,
                            "a stream variable",
                        )
                        .with_help("a stream connector has exactly one scalar flow variable, which carries its stream variables"),
                    );
                }
            }
        }
        ok.then_some(flow_of)
    }

    /// The value mixed in a connection set for `member`: the inflows of the other members
    /// weighted by their flows into the set (see the module comment). `outside` says whether
    /// it is the value leaving through an outside connector (0 when nothing can flow in) or an
    /// `inStream` (the member's own value then).
    fn mix(&mut self, mixing: &Mixing, set: usize, member: (VarId, i8), outside: bool) -> ExprId {
        let members = self.model.connection_sets[set].members.clone();
        let mut terms: Vec<(ExprId, ExprId)> = Vec::new();
        let mut nominal = f64::INFINITY;
        for &(w, sign) in members.iter().filter(|m| **m != member) {
            let Some(&flow) = mixing.flow_of.get(&w) else { continue };
            let (min, max, nom) = self.flow_bounds(flow);
            // An inside connector gives flow into the set when its flow is negative, an
            // outside one when it is positive.
            let can_give = if sign > 0 {
                min.is_none_or(|m| m < 0.0)
            } else {
                max.is_none_or(|m| m > 0.0)
            };
            if !can_give {
                continue;
            }
            nominal = nominal.min(nom);
            let f = self.model.exprs.var(flow);
            let into = if sign > 0 {
                self.model.exprs.unary(UnOp::Neg, f)
            } else {
                f
            };
            let value = if sign > 0 { w } else { self.in_stream_var(w) };
            let value = self.model.exprs.var(value);
            terms.push((into, value));
        }
        match terms.len() {
            0 if outside => self.model.exprs.real(0.0),
            0 => self.model.exprs.var(member.0),
            1 => terms[0].1,
            _ => self.regularised_mean(&terms, RELATIVE_EPS * nominal),
        }
    }

    /// The constant `min`, `max` and `nominal` (1 when not given) of a flow variable.
    fn flow_bounds(&mut self, flow: VarId) -> (Option<f64>, Option<f64>, f64) {
        let attributes = self.model.var(flow).attributes.clone();
        let mut known = |e: Option<ExprId>| {
            let e = e?;
            self.model.exprs.literal(e).or_else(|| self.consts.eval(&self.model, e))
        };
        let min = known(attributes.min);
        let max = known(attributes.max);
        let nominal = known(attributes.nominal).map(f64::abs).filter(|n| *n > 0.0);
        (min, max, nominal.unwrap_or(1.0))
    }

    /// `sum(positiveMax(q_t, s) * x_t) / sum(positiveMax(q_t, s))` for terms `(q_t, x_t)` of
    /// inflow `q_t` and value `x_t`. Without events: the expression is continuous.
    fn regularised_mean(&mut self, terms: &[(ExprId, ExprId)], eps: f64) -> ExprId {
        let x = &mut self.model.exprs;
        let zero = x.real(0.0);
        let one = x.real(1.0);
        let eps_node = x.real(eps);
        let positive: Vec<ExprId> = terms
            .iter()
            .map(|&(q, _)| {
                let m = x.builtin(Builtin::Max, vec![q, zero]);
                x.builtin(Builtin::NoEvent, vec![m])
            })
            .collect();
        let s = crate::value::sum(x, &positive);
        // alpha = smooth(1, if s > eps then 1 else if s > 0 then r^2*(3 - 2r) else 0), r = s/eps.
        let r = x.binary(BinOp::Div, s, eps_node);
        let r2 = x.binary(BinOp::Mul, r, r);
        let three = x.real(3.0);
        let two = x.real(2.0);
        let two_r = x.binary(BinOp::Mul, two, r);
        let cubic = x.binary(BinOp::Sub, three, two_r);
        let cubic = x.binary(BinOp::Mul, r2, cubic);
        let above = x.binary(BinOp::Gt, s, eps_node);
        let above = x.builtin(Builtin::NoEvent, vec![above]);
        let inside = x.binary(BinOp::Gt, s, zero);
        let inside = x.builtin(Builtin::NoEvent, vec![inside]);
        let lower = x.add(Node::If(inside, cubic, zero));
        let alpha = x.add(Node::If(above, one, lower));
        let rest = x.binary(BinOp::Sub, one, alpha);
        let floor = x.binary(BinOp::Mul, rest, eps_node);
        let mut weights = Vec::with_capacity(terms.len());
        let mut weighted = Vec::with_capacity(terms.len());
        for (p, &(_, value)) in positive.iter().zip(terms) {
            let scaled = x.binary(BinOp::Mul, alpha, *p);
            let w = x.binary(BinOp::Add, scaled, floor);
            weights.push(w);
            weighted.push(x.binary(BinOp::Mul, w, value));
        }
        let numerator = crate::value::sum(x, &weighted);
        let denominator = crate::value::sum(x, &weights);
        x.binary(BinOp::Div, numerator, denominator)
    }

    /// Adds `lhs = rhs`, a stream connection equation about stream variable `v` (shown at its
    /// declaration).
    fn add_stream_equation(&mut self, lhs: ExprId, rhs: ExprId, origin: Origin, v: VarId) {
        let span = self.model.var(v).span;
        self.add_equation(lhs, rhs, origin, span);
    }
}

/// What the mixing of a set reads: the flow of each stream variable's connector and the set in
/// which each stream variable is an inside member.
struct Mixing {
    flow_of: FxHashMap<VarId, VarId>,
    inside_set: FxHashMap<VarId, u32>,
}
