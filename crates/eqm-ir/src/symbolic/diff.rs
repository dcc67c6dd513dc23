//! Symbolic differentiation: partial derivatives and total time derivatives.
//!
//! Input: an arena, an expression id, and either the leaf to differentiate with respect to
//! ([`diff_var`]) or which variables vary in time ([`diff_time`]). Output: the simplified
//! derivative, or a [`DiffError`] naming the first node that cannot be differentiated (a
//! user-defined function or a non-numeric operator whose arguments depend on the leaf).
//!
//! Built-in functions are differentiated with the rule stored in their entry of the built-in
//! table ([`crate::builtins::Derivative`]); this module only applies the chain rule to the
//! operators of the expression language and to `der`, `pre`, `noEvent` and `smooth`. `if`
//! expressions are differentiated branch-wise with the condition kept; relations and Booleans
//! have derivative 0, as do piecewise-constant functions (their jumps are events, handled
//! elsewhere). A call of a user-defined or external function is differentiated by the
//! [`CallDerivative`] the caller of [`diff_time_through`] or [`diff_var_through`] passes (it knows the function bodies
//! and `derivative` annotations); this module only supplies the derivatives of the arguments,
//! and a call whose arguments are all constant has derivative 0 whatever the function. It does
//! not reduce the index of anything.
//!
//! Nodes are processed in increasing id order; a node whose children all have derivative 0 gets
//! derivative 0 without building anything, so differentiating a huge equation with respect to
//! one of its variables costs little more than walking it.

use super::{reachable, simplify};
use crate::builtins::{Builtin, BuiltinKind, Derivative};
use crate::expr::{BinOp, Callee, ExprArena, ExprId, FxHashMap, Node, UnOp, VarId};

/// An expression that could not be differentiated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffError {
    /// The node that could not be differentiated.
    pub node: ExprId,
    pub reason: &'static str,
}

impl std::fmt::Display for DiffError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot differentiate expression #{}: {}", self.node.0, self.reason)
    }
}

impl std::error::Error for DiffError {}

/// A call of a user-defined or external function whose derivative is wanted.
pub struct CallSite<'c> {
    pub callee: Callee,
    pub args: &'c [ExprId],
    /// The derivative of each argument, `None` where it is 0 (at least one is not).
    pub dargs: &'c [Option<ExprId>],
    /// Which output of the call (0 for the call itself, `k` for `CallOutput(call, k)`).
    pub output: u32,
}

/// Differentiates an expression the way the derivative being taken does (with respect to the
/// same leaf or time, through the same [`CallDerivative`]).
pub type Again<'a> = &'a dyn Fn(&mut ExprArena, ExprId) -> Result<ExprId, DiffError>;

/// How the derivative of a call of a user-defined or external function is taken: the
/// function's body or its `derivative` annotation, which only the caller knows. The derivative
/// is directional: the arguments' derivatives in [`CallSite::dargs`] are with respect to time
/// or to a leaf, and the call's is with respect to the same.
pub trait CallDerivative {
    /// The derivative of `call`, or why it has none; `again` differentiates an expression of
    /// the arguments (a function's body) the same way.
    fn call_derivative(
        &self,
        arena: &mut ExprArena,
        call: CallSite<'_>,
        again: Again<'_>,
    ) -> Result<ExprId, &'static str>;
}

/// Calls with a varying argument have no derivative.
struct NoCallDerivative;

impl CallDerivative for NoCallDerivative {
    fn call_derivative(&self, _: &mut ExprArena, _: CallSite<'_>, _: Again<'_>) -> Result<ExprId, &'static str> {
        Err("user-defined functions cannot be differentiated")
    }
}

/// What the derivative is taken with respect to, and how calls are differentiated.
#[derive(Clone, Copy)]
enum Wrt<'a> {
    /// A leaf: a variable node or a `der(...)` node, every other leaf being independent of it.
    Leaf(ExprId, &'a dyn CallDerivative),
    /// Time, with the variables that vary in time.
    Time(&'a dyn Fn(VarId) -> bool, &'a dyn CallDerivative),
}

/// The partial derivative of `id` with respect to `wrt`, a `Var` node, a function's `Local` or a
/// `der(...)` node.
/// `der(...)` and `pre(...)` nodes other than `wrt` are independent symbols: the partial
/// derivative of `der(x)` with respect to `x` is 0.
pub fn diff_var(arena: &mut ExprArena, id: ExprId, wrt: ExprId) -> Result<ExprId, DiffError> {
    diff_var_through(arena, id, wrt, &NoCallDerivative)
}

/// [`diff_var`] that differentiates the calls of user-defined and external functions with
/// arguments that depend on `wrt` through `calls`.
pub fn diff_var_through(
    arena: &mut ExprArena,
    id: ExprId,
    wrt: ExprId,
    calls: &dyn CallDerivative,
) -> Result<ExprId, DiffError> {
    let valid = matches!(
        arena.get(wrt),
        Node::Var(_) | Node::Local(_) | Node::Call(Callee::Builtin(Builtin::Der), _)
    );
    if !valid {
        return Err(DiffError {
            node: wrt,
            reason: "can only differentiate with respect to a variable, a function's local or der(...)",
        });
    }
    differentiate(arena, id, Wrt::Leaf(wrt, calls))
}

/// The total time derivative of `id`: `der(v)` for variables that vary in time, 0 for the others
/// (parameters, constants), 1 for `time`, `der(der(x))` for `der(x)`, 0 for `pre(x)` and the
/// other discrete operators, the chain rule everywhere else.
pub fn diff_time(
    arena: &mut ExprArena,
    id: ExprId,
    is_time_varying: &dyn Fn(VarId) -> bool,
) -> Result<ExprId, DiffError> {
    differentiate(arena, id, Wrt::Time(is_time_varying, &NoCallDerivative))
}

/// [`diff_time`] that differentiates the calls of user-defined and external functions with
/// varying arguments through `calls`.
pub fn diff_time_through(
    arena: &mut ExprArena,
    id: ExprId,
    is_time_varying: &dyn Fn(VarId) -> bool,
    calls: &dyn CallDerivative,
) -> Result<ExprId, DiffError> {
    differentiate(arena, id, Wrt::Time(is_time_varying, calls))
}

fn differentiate(arena: &mut ExprArena, root: ExprId, wrt: Wrt) -> Result<ExprId, DiffError> {
    let order = {
        let arena: &ExprArena = arena;
        reachable(arena, root, &|e| match wrt {
            // Nothing below `leaf` in id order can contain it, and symbols are opaque.
            Wrt::Leaf(leaf, _) => e <= leaf || super::is_symbol_operator(arena.get(e)),
            Wrt::Time(..) => matches!(arena.get(e), Node::Call(Callee::Builtin(b), _) if is_discrete(*b)),
        })
    };
    // Derivatives of the nodes seen so far; a missing entry means the derivative is 0.
    let mut d: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    for e in order {
        if let Some(de) = derivative(arena, e, wrt, &d)? {
            d.insert(e, de);
        }
    }
    match d.get(&root) {
        Some(&de) => Ok(simplify(arena, de)),
        None => Ok(arena.real(0.0)),
    }
}

/// Operators whose value is piecewise constant in time (or not a number at all).
fn is_discrete(b: Builtin) -> bool {
    matches!(
        b,
        Builtin::Pre | Builtin::Edge | Builtin::Change | Builtin::Initial | Builtin::Terminal | Builtin::Sample
    )
}

/// The derivative of node `e` from the derivatives `d` of its children; `None` is 0.
fn derivative(
    arena: &mut ExprArena,
    e: ExprId,
    wrt: Wrt,
    d: &FxHashMap<ExprId, ExprId>,
) -> Result<Option<ExprId>, DiffError> {
    let err = |reason| DiffError { node: e, reason };
    if let Wrt::Leaf(leaf, _) = wrt
        && e == leaf
    {
        return Ok(Some(arena.real(1.0)));
    }
    let node = arena.get(e).clone();
    let get = |c: &ExprId| d.get(c).copied();
    Ok(match node {
        Node::Real(_) | Node::Int(_) | Node::Bool(_) | Node::Str(_) => None,
        Node::Var(v) => match wrt {
            Wrt::Time(varies, _) if varies(v) => Some(arena.builtin(Builtin::Der, vec![e])),
            _ => None,
        },
        Node::Time => match wrt {
            Wrt::Time(..) => Some(arena.real(1.0)),
            Wrt::Leaf(..) => None,
        },
        Node::Local(_) => match wrt {
            Wrt::Time(..) => return Err(err("function locals have no time derivative")),
            Wrt::Leaf(..) => None,
        },
        Node::Unary(UnOp::Neg, a) => get(&a).map(|da| neg(arena, da)),
        Node::Unary(UnOp::Not, _) => None,
        Node::Binary(op, a, b) => binary(arena, op, a, b, get(&a), get(&b)),
        Node::If(c, a, b) => match (get(&a), get(&b)) {
            (None, None) => None,
            (da, db) => {
                let da = da.unwrap_or_else(|| arena.real(0.0));
                let db = db.unwrap_or_else(|| arena.real(0.0));
                Some(arena.add(Node::If(c, da, db)))
            }
        },
        Node::Call(Callee::Builtin(b), args) => {
            let dargs: Vec<Option<ExprId>> = args.iter().map(get).collect();
            if dargs.iter().all(Option::is_none) {
                // Constant arguments make a constant call, whatever the function: this also
                // covers `der(p)` of a parameter.
                return Ok(None);
            }
            match b {
                Builtin::Der => match wrt {
                    Wrt::Time(..) => Some(arena.builtin(Builtin::Der, vec![e])),
                    Wrt::Leaf(..) => None,
                },
                Builtin::NoEvent => dargs
                    .first()
                    .copied()
                    .flatten()
                    .map(|da| arena.builtin(Builtin::NoEvent, vec![da])),
                Builtin::Smooth => match (&args[..], &dargs[..]) {
                    ([n, _], [_, Some(dx)]) => {
                        // smooth(n, e) is n times differentiable; its derivative is n-1 times.
                        let one = arena.int(1);
                        let zero = arena.int(0);
                        let m = arena.binary(BinOp::Sub, *n, one);
                        let m = arena.builtin(Builtin::Max, vec![m, zero]);
                        Some(arena.builtin(Builtin::Smooth, vec![m, *dx]))
                    }
                    _ => return Err(err("smooth(n, e) with a varying n")),
                },
                _ if is_discrete(b) => None,
                _ => match b.info().derivative {
                    Derivative::Zero => None,
                    Derivative::None if b.info().kind == BuiltinKind::Operator => {
                        return Err(err("this operator has no derivative"));
                    }
                    Derivative::None => return Err(err("array functions cannot be differentiated")),
                    Derivative::Rule(rule) => {
                        let zero = arena.real(0.0);
                        let dargs: Vec<ExprId> = dargs.iter().map(|x| x.unwrap_or(zero)).collect();
                        let r = rule(arena, &args, &dargs);
                        Some(r.ok_or_else(|| err("wrong number of arguments for this function's derivative"))?)
                    }
                },
            }
        }
        Node::Call(callee @ (Callee::User(_) | Callee::External(_)), args) => {
            call_derivative(arena, wrt, callee, &args, 0, d).map_err(err)?
        }
        Node::CallOutput(call, k) => match arena.get(call).clone() {
            Node::Call(callee, args) => call_derivative(arena, wrt, callee, &args, k, d).map_err(err)?,
            _ => return Err(err("an output of something that is not a call")),
        },
    })
}

/// The derivative of output `output` of `callee(args)`; `None` when every argument is
/// constant.
fn call_derivative(
    arena: &mut ExprArena,
    wrt: Wrt,
    callee: Callee,
    args: &[ExprId],
    output: u32,
    d: &FxHashMap<ExprId, ExprId>,
) -> Result<Option<ExprId>, &'static str> {
    let dargs: Vec<Option<ExprId>> = args.iter().map(|a| d.get(a).copied()).collect();
    if dargs.iter().all(Option::is_none) {
        return Ok(None);
    }
    let calls = match wrt {
        Wrt::Leaf(_, calls) | Wrt::Time(_, calls) => calls,
    };
    let site = CallSite {
        callee,
        args,
        dargs: &dargs,
        output,
    };
    let again = |arena: &mut ExprArena, e: ExprId| differentiate(arena, e, wrt);
    calls.call_derivative(arena, site, &again).map(Some)
}

/// Derivatives of the binary operators; `da`/`db` are `None` where they are 0.
///
/// The chain rule is applied with the factors 1 and the terms 0 left out as the nodes are
/// built: differentiating `c*(x - y)` with respect to `x` gives `c` at once instead of
/// `0*(x - y) + c*(1 - 0)`, which the simplifier would fold again. The symbolic Jacobian of a
/// large model takes one derivative per partial, so the nodes it never builds are most of its
/// time and of the arena it would leave behind.
fn binary(
    arena: &mut ExprArena,
    op: BinOp,
    a: ExprId,
    b: ExprId,
    da: Option<ExprId>,
    db: Option<ExprId>,
) -> Option<ExprId> {
    let mul = |arena: &mut ExprArena, x, y| arena.binary(BinOp::Mul, x, y);
    match op {
        BinOp::Add | BinOp::Sub => plus_minus(arena, op, da, db),
        BinOp::Mul => {
            let p = da.map(|dx| times(arena, dx, b));
            let q = db.map(|dy| times(arena, a, dy));
            plus_minus(arena, BinOp::Add, p, q)
        }
        BinOp::Div => {
            // (da*b - a*db) / b^2, written as da/b - a*db/b^2 so that the common case of a
            // constant divisor stays a plain division.
            let p = da.map(|dx| arena.binary(BinOp::Div, dx, b));
            let q = db.map(|dy| {
                let q = times(arena, a, dy);
                let two = arena.int(2);
                let b2 = arena.binary(BinOp::Pow, b, two);
                arena.binary(BinOp::Div, q, b2)
            });
            plus_minus(arena, BinOp::Sub, p, q)
        }
        BinOp::Pow => {
            // d(a^b) = b*a^(b-1)*da + a^b*log(a)*db; each part only where it is not 0, so a
            // constant exponent never introduces log(a) of a negative base.
            let p = da.map(|dx| {
                let one = arena.int(1);
                let bm1 = arena.binary(BinOp::Sub, b, one);
                let p = arena.binary(BinOp::Pow, a, bm1);
                let p = mul(arena, b, p);
                times(arena, p, dx)
            });
            let q = db.map(|dy| {
                let p = arena.binary(BinOp::Pow, a, b);
                let l = arena.builtin(Builtin::Log, vec![a]);
                let p = mul(arena, p, l);
                times(arena, p, dy)
            });
            plus_minus(arena, BinOp::Add, p, q)
        }
        // Relations and logical operators are piecewise constant.
        _ => None,
    }
}

/// `p + q` or `p - q` (`op`) where a part that is 0 is `None` and left out; `None` when both
/// are.
fn plus_minus(arena: &mut ExprArena, op: BinOp, p: Option<ExprId>, q: Option<ExprId>) -> Option<ExprId> {
    Some(match (p, q) {
        (Some(p), Some(q)) => arena.binary(op, p, q),
        (Some(p), None) => p,
        (None, Some(q)) if op == BinOp::Sub => neg(arena, q),
        (None, Some(q)) => q,
        (None, None) => return None,
    })
}

/// `x*y` with a factor 1 left out.
pub(super) fn times(arena: &mut ExprArena, x: ExprId, y: ExprId) -> ExprId {
    if arena.literal(x) == Some(1.0) {
        y
    } else if arena.literal(y) == Some(1.0) {
        x
    } else {
        arena.binary(BinOp::Mul, x, y)
    }
}

/// `-x`, folded when `x` is a number.
pub(super) fn neg(arena: &mut ExprArena, x: ExprId) -> ExprId {
    match arena.get(x) {
        Node::Real(_) | Node::Int(_) => {
            let v = arena.literal(x).unwrap_or(0.0);
            arena.real(-v)
        }
        _ => arena.unary(UnOp::Neg, x),
    }
}
