//! diffsol's side of the side-by-side benchmark of EQM against its peers (`bash
//! benches/peers/run`; run alone with `cargo run --release --manifest-path
//! benches/diffsol/Cargo.toml -- peers [WORDS]`).
//!
//! Input: the problems of `benches/peers.rs`, written out again here: Van der Pol with
//! mu = 1000, Robertson to t = 1e5 and HIRES (from `main.rs`), the regularised stick-slip
//! oscillator (x0 = 1e-3, to t = 12) and the chain of N = 100, 1000, 10,000 masses (to t = 100,
//! state [s_1..s_N, v_1..v_N]). Output: one CSV row per (problem, rtol, method) on standard
//! output, in the columns of `benches/peers/table.py`; progress on standard error. Words given
//! after `peers` select rows (each must occur in "problem method").
//!
//! Methods: diffsol's Tsit5 (`tsit45`, explicit) on the stick-slip oscillator and the chain, and
//! its BDF on every problem, with the hand-written Jacobian-vector product from which diffsol
//! builds the Jacobian: dense (nalgebra, `NalgebraLU`) for the small problems, sparse (faer,
//! `FaerSparseLU`) for the chain. Timing and error follow `benches/peers.rs`: the best wall time
//! of 3 to 10 solves (1 when a solve takes over 10 s), each creating the solver and stepping to
//! the end time (building the problem is not timed), and max_i |x_i - ref_i| / (|ref_i| +
//! atol/rtol) at the end time.
//!
//! Deliberately not here: the other tools and the table. diffsol 0.18 finds a sparse Jacobian's
//! pattern by probing every column at once, with two arrays of (states)² numbers, so BDF on the
//! chain of 10,000 masses (20,000 states: 6.4 GB) is skipped, and the row says so.

use crate::{LS, M, Problem, error_of, step_to_end};
use diffsol::{FaerSparseLU, FaerSparseMat, OdeBuilder};
use std::time::Instant;

const RTOLS: [f64; 4] = [1e-4, 1e-6, 1e-8, 1e-10];
/// A solve slower than this (seconds) skips the tighter tolerances of its method.
const SKIP_AFTER_S: f64 = 15.0;
/// The most states whose sparse pattern diffsol may probe (see the module documentation).
const SPARSE_PROBE_MAX_STATES: usize = 2_000;

const CHAIN_C: f64 = 100.0;
const CHAIN_D: f64 = 0.1;
const CHAIN_M: f64 = 1.0;
const CHAIN_T_END: f64 = 100.0;

#[derive(Clone, Copy, PartialEq)]
enum Method {
    Tsit5,
    Bdf,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Method::Tsit5 => "Tsit5",
            Method::Bdf => "BDF",
        }
    }
}

/// The regularised stick-slip oscillator y'' = -(2/pi) atan((y' - 0.4)/1e-3) - y from rest.
fn stick_slip() -> Problem {
    Problem {
        name: "Stick-slip (x0 = 1e-3)",
        x0: vec![0.0, 0.0],
        t_end: 12.0,
        rhs: |y, f| {
            f[0] = y[1];
            f[1] = -2.0 / std::f64::consts::PI * ((y[1] - 0.4) / 1e-3).atan() - y[0];
        },
        jac_mul: |y, v, jv| {
            let u = (y[1] - 0.4) / 1e-3;
            jv[0] = v[1];
            jv[1] = -v[0] - 2.0 / std::f64::consts::PI / 1e-3 / (1.0 + u * u) * v[1];
        },
        // SciPy's Radau at rtol 1e-13, as in benches/peers.rs.
        reference: vec![1.044_859_120_664_063, -0.355_428_806_002_232_03],
        atol_factor: 1.0,
    }
}

/// The chain's right-hand side: s' = v, m v' = f_{i+1} - f_i with f_i = c (s_i - s_{i-1}) +
/// d (v_i - v_{i-1}), the wall before mass 1 and nothing after mass n. It is linear, so it is
/// also its own Jacobian-vector product.
fn chain_rhs(n: usize, x: &[f64], dx: &mut [f64]) {
    let (s, v) = x.split_at(n);
    let (ds, dv) = dx.split_at_mut(n);
    ds.copy_from_slice(v);
    let force = |i: usize| {
        let (s_before, v_before) = if i == 0 { (0.0, 0.0) } else { (s[i - 1], v[i - 1]) };
        CHAIN_C * (s[i] - s_before) + CHAIN_D * (v[i] - v_before)
    };
    let mut f_this = force(0);
    for i in 0..n {
        let f_next = if i + 1 < n { force(i + 1) } else { 0.0 };
        dv[i] = (f_next - f_this) / CHAIN_M;
        f_this = f_next;
    }
}

/// The chain's closed form at `t`: mode k of T (2 on the diagonal except 1 in the last row, -1
/// beside it) has eigenvalue lambda = 4 sin^2(theta/2), theta = (2k-1) pi/(2n+1), eigenvector
/// sin(j theta) of squared norm (2n+1)/4, and is the damped oscillator q'' + (d/m) lambda q' +
/// (c/m) lambda q = 0 from q(0) = sin(n theta)/norm^2 at rest. The sines' arguments are reduced
/// exactly in integers (j (2k-1) modulo 2 (2n+1)), so n = 10,000 loses no accuracy. O(n^2).
fn chain_exact(n: usize, t: f64) -> Vec<f64> {
    let mut x = vec![0.0; 2 * n];
    let (denominator, period) = ((2 * n + 1) as f64, 2 * (2 * n + 1));
    let angle = |multiple: usize| (multiple % period) as f64 * std::f64::consts::PI / denominator;
    for k in 1..=n {
        let odd = 2 * k - 1;
        let theta = angle(odd);
        let lambda = 4.0 * (theta / 2.0).sin().powi(2);
        let omega2 = CHAIN_C * lambda / CHAIN_M;
        let sigma = CHAIN_D * lambda / CHAIN_M / 2.0;
        let omega_d = (omega2 - sigma * sigma).sqrt();
        let q0 = angle(n * odd).sin() / (denominator / 4.0);
        let decay = (-sigma * t).exp();
        let (sin, cos) = (omega_d * t).sin_cos();
        let q = q0 * decay * (cos + sigma / omega_d * sin);
        let dq = -q0 * decay * omega2 / omega_d * sin;
        for j in 1..=n {
            let phi = angle(j * odd).sin();
            x[j - 1] += q * phi;
            x[n + j - 1] += dq * phi;
        }
    }
    x
}

/// Checks the closed form against the equations for a small chain (central differences in
/// time), so that a wrong reference cannot pass as a solver's error.
fn check_chain_exact() {
    let (n, t, delta) = (7, 1.3, 1e-6);
    let (after, before) = (chain_exact(n, t + delta), chain_exact(n, t - delta));
    let mut dx = vec![0.0; 2 * n];
    chain_rhs(n, &chain_exact(n, t), &mut dx);
    for i in 0..2 * n {
        let fd = (after[i] - before[i]) / (2.0 * delta);
        assert!(
            (fd - dx[i]).abs() < 1e-6 * (1.0 + dx[i].abs()),
            "chain closed form, component {i}: {fd} vs {}",
            dx[i]
        );
    }
    let start = chain_exact(n, 0.0);
    for (i, value) in start.iter().enumerate() {
        let expected = if i == n - 1 { 1.0 } else { 0.0 };
        assert!(
            (value - expected).abs() < 1e-12,
            "chain closed form at t = 0, component {i}: {value}"
        );
    }
}

/// Checks the stick-slip oscillator's Jacobian-vector product against central differences with
/// a step small against the regularisation scale 1e-3 (`crate::check_jacobian`'s large step is
/// meant for polynomial right-hand sides), near and far from the kink at y' = 0.4.
fn check_stick_slip_jacobian(problem: &Problem) {
    for x in [[0.0, 0.0], [0.3, 0.4005], [1.0, 0.399], [-0.5, -0.36]] {
        for j in 0..2 {
            let mut v = [0.0; 2];
            v[j] = 1.0;
            let mut jv = [0.0; 2];
            (problem.jac_mul)(&x, &v, &mut jv);
            let h = 1e-8;
            let (mut xp, mut xm) = (x, x);
            xp[j] += h;
            xm[j] -= h;
            let (mut fp, mut fm) = ([0.0; 2], [0.0; 2]);
            (problem.rhs)(&xp, &mut fp);
            (problem.rhs)(&xm, &mut fm);
            for i in 0..2 {
                let fd = (fp[i] - fm[i]) / (2.0 * h);
                assert!(
                    (fd - jv[i]).abs() <= 1e-5 * jv[i].abs().max(1.0),
                    "stick-slip: d f{i} / d x{j} is {} by hand, {fd} by differences at {x:?}",
                    jv[i]
                );
            }
        }
    }
}

/// The timing protocol of benches/peers.rs: (solves, best time in ms, last outcome).
fn best_of<T>(mut solve: impl FnMut() -> Result<T, String>) -> (usize, f64, Result<T, String>) {
    let (mut runs, mut total, mut best) = (0, 0.0, f64::INFINITY);
    loop {
        let start = Instant::now();
        let outcome = solve();
        let elapsed = start.elapsed().as_secs_f64();
        runs += 1;
        total += elapsed;
        best = best.min(elapsed);
        if !(outcome.is_ok() && runs < 10 && (total < 1.0 || (runs < 3 && total < 10.0))) {
            return (runs, best * 1e3, outcome);
        }
    }
}

/// Builds the problem with matrix type `$m` and solves it once with `$method` (linear solver
/// `$ls` for BDF): `Result<(end state, steps), String>`. A macro, because diffsol's builder and
/// solver types differ per matrix type and spelling out their bounds would hide the code.
macro_rules! solve_once {
    ($m:ty, $ls:ty, $method:expr, $n:expr, $rhs:expr, $jac_mul:expr, $x0:expr, $t_end:expr, $rtol:expr, $atol:expr) => {{
        let (rhs, jac_mul, x0) = ($rhs, $jac_mul, $x0.clone());
        OdeBuilder::<$m>::new()
            .rtol($rtol)
            .atol([$atol])
            .rhs_implicit(
                move |x: &[f64], _p: &[f64], _t: f64, y: &mut [f64]| rhs(x, y),
                move |x: &[f64], _p: &[f64], _t: f64, v: &[f64], y: &mut [f64]| jac_mul(x, v, y),
            )
            .init(move |_p: &[f64], _t: f64, y: &mut [f64]| y.copy_from_slice(&x0), $n)
            .build()
            .map_err(|e| e.to_string())
            .map(|ode| {
                move || -> Result<(Vec<f64>, usize), String> {
                    let outcome = match $method {
                        Method::Tsit5 => ode.tsit45().and_then(|s| step_to_end(s, $t_end)),
                        Method::Bdf => ode.bdf::<$ls>().and_then(|s| step_to_end(s, $t_end)),
                    };
                    outcome.map_err(|e| e.to_string())
                }
            })
    }};
}

fn print_row(problem: &str, rtol: f64, atol: f64, method: Method, jacobian: &str, result: &str) {
    println!(
        "{problem},{rtol:e},{atol:e},diffsol,{},{},{}",
        method.name(),
        if method == Method::Bdf { jacobian } else { "-" },
        result.replace('\n', " ")
    );
}

/// Runs `method` on one problem at every tolerance, loosest first. `make(rtol, atol)` builds
/// the problem and returns the function that solves it once.
fn run_rows<S: FnMut() -> Result<(Vec<f64>, usize), String>>(
    problem: &str,
    method: Method,
    jacobian: &str,
    atol_factor: f64,
    reference: &[f64],
    skip_all: Option<String>,
    mut make: impl FnMut(f64, f64) -> Result<S, String>,
) {
    eprintln!("diffsol: {problem} {}", method.name());
    let mut skip = skip_all;
    for rtol in RTOLS {
        let atol = rtol * atol_factor;
        if let Some(reason) = &skip {
            print_row(
                problem,
                rtol,
                atol,
                method,
                jacobian,
                &format!("0,,,,skipped: {}", reason.replace(',', ";")),
            );
            continue;
        }
        let (runs, ms, outcome) = match make(rtol, atol) {
            Ok(solve) => best_of(solve),
            Err(e) => (0, 0.0, Err(e)),
        };
        let result = match outcome {
            Ok((x, steps)) => format!("{runs},{ms:.4},{:.3e},{steps},ok", error_of(&x, reference, rtol, atol)),
            Err(e) => format!("{runs},,,,failed: {}", e.replace(',', ";")),
        };
        print_row(problem, rtol, atol, method, jacobian, &result);
        if ms > SKIP_AFTER_S * 1e3 {
            skip = Some(format!("rtol {rtol:.0e} took {:.0} s", ms / 1e3));
        }
    }
}

pub fn main(filters: &[String]) {
    // Words select rows regardless of case, as on EQM's side.
    let selected = |label: &str| {
        let label = label.to_lowercase();
        filters.iter().all(|f| label.contains(&f.to_lowercase()))
    };
    let mut robertson = crate::robertson(1e5);
    // SciPy's Radau at rtol 1e-13, as in benches/peers.rs.
    robertson.reference = vec![
        0.017_865_921_142_099_84,
        7.274_751_468_436_486e-8,
        0.982_134_006_110_383_4,
    ];
    let small = [
        (crate::van_der_pol(), true),
        (robertson, true),
        (crate::hires(), true),
        (stick_slip(), false),
    ];
    println!("problem,rtol,atol,tool,method,jacobian,runs,time_ms,error,steps,status");
    for (problem, stiff_only) in &small {
        if *stiff_only {
            crate::check_jacobian(problem);
        } else {
            check_stick_slip_jacobian(problem);
        }
        let methods: &[Method] = if *stiff_only {
            &[Method::Bdf]
        } else {
            &[Method::Tsit5, Method::Bdf]
        };
        for &method in methods {
            if !selected(&format!("{} {}", problem.name, method.name())) {
                continue;
            }
            let n = problem.x0.len();
            run_rows(
                problem.name,
                method,
                "exact (Jv)",
                problem.atol_factor,
                &problem.reference,
                None,
                |rtol, atol| {
                    solve_once!(
                        M,
                        LS,
                        method,
                        n,
                        problem.rhs,
                        problem.jac_mul,
                        problem.x0,
                        problem.t_end,
                        rtol,
                        atol
                    )
                },
            );
        }
    }
    check_chain_exact();
    for n in [100, 1000, 10_000] {
        let name = format!("Chain N={n}");
        let methods: Vec<Method> = [Method::Tsit5, Method::Bdf]
            .into_iter()
            .filter(|m| selected(&format!("{name} {}", m.name())))
            .collect();
        if methods.is_empty() {
            continue;
        }
        let started = Instant::now();
        let reference = chain_exact(n, CHAIN_T_END);
        eprintln!(
            "diffsol: {name}: closed form in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        let mut x0 = vec![0.0; 2 * n];
        x0[n - 1] = 1.0;
        let rhs = move |x: &[f64], dx: &mut [f64]| chain_rhs(n, x, dx);
        let jac_mul = move |_x: &[f64], v: &[f64], jv: &mut [f64]| chain_rhs(n, v, jv);
        for method in methods {
            match method {
                // The explicit method needs no matrix: the dense type builds no Jacobian.
                Method::Tsit5 => run_rows(&name, method, "-", 1.0, &reference, None, |rtol, atol| {
                    solve_once!(M, LS, method, 2 * n, rhs, jac_mul, x0, CHAIN_T_END, rtol, atol)
                }),
                Method::Bdf => {
                    let skip = (2 * n > SPARSE_PROBE_MAX_STATES).then(|| {
                        format!(
                            "diffsol probes the sparsity of {} states with two {0}x{0} arrays ({:.1} GB)",
                            2 * n,
                            2.0 * (2 * n) as f64 * (2 * n) as f64 * 8.0 / 1e9
                        )
                    });
                    run_rows(
                        &name,
                        method,
                        "exact sparse (Jv)",
                        1.0,
                        &reference,
                        skip,
                        |rtol, atol| {
                            solve_once!(
                                FaerSparseMat<f64>,
                                FaerSparseLU<f64>,
                                method,
                                2 * n,
                                rhs,
                                jac_mul,
                                x0,
                                CHAIN_T_END,
                                rtol,
                                atol
                            )
                        },
                    )
                }
            }
        }
    }
}
