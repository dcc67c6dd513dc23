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
