//! `abs(v)` is Modelica's `noEvent(if v >= 0 then v else -v)`: evaluated literally, it makes no
//! event, and its value is never negative, also between a zero crossing of `v` and the next
//! event. Each model is checked against its hand solution.

use crate::{check, run_both_back_ends, run_tight};

#[test]
fn abs_of_a_continuous_value_makes_no_event() {
    // z' = |sin(2 pi t)| integrates to 2/pi over one period; the sine crosses zero at t = 0.5
    // without an event.
    let text = "model Rectified
  Real z(start = 0, fixed = true);
equation
  der(z) = abs(sin(2*3.141592653589793*time));
end Rectified;";
    let result = run_tight(crate::compile(text), 1.0, None);
    assert_eq!(result.summary.events.events, 0);
    check(&result, "z", 1.0, 2.0 / std::f64::consts::PI, 1e-7);
    check(&result, "z", 0.5, 1.0 / std::f64::consts::PI, 1e-7);
}

/// The root of `b*(1 + |b|^2.5) = r`, which increases strictly with `b`, by bisection.
fn root(r: f64) -> f64 {
    let (mut lo, mut hi) = (-1.0f64, 1.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid * (1.0 + mid.abs().powf(2.5)) < r {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[test]
fn a_fractional_power_of_abs_holds_where_its_argument_changes_sign() {
    // b*(1 + |b|^2.5) = t - 0.5 is solved for b, which passes through 0 at t = 0.5; |b|^2.5 is
    // defined on both sides, so the solve goes through the crossing.
    let text = "model Crossing
  Real b;
equation
  b*(1 + abs(b)^2.5) = time - 0.5;
end Crossing;";
    let settings = eqm::RunSettings {
        stop: Some(1.0),
        ..eqm::RunSettings::default()
    };
    let result = run_both_back_ends(text, settings);
    assert_eq!(result.summary.events.events, 0);
    for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
        check(&result, "b", t, root(t - 0.5), 1e-9);
    }
}
