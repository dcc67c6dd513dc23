//! Rules of events and initialization that the Modelica Standard Library's examples rely on,
//! each against values computed by hand: a relation of `time` against a discrete-time value is
//! a time event, scheduled at the exact instant however short the interval before it; and the
//! fixed start value of a state that index reduction made a dummy state is dropped when the
//! other equations determine it, and checked after the initialization.

use crate::{check, compile, run_both_back_ends};
use eqm::{RunError, RunSettings, Session};

#[test]
fn a_relation_of_time_against_a_discrete_value_is_a_time_event_however_short_the_ramp() {
    // A ramp of 1e-13 s from each start `T0` of a period (as a pulse source writes it): v rises
    // from 0 to 1 over [T0, T0 + 1e-13] and holds 1 until the next period at T0 + 1e-12. A
    // crossing located within a band of hysteresis wider than the ramp would let the ramp run
    // on past 1.
    let text = r#"
model Ramp
  parameter Real Tr = 1e-13 "Rise time";
  discrete Real T0(start = 0, fixed = true) "Start of the current period";
  Real v;
equation
  when sample(2e-13, 1e-12) then
    T0 = time;
  end when;
  v = if time < T0 + Tr then (time - T0)/Tr else 1;
end Ramp;
"#;
    let settings = RunSettings {
        stop: Some(1.5e-12),
        interval: Some(2.5e-14),
        ..RunSettings::default()
    };
    let result = run_both_back_ends(text, settings);
    for (t, v) in [
        (5e-14, 0.5),
        (1.5e-13, 1.0),
        (2.5e-13, 0.5),
        (3.5e-13, 1.0),
        (1.1e-12, 1.0),
        (1.25e-12, 0.5),
        (1.4e-12, 1.0),
    ] {
        check(&result, "v", t, v, 1e-9);
    }
}

/// Two states tied by a constraint (`y = 2x`), both with fixed start values: index reduction
/// keeps one of them a state, the other a dummy state. Hand solution with consistent starts:
/// f = 0, x = y0/2 exp(-t), y = y0 exp(-t).
fn tied(y0: f64) -> String {
    format!(
        "model Tied
  Real x(start = 1, fixed = true);
  Real y(start = {y0}, fixed = true);
  Real f;
equation
  der(x) = -x + f;
  der(y) = -y - 2*f;
  y = 2*x;
end Tied;
"
    )
}

#[test]
fn the_fixed_start_value_of_a_dummy_state_is_dropped_and_checked() {
    let text = tied(2.0);
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.clone())], &[], None);
    let mut model = session.compile(None, &eqm::ModelOptions::default()).expect("compiles");
    let warning = session
        .diagnostics()
        .iter()
        .find(|d| d.code == "W0505")
        .unwrap_or_else(|| panic!("no W0505: {:?}", session.diagnostics()));
    assert!(
        warning.message.contains("x = 1") || warning.message.contains("y = 2"),
        "{}",
        warning.message
    );
    let settings = RunSettings {
        stop: Some(1.0),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..RunSettings::default()
    };
    let result = model.simulate(&settings).expect("runs");
    for t in [0.0, 0.5, 1.0] {
        check(&result, "x", t, (-t as f64).exp(), 1e-7);
        check(&result, "y", t, 2.0 * (-t as f64).exp(), 1e-7);
        check(&result, "f", t, 0.0, 1e-7);
    }
    // Start values the constraint contradicts stop the run at the start.
    let mut model = compile(&tied(3.0));
    match model
        .simulate(&settings)
        .expect_err("the dropped start value does not hold")
    {
        RunError::Failed {
            diagnostic: Some(d), ..
        } => {
            assert_eq!(d.code, "E0705", "{d:?}");
            assert!(d.message.contains("dummy state"), "{}", d.message);
        }
        other => panic!("no diagnostic: {other}"),
    }
}
