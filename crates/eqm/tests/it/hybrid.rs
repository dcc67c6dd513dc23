//! Hybrid runs through the API: events against closed forms. No crossing may be lost, whatever
//! the method and tolerance, also when one step of the integrator spans several crossings of
//! one surface (the integrators take long steps where the states change slowly).

use crate::compile;
use eqm::{Method, RunError, RunSettings, SimulationResult};

/// A run of `text` to `stop` with `method` (the default when `None`) at default tolerances.
pub(crate) fn run(text: &str, stop: f64, method: Option<Method>) -> SimulationResult {
    let mut model = compile(text);
    let settings = RunSettings {
        stop: Some(stop),
        method,
        ..RunSettings::default()
    };
    model.simulate(&settings).unwrap_or_else(|e| panic!("{e}"))
}

/// Methods of every family: the default, explicit fixed and adaptive, implicit and stiff.
pub(crate) fn methods() -> Vec<Option<Method>> {
    vec![
        None,
        Some(Method::Rk4),
        Some(Method::Dopri5),
        Some(Method::ImplicitEuler),
        Some(Method::Bdf),
        Some(Method::Radau5),
    ]
}

/// The time in `[0, stop]` where `condition` holds, by a midpoint sum over a million cells:
/// an independent computation of what an indicator function integrates to.
fn measure(stop: f64, condition: impl Fn(f64) -> bool) -> f64 {
    let n = 1_000_000;
    let h = stop / n as f64;
    (0..n).filter(|&i| condition((i as f64 + 0.5) * h)).count() as f64 * h
}

#[test]
fn a_step_that_spans_two_crossings_loses_neither() {
    // The field does not depend on x, so the integrators step across many half-periods of the
    // sine at once. x(7) = 2 · (7 half-periods of 0.5 s where the sine is positive) = 7.
    let model = "model M
  Real x(start = 0, fixed = true);
  discrete Real n(start = 0, fixed = true);
equation
  der(x) = if sin(2*3.141592653589793*time) > 0 then 2 else 0;
  when sin(2*3.141592653589793*time) > 0 then
    n = pre(n) + 1;
  end when;
end M;
";
    for method in methods() {
        let result = run(model, 7.0, method.clone());
        let x = result.final_value("x").unwrap();
        assert!((x - 7.0).abs() < 1e-6, "{method:?}: x(7) = {x}");
        // The rising crossings just after t = 0 (the sine is 0 there, so the relation is false
        // at the initialization and becomes true right after), and at t = 1, 2, ..., 6.
        assert_eq!(result.final_value("n"), Some(7.0), "{method:?}");
        // 13 sign changes of the sine in (0, 7).
        assert!(
            result.summary.events.events >= 13,
            "{method:?}: {}",
            result.summary.events.events
        );
        let half = result.value_at("x", 6.25).unwrap();
        assert!((half - 6.5).abs() < 1e-6, "{method:?}: x(6.25) = {half}");
    }
}

#[test]
fn a_narrow_dip_inside_one_step_is_found() {
    // (t − 1)² < 1e-8 holds only for |t − 1| < 1e-4: x gains 1e4 · 2e-4 = 2 there.
    let model = "model M
  Real x(start = 0, fixed = true);
equation
  der(x) = if (time - 1)^2 < 1e-8 then 1e4 else 0;
end M;
";
    for method in methods() {
        let x = run(model, 3.0, method.clone()).final_value("x").unwrap();
        assert!((x - 2.0).abs() < 1e-6, "{method:?}: x(3) = {x}");
    }
}

#[test]
fn a_surface_that_touches_zero_without_crossing_is_no_event() {
    // 1 − cos(2πt) ≥ 0 touches zero at every integer time and never goes below: the relation
    // `< 0` never holds.
    let model = "model M
  Real x(start = 0, fixed = true);
equation
  der(x) = if 1 - cos(2*3.141592653589793*time) < 0 then 1 else 0;
end M;
";
    for method in methods() {
        let result = run(model, 5.5, method.clone());
        assert_eq!(result.final_value("x"), Some(0.0), "{method:?}");
    }
}

#[test]
fn fast_and_many_surfaces_are_all_followed() {
    let model = "model M
  Real x(start = 0, fixed = true);
  Real y(start = 0, fixed = true);
equation
  der(x) = (if sin(20*time) > 0 then 1 else 0) + (if cos(31*time) > 0.5 then 1 else 0);
  der(y) = if sin(7*time) + sin(11*time) > 0.3 then 1 else 0;
end M;
";
    let stop = 10.0;
    let x_expected = measure(stop, |t| (20.0 * t).sin() > 0.0) + measure(stop, |t| (31.0 * t).cos() > 0.5);
    let y_expected = measure(stop, |t| (7.0 * t).sin() + (11.0 * t).sin() > 0.3);
    for method in methods() {
        let result = run(model, stop, method.clone());
        let x = result.final_value("x").unwrap();
        let y = result.final_value("y").unwrap();
        // The midpoint sums are exact to about one cell (1e-5) per crossing.
        assert!(
            (x - x_expected).abs() < 2e-4,
            "{method:?}: x = {x}, expected {x_expected}"
        );
        assert!(
            (y - y_expected).abs() < 2e-4,
            "{method:?}: y = {y}, expected {y_expected}"
        );
    }
}

/// x(t) = e^{-t} with an assertion x > 1/2, false from t = ln 2 on.
const DECAY_ASSERTED: &str = "model M
  Real x(start = 1, fixed = true);
equation
  der(x) = -x;
  assert(x > 0.5, \"x fell below one half\"LEVEL);
end M;
";

#[test]
fn a_false_assertion_stops_the_run_at_the_instant_it_stops_holding() {
    let mut model = compile(&DECAY_ASSERTED.replace("LEVEL", ""));
    let settings = RunSettings {
        stop: Some(2.0),
        rtol: Some(1e-10),
        atol: Some(1e-12),
        ..RunSettings::default()
    };
    let columns = model.columns(None).unwrap();
    let mut times = Vec::new();
    let failure = model
        .simulate_into(&settings, &columns, &mut |t: f64, _: &[f64]| {
            times.push(t);
            Ok(())
        })
        .expect_err("the assertion fails");
    let RunError::Failed { time, diagnostic, .. } = failure else {
        panic!("not a run failure: {failure}")
    };
    let ln2 = 2f64.ln();
    assert!((time - ln2).abs() < 1e-8, "failed at {time}");
    let diagnostic = diagnostic.expect("a diagnostic");
    assert_eq!(diagnostic.code, "E0705");
    assert!(
        diagnostic.message.contains("x fell below one half"),
        "{}",
        diagnostic.message
    );
    // Every row before the failure is kept, none after it.
    assert_eq!(times.first(), Some(&0.0));
    assert!(times.iter().all(|&t| t <= ln2), "{times:?}");
    assert!(*times.last().unwrap() > ln2 - 0.005, "{times:?}");
}

/// An assertion that stops holding inside a step that also ends at a crossing stops the run
/// where it stopped holding, before the event (it was reported at the event, with the rows in
/// between written), and its message may join text with a String parameter's.
#[test]
fn an_assertion_failing_before_an_event_in_the_same_step_stops_the_run_there() {
    let mut model = compile(
        "model M
  parameter String reason = \"past the limit\";
  Real x(start = 0, fixed = true);
equation
  der(x) = 1;
  when x > 2 then
    terminate(\"stopped: \" + reason);
  end when;
  assert(x < 1.5, \"x too big: \" + reason);
end M;
",
    );
    let (time, diagnostic) = failure_until(&mut model, 3.0);
    assert!((time - 1.5).abs() < 1e-9, "failed at {time}");
    assert!(
        diagnostic.message.contains("x too big: past the limit"),
        "{}",
        diagnostic.message
    );
}

/// `terminate` with a message built from a String parameter ends the run with that text.
#[test]
fn terminate_shows_a_string_parameter() {
    let mut model = compile(
        "model M
  parameter String reason = \"the limit\";
  Real x(start = 0, fixed = true);
equation
  der(x) = 1;
  when x > 2 then
    terminate(\"stopped at \" + reason);
  end when;
end M;
",
    );
    let settings = RunSettings {
        stop: Some(3.0),
        ..RunSettings::default()
    };
    let result = model.simulate(&settings).expect("terminate ends the run normally");
    let (time, message) = result.summary.terminated.clone().expect("terminated");
    assert!((time - 2.0).abs() < 1e-9, "terminated at {time}");
    assert_eq!(message, "stopped at the limit");
}

/// The message of a failing assertion shows the values its `String(...)` parts have then: x
/// reaches 1/2 at ln 2, after the ticks at 0.1 .. 0.6; `lim` is known when compiled.
#[test]
fn an_assertion_message_shows_the_values_at_the_failure() {
    let mut model = compile(
        "model M
  Real x(start = 1, fixed = true);
  Integer n(start = 0, fixed = true);
  parameter Real lim = 0.5;
equation
  der(x) = -x;
  when sample(0.1, 0.1) then
    n = pre(n) + 1;
  end when;
  assert(x > lim, \"x = \" + String(x) + \" after \" + String(n) + \" ticks, below \" + String(lim) + \": \" + String(x < lim));
end M;
",
    );
    let (_, diagnostic) = failure_until(&mut model, 2.0);
    let message = diagnostic.message;
    assert!(message.contains("x = 0.5 after 6 ticks, below 0.5: "), "{message}");
}

/// Assertions and `terminate` in when-clauses show the values their messages read at the
/// event: the third tick (k = 3 at t = 0.75) fails the assertion; without it, x reaches 2.
#[test]
fn when_clause_messages_show_the_values_at_the_event() {
    let model = "model M
  Real x(start = 0, fixed = true);
  discrete Integer k(start = 0, fixed = true);
equation
  der(x) = 1;
  when sample(0.25, 0.25) then
    k = pre(k) + 1;
    assert(k < LIMIT, \"tick \" + String(k) + \" of \" + String(LIMIT));
  end when;
  when x > 2 then
    terminate(\"x reached \" + String(integer(x + 0.5)));
  end when;
end M;
";
    let mut failing = compile(&model.replace("LIMIT", "3"));
    let (time, diagnostic) = failure_until(&mut failing, 1.0);
    assert_eq!(time, 0.75);
    assert!(diagnostic.message.contains("tick 3 of 3"), "{}", diagnostic.message);
    let result = run(&model.replace("LIMIT", "30"), 3.0, None);
    let (at, message) = result.summary.terminated.expect("terminated");
    assert!((at - 2.0).abs() < 1e-9, "terminated at {at}");
    assert_eq!(message, "x reached 2");
}

/// The time and diagnostic of a run of `model` to `stop` at tight tolerances that must fail.
pub(crate) fn failure_until(model: &mut eqm::Model, stop: f64) -> (f64, eqm_diag::Diagnostic) {
    let failure = model
        .simulate(&RunSettings {
            stop: Some(stop),
            rtol: Some(1e-10),
            atol: Some(1e-12),
            ..RunSettings::default()
        })
        .expect_err("the run fails");
    let RunError::Failed { time, diagnostic, .. } = failure else {
        panic!("not a run failure: {failure}")
    };
    (time, *diagnostic.expect("a diagnostic"))
}

/// An assertion on a derivative: der(x) = -x is above -1/2 from t = ln 2 on, so the assertion
/// `der(x) < -0.5` (also checked at the start, where der(x) = -1) fails at ln 2.
#[test]
fn an_assertion_may_read_a_derivative() {
    let mut model = compile(
        "model M
  Real x(start = 1, fixed = true);
equation
  der(x) = -x;
  assert(der(x) < -0.5, \"x decays too slowly\");
end M;
",
    );
    let (time, _) = failure_until(&mut model, 2.0);
    assert!((time - 2f64.ln()).abs() < 1e-8, "failed at {time}");
}

#[test]
fn an_assertion_of_level_warning_is_reported_once_and_the_run_goes_on() {
    let mut model = compile(&DECAY_ASSERTED.replace("LEVEL", ", AssertionLevel.warning"));
    let result = model
        .simulate(&RunSettings {
            stop: Some(2.0),
            ..RunSettings::default()
        })
        .expect("runs to the end");
    let x = result.final_value("x").unwrap();
    assert!((x - (-2f64).exp()).abs() < 1e-5, "x(2) = {x}");
    let warnings = &result.summary.warnings;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].code, "W0701");
}

#[test]
fn an_assertion_on_parameters_is_checked_before_the_run() {
    let mut model = compile(
        "model M
  parameter Real m = -1;
  Real x(start = 1, fixed = true);
equation
  der(x) = -x/m^2;
  assert(m > 0, \"the mass must be positive\");
end M;
",
    );
    let settings = RunSettings {
        stop: Some(1.0),
        ..RunSettings::default()
    };
    let columns = model.columns(None).unwrap();
    let mut rows = 0;
    let failure = model
        .simulate_into(&settings, &columns, &mut |_: f64, _: &[f64]| {
            rows += 1;
            Ok(())
        })
        .expect_err("the parameters violate the assertion");
    assert!(
        matches!(&failure, RunError::Failed { time, .. } if *time == 0.0),
        "{failure}"
    );
    assert_eq!(rows, 0);
    model.set_parameter("m", 2.0).unwrap();
    let x = model.simulate(&settings).expect("runs").final_value("x").unwrap();
    assert!((x - (-0.25f64).exp()).abs() < 1e-5, "x(1) = {x}");
}

#[test]
fn relations_at_the_start_are_those_of_the_consistent_initial_point() {
    // x(0) = 0 exactly: `x <= 0` holds there, so y(0) = 0 (the other branch is log(0) = -inf);
    // once x > 0 the relation changes by an event and y = log(t).
    let model = "model M
  Real x(start = 0, fixed = true);
  Real y;
equation
  der(x) = 1;
  y = if x <= 0 then 0 else log(x);
end M;
";
    let result = run(model, 1.0, None);
    let (t0, first) = result.row(0).unwrap();
    assert_eq!((t0, first[1]), (0.0, 0.0));
    for t in [0.25, 0.5, 1.0] {
        let y = result.value_at("y", t).unwrap();
        assert!((y - t.ln()).abs() < 1e-6, "y({t}) = {y}");
    }
    // An implicit equation through `abs` keeps the root on the side of its start value.
    let model = "model M
  Real w(start = 5);
equation
  abs(w) = 2 + time;
end M;
";
    let result = run(model, 1.0, None);
    for i in 0..result.len() {
        let (t, values) = result.row(i).unwrap();
        assert!((values[0] - (2.0 + t)).abs() < 1e-9, "w({t}) = {}", values[0]);
    }
    // A when-condition that is zero at the start and becomes true right after fires there:
    // sin(10 t) > 0 rises at t = 0+ and t = 2π/10.
    let model = "model M
  discrete Real n(start = 0, fixed = true);
  discrete Real first(start = -1, fixed = true);
equation
  when sin(10*time) > 0 then
    n = pre(n) + 1;
    first = if pre(first) < 0 then time else pre(first);
  end when;
end M;
";
    let result = run(model, 1.0, None);
    assert_eq!(result.final_value("n"), Some(2.0));
    assert!(result.final_value("first").unwrap().abs() < 1e-9);
}

#[test]
fn what_one_clause_assigns_fires_change_edge_and_conditions_of_others_at_the_same_event() {
    // tick counts the samples at 0.1, 0.4, 0.7 and 1.0 (the last within rounding of the end);
    // `change(tick)` fires at each of them in the same event.
    let model = "model M
  Integer tick(start = 0);
  discrete Real last(start = -1);
equation
  when sample(0.1, 0.3) then
    tick = pre(tick) + 1;
  end when;
  when change(tick) then
    last = time;
  end when;
end M;
";
    let result = run(model, 1.0, None);
    assert_eq!(result.final_value("tick"), Some(4.0));
    assert!((result.final_value("last").unwrap() - 1.0).abs() < 1e-12);
    assert!((result.value_at("last", 0.5).unwrap() - 0.4).abs() < 1e-12);
    // `edge` of a Boolean another clause toggles, and a condition on a variable assigned now.
    let model = "model M
  discrete Real a(start = 0);
  Boolean up(start = false);
  discrete Real crossed(start = -1);
  discrete Real rose(start = -1);
equation
  when sample(0.5, 1) then
    a = pre(a) + 1;
    up = not pre(up);
  end when;
  when a > 1.5 then
    crossed = time;
  end when;
  when edge(up) then
    rose = time;
  end when;
end M;
";
    let result = run(model, 3.0, None);
    assert_eq!(result.final_value("crossed"), Some(1.5));
    assert_eq!(result.value_at("rose", 1.0), Some(0.5));
    assert_eq!(result.final_value("rose"), Some(2.5));
}

#[test]
fn booleans_and_integers_defined_by_ordinary_equations_are_unknowns_solved_at_events() {
    // b = (t > 1 and not t > 0.5) or t > 1.5 holds from t = 1.5 on; x integrates it.
    let model = "model M
  Real x(start = 0, fixed = true);
  Boolean c = time > 0.5;
  Boolean b;
  Integer n;
  Integer k;
equation
  der(x) = if b then 1 else 0;
  b = time > 1 and not c or time > 1.5;
  n = if b then 2 else 1;
  k = 3;
end M;
";
    let result = run(model, 2.0, None);
    assert!((result.final_value("x").unwrap() - 0.5).abs() < 1e-9);
    assert_eq!(result.final_value("n"), Some(2.0));
    assert_eq!(result.value_at("n", 1.25), Some(1.0));
    assert_eq!(result.value_at("c", 0.75), Some(1.0));
    assert_eq!(result.final_value("k"), Some(3.0));
}

#[test]
fn pre_of_a_boolean_defined_by_an_equation_is_its_value_again_after_the_event() {
    // The event iteration ends only when pre(v) == v for every v read by pre: after the time
    // event at 0.25, p = pre(u) is true, not false until the next, unrelated event at x = 0.5.
    // q counts through pre(q) only at the ticks of its when-clause, so it is a discrete state.
    let model = "model M
  Boolean u = time >= 0.25;
  Boolean p = pre(u);
  Boolean rising = u and not pre(u);
  Real x(start = 0, fixed = true);
  Integer q(start = 0, fixed = true);
equation
  der(x) = if x > 0.5 then 0 else 1;
  when sample(0.1, 0.2) then
    q = pre(q) + (if p then 10 else 1);
  end when;
end M;
";
    for method in methods() {
        let result = run(model, 1.0, method.clone());
        for t in [0.1, 0.2] {
            assert_eq!(result.value_at("p", t), Some(0.0), "p({t}) with {method:?}");
        }
        for t in [0.3, 0.4, 0.45, 0.6, 1.0] {
            assert_eq!(result.value_at("p", t), Some(1.0), "p({t}) with {method:?}");
            assert_eq!(result.value_at("rising", t), Some(0.0), "rising({t}) with {method:?}");
        }
        // Ticks at 0.1 (p false: +1), 0.3, 0.5, 0.7, 0.9 (p true: +10 each).
        assert_eq!(result.final_value("q"), Some(41.0), "q with {method:?}");
        assert!((result.final_value("x").unwrap() - 0.5).abs() < 1e-9);
    }
}

#[test]
fn a_mode_entered_on_a_threshold_is_left_the_same_way_when_the_relation_crosses_back() {
    // One relation chooses the branches of two equations; the second makes the model change
    // structure. With u = 0.9 sin(2 pi t): s = u + 0.5 while s > 1 (u > 0.5), s = 2 u otherwise.
    // The run enters the mode s > 1 on the threshold at u = 0.5 and must leave it when u falls
    // below 0.5 again (once stopped as if switching infinitely often there).
    let model = "model M
  Real s, u, y;
equation
  u = 0.9*sin(2*3.141592653589793*time);
  u - 0.5*y = if s > 1 then s - 1 else 0;
  y = if s > 1 then 1 else s;
end M;
";
    for method in methods() {
        let result = run(model, 2.0, method.clone());
        // On the output grid (the default interval, stop/500), where rows are not interpolated.
        for k in 0..=50 {
            let t = 0.04 * k as f64;
            let u = 0.9 * (2.0 * std::f64::consts::PI * t).sin();
            let s = if u > 0.5 { u + 0.5 } else { 2.0 * u };
            let value = result.value_at("s", t).unwrap();
            assert!(
                (value - s).abs() < 1e-9,
                "s({t}) = {value}, expected {s} with {method:?}"
            );
        }
    }
}

#[test]
fn a_crossing_a_few_roundings_after_a_sample_that_resets_a_state_is_stepped_over() {
    // The sample at t = 2 resets x to 0; s = 2 sin(pi t) crosses zero a few units of rounding
    // later (sin(2 pi) is not exactly 0), where x is almost 0. The first step from there was
    // sized by |x| and refused as too small to advance time at every tight tolerance. From each
    // reset: x(t) = (t - t_k) + (2/pi)(1 - cos(pi t)).
    let model = "model M
  Real s = 2*sin(3.141592653589793*time);
  Real x(start = 0, fixed = true);
  Real sg = if s > 0 then 1 else if s < 0 then -1 else 0;
equation
  der(x) = 1 + s;
  when sample(2, 2) then
    reinit(x, 0);
  end when;
end M;
";
    for method in methods() {
        let mut compiled = compile(model);
        let settings = RunSettings {
            stop: Some(5.0),
            rtol: Some(1e-10),
            atol: Some(1e-10),
            interval: Some(0.01),
            method: method.clone(),
            ..RunSettings::default()
        };
        let result = compiled
            .simulate(&settings)
            .unwrap_or_else(|e| panic!("{e} with {method:?}"));
        for (t, since) in [(1.5, 0.0), (2.5, 2.0), (3.5, 2.0), (4.5, 4.0)] {
            let exact = (t - since) + 2.0 / std::f64::consts::PI * (1.0 - (std::f64::consts::PI * t).cos());
            let x = result.value_at("x", t).unwrap();
            // The fixed-step methods (rk4, implicit Euler) take the default step; the adaptive
            // ones meet the tolerance.
            let tolerance = if method.as_ref().is_some_and(|m| !m.is_adaptive()) {
                1e-2
            } else {
                1e-7
            };
            assert!(
                (x - exact).abs() < tolerance,
                "x({t}) = {x}, expected {exact} with {method:?}"
            );
        }
    }
}

#[test]
fn every_output_of_a_sliding_row_is_the_filippov_combination() {
    // The naive stick-slip model: slips with F = -1 until v = q at t1 = asin(0.4), sticks
    // (v = q) until the spring force reaches the friction, y = 1 at t2 = t1 + sqrt(0.84)/0.4;
    // while stuck the friction force balances the spring: F = -y.
    let model = "model M
  parameter Real q = 0.4;
  Real y(start = 0, fixed = true);
  Real v(start = 0, fixed = true);
  Real F;
equation
  der(y) = v;
  F = sign(v - q);
  der(v) = -F - y;
end M;
";
    let mut compiled = compile(model);
    let settings = RunSettings {
        stop: Some(4.0),
        interval: Some(0.01),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        variables: Some(vec!["y".into(), "v".into(), "F".into()]),
        ..RunSettings::default()
    };
    let result = compiled.simulate(&settings).expect("runs");
    let t1 = 0.4f64.asin();
    let t2 = t1 + 0.84f64.sqrt() / 0.4;
    let mut stuck_rows = 0;
    for i in 0..result.len() {
        let (t, row) = result.row(i).unwrap();
        let (y, v, f) = (row[0], row[1], row[2]);
        assert!(f.abs() <= 1.0 + 1e-12, "F({t}) = {f}");
        if t < t1 - 1e-9 {
            assert_eq!(f, -1.0, "slipping at {t}");
        } else if t > t1 + 1e-9 && t < t2 - 1e-6 {
            stuck_rows += 1;
            assert!((v - 0.4).abs() < 1e-8, "v({t}) = {v}");
            assert!((f + y).abs() < 1e-8, "F({t}) = {f}, y = {y}");
        }
    }
    assert!(stuck_rows > 200, "{stuck_rows}");
}

#[test]
fn pre_breaks_every_cycle_of_a_when_clause() {
    // a and b swap at every sample (t = 0, 0.5, 1): pre(·) is the value before the event,
    // whatever the order of the equations; a clause reading pre of what it assigns counts.
    let model = "model M
  discrete Real a(start = 1);
  discrete Real b(start = 2);
  discrete Real n(start = 0);
equation
  when sample(0, 0.5) then
    a = pre(b);
    b = pre(a);
    n = pre(n) + a - b;
  end when;
end M;
";
    let result = run(model, 1.2, None);
    assert_eq!(
        (result.value_at("a", 0.25), result.value_at("b", 0.25)),
        (Some(2.0), Some(1.0))
    );
    assert_eq!(
        (result.value_at("a", 0.75), result.value_at("b", 0.75)),
        (Some(1.0), Some(2.0))
    );
    assert_eq!(
        (result.final_value("a"), result.final_value("b")),
        (Some(2.0), Some(1.0))
    );
    // n adds the new a - b: +1, -1, +1.
    assert_eq!(result.final_value("n"), Some(1.0));
}

#[test]
fn a_when_equation_in_a_loop_with_continuous_equations_is_solved_with_them() {
    // At each sample t_k = 0.2·k the system {x + y = 5, y = 7 - 2x + t_k} has the solution
    // x = 2 + t_k, y = 3 - t_k; between samples y is held and x = 5 - y.
    let model = "model M
  Real x, y;
equation
  x + y = 5;
  when sample(0, 0.2) then
    y = 7 - 2*x + time;
  end when;
end M;
";
    for method in methods() {
        let result = run(model, 0.5, method.clone());
        for (t, x) in [(0.1, 2.0), (0.3, 2.2), (0.5, 2.4)] {
            let found = result.value_at("x", t).unwrap();
            assert!((found - x).abs() < 1e-9, "{method:?}: x({t}) = {found}, not {x}");
            let y = result.value_at("y", t).unwrap();
            assert!((y - (5.0 - x)).abs() < 1e-9, "{method:?}: y({t}) = {y}");
        }
    }
    // Nonlinear, through a state and two clauses firing together: at t = 1 with s(1) = 1,
    // u = w·w and w + u = s + 5 give w = 2 (the root near the start value), u = 4; then
    // der(s) = u - 4 = 0 holds s at 1.
    let model = "model M
  Real s(start = 0, fixed = true);
  Real w(start = 1.5);
  discrete Real u(start = 1);
equation
  der(s) = if time < 1 then 1 else u - 4;
  w + u = s + 5;
  when time >= 1 then
    u = w*w;
  end when;
end M;
";
    let result = run(model, 2.0, None);
    assert!((result.final_value("u").unwrap() - 4.0).abs() < 1e-9);
    assert!((result.final_value("w").unwrap() - 2.0).abs() < 1e-9);
    assert!((result.final_value("s").unwrap() - 1.0).abs() < 1e-6);
}

#[test]
fn integer_when_equations_in_a_coupled_system_are_computed_not_differentiated() {
    // k toggles 1, 0, 1 at t = 0.5, 1.5, 2.5; s = 2 when k = 1, else 1; c reads the continuous
    // r = 2 s, which depends on s assigned at the same event: c = 4, 2, 4.
    let model = "model M
  discrete Integer k(start = 0, fixed = true);
  discrete Real s(start = 0, fixed = true);
  discrete Real c(start = 0, fixed = true);
  Real r = 2*s;
equation
  when sample(0.5, 1) then
    k = if pre(k) >= 1 then 0 else 1;
    s = if k == 0 then 1 else 2;
    c = r;
  end when;
end M;
";
    for method in methods() {
        let result = run(model, 3.0, method.clone());
        for (t, k, s, c) in [(1.0, 1.0, 2.0, 4.0), (2.0, 0.0, 1.0, 2.0), (3.0, 1.0, 2.0, 4.0)] {
            let found = [
                result.value_at("k", t).unwrap(),
                result.value_at("s", t).unwrap(),
                result.value_at("c", t).unwrap(),
            ];
            assert_eq!(found, [k, s, c], "{method:?} at {t}");
        }
    }
}

#[test]
fn when_clauses_firing_together_are_one_system_and_a_cycle_between_them_is_an_error() {
    // b = a reads what the other clause assigns at the same instant, whatever their order.
    let ordered = "model M
  discrete Real a(start = 0, fixed = true);
  discrete Real b(start = 0, fixed = true);
equation
  when sample(0.5, 1) then
    b = a;
  end when;
  when sample(0.5, 1) then
    a = pre(a) + 1;
  end when;
end M;
";
    let result = run(ordered, 1.0, None);
    assert_eq!(result.value_at("b", 1.0), Some(1.0));
    // a = b + 1 and b = a have no solution: reported, not stopped at some values.
    let cycle = ordered.replace("a = pre(a) + 1", "a = b + 1");
    let mut compiled = compile(&cycle);
    let Err(RunError::Failed { time, diagnostic, .. }) = compiled.simulate(&RunSettings {
        stop: Some(1.0),
        ..RunSettings::default()
    }) else {
        panic!("a cycle runs")
    };
    assert_eq!(time, 0.5);
    assert_eq!(diagnostic.expect("a diagnostic").code, "E0712");
}

#[test]
fn a_singular_system_of_when_and_continuous_equations_is_an_error() {
    // y = 5 - x and x = 5 - y: every y solves it; no solution is chosen silently.
    let model = "model M
  Real x, y;
equation
  x + y = 5;
  when time >= 0.5 then
    y = 5 - x;
  end when;
end M;
";
    let mut compiled = compile(model);
    let settings = RunSettings {
        stop: Some(1.0),
        ..RunSettings::default()
    };
    let Err(error) = compiled.simulate(&settings) else {
        panic!("a singular system runs")
    };
    let RunError::Failed { time, diagnostic, .. } = error else {
        panic!("not a run failure: {error}")
    };
    assert!((time - 0.5).abs() < 1e-9, "failed at {time}");
    let diagnostic = diagnostic.expect("a diagnostic");
    assert_eq!(diagnostic.code, "E0703");
    assert!(diagnostic.message.contains("singular"), "{}", diagnostic.message);
}

#[test]
fn when_statements_in_algorithms_fire_on_the_rising_edge_and_hold_their_values() {
    // Two when-statements on samples: at t = 0 and 2 both fire and the later one wins, at
    // t = 1 and 3 only the first: close(0.5) = true, close(1.5) = false, close(2.5) = true.
    // A counter with `k := k + 1` (the section starts from pre(k)) and an elsewhen: x = t
    // crosses 0.55 (k = 1) and 2.5 (k = 1 + 10); the relation on `time >= 0`, true at the
    // start, never rises, and the one on `time > 0` rises right after it.
    let model = "model M
  Boolean close(start = true);
  Integer k(start = 0), ca(start = 0), cb(start = 0);
  Real x(start = 0, fixed = true);
  discrete Real hit(start = -1);
equation
  der(x) = 1;
algorithm
  when sample(0, 1) then
    close := false;
  end when;
  when sample(0, 2) then
    close := true;
  end when;
  when x > 0.55 then
    k := k + 1;
    hit := time;
  elsewhen x > 2.5 then
    k := pre(k) + 10;
  end when;
  when time >= 0 then ca := pre(ca) + 1; end when;
  when time > 0 then cb := pre(cb) + 1; end when;
end M;
";
    for method in methods() {
        let result = run(model, 3.5, method.clone());
        for (t, close) in [(0.5, 1.0), (1.5, 0.0), (2.5, 1.0), (3.25, 0.0)] {
            assert_eq!(result.value_at("close", t), Some(close), "{method:?}: close({t})");
        }
        for (t, k) in [(0.5, 0.0), (1.0, 1.0), (2.4, 1.0), (3.0, 11.0)] {
            assert_eq!(result.value_at("k", t), Some(k), "{method:?}: k({t})");
        }
        assert!((result.final_value("hit").unwrap() - 0.55).abs() < 1e-9, "{method:?}");
        assert_eq!(result.final_value("ca"), Some(0.0), "{method:?}");
        assert_eq!(result.value_at("cb", 0.1), Some(1.0), "{method:?}");
    }
}

#[test]
fn relations_in_algorithms_generate_events_on_the_values_they_test() {
    // y := 2x is limited to 1 before the when-statement reads it: the limit is reached at
    // x = 0.5 exactly (located as an event on 2x - 1, not on the limited y), and y = 0.75 at
    // x = 0.375 fires the counter. An Integer assigned under an `if` keeps its value when the
    // branch is left (the section starts from its value before the event): n = 2 from t = 1 on.
    let model = "model M
  Real x(start = 0, fixed = true);
  Real y;
  Integer m(start = 0);
  Integer n(start = 1, fixed = true);
equation
  der(x) = 1;
algorithm
  y := 2*x;
  if y > 1 then
    y := 1;
  end if;
  when y > 0.75 then m := pre(m) + 1; end when;
  if 1 < time and time < 2 then n := 2; end if;
end M;
";
    let result = run(model, 3.0, None);
    for (t, y) in [(0.25, 0.5), (0.5, 1.0), (2.0, 1.0)] {
        let found = result.value_at("y", t).unwrap();
        assert!((found - y).abs() < 1e-9, "y({t}) = {found}");
    }
    // An event writes two rows at its time.
    let events: Vec<f64> = result
        .time()
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    assert!(events.iter().any(|t| (t - 0.5).abs() < 1e-9), "{events:?}");
    assert!(events.iter().any(|t| (t - 0.375).abs() < 1e-9), "{events:?}");
    assert_eq!(result.final_value("m"), Some(1.0));
    assert_eq!(result.value_at("n", 0.5), Some(1.0));
    assert_eq!(result.value_at("n", 1.5), Some(2.0));
    assert_eq!(result.final_value("n"), Some(2.0));
}

#[test]
fn terminal_is_true_at_the_final_event_also_after_terminate() {
    // der(x) = 1 from 0; `terminate` at t = 1 ends the run there, and the final event captures
    // x = 1 in a when-equation and 2x = 2 in a when-statement; a run to its end at t = 2
    // captures 2 and 4.
    let model = "model M
  Real x(start = 0, fixed = true);
  parameter Real stopAt = 1;
  discrete Real xEnd(start = 0, fixed = true);
  discrete Real yEnd(start = 0);
equation
  der(x) = 1;
  when time >= stopAt then terminate(\"done\"); end when;
  when terminal() then xEnd = x; end when;
algorithm
  when terminal() then yEnd := 2*x; end when;
end M;
";
    let result = run(model, 10.0, None);
    assert!((result.final_value("xEnd").unwrap() - 1.0).abs() < 1e-9);
    assert!((result.final_value("yEnd").unwrap() - 2.0).abs() < 1e-9);
    assert!((result.value_at("xEnd", 0.5).unwrap()).abs() < 1e-12);
    let mut compiled = compile(model);
    compiled.set_parameter("stopAt", 5.0).unwrap();
    let result = compiled
        .simulate(&RunSettings {
            stop: Some(2.0),
            ..RunSettings::default()
        })
        .unwrap();
    assert!((result.final_value("xEnd").unwrap() - 2.0).abs() < 1e-9);
    assert!((result.final_value("yEnd").unwrap() - 4.0).abs() < 1e-9);
}

#[test]
fn a_vector_when_condition_fires_at_every_rising_element_unlike_or() {
    // {time >= 1, time >= 2} rises at 1 and at 2; `time >= 1 or time >= 2` rises once. The
    // clause on {initial(), sample(0, 1)} fires after the initialization and at the sample at
    // 0 (the initialization's values are the pre values of the event at the start), then at
    // 1, 2 and 3.
    let model = "model M
  Integer a(start = 0), b(start = 0), c(start = 0);
equation
  when {time >= 1, time >= 2} then a = pre(a) + 1; end when;
  when time >= 1 or time >= 2 then b = pre(b) + 1; end when;
  when {initial(), sample(0, 1)} then c = pre(c) + 1; end when;
end M;
";
    let result = run(model, 3.5, None);
    assert_eq!(result.final_value("a"), Some(2.0));
    assert_eq!(result.value_at("a", 1.5), Some(1.0));
    assert_eq!(result.final_value("b"), Some(1.0));
    assert_eq!(result.value_at("c", 0.5), Some(2.0));
    assert_eq!(result.final_value("c"), Some(5.0));
}

#[test]
fn warnings_before_a_failure_are_kept_with_it() {
    // x = e^{-t} falls below 0.8 (a warning) before it falls below 0.5 (an error, at ln 2).
    let mut model = compile(
        "model M
  Real x(start = 1, fixed = true);
equation
  der(x) = -x;
  assert(x > 0.8, \"x is getting small\", AssertionLevel.warning);
  assert(x > 0.5, \"x fell below one half\");
end M;
",
    );
    let Err(RunError::Failed { time, warnings, .. }) = model.simulate(&RunSettings {
        stop: Some(1.0),
        ..RunSettings::default()
    }) else {
        panic!("the assertion of level error fails")
    };
    // Located on the computed x, whose relative error is that of the default tolerance.
    assert!((time - 2f64.ln()).abs() < 1e-6, "failed at {time}");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].code, "W0701");
    assert!(warnings[0].message.contains("x is getting small"));
}
