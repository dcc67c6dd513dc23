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

mod accuracy;
mod adaptive;
mod chain;
mod convergence;
mod dense_output;
mod failures;
mod implicit;
mod pairs;
mod radau_bdf;
mod radau_sparse;
mod stability;
mod stiff_chain;
mod tableaux;

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

/// `t` rebuilt through the validated constructor [`Tableau::new`], which checks the row sums
/// and weight sums and recomputes both orders from the order conditions (all 486 rooted trees
/// up to nine nodes).
fn rechecked(t: &Tableau) -> Tableau {
    let rows = (0..t.stages()).map(|i| t.a_row(i).to_vec()).collect();
    Tableau::new(
        t.name(),
        t.c().to_vec(),
        rows,
        t.b().to_vec(),
        t.b_hat().map(<[f64]>::to_vec),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", t.name()))
}

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
