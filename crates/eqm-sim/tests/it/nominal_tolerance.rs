//! The absolute tolerance scaled by each state's `nominal`: a state of size 1e-4 is measured
//! with a tolerance for values of that size, not of size 1.

use super::{pipeline, run, run_options};
use eqm_integrators::Method;

/// `x' = -x` from `x(0) = x0`, at the default tolerances (rtol = atol = 1e-6), with `nominal` on
/// `x` or not: the relative error at t = 5 against `x0 * exp(-5)`.
fn relative_error(x0: f64, nominal: Option<f64>) -> f64 {
    let attribute = nominal.map_or(String::new(), |n| format!(", nominal = {n:e}"));
    let text = format!(
        "model Decay\n  Real x(start = {x0:e}, fixed = true{attribute});\nequation\n  der(x) = -x;\nend Decay;\n"
    );
    let compiled = pipeline::compile("decay.eqm", &text);
    let options = run_options(5.0, Method::Dopri5, 1e-6, 1e-6, 5.0);
    let mut last = f64::NAN;
    run(&compiled, &options, Some(&["x".to_string()]), "decay", |_, values| {
        last = values[0];
    });
    let exact = x0 * (-5.0f64).exp();
    ((last - exact) / exact).abs()
}

/// With `nominal = 1e-4` the small state is as accurate, relative to its size, as a state of
/// size 1 without one; without it, the absolute tolerance (larger than the whole state at the
/// end) leaves its error far larger.
#[test]
fn a_small_state_with_a_nominal_is_measured_at_its_own_scale() {
    let reference = relative_error(1.0, None);
    let scaled = relative_error(1e-4, Some(1e-4));
    let unscaled = relative_error(1e-4, None);
    assert!(reference < 1e-4, "{reference}");
    assert!(scaled < 2.0 * reference + 1e-12, "scaled {scaled} against {reference}");
    assert!(unscaled > 10.0 * scaled, "unscaled {unscaled}, scaled {scaled}");
}
