//! The runs of assignments that take outputs of one call (`eqm_ir::shared_call`), on statement
//! lists built by hand: a run is as long as the assignments share the call, and it ends before
//! the assignment that follows one writing a place the call reads, because evaluating the call
//! once would then differ from evaluating it before each assignment.

use eqm_diag::source::Span;
use eqm_ir::expr::{Callee, ExprArena, ExprId, FuncId, Node, VarId};
use eqm_ir::flat::{Place, Statement};
use eqm_ir::shared_call::shared_call_run;

fn assign(target: Place, value: ExprId) -> Statement {
    Statement::Assign {
        target,
        value,
        span: Span::default(),
    }
}

/// `f(u, k)` with three outputs, and its outputs as expressions.
fn three_outputs(arena: &mut ExprArena, reads: &[Place]) -> (ExprId, [ExprId; 3]) {
    let args: Vec<ExprId> = reads
        .iter()
        .map(|p| match p {
            Place::Var(v) => arena.var(*v),
            Place::Local(k) => arena.add(Node::Local(*k)),
        })
        .collect();
    let call = arena.call(Callee::User(FuncId(0)), args);
    let second = arena.add(Node::CallOutput(call, 1));
    let third = arena.add(Node::CallOutput(call, 2));
    (call, [call, second, third])
}

#[test]
fn assignments_of_one_call_form_a_run_that_stops_at_another_value() {
    let mut arena = ExprArena::new();
    let (u, a, b, c) = (VarId(0), VarId(1), VarId(2), VarId(3));
    let (call, out) = three_outputs(&mut arena, &[Place::Var(u)]);
    let other = arena.real(2.0);
    let statements = [
        assign(Place::Var(a), out[0]),
        assign(Place::Var(b), out[1]),
        assign(Place::Var(c), out[2]),
        assign(Place::Var(u), other),
    ];
    assert_eq!(shared_call_run(&arena, &statements), Some((call, 3)));
    // From the second statement on: two of the call's outputs.
    assert_eq!(shared_call_run(&arena, &statements[1..]), Some((call, 2)));
    // One assignment alone is no run, nor is an assignment of another value.
    assert_eq!(shared_call_run(&arena, &statements[2..]), None);
    assert_eq!(shared_call_run(&arena, &statements[3..]), None);
}

#[test]
fn a_run_ends_after_an_assignment_of_a_place_the_call_reads() {
    let mut arena = ExprArena::new();
    // The call reads the local 1, which the second assignment writes: the third must see the
    // call with the new value, so the run is the first two only.
    let (call, out) = three_outputs(&mut arena, &[Place::Local(0), Place::Local(1)]);
    let statements = [
        assign(Place::Local(2), out[0]),
        assign(Place::Local(1), out[1]),
        assign(Place::Local(3), out[2]),
    ];
    assert_eq!(shared_call_run(&arena, &statements), Some((call, 2)));
    // Writing what the call reads in the first assignment leaves no run at all.
    let statements = [assign(Place::Local(0), out[0]), assign(Place::Local(2), out[1])];
    assert_eq!(shared_call_run(&arena, &statements), None);
    // The last assignment of a run may write what the call reads: nothing after it reads the call.
    let statements = [assign(Place::Local(2), out[0]), assign(Place::Local(0), out[1])];
    assert_eq!(shared_call_run(&arena, &statements), Some((call, 2)));
}
