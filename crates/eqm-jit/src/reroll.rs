//! Re-rolling: finding the loops that flattening unrolled.
//!
//! Input: the assignments of a segment (`slot := expression`, in order), the expression arena
//! and the slot of every variable. Output: the same assignments cut into [`Piece`]s: single
//! assignments, and runs that repeat one block of `period` assignments `repeats` times, where
//! repetition `r` computes the same expressions as the first one on slots moved by `r` times a
//! fixed stride per slot. A chain of a thousand identical stages becomes one loop whose body is
//! one stage, so the code stays small enough for the instruction cache and compiles once.
//!
//! The test is structural and exact: two assignments match when their expressions have the
//! same shape (the same operators, constants, functions and sharing, leaves of the same array)
//! and their slots differ by the stride. A run is only accepted when running its repetitions in
//! a loop computes exactly what the straight-line code computes: the assignments keep their
//! order, every slot of the first repetition moves by one stride throughout (so the loop body
//! can address it by one moving pointer), and no two slots of one repetition become the same
//! slot in a later one (so that values kept in registers within one repetition stay valid).
//!
//! Consecutive runs (a program computes each array of a model in one run: every force, then
//! every speed, then every acceleration) are interleaved when that is exact ([`interleave`]):
//! the assignments are ordered stage by stage, so that one loop computes a stage of every
//! array, and its body does the other arrays' work while a slow operation of one (a division)
//! is in flight, as a hand-written loop over the stages does.
//!
//! What it deliberately does not do: emit code ([`super`] does), or look for loops across
//! segments or inside expressions. The scan is linear in the size of the expressions times the
//! number of candidate periods tried at each position (bounded by [`MAX_PERIOD`]).

use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{Callee, ExprArena, ExprId, FxHashMap, Node, VarId};
use eqm_ir::slot::Slot;

/// A segment's assignments, `slot := expression` in order.
type Assignments = Vec<(Slot, ExprId)>;

/// The longest block of assignments that is looked for as the body of a loop.
pub(super) const MAX_PERIOD: usize = 64;

/// The fewest repetitions worth a loop: below this, straight-line code (which keeps values in
/// registers from one stage to the next) is as fast and the loop's bookkeeping is not repaid.
pub(super) const MIN_REPEATS: usize = 8;

/// The largest slot index addressed (a byte offset must fit 32 bits), as in the translator.
const MAX_INDEX: i64 = (i32::MAX / 8) as i64;

/// A run of assignments computed by a loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Rolled {
    /// The index of the run's first assignment in the segment.
    pub begin: usize,
    /// The number of assignments in the loop body (the first repetition is the template).
    pub period: usize,
    /// How many times the body runs.
    pub repeats: usize,
    /// Every slot the template reads or writes, with how far it moves per repetition (in
    /// elements of its array), sorted by slot.
    pub strides: Vec<(Slot, i64)>,
}

impl Rolled {
    /// The stride of template slot `slot`.
    #[cfg(test)]
    pub fn stride(&self, slot: Slot) -> Option<i64> {
        self.strides
            .binary_search_by_key(&slot, |(s, _)| *s)
            .ok()
            .map(|k| self.strides[k].1)
    }

    /// The number of assignments the run covers.
    pub fn len(&self) -> usize {
        self.period * self.repeats
    }
}

/// A piece of a segment, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Piece {
    /// Assignment `k` of the segment, as straight-line code.
    Single(usize),
    Rolled(Box<Rolled>),
}

/// Cuts `assignments` into pieces; see the module documentation.
pub(super) fn pieces(
    arena: &ExprArena,
    slot_of: &dyn Fn(VarId) -> Option<Slot>,
    assignments: &[(Slot, ExprId)],
) -> Vec<Piece> {
    pieces_of(&Shapes::of(arena, slot_of, assignments))
}

/// The assignments in an order that runs the repetitions of consecutive runs together when
/// that makes fewer loops (`None` when the order given stays), with the pieces of the order
/// chosen.
///
/// Why: a program computes each array of a model in one run (every spring force, then every
/// speed, then every acceleration), so the loops follow one another, and a loop whose body
/// waits on one slow operation (a division) lets the processor do nothing else meanwhile. One
/// loop whose repetition computes a stage of each array does the other arrays' work while the
/// division runs, as a hand-written loop over the stages does.
///
/// How: repetition `r` of every run gets the key `r`, an assignment outside runs the key of
/// the one before it; a stable sort by key orders them. The new order is kept only when every
/// assignment still reads each slot the segment writes before or after its writer exactly as
/// before (so every value is the same, bit for bit), no slot is written twice, no assignment
/// calls a function (whose failure the code would then report in another order than the
/// interpreter), and the new order has fewer loops and, outside loops, at most one body more
/// per run than before (the repetitions a longer run has over a shorter one). A stable
/// counting sort makes it linear in the number of assignments.
pub(super) fn interleave(
    arena: &ExprArena,
    slot_of: &dyn Fn(VarId) -> Option<Slot>,
    assignments: &[(Slot, ExprId)],
) -> (Option<Assignments>, Vec<Piece>) {
    let shapes = Shapes::of(arena, slot_of, assignments);
    let before = pieces_of(&shapes);
    match interleaved(arena, slot_of, assignments, &shapes, &before) {
        Some((reordered, after)) => (Some(reordered), after),
        None => (None, before),
    }
}

/// The interleaved order of `assignments` and its pieces, if it is exact and better than
/// `before` (see [`interleave`]).
fn interleaved(
    arena: &ExprArena,
    slot_of: &dyn Fn(VarId) -> Option<Slot>,
    assignments: &[(Slot, ExprId)],
    shapes: &Shapes,
    before: &[Piece],
) -> Option<(Assignments, Vec<Piece>)> {
    if shapes.calls
        || shapes.ids.iter().any(Option::is_none)
        || before.iter().filter(|p| matches!(p, Piece::Rolled(_))).count() < 2
    {
        return None;
    }
    let n = assignments.len();
    let mut key = vec![0usize; n];
    let mut last = 0;
    for piece in before {
        match piece {
            Piece::Single(k) => key[*k] = last,
            Piece::Rolled(run) => {
                for (k, slot) in key[run.begin..run.begin + run.len()].iter_mut().enumerate() {
                    *slot = k / run.period;
                }
                last = run.repeats - 1;
            }
        }
    }
    // A stable counting sort by key (keys are repetitions, fewer than `n`): linear.
    let mut start = vec![0usize; key.iter().copied().max().unwrap_or(0) + 2];
    for &k in &key {
        start[k + 1] += 1;
    }
    for k in 1..start.len() {
        start[k] += start[k - 1];
    }
    let mut position = vec![0; n];
    let mut order = vec![0; n];
    for (k, &r) in key.iter().enumerate() {
        position[k] = start[r];
        order[start[r]] = k;
        start[r] += 1;
    }
    let mut writer: FxHashMap<Slot, usize> = FxHashMap::default();
    for (k, (target, _)) in assignments.iter().enumerate() {
        if writer.insert(*target, k).is_some() {
            return None;
        }
    }
    for k in 0..n {
        for slot in &shapes.slots_of(k)[1..] {
            if let Some(&w) = writer.get(slot)
                && w != k
                && (w < k) != (position[w] < position[k])
            {
                return None;
            }
        }
    }
    let reordered: Assignments = order.iter().map(|&k| assignments[k]).collect();
    let after = pieces(arena, slot_of, &reordered);
    // Fewer loops, and outside them at most the repetitions that runs of different lengths
    // leave over (one body each).
    let count = |pieces: &[Piece]| {
        let loops = pieces.iter().filter(|p| matches!(p, Piece::Rolled(_))).count();
        (loops, pieces.len() - loops)
    };
    let ((loops_before, singles_before), (loops_after, singles_after)) = (count(before), count(&after));
    let periods: usize = before
        .iter()
        .map(|p| match p {
            Piece::Rolled(run) => run.period,
            Piece::Single(_) => 0,
        })
        .sum();
    (loops_after < loops_before && singles_after <= singles_before + periods).then_some((reordered, after))
}

/// The pieces of the assignments whose shapes are `shapes`.
fn pieces_of(shapes: &Shapes) -> Vec<Piece> {
    let n = shapes.ids.len();
    // The next assignment with the same shape, for the candidate periods at each position.
    let mut next = vec![usize::MAX; n];
    let mut last: FxHashMap<u32, usize> = FxHashMap::default();
    for k in (0..n).rev() {
        if let Some(id) = shapes.ids[k] {
            if let Some(&later) = last.get(&id) {
                next[k] = later;
            }
            last.insert(id, k);
        }
    }
    let mut out = Vec::new();
    let mut k = 0;
    while k < n {
        let mut found = None;
        let mut candidate = next[k];
        // The smallest period that repeats often enough wins: its multiples repeat too, but
        // would only make the loop body longer.
        while candidate != usize::MAX && candidate - k <= MAX_PERIOD {
            if let Some(run) = shapes.run(k, candidate - k) {
                found = Some(run);
                break;
            }
            candidate = next[candidate];
        }
        match found {
            Some(run) => {
                k += run.len();
                out.push(Piece::Rolled(Box::new(run)));
            }
            None => {
                out.push(Piece::Single(k));
                k += 1;
            }
        }
    }
    out
}

/// The shape of every assignment, as an interned id (`None` when it must stay straight-line
/// code), and its slots in a fixed order (the target first, then each leaf as the shape meets
/// it).
struct Shapes {
    ids: Vec<Option<u32>>,
    /// Whether some assignment calls a user or external function.
    calls: bool,
    /// The slots of assignment `k` are `slots[starts[k]..starts[k + 1]]`.
    starts: Vec<usize>,
    slots: Vec<Slot>,
}

/// Token tags, in the top byte of a shape token.
mod tag {
    pub const REAL: u64 = 1 << 56;
    pub const INT: u64 = 2 << 56;
    pub const BOOL: u64 = 3 << 56;
    pub const LEAF: u64 = 4 << 56;
    pub const TIME: u64 = 5 << 56;
    pub const UNARY: u64 = 6 << 56;
    pub const BINARY: u64 = 7 << 56;
    pub const IF: u64 = 8 << 56;
    pub const BUILTIN: u64 = 9 << 56;
    pub const USER: u64 = 10 << 56;
    pub const OUTPUT: u64 = 11 << 56;
    pub const DER: u64 = 12 << 56;
    /// A composite node met before in the same assignment, by its order of first meeting.
    pub const AGAIN: u64 = 13 << 56;
    pub const TARGET: u64 = 14 << 56;
    pub const EXTERNAL: u64 = 15 << 56;
}

/// The array of a slot as a small number, for shape tokens.
fn array(slot: Slot) -> u64 {
    match slot {
        Slot::Time => 0,
        Slot::State(_) => 1,
        Slot::Param(_) => 2,
        Slot::Der(_) => 3,
        Slot::Work(_) => 4,
    }
}

fn index(slot: Slot) -> i64 {
    match slot {
        Slot::Time => 0,
        Slot::State(i) | Slot::Param(i) | Slot::Der(i) | Slot::Work(i) => i as i64,
    }
}

/// `slot` moved by `by` elements within its array; `None` outside the addressable range.
pub(super) fn moved(slot: Slot, by: i64) -> Option<Slot> {
    let i = index(slot) + by;
    if !(0..=MAX_INDEX).contains(&i) {
        return None;
    }
    let i = i as u32;
    Some(match slot {
        Slot::Time => return None,
        Slot::State(_) => Slot::State(i),
        Slot::Param(_) => Slot::Param(i),
        Slot::Der(_) => Slot::Der(i),
        Slot::Work(_) => Slot::Work(i),
    })
}

impl Shapes {
    fn of(arena: &ExprArena, slot_of: &dyn Fn(VarId) -> Option<Slot>, assignments: &[(Slot, ExprId)]) -> Shapes {
        let mut interned: FxHashMap<Box<[u64]>, u32> = FxHashMap::default();
        let mut shapes = Shapes {
            ids: Vec::with_capacity(assignments.len()),
            calls: false,
            starts: Vec::with_capacity(assignments.len() + 1),
            slots: Vec::new(),
        };
        let mut tokens = Vec::new();
        let mut walk = Walk::default();
        shapes.starts.push(0);
        for &(target, value) in assignments {
            tokens.clear();
            let begin = shapes.slots.len();
            tokens.push(tag::TARGET | array(target));
            shapes.slots.push(target);
            let ok = walk.shape(arena, slot_of, value, &mut tokens, &mut shapes.slots);
            let id = if ok {
                let next = interned.len() as u32;
                Some(*interned.entry(tokens.as_slice().into()).or_insert(next))
            } else {
                shapes.slots.truncate(begin);
                None
            };
            shapes.ids.push(id);
            shapes.starts.push(shapes.slots.len());
        }
        shapes.calls = walk.calls;
        shapes
    }

    fn slots_of(&self, k: usize) -> &[Slot] {
        &self.slots[self.starts[k]..self.starts[k + 1]]
    }

    /// The run starting at `begin` with `period`, if it repeats at least [`MIN_REPEATS`] times
    /// and may be a loop.
    fn run(&self, begin: usize, period: usize) -> Option<Rolled> {
        let n = self.ids.len();
        if begin + MIN_REPEATS * period > n {
            return None;
        }
        // The stride of every slot occurrence, from the first repetition to the second.
        let mut strides: Vec<(Slot, i64)> = Vec::new();
        for j in 0..period {
            let (a, b) = (begin + j, begin + period + j);
            if self.ids[a].is_none() || self.ids[a] != self.ids[b] {
                return None;
            }
            for (s, t) in self.slots_of(a).iter().zip(self.slots_of(b)) {
                strides.push((*s, index(*t) - index(*s)));
            }
        }
        // Count the repetitions that continue every stride.
        let mut repeats = 2;
        'more: while begin + (repeats + 1) * period <= n {
            let mut occurrence = 0;
            for j in 0..period {
                let (a, c) = (begin + j, begin + repeats * period + j);
                if self.ids[a] != self.ids[c] {
                    break 'more;
                }
                for t in self.slots_of(c) {
                    let (s, d) = strides[occurrence];
                    if moved(s, repeats as i64 * d) != Some(*t) {
                        break 'more;
                    }
                    occurrence += 1;
                }
            }
            repeats += 1;
        }
        if repeats < MIN_REPEATS {
            return None;
        }
        // One stride per slot, and every slot addressable in the last repetition.
        strides.sort_unstable();
        strides.dedup();
        if strides.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        let last = repeats as i64 - 1;
        if strides.iter().any(|&(s, d)| moved(s, last * d).is_none()) {
            return None;
        }
        // No two slots of a repetition may meet: slots of one array with different strides
        // `s1 + r d1 = s2 + r d2` at `r = (s2 - s1) / (d1 - d2)`. Slots with equal strides never
        // meet. The number of pairs is bounded by the period's size, which is small.
        for (x, &(s1, d1)) in strides.iter().enumerate() {
            for &(s2, d2) in &strides[x + 1..] {
                if array(s1) != array(s2) || d1 == d2 {
                    continue;
                }
                let (gap, closing) = (index(s2) - index(s1), d1 - d2);
                if gap % closing == 0 && (0..repeats as i64).contains(&(gap / closing)) {
                    return None;
                }
            }
        }
        Some(Rolled {
            begin,
            period,
            repeats,
            strides,
        })
    }
}

/// Reusable buffers for shape walks.
#[derive(Default)]
struct Walk {
    stack: Vec<ExprId>,
    /// Composite nodes met in the current assignment, with their order of first meeting.
    met: FxHashMap<ExprId, u64>,
    /// Whether a walk met a call of a user or external function.
    calls: bool,
}

impl Walk {
    /// Appends the shape tokens of `root` and its slots; `false` when the expression has
    /// something a loop body cannot hold (a variable without a slot, a string, a local).
    fn shape(
        &mut self,
        arena: &ExprArena,
        slot_of: &dyn Fn(VarId) -> Option<Slot>,
        root: ExprId,
        tokens: &mut Vec<u64>,
        slots: &mut Vec<Slot>,
    ) -> bool {
        self.stack.clear();
        self.met.clear();
        self.stack.push(root);
        while let Some(e) = self.stack.pop() {
            let node = arena.get(e);
            let composite = !matches!(
                node,
                Node::Real(_)
                    | Node::Int(_)
                    | Node::Bool(_)
                    | Node::Str(_)
                    | Node::Var(_)
                    | Node::Local(_)
                    | Node::Time
            );
            if composite {
                if let Some(&order) = self.met.get(&e) {
                    tokens.push(tag::AGAIN | order);
                    continue;
                }
                let order = self.met.len() as u64;
                self.met.insert(e, order);
            }
            match node {
                Node::Real(bits) => tokens.extend([tag::REAL, *bits]),
                Node::Int(i) => tokens.extend([tag::INT, *i as u64]),
                Node::Bool(b) => tokens.push(tag::BOOL | *b as u64),
                Node::Str(_) | Node::Local(_) => return false,
                Node::Var(v) => match slot_of(*v) {
                    Some(slot) => {
                        tokens.push(tag::LEAF | array(slot));
                        slots.push(slot);
                    }
                    None => return false,
                },
                Node::Time => tokens.push(tag::TIME),
                Node::Unary(op, _) => tokens.push(tag::UNARY | *op as u64),
                Node::Binary(op, ..) => tokens.push(tag::BINARY | *op as u64),
                Node::If(..) => tokens.push(tag::IF),
                Node::Call(Callee::Builtin(Builtin::Der), args) => {
                    // The translator reads `dx[i]` for `der` of state `i`: that slot is the leaf.
                    match args.first().map(|a| arena.get(*a)) {
                        Some(Node::Var(v)) if args.len() == 1 => match slot_of(*v) {
                            Some(Slot::State(i)) => {
                                tokens.push(tag::DER);
                                slots.push(Slot::Der(i));
                            }
                            _ => return false,
                        },
                        _ => return false,
                    }
                    continue;
                }
                Node::Call(Callee::Builtin(b), args) => tokens.extend([tag::BUILTIN | *b as u64, args.len() as u64]),
                Node::Call(Callee::User(f), args) => {
                    self.calls = true;
                    tokens.extend([tag::USER | f.0 as u64, args.len() as u64]);
                }
                Node::Call(Callee::External(k), args) => {
                    self.calls = true;
                    tokens.extend([tag::EXTERNAL | *k as u64, args.len() as u64]);
                }
                Node::CallOutput(_, k) => tokens.push(tag::OUTPUT | *k as u64),
            }
            // Children in reverse so that they are met in order.
            let first = self.stack.len();
            self.stack.extend(arena.children(e));
            self.stack[first..].reverse();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use eqm_ir::expr::BinOp;

    /// A chain of `n` stages `w[2k] := x[k] + p[0]`, `w[2k + 1] := w[2k] * x[k + 1]`.
    fn chain(arena: &mut ExprArena, n: u32) -> Vec<(Slot, ExprId)> {
        let p = arena.var(VarId(1_000_000));
        let mut out = Vec::new();
        for k in 0..n {
            let x = arena.var(VarId(k));
            let x_next = arena.var(VarId(k + 1));
            let sum = arena.binary(BinOp::Add, x, p);
            out.push((Slot::Work(2 * k), sum));
            let w = arena.var(VarId(2_000_000 + 2 * k));
            let product = arena.binary(BinOp::Mul, w, x_next);
            out.push((Slot::Work(2 * k + 1), product));
        }
        out
    }

    fn slot_of(v: VarId) -> Option<Slot> {
        Some(match v.0 {
            1_000_000 => Slot::Param(0),
            i if i >= 2_000_000 => Slot::Work(i - 2_000_000),
            i => Slot::State(i),
        })
    }

    #[test]
    fn a_regular_chain_becomes_one_loop() {
        let mut arena = ExprArena::new();
        let assignments = chain(&mut arena, 20);
        let pieces = pieces(&arena, &slot_of, &assignments);
        assert_eq!(pieces.len(), 1);
        let Piece::Rolled(run) = &pieces[0] else {
            panic!("not rolled: {pieces:?}")
        };
        assert_eq!((run.begin, run.period, run.repeats), (0, 2, 20));
        assert_eq!(run.stride(Slot::Work(0)), Some(2));
        assert_eq!(run.stride(Slot::State(1)), Some(1));
        assert_eq!(run.stride(Slot::Param(0)), Some(0));
    }

    #[test]
    fn too_few_repetitions_stay_straight_line() {
        let mut arena = ExprArena::new();
        let assignments = chain(&mut arena, MIN_REPEATS as u32 - 1);
        let pieces = pieces(&arena, &slot_of, &assignments);
        assert!(pieces.iter().all(|p| matches!(p, Piece::Single(_))));
    }

    #[test]
    fn a_different_constant_ends_the_run() {
        let mut arena = ExprArena::new();
        let mut assignments = chain(&mut arena, 12);
        // Stage 10 adds 2.0 instead of the parameter.
        let x = arena.var(VarId(10));
        let two = arena.real(2.0);
        assignments[20].1 = arena.binary(BinOp::Add, x, two);
        let pieces = pieces(&arena, &slot_of, &assignments);
        let Piece::Rolled(run) = &pieces[0] else {
            panic!("not rolled: {pieces:?}")
        };
        assert_eq!(run.repeats, 10);
        assert_eq!(
            pieces[1..],
            [
                Piece::Single(20),
                Piece::Single(21),
                Piece::Single(22),
                Piece::Single(23)
            ]
        );
    }

    #[test]
    fn slots_that_would_meet_within_a_repetition_refuse_the_loop() {
        // `w[10 + k] := 2 w[2k]`: from position k, the read (stride 2) meets the target (stride
        // 1) in repetition 10 - k, so no loop may start at k <= 10; from k = 11 on they never
        // meet, and the nine repetitions left are a loop.
        let mut arena = ExprArena::new();
        let two = arena.real(2.0);
        let assignments: Vec<(Slot, ExprId)> = (0..20)
            .map(|k| {
                let w = arena.var(VarId(2_000_000 + 2 * k));
                (Slot::Work(10 + k), arena.binary(BinOp::Mul, w, two))
            })
            .collect();
        let pieces = pieces(&arena, &slot_of, &assignments);
        assert!(pieces[..11].iter().all(|p| matches!(p, Piece::Single(_))), "{pieces:?}");
        let Piece::Rolled(run) = &pieces[11] else {
            panic!("not rolled: {pieces:?}")
        };
        assert_eq!((run.begin, run.repeats), (11, 9));
    }
}
