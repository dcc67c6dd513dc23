//! Loops whose solution vanishes where it meets another (a fold) and whose next solution lies
//! far away: a saturating amplifier with positive feedback switches to its other saturation,
//! as the hysteresis of a Schmitt trigger says, on both back ends. Expected values are derived
//! by hand in each test.

use eqm::RunSettings;

/// `v = a*u + b*y` with `y` the amplifier's output `V0*v` limited to ±15. On the upper
/// saturation `v = a*u + 15*b`, which holds while `V0*v > 15`, that is while
/// `u > (15/V0 - 15*b)/a`; the lower one holds while `u < (15*b - 15/V0)/a`. Between the two
/// thresholds both saturations (and an unstable point between them) solve the loop, and the
/// output keeps the one it had; past a threshold only the other one is left. The model has no
/// states, so each row is solved from the row before.
const TRIGGER: &str = "model M
  parameter Real V0 = 15000;
  parameter Real a = 15/16, b = 1/16;
  Real u, v(start = 1), y(start = 15);
equation
  u = 2*sin(2*3.141592653589793*time);
  v = a*u + b*y;
  y = smooth(0, noEvent(if V0*v > 15 then 15 else if V0*v < -15 then -15 else V0*v));
end M;
";

#[test]
fn a_saturated_amplifier_with_positive_feedback_switches_saturation_past_its_threshold() {
    let settings = RunSettings {
        stop: Some(2.0),
        interval: Some(0.001),
        ..RunSettings::default()
    };
    let result = crate::run_both_back_ends(TRIGGER, settings);
    let column = |name: &str| result.column(name).unwrap_or_else(|| panic!("no column {name}"));
    let (t, u, v, y) = (result.time(), column("u"), column("v"), column("y"));
    let (a, b, v0) = (15.0 / 16.0, 1.0 / 16.0, 15000.0);
    let down = (15.0 / v0 - 15.0 * b) / a;
    let up = (15.0 * b - 15.0 / v0) / a;
    let mut output = 15.0;
    let mut switches = 0;
    for i in 0..t.len() {
        let next = if output > 0.0 && u[i] < down {
            -15.0
        } else if output < 0.0 && u[i] > up {
            15.0
        } else {
            output
        };
        if next != output {
            switches += 1;
        }
        output = next;
        assert!(
            (y[i] - output).abs() < 1e-9,
            "y({}) = {}, expected {output}",
            t[i],
            y[i]
        );
        let expected_v = a * u[i] + b * output;
        assert!(
            (v[i] - expected_v).abs() < 1e-12,
            "v({}) = {}, expected {expected_v}",
            t[i],
            v[i]
        );
    }
    // The output starts high; two periods of a sine of amplitude 2 starting upwards cross the
    // lower threshold twice and the upper one once in between.
    assert_eq!(switches, 3);
}

/// A relaxation oscillator: the amplifier of [`TRIGGER`] with its input the voltage of a
/// capacitor it charges through a resistor. Whatever branch each row is on, every row must
/// solve the loop: `y` is the limited `V0*(vp - vc)` of its own `vp` and `vc`. Newton must not
/// take a step the line search cut to nothing at a kink of the limiter for convergence.
#[test]
fn every_row_of_a_relaxation_oscillator_solves_its_loop() {
    let text = "model M
  parameter Real V0 = 100;
  parameter Real tau = 0.1;
  Real vc(start = 1, fixed = true);
  Real vp(start = 7.5), y(start = 15);
equation
  tau*der(vc) = y - vc;
  vp = 0.5*y;
  y = smooth(0, noEvent(if V0*(vp - vc) > 15 then 15 else if V0*(vp - vc) < -15 then -15 else V0*(vp - vc)));
end M;
";
    let settings = RunSettings {
        stop: Some(1.0),
        interval: Some(0.001),
        ..RunSettings::default()
    };
    let result = crate::run_both_back_ends(text, settings);
    let column = |name: &str| result.column(name).unwrap_or_else(|| panic!("no column {name}"));
    let (t, vc, vp, y) = (result.time(), column("vc"), column("vp"), column("y"));
    for i in 0..t.len() {
        let limited = (100.0 * (vp[i] - vc[i])).clamp(-15.0, 15.0);
        assert!(
            (y[i] - limited).abs() < 1e-6,
            "t = {}: y = {}, the limited gain gives {limited}",
            t[i],
            y[i]
        );
        assert!(
            (vp[i] - 0.5 * y[i]).abs() < 1e-12,
            "t = {}: vp = {}, y = {}",
            t[i],
            vp[i],
            y[i]
        );
    }
}
