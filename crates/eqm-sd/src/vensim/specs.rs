//! Vensim's control variables evaluated into the simulation specs.
//!
//! Input: the main model's variables (among them `INITIAL TIME`, `FINAL TIME`, `TIME STEP`,
//! `SAVEPER`) and the file's integration settings line (`15:...` after the sketch). Output:
//! [`SimSpecs`]. A control variable may be an expression of constants (`SAVEPER = TIME
//! STEP`). `FINAL TIME` may also depend on `Time` through auxiliaries (Vensim reads it at
//! every step and ends the run at the first step whose time has reached it): its value at the
//! start is the run's planned stop, and the specs say that the model must end the run
//! itself. Any other control variable that depends on `Time`, and a `FINAL TIME` that reads a
//! stock or calls a function, is an E1002 diagnostic, as are integration settings that name
//! a method other than Euler (the reader does not guess at the meaning of their fields).

use super::sections::Layout;
use crate::ir::{
    BinaryOp, Builtin, Definition, Equation, Expr, ExprKind, Function, Method, SimSpecs, UnaryOp, Variable,
};
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
    // The value of a control variable and whether it changes during the run.
    let value = |key: &str,
                 required: bool,
                 diagnostics: &mut Vec<Diagnostic>,
                 start_time: Option<f64>|
     -> Option<Option<(f64, bool)>> {
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
        match constant(variable, &by_key, 0, None) {
            Ok(v) => Some(Some((v, false))),
            // Only `FINAL TIME` may change during the run: its value at the start is the plan.
            Err(why) => match start_time.map(|t| constant(variable, &by_key, 0, Some(t))) {
                Some(Ok(v)) => Some(Some((v, true))),
                _ => {
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
            },
        }
    };
    let start = value("initial time", true, diagnostics, None);
    let stop = value("final time", true, diagnostics, start.flatten().map(|(s, _)| s));
    let dt = value("time step", true, diagnostics, None);
    let save = value("saveper", false, diagnostics, None);
    let method = method(file, text, layout, diagnostics);
    let (Some(Some((start, _))), Some(Some((stop, dynamic_stop))), Some(Some((dt, _))), Some(save_step), Some(method)) =
        (start, stop, dt, save, method)
    else {
        return None;
    };
    let save_step = save_step.map(|(s, _)| s);
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
        dynamic_stop,
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

/// The value of a variable defined by an expression of constants, or, where `time` is
/// given, of constants and the time (its value at that time).
fn constant(
    variable: &Variable,
    by_key: &HashMap<String, &Variable>,
    chain: usize,
    time: Option<f64>,
) -> Result<f64, String> {
    if chain > MAX_CHAIN {
        return Err("refers to itself through other variables".to_string());
    }
    match &variable.definition {
        Definition::Uniform(Equation::Value(expr)) if variable.dimensions.is_empty() => {
            evaluate(expr, by_key, chain, time)
        }
        _ => Err("is not defined by an expression".to_string()),
    }
}

/// A truth value as Vensim's logical operators give it: 1 or 0.
fn truth(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

fn evaluate(expr: &Expr, by_key: &HashMap<String, &Variable>, chain: usize, time: Option<f64>) -> Result<f64, String> {
    let changing = || "depends on a value that changes during the run (or calls a function)".to_string();
    Ok(match &expr.kind {
        ExprKind::Number(v) => *v,
        ExprKind::Unary { op, operand } => {
            let v = evaluate(operand, by_key, chain, time)?;
            match op {
                UnaryOp::Minus => -v,
                UnaryOp::Plus => v,
                UnaryOp::Not => truth(v == 0.0),
            }
        }
        ExprKind::Binary { op, left, right } => {
            let (l, r) = (
                evaluate(left, by_key, chain, time)?,
                evaluate(right, by_key, chain, time)?,
            );
            match op {
                BinaryOp::Add => l + r,
                BinaryOp::Sub => l - r,
                BinaryOp::Mul => l * r,
                BinaryOp::Div => l / r,
                BinaryOp::Pow => l.powf(r),
                BinaryOp::Eq => truth(l == r),
                BinaryOp::NotEq => truth(l != r),
                BinaryOp::Less => truth(l < r),
                BinaryOp::LessEq => truth(l <= r),
                BinaryOp::Greater => truth(l > r),
                BinaryOp::GreaterEq => truth(l >= r),
                BinaryOp::And => truth(l != 0.0 && r != 0.0),
                BinaryOp::Or => truth(l != 0.0 || r != 0.0),
                BinaryOp::Mod => return Err("calls a function".to_string()),
            }
        }
        ExprKind::If {
            condition,
            then,
            otherwise,
        } => {
            if evaluate(condition, by_key, chain, time)? != 0.0 {
                evaluate(then, by_key, chain, time)?
            } else {
                evaluate(otherwise, by_key, chain, time)?
            }
        }
        ExprKind::Call {
            function: Function::Builtin(Builtin::Time),
            ..
        } => time.ok_or_else(changing)?,
        ExprKind::Variable { name, subscripts } if subscripts.is_empty() => match by_key.get(name) {
            Some(v) => constant(v, by_key, chain + 1, time)?,
            None => return Err(format!("refers to `{name}`, which is no constant")),
        },
        _ => return Err(changing()),
    })
}
