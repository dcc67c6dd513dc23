//! Vensim's control variables evaluated into the simulation specs.
//!
//! Input: the main model's variables (among them `INITIAL TIME`, `FINAL TIME`, `TIME STEP`,
//! `SAVEPER`) and the file's integration settings line (`15:...` after the sketch). Output:
//! [`SimSpecs`]. A control variable may be an expression of constants (`SAVEPER = TIME
//! STEP`); one that depends on `Time` or on anything else that changes during the run is an
//! E1002 diagnostic, as are integration settings that name a method other than Euler (the
//! reader does not guess at the meaning of their fields).

use super::sections::Layout;
use crate::ir::{BinaryOp, Definition, Equation, Expr, ExprKind, Method, SimSpecs, UnaryOp, Variable};
use crate::names::canonical;
use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, Span};
use std::collections::HashMap;

/// How many constants deep a control variable's definition may refer (a guard against
/// definitions that refer to each other in a circle).
const MAX_CHAIN: usize = 32;

/// The specs of a file, or `None` with a diagnostic where they cannot be known.
pub fn specs(
    file: FileId,
    text: &str,
    layout: &Layout,
    variables: &[Variable],
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<SimSpecs> {
    let by_key: HashMap<String, &Variable> = variables.iter().map(|v| (canonical(&v.name), v)).collect();
    let value = |key: &str, required: bool, diagnostics: &mut Vec<Diagnostic>| -> Option<Option<f64>> {
        let Some(variable) = by_key.get(key) else {
            if required {
                let span = Span::new(file, 0, text.len().min(1));
                diagnostics.push(Diagnostic::error(
                    "E1002",
                    format!("the model has no `{}`, which a Vensim model needs", key.to_uppercase()),
                    span,
                    "control variable missing",
                ));
                return None;
            }
            return Some(None);
        };
        match constant(variable, &by_key, 0) {
            Ok(v) => Some(Some(v)),
            Err(why) => {
                diagnostics.push(Diagnostic::error(
                    "E1002",
                    format!(
                        "the control variable `{}` {why}, which is not supported: it must be a constant",
                        variable.name
                    ),
                    variable.origin,
                    "not a constant",
                ));
                None
            }
        }
    };
    let start = value("initial time", true, diagnostics);
    let stop = value("final time", true, diagnostics);
    let dt = value("time step", true, diagnostics);
    let save = value("saveper", false, diagnostics);
    let method = method(file, text, layout, diagnostics);
    let (Some(Some(start)), Some(Some(stop)), Some(Some(dt)), Some(save_step), Some(method)) =
        (start, stop, dt, save, method)
    else {
        return None;
    };
    let runnable = dt > 0.0 && dt.is_finite() && stop >= start && save_step.is_none_or(|s| s > 0.0);
    if !runnable {
        let origin = by_key.get("time step").map_or(Span::new(file, 0, 0), |v| v.origin);
        diagnostics.push(Diagnostic::error(
            "E1002",
            format!("the control variables give start {start}, stop {stop}, time step {dt}: a run needs a positive time step (and save period) and a stop not before the start"),
            origin,
            "cannot be run",
        ));
        return None;
    }
    let time_units = by_key
        .get("time step")
        .or_else(|| by_key.get("final time"))
        .and_then(|v| v.units.clone());
    Some(SimSpecs {
        start,
        stop,
        dt,
        save_step,
        method,
        time_units,
    })
}

/// The integration method: Euler unless the settings line holds anything but zeros.
fn method(file: FileId, text: &str, layout: &Layout, diagnostics: &mut Vec<Diagnostic>) -> Option<Method> {
    let Some((a, b)) = layout.integration else {
        return Some(Method::Euler);
    };
    let fields = text[a..b].trim_start_matches("15:");
    if fields
        .split(',')
        .all(|f| f.trim().parse::<f64>().is_ok_and(|v| v == 0.0))
    {
        return Some(Method::Euler);
    }
    diagnostics.push(Diagnostic::error(
        "E1002",
        "integration settings other than Vensim's default (Euler) are not supported",
        Span::new(file, a, b),
        "not supported",
    ));
    None
}

/// The value of a variable defined by an expression of constants.
fn constant(variable: &Variable, by_key: &HashMap<String, &Variable>, chain: usize) -> Result<f64, String> {
    if chain > MAX_CHAIN {
        return Err("refers to itself through other variables".to_string());
    }
    match &variable.definition {
        Definition::Uniform(Equation::Value(expr)) if variable.dimensions.is_empty() => evaluate(expr, by_key, chain),
        _ => Err("is not defined by an expression".to_string()),
    }
}

fn evaluate(expr: &Expr, by_key: &HashMap<String, &Variable>, chain: usize) -> Result<f64, String> {
    Ok(match &expr.kind {
        ExprKind::Number(v) => *v,
        ExprKind::Unary { op, operand } => {
            let v = evaluate(operand, by_key, chain)?;
            match op {
                UnaryOp::Minus => -v,
                UnaryOp::Plus => v,
                UnaryOp::Not => return Err("uses a logical operator".to_string()),
            }
        }
        ExprKind::Binary { op, left, right } => {
            let (l, r) = (evaluate(left, by_key, chain)?, evaluate(right, by_key, chain)?);
            match op {
                BinaryOp::Add => l + r,
                BinaryOp::Sub => l - r,
                BinaryOp::Mul => l * r,
                BinaryOp::Div => l / r,
                BinaryOp::Pow => l.powf(r),
                _ => return Err("uses a comparison or logical operator".to_string()),
            }
        }
        ExprKind::Variable { name, subscripts } if subscripts.is_empty() => match by_key.get(name) {
            Some(v) => constant(v, by_key, chain + 1)?,
            None => return Err(format!("refers to `{name}`, which is no constant")),
        },
        _ => return Err("depends on a value that changes during the run (or calls a function)".to_string()),
    })
}
