//! Simulations through the API: results in memory against closed forms, parameters and start
//! values changed between runs without recompiling, streaming sinks, settings and the errors
//! a front end reports.

use crate::{DECAY, compile};
use eqm::{ModelOptions, RunError, RunSettings, Session, VariableKind};

/// Tight tolerances to `stop`, for comparisons with closed forms.
pub(crate) fn settings(stop: f64) -> RunSettings {
    RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-12),
        ..RunSettings::default()
    }
}

#[test]
fn a_run_in_memory_matches_the_closed_form() {
    let mut model = compile(DECAY);
    let result = model.simulate(&settings(1.0)).expect("runs");
    let names: Vec<&str> = result.columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["x", "y"]);
    assert_eq!(result.len(), 501);
    for i in 0..result.len() {
        let (t, values) = result.row(i).expect("row");
        let x = (-2.0 * t).exp();
        assert!((values[0] - x).abs() < 1e-9, "x({t})");
        assert!((values[1] - 2.0 * x).abs() < 1e-9, "y({t})");
    }
    assert!((result.final_value("x").unwrap() - (-2.0f64).exp()).abs() < 1e-9);
    // Between rows the value is interpolated linearly: within the curvature of the row spacing.
    let between = result.value_at("x", 0.5011).unwrap();
    assert!((between - (-2.0 * 0.5011f64).exp()).abs() < 1e-5);
    let (min, max) = result.range("y").unwrap();
    assert!((max - 2.0).abs() < 1e-12 && (min - 2.0 * (-2.0f64).exp()).abs() < 1e-9);
    assert!(result.value_at("x", 2.0).is_none());
    assert!(result.column("nosuch").is_none());
}

#[test]
fn columns_carry_units_and_descriptions() {
    let model = compile(DECAY);
    let columns = model.columns(Some(&["x".to_string(), "y".to_string()])).unwrap();
    let described: Vec<_> = columns
        .iter()
        .map(|c| (c.name.as_str(), c.unit.as_deref(), c.description.as_deref()))
        .collect();
    assert_eq!(
        described,
        [("x", Some("m"), Some("amount")), ("y", None, Some("twice the amount")),]
    );
    let variables = model.variables();
    let x = variables.iter().find(|v| v.name == "x").expect("x");
    assert_eq!(x.kind, VariableKind::State);
    let parameters = model.parameters();
    let k = parameters.iter().find(|p| p.name == "k").expect("k");
    assert_eq!((k.value, k.settable, k.unit.as_deref()), (Some(2.0), true, Some("1/s")));
    let twice = parameters.iter().find(|p| p.name == "twice_k").expect("twice_k");
    assert_eq!((twice.value, twice.settable), (None, false));
}

#[test]
fn parameters_and_start_values_change_without_recompiling() {
    let mut model = compile(DECAY);
    let first = model.simulate(&settings(1.0)).unwrap();
    model.set_parameter("k", 0.5).unwrap();
    model.set_start("x", 3.0).unwrap();
    let second = model.simulate(&settings(1.0)).unwrap();
    assert!((second.final_value("x").unwrap() - 3.0 * (-0.5f64).exp()).abs() < 1e-9);
    // The dependent parameter follows.
    assert_eq!(
        model.parameters().iter().find(|p| p.name == "k").unwrap().value,
        Some(0.5)
    );
    // The native code was compiled once, for the first run.
    assert!(first.summary.compile_time > std::time::Duration::ZERO);
    assert_eq!(second.summary.compile_time, std::time::Duration::ZERO);
    model.reset();
    let third = model.simulate(&settings(1.0)).unwrap();
    assert_eq!(third.final_value("x"), first.final_value("x"));
}

#[test]
fn a_start_value_that_is_only_a_guess_changes_the_guess_not_the_answer() {
    // y is determined by y^3 + y = 2 (root 1); its start value is the Newton iteration's guess.
    let text = "model G
      Real y(start = 0.5);
      Real x(start = 0, fixed = true);
    equation
      y^3 + y = 2 + 0*x;
      der(x) = y;
    end G;";
    let mut model = compile(text);
    model.set_start("y", 3.0).unwrap();
    let result = model.simulate(&settings(1.0)).unwrap();
    assert!((result.final_value("y").unwrap() - 1.0).abs() < 1e-9);
    assert!((result.final_value("x").unwrap() - 1.0).abs() < 1e-9);
}

#[test]
fn a_fixed_start_value_set_at_run_time_fixes_the_initial_state_of_an_index_reduced_model() {
    // Two masses rigidly coupled: x2 = x1 + 1, released with the spring stretched by x1(0).
    let text = "model Rigid
      parameter Real c = 4;
      Real x1(start = 1, fixed = true);
      Real v1(start = 0, fixed = true);
      Real x2;
      Real v2;
      Real f;
    equation
      der(x1) = v1;
      der(x2) = v2;
      der(v1) = -c*x1 + f;
      der(v2) = -f;
      x2 = x1 + 1;
    end Rigid;";
    let mut model = compile(text);
    model.set_start("x1", 0.5).unwrap();
    let result = model.simulate(&settings(2.0)).unwrap();
    // Total mass 2, spring c on x1: x1 = 0.5 cos(sqrt(c/2) t).
    let w = 2.0f64.sqrt();
    for t in [0.0, 0.7, 1.3, 2.0] {
        let x1 = result.value_at("x1", t).unwrap();
        assert!((x1 - 0.5 * (w * t).cos()).abs() < 1e-4, "x1({t}) = {x1}");
    }
    assert!((result.value_at("x2", 0.0).unwrap() - 1.5).abs() < 1e-9);
}

#[test]
fn rows_stream_to_any_sink_and_a_sink_error_stops_the_run() {
    let mut model = compile(DECAY);
    let columns = model.columns(Some(&["x".to_string()])).unwrap();
    let mut seen = Vec::new();
    let report = model
        .simulate_into(&settings(1.0), &columns, &mut |t: f64, values: &[f64]| {
            seen.push((t, values[0]));
            Ok(())
        })
        .unwrap();
    assert_eq!(seen.len(), report.summary.rows);
    let mut count = 0;
    let err = model
        .simulate_into(&settings(1.0), &columns, &mut |_: f64, _: &[f64]| {
            count += 1;
            if count == 10 {
                Err(std::io::Error::other("disk full"))
            } else {
                Ok(())
            }
        })
        .expect_err("the sink stops the run");
    assert!(matches!(err, RunError::Io(_)), "{err}");
    assert_eq!(count, 10);
}

#[test]
fn csv_of_a_result_is_what_eqm_run_writes() {
    let mut model = compile(DECAY);
    let result = model
        .simulate(&RunSettings {
            stop: Some(1.0),
            interval: Some(0.5),
            variables: Some(vec!["x".to_string()]),
            ..RunSettings::default()
        })
        .unwrap();
    let mut out = Vec::new();
    result.write_csv(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0], "time,x");
    assert_eq!(lines[1], "0,1");
    assert!(lines[3].starts_with("1,0.135335"), "{text}");
}

#[test]
fn settings_and_names_that_cannot_be_used_are_reported() {
    let mut model = compile(DECAY);
    let bad = RunSettings {
        start: Some(1.0),
        stop: Some(0.5),
        ..RunSettings::default()
    };
    match model.simulate(&bad) {
        Err(RunError::Settings(message)) => assert!(message.contains("must not be before the start time"), "{message}"),
        other => panic!("{other:?}"),
    }
    let step = RunSettings {
        step: Some(0.1),
        ..RunSettings::default()
    };
    assert_eq!(
        model.check_settings(&step).unwrap(),
        ["auto controls its step size and has no fixed-step mode; --step is ignored"]
    );
    assert_eq!(
        model.set_parameter("kk", 1.0).unwrap_err().help.as_deref(),
        Some("did you mean `k`?")
    );
    assert_eq!(model.set_parameter("twice_k", 1.0).unwrap_err().code, "E0707");
    assert_eq!(model.set_parameter("k", f64::NAN).unwrap_err().code, "E0707");
    assert_eq!(model.set_start("k", 1.0).unwrap_err().code, "E0715");
    assert_eq!(
        model.set_start("xx", 1.0).unwrap_err().help.as_deref(),
        Some("did you mean `x`?")
    );
    assert_eq!(model.set_start("x", f64::INFINITY).unwrap_err().code, "E0715");
    let columns = model.columns(None).unwrap();
    let d = model.find_columns(&columns, &["yy".to_string()]).unwrap_err();
    assert_eq!((d.code, d.help.as_deref()), ("E0708", Some("did you mean `y`?")));
    assert_eq!(model.columns(Some(&["z".to_string()])).unwrap_err().code, "E0708");
}

#[test]
fn parameter_values_that_violate_the_model_stop_the_run_with_a_diagnostic() {
    let text = "model P
      parameter Real a = 1;
      Real x(start = 1, fixed = true);
    equation
      a*der(x) = -x;
    end P;";
    let mut model = compile(text);
    model.set_parameter("a", 0.0).unwrap();
    match model.simulate(&settings(1.0)) {
        Err(RunError::Model(d)) => assert_eq!(d.code, "E0704"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_sample_without_a_positive_interval_is_e0714() {
    let text = "model S
      parameter Real dt = 0;
      discrete Real n(start = 0);
    equation
      when sample(0, dt) then
        n = pre(n) + 1;
      end when;
    end S;";
    let mut model = compile(text);
    match model.simulate(&settings(1.0)) {
        Err(RunError::Failed {
            diagnostic: Some(d), ..
        }) => assert_eq!(d.code, "E0714"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn structural_parameters_change_only_by_compiling_again() {
    let text = "model Chain
      parameter Integer n = 2;
      parameter Integer m = n + 1 \"computed from n\";
      parameter Real k = 1;
      parameter Boolean damped = false;
      Real x[m](each start = 1, each fixed = true);
    equation
      for i in 1:m loop
        der(x[i]) = if damped then -2*k*x[i] else -k*x[i];
      end for;
    end Chain;";
    let mut model = compile(text);
    let structural: Vec<(String, bool)> = model.parameters().into_iter().map(|p| (p.name, p.structural)).collect();
    assert_eq!(
        structural,
        [
            ("damped".to_string(), false),
            ("k".to_string(), false),
            ("m".to_string(), true),
            ("n".to_string(), true),
        ]
    );
    let d = model.set_parameter("n", 5.0).unwrap_err();
    assert_eq!(d.code, "E0707");
    assert!(d.message.contains("without compiling again"), "{}", d.message);
    // A condition that is not structural (an if-expression) stays a run-time parameter.
    model.set_parameter("damped", 1.0).unwrap();
    let result = model.simulate(&settings(1.0)).unwrap();
    assert!((result.final_value("x[3]").unwrap() - (-2.0f64).exp()).abs() < 1e-9);
}

/// `annotation(Evaluate = true)` makes a parameter structural (changed only by compiling
/// again, `E0707` otherwise); `Evaluate = false` and other annotations leave it a run-time
/// parameter, which changes the run (`x(1) = exp(-k)`).
#[test]
fn an_evaluated_parameter_is_structural() {
    let text = "model Evaluated
      parameter Real a = 2 annotation(Evaluate = true);
      parameter Real b = 1 annotation(Evaluate = false);
      parameter Real k = 1 annotation(Dialog(group = \"x\"));
      Real x(start = 1, fixed = true);
      Real z = a + b;
    equation
      der(x) = -k*x;
    end Evaluated;";
    let mut model = compile(text);
    let structural: Vec<(String, bool)> = model.parameters().into_iter().map(|p| (p.name, p.structural)).collect();
    assert_eq!(
        structural,
        [
            ("a".to_string(), true),
            ("b".to_string(), false),
            ("k".to_string(), false)
        ]
    );
    assert_eq!(model.set_parameter("a", 3.0).unwrap_err().code, "E0707");
    model.set_parameter("b", 3.0).unwrap();
    model.set_parameter("k", 2.0).unwrap();
    let result = model.simulate(&settings(1.0)).unwrap();
    assert!((result.final_value("x").unwrap() - (-2.0f64).exp()).abs() < 1e-8);
    assert_eq!(result.final_value("z"), Some(5.0));
}

#[test]
fn a_run_whose_stop_is_its_start_writes_the_consistent_initial_values() {
    // The steady state of der(x) = 3 - x is x = 3; y = 2x.
    let mut model = compile(
        "model M
  Real x(start = 1);
  Real y = 2*x;
initial equation
  der(x) = 0;
equation
  der(x) = 3 - x;
  annotation(experiment(StartTime = 2, StopTime = 2));
end M;
",
    );
    let result = model
        .simulate(&RunSettings::default())
        .expect("an initialization-only run");
    assert_eq!(result.len(), 1);
    let (t, values) = result.row(0).unwrap();
    assert_eq!(t, 2.0);
    assert!(
        (values[0] - 3.0).abs() < 1e-12 && (values[1] - 6.0).abs() < 1e-12,
        "{values:?}"
    );
}

#[test]
fn an_interval_asking_for_too_many_rows_is_refused_where_it_was_given() {
    let mut model = compile(
        "model M
  Real x(start = 1, fixed = true);
equation
  der(x) = -x;
  annotation(experiment(StopTime = 100, Interval = 1e-7));
end M;
",
    );
    // From the annotation: a diagnostic at its location.
    match model.simulate(&RunSettings::default()) {
        Err(RunError::Model(d)) => {
            assert_eq!(d.code, "E0716");
            assert!(d.message.contains("1000000001 rows"), "{}", d.message);
        }
        other => panic!("{other:?}"),
    }
    // From the settings: a settings error.
    let given = RunSettings {
        stop: Some(1.0),
        interval: Some(1e-9),
        ..RunSettings::default()
    };
    assert!(matches!(model.check_settings(&given), Err(RunError::Settings(_))));
    // The limit can be raised, and an interval within it runs.
    let raised = RunSettings {
        stop: Some(1e-3),
        max_rows: Some(20_000),
        ..RunSettings::default()
    };
    assert_eq!(model.simulate(&raised).expect("runs").len(), 10_001);
}

#[test]
fn a_consistent_but_singular_system_is_an_error_not_one_of_its_solutions() {
    // x + y = 1 and 2x + 2y = 2 hold for every x: no run may pick one.
    let mut model = compile(
        "model M
  Real x;
  Real y;
equation
  x + y = 1;
  2*x + 2*y = 2;
end M;
",
    );
    let failure = model.simulate(&settings(1.0)).expect_err("a singular system");
    let RunError::Failed { diagnostic, .. } = failure else {
        panic!("{failure}")
    };
    let d = diagnostic.expect("a diagnostic");
    assert_eq!(d.code, "E0703");
    assert!(d.message.contains("x, y"), "{}", d.message);
    // The same loop with a regular Jacobian runs.
    let mut regular = compile(
        "model M
  Real x;
  Real y;
equation
  x + y = 1;
  2*x - 2*y = 2;
end M;
",
    );
    let result = regular.simulate(&settings(1.0)).expect("runs");
    assert_eq!(
        (result.final_value("x"), result.final_value("y")),
        (Some(1.0), Some(0.0))
    );
}

#[test]
fn a_differentiated_expression_starts_from_its_operands_start_values() {
    // der(x*y) = 1 with y = 3 held and x starting at 2: x*y = 6 + t, so x = (6 + t)/3.
    let mut model = compile(
        "model M
  Real x(start = 2);
  Real y(start = 3, fixed = true);
equation
  der(x*y) = 1;
  der(y) = 0;
end M;
",
    );
    let result = model.simulate(&settings(1.0)).expect("runs");
    for i in 0..result.len() {
        let (t, values) = result.row(i).unwrap();
        assert!((values[0] - (6.0 + t) / 3.0).abs() < 1e-9, "x({t}) = {}", values[0]);
    }
}

#[test]
fn a_step_size_that_collapses_at_a_pole_names_the_state_and_the_time_once() {
    // x = 1 - ln(1 - t) has a pole at t = 1; y is slow.
    let mut model = compile(
        "model M
  Real x(start = 1, fixed = true);
  Real y(start = 1, fixed = true);
equation
  der(x) = 1/(1 - time);
  der(y) = -y;
end M;
",
    );
    let failure = model.simulate(&settings(2.0)).expect_err("the pole stops the run");
    let RunError::Failed { time, message, .. } = failure else {
        panic!("{failure}")
    };
    assert!((time - 1.0).abs() < 1e-6, "{time}");
    assert!(
        message.contains("too small") && message.contains("x (|der(x)|"),
        "{message}"
    );
    assert!(!message.contains("at t ="), "{message}");
}

#[test]
fn a_fixed_step_beyond_an_explicit_methods_stability_limit_is_a_warning() {
    let text = "model M
  Real x(start = 1, fixed = true);
equation
  der(x) = -1000*x;
end M;
";
    let run = |step: f64| {
        let mut model = compile(text);
        let settings = RunSettings {
            stop: Some(0.1),
            step: Some(step),
            method: Some(eqm::Method::Euler),
            ..RunSettings::default()
        };
        model.simulate(&settings).expect("runs").summary.warnings
    };
    // h·|λ| = 10 > 2: unstable; 0.5 < 2: stable.
    let warnings = run(0.01);
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].code, "W0702");
    assert!(
        warnings[0].help.as_deref().unwrap().contains("below 0.002"),
        "{warnings:?}"
    );
    assert!(run(0.0005).is_empty());
}

#[test]
fn a_constraint_that_contains_time_is_kept_with_its_time_derivative() {
    // A pendulum whose suspension point moves as A sin(w t): Cartesian coordinates with the
    // constraint (x - A sin(w t))^2 + y^2 = L^2, against its angle equation
    // phi'' = -(g/L) sin(phi) + (A w^2 sin(w t)/L) cos(phi), integrated here by RK4 (an
    // independent formulation). Starting at rest relative to the support, 30 degrees out.
    let mut model = compile(
        "model M
  parameter Real L = 1;
  parameter Real g = 9.81;
  parameter Real A = 0.3;
  parameter Real w = 2;
  Real x(start = 0.5);
  Real y(start = -0.8660254037844386, fixed = true);
  Real vx;
  Real vy(start = 0, fixed = true);
  Real F;
equation
  der(x) = vx;
  der(y) = vy;
  der(vx) = -F*(x - A*sin(w*time))/L;
  der(vy) = -F*y/L - g;
  (x - A*sin(w*time))^2 + y^2 = L^2;
end M;
",
    );
    let result = model
        .simulate(&RunSettings {
            stop: Some(5.0),
            rtol: Some(1e-9),
            atol: Some(1e-9),
            ..RunSettings::default()
        })
        .expect("runs");
    let (l, g, a, w) = (1.0f64, 9.81f64, 0.3f64, 2.0f64);
    let field = |t: f64, phi: f64, om: f64| (om, -(g / l) * phi.sin() + a * w * w * (w * t).sin() / l * phi.cos());
    let (mut phi, mut om, mut t) = (std::f64::consts::FRAC_PI_6, 0.0, 0.0);
    let h = 1e-4;
    for _ in 0..50_000 {
        let k1 = field(t, phi, om);
        let k2 = field(t + h / 2.0, phi + h / 2.0 * k1.0, om + h / 2.0 * k1.1);
        let k3 = field(t + h / 2.0, phi + h / 2.0 * k2.0, om + h / 2.0 * k2.1);
        let k4 = field(t + h, phi + h * k3.0, om + h * k3.1);
        phi += h / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0);
        om += h / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1);
        t += h;
    }
    let (x, y) = (a * (w * 5.0).sin() + l * phi.sin(), -l * phi.cos());
    let (x_eqm, y_eqm) = (result.final_value("x").unwrap(), result.final_value("y").unwrap());
    assert!(
        (x_eqm - x).abs() < 1e-6 && (y_eqm - y).abs() < 1e-6,
        "({x_eqm}, {y_eqm}) vs ({x}, {y})"
    );
}

#[test]
fn a_scalar_equation_newton_cannot_start_on_is_solved_by_bracketing_from_the_start_value() {
    // cos(x) = t from x = 0, where the derivative -sin(x) is zero: the nearest root is π/2 at
    // t = 0, then x = acos(t).
    let mut model = compile(
        "model M
  Real x(start = 0);
equation
  cos(x) = time;
end M;
",
    );
    let result = model.simulate(&settings(0.5)).expect("runs");
    for i in 0..result.len() {
        let (t, values) = result.row(i).unwrap();
        assert!((values[0] - t.acos()).abs() < 1e-9, "x({t}) = {}", values[0]);
    }
    // Without a solution, the failure says where Newton started and what to try.
    let mut model = compile(
        "model M
  Real x(start = 0);
equation
  cos(x) = 2 + time;
end M;
",
    );
    let failure = model.simulate(&settings(0.5)).expect_err("no solution");
    let RunError::Failed { diagnostic, .. } = failure else {
        panic!("{failure}")
    };
    let help = diagnostic.expect("a diagnostic").help.expect("a help");
    assert!(help.contains("start values of x"), "{help}");
}

#[test]
fn states_given_by_start_values_are_initialized_by_the_model_itself() {
    // Every state has a fixed start value and nothing else is given: the initial system is the
    // model's own with x = 1, so no initialization program is built; with the same start given
    // by an initial equation, one is. Both follow x = e^{-2t}, y = 2x.
    let mut shared = compile(DECAY);
    assert!(shared.init_program().is_none());
    let own_text = DECAY
        .replace("Real x(start = 1, fixed = true, unit = \"m\")", "Real x(unit = \"m\")")
        .replace("equation\n", "initial equation\n  x = 1;\nequation\n");
    let mut own = compile(&own_text);
    assert!(own.init_program().is_some(), "{own_text}");
    for model in [&mut shared, &mut own] {
        let result = model.simulate(&settings(1.0)).expect("runs");
        assert_eq!(result.value_at("y", 0.0), Some(2.0));
        for t in [0.25, 0.5, 1.0] {
            let x = result.value_at("x", t).unwrap();
            assert!((x - (-2.0 * t).exp()).abs() < 1e-8, "x({t}) = {x}");
        }
    }
}

#[test]
fn relations_at_the_start_settle_when_the_model_initializes_itself() {
    // y is 2 at the start (x = 1 > 0.5), which the relation `y > 1.5` only sees once y has been
    // computed: its value from y's start value 0 is false, and the start must still have
    // z = 10. x crosses 0.5 at t = 0.5, then y = 1 and z = 20.
    let mut model = compile(
        "model M
  Real x(start = 1, fixed = true);
  Real y;
  Real z;
equation
  der(x) = -1;
  y = if x > 0.5 then 2 else 1;
  z = if y > 1.5 then 10 else 20;
end M;
",
    );
    assert!(model.init_program().is_none());
    let result = model.simulate(&settings(1.0)).expect("runs");
    assert_eq!(result.value_at("y", 0.0), Some(2.0));
    assert_eq!(result.value_at("z", 0.0), Some(10.0));
    assert_eq!(result.final_value("y"), Some(1.0));
    assert_eq!(result.final_value("z"), Some(20.0));
}

#[test]
fn homotopy_is_its_actual_expression_and_semilinear_is_continuous_without_events() {
    // x = e^{-t}; y = 2(x - 1/2) above 1/2, 3(x - 1/2) below.
    let mut model = compile(
        "model M
  Real x(start = 1, fixed = true);
  Real y;
equation
  der(x) = -homotopy(actual = x, simplified = 0.5*x);
  y = semiLinear(x - 0.5, 2, negativeSlope = 3);
end M;
",
    );
    let result = model.simulate(&settings(1.0)).expect("runs");
    assert_eq!(result.summary.events.events, 0);
    for i in 0..result.len() {
        let (t, values) = result.row(i).unwrap();
        let x = (-t).exp();
        let y = if x >= 0.5 { 2.0 * (x - 0.5) } else { 3.0 * (x - 0.5) };
        assert!(
            (values[0] - x).abs() < 1e-8 && (values[1] - y).abs() < 1e-8,
            "{t}: {values:?}"
        );
    }
}

#[test]
fn a_parameter_with_fixed_false_is_determined_by_the_initial_equations() {
    // p = 2 x(0) = 2, so x = e^{-2t}.
    let mut model = compile(
        "model M
  parameter Real p(fixed = false);
  Real x(start = 1, fixed = true);
initial equation
  p = 2*x;
equation
  der(x) = -p*x;
end M;
",
    );
    let result = model.simulate(&settings(1.0)).expect("runs");
    for i in 0..result.len() {
        let (t, values) = result.row(i).unwrap();
        assert!((values[0] - (-2.0 * t).exp()).abs() < 1e-9, "x({t}) = {}", values[0]);
    }
}

#[test]
fn parameters_computed_from_free_parameters_and_bound_free_parameters_are_solved_in_the_initialization() {
    // The steady state x = 2 with r = x0 + 1 = 4 (a binding with fixed = false is an equation
    // of the initialization) needs q = r / x = 2, so p = q / 2 = 1; then x stays 2, and x
    // started at 1 instead relaxes as 2 - e^{-2t}.
    let text = "model M
  parameter Real p(fixed = false, start = 3);
  parameter Real q = 2*p;
  parameter Real r(fixed = false) = x0 + 1;
  parameter Real x0 = 3;
  parameter Real xs = 2;
  Real x(start = 0);
  Real y(start = 1, fixed = true);
equation
  der(x) = -q*x + r;
  der(y) = -q*(y - xs);
initial equation
  x = xs;
  der(x) = 0;
end M;
";
    let mut model = compile(text);
    let result = model.simulate(&settings(1.0)).expect("runs");
    for i in 0..result.len() {
        let (t, _) = result.row(i).unwrap();
        let x = result.value_at("x", t).unwrap();
        assert!((x - 2.0).abs() < 1e-9, "x({t}) = {x}");
        let y = result.value_at("y", t).unwrap();
        assert!((y - (2.0 - (-2.0 * t).exp())).abs() < 1e-6, "y({t}) = {y}");
    }
}

#[test]
fn initial_equations_determine_variables_assigned_in_when_clauses() {
    // y = 3 and pre(k) = 5 at the start (their when-clause is not active then, so k = pre(k));
    // when x = e^{-t} falls below 0.5 (t = ln 2), y = 2x = 1 and k = 6.
    let mut model = compile(
        "model M
  Real x(start = 1, fixed = true);
  discrete Real y;
  Integer k;
equation
  der(x) = -x;
  when x < 0.5 then
    y = 2*x;
    k = pre(k) + 1;
  end when;
initial equation
  y = 3;
  pre(k) = 5;
end M;
",
    );
    let result = model.simulate(&settings(1.0)).expect("runs");
    assert_eq!(result.value_at("y", 0.0), Some(3.0));
    assert_eq!(result.value_at("k", 0.5), Some(5.0));
    assert!((result.final_value("y").unwrap() - 1.0).abs() < 1e-9);
    assert_eq!(result.final_value("k"), Some(6.0));
}

#[test]
fn a_fixed_start_value_wins_over_a_free_one_of_its_alias() {
    // y = x with only y's start fixed: x(0) = 5 whichever of the two alias elimination keeps,
    // and x(1) = 5/e.
    let mut model = compile(
        "model A
  Real x(start = 2);
  Real y(start = 5, fixed = true);
equation
  der(x) = -x;
  y = x;
end A;
",
    );
    let result = model
        .simulate(&RunSettings {
            stop: Some(1.0),
            interval: Some(1.0),
            rtol: Some(1e-10),
            atol: Some(1e-10),
            ..RunSettings::default()
        })
        .unwrap();
    let x = result.column("x").unwrap();
    assert_eq!(x[0], 5.0);
    assert!((x[1] - 5.0 * (-1.0f64).exp()).abs() < 1e-8, "x(1) = {}", x[1]);
}

/// Without a stop time from the settings or the model's experiment, a run ends five times the
/// model's slowest time scale after the start (here 1/k = 2 with
/// k = 0.5, and the plan says so); the run itself and the plan agree, and a given stop time stands.
#[test]
fn the_default_stop_time_is_five_slowest_time_scales() {
    let text = "model Slow
  parameter Real k = 0.5;
  Real x(start = 1, fixed = true);
equation
  der(x) = -k*x;
end Slow;";
    let mut model = compile(text);
    let (notes, plan) = model.plan_run(&RunSettings::default(), &[]);
    let plan = plan.expect("plans");
    assert_eq!(plan.settings.stop, Some(10.0), "5 T_max = 5/0.5");
    assert!(notes[0].contains("the run ends at 10, five times"), "{notes:?}");
    let result = model.simulate(&RunSettings::default()).expect("runs");
    assert_eq!(result.time().last(), Some(&10.0));
    let mut given = compile(text);
    let (notes, plan) = given.plan_run(&settings(1.0), &[]);
    assert!(notes.is_empty());
    assert_eq!(plan.unwrap().settings.stop, Some(1.0));
}

/// The plotted variables are columns of the plan, after those asked for, and a plotted name
/// the model does not have is its error before anything runs.
#[test]
fn a_plan_has_the_plotted_variables_among_its_columns() {
    let mut model = compile(DECAY);
    let asked = RunSettings {
        variables: Some(vec!["x".to_string()]),
        ..settings(1.0)
    };
    let (_, plan) = model.plan_run(&asked, &["y".to_string(), "x".to_string()]);
    let plan = plan.expect("plans");
    let names: Vec<&str> = plan.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["x", "y"]);
    assert_eq!(plan.plotted, [1, 0]);
    let (_, plan) = model.plan_run(&asked, &["nothing".to_string()]);
    assert!(matches!(plan, Err(RunError::Model(d)) if d.code == "E0708"));
}

/// A loop whose initialization plain Newton does not solve (Powell's badly scaled function from
/// (0, 1)) runs, and the run's summary says which method solved it and why Newton did not;
/// a loop Newton solves (from a start near its root) is not mentioned. The root: x1 = 1e-4/x2 with
/// exp(-x1) + exp(-x2) = 1.0001, x2 = 9.106146739867 to the digits checked.
#[test]
fn the_summary_names_the_method_that_solved_the_initialization() {
    let mut model = compile(
        "model PowellBadlyScaled
           Real x1(start = 0, nominal = 1e-5);
           Real x2(start = 1, nominal = 10);
         equation
           0 = 1e4*x1*x2 - 1;
           0 = exp(-x1) + exp(-x2) - 1.0001;
         end PowellBadlyScaled;",
    );
    let result = model.simulate(&settings(1.0)).expect("runs");
    let x2 = result.value_at("x2", 0.0).expect("x2");
    assert!((x2 - 9.106146739867).abs() < 1e-9, "x2 = {x2}");
    let x1 = result.value_at("x1", 0.0).expect("x1");
    assert!((x1 * x2 - 1e-4).abs() < 1e-18, "x1 = {x1}");
    let notes: Vec<String> = result.summary.initialization.iter().map(|n| n.to_string()).collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    let prefix = "loop of 2 unknowns {x1, x2} at initialization: solved by trust-region dogleg after Newton \
                  failed (no convergence), ";
    assert!(
        notes[0].starts_with(prefix) && notes[0].ends_with(" iterations"),
        "{notes:?}"
    );
    let mut easy = compile(
        "model Easy
           Real x(start = -1.4);
           Real y(start = 1.4);
         equation
           x^2 + y^2 = 4;
           exp(x) + x + y^3 + y = 3;
         end Easy;",
    );
    let result = easy.simulate(&settings(1.0)).expect("runs");
    assert!(
        result.summary.initialization.is_empty(),
        "{:?}",
        result.summary.initialization
    );
}

/// A model written for Modelica 2, its experiment annotation among the declarations (before
/// `equation`): it compiles (with warning W0101) and runs to the annotation's stop time,
/// `x = exp(-t)` at t = 0.5.
#[test]
fn an_annotation_among_the_declarations_is_the_class_annotation() {
    let text = "model Old
  Real x(start = 1, fixed = true);
  annotation(experiment(StopTime = 0.5));
equation
  der(x) = -x;
end Old;
";
    let mut session = Session::with_sources(&[("old.eqm".to_string(), text.to_string())], &[], None);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    assert!(session.render_diagnostics(false).contains("W0101"));
    let result = model.simulate(&RunSettings::default()).expect("the model runs");
    let last = result.len() - 1;
    let (t, values) = result.row(last).unwrap();
    assert_eq!(t, 0.5);
    assert!((values[0] - (-0.5f64).exp()).abs() < 1e-5, "{values:?}");
}
