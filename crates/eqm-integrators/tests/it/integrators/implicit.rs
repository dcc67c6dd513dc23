//! The implicit one-step methods on stiff problems, against their exact or published solutions.
//!
//! Implicit Euler, the trapezoid and a diagonally implicit user tableau must stay stable where
//! the explicit methods blow up, integrate Robertson's kinetics, and control their step by
//! step doubling or embedded weights with errors that follow the tolerance.

use super::*;

/// The stiff problem of [`stiff_cosine`]. With h = 0.05 (|λh| = 50) every explicit method is unstable; the implicit ones
/// follow the solution, and reuse their Jacobian across steps.
#[test]
fn implicit_methods_are_stable_on_a_stiff_problem() {
    let stiff = stiff_cosine();
    let options = fixed(0.05);
    for (method, bound) in [(Method::ImplicitEuler, 1e-4), (Method::Trapezoid, 1e-3)] {
        let r = run(&method, &options, &stiff, &Output::Steps);
        assert!(r.result.is_ok(), "{}: {:?}", method.name(), r.result);
        let worst = r
            .rows
            .iter()
            .map(|(t, x)| max_abs_error(x, &(stiff.exact)(*t)))
            .fold(0.0, f64::max);
        assert!(worst <= bound, "{}: error {worst:e}", method.name());
        // 40 steps: a Newton solve or two per step, and a Jacobian (one more evaluation for
        // this one state) only when the old one stops converging.
        assert_eq!(r.stats.steps, 40);
        assert!(r.stats.rhs_evals <= 5 * 40, "{}: {:?}", method.name(), r.stats);
    }
    // rk4 multiplies errors by about 2.4e5 per step at λh = −50.
    let explicit = run(&Method::Rk4, &options, &stiff, &Output::Steps);
    let blown_up = match (&explicit.result, explicit.rows.last()) {
        (Err(IntegrationError::NonFinite { .. }), _) => true,
        (Ok(_), Some((_, x))) => x[0].abs() > 1e100,
        _ => false,
    };
    assert!(blown_up, "rk4 should blow up at this step: {:?}", explicit.result);
}

/// A nonlinear stiff system (Robertson's chemical kinetics) with implicit Euler: the
/// concentrations stay non-negative and sum to one (the method conserves linear invariants),
/// and approach the published values at t = 40 (Hairer and Wanner, Solving ODEs II:
/// y1 = 0.7158, y2 = 9.185e-6, y3 = 0.2842).
#[test]
fn implicit_euler_integrates_robertson() {
    let problem = Problem {
        x0: vec![1.0, 0.0, 0.0],
        t_end: 40.0,
        rhs: |_, y, dy| {
            dy[0] = -0.04 * y[0] + 1e4 * y[1] * y[2];
            dy[1] = 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] * y[1];
            dy[2] = 3e7 * y[1] * y[1];
        },
        exact: |_| vec![0.7158270687, 9.185534764e-6, 0.2841637457],
    };
    let options = Options {
        step: Some(0.01),
        rtol: 1e-8,
        atol: Atol::Scalar(1e-12),
        ..Options::default()
    };
    let r = run(&Method::ImplicitEuler, &options, &problem, &Output::Steps);
    assert!(r.result.is_ok(), "{:?}", r.result);
    let (_, y) = r.rows.last().expect("rows");
    let sum: f64 = y.iter().sum();
    assert!((sum - 1.0).abs() < 1e-9, "sum {sum}");
    assert!(y.iter().all(|v| *v >= -1e-12), "{y:?}");
    let exact = (problem.exact)(40.0);
    // First order with h = 0.01: relative errors of a few 1e-4.
    for (k, (a, b)) in y.iter().zip(&exact).enumerate() {
        assert!((a - b).abs() <= 2e-3 * b.abs(), "y{}: {a} vs {b}", k + 1);
    }
}

/// Without a fixed step, implicit Euler and the trapezoid adapt it by step doubling: on the
/// stiff problem above the global error follows the tolerance (with the method's order: a
/// hundredfold tighter tolerance gives about 100^(p/(p+1)) times smaller errors) while the
/// step count stays far below what an explicit method's stability would need (|λ| = 1000 over
/// 2 s: about 600 steps for DOPRI5 at any tolerance).
#[test]
fn implicit_methods_adapt_their_step_without_a_fixed_one() {
    let stiff = stiff_cosine();
    for (method, p) in [(Method::ImplicitEuler, 1.0), (Method::Trapezoid, 2.0)] {
        let mut errors = Vec::new();
        for tol in [1e-4, 1e-6] {
            let r = run(&method, &tolerance(tol), &stiff, &Output::Steps);
            assert!(r.result.is_ok(), "{}: {:?}", method.name(), r.result);
            let worst = r
                .rows
                .iter()
                .map(|(t, x)| max_abs_error(x, &(stiff.exact)(*t)))
                .fold(0.0, f64::max);
            assert!(worst < 100.0 * tol, "{} at {tol}: error {worst:e}", method.name());
            assert!(r.stats.steps < 400, "{} at {tol}: {:?}", method.name(), r.stats);
            errors.push(worst);
        }
        let gain = errors[0] / errors[1];
        let expected = 100f64.powf(p / (p + 1.0));
        assert!(
            gain > expected / 4.0,
            "{}: errors {errors:?}, gain {gain} (expected about {expected})",
            method.name()
        );
    }
}

/// A diagonally implicit user tableau is stable on the stiff problem where explicit methods
/// blow up, fixed-step and, with embedded weights, adaptive.
#[test]
fn diagonally_implicit_user_tableaux_handle_stiff_problems() {
    let stiff = stiff_cosine();
    let fixed_run = run(
        &Method::Tableau(Box::new(sdirk2())),
        &fixed(0.05),
        &stiff,
        &Output::Steps,
    );
    assert!(fixed_run.result.is_ok(), "{:?}", fixed_run.result);
    let worst = fixed_run
        .rows
        .iter()
        .map(|(t, x)| max_abs_error(x, &(stiff.exact)(*t)))
        .fold(0.0, f64::max);
    assert!(worst < 1e-3, "error {worst:e}");
    // The same method with first-order embedded weights controls its step.
    let base = sdirk2();
    let gamma = base.a(0, 0);
    let embedded = Tableau::new(
        "sdirk2-embedded",
        base.c().to_vec(),
        vec![vec![gamma], vec![1.0 - gamma, gamma]],
        base.b().to_vec(),
        Some(vec![0.6, 0.4]),
    )
    .expect("valid");
    let method = Method::Tableau(Box::new(embedded));
    assert!(method.is_adaptive());
    let mut errors = Vec::new();
    for tol in [1e-4, 1e-6] {
        let r = run(&method, &tolerance(tol), &stiff, &Output::Steps);
        assert!(r.result.is_ok(), "{:?}", r.result);
        let worst = r
            .rows
            .iter()
            .map(|(t, x)| max_abs_error(x, &(stiff.exact)(*t)))
            .fold(0.0, f64::max);
        assert!(worst < 100.0 * tol, "tol {tol}: {worst:e}");
        assert!(r.stats.steps < 2000, "tol {tol}: {:?}", r.stats);
        errors.push(worst);
    }
    assert!(errors[1] < errors[0] / 10.0, "{errors:?}");
}
