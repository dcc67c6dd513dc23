//! Three rules of events and initialization that the Modelica Standard Library's examples rely
//! on, each against values computed by hand: a function that prints runs once per event where a
//! when-statement or when-clause calls it (also inside an if-statement there), and nowhere a
//! solver would repeat it; a relation of `time` against a discrete-time value is a time event,
//! scheduled at the exact instant however short the interval before it; and the fixed start
//! value of a state that index reduction made a dummy state is dropped when the other equations
//! determine it, and checked after the initialization.

use crate::streams::{printed, texts};
use crate::{check, compile, run_both_back_ends};
use eqm::{RunError, RunSettings, Session};

const REPORT: &str = r#"
function report "Prints one line"
  input Integer k;
  input Real x;
  output Boolean done;
algorithm
  Modelica.Utilities.Streams.print("k = " + String(k) + ", x = " + String(x, significantDigits = 4));
  done := true;
end report;

function lines "Prints n lines through report, in a loop whose range is known only during the run"
  input Integer n;
  output Integer count;
algorithm
  count := 0;
  for i in 1:n loop
    report(i, i/2);
    count := count + 1;
  end for;
end lines;

model Report
  Real x(start = 1, fixed = true);
  discrete Integer k(start = 0, fixed = true);
algorithm
  when sample(0.5, 0.5) then
    k := pre(k) + 1;
    if k == 2 then
      report(k, x);
    elseif k > 2 then
      report(-k, 2*x);
    end if;
  end when;
equation
  der(x) = -x;
  when time > 0.7 then
    lines(2);
  end when;
end Report;
"#;

#[test]
fn a_function_that_prints_prints_once_per_event_where_a_when_statement_calls_it() {
    // k = 1 at 0.5 prints nothing; at 0.7 the when-clause prints two lines through `lines`;
    // at 1.0 k = 2 and x = exp(-1) = 0.36788; at 1.5 k = 3 and 2x = 2 exp(-1.5) = 0.44626.
    let lines = printed(REPORT, 1.5);
    assert_eq!(
        texts(&lines),
        [
            "k = 1, x = 0.5",
            "k = 2, x = 1",
            "k = 2, x = 0.3679",
            "k = -3, x = 0.4463"
        ]
    );
    let times: Vec<f64> = lines.iter().map(|(t, _)| *t).collect();
    assert!((times[0] - 0.7).abs() < 1e-6 && times[1] == times[0], "{times:?}");
    assert_eq!(&times[2..], [1.0, 1.5]);
}

#[test]
fn a_function_that_prints_runs_at_the_end_in_the_branch_taken_then() {
    // `when terminal()`: the else-branch's guard is `not (n < 3)`. Samples at 0, 0.25, 0.5, ...
    // make n = 5 by t = 1 (x = exp(-1) = 0.36788) and n = 2 by t = 0.3.
    let text = REPORT
        .replace("model Report", "model Unused")
        .replace("end Report;", "end Unused;")
        + r#"
model Term
  Real x(start = 1, fixed = true);
  discrete Integer n(start = 0, fixed = true);
algorithm
  when sample(0, 0.25) then
    n := pre(n) + 1;
  end when;
  when terminal() then
    if n < 3 then
      report(n, -1);
    else
      report(n, x);
    end if;
  end when;
equation
  der(x) = -x;
end Term;
"#;
    let text = text.replace("model Unused", "partial model Unused");
    assert_eq!(texts(&printed(&text, 1.0)), ["k = 5, x = 0.3679"]);
    assert_eq!(texts(&printed(&text, 0.3)), ["k = 2, x = -1"]);
}

#[test]
fn check_starts_a_model_without_its_final_event() {
    // The assertion of `when terminal()` judges a finished run: `check`, which only starts the
    // model, accepts it; a run too short for it still fails at its end, and a long one passes.
    let text = r#"
model Judged
  Real x(start = 0, fixed = true);
equation
  der(x) = 1;
algorithm
  when terminal() then
    assert(x > 0.5, "ran too short");
  end when;
end Judged;
"#;
    assert_eq!(check_codes(text), Vec::<(String, String)>::new());
    let ran = |stop: f64| {
        let settings = RunSettings {
            stop: Some(stop),
            ..RunSettings::default()
        };
        compile(text).simulate(&settings)
    };
    let short = ran(0.2).expect_err("the final event's assertion stops a run to 0.2");
    assert!(
        short.to_string().contains("ran too short") || format!("{short:?}").contains("ran too short"),
        "{short:?}"
    );
    ran(1.0).expect("a run to 1 ends with x = 1");
}

/// The (code, message) of each diagnostic `check` gives `text`.
fn check_codes(text: &str) -> Vec<(String, String)> {
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    let _ = session.check(None, &eqm::ModelOptions::default());
    session
        .diagnostics()
        .iter()
        .map(|d| (d.code.to_string(), d.message.clone()))
        .collect()
}

#[test]
fn a_function_that_prints_is_refused_where_a_solver_would_repeat_it() {
    let function = REPORT.split("model Report").next().expect("the functions");
    let impure = "`report` prints (it calls `Modelica.Utilities.Streams.print`), so it is impure";
    let cases = [
        // In an equation, directly and through another function.
        "model M Real x(start = 1, fixed = true); Boolean b; equation der(x) = -x; b = report(1, x); end M;",
        "model M Real x(start = 1, fixed = true); Integer n; equation der(x) = -x; n = lines(2); end M;",
        // As a statement of an algorithm outside a when-statement, and in a loop inside one.
        "model M Real x(start = 1, fixed = true); discrete Real y(start = 0, fixed = true); algorithm report(1, x); equation der(x) = -x; end M;",
        "model M Real x(start = 1, fixed = true); discrete Real y(start = 0, fixed = true); algorithm when time > 1 then for i in 1:2 loop report(i, x); end for; y := x; end when; equation der(x) = -x; end M;",
    ];
    for case in cases {
        let text = format!("{function}\n{case}");
        let found = check_codes(&text);
        assert!(
            found
                .iter()
                .any(|(c, m)| c == "E0312" && (m.starts_with(impure) || m.starts_with("`lines` prints"))),
            "{case}\nfound {found:?}"
        );
    }
    // The message's values are read at the end of the event: an if-condition that the section
    // assigns after the if-statement would not be the one that chose the branch.
    let late = format!(
        "{function}\nmodel M Real x(start = 1, fixed = true); discrete Integer k(start = 0, fixed = true); algorithm when time > 1 then if k > 0 then report(k, x); end if; k := 1; end when; equation der(x) = -x; end M;"
    );
    let found = check_codes(&late);
    assert!(
        found
            .iter()
            .any(|(c, m)| c == "E0219" && m == "this `call` reads `k`, which the algorithm section assigns after it"),
        "{found:?}"
    );
}

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

/// Two states tied by a constraint (`y = 2x`), both with fixed start values: index reduction
/// keeps one of them a state, the other a dummy state. Hand solution with consistent starts:
/// f = 0, x = y0/2 exp(-t), y = y0 exp(-t).
fn tied(y0: f64) -> String {
    format!(
        "model Tied
  Real x(start = 1, fixed = true);
  Real y(start = {y0}, fixed = true);
  Real f;
equation
  der(x) = -x + f;
  der(y) = -y - 2*f;
  y = 2*x;
end Tied;
"
    )
}

#[test]
fn the_fixed_start_value_of_a_dummy_state_is_dropped_and_checked() {
    let text = tied(2.0);
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.clone())], &[], None);
    let mut model = session.compile(None, &eqm::ModelOptions::default()).expect("compiles");
    let warning = session
        .diagnostics()
        .iter()
        .find(|d| d.code == "W0505")
        .unwrap_or_else(|| panic!("no W0505: {:?}", session.diagnostics()));
    assert!(
        warning.message.contains("x = 1") || warning.message.contains("y = 2"),
        "{}",
        warning.message
    );
    let settings = RunSettings {
        stop: Some(1.0),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..RunSettings::default()
    };
    let result = model.simulate(&settings).expect("runs");
    for t in [0.0, 0.5, 1.0] {
        check(&result, "x", t, f64::exp(-t), 1e-7);
        check(&result, "y", t, 2.0 * f64::exp(-t), 1e-7);
        check(&result, "f", t, 0.0, 1e-7);
    }
    // Start values the constraint contradicts stop the run at the start.
    let mut model = compile(&tied(3.0));
    match model
        .simulate(&settings)
        .expect_err("the dropped start value does not hold")
    {
        RunError::Failed {
            diagnostic: Some(d), ..
        } => {
            assert_eq!(d.code, "E0705", "{d:?}");
            assert!(d.message.contains("dummy state"), "{}", d.message);
        }
        other => panic!("no diagnostic: {other}"),
    }
}
