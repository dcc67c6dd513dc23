//! User functions of a few statements inside small nonlinear algebraic loops, plain, marked
//! `Inline = true` and with `smoothOrder`, run with an explicit and two implicit methods (whose
//! Jacobian crosses the loop) and checked against the loops' closed-form solutions.

use crate::{check, compile};
use eqm::{Method, RunSettings};

/// `y = f(x) = x^2 + x` written as two statements, with the annotation `annotation`.
fn function(annotation: &str) -> String {
    format!(
        "function f
  input Real x;
  output Real y;
protected
  Real a;
algorithm
  a := x*x;
  y := a + x;
  {annotation}
end f;
"
    )
}

/// Two equations: `y = f(x)`, `x = s - y/2` with `der(s) = -s`, s(0) = 1, so that
/// `x^2/2 + 3x/2 - s = 0`: x = -3/2 + sqrt(9/4 + 2 exp(-t)) (the root near the start value).
fn two_equation_loop(annotation: &str) -> String {
    function(annotation)
        + "model Loop2
  Real s(start = 1, fixed = true);
  Real x(start = 0.5);
  Real y;
equation
  y = f(x);
  x = s - 0.5*y;
  der(s) = -s;
end Loop2;
"
}

/// Three equations: `y = f(x)`, `z = 2y - x`, `x = s - z/4`, so that `x^2/2 + 5x/4 - s = 0`:
/// x = -5/4 + sqrt(25/16 + 2 exp(-t)).
fn three_equation_loop(annotation: &str) -> String {
    function(annotation)
        + "model Loop3
  Real s(start = 1, fixed = true);
  Real x(start = 0.5);
  Real y;
  Real z;
equation
  y = f(x);
  z = 2*y - x;
  x = s - 0.25*z;
  der(s) = -s;
end Loop3;
"
}

#[test]
fn loops_through_a_function_run_to_their_closed_form() {
    let annotations = [
        "",
        "annotation(Inline = true);",
        "annotation(Inline = true, smoothOrder = 2);",
    ];
    for annotation in annotations {
        for (text, b) in [
            (two_equation_loop(annotation), 1.5),
            (three_equation_loop(annotation), 1.25),
        ] {
            for method in [None, Some(Method::Bdf), Some(Method::Radau5)] {
                let mut model = compile(&text);
                let settings = RunSettings {
                    stop: Some(2.0),
                    interval: Some(0.5),
                    rtol: Some(1e-9),
                    atol: Some(1e-9),
                    method: method.clone(),
                    ..RunSettings::default()
                };
                let result = model
                    .simulate(&settings)
                    .unwrap_or_else(|e| panic!("{annotation} {method:?}: {e}"));
                for k in 0..=4 {
                    let t = 0.5 * f64::from(k);
                    let x = -b + (b * b + 2.0 * (-t).exp()).sqrt();
                    check(&result, "x", t, x, 1e-6);
                    check(&result, "y", t, x * x + x, 1e-6);
                }
            }
        }
    }
}
