//! Causalisation plan of a DAE: which equation computes which unknown, in which order.
//!
//! Input: a [`Dae`] in the hybrid stage (aliases removed, index at most one, events extracted).
//! Output: a [`Plan`]: the unknowns (algebraic
//! variables and the derivatives of states), the matching, and the BLT blocks in evaluation
//! order, each either an explicit assignment solved symbolically, a scalar implicit equation
//! (Newton in generated code), or an algebraic loop with its tearing variables, residual
//! equations and inner causal assignments, marked linear when every equation of the loop is
//! linear in the loop's unknowns. A structurally singular system gets a diagnostic that names
//! the equations and variables involved with their source spans.
//!
//! The graph algorithms live in `structural` and see only ids; this module builds their input
//! from expressions (the rows of each equation and algorithm section come from `structure`,
//! shared with index reduction and initialization) and maps their output back. It deliberately does not reduce the index
//! (`index` did that before): a system that is still singular here is reported as such.

use crate::dae::{Dae, VarKind};
use crate::edges::{EdgeSolutions, NotAsDeferred, Solving, solve_edges};
use crate::events::Hybrid;
use crate::function_reads::FunctionReads;
use crate::structure::{LeafIndex, algorithm_rows_of, equation_unknowns, internal, internal_text, unknown_leaf};
use eqm_diag::Diagnostic;
use eqm_ir::expr::{ExprId, VarId};
use eqm_ir::symbolic::{Condition, Simplifier};
use eqm_structural::blt::blt;
use eqm_structural::incidence::{EdgeKind, EqIdx, IncidenceBuilder, VarIdx};
use eqm_structural::matching::{maximum_matching, singular_parts};
use eqm_structural::tearing::tear_block;

// The unknowns and their names belong to the structure graph every structural pass shares;
// they are part of a plan's public vocabulary, so they stay reachable here.
pub use crate::structure::{Unknown, unknown_name};

/// One step of the evaluation order.
#[derive(Debug, Clone)]
pub enum Block {
    /// `unknown := value`, solved symbolically from equation `eq`.
    Explicit { eq: usize, unknown: usize, value: ExprId },
    /// Row `eq` (numbered after the DAE's equations) stands for output `unknown` of the
    /// algorithm section `algorithm` of the flat model: the section is run to compute it.
    Algorithm {
        eq: usize,
        unknown: usize,
        algorithm: usize,
    },
    /// Equation `eq` is implicit in its one unknown: solved by a scalar Newton iteration.
    Implicit { eq: usize, unknown: usize },
    /// An algebraic loop, torn.
    Loop(TornLoop),
}

/// An algebraic loop, torn: guess the tearing unknowns, compute the inner unknowns in order,
/// and drive the residual equations to zero. Equations and unknowns are indices into the
/// DAE's equations and the plan's unknowns.
#[derive(Debug, Clone)]
pub struct TornLoop {
    pub eqs: Vec<usize>,
    pub unknowns: Vec<usize>,
    pub tearing: Vec<usize>,
    pub residuals: Vec<usize>,
    /// (equation, unknown, value) computed in this order from the tearing unknowns.
    pub inner: Vec<(usize, usize, ExprId)>,
    /// Every equation is linear in the loop's unknowns: solved by LU, not Newton.
    pub linear: bool,
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub unknowns: Vec<Unknown>,
    /// The expression node of each unknown (`v` or `der(x)`).
    pub leaves: Vec<ExprId>,
    /// For each equation, the unknown it is matched to.
    pub matching: Vec<usize>,
    pub blocks: Vec<Block>,
    /// Conditions on parameters that the chosen symbolic solutions need (a divisor that must
    /// not be zero, ...), with the equation: checked once when a simulation starts.
    pub parameter_conditions: Vec<(Condition, usize)>,
}

/// Builds the plan, or diagnostics when the system is structurally singular.
pub fn analyze(dae: &mut Dae<Hybrid>) -> Result<Plan, Vec<Diagnostic>> {
    let mut unknowns = Vec::new();
    let computed = dae.discrete_algorithm_outputs(false);
    for i in 0..dae.kinds.len() {
        let v = VarId(i as u32);
        if dae.eliminated[i].is_some() {
            continue;
        }
        match dae.kinds[i] {
            VarKind::Algebraic => unknowns.push(Unknown::Var(v)),
            VarKind::Discrete if computed.get(i) == Some(&true) => unknowns.push(Unknown::Var(v)),
            VarKind::State => unknowns.push(Unknown::Der(v)),
            _ => {}
        }
    }
    analyze_system(dae, unknowns, false)
}

/// Builds the plan of `dae.equations` (plus one row per output of each algorithm section,
/// initial ones included when `initial_algorithms`) for the given unknowns.
pub(crate) fn analyze_system<S>(
    dae: &mut Dae<S>,
    unknowns: Vec<Unknown>,
    initial_algorithms: bool,
) -> Result<Plan, Vec<Diagnostic>> {
    // Solving the edges of wide linear rows only where the plan uses them gives the plan of
    // exact solving unless such an edge turns out not to be solvable as assumed; then the plan
    // is built again solving every edge (see `crate::edges`).
    match analyze_solving(dae, unknowns.clone(), initial_algorithms, Solving::Deferred)? {
        Ok(plan) => Ok(plan),
        Err(NotAsDeferred) => match analyze_solving(dae, unknowns, initial_algorithms, Solving::Exact)? {
            Ok(plan) => Ok(plan),
            Err(NotAsDeferred) => Err(vec![internal_text("an edge solved at once was deferred")]),
        },
    }
}

/// [`analyze_system`] with the edges solved as `solving` says; `Ok(Err(NotAsDeferred))` when a
/// deferred edge the plan uses could not be solved as assumed.
pub(crate) fn analyze_solving<S>(
    dae: &mut Dae<S>,
    unknowns: Vec<Unknown>,
    initial_algorithms: bool,
    solving: Solving,
) -> Result<Result<Plan, NotAsDeferred>, Vec<Diagnostic>> {
    let mut leaves = Vec::with_capacity(unknowns.len());
    for &u in &unknowns {
        leaves.push(unknown_leaf(&mut dae.flat.exprs, u));
    }
    let index_of = LeafIndex::new(&leaves);

    // Incidence with solvability, and the symbolic solution of every solvable edge (simplified
    // only when the plan uses it).
    let mut builder = IncidenceBuilder::new(unknowns.len()).map_err(|e| vec![internal(e)])?;
    let mut simplifier = Simplifier::new();
    let mut solutions = solve_edges(dae, &leaves, &mut simplifier, &mut builder, solving)?;
    // An algorithm section determines its outputs from what it reads: one row per output,
    // solvable for that output only.
    let mut algorithm_rows: Vec<usize> = Vec::new();
    let mut algorithm_row_outputs: Vec<usize> = Vec::new();
    for (index, outputs, read) in algorithm_rows_of(dae, &index_of, initial_algorithms) {
        for &o in &outputs {
            let edges = std::iter::once((VarIdx(o as u32), EdgeKind::Solvable))
                .chain(read.iter().map(|&u| (VarIdx(u as u32), EdgeKind::Implicit)));
            builder.add_equation(edges).map_err(|e| vec![internal(e)])?;
            algorithm_rows.push(index);
            algorithm_row_outputs.push(o);
        }
    }
    let n_equations = dae.equations.len();
    let graph = builder.build();
    let matching = maximum_matching(&graph);
    if !matching.is_perfect() || graph.n_eqs() != unknowns.len() {
        return Err(vec![singular(dae, &graph, &matching, &unknowns, &algorithm_rows)]);
    }
    let order = blt(&graph, &matching).map_err(|e| vec![internal(e)])?;
    let mut blocks = Vec::with_capacity(order.len());
    let mut in_loops: Vec<usize> = Vec::new();
    for block in order.blocks() {
        if let [(e, v)] = block {
            let (eq, unknown) = (e.index(), v.index());
            // A row matched to an unknown the section reads, not to its output, asks for the
            // section's inverse: the section is in a loop with the equation that computes
            // that output.
            if eq >= n_equations && algorithm_row_outputs[eq - n_equations] != unknown {
                in_loops.push(algorithm_rows[eq - n_equations]);
                continue;
            }
            if eq >= n_equations {
                blocks.push(Block::Algorithm {
                    eq,
                    unknown,
                    algorithm: algorithm_rows[eq - n_equations],
                });
                continue;
            }
            let solved = match solutions.value(dae, &mut simplifier, eq, unknown) {
                Ok(solved) => solved,
                Err(e) => return Ok(Err(e)),
            };
            blocks.push(match solved {
                Some(value) => Block::Explicit {
                    eq,
                    unknown,
                    value: simplifier.simplify(&mut dae.flat.exprs, value),
                },
                None => Block::Implicit { eq, unknown },
            });
            continue;
        }
        // An algorithm section inside a loop is solved with it as its equations: the sections
        // are collected, written as equations and the system analysed again.
        let sections = block.iter().filter(|(e, _)| e.index() >= n_equations);
        let before = in_loops.len();
        in_loops.extend(sections.map(|(e, _)| algorithm_rows[e.index() - n_equations]));
        if in_loops.len() > before {
            continue;
        }
        match torn_loop(dae, &graph, block, &leaves, &mut solutions, &mut simplifier)? {
            Ok(torn) => blocks.push(Block::Loop(torn)),
            Err(e) => return Ok(Err(e)),
        }
    }
    if !in_loops.is_empty() {
        return analyze_with_sections_as_equations(dae, unknowns, in_loops, initial_algorithms).map(Ok);
    }
    let parameter_conditions = parameter_conditions(&blocks, &solutions);
    let matching = (0..graph.n_eqs())
        .map(|e| matching.var_of(EqIdx(e as u32)).map_or(usize::MAX, |v| v.index()))
        .collect();
    Ok(Ok(Plan {
        unknowns,
        leaves,
        matching,
        blocks,
        parameter_conditions,
    }))
}

/// The plan of a system whose algorithm sections `in_loops` are part of algebraic loops: the
/// sections written as equations (their statements run symbolically), and the system analysed
/// again with the values they hide as further unknowns; `E0502` when a section cannot be written
/// so.
fn analyze_with_sections_as_equations<S>(
    dae: &mut Dae<S>,
    unknowns: Vec<Unknown>,
    mut in_loops: Vec<usize>,
    initial_algorithms: bool,
) -> Result<Plan, Vec<Diagnostic>> {
    in_loops.sort_unstable();
    in_loops.dedup();
    match crate::algorithm_equations::replace_by_equations(dae, &in_loops) {
        Ok(hidden) => {
            let mut unknowns = unknowns;
            unknowns.extend(hidden.into_iter().map(Unknown::Var));
            analyze_system(dae, unknowns, initial_algorithms)
        }
        Err((section, why)) => Err(vec![
            Diagnostic::error(
                "E0502",
                format!("this algorithm section is part of an algebraic loop and cannot be solved as equations: {why}"),
                dae.flat.algorithms[section].span,
                "in an algebraic loop",
            )
            .with_help("compute the loop with equations, or break the dependency on the algorithm's outputs"),
        ]),
    }
}

/// The conditions on parameters of the solutions the plan uses, in evaluation order: only
/// those need checking when a simulation starts.
fn parameter_conditions(blocks: &[Block], solutions: &EdgeSolutions) -> Vec<(Condition, usize)> {
    let mut parameter_conditions = Vec::new();
    for block in blocks {
        let used: &[(usize, usize, ExprId)] = match block {
            Block::Explicit { eq, unknown, value } => &[(*eq, *unknown, *value)],
            Block::Implicit { .. } | Block::Algorithm { .. } => &[],
            Block::Loop(l) => &l.inner,
        };
        for &(eq, unknown, _) in used {
            for c in solutions.conditions(eq, unknown) {
                parameter_conditions.push((*c, eq));
            }
        }
    }
    parameter_conditions
}

/// The torn loop of BLT block `block` (pairs of graph equation and unknown): its tearing
/// unknowns and residuals from `structural`, the inner assignments solved symbolically, and
/// whether every equation of the loop is linear in its unknowns.
fn torn_loop<S>(
    dae: &mut Dae<S>,
    graph: &eqm_structural::incidence::Incidence,
    block: &[(EqIdx, VarIdx)],
    leaves: &[ExprId],
    solutions: &mut EdgeSolutions,
    simplifier: &mut Simplifier,
) -> Result<Result<TornLoop, NotAsDeferred>, Vec<Diagnostic>> {
    let tearing = tear_block(graph, block).map_err(|e| vec![internal(e)])?;
    let in_block: Vec<usize> = block.iter().map(|(_, v)| v.index()).collect();
    // A loop is linear when each equation's partial derivatives with respect to the loop's
    // unknowns are free of them: the coefficients may depend on states, parameters and time,
    // since they are fixed while the loop is solved. Sorted leaves make membership a binary
    // search: loops can have thousands of unknowns.
    let mut block_leaves: Vec<ExprId> = in_block.iter().map(|&u| leaves[u]).collect();
    block_leaves.sort_unstable();
    let linear = block.iter().all(|(e, _)| {
        is_linear_in(
            &mut dae.flat.exprs,
            simplifier,
            &dae.equations[e.index()],
            &block_leaves,
        )
    });
    let mut inner = Vec::with_capacity(tearing.inner.len());
    for (e, v) in &tearing.inner {
        let value = match solutions.value(dae, simplifier, e.index(), v.index()) {
            Ok(Some(value)) => value,
            Ok(None) => return Err(vec![internal_text("tearing used an edge that is not solvable")]),
            Err(e) => return Ok(Err(e)),
        };
        inner.push((e.index(), v.index(), simplifier.simplify(&mut dae.flat.exprs, value)));
    }
    Ok(Ok(TornLoop {
        eqs: block.iter().map(|(e, _)| e.index()).collect(),
        unknowns: in_block,
        tearing: tearing.tearing_vars.iter().map(|v| v.index()).collect(),
        residuals: tearing.residuals.iter().map(|e| e.index()).collect(),
        inner,
        linear,
    }))
}

impl Plan {
    /// For each equation of `dae`, the unknowns (indices into `unknowns`) it contains, sorted:
    /// the edges of the bipartite graph the plan was built from. Algorithm rows (numbered after
    /// the DAE's equations) are not included.
    pub fn incidence<S>(&self, dae: &Dae<S>) -> Vec<Vec<usize>> {
        let index_of = LeafIndex::new(&self.leaves);
        let reads = FunctionReads::new(&dae.flat.exprs, &dae.flat.functions);
        dae.equations
            .iter()
            .map(|e| equation_unknowns(&dae.flat.exprs, e, &index_of, &reads))
            .collect()
    }
}

/// Whether equation `eq` is affine in the unknowns `leaves` (sorted): each partial derivative
/// with respect to one of them that occurs must not contain any of them. The partials come from
/// one reverse-mode pass over the residual (`gradient`), not one derivative per unknown: a row
/// of a dense linear loop of k unknowns then costs k, not k².
fn is_linear_in(
    arena: &mut eqm_ir::expr::ExprArena,
    simplifier: &mut Simplifier,
    eq: &crate::dae::Equation,
    leaves: &[ExprId],
) -> bool {
    let residual = arena.binary(eqm_ir::expr::BinOp::Sub, eq.lhs, eq.rhs);
    let in_loop = |e: &ExprId| leaves.binary_search(e).is_ok();
    let Ok(partials) = eqm_ir::symbolic::gradient(arena, simplifier, residual, &|_, e| in_loop(&e)) else {
        return false;
    };
    partials.iter().all(|&(_, d)| {
        // `der(x)` is a leaf of its own: looking inside it would find `x`, a different unknown.
        eqm_ir::symbolic::reachable(arena, d, &|e| eqm_ir::symbolic::is_symbol_operator(arena.get(e)))
            .iter()
            .all(|e| !in_loop(e))
    })
}

/// "These N equations determine only these M variables": the over- and under-determined parts
/// of a maximum matching, each with its source spans. The graph's rows after the model's
/// equations are those of algorithm sections (`algorithm_rows`: each row's section).
fn singular<S>(
    dae: &Dae<S>,
    graph: &eqm_structural::incidence::Incidence,
    matching: &eqm_structural::matching::Matching,
    unknowns: &[Unknown],
    algorithm_rows: &[usize],
) -> Diagnostic {
    let Ok(parts) = singular_parts(graph, matching) else {
        return internal_text("singular parts could not be computed");
    };
    let names = |vars: &[VarIdx]| -> String {
        let list: Vec<String> = vars
            .iter()
            .take(8)
            .map(|v| unknown_name(dae, unknowns[v.index()]))
            .collect();
        let more = if vars.len() > 8 {
            format!(" and {} more", vars.len() - 8)
        } else {
            String::new()
        };
        format!("{}{more}", list.join(", "))
    };
    // Both parts are named when both exist: an equation too many usually means a variable too
    // few elsewhere, and the user needs to see both to decide which one is wrong.
    let mut pieces = Vec::new();
    if !parts.over_eqs.is_empty() && parts.over_vars.is_empty() {
        pieces.push(format!(
            "{} equation(s) contain no unknown; they constrain states, parameters or constants",
            parts.over_eqs.len()
        ));
    } else if !parts.over_eqs.is_empty() {
        pieces.push(format!(
            "these {} equations determine only {} unknown(s): {}",
            parts.over_eqs.len(),
            parts.over_vars.len(),
            names(&parts.over_vars)
        ));
    }
    let under = if parts.under_vars.is_empty() {
        &parts.unmatched_vars
    } else {
        &parts.under_vars
    };
    if !under.is_empty() {
        pieces.push(format!(
            "{} unknown(s) are not determined by any equation: {}",
            under.len(),
            names(under)
        ));
    }
    let message = format!("the system is structurally singular: {}", pieces.join("; "));
    let mut eqs = parts.over_eqs.clone();
    eqs.extend(parts.under_eqs.iter().copied());
    let mut vars = parts.over_vars.clone();
    vars.extend(under.iter().copied());
    // Each equation is labelled with its flat text and origin: one source line (a component's
    // equation) stands for many flat equations.
    let label = |e: &EqIdx| match dae.equations.get(e.index()) {
        Some(eq) => (
            eq.span,
            format!("{} ({})", dae.equation_text(eq), dae.origin_label(&eq.origin)),
        ),
        None => {
            let section = algorithm_rows[e.index() - dae.equations.len()];
            (dae.flat.algorithms[section].span, "an algorithm section".to_string())
        }
    };
    let (anchor, anchor_label) = match eqs.first() {
        Some(e) => label(e),
        None => {
            let span = vars
                .first()
                .map(|v| dae.flat.var(var_of(unknowns[v.index()])).span)
                .unwrap_or(dae.flat.instances[0].span);
            (span, "involved variable".to_string())
        }
    };
    let mut d = Diagnostic::error("E0501", message, anchor, anchor_label);
    // An algorithm section has one row per output: it is labelled once.
    let section_of = |e: &EqIdx| {
        e.index()
            .checked_sub(dae.equations.len())
            .map(|row| algorithm_rows[row])
    };
    let mut sections_labelled: Vec<usize> = eqs.first().and_then(section_of).into_iter().collect();
    let mut labels = 0;
    for e in eqs.iter().skip(1) {
        if let Some(section) = section_of(e) {
            if sections_labelled.contains(&section) {
                continue;
            }
            sections_labelled.push(section);
        }
        if labels == 9 {
            break;
        }
        labels += 1;
        let (span, text) = label(e);
        d = d.with_label(span, text);
    }
    for v in vars.iter().take(6) {
        let var = var_of(unknowns[v.index()]);
        d = d.with_label(
            dae.flat.var(var).span,
            format!("`{}` declared here", unknown_name(dae, unknowns[v.index()])),
        );
    }
    let outer = outer_connectors(&dae.flat, vars.iter().map(|v| var_of(unknowns[v.index()])));
    if !outer.is_empty() {
        d = d.with_note(format!(
            "{} {} of the model itself: it is a component, which a model connects to others; on its own nothing outside it acts through {}. Checking a package without a model name judges each component by its balance alone",
            outer.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
            if outer.len() == 1 { "is a connector" } else { "are connectors" },
            if outer.len() == 1 { "it" } else { "them" }
        ));
    }
    d
}

/// The connectors of the model itself (not of its components) that hold any of `vars`, by
/// name in the order first met.
fn outer_connectors(flat: &eqm_ir::flat::FlatModel, vars: impl Iterator<Item = VarId>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for var in vars {
        let mut instance = Some(flat.var(var).instance);
        while let Some(i) = instance {
            let node = &flat.instances[i.0 as usize];
            if node.is_connector && node.parent == Some(eqm_ir::flat::InstanceId(0)) {
                if !names.contains(&node.name) {
                    names.push(node.name.clone());
                }
                break;
            }
            instance = node.parent;
        }
    }
    names
}

fn var_of(u: Unknown) -> VarId {
    match u {
        Unknown::Var(v) | Unknown::Der(v) => v,
    }
}

#[cfg(test)]
mod edges_tests {
    use super::*;
    use crate::edges::{EdgeSolutions, Solving, solve_edges};
    use crate::events::Hybrid;
    use eqm_structural::incidence::IncidenceBuilder;

    /// The DAE of `text` as the plan sees it: lowered, aliases removed, index reduced, events
    /// extracted.
    fn hybrid(text: &str) -> Dae<Hybrid> {
        let mut sources = eqm_flatten::Sources::new();
        sources.add_file("dense.eqm", text);
        let flat = sources
            .flatten(None, &eqm_flatten::Options::default())
            .unwrap_or_else(|| panic!("{}", sources.render_diagnostics(false)));
        let (dae, _, _) = crate::alias::eliminate(crate::dae::lower(flat));
        let (dae, _) = crate::index::reduce(dae).expect("index one");
        crate::events::extract(dae)
    }

    /// The unknowns of the plan, as `plan::analyze` chooses them.
    fn unknowns(dae: &Dae<Hybrid>) -> Vec<Unknown> {
        (0..dae.kinds.len())
            .filter(|&i| dae.eliminated[i].is_none())
            .filter_map(|i| {
                let v = eqm_ir::expr::VarId(i as u32);
                match dae.kinds[i] {
                    crate::dae::VarKind::Algebraic => Some(Unknown::Var(v)),
                    crate::dae::VarKind::State => Some(Unknown::Der(v)),
                    _ => None,
                }
            })
            .collect()
    }

    /// A plan as text: each block with its unknowns' names and its solutions written out, and
    /// the parameter conditions.
    fn render(dae: &Dae<Hybrid>, plan: &Plan) -> Vec<String> {
        let name = |u: usize| unknown_name(dae, plan.unknowns[u]);
        let mut out: Vec<String> = plan
            .blocks
            .iter()
            .map(|b| match b {
                Block::Explicit { eq, unknown, value } => {
                    format!("{eq}: {} := {}", name(*unknown), dae.flat.expr_text(*value))
                }
                Block::Implicit { eq, unknown } => format!("{eq}: implicit {}", name(*unknown)),
                Block::Algorithm { eq, .. } => format!("{eq}: algorithm"),
                Block::Loop(l) => {
                    let inner: Vec<String> = (l.inner.iter())
                        .map(|(e, u, v)| format!("{e}: {} := {}", name(*u), dae.flat.expr_text(*v)))
                        .collect();
                    let tearing: Vec<String> = l.tearing.iter().map(|&u| name(u)).collect();
                    format!(
                        "loop {:?} tearing {tearing:?} inner {inner:?} linear {}",
                        l.eqs, l.linear
                    )
                }
            })
            .collect();
        out.extend(
            (plan.parameter_conditions.iter())
                .map(|(c, eq)| format!("{eq}: {} {}", dae.flat.expr_text(c.expr()), c.need())),
        );
        out
    }

    /// Ten unknowns in one dense linear system `A*w = b` (each row wider than
    /// `SOLVE_EACH_UP_TO`), with a first row that is also nonlinear in `w[1]` and a coefficient
    /// that is a state in another: deferring the solutions of the linear edges gives the plan
    /// of solving every edge at once, a torn loop whose inner assignments come from deferred
    /// edges.
    #[test]
    fn deferred_solving_gives_the_plan_of_exact_solving() {
        let text = "model Dense
  parameter Integer n = 10;
  parameter Real A[n, n] = {{if i == j then 2.0 else 1.0 / (i + j) for j in 1:n} for i in 1:n};
  parameter Real g = 3;
  Real w[n];
  Real x(start = 1, fixed = true);
equation
  A[1, :] * w + 0.1 * sin(w[1]) = time;
  for i in 2:n - 1 loop
    A[i, :] * w = i * time;
  end for;
  A[n, :] * w + x * w[2] / g = 1;
  der(x) = -sum(w);
end Dense;
";
        let mut deferred = hybrid(text);
        let mut exact = deferred.clone();
        // Every edge of the eleven wide rows (ten of `A*w`, and `der(x)` with the ten `w`) is
        // deferred except `w[1]` in the first row and `w[2]` in the last of `A*w` (a nonlinear
        // term, a coefficient that is a state).
        let mut probe = deferred.clone();
        let probe_unknowns = unknowns(&probe);
        let leaves: Vec<ExprId> = (probe_unknowns.iter())
            .map(|&u| crate::structure::unknown_leaf(&mut probe.flat.exprs, u))
            .collect();
        let mut builder = IncidenceBuilder::new(leaves.len()).expect("a builder");
        let table = solve_edges(
            &mut probe,
            &leaves,
            &mut Simplifier::new(),
            &mut builder,
            Solving::Deferred,
        )
        .expect("edges");
        let deferred_edges = table.deferred();
        assert_eq!(deferred_edges, 10 * 10 - 2 + 11);
        let wanted = unknowns(&deferred);
        let plan = analyze_solving(&mut deferred, wanted.clone(), false, Solving::Deferred)
            .expect("a plan")
            .expect("every deferred edge solves");
        let reference = analyze_solving(&mut exact, wanted, false, Solving::Exact)
            .expect("a plan")
            .expect("nothing is deferred");
        let loops: Vec<&Block> = plan.blocks.iter().filter(|b| matches!(b, Block::Loop(_))).collect();
        assert!(matches!(loops[..], [Block::Loop(l)] if l.unknowns.len() == 10 && !l.inner.is_empty()));
        assert_eq!(render(&deferred, &plan), render(&exact, &reference));
    }

    /// A deferred edge that does not solve as assumed is reported, so that the plan is built
    /// again with every edge solved at once: `f = c*s^2` has no solution for `s` that the
    /// symbolic solver accepts.
    #[test]
    fn a_deferred_edge_that_does_not_solve_asks_for_exact_solving() {
        let text =
            "model Even\n  Real s, f;\n  parameter Real c = 2;\nequation\n  f = sin(time);\n  f = c*s^2;\nend Even;\n";
        let mut dae = hybrid(text);
        let unknowns = unknowns(&dae);
        let leaves: Vec<ExprId> = (unknowns.iter())
            .map(|&u| crate::structure::unknown_leaf(&mut dae.flat.exprs, u))
            .collect();
        let s = (0..unknowns.len())
            .find(|&u| unknown_name(&dae, unknowns[u]) == "s")
            .expect("s is an unknown");
        let eq = (0..dae.equations.len())
            .find(|&e| dae.flat.expr_text(dae.equations[e].rhs).contains('^'))
            .expect("the equation of s");
        let mut solutions = EdgeSolutions::with_capacity(dae.equations.len(), &leaves);
        for e in 0..dae.equations.len() {
            if e == eq {
                solutions.push(s, None, Vec::new());
            }
            solutions.end_equation();
        }
        let mut simplifier = Simplifier::new();
        assert!(solutions.value(&mut dae, &mut simplifier, eq, s).is_err());
        // The plan itself treats the edge as implicit: a scalar Newton block.
        let plan = analyze(&mut dae).expect("a plan");
        assert!(plan.blocks.iter().any(|b| matches!(b, Block::Implicit { .. })));
    }
}
