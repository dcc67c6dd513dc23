//! Tests of the symbolic core: evaluation, simplification rules, derivative rules of every
//! built-in against finite differences, solving, huge expressions, and property tests over
//! random expressions (simplification keeps values, derivatives agree with finite differences,
//! solutions make the residual vanish).

use eqm_ir::builtins::{ALL, Builtin, BuiltinKind};
use eqm_ir::expr::{BinOp, Callee, ExprArena, ExprId, FuncId, Node, UnOp, VarId};
use eqm_ir::symbolic::{
    Condition, Env, Solution, diff_time, diff_var, evaluate, evaluate_in, linear_form, simplify, solve_for,
    solve_for_var,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::cell::Cell;

const NAMES: [&str; 5] = ["x", "y", "z", "p", "q"];

fn name(v: VarId) -> String {
    NAMES
        .get(v.0 as usize)
        .map_or_else(|| format!("v{}", v.0), |s| s.to_string())
}

fn show(a: &ExprArena, e: ExprId) -> String {
    a.display(e, &name)
}

/// An environment with given variable values, time, and der values per argument node.
struct TestEnv<'a> {
    vars: &'a [f64],
    time: f64,
    der: &'a dyn Fn(ExprId) -> f64,
}

impl Env for TestEnv<'_> {
    fn var(&self, v: VarId) -> f64 {
        self.vars.get(v.0 as usize).copied().unwrap_or(f64::NAN)
    }
    fn time(&self) -> f64 {
        self.time
    }
    fn der(&self, arg: ExprId) -> Option<f64> {
        Some((self.der)(arg))
    }
}

fn eval_at(a: &ExprArena, e: ExprId, vars: &[f64]) -> f64 {
    evaluate(a, e, &|v| vars.get(v.0 as usize).copied().unwrap_or(f64::NAN), 0.0).unwrap_or(f64::NAN)
}

/// A small parser-free builder: `ex(&mut a, |b| ...)`.
struct B<'a>(&'a mut ExprArena);

impl B<'_> {
    fn v(&mut self, i: u32) -> ExprId {
        self.0.var(VarId(i))
    }
    fn r(&mut self, x: f64) -> ExprId {
        self.0.real(x)
    }
    fn bin(&mut self, op: BinOp, x: ExprId, y: ExprId) -> ExprId {
        self.0.binary(op, x, y)
    }
    fn add(&mut self, x: ExprId, y: ExprId) -> ExprId {
        self.bin(BinOp::Add, x, y)
    }
    fn sub(&mut self, x: ExprId, y: ExprId) -> ExprId {
        self.bin(BinOp::Sub, x, y)
    }
    fn mul(&mut self, x: ExprId, y: ExprId) -> ExprId {
        self.bin(BinOp::Mul, x, y)
    }
    fn div(&mut self, x: ExprId, y: ExprId) -> ExprId {
        self.bin(BinOp::Div, x, y)
    }
    fn pow(&mut self, x: ExprId, y: ExprId) -> ExprId {
        self.bin(BinOp::Pow, x, y)
    }
    fn neg(&mut self, x: ExprId) -> ExprId {
        self.0.unary(UnOp::Neg, x)
    }
    fn f(&mut self, b: Builtin, args: Vec<ExprId>) -> ExprId {
        self.0.builtin(b, args)
    }
    fn der(&mut self, x: ExprId) -> ExprId {
        self.0.builtin(Builtin::Der, vec![x])
    }
}

fn simplified(build: impl FnOnce(&mut B) -> ExprId) -> String {
    let mut a = ExprArena::new();
    let e = build(&mut B(&mut a));
    let s = simplify(&mut a, e);
    show(&a, s)
}

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

// ---------------------------------------------------------------------------------------------
// Derivative rules of every built-in against central finite differences

/// Central difference of `f` at `x`, with step 1e-6·max(1, |x|).
fn central(f: &dyn Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-6 * x.abs().max(1.0);
    (f(x + h) - f(x - h)) / (2.0 * h)
}

fn close(sym: f64, fd: f64) -> bool {
    (sym - fd).abs() <= 1e-5 * fd.abs().max(1.0)
}

#[test]
fn every_numeric_builtin_has_a_derivative_matching_finite_differences() {
    let points = [0.3, 0.77, -0.41, 1.6, 2.3, -1.3];
    let mut checked = 0;
    for &b in ALL {
        if !matches!(b.info().kind, BuiltinKind::Math | BuiltinKind::EventMath) {
            continue;
        }
        let arity = b.info().max_args as usize;
        for k in 0..arity {
            for (i, &x0) in points.iter().enumerate() {
                let y0 = points[(i + 2) % points.len()] * 1.7;
                let mut a = ExprArena::new();
                let (x, y) = (a.var(VarId(0)), a.var(VarId(1)));
                let args = if arity == 1 { vec![x] } else { vec![x, y] };
                let e = a.builtin(b, args);
                let wrt = if k == 0 { x } else { y };
                let d = diff_var(&mut a, e, wrt).unwrap_or_else(|err| panic!("{}: {err}", b.name()));
                let at = |v: f64| {
                    let vars = if k == 0 { [v, y0] } else { [x0, v] };
                    eval_at(&a, e, &vars)
                };
                let v0 = if k == 0 { x0 } else { y0 };
                let fd = central(&at, v0);
                let sym = eval_at(&a, d, &[x0, y0]);
                if !fd.is_finite() || !sym.is_finite() {
                    continue;
                }
                checked += 1;
                assert!(
                    close(sym, fd),
                    "d{}/d{} at ({x0}, {y0}): symbolic {sym} ({}), finite difference {fd}",
                    b.name(),
                    name(VarId(k as u32)),
                    show(&a, d)
                );
            }
        }
    }
    assert!(checked > 100, "only {checked} points checked");
}

#[test]
fn derivative_rules_of_operators() {
    let mut a = ExprArena::new();
    let mut b = B(&mut a);
    let (x, y) = (b.v(0), b.v(1));
    let dx = b.der(x);
    // ∂der(x)/∂x = 0 and ∂(x*der(x))/∂der(x) = x
    let e = b.mul(x, dx);
    let d = diff_var(&mut a, dx, x).unwrap();
    assert_eq!(a.literal(d), Some(0.0));
    let d = diff_var(&mut a, e, dx).unwrap();
    assert_eq!(d, x);
    // d/dt (x*y) with y a parameter is der(x)*y; d/dt der(x) = der(der(x)); d/dt time = 1
    let e = B(&mut a).mul(x, y);
    let d = diff_time(&mut a, e, &|v| v.0 == 0).unwrap();
    assert_eq!(show(&a, d), "y*der(x)");
    let d = diff_time(&mut a, dx, &|v| v.0 == 0).unwrap();
    assert_eq!(show(&a, d), "der(der(x))");
    let t = a.add(Node::Time);
    let d = diff_time(&mut a, t, &|_| true).unwrap();
    assert_eq!(a.literal(d), Some(1.0));
    // pre(x) and relations have derivative 0
    let mut b = B(&mut a);
    let p = b.f(Builtin::Pre, vec![x]);
    let r = b.bin(BinOp::Lt, x, y);
    let d = diff_time(&mut a, p, &|_| true).unwrap();
    assert_eq!(a.literal(d), Some(0.0));
    let d = diff_var(&mut a, r, x).unwrap();
    assert_eq!(a.literal(d), Some(0.0));
    // if is differentiated branch-wise with its condition kept
    let mut b = B(&mut a);
    let x2 = b.mul(x, x);
    let e = b.0.add(Node::If(r, x2, y));
    let d = diff_var(&mut a, e, x).unwrap();
    assert_eq!(show(&a, d), "if x < y then 2.0*x else 0.0");
    // noEvent(e) → noEvent(de), smooth(n, e) → smooth(max(n-1, 0), de)
    let mut b = B(&mut a);
    let n = b.f(Builtin::NoEvent, vec![x2]);
    let two = b.0.int(2);
    let s = b.f(Builtin::Smooth, vec![two, x2]);
    let d = diff_var(&mut a, n, x).unwrap();
    assert_eq!(show(&a, d), "noEvent(2.0*x)");
    let d = diff_var(&mut a, s, x).unwrap();
    assert_eq!(show(&a, d), "smooth(1.0, 2.0*x)");
    // a^b with a variable exponent
    let e = B(&mut a).pow(x, y);
    let d = diff_var(&mut a, e, y).unwrap();
    let fd = central(&|v| eval_at(&a, e, &[1.7, v]), 0.6);
    assert!(close(eval_at(&a, d, &[1.7, 0.6]), fd));
}

#[test]
fn non_differentiable_nodes_are_errors_not_panics() {
    let mut a = ExprArena::new();
    let x = a.var(VarId(0));
    let y = a.var(VarId(1));
    let f = a.call(Callee::User(FuncId(3)), vec![x]);
    let e = a.binary(BinOp::Add, f, y);
    let err = diff_var(&mut a, e, x).unwrap_err();
    assert_eq!(err.node, f);
    // Independent of the leaf: fine.
    assert_eq!(diff_var(&mut a, e, y).map(|d| a.literal(d)), Ok(Some(1.0)));
    // Not a leaf.
    assert!(diff_var(&mut a, e, e).is_err());
    // Malformed calls are errors too.
    let bad = a.builtin(Builtin::Sin, vec![x, y]);
    assert!(diff_var(&mut a, bad, x).is_err());
    let bad = a.builtin(Builtin::Der, vec![]);
    assert!(diff_time(&mut a, bad, &|_| true).is_ok());
    assert!(evaluate(&a, bad, &|_| 0.0, 0.0).is_err());
    let sample = a.builtin(Builtin::Sample, vec![x, y]);
    assert_eq!(
        diff_time(&mut a, sample, &|_| true).map(|d| a.literal(d)),
        Ok(Some(0.0))
    );
}

// ---------------------------------------------------------------------------------------------
// Solving

fn solved(sol: &Solution) -> (ExprId, Vec<Condition>) {
    match sol {
        Solution::Solved { value, conditions } => (*value, conditions.clone()),
        other => panic!("not solved: {other:?}"),
    }
}

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

// ---------------------------------------------------------------------------------------------
// Property tests over random expressions

/// A random expression over x, y, z (time-varying), p (a parameter), time and der(x), der(y).
#[derive(Debug, Clone)]
enum R {
    Var(u32),
    Const(f64),
    Time,
    Der(u32),
    Neg(Box<R>),
    Bin(BinOp, Box<R>, Box<R>),
    PowInt(Box<R>, i64),
    Call(Builtin, Vec<R>),
    If(BinOp, Box<R>, Box<R>, Box<R>, Box<R>),
    NoEvent(Box<R>),
}

fn numeric_builtins() -> Vec<Builtin> {
    ALL.iter()
        .copied()
        .filter(|b| matches!(b.info().kind, BuiltinKind::Math | BuiltinKind::EventMath))
        .collect()
}

fn leaf() -> impl Strategy<Value = R> {
    prop_oneof![
        4 => (0u32..4).prop_map(R::Var),
        2 => prop::sample::select(vec![0.0, 1.0, -1.0, 2.0, 0.5, 3.0, -2.5, 0.1]).prop_map(R::Const),
        1 => Just(R::Time),
        1 => (0u32..2).prop_map(R::Der),
    ]
}

fn expr() -> impl Strategy<Value = R> {
    leaf().prop_recursive(5, 40, 3, |inner| {
        let b = || inner.clone().prop_map(Box::new);
        prop_oneof![
            1 => b().prop_map(R::Neg),
            6 => (prop::sample::select(vec![BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div]), b(), b())
                .prop_map(|(op, x, y)| R::Bin(op, x, y)),
            1 => (b(), b()).prop_map(|(x, y)| R::Bin(BinOp::Pow, x, y)),
            2 => (b(), -3i64..5).prop_map(|(x, k)| R::PowInt(x, k)),
            4 => (prop::sample::select(numeric_builtins()), inner.clone(), inner.clone()).prop_map(|(f, x, y)| {
                if f.info().max_args == 1 { R::Call(f, vec![x]) } else { R::Call(f, vec![x, y]) }
            }),
            1 => (prop::sample::select(vec![BinOp::Lt, BinOp::Ge]), b(), b(), b(), b())
                .prop_map(|(op, a, b2, c, d)| R::If(op, a, b2, c, d)),
            1 => b().prop_map(R::NoEvent),
        ]
    })
}

fn build(a: &mut ExprArena, r: &R) -> ExprId {
    match r {
        R::Var(i) => a.var(VarId(*i)),
        R::Const(c) => a.real(*c),
        R::Time => a.add(Node::Time),
        R::Der(i) => {
            let v = a.var(VarId(*i));
            a.builtin(Builtin::Der, vec![v])
        }
        R::Neg(x) => {
            let x = build(a, x);
            a.unary(UnOp::Neg, x)
        }
        R::Bin(op, x, y) => {
            let (x, y) = (build(a, x), build(a, y));
            a.binary(*op, x, y)
        }
        R::PowInt(x, k) => {
            let x = build(a, x);
            let k = a.int(*k);
            a.binary(BinOp::Pow, x, k)
        }
        R::Call(f, args) => {
            let args = args.iter().map(|x| build(a, x)).collect();
            a.builtin(*f, args)
        }
        R::If(op, l, r2, t, e) => {
            let (l, r2, t, e) = (build(a, l), build(a, r2), build(a, t), build(a, e));
            let c = a.binary(*op, l, r2);
            a.add(Node::If(c, t, e))
        }
        R::NoEvent(x) => {
            let x = build(a, x);
            a.builtin(Builtin::NoEvent, vec![x])
        }
    }
}

/// A point: values of x, y, z, p, time, and der(x), der(y) (or their trajectories' slopes).
#[derive(Debug, Clone, Copy)]
struct Point {
    vars: [f64; 4],
    time: f64,
    ders: [f64; 2],
}

fn point() -> impl Strategy<Value = Point> {
    (
        prop::array::uniform4(-2.0..2.0f64),
        0.0..2.0f64,
        prop::array::uniform2(-2.0..2.0f64),
    )
        .prop_map(|(vars, time, ders)| Point { vars, time, ders })
}

/// Evaluates with der(x_i) taken from `p.ders` (a second derivative der(der(x_i)) is `dd[i]`).
fn eval_point(a: &ExprArena, e: ExprId, p: &Point, dd: [f64; 2]) -> f64 {
    let der = |arg: ExprId| match a.get(arg) {
        Node::Var(v) if v.0 < 2 => p.ders[v.0 as usize],
        Node::Call(Callee::Builtin(Builtin::Der), args) => match a.get(args[0]) {
            Node::Var(v) if v.0 < 2 => dd[v.0 as usize],
            _ => f64::NAN,
        },
        _ => f64::NAN,
    };
    let env = TestEnv {
        vars: &p.vars,
        time: p.time,
        der: &der,
    };
    evaluate_in(a, e, &env).unwrap_or(f64::NAN)
}

/// The largest magnitude of any subexpression of `e` at `p`: the scale rounding errors are
/// measured against.
fn scale(a: &ExprArena, e: ExprId, p: &Point) -> f64 {
    let mut stack = vec![e];
    let mut m: f64 = 1.0;
    while let Some(n) = stack.pop() {
        let v = eval_point(a, n, p, [0.0; 2]);
        if v.is_finite() {
            m = m.max(v.abs());
        }
        stack.extend(a.children(n));
    }
    m
}

/// Every coordinate of a point, to perturb one at a time: vars 0..4, time, der(x), der(y).
fn coordinate(p: &Point, k: usize) -> f64 {
    match k {
        0..4 => p.vars[k],
        4 => p.time,
        _ => p.ders[k - 5],
    }
}

fn with_coordinate(p: &Point, k: usize, v: f64) -> Point {
    let mut q = *p;
    match k {
        0..4 => q.vars[k] = v,
        4 => q.time = v,
        _ => q.ders[k - 5] = v,
    }
    q
}

/// Whether `e` looks continuous and differentiable near `p`: in every coordinate the one-sided
/// differences at two scales agree, so no jump or kink (from `if`, `floor`, `abs`, ...) lies
/// within reach of the finite differences or of rounding.
fn smooth_near(a: &ExprArena, e: ExprId, p: &Point) -> bool {
    let f0 = eval_point(a, e, p, [0.0; 2]);
    if !f0.is_finite() {
        return false;
    }
    (0..7).all(|k| {
        let x = coordinate(p, k);
        let h = 1e-5 * x.abs().max(1.0);
        let f = |v: f64| eval_point(a, e, &with_coordinate(p, k, v), [0.0; 2]);
        let (r, l) = ((f(x + h) - f0) / h, (f0 - f(x - h)) / h);
        let (r2, l2) = ((f(x + h / 8.0) - f0) / (h / 8.0), (f0 - f(x - h / 8.0)) / (h / 8.0));
        let tol = 1e-2 * r.abs().max(1.0);
        [r, l, r2, l2].iter().all(|v| v.is_finite())
            && (r - l).abs() < tol
            && (r2 - l2).abs() < tol
            && (r - r2).abs() < tol
    })
}

/// Whether the expression below `root` is degenerate at `p`, where the simplifier's documented
/// conventions (Modelica tools share them) legitimately change the value, so a comparison there
/// would test the convention, not a rule:
/// - some subexpression is NaN or infinite (`x*0` folds to 0 even then);
/// - a product has a literal zero factor: folding it to `+0` loses the sign of the zero, which
///   `atan2`, `1/x` and relations can see;
/// - `atan2(y, x)` with `y = ±0` and `x < 0`: the value is ±π by the sign of the zero, which
///   the simplifier does not preserve (`-0`, `0/x`, `0*x` all become `+0`);
/// - a `mod`, `rem`, `div`, `floor`, `ceil` or `integer` works on a quotient beyond 10^5: there
///   the finite-difference steps (10^-5 relative) cross its jumps, so no difference is smooth.
fn degenerate_at(a: &ExprArena, root: ExprId, p: &Point) -> bool {
    let value = |id: ExprId| eval_point(a, id, p, [0.0; 2]);
    // Children have smaller ids than parents, so `root`'s subtree lies within `0..=root`.
    (0..=root.0).map(ExprId).any(|id| {
        if !value(id).is_finite() {
            return true;
        }
        match a.get(id) {
            Node::Binary(BinOp::Mul, l, r) => a.literal(*l) == Some(0.0) || a.literal(*r) == Some(0.0),
            Node::Call(Callee::Builtin(Builtin::Atan2), args) if args.len() == 2 => {
                value(args[0]) == 0.0 && value(args[1]) < 0.0
            }
            Node::Call(Callee::Builtin(Builtin::Mod | Builtin::Rem | Builtin::Div), args) if args.len() == 2 => {
                (value(args[0]) / value(args[1])).abs() > 1e5
            }
            Node::Call(Callee::Builtin(Builtin::Floor | Builtin::Ceil | Builtin::Integer), args) => {
                args.iter().any(|x| value(*x).abs() > 1e5)
            }
            _ => false,
        }
    })
}

/// The central difference of `e` along coordinate `k` at `p` with step 1e-6·max(1, |x|), and
/// whether it has converged (agrees with the one of twice the step).
fn central_at(a: &ExprArena, e: ExprId, p: &Point, k: usize) -> Option<f64> {
    let x = coordinate(p, k);
    let h = 1e-6 * x.abs().max(1.0);
    let f = |v: f64| eval_point(a, e, &with_coordinate(p, k, v), [0.0; 2]);
    let fd = (f(x + h) - f(x - h)) / (2.0 * h);
    let fd2 = (f(x + 2.0 * h) - f(x - 2.0 * h)) / (4.0 * h);
    (fd.is_finite() && (fd - fd2).abs() <= 2e-6 * fd.abs().max(1.0)).then_some(fd)
}

/// Whether a symbolic derivative agrees with a central difference of step `h` of a function
/// whose value is `f0`: to 1e-5 relative, plus the rounding of the difference itself (a few
/// ulps of `f0` divided by `h`), which dominates for large values such as `exp(16)`.
fn fd_agrees(sym: f64, fd: f64, f0: f64, h: f64) -> bool {
    (sym - fd).abs() <= 1e-5 * fd.abs().max(1.0) + 8.0 * f64::EPSILON * f0.abs() / h
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        // A fixed seed: CI must not pass or fail by chance (a failing case reproduces).
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_e9f1),
        ..Config::default()
    })
}

#[test]
fn property_simplification_preserves_values() {
    let checked = Cell::new(0u32);
    runner(1500)
        .run(&(expr(), prop::collection::vec(point(), 4)), |(r, points)| {
            let mut a = ExprArena::new();
            let e = build(&mut a, &r);
            let s = simplify(&mut a, e);
            for p in &points {
                let (v, w) = (eval_point(&a, e, p, [0.0; 2]), eval_point(&a, s, p, [0.0; 2]));
                if !v.is_finite() || !w.is_finite() || !smooth_near(&a, e, p) || degenerate_at(&a, e, p) {
                    continue;
                }
                checked.set(checked.get() + 1);
                let tol = 1e-9 * scale(&a, e, p);
                prop_assert!(
                    (v - w).abs() <= tol,
                    "{} = {v} but simplified {} = {w} at {p:?}",
                    show(&a, e),
                    show(&a, s)
                );
            }
            Ok(())
        })
        .unwrap();
    assert!(checked.get() > 1500, "only {} points checked", checked.get());
}

#[test]
fn property_partial_derivatives_match_finite_differences() {
    let checked = Cell::new(0u32);
    runner(1000)
        .run(&(expr(), prop::collection::vec(point(), 3)), |(r, points)| {
            let mut a = ExprArena::new();
            let e = build(&mut a, &r);
            let x = a.var(VarId(0));
            let p = a.var(VarId(3));
            let dx = a.builtin(Builtin::Der, vec![x]);
            // Coordinates: x is 0, p is 3, der(x) is 5.
            for (leaf, k) in [(x, 0), (p, 3), (dx, 5)] {
                let d = diff_var(&mut a, e, leaf).unwrap();
                for pt in &points {
                    if !smooth_near(&a, e, pt) || degenerate_at(&a, e, pt) {
                        continue;
                    }
                    let Some(fd) = central_at(&a, e, pt, k) else { continue };
                    let sym = eval_point(&a, d, pt, [0.0; 2]);
                    if !sym.is_finite() {
                        continue;
                    }
                    checked.set(checked.get() + 1);
                    let h = 1e-6 * coordinate(pt, k).abs().max(1.0);
                    prop_assert!(
                        fd_agrees(sym, fd, eval_point(&a, e, pt, [0.0; 2]), h),
                        "d({})/d{} = {} = {sym}, finite difference {fd} at {pt:?}",
                        show(&a, e),
                        show(&a, leaf),
                        show(&a, d)
                    );
                }
            }
            Ok(())
        })
        .unwrap();
    assert!(checked.get() > 2000, "only {} points checked", checked.get());
}

/// Trajectories for the time derivative: x_i(t) = x_i + s_i·(t - t0) + c_i·(t - t0)^2 for the
/// time-varying x, y, z, so der(x_i) = s_i + 2c_i(t - t0) and der(der(x_i)) = 2c_i; p is a
/// parameter.
#[test]
fn property_time_derivatives_match_finite_differences() {
    let checked = Cell::new(0u32);
    runner(1000)
        .run(
            &(
                expr(),
                point(),
                prop::array::uniform3(-1.0..1.0f64),
                prop::array::uniform3(-2.0..2.0f64),
            ),
            |(r, p0, c, s3)| {
                let mut a = ExprArena::new();
                let e = build(&mut a, &r);
                let d = diff_time(&mut a, e, &|v| v.0 < 3).unwrap();
                let at = |t: f64| {
                    let dt = t - p0.time;
                    let mut p = p0;
                    for i in 0..3 {
                        p.vars[i] = p0.vars[i] + s3[i] * dt + c[i] * dt * dt;
                    }
                    p.time = t;
                    p.ders = [s3[0] + 2.0 * c[0] * dt, s3[1] + 2.0 * c[1] * dt];
                    p
                };
                let f = |t: f64| eval_point(&a, e, &at(t), [0.0; 2]);
                let t0 = p0.time;
                if !smooth_near(&a, e, &at(t0)) || degenerate_at(&a, e, &at(t0)) {
                    return Ok(());
                }
                let h = 1e-6 * t0.abs().max(1.0);
                let fd = (f(t0 + h) - f(t0 - h)) / (2.0 * h);
                let fd2 = (f(t0 + 2.0 * h) - f(t0 - 2.0 * h)) / (4.0 * h);
                if !fd.is_finite() || (fd - fd2).abs() > 2e-6 * fd.abs().max(1.0) {
                    return Ok(());
                }
                let sym = eval_point(&a, d, &at(t0), [2.0 * c[0], 2.0 * c[1]]);
                if !sym.is_finite() {
                    return Ok(());
                }
                checked.set(checked.get() + 1);
                prop_assert!(
                    fd_agrees(sym, fd, f(t0), h),
                    "d/dt {} = {} = {sym}, finite difference {fd}",
                    show(&a, e),
                    show(&a, d)
                );
                Ok(())
            },
        )
        .unwrap();
    assert!(checked.get() > 300, "only {} cases checked", checked.get());
}

/// An equation solvable for x by construction: x under a chain of invertible steps.
#[derive(Debug, Clone)]
enum Chain {
    AddFree(R),
    MulFree(f64),
    DivBy(f64),
    Recip,
    Neg,
    Exp,
    Log,
    Sqrt,
    Atan,
    Cube,
    /// `chain + c*x`: the unknown occurs twice, linearly.
    PlusX(f64),
}

fn x_free() -> impl Strategy<Value = R> {
    expr().prop_filter("free of x", |r| !mentions_x(r))
}

fn mentions_x(r: &R) -> bool {
    match r {
        R::Var(0) => true,
        R::Var(_) | R::Const(_) | R::Time | R::Der(_) => false,
        R::Neg(x) | R::PowInt(x, _) | R::NoEvent(x) => mentions_x(x),
        R::Bin(_, x, y) => mentions_x(x) || mentions_x(y),
        R::Call(_, args) => args.iter().any(mentions_x),
        R::If(_, a, b, c, d) => [a, b, c, d].iter().any(|x| mentions_x(x)),
    }
}

fn chain_step() -> impl Strategy<Value = Chain> {
    prop_oneof![
        3 => x_free().prop_map(Chain::AddFree),
        2 => prop::sample::select(vec![2.0, -3.0, 0.5]).prop_map(Chain::MulFree),
        1 => prop::sample::select(vec![4.0, -1.5]).prop_map(Chain::DivBy),
        1 => Just(Chain::Recip),
        1 => Just(Chain::Neg),
        1 => Just(Chain::Exp),
        1 => Just(Chain::Log),
        1 => Just(Chain::Sqrt),
        1 => Just(Chain::Atan),
        1 => Just(Chain::Cube),
        1 => prop::sample::select(vec![1.0, -2.0]).prop_map(Chain::PlusX),
    ]
}

fn apply_chain(a: &mut ExprArena, steps: &[Chain]) -> ExprId {
    let x = a.var(VarId(0));
    let mut e = x;
    for s in steps {
        e = match s {
            Chain::AddFree(r) => {
                let f = build(a, r);
                a.binary(BinOp::Add, e, f)
            }
            Chain::MulFree(c) => {
                let c = a.real(*c);
                a.binary(BinOp::Mul, c, e)
            }
            Chain::DivBy(c) => {
                let c = a.real(*c);
                a.binary(BinOp::Div, e, c)
            }
            Chain::Recip => {
                let one = a.real(1.0);
                a.binary(BinOp::Div, one, e)
            }
            Chain::Neg => a.unary(UnOp::Neg, e),
            Chain::Exp => a.builtin(Builtin::Exp, vec![e]),
            Chain::Log => a.builtin(Builtin::Log, vec![e]),
            Chain::Sqrt => a.builtin(Builtin::Sqrt, vec![e]),
            Chain::Atan => a.builtin(Builtin::Atan, vec![e]),
            Chain::Cube => {
                let k = a.int(3);
                a.binary(BinOp::Pow, e, k)
            }
            Chain::PlusX(c) => {
                let c = a.real(*c);
                let cx = a.binary(BinOp::Mul, c, x);
                a.binary(BinOp::Add, e, cx)
            }
        };
    }
    e
}

#[test]
fn property_solutions_make_the_residual_vanish() {
    let checked = Cell::new(0u32);
    let solved_count = Cell::new(0u32);
    runner(1500)
        .run(
            &(
                prop::collection::vec(chain_step(), 1..5),
                x_free(),
                prop::collection::vec(point(), 3),
                expr(),
                any::<bool>(),
            ),
            |(steps, rhs, points, random, use_random)| {
                let mut a = ExprArena::new();
                // Either a chain solvable by construction or an arbitrary equation.
                let lhs = if use_random {
                    build(&mut a, &random)
                } else {
                    apply_chain(&mut a, &steps)
                };
                let rhs = build(&mut a, &rhs);
                let x = a.var(VarId(0));
                let Solution::Solved { value, conditions } = solve_for(&mut a, lhs, rhs, x) else {
                    return Ok(());
                };
                solved_count.set(solved_count.get() + 1);
                // The plan's variant, which leaves the value unsimplified, solves the same
                // equations with the same conditions and a value equal to the simplified one.
                let Solution::Solved {
                    value: raw,
                    conditions: raw_conditions,
                } = eqm_ir::symbolic::solve_for_unsimplified(
                    &mut eqm_ir::symbolic::Simplifier::new(),
                    &mut a,
                    lhs,
                    rhs,
                    x,
                )
                else {
                    return Err(TestCaseError::fail(
                        "solve_for solved it, solve_for_unsimplified did not",
                    ));
                };
                prop_assert_eq!(&raw_conditions, &conditions);
                prop_assert!(
                    !eqm_ir::symbolic::contains_leaf(&a, value, x),
                    "solution {} contains x",
                    show(&a, value)
                );
                let residual = a.binary(BinOp::Sub, lhs, rhs);
                for p in &points {
                    let holds = conditions.iter().all(|c| match *c {
                        Condition::NonZero(e) => eval_point(&a, e, p, [0.0; 2]) != 0.0,
                        Condition::Positive(e) => eval_point(&a, e, p, [0.0; 2]) > 0.0,
                        Condition::NonNegative(e) => eval_point(&a, e, p, [0.0; 2]) >= 0.0,
                        Condition::Holds(e) => eval_point(&a, e, p, [0.0; 2]) != 0.0,
                    });
                    let v = eval_point(&a, value, p, [0.0; 2]);
                    if !holds || !v.is_finite() || degenerate_at(&a, lhs.max(rhs), p) {
                        continue;
                    }
                    let r = eval_point(&a, raw, p, [0.0; 2]);
                    prop_assert!(
                        (r - v).abs() <= 1e-9 * v.abs().max(1.0) * scale(&a, raw, p).max(1.0),
                        "unsimplified {} = {r}, simplified {} = {v}",
                        show(&a, raw),
                        show(&a, value)
                    );
                    let mut q = *p;
                    q.vars[0] = v;
                    let res = eval_point(&a, residual, &q, [0.0; 2]);
                    if !res.is_finite() || !smooth_near(&a, residual, &q) {
                        continue;
                    }
                    // Relative to the sizes involved and to how strongly the residual reacts to
                    // x: a correct solution leaves only rounding, scaled by the conditioning.
                    let slope = central_at(&a, residual, &q, 0).unwrap_or(0.0).abs();
                    let tol = 1e-9 * scale(&a, residual, &q) + 1e-9 * slope * v.abs().max(1.0);
                    checked.set(checked.get() + 1);
                    prop_assert!(
                        res.abs() <= tol,
                        "{} = {} solved as x = {} = {v}: residual {res} at {q:?}",
                        show(&a, lhs),
                        show(&a, rhs),
                        show(&a, value)
                    );
                }
                Ok(())
            },
        )
        .unwrap();
    assert!(solved_count.get() > 500, "only {} equations solved", solved_count.get());
    assert!(checked.get() > 500, "only {} points checked", checked.get());
}
