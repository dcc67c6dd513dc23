//! Equations whose solved form has a condition on the unknowns (`exp(y) = u` solved as
//! `y := log(u)` needs `u > 0`, `sqrt(y) = u` solved as `y := u^2` needs `u >= 0`): they are
//! solved iteratively as written, matching the closed form while it has a root, and the run
//! stops with a diagnostic naming the equation where the root ceases to exist, on both back
//! ends at the same instant.

use eqm::RunSettings;

/// The failure of `text` run to 1 on each back end: the time and the diagnostic, the same on
/// both; and the values of `name` before it, which must be equal too.
fn failure_of(text: &str, name: &str) -> (f64, eqm::Diagnostic, eqm::SimulationResult) {
    let mut outcomes = Vec::new();
    for interpreter in [false, true] {
        let mut model = crate::compile(text);
        let settings = RunSettings {
            stop: Some(1.0),
            interpreter,
            ..RunSettings::default()
        };
        let columns = model.columns(None).unwrap();
        let mut rows: Vec<(f64, Vec<f64>)> = Vec::new();
        let failure = model
            .simulate_into(&settings, &columns, &mut |t: f64, row: &[f64]| {
                rows.push((t, row.to_vec()));
                Ok(())
            })
            .expect_err("the root ceases to exist");
        let eqm::RunError::Failed { time, diagnostic, .. } = failure else {
            panic!("not a run failure: {failure}")
        };
        outcomes.push((time, diagnostic.expect("a diagnostic"), rows));
    }
    let (native, interpreted) = (&outcomes[0], &outcomes[1]);
    assert_eq!(native.0, interpreted.0, "the back ends fail at other times");
    assert_eq!(native.2, interpreted.2, "the back ends differ before the failure");
    let result = crate::compile(text)
        .simulate(&RunSettings {
            stop: Some(native.0 * 0.9),
            ..RunSettings::default()
        })
        .expect("runs before the failure");
    assert!(result.column(name).is_some(), "no column {name}");
    let (time, diagnostic, _) = outcomes.swap_remove(0);
    (time, *diagnostic, result)
}

/// `exp(y) = 0.5 - t`: y = log(0.5 - t) while t < 0.5; no root after. A trial point past 0.5
/// leaves Newton's iterate far out (exp of it is 0, a zero derivative); the trials closer to
/// the last solution start from the last accepted solution, so the run follows the logarithm to
/// 0.5 and stops only there, alone or next to a state.
#[test]
fn an_inverted_exponential_follows_the_logarithm_and_stops_where_its_argument_reaches_zero() {
    for (text, equation) in [
        (
            "model M\n  Real y;\nequation\n  exp(y) = 0.5 - time;\nend M;\n",
            "equation e1 for y",
        ),
        (
            "model M\n  Real x(start = 1, fixed = true);\n  Real y;\nequation\n  der(x) = -x;\n  exp(y) = 0.5 - time + x*0;\nend M;\n",
            "equation e2 for y",
        ),
    ] {
        let (time, diagnostic, result) = failure_of(text, "y");
        assert!((time - 0.5).abs() < 1e-9, "failed at {time}");
        // At 0.5 the iteration runs down the asymptote of `exp`: its derivative vanishes
        // (E0703) or its steps never shrink (E0702), whichever comes first from where it starts.
        assert!(["E0702", "E0703"].contains(&diagnostic.code), "{}", diagnostic.code);
        assert!(diagnostic.message.contains(equation), "{}", diagnostic.message);
        for (t, y) in result.time().iter().zip(result.column("y").unwrap()) {
            assert!((y - (0.5 - t).ln()).abs() < 1e-9, "y({t}) = {y}");
        }
    }
}

#[test]
fn an_inverted_square_root_follows_the_square_and_stops_where_its_value_turns_negative() {
    // sqrt(y) = 1 - 2t: y = (1 - 2t)^2 while t <= 0.5; no root after. With no states the
    // failure shows at the first output instant past 0.5.
    let (time, diagnostic, result) = failure_of(
        "model M
  Real u;
  Real y(start = 1);
equation
  u = 1 - 2*time;
  sqrt(y) = u;
end M;
",
        "y",
    );
    assert!(time > 0.5 && time < 0.51, "failed at {time}");
    assert_eq!(diagnostic.code, "E0703");
    assert!(diagnostic.message.contains("e2"), "{}", diagnostic.message);
    for (t, y) in result.time().iter().zip(result.column("y").unwrap()) {
        assert!((y - (1.0 - 2.0 * t).powi(2)).abs() < 1e-9, "y({t}) = {y}");
    }
}

/// `c*(der(x) + der(x)^3) = 1 - x` with `c = sin(time)`: at the start the factor of the
/// derivative is zero while the right side is 1, so nothing determines `der(x)` there; the
/// diagnostic says that the factor of the derivative vanishes, not to move a start value.
#[test]
fn a_derivative_whose_factor_is_zero_is_reported_as_such() {
    let text = "model M\n  Real x(start = 0, fixed = true);\n  Real c;\nequation\n  c = sin(time);\n  c*(der(x) + der(x)^3) = 1 - x;\nend M;\n";
    let mut session = eqm::Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    let mut model = session
        .compile(None, &eqm::ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let Err(eqm::RunError::Failed { diagnostic, time, .. }) = model.simulate(&eqm::RunSettings::default()) else {
        panic!("expected the run to fail with E0703");
    };
    assert_eq!(time, 0.0);
    let diagnostic = *diagnostic.expect("a diagnostic naming the equation");
    assert_eq!(diagnostic.code, "E0703", "{}", diagnostic.message);
    let help = diagnostic.help.unwrap_or_default();
    assert!(help.contains("solved for der(x)"), "{help}");
    assert!(help.contains("the factors that multiply it"), "{help}");
}
