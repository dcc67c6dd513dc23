//! Rules of events and initialization that the Modelica Standard Library's examples rely on,
//! each against values computed by hand: a relation of `time` against a discrete-time value is
//! a time event, scheduled at the exact instant however short the interval before it.

use crate::{check, run_both_back_ends};
use eqm::RunSettings;

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
