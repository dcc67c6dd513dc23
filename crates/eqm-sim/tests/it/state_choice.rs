//! The check of a dummy-derivative form's static state choice at every output row, on a chain
//! of masses joined by rigid rods: a valid choice of a hundred constraints passes 501 rows
//! (the sparse check of the state-choice matrix, whose velocity columns and one row are zero),
//! and the rows follow the closed form. That a singular choice stops the run with E0713 is
//! tested through `eqm run` (the horizontal pendulum and the long pendulum run).

use crate::pipeline::Pipeline;

use eqm_compile::analysis::IndexForm;
use eqm_integrators::Method;

/// `n` masses 1 joined by rigid rods of length 1, the first tied to a wall by a spring `c` at
/// rest at 1.5, started 0.5 from there: all move together, `s[1] = 1.5 − 0.5 cos(√(c/n) t)`.
fn rigid_chain(n: usize) -> String {
    format!(
        "model RigidChain
  parameter Integer N = {n};
  parameter Real c = 100;
  Real s[N](start = {{i for i in 1:N}});
  Real v[N](each start = 0);
  Real f[N];
equation
  f[1] = c*(s[1] - 1.5);
  for i in 1:N loop
    der(s[i]) = v[i];
  end for;
  for i in 1:N - 1 loop
    der(v[i]) = f[i + 1] - f[i];
    s[i + 1] = s[i] + 1;
  end for;
  der(v[N]) = -f[N];
end RigidChain;
"
    )
}

#[test]
fn a_valid_state_choice_of_a_hundred_constraints_passes_every_row() {
    let n = 100;
    let mut sources = eqm_flatten::Sources::new();
    sources.add_file("rigid.eqm", rigid_chain(n));
    let mut compiled = sources
        .compile_with(None, &eqm_flatten::Options::default(), IndexForm::Dummy)
        .unwrap_or_else(|| panic!("{}", sources.render_diagnostics(false)));
    assert!(compiled.program.state_choice().is_some(), "dummy derivatives");
    let options = crate::run_options(1.0, Method::Bdf, 1e-8, 1e-10, 0.002);
    eqm_sim::simulate::prepare(&mut compiled.program, &options);
    let names = ["s[1]".to_string(), format!("s[{n}]")];
    let omega = (100.0 / n as f64).sqrt();
    let mut worst = 0.0f64;
    let summary = crate::run(&compiled, &options, Some(&names), "the rigid chain", |t, row| {
        let exact = 1.5 - 0.5 * (omega * t).cos();
        worst = worst.max((row[0] - exact).abs());
        worst = worst.max((row[1] - (exact + (n - 1) as f64)).abs());
    });
    assert_eq!(summary.rows, 501);
    assert!(worst < 1e-6, "{worst:e}");
}
