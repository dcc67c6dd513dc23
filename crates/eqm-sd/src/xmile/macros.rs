//! XMILE's macros (`<macro name><parm>a</parm>...<eqn>...</eqn></macro>`): a function of its
//! parameters that equations call by name; and modules (`<module>`), the instances of the
//! file's other models with the connections of their inputs and outputs.
//!
//! Input: the `<macro>` elements of a file. Output: [`Macro`]s with their parameters and the
//! expression of their value, read after every macro's name and number of parameters is
//! known (a macro may call another), with the variables of its body where it has them (a
//! stock inside a macro keeps one copy per call). A macro with options (its own simulation
//! specs, a view) is an E1002 diagnostic.

use super::parse::{Names, parse};
use super::variables::{Behavior, Reader, text_of};
use super::{child, node_span};
use crate::ir::{Definition, Equation, Expr, ExprKind, Kind, Macro, Variable};
use crate::names::canonical;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use roxmltree::Node;
use std::collections::HashMap;

/// The parameters of a `<macro>`, as written.
fn parameters(node: Node) -> Vec<String> {
    node.children()
        .filter(|n| n.is_element() && n.tag_name().name() == "parm")
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

/// Each macro's canonical name with its number of parameters, for the equations' names.
pub(crate) fn signatures(macros: &[Node]) -> HashMap<String, usize> {
    macros
        .iter()
        .filter_map(|m| Some((canonical(m.attribute("name")?), parameters(*m).len())))
        .collect()
}

impl Reader<'_> {
    /// The macros of the file; `signatures` are every macro's (a body may call another).
    pub(crate) fn macros(&mut self, macros: &[Node], signatures: &HashMap<String, usize>) -> Vec<Macro> {
        macros.iter().filter_map(|m| self.one_macro(*m, signatures)).collect()
    }

    fn one_macro(&mut self, node: Node, signatures: &HashMap<String, usize>) -> Option<Macro> {
        let Some(name) = node.attribute("name") else {
            self.push(Diagnostic::error(
                "E1007",
                "a `<macro>` without a name",
                node_span(self.file(), node),
                "no name attribute",
            ));
            return None;
        };
        if let Some(extra) = node
            .children()
            .find(|n| n.is_element() && !matches!(n.tag_name().name(), "parm" | "eqn" | "doc" | "variables"))
        {
            let tag = extra.tag_name().name();
            self.unsupported(
                extra,
                &format!("a macro with `<{tag}>` (only a macro of its parameters' expression)"),
            );
            return None;
        }
        let params = parameters(node);
        // The macro's own variables (stocks keep one copy per call), read as a model's whose
        // equations may name the parameters.
        let body = match child(node, "variables") {
            Some(_) => self.model(node, &[], &Behavior::default(), &params).variables,
            None => Vec::new(),
        };
        let mut names = Names::default();
        for p in &params {
            names.variables.insert(canonical(p), Vec::new());
        }
        for v in &body {
            names.variables.insert(canonical(&v.name), v.dimensions.clone());
        }
        names.macros.clone_from(signatures);
        let Some(eqn) = child(node, "eqn") else {
            self.push(Diagnostic::error(
                "E1007",
                format!("the macro `{name}` has no equation"),
                node_span(self.file(), node),
                "no `<eqn>`",
            ));
            return None;
        };
        let (text, place) = text_of(self.file(), eqn)?;
        let value = match parse(text, place, &names) {
            Ok(e) => e,
            Err(d) => {
                self.push(d);
                return None;
            }
        };
        Some(Macro {
            name: name.to_string(),
            parameters: params,
            outputs: Vec::new(),
            variables: body,
            value: Some(value),
            origin: node_span(self.file(), node),
        })
    }
}

/// The key of a qualified name of a `<connect>` (`.Root_Var`, `Module.Output`): each part's
/// canonical key, joined by `.`, without the leading `.` that names the root.
fn connection_key(name: &str) -> String {
    name.trim()
        .trim_start_matches('.')
        .split('.')
        .map(canonical)
        .collect::<Vec<_>>()
        .join(".")
}

impl Reader<'_> {
    /// A `<module>`: the instance of the file's model of the same name, with the inputs its
    /// `<connect>`s bind (`to` an input inside, `from` a variable outside) and the outputs
    /// they carry out (`to` a variable of this model, written `.name`).
    pub(crate) fn module(&mut self, node: Node, name: String, origin: Span) -> Option<Variable> {
        if node.attribute("resource").is_some() {
            self.unsupported(node, "a module of a model in another file (`resource`)");
            return None;
        }
        let mut inputs = Vec::new();
        for connect in node
            .children()
            .filter(|n| n.is_element() && n.tag_name().name() == "connect")
        {
            let (Some(to), Some(from)) = (connect.attribute("to"), connect.attribute("from")) else {
                self.push(Diagnostic::error(
                    "E1003",
                    "a `<connect>` needs `to` and `from`",
                    node_span(self.file(), connect),
                    "this connection",
                ));
                return None;
            };
            let span = node_span(self.file(), connect);
            let from_expr = Expr {
                kind: ExprKind::Variable {
                    name: connection_key(from),
                    subscripts: Vec::new(),
                },
                span,
            };
            if to.trim().starts_with('.') {
                self.links.push((connection_key(to), from_expr));
            } else {
                inputs.push((connection_key(to), from_expr));
            }
        }
        Some(Variable {
            kind: Kind::Module {
                model: name.clone(),
                inputs,
            },
            name,
            dimensions: Vec::new(),
            definition: Definition::Uniform(Equation::Undefined),
            units: None,
            doc: None,
            origin,
            position: None,
            range: None,
        })
    }
}
