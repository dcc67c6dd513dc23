//! Variable-structure models: equations whose branches contain different unknowns, run one
//! mode at a time with each mode's own analysis, checked against closed forms.

use crate::compile;
use crate::friction::PARAMETRIC_FRICTION;
use eqm::{ModelOptions, RunSettings, Session};

/// Two unit masses, the first pushed by a unit force, coupled by a clutch that is locked
/// (equal velocities: an index-2 constraint between states) while `locked` holds and
/// transmits no force after.
pub const CLUTCH: &str = "model Clutch
  Real v1(start = 0, fixed = true);
  Real v2(start = 0);
  Real f;
  Boolean locked = time < 1;
equation
  der(v1) = 1 - f;
  der(v2) = f;
  if locked then
    v1 = v2;
  else
    f = 0;
  end if;
end Clutch;
";

#[test]
fn a_clutch_opened_by_a_boolean_switches_from_one_rigid_body_to_two() {
    // Locked: both accelerate at 1/2 with f = 1/2; open from t = 1: v1 = 1/2 + (t - 1),
    // v2 stays 1/2, f = 0.
    let mut model = compile(CLUTCH);
    let structure = model.variable_structure().expect("a variable-structure model");
    assert_eq!(structure.atoms.len(), 1);
    assert_eq!(structure.atoms[0].text, "locked");
    let result = model
        .simulate(&RunSettings {
            stop: Some(2.0),
            interval: Some(0.125),
            ..RunSettings::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let column = |n: &str| result.column(n).unwrap();
    let (t, v1, v2, f) = (result.time().to_vec(), column("v1"), column("v2"), column("f"));
    for i in 0..t.len() {
        let (e1, e2, ef) = if t[i] < 1.0 || (t[i] == 1.0 && t[i + 1] == 1.0) {
            (t[i] / 2.0, t[i] / 2.0, 0.5)
        } else {
            (0.5 + (t[i] - 1.0), 0.5, 0.0)
        };
        assert!((v1[i] - e1).abs() < 1e-9, "v1({}) = {}", t[i], v1[i]);
        assert!((v2[i] - e2).abs() < 1e-9, "v2({}) = {}", t[i], v2[i]);
        assert!((f[i] - ef).abs() < 1e-9, "f({}) = {}", t[i], f[i]);
    }
}

#[test]
fn explain_names_what_chooses_the_structure_and_check_starts_the_run() {
    let mut session = Session::with_sources(&[("m.eqm".to_string(), PARAMETRIC_FRICTION.to_string())], &[], None);
    let text = session.explain(None, &ModelOptions::default()).unwrap();
    let section = &text[text.find("variable structure:").expect("a variable-structure section")..];
    assert!(section.contains("chosen by: s < -1, s > 1"), "{section}");
    assert!(
        section.contains("vrel = if s > 1 then s - 1 else if s < -1 then s + 1 else 0"),
        "{section}"
    );
    assert!(session.check(None, &ModelOptions::default()).is_some());
    assert!(!session.has_errors(), "{}", session.render_diagnostics(false));
}

#[test]
fn a_model_whose_branches_keep_their_unknown_is_not_variable_structure() {
    // `i = if v > 0 then v/R else 0` is solved for i in both branches: one program serves.
    let model = compile(
        "model Rectifier
  parameter Real R = 2;
  Real v = sin(time);
  Real i;
equation
  i = if v > 0 then v/R else 0;
end Rectifier;
",
    );
    assert!(model.variable_structure().is_none());
}

#[test]
fn a_start_in_a_mode_the_start_values_do_not_suggest_is_corrected_at_the_start() {
    // Without a start value for s (0: the stuck mode) the stuck mode's initialization is
    // over-determined (v is fixed and v = q); the run starts slipping, where it belongs.
    let text = PARAMETRIC_FRICTION.replace("Real s(start = -1.4);", "Real s;");
    let mut model = compile(&text);
    let result = model
        .simulate(&RunSettings {
            stop: Some(1.0),
            interval: Some(0.1),
            ..RunSettings::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let v = result.column("v").unwrap();
    let t = result.time();
    assert!((v[1] - t[1].sin()).abs() < 1e-6, "v({}) = {}", t[1], v[1]);
    assert_eq!(result.column("F").unwrap()[0], -1.0);
}

/// The first error diagnostic of a run of `text` that must fail.
fn run_failure(text: &str) -> eqm::Diagnostic {
    let failure = compile(text)
        .simulate(&RunSettings {
            stop: Some(1.0),
            ..RunSettings::default()
        })
        .expect_err("the run must fail");
    match failure {
        eqm::RunError::Failed {
            diagnostic: Some(d), ..
        } => *d,
        eqm::RunError::Model(d) => *d,
        other => panic!("no diagnostic: {other}"),
    }
}

#[test]
fn modes_that_contradict_each_other_stop_the_run_instead_of_choosing_one() {
    // With s > 0 the equations give s = -1; with s <= 0 they give s = 1: no mode holds.
    let d = run_failure(
        "model Contradiction
  Real s(start = 0.5);
  Real w;
equation
  0 = if s > 0 then s + 1 else w - 1;
  0 = if s > 0 then w - 1 else s - 1;
end Contradiction;
",
    );
    assert_eq!(d.code, "E0712", "{d:?}");
    assert!(
        d.notes.iter().any(|n| n.contains("(s > 0 true), (s > 0 false)")),
        "{d:?}"
    );
}

#[test]
fn a_delay_in_a_variable_structure_model_is_refused() {
    let text = PARAMETRIC_FRICTION.replace("der(v) = -F - y;", "der(v) = -F - delay(y, 0.1);");
    assert_eq!(run_failure(&text).code, "E0717");
}

#[test]
fn aliases_with_contradicting_fixed_start_values_are_an_error() {
    // A clutch locked from the start cannot start with two different fixed velocities.
    let text = CLUTCH.replace("Real v2(start = 0);", "Real v2(start = 1, fixed = true);");
    let d = run_failure(&text);
    assert_eq!(d.code, "E0504", "{d:?}");
    assert!(d.message.contains("both have fixed start values"), "{d:?}");
}

#[test]
fn friction_elements_in_components_switch_each_on_its_own() {
    // Two masses, each with the parametric element as a component: the first sticks at
    // t1 = asin(0.4) and slips again at t2 = 2.702805, the second (belt speed 0.8, spring 4,
    // v2 = sin(2t)/2 < 0.8) never sticks, so it stays on y2 = (1 - cos 2t)/4.
    let mut model = compile(
        "model Two
  model Element
    input Real vrel;
    output Real F;
    Real s(start = -1.4);
  equation
    F = if s > 1 then 1 else if s < -1 then -1 else s;
    vrel = if s > 1 then s - 1 else if s < -1 then s + 1 else 0;
  end Element;
  parameter Real q = 0.4;
  Real y1(start = 0, fixed = true);
  Real v1(start = 0, fixed = true);
  Real y2(start = 0, fixed = true);
  Real v2(start = 0, fixed = true);
  Element e1(vrel = v1 - q);
  Element e2(vrel = v2 - 2*q);
equation
  der(y1) = v1;
  der(v1) = -e1.F - y1;
  der(y2) = v2;
  der(v2) = -e2.F - 4*y2;
end Two;
",
    );
    assert_eq!(model.variable_structure().map(|s| s.atoms.len()), Some(4));
    let result = model
        .simulate(&RunSettings {
            stop: Some(6.0),
            interval: Some(0.25),
            rtol: Some(1e-10),
            atol: Some(1e-10),
            ..RunSettings::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let (q, t1) = (0.4f64, 0.4f64.asin());
    let y_stick = 1.0 - t1.cos();
    let t2 = t1 + (1.0 - y_stick) / q;
    let column = |n: &str| result.column(n).unwrap();
    let (t, y1, y2, f1) = (result.time().to_vec(), column("y1"), column("y2"), column("e1.F"));
    for i in 0..t.len() {
        assert!(
            (y2[i] - (1.0 - (2.0 * t[i]).cos()) / 4.0).abs() < 1e-7,
            "y2({}) = {}",
            t[i],
            y2[i]
        );
        if t[i] > t1 + 1e-6 && t[i] < t2 - 1e-6 {
            let expected = y_stick + q * (t[i] - t1);
            assert!((y1[i] - expected).abs() < 1e-7, "y1({}) = {}", t[i], y1[i]);
            assert!((f1[i] + y1[i]).abs() < 1e-7, "e1.F({}) = {}", t[i], f1[i]);
        }
    }
    assert_eq!(result.summary.events.events, 2);
}

/// A structure that changes at t = 1/2 (`u` reaches 1/2) and discrete variables assigned in
/// when-statements of an algorithm section before it: an algorithm starts from `pre(v)` for
/// each discrete `v` it assigns, so the run after the change must start `pre(v)` from the
/// value `v` had, not from its declared start value. `held` is set by a when-equation for
/// comparison.
const HELD_ACROSS_A_CHANGE: &str = "model HeldAcrossAChange
  Real u(start = 0, fixed = true);
  Real y;
  Real z;
  discrete Real held(start = 1);
  discrete Real stamp(start = -1);
  Integer count(start = 0);
equation
  der(u) = 1;
  0 = if u > 0.5 then y - 1 else z - 1;
  y + z = 3;
  when time >= 0.2 then
    held = 7;
  end when;
algorithm
  when {time >= 0.3, initial()} then
    stamp := time + 10;
    count := pre(count) + 1;
  end when;
end HeldAcrossAChange;
";

#[test]
fn discrete_variables_an_algorithm_assigns_keep_their_values_across_a_change_of_structure() {
    // By hand: the initial event sets stamp = 10 and count = 1; t = 0.2 sets held = 7; t = 0.3
    // sets stamp = 10.3 and count = 2; nothing fires after, and the structure changes at 0.5
    // (y = 1, z = 2 from there, y = 2, z = 1 before).
    for interpreter in [false, true] {
        let mut model = compile(HELD_ACROSS_A_CHANGE);
        assert!(model.variable_structure().is_some());
        let result = model
            .simulate(&RunSettings {
                stop: Some(1.0),
                interval: Some(0.125),
                interpreter,
                ..RunSettings::default()
            })
            .unwrap_or_else(|e| panic!("{e}"));
        let column = |n: &str| result.column(n).unwrap();
        let (t, y, held, stamp, count) = (
            result.time().to_vec(),
            column("y"),
            column("held"),
            column("stamp"),
            column("count"),
        );
        let last = t.len() - 1;
        assert_eq!(t[last], 1.0);
        assert_eq!(y[last], 1.0, "after the change (interpreter: {interpreter})");
        assert_eq!(held[last], 7.0, "interpreter: {interpreter}");
        assert!(
            (stamp[last] - 10.3).abs() < 1e-9,
            "stamp = {} (interpreter: {interpreter})",
            stamp[last]
        );
        assert_eq!(count[last], 2.0, "interpreter: {interpreter}");
        for i in 0..t.len() {
            if t[i] > 0.3 {
                assert!((stamp[i] - 10.3).abs() < 1e-9, "stamp({}) = {}", t[i], stamp[i]);
                assert_eq!(count[i], 2.0, "count({})", t[i]);
            }
        }
    }
}

#[test]
fn parameters_the_initialization_computes_keep_their_values_across_a_change_of_structure() {
    // `gain` and `seed` are computed by the initial equations (`fixed = false`): gain = 2*u0 = 3
    // with u0 = 1.5, seed = 7. After the change at u = 2 (t = 0.5) no initialization computes
    // them again; they keep 3 and 7: y = gain*u before, z = gain + seed = 10 after.
    let text = "model Computed
  parameter Real u0 = 1.5;
  parameter Real gain(fixed = false);
  parameter Integer seed(fixed = false);
  Real u(start = 1.5, fixed = true);
  Real y;
  Real z;
initial equation
  gain = 2*u0;
  seed = 7;
equation
  der(u) = 1;
  0 = if u > 2 then z - gain - seed else y - gain*u;
  y + z = 100;
end Computed;
";
    for interpreter in [false, true] {
        let mut model = compile(text);
        assert!(model.variable_structure().is_some());
        let result = model
            .simulate(&RunSettings {
                stop: Some(1.0),
                interval: Some(0.25),
                interpreter,
                ..RunSettings::default()
            })
            .unwrap_or_else(|e| panic!("{e}"));
        let column = |n: &str| result.column(n).unwrap();
        let (t, y, z) = (result.time().to_vec(), column("y"), column("z"));
        for i in 0..t.len() {
            // The rows at the switch (t = 0.5, twice) are left out.
            let u = 1.5 + t[i];
            if t[i] < 0.5 {
                assert!((y[i] - 3.0 * u).abs() < 1e-9, "y({}) = {}", t[i], y[i]);
            } else if t[i] > 0.6 {
                assert!(
                    (z[i] - 10.0).abs() < 1e-9,
                    "z({}) = {} (interpreter: {interpreter})",
                    t[i],
                    z[i]
                );
            }
        }
        assert_eq!(t[t.len() - 1], 1.0);
    }
}
