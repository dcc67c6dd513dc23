//! The continuation on the start values: blocks of the initialization that Newton and the
//! trust-region method do not solve from the start values, solved by following the path of the
//! fixed-point homotopy `λ F(x) + (1 - λ)(x - x_start)` from the start values, on both back ends
//! with the same bits; each root against its closed form (Cardano's formula, `atanh`) or
//! bisection. A path that is lost ends the run with a diagnostic saying what was tried.

use crate::nonlinear::{bisect, close, solve};

use eqm_sim::interp::{NewtonFailure, RecoveryMethod};
use eqm_sim::simulate::RecoveryNote;

/// The real root of the depressed cubic `u³ + p u + q = 0` with one real root (Cardano).
fn cardano(p: f64, q: f64) -> f64 {
    let d = (q * q / 4.0 + p * p * p / 27.0).sqrt();
    (-q / 2.0 + d).cbrt() + (-q / 2.0 - d).cbrt()
}

/// The one block of a model was solved by the continuation after Newton failed for `why`.
fn by_continuation(name: &str, notes: &[RecoveryNote], why: NewtonFailure) {
    assert_eq!(notes.len(), 1, "{name}: {notes:?}");
    let first = notes[0].recoveries.first;
    assert_eq!(first.method, RecoveryMethod::Continuation, "{name}: {notes:?}");
    assert_eq!(first.newton, why, "{name}: {notes:?}");
    assert!(first.iterations > 0, "{name}: {notes:?}");
    assert!(
        notes[0].to_string().contains("continuation on the start values"),
        "{name}: {}",
        notes[0]
    );
}

/// `x³ - 2x + 2 = 0` from x = 0: Newton's iterates cycle between 0 and 1, and the damped
/// iteration (and the trust-region method) stop at the local minimum of `|F|` at `√(2/3)`; the
/// one real root, `-1.7693`, lies on the other side. As a loop of two (`y = x²`,
/// `x y - 2x + 2 = 0`) the continuation reaches it; as one equation, the search for a change of
/// sign comes first and finds it too.
#[test]
fn the_cycling_cubic_is_solved_by_the_continuation_on_the_start_value() {
    let root = cardano(-2.0, 2.0);
    let by_bisection = bisect(-3.0, -1.0, |x| x * x * x - 2.0 * x + 2.0);
    assert!((root - by_bisection).abs() < 1e-14, "{root} {by_bisection}");
    let (found, notes) = solve(
        "cubic1.eqm",
        "model Cubic1\n  Real x(start = 0);\nequation\n  x^3 - 2*x + 2 = 0;\nend Cubic1;",
        &["x"],
    );
    close("cubic, one equation", &found, &[root], 1e-14, 0.0);
    assert_eq!(notes.len(), 1, "{notes:?}");
    let (found, notes) = solve(
        "cubic2.eqm",
        "model Cubic2\n  Real x(start = 0);\n  Real y;\nequation\n  y = x^2;\n  x*y - 2*x + 2 = 0;\nend Cubic2;",
        &["x", "y"],
    );
    close("cubic, loop", &found, &[root, root * root], 1e-14, 0.0);
    by_continuation("cubic, loop", &notes, NewtonFailure::NoConvergence);
}

/// `tanh(x) = 0.999` from x = -10, far out on the flat side: the first Newton step lands on
/// the other flat side, where the derivative is zero to the last bit; a fallback (for one
/// equation the Newton homotopy comes before the continuation) reaches the root
/// `atanh(0.999) = ln(1999)/2`.
#[test]
fn a_saturating_equation_from_a_far_start_is_solved() {
    let (found, notes) = solve(
        "tanh.eqm",
        "model Saturating\n  Real x(start = -10);\nequation\n  tanh(x) = 0.999;\nend Saturating;",
        &["x"],
    );
    close("tanh", &found, &[0.5 * 1999f64.ln()], 1e-12, 0.0);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0].recoveries.first.newton, NewtonFailure::Singular, "{notes:?}");
}

/// The Freudenstein–Roth function with `x1 = u³ + u`, so that tearing cannot solve either
/// equation for one unknown and the loop keeps both: from (u, x2) = (0, -2) Newton and the
/// trust-region method stop near the local minimum of `‖F‖` (x2 ≈ -0.9), the continuation
/// reaches the root x2 = 4, `u³ + u = 5`.
#[test]
fn a_freudenstein_roth_like_loop_is_solved_by_the_continuation() {
    let (found, notes) = solve("frlike.eqm", &freudenstein_roth_like(0.0), &["u", "x2"]);
    close("Freudenstein–Roth-like", &found, &[cardano(1.0, -5.0), 4.0], 1e-12, 0.0);
    by_continuation("Freudenstein–Roth-like", &notes, NewtonFailure::NoConvergence);
    assert_eq!(notes[0].unknowns.len(), 2, "{notes:?}");
}

/// The Freudenstein–Roth-like loop with `u` starting at `u0`, x2 at -2.
fn freudenstein_roth_like(u0: f64) -> String {
    format!(
        "model FRLike
           Real u(start = {u0});
           Real x2(start = -2);
         equation
           -13 + (u^3 + u) + ((5 - x2)*x2 - 2)*x2 = 0;
           -29 + (u^3 + u) + ((x2 + 1)*x2 - 14)*x2 = 0;
         end FRLike;"
    )
}

/// From u = 0.5 every path in λ of the same loop meets a turning point (both signs of the
/// fixed-point term, and the Newton homotopy); Newton from points farther along the first
/// Newton step reaches the root x2 = 4, `u³ + u = 5`.
#[test]
fn a_lost_path_is_passed_by_newton_farther_along_its_first_step() {
    let (found, notes) = solve("frlike_far.eqm", &freudenstein_roth_like(0.5), &["u", "x2"]);
    close(
        "Freudenstein–Roth-like from 0.5",
        &found,
        &[cardano(1.0, -5.0), 4.0],
        1e-12,
        0.0,
    );
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0].recoveries.first.method, RecoveryMethod::NewtonRay, "{notes:?}");
}

/// `y = x² + 1` and `x y + y² = 0` have no real root (`y (x + y) = 0` needs `y = 0` or
/// `x² + x + 1 = 0`): every method fails, and the diagnostic says which were tried.
#[test]
fn a_loop_without_a_root_is_a_diagnostic_that_names_the_methods_tried() {
    let text = "model NoRoot
           Real x(start = 0.5);
           Real y;
         equation
           y = x*x + 1;
           x*y + y*y = 0;
         end NoRoot;";
    let (message, diagnostic) = crate::failure_of("no_root.eqm", text);
    assert!(message.contains("no method reached a solution"), "{message}");
    assert_eq!(diagnostic.code, "E0702", "{diagnostic:?}");
    assert!(
        diagnostic
            .notes
            .iter()
            .any(|n| n.contains("continuation on the start values") && n.contains("trust-region")),
        "{diagnostic:?}"
    );
}
