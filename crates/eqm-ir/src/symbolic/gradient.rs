//! Reverse-mode symbolic differentiation: the partial derivatives of one expression with
//! respect to every leaf it reads, in one pass over the expression.
//!
//! Input: an arena, a root expression, which leaves (variable nodes or `der(...)` nodes) are
//! wanted, and a [`Simplifier`] shared by the caller's calls. Output: the simplified partial
//! derivative of the root with respect to each wanted leaf it reaches, in increasing leaf id
//! order, or the [`DiffError`] of the first node that depends on a wanted leaf and cannot be
//! differentiated (a user-defined function, an operator without a derivative).
//!
//! [`super::diff_var`] builds one derivative per leaf, walking the whole expression each time:
//! for a row `tanh(W[i,1]*x[1] + ... + W[i,n]*x[n])` of a dense model that is n walks of n
//! terms. Here the adjoint of every node (the partial of the root with respect to that node) is
//! built once, from the root down in decreasing id order (parents before children), and shared
//! by every leaf below it, so the cost is linear in the size of the expression plus the size of
//! the partials. The rules are those of [`super::diff`] read backwards: for a built-in function
//! the forward rule is applied with the adjoint in the place of the argument's derivative
//! (rules are linear in the derivatives of the arguments). `noEvent` and `smooth` evaluate to
//! their argument and pass the adjoint on unchanged. It deliberately does not take time
//! derivatives (see [`super::diff_time`]) nor differentiate through user functions.

use super::diff::{DiffError, neg, times};
use super::{is_symbol_operator, reachable};
use crate::builtins::{Builtin, BuiltinKind, Derivative};
use crate::expr::{BinOp, Callee, ExprArena, ExprId, FxHashMap, FxHashSet, Node, UnOp};
use crate::symbolic::Simplifier;

/// The partials of `root` with respect to each leaf for which `wanted` is true (only variable
/// nodes and `der(...)` nodes are ever asked about), simplified with `simplifier`, as
/// `(leaf, partial)` pairs in increasing leaf id order. A leaf whose partial simplifies to 0 is
/// still listed. See the module documentation.
pub fn gradient(
    arena: &mut ExprArena,
    simplifier: &mut Simplifier,
    root: ExprId,
    wanted: &dyn Fn(&ExprArena, ExprId) -> bool,
) -> Result<Vec<(ExprId, ExprId)>, DiffError> {
    let is_leaf = |arena: &ExprArena, e: ExprId| {
        matches!(
            arena.get(e),
            Node::Var(_) | Node::Call(Callee::Builtin(Builtin::Der), _)
        ) && wanted(arena, e)
    };
    let order = reachable(arena, root, &|e| is_symbol_operator(arena.get(e)));
    let active = active_nodes(arena, &order, &is_leaf)?;
    let mut adjoint: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    if active.contains(&root) {
        let one = arena.real(1.0);
        adjoint.insert(root, one);
    }
    let mut leaves = Vec::new();
    for &e in order.iter().rev() {
        let Some(&a) = adjoint.get(&e) else { continue };
        if is_leaf(arena, e) {
            leaves.push(e);
            continue;
        }
        for (child, contribution) in contributions(arena, e, a, &active)? {
            let sum = match adjoint.get(&child) {
                Some(&old) => arena.binary(BinOp::Add, old, contribution),
                None => contribution,
            };
            adjoint.insert(child, sum);
        }
    }
    leaves.reverse();
    Ok(leaves
        .into_iter()
        .map(|leaf| {
            let partial = simplifier.simplify(arena, adjoint[&leaf]);
            (leaf, partial)
        })
        .collect())
}

/// The nodes of `order` (ascending ids) whose derivative with respect to the wanted leaves may
/// be nonzero: a wanted leaf, or a node with such a child through which a derivative passes
/// (not a relation, a discrete operator, a piecewise constant function or the condition of an
/// `if`). An error for a node with such a child that cannot be differentiated.
fn active_nodes(
    arena: &ExprArena,
    order: &[ExprId],
    is_leaf: &dyn Fn(&ExprArena, ExprId) -> bool,
) -> Result<FxHashSet<ExprId>, DiffError> {
    let mut active: FxHashSet<ExprId> = FxHashSet::default();
    for &e in order {
        let err = |reason| DiffError { node: e, reason };
        let on = |c: &ExprId| active.contains(c);
        let is_active = is_leaf(arena, e)
            || match arena.get(e) {
                Node::Real(_) | Node::Int(_) | Node::Bool(_) | Node::Str(_) => false,
                Node::Var(_) | Node::Time | Node::Local(_) => false,
                Node::Unary(UnOp::Neg, a) => on(a),
                Node::Unary(UnOp::Not, _) => false,
                Node::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Pow, a, b) => on(a) || on(b),
                Node::Binary(..) => false,
                Node::If(_, a, b) => on(a) || on(b),
                Node::Call(Callee::Builtin(b), args) => {
                    if !args.iter().any(on) {
                        false
                    } else {
                        match b {
                            // Any other `der(...)` or `pre(...)` is an independent symbol.
                            Builtin::Der | Builtin::Pre => false,
                            Builtin::NoEvent => true,
                            Builtin::Smooth => match &args[..] {
                                [_, x] if on(x) => true,
                                _ => return Err(err("smooth(n, e) with a varying n")),
                            },
                            _ if is_discrete(*b) => false,
                            _ => match b.info().derivative {
                                Derivative::Zero => false,
                                Derivative::None if b.info().kind == BuiltinKind::Operator => {
                                    return Err(err("this operator has no derivative"));
                                }
                                Derivative::None => return Err(err("array functions cannot be differentiated")),
                                Derivative::Rule(_) => true,
                            },
                        }
                    }
                }
                Node::Call(Callee::User(_) | Callee::External(_), args) => {
                    if args.iter().any(on) {
                        return Err(err("user-defined functions cannot be differentiated"));
                    }
                    false
                }
                Node::CallOutput(call, _) => {
                    if on(call) {
                        return Err(err("user-defined functions cannot be differentiated"));
                    }
                    false
                }
            };
        if is_active {
            active.insert(e);
        }
    }
    Ok(active)
}

/// Operators whose value is piecewise constant in time (or not a number at all).
fn is_discrete(b: Builtin) -> bool {
    matches!(
        b,
        Builtin::Pre | Builtin::Edge | Builtin::Change | Builtin::Initial | Builtin::Terminal | Builtin::Sample
    )
}

/// What node `e`, whose adjoint is `a`, adds to the adjoint of each of its active children.
fn contributions(
    arena: &mut ExprArena,
    e: ExprId,
    a: ExprId,
    active: &FxHashSet<ExprId>,
) -> Result<Vec<(ExprId, ExprId)>, DiffError> {
    let on = |c: ExprId| active.contains(&c);
    let mut out = Vec::with_capacity(2);
    match arena.get(e).clone() {
        Node::Unary(UnOp::Neg, x) => out.push((x, neg(arena, a))),
        Node::Binary(op, x, y) => {
            if on(x) {
                let c = match op {
                    BinOp::Mul => times(arena, a, y),
                    BinOp::Div => arena.binary(BinOp::Div, a, y),
                    BinOp::Pow => {
                        // d(x^y)/dx = y*x^(y-1).
                        let one = arena.int(1);
                        let ym1 = arena.binary(BinOp::Sub, y, one);
                        let p = arena.binary(BinOp::Pow, x, ym1);
                        let p = arena.binary(BinOp::Mul, y, p);
                        times(arena, a, p)
                    }
                    _ => a,
                };
                out.push((x, c));
            }
            if on(y) {
                let c = match op {
                    BinOp::Sub => neg(arena, a),
                    BinOp::Mul => times(arena, x, a),
                    BinOp::Div => {
                        // d(x/y)/dy = -x/y^2.
                        let q = times(arena, x, a);
                        let two = arena.int(2);
                        let y2 = arena.binary(BinOp::Pow, y, two);
                        let q = arena.binary(BinOp::Div, q, y2);
                        neg(arena, q)
                    }
                    BinOp::Pow => {
                        // d(x^y)/dy = x^y*log(x), only where the exponent varies, so a constant
                        // exponent never introduces the log of a negative base.
                        let l = arena.builtin(Builtin::Log, vec![x]);
                        let p = arena.binary(BinOp::Mul, e, l);
                        times(arena, a, p)
                    }
                    _ => a,
                };
                out.push((y, c));
            }
        }
        Node::If(c, x, y) => {
            let zero = arena.real(0.0);
            if on(x) {
                out.push((x, arena.add(Node::If(c, a, zero))));
            }
            if on(y) {
                out.push((y, arena.add(Node::If(c, zero, a))));
            }
        }
        Node::Call(Callee::Builtin(Builtin::NoEvent | Builtin::Smooth), args) => {
            if let Some(&x) = args.last() {
                out.push((x, a));
            }
        }
        Node::Call(Callee::Builtin(b), args) => {
            if let Derivative::Rule(rule) = b.info().derivative {
                let zero = arena.real(0.0);
                for (i, &x) in args.iter().enumerate() {
                    if !on(x) {
                        continue;
                    }
                    // The forward rule is linear in the arguments' derivatives: with the
                    // adjoint in place of this argument's derivative and 0 for the others it
                    // gives this argument's share.
                    let seeds: Vec<ExprId> = (0..args.len()).map(|j| if j == i { a } else { zero }).collect();
                    let c = rule(arena, &args, &seeds).ok_or(DiffError {
                        node: e,
                        reason: "wrong number of arguments for this function's derivative",
                    })?;
                    out.push((x, c));
                }
            }
        }
        _ => {}
    }
    Ok(out)
}
