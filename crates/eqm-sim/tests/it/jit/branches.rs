//! Branches in compiled code, checked against what the evaluator computes and against time.
//!
//! The branch not taken must not be evaluated: a division by zero there leaves no NaN, and a
//! call that would run for hours behind a false condition returns at once.

use super::*;

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
            &flat.externals,
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
