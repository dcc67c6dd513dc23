//! Solving equations for a variable or a derivative, checked against the solutions and
//! conditions worked out by hand.
//!
//! Linear and invertible equations are solved with the conditions under which the solution
//! holds, and derivatives are solved for like variables.

use super::*;

#[test]
fn solve_linear_and_invertible_equations() {
    let mut a = ExprArena::new();
    let mut b = B(&mut a);
    let (x, y, p) = (b.v(0), b.v(1), b.v(3));
    let three = b.r(3.0);
    // x + y = 3
    let l = b.add(x, y);
    let (v, c) = solved(&solve_for(&mut a, l, three, x));
    assert_eq!((show(&a, v), c), ("-y + 3.0".to_string(), vec![]));
    // p*x = y → y/p, p must not be zero
    let l = B(&mut a).mul(p, x);
    let (v, c) = solved(&solve_for(&mut a, l, y, x));
    assert_eq!(show(&a, v), "y/p");
    assert_eq!(c, vec![Condition::NonZero(p)]);
    // p*(x + y) = 1 → x linear in a product of a sum
    let mut b = B(&mut a);
    let s = b.add(x, y);
    let l = b.mul(p, s);
    let one = b.r(1.0);
    let (v, _) = solved(&solve_for(&mut a, l, one, x));
    assert!((eval_at(&a, v, &[0.0, 2.0, 0.0, 4.0]) - (0.25 - 2.0)).abs() < 1e-12);
    // exp(x) = y → log(y), y > 0
    let l = B(&mut a).f(Builtin::Exp, vec![x]);
    let (v, c) = solved(&solve_for(&mut a, l, y, x));
    assert_eq!(show(&a, v), "log(y)");
    assert_eq!(c, vec![Condition::Positive(y)]);
    // x^3 = 8 → 2
    let mut b = B(&mut a);
    let (k, eight) = (b.0.int(3), b.r(8.0));
    let l = b.pow(x, k);
    let (v, _) = solved(&solve_for(&mut a, l, eight, x));
    assert!((eval_at(&a, v, &[]) - 2.0).abs() < 1e-12);
    // 1/x = y → 1/y with y nonzero
    let mut b = B(&mut a);
    let one = b.r(1.0);
    let l = b.div(one, x);
    let (v, c) = solved(&solve_for(&mut a, l, y, x));
    assert_eq!(show(&a, v), "1.0/y");
    assert_eq!(c, vec![Condition::NonZero(y)]);
    // sqrt(x) = y → y^2 with y >= 0; atan(x) = y → tan(y); log(x) = y → exp(y)
    for (f, expect) in [
        (Builtin::Sqrt, "y^2"),
        (Builtin::Atan, "tan(y)"),
        (Builtin::Log, "exp(y)"),
    ] {
        let l = B(&mut a).f(f, vec![x]);
        let (v, _) = solved(&solve_for(&mut a, l, y, x));
        assert_eq!(show(&a, v), expect);
    }
    // x^2 = y, sin(x) = y, x*sin(x) = y, if x > 0 then x else 2x = y: implicit
    let mut b = B(&mut a);
    let two = b.0.int(2);
    let sq = b.pow(x, two);
    let sn = b.f(Builtin::Sin, vec![x]);
    let xs = b.mul(x, sn);
    let zero = b.r(0.0);
    let c = b.bin(BinOp::Gt, x, zero);
    let tx = b.mul(two, x);
    let iff = b.0.add(Node::If(c, x, tx));
    for l in [sq, sn, xs, iff] {
        assert!(
            matches!(solve_for(&mut a, l, y, x), Solution::Implicit(_)),
            "{}",
            show(&a, l)
        );
    }
    // absent, also after cancellation
    let l = B(&mut a).sub(x, x);
    assert_eq!(solve_for(&mut a, y, p, x), Solution::Absent);
    assert_eq!(solve_for(&mut a, l, y, x), Solution::Absent);
    // exp(x) = -1 has no real solution
    let mut b = B(&mut a);
    let e = b.f(Builtin::Exp, vec![x]);
    let m1 = b.r(-1.0);
    assert!(matches!(solve_for(&mut a, e, m1, x), Solution::Implicit(_)));
}

#[test]
fn solve_for_derivatives() {
    let mut a = ExprArena::new();
    let mut b = B(&mut a);
    let (x, p) = (b.v(0), b.v(3));
    let dx = b.der(x);
    // der(x) = -p*x solved for der(x), and for x
    let px = b.mul(p, x);
    let r = b.neg(px);
    let (v, _) = solved(&solve_for(&mut a, dx, r, dx));
    assert_eq!(show(&a, v), "-x*p");
    let (v, c) = solved(&solve_for(&mut a, dx, r, x));
    assert_eq!(show(&a, v), "-der(x)/p");
    assert_eq!(c, vec![Condition::NonZero(p)]);
    // m*der(v) + der(x) = f with der(x) appearing as a product with x: x*der(x) = 1
    let mut b = B(&mut a);
    let e = b.mul(x, dx);
    let one = b.r(1.0);
    let (v, c) = solved(&solve_for(&mut a, e, one, dx));
    assert_eq!(show(&a, v), "1.0/x");
    assert_eq!(c, vec![Condition::NonZero(x)]);
    assert_eq!(solve_for_var(&mut a, e, one, VarId(1)), Solution::Absent);
}
