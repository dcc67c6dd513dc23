//! Modules inlined: each `<module>` of the main model replaced by the variables of the model
//! it instantiates, named `module.variable` (so its results are reported as
//! `Module.Variable`, as the formats name them), with its connected inputs bound to the
//! outside expressions.
//!
//! Input: the file and its main model. Output: the main model without modules, or the
//! diagnostics of a module whose model the file lacks (E1004), of a model that contains
//! itself through its modules, and of modules nested beyond a documented depth or size
//! (E1009). A module inside a module is written out first, inside its own model, so its
//! variables are named `outer.inner.variable`. The names inside an instance are renamed
//! here once, so the writer knows nothing of modules.

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

/// How deep modules may be nested (a module of a model that a module instantiates, and so on).
const MAX_DEPTH: usize = 100;

/// The most variables a model may have once its modules are written out: a file whose
/// modules each hold several modules of the next model multiplies its size with each level.
const MAX_VARIABLES: usize = 1_000_000;

/// The main model with its modules replaced by their models' variables, modules inside
/// modules too.
pub(crate) fn inline(file: &SdFile, main: &SdModel) -> Result<SdModel, Vec<Diagnostic>> {
    let mut diagnostics = Vec::new();
    let mut within = vec![canonical(&main.name)];
    let variables = flatten(file, main, &mut within, &mut diagnostics);
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

/// The variables of `model` with each module replaced by the variables of its model, itself
/// written out first; `within` holds the models being written out, outermost first, so a
/// model that contains itself is found.
fn flatten(
    file: &SdFile,
    model: &SdModel,
    within: &mut Vec<String>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Variable> {
    let mut variables = Vec::new();
    for v in &model.variables {
        let Kind::Module { model: name, inputs } = &v.kind else {
            variables.push(v.clone());
            continue;
        };
        let Some(sub) = file
            .models
            .iter()
            .skip(1)
            .find(|m| canonical(&m.name) == canonical(name))
        else {
            diagnostics.push(Diagnostic::error(
                "E1004",
                format!("the module `{}` names no model of this file", v.name),
                v.origin,
                "this module",
            ));
            continue;
        };
        let key = canonical(&sub.name);
        let refusal = if within.contains(&key) {
            Some(format!(
                "the module `{}` instantiates the model `{}`, which contains it",
                v.name, sub.name
            ))
        } else if within.len() >= MAX_DEPTH {
            Some(format!("modules nested more than {MAX_DEPTH} deep"))
        } else {
            None
        };
        if let Some(message) = refusal {
            diagnostics.push(Diagnostic::error("E1009", message, v.origin, "this module"));
            continue;
        }
        within.push(key);
        let inner_variables = flatten(file, sub, within, diagnostics);
        within.pop();
        let prefix = canonical(&v.name);
        for inner in &inner_variables {
            variables.push(instance_variable(v, inner, &prefix, inputs));
        }
        if variables.len() > MAX_VARIABLES {
            diagnostics.push(Diagnostic::error(
                "E1009",
                format!("the model has more than {MAX_VARIABLES} variables once its modules are written out"),
                v.origin,
                "this module",
            ));
            return Vec::new();
        }
    }
    variables
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
