//! User functions written in `.eqm` and compiled by the JIT, checked against the same
//! functions computed by hand and against the failures the interpreter reports.
//!
//! Loops over run-time ranges, `while` with `break`, `if`/`elseif`/`else` and early returns must
//! give the hand-computed values; failed assertions, zero steps, `terminate` and the iteration
//! budget must stop the code with the interpreter's failure, naming the root that failed.

use super::*;

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
            &flat.externals,
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
    let module = compile(
        &flat.exprs,
        &flat.functions,
        &flat.externals,
        &slot,
        &[segment],
        &JitOptions::default(),
    )
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
    let module = compile(
        &flat.exprs,
        &flat.functions,
        &flat.externals,
        &slot,
        &[two],
        &JitOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
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
