//! A dense linear algebraic loop whose rows are wider than the causal plan solves edge by edge
//! (their solutions are built only for the edges the plan uses), run with an explicit and two
//! implicit methods (whose Jacobian crosses the loop) and checked against its closed form.

use crate::{check, compile};
use eqm::{Method, RunSettings};

/// `(I + J) w = b` with `J` all ones and `b[i] = i t`: since `(I + J)^-1 = I - J/(n + 1)`,
/// `w[i] = t (i - n/2)`; `der(x) = sum(w) = n t / 2` with `x(0) = 1` gives `x = 1 + n t²/4`.
const DENSE: &str = "model Dense
  parameter Integer n = 12;
  parameter Real A[n, n] = {{if i == j then 2.0 else 1.0 for j in 1:n} for i in 1:n};
  Real b[n];
  Real w[n];
  Real x(start = 1, fixed = true);
equation
  for i in 1:n loop
    b[i] = i * time;
  end for;
  A * w = b;
  der(x) = sum(w);
end Dense;
";

#[test]
fn a_dense_linear_loop_runs_to_its_closed_form() {
    let n = 12.0;
    for method in [None, Some(Method::Bdf), Some(Method::Radau5)] {
        let mut model = compile(DENSE);
        let settings = RunSettings {
            stop: Some(2.0),
            interval: Some(0.5),
            rtol: Some(1e-9),
            atol: Some(1e-9),
            method: method.clone(),
            ..RunSettings::default()
        };
        let result = model.simulate(&settings).unwrap_or_else(|e| panic!("{method:?}: {e}"));
        for k in 0..=4 {
            let t = 0.5 * f64::from(k);
            for i in [1, 5, 12] {
                check(&result, &format!("w[{i}]"), t, t * (f64::from(i) - n / 2.0), 1e-7);
            }
            check(&result, "x", t, 1.0 + n * t * t / 4.0, 1e-6);
        }
    }
}
