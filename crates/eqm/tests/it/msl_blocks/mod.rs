//! The standard library's `Modelica.Blocks` (stdlib/Modelica_Blocks.eqm) through the API: every
//! source at chosen times against its defining formula, the math blocks against arithmetic, the
//! continuous blocks against closed-form step responses, the controllers in closed loops against
//! hand-derived responses and steady states, and the nonlinear blocks against their definitions;
//! the tables at and between their points (and the integral of a time table across its jumps
//! against the hand integral), the discrete blocks against their difference equations worked by
//! hand, the logical blocks against truth sequences counted at their events, and the routing
//! blocks against the sizes and order of their vectors.

use crate::{check, compile, run_tight};
use eqm::{ModelOptions, RunSettings, Session, SimulationResult};

mod continuous;
mod discrete_and_logical;
mod math_and_routing;
mod sources_and_tables;

/// A run of the only model of `text` to `stop` at tight tolerances, with rows every 0.01.
pub(crate) fn run(text: &str, stop: f64) -> SimulationResult {
    run_tight(compile(text), stop, Some(0.01))
}

/// A model named `M` with `declarations` and `equations` (connect statements).
fn model(declarations: &str, equations: &str) -> String {
    format!("model M\n{declarations}\nequation\n{equations}\nend M;\n")
}

const PI: f64 = std::f64::consts::PI;
