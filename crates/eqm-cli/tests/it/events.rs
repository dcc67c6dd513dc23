//! Events end to end (`eqm run`): state events located on the dense output, when-clauses with
//! `pre` and `reinit`, sliding mode on a switching surface, and the diagnostics of what cannot
//! go on (several sliding surfaces, an accumulation of events, an event iteration that does not
//! settle). Event times are checked against their closed forms.

use crate::cli;
use cli::{Table, eqm, run};

const G: f64 = 9.81;
const E: f64 = 0.8;

/// The impact times of the bouncing ball from h = 1 at rest: t1 = sqrt(2/g), then each flight
/// lasts 2·e^k·v1/g with v1 = g·t1.
fn impacts(n: usize) -> Vec<f64> {
    let t1 = (2.0 / G).sqrt();
    let v1 = G * t1;
    let mut times = vec![t1];
    for k in 1..n {
        let last = times[k - 1];
        times.push(last + 2.0 * E.powi(k as i32) * v1 / G);
    }
    times
}

/// The times at which `column` jumps between two rows at the same time (an event's rows).
fn jumps(t: &Table, column: &str) -> Vec<f64> {
    let time = t.column("time");
    let values = t.column(column);
    (1..time.len())
        .filter(|&i| time[i] == time[i - 1] && values[i] != values[i - 1])
        .map(|i| time[i])
        .collect()
}

#[test]
fn bouncing_ball_impacts_happen_at_the_exact_times_for_every_solver() {
    let exact = impacts(6);
    for solver in ["dopri5", "rkf45", "rk4", "bdf", "radau5"] {
        let t = run(&[
            "run",
            "examples/bouncing_ball.eqm",
            "--solver",
            solver,
            "--step",
            "0.01",
            "--rtol",
            "1e-10",
            "--atol",
            "1e-10",
        ]);
        let found = jumps(&t, "v");
        assert_eq!(found.len(), 6, "{solver}: impacts before t = 3: {found:?}");
        // rk4 with h = 0.01 is accurate to about h^4 and the adaptive pairs to their tolerance;
        // bdf and radau5 take the fixed step (BDF of order 5, restarted by Radau5 steps after
        // each impact), and both reproduce the parabolic flight to about rounding.
        let tolerance = if matches!(solver, "rk4" | "bdf") { 1e-7 } else { 1e-8 };
        for (f, e) in found.iter().zip(&exact) {
            assert!((f - e).abs() < tolerance, "{solver}: impact at {f}, exactly {e}");
        }
        // Output rows stay on their grid besides the event rows: the events do not move them.
        let time = t.column("time");
        assert!(time.contains(&0.5) && time.contains(&3.0), "{solver}");
    }
}

#[test]
fn bouncing_ball_velocity_reverses_with_the_restitution_coefficient() {
    let t = run(&[
        "run",
        "examples/bouncing_ball.eqm",
        "--rtol",
        "1e-10",
        "--atol",
        "1e-10",
    ]);
    let time = t.column("time");
    let v = t.column("v");
    let mut reversals = 0;
    for i in 1..time.len() {
        if time[i] == time[i - 1] && v[i] != v[i - 1] {
            assert!((v[i] + E * v[i - 1]).abs() < 1e-12, "v {} -> {}", v[i - 1], v[i]);
            reversals += 1;
        }
    }
    assert_eq!(reversals, 6);
    // Between impacts the motion is the exact parabola: the first flight peaks at e²·h.
    let h = t.column("h");
    let first_peak = (0..time.len())
        .filter(|&i| time[i] > 0.5 && time[i] < 1.1)
        .map(|i| h[i])
        .fold(0.0f64, f64::max);
    assert!((first_peak - E * E).abs() < 1e-3, "peak {first_peak}");
}

#[test]
fn the_accumulation_of_bounces_stops_the_run_with_the_limit_time() {
    let (code, out, err) = eqm(&["run", "examples/bouncing_ball.eqm", "--stop", "5"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("E0711") && err.contains("Zeno"), "{err}");
    assert!(err.contains("bouncing_ball.eqm:22:3"), "{err}");
    // The predicted accumulation point is the closed form t1·(1 + 2e/(1 - e)).
    let limit = (2.0 / G).sqrt() * (1.0 + 2.0 * E / (1.0 - E));
    let said: f64 = err
        .split("accumulate at t ≈ ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no limit time in {err}"));
    assert!((said - limit).abs() < 1e-6, "{said} vs {limit}");
    // Every row before the stop was written, and the ball never went through the floor.
    let t = Table::parse(&out);
    assert!(t.column("time").last().is_some_and(|&last| last > 4.0 && last < limit));
    assert!(t.column("h").iter().all(|&h| h > -1e-9));
}

#[test]
fn naive_sign_friction_sticks_and_slips_at_the_exact_times() {
    let (code, out, err) = eqm(&[
        "run",
        "examples/stick_slip.eqm",
        "--rtol",
        "1e-9",
        "--atol",
        "1e-9",
        "-v",
    ]);
    assert_eq!(code, 0, "{err}");
    let q = 0.4f64;
    let t1 = q.asin();
    let y1 = 1.0 - t1.cos();
    let t2 = t1 + (1.0 - y1) / q;
    let number = |marker: &str| -> f64 {
        err.lines()
            .find(|l| l.contains(marker))
            .and_then(|l| l.trim().strip_prefix("t = "))
            .and_then(|l| l.split(':').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no `{marker}` in {err}"))
    };
    let stick = number("sliding mode (Filippov) starts");
    let slip = number("the solution leaves on the negative side");
    assert!((stick - t1).abs() < 1e-8, "stick at {stick}, exactly {t1}");
    assert!((slip - t2).abs() < 1e-6, "slip at {slip}, exactly {t2}");
    // The motion against the closed form in each phase.
    let t = Table::parse(&out);
    let (time, y, v) = (t.column("time"), t.column("y"), t.column("v"));
    for i in 0..time.len() {
        let s = time[i];
        let (ey, ev) = if s <= t1 {
            (1.0 - s.cos(), s.sin())
        } else if s <= t2 {
            (y1 + q * (s - t1), q)
        } else if s < t2 + 6.0 {
            (1.0 + q * (s - t2).sin(), q * (s - t2).cos())
        } else {
            continue;
        };
        assert!((y[i] - ey).abs() < 1e-6, "y({s}) = {}, exactly {ey}", y[i]);
        assert!((v[i] - ev).abs() < 1e-6, "v({s}) = {}, exactly {ev}", v[i]);
    }
}

/// A model in a temporary file, run with `args`.
fn run_model(name: &str, text: &str, args: &[&str]) -> (i32, String, String) {
    let dir = std::env::temp_dir().join(format!("eqm-events-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join(format!("{name}.eqm"));
    std::fs::write(&path, text).expect("the model is written");
    let path = path.to_string_lossy().into_owned();
    let mut all = vec!["run", path.as_str()];
    all.extend_from_slice(args);
    let result = eqm(&all);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

#[test]
fn friction_at_rest_sticks_from_the_start_and_breaks_away_when_the_force_exceeds_it() {
    // Static friction 1 against a force ramp 0.5·t: stuck until t = 2, then accelerating.
    let (code, out, err) = run_model(
        "breakaway",
        "model Breakaway
           Real x(start = 0, fixed = true);
           Real v(start = 0, fixed = true);
         equation
           der(x) = v;
           der(v) = 0.5*time - sign(v);
         end Breakaway;",
        &["--stop", "3", "--rtol", "1e-9", "--atol", "1e-12", "-v"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("sliding mode (Filippov) starts"), "{err}");
    let t = Table::parse(&out);
    let (time, v) = (t.column("time"), t.column("v"));
    for i in 0..time.len() {
        let s = time[i];
        // Stuck: v = 0; after t = 2: v = 0.25 (t - 2)^2.
        let exact = if s <= 2.0 { 0.0 } else { 0.25 * (s - 2.0).powi(2) };
        assert!((v[i] - exact).abs() < 1e-6, "v({s}) = {}, exactly {exact}", v[i]);
    }
}

#[test]
fn two_surfaces_sliding_at_once_is_a_diagnostic_not_chattering() {
    let (code, _, err) = run_model(
        "two",
        "model Two
           Real x(start = 0, fixed = true);
           Real y(start = 0, fixed = true);
         equation
           der(x) = -sign(x) + 0.1;
           der(y) = -sign(y) - 0.2;
         end Two;",
        &["--stop", "1"],
    );
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("E0710") && err.contains("several switching surfaces"),
        "{err}"
    );
    assert!(err.contains("`x > 0`") && err.contains("`y > 0`"), "{err}");
}

#[test]
fn an_event_iteration_that_never_settles_names_the_limit() {
    let (code, _, err) = run_model(
        "flipflop",
        "model FlipFlop
           Real x(start = -1, fixed = true);
         equation
           der(x) = 1;
           when x > 0 then
             reinit(x, -1);
           end when;
           when x < 0 then
             reinit(x, 1);
           end when;
         end FlipFlop;",
        &["--stop", "2"],
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("E0712") && err.contains("did not settle"), "{err}");
}

#[test]
fn when_clauses_assign_discrete_variables_with_pre_and_terminate_ends_the_run() {
    // A counter of upward crossings of sin(time) through 0.5, and a stop at the third one.
    let (code, out, err) = run_model(
        "counter",
        "model Counter
           Integer n(start = 0);
           Real s;
         equation
           s = sin(time);
           when s > 0.5 then
             n = pre(n) + 1;
           end when;
           when n >= 3 then
             terminate(\"three crossings\");
           end when;
         end Counter;",
        &["--stop", "30", "--rtol", "1e-10", "--atol", "1e-10"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("terminate") && err.contains("three crossings"), "{err}");
    let t = Table::parse(&out);
    let (time, n) = (t.column("time"), t.column("n"));
    let pi = std::f64::consts::PI;
    // Crossings at π/6 + 2πk; the run ends at the third.
    let third = pi / 6.0 + 4.0 * pi;
    let last = *time.last().expect("rows");
    assert!(
        (last - third).abs() < 1e-8,
        "ended at {last}, third crossing at {third}"
    );
    assert_eq!(*n.last().expect("rows"), 3.0);
    for (s, k) in time.iter().zip(&n) {
        let expected = (0..3)
            .filter(|j| pi / 6.0 + 2.0 * pi * f64::from(*j) < *s - 1e-9)
            .count() as f64;
        if (s - third).abs() > 1e-6 && (0..3).all(|j| (s - pi / 6.0 - 2.0 * pi * f64::from(j)).abs() > 1e-6) {
            assert_eq!(*k, expected, "n({s})");
        }
    }
}

#[test]
fn a_failing_assertion_in_a_when_clause_stops_with_its_message() {
    let (code, _, err) = run_model(
        "limit",
        "model Limit
           Real x(start = 0, fixed = true);
         equation
           der(x) = 1;
           when x > 1 then
             assert(x < 0.5, \"x went past its limit\");
           end when;
         end Limit;",
        &["--stop", "2"],
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("x went past its limit") && err.contains("time 1"), "{err}");
}

#[test]
fn native_code_and_the_interpreter_give_the_same_event_rows() {
    for example in ["examples/bouncing_ball.eqm", "examples/stick_slip.eqm"] {
        let (a_code, a, a_err) = eqm(&["run", example]);
        let (b_code, b, b_err) = eqm(&["run", example, "--interpreter"]);
        assert_eq!((a_code, b_code), (0, 0), "{a_err}{b_err}");
        assert_eq!(a, b, "{example}: the back ends differ");
    }
}

#[test]
fn a_sampled_controller_ticks_exactly_and_matches_its_discrete_recursion() {
    let t = run(&[
        "run",
        "examples/sampled_controller.eqm",
        "--rtol",
        "1e-10",
        "--atol",
        "1e-12",
    ]);
    let (time, x, u) = (t.column("time"), t.column("x"), t.column("u"));
    // The exact recursion of the sampled system: at tick k, e = r - x_k, u_k = u_{k-1} + ki·Ts·e,
    // then x relaxes towards u_k for one period.
    let (ts, ki, r) = (0.1f64, 2.0, 1.0);
    let mut xk = 0.0;
    let mut uk = 0.0;
    let mut checked = 0;
    for k in 0..100 {
        let tick = k as f64 * ts;
        uk += ki * ts * (r - xk);
        // The row just after the tick holds the new controller output.
        let after = (0..time.len())
            .rev()
            .find(|&i| (time[i] - tick).abs() < 1e-12)
            .unwrap_or_else(|| panic!("no rows at the tick {tick}"));
        assert!((u[after] - uk).abs() < 1e-9, "u({tick}) = {}, exactly {uk}", u[after]);
        assert!((x[after] - xk).abs() < 1e-9, "x({tick}) = {}, exactly {xk}", x[after]);
        xk = uk + (xk - uk) * (-ts).exp();
        checked += 1;
    }
    assert_eq!(checked, 100);
}

#[test]
fn when_equations_are_sorted_so_either_order_gives_the_same_result() {
    let model = |first: &str, second: &str| {
        format!(
            "model Order
               Real x(start = 0, fixed = true);
               discrete Real u(start = 0);
               discrete Real e(start = 0);
             equation
               der(x) = -x + u;
               when sample(0, 0.1) then
                 {first}
                 {second}
               end when;
             end Order;"
        )
    };
    let a = run_model("ordera", &model("u = pre(u) + 0.2*e;", "e = 1 - x;"), &["--stop", "1"]);
    let b = run_model("orderb", &model("e = 1 - x;", "u = pre(u) + 0.2*e;"), &["--stop", "1"]);
    assert_eq!(a.0, 0, "{}", a.2);
    assert_eq!(a.1, b.1);
}

#[test]
fn edge_change_initial_and_terminal_fire_when_they_should() {
    // x = sin(t) rises through 0.5 at π/6 and 13π/6 and falls through it at 5π/6 and 17π/6.
    let (code, out, err) = run_model(
        "operators",
        "model Ops
           Real x(start = 0, fixed = true);
           Integer rises(start = 0);
           Integer changes(start = 0);
           discrete Real x0(start = -1);
           discrete Real last(start = 0);
           Real y;
         equation
           der(x) = cos(time);
           y = if initial() then 5 else 2*x;
           when edge(x > 0.5) then
             rises = pre(rises) + 1;
           end when;
           when change(x > 0.5) then
             changes = pre(changes) + 1;
           end when;
           when initial() then
             x0 = x + 1;
           end when;
           when terminal() then
             last = x;
           end when;
         end Ops;",
        &["--stop", "10", "--interval", "1", "--rtol", "1e-10", "--atol", "1e-10"],
    );
    assert_eq!(code, 0, "{err}");
    let t = Table::parse(&out);
    let last_row = |name: &str| *t.column(name).last().expect("rows");
    assert_eq!(last_row("rises"), 2.0);
    assert_eq!(last_row("changes"), 4.0);
    assert_eq!(t.column("x0")[0], 1.0, "initial() fired at the start with x = 0");
    assert!((last_row("last") - 10f64.sin()).abs() < 1e-8, "terminal() saw x(10)");
    // The rises happen at the crossings, the counters step there.
    let time = t.column("time");
    let rises = t.column("rises");
    let pi = std::f64::consts::PI;
    let first = (1..time.len()).find(|&i| rises[i] == 1.0).expect("a rise");
    assert!((time[first] - pi / 6.0).abs() < 1e-8, "first rise at {}", time[first]);
    // Between events y follows 2x: initial() is false after the start.
    let y = t.column("y");
    let x = t.column("x");
    for i in 1..time.len() {
        assert!((y[i] - 2.0 * x[i]).abs() < 1e-12, "y({})", time[i]);
    }
}

#[test]
fn the_ideal_diode_rectifies_and_switches_at_the_zero_crossings() {
    // The model has no states: the implicit methods solve systems of size zero.
    for solver in ["auto", "bdf", "radau5"] {
        let t = run(&[
            "run",
            "examples/half_wave_rectifier.eqm",
            "--solver",
            solver,
            "--rtol",
            "1e-9",
            "--atol",
            "1e-9",
            "--vars",
            "load.v,diode.i",
        ]);
        let (time, v) = (t.column("time"), t.column("load.v"));
        let (r, ron, goff) = (100.0, 1e-5, 1e-5);
        for (s, value) in time.iter().zip(&v) {
            let source = 10.0 * (2.0 * std::f64::consts::PI * 50.0 * s).sin();
            let exact = if source >= 0.0 {
                source * r / (r + ron)
            } else {
                source * r * goff / (1.0 + r * goff)
            };
            assert!(
                (value - exact).abs() < 1e-6,
                "{solver}: v({s}) = {value}, exactly {exact}"
            );
        }
        // The diode switches at the source's zero crossings t = k/100 (k = 1..4): one event each.
        let events: Vec<f64> = (1..time.len())
            .filter(|&i| time[i] == time[i - 1])
            .map(|i| time[i])
            .collect();
        for k in 1..=4 {
            let crossing = k as f64 / 100.0;
            assert!(
                events.iter().any(|e| (e - crossing).abs() < 1e-9),
                "{solver}: no switch at {crossing}: {events:?}"
            );
        }
    }
}

#[test]
fn friction_with_static_above_kinetic_gives_the_exact_stick_slip_cycle() {
    let (code, out, err) = eqm(&[
        "run",
        "examples/stick_slip_friction.eqm",
        "--rtol",
        "1e-10",
        "--atol",
        "1e-10",
        "--vars",
        "mass.s,mass.v,mass.mode,spring.f",
    ]);
    assert_eq!(code, 0, "{err}");
    let t = Table::parse(&out);
    let (time, s, v, mode) = (
        t.column("time"),
        t.column("mass.s"),
        t.column("mass.v"),
        t.column("mass.mode"),
    );
    let (q, fs, fk) = (0.5f64, 1.5f64, 1.0f64);
    // Breakaway when the spring force q·t reaches Fs; the slip lasts 3π/2 (for these values the
    // velocity q(1 + sin τ − cos τ) returns to zero at τ = 3π/2); the next breakaway follows when
    // the spring force has risen by Fs − (its value at sticking).
    let breakaway = fs / q;
    let slip = 1.5 * std::f64::consts::PI;
    let stick = breakaway + slip;
    let extension = |tau: f64| fk + (fs - fk) * tau.cos() + q * tau.sin();
    let next_breakaway = stick + (fs - extension(slip)) / q;
    let first = |m: f64, after: f64| {
        (0..time.len())
            .find(|&i| mode[i] == m && time[i] > after)
            .map(|i| time[i])
            .unwrap_or(f64::NAN)
    };
    assert!(
        (first(1.0, 0.0) - breakaway).abs() < 1e-8,
        "breakaway at {}",
        first(1.0, 0.0)
    );
    assert!(
        (first(0.0, breakaway + 0.1) - stick).abs() < 1e-6,
        "stick at {}",
        first(0.0, breakaway + 0.1)
    );
    assert!(
        (first(1.0, stick + 0.1) - next_breakaway).abs() < 1e-6,
        "second breakaway at {}",
        first(1.0, stick + 0.1)
    );
    // Positions against the closed form: at rest, then x = q·t − u(τ) while sliding.
    for i in 0..time.len() {
        let tt = time[i];
        if tt < breakaway {
            assert_eq!(s[i], 0.0);
            assert_eq!(v[i], 0.0);
        } else if tt < stick - 1e-6 {
            let exact = q * tt - extension(tt - breakaway);
            assert!((s[i] - exact).abs() < 1e-7, "s({tt}) = {}, exactly {exact}", s[i]);
        }
    }
}

#[test]
fn regularised_friction_depends_on_its_magic_number_and_becomes_stiff() {
    // v(2) (exactly q = 0.4 while stuck) and the time v first drops below 0.39 (exactly 2.927)
    // for shrinking x0: they approach the event-based solution, from further away for larger x0.
    let exact_slip = 0.4f64.asin() + (1.0 - (1.0 - 0.4f64.asin().cos())) / 0.4 + (0.39f64 / 0.4).acos();
    let mut previous_gap = f64::INFINITY;
    for x0 in ["1e-2", "1e-3", "1e-4"] {
        let param = format!("x0={x0}");
        let t = run(&["run", "examples/stick_slip_regularised.eqm", "--param", &param]);
        let (time, v) = (t.column("time"), t.column("v"));
        let at_2 = (0..time.len())
            .find(|&i| time[i] >= 2.0)
            .map(|i| v[i])
            .expect("a row at t = 2");
        let slip = (0..time.len())
            .find(|&i| time[i] > 1.0 && v[i] < 0.39)
            .map(|i| time[i])
            .expect("the slip");
        let gap = 0.4 - at_2;
        assert!(gap > 0.0 && gap < previous_gap, "x0 = {x0}: v(2) = {at_2}");
        assert!(
            slip < exact_slip + 0.01,
            "x0 = {x0}: slip at {slip}, exactly {exact_slip}"
        );
        previous_gap = gap;
    }
    assert!(previous_gap < 5e-4, "{previous_gap}");
    // With x0 = 1e-3 the slope at v = q is 2/(π·1e-3): auto switches to BDF.
    let (code, _, err) = eqm(&["run", "examples/stick_slip_regularised.eqm", "-v"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("the problem became stiff: bdf"), "{err}");
}

#[test]
fn relations_on_time_are_time_events_at_exactly_their_instant() {
    let model = "model TE
       parameter Real T = 1.3;
       Real x(start = 0, fixed = true);
       Real u;
     equation
       u = if time >= T then 1 else 0;
       der(x) = u;
     end TE;";
    for (param, at) in [("T=1.3", 1.3), ("T=0.7", 0.7)] {
        let (code, out, err) = run_model(
            "timeevent",
            model,
            &["--stop", "2", "--interval", "0.5", "--param", param],
        );
        assert_eq!(code, 0, "{err}");
        let t = Table::parse(&out);
        let (time, u, x) = (t.column("time"), t.column("u"), t.column("x"));
        // Exactly at T: a row before (u = 0) and after (u = 1) the event.
        let rows: Vec<usize> = (0..time.len()).filter(|&i| time[i] == at).collect();
        assert_eq!(rows.len(), 2, "{param}: rows at {at}: {time:?}");
        assert_eq!((u[rows[0]], u[rows[1]]), (0.0, 1.0));
        // x = max(0, t - T) without a trace of root-finding error.
        let last = time.len() - 1;
        assert!((x[last] - (2.0 - at)).abs() < 1e-13, "{param}: x(2) = {}", x[last]);
    }
}

#[test]
fn floor_mod_div_and_ceil_jump_only_at_located_events() {
    // x = 0.5 - t: floor(x) jumps at t = 0.5 and 1.5, mod(x, 0.3) wraps every 0.3 s, and
    // div(x, 1) + ceil(x) jumps at x = 0 and x = -1.
    let (code, out, err) = run_model(
        "integers",
        "model Integers
           Real x(start = 0.5, fixed = true);
           Real y;
           Real z;
           Real w;
         equation
           der(x) = -1;
           y = floor(x);
           z = mod(x, 0.3);
           w = div(x, 1) + ceil(x);
         end Integers;",
        &[
            "--stop",
            "2",
            "--interval",
            "0.25",
            "--rtol",
            "1e-10",
            "--atol",
            "1e-10",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let t = Table::parse(&out);
    let (time, x, y, z, w) = (
        t.column("time"),
        t.column("x"),
        t.column("y"),
        t.column("z"),
        t.column("w"),
    );
    for i in 0..time.len() {
        // Between events each value is the function of x; at an event row the value may be
        // either side's (x is within rounding of the jump).
        let near_jump = |period: f64| ((x[i] / period).round() * period - x[i]).abs() < 1e-9;
        if !near_jump(1.0) {
            assert_eq!(y[i], x[i].floor(), "floor at t = {}", time[i]);
            assert_eq!(w[i], x[i].trunc() + x[i].ceil(), "div + ceil at t = {}", time[i]);
        }
        if !near_jump(0.3) {
            let exact = x[i] - (x[i] / 0.3).floor() * 0.3;
            assert!(
                (z[i] - exact).abs() < 1e-12,
                "mod at t = {}: {} vs {exact}",
                time[i],
                z[i]
            );
        }
    }
    let jumps_y = jumps(&t, "y");
    assert_eq!(jumps_y.len(), 2, "{jumps_y:?}");
    assert!(
        (jumps_y[0] - 0.5).abs() < 1e-9 && (jumps_y[1] - 1.5).abs() < 1e-9,
        "{jumps_y:?}"
    );
    // The sawtooth wraps at x = 0.3, 0, -0.3, ... -1.2: t = 0.2 + 0.3 k for k = 0..=5.
    let wraps = jumps(&t, "z");
    assert_eq!(wraps.len(), 6, "{wraps:?}");
    for (k, at) in wraps.iter().enumerate() {
        assert!((at - (0.2 + 0.3 * k as f64)).abs() < 1e-9, "{wraps:?}");
    }
}

#[test]
fn a_false_assertion_in_an_equation_section_is_exit_3_with_its_line() {
    let (code, out, err) = run_model(
        "asserted",
        "model Asserted
           Real x(start = 1, fixed = true);
         equation
           der(x) = -x;
           assert(x > 0.5, \"x fell below one half\");
         end Asserted;",
        &["--stop", "2", "--rtol", "1e-10", "--atol", "1e-12"],
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("E0705") && err.contains("x fell below one half"), "{err}");
    assert!(err.contains("asserted.eqm:5:"), "{err}");
    assert!(err.contains("`x > 0.5` is false"), "{err}");
    // The rows before the failure are written.
    let t = Table::parse(&out);
    let time = t.column("time");
    assert!(!time.is_empty() && time.iter().all(|&s| s <= 2f64.ln()), "{time:?}");
}

/// `eqm run -v` tells how the initialization was solved when plain Newton was not enough: the
/// method that solved each such loop, and the path of a homotopy continuation.
#[test]
fn verbose_run_names_the_method_and_the_continuation_of_the_initialization() {
    // Powell's badly scaled system: Newton from (0, 1) does not converge; the trust region does.
    let (code, out, err) = run_model(
        "powell",
        "model Powell
           Real x1(start = 0, nominal = 1e-5);
           Real x2(start = 1, nominal = 10);
         equation
           0 = 1e4*x1*x2 - 1;
           0 = exp(-x1) + exp(-x2) - 1.0001;
         end Powell;",
        &["--stop", "1", "-v"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("time,"), "{out}");
    assert!(
        err.contains("loop of 2 unknowns {x1, x2} at initialization: solved by trust-region dogleg"),
        "{err}"
    );
    // The limiter of the homotopy: the continuation from the simplified problem gives y = 8.
    let (code, out, err) = run_model(
        "limiter",
        "model Limiter
           Real u(start = 12);
           Real y;
         equation
           y = homotopy(actual = smooth(0, if u > 10 then 10 else if u < -10 then -10 else u), simplified = u);
           u = 2*y - 8;
         end Limiter;",
        &["--stop", "1", "-v"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("initialization: homotopy continuation over λ from 0 to 1 in "),
        "{err}"
    );
    let header: Vec<&str> = out.lines().next().expect("a header").split(',').collect();
    let first: Vec<f64> = out
        .lines()
        .nth(1)
        .expect("a row")
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    let y = header.iter().position(|c| *c == "y").expect("a column y");
    assert_eq!(first[y], 8.0, "{out}");
}
