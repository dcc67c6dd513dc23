//! Convergence orders of the integration methods, measured against the exact solutions of the
//! shared problems.
//!
//! Each test takes several halvings of the step (or, for the adaptive implicit Euler and
//! trapezoid, several tightenings of the tolerance) and checks that the slope of log error over
//! log step is the method's order: the explicit and implicit fixed-step methods, user tableaux,
//! Radau5 and BDF of every fixed order, and the order reduction of Radau5 on the stiff
//! Prothero–Robinson problem.

use super::*;

#[test]
fn fixed_step_methods_converge_with_their_order() {
    let kutta = Method::Tableau(Box::new(Tableau::parse(KUTTA3).expect("Kutta's method parses")));
    let rk38 = Method::Tableau(Box::new(three_eighths()));
    let sdirk2 = Method::Tableau(Box::new(sdirk2()));
    let cases = [
        (Method::Euler, 1.0),
        (Method::Heun, 2.0),
        (Method::Midpoint, 2.0),
        (Method::Rk4, 4.0),
        (Method::Ab2, 2.0),
        (Method::Ab4, 4.0),
        (Method::ImplicitEuler, 1.0),
        (Method::Trapezoid, 2.0),
        (kutta, 3.0),
        (rk38, 4.0),
        (sdirk2, 2.0),
    ];
    let ns = [40, 80, 160, 320, 640];
    for (method, expected) in &cases {
        for (name, problem) in [("oscillator", oscillator(2.0)), ("forced decay", forced_decay())] {
            let order = observed_order(method, &problem, &ns);
            assert_order(&format!("{} on the {name}", method.name()), order, *expected, 0.2);
        }
    }
}

/// Radau5 and BDF only control their step size unless given a fixed one; with it, their
/// convergence orders show: 5 for Radau IIA, and `k` for BDF (NDF) of fixed order `k`, whose
/// first `k` steps Radau5 takes so that the starting values do not spoil the order. Radau5 is
/// measured at larger steps, since at h = 2/160 its error already nears rounding.
#[test]
fn radau5_and_bdf_with_a_fixed_step_converge_with_their_order() {
    for (name, problem) in [("oscillator", oscillator(2.0)), ("forced decay", forced_decay())] {
        let order = observed_order(&Method::Radau5, &problem, &[10, 20, 40, 80]);
        assert_order(&format!("radau5 on the {name}"), order, 5.0, 0.3);
        for k in 1..=5 {
            let make = |o: Options| -> Box<dyn Stepper> { Box::new(Bdf::with_order(k, o)) };
            let order = observed_order_of(&format!("bdf{k}"), &make, &problem, &[40, 80, 160, 320]);
            assert_order(&format!("bdf of order {k} on the {name}"), order, k as f64, 0.3);
        }
        // The default BDF keeps its highest order, 5, as the fixed-step order.
        let order = observed_order(&Method::Bdf, &problem, &[40, 80, 160, 320]);
        assert_order(&format!("bdf on the {name}"), order, 5.0, 0.3);
    }
}

/// Prothero and Robinson's problem y' = λ(y − cos t) − sin t, y(0) = 1, whose solution is
/// cos t for every λ.
fn prothero_robinson_nonstiff() -> Problem {
    Problem {
        x0: vec![1.0],
        t_end: 2.0,
        rhs: |t, x, dx| dx[0] = -(x[0] - t.cos()) - t.sin(),
        exact: |t| vec![t.cos()],
    }
}

/// [`prothero_robinson_nonstiff`] with λ = −1e6: every step is far above the stiff time scale.
fn prothero_robinson_stiff() -> Problem {
    Problem {
        x0: vec![1.0],
        t_end: 2.0,
        rhs: |t, x, dx| dx[0] = -1e6 * (x[0] - t.cos()) - t.sin(),
        exact: |t| vec![t.cos()],
    }
}

/// Order reduction, a known property of Radau IIA: with |λh| ≫ 1 its error is that of the
/// stage order 3 (divided by λ), not of the classical order 5, which the same problem shows
/// with λ = −1. The tolerances only scale the Newton tolerance; they are tight here because the
/// stiff errors are around 1e-12.
#[test]
fn radau5_drops_to_its_stage_order_on_the_stiff_prothero_robinson_problem() {
    let make = |mut o: Options| -> Box<dyn Stepper> {
        o.rtol = 1e-12;
        o.atol = Atol::Scalar(1e-12);
        Box::new(Radau::new(o))
    };
    let ns = [10, 20, 40, 80];
    let nonstiff = observed_order_of("radau5", &make, &prothero_robinson_nonstiff(), &ns);
    assert_order("radau5 on Prothero–Robinson with λ = −1", nonstiff, 5.0, 0.3);
    let stiff = observed_order_of("radau5", &make, &prothero_robinson_stiff(), &ns);
    assert_order("radau5 on Prothero–Robinson with λ = −1e6", stiff, 3.0, 0.3);
}

/// The order of the adaptive (step doubling) implicit Euler and trapezoid, measured through the
/// tolerance: each step's error is held at about the tolerance, so with order p the step
/// follows tol^(1/(p+1)) and the global error tol^(p/(p+1)), on smooth non-stiff problems
/// where the asymptotic error expansion holds (1/2 for implicit Euler, 2/3 for the trapezoid).
#[test]
fn adaptive_implicit_euler_and_trapezoid_converge_with_their_order() {
    let tolerances = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7];
    for (name, problem) in [("oscillator", oscillator(2.0)), ("forced decay", forced_decay())] {
        for (method, p) in [(Method::ImplicitEuler, 1.0), (Method::Trapezoid, 2.0)] {
            let (mut errors, mut steps) = (Vec::new(), Vec::new());
            for tol in tolerances {
                let r = run(&method, &tolerance(tol), &problem, &Output::Steps);
                assert_eq!(r.result, Ok(Outcome::Finished), "{} at {tol}", method.name());
                let worst = r
                    .rows
                    .iter()
                    .map(|(t, x)| max_abs_error(x, &(problem.exact)(*t)))
                    .fold(0.0, f64::max);
                errors.push((tol, worst));
                steps.push((tol, r.stats.steps as f64));
            }
            let context = format!("{} on the {name}", method.name());
            assert_order(
                &format!("{context}, error over tolerance"),
                slope(&errors),
                p / (p + 1.0),
                0.1,
            );
            assert_order(
                &format!("{context}, steps over tolerance"),
                -slope(&steps),
                1.0 / (p + 1.0),
                0.1,
            );
        }
    }
}
