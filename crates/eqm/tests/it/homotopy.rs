//! `homotopy(actual, simplified)` at the initialization: the continuation from the simplified
//! problem to the actual one reaches the solution the simplified problem leads to, which the
//! start values alone would not select; the simulation runs the actual expression. Every value
//! is checked against a hand computation or a root found by bisection, on both back ends.

use crate::compile;
use eqm::{RunSettings, Session};

/// A run to `stop` with rows every 0.1, by the interpreter or by native code.
fn run(text: &str, stop: f64, interpreter: bool) -> eqm::SimulationResult {
    let settings = RunSettings {
        stop: Some(stop),
        interval: Some(0.1),
        rtol: Some(1e-10),
        atol: Some(1e-10),
        interpreter,
        ..RunSettings::default()
    };
    let mut model = compile(text);
    model
        .simulate(&settings)
        .unwrap_or_else(|e| panic!("{}: {e}", model.name()))
}

/// Both back ends' runs, checked to agree bit for bit on every column.
fn run_both(text: &str, stop: f64, columns: &[&str]) -> eqm::SimulationResult {
    let native = run(text, stop, false);
    let interpreted = run(text, stop, true);
    assert_eq!(native.time(), interpreted.time());
    for name in columns {
        assert_eq!(native.column(name), interpreted.column(name), "{name}");
    }
    assert_eq!(native.summary.homotopy, interpreted.summary.homotopy);
    native
}

/// The root of a decreasing function `f` in `[a, b]`, by bisection to the last bit.
fn bisect(f: impl Fn(f64) -> f64, mut a: f64, mut b: f64) -> f64 {
    assert!(f(a) > 0.0 && f(b) < 0.0, "no sign change in [{a}, {b}]");
    for _ in 0..200 {
        let m = 0.5 * (a + b);
        if m <= a || m >= b {
            break;
        }
        if f(m) > 0.0 {
            a = m;
        } else {
            b = m;
        }
    }
    a
}

/// A limiter in a loop: `y = sat(u)`, `u = 2y - 8` has three solutions, y = 8 (u = 8 inside
/// the limits), y = 10 (u = 12 above them) and y = -10 (u = -28 below them). The start value
/// u = 12 is the second; the simplified problem `y = u` has only the first, and along the
/// path `y = λ sat(u) + (1 - λ) u` the point u = y = 8 stays a solution with a regular
/// Jacobian (sat(8) = 8), so the continuation ends at y = 8.
const LIMITER: &str = "model Limiter
  parameter Real uMax = 10;
  parameter Real uMin = -10;
  Real u(start = 12);
  Real y;
  Real x(start = 0, fixed = true);
equation
  y = homotopy(actual = smooth(0, if u > uMax then uMax else if u < uMin then uMin else u), simplified = u);
  u = 2*y - 8;
  der(x) = y - x;
end Limiter;
";

#[test]
fn the_continuation_from_the_simplified_limiter_reaches_the_unsaturated_solution() {
    let result = run_both(LIMITER, 1.0, &["u", "y", "x"]);
    for (k, t) in result.time().iter().enumerate() {
        assert_eq!(result.column("y").unwrap()[k], 8.0, "y({t})");
        assert_eq!(result.column("u").unwrap()[k], 8.0, "u({t})");
        // x' = 8 - x, x(0) = 0.
        let x = 8.0 * (1.0 - (-t).exp());
        assert!((result.column("x").unwrap()[k] - x).abs() < 1e-8, "x({t})");
    }
    let path = result.summary.homotopy.as_deref().expect("the path is reported");
    assert!(path.contains("homotopy continuation over λ from 0 to 1"), "{path}");
    // Without `homotopy`, the start value selects the saturated solution.
    let direct = LIMITER
        .replace(", simplified = u)", ")")
        .replace("homotopy(actual = ", "(");
    let direct = run(&direct, 1.0, true);
    assert_eq!(direct.value_at("y", 0.0), Some(10.0));
    assert_eq!(direct.summary.homotopy, None);
}

#[test]
fn the_simplified_problem_guides_the_initialization_to_its_branch_of_a_polynomial() {
    // Modelica: x^3 - 2x - 5 has one real root, from x = 2; y^2 = 4 has two, and the
    // path from y - 2 = 0 keeps y = 2 ((y - 2)(λ(y + 2) + 1 - λ) = 0), where the start value -1
    // leads Newton to -2.
    let text = "model Branches
  Real x(start = -1);
  Real y(start = -1);
  Real z(start = 0, fixed = true);
equation
  0 = homotopy(actual = x^3 - 2*x - 5, simplified = x - 2);
  0 = homotopy(actual = y^2 - 4, simplified = y - 2);
  der(z) = x + y;
end Branches;
";
    let result = run_both(text, 1.0, &["x", "y", "z"]);
    let root = bisect(|x| 5.0 + 2.0 * x - x * x * x, 2.0, 3.0);
    assert!((result.value_at("x", 0.0).unwrap() - root).abs() <= 4.0 * f64::EPSILON * root);
    assert_eq!(result.value_at("y", 0.0), Some(2.0));
    assert_eq!(result.final_value("y"), Some(2.0));
    let direct = text.replace("homotopy(actual = y^2 - 4, simplified = y - 2)", "y^2 - 4");
    assert_eq!(run(&direct, 1.0, true).value_at("y", 0.0), Some(-2.0));
}

/// A diode behind a resistor: U0 = R i + v, i = Is (exp(v/Vt) - 1). `simplified` is the
/// piecewise-linear diode (a knee at Vknee, resistance Ron beyond it), whose operating point is
/// near the exponential's: the continuation walks from one to the other.
const DIODE: &str = "model Diode
  parameter Real U0 = 10;
  parameter Real R = 1;
  parameter Real Is = 1e-14;
  parameter Real Vt = 0.025;
  parameter Real Vknee = 0.6;
  parameter Real Ron = 0.05;
  Real v;
  Real i;
  Real q(start = 0, fixed = true);
equation
  U0 = R*i + v;
  i = homotopy(actual = Is*(exp(v/Vt) - 1), simplified = smooth(0, if v > Vknee then (v - Vknee)/Ron else 0));
  der(q) = i;
end Diode;
";

/// The diode's operating point (v, i) for saturation current `is`, by bisection on
/// U0 - R Is (exp(v/Vt) - 1) - v with U0 = 10, R = 1, Vt = 0.025.
fn operating_point(is: f64) -> (f64, f64) {
    let v = bisect(|v| 10.0 - is * ((v / 0.025).exp() - 1.0) - v, 0.0, 10.0);
    (v, 10.0 - v)
}

#[test]
fn the_continuation_walks_from_a_piecewise_linear_diode_to_the_exponential_one() {
    let result = run_both(DIODE, 1.0, &["v", "i", "q"]);
    let (v, i) = operating_point(1e-14);
    let tolerance = 1e-12;
    assert!((result.value_at("v", 0.0).unwrap() - v).abs() < tolerance, "v = {v}");
    assert!(
        (result.value_at("i", 0.0).unwrap() - i).abs() < tolerance * i,
        "i = {i}"
    );
    // q = i t.
    assert!((result.final_value("q").unwrap() - i).abs() < 1e-9 * i);
    let path = result.summary.homotopy.expect("the path is reported");
    assert!(path.contains("homotopy continuation over λ from 0 to 1"), "{path}");
}

#[test]
fn a_path_too_steep_to_follow_falls_back_to_the_actual_problem_and_says_so() {
    // The simplified diode `i = v/R` meets the resistor at v = 5, where Is exp(v/Vt) is
    // 1e-12 e^200: the blend jumps to the exponential's root at a λ of about 1e-74, beyond any
    // step. The actual problem is solved directly instead, and the run says so.
    let text = DIODE.replace("Is = 1e-14", "Is = 1e-12").replace(
        "simplified = smooth(0, if v > Vknee then (v - Vknee)/Ron else 0)",
        "simplified = v/R",
    );
    let result = run_both(&text, 1.0, &["v", "i"]);
    let (v, _) = operating_point(1e-12);
    assert!((result.value_at("v", 0.0).unwrap() - v).abs() < 1e-12, "v = {v}");
    let path = result.summary.homotopy.expect("the path is reported");
    assert!(
        path.contains("lost its path at λ = 0") && path.contains("solved directly"),
        "{path}"
    );
}

#[test]
fn a_turning_point_of_the_path_is_not_jumped_over_silently() {
    // λ(x³ - 3x + 2.5) + (1 - λ)(x - 2) = 0 from x = 2 turns back at λ ≈ 0.676, x ≈ 0.92 (where
    // its derivative in x vanishes): beyond that λ no solution is near the path. The only real
    // root of the actual cubic is far away; the continuation does not jump there as if it were
    // its path, but says that the path was lost and solves the actual problem directly.
    let text = "model Fold\n  Real x(start = 2);\n  Real y;\nequation\n  \
                0 = homotopy(actual = x^3 - 3*x + 2.5, simplified = x - 2);\n  der(y) = x;\nend Fold;\n";
    let result = run_both(text, 1.0, &["x", "y"]);
    // Cardano: x³ - 3x + 2.5 = 0 has the one real root ∛(-1/2) + ∛(-2).
    let root = -(0.5f64.cbrt() + 2f64.cbrt());
    assert!((result.value_at("x", 0.0).unwrap() - root).abs() < 1e-12);
    let path = result.summary.homotopy.expect("the path is reported");
    let lost_at: f64 = path
        .split("lost its path at λ = ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|number| number.parse().ok())
        .unwrap_or_else(|| panic!("{path}"));
    assert!((0.6..0.6757).contains(&lost_at), "{path}");
    assert!(path.contains("solved directly"), "{path}");
}

#[test]
fn flatten_keeps_the_call_and_explain_shows_the_blend_only_in_the_initialization() {
    let mut session = Session::with_sources(&[("m.eqm".to_string(), LIMITER.to_string())], &[], None);
    let flat = session.flatten(None, &eqm::ModelOptions::default()).expect("flattens");
    let text = flat.print();
    assert!(
        text.contains("y = homotopy(smooth(0, if u > uMax then uMax else if u < uMin then uMin else u), u);"),
        "{text}"
    );
    let explained = session.explain(None, &eqm::ModelOptions::default()).expect("explains");
    let (simulation, initialization) = explained
        .split_once("initialization:")
        .expect("an initialization section");
    assert!(!simulation.contains("homotopy"), "{simulation}");
    assert!(
        initialization.contains("*$homotopy + u*(-$homotopy + 1.0)"),
        "{initialization}"
    );
}
