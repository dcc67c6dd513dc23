//! A model that chooses its own method and fixed step (`__eqm(solver = ..., step = ...)`), as
//! system-dynamics models run with a time step DT: the rows are the method's iterates on the grid
//! `n·DT`, checked against closed forms and values computed by iterating the same update by
//! hand; the command line still wins; a sample tick between grid points ends a step there and
//! the grid goes on; a solver name that is no method is a located diagnostic.

use crate::compile;
use eqm::{Method, RunSettings};

/// `examples/teacup.eqm`: T' = -(T - 70)/10, T(0) = 180, Euler with DT = 0.125.
fn teacup() -> eqm::Model {
    compile(&crate::example("teacup.eqm"))
}

/// `|got - expected| <= rtol·|expected|`, with the name in the message.
fn assert_close(what: &str, got: f64, expected: f64, rtol: f64) {
    assert!(
        (got - expected).abs() <= rtol * expected.abs(),
        "{what} = {got}, expected {expected} (rtol {rtol})"
    );
}

#[test]
fn the_teacup_runs_with_its_own_euler_step_and_reports_every_step() {
    let mut model = teacup();
    let result = model.simulate(&RunSettings::default()).expect("runs");
    // Every DT from 0 to 30: 241 rows, each the Euler iterate T_n = 70 + 110·(1 − 0.0125)^n.
    assert_eq!(result.len(), 241);
    let temperatures = result.column("T").unwrap();
    for (n, (&t, &value)) in result.time().iter().zip(&temperatures).enumerate() {
        assert_eq!(t, n as f64 * 0.125, "row {n} is on the grid");
        assert_close(
            &format!("T({t})"),
            value,
            70.0 + 110.0 * 0.9875f64.powi(n as i32),
            1e-12,
        );
    }
    // The values to six digits, as system-dynamics tools report them for this model.
    for (t, expected) in [(1.0, 169.469), (5.0, 136.508), (10.0, 110.212), (30.0, 75.374)] {
        assert_close(&format!("T({t})"), result.value_at("T", t).unwrap(), expected, 1e-5);
    }
    assert_close(
        "heat_loss(10)",
        result.value_at("heat_loss", 10.0).unwrap(),
        4.02125,
        1e-5,
    );
    // Not the solution of the differential equation: 70 + 110·exp(−1) = 110.467 at t = 10.
    let t10 = result.value_at("T", 10.0).unwrap();
    assert!((t10 - 110.467).abs() > 0.2, "T(10) = {t10} is the continuous solution");
}

#[test]
fn the_command_line_wins_over_the_models_solver_and_step() {
    let mut model = teacup();
    // Another method: an adaptive one ignores the model's step (with a note) and follows the
    // differential equation.
    let adaptive = RunSettings {
        method: Some(Method::Dopri5),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        stop: Some(10.0),
        ..RunSettings::default()
    };
    let notes = model.check_settings(&adaptive).expect("usable settings");
    assert!(
        notes.iter().any(|n| n.contains("the model's step 0.125 is not used")),
        "{notes:?}"
    );
    let result = model.simulate(&adaptive).expect("runs");
    assert_close(
        "T(10)",
        result.final_value("T").unwrap(),
        70.0 + 110.0 * (-1.0f64).exp(),
        1e-8,
    );
    // Another step: the model's Euler with DT = 0.25, whose iterate is 70 + 110·(1 − 0.025)^n.
    let coarser = RunSettings {
        step: Some(0.25),
        stop: Some(10.0),
        ..RunSettings::default()
    };
    let result = model.simulate(&coarser).expect("runs");
    assert_close(
        "T(10)",
        result.final_value("T").unwrap(),
        70.0 + 110.0 * 0.975f64.powi(40),
        1e-12,
    );
    // The output interval still defaults to the model's step, not the one given.
    assert_eq!(result.time()[1], 0.125);
}

/// A tick of `sample(0.1, 1)` lies between the grid points 0 and 0.125 of DT = 0.125: the step
/// ends exactly at the tick, and the next step goes back to the grid (0.1 to 0.125), so every
/// row on the grid is still an Euler iterate.
#[test]
fn a_sample_tick_between_grid_points_ends_a_step_and_the_grid_goes_on() {
    let mut model = compile(
        "model Ticks
  Real y(start = 1, fixed = true);
  Integer n(start = 0, fixed = true);
  discrete Real tick(start = -1, fixed = true);
equation
  der(y) = -y;
  when sample(0.1, 1) then
    n = pre(n) + 1;
    tick = time;
  end when;
  annotation(experiment(StartTime = 0, StopTime = 3), __eqm(solver = \"euler\", step = 0.125));
end Ticks;
",
    );
    let result = model.simulate(&RunSettings::default()).expect("runs");
    let time = result.time();
    // The ticks at 0.1, 1.1 and 2.1 are rows (before and after the event), exactly there.
    for tick in [0.1, 1.1, 2.1] {
        assert_eq!(
            time.iter().filter(|&&t| t == tick).count(),
            2,
            "rows at the tick {tick}: {time:?}"
        );
    }
    assert_eq!(result.final_value("n"), Some(3.0));
    assert_eq!(result.final_value("tick"), Some(2.1));
    // By hand: Euler from 0 to the tick at 0.1 (factor 1 − 0.1), from there to the grid point
    // 0.125 (1 − 0.025), then whole steps of 0.125 (1 − 0.125 each).
    assert_close("y(0.1)", result.value_at("y", 0.1).unwrap(), 0.9, 1e-14);
    assert_close("y(0.125)", result.value_at("y", 0.125).unwrap(), 0.9 * 0.975, 1e-14);
    assert_close(
        "y(0.25)",
        result.value_at("y", 0.25).unwrap(),
        0.9 * 0.975 * 0.875,
        1e-14,
    );
    assert_close(
        "y(1)",
        result.value_at("y", 1.0).unwrap(),
        0.9 * 0.975 * 0.875f64.powi(7),
        1e-13,
    );
    // Every row but the ticks' is on the grid.
    for &t in time.iter().filter(|&&t| ![0.1, 1.1, 2.1].contains(&t)) {
        assert_eq!((t / 0.125).fract(), 0.0, "row at {t} is on the grid");
    }
}

#[test]
fn a_solver_that_is_no_method_is_a_located_diagnostic() {
    let text = "model M
  Real x(start = 1, fixed = true);
equation
  der(x) = -x;
  annotation(__eqm(solver = \"eular\", step = 0.1));
end M;
";
    let mut session = eqm::Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    assert!(session.check(None, &eqm::ModelOptions::default()).is_none());
    let d = &session.diagnostics()[0];
    assert_eq!(d.code, "E0314");
    assert!(
        d.message.contains("the solver `eular` of `__eqm` is no method"),
        "{}",
        d.message
    );
    assert_eq!(d.help.as_deref(), Some("did you mean `euler`?"));
    let span = d.primary_span().expect("located");
    assert_eq!(&text[span.start as usize..span.end as usize], "\"eular\"");
}
