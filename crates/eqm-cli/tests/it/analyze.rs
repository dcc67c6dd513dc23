//! `eqm analyze` as a user runs it: the report's sections, `--json`, `--param`, `--from`,
//! `--at`, and the exit codes (a model without a steady state is a result, a model the
//! analysis cannot handle a diagnostic).

use crate::cli::eqm;

#[test]
fn analyze_prints_every_section_of_the_report() {
    let (code, out, err) = eqm(&["analyze", "examples/decay.eqm"]);
    assert_eq!(code, 0, "{err}");
    for section in [
        "steady state\n",
        "invariants (conserved combinations of the states)\n",
        "linearisation at the steady state (symbolic Jacobian)\n",
        "modes\n",
        "time scales and stiffness",
    ] {
        assert!(out.contains(section), "{section} missing in\n{out}");
    }
    // der(x) = -k x with k = 0.5: λ = -0.5, T = 2.
    assert!(out.contains("1  -0.5        2"), "{out}");
}

#[test]
fn analyze_takes_parameters_like_run() {
    let (code, out, err) = eqm(&["analyze", "examples/decay.eqm", "--param", "k=4"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1  -4          0.25"), "{out}");
}

#[test]
fn analyze_json_has_every_number() {
    let (code, out, err) = eqm(&["analyze", "examples/reaction_invariant.eqm", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.trim_start().starts_with('{') && out.trim_end().ends_with('}'),
        "{out}"
    );
    for key in [
        "\"steady_state\": {\"status\": \"found\"",
        "\"invariants\": [{\"coefficients\": [1, 1, 1], \"value\": 1}]",
        "\"A\": [[-2, 1, 0], [2, -2, 0.5], [0, 1, -0.5]]",
        "\"stability\": \"stable\"",
        "\"stiffness_ratio\": 3.5",
    ] {
        assert!(out.contains(key), "{key} missing in\n{out}");
    }
}

#[test]
fn a_model_without_a_steady_state_is_a_result() {
    let (code, out, err) = eqm(&["analyze", "examples/bouncing_ball.eqm"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("none: v changes at the constant rate -9.81"), "{out}");
    assert!(out.contains("linearisation at the start values"), "{out}");
}

#[test]
fn from_starts_the_search_elsewhere() {
    // g·N = t0·N/(1 − N/Nk) has the roots N = 0 and N = Nk(1 − t0/g) = 150: Newton's method
    // from the start value 10 finds 0, from 140 the capacity-limited population.
    let (code, out, err) = eqm(&["analyze", "examples/population.eqm"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("N      10     0"), "{out}");
    let (code, out, err) = eqm(&["analyze", "examples/population.eqm", "--from", "N=140"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("N      140    150"), "{out}");
    assert!(out.contains("stability: asymptotically stable"), "{out}");
    let (code, _, err) = eqm(&["analyze", "examples/decay.eqm", "--from", "nosuch=1"]);
    assert_eq!(code, 1);
    assert!(err.contains("E0715"), "{err}");
}

#[test]
fn at_linearises_at_a_time_of_a_simulation() {
    let (code, out, err) = eqm(&["analyze", "examples/decay.eqm", "--at", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("linearisation at time 2 of a simulation from the start"),
        "{out}"
    );
    let (code, _, err) = eqm(&["analyze", "examples/decay.eqm", "--at", "-1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("before the start time"), "{err}");
}

#[test]
fn models_the_analysis_cannot_handle_exit_with_their_code() {
    let (code, out, err) = eqm(&["analyze", "examples/delayed_logistic.eqm"]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("E0803"), "{err}");
    let (code, _, err) = eqm(&["analyze", "examples/stick_slip_parametric.eqm"]);
    assert_eq!(code, 1);
    assert!(err.contains("E0801"), "{err}");
}

#[test]
fn index_reduced_models_are_analysed_in_their_state_space_form() {
    let (code, out, err) = eqm(&["analyze", "examples/pendulum.eqm"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("analysis of Pendulum (2 states)"), "{out}");
    assert!(out.contains("0 ± 3.13209i"), "{out}");
}

#[test]
fn analyze_advises_stop_time_step_and_method() {
    // der(x) = -k x with k = 0.5: T = 2, so t_sim = 10, h = min(0.2, 0.05) = 0.05; the
    // explicit Euler method is stable up to h = 2/|λ| = 4.
    let (code, out, err) = eqm(&["analyze", "examples/decay.eqm"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("advice: stop time, step and method\n"), "{out}");
    assert!(
        out.contains("simulation time 5·T_max = 10, step min(T_min/10, t_sim/200) = 0.05"),
        "{out}"
    );
    assert!(out.contains("  euler           yes          4\n"), "{out}");
    assert!(out.contains("recommended: --solver rk4 --step 0.05"), "{out}");
    let (code, out, err) = eqm(&["analyze", "examples/decay.eqm", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"advice\": {\"t_min\": 2, \"t_max\": 2"), "{out}");
}

#[test]
fn analyze_judges_a_user_tableau_and_draws_the_stability_region() {
    let dir = std::env::temp_dir().join(format!("eqm-analyze-svg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("decay.svg");
    let svg_arg = svg.to_str().unwrap();
    let (code, out, err) = eqm(&[
        "analyze",
        "examples/decay.eqm",
        "--tableau",
        "examples/tableaux/kutta3.txt",
        "--svg",
        svg_arg,
    ]);
    assert_eq!(code, 0, "{err}");
    // The user's method is judged with the named ones: a third-order method with three stages
    // has R(z) = 1 + z + z²/2 + z³/6, stable on the real axis down to z = -2.5127, so for
    // λ = -0.5 up to h = 5.0255.
    assert!(out.contains("  kutta3          yes          5.02549\n"), "{out}");
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(
        picture.starts_with("<svg") && picture.contains("stability region"),
        "{picture}"
    );
    // A solver EQM does not know is a usage error.
    let (code, _, err) = eqm(&["analyze", "examples/decay.eqm", "--solver", "nope", "--svg", svg_arg]);
    assert_eq!(code, 2, "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn analyze_sweeps_tabulate_steady_states_and_eigenvalues() {
    // λ = -k for each k.
    let (code, out, err) = eqm(&["analyze", "examples/decay.eqm", "--sweep", "k=0.5,1,2"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<&str> = out.lines().collect();
    assert!(rows[0].starts_with("k ") && rows[0].contains("eigenvalues"), "{out}");
    for (row, (k, lambda)) in rows[1..].iter().zip([("0.5", "-0.5"), ("1", "-1"), ("2", "-2")]) {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[0], k, "{out}");
        assert!(cells.contains(&lambda), "{out}");
    }
    let (code, out, err) = eqm(&["analyze", "examples/decay.eqm", "--sweep", "k=1,2", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("{\"parameters\": [\"k\"], \"runs\": [{\"values\": [1], \"analysis\": {"),
        "{out}"
    );
    // A name swept twice is a usage error.
    let (code, _, err) = eqm(&["analyze", "examples/decay.eqm", "--sweep", "k=1", "--sweep", "k=2"]);
    assert_eq!(code, 2, "{err}");
}
