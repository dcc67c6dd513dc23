//! The simulation settings a model states in its annotations.
//!
//! Input: a class definition. Output: the [`flat::Experiment`] read from
//! `annotation(experiment(StartTime = ..., StopTime = ..., Tolerance = ..., Interval = ...))` and
//! `annotation(stabilize(K = ...))`, from literal numbers only, with where each is written; and
//! diagnostics (`E0314`) for values no run can use (an interval or tolerance that is not
//! positive, a stop time before the start time), so that `check` rejects what `run` would.
//! Anything else in the annotation is ignored.

use eqm_diag::Diagnostic;
use eqm_ir::flat;
use eqm_syntax::ast;

/// Reads `annotation(experiment(StartTime = ..., StopTime = ..., Tolerance = ..., Interval = ...))`
/// and reports its unusable values into `diagnostics`.
pub(crate) fn experiment(def: &ast::ClassDef, diagnostics: &mut Vec<Diagnostic>) -> flat::Experiment {
    let exp = read(def);
    let spans = exp.spans;
    for (value, span, what) in [
        (exp.interval, spans.interval, "the output interval `Interval`"),
        (exp.tolerance, spans.tolerance, "the tolerance `Tolerance`"),
    ] {
        if let (Some(v), Some(span)) = (value, span)
            && !(v > 0.0 && v.is_finite())
        {
            diagnostics.push(Diagnostic::error(
                "E0314",
                format!("{what} must be a positive number, not {v}"),
                span,
                "not positive",
            ));
        }
    }
    if let (Some(stop), Some(span)) = (exp.stop_time, spans.stop_time)
        && stop < exp.start_time.unwrap_or(0.0)
    {
        diagnostics.push(Diagnostic::error(
            "E0314",
            format!(
                "the stop time {stop} is before the start time {}",
                exp.start_time.unwrap_or(0.0)
            ),
            span,
            "before the start",
        ));
    }
    exp
}

fn read(def: &ast::ClassDef) -> flat::Experiment {
    let mut exp = flat::Experiment::default();
    let ast::ClassBody::Long {
        annotation: Some(annotation),
        ..
    } = &def.body
    else {
        return exp;
    };
    for arg in &annotation.modification.arguments {
        let name = arg.name.parts[0].name.as_str();
        if name == "stabilize" {
            // `stabilize(K = k)`: the gain of the constraint projection.
            let cm = arg.modification.as_ref().and_then(|m| m.class_modification.as_ref());
            for setting in cm.iter().flat_map(|cm| &cm.arguments) {
                if setting.name.parts[0].name == "K" {
                    exp.stabilize = setting
                        .modification
                        .as_ref()
                        .and_then(|m| m.binding.as_ref())
                        .and_then(literal_number)
                        .filter(|k| *k > 0.0 && k.is_finite());
                }
            }
            continue;
        }
        if name != "experiment" {
            continue;
        }
        let Some(cm) = arg.modification.as_ref().and_then(|m| m.class_modification.as_ref()) else {
            continue;
        };
        for setting in &cm.arguments {
            let binding = setting.modification.as_ref().and_then(|m| m.binding.as_ref());
            let value = binding.and_then(literal_number);
            let span = value.and(binding.map(|b| b.span));
            match setting.name.parts[0].name.as_str() {
                "StartTime" => (exp.start_time, exp.spans.start_time) = (value, span),
                "StopTime" => (exp.stop_time, exp.spans.stop_time) = (value, span),
                "Tolerance" => (exp.tolerance, exp.spans.tolerance) = (value, span),
                "Interval" => (exp.interval, exp.spans.interval) = (value, span),
                _ => {}
            }
        }
    }
    exp
}

fn literal_number(e: &ast::Expr) -> Option<f64> {
    match &e.kind {
        ast::ExprKind::Integer(v) => Some(*v as f64),
        ast::ExprKind::Real(v) => Some(*v),
        ast::ExprKind::Unary {
            op: ast::UnaryOp::Neg,
            operand,
        } => literal_number(operand).map(|v| -v),
        _ => None,
    }
}
