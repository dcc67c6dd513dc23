//! The symbolic core: evaluation, simplification, differentiation and solving of arena
//! expressions.
//!
//! Input: an [`ExprArena`] and expression ids built by the flattener or by later stages. Output:
//! numbers ([`eval`]), new canonical expression ids ([`simplify()`], [`diff`], with the
//! derivatives of calls of user functions in [`calls`]) and explicit forms of equations
//! ([`solve`]). Every pass walks the arena in increasing id order or with an explicit
//! stack, never by recursion over expression depth, because flattened models contain sums of
//! 10^5 terms. This module deliberately knows nothing of equations, variables' kinds or
//! matching: callers say which variables vary in time or are unknown.
//!
//! The helpers in this file are the traversals shared by the passes.

pub mod calls;
pub mod diff;
pub mod eval;
pub mod gradient;
pub mod simplify;
pub mod solve;

pub use calls::{FunctionCalls, partial_derivative_of_body};
pub use diff::{Again, CallDerivative, CallSite, DiffError, diff_time, diff_time_through, diff_var, diff_var_through};
pub use eval::{Env, EvalError, FnEnv, evaluate, evaluate_in};
pub use gradient::gradient;
pub use simplify::{LinearForm, Simplifier, linear_form, simplify};
pub use solve::{
    Condition, Solution, solve_for, solve_for_unsimplified, solve_for_var, solve_for_with, unsolvable_leaves,
};

use crate::builtins::Builtin;
use crate::expr::{Callee, ExprArena, ExprId, Node};

pub use crate::expr::FxHashSet;

/// True for `der(...)` and `pre(...)` calls: these name a value of their own (the derivative,
/// the left limit) and are treated as independent symbols by differentiation and solving.
pub fn is_symbol_operator(node: &Node) -> bool {
    matches!(node, Node::Call(Callee::Builtin(Builtin::Der | Builtin::Pre), _))
}

/// The nodes reachable from `root`, in increasing id order, without descending below nodes for
/// which `stop` is true (those are still listed). Ascending order means every node comes after
/// its children, so a pass can fill a memo table in one loop.
pub fn reachable(arena: &ExprArena, root: ExprId, stop: &dyn Fn(ExprId) -> bool) -> Vec<ExprId> {
    let mut seen = Seen::default();
    let mut order = Vec::new();
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        if !seen.insert(e) {
            continue;
        }
        order.push(e);
        if !stop(e) {
            stack.extend(arena.children(e).filter(|c| !seen.contains(*c)));
        }
    }
    order.sort_unstable();
    order
}

/// A set of visited nodes for the traversals. Most expressions of a model are a handful of
/// nodes, for which a short list is much cheaper than a hash set (no hashing, one small
/// allocation); past [`Seen::SMALL`] nodes it switches to a hash set so large expressions stay
/// linear.
#[derive(Default)]
struct Seen {
    small: Vec<ExprId>,
    large: Option<FxHashSet<ExprId>>,
}

impl Seen {
    const SMALL: usize = 32;

    fn contains(&self, e: ExprId) -> bool {
        match &self.large {
            Some(set) => set.contains(&e),
            None => self.small.contains(&e),
        }
    }

    /// Adds `e`; false when it was already there.
    fn insert(&mut self, e: ExprId) -> bool {
        if let Some(set) = &mut self.large {
            return set.insert(e);
        }
        if self.small.contains(&e) {
            return false;
        }
        if self.small.len() < Self::SMALL {
            self.small.push(e);
        } else {
            let mut set: FxHashSet<ExprId> = self.small.drain(..).collect();
            set.insert(e);
            self.large = Some(set);
        }
        true
    }
}

/// Whether `leaf` occurs in `root`. `der(...)` and `pre(...)` calls are opaque symbols: `der(x)`
/// contains `x` only when `leaf` is `der(x)` itself, because to differentiation and solving
/// `der(x)` is a separate unknown.
pub fn contains_leaf(arena: &ExprArena, root: ExprId, leaf: ExprId) -> bool {
    if root < leaf {
        // Children have smaller ids than parents, so nothing below `root` can be `leaf`.
        return false;
    }
    let mut seen = Seen::default();
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        if e == leaf {
            return true;
        }
        if e < leaf || !seen.insert(e) || is_symbol_operator(arena.get(e)) {
            continue;
        }
        stack.extend(arena.children(e));
    }
    false
}

/// Node `e` with its children replaced according to `new` (children not in it stay), added to
/// the arena (hash-consed). Not simplified.
pub fn rebuild(arena: &mut ExprArena, e: ExprId, new: &crate::expr::FxHashMap<ExprId, ExprId>) -> ExprId {
    let map = |c: &ExprId| new.get(c).copied().unwrap_or(*c);
    let rebuilt = match arena.get(e).clone() {
        Node::Unary(op, a) => Node::Unary(op, map(&a)),
        Node::Binary(op, a, b) => Node::Binary(op, map(&a), map(&b)),
        Node::If(c, a, b) => Node::If(map(&c), map(&a), map(&b)),
        Node::Call(callee, args) => Node::Call(callee, args.iter().map(map).collect()),
        Node::CallOutput(a, k) => Node::CallOutput(map(&a), k),
        leaf => leaf,
    };
    arena.add(rebuilt)
}

/// Rebuilds `root` with some nodes replaced. `replace` is asked about each node before its
/// children; a `Some` answer is used as is and the node's children are not visited, so a caller
/// can also keep a node opaque by answering with the node itself. The result is not simplified.
pub fn substitute(
    arena: &mut ExprArena,
    root: ExprId,
    replace: &dyn Fn(&ExprArena, ExprId) -> Option<ExprId>,
) -> ExprId {
    let mut new: crate::expr::FxHashMap<ExprId, ExprId> = Default::default();
    let order = {
        let arena_ref: &ExprArena = arena;
        let mut fixed = Vec::new();
        let order = reachable(arena_ref, root, &|e| {
            // `reachable` cannot hand results out, so the answer is computed twice; `replace` is
            // cheap for every caller in this crate (a comparison).
            replace(arena_ref, e).is_some()
        });
        for &e in &order {
            if let Some(r) = replace(arena_ref, e) {
                fixed.push((e, r));
            }
        }
        new.extend(fixed);
        order
    };
    for e in order {
        if new.contains_key(&e) {
            continue;
        }
        // A node none of whose children changed stays as it is: looking it up again in the
        // hash-consing table would find itself, at the price of a hash probe per node.
        if arena.children(e).all(|c| new.get(&c).is_none_or(|r| *r == c)) {
            continue;
        }
        let id = rebuild(arena, e, &new);
        new.insert(e, id);
    }
    new.get(&root).copied().unwrap_or(root)
}
