//! Block lower triangular (BLT) ordering: the strongly connected components of the equation
//! dependency graph, in evaluation order.
//!
//! Input: an [`Incidence`] and a [`Matching`] of it. Equation `e` depends on equation `e'` when
//! `e` contains the variable matched to `e'`. Output: a [`Blt`], the blocks in an order where a
//! block only uses variables of itself, of earlier blocks, or unmatched variables (which count
//! as known inputs, e.g. states when the caller matches only the algebraic part); each block
//! lists its `(equation, variable)` pairs sorted by equation id.
//!
//! Unmatched equations are left out of the blocks: pass a perfect matching to get every
//! equation placed. The components come from an iterative Tarjan search (linear time, no
//! recursion); roots and successors are visited in id order, so the order is deterministic. It
//! deliberately does not tear blocks or judge solvability: see `tearing`.

use super::incidence::{EqIdx, Incidence, StructuralError, VarIdx};
use super::matching::Matching;

/// The blocks of a BLT ordering, stored flat: block `i` is `pairs[starts[i]..starts[i + 1]]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Blt {
    pairs: Vec<(EqIdx, VarIdx)>,
    starts: Vec<u32>,
}

impl Blt {
    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Whether there are no blocks.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `(equation, variable)` pairs of block `i` (empty past the end).
    pub fn block(&self, i: usize) -> &[(EqIdx, VarIdx)] {
        match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.pairs[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The blocks in evaluation order.
    pub fn blocks(&self) -> impl Iterator<Item = &[(EqIdx, VarIdx)]> + '_ {
        self.starts
            .windows(2)
            .map(|w| &self.pairs[w[0] as usize..w[1] as usize])
    }

    /// All pairs, block after block.
    pub fn pairs(&self) -> &[(EqIdx, VarIdx)] {
        &self.pairs
    }
}

const UNVISITED: u32 = u32::MAX;

/// Sorts the matched equations into strongly connected blocks in evaluation order.
///
/// Fails if the matching does not have the graph's sizes or pairs an equation with a variable
/// that does not occur in it.
pub fn blt(g: &Incidence, m: &Matching) -> Result<Blt, StructuralError> {
    if m.n_eqs() != g.n_eqs() || m.n_vars() != g.n_vars() {
        return Err(StructuralError::Inconsistent("matching size differs from the graph"));
    }
    for (e, v) in m.pairs() {
        if g.edge(e, v).is_none() {
            return Err(StructuralError::Inconsistent(
                "matching pairs an equation with a variable not in it",
            ));
        }
    }
    let n = g.n_eqs();
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut counter = 0u32;
    let mut component: Vec<EqIdx> = Vec::new();
    // The explicit call stack: an equation and the position of the next variable to follow.
    let mut call: Vec<(EqIdx, u32)> = Vec::new();
    let mut out = Blt {
        pairs: Vec::with_capacity(m.size()),
        starts: vec![0],
    };
    for root in g.eqs() {
        if index[root.index()] != UNVISITED || m.var_of(root).is_none() {
            continue;
        }
        // `next` is the equation to open: the root first, then each unvisited successor.
        let mut next = Some(root);
        loop {
            if let Some(x) = next.take() {
                index[x.index()] = counter;
                low[x.index()] = counter;
                counter += 1;
                on_stack[x.index()] = true;
                component.push(x);
                call.push((x, 0));
            }
            let Some(top) = call.last_mut() else { break };
            let (e, cursor) = *top;
            let vars = g.eq_vars(e);
            if let Some(&v) = vars.get(cursor as usize) {
                top.1 += 1;
                let Some(e2) = m.eq_of(v) else { continue };
                if index[e2.index()] == UNVISITED {
                    next = Some(e2);
                } else if on_stack[e2.index()] {
                    low[e.index()] = low[e.index()].min(index[e2.index()]);
                }
                continue;
            }
            call.pop();
            if let Some(&(parent, _)) = call.last() {
                low[parent.index()] = low[parent.index()].min(low[e.index()]);
            }
            if low[e.index()] == index[e.index()] {
                // Tarjan emits a component only after every component it depends on, which is
                // exactly evaluation order for "depends on" edges.
                let start = out.pairs.len();
                while let Some(x) = component.pop() {
                    on_stack[x.index()] = false;
                    if let Some(v) = m.var_of(x) {
                        out.pairs.push((x, v));
                    }
                    if x == e {
                        break;
                    }
                }
                out.pairs[start..].sort_unstable();
                out.starts.push(out.pairs.len() as u32);
            }
        }
    }
    Ok(out)
}
