//! The relations of a high-index model in both of its forms: the same comparison written two
//! ways (an equation and its derivative) is one relation, the embedding form's initialization
//! (the dummy-derivative form's program) gets every relation it reads from the model, and the
//! projection's invariants read the frozen relations. Each model is checked against its hand
//! solution in both forms, by native code and the interpreter.

use crate::check;
use eqm::{IndexForm, ModelOptions, RunSettings, Session, SimulationResult};

/// A voltage pulse across a 1 pF capacitor: a trapezoid from a when-clause that sets its start
/// `T0` (at `TD = 0`), rising from 0 to 10 V over `Trising = 10 ns`, then flat for `PW = 1 s`.
/// `v` is differentiated by index reduction, whose derivative writes the comparisons
/// `time < T0 + Trising` as `time < Trising + T0`. At t = 0 the rising branch holds, so v = 0;
/// then v = 1e9·t up to 10 ns and 10 after; the current is `1e-12·1e9 = 1 mA` on the ramp.
const PULSE: &str = "model PulseCap
  parameter Real V1 = 0;
  parameter Real V2 = 10;
  parameter Real TD = 0;
  parameter Real TR = 1e-8;
  parameter Real TF = 1e-8;
  parameter Real PW = 1;
  parameter Real PER = 1;
  parameter Real Trising = TR;
  parameter Real Twidth = Trising + PW;
  parameter Real Tfalling = Twidth + TF;
  Real T0(start = TD, fixed = true);
  Integer counter(start = -1, fixed = true);
  Integer counter2(start = -1, fixed = true);
  Real v;
  Real w;
  Real i;
equation
  when pre(counter2) <> 0 and sample(TD, PER) then
    T0 = time;
    counter2 = pre(counter);
    counter = pre(counter) - (if pre(counter) > 0 then 1 else 0);
  end when;
  v = V1 + (if (time < TD or counter2 == 0 or time >= T0 + Tfalling) then 0 else if (time < T0 + Trising) then (time - T0)*(V2-V1)/Trising else if (time < T0 + Twidth) then V2-V1 else (T0 + Tfalling - time)*(V2-V1)/(Tfalling - Twidth));
  w = v;
  i = 1e-12*der(w);
end PulseCap;
";

fn compile_in(text: &str, form: IndexForm) -> eqm::Model {
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    let options = ModelOptions {
        index_form: form,
        ..ModelOptions::default()
    };
    session
        .compile(None, &options)
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)))
}

/// The run of `text` in `form` by native code and by the interpreter, checked to agree bit for
/// bit: the native run.
fn run_both(text: &str, form: IndexForm, settings: RunSettings) -> SimulationResult {
    let native = compile_in(text, form)
        .simulate(&settings)
        .unwrap_or_else(|e| panic!("{e}"));
    let interpreted = compile_in(text, form)
        .simulate(&RunSettings {
            interpreter: true,
            ..settings
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(native.time(), interpreted.time(), "the back ends stop at other times");
    for column in native.columns() {
        let name = &column.name;
        assert_eq!(
            native.column(name),
            interpreted.column(name),
            "{name}: the back ends differ"
        );
    }
    native
}

fn tight(stop: f64, interval: f64) -> RunSettings {
    RunSettings {
        stop: Some(stop),
        interval: Some(interval),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..RunSettings::default()
    }
}

#[test]
fn one_comparison_written_two_ways_is_one_relation() {
    // d = time - TD, time - (T0 + Tfalling), time - (T0 + Trising), time - (T0 + Twidth): the
    // derivative's `Trising + T0` and `Twidth + T0` are the same surfaces.
    for form in [IndexForm::Dummy, IndexForm::Embedding] {
        let model = compile_in(PULSE, form);
        assert_eq!(model.form().map(|c| c.embedding), Some(form == IndexForm::Embedding));
        let surfaces = &model.program().events().surfaces;
        assert_eq!(
            surfaces.len(),
            4,
            "{form:?}: {:?}",
            surfaces.iter().map(|s| &s.text).collect::<Vec<_>>()
        );
    }
    // By default the pulse is simulated in the embedding form (the case that went wrong).
    let model = compile_in(PULSE, IndexForm::Auto);
    assert_eq!(model.form().map(|c| c.embedding), Some(true));
}

#[test]
fn pulse_starts_on_its_rising_ramp_in_both_forms() {
    for form in [IndexForm::Auto, IndexForm::Dummy, IndexForm::Embedding] {
        let r = run_both(PULSE, form, tight(3e-8, 2.5e-9));
        // The ramp v = 1e9·t from 0, then the plateau at 10 V.
        for (t, v) in [
            (0.0, 0.0),
            (2.5e-9, 2.5),
            (5e-9, 5.0),
            (7.5e-9, 7.5),
            (2e-8, 10.0),
            (3e-8, 10.0),
        ] {
            check(&r, "v", t, v, 1e-6);
            check(&r, "w", t, v, 1e-6);
        }
        // 1 mA while the voltage rises, none on the plateau.
        check(&r, "i", 0.0, 1e-3, 1e-9);
        check(&r, "i", 5e-9, 1e-3, 1e-9);
        check(&r, "i", 2e-8, 0.0, 1e-9);
    }
}

/// An equation differentiated away whose derivative has no relation (a piecewise constant
/// `w`): the initialization reads `time < 0.5` although the embedding form's right-hand side
/// does not; the invariant does, and it sets the initialization's. At the start w = 1 and
/// x = 2 (the initial equation's branch for `time < 1`); then x = 2·exp(-t).
const PIECEWISE: &str = "model Piecewise
  Real w;
  Real i;
  Real x;
initial equation
  x = if time < 1 then 2 else 3;
equation
  der(x) = -x;
  w = if time < 0.5 then 1 else 2;
  i = der(w);
end Piecewise;
";

#[test]
fn relation_only_in_an_invariant_sets_the_initialization() {
    for form in [IndexForm::Dummy, IndexForm::Embedding] {
        let r = run_both(PIECEWISE, form, tight(0.4, 0.1));
        check(&r, "w", 0.0, 1.0, 1e-9);
        check(&r, "x", 0.0, 2.0, 1e-9);
        check(&r, "w", 0.4, 1.0, 1e-9);
        check(&r, "x", 0.4, 2.0 * (-0.4f64).exp(), 1e-8);
    }
}

/// `time < T*k` and the derivative's `time < k*T` are one relation: w = 2t until t = 0.5, then
/// w = 1, in both forms.
const PRODUCT: &str = "model Product
  parameter Real k = 2;
  parameter Real T = 0.25;
  Real w;
  Real i;
equation
  w = if time < T*k then time*k else 1;
  i = der(w);
end Product;
";

#[test]
fn factors_in_another_order_are_one_relation() {
    for form in [IndexForm::Dummy, IndexForm::Embedding] {
        let model = compile_in(PRODUCT, form);
        assert_eq!(model.program().events().surfaces.len(), 1, "{form:?}");
        let r = run_both(PRODUCT, form, tight(1.0, 0.25));
        check(&r, "w", 0.0, 0.0, 1e-9);
        check(&r, "w", 0.25, 0.5, 1e-8);
        check(&r, "i", 0.25, 2.0, 1e-8);
        check(&r, "w", 1.0, 1.0, 1e-8);
        check(&r, "i", 1.0, 0.0, 1e-8);
    }
}
