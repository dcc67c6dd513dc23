//! Integration tests of the library API (`eqm`): what a front end does with it, checked
//! against closed-form solutions.
//!
//! One test binary for the crate; each module is one family of tests.

use eqm_testkit::svg;

use eqm_testkit::chain;

mod abs_without_events;
mod algorithm_aliases;
mod algorithm_checks;
mod analyze;
mod branch_assertions;
mod compare;
mod delay;
mod dense_loops;
mod diagram;
mod discrete;
mod discrete_init;
mod embedded_equivalence;
mod embedding_relations;
mod event_effects;
mod expandable;
mod explicit_domain;
mod external;
mod external_effects;
mod external_objects;
mod external_outputs;
mod external_sources;
mod fixed_step;
mod fmi_description;
mod fmi_structure;
mod friction;
mod function_derivatives;
mod function_loops;
mod function_sizes;
mod homotopy;
mod hybrid;

mod hydraulics;
mod if_chains;
mod integer_builtins;
mod json_output;
mod kept_trees;
mod language;
mod library;
mod library_dirs;
mod mixed_discrete;
mod msl_blocks;
mod msl_electrical;
mod msl_mechanics;
mod msl_thermal;
mod nonstiff;
mod operator_records;
mod package_check;
mod parameter_branches;
mod points;
mod proven_range_lengths;
mod result_files;
mod run_state;
mod run_time_ranges;
mod run_time_slice_values;
mod run_time_slices;
mod saturation_loops;
mod sd_import;
mod sd_import_vensim;
mod sd_suite;
mod session;
mod shared_calls;
mod simulate;
mod spatial;
mod start_values;
mod stepped;
mod stepped_events;
mod streams;
mod structure;
mod subscripts;
mod sweep;
mod system_dynamics;
mod utilities;
mod when_derivative;
mod when_order;
mod zeno;
mod zero_coefficients;
mod zero_flow;

use eqm::{Model, ModelOptions, Session, SimulationResult};

pub use eqm_testkit::REPO;

/// The text of the example `file` (`examples/<file>`).
pub fn example(file: &str) -> String {
    std::fs::read_to_string(format!("{REPO}/examples/{file}")).unwrap_or_else(|e| panic!("examples/{file}: {e}"))
}

/// The compiled model of `text` (the stdlib packages it names included); panics with the
/// rendered diagnostics when it does not compile.
pub fn compile(text: &str) -> Model {
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)))
}

/// The run of `text` with `settings` by native code and by the interpreter, checked to agree
/// bit for bit on the times and every column: the native run.
pub fn run_both_back_ends(text: &str, settings: eqm::RunSettings) -> eqm::SimulationResult {
    let native = compile(text).simulate(&settings).unwrap_or_else(|e| panic!("{e}"));
    let interpreted = compile(text)
        .simulate(&eqm::RunSettings {
            interpreter: true,
            ..settings
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(native.time(), interpreted.time(), "the back ends stop at other times");
    for column in native.columns() {
        let name = &column.name;
        assert_eq!(
            native.column(name),
            interpreted.column(name),
            "{name}: the back ends differ"
        );
    }
    native
}

/// A run of `model` to `stop` at rtol = atol = 1e-10 (rows every `interval`, or the default
/// grid), the settings the library's closed-form tests use; panics with the model's name and the
/// failure when the run fails.
pub fn run_tight(mut model: Model, stop: f64, interval: Option<f64>) -> SimulationResult {
    let settings = eqm::RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        interval,
        ..eqm::RunSettings::default()
    };
    model
        .simulate(&settings)
        .unwrap_or_else(|e| panic!("{}: {e}", model.name()))
}

/// Checks that `name` is `expected` at `t` (after the event when one happens at `t`) within
/// `tolerance`, relative to max(1, |expected|).
pub fn check(result: &SimulationResult, name: &str, t: f64, expected: f64, tolerance: f64) {
    check_against(result, name, t, expected, tolerance, expected.abs().max(1.0));
}

/// Checks that `name` is `expected` at `t` within `tolerance` relative to |expected| itself, also
/// for values much smaller than 1 (flows in cubic metres per second, the small currents of a
/// diode or a switch), where `check`'s floor of 1 would hide any error.
pub fn check_relative(result: &SimulationResult, name: &str, t: f64, expected: f64, tolerance: f64) {
    check_against(result, name, t, expected, tolerance, expected.abs());
}

/// Checks that the error of `name` at `t` against `expected`, divided by `scale`, is within
/// `tolerance`.
fn check_against(result: &SimulationResult, name: &str, t: f64, expected: f64, tolerance: f64, scale: f64) {
    let value = result
        .value_at(name, t)
        .unwrap_or_else(|| panic!("no value of {name} at {t}"));
    let error = (value - expected).abs() / scale;
    assert!(
        error <= tolerance,
        "{name}({t}) = {value}, expected {expected} (relative error {error:e} > {tolerance:e})"
    );
}

/// Exponential decay with a parameter, a unit and descriptions: x(t) = x0 exp(-k t).
pub const DECAY: &str = "model Decay \"first-order decay\"
  parameter Real k(unit = \"1/s\") = 2 \"rate\";
  parameter Real twice_k = 2*k \"computed from k\";
  Real x(start = 1, fixed = true, unit = \"m\") \"amount\";
  Real y \"twice the amount\";
equation
  der(x) = -k*x;
  y = 2*x;
end Decay;
";
