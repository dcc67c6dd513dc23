//! Algebraic simplification into a canonical form, and linear forms.
//!
//! Input: an arena and an expression id. Output: the id of an equivalent expression in
//! canonical form: constants folded with the same arithmetic as the evaluator (so folded numbers
//! agree bit for bit with the interpreter), sums flattened into `c1*m1 + c2*m2 + ... + r` with
//! one term per distinct monomial and monomials ordered by id, products flattened into
//! `c * b1^e1 * ... / (d1^f1 * ...)` with one factor per distinct base, neutral and absorbing
//! elements removed, `if` with a constant condition reduced to its branch. [`linear_form`]
//! writes an expression as `Σ c_i·v_i + r` for alias elimination and linear loops.
//!
//! The rewrites follow the usual algebra of real numbers rather than IEEE corner cases:
//! `x*0`, `x - x` and `x/x` become 0, 0 and 1 even where `x` is infinite or NaN. Powers are
//! combined only where that is exact for every real base (`x^2*x^3 = x^5`, `(x^2)^3 = x^6`),
//! never `(x^0.5)^2 = x`. It deliberately does not expand products of sums, apply
//! trigonometric identities or factor.
//!
//! No recursion over expression depth: nodes are processed in increasing id order with a memo
//! table. A chain of `+`/`-` nodes whose inner nodes are used only by other `+`/`-` nodes is
//! collected once, from its top node, by pushing coefficients down the chain in decreasing id
//! order, so a left-deep sum of n terms costs O(n log n). Products are handled the same way.
//! One pattern stays quadratic: constants distributed over nested sums, as in
//! `2*(1 + 2*(1 + 2*(...)))`, re-collect the inner sum at every level.

use super::{FxHashSet, eval, reachable};
use crate::builtins::{Builtin, BuiltinKind};
use crate::expr::{BinOp, Callee, ExprArena, ExprId, FxHashMap, Node, UnOp, VarId};

/// Simplifies `id`; see the module documentation for the canonical form.
pub fn simplify(arena: &mut ExprArena, id: ExprId) -> ExprId {
    Simplifier::new().simplify(arena, id)
}

/// A simplifier that remembers its results, so simplifying many expressions that share
/// subexpressions (the equations of one model) does the shared work once. Its memo holds ids,
/// so one simplifier must only ever be used with one arena.
#[derive(Debug, Default, Clone)]
pub struct Simplifier {
    memo: FxHashMap<ExprId, ExprId>,
}

/// How a node of one `simplify` call is handled.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    /// Simplified on its own and memoised.
    Own,
    /// Absorbed by the sum or product chain above it: every parent is a node of that chain.
    Inner(Kind),
}

/// The role of every node of `order` (ascending ids, reachable from `root`). Parents are seen
/// before their children by walking `order` backwards. `+`/`-` nodes join a sum chain, `*`/`/`
/// nodes a product chain, and unary minus joins whichever chain its parents belong to, so that
/// alternating `-(a*-(b*...))` (which the chain rule produces through `cos`) is one chain.
fn roles(
    arena: &ExprArena,
    root: ExprId,
    order: &[ExprId],
    memo: &FxHashMap<ExprId, ExprId>,
) -> FxHashMap<ExprId, Role> {
    let mut roles: FxHashMap<ExprId, Role> = FxHashMap::default();
    roles.insert(root, Role::Own);
    for &p in order.iter().rev() {
        if memo.contains_key(&p) {
            continue;
        }
        let chain = match (arena.get(p), roles.get(&p)) {
            (Node::Unary(UnOp::Neg, _), Some(Role::Inner(k))) => *k,
            (node, _) => kind(node),
        };
        for c in arena.children(p) {
            let joins = match (chain, arena.get(c)) {
                (_, Node::Unary(UnOp::Neg, _)) => chain != Kind::Other,
                (k, node) => k != Kind::Other && kind(node) == k,
            };
            let role = if joins { Role::Inner(chain) } else { Role::Own };
            let entry = roles.entry(c).or_insert(role);
            if *entry != role {
                *entry = Role::Own;
            }
        }
    }
    roles
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Sum,
    Product,
    Other,
}

fn kind(node: &Node) -> Kind {
    match node {
        Node::Unary(UnOp::Neg, _) | Node::Binary(BinOp::Add | BinOp::Sub, ..) => Kind::Sum,
        Node::Binary(BinOp::Mul | BinOp::Div, ..) => Kind::Product,
        _ => Kind::Other,
    }
}

impl Simplifier {
    pub fn new() -> Simplifier {
        Simplifier::default()
    }

    /// Simplifies `root`, reusing results of earlier calls on this simplifier.
    pub fn simplify(&mut self, arena: &mut ExprArena, root: ExprId) -> ExprId {
        // Variables are already simple; answering them here spares the bookkeeping below for
        // the most common solution of all (`der(x) = v`).
        if matches!(arena.get(root), Node::Var(_) | Node::Local(_) | Node::Time) {
            return root;
        }
        if let Some(&s) = self.memo.get(&root) {
            return s;
        }
        let memo = &self.memo;
        let order = reachable(arena, root, &|e| memo.contains_key(&e));
        let roles = roles(arena, root, &order, &self.memo);
        // Values of constant subexpressions, computed node by node with the evaluator's
        // arithmetic, so that folding `(1 + 2) + 4` gives the interpreter's bits.
        let mut constant: FxHashMap<ExprId, f64> = FxHashMap::default();
        for &e in &order {
            if let Some(&s) = self.memo.get(&e) {
                if let Some(v) = arena.literal(s) {
                    constant.insert(e, v);
                }
                continue;
            }
            if let Some(v) = constant_value(arena, e, &constant) {
                constant.insert(e, v);
            }
            if roles.get(&e).is_some_and(|r| *r != Role::Own) {
                continue;
            }
            let s = match constant.get(&e) {
                Some(&v) if v.is_finite() => literal_like(arena, e, v),
                _ => self.node(arena, e, &roles),
            };
            self.memo.insert(e, s);
        }
        self.memo.get(&root).copied().unwrap_or(root)
    }

    fn get(&self, e: ExprId) -> ExprId {
        self.memo.get(&e).copied().unwrap_or(e)
    }

    fn node(&mut self, arena: &mut ExprArena, e: ExprId, roles: &FxHashMap<ExprId, Role>) -> ExprId {
        match arena.get(e).clone() {
            Node::Unary(UnOp::Neg, _) | Node::Binary(BinOp::Add | BinOp::Sub, ..) => {
                self.chain(arena, e, Kind::Sum, roles)
            }
            Node::Binary(BinOp::Mul | BinOp::Div, ..) => self.chain(arena, e, Kind::Product, roles),
            Node::Binary(BinOp::Pow, a, b) => {
                let (sa, sb) = (self.get(a), self.get(b));
                power(arena, sa, sb)
            }
            Node::Unary(UnOp::Not, a) => {
                let sa = self.get(a);
                match arena.get(sa) {
                    Node::Unary(UnOp::Not, inner) => *inner,
                    _ => match arena.literal(sa) {
                        Some(v) => arena.boolean(eval::unary(UnOp::Not, v) != 0.0),
                        None => arena.unary(UnOp::Not, sa),
                    },
                }
            }
            Node::Binary(op, a, b) => {
                let (sa, sb) = (self.get(a), self.get(b));
                logical(arena, op, sa, sb)
            }
            Node::If(c, a, b) => {
                let (sc, sa, sb) = (self.get(c), self.get(a), self.get(b));
                match arena.literal(sc) {
                    Some(v) if v != 0.0 => sa,
                    Some(_) => sb,
                    None if sa == sb => sa,
                    None => arena.add(Node::If(sc, sa, sb)),
                }
            }
            Node::Call(callee, args) => {
                let sargs: Vec<ExprId> = args.iter().map(|a| self.get(*a)).collect();
                call(arena, callee, sargs)
            }
            Node::CallOutput(a, k) => {
                let sa = self.get(a);
                arena.add(Node::CallOutput(sa, k))
            }
            _ => e,
        }
    }

    /// Simplifies the top node `e` of a chain of `+`/`-`/unary minus (or `*`/`/`) nodes.
    /// Weights (coefficients, or exponents for products) are pushed from `e` down to the inner
    /// nodes of the chain in decreasing id order, which visits every parent before its children
    /// and handles shared inner nodes once; the outer nodes reached are already simplified and
    /// are decomposed into terms (factors).
    fn chain(&mut self, arena: &mut ExprArena, e: ExprId, want: Kind, roles: &FxHashMap<ExprId, Role>) -> ExprId {
        let is_inner = |_: &ExprArena, memo: &FxHashMap<ExprId, ExprId>, c: ExprId| {
            roles.get(&c) == Some(&Role::Inner(want)) && !memo.contains_key(&c)
        };
        let mut inner = vec![e];
        let mut seen = FxHashSet::default();
        seen.insert(e);
        let mut i = 0;
        while i < inner.len() {
            for c in arena.children(inner[i]) {
                if is_inner(arena, &self.memo, c) && seen.insert(c) {
                    inner.push(c);
                }
            }
            i += 1;
        }
        inner.sort_unstable_by(|a, b| b.cmp(a));
        let mut weight: FxHashMap<ExprId, f64> = FxHashMap::default();
        weight.insert(e, 1.0);
        let mut outer: Vec<(ExprId, f64)> = Vec::new();
        // The sign collected from unary minus nodes inside a product chain.
        let mut sign = 1.0;
        for n in inner {
            let w = weight.get(&n).copied().unwrap_or(0.0);
            let parts: [(ExprId, f64); 2] = match arena.get(n) {
                Node::Unary(UnOp::Neg, a) if want == Kind::Sum => [(*a, -w), (*a, 0.0)],
                Node::Unary(UnOp::Neg, a) => {
                    // Exponents inside a product chain are whole numbers: (-a)^w = (-1)^w·a^w.
                    if w % 2.0 != 0.0 {
                        sign = -sign;
                    }
                    [(*a, w), (*a, 0.0)]
                }
                Node::Binary(BinOp::Add | BinOp::Mul, a, b) => [(*a, w), (*b, w)],
                Node::Binary(BinOp::Sub | BinOp::Div, a, b) => [(*a, w), (*b, -w)],
                _ => continue,
            };
            let count = if matches!(arena.get(n), Node::Unary(..)) { 1 } else { 2 };
            for &(c, cw) in &parts[..count] {
                if is_inner(arena, &self.memo, c) {
                    *weight.entry(c).or_insert(0.0) += cw;
                } else {
                    outer.push((self.get(c), cw));
                }
            }
        }
        if want == Kind::Sum {
            let mut sum = Sum::default();
            for (s, c) in outer {
                sum.push(arena, s, c);
            }
            sum.build(arena)
        } else {
            let mut product = Product::new();
            product.coefficient = sign;
            for (s, x) in outer {
                product.push(arena, s, x);
            }
            product.build(arena)
        }
    }
}

/// A constant as a node: `e` itself when it already is that literal, else a new `Real`.
fn literal_like(arena: &mut ExprArena, e: ExprId, v: f64) -> ExprId {
    match arena.get(e) {
        Node::Real(_) | Node::Int(_) | Node::Bool(_) => e,
        Node::Unary(UnOp::Not, _) => arena.boolean(v != 0.0),
        Node::Binary(op, ..) if op.is_relation() || matches!(op, BinOp::And | BinOp::Or) => arena.boolean(v != 0.0),
        _ => arena.real(v),
    }
}

/// The value of `e` when all its children are constants, with the evaluator's arithmetic.
fn constant_value(arena: &ExprArena, e: ExprId, known: &FxHashMap<ExprId, f64>) -> Option<f64> {
    let k = |c: &ExprId| known.get(c).copied();
    match arena.get(e) {
        Node::Real(_) | Node::Int(_) | Node::Bool(_) => arena.literal(e),
        Node::Unary(op, a) => Some(eval::unary(*op, k(a)?)),
        Node::Binary(op, a, b) => Some(eval::binary(*op, k(a)?, k(b)?)),
        Node::If(c, a, b) => {
            if k(c)? != 0.0 {
                k(a)
            } else {
                k(b)
            }
        }
        Node::Call(Callee::Builtin(Builtin::NoEvent | Builtin::Smooth), args) => args.last().and_then(k),
        Node::Call(Callee::Builtin(b), args) => {
            let values: Option<Vec<f64>> = args.iter().map(k).collect();
            eval::builtin(*b, &values?)
        }
        _ => None,
    }
}

/// Relations and logical operators: folded when constant, `true and x` is `x` and so on.
fn logical(arena: &mut ExprArena, op: BinOp, a: ExprId, b: ExprId) -> ExprId {
    let (la, lb) = (arena.literal(a), arena.literal(b));
    if let (Some(x), Some(y)) = (la, lb) {
        return arena.boolean(eval::binary(op, x, y) != 0.0);
    }
    let absorbing = |v: Option<f64>| v.map(|v| v != 0.0);
    match (op, absorbing(la), absorbing(lb)) {
        (BinOp::And, Some(true), _) | (BinOp::Or, Some(false), _) => b,
        (BinOp::And, _, Some(true)) | (BinOp::Or, _, Some(false)) => a,
        (BinOp::And, Some(false), _) | (BinOp::And, _, Some(false)) => arena.boolean(false),
        (BinOp::Or, Some(true), _) | (BinOp::Or, _, Some(true)) => arena.boolean(true),
        _ => arena.binary(op, a, b),
    }
}

/// A call with simplified arguments: numeric built-ins folded when their arguments are
/// constants, `noEvent` and `smooth` of a constant reduced to it, `der` of a constant is 0.
fn call(arena: &mut ExprArena, callee: Callee, args: Vec<ExprId>) -> ExprId {
    if let Callee::Builtin(b) = callee {
        let values: Option<Vec<f64>> = args.iter().map(|a| arena.literal(*a)).collect();
        if let Some(values) = values {
            match b {
                Builtin::NoEvent | Builtin::Smooth | Builtin::Pre => {
                    if let Some(&last) = args.last() {
                        return last;
                    }
                }
                Builtin::Der if args.len() == 1 => return arena.real(0.0),
                _ if matches!(b.info().kind, BuiltinKind::Math | BuiltinKind::EventMath) => {
                    if let Some(v) = eval::builtin(b, &values).filter(|v| v.is_finite()) {
                        return arena.real(v);
                    }
                }
                _ => {}
            }
        }
    }
    arena.call(callee, args)
}

/// `a^b` for simplified `a` and `b`.
fn power(arena: &mut ExprArena, a: ExprId, b: ExprId) -> ExprId {
    match (arena.literal(a), arena.literal(b)) {
        (Some(x), Some(y)) => {
            let v = eval::binary(BinOp::Pow, x, y);
            if v.is_finite() {
                return arena.real(v);
            }
        }
        // `powf(x, 0)` and `powf(1, y)` are 1 even for NaN, so these are exact.
        (_, Some(0.0)) => return arena.real(1.0),
        (Some(1.0), _) => return arena.real(1.0),
        (_, Some(1.0)) => return a,
        (_, Some(y)) if is_integer(y) => {
            // An integer power distributes over a product and multiplies exponents exactly.
            let mut product = Product::new();
            product.push(arena, a, y);
            return product.build(arena);
        }
        _ => {}
    }
    arena.binary(BinOp::Pow, a, b)
}

fn is_integer(v: f64) -> bool {
    v.fract() == 0.0 && v.abs() <= 9.007_199_254_740_992e15
}

/// A number as a literal node: an `Int` when it is a small whole number (exponents print as
/// `x^2`), else a `Real`.
fn number(arena: &mut ExprArena, v: f64) -> ExprId {
    if is_integer(v) && v.abs() < 1e15 {
        arena.int(v as i64)
    } else {
        arena.real(v)
    }
}

/// Splits a canonical monomial into its numeric coefficient and the rest: `-x` is `(-1, x)`,
/// `3*x` is `(3, x)`, `x/3` is `(1/3, x)`, `2/x` is `(2, 1/x)`. This inverts [`scaled`].
pub(crate) fn split_coefficient(arena: &mut ExprArena, s: ExprId) -> (f64, ExprId) {
    let (sign, s) = match arena.get(s) {
        Node::Unary(UnOp::Neg, a) => (-1.0, *a),
        _ => (1.0, s),
    };
    let usable = |v: f64| v.is_finite() && v != 0.0;
    match arena.get(s).clone() {
        Node::Binary(BinOp::Mul, c, m) if arena.literal(c).is_some_and(usable) => {
            (sign * arena.literal(c).unwrap_or(1.0), m)
        }
        Node::Binary(BinOp::Div, m, c) if arena.literal(c).is_some_and(usable) => {
            (sign / arena.literal(c).unwrap_or(1.0), m)
        }
        Node::Binary(BinOp::Div, c, d) if arena.literal(c).is_some_and(|v| usable(v) && v != 1.0) => {
            let one = arena.real(1.0);
            (sign * arena.literal(c).unwrap_or(1.0), arena.binary(BinOp::Div, one, d))
        }
        _ => (sign, s),
    }
}

/// `c*m` in canonical form for a monomial `m` without a coefficient of its own.
pub(crate) fn scaled(arena: &mut ExprArena, c: f64, m: ExprId) -> ExprId {
    if c == 1.0 {
        return m;
    }
    if c == -1.0 {
        return arena.unary(UnOp::Neg, m);
    }
    if let Node::Binary(BinOp::Div, one, d) = *arena.get(m)
        && arena.literal(one) == Some(1.0)
    {
        let c = arena.real(c);
        return arena.binary(BinOp::Div, c, d);
    }
    // `x/3` rather than `0.333...*x` when the coefficient is the reciprocal of a whole number.
    let r = 1.0 / c.abs();
    if r >= 2.0 && is_integer(r) && 1.0 / r == c.abs() {
        let r = number(arena, r);
        let q = arena.binary(BinOp::Div, m, r);
        return if c < 0.0 { arena.unary(UnOp::Neg, q) } else { q };
    }
    let c = arena.real(c);
    arena.binary(BinOp::Mul, c, m)
}

/// Sorts weighted items by id (a deterministic order), adds the weights of equal ids and drops
/// those whose weights cancel: `2*x + 3*x` is `5*x`, `x^2 * x^-2` is 1.
fn merge(mut items: Vec<(ExprId, f64)>) -> Vec<(ExprId, f64)> {
    items.sort_by_key(|t| t.0);
    let mut merged: Vec<(ExprId, f64)> = Vec::with_capacity(items.len());
    for (m, c) in items {
        match merged.last_mut() {
            Some(last) if last.0 == m => last.1 += c,
            _ => merged.push((m, c)),
        }
    }
    merged.retain(|t| t.1 != 0.0);
    merged
}

/// A sum being collected: monomials with coefficients, and a constant.
#[derive(Default)]
pub(crate) struct Sum {
    pub terms: Vec<(ExprId, f64)>,
    pub constant: f64,
}

impl Sum {
    /// Adds `c * s` for a simplified `s`, decomposing canonical sums into their terms.
    pub fn push(&mut self, arena: &mut ExprArena, s: ExprId, c: f64) {
        let mut stack = vec![(s, c)];
        while let Some((s, c)) = stack.pop() {
            if c == 0.0 {
                continue;
            }
            if let Some(v) = arena.literal(s) {
                self.constant += c * v;
                continue;
            }
            match *arena.get(s) {
                Node::Binary(BinOp::Add, a, b) => stack.extend([(b, c), (a, c)]),
                Node::Binary(BinOp::Sub, a, b) => stack.extend([(b, -c), (a, c)]),
                Node::Unary(UnOp::Neg, a) => stack.push((a, -c)),
                _ => {
                    let (k, m) = split_coefficient(arena, s);
                    self.terms.push((m, c * k));
                }
            }
        }
    }

    /// The canonical sum: terms merged and ordered by monomial id, the constant last.
    pub fn build(self, arena: &mut ExprArena) -> ExprId {
        let mut acc: Option<ExprId> = None;
        for (m, c) in merge(self.terms) {
            acc = Some(match acc {
                None => scaled(arena, c, m),
                Some(acc) if c < 0.0 => {
                    let t = scaled(arena, -c, m);
                    arena.binary(BinOp::Sub, acc, t)
                }
                Some(acc) => {
                    let t = scaled(arena, c, m);
                    arena.binary(BinOp::Add, acc, t)
                }
            });
        }
        let r = self.constant;
        match acc {
            None => arena.real(r),
            Some(acc) if r == 0.0 => acc,
            Some(acc) if r < 0.0 => {
                let r = arena.real(-r);
                arena.binary(BinOp::Sub, acc, r)
            }
            Some(acc) => {
                let r = arena.real(r);
                arena.binary(BinOp::Add, acc, r)
            }
        }
    }
}

/// A product being collected: a numeric coefficient and bases with constant exponents.
pub(crate) struct Product {
    pub coefficient: f64,
    pub factors: Vec<(ExprId, f64)>,
}

impl Product {
    pub fn new() -> Product {
        Product {
            coefficient: 1.0,
            factors: Vec::new(),
        }
    }

    /// Multiplies by `s^x` for a simplified `s`, decomposing canonical products. A power
    /// `b^k` contributes the factor `b` with exponent `k*x` only where that is exact for every
    /// real `b` (`k` whole, or `x` is ±1).
    pub fn push(&mut self, arena: &mut ExprArena, s: ExprId, x: f64) {
        let mut stack = vec![(s, x)];
        while let Some((s, x)) = stack.pop() {
            if x == 0.0 {
                continue;
            }
            if let Some(v) = arena.literal(s) {
                // Dividing rather than multiplying by a reciprocal keeps `a/b` folded exactly.
                let folded = if x == 1.0 {
                    self.coefficient * v
                } else if x == -1.0 {
                    self.coefficient / v
                } else {
                    self.coefficient * eval::binary(BinOp::Pow, v, x)
                };
                if folded.is_finite() || !self.coefficient.is_finite() {
                    self.coefficient = folded;
                } else {
                    // Keep `x/0` visible instead of folding an infinity into the coefficient.
                    self.factors.push((s, x));
                }
                continue;
            }
            match *arena.get(s) {
                Node::Binary(BinOp::Mul, a, b) => stack.extend([(b, x), (a, x)]),
                Node::Binary(BinOp::Div, a, b) => stack.extend([(b, -x), (a, x)]),
                Node::Unary(UnOp::Neg, a) if is_integer(x) => {
                    if x % 2.0 != 0.0 {
                        self.coefficient = -self.coefficient;
                    }
                    stack.push((a, x));
                }
                Node::Binary(BinOp::Pow, b, k) => match arena.literal(k) {
                    Some(k) if is_integer(k) || x.abs() == 1.0 => self.factors.push((b, k * x)),
                    _ => self.factors.push((s, x)),
                },
                _ => self.factors.push((s, x)),
            }
        }
    }

    /// The canonical product `c * n1 * n2 / (d1 * d2)`, factors ordered by base id. A constant
    /// times a single sum is distributed over the sum's terms, so that `2*(x + y) - 2*x`
    /// collects to `2*y`.
    pub fn build(self, arena: &mut ExprArena) -> ExprId {
        // Zero absorbs the other factors, but not a kept literal factor: `push` keeps one only
        // when folding it would divide by zero, and `0/0` must stay NaN.
        if self.coefficient == 0.0 && !self.factors.iter().any(|(b, _)| arena.literal(*b).is_some()) {
            return arena.real(0.0);
        }
        let merged = merge(self.factors);
        let c = self.coefficient;
        if merged.is_empty() {
            return arena.real(c);
        }
        if let [(b, x)] = merged[..]
            && x == 1.0
            && c != 1.0
            && matches!(arena.get(b), Node::Binary(BinOp::Add | BinOp::Sub, ..))
        {
            let mut sum = Sum::default();
            sum.push(arena, b, c);
            return sum.build(arena);
        }
        let mut num: Option<ExprId> = None;
        let mut den: Option<ExprId> = None;
        for (b, x) in merged {
            let (slot, x) = if x > 0.0 { (&mut num, x) } else { (&mut den, -x) };
            let f = if x == 1.0 {
                b
            } else {
                let k = number(arena, x);
                arena.binary(BinOp::Pow, b, k)
            };
            *slot = Some(match *slot {
                None => f,
                Some(acc) => arena.binary(BinOp::Mul, acc, f),
            });
        }
        let m = match (num, den) {
            (Some(n), None) => n,
            (Some(n), Some(d)) => arena.binary(BinOp::Div, n, d),
            (None, Some(d)) => {
                let one = arena.real(1.0);
                arena.binary(BinOp::Div, one, d)
            }
            (None, None) => return arena.real(c),
        };
        scaled(arena, c, m)
    }
}

/// `Σ c_i·v_i + rest`: an expression affine in the unknowns with constant coefficients.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearForm {
    /// Unknowns with their nonzero coefficients, ordered by variable id.
    pub terms: Vec<(VarId, f64)>,
    /// The part free of unknowns, simplified (`0` when there is none).
    pub rest: ExprId,
}

/// Writes `id` as `Σ c_i·v_i + rest` with numeric `c_i`, `v_i` the unknowns and `rest` free of
/// unknowns, after simplification; `None` when an unknown occurs in any other way (under a
/// function, multiplied by a parameter or another unknown, inside `der(...)` or `pre(...)`).
/// For `a = b` the form of `a - b` is `{a: 1, b: -1}` with rest `0`.
pub fn linear_form(arena: &mut ExprArena, id: ExprId, is_unknown: &dyn Fn(VarId) -> bool) -> Option<LinearForm> {
    let s = simplify(arena, id);
    let mut sum = Sum::default();
    sum.push(arena, s, 1.0);
    let mut terms = Vec::new();
    let mut rest = Sum {
        terms: Vec::new(),
        constant: sum.constant,
    };
    for (m, c) in sum.terms {
        match *arena.get(m) {
            Node::Var(v) if is_unknown(v) => terms.push((v, c)),
            _ if mentions(arena, m, is_unknown) => return None,
            _ => rest.terms.push((m, c)),
        }
    }
    terms.sort_by_key(|t| t.0);
    Some(LinearForm {
        terms,
        rest: rest.build(arena),
    })
}

/// Whether any variable of `id` (also inside `der` and `pre`) satisfies `pred`.
fn mentions(arena: &ExprArena, id: ExprId, pred: &dyn Fn(VarId) -> bool) -> bool {
    reachable(arena, id, &|_| false)
        .into_iter()
        .any(|e| matches!(arena.get(e), Node::Var(v) if pred(*v)))
}
