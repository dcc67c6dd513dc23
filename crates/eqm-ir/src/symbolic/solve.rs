//! Solving one equation for one unknown symbolically.
//!
//! Input: an equation `lhs = rhs` and a leaf (a variable node, or a `der(x)` node) to solve for.
//! Output: [`Solution::Solved`] with an explicit expression for the leaf and the run-time
//! conditions under which it is valid (divisors that must not be zero, arguments of `log` that
//! must be positive), [`Solution::Implicit`] when the leaf cannot be isolated safely (a nonlinear
//! solver is needed), or [`Solution::Absent`] when the leaf does not occur after simplification.
//!
//! Two methods are used. When the leaf occurs linearly (possibly several times, with
//! coefficients that are expressions free of it), the equation `f = 0` is solved as
//! `leaf = -f(0) / (∂f/∂leaf)`. When it occurs once under a chain of invertible operations, the
//! chain is peeled from the outside: sums and products with leaf-free parts, `exp`/`log`/
//! `log10`, `sqrt`, `atan`, odd integer powers, `1/v`. It deliberately refuses inversions that
//! lose solutions or pick one of several (`v^2`, `sin`, `cos`, fractional powers) and does not
//! solve for leaves inside `if` conditions or non-smooth functions.

use super::simplify::{Product, Simplifier, Sum};
use super::{contains_leaf, diff_var, is_symbol_operator, reachable, substitute};
use crate::builtins::Builtin;
use crate::expr::{BinOp, Callee, ExprArena, ExprId, FxHashMap, Node, UnOp, VarId};

/// A condition a solution needs at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// The expression is a divisor: it must not be zero.
    NonZero(ExprId),
    /// The expression is the argument of a logarithm: it must be positive.
    Positive(ExprId),
    /// The expression was squared to undo a square root: it must not be negative.
    NonNegative(ExprId),
    /// A Boolean expression that must be true, such as `abs(t) < pi/2` for undoing `atan`.
    Holds(ExprId),
}

impl Condition {
    /// The expression the condition is about.
    pub fn expr(self) -> ExprId {
        match self {
            Condition::NonZero(e) | Condition::Positive(e) | Condition::NonNegative(e) | Condition::Holds(e) => e,
        }
    }

    /// Whether the condition holds when its expression has value `v` (NaN never holds).
    pub fn holds(self, v: f64) -> bool {
        match self {
            Condition::NonZero(_) => v != 0.0 && !v.is_nan(),
            Condition::Positive(_) => v > 0.0,
            Condition::NonNegative(_) => v >= 0.0,
            Condition::Holds(_) => v != 0.0 && !v.is_nan(),
        }
    }

    /// What the condition requires of its expression, in words.
    pub fn need(self) -> &'static str {
        match self {
            Condition::NonZero(_) => "must not be zero",
            Condition::Positive(_) => "must be positive",
            Condition::NonNegative(_) => "must not be negative",
            Condition::Holds(_) => "must hold",
        }
    }
}

/// The result of [`solve_for`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Solution {
    /// `leaf = value`, valid where all `conditions` hold. Conditions that are known to hold
    /// (a nonzero constant coefficient) are left out, so an empty list means unconditional.
    Solved { value: ExprId, conditions: Vec<Condition> },
    /// The leaf occurs, but not in a way that can be inverted safely.
    Implicit(&'static str),
    /// The leaf does not occur in the simplified equation.
    Absent,
}

/// Solves `lhs = rhs` for `v`.
pub fn solve_for_var(arena: &mut ExprArena, lhs: ExprId, rhs: ExprId, v: VarId) -> Solution {
    let leaf = arena.var(v);
    solve_for(arena, lhs, rhs, leaf)
}

/// Solves `lhs = rhs` for `leaf`, a variable node or a `der(...)` node; see the module
/// documentation for what can be solved.
pub fn solve_for(arena: &mut ExprArena, lhs: ExprId, rhs: ExprId, leaf: ExprId) -> Solution {
    solve_for_with(&mut Simplifier::new(), arena, lhs, rhs, leaf)
}

/// [`solve_for`] with a simplifier shared across calls: solving every equation of a model for
/// each of its unknowns simplifies the same residuals and subexpressions many times, and the
/// simplifier's memo does that work once. `simplifier` must only ever be used with `arena`.
pub fn solve_for_with(
    simplifier: &mut Simplifier,
    arena: &mut ExprArena,
    lhs: ExprId,
    rhs: ExprId,
    leaf: ExprId,
) -> Solution {
    match solve_for_unsimplified(simplifier, arena, lhs, rhs, leaf) {
        Solution::Solved { value, conditions } => Solution::Solved {
            value: simplifier.simplify(arena, value),
            conditions,
        },
        other => other,
    }
}

/// [`solve_for_with`], except that the value of a solution may be left unsimplified (its
/// conditions are simplified). For callers that solve many edges and use few of the solutions,
/// such as the causal plan: simplifying is most of the cost of solving, so it is done only for
/// the solutions used.
pub fn solve_for_unsimplified(
    simplifier: &mut Simplifier,
    arena: &mut ExprArena,
    lhs: ExprId,
    rhs: ExprId,
    leaf: ExprId,
) -> Solution {
    if !matches!(
        arena.get(leaf),
        Node::Var(_) | Node::Call(Callee::Builtin(Builtin::Der), _)
    ) {
        return Solution::Implicit("can only solve for a variable or der(...)");
    }
    // `v = e` with `v` not in `e` (most equations of a flattened model, and every explicit
    // assignment) is answered without simplifying the residual and peeling it again.
    for (side, other) in [(lhs, rhs), (rhs, lhs)] {
        if side == leaf && !contains_leaf(arena, other, leaf) {
            return Solution::Solved {
                value: other,
                conditions: Vec::new(),
            };
        }
    }
    if let Some(solution) = peel_single_occurrence(simplifier, arena, lhs, rhs, leaf) {
        return solution;
    }
    let residual = arena.binary(BinOp::Sub, lhs, rhs);
    let mut e = simplifier.simplify(arena, residual);
    if !contains_leaf(arena, e, leaf) {
        return Solution::Absent;
    }
    let mut solver = Solver {
        simplifier,
        conditions: Vec::new(),
        leaf,
    };
    let mut target = arena.real(0.0);
    // Each step replaces `e` by a proper part of it (or a monomial by its product form), so
    // the loop ends; the bound only guards against a mistake turning into a hang.
    for _ in 0..=4 * arena.len() {
        if e == leaf {
            let value = solver.simplifier.simplify(arena, target);
            return Solution::Solved {
                value,
                conditions: solver.conditions,
            };
        }
        match solver.step(arena, e, target) {
            Ok(Step::Peeled(next, t)) => {
                e = next;
                target = t;
            }
            Ok(Step::Done(value)) => {
                return Solution::Solved {
                    value,
                    conditions: solver.conditions,
                };
            }
            Err(reason) => return Solution::Implicit(reason),
        }
    }
    Solution::Implicit("the unknown could not be isolated")
}

/// The leaves of `lhs = rhs` that [`solve_for_with`] cannot isolate because they occur, in the
/// simplified residual, below an operation it never inverts (a call other than `exp`, `log`,
/// `log10`, `sqrt`, `atan`, `noEvent` and `smooth`, an `if`, a relation): peeling stops there,
/// and the linear method refuses such an occurrence, so solving for them gives
/// [`Solution::Implicit`]. One walk over the residual answers for all its leaves, where asking
/// [`solve_for_with`] walks it once per leaf: a row `g = tanh(W[1]*h[1] + ... + W[n]*h[n])` of
/// a dense model would cost n walks of n terms. Der and pre calls are leaves, not walked into.
pub fn unsolvable_leaves(simplifier: &mut Simplifier, arena: &mut ExprArena, lhs: ExprId, rhs: ExprId) -> Vec<ExprId> {
    let residual = arena.binary(BinOp::Sub, lhs, rhs);
    let residual = simplifier.simplify(arena, residual);
    let order = reachable(arena, residual, &|e| is_symbol_operator(arena.get(e)));
    // Parents before children (descending ids): a node is below a blocking one when one of its
    // parents is blocking or below one.
    let mut below: FxHashMap<ExprId, ()> = FxHashMap::default();
    let mut found = Vec::new();
    for &e in order.iter().rev() {
        let node = arena.get(e);
        let is_below = below.contains_key(&e);
        if is_below && (matches!(node, Node::Var(_)) || is_symbol_operator(node)) {
            found.push(e);
        }
        if is_symbol_operator(node) {
            continue;
        }
        let invertible = match node {
            Node::Unary(UnOp::Neg, _)
            | Node::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Pow, ..) => true,
            Node::Call(Callee::Builtin(b), _) => matches!(
                b,
                Builtin::Exp
                    | Builtin::Log
                    | Builtin::Log10
                    | Builtin::Sqrt
                    | Builtin::Atan
                    | Builtin::NoEvent
                    | Builtin::Smooth
            ),
            _ => false,
        };
        if is_below || !invertible {
            for c in arena.children(e) {
                below.insert(c, ());
            }
        }
    }
    found
}

/// How many tree nodes [`peel_single_occurrence`] looks at before leaving an equation to the
/// general method: enough for the short equations that make up most of a flattened model, and
/// a bound on the walk, which counts paths and could otherwise be exponential on shared nodes.
const SINGLE_OCCURRENCE_BUDGET: usize = 64;

/// The fast path for the most common equation shape: `leaf` occurs exactly once, under sums,
/// differences, negations and products with leaf-free operands. The operations on the path from
/// the equation's root to the leaf are undone one by one on the other side, and only the result
/// is built (unsimplified), instead of simplifying the whole residual and peeling its canonical
/// form. `None` when the equation has another shape (or is too large to look at cheaply): then the
/// general method decides.
fn peel_single_occurrence(
    simplifier: &mut Simplifier,
    arena: &mut ExprArena,
    lhs: ExprId,
    rhs: ExprId,
    leaf: ExprId,
) -> Option<Solution> {
    let mut budget = SINGLE_OCCURRENCE_BUDGET;
    let in_lhs = occurrence_path(arena, lhs, leaf, &mut budget)?;
    let in_rhs = occurrence_path(arena, rhs, leaf, &mut budget)?;
    let (path, mut target) = match (in_lhs, in_rhs) {
        (Occurrences::One(path), Occurrences::None) => (path, rhs),
        (Occurrences::None, Occurrences::One(path)) => (path, lhs),
        _ => return None,
    };
    let mut conditions = Vec::new();
    for pair in path.windows(2) {
        let (node, child) = (pair[0], pair[1]);
        target = match *arena.get(node) {
            Node::Binary(BinOp::Add, a, b) => {
                let rest = if child == a { b } else { a };
                arena.binary(BinOp::Sub, target, rest)
            }
            Node::Binary(BinOp::Sub, a, b) if child == a => arena.binary(BinOp::Add, target, b),
            Node::Binary(BinOp::Sub, a, _) => arena.binary(BinOp::Sub, a, target),
            Node::Unary(UnOp::Neg, _) => arena.unary(UnOp::Neg, target),
            Node::Binary(BinOp::Mul, a, b) => {
                let factor = if child == a { b } else { a };
                let factor = simplifier.simplify(arena, factor);
                match arena.literal(factor) {
                    // A zero factor removes the leaf: the general method says so.
                    Some(v) if v == 0.0 || !v.is_finite() => return None,
                    Some(_) => {}
                    None => conditions.push(Condition::NonZero(factor)),
                }
                arena.binary(BinOp::Div, target, factor)
            }
            _ => return None,
        };
    }
    Some(Solution::Solved {
        value: target,
        conditions,
    })
}

/// How often a leaf occurs in the tree below a node.
enum Occurrences {
    None,
    /// Once, on this path from the node down to the leaf (both included).
    One(Vec<ExprId>),
    More,
}

/// Counts the occurrences of `leaf` below `root`, treating the expression as a tree (a shared
/// node counts once per path to it) and `der`/`pre` calls as opaque symbols. `None` when the
/// walk would look at more than `budget` nodes.
fn occurrence_path(arena: &ExprArena, root: ExprId, leaf: ExprId, budget: &mut usize) -> Option<Occurrences> {
    let mut path: Vec<ExprId> = Vec::new();
    let mut found: Option<Vec<ExprId>> = None;
    let mut stack = vec![(root, 0usize)];
    while let Some((e, depth)) = stack.pop() {
        *budget = budget.checked_sub(1)?;
        path.truncate(depth);
        path.push(e);
        if e == leaf {
            if found.is_some() {
                return Some(Occurrences::More);
            }
            found = Some(path.clone());
            continue;
        }
        // Children have smaller ids than their parents, so nothing below a node older than the
        // leaf can be the leaf.
        if e < leaf || is_symbol_operator(arena.get(e)) {
            continue;
        }
        stack.extend(arena.children(e).map(|c| (c, depth + 1)));
    }
    Some(found.map_or(Occurrences::None, Occurrences::One))
}

enum Step {
    /// The equation `e = target` became `next = t`.
    Peeled(ExprId, ExprId),
    /// The leaf equals this (simplified) value.
    Done(ExprId),
}

struct Solver<'s> {
    simplifier: &'s mut Simplifier,
    conditions: Vec<Condition>,
    leaf: ExprId,
}

impl Solver<'_> {
    fn has(&self, arena: &ExprArena, e: ExprId) -> bool {
        contains_leaf(arena, e, self.leaf)
    }

    /// Records a condition on `e` after simplifying it; a constant that satisfies it is dropped
    /// and one that violates it means there is no real solution.
    fn require(&mut self, arena: &mut ExprArena, make: fn(ExprId) -> Condition, e: ExprId) -> Result<(), &'static str> {
        let e = self.simplifier.simplify(arena, e);
        match arena.literal(e) {
            Some(v) => {
                let ok = match make(e) {
                    Condition::NonZero(_) => v != 0.0,
                    Condition::Positive(_) => v > 0.0,
                    Condition::NonNegative(_) => v >= 0.0,
                    Condition::Holds(_) => v != 0.0,
                };
                if ok {
                    Ok(())
                } else {
                    Err("the equation has no real solution for this unknown")
                }
            }
            None => {
                self.conditions.push(make(e));
                Ok(())
            }
        }
    }

    /// One step on `e = target` with canonical `e` containing the leaf.
    fn step(&mut self, arena: &mut ExprArena, e: ExprId, target: ExprId) -> Result<Step, &'static str> {
        let node = arena.get(e).clone();
        match node {
            Node::Binary(BinOp::Add | BinOp::Sub, ..) => {
                let mut sum = Sum::default();
                sum.push(arena, e, 1.0);
                let (with, without): (Vec<_>, Vec<_>) = sum.terms.iter().partition(|t| self.has(arena, t.0));
                let [(m, c)] = with[..] else {
                    return self.linear(arena, e, target);
                };
                let rest = Sum {
                    terms: without,
                    constant: sum.constant,
                }
                .build(arena);
                let t = arena.binary(BinOp::Sub, target, rest);
                let c = arena.real(c);
                let t = arena.binary(BinOp::Div, t, c);
                Ok(Step::Peeled(m, self.simplifier.simplify(arena, t)))
            }
            Node::Binary(BinOp::Mul | BinOp::Div | BinOp::Pow, ..) | Node::Unary(UnOp::Neg, _) => {
                if let Node::Binary(BinOp::Pow, _, k) = node
                    && arena.literal(k).is_none()
                {
                    return Err("the unknown occurs in a power with a variable exponent");
                }
                let mut product = Product::new();
                product.push(arena, e, 1.0);
                let (with, without): (Vec<_>, Vec<_>) = product.factors.iter().partition(|f| self.has(arena, f.0));
                let [(b, k)] = with[..] else {
                    return self.linear(arena, e, target);
                };
                let q = Product {
                    coefficient: product.coefficient,
                    factors: without,
                }
                .build(arena);
                self.require(arena, Condition::NonZero, q)?;
                let t = arena.binary(BinOp::Div, target, q);
                let t = self.simplifier.simplify(arena, t);
                let t = if k == 1.0 {
                    t
                } else if k == -1.0 {
                    self.require(arena, Condition::NonZero, t)?;
                    let one = arena.real(1.0);
                    arena.binary(BinOp::Div, one, t)
                } else if k.fract() == 0.0 && k % 2.0 != 0.0 {
                    // An odd power is a bijection of the reals: v = sign(t)*|t|^(1/k).
                    let sign = arena.builtin(Builtin::Sign, vec![t]);
                    let abs = arena.builtin(Builtin::Abs, vec![t]);
                    let inv = arena.real(1.0 / k);
                    let root = arena.binary(BinOp::Pow, abs, inv);
                    arena.binary(BinOp::Mul, sign, root)
                } else {
                    return self
                        .linear(arena, e, target)
                        .map_err(|_| "the unknown occurs under an even or fractional power");
                };
                Ok(Step::Peeled(b, self.simplifier.simplify(arena, t)))
            }
            Node::Call(Callee::Builtin(f), args) => {
                let [.., a] = args[..] else {
                    return Err("call without arguments");
                };
                if args[..args.len() - 1].iter().any(|x| self.has(arena, *x)) {
                    return Err("the unknown occurs in a parameter of smooth(n, e)");
                }
                let t = match f {
                    Builtin::NoEvent | Builtin::Smooth => target,
                    Builtin::Exp => {
                        self.require(arena, Condition::Positive, target)?;
                        arena.builtin(Builtin::Log, vec![target])
                    }
                    Builtin::Log => arena.builtin(Builtin::Exp, vec![target]),
                    Builtin::Log10 => {
                        let ten = arena.real(10.0);
                        arena.binary(BinOp::Pow, ten, target)
                    }
                    Builtin::Sqrt => {
                        self.require(arena, Condition::NonNegative, target)?;
                        let two = arena.int(2);
                        arena.binary(BinOp::Pow, target, two)
                    }
                    // atan is a bijection onto (-pi/2, pi/2); outside, tan would give a number
                    // that is not a solution.
                    Builtin::Atan => {
                        let abs = arena.builtin(Builtin::Abs, vec![target]);
                        let half_pi = arena.real(std::f64::consts::FRAC_PI_2);
                        let inside = arena.binary(BinOp::Lt, abs, half_pi);
                        self.require(arena, Condition::Holds, inside)?;
                        arena.builtin(Builtin::Tan, vec![target])
                    }
                    _ => return Err("the unknown occurs under a function that cannot be inverted safely"),
                };
                Ok(Step::Peeled(a, self.simplifier.simplify(arena, t)))
            }
            _ => Err("the unknown occurs under an operation that cannot be inverted safely"),
        }
    }

    /// Solves `e = target` when the leaf occurs linearly: `f = e - target` is affine in the leaf
    /// when the leaf occurs only under `+`, `-`, `*`, `/`, integer powers, `noEvent` and
    /// `smooth`, and `∂f/∂leaf` is free of it. Then `leaf = -f(0) / (∂f/∂leaf)`.
    fn linear(&mut self, arena: &mut ExprArena, e: ExprId, target: ExprId) -> Result<Step, &'static str> {
        let f = arena.binary(BinOp::Sub, e, target);
        if !self.polynomial(arena, f) {
            return Err("the unknown occurs under a function or condition together with other occurrences");
        }
        let slope = diff_var(arena, f, self.leaf).map_err(|_| "the equation cannot be differentiated")?;
        if self.has(arena, slope) {
            return Err("the unknown occurs nonlinearly");
        }
        self.require(arena, Condition::NonZero, slope)?;
        let leaf = self.leaf;
        let zero = arena.real(0.0);
        let at_zero = substitute(arena, f, &|ar, n| {
            if n == leaf {
                Some(zero)
            } else if n < leaf || is_symbol_operator(ar.get(n)) {
                Some(n)
            } else {
                None
            }
        });
        let minus = arena.unary(UnOp::Neg, at_zero);
        let value = arena.binary(BinOp::Div, minus, slope);
        Ok(Step::Done(self.simplifier.simplify(arena, value)))
    }

    /// Whether every node of `f` that contains the leaf is a polynomial operation.
    fn polynomial(&self, arena: &ExprArena, f: ExprId) -> bool {
        let leaf = self.leaf;
        let order = reachable(arena, f, &|n| n <= leaf || is_symbol_operator(arena.get(n)));
        let mut has: FxHashMap<ExprId, bool> = FxHashMap::default();
        for n in order {
            let h = n == leaf
                || (!is_symbol_operator(arena.get(n))
                    && arena.children(n).any(|c| has.get(&c).copied().unwrap_or(false)));
            if h && n != leaf {
                let ok = match arena.get(n) {
                    Node::Unary(UnOp::Neg, _) | Node::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div, ..) => {
                        true
                    }
                    Node::Binary(BinOp::Pow, _, k) => arena.literal(*k).is_some_and(|k| k.fract() == 0.0),
                    Node::Call(Callee::Builtin(Builtin::NoEvent | Builtin::Smooth), _) => true,
                    _ => false,
                };
                if !ok {
                    return false;
                }
            }
            has.insert(n, h);
        }
        true
    }
}
