//! The standard library's `SystemDynamics` package through the API: every example against
//! values computed independently (closed forms, hand timelines of the discrete blocks, values
//! of a separate high-accuracy integration), the rate decisions at the bounds with their event
//! times, the delay, smoothing and trend blocks against their defining equations, and the runs
//! that must stop because a reservoir would lose or invent material.

use eqm::{Method, ModelOptions, RunError, RunSettings, Session, SimulationResult};

use crate::{REPO, check, example};

mod delays;
mod examples;
mod rates;

/// The compiled model `name` of the library (`SystemDynamics.Examples.Abfluss`), or the only
/// model of `text` when `text` is given.
fn compile(name: &str, text: Option<&str>) -> eqm::Model {
    let files: Vec<(String, String)> = text
        .map(|t| vec![("m.eqm".to_string(), t.to_string())])
        .unwrap_or_default();
    let model = if text.is_some() { None } else { Some(name) };
    let mut session = Session::with_sources(&files, &[], Some(name));
    session
        .compile(model, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{name}: {}", session.render_diagnostics(false)))
}

/// A run of `model` to `stop` at tight tolerances, or with `method` at the fixed `step`.
fn run(model: &mut eqm::Model, stop: f64, fixed: Option<(Method, f64)>) -> SimulationResult {
    let settings = RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        method: fixed.as_ref().map(|(m, _)| m.clone()),
        step: fixed.as_ref().map(|(_, h)| *h),
        interval: fixed.as_ref().map(|(_, h)| *h),
        ..RunSettings::default()
    };
    model
        .simulate(&settings)
        .unwrap_or_else(|e| panic!("{}: {e}", model.name()))
}

/// The times of the warnings of a run whose notes name `component` (an assertion of level
/// warning in it that stopped holding), in order.
fn warnings_of(result: &SimulationResult, component: &str) -> Vec<f64> {
    result
        .summary
        .warnings
        .iter()
        .filter(|w| w.notes.iter().any(|n| n.contains(&format!("{component}."))))
        .map(|w| {
            let at = w.message.split("at t = ").nth(1).expect("a time");
            at.split(' ').next().unwrap().parse::<f64>().expect("a number")
        })
        .collect()
}

/// The failure of a run that must stop: its time and the message of its diagnostic, with the
/// rendered note (which names the component) appended.
fn failure(model: &mut eqm::Model, stop: f64) -> (f64, String) {
    let settings = RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..RunSettings::default()
    };
    match model.simulate(&settings) {
        Err(RunError::Failed {
            time,
            diagnostic,
            message,
            ..
        }) => {
            let d = diagnostic
                .map(|d| format!("{} {:?}", d.message, d.notes))
                .unwrap_or(message);
            (time, d)
        }
        Err(e) => panic!("{}: not a run failure: {e}", model.name()),
        Ok(_) => panic!("{}: the run must fail", model.name()),
    }
}
