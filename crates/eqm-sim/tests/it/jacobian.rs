//! The symbolic Jacobian (`eqm_compile::jacobian`, evaluated by `Instance::jacobian`) against central
//! difference quotients of the right-hand side, on every example and on models built to reach
//! each kind of instruction (explicit assignments, scalar implicit equations, linear and
//! nonlinear torn loops with one and with several tearing unknowns, derivatives read by later
//! equations); the native evaluation of the partial derivatives against the interpreter's, bit
//! for bit; and the solvers using it (fewer right-hand-side evaluations, same results).

use crate::pipeline;

use eqm_compile::exec::ExecProgram;
use eqm_sim::instance::Instance;
use eqm_sim::interp::{JacobianOut, OdeRhs};
use eqm_sim::native::NativeCode;
use nalgebra::DMatrix;
use std::sync::Arc;

/// The model program of `text`.
fn program(name: &str, text: &str) -> ExecProgram {
    pipeline::compile(name, text).program
}

/// A point near the start values, moved so that no entry is special (0, 1).
fn point(program: &ExecProgram, k: usize) -> Vec<f64> {
    eqm_sim::instance::default_start_values(program)
        .expect("the program has start values")
        .iter()
        .enumerate()
        .map(|(i, v)| v * (1.0 + 0.01 * (i + k) as f64) + 0.1 * ((i * 7 + k * 3) % 5) as f64 - 0.2)
        .collect()
}

/// Central differences of the right-hand side at `(t, x)`, with steps scaled to each state.
fn central_differences(instance: &mut Instance<'_>, t: f64, x: &[f64]) -> DMatrix<f64> {
    let n = x.len();
    let mut jac = DMatrix::zeros(n, n);
    let (mut plus, mut minus) = (vec![0.0; n], vec![0.0; n]);
    for j in 0..n {
        let h = 1e-6 * (1.0 + x[j].abs());
        let mut xp = x.to_vec();
        xp[j] += h;
        let mut xm = x.to_vec();
        xm[j] -= h;
        instance.rhs(t, &xp, &mut plus).expect("rhs");
        instance.rhs(t, &xm, &mut minus).expect("rhs");
        for i in 0..n {
            jac[(i, j)] = (plus[i] - minus[i]) / (xp[j] - xm[j]);
        }
    }
    jac
}

/// Checks the symbolic Jacobian of `program` against central differences at a few points, on
/// the interpreter and on native code, and the two against each other bit for bit. Returns
/// how many points were compared.
fn check(name: &str, program: &mut ExecProgram) -> usize {
    program
        .add_jacobian()
        .unwrap_or_else(|e| panic!("{name}: no symbolic Jacobian: {e}"));
    let program = &*program;
    let n = program.layout().states;
    let native = Arc::new(NativeCode::compile(program).expect("native code"));
    // A right-hand side that reads no state (`der(m) = rate`, a constant) has no partial
    // derivatives to compile: its Jacobian is zero.
    let has_partials = program.jacobian().is_some_and(|j| !j.partials.is_empty());
    assert!(
        !has_partials || native.partials_native(program),
        "{name}: the partial derivatives did not compile"
    );
    let mut compared = 0;
    for k in 0..3 {
        // Fresh instances with the same history: Newton iterations start from the previous
        // solution, so instances that evaluated different points agree only to the tolerance.
        let mut interpreted = Instance::new(program).expect("instance");
        let mut compiled = Instance::new(program).expect("instance");
        compiled.attach_native(native.clone());
        let x = point(program, k);
        let t = 0.3 + 0.1 * k as f64;
        let mut dx = vec![0.0; n];
        if Instance::new(program).expect("instance").rhs(t, &x, &mut dx).is_err() {
            continue;
        }
        let (mut a, mut b) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
        let got_a = interpreted
            .jacobian(
                t,
                &x,
                &mut dx,
                JacobianOut {
                    f_x: Some(&mut a),
                    ..Default::default()
                },
            )
            .expect("jacobian");
        let got_b = compiled
            .jacobian(
                t,
                &x,
                &mut dx,
                JacobianOut {
                    f_x: Some(&mut b),
                    ..Default::default()
                },
            )
            .expect("jacobian");
        assert!(got_a && got_b, "{name}: no Jacobian at {x:?}");
        for (u, v) in a.iter().zip(b.iter()) {
            assert_eq!(
                u.to_bits(),
                v.to_bits(),
                "{name}: native {v} and interpreter {u} differ"
            );
        }
        let reference = central_differences(&mut interpreted, t, &x);
        for i in 0..n {
            for j in 0..n {
                let (s, d) = (a[(i, j)], reference[(i, j)]);
                // Central differences are accurate to about 1e-8 relative to the row's scale.
                let scale = 1.0 + reference.row(i).amax();
                assert!(
                    (s - d).abs() <= 1e-6 * scale,
                    "{name}: ∂f{i}/∂x{j} symbolic {s}, differences {d} at x = {x:?}"
                );
            }
        }
        compared += 1;
    }
    compared
}

#[test]
fn the_symbolic_jacobian_of_every_example_matches_differences() {
    let mut checked = 0;
    for entry in std::fs::read_dir(format!("{}/examples", crate::REPO)).expect("examples") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "eqm") {
            continue;
        }
        let name = path.display().to_string();
        let text = std::fs::read_to_string(&path).expect("read");
        let mut program = program(&name, &text);
        if program.layout().states == 0 {
            continue;
        }
        // Algorithm sections are not differentiated symbolically: those models keep
        // difference quotients, which the integrators test already covers.
        if program
            .rhs()
            .iter()
            .any(|i| matches!(i, eqm_compile::exec::Instr::Algorithm { .. }))
        {
            assert!(program.add_jacobian().is_err(), "{name}");
            continue;
        }
        assert!(check(&name, &mut program) > 0, "{name}: no point could be evaluated");
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} examples checked");
}

#[test]
fn implicit_equations_and_loops_are_differentiated_through() {
    // A scalar implicit equation (z + z^3 = x1), a nonlinear loop with two tearing unknowns
    // after tearing, a linear loop, and derivatives read by later equations.
    let text = r#"
model Loops
  Real x1(start = 0.7);
  Real x2(start = -0.4);
  Real x3(start = 1.3);
  Real z;
  Real a;
  Real b;
  Real c;
  Real u;
  Real w;
equation
  z + z^3 = x1 + 0.5*x2;
  a + sin(b) = x2*x3 + c;
  b + a^3/(1 + a^2) = x1 - 0.2*c;
  c = 0.3*cos(a + b) + exp(-x3*x3);
  u + 2*w = x1 + x3;
  3*u - w = x2*z;
  der(x1) = -a + z*b;
  der(x2) = u - w*x1 + der(x1)^2;
  der(x3) = c*b - sqrt(1 + der(x2)^2) + x1*x2*x3;
end Loops;
"#;
    let mut p = program("loops.eqm", text);
    let kinds: Vec<&str> = p
        .rhs()
        .iter()
        .map(|i| match i {
            eqm_compile::exec::Instr::Assign { .. } => "assign",
            eqm_compile::exec::Instr::Newton1 { .. } => "newton",
            eqm_compile::exec::Instr::Loop(_) => "loop",
            eqm_compile::exec::Instr::Algorithm { .. } => "algorithm",
        })
        .collect();
    assert!(kinds.contains(&"newton"), "{kinds:?}");
    assert!(kinds.iter().filter(|k| **k == "loop").count() >= 2, "{kinds:?}");
    assert_eq!(check("loops.eqm", &mut p), 3);
}

#[test]
fn the_pattern_and_colours_of_a_chain_are_banded() {
    // A chain of masses and springs: each acceleration depends on three positions, so the
    // Jacobian has a band and a handful of colours however long the chain is.
    let stages = 40;
    let mut text = String::from("model Chain\n  parameter Integer n = ");
    text.push_str(&format!("{stages};\n"));
    text.push_str(
        "  Real s[n](each start = 0.1);\n  Real v[n](each start = 0);\nequation\n  for i in 1:n loop\n    der(s[i]) = v[i];\n  end for;\n  der(v[1]) = -2*s[1] + s[2];\n  for i in 2:n-1 loop\n    der(v[i]) = s[i-1] - 2*s[i] + s[i+1] - 0.1*v[i]^3;\n  end for;\n  der(v[n]) = s[n-1] - 2*s[n];\nend Chain;\n",
    );
    let mut p = program("chain.eqm", &text);
    p.add_jacobian().expect("jacobian");
    let j = p.jacobian().expect("built");
    assert!(j.n_colors <= 5, "{} colours", j.n_colors);
    assert!(j.nonzeros() <= 5 * stages, "{} nonzeros", j.nonzeros());
    assert_eq!(check("chain.eqm", &mut p), 3);
}

/// Simulates `text` with `solver`, with or without the symbolic Jacobian: the last row and the
/// integrator's statistics.
fn simulate(text: &str, solver: &str, symbolic: bool) -> (Vec<f64>, eqm_integrators::Stats) {
    let mut compiled = pipeline::compile("m.eqm", text);
    if symbolic {
        compiled.program.add_jacobian().expect("jacobian");
    }
    let method = eqm_integrators::Method::parse(solver).expect("solver");
    let options = crate::run_options(2.0, method, 1e-8, 1e-10, 0.5);
    let mut last = Vec::new();
    let summary = crate::run(&compiled, &options, None, solver, |_, row| last = row.to_vec());
    (last, summary.stats)
}

#[test]
fn stiff_solvers_use_the_symbolic_jacobian_and_agree_with_differences() {
    // A stiff chemical oscillator in the model language (Robertson's reactions).
    let text = r#"
model Robertson
  Real y1(start = 1, fixed = true);
  Real y2(start = 0, fixed = true);
  Real y3(start = 0, fixed = true);
equation
  der(y1) = -0.04*y1 + 1e4*y2*y3;
  der(y2) = 0.04*y1 - 1e4*y2*y3 - 3e7*y2^2;
  der(y3) = 3e7*y2^2;
end Robertson;
"#;
    for solver in ["bdf", "radau5", "implicit-euler", "auto"] {
        let (symbolic, stats) = simulate(text, solver, true);
        let (differences, reference) = simulate(text, solver, false);
        assert!(stats.symbolic_jacobians > 0, "{solver}: {stats:?}");
        assert_eq!(stats.symbolic_jacobians, stats.jacobians, "{solver}: {stats:?}");
        assert_eq!(reference.symbolic_jacobians, 0, "{solver}");
        // Each difference-quotient Jacobian costs one evaluation per state; the symbolic one
        // costs one.
        assert!(
            stats.rhs_evals < reference.rhs_evals,
            "{solver}: {stats:?} vs {reference:?}"
        );
        for (a, b) in symbolic.iter().zip(&differences) {
            assert!(
                (a - b).abs() <= 1e-6 * (1.0 + b.abs()),
                "{solver}: {symbolic:?} vs {differences:?}"
            );
        }
    }
}

/// `eqm_testkit::models::dense_network(n)`: `h = tanh(W1*x + b1)`, `g = tanh(W2*h)`,
/// `der(x) = W3*g - x`, so `∂f/∂x = W3·diag(1 - g²)·W2·diag(1 - h²)·W1 - I`. Its n^2 partial
/// derivatives share the derivative of each row's `tanh`; the interpreter computes each shared
/// node once (compiled one partial at a time, they took n^3 operations and, at n = 256,
/// gigabytes). The result: the closed form, on both back ends bit for bit.
#[test]
fn the_jacobian_of_a_dense_network_is_its_closed_form() {
    let n = 40;
    let mut p = program("net.eqm", &eqm_testkit::models::dense_network(n));
    assert_eq!(check("net.eqm", &mut p), 3);
    let program = &p;
    let states: Vec<String> = (0..2)
        .map(|i| program.slot_name(eqm_ir::slot::Slot::State(i)))
        .collect();
    assert_eq!(states, ["x[1]", "x[2]"]);
    let x = [0.3, -0.7];
    let (w1, b1) = (
        |i: usize, j: usize| ((i * j) as f64).sin(),
        |i: usize| 0.1 * i as f64 / n as f64,
    );
    let w2 = |i: usize, j: usize| ((i + j) as f64).cos() / n as f64;
    let w3 = |i: usize, j: usize| ((i + 2 * j) as f64).sin() / n as f64;
    let h: Vec<f64> = (1..=n)
        .map(|i| (w1(i, 1) * x[0] + w1(i, 2) * x[1] + b1(i)).tanh())
        .collect();
    let g: Vec<f64> = (1..=n)
        .map(|i| (1..=n).map(|j| w2(i, j) * h[j - 1]).sum::<f64>().tanh())
        .collect();
    let mut expected = DMatrix::<f64>::zeros(2, 2);
    for r in 0..2 {
        for c in 0..2 {
            let mut sum = 0.0;
            for i in 1..=n {
                let inner: f64 = (1..=n)
                    .map(|j| w2(i, j) * (1.0 - h[j - 1].powi(2)) * w1(j, c + 1))
                    .sum();
                sum += w3(r + 1, i) * (1.0 - g[i - 1].powi(2)) * inner;
            }
            expected[(r, c)] = sum - if r == c { 1.0 } else { 0.0 };
        }
    }
    let native = Arc::new(NativeCode::compile(program).expect("native code"));
    for attach in [false, true] {
        let mut instance = Instance::new(program).expect("instance");
        if attach {
            instance.attach_native(native.clone());
        }
        let (mut dx, mut got) = (vec![0.0; 2], DMatrix::zeros(2, 2));
        let out = JacobianOut {
            f_x: Some(&mut got),
            ..Default::default()
        };
        assert!(instance.jacobian(0.0, &x, &mut dx, out).expect("jacobian"));
        for (a, b) in got.iter().zip(expected.iter()) {
            // Sums of 40 terms of size 1/40 in another order: a few ulps apart.
            assert!((a - b).abs() <= 1e-13, "native {attach}: {got} against {expected}");
        }
    }
}
