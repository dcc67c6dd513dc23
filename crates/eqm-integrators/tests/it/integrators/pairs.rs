//! The higher-order embedded pairs (tsit5, vern6 to vern9) and the explicit adaptive methods on
//! the chain of masses: order conditions of the coefficients, measured convergence orders of the
//! solution and of the dense output, the chain against its closed form, and the work the
//! high-order pairs save at tight tolerances.

use super::*;
use crate::chain::Chain;
use crate::chain_system::ChainSystem;
use eqm_integrators::adaptive::Adaptive;
use eqm_integrators::explicit::ExplicitRk;
use eqm_integrators::pairs::{self, Interpolant};

/// Each new pair: its tableau, interpolant, order, embedded order and interpolant order.
fn new_pairs() -> [(Tableau, &'static Interpolant, u32, u32, u32); 5] {
    [
        (pairs::TSIT5, &pairs::TSIT5_INTERPOLANT, 5, 4, 4),
        (pairs::VERN6, &pairs::VERN6_INTERPOLANT, 6, 5, 6),
        (pairs::VERN7, &pairs::VERN7_INTERPOLANT, 7, 6, 6),
        (pairs::VERN8, &pairs::VERN8_INTERPOLANT, 8, 7, 8),
        (pairs::VERN9, &pairs::VERN9_INTERPOLANT, 9, 8, 9),
    ]
}

/// The pairs' coefficients satisfy the order conditions of their stated orders and not the next
/// ones (all 486 trees up to nine nodes are checked), for the solution, the embedded solution
/// and the interpolant at several θ over all its stages.
#[test]
fn new_pairs_satisfy_their_order_conditions() {
    for (tableau, interpolant, p, q, dense) in new_pairs() {
        let name = tableau.name().to_string();
        let checked = rechecked(&tableau);
        assert_eq!(checked.order(), p, "{name}: order of b");
        assert_eq!(checked.embedded_order(), Some(q), "{name}: order of b̂");
        assert_eq!(
            (tableau.order(), tableau.embedded_order()),
            (p, Some(q)),
            "{name}: declared"
        );
        let (c, a) = interpolant.extended(&tableau);
        let n = interpolant.stages();
        for i in 0..n {
            let sum: f64 = a[i * n..(i + 1) * n].iter().sum();
            assert!(
                (sum - c[i]).abs() < 1e-12,
                "{name}: c[{i}] = {} but row sum {sum}",
                c[i]
            );
        }
        let mut w = vec![0.0; n];
        for theta in [0.1, 0.35, 0.5, 0.8] {
            interpolant.weights_at(theta, &mut w);
            assert_eq!(
                tableau::order_at(&c, &a, &w, theta),
                dense,
                "{name}: interpolant order at θ = {theta}"
            );
        }
        // At θ = 1 the interpolant is a method of (at least) its order over the extended stages.
        interpolant.weights_at(1.0, &mut w);
        assert!(tableau::order_at(&c, &a, &w, 1.0) >= dense, "{name} at θ = 1");
        assert_eq!(interpolant.order(), dense, "{name}: declared interpolant order");
    }
}

/// The Kepler orbit of eccentricity 0.5 started at the pericentre (μ = 1, semi-major axis 1):
/// with the eccentric anomaly `E` solving Kepler's equation `E − e sin E = t`, the position is
/// `(cos E − e, √(1−e²) sin E)` and the velocity `(−sin E, √(1−e²) cos E) / (1 − e cos E)`.
fn kepler_at(t: f64) -> Vec<f64> {
    let e = ECCENTRICITY;
    let mut anomaly = t;
    for _ in 0..50 {
        anomaly -= (anomaly - e * anomaly.sin() - t) / (1.0 - e * anomaly.cos());
    }
    let (sin, cos) = anomaly.sin_cos();
    let root = (1.0 - e * e).sqrt();
    let rate = 1.0 / (1.0 - e * cos);
    vec![cos - e, root * sin, -sin * rate, root * cos * rate]
}

/// The orbit over one period, with [`kepler_at`] as its solution at any time.
fn orbit() -> Problem {
    Problem {
        exact: kepler_at,
        ..kepler()
    }
}

/// Options that make an adaptive pair take steps of exactly `h`: the step is capped at `h` and
/// starts there, and the tolerance is so loose that no step is rejected.
fn steps_of(h: f64) -> Options {
    Options {
        rtol: 1e6,
        atol: Atol::Scalar(1e6),
        initial_step: Some(h),
        max_step: Some(h),
        ..Options::default()
    }
}

/// The largest error at the step ends of a run with `n` fixed steps of `tableau` on `problem`,
/// against its solution.
fn global_error(tableau: &Tableau, problem: &Problem, n: usize) -> f64 {
    let mut stepper = ExplicitRk::new(tableau.clone(), fixed(problem.t_end / n as f64));
    let r = run_with(
        &mut stepper,
        &mut problem.system(),
        &problem.x0,
        problem.t_end,
        &Output::Steps,
    );
    assert_eq!(r.result, Ok(Outcome::Finished), "{}", tableau.name());
    assert_eq!(r.stats.steps, n, "{}", tableau.name());
    r.rows
        .iter()
        .map(|(t, x)| max_abs_error(x, &(problem.exact)(*t)))
        .fold(0.0, f64::max)
}

/// The largest error of the dense output at points inside the steps of a run with `n` steps of
/// exactly `T/n` (the adaptive pair held to them by [`steps_of`]) against the problem's solution.
fn dense_error(make: fn(Options) -> Adaptive, problem: &Problem, n: usize) -> f64 {
    let h = problem.t_end / n as f64;
    let mut stepper = make(steps_of(h));
    let mut sys = problem.system();
    stepper.initialize(&mut sys, 0.0, &problem.x0).expect("initialize");
    let mut worst: f64 = 0.0;
    let mut out = vec![0.0; problem.x0.len()];
    while stepper.time() < problem.t_end {
        let info = stepper.step(&mut sys, problem.t_end).expect("step");
        assert!(
            ((info.t - info.t_prev) - h).abs() < 1e-9 * h,
            "a step of {}",
            info.t - info.t_prev
        );
        for theta in [0.2, 0.5, 0.7, 0.9] {
            let t = info.t_prev + theta * h;
            stepper.interpolate(t, &mut out);
            worst = worst.max(max_abs_error(&out, &(problem.exact)(t)));
        }
    }
    worst
}

/// One row of the convergence tests: the method, the problem and the step count `n` (compared
/// with `2n`).
struct Convergence {
    tableau: Tableau,
    make: fn(Options) -> Adaptive,
    order: u32,
    problem: fn() -> Problem,
    steps: usize,
    /// The problem and step count for the dense output.
    dense: (fn() -> Problem, usize),
}

/// The Kepler orbit to t = 2.
fn short_orbit() -> Problem {
    Problem { t_end: 2.0, ..orbit() }
}

/// The oscillator to t = 10.
fn long_oscillator() -> Problem {
    oscillator(10.0)
}

/// The step counts lie in each method's asymptotic range, where the errors are far above
/// rounding (vern8's dense output also above the rounding of its interpolant's large
/// coefficients, about 1e-10), on a problem that shows the order cleanly: on some problems a pair's leading error
/// term nearly vanishes and the next order shows over a long range of step sizes (the order
/// conditions above are the exact test).
fn convergence_cases() -> [Convergence; 5] {
    [
        Convergence {
            tableau: pairs::TSIT5,
            make: Adaptive::tsit5,
            order: 5,
            problem: short_orbit,
            steps: 64,
            dense: (short_orbit, 64),
        },
        Convergence {
            tableau: pairs::VERN6,
            make: Adaptive::vern6,
            order: 6,
            problem: short_orbit,
            steps: 64,
            dense: (short_orbit, 64),
        },
        Convergence {
            tableau: pairs::VERN7,
            make: Adaptive::vern7,
            order: 7,
            problem: long_oscillator,
            steps: 64,
            dense: (long_oscillator, 64),
        },
        Convergence {
            tableau: pairs::VERN8,
            make: Adaptive::vern8,
            order: 8,
            problem: long_oscillator,
            steps: 24,
            dense: (short_orbit, 8),
        },
        Convergence {
            tableau: pairs::VERN9,
            make: Adaptive::vern9,
            order: 9,
            problem: orbit,
            steps: 24,
            dense: (orbit, 24),
        },
    ]
}

/// With fixed steps, the error ratio between `n` and `2n` steps gives each pair's order within
/// ±0.3.
#[test]
fn new_pairs_converge_with_their_order() {
    for case in convergence_cases() {
        let problem = (case.problem)();
        let (coarse, fine) = (
            global_error(&case.tableau, &problem, case.steps),
            global_error(&case.tableau, &problem, 2 * case.steps),
        );
        let observed = (coarse / fine).log2();
        assert!(
            (observed - f64::from(case.order)).abs() <= 0.3 && fine > 1e-14,
            "{}: errors {coarse:e} and {fine:e}: order {observed}",
            case.tableau.name()
        );
    }
}

/// The dense output between the steps converges with the method's order: each interpolant's
/// own error (locally of order q + 1, q its order) is no larger than the steps' global error.
#[test]
fn dense_output_converges_with_the_pairs_order() {
    for case in convergence_cases() {
        let (problem, steps) = ((case.dense.0)(), case.dense.1);
        let (coarse, fine) = (
            dense_error(case.make, &problem, steps),
            dense_error(case.make, &problem, 2 * steps),
        );
        let observed = (coarse / fine).log2();
        assert!(
            (observed - f64::from(case.order)).abs() <= 0.3 && fine > 1e-14,
            "{}: dense errors {coarse:e} and {fine:e}: order {observed}",
            case.tableau.name()
        );
    }
}

/// The state at `t_end` and the statistics of a run on the chain.
fn chain_run(method: &Method, chain: Chain, rtol: f64, t_end: f64, output: &Output) -> (Vec<f64>, Stats, f64) {
    let mut stepper = stepper_for(method, &tolerance(rtol));
    let mut sys = ChainSystem::new(chain, false, false);
    let mut worst: f64 = 0.0;
    let mut end = Vec::new();
    let result = integrate(
        &mut sys,
        stepper.as_mut(),
        0.0,
        &chain.initial_state(),
        t_end,
        output,
        |t, x| {
            worst = worst.max(max_abs_error(x, &chain.exact(t)));
            if t == t_end {
                end = x.to_vec();
            }
            ControlFlow::Continue(())
        },
    );
    assert_eq!(result, Ok(Outcome::Finished), "{}", method.name());
    (end, stepper.stats(), worst)
}

const EXPLICIT_ADAPTIVE: [Method; 7] = [
    Method::Rkf45,
    Method::Dopri5,
    Method::Tsit5,
    Method::Vern6,
    Method::Vern7,
    Method::Vern8,
    Method::Vern9,
];

/// Every explicit adaptive method on the chain of ten masses at rtol = atol = 1e-8 meets the
/// closed form to 1e-6 at the end and at the interpolated rows in between, over t in [0, 2]
/// (about six periods of the fastest mode, 20 rad/s). The global error grows with time: at
/// t = 2 it is 6.7e-7 for rkf45, 3.3e-7 for dopri5 and 3.6e-9 for vern9, at t = 10 rkf45's
/// reaches 1.5e-6.
#[test]
fn explicit_adaptive_methods_meet_the_chain_closed_form() {
    let chain = Chain::standard(10);
    for method in EXPLICIT_ADAPTIVE {
        let (end, stats, worst) = chain_run(&method, chain, 1e-8, 2.0, &Output::Interval(0.37));
        let error = max_abs_error(&end, &chain.exact(2.0));
        assert!(
            error < 1e-6 && worst < 1e-6,
            "{}: error {error:e} at the end, {worst:e} over the rows ({stats:?})",
            method.name()
        );
    }
}

/// At rtol = 1e-10 the pairs of order 7 to 9 need fewer right-hand-side evaluations than
/// DOPRI5 on the chain (their interpolants' extra stages included), and every method stays
/// within 1e-7 of the closed form.
#[test]
fn high_order_pairs_need_less_work_at_tight_tolerances() {
    let chain = Chain::standard(10);
    let evaluations = |method: &Method| {
        let (end, stats, _) = chain_run(method, chain, 1e-10, 10.0, &Output::Times(Vec::new()));
        let error = max_abs_error(&end, &chain.exact(10.0));
        assert!(error < 1e-7, "{}: error {error:e}", method.name());
        stats.rhs_evals
    };
    let dopri5 = evaluations(&Method::Dopri5);
    for method in [Method::Vern7, Method::Vern8, Method::Vern9] {
        let evals = evaluations(&method);
        assert!(
            evals < dopri5,
            "{}: {evals} evaluations, dopri5 {dopri5}",
            method.name()
        );
    }
}

/// The new pairs stop on a failing right-hand side like the others, and interpolation after a
/// failed step still serves the last accepted step.
#[test]
fn new_pairs_interpolate_the_last_accepted_step_after_a_failure() {
    for method in [Method::Tsit5, Method::Vern6, Method::Vern9] {
        let mut stepper = stepper_for(&method, &tolerance(1e-8));
        let problem = orbit();
        let mut calls = 0;
        let mut sys = Sys {
            dim: 4,
            f: |t: f64, x: &[f64], dx: &mut [f64]| {
                calls += 1;
                if t > 1.0 {
                    return Err(RhsError::new("beyond t = 1"));
                }
                (problem.rhs)(t, x, dx);
                Ok(())
            },
        };
        stepper.initialize(&mut sys, 0.0, &problem.x0).expect("initialize");
        let info = stepper.step(&mut sys, 0.5).expect("a first step");
        let mid = 0.5 * (info.t_prev + info.t);
        let mut before = [0.0; 4];
        stepper.interpolate(mid, &mut before);
        let mut failed = false;
        while !failed {
            failed = stepper.step(&mut sys, 2.0).is_err();
        }
        let mut last = [0.0; 4];
        let t_last = stepper.time();
        assert!(t_last <= 1.0, "{}", method.name());
        stepper.interpolate(t_last, &mut last);
        assert_eq!(last, stepper.state(), "{}", method.name());
        assert!(max_abs_error(&before, &kepler_at(mid)) < 1e-7, "{}", method.name());
    }
}
