//! The continuous blocks against closed-form step responses, the controllers in closed loops
//! against hand-derived responses, and the nonlinear blocks against their definitions.

use super::*;

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
