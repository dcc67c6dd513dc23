//! Radau5 and BDF with a fixed step, against exact solutions far above the stiff time scale.
//!
//! Both must stay stable and damp a fast transient, report what they cannot do (a Newton
//! iteration that fails, an order or step out of range) as errors, shorten the last step to land
//! on the end while interpolating as accurately as they step, and (for BDF) split a starting step
//! that Newton cannot solve.

use super::*;

/// The stiff Prothero–Robinson problem started off the smooth solution, y(0) = 2: the solution
/// cos t + e^{λt} has a transient of length 1e-6, far below the step 0.1.
fn prothero_robinson_transient() -> Problem {
    Problem {
        x0: vec![2.0],
        t_end: 2.0,
        rhs: |t, x, dx| dx[0] = -1e6 * (x[0] - t.cos()) - t.sin(),
        exact: |t| vec![t.cos() + (-1e6 * t).exp()],
    }
}

/// With a fixed step 100 and 100 000 times the stiff time scale, Radau5 and BDF of every order
/// stay stable and damp the initial transient within their first few steps: Radau IIA and
/// BDF1-2 are L-stable, BDF3-5 A(α)-stable with the negative real axis inside and strong damping
/// at infinity. The trapezoidal rule, A-stable but not L-stable, shows what the test would see
/// otherwise: the transient survives, flipping sign at every step.
#[test]
fn radau5_and_bdf_with_a_fixed_step_stay_stable_far_above_the_stiff_time_scale() {
    let mut steppers: Vec<(String, Box<dyn Stepper>)> = vec![("radau5".into(), Box::new(Radau::new(fixed(0.1))))];
    for k in 1..=5 {
        steppers.push((format!("bdf{k}"), Box::new(Bdf::with_order(k, fixed(0.1)))));
    }
    for (name, mut stepper) in steppers {
        for (problem_name, problem, bound) in [
            ("the stiff cosine", stiff_cosine(), 1e-4),
            ("Prothero–Robinson from y = 2", prothero_robinson_transient(), 1e-6),
        ] {
            let r = run_with(
                stepper.as_mut(),
                &mut problem.system(),
                &problem.x0,
                problem.t_end,
                &Output::Steps,
            );
            assert_eq!(r.result, Ok(Outcome::Finished), "{name} on {problem_name}");
            assert_eq!(r.stats.steps, 20, "{name} on {problem_name}");
            // After the transient and the starting steps (at most five) the error stays small.
            let worst = r
                .rows
                .iter()
                .filter(|(t, _)| *t >= 0.6)
                .map(|(t, x)| max_abs_error(x, &(problem.exact)(*t)))
                .fold(0.0, f64::max);
            assert!(worst <= bound, "{name} on {problem_name}: error {worst:e}");
        }
    }
    let trapezoid = run(
        &Method::Trapezoid,
        &fixed(0.1),
        &prothero_robinson_transient(),
        &Output::Steps,
    );
    let (t, x) = trapezoid.rows.last().expect("rows");
    let kept = max_abs_error(x, &[t.cos()]);
    assert!(kept > 0.5, "the trapezoid damped the transient: {kept}");
}

/// The fixed-step modes cannot shrink a step whose Newton iteration fails: Robertson's problem
/// started at (1, 0, 0), whose Jacobian there does not yet show the stiffness, with a step of 1,
/// ends in an error naming the start time (no panic, no row beyond the start). Out-of-range
/// orders and steps are refused before the first step.
#[test]
fn fixed_step_radau5_and_bdf_report_what_they_cannot_do() {
    let robertson = Problem {
        x0: vec![1.0, 0.0, 0.0],
        t_end: 40.0,
        rhs: |_, y, dy| {
            dy[0] = -0.04 * y[0] + 1e4 * y[1] * y[2];
            dy[1] = 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] * y[1];
            dy[2] = 3e7 * y[1] * y[1];
        },
        exact: |_| vec![0.7158270687, 9.185534764e-6, 0.2841637457],
    };
    for (method, needle) in [
        (Method::Radau5, "radau5 step of size 1 did not converge"),
        (Method::Bdf, "bdf's starting steps"),
    ] {
        let r = run(&method, &fixed(1.0), &robertson, &Output::Steps);
        match &r.result {
            Err(IntegrationError::Rhs { time, message }) => {
                assert_eq!(*time, 0.0, "{message}");
                assert!(message.contains(needle), "{}: {message}", method.name());
            }
            other => panic!("{}: {other:?}", method.name()),
        }
        assert_eq!(r.rows.len(), 1, "{}", method.name());
    }
    let problem = decay();
    for (mut stepper, needle) in [
        (Box::new(Bdf::with_order(0, fixed(0.1))) as Box<dyn Stepper>, "order"),
        (Box::new(Bdf::with_order(6, fixed(0.1))), "order"),
        (Box::new(Bdf::with_order(2, fixed(-0.1))), "positive"),
        (Box::new(Radau::new(fixed(f64::NAN))), "positive"),
    ] {
        let r = run_with(
            stepper.as_mut(),
            &mut problem.system(),
            &problem.x0,
            1.0,
            &Output::Steps,
        );
        match r.result {
            Err(IntegrationError::InvalidInput { message }) => assert!(message.contains(needle), "{message}"),
            other => panic!("{other:?}"),
        }
    }
}

/// A fixed step that does not divide the interval leaves a shorter last step that lands exactly
/// on the end (for BDF a step off its grid, which Radau5 takes). The dense output between steps
/// (Radau's collocation polynomials in the starting steps, BDF's interpolating polynomial after
/// them) is as accurate as the steps, and the output request does not change the steps.
#[test]
fn radau5_and_bdf_with_a_fixed_step_shorten_the_last_step_and_interpolate() {
    let problem = oscillator(2.0);
    // 66 steps of 0.03 reach 1.98; a 67th of 0.02 lands on 2.
    let steppers: [(&str, MakeStepper); 3] = [
        ("radau5", &|o| stepper_for(&Method::Radau5, &o)),
        ("bdf", &|o| stepper_for(&Method::Bdf, &o)),
        ("bdf2", &|o| Box::new(Bdf::with_order(2, o))),
    ];
    for (name, make) in steppers {
        // Second order at h = 0.03 on an oscillator of frequency 2 leaves an error of a few 1e-3.
        let bound = if name == "bdf2" { 5e-3 } else { 1e-6 };
        let mut stepper = make(fixed(0.03));
        let steps = run_with(
            stepper.as_mut(),
            &mut problem.system(),
            &problem.x0,
            2.0,
            &Output::Steps,
        );
        assert_eq!(steps.result, Ok(Outcome::Finished), "{name}");
        assert_eq!(steps.stats.steps, 67, "{name}");
        let (t, x) = steps.rows.last().expect("rows");
        assert_eq!(*t, 2.0);
        let error = max_abs_error(x, &(problem.exact)(2.0));
        assert!(error < bound, "{name}: error {error:e} at the end");
        let mut stepper = make(fixed(0.03));
        let dense = run_with(
            stepper.as_mut(),
            &mut problem.system(),
            &problem.x0,
            2.0,
            &Output::Interval(0.007),
        );
        assert_eq!(dense.stats, steps.stats, "{name}: the output changed the steps");
        let worst = dense
            .rows
            .iter()
            .map(|(t, x)| max_abs_error(x, &(problem.exact)(*t)))
            .fold(0.0, f64::max);
        assert!(worst < bound, "{name}: interpolation error {worst:e}");
        // Time limits off the grid (as events and time events set them) shorten steps in the
        // middle; the steps after them start a new grid and stay as accurate.
        let mut stepper = make(fixed(0.03));
        let mut sys = problem.system();
        stepper.initialize(&mut sys, 0.0, &problem.x0).expect("valid start");
        for limit in [0.5, 0.51, 1.0, 2.0] {
            while stepper.time() < limit {
                stepper.step(&mut sys, limit).expect("a step");
            }
        }
        let error = max_abs_error(stepper.state(), &(problem.exact)(2.0));
        assert!(error < bound, "{name}: error {error:e} after shortened steps");
    }
}

/// Where Radau5 with the fixed step cannot solve its Newton iteration (y' = −1000 y², y(0) = 1,
/// so y = 1/(1 + 1000 t), whose Jacobian changes by two orders of magnitude within the first
/// step of 0.1), BDF's starting step splits the step into substeps and still reaches its end
/// accurately, with dense output from the substeps' collocation polynomials.
#[test]
fn bdf_starting_steps_split_a_step_newton_cannot_solve() {
    let problem = Problem {
        x0: vec![1.0],
        t_end: 0.1,
        rhs: |_, x, dx| dx[0] = -1000.0 * x[0] * x[0],
        exact: |t| vec![1.0 / (1.0 + 1000.0 * t)],
    };
    let radau = run(&Method::Radau5, &fixed(0.1), &problem, &Output::Steps);
    assert!(
        matches!(&radau.result, Err(IntegrationError::Rhs { message, .. }) if message.contains("did not converge")),
        "{:?}",
        radau.result
    );
    let mut bdf = Bdf::with_order(2, fixed(0.1));
    let mut sys = problem.system();
    bdf.initialize(&mut sys, 0.0, &problem.x0).expect("valid start");
    let info = bdf.step(&mut sys, 1.0).expect("the starting step");
    assert_eq!((info.t_prev, info.t), (0.0, 0.1));
    let error = max_abs_error(bdf.state(), &(problem.exact)(0.1));
    assert!(error < 1e-6, "error {error:e} at the step's end");
    let mut out = [0.0];
    // Past the first substeps, which the transient of length 1e-3 makes coarse.
    for t in [0.01, 0.02, 0.05, 0.09] {
        bdf.interpolate(t, &mut out);
        let error = max_abs_error(&out, &(problem.exact)(t));
        assert!(error < 1e-5, "interpolation error {error:e} at t = {t}");
    }
}
