//! The derivative rules, checked against central finite differences and against the derivative
//! texts they must produce.
//!
//! Every numeric built-in and every operator is differentiated, and nodes without a derivative
//! are errors rather than panics.

use super::*;

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
