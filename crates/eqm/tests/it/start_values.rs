//! Start values given by expressions of other variables' start values: evaluated before
//! initialization in dependency order, used as fixed initial values and as first guesses,
//! following the parameters they read between runs, and a cycle among them is an error.

use crate::compile;
use crate::simulate::settings;
use eqm::{ModelOptions, Session};

/// x starts from twice the start value of the state y0: x(0) = 3, and der(x) = -x.
const TWICE: &str = "model S
  Real x(start = 2*y0, fixed = true);
  Real y0(start = 1.5, fixed = true);
equation
  der(x) = -x;
  der(y0) = 0;
end S;";

/// The diagnostics of compiling model `name` of `text`, which must fail.
fn errors(text: &str, name: &str) -> Vec<eqm::Diagnostic> {
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    let model = session.compile(Some(name), &ModelOptions::default());
    assert!(model.is_none(), "compiles");
    session.diagnostics().to_vec()
}

#[test]
fn a_fixed_start_value_reads_another_states_start_value() {
    // x(0) = 2*y0(0) = 3, der(x) = -x: x(1) = 3 e^-1.
    let result = compile(TWICE).simulate(&settings(1.0)).expect("runs");
    let x = result.final_value("x").unwrap();
    assert!((x - 3.0 * (-1.0f64).exp()).abs() < 1e-8, "x(1) = {x}");
    assert!((result.value_at("x", 0.0).unwrap() - 3.0).abs() < 1e-12);
}

#[test]
fn a_chain_of_start_expressions_is_evaluated_in_dependency_order() {
    // Declared against their order: a = 1, b = a + 1 = 2, c = 2*b = 4; der(c) = -c.
    let text = "model Chain
      Real c(start = 2*b, fixed = true);
      Real b(start = a + 1, fixed = true);
      Real a(start = 1, fixed = true);
    equation
      der(c) = -c;
      der(b) = 0;
      der(a) = 0;
    end Chain;";
    let result = compile(text).simulate(&settings(1.0)).expect("runs");
    assert!((result.final_value("b").unwrap() - 2.0).abs() < 1e-12);
    let c = result.final_value("c").unwrap();
    assert!((c - 4.0 * (-1.0f64).exp()).abs() < 1e-8, "c(1) = {c}");
}

#[test]
fn a_start_expression_follows_its_parameter_without_recompiling_and_an_override_wins() {
    let text = "model P
      parameter Real p = 2;
      Real y0(start = p, fixed = true);
      Real x(start = 3*y0, fixed = true);
    equation
      der(x) = -x;
      der(y0) = 0;
    end P;";
    let mut model = compile(text);
    let e = (-1.0f64).exp();
    let first = model.simulate(&settings(1.0)).unwrap();
    assert!((first.final_value("x").unwrap() - 6.0 * e).abs() < 1e-8);
    model.set_parameter("p", 4.0).unwrap();
    let second = model.simulate(&settings(1.0)).unwrap();
    assert!((second.final_value("x").unwrap() - 12.0 * e).abs() < 1e-8);
    assert!((second.final_value("y0").unwrap() - 4.0).abs() < 1e-12);
    assert_eq!(second.summary.compile_time, std::time::Duration::ZERO);
    // A start value set for the run replaces the expression.
    model.set_start("x", 5.0).unwrap();
    let third = model.simulate(&settings(1.0)).unwrap();
    assert!((third.final_value("x").unwrap() - 5.0 * e).abs() < 1e-8);
    // The start value of y0 was read by x's: it cannot be changed alone.
    let refused = model.set_start("y0", 1.0).unwrap_err();
    assert_eq!(refused.code, "E0715");
    assert!(refused.message.contains("`x`"), "{}", refused.message);
}

#[test]
fn a_start_expression_as_first_guess_selects_the_root() {
    // y^2 + y = 2 has the roots 1 and -2. Newton from the default guess 0 reaches 1; from the
    // guess 2*s = -3 it reaches -2.
    let text = "model Root
      Real s(start = -1.5, fixed = true);
      Real y(start = 2*s);
      Real x(start = 0, fixed = true);
    equation
      der(s) = 0;
      y^2 + y = 2 + 0*x;
      der(x) = y;
    end Root;";
    let mut model = compile(text);
    let result = model.simulate(&settings(1.0)).unwrap();
    assert!((result.final_value("y").unwrap() + 2.0).abs() < 1e-9);
    assert!((result.final_value("x").unwrap() + 2.0).abs() < 1e-8);
    // A guess set for the run replaces the expression: from 2 Newton reaches 1.
    model.set_start("y", 2.0).unwrap();
    let result = model.simulate(&settings(1.0)).unwrap();
    assert!((result.final_value("y").unwrap() - 1.0).abs() < 1e-9);
}

#[test]
fn a_discrete_variable_starts_from_its_start_expression() {
    // d = 2*1.5 = 3 until the when-clause adds 1 at t = 0.5: x(1) = 3*0.5 + 4*0.5 = 3.5.
    let text = "model D
      Real y0(start = 1.5, fixed = true);
      discrete Real d(start = 2*y0);
      Real x(start = 0, fixed = true);
    equation
      der(y0) = 0;
      when time > 0.5 then
        d = pre(d) + 1;
      end when;
      der(x) = d;
    end D;";
    let result = compile(text).simulate(&settings(1.0)).expect("runs");
    assert!((result.value_at("d", 0.25).unwrap() - 3.0).abs() < 1e-12);
    assert!((result.final_value("d").unwrap() - 4.0).abs() < 1e-12);
    let x = result.final_value("x").unwrap();
    assert!((x - 3.5).abs() < 1e-6, "x(1) = {x}");
}

#[test]
fn a_cycle_of_start_expressions_is_an_error_naming_its_variables() {
    // Within one model and through a component's modification.
    let within = "model Cycle
      Real a(start = b + 1, fixed = true);
      Real b(start = 2*a, fixed = true);
    equation
      der(a) = -a;
      der(b) = -b;
    end Cycle;";
    let through = "model C
      Real b;
    equation
      der(b) = -b;
    end C;
    model Cycle
      Real a(start = c.b + 1, fixed = true);
      C c(b(start = 2*a, fixed = true));
    equation
      der(a) = -a;
    end Cycle;";
    for text in [within, through] {
        let errors = errors(text, "Cycle");
        let cycle = errors
            .iter()
            .find(|d| d.code == "E0216")
            .unwrap_or_else(|| panic!("{errors:?}"));
        assert!(cycle.message.contains("`a` depends on itself"), "{}", cycle.message);
    }
}

#[test]
fn a_start_value_that_reads_a_changing_value_is_still_an_error() {
    // `pre(y)` and `time` have no value before the initialization.
    for start in ["pre(y)", "time"] {
        let text = format!(
            "model T
      Real x(start = {start}, fixed = true);
      Real y(start = 1, fixed = true);
    equation
      der(x) = -x;
      der(y) = 0;
    end T;"
        );
        assert!(errors(&text, "T").iter().any(|d| d.code == "E0603"), "start = {start}");
    }
}

#[test]
fn the_flat_model_shows_the_start_expression() {
    let mut session = Session::with_sources(&[("m.eqm".to_string(), TWICE.to_string())], &[], None);
    let flat = session
        .flatten(None, &ModelOptions::default())
        .expect("flattens")
        .print();
    assert!(flat.contains("start = 2*y0"), "{flat}");
}

#[test]
fn a_fixed_start_value_reading_a_variable_an_equation_defines_uses_its_initial_value() {
    // Modelica's fixed start value is the initial equation x = 2*y0 with y0 at its initial value
    // 1 + 0 = 1 (not y0's default start value 0): x(0) = 2, x(1) = 2 e^-1; z(0) = x(0) + 1 = 3
    // through a chain.
    let text = "model V
      Real y0 = 1 + time;
      Real x(start = y0*2, fixed = true);
      Real z(start = x + 1, fixed = true);
    equation
      der(x) = -x;
      der(z) = 0;
    end V;";
    let result = compile(text).simulate(&settings(1.0)).expect("runs");
    assert!((result.value_at("x", 0.0).unwrap() - 2.0).abs() < 1e-12);
    assert!((result.final_value("z").unwrap() - 3.0).abs() < 1e-12);
    let x = result.final_value("x").unwrap();
    assert!((x - 2.0 * (-1.0f64).exp()).abs() < 1e-6, "x(1) = {x}");
}

/// The warning for assumed start values names the first twenty states and counts the others:
/// a chain of a million states must not print a million names.
#[test]
fn the_warning_for_assumed_start_values_names_twenty_states_and_counts_the_rest() {
    let text = "model Many\n  Real x[25];\nequation\n  der(x) = -x;\nend Many;\n";
    let mut session = eqm::Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    assert!(session.compile(None, &eqm::ModelOptions::default()).is_some());
    let warning = session.diagnostics().iter().find(|d| d.code == "W0502").expect("W0502");
    assert!(
        warning.message.contains("x[20] = 0") && !warning.message.contains("x[21]"),
        "{}",
        warning.message
    );
    assert!(warning.message.ends_with("and 5 more"), "{}", warning.message);
}
