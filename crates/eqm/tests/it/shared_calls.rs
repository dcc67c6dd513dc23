//! A call with several outputs assigned at once (`(a, b) := f(x)`) runs once: an external C
//! function that counts its calls in a `static` variable is called by `pair`, whose two outputs
//! are the same count, so the difference of the outputs the caller receives is 0 only when
//! both come from one call (a back end that evaluated the call once per output would give 1).
//! Checked in a when-statement of a model's algorithm and in a function body, on native code
//! and on the interpreter; skipped with a message when the machine has no `cc`. The counts
//! themselves depend on how often a run evaluates the section at an event, so they are not
//! compared, only the differences.

use crate::check;
use crate::external::{have_cc, scratch};
use eqm::{ModelOptions, RunSettings, Session};

const COUNTED: &str = r##"
function tick "how many times it has been called"
  input Real x;
  output Real n;
  external "C" n = shared_calls_tick(x) annotation(Include = "
static double shared_calls_count = 0.0;
double shared_calls_tick(double x) { (void)x; shared_calls_count += 1.0; return shared_calls_count; }");
end tick;

function pair "two outputs from one count"
  input Real x;
  output Real a;
  output Real b;
algorithm
  a := tick(x);
  b := a;
end pair;

function spread "the difference of the outputs of one call of pair, made in a function"
  input Real x;
  output Real d;
protected
  Real a;
  Real b;
algorithm
  (a, b) := pair(x);
  d := b - a;
end spread;

model Counted
  discrete Real inAlgorithm(start = -1, fixed = true);
  discrete Real inFunction(start = -1, fixed = true);
protected
  discrete Real a(start = 0, fixed = true);
  discrete Real b(start = 0, fixed = true);
algorithm
  when sample(0.25, 0.25) then
    (a, b) := pair(time);
    inAlgorithm := b - a;
    inFunction := spread(time);
  end when;
end Counted;
"##;

#[test]
fn outputs_of_one_call_come_from_one_evaluation_on_both_back_ends() {
    if !have_cc() {
        return;
    }
    let dir = scratch("shared-calls");
    for interpreter in [false, true] {
        let mut session = Session::with_sources(&[("counted.eqm".to_string(), COUNTED.to_string())], &[], None);
        session.set_external_linker(eqm_cc::SystemCompiler::new("cc", dir.join("cache")));
        let mut model = session
            .compile(None, &ModelOptions::default())
            .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
        let settings = RunSettings {
            stop: Some(1.0),
            interval: Some(0.125),
            interpreter,
            ..RunSettings::default()
        };
        let result = model.simulate(&settings).unwrap_or_else(|e| panic!("{e}"));
        // Before the first event the start values hold; after each event both differences
        // are 0.
        check(&result, "inAlgorithm", 0.125, -1.0, 0.0);
        check(&result, "inFunction", 0.125, -1.0, 0.0);
        for t in [0.375, 0.625, 0.875, 1.0] {
            check(&result, "inAlgorithm", t, 0.0, 0.0);
            check(&result, "inFunction", t, 0.0, 0.0);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
