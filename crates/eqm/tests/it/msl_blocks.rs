//! The standard library's `Modelica.Blocks` (stdlib/Modelica_Blocks.eqm) through the API: every
//! source at chosen times against its defining formula, the math blocks against arithmetic, the
//! continuous blocks against closed-form step responses, the controllers in closed loops against
//! hand-derived responses and steady states, and the nonlinear blocks against their definitions.

use crate::system_dynamics::check;
use eqm::{ModelOptions, RunSettings, Session, SimulationResult};

/// The compiled only model of `text`.
fn compile(text: &str) -> eqm::Model {
    let files = vec![("m.eqm".to_string(), text.to_string())];
    let mut session = Session::with_sources(&files, &[], None);
    session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)))
}

/// A run of the only model of `text` to `stop` at tight tolerances, with rows every 0.01.
pub(crate) fn run(text: &str, stop: f64) -> SimulationResult {
    simulate(compile(text), stop)
}

/// A run of `model` to `stop` at tight tolerances, with rows every 0.01.
fn simulate(mut model: eqm::Model, stop: f64) -> SimulationResult {
    let settings = RunSettings {
        stop: Some(stop),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        interval: Some(0.01),
        ..RunSettings::default()
    };
    model
        .simulate(&settings)
        .unwrap_or_else(|e| panic!("{}: {e}", model.name()))
}

/// A model named `M` with `declarations` and `equations` (connect statements).
fn model(declarations: &str, equations: &str) -> String {
    format!("model M\n{declarations}\nequation\n{equations}\nend M;\n")
}

const PI: f64 = std::f64::consts::PI;

#[test]
fn step_constant_ramp_and_the_sines_follow_their_formulas() {
    let text = model(
        "  Modelica.Blocks.Sources.Constant c(k = 3);
           Modelica.Blocks.Sources.Step step(height = 2, offset = 1, startTime = 1);
           Modelica.Blocks.Sources.Ramp ramp(height = 2, duration = 2, offset = 0.5, startTime = 1);
           Modelica.Blocks.Sources.Sine sine(amplitude = 2, f = 0.5, offset = 1);
           Modelica.Blocks.Sources.Cosine cosine(amplitude = 2, f = 0.5);
           Modelica.Blocks.Sources.ExpSine expSine(amplitude = 1, f = 0.25, damping = 0.5);
           Modelica.Blocks.Sources.Sine late(f = 1, startTime = 0.5, phase = 0.3);",
        "",
    );
    let r = run(&text, 4.0);
    // A quarter period of the sine (period 2) is t = 0.5, a half period t = 1.
    for (name, t, expected) in [
        ("c.y", 2.0, 3.0),
        ("step.y", 0.5, 1.0),
        ("step.y", 1.5, 3.0),
        ("ramp.y", 0.5, 0.5),
        ("ramp.y", 2.0, 1.5),
        ("ramp.y", 3.5, 2.5),
        ("sine.y", 0.5, 3.0),
        ("sine.y", 1.0, 1.0),
        ("cosine.y", 0.0, 2.0),
        ("cosine.y", 1.0, -2.0),
        ("expSine.y", 1.0, (-0.5f64).exp()),
        ("late.y", 0.25, 0.0),
    ] {
        check(&r, name, t, expected, 1e-9);
    }
    check(&r, "late.y", 0.75, (2.0 * PI * 0.25 + 0.3).sin(), 1e-6);
}

#[test]
fn pulse_sawtooth_and_trapezoid_switch_at_their_times() {
    let text = model(
        "  Modelica.Blocks.Sources.Pulse pulse(amplitude = 2, width = 30, period = 1,
             nperiod = 2, startTime = 0.5);
           Modelica.Blocks.Sources.SawTooth saw(amplitude = 2, period = 1);
           Modelica.Blocks.Sources.Trapezoid trap(amplitude = 2, rising = 0.2, width = 0.3,
             falling = 0.1, period = 1, offset = 1);",
        "",
    );
    let r = run(&text, 4.0);
    // The pulse is 2 within [0.5, 0.8) and [1.5, 1.8), and 0 after its two periods.
    for (t, y) in [(0.25, 0.0), (0.6, 2.0), (0.9, 0.0), (1.7, 2.0), (1.85, 0.0), (2.6, 0.0)] {
        check(&r, "pulse.y", t, y, 1e-9);
    }
    for (t, y) in [(0.25, 0.5), (1.5, 1.0), (2.75, 1.5)] {
        check(&r, "saw.y", t, y, 1e-9);
    }
    // Rising over [0, 0.2), at the amplitude over [0.2, 0.5), falling over [0.5, 0.6), then 0.
    for (t, y) in [(0.1, 2.0), (0.3, 3.0), (0.55, 2.0), (0.8, 1.0), (1.1, 2.0), (2.4, 3.0)] {
        check(&r, "trap.y", t, y, 1e-9);
    }
}

#[test]
fn time_table_interpolates_linearly() {
    let text = model(
        "  Modelica.Blocks.Sources.TimeTable tt(table = [0, 0; 1, 1; 2, 4], startTime = 0.5,
             offset = 1);",
        "",
    );
    let r = run(&text, 3.0);
    check(&r, "tt.y", 0.25, 1.0, 0.0);
    check(&r, "tt.y", 1.0, 1.5, 1e-9);
    check(&r, "tt.y", 2.0, 3.5, 1e-9);
    // Past the last row the last interval continues: 4 + 3*0.5.
    check(&r, "tt.y", 3.0, 6.5, 1e-9);
}

#[test]
fn math_blocks_compute_their_arithmetic() {
    let text = model(
        "  Modelica.Blocks.Sources.Constant a(k = 3);
           Modelica.Blocks.Sources.Constant b(k = -2);
           Modelica.Blocks.Math.Gain gain(k = 2.5);
           Modelica.Blocks.Math.Add add(k1 = 2, k2 = -1);
           Modelica.Blocks.Math.Add3 add3(k3 = 4);
           Modelica.Blocks.Math.Product product;
           Modelica.Blocks.Math.Division division;
           Modelica.Blocks.Math.Feedback feedback;
           Modelica.Blocks.Math.Abs abs1;
           Modelica.Blocks.Math.Sqrt sqrt1;
           Modelica.Blocks.Math.Max max1;
           Modelica.Blocks.Math.Min min1;
           Modelica.Blocks.Math.Sum sum1(nin = 2, k = {1, 2});
           Modelica.Blocks.Math.MatrixGain matrixGain(K = [1, 2; 3, 4]);",
        "  connect(a.y, gain.u);
           connect(a.y, add.u1); connect(b.y, add.u2);
           connect(a.y, add3.u1); connect(a.y, add3.u2); connect(b.y, add3.u3);
           connect(a.y, product.u1); connect(b.y, product.u2);
           connect(a.y, division.u1); connect(b.y, division.u2);
           connect(a.y, feedback.u1); connect(b.y, feedback.u2);
           connect(b.y, abs1.u); connect(a.y, sqrt1.u);
           connect(a.y, max1.u1); connect(b.y, max1.u2);
           connect(a.y, min1.u1); connect(b.y, min1.u2);
           connect(a.y, sum1.u[1]); connect(b.y, sum1.u[2]);
           connect(a.y, matrixGain.u[1]); connect(b.y, matrixGain.u[2]);",
    );
    let r = run(&text, 1.0);
    for (name, value) in [
        ("gain.y", 7.5),
        ("add.y", 8.0),
        ("add3.y", -2.0),
        ("product.y", -6.0),
        ("division.y", -1.5),
        ("feedback.y", 5.0),
        ("abs1.y", 2.0),
        ("sqrt1.y", 3f64.sqrt()),
        ("max1.y", 3.0),
        ("min1.y", -2.0),
        ("sum1.y", -1.0),
        ("matrixGain.y[1]", -1.0),
        ("matrixGain.y[2]", 1.0),
    ] {
        check(&r, name, 0.5, value, 1e-14);
    }
}

#[test]
fn integrator_and_first_order_follow_their_closed_forms() {
    let text = model(
        "  Modelica.Blocks.Sources.Constant c(k = 3);
           Modelica.Blocks.Continuous.Integrator integrator(k = 2);
           Modelica.Blocks.Continuous.Integrator started(k = 2, y_start = 1);
           Modelica.Blocks.Continuous.FirstOrder lag(k = 2, T = 0.5);
           Modelica.Blocks.Continuous.FirstOrder steady(k = 2, T = 0.5,
             initType = Modelica.Blocks.Types.Init.SteadyState);
           Modelica.Blocks.Continuous.FirstOrder initOut(T = 0.5, y_start = 1,
             initType = Modelica.Blocks.Types.Init.InitialOutput);",
        "  connect(c.y, integrator.u); connect(c.y, started.u); connect(c.y, lag.u);
           connect(c.y, steady.u); connect(c.y, initOut.u);",
    );
    let r = run(&text, 3.0);
    for t in [0.0, 0.5, 1.0, 2.5] {
        check(&r, "integrator.y", t, 6.0 * t, 1e-8);
        check(&r, "started.y", t, 1.0 + 6.0 * t, 1e-8);
        check(&r, "lag.y", t, 6.0 * (1.0 - (-t / 0.5).exp()), 1e-7);
        check(&r, "steady.y", t, 6.0, 1e-8);
        check(&r, "initOut.y", t, 3.0 - 2.0 * (-t / 0.5).exp(), 1e-7);
    }
}

#[test]
fn a_model_written_for_the_msl_runs_unchanged() {
    let text = "model StepResponse
  Modelica.Blocks.Sources.Step step(height = 2, startTime = 1);
  Modelica.Blocks.Continuous.FirstOrder firstOrder(k = 1, T = 0.5);
equation
  connect(step.y, firstOrder.u);
end StepResponse;
";
    let r = run(text, 3.0);
    check(&r, "firstOrder.y", 0.5, 0.0, 1e-12);
    for t in [1.5, 2.0, 3.0] {
        check(&r, "firstOrder.y", t, 2.0 * (1.0 - (-(t - 1.0) / 0.5).exp()), 1e-7);
    }
}

#[test]
fn second_order_step_response_is_the_underdamped_closed_form() {
    let text = model(
        "  Modelica.Blocks.Sources.Constant c(k = 1);
           Modelica.Blocks.Continuous.SecondOrder so(k = 1, w = 2, D = 0.5);",
        "  connect(c.y, so.u);",
    );
    let r = run(&text, 5.0);
    let (w, d) = (2.0f64, 0.5f64);
    let wd = w * (1.0 - d * d).sqrt();
    for t in [0.5, 1.0, 2.5, 5.0] {
        let y = 1.0 - (-d * w * t).exp() * ((wd * t).cos() + d / (1.0 - d * d).sqrt() * (wd * t).sin());
        check(&r, "so.y", t, y, 1e-7);
    }
}

#[test]
fn derivative_approximates_the_slope_of_a_ramp() {
    // u = t: der(x) = (t - x)/T from x = 0 gives y = (u - x)/T = 1 - exp(-t/T).
    let text = model(
        "  Modelica.Blocks.Sources.Ramp ramp(height = 10, duration = 10);
           Modelica.Blocks.Continuous.Derivative derivative(T = 0.1);",
        "  connect(ramp.y, derivative.u);",
    );
    let r = run(&text, 2.0);
    for t in [0.1, 0.3, 1.0] {
        check(&r, "derivative.y", t, 1.0 - (-t / 0.1f64).exp(), 1e-6);
    }
}

#[test]
fn pi_control_of_a_first_order_plant_has_the_hand_derived_response() {
    // With T equal to the plant's time constant the PI zero cancels the plant pole: the loop
    // is 2/s, the closed loop 2/(s + 2), so y = 1 - exp(-2 t) and the error vanishes.
    let text = model(
        "  Modelica.Blocks.Sources.Constant setpoint(k = 1);
           Modelica.Blocks.Math.Feedback feedback;
           Modelica.Blocks.Continuous.PI pi(k = 2, T = 1);
           Modelica.Blocks.Continuous.FirstOrder plant(k = 1, T = 1);",
        "  connect(setpoint.y, feedback.u1); connect(plant.y, feedback.u2);
           connect(feedback.y, pi.u); connect(pi.y, plant.u);",
    );
    let r = run(&text, 10.0);
    for t in [0.25, 0.5, 1.0, 3.0] {
        check(&r, "plant.y", t, 1.0 - (-2.0 * t).exp(), 1e-7);
    }
    check(&r, "feedback.y", 10.0, 0.0, 1e-7);
}

#[test]
fn pid_open_loop_and_closed_loop() {
    // Open loop on u = 1 from zero states: y = k*(1 + t/Ti + Nd*exp(-Nd*t/Td)).
    let open = model(
        "  Modelica.Blocks.Sources.Constant c(k = 1);
           Modelica.Blocks.Continuous.PID pid(k = 2, Ti = 0.5, Td = 0.1, Nd = 10);",
        "  connect(c.y, pid.u);",
    );
    let r = run(&open, 1.0);
    for t in [0.01, 0.05, 0.5] {
        let y = 2.0 * (1.0 + t / 0.5 + 10.0 * (-10.0 * t / 0.1f64).exp());
        check(&r, "pid.y", t, y, 1e-6);
    }
    // In a loop with a first-order plant the integral action removes the error.
    let closed = model(
        "  Modelica.Blocks.Sources.Step setpoint(height = 1, startTime = 0.5);
           Modelica.Blocks.Math.Feedback feedback;
           Modelica.Blocks.Continuous.PID pid(k = 2, Ti = 0.5, Td = 0.1);
           Modelica.Blocks.Continuous.FirstOrder plant(k = 1, T = 1);",
        "  connect(setpoint.y, feedback.u1); connect(plant.y, feedback.u2);
           connect(feedback.y, pid.u); connect(pid.y, plant.u);",
    );
    let r = run(&closed, 20.0);
    check(&r, "plant.y", 20.0, 1.0, 1e-6);
}

#[test]
fn lim_pid_reaches_a_reachable_set_point_and_holds_its_limit_otherwise() {
    let loop_with = |set_point: f64| {
        model(
            &format!(
                "  Modelica.Blocks.Sources.Constant setpoint(k = {set_point});
                   Modelica.Blocks.Continuous.LimPID pid(k = 2, Ti = 0.5, Td = 0.1, yMax = 1);
                   Modelica.Blocks.Continuous.FirstOrder plant(k = 1, T = 1);"
            ),
            "  connect(setpoint.y, pid.u_s); connect(plant.y, pid.u_m);
               connect(pid.y, plant.u);",
        )
    };
    // Reachable: the integral part makes the error zero, the output stays inside its limits.
    let r = run(&loop_with(0.5), 20.0);
    check(&r, "plant.y", 20.0, 0.5, 1e-6);
    check(&r, "pid.y", 20.0, 0.5, 1e-6);
    // Out of reach: the output saturates at yMax, the plant follows 1 - exp(-t) from the
    // start, and the anti-windup keeps the integrator state bounded.
    let r = run(&loop_with(10.0), 10.0);
    for t in [0.5, 2.0, 10.0] {
        check(&r, "pid.y", t, 1.0, 0.0);
        check(&r, "plant.y", t, 1.0 - (-t).exp(), 1e-7);
    }
    let xi = r.value_at("pid.xi", 10.0).unwrap();
    assert!(xi.abs() < 20.0, "the integrator winds up: xi = {xi}");
}

#[test]
fn transfer_function_and_state_space_match_their_hand_solutions() {
    let text = model(
        "  Modelica.Blocks.Sources.Constant c(k = 1);
           Modelica.Blocks.Continuous.TransferFunction tf1(b = {1}, a = {1, 1});
           Modelica.Blocks.Continuous.FirstOrder lag(k = 1, T = 1);
           Modelica.Blocks.Continuous.TransferFunction tf2(b = {1}, a = {1, 3, 2});
           Modelica.Blocks.Continuous.TransferFunction lead(b = {2, 1}, a = {1, 1});
           Modelica.Blocks.Continuous.StateSpace ss(A = [-1, 0; 0, -2], B = [1; 1], C = [1, 1],
             D = [0.5]);",
        "  connect(c.y, tf1.u); connect(c.y, lag.u); connect(c.y, tf2.u); connect(c.y, lead.u);
           connect(c.y, ss.u[1]);",
    );
    let r = run(&text, 4.0);
    for t in [0.5, 1.0, 3.0] {
        let lag = r.value_at("lag.y", t).unwrap();
        check(&r, "tf1.y", t, lag, 1e-9);
        check(&r, "tf1.y", t, 1.0 - (-t).exp(), 1e-7);
        // 1/((s + 1)(s + 2)): y = 1/2 - exp(-t) + exp(-2 t)/2.
        let y2 = 0.5 - (-t).exp() + 0.5 * (-2.0 * t).exp();
        check(&r, "tf2.y", t, y2, 1e-7);
        // (2 s + 1)/(s + 1) = 2 - 1/(s + 1): y = 2 - (1 - exp(-t)).
        check(&r, "lead.y", t, 1.0 + (-t).exp(), 1e-7);
        // x1 = 1 - exp(-t), x2 = (1 - exp(-2 t))/2, y = x1 + x2 + 0.5.
        let y = (1.0 - (-t).exp()) + 0.5 * (1.0 - (-2.0 * t).exp()) + 0.5;
        check(&r, "ss.y[1]", t, y, 1e-7);
    }
}

#[test]
fn limiter_dead_zone_and_variable_limiter_values() {
    // u = -2 + t over [0, 4].
    let text = model(
        "  Modelica.Blocks.Sources.Ramp u(height = 4, duration = 4, offset = -2);
           Modelica.Blocks.Sources.Constant upper(k = 1);
           Modelica.Blocks.Sources.Constant lower(k = -0.5);
           Modelica.Blocks.Nonlinear.Limiter limiter(uMax = 1);
           Modelica.Blocks.Nonlinear.DeadZone deadZone(uMax = 1);
           Modelica.Blocks.Nonlinear.VariableLimiter variableLimiter;",
        "  connect(u.y, limiter.u); connect(u.y, deadZone.u); connect(u.y, variableLimiter.u);
           connect(upper.y, variableLimiter.limit1); connect(lower.y, variableLimiter.limit2);",
    );
    let r = run(&text, 4.0);
    for (t, limited, dead, variable) in [
        (0.5, -1.0, -0.5, -0.5),
        (1.5, -0.5, 0.0, -0.5),
        (2.0, 0.0, 0.0, 0.0),
        (2.5, 0.5, 0.0, 0.5),
        (3.5, 1.0, 0.5, 1.0),
    ] {
        check(&r, "limiter.y", t, limited, 1e-9);
        check(&r, "deadZone.y", t, dead, 1e-9);
        check(&r, "variableLimiter.y", t, variable, 1e-9);
    }
}

#[test]
fn combi_time_table_interpolates_and_extrapolates_its_columns() {
    let text = model(
        "  Modelica.Blocks.Sources.CombiTimeTable lin(table = [0, 0, 10; 1, 2, 20; 3, 2, 0]);
               Modelica.Blocks.Sources.CombiTimeTable file(table = readMatrix(\"tab.csv\"), columns = {3},
                 smoothness = Modelica.Blocks.Types.Smoothness.ConstantSegments, offset = {1});
               Modelica.Blocks.Sources.CombiTimeTable per(table = [0, 0; 1, 2; 2, 0],
                 extrapolation = Modelica.Blocks.Types.Extrapolation.Periodic, startTime = 0.5,
                 shiftTime = 0.5);
               Modelica.Blocks.Sources.CombiTimeTable hold(table = [0, 0; 1, 2; 2, 0],
                 extrapolation = Modelica.Blocks.Types.Extrapolation.HoldLastPoint, offset = {5});",
        "",
    );
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text)], &[], None);
    // The data file as the session's reader gives it: a header line and three rows.
    session.set_file_reader(|path: &std::path::Path| {
        assert!(path.ends_with("tab.csv"), "{}", path.display());
        Ok("t, a, b\n0, 0, 10\n1, 2, 20\n3, 2, 0\n".to_string())
    });
    let compiled = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let r = simulate(compiled, 4.0);
    // Linear segments; past the last row the line through the last two rows continues.
    for (name, t, y) in [
        ("lin.y[1]", 0.5, 1.0),
        ("lin.y[1]", 2.0, 2.0),
        ("lin.y[1]", 4.0, 2.0),
        ("lin.y[2]", 0.5, 15.0),
        ("lin.y[2]", 2.0, 10.0),
        ("lin.y[2]", 4.0, -10.0),
        // Constant segments of the third column read from the file, plus the offset 1.
        ("file.y[1]", 0.5, 11.0),
        ("file.y[1]", 1.5, 21.0),
        ("file.y[1]", 3.5, 1.0),
        // Periodic with period 2, read at time - 0.5; zero before the start time 0.5.
        ("per.y[1]", 0.25, 0.0),
        ("per.y[1]", 1.0, 1.0),
        ("per.y[1]", 2.0, 1.0),
        ("per.y[1]", 3.0, 1.0),
        ("per.y[1]", 3.75, 1.5),
        // Held at the last row past the end, plus the offset 5.
        ("hold.y[1]", 0.5, 6.0),
        ("hold.y[1]", 1.5, 6.0),
        ("hold.y[1]", 3.0, 5.0),
    ] {
        check(&r, name, t, y, 1e-9);
    }
}

#[test]
fn fixed_delay_and_the_discrete_blocks_sample_a_ramp() {
    let text = model(
        "  Modelica.Blocks.Sources.Ramp ramp(height = 4, duration = 4);
           Modelica.Blocks.Nonlinear.FixedDelay fd(delayTime = 1);
           Modelica.Blocks.Discrete.Sampler smp(samplePeriod = 0.5, startTime = 0.25);
           Modelica.Blocks.Discrete.ZeroOrderHold zoh(samplePeriod = 0.5);
           Modelica.Blocks.Discrete.UnitDelay ud(samplePeriod = 0.5, y_start = -1);",
        "  connect(ramp.y, fd.u);
           connect(ramp.y, smp.u);
           connect(ramp.y, zoh.u);
           connect(ramp.y, ud.u);",
    );
    let r = run(&text, 4.0);
    for (name, t, y) in [
        // The ramp is y = time; the delay holds its start value 0 for the first second.
        ("fd.y", 0.5, 0.0),
        ("fd.y", 2.5, 1.5),
        // Sampled at the start and at 0.25 + 0.5 k.
        ("smp.y", 0.2, 0.0),
        ("smp.y", 0.3, 0.25),
        ("smp.y", 1.1, 0.75),
        // Held from 0.5 k.
        ("zoh.y", 0.3, 0.0),
        ("zoh.y", 0.6, 0.5),
        ("zoh.y", 1.99, 1.5),
        // One sample period late: y_start until the second tick.
        ("ud.y", 0.3, -1.0),
        ("ud.y", 0.6, 0.0),
        ("ud.y", 1.2, 0.5),
        ("ud.y", 3.7, 3.0),
    ] {
        check(&r, name, t, y, 1e-9);
    }
}

#[test]
fn logical_blocks_and_boolean_sources_follow_their_truth_tables() {
    let text = model(
        "  Modelica.Blocks.Sources.BooleanStep bs(startTime = 1);
           Modelica.Blocks.Sources.BooleanPulse bp(width = 25, period = 1, startTime = 0.5);
           Modelica.Blocks.Sources.IntegerStep is(height = 3, offset = -1, startTime = 2);
           Modelica.Blocks.Sources.RealExpression re(y = 2*time + 1);
           Modelica.Blocks.Sources.BooleanExpression be(y = time > 1.5);
           Modelica.Blocks.Logical.And and1;
           Modelica.Blocks.Logical.Or or1;
           Modelica.Blocks.Logical.Xor xor1;
           Modelica.Blocks.Logical.Not not1;
           Modelica.Blocks.Logical.Nand nand1;
           Modelica.Blocks.Logical.Nor nor1;
           Modelica.Blocks.Sources.Sine sine(f = 0.25, amplitude = 2);
           Modelica.Blocks.Logical.GreaterThreshold gt(threshold = 1);
           Modelica.Blocks.Logical.LessThreshold lt(threshold = -1);
           Modelica.Blocks.Logical.Greater g;
           Modelica.Blocks.Logical.Less l;
           Modelica.Blocks.Logical.Switch sw;
           Modelica.Blocks.Logical.Hysteresis hys(uLow = -1, uHigh = 1);
           Modelica.Blocks.Logical.OnOffController onoff(bandwidth = 1);
           Modelica.Blocks.Sources.Constant zero(k = 0);",
        "  connect(bs.y, and1.u1); connect(be.y, and1.u2);
           connect(bs.y, or1.u1); connect(be.y, or1.u2);
           connect(bs.y, xor1.u1); connect(be.y, xor1.u2);
           connect(bs.y, not1.u);
           connect(bs.y, nand1.u1); connect(be.y, nand1.u2);
           connect(bs.y, nor1.u1); connect(be.y, nor1.u2);
           connect(sine.y, gt.u); connect(sine.y, lt.u);
           connect(sine.y, g.u1); connect(zero.y, g.u2);
           connect(sine.y, l.u1); connect(zero.y, l.u2);
           connect(re.y, sw.u1); connect(bp.y, sw.u2); connect(sine.y, sw.u3);
           connect(sine.y, hys.u);
           connect(zero.y, onoff.reference); connect(sine.y, onoff.u);",
    );
    let r = run(&text, 5.0);
    // The sine is 2 sin(pi t/2): 1 at t = 1/3, 2 at t = 1, -1 at t = 7/3, -2 at t = 3.
    let sine = |t: f64| 2.0 * (PI * t / 2.0).sin();
    for (name, t, y) in [
        ("bs.y", 0.5, 0.0),
        ("bs.y", 1.5, 1.0),
        ("bp.y", 0.25, 0.0),
        ("bp.y", 0.6, 1.0),
        ("bp.y", 0.9, 0.0),
        ("bp.y", 1.6, 1.0),
        ("is.y", 1.0, -1.0),
        ("is.y", 3.0, 2.0),
        ("re.y", 1.0, 3.0),
        ("be.y", 1.0, 0.0),
        ("be.y", 2.0, 1.0),
        ("and1.y", 1.25, 0.0),
        ("and1.y", 2.0, 1.0),
        ("or1.y", 0.5, 0.0),
        ("or1.y", 1.25, 1.0),
        ("xor1.y", 1.25, 1.0),
        ("xor1.y", 2.0, 0.0),
        ("not1.y", 0.5, 1.0),
        ("nand1.y", 1.25, 1.0),
        ("nand1.y", 2.0, 0.0),
        ("nor1.y", 0.5, 1.0),
        ("nor1.y", 1.25, 0.0),
        ("not1.y", 1.5, 0.0),
        ("gt.y", 0.25, 0.0),
        ("gt.y", 0.5, 1.0),
        ("lt.y", 2.2, 0.0),
        ("lt.y", 2.5, 1.0),
        ("g.y", 1.0, 1.0),
        ("g.y", 3.0, 0.0),
        ("l.y", 1.0, 0.0),
        ("l.y", 3.0, 1.0),
        ("sw.y", 0.6, 2.2),
        ("sw.y", 0.9, sine(0.9)),
        // Switches on above 1 (t = 1/3) and off below -1 (t = 7/3), keeping its value between.
        ("hys.y", 0.25, 0.0),
        ("hys.y", 0.5, 1.0),
        ("hys.y", 2.0, 1.0),
        ("hys.y", 2.5, 0.0),
        ("hys.y", 3.9, 0.0),
        ("hys.y", 4.5, 1.0),
        // On below -0.5, off at 0.5 and above, unchanged in between.
        ("onoff.y", 0.25, 0.0),
        ("onoff.y", 2.2, 1.0),
        ("onoff.y", 3.9, 1.0),
        ("onoff.y", 4.2, 0.0),
    ] {
        check(&r, name, t, y, 1e-9);
    }
}

#[test]
fn math_functions_and_routing_blocks() {
    let text = model(
        "  Modelica.Blocks.Sources.Constant a(k = 0.5);
           Modelica.Blocks.Sources.Constant b(k = -2);
           Modelica.Blocks.Math.Sin sin1;
           Modelica.Blocks.Math.Cos cos1;
           Modelica.Blocks.Math.Exp exp1;
           Modelica.Blocks.Math.Log log1;
           Modelica.Blocks.Math.Tan tan1;
           Modelica.Blocks.Math.Asin asin1;
           Modelica.Blocks.Math.Acos acos1;
           Modelica.Blocks.Math.Atan atan1;
           Modelica.Blocks.Math.Sinh sinh1;
           Modelica.Blocks.Math.Cosh cosh1;
           Modelica.Blocks.Math.Tanh tanh1;
           Modelica.Blocks.Math.Log10 log10a;
           Modelica.Blocks.Math.Atan2 atan2a;
           Modelica.Blocks.Math.Power pow2(base = 2, useExp = false);
           Modelica.Blocks.Math.Power powE;
           Modelica.Blocks.Routing.Replicator rep(nout = 3);
           Modelica.Blocks.Routing.Multiplex2 mux(n1 = 1, n2 = 2);
           Modelica.Blocks.Routing.DeMultiplex2 demux(n1 = 2, n2 = 1);
           Modelica.Blocks.Routing.Extractor ex(nin = 3);
           Modelica.Blocks.Sources.IntegerStep index(height = 1, offset = 1, startTime = 1);",
        "  connect(a.y, sin1.u); connect(a.y, cos1.u); connect(a.y, exp1.u); connect(a.y, log1.u);
           connect(a.y, tan1.u); connect(a.y, asin1.u); connect(a.y, acos1.u); connect(b.y, atan1.u);
           connect(a.y, sinh1.u); connect(a.y, cosh1.u); connect(a.y, tanh1.u); connect(a.y, log10a.u);
           connect(a.y, atan2a.u1); connect(b.y, atan2a.u2);
           connect(b.y, pow2.u); connect(a.y, powE.u);
           connect(b.y, rep.u);
           connect(a.y, mux.u1[1]); connect(rep.y[2], mux.u2[1]); connect(sin1.y, mux.u2[2]);
           connect(mux.y, demux.u);
           connect(mux.y, ex.u); connect(index.y, ex.index);",
    );
    let r = run(&text, 2.0);
    let s = 0.5f64.sin();
    for (name, t, y) in [
        ("sin1.y", 0.5, s),
        ("cos1.y", 0.5, 0.5f64.cos()),
        ("exp1.y", 0.5, 0.5f64.exp()),
        ("log1.y", 0.5, -(2.0f64.ln())),
        ("atan2a.y", 0.5, PI - 0.25f64.atan()),
        // sin(pi/6) = 1/2 and cos(pi/3) = 1/2; atan(-2) = -atan(2).
        ("tan1.y", 0.5, 0.5f64.sin() / 0.5f64.cos()),
        ("asin1.y", 0.5, PI / 6.0),
        ("acos1.y", 0.5, PI / 3.0),
        ("atan1.y", 0.5, -(2.0f64.atan())),
        ("sinh1.y", 0.5, (0.5f64.exp() - (-0.5f64).exp()) / 2.0),
        ("cosh1.y", 0.5, (0.5f64.exp() + (-0.5f64).exp()) / 2.0),
        ("tanh1.y", 0.5, (1.0f64.exp() - 1.0) / (1.0f64.exp() + 1.0)),
        ("log10a.y", 0.5, -(2.0f64.ln()) / 10.0f64.ln()),
        ("pow2.y", 0.5, 0.25),
        ("powE.y", 0.5, 0.5f64.exp()),
        ("rep.y[1]", 0.5, -2.0),
        ("rep.y[3]", 0.5, -2.0),
        ("mux.y[1]", 0.5, 0.5),
        ("mux.y[2]", 0.5, -2.0),
        ("mux.y[3]", 0.5, s),
        ("demux.y1[1]", 0.5, 0.5),
        ("demux.y1[2]", 0.5, -2.0),
        ("demux.y2[1]", 0.5, s),
        ("ex.y", 0.5, 0.5),
        ("ex.y", 1.5, -2.0),
    ] {
        check(&r, name, t, y, 1e-12);
    }
}

#[test]
fn conversions_timer_comparisons_and_pass_throughs() {
    let text = model(
        "  Modelica.Blocks.Sources.Sine sine(f = 0.25, amplitude = 2);
           Modelica.Blocks.Sources.BooleanPulse bp(width = 25, period = 1, startTime = 0.5);
           Modelica.Blocks.Logical.Timer timer;
           Modelica.Blocks.Math.BooleanToReal b2r(realTrue = 3, realFalse = -1);
           Modelica.Blocks.Math.BooleanToInteger b2i;
           Modelica.Blocks.Math.RealToInteger r2i;
           Modelica.Blocks.Math.IntegerToReal i2r;
           Modelica.Blocks.Logical.GreaterEqualThreshold ge(threshold = 1);
           Modelica.Blocks.Logical.LessEqual le;
           Modelica.Blocks.Routing.RealPassThrough rp;
           Modelica.Blocks.Sources.Constant zero(k = 0);",
        "  connect(bp.y, timer.u); connect(bp.y, b2r.u); connect(bp.y, b2i.u);
           connect(sine.y, r2i.u); connect(r2i.y, i2r.u); connect(sine.y, ge.u);
           connect(sine.y, le.u1); connect(zero.y, le.u2); connect(sine.y, rp.u);",
    );
    let r = run(&text, 4.0);
    // The pulse is true within [0.5, 0.75) and [1.5, 1.75); the sine is 2 sin(pi t/2).
    for (name, t, y) in [
        ("timer.y", 0.25, 0.0),
        ("timer.y", 0.7, 0.2),
        ("timer.y", 0.9, 0.0),
        ("timer.y", 1.7, 0.2),
        ("b2r.y", 0.6, 3.0),
        ("b2r.y", 0.9, -1.0),
        ("b2i.y", 0.6, 1.0),
        ("b2i.y", 0.9, 0.0),
        // 2 sin(0.1 pi) = 0.618 rounds to 1, 2 sin(0.3 pi) = 1.618 to 2, and their negatives.
        ("r2i.y", 0.2, 1.0),
        ("r2i.y", 0.6, 2.0),
        ("i2r.y", 2.2, -1.0),
        ("i2r.y", 3.0, -2.0),
        ("ge.y", 0.25, 0.0),
        ("ge.y", 0.5, 1.0),
        ("le.y", 1.0, 0.0),
        ("le.y", 3.0, 1.0),
        ("rp.y", 0.5, 2f64.sqrt()),
    ] {
        check(&r, name, t, y, 1e-9);
    }
}
