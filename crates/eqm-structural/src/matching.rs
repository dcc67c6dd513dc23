//! Maximum bipartite matching of equations to variables, and the structurally singular parts.
//!
//! Input: an [`Incidence`] (optionally restricted to subsets of equations and variables).
//! Output: a [`Matching`] (equation → variable and variable → equation, each `Option`) of
//! maximum cardinality; for an imperfect matching, [`singular_parts`] gives the over- and
//! under-determined parts as id sets (Dulmage–Mendelsohn reachability).
//!
//! Algorithm: a cheap greedy start (degree-one vertices first, in the spirit of Karp–Sipser, then
//! solvable edges before implicit ones, so the matching prefers causal assignments) followed by
//! Hopcroft–Karp with an iterative depth-first search, O(E √V). [`Augmenter`] offers single-root
//! augmenting-path search with the visited ("coloured") sets, which Pantelides' algorithm and
//! the dummy-derivative selection need.
//!
//! It deliberately does not render diagnostics or know why an equation is singular; the caller
//! maps the id sets back to names and spans. Hopcroft–Karp does not try to maximise the number
//! of solvable matched edges beyond the greedy start: tearing deals with implicit assignments.

use super::incidence::{EdgeKind, EqIdx, Incidence, StructuralError, VarIdx};
use std::collections::VecDeque;

/// A read-only view of equation → variable adjacency, implemented by [`Incidence`] and by the
/// growing graph inside Pantelides' algorithm, so that one augmenting-path search serves both.
pub trait EqAdjacency {
    /// Number of equations.
    fn n_eqs(&self) -> usize;
    /// Number of variables.
    fn n_vars(&self) -> usize;
    /// The variables of an equation (empty for an id outside the graph).
    fn adjacent_vars(&self, eq: EqIdx) -> &[VarIdx];
}

impl EqAdjacency for Incidence {
    fn n_eqs(&self) -> usize {
        Incidence::n_eqs(self)
    }
    fn n_vars(&self) -> usize {
        Incidence::n_vars(self)
    }
    fn adjacent_vars(&self, eq: EqIdx) -> &[VarIdx] {
        self.eq_vars(eq)
    }
}

/// An assignment of equations to variables, each side at most once, kept consistent both ways.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Matching {
    eq_to_var: Vec<Option<VarIdx>>,
    var_to_eq: Vec<Option<EqIdx>>,
}

impl Matching {
    /// The empty matching over `n_eqs` equations and `n_vars` variables.
    pub fn new(n_eqs: usize, n_vars: usize) -> Matching {
        Matching {
            eq_to_var: vec![None; n_eqs],
            var_to_eq: vec![None; n_vars],
        }
    }

    /// Builds a matching from an equation → variable table, checking that every pair is an edge
    /// of `g` and that no variable is used twice.
    pub fn from_eq_to_var(g: &Incidence, eq_to_var: Vec<Option<VarIdx>>) -> Result<Matching, StructuralError> {
        if eq_to_var.len() != g.n_eqs() {
            return Err(StructuralError::Inconsistent(
                "matching length differs from the equation count",
            ));
        }
        let mut var_to_eq = vec![None; g.n_vars()];
        for (e, v) in eq_to_var.iter().enumerate() {
            if let Some(v) = *v {
                let eq = EqIdx(e as u32);
                if g.edge(eq, v).is_none() {
                    return Err(StructuralError::Inconsistent(
                        "matching pairs an equation with a variable not in it",
                    ));
                }
                let slot = &mut var_to_eq[v.index()];
                if slot.is_some() {
                    return Err(StructuralError::Inconsistent("matching uses a variable twice"));
                }
                *slot = Some(eq);
            }
        }
        Ok(Matching { eq_to_var, var_to_eq })
    }

    /// Number of equations covered by the tables.
    pub fn n_eqs(&self) -> usize {
        self.eq_to_var.len()
    }

    /// Number of variables covered by the tables.
    pub fn n_vars(&self) -> usize {
        self.var_to_eq.len()
    }

    /// Extends the tables to at least the given sizes (new entries unmatched).
    pub fn grow(&mut self, n_eqs: usize, n_vars: usize) {
        if self.eq_to_var.len() < n_eqs {
            self.eq_to_var.resize(n_eqs, None);
        }
        if self.var_to_eq.len() < n_vars {
            self.var_to_eq.resize(n_vars, None);
        }
    }

    /// The variable assigned to an equation.
    pub fn var_of(&self, eq: EqIdx) -> Option<VarIdx> {
        self.eq_to_var.get(eq.index()).copied().flatten()
    }

    /// The equation assigned to a variable.
    pub fn eq_of(&self, var: VarIdx) -> Option<EqIdx> {
        self.var_to_eq.get(var.index()).copied().flatten()
    }

    /// The equation → variable table.
    pub fn eq_to_var(&self) -> &[Option<VarIdx>] {
        &self.eq_to_var
    }

    /// The variable → equation table.
    pub fn var_to_eq(&self) -> &[Option<EqIdx>] {
        &self.var_to_eq
    }

    /// Number of matched pairs.
    pub fn size(&self) -> usize {
        self.eq_to_var.iter().filter(|v| v.is_some()).count()
    }

    /// Whether every equation and every variable is matched.
    pub fn is_perfect(&self) -> bool {
        self.eq_to_var.len() == self.var_to_eq.len() && self.eq_to_var.iter().all(Option::is_some)
    }

    /// Pairs `eq` with `var`, first unpairing whatever either was paired with. Fails on ids
    /// outside the tables (see [`Matching::grow`]); it does not check that the pair is an edge.
    pub fn set(&mut self, eq: EqIdx, var: VarIdx) -> Result<(), StructuralError> {
        if eq.index() >= self.eq_to_var.len() {
            return Err(StructuralError::InvalidEq { eq });
        }
        if var.index() >= self.var_to_eq.len() {
            return Err(StructuralError::InvalidVar { eq, var });
        }
        self.pair(eq, var);
        Ok(())
    }

    /// [`Matching::set`] for ids the algorithms know to be inside the tables.
    pub(crate) fn pair(&mut self, eq: EqIdx, var: VarIdx) {
        self.unset_eq(eq);
        if let Some(old) = self.var_to_eq[var.index()] {
            self.eq_to_var[old.index()] = None;
        }
        self.eq_to_var[eq.index()] = Some(var);
        self.var_to_eq[var.index()] = Some(eq);
    }

    /// Unpairs an equation (and its variable).
    pub fn unset_eq(&mut self, eq: EqIdx) {
        if let Some(Some(v)) = self.eq_to_var.get(eq.index()).copied() {
            self.var_to_eq[v.index()] = None;
            self.eq_to_var[eq.index()] = None;
        }
    }

    /// The pairs in increasing equation order.
    pub fn pairs(&self) -> impl Iterator<Item = (EqIdx, VarIdx)> + '_ {
        self.eq_to_var
            .iter()
            .enumerate()
            .filter_map(|(e, v)| v.map(|v| (EqIdx(e as u32), v)))
    }
}

/// A maximum matching of `g`.
pub fn maximum_matching(g: &Incidence) -> Matching {
    maximum_matching_masked(g, None, None)
}

/// A maximum matching of the subgraph of `g` induced by the equations with `eq_mask[e]` and the
/// variables with `var_mask[v]` (`None` allows all; a mask shorter than the graph excludes the
/// ids past its end).
pub fn maximum_matching_masked(g: &Incidence, eq_mask: Option<&[bool]>, var_mask: Option<&[bool]>) -> Matching {
    let eq_ok = |e: EqIdx| eq_mask.is_none_or(|m| m.get(e.index()).copied().unwrap_or(false));
    let var_ok = |v: VarIdx| var_mask.is_none_or(|m| m.get(v.index()).copied().unwrap_or(false));
    let mut m = Matching::new(g.n_eqs(), g.n_vars());
    greedy(g, &mut m, &eq_ok, &var_ok);
    hopcroft_karp(g, &mut m, &eq_ok, &var_ok);
    m
}

/// Greedy initial matching. Degree-one equations and variables have only one possible partner,
/// so taking it first can never lose cardinality (the Karp–Sipser rule, applied to the static
/// degrees); the remaining equations take their first free solvable variable, then any free one.
fn greedy(g: &Incidence, m: &mut Matching, eq_ok: &impl Fn(EqIdx) -> bool, var_ok: &impl Fn(VarIdx) -> bool) {
    for e in g.eqs().filter(|&e| eq_ok(e)) {
        let mut allowed = g.eq_vars(e).iter().copied().filter(|&v| var_ok(v));
        if let (Some(v), None) = (allowed.next(), allowed.next())
            && m.eq_of(v).is_none()
        {
            m.pair(e, v);
        }
    }
    for v in g.vars() {
        if !var_ok(v) || m.eq_of(v).is_some() {
            continue;
        }
        let mut allowed = g.var_eqs(v).iter().copied().filter(|&e| eq_ok(e));
        if let (Some(e), None) = (allowed.next(), allowed.next())
            && m.var_of(e).is_none()
        {
            m.pair(e, v);
        }
    }
    for want in [Some(EdgeKind::Solvable), None] {
        for e in g.eqs() {
            if m.var_of(e).is_some() || !eq_ok(e) {
                continue;
            }
            let free = g
                .eq_edges(e)
                .find(|&(v, k)| var_ok(v) && m.eq_of(v).is_none() && want.is_none_or(|w| w == k));
            if let Some((v, _)) = free {
                m.pair(e, v);
            }
        }
    }
}

const INF: u32 = u32::MAX;

/// Hopcroft–Karp phases: a breadth-first search layers the equations by alternating distance
/// from the free ones, then an iterative depth-first search finds a maximal set of disjoint
/// shortest augmenting paths. Each phase is linear; O(√V) phases suffice.
fn hopcroft_karp(g: &Incidence, m: &mut Matching, eq_ok: &impl Fn(EqIdx) -> bool, var_ok: &impl Fn(VarIdx) -> bool) {
    let n = g.n_eqs();
    let mut dist = vec![INF; n];
    let mut cursor = vec![0u32; n];
    let mut queue = VecDeque::new();
    let mut stack: Vec<EqIdx> = Vec::new();
    loop {
        queue.clear();
        for e in g.eqs() {
            if eq_ok(e) && m.var_of(e).is_none() {
                dist[e.index()] = 0;
                queue.push_back(e);
            } else {
                dist[e.index()] = INF;
            }
        }
        let mut found = false;
        while let Some(e) = queue.pop_front() {
            for &v in g.eq_vars(e) {
                if !var_ok(v) {
                    continue;
                }
                match m.eq_of(v) {
                    None => found = true,
                    Some(e2) if dist[e2.index()] == INF => {
                        dist[e2.index()] = dist[e.index()] + 1;
                        queue.push_back(e2);
                    }
                    Some(_) => {}
                }
            }
        }
        if !found {
            return;
        }
        cursor.fill(0);
        for root in g.eqs() {
            if !eq_ok(root) || m.var_of(root).is_some() || dist[root.index()] != 0 {
                continue;
            }
            stack.clear();
            stack.push(root);
            while let Some(&e) = stack.last() {
                let vars = g.eq_vars(e);
                let c = cursor[e.index()] as usize;
                let Some(&v) = vars.get(c) else {
                    // Dead end: no shortest augmenting path continues through `e` in this phase.
                    dist[e.index()] = INF;
                    stack.pop();
                    continue;
                };
                cursor[e.index()] += 1;
                if !var_ok(v) {
                    continue;
                }
                match m.eq_of(v) {
                    None => {
                        augment_along(g, m, &stack, &cursor, v);
                        break;
                    }
                    Some(e2) if dist[e2.index()] != INF && dist[e2.index()] == dist[e.index()] + 1 => stack.push(e2),
                    Some(_) => {}
                }
            }
        }
    }
}

/// Flips the alternating path given by a stack of equations: the top takes the free variable
/// `free`, and every other equation takes the variable through which the search left it (the one
/// just before its cursor), which is what its successor on the stack was matched to.
fn augment_along<G: EqAdjacency>(g: &G, m: &mut Matching, stack: &[EqIdx], cursor: &[u32], free: VarIdx) {
    let mut var = free;
    for (i, &e) in stack.iter().enumerate().rev() {
        m.pair(e, var);
        if i > 0 {
            let parent = stack[i - 1];
            var = g.adjacent_vars(parent)[cursor[parent.index()] as usize - 1];
        }
    }
}

/// Single-root augmenting-path search with reusable marks, as used by Pantelides' algorithm
/// (which needs the sets the failed search coloured) and by greedy, order-respecting matching.
#[derive(Debug, Default, Clone)]
pub struct Augmenter {
    eq_seen: Vec<u32>,
    var_seen: Vec<u32>,
    cursor: Vec<u32>,
    stamp: u32,
    stack: Vec<EqIdx>,
    /// Equations visited by the last [`Augmenter::augment`] call, in visiting order.
    pub visited_eqs: Vec<EqIdx>,
    /// Allowed variables visited by the last [`Augmenter::augment`] call, in visiting order.
    pub visited_vars: Vec<VarIdx>,
}

impl Augmenter {
    /// A search with no marks yet; it sizes itself to the graph on each call.
    pub fn new() -> Augmenter {
        Augmenter::default()
    }

    /// Searches an augmenting path from the (unmatched) equation `root` using only variables
    /// with `var_ok`, and flips it if found. Free variables of an equation are tried before
    /// descending (the look-ahead of Duff's MC21), which keeps paths short. On failure the
    /// visited sets are the equations and variables Pantelides' algorithm colours.
    pub fn augment<G: EqAdjacency>(
        &mut self,
        g: &G,
        m: &mut Matching,
        root: EqIdx,
        var_ok: impl Fn(VarIdx) -> bool,
    ) -> bool {
        self.visited_eqs.clear();
        self.visited_vars.clear();
        self.stack.clear();
        if root.index() >= g.n_eqs() {
            return false;
        }
        m.grow(g.n_eqs(), g.n_vars());
        self.eq_seen.resize(g.n_eqs(), 0);
        self.var_seen.resize(g.n_vars(), 0);
        self.cursor.resize(g.n_eqs(), 0);
        // Stamps avoid clearing the marks between calls; on wrap-around they are reset once.
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.eq_seen.fill(0);
            self.var_seen.fill(0);
            self.stamp = 1;
        }
        let stamp = self.stamp;
        self.eq_seen[root.index()] = stamp;
        self.visited_eqs.push(root);
        self.cursor[root.index()] = 0;
        self.stack.push(root);
        let mut look_ahead = true;
        while let Some(&e) = self.stack.last() {
            if look_ahead {
                look_ahead = false;
                let vars = g.adjacent_vars(e);
                if let Some(&v) = vars.iter().find(|&&v| var_ok(v) && m.eq_of(v).is_none()) {
                    self.visited_vars.push(v);
                    let mut var = v;
                    for (i, &eq) in self.stack.iter().enumerate().rev() {
                        m.pair(eq, var);
                        if i > 0 {
                            let parent = self.stack[i - 1];
                            var = g.adjacent_vars(parent)[self.cursor[parent.index()] as usize - 1];
                        }
                    }
                    return true;
                }
            }
            let vars = g.adjacent_vars(e);
            let c = self.cursor[e.index()] as usize;
            let Some(&v) = vars.get(c) else {
                self.stack.pop();
                continue;
            };
            self.cursor[e.index()] += 1;
            if !var_ok(v) || self.var_seen[v.index()] == stamp {
                continue;
            }
            self.var_seen[v.index()] = stamp;
            self.visited_vars.push(v);
            if let Some(e2) = m.eq_of(v)
                && self.eq_seen[e2.index()] != stamp
            {
                self.eq_seen[e2.index()] = stamp;
                self.visited_eqs.push(e2);
                self.cursor[e2.index()] = 0;
                self.stack.push(e2);
                look_ahead = true;
            }
        }
        false
    }
}

/// The structurally singular parts of a system with an imperfect maximum matching.
///
/// Over-determined: the unmatched equations and every equation reachable from them by
/// alternating paths, with the variables those equations contain. There are more equations than
/// variables in it (exactly `unmatched_eqs.len()` more), so some equation is redundant or
/// contradictory. Under-determined: the unmatched variables and every variable reachable from
/// them by alternating paths, with the equations containing them; more variables than equations.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SingularParts {
    pub unmatched_eqs: Vec<EqIdx>,
    pub over_eqs: Vec<EqIdx>,
    pub over_vars: Vec<VarIdx>,
    pub unmatched_vars: Vec<VarIdx>,
    pub under_eqs: Vec<EqIdx>,
    pub under_vars: Vec<VarIdx>,
}

impl SingularParts {
    /// Whether both parts are empty (the matching was perfect).
    pub fn is_empty(&self) -> bool {
        self.unmatched_eqs.is_empty() && self.unmatched_vars.is_empty()
    }
}

/// Dulmage–Mendelsohn style reachability from the unmatched vertices of a maximum matching.
/// All sets are sorted by id. Linear time. If `m` is not maximum the sets are still computed but
/// an alternating path may end in a free vertex; the result is then only indicative.
pub fn singular_parts(g: &Incidence, m: &Matching) -> Result<SingularParts, StructuralError> {
    if m.n_eqs() != g.n_eqs() || m.n_vars() != g.n_vars() {
        return Err(StructuralError::Inconsistent("matching size differs from the graph"));
    }
    let mut parts = SingularParts {
        unmatched_eqs: g.eqs().filter(|&e| m.var_of(e).is_none()).collect(),
        unmatched_vars: g.vars().filter(|&v| m.eq_of(v).is_none()).collect(),
        ..SingularParts::default()
    };
    let mut eq_seen = vec![false; g.n_eqs()];
    let mut var_seen = vec![false; g.n_vars()];
    alternating_reach(
        &parts.unmatched_eqs,
        &mut eq_seen,
        &mut var_seen,
        |e| g.eq_vars(e),
        |v| m.eq_of(v),
    );
    parts.over_eqs = g.eqs().filter(|e| eq_seen[e.index()]).collect();
    parts.over_vars = g.vars().filter(|v| var_seen[v.index()]).collect();
    eq_seen.fill(false);
    var_seen.fill(false);
    alternating_reach(
        &parts.unmatched_vars,
        &mut var_seen,
        &mut eq_seen,
        |v| g.var_eqs(v),
        |e| m.var_of(e),
    );
    parts.under_eqs = g.eqs().filter(|e| eq_seen[e.index()]).collect();
    parts.under_vars = g.vars().filter(|v| var_seen[v.index()]).collect();
    Ok(parts)
}

/// An id usable as an array index, so one reachability search serves both sides of the graph.
trait Side: Copy {
    fn at(self) -> usize;
}

impl Side for EqIdx {
    fn at(self) -> usize {
        self.index()
    }
}

impl Side for VarIdx {
    fn at(self) -> usize {
        self.index()
    }
}

/// Marks every vertex reachable from `roots` by alternating paths: from a vertex of side A to
/// all its neighbours on side B, and from a B vertex to its matched partner on side A. An
/// explicit stack keeps it iterative.
fn alternating_reach<'g, A: Side, B: Side + 'g>(
    roots: &[A],
    seen_a: &mut [bool],
    seen_b: &mut [bool],
    neighbours: impl Fn(A) -> &'g [B],
    partner: impl Fn(B) -> Option<A>,
) {
    let mut stack: Vec<A> = Vec::with_capacity(roots.len());
    for &r in roots {
        seen_a[r.at()] = true;
        stack.push(r);
    }
    while let Some(a) = stack.pop() {
        for &b in neighbours(a) {
            if !std::mem::replace(&mut seen_b[b.at()], true)
                && let Some(a2) = partner(b)
                && !std::mem::replace(&mut seen_a[a2.at()], true)
            {
                stack.push(a2);
            }
        }
    }
}
