//! Tests of the JIT (`eqm_jit`) against the reference evaluator (`symbolic::evaluate_in`):
//! every operator and numeric built-in on special values, random expressions, branches that
//! must not run, user functions written in `.eqm`, splitting of long segments, and the checks
//! of the safe wrapper.

use crate::pipeline::Pipeline;
use eqm_compile::exec::Instr;
use eqm_flatten::Sources;
use eqm_ir::builtins::{ALL, Builtin, BuiltinKind};
use eqm_ir::expr::{BinOp, Callee, ExprArena, ExprId, FuncId, Node, UnOp, VarId};
use eqm_ir::failure::FailureKind;
use eqm_ir::flat::FlatModel;
use eqm_ir::slot::Slot;
use eqm_ir::symbolic::{Env, evaluate_in};
use eqm_jit::{CompiledModule, JitError, JitOptions, OptLevel, Segment, compile};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::time::Duration;

// ---------------------------------------------------------------------------------------------
// A small model of the evaluation arrays: variables 0 and 1 are states, 2 and 3 parameters,
// 4 and 5 work slots written before the segment runs. Results go to work[RESULTS + k].

const VARS: u32 = 6;
const RESULTS: u32 = 8;

fn slot_of(v: VarId) -> Option<Slot> {
    match v.0 {
        0 | 1 => Some(Slot::State(v.0)),
        2 | 3 => Some(Slot::Param(v.0 - 2)),
        4 | 5 => Some(Slot::Work(v.0 - 4)),
        _ => None,
    }
}

/// Variable values and time, as the evaluator sees them and as arrays for the JIT.
#[derive(Debug, Clone)]
struct Point {
    vars: [f64; VARS as usize],
    time: f64,
}

impl Env for Point {
    fn var(&self, v: VarId) -> f64 {
        self.vars.get(v.0 as usize).copied().unwrap_or(f64::NAN)
    }
    fn time(&self) -> f64 {
        self.time
    }
}

struct Arrays {
    x: Vec<f64>,
    p: Vec<f64>,
    dx: Vec<f64>,
    work: Vec<f64>,
}

impl Arrays {
    fn new(point: &Point, results: usize) -> Arrays {
        let mut work = vec![f64::NAN; RESULTS as usize + results];
        work[..2].copy_from_slice(&point.vars[4..6]);
        Arrays {
            x: point.vars[0..2].to_vec(),
            p: point.vars[2..4].to_vec(),
            dx: Vec::new(),
            work,
        }
    }

    fn run(&mut self, module: &CompiledModule, segment: usize, t: f64) -> Result<(), JitError> {
        module.call(segment, t, &self.x, &self.p, &mut self.dx, &mut self.work)
    }
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn segment_of(exprs: &[ExprId]) -> Segment {
    Segment::assignments(
        exprs
            .iter()
            .enumerate()
            .map(|(k, e)| (Slot::Work(RESULTS + k as u32), *e))
            .collect(),
    )
}

/// Compiles `exprs` into one segment, runs it at each point and compares every result with the
/// evaluator, bit for bit (any NaN matches any NaN).
fn check_against_evaluator(arena: &ExprArena, exprs: &[ExprId], points: &[Point]) -> Result<(), String> {
    let module = compile(arena, &[], &slot_of, &[segment_of(exprs)], &JitOptions::default())
        .map_err(|e| format!("compile: {e}"))?;
    for point in points {
        let mut arrays = Arrays::new(point, exprs.len());
        arrays.run(&module, 0, point.time).map_err(|e| e.to_string())?;
        for (k, e) in exprs.iter().enumerate() {
            let expected = evaluate_in(arena, *e, point).map_err(|e| e.to_string())?;
            let got = arrays.work[RESULTS as usize + k];
            if !same(got, expected) {
                let name = |v: VarId| format!("v{}", v.0);
                return Err(format!(
                    "{} at {point:?}: JIT {got:e} ({:#x}), evaluator {expected:e} ({:#x})",
                    arena.display(*e, &name),
                    got.to_bits(),
                    expected.to_bits()
                ));
            }
        }
    }
    Ok(())
}

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
    let module = compile(&a, &[], &slot_of, &[segment_of(&[pre])], &JitOptions::default()).expect("compiles");
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
    let module = compile(&a, &[], &slot_of, &[segment], &JitOptions::default()).expect("compiles");
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
    let module = compile(&a, &[], &slot_of, &[segment], &JitOptions::default()).expect("compiles");
    let point = Point {
        vars: [0.5, 0.0, 0.0, 0.0, 10.0, 0.0],
        time: 0.0,
    };
    let mut arrays = Arrays::new(&point, 2);
    arrays.run(&module, 0, 0.0).expect("runs");
    assert_eq!(arrays.work[RESULTS as usize], 20.0);
    assert_eq!(arrays.work[RESULTS as usize + 1], 0.5f64.sin() * 2.0);
}

// ---------------------------------------------------------------------------------------------
// Branches

/// The branch not taken is not evaluated: a division by zero there leaves no NaN.
#[test]
fn untaken_branch_does_not_matter() {
    let mut a = ExprArena::new();
    let x = a.var(VarId(0));
    let zero = a.real(0.0);
    let one = a.real(1.0);
    let ne = a.binary(BinOp::Ne, x, zero);
    let quotient = a.binary(BinOp::Div, zero, x);
    let guarded = a.add(Node::If(ne, quotient, one));
    // The same quotient again outside the branch: computed in the branch first, it must be
    // recomputed (not taken from the branch's scope) after it.
    let sum = a.binary(BinOp::Add, guarded, quotient);
    let inner_guard = a.add(Node::If(ne, sum, guarded));
    let module = compile(
        &a,
        &[],
        &slot_of,
        &[segment_of(&[guarded, inner_guard, sum])],
        &JitOptions::default(),
    )
    .expect("compiles");
    let mut arrays = Arrays::new(
        &Point {
            vars: [0.0; 6],
            time: 0.0,
        },
        3,
    );
    arrays.run(&module, 0, 0.0).expect("runs");
    let r = &arrays.work[RESULTS as usize..];
    assert_eq!(r[0], 1.0);
    assert_eq!(r[1], 1.0);
    assert!(r[2].is_nan(), "0/0 outside any branch is NaN");
}

fn flatten(text: &str) -> FlatModel {
    let mut session = Sources::new();
    session.add_embedded_stdlib();
    session.add_file("test.eqm", text);
    let flat = session.flatten(None, &eqm_flatten::Options::default());
    flat.unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)))
}

/// A costly branch is not run when not taken: a call that would loop for hours, behind a false
/// condition, returns at once.
#[test]
fn costly_untaken_branch_is_not_run() {
    let flat = flatten(
        r#"
function spin
  input Real n;
  output Real y = 0;
algorithm
  while y < n loop
    y := y + 1;
  end while;
end spin;
model S
  Real z;
equation
  z = spin(3);
end S;
"#,
    );
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut a = flat.exprs.clone();
        let x = a.var(VarId(0));
        let zero = a.real(0.0);
        let huge = a.real(1e15);
        let three = a.real(3.0);
        let positive = a.binary(BinOp::Gt, x, zero);
        let call = a.call(Callee::User(FuncId(0)), vec![huge]);
        let small = a.call(Callee::User(FuncId(0)), vec![three]);
        let guarded = a.add(Node::If(positive, call, small));
        let result = compile(
            &a,
            &flat.functions,
            &slot_of,
            &[segment_of(&[guarded])],
            &JitOptions::default(),
        )
        .and_then(|module| {
            let point = Point {
                vars: [-1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                time: 0.0,
            };
            let mut arrays = Arrays::new(&point, 1);
            arrays.run(&module, 0, 0.0)?;
            Ok(arrays.work[RESULTS as usize])
        });
        let _ = tx.send(result);
    });
    let result = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the untaken call was not run (else this would time out)");
    assert_eq!(result, Ok(3.0));
}

// ---------------------------------------------------------------------------------------------
// User functions

const LOOPS: &str = r#"
function f
  input Real x;
  input Integer n;
  output Real y = 0;
  output Integer steps = 0;
protected
  Real t;
algorithm
  for i in 1:n loop
    y := y + i*x;
  end for;
  for i in n:-2:1 loop
    y := y - 0.5*i;
  end for;
  t := abs(y);
  while t > 1 loop
    t := t/2;
    steps := steps + 1;
    if steps >= 5 then
      break;
    end if;
  end while;
  if y > 100 then
    y := 100;
    return;
  elseif y < -100 then
    y := -100;
  else
    y := y + t;
  end if;
  steps := steps + 1000;
end f;

model M
  parameter Real a = 2.5;
  parameter Integer n = 4;
  Real y;
  Integer s;
  Real w;
equation
  (y, s) = f(a, n);
  w = f(a + 1, n);
end M;
"#;

/// `f` computed by hand, with the same statement semantics.
fn f_by_hand(x: f64, n: i64) -> (f64, f64) {
    let mut y = 0.0;
    let mut steps = 0.0;
    for i in 1..=n {
        y += i as f64 * x;
    }
    let mut i = n;
    while i >= 1 {
        y -= 0.5 * i as f64;
        i -= 2;
    }
    let mut t = y.abs();
    while t > 1.0 {
        t /= 2.0;
        steps += 1.0;
        if steps >= 5.0 {
            break;
        }
    }
    if y > 100.0 {
        return (100.0, steps);
    } else if y < -100.0 {
        y = -100.0;
    } else {
        y += t;
    }
    (y, steps + 1000.0)
}

/// A function with for-loops over run-time ranges (rising and falling), a while loop with a
/// break, if/elseif/else and an early return, called from a segment with two outputs used.
#[test]
fn user_function_with_loops_branches_and_return() {
    let flat = flatten(LOOPS);
    // a, n are parameters p[0], p[1]; y, s, w are work slots.
    let slot = |v: VarId| {
        Some(
            [
                Slot::Param(0),
                Slot::Param(1),
                Slot::Work(0),
                Slot::Work(1),
                Slot::Work(2),
            ][v.0 as usize],
        )
    };
    let assignments: Vec<(Slot, ExprId)> = flat
        .equations
        .iter()
        .map(|eq| match flat.exprs.get(eq.lhs) {
            Node::Var(v) => (slot(*v).expect("a slot"), eq.rhs),
            _ => panic!("explicit equations"),
        })
        .collect();
    assert_eq!(assignments.len(), 3);
    for options in [
        JitOptions::default(),
        JitOptions {
            opt_level: OptLevel::Speed,
            verify: true,
            ..JitOptions::default()
        },
    ] {
        let module = compile(
            &flat.exprs,
            &flat.functions,
            &slot,
            &[Segment::assignments(assignments.clone())],
            &options,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        for (x, n) in [
            (2.5, 4),
            (0.1, 3),
            (30.0, 5),
            (-30.0, 5),
            (1.0, 0),
            (1.0, -2),
            (0.0, 1),
            (-0.3, 7),
        ] {
            let p = [x, n as f64];
            let mut work = [f64::NAN; 3];
            module.call(0, 0.0, &[], &p, &mut [], &mut work).expect("runs");
            let (y, s) = f_by_hand(x, n);
            let (w, _) = f_by_hand(x + 1.0, n);
            assert_eq!((work[0], work[1], work[2]), (y, s, w), "f({x}, {n})");
        }
    }
}

/// A failed assertion inside a function stops the code and reports its message and span, as
/// the interpreter does; recursion works.
#[test]
fn assertions_and_recursion_in_functions() {
    let flat = flatten(
        r#"
function fact
  input Integer n;
  output Real y;
algorithm
  assert(n >= 0, "n must not be negative");
  if n <= 1 then
    y := 1;
  else
    y := n*fact(n - 1);
  end if;
end fact;
model M
  parameter Integer n = 5;
  Real y;
equation
  y = fact(n);
end M;
"#,
    );
    let slot = |v: VarId| Some([Slot::Param(0), Slot::Work(0)][v.0 as usize]);
    let Node::Var(_) = flat.exprs.get(flat.equations[0].lhs) else {
        panic!("explicit equation")
    };
    let segment = Segment::assignments(vec![(Slot::Work(0), flat.equations[0].rhs)]);
    let module = compile(&flat.exprs, &flat.functions, &slot, &[segment], &JitOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let run = |n: f64| {
        let mut work = [0.0];
        module.call(0, 0.0, &[], &[n], &mut [], &mut work).map(|()| work[0])
    };
    assert_eq!(run(5.0), Ok(120.0));
    assert_eq!(run(0.0), Ok(1.0));
    match run(-1.0) {
        Err(JitError::Failed {
            site: 0,
            kind: FailureKind::Assert { message, span },
        }) => {
            assert_eq!(message, "n must not be negative");
            assert!(span.end > span.start);
        }
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Splitting

/// `work[i] = work[i-1]*0.5 + x[i % n]` for 5000 assignments: split into functions of at most
/// 1000 assignments, in one function, and by the evaluator, all bit for bit the same.
#[test]
fn long_segments_are_split_without_changing_results() {
    const N: u32 = 5000;
    const STATES: u32 = 7;
    let mut a = ExprArena::new();
    // Variable k < N is work[k]; variable N + j is x[j].
    let slot = |v: VarId| Some(if v.0 < N { Slot::Work(v.0) } else { Slot::State(v.0 - N) });
    let half = a.real(0.5);
    let mut assignments = vec![(Slot::Work(0), a.var(VarId(N)))];
    for i in 1..N {
        let prev = a.var(VarId(i - 1));
        let scaled = a.binary(BinOp::Mul, prev, half);
        let x = a.var(VarId(N + i % STATES));
        assignments.push((Slot::Work(i), a.binary(BinOp::Add, scaled, x)));
    }
    let x: Vec<f64> = (0..STATES).map(|j| 0.3 * j as f64 - 1.1).collect();
    // The evaluator, assignment by assignment.
    let mut expected = vec![0.0; N as usize];
    for &(target, e) in &assignments {
        let Slot::Work(i) = target else { unreachable!() };
        let var = |v: VarId| {
            if v.0 < N {
                expected[v.0 as usize]
            } else {
                x[(v.0 - N) as usize]
            }
        };
        expected[i as usize] = eqm_ir::symbolic::evaluate(&a, e, &var, 0.0).expect("evaluates");
    }
    let segment = [Segment::assignments(assignments)];
    // Straight-line code, so that there is something to split.
    let straight = JitOptions {
        reroll: false,
        ..JitOptions::default()
    };
    let split = compile(&a, &[], &slot, &segment, &straight).expect("compiles");
    assert_eq!(split.function_count(0), Some(5));
    let whole = compile(
        &a,
        &[],
        &slot,
        &segment,
        &JitOptions {
            max_assignments_per_function: usize::MAX,
            max_instructions_per_function: usize::MAX,
            ..straight
        },
    )
    .expect("compiles");
    assert_eq!(whole.function_count(0), Some(1));
    // Re-rolled: the pattern repeats every 7 assignments (x[i % 7]), so all but the first
    // assignment (which reads x[0] directly) become one loop in one function.
    let rolled = compile(&a, &[], &slot, &segment, &JitOptions::default()).expect("compiles");
    assert_eq!(rolled.loops(0), Some(1));
    assert_eq!(rolled.function_count(0), Some(1));
    for module in [&split, &whole, &rolled] {
        let mut work = vec![f64::NAN; N as usize];
        module.call(0, 0.0, &x, &[], &mut [], &mut work).expect("runs");
        assert!(work.iter().zip(&expected).all(|(a, b)| same(*a, *b)));
    }
    // A small instruction budget splits by size too.
    let small = compile(
        &a,
        &[],
        &slot,
        &segment,
        &JitOptions {
            max_instructions_per_function: 2000,
            ..straight
        },
    )
    .expect("compiles");
    assert!(small.function_count(0).is_some_and(|n| n > 5));
}

// ---------------------------------------------------------------------------------------------
// Re-rolled loops

/// `segments` compiled with re-rolling (the default) and as straight-line code.
fn rolled_and_straight(
    arena: &ExprArena,
    functions: &[eqm_ir::flat::Function],
    slot: &dyn Fn(VarId) -> Option<Slot>,
    segments: &[Segment],
) -> [CompiledModule; 2] {
    [true, false].map(|reroll| {
        let options = JitOptions {
            reroll,
            ..JitOptions::default()
        };
        compile(arena, functions, slot, segments, &options).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// Stages `i = 0..n`: `w[3i] := if x[i] > 0 then w[3i - 1]*x[i] else sin(p[i % 2] + x[i])`
/// reads inside branches and a parameter that alternates (so the loop body is two stages);
/// `w[3i + 1] := w[3i]/4 - x[i + 1]` divides by a power of two; then `w[3i + 2] := w[3i + 1] +
/// w[3i]` and `dx[i] := w[3i + 2]`. Compiled as loops and as straight-line code, both give the
/// evaluator's bits, at points where the branches go both ways.
#[test]
fn repeated_stages_become_loops_with_the_same_bits() {
    const N: u32 = 40;
    let mut a = ExprArena::new();
    // Variables: 0..3N work, 10_000 + i state i, 20_000 + j parameter j.
    let slot = |v: VarId| {
        Some(match v.0 {
            i if i < 10_000 => Slot::Work(i),
            i if i < 20_000 => Slot::State(i - 10_000),
            j => Slot::Param(j - 20_000),
        })
    };
    let zero = a.real(0.0);
    let four = a.real(4.0);
    let mut assignments = Vec::new();
    for i in 0..N {
        let x = a.var(VarId(10_000 + i));
        let x_next = a.var(VarId(10_000 + i + 1));
        let p = a.var(VarId(20_000 + i % 2));
        let previous = if i == 0 { a.real(1.5) } else { a.var(VarId(3 * i - 1)) };
        let positive = a.binary(BinOp::Gt, x, zero);
        let product = a.binary(BinOp::Mul, previous, x);
        let shifted = a.binary(BinOp::Add, p, x);
        let sine = a.builtin(Builtin::Sin, vec![shifted]);
        let branch = a.add(Node::If(positive, product, sine));
        assignments.push((Slot::Work(3 * i), branch));
        let w0 = a.var(VarId(3 * i));
        let quarter = a.binary(BinOp::Div, w0, four);
        assignments.push((Slot::Work(3 * i + 1), a.binary(BinOp::Sub, quarter, x_next)));
        let w1 = a.var(VarId(3 * i + 1));
        assignments.push((Slot::Work(3 * i + 2), a.binary(BinOp::Add, w1, w0)));
        assignments.push((Slot::Der(i), a.var(VarId(3 * i + 2))));
    }
    let segment = [Segment::assignments(assignments.clone())];
    let [rolled, straight] = rolled_and_straight(&a, &[], &slot, &segment);
    assert_eq!(rolled.loops(0), Some(1), "one loop after the first stage");
    assert_eq!(straight.loops(0), Some(0));
    let mut seed = 0x1234_5678_9abc_def0_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0
    };
    for _ in 0..20 {
        let x: Vec<f64> = (0..=N).map(|_| next()).collect();
        let p = [next(), next()];
        // The evaluator, assignment by assignment.
        let (mut work, mut dx) = (vec![0.0; 3 * N as usize], vec![0.0; N as usize]);
        for &(target, e) in &assignments {
            let value = {
                let var = |v: VarId| match slot(v) {
                    Some(Slot::Work(i)) => work[i as usize],
                    Some(Slot::State(i)) => x[i as usize],
                    Some(Slot::Param(j)) => p[j as usize],
                    _ => f64::NAN,
                };
                eqm_ir::symbolic::evaluate(&a, e, &var, 0.0).expect("evaluates")
            };
            match target {
                Slot::Work(i) => work[i as usize] = value,
                Slot::Der(i) => dx[i as usize] = value,
                _ => unreachable!(),
            }
        }
        for module in [&rolled, &straight] {
            let (mut w, mut d) = (vec![f64::NAN; work.len()], vec![f64::NAN; dx.len()]);
            module.call(0, 0.0, &x, &p, &mut d, &mut w).expect("runs");
            assert!(w.iter().zip(&work).all(|(a, b)| same(*a, *b)), "{w:?}\n{work:?}");
            assert!(d.iter().zip(&dx).all(|(a, b)| same(*a, *b)), "{d:?}\n{dx:?}");
        }
    }
    // The loop's last repetition reads x[N]: a shorter x is refused, not read past its end.
    let (mut w, mut d) = (vec![0.0; 3 * N as usize], vec![0.0; N as usize]);
    let short = vec![0.0; N as usize];
    assert!(matches!(
        rolled.call(0, 0.0, &short, &[0.0, 0.0], &mut d, &mut w),
        Err(JitError::SliceTooShort { slice: "x", .. })
    ));
}

/// A failure inside a loop body names the root of the repetition that failed, as straight-line
/// code does.
#[test]
fn failures_inside_loops_name_their_repetition() {
    let flat = flatten(
        r#"
function limited
  input Real u;
  output Real y;
algorithm
  assert(u < 1, "u must be below 1");
  y := 2*u;
end limited;
model M
  parameter Real u[30] = fill(0, 30);
  Real y[30];
equation
  for i in 1:30 loop
    y[i] = limited(u[i]);
  end for;
end M;
"#,
    );
    // Parameter `u[i]` is p[i - 1] and `y[i]` is work[i - 1], by declaration order.
    let slot = |v: VarId| {
        Some(if v.0 < 30 {
            Slot::Param(v.0)
        } else {
            Slot::Work(v.0 - 30)
        })
    };
    let assignments: Vec<(Slot, ExprId)> = flat
        .equations
        .iter()
        .map(|eq| match flat.exprs.get(eq.lhs) {
            Node::Var(v) => (slot(*v).expect("slot"), eq.rhs),
            other => panic!("not explicit: {other:?}"),
        })
        .collect();
    let segment = [Segment::assignments(assignments)];
    let [rolled, straight] = rolled_and_straight(&flat.exprs, &flat.functions, &slot, &segment);
    assert_eq!(rolled.loops(0), Some(1));
    for failing in [0usize, 13, 29] {
        let mut p = vec![0.5; 30];
        p[failing] = 2.0;
        for module in [&rolled, &straight] {
            let mut work = vec![0.0; 30];
            match module.call(0, 0.0, &[], &p, &mut [], &mut work) {
                Err(JitError::Failed {
                    site,
                    kind: FailureKind::Assert { message, .. },
                }) => {
                    assert_eq!(site, failing);
                    assert_eq!(message, "u must be below 1");
                }
                other => panic!("{other:?}"),
            }
            assert!(work[..failing].iter().all(|w| *w == 1.0), "earlier stages ran");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The safe wrapper and errors

#[test]
fn short_slices_are_errors() {
    let mut a = ExprArena::new();
    let slot = |v: VarId| Some([Slot::State(3), Slot::Param(1)][v.0 as usize]);
    let (x, p) = (a.var(VarId(0)), a.var(VarId(1)));
    let sum = a.binary(BinOp::Add, x, p);
    let segment = Segment::assignments(vec![(Slot::Der(2), sum), (Slot::Work(5), sum)]);
    let module = compile(&a, &[], &slot, &[segment], &JitOptions::default()).expect("compiles");
    let lengths = module.lengths(0).expect("one segment");
    assert_eq!((lengths.x, lengths.p, lengths.dx, lengths.work), (4, 2, 3, 6));
    let (x, p, mut dx, mut work) = (vec![1.0; 4], vec![2.0; 2], vec![0.0; 3], vec![0.0; 6]);
    module.call(0, 0.0, &x, &p, &mut dx, &mut work).expect("long enough");
    assert_eq!((dx[2], work[5]), (3.0, 3.0));
    let short = |slice: &'static str, needed: usize, got: usize| JitError::SliceTooShort {
        segment: 0,
        slice,
        needed,
        got,
    };
    assert_eq!(
        module.call(0, 0.0, &x[..3], &p, &mut dx, &mut work),
        Err(short("x", 4, 3))
    );
    assert_eq!(
        module.call(0, 0.0, &x, &p[..1], &mut dx, &mut work),
        Err(short("p", 2, 1))
    );
    assert_eq!(
        module.call(0, 0.0, &x, &p, &mut dx[..2], &mut work),
        Err(short("dx", 3, 2))
    );
    assert_eq!(module.call(0, 0.0, &x, &p, &mut dx, &mut []), Err(short("work", 6, 0)));
    assert_eq!(
        module.call(1, 0.0, &x, &p, &mut dx, &mut work),
        Err(JitError::NoSuchSegment(1))
    );
}

#[test]
fn unsupported_input_is_an_error_not_a_panic() {
    let mut a = ExprArena::new();
    let x = a.var(VarId(0));
    let unknown = a.var(VarId(99));
    let sum = a.binary(BinOp::Add, x, unknown);
    let one = a.real(1.0);
    let sample = a.builtin(Builtin::Sample, vec![one, one]);
    let text = a.add(Node::Str("text".into()));
    let call = a.call(Callee::User(FuncId(3)), vec![x]);
    let compile_one = |target: Slot, e: ExprId| {
        compile(
            &a,
            &[],
            &slot_of,
            &[Segment::assignments(vec![(target, e)])],
            &JitOptions::default(),
        )
        .map(|_| ())
    };
    assert_eq!(compile_one(Slot::Work(0), sum), Err(JitError::NoSlot(VarId(99))));
    assert_eq!(
        compile_one(Slot::State(0), x),
        Err(JitError::ReadOnlyTarget(Slot::State(0)))
    );
    assert_eq!(compile_one(Slot::Time, x), Err(JitError::ReadOnlyTarget(Slot::Time)));
    assert_eq!(
        compile_one(Slot::Work(0), call),
        Err(JitError::UnknownFunction(FuncId(3)))
    );
    for e in [sample, text] {
        let err = compile_one(Slot::Work(0), e).expect_err("not supported");
        assert!(
            matches!(err, JitError::Unsupported { node: Some(n), .. } if n == e),
            "{err}"
        );
    }
    let message = compile_one(Slot::Work(0), sample).expect_err("unsupported").to_string();
    assert!(
        message.contains("`sample` is not supported by the JIT yet"),
        "{message}"
    );
}

#[test]
fn compiled_modules_can_move_between_threads() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<CompiledModule>();
    // Shared between the instances of one program (`Arc<NativeCode>`), which stay `Send`.
    sync::<CompiledModule>();
    send::<eqm_sim::instance::Instance<'static>>();
}

// ---------------------------------------------------------------------------------------------
// Results: residuals and partial derivatives

/// Results are evaluated after the assignments (reading what they wrote) into `out`; `out`
/// is checked like the other slices.
#[test]
fn results_follow_the_assignments_and_land_in_out() {
    let mut a = ExprArena::new();
    let (x0, p0, w0) = (a.var(VarId(0)), a.var(VarId(2)), a.var(VarId(4)));
    let two = a.real(2.0);
    let doubled = a.binary(BinOp::Mul, x0, two);
    let sum = a.binary(BinOp::Add, w0, p0);
    let sine = a.builtin(Builtin::Sin, vec![x0]);
    let segment = Segment {
        assignments: vec![(Slot::Work(0), doubled)],
        statements: Vec::new(),
        results: vec![sum, sine],
    };
    let module = compile(&a, &[], &slot_of, &[segment], &JitOptions::default()).expect("compiles");
    assert_eq!(module.results(0), Some(2));
    let (x, p, mut work) = ([0.7, 0.0], [1.25, 0.0], [f64::NAN, 0.0]);
    let mut out = [f64::NAN; 2];
    module
        .run(0, 0.0, [&x, &p], [&mut [], &mut work], &mut out, 100)
        .expect("runs");
    assert_eq!(work[0], 1.4);
    assert_eq!(out[0].to_bits(), (1.4f64 + 1.25).to_bits());
    assert_eq!(out[1].to_bits(), 0.7f64.sin().to_bits());
    let short = module.run(0, 0.0, [&x, &p], [&mut [], &mut work], &mut out[..1], 100);
    assert!(
        matches!(
            short,
            Err(JitError::SliceTooShort {
                slice: "out",
                needed: 2,
                got: 1,
                ..
            })
        ),
        "{short:?}"
    );
}

/// The program of `text`, from the driver.
fn program(text: &str) -> eqm_compile::exec::ExecProgram {
    let mut session = Sources::new();
    session.add_embedded_stdlib();
    session.add_file("test.eqm", text);
    let compiled = session.compile(None, &eqm_flatten::Options::default());
    compiled
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)))
        .program
}

/// The evaluation arrays of a program, read by the evaluator through the program's slots.
struct Memory<'p> {
    program: &'p eqm_compile::exec::ExecProgram,
    x: Vec<f64>,
    p: Vec<f64>,
    work: Vec<f64>,
}

impl Env for Memory<'_> {
    fn var(&self, v: VarId) -> f64 {
        match self.program.slot_of(v) {
            Some(Slot::State(i)) => self.x[i as usize],
            Some(Slot::Param(i)) => self.p[i as usize],
            Some(Slot::Work(i)) => self.work[i as usize],
            _ => f64::NAN,
        }
    }
    fn time(&self) -> f64 {
        0.0
    }
}

/// A torn nonlinear loop compiled as the native back end compiles it: one segment from the
/// tearing values through the inner assignments to the residuals, one with every partial
/// derivative of its symbolic Jacobian. At random tearing values, the inner values, residuals
/// and partial derivatives are the evaluator's, bit for bit.
#[test]
fn loop_residuals_and_symbolic_jacobian_match_the_evaluator() {
    let program = program(
        "model L
           Real x(start = 0.5, fixed = true);
           Real a(start = 0.1);
           Real b(start = 0.2);
           Real c;
           parameter Real k = 0.3;
         equation
           a = k*sin(b) + x;
           c = a*a - x;
           b = 0.5*cos(c) - x*a*exp(b);
           der(x) = a - b + c;
         end L;",
    );
    let Some(Instr::Loop(block)) = program.rhs().iter().find(|i| matches!(i, Instr::Loop(_))) else {
        panic!("no loop in {:#?}", program.rhs())
    };
    let jacobian = block.jacobian.as_ref().expect("a symbolic Jacobian");
    let partials: Vec<ExprId> = jacobian
        .inner
        .iter()
        .chain(&jacobian.residuals)
        .flatten()
        .map(|(_, e)| *e)
        .collect();
    assert!(!partials.is_empty());
    let evaluate = Segment {
        assignments: block.inner.iter().map(|a| (a.target, a.value)).collect(),
        statements: Vec::new(),
        results: block.residuals.iter().map(|(r, _)| *r).collect(),
    };
    let jacobian_segment = Segment {
        results: partials.clone(),
        ..Segment::default()
    };
    let module = compile(
        program.exprs(),
        program.functions(),
        &|v| program.slot_of(v),
        &[evaluate, jacobian_segment],
        &JitOptions::default(),
    )
    .expect("compiles");
    let layout = program.layout();
    let mut memory = Memory {
        program: &program,
        x: vec![0.4; layout.states],
        p: program.p0().to_vec(),
        work: vec![0.0; layout.work],
    };
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0
    };
    for _ in 0..50 {
        for slot in &block.tearing {
            let Slot::Work(i) = slot else {
                panic!("tearing unknown in {slot:?}")
            };
            memory.work[*i as usize] = next();
        }
        let mut residuals = vec![f64::NAN; block.residuals.len()];
        let mut values = vec![f64::NAN; partials.len()];
        let mut dx = vec![0.0; layout.states];
        for (segment, out) in [(0, &mut residuals), (1, &mut values)] {
            module
                .run(
                    segment,
                    0.0,
                    [&memory.x, &memory.p],
                    [&mut dx, &mut memory.work],
                    out,
                    1000,
                )
                .expect("runs");
        }
        for a in &block.inner {
            let Slot::Work(i) = a.target else {
                panic!("inner unknown in {:?}", a.target)
            };
            let expected = evaluate_in(program.exprs(), a.value, &memory).expect("evaluates");
            assert!(same(memory.work[i as usize], expected));
        }
        let expected = |e: ExprId| evaluate_in(program.exprs(), e, &memory).expect("evaluates");
        for ((r, _), value) in block.residuals.iter().zip(&residuals) {
            assert!(same(*value, expected(*r)), "residual {value} vs {}", expected(*r));
        }
        for (e, value) in partials.iter().zip(&values) {
            assert!(same(*value, expected(*e)), "partial {value} vs {}", expected(*e));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Failures

/// A zero step, `terminate` and the iteration budget fail compiled code with the failure the
/// interpreter reports, naming the root that failed.
#[test]
fn zero_steps_terminate_and_endless_loops_fail() {
    let flat = flatten(
        r#"
function stepped
  input Real u;
  input Integer s;
  output Real y = 0;
algorithm
  for j in 1:s:3 loop
    y := u + y;
  end for;
  if u < 0 then
    terminate("u is negative");
  end if;
  while u > 10 loop
    y := y + 1;
  end while;
end stepped;
model M
  parameter Real u = 1;
  parameter Integer s = 1;
  Real y;
equation
  y = stepped(u, s);
end M;
"#,
    );
    let slot = |v: VarId| Some([Slot::Param(0), Slot::Param(1), Slot::Work(1)][v.0 as usize]);
    let value = flat.equations[0].rhs;
    let two = Segment::assignments(vec![(Slot::Work(0), value), (Slot::Work(1), value)]);
    let module =
        compile(&flat.exprs, &flat.functions, &slot, &[two], &JitOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let run = |u: f64, s: f64| {
        let mut work = [0.0; 2];
        module
            .run(0, 0.0, [&[], &[u, s]], [&mut [], &mut work], &mut [], 1000)
            .map(|()| work[0])
    };
    assert_eq!(run(2.0, 1.0), Ok(6.0));
    assert_eq!(run(2.0, -1.0), Ok(0.0));
    let failed = |r: Result<f64, JitError>| match r {
        Err(JitError::Failed { site, kind }) => (site, kind),
        other => panic!("{other:?}"),
    };
    assert!(matches!(failed(run(2.0, 0.0)), (0, FailureKind::ZeroStep { .. })));
    assert!(matches!(
        failed(run(-1.0, 1.0)),
        (0, FailureKind::Terminate { message, .. }) if message == "u is negative"
    ));
    assert!(matches!(
        failed(run(11.0, 1.0)),
        (0, FailureKind::IterationLimit { limit: 1000 })
    ));
}
