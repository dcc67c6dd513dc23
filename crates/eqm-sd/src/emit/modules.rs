//! Modules inlined: each `<module>` of the main model replaced by the variables of the model
//! it instantiates, named `module.variable` (so its results are reported as
//! `Module.Variable`, as the formats name them), with its connected inputs bound to the
//! outside expressions.
//!
//! Input: the file and its main model. Output: the main model without modules, or the
//! diagnostics of a module whose model the file lacks (E1004) or that holds modules itself
//! (E1002). The names inside an instance are renamed here once, so the writer knows nothing
//! of modules.

use crate::ir::{Definition, Equation, Expr, ExprKind, Function, Kind, SdFile, SdModel, Subscript, Variable};
use crate::names::canonical;
use eqm_diag::Diagnostic;

/// `expr` with every variable (and graphical function) renamed into the instance `prefix`.
fn rename(expr: &Expr, prefix: &str) -> Expr {
    let kind = match &expr.kind {
        ExprKind::Number(v) => ExprKind::Number(*v),
        ExprKind::Variable { name, subscripts } => ExprKind::Variable {
            name: format!("{prefix}.{name}"),
            subscripts: subscripts
                .iter()
                .map(|s| match s {
                    Subscript::Index(e) => Subscript::Index(rename(e, prefix)),
                    other => other.clone(),
                })
                .collect(),
        },
        ExprKind::Unary { op, operand } => ExprKind::Unary {
            op: *op,
            operand: Box::new(rename(operand, prefix)),
        },
        ExprKind::Binary { op, left, right } => ExprKind::Binary {
            op: *op,
            left: Box::new(rename(left, prefix)),
            right: Box::new(rename(right, prefix)),
        },
        ExprKind::If {
            condition,
            then,
            otherwise,
        } => ExprKind::If {
            condition: Box::new(rename(condition, prefix)),
            then: Box::new(rename(then, prefix)),
            otherwise: Box::new(rename(otherwise, prefix)),
        },
        ExprKind::Call { function, args } => ExprKind::Call {
            function: match function {
                Function::Lookup(name) => Function::Lookup(format!("{prefix}.{name}")),
                Function::SubscriptedLookup(name, subscripts) => {
                    Function::SubscriptedLookup(format!("{prefix}.{name}"), subscripts.clone())
                }
                other => other.clone(),
            },
            args: args.iter().map(|a| rename(a, prefix)).collect(),
        },
    };
    Expr { kind, span: expr.span }
}

fn rename_equation(equation: &Equation, prefix: &str) -> Equation {
    match equation {
        Equation::Value(e) => Equation::Value(rename(e, prefix)),
        Equation::Stock { rate, initial } => Equation::Stock {
            rate: rate.as_ref().map(|r| rename(r, prefix)),
            initial: rename(initial, prefix),
        },
        Equation::Graph { input, graph } => Equation::Graph {
            input: rename(input, prefix),
            graph: graph.clone(),
        },
        other => other.clone(),
    }
}

/// The main model with its modules replaced by their models' variables.
pub(crate) fn inline(file: &SdFile, main: &SdModel) -> Result<SdModel, Vec<Diagnostic>> {
    let mut variables = Vec::new();
    let mut diagnostics = Vec::new();
    for v in &main.variables {
        let Kind::Module { model, inputs } = &v.kind else {
            variables.push(v.clone());
            continue;
        };
        let Some(sub) = file
            .models
            .iter()
            .skip(1)
            .find(|m| canonical(&m.name) == canonical(model))
        else {
            diagnostics.push(Diagnostic::error(
                "E1004",
                format!("the module `{}` names no model of this file", v.name),
                v.origin,
                "this module",
            ));
            continue;
        };
        let prefix = canonical(&v.name);
        for inner in &sub.variables {
            if matches!(inner.kind, Kind::Module { .. }) {
                diagnostics.push(Diagnostic::error(
                    "E1002",
                    "EQM does not import modules inside modules",
                    inner.origin,
                    "not supported",
                ));
                continue;
            }
            variables.push(instance_variable(v, inner, &prefix, inputs));
        }
    }
    if diagnostics.is_empty() {
        Ok(SdModel {
            name: main.name.clone(),
            variables,
            doc: main.doc.clone(),
        })
    } else {
        Err(diagnostics)
    }
}

/// A variable of the instance `module`: renamed, its flows renamed, and bound to the outside
/// expression where it is a connected input.
fn instance_variable(module: &Variable, inner: &Variable, prefix: &str, inputs: &[(String, Expr)]) -> Variable {
    let mut v = inner.clone();
    v.name = format!("{}.{}", module.name, inner.name);
    v.position = None;
    if let Kind::Stock { inflows, outflows, .. } = &mut v.kind {
        for f in inflows.iter_mut().chain(outflows.iter_mut()) {
            *f = format!("{}.{f}", module.name);
        }
    }
    v.definition = match inputs.iter().find(|(name, _)| *name == canonical(&inner.name)) {
        // The outside expression names the outside model's variables as they are.
        Some((_, outside)) => Definition::Uniform(Equation::Value(outside.clone())),
        None => match &inner.definition {
            Definition::Uniform(e) => Definition::Uniform(rename_equation(e, prefix)),
            Definition::Elements(parts) => Definition::Elements(
                parts
                    .iter()
                    .map(|(s, e)| (s.clone(), rename_equation(e, prefix)))
                    .collect(),
            ),
        },
    };
    v
}
