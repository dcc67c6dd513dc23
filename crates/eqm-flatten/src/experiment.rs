//! The simulation settings a model states in its annotations.
//!
//! Input: a class definition. Output: the [`flat::Experiment`] read from
//! `annotation(experiment(StartTime = ..., StopTime = ..., Tolerance = ..., Interval = ...))`,
//! `annotation(stabilize(K = ...))` and EQM's own `annotation(__eqm(solver = "...", step = ...))`
//! (the method and fixed step a run uses unless the command line says otherwise), from literal
//! values only, with where each is written; and diagnostics (`E0314`) for values no run can use
//! (an interval, tolerance or step that is not positive, a stop time before the start time, a
//! solver that is not a string, a setting `__eqm` does not have), so that `check` rejects what
//! `run` would. Whether the solver names a method is checked by the library API, which knows
//! the methods. Anything else in the annotation is ignored.

use eqm_diag::Diagnostic;
use eqm_ir::flat;
use eqm_syntax::ast;

/// Reads `annotation(experiment(StartTime = ..., StopTime = ..., Tolerance = ..., Interval = ...))`,
/// `stabilize` and `__eqm`, and reports their unusable values into `diagnostics`.
pub(crate) fn experiment(def: &ast::ClassDef, diagnostics: &mut Vec<Diagnostic>) -> flat::Experiment {
    let exp = read(def, diagnostics);
    let spans = exp.spans;
    for (value, span, what) in [
        (exp.interval, spans.interval, "the output interval `Interval`"),
        (exp.tolerance, spans.tolerance, "the tolerance `Tolerance`"),
        (exp.step, spans.step, "the step `step` of `__eqm`"),
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

fn read(def: &ast::ClassDef, diagnostics: &mut Vec<Diagnostic>) -> flat::Experiment {
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
        if name == VENDOR {
            read_vendor(arg, &mut exp, diagnostics);
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

/// The name of EQM's own annotation: a vendor annotation in Modelica's sense (two underscores
/// and the tool's name), which other tools ignore.
const VENDOR: &str = "__eqm";

/// The settings `__eqm(...)` takes.
const VENDOR_SETTINGS: [&str; 2] = ["solver", "step"];

/// Reads `__eqm(solver = "name", step = h)` into `exp`. Unlike the standard annotations, whose
/// other contents belong to other tools, everything inside `__eqm` is EQM's: a setting it does
/// not have or a value of the wrong kind is an error rather than silently ignored, since the
/// model would otherwise run in a way its author did not ask for.
fn read_vendor(arg: &ast::ModArgument, exp: &mut flat::Experiment, diagnostics: &mut Vec<Diagnostic>) {
    let Some(cm) = arg.modification.as_ref().and_then(|m| m.class_modification.as_ref()) else {
        diagnostics.push(
            Diagnostic::error(
                "E0314",
                format!("`{VENDOR}` takes settings in parentheses"),
                arg.span,
                "no settings",
            )
            .with_help(format!("write `{VENDOR}(solver = \"euler\", step = 0.125)`")),
        );
        return;
    };
    for setting in &cm.arguments {
        let name = setting.name.parts[0].name.as_str();
        let binding = setting.modification.as_ref().and_then(|m| m.binding.as_ref());
        let Some(binding) = binding else {
            diagnostics.push(Diagnostic::error(
                "E0314",
                format!("the setting `{name}` of `{VENDOR}` needs a value (`{name} = ...`)"),
                setting.span,
                "no value",
            ));
            continue;
        };
        match name {
            "solver" => match &binding.kind {
                ast::ExprKind::String(text) => {
                    (exp.solver, exp.spans.solver) = (Some(text.clone()), Some(binding.span));
                }
                _ => diagnostics.push(
                    Diagnostic::error(
                        "E0314",
                        format!("the solver of `{VENDOR}` must be a string literal"),
                        binding.span,
                        "not a string",
                    )
                    .with_help("name a method as `--solver` does, for example `solver = \"euler\"`"),
                ),
            },
            "step" => match literal_number(binding) {
                Some(h) => (exp.step, exp.spans.step) = (Some(h), Some(binding.span)),
                None => diagnostics.push(Diagnostic::error(
                    "E0314",
                    format!("the step of `{VENDOR}` must be a literal number"),
                    binding.span,
                    "not a number",
                )),
            },
            _ => {
                let mut d = Diagnostic::error(
                    "E0314",
                    format!("`{VENDOR}` has no setting `{name}`; it takes `solver` and `step`"),
                    setting.name.span,
                    "unknown setting",
                );
                if let Some(similar) = eqm_diag::did_you_mean(name, VENDOR_SETTINGS) {
                    d = d.with_help(format!("did you mean `{similar}`?"));
                }
                diagnostics.push(d);
            }
        }
    }
}

pub(crate) fn literal_number(e: &ast::Expr) -> Option<f64> {
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
