//! Macros with variables of their own, written out at each call: Vensim's `:MACRO:`, whose
//! value is its body's variable of the macro's name, and XMILE's `<macro>` with
//! `<variables>`, whose value is its `<eqn>` over them. Every variable of the body becomes a
//! helper variable of its own for that call (so a macro with stocks keeps one copy of them
//! per call), its parameters helpers bound to the call's arguments.
//!
//! Input: a call of such a macro and its arguments. Output: the helpers' declarations,
//! equations and initial equations, and the call's value. It does not write macros that are
//! an expression of their parameters alone (those are functions, written by the model
//! writer), the additional outputs of a macro (E1002), arrays or non-negative stocks in a
//! macro's body (E1002), or a macro that calls itself (E1002).

use super::arrays::{Arrays, Element};
use super::expr::{Scope, Writer};
use super::start::StartValues;
use crate::ir::{Definition, Equation, Expr, Kind, Macro};
use crate::names::canonical;
use eqm_diag::Diagnostic;
use std::collections::HashMap;

fn unsupported(expr: &Expr, what: &str) -> Diagnostic {
    Diagnostic::error(
        "E1002",
        format!("EQM does not import {what}"),
        expr.span,
        "not supported",
    )
}

impl Writer<'_, '_> {
    /// The value of the call `expr` of the macro `m` with `args`, its body written out.
    pub(crate) fn inline_macro(&mut self, expr: &Expr, m: &Macro, args: &[Expr]) -> Result<String, Diagnostic> {
        let key = canonical(&m.name);
        if args.len() != m.parameters.len() {
            return Err(unsupported(
                expr,
                &format!(
                    "a call of the macro `{}` with other than its {} parameters",
                    m.name,
                    m.parameters.len()
                ),
            ));
        }
        if self.helpers.inlining.contains(&key) {
            return Err(unsupported(expr, &format!("the macro `{}` calling itself", m.name)));
        }
        let mut ids: HashMap<String, String> = HashMap::new();
        for (p, a) in m.parameters.iter().zip(args) {
            let value = self.real(a)?;
            let id = self.helpers.fresh(&format!("{} {}", m.name, p));
            self.helpers.declarations.push(format!(
                "Real {id} \"The parameter {} of a call of the macro {}\";",
                p.replace('"', "'"),
                m.name.replace('"', "'")
            ));
            self.helpers.equations.push(format!("{id} = {value};"));
            ids.insert(canonical(p), id);
        }
        for v in &m.variables {
            let id = self.helpers.fresh(&format!("{} {}", m.name, v.name));
            ids.insert(canonical(&v.name), id);
        }
        let named_value = ids.get(&key).cloned();
        if m.value.is_none() && named_value.is_none() {
            return Err(Diagnostic::error(
                "E1007",
                format!("the macro `{}` has no variable of its name, its value", m.name),
                m.origin,
                "this macro",
            ));
        }
        let tables = HashMap::new();
        let arrays = Arrays::default();
        let start_values = StartValues::default();
        let scope = Scope {
            ids: &ids,
            tables: &tables,
            arrays: &arrays,
            start_values: &start_values,
            in_function: false,
            ..*self.scope
        };
        let element = Element::new();
        self.helpers.inlining.push(key);
        let written = self
            .write_body(m, &ids, &scope, &element)
            .and_then(|()| match &m.value {
                // XMILE's value: the macro's expression over its parameters and variables.
                Some(value) => Writer {
                    scope: &scope,
                    helpers: &mut *self.helpers,
                    element: &element,
                }
                .real(value),
                None => Ok(named_value.unwrap_or_default()),
            });
        self.helpers.inlining.pop();
        written
    }

    /// The body's variables of one call, each under its identifier in `ids`.
    fn write_body(
        &mut self,
        m: &Macro,
        ids: &HashMap<String, String>,
        scope: &Scope,
        element: &Element,
    ) -> Result<(), Diagnostic> {
        let mut writer = Writer {
            scope,
            helpers: &mut *self.helpers,
            element,
        };
        for v in &m.variables {
            let id = &ids[&canonical(&v.name)];
            let what = format!("{} of a call of the macro {}", v.name, m.name).replace('"', "'");
            if !v.dimensions.is_empty() {
                return Err(Diagnostic::error(
                    "E1002",
                    "EQM does not import arrays in a macro",
                    v.origin,
                    "not supported",
                ));
            }
            match (&v.kind, &v.definition) {
                (Kind::Aux | Kind::Flow { .. }, Definition::Uniform(Equation::Value(e))) => {
                    let mut text = writer.real(e)?;
                    if matches!(v.kind, Kind::Flow { non_negative: true }) {
                        text = format!("noEvent(max({text}, 0))");
                    }
                    writer.helpers.declarations.push(format!("Real {id} \"{what}\";"));
                    writer.helpers.equations.push(format!("{id} = {text};"));
                }
                (
                    Kind::Stock {
                        special: None,
                        non_negative: false,
                        inflows,
                        outflows,
                    },
                    Definition::Uniform(Equation::Stock { rate, initial }),
                ) => {
                    let rate = match rate {
                        Some(rate) => writer.real(rate)?,
                        // An XMILE stock: its inflows minus its outflows, the body's flows.
                        None => {
                            let net = super::net_rate(inflows, outflows, |f| {
                                ids.get(&canonical(f)).cloned().ok_or_else(|| {
                                    Diagnostic::error(
                                        "E1004",
                                        format!("`{f}` is no flow of this macro"),
                                        v.origin,
                                        "this stock",
                                    )
                                })
                            })?;
                            if net.is_empty() { "0".to_string() } else { net }
                        }
                    };
                    let initial = writer.real(initial)?;
                    writer.helpers.declarations.push(format!("Real {id} \"{what}\";"));
                    writer.helpers.initial_equations.push(format!("{id} = {initial};"));
                    writer.helpers.equations.push(format!("der({id}) = {rate};"));
                }
                _ => {
                    return Err(Diagnostic::error(
                        "E1002",
                        "EQM does not import this kind of definition in a macro",
                        v.origin,
                        "not supported",
                    ));
                }
            }
        }
        Ok(())
    }
}
