//! The reference evaluator, checked against values worked out by hand.
//!
//! Booleans, `if` and the built-ins must evaluate to the values their definitions give.

use super::*;

// ---------------------------------------------------------------------------------------------
// Evaluation

#[test]
fn evaluator_handles_booleans_if_and_builtins() {
    let mut a = ExprArena::new();
    let mut b = B(&mut a);
    let (x, y) = (b.v(0), b.v(1));
    let lt = b.bin(BinOp::Lt, x, y);
    let s = b.f(Builtin::Sin, vec![x]);
    let m = b.f(Builtin::Max, vec![x, y]);
    let e = b.0.add(Node::If(lt, s, m));
    assert_eq!(eval_at(&a, e, &[1.0, 2.0]), 1f64.sin());
    assert_eq!(eval_at(&a, e, &[3.0, 2.0]), 3.0);
    // The branch not taken may fail to evaluate without making the whole expression fail.
    let b = B(&mut a);
    let user = b.0.call(Callee::User(FuncId(0)), vec![x]);
    let t = b.0.boolean(true);
    let e = b.0.add(Node::If(t, x, user));
    assert_eq!(eval_at(&a, e, &[5.0]), 5.0);
    let err = evaluate(&a, user, &|_| 0.0, 0.0).unwrap_err();
    assert_eq!(err.node, user);
    // der(x) needs an environment that knows it.
    let d = B(&mut a).der(x);
    assert!(evaluate(&a, d, &|_| 0.0, 0.0).is_err());
    let env = TestEnv {
        vars: &[1.0],
        time: 0.5,
        der: &|_| 7.0,
    };
    assert_eq!(evaluate_in(&a, d, &env), Ok(7.0));
    // NaN propagates.
    let l = B(&mut a).f(Builtin::Log, vec![x]);
    assert!(eval_at(&a, l, &[-1.0]).is_nan());
}
