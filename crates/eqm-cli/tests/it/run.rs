//! `eqm run` end to end: the examples against their analytic solutions, the CSV format, the
//! options and the exit codes (0 fine, 1 model error, 2 usage error, 3 failed run). Every test runs the built binary, the way
//! a user does.

use crate::cli;
use cli::{Table, eqm, run};

/// The largest deviation of `column` from `exact(t)`.
fn max_error(t: &Table, column: &str, exact: impl Fn(f64) -> f64) -> f64 {
    t.column("time")
        .iter()
        .zip(t.column(column))
        .map(|(time, v)| (v - exact(*time)).abs())
        .fold(0.0, f64::max)
}

#[test]
fn exponential_decay_matches_the_exponential() {
    let t = run(&["run", "examples/decay.eqm", "--stop", "4", "--rtol", "1e-8"]);
    // 10^-8 relative tolerance per step: the global error stays well below 1e-6.
    assert!(max_error(&t, "x", |t| (-0.5 * t).exp()) < 1e-6);
    assert_eq!(t.column("time").len(), 401, "a row every experiment interval (0.01)");
}

/// The spring-mass example: m = 1, c = 4, s(0) = 1 gives s = cos(2t), also through the stdlib
/// components, two springs in series (a linear loop) and two rigidly coupled masses (index
/// reduction).
#[test]
fn harmonic_oscillators_follow_cos_2t() {
    for (file, column) in [
        ("examples/spring_mass.eqm", "mass.flange_b.s"),
        ("examples/spring_mass_stdlib.eqm", "mass.s"),
        ("examples/two_springs_series.eqm", "mass.s"),
        ("examples/rigid_masses.eqm", "mass1.s"),
        ("examples/rigid_masses.eqm", "mass2.s"),
    ] {
        let t = run(&["run", file, "--stop", "5", "--interval", "0.05", "--rtol", "1e-8"]);
        let e = max_error(&t, column, |t| (2.0 * t).cos());
        assert!(e < 1e-6, "{file}: {column} deviates from cos(2t) by {e}");
    }
}

#[test]
fn rc_circuit_charges_with_time_constant_one_second() {
    let t = run(&["run", "examples/rc_circuit.eqm", "--stop", "5", "--rtol", "1e-8"]);
    let e = max_error(&t, "capacitor.v", |t| 10.0 * (1.0 - (-t).exp()));
    assert!(e < 1e-5, "{e}");
}

/// The Cartesian pendulum after index reduction: on the circle, and the period of the 30 degree
/// swing is 2.0410 s (complete elliptic integral), so x is back at 0.5 then.
#[test]
fn cartesian_pendulum_stays_on_the_circle_with_the_exact_period() {
    let t = run(&[
        "run",
        "examples/pendulum.eqm",
        "--stop",
        "2.0410",
        "--interval",
        "0.001",
        "--rtol",
        "1e-9",
    ]);
    let (x, y) = (t.column("x"), t.column("y"));
    let drift = x
        .iter()
        .zip(&y)
        .map(|(x, y)| (x * x + y * y - 1.0).abs())
        .fold(0.0, f64::max);
    assert!(drift < 1e-9, "constraint drift {drift}");
    let last = *x.last().expect("rows");
    assert!((last - 0.5).abs() < 1e-3, "x(T) = {last}");
    // The rod force at the turning point is m g cos(30 deg).
    let f0 = t.column("F")[0];
    assert!((f0 - 9.81 * 0.75f64.sqrt()).abs() < 1e-9, "F(0) = {f0}");
}

/// Every fixed-step method and the adaptive ones run the spring-mass example through the CLI; the
/// fixed-step errors shrink with the step as their order says (convergence orders themselves are
/// measured in the integrators' tests).
#[test]
fn every_solver_runs_from_the_command_line() {
    for solver in [
        "euler",
        "heun",
        "midpoint",
        "rk4",
        "ab2",
        "ab4",
        "rkf45",
        "dopri5",
        "implicit-euler",
        "trapezoid",
        "auto",
    ] {
        let t = run(&[
            "run",
            "examples/spring_mass.eqm",
            "--solver",
            solver,
            "--stop",
            "1",
            "--step",
            "0.001",
            "--interval",
            "0.1",
        ]);
        let e = max_error(&t, "mass.flange_b.s", |t| (2.0 * t).cos());
        // The first-order methods' error is about h times the solution's curvature.
        let bound = if solver == "euler" || solver == "implicit-euler" {
            1e-2
        } else {
            1e-5
        };
        assert!(e < bound, "{solver}: error {e}");
    }
}

/// `--step` turns off the step size control of bdf and radau5 (and of the θ-methods): 100 steps
/// of 0.01 to t = 1, none rejected, as accurate as their orders say; without it they choose
/// their own steps. The explicit adaptive methods have no fixed-step mode and say so.
#[test]
fn step_gives_bdf_and_radau5_a_fixed_step() {
    for (solver, bound) in [("bdf", 1e-8), ("radau5", 1e-10), ("trapezoid", 1e-4)] {
        let common = [
            "run",
            "examples/spring_mass.eqm",
            "--solver",
            solver,
            "--stop",
            "1",
            "--interval",
            "0.1",
            "-v",
        ];
        let (code, out, err) = eqm(&[&common[..], &["--step", "0.01"][..]].concat());
        assert_eq!(code, 0, "{solver}: {err}");
        assert!(err.contains("100 steps, 0 rejected"), "{solver}: {err}");
        let e = max_error(&Table::parse(&out), "mass.flange_b.s", |t| (2.0 * t).cos());
        assert!(e < bound, "{solver}: error {e}");
        let (code, _, err) = eqm(&common);
        assert_eq!(code, 0, "{solver}: {err}");
        assert!(!err.contains("100 steps, 0 rejected"), "{solver} without --step: {err}");
    }
    let (code, _, err) = eqm(&[
        "run",
        "examples/spring_mass.eqm",
        "--solver",
        "dopri5",
        "--stop",
        "1",
        "--step",
        "0.01",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("dopri5 controls its step size") && err.contains("--step is ignored"),
        "{err}"
    );
}

/// Negative times are times, not flags: a run may start before 0.
#[test]
fn a_run_can_start_at_a_negative_time() {
    let t = run(&[
        "run",
        "examples/decay.eqm",
        "--start",
        "-1",
        "--stop",
        "0",
        "--interval",
        "0.5",
        "--rtol",
        "1e-8",
    ]);
    assert_eq!(t.column("time"), [-1.0, -0.5, 0.0]);
    assert!(max_error(&t, "x", |time| (-0.5 * (time + 1.0)).exp()) < 1e-7);
}

#[test]
fn csv_format_header_and_selected_variables() {
    let (code, out, _) = eqm(&[
        "run",
        "examples/decay.eqm",
        "--stop",
        "0.02",
        "--vars",
        "x",
        "--param",
        "k=2",
    ]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "time,x");
    assert_eq!(lines[1], "0,1", "shortest round-trip numbers");
    assert_eq!(lines.len(), 4);
    // --param changes the result without editing the file: x = exp(-2 t).
    let t = Table::parse(&out);
    assert!(max_error(&t, "x", |t| (-2.0 * t).exp()) < 1e-7);
}

#[test]
fn results_go_to_the_out_file() {
    let dir = std::env::temp_dir().join(format!("eqm-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("decay.csv");
    let path_text = path.display().to_string();
    let (code, out, _) = eqm(&["run", "examples/decay.eqm", "--stop", "1", "--out", &path_text]);
    assert_eq!(code, 0);
    assert!(out.is_empty());
    let t = Table::parse(&std::fs::read_to_string(&path).expect("written"));
    assert_eq!(t.header, ["time", "x"]);
    assert_eq!(t.rows.len(), 101);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn exit_codes_follow_the_spec() {
    // Usage errors: 2.
    assert_eq!(eqm(&["run", "examples/decay.eqm", "--solver", "magic"]).0, 2);
    assert_eq!(eqm(&["run", "examples/decay.eqm", "--start", "2", "--stop", "1"]).0, 2);
    let (code, _, err) = eqm(&["run", "examples/decay.eqm", "--stop", "-1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("the stop time -1 must not be before the start time 0"),
        "{err}"
    );
    // A stop equal to the start is an initialization-only run: one row.
    let (code, out, err) = eqm(&["run", "examples/decay.eqm", "--stop", "0"]);
    assert_eq!((code, out.lines().count()), (0, 2), "{err}");
    assert_eq!(eqm(&["run", "no/such/file.eqm"]).0, 2);
    // The model or the request does not fit it: 1, with a diagnostic.
    let (code, _, err) = eqm(&["run", "examples/decay.eqm", "--vars", "y"]);
    assert_eq!(code, 1);
    assert!(err.contains("E0708") && err.contains("did you mean"), "{err}");
    let (code, _, err) = eqm(&["run", "examples/decay.eqm", "--param", "kk=1"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("names no parameter") && err.contains("did you mean `k`"),
        "{err}"
    );
}

/// A solution that blows up: exit 3, the time and the variable named, the rows before kept.
#[test]
fn a_blow_up_stops_with_exit_3_and_keeps_the_rows() {
    let dir = std::env::temp_dir().join(format!("eqm-blowup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let model = dir.join("blowup.eqm");
    std::fs::write(
        &model,
        "model BlowUp\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = x^2;\nend BlowUp;\n",
    )
    .expect("written");
    let model_text = model.display().to_string();
    let (code, out, err) = eqm(&["run", &model_text, "--stop", "2", "--interval", "0.1"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("failed at time"), "{err}");
    let t = Table::parse(&out);
    // x = 1/(1 - t): rows up to shortly before t = 1 are there and correct (relative to the
    // growing solution).
    assert!(t.rows.len() >= 10, "{} rows", t.rows.len());
    for (time, x) in t.column("time").into_iter().zip(t.column("x")) {
        if time < 0.95 {
            let exact = 1.0 / (1.0 - time);
            assert!((x - exact).abs() < 1e-4 * exact, "x({time}) = {x}, exact {exact}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--plot` writes an SVG with a legend entry (and unit) per variable and axis labels.
#[test]
fn plot_file_is_written() {
    let dir = std::env::temp_dir().join(format!("eqm-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("pendulum.svg");
    let path_text = path.display().to_string();
    let (code, _, err) = eqm(&[
        "run",
        "examples/pendulum.eqm",
        "--stop",
        "2",
        "--vars",
        "x",
        "--plot",
        "x,F",
        "--plot-out",
        &path_text,
    ]);
    assert_eq!(code, 0, "{err}");
    let svg = std::fs::read_to_string(&path).expect("plot written");
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
    for label in ["x [m]", "F [N]", "time [s]"] {
        assert!(svg.contains(label), "missing `{label}`");
    }
    // PNG, with text drawn by the embedded font; other formats are a usage error, not a
    // silent SVG.
    let png = dir.join("p.png");
    let png_text = png.display().to_string();
    assert_eq!(
        eqm(&["run", "examples/decay.eqm", "--plot", "x", "--plot-out", &png_text]).0,
        0
    );
    let bytes = std::fs::read(&png).expect("PNG written");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let jpg = dir.join("p.jpg").display().to_string();
    assert_eq!(
        eqm(&["run", "examples/decay.eqm", "--plot", "x", "--plot-out", &jpg]).0,
        2
    );
    // A plot that cannot be written is a usage error; the results are still all written.
    let unwritable = dir.join("no such directory").join("p.svg").display().to_string();
    let (code, out, err) = eqm(&["run", "examples/decay.eqm", "--plot", "x", "--plot-out", &unwritable]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no plot written"), "{err}");
    assert_eq!(out.lines().count(), 1002, "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A user-supplied Butcher tableau (Kutta's third-order method) runs the spring-mass example with
/// third-order accuracy; an invalid tableau is a usage error naming the problem.
#[test]
fn user_tableau_from_a_file() {
    let error = |step: &str| {
        let t = run(&[
            "run",
            "examples/spring_mass.eqm",
            "--tableau",
            "examples/tableaux/kutta3.txt",
            "--step",
            step,
            "--stop",
            "1",
            "--interval",
            "0.5",
        ]);
        max_error(&t, "mass.flange_b.s", |t| (2.0 * t).cos())
    };
    let ratio = error("0.02") / error("0.01");
    // Third order: halving the step divides the error by about 2^3.
    assert!((6.0..10.0).contains(&ratio), "error ratio {ratio}");
    let dir = std::env::temp_dir().join(format!("eqm-tableau-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "0 |\n1 | 1\n  | 1/2 1/3\n").expect("written");
    let (code, _, err) = eqm(&["run", "examples/decay.eqm", "--tableau", &bad.display().to_string()]);
    assert_eq!(code, 2);
    assert!(err.contains("weights must sum to 1"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--param` is applied to the compiled program at run time: `-v` lists one JIT compilation
/// whatever the parameters, and the results follow the parameter.
#[test]
fn param_changes_results_without_recompiling() {
    let mut finals = Vec::new();
    for k in ["0.5", "2"] {
        let param = format!("k={k}");
        let (code, out, err) = eqm(&["-v", "run", "examples/decay.eqm", "--stop", "1", "--param", &param]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(err.matches("jit compile").count(), 1, "{err}");
        assert!(err.contains("by the jit"), "{err}");
        let t = Table::parse(&out);
        finals.push(*t.column("x").last().expect("rows"));
    }
    assert!((finals[0] - (-0.5f64).exp()).abs() < 1e-6, "{finals:?}");
    assert!((finals[1] - (-2.0f64).exp()).abs() < 1e-6, "{finals:?}");
}

/// The initial system of a model whose states all have start values reuses the simulation's
/// plan; with initial equations it is matched on its own. Both must give the same trajectory.
#[test]
fn start_values_and_initial_equations_give_the_same_run() {
    let dir = std::env::temp_dir().join(format!("eqm-init-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let model = |declarations: &str, initial: &str| {
        format!(
            "model Oscillator\n  parameter Real k = 4;\n  parameter Real m = 1;\n  {declarations}\n  Real f;\n  Real energy;\n{initial}equation\n  der(x) = v;\n  m*der(v) = f;\n  f = -k*x;\n  energy = 0.5*m*v^2 + 0.5*k*x^2;\nend Oscillator;\n"
        )
    };
    let with_starts = dir.join("starts.eqm");
    let with_initial = dir.join("initial.eqm");
    std::fs::write(
        &with_starts,
        model(
            "Real x(start = 1, fixed = true);\n  Real v(start = 0.5, fixed = true);",
            "",
        ),
    )
    .expect("writes");
    std::fs::write(
        &with_initial,
        model("Real x;\n  Real v;", "initial equation\n  x = 1;\n  v = 0.5;\n"),
    )
    .expect("writes");
    let options = ["--stop", "1", "--solver", "rk4", "--step", "0.01", "--interval", "0.25"];
    let a = run(&[&["run", with_starts.to_str().unwrap()][..], &options[..]].concat());
    let b = run(&[&["run", with_initial.to_str().unwrap()][..], &options[..]].concat());
    assert_eq!(a.header, b.header);
    assert_eq!(a.rows.len(), 5);
    for (ra, rb) in a.rows.iter().zip(&b.rows) {
        for (x, y) in ra.iter().zip(rb) {
            assert!((x - y).abs() <= 1e-12 * x.abs().max(1.0), "{ra:?} vs {rb:?}");
        }
    }
    // The energy is conserved up to the integrator's error: 0.5*0.25 + 0.5*4*1 = 2.125.
    let energy = a.header.iter().position(|h| h == "energy").expect("an energy column");
    assert_eq!(a.rows[0][energy], 2.125);
    std::fs::remove_dir_all(&dir).ok();
}

/// The real root of `z^3 + a*z + 3 = 0` for `a` near -1, by bisection on [-3, -1] (the cubic is
/// increasing there and changes sign).
fn cubic_root(a: f64) -> f64 {
    let f = |z: f64| z * z * z + a * z + 3.0;
    let (mut lo, mut hi) = (-3.0f64, -1.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < 0.0 { lo = mid } else { hi = mid }
    }
    0.5 * (lo + hi)
}

/// Newton from `z = 1` stalls at the local minimum of `|z^3 - z + 3|` (z = 1/sqrt(3)); the
/// homotopy fallback reaches the root, for a scalar implicit equation and for a torn loop, on
/// both back ends.
#[test]
fn homotopy_solves_what_newton_alone_cannot() {
    let dir = std::env::temp_dir().join(format!("eqm-homotopy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let scalar = dir.join("scalar.eqm");
    std::fs::write(
        &scalar,
        "model Cubic\n  Real z(start = 1);\n  Real x(start = 0, fixed = true);\nequation\n  z^3 - z + 3 = 0;\n  der(x) = z;\nend Cubic;\n",
    )
    .expect("writes");
    let torn = dir.join("loop.eqm");
    std::fs::write(
        &torn,
        "model CubicLoop\n  Real z(start = 1);\n  Real y;\n  Real x(start = 0, fixed = true);\nequation\n  z^3 - z + 3 = y;\n  y = 0.001*z;\n  der(x) = z;\nend CubicLoop;\n",
    )
    .expect("writes");
    for (file, a) in [(&scalar, -1.0), (&torn, -1.001)] {
        let root = cubic_root(a);
        for backend in [&[][..], &["--interpreter"][..]] {
            let args = [
                &["run", file.to_str().unwrap(), "--stop", "1", "--interval", "0.5"][..],
                backend,
            ]
            .concat();
            let t = run(&args);
            let z = t.column("z");
            assert!(
                (z[0] - root).abs() <= 1e-12,
                "{file:?} {backend:?}: z = {}, root {root}",
                z[0]
            );
            let x = t.column("x");
            assert!((x[2] - root).abs() <= 1e-9, "{file:?}: x(1) = {}", x[2]);
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A Boolean parameter is set with `true` or `false`: here it makes a conditional resistor
/// present, in parallel with the first (2 A each from 10 V across 5 ohm).
#[test]
fn a_boolean_parameter_is_given_as_true_or_false() {
    let path = "tests/language/conditional_components.eqm";
    let one = run(&["run", path, "--model", "Cond", "--stop", "0", "--vars", "src.p.i"]);
    let two = run(&[
        "run",
        path,
        "--model",
        "Cond",
        "--stop",
        "0",
        "--vars",
        "src.p.i",
        "--param",
        "useExtra=true",
    ]);
    assert_eq!(one.column("src.p.i"), [-2.0]);
    assert_eq!(two.column("src.p.i"), [-4.0]);
}

/// The command line reads the data files a model names (`readMatrix`), relative to the model
/// file's directory: the table of `tests/language/read_matrix.csv` interpolated at t = 2 lies
/// halfway between its points (1, 2) and (3, 3).
#[test]
fn a_table_read_from_a_csv_file_beside_the_model_is_interpolated() {
    let t = run(&[
        "run",
        "tests/language/read_matrix.eqm",
        "--stop",
        "2",
        "--interval",
        "1",
        "--vars",
        "y",
    ]);
    assert_eq!(t.column("y"), [0.0, 2.0, 2.5]);
}

/// The teacup of system dynamics runs with the model's own Euler step DT = 0.125 and reports
/// every DT; `--solver` wins over the model's, and says that the model's step goes unused.
#[test]
fn a_model_chooses_its_solver_and_step_and_the_command_line_wins() {
    let t = run(&["run", "examples/teacup.eqm", "--vars", "T"]);
    assert_eq!(t.column("time").len(), 241, "a row every DT from 0 to 30");
    let t10 = t.column("T")[80];
    assert!(
        (t10 - (70.0 + 110.0 * 0.9875f64.powi(80))).abs() < 1e-9,
        "T(10) = {t10}"
    );
    let (code, out, err) = eqm(&[
        "run",
        "examples/teacup.eqm",
        "--solver",
        "dopri5",
        "--rtol",
        "1e-10",
        "--stop",
        "10",
        "--vars",
        "T",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("the model's step 0.125 is not used"), "{err}");
    let t10 = *Table::parse(&out).column("T").last().expect("rows");
    assert!((t10 - (70.0 + 110.0 * (-1.0f64).exp())).abs() < 1e-7, "T(10) = {t10}");
}

/// A file whose only model is inside a package runs without `--model`; one whose package holds
/// several is an error naming each by its full name.
#[test]
fn the_model_inside_a_package_is_the_default() {
    let dir = std::env::temp_dir().join(format!("eqm-packaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let decay = "model Decay\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -x;\nend Decay;\n";
    let one = dir.join("one.mo");
    std::fs::write(
        &one,
        format!("package P\n  connector Pin\n    Real v;\n    flow Real i;\n  end Pin;\n  package Inner\n{decay}  end Inner;\nend P;\n"),
    )
    .expect("writes");
    let t = run(&["run", one.to_str().unwrap(), "--stop", "1", "--rtol", "1e-8"]);
    assert!(max_error(&t, "x", |t| (-t).exp()) < 1e-6);
    let several = dir.join("several.mo");
    let grow = decay.replace("Decay", "Grow").replace("-x", "x");
    std::fs::write(&several, format!("package Q\n{decay}{grow}end Q;\n")).expect("writes");
    let (code, _, stderr) = eqm(&["run", several.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("E0201") && stderr.contains("Q.Decay, Q.Grow"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
