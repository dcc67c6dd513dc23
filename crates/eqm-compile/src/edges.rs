//! The edges of the causal plan's bipartite graph: which unknowns each equation contains, which
//! of them it can be solved for, and the symbolic solution of each such edge.
//!
//! Input: the DAE's equations, the plan's unknowns as expression leaves, and a choice between
//! solving every edge now ([`Solving::Exact`]) or deferring the solutions of wide linear rows
//! ([`Solving::Deferred`]). Output: the rows handed to an [`IncidenceBuilder`] and an
//! [`EdgeSolutions`] table from which the plan takes the solutions it uses.
//!
//! Why deferring: solving a row of k unknowns for each of them costs k walks of its k terms, so
//! a dense linear system of k equations costs k³. The plan uses one solution per equation at
//! most (its matched unknown, or one inner assignment of a torn loop), so a wide row (more than
//! [`SOLVE_EACH_UP_TO`] unknowns) is differentiated once in reverse mode instead, and an unknown
//! whose partial derivative is a nonzero parameter expression (the row is linear in it with a
//! coefficient fixed during the run) is marked solvable without solving; the solution is built
//! when the plan uses the edge ([`EdgeSolutions::value`]). Solving then must give a solution
//! whose conditions are on parameters only, as solving at once would have; if it does not, the
//! caller builds the whole plan again with [`Solving::Exact`], so the plan is always the one of
//! exact solving. This module deliberately does not match, sort or tear: `plan` does that.

use crate::dae::Dae;
use crate::function_reads::FunctionReads;
use crate::structure::{LeafIndex, equation_unknowns, internal};
use eqm_diag::Diagnostic;
use eqm_ir::expr::ExprId;
use eqm_ir::symbolic::{
    Condition, FxHashSet, Simplifier, Solution, gradient, solve_for_unsimplified, unsolvable_leaves,
};
use eqm_structural::incidence::{EdgeKind, IncidenceBuilder, VarIdx};

/// Up to how many unknowns an equation is solved for each of them without first finding, in one
/// walk, those it cannot be solved for (and, with [`Solving::Deferred`], those it is linear in).
pub(crate) const SOLVE_EACH_UP_TO: usize = 8;

/// Whether the solutions of wide linear rows are built only when the plan uses them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Solving {
    Exact,
    Deferred,
}

/// A deferred edge that, solved, did not give a solution on parameter conditions: the plan
/// must be built again with [`Solving::Exact`].
#[derive(Debug)]
pub(crate) struct NotAsDeferred;

/// The symbolic solution of every solvable edge with its run-time conditions, equation by
/// equation in one flat table: equations have a handful of edges, so finding one is a short scan,
/// and a million equations cost no hash table.
pub(crate) struct EdgeSolutions {
    /// Where each equation's edges start in `edges`; one more entry than equations so far.
    first_edge: Vec<u32>,
    /// (unknown, value, range of `conditions`); the value is `None` while the edge is deferred.
    edges: Vec<(u32, Option<ExprId>, std::ops::Range<u32>)>,
    conditions: Vec<Condition>,
    /// The leaf of each unknown, to solve a deferred edge for it.
    leaves: Vec<ExprId>,
}

impl EdgeSolutions {
    pub(crate) fn with_capacity(equations: usize, leaves: &[ExprId]) -> EdgeSolutions {
        let mut first_edge = Vec::with_capacity(equations + 1);
        first_edge.push(0);
        EdgeSolutions {
            first_edge,
            edges: Vec::with_capacity(2 * equations),
            conditions: Vec::new(),
            leaves: leaves.to_vec(),
        }
    }

    /// Records the solution of the current equation for `unknown` (`None`: deferred).
    pub(crate) fn push(&mut self, unknown: usize, value: Option<ExprId>, conditions: Vec<Condition>) {
        let start = self.conditions.len() as u32;
        self.conditions.extend(conditions);
        self.edges
            .push((unknown as u32, value, start..self.conditions.len() as u32));
    }

    /// Closes the current equation; the next `push` is for the next one.
    pub(crate) fn end_equation(&mut self) {
        self.first_edge.push(self.edges.len() as u32);
    }

    /// How many edges are deferred (not solved yet).
    #[cfg(test)]
    pub(crate) fn deferred(&self) -> usize {
        self.edges.iter().filter(|e| e.1.is_none()).count()
    }

    fn position(&self, eq: usize, unknown: usize) -> Option<usize> {
        let range = *self.first_edge.get(eq)? as usize..*self.first_edge.get(eq + 1)? as usize;
        let start = range.start;
        self.edges[range]
            .iter()
            .position(|e| e.0 as usize == unknown)
            .map(|k| start + k)
    }

    /// The (unsimplified) solution of equation `eq` for `unknown`, solving a deferred edge now;
    /// `Ok(None)` when the edge is not solvable.
    pub(crate) fn value<S>(
        &mut self,
        dae: &mut Dae<S>,
        simplifier: &mut Simplifier,
        eq: usize,
        unknown: usize,
    ) -> Result<Option<ExprId>, NotAsDeferred> {
        let Some(k) = self.position(eq, unknown) else {
            return Ok(None);
        };
        if let Some(value) = self.edges[k].1 {
            return Ok(Some(value));
        }
        let (lhs, rhs) = (dae.equations[eq].lhs, dae.equations[eq].rhs);
        let leaf = self.leaves[unknown];
        match solve_for_unsimplified(simplifier, &mut dae.flat.exprs, lhs, rhs, leaf) {
            Solution::Solved { value, conditions }
                if conditions.iter().all(|c| dae.is_parameter_expression(c.expr())) =>
            {
                let start = self.conditions.len() as u32;
                self.conditions.extend(conditions);
                self.edges[k].1 = Some(value);
                self.edges[k].2 = start..self.conditions.len() as u32;
                Ok(Some(value))
            }
            _ => Err(NotAsDeferred),
        }
    }

    /// The run-time conditions of the solution of equation `eq` for `unknown` (none before a
    /// deferred edge is solved by [`EdgeSolutions::value`]).
    pub(crate) fn conditions(&self, eq: usize, unknown: usize) -> &[Condition] {
        match self.position(eq, unknown) {
            Some(k) => {
                let range = &self.edges[k].2;
                &self.conditions[range.start as usize..range.end as usize]
            }
            None => &[],
        }
    }
}

/// Adds a row to `builder` for each equation of `dae` (its unknowns among `leaves`, each solvable
/// or implicit) and returns the solutions of the solvable edges; see the module documentation
/// for `solving`.
pub(crate) fn solve_edges<S>(
    dae: &mut Dae<S>,
    leaves: &[ExprId],
    simplifier: &mut Simplifier,
    builder: &mut IncidenceBuilder,
    solving: Solving,
) -> Result<EdgeSolutions, Vec<Diagnostic>> {
    let index_of = LeafIndex::new(leaves);
    let mut solutions = EdgeSolutions::with_capacity(dae.equations.len(), leaves);
    let reads = FunctionReads::new(&dae.flat.exprs, &dae.flat.functions);
    let incident: Vec<Vec<usize>> = dae
        .equations
        .iter()
        .map(|eq| equation_unknowns(&dae.flat.exprs, eq, &index_of, &reads))
        .collect();
    // Solving each edge and simplifying each used solution adds a few nodes per edge.
    dae.flat
        .exprs
        .reserve(2 * incident.iter().map(Vec::len).sum::<usize>() + 2 * leaves.len());
    for (eq, found) in incident.into_iter().enumerate() {
        let (lhs, rhs) = (dae.equations[eq].lhs, dae.equations[eq].rhs);
        let mut edges = Vec::with_capacity(found.len());
        // An equation of many unknowns (a row of a dense matrix product) is walked once for the
        // unknowns it cannot be solved for, instead of once per unknown; a short one costs
        // little either way and keeps the cheaper paths of solving.
        let wide = found.len() > SOLVE_EACH_UP_TO;
        let unsolvable: FxHashSet<ExprId> = if wide {
            unsolvable_leaves(simplifier, &mut dae.flat.exprs, lhs, rhs)
                .into_iter()
                .collect()
        } else {
            FxHashSet::default()
        };
        let linear = if wide && solving == Solving::Deferred {
            linear_leaves(dae, simplifier, lhs, rhs, &found, leaves, &unsolvable)
        } else {
            FxHashSet::default()
        };
        for u in found {
            if unsolvable.contains(&leaves[u]) {
                edges.push((VarIdx(u as u32), EdgeKind::Implicit));
                continue;
            }
            if linear.contains(&leaves[u]) {
                solutions.push(u, None, Vec::new());
                edges.push((VarIdx(u as u32), EdgeKind::Solvable));
                continue;
            }
            let kind = match solve_for_unsimplified(simplifier, &mut dae.flat.exprs, lhs, rhs, leaves[u]) {
                // A division by a parameter expression (`m*der(v) = f`) is accepted: parameters
                // are checked once when the simulation starts. A condition on unknowns would
                // make the assignment fail at some instants, so such an edge stays implicit.
                Solution::Solved { value, conditions }
                    if conditions.iter().all(|c| dae.is_parameter_expression(c.expr())) =>
                {
                    solutions.push(u, Some(value), conditions);
                    EdgeKind::Solvable
                }
                _ => EdgeKind::Implicit,
            };
            edges.push((VarIdx(u as u32), kind));
        }
        solutions.end_equation();
        builder.add_equation(edges).map_err(|e| vec![internal(e)])?;
    }
    Ok(solutions)
}

/// The leaves among `found` (indices into `leaves`), not in `unsolvable`, in which `lhs = rhs`
/// is linear with a coefficient that is a nonzero parameter expression, from one reverse-mode
/// differentiation of the residual; none when it cannot be differentiated.
fn linear_leaves<S>(
    dae: &mut Dae<S>,
    simplifier: &mut Simplifier,
    lhs: ExprId,
    rhs: ExprId,
    found: &[usize],
    leaves: &[ExprId],
    unsolvable: &FxHashSet<ExprId>,
) -> FxHashSet<ExprId> {
    let wanted: FxHashSet<ExprId> = found
        .iter()
        .map(|&u| leaves[u])
        .filter(|leaf| !unsolvable.contains(leaf))
        .collect();
    let arena = &mut dae.flat.exprs;
    let residual = arena.binary(eqm_ir::expr::BinOp::Sub, lhs, rhs);
    let Ok(partials) = gradient(arena, simplifier, residual, &|_, e| wanted.contains(&e)) else {
        return FxHashSet::default();
    };
    partials
        .into_iter()
        .filter(|&(_, partial)| {
            let nonzero = dae
                .flat
                .exprs
                .literal(partial)
                .is_none_or(|v| v != 0.0 && v.is_finite());
            nonzero && dae.is_parameter_expression(partial)
        })
        .map(|(leaf, _)| leaf)
        .collect()
}
