//! Runs at a list of parameter points (`Model::simulate_points`) against single runs with the
//! same values and against the closed form, the compile counter across parameter changes, and
//! the cancel flag of a run.

use eqm::counters::{compilations, is_cancelled};
use eqm::{ModelOptions, RunError, RunSettings, Session};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

const DECAY: &str = "model Decay
  parameter Real k = 1;
  Real x(start = 1, fixed = true);
equation
  der(x) = -k*x;
end Decay;";

fn decay() -> eqm::Model {
    let mut session = Session::with_sources(&[("m.eqm".to_string(), DECAY.to_string())], &[], None);
    session
        .compile(None, &ModelOptions::default())
        .expect("the model compiles")
}

fn settings() -> RunSettings {
    RunSettings {
        stop: Some(1.0),
        interval: Some(0.1),
        rtol: Some(1e-10),
        atol: Some(1e-12),
        ..RunSettings::default()
    }
}

#[test]
fn points_equal_single_runs_and_the_closed_form() {
    let mut model = decay();
    let ks = [0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let points: Vec<Vec<(String, f64)>> = ks.iter().map(|k| vec![("k".to_string(), *k)]).collect();
    let runs = model.simulate_points(&points, &settings(), Some(3)).unwrap();
    assert_eq!(runs.runs.len(), ks.len());
    assert_eq!(runs.columns.len(), 1);
    for (run, k) in runs.runs.iter().zip(ks) {
        assert!(run.outcome.is_ok());
        model.set_parameter("k", k).unwrap();
        let single = model.simulate(&settings()).unwrap();
        model.reset();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
        assert_eq!(bits(&run.time), bits(single.time()));
        assert_eq!(bits(&run.rows), bits(&single.column("x").unwrap()));
        let x1 = *run.rows.last().unwrap();
        assert!((x1 - (-k).exp()).abs() < 1e-8, "k = {k}: {x1}");
    }
    // The values the model had before are its values after.
    let after = model.simulate(&settings()).unwrap();
    assert!((after.final_value("x").unwrap() - (-1.0f64).exp()).abs() < 1e-8);
}

#[test]
fn a_point_the_model_cannot_take_fails_alone() {
    let mut model = decay();
    let points = vec![
        vec![("k".to_string(), 2.0)],
        vec![("no_such".to_string(), 2.0)],
        vec![("k".to_string(), 3.0)],
    ];
    let runs = model.simulate_points(&points, &settings(), Some(2)).unwrap();
    assert!(runs.runs[0].outcome.is_ok() && runs.runs[2].outcome.is_ok());
    match &runs.runs[1].outcome {
        Err(RunError::Model(d)) => assert!(d.message.contains("no_such"), "{}", d.message),
        other => panic!("expected a model error, got {other:?}"),
    }
    assert!(runs.runs[1].time.is_empty());
}

#[test]
fn parameter_changes_compile_nothing() {
    let mut model = decay();
    model.simulate(&settings()).unwrap();
    // Other tests compile in parallel threads; the counts are of the process, so this test
    // looks for its own runs compiling nothing by repeating until no other compilation
    // interleaved, and at least the model's own count must not move in between.
    let mut unchanged = false;
    for _ in 0..20 {
        let before = compilations();
        for k in [0.5, 2.0, 4.0] {
            model.set_parameter("k", k).unwrap();
            model.set_start("x", 2.0).unwrap();
            model.simulate(&settings()).unwrap();
        }
        if compilations() == before {
            unchanged = true;
            break;
        }
    }
    assert!(unchanged, "parameter changes compiled something");
    let before = compilations().models;
    let _other = decay();
    assert!(compilations().models > before);
}

#[test]
fn a_cancelled_run_stops_with_the_rows_before() {
    let mut model = decay();
    let flag = Arc::new(AtomicBool::new(true));
    let settings = RunSettings {
        cancel: Some(flag),
        ..settings()
    };
    let columns = model.columns(None).unwrap();
    let mut rows = 0;
    let outcome = model.simulate_into(&settings, &columns, &mut |_: f64, _: &[f64]| {
        rows += 1;
        Ok(())
    });
    let error = outcome.expect_err("the run was cancelled");
    assert!(is_cancelled(&error), "{error}");
    assert_eq!(rows, 0);
}

/// Runs `text` with fixed Euler steps of 1 from 0 to 1e9, one row at the start and the next
/// at the end, and sets the cancel flag from another thread after 0.2 s: the run must stop
/// between steps, long before its billion steps are done, with the cancelled outcome and only
/// the first row written.
fn cancelled_between_rows(text: &str) {
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    let mut model = session
        .compile(None, &ModelOptions::default())
        .expect("the model compiles");
    let flag = Arc::new(AtomicBool::new(false));
    let settings = RunSettings {
        stop: Some(1e9),
        interval: Some(1e9),
        method: eqm::Method::parse("euler"),
        step: Some(1.0),
        cancel: Some(flag.clone()),
        ..RunSettings::default()
    };
    let columns = model.columns(None).unwrap();
    let setter = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
        std::time::Instant::now()
    });
    let mut rows = 0;
    let outcome = model.simulate_into(&settings, &columns, &mut |_: f64, _: &[f64]| {
        rows += 1;
        Ok(())
    });
    let stopped = std::time::Instant::now();
    let set_at = setter.join().unwrap();
    let error = outcome.expect_err("the run was cancelled");
    assert!(is_cancelled(&error), "{error}");
    assert_eq!(rows, 1, "only the row at the start is written");
    // A billion steps take minutes even as native code; the run stops at its next step.
    let late = stopped.saturating_duration_since(set_at);
    assert!(
        late < std::time::Duration::from_secs(5),
        "stopped {late:?} after the flag was set"
    );
}

#[test]
fn a_cancelled_run_stops_between_rows_without_events() {
    cancelled_between_rows(DECAY);
}

#[test]
fn a_cancelled_run_stops_between_rows_with_events() {
    // The assertion makes the run go through the hybrid driver.
    cancelled_between_rows(
        "model Decay
  Real x(start = 1, fixed = true);
equation
  der(x) = -1e-9*x;
  assert(x > -1, \"x stays above -1\");
end Decay;",
    );
}
