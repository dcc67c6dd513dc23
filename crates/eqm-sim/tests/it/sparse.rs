//! Sparse Jacobians and the sparse LU (faer) for large stiff models: the Brusselator with
//! diffusion in one dimension (Hairer and Wanner II, section IV.10), written as an EQM model
//! with arrays and for-loops, runs with BDF through the sparse path (symbolic values in the
//! pattern's order, sparse LU where `linalg::prefers_sparse` chooses it) and agrees with an
//! explicit solution; `auto` switches to BDF on it although it has far more states than a dense
//! solver could take.

use crate::pipeline;

use eqm_integrators::Method;

/// The Brusselator with `n` grid points on (0, 1), u = 1, v = 3 at the boundaries,
/// alpha = 1/50: stiff through the diffusion term (eigenvalues down to about -4 alpha (n+1)^2).
fn brusselator(n: usize) -> String {
    format!(
        "model Brusselator\n  parameter Integer n = {n};\n  parameter Real alpha = 0.02;\n  parameter Real c = alpha*(n + 1)^2;\n  \
         Real u[n];\n  Real v[n];\ninitial equation\n  for i in 1:n loop\n    \
         u[i] = 1 + sin(2*3.141592653589793*i/(n + 1));\n    v[i] = 3;\n  end for;\nequation\n  \
         der(u[1]) = 1 + u[1]^2*v[1] - 4*u[1] + c*(1 - 2*u[1] + u[2]);\n  \
         der(v[1]) = 3*u[1] - u[1]^2*v[1] + c*(3 - 2*v[1] + v[2]);\n  for i in 2:n-1 loop\n    \
         der(u[i]) = 1 + u[i]^2*v[i] - 4*u[i] + c*(u[i-1] - 2*u[i] + u[i+1]);\n    \
         der(v[i]) = 3*u[i] - u[i]^2*v[i] + c*(v[i-1] - 2*v[i] + v[i+1]);\n  end for;\n  \
         der(u[n]) = 1 + u[n]^2*v[n] - 4*u[n] + c*(u[n-1] - 2*u[n] + 1);\n  \
         der(v[n]) = 3*u[n] - u[n]^2*v[n] + c*(v[n-1] - 2*v[n] + 3);\nend Brusselator;\n"
    )
}

/// Runs `text` to t = 10 with `method`: the last row of u and v at the middle point, the
/// statistics and the solver notes.
fn simulate(text: &str, method: Method, n: usize) -> (Vec<f64>, eqm_integrators::Stats, Vec<String>) {
    let mut compiled = pipeline::compile("brusselator.eqm", text);
    let options = crate::run_options(10.0, method, 1e-6, 1e-8, 10.0);
    eqm_sim::simulate::prepare(&mut compiled.program, &options);
    let names = [
        format!("u[{}]", n / 2),
        format!("v[{}]", n / 2),
        format!("u[{}]", n / 5),
    ];
    let mut last = Vec::new();
    let what = format!("the Brusselator with {n} points");
    let summary = crate::run(&compiled, &options, Some(&names), &what, |_, row| last = row.to_vec());
    (last, summary.stats, summary.solver_notes)
}

#[test]
fn bdf_with_the_sparse_lu_agrees_with_an_explicit_reference_on_a_large_stiff_model() {
    let n = 150; // 300 states: above the sparse threshold
    let text = brusselator(n);
    let (sparse, stats, _) = simulate(&text, Method::Bdf, n);
    // The explicit reference needs thousands of steps (the diffusion limits its step), but no
    // linear algebra at all.
    let (dense, reference, _) = simulate(&text, Method::Dopri5, n);
    assert!(reference.steps > 10 * stats.steps, "{reference:?} vs {stats:?}");
    assert!(
        stats.jacobians > 0 && stats.symbolic_jacobians == stats.jacobians,
        "{stats:?}"
    );
    assert_eq!(stats.sparse_jacobians, stats.jacobians, "{stats:?}");
    // A stiff problem: BDF needs few steps for t = 10 (an explicit method would need
    // thousands for the diffusion's stability limit).
    assert!(stats.steps < 2000, "{stats:?}");
    for (a, b) in sparse.iter().zip(&dense) {
        assert!(
            (a - b).abs() < 1e-4 * (1.0 + b.abs()),
            "bdf {sparse:?} vs dopri5 {dense:?}"
        );
    }
}

#[test]
fn auto_switches_to_sparse_bdf_on_a_large_stiff_model() {
    let n = 260; // 520 states: above the size where dense BDF is not worth it
    let (with_auto, stats, notes) = simulate(&brusselator(n), Method::Auto, n);
    assert!(notes.iter().any(|s| s.contains("stiff: bdf")), "{notes:?}");
    assert!(
        stats.symbolic_jacobians > 0 && stats.sparse_jacobians == stats.jacobians,
        "{stats:?}"
    );
    let (with_bdf, _, _) = simulate(&brusselator(n), Method::Bdf, n);
    for (a, b) in with_auto.iter().zip(&with_bdf) {
        assert!((a - b).abs() < 1e-4 * (1.0 + b.abs()), "{with_auto:?} vs {with_bdf:?}");
    }
}
