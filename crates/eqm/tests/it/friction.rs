//! The friction models of stick-slip oscillators (a mass on a moving belt, held by a spring):
//! `y'' + F(y' - q) + y = 0`, run through events and Filippov sliding, against independent
//! computations of each phase.

use crate::compile;
use eqm::RunSettings;

/// The first slip phase of `y'' = k(|v - q|) - y` from rest (the belt drags the mass, the
/// friction force is `-k(|v - q|)` while `v < q`), by the classical Runge-Kutta method with a
/// tiny step: the time the mass reaches the belt speed and its position then.
fn first_slip(q: f64, k: impl Fn(f64) -> f64) -> (f64, f64) {
    let h = 1e-5;
    let f = |y: f64, v: f64| (v, k((v - q).abs()) - y);
    let (mut t, mut y, mut v) = (0.0, 0.0, 0.0);
    loop {
        let (k1y, k1v) = f(y, v);
        let (k2y, k2v) = f(y + h / 2.0 * k1y, v + h / 2.0 * k1v);
        let (k3y, k3v) = f(y + h / 2.0 * k2y, v + h / 2.0 * k2v);
        let (k4y, k4v) = f(y + h * k3y, v + h * k3v);
        let (y1, v1) = (
            y + h / 6.0 * (k1y + 2.0 * k2y + 2.0 * k3y + k4y),
            v + h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v),
        );
        if v1 >= q {
            // Linear interpolation within the last tiny step.
            let s = (q - v) / (v1 - v);
            return (t + s * h, y + s * (y1 - y));
        }
        (t, y, v) = (t + h, y1, v1);
    }
}

#[test]
fn stribeck_friction_sticks_until_the_spring_exceeds_static_friction() {
    // F = (1 + (mu - 1) e^{-|v - q|/vh}) sign(v - q): up to mu = 1.5 while sticking. The mass
    // slips until v = q at ts, sticks (v = q, F = -y) until y = mu, at ts + (mu - ys)/q.
    let (q, mu, vh) = (0.4, 1.5, 0.1);
    let mut model = compile(
        "model Stribeck
  parameter Real q = 0.4;
  parameter Real mu = 1.5;
  parameter Real vh = 0.1;
  Real y(start = 0, fixed = true);
  Real v(start = 0, fixed = true);
  Real vrel;
  Real F;
equation
  der(y) = v;
  der(v) = -F - y;
  vrel = v - q;
  F = (1 + (mu - 1)*exp(-abs(vrel)/vh))*sign(vrel);
end Stribeck;
",
    );
    let (ts, ys) = first_slip(q, |w| 1.0 + (mu - 1.0) * (-w / vh).exp());
    let te = ts + (mu - ys) / q;
    let result = model
        .simulate(&RunSettings {
            stop: Some(8.0),
            interval: Some(0.05),
            ..RunSettings::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let column = |name: &str| result.column(name).unwrap();
    let (t, y, v, f) = (result.time().to_vec(), column("y"), column("v"), column("F"));
    for i in 0..t.len() {
        assert!(f[i].abs() <= mu + 1e-6, "t = {}: F = {}", t[i], f[i]);
        if t[i] < ts - 1e-3 {
            // Slipping behind the belt: the force is the Stribeck curve's.
            let expected = -(1.0 + (mu - 1.0) * (-(q - v[i]) / vh).exp());
            assert!((f[i] - expected).abs() < 1e-9, "t = {}: F = {}", t[i], f[i]);
        } else if t[i] > ts + 1e-3 && t[i] < te - 1e-3 {
            // Stuck: moving with the belt, the friction force holds the spring.
            assert!((v[i] - q).abs() < 1e-6, "t = {}: v = {}", t[i], v[i]);
            assert!(
                (y[i] - (ys + q * (t[i] - ts))).abs() < 1e-5,
                "t = {}: y = {}",
                t[i],
                y[i]
            );
            assert!((f[i] + y[i]).abs() < 1e-6, "t = {}: F = {}, y = {}", t[i], f[i], y[i]);
        }
    }
    // Sticking ends where the spring force reaches static friction, and the mass slips back.
    let slipping_again = t
        .iter()
        .zip(&v)
        .find(|&(&ti, &vi)| ti > ts + 1e-3 && (vi - q).abs() > 1e-6)
        .map(|(&ti, _)| ti)
        .expect("the mass slips again");
    // The first row after te (rows every 0.05 s) shows it.
    assert!(
        slipping_again > te && slipping_again <= te + 0.05,
        "slips at {slipping_again}, expected {te}"
    );
    // The end of sticking is an event at te.
    let located = t.windows(2).any(|w| w[0] == w[1] && (w[0] - te).abs() < 1e-5);
    assert!(located, "no event at {te}");
}

/// The parametric friction element: the path parameter `s` is an unknown, and while
/// stuck the active branch `vrel = 0` fixes a state, so the model changes its structure.
pub const PARAMETRIC_FRICTION: &str = "model ParametricFriction
  parameter Real q = 0.4;
  Real y(start = 0, fixed = true);
  Real v(start = 0, fixed = true);
  Real vrel;
  Real s(start = -1.4);
  Real F;
equation
  der(y) = v;
  der(v) = -F - y;
  vrel = v - q;
  F = if s > 1 then 1 else if s < -1 then -1 else s;
  vrel = if s > 1 then s - 1 else if s < -1 then s + 1 else 0;
end ParametricFriction;
";

/// The motion of the stick-slip oscillator from rest in closed form, phase by phase: slipping
/// behind the belt `y'' = 1 - y` (y = 1 - cos t, v = sin t) until v = q at t1 = asin(q);
/// stuck (v = q, friction force -y) until the spring force reaches 1 at t2 = t1 + (1 - y1)/q;
/// then slipping again around y = 1 (y = 1 + q sin(t - t2), v = q cos(t - t2)) for a period.
/// Returns (y, v, F) at `t`, and the two switching times.
fn stick_slip_exact(q: f64, t: f64) -> ((f64, f64, f64), f64, f64) {
    let t1 = q.asin();
    let y1 = 1.0 - t1.cos();
    let t2 = t1 + (1.0 - y1) / q;
    let state = if t < t1 {
        (1.0 - t.cos(), t.sin(), -1.0)
    } else if t < t2 {
        let y = y1 + q * (t - t1);
        (y, q, -y)
    } else {
        (1.0 + q * (t - t2).sin(), q * (t - t2).cos(), -1.0)
    };
    (state, t1, t2)
}

#[test]
fn the_parametric_friction_element_sticks_and_slips_like_the_closed_form() {
    // Each mode (slipping behind, stuck, slipping ahead) is analysed with its own branches: the
    // stuck mode's `vrel = 0` constrains the velocity, which index reduction turns into a
    // dummy state; the run switches programs at v = q and at y = 1.
    let q = 0.4;
    let (_, t1, t2) = stick_slip_exact(q, 0.0);
    for method in [
        None,
        Some(eqm::Method::Dopri5),
        Some(eqm::Method::Bdf),
        Some(eqm::Method::Radau5),
    ] {
        let mut model = compile(PARAMETRIC_FRICTION);
        assert!(model.variable_structure().is_some());
        let name = method.as_ref().map_or("auto", |m| m.name());
        let result = model
            .simulate(&RunSettings {
                stop: Some(t2 + 6.0),
                interval: Some(0.05),
                rtol: Some(1e-9),
                atol: Some(1e-9),
                method: method.clone(),
                ..RunSettings::default()
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let column = |n: &str| result.column(n).unwrap();
        let (t, y, v, f) = (result.time().to_vec(), column("y"), column("v"), column("F"));
        for i in 0..t.len() {
            assert!(f[i].abs() <= 1.0 + 1e-12, "{name}: F({}) = {}", t[i], f[i]);
            // Away from the switches (a row at a switch shows either side).
            if (t[i] - t1).abs() > 1e-6 && (t[i] - t2).abs() > 1e-6 {
                let ((ye, ve, fe), ..) = stick_slip_exact(q, t[i]);
                assert!(
                    (y[i] - ye).abs() < 1e-6,
                    "{name}: y({}) = {}, expected {ye}",
                    t[i],
                    y[i]
                );
                assert!(
                    (v[i] - ve).abs() < 1e-6,
                    "{name}: v({}) = {}, expected {ve}",
                    t[i],
                    v[i]
                );
                assert!(
                    (f[i] - fe).abs() < 1e-6,
                    "{name}: F({}) = {}, expected {fe}",
                    t[i],
                    f[i]
                );
            }
        }
        // Both switches are events: two rows at each, located to the closed form's times.
        for switch in [t1, t2] {
            let located = t.windows(2).any(|w| w[0] == w[1] && (w[0] - switch).abs() < 1e-7);
            assert!(located, "{name}: no switch at {switch}: {:?}", &t[..12]);
        }
        assert_eq!(result.summary.events.events, 2, "{name}");
        assert!(
            result
                .summary
                .events
                .notes
                .iter()
                .filter(|n| n.contains("the structure changes"))
                .count()
                == 2,
            "{name}: {:?}",
            result.summary.events.notes
        );
    }
}

#[test]
fn the_parametric_and_the_naive_friction_models_move_alike() {
    // The same oscillator written with sign() runs through Filippov sliding instead of a
    // change of structure; both give the same motion.
    let naive = "model Naive
  parameter Real q = 0.4;
  Real y(start = 0, fixed = true);
  Real v(start = 0, fixed = true);
equation
  der(y) = v;
  der(v) = -sign(v - q) - y;
end Naive;
";
    let settings = RunSettings {
        stop: Some(12.0),
        interval: Some(0.1),
        rtol: Some(1e-9),
        atol: Some(1e-9),
        ..RunSettings::default()
    };
    let a = compile(PARAMETRIC_FRICTION).simulate(&settings).unwrap();
    let b = compile(naive).simulate(&settings).unwrap();
    let at = |r: &eqm::SimulationResult, name: &str, time: f64| {
        let k = r.time().iter().position(|&t| (t - time).abs() < 1e-12).unwrap();
        r.column(name).unwrap()[k]
    };
    for k in 1..=120 {
        let time = k as f64 * 0.1;
        for name in ["y", "v"] {
            let (pa, pb) = (at(&a, name, time), at(&b, name, time));
            assert!((pa - pb).abs() < 1e-6, "{name}({time}): {pa} and {pb}");
        }
    }
}

#[test]
fn the_interpreter_and_native_code_agree_bit_for_bit_across_switches() {
    let settings = RunSettings {
        stop: Some(6.0),
        interval: Some(0.1),
        ..RunSettings::default()
    };
    let native = compile(PARAMETRIC_FRICTION).simulate(&settings).unwrap();
    let interpreted = compile(PARAMETRIC_FRICTION)
        .simulate(&RunSettings {
            interpreter: true,
            ..settings
        })
        .unwrap();
    assert_eq!(native.time(), interpreted.time());
    for name in ["y", "v", "F", "s"] {
        assert_eq!(native.column(name), interpreted.column(name), "{name}");
    }
}
