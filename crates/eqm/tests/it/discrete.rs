//! The discrete semantics of Modelica 3.6 chapter 8 through the API, on both back ends: initial
//! equations of variables assigned at events, `reinit` and `elsewhen` in when-statements of
//! algorithm sections, discrete variables defined by equations, and sampled controllers. Every
//! expected value is derived by hand or in closed form in the test.

use crate::hybrid::methods;
use eqm::{Method, RunSettings, SimulationResult};

/// A run of `text` to `stop` (rows every `interval`) at rtol = atol = 1e-10 with native code and
/// with the interpreter, which must agree bit for bit; the native run is returned.
fn run_both(text: &str, stop: f64, interval: f64) -> SimulationResult {
    run_both_with(text, stop, interval, None)
}

fn run_both_with(text: &str, stop: f64, interval: f64, method: Option<Method>) -> SimulationResult {
    let settings = RunSettings {
        stop: Some(stop),
        interval: Some(interval),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        method,
        ..RunSettings::default()
    };
    crate::run_both_back_ends(text, settings)
}

/// The diagnostic that stops `text` before or during a run to 1.
fn failure(text: &str) -> eqm::Diagnostic {
    let mut session = eqm::Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    let Some(mut model) = session.compile(None, &eqm::ModelOptions::default()) else {
        return session.diagnostics()[0].clone();
    };
    let settings = RunSettings {
        stop: Some(1.0),
        ..RunSettings::default()
    };
    match model.simulate(&settings).expect_err("the run must fail") {
        eqm::RunError::Failed {
            diagnostic: Some(d), ..
        } => *d,
        eqm::RunError::Model(d) => *d,
        other => panic!("no diagnostic: {other}"),
    }
}

fn close(actual: Option<f64>, expected: f64, tolerance: f64, what: &str) {
    let actual = actual.unwrap_or_else(|| panic!("{what}: no value"));
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: {actual}, expected {expected}"
    );
}

// 1. Initial equations and `pre` values of variables assigned at events.

#[test]
fn an_initial_equation_on_pre_of_a_when_assigned_boolean_replaces_its_start_value() {
    // b starts from pre(b) = false (its start value would be true) and toggles at t = 0.5.
    let model = "model M
  Boolean b(start = true);
  Real x(start = 0, fixed = true);
initial equation
  pre(b) = false;
equation
  der(x) = if b then 2 else 1;
  when x > 0.5 then
    b = not pre(b);
  end when;
end M;
";
    let result = run_both(model, 1.0, 0.1);
    assert_eq!(result.value_at("b", 0.25), Some(0.0));
    assert_eq!(result.final_value("b"), Some(1.0));
    // x = t up to 0.5, then slope 2: x(1) = 0.5 + 2·0.5.
    close(result.final_value("x"), 1.5, 1e-8, "x(1)");
}

#[test]
fn an_initial_equation_fixes_a_when_assigned_integer_counter() {
    // count = pre(count) during the initialization, so count = 0 fixes pre(count) = 0 (not the
    // start value 7); the sample at t = 0 fires right after it, then every 0.1 s: at t = 0.55
    // the samples 0, 0.1, ..., 0.5 have fired.
    let model = "model M
  Integer count(start = 7);
initial equation
  count = 0;
equation
  when sample(0, 0.1) then
    count = pre(count) + 1;
  end when;
end M;
";
    let result = run_both(model, 1.0, 0.05);
    assert_eq!(result.value_at("count", 0.55), Some(6.0));
    assert_eq!(result.value_at("count", 0.95), Some(10.0));
}

/// `y` assigned in a when-statement of an algorithm, doubled when `time > 0.5`; `initial` is
/// the initial equation section.
fn algorithm_output(declaration: &str, initial: &str) -> String {
    format!(
        "model M
  {declaration}
  Real x(start = 0, fixed = true);
initial equation
  {initial}
equation
  der(x) = y;
algorithm
  when time > 0.5 then
    y := 2*pre(y);
  end when;
end M;
"
    )
}

#[test]
fn an_initial_equation_fixes_a_discrete_real_assigned_in_an_algorithm() {
    // y = 1 up to 0.5, then 2: x(1) = 0.5 + 2·0.5. Written on y or on pre(y) alike.
    for initial in ["y = 1;", "pre(y) = 1;", "2*y = 2;"] {
        let result = run_both(&algorithm_output("discrete Real y(start = 5);", initial), 1.0, 0.1);
        assert_eq!(result.value_at("y", 0.25), Some(1.0), "{initial}");
        assert_eq!(result.final_value("y"), Some(2.0), "{initial}");
        close(result.final_value("x"), 1.5, 1e-8, initial);
    }
}

#[test]
fn an_initial_equation_fixes_pre_of_an_integer_an_algorithm_counts() {
    let model = "model M
  Integer k;
  Real x(start = 0, fixed = true);
initial equation
  pre(k) = 4;
equation
  der(x) = k;
algorithm
  when time > 0.5 then
    k := pre(k) + 1;
  end when;
end M;
";
    let result = run_both(model, 1.0, 0.1);
    assert_eq!(result.value_at("k", 0.25), Some(4.0));
    assert_eq!(result.final_value("k"), Some(5.0));
    // x(1) = 4·0.5 + 5·0.5.
    close(result.final_value("x"), 4.5, 1e-8, "x(1)");
}

#[test]
fn an_initial_equation_and_a_fixed_start_value_of_one_algorithm_output_over_determine() {
    let d = failure(&algorithm_output("discrete Real y(start = 5, fixed = true);", "y = 1;"));
    assert_eq!(d.code, "E0504", "{d:?}");
    // The value before the first event is named as the user writes it, not by the compiler's
    // own variable.
    assert!(d.message.contains("(pre(y))"), "{}", d.message);
    assert!(!d.message.contains('$'), "{}", d.message);
}

#[test]
fn an_initial_equation_on_an_output_assigned_outside_when_statements_over_determines() {
    // The section computes k = integer(x) = 0 at the start, which the initial equation contradicts.
    let model = "model M
  Integer k;
  Real x(start = 0, fixed = true);
initial equation
  k = 4;
equation
  der(x) = 1;
algorithm
  k := integer(x);
  when time > 0.5 then
    k := 10;
  end when;
end M;
";
    assert_eq!(failure(model).code, "E0504");
}

#[test]
fn a_when_initial_clause_fires_at_the_start() {
    // y = 7 and k = pre(k) + 1 = 6 at the start; k = 7 after time > 0.5.
    let model = "model M
  discrete Real y(start = 3);
  Integer k(start = 5);
equation
  when initial() then
    y = 7;
  end when;
  when {initial(), time > 0.5} then
    k = pre(k) + 1;
  end when;
end M;
";
    let result = run_both(model, 1.0, 0.1);
    assert_eq!(result.value_at("y", 0.0), Some(7.0));
    assert_eq!(result.value_at("k", 0.0), Some(6.0));
    assert_eq!(result.value_at("k", 0.25), Some(6.0));
    assert_eq!(result.final_value("k"), Some(7.0));
}

// 3. `reinit` and `elsewhen` in when-statements of algorithm sections.

#[test]
fn a_ball_bounces_on_a_reinit_in_an_algorithm() {
    // Dropped from h = 1 with g = 9.81: the first impact at t1 = sqrt(2/g) with speed g·t1;
    // each bounce halves the speed, so the flight after the j-th impact lasts 2·t1/2^j and the
    // k-th impact is at t1·(3 - 2^(2-k)). vImpact is the velocity just before the last impact,
    // which the reinit reads after the section assigned it.
    let model = "model M
  Real h(start = 1, fixed = true);
  Real v(start = 0, fixed = true);
  Integer n(start = 0, fixed = true);
  discrete Real vImpact(start = 0, fixed = true);
equation
  der(h) = v;
  der(v) = -9.81;
algorithm
  when h < 0 then
    n := pre(n) + 1;
    vImpact := pre(v);
    reinit(v, -0.5*vImpact);
  end when;
end M;
";
    let g = 9.81_f64;
    let t1 = (2.0 / g).sqrt();
    let (t2, t3) = (2.0 * t1, 2.5 * t1);
    let result = run_both(model, 1.0, 0.01);
    assert_eq!(result.value_at("n", 0.5 * (t1 + t2)), Some(1.0));
    assert_eq!(result.final_value("n"), Some(2.0));
    assert!(t3 > 1.0);
    close(result.final_value("vImpact"), -g * t1 / 2.0, 1e-7, "vImpact(1)");
    let s = 1.0 - t2;
    close(result.final_value("v"), g * t1 / 4.0 - g * s, 1e-7, "v(1)");
    close(
        result.final_value("h"),
        g * t1 / 4.0 * s - g / 2.0 * s * s,
        1e-7,
        "h(1)",
    );
}

#[test]
fn elsewhen_in_an_algorithm_fires_only_when_the_earlier_branches_do_not() {
    // time > 0.75 rises at 0.75, together with the sample at 0.75: only the first branch runs
    // (n = 11, m = 1). At 0.25 and 1.25 the sample's branch runs (its condition rises while the
    // first is false, then while it is true already): n = 10, then 21.
    let model = "model M
  Integer n(start = 0, fixed = true);
  Integer m(start = 0, fixed = true);
algorithm
  when time > 0.75 then
    n := n + 1;
  elsewhen sample(0.25, 0.5) then
    n := n + 10;
    m := m + 1;
  end when;
end M;
";
    let result = run_both(model, 1.5, 0.05);
    for (t, n, m) in [(0.2, 0.0, 0.0), (0.3, 10.0, 1.0), (0.8, 11.0, 1.0), (1.3, 21.0, 2.0)] {
        assert_eq!(result.value_at("n", t), Some(n), "n({t})");
        assert_eq!(result.value_at("m", t), Some(m), "m({t})");
    }
}

#[test]
fn a_reinit_in_an_elsewhen_branch_of_an_algorithm() {
    // x = t until the sample at 0.5 resets it to 0 (the first branch, at x > 10, never fires);
    // then x = t - 0.5, reset again at 1.
    let model = "model M
  Real x(start = 0, fixed = true);
  Integer resets(start = 0, fixed = true);
equation
  der(x) = 1;
algorithm
  when x > 10 then
    reinit(x, 100);
  elsewhen sample(0.5, 0.5) then
    reinit(x, 0);
    resets := pre(resets) + 1;
  end when;
end M;
";
    let result = run_both(model, 1.25, 0.05);
    close(result.value_at("x", 0.45), 0.45, 1e-9, "x(0.45)");
    close(result.value_at("x", 0.75), 0.25, 1e-9, "x(0.75)");
    close(result.final_value("x"), 0.25, 1e-9, "x(1.25)");
    assert_eq!(result.final_value("resets"), Some(2.0));
}

#[test]
fn a_reinit_reading_what_the_section_assigns_after_it_is_refused() {
    let model = "model M
  Real h(start = 1, fixed = true);
  discrete Real w(start = 0, fixed = true);
equation
  der(h) = -1;
algorithm
  when h < 0 then
    reinit(h, w);
    w := 1;
  end when;
end M;
";
    let d = failure(model);
    assert_eq!(d.code, "E0219", "{d:?}");
    assert!(d.message.contains("`w`"), "{d:?}");
}

// 2. Discrete variables defined by equations in mixed systems.

#[test]
fn an_integer_mode_defined_by_an_equation_switches_the_plant() {
    // m = 0 while x <= 0.5: der(x) = 2 - x, x = 2(1 - e^-t), which reaches 0.5 at
    // t* = ln(4/3). Then m = 1: der(x) = 2 - 2x, x = 1 - e^(-2(t - t*))/2.
    let model = "model M
  Real x(start = 0, fixed = true);
  Integer m;
  Real u;
equation
  m = if x > 0.5 then 1 else 0;
  u = 2 - x*m;
  der(x) = u - x;
end M;
";
    let result = run_both(model, 2.0, 0.05);
    let switch = (4.0_f64 / 3.0).ln();
    close(
        result.value_at("x", 0.2),
        2.0 * (1.0 - (-0.2_f64).exp()),
        1e-8,
        "x(0.2)",
    );
    assert_eq!(result.value_at("m", 0.2), Some(0.0));
    assert_eq!(result.value_at("m", 0.3), Some(1.0));
    let expected = 1.0 - (-2.0 * (2.0 - switch)).exp() / 2.0;
    close(result.final_value("x"), expected, 1e-8, "x(2)");
    close(result.final_value("u"), 2.0 - expected, 1e-8, "u(2)");
}

#[test]
fn a_thrust_switched_by_time_with_a_mode_computed_from_it() {
    // Thrust 5 against gravity 1 for t < 1, then free fall: v = 4t, h = 10 + 2t² up to t = 1;
    // then v = 4 - (t - 1), h = 12 + 4(t - 1) - (t - 1)²/2.
    let model = "model M
  parameter Real T = 1;
  parameter Real F = 5;
  Real h(start = 10, fixed = true);
  Real v(start = 0, fixed = true);
  Real thrust;
  Integer mode;
equation
  thrust = if time < T then F else 0;
  mode = if thrust > 0 then 1 else 2;
  der(h) = v;
  der(v) = thrust - 1;
end M;
";
    let result = run_both(model, 3.0, 0.1);
    close(result.value_at("h", 0.5), 10.5, 1e-8, "h(0.5)");
    assert_eq!(result.value_at("mode", 0.5), Some(1.0));
    assert_eq!(result.final_value("mode"), Some(2.0));
    close(result.final_value("v"), 2.0, 1e-8, "v(3)");
    close(result.final_value("h"), 18.0, 1e-8, "h(3)");
}

#[test]
fn a_queue_count_that_reads_an_integer_part_of_itself_holds_its_equation_after_each_event() {
    // At each sample n = pre(n) + integer(2.5 + 0.1 n), solved at the event: t = 0: n = 2
    // (integer(2.7) = 2); 0.3: n = 4 (2.9); 0.6: n = 7 (integer(3.2) = 3, where the arrivals
    // before the event, 2, would give 6 and contradict the equation); 0.9: n = 10 (3.5).
    let model = "model M
  Integer n(start = 0, fixed = true);
  Integer arrivals;
  Real load;
equation
  arrivals = integer(load);
  load = 2.5 + 0.1*n;
  when sample(0, 0.3) then
    n = pre(n) + arrivals;
  end when;
end M;
";
    let result = run_both(model, 1.0, 0.05);
    for (t, n) in [(0.1, 2.0), (0.4, 4.0), (0.7, 7.0), (1.0, 10.0)] {
        assert_eq!(result.value_at("n", t), Some(n), "n({t})");
        let load = 2.5 + 0.1 * n;
        close(result.value_at("load", t), load, 1e-12, &format!("load({t})"));
        assert_eq!(result.value_at("arrivals", t), Some(load.floor()), "arrivals({t})");
    }
}

#[test]
fn an_event_assignment_through_a_relation_on_its_own_result_that_has_no_solution_stops() {
    // n = pre(n) + (if n > 1.5 then 0 else 2): n = 2 makes the relation true and n = 0, which
    // makes it false again: no value satisfies the equation.
    let model = "model M
  Integer n(start = 0, fixed = true);
  Real y;
equation
  y = n;
  when sample(0.5, 1) then
    n = pre(n) + (if y > 1.5 then 0 else 2);
  end when;
end M;
";
    assert_eq!(failure(model).code, "E0712");
}

// 4. Algorithm sections inside algebraic loops.

#[test]
fn a_linear_loop_closed_through_an_algorithm_section() {
    // y = 2x + 1 and x = 3 - y: x = 2/3, y = 7/3.
    let model = "model M
  Real x;
  Real y;
algorithm
  y := 2*x + 1;
equation
  x = 3 - y;
end M;
";
    let result = run_both(model, 1.0, 0.5);
    close(result.final_value("x"), 2.0 / 3.0, 1e-12, "x");
    close(result.final_value("y"), 7.0 / 3.0, 1e-12, "y");
}

#[test]
fn a_nonlinear_loop_through_an_algorithm_with_an_if_statement() {
    // The section computes z = x² and y = x² + x (limited to 10, which it never reaches here);
    // y = 3 - t from the equation, so x = (-1 + sqrt(1 + 4(3 - t)))/2.
    let model = "model M
  Real x(start = 1);
  Real y;
  Real z;
algorithm
  z := x*x;
  y := z + x;
  if y > 10 then
    y := 10;
  end if;
equation
  y = 3 - time;
end M;
";
    let result = run_both(model, 1.0, 0.25);
    for t in [0.0_f64, 0.25, 0.5, 1.0] {
        let x = (-1.0 + (1.0 + 4.0 * (3.0 - t)).sqrt()) / 2.0;
        close(result.value_at("x", t), x, 1e-9, &format!("x({t})"));
        close(result.value_at("z", t), x * x, 1e-9, &format!("z({t})"));
    }
}

#[test]
fn a_loop_through_an_algorithm_that_switches_branch_at_an_event() {
    // y = 2x + 1 while x < 0.5, else y = 3x + 0.5, with x = t + 1 - y/3: below the switch
    // 5x = 3t + 2, which reaches 0.5 at t = 1/6; then 2x = t + 5/6, so x(1) = 11/12 and
    // y(1) = 3.25.
    let model = "model M
  Real x;
  Real y;
algorithm
  if x < 0.5 then
    y := 2*x + 1;
  else
    y := 3*x + 0.5;
  end if;
equation
  x = time + 1 - y/3;
end M;
";
    let result = run_both(model, 1.0, 0.05);
    close(result.value_at("x", 0.1), (0.3 + 2.0) / 5.0, 1e-9, "x(0.1)");
    assert!(result.summary.events.events >= 1);
    close(result.final_value("x"), 11.0 / 12.0, 1e-9, "x(1)");
    close(result.final_value("y"), 3.25, 1e-9, "y(1)");
}

#[test]
fn a_loop_through_an_algorithm_with_a_while_loop_is_refused() {
    let model = "model M
  Real x;
  Real y;
algorithm
  y := 0;
  while y < x loop
    y := y + 1;
  end while;
equation
  x = 3 - y;
end M;
";
    let d = failure(model);
    assert_eq!(d.code, "E0502", "{d:?}");
    assert!(d.message.contains("loop"), "{d:?}");
}

// 5. Sampled models driving continuous plants.

/// A zero-order-hold controller of the plant der(x) = -a x + u: u = k (r - x) at every sample
/// of period `period`, held in between.
fn zero_order_hold(period: f64) -> String {
    format!(
        "model M
  parameter Real a = 1;
  parameter Real k = 2;
  parameter Real r = 1;
  Real x(start = 0, fixed = true);
  discrete Real u(start = 0, fixed = true);
equation
  der(x) = -a*x + u;
  when sample(0, {period}) then
    u = k*(r - x);
  end when;
end M;
"
    )
}

/// The closed form of the zero-order hold: over a period h from x_j with u_j = k (r - x_j),
/// x_(j+1) = x_j e^(-a h) + u_j (1 - e^(-a h))/a. Returns x at `samples` periods and the
/// input held then.
fn zero_order_hold_exact(period: f64, samples: usize) -> (f64, f64) {
    let (a, k, r) = (1.0, 2.0, 1.0);
    let decay = (-a * period).exp();
    let mut x: f64 = 0.0;
    for _ in 0..samples {
        let u = k * (r - x);
        x = x * decay + u * (1.0 - decay) / a;
    }
    (x, k * (r - x))
}

#[test]
fn a_zero_order_hold_controller_follows_its_closed_form_with_every_method() {
    // 20 samples of 0.1 s up to t = 1.95 (the sample at 2.0 is not reached).
    let (x, _) = zero_order_hold_exact(0.1, 20);
    let (x19, u19) = zero_order_hold_exact(0.1, 19);
    for method in methods() {
        // Implicit Euler is of order one: at rtol = 1e-10 its global error is near 1e-6.
        let tolerance = if method == Some(Method::ImplicitEuler) {
            1e-5
        } else {
            1e-7
        };
        let result = run_both_with(&zero_order_hold(0.1), 2.0, 0.05, method.clone());
        close(
            result.value_at("u", 1.95),
            u19,
            tolerance,
            &format!("{method:?}: u(1.95)"),
        );
        // x(2) just before the sample at 2: the twentieth period completed.
        let before = result.time().iter().position(|&t| t == 2.0).expect("a row at t = 2");
        close(
            result.column("x").map(|c| c[before]),
            x,
            tolerance,
            &format!("{method:?}: x(2)"),
        );
        close(
            result.value_at("x", 1.9),
            x19,
            tolerance,
            &format!("{method:?}: x(1.9)"),
        );
    }
}

#[test]
fn many_samples_of_a_fast_hold_run_to_the_end() {
    // 10,000 samples of 1 ms: the closed form at t = 9.9995 (9,999 periods completed, the last
    // at 9.999, plus half a period from there).
    let period = 0.001;
    let (x, u) = zero_order_hold_exact(period, 10_000);
    let result = run_both(&zero_order_hold(period), 10.0, 0.5);
    let before = result.time().iter().position(|&t| t == 10.0).expect("a row at t = 10");
    close(result.column("x").map(|c| c[before]), x, 1e-7, "x(10)");
    assert!(u.is_finite());
}

#[test]
fn a_sample_that_coincides_with_a_state_event_fires_once_with_it() {
    // x = t crosses 0.5 at the sample t = 0.5: hits = 1, and u holds the last sampled x.
    let model = "model M
  Real x(start = 0, fixed = true);
  discrete Real u(start = 0, fixed = true);
  Integer hits(start = 0, fixed = true);
equation
  der(x) = 1;
  when sample(0, 0.1) then
    u = x;
  end when;
  when x > 0.5 then
    hits = pre(hits) + 1;
  end when;
end M;
";
    for method in methods() {
        let result = run_both_with(model, 1.0, 0.05, method.clone());
        assert_eq!(result.final_value("hits"), Some(1.0), "{method:?}");
        close(result.value_at("u", 0.55), 0.5, 1e-9, &format!("{method:?}: u(0.55)"));
        close(result.value_at("u", 0.95), 0.9, 1e-9, &format!("{method:?}: u(0.95)"));
        close(result.final_value("x"), 1.0, 1e-9, &format!("{method:?}: x(1)"));
    }
}
