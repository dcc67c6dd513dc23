//! `spatialDistribution` through the API: a profile transported at a constant velocity and one
//! whose velocity reverses, against the closed forms of the transport equation, by both back
//! ends; and a position that the equations compute, which cannot be used.

use eqm::{Method, RunSettings};

/// A run of `model` to `stop` by both back ends (compared bit for bit) with the fixed-step
/// Runge-Kutta method of step 0.01, so that the profile holds a point every 0.01 s (and the
/// straight lines between points are within 0.01²/8 of a smooth inflow).
fn run_fixed_both(model: &str, stop: f64) -> eqm::SimulationResult {
    crate::run_both_back_ends(
        model,
        RunSettings {
            stop: Some(stop),
            interval: Some(0.1),
            method: Some(Method::Rk4),
            step: Some(0.01),
            ..RunSettings::default()
        },
    )
}

#[test]
fn a_profile_moving_at_a_constant_velocity_leaves_at_1_one_transit_time_later() {
    // x' = 1/2 moves the profile by t/2: out1(t) is the initial profile f (0 at 0, 2 at 1/2, 1
    // at 1, straight between) at 1 - t/2 while t < 2, then the inflow sin entered 2 s earlier.
    // out0 is the inflow at the last accepted point (within a step of sin(t)).
    let model = "model M
  parameter Real v = 0.5;
  Real x(start = 0, fixed = true);
  Real out0;
  Real out1;
equation
  der(x) = v;
  (out0, out1) = spatialDistribution(sin(time), 0, x, v >= 0,
    initialPoints = {0, 0.5, 1}, initialValues = {0, 2, 1});
end M;
";
    let initial = |p: f64| if p <= 0.5 { 4.0 * p } else { 3.0 - 2.0 * p };
    let exact = |t: f64| {
        if t <= 2.0 {
            initial(1.0 - 0.5 * t)
        } else {
            (t - 2.0).sin()
        }
    };
    let result = run_fixed_both(model, 5.0);
    for k in 0..=50 {
        let t = k as f64 * 0.1;
        let out1 = result.value_at("out1", t).unwrap();
        assert!(
            (out1 - exact(t)).abs() < 2e-5,
            "out1({t}) = {out1}, expected {}",
            exact(t)
        );
        let out0 = result.value_at("out0", t).unwrap();
        assert!((out0 - t.sin()).abs() < 0.011, "out0({t}) = {out0}");
    }
}

#[test]
fn a_reversed_velocity_brings_back_what_went_in() {
    // The initial profile 1 + 2p. Up to t = 1, x' = 1/2 moves it forward with the inflow
    // 1 + sin(t) entering at 0: at t = 1 position p <= 1/2 holds 1 + sin(1 - 2p), p >= 1/2
    // holds 1 + 2(p - 1/2). Then x' = -1/2 (an event where positiveVelocity changes) moves it
    // back with 2 + sin(t - 1) entering at 1: out0(t) is the profile of t = 1 at (t - 1)/2, so
    // 1 + sin(2 - t) up to t = 2, t - 1 up to 3, and after it the inflow at 1 two seconds
    // earlier, 2 + sin(t - 3). Both inflows meet the profile without a jump.
    let model = "model M
  Real v = if time < 1 then 0.5 else -0.5;
  Real x(start = 0, fixed = true);
  Real out0;
  Real out1;
equation
  der(x) = v;
  (out0, out1) = spatialDistribution(1 + sin(time), 2 + sin(time - 1), x, v >= 0, {0, 1}, {1, 3});
end M;
";
    let exact = |t: f64| {
        if t <= 2.0 {
            1.0 + (2.0 - t).sin()
        } else if t <= 3.0 {
            t - 1.0
        } else {
            2.0 + (t - 3.0).sin()
        }
    };
    let result = run_fixed_both(model, 4.5);
    let switch = result
        .time()
        .windows(2)
        .any(|w| w[0] == w[1] && (w[0] - 1.0).abs() < 1e-9);
    assert!(switch, "no event at 1");
    for k in 11..=45 {
        let t = k as f64 * 0.1;
        let out0 = result.value_at("out0", t).unwrap();
        assert!(
            (out0 - exact(t)).abs() < 2e-5,
            "out0({t}) = {out0}, expected {}",
            exact(t)
        );
    }
    // Forward, out1 is the initial profile at 1 - t/2.
    for k in 0..10 {
        let t = k as f64 * 0.1;
        let out1 = result.value_at("out1", t).unwrap();
        assert!((out1 - (3.0 - t)).abs() < 1e-12, "out1({t}) = {out1}");
    }
}

#[test]
fn a_position_computed_by_the_equations_is_refused() {
    let text = "model M
  Real x;
  Real out0;
  Real out1;
equation
  x = 2*time;
  (out0, out1) = spatialDistribution(sin(time), 0, x, true);
end M;
"
    .to_string();
    let mut session = eqm::Session::with_sources(&[("m.eqm".to_string(), text)], &[], None);
    assert!(session.check(None, &eqm::ModelOptions::default()).is_none());
    let diagnostic = session.diagnostics().iter().find(|d| d.code == "E0609");
    assert!(diagnostic.is_some(), "{:?}", session.diagnostics());
}

/// A run of `model` to `stop` by both back ends (compared bit for bit) with the default
/// adaptive method, rows every 0.1 s: rows fall between the accepted points.
fn run_adaptive_both(model: &str, stop: f64) -> eqm::SimulationResult {
    crate::run_both_back_ends(
        model,
        RunSettings {
            stop: Some(stop),
            interval: Some(0.1),
            ..RunSettings::default()
        },
    )
}

#[test]
fn a_linear_inflow_is_transported_exactly_between_accepted_points() {
    // Modelica's own example: x' = 1, in0 = 1 + t, the initial profile 1 + p. out1 is 2 - t
    // up to t = 1 and then the inflow of one second earlier, t; straight lines carry both
    // exactly, so every row (most between the accepted points of the adaptive method) is exact
    // to rounding. out0 is the inflow at the last record, never ahead of it: 1 <= out0 <= 1 + t.
    let model = "model M
  Real x(start = 0, fixed = true);
  Real out0;
  Real out1;
equation
  der(x) = 1;
  (out0, out1) = spatialDistribution(1 + time, 0, x, true, {0.0, 1.0}, {1, 2});
end M;
";
    let result = run_adaptive_both(model, 3.0);
    for k in 0..=30 {
        let t = k as f64 * 0.1;
        let expected = if t <= 1.0 { 2.0 - t } else { t };
        let out1 = result.value_at("out1", t).unwrap();
        assert!(
            (out1 - expected).abs() < 1e-9,
            "out1({t}) = {out1}, expected {expected}"
        );
        let out0 = result.value_at("out0", t).unwrap();
        assert!((1.0..=1.0 + t + 1e-12).contains(&out0), "out0({t}) = {out0}");
    }
}

#[test]
fn a_jump_of_the_inflow_at_an_event_arrives_as_a_jump() {
    // x' = 1/2: what enters at 0 leaves at 1 two seconds later. The inflow jumps from 1 to 3 at
    // the time event t = 0.505; the initial profile is 1. So out1 is 1 up to t = 2.505 and 3
    // after it, with no ramp between. A profile that lost the jump would join 1 and 3 by a
    // straight line from the event to the next point it keeps (0.50625 with the fixed step
    // 0.01, whose step from the event to 0.51 is sampled at its quarters), and read between
    // them at 2.5058.
    let model = "model M
  Real x(start = 0, fixed = true);
  Real out0;
  Real out1;
equation
  der(x) = 0.5;
  (out0, out1) = spatialDistribution(if time < 0.505 then 1 else 3, 0, x, true, {0, 1}, {1, 1});
end M;
";
    for result in [run_adaptive_both(model, 4.0), run_fixed_both(model, 4.0)] {
        for k in 0..=40 {
            let t = k as f64 * 0.1;
            let expected = if t < 2.505 { 1.0 } else { 3.0 };
            let out1 = result.value_at("out1", t).unwrap();
            assert!(
                (out1 - expected).abs() < 1e-12,
                "out1({t}) = {out1}, expected {expected}"
            );
        }
        // After the event the first value is the new inflow.
        assert_eq!(result.value_at("out0", 1.0), Some(3.0));
    }
    for t in [2.5045, 2.5058] {
        let expected = if t < 2.505 { 1.0 } else { 3.0 };
        let end = run_fixed_both(model, t);
        let out1 = end.value_at("out1", t).unwrap();
        assert!(
            (out1 - expected).abs() < 1e-12,
            "out1({t}) = {out1}, expected {expected}"
        );
    }
}

#[test]
fn a_model_with_spatial_distribution_is_not_linearised() {
    let text = "model M
  Real x(start = 0, fixed = true);
  Real out0;
  Real out1;
  Real y(start = 0, fixed = true);
equation
  der(x) = 1;
  der(y) = out1 - y;
  (out0, out1) = spatialDistribution(time, 0, x, true);
end M;
";
    match crate::compile(text).analyze(&eqm::AnalyzeOptions::default()) {
        Err(eqm::RunError::Model(d)) => assert_eq!(d.code, "E0803"),
        other => panic!("{:?}", other.map(|a| a.steady)),
    }
}

#[test]
fn a_position_reading_a_delayed_value_is_refused() {
    let text = "model M
  Real x(start = 0, fixed = true);
  Real out0;
  Real out1;
equation
  der(x) = 1;
  (out0, out1) = spatialDistribution(sin(time), 0, delay(x, 0.5), true);
end M;
"
    .to_string();
    let mut session = eqm::Session::with_sources(&[("m.eqm".to_string(), text)], &[], None);
    assert!(session.check(None, &eqm::ModelOptions::default()).is_none());
    let diagnostic = session.diagnostics().iter().find(|d| d.code == "E0609");
    assert!(diagnostic.is_some(), "{:?}", session.diagnostics());
}

#[test]
fn the_vectorized_form_transports_each_element_with_its_own_initial_profile() {
    // Two pipes moved by the one x' = 1/2, each element its own transport: the first starts
    // from its own profile (0 at 0, 2 at 1, straight), the second from the shared-shape row
    // (1 at 0, 1 at 1); both outflows read the initial profile at 1 - t/2 until t = 2, then
    // their inflows (t - 2 and 3) entered 2 s earlier.
    let model = "model M
  Real x(start = 0, fixed = true);
  Real out0[2];
  Real out1[2];
equation
  der(x) = 0.5;
  (out0, out1) = spatialDistribution({time, 3}, {0, 0}, x, true,
    initialPoints = {{0, 1}, {0, 1}}, initialValues = {{0, 2}, {1, 1}});
end M;
";
    let result = run_fixed_both(model, 4.0);
    for k in 0..=40 {
        let t = k as f64 * 0.1;
        let (first, second) = if t <= 2.0 {
            (2.0 * (1.0 - 0.5 * t), 1.0)
        } else {
            (t - 2.0, 3.0)
        };
        let out = [
            result.value_at("out1[1]", t).unwrap(),
            result.value_at("out1[2]", t).unwrap(),
        ];
        assert!(
            (out[0] - first).abs() < 1e-9,
            "out1[1]({t}) = {}, expected {first}",
            out[0]
        );
        assert!(
            (out[1] - second).abs() < 1e-9,
            "out1[2]({t}) = {}, expected {second}",
            out[1]
        );
    }
    // A vector of initial points and values is shared by every element.
    let shared = model
        .replace("{{0, 1}, {0, 1}}", "{0, 1}")
        .replace("{{0, 2}, {1, 1}}", "{5, 5}");
    let result = run_fixed_both(&shared, 1.0);
    assert_eq!(result.value_at("out1[1]", 1.0), Some(5.0));
    assert_eq!(result.value_at("out1[2]", 1.0), Some(5.0));
}
