//! Nonlinear systems from the MINPACK test set (and a chemical equilibrium), written as models
//! whose equations form algebraic loops, solved at the initialization from their standard start
//! points through the whole pipeline. Each solution is checked against its known value or a
//! reference computed here by bisection on one variable, and native code and the interpreter
//! must compute the same bits and report the same fallback method (Powell's hybrid method
//! where plain Newton fails).

use crate::pipeline;

use eqm_integrators::Method;
use eqm_sim::interp::{NewtonFailure, RecoveryMethod};
use eqm_sim::simulate::{Backend, RecoveryNote};

/// The first row of `names` of the model in `text`, run by native code and by the interpreter
/// (which must agree bit for bit, in the values and in the report of the initialization), and
/// the blocks of the initialization plain Newton did not solve.
pub(crate) fn solve(name: &str, text: &str, names: &[&str]) -> (Vec<f64>, Vec<RecoveryNote>) {
    let compiled = pipeline::compile(name, text);
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut results = Vec::new();
    for backend in [Backend::Auto, Backend::Interpreter] {
        let mut options = crate::run_options(1.0, Method::Dopri5, 1e-6, 1e-9, 1.0);
        options.backend = backend;
        let mut first = None;
        let summary = crate::run(&compiled, &options, Some(names.as_slice()), name, |_, row| {
            first.get_or_insert_with(|| row.to_vec());
        });
        if backend == Backend::Auto {
            assert!(summary.backend.starts_with("jit"), "{name}: {}", summary.backend);
        }
        results.push((first.expect("a row"), summary.initialization));
    }
    let (interpreted, native) = (results.pop().expect("two runs"), results.pop().expect("two runs"));
    for (k, (a, b)) in native.0.iter().zip(&interpreted.0).enumerate() {
        assert_eq!(
            a.to_bits(),
            b.to_bits(),
            "{name}: `{}`: native {a}, interpreter {b}",
            names[k]
        );
    }
    assert_eq!(native.1, interpreted.1, "{name}: the back ends recovered differently");
    interpreted
}

/// Asserts `|found - expected| <= rtol * |expected| + atol` for each value.
pub(crate) fn close(name: &str, found: &[f64], expected: &[f64], rtol: f64, atol: f64) {
    for (k, (f, e)) in found.iter().zip(expected).enumerate() {
        assert!(
            (f - e).abs() <= rtol * e.abs() + atol,
            "{name}: unknown {k}: found {f}, expected {e}"
        );
    }
}

/// A root of `g` in `[a, b]` (where `g` changes sign) by bisection to the last bit.
pub(crate) fn bisect(mut a: f64, mut b: f64, g: impl Fn(f64) -> f64) -> f64 {
    let ga = g(a);
    assert!(ga * g(b) < 0.0, "no change of sign in [{a}, {b}]");
    for _ in 0..200 {
        let m = 0.5 * (a + b);
        if m == a || m == b {
            break;
        }
        if (g(m) < 0.0) == (ga < 0.0) {
            a = m;
        } else {
            b = m;
        }
    }
    0.5 * (a + b)
}

/// The one loop of a model was solved by the trust-region method after Newton failed for
/// `why`.
fn by_trust_region(name: &str, notes: &[RecoveryNote], why: NewtonFailure) {
    assert_eq!(notes.len(), 1, "{name}: {notes:?}");
    let first = notes[0].recoveries.first;
    assert_eq!(first.method, RecoveryMethod::TrustRegion, "{name}: {notes:?}");
    assert_eq!(first.newton, why, "{name}: {notes:?}");
    assert!(first.iterations > 0 && first.iterations <= 200, "{name}: {notes:?}");
}

/// Powell's badly scaled function from x0 = (0, 1): Newton's line search stalls; the
/// trust-region method finds the root, with and without the unknowns' nominal values. The
/// reference: `x1 = 1e-4/x2` and the root of `exp(-1e-4/x2) + exp(-x2) = 1.0001` in x2,
/// bracketed in [1, 20].
#[test]
fn powells_badly_scaled_function_is_solved_by_the_trust_region_method() {
    let x2 = bisect(1.0, 20.0, |x2| (-1e-4 / x2).exp() + (-x2).exp() - 1.0001);
    let expected = [1e-4 / x2, x2];
    // The MINPACK solution, to the digits published.
    close("reference", &expected, &[1.098159e-5, 9.106147], 1e-6, 0.0);
    for nominal in [", nominal = 1e-5", ""] {
        let text = format!(
            "model PowellBadlyScaled
               Real x1(start = 0{nominal});
               Real x2(start = 1{});
             equation
               0 = 1e4*x1*x2 - 1;
               0 = exp(-x1) + exp(-x2) - 1.0001;
             end PowellBadlyScaled;",
            if nominal.is_empty() { "" } else { ", nominal = 10" }
        );
        let (found, notes) = solve("powell.eqm", &text, &["x1", "x2"]);
        close("Powell badly scaled", &found, &expected, 1e-10, 0.0);
        by_trust_region("Powell badly scaled", &notes, NewtonFailure::NoConvergence);
    }
}

/// A loop whose Jacobian is singular at the start (the first row vanishes at (0, 0)): Newton
/// cannot take a step, the trust-region method takes the steepest descent and then Newton's
/// steps. The reference is the root on the circle `x = 2 cos θ, y = 2 sin θ` between θ = π/2
/// and π, by bisection.
#[test]
fn a_singular_jacobian_at_the_start_does_not_end_the_solve() {
    let g = |theta: f64| {
        let (x, y) = (2.0 * theta.cos(), 2.0 * theta.sin());
        x.exp() + x + y * y * y + y - 3.0
    };
    let theta = bisect(std::f64::consts::FRAC_PI_2, std::f64::consts::PI, g);
    let (found, notes) = solve(
        "singular.eqm",
        "model SingularStart
           Real x(start = 0);
           Real y(start = 0);
         equation
           x^2 + y^2 = 4;
           exp(x) + x + y^3 + y = 3;
         end SingularStart;",
        &["x", "y"],
    );
    close(
        "singular start",
        &found,
        &[2.0 * theta.cos(), 2.0 * theta.sin()],
        1e-12,
        1e-15,
    );
    by_trust_region("singular start", &notes, NewtonFailure::Singular);
    assert_eq!(notes[0].unknowns, ["x", "y"]);
    assert_eq!(notes[0].equations, 2);
}

/// Rosenbrock's function from (-1.2, 1), the helical valley from (-1, 0, 0) (its angle written
/// with `atan2`, continuous along the way), Brown's almost-linear function with n = 5 from
/// 0.5 (its root with equal components, (1, ..., 1)) and the Freudenstein–Roth function from
/// (0.5, -2). The last has a local minimum of `‖F‖` at (11.41, -0.8968) where Newton on the
/// untorn system can stall; torn at x2, its residual is the cubic `2 (x2 - 4)(x2² + 2 x2 + 2)`
/// with the one real root x2 = 4, so the solve reaches (5, 4).
#[test]
fn the_small_minpack_systems_reach_their_known_solutions() {
    let (found, _) = solve(
        "rosenbrock.eqm",
        "model Rosenbrock
           Real x1(start = -1.2);
           Real x2(start = 1);
         equation
           0 = 10*(x2 - x1^2);
           0 = 1 - x1;
         end Rosenbrock;",
        &["x1", "x2"],
    );
    close("Rosenbrock", &found, &[1.0, 1.0], 1e-14, 0.0);
    let (found, _) = solve(
        "helical.eqm",
        "model HelicalValley
           Real x1(start = -1);
           Real x2(start = 0);
           Real x3(start = 0);
         equation
           0 = 10*(x3 - 10*atan2(x2, x1)/(2*3.141592653589793));
           0 = 10*(sqrt(x1^2 + x2^2) - 1);
           0 = x3;
         end HelicalValley;",
        &["x1", "x2", "x3"],
    );
    close("helical valley", &found, &[1.0, 0.0, 0.0], 1e-14, 1e-14);
    let (found, _) = solve(
        "brown.eqm",
        "model BrownAlmostLinear
           Real x[5](each start = 0.5);
         equation
           for i in 1:4 loop
             0 = x[i] + sum(x) - 6;
           end for;
           0 = product(x) - 1;
         end BrownAlmostLinear;",
        &["x[1]", "x[2]", "x[3]", "x[4]", "x[5]"],
    );
    close("Brown almost-linear", &found, &[1.0; 5], 1e-13, 0.0);
    let (found, _) = solve(
        "freudenstein.eqm",
        "model FreudensteinRoth
           Real x1(start = 0.5);
           Real x2(start = -2);
         equation
           0 = -13 + x1 + ((5 - x2)*x2 - 2)*x2;
           0 = -29 + x1 + ((x2 + 1)*x2 - 14)*x2;
         end FreudensteinRoth;",
        &["x1", "x2"],
    );
    close("Freudenstein-Roth", &found, &[5.0, 4.0], 1e-13, 0.0);
}

/// The combustion of propane in air (Meintjes and Morgan's reduced five-variable system, with
/// R = 10): the physical root, all components positive, against the values published for it
/// (to five significant digits: the sources differ in the last digits they print), and with
/// the residuals evaluated here to the level of rounding errors.
#[test]
fn the_propane_combustion_equilibrium_reaches_the_physical_root() {
    let (found, _) = solve(
        "propane.eqm",
        "model PropaneCombustion
           parameter Real R = 10;
           parameter Real R5 = 0.193;
           parameter Real R6 = 0.002597/sqrt(40);
           parameter Real R7 = 0.003448/sqrt(40);
           parameter Real R8 = 0.00001799/40;
           parameter Real R9 = 0.0002155/sqrt(40);
           parameter Real R10 = 0.00003846/40;
           Real x1(start = 1);
           Real x2(start = 10);
           Real x3(start = 0.1);
           Real x4(start = 1);
           Real x5(start = 0.1);
         equation
           0 = x1*x2 + x1 - 3*x5;
           0 = 2*x1*x2 + x1 + x2*x3^2 + R8*x2 - R*x5 + 2*R10*x2^2 + R7*x2*x3 + R9*x2*x4;
           0 = 2*x2*x3^2 + 2*R5*x3^2 - 8*x5 + R6*x3 + R7*x2*x3;
           0 = R9*x2*x4 + 2*x4^2 - 4*R*x5;
           0 = x1*(x2 + 1) + R10*x2^2 + x2*x3^2 + R8*x2 + R5*x3^2 + x4^2 - 1 + R6*x3 + R7*x2*x3 + R9*x2*x4;
         end PropaneCombustion;",
        &["x1", "x2", "x3", "x4", "x5"],
    );
    close(
        "propane",
        &found,
        &[0.0031141022, 34.597924, 0.065041778, 0.85937822, 0.036951595],
        1e-5,
        0.0,
    );
    let [x1, x2, x3, x4, x5] = [found[0], found[1], found[2], found[3], found[4]];
    let (r, r5, r6, r7) = (10.0, 0.193, 0.002597 / 40f64.sqrt(), 0.003448 / 40f64.sqrt());
    let (r8, r9, r10) = (0.00001799 / 40.0, 0.0002155 / 40f64.sqrt(), 0.00003846 / 40.0);
    let residuals = [
        x1 * x2 + x1 - 3.0 * x5,
        2.0 * x1 * x2 + x1 + x2 * x3 * x3 + r8 * x2 - r * x5 + 2.0 * r10 * x2 * x2 + r7 * x2 * x3 + r9 * x2 * x4,
        2.0 * x2 * x3 * x3 + 2.0 * r5 * x3 * x3 - 8.0 * x5 + r6 * x3 + r7 * x2 * x3,
        r9 * x2 * x4 + 2.0 * x4 * x4 - 4.0 * r * x5,
        x1 * (x2 + 1.0) + r10 * x2 * x2 + x2 * x3 * x3 + r8 * x2 + r5 * x3 * x3 + x4 * x4 - 1.0
            + r6 * x3
            + r7 * x2 * x3
            + r9 * x2 * x4,
    ];
    for (i, v) in residuals.iter().enumerate() {
        assert!(v.abs() <= 1e-12, "propane: residual {i} is {v}");
    }
}

/// A loop torn at x whose torn residual `w - sqrt(z)` cannot be evaluated at the start, since
/// `z := exp(x) - 3` is negative at x = 0, while the equations as written can at the start
/// values of every unknown (z = 1): the loop is solved untorn. The solution: x = log(5),
/// z = 2, w = sqrt(2).
#[test]
fn a_torn_loop_that_leaves_its_domain_at_the_start_is_solved_untorn() {
    let (found, notes) = solve(
        "domain.eqm",
        "model Domain
           Real x(start = 0);
           Real z(start = 1);
           Real w(start = 1);
         equation
           z = exp(x) - 3;
           w = sqrt(z);
           x*x + sin(x) + w = log(5)^2 + sin(log(5)) + sqrt(2);
         end Domain;",
        &["x", "z", "w"],
    );
    close("domain", &found, &[5f64.ln(), 2.0, 2f64.sqrt()], 1e-12, 0.0);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0].recoveries.first.method, RecoveryMethod::Untorn);
    assert_eq!(notes[0].recoveries.first.newton, NewtonFailure::NotFinite);
}

/// Without a start value inside the domain the equations as written cannot be evaluated
/// either, and the failure of the torn solve is reported: no value is made up.
#[test]
fn a_loop_outside_its_domain_at_every_start_fails_with_the_torn_failure() {
    let (_, diagnostic) = crate::failure_of(
        "outside.eqm",
        "model Outside
           Real x(start = 0);
           Real z(start = -1);
           Real w(start = 1);
         equation
           z = exp(x) - 3;
           w = sqrt(z);
           x*x + sin(x) + w = log(5)^2 + sin(log(5)) + sqrt(2);
         end Outside;",
    );
    assert_eq!(diagnostic.code, "E0701", "{diagnostic:?}");
}

/// The loop of [`a_singular_jacobian_at_the_start_does_not_end_the_solve`] with `x` measured
/// in units of 1e-9 (`x = 1e-9 u`): its nominal, given by a parameter expression, makes the
/// trust-region method take the same steps in `u` as on the unit problem, and so reach the same
/// root (θ between π/2 and π, by bisection), scaled. Without the nominal, the region and the
/// convergence test are in units of 1 and the method reaches the other root of the system
/// (on the circle between θ = -π/2 and 0), a root too but not the one of the unit problem.
#[test]
fn a_nominal_given_by_a_parameter_expression_scales_the_loop_solve() {
    let g = |theta: f64| {
        let (x, y) = (2.0 * theta.cos(), 2.0 * theta.sin());
        x.exp() + x + y * y * y + y - 3.0
    };
    let theta = bisect(std::f64::consts::FRAC_PI_2, std::f64::consts::PI, g);
    let model = |nominal: &str| {
        format!(
            "model Scaled
               parameter Real p = 2;
               Real x(start = 0{nominal});
               Real y(start = 0);
             equation
               (x/1e-9)^2 + y^2 = 4;
               exp(x/1e-9) + x/1e-9 + y^3 + y = 3;
             end Scaled;"
        )
    };
    let (found, notes) = solve("scaled.eqm", &model(", nominal = p*0.5e-9"), &["x", "y"]);
    close(
        "nominal from parameters",
        &found,
        &[2e-9 * theta.cos(), 2.0 * theta.sin()],
        1e-12,
        1e-24,
    );
    by_trust_region("nominal from parameters", &notes, NewtonFailure::Singular);
    // The literal nominal of the same value takes the very same steps.
    let (literal, literal_notes) = solve("scaled.eqm", &model(", nominal = 1e-9"), &["x", "y"]);
    assert_eq!(found, literal);
    assert_eq!(notes, literal_notes);
    // Unscaled, the other root: u > 0, y < 0, where both equations hold.
    let (unscaled, _) = solve("scaled.eqm", &model(""), &["x", "y"]);
    let (u, y) = (unscaled[0] / 1e-9, unscaled[1]);
    assert!(u > 0.0 && y < 0.0, "u = {u}, y = {y}");
    assert!((u * u + y * y - 4.0).abs() < 1e-9 && (u.exp() + u + y * y * y + y - 3.0).abs() < 1e-9);
}

/// A linear loop whose coefficients are parameters keeps its factorisation from one
/// evaluation to the next; a new parameter value must still give the new solution, by one
/// Newton step. Each
/// evaluation is checked against Cramer's rule for `[a b 1; b a -1; 1 -1 a] (u, v, w) =
/// (x, 2x, t)`, on both back ends, and the back ends must agree bit for bit.
#[test]
fn a_linear_loop_with_parameter_coefficients_follows_its_parameters() {
    use eqm_sim::instance::Instance;
    use eqm_sim::interp::OdeRhs;
    let compiled = pipeline::compile(
        "linear_loop.eqm",
        "model LinearLoop
           parameter Real a = 3;
           parameter Real b = 1;
           Real x(start = 1, fixed = true);
           Real u;
           Real v;
           Real w;
         equation
           a*u + b*v + w = x;
           b*u + a*v - w = 2*x;
           u - v + a*w = time;
           der(x) = -u - v - w;
         end LinearLoop;",
    );
    let program = &compiled.program;
    let solve = |a: f64, b: f64, rhs: [f64; 3]| -> [f64; 3] {
        let m = [[a, b, 1.0], [b, a, -1.0], [1.0, -1.0, a]];
        let det = |m: &[[f64; 3]; 3]| {
            m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        };
        let d = det(&m);
        std::array::from_fn(|c| {
            let mut mc = m;
            for (row, value) in mc.iter_mut().zip(rhs) {
                row[c] = value;
            }
            det(&mc) / d
        })
    };
    let native = std::sync::Arc::new(eqm_sim::native::NativeCode::compile(program).expect("native code"));
    let mut interpreted = Instance::new(program).expect("instance");
    let mut compiled_native = Instance::new(program).expect("instance");
    compiled_native.attach_native(native);
    for a in [3.0, 3.0, -3.0, 5.5, 3.0] {
        for instance in [&mut interpreted, &mut compiled_native] {
            instance.set_param("a", a).expect("a valid parameter");
        }
        for (t, x) in [(0.0, 1.0), (0.25, 2.0), (1.5, -0.75)] {
            let expected = solve(a, 1.0, [x, 2.0 * x, t]);
            let mut got = Vec::new();
            for instance in [&mut interpreted, &mut compiled_native] {
                let mut dx = [0.0];
                instance.rhs(t, &[x], &mut dx).expect("the loop solves");
                let values: Vec<f64> = ["u", "v", "w"]
                    .iter()
                    .map(|n| instance.value(n, &[x]).expect(n))
                    .collect();
                for (value, want) in values.iter().zip(expected) {
                    assert!(
                        (value - want).abs() <= 1e-13 * want.abs().max(1.0),
                        "a = {a}, t = {t}: {values:?} against {expected:?}"
                    );
                }
                assert_eq!(dx[0], -values[0] - values[1] - values[2]);
                got.push(values.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
            }
            assert_eq!(got[0], got[1], "the back ends differ at a = {a}, t = {t}");
        }
    }
    // Factors kept from another parameter value would still reach the solution, by a chord
    // iteration that diverges for a = -3 and then by the trust-region method: only Newton's
    // one step with the new Jacobian leaves no recovery behind.
    for instance in [&mut interpreted, &mut compiled_native] {
        assert!(instance.interpreter().recoveries().is_empty());
    }
}
