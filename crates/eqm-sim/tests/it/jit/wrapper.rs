//! The safe wrapper around compiled code, checked against the errors it must return.
//!
//! Slices too short for a segment, unknown segments, variables without a slot, read-only
//! targets, unknown functions and unsupported nodes are errors rather than panics, and compiled
//! modules can be sent and shared between threads.

use super::*;

// ---------------------------------------------------------------------------------------------
// The safe wrapper and errors

#[test]
fn short_slices_are_errors() {
    let mut a = ExprArena::new();
    let slot = |v: VarId| Some([Slot::State(3), Slot::Param(1)][v.0 as usize]);
    let (x, p) = (a.var(VarId(0)), a.var(VarId(1)));
    let sum = a.binary(BinOp::Add, x, p);
    let segment = Segment::assignments(vec![(Slot::Der(2), sum), (Slot::Work(5), sum)]);
    let module = compile(&a, &[], &[], &slot, &[segment], &JitOptions::default()).expect("compiles");
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
