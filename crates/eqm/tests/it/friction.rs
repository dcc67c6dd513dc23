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

/// A mass `m` pushed by a constant force `f`, sliding backward from `w = -1` against Coulomb
/// friction `tau0` written as the Modelica Standard Library writes its friction elements: a
/// path parameter `sa`, the Booleans `startForward`, `startBackward` and `locked` that choose the
/// structure, and an Integer `mode` whose `pre` value remembers the direction of sliding. With
/// `m != 1` the path parameter of sliding in one direction is that of starting in the other
/// (`sa = (f -+ tau0)/m +- tau0`), so where the mass stops, following the modes' own values goes
/// round a cycle and only the locked mode is consistent.
const STOPPING_MASS: &str = "model StoppingMass
  parameter Real m = 0.1;
  parameter Real f = 0.5;
  parameter Real tau0 = 1;
  Real phi(start = 0, fixed = true);
  Real w(start = -1, fixed = true);
  Real a;
  Real sa;
  Real tau;
  Boolean startForward(start = false, fixed = true);
  Boolean startBackward(start = false, fixed = true);
  Boolean locked(start = false);
  Integer mode(start = 3, fixed = true);
equation
  der(phi) = w;
  der(w) = a;
  m*a = f - tau;
  startForward = pre(mode) == 0 and (sa > tau0 or pre(startForward) and sa > tau0)
    or pre(mode) == -1 and w > 1e10 or initial() and w > 0;
  startBackward = pre(mode) == 0 and (sa < -tau0 or pre(startBackward) and sa < -tau0)
    or pre(mode) == 1 and w < -1e10 or initial() and w < 0;
  locked = not (pre(mode) == 1 or startForward or pre(mode) == -1 or startBackward);
  a = if locked then 0 else if startForward then sa - tau0 else if startBackward then sa + tau0
    else if pre(mode) == 1 then sa - tau0 else if pre(mode) == -1 then sa + tau0
    else sa - sign(w)*tau0;
  tau = if locked then sa else if startForward then tau0 else if startBackward then -tau0
    else if pre(mode) == 1 then tau0 else if pre(mode) == -1 then -tau0 else sign(w)*tau0;
  mode = if (pre(mode) == 1 or startForward) and w > 0 then 1
    else if (pre(mode) == -1 or startBackward) and w < 0 then -1 else 0;
end StoppingMass;
";

/// The run of [`STOPPING_MASS`] with the force `f` to `stop`, every `interval`.
fn stopping_mass(f: f64, stop: f64, interval: f64) -> eqm::SimulationResult {
    let mut model = compile(STOPPING_MASS);
    model.set_parameter("f", f).unwrap_or_else(|e| panic!("{e:?}"));
    model
        .simulate(&RunSettings {
            stop: Some(stop),
            interval: Some(interval),
            ..RunSettings::default()
        })
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_friction_element_whose_sliding_modes_contradict_each_other_locks_where_the_mass_stops() {
    // Sliding backward: a = (f + tau0)/m = 15, so w = -1 + 15 t reaches 0 at t* = 1/15 with
    // phi = -t* + 7.5 t*^2 = -1/30. There |f| < tau0: the mass sticks, held by tau = f.
    let result = stopping_mass(0.5, 0.2, 0.01);
    let column = |name: &str| result.column(name).unwrap();
    let (t, phi, w, tau, mode, locked) = (
        result.time().to_vec(),
        column("phi"),
        column("w"),
        column("tau"),
        column("mode"),
        column("locked"),
    );
    let stop = 1.0 / 15.0;
    for i in 0..t.len() {
        if t[i] < stop - 1e-9 {
            assert!((w[i] - (-1.0 + 15.0 * t[i])).abs() < 1e-9, "w({}) = {}", t[i], w[i]);
            assert_eq!((mode[i], tau[i]), (-1.0, -1.0), "t = {}", t[i]);
        } else if t[i] > stop + 1e-9 {
            assert!(w[i].abs() < 1e-9, "w({}) = {}", t[i], w[i]);
            assert!((phi[i] + 1.0 / 30.0).abs() < 1e-9, "phi({}) = {}", t[i], phi[i]);
            assert!((tau[i] - 0.5).abs() < 1e-9, "tau({}) = {}", t[i], tau[i]);
            assert_eq!((mode[i], locked[i]), (0.0, 1.0), "t = {}", t[i]);
        }
    }
    assert!(
        t.last().is_some_and(|&end| (end - 0.2).abs() < 1e-12),
        "the run reaches its end"
    );
}

#[test]
fn a_friction_element_pushed_harder_than_its_friction_slides_forward_where_the_mass_stops() {
    // With f = 2 > tau0: backward a = (f + tau0)/m = 30 until t* = 1/30 (phi = -1/60), then
    // forward a = (f - tau0)/m = 10: w = 10 (t - t*).
    let result = stopping_mass(2.0, 0.1, 0.01);
    let column = |name: &str| result.column(name).unwrap();
    let (t, phi, w, mode) = (result.time().to_vec(), column("phi"), column("w"), column("mode"));
    let stop = 1.0 / 30.0;
    for i in 0..t.len() {
        if t[i] > stop + 1e-9 {
            let s = t[i] - stop;
            assert!((w[i] - 10.0 * s).abs() < 1e-9, "w({}) = {}", t[i], w[i]);
            assert!(
                (phi[i] - (-1.0 / 60.0 + 5.0 * s * s)).abs() < 1e-9,
                "phi({}) = {}",
                t[i],
                phi[i]
            );
            assert_eq!(mode[i], 1.0, "t = {}", t[i]);
        }
    }
}
