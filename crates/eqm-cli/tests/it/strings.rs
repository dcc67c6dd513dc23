//! Strings built from values during the run, as a user meets them: the message of an assertion
//! made in a function from a number, passed on to another function that stops the run with it
//! (a call statement of a function without outputs), shown in the E0705 diagnostic by both back
//! ends; the same call when its assertion holds leaves the results alone; and a printed line
//! built from a String parameter and a value in a when-clause.

use crate::cli::{Table, eqm};

/// `limited(u)` doubles `u` and stops the run when `u` exceeds 1.5, with a message that shows
/// `u`, built in `limited` and raised by `fail`, which has no outputs.
const MODEL: &str = r#"
model Limited
  function fail
    input String why;
  algorithm
    assert(false, why);
  end fail;
  function limited
    input Real u;
    output Real y;
  algorithm
    if u > 1.5 then
      fail("u = " + String(u) + " is above " + String(1.5, significantDigits = 2));
    end if;
    y := 2*u;
  end limited;
  parameter Real k = 3;
  Real x(start = 0.6, fixed = true);
  Real y;
equation
  der(x) = -x;
  y = limited(k*x);
end Limited;
"#;

/// A scratch directory of this test process.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("eqm-strings-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn a_message_built_from_a_number_during_the_run_is_the_diagnostic_of_both_back_ends() {
    let dir = scratch("message");
    let model = dir.join("limited.eqm");
    std::fs::write(&model, MODEL).expect("written");
    let model = model.display().to_string();
    for backend in [None, Some("--interpreter")] {
        let mut args = vec!["run", model.as_str(), "--stop", "1"];
        args.extend(backend);
        let (code, _, err) = eqm(&args);
        // At the start u = 3*0.6 = 1.8 > 1.5; `String` shows six significant digits.
        assert_eq!(code, 3, "{backend:?}: {err}");
        assert!(err.contains("E0705"), "{backend:?}: {err}");
        assert!(
            err.contains("assertion failed: u = 1.8 is above 1.5"),
            "{backend:?}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_call_statement_whose_assertion_holds_leaves_the_results_alone() {
    let dir = scratch("holds");
    let model = dir.join("limited.eqm");
    // With k = 2, u = 2*0.6*exp(-t) = 1.2*exp(-t) never exceeds 1.5: y = 2.4*exp(-t).
    std::fs::write(&model, MODEL.replace("parameter Real k = 3;", "parameter Real k = 2;")).expect("written");
    let model = model.display().to_string();
    for backend in [None, Some("--interpreter")] {
        let mut args = vec!["run", model.as_str(), "--stop", "1"];
        args.extend(backend);
        let (code, out, err) = eqm(&args);
        assert_eq!(code, 0, "{backend:?}: {err}");
        let table = Table::parse(&out);
        let (t, y) = (table.column("time"), table.column("y"));
        for (t, y) in t.iter().zip(&y) {
            let exact = 2.4 * (-t).exp();
            assert!(
                (y - exact).abs() < 1e-4 * exact,
                "{backend:?}: y({t}) = {y}, exact {exact}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_printed_line_joins_a_string_parameter_and_a_value_in_a_when_clause() {
    let dir = scratch("print");
    let model = dir.join("tank.eqm");
    let text = r#"
model Tank
  parameter String name = "tank";
  Real level(start = 2, fixed = true);
equation
  der(level) = -1;
  when level < 0.5 then
    Modelica.Utilities.Streams.print(name + " low at t = " + String(time, significantDigits = 3));
  end when;
end Tank;
"#;
    std::fs::write(&model, text).expect("written");
    // level = 2 - t falls below 0.5 at t = 1.5.
    let (code, _, err) = eqm(&["run", &model.display().to_string(), "--stop", "2"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "tank low at t = 1.5\n");
    let _ = std::fs::remove_dir_all(&dir);
}
