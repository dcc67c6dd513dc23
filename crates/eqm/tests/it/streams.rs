//! Messages built during the run and `Modelica.Utilities`: `String(v, ...)` with the options of
//! Modelica, `Streams.print` in when-clauses and when-statements (its lines handed to
//! the sink as the run reaches them), `Streams.error` stopping the run, assertions whose
//! messages show values of the moment they fail, and the string functions, each against text
//! formatted by hand with C's `printf` rules, on both back ends.

use crate::{compile, run_both_back_ends};
use eqm::{RowSink, RunError, RunSettings, Session};

/// The lines a run printed, each with its time.
pub(crate) fn printed_lines(r: &eqm::SimulationResult) -> Vec<(f64, String)> {
    r.summary
        .events
        .printed
        .iter()
        .map(|l| (l.time, l.text.clone()))
        .collect()
}

/// The lines `text` prints in a run to `stop`, from native code and the interpreter, checked
/// to be the same lines at the same times.
pub(crate) fn printed(text: &str, stop: f64) -> Vec<(f64, String)> {
    let settings = RunSettings {
        stop: Some(stop),
        ..RunSettings::default()
    };
    let native = run_both_back_ends(text, settings.clone());
    let interpreted = compile(text)
        .simulate(&RunSettings {
            interpreter: true,
            ..settings
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let lines = printed_lines;
    assert_eq!(
        lines(&native),
        lines(&interpreted),
        "the back ends print different lines"
    );
    lines(&native)
}

/// The texts of `lines`.
pub(crate) fn texts(lines: &[(f64, String)]) -> Vec<&str> {
    lines.iter().map(|(_, t)| t.as_str()).collect()
}

/// The diagnostics of `check` on `text`: (code, message) of each.
fn check_codes(text: &str) -> Vec<(String, String)> {
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    let _ = session.check(None, &eqm::ModelOptions::default());
    session
        .diagnostics()
        .iter()
        .map(|d| (d.code.to_string(), d.message.clone()))
        .collect()
}

const SAMPLED: &str = r#"
model Sampled
  Real x(start = 1, fixed = true);
equation
  der(x) = -x;
  when sample(0, 0.25) then
    Modelica.Utilities.Streams.print("t = " + String(time) + ", x = " + String(x, significantDigits = 3));
  end when;
end Sampled;
"#;

#[test]
fn a_sampled_model_prints_each_sample_with_three_significant_digits() {
    let lines = printed(SAMPLED, 1.0);
    // x = exp(-t): 0.77880078, 0.60653066, 0.47236655, 0.36787944, rounded to three digits
    // as printf("%.3g") does; the time as printf("%.6g").
    assert_eq!(
        texts(&lines),
        [
            "t = 0, x = 1",
            "t = 0.25, x = 0.779",
            "t = 0.5, x = 0.607",
            "t = 0.75, x = 0.472",
            "t = 1, x = 0.368",
        ]
    );
    let times: Vec<f64> = lines.iter().map(|(t, _)| *t).collect();
    assert_eq!(times, [0.0, 0.25, 0.5, 0.75, 1.0]);
}

/// What a sink receives, in order.
#[derive(Debug, PartialEq)]
enum Received {
    Row(f64),
    Line(f64, String),
}

/// A sink that records what it receives.
struct Recorder(Vec<Received>);

impl RowSink for Recorder {
    fn row(&mut self, time: f64, _values: &[f64]) -> std::io::Result<()> {
        self.0.push(Received::Row(time));
        Ok(())
    }

    fn print(&mut self, time: f64, line: &str) -> std::io::Result<()> {
        self.0.push(Received::Line(time, line.to_string()));
        Ok(())
    }
}

#[test]
fn printed_lines_reach_the_sink_before_the_first_row_after_them() {
    let mut model = compile(SAMPLED);
    let settings = RunSettings {
        stop: Some(1.0),
        interval: Some(0.1),
        ..RunSettings::default()
    };
    let (_, plan) = model.plan_run(&settings, &[]);
    let plan = plan.expect("a plan");
    let mut recorder = Recorder(Vec::new());
    let report = model
        .simulate_into(&plan.settings, &plan.columns, &mut recorder)
        .expect("the run finishes");
    let received = recorder.0;
    let lines: Vec<(f64, String)> = received
        .iter()
        .filter_map(|r| match r {
            Received::Line(t, text) => Some((*t, text.clone())),
            Received::Row(_) => None,
        })
        .collect();
    let kept: Vec<(f64, String)> = report
        .summary
        .events
        .printed
        .iter()
        .map(|l| (l.time, l.text.clone()))
        .collect();
    assert_eq!(lines, kept, "the sink gets every line the summary keeps");
    assert_eq!(lines.len(), 5);
    // Each line comes after every row before its time and before every row after it.
    for (k, r) in received.iter().enumerate() {
        let Received::Line(t, _) = r else { continue };
        for before in &received[..k] {
            if let Received::Row(s) = before {
                assert!(s <= t, "a row at {s} came before the line printed at {t}");
            }
        }
        for after in &received[k + 1..] {
            if let Received::Row(s) = after {
                assert!(s >= t, "a row at {s} came after the line printed at {t}");
            }
        }
    }
}

#[test]
fn string_options_format_as_printf_does() {
    let text = r#"
model Options
  type Mode = enumeration(Idle, Heating);
  parameter Real p = 2.0/3.0;
  parameter Integer k = 42;
  Real x(start = 1, fixed = true);
  Integer n(start = 0, fixed = true);
equation
  der(x) = -x;
  when time > 0.5 then
    n = 7;
    Modelica.Utilities.Streams.print("[" + String(p) + "][" + String(p, significantDigits = 2) + "][" + String(p, format = "8.3f") + "]");
    Modelica.Utilities.Streams.print("[" + String(k, minimumLength = 5) + "][" + String(k, minimumLength = 5, leftJustified = false) + "][" + String(k, format = "05d") + "][" + String(k, format = "x") + "]");
    Modelica.Utilities.Streams.print("[" + String(n, minimumLength = 3, leftJustified = false) + "][" + String(x > 0.5, minimumLength = 6) + "][" + String(Mode.Heating, minimumLength = 9, leftJustified = false) + "]");
    Modelica.Utilities.Streams.print("[" + String(x, format = ".4e") + "][" + String(1e6*x, significantDigits = 4) + "][" + String(x/1e5) + "][" + String(x, format = "+.2f") + "]");
  end when;
end Options;
"#;
    let lines = printed(text, 1.0);
    // x = exp(-0.5) = 0.60653066 at the event; by hand with C's printf: %.6g, %.2g, %8.3f of
    // 2/3; %-5d, %5d, %05d, %x of 42; %3d of 7 (n is assigned before the print reads it);
    // "true" padded to 6 on the right; "Heating" padded to 9 on the left; %.4e, %.4g of
    // 606530.66, %.6g of 6.0653066e-06, %+.2f.
    assert_eq!(
        texts(&lines),
        [
            "[0.666667][0.67][   0.667]",
            "[42   ][   42][00042][2a]",
            "[  7][true  ][  Heating]",
            "[6.0653e-01][6.065e+05][6.06531e-06][+0.61]",
        ]
    );
    assert!(
        (lines[0].0 - 0.5).abs() < 1e-12,
        "printed at the event, t = {}",
        lines[0].0
    );
}

#[test]
fn a_when_statement_prints_the_values_its_algorithm_computed() {
    let text = r#"
model Peaks
  import Modelica.Utilities.Streams;
  Real x(start = 1, fixed = true);
  discrete Real twice(start = 0, fixed = true);
  discrete Integer count(start = 0, fixed = true);
algorithm
  when sample(0.5, 0.5) then
    twice := 2*x;
    count := pre(count) + 1;
    Streams.print("sample " + String(count) + ": 2x = " + String(twice, format = "8.4f"));
  end when;
equation
  der(x) = -x;
end Peaks;
"#;
    // 2 exp(-0.5) = 1.21306132, 2 exp(-1) = 0.73575888, 2 exp(-1.5) = 0.44626032.
    assert_eq!(
        texts(&printed(text, 1.5)),
        [
            "sample 1: 2x =   1.2131",
            "sample 2: 2x =   0.7358",
            "sample 3: 2x =   0.4463",
        ]
    );
}

#[test]
fn an_enumeration_value_that_changes_is_shown_by_its_literal_name() {
    let text = r#"
model Modes
  import Modelica.Utilities.Streams;
  type Mode = enumeration(Off, Heating, Cooling);
  Mode mode;
  discrete Integer k(start = 0, fixed = true);
equation
  when sample(0.5, 0.5) then
    k = pre(k) + 1;
    mode = if k == 1 then Mode.Heating elseif k == 2 then Mode.Cooling else Mode.Off;
    Streams.print("mode " + String(mode, minimumLength = 8, leftJustified = false) + " after " + String(pre(mode)));
  end when;
end Modes;
"#;
    // Sample 1 switches Off -> Heating, sample 2 Heating -> Cooling, sample 3 Cooling -> Off.
    assert_eq!(
        texts(&printed(text, 1.5)),
        [
            "mode  Heating after Off",
            "mode  Cooling after Heating",
            "mode      Off after Cooling",
        ]
    );
}

/// The failure of a run of `text` to `stop` on both back ends (the same message from both):
/// the message of its diagnostic.
fn failure(text: &str, stop: f64) -> String {
    let mut messages = Vec::new();
    for interpreter in [false, true] {
        let settings = RunSettings {
            stop: Some(stop),
            interpreter,
            ..RunSettings::default()
        };
        match compile(text).simulate(&settings) {
            Err(RunError::Failed { diagnostic, .. }) => {
                messages.push(diagnostic.expect("a diagnostic").message);
            }
            other => panic!("the run must fail, got {:?}", other.map(|r| r.time().len())),
        }
    }
    assert_eq!(messages[0], messages[1], "the back ends report different messages");
    messages.remove(0)
}

#[test]
fn streams_error_stops_the_run_with_its_message() {
    let text = r#"
model Stops
  Real x(start = 1, fixed = true);
equation
  der(x) = -x;
  when time > 1.2 then
    Modelica.Utilities.Streams.error("x fell to " + String(x, format = ".3e"));
  end when;
end Stops;
"#;
    // exp(-1.2) = 0.30119421.
    assert_eq!(
        failure(text, 2.0),
        "handling an event failed at time 1.2: assertion failed: x fell to 3.012e-01"
    );
}

#[test]
fn an_assertion_shows_the_value_of_the_instant_it_stopped_holding() {
    let text = r#"
model Falls
  Real x(start = 1, fixed = true);
equation
  der(x) = -x;
  assert(x > 0.5, "x fell below 0.5 at t = " + String(time, significantDigits = 4));
end Falls;
"#;
    // exp(-t) = 0.5 at t = ln 2 = 0.693147: the instant located on the solver's interpolant,
    // and the message's time, read then, to four significant digits.
    let message = failure(text, 2.0);
    let (located, rest) = message
        .strip_prefix("at t = ")
        .and_then(|m| m.split_once(' '))
        .unwrap_or_else(|| panic!("{message}"));
    let located: f64 = located.parse().expect("a time");
    assert!((located - std::f64::consts::LN_2).abs() < 1e-5, "{message}");
    assert_eq!(rest, "an assertion does not hold: x fell below 0.5 at t = 0.6931");
}

#[test]
fn the_string_functions_of_modelica_utilities_give_hand_values() {
    let text = r#"
model Strings
  import Modelica.Utilities.Strings;
  parameter Integer n = Strings.length("hello");
  parameter String middle = Strings.substring("hello", 2, 4);
  parameter Integer m = Strings.length(middle);
  parameter Modelica.Utilities.Types.Compare less = Strings.compare("abc", "abd");
  parameter Modelica.Utilities.Types.Compare same = Strings.compare("ABC", "abc", false);
  Real y;
equation
  y = n + 10*m + 100*Integer(less) + 1000*Integer(same);
  when initial() then
    Modelica.Utilities.Streams.print(middle + " " + String(less) + " " + String(same));
  end when;
end Strings;
"#;
    let result = run_both_back_ends(
        text,
        RunSettings {
            stop: Some(0.1),
            ..RunSettings::default()
        },
    );
    // length("hello") = 5, "ell" has 3 bytes, Less = 1, Equal = 2.
    let y = result.column("y").expect("y")[0];
    assert_eq!(y, 5.0 + 30.0 + 100.0 + 2000.0);
    // An enumeration value is shown by its literal's name.
    assert_eq!(texts(&printed(text, 0.1)), ["ell Less Equal"]);
}

#[test]
fn misplaced_prints_and_bad_options_are_diagnostics_at_check() {
    let cases: [(&str, &str, &str); 6] = [
        (
            "model M Real x(start = 1, fixed = true); equation der(x) = -x; Modelica.Utilities.Streams.print(\"a\"); end M;",
            "E0312",
            "`Modelica.Utilities.Streams.print` is only allowed inside a when-clause",
        ),
        (
            "model M Real x(start = 1, fixed = true); equation der(x) = -x; when time > 1 then Modelica.Utilities.Streams.print(\"a\", \"out.txt\"); end when; end M;",
            "E0325",
            "`Modelica.Utilities.Streams.print` to a file is not provided: EQM prints to the run's output only",
        ),
        (
            "model M Real x(start = 1, fixed = true); discrete Real y(start = 0, fixed = true); algorithm Modelica.Utilities.Streams.print(\"a\"); equation der(x) = -x; end M;",
            "E0312",
            "`Modelica.Utilities.Streams.print` is only allowed in a when-statement (outside its loops), a when-clause or a function called there",
        ),
        (
            "model M Real x(start = 1, fixed = true); discrete Real y(start = 0, fixed = true); algorithm when time > 1 then Modelica.Utilities.Streams.print(String(y)); y := x; end when; equation der(x) = -x; end M;",
            "E0219",
            "this `print` reads `y`, which the algorithm section assigns after it",
        ),
        (
            "model M Real x(start = 1, fixed = true); equation der(x) = -x; when time > 1 then Modelica.Utilities.Streams.print(String(x, format = \"8.3\")); end when; end M;",
            "E0309",
            "bad `format` of `String`: `8.3` has no conversion (such as `f`, `e`, `g` or `d`)",
        ),
        (
            "model M Real x(start = 1, fixed = true); equation der(x) = -x; when time > 1 then Modelica.Utilities.Streams.print(String(x, significantDigits = x)); end when; end M;",
            "E0309",
            "the option `significantDigits` of `String` must be known when the model is compiled",
        ),
    ];
    for (text, code, message) in cases {
        let found = check_codes(text);
        assert!(
            found.iter().any(|(c, m)| c == code && m == message),
            "{text}\nexpected [{code}] {message}\nfound {found:?}"
        );
    }
}
