//! Output between and at the steps, against the exact solutions and the steps themselves.
//!
//! Dense output must be as accurate as the steps and have the local order of its interpolant,
//! without the output request changing the steps; output times must be exact and include both
//! ends; the observer can stop an integration early, and a restart discards the history the
//! multistep and adaptive methods keep.

use super::*;

#[test]
fn dense_output_is_accurate_and_does_not_force_steps() {
    let problem = oscillator(10.0);
    let cases = [
        (Method::Dopri5, tolerance(1e-8), 1e-6),
        (Method::Rkf45, tolerance(1e-8), 1e-6),
        (Method::Rk4, fixed(0.05), 1e-4),
        (Method::Ab4, fixed(0.003), 1e-5),
    ];
    for (method, options, bound) in &cases {
        let coarse = run(method, options, &problem, &Output::Interval(problem.t_end));
        let fine = run(method, options, &problem, &Output::Interval(0.01));
        let steps = run(method, options, &problem, &Output::Steps);
        assert_eq!(
            coarse.stats,
            fine.stats,
            "{}: the output interval changed the steps",
            method.name()
        );
        assert_eq!(coarse.stats, steps.stats, "{}", method.name());
        assert_eq!(
            fine.rows.len(),
            1001,
            "{}: rows at every 0.01 including both ends",
            method.name()
        );
        let step_ends: Vec<f64> = steps.rows.iter().map(|r| r.0).collect();
        let between = fine.rows.iter().filter(|r| !step_ends.contains(&r.0)).count();
        assert!(
            between > 500,
            "{}: only {between} rows fell between steps",
            method.name()
        );
        let worst = fine
            .rows
            .iter()
            .map(|(t, x)| max_abs_error(x, &(problem.exact)(*t)))
            .fold(0.0, f64::max);
        let at_steps = steps
            .rows
            .iter()
            .map(|(t, x)| max_abs_error(x, &(problem.exact)(*t)))
            .fold(0.0, f64::max);
        assert!(worst <= *bound, "{}: dense output error {worst:e}", method.name());
        // Interpolation adds at most about the error the steps already have.
        assert!(
            worst <= 3.0 * at_steps + 1e-12,
            "{}: dense {worst:e} vs steps {at_steps:e}",
            method.name()
        );
    }
}

#[test]
fn dense_output_has_the_local_order_of_its_interpolant() {
    // One step of size h from the exact start, interpolated at 40% of the step: DOPRI5's
    // continuous extension is of order 4 (local error h^5); the cubic Hermite interpolant of
    // an rk4 step is exact for cubics (local error h^4).
    let problem = forced_decay();
    let local_error = |method: &Method, h: f64| {
        let options = Options {
            initial_step: Some(h),
            rtol: 1.0,
            atol: Atol::Scalar(1.0),
            step: Some(h),
            ..Options::default()
        };
        let mut stepper = stepper_for(method, &options);
        let mut sys = problem.system();
        stepper.initialize(&mut sys, 0.0, &problem.x0).expect("valid start");
        let info = stepper.step(&mut sys, 10.0).expect("one step");
        assert_eq!(
            (info.t_prev, info.t),
            (0.0, h),
            "{}: the step was not accepted as given",
            method.name()
        );
        let mut out = [0.0];
        stepper.interpolate(0.4 * h, &mut out);
        (h, (out[0] - (problem.exact)(0.4 * h)[0]).abs())
    };
    let hs = [0.1, 0.05, 0.025, 0.0125];
    for (method, expected) in [(Method::Dopri5, 5.0), (Method::Rk4, 4.0)] {
        let order = slope(&hs.map(|h| local_error(&method, h)));
        assert_order(&format!("{} dense output", method.name()), order, expected, 0.3);
    }
}

#[test]
fn output_times_are_exact_and_include_both_ends() {
    let problem = decay();
    let times = |output: Output| -> Vec<f64> {
        run(&Method::Dopri5, &Options::default(), &problem, &output)
            .rows
            .iter()
            .map(|r| r.0)
            .collect()
    };
    assert_eq!(times(Output::Interval(0.75)), vec![0.0, 0.75, 1.5, 2.25, 3.0]);
    assert_eq!(times(Output::Interval(1.4)), vec![0.0, 1.4, 2.8, 3.0]);
    assert_eq!(times(Output::Interval(5.0)), vec![0.0, 3.0]);
    assert_eq!(
        times(Output::Times(vec![-1.0, 0.0, 0.5, 0.5, 2.0, 7.0])),
        vec![0.0, 0.5, 2.0, 3.0]
    );
    let r = run(
        &Method::Dopri5,
        &Options::default(),
        &problem,
        &Output::Times(vec![2.0, 1.0]),
    );
    assert!(matches!(r.result, Err(IntegrationError::InvalidInput { .. })));
    // A fixed step that does not divide the interval ends with a shorter step, exactly on t_end.
    let r = run(&Method::Rk4, &fixed(0.7), &problem, &Output::Steps);
    let times: Vec<f64> = r.rows.iter().map(|r| r.0).collect();
    assert_eq!(times, vec![0.0, 0.7, 1.4, 2.0999999999999996, 2.8, 3.0]);
}

#[test]
fn observer_can_stop_early() {
    let problem = oscillator(10.0);
    for method in Method::NAMED {
        let mut stepper = stepper_for(
            &method,
            &Options {
                step: Some(0.01),
                ..Options::default()
            },
        );
        let mut rows = Vec::new();
        let result = integrate(
            &mut problem.system(),
            stepper.as_mut(),
            0.0,
            &problem.x0,
            10.0,
            &Output::Interval(0.1),
            |t, _| {
                rows.push(t);
                if t >= 0.3 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
        assert_eq!(result, Ok(Outcome::Stopped { time: rows[3] }), "{}", method.name());
        assert_eq!(rows.len(), 4);
        assert!(
            stepper.time() < 1.0,
            "{}: integrated on to {}",
            method.name(),
            stepper.time()
        );
    }
}

#[test]
fn restart_discards_history() {
    // After a restart the 4-step method starts again with three RK4 steps (four right-hand
    // side evaluations each) before it returns to one evaluation per step.
    let problem = oscillator(2.0);
    let mut sys = problem.system();
    let mut ab4 = stepper_for(&Method::Ab4, &fixed(0.1));
    ab4.initialize(&mut sys, 0.0, &problem.x0).expect("valid start");
    let evals_per_step = |stepper: &mut Box<dyn Stepper>, sys: &mut dyn OdeSystem| -> Vec<usize> {
        (0..6)
            .map(|_| {
                let before = stepper.stats().rhs_evals;
                stepper.step(sys, 100.0).expect("a step");
                stepper.stats().rhs_evals - before
            })
            .collect()
    };
    assert_eq!(evals_per_step(&mut ab4, &mut sys), vec![5, 4, 4, 1, 1, 1]);
    let t = ab4.time();
    let exact = (problem.exact)(t);
    ab4.restart(t, &exact).expect("restart");
    assert_eq!(ab4.state(), exact.as_slice());
    let mut out = vec![0.0; 2];
    ab4.interpolate(t, &mut out);
    assert_eq!(
        out, exact,
        "right after a restart the dense output is the restart point"
    );
    assert_eq!(evals_per_step(&mut ab4, &mut sys), vec![5, 4, 4, 1, 1, 1]);
    assert!((ab4.time() - 1.2).abs() < 1e-12);
    let error = max_abs_error(ab4.state(), &(problem.exact)(1.2));
    assert!(error < 1e-3, "{error}");

    // An adaptive method picks a new initial step after a restart.
    let mut dopri = stepper_for(&Method::Dopri5, &tolerance(1e-6));
    dopri.initialize(&mut sys, 0.0, &problem.x0).expect("valid start");
    let first = dopri.step(&mut sys, 100.0).expect("a step");
    dopri.step(&mut sys, 100.0).expect("a step");
    dopri.restart(0.0, &problem.x0).expect("restart");
    assert_eq!(dopri.step(&mut sys, 100.0).expect("a step"), first);
    // A non-finite restart point is refused and leaves the stepper where it was.
    assert!(matches!(
        dopri.restart(1.0, &[f64::NAN, 0.0]),
        Err(IntegrationError::NonFinite { .. })
    ));
    assert_eq!(dopri.time(), first.t);
}
