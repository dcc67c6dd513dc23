//! Event extraction: relations in a continuous context become frozen Boolean variables with
//! zero-crossing functions.
//!
//! Input: a [`Dae`] after index reduction. Output: the same DAE in which every relation
//! `a < b`, `a <= b`, `a > b`, `a >= b` outside `noEvent`/`smooth` in an equation or a
//! when-condition, and every event-generating built-in (`abs`, `sign`, `min`, `max` of two
//! arguments), reads a new discrete variable (`$rel1`, `$rel2`, ...) instead, plus the
//! [`EventSet`] that says how those variables are computed: each one is a sign test of a
//! *surface* `d = a - b`, and relations that test the same `d` share one surface (so `x > 0`
//! and `x < 0` in `sign(x)` have one zero-crossing function, which is what sliding mode needs).
//!
//! Between events the variables keep their values, so the right-hand side is smooth inside a
//! step; the simulation evaluates the surfaces after each step, locates sign changes and updates
//! the variables at the event (`hybrid`). Relations between parameters, constants and discrete
//! variables only cannot change between events and stay as they are.
//!
//! `sample(start, interval)` becomes a discrete variable too (`$sample1`, ...), true only at the
//! time events `start + k·interval`, which the simulation schedules exactly.
//!
//! Deliberately not here: `floor`, `ceil`, `integer`, `div`, `mod`, `rem` (they are evaluated
//! as they are, without events), relations inside user functions, scheduling relations on
//! `time` as time events (they are surfaces like any other, located to rounding), and anything
//! run-time.

use crate::builtins::Builtin;
use crate::dae::{Dae, VarKind};
use crate::expr::{BinOp, Callee, ExprArena, ExprId, FxHashMap, Node, UnOp, VarId};
use crate::source::Span;

/// How a relation variable reads the sign of its surface `d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Test {
    /// `d > 0`
    Positive,
    /// `d >= 0`
    NonNegative,
    /// `d < 0`
    Negative,
    /// `d <= 0`
    NonPositive,
}

impl Test {
    /// The relation's value when the surface's frozen sign is `sign` (-1, 0 or 1).
    pub fn holds(self, sign: i8) -> bool {
        match self {
            Test::Positive => sign > 0,
            Test::NonNegative => sign >= 0,
            Test::Negative => sign < 0,
            Test::NonPositive => sign <= 0,
        }
    }
}

/// One zero-crossing function and the relation variables that read its sign.
#[derive(Debug, Clone)]
pub struct Surface {
    /// `d = a - b` of the relations `a op b`.
    pub expr: ExprId,
    pub relations: Vec<(VarId, Test)>,
    /// The first equation or when-clause the surface was found in.
    pub span: Span,
    /// The first relation as written, for messages (`v - q > 0`).
    pub text: String,
}

/// `sample(start, interval)`: a Boolean variable that is true exactly at the events at
/// `start + k·interval` (time events, scheduled without root finding).
#[derive(Debug, Clone)]
pub struct Sample {
    pub var: VarId,
    pub start: ExprId,
    pub interval: ExprId,
    pub span: Span,
}

/// The surfaces of a model and its when-conditions with their relations replaced.
#[derive(Debug, Clone, Default)]
pub struct EventSet {
    pub surfaces: Vec<Surface>,
    pub samples: Vec<Sample>,
    /// For each when-clause of the flat model, each branch's condition reading the relation
    /// variables (the actions keep their expressions: they are evaluated at events only).
    pub when_conditions: Vec<Vec<ExprId>>,
}

impl EventSet {
    pub fn is_empty(&self) -> bool {
        self.surfaces.is_empty() && self.samples.is_empty()
    }
}

/// Replaces relations by relation variables in the equations, initial equations and
/// when-conditions of `dae`, and records the surfaces in `dae.events`. Linear in the size of
/// the expressions reachable from those roots.
pub fn extract(dae: &mut Dae) {
    let mut roots: Vec<(ExprId, Span)> = Vec::new();
    for eq in dae.equations.iter().chain(&dae.initial_equations) {
        roots.push((eq.lhs, eq.span));
        roots.push((eq.rhs, eq.span));
    }
    for w in &dae.flat.whens {
        for b in &w.branches {
            roots.push((b.condition, w.span));
        }
    }
    // Children have smaller ids than their parents, so visiting the reachable nodes in id
    // order rewrites every child before its parents. The span of a node is that of the first
    // root that reaches it, which keeps messages deterministic.
    let mut span_of: FxHashMap<ExprId, Span> = FxHashMap::default();
    let mut stack = Vec::new();
    for &(root, span) in &roots {
        stack.push(root);
        while let Some(e) = stack.pop() {
            if span_of.contains_key(&e) {
                continue;
            }
            span_of.insert(e, span);
            if is_opaque(dae.exprs(), e) {
                continue;
            }
            stack.extend(dae.exprs().children(e));
        }
    }
    let mut order: Vec<ExprId> = span_of.keys().copied().collect();
    order.sort_unstable();
    let mut x = Extractor {
        surfaces: Vec::new(),
        surface_of: FxHashMap::default(),
        relation_of: FxHashMap::default(),
    };
    let mut new: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    let mut samples: Vec<Sample> = Vec::new();
    for e in order {
        let node = dae.exprs().get(e).clone();
        let map = |c: &ExprId| new.get(c).copied().unwrap_or(*c);
        let span = span_of[&e];
        let rewritten = match node {
            _ if is_opaque(dae.exprs(), e) => continue,
            Node::Binary(op @ (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge), a, b) => {
                let (a, b) = (map(&a), map(&b));
                if is_discrete(dae, a) && is_discrete(dae, b) {
                    dae.flat.exprs.binary(op, a, b)
                } else {
                    let test = match op {
                        BinOp::Lt => Test::Negative,
                        BinOp::Le => Test::NonPositive,
                        BinOp::Gt => Test::Positive,
                        _ => Test::NonNegative,
                    };
                    x.relation(dae, a, b, test, span)
                }
            }
            Node::Call(Callee::Builtin(b @ (Builtin::Abs | Builtin::Sign)), args) if args.len() == 1 => {
                let a = map(&args[0]);
                if is_discrete(dae, a) {
                    dae.flat.exprs.builtin(b, vec![a])
                } else {
                    let zero = dae.flat.exprs.real(0.0);
                    if b == Builtin::Abs {
                        // abs(a) = if a >= 0 then a else -a
                        let r = x.relation(dae, a, zero, Test::NonNegative, span);
                        let minus = dae.flat.exprs.unary(UnOp::Neg, a);
                        dae.flat.exprs.add(Node::If(r, a, minus))
                    } else {
                        // sign(a) = (a > 0) - (a < 0): both read one surface, and sign(0) is 0.
                        let p = x.relation(dae, a, zero, Test::Positive, span);
                        let n = x.relation(dae, a, zero, Test::Negative, span);
                        dae.flat.exprs.binary(BinOp::Sub, p, n)
                    }
                }
            }
            Node::Call(Callee::Builtin(Builtin::Sample), args) if args.len() == 2 => {
                let number = samples.len() + 1;
                let var = dae.add_relation_variable(
                    format!("$sample{number}"),
                    format!(
                        "sample({}, {})",
                        dae.flat.expr_text(args[0]),
                        dae.flat.expr_text(args[1])
                    ),
                    span,
                );
                samples.push(Sample {
                    var,
                    start: map(&args[0]),
                    interval: map(&args[1]),
                    span,
                });
                dae.flat.exprs.var(var)
            }
            Node::Call(Callee::Builtin(b @ (Builtin::Min | Builtin::Max)), args) if args.len() == 2 => {
                let (a, c) = (map(&args[0]), map(&args[1]));
                if is_discrete(dae, a) && is_discrete(dae, c) {
                    dae.flat.exprs.builtin(b, vec![a, c])
                } else {
                    // min(a, c) = if a <= c then a else c; max(a, c) = if a >= c then a else c.
                    let test = if b == Builtin::Min {
                        Test::NonPositive
                    } else {
                        Test::NonNegative
                    };
                    let r = x.relation(dae, a, c, test, span);
                    dae.flat.exprs.add(Node::If(r, a, c))
                }
            }
            _ => {
                if dae.exprs().children(e).all(|c| map(&c) == c) {
                    continue;
                }
                crate::symbolic::rebuild(&mut dae.flat.exprs, e, &new)
            }
        };
        if rewritten != e {
            new.insert(e, rewritten);
        }
    }
    let map = |c: ExprId| new.get(&c).copied().unwrap_or(c);
    for eq in dae.equations.iter_mut().chain(dae.initial_equations.iter_mut()) {
        eq.lhs = map(eq.lhs);
        eq.rhs = map(eq.rhs);
    }
    let when_conditions = dae
        .flat
        .whens
        .iter()
        .map(|w| w.branches.iter().map(|b| map(b.condition)).collect())
        .collect();
    dae.events = EventSet {
        surfaces: x.surfaces,
        samples,
        when_conditions,
    };
}

/// Nodes whose inside is left alone: `noEvent(e)` and `smooth(n, e)` ask for no events.
fn is_opaque(arena: &ExprArena, e: ExprId) -> bool {
    matches!(
        arena.get(e),
        Node::Call(Callee::Builtin(Builtin::NoEvent | Builtin::Smooth), _)
    )
}

/// Whether `e` can change only at events: it reads no state, algebraic variable or time.
fn is_discrete(dae: &Dae, e: ExprId) -> bool {
    let arena = dae.exprs();
    let mut stack = vec![e];
    while let Some(id) = stack.pop() {
        match arena.get(id) {
            Node::Var(v) if matches!(dae.kind(*v), VarKind::State | VarKind::Algebraic) => return false,
            Node::Time | Node::Local(_) => return false,
            Node::Call(Callee::Builtin(Builtin::Der), _) => return false,
            _ => stack.extend(arena.children(id)),
        }
    }
    true
}

struct Extractor {
    surfaces: Vec<Surface>,
    surface_of: FxHashMap<ExprId, usize>,
    relation_of: FxHashMap<(ExprId, Test), ExprId>,
}

impl Extractor {
    /// The node of the relation variable for `a test-compared-with b`, made on first use.
    fn relation(&mut self, dae: &mut Dae, a: ExprId, b: ExprId, test: Test, span: Span) -> ExprId {
        let d = if dae.exprs().literal(b) == Some(0.0) {
            a
        } else {
            dae.flat.exprs.binary(BinOp::Sub, a, b)
        };
        if let Some(&node) = self.relation_of.get(&(d, test)) {
            return node;
        }
        let symbol = match test {
            Test::Positive => ">",
            Test::NonNegative => ">=",
            Test::Negative => "<",
            Test::NonPositive => "<=",
        };
        let text = format!("{} {symbol} 0", dae.flat.expr_text(d));
        let k = match self.surface_of.get(&d) {
            Some(&k) => k,
            None => {
                self.surfaces.push(Surface {
                    expr: d,
                    relations: Vec::new(),
                    span,
                    text: text.clone(),
                });
                self.surface_of.insert(d, self.surfaces.len() - 1);
                self.surfaces.len() - 1
            }
        };
        let number = self.relation_of.len() + 1;
        let v = dae.add_relation_variable(format!("$rel{number}"), format!("the relation `{text}`"), span);
        self.surfaces[k].relations.push((v, test));
        let node = dae.flat.exprs.var(v);
        self.relation_of.insert((d, test), node);
        node
    }
}
