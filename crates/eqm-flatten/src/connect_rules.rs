//! The restrictions of connections (Modelica 9.3) beyond the shape of the two connectors:
//! matched primitive elements of the same type and kind, causal elements only with causal
//! ones, parameters only with parameters and constants only with constants (of one value), and
//! at most one source of a signal in a connection set.
//!
//! Input: the references of a connect (whose form is checked), the leaves of two connected connectors (from `connect`, parameters and constants
//! included), and the connection sets once `connect` has built them. Output: why two leaves
//! cannot be matched (reported by `connect` as E0303); E0303 for connected constants or
//! parameters whose values differ, and an initial assertion for parameters whose values are
//! known only during the run; E0343 for a set with two sources of its signal. It deliberately
//! does not require a set to have a source at all: an input left unconnected is given its value
//! by an equation, which the balance check counts.

use crate::flattener::Flattener;
use crate::layout::{Member, VarKind};
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{BinOp, VarId};
use eqm_ir::flat::{self, Causality, ConnectorRole, InstanceId, ScalarType, Variability};
use eqm_syntax::ast;
use std::borrow::Cow;

impl<'t, 'a> Flattener<'t, 'a> {
    /// Whether a connect written at `span` stands in a branch of an if-equation decided during
    /// the run; E0311 then. The connection sets are fixed when the model is translated, so a
    /// connect cannot depend on such a condition (Modelica 8.3.3).
    pub(crate) fn connect_under_run_time_condition(&mut self, span: Span) -> bool {
        if self.branch_guards.is_empty() {
            return false;
        }
        self.diagnostics.push(Diagnostic::error(
            "E0311",
            "`connect` in an if-equation whose condition is not known at compile time",
            span,
            "not allowed here",
        ));
        true
    }

    /// The part of connector reference `c`, written in `instance`, that makes it none of the
    /// two forms of Modelica 9.1 (`c1.c2.....cn` through connectors, or `m.c` with one
    /// component `m` that is not a connector): a part after the first that is not a connector,
    /// on the way to the connector. `None` when the reference has one of the forms.
    pub(crate) fn non_connector_part(&self, instance: InstanceId, c: &'a ast::ComponentRef) -> Option<&'a str> {
        let mut at = instance;
        for (k, part) in c.parts[..c.parts.len().saturating_sub(1)].iter().enumerate() {
            let next = match self.member(at, &part.name.name)? {
                Member::Inst(i) => *i,
                Member::InstArray(array) => *array.elements.first()?,
                _ => return None,
            };
            if k >= 1 && !self.instances[next.0 as usize].is_connector {
                return Some(&part.name.name);
            }
            at = next;
        }
        None
    }

    /// Why the leaves of two connected connectors (paths relative to each connector, in
    /// declaration order) cannot be matched pair by pair; `None` when they can.
    pub(crate) fn leaves_mismatch(
        &self,
        left: &[(Cow<'a, str>, VarId)],
        right: &[(Cow<'a, str>, VarId)],
    ) -> Option<String> {
        if left.len() != right.len() {
            return Some(format!(
                "they have {} and {} primitive elements",
                left.len(),
                right.len()
            ));
        }
        for ((n1, v1), (n2, v2)) in left.iter().zip(right) {
            if !same_name(n1, n2) {
                return Some(format!("{} is matched with {}", element(n1), element(n2)));
            }
            let (x, y) = (self.var_kinds[v1.0 as usize], self.var_kinds[v2.0 as usize]);
            // The two words that differ, found without building a text for the pairs that match.
            let (one, other) = if x.role != y.role {
                (role_word(x.role), role_word(y.role))
            } else if x.ty != y.ty {
                (type_word(x.ty), type_word(y.ty))
            } else if variability_class(x) != variability_class(y) {
                (variability_class(x), variability_class(y))
            } else if (x.causality == Causality::None) != (y.causality == Causality::None) {
                (causality_word(x.causality), causality_word(y.causality))
            } else {
                continue;
            };
            return Some(format!("{} is {one} in one and {other} in the other", element(n1)));
        }
        None
    }

    /// Checks that connected parameters and constants have one value: E0303 when both are
    /// known at compile time and differ, an initial assertion for parameters known only later.
    pub(crate) fn check_fixed_pairs(&mut self) {
        for pair in std::mem::take(&mut self.connections.fixed_pairs) {
            let (a, b) = pair.vars;
            let (va, vb) = (self.model.var(a), self.model.var(b));
            if va.ty == ScalarType::String {
                continue;
            }
            match (va.value, vb.value) {
                (Some(x), Some(y)) if x != y => {
                    let what = if va.variability == Variability::Constant {
                        "constants"
                    } else {
                        "parameters"
                    };
                    self.diagnostics.push(
                        Diagnostic::error(
                            "E0303",
                            format!(
                                "connected {what} `{}` = {x} and `{}` = {y} have different values",
                                va.name, vb.name
                            ),
                            pair.span,
                            "connects elements of different values",
                        )
                        .with_help("a connect joins no constants or parameters: it requires them to be equal"),
                    );
                }
                (Some(_), Some(_)) => {}
                _ if va.variability == Variability::Parameter => {
                    let message = format!("the connected parameters `{}` and `{}` differ", va.name, vb.name);
                    let (instance, ea, eb) = (va.instance, self.model.exprs.var(a), self.model.exprs.var(b));
                    let condition = self.model.exprs.binary(BinOp::Eq, ea, eb);
                    self.model.assertions.push(flat::Assertion {
                        condition,
                        message: flat::Message::literal(message),
                        level: flat::AssertionLevel::Error,
                        initial: true,
                        instance,
                        span: pair.span,
                    });
                }
                _ => {}
            }
        }
    }

    /// Reports a connection set of causal variables with more than one source of its signal:
    /// an inside `output` or a public outside `input` (Modelica 9.3). Outside members of
    /// protected connectors are listed in `protected_outside`. Each member is a variable with
    /// its sign in the set: -1 as an outside element, +1 as an inside one.
    pub(crate) fn check_signal_sources(&mut self, members: &[(VarId, i8)], spans: &[Span]) {
        let mut sources = members.iter().filter(|&&(var, sign)| {
            let causality = self.var_kinds[var.0 as usize].causality;
            if sign < 0 {
                causality == Causality::Input && !self.connections.protected_outside.contains(&var)
            } else {
                causality == Causality::Output
            }
        });
        let (Some(first), Some(second)) = (sources.next(), sources.next()) else {
            return;
        };
        let describe = |&(var, sign): &(VarId, i8)| {
            let place = if sign < 0 { "outside input" } else { "inside output" };
            format!("`{}` ({place})", self.model.var(var).name)
        };
        let (one, two) = (describe(first), describe(second));
        let mut diagnostic = Diagnostic::error(
            "E0343",
            format!("a connection set has two sources of its signal: {one} and {two}"),
            spans[spans.len() - 1],
            "joins two signal sources",
        );
        // The last connect of the set is reported: the earlier ones are labelled.
        for &span in &spans[..spans.len() - 1] {
            diagnostic = diagnostic.with_label(span, "joined here");
        }
        self.diagnostics.push(
            diagnostic
                .with_help("a signal is set by one inside output or one outside input; connect the others as inputs"),
        );
    }
}

/// A leaf path as messages show it: the connector's value when it has no path.
fn element(path: &str) -> String {
    if path.is_empty() {
        "the value".to_string()
    } else {
        format!("`{path}`")
    }
}

fn role_word(role: ConnectorRole) -> &'static str {
    match role {
        ConnectorRole::Flow => "a flow variable",
        ConnectorRole::Stream => "a stream variable",
        _ => "a potential variable",
    }
}

fn type_word(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Real => "a Real",
        ScalarType::Integer => "an Integer (or enumeration)",
        ScalarType::Boolean => "a Boolean",
        ScalarType::String => "a String",
    }
}

fn variability_class(kind: VarKind) -> &'static str {
    match kind.variability {
        Variability::Constant => "a constant",
        Variability::Parameter => "a parameter",
        Variability::Continuous | Variability::Discrete => "a time-varying variable",
    }
}

fn causality_word(causality: Causality) -> &'static str {
    match causality {
        Causality::Input => "an input",
        Causality::Output => "an output",
        Causality::None => "not causal",
    }
}

/// Whether two connector leaf paths are equal. Connectors of one class borrow their names from
/// the same declaration, so equal pointers settle it without comparing bytes (which, on the
/// millions of connects of a large model, cost a noticeable share of flattening).
pub(crate) fn same_name(a: &str, b: &str) -> bool {
    (std::ptr::eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len()) || a == b
}
