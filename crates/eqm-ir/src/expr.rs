//! Scalar expressions in an arena with typed ids and hash-consing.
//!
//! Input: nodes built by the flattener (and later by the symbolic core). Output: [`ExprId`]s
//! that every later stage passes around instead of trees. The same node is stored once, so
//! structurally equal subexpressions share an id and comparing them is an integer comparison.
//! Children always have smaller ids than their parents, which lets passes walk the arena in
//! index order instead of recursing. This module deliberately does no simplification.

use crate::builtins::{Builtin, ExprBuilder};
use hashbrown::hash_table::HashTable;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

pub use crate::ids::{BinOp, ExprId, FuncId, UnOp, VarId};

/// What a call calls.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Callee {
    Builtin(Builtin),
    User(FuncId),
    /// External C function `k` of the model (`FlatModel::externals[k]`), whose arguments are
    /// all passed as doubles (see [`crate::external`]).
    External(u32),
}

/// One expression node. Real constants are stored by their bit pattern so nodes can be hashed.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Node {
    Real(u64),
    Int(i64),
    Bool(bool),
    Str(Box<str>),
    Var(VarId),
    /// A local variable (input, output or protected) of a function body.
    Local(u32),
    Time,
    Unary(UnOp, ExprId),
    Binary(BinOp, ExprId, ExprId),
    If(ExprId, ExprId, ExprId),
    Call(Callee, Box<[ExprId]>),
    /// Output `k` of a multi-output user function call (`(a, b) = f(x)` gives two of these).
    CallOutput(ExprId, u32),
}

/// FxHash: a fast, deterministic hasher for the hash-consing table. The table is only used for
/// lookups, never iterated, so its order cannot leak into output.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }

    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

pub type FxBuild = BuildHasherDefault<FxHasher>;
pub type FxHashMap<K, V> = HashMap<K, V, FxBuild>;
pub type FxHashSet<T> = std::collections::HashSet<T, FxBuild>;

/// The arena. Ids are indices into `nodes`.
#[derive(Debug, Default, Clone)]
pub struct ExprArena {
    nodes: Vec<Node>,
    /// The node of each variable by `VarId` ([`NO_NODE`] when it has none yet). Variable
    /// references are most of the nodes looked up while flattening; an array indexed by
    /// variable answers them without hashing and keeps them out of `dedup`.
    var_nodes: Vec<u32>,
    /// The node of each small non-negative integer literal by value ([`NO_NODE`] when it has
    /// none yet), for the same reason: for-loops look up their indices (`m[i - 1]` makes one
    /// per index) far more often than anything else, and each lookup in the table compared
    /// with a node made long before, a cache miss in a large model.
    small_ints: Vec<u32>,
    /// Every other node, for hash-consing: the ids only, compared through `nodes`, so that each
    /// node is stored once (a map keyed by `Node` would keep a second copy of every node, and
    /// clone the argument list of every call). Each id keeps its node's hash, so that growing
    /// the table and most failed comparisons do not have to read the node.
    dedup: HashTable<(ExprId, u32)>,
    /// How many nodes were placed next to each node in `dedup` (see [`placement`]), by id,
    /// saturating at [`PLACED_LIMIT`]; shorter than `nodes` where none were.
    placed: Vec<u8>,
}

const NO_NODE: u32 = u32::MAX;
/// How many variables [`ExprArena::vars_in`] finds by scanning before it keeps a set.
const VARS_IN_SCAN: usize = 32;
/// Integer literals below this are looked up in `small_ints` (at most 16 MiB of it).
const SMALL_INT_LIMIT: i64 = 1 << 22;

/// The most nodes placed next to one child (see [`placement`]).
const PLACED_LIMIT: u8 = 2;

/// Where a node goes in the hash-consing table: its own hash (FxHash, deterministic; the table
/// is only used for lookups), and the newest non-literal child next to which it may be placed.
///
/// A node is almost always built right after its children, so a plain hash would send
/// consecutive nodes to random places in a table that for a large model is far larger than the
/// cache, one cache miss per node; this made hash-consing grow faster than the model. Placing a
/// node in a window of buckets next to its newest child keeps the buckets in use close
/// together. Leaves have no children and keep their plain hash.
///
/// Literal children are not taken as the newest child: a constant made late (the `-1` that
/// alias elimination multiplies half a million variables by) would otherwise gather all its
/// parents in its one window. The same holds for any child with many parents (a parameter
/// read by every stage of a chain, a constant subexpression): its window would fill, and every
/// insertion would probe through all the nodes placed there before, which made building the
/// symbolic Jacobian of a chain grow like N^1.5. So only the first [`PLACED_LIMIT`] parents of
/// a child go next to it (`ExprArena::placed` counts them); later ones keep their plain hash,
/// and a lookup of a parent of such a child tries both places.
fn placement(nodes: &[Node], node: &Node) -> (u32, Option<ExprId>) {
    let hash = (FxBuild::default().hash_one(node) >> 32) as u32;
    let placing = |id: &ExprId| {
        let literal = matches!(
            nodes.get(id.0 as usize),
            Some(Node::Real(_) | Node::Int(_) | Node::Bool(_) | Node::Str(_))
        );
        (!literal).then_some(*id)
    };
    let newest_child = match node {
        Node::Unary(_, a) | Node::CallOutput(a, _) => placing(a),
        Node::Binary(_, a, b) => placing(a).max(placing(b)),
        Node::If(c, a, b) => placing(c).max(placing(a)).max(placing(b)),
        Node::Call(_, args) => args.iter().filter_map(placing).max(),
        _ => None,
    };
    (hash, newest_child)
}

/// The stored hash of a node with own hash `hash` placed next to `child`: a window of 4096
/// buckets shared by the parents of 1024 consecutive children, at most [`PLACED_LIMIT`] each,
/// so that a window is at most half full.
fn placed_hash(hash: u32, child: ExprId) -> u32 {
    child.0.wrapping_mul(4) ^ (hash & 0xFFF)
}

/// The table's 64-bit hash of a stored 32-bit one. The table picks buckets with the low bits,
/// which are the stored hash itself (see [`placement`]), and tags entries with the top seven,
/// which are a multiplicative mix of it so that neighbouring nodes get different tags.
fn table_hash(hash: u32) -> u64 {
    (u64::from(hash.wrapping_mul(0x9E37_79B9)) << 32) | u64::from(hash)
}

impl ExprArena {
    pub fn new() -> ExprArena {
        ExprArena::default()
    }

    /// Stores `node` once and returns its id.
    pub fn add(&mut self, node: Node) -> ExprId {
        if let Node::Var(v) = node {
            return self.var(v);
        }
        if let Node::Int(v) = node
            && (0..SMALL_INT_LIMIT).contains(&v)
        {
            let k = v as usize;
            if k >= self.small_ints.len() {
                self.small_ints.resize(k + 1, NO_NODE);
            }
            if self.small_ints[k] == NO_NODE {
                self.small_ints[k] = self.nodes.len() as u32;
                self.nodes.push(node);
            }
            return ExprId(self.small_ints[k]);
        }
        let (own, child) = placement(&self.nodes, &node);
        let hash = match child {
            Some(c) => {
                let placed = self.placed.get(c.0 as usize).copied().unwrap_or(0);
                let near = placed_hash(own, c);
                if placed < PLACED_LIMIT {
                    // Every parent of `c` so far is next to it: one lookup decides.
                    if let Some(id) = self.find(near, &node) {
                        return id;
                    }
                    let k = c.0 as usize;
                    if self.placed.len() <= k {
                        self.placed.resize(self.nodes.len(), 0);
                    }
                    self.placed[k] += 1;
                    return self.insert(near, node);
                }
                // The node may be one of the first parents of `c`, placed next to it.
                if let Some(id) = self.find(near, &node) {
                    return id;
                }
                own
            }
            None => own,
        };
        match self.find(hash, &node) {
            Some(id) => id,
            None => self.insert(hash, node),
        }
    }

    /// The id of `node` stored with hash `hash`, if there is one.
    fn find(&self, hash: u32, node: &Node) -> Option<ExprId> {
        let nodes = &self.nodes;
        self.dedup
            .find(table_hash(hash), |&(id, h)| h == hash && nodes[id.0 as usize] == *node)
            .map(|&(id, _)| id)
    }

    /// Stores `node`, known not to be in the table, with hash `hash`.
    fn insert(&mut self, hash: u32, node: Node) -> ExprId {
        let id = ExprId(self.nodes.len() as u32);
        self.dedup
            .insert_unique(table_hash(hash), (id, hash), |&(_, h)| table_hash(h));
        self.nodes.push(node);
        id
    }

    pub fn get(&self, id: ExprId) -> &Node {
        &self.nodes[id.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Makes room for `additional` more nodes, so that a stage that adds many (solving every
    /// equation for each of its unknowns) grows the arena and its hash-consing table once
    /// rather than doubling both several times, each time moving every node and entry.
    pub fn reserve(&mut self, additional: usize) {
        self.nodes.reserve(additional);
        self.dedup.reserve(additional, |&(_, h)| table_hash(h));
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn real(&mut self, v: f64) -> ExprId {
        // Normalise -0.0 to 0.0 so that `0` is one node however it was produced.
        let v = if v == 0.0 { 0.0 } else { v };
        self.add(Node::Real(v.to_bits()))
    }

    pub fn int(&mut self, v: i64) -> ExprId {
        self.add(Node::Int(v))
    }

    pub fn boolean(&mut self, v: bool) -> ExprId {
        self.add(Node::Bool(v))
    }

    pub fn var(&mut self, v: VarId) -> ExprId {
        let k = v.0 as usize;
        if k >= self.var_nodes.len() {
            self.var_nodes.resize(k + 1, NO_NODE);
        }
        if self.var_nodes[k] == NO_NODE {
            self.var_nodes[k] = self.nodes.len() as u32;
            self.nodes.push(Node::Var(v));
        }
        ExprId(self.var_nodes[k])
    }

    /// The node of variable `v` if one was created, without creating it.
    pub fn var_if_present(&self, v: VarId) -> Option<ExprId> {
        match self.var_nodes.get(v.0 as usize) {
            Some(&k) if k != NO_NODE => Some(ExprId(k)),
            _ => None,
        }
    }

    pub fn unary(&mut self, op: UnOp, a: ExprId) -> ExprId {
        self.add(Node::Unary(op, a))
    }

    pub fn binary(&mut self, op: BinOp, a: ExprId, b: ExprId) -> ExprId {
        self.add(Node::Binary(op, a, b))
    }

    pub fn call(&mut self, callee: Callee, args: Vec<ExprId>) -> ExprId {
        self.add(Node::Call(callee, args.into_boxed_slice()))
    }

    pub fn builtin(&mut self, b: Builtin, args: Vec<ExprId>) -> ExprId {
        self.call(Callee::Builtin(b), args)
    }

    /// The numeric value of a literal node, if it is one.
    pub fn literal(&self, id: ExprId) -> Option<f64> {
        match self.get(id) {
            Node::Real(bits) => Some(f64::from_bits(*bits)),
            Node::Int(v) => Some(*v as f64),
            Node::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
            _ => None,
        }
    }

    /// Calls `f` on each direct child of `id`.
    pub fn children(&self, id: ExprId) -> impl Iterator<Item = ExprId> + '_ {
        let slice: &[ExprId] = match self.get(id) {
            Node::Unary(_, a) | Node::CallOutput(a, _) => std::slice::from_ref(a),
            Node::Binary(_, a, b) => return Children::Two([*a, *b], 0),
            Node::If(c, a, b) => return Children::Three([*c, *a, *b], 0),
            Node::Call(_, args) => args,
            _ => &[],
        };
        Children::Slice(slice.iter())
    }

    /// Every variable occurring in `id`, in first-occurrence order, each once. Iterative: an
    /// explicit stack replaces recursion so that deep expressions cannot overflow. Whether a
    /// variable was seen is a scan of the few found so far, and a set once there are more than
    /// [`VARS_IN_SCAN`], so that a sum of 10^5 variables takes linear time, not quadratic.
    pub fn vars_in(&self, id: ExprId, out: &mut Vec<VarId>) {
        let mut stack = vec![id];
        let start = out.len();
        let mut seen: Option<FxHashSet<VarId>> = None;
        while let Some(e) = stack.pop() {
            if let Node::Var(v) = self.get(e) {
                let new = match &mut seen {
                    Some(set) => set.insert(*v),
                    None => !out[start..].contains(v),
                };
                if new {
                    out.push(*v);
                    if seen.is_none() && out.len() - start > VARS_IN_SCAN {
                        seen = Some(out[start..].iter().copied().collect());
                    }
                }
                continue;
            }
            let before = stack.len();
            stack.extend(self.children(e));
            stack[before..].reverse();
        }
    }

    /// Prints an expression with the fewest parentheses, naming variables through `name`.
    pub fn display(&self, id: ExprId, name: &dyn Fn(VarId) -> String) -> String {
        self.display_with(id, &name)
    }

    /// Prints an expression, naming variables, function locals and functions through `names`.
    pub fn display_with(&self, id: ExprId, names: &dyn Names) -> String {
        let mut out = String::new();
        self.write(&mut out, id, 0, names);
        out
    }

    fn write(&self, out: &mut String, id: ExprId, context: u8, name: &dyn Names) {
        let own = precedence(self.get(id));
        let parens = own < context;
        if parens {
            out.push('(');
        }
        match self.get(id) {
            Node::Real(bits) => eqm_diag::text::real(out, f64::from_bits(*bits)),
            Node::Int(v) => {
                let _ = write!(out, "{v}");
            }
            Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Node::Str(s) => {
                let _ = write!(out, "{s:?}");
            }
            Node::Var(v) => out.push_str(&name.var(*v)),
            Node::Local(i) => out.push_str(&name.local(*i)),
            Node::Time => out.push_str("time"),
            Node::Unary(UnOp::Neg, a) => {
                out.push('-');
                self.write(out, *a, PREC_MUL, name);
            }
            Node::Unary(UnOp::Not, a) => {
                out.push_str("not ");
                self.write(out, *a, PREC_REL, name);
            }
            Node::Binary(op, a, b) => {
                let (l, r) = match own {
                    PREC_OR => (PREC_OR, PREC_AND),
                    PREC_AND => (PREC_AND, PREC_NOT),
                    PREC_REL => (PREC_ADD, PREC_ADD),
                    PREC_ADD => (PREC_ADD, PREC_MUL),
                    PREC_MUL => (PREC_MUL, PREC_POW),
                    _ => (PREC_PRIMARY, PREC_PRIMARY),
                };
                self.write(out, *a, l, name);
                match op {
                    BinOp::Mul | BinOp::Div | BinOp::Pow => out.push_str(op.symbol()),
                    _ => {
                        let _ = write!(out, " {} ", op.symbol());
                    }
                }
                self.write(out, *b, r, name);
            }
            Node::If(c, a, b) => {
                out.push_str("if ");
                self.write(out, *c, 0, name);
                out.push_str(" then ");
                self.write(out, *a, 0, name);
                out.push_str(" else ");
                self.write(out, *b, 0, name);
            }
            Node::Call(callee, args) => {
                match callee {
                    Callee::Builtin(b) => out.push_str(b.name()),
                    Callee::User(f) => out.push_str(&name.function(*f)),
                    Callee::External(k) => out.push_str(&format!("external{k}")),
                }
                out.push('(');
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.write(out, *a, 0, name);
                }
                out.push(')');
            }
            Node::CallOutput(call, k) => {
                self.write(out, *call, PREC_PRIMARY, name);
                let _ = write!(out, ".output{}", k + 1);
            }
        }
        if parens {
            out.push(')');
        }
    }
}

/// How a printer names the leaves of an expression. Any `Fn(VarId) -> String` is one, with
/// placeholder names for locals and functions.
pub trait Names {
    fn var(&self, v: VarId) -> String;
    fn local(&self, slot: u32) -> String {
        format!("local{slot}")
    }
    fn function(&self, f: FuncId) -> String {
        format!("function{}", f.0)
    }
}

impl<F: Fn(VarId) -> String> Names for F {
    fn var(&self, v: VarId) -> String {
        self(v)
    }
}

const PREC_OR: u8 = 2;
const PREC_AND: u8 = 3;
const PREC_NOT: u8 = 4;
const PREC_REL: u8 = 5;
const PREC_ADD: u8 = 6;
const PREC_MUL: u8 = 7;
const PREC_POW: u8 = 8;
const PREC_PRIMARY: u8 = 9;

fn precedence(node: &Node) -> u8 {
    match node {
        Node::If(..) => 0,
        Node::Binary(op, ..) => match op {
            BinOp::Or => PREC_OR,
            BinOp::And => PREC_AND,
            op if op.is_relation() => PREC_REL,
            BinOp::Add | BinOp::Sub => PREC_ADD,
            BinOp::Mul | BinOp::Div => PREC_MUL,
            _ => PREC_POW,
        },
        Node::Unary(UnOp::Not, _) => PREC_NOT,
        Node::Unary(UnOp::Neg, _) => PREC_ADD,
        // A negative literal prints with a sign and must be parenthesised like a negation.
        Node::Real(bits) if f64::from_bits(*bits).is_sign_negative() => PREC_ADD,
        Node::Int(v) if *v < 0 => PREC_ADD,
        _ => PREC_PRIMARY,
    }
}

enum Children<'a> {
    Slice(std::slice::Iter<'a, ExprId>),
    Two([ExprId; 2], usize),
    Three([ExprId; 3], usize),
}

impl Iterator for Children<'_> {
    type Item = ExprId;

    fn next(&mut self) -> Option<ExprId> {
        match self {
            Children::Slice(it) => it.next().copied(),
            Children::Two(a, i) => {
                let r = a.get(*i).copied();
                *i += 1;
                r
            }
            Children::Three(a, i) => {
                let r = a.get(*i).copied();
                *i += 1;
                r
            }
        }
    }
}

/// The derivative rules of the built-in table build their expressions in the arena.
impl ExprBuilder for ExprArena {
    fn real(&mut self, v: f64) -> ExprId {
        ExprArena::real(self, v)
    }

    fn int(&mut self, v: i64) -> ExprId {
        ExprArena::int(self, v)
    }

    fn unary(&mut self, op: UnOp, a: ExprId) -> ExprId {
        ExprArena::unary(self, op, a)
    }

    fn binary(&mut self, op: BinOp, a: ExprId, b: ExprId) -> ExprId {
        ExprArena::binary(self, op, a, b)
    }

    fn builtin(&mut self, f: Builtin, args: Vec<ExprId>) -> ExprId {
        ExprArena::builtin(self, f, args)
    }

    fn if_then_else(&mut self, condition: ExprId, then: ExprId, otherwise: ExprId) -> ExprId {
        self.add(Node::If(condition, then, otherwise))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_consing_shares_equal_nodes() {
        let mut a = ExprArena::new();
        let x = a.var(VarId(0));
        let one = a.real(1.0);
        let e1 = a.binary(BinOp::Add, x, one);
        let e2 = a.binary(BinOp::Add, x, one);
        assert_eq!(e1, e2);
        assert_eq!(a.real(-0.0), a.real(0.0));
        assert_eq!(a.len(), 4);
    }

    /// Small non-negative integers have their own lookup; every integer is still stored once.
    #[test]
    fn integer_literals_are_stored_once_in_and_out_of_the_small_range() {
        let mut a = ExprArena::new();
        for v in [0, 1, 5, 4_000_000, SMALL_INT_LIMIT - 1, SMALL_INT_LIMIT, -3, 1 << 40] {
            let first = a.int(v);
            let nodes = a.len();
            assert_eq!(a.int(v), first, "{v}");
            assert_eq!(a.len(), nodes);
            assert_eq!(a.literal(first), Some(v as f64));
            assert_ne!(a.real(v as f64 + 0.5), first);
        }
    }

    /// Nodes are placed in the table next to their newest child; many different parents of one
    /// child (all in one window of buckets) must still each be stored once and found again.
    #[test]
    fn many_parents_of_one_child_are_each_stored_once() {
        let mut a = ExprArena::new();
        let olds: Vec<ExprId> = (0..20_000).map(|k| a.var(VarId(k))).collect();
        let z = a.var(VarId(1_000_000));
        let products: Vec<ExprId> = olds.iter().map(|&x| a.binary(BinOp::Mul, x, z)).collect();
        let nodes = a.len();
        let again: Vec<ExprId> = olds.iter().map(|&x| a.binary(BinOp::Mul, x, z)).collect();
        assert_eq!(products, again);
        assert_eq!(a.len(), nodes);
        let mut distinct = products.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), products.len());
    }

    #[test]
    fn display_uses_minimal_parentheses() {
        let mut a = ExprArena::new();
        let x = a.var(VarId(0));
        let y = a.var(VarId(1));
        let sum = a.binary(BinOp::Add, x, y);
        let neg = a.unary(UnOp::Neg, sum);
        let prod = a.binary(BinOp::Mul, neg, y);
        let names = |v: VarId| ["x", "y"][v.0 as usize].to_string();
        assert_eq!(a.display(prod, &names), "(-(x + y))*y");
        let minus_two = a.real(-2.0);
        let p = a.binary(BinOp::Pow, x, minus_two);
        assert_eq!(a.display(p, &names), "x^(-2.0)");
    }
}
