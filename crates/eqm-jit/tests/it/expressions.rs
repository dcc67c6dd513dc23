//! Expressions: arithmetic, comparisons and logic as 0.0/1.0, branches that do not evaluate
//! the branch not taken, built-in functions against Rust's `f64` functions, time, and writes of
//! derivative slots.

use super::*;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, UnOp};

/// The states `x0, x1` and parameters `p0, p1` as expressions.
fn leaves(a: &mut ExprArena) -> [ExprId; 4] {
    [0, 1, 2, 3].map(|k| a.var(VarId(k)))
}

#[test]
fn arithmetic_follows_ieee_operations() {
    let mut a = ExprArena::new();
    let [x0, x1, p0, p1] = leaves(&mut a);
    let sum = a.binary(BinOp::Add, x0, x1);
    let product = a.binary(BinOp::Mul, sum, p0);
    let quotient = a.binary(BinOp::Div, product, p1);
    let difference = a.binary(BinOp::Sub, quotient, x0);
    let negated = a.unary(UnOp::Neg, difference);
    let three = a.real(3.0);
    let cube = a.binary(BinOp::Pow, x1, three);
    let exprs = [sum, product, quotient, difference, negated, cube];
    let (x, p) = ([1.5, -0.25], [4.0, 3.0]);
    let got = values(&a, &exprs, 0.0, x, p);
    let q = (x[0] + x[1]) * p[0] / p[1];
    assert_eq!(
        got,
        [x[0] + x[1], (x[0] + x[1]) * p[0], q, q - x[0], -(q - x[0]), -0.015625]
    );
}

#[test]
fn division_by_zero_gives_the_ieee_values() {
    let mut a = ExprArena::new();
    let [x0, x1, _, p1] = leaves(&mut a);
    let by_zero = a.binary(BinOp::Div, x0, p1);
    let zero_by_zero = a.binary(BinOp::Div, p1, p1);
    let negative = a.binary(BinOp::Div, x1, p1);
    let got = values(&a, &[by_zero, zero_by_zero, negative], 0.0, [1.0, -1.0], [0.0, 0.0]);
    assert_eq!(got[0], f64::INFINITY);
    assert!(got[1].is_nan());
    assert_eq!(got[2], f64::NEG_INFINITY);
}

#[test]
fn comparisons_and_logic_are_zero_or_one() {
    let mut a = ExprArena::new();
    let [x0, x1, _, _] = leaves(&mut a);
    let ops = [BinOp::Lt, BinOp::Le, BinOp::Gt, BinOp::Ge, BinOp::Eq, BinOp::Ne];
    let mut exprs: Vec<ExprId> = ops.iter().map(|&op| a.binary(op, x0, x1)).collect();
    let less = exprs[0];
    let greater = exprs[2];
    exprs.push(a.binary(BinOp::And, less, greater));
    exprs.push(a.binary(BinOp::Or, less, greater));
    exprs.push(a.unary(UnOp::Not, less));
    let truth = |b: bool| if b { 1.0 } else { 0.0 };
    for (u, v) in [(1.0, 2.0), (2.0, 2.0), (3.0, 2.0)] {
        let got = values(&a, &exprs, 0.0, [u, v], [0.0, 0.0]);
        let expected = [
            u < v,
            u <= v,
            u > v,
            u >= v,
            u == v,
            u != v,
            u < v && u > v,
            u != v,
            u >= v,
        ];
        assert_eq!(got, expected.map(truth), "x0 = {u}, x1 = {v}");
    }
}

#[test]
fn only_the_branch_taken_is_evaluated() {
    let mut a = ExprArena::new();
    let [x0, x1, p0, _] = leaves(&mut a);
    let zero = a.real(0.0);
    let positive = a.binary(BinOp::Gt, x0, zero);
    // `log` of a negative number would be NaN and `1/0` infinite: neither may reach the result
    // when its branch is not taken.
    let log = a.builtin(Builtin::Log, vec![x0]);
    let one = a.real(1.0);
    let inverse = a.binary(BinOp::Div, one, p0);
    let chosen = a.add(eqm_ir::expr::Node::If(positive, log, x1));
    let guarded = a.add(eqm_ir::expr::Node::If(positive, inverse, x0));
    assert_eq!(
        values(&a, &[chosen, guarded], 0.0, [-2.0, 7.0], [0.0, 0.0]),
        [7.0, -2.0]
    );
    assert_eq!(values(&a, &[chosen, guarded], 0.0, [1.0, 7.0], [4.0, 0.0]), [0.0, 0.25]);
}

/// A real function of one argument.
type RealFunction = fn(f64) -> f64;

#[test]
fn built_in_functions_are_rusts_f64_functions() {
    let unary: [(Builtin, RealFunction); 16] = [
        (Builtin::Sin, f64::sin),
        (Builtin::Cos, f64::cos),
        (Builtin::Tan, f64::tan),
        (Builtin::Asin, f64::asin),
        (Builtin::Acos, f64::acos),
        (Builtin::Atan, f64::atan),
        (Builtin::Sinh, f64::sinh),
        (Builtin::Cosh, f64::cosh),
        (Builtin::Tanh, f64::tanh),
        (Builtin::Erf, libm::erf),
        (Builtin::Erfc, libm::erfc),
        (Builtin::Exp, f64::exp),
        (Builtin::Log, f64::ln),
        (Builtin::Log10, f64::log10),
        (Builtin::Sqrt, f64::sqrt),
        (Builtin::Abs, f64::abs),
    ];
    let mut a = ExprArena::new();
    let [x0, x1, _, _] = leaves(&mut a);
    let mut exprs: Vec<ExprId> = unary.iter().map(|&(b, _)| a.builtin(b, vec![x0])).collect();
    exprs.push(a.builtin(Builtin::Atan2, vec![x0, x1]));
    exprs.push(a.builtin(Builtin::Min, vec![x0, x1]));
    exprs.push(a.builtin(Builtin::Max, vec![x0, x1]));
    for (u, v) in [(0.375, -1.25), (0.9, 2.0), (0.001, 0.5)] {
        let got = values(&a, &exprs, 0.0, [u, v], [0.0, 0.0]);
        let mut expected: Vec<f64> = unary.iter().map(|&(_, f)| f(u)).collect();
        expected.extend([u.atan2(v), u.min(v), u.max(v)]);
        for (k, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(g.to_bits(), e.to_bits(), "function {k} at {u}, {v}: {g} against {e}");
        }
    }
}

#[test]
fn rounding_and_remainders_follow_their_definitions() {
    let mut a = ExprArena::new();
    let [x0, x1, _, _] = leaves(&mut a);
    let exprs = [
        a.builtin(Builtin::Floor, vec![x0]),
        a.builtin(Builtin::Ceil, vec![x0]),
        a.builtin(Builtin::Sign, vec![x0]),
        a.builtin(Builtin::Mod, vec![x0, x1]),
        a.builtin(Builtin::Rem, vec![x0, x1]),
        a.builtin(Builtin::Div, vec![x0, x1]),
    ];
    // Modelica: mod(x, y) = x - floor(x/y)*y, rem(x, y) = x - div(x, y)*y, div truncates.
    for (u, v) in [(7.5, 2.0), (-7.5, 2.0), (7.5, -2.0), (-3.0, 3.0)] {
        let got = values(&a, &exprs, 0.0, [u, v], [0.0, 0.0]);
        let div = (u / v).trunc();
        let expected = [
            u.floor(),
            u.ceil(),
            u.signum(),
            u - (u / v).floor() * v,
            u - div * v,
            div,
        ];
        assert_eq!(got, expected, "{u}, {v}");
    }
}

#[test]
fn time_is_read_and_derivatives_are_written() {
    let mut a = ExprArena::new();
    let [x0, x1, p0, _] = leaves(&mut a);
    let t = a.add(eqm_ir::expr::Node::Time);
    let decay = a.binary(BinOp::Mul, p0, x0);
    let decay = a.unary(UnOp::Neg, decay);
    let forced = a.binary(BinOp::Add, x1, t);
    let segment = Segment::assignments(vec![(Slot::Der(0), decay), (Slot::Der(1), forced)]);
    let module = compile(&a, &[], &[], &slot_of, &[segment], &JitOptions::default()).expect("compiles");
    let mut dx = [f64::NAN; 2];
    module
        .call(0, 2.5, &[3.0, 0.5], &[0.5, 0.0], &mut dx, &mut [])
        .expect("runs");
    assert_eq!(dx, [-1.5, 3.0]);
}

#[test]
fn a_slot_the_code_may_not_write_is_refused() {
    let mut a = ExprArena::new();
    let [x0, _, _, _] = leaves(&mut a);
    let segment = Segment::assignments(vec![(Slot::State(1), x0)]);
    let err = compile(&a, &[], &[], &slot_of, &[segment], &JitOptions::default()).err();
    assert_eq!(err, Some(eqm_jit::JitError::ReadOnlyTarget(Slot::State(1))));
}

#[test]
fn sums_with_a_negated_operand_are_the_sums_bit_for_bit() {
    // `-a + b` is emitted as `b - a`: the same value, signed zeros and infinities included.
    let mut a = ExprArena::new();
    let [x0, x1, p0, _] = leaves(&mut a);
    let (n0, n1) = (a.unary(UnOp::Neg, x0), a.unary(UnOp::Neg, x1));
    let left = a.binary(BinOp::Add, n0, x1);
    let right = a.binary(BinOp::Add, x0, n1);
    let both = a.binary(BinOp::Add, n0, n1);
    let twice = a.binary(BinOp::Add, n0, n0);
    // The negation shared with a product, which computes it anyway.
    let scaled = a.binary(BinOp::Mul, n1, p0);
    let shared = a.binary(BinOp::Add, scaled, n1);
    let exprs = [left, right, both, twice, scaled, shared];
    let cases = [
        (0.0, 0.0),
        (-0.0, 0.0),
        (0.0, -0.0),
        (-0.0, -0.0),
        (1.5, 1.5),
        (f64::MAX, -f64::MAX),
        (f64::INFINITY, 2.0),
        (0.1, 0.7),
    ];
    for (u, v) in cases {
        let got = values(&a, &exprs, 0.0, [u, v], [3.0, 0.0]);
        let want = [-u + v, u + -v, -u + -v, -u + -u, -v * 3.0, -v * 3.0 + -v];
        let bits = |values: &[f64]| values.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&want), "x = ({u}, {v})");
    }
}

#[test]
fn a_dense_block_reads_its_inputs_again_where_they_are_far_apart() {
    // Each of 40 rows sums all 40 inputs with its own coefficients (far more than the
    // distance over which a loaded value is kept in a register), and a last assignment reads
    // the first row's result, written thousands of instructions before: values loaded again
    // from the slots are the values the registers held.
    const N: u32 = 40;
    let slot = |v: VarId| (v.0 < 2 * N).then_some(Slot::Work(v.0));
    let mut a = ExprArena::new();
    let inputs: Vec<ExprId> = (0..N).map(|j| a.var(VarId(j))).collect();
    let coefficient = |i: u32, j: u32| if i == j { -2.0 } else { 1.0 / f64::from(i + j + 2) };
    let mut assignments = Vec::new();
    for i in 0..N {
        let mut sum = None;
        for j in 0..N {
            let c = a.real(coefficient(i, j));
            let term = a.binary(BinOp::Mul, c, inputs[j as usize]);
            sum = Some(sum.map_or(term, |s| a.binary(BinOp::Add, s, term)));
        }
        assignments.push((Slot::Work(N + i), sum.expect("a row has terms")));
    }
    let first_row = a.var(VarId(N));
    let last = a.binary(BinOp::Mul, first_row, inputs[0]);
    assignments.push((Slot::Work(2 * N), last));
    let segment = Segment::assignments(assignments);
    let module = compile(&a, &[], &[], &slot, &[segment], &JitOptions::default()).expect("compiles");
    let mut work = vec![f64::NAN; 2 * N as usize + 1];
    for (j, w) in work.iter_mut().enumerate().take(N as usize) {
        *w = 0.5 + j as f64 / 7.0;
    }
    module.call(0, 0.0, &[], &[], &mut [], &mut work).expect("runs");
    for i in 0..N {
        let expected = (0..N).fold(None, |s: Option<f64>, j| {
            let term = coefficient(i, j) * work[j as usize];
            Some(s.map_or(term, |s| s + term))
        });
        assert_eq!(work[(N + i) as usize], expected.expect("a row has terms"), "row {i}");
    }
    assert_eq!(work[2 * N as usize], work[N as usize] * work[0]);
}
