//! Expressions compiled by the JIT, checked bit for bit against the reference evaluator.
//!
//! Every operator and numeric built-in runs on every pair of special values, random expressions
//! with shared subexpressions run at random points, and segments read back the slots they wrote
//! earlier (recomputing what depends on a slot written again).

use super::*;

const SPECIAL: [f64; 16] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -2.5,
    3.0,
    1e-310,
    1e300,
    -1e300,
    700.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    std::f64::consts::PI,
    -7.25,
];

/// Every binary operator.
const ALL_BINOPS: [BinOp; 13] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Pow,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::And,
    BinOp::Or,
];

fn numeric_builtins() -> Vec<Builtin> {
    ALL.iter()
        .copied()
        .filter(|b| matches!(b.info().kind, BuiltinKind::Math | BuiltinKind::EventMath))
        .collect()
}

/// Every operator and every numeric built-in on every pair of special values (signed zeros,
/// infinities, NaN, subnormals, huge values), with operands that are states, parameters and
/// work slots.
#[test]
fn every_operator_and_builtin_matches_the_evaluator_on_special_values() {
    let mut a = ExprArena::new();
    let (x, p) = (a.var(VarId(0)), a.var(VarId(2)));
    let mut exprs = vec![a.unary(UnOp::Neg, x), a.unary(UnOp::Not, x)];
    for op in ALL_BINOPS {
        exprs.push(a.binary(op, x, p));
    }
    let builtins = numeric_builtins();
    assert!(builtins.len() >= 20, "the table's numeric built-ins are all covered");
    for b in builtins {
        let args = if b.info().min_args == 2 || b.info().max_args == 2 {
            vec![x, p]
        } else {
            vec![x]
        };
        exprs.push(a.builtin(b, args));
    }
    let t = a.add(Node::Time);
    exprs.push(a.binary(BinOp::Mul, t, x));
    for b in [Builtin::NoEvent, Builtin::Pre] {
        exprs.push(a.builtin(b, vec![x]));
    }
    let two = a.int(2);
    exprs.push(a.builtin(Builtin::Smooth, vec![two, x]));
    let evaluable: Vec<ExprId> = exprs
        .iter()
        .copied()
        .filter(|e| !matches!(a.get(*e), Node::Call(Callee::Builtin(Builtin::Pre), _)))
        .collect();
    let points: Vec<Point> = SPECIAL
        .iter()
        .flat_map(|&u| {
            SPECIAL.iter().map(move |&v| Point {
                vars: [u, 1.0, v, 2.0, 0.0, 0.0],
                time: 0.25,
            })
        })
        .collect();
    check_against_evaluator(&a, &evaluable, &points).unwrap_or_else(|e| panic!("{e}"));
    // `pre(x)` reads the current value of `x` for now.
    let pre = exprs[exprs.len() - 2];
    let module = compile(&a, &[], &[], &slot_of, &[segment_of(&[pre])], &JitOptions::default()).expect("compiles");
    let point = &points[17];
    let mut arrays = Arrays::new(point, 1);
    arrays.run(&module, 0, 0.0).expect("runs");
    assert!(same(arrays.work[RESULTS as usize], point.vars[0]));
}

// ---------------------------------------------------------------------------------------------
// Random expressions

#[derive(Debug, Clone)]
enum R {
    Var(u32),
    Const(f64),
    Int(i64),
    Bool(bool),
    Time,
    Neg(Box<R>),
    Not(Box<R>),
    Bin(BinOp, Box<R>, Box<R>),
    Call(Builtin, Vec<R>),
    If(Box<R>, Box<R>, Box<R>),
    NoEvent(Box<R>),
    Smooth(Box<R>),
    /// A node built earlier in the same arena (any composite node of any expression so far),
    /// so that expressions share subexpressions inside and outside branches.
    Shared(usize),
}

fn leaf() -> impl Strategy<Value = R> {
    prop_oneof![
        6 => (0u32..VARS).prop_map(R::Var),
        2 => prop::sample::select(vec![0.0, 1.0, -1.0, 2.0, 0.5, 3.0, -2.5, 0.1, 1e-3]).prop_map(R::Const),
        1 => (-3i64..4).prop_map(R::Int),
        1 => any::<bool>().prop_map(R::Bool),
        1 => Just(R::Time),
        3 => any::<usize>().prop_map(R::Shared),
    ]
}

fn expr() -> impl Strategy<Value = R> {
    leaf().prop_recursive(6, 48, 3, |inner| {
        let b = || inner.clone().prop_map(Box::new);
        prop_oneof![
            1 => b().prop_map(R::Neg),
            1 => b().prop_map(R::Not),
            8 => (prop::sample::select(ALL_BINOPS.to_vec()), b(), b()).prop_map(|(op, x, y)| R::Bin(op, x, y)),
            5 => (prop::sample::select(numeric_builtins()), inner.clone(), inner.clone()).prop_map(|(f, x, y)| {
                if f.info().max_args == 1 { R::Call(f, vec![x]) } else { R::Call(f, vec![x, y]) }
            }),
            3 => (b(), b(), b()).prop_map(|(c, x, y)| R::If(c, x, y)),
            1 => b().prop_map(R::NoEvent),
            1 => b().prop_map(R::Smooth),
        ]
    })
}

/// Builds `r`; `pool` collects the composite nodes built so far, for [`R::Shared`].
fn build(a: &mut ExprArena, pool: &mut Vec<ExprId>, r: &R) -> ExprId {
    let e = build_node(a, pool, r);
    if !matches!(
        r,
        R::Var(_) | R::Const(_) | R::Int(_) | R::Bool(_) | R::Time | R::Shared(_)
    ) {
        pool.push(e);
    }
    e
}

fn build_node(a: &mut ExprArena, pool: &mut Vec<ExprId>, r: &R) -> ExprId {
    if let R::Shared(k) = r {
        return match pool.len() {
            0 => a.var(VarId(*k as u32 % VARS)),
            n => pool[*k % n],
        };
    }
    let mut build = |a: &mut ExprArena, r: &R| build(a, pool, r);
    match r {
        R::Shared(_) => unreachable!("handled above"),
        R::Var(i) => a.var(VarId(*i)),
        R::Const(c) => a.real(*c),
        R::Int(i) => a.int(*i),
        R::Bool(b) => a.boolean(*b),
        R::Time => a.add(Node::Time),
        R::Neg(x) => {
            let x = build(a, x);
            a.unary(UnOp::Neg, x)
        }
        R::Not(x) => {
            let x = build(a, x);
            a.unary(UnOp::Not, x)
        }
        R::Bin(op, x, y) => {
            let (x, y) = (build(a, x), build(a, y));
            a.binary(*op, x, y)
        }
        R::Call(f, args) => {
            let args = args.iter().map(|x| build(a, x)).collect();
            a.builtin(*f, args)
        }
        R::If(c, x, y) => {
            let (c, x, y) = (build(a, c), build(a, x), build(a, y));
            a.add(Node::If(c, x, y))
        }
        R::NoEvent(x) => {
            let x = build(a, x);
            a.builtin(Builtin::NoEvent, vec![x])
        }
        R::Smooth(x) => {
            let (one, x) = (a.int(1), build(a, x));
            a.builtin(Builtin::Smooth, vec![one, x])
        }
    }
}

fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => -4.0..4.0f64,
        1 => prop::sample::select(SPECIAL.to_vec()),
    ]
}

fn point() -> impl Strategy<Value = Point> {
    (prop::array::uniform6(value()), value()).prop_map(|(vars, time)| Point { vars, time })
}

/// Random expressions over states, parameters, work slots and time, with every operator and
/// numeric built-in, `if`, `noEvent` and `smooth`: the JIT gives the evaluator's bits. Several
/// expressions share one arena and one segment, so hash-consed subexpressions are shared
/// between assignments and between branches, which exercises the scoped memo.
#[test]
fn property_random_expressions_match_the_evaluator() {
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        // A fixed seed: CI must not pass or fail by chance.
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_e9f1),
        ..Config::default()
    });
    let case = (
        prop::collection::vec(expr(), 1..12),
        prop::collection::vec(point(), 1..6),
    );
    runner
        .run(&case, |(rs, points)| {
            let mut a = ExprArena::new();
            let mut pool = Vec::new();
            let exprs: Vec<ExprId> = rs.iter().map(|r| build(&mut a, &mut pool, r)).collect();
            check_against_evaluator(&a, &exprs, &points).map_err(TestCaseError::fail)
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

/// A slot written earlier in the segment is read back (from its register) by later
/// assignments, and `der(x)` reads `dx`.
#[test]
fn later_assignments_read_earlier_ones_and_der_reads_dx() {
    let mut a = ExprArena::new();
    let x = a.var(VarId(0));
    let w0 = a.var(VarId(4));
    let two = a.real(2.0);
    let der_x = a.builtin(Builtin::Der, vec![x]);
    let e1 = a.binary(BinOp::Mul, x, two); // dx[0] := 2*x
    let e2 = a.binary(BinOp::Add, der_x, x); // work[0] := der(x) + x
    let e3 = a.binary(BinOp::Mul, w0, w0); // work[8] := work[0]^2
    let segment = Segment::assignments(vec![(Slot::Der(0), e1), (Slot::Work(0), e2), (Slot::Work(RESULTS), e3)]);
    let module = compile(&a, &[], &[], &slot_of, &[segment], &JitOptions::default()).expect("compiles");
    let point = Point {
        vars: [3.0, 0.0, 0.0, 0.0, 100.0, 0.0],
        time: 0.0,
    };
    let mut arrays = Arrays::new(&point, 1);
    arrays.dx = vec![0.0];
    arrays.run(&module, 0, 0.0).expect("runs");
    assert_eq!(arrays.dx[0], 6.0);
    assert_eq!(arrays.work[0], 9.0);
    assert_eq!(arrays.work[RESULTS as usize], 81.0);
}

/// A slot written after a node that reads it was computed: the node is recomputed with the
/// new value, not taken from the memo.
#[test]
fn rewriting_a_slot_recomputes_what_depends_on_it() {
    let mut a = ExprArena::new();
    let w0 = a.var(VarId(4));
    let x = a.var(VarId(0));
    let two = a.real(2.0);
    let doubled = a.binary(BinOp::Mul, w0, two);
    let sine = a.builtin(Builtin::Sin, vec![x]);
    let segment = Segment::assignments(vec![
        (Slot::Work(RESULTS), doubled),
        (Slot::Work(0), sine),
        (Slot::Work(RESULTS + 1), doubled),
    ]);
    let module = compile(&a, &[], &[], &slot_of, &[segment], &JitOptions::default()).expect("compiles");
    let point = Point {
        vars: [0.5, 0.0, 0.0, 0.0, 10.0, 0.0],
        time: 0.0,
    };
    let mut arrays = Arrays::new(&point, 2);
    arrays.run(&module, 0, 0.0).expect("runs");
    assert_eq!(arrays.work[RESULTS as usize], 20.0);
    assert_eq!(arrays.work[RESULTS as usize + 1], 0.5f64.sin() * 2.0);
}
