//! The initial values of discrete variables and their `pre` values as Modelica defines them,
//! and the discrete semantics at events they need, through the API on both back ends: `pre` of
//! a variable an ordinary equation defines named by an initial equation, initial algorithms,
//! a state machine of two steps, initial equations that repeat one another, `pre` within the
//! event iteration, relations on discrete-time variables, `max` at its kink, an integer part
//! of a delayed value at the start, and an inertial delay whose input's fixed start differs from
//! its value. Every expected value is derived by hand in the test.

use eqm::{RunSettings, SimulationResult};

/// A run of `text` to `stop` (rows every `interval`) at rtol = atol = 1e-10 with native code and
/// with the interpreter, which must agree bit for bit; the native run is returned.
fn run_both(text: &str, stop: f64, interval: f64) -> SimulationResult {
    let settings = RunSettings {
        stop: Some(stop),
        interval: Some(interval),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..RunSettings::default()
    };
    crate::run_both_back_ends(text, settings)
}

fn close(result: &SimulationResult, name: &str, t: f64, expected: f64) {
    let actual = result
        .value_at(name, t)
        .unwrap_or_else(|| panic!("{name}: no value at {t}"));
    assert!(
        (actual - expected).abs() <= 1e-7,
        "{name}({t}) = {actual}, expected {expected}"
    );
}

#[test]
fn an_initial_equation_on_pre_of_a_when_assigned_boolean_is_its_value_until_the_clause_fires() {
    // b = pre(b) = true during the initialization (its start value says false) and until the
    // clause fires at t = 0.5: x = t up to 0.5, then slope 2, x(1) = 0.5 + 2·0.5.
    let model = "model M
  Boolean b(start = false);
  Real x(start = 0, fixed = true);
initial equation
  pre(b) = true;
equation
  der(x) = if b then 1 else 2;
  when time > 0.5 then
    b = not pre(b);
  end when;
end M;
";
    let result = run_both(model, 1.0, 0.05);
    assert_eq!(result.value_at("b", 0.0), Some(1.0));
    assert_eq!(result.value_at("b", 0.25), Some(1.0));
    assert_eq!(result.final_value("b"), Some(0.0));
    close(&result, "x", 1.0, 1.5);
}

/// A hysteresis switch: `y` keeps its value between 0.2 and 0.5, and `pre(y)` at the start is
/// `initial`.
fn hysteresis(initial: &str) -> String {
    format!(
        "model M
  parameter Boolean first = true;
  Real x(start = 0.3, fixed = true);
  Boolean y;
initial equation
  {initial}
equation
  y = pre(y) and x < 0.5 or x < 0.2;
  der(x) = if y then 1 else -1;
end M;
"
    )
}

#[test]
fn an_initial_equation_on_pre_of_a_boolean_its_own_equation_defines_chooses_its_branch() {
    // pre(y) = true: y = true at x = 0.3, x rises to 0.5 (t = 0.2), falls to 0.2 (t = 0.5) and
    // rises again: x(0.1) = 0.4, x(0.35) = 0.35, x(0.6) = 0.3.
    let result = run_both(&hysteresis("pre(y) = first;"), 1.0, 0.05);
    assert_eq!(result.value_at("y", 0.0), Some(1.0));
    close(&result, "x", 0.1, 0.4);
    close(&result, "x", 0.35, 0.35);
    close(&result, "x", 0.6, 0.3);
    // pre(y) = false: y = false, x falls to 0.2 at t = 0.1, then rises to 0.5 at t = 0.4.
    let result = run_both(&hysteresis("pre(y) = not first;"), 1.0, 0.05);
    assert_eq!(result.value_at("y", 0.0), Some(0.0));
    close(&result, "x", 0.05, 0.25);
    close(&result, "x", 0.3, 0.4);
}

#[test]
fn initial_equations_repeating_a_discrete_value_are_checked_not_rejected() {
    // Two blocks reading one signal each give its `pre` value: equal values run (with a
    // warning), different ones stop the run at the start.
    let text = hysteresis("pre(y) = first;\n  pre(y) = second;").replace(
        "parameter Boolean first = true;",
        "parameter Boolean first = true;\n  parameter Boolean second = true;",
    );
    let mut session = eqm::Session::with_sources(&[("m.eqm".to_string(), text.clone())], &[], None);
    let mut model = session.compile(None, &eqm::ModelOptions::default()).expect("compiles");
    assert!(
        session.diagnostics().iter().any(|d| d.code == "W0504"),
        "{:?}",
        session.diagnostics()
    );
    let settings = RunSettings {
        stop: Some(1.0),
        ..RunSettings::default()
    };
    let result = model.simulate(&settings).expect("runs");
    assert_eq!(result.value_at("y", 0.0), Some(1.0));
    let conflicting = text.replace("second = true", "second = false");
    let mut model = crate::compile(&conflicting);
    match model
        .simulate(&settings)
        .expect_err("the repeated equation does not hold")
    {
        eqm::RunError::Failed {
            diagnostic: Some(d), ..
        } => {
            assert_eq!(d.code, "E0705", "{d:?}");
            assert!(d.message.contains("pre(y) = second"), "{}", d.message);
        }
        other => panic!("no diagnostic: {other}"),
    }
}

#[test]
fn an_initial_algorithm_gives_the_pre_values_of_a_sections_outputs() {
    // The section's when-statement is inactive at the start, so k and y keep the values the
    // initial algorithm gives; at t = 0.5 k = 3 + 1 and y = 2·0.5 (y starts from pre(y)).
    // x(0.9) = 0.5·0.5 + 1·0.4.
    let model = "model M
  Integer k;
  discrete Real y;
  Real x(start = 0, fixed = true);
initial algorithm
  k := 3;
  y := 0.5;
equation
  der(x) = y;
algorithm
  when sample(0.5, 0.5) then
    k := pre(k) + 1;
    y := y * 2;
  end when;
end M;
";
    let result = run_both(model, 0.9, 0.05);
    assert_eq!(result.value_at("k", 0.25), Some(3.0));
    assert_eq!(result.value_at("y", 0.25), Some(0.5));
    assert_eq!(result.value_at("k", 0.75), Some(4.0));
    assert_eq!(result.value_at("y", 0.75), Some(1.0));
    close(&result, "x", 0.9, 0.65);
}

#[test]
fn a_state_machine_of_two_steps_starts_in_the_step_its_initial_equations_name() {
    // Step 1 (slope 1) until x = 1 (t = 1), step 2 (slope -2) until x = 0 (t = 1.5), step 1
    // again: x(0.5) = 0.5, x(1.25) = 0.5, x(2) = 0.5, x(2.75) = 0.5 in step 2.
    let model = "model M
  Boolean active1, active2, new1, new2, fire12, fire21;
  Real x(start = 0, fixed = true);
initial equation
  pre(new1) = true;
  pre(new2) = false;
equation
  active1 = pre(new1);
  active2 = pre(new2);
  fire12 = active1 and x > 1;
  fire21 = active2 and x < 0;
  new1 = active1 and not fire12 or fire21;
  new2 = active2 and not fire21 or fire12;
  der(x) = if active1 then 1 else -2;
end M;
";
    let result = run_both(model, 3.0, 0.25);
    assert_eq!(result.value_at("active1", 0.0), Some(1.0));
    assert_eq!(result.value_at("active2", 0.0), Some(0.0));
    close(&result, "x", 0.5, 0.5);
    assert_eq!(result.value_at("active2", 1.25), Some(1.0));
    close(&result, "x", 1.25, 0.5);
    assert_eq!(result.value_at("active1", 2.0), Some(1.0));
    close(&result, "x", 2.0, 0.5);
    assert_eq!(result.value_at("active2", 2.75), Some(1.0));
    close(&result, "x", 2.75, 0.5);
}

#[test]
fn pre_of_a_variable_its_own_equation_defines_is_the_value_before_each_pass() {
    // The edge of u lasts one pass of the event at t = 0.5; y takes true there and keeps it in
    // the next pass through pre(y), which is the value of the pass before, not the value before
    // the event.
    let model = "model M
  Boolean u = time > 0.5;
  Boolean y;
  Real x(start = 0, fixed = true);
initial equation
  pre(y) = false;
equation
  y = if edge(u) then true else pre(y);
  der(x) = if y then 1 else 0;
end M;
";
    let result = run_both(model, 1.0, 0.05);
    assert_eq!(result.value_at("y", 0.25), Some(0.0));
    assert_eq!(result.final_value("y"), Some(1.0));
    close(&result, "x", 1.0, 0.5);
}

#[test]
fn a_relation_on_an_integer_sees_its_value_in_the_same_pass() {
    // i drops to 0 at t = 0.5; the subscript v[i] is only evaluated while i > 0.
    let model = "model M
  parameter Integer v[2] = {3, 4};
  Integer i = if time > 0.5 then 0 else 2;
  Integer y = if i > 0 then v[i] else 7;
end M;
";
    let result = run_both(model, 1.0, 0.05);
    assert_eq!(result.value_at("y", 0.25), Some(4.0));
    assert_eq!(result.final_value("y"), Some(7.0));
}

#[test]
fn max_is_its_value_while_a_step_crosses_its_kink() {
    // der(h) = -sqrt(max(0, h)) from h = 1: h = (1 - t/2)² until t = 2, then 0; a branch frozen
    // at h > 0 would take the square root of a negative h inside the step that crosses 0.
    let model = "model M
  Real h(start = 1, fixed = true);
equation
  der(h) = -sqrt(max(0, h));
end M;
";
    let result = run_both(model, 3.0, 0.25);
    close(&result, "h", 1.0, 0.25);
    close(&result, "h", 1.5, 0.0625);
    let end = result.final_value("h").expect("h(3)");
    assert!(end.abs() <= 1e-6, "h(3) = {end}");
}

#[test]
fn the_integer_part_of_a_delayed_value_is_its_expression_at_the_start() {
    // Before t = 0.1 the delayed value is xr's value at the start, 2, so k = 2 and z = 20 from
    // the start on (the simulation cannot know the integer part before the initialization has
    // computed xr).
    let model = "model M
  parameter Real table[3] = {10, 20, 30};
  Real xr = if time < 5 then 2 else 3;
  Integer k = integer(delay(xr, 0.1));
  Real z = table[k];
end M;
";
    let result = run_both(model, 1.0, 0.05);
    assert_eq!(result.value_at("k", 0.0), Some(2.0));
    assert_eq!(result.value_at("z", 0.0), Some(20.0));
    assert_eq!(result.final_value("z"), Some(20.0));
}

#[test]
fn an_inertial_delay_holds_its_fixed_start_until_the_delay_has_passed() {
    // The form of the library's inertial delays: x's fixed start (1) differs from its value
    // (3), so change(x) holds during the initialization, where `not initial()` keeps the first
    // branch's second element false. The first branch fires for initial() alone and sets
    // t_next = 0.5; y keeps its fixed start 1 until then, takes x = 3 at t = 0.5, and at the
    // change of x to 4 at t = 2 the delay starts again: y = 4 from t = 2.5.
    let model = "model M
  Integer x(start = 1, fixed = true);
  Integer y(start = 1, fixed = true);
  discrete Real t_next;
equation
  x = if time < 2 then 3 else 4;
algorithm
  when {initial(), change(x) and not initial()} then
    t_next := time + 0.5;
  elsewhen time >= t_next then
    y := x;
  end when;
end M;
";
    let result = run_both(model, 3.0, 0.25);
    for (t, y) in [(0.0, 1.0), (0.25, 1.0), (1.0, 3.0), (2.25, 3.0), (2.75, 4.0)] {
        assert_eq!(result.value_at("y", t), Some(y), "y({t})");
    }
    let first = result.column("y").expect("y").first().copied();
    assert_eq!(first, Some(1.0), "y's first row");
    close(&result, "t_next", 1.0, 0.5);
    close(&result, "t_next", 2.75, 2.5);
}
