//! Boolean and Integer variables declared `discrete` and defined by ordinary equations inside
//! systems that mix them with continuous variables: a watchdog whose alarm
//! feeds back into the continuous dynamics, a queue whose length is the difference of two
//! event counters, a landing craft whose thrust switches on a Boolean of its height. Each
//! against event times and values derived by hand in closed form, on both back ends; and a
//! system whose discrete and continuous values have no common fixed point, which stops with
//! the relation that does not settle.

use eqm::RunSettings;

/// The run of `text` to `stop` on both back ends (which agree bit for bit), with tight
/// tolerances so that event times are located to 1e-9.
fn run(text: &str, stop: f64) -> eqm::SimulationResult {
    let settings = RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..RunSettings::default()
    };
    crate::run_both_back_ends(text, settings)
}

/// The times at which column `name` changes value, in order (each an event: two rows at the
/// same time, before and after).
fn changes(result: &eqm::SimulationResult, name: &str) -> Vec<f64> {
    let values = result.column(name).unwrap_or_else(|| panic!("no column {name}"));
    let time = result.time();
    (1..values.len())
        .filter(|&i| values[i] != values[i - 1])
        .map(|i| time[i])
        .collect()
}

fn assert_times(found: &[f64], expected: &[f64], what: &str) {
    assert_eq!(found.len(), expected.len(), "{what}: {found:?}, expected {expected:?}");
    for (f, e) in found.iter().zip(expected) {
        assert!((f - e).abs() < 1e-8, "{what}: {found:?}, expected {expected:?}");
    }
}

#[test]
fn a_latched_discrete_alarm_reverses_the_continuous_dynamics_where_the_limit_is_crossed() {
    // x = t until x crosses the limit 1 at t = 1; the latched alarm then makes x' = -2, so
    // x(t) = 1 - 2 (t - 1), and x(3) = -3. A fixed start value of the alarm is the value of
    // pre(alarm) at the start, not a second equation on the alarm.
    for fixed in ["", ", fixed = true"] {
        let result = run(
            &format!(
                "model Watchdog
  parameter Real limit = 1;
  Real x(start = 0, fixed = true);
  discrete Boolean alarm(start = false{fixed});
equation
  alarm = x > limit or pre(alarm);
  der(x) = if alarm then -2 else 1;
end Watchdog;
"
            ),
            3.0,
        );
        assert_times(&changes(&result, "alarm"), &[1.0], "alarm");
        let x = result.final_value("x").unwrap();
        assert!((x + 3.0).abs() < 1e-8, "x(3) = {x}");
        assert_eq!(result.value_at("alarm", 0.5), Some(0.0));
        assert_eq!(result.final_value("alarm"), Some(1.0));
    }
}

#[test]
fn a_fixed_start_value_of_a_latch_is_its_value_before_the_start() {
    // With pre(alarm) = true at the start, the latch holds from the start: x = -2 t.
    let result = run(
        "model Latched
  Real x(start = 0, fixed = true);
  Boolean alarm(start = true, fixed = true);
equation
  alarm = x > 1 or pre(alarm);
  der(x) = if alarm then -2 else 1;
end Latched;
",
        1.0,
    );
    assert!(result.column("alarm").unwrap().iter().all(|&a| a == 1.0));
    let x = result.final_value("x").unwrap();
    assert!((x + 2.0).abs() < 1e-9, "x(1) = {x}");
}

#[test]
fn a_queue_length_defined_by_two_event_counters_drives_the_server() {
    // Arrivals at 0.25 + 0.5 k; the server is busy from the first arrival on (the queue never
    // empties, since service takes 0.8 and arrivals come every 0.5), so its work is t - 0.25
    // and the k-th service ends at 0.25 + 0.8 k: 1.05, 1.85, 2.65, 3.45. At t = 3, 6 arrived
    // and 3 were served.
    let result = run(
        "model Queue
  discrete Integer arrived(start = 0, fixed = true);
  discrete Integer served(start = 0, fixed = true);
  discrete Integer n;
  discrete Boolean busy;
  Real work(start = 0, fixed = true);
equation
  n = arrived - served;
  busy = n > 0;
  der(work) = if busy then 1 else 0;
  when sample(0.25, 0.5) then
    arrived = pre(arrived) + 1;
  end when;
  when work > 0.8*(pre(served) + 1) then
    served = pre(served) + 1;
  end when;
end Queue;
",
        3.6,
    );
    assert_times(&changes(&result, "served"), &[1.05, 1.85, 2.65, 3.45], "served");
    assert_times(&changes(&result, "busy"), &[0.25], "busy");
    assert_eq!(result.value_at("n", 3.0), Some(3.0));
    assert_eq!(result.value_at("arrived", 3.0), Some(6.0));
    let work = result.value_at("work", 3.0).unwrap();
    assert!((work - 2.75).abs() < 1e-8, "work(3) = {work}");
}

#[test]
fn a_thrust_switched_by_a_discrete_boolean_of_the_height_brakes_and_releases_the_craft() {
    // Free fall h = 10 - 5 t^2 reaches h = 5 at t = 1 with v = -10; the thrust 25 gives
    // h'' = 15, so h = 5 - 10 s + 7.5 s^2 (s = t - 1) is back at 5 at s = 4/3 with v = 10;
    // free again, h = 5 + 10 r - 5 r^2 (r = t - 7/3) returns to 5 at r = 2. At t = 3,
    // r = 2/3: h = 5 + 20/3 - 20/9 = 85/9.
    let result = run(
        "model Moon
  Real h(start = 10, fixed = true);
  Real v(start = 0, fixed = true);
  Real thrust;
  discrete Boolean braking;
  discrete Integer switches(start = 0, fixed = true);
equation
  braking = h < 5;
  thrust = if braking then 25 else 0;
  der(h) = v;
  der(v) = -10 + thrust;
  when change(braking) then
    switches = pre(switches) + 1;
  end when;
end Moon;
",
        5.0,
    );
    assert_times(&changes(&result, "braking"), &[1.0, 7.0 / 3.0, 13.0 / 3.0], "braking");
    assert_eq!(result.final_value("switches"), Some(3.0));
    let h = result.value_at("h", 3.0).unwrap();
    assert!((h - 85.0 / 9.0).abs() < 1e-7, "h(3) = {h}");
}

#[test]
fn discrete_boolean_connectors_defined_by_equations_carry_events_between_components() {
    // The watchdog is switched off at 0.25 and on at 1; its deadline comes at 1.5, when it is
    // active, so the alarm rises at 1.5 and not before.
    let text = "connector EventPort
  discrete Boolean signal;
end EventPort;
model EventGenerator
  parameter Real eventTime = 1;
  EventPort dOutput;
equation
  dOutput.signal = time > eventTime;
end EventGenerator;
model WatchDog
  EventPort dOn;
  EventPort dOff;
  EventPort dDeadline;
  EventPort dAlarm;
  discrete Boolean watchdogActive(start = false, fixed = true);
equation
  when dOn.signal then
    watchdogActive = true;
  elsewhen dOff.signal then
    watchdogActive = false;
  end when;
  dAlarm.signal = dDeadline.signal and pre(watchdogActive);
end WatchDog;
model WatchDogSystem
  EventGenerator turnOn(eventTime = 1);
  EventGenerator turnOff(eventTime = 0.25);
  EventGenerator deadlineEmitter(eventTime = 1.5);
  WatchDog watchdog;
equation
  connect(turnOn.dOutput, watchdog.dOn);
  connect(turnOff.dOutput, watchdog.dOff);
  connect(deadlineEmitter.dOutput, watchdog.dDeadline);
end WatchDogSystem;
";
    let runs: Vec<eqm::SimulationResult> = [false, true]
        .into_iter()
        .map(|interpreter| {
            let sources = [("m.eqm".to_string(), text.to_string())];
            let mut session = eqm::Session::with_sources(&sources, &[], None);
            let mut model = session
                .compile(Some("WatchDogSystem"), &eqm::ModelOptions::default())
                .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
            let settings = RunSettings {
                stop: Some(2.0),
                interpreter,
                ..RunSettings::default()
            };
            model.simulate(&settings).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    let result = &runs[0];
    assert_eq!(result.time(), runs[1].time());
    for column in result.columns() {
        assert_eq!(
            result.column(&column.name),
            runs[1].column(&column.name),
            "{}",
            column.name
        );
    }
    assert_times(&changes(result, "watchdog.watchdogActive"), &[1.0], "active");
    assert_times(&changes(result, "watchdog.dAlarm.signal"), &[1.5], "alarm");
}

#[test]
fn a_discrete_boolean_without_a_consistent_value_stops_the_run_naming_its_relation() {
    // At t = 0.5, x = 2t reaches 1: b becomes true, which makes x = 0.5 and b false again:
    // no value of b agrees with the x it gives.
    let text = "model NoFixedPoint
  Real x;
  discrete Boolean b;
equation
  b = x > 1;
  x = if b then 0.5 else 2*time;
end NoFixedPoint;
";
    let mut model = crate::compile(text);
    let settings = RunSettings {
        stop: Some(1.0),
        ..RunSettings::default()
    };
    let eqm::RunError::Failed { time, diagnostic, .. } = model.simulate(&settings).expect_err("no fixed point") else {
        panic!("not a run failure")
    };
    assert!((time - 0.5).abs() < 1e-6, "failed at {time}");
    let diagnostic = diagnostic.expect("a diagnostic");
    assert_eq!(diagnostic.code, "E0712");
    assert!(diagnostic.message.contains("`x - 1 > 0`"), "{}", diagnostic.message);
}

#[test]
fn a_queue_that_empties_starts_each_service_at_the_event_that_makes_the_server_busy() {
    // Arrivals at 0.5 + k; each service takes 0.6, so the server empties at 1.1, 2.1, 3.1 and
    // is busy again at each arrival. The first when-clause reads `busy`, which the same event's
    // arrival sets through `n`: it must see the new value, so each service starts at its
    // arrival (0.5, 1.5, 2.5) and ends 0.6 later.
    let result = run(
        "model IdleQueue
  discrete Integer arrived(start = 0, fixed = true);
  discrete Integer served(start = 0, fixed = true);
  discrete Integer n;
  discrete Boolean busy;
  discrete Real started(start = 0, fixed = true);
equation
  n = arrived - served;
  busy = n > 0;
  when sample(0.5, 1.0) then
    arrived = pre(arrived) + 1;
  end when;
  when busy and not pre(busy) then
    started = time;
  end when;
  when time >= started + 0.6 and pre(busy) then
    served = pre(served) + 1;
  end when;
end IdleQueue;
",
        3.4,
    );
    assert_times(&changes(&result, "started"), &[0.5, 1.5, 2.5], "started");
    assert_times(&changes(&result, "served"), &[1.1, 2.1, 3.1], "served");
    assert_times(&changes(&result, "busy"), &[0.5, 1.1, 1.5, 2.1, 2.5, 3.1], "busy");
    assert_eq!(result.value_at("n", 3.3), Some(0.0));
    assert_eq!(result.value_at("arrived", 3.3), Some(3.0));
}
