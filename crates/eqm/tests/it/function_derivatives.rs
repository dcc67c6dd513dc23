//! Index reduction through calls of user-defined functions: a constraint that calls a function
//! is differentiated through the function's `derivative` annotation, or through its body (an
//! algorithm of assignments, `if` statements and loops expanded at compile time), and a
//! function that can be differentiated neither way is refused with the reason. Each result is
//! checked against a closed form or an invariant of the motion, on both back ends.

use crate::{check, run_both_back_ends};
use eqm::{ModelOptions, RunSettings, Session};

fn tight(stop: f64) -> RunSettings {
    RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        interval: Some(0.01),
        ..RunSettings::default()
    }
}

/// The rendered diagnostics of a model that does not compile.
fn refused(text: &str) -> String {
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    assert!(
        session.compile(None, &ModelOptions::default()).is_none(),
        "the model compiled"
    );
    session.render_diagnostics(false)
}

#[test]
fn a_position_given_through_a_wrapper_of_a_builtin_is_differentiated_twice() {
    // x = 3 sin(2t) through a function whose body is the built-in: F = m x'' = -24 sin(2t).
    let result = run_both_back_ends(
        "package MyMath
  function sin
    input Real u;
    output Real y;
  external \"builtin\" y = sin(u);
  end sin;
end MyMath;
model Driven
  parameter Real m = 2;
  Real x;
  Real v;
  Real F;
equation
  x = 3*MyMath.sin(2*time);
  v = der(x);
  m*der(v) = F;
end Driven;
",
        tight(2.0),
    );
    for t in [0.5, 1.0, 2.0] {
        check(&result, "F", t, -24.0 * (2.0 * t).sin(), 1e-6);
        check(&result, "v", t, 6.0 * (2.0 * t).cos(), 1e-6);
    }
}

#[test]
fn a_pendulum_whose_constraint_calls_a_function_with_an_algorithm_body_keeps_its_energy() {
    // The length constraint is written through a function with a protected variable and an
    // if-statement whose branches compute the same square; released from the horizontal at
    // rest, the bob keeps x^2 + y^2 = 1 and the energy v^2/2 + g y = 0.
    let result = run_both_back_ends(
        "model Pendulum
  function radius2
    input Real a;
    input Real b;
    output Real r;
  protected
    Real t;
  algorithm
    t := a*a;
    if b >= 0 then
      r := t + b*b;
    else
      r := t + (-b)*(-b);
    end if;
  end radius2;
  parameter Real g = 9.81;
  Real x(start = 1, fixed = true);
  Real y(start = 0);
  Real vx(start = 0, fixed = true);
  Real vy(start = 0);
  Real F;
  Real energy = 0.5*(vx^2 + vy^2) + g*y;
  Real length2 = x^2 + y^2;
equation
  der(x) = vx;
  der(y) = vy;
  der(vx) = -F*x;
  der(vy) = -F*y - g;
  radius2(x, y) = 1;
end Pendulum;
",
        tight(3.0),
    );
    for t in [0.3, 1.0, 2.0, 3.0] {
        check(&result, "length2", t, 1.0, 1e-6);
        check(&result, "energy", t, 0.0, 1e-5);
    }
    // The bob swings through the bottom: y reaches -1 within the first period.
    let lowest = result
        .column("y")
        .unwrap()
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    assert!((lowest + 1.0).abs() < 1e-3, "lowest y = {lowest}");
}

#[test]
fn a_derivative_annotation_is_used_where_the_body_cannot_be_differentiated() {
    // cube computes x^3 by a while loop, which has no derivative as one expression; its
    // `derivative` annotation gives 3 x^2 dx. With x = cube(t): F = m x'' = 2*6t.
    let result = run_both_back_ends(
        "model Annotated
  function cube
    input Real x;
    output Real y;
  protected
    Integer k;
  algorithm
    y := 1;
    k := 0;
    while k < 3 loop
      y := y*x;
      k := k + 1;
    end while;
    annotation(derivative = cubeDer);
  end cube;
  function cubeDer
    input Real x;
    input Real dx;
    output Real dy;
  algorithm
    dy := 3*x^2*dx;
  end cubeDer;
  parameter Real m = 2;
  Real x;
  Real v;
  Real F;
equation
  x = cube(time);
  v = der(x);
  m*der(v) = F;
end Annotated;
",
        tight(2.0),
    );
    for t in [0.5, 1.0, 2.0] {
        check(&result, "F", t, 12.0 * t, 1e-6);
        check(&result, "v", t, 3.0 * t * t, 1e-6);
    }
}

#[test]
fn no_derivative_inputs_are_not_differentiated_and_the_derivative_function_gets_the_rest() {
    // pick returns its first input; its annotation says the derivative is the second input
    // (passed, not differentiated) scaled by the derivative of the third. With the position
    // p = pick(sin t, 2 cos t, t) the velocity der(p) is what the annotation says, 2 cos t (the
    // body alone would give cos t), and F = m v = 6 cos t.
    let result = run_both_back_ends(
        "model Adaptor
  function pick
    input Real u[2];
    input Real s;
    output Real y;
  algorithm
    y := u[1];
    annotation(derivative(noDerivative = u) = pickDer);
  end pick;
  function pickDer
    input Real u[2];
    input Real s;
    input Real ds;
    output Real dy;
  algorithm
    dy := u[2]*ds;
  end pickDer;
  parameter Real m = 3;
  Real a = sin(time);
  Real b = 2*cos(time);
  Real p;
  Real v;
  Real F;
equation
  p = pick({a, b}, time);
  v = der(p);
  F = m*v;
end Adaptor;
",
        tight(2.0),
    );
    for t in [0.5, 1.0, 2.0] {
        check(&result, "v", t, 2.0 * t.cos(), 1e-7);
        check(&result, "F", t, 6.0 * t.cos(), 1e-7);
    }
}

#[test]
fn a_call_whose_arguments_are_parameters_has_derivative_zero() {
    // The constraint x + k(p) = 2 t only needs der(k(p)) = 0, whatever k's body.
    let result = run_both_back_ends(
        "model Constant
  function k
    input Real p;
    output Real y;
  protected
    Integer i;
  algorithm
    y := 0;
    i := 0;
    while i < 2 loop
      y := y + p;
      i := i + 1;
    end while;
  end k;
  parameter Real p = 0.25;
  Real x;
  Real v;
  Real F;
equation
  x + k(p) = 2*time;
  v = der(x);
  der(v) = F;
end Constant;
",
        tight(1.0),
    );
    check(&result, "x", 1.0, 1.5, 1e-9);
    check(&result, "v", 1.0, 2.0, 1e-9);
    check(&result, "F", 1.0, 0.0, 1e-9);
}

#[test]
fn a_function_that_cannot_be_differentiated_is_named_with_the_reason() {
    let rendered = refused(
        "model Refused
  function cube
    input Real x;
    output Real y;
  protected
    Integer k;
  algorithm
    y := 1;
    k := 0;
    while k < 3 loop
      y := y*x;
      k := k + 1;
    end while;
  end cube;
  Real x;
  Real v;
  Real F;
equation
  x = cube(time);
  v = der(x);
  der(v) = F;
end Refused;
",
    );
    assert!(
        rendered.contains("E0503")
            && rendered.contains("`Refused.cube` has no `derivative` annotation")
            && rendered.contains("loop whose iterations are known only during the run"),
        "{rendered}"
    );
}

#[test]
fn an_input_the_function_ignores_makes_the_call_a_constraint_between_states() {
    // The adaptor pattern: Tm = pass({T, pder}, time) returns T and never reads pder, so the
    // equation is a constraint between the states T and Tm (not an equation for pder), which
    // index reduction differentiates through the annotation: der(Tm) = pder. The two heat
    // capacities then move together: (C1 + C2) der(T) = sin t, T = 1 + (1 - cos t)/4, and the
    // flow between them is C2 der(T) = 3 sin(t)/4.
    let result = run_both_back_ends(
        "model Coupled
  function pass
    input Real u[2];
    input Real dummy;
    output Real s;
  algorithm
    s := u[1];
    annotation(derivative(noDerivative = u) = passDer);
  end pass;
  function passDer
    input Real u[2];
    input Real dummy;
    input Real dummyDer;
    output Real ds;
  algorithm
    ds := u[2];
  end passDer;
  parameter Real C1 = 1;
  parameter Real C2 = 3;
  Real T(start = 1, fixed = true);
  Real pder;
  Real Tm;
  Real f;
equation
  der(T) = pder;
  C1*der(T) = sin(time) - f;
  Tm = pass({T, pder}, time);
  C2*der(Tm) = f;
end Coupled;
",
        tight(2.0),
    );
    for t in [0.5, 1.0, 2.0] {
        check(&result, "T", t, 1.0 + (1.0 - t.cos()) / 4.0, 1e-7);
        check(&result, "Tm", t, 1.0 + (1.0 - t.cos()) / 4.0, 1e-7);
        check(&result, "f", t, 0.75 * t.sin(), 1e-7);
    }
}
