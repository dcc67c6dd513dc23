//! Static state selection by dummy derivatives (Mattsson–Söderlind 1993), structurally.
//!
//! Input: a [`Pantelides`] result and a per-variable priority (higher = prefer to keep as a
//! state; the caller derives it from `stateSelect` and fixed start values; ids past the end of
//! the slice count as 0). Output: a [`StateSelection`]: the dummy derivatives (highest or
//! intermediate derivatives that become algebraic variables) and the remaining states.
//!
//! For each BLT block of the highest-order system, the differentiated equations of the block
//! form level 1 and the derivative variables of the block its candidates, sorted by ascending
//! priority (a variable's priority is that of its whole derivative chain: the minimum if any
//! member is negative, else the maximum, as in StateSelection.jl), then by descending
//! derivative order (so that among equals the higher derivatives, often ones Pantelides
//! created, become dummies and the model's own state variables stay), then by id. Candidates are matched to the
//! level's equations in that order by single augmenting paths, which picks a lexicographically
//! first maximal set: low-priority variables become dummies first. The next level takes the
//! equations one differentiation lower that are still derivatives, and as candidates the
//! integrals of the variables just chosen; this descends until no differentiated equation is
//! left. A state is a variable that has a derivative, where neither is a dummy. Since a block's
//! candidates are the derivatives the matching assigned to it, when priorities differ the same
//! selection is also made over all differentiated equations as one group, and taken instead
//! when its states have a larger sum of priorities and every equation can still be matched to
//! a distinct unknown.
//!
//! Structural only: no numeric rank check of the Jacobian blocks is done, so a choice can be
//! numerically singular at some point of a trajectory (dynamic state selection, not offered
//! here, would switch then). Each candidate costs one augmenting search, so a level costs
//! O(candidates × edges of the level) in the worst case; levels are small in practice. A level whose equations cannot all be matched is reported as
//! structurally singular.

use super::blt::blt;
use super::incidence::{EdgeKind, EqIdx, Incidence, StructuralError, VarIdx};
use super::matching::{Augmenter, Matching, maximum_matching_masked};
use super::pantelides::{Pantelides, check_chains};
use std::cmp::Reverse;

/// The outcome of state selection.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StateSelection {
    /// Derivative variables turned into algebraic variables, sorted by id.
    pub dummies: Vec<VarIdx>,
    /// Variables integrated as states (they have a derivative, and neither is a dummy), sorted.
    pub states: Vec<VarIdx>,
    /// For each variable of the Pantelides graph, whether it is a dummy derivative.
    pub is_dummy: Vec<bool>,
}

/// Chooses dummy derivatives for the index-reduced system `p`.
pub fn dummy_derivatives(p: &Pantelides, priority: &[i32]) -> Result<StateSelection, StructuralError> {
    let g = &p.graph;
    let n_vars = g.n_vars();
    if p.var_to_diff.len() != n_vars || p.eq_to_diff.len() != g.n_eqs() {
        return Err(StructuralError::Inconsistent("Pantelides tables differ from its graph"));
    }
    // Walking chains must end, so the table is checked as Pantelides checks its input.
    let diff_to_var = check_chains(n_vars, &p.var_to_diff)?;
    let mut diff_to_eq: Vec<Option<EqIdx>> = vec![None; g.n_eqs()];
    for (e, d) in p.eq_to_diff.iter().enumerate() {
        if let Some(d) = *d {
            *diff_to_eq
                .get_mut(d.index())
                .ok_or(StructuralError::Inconsistent("eq_to_diff points outside the graph"))? = Some(EqIdx(e as u32));
        }
    }
    let chain_priority = chain_priorities(&p.var_to_diff, &diff_to_var, priority);
    let blocks = blt(g, &p.matching)?;
    // The candidates of a block are the derivatives its matching assigns to it, which may
    // leave a preferred variable no choice: in `phi_rel = hphi - phi0`, `w_rel = der(phi_rel)`,
    // `hw = der(hphi)`, the state `hw` solves `der(hphi)` in a block of its own, so the
    // differentiated constraint can only drop `der(phi_rel)`, `stateSelect = prefer` or not.
    // All differentiated equations taken together as one level see every derivative in them;
    // that choice is taken when it keeps more preferred states and leaves a system that can be
    // matched.
    let by_block = blocks.blocks().map(|block| {
        let eqs = block
            .iter()
            .map(|&(e, _)| e)
            .filter(|e| diff_to_eq[e.index()].is_some());
        let vars = block
            .iter()
            .map(|&(_, v)| v)
            .filter(|v| diff_to_var[v.index()].is_some());
        (eqs.collect(), vars.collect())
    });
    let groups: Vec<(Vec<EqIdx>, Vec<VarIdx>)> = by_block.collect();
    let mut is_dummy = select_dummies(g, groups, &diff_to_eq, &diff_to_var, &chain_priority)?;
    if chain_priority.iter().any(|&(p, _)| p != chain_priority[0].0) {
        // The highest-order system's differentiated equations and derivatives, as the blocks
        // hold them.
        let whole = (
            (g.eqs())
                .filter(|e| p.eq_to_diff[e.index()].is_none() && diff_to_eq[e.index()].is_some())
                .collect(),
            (g.vars())
                .filter(|v| p.var_to_diff[v.index()].is_none() && diff_to_var[v.index()].is_some())
                .collect(),
        );
        if let Ok(together) = select_dummies(g, vec![whole], &diff_to_eq, &diff_to_var, &chain_priority)
            && state_priority(p, &together, &chain_priority) > state_priority(p, &is_dummy, &chain_priority)
            && can_be_matched(p, &together)
        {
            is_dummy = together;
        }
    }
    let dummies: Vec<VarIdx> = g.vars().filter(|v| is_dummy[v.index()]).collect();
    let states = g.vars().filter(|v| is_state(p, &is_dummy, *v)).collect();
    Ok(StateSelection {
        dummies,
        states,
        is_dummy,
    })
}

/// Whether `v` is a state once `is_dummy` is chosen: it has a derivative, and neither is a dummy.
fn is_state(p: &Pantelides, is_dummy: &[bool], v: VarIdx) -> bool {
    !is_dummy[v.index()] && p.var_to_diff[v.index()].is_some_and(|d| !is_dummy[d.index()])
}

/// The dummy derivatives chosen level by level in each group of (differentiated equations,
/// candidate derivatives), the candidates sorted by their chains' priority (see the module
/// documentation).
fn select_dummies(
    g: &Incidence,
    groups: Vec<(Vec<EqIdx>, Vec<VarIdx>)>,
    diff_to_eq: &[Option<EqIdx>],
    diff_to_var: &[Option<VarIdx>],
    chain_priority: &[(i32, u32)],
) -> Result<Vec<bool>, StructuralError> {
    let mut is_dummy = vec![false; g.n_vars()];
    let mut eq_local = vec![u32::MAX; g.n_eqs()];
    let mut search = Augmenter::new();
    for (mut eqs, mut candidates) in groups {
        candidates.sort_by_key(|v| (chain_priority[v.index()].0, Reverse(chain_priority[v.index()].1), *v));
        // Each level is one differentiation lower, so a valid `eq_to_diff` ends the descent
        // within `n_eqs` levels; the bound only stops a cyclic table given by hand.
        let mut levels = 0usize;
        while !eqs.is_empty() {
            levels += 1;
            if levels > g.n_eqs() {
                return Err(StructuralError::Inconsistent("eq_to_diff contains a cycle"));
            }
            let chosen = select_level(g, &eqs, &candidates, &mut eq_local, &mut search)?;
            for &v in &chosen {
                is_dummy[v.index()] = true;
            }
            // One level down: integrals of the level's equations that are still derivatives, and
            // integrals of the chosen variables that are still derivatives (order kept).
            eqs = eqs
                .iter()
                .filter_map(|e| diff_to_eq[e.index()])
                .filter(|e| diff_to_eq[e.index()].is_some())
                .collect();
            candidates = chosen
                .iter()
                .filter_map(|v| diff_to_var[v.index()])
                .filter(|v| diff_to_var[v.index()].is_some())
                .collect();
        }
    }
    Ok(is_dummy)
}

/// The sum of the chain priorities of the states `is_dummy` leaves.
fn state_priority(p: &Pantelides, is_dummy: &[bool], chain_priority: &[(i32, u32)]) -> i64 {
    (0..is_dummy.len())
        .map(|v| VarIdx(v as u32))
        .filter(|&v| is_state(p, is_dummy, v))
        .map(|v| i64::from(chain_priority[v.index()].0))
        .sum()
}

/// Whether every equation, the differentiated ones included, can be matched to a distinct
/// unknown once `is_dummy` is chosen (the unknowns are every variable but the states).
fn can_be_matched(p: &Pantelides, is_dummy: &[bool]) -> bool {
    let g = &p.graph;
    let unknown: Vec<bool> = g.vars().map(|v| !is_state(p, is_dummy, v)).collect();
    let n_unknowns = unknown.iter().filter(|&&u| u).count();
    n_unknowns == g.n_eqs() && maximum_matching_masked(g, None, Some(&unknown)).size() == g.n_eqs()
}

/// For each variable, its chain's priority (the minimum over the chain if any member is
/// negative, i.e. the user discourages the state, else the maximum) and its derivative order
/// within the chain. Linear: each chain is walked twice.
fn chain_priorities(
    var_to_diff: &[Option<VarIdx>],
    diff_to_var: &[Option<VarIdx>],
    priority: &[i32],
) -> Vec<(i32, u32)> {
    let own = |v: VarIdx| priority.get(v.index()).copied().unwrap_or(0);
    let mut out = vec![(0, 0); var_to_diff.len()];
    for root in (0..var_to_diff.len()).filter(|&v| diff_to_var[v].is_none()) {
        let (mut lo, mut hi) = (i32::MAX, i32::MIN);
        let mut cur = Some(VarIdx(root as u32));
        while let Some(c) = cur {
            lo = lo.min(own(c));
            hi = hi.max(own(c));
            cur = var_to_diff[c.index()];
        }
        let p = if lo < 0 { lo } else { hi };
        let mut cur = Some(VarIdx(root as u32));
        let mut order = 0u32;
        while let Some(c) = cur {
            out[c.index()] = (p, order);
            order += 1;
            cur = var_to_diff[c.index()];
        }
    }
    out
}

/// Matches the candidates (in order) to the level's equations and returns the matched ones.
/// The roles are swapped in a small local graph, candidates as rows and equations as columns,
/// so the ordinary equation-rooted augmenting search does the work.
fn select_level(
    g: &Incidence,
    eqs: &[EqIdx],
    candidates: &[VarIdx],
    eq_local: &mut [u32],
    search: &mut Augmenter,
) -> Result<Vec<VarIdx>, StructuralError> {
    for (i, e) in eqs.iter().enumerate() {
        eq_local[e.index()] = i as u32;
    }
    let rows = candidates.iter().map(|&v| {
        g.var_eqs(v)
            .iter()
            .filter(|e| eq_local[e.index()] != u32::MAX)
            .map(|e| (VarIdx(eq_local[e.index()]), EdgeKind::Implicit))
            .collect::<Vec<_>>()
    });
    let local = Incidence::from_equations(eqs.len(), rows);
    for e in eqs {
        eq_local[e.index()] = u32::MAX;
    }
    let local = local?;
    let mut m = Matching::new(local.n_eqs(), local.n_vars());
    let mut chosen = Vec::new();
    for (row, &v) in candidates.iter().enumerate() {
        if chosen.len() == eqs.len() {
            break;
        }
        if search.augment(&local, &mut m, EqIdx(row as u32), |_| true) {
            chosen.push(v);
        }
    }
    if chosen.len() < eqs.len() {
        let unmatched_eqs = (0..eqs.len())
            .filter(|&i| m.eq_of(VarIdx(i as u32)).is_none())
            .map(|i| eqs[i])
            .collect();
        return Err(StructuralError::Singular { unmatched_eqs });
    }
    Ok(chosen)
}
