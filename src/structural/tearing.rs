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

    fn tear_marked(&self, g: &Incidence, block: &[(EqIdx, VarIdx)]) -> Tearing {
        let n = block.len();
        let local = |v: VarIdx| self.var_local[v.index()];
        // Local occurrence lists (variable → block equations), built by a counting sort.
        let mut unknown = vec![0u32; n];
        let mut start = vec![0u32; n + 1];
        for (i, &(e, _)) in block.iter().enumerate() {
            for &v in g.eq_vars(e) {
                let j = local(v);
                if j != NONE {
                    unknown[i] += 1;
                    start[j as usize + 1] += 1;
                }
            }
        }
        for j in 0..n {
            start[j + 1] += start[j];
        }
        let mut fill = start[..n].to_vec();
        let mut occ = vec![0u32; start[n] as usize];
        for (i, &(e, _)) in block.iter().enumerate() {
            for &v in g.eq_vars(e) {
                let j = local(v);
                if j != NONE {
                    occ[fill[j as usize] as usize] = i as u32;
                    fill[j as usize] += 1;
                }
            }
        }
        // `score[j]`: the not yet assigned equations containing variable j, those where it occurs
        // implicitly counting twice, since a variable no equation can be solved for is the
        // cheapest to tear. It only decreases, so a max-heap with lazy re-insertion keeps the
        // best candidate on top.
        let mut score = vec![0u32; n];
        for &(e, _) in block {
            for (v, kind) in g.eq_edges(e) {
                let j = local(v);
                if j != NONE {
                    score[j as usize] += weight(kind);
                }
            }
        }
        let mut heap: BinaryHeap<(u32, Reverse<u32>)> =
            (0..n as u32).map(|j| (score[j as usize], Reverse(j))).collect();
        let mut eq_done = vec![false; n];
        let mut var_known = vec![false; n];
        let mut queue: VecDeque<u32> = (0..n as u32).filter(|&i| unknown[i as usize] == 1).collect();
        let mut out = Tearing::default();
        let mut known = 0usize;

        // An assigned or residual equation no longer counts for its unknown variables' scores.
        let release = |e: EqIdx, score: &mut [u32], var_known: &[bool]| {
            for (v, kind) in g.eq_edges(e) {
                let j = local(v);
                if j != NONE && !var_known[j as usize] {
                    score[j as usize] -= weight(kind);
                }
            }
        };
        // Marks equation i as assigned or residual; its variables lose one candidate equation.
        let finish_eq = |i: usize, eq_done: &mut [bool], score: &mut [u32], var_known: &[bool]| {
            eq_done[i] = true;
            release(block[i].0, score, var_known);
        };
        // Marks variable j as known; equations left with one unknown become candidates, those
        // left with none become residuals.
        let learn_var = |j: usize,
                         var_known: &mut [bool],
                         unknown: &mut [u32],
                         queue: &mut VecDeque<u32>,
                         residuals: &mut Vec<EqIdx>,
                         eq_done: &mut [bool],
                         score: &mut [u32]| {
            var_known[j] = true;
            for &i in &occ[start[j] as usize..start[j + 1] as usize] {
                let i = i as usize;
                if eq_done[i] {
                    continue;
                }
                unknown[i] -= 1;
                match unknown[i] {
                    1 => queue.push_back(i as u32),
                    0 => {
                        residuals.push(block[i].0);
                        eq_done[i] = true;
                        release(block[i].0, score, var_known);
                    }
                    _ => {}
                }
            }
        };

        for i in 0..n {
            if unknown[i] == 0 {
                out.residuals.push(block[i].0);
                finish_eq(i, &mut eq_done, &mut score, &var_known);
            }
        }
        while known < n {
            while let Some(i) = queue.pop_front() {
                let i = i as usize;
                if eq_done[i] || unknown[i] != 1 {
                    continue;
                }
                let e = block[i].0;
                let Some((v, kind)) = g.eq_edges(e).find(|&(v, _)| {
                    let j = local(v);
                    j != NONE && !var_known[j as usize]
                }) else {
                    continue;
                };
                if kind != EdgeKind::Solvable {
                    // Not solvable for its last unknown: it waits to become a residual.
                    continue;
                }
                finish_eq(i, &mut eq_done, &mut score, &var_known);
                out.inner.push((e, v));
                known += 1;
                let j = local(v) as usize;
                learn_var(
                    j,
                    &mut var_known,
                    &mut unknown,
                    &mut queue,
                    &mut out.residuals,
                    &mut eq_done,
                    &mut score,
                );
            }
            if known == n {
                break;
            }
            let Some((s, Reverse(j))) = heap.pop() else { break };
            let j = j as usize;
            if var_known[j] {
                continue;
            }
            if s != score[j] {
                heap.push((score[j], Reverse(j as u32)));
                continue;
            }
            out.tearing_vars.push(block[j].1);
            known += 1;
            learn_var(
                j,
                &mut var_known,
                &mut unknown,
                &mut queue,
                &mut out.residuals,
                &mut eq_done,
                &mut score,
            );
        }
        // Equations never assigned have no unknowns left and were recorded as residuals when
        // their last variable became known; sort them for a stable presentation.
        out.residuals.sort_unstable();
        out
    }
}

/// Tears one block with a fresh workspace. Prefer [`TearingWorkspace::tear`] for many blocks:
/// this allocates scratch arrays of the graph's size.
pub fn tear_block(g: &Incidence, block: &[(EqIdx, VarIdx)]) -> Result<Tearing, StructuralError> {
    TearingWorkspace::new().tear(g, block)
}
