//! Coefficients that are zero by the parameters' values at translation: the unknown they
//! multiply leaves its equation, another equation determines it, and the parameters become
//! structural. Each model is checked against its hand solution.

use crate::{check, compile, run_both_back_ends};
use eqm::{ModelOptions, RunError, RunSettings, Session};

/// Pins, two-pin components and a series resistance written as SPICE writes its drain and
/// source resistances (`i*R = v`), which solved for `i` divides by `R`.
const CIRCUIT: &str = "
connector Pin
  Real v;
  flow Real i;
end Pin;

partial model TwoPin
  Pin p;
  Pin n;
  Real v;
  Real i;
equation
  v = p.v - n.v;
  0 = p.i + n.i;
  i = p.i;
end TwoPin;

model Ramp
  extends TwoPin;
  parameter Real k = 10;
equation
  v = k*time;
end Ramp;

model Capacitor
  extends TwoPin;
  parameter Real C = 1;
equation
  i = C*der(v);
end Capacitor;

model Resistor
  extends TwoPin;
  parameter Real R = 1;
equation
  v = R*i;
end Resistor;

model SeriesResistance
  extends TwoPin;
  parameter Real R = 0;
equation
  i*R = v;
end SeriesResistance;

model Ground
  Pin p;
equation
  p.v = 0;
end Ground;
";

/// A ramp source (10 V/s) feeding, through the series resistance `rz`, a node `d` with a
/// capacitor of 0.5 F and a resistor of 5 Ohm to ground. With a nonzero `rz.R` the capacitor's
/// voltage is a state and `rz` gives the current from the voltage across it (dividing by R).
fn series_circuit(rz: &str) -> String {
    format!(
        "model Series
{CIRCUIT}
  Ramp s(k = 10);
  SeriesResistance rz{rz};
  Capacitor c(C = 0.5);
  Resistor r(R = 5);
  Ground g;
equation
  connect(s.p, rz.p);
  connect(rz.n, c.p);
  connect(rz.n, r.p);
  connect(c.n, s.n);
  connect(r.n, s.n);
  connect(s.n, g.p);
end Series;
"
    )
}

/// Rotational flanges, inertias (`J*a = flange_a.tau + flange_b.tau`, solved for `a` divides by
/// `J`) and a constant torque, with three inertias rigidly in a row: J = 1, then `middle`, then 3.
fn inertia_chain(middle: &str) -> String {
    format!(
        "model Chain
connector Flange
  Real phi;
  flow Real tau;
end Flange;

model Inertia
  parameter Real J = 1;
  Flange flange_a;
  Flange flange_b;
  Real phi;
  Real w;
  Real a;
equation
  phi = flange_a.phi;
  phi = flange_b.phi;
  w = der(phi);
  a = der(w);
  J*a = flange_a.tau + flange_b.tau;
end Inertia;

model Torque
  parameter Real tau = 2;
  Flange flange;
equation
  flange.tau = -tau;
end Torque;

  Torque t(tau = 2);
  Inertia i1(J = 1, phi(start = 0, fixed = true), w(start = 0, fixed = true));
  Inertia i0{middle};
  Inertia i2(J = 3);
equation
  connect(t.flange, i1.flange_a);
  connect(i1.flange_b, i0.flange_a);
  connect(i0.flange_b, i2.flange_a);
end Chain;
"
    )
}

fn settings(stop: f64) -> RunSettings {
    RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..RunSettings::default()
    }
}

#[test]
fn a_zero_series_resistance_takes_its_current_from_the_node() {
    // With rz.R = 0 the equation of rz says rz.v = 0: the node follows the source,
    // c.v = r.v = 10 t, and the current is the node's: i = C*10 + 10 t/5 = 5 + 2 t.
    let result = run_both_back_ends(&series_circuit(""), settings(1.0));
    for (name, expected) in [("rz.i", 7.0), ("rz.v", 0.0), ("c.v", 10.0), ("c.i", 5.0), ("r.i", 2.0)] {
        check(&result, name, 1.0, expected, 1e-8);
    }
}

#[test]
fn a_series_resistance_set_to_zero_for_a_run_is_still_a_diagnostic() {
    // Compiled with rz.R = 1 the capacitor's voltage is a state and rz gives the current by
    // dividing by R; the value 0 set afterwards makes that impossible, which the run reports.
    let mut model = compile(&series_circuit("(R = 1)"));
    assert!(model.zero_coefficients().is_empty());
    model
        .set_parameter("rz.R", 0.0)
        .expect("rz.R is not structural when it is 1");
    match model.simulate(&settings(1.0)) {
        Err(RunError::Model(d)) => {
            assert_eq!(d.code, "E0704");
            assert!(d.message.contains("`rz.R` must not be zero"), "{}", d.message);
        }
        Err(other) => panic!("expected E0704, got {other}"),
        Ok(_) => panic!("expected E0704, the run succeeded"),
    }
}

#[test]
fn a_massless_inertia_between_two_others_passes_the_torque_on() {
    // The rigid row accelerates with a = tau/(J1 + 0 + J2) = 2/4 = 0.5 from rest: w = 0.5 t,
    // phi = 0.25 t^2; the massless inertia passes the torque J2*a = 1.5 on unchanged.
    let result = run_both_back_ends(&inertia_chain("(J = 0)"), settings(2.0));
    check(&result, "i1.w", 2.0, 1.0, 1e-8);
    check(&result, "i1.phi", 2.0, 1.0, 1e-8);
    check(&result, "i0.a", 2.0, 0.5, 1e-8);
    check(&result, "i2.flange_a.tau", 2.0, 1.5, 1e-8);
    check(&result, "i0.flange_a.tau", 2.0, 1.5, 1e-8);
    check(&result, "i0.flange_b.tau", 2.0, -1.5, 1e-8);
}

#[test]
fn a_parameter_that_makes_a_coefficient_zero_is_structural() {
    let text = inertia_chain("(J = 0)");
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text)], &[], None);
    let summary = session.check(None, &ModelOptions::default()).expect("checks");
    assert_eq!(summary.zero_coefficients.len(), 1, "{:?}", summary.zero_coefficients);
    let note = &summary.zero_coefficients[0];
    assert!(note.starts_with("m.eqm:"), "{note}");
    assert!(
        note.contains("`i0.a` dropped from `i0.J*i0.a = i0.flange_a.tau + i0.flange_b.tau`"),
        "{note}"
    );
    assert!(note.contains("by the value of `i0.J`"), "{note}");
    let mut model = session.compile(None, &ModelOptions::default()).expect("compiles");
    let refused = model.set_parameter("i0.J", 1.0).expect_err("i0.J fixes the structure");
    assert_eq!(refused.code, "E0707");
    assert!(
        refused
            .notes
            .iter()
            .any(|n| n.contains("fixes the model's structure") && n.contains("`i0.a`")),
        "{:?}",
        refused.notes
    );
    // Compiled again with the new value, the inertia has mass: a = 2/(1 + 1 + 3) = 0.4.
    let options = ModelOptions {
        parameters: vec![("i0.J".to_string(), 1.0)],
        ..ModelOptions::default()
    };
    let mut model = session.compile(None, &options).expect("compiles with i0.J = 1");
    assert!(model.zero_coefficients().is_empty());
    let result = model.simulate(&settings(2.0)).expect("runs");
    check(&result, "i1.w", 2.0, 0.8, 1e-8);
}

#[test]
fn parameters_not_known_at_translation_stay_tunable() {
    // A parameter without a binding (its start value is only a default) and one the
    // initialization computes (fixed = false) are not known at translation: the coefficient
    // stays, and its value 0 is the run's diagnostic as before.
    for declaration in ["parameter Real m(start = 0);", "parameter Real m(fixed = false);"] {
        let initial = if declaration.contains("fixed") {
            "initial equation\n  m = 0;\n"
        } else {
            ""
        };
        let text = format!(
            "model P
  {declaration}
  Real x(start = 1, fixed = true);
{initial}equation
  m*der(x) = -x;
end P;"
        );
        let mut session = Session::with_sources(&[("m.eqm".to_string(), text)], &[], None);
        let mut model = session
            .compile(None, &ModelOptions::default())
            .unwrap_or_else(|| panic!("{declaration}: {}", session.render_diagnostics(false)));
        assert!(model.zero_coefficients().is_empty(), "{declaration}");
        match model.simulate(&settings(1.0)) {
            Err(RunError::Model(d)) => assert_eq!(d.code, "E0704", "{declaration}: {}", d.message),
            Err(other) => panic!("{declaration}: expected E0704, got {other}"),
            Ok(_) => panic!("{declaration}: expected E0704, the run succeeded"),
        }
    }
}

#[test]
fn explain_names_the_unknowns_a_zero_coefficient_removed() {
    let mut session = Session::with_sources(&[("m.eqm".to_string(), series_circuit(""))], &[], None);
    let text = session.explain(None, &ModelOptions::default()).expect("explains");
    let start = text
        .find("coefficients zero by the parameters' values")
        .expect("the section of dropped unknowns");
    let section = &text[start..];
    insta::assert_snapshot!(section);
}

/// A capacitance computed during the run from the voltage (`c = tau*exp(v) + cj` with a
/// depletion part `cj = C1*(1 + v^2)`, as semiconductor models write it) whose parameters are
/// all zero: `c` is zero by its equations, not by a parameter, and only after `cj` is known to
/// be. A ramp (10 V/s) feeds this capacitor through 2 Ohm, with 3 Ohm to ground in parallel.
/// The divider both capacitor models are tested in: a ramp through `r1` into the node of the
/// capacitor `c` and of `r2` (the end of the model `Divider`).
const DIVIDER: &str = "
  Ramp s(k = 10);
  Resistor r1(R = 2);
  VoltageCapacitor c;
  Resistor r2(R = 3);
  Ground g;
equation
  connect(s.p, r1.p);
  connect(r1.n, c.p);
  connect(r1.n, r2.p);
  connect(c.n, s.n);
  connect(r2.n, s.n);
  connect(s.n, g.p);
end Divider;
";

const ZERO_CAPACITANCE: &str = "
model VoltageCapacitor
  extends TwoPin;
  parameter Real tau = 0;
  parameter Real C1 = 0;
  Real c;
  Real cj;
equation
  cj = C1*(1 + v*v);
  c = tau*exp(v) + cj;
  i = c*der(v);
end VoltageCapacitor;

";

#[test]
fn a_capacitance_zero_by_its_equations_leaves_no_state() {
    // With every capacitance parameter zero the node is a plain voltage divider: c.v = 10 t *
    // 3/(2 + 3) = 6 t, no current into the capacitor, 2 t through both resistors. Its voltage
    // is not a state (nothing determines its derivative), so no start value is needed either.
    let text = format!("model Divider\n{CIRCUIT}\n{ZERO_CAPACITANCE}{DIVIDER}");
    let model = compile(&text);
    assert_eq!(model.program().layout().states, 0);
    let result = run_both_back_ends(&text, settings(1.0));
    for (name, expected) in [("c.v", 6.0), ("c.i", 0.0), ("c.c", 0.0), ("r1.i", 2.0), ("r2.i", 2.0)] {
        check(&result, name, 1.0, expected, 1e-10);
        check(&result, name, 0.5, expected / 2.0, 1e-10);
    }
}

/// A flux tube as magnetic libraries write it: a permeability `mu` that is a function of the
/// flux density where `nonLinear` (a parameter with `Evaluate = true`) says so and a constant
/// otherwise, a permeance `G = mu*k`, its reluctance `R = 1/G`, and a magnetic voltage
/// `V = phi*R` that rises at 10 per second.
const FLUX_TUBE: &str = "
model Tube
  parameter Boolean nonLinear = false annotation(Evaluate = true);
  parameter Real muConst = 3;
  parameter Real k = 2;
  Real phi;
  Real bn;
  Real mu;
  Real G;
  Real R;
  Real V;
equation
  V = 10*time;
  bn = abs(phi);
  mu = if nonLinear then 1 + 1/(1 + bn) else muConst;
  G = mu*k;
  R = 1/G;
  V = phi*R;
end Tube;
";

#[test]
fn an_if_expression_whose_condition_is_known_is_its_branch() {
    // With nonLinear = false, mu = 3 whatever the flux: G = 6, R = 1/6 and phi = V*G = 60 t.
    // The flux does not feed back into the permeability, so no equation forms a loop.
    let mut session = Session::with_sources(&[("m.eqm".to_string(), FLUX_TUBE.to_string())], &[], None);
    let summary = session.check(None, &ModelOptions::default()).expect("checks");
    assert_eq!(summary.zero_coefficients.len(), 1, "{:?}", summary.zero_coefficients);
    let note = &summary.zero_coefficients[0];
    assert!(note.contains("`bn` dropped from `mu = if nonLinear then"), "{note}");
    assert!(
        note.contains("the if-expression's condition `nonLinear` is false at translation by the value of `nonLinear`"),
        "{note}"
    );
    let mut model = session.compile(None, &ModelOptions::default()).expect("compiles");
    let refused = model
        .set_parameter("nonLinear", 1.0)
        .expect_err("nonLinear fixes the structure");
    assert_eq!(refused.code, "E0707");
    let result = run_both_back_ends(FLUX_TUBE, settings(1.0));
    for (name, expected) in [("mu", 3.0), ("G", 6.0), ("R", 1.0 / 6.0), ("phi", 60.0)] {
        check(&result, name, 1.0, expected, 1e-9);
    }
    check(&result, "phi", 0.5, 30.0, 1e-9);
}

#[test]
fn a_reciprocal_solved_from_a_start_outside_its_domain() {
    // `r = 1/g` is solved for g by Newton's method from g's start value 0, where 1/g is not
    // finite: the iteration starts beside it instead. r = 2 + t, so g = 1/(2 + t).
    let text = "model Reciprocal
  Real r;
  Real g;
equation
  r = 2 + time;
  r = 1/g;
end Reciprocal;";
    let result = run_both_back_ends(text, settings(1.0));
    check(&result, "g", 0.0, 0.5, 1e-9);
    check(&result, "g", 1.0, 1.0 / 3.0, 1e-9);
}

/// The capacitor of [`ZERO_CAPACITANCE`] with its capacitance computed by a function of the
/// voltage, as semiconductor models compute theirs: a depletion part for negative voltages and a
/// diffusion part for positive ones, each proportional to a parameter (`depletion` is how
/// the depletion part is written: a product, or a quotient the partial evaluation does not fold).
fn function_capacitance(depletion: &str) -> String {
    format!(
        "
function capacitance
  input Real cj0;
  input Real tt;
  input Real v;
  output Real c;
protected
  Real arg;
algorithm
  if v < 0 then
    arg := 1 - v/0.7;
    c := {depletion};
  else
    c := cj0 + tt*exp(v/0.025);
  end if;
end capacitance;

model Divider
{CIRCUIT}
model VoltageCapacitor
  extends TwoPin;
  parameter Real cj0 = 0;
  parameter Real tt = 0;
  Real c;
equation
  c = capacitance(cj0, tt, v);
  i = c*der(v);
end VoltageCapacitor;

{DIVIDER}"
    )
}

#[test]
fn a_capacitance_a_function_computes_zero_on_every_path_leaves_no_state() {
    // cj0 = tt = 0: both branches of the function give 0 whatever v is, so the capacitor's
    // voltage is no state and the node is the divider of the ramp: c.v = 10 t * 3/5 = 6 t.
    let text = function_capacitance("cj0*arg^(-0.5)");
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.clone())], &[], None);
    let summary = session.check(None, &ModelOptions::default()).expect("checks");
    // The function's output is 0 whatever v is, so v leaves the equation defining c, and c and
    // v the capacitor's equation.
    assert_eq!(summary.zero_coefficients.len(), 2, "{:?}", summary.zero_coefficients);
    assert!(
        summary.zero_coefficients[0].contains("`c.v` dropped from `c.c = "),
        "{:?}",
        summary.zero_coefficients
    );
    let note = &summary.zero_coefficients[1];
    assert!(
        note.contains("`c.c`, `c.v` dropped from `c.i = c.c*der(c.v)`"),
        "{note}"
    );
    assert!(note.contains("coefficient `c.c` is 0 at translation"), "{note}");
    assert!(note.contains("`c.cj0`") && note.contains("`c.tt`"), "{note}");
    let model = compile(&text);
    assert_eq!(model.program().layout().states, 0);
    let result = run_both_back_ends(&text, settings(1.0));
    for (name, expected) in [("c.v", 6.0), ("c.i", 0.0), ("c.c", 0.0), ("r1.i", 2.0)] {
        check(&result, name, 1.0, expected, 1e-10);
    }
    // The parameters the proof read fix the structure.
    let mut model = session.compile(None, &ModelOptions::default()).expect("compiles");
    let refused = model.set_parameter("c.tt", 1e-9).expect_err("c.tt fixes the structure");
    assert_eq!(refused.code, "E0707");
}

#[test]
fn a_capacitance_zero_only_through_a_quotient_is_not_folded() {
    // `cj0/sqrt(arg)` is 0 for every finite arg, but a quotient is not folded (its divisor
    // could be 0): the capacitance is not proven zero, the voltage stays a state, and the run
    // stops at its singular derivative instead of guessing.
    let mut model = compile(&function_capacitance("cj0/sqrt(arg)"));
    assert!(model.zero_coefficients().is_empty());
    match model.simulate(&settings(1.0)).expect_err("singular") {
        RunError::Failed {
            diagnostic: Some(d), ..
        } => assert_eq!(d.code, "E0703", "{d:?}"),
        other => panic!("{other}"),
    }
}

#[test]
fn an_output_of_a_call_that_is_zero_by_the_parameters_leaves_the_call_arguments_out() {
    // The rates r = e*w of a joint whose axis e = {1, 0} is known at translation, computed by a
    // function (as a multibody joint's relative rotation is): r[2] is 0 whatever w is, so its
    // equation holds no w, and w comes from r[1] = w. By hand: r[1] + r[2] = 2 t gives
    // r = {2 t, 0} and w = 2 t.
    let text = "
function rates
  input Real e[2];
  input Real w;
  output Real r[2];
algorithm
  r := e*w;
end rates;

model Joint
  parameter Real e[2] = {1, 0};
  Real w;
  Real r[2];
equation
  r = rates(e, w);
  r[1] + r[2] = 2*time;
end Joint;
";
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    let summary = session.check(None, &ModelOptions::default()).expect("checks");
    assert_eq!(summary.zero_coefficients.len(), 1, "{:?}", summary.zero_coefficients);
    let note = &summary.zero_coefficients[0];
    assert!(note.contains("`w` dropped from `r[2] = "), "{note}");
    assert!(note.contains("`e[1]`") && note.contains("`e[2]`"), "{note}");
    let result = run_both_back_ends(text, settings(1.0));
    for (name, expected) in [("w", 2.0), ("r[1]", 2.0), ("r[2]", 0.0)] {
        check(&result, name, 1.0, expected, 1e-12);
    }
}
