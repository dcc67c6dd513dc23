//! Re-rolled loops: runs of assignments that repeat with a fixed stride in every slot become one
//! loop whose body is one repetition, and compute what straight-line code computes.

use super::*;
use eqm_ir::expr::BinOp;

/// The assignments of a segment.
type Assignments = Vec<(Slot, ExprId)>;

/// Stages of a chain of first-order lags: stage `i` computes `w[i] := k*(x[i-1] - x[i])` (with
/// `x[-1]` the input `u`) and `dx[i] := w[i] - d*x[i]`. Variables: `x[i]` is `i`, `k`, `d` and
/// `u` are `n`, `n+1`, `n+2`, and `w[i]` is `n+3+i`.
fn lag_chain(n: u32) -> (ExprArena, Assignments, impl Fn(VarId) -> Option<Slot>) {
    let mut a = ExprArena::new();
    let [k, d, u] = [n, n + 1, n + 2].map(|v| a.var(VarId(v)));
    let mut assignments = Vec::new();
    for i in 0..n {
        let x = a.var(VarId(i));
        let upstream = if i == 0 { u } else { a.var(VarId(i - 1)) };
        let gap = a.binary(BinOp::Sub, upstream, x);
        let flow = a.binary(BinOp::Mul, k, gap);
        assignments.push((Slot::Work(i), flow));
        let w = a.var(VarId(n + 3 + i));
        let loss = a.binary(BinOp::Mul, d, x);
        let net = a.binary(BinOp::Sub, w, loss);
        assignments.push((Slot::Der(i), net));
    }
    let slot = move |v: VarId| match v.0 {
        i if i < n => Some(Slot::State(i)),
        i if i < n + 3 => Some(Slot::Param(i - n)),
        i if i < 2 * n + 3 => Some(Slot::Work(i - n - 3)),
        _ => None,
    };
    (a, assignments, slot)
}

#[test]
fn repeated_stages_become_a_loop_with_the_values_of_straight_code() {
    let n = 40;
    let (arena, assignments, slot) = lag_chain(n);
    let segment = [Segment::assignments(assignments)];
    let straight = JitOptions {
        reroll: false,
        ..JitOptions::default()
    };
    let rolled = compile(&arena, &[], &[], &slot, &segment, &JitOptions::default()).expect("compiles");
    let unrolled = compile(&arena, &[], &[], &slot, &segment, &straight).expect("compiles");
    assert!(rolled.loops(0).is_some_and(|l| l >= 1), "loops: {:?}", rolled.loops(0));
    assert_eq!(unrolled.loops(0), Some(0));
    let x: Vec<f64> = (0..n).map(|i| 1.0 + 0.1 * f64::from(i)).collect();
    let p = [2.0, 0.5, 3.0];
    // By hand, stage by stage.
    let mut w = vec![0.0; n as usize];
    let mut dx = vec![0.0; n as usize];
    for i in 0..n as usize {
        let upstream = if i == 0 { p[2] } else { x[i - 1] };
        w[i] = p[0] * (upstream - x[i]);
        dx[i] = w[i] - p[1] * x[i];
    }
    for module in [&rolled, &unrolled] {
        let mut work = vec![f64::NAN; n as usize];
        let mut derivatives = vec![f64::NAN; n as usize];
        module.call(0, 0.0, &x, &p, &mut derivatives, &mut work).expect("runs");
        assert_eq!(work, w);
        assert_eq!(derivatives, dx);
    }
}

#[test]
fn a_loop_body_reads_the_slots_its_own_repetition_wrote() {
    // Each stage reads the work slot the previous stage wrote: the loop must keep the order.
    let n = 30u32;
    let mut a = ExprArena::new();
    let mut assignments = Vec::new();
    let half = a.real(0.5);
    for i in 0..n {
        let x = a.var(VarId(i));
        let value = if i == 0 {
            x
        } else {
            let previous = a.var(VarId(n + i - 1));
            let scaled = a.binary(BinOp::Mul, half, previous);
            a.binary(BinOp::Add, scaled, x)
        };
        assignments.push((Slot::Work(i), value));
    }
    let slot = move |v: VarId| match v.0 {
        i if i < n => Some(Slot::State(i)),
        i if i < 2 * n => Some(Slot::Work(i - n)),
        _ => None,
    };
    let module = compile(
        &a,
        &[],
        &[],
        &slot,
        &[Segment::assignments(assignments)],
        &JitOptions::default(),
    )
    .expect("compiles");
    let x: Vec<f64> = (0..n).map(f64::from).collect();
    let mut work = vec![f64::NAN; n as usize];
    module.call(0, 0.0, &x, &[], &mut [], &mut work).expect("runs");
    let mut expected = vec![0.0; n as usize];
    for i in 0..n as usize {
        expected[i] = if i == 0 { x[0] } else { 0.5 * expected[i - 1] + x[i] };
    }
    assert_eq!(work, expected);
}
