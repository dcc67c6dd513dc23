//! Constraint projection and the forms of high-index models, through the `eqm`
//! binary as a user runs them: declared invariants kept while the plain field drifts,
//! redundant invariants (rank-deficient `G`), projection with events, the choice between the
//! dummy-derivative and the embedding form, the state-choice check of dummy-derivative runs,
//! rigidly coupled masses against `cos(ωt)` for long times, the Cartesian pendulum against its
//! exact solution (Jacobi elliptic functions) through many passes of the bottom and of the
//! horizontal, the double pendulum through configurations where every static state choice is
//! singular.

use crate::cli;
use crate::pendulum;

use cli::{Table, eqm};

/// Writes `text` to a fresh file in the temp directory and returns its path.
fn model_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("eqm-projection-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write model");
    path
}

/// Runs `eqm run MODEL ARGS -v` (ARGS separated by spaces), which must succeed: its standard
/// output and error.
fn run_verbose(model: &str, args: &str) -> (String, String) {
    let mut all = vec!["run", model];
    all.extend(args.split_whitespace());
    all.push("-v");
    let (code, stdout, stderr) = eqm(&all);
    assert_eq!(code, 0, "eqm {all:?}:\n{stderr}");
    (stdout, stderr)
}

/// `max|g|` at the end and over the run, from the `-v` report.
fn residuals(stderr: &str) -> (f64, f64) {
    let line = stderr
        .lines()
        .find(|l| l.contains("constraint residual"))
        .unwrap_or_else(|| panic!("no residual report in:\n{stderr}"));
    let numbers: Vec<f64> = line
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 2, "{line}");
    (numbers[0], numbers[1])
}

/// Lotka–Volterra with its first integral `V = δu − γ ln u + βw − α ln w` declared as an
/// invariant: explicit Runge–Kutta methods do not keep a nonlinear first integral, so the plain
/// field drifts; the projection holds it.
const LOTKA_VOLTERRA: &str = r#"
model LotkaVolterra
  parameter Real alpha = 1.5;
  parameter Real beta = 1;
  parameter Real gamma = 3;
  parameter Real delta = 1;
  parameter Real V0 = delta*1 - gamma*log(1) + beta*2 - alpha*log(2) "The invariant's value at the start";
  Real u(start = 1, fixed = true);
  Real w(start = 2, fixed = true);
equation
  der(u) = alpha*u - beta*u*w;
  der(w) = delta*u*w - gamma*w;
invariant
  delta*u - gamma*log(u) + beta*w - alpha*log(w) = V0;
end LotkaVolterra;
"#;

#[test]
fn a_declared_nonlinear_invariant_is_kept_while_the_plain_field_drifts() {
    let path = model_file("lv.eqm", LOTKA_VOLTERRA);
    let v0: f64 = 1.0 - 0.0 + 2.0 - 1.5 * 2f64.ln();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            path.to_str().unwrap(),
            "--stop",
            "400",
            "--rtol",
            "1e-12",
            "--atol",
            "1e-14",
            "-v",
            "--out",
            "/dev/null",
        ];
        args.extend_from_slice(extra);
        let (code, _, stderr) = eqm(&args);
        assert_eq!(code, 0, "{stderr}");
        residuals(&stderr)
    };
    let (drift_end, _) = run(&["--solver", "dopri5", "--stabilize", "off"]);
    let (kept_end, kept_max) = run(&["--solver", "dopri5", "--stabilize", "K=20"]);
    let (radau_end, radau_max) = run(&["--solver", "radau5"]);
    // Without projection the error of the first integral grows with time (about 1.5e-10 after
    // 400 time units at this tolerance); with it, it stays at the level of rounding.
    assert!(drift_end > 1e-11 * v0, "the plain field did not drift: {drift_end}");
    assert!(kept_max < 1e-12 * v0, "{kept_end} {kept_max}");
    assert!(radau_max < 1e-12 * v0, "{radau_end} {radau_max}");
    assert!(kept_max < drift_end / 10.0);
}

#[test]
fn redundant_invariants_give_a_rank_deficient_g_and_still_project() {
    // The same first integral twice (once scaled): G has rank 1, not 2.
    let text = LOTKA_VOLTERRA.replace(
        "invariant\n",
        "invariant\n  2*(delta*u - gamma*log(u) + beta*w - alpha*log(w)) = 2*V0;\n",
    );
    let path = model_file("lv_redundant.eqm", &text);
    let (_, stderr) = run_verbose(
        path.to_str().unwrap(),
        "--stop 200 --rtol 1e-10 --solver dopri5 --out /dev/null",
    );
    assert!(stderr.contains("2 invariant(s) kept by projection"), "{stderr}");
    assert!(stderr.contains("rank of G 1"), "{stderr}");
    let (_, max) = residuals(&stderr);
    assert!(max < 1e-8, "{stderr}");
}

#[test]
fn a_linear_invariant_of_a_reaction_network_stays_exact_under_bdf() {
    // A <-> B -> C with mass action: the total concentration is conserved.
    let text = r#"
model Reactions
  parameter Real k1 = 0.04;
  parameter Real k2 = 1e4;
  parameter Real k3 = 3e7;
  Real a(start = 1, fixed = true);
  Real b(start = 0, fixed = true);
  Real c(start = 0, fixed = true);
equation
  der(a) = -k1*a + k2*b*c;
  der(b) = k1*a - k2*b*c - k3*b^2;
  der(c) = k3*b^2;
invariant
  a + b + c = 1;
end Reactions;
"#;
    let path = model_file("reactions.eqm", text);
    let (_, stderr) = run_verbose(
        path.to_str().unwrap(),
        "--stop 1e5 --rtol 1e-8 --atol 1e-12 --solver bdf --out /dev/null",
    );
    let (end, max) = residuals(&stderr);
    assert!(max < 1e-12, "{end} {max}");
}

#[test]
fn projection_runs_through_events() {
    // A counter of the prey's peaks: when-clauses send the run through the event layer, whose
    // field is projected too.
    let text = LOTKA_VOLTERRA
        .replace(
            "  Real w(start = 2, fixed = true);\n",
            "  Real w(start = 2, fixed = true);\n  Integer peaks(start = 0);\n",
        )
        .replace(
            "invariant\n",
            "  when der(u) < 0 then\n    peaks = pre(peaks) + 1;\n  end when;\ninvariant\n",
        );
    let path = model_file("lv_events.eqm", &text);
    let (stdout, stderr) = run_verbose(
        path.to_str().unwrap(),
        "--stop 50 --rtol 1e-10 --solver dopri5 --vars peaks",
    );
    assert!(stderr.contains("events"), "{stderr}");
    let (_, max) = residuals(&stderr);
    assert!(max < 1e-9, "{stderr}");
    let rows = Table::parse(&stdout);
    let peaks = *rows.column("peaks").last().expect("rows");
    // The period of this cycle is about 2.3 time units, so 50 units hold about 20 peaks.
    assert!((15.0..=25.0).contains(&peaks), "{peaks} peaks");
}

#[test]
fn rigid_masses_keep_the_dummy_derivative_form_and_match_the_cosine_for_long_times() {
    // The constraint s1 = s2 is linear with constant coefficients: the static state choice is
    // valid forever, and both forms give cos(2t).
    for form in ["auto", "embedding"] {
        let (stdout, stderr) = run_verbose(
            "examples/rigid_masses.eqm",
            &format!(
                "--stop 1000 --rtol 1e-10 --atol 1e-12 --interval 0.5 --vars mass1.s,mass2.s,mass2.v --index-reduction {form}"
            ),
        );
        let expected = if form == "auto" {
            "dummy derivatives"
        } else {
            "embedding form"
        };
        assert!(stderr.contains(expected), "{form}: {stderr}");
        let csv = Table::parse(&stdout);
        let mut worst: f64 = 0.0;
        for row in &csv.rows {
            let t = row[0];
            worst = worst.max((row[1] - (2.0 * t).cos()).abs());
            worst = worst.max((row[2] - (2.0 * t).cos()).abs());
            worst = worst.max((row[3] + 2.0 * (2.0 * t).sin()).abs());
        }
        // 318 periods: the phase error of a 1e-10 run stays well below 1e-6.
        assert!(worst < 1e-6, "{form}: {worst}");
    }
}

#[test]
fn a_singular_static_state_choice_stops_with_a_diagnostic() {
    // The pendulum released with the rod horizontal: with x as state, y cannot be computed from
    // x^2 + y^2 = L^2 (its derivative 2y vanishes), so dummy derivatives would keep the bob at
    // rest, a silently wrong answer. The run stops instead, naming the variables.
    let text = std::fs::read_to_string(format!("{}/examples/pendulum.eqm", crate::REPO))
        .expect("pendulum")
        .replace("start = 0.5, fixed = true", "start = 1, fixed = true")
        .replace("start = -0.866)", "start = 0)");
    let path = model_file("horizontal.eqm", &text);
    let (code, _, stderr) = eqm(&[
        "run",
        path.to_str().unwrap(),
        "--index-reduction",
        "dummy",
        "--stop",
        "5",
    ]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("E0713"), "{stderr}");
    assert!(stderr.contains("`y`") && stderr.contains("`x`"), "{stderr}");
    assert!(stderr.contains("--index-reduction embedding"), "{stderr}");
    // The default form runs it, through the horizontal and back.
    let (code, _, stderr) = eqm(&["run", path.to_str().unwrap(), "--stop", "5", "--vars", "x,y", "-v"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("embedding form with projection"), "{stderr}");
}

#[test]
fn explain_shows_declared_invariants_and_the_gain() {
    let text = LOTKA_VOLTERRA.replace(
        "end LotkaVolterra;",
        "  annotation(stabilize(K = 7));\nend LotkaVolterra;",
    );
    let path = model_file("lv_explain.eqm", &text);
    let (code, stdout, _) = eqm(&["explain", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("declared invariants (1), kept by projection"),
        "{stdout}"
    );
    assert!(stdout.contains("K = 7 (annotation stabilize)"), "{stdout}");
    let (_, _, stderr) = eqm(&["run", path.to_str().unwrap(), "--stop", "1", "-v", "--out", "/dev/null"]);
    assert!(stderr.contains("K = 7 (given)"), "{stderr}");
}

#[test]
fn an_invariant_that_cannot_be_evaluated_is_a_located_diagnostic() {
    let text = "model BadInvariant\n  Real x(start = 1, fixed = true);\n  Real y;\nequation\n  der(x) = -x;\n  y = 2*x;\ninvariant\n  der(y) = -y;\nend BadInvariant;\n";
    let path = model_file("bad_invariant.eqm", text);
    let (code, _, stderr) = eqm(&["run", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stderr.matches("E0602").count(), 1, "{stderr}");
    assert!(stderr.contains("bad_invariant.eqm:8:3"), "{stderr}");
    assert!(stderr.contains("invariant `der(y) = -y`"), "{stderr}");
}

#[test]
fn the_pendulum_matches_the_elliptic_solution_through_many_passes() {
    // Released with the rod horizontal (m = L = g = 1): the bob passes the bottom and reaches
    // the other horizontal every half period (7.4163), so every static choice of two states
    // among x, y, vx, vy becomes singular again and again. Positions, velocities and the rod
    // force (the multiplier) match the exact solution at t = 1, 5, 10 and 100.
    let (stdout, stderr) = run_verbose(
        "examples/pendulum_long.eqm",
        "--stop 100 --rtol 1e-10 --atol 1e-10 --interval 1 --vars x,y,vx,vy,F",
    );
    assert!(stderr.contains("embedding form with projection"), "{stderr}");
    let table = Table::parse(&stdout);
    for t in [1.0, 5.0, 10.0, 100.0] {
        let row = table
            .rows
            .iter()
            .find(|r| (r[0] - t).abs() < 1e-9)
            .unwrap_or_else(|| panic!("no row at t = {t}"));
        let exact = pendulum::exact(t);
        let expected = [exact.x, exact.y, exact.vx, exact.vy, exact.force];
        for (k, (got, want)) in row[1..].iter().zip(expected).enumerate() {
            assert!(
                (got - want).abs() < 1e-6,
                "t = {t}: {} is {got}, exact {want}",
                ["x", "y", "vx", "vy", "F"][k]
            );
        }
    }
    // The dummy-derivative form cannot do this: it stops where its state choice is singular.
    let (code, _, stderr) = eqm(&[
        "run",
        "examples/pendulum_long.eqm",
        "--index-reduction",
        "dummy",
        "--stop",
        "10",
    ]);
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("E0713") && stderr.contains("x^2 + y^2 = L^2"),
        "{stderr}"
    );
}

#[test]
fn the_constraint_drift_stays_below_1e_8_over_100_periods_and_grows_without_projection() {
    let stop = format!("{}", 100.0 * pendulum::PERIOD);
    let run = |stabilize: &str| {
        let (code, _, stderr) = eqm(&[
            "run",
            "examples/pendulum_long.eqm",
            "--stop",
            &stop,
            "--rtol",
            "1e-10",
            "--atol",
            "1e-10",
            "--interval",
            "1",
            "--stabilize",
            stabilize,
            "-v",
            "--out",
            "/dev/null",
        ]);
        assert_eq!(code, 0, "{stderr}");
        residuals(&stderr)
    };
    let (_, projected) = run("K=1.4142135623730951");
    let (plain_end, plain_max) = run("off");
    assert!(projected < 1e-8, "projected drift {projected}");
    // Without projection the residual grows with time to far above that.
    assert!(plain_end > 1e-6 && plain_max >= plain_end, "plain drift {plain_end}");
    assert!(plain_end > 100.0 * projected);
}

#[test]
fn the_double_pendulum_runs_through_singular_configurations_of_every_static_choice() {
    // Both rods start horizontal at rest; each rod passes the vertical and the horizontal many
    // times in 10 s. No exact solution exists; the energy is conserved (E = 0 with the pivot
    // as the zero of potential energy) and the constraints hold.
    let (stdout, stderr) = run_verbose(
        "examples/double_pendulum.eqm",
        "--stop 10 --rtol 1e-10 --atol 1e-10 --interval 0.05 --vars x1,y1,x2,y2,vx1,vy1,vx2,vy2",
    );
    let (_, max) = residuals(&stderr);
    assert!(max < 1e-8, "{stderr}");
    let t = Table::parse(&stdout);
    let (x1, y1, x2, y2) = (t.column("x1"), t.column("y1"), t.column("x2"), t.column("y2"));
    let (vx1, vy1, vx2, vy2) = (t.column("vx1"), t.column("vy1"), t.column("vx2"), t.column("vy2"));
    let mut passes = 0;
    for k in 0..t.rows.len() {
        // m1 = m2 = 1, g = 9.81 as in the example.
        let energy = 0.5 * (vx1[k].powi(2) + vy1[k].powi(2) + vx2[k].powi(2) + vy2[k].powi(2)) + 9.81 * (y1[k] + y2[k]);
        assert!(energy.abs() < 1e-6, "energy {energy} at t = {}", t.rows[k][0]);
        assert!(((x1[k].powi(2) + y1[k].powi(2)).sqrt() - 1.0).abs() < 1e-8);
        assert!((((x2[k] - x1[k]).powi(2) + (y2[k] - y1[k]).powi(2)).sqrt() - 1.0).abs() < 1e-8);
        if k > 0 && (x2[k] - x1[k]).signum() != (x2[k - 1] - x1[k - 1]).signum() {
            passes += 1;
        }
    }
    // The outer rod passes the vertical (x2 = x1, where y2 - y1 cannot serve as a state) many times.
    assert!(passes >= 4, "{passes} passes of the vertical");
}

#[test]
fn masses_coupled_by_a_lever_index_2_match_the_cosine_for_long_times() {
    // The velocity constraint v2 = r*v1 (index 2) is linear with constant coefficients: the
    // dummy-derivative form is valid and chosen; the embedding form keeps the constraint by
    // projection. Both give s1 = cos 2t, s2 = 1 + 2 cos 2t and the lever force f = -6 cos 2t.
    for form in ["auto", "embedding"] {
        let (stdout, _) = run_verbose(
            "examples/coupled_masses_index2.eqm",
            &format!("--stop 500 --rtol 1e-10 --atol 1e-12 --interval 0.25 --vars s1,s2,f --index-reduction {form}"),
        );
        let t = Table::parse(&stdout);
        let mut worst: f64 = 0.0;
        for row in &t.rows {
            let c = (2.0 * row[0]).cos();
            worst = worst.max((row[1] - c).abs()).max((row[2] - 1.0 - 2.0 * c).abs());
            worst = worst.max((row[3] + 6.0 * c).abs() / 6.0);
        }
        assert!(worst < 1e-6, "{form}: {worst}");
    }
}
