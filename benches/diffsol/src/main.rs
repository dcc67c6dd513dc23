//! Work-precision of the `diffsol` crate on EQM's stiff test set, for comparison with
//! `cargo bench --bench stiff` (benches/stiff.rs) and `python3 benches/stiff_compare.py`.
//!
//! A standalone crate (its own `[workspace]`), so neither EQM's build nor its CI compiles it.
//! Run with
//!
//! ```text
//! cargo run --release --manifest-path benches/diffsol/Cargo.toml
//! ```
//!
//! (`-- peers` runs diffsol's side of the comparison with EQM, SciPy and CVODE instead: see
//! `src/peers.rs`.)
//!
//! The problems, tolerances, timing and error measure follow benches/stiff.rs: Robertson to
//! t = 40 and 1e5, HIRES, Van der Pol with mu = 1000 (Hairer's scaling) and the Oregonator, at
//! rtol 1e-4, 1e-6, 1e-8 with a scalar atol = rtol * factor (1e-10 for Robertson, 1e-4 for
//! HIRES, 1 otherwise). The time is the best wall time of 20 solves, each of which creates the
//! solver (consistent initial state, initial step estimate) and steps to the end time with a
//! stop time there (no output in between). The error is max_i |x_i - ref_i| / (|ref_i| +
//! atol/rtol) at the end time. The right-hand sides and initial values are those of
//! crates/eqm-testkit/src/stiff.rs; diffsol's builder also takes the Jacobian-vector product, written out
//! by hand below (and checked against finite differences at start-up).
//!
//! Methods: diffsol's variable-order BDF (NDF), and its SDIRK solver with the TR-BDF2 and
//! ESDIRK34 tableaus, all with nalgebra dense matrices and nalgebra's LU, and diffsol's default
//! solver options. An optional argument sets the number of runs per case (default 20), and
//! DIFFSOL_MAX_NONLINEAR_FAILURES=N raises diffsol's limit of 50 Newton convergence failures per
//! solve (counted over the whole solve, not consecutively).

use diffsol::{
    DiffsolError, NalgebraLU, NalgebraMat, OdeBuilder, OdeEquations, OdeSolverMethod, OdeSolverStopReason, Vector,
};
use std::time::Instant;

mod peers;

type M = NalgebraMat<f64>;
type LS = NalgebraLU<f64>;

/// The right-hand side f(x) (all test problems are autonomous).
type Rhs = fn(&[f64], &mut [f64]);
/// The Jacobian-vector product (df/dx)(x) v.
type JacMul = fn(&[f64], &[f64], &mut [f64]);

#[derive(Clone)]
struct Problem {
    name: &'static str,
    x0: Vec<f64>,
    t_end: f64,
    rhs: Rhs,
    jac_mul: JacMul,
    /// Reference solution at `t_end`; empty if there is none.
    reference: Vec<f64>,
    /// atol = rtol * atol_factor.
    atol_factor: f64,
}

/// Robertson's chemical kinetics, to `t_end` (published reference for t = 40 only).
fn robertson(t_end: f64) -> Problem {
    let reference = if t_end == 40.0 {
        vec![0.715_827_068_719_3, 9.185_534_764_529e-6, 0.284_163_745_745_9]
    } else {
        Vec::new()
    };
    Problem {
        name: "Robertson",
        x0: vec![1.0, 0.0, 0.0],
        t_end,
        rhs: |y, dy| {
            dy[0] = -0.04 * y[0] + 1e4 * y[1] * y[2];
            dy[2] = 3e7 * y[1] * y[1];
            dy[1] = -dy[0] - dy[2];
        },
        jac_mul: |y, v, jv| {
            jv[0] = -0.04 * v[0] + 1e4 * (y[2] * v[1] + y[1] * v[2]);
            jv[2] = 6e7 * y[1] * v[1];
            jv[1] = -jv[0] - jv[2];
        },
        reference,
        // 1e-6 * 1e-4, as benches/stiff.rs
        atol_factor: 1e-10,
    }
}

/// HIRES: eight reactions of plant physiology, to t = 321.8122.
fn hires() -> Problem {
    Problem {
        name: "HIRES",
        x0: vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0057],
        t_end: 321.8122,
        rhs: |y, f| {
            f[0] = -1.71 * y[0] + 0.43 * y[1] + 8.32 * y[2] + 0.0007;
            f[1] = 1.71 * y[0] - 8.75 * y[1];
            f[2] = -10.03 * y[2] + 0.43 * y[3] + 0.035 * y[4];
            f[3] = 8.32 * y[1] + 1.71 * y[2] - 1.12 * y[3];
            f[4] = -1.745 * y[4] + 0.43 * y[5] + 0.43 * y[6];
            f[5] = -280.0 * y[5] * y[7] + 0.69 * y[3] + 1.71 * y[4] - 0.43 * y[5] + 0.69 * y[6];
            f[6] = 280.0 * y[5] * y[7] - 1.81 * y[6];
            f[7] = -f[6];
        },
        jac_mul: |y, v, jv| {
            jv[0] = -1.71 * v[0] + 0.43 * v[1] + 8.32 * v[2];
            jv[1] = 1.71 * v[0] - 8.75 * v[1];
            jv[2] = -10.03 * v[2] + 0.43 * v[3] + 0.035 * v[4];
            jv[3] = 8.32 * v[1] + 1.71 * v[2] - 1.12 * v[3];
            jv[4] = -1.745 * v[4] + 0.43 * v[5] + 0.43 * v[6];
            let bilinear = 280.0 * (y[7] * v[5] + y[5] * v[7]);
            jv[5] = -bilinear + 0.69 * v[3] + 1.71 * v[4] - 0.43 * v[5] + 0.69 * v[6];
            jv[6] = bilinear - 1.81 * v[6];
            jv[7] = -jv[6];
        },
        reference: vec![
            0.737_131_257_332_566_8e-3,
            0.144_248_572_631_618_5e-3,
            0.588_872_974_096_757_5e-4,
            0.117_565_134_328_314_9e-2,
            0.238_635_619_883_133_1e-2,
            0.623_896_825_274_279_6e-2,
            0.284_999_839_518_576_9e-2,
            0.285_000_160_481_423_1e-2,
        ],
        atol_factor: 1e-4,
    }
}

/// Van der Pol's oscillator with mu = 1000 in Hairer's scaling (eps = 1/mu^2 = 1e-6), to t = 2.
fn van_der_pol() -> Problem {
    Problem {
        name: "Van der Pol (mu = 1000)",
        x0: vec![2.0, -0.66],
        t_end: 2.0,
        rhs: |y, f| {
            f[0] = y[1];
            f[1] = ((1.0 - y[0] * y[0]) * y[1] - y[0]) / 1e-6;
        },
        jac_mul: |y, v, jv| {
            jv[0] = v[1];
            jv[1] = ((-2.0 * y[0] * y[1] - 1.0) * v[0] + (1.0 - y[0] * y[0]) * v[1]) / 1e-6;
        },
        reference: vec![0.170_616_773_217_046_9e1, -0.892_809_701_024_812_5],
        atol_factor: 1.0,
    }
}

/// The Oregonator (Belousov-Zhabotinskii reaction), to t = 360.
fn oregonator() -> Problem {
    Problem {
        name: "Oregonator",
        x0: vec![1.0, 2.0, 3.0],
        t_end: 360.0,
        rhs: |y, f| {
            f[0] = 77.27 * (y[1] + y[0] * (1.0 - 8.375e-6 * y[0] - y[1]));
            f[1] = (y[2] - (1.0 + y[0]) * y[1]) / 77.27;
            f[2] = 0.161 * (y[0] - y[2]);
        },
        jac_mul: |y, v, jv| {
            jv[0] = 77.27 * ((1.0 - 2.0 * 8.375e-6 * y[0] - y[1]) * v[0] + (1.0 - y[0]) * v[1]);
            jv[1] = (-y[1] * v[0] - (1.0 + y[0]) * v[1] + v[2]) / 77.27;
            jv[2] = 0.161 * (v[0] - v[2]);
        },
        reference: vec![
            0.100_081_487_031_852_3e1,
            0.122_817_852_154_991_7e4,
            0.132_055_494_284_670_6e3,
        ],
        atol_factor: 1.0,
    }
}

/// Checks the hand-written Jacobian-vector product against central differences at a few points.
/// The right-hand sides are at most quadratic in each single variable, so central differences
/// are exact up to rounding and a large step keeps the rounding small.
fn check_jacobian(problem: &Problem) {
    let n = problem.x0.len();
    let mut points = vec![problem.x0.clone()];
    if !problem.reference.is_empty() {
        points.push(problem.reference.clone());
    }
    points.push((0..n).map(|i| 0.3 + 0.17 * i as f64).collect());
    for x in &points {
        for j in 0..n {
            let mut v = vec![0.0; n];
            v[j] = 1.0;
            let mut jv = vec![0.0; n];
            (problem.jac_mul)(x, &v, &mut jv);
            let h = 1e-2 * x[j].abs().max(1.0);
            let (mut xp, mut xm) = (x.clone(), x.clone());
            xp[j] += h;
            xm[j] -= h;
            let (mut fp, mut fm) = (vec![0.0; n], vec![0.0; n]);
            (problem.rhs)(&xp, &mut fp);
            (problem.rhs)(&xm, &mut fm);
            for i in 0..n {
                let fd = (fp[i] - fm[i]) / (2.0 * h);
                let scale = jv[i].abs().max(fd.abs()).max(1.0);
                assert!(
                    (fd - jv[i]).abs() <= 1e-6 * scale,
                    "{}: d f{i} / d x{j} is {} by hand, {fd} by finite differences at {x:?}",
                    problem.name,
                    jv[i]
                );
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Method {
    Bdf,
    TrBdf2,
    Esdirk34,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Method::Bdf => "BDF",
            Method::TrBdf2 => "TRBDF2",
            Method::Esdirk34 => "ESDIRK34",
        }
    }
}

/// Steps `solver` to `t_end` (landing on it exactly) and returns the state there and the
/// number of steps taken.
fn step_to_end<'a, Eqn, S>(mut solver: S, t_end: f64) -> Result<(Vec<f64>, usize), DiffsolError>
where
    Eqn: OdeEquations<T = f64> + 'a,
    S: OdeSolverMethod<'a, Eqn>,
{
    solver.set_stop_time(t_end)?;
    loop {
        match solver.step()? {
            OdeSolverStopReason::InternalTimestep => {}
            OdeSolverStopReason::TstopReached => break,
            OdeSolverStopReason::RootFound(..) => unreachable!("no root function"),
        }
    }
    Ok((solver.state().y.clone_as_vec(), solver.get_statistics().number_of_steps))
}

/// Solves `problem` with `method` at the given tolerances `runs` times and returns the best wall
/// time in ms, the end state and the step count (or the first error).
fn solve(
    method: Method,
    problem: &Problem,
    rtol: f64,
    atol: f64,
    runs: usize,
    max_nonlinear_failures: Option<usize>,
) -> Result<(f64, Vec<f64>, usize), DiffsolError> {
    let (rhs, jac_mul, x0) = (problem.rhs, problem.jac_mul, problem.x0.clone());
    let n = x0.len();
    let mut ode = OdeBuilder::<M>::new()
        .rtol(rtol)
        .atol([atol])
        .rhs_implicit(
            move |x: &[f64], _p: &[f64], _t: f64, y: &mut [f64]| rhs(x, y),
            move |x: &[f64], _p: &[f64], _t: f64, v: &[f64], y: &mut [f64]| jac_mul(x, v, y),
        )
        .init(move |_p: &[f64], _t: f64, y: &mut [f64]| y.copy_from_slice(&x0), n)
        .build()?;
    if let Some(limit) = max_nonlinear_failures {
        ode.ode_options.max_nonlinear_solver_failures = limit;
    }
    let mut best = f64::INFINITY;
    let mut outcome = None;
    for _ in 0..runs {
        let start = Instant::now();
        let result = match method {
            Method::Bdf => step_to_end(ode.bdf::<LS>()?, problem.t_end)?,
            Method::TrBdf2 => step_to_end(ode.tr_bdf2::<LS>()?, problem.t_end)?,
            Method::Esdirk34 => step_to_end(ode.esdirk34::<LS>()?, problem.t_end)?,
        };
        best = best.min(start.elapsed().as_secs_f64() * 1e3);
        outcome = Some(result);
    }
    let (x, steps) = outcome.expect("at least one run");
    Ok((best, x, steps))
}

/// max_i |x_i - ref_i| / (|ref_i| + atol/rtol): the error at the end time, as in benches/stiff.rs.
fn error_of(x: &[f64], reference: &[f64], rtol: f64, atol: f64) -> f64 {
    x.iter()
        .zip(reference)
        .map(|(a, b)| (a - b).abs() / (b.abs() + atol / rtol))
        .fold(0.0, f64::max)
}

fn main() {
    // `peers [WORDS]`: the side-by-side benchmark's rows (src/peers.rs) instead of the stiff set.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("peers") {
        peers::main(&args[1..]);
        return;
    }
    let runs = std::env::args()
        .nth(1)
        .map(|arg| arg.parse().expect("the number of runs per case"))
        .unwrap_or(20);
    // diffsol aborts a solve after 50 Newton convergence failures in all (not consecutive);
    // DIFFSOL_MAX_NONLINEAR_FAILURES=N raises that limit.
    let max_nonlinear_failures = std::env::var("DIFFSOL_MAX_NONLINEAR_FAILURES")
        .ok()
        .map(|n| n.parse().expect("DIFFSOL_MAX_NONLINEAR_FAILURES: a count"));
    let mut problems = vec![robertson(40.0), robertson(1e5), hires(), van_der_pol(), oregonator()];
    for problem in &problems {
        check_jacobian(problem);
    }
    // Robertson to 1e5 has no published reference: diffsol's own BDF at rtol 1e-12, atol 1e-22.
    let (_, reference, _) =
        solve(Method::Bdf, &problems[1], 1e-12, 1e-22, 1, max_nonlinear_failures).expect("the reference run");
    problems[1].reference = reference;

    println!(
        "{:<26} {:>8} {:>7} {:>10} {:>7} {:>10}",
        "problem", "method", "rtol", "time ms", "steps", "error"
    );
    let mut failures = Vec::new();
    for problem in &problems {
        let label = format!("{} t={}", problem.name, problem.t_end);
        for method in [Method::Bdf, Method::TrBdf2, Method::Esdirk34] {
            for rtol in [1e-4, 1e-6, 1e-8] {
                let atol = rtol * problem.atol_factor;
                match solve(method, problem, rtol, atol, runs, max_nonlinear_failures) {
                    Ok((best, x, steps)) => {
                        let error = error_of(&x, &problem.reference, rtol, atol);
                        println!(
                            "{label:<26} {:>8} {rtol:>7.0e} {best:>10.3} {steps:>7} {error:>10.2e}",
                            method.name()
                        );
                    }
                    Err(error) => {
                        println!("{label:<26} {:>8} {rtol:>7.0e} failed", method.name());
                        failures.push(format!("{label} {} rtol {rtol:.0e}: {error}", method.name()));
                    }
                }
            }
        }
    }
    for failure in &failures {
        eprintln!("failed: {failure}");
    }
}
