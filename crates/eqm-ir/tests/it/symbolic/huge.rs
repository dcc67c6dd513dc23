//! Huge expressions, checked against their known values on the default test thread stack.
//!
//! A sum of two hundred thousand terms and a deep chain of functions must simplify,
//! differentiate and evaluate without recursing over their depth.

use super::*;

// ---------------------------------------------------------------------------------------------
// Huge expressions: no recursion over depth (runs on the default test thread stack)

#[test]
fn two_hundred_thousand_term_sum() {
    const N: u32 = 200_000;
    let mut a = ExprArena::new();
    let vars: Vec<ExprId> = (0..100).map(|i| a.var(VarId(i))).collect();
    let mut sum = a.real(0.0);
    for i in 0..N {
        let c = a.real(f64::from(i % 7) + 1.0);
        let t = a.binary(BinOp::Mul, c, vars[(i % 100) as usize]);
        let t = if i % 3 == 0 {
            a.builtin(Builtin::Sin, vec![t])
        } else {
            t
        };
        sum = a.binary(if i % 2 == 0 { BinOp::Add } else { BinOp::Sub }, sum, t);
    }
    let values: Vec<f64> = (0..100).map(|i| 0.01 * f64::from(i)).collect();
    let before = eval_at(&a, sum, &values);
    let s = simplify(&mut a, sum);
    let after = eval_at(&a, s, &values);
    assert!(
        (before - after).abs() <= 1e-9 * before.abs().max(1.0),
        "{before} vs {after}"
    );
    let d = diff_var(&mut a, sum, vars[5]).unwrap();
    assert!(eval_at(&a, d, &values).is_finite());
    let dt = diff_time(&mut a, sum, &|_| true).unwrap();
    let env = TestEnv {
        vars: &values,
        time: 0.0,
        der: &|_| 1.0,
    };
    assert!(evaluate_in(&a, dt, &env).unwrap().is_finite());
    let z = a.real(0.0);
    assert!(matches!(solve_for(&mut a, sum, z, vars[7]), Solution::Implicit(_)));
    assert!(linear_form(&mut a, sum, &|_| true).is_none());
    // A purely linear one is solved and has a linear form.
    let mut lin = a.real(1.0);
    for i in 0..N {
        let c = a.real(f64::from(i % 5) + 1.0);
        let t = a.binary(BinOp::Mul, c, vars[(i % 100) as usize]);
        lin = a.binary(BinOp::Add, lin, t);
    }
    let (v, _) = solved(&solve_for(&mut a, lin, z, vars[3]));
    assert!(eval_at(&a, v, &values).is_finite());
    assert_eq!(linear_form(&mut a, lin, &|_| true).map(|f| f.terms.len()), Some(100));
}

#[test]
fn deep_chain_of_functions() {
    let mut a = ExprArena::new();
    let x = a.var(VarId(0));
    let mut e = x;
    for i in 0..100_000 {
        e = if i % 2 == 0 {
            a.builtin(Builtin::Sin, vec![e])
        } else {
            a.unary(UnOp::Neg, e)
        };
    }
    let s = simplify(&mut a, e);
    let d = diff_var(&mut a, e, x).unwrap();
    assert!(eval_at(&a, s, &[0.5]).is_finite());
    assert!(eval_at(&a, d, &[0.5]).is_finite());
    let y = a.var(VarId(1));
    assert!(matches!(solve_for(&mut a, e, y, x), Solution::Implicit(_)));
}

/// One row of a dense layer, `tanh(W_1*x_1 + ... + W_n*x_n + b)`: the gradient has one partial
/// per variable, `(1 - tanh(s)^2)*W_j`, built from one pass over the row (the adjoint of the sum
/// is shared by every partial), and the deep chain of functions differentiates without
/// recursion too.
#[test]
fn gradient_of_a_dense_row_and_of_a_deep_chain() {
    const N: u32 = 3000;
    let mut a = ExprArena::new();
    let weight = |j: u32| (f64::from(j) * 0.37).sin() / f64::from(N).sqrt();
    let vars: Vec<ExprId> = (0..N).map(|j| a.var(VarId(j))).collect();
    let mut sum = a.real(0.1);
    for j in 0..N {
        let w = a.real(weight(j));
        let t = a.binary(BinOp::Mul, w, vars[j as usize]);
        sum = a.binary(BinOp::Add, sum, t);
    }
    let row = a.builtin(Builtin::Tanh, vec![sum]);
    let values: Vec<f64> = (0..N).map(|j| (f64::from(j) * 0.11).cos()).collect();
    let s: f64 = 0.1 + (0..N).map(|j| weight(j) * values[j as usize]).sum::<f64>();
    let nodes_before = a.len();
    let partials = gradient(&mut a, &mut Simplifier::new(), row, &|_, _| true).unwrap();
    assert_eq!(partials.len(), N as usize);
    // A few nodes per partial: the sum is never copied.
    assert!(
        a.len() - nodes_before < 8 * N as usize,
        "{} new nodes",
        a.len() - nodes_before
    );
    for (j, &(leaf, d)) in partials.iter().enumerate().step_by(97) {
        assert_eq!(leaf, vars[j]);
        let want = (1.0 - s.tanh().powi(2)) * weight(j as u32);
        let got = eval_at(&a, d, &values);
        assert!((got - want).abs() <= 1e-12, "partial {j}: {got} vs {want}");
    }

    let x = a.var(VarId(0));
    let mut e = x;
    for _ in 0..50_000 {
        e = a.builtin(Builtin::Sin, vec![e]);
    }
    let grad = gradient(&mut a, &mut Simplifier::new(), e, &|_, leaf| leaf == x).unwrap();
    let forward = diff_var(&mut a, e, x).unwrap();
    assert_eq!(grad.len(), 1);
    let (g, f) = (eval_at(&a, grad[0].1, &[0.5]), eval_at(&a, forward, &[0.5]));
    assert!(
        g.is_finite() && (g - f).abs() <= 1e-12 * f.abs().max(1e-300),
        "{g} vs {f}"
    );
}
