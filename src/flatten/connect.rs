//! Connection semantics (seed 000; Modelica §9.2): connection sets by union-find.
//!
//! Each `connect(a, b)` joins the scalar variables of two compatible connectors. Every variable
//! takes part as an inside element (a connector of a sub-component) or an outside element (a
//! connector of the class writing the connect), and the two are different set members. For each
//! set, potentials are equal (n - 1 equations) and flows sum to zero with sign +1 inside and -1
//! outside. A flow variable that is never connected as an inside element gets `flow = 0`, which
//! is the seed's "an unconnected connector is a one-node".

use super::Flattener;
use super::eval::Target;
use crate::diag::Diagnostic;
use crate::expr::VarId;
use crate::flat::{self, ConnectorRole, Origin};
use crate::source::Span;
use crate::syntax::ast;
use std::collections::BTreeMap;

pub struct Side {
    pub elements: Vec<Target>,
    pub outside: bool,
}

/// One scalar pair joined by a connect: (variable, outside) on each side.
pub struct ResolvedConnect {
    pub pairs: Vec<((VarId, bool), (VarId, bool))>,
    pub span: Span,
}

impl<'t, 'a> Flattener<'t, 'a> {
    pub(crate) fn add_connect(
        &mut self,
        left: Side,
        right: Side,
        span: Span,
        a: &ast::ComponentRef,
        b: &ast::ComponentRef,
    ) {
        let (a_text, b_text) = (crate::syntax::pretty::print_ref(a), crate::syntax::pretty::print_ref(b));
        if left.elements.len() != right.elements.len() {
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
        let mut pairs = Vec::new();
        for (l, r) in left.elements.iter().zip(&right.elements) {
            let ll = self.connector_leaves(l);
            let rl = self.connector_leaves(r);
            let describe = |f: &Self, leaves: &[(String, VarId)]| -> String {
                leaves
                    .iter()
                    .map(|(n, v)| {
                        let role = match f.model.var(*v).role {
                            ConnectorRole::Flow => "flow ",
                            _ => "",
                        };
                        format!("{role}{}", if n.is_empty() { "value" } else { n })
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let compatible = ll.len() == rl.len()
                && ll.iter().zip(&rl).all(|((n1, v1), (n2, v2))| {
                    let (x, y) = (self.model.var(*v1), self.model.var(*v2));
                    n1 == n2
                        && x.role == y.role
                        && (x.ty == y.ty || x.ty != flat::ScalarType::Boolean && y.ty != flat::ScalarType::Boolean)
                });
            if !compatible {
                let (ld, rd) = (describe(self, &ll), describe(self, &rl));
                self.diagnostics.push(
                    Diagnostic::error(
                        "E0303",
                        format!("`{a_text}` and `{b_text}` are not compatible connectors"),
                        span,
                        "incompatible connect",
                    )
                    .with_label(a.span, format!("has {ld}"))
                    .with_label(b.span, format!("has {rd}"))
                    .with_help("connected connectors need the same variables with the same flow/potential kind"),
                );
                return;
            }
            for ((_, v1), (_, v2)) in ll.iter().zip(&rl) {
                pairs.push(((*v1, left.outside), (*v2, right.outside)));
            }
        }
        self.connects.push(ResolvedConnect { pairs, span });
    }

    /// Builds the connection sets and their equations, then `flow = 0` for unconnected flows.
    pub(crate) fn build_connection_sets(&mut self) {
        let mut index: BTreeMap<(VarId, bool), usize> = BTreeMap::new();
        let mut keys: Vec<(VarId, bool)> = Vec::new();
        let mut parent: Vec<usize> = Vec::new();
        let mut first_connect: Vec<usize> = Vec::new();
        let mut id_of = |k: (VarId, bool),
                         c: usize,
                         keys: &mut Vec<(VarId, bool)>,
                         parent: &mut Vec<usize>,
                         first: &mut Vec<usize>|
         -> usize {
            *index.entry(k).or_insert_with(|| {
                keys.push(k);
                parent.push(keys.len() - 1);
                first.push(c);
                keys.len() - 1
            })
        };
        fn find(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        let connects = std::mem::take(&mut self.connects);
        let mut connect_of_key: Vec<Vec<usize>> = Vec::new();
        for (c, rc) in connects.iter().enumerate() {
            for (l, r) in &rc.pairs {
                let a = id_of(*l, c, &mut keys, &mut parent, &mut first_connect);
                let b = id_of(*r, c, &mut keys, &mut parent, &mut first_connect);
                while connect_of_key.len() < keys.len() {
                    connect_of_key.push(Vec::new());
                }
                connect_of_key[a].push(c);
                connect_of_key[b].push(c);
                let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
                if ra != rb {
                    // The root with the earlier first appearance stays root, keeping sets ordered.
                    let (keep, join) = if ra < rb { (ra, rb) } else { (rb, ra) };
                    parent[join] = keep;
                }
            }
        }
        // Group members by root in order of first appearance.
        let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for k in 0..keys.len() {
            let r = find(&mut parent, k);
            groups.entry(r).or_default().push(k);
        }
        let mut ordered: Vec<Vec<usize>> = groups.into_values().collect();
        ordered.sort_by_key(|members| members[0]);
        for members in ordered {
            let set = self.model.connection_sets.len() as u32;
            let role = self.model.var(keys[members[0]].0).role;
            let mut spans: Vec<usize> = members
                .iter()
                .flat_map(|&m| connect_of_key[m].iter().copied())
                .collect();
            spans.sort_unstable();
            spans.dedup();
            let span = connects[spans[0]].span;
            let signed: Vec<(VarId, i8)> = members
                .iter()
                .map(|&m| (keys[m].0, if keys[m].1 { -1 } else { 1 }))
                .collect();
            match role {
                ConnectorRole::Flow => {
                    let mut terms = Vec::new();
                    for &(v, sign) in &signed {
                        let x = self.model.exprs.var(v);
                        terms.push(if sign < 0 {
                            self.model.exprs.unary(crate::expr::UnOp::Neg, x)
                        } else {
                            x
                        });
                    }
                    let sum = super::value::sum(&mut self.model.exprs, &terms);
                    let zero = self.model.exprs.int(0);
                    self.model.equations.push(flat::Equation {
                        lhs: sum,
                        rhs: zero,
                        origin: Origin::ConnectFlow { set },
                        span,
                        array: None,
                    });
                }
                _ => {
                    let first = self.model.exprs.var(signed[0].0);
                    for &(v, _) in &signed[1..] {
                        let x = self.model.exprs.var(v);
                        self.model.equations.push(flat::Equation {
                            lhs: first,
                            rhs: x,
                            origin: Origin::ConnectPotential { set },
                            span,
                            array: None,
                        });
                    }
                }
            }
            self.model.connection_sets.push(flat::ConnectionSet {
                role,
                members: signed,
                connects: spans.iter().map(|&c| connects[c].span).collect(),
            });
        }
        // Unconnected flows: never an inside member of a set.
        for i in 0..self.model.variables.len() {
            let v = VarId(i as u32);
            let var = self.model.var(v);
            if var.role == ConnectorRole::Flow
                && matches!(
                    var.variability,
                    flat::Variability::Continuous | flat::Variability::Discrete
                )
                && !index.contains_key(&(v, false))
            {
                let span = var.span;
                let lhs = self.model.exprs.var(v);
                let zero = self.model.exprs.int(0);
                self.model.equations.push(flat::Equation {
                    lhs,
                    rhs: zero,
                    origin: Origin::UnconnectedFlow { var: v },
                    span,
                    array: None,
                });
            }
        }
    }
}
