//! `der(e)` in a when-condition of variables the equations do not differentiate: the
//! derivative comes from differentiating the equations that determine `e`, and the event is
//! where it crosses, checked against closed forms on both back ends.

use crate::compile;
use eqm::{ModelOptions, RunSettings, Session};

/// The runs of `text` to `stop` by native code and by the interpreter, which agree bit for bit.
fn run_both(text: &str, stop: f64) -> eqm::SimulationResult {
    let settings = RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..RunSettings::default()
    };
    let native = compile(text).simulate(&settings).expect("runs");
    let interpreted = compile(text)
        .simulate(&RunSettings {
            interpreter: true,
            ..settings
        })
        .expect("runs");
    assert_eq!(native.time(), interpreted.time());
    for c in native.columns() {
        assert_eq!(native.column(&c.name), interpreted.column(&c.name), "{}", c.name);
    }
    native
}

#[test]
fn der_of_an_algebraic_variable_in_a_when_condition_fires_where_it_changes_sign() {
    // der(sin t) = cos t < 0 first at t = pi/2; der(2 sin t) = 2 cos t < -1 first at 2 pi/3.
    let result = run_both(
        "model M
  Real v;
  discrete Real t1(start = -1, fixed = true);
  discrete Real t2(start = -1, fixed = true);
equation
  v = sin(time);
  when der(v) < 0 then
    t1 = time;
  end when;
  when der(2*v) < -1 then
    t2 = time;
  end when;
end M;
",
        3.0,
    );
    let t1 = result.final_value("t1").unwrap();
    let t2 = result.final_value("t2").unwrap();
    assert!((t1 - std::f64::consts::FRAC_PI_2).abs() < 1e-9, "t1 = {t1}");
    assert!((t2 - 2.0 * std::f64::consts::FRAC_PI_3).abs() < 1e-9, "t2 = {t2}");
    assert_eq!(result.value_at("t1", 1.5), Some(-1.0));
}

#[test]
fn der_of_a_discrete_variable_in_a_when_condition_is_still_refused_with_the_reason() {
    let text = "model M
  discrete Real k(start = 0, fixed = true);
  discrete Real t1(start = -1, fixed = true);
equation
  when sample(0, 1) then
    k = pre(k) + 1;
  end when;
  when der(k) > 0 then
    t1 = time;
  end when;
end M;
";
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    assert!(session.compile(None, &ModelOptions::default()).is_none());
    let rendered = session.render_diagnostics(false);
    assert!(
        rendered.contains("E0602") && rendered.contains("der(...) of something that is not a state"),
        "{rendered}"
    );
}

#[test]
fn der_of_an_algebraic_variable_in_an_algorithm_condition_switches_where_it_crosses() {
    // v = time^2, so der(v) = 2 time exceeds 1 at t = 1/2 and 3 at t = 3/2.
    let result = run_both(
        "model M
  Real x(start = 0, fixed = true);
  Real v;
  Real c;
algorithm
  c := 0;
  if der(v) > 1 then
    c := 1;
  end if;
  if der(v) > 3 then
    c := 2;
  end if;
equation
  der(x) = 1;
  v = x^2;
end M;
",
        2.0,
    );
    let time = result.time();
    let c = result.column("c").unwrap();
    let first = |level: f64| time[c.iter().position(|&v| v == level).expect("reached")];
    assert!((first(1.0) - 0.5).abs() < 1e-9, "c = 1 from {}", first(1.0));
    assert!((first(2.0) - 1.5).abs() < 1e-9, "c = 2 from {}", first(2.0));
    assert_eq!(result.final_value("c"), Some(2.0));
}

#[test]
fn der_of_an_algebraic_variable_in_an_assertion_stops_the_run_where_it_fails() {
    // v = time^2: der(v) = 2 time < 1 stops holding at t = 1/2.
    let text = "model M
  Real x(start = 0, fixed = true);
  Real v;
equation
  der(x) = 1;
  v = x^2;
  assert(der(v) < 1, \"v grows too fast\");
end M;
";
    let settings = RunSettings {
        stop: Some(1.0),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..RunSettings::default()
    };
    for interpreter in [false, true] {
        let failure = compile(text)
            .simulate(&RunSettings {
                interpreter,
                ..settings.clone()
            })
            .expect_err("the assertion fails");
        let eqm::RunError::Failed { time, diagnostic, .. } = failure else {
            panic!("not a run failure: {failure}")
        };
        assert!((time - 0.5).abs() < 1e-8, "failed at {time}");
        let diagnostic = diagnostic.expect("a diagnostic");
        assert_eq!(diagnostic.code, "E0705");
        assert!(
            diagnostic.message.contains("v grows too fast"),
            "{}",
            diagnostic.message
        );
    }
}

#[test]
fn der_in_the_value_of_a_when_equation_is_sampled_at_the_event() {
    // A sample-and-hold of speeds: `phi` is an alias of the state `x` (x = sin t + 1 with
    // der(x) = cos t), `v = 3 sin t` is not differentiated by the equations. At the samples
    // t = 0, 0.5, 1, ... the held values are cos t and 3 cos t.
    let result = run_both(
        "model M
  Real x(start = 1, fixed = true);
  Real phi;
  Real v;
  discrete Real w;
  discrete Real u;
equation
  der(x) = cos(time);
  phi = x;
  v = 3*sin(time);
  when sample(0, 0.5) then
    w = der(phi);
    u = der(v);
  end when;
end M;
",
        2.2,
    );
    for (t, sampled) in [(0.25, 0.0), (0.75, 0.5), (1.3, 1.0), (2.1, 2.0)] {
        let w = result.value_at("w", t).unwrap();
        let u = result.value_at("u", t).unwrap();
        assert!((w - f64::cos(sampled)).abs() < 1e-8, "w({t}) = {w}");
        assert!((u - 3.0 * f64::cos(sampled)).abs() < 1e-8, "u({t}) = {u}");
    }
}
