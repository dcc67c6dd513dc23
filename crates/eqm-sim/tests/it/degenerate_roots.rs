//! Nonlinear loops whose Jacobian is singular where their unknowns stand: a degenerate root the
//! solution leaves as time goes on, solved by Newton from points moved off it, and a curve of
//! solutions through the start values, which stays an error. Native code and the interpreter
//! must agree bit for bit.

use crate::nonlinear::bisect;
use eqm_integrators::Method;
use eqm_sim::interp::{NewtonFailure, RecoveryMethod};
use eqm_sim::simulate::Backend;

/// The rows of `x` at 0, 0.25, ..., 1 of the model in `text` by both back ends (which must
/// agree bit for bit), and the method of the initialization's one recovered block.
fn rows_of_x(name: &str, text: &str) -> (Vec<(f64, f64)>, RecoveryMethod) {
    let compiled = crate::pipeline::compile(name, text);
    let names = vec!["x".to_string()];
    let mut runs = Vec::new();
    for backend in [Backend::Auto, Backend::Interpreter] {
        let mut options = crate::run_options(1.0, Method::Dopri5, 1e-10, 1e-12, 0.25);
        options.backend = backend;
        let mut rows = Vec::new();
        let summary = crate::run(&compiled, &options, Some(names.as_slice()), name, |t, row| {
            rows.push((t, row[0]));
        });
        assert_eq!(summary.initialization.len(), 1, "{name}: {:?}", summary.initialization);
        let first = summary.initialization[0].recoveries.first;
        assert_eq!(first.newton, NewtonFailure::Singular, "{name}");
        runs.push((rows, first.method));
    }
    let (interpreted, native) = (runs.pop().expect("two runs"), runs.pop().expect("two runs"));
    for ((t, a), (_, b)) in native.0.iter().zip(&interpreted.0) {
        assert_eq!(a.to_bits(), b.to_bits(), "{name} at {t}: native {a}, interpreter {b}");
    }
    assert_eq!(native.1, interpreted.1, "{name}: the back ends recovered differently");
    native
}

/// `x = sin(time) + r` with `r = sin(x)`: `x - sin(x) = sin(t)`, whose root at t = 0 is the
/// triple root x = 0, where `1 - cos(x)` and so the loop's Jacobian vanish; for t > 0 the
/// root is simple and moves as the cube root of `6 sin(t)` at first. The reference at each
/// row is the root of `x - sin(x) - sin(t)` by bisection in [0, 4].
#[test]
fn a_loop_starting_at_a_degenerate_root_follows_the_root_as_time_moves_it() {
    let text = "model Degenerate
                  Real x;
                  Real r;
                equation
                  x = sin(time) + r;
                  r = sin(x);
                end Degenerate;";
    let (rows, method) = rows_of_x("degenerate.eqm", text);
    assert_eq!(method, RecoveryMethod::Perturbed);
    assert_eq!(rows.first().map(|r| r.1), Some(0.0), "{rows:?}");
    let later: Vec<_> = rows.iter().filter(|(t, _)| *t > 0.0).collect();
    assert_eq!(later.len(), 4, "{rows:?}");
    for &&(t, x) in &later {
        let expected = bisect(0.0, 4.0, |x| x - x.sin() - t.sin());
        assert!(
            (x - expected).abs() <= 1e-7 * expected,
            "x({t}) = {x}, expected {expected}"
        );
    }
}

/// `g = x² + y² - 1` and `g·(1 + x²)`: every point of the unit circle solves both, and the
/// start values (0.6, 0.8) lie on it. Newton from points beside them lands elsewhere on the
/// circle, so no point is picked: the run stops with the singular Jacobian (E0703).
#[test]
fn a_curve_of_solutions_through_the_start_values_stays_an_error() {
    let text = "model Curve
                  Real x(start = 0.6);
                  Real y(start = 0.8);
                equation
                  x^2 + y^2 - 1 = 0;
                  (x^2 + y^2 - 1)*(1 + x^2) = 0;
                end Curve;";
    let (_, diagnostic) = crate::failure_of("curve.eqm", text);
    assert_eq!(diagnostic.code, "E0703", "{diagnostic:?}");
}
