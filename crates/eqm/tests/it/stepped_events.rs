//! Stepped runs that leave events to their caller (`SteppedRun::set_event_policy`), as an FMU
//! in FMI 3 Co-Simulation with Event Mode does: the run stops just before an event, with the
//! values before it, and handles it when asked, each checked against the closed form of the
//! bouncing ball and the instants of a sample.

use super::compile;
use crate::stepped::{BALL, COUNT, tight};
use eqm::{Advanced, EventPolicy};

/// Advances `run` to `t`, handling on the way the events at the time of the last one, `last`:
/// the relation `h <= 0` of the ball turns false again right after an impact (the impact leaves
/// `h` within a rounding below zero), an event of its own that changes no value.
fn advance_past_echoes(run: &mut eqm::SteppedRun<'_>, t: f64, last: f64) -> Advanced {
    loop {
        match run.advance_to(t).unwrap() {
            Advanced::EventDue { time } if (time - last).abs() < 1e-9 => {
                let v = run.value("v").unwrap();
                assert_eq!(run.event().unwrap(), Advanced::Reached);
                assert_eq!(run.value("v").unwrap(), v, "the relation's event changes no value");
            }
            other => return other,
        }
    }
}

/// The bouncing ball advanced to 2 in one call after another with `EventPolicy::First`: each
/// call stops at the next impact, whose instants and speeds are the closed form's (the first
/// at `t1 = sqrt(2/g)` with speed `g·t1`, each bounce `2·v/g` long and leaving with `0.7` of the
/// speed it arrived with); before `event()` the ball falls, after it rises.
#[test]
fn a_run_that_leaves_events_to_its_caller_stops_just_before_each_impact() {
    let mut model = compile(BALL);
    let plan = model.plan_stepped(&tight(2.0)).unwrap();
    let mut run = model.start_stepped(&plan).unwrap();
    run.set_event_policy(EventPolicy::First);
    let g: f64 = 9.81;
    let t1 = (2.0 / g).sqrt();
    let (mut expected, mut speed) = (t1, g * t1);
    let mut impacts = 0;
    let mut last = 0.0;
    loop {
        match advance_past_echoes(&mut run, 2.0, last) {
            Advanced::EventDue { time } => {
                assert!(
                    (time - expected).abs() < 1e-8,
                    "impact {impacts} at {time}, closed form {expected}"
                );
                assert_eq!(run.time(), time);
                assert_eq!(run.due_event(), Some(time));
                assert!(run.value("h").unwrap().abs() < 1e-8);
                let before = run.value("v").unwrap();
                assert!(
                    (before + speed).abs() < 1e-7,
                    "v before = {before}, closed form {}",
                    -speed
                );
                assert_eq!(run.event().unwrap(), Advanced::Reached);
                assert_eq!(run.due_event(), None);
                let after = run.value("v").unwrap();
                assert!((after - 0.7 * speed).abs() < 1e-7, "v after = {after}");
                speed *= 0.7;
                expected += 2.0 * speed / g;
                last = time;
                impacts += 1;
            }
            Advanced::Reached => break,
            other => panic!("{other:?}"),
        }
    }
    // Impacts at 0.452, 1.084, 1.526 and 1.836; the fifth, at 2.053, lies beyond the end.
    assert_eq!(impacts, 4);
    assert!((run.time() - 2.0).abs() < 1e-12);
    let s = 2.0 - (expected - 2.0 * speed / g);
    let h = speed * s - 0.5 * g * s * s;
    assert!(
        (run.value("h").unwrap() - h).abs() < 1e-7,
        "h(2) = {}, closed form {h}",
        run.value("h").unwrap()
    );
}

/// With `EventPolicy::AtEnd` the events inside the segment are handled there and only one at
/// its end waits: a sample every 0.3 counted, advanced to each next time event the run names,
/// stops there with the count before the instant; `event()` counts it.
#[test]
fn a_run_that_leaves_events_at_the_end_stops_at_the_time_events_it_is_advanced_to() {
    let mut model = compile(COUNT);
    let plan = model.plan_stepped(&tight(3.0)).unwrap();
    let mut run = model.start_stepped(&plan).unwrap();
    run.set_event_policy(EventPolicy::AtEnd);
    assert_eq!(run.value("n").unwrap(), 1.0, "the sample at the start fires");
    // A segment with a sample inside (0.3 in [0, 0.5]) handles it.
    assert_eq!(run.advance_to(0.5).unwrap(), Advanced::Reached);
    assert_eq!(run.value("n").unwrap(), 2.0);
    for k in 2..=9 {
        let next = run.next_time_event().expect("the samples go on");
        assert!((next - 0.3 * k as f64).abs() < 1e-12, "next time event {next}");
        let Advanced::EventDue { time } = run.advance_to(next).unwrap() else {
            panic!("the run did not stop at the sample {next}");
        };
        assert_eq!(time, next);
        assert_eq!(run.value("n").unwrap(), k as f64, "n just before {next}");
        assert_eq!(run.event().unwrap(), Advanced::Reached);
        assert_eq!(run.value("n").unwrap(), k as f64 + 1.0, "n at {next}");
    }
}

/// An event left waiting is handled by whatever comes next: the next advance (the ball then
/// rises from the impact as if the event had been handled at once), and it is part of the
/// run's state, so a state taken before it gives the same event again.
#[test]
fn an_event_left_waiting_is_handled_by_the_next_advance_and_kept_in_the_state() {
    let mut model = compile(BALL);
    let plan = model.plan_stepped(&tight(1.0)).unwrap();
    let mut run = model.start_stepped(&plan).unwrap();
    run.set_event_policy(EventPolicy::First);
    let Advanced::EventDue { time } = run.advance_to(1.0).unwrap() else {
        panic!("no impact");
    };
    let state = run.state().unwrap();
    let g: f64 = 9.81;
    let rise = 0.7 * g * time;
    // The next advance handles the impact first: at 1.0 the ball has risen for 1 - t1.
    assert_eq!(advance_past_echoes(&mut run, 1.0, time), Advanced::Reached);
    let s = 1.0 - time;
    let h = rise * s - 0.5 * g * s * s;
    assert!((run.value("h").unwrap() - h).abs() < 1e-7);
    run.restore(&state).unwrap();
    assert_eq!(run.due_event(), Some(time));
    assert!(run.value("v").unwrap() < 0.0, "restored before the impact");
    run.event().unwrap();
    assert!((run.value("v").unwrap() - rise).abs() < 1e-7);
}
