//! The simplification rules, checked against the simplified text they must produce and against
//! the evaluator.
//!
//! Neutral and absorbing elements, collected sums and products, constant folding (which must
//! agree with the evaluator), determinism and idempotence, and the linear forms that alias
//! elimination reads.

use super::*;

// ---------------------------------------------------------------------------------------------
// Simplification rules

#[test]
fn neutral_and_absorbing_elements() {
    assert_eq!(
        simplified(|b| {
            let (x, z) = (b.v(0), b.r(0.0));
            b.add(x, z)
        }),
        "x"
    );
    assert_eq!(
        simplified(|b| {
            let (x, o) = (b.v(0), b.r(1.0));
            b.mul(x, o)
        }),
        "x"
    );
    assert_eq!(
        simplified(|b| {
            let (x, z) = (b.v(0), b.r(0.0));
            b.mul(x, z)
        }),
        "0.0"
    );
    assert_eq!(
        simplified(|b| {
            let (x, o) = (b.v(0), b.0.int(1));
            b.pow(x, o)
        }),
        "x"
    );
    assert_eq!(
        simplified(|b| {
            let (x, z) = (b.v(0), b.0.int(0));
            b.pow(x, z)
        }),
        "1.0"
    );
    assert_eq!(
        simplified(|b| {
            let x = b.v(0);
            let n = b.neg(x);
            b.neg(n)
        }),
        "x"
    );
    assert_eq!(
        simplified(|b| {
            let (x, z) = (b.v(0), b.r(0.0));
            b.sub(z, x)
        }),
        "-x"
    );
    assert_eq!(
        simplified(|b| {
            let (x, o) = (b.v(0), b.r(1.0));
            b.div(x, o)
        }),
        "x"
    );
    assert_eq!(
        simplified(|b| {
            let x = b.v(0);
            b.sub(x, x)
        }),
        "0.0"
    );
}

#[test]
fn sums_and_products_are_collected() {
    // 2*x + 3*x = 5*x
    assert_eq!(
        simplified(|b| {
            let (x, two, three) = (b.v(0), b.r(2.0), b.r(3.0));
            let p = b.mul(two, x);
            let q = b.mul(three, x);
            b.add(p, q)
        }),
        "5.0*x"
    );
    // x*x = x^2, x*x/x = x
    assert_eq!(
        simplified(|b| {
            let x = b.v(0);
            b.mul(x, x)
        }),
        "x^2"
    );
    assert_eq!(
        simplified(|b| {
            let x = b.v(0);
            let s = b.mul(x, x);
            b.div(s, x)
        }),
        "x"
    );
    // 2*(3*x) = 6*x, and the constant is distributed: 2*(x + y) - 2*x = 2*y
    assert_eq!(
        simplified(|b| {
            let (x, two, three) = (b.v(0), b.r(2.0), b.r(3.0));
            let p = b.mul(three, x);
            b.mul(two, p)
        }),
        "6.0*x"
    );
    assert_eq!(
        simplified(|b| {
            let (x, y, two) = (b.v(0), b.v(1), b.r(2.0));
            let s = b.add(x, y);
            let p = b.mul(two, s);
            let q = b.mul(two, x);
            b.sub(p, q)
        }),
        "2.0*y"
    );
    // x + y - x + 1 + 2 = y + 3; y/3 stays a division.
    assert_eq!(
        simplified(|b| {
            let (x, y, one, two) = (b.v(0), b.v(1), b.r(1.0), b.r(2.0));
            let s = b.add(x, y);
            let s = b.sub(s, x);
            let s = b.add(s, one);
            b.add(s, two)
        }),
        "y + 3.0"
    );
    assert_eq!(
        simplified(|b| {
            let (y, t) = (b.v(1), b.r(3.0));
            b.div(y, t)
        }),
        "y/3"
    );
    // (x^2)^3 = x^6 but (x^0.5)^2 stays.
    assert_eq!(
        simplified(|b| {
            let (x, two, three) = (b.v(0), b.0.int(2), b.0.int(3));
            let p = b.pow(x, two);
            b.pow(p, three)
        }),
        "x^6"
    );
    assert_eq!(
        simplified(|b| {
            let (x, half, two) = (b.v(0), b.r(0.5), b.0.int(2));
            let p = b.pow(x, half);
            b.pow(p, two)
        }),
        "(x^0.5)^2"
    );
}

#[test]
fn constants_fold_like_the_evaluator_and_if_with_constant_condition() {
    let mut a = ExprArena::new();
    let mut b = B(&mut a);
    let (c1, c2, c3) = (b.r(0.1), b.r(0.2), b.r(0.7));
    let s = b.add(c1, c2);
    let s = b.add(s, c3);
    let e = b.f(Builtin::Sin, vec![s]);
    let e = b.div(e, c3);
    let folded = simplify(&mut a, e);
    let direct = eval_at(&a, e, &[]);
    assert_eq!(a.literal(folded).map(f64::to_bits), Some(direct.to_bits()));
    // if with constant condition
    let mut b = B(&mut a);
    let (x, y, one, two) = (b.v(0), b.v(1), b.r(1.0), b.r(2.0));
    let c = b.bin(BinOp::Lt, one, two);
    let e = b.0.add(Node::If(c, x, y));
    assert_eq!(simplify(&mut a, e), x);
    // 1/0 is not folded into an infinity.
    let mut b = B(&mut a);
    let (one, zero) = (b.r(1.0), b.r(0.0));
    let e = b.div(one, zero);
    let s = simplify(&mut a, e);
    assert!(a.literal(s).is_none());
}

#[test]
fn simplification_is_deterministic_and_idempotent() {
    let build = |a: &mut ExprArena| {
        let mut b = B(a);
        let (x, y, z) = (b.v(0), b.v(1), b.v(2));
        let s = b.f(Builtin::Sin, vec![y]);
        let p = b.mul(z, x);
        let q = b.mul(x, s);
        let r = b.add(p, q);
        let r = b.add(r, z);
        let r = b.sub(r, p);
        b.mul(r, r)
    };
    let mut a1 = ExprArena::new();
    let e1 = build(&mut a1);
    let s1 = simplify(&mut a1, e1);
    let mut a2 = ExprArena::new();
    let e2 = build(&mut a2);
    let s2 = simplify(&mut a2, e2);
    assert_eq!(show(&a1, s1), show(&a2, s2));
    assert_eq!(simplify(&mut a1, s1), s1);
}

#[test]
fn linear_forms_for_alias_elimination() {
    let mut a = ExprArena::new();
    let mut b = B(&mut a);
    let (x, y, p, three) = (b.v(0), b.v(1), b.v(3), b.r(3.0));
    let unknown = |v: VarId| v.0 < 3;
    let e = b.sub(x, y);
    let f = linear_form(&mut a, e, &unknown).unwrap();
    assert_eq!(f.terms, vec![(VarId(0), 1.0), (VarId(1), -1.0)]);
    assert_eq!(a.literal(f.rest), Some(0.0));
    let mut b = B(&mut a);
    let e = b.add(x, y);
    let f = linear_form(&mut a, e, &unknown).unwrap();
    assert_eq!(f.terms, vec![(VarId(0), 1.0), (VarId(1), 1.0)]);
    let mut b = B(&mut a);
    let e = b.sub(x, three);
    let e = b.add(e, p);
    let f = linear_form(&mut a, e, &unknown).unwrap();
    assert_eq!(f.terms, vec![(VarId(0), 1.0)]);
    assert_eq!(show(&a, f.rest), "p - 3.0");
    let mut b = B(&mut a);
    let e = b.mul(x, y);
    assert!(linear_form(&mut a, e, &unknown).is_none());
    let e = B(&mut a).mul(p, x);
    assert!(linear_form(&mut a, e, &unknown).is_none());
    let e = B(&mut a).f(Builtin::Sin, vec![x]);
    assert!(linear_form(&mut a, e, &unknown).is_none());
}
