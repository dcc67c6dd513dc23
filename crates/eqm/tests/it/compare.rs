//! The tube comparison (`eqm::compare`) on hand-made signals whose verdicts follow from the
//! tube's definition by hand: a shifted step, a noisy constant, a signal outside by twice the
//! tube, an event at the start that the reference holds one row of, a ramp against its exact
//! bounds, a missing signal, a result that stops early, and the
//! parsing of CSV text and signal lists.

use eqm::compare::{CompareError, SignalTable, TubeSize, Verdict, compare, parse_signal_list};

/// A table of one signal `name` sampled by `f` at `times`.
fn table(name: &str, times: &[f64], f: impl Fn(usize, f64) -> f64) -> SignalTable {
    let values = times.iter().enumerate().map(|(i, &t)| f(i, t)).collect();
    SignalTable::new(times.to_vec(), vec![name.to_string()], vec![values]).unwrap()
}

/// Times `0, h, 2h, ..., end` with `h = 1/1024` (exact in binary), with the time `event` twice.
fn grid_with_event(end: f64, event: f64) -> Vec<f64> {
    let h = 1.0 / 1024.0;
    let mut times = Vec::new();
    let mut k = 0;
    while k as f64 * h <= end {
        let t = k as f64 * h;
        times.push(t);
        if t == event {
            times.push(t);
        }
        k += 1;
    }
    times
}

/// A unit step at `at` sampled on `times`: the first of two rows at `at` is before the step.
fn step(times: &[f64], at: f64) -> Vec<f64> {
    let mut values = Vec::with_capacity(times.len());
    let mut seen_event = false;
    for &t in times {
        let after = t > at || (t == at && std::mem::replace(&mut seen_event, true));
        values.push(if after { 1.0 } else { 0.0 });
    }
    values
}

fn step_table(end: f64, at: f64) -> SignalTable {
    let times = grid_with_event(end, at);
    let values = step(&times, at);
    SignalTable::new(times, vec!["y".to_string()], vec![values]).unwrap()
}

// The step tests use the time span 4 and the tolerance 1/512, so the tube's half-width in time
// is 4/512 = 8/1024 and every time involved is exact in binary: no verdict hangs on rounding.
const TOLERANCE: f64 = 1.0 / 512.0;
const H: f64 = 1.0 / 1024.0;

#[test]
fn a_step_shifted_by_less_than_the_time_tolerance_passes() {
    let reference = step_table(4.0, 2.0);
    for shift in [6.0 * H, -6.0 * H, 8.0 * H] {
        let result = step_table(4.0, 2.0 + shift);
        let report = compare(&result, &reference, None, TOLERANCE).unwrap();
        assert_eq!(
            report.signals[0].size,
            TubeSize {
                time: 8.0 * H,
                value: TOLERANCE
            }
        );
        assert!(report.passed(), "shift {shift}: {:?}", report.signals[0].verdict);
    }
}

#[test]
fn a_step_shifted_by_more_than_the_time_tolerance_fails_where_the_window_passes_the_event() {
    let reference = step_table(4.0, 2.0);
    // Late by 12 steps: at 2 + 9h the window [2 + h, 2 + 17h] holds only the reference's 1, so
    // its lower bound is 1 - 1/512 while the result is still 0; the rows at 2 + 9h, 10h, 11h and
    // the first at 2 + 12h (before the result's step) are outside.
    let result = step_table(4.0, 2.0 + 12.0 * H);
    let report = compare(&result, &reference, None, TOLERANCE).unwrap();
    let Verdict::Leaves {
        time,
        value,
        lower,
        outside,
        checked,
        ..
    } = report.signals[0].verdict
    else {
        panic!("expected a failure, got {:?}", report.signals[0].verdict);
    };
    assert_eq!((time, value, lower), (2.0 + 9.0 * H, 0.0, 1.0 - TOLERANCE));
    assert_eq!(outside, 4);
    assert_eq!(checked, result.time().len());
    // Early by 12 steps: the result is 1 from 2 - 12h on, while the window [t - 8h, t + 8h]
    // holds only the reference's 0 until t = 2 - 8h; the first row outside is the second row
    // at 2 - 12h.
    let result = step_table(4.0, 2.0 - 12.0 * H);
    let report = compare(&result, &reference, None, TOLERANCE).unwrap();
    let Verdict::Leaves {
        time,
        value,
        upper,
        outside,
        ..
    } = report.signals[0].verdict
    else {
        panic!("expected a failure, got {:?}", report.signals[0].verdict);
    };
    assert_eq!((time, value, upper), (2.0 - 12.0 * H, 1.0, TOLERANCE));
    assert_eq!(outside, 4);
}

#[test]
fn a_step_shifted_a_little_passes_with_the_default_tolerance() {
    // With the default 0.002 over 4 s the tube is 0.008 s wide on each side: a shift of
    // 0.005 s passes and one of 0.02 s fails.
    let reference = step_table(4.0, 2.0);
    let near = step_table(4.0, 2.0 + 5.0 * H);
    assert!(
        compare(&near, &reference, None, eqm::compare::DEFAULT_TOLERANCE)
            .unwrap()
            .passed()
    );
    let far = step_table(4.0, 2.0 + 20.0 * H);
    assert!(
        !compare(&far, &reference, None, eqm::compare::DEFAULT_TOLERANCE)
            .unwrap()
            .passed()
    );
}

/// Deterministic noise in [-1, 1].
fn noise(i: usize) -> f64 {
    let x = (i as u64).wrapping_mul(2654435761).wrapping_add(12345) % 20001;
    x as f64 / 10000.0 - 1.0
}

#[test]
fn a_noisy_constant_within_its_tube_passes_and_one_spike_beyond_fails_there() {
    // A constant reference is sized by its magnitude: 5 x 0.002 = 0.01 on each side.
    let times: Vec<f64> = (0..=1000).map(|i| i as f64 / 100.0).collect();
    let reference = table("c", &times, |_, _| 5.0);
    let noisy = table("c", &times, |i, _| 5.0 + 0.009 * noise(i));
    let report = compare(&noisy, &reference, None, 0.002).unwrap();
    assert!((report.signals[0].size.value - 0.01).abs() < 1e-15);
    assert!(report.passed(), "{:?}", report.signals[0].verdict);
    let spiked = table(
        "c",
        &times,
        |i, _| if i == 700 { 5.011 } else { 5.0 + 0.009 * noise(i) },
    );
    let report = compare(&spiked, &reference, None, 0.002).unwrap();
    assert!(
        matches!(report.signals[0].verdict, Verdict::Leaves { time, outside: 1, .. } if time == 7.0),
        "{:?}",
        report.signals[0].verdict
    );
    // A reference that is zero throughout gets the nominal floor: 0.002 x 0.001.
    let zero = table("c", &times, |_, _| 0.0);
    let small = table("c", &times, |i, _| 1.9e-6 * noise(i));
    assert!(compare(&small, &zero, None, 0.002).unwrap().passed());
    let large = table("c", &times, |_, _| 2.1e-6);
    assert!(!compare(&large, &zero, None, 0.002).unwrap().passed());
}

#[test]
fn a_signal_outside_by_twice_the_tube_fails_at_the_first_point() {
    // cos starts flat, so the time tolerance does not widen the tube there: the range is 2,
    // the half-width 0.004, and the result 0.008 above is outside from t = 0 on.
    let times: Vec<f64> = (0..=1000).map(|i| i as f64 / 100.0).collect();
    let reference = table("x", &times, |_, t| t.cos());
    let result = table("x", &times, |_, t| t.cos() + 0.008);
    let report = compare(&result, &reference, None, 0.002).unwrap();
    let Verdict::Leaves { time, value, upper, .. } = report.signals[0].verdict else {
        panic!("expected a failure, got {:?}", report.signals[0].verdict);
    };
    assert_eq!((time, value), (0.0, 1.008));
    // The window [0, 0.02] holds the reference's rows at 0, 0.01 and 0.02; cos is largest at 0.
    // The range of the sampled cos is a little under 2 (its smallest sample is cos(3.14)).
    let size = report.signals[0].size;
    assert!((size.value - 0.004).abs() < 1e-8, "{size:?}");
    assert_eq!(upper, 1.0 + size.value);
    // A constant reference with a result twice the tube away fails at every row.
    let reference = table("k", &times, |_, _| 3.0);
    let result = table("k", &times, |_, _| 3.0 - 2.0 * 0.006);
    let report = compare(&result, &reference, None, 0.002).unwrap();
    assert!(
        matches!(report.signals[0].verdict, Verdict::Leaves { time, outside: 1001, checked: 1001, .. } if time == 0.0),
        "{:?}",
        report.signals[0].verdict
    );
}

#[test]
fn only_the_last_result_row_at_the_start_meets_a_reference_with_one_start_row() {
    // A sampled value that jumps from 0 to 1 at the event at the start, t = 0, and holds: the
    // reference has one row at t = 0 (after the event), the result two (before and after).
    let times: Vec<f64> = (0..=100).map(|i| i as f64 / 100.0).collect();
    let reference = table("y", &times, |_, _| 1.0);
    let mut doubled = vec![0.0];
    doubled.extend_from_slice(&times);
    let result = table("y", &doubled, |i, _| if i == 0 { 0.0 } else { 1.0 });
    let report = compare(&result, &reference, None, 0.002).unwrap();
    assert_eq!(report.signals[0].verdict, Verdict::Pass);
    // A wrong value after the start event still fails there.
    let wrong = table("y", &doubled, |i, _| if i == 1 { 0.5 } else { 1.0 });
    let report = compare(&wrong, &reference, None, 0.002).unwrap();
    assert!(
        matches!(report.signals[0].verdict, Verdict::Leaves { time, value, outside: 1, .. } if time == 0.0 && value == 0.5),
        "{:?}",
        report.signals[0].verdict
    );
    // A reference with both rows at the start judges both rows of the result: the value 0.5
    // before the event is outside the tube of the reference's 0 and 1 (its range is 1).
    let reference = table("y", &doubled, |i, _| if i == 0 { 0.0 } else { 1.0 });
    let before = table("y", &doubled, |i, _| if i == 0 { -0.5 } else { 1.0 });
    let report = compare(&before, &reference, None, 0.002).unwrap();
    assert!(
        matches!(report.signals[0].verdict, Verdict::Leaves { time, value, .. } if time == 0.0 && value == -0.5),
        "{:?}",
        report.signals[0].verdict
    );
}

#[test]
fn a_ramp_has_the_tube_of_its_rectangles() {
    // y = t on [0, 1] at the tolerance 0.01: dt = dy = 0.01, so the upper bound is
    // min(t + dt, 1) + dy (the window's right end, clipped at the reference's end).
    let times: Vec<f64> = (0..=100).map(|i| i as f64 / 100.0).collect();
    let reference = table("r", &times, |_, t| t);
    let close = table("r", &times, |_, t| t + 0.0099);
    assert!(compare(&close, &reference, None, 0.01).unwrap().passed());
    // 0.0199 above is inside the bound t + 0.02 everywhere but at the end, where it is 1.01.
    let above = table("r", &times, |_, t| t + 0.0199);
    let report = compare(&above, &reference, None, 0.01).unwrap();
    assert!(
        matches!(report.signals[0].verdict, Verdict::Leaves { time, upper, outside: 1, .. } if time == 1.0 && (upper - 1.01).abs() < 1e-15),
        "{:?}",
        report.signals[0].verdict
    );
    // 0.0201 above is outside everywhere.
    let outside = table("r", &times, |_, t| t + 0.0201);
    let report = compare(&outside, &reference, None, 0.01).unwrap();
    assert!(
        matches!(report.signals[0].verdict, Verdict::Leaves { time, outside: 101, .. } if time == 0.0),
        "{:?}",
        report.signals[0].verdict
    );
}

#[test]
fn a_missing_signal_fails_and_an_unknown_one_is_an_error() {
    let times = [0.0, 1.0];
    let reference = SignalTable::new(
        times.to_vec(),
        vec!["a".into(), "b[1, 2]".into()],
        vec![vec![0.0, 1.0], vec![2.0, 2.0]],
    )
    .unwrap();
    let result = SignalTable::new(times.to_vec(), vec!["b[1,2]".into()], vec![vec![2.0, 2.0]]).unwrap();
    let report = compare(&result, &reference, None, 0.002).unwrap();
    assert_eq!(report.signals[0].verdict, Verdict::Missing);
    // Names match apart from spaces.
    assert_eq!(report.signals[1].verdict, Verdict::Pass);
    assert_eq!(report.first_failure().unwrap().name, "a");
    assert_eq!(report.signals[0].verdict.to_string(), "missing in the result");
    let only_b = ["b[1, 2]".to_string()];
    assert!(compare(&result, &reference, Some(&only_b), 0.002).unwrap().passed());
    let unknown = ["c".to_string()];
    assert_eq!(
        compare(&result, &reference, Some(&unknown), 0.002),
        Err(CompareError::NotInReference("c".into()))
    );
    for bad in [0.0, -0.1, 1.5, f64::NAN] {
        assert!(matches!(
            compare(&result, &reference, None, bad),
            Err(CompareError::Tolerance(_))
        ));
    }
}

#[test]
fn a_result_that_stops_early_or_holds_nan_fails() {
    let times: Vec<f64> = (0..=100).map(|i| i as f64 / 10.0).collect();
    let reference = table("x", &times, |_, t| t.sin());
    let early = table("x", &times[..60], |_, t| t.sin());
    let report = compare(&early, &reference, None, 0.002).unwrap();
    assert_eq!(
        report.signals[0].verdict,
        Verdict::NotCovered { rows: Some((0.0, 5.9)) }
    );
    let empty = SignalTable::new(Vec::new(), vec!["x".into()], vec![Vec::new()]).unwrap();
    assert_eq!(
        compare(&empty, &reference, None, 0.002).unwrap().signals[0].verdict,
        Verdict::NotCovered { rows: None }
    );
    let nan = table("x", &times, |i, t| if i == 30 { f64::NAN } else { t.sin() });
    let report = compare(&nan, &reference, None, 0.002).unwrap();
    assert!(matches!(report.signals[0].verdict, Verdict::Leaves { time, outside: 1, .. } if time == 3.0));
}

#[test]
fn csv_text_is_read_with_quoted_or_plain_headers_and_errors_name_their_line() {
    let quoted = "\"time\",\"a.b\",\"x[1,2]\"\r\n0,1,2\r\n0.5,1.5,2.5\r\n0.5,1.6,2.5\r\n";
    let table = SignalTable::parse_csv(quoted).unwrap();
    assert_eq!(table.names(), ["a.b", "x[1,2]"]);
    assert_eq!(table.time(), [0.0, 0.5, 0.5]);
    assert_eq!(table.column_named("a.b").unwrap(), [1.0, 1.5, 1.6]);
    let plain = SignalTable::parse_csv("time,a.b,\"x[1,2]\"\n0,1,2\n\n0.5,1.5,2.5\n0.5,1.6,2.5\n").unwrap();
    assert_eq!(plain, table);
    let error = |text: &str| SignalTable::parse_csv(text).unwrap_err();
    assert_eq!(error("time,a\n0,1\n1,x\n").line, 3);
    assert!(error("time,a\n0,1\n1,x\n").message.contains("`x` is not a number"));
    assert_eq!(error("time,a\n0,1\n1\n").line, 3);
    assert_eq!(error("time,a\n1,1\n0,1\n").line, 3);
    assert!(error("a,time\n0,1\n").message.contains("first column is `a`"));
    assert!(error("time,a,a\n0,1,1\n").message.contains("appears twice"));
    assert!(error("").message.contains("empty"));
}

#[test]
fn signal_lists_start_with_time() {
    let list = parse_signal_list("time\nPI.I.y\n\n  inertia1.w  \nPI.I.y\n").unwrap();
    assert_eq!(list, ["PI.I.y", "inertia1.w"]);
    assert_eq!(parse_signal_list("x\ny\n").unwrap_err().line, 1);
    assert!(parse_signal_list("\n").is_err());
}
