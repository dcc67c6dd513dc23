//! FMI 3 Co-Simulation with Event Mode, driven by FMPy (an independent importer): a step stops
//! just before an event (at the first one in the step with early return, at one at the step's
//! end without), the importer has it handled in Event Mode, and the impacts of the bouncing
//! ball and the instants of a sample come out at their closed-form times with the values on
//! both sides of each event. The tests need `python3` with `fmpy`; without them each says so
//! and passes.

use super::exported_as;
use super::fmpy::{BALL, python};
use eqm::fmi::FmiVersion;

/// The output lines of `script` run on the FMU at `dir` (bound to `d` in the script, with `md`
/// its model description and `vr` its value references by name); `None` without FMPy.
fn run(dir: &std::path::Path, script: &str) -> Option<Vec<String>> {
    let script = format!(
        "from fmpy import read_model_description\nfrom fmpy.fmi3 import FMU3Slave\nfrom fmpy.fmi1 import FMICallException\n\
d = {dir:?}\nmd = read_model_description(d)\nvr = {{x.name: x.valueReference for x in md.modelVariables}}\n{script}",
        dir = dir.display().to_string(),
    );
    let out = python(&script)?.unwrap_or_else(|e| panic!("FMPy failed: {e}"));
    Some(out.lines().map(str::to_string).collect())
}

/// The numbers of a line of output.
fn numbers(line: &str) -> Vec<f64> {
    line.split(' ').map(|v| v.parse().unwrap()).collect()
}

/// The bouncing ball stepped by 0.1 to 2 with `eventModeUsed` and `earlyReturnAllowed`: each
/// impact ends its step early (`eventHandlingNeeded`, `earlyReturn`, `lastSuccessfulTime` the
/// impact), at the closed form's instants `t1 = sqrt(2/g)`, `t1 + 1.4 t1`, ... with the speed
/// `g t1 0.7^k` before Event Mode and `0.7` of it after; the relation's own event right after
/// an impact (`h <= 0` turning false) changes nothing. Between events the steps reach their
/// ends, and the height at 2 is the closed form's.
#[test]
fn a_step_returns_early_at_each_impact_for_the_importers_event_mode() {
    let (dir, _) = exported_as(BALL, "Ball", FmiVersion::Fmi3);
    let script = "cs = FMU3Slave(guid=md.guid, unzipDirectory=d, modelIdentifier='Ball', instanceName='cs')
assert md.coSimulation.hasEventMode and md.coSimulation.mightReturnEarlyFromDoStep
cs.instantiate(eventModeUsed=True, earlyReturnAllowed=True)
cs.enterInitializationMode(tolerance=1e-10, startTime=0.0, stopTime=2.0)
cs.exitInitializationMode()
print(*cs.updateDiscreteStates())
cs.enterStepMode()
t, k = 0.0, 0
while k < 20:
    end = (k + 1) * 0.1
    event, terminate, early, last = cs.doStep(t, end - t)
    if event:
        h, v = cs.getFloat64([vr['h'], vr['v']])
        cs.enterEventMode()
        update = cs.updateDiscreteStates()
        cs.enterStepMode()
        print('event', last, int(early), h, v, cs.getFloat64([vr['v']])[0], int(update[0]))
    else:
        assert not early and abs(last - end) < 1e-12, (t, end, last)
    if early:
        t = last
    else:
        t, k = end, k + 1
print('end', t, cs.getFloat64([vr['h']])[0])
cs.terminate(); cs.freeInstance()";
    let Some(lines) = run(&dir, script) else { return };
    assert_eq!(
        lines[0], "False False False False False 0.0",
        "after the initialization"
    );
    let g: f64 = 9.81;
    let t1 = (2.0 / g).sqrt();
    let (mut expected, mut speed, mut impacts, mut last) = (t1, g * t1, 0, f64::NAN);
    for line in lines.iter().filter(|l| l.starts_with("event ")) {
        let e = numbers(&line["event ".len()..]);
        let (time, early, h, before, after, more) = (e[0], e[1], e[2], e[3], e[4], e[5]);
        assert_eq!(more, 0.0, "EQM's event iteration ends in one call");
        assert_eq!(early, 1.0, "an impact inside a step returns early: {line}");
        assert!(h.abs() < 1e-8, "h = {h} at the event");
        if (time - last).abs() < 1e-9 {
            assert_eq!(after, before, "the relation's event changes no value");
            continue;
        }
        assert!(
            (time - expected).abs() < 1e-8,
            "impact at {time}, closed form {expected}"
        );
        assert!(
            (before + speed).abs() < 1e-7,
            "v = {before} before the impact, closed form {}",
            -speed
        );
        assert!((after - 0.7 * speed).abs() < 1e-7, "v = {after} after it");
        speed *= 0.7;
        expected += 2.0 * speed / g;
        last = time;
        impacts += 1;
    }
    assert_eq!(impacts, 4, "the impacts before 2: {lines:?}");
    let end = numbers(&lines.last().unwrap()["end ".len()..]);
    let s = 2.0 - (expected - 2.0 * speed / g);
    let closed = speed * s - 0.5 * g * s * s;
    assert_eq!(end[0], 2.0);
    assert!(
        (end[1] - closed).abs() < 1e-7,
        "h(2) = {}, closed form {closed}",
        end[1]
    );
}

const COUNT: &str = "model Count
  discrete output Integer n(start = 0, fixed = true);
equation
  when sample(0, 0.3) then
    n = pre(n) + 1;
  end when;
end Count;";

/// A sample every 0.3 counted, with `eventModeUsed` but no early return: Event Mode after the
/// initialization names the next time event 0.3; the step to it stops there with the count
/// before the instant and `eventHandlingNeeded`, and Event Mode counts it and names 0.6; a step
/// over two instants (0.6 and 0.9, to 1.0) handles them inside and reaches its end.
#[test]
fn without_early_return_a_step_to_the_next_time_event_leaves_it_to_event_mode() {
    let (dir, _) = exported_as(COUNT, "Count", FmiVersion::Fmi3);
    let script = "cs = FMU3Slave(guid=md.guid, unzipDirectory=d, modelIdentifier='Count', instanceName='cs')
cs.instantiate(eventModeUsed=True, earlyReturnAllowed=False)
cs.enterInitializationMode(startTime=0.0, stopTime=2.0)
cs.exitInitializationMode()
n = lambda: cs.getInt32([vr['n']])[0]
u = cs.updateDiscreteStates()
print(n(), int(u[4]), u[5])
cs.enterStepMode()
s = cs.doStep(0.0, u[5])
print(n(), *[float(v) for v in s])
cs.enterEventMode()
u = cs.updateDiscreteStates()
cs.enterStepMode()
print(n(), int(u[4]), u[5])
s = cs.doStep(0.3, 0.7)
print(n(), *[float(v) for v in s])
cs.terminate(); cs.freeInstance()";
    let Some(lines) = run(&dir, script) else { return };
    let rows: Vec<Vec<f64>> = lines.iter().map(|l| numbers(l)).collect();
    // The count, whether a next time event is defined and which.
    assert_eq!(rows[0], [1.0, 1.0, 0.3], "the sample at 0 fired in the initialization");
    // The count, eventHandlingNeeded, terminateSimulation, earlyReturn, lastSuccessfulTime.
    assert_eq!(rows[1], [1.0, 1.0, 0.0, 0.0, 0.3], "stopped before the instant 0.3");
    assert_eq!(rows[2], [2.0, 1.0, 0.6], "Event Mode counted 0.3");
    assert_eq!(rows[3], [4.0, 0.0, 0.0, 0.0, 1.0], "0.6 and 0.9 inside the step");
}

/// FMPy's own simulation loop with Event Mode and early return on the bouncing ball: FMPy
/// validates the description that declares them, records a row on each side of every event,
/// and each impact is a row at its closed-form time; every row's height is the closed form's.
#[test]
fn fmpy_simulates_with_event_mode_and_gets_rows_at_the_impacts() {
    let (dir, _) = exported_as(BALL, "Ball", FmiVersion::Fmi3);
    let script = "import fmpy
from fmpy.validation import validate_fmu
problems = validate_fmu(d)
assert not problems, problems
r = fmpy.simulate_fmu(d, fmi_type='CoSimulation', stop_time=2.0, output_interval=0.1, relative_tolerance=1e-10, output=['h'], use_event_mode=True, early_return_allowed=True)
for row in r: print(repr(float(row[0])), repr(float(row[1])))";
    let Some(lines) = run(&dir, script) else { return };
    let rows: Vec<Vec<f64>> = lines.iter().map(|l| numbers(l)).collect();
    let g: f64 = 9.81;
    let t1 = (2.0 / g).sqrt();
    let mut impacts = vec![t1];
    let mut speed = 0.7 * g * t1;
    while impacts.len() < 4 {
        impacts.push(impacts.last().unwrap() + 2.0 * speed / g);
        speed *= 0.7;
    }
    let closed = |t: f64| {
        let k = impacts.iter().filter(|&&i| i <= t).count();
        match k {
            0 => 1.0 - 0.5 * g * t * t,
            _ => {
                let v = g * t1 * 0.7f64.powi(k as i32);
                let s = t - impacts[k - 1];
                v * s - 0.5 * g * s * s
            }
        }
    };
    for row in &rows {
        assert!(
            (row[1] - closed(row[0])).abs() < 1e-7,
            "h({}) = {}, closed form {}",
            row[0],
            row[1],
            closed(row[0])
        );
    }
    for impact in &impacts {
        let at = rows.iter().filter(|r| (r[0] - impact).abs() < 1e-8).count();
        assert!(at >= 2, "rows on both sides of the impact at {impact}: {at}");
    }
    // The 21 points of the grid and the rows of the events.
    assert!(rows.len() >= 21 + 8, "{} rows", rows.len());
}

/// What the state machine forbids is refused with an error status: Event Mode for an
/// importer that said it does not use it, a step in Event Mode, and an update of the discrete
/// states in Step Mode.
#[test]
fn event_mode_out_of_turn_is_refused() {
    let (dir, _) = exported_as(BALL, "Ball", FmiVersion::Fmi3);
    let script = "def status(f):
    try:
        f()
        return 'ok'
    except FMICallException as e:
        return 'error' if e.status == 3 else str(e.status)
a = FMU3Slave(guid=md.guid, unzipDirectory=d, modelIdentifier='Ball', instanceName='a')
a.instantiate(eventModeUsed=False)
a.enterInitializationMode(startTime=0.0, stopTime=1.0)
a.exitInitializationMode()
print(status(a.enterEventMode))
a.freeInstance()
b = FMU3Slave(guid=md.guid, unzipDirectory=d, modelIdentifier='Ball', instanceName='b')
b.instantiate(eventModeUsed=True)
b.enterInitializationMode(startTime=0.0, stopTime=1.0)
b.exitInitializationMode()
print(status(lambda: b.doStep(0.0, 0.1)))
b.freeInstance()
c = FMU3Slave(guid=md.guid, unzipDirectory=d, modelIdentifier='Ball', instanceName='c')
c.instantiate(eventModeUsed=True)
c.enterInitializationMode(startTime=0.0, stopTime=1.0)
c.exitInitializationMode()
c.updateDiscreteStates()
c.enterStepMode()
print(status(c.updateDiscreteStates))
c.freeInstance()";
    let Some(lines) = run(&dir, script) else { return };
    // Each refusal reaches FMPy's logger with its reason, then the status.
    assert_eq!(
        lines,
        [
            "[ERROR] the instance was created with eventModeUsed = false, so it has no Event Mode",
            "error",
            "[ERROR] a step is taken in Step Mode: call fmi3EnterStepMode after the event",
            "error",
            "[ERROR] the discrete states are updated in Event Mode (fmi3EnterEventMode first)",
            "error"
        ]
    );
}

/// `terminate` at `x = 0.55` (`x = t`): with Event Mode the step stops before the event and
/// Event Mode reports `terminateSimulation`; without it, an importer that allows early return
/// is told the step ended early at 0.55, one that does not is told only where it ended.
#[test]
fn terminate_is_told_by_event_mode_or_as_an_early_return() {
    let text = "model Stop
  Real x(start = 0, fixed = true);
equation
  der(x) = 1;
  when x >= 0.55 then
    terminate(\"far enough\");
  end when;
end Stop;";
    let (dir, _) = exported_as(text, "Stop", FmiVersion::Fmi3);
    let script = "def run(event_mode, early):
    cs = FMU3Slave(guid=md.guid, unzipDirectory=d, modelIdentifier='Stop', instanceName='s')
    cs.instantiate(eventModeUsed=event_mode, earlyReturnAllowed=early)
    cs.enterInitializationMode(tolerance=1e-10, startTime=0.0, stopTime=1.0)
    cs.exitInitializationMode()
    if event_mode:
        cs.updateDiscreteStates()
        cs.enterStepMode()
    step = cs.doStep(0.0, 1.0)
    out = [int(step[0]), int(step[1]), int(step[2]), round(step[3], 9)]
    if step[0]:
        cs.enterEventMode()
        out.append(int(cs.updateDiscreteStates()[1]))
    print(*out)
    cs.freeInstance()
run(True, True)
run(False, True)
run(False, False)";
    let Some(lines) = run(&dir, script) else { return };
    let rows: Vec<Vec<f64>> = lines.iter().map(|l| numbers(l)).collect();
    // eventHandlingNeeded, terminateSimulation, earlyReturn, lastSuccessfulTime (and the
    // terminateSimulation of Event Mode).
    assert_eq!(rows[0], [1.0, 0.0, 1.0, 0.55, 1.0], "with Event Mode");
    assert_eq!(rows[1], [0.0, 1.0, 1.0, 0.55], "early return without Event Mode");
    assert_eq!(rows[2], [0.0, 1.0, 0.0, 0.55], "neither");
}
