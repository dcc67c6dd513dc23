//! Delays, smoothing, trend and the test inputs against their defining equations.

use super::*;

/// SMOOTH3 and DELAY3 of a unit step from 0: 1 - e^(-3t/tau)(1 + 3t/tau + (3t/tau)^2/2).
fn third_order(t: f64, tau: f64) -> f64 {
    let a = 3.0 * t / tau;
    1.0 - (-a).exp() * (1.0 + a + a * a / 2.0)
}

#[test]
fn delays_and_smooths_of_a_step_match_their_closed_forms() {
    let mut model = compile(
        "Steps",
        Some(
            "model Steps
  import SystemDynamics.Functions;
  Functions.Smooth1 s1(u = 1, averagingTime = 2, steadyStart = false, y_start = 0);
  Functions.Smooth3 s3(u = 1, averagingTime = 2, steadyStart = false, y_start = 0);
  Functions.Delay1 d1(u = 1, delayTime = 2, steadyStart = false, y_start = 0);
  Functions.Delay3 d3(u = 1, delayTime = 2, steadyStart = false, y_start = 0);
  Functions.Smooth1 steady(u = 3, averagingTime = 2);
  Functions.Delay3 steady3(u = 3, delayTime = 2);
end Steps;
",
        ),
    );
    let result = run(&mut model, 10.0, None);
    for t in [0.0, 0.5, 1.0, 2.0, 4.0, 10.0] {
        let first = 1.0 - (-t / 2.0f64).exp();
        check(&result, "s1.y", t, first, 1e-8);
        check(&result, "d1.y", t, first, 1e-8);
        check(&result, "s3.y", t, third_order(t, 2.0), 1e-8);
        check(&result, "d3.y", t, third_order(t, 2.0), 1e-8);
        check(&result, "steady.y", t, 3.0, 1e-12);
        check(&result, "steady3.y", t, 3.0, 1e-12);
    }
    // The material in each stage of the material delay is its outflow times delayTime/3, and
    // the outflows of a unit step are the Erlang distributions of orders 1, 2 and 3.
    for t in [0.5, 2.0, 4.0] {
        let a: f64 = 3.0 * t / 2.0;
        let stages = [1.0 - (-a).exp(), 1.0 - (-a).exp() * (1.0 + a), third_order(t, 2.0)];
        for (name, r) in ["d3.L1", "d3.L2", "d3.L3"].iter().zip(stages) {
            check(&result, name, t, 2.0 / 3.0 * r, 1e-8);
        }
    }
}

#[test]
fn smooth_and_smooth3_reproduce_the_published_euler_values() {
    // u = -1 + STEP(5, 5), averaging time 2 + STEP(2, 10), Euler with DT = 0.25: the values
    // system dynamics tools report (to six digits) for SMOOTH, SMOOTH with the initial value 5,
    // SMOOTH3 and SMOOTH3 with the initial value 5, the Euler iterates of their equations.
    let mut model = compile(
        "Smooth",
        Some(
            "model Smooth
  import SystemDynamics.Functions;
  Real u = -1 + Functions.STEP(5, 5);
  Real tau = 2 + Functions.STEP(2, 10);
  Functions.Smooth1 s(u = u, averagingTime = tau);
  Functions.Smooth1 si(u = u, averagingTime = tau, steadyStart = false, y_start = 5);
  Functions.Smooth3 s3(u = u, averagingTime = tau);
  Functions.Smooth3 s3i(u = u, averagingTime = tau, steadyStart = false, y_start = 5);
  annotation(experiment(StopTime = 20), __eqm(solver = \"euler\", step = 0.25));
end Smooth;
",
        ),
    );
    // The annotation chooses Euler's method with the step 0.25, and the rows on its grid.
    let result = model.simulate(&RunSettings::default()).expect("runs");
    assert_eq!(result.len(), 81);
    for (t, values) in [
        (0.0, [-1.0, 5.0, -1.0, 5.0]),
        (5.0, [-1.0, -0.584747, -1.0, -0.959601]),
        (5.25, [-0.375, -0.011654, -1.0, -0.972331]),
        (6.0, [1.06909, 1.31251, -0.241943, -0.233253]),
        (10.0, [3.65396, 3.6827, 3.96633, 3.96635]),
        (20.0, [3.97382, 3.97599, 3.99998, 3.99998]),
    ] {
        for (name, value) in ["s.y", "si.y", "s3.y", "s3i.y"].iter().zip(values) {
            check(&result, name, t, value, 1e-5);
        }
    }
}

#[test]
fn a_fixed_delay_shifts_its_input() {
    let mut model = compile(
        "Fixed",
        Some(
            "model Fixed
  import SystemDynamics.Functions;
  Functions.DelayFixed d(u = sin(time), delayTime = 1.5);
  Functions.DelayFixed di(u = sin(time), delayTime = 1.5, steadyStart = false, y_start = 7);
end Fixed;
",
        ),
    );
    let result = run(&mut model, 10.0, None);
    for t in [0.0, 1.0, 1.49] {
        check(&result, "d.y", t, 0.0, 1e-12);
        check(&result, "di.y", t, 7.0, 1e-12);
    }
    // At output rows (every 0.02), where no interpolation between rows blurs the value.
    for t in [1.5, 2.0, 4.0, 7.24, 10.0] {
        check(&result, "d.y", t, (t - 1.5f64).sin(), 1e-6);
        check(&result, "di.y", t, (t - 1.5f64).sin(), 1e-6);
    }
}

#[test]
fn the_trend_of_an_exponential_is_its_growth_rate() {
    // u = e^(0.1 t) with averaging time 5: started with the trend 0.1 the average is
    // u/(1 + 0.5) at all times and the trend stays 0.1; started with 0 it follows
    // average = u/1.5 + (1 - 1/1.5) e^(-t/5).
    let mut model = compile(
        "Growth",
        Some(
            "model Growth
  import SystemDynamics.Functions;
  Functions.Trend tr(u = exp(0.1*time), averagingTime = 5, initialTrend = 0.1);
  Functions.Trend tr0(u = exp(0.1*time), averagingTime = 5);
end Growth;
",
        ),
    );
    let result = run(&mut model, 20.0, None);
    for t in [0.0, 5.0, 10.0, 20.0] {
        check(&result, "tr.y", t, 0.1, 1e-8);
        let u = (0.1 * t).exp();
        let average = u / 1.5 + (1.0 - 1.0 / 1.5) * (-t / 5.0f64).exp();
        check(&result, "tr0.y", t, (u - average) / (average * 5.0), 1e-8);
    }
}

#[test]
fn step_ramp_and_pulse_blocks_switch_at_exact_times() {
    // A pulse of width 0.01 every 3 from t = 1, integrated by an adaptive solver that takes
    // long steps: each pulse is a pair of time events and delivers its volume exactly.
    let mut model = compile(
        "Inputs",
        Some(
            "model Inputs
  import SystemDynamics.Functions;
  Functions.Step st(height = 3, startTime = 2);
  Functions.Ramp r(slope = 2, startTime = 1, endTime = 3);
  Functions.Pulse p(volume = 2, firstTime = 1, interval = 3, width = 0.01);
  Real S(start = 0, fixed = true);
  Real P(start = 0, fixed = true);
equation
  der(S) = st.y;
  der(P) = p.y;
end Inputs;
",
        ),
    );
    let result = run(&mut model, 12.0, None);
    for (t, step, ramp, pulses) in [
        (0.5, 0.0, 0.0, 0.0),
        (1.5, 0.0, 1.0, 1.0),
        (2.5, 3.0, 3.0, 1.0),
        (3.5, 3.0, 4.0, 1.0),
        (9.5, 3.0, 4.0, 3.0),
        (12.0, 3.0, 4.0, 4.0),
    ] {
        check(&result, "st.y", t, step, 0.0);
        check(&result, "r.y", t, ramp, 1e-12);
        check(&result, "S", t, 3.0 * (t - 2.0f64).max(0.0), 1e-9);
        check(&result, "P", t, 2.0 * pulses, 1e-9);
    }
    check(&result, "p.y", 4.005, 200.0, 0.0);
}

#[test]
fn step_ramp_and_pulse_functions_in_a_fixed_step_run() {
    // With Euler and DT = 0.25 a pulse of width DT puts its whole volume into a stock in one
    // step, as system dynamics tools do.
    let mut model = compile(
        "Functions",
        Some(
            "model Functions
  import SystemDynamics.Functions.{STEP, RAMP, PULSE};
  Real S(start = 0, fixed = true);
  Real R(start = 0, fixed = true);
  Real P(start = 0, fixed = true);
equation
  der(S) = STEP(3, 2);
  der(R) = RAMP(2, 1, 3);
  der(P) = PULSE(2, 1, 3, 0.25);
end Functions;
",
        ),
    );
    let result = run(&mut model, 12.0, Some((Method::Euler, 0.25)));
    // Euler sums h*f(t_i) over the steps before t.
    let euler = |t: f64, f: &dyn Fn(f64) -> f64| {
        (0..(t / 0.25).round() as usize)
            .map(|i| 0.25 * f(0.25 * i as f64))
            .sum::<f64>()
    };
    let step = |t: f64| if t >= 2.0 { 3.0 } else { 0.0 };
    let ramp = |t: f64| {
        if t < 1.0 {
            0.0
        } else if t < 3.0 {
            2.0 * (t - 1.0)
        } else {
            4.0
        }
    };
    for t in [1.0, 2.5, 4.0, 7.75, 12.0] {
        check(&result, "S", t, euler(t, &step), 1e-12);
        check(&result, "R", t, euler(t, &ramp), 1e-12);
    }
    for (t, pulses) in [(1.0, 0.0), (1.25, 1.0), (4.0, 1.0), (4.25, 2.0), (12.0, 4.0)] {
        check(&result, "P", t, 2.0 * pulses, 1e-12);
    }
}

#[test]
fn a_graph_converter_interpolates_clamps_and_extrapolates() {
    // The catches per predator as a function of the prey: 11 points.
    let mut model = compile(
        "Graph",
        Some(
            "model Graph
  import SystemDynamics.Converters;
  parameter Real fpr[11, 2] = [0, 0; 1, 0.9879; 2, 1.9830; 3, 2.4116; 4, 2.7167; 5, 2.8620;
    6, 2.9419; 7, 2.9823; 8, 2.9910; 9, 2.9970; 10, 3.0000];
  Converters.GraphConverter lin(table = fpr, u = time - 1);
  Converters.GraphConverter ext(table = fpr, u = time - 1, extrapolation = Converters.Extrapolation.linear);
  Converters.GraphConverter stp(table = fpr, u = time - 1, interpolation = Converters.Interpolation.step);
end Graph;
",
        ),
    );
    let result = run(&mut model, 13.0, Some((Method::Euler, 0.25)));
    for (t, lin, ext, stp) in [
        (0.0, 0.0, -0.9879, 0.0),
        (1.0, 0.0, 0.0, 0.0),
        (3.5, (1.9830 + 2.4116) / 2.0, (1.9830 + 2.4116) / 2.0, 1.9830),
        (4.0, 2.4116, 2.4116, 2.4116),
        (11.0, 3.0, 3.0, 3.0),
        (13.0, 3.0, 3.0 + 2.0 * 0.0030, 3.0),
    ] {
        check(&result, "lin.y", t, lin, 1e-12);
        check(&result, "ext.y", t, ext, 1e-12);
        check(&result, "stp.y", t, stp, 1e-12);
    }
}

#[test]
fn a_graph_converter_reads_its_table_from_a_file() {
    let text = "model FromFile
  SystemDynamics.Converters.GraphConverter g(table = readMatrix(\"fpr.csv\"), u = time);
  annotation(experiment(StopTime = 12, Interval = 0.5));
end FromFile;
";
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    // The file as the session's reader gives it: a header line and 11 points.
    session.set_data_reader(|path: &std::path::Path| {
        assert!(path.ends_with("fpr.csv"), "{}", path.display());
        Ok(
            "prey, catches per predator\n0, 0\n1, 0.9879\n2, 1.9830\n3, 2.4116\n4, 2.7167\n\
            5, 2.8620\n6, 2.9419\n7, 2.9823\n8, 2.9910\n9, 2.9970\n10, 3.0000\n"
                .as_bytes()
                .to_vec(),
        )
    });
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let result = run(&mut model, 12.0, None);
    for (t, y) in [
        (0.0, 0.0),
        (1.5, (0.9879 + 1.9830) / 2.0),
        (3.0, 2.4116),
        (10.0, 3.0),
        (12.0, 3.0),
    ] {
        check(&result, "g.y", t, y, 1e-12);
    }
}
