//! The state of a run its caller drives (`SteppedRun::state`/`restore`,
//! `ModelExchange::state`/`restore`, `RunState::to_bytes`/`from_bytes`): a run put back into an
//! earlier state continues as it did from there (the events again at their closed-form times,
//! the samples and the delays' history as they were), within the run's tolerance, since the
//! integrator restarts at the restored point; the same state restored twice continues bit for
//! bit the same; bytes round-trip; bytes of another model or changed bytes are refused.

use super::compile;
use eqm::{RunSettings, RunState};

/// Settings of a tight stepped run to `stop`.
fn tight(stop: f64) -> RunSettings {
    RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..RunSettings::default()
    }
}

/// A ball dropped from 1 m bouncing with coefficient 0.8: the time and the count of its
/// impacts are discrete variables the when-clause sets.
const BALL: &str = "model Ball
  parameter Real e = 0.8;
  Real h(start = 1, fixed = true);
  Real v(start = 0, fixed = true);
  discrete Real impact(start = -1, fixed = true);
  Integer n(start = 0, fixed = true);
equation
  der(h) = v;
  der(v) = -9.81;
  when h <= 0 then
    reinit(v, -e*pre(v));
    impact = time;
    n = pre(n) + 1;
  end when;
end Ball;";

/// The first and second impact of [`BALL`] by the closed form.
fn impacts() -> (f64, f64) {
    let t1 = (2.0f64 / 9.81).sqrt();
    (t1, t1 + 2.0 * 0.8 * t1)
}

/// The values of `names` at the run's current point.
fn values(run: &mut eqm::SteppedRun<'_>, names: &[&str]) -> Vec<f64> {
    names.iter().map(|n| run.value(n).unwrap()).collect()
}

/// A state taken before the first impact, the run taken past both impacts, the state put
/// back: the run is at the state's point with its values (the impact not yet counted), and
/// continuing it meets both impacts again at their closed-form times, with the values the run
/// had the first time within the run's tolerance; restoring once more continues bit for bit
/// as the first restore did.
#[test]
fn a_stepped_run_restored_before_an_impact_meets_it_again_at_the_same_time() {
    let mut model = compile(BALL);
    let plan = model.plan_stepped(&tight(2.0)).unwrap();
    let mut run = model.start_stepped(&plan).unwrap();
    let names = ["h", "v", "impact", "n"];
    run.advance_to(0.3).unwrap();
    let at_t1 = values(&mut run, &names);
    let state = run.state().unwrap();
    assert_eq!(state.time(), 0.3);
    run.advance_to(0.5).unwrap();
    run.advance_to(1.2).unwrap();
    let first = values(&mut run, &names);
    let (i1, i2) = impacts();
    assert_eq!(first[3], 2.0, "two impacts by 1.2: {first:?}");
    assert!((first[2] - i2).abs() < 1e-8, "second impact at {}", first[2]);

    run.restore(&state).unwrap();
    assert_eq!(run.time(), 0.3);
    assert_eq!(values(&mut run, &names), at_t1, "the values at the restored point");
    run.advance_to(0.5).unwrap();
    let after_one = values(&mut run, &names);
    assert_eq!(after_one[3], 1.0);
    assert!(
        (after_one[2] - i1).abs() < 1e-9,
        "first impact again at {}",
        after_one[2]
    );
    run.advance_to(1.2).unwrap();
    let second = values(&mut run, &names);
    for (k, (a, b)) in first.iter().zip(&second).enumerate() {
        assert!((a - b).abs() < 1e-7, "{}: {a} before the restore, {b} after", names[k]);
    }

    run.restore(&state).unwrap();
    run.advance_to(0.5).unwrap();
    assert_eq!(
        values(&mut run, &names),
        after_one,
        "a second restore continues bit for bit"
    );
    run.advance_to(1.2).unwrap();
    assert_eq!(values(&mut run, &names), second);
}

/// A state taken after the first impact keeps what the event left: the count, the impact's
/// time and `pre(n)`, so that the next impact counts 2, not 1.
#[test]
fn a_state_after_an_event_keeps_the_discrete_values_and_their_pre_values() {
    let mut model = compile(BALL);
    let plan = model.plan_stepped(&tight(2.0)).unwrap();
    let mut run = model.start_stepped(&plan).unwrap();
    run.advance_to(0.6).unwrap();
    let state = run.state().unwrap();
    run.advance_to(1.5).unwrap();
    run.restore(&state).unwrap();
    assert_eq!(run.value("n").unwrap(), 1.0);
    run.advance_to(1.2).unwrap();
    let (_, i2) = impacts();
    assert_eq!(run.value("n").unwrap(), 2.0);
    assert!((run.value("impact").unwrap() - i2).abs() < 1e-8);
}

/// Samples every 0.1 counted: restored at 0.25 (three instants: 0, 0.1, 0.2) the count is 3
/// again and the next instants fire at their times. A delayed integral, `y = delay(x, 0.2)`
/// with `der(x) = a cos(time)`, `a = 1`, run to 1.5, restored at 0.5 and continued with
/// `a = 2`: `y` reads the restored history, `sin(t - 0.2)` up to 0.7, and after it the new
/// solution, `sin(0.5) + 2 (sin(t - 0.2) - sin(0.5))` (not the history the first run recorded
/// beyond 0.5).
#[test]
fn pending_samples_and_delay_histories_are_part_of_the_state() {
    let mut model = compile(
        "model Sampled
  Integer count(start = 0, fixed = true);
  Real x(start = 0, fixed = true);
equation
  der(x) = 1;
  when sample(0, 0.1) then
    count = pre(count) + 1;
  end when;
end Sampled;",
    );
    let plan = model.plan_stepped(&tight(2.0)).unwrap();
    let mut run = model.start_stepped(&plan).unwrap();
    run.advance_to(0.25).unwrap();
    assert_eq!(run.value("count").unwrap(), 3.0);
    let state = run.state().unwrap();
    run.advance_to(1.0).unwrap();
    assert_eq!(run.value("count").unwrap(), 11.0);
    run.restore(&state).unwrap();
    assert_eq!(run.value("count").unwrap(), 3.0);
    for (t, count) in [(0.35, 4.0), (0.55, 6.0), (1.0, 11.0)] {
        run.advance_to(t).unwrap();
        assert_eq!(run.value("count").unwrap(), count, "at {t}");
    }

    let mut model = compile(
        "model Delayed
  Real x(start = 0, fixed = true);
  Real y;
  parameter Real a = 1;
equation
  der(x) = a*cos(time);
  y = delay(x, 0.2);
end Delayed;",
    );
    let plan = model.plan_stepped(&tight(2.0)).unwrap();
    let mut run = model.start_stepped(&plan).unwrap();
    run.advance_to(0.5).unwrap();
    let state = run.state().unwrap();
    run.advance_to(1.5).unwrap();
    run.restore(&state).unwrap();
    run.set_parameter("a", 2.0).unwrap();
    let s5 = 0.5f64.sin();
    for t in [0.6, 0.8, 1.0, 1.3] {
        run.advance_to(t).unwrap();
        let y = run.value("y").unwrap();
        let x = match t <= 0.7 {
            true => (t - 0.2f64).sin(),
            false => s5 + 2.0 * ((t - 0.2f64).sin() - s5),
        };
        assert!((y - x).abs() < 1e-7, "y({t}) = {y}, closed form {x}");
    }
}

/// Bytes round-trip to an equal state, which continues exactly as the state itself does; a
/// changed, cut or foreign buffer is refused with the reason, and so is the state of another
/// model or of the other kind of run; a failed restore leaves the run as it was.
#[test]
fn states_as_bytes_round_trip_and_foreign_or_changed_bytes_are_refused() {
    let mut model = compile(BALL);
    let plan = model.plan_stepped(&tight(2.0)).unwrap();
    let mut run = model.start_stepped(&plan).unwrap();
    run.advance_to(0.3).unwrap();
    let mut state = run.state().unwrap();
    state.set_label("caller's note".to_string());
    let bytes = state.to_bytes();
    assert_eq!(&bytes[..8], b"EQMSTATE");
    let read = RunState::from_bytes(&bytes).unwrap();
    assert_eq!(read, state);
    assert_eq!(read.label(), "caller's note");
    run.advance_to(1.0).unwrap();
    run.restore(&state).unwrap();
    run.advance_to(1.0).unwrap();
    let from_state = run.value("h").unwrap();
    run.restore(&read).unwrap();
    run.advance_to(1.0).unwrap();
    assert_eq!(run.value("h").unwrap(), from_state);

    let refused = |bytes: &[u8], why: &str| match RunState::from_bytes(bytes) {
        Err(e) => assert!(e.to_string().contains(why), "{e}"),
        Ok(_) => panic!("bytes accepted that should not be ({why})"),
    };
    let mut changed = bytes.clone();
    let middle = changed.len() / 2;
    changed[middle] ^= 0x10;
    refused(&changed, "checksum");
    refused(&bytes[..bytes.len() - 3], "checksum");
    refused(&bytes[..5], "too short");
    refused(b"not a state at all", "EQMSTATE");
    let mut later = bytes.clone();
    later[8] = 9;
    refused(&later, "version 9");

    let mut other = compile(
        &BALL
            .replace("model Ball", "model Other")
            .replace("end Ball", "end Other"),
    );
    let other_plan = other.plan_stepped(&tight(2.0)).unwrap();
    let mut other_run = other.start_stepped(&other_plan).unwrap();
    let h = other_run.value("h").unwrap();
    match other_run.restore(&state) {
        Err(e) => assert!(e.to_string().contains("another model"), "{e}"),
        Ok(()) => panic!("a state of another model was restored"),
    }
    assert_eq!(other_run.value("h").unwrap(), h, "a refused state changes nothing");

    // A model that differs in one coefficient only is another model.
    let mut other = compile(&BALL.replace("-9.81", "-9.8"));
    let other_plan = other.plan_stepped(&tight(2.0)).unwrap();
    let mut other_run = other.start_stepped(&other_plan).unwrap();
    assert!(other.check_state(&state).is_err());
    match other_run.restore(&state) {
        Err(e) => assert!(e.to_string().contains("another model"), "{e}"),
        Ok(()) => panic!("a state of a model with another coefficient was restored"),
    }
    assert!(model.check_state(&state).is_ok());

    let mut exchanged = model.start_exchange(&plan).unwrap();
    match exchanged.restore(&state) {
        Err(e) => assert!(e.to_string().contains("stepped run"), "{e}"),
        Ok(()) => panic!("a stepped run's state was restored into a model exchanged"),
    }
}

/// A model its caller integrates, put back into a state before an impact: the time, the
/// states and the event's outcome are as they were (bit for bit: the caller's integration is
/// the same).
#[test]
fn a_model_exchanged_restored_before_an_impact_has_it_again() {
    let mut model = compile(BALL);
    let plan = model.plan_stepped(&tight(2.0)).unwrap();
    let mut m = model.start_exchange(&plan).unwrap();
    let state = m.state().unwrap();
    // Straight to just past the first impact: the states of the closed form there.
    let (i1, _) = impacts();
    let through = |m: &mut eqm::ModelExchange<'_>| {
        m.set_time(i1);
        m.set_states(&[0.0, -9.81 * i1]).unwrap();
        let outcome = m.event().unwrap();
        (
            outcome,
            m.states().to_vec(),
            m.value("n").unwrap(),
            m.value("impact").unwrap(),
        )
    };
    let first = through(&mut m);
    assert!(first.0.states_changed);
    assert_eq!(first.2, 1.0);
    m.restore(&state).unwrap();
    assert_eq!(m.time(), 0.0);
    assert_eq!(m.states(), &[1.0, 0.0]);
    assert_eq!(m.value("n").unwrap(), 0.0);
    assert_eq!(m.value("impact").unwrap(), -1.0);
    let second = through(&mut m);
    assert_eq!(first, second);
    assert!((second.1[1] - 0.8 * 9.81 * i1).abs() < 1e-12);
    assert!(matches!(
        model.start_stepped(&plan).unwrap().restore(&state),
        Err(e) if e.to_string().contains("model exchange")
    ));
}

/// Sliding is part of the state: the naive stick-slip model (slips until `v = q` at
/// `t1 = asin(0.4)`, then sticks with `v = q` and the friction balancing the spring, `F = -y`,
/// until `y = 1`) put back into a state taken while it sticks goes on sticking (`v = q` and
/// the closed form `y = 1 - sqrt(0.84) + 0.4 (t - t1)`), and leaves the surface as the first
/// run did.
#[test]
fn a_state_taken_while_sliding_goes_on_sliding() {
    let mut model = compile(
        "model M
  parameter Real q = 0.4;
  Real y(start = 0, fixed = true);
  Real v(start = 0, fixed = true);
  Real F;
equation
  der(y) = v;
  F = sign(v - q);
  der(v) = -F - y;
end M;",
    );
    let plan = model.plan_stepped(&tight(4.0)).unwrap();
    let mut run = model.start_stepped(&plan).unwrap();
    run.advance_to(1.0).unwrap();
    let state = run.state().unwrap();
    run.advance_to(3.5).unwrap();
    let first = run.value("y").unwrap();
    run.restore(&state).unwrap();
    let t1 = 0.4f64.asin();
    for t in [1.5, 2.0, 2.5] {
        run.advance_to(t).unwrap();
        let (y, v) = (run.value("y").unwrap(), run.value("v").unwrap());
        let closed = 1.0 - 0.84f64.sqrt() + 0.4 * (t - t1);
        assert!((y - closed).abs() < 1e-7, "y({t}) = {y}, closed form {closed}");
        assert!((v - 0.4).abs() < 1e-8, "v({t}) = {v}");
    }
    run.advance_to(3.5).unwrap();
    let second = run.value("y").unwrap();
    assert!((first - second).abs() < 1e-6, "y(3.5) = {first} before, {second} after");
}
