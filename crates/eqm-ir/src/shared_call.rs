//! The assignments of one multi-output call: `(a, b, c) := f(x)` flattens to one assignment per
//! scalar output, each reading an output of the same call node, and a back end that computed
//! each value on its own would run `f` once per output element (a spectrum of a hundred
//! amplitudes and phases: two hundred runs of the same transform).
//!
//! Input: a list of flat statements and the arena of their expressions. Output: the length of
//! the run of assignments at its start that take outputs of one call whose arguments read
//! none of the places the run assigns before its end, so a back end may evaluate the call
//! once, before the run, and assign each output from it: the values are exactly those of
//! evaluating the call again before each assignment. It deliberately compiles nothing, and
//! it does not merge calls that are merely equal in separate statements (an argument may have
//! changed between them).

use crate::expr::{ExprArena, ExprId, FxHashSet, Node, VarId};
use crate::flat::{Place, Statement};

/// The call whose output `value` is: the call itself (its first output) or a `CallOutput` of
/// it.
fn call_of(arena: &ExprArena, value: ExprId) -> Option<ExprId> {
    match arena.get(value) {
        Node::Call(..) => Some(value),
        Node::CallOutput(call, _) => Some(*call),
        _ => None,
    }
}

/// A piece of a list of statements as a back end runs it: one statement, or the run of
/// assignments that take the outputs of one call (run once).
pub enum Segment<'s> {
    One(&'s Statement),
    SharedCall(ExprId, &'s [Statement]),
}

/// `statements` cut into [`Segment`]s, in order: what both back ends compile, so that they cut
/// alike.
pub fn segments<'s>(arena: &ExprArena, statements: &'s [Statement]) -> Vec<Segment<'s>> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < statements.len() {
        match shared_call_run(arena, &statements[k..]) {
            Some((call, n)) => {
                out.push(Segment::SharedCall(call, &statements[k..k + n]));
                k += n;
            }
            None => {
                out.push(Segment::One(&statements[k]));
                k += 1;
            }
        }
    }
    out
}

/// The call shared by the leading assignments of `statements` and how many of them read it
/// (at least two), when the call reads none of the places those assignments write before the
/// last of them; `None` otherwise. The walk over the call's expression happens only for a run
/// of two or more, once, so a back end calling this at each position stays linear.
pub fn shared_call_run(arena: &ExprArena, statements: &[Statement]) -> Option<(ExprId, usize)> {
    let call_at = |k: usize| match statements.get(k) {
        Some(Statement::Assign { value, .. }) => call_of(arena, *value),
        _ => None,
    };
    let call = call_at(0)?;
    let mut n = 1;
    while call_at(n) == Some(call) {
        n += 1;
    }
    if n < 2 {
        return None;
    }
    let reads = leaves_read(arena, call);
    // A place assigned before the last statement of the run must not be an input of the call:
    // the separate evaluations would see its new value.
    let n = statements[..n - 1]
        .iter()
        .position(|s| match s {
            Statement::Assign { target, .. } => reads.has(target),
            _ => true,
        })
        .map_or(n, |first_read| first_read + 1);
    (n >= 2).then_some((call, n))
}

/// The variables and the function locals an expression reads.
#[derive(Default)]
struct Reads {
    vars: FxHashSet<VarId>,
    locals: FxHashSet<u32>,
}

impl Reads {
    fn has(&self, place: &Place) -> bool {
        match place {
            Place::Var(v) => self.vars.contains(v),
            Place::Local(k) => self.locals.contains(k),
        }
    }
}

/// The variables and function locals an expression reads, each once.
fn leaves_read(arena: &ExprArena, root: ExprId) -> Reads {
    let mut seen: FxHashSet<ExprId> = FxHashSet::default();
    let mut reads = Reads::default();
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        if !seen.insert(e) {
            continue;
        }
        match arena.get(e) {
            Node::Var(v) => {
                reads.vars.insert(*v);
            }
            Node::Local(k) => {
                reads.locals.insert(*k);
            }
            _ => stack.extend(arena.children(e)),
        }
    }
    reads
}
