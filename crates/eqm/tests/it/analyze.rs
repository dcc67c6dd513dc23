//! The model analysis (`eqm::analyze`) against closed forms: steady states, invariants, the
//! matrices of the linearisation (against hand derivation and central differences of the
//! compiled right-hand side), eigenvalues, time constants, stiffness and the sum of modes.

use crate::compile;
use eqm::analyze::{self, AnalyzeOptions, Complex, ModelAnalysis, Point, Stability, Steady};
use eqm::{IndexForm, ModelOptions, Session};
use std::f64::consts::PI;

fn analysis(text: &str) -> ModelAnalysis {
    analysis_with(text, &AnalyzeOptions::default())
}

fn analysis_with(text: &str, options: &AnalyzeOptions) -> ModelAnalysis {
    compile(text).analyze(options).expect("the analysis runs")
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

/// The eigenvalues sorted by imaginary part, then real part, for comparing with a list.
fn sorted(mut values: Vec<Complex<f64>>) -> Vec<Complex<f64>> {
    values.sort_by(|a, b| a.re.partial_cmp(&b.re).unwrap().then(a.im.partial_cmp(&b.im).unwrap()));
    values
}

fn assert_eigenvalues(a: &ModelAnalysis, expected: &[Complex<f64>], tol: f64) {
    let got = sorted(a.eigenvalues());
    let expected = sorted(expected.to_vec());
    assert_eq!(got.len(), expected.len(), "{got:?}");
    for (g, e) in got.iter().zip(&expected) {
        assert!((g - e).norm() <= tol * (1.0 + e.norm()), "{got:?} vs {expected:?}");
    }
}

fn steady(a: &ModelAnalysis) -> &[f64] {
    match &a.steady {
        Steady::Found(s) => &s.x,
        other => panic!("no steady state: {other:?}"),
    }
}

const OSCILLATOR: &str = "model Oscillator
  parameter Real w = 3;
  parameter Real zeta = 0.2;
  Real x(start = 1, fixed = true, unit = \"m\");
  Real v(start = 0, fixed = true, unit = \"m/s\");
equation
  der(x) = v;
  der(v) = -w^2*x - 2*zeta*w*v;
end Oscillator;
";

#[test]
fn damped_oscillator_has_its_closed_form_eigenvalues_and_time_constant() {
    let a = analysis(OSCILLATOR);
    let (w, zeta): (f64, f64) = (3.0, 0.2);
    let x = steady(&a);
    assert!(x.iter().all(|v| v.abs() < 1e-12), "{x:?}");
    assert_eq!(a.state_names(), ["x", "v"]);
    // A by hand: [0, 1; -w², -2ζw].
    let hand = [[0.0, 1.0], [-w * w, -2.0 * zeta * w]];
    for (i, row) in hand.iter().enumerate() {
        for (j, value) in row.iter().enumerate() {
            assert!(close(a.linearization.a[(i, j)], *value, 1e-14), "A[{i}][{j}]");
        }
    }
    let re = -zeta * w;
    let im = w * (1.0 - zeta * zeta).sqrt();
    assert_eigenvalues(&a, &[Complex::new(re, im), Complex::new(re, -im)], 1e-12);
    let mode = &a.modal.modes[0];
    assert!(close(mode.damping.unwrap(), zeta, 1e-12));
    assert!(close(mode.natural_frequency.unwrap(), w, 1e-12));
    assert!(close(mode.frequency.unwrap(), im, 1e-12));
    // T = min(1/|Re λ|, 2π/|Im λ|) = min(1/0.6, 2π/2.939) = 1.6667.
    let t = (1.0 / (zeta * w)).min(2.0 * PI / im);
    assert!(close(mode.time_constant, t, 1e-12));
    assert!(close(a.modal.stiffness.unwrap(), 1.0, 1e-12));
    assert_eq!(a.modal.stability, Stability::Stable);
    // The sum of modes from x(0) = 1, v(0) = 0: x(t) = e^{-ζwt}(cos ω_d t + ζw/ω_d sin ω_d t).
    for t in [0.0, 0.3, 1.7] {
        let sum: f64 = a
            .modal
            .modes
            .iter()
            .map(|m| (m.coefficient.unwrap() * (m.eigenvalue * t).exp() * m.vector[0]).re)
            .sum();
        let exact = (re * t).exp() * ((im * t).cos() + (zeta * w / im) * (im * t).sin());
        assert!((sum - exact).abs() < 1e-12, "x({t}) = {sum} vs {exact}");
    }
}

/// `n` nodes of capacitance C, each joined to the next by R, the first to ground through R and
/// the last open: `C v' = M v / R` with M tridiagonal (1, −2, 1) and −1 in its last diagonal
/// entry, whose eigenvalues are `−4 sin²(θ_k/2)/(RC)`, `θ_k = (2k − 1)π/(2n + 1)`.
#[test]
fn rc_ladder_has_its_known_eigenvalues() {
    let n = 6;
    let (r, c) = (2.0, 0.25);
    let text = format!(
        "model Ladder
  parameter Integer n = {n};
  parameter Real R = {r};
  parameter Real C = {c};
  Real v[n](each start = 1, each fixed = true);
equation
  C*der(v[1]) = -v[1]/R - (v[1] - v[2])/R;
  for i in 2:n-1 loop
    C*der(v[i]) = (v[i-1] - v[i])/R - (v[i] - v[i+1])/R;
  end for;
  C*der(v[n]) = (v[n-1] - v[n])/R;
end Ladder;
"
    );
    let a = analysis(&text);
    assert!(steady(&a).iter().all(|v| v.abs() < 1e-12));
    let expected: Vec<Complex<f64>> = (1..=n)
        .map(|k| {
            let theta = (2 * k - 1) as f64 * PI / (2 * n + 1) as f64;
            Complex::new(-4.0 * (theta / 2.0).sin().powi(2) / (r * c), 0.0)
        })
        .collect();
    assert_eigenvalues(&a, &expected, 1e-12);
    let slowest = expected.iter().map(|l| l.re.abs()).fold(f64::INFINITY, f64::min);
    let fastest = expected.iter().map(|l| l.re.abs()).fold(0.0, f64::max);
    assert!(close(a.modal.t_max.unwrap(), 1.0 / slowest, 1e-12));
    assert!(close(a.modal.stiffness.unwrap(), fastest / slowest, 1e-10));
}

/// Two RC stages built from the standard library's components: the states are the capacitor
/// voltages, and A by hand is `[−2, 1; 1, −1]/(RC)` around the steady state v1 = v2 = V.
#[test]
fn component_rc_ladder_matches_the_hand_derivation() {
    let text = "model Ladder2
  Electrical.Analog.Sources.ConstantVoltage source(V = 5);
  Electrical.Analog.Basic.Resistor r1(R = 100);
  Electrical.Analog.Basic.Resistor r2(R = 100);
  Electrical.Analog.Basic.Capacitor c1(C = 0.01, v(start = 0, fixed = true));
  Electrical.Analog.Basic.Capacitor c2(C = 0.01, v(start = 0, fixed = true));
  Electrical.Analog.Basic.Ground ground;
equation
  connect(source.p, r1.p);
  connect(r1.n, c1.p);
  connect(r1.n, r2.p);
  connect(r2.n, c2.p);
  connect(c1.n, ground.p);
  connect(c2.n, ground.p);
  connect(source.n, ground.p);
end Ladder2;
";
    let a = analysis(text);
    assert_eq!(a.state_names(), ["c1.v", "c2.v"]);
    let x = steady(&a);
    assert!(close(x[0], 5.0, 1e-12) && close(x[1], 5.0, 1e-12), "{x:?}");
    let rc = 100.0 * 0.01;
    let hand = [[-2.0 / rc, 1.0 / rc], [1.0 / rc, -1.0 / rc]];
    for (i, row) in hand.iter().enumerate() {
        for (j, value) in row.iter().enumerate() {
            assert!(
                close(a.linearization.a[(i, j)], *value, 1e-12),
                "A[{i}][{j}] = {}",
                a.linearization.a[(i, j)]
            );
        }
    }
    let s5 = 5f64.sqrt();
    assert_eigenvalues(
        &a,
        &[
            Complex::new((-3.0 + s5) / 2.0, 0.0),
            Complex::new((-3.0 - s5) / 2.0, 0.0),
        ],
        1e-12,
    );
    // Both resistor currents are zero at the steady state.
    let current = a.variables.iter().find(|(n, _)| n == "r2.i").map(|(_, v)| *v);
    assert!(current.is_some_and(|i| i.abs() < 1e-12), "{:?}", a.variables);
}

const LOTKA_VOLTERRA: &str = "model LV
  parameter Real a = 1.5;
  parameter Real b = 0.5;
  parameter Real c = 2;
  parameter Real d = 0.25;
  Real x(start = 10, fixed = true);
  Real y(start = 5, fixed = true);
equation
  der(x) = a*x - b*x*y;
  der(y) = -c*y + d*x*y;
end LV;
";

/// The Lotka–Volterra analysis with the search started at (x, y).
fn lotka_volterra_from(x: f64, y: f64) -> ModelAnalysis {
    analysis_with(
        LOTKA_VOLTERRA,
        &AnalyzeOptions {
            from: vec![("x".into(), x), ("y".into(), y)],
            ..AnalyzeOptions::default()
        },
    )
}

#[test]
fn lotka_volterra_has_a_centre_at_the_coexistence_point() {
    let a = lotka_volterra_from(7.0, 2.0);
    let x = steady(&a);
    // x = c/d, y = a/b.
    assert!(close(x[0], 8.0, 1e-12) && close(x[1], 3.0, 1e-12), "{x:?}");
    let omega = (1.5f64 * 2.0).sqrt();
    assert_eigenvalues(&a, &[Complex::new(0.0, omega), Complex::new(0.0, -omega)], 1e-12);
    assert_eq!(a.modal.stability, Stability::Marginal);
    assert!(close(a.modal.modes[0].time_constant, 2.0 * PI / omega, 1e-12));
}

#[test]
fn lotka_volterra_from_the_origin_finds_the_saddle() {
    let a = lotka_volterra_from(0.1, 0.1);
    assert!(steady(&a).iter().all(|v| v.abs() < 1e-12));
    assert_eigenvalues(&a, &[Complex::new(1.5, 0.0), Complex::new(-2.0, 0.0)], 1e-12);
    assert_eq!(a.modal.stability, Stability::Unstable);
}

#[test]
fn van_der_pol_has_an_unstable_focus_at_the_origin() {
    let mu: f64 = 0.5;
    let text = format!(
        "model VanDerPol
  parameter Real mu = {mu};
  Real x(start = 2, fixed = true);
  Real y(start = 0, fixed = true);
equation
  der(x) = y;
  der(y) = mu*(1 - x^2)*y - x;
end VanDerPol;
"
    );
    let a = analysis(&text);
    assert!(steady(&a).iter().all(|v| v.abs() < 1e-12));
    let im = (4.0 - mu * mu).sqrt() / 2.0;
    assert_eigenvalues(&a, &[Complex::new(mu / 2.0, im), Complex::new(mu / 2.0, -im)], 1e-12);
    assert_eq!(a.modal.stability, Stability::Unstable);
}

#[test]
fn closed_reaction_network_is_solved_on_its_conservation_law() {
    let (k1, k2, a0, b0) = (3.0, 1.0, 2.0, 0.5);
    let text = format!(
        "model Closed
  parameter Real k1 = {k1};
  parameter Real k2 = {k2};
  Real A(start = {a0}, fixed = true);
  Real B(start = {b0}, fixed = true);
equation
  der(A) = -k1*A + k2*B;
  der(B) = k1*A - k2*B;
end Closed;
"
    );
    let a = analysis(&text);
    // The Jacobian is singular; on A + B = 2.5 the steady state is A = k2·T/(k1 + k2).
    let total = a0 + b0;
    let x = steady(&a);
    assert!(close(x[0], k2 * total / (k1 + k2), 1e-13) && close(x[1], k1 * total / (k1 + k2), 1e-13));
    assert_eq!(a.invariants.len(), 1);
    assert_eq!(a.invariants[0].coefficients, [1.0, 1.0]);
    assert!(close(a.invariants[0].value, total, 1e-14));
    assert_eigenvalues(&a, &[Complex::new(0.0, 0.0), Complex::new(-(k1 + k2), 0.0)], 1e-12);
    assert_eq!(a.modal.stability, Stability::Stable);
    assert!(a.modal.modes.iter().any(|m| m.zero));
    // The one moving mode carries the start's deviation: A(t) = A_s + (A0 − A_s) e^{−(k1+k2)t}.
    let moving = a.modal.modes.iter().find(|m| !m.zero).unwrap();
    let term = moving.coefficient.unwrap() * moving.vector[0];
    assert!(close(term.re, a0 - x[0], 1e-12), "{term}");
}

/// The worked example of the analytic solution: `x' = [2, 1; 1, 2] x`, `x(0) = (3, 1)`, with
/// eigenvalues 1 and 3 and the solution `e^t (1, −1) + 2 e^{3t} (1, 1)`.
#[test]
fn linear_example_has_its_sum_of_modes() {
    let text = "model Linear
  Real x1(start = 3, fixed = true);
  Real x2(start = 1, fixed = true);
equation
  der(x1) = 2*x1 + x2;
  der(x2) = x1 + 2*x2;
end Linear;
";
    let a = analysis(text);
    assert!(steady(&a).iter().all(|v| v.abs() < 1e-14));
    assert_eigenvalues(&a, &[Complex::new(1.0, 0.0), Complex::new(3.0, 0.0)], 1e-13);
    assert_eq!(a.modal.stability, Stability::Unstable);
    for m in &a.modal.modes {
        let c = m.coefficient.unwrap();
        let terms: Vec<f64> = m.vector.iter().map(|v| (c * v).re).collect();
        let expected = if close(m.eigenvalue.re, 1.0, 1e-12) {
            [1.0, -1.0]
        } else {
            [2.0, 2.0]
        };
        assert!(
            close(terms[0], expected[0], 1e-12) && close(terms[1], expected[1], 1e-12),
            "{terms:?}"
        );
    }
    // T = 1/|λ|: T_max = 1, T_min = 1/3, γ = 3.
    assert!(close(a.modal.t_max.unwrap(), 1.0, 1e-12) && close(a.modal.stiffness.unwrap(), 3.0, 1e-12));
}

#[test]
fn a_constant_drive_has_no_steady_state() {
    let text = "model Drive
  Real x(start = 0, fixed = true);
  Real y(start = 1, fixed = true);
equation
  der(x) = 2;
  der(y) = -y;
end Drive;
";
    let a = analysis(text);
    match &a.steady {
        Steady::Impossible {
            combination,
            rate,
            relations,
        } => {
            assert!(!relations);
            assert_eq!(combination, &[1.0, 0.0]);
            assert!(close(*rate, 2.0, 1e-14));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(a.point, Point::Start);
    assert_eq!(a.modal.stability, Stability::Marginal);
    assert!(analyze::text(&a, a.advice(None).as_ref()).contains("none: x changes at the constant rate 2"));
}

/// A continuum of steady states (every x with y = 0) is reported as singular, not solved to one
/// of them.
#[test]
fn a_continuum_of_steady_states_is_reported_singular() {
    let text = "model Continuum
  Real x(start = 1, fixed = true);
  Real y(start = 0, fixed = true);
equation
  der(x) = y;
  der(y) = 0;
end Continuum;
";
    let a = analysis(text);
    assert!(matches!(a.steady, Steady::Singular { .. }), "{:?}", a.steady);
    assert!(analyze::text(&a, a.advice(None).as_ref()).contains("no point is reported as the steady state"));
}

#[test]
fn an_ill_conditioned_steady_state_warns_about_lost_digits() {
    let text = "model Ill
  parameter Real e = 1e-9;
  Real x(start = 0, fixed = true);
  Real y(start = 0, fixed = true);
equation
  der(x) = -x + y + 1;
  der(y) = x - (1 + e)*y;
end Ill;
";
    let a = analysis(text);
    let Steady::Found(s) = &a.steady else {
        panic!("{:?}", a.steady)
    };
    // A = [−1, 1; 1, −1 − e] has singular values about 2 and e/2: condition 4e9.
    assert!(close(s.condition, 4e9, 1e-3), "{}", s.condition);
    assert!(s.digits_lost() > 9.0);
    assert!(a.warnings.iter().any(|w| w.contains("digits")), "{:?}", a.warnings);
    // The solution itself: y = 1/e, x = (1 + e)/e.
    assert!(close(s.x[1], 1e9, 1e-6), "{:?}", s.x);
}

/// Newton's method from a start far out overshoots into a region where the model is not
/// defined; the line search and, failing it, the continuation still reach the steady state.
#[test]
fn a_hard_start_still_reaches_the_steady_state() {
    let text = "model Hard
  Real x(start = 50, fixed = true);
equation
  der(x) = 1 - exp(x - 1);
end Hard;
";
    let a = analysis(text);
    let x = steady(&a);
    assert!(close(x[0], 1.0, 1e-12), "{x:?}");
    assert_eigenvalues(&a, &[Complex::new(-1.0, 0.0)], 1e-10);
}

#[test]
fn algebraic_loops_are_solved_with_the_states() {
    let text = "model Loop
  Real x(start = 2, fixed = true);
  Real z(start = 0);
equation
  der(x) = 1 - z;
  z + z^3 = x;
end Loop;
";
    let a = analysis(text);
    // z = 1 at the steady state, so x = 2; A = −dz/dx = −1/(1 + 3z²) = −1/4.
    let x = steady(&a);
    assert!(close(x[0], 2.0, 1e-12), "{x:?}");
    let z = a.variables.iter().find(|(n, _)| n == "z").unwrap().1;
    assert!(close(z, 1.0, 1e-12));
    assert!(close(a.linearization.a[(0, 0)], -0.25, 1e-12));
}

/// The dummy-derivative form of the Cartesian pendulum hanging at rest: a centre with
/// `ω = √(g/L)`.
#[test]
fn index_reduced_pendulum_swings_at_its_small_angle_frequency() {
    let text = crate::example("pendulum.eqm");
    let mut session = Session::with_sources(&[("pendulum.eqm".to_string(), text)], &[], None);
    let options = ModelOptions {
        index_form: IndexForm::Dummy,
        ..ModelOptions::default()
    };
    let mut model = session.compile(None, &options).expect("compiles");
    let a = model.analyze(&AnalyzeOptions::default()).expect("analyses");
    assert_eq!(a.states.len(), 2, "{:?}", a.state_names());
    let omega = 9.81f64.sqrt();
    assert_eigenvalues(&a, &[Complex::new(0.0, omega), Complex::new(0.0, -omega)], 1e-9);
}

/// `A` from the symbolic Jacobian agrees with central differences of the compiled right-hand
/// side at a point that is not a steady state (a time of a simulation).
#[test]
fn symbolic_a_agrees_with_central_differences() {
    let text = "model Nonlinear
  Real x(start = 0.3, fixed = true);
  Real y(start = -0.2, fixed = true);
  Real z;
equation
  z = sin(x*y) + x^2;
  der(x) = y*z - exp(-x);
  der(y) = -x*z + cos(y);
end Nonlinear;
";
    let mut model = compile(text);
    let a = model
        .analyze(&AnalyzeOptions {
            at: Some(0.25),
            ..AnalyzeOptions::default()
        })
        .expect("analyses");
    assert_eq!(a.point, Point::Time(0.25));
    assert_eq!(a.linearization.source, analyze::JacobianSource::Symbolic);
    let f = |x: f64, y: f64| {
        let z = (x * y).sin() + x * x;
        [y * z - (-x).exp(), -x * z + y.cos()]
    };
    let (x, y) = (a.linearization.x[0], a.linearization.x[1]);
    let h = 1e-6;
    for j in 0..2 {
        let (xp, yp) = if j == 0 { (x + h, y) } else { (x, y + h) };
        let (xm, ym) = if j == 0 { (x - h, y) } else { (x, y - h) };
        let (fp, fm) = (f(xp, yp), f(xm, ym));
        for i in 0..2 {
            let difference = (fp[i] - fm[i]) / (2.0 * h);
            assert!((a.linearization.a[(i, j)] - difference).abs() < 1e-8, "A[{i}][{j}]");
        }
    }
}

#[test]
fn linearisation_at_a_time_of_a_simulation() {
    // x' = −x², x(0) = 1: x(t) = 1/(1 + t), A = −2x.
    let text = "model Square
  Real x(start = 1, fixed = true);
equation
  der(x) = -x^2;
end Square;
";
    let a = analysis_with(
        text,
        &AnalyzeOptions {
            at: Some(1.0),
            ..AnalyzeOptions::default()
        },
    );
    assert!(matches!(a.steady, Steady::NotSought));
    assert!(close(a.linearization.x[0], 0.5, 1e-6), "{:?}", a.linearization.x);
    assert!(close(a.linearization.a[(0, 0)], -1.0, 1e-6));
}

#[test]
fn inputs_and_outputs_give_b_c_and_d() {
    let text = "model Plant
  input Real u(start = 1);
  output Real y;
  Real x(start = 0, fixed = true);
equation
  der(x) = -2*x + 3*u;
  y = 4*x + 5*u;
end Plant;
";
    let mut session = Session::with_sources(&[("plant.eqm".to_string(), text.to_string())], &[], None);
    let mut model = session
        .compile_for_analysis(None, &ModelOptions::default())
        .expect("compiles");
    let (inputs, outputs) = model.own_interface();
    assert_eq!((inputs, outputs), (&["u".to_string()][..], &["y".to_string()][..]));
    let a = model
        .analyze(&AnalyzeOptions::of_model(None, Vec::new()))
        .expect("analyses");
    assert_eq!((a.linearization.inputs.len(), a.linearization.outputs.len()), (1, 1));
    // With u = 1 the steady state is x = 3/2.
    assert!(close(steady(&a)[0], 1.5, 1e-12));
    let l = &a.linearization;
    assert!(close(l.a[(0, 0)], -2.0, 1e-12));
    assert!(close(l.b[(0, 0)], 3.0, 1e-8));
    assert!(close(l.c[(0, 0)], 4.0, 1e-8));
    assert!(close(l.d[(0, 0)], 5.0, 1e-8));
}

#[test]
fn stiffness_is_judged_by_the_ratio_of_time_constants() {
    let text = "model Stiff
  Real x(start = 1, fixed = true);
  Real y(start = 1, fixed = true);
equation
  der(x) = -x;
  der(y) = -1e5*(y - x);
end Stiff;
";
    let a = analysis(text);
    assert!(close(a.modal.stiffness.unwrap(), 1e5, 1e-9));
    assert!(analyze::text(&a, a.advice(None).as_ref()).contains("stiff (between 1e3 and 1e7"));
}

#[test]
fn models_the_analysis_cannot_handle_are_refused_with_a_code() {
    let text = "model Delayed
  Real x(start = 1, fixed = true);
equation
  der(x) = -delay(x, 1);
end Delayed;
";
    match compile(text).analyze(&AnalyzeOptions::default()) {
        Err(eqm::RunError::Model(d)) => assert_eq!(d.code, "E0803"),
        other => panic!("{:?}", other.map(|a| a.steady)),
    }
}

/// The report of every example as `eqm analyze` prints it (the dummy-derivative form of
/// index-reduced models, the model's own inputs and outputs), or the diagnostics of a model the
/// analysis refuses.
#[test]
fn analyze_snapshots_of_every_example() {
    insta::glob!("../../../../examples", "*.eqm", |path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
        let text = std::fs::read_to_string(path).expect("examples are readable");
        let mut session = Session::with_sources(&[(name, text)], &[], None);
        let mut model = session
            .compile_for_analysis(None, &ModelOptions::default())
            .expect("every example compiles");
        let request = AnalyzeOptions::of_model(None, Vec::new());
        let out = match model.analyze(&request) {
            Ok(a) => analyze::text(&a, a.advice(None).as_ref()),
            Err(eqm::RunError::Model(d)) => {
                session.push_diagnostic(*d);
                String::new()
            }
            Err(e) => format!("error: {e}\n"),
        };
        insta::assert_snapshot!(format!("{out}{}", session.render_diagnostics(false)));
    });
}

/// With its relations frozen at the start (`x < 0.5`), the field `1 − x` has its zero at 1,
/// where the relation no longer holds; the search takes the relation's value there and finds
/// the steady state of the other branch, `3 − 2x = 0`.
#[test]
fn the_steady_state_agrees_with_the_relations() {
    let text = "model Switch
  Real x(start = 0, fixed = true);
equation
  der(x) = if x < 0.5 then 1 - x else 3 - 2*x;
end Switch;
";
    let a = analysis(text);
    assert!(close(steady(&a)[0], 1.5, 1e-12), "{:?}", a.steady);
    assert!(close(a.linearization.a[(0, 0)], -2.0, 1e-12));
    assert!(a.notes.iter().any(|n| n.contains("relations")));
}

/// The reaction chain A ⇄ B ⇄ C of the examples: the equilibrium (1/7, 2/7, 4/7) on
/// A + B + C = 1, eigenvalues 0, −1, −3.5 and the solution
/// `A = 1/7 + (2/5)e^{−t} + (16/35)e^{−3.5t}`, `B = 2/7 + (2/5)e^{−t} − (24/35)e^{−3.5t}`,
/// `C = 4/7 − (4/5)e^{−t} + (8/35)e^{−3.5t}`.
#[test]
fn reaction_chain_has_its_closed_form_solution() {
    let text = crate::example("reaction_invariant.eqm");
    let a = analysis(&text);
    let x = steady(&a);
    for (v, e) in x.iter().zip([1.0 / 7.0, 2.0 / 7.0, 4.0 / 7.0]) {
        assert!(close(*v, e, 1e-13), "{x:?}");
    }
    assert_eq!(a.invariants[0].coefficients, [1.0, 1.0, 1.0]);
    assert_eigenvalues(
        &a,
        &[Complex::new(0.0, 0.0), Complex::new(-1.0, 0.0), Complex::new(-3.5, 0.0)],
        1e-12,
    );
    let expected = [
        (-1.0, [0.4, 0.4, -0.8]),
        (-3.5, [16.0 / 35.0, -24.0 / 35.0, 8.0 / 35.0]),
    ];
    for (lambda, terms) in expected {
        let m = a
            .modal
            .modes
            .iter()
            .find(|m| close(m.eigenvalue.re, lambda, 1e-12))
            .unwrap();
        let c = m.coefficient.unwrap();
        for (v, e) in m.vector.iter().zip(terms) {
            assert!(close((c * v).re, e, 1e-12), "λ = {lambda}");
        }
    }
}

/// A closed stock-and-flow model: material moves from S1 to S2 at 0.5·S1 and back at 0.25·S2,
/// so S1 + S2 = 4 is conserved and the steady state is S1 = 4/3, S2 = 8/3 with the eigenvalues
/// 0 and −0.75.
#[test]
fn closed_stock_and_flow_model_keeps_its_total() {
    let text = "model ClosedSD
  import SystemDynamics.{Reservoirs, Flows};
  Reservoirs.Stock S1(m0 = 4);
  Reservoirs.Stock S2(m0 = 0);
  Flows.FunctionFlow forward(law = function(s) = 0.5*s);
  Flows.FunctionFlow backward(law = function(s) = 0.25*s);
equation
  connect(S1.outflow, forward.inflow);
  connect(forward.outflow, S2.inflow);
  connect(S2.outflow, backward.inflow);
  connect(backward.outflow, S1.inflow);
  connect(S1.level, forward.u);
  connect(S2.level, backward.u);
end ClosedSD;
";
    let a = analysis(text);
    assert_eq!(a.state_names(), ["S1.m", "S2.m"]);
    let x = steady(&a);
    assert!(close(x[0], 4.0 / 3.0, 1e-13) && close(x[1], 8.0 / 3.0, 1e-13), "{x:?}");
    assert_eq!(a.invariants.len(), 1);
    assert_eq!(a.invariants[0].coefficients, [1.0, 1.0]);
    assert!(close(a.invariants[0].value, 4.0, 1e-14));
    assert_eigenvalues(&a, &[Complex::new(0.0, 0.0), Complex::new(-0.75, 0.0)], 1e-12);
    assert_eq!(a.modal.stability, Stability::Stable);
}

/// A double root: Newton's method converges only linearly and the Jacobian nearly vanishes
/// at the result, which the report warns about.
#[test]
fn a_multiple_root_is_flagged() {
    let text = "model Double
  Real x(start = 0, fixed = true);
equation
  der(x) = -(x - 1)^2;
end Double;
";
    let a = analysis(text);
    assert!(close(steady(&a)[0], 1.0, 1e-6), "{:?}", a.steady);
    assert!(
        a.warnings.iter().any(|w| w.contains("multiple root")),
        "{:?}",
        a.warnings
    );
}

/// Second-order kinetics: A + B <-> X and B + X -> consumed. At the steady state
/// (C1, C2, C3) = (0.5, 0, 0), reached only as 1/t, the linearisation has eigenvalues 0 (the
/// invariant C1 - C2/2 + C3/2), 0 (the vanishing concentrations) and -(k1 C1 + k2) = -0.15. The
/// steady state is found only to the accuracy its conditioning allows, so the second zero comes
/// out as a tiny number; it is no time scale, and the slowest one is 1/0.15.
#[test]
fn an_eigenvalue_that_is_zero_to_the_accuracy_of_the_steady_state_is_no_time_scale() {
    let a = analysis(
        "model Reactions
  Real C[3](start = {1, 1, 0}, each fixed = true);
  parameter Real k[3] = {0.1, 0.1, 10};
equation
  der(C) = {-k[1]*C[1]*C[2] + k[2]*C[3],
            -k[1]*C[1]*C[2] + k[2]*C[3] - k[3]*C[2]*C[3],
            k[1]*C[1]*C[2] - k[2]*C[3] - k[3]*C[2]*C[3]};
end Reactions;
",
    );
    let x = steady(&a);
    assert!(
        close(x[0], 0.5, 1e-6) && x[1].abs() < 1e-6 && x[2].abs() < 1e-6,
        "{x:?}"
    );
    let timed = a.timed_eigenvalues();
    assert_eq!(timed.len(), 1, "{:?}", a.eigenvalues());
    assert!((timed[0] - Complex::new(-0.15, 0.0)).norm() < 1e-6, "{timed:?}");
}
