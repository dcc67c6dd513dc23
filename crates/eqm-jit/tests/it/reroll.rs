//! Re-rolled loops: runs of assignments that repeat with a fixed stride in every slot become one
//! loop whose body is one repetition, and compute what straight-line code computes.

use super::*;
use eqm_ir::expr::{BinOp, UnOp};

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

/// The assignments compiled twice: with loops over repeated stages (the default) and as
/// straight-line code.
fn rolled_and_straight(
    arena: &ExprArena,
    assignments: Assignments,
    slot: &dyn Fn(VarId) -> Option<Slot>,
) -> (CompiledModule, CompiledModule) {
    let segment = [Segment::assignments(assignments)];
    let straight = JitOptions {
        reroll: false,
        ..JitOptions::default()
    };
    let rolled = compile(arena, &[], &[], slot, &segment, &JitOptions::default()).expect("compiles");
    let unrolled = compile(arena, &[], &[], slot, &segment, &straight).expect("compiles");
    (rolled, unrolled)
}

#[test]
fn repeated_stages_become_a_loop_with_the_values_of_straight_code() {
    let n = 40;
    let (arena, assignments, slot) = lag_chain(n);
    let (rolled, unrolled) = rolled_and_straight(&arena, assignments, &slot);
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

/// The assignments of a chain of `n` masses as the compiler sorts them: every spring force
/// `f[i] := c*(-s[i-1] + s[i]) + d*(-v[i-1] + v[i])` (`f[0] := c*s[0] + d*v[0]`), then every
/// `der(s[i]) := v[i]`, then every `der(v[i]) := (-f[i] + f[i+1])/m` (`der(v[n-1]) :=
/// -f[n-1]/m`). Variables: `s[i]` is `i`, `v[i]` is `n + i` (the states), `c`, `d`, `m` are `2n`,
/// `2n + 1`, `2n + 2` (the parameters) and `f[i]` is `2n + 3 + i` (work).
fn mass_chain(n: u32) -> (ExprArena, Assignments, impl Fn(VarId) -> Option<Slot>) {
    let mut a = ExprArena::new();
    let [c, d, m] = [2 * n, 2 * n + 1, 2 * n + 2].map(|v| a.var(VarId(v)));
    let (s, v, f) = (
        |i: u32| VarId(i),
        move |i: u32| VarId(n + i),
        move |i: u32| VarId(2 * n + 3 + i),
    );
    let mut assignments = Vec::new();
    for i in 0..n {
        let (si, vi) = (a.var(s(i)), a.var(v(i)));
        let (ds, dv) = if i == 0 {
            (si, vi)
        } else {
            let (sp, vp) = (a.var(s(i - 1)), a.var(v(i - 1)));
            let (nsp, nvp) = (a.unary(UnOp::Neg, sp), a.unary(UnOp::Neg, vp));
            (a.binary(BinOp::Add, nsp, si), a.binary(BinOp::Add, nvp, vi))
        };
        let (spring, damper) = (a.binary(BinOp::Mul, c, ds), a.binary(BinOp::Mul, d, dv));
        assignments.push((Slot::Work(i), a.binary(BinOp::Add, spring, damper)));
    }
    for i in 0..n {
        assignments.push((Slot::Der(i), a.var(v(i))));
    }
    for i in 0..n {
        let fi = a.var(f(i));
        let neg = a.unary(UnOp::Neg, fi);
        let value = if i + 1 < n {
            let next = a.var(f(i + 1));
            let net = a.binary(BinOp::Add, neg, next);
            a.binary(BinOp::Div, net, m)
        } else {
            let quotient = a.binary(BinOp::Div, fi, m);
            a.unary(UnOp::Neg, quotient)
        };
        assignments.push((Slot::Der(n + i), value));
    }
    let slot = move |var: VarId| match var.0 {
        i if i < 2 * n => Some(Slot::State(i)),
        i if i < 2 * n + 3 => Some(Slot::Param(i - 2 * n)),
        i if i < 3 * n + 3 => Some(Slot::Work(i - 2 * n - 3)),
        _ => None,
    };
    (a, assignments, slot)
}

#[test]
fn consecutive_runs_become_one_loop_over_the_stages() {
    let n = 50;
    let (arena, assignments, slot) = mass_chain(n);
    let (rolled, unrolled) = rolled_and_straight(&arena, assignments, &slot);
    // The forces, the speeds and the accelerations, computed stage by stage in one loop.
    assert_eq!(rolled.loops(0), Some(1));
    let n = n as usize;
    let x: Vec<f64> = (0..2 * n).map(|i| ((i * 37) % 11) as f64 / 7.0 - 0.6).collect();
    let p = [100.0, 0.1, 3.0];
    let (s, v) = x.split_at(n);
    // By hand, as the assignments say.
    let mut f = vec![0.0; n];
    for i in 0..n {
        f[i] = if i == 0 {
            p[0] * s[0] + p[1] * v[0]
        } else {
            p[0] * (-s[i - 1] + s[i]) + p[1] * (-v[i - 1] + v[i])
        };
    }
    let mut dx = v.to_vec();
    for i in 0..n {
        dx.push(if i + 1 < n {
            (-f[i] + f[i + 1]) / p[2]
        } else {
            -(f[i] / p[2])
        });
    }
    for module in [&rolled, &unrolled] {
        let mut work = vec![f64::NAN; n];
        let mut derivatives = vec![f64::NAN; 2 * n];
        module.call(0, 0.0, &x, &p, &mut derivatives, &mut work).expect("runs");
        assert_eq!(
            work.iter().map(|w| w.to_bits()).collect::<Vec<_>>(),
            f.iter().map(|w| w.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!(
            derivatives.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
            dx.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
        );
    }
}

/// Two runs over `n` stages: `first` assigns `work[i] := 2*x[i]`, `second` then assigns
/// `dx[i] := work[i + shift]`. Variables: `x[i]` is `i`, `work[i]` is `n + i`.
fn two_runs(n: u32, shift: i64) -> (ExprArena, Assignments, impl Fn(VarId) -> Option<Slot>) {
    let mut a = ExprArena::new();
    let two = a.real(2.0);
    let mut assignments = Vec::new();
    for i in 0..n {
        let x = a.var(VarId(i));
        assignments.push((Slot::Work(i), a.binary(BinOp::Mul, two, x)));
    }
    let range = if shift > 0 {
        0..n - shift as u32
    } else {
        (-shift) as u32..n
    };
    for i in range {
        let w = a.var(VarId(n + (i64::from(i) + shift) as u32));
        assignments.push((Slot::Der(i), w));
    }
    let slot = move |v: VarId| match v.0 {
        i if i < n => Some(Slot::State(i)),
        i if i < 2 * n => Some(Slot::Work(i - n)),
        _ => None,
    };
    (a, assignments, slot)
}

#[test]
fn a_run_reading_a_later_stage_of_the_run_before_keeps_its_own_loop() {
    // `dx[i] := work[i + 1]` needs stage i + 1 of the first run: stage by stage it would read
    // the slot before it is written, so the two loops stay apart.
    let n = 30;
    let (arena, assignments, slot) = two_runs(n, 1);
    let module = compile(
        &arena,
        &[],
        &[],
        &slot,
        &[Segment::assignments(assignments)],
        &JitOptions::default(),
    )
    .expect("compiles");
    assert_eq!(module.loops(0), Some(2));
    let x: Vec<f64> = (0..n).map(|i| f64::from(i) + 0.5).collect();
    let mut work = vec![f64::NAN; n as usize];
    let mut dx = vec![f64::NAN; n as usize];
    module.call(0, 0.0, &x, &[], &mut dx, &mut work).expect("runs");
    for i in 0..n as usize - 1 {
        assert_eq!(dx[i], 2.0 * x[i + 1]);
    }
    assert!(dx[n as usize - 1].is_nan(), "not assigned");
    // `dx[i] := work[i - 1]` needs only earlier stages: one loop.
    let (arena, assignments, slot) = two_runs(n, -1);
    let module = compile(
        &arena,
        &[],
        &[],
        &slot,
        &[Segment::assignments(assignments)],
        &JitOptions::default(),
    )
    .expect("compiles");
    assert_eq!(module.loops(0), Some(1));
    let mut dx = vec![f64::NAN; n as usize];
    module.call(0, 0.0, &x, &[], &mut dx, &mut work).expect("runs");
    for i in 1..n as usize {
        assert_eq!(dx[i], 2.0 * x[i - 1]);
    }
}
