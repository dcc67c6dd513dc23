//! `delay(e, d)` through the API: the history of delay differential equations against the
//! method of steps, events on delayed values, the initialization, and delay times that cannot
//! be used.

use crate::compile;
use crate::hybrid::{methods, run};
use eqm::{Method, RunError, RunSettings};

#[test]
fn delay_follows_the_history_of_its_expression_exactly() {
    // x' = -x(t - 1) with x = 1 up to the start: by the method of steps x = 1 - t on [0, 1],
    // x = -2(t - 1) + (t² - 1)/2 on [1, 2] (so x(2) = -1/2), and x(3) = -1/6. y is x one second
    // earlier (1 before t = 1), and z the step `time > 0.5` a quarter second later.
    let model = "model M
  Real x(start = 1, fixed = true);
  Real y;
  Real z;
equation
  der(x) = -delay(x, 1);
  y = delay(x, 1);
  z = delay(if time > 0.5 then 1 else 0, 0.25);
end M;
";
    let exact = |t: f64| {
        if t <= 1.0 {
            1.0 - t
        } else {
            -2.0 * (t - 1.0) + (t * t - 1.0) / 2.0
        }
    };
    for method in methods() {
        // Rows every 0.1 s, so that the values compared are computed, not interpolated.
        let result = compile(model)
            .simulate(&RunSettings {
                stop: Some(3.0),
                interval: Some(0.1),
                method: method.clone(),
                ..RunSettings::default()
            })
            .unwrap_or_else(|e| panic!("{e}"));
        // Ten times the default relative tolerance; the implicit Euler method is of first order.
        let tolerance = if method == Some(Method::ImplicitEuler) {
            1e-3
        } else {
            1e-5
        };
        for t in [0.5, 1.0, 1.5, 2.0] {
            let x = result.value_at("x", t).unwrap();
            assert!((x - exact(t)).abs() < tolerance, "{method:?}: x({t}) = {x}");
        }
        let x3 = result.final_value("x").unwrap();
        assert!((x3 + 1.0 / 6.0).abs() < tolerance, "{method:?}: x(3) = {x3}");
        assert_eq!(result.value_at("y", 0.0), Some(1.0), "{method:?}");
        let y = result.value_at("y", 2.5).unwrap();
        assert!((y - exact(1.5)).abs() < tolerance, "{method:?}: y(2.5) = {y}");
        assert_eq!(result.value_at("z", 0.7), Some(0.0), "{method:?}");
        assert!((result.value_at("z", 0.8).unwrap() - 1.0).abs() < 1e-12, "{method:?}");
    }
}

#[test]
fn relations_on_delayed_values_are_events_and_close_breaking_points_are_one() {
    // x' = -x(t - 0.5) from x = 1: x = 1 - t up to 0.5, then x(1) = 1/8. z tests x 0.2 s
    // earlier against 0.7: true from the start (x(0) = 1 there) until t - 0.2 = 0.3. The
    // breaking points 0.2 + 0.5 and (the event at 0.5) + 0.2 are one.
    let model = "model M
  Real x(start = 1, fixed = true);
  Boolean b = x > 0.5;
  Real z;
equation
  der(x) = -delay(x, 0.5, 1);
  z = if delay(x, 0.2) > 0.7 then 1 else 0;
end M;
";
    let result = run(model, 2.0, None);
    assert_eq!(result.value_at("z", 0.0), Some(1.0));
    assert_eq!(result.value_at("z", 0.45), Some(1.0));
    assert_eq!(result.value_at("z", 0.55), Some(0.0));
    let switch = result
        .time()
        .windows(2)
        .find(|w| w[0] == w[1] && (w[0] - 0.5).abs() < 1e-6)
        .map(|w| w[0]);
    assert!(switch.is_some(), "no event at 0.5");
    assert!((result.value_at("x", 1.0).unwrap() - 0.125).abs() < 1e-6);
}

#[test]
fn in_the_initialization_a_delayed_value_is_its_expression() {
    // der(x) = 0 at the start with delay(x, 1) = x there: 2 - x = 0, so x = 2, and it stays.
    let model = "model M
  Real x(start = 0);
equation
  der(x) = 2 - delay(x, 1);
initial equation
  der(x) = 0;
end M;
";
    let result = run(model, 3.0, None);
    assert!((result.value_at("x", 0.0).unwrap() - 2.0).abs() < 1e-9);
    assert!((result.final_value("x").unwrap() - 2.0).abs() < 1e-9);
}

#[test]
fn a_delay_time_that_is_not_a_constant_positive_parameter_is_refused() {
    let mut session = eqm::Session::with_sources(
        &[(
            "m.eqm".to_string(),
            "model M
  Real x(start = 1, fixed = true);
equation
  der(x) = -delay(x, 1 + x);
end M;
"
            .to_string(),
        )],
        &[],
        None,
    );
    assert!(session.check(None, &eqm::ModelOptions::default()).is_none());
    assert!(session.diagnostics().iter().any(|d| d.code == "E0608"));
    let mut model = compile(
        "model M
  parameter Real d = 0;
  Real x(start = 1, fixed = true);
equation
  der(x) = -delay(x, d);
end M;
",
    );
    let Err(RunError::Failed { diagnostic, .. }) = model.simulate(&RunSettings::default()) else {
        panic!("a zero delay runs")
    };
    assert_eq!(diagnostic.expect("a diagnostic").code, "E0714");
}

#[test]
fn the_delayed_logistic_example_matches_the_method_of_steps() {
    // Reference: Heun's method on a grid of step 1e-4 that contains t - tau exactly, so the
    // history is read without interpolation (second order: about 1e-7 relative here).
    let (r, k, tau, n0) = (1.0, 100.0, 2.0, 10.0);
    let h = 1e-4;
    let lag = (tau / h) as usize;
    let mut n = vec![n0];
    let history = |n: &[f64], i: usize| if i >= lag { n[i - lag] } else { n0 };
    for i in 0..(20.0 / h) as usize {
        let now = n[i];
        let k1 = r * now * (1.0 - history(&n, i) / k);
        let k2 = r * (now + h * k1) * (1.0 - history(&n, i + 1) / k);
        n.push(now + h / 2.0 * (k1 + k2));
    }
    let text = crate::example("delayed_logistic.eqm");
    let result = run(&text, 20.0, None);
    for t in [2.0, 5.0, 10.0, 15.0, 20.0] {
        let expected = n[(t / h).round() as usize];
        let found = result.value_at("N", t).unwrap();
        assert!(
            (found - expected).abs() < 1e-4 * expected,
            "N({t}) = {found}, expected {expected}"
        );
    }
}

/// A run of `model` to `stop` by both back ends (compared bit for bit) at tolerances 1e-9, with
/// rows every 0.1 s.
fn run_tight_both(model: &str, stop: f64) -> eqm::SimulationResult {
    crate::run_both_back_ends(
        model,
        RunSettings {
            stop: Some(stop),
            interval: Some(0.1),
            rtol: Some(1e-9),
            atol: Some(1e-9),
            ..RunSettings::default()
        },
    )
}

#[test]
fn a_delay_time_that_changes_reads_the_history_at_time_minus_the_delay() {
    // y = delay(time, d, 2) with d = 1 + sin(time)/2 is time - d once time - d > 0 (from the
    // root t* of t - 1 - sin(t)/2, about 1.4987), and time at the start (0) before. z
    // integrates it: z = (t - 1)²/2 + cos(t)/2 - ((t* - 1)²/2 + cos(t*)/2) after t*, 0 before.
    let model = "model M
  Real y;
  Real z(start = 0, fixed = true);
equation
  y = delay(time, 1 + 0.5*sin(time), 2);
  der(z) = y;
end M;
";
    let mut root: f64 = 1.5;
    for _ in 0..50 {
        root -= (root - 1.0 - 0.5 * root.sin()) / (1.0 - 0.5 * root.cos());
    }
    let antiderivative = |t: f64| (t - 1.0).powi(2) / 2.0 + t.cos() / 2.0;
    let result = run_tight_both(model, 6.0);
    for k in 0..=60 {
        let t = k as f64 * 0.1;
        let y = result.value_at("y", t).unwrap();
        let z = result.value_at("z", t).unwrap();
        let (y_exact, z_exact) = if t <= root {
            (0.0, 0.0)
        } else {
            (t - 1.0 - 0.5 * t.sin(), antiderivative(t) - antiderivative(root))
        };
        assert!((y - y_exact).abs() < 1e-9, "y({t}) = {y}, expected {y_exact}");
        assert!((z - z_exact).abs() < 1e-6, "z({t}) = {z}, expected {z_exact}");
    }
}

#[test]
fn a_varying_delay_of_a_state_follows_the_method_of_steps() {
    // x' = -x(t - d) with x = 1 up to the start and d = 1 + t/4 (so d <= 2 for t <= 4): x = 1 - t
    // while t - d <= 0 (t <= 4/3); after it x' = -(1 - (t - d)) = -(1 - 3t/4 + 1), so
    // x(t) = x(4/3) - 2(t - 4/3) + 3/8 (t² - 16/9) up to t = 8/3 (where t - d reaches 4/3).
    let model = "model M
  Real x(start = 1, fixed = true);
equation
  der(x) = -delay(x, 1 + time/4, 2);
end M;
";
    let exact = |t: f64| {
        if t <= 4.0 / 3.0 {
            1.0 - t
        } else {
            -1.0 / 3.0 - 2.0 * (t - 4.0 / 3.0) + 0.375 * (t * t - 16.0 / 9.0)
        }
    };
    let result = run_tight_both(model, 2.6);
    for k in 0..=26 {
        let t = k as f64 * 0.1;
        let x = result.value_at("x", t).unwrap();
        assert!((x - exact(t)).abs() < 1e-6, "x({t}) = {x}, expected {}", exact(t));
    }
}

#[test]
fn a_delay_time_outside_zero_to_its_largest_delay_stops_the_run() {
    // The delay time 1 + time exceeds delayMax = 2 after t = 1; 1 - time is negative after 1.
    for (delay, shown) in [("1 + time", "exceeds"), ("1 - time", "negative")] {
        let model = format!(
            "model M
  Real y;
equation
  y = delay(sin(time), {delay}, 2);
end M;
"
        );
        for interpreter in [false, true] {
            let outcome = compile(&model).simulate(&RunSettings {
                stop: Some(3.0),
                interpreter,
                ..RunSettings::default()
            });
            let Err(RunError::Failed { time, diagnostic, .. }) = outcome else {
                panic!("{shown}: the run does not stop")
            };
            let diagnostic = diagnostic.expect("a diagnostic");
            assert_eq!(diagnostic.code, "E0714", "{shown}: {}", diagnostic.message);
            assert!(
                diagnostic.message.contains("between 0 and the largest delay 2"),
                "{}",
                diagnostic.message
            );
            assert!((1.0..1.1).contains(&time), "{shown}: stopped at {time}");
        }
    }
}

#[test]
fn a_delay_time_that_changes_needs_a_largest_delay_and_no_cycle_through_itself() {
    let cases = [
        ("delay(x, 1 + x)", "delayMax"),
        ("delay(x, 1 + x, m)", "parameter expression"),
        // w reads the delayed value whose delay time reads w.
        ("delay(x, 1 + w, 2)", "its own delayed value"),
    ];
    for (call, shown) in cases {
        let cycle = shown.contains("own");
        let text = format!(
            "model M
  Real x(start = 1, fixed = true);
  Real w;
  Real m = time;
equation
  w = if {cycle} then 0.1*delay(x, 1 + w, 2) else 0;
  der(x) = -{call};
end M;
"
        );
        let mut session = eqm::Session::with_sources(&[("m.eqm".to_string(), text)], &[], None);
        assert!(session.check(None, &eqm::ModelOptions::default()).is_none(), "{call}");
        let diagnostic = session
            .diagnostics()
            .iter()
            .find(|d| d.code == "E0608")
            .unwrap_or_else(|| panic!("{call}: no E0608"));
        let text = format!("{} {}", diagnostic.message, diagnostic.help.clone().unwrap_or_default());
        assert!(text.contains(shown), "{call}: {text}");
    }
}

#[test]
fn a_delay_time_may_change_at_events_through_a_discrete_variable() {
    // d is 1 until the event at t = 2, then 1.5: y = delay(time, d, 2) is 0 (time at the
    // start) up to t = 1, t - 1 up to 2, and t - 1.5 after.
    let model = "model M
  discrete Real d(start = 1, fixed = true);
  Real y;
equation
  when time > 2 then
    d = 1.5;
  end when;
  y = delay(time, d, 2);
end M;
";
    let result = run_tight_both(model, 4.0);
    for (t, expected) in [(0.5, 0.0), (1.5, 0.5), (1.9, 0.9), (2.1, 0.6), (3.0, 1.5), (4.0, 2.5)] {
        let y = result.value_at("y", t).unwrap();
        assert!((y - expected).abs() < 1e-9, "y({t}) = {y}, expected {expected}");
    }
}

#[test]
fn a_fixed_delay_longer_than_its_largest_delay_and_wrong_call_shapes_are_refused() {
    let mut model = compile(
        "model M
  Real y;
equation
  y = delay(sin(time), 2, 1);
end M;
",
    );
    let Err(RunError::Failed { diagnostic, .. }) = model.simulate(&RunSettings::default()) else {
        panic!("a delay of 2 with delayMax = 1 runs")
    };
    let diagnostic = diagnostic.expect("a diagnostic");
    assert_eq!(diagnostic.code, "E0714");
    assert!(
        diagnostic.message.contains("exceeds its largest delay 1"),
        "{}",
        diagnostic.message
    );
    for call in ["delay(time)", "delay(time, 1, 2, 3)"] {
        let text = format!("model M\n  Real y;\nequation\n  y = {call};\nend M;\n");
        let mut session = eqm::Session::with_sources(&[("m.eqm".to_string(), text)], &[], None);
        assert!(session.check(None, &eqm::ModelOptions::default()).is_none(), "{call}");
        assert!(session.diagnostics().iter().any(|d| d.code == "E0309"), "{call}");
    }
}

#[test]
fn a_delay_time_may_read_an_algebraic_variable_a_derivative_and_another_delayed_value() {
    // d = 1 + sin(time)/2 is an algebraic variable: y = delay(time, d, 2) is time - d once
    // time - d > 0 (from the root of t - 1 - sin(t)/2), 0 before. u reads the delayed value y
    // in its delay time: u = time - (1 + y/10) once that is positive, 0 before. v reads the
    // derivative of s = sin(time)/2: v = time - (1 + cos(time)/2) once positive, 0 before.
    let model = "model M
  Real d;
  Real y;
  Real u;
  Real s(start = 0, fixed = true);
  Real v;
equation
  d = 1 + 0.5*sin(time);
  y = delay(time, d, 2);
  u = delay(time, 1 + 0.1*y, 2);
  der(s) = 0.5*cos(time);
  v = delay(time, 1 + der(s), 2);
end M;
";
    let newton_root = |f: &dyn Fn(f64) -> f64, df: &dyn Fn(f64) -> f64| {
        let mut root: f64 = 1.5;
        for _ in 0..50 {
            root -= f(root) / df(root);
        }
        root
    };
    let y_root = newton_root(&|t| t - 1.0 - 0.5 * t.sin(), &|t| 1.0 - 0.5 * t.cos());
    let v_root = newton_root(&|t| t - 1.0 - 0.5 * t.cos(), &|t| 1.0 + 0.5 * t.sin());
    let y_exact = |t: f64| if t <= y_root { 0.0 } else { t - 1.0 - 0.5 * t.sin() };
    let u_exact = |t: f64| (t - 1.0 - 0.1 * y_exact(t)).max(0.0);
    let v_exact = |t: f64| if t <= v_root { 0.0 } else { t - 1.0 - 0.5 * t.cos() };
    let result = run_tight_both(model, 6.0);
    for k in 0..=60 {
        let t = k as f64 * 0.1;
        for (name, exact) in [("y", y_exact(t)), ("u", u_exact(t)), ("v", v_exact(t))] {
            let value = result.value_at(name, t).unwrap();
            assert!((value - exact).abs() < 1e-8, "{name}({t}) = {value}, expected {exact}");
        }
    }
}

#[test]
fn an_assertion_reads_delayed_values_and_stops_the_run_where_they_differ() {
    // x is y + 1 delayed by 2.5 s, the assertion compares it with y + 1 delayed by 2 s: both
    // are the value at the start, 1, until t = 2, after which the shorter delay reads
    // sin(t - 2) + 1 > 1. The run stops there, not before.
    let model = "model M
  Real y;
  Real x;
equation
  y = sin(time);
  x = delay(y + 1, 2.5);
  assert(abs(x - delay(y + 1, 2.0)) < 1e-6, \"x differs from y + 1 two seconds earlier\");
end M;
";
    let mut compiled = compile(model);
    let Err(RunError::Failed { time, diagnostic, .. }) = compiled.simulate(&RunSettings {
        stop: Some(3.0),
        ..RunSettings::default()
    }) else {
        panic!("the assertion on the delayed values did not stop the run")
    };
    assert_eq!(diagnostic.expect("a diagnostic").code, "E0705");
    // sin(t - 2) reaches 1e-6 a microsecond after 2.
    assert!((time - 2.0).abs() < 1e-3, "stopped at {time}");
}
