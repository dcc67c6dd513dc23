//! Pantelides' index reduction on ids: which equations to differentiate, and how often.
//!
//! Input: an [`Incidence`] over all variables, derivative variables included, and
//! `var_to_diff` (for each variable, the variable that is its time derivative, if the system has
//! one). Output: a [`Pantelides`] result: the extended graph (original equations and variables
//! keep their ids, new ones are appended), the `eq_to_diff` and `var_to_diff` chains, how often
//! each original equation was differentiated, the list of new equations and variables in
//! creation order (so the caller can build `d/dt` of each symbolically afterwards), and a
//! matching of the highest-order equations to the highest-derivative variables.
//!
//! The algorithm is Pantelides' (1988), as in StateSelection.jl's `pantelides.jl`: only
//! highest-derivative variables may be matched; when an equation cannot be augmented, every
//! equation and variable coloured by the failed search is differentiated and the search is
//! retried from the derivative of the equation. The structural incidence of `d/dt f` is every
//! variable of `f` (conservatively, as `Implicit`) plus its derivative (with the kind the
//! variable had in `f`, since `d/dt` keeps linearity in the differentiated variable).
//!
//! Before starting, the system is checked for structural nonsingularity in Pantelides' sense
//! (each equation matched to a distinct variable *family*, a variable and all its derivatives
//! counting as one); a singular system would make the algorithm differentiate forever, so it is
//! rejected with the unmatched equations. An iteration cap remains as a safety net. It
//! deliberately does not differentiate expressions, select states, or check numeric rank.

use super::incidence::{EdgeKind, EqIdx, Incidence, IncidenceBuilder, StructuralError, VarIdx};
use super::matching::{Augmenter, EqAdjacency, Matching, maximum_matching};

/// The outcome of index reduction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pantelides {
    /// The extended graph: original ids first, then the new equations and variables.
    pub graph: Incidence,
    /// For each equation of `graph`, the equation that is its time derivative.
    pub eq_to_diff: Vec<Option<EqIdx>>,
    /// For each variable of `graph`, the variable that is its time derivative.
    pub var_to_diff: Vec<Option<VarIdx>>,
    /// For each original equation, how many times it was differentiated.
    pub differentiations: Vec<u32>,
    /// The new equations in creation order, as `(new, old)`: `new` is `d/dt old`. Building them
    /// in this order is always possible, since `old` is an original or an earlier new equation.
    pub new_eqs: Vec<(EqIdx, EqIdx)>,
    /// The new variables in creation order, as `(new, old)`: `new` is `d/dt old`.
    pub new_vars: Vec<(VarIdx, VarIdx)>,
    /// Highest-order equations (those not differentiated) matched to highest-derivative
    /// variables (those without a derivative). Sized to `graph`.
    pub matching: Matching,
}

impl Pantelides {
    /// The most any original equation was differentiated. When it is positive, the structural
    /// index is one more (the Cartesian pendulum: 2, index 3); when it is zero the index is 0
    /// or 1, which the count alone cannot tell apart.
    pub fn max_differentiations(&self) -> u32 {
        self.differentiations.iter().copied().max().unwrap_or(0)
    }
}

/// The graph growing during the algorithm: the original graph, borrowed, plus new equations.
struct Growing<'a> {
    base: &'a Incidence,
    n_vars: usize,
    extra_vars: Vec<Vec<VarIdx>>,
    extra_kinds: Vec<Vec<EdgeKind>>,
}

impl Growing<'_> {
    fn edges(&self, eq: EqIdx) -> (&[VarIdx], &[EdgeKind]) {
        let base = self.base.n_eqs();
        match eq.index().checked_sub(base) {
            None => (self.base.eq_vars(eq), self.base.eq_kinds(eq)),
            Some(i) => match (self.extra_vars.get(i), self.extra_kinds.get(i)) {
                (Some(v), Some(k)) => (v, k),
                _ => (&[], &[]),
            },
        }
    }
}

impl EqAdjacency for Growing<'_> {
    fn n_eqs(&self) -> usize {
        self.base.n_eqs() + self.extra_vars.len()
    }
    fn n_vars(&self) -> usize {
        self.n_vars
    }
    fn adjacent_vars(&self, eq: EqIdx) -> &[VarIdx] {
        self.edges(eq).0
    }
}

/// Checks that `var_to_diff` fits the graph and forms simple chains: every target exists, no
/// variable is the derivative of two variables, and no chain loops back on itself. Returns the
/// inverse table (for each variable, the variable it is the derivative of).
pub(crate) fn check_chains(
    n_vars: usize,
    var_to_diff: &[Option<VarIdx>],
) -> Result<Vec<Option<VarIdx>>, StructuralError> {
    if var_to_diff.len() != n_vars {
        return Err(StructuralError::Inconsistent(
            "var_to_diff length differs from the variable count",
        ));
    }
    let mut diff_to_var = vec![None; n_vars];
    for (v, d) in var_to_diff.iter().enumerate() {
        if let Some(d) = *d {
            if d.index() >= n_vars || d.index() == v {
                return Err(StructuralError::Inconsistent(
                    "var_to_diff points outside the variables or to itself",
                ));
            }
            if diff_to_var[d.index()].replace(VarIdx(v as u32)).is_some() {
                return Err(StructuralError::Inconsistent(
                    "a variable is the derivative of two variables",
                ));
            }
        }
    }
    // Walking down from every chain root reaches every variable exactly once unless a chain is
    // a cycle (whose members have no root).
    let mut reached = 0usize;
    for (v, up) in diff_to_var.iter().enumerate() {
        if up.is_none() {
            let mut cur = Some(VarIdx(v as u32));
            while let Some(c) = cur {
                reached += 1;
                cur = var_to_diff[c.index()];
            }
        }
    }
    if reached != n_vars {
        return Err(StructuralError::Inconsistent("var_to_diff contains a cycle"));
    }
    Ok(diff_to_var)
}

/// Pantelides' structural nonsingularity: match equations to variable families (a variable
/// and all its derivatives). Every equation, empty ones included, must get its own family.
fn check_families(
    g: &Incidence,
    var_to_diff: &[Option<VarIdx>],
    diff_to_var: &[Option<VarIdx>],
) -> Result<(), StructuralError> {
    let mut family: Vec<VarIdx> = g.vars().collect();
    // Each chain is walked once from its root, so this is linear overall.
    for root in g.vars().filter(|v| diff_to_var[v.index()].is_none()) {
        let mut cur = var_to_diff[root.index()];
        while let Some(c) = cur {
            family[c.index()] = root;
            cur = var_to_diff[c.index()];
        }
    }
    let families = Incidence::from_equations(
        g.n_vars(),
        g.eqs().map(|e| {
            g.eq_vars(e)
                .iter()
                .map(|v| (family[v.index()], EdgeKind::Implicit))
                .collect::<Vec<_>>()
        }),
    )?;
    let m = maximum_matching(&families);
    let unmatched: Vec<EqIdx> = families.eqs().filter(|&e| m.var_of(e).is_none()).collect();
    if unmatched.is_empty() {
        Ok(())
    } else {
        Err(StructuralError::Singular {
            unmatched_eqs: unmatched,
        })
    }
}

/// Runs index reduction with the default iteration cap (the number of original variables plus
/// one differentiations per equation, more than any structurally nonsingular system needs).
pub fn pantelides(g: &Incidence, var_to_diff: &[Option<VarIdx>]) -> Result<Pantelides, StructuralError> {
    pantelides_with_cap(g, var_to_diff, g.n_vars() + 1)
}

/// Runs index reduction, giving up with [`StructuralError::Singular`] once an equation would
/// be differentiated more than `max_differentiations` times.
pub fn pantelides_with_cap(
    g: &Incidence,
    var_to_diff: &[Option<VarIdx>],
    max_differentiations: usize,
) -> Result<Pantelides, StructuralError> {
    let diff_to_var = check_chains(g.n_vars(), var_to_diff)?;
    check_families(g, var_to_diff, &diff_to_var)?;
    let n_orig = g.n_eqs();
    let mut var_to_diff = var_to_diff.to_vec();
    let mut eq_to_diff: Vec<Option<EqIdx>> = vec![None; n_orig];
    let mut highest: Vec<bool> = var_to_diff.iter().map(Option::is_none).collect();
    let mut graph = Growing {
        base: g,
        n_vars: g.n_vars(),
        extra_vars: Vec::new(),
        extra_kinds: Vec::new(),
    };
    let mut new_eqs = Vec::new();
    let mut new_vars = Vec::new();
    let mut m = Matching::new(n_orig, g.n_vars());
    let mut search = Augmenter::new();
    let mut coloured_eqs: Vec<EqIdx> = Vec::new();
    let mut coloured_vars: Vec<VarIdx> = Vec::new();
    for k in g.eqs() {
        let mut current = k;
        let mut rounds = 0usize;
        loop {
            if search.augment(&graph, &mut m, current, |v| highest[v.index()]) {
                break;
            }
            rounds += 1;
            if rounds > max_differentiations {
                return Err(StructuralError::Singular {
                    unmatched_eqs: vec![current],
                });
            }
            coloured_eqs.clear();
            coloured_eqs.extend_from_slice(&search.visited_eqs);
            coloured_vars.clear();
            coloured_vars.extend_from_slice(&search.visited_vars);
            // New derivative variables first, so the differentiated equations can mention them.
            for &v in &coloured_vars {
                let d = derivative_var(&mut graph, &mut var_to_diff, &mut highest, &mut new_vars, v)?;
                highest[v.index()] = false;
                highest[d.index()] = true;
            }
            for &e in &coloured_eqs {
                let (vars, kinds) = graph.edges(e);
                let mut edges: Vec<(VarIdx, EdgeKind)> = Vec::with_capacity(2 * vars.len());
                let pairs: Vec<(VarIdx, EdgeKind)> = vars.iter().copied().zip(kinds.iter().copied()).collect();
                for (v, kind) in pairs {
                    let d = derivative_var(&mut graph, &mut var_to_diff, &mut highest, &mut new_vars, v)?;
                    edges.push((v, EdgeKind::Implicit));
                    edges.push((d, kind));
                }
                // Same normal form as the builder: sorted, one edge per variable, implicit wins.
                edges.sort_unstable();
                edges.dedup_by(|later, earlier| {
                    if later.0 == earlier.0 {
                        earlier.1 = earlier.1.max(later.1);
                        true
                    } else {
                        false
                    }
                });
                let new = EqIdx(u32::try_from(graph.n_eqs()).map_err(|_| StructuralError::TooLarge)?);
                let (vs, ks): (Vec<VarIdx>, Vec<EdgeKind>) = edges.into_iter().unzip();
                graph.extra_vars.push(vs);
                graph.extra_kinds.push(ks);
                eq_to_diff[e.index()] = Some(new);
                eq_to_diff.push(None);
                new_eqs.push((new, e));
            }
            m.grow(graph.n_eqs(), graph.n_vars);
            // The derivative of a coloured variable is matched to the derivative of its equation.
            for &v in &coloured_vars {
                if let (Some(e), Some(d)) = (m.eq_of(v), var_to_diff[v.index()])
                    && let Some(de) = eq_to_diff[e.index()]
                {
                    m.pair(de, d);
                }
            }
            current = eq_to_diff[current.index()].ok_or(StructuralError::Inconsistent("the root was not coloured"))?;
        }
    }
    finish(graph, var_to_diff, eq_to_diff, highest, m, new_eqs, new_vars)
}

/// The derivative of `v`, created (and recorded) if the system has none yet.
fn derivative_var(
    graph: &mut Growing<'_>,
    var_to_diff: &mut Vec<Option<VarIdx>>,
    highest: &mut Vec<bool>,
    new_vars: &mut Vec<(VarIdx, VarIdx)>,
    v: VarIdx,
) -> Result<VarIdx, StructuralError> {
    if let Some(d) = var_to_diff[v.index()] {
        return Ok(d);
    }
    let d = VarIdx(u32::try_from(graph.n_vars).map_err(|_| StructuralError::TooLarge)?);
    graph.n_vars += 1;
    var_to_diff[v.index()] = Some(d);
    var_to_diff.push(None);
    // A new derivative is the highest derivative of its chain; `v` no longer is.
    highest.push(true);
    highest[v.index()] = false;
    new_vars.push((d, v));
    Ok(d)
}

fn finish(
    graph: Growing<'_>,
    var_to_diff: Vec<Option<VarIdx>>,
    eq_to_diff: Vec<Option<EqIdx>>,
    highest: Vec<bool>,
    working: Matching,
    new_eqs: Vec<(EqIdx, EqIdx)>,
    new_vars: Vec<(VarIdx, VarIdx)>,
) -> Result<Pantelides, StructuralError> {
    let base = graph.base;
    let mut b = IncidenceBuilder::new(graph.n_vars)?;
    b.reserve(graph.n_eqs(), base.n_edges());
    for e in 0..graph.n_eqs() {
        let (vars, kinds) = graph.edges(EqIdx(e as u32));
        b.add_equation(vars.iter().copied().zip(kinds.iter().copied()))?;
    }
    let full = b.build();
    // Old pairs stay in the working matching after their equation was differentiated; the
    // result keeps only highest-order equations with highest-derivative variables.
    let mut matching = Matching::new(full.n_eqs(), full.n_vars());
    for (e, v) in working.pairs() {
        if eq_to_diff[e.index()].is_none() && highest[v.index()] {
            matching.pair(e, v);
        }
    }
    if full
        .eqs()
        .any(|e| eq_to_diff[e.index()].is_none() && matching.var_of(e).is_none())
    {
        return Err(StructuralError::Inconsistent(
            "a highest-order equation was left unmatched",
        ));
    }
    let mut differentiations = vec![0u32; base.n_eqs()];
    for (e, count) in differentiations.iter_mut().enumerate() {
        let mut cur = eq_to_diff[e];
        while let Some(d) = cur {
            *count += 1;
            cur = eq_to_diff[d.index()];
        }
    }
    Ok(Pantelides {
        graph: full,
        eq_to_diff,
        var_to_diff,
        differentiations,
        new_eqs,
        new_vars,
        matching,
    })
}
