//! The integrators against problems with known solutions.
//!
//! Convergence orders are measured (slope of log error over log step across several halvings),
//! adaptive methods must meet their tolerance on decay, an oscillator and a Kepler orbit, dense
//! output must be as accurate as the steps without changing them, and failures (blow-up, NaN,
//! a failing right-hand side) must name the time and components while keeping the rows before.

use std::ops::ControlFlow;

use eqm_integrators::bdf::Bdf;
use eqm_integrators::radau::Radau;
use eqm_integrators::tableau::{self, Tableau};
use eqm_integrators::{
    Atol, IntegrationError, Method, OdeSystem, Options, Outcome, Output, Quantity, RhsError, Stats, Stepper, integrate,
    stepper_for,
};

/// An [`OdeSystem`] from a closure.
struct Sys<F> {
    dim: usize,
    f: F,
}

impl<F: FnMut(f64, &[f64], &mut [f64]) -> Result<(), RhsError>> OdeSystem for Sys<F> {
    fn dim(&self) -> usize {
        self.dim
    }

    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RhsError> {
        (self.f)(t, x, dx)
    }
}

/// A test problem with its exact solution.
struct Problem {
    x0: Vec<f64>,
    t_end: f64,
    rhs: fn(f64, &[f64], &mut [f64]),
    exact: fn(f64) -> Vec<f64>,
}

impl Problem {
    fn system(&self) -> impl OdeSystem + use<> {
        let rhs = self.rhs;
        Sys {
            dim: self.x0.len(),
            f: move |t: f64, x: &[f64], dx: &mut [f64]| {
                rhs(t, x, dx);
                Ok(())
            },
        }
    }
}

/// The spring-mass oscillator: x'' = −4x, x(0) = 1, x'(0) = 0, so x = cos 2t.
fn oscillator(t_end: f64) -> Problem {
    Problem {
        x0: vec![1.0, 0.0],
        t_end,
        rhs: |_, x, dx| {
            dx[0] = x[1];
            dx[1] = -4.0 * x[0];
        },
        exact: |t| vec![(2.0 * t).cos(), -2.0 * (2.0 * t).sin()],
    }
}

/// A non-autonomous problem (so wrong stage times show): x' = −x + sin t, x(0) = 1, with
/// x = 1.5 e^{−t} + (sin t − cos t)/2.
fn forced_decay() -> Problem {
    Problem {
        x0: vec![1.0],
        t_end: 2.0,
        rhs: |t, x, dx| dx[0] = -x[0] + t.sin(),
        exact: |t| vec![1.5 * (-t).exp() + 0.5 * (t.sin() - t.cos())],
    }
}

/// Three decaying components with rates 1, 2 and 3.
fn decay() -> Problem {
    Problem {
        x0: vec![1.0, 1.0, 1.0],
        t_end: 3.0,
        rhs: |_, x, dx| {
            for (i, (d, v)) in dx.iter_mut().zip(x).enumerate() {
                *d = -((i + 1) as f64) * v;
            }
        },
        exact: |t| (1..=3).map(|k| (-(k as f64) * t).exp()).collect(),
    }
}

const ECCENTRICITY: f64 = 0.5;

/// The two-body problem (μ = 1, semi-major axis 1) started at the pericentre with eccentricity
/// 0.5; after one period 2π the orbit is back at its start.
fn kepler() -> Problem {
    let e = ECCENTRICITY;
    Problem {
        x0: vec![1.0 - e, 0.0, 0.0, ((1.0 + e) / (1.0 - e)).sqrt()],
        t_end: 2.0 * std::f64::consts::PI,
        rhs: |_, x, dx| {
            let r3 = (x[0] * x[0] + x[1] * x[1]).powf(1.5);
            dx[0] = x[2];
            dx[1] = x[3];
            dx[2] = -x[0] / r3;
            dx[3] = -x[1] / r3;
        },
        exact: |_| {
            vec![
                1.0 - ECCENTRICITY,
                0.0,
                0.0,
                ((1.0 + ECCENTRICITY) / (1.0 - ECCENTRICITY)).sqrt(),
            ]
        },
    }
}

/// The rows an integration delivered, and how it ended.
struct Run {
    rows: Vec<(f64, Vec<f64>)>,
    result: Result<Outcome, IntegrationError>,
    stats: Stats,
}

fn run_with(stepper: &mut dyn Stepper, sys: &mut dyn OdeSystem, x0: &[f64], t_end: f64, output: &Output) -> Run {
    let mut rows = Vec::new();
    let result = integrate(sys, stepper, 0.0, x0, t_end, output, |t, x| {
        rows.push((t, x.to_vec()));
        ControlFlow::Continue(())
    });
    Run {
        rows,
        result,
        stats: stepper.stats(),
    }
}

fn run(method: &Method, options: &Options, problem: &Problem, output: &Output) -> Run {
    let mut stepper = stepper_for(method, options);
    run_with(
        stepper.as_mut(),
        &mut problem.system(),
        &problem.x0,
        problem.t_end,
        output,
    )
}

fn fixed(h: f64) -> Options {
    Options {
        step: Some(h),
        ..Options::default()
    }
}

fn tolerance(tol: f64) -> Options {
    Options {
        rtol: tol,
        atol: Atol::Scalar(tol),
        ..Options::default()
    }
}

fn max_abs_error(x: &[f64], exact: &[f64]) -> f64 {
    x.iter().zip(exact).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max)
}

/// Makes a stepper from options (with the fixed step filled in).
type MakeStepper<'a> = &'a dyn Fn(Options) -> Box<dyn Stepper>;

/// The error at the end of a run with `n` fixed steps of the stepper `make` builds from
/// [`fixed`] options.
fn final_error_of(name: &str, make: MakeStepper, problem: &Problem, n: usize) -> f64 {
    let mut stepper = make(fixed(problem.t_end / n as f64));
    let r = run_with(
        stepper.as_mut(),
        &mut problem.system(),
        &problem.x0,
        problem.t_end,
        &Output::Steps,
    );
    assert_eq!(r.result, Ok(Outcome::Finished), "{name}");
    assert_eq!(r.stats.steps, n, "{name}: a fixed-step method takes exactly T/h steps");
    let (t, x) = r.rows.last().expect("the end row");
    assert_eq!(*t, problem.t_end);
    max_abs_error(x, &(problem.exact)(*t))
}

/// The least-squares slope of log(error) over log(h) for h = T/n.
fn observed_order(method: &Method, problem: &Problem, ns: &[usize]) -> f64 {
    observed_order_of(method.name(), &|o| stepper_for(method, &o), problem, ns)
}

/// [`observed_order`] of the stepper `make` builds.
fn observed_order_of(name: &str, make: MakeStepper, problem: &Problem, ns: &[usize]) -> f64 {
    let points: Vec<(f64, f64)> = ns
        .iter()
        .map(|&n| (problem.t_end / n as f64, final_error_of(name, make, problem, n)))
        .collect();
    slope(&points)
}

/// The least-squares slope of log(y) over log(x).
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (mx, my) = (
        points.iter().map(|p| p.0.ln()).sum::<f64>() / n,
        points.iter().map(|p| p.1.ln()).sum::<f64>() / n,
    );
    let cov: f64 = points.iter().map(|(x, y)| (x.ln() - mx) * (y.ln() - my)).sum();
    let var: f64 = points.iter().map(|(x, _)| (x.ln() - mx).powi(2)).sum();
    cov / var
}

fn assert_order(context: &str, observed: f64, expected: f64, tolerance: f64) {
    assert!(
        (observed - expected).abs() <= tolerance,
        "{context}: observed order {observed:.3}, expected {expected}"
    );
}

const BUILT_IN: [Tableau; 6] = [
    tableau::EULER,
    tableau::HEUN,
    tableau::MIDPOINT,
    tableau::RK4,
    tableau::FEHLBERG45,
    tableau::DORMAND_PRINCE54,
];

const KUTTA3: &str = "\
# Kutta's third-order method
name kutta3
order 3
0   |
1/2 | 1/2
1   | -1  2
    | 1/6 2/3 1/6
";

/// Alexander's L-stable SDIRK method of order 2 (`examples/tableaux/sdirk2.txt`), a diagonally
/// implicit user tableau.
fn sdirk2() -> Tableau {
    let path = &format!("{}/examples/tableaux/sdirk2.txt", crate::REPO);
    let text = std::fs::read_to_string(path).expect("the example tableau exists");
    let t = Tableau::parse(&text).expect("SDIRK2 parses");
    assert!(!t.is_explicit());
    t
}

/// The 3/8 rule, written as full rows with the zeros on and above the diagonal.
fn three_eighths() -> Tableau {
    Tableau::new(
        "rk38",
        vec![0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0],
        vec![
            vec![0.0, 0.0, 0.0, 0.0],
            vec![1.0 / 3.0, 0.0, 0.0, 0.0],
            vec![-1.0 / 3.0, 1.0, 0.0, 0.0],
            vec![1.0, -1.0, 1.0, 0.0],
        ],
        vec![1.0 / 8.0, 3.0 / 8.0, 3.0 / 8.0, 1.0 / 8.0],
        None,
    )
    .expect("the 3/8 rule is valid")
}

/// Bogacki–Shampine 3(2), a "first same as last" pair, as a user's adaptive method.
const BOGACKI_SHAMPINE: &str = "\
name bs32
0   |
1/2 | 1/2
3/4 | 0   3/4
1   | 2/9 1/3 4/9
    | 2/9 1/3 4/9 0
    | 7/24 1/4 1/3 1/8
";

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

#[test]
fn adaptive_methods_meet_their_tolerance() {
    let bs32 = Method::Tableau(Box::new(
        Tableau::parse(BOGACKI_SHAMPINE).expect("Bogacki–Shampine parses"),
    ));
    // The tolerance bounds the error of each step; the global error is at most a small multiple
    // of it: decay damps old errors, the oscillator keeps them, and on the Kepler orbit an
    // energy error becomes a phase error that grows for the whole period.
    let problems = [
        ("decay", decay(), 10.0),
        ("oscillator", oscillator(10.0), 50.0),
        ("kepler", kepler(), 150.0),
    ];
    for method in [Method::Rkf45, Method::Dopri5, bs32] {
        for (name, problem, multiple) in &problems {
            let mut tighter: Option<(usize, f64)> = None;
            for tol in [1e-8, 1e-6, 1e-4] {
                let r = run(&method, &tolerance(tol), problem, &Output::Interval(problem.t_end));
                assert_eq!(r.result, Ok(Outcome::Finished));
                let (t, x) = r.rows.last().expect("the end row");
                assert_eq!(*t, problem.t_end);
                let error = max_abs_error(x, &(problem.exact)(*t));
                let scale = tol * (1.0 + problem.x0.iter().fold(0.0, |m: f64, v| m.max(v.abs())));
                let context = format!("{} on {name} with tolerance {tol:e}", method.name());
                assert!(
                    error <= multiple * scale,
                    "{context}: error {error:e} ({:.1} × tolerance)",
                    error / scale
                );
                if let Some((steps, tighter_error)) = tighter {
                    assert!(
                        r.stats.steps < steps,
                        "{context}: {} steps, not fewer than {steps}",
                        r.stats.steps
                    );
                    assert!(
                        error > tighter_error,
                        "{context}: error {error:e}, not above {tighter_error:e}"
                    );
                }
                tighter = Some((r.stats.steps, error));
            }
        }
    }
}

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

#[test]
fn dopri5_reuses_the_last_stage_and_rkf45_does_not_need_to() {
    let problem = kepler();
    let dopri = run(&Method::Dopri5, &tolerance(1e-6), &problem, &Output::Steps).stats;
    // One evaluation at the start, one for the initial step guess, six per attempt.
    assert_eq!(dopri.rhs_evals, 2 + 6 * (dopri.steps + dopri.rejected));
    let rkf = run(&Method::Rkf45, &tolerance(1e-6), &problem, &Output::Steps).stats;
    // Five stages per attempt plus the derivative at each accepted point.
    assert_eq!(rkf.rhs_evals, 2 + 5 * (rkf.steps + rkf.rejected) + rkf.steps);
}

#[test]
fn large_systems_take_the_same_steps() {
    // Identical components give the same error norm as one component, so a 100 000-state system
    // must take exactly the steps of the scalar one (and every loop is linear in the dimension).
    let make = |dim| Sys {
        dim,
        f: |_: f64, x: &[f64], dx: &mut [f64]| {
            for (d, v) in dx.iter_mut().zip(x) {
                *d = -v;
            }
            Ok(())
        },
    };
    let scalar = {
        let mut stepper = stepper_for(&Method::Dopri5, &tolerance(1e-6));
        run_with(stepper.as_mut(), &mut make(1), &[1.0], 2.0, &Output::Interval(2.0))
    };
    let dim = 100_000;
    let mut stepper = stepper_for(&Method::Dopri5, &tolerance(1e-6));
    let large = run_with(
        stepper.as_mut(),
        &mut make(dim),
        &vec![1.0; dim],
        2.0,
        &Output::Interval(2.0),
    );
    assert_eq!(large.stats, scalar.stats);
    // The error norm sums 100 000 equal squares, so the steps may differ by rounding only.
    let (a, b) = (
        large.rows.last().expect("end row").1[dim - 1],
        scalar.rows.last().expect("end row").1[0],
    );
    assert!((a - b).abs() <= 1e-10 * b.abs(), "{a} vs {b}");
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
fn methods_parse_by_name() {
    for method in Method::NAMED {
        assert_eq!(Method::parse(method.name()), Some(method.clone()));
        let options = Options {
            step: Some(0.1),
            ..Options::default()
        };
        assert_eq!(stepper_for(&method, &options).name(), method.name());
    }
    assert_eq!(Method::parse("rk5"), None);
    assert!(Method::Dopri5.is_adaptive() && !Method::Ab2.is_adaptive());
}

#[test]
fn user_tableaux_report_their_order_and_round_trip() {
    let kutta = Tableau::parse(KUTTA3).expect("parses");
    assert_eq!((kutta.name(), kutta.stages(), kutta.order()), ("kutta3", 3, 3));
    assert_eq!(kutta.a(2, 0), -1.0);
    assert_eq!(three_eighths().order(), 4);
    let bs = Tableau::parse(BOGACKI_SHAMPINE).expect("parses");
    assert_eq!((bs.order(), bs.embedded_order(), bs.is_fsal()), (3, Some(2), true));
    for t in [kutta, three_eighths(), bs].into_iter().chain(BUILT_IN) {
        let text = t.to_text();
        let back = Tableau::parse(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", t.name()));
        assert_eq!(back, t, "{text}");
    }
}

#[test]
fn built_in_tableaux_have_the_orders_they_declare() {
    for t in &BUILT_IN {
        // Rebuilding through the validated constructor recomputes both orders from the order
        // conditions (all 37 rooted trees up to order 6).
        let rows = (0..t.stages()).map(|i| t.a_row(i).to_vec()).collect();
        let checked = Tableau::new(
            t.name(),
            t.c().to_vec(),
            rows,
            t.b().to_vec(),
            t.b_hat().map(<[f64]>::to_vec),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", t.name()));
        assert_eq!(
            (checked.order(), checked.embedded_order()),
            (t.order(), t.embedded_order()),
            "{}",
            t.name()
        );
        assert_eq!(t.is_fsal(), t.name() == "dopri5", "{}", t.name());
    }
    let orders: Vec<(u32, Option<u32>)> = BUILT_IN.iter().map(|t| (t.order(), t.embedded_order())).collect();
    assert_eq!(
        orders,
        vec![(1, None), (2, None), (2, None), (4, None), (5, Some(4)), (5, Some(4))]
    );
}

#[test]
fn invalid_tableaux_are_rejected_with_a_message() {
    let rejected = |text: &str, needle: &str, line: Option<usize>| {
        let e = Tableau::parse(text).expect_err(text);
        assert!(e.message.contains(needle), "{text}: {e}");
        assert_eq!(e.line, line, "{text}: {e}");
    };
    rejected("0 | 0 1\n1 | 1\n| 1/2 1/2\n", "above the diagonal", None);
    rejected("0 |\n1/2 | 1/2\n| 0.4 0.5\n", "sum to 1", None);
    rejected("0 |\n1/2 | 0.4\n| 0 1\n", "row sum", None);
    rejected("0 |\n1/2 | 1/2\n| 1\n", "1 entries but there are 2 stages", None);
    rejected("0 |\n1/2 | 1/2 0 0\n| 0 1\n", "more than the 2 stages", None);
    rejected("order 3\n0 |\n1/2 | 1/2\n| 0 1\n", "declared order 3", Some(1));
    rejected("0 |\n1/2 | x\n| 0 1\n", "`x` is not a number", Some(2));
    rejected("0 |\n1/2 | 1/0\n| 0 1\n", "`1/0` is not a number", Some(2));
    rejected("0 |\n1/2 | 1/2\n| 0 1\n| 0 1\n", "cannot estimate", None);
    rejected("0 |\n1/2 | 1/2\n", "no weight row", None);
    rejected("# nothing\n| 1\n", "at least one stage", None);
    rejected("0 |\n| 1\n0 |\n", "after the weights", Some(3));
    rejected("hello\n", "expected", Some(1));
    assert!(Tableau::new("bad", vec![0.0], vec![vec![0.0], vec![0.0]], vec![1.0], None).is_err());
}

/// A stiff problem with a smooth solution: x' = −1000 (x − cos t) − sin t, x(0) = 1, so
/// x = cos t.
fn stiff_cosine() -> Problem {
    Problem {
        x0: vec![1.0],
        t_end: 2.0,
        rhs: |t, x, dx| dx[0] = -1000.0 * (x[0] - t.cos()) - t.sin(),
        exact: |t| vec![t.cos()],
    }
}

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
