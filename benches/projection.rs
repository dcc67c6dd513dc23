//! The cost of the constraint projection (the goal: under 2x the plain field per
//! right-hand-side evaluation for small mechanical models) and the work-precision of the
//! Cartesian pendulum over 100 periods in the embedding form with projection against the
//! dummy-derivative form, where that form is valid (a 30 degree swing never reaches the
//! horizontal, where the dummy-derivative state choice becomes singular).
//!
//! Run with `cargo bench --bench projection`. Prints, for the embedding form run with a fixed
//! step (RK4, so both runs evaluate the field equally often), the time per evaluation with
//! and without projection; then for both forms at three tolerances (DOPRI5) the time, the
//! number of evaluations and the error of `x` at the end against a reference solution of the
//! angle equation `θ'' = −(g/L) sin θ` computed here with a tiny RK4 step.

use eqm_testkit::pipeline;

use eqm_compile::analysis::IndexForm;
use eqm_flatten::Sources;
use eqm_integrators::{Atol, Method, Options};
use eqm_sim::simulate::{Backend, RunOptions, Stabilize, simulate};
use pipeline::Pipeline;
use std::time::Instant;

/// The pendulum with unit mass and length and gravity `g`, released at rest at angle `theta0`
/// from the downward vertical.
fn model(theta0: f64, g: f64) -> String {
    format!(
        "model Pendulum\n  parameter Real L = 1;\n  parameter Real g = {g};\n  Real x(start = {}, fixed = true);\n  \
         Real y(start = {});\n  Real vx(start = 0, fixed = true);\n  Real vy(start = 0);\n  Real F;\nequation\n  \
         der(x) = vx;\n  der(y) = vy;\n  der(vx) = -F*x/L;\n  der(vy) = -F*y/L - g;\n  x^2 + y^2 = L^2;\nend Pendulum;\n",
        theta0.sin(),
        -theta0.cos()
    )
}

/// `x(t_end)` from the angle equation, by RK4 with 10^6 steps per time unit.
fn reference_x(theta0: f64, g: f64, t_end: f64) -> f64 {
    let n = (t_end * 1e6) as usize;
    let h = t_end / n as f64;
    let f = |s: [f64; 2]| [s[1], -g * s[0].sin()];
    let mut s = [theta0, 0.0];
    for _ in 0..n {
        let k1 = f(s);
        let k2 = f([s[0] + 0.5 * h * k1[0], s[1] + 0.5 * h * k1[1]]);
        let k3 = f([s[0] + 0.5 * h * k2[0], s[1] + 0.5 * h * k2[1]]);
        let k4 = f([s[0] + h * k3[0], s[1] + h * k3[1]]);
        for i in 0..2 {
            s[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    s[0].sin()
}

/// Runs the pendulum and returns the seconds taken, the evaluations and `x` at the end.
fn run(
    text: &str,
    form: IndexForm,
    method: Method,
    options: Options,
    stop: f64,
    stabilize: Stabilize,
) -> (f64, usize, f64) {
    let mut session = Sources::new();
    session.add_file("pendulum.eqm", text.to_string());
    let mut compiled = session
        .compile_with(None, &eqm_flatten::Options::default(), form)
        .expect("the pendulum compiles");
    let run_options = RunOptions {
        start: 0.0,
        stop,
        method,
        integrator: options,
        interval: Some(stop),
        params: Vec::new(),
        starts: Vec::new(),
        backend: Backend::Auto,
        stabilize,
        origin: None,
        watch: Default::default(),
        cancel: None,
        final_event: true,
    };
    eqm_sim::simulate::prepare(&mut compiled.program, &run_options);
    let columns = eqm_sim::simulate::columns(&compiled.program, Some(&["x".to_string()])).expect("x exists");
    let mut last = f64::NAN;
    let start = Instant::now();
    let summary = simulate(
        &compiled.program,
        compiled.init.as_ref(),
        &run_options,
        &columns,
        &mut |_, row| {
            last = row[0];
            Ok(())
        },
    )
    .unwrap_or_else(|_| panic!("the run failed"));
    (start.elapsed().as_secs_f64(), summary.stats.rhs_evals, last)
}

fn main() {
    // Cost per evaluation: a fixed-step method evaluates the field the same number of times
    // with and without projection.
    let text = model(std::f64::consts::FRAC_PI_2, 1.0);
    let fixed = Options {
        step: Some(1e-3),
        ..Options::default()
    };
    let stop = 200.0;
    let (plain, n_plain, _) = run(
        &text,
        IndexForm::Embedding,
        Method::Rk4,
        fixed.clone(),
        stop,
        Stabilize::Off,
    );
    let (projected, n_projected, _) = run(
        &text,
        IndexForm::Embedding,
        Method::Rk4,
        fixed,
        stop,
        Stabilize::Default,
    );
    println!(
        "pendulum (embedding form, 6 states, 4 invariants), RK4 h = 1e-3 to t = {stop}: plain field {:.0} ns per evaluation, projected {:.0} ns ({:.2}x)",
        plain / n_plain as f64 * 1e9,
        projected / n_projected as f64 * 1e9,
        (projected / n_projected as f64) / (plain / n_plain as f64)
    );

    // Work-precision over 100 periods of a 30 degree swing (g = 9.81: period 2.041 s).
    let theta0 = 30f64.to_radians();
    let g = 9.81;
    let text = model(theta0, g);
    let stop = 204.1;
    let exact = reference_x(theta0, g, stop);
    println!("work-precision, 30 degree pendulum to t = {stop} (about 100 periods), DOPRI5, error of x at the end:");
    for rtol in [1e-6, 1e-8, 1e-10] {
        let options = Options {
            rtol,
            atol: Atol::Scalar(rtol),
            ..Options::default()
        };
        for (name, form) in [
            ("embedding + projection", IndexForm::Embedding),
            ("dummy derivatives", IndexForm::Dummy),
        ] {
            let (time, evals, x) = run(&text, form, Method::Dopri5, options.clone(), stop, Stabilize::Default);
            println!(
                "  rtol {rtol:.0e} {name:>24}: {:8.2} ms, {:7} evaluations, error {:.2e}",
                time * 1e3,
                evals,
                (x - exact).abs()
            );
        }
    }
}
