//! FMPy, an independent FMI importer, validates and simulates exported FMUs (Co-Simulation):
//! its schema and consistency checks find nothing, its results match closed forms and EQM's
//! own run, and a model that fails reaches FMPy as an error with EQM's message in the log.
//! The tests need `python3` with `fmpy`; without them each says so and passes (the CI installs
//! FMPy, so there they always run).

use super::{exported, exported_as};
use eqm::fmi::FmiVersion;
use std::path::Path;
use std::process::Command;

/// Runs `script` with `python3`, its last line of output; `None` (with a message) when Python
/// or FMPy is missing.
pub(super) fn python(script: &str) -> Option<Result<String, String>> {
    let probe = Command::new("python3").args(["-c", "import fmpy"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("python3 with fmpy is not installed: skipped");
        return None;
    }
    let out = Command::new("python3")
        .args(["-c", script])
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    Some(match out.status.success() {
        true => Ok(stdout),
        false => Err(format!("{stdout}\n{stderr}")),
    })
}

/// FMPy's simulation of the FMU at `dir` as `kind` (`CoSimulation`, or `ModelExchange` with
/// FMPy's CVode) to `stop` with rows every `interval` at relative tolerance `rtol`, after
/// validating it: the rows `(time, values...)` of `columns`.
fn simulate(dir: &Path, kind: &str, stop: f64, interval: f64, rtol: f64, columns: &[&str]) -> Option<Vec<Vec<f64>>> {
    let script = format!(
        "import fmpy\nfrom fmpy.validation import validate_fmu\nproblems = validate_fmu({dir:?})\nassert not problems, problems\n\
r = fmpy.simulate_fmu({dir:?}, fmi_type={kind:?}, stop_time={stop}, output_interval={interval}, relative_tolerance={rtol}, output={columns:?})\n\
for row in r: print(' '.join(repr(float(v)) for v in row))\n",
        dir = dir.display().to_string(),
    );
    let text = python(&script)?.unwrap_or_else(|e| panic!("FMPy failed: {e}"));
    Some(
        text.lines()
            .map(|l| l.split(' ').map(|v| v.parse().unwrap()).collect())
            .collect(),
    )
}

/// The lines of an FMPy script that instantiate the Co-Simulation FMU of `model` as `cs` and
/// initialize it from 0 to `stop` at tolerance 1e-10, in FMI `v` ("2" or "3"; the script has
/// imported `FMU{v}Slave` and set `md`, `d` and `fmi3`).
fn started_slave(v: &str, model: &str, stop: f64) -> String {
    format!(
        "cs = FMU{v}Slave(guid=md.guid, unzipDirectory=d, modelIdentifier='{model}', instanceName='cs')
cs.instantiate()
if fmi3:
    cs.enterInitializationMode(tolerance=1e-10, startTime=0.0, stopTime={stop:?})
else:
    cs.setupExperiment(tolerance=1e-10, startTime=0.0, stopTime={stop:?})
    cs.enterInitializationMode()
cs.exitInitializationMode()
"
    )
}

pub(super) const BALL: &str = "model Ball
  parameter Real e = 0.7;
  parameter Real g = 9.81;
  Real h(start = 1, fixed = true);
  Real v(start = 0, fixed = true);
equation
  der(h) = v;
  der(v) = -g;
  when h <= 0 then
    reinit(v, -e*pre(v));
  end when;
end Ball;";

/// The bouncing ball through FMPy's Co-Simulation: every impact lies inside a communication
/// step and is located there, so the height matches the closed form at each of 200 points.
#[test]
fn fmpy_simulates_a_bouncing_ball_with_its_impacts_where_they_happen() {
    ball_against_its_closed_form("CoSimulation", 1e-7);
}

/// The bouncing ball through FMPy's Model Exchange (its CVode finds the impacts from the event
/// indicator, EQM's event iteration applies the `reinit`): the closed form at each point.
#[test]
fn fmpy_integrates_the_bouncing_ball_in_model_exchange_with_eqm_events() {
    ball_against_its_closed_form("ModelExchange", 1e-6);
}

/// The bouncing ball as an FMI 3.0 FMU, through FMPy's Co-Simulation and Model Exchange.
#[test]
fn fmpy_runs_the_bouncing_ball_as_fmi_3_in_both_interfaces() {
    ball_version("CoSimulation", 1e-7, FmiVersion::Fmi3);
    ball_version("ModelExchange", 1e-6, FmiVersion::Fmi3);
}

/// The height of the bouncing ball simulated by FMPy as `kind` against its closed form, to
/// `tolerance`.
fn ball_against_its_closed_form(kind: &str, tolerance: f64) {
    ball_version(kind, tolerance, FmiVersion::Fmi2)
}

/// [`ball_against_its_closed_form`] for an FMU of FMI `version`.
fn ball_version(kind: &str, tolerance: f64, version: FmiVersion) {
    let (dir, _) = exported_as(BALL, "Ball", version);
    let Some(rows) = simulate(&dir, kind, 2.0, 0.01, 1e-10, &["h"]) else {
        return;
    };
    let g: f64 = 9.81;
    let closed = |t: f64| {
        let t1 = (2.0 / g).sqrt();
        if t < t1 {
            return 1.0 - 0.5 * g * t * t;
        }
        let (mut start, mut speed) = (t1, 0.7 * g * t1);
        loop {
            let flight = 2.0 * speed / g;
            if t < start + flight {
                let s = t - start;
                return speed * s - 0.5 * g * s * s;
            }
            start += flight;
            speed *= 0.7;
        }
    };
    // Model Exchange adds the rows on both sides of each event to the 201 of the grid.
    assert!(rows.len() >= 201, "{} rows", rows.len());
    for row in &rows {
        assert!(
            (row[1] - closed(row[0])).abs() < tolerance,
            "h({}) = {}, closed form {}",
            row[0],
            row[1],
            closed(row[0])
        );
    }
}

/// The Van der Pol oscillator through FMPy (Co-Simulation and Model Exchange) equals EQM's own
/// tight run of the same model within the tolerance asked for.
#[test]
fn fmpy_and_eqm_run_agree_on_the_van_der_pol_oscillator() {
    van_der_pol("CoSimulation", 1e-5);
    van_der_pol("ModelExchange", 1e-4);
}

fn van_der_pol(kind: &str, tolerance: f64) {
    let text = "model VanDerPol
  parameter Real mu = 1;
  Real x0(start = 2, fixed = true);
  Real x1(start = 0, fixed = true);
equation
  der(x0) = x1;
  der(x1) = mu*((1 - x0*x0)*x1) - x0;
end VanDerPol;";
    let (dir, _) = exported(text, "VanDerPol");
    let Some(rows) = simulate(&dir, kind, 20.0, 0.1, 1e-8, &["x0", "x1"]) else {
        return;
    };
    let mut session = eqm::Session::with_sources(&[("v.eqm".into(), text.into())], &[], None);
    let mut model = session.compile(None, &eqm::ModelOptions::default()).unwrap();
    let tight = eqm::RunSettings {
        stop: Some(20.0),
        interval: Some(0.1),
        rtol: Some(1e-11),
        atol: Some(1e-11),
        ..eqm::RunSettings::default()
    };
    let reference = model.simulate(&tight).unwrap();
    let (x0, x1) = (reference.column("x0").unwrap(), reference.column("x1").unwrap());
    assert_eq!(rows.len(), x0.len());
    for (k, row) in rows.iter().enumerate() {
        assert!(
            (row[1] - x0[k]).abs() < tolerance && (row[2] - x1[k]).abs() < tolerance,
            "at {}: {row:?} against {} {}",
            row[0],
            x0[k],
            x1[k]
        );
    }
}

/// A model whose run fails (a square root of a negative number at t = 0.5) stops FMPy with an
/// error, and EQM's diagnostic reaches FMPy's logger.
#[test]
fn a_failing_step_reaches_fmpy_as_an_error_with_the_reason_logged() {
    let text = "model Fails
  Real x(start = 0.5, fixed = true);
  Real y;
equation
  der(x) = -1;
  y = sqrt(x);
end Fails;";
    let (dir, _) = exported(text, "Fails");
    let script = format!(
        "import fmpy\nmessages = []\ntry:\n    fmpy.simulate_fmu({dir:?}, fmi_type='CoSimulation', stop_time=1.0, output_interval=0.1, \
logger=lambda *a: messages.append(str(a)))\n    print('finished')\nexcept Exception as e:\n    print('failed:', e)\nprint('log:', messages)\n",
        dir = dir.display().to_string(),
    );
    let Some(out) = python(&script) else { return };
    let out = out.unwrap_or_else(|e| panic!("{e}"));
    assert!(out.contains("failed:"), "{out}");
    // The diagnostic as EQM writes it: its code, the equation and where it stands.
    assert!(
        out.contains("E0701") && out.contains("y = sqrt(x)") && out.contains("Fails.eqm:6:3"),
        "{out}"
    );
}

/// FMPy's own calls of the FMU state (`getFMUstate`, `serializeFMUstate`, `deSerializeFMUstate`,
/// `setFMUstate`, `freeFMUstate`, and FMI 3's), on the bouncing ball of FMI 2 and 3: in
/// Co-Simulation a state taken at 0.3 and set back after the run went to 1.2 gives the height
/// at 1.2 again (within the run's tolerance, and the closed form's), the deserialized bytes
/// the same height bit for bit; in Model Exchange the states set after the state was taken
/// are undone. `validate_fmu` finds nothing in the descriptions that declare the state.
#[test]
fn fmpy_gets_sets_and_serializes_the_fmu_state() {
    for version in [FmiVersion::Fmi2, FmiVersion::Fmi3] {
        let (dir, _) = exported_as(BALL, "Ball", version);
        let v = if version == FmiVersion::Fmi2 { "2" } else { "3" };
        let script = format!(
            r#"import ctypes, fmpy
from fmpy.validation import validate_fmu
from fmpy import read_model_description
from fmpy.fmi{v} import FMU{v}Slave, FMU{v}Model
d = {dir:?}
problems = validate_fmu(d)
assert not problems, problems
md = read_model_description(d)
assert md.coSimulation.canGetAndSetFMUstate and md.coSimulation.canSerializeFMUstate
vr = {{x.name: x.valueReference for x in md.modelVariables}}
fmi3 = {v} == 3
{start}get = cs.getFloat64 if fmi3 else cs.getReal
def run(t0, t1):
    t = t0
    for k in range(round((t1 - t0) / 0.1)):
        cs.doStep(t, 0.1)
        t = t0 + (k + 1) * 0.1
    return get([vr['h']])[0]
run(0.0, 0.3)
t0 = 0.30000000000000004
if fmi3:
    state = cs.getFMUState(); data = cs.serializeFMUState(state)
else:
    state = cs.getFMUstate(); data = cs.serializeFMUstate(state)
first = run(t0, 1.2)
(cs.setFMUState if fmi3 else cs.setFMUstate)(state)
second = run(t0, 1.2)
read = cs.deserializeFMUState(data) if fmi3 else cs.deSerializeFMUstate(data)
(cs.setFMUState if fmi3 else cs.setFMUstate)(read)
third = run(t0, 1.2)
(cs.freeFMUState if fmi3 else cs.freeFMUstate)(state)
(cs.freeFMUState if fmi3 else cs.freeFMUstate)(read)
cs.terminate(); cs.freeInstance()
me = FMU{v}Model(guid=md.guid, unzipDirectory=d, modelIdentifier='Ball', instanceName='me')
me.instantiate()
if fmi3:
    me.enterInitializationMode()
else:
    me.setupExperiment(startTime=0.0)
    me.enterInitializationMode()
me.exitInitializationMode()
if fmi3:
    me.updateDiscreteStates()
else:
    me.newDiscreteStates()
me.enterContinuousTimeMode()
s = me.getFMUState() if fmi3 else me.getFMUstate()
me.setTime(0.4)
x = (ctypes.c_double * 2)(0.5, -1.0)
me.setContinuousStates(x, 2)
(me.setFMUState if fmi3 else me.setFMUstate)(s)
me.getContinuousStates(x, 2)
(me.freeFMUState if fmi3 else me.freeFMUstate)(s)
me.terminate(); me.freeInstance()
print(repr(first), repr(second), repr(third), repr(x[0]), repr(x[1]))
"#,
            dir = dir.display().to_string(),
            start = started_slave(v, "Ball", 2.0),
        );
        let Some(out) = python(&script) else { return };
        let out = out.unwrap_or_else(|e| panic!("FMPy (FMI {v}) failed: {e}"));
        let values: Vec<f64> = out
            .lines()
            .last()
            .unwrap()
            .split(' ')
            .map(|s| s.parse().unwrap())
            .collect();
        // The closed form at 1.2, after the second impact at t1 + 1.4 t1: the ball left the
        // floor there with 0.49 g t1.
        let g: f64 = 9.81;
        let t1 = (2.0 / g).sqrt();
        let s = 1.2 - 2.4 * t1;
        let closed = 0.49 * g * t1 * s - 0.5 * g * s * s;
        let (first, second, third) = (values[0], values[1], values[2]);
        assert!(
            (first - closed).abs() < 1e-7,
            "FMI {v}: h(1.2) = {first}, closed form {closed}"
        );
        assert!(
            (second - first).abs() < 1e-7,
            "FMI {v}: {first} before the set, {second} after"
        );
        assert_eq!(third, second, "FMI {v}: the bytes continue as the state");
        assert_eq!(&values[3..], &[1.0, 0.0], "FMI {v}: Model Exchange's states set back");
    }
}

/// A delay whose breaking points coincide with samples (up to a rounding: `0.5 + 0.2 = 0.7`
/// and `7·0.1 = 0.7000000000000001`), through FMPy's Co-Simulation with communication points on
/// those instants: `y = delay(sin t, 0.2)` is `sin(t - 0.2)` after 0.2, and the count of samples
/// is the number of instants `i·0.1` up to the point (away from the instants themselves, where
/// the rounding of FMPy's time decides).
#[test]
fn fmpy_steps_a_delay_whose_breaking_points_are_samples() {
    let text = "model DelaySample
  Real x(start = 0, fixed = true);
  output Real y;
  discrete output Integer count(start = 0, fixed = true);
equation
  der(x) = cos(time);
  y = delay(x, 0.2);
  when sample(0, 0.1) then
    count = pre(count) + 1;
  end when;
end DelaySample;";
    let (dir, _) = exported(text, "DelaySample");
    // FMPy gives the Real columns first.
    let Some(rows) = simulate(&dir, "CoSimulation", 1.0, 0.05, 1e-10, &["y", "count"]) else {
        return;
    };
    assert_eq!(rows.len(), 21, "{rows:?}");
    for row in &rows {
        let (t, y, count) = (row[0], row[1], row[2]);
        let expected = if t < 0.2 { 0.0 } else { (t - 0.2).sin() };
        assert!((y - expected).abs() < 1e-7, "y({t}) = {y}, closed form {expected}");
        let nearest = (t / 0.1).round();
        if (t - nearest * 0.1).abs() > 1e-6 {
            assert_eq!(count, (t / 0.1).floor() + 1.0, "count({t})");
        }
    }
}

/// Model Exchange of a delay: FMPy's CVode integrates the delayed logistic equation (the
/// example) with the history EQM records at the points FMPy reports and at the time events it
/// asks for, and matches the independent reference values the example states (the method of
/// steps) within a relative 1e-4, with output intervals shorter and longer than the delay (2),
/// in both FMI versions.
#[test]
fn fmpy_integrates_the_delayed_logistic_equation_in_model_exchange() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/delayed_logistic.eqm");
    let reference = [
        (2.0, 60.4965),
        (5.0, 265.918),
        (10.0, 29.3384),
        (15.0, 69.9077),
        (20.0, 86.7571),
    ];
    for version in [FmiVersion::Fmi2, FmiVersion::Fmi3] {
        let (dir, _) = super::exported_file(&path, "DelayedLogistic", version);
        for interval in [0.1, 2.5] {
            let Some(rows) = simulate(&dir, "ModelExchange", 20.0, interval, 1e-8, &["N"]) else {
                return;
            };
            let mut compared = 0;
            for (t, expected) in reference {
                let Some(row) = rows.iter().find(|r| (r[0] - t).abs() < 1e-9) else {
                    continue;
                };
                compared += 1;
                assert!(
                    (row[1] - expected).abs() <= 1e-4 * expected,
                    "{version:?}, interval {interval}: N({t}) = {}, reference {expected}",
                    row[1]
                );
            }
            assert!(compared >= 4, "{version:?}, interval {interval}: {rows:?}");
        }
    }
}

/// A delayed jump in Model Exchange is a time event FMPy is told of: `u` steps from 0 to 1 at
/// 0.3, its delay by 0.5 at 0.8, and FMPy stops there, so `z`, which integrates the delayed
/// step, is `max(0, t - 0.8)` to rounding (a linear function between events; CVode stepping
/// across the jump would leave an error of its tolerance). The samples every 0.07 keep the
/// other time events off 0.8.
#[test]
fn fmpy_stops_at_a_delayed_jump_in_model_exchange() {
    let text = "model DelayedStep
  Real u = if time < 0.3 then 0 else 1;
  output Real y = delay(u, 0.5);
  Real z(start = 0, fixed = true);
  discrete Integer ticks(start = 0, fixed = true);
equation
  der(z) = y;
  when sample(0, 0.07) then
    ticks = pre(ticks) + 1;
  end when;
end DelayedStep;";
    for version in [FmiVersion::Fmi2, FmiVersion::Fmi3] {
        let (dir, _) = exported_as(text, "DelayedStep", version);
        let Some(rows) = simulate(&dir, "ModelExchange", 1.5, 0.05, 1e-6, &["y", "z"]) else {
            return;
        };
        // FMPy's rows at an event: the one before it, then the one after.
        let at_jump: Vec<f64> = rows.iter().filter(|r| r[0] == 0.8).map(|r| r[1]).collect();
        assert_eq!(at_jump, [0.0, 1.0], "{version:?}: {rows:?}");
        for row in &rows {
            let (t, z) = (row[0], row[2]);
            assert!((z - (t - 0.8).max(0.0)).abs() < 1e-12, "{version:?}: z({t}) = {z}");
        }
    }
}

/// Model Exchange of `spatialDistribution`: the profile moves at the points FMPy reports and
/// at the time events that keep its records close (the first soon after the start, then a
/// sixteenth of its step bound apart), so FMPy's CVode transports it. `x` grows at `1 +
/// sin(t)/2`, so `X(t) = t + (1 - cos t)/2`; the inflow `sin(3t)` enters at 0 into a profile of
/// zeros. The value at the far end is 0 until `X(t) = 1`, then the inflow that entered at the
/// `tau` with `X(t) - X(tau) = 1` (by bisection). Between records the profile is a straight
/// line: a relative 1e-3 of the inflow's amplitude (about 2e-4 is reached).
#[test]
fn fmpy_transports_a_spatial_distribution_in_model_exchange() {
    let text = "model Transported
  Real x(start = 0, fixed = true);
  output Real out0;
  output Real out1;
equation
  der(x) = 1 + 0.5*sin(time);
  (out0, out1) = spatialDistribution(sin(3*time), 0, x, true, {0.0, 1.0}, {0, 0});
end Transported;";
    let moved = |t: f64| t + 0.5 * (1.0 - t.cos());
    for version in [FmiVersion::Fmi2, FmiVersion::Fmi3] {
        let (dir, _) = exported_as(text, "Transported", version);
        let Some(rows) = simulate(&dir, "ModelExchange", 4.0, 0.1, 1e-8, &["out0", "out1"]) else {
            return;
        };
        assert!(rows.len() >= 41, "{version:?}: {rows:?}");
        for row in &rows {
            let (t, out0, out1) = (row[0], row[1], row[2]);
            let far_end = match moved(t) < 1.0 {
                true => 0.0,
                false => (3.0 * bisect(0.0, t, |tau| moved(t) - moved(tau) - 1.0)).sin(),
            };
            assert!((out0 - (3.0 * t).sin()).abs() < 1e-9, "{version:?}: out0({t}) = {out0}");
            assert!(
                (out1 - far_end).abs() < 1e-3,
                "{version:?}: out1({t}) = {out1}, exact {far_end}"
            );
        }
    }
}

/// A root of `g` in `[a, b]`, where `g` falls through zero once, by bisection to the last bit.
fn bisect(mut a: f64, mut b: f64, g: impl Fn(f64) -> f64) -> f64 {
    for _ in 0..200 {
        let m = 0.5 * (a + b);
        if m == a || m == b {
            break;
        }
        match g(m) > 0.0 {
            true => a = m,
            false => b = m,
        }
    }
    0.5 * (a + b)
}

/// Dry friction written with `sign`: the body sticks to the belt moving at `q` until the
/// spring's force exceeds the friction's bound.
const STICK_SLIP: &str = "model StickSlip
  parameter Real q = 0.4;
  output Real y(start = 0, fixed = true);
  Real v(start = 0, fixed = true);
  output Real F;
equation
  der(y) = v;
  F = sign(v - q);
  der(v) = -F - y;
end StickSlip;";

/// Values read while the run slides are the Filippov values: the stick-slip oscillator
/// (`F = sign(v - q)`) through FMPy's Co-Simulation slips until `v = q` at `t1 = asin(q)` and
/// then sticks, with `y = y1 + q (t - t1)` and the friction balancing the spring, `F = -y`.
#[test]
fn fmpy_reads_the_filippov_values_of_a_sticking_friction() {
    let (dir, _) = exported(STICK_SLIP, "StickSlip");
    // FMPy gives the columns in the model description's order.
    let Some(rows) = simulate(&dir, "CoSimulation", 2.5, 0.1, 1e-10, &["F", "y"]) else {
        return;
    };
    let q: f64 = 0.4;
    let t1 = q.asin();
    let y1 = 1.0 - t1.cos();
    for row in &rows {
        let (t, f, y) = (row[0], row[1], row[2]);
        if t < t1 - 1e-3 {
            assert!((y - (1.0 - t.cos())).abs() < 1e-7, "y({t}) = {y}");
            assert_eq!(f, -1.0, "F({t})");
        } else if t > t1 + 1e-3 {
            let closed = y1 + q * (t - t1);
            assert!((y - closed).abs() < 1e-6, "y({t}) = {y}, closed form {closed}");
            assert!((f + y).abs() < 1e-6, "F({t}) = {f}, -y = {}", -y);
        }
    }
}

/// Sliding in Model Exchange: FMPy's CVode integrates the stick-slip oscillator of the test
/// above with the Filippov field while it sticks, and the indicator of the sliding coefficient
/// stops it where the spring's force exceeds the friction's bound (`y = 1`, at
/// `tb = t1 + (1 - y1)/q`), after which the body slips back: `y = 1 + q sin(t - tb)`, `F = -1`.
#[test]
fn fmpy_integrates_a_sticking_friction_in_model_exchange_until_it_breaks_away() {
    let q: f64 = 0.4;
    let t1 = q.asin();
    let y1 = 1.0 - t1.cos();
    let tb = t1 + (1.0 - y1) / q;
    for version in [FmiVersion::Fmi2, FmiVersion::Fmi3] {
        let (dir, _) = exported_as(STICK_SLIP, "StickSlip", version);
        let Some(rows) = simulate(&dir, "ModelExchange", 4.0, 0.1, 1e-10, &["F", "y"]) else {
            return;
        };
        for row in &rows {
            let (t, f, y) = (row[0], row[1], row[2]);
            let (closed, force) = if t < t1 - 1e-3 {
                (1.0 - t.cos(), -1.0)
            } else if t > t1 + 1e-3 && t < tb - 1e-3 {
                (y1 + q * (t - t1), -(y1 + q * (t - t1)))
            } else if t > tb + 1e-3 {
                (1.0 + q * (t - tb).sin(), -1.0)
            } else {
                continue;
            };
            assert!(
                (y - closed).abs() < 1e-6,
                "{version:?}: y({t}) = {y}, closed form {closed}"
            );
            assert!(
                (f - force).abs() < 1e-6,
                "{version:?}: F({t}) = {f}, closed form {force}"
            );
        }
    }
}

/// A surface the importer's root finding puts exactly on zero is still crossed: the gearbox
/// example's backlash closes at t = 0.2, where CVode's root lies on the surface itself, and the
/// contact carries the load to its final speed (`load.w = 1.25` and the play's angle `-0.0525`
/// by t = 5, as the example derives by hand) in Model Exchange as in EQM's own run.
#[test]
fn fmpy_closes_the_backlash_of_the_gearbox_example_in_model_exchange() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/backlash_gearbox.eqm");
    let (dir, _) = super::exported_file(&path, "BacklashGearbox", FmiVersion::Fmi2);
    let Some(rows) = simulate(&dir, "ModelExchange", 5.0, 0.01, 1e-8, &["backlash.phi_rel", "load.w"]) else {
        return;
    };
    let last = rows.last().unwrap();
    assert!((last[0] - 5.0).abs() < 1e-12, "{last:?}");
    assert!((last[1] + 0.0525).abs() < 1e-4, "phi_rel(5) = {}", last[1]);
    assert!((last[2] - 1.25).abs() < 1e-4, "load.w(5) = {}", last[2]);
}

/// Samples at instants the importer reaches by another sum: FMPy's output points `0.1 + 0.2`
/// and the tick `3·0.1` differ in the last bit, and the tick fires at the importer's point
/// (before, it was skipped and announced again a rounding later, which CVode refuses). The
/// sampled controller example against its closed form: between ticks `x = u + (x_k - u)
/// e^-(t - t_k)`, at each tick `u += ki·Ts·(r - x)`.
#[test]
fn fmpy_fires_the_samples_of_the_sampled_controller_in_model_exchange() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sampled_controller.eqm");
    let (ts, ki, r) = (0.1_f64, 2.0, 1.0);
    // x and u at the ticks k·Ts, k = 0..=30.
    let mut ticks = Vec::new();
    let (mut x, mut u) = (0.0_f64, 0.0_f64);
    for _ in 0..=30 {
        u += ki * ts * (r - x);
        ticks.push(x);
        x = u + (x - u) * (-ts).exp();
    }
    for version in [FmiVersion::Fmi2, FmiVersion::Fmi3] {
        let (dir, _) = super::exported_file(&path, "SampledController", version);
        let Some(rows) = simulate(&dir, "ModelExchange", 3.0, 0.05, 1e-10, &["x"]) else {
            return;
        };
        for (k, expected) in ticks.iter().enumerate() {
            let t = k as f64 * ts;
            let row = rows.iter().find(|row| (row[0] - t).abs() < 1e-9);
            let row = row.unwrap_or_else(|| panic!("{version:?}: no row at {t}: {rows:?}"));
            assert!(
                (row[1] - expected).abs() < 1e-7,
                "{version:?}: x({t}) = {}, closed form {expected}",
                row[1]
            );
        }
    }
}

/// An enumeration input and output through FMPy's own calls, in FMI 2 (`getInteger`,
/// `setInteger`) and FMI 3 (`getInt64`, `setInt64`, which FMI 3 uses for enumerations): the
/// input starts at its start literal's value (2), a value set is the output after a step and
/// chooses the branch of the Real output that compares with the literal, and values that name
/// no literal (0 and 4) are refused with an error while the instance keeps the last good one.
/// `validate_fmu` finds nothing in either description.
#[test]
fn fmpy_gets_and_sets_an_enumeration_and_values_naming_no_literal_are_refused() {
    let text = "model Modes
  type Mode = enumeration(Off, Heat, Cool);
  input Mode m(start = Mode.Heat);
  output Mode y;
  output Real cooling;
equation
  y = m;
  cooling = if m == Mode.Cool then 1 else 0;
end Modes;";
    for version in [FmiVersion::Fmi2, FmiVersion::Fmi3] {
        let (dir, _) = exported_as(text, "Modes", version);
        let v = if version == FmiVersion::Fmi2 { "2" } else { "3" };
        let script = format!(
            r#"import fmpy
from fmpy.validation import validate_fmu
from fmpy import read_model_description
from fmpy.fmi{v} import FMU{v}Slave
d = {dir:?}
problems = validate_fmu(d)
assert not problems, problems
md = read_model_description(d)
vr = {{x.name: x.valueReference for x in md.modelVariables}}
fmi3 = {v} == 3
{start}get, set = (cs.getInt64, cs.setInt64) if fmi3 else (cs.getInteger, cs.setInteger)
real = cs.getFloat64 if fmi3 else cs.getReal
print('start', get([vr['m'], vr['y']]), real([vr['cooling']]))
set([vr['m']], [3])
cs.doStep(0.0, 0.1)
print('cool', get([vr['y']]), real([vr['cooling']]))
for bad in (0, 4):
    try:
        set([vr['m']], [bad])
        print('accepted', bad)
    except Exception:
        print('refused', bad)
cs.doStep(0.1, 0.1)
print('kept', get([vr['y']]))
"#,
            dir = dir.display().to_string(),
            start = started_slave(v, "Modes", 1.0),
        );
        let Some(out) = python(&script) else { return };
        let out = out.unwrap_or_else(|e| panic!("{e}"));
        for line in [
            "start [2, 2] [0.0]",
            "cool [3] [1.0]",
            "refused 0",
            "refused 4",
            "kept [3]",
        ] {
            assert!(out.contains(line), "{version:?}: no `{line}` in\n{out}");
        }
    }
}

/// A Stella/XMILE file exported as an FMU carries the file itself, which the runtime imports
/// again exactly as the export did (the GUID matches), and FMPy's Co-Simulation runs EQM's
/// Euler steps of DT = 0.125: `T(n) = 70 + 110*(1 - DT/10)^n` at each minute, read under the
/// stock's name in the file.
#[test]
fn an_imported_xmile_model_exports_and_runs_by_its_own_steps() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sd/teacup.xmile");
    let (dir, _) = crate::exported_file(&path, "teacup", FmiVersion::Fmi2);
    let manifest = std::fs::read_to_string(dir.join("resources/model/manifest.txt")).unwrap();
    assert!(
        manifest.contains("teacup.xmile\t"),
        "the FMU carries the XMILE file: {manifest}"
    );
    let Some(rows) = simulate(&dir, "CoSimulation", 30.0, 1.0, 1e-6, &["Teacup Temperature"]) else {
        return;
    };
    assert_eq!(rows.len(), 31);
    for row in &rows {
        let steps = (row[0] / 0.125).round() as i32;
        let expected = 70.0 + 110.0 * (1.0f64 - 0.125 / 10.0).powi(steps);
        assert!((row[1] - expected).abs() <= 1e-10 * expected, "{row:?} vs {expected}");
    }
}

/// Examples FMPy cannot run in one interface, with the reason: the standard library's
/// `Friction` relies on the relative velocity staying 0 while the flanges stick, which EQM's
/// state choice keeps exactly; FMPy's CVode integrates both bodies' velocities, which drift
/// apart by its tolerance (2e-5 by t = 2.4), so at breakaway the backward sliding it enters
/// already has a positive relative velocity, which sticks it again, and the event iteration
/// stops with `E0712` rather than continuing wrongly.
const EXAMPLES_NOT_RUN: [(&str, &str); 1] = [("two_mass_friction.eqm", "ModelExchange")];

/// Every example as FMI 2.0 and 3.0, Model Exchange and Co-Simulation: `validate_fmu` finds
/// nothing, and FMPy (CVode in Model Exchange) gives every variable the run of `eqm run` has,
/// within 2 % of its range at each time both give once (the examples' own tests check their
/// closed forms; this catches an interface that loses an event, a sample or a mode). An example
/// whose own run stops with an error stops FMPy too; a variable-structure model is refused
/// (`E0902`).
#[test]
fn every_example_runs_through_fmpy_in_both_interfaces_as_eqm_runs_it() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files: Vec<_> = std::fs::read_dir(&examples)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "eqm"))
        .collect();
    files.sort();
    assert!(files.len() > 30, "{files:?}");
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let mut session = eqm::Session::with_sources(
            &[(path.display().to_string(), std::fs::read_to_string(&path).unwrap())],
            &[],
            None,
        );
        session.set_data_reader(|path: &Path| std::fs::read(path));
        let mut model = session
            .compile(None, &eqm::ModelOptions::default())
            .unwrap_or_else(|| panic!("{file}: {}", session.render_diagnostics(false)));
        if let Err(refused) = eqm::fmi::supported(&model) {
            assert_eq!(refused.code, "E0902", "{file}");
            continue;
        }
        let reference = std::env::temp_dir().join(format!("eqm-example-{}-{file}.csv", std::process::id()));
        let own = model.simulate(&eqm::RunSettings::default());
        if let Ok(result) = &own {
            result.write_csv(std::fs::File::create(&reference).unwrap()).unwrap();
        }
        let name = model.name().to_string();
        for version in [FmiVersion::Fmi2, FmiVersion::Fmi3] {
            let (dir, _) = super::exported_file(&path, &name, version);
            let Some(outcome) = python(&compare_script(&dir, own.is_ok().then_some(reference.as_path()))) else {
                return;
            };
            let outcome = outcome.unwrap_or_else(|e| panic!("{file} {version:?}: {e}"));
            // FMPy's logger writes to the same output: the verdicts are the lines of a kind.
            let verdicts = outcome.lines().filter_map(|line| {
                line.split_once(' ')
                    .filter(|(kind, _)| ["ModelExchange", "CoSimulation"].contains(kind))
            });
            let mut kinds = 0;
            for (kind, verdict) in verdicts {
                kinds += 1;
                if EXAMPLES_NOT_RUN.contains(&(file.as_str(), kind)) {
                    continue;
                }
                match own.is_ok() {
                    true => {
                        let worst: f64 = verdict.split(' ').next().unwrap().parse().unwrap_or(f64::INFINITY);
                        assert!(worst <= 0.02, "{file} {version:?} {kind}: {verdict}");
                    }
                    false => assert!(verdict.starts_with("error"), "{file} {version:?} {kind}: {verdict}"),
                }
            }
            assert_eq!(kinds, 2, "{file} {version:?}: {outcome}");
        }
        let _ = std::fs::remove_file(&reference);
    }
}

/// A Python script that validates the FMU at `dir`, simulates it in both interfaces and prints,
/// per interface, `kind worst column time` (the largest difference from the run in the CSV file
/// `reference`, relative to the range of its column) or `kind error message`.
fn compare_script(dir: &Path, reference: Option<&Path>) -> String {
    let reference = reference.map_or("None".to_string(), |p| format!("{:?}", p.display().to_string()));
    format!(
        r#"import csv, collections, fmpy
from fmpy.validation import validate_fmu
problems = validate_fmu({dir:?})
assert not problems, problems
reference = {reference}
names = {{v.name for v in fmpy.read_model_description({dir:?}).modelVariables}}
head, data = [], []
if reference:
    rows = list(csv.reader(open(reference)))
    head, data = rows[0], [[float(v) for v in row] for row in rows[1:]]
columns = [c for c in head[1:] if c in names]
for kind in ["ModelExchange", "CoSimulation"]:
    try:
        result = fmpy.simulate_fmu({dir:?}, fmi_type=kind, output=columns, relative_tolerance=1e-6)
    except Exception as error:
        print(kind, "error", str(error).replace(chr(10), " "))
        continue
    if not reference:
        print(kind, "ran")
        continue
    once = lambda times: collections.Counter(round(t, 9) for t in times)
    ours, theirs = once(data_row[0] for data_row in data), once(result["time"])
    at = {{round(row[0], 9): row for row in data}}
    worst = (0.0, "-", 0.0)
    for c in columns:
        j = head.index(c)
        values = [row[j] for row in data]
        scale = max(max(values) - min(values), max(abs(v) for v in values), 1e-12)
        for t, v in zip(result["time"], result[c]):
            key = round(float(t), 9)
            if theirs[key] == 1 and ours.get(key, 0) == 1:
                error = abs(float(v) - at[key][j]) / scale
                if error > worst[0]:
                    worst = (error, c, float(t))
    print(kind, "%.3e %s %s" % worst)
"#,
        dir = dir.display().to_string(),
    )
}

/// The first derivatives of outputs in Co-Simulation, through FMPy's own calls in FMI 2
/// (`getRealOutputDerivatives`) and FMI 3 (`getOutputDerivatives`), at t = 0.5 against the
/// closed forms: `y = x sin t` with `x = e^-t` has `y' = x (cos t - sin t)`, and `z = u t`
/// with the input `u` held over the step has `z' = u`. A second order is refused with the
/// reason logged, and the description says `maxOutputDerivativeOrder="1"`.
#[test]
fn fmpy_reads_the_derivatives_of_outputs_at_a_communication_point() {
    let text = "model Outs
  input Real u(start = 2);
  Real x(start = 1, fixed = true);
  output Real y = x*sin(time);
  output Real z = u*time;
equation
  der(x) = -x;
end Outs;";
    for version in [FmiVersion::Fmi2, FmiVersion::Fmi3] {
        let (dir, _) = exported_as(text, "Outs", version);
        let v = if version == FmiVersion::Fmi2 { "2" } else { "3" };
        let script = format!(
            r#"import fmpy
from fmpy import read_model_description
from fmpy.fmi{v} import FMU{v}Slave
d = {dir:?}
md = read_model_description(d)
assert md.coSimulation.maxOutputDerivativeOrder == 1, md.coSimulation.maxOutputDerivativeOrder
vr = {{x.name: x.valueReference for x in md.modelVariables}}
fmi3 = {v} == 3
{start}cs.doStep(0.0, 0.5)
derivatives = cs.getOutputDerivatives if fmi3 else cs.getRealOutputDerivatives
first = derivatives([vr['y'], vr['z']], [1, 1])
try:
    derivatives([vr['y']], [2])
    refused = False
except Exception:
    refused = True
print(repr(first[0]), repr(first[1]), refused)
"#,
            dir = dir.display().to_string(),
            start = started_slave(v, "Outs", 1.0),
        );
        let Some(out) = python(&script) else { return };
        let out = out.unwrap_or_else(|e| panic!("FMPy (FMI {v}) failed: {e}"));
        let values: Vec<&str> = out.lines().last().unwrap().split(' ').collect();
        let (dy, dz): (f64, f64) = (values[0].parse().unwrap(), values[1].parse().unwrap());
        let t: f64 = 0.5;
        let closed = (-t).exp() * (t.cos() - t.sin());
        assert!(
            (dy - closed).abs() < 1e-6,
            "FMI {v}: y'(0.5) = {dy}, closed form {closed}"
        );
        assert!((dz - 2.0).abs() < 1e-6, "FMI {v}: z'(0.5) = {dz}");
        assert_eq!(values[2], "True", "FMI {v}: a second order was not refused");
    }
}
