//! The simulation settings a model states in its annotations.
//!
//! Input: a class definition. Output: the [`flat::Experiment`] read from
//! `annotation(experiment(StartTime = ..., StopTime = ..., Tolerance = ..., Interval = ...))` and
//! `annotation(stabilize(K = ...))`, from literal numbers only. Anything else in the annotation is
//! ignored: annotations never make a model invalid.

use eqm_ir::flat;
use eqm_syntax::ast;

/// Reads `annotation(experiment(StartTime = ..., StopTime = ..., Tolerance = ..., Interval = ...))`.
pub(crate) fn experiment(def: &ast::ClassDef) -> flat::Experiment {
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
            let value = setting
                .modification
                .as_ref()
                .and_then(|m| m.binding.as_ref())
                .and_then(literal_number);
            match setting.name.parts[0].name.as_str() {
                "StartTime" => exp.start_time = value,
                "StopTime" => exp.stop_time = value,
                "Tolerance" => exp.tolerance = value,
                "Interval" => exp.interval = value,
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
