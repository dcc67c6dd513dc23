//! The stiff solvers against published reference solutions of the standard stiff test problems
//! (Robertson to t = 40 and 1e11, HIRES, Van der Pol with μ = 1000, the Oregonator), at
//! tolerances where the reference values are far more accurate than the solver.

use crate::stiff_problems as stiff;

use eqm_integrators::{Atol, Method, OdeSystem, Options, Output, RhsError, integrate, stepper_for};
use std::ops::ControlFlow;
use stiff::StiffProblem;

/// The solution at the end time, and the statistics; the solve must succeed.
fn solve(method: &Method, problem: &StiffProblem, rtol: f64, atol: f64) -> (Vec<f64>, eqm_integrators::Stats) {
    stiff::solve(method, problem, rtol, atol).unwrap_or_else(|e| panic!("{}: {e}", problem.name))
}

/// The largest error relative to the reference, for components above `floor` (smaller ones
/// count absolutely against `floor`).
fn relative_error(x: &[f64], reference: &[f64], floor: f64) -> f64 {
    x.iter()
        .zip(reference)
        .map(|(a, b)| (a - b).abs() / b.abs().max(floor))
        .fold(0.0, f64::max)
}

#[test]
fn bdf_and_radau5_match_the_reference_solutions_of_the_stiff_test_set() {
    // (problem, rtol, atol, allowed relative error, floor for tiny components)
    let cases = [
        (stiff::robertson(40.0), 1e-8, 1e-14, 1e-6, 1e-12),
        (stiff::robertson(1e11), 1e-8, 1e-20, 1e-4, 1e-15),
        (stiff::hires(), 1e-8, 1e-12, 1e-5, 1e-8),
        (stiff::van_der_pol(), 1e-8, 1e-8, 1e-5, 1e-8),
        (stiff::oregonator(), 1e-8, 1e-8, 1e-5, 1e-8),
    ];
    // Each with difference quotients and with the exact Jacobian the system provides.
    for (method, exact, (problem, rtol, atol, allowed, floor)) in [Method::Bdf, Method::Radau5]
        .iter()
        .flat_map(|m| [false, true].map(|exact| (m, exact)))
        .flat_map(|(m, exact)| cases.clone().map(|c| (m, exact, c)))
    {
        let (x, stats) =
            stiff::solve_rust(method, &problem, rtol, atol, exact).unwrap_or_else(|e| panic!("{}: {e}", problem.name));
        let error = relative_error(&x, &problem.reference, floor);
        assert!(
            error < allowed,
            "{} on {} at t = {} (exact Jacobian: {exact}): relative error {error:e} (x = {x:?}, stats {stats:?})",
            method.name(),
            problem.name,
            problem.t_end
        );
        // Stiff problems must not need explicit-method step counts.
        assert!(stats.steps < 20_000, "{}: {stats:?}", problem.name);
    }
}

#[test]
fn the_stiff_test_set_written_as_models_runs_with_the_symbolic_jacobian() {
    // The same problems through the compiler: JIT right-hand side and symbolic Jacobian. The
    // solutions match the references, every Jacobian is symbolic, and the hand-written
    // right-hand side with difference quotients takes the same steps up to rounding.
    let cases = [
        (stiff::robertson(1e11), 1e-8, 1e-20, 1e-4, 1e-15),
        (stiff::hires(), 1e-8, 1e-12, 1e-5, 1e-8),
        (stiff::van_der_pol(), 1e-8, 1e-8, 1e-5, 1e-8),
        (stiff::oregonator(), 1e-8, 1e-8, 1e-5, 1e-8),
    ];
    for (problem, rtol, atol, allowed, floor) in cases {
        let program = stiff::compile_model(&problem);
        let native = std::sync::Arc::new(eqm_sim::native::NativeCode::compile(&program).expect("native code"));
        for method in [Method::Bdf, Method::Radau5] {
            let mut system = stiff::ModelSystem::new(&program, &native);
            let (x, stats) = stiff::solve_model(&method, &mut system, &problem, rtol, atol)
                .unwrap_or_else(|e| panic!("{}: {e}", problem.name));
            let error = relative_error(&x, &problem.reference, floor);
            assert!(
                error < allowed,
                "{} on the {} model: {error:e}",
                method.name(),
                problem.name
            );
            assert!(
                stats.jacobians > 0 && stats.symbolic_jacobians == stats.jacobians,
                "{stats:?}"
            );
            let (_, by_differences) = solve(&method, &problem, rtol, atol);
            // The same steps up to rounding: the two Jacobians differ only by the differences'
            // error, which moves the steps a little.
            let steps = stats.steps as f64 / by_differences.steps as f64;
            assert!(
                (0.9..1.1).contains(&steps),
                "{} on {}: {stats:?} vs {by_differences:?}",
                method.name(),
                problem.name
            );
            // Each difference-quotient Jacobian costs one evaluation per state, a symbolic one
            // none: the symbolic run needs about the evaluations of the other one's steps alone.
            let of_steps = by_differences.rhs_evals - by_differences.jacobians * x.len();
            assert!(
                (stats.rhs_evals as f64) < 1.1 * of_steps as f64,
                "{} on {}: {stats:?} vs {by_differences:?}",
                method.name(),
                problem.name
            );
        }
    }
}

#[test]
fn bdf_error_follows_the_tolerance() {
    // Tighter tolerances give proportionally smaller errors on HIRES (the error at each
    // tolerance stays within a modest factor of it).
    let problem = stiff::hires();
    let mut previous = f64::INFINITY;
    for rtol in [1e-4, 1e-6, 1e-8] {
        let (x, _) = solve(&Method::Bdf, &problem, rtol, rtol * 1e-4);
        let error = relative_error(&x, &problem.reference, 1e-6);
        assert!(error < 100.0 * rtol, "rtol {rtol}: error {error:e}");
        assert!(error < previous, "rtol {rtol}: error {error:e} not below {previous:e}");
        previous = error;
    }
}

#[test]
fn auto_switches_to_bdf_on_stiff_problems_and_stays_explicit_otherwise() {
    let options = Options {
        rtol: 1e-8,
        atol: Atol::Scalar(1e-14),
        ..Options::default()
    };
    // Robertson: stiff after the initial transient; auto must switch and reach the reference.
    let problem = stiff::robertson(40.0);
    let (x, stats) = solve(&Method::Auto, &problem, 1e-8, 1e-14);
    assert!(relative_error(&x, &problem.reference, 1e-12) < 1e-6, "{x:?}");
    // An explicit method alone needs about 40 / (3.3 / 1e4) ≈ 1e5 steps here.
    assert!(stats.steps < 5_000, "{stats:?}");
    let mut stepper = stepper_for(&Method::Auto, &options);
    let mut sys = stiff::System {
        dim: 3,
        rhs: problem.rhs,
        jacobian: None,
    };
    let _ = integrate(
        &mut sys,
        stepper.as_mut(),
        0.0,
        &problem.x0,
        40.0,
        &Output::Steps,
        |_, _| ControlFlow::Continue(()),
    );
    let notes = stepper.notes();
    assert!(notes.iter().any(|n| n.contains("stiff: bdf")), "{notes:?}");
    // A harmonic oscillator is never stiff: no switch.
    let mut stepper = stepper_for(&Method::Auto, &options);
    let mut oscillator = stiff::System {
        dim: 2,
        rhs: |_, x, dx| {
            dx[0] = x[1];
            dx[1] = -4.0 * x[0];
        },
        jacobian: None,
    };
    let _ = integrate(
        &mut oscillator,
        stepper.as_mut(),
        0.0,
        &[1.0, 0.0],
        50.0,
        &Output::Steps,
        |_, _| ControlFlow::Continue(()),
    );
    assert!(stepper.notes().is_empty(), "{:?}", stepper.notes());
}

#[test]
fn auto_stays_explicit_on_large_stiff_systems_and_says_why() {
    // 600 decoupled decays at rates up to 1000: stiff, but beyond the dense solvers' size.
    struct Many;
    impl OdeSystem for Many {
        fn dim(&self) -> usize {
            600
        }
        fn rhs(&mut self, _: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RhsError> {
            for (i, (d, v)) in dx.iter_mut().zip(x).enumerate() {
                *d = -(1.0 + i as f64 * 1000.0 / 600.0) * (v - 1.0);
            }
            Ok(())
        }
    }
    let options = Options {
        rtol: 1e-4,
        atol: Atol::Scalar(1e-6),
        ..Options::default()
    };
    let mut stepper = stepper_for(&Method::Auto, &options);
    let outcome = integrate(
        &mut Many,
        stepper.as_mut(),
        0.0,
        &[0.0; 600],
        0.5,
        &Output::Steps,
        |_, _| ControlFlow::Continue(()),
    );
    assert!(outcome.is_ok(), "{outcome:?}");
    let notes = stepper.notes();
    assert!(
        notes.iter().any(|n| n.contains("staying with dopri5")) && !notes.iter().any(|n| n.contains("stiff: bdf")),
        "{notes:?}"
    );
}

/// The written-out Jacobians of the test problems (which the benchmark gives the solvers, as
/// diffsol's gets them) agree with central differences of the right-hand sides.
#[test]
fn the_exact_jacobians_of_the_test_problems_agree_with_differences() {
    for problem in [
        stiff::robertson(40.0),
        stiff::hires(),
        stiff::van_der_pol(),
        stiff::oregonator(),
    ] {
        let n = problem.x0.len();
        let x: Vec<f64> = problem
            .x0
            .iter()
            .enumerate()
            .map(|(i, v)| v + 0.1 * (i as f64 + 1.0))
            .collect();
        let mut exact = nalgebra::DMatrix::zeros(n, n);
        (problem.jacobian)(0.0, &x, &mut exact);
        for k in 0..n {
            let delta = 1e-6 * x[k].abs().max(1.0);
            let (mut plus, mut minus) = (x.clone(), x.clone());
            plus[k] += delta;
            minus[k] -= delta;
            let (mut f_plus, mut f_minus) = (vec![0.0; n], vec![0.0; n]);
            (problem.rhs)(0.0, &plus, &mut f_plus);
            (problem.rhs)(0.0, &minus, &mut f_minus);
            for i in 0..n {
                let difference = (f_plus[i] - f_minus[i]) / (2.0 * delta);
                let scale = exact[(i, k)].abs().max(1.0);
                assert!(
                    (difference - exact[(i, k)]).abs() < 1e-5 * scale,
                    "{}: J[{i}][{k}] = {} but the difference is {difference}",
                    problem.name,
                    exact[(i, k)]
                );
            }
        }
    }
}
