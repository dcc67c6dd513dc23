//! Accumulations of events: a model whose own equations end them runs on past the
//! accumulation point; one whose motion does not come to rest there stops with E0711, fast.
//!
//! The bounces of a ball dropped from h = 1 with restitution e are at t1 = sqrt(2/g) and then
//! every 2 e^k t1, so they accumulate at t1 (1 + 2e/(1 - e)) (hand-computed closed form).

use crate::compile;
use crate::hybrid::methods;
use eqm::{RunError, RunSettings};

const G: f64 = 9.81;

/// The methods accurate enough to follow the bounces to the accumulation point: implicit
/// Euler, of order one, damps each flight and accumulates its bounces earlier.
fn accurate_methods() -> Vec<Option<eqm::Method>> {
    methods()
        .into_iter()
        .filter(|m| *m != Some(eqm::Method::ImplicitEuler))
        .collect()
}

/// How close `method` comes to the closed form over the many bounces: BDF starts again at
/// order one after each event, whose errors add up over some forty bounces.
fn accuracy(method: &Option<eqm::Method>) -> f64 {
    match method {
        Some(eqm::Method::Bdf) => 1e-4,
        _ => 1e-6,
    }
}

/// The accumulation point of the bounces of a ball dropped from 1 with restitution `e`.
fn limit(e: f64) -> f64 {
    (2.0 / G).sqrt() * (1.0 + 2.0 * e / (1.0 - e))
}

/// A ball that stops flying once it no longer rises: where its bounces fall below what the run
/// resolves, h <= 0 and v <= 0 at once switch gravity off, which ends the accumulation.
const SETTLING: &str = "
model SettlingBall
  parameter Real e = 0.7;
  parameter Real g = 9.81;
  Real h(start = 1.0, fixed = true);
  Real v(start = 0, fixed = true);
  Boolean flying(start = true);
equation
  der(h) = v;
  der(v) = if flying then -g else 0;
  flying = not (h <= 0 and v <= 0);
  when h < 0 then
    reinit(v, -e*pre(v));
  end when;
end SettlingBall;
";

/// The ideal ball, with a Boolean that changes at every bounce and a clause of its own that
/// counts the apexes: neither ends the accumulation, whose motion does not stop at its limit.
const ZENO: &str = "
model ZenoBall
  parameter Real e = 0.7;
  parameter Real g = 9.81;
  Real h(start = 1.0, fixed = true);
  Real v(start = 0, fixed = true);
  Boolean rising;
  Integer apexes(start = 0, fixed = true);
equation
  der(h) = v;
  der(v) = -g;
  rising = v > 0;
  when h < 0 then
    reinit(v, -e*pre(v));
  end when;
  when not rising then
    apexes = pre(apexes) + 1;
  end when;
end ZenoBall;
";

#[test]
fn a_ball_whose_equations_end_its_bounces_comes_to_rest_past_the_accumulation_point() {
    let t_limit = limit(0.7);
    for method in accurate_methods() {
        let mut model = compile(SETTLING);
        let result = model
            .simulate(&RunSettings {
                stop: Some(3.0),
                method: method.clone(),
                rtol: Some(1e-10),
                atol: Some(1e-10),
                ..RunSettings::default()
            })
            .unwrap_or_else(|e| panic!("{method:?}: {e}"));
        // Still flying before the limit, at rest on the floor after it.
        let tol = accuracy(&method);
        assert_eq!(result.value_at("flying", t_limit - 1e-3), Some(1.0), "{method:?}");
        assert_eq!(result.value_at("flying", 3.0), Some(0.0), "{method:?}");
        let h = result.value_at("h", 3.0).expect("h");
        let v = result.value_at("v", 3.0).expect("v");
        assert!(h.abs() < tol && v.abs() < 10.0 * tol, "{method:?}: h = {h}, v = {v}");
        // No row is below the floor by more than the method's error.
        let below = result.column("h").expect("h").iter().fold(0.0f64, |m, &h| m.min(h));
        assert!(below > -tol, "{method:?}: {below} below the floor");
    }
}

#[test]
fn an_accumulation_that_nothing_ends_stops_with_the_limit_time() {
    let t_limit = limit(0.7);
    for method in accurate_methods() {
        let mut model = compile(ZENO);
        let started = std::time::Instant::now();
        let outcome = model.simulate(&RunSettings {
            stop: Some(3.0),
            method: method.clone(),
            rtol: Some(1e-10),
            atol: Some(1e-10),
            ..RunSettings::default()
        });
        assert!(started.elapsed().as_secs() < 60, "{method:?}: the run took too long");
        let Err(RunError::Failed { time, diagnostic, .. }) = outcome else {
            panic!("{method:?}: the ball fell through the floor without a diagnostic")
        };
        let diagnostic = diagnostic.expect("a diagnostic");
        assert_eq!(diagnostic.code, "E0711", "{method:?}");
        let tol = accuracy(&method);
        assert!(
            time <= t_limit + tol && time > t_limit - 1e-3,
            "{method:?}: stopped at {time}"
        );
        let said: f64 = diagnostic
            .message
            .split("accumulate at t ≈ ")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no limit time in {}", diagnostic.message));
        assert!((said - t_limit).abs() < tol, "{method:?}: {said} vs {t_limit}");
    }
}
