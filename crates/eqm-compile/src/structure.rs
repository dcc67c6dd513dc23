//! The structure graph shared by the structural passes: the unknowns of a DAE (algebraic
//! variables and derivatives of states), the dense table from their expression nodes to their
//! numbers, the unknowns each equation and each algorithm section contains, and the bipartite
//! graph built from them.
//!
//! Input: a [`Dae`] of any stage and the expression nodes of its unknowns. Output: the rows of
//! the bipartite graph ([`equation_unknowns`], [`algorithm_rows_of`]) and the graph itself with
//! every edge implicit ([`structure_graph`]), for index reduction (`index`), causalisation
//! (`plan`) and the initialization problem (`init`), which all sit above this module. It
//! deliberately decides nothing about solvability, matching or order: the passes do that.

use crate::dae::{Dae, Equation};
use crate::function_reads::FunctionReads;
use eqm_diag::Diagnostic;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{Callee, ExprId, Node, VarId};
use eqm_structural::incidence::{EdgeKind, IncidenceBuilder, VarIdx};

/// An unknown of the causal system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unknown {
    /// An algebraic variable.
    Var(VarId),
    /// The derivative `der(x)` of a state `x`.
    Der(VarId),
}

/// The unknown each leaf node stands for, by expression id: a dense table, because looking up
/// every node of every equation is the inner loop of building the incidence.
#[derive(Debug, Clone)]
pub(crate) struct LeafIndex {
    unknown_of: Vec<u32>,
    /// The smallest leaf id (`ExprId(u32::MAX)` when there are no leaves).
    oldest: ExprId,
}

impl LeafIndex {
    const NONE: u32 = u32::MAX;

    /// Leaf `leaves[k]` stands for unknown `k`.
    pub(crate) fn new(leaves: &[ExprId]) -> LeafIndex {
        let size = leaves.iter().map(|l| l.0 as usize + 1).max().unwrap_or(0);
        let mut unknown_of = vec![Self::NONE; size];
        for (k, l) in leaves.iter().enumerate() {
            unknown_of[l.0 as usize] = k as u32;
        }
        let oldest = leaves.iter().copied().min().unwrap_or(ExprId(u32::MAX));
        LeafIndex { unknown_of, oldest }
    }

    pub(crate) fn get(&self, e: ExprId) -> Option<usize> {
        match self.unknown_of.get(e.0 as usize) {
            Some(&k) if k != Self::NONE => Some(k as usize),
            _ => None,
        }
    }
}

/// The unknowns (values of `index_of`) occurring in equation `eq`, sorted and without repeats.
/// A call depends only on the arguments of the inputs `reads` says its output can depend on.
pub(crate) fn equation_unknowns(
    arena: &eqm_ir::expr::ExprArena,
    eq: &Equation,
    index_of: &LeafIndex,
    reads: &FunctionReads,
) -> Vec<usize> {
    let mut found = Vec::new();
    collect_unknowns(arena, eq.lhs, index_of, reads, &mut found);
    collect_unknowns(arena, eq.rhs, index_of, reads, &mut found);
    found.sort_unstable();
    found.dedup();
    found
}

/// The expression node of an unknown: `v` or `der(x)`.
pub(crate) fn unknown_leaf(arena: &mut eqm_ir::expr::ExprArena, u: Unknown) -> ExprId {
    match u {
        Unknown::Var(v) => arena.var(v),
        Unknown::Der(v) => {
            let node = arena.var(v);
            arena.builtin(Builtin::Der, vec![node])
        }
    }
}

/// The bipartite graph of `dae`'s equations and algorithm rows (initial sections too with
/// `initial`) over `n_unknowns` unknowns identified by `index_of`, every edge implicit: the
/// input of the purely structural passes (index reduction, initialization), which do not need
/// to know what is solvable.
pub(crate) fn structure_graph<S>(
    dae: &Dae<S>,
    index_of: &LeafIndex,
    n_unknowns: usize,
    initial: bool,
) -> Result<eqm_structural::incidence::Incidence, Diagnostic> {
    let mut builder = IncidenceBuilder::new(n_unknowns).map_err(internal)?;
    let reads = FunctionReads::new(&dae.flat.exprs, &dae.flat.functions);
    for eq in &dae.equations {
        let found = equation_unknowns(&dae.flat.exprs, eq, index_of, &reads);
        builder
            .add_equation(found.into_iter().map(|u| (VarIdx(u as u32), EdgeKind::Implicit)))
            .map_err(internal)?;
    }
    for (_, outputs, read) in algorithm_rows_of(dae, index_of, initial) {
        for o in outputs {
            let edges = std::iter::once(o)
                .chain(read.iter().copied())
                .map(|u| (VarIdx(u as u32), EdgeKind::Implicit));
            builder.add_equation(edges).map_err(internal)?;
        }
    }
    Ok(builder.build())
}

/// The rows an algorithm section adds to the system: for each section (initial ones only with
/// `initial`), its index, the unknowns it assigns (one row each) and the other unknowns it reads.
pub(crate) fn algorithm_rows_of<S>(
    dae: &Dae<S>,
    index_of: &LeafIndex,
    initial: bool,
) -> Vec<(usize, Vec<usize>, Vec<usize>)> {
    let mut rows = Vec::new();
    for (index, a) in dae
        .flat
        .algorithms
        .iter()
        .enumerate()
        .filter(|(_, a)| initial || !a.initial)
    {
        let outputs: Vec<usize> = a
            .outputs
            .iter()
            .filter_map(|&o| index_of.get(dae.flat.exprs.var_if_present(o)?))
            .collect();
        let mut read: Vec<usize> = Vec::new();
        let mut vars: Vec<VarId> = Vec::new();
        for st in &a.statements {
            st.for_each_expr(&mut |e, _| {
                collect_unknowns(&dae.flat.exprs, e, index_of, &FunctionReads::unknown(), &mut read);
                dae.flat.exprs.vars_in(e, &mut vars);
            });
        }
        // Alias elimination does not rewrite the statements: a variable it removed is read
        // through its value in terms of the remaining ones, and the section depends on those
        // (an input `u` connected to a signal that another section computes).
        vars.sort_unstable();
        vars.dedup();
        for v in vars {
            if let Some(Some(value)) = dae.eliminated.get(v.0 as usize) {
                collect_unknowns(&dae.flat.exprs, *value, index_of, &FunctionReads::unknown(), &mut read);
            }
        }
        // The section starts each discrete output from its `pre` value, which an output that
        // only when-statements assign keeps when none fires (the initialization may have to
        // compute that value first).
        let mut assigned: Vec<VarId> = a.assigned_outside_when.clone();
        assigned.sort_unstable();
        for &(output, before) in &a.previous {
            if assigned.binary_search(&output).is_err() {
                read.extend(dae.flat.exprs.var_if_present(before).and_then(|e| index_of.get(e)));
            }
        }
        read.sort_unstable();
        read.dedup();
        read.retain(|u| !outputs.contains(u));
        rows.push((index, outputs, read));
    }
    rows
}

/// The unknowns occurring in `root`: algebraic variables and `der(x)` nodes, not looking into
/// `der(...)` and `pre(...)`, nor into the arguments of a call its output does not depend on.
fn collect_unknowns(
    arena: &eqm_ir::expr::ExprArena,
    root: ExprId,
    index_of: &LeafIndex,
    reads: &FunctionReads,
    out: &mut Vec<usize>,
) {
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        if let Some(u) = index_of.get(id) {
            out.push(u);
            continue;
        }
        // Children have smaller ids than their parents: nothing below a node older than every
        // leaf can be one.
        if id < index_of.oldest {
            continue;
        }
        let read_arguments =
            |f: eqm_ir::expr::FuncId, output: u32, args: &[ExprId], stack: &mut Vec<ExprId>| match reads
                .inputs_of(f, output)
            {
                Some(inputs) => stack.extend(inputs.iter().filter_map(|&i| args.get(i as usize))),
                None => stack.extend(args),
            };
        match arena.get(id) {
            Node::Call(Callee::Builtin(Builtin::Der | Builtin::Pre), _) => {}
            Node::Call(Callee::User(f), args) => read_arguments(*f, 0, args, &mut stack),
            Node::CallOutput(call, k) => match arena.get(*call) {
                Node::Call(Callee::User(f), args) => read_arguments(*f, *k, args, &mut stack),
                _ => stack.push(*call),
            },
            _ => stack.extend(arena.children(id)),
        }
    }
}

/// The name of an unknown for listings: `v` or `der(x)`.
pub fn unknown_name<S>(dae: &Dae<S>, u: Unknown) -> String {
    match u {
        Unknown::Var(v) => dae.flat.var(v).name.clone(),
        Unknown::Der(v) => format!("der({})", dae.flat.var(v).name),
    }
}

/// An internal error of a structural algorithm (an invariant of the graph broken), as a
/// diagnostic: it names no model text because the model is not at fault.
pub(crate) fn internal(e: eqm_structural::incidence::StructuralError) -> Diagnostic {
    internal_text(&e.to_string())
}

/// An internal error described by `text`; see [`internal`].
pub(crate) fn internal_text(text: &str) -> Diagnostic {
    Diagnostic {
        code: "E0599",
        severity: eqm_diag::Severity::Error,
        message: format!("internal error in the structural analysis: {text}"),
        labels: Vec::new(),
        notes: Vec::new(),
        help: Some("please report this model".to_string()),
    }
}
