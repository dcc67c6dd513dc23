//! Runs advanced step by step by their caller (`Model::plan_stepped`, `Model::start_stepped`),
//! as a co-simulation master advances an FMU: each checked against the closed-form solution at
//! every communication point, with inputs changed between steps, events inside and on the
//! communication points, samples, `terminate`, and the models that cannot be stepped.

use super::compile;
use eqm::{Advanced, RunSettings};

/// The stepped run of `model` with `settings`; panics with the reason when it cannot start.
fn start<'m>(model: &'m mut eqm::Model, settings: &RunSettings) -> eqm::SteppedRun<'m> {
    let plan = model.plan_stepped(settings).unwrap_or_else(|e| panic!("{e}"));
    model.start_stepped(&plan).unwrap_or_else(|e| panic!("{e}"))
}

/// Settings of a tight stepped run to `stop`.
/// A ball bouncing with restitution `e` from a height of 1.
pub(crate) const BALL: &str = "model Ball
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

/// A count of the samples every 0.3 from 0.
pub(crate) const COUNT: &str = "model Count
  discrete Integer n(start = 0, fixed = true);
equation
  when sample(0, 0.3) then
    n = pre(n) + 1;
  end when;
end Count;";

pub(crate) fn tight(stop: f64) -> RunSettings {
    RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        ..RunSettings::default()
    }
}

/// `x' = -k x` stepped in 25 communication steps is `exp(-k t)` at every one of them, and a
/// parameter set before the start is the run's.
#[test]
fn a_decay_stepped_matches_its_closed_form_at_every_communication_point() {
    let mut model = compile(
        "model Decay
  parameter Real k = 2;
  Real x(start = 1, fixed = true);
equation
  der(x) = -k*x;
end Decay;",
    );
    model.set_parameter("k", 3.0).unwrap();
    let mut run = start(&mut model, &tight(1.0));
    assert_eq!(run.value("x").unwrap(), 1.0);
    for i in 1..=25 {
        let t = i as f64 * 0.04;
        assert_eq!(run.advance_to(t).unwrap(), Advanced::Reached);
        assert!((run.time() - t).abs() < 1e-12, "at {} instead of {t}", run.time());
        let x = run.value("x").unwrap();
        assert!((x - (-3.0 * t).exp()).abs() < 1e-8, "x({t}) = {x}");
        let dx = run.value("der(x)").unwrap();
        assert!((dx + 3.0 * x).abs() < 1e-12, "der(x)({t}) = {dx}");
    }
}

/// An input held between communication points: `x' = u`, `y = if u > 0 then 1 else -1`, with
/// `u = 1` for `t < 1` and `u = -2` after: `x(2) = 1 - 2 = -1`, and the relation on the input
/// follows it at the communication point.
#[test]
fn an_input_set_between_steps_drives_the_model_from_that_point() {
    let mut model = compile(
        "model Driven
  input Real u(start = 1);
  output Real y;
  Real x(start = 0, fixed = true);
equation
  der(x) = u;
  y = if u > 0 then 1 else -1;
end Driven;",
    );
    let mut run = start(&mut model, &tight(2.0));
    assert_eq!(run.value("y").unwrap(), 1.0);
    for i in 1..=10 {
        run.advance_to(i as f64 * 0.1).unwrap();
    }
    assert!((run.value("x").unwrap() - 1.0).abs() < 1e-9);
    run.set_parameter("u", -2.0).unwrap();
    assert_eq!(run.value("y").unwrap(), -1.0);
    assert_eq!(run.value("der(x)").unwrap(), -2.0);
    run.advance_to(2.0).unwrap();
    assert!(
        (run.value("x").unwrap() + 1.0).abs() < 1e-9,
        "x(2) = {}",
        run.value("x").unwrap()
    );
}

/// A bouncing ball stepped with communication steps of 0.01: every impact inside a step is
/// located (not moved to the communication point), so the height matches the closed form
/// `h(t)` of the free fall from 1 m and the bounces with restitution 0.7 at every point.
#[test]
fn events_inside_communication_steps_are_located_where_they_happen() {
    let mut model = compile(BALL);
    let g: f64 = 9.81;
    // The closed form: the first impact at t1 = sqrt(2/g) with speed g·t1; each bounce after
    // leaves with e times the speed it arrived with and lasts 2·v/g.
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
    let mut run = start(&mut model, &tight(2.0));
    for i in 1..=200 {
        let t = i as f64 * 0.01;
        run.advance_to(t).unwrap();
        let h = run.value("h").unwrap();
        assert!((h - closed(t)).abs() < 1e-6, "h({t}) = {h}, closed form {}", closed(t));
    }
}

/// A sample every 0.3 counted in a when-clause, stepped with communication steps of 0.25: at
/// each point the count is the number of sample instants up to it (0, 0.3, 0.6, ...).
#[test]
fn samples_fire_at_their_instants_between_and_on_communication_points() {
    let mut model = compile(COUNT);
    let mut run = start(&mut model, &tight(3.0));
    assert_eq!(run.value("n").unwrap(), 1.0, "the sample at the start fires");
    for i in 1..=12 {
        let t = i as f64 * 0.25;
        run.advance_to(t).unwrap();
        let expected = (t / 0.3 + 1e-9).floor() + 1.0;
        assert_eq!(run.value("n").unwrap(), expected, "n({t})");
    }
}

/// `terminate` inside a communication step ends the run there with its message, and the run
/// stays at that time afterwards.
#[test]
fn terminate_inside_a_step_ends_the_run_where_it_was_called() {
    let mut model = compile(
        "model Stop
  Real x(start = 0, fixed = true);
equation
  der(x) = 1;
  when x >= 0.55 then
    terminate(\"far enough\");
  end when;
end Stop;",
    );
    let mut run = start(&mut model, &tight(2.0));
    run.advance_to(0.5).unwrap();
    let Advanced::Terminated { time, message } = run.advance_to(1.0).unwrap() else {
        panic!("the run did not terminate");
    };
    assert!((time - 0.55).abs() < 1e-9, "terminated at {time}");
    assert_eq!(message, "far enough");
    assert!(matches!(run.advance_to(1.5).unwrap(), Advanced::Terminated { .. }));
    assert!((run.value("x").unwrap() - 0.55).abs() < 1e-9);
}

/// Going back in time, or to a time that is not a number, is refused; a name the model does not
/// have is `E0708`; a variable-structure model is `E0720` before it starts.
#[test]
fn what_a_stepped_run_cannot_do_is_refused_with_the_reason() {
    let mut model = compile(
        "model Decay
  Real x(start = 1, fixed = true);
equation
  der(x) = -x;
end Decay;",
    );
    let mut run = start(&mut model, &tight(1.0));
    run.advance_to(0.5).unwrap();
    assert!(run.advance_to(0.25).is_err());
    assert!(run.advance_to(f64::NAN).is_err());
    match run.value("y") {
        Err(eqm::RunError::Model(d)) => assert_eq!(d.code, "E0708"),
        other => panic!("{other:?}"),
    }
    let mut clutch = compile(super::structure::CLUTCH);
    assert!(clutch.variable_structure().is_some());
    match clutch.plan_stepped(&tight(1.0)) {
        Err(eqm::RunError::Model(d)) => assert_eq!(d.code, "E0720"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a variable-structure model was planned for stepping"),
    }
}

/// One classical Runge–Kutta step of the model exchanged from `(t, x)` by `h`: the states at
/// `t + h` (the model is left at `t + h`).
fn rk4(m: &mut eqm::ModelExchange<'_>, t: f64, x: &[f64], h: f64) -> Vec<f64> {
    let n = x.len();
    let eval = |m: &mut eqm::ModelExchange<'_>, t: f64, y: &[f64]| {
        m.set_time(t);
        m.set_states(y).unwrap();
        let mut d = vec![0.0; n];
        m.derivatives(&mut d).unwrap();
        d
    };
    let k1 = eval(m, t, x);
    let y: Vec<f64> = (0..n).map(|i| x[i] + 0.5 * h * k1[i]).collect();
    let k2 = eval(m, t + 0.5 * h, &y);
    let y: Vec<f64> = (0..n).map(|i| x[i] + 0.5 * h * k2[i]).collect();
    let k3 = eval(m, t + 0.5 * h, &y);
    let y: Vec<f64> = (0..n).map(|i| x[i] + h * k3[i]).collect();
    let k4 = eval(m, t + h, &y);
    let end: Vec<f64> = (0..n)
        .map(|i| x[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]))
        .collect();
    m.set_time(t + h);
    m.set_states(&end).unwrap();
    end
}

/// The event indicators of the model exchanged at its current point.
fn indicators(m: &mut eqm::ModelExchange<'_>) -> Vec<f64> {
    let mut z = vec![0.0; m.dimensions().1];
    m.event_indicators(&mut z).unwrap();
    z
}

/// A bouncing ball integrated by the caller (Runge–Kutta with the crossing located by
/// bisection on the event indicator, as an importer of a Model Exchange FMU does): the
/// derivatives between events and the `reinit` at each impact give the closed form's height.
#[test]
fn a_model_integrated_by_its_caller_gets_eqm_events_where_the_caller_finds_them() {
    let mut model = compile(
        "model Ball
  Real h(start = 1, fixed = true);
  Real v(start = 0, fixed = true);
equation
  der(h) = v;
  der(v) = -9.81;
  when h <= 0 then
    reinit(v, -0.7*pre(v));
  end when;
end Ball;",
    );
    let plan = model.plan_stepped(&tight(1.5)).unwrap();
    let mut m = model.start_exchange(&plan).unwrap();
    assert_eq!(m.dimensions(), (2, 1));
    let (mut t, h) = (0.0, 1e-3);
    let mut x = m.states().to_vec();
    let mut impacts = Vec::new();
    while t < 1.5 - 1e-12 {
        let before = indicators(&mut m);
        let next = rk4(&mut m, t, &x, h);
        let after = indicators(&mut m);
        if before[0].signum() != after[0].signum() {
            // Bisection on the step for the crossing, then the event at its right side.
            let (mut lo, mut hi) = (0.0, h);
            while hi - lo > 1e-13 {
                let mid = 0.5 * (lo + hi);
                rk4(&mut m, t, &x, mid);
                if indicators(&mut m)[0].signum() == before[0].signum() {
                    lo = mid
                } else {
                    hi = mid
                }
            }
            let at = rk4(&mut m, t, &x, hi);
            let outcome = m.event().unwrap();
            assert!(outcome.terminated.is_none());
            // The ball reaching the floor is an impact; its leaving the floor (the relation
            // turning false again right after) is an event that changes no state.
            if at[1] < 0.0 {
                assert!(outcome.states_changed, "the impact at {} changed no state", t + hi);
                impacts.push(t + hi);
                assert!(
                    (m.states()[1] + 0.7 * at[1]).abs() < 1e-12,
                    "v after the impact is -0.7 times v before"
                );
            } else {
                assert!(!outcome.states_changed);
            }
            t += hi;
            x = m.states().to_vec();
            continue;
        }
        m.completed_step().unwrap();
        t += h;
        x = next;
    }
    let t1 = (2.0f64 / 9.81).sqrt();
    assert_eq!(impacts.len(), 2, "{impacts:?}");
    assert!((impacts[0] - t1).abs() < 1e-9, "first impact at {}", impacts[0]);
    assert!(
        (impacts[1] - (t1 + 2.0 * 0.7 * t1)).abs() < 1e-8,
        "second impact at {}",
        impacts[1]
    );
    assert!((m.value("v").unwrap() - x[1]).abs() < 1e-15);
}

/// The next time event of a sampled model is the next sample instant, and the event there
/// counts it.
#[test]
fn a_model_integrated_by_its_caller_gives_its_next_time_event() {
    let mut model = compile(COUNT);
    let plan = model.plan_stepped(&tight(1.0)).unwrap();
    let mut m = model.start_exchange(&plan).unwrap();
    assert_eq!(m.value("n").unwrap(), 1.0);
    m.set_time(0.3);
    let outcome = m.event().unwrap();
    assert_eq!(m.value("n").unwrap(), 2.0);
    assert!((outcome.next_time_event.unwrap() - 0.6).abs() < 1e-12, "{outcome:?}");
}

/// A directional derivative of a run: `(unknowns, knowns, seed, out)`.
type Derivative<'a> = dyn FnMut(&[eqm::pipeline::ir::slot::Slot], &[eqm::Known], &[f64], &mut [f64]) + 'a;

/// Directional derivatives at a point, against the partial derivatives by hand: those of the
/// state derivatives with respect to the states (from the symbolic Jacobian), and of an output
/// with respect to the states and an input (central differences), in a stepped run and in a
/// model integrated by its caller alike.
#[test]
fn directional_derivatives_match_the_partial_derivatives_by_hand() {
    let text = "model Partials
  parameter Real a = 0.5;
  input Real u(start = 3);
  output Real y;
  Real x1(start = 1, fixed = true);
  Real x2(start = 2, fixed = true);
equation
  der(x1) = -a*x1 + x2;
  der(x2) = u*x1;
  y = x1*x2 + u^2;
end Partials;";
    use eqm::Known;
    use eqm::pipeline::ir::slot::Slot;
    let check = |derivative: &mut Derivative<'_>| {
        // d(der(x))/dx · (1, -2) = (-a·1 + 1·(-2), u·1) = (-2.5, 3).
        let mut out = [0.0; 2];
        derivative(
            &[Slot::Der(0), Slot::Der(1)],
            &[Known::State(0), Known::State(1)],
            &[1.0, -2.0],
            &mut out,
        );
        assert_eq!(out, [-2.5, 3.0]);
    };
    let mut model = compile(text);
    let y_slot = {
        let plan = model.plan_stepped(&tight(1.0)).unwrap();
        let run = model.start_stepped(&plan).unwrap();
        run.slot("y").unwrap()
    };
    let knowns = [Known::State(0), Known::State(1), Known::Parameter("u".into())];
    let plan = model.plan_stepped(&tight(1.0)).unwrap();
    let mut run = model.start_stepped(&plan).unwrap();
    check(&mut |u, k, s, o| run.directional_derivative(u, k, s, o).unwrap());
    // dy along (dx1, dx2, du) = (1, 0, 0): x2 = 2; (0, 0, 1): 2u = 6; (0, 1, 1): x1 + 2u = 7.
    for (seed, expected) in [([1.0, 0.0, 0.0], 2.0), ([0.0, 0.0, 1.0], 6.0), ([0.0, 1.0, 1.0], 7.0)] {
        let mut out = [0.0];
        run.directional_derivative(&[y_slot], &knowns, &seed, &mut out).unwrap();
        assert!((out[0] - expected).abs() < 1e-8, "dy along {seed:?} = {}", out[0]);
    }
    // Taking a derivative changes nothing: the input is back at its value.
    assert_eq!(run.value("u").unwrap(), 3.0);
    assert_eq!(run.value("y").unwrap(), 11.0);
    drop(run);
    let mut exchanged = model.start_exchange(&plan).unwrap();
    check(&mut |u, k, s, o| exchanged.directional_derivative(u, k, s, o).unwrap());
    let mut out = [0.0];
    exchanged
        .directional_derivative(&[y_slot], &knowns, &[0.0, 1.0, 1.0], &mut out)
        .unwrap();
    assert!((out[0] - 7.0).abs() < 1e-8, "{}", out[0]);
    let wrong = exchanged.directional_derivative(&[y_slot], &knowns, &[1.0], &mut out);
    assert!(wrong.is_err(), "a seed per known");
}

/// A delay and a sample whose instants coincide (the delay's breaking points are 0.2, 0.4, ...
/// and the samples every 0.1), stepped to communication points between and on them: `x = sin t`,
/// `y = delay(x, 0.2)` is `sin(t - 0.2)` after 0.2 (and `x(0) = 0` before), and the count is
/// the number of sample instants up to the point.
#[test]
fn a_delay_and_a_sample_at_the_same_instants_step_through_them() {
    let mut model = compile(
        "model DelaySample
  Real x(start = 0, fixed = true);
  Real y;
  discrete Integer count(start = 0, fixed = true);
equation
  der(x) = cos(time);
  y = delay(x, 0.2);
  when sample(0, 0.1) then
    count = pre(count) + 1;
  end when;
end DelaySample;",
    );
    // The communication points of the second run fall on the instants themselves: a
    // breaking point (0.4), a sample one rounding after a breaking point (0.5 + 0.2 = 0.7 and
    // 7·0.1 = 0.7000000000000001), which the run reaches as one instant.
    for points in [&[0.25, 0.35, 0.55, 1.0][..], &[0.25, 0.4, 0.55, 0.7, 0.8, 1.0]] {
        let mut run = start(&mut model, &tight(1.0));
        for &to in points {
            assert_eq!(run.advance_to(to).unwrap(), Advanced::Reached, "to {to}");
            let t = run.time();
            assert!((t - to).abs() < 1e-12, "at {t} instead of {to}");
            let (x, y) = (run.value("x").unwrap(), run.value("y").unwrap());
            assert!((x - t.sin()).abs() < 1e-8, "x({t}) = {x}");
            assert!((y - (t - 0.2).sin()).abs() < 1e-8, "y({t}) = {y}");
            // The sample instants are `i·0.1`, with the rounding of that product.
            let expected = (0..=10).filter(|&i| f64::from(i) * 0.1 <= t).count() as f64;
            assert_eq!(run.value("count").unwrap(), expected, "count({t})");
        }
    }
    // A whole run takes the same instants.
    let result = model.simulate(&tight(1.0)).unwrap_or_else(|e| panic!("{e}"));
    let y = result.column("y").unwrap();
    for (t, y) in result.time().iter().zip(y) {
        let expected = if *t < 0.2 { 0.0 } else { (t - 0.2).sin() };
        assert!((y - expected).abs() < 1e-8, "y({t}) = {y}");
    }
}

/// The values read while the run slides are the Filippov values, as in a whole run's rows: the
/// naive stick-slip model (`F = sign(v - q)`) slips until `v = q` at `t1 = asin(q)` and then
/// sticks with `v = q`, `y = y1 + q (t - t1)` and the friction balancing the spring, `F = -y`,
/// with `der(v) = 0`, until `y = 1`.
#[test]
fn values_read_while_sliding_are_the_filippov_values() {
    let mut model = compile(
        "model StickSlip
  parameter Real q = 0.4;
  Real y(start = 0, fixed = true);
  Real v(start = 0, fixed = true);
  Real F;
equation
  der(y) = v;
  F = sign(v - q);
  der(v) = -F - y;
end StickSlip;",
    );
    let q: f64 = 0.4;
    let t1 = q.asin();
    let y1 = 1.0 - t1.cos();
    let mut run = start(&mut model, &tight(2.5));
    for t in [0.3, 1.0, 1.5, 2.0, 2.5] {
        run.advance_to(t).unwrap();
        let (y, v, f, dv) = (
            run.value("y").unwrap(),
            run.value("v").unwrap(),
            run.value("F").unwrap(),
            run.value("der(v)").unwrap(),
        );
        if t < t1 {
            assert!((y - (1.0 - t.cos())).abs() < 1e-8, "y({t}) = {y}");
            assert_eq!(f, -1.0, "F({t})");
            continue;
        }
        let closed = y1 + q * (t - t1);
        assert!((y - closed).abs() < 1e-7, "y({t}) = {y}, closed form {closed}");
        assert!((v - q).abs() < 1e-8, "v({t}) = {v}");
        assert!((f + y).abs() < 1e-7, "F({t}) = {f}, -y = {}", -y);
        assert!(dv.abs() < 1e-7, "der(v)({t}) = {dv}");
    }
}

/// A model with a delay integrated by its caller: RK4 steps of 0.01 written here, stopping at
/// the time events the model asks for (a record of the delay's history at least every
/// sixteenth of the delay), reproduce the delayed logistic equation's reference value
/// (`examples/delayed_logistic.eqm`, by the method of steps: N(5) = 265.918); a state taken at
/// t = 3 and restored gives the same N(5) bit for bit, the delay's history included.
#[test]
fn a_model_with_a_delay_integrated_by_its_caller_follows_its_history_and_restores_it() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/delayed_logistic.eqm"
    ))
    .unwrap();
    let mut model = compile(&text);
    let plan = model.plan_stepped(&tight(5.0)).unwrap();
    let mut m = model.start_exchange(&plan).unwrap();
    let mut next = m.event().unwrap().next_time_event;
    rk4_to(&mut m, 3.0, &mut next);
    let at_three = (m.state().unwrap(), next);
    rk4_to(&mut m, 5.0, &mut next);
    let first = m.value("N").unwrap();
    assert!((first - 265.918).abs() < 1e-3, "N(5) = {first}");
    m.restore(&at_three.0).unwrap();
    let mut next = at_three.1;
    rk4_to(&mut m, 5.0, &mut next);
    assert_eq!(m.value("N").unwrap(), first);
}

/// Classical RK4 steps of at most 0.01 from the model's time to `t_end`, each reported as
/// completed, ending a step at the time event `next` and handling it there.
fn rk4_to(m: &mut eqm::ModelExchange<'_>, t_end: f64, next: &mut Option<f64>) {
    let n = m.states().len();
    let field = |m: &mut eqm::ModelExchange<'_>, t: f64, x: &[f64]| {
        let mut dx = vec![0.0; n];
        m.set_time(t);
        m.set_states(x).unwrap();
        m.derivatives(&mut dx).unwrap();
        dx
    };
    while m.time() < t_end - 1e-12 {
        let (t, x) = (m.time(), m.states().to_vec());
        let mut h = (t_end - t).min(0.01);
        let event = next.filter(|&te| te <= t + h + 1e-12);
        if let Some(te) = event {
            h = te - t;
        }
        let k1 = field(m, t, &x);
        let at = |k: &[f64], c: f64| -> Vec<f64> { x.iter().zip(k).map(|(x, k)| x + c * h * k).collect() };
        let k2 = field(m, t + h / 2.0, &at(&k1, 0.5));
        let k3 = field(m, t + h / 2.0, &at(&k2, 0.5));
        let k4 = field(m, t + h, &at(&k3, 1.0));
        let x1: Vec<f64> = (0..n)
            .map(|i| x[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]))
            .collect();
        m.set_time(event.unwrap_or(t + h));
        m.set_states(&x1).unwrap();
        m.completed_step().unwrap();
        if event.is_some() {
            *next = m.event().unwrap().next_time_event;
        }
    }
}
