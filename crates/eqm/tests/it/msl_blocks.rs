//! The standard library's `Modelica.Blocks` (stdlib/Modelica_Blocks.eqm) through the API: every
//! source at chosen times against its defining formula, the math blocks against arithmetic, the
//! continuous blocks against closed-form step responses, the controllers in closed loops against
//! hand-derived responses and steady states, and the nonlinear blocks against their definitions;
//! the tables at and between their points (and the integral of a time table across its jumps
//! against the hand integral), the discrete blocks against their difference equations worked by
//! hand, the logical blocks against truth sequences counted at their events, and the routing
//! blocks against the sizes and order of their vectors.

use crate::{check, compile, run_tight};
use eqm::{ModelOptions, RunSettings, Session, SimulationResult};

/// A run of the only model of `text` to `stop` at tight tolerances, with rows every 0.01.
pub(crate) fn run(text: &str, stop: f64) -> SimulationResult {
    run_tight(compile(text), stop, Some(0.01))
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
             offset = 1);
           Modelica.Blocks.Sources.TimeTable jump(table = [0, 0; 1, 1; 1, 3; 2, 3], shiftTime = 0.5);
           Modelica.Blocks.Continuous.Integrator area;",
        "  connect(jump.y, area.u);",
    );
    let r = run(&text, 3.0);
    check(&r, "tt.y", 0.25, 1.0, 0.0);
    check(&r, "tt.y", 1.0, 1.5, 1e-9);
    check(&r, "tt.y", 2.0, 3.5, 1e-9);
    // Past the last row the last interval continues: 4 + 3*0.5.
    check(&r, "tt.y", 3.0, 6.5, 1e-9);
    // Read at time - 0.5: the first interval extended before the first row, the jump from 1 to 3
    // at t = 1.5. The integral to t = 2 is the integral of the table from -0.5 to 1.5:
    // (1 - 0.25)/2 + 3*0.5.
    check(&r, "jump.y", 0.25, -0.25, 1e-12);
    check(&r, "jump.y", 1.25, 0.75, 1e-12);
    check(&r, "jump.y", 1.75, 3.0, 1e-12);
    check(&r, "area.y", 2.0, 0.375 + 1.5, 1e-9);
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
           Modelica.Blocks.Nonlinear.Limiter strict(uMax = 1, strict = true);
           Modelica.Blocks.Nonlinear.DeadZone deadZone(uMax = 1);
           Modelica.Blocks.Nonlinear.VariableLimiter variableLimiter;",
        "  connect(u.y, limiter.u); connect(u.y, strict.u); connect(u.y, deadZone.u); connect(u.y, variableLimiter.u);
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
        check(&r, "strict.y", t, limited, 1e-9);
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
    let r = run_tight(compiled, 4.0, Some(0.01));
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

#[test]
fn combi_time_table_rows_are_time_events_so_integrals_across_jumps_are_exact() {
    // Each state integrates one table: a jump from 1 to 3 at t = 1 (two rows with the same time),
    // constant segments 1, 2, -1 switching at 0.7 and 1.3, and a periodic table with a jump from 1
    // to 2 at its table time 0.3, read at (time - 0.1)/2 so its period is 1 s.
    let text = model(
        "  Modelica.Blocks.Sources.CombiTimeTable lin(table = [0, 0; 1, 1; 1, 3; 2, 3]);
           Modelica.Blocks.Sources.CombiTimeTable cst(table = [0, 1; 0.7, 2; 1.3, -1],
             smoothness = Modelica.Blocks.Types.Smoothness.ConstantSegments);
           Modelica.Blocks.Sources.CombiTimeTable per(table = [0, 0; 0.3, 1; 0.3, 2; 0.5, 0],
             timeScale = 2, shiftTime = 0.1,
             extrapolation = Modelica.Blocks.Types.Extrapolation.Periodic);
           Modelica.Blocks.Continuous.Integrator x1;
           Modelica.Blocks.Continuous.Integrator x2;
           Modelica.Blocks.Continuous.Integrator x3;",
        "  connect(lin.y[1], x1.u); connect(cst.y[1], x2.u); connect(per.y[1], x3.u);",
    );
    let r = run(&text, 2.0);
    // By hand: the ramp gives 1/2 by t = 1 and the level 3 adds 3 per second after it; the
    // constant segments 0.7*1 + 0.6*2 - 0.7*1 = 1.2; the periodic table 2*(0.3*1/2 + 0.2*2/2)
    // = 0.7 per period, starting at t = 0 at table time -0.05, which is 0.45 in the period.
    for (name, t, expected) in [
        ("x1.y", 1.0, 0.5),
        ("x1.y", 1.5, 2.0),
        ("x1.y", 2.0, 3.5),
        ("x2.y", 1.0, 0.7 + 0.3 * 2.0),
        ("x2.y", 2.0, 1.2),
        ("x3.y", 1.0, 0.7),
        ("x3.y", 2.0, 1.4),
        ("lin.y[1]", 0.99, 0.99),
        ("lin.y[1]", 1.01, 3.0),
        ("cst.y[1]", 1.29, 2.0),
        ("cst.y[1]", 1.31, -1.0),
        // Table time (0.69 - 0.1)/2 = 0.295 on the rise from 0 to 1 over [0, 0.3), and 0.305 on
        // the fall from 2 to 0 over [0.3, 0.5).
        ("per.y[1]", 0.69, 0.295 / 0.3),
        ("per.y[1]", 0.71, 2.0 - 2.0 * 0.005 / 0.2),
    ] {
        check(&r, name, t, expected, 1e-9);
    }
}

#[test]
fn combi_tables_interpolate_at_their_inputs() {
    let text = model(
        "  Modelica.Blocks.Sources.ContinuousClock u;
           Modelica.Blocks.Sources.ContinuousClock u2(offset = -1);
           Modelica.Blocks.Tables.CombiTable1Ds lin(table = [0, 0, 10; 1, 2, 20; 3, 2, 0]);
           Modelica.Blocks.Tables.CombiTable1Ds cst(table = [0, 0, 10; 1, 2, 20; 3, 2, 0],
             columns = {3}, smoothness = Modelica.Blocks.Types.Smoothness.ConstantSegments,
             extrapolation = Modelica.Blocks.Types.Extrapolation.HoldLastPoint);
           Modelica.Blocks.Tables.CombiTable1Dv vec(table = [0, 0, 10; 1, 2, 20; 3, 2, 0]);
           Modelica.Blocks.Tables.CombiTable2Ds bil(table = [0, 0, 1, 2; 0, 0, 1, 4; 2, 2, 3, 10]);
           Modelica.Blocks.Tables.CombiTable2Ds hold(table = [0, 0, 1, 2; 0, 0, 1, 4; 2, 2, 3, 10],
             extrapolation = Modelica.Blocks.Types.Extrapolation.HoldLastPoint);",
        "  connect(u.y, lin.u); connect(u.y, cst.u);
           connect(u.y, vec.u[1]); connect(u2.y, vec.u[2]);
           connect(u.y, bil.u1); connect(u2.y, bil.u2);
           connect(u.y, hold.u1); connect(u2.y, hold.u2);",
    );
    let r = run(&text, 4.0);
    // The 2-D table has the u1 grid {0, 2}, the u2 grid {0, 1, 2} and the values
    // {0, 1, 4} at u1 = 0 and {2, 3, 10} at u1 = 2; bil is read at (t, t - 1).
    let bilinear = |u1: f64, u2: f64| {
        let row = |v: [f64; 3]| {
            if u2 <= 1.0 {
                v[0] + (v[1] - v[0]) * u2
            } else {
                v[1] + (v[2] - v[1]) * (u2 - 1.0)
            }
        };
        let (a, b) = (row([0.0, 1.0, 4.0]), row([2.0, 3.0, 10.0]));
        a + (b - a) * u1 / 2.0
    };
    for (name, t, expected) in [
        // At the grid points and between them; past the last point the line through the last
        // two continues.
        ("lin.y[1]", 1.0, 2.0),
        ("lin.y[1]", 0.25, 0.5),
        ("lin.y[2]", 2.0, 10.0),
        ("lin.y[2]", 3.0, 0.0),
        ("lin.y[2]", 4.0, -10.0),
        ("cst.y[1]", 0.5, 10.0),
        ("cst.y[1]", 1.0, 20.0),
        ("cst.y[1]", 2.99, 20.0),
        ("cst.y[1]", 3.5, 0.0),
        // Each output at its own input: column 2 at t, column 3 at t - 1.
        ("vec.y[1]", 0.5, 1.0),
        ("vec.y[2]", 0.5, 5.0),
        ("vec.y[2]", 2.5, 15.0),
        ("bil.y", 1.0, 1.0),
        ("bil.y", 1.5, bilinear(1.5, 0.5)),
        ("bil.y", 2.0, 3.0),
        ("bil.y", 2.5, bilinear(2.5, 1.5)),
        ("bil.y", 3.5, bilinear(3.5, 2.5)),
        // Held at the grid's edges: (4, 3) reads the corner value 10.
        ("hold.y", 4.0, 10.0),
        ("hold.y", 0.5, 0.5 * 2.0 / 2.0),
    ] {
        check(&r, name, t, expected, 1e-12);
    }
    // The bilinear formula is not the trivial one: at (1.5, 0.5) it is 0.5 + 0.75*(2.5 - 0.5).
    check(&r, "bil.y", 1.5, 2.0, 1e-12);
}

#[test]
fn boolean_integer_and_clock_sources() {
    let text = model(
        "  Modelica.Blocks.Sources.BooleanTable bt(table = {0.25, 0.75, 1.25, 1.5, 2.5});
           Modelica.Blocks.Sources.BooleanTable per(table = {0.5, 1, 1.5}, startValue = true,
             extrapolation = Modelica.Blocks.Types.Extrapolation.Periodic);
           Modelica.Blocks.Sources.IntegerTable it(table = [0, 1; 1, 3; 2, -5]);
           Modelica.Blocks.Sources.BooleanConstant yes;
           Modelica.Blocks.Sources.BooleanConstant no(k = false);
           Modelica.Blocks.Sources.IntegerConstant four(k = 4);
           Modelica.Blocks.Sources.IntegerExpression ie(y = 2*four.y);
           Modelica.Blocks.Sources.ContinuousClock clock(offset = 1, startTime = 0.5);
           Modelica.Blocks.Sources.SampleTrigger trigger(period = 0.4, startTime = 0.2);
           Integer ticks(start = 0, fixed = true);",
        "  when trigger.y then ticks = pre(ticks) + 1; end when;",
    );
    let r = run(&text, 3.0);
    for (name, t, expected) in [
        ("bt.y", 0.1, 0.0),
        ("bt.y", 0.5, 1.0),
        ("bt.y", 1.0, 0.0),
        ("bt.y", 1.4, 1.0),
        ("bt.y", 2.0, 0.0),
        ("bt.y", 2.9, 1.0),
        // Period 1 from 0.5: false on [0.5, 1), true on [1, 1.5), repeated before and after.
        ("per.y", 0.2, 1.0),
        ("per.y", 0.7, 0.0),
        ("per.y", 1.2, 1.0),
        ("per.y", 1.7, 0.0),
        ("per.y", 2.2, 1.0),
        ("it.y", 0.5, 1.0),
        ("it.y", 1.5, 3.0),
        ("it.y", 2.5, -5.0),
        ("yes.y", 1.0, 1.0),
        ("no.y", 1.0, 0.0),
        ("four.y", 1.0, 4.0),
        ("ie.y", 1.0, 8.0),
        ("clock.y", 0.3, 1.0),
        ("clock.y", 2.0, 2.5),
        // Ticks at 0.2, 0.6, ..., 2.6: three by t = 1.1, seven by t = 3.
        ("ticks", 1.1, 3.0),
        ("ticks", 3.0, 7.0),
        ("trigger.y", 1.1, 0.0),
    ] {
        check(&r, name, t, expected, 1e-12);
    }
}

#[test]
fn pre_edge_change_and_the_flip_flop_follow_their_truth_sequences() {
    // The input u is true on [0.25, 0.75), [1.25, 1.5) and from 2.5 on; the reset r on
    // [1, 1.1) and [2, 2.2).
    let text = model(
        "  Modelica.Blocks.Sources.BooleanTable u(table = {0.25, 0.75, 1.25, 1.5, 2.5});
           Modelica.Blocks.Sources.BooleanTable r(table = {1, 1.1, 2, 2.2});
           Modelica.Blocks.Sources.BooleanConstant yes;
           Modelica.Blocks.Logical.Pre pre1;
           Modelica.Blocks.Logical.Pre preTrue(pre_u_start = true);
           Modelica.Blocks.Logical.Edge rising;
           Modelica.Blocks.Logical.FallingEdge falling;
           Modelica.Blocks.Logical.Change change1;
           Modelica.Blocks.Logical.Change changeStart(pre_u_start = true);
           Modelica.Blocks.Logical.RSFlipFlop ff;
           Modelica.Blocks.Logical.RSFlipFlop both(Qini = true);
           Modelica.Blocks.Logical.LogicalSwitch ls;
           Integer nRising(start = 0, fixed = true);
           Integer nFalling(start = 0, fixed = true);
           Integer nChange(start = 0, fixed = true);
           Integer nPre(start = 0, fixed = true);
           Integer nStart(start = 0, fixed = true);
           discrete Real preAtStart(start = -1, fixed = true);
           discrete Real preAtRise(start = -1, fixed = true);
           discrete Real preAtFall(start = -1, fixed = true);",
        "  connect(u.y, pre1.u); connect(u.y, preTrue.u); connect(u.y, rising.u);
           connect(u.y, falling.u); connect(u.y, change1.u); connect(u.y, changeStart.u);
           connect(u.y, ff.S); connect(r.y, ff.R);
           connect(yes.y, both.S); connect(r.y, both.R);
           connect(yes.y, ls.u1); connect(u.y, ls.u2); connect(r.y, ls.u3);
           when rising.y then nRising = pre(nRising) + 1; end when;
           when falling.y then nFalling = pre(nFalling) + 1; end when;
           when change1.y then nChange = pre(nChange) + 1; end when;
           when changeStart.y then nStart = pre(nStart) + 1; end when;
           when pre1.y then nPre = pre(nPre) + 1; end when;
           // At the events of u, pre1.y is its value before them.
           when rising.y then preAtRise = if pre1.y then 1 else 0; end when;
           when falling.y then preAtFall = if pre1.y then 1 else 0; end when;
           // At the start (initial() is true at the event there) Pre outputs pre_u_start.
           when initial() then preAtStart = if preTrue.y then 1 else 0; end when;",
    );
    let r = run(&text, 3.0);
    for (name, t, expected) in [
        // Rising edges at 0.25, 1.25, 2.5; falling at 0.75, 1.5; five changes. The change at the
        // start of changeStart is u = false against pre_u_start = true.
        ("nRising", 0.5, 1.0),
        ("nRising", 3.0, 3.0),
        ("nFalling", 1.0, 1.0),
        ("nFalling", 3.0, 2.0),
        ("nChange", 3.0, 5.0),
        ("nStart", 0.1, 1.0),
        ("nStart", 3.0, 6.0),
        ("preAtRise", 0.5, 0.0),
        ("preAtFall", 1.0, 1.0),
        ("preAtStart", 1.0, 1.0),
        // Between events pre(u) is u and the edge outputs are false.
        ("pre1.y", 0.5, 1.0),
        ("pre1.y", 1.0, 0.0),
        ("preTrue.y", 0.1, 0.0),
        ("rising.y", 0.5, 0.0),
        ("change1.y", 0.5, 0.0),
        // Set by u at 0.25, reset by r at 1, set at 1.25, reset at 2, set at 2.5.
        ("ff.Q", 0.1, 0.0),
        ("ff.QI", 0.1, 1.0),
        ("ff.Q", 0.5, 1.0),
        ("ff.Q", 0.9, 1.0),
        ("ff.Q", 1.05, 0.0),
        ("ff.QI", 1.05, 1.0),
        ("ff.Q", 1.2, 0.0),
        ("ff.Q", 1.3, 1.0),
        ("ff.Q", 1.9, 1.0),
        ("ff.Q", 2.1, 0.0),
        ("ff.Q", 2.4, 0.0),
        ("ff.Q", 2.9, 1.0),
        // S always true: Q is true except while R is, when both outputs are false.
        ("both.Q", 0.5, 1.0),
        ("both.Q", 1.05, 0.0),
        ("both.QI", 1.05, 0.0),
        ("both.Q", 1.5, 1.0),
        ("both.QI", 1.5, 0.0),
        ("ls.y", 0.5, 1.0),
        ("ls.y", 1.05, 1.0),
        ("ls.y", 1.2, 0.0),
    ] {
        check(&r, name, t, expected, 0.0);
    }
}

#[test]
fn triggered_trapezoid_zero_crossing_and_terminate_simulation() {
    let text = model(
        "  Modelica.Blocks.Sources.BooleanTable u(table = {0.25, 0.75, 1.25, 1.5});
           Modelica.Blocks.Logical.TriggeredTrapezoid trap(amplitude = 2, rising = 0.5,
             falling = 0.25, offset = 1);
           Modelica.Blocks.Sources.Sine sine(f = 1, phase = 0.3);
           Modelica.Blocks.Logical.ZeroCrossing zc;
           Modelica.Blocks.Sources.ContinuousClock clock;
           Modelica.Blocks.Logical.GreaterThreshold late(threshold = 2.3);
           Modelica.Blocks.Logical.TerminateSimulation stop(terminationText = \"the clock passed 2.3\");
           Integer crossings(start = 0, fixed = true);",
        "  connect(u.y, trap.u); connect(sine.y, zc.u); connect(u.y, zc.enable);
           connect(clock.y, late.u); connect(late.y, stop.condition);
           when zc.y then crossings = pre(crossings) + 1; end when;",
    );
    let r = run(&text, 4.0);
    // The run ends where the clock passes 2.3.
    let end = *r.time().last().unwrap();
    assert!((end - 2.3).abs() < 1e-9, "the run ends at {end}");
    let (_, message) = r.summary.terminated.clone().expect("terminated");
    assert_eq!(message, "the clock passed 2.3");
    // Rises at 4 per second from 0.25 and reaches 3 at 0.75, falls at 8 per second to 1 at 1;
    // rises again from 1.25, turns at 2 at 1.5 and is back at 1 at 1.625.
    for (t, y) in [
        (0.1, 1.0),
        (0.5, 2.0),
        (0.875, 2.0),
        (1.1, 1.0),
        (1.375, 1.5),
        (1.56, 1.52),
        (2.0, 1.0),
    ] {
        check(&r, "trap.y", t, y, 1e-9);
    }
    // sin(2 pi t + 0.3) crosses zero at (k pi - 0.3)/(2 pi): 0.4523 and 0.9523 while u is true
    // on [0.25, 0.75) and [1.25, 1.5), and 1.4523 in the second window.
    let cross = |k: f64| (k * PI - 0.3) / (2.0 * PI);
    assert!(cross(1.0) > 0.25 && cross(2.0) > 0.75 && cross(3.0) > 1.25 && cross(3.0) < 1.5);
    check(&r, "crossings", 0.5, 1.0, 0.0);
    check(&r, "crossings", 1.2, 1.0, 0.0);
    check(&r, "crossings", 2.0, 2.0, 0.0);
}

#[test]
fn discrete_blocks_follow_their_difference_equations() {
    let text = model(
        "  Modelica.Blocks.Sources.Sine sine(f = 0.25);
           Modelica.Blocks.Sources.BooleanPulse pulse(width = 20, period = 1, startTime = 0.3);
           Modelica.Blocks.Discrete.TriggeredSampler ts(y_start = -1);
           Modelica.Blocks.Sources.Constant one(k = 1);
           Modelica.Blocks.Discrete.TransferFunction tf(b = {1}, a = {1, -0.5}, samplePeriod = 0.5);
           Modelica.Blocks.Discrete.TransferFunction tf2(b = {1, 0.5}, a = {1, -0.2, 0.1},
             samplePeriod = 0.5);
           Modelica.Blocks.Sources.RealExpression square(y = time^2);
           Modelica.Blocks.Discrete.FirstOrderHold foh(samplePeriod = 0.5);
           Modelica.Blocks.Discrete.StateSpace ss(A = [0.5], B = [1], C = [2], D = [1],
             samplePeriod = 1);",
        "  connect(sine.y, ts.u); connect(pulse.y, ts.trigger);
           connect(one.y, tf.u); connect(one.y, tf2.u);
           connect(square.y, foh.u); connect(one.y, ss.u[1]);",
    );
    let r = run(&text, 4.0);
    let sine = |t: f64| (2.0 * PI * 0.25 * t).sin();
    for (name, t, expected) in [
        // Sampled at the rising edges 0.3, 1.3, 2.3 and held.
        ("ts.y", 0.2, -1.0),
        ("ts.y", 0.9, sine(0.3)),
        ("ts.y", 1.9, sine(1.3)),
        ("ts.y", 3.9, sine(3.3)),
        // FirstOrderHold of t^2 with T = 0.5: after the tick tk the line through the samples at
        // tk - T and tk, 0 before the second tick.
        ("foh.y", 0.25, 0.0),
        ("foh.y", 0.6, 0.25 + 0.5 * 0.1),
        ("foh.y", 1.2, 1.0 + 1.5 * 0.2),
        ("foh.y", 3.7, 12.25 + 6.5 * 0.2),
        // y(k) = C x(k-1) + D u, x(k) = A x(k-1) + B u from x = 0 at the ticks 0, 1, 2, 3.
        ("ss.y[1]", 0.5, 1.0),
        ("ss.y[1]", 1.5, 3.0),
        ("ss.y[1]", 2.5, 4.0),
        ("ss.y[1]", 3.5, 4.5),
    ] {
        check(&r, name, t, expected, 1e-12);
    }
    // The difference equations by hand: w(k) = (u - a2 w(k-1) - a3 w(k-2))/a1 and
    // y(k) = sum of the numerator (padded to the denominator's size) times w(k), w(k-1), ...
    let difference = |b: &[f64], a: &[f64], ticks: usize| {
        let mut bb = vec![0.0; a.len() - b.len()];
        bb.extend_from_slice(b);
        let mut w = vec![0.0; a.len()];
        let mut y = Vec::new();
        for _ in 0..ticks {
            w.rotate_right(1);
            w[0] = (1.0 - (1..a.len()).map(|i| a[i] * w[i]).sum::<f64>()) / a[0];
            y.push(bb.iter().zip(&w).map(|(b, w)| b * w).sum::<f64>());
        }
        y
    };
    let y1 = difference(&[1.0], &[1.0, -0.5], 8);
    let y2 = difference(&[1.0, 0.5], &[1.0, -0.2, 0.1], 8);
    // The first transfer function is 2 (1 - 0.5^k) at tick k.
    assert!((y1[3] - 2.0 * (1.0 - 0.125)).abs() < 1e-15);
    for k in 0..8 {
        let t = 0.5 * k as f64 + 0.25;
        check(&r, "tf.y", t, y1[k], 1e-12);
        check(&r, "tf2.y", t, y2[k], 1e-12);
    }
}

#[test]
fn multiplexers_keep_sizes_and_order() {
    let text = model(
        "  Modelica.Blocks.Sources.Constant c[7](k = {1, 2, 3, 4, 5, 6, 7});
           Modelica.Blocks.Routing.Multiplex3 mux3(n2 = 2);
           Modelica.Blocks.Routing.Multiplex4 mux4;
           Modelica.Blocks.Routing.Multiplex5 mux5(n5 = 2);
           Modelica.Blocks.Routing.Multiplex6 mux6(n1 = 2);
           Modelica.Blocks.Routing.DeMultiplex3 demux3(n1 = 2, n2 = 1, n3 = 1);
           Modelica.Blocks.Routing.DeMultiplex4 demux4(n4 = 3);
           Modelica.Blocks.Routing.DeMultiplex5 demux5(n3 = 2, n5 = 2);
           Modelica.Blocks.Routing.DeMultiplex6 demux6(n6 = 2);
           Modelica.Blocks.Routing.ExtractSignal ex(nin = 4, nout = 3, extract = {4, 1, 4});
           Modelica.Blocks.Routing.BooleanReplicator br(nout = 2);
           Modelica.Blocks.Routing.IntegerReplicator ir(nout = 3);
           Modelica.Blocks.Sources.BooleanConstant yes;
           Modelica.Blocks.Sources.IntegerConstant five(k = 5);",
        "  connect(c[1].y, mux3.u1[1]); connect(c[2].y, mux3.u2[1]); connect(c[3].y, mux3.u2[2]);
           connect(c[4].y, mux3.u3[1]);
           connect(c[4].y, mux4.u1[1]); connect(c[3].y, mux4.u2[1]); connect(c[2].y, mux4.u3[1]);
           connect(c[1].y, mux4.u4[1]);
           connect(c[1].y, mux5.u1[1]);
           connect(c[1].y, mux5.u2[1]); connect(c[2].y, mux5.u3[1]); connect(c[3].y, mux5.u4[1]);
           connect(c[4].y, mux5.u5[1]); connect(c[5].y, mux5.u5[2]);
           connect(c[7].y, mux6.u1[1]); connect(c[6].y, mux6.u1[2]); connect(c[5].y, mux6.u2[1]);
           connect(c[4].y, mux6.u3[1]); connect(c[3].y, mux6.u4[1]); connect(c[2].y, mux6.u5[1]);
           connect(c[1].y, mux6.u6[1]);
           connect(mux3.y, demux3.u); connect(mux5.y, demux4.u); connect(mux6.y, demux5.u);
           connect(mux6.y, demux6.u); connect(mux4.y, ex.u);
           connect(yes.y, br.u); connect(five.y, ir.u);",
    );
    let r = run(&text, 0.1);
    let expect = |name: &str, values: &[f64]| {
        for (i, v) in values.iter().enumerate() {
            check(&r, &format!("{name}[{}]", i + 1), 0.05, *v, 0.0);
        }
        let next = format!("{name}[{}]", values.len() + 1);
        assert!(r.column(&next).is_none(), "{next} exists");
    };
    expect("mux3.y", &[1.0, 2.0, 3.0, 4.0]);
    expect("mux4.y", &[4.0, 3.0, 2.0, 1.0]);
    expect("mux5.y", &[1.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    expect("mux6.y", &[7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]);
    expect("demux3.y1", &[1.0, 2.0]);
    expect("demux3.y2", &[3.0]);
    expect("demux3.y3", &[4.0]);
    expect("demux4.y1", &[1.0]);
    expect("demux4.y2", &[1.0]);
    expect("demux4.y4", &[3.0, 4.0, 5.0]);
    expect("demux5.y2", &[6.0]);
    expect("demux5.y3", &[5.0, 4.0]);
    expect("demux5.y4", &[3.0]);
    expect("demux5.y5", &[2.0, 1.0]);
    expect("demux6.y5", &[3.0]);
    expect("demux6.y6", &[2.0, 1.0]);
    expect("ex.y", &[1.0, 4.0, 1.0]);
    expect("br.y", &[1.0, 1.0]);
    expect("ir.y", &[5.0, 5.0, 5.0]);
}

#[test]
fn der_lim_integrator_critical_damping_and_slew_rate_limiter() {
    let text = model(
        "  Modelica.Blocks.Sources.Sine sine(f = 0.5, amplitude = 2);
           Modelica.Blocks.Continuous.Der der1;
           Modelica.Blocks.Continuous.LimIntegrator lim(k = 2, outMax = 1.5, outMin = -0.5);
           Modelica.Blocks.Sources.Constant one(k = 1);
           Modelica.Blocks.Continuous.CriticalDamping cd(n = 2, f = 1, normalized = false);
           Modelica.Blocks.Continuous.CriticalDamping cdn(n = 3, f = 1, k = 2);
           Modelica.Blocks.Sources.Step step(startTime = 0.5);
           Modelica.Blocks.Nonlinear.SlewRateLimiter slew(Rising = 2, Falling = -4, Td = 1e-4);
           Modelica.Blocks.Sources.Step down(height = -1, offset = 1, startTime = 2);",
        "  connect(sine.y, der1.u); connect(sine.y, lim.u); connect(one.y, cd.u); connect(one.y, cdn.u);
           connect(step.y, slew.u);",
    );
    let r = run(&text, 4.0);
    let w = 2.0 * PI;
    for t in [0.25, 1.0, 2.5] {
        check(&r, "der1.y", t, 2.0 * PI * (PI * t).cos(), 1e-7);
        check(&r, "cd.y", t, 1.0 - (-w * t).exp() * (1.0 + w * t), 1e-7);
    }
    // Three lags of w = 2 pi/sqrt(2^(1/3) - 1): y = 2 (1 - exp(-w t)(1 + w t + (w t)^2/2)).
    let w3 = 2.0 * PI / (2f64.powf(1.0 / 3.0) - 1.0).sqrt();
    for t in [0.05, 0.1, 0.3] {
        let x = w3 * t;
        check(&r, "cdn.y", t, 2.0 * (1.0 - (-x).exp() * (1.0 + x + x * x / 2.0)), 1e-7);
    }
    // The integral of 4 sin(pi t) is 4 (1 - cos(pi t))/pi; it reaches 1.5 where
    // cos(pi t) = 1 - 1.5 pi/4 and stays there until the input turns negative at t = 1, falls as
    // 1.5 - 4 (1 + cos(pi t))/pi and stays at -0.5 from where that reaches it until t = 2.
    let reach_top = (1.0 - 1.5 * PI / 4.0).acos() / PI;
    check(&r, "lim.y", 0.5, 4.0 * (1.0 - (0.5 * PI).cos()) / PI, 1e-7);
    assert!(reach_top > 0.5 && reach_top < 0.6);
    check(&r, "lim.y", 0.8, 1.5, 1e-9);
    check(&r, "lim.y", 1.5, 1.5 - 4.0 / PI, 1e-7);
    check(&r, "lim.y", 1.9, -0.5, 1e-9);
    check(&r, "lim.y", 2.5, -0.5 + 4.0 / PI, 1e-7);
    // The slew rate limiter follows the step at the largest rising rate 2 from t = 0.5, then
    // approaches 1 with the time constant Td.
    for (t, y) in [(0.25, 0.0), (0.6, 0.2), (0.9, 0.8), (1.5, 1.0)] {
        check(&r, "slew.y", t, y, 1e-7);
    }
}

#[test]
fn multi_input_math_means_and_conversions() {
    let text = model(
        "  Modelica.Blocks.Sources.Sine sine(f = 0.5, amplitude = 2);
           Modelica.Blocks.Sources.Constant a(k = 3);
           Modelica.Blocks.Sources.Constant b(k = -2);
           Modelica.Blocks.Math.MultiSum sum3(nu = 3, k = {1, 2, 3});
           Modelica.Blocks.Math.MultiSum none;
           Modelica.Blocks.Math.MultiProduct prod3(nu = 3);
           Modelica.Blocks.Math.MultiProduct empty;
           Modelica.Blocks.Math.MinMax mm(nu = 3);
           Modelica.Blocks.Math.Mean mean(f = 0.5);
           Modelica.Blocks.Math.Mean meanPos(f = 1, yGreaterOrEqualZero = true);
           Modelica.Blocks.Math.RootMeanSquare rms(f = 0.5);
           Modelica.Blocks.Sources.Sine late(f = 0.5, amplitude = 2, startTime = 0.25);
           Modelica.Blocks.Math.Sign sign1;
           Modelica.Blocks.Math.RealToBoolean r2b(threshold = 1);
           Modelica.Blocks.Math.IntegerToBoolean i2b(threshold = 2);
           Modelica.Blocks.Sources.IntegerStep istep(height = 2, startTime = 1);
           Modelica.Blocks.Math.RectangularToPolar r2p;
           Modelica.Blocks.Math.PolarToRectangular p2r;
           Modelica.Blocks.Sources.RealExpression shifted(y = 1 + sine.y);",
        "  connect(a.y, sum3.u[1]); connect(b.y, sum3.u[2]); connect(sine.y, sum3.u[3]);
           connect(a.y, prod3.u[1]); connect(b.y, prod3.u[2]); connect(sine.y, prod3.u[3]);
           connect(a.y, mm.u[1]); connect(b.y, mm.u[2]); connect(sine.y, mm.u[3]);
           connect(shifted.y, mean.u); connect(sine.y, meanPos.u); connect(sine.y, rms.u);
           connect(late.y, sign1.u); connect(late.y, r2b.u); connect(istep.y, i2b.u);
           connect(a.y, r2p.u_re); connect(b.y, r2p.u_im);
           connect(r2p.y_abs, p2r.u_abs); connect(r2p.y_arg, p2r.u_arg);",
    );
    let r = run(&text, 4.5);
    let sine = |t: f64| 2.0 * (PI * t).sin();
    for (name, t, expected) in [
        ("sum3.y", 0.5, 3.0 - 4.0 + 3.0 * 2.0),
        ("none.y", 0.5, 0.0),
        ("prod3.y", 0.25, -6.0 * sine(0.25)),
        ("empty.y", 0.5, 1.0),
        ("mm.yMax", 0.5, 3.0),
        ("mm.yMin", 0.5, -2.0),
        ("mm.yMin", 1.5, -2.0),
        ("mm.yMax", 3.5, 3.0),
        // Means over the periods [0, 2) and [2, 4): 0 during the first, then 1 (the sine has no
        // mean); the mean over [0, 1) of 2 sin(pi t) is 4/pi, over [1, 2) it is -4/pi, held at 0.
        ("mean.y", 1.0, 0.0),
        ("mean.y", 2.5, 1.0),
        ("mean.y", 4.25, 1.0),
        ("meanPos.y", 1.5, 4.0 / PI),
        ("meanPos.y", 2.5, 0.0),
        ("rms.y", 1.0, 0.0),
        ("rms.y", 3.0, 2f64.sqrt()),
        // late is 0 before 0.25, then 2 sin(pi (t - 0.25)): sqrt(2) at 0.5, -sqrt(2) at 1.5.
        ("sign1.y", 0.1, 0.0),
        ("sign1.y", 0.5, 1.0),
        ("sign1.y", 1.5, -1.0),
        ("r2b.y", 0.1, 0.0),
        ("r2b.y", 0.5, 1.0),
        ("r2b.y", 1.5, 0.0),
        ("i2b.y", 0.5, 0.0),
        ("i2b.y", 1.5, 1.0),
        ("r2p.y_abs", 0.5, 13f64.sqrt()),
        ("r2p.y_arg", 0.5, (-2f64).atan2(3.0)),
        ("p2r.y_re", 0.5, 3.0),
        ("p2r.y_im", 0.5, -2.0),
    ] {
        check(&r, name, t, expected, 1e-8);
    }
}

#[test]
fn butterworth_step_responses_and_the_angle_and_power_blocks() {
    let text = model(
        "  Modelica.Blocks.Sources.Constant one(k = 1);
           Modelica.Blocks.Continuous.LowpassButterworth b1(n = 1, f = 0.5);
           Modelica.Blocks.Continuous.LowpassButterworth b2(n = 2, f = 0.5);
           Modelica.Blocks.Continuous.LowpassButterworth b3(n = 3, f = 0.5);
           Modelica.Blocks.Continuous.LowpassButterworth steady(n = 4, f = 0.5,
             initType = Modelica.Blocks.Types.Init.SteadyState);
           Modelica.Blocks.Sources.ContinuousClock clock(offset = -7);
           Modelica.Blocks.Math.Gain g(k = 3);
           Modelica.Blocks.Math.WrapAngle wrap;
           Modelica.Blocks.Math.WrapAngle wrapPos(positiveRange = true);
           Modelica.Blocks.Math.Exponentiation cube(exponent = 3);",
        "  connect(one.y, b1.u); connect(one.y, b2.u); connect(one.y, b3.u); connect(one.y, steady.u);
           connect(clock.y, g.u); connect(g.y, wrap.u); connect(g.y, wrapPos.u);
           connect(clock.y, cube.u);",
    );
    let r = run(&text, 4.0);
    // w = pi. Order 2: w^2/(s^2 + sqrt(2) w s + w^2). Order 3: w^3/((s + w)(s^2 + w s + w^2)),
    // whose step response is 1 - exp(-w t) - (w/wd) exp(-w t/2) sin(wd t), wd = w sqrt(3)/2.
    let w = PI;
    let z = 0.5f64.sqrt();
    let wd2 = w * (1.0 - z * z).sqrt();
    let wd3 = w * 3f64.sqrt() / 2.0;
    for t in [0.5, 1.0, 2.0, 4.0] {
        check(&r, "b1.y", t, 1.0 - (-w * t).exp(), 1e-7);
        let y2 = 1.0 - (-z * w * t).exp() * ((wd2 * t).cos() + z / (1.0 - z * z).sqrt() * (wd2 * t).sin());
        check(&r, "b2.y", t, y2, 1e-7);
        let y3 = 1.0 - (-w * t).exp() - w / wd3 * (-w * t / 2.0).exp() * (wd3 * t).sin();
        check(&r, "b3.y", t, y3, 1e-7);
        check(&r, "steady.y", t, 1.0, 1e-9);
    }
    // The angle 3 (t - 7) wrapped into (-pi, pi] and into [0, 2 pi).
    for t in [1.0, 2.0, 3.0, 3.5] {
        let u = 3.0 * (t - 7.0);
        check(&r, "wrap.y", t, u - 2.0 * PI * ((u - PI) / (2.0 * PI)).ceil(), 1e-9);
        check(&r, "wrapPos.y", t, u.rem_euclid(2.0 * PI), 1e-9);
        check(&r, "cube.y", t, (t - 7.0).powi(3), 1e-12);
    }
}

#[test]
fn pade_delay_logical_delay_and_triggered_max() {
    let text = model(
        "  Modelica.Blocks.Sources.Constant one(k = 1);
           Modelica.Blocks.Nonlinear.PadeDelay p1(delayTime = 0.5);
           Modelica.Blocks.Nonlinear.PadeDelay p2(delayTime = 0.5, n = 2);
           Modelica.Blocks.Sources.BooleanTable u(table = {0.5, 1, 1.2, 2.5});
           Modelica.Blocks.Logical.LogicalDelay ld(delayTime = 0.3);
           Modelica.Blocks.Sources.Sine sine(f = 0.5, phase = 0.2);
           Modelica.Blocks.Sources.SampleTrigger trigger(period = 0.3, startTime = 0.1);
           Modelica.Blocks.Discrete.TriggeredMax tm;",
        "  connect(one.y, p1.u); connect(one.y, p2.u); connect(u.y, ld.u);
           connect(sine.y, tm.u); connect(trigger.y, tm.trigger);",
    );
    let r = run(&text, 3.0);
    // Step responses with T = 0.5: [1/1] is (1 - s T/2)/(1 + s T/2), so y = 1 - 2 exp(-2 t/T);
    // [2/2] is (1 - s T/2 + (s T)^2/12)/(1 + s T/2 + (s T)^2/12), so
    // y = 1 - 4 sqrt(3) exp(-3 t/T) sin(sqrt(3) t/T).
    let t_d = 0.5;
    for t in [0.1, 0.3, 1.0, 2.0] {
        check(&r, "p1.y", t, 1.0 - 2.0 * (-2.0 * t / t_d).exp(), 1e-7);
        let y2 = 1.0 - 4.0 * 3f64.sqrt() * (-3.0 * t / t_d).exp() * (3f64.sqrt() * t / t_d).sin();
        check(&r, "p2.y", t, y2, 1e-7);
    }
    // u is true on [0.5, 1) and [1.2, 2.5): y1 falls 0.3 after u (not at 1.3, since u rose again
    // at 1.2), y2 rises 0.3 after u.
    for (t, y1, y2) in [
        (0.4, 0.0, 0.0),
        (0.6, 1.0, 0.0),
        (0.9, 1.0, 1.0),
        (1.1, 1.0, 0.0),
        (1.4, 1.0, 0.0),
        (1.6, 1.0, 1.0),
        (2.7, 1.0, 0.0),
        (2.9, 0.0, 0.0),
    ] {
        check(&r, "ld.y1", t, y1, 0.0);
        check(&r, "ld.y2", t, y2, 0.0);
    }
    // The largest |sin(pi t + 0.2)| at the ticks 0.1, 0.4, 0.7, ...: the tick at 0.4 is the
    // closest to the peak at 0.4363, and later ticks repeat these values every 2 s.
    let s = |t: f64| (PI * t + 0.2).sin().abs();
    check(&r, "tm.y", 0.05, 0.0, 0.0);
    check(&r, "tm.y", 0.2, s(0.1), 1e-12);
    check(&r, "tm.y", 2.9, s(0.4), 1e-12);
    assert!((0..10).map(|k| s(0.1 + 0.3 * k as f64)).all(|v| v <= s(0.4) + 1e-12));
}

#[test]
fn math_boolean_blocks_reduce_any_number_of_inputs() {
    // Three inputs: a on [0.5, 2), b on [1, 3), c on [1.5, 2.5).
    let text = model(
        "  Modelica.Blocks.Sources.BooleanTable a(table = {0.5, 2});
           Modelica.Blocks.Sources.BooleanTable b(table = {1, 3});
           Modelica.Blocks.Sources.BooleanTable c(table = {1.5, 2.5});
           Modelica.Blocks.MathBoolean.And and3(nu = 3);
           Modelica.Blocks.MathBoolean.Or or3(nu = 3);
           Modelica.Blocks.MathBoolean.Xor xor3(nu = 3);
           Modelica.Blocks.MathBoolean.Nand nand3(nu = 3);
           Modelica.Blocks.MathBoolean.Nor nor3(nu = 3);
           Modelica.Blocks.MathBoolean.And andNone;
           Modelica.Blocks.MathBoolean.OnDelay onDelay(delayTime = 0.75);
           Modelica.Blocks.MathBoolean.RisingEdge rising;
           Integer nRising(start = 0, fixed = true);",
        "  connect(a.y, and3.u[1]); connect(b.y, and3.u[2]); connect(c.y, and3.u[3]);
           connect(a.y, or3.u[1]); connect(b.y, or3.u[2]); connect(c.y, or3.u[3]);
           connect(a.y, xor3.u[1]); connect(b.y, xor3.u[2]); connect(c.y, xor3.u[3]);
           connect(a.y, nand3.u[1]); connect(b.y, nand3.u[2]); connect(c.y, nand3.u[3]);
           connect(a.y, nor3.u[1]); connect(b.y, nor3.u[2]); connect(c.y, nor3.u[3]);
           connect(a.y, onDelay.u); connect(c.y, rising.u);
           when rising.y then nRising = pre(nRising) + 1; end when;",
    );
    let r = run(&text, 3.5);
    // Number of true inputs: 0, 1, 2, 3, 2, 1, 0 on the intervals split at 0.5, 1, 1.5, 2, 2.5, 3.
    for (t, n_true) in [
        (0.25, 0),
        (0.75, 1),
        (1.25, 2),
        (1.75, 3),
        (2.25, 2),
        (2.75, 1),
        (3.25, 0),
    ] {
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        check(&r, "and3.y", t, flag(n_true == 3), 0.0);
        check(&r, "or3.y", t, flag(n_true > 0), 0.0);
        check(&r, "xor3.y", t, flag(n_true == 1), 0.0);
        check(&r, "nand3.y", t, flag(n_true != 3), 0.0);
        check(&r, "nor3.y", t, flag(n_true == 0), 0.0);
        check(&r, "andNone.y", t, 0.0, 0.0);
    }
    // a rises at 0.5 and stays true until 2: the on-delay output is true on [1.25, 2).
    for (t, y) in [(0.75, 0.0), (1.2, 0.0), (1.3, 1.0), (1.9, 1.0), (2.1, 0.0)] {
        check(&r, "onDelay.y", t, y, 0.0);
    }
    check(&r, "nRising", 3.5, 1.0, 0.0);
}

#[test]
fn exponentials_sinc_rectified_mean_integer_change_and_table_2dv() {
    let text = model(
        "  Modelica.Blocks.Sources.Exponentials ex(outMax = 2, riseTime = 1, riseTimeConst = 0.5,
             fallTimeConst = 0.25, startTime = 0.5);
           Modelica.Blocks.Sources.Sinc sinc(f = 0.5, startTime = 0.5, amplitude = 3);
           Modelica.Blocks.Sources.Sine sine(f = 1);
           Modelica.Blocks.Math.RectifiedMean rm(f = 1);
           Modelica.Blocks.Sources.IntegerStep is(startTime = 1.3);
           Modelica.Blocks.Math.IntegerChange ic;
           Integer n(start = 0, fixed = true);
           Modelica.Blocks.Sources.ContinuousClock u;
           Modelica.Blocks.Sources.ContinuousClock u2(offset = -1);
           Modelica.Blocks.Tables.CombiTable2Dv t2(n = 2,
             table = [0, 0, 1, 2; 0, 0, 1, 4; 2, 2, 3, 10]);",
        "  connect(sine.y, rm.u); connect(is.y, ic.u);
           when ic.y then n = pre(n) + 1; end when;
           connect(u.y, t2.u1[1]); connect(u2.y, t2.u2[1]);
           connect(u2.y, t2.u1[2]); connect(u.y, t2.u2[2]);",
    );
    let r = run(&text, 3.0);
    let rise = |t: f64| 2.0 * (1.0 - (-(t - 0.5) / 0.5f64).exp());
    let x = |t: f64| PI * (t - 0.5);
    for (name, t, expected) in [
        ("ex.y", 0.25, 0.0),
        ("ex.y", 1.0, rise(1.0)),
        ("ex.y", 2.0, rise(1.5) * (-0.5 / 0.25f64).exp()),
        ("sinc.y", 0.25, 0.0),
        ("sinc.y", 0.5, 3.0),
        ("sinc.y", 1.0, 3.0 * x(1.0).sin() / x(1.0)),
        ("sinc.y", 2.0, 3.0 * x(2.0).sin() / x(2.0)),
        // The mean of |sin(2 pi t)| over a period is 2/pi, output from the end of the first.
        ("rm.y", 0.5, 0.0),
        ("rm.y", 1.5, 2.0 / PI),
        ("n", 1.0, 0.0),
        ("n", 2.0, 1.0),
        // y[1] at (t, t - 1) and y[2] at (t - 1, t) in the table of the CombiTable2Ds test: at
        // t = 3 the lines through the last two points continue, 10 + 3 and 10 + 7.
        ("t2.y[1]", 1.0, 1.0),
        ("t2.y[2]", 1.0, 1.0),
        ("t2.y[1]", 3.0, 13.0),
        ("t2.y[2]", 3.0, 17.0),
    ] {
        check(&r, name, t, expected, 1e-8);
    }
}

#[test]
fn math_integer_sums_products_and_triggered_add() {
    let text = model(
        "  Modelica.Blocks.Sources.IntegerStep a(height = 2, offset = 1, startTime = 1);
           Modelica.Blocks.Sources.IntegerConstant b(k = -3);
           Modelica.Blocks.MathInteger.Sum s(nu = 2);
           Modelica.Blocks.MathInteger.Product p(nu = 2);
           Modelica.Blocks.MathInteger.Sum none;
           Modelica.Blocks.MathInteger.Product empty;
           Modelica.Blocks.MathInteger.TriggeredAdd ta(y_start = 10);
           Modelica.Blocks.Sources.SampleTrigger trigger(period = 0.5, startTime = 0.25);",
        "  connect(a.y, s.u[1]); connect(b.y, s.u[2]); connect(a.y, p.u[1]); connect(b.y, p.u[2]);
           connect(a.y, ta.u); connect(trigger.y, ta.trigger);",
    );
    let r = run(&text, 2.0);
    // a is 1 before t = 1 and 3 after; ta adds it at 0.25, 0.75, 1.25 and 1.75.
    for (name, t, expected) in [
        ("s.y", 0.5, -2.0),
        ("s.y", 1.5, 0.0),
        ("p.y", 0.5, -3.0),
        ("p.y", 1.5, -9.0),
        ("none.y", 0.5, 0.0),
        ("empty.y", 0.5, 1.0),
        ("ta.y", 0.1, 10.0),
        ("ta.y", 0.5, 11.0),
        ("ta.y", 1.0, 12.0),
        ("ta.y", 1.5, 15.0),
        ("ta.y", 2.0, 18.0),
    ] {
        check(&r, name, t, expected, 0.0);
    }
}

#[test]
fn multi_switch_and_the_running_mean_and_variance() {
    // a is true on [0.5, 2), b on [1, 3); the clock c is 1 + t, whose mean since 0 is 1 + t/2.
    let text = model(
        "  Modelica.Blocks.Sources.BooleanTable a(table = {0.5, 2});
           Modelica.Blocks.Sources.BooleanTable b(table = {1, 3});
           Modelica.Blocks.Math.MultiSwitch ms(nu = 2, expr = {1, 2}, y_default = -1);
           Modelica.Blocks.Math.MultiSwitch none(y_default = 4);
           Modelica.Blocks.Sources.ContinuousClock c(offset = 1);
           Modelica.Blocks.Math.ContinuousMean cm;
           Modelica.Blocks.Sources.ContinuousClock t;
           Modelica.Blocks.Math.Variance variance;
           Modelica.Blocks.Math.StandardDeviation sd;",
        "  connect(a.y, ms.u[1]); connect(b.y, ms.u[2]); connect(c.y, cm.u);
           connect(t.y, variance.u); connect(t.y, sd.u);",
    );
    let r = run(&text, 3.5);
    for (t, y) in [(0.25, -1.0), (0.75, 1.0), (1.5, 1.0), (2.5, 2.0), (3.25, -1.0)] {
        check(&r, "ms.y", t, y, 0.0);
    }
    check(&r, "none.y", 1.0, 4.0, 0.0);
    // For u = t the running mean is t/2 and the variance (1/t) times the integral of
    // (s - s/2)^2 over [0, t], which is t^2/12.
    for t in [0.5, 1.0, 3.5] {
        check(&r, "cm.y", t, 1.0 + t / 2.0, 1e-9);
        check(&r, "variance.y", t, t * t / 12.0, 1e-8);
        check(&r, "sd.y", t, t / 12f64.sqrt(), 1e-8);
    }
}

#[test]
fn tables_whose_abscissas_decrease_are_refused() {
    for (block, message) in [
        (
            "Modelica.Blocks.Sources.CombiTimeTable t(table = [0, 0; 2, 1; 1, 3]);",
            "the times in the first column of the table must not decrease",
        ),
        (
            "Modelica.Blocks.Sources.BooleanTable t(table = {1, 0.5});",
            "the times in the first column of the table must not decrease",
        ),
        (
            "Modelica.Blocks.Tables.CombiTable1Ds t(table = [0, 0; 2, 1; 1, 3]);
             Modelica.Blocks.Sources.Constant c; equation connect(c.y, t.u);",
            "the abscissas in the first column of the table must not decrease",
        ),
        (
            "Modelica.Blocks.Tables.CombiTable2Ds t(table = [0, 0, 1; 0, 1, 2; -1, 3, 4]);
             Modelica.Blocks.Sources.Constant c; equation connect(c.y, t.u1); connect(c.y, t.u2);",
            "the grids in the first column and the first row of the table must not decrease",
        ),
    ] {
        let mut m = compile(&format!("model M\n  {block}\nend M;\n"));
        let settings = RunSettings {
            stop: Some(1.0),
            ..RunSettings::default()
        };
        let error = m.simulate(&settings).err().unwrap_or_else(|| panic!("{block} runs"));
        assert!(error.to_string().contains(message), "{block}: {error}");
    }
}
