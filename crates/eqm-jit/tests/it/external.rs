//! Calls of external C functions: native code calls the linked wrapper at its address with its
//! arguments in one array, and `call_external` (the interpreter's call) passes the same array.
//! The wrappers here are Rust functions with the C signature every wrapper has, so the test
//! needs no C compiler; compiling C is `eqm-cc`'s and the API's tests.

use super::slot_of;
use eqm_ir::expr::{Callee, ExprArena, Node, VarId};
use eqm_ir::external::{ExternalFunction, LinkedSymbol};
use eqm_ir::slot::Slot;
use eqm_jit::{JitOptions, Segment, call_external, compile};
use std::sync::Arc;

/// `x*x + 1` of its one argument.
#[allow(unsafe_code)]
extern "C" fn square_plus_one(a: *mut f64) -> f64 {
    // SAFETY: every caller passes an array of at least the one double the symbol's arity says.
    let x = unsafe { *a };
    x * x + 1.0
}

/// The sum of its three arguments, in order.
#[allow(unsafe_code)]
extern "C" fn sum_of_three(a: *mut f64) -> f64 {
    // SAFETY: every caller passes an array of at least the three doubles the symbol's arity says.
    let v = unsafe { std::slice::from_raw_parts(a, 3) };
    v[0] + v[1] + v[2]
}

fn external(name: &str, address: usize, arity: usize) -> ExternalFunction {
    ExternalFunction {
        name: name.to_string(),
        c_function: name.to_string(),
        symbol: LinkedSymbol::new(address, arity, Arc::new(())),
        destructor: None,
    }
}

#[test]
fn native_code_calls_an_external_function_at_its_address() {
    let mut arena = ExprArena::new();
    let x0 = arena.add(Node::Var(VarId(0)));
    let x1 = arena.add(Node::Var(VarId(1)));
    let p0 = arena.add(Node::Var(VarId(2)));
    let square = arena.call(Callee::External(0), vec![x0]);
    let sum = arena.call(Callee::External(1), vec![x0, x1, p0]);
    let externals = [
        external("square_plus_one", square_plus_one as *const () as usize, 1),
        external("sum_of_three", sum_of_three as *const () as usize, 3),
    ];
    let assignments = vec![(Slot::Work(0), square), (Slot::Work(1), sum)];
    let module = compile(
        &arena,
        &[],
        &externals,
        &slot_of,
        &[Segment::assignments(assignments)],
        &JitOptions::default(),
    )
    .unwrap_or_else(|e| panic!("compiles: {e}"));
    let (x, p) = ([3.0, -0.25], [10.0, 0.0]);
    let mut work = [f64::NAN; 2];
    module.call(0, 0.0, &x, &p, &mut [], &mut work).expect("runs");
    assert_eq!(work, [10.0, 12.75]);
    // The interpreter's call gives the same bits.
    assert_eq!(call_external(&externals[0].symbol, &[3.0]), Some(work[0]));
    assert_eq!(call_external(&externals[1].symbol, &[3.0, -0.25, 10.0]), Some(work[1]));
    // A call with the wrong number of arguments is refused rather than made.
    assert_eq!(call_external(&externals[1].symbol, &[3.0]), None);
    // Without the externals, the call is refused rather than made.
    let segment = Segment::assignments(vec![(Slot::Work(0), square)]);
    assert!(compile(&arena, &[], &[], &slot_of, &[segment], &JitOptions::default()).is_err());
}
