//! Tearing of one BLT block: choose few tearing variables so that the other equations of the
//! block can be solved one after another.
//!
//! Input: an [`Incidence`] and a block given as `(equation, variable)` pairs (as produced by
//! `blt`; only the sets matter, not the pairing). Output: a [`Tearing`]: the tearing variables,
//! the residual equations (as many as tearing variables), and the inner causal sequence of
//! `(equation, variable)` pairs in evaluation order. Each inner equation is solved for its
//! variable through a `Solvable` edge and uses only tearing variables, earlier inner variables,
//! and variables outside the block (known from earlier blocks).
//!
//! Heuristic (after Cellier's, as in Modia): propagate causality as far as possible (an
//! equation with exactly one unknown block variable, solvable for it, is assigned); when stuck,
//! tear the unknown variable that occurs in the most not yet assigned equations, implicit
//! occurrences counting double (ties: lowest id), and continue. With a lazy max-heap this is O(E log V) per block. It deliberately does not
//! guarantee a minimum tearing set (that problem is NP-hard) and does not look at the numeric
//! conditioning of the chosen assignments.

use super::incidence::{EdgeKind, EqIdx, Incidence, StructuralError, VarIdx};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// The result of tearing one block.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tearing {
    /// Variables guessed by the nonlinear solver, in the order they were chosen.
    pub tearing_vars: Vec<VarIdx>,
    /// Equations whose residuals the nonlinear solver drives to zero, sorted by id.
    pub residuals: Vec<EqIdx>,
    /// The causal sequence: solve each equation for its variable, in this order.
    pub inner: Vec<(EqIdx, VarIdx)>,
}

const NONE: u32 = u32::MAX;

/// How much an occurrence adds to a variable's tearing score.
fn weight(kind: EdgeKind) -> u32 {
    match kind {
        EdgeKind::Solvable => 1,
        EdgeKind::Implicit => 2,
    }
}

/// Reusable scratch space, so that tearing thousands of small blocks of a huge graph costs time
/// proportional to the blocks, not to the graph, per block.
#[derive(Debug, Default, Clone)]
pub struct TearingWorkspace {
    /// Position of a variable in the current block, or `NONE`.
    var_local: Vec<u32>,
    /// Whether an equation is in the current block (to reject duplicates).
    eq_in_block: Vec<bool>,
    scratch: Scratch,
}

impl TearingWorkspace {
    /// An empty workspace; it grows to the graph on first use.
    pub fn new() -> TearingWorkspace {
        TearingWorkspace::default()
    }

    /// Tears one block of `g`. Fails on ids outside the graph or on a repeated equation or
    /// variable in the block.
    pub fn tear(&mut self, g: &Incidence, block: &[(EqIdx, VarIdx)]) -> Result<Tearing, StructuralError> {
        if self.var_local.len() < g.n_vars() {
            self.var_local.resize(g.n_vars(), NONE);
        }
        if self.eq_in_block.len() < g.n_eqs() {
            self.eq_in_block.resize(g.n_eqs(), false);
        }
        let checked = self.mark(g, block);
        let result = checked.map(|()| self.tear_marked(g, block));
        // Reset only what this block touched, keeping the per-block cost independent of the
        // graph size.
        for &(e, v) in block {
            if let Some(x) = self.var_local.get_mut(v.index()) {
                *x = NONE;
            }
            if let Some(x) = self.eq_in_block.get_mut(e.index()) {
                *x = false;
            }
        }
        result
    }

    fn mark(&mut self, g: &Incidence, block: &[(EqIdx, VarIdx)]) -> Result<(), StructuralError> {
        for (i, &(e, v)) in block.iter().enumerate() {
            if e.index() >= g.n_eqs() {
                return Err(StructuralError::InvalidEq { eq: e });
            }
            if v.index() >= g.n_vars() {
                return Err(StructuralError::InvalidVar { eq: e, var: v });
            }
            if self.var_local[v.index()] != NONE || self.eq_in_block[e.index()] {
                return Err(StructuralError::Inconsistent("a block repeats an equation or variable"));
            }
            self.var_local[v.index()] = i as u32;
            self.eq_in_block[e.index()] = true;
        }
        Ok(())
    }

    fn tear_marked(&mut self, g: &Incidence, block: &[(EqIdx, VarIdx)]) -> Tearing {
        let n = block.len();
        let TearingWorkspace { var_local, scratch, .. } = self;
        let mut state = Block {
            g,
            block,
            var_local,
            s: scratch,
            out: Tearing::default(),
            known: 0,
        };
        state.init();
        for (i, &(e, _)) in block.iter().enumerate() {
            if state.s.unknown[i] == 0 {
                state.out.residuals.push(e);
                state.finish_eq(i);
            }
        }
        while state.known < n {
            while let Some(i) = state.s.queue.pop_front() {
                state.try_assign(i as usize);
            }
            if state.known == n {
                break;
            }
            let Some((score, Reverse(j))) = state.s.heap.pop() else {
                break;
            };
            let j = j as usize;
            if state.s.var_known[j] {
                continue;
            }
            if score != state.s.score[j] {
                let current = state.s.score[j];
                state.s.heap.push((current, Reverse(j as u32)));
                continue;
            }
            state.out.tearing_vars.push(block[j].1);
            state.learn_var(j);
        }
        // Equations never assigned have no unknowns left and were recorded as residuals when
        // their last variable became known; sort them for a stable presentation.
        let mut out = state.out;
        out.residuals.sort_unstable();
        out
    }
}

/// Per-block arrays, kept in the workspace so that tearing many small blocks does not allocate
/// for each one.
#[derive(Debug, Default, Clone)]
struct Scratch {
    /// Unknown block variables left in each block equation.
    unknown: Vec<u32>,
    /// Local occurrence lists (variable → block equations) in CSR form.
    start: Vec<u32>,
    occ: Vec<u32>,
    /// The not yet assigned equations containing each variable, implicit occurrences counting
    /// twice, since a variable no equation can be solved for is the cheapest to tear. It only
    /// decreases, so a max-heap with lazy re-insertion keeps the best candidate on top.
    score: Vec<u32>,
    heap: BinaryHeap<(u32, Reverse<u32>)>,
    eq_done: Vec<bool>,
    var_known: Vec<bool>,
    /// Equations with exactly one unknown left, to try in order.
    queue: VecDeque<u32>,
}

/// The tearing of one block in progress.
struct Block<'a> {
    g: &'a Incidence,
    block: &'a [(EqIdx, VarIdx)],
    var_local: &'a [u32],
    s: &'a mut Scratch,
    out: Tearing,
    known: usize,
}

impl Block<'_> {
    fn local(&self, v: VarIdx) -> Option<usize> {
        let j = self.var_local[v.index()];
        (j != NONE).then_some(j as usize)
    }

    fn init(&mut self) {
        let n = self.block.len();
        let (g, block) = (self.g, self.block);
        let reset = |v: &mut Vec<u32>, len: usize| {
            v.clear();
            v.resize(len, 0);
        };
        reset(&mut self.s.unknown, n);
        reset(&mut self.s.start, n + 1);
        reset(&mut self.s.score, n);
        for (i, &(e, _)) in block.iter().enumerate() {
            for (v, kind) in g.eq_edges(e) {
                if let Some(j) = self.local(v) {
                    self.s.unknown[i] += 1;
                    self.s.start[j + 1] += 1;
                    self.s.score[j] += weight(kind);
                }
            }
        }
        for j in 0..n {
            self.s.start[j + 1] += self.s.start[j];
        }
        let total = self.s.start[n] as usize;
        reset(&mut self.s.occ, total);
        // Counting sort, using `start` shifted by one as the fill pointers and shifting back.
        for (i, &(e, _)) in block.iter().enumerate() {
            for &v in g.eq_vars(e) {
                if let Some(j) = self.local(v) {
                    let slot = self.s.start[j] as usize;
                    self.s.occ[slot] = i as u32;
                    self.s.start[j] += 1;
                }
            }
        }
        for j in (1..=n).rev() {
            self.s.start[j] = self.s.start[j - 1];
        }
        self.s.start[0] = 0;
        self.s.heap.clear();
        let scores = &self.s.score;
        self.s
            .heap
            .extend((0..n as u32).map(|j| (scores[j as usize], Reverse(j))));
        self.s.eq_done.clear();
        self.s.eq_done.resize(n, false);
        self.s.var_known.clear();
        self.s.var_known.resize(n, false);
        self.s.queue.clear();
        let unknown = &self.s.unknown;
        self.s.queue.extend((0..n as u32).filter(|&i| unknown[i as usize] == 1));
    }

    /// Assigns equation i to its only unknown variable if it is solvable for it.
    fn try_assign(&mut self, i: usize) {
        if self.s.eq_done[i] || self.s.unknown[i] != 1 {
            return;
        }
        let e = self.block[i].0;
        let unknown = self.g.eq_edges(e).find_map(|(v, kind)| {
            let j = self.local(v)?;
            (!self.s.var_known[j]).then_some((v, j, kind))
        });
        // Not solvable for its last unknown: it waits to become a residual.
        let Some((v, j, EdgeKind::Solvable)) = unknown else {
            return;
        };
        self.finish_eq(i);
        self.out.inner.push((e, v));
        self.learn_var(j);
    }

    /// Marks equation i as assigned or residual: it no longer counts for its unknowns' scores.
    fn finish_eq(&mut self, i: usize) {
        self.s.eq_done[i] = true;
        for (v, kind) in self.g.eq_edges(self.block[i].0) {
            if let Some(j) = self.local(v)
                && !self.s.var_known[j]
            {
                self.s.score[j] -= weight(kind);
            }
        }
    }

    /// Marks variable j as known; equations left with one unknown become candidates, those
    /// left with none become residuals.
    fn learn_var(&mut self, j: usize) {
        self.s.var_known[j] = true;
        self.known += 1;
        for k in self.s.start[j] as usize..self.s.start[j + 1] as usize {
            let i = self.s.occ[k] as usize;
            if self.s.eq_done[i] {
                continue;
            }
            self.s.unknown[i] -= 1;
            match self.s.unknown[i] {
                1 => self.s.queue.push_back(i as u32),
                0 => {
                    self.out.residuals.push(self.block[i].0);
                    self.finish_eq(i);
                }
                _ => {}
            }
        }
    }
}

/// Tears one block with a fresh workspace. Prefer [`TearingWorkspace::tear`] for many blocks:
/// this allocates scratch arrays of the graph's size.
pub fn tear_block(g: &Incidence, block: &[(EqIdx, VarIdx)]) -> Result<Tearing, StructuralError> {
    TearingWorkspace::new().tear(g, block)
}
