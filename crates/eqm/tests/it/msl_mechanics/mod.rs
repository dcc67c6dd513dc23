//! `Modelica.Mechanics` and `Modelica.Electrical` of the standard library under the Modelica
//! Standard Library's names: small models written as a user of that library writes them,
//! against closed forms. The tolerances of 5e-5 to 2e-4 cover the linear interpolation between
//! the output points; the checks with tolerances of 1e-12 to 1e-7 read output rows (or motion
//! that is linear between them), where only the integration error (tolerances 1e-10) enters.
//! Friction, stops and backlash switch by events: the tests check the closed form on each side
//! and that the switch is an event at the computed instant (two rows at one time).

use crate::msl_thermal::run;
use crate::{check, example};

mod components;
mod friction_and_stops;
mod support_flanges;

/// The rows of `name` strictly between `from` and `to`, with their times.
fn rows_between(result: &eqm::SimulationResult, name: &str, from: f64, to: f64) -> Vec<(f64, f64)> {
    let column = result.column(name).unwrap_or_else(|| panic!("no column {name}"));
    result
        .time()
        .iter()
        .zip(column)
        .filter(|&(&t, _)| t > from && t < to)
        .map(|(&t, v)| (t, v))
        .collect()
}

/// Whether the run has an event (two rows at one time) within `tolerance` of `at`.
fn has_event_at(result: &eqm::SimulationResult, at: f64, tolerance: f64) -> bool {
    result
        .time()
        .windows(2)
        .any(|w| w[0] == w[1] && (w[0] - at).abs() <= tolerance)
}
