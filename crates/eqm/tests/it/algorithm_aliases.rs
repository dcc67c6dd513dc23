//! A variable that an algorithm section assigns and that an equation makes equal to another
//! (`i := v/R` in a component whose `i = p.i`): alias elimination keeps it, so the section's
//! value reaches the other variable. Checked against the closed-form solution.

use crate::{check, run_both_back_ends};
use eqm::RunSettings;

/// A ramp of 10 V/s charges a capacitor of 0.5 F through a resistor of 2 Ohm whose current
/// an algorithm section computes from its voltage.
const RAMP_RC: &str = "
model RampRC
connector Pin
  Real v;
  flow Real i;
end Pin;

partial model OnePort
  Pin p;
  Pin n;
  Real v;
  Real i;
equation
  v = p.v - n.v;
  0 = p.i + n.i;
  i = p.i;
end OnePort;

model Ramp
  extends OnePort;
equation
  v = 10*time;
end Ramp;

model AlgorithmResistor
  extends OnePort;
  parameter Real R = 2;
  Real g;
algorithm
  g := 1/R;
  i := g*v;
end AlgorithmResistor;

model Capacitor
  extends OnePort;
  parameter Real C = 0.5;
equation
  i = C*der(v);
end Capacitor;

model Ground
  Pin p;
equation
  p.v = 0;
end Ground;

  Ramp s;
  AlgorithmResistor r;
  Capacitor c(v(start = 0, fixed = true));
  Ground gnd;
equation
  connect(s.p, r.p);
  connect(r.n, c.p);
  connect(c.n, s.n);
  connect(s.n, gnd.p);
end RampRC;
";

#[test]
fn an_algorithm_output_with_an_alias_equation_determines_its_alias() {
    // RC = 1 s: v' = 10 t - v from 0 gives v = 10 (t - 1 + e^-t); the resistor's current is
    // (10 t - v)/2 = 5 (1 - e^-t), the same in both pins.
    let settings = RunSettings {
        stop: Some(1.0),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..RunSettings::default()
    };
    let result = run_both_back_ends(RAMP_RC, settings);
    let e = (-1.0f64).exp();
    check(&result, "c.v", 1.0, 10.0 * e, 1e-7);
    for name in ["r.i", "r.p.i", "c.i"] {
        check(&result, name, 1.0, 5.0 * (1.0 - e), 1e-7);
    }
    check(&result, "r.n.i", 1.0, -5.0 * (1.0 - e), 1e-7);
}
