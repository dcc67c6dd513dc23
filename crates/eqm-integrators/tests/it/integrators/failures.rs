//! Failures of an integration, checked against the error each one must report.
//!
//! A blow-up, a NaN derivative and a failing right-hand side must name the time and the
//! components while keeping the rows delivered before; invalid options and inputs and an
//! exhausted step budget are reported as errors, never as panics.

use super::*;

#[test]
fn blow_up_stops_with_the_component_and_keeps_the_rows_before() {
    // x0' = −x0 stays harmless; x1' = x1² from x1(0) = 1 blows up at t = 1.
    let make = || Sys {
        dim: 2,
        f: |_: f64, x: &[f64], dx: &mut [f64]| {
            dx[0] = -x[0];
            dx[1] = x[1] * x[1];
            Ok(())
        },
    };
    for (method, options) in [
        (Method::Rk4, fixed(1e-3)),
        (Method::Euler, fixed(1e-4)),
        (Method::Dopri5, tolerance(1e-6)),
    ] {
        let mut stepper = stepper_for(&method, &options);
        let r = run_with(stepper.as_mut(), &mut make(), &[1.0, 1.0], 2.0, &Output::Interval(0.1));
        let time = match &r.result {
            Err(IntegrationError::NonFinite { time, components, .. }) => {
                assert_eq!(components, &vec![1], "{}", method.name());
                *time
            }
            Err(IntegrationError::StepSizeUnderflow { time, .. }) if method.is_adaptive() => *time,
            other => panic!("{}: expected a blow-up error, got {other:?}", method.name()),
        };
        assert!(
            (0.99..=1.1).contains(&time),
            "{}: the blow-up was reported at t = {time}",
            method.name()
        );
        let delivered: Vec<f64> = r.rows.iter().map(|r| r.0).collect();
        let expected: Vec<f64> = (0..=20).map(|k| k as f64 * 0.1).filter(|t| *t < time).collect();
        assert_eq!(delivered.len(), expected.len(), "{}: rows {delivered:?}", method.name());
        for ((t, x), te) in r.rows.iter().zip(&expected) {
            assert!((t - te).abs() < 1e-12);
            // Near the singularity no method is accurate; before it they all are.
            assert!(
                *t > 0.95 || (x[1] - 1.0 / (1.0 - t)).abs() < 0.05 * x[1],
                "{}: x1({t}) = {}",
                method.name(),
                x[1]
            );
        }
        assert!(stepper.time() <= time && stepper.state().iter().all(|v| v.is_finite()));
    }
}

#[test]
fn nan_derivative_names_every_component() {
    let mut sys = Sys {
        dim: 3,
        f: |t: f64, x: &[f64], dx: &mut [f64]| {
            // Both NaN from t = 0.505 on (not a grid point, where ln alone would be −∞).
            dx[0] = (0.505 - t).sqrt();
            dx[1] = -x[1];
            dx[2] = (0.505 - t).ln();
            Ok(())
        },
    };
    for method in [Method::Heun, Method::Ab2, Method::Dopri5] {
        let mut stepper = stepper_for(&method, &fixed(0.01));
        let r = run_with(
            stepper.as_mut(),
            &mut sys,
            &[0.0, 1.0, 0.0],
            1.0,
            &Output::Interval(0.25),
        );
        // A fixed-step method stops at the first stage past 0.505. The adaptive one retries with
        // smaller steps up to the singularity and reports the NaN of its last failed trial (or,
        // if the last rejection was for accuracy, an underflow).
        let time = match r.result {
            Err(IntegrationError::NonFinite {
                time,
                components,
                quantity,
            }) => {
                assert_eq!(components, vec![0, 2], "{}", method.name());
                assert!(method.is_adaptive() || quantity == Quantity::Derivative);
                time
            }
            Err(IntegrationError::StepSizeUnderflow { time, .. }) if method.is_adaptive() => time,
            other => panic!("{}: {other:?}", method.name()),
        };
        assert!((0.5..=0.52).contains(&time), "{}: t = {time}", method.name());
        assert_eq!(r.rows.len(), 3, "{}: rows at 0, 0.25 and 0.5", method.name());
    }
}

#[test]
fn rhs_errors_carry_the_time_and_message() {
    let make = || Sys {
        dim: 1,
        f: |t: f64, x: &[f64], dx: &mut [f64]| {
            if t > 0.55 {
                return Err(RhsError::new("Newton did not converge"));
            }
            dx[0] = -x[0];
            Ok(())
        },
    };
    for (method, options) in [
        (Method::Rk4, fixed(0.1)),
        (Method::Rkf45, tolerance(1e-6)),
        (Method::Dopri5, tolerance(1e-6)),
    ] {
        let mut stepper = stepper_for(&method, &options);
        let r = run_with(stepper.as_mut(), &mut make(), &[1.0], 1.0, &Output::Interval(0.1));
        match &r.result {
            Err(e @ IntegrationError::Rhs { time, message }) => {
                assert_eq!(message, "Newton did not converge");
                assert!(*time > 0.55 && *time <= 0.61, "{}: t = {time}", method.name());
                assert!(e.to_string().contains("Newton did not converge"));
            }
            other => panic!("{}: {other:?}", method.name()),
        }
        assert_eq!(r.rows.len(), 6, "{}: rows at 0 .. 0.5", method.name());
        // The adaptive methods retried with smaller steps and got up to the failure.
        if method.is_adaptive() {
            assert!(
                stepper.time() > 0.55 - 1e-6,
                "{}: stopped at {}",
                method.name(),
                stepper.time()
            );
        }
    }
}

#[test]
fn invalid_options_are_reported_not_panicked() {
    let problem = decay();
    let expect_invalid = |method: Method, options: Options, needle: &str| {
        let r = run(&method, &options, &problem, &Output::Steps);
        match r.result {
            Err(IntegrationError::InvalidInput { message }) => assert!(message.contains(needle), "{message}"),
            other => panic!("{}: {other:?}", method.name()),
        }
        assert!(r.rows.is_empty());
    };
    expect_invalid(Method::Euler, Options::default(), "needs a step size");
    expect_invalid(Method::Ab4, fixed(-0.1), "positive");
    expect_invalid(
        Method::Dopri5,
        Options {
            atol: Atol::PerComponent(vec![1e-6; 2]),
            ..Options::default()
        },
        "2 absolute",
    );
    expect_invalid(
        Method::Rkf45,
        Options {
            atol: Atol::Scalar(0.0),
            ..Options::default()
        },
        "positive",
    );
    expect_invalid(
        Method::Dopri5,
        Options {
            rtol: f64::NAN,
            ..Options::default()
        },
        "relative",
    );
    let per_component = Options {
        atol: Atol::PerComponent(vec![1e-8, 1e-6, 1e-4]),
        ..Options::default()
    };
    assert_eq!(
        run(&Method::Dopri5, &per_component, &problem, &Output::Steps).result,
        Ok(Outcome::Finished)
    );
    let mut stepper = stepper_for(&Method::Rk4, &fixed(0.1));
    let r = run_with(stepper.as_mut(), &mut problem.system(), &[1.0], 1.0, &Output::Steps);
    assert!(matches!(r.result, Err(IntegrationError::InvalidInput { .. })));
    let mut stepper = stepper_for(&Method::Rk4, &fixed(0.1));
    let r = run_with(
        stepper.as_mut(),
        &mut problem.system(),
        &[1.0, f64::INFINITY, 1.0],
        1.0,
        &Output::Steps,
    );
    assert_eq!(
        r.result,
        Err(IntegrationError::NonFinite {
            time: 0.0,
            components: vec![1],
            quantity: Quantity::State
        })
    );
}

#[test]
fn max_steps_is_enforced() {
    let problem = decay();
    let options = Options {
        max_steps: 10,
        ..fixed(0.01)
    };
    let r = run(&Method::Rk4, &options, &problem, &Output::Interval(0.05));
    assert_eq!(
        r.result,
        Err(IntegrationError::TooManySteps {
            time: 0.1,
            max_steps: 10
        })
    );
    assert_eq!(r.rows.len(), 3);
}

#[test]
fn a_system_without_states_runs_with_every_method() {
    // A model of algebraic variables and events only gives the integrators a system of size 0:
    // every method must step through it (the implicit ones solve empty systems).
    let mut methods: Vec<Method> = Method::NAMED.to_vec();
    methods.push(Method::Tableau(Box::new(sdirk2())));
    methods.push(Method::Tableau(Box::new(Tableau::parse(KUTTA3).expect("valid"))));
    for method in methods {
        // Each mode the method has: a fixed step, a controlled step, or both.
        let mut modes = Vec::new();
        if method.takes_fixed_step(true) {
            modes.push(fixed(0.1));
        }
        if !method.takes_fixed_step(false) {
            modes.push(tolerance(1e-6));
        }
        for options in modes {
            let mut sys = Sys {
                dim: 0,
                f: |_: f64, _: &[f64], _: &mut [f64]| Ok(()),
            };
            let mut stepper = stepper_for(&method, &options);
            let r = run_with(stepper.as_mut(), &mut sys, &[], 1.0, &Output::Interval(0.25));
            assert!(r.result.is_ok(), "{}: {:?}", method.name(), r.result);
            let times: Vec<f64> = r.rows.iter().map(|r| r.0).collect();
            assert_eq!(times, [0.0, 0.25, 0.5, 0.75, 1.0], "{}", method.name());
        }
    }
}
