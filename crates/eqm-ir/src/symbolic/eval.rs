//! The reference numeric evaluator of arena expressions.
//!
//! Input: an arena, an expression id and an [`Env`] that supplies variable values, time and the
//! values of operators such as `der(x)` and `pre(x)`. Output: an `f64` (Booleans are 0 and 1),
//! NaN-propagating like the future JIT, or an [`EvalError`] naming the first node it cannot
//! evaluate. The arithmetic of single operators lives in [`unary`], [`binary`] and [`builtin`]
//! so that constant folding in the simplifier computes exactly the same bits. It deliberately
//! does not evaluate user functions, strings or multi-output calls: those belong to the
//! interpreter, which can supply them later through [`Env`].

use crate::builtins::{Builtin, BuiltinKind, Eval};
use crate::expr::{BinOp, Callee, ExprArena, ExprId, FxHashMap, Node, UnOp, VarId};

/// What an expression is evaluated in. Only [`Env::var`] and [`Env::time`] are required; the
/// other hooks default to "not available", which makes evaluation fail with an [`EvalError`].
pub trait Env {
    fn var(&self, v: VarId) -> f64;
    fn time(&self) -> f64;
    /// The value of `der(arg)`; `arg` is the argument node (a variable, or `der(x)` for a
    /// second derivative).
    fn der(&self, _arg: ExprId) -> Option<f64> {
        None
    }
    /// The value of an operator call other than `der`, `noEvent` and `smooth` (`pre`, `edge`,
    /// `initial`, `sample`, ...), given its argument nodes.
    fn operator(&self, _op: Builtin, _args: &[ExprId]) -> Option<f64> {
        None
    }
    /// The value of a function-body local.
    fn local(&self, _index: u32) -> Option<f64> {
        None
    }
}

/// An [`Env`] made of closures, for tests and simple callers.
pub struct FnEnv<'a> {
    pub var: &'a dyn Fn(VarId) -> f64,
    pub time: f64,
    pub der: Option<&'a dyn Fn(ExprId) -> f64>,
}

impl Env for FnEnv<'_> {
    fn var(&self, v: VarId) -> f64 {
        (self.var)(v)
    }

    fn time(&self) -> f64 {
        self.time
    }

    fn der(&self, arg: ExprId) -> Option<f64> {
        self.der.map(|d| d(arg))
    }
}

/// A node the evaluator could not evaluate, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalError {
    pub node: ExprId,
    pub reason: &'static str,
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot evaluate expression #{}: {}", self.node.0, self.reason)
    }
}

impl std::error::Error for EvalError {}

/// Evaluates `id` with variable values from `var` at time `time`; `der(...)` is not available.
pub fn evaluate(arena: &ExprArena, id: ExprId, var: &dyn Fn(VarId) -> f64, time: f64) -> Result<f64, EvalError> {
    evaluate_in(arena, id, &FnEnv { var, time, der: None })
}

fn truth(v: f64) -> bool {
    v != 0.0
}

fn from_bool(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

/// One unary operator on numbers (Booleans as 0/1).
pub fn unary(op: UnOp, a: f64) -> f64 {
    match op {
        UnOp::Neg => -a,
        UnOp::Not => from_bool(!truth(a)),
    }
}

/// One binary operator on numbers (Booleans as 0/1); `^` is `powf`, except that `x^2` is
/// `x*x`: the square rounded once, which is what `powf` approximates, and several times cheaper.
/// The JIT emits the same multiplication, so that both agree to the bit.
pub fn binary(op: BinOp, a: f64, b: f64) -> f64 {
    match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => a / b,
        BinOp::Pow if b == 2.0 => a * a,
        BinOp::Pow => a.powf(b),
        BinOp::Eq => from_bool(a == b),
        BinOp::Ne => from_bool(a != b),
        BinOp::Lt => from_bool(a < b),
        BinOp::Le => from_bool(a <= b),
        BinOp::Gt => from_bool(a > b),
        BinOp::Ge => from_bool(a >= b),
        BinOp::And => from_bool(truth(a) && truth(b)),
        BinOp::Or => from_bool(truth(a) || truth(b)),
    }
}

/// A numeric built-in (kind `Math` or `EventMath`) applied through the table's implementation;
/// `None` for operators, array functions and a wrong number of arguments.
pub fn builtin(b: Builtin, args: &[f64]) -> Option<f64> {
    let info = b.info();
    if !matches!(info.kind, BuiltinKind::Math | BuiltinKind::EventMath) {
        return None;
    }
    match (info.eval, args) {
        (Eval::Unary(f), [a]) => Some(f(*a)),
        (Eval::Binary(f), [a, c]) => Some(f(*a, *c)),
        _ => None,
    }
}

/// Evaluates `id` in `env`. Iterative with a memo table: each node is evaluated once, and an
/// `if` evaluates its condition first and then only the chosen branch, so an error or a domain
/// problem in the branch not taken does not matter.
pub fn evaluate_in(arena: &ExprArena, id: ExprId, env: &dyn Env) -> Result<f64, EvalError> {
    let mut memo: FxHashMap<ExprId, f64> = FxHashMap::default();
    let mut stack = vec![id];
    let mut pending = Vec::new();
    while let Some(&e) = stack.last() {
        if memo.contains_key(&e) {
            stack.pop();
            continue;
        }
        let err = |reason| EvalError { node: e, reason };
        // Children this node still needs; evaluated first, then the node is visited again.
        pending.clear();
        let value = match arena.get(e) {
            Node::Real(bits) => Some(f64::from_bits(*bits)),
            Node::Int(v) => Some(*v as f64),
            Node::Bool(b) => Some(from_bool(*b)),
            Node::Str(_) => return Err(err("a string has no numeric value")),
            Node::Var(v) => Some(env.var(*v)),
            Node::Local(i) => Some(env.local(*i).ok_or_else(|| err("function local without a value"))?),
            Node::Time => Some(env.time()),
            Node::If(c, a, b) => match memo.get(c) {
                None => {
                    pending.push(*c);
                    None
                }
                Some(&cv) => {
                    let branch = if truth(cv) { *a } else { *b };
                    match memo.get(&branch) {
                        Some(&v) => Some(v),
                        None => {
                            pending.push(branch);
                            None
                        }
                    }
                }
            },
            Node::Call(Callee::Builtin(Builtin::Der), args) => {
                let arg = args.first().ok_or_else(|| err("der without an argument"))?;
                Some(
                    env.der(*arg)
                        .ok_or_else(|| err("der(...) has no value in this environment"))?,
                )
            }
            Node::Call(Callee::Builtin(b), args)
                if b.info().kind == BuiltinKind::Operator && !matches!(b, Builtin::NoEvent | Builtin::Smooth) =>
            {
                Some(
                    env.operator(*b, args)
                        .ok_or_else(|| err("operator has no value in this environment"))?,
                )
            }
            Node::Call(Callee::User(_), _) => return Err(err("user-defined functions are not evaluated here")),
            Node::Call(Callee::External(_), _) => return Err(err("external functions are not evaluated here")),
            Node::CallOutput(..) => return Err(err("multi-output calls are not evaluated here")),
            node => {
                pending.extend(arena.children(e).filter(|c| !memo.contains_key(c)));
                if pending.is_empty() {
                    let arg = |c: &ExprId| memo[c];
                    Some(match node {
                        Node::Unary(op, a) => unary(*op, arg(a)),
                        Node::Binary(op, a, b) => binary(*op, arg(a), arg(b)),
                        // The expression is the last argument of both `noEvent(e)` and `smooth(n, e)`.
                        Node::Call(Callee::Builtin(Builtin::NoEvent | Builtin::Smooth), args) => {
                            args.last().map(arg).ok_or_else(|| err("missing argument"))?
                        }
                        Node::Call(Callee::Builtin(b), args) => {
                            let values: Vec<f64> = args.iter().map(arg).collect();
                            builtin(*b, &values).ok_or_else(|| err("built-in cannot be evaluated numerically"))?
                        }
                        _ => return Err(err("unsupported expression")),
                    })
                } else {
                    None
                }
            }
        };
        match value {
            Some(v) => {
                memo.insert(e, v);
                stack.pop();
            }
            None => stack.extend(pending.iter().copied()),
        }
    }
    Ok(memo[&id])
}
