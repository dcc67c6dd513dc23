//! Connection semantics: connection sets by union-find, and their equations.
//!
//! Input: the resolved sides of every `connect(a, b)` (from `equations`). Output: the flat model's
//! connection sets and their equations, and diagnostics for connectors that cannot be connected
//! (array sizes that differ, or connectors without the same variables of the same kinds). Each
//! connect joins the scalar variables of two compatible connectors. Every variable takes part as an
//! inside element (a connector of a sub-component) or an outside element (a connector of the class
//! writing the connect), and the two are different set members. For each set, potentials are equal
//! (n - 1 equations) and flows sum to zero with sign +1 inside and -1 outside. A flow variable that
//! is never connected as an inside element gets `flow = 0`: an unconnected connector is a node of
//! its own, through which nothing flows. It deliberately resolves no references (that is `names`).
//!
//! The order of the equations is part of what a user sees (`eqm flatten`, the numbering and the
//! colouring replay of `eqm explain`), so it is fixed for every model: the component equations
//! come first (flattened before this runs), then the `flow = 0` of every unconnected connector in
//! the order of the flat variables, then the equations of each connection set in the order of
//! the first connect that forms it (the sets of one connect in the order of the connector's
//! variables). This is the order in which such a system is written down by hand: the component
//! equations, each open end as a node of its own, then the nodes the connections make.

use crate::connections::ResolvedConnect;
use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::layout::{Member, Target};
use crate::modifier::Scope;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::disjoint_sets::DisjointSets;
use eqm_ir::expr::{ExprId, VarId};
use eqm_ir::flat::{self, ConnectorRole, InstanceId, Origin};
use eqm_syntax::ast;
use std::borrow::Cow;

pub struct Side {
    pub elements: Vec<Target>,
    pub outside: bool,
    /// An outside connector declared protected, which is no source of a signal.
    pub protected_outside: bool,
}

impl<'t, 'a> Flattener<'t, 'a> {
    pub(crate) fn add_connect(
        &mut self,
        left: Side,
        right: Side,
        span: Span,
        a: &'a ast::ComponentRef,
        b: &'a ast::ComponentRef,
    ) {
        // The texts of the two sides are only needed for messages: printed when reported.
        let texts = || (eqm_syntax::pretty::print_ref(a), eqm_syntax::pretty::print_ref(b));
        if left.elements.len() != right.elements.len() {
            let (a_text, b_text) = texts();
            self.diagnostics.push(
                Diagnostic::error(
                    "E0302",
                    format!(
                        "cannot connect `{a_text}` ({} connectors) with `{b_text}` ({})",
                        left.elements.len(),
                        right.elements.len()
                    ),
                    span,
                    "array sizes differ",
                )
                .with_label(a.span, format!("{} element(s)", left.elements.len()))
                .with_label(b.span, format!("{} element(s)", right.elements.len())),
            );
            return;
        }
        let start = self.connections.pairs.len();
        let fixed_start = self.connections.fixed_pairs.len();
        for (l, r) in left.elements.iter().zip(&right.elements) {
            let mut ll = self.connector_leaves_with_fixed(l);
            let mut rl = self.connector_leaves_with_fixed(r);
            if let Some(why) = self.leaves_mismatch(&ll, &rl) {
                let (ld, rd) = (describe_leaves(self, &ll), describe_leaves(self, &rl));
                let (a_text, b_text) = texts();
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0303",
                        format!("`{a_text}` and `{b_text}` are not compatible connectors: {why}"),
                        span,
                        "incompatible connect",
                    )
                    .with_label(a.span, format!("has {ld}"))
                    .with_label(b.span, format!("has {rd}"))
                    .with_help(
                        "connected connectors need the same variables of the same types, with the same \
                         flow/potential kind, causality and variability",
                    ),
                );
                self.connections.pairs.truncate(start);
                self.connections.fixed_pairs.truncate(fixed_start);
                return;
            }
            // Parameters and constants are not connected: their values must be equal.
            for ((_, v1), (_, v2)) in ll.iter().zip(&rl) {
                if !self.var_kinds[v1.0 as usize].is_time_varying() {
                    let vars = (*v1, *v2);
                    self.connections
                        .fixed_pairs
                        .push(crate::connections::FixedPair { vars, span });
                }
            }
            ll.retain(|(_, v)| self.var_kinds[v.0 as usize].is_time_varying());
            rl.retain(|(_, v)| self.var_kinds[v.0 as usize].is_time_varying());
            for (side, leaves) in [(&left, &ll), (&right, &rl)] {
                if side.protected_outside {
                    self.connections
                        .protected_outside
                        .extend(leaves.iter().map(|(_, v)| *v));
                }
            }
            // The scalars of overdetermined instances become an edge of the connection graph.
            let diverted = self.overdetermined_connect((l, r), (left.outside, right.outside), a, span);
            for ((_, v1), (_, v2)) in ll.iter().zip(&rl) {
                if !diverted.contains(v1) {
                    self.connections.pairs.push(((*v1, left.outside), (*v2, right.outside)));
                }
            }
        }
        if let Some(uses) = &mut self.connections.connector_uses {
            for t in left.elements.into_iter().chain(right.elements) {
                *uses.entry(t).or_default() += 1;
            }
        }
        self.connections.connects.push(ResolvedConnect {
            pairs: start..self.connections.pairs.len(),
            span,
        });
    }

    /// Builds the connection sets and their equations: first `flow = 0` for each unconnected
    /// flow, then the equations of each set in the order of its first connect.
    /// Linear in the number of connected variables: keys are numbered through an array indexed
    /// by variable, not a map.
    pub(crate) fn build_connection_sets(&mut self) {
        const NONE: u32 = u32::MAX;
        // Key number of (variable, outside) at `2 * variable + outside`, in order of first appearance.
        let mut index: Vec<u32> = vec![NONE; 2 * self.model.variables.len()];
        let mut keys: Vec<(VarId, bool)> = Vec::new();
        // Sets keep their first key as root, which keeps them in order of first appearance.
        let mut sets = DisjointSets::default();
        let connects = std::mem::take(&mut self.connections.connects);
        let pairs = std::mem::take(&mut self.connections.pairs);
        for rc in &connects {
            for &(l, r) in &pairs[rc.pairs.clone()] {
                let [a, b] = [l, r].map(|k| {
                    let slot = &mut index[2 * k.0.0 as usize + usize::from(k.1)];
                    if *slot == NONE {
                        *slot = keys.len() as u32;
                        keys.push(k);
                        sets.add();
                    }
                    *slot as usize
                });
                sets.union(a, b);
            }
        }
        // Number the sets by their roots (each root is its set's first key, so it is numbered
        // before the other keys of its set) and count their members.
        let mut set_of: Vec<u32> = vec![NONE; keys.len()];
        let mut sizes: Vec<usize> = Vec::new();
        for k in 0..keys.len() {
            let r = sets.find(k);
            if r == k {
                set_of[k] = sizes.len() as u32;
                sizes.push(0);
            }
            set_of[k] = set_of[r];
            sizes[set_of[k] as usize] += 1;
        }
        // Gather the members, each set's in a vector of its size.
        let mut members: Vec<Vec<(VarId, i8)>> = sizes.iter().map(|&n| Vec::with_capacity(n)).collect();
        for (k, &(v, outside)) in keys.iter().enumerate() {
            members[set_of[k] as usize].push((v, if outside { -1 } else { 1 }));
        }
        // The connects that formed each set, in source order: counted first, then gathered.
        // `connects_of_sets` visits each connect once for every set it joins.
        let mut last_connect: Vec<usize> = vec![usize::MAX; members.len()];
        let mut connects_of_sets = |visit: &mut dyn FnMut(usize, Span)| {
            last_connect.fill(usize::MAX);
            for (c, rc) in connects.iter().enumerate() {
                for &(l, _) in &pairs[rc.pairs.clone()] {
                    let set = set_of[index[2 * l.0.0 as usize + usize::from(l.1)] as usize] as usize;
                    if last_connect[set] != c {
                        last_connect[set] = c;
                        visit(set, rc.span);
                    }
                }
            }
        };
        sizes.fill(0);
        connects_of_sets(&mut |set, _| sizes[set] += 1);
        let mut formed_by: Vec<Vec<Span>> = sizes.iter().map(|&n| Vec::with_capacity(n)).collect();
        connects_of_sets(&mut |set, span| formed_by[set].push(span));
        // Unconnected flows (never an inside member of a set), in variable order, before the
        // equations of the connects: such a connector is a node of its own that its component
        // brings along, so its `flow = 0` follows the component equations and precedes the
        // equations the connects add, which come in the order the connects are written.
        // Only a flow variable of a connector (at any depth: `flow Complex i` of a pin) is a
        // connector's flow; one declared `flow` elsewhere (`flow Real x;` in a model) is an
        // ordinary variable.
        let in_connector = self.instances_in_connectors();
        for i in 0..self.model.variables.len() {
            let v = VarId(i as u32);
            let kind = self.var_kinds[i];
            let of_connector = in_connector[self.model.var(v).instance.0 as usize];
            if kind.role == ConnectorRole::Flow && kind.is_time_varying() && index[2 * i] == NONE && of_connector {
                let span = self.model.var(v).span;
                let lhs = self.model.exprs.var(v);
                let zero = self.model.exprs.int(0);
                self.add_equation(lhs, zero, Origin::UnconnectedFlow { var: v }, span);
            }
        }
        for (signed, spans) in members.into_iter().zip(formed_by) {
            let set = self.model.connection_sets.len() as u32;
            let role = self.var_kinds[signed[0].0.0 as usize].role;
            let span = spans[0];
            match role {
                ConnectorRole::Flow => {
                    let mut terms = Vec::with_capacity(signed.len());
                    for &(v, sign) in &signed {
                        let x = self.model.exprs.var(v);
                        terms.push(if sign < 0 {
                            self.model.exprs.unary(eqm_ir::expr::UnOp::Neg, x)
                        } else {
                            x
                        });
                    }
                    let sum = crate::value::sum(&mut self.model.exprs, &terms);
                    let zero = self.model.exprs.int(0);
                    self.add_equation(sum, zero, Origin::ConnectFlow { set }, span);
                }
                // Stream variables give no equations here: `stream_connectors` writes the
                // mixing of the set once every `inStream` is known.
                ConnectorRole::Stream => {}
                _ => {
                    self.check_signal_sources(&signed, &spans);
                    let first = self.model.exprs.var(signed[0].0);
                    for &(v, _) in &signed[1..] {
                        let x = self.model.exprs.var(v);
                        self.add_equation(first, x, Origin::ConnectPotential { set }, span);
                    }
                }
            }
            self.model.connection_sets.push(flat::ConnectionSet {
                role,
                members: signed,
                connects: spans,
            });
        }
    }

    /// Resolves one side of a `connect`: the connector elements and whether it is an outside
    /// connector (a connector of the instance writing the connect) or an inside one.
    pub(crate) fn connector_side(&mut self, c: &'a ast::ComponentRef, scope: Scope, loops: &mut Loops) -> Option<Side> {
        let (_, targets) = self.resolve_targets(c, scope, loops)?;
        let instance = scope.instance?;
        if let Some(part) = self.non_connector_part(instance, c) {
            self.diagnostics.push(Diagnostic::error(
                "E0301",
                format!(
                    "`{}` is no connector reference: it reaches its connector through `{part}`, which is not a connector",
                    eqm_syntax::pretty::print_ref(c)
                ),
                c.span,
                "connect a connector of the class or of one of its components",
            ));
            return None;
        }
        let outside = self.is_connector_member(instance, &c.parts[0].name.name);
        for t in &targets {
            let is_connector = match *t {
                Target::Inst(i) => self.instances[i.0 as usize].is_connector,
                Target::Var(v) => {
                    let kind = self.var_kinds[v.0 as usize];
                    kind.is_connector_type || kind.role != eqm_ir::flat::ConnectorRole::None
                }
            };
            if !is_connector {
                self.diagnostics.push(Diagnostic::error(
                    "E0301",
                    format!("`{}` is not a connector", eqm_syntax::pretty::print_ref(c)),
                    c.span,
                    "only connectors can be connected",
                ));
                return None;
            }
        }
        let name = &c.parts[0].name.name;
        let protected_outside = outside && self.instances[instance.0 as usize].layout.is_protected(name);
        Some(Side {
            elements: targets,
            outside,
            protected_outside,
        })
    }

    /// The scalar variables of a connector with their paths relative to it, in declaration order.
    /// A path is the element's name borrowed from the source when the leaf is a direct scalar
    /// element (the usual case), so that most connects build no strings.
    pub(crate) fn connector_leaves_with_fixed(&mut self, target: &Target) -> Vec<(Cow<'a, str>, VarId)> {
        let mut out = Vec::new();
        match target {
            Target::Var(v) => out.push((Cow::Borrowed(""), *v)),
            Target::Inst(i) => {
                // The connector itself, then its nested connectors from a stack that most
                // connectors (with scalar elements only) never need.
                let mut next = Some((Cow::Borrowed(""), *i));
                let mut stack: Vec<(Cow<'a, str>, InstanceId)> = Vec::new();
                while let Some((prefix, inst)) = next.take().or_else(|| stack.pop()) {
                    let layout = self.instances[inst.0 as usize].layout.clone();
                    let mut nested = Vec::new();
                    for (k, name) in layout.names().enumerate() {
                        let member = Some(self.ensure_member_at(inst, k));
                        let path = if prefix.is_empty() {
                            Cow::Borrowed(name)
                        } else {
                            Cow::Owned(format!("{prefix}.{name}"))
                        };
                        match member {
                            Some(Member::Var(v)) => out.push((path, v)),
                            Some(Member::VarArray(array)) => {
                                for (k, v) in array.elements.iter().enumerate() {
                                    out.push((Cow::Owned(format!("{path}[{}]", k + 1)), *v));
                                }
                            }
                            Some(Member::Inst(c)) => nested.push((path, c)),
                            Some(Member::InstArray(array)) => {
                                for (k, c) in array.elements.iter().enumerate() {
                                    nested.push((Cow::Owned(format!("{path}[{}]", k + 1)), *c));
                                }
                            }
                            _ => {}
                        }
                    }
                    // Keep declaration order: nested connectors are expanded after the scalars.
                    stack.extend(nested.into_iter().rev());
                }
            }
        }
        out
    }

    /// The scalar variables of a connector that a connect joins: parameters and constants are
    /// not connected.
    pub(crate) fn connector_leaves(&mut self, target: &Target) -> Vec<(Cow<'a, str>, VarId)> {
        let mut out = self.connector_leaves_with_fixed(target);
        out.retain(|(_, v)| self.var_kinds[v.0 as usize].is_time_varying());
        out
    }

    /// Per instance, whether it is a connector or inside one. An instance is made after its
    /// parent, so one pass in order sees each parent first.
    fn instances_in_connectors(&self) -> Vec<bool> {
        let mut inside = Vec::with_capacity(self.model.instances.len());
        for instance in &self.model.instances {
            let parent = instance.parent.is_some_and(|p| inside.get(p.0 as usize) == Some(&true));
            inside.push(instance.is_connector || parent);
        }
        inside
    }

    /// Adds `lhs = rhs`, an equation of the connection semantics (no array equation's element).
    pub(crate) fn add_equation(&mut self, lhs: ExprId, rhs: ExprId, origin: Origin, span: Span) {
        self.model.equations.push(flat::Equation {
            lhs,
            rhs,
            origin,
            span,
            array: None,
        });
    }
}

/// The leaves of a connector as messages list them: `flow i, v`.
fn describe_leaves(f: &Flattener<'_, '_>, leaves: &[(Cow<'_, str>, VarId)]) -> String {
    leaves
        .iter()
        .map(|(n, v)| {
            let role = match f.model.var(*v).role {
                ConnectorRole::Flow => "flow ",
                ConnectorRole::Stream => "stream ",
                _ => "",
            };
            format!("{role}{}", if n.is_empty() { "value" } else { n })
        })
        .collect::<Vec<_>>()
        .join(", ")
}
