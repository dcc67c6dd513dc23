//! Assertions and `terminate` in algorithm sections, and assertions of initial sections: a
//! section that assigns no variable, which only checks, checks at every point of the run; an
//! assertion of level warning reports and the run goes on; `terminate` in a when-statement ends
//! the run at its event; an initial section's assertion checks the initial values only. Each
//! against the instant the closed form x = t gives.

use eqm::{RunError, RunSettings};

fn settings(stop: f64) -> RunSettings {
    RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-12),
        ..RunSettings::default()
    }
}

/// The time and code of the failure of a run of `text` to `stop`, on both back ends (which must
/// agree).
fn failure(text: &str, stop: f64) -> (f64, String) {
    let mut found = Vec::new();
    for interpreter in [false, true] {
        let error = crate::compile(text)
            .simulate(&RunSettings {
                interpreter,
                ..settings(stop)
            })
            .expect_err("the run fails");
        let RunError::Failed { time, diagnostic, .. } = error else {
            panic!("not a run failure: {error}")
        };
        found.push((time, diagnostic.expect("a diagnostic").code.to_string()));
    }
    assert_eq!(found[0], found[1], "the back ends differ");
    found.remove(0)
}

#[test]
fn a_section_of_assertions_alone_stops_the_run_where_one_fails() {
    // x = t: the assertion x < 2 fails at t = 2. Before, the section assigned nothing, was no
    // equation of the plan and never ran.
    let (time, code) = failure(
        "model M
  Real x(start = 0, fixed = true);
algorithm
  assert(x < 2, \"x passed 2\");
equation
  der(x) = 1;
end M;
",
        3.0,
    );
    assert_eq!(code, "E0705");
    assert!((time - 2.0).abs() < 1e-8, "failed at {time}");
}

#[test]
fn an_assertion_inside_an_if_statement_holds_where_its_branch_is_not_taken() {
    // The branch is taken from t = 1 on, and the assertion x < 1.5 fails at t = 1.5; the else
    // branch's assertion x < 5 holds throughout. With the check switched off nothing fails.
    let text = "model M
  parameter Boolean check = true;
  Real x(start = 0, fixed = true);
algorithm
  if check and x > 1 then
    assert(x < 1.5, \"x passed 1.5\");
  else
    assert(x < 5, \"x passed 5\");
  end if;
equation
  der(x) = 1;
end M;
";
    let (time, _) = failure(text, 3.0);
    assert!((time - 1.5).abs() < 1e-8, "failed at {time}");
    let quiet = text.replace("check = true", "check = false");
    let result = crate::run_both_back_ends(&quiet, settings(3.0));
    assert!((result.final_value("x").unwrap() - 3.0).abs() < 1e-9);
}

#[test]
fn an_assertion_of_level_warning_in_a_section_reports_and_the_run_goes_on() {
    let result = crate::compile(
        "model M
  Real x(start = 0, fixed = true);
  Real y;
algorithm
  y := 2*x;
  assert(y < 1, \"y passed 1\", AssertionLevel.warning);
equation
  der(x) = 1;
end M;
",
    )
    .simulate(&settings(3.0))
    .expect("a warning does not stop the run");
    assert!((result.final_value("y").unwrap() - 6.0).abs() < 1e-8);
    let warnings = &result.summary.warnings;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].code, "W0701");
}

#[test]
fn terminate_in_a_when_statement_of_a_section_that_assigns_nothing_ends_the_run_at_its_event() {
    let result = crate::run_both_back_ends(
        "model M
  Real x(start = 0, fixed = true);
algorithm
  when x > 1 then
    terminate(\"x passed 1\");
  end when;
equation
  der(x) = 1;
end M;
",
        settings(3.0),
    );
    let end = *result.time().last().unwrap();
    assert!((end - 1.0).abs() < 1e-8, "the run ended at {end}");
}

#[test]
fn an_initial_section_of_assertions_checks_the_initial_values_only() {
    // x starts at 3: the initial assertion x < 2 fails at the start, and holds nowhere after
    // because it is not checked again (x = 3 + t).
    let text = "model M
  parameter Real x0 = 3;
  Real x(start = x0, fixed = true);
initial algorithm
  assert(x < 2, \"x starts too high\");
equation
  der(x) = 1;
end M;
";
    let (time, code) = failure(text, 1.0);
    assert_eq!((time, code.as_str()), (0.0, "E0705"));
    let result = crate::run_both_back_ends(&text.replace("x0 = 3", "x0 = 1"), settings(3.0));
    assert!((result.final_value("x").unwrap() - 4.0).abs() < 1e-9);
}

#[test]
fn an_assertion_of_an_initial_equation_section_checks_the_initial_values_only() {
    // x = t holds x < 2 at the start and fails it from t = 2 on, where an initial assertion is
    // no longer checked; x0 = 3 fails it at the start.
    let text = "model M
  parameter Real x0 = 0;
  Real x(start = x0, fixed = true);
initial equation
  assert(x < 2, \"x starts too high\");
equation
  der(x) = 1;
end M;
";
    let result = crate::run_both_back_ends(text, settings(3.0));
    assert!((result.final_value("x").unwrap() - 3.0).abs() < 1e-9);
    let (time, code) = failure(&text.replace("x0 = 0", "x0 = 3"), 1.0);
    assert_eq!((time, code.as_str()), (0.0, "E0705"));
}
