//! Long segments, split into several functions or re-rolled into loops, checked bit for bit
//! against the evaluator and against the same segment compiled as straight-line code.
//!
//! Splitting by assignment count or instruction budget and re-rolling repeated stages must not
//! change a result, and a failure inside a loop must name the repetition that failed.

use super::*;

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
    let split = compile(&a, &[], &[], &slot, &segment, &straight).expect("compiles");
    assert_eq!(split.function_count(0), Some(5));
    let whole = compile(
        &a,
        &[],
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
    let rolled = compile(&a, &[], &[], &slot, &segment, &JitOptions::default()).expect("compiles");
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
        compile(arena, functions, &[], slot, segments, &options).unwrap_or_else(|e| panic!("{e}"))
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

/// One assignment whose expression needs more instructions than one function may hold is
/// refused with `Unsupported` (the interpreter then runs it) instead of being built: a sum of
/// 1.1 million terms.
#[test]
fn an_expression_too_large_for_one_function_is_refused() {
    let mut a = ExprArena::new();
    let x = a.var(VarId(0));
    let mut sum = x;
    for k in 0..1_100_000u32 {
        let term = a.real(f64::from(k % 7));
        let scaled = a.binary(BinOp::Mul, x, term);
        sum = a.binary(BinOp::Add, sum, scaled);
    }
    let slot = |v: VarId| Some(if v.0 == 0 { Slot::State(0) } else { Slot::Work(0) });
    let segment = [Segment::assignments(vec![(Slot::Work(0), sum)])];
    let options = JitOptions {
        verify: false,
        reroll: false,
        ..JitOptions::default()
    };
    match compile(&a, &[], &[], &slot, &segment, &options) {
        Err(JitError::Unsupported { what, .. }) => assert!(what.contains("instructions"), "{what}"),
        Err(other) => panic!("another error: {other:?}"),
        Ok(_) => panic!("compiled a function of more than a million instructions"),
    }
}
