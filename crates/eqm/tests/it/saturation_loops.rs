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

/// The relaxation oscillator of the tests below with its `parameters` and `algebraic`
/// declarations, run on both back ends to `stop` with rows every `interval`.
fn oscillator(parameters: &str, algebraic: &str, stop: f64, interval: f64) -> eqm::SimulationResult {
    let text = format!(
        "model M
  parameter Real {parameters};
  Real vc(start = 1, fixed = true);
  Real {algebraic};
equation
  tau*der(vc) = y - vc;
  vp = 0.5*y;
  y = smooth(0, noEvent(if V0*(vp - vc) > 15 then 15 else if V0*(vp - vc) < -15 then -15 else V0*(vp - vc)));
end M;
"
    );
    let settings = RunSettings {
        stop: Some(stop),
        interval: Some(interval),
        ..RunSettings::default()
    };
    crate::run_both_back_ends(&text, settings)
}

/// A relaxation oscillator: the amplifier of [`TRIGGER`] with its input the voltage of a
/// capacitor it charges through a resistor. Whatever branch each row is on, every row must
/// solve the loop: `y` is the limited `V0*(vp - vc)` of its own `vp` and `vc`. Newton must not
/// take a step the line search cut to nothing at a kink of the limiter for convergence.
#[test]
fn every_row_of_a_relaxation_oscillator_solves_its_loop() {
    let result = oscillator("V0 = 100, tau = 0.1", "vp(start = 7.5), y(start = 15)", 1.0, 0.001);
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

/// The relaxation oscillator with the gain of an idealized amplifier (`V0 = 15000`), against
/// its closed form: the output holds one saturation `s` while the capacitor charges towards it,
/// `vc(t) = s + (vc(t0) - s)*exp(-(t - t0)/tau)`, until `vc` passes `s/2` (the divider's
/// voltage, less `s/V0`, where the limiter leaves the saturation), and only the other
/// saturation is left: from `vc = 1` on the lower saturation the first switch comes after about
/// `tau*ln(16/7.5)`, then one about every `tau*ln(3)`.
/// The trajectory depends on which solution each evaluation of the loop starts from: a step
/// the integrator rejects must not leave the loop on the other saturation, nor may the rows
/// follow another branch than the integrator.
#[test]
fn a_relaxation_oscillator_switches_where_its_closed_form_says() {
    let result = oscillator("V0 = 15000, tau = 0.01", "vp, y(start = -15)", 0.2, 0.0005);
    let column = |name: &str| result.column(name).unwrap_or_else(|| panic!("no column {name}"));
    let (t, vc, y) = (result.time(), column("vc"), column("y"));
    let (tau, v0) = (0.01, 15000.0);
    // Each phase: its start, its saturation and the capacitor's voltage then. A saturation `s`
    // holds while `vc` has not passed `s/2 - s/V0`.
    let mut switches: Vec<(f64, f64, f64)> = vec![(0.0, -15.0, 1.0)];
    loop {
        let &(start, s, from) = switches.last().expect("a first phase");
        let threshold = s / 2.0 - s / v0;
        let end = start + tau * ((from - s) / (threshold - s)).ln();
        if end >= 0.2 {
            break;
        }
        switches.push((end, -s, threshold));
    }
    assert!(switches.len() > 8, "{} phases", switches.len());
    for i in 0..t.len() {
        let &(start, s, from) = switches
            .iter()
            .rev()
            .find(|(start, ..)| *start <= t[i])
            .expect("a phase");
        let expected = s + (from - s) * (-(t[i] - start) / tau).exp();
        // The kinks of the limiter are found by the step size control alone (`noEvent`), to
        // about 1e-3 V at the default tolerance; the other saturation would be volts away.
        assert!(
            (vc[i] - expected).abs() < 1e-2,
            "t = {}: vc = {}, the closed form gives {expected}",
            t[i],
            vc[i]
        );
        let near_switch = switches.iter().any(|(at, ..)| (t[i] - at).abs() < 1e-5);
        assert!(
            near_switch || y[i] == s,
            "t = {}: y = {}, the closed form is on {s}",
            t[i],
            y[i]
        );
    }
}
