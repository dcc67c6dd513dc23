//! Index reduction over expressions: Pantelides' algorithm, symbolic differentiation of the
//! equations it selects, and the two solvable forms built from its result.
//!
//! Input: a [`Dae`] after alias elimination. Output: the DAE in the [`IndexOne`] stage, and
//! nothing more when the system needs no differentiation (or is singular for other reasons,
//! which `plan` then reports); otherwise an [`IndexReduction`]: the DAE is rewritten into the
//! **dummy-derivative form**
//! (Mattsson–Söderlind, static state selection honouring `stateSelect` and fixed start values),
//! an ordinary index-1 DAE that the rest of the pipeline handles like any other, and the
//! **embedding form** is built beside it (the pipeline extracts its events and sorts it like
//! the other form): every differentiated variable stays a
//! state, the derivatives come from the fully differentiated equations, and the equations that
//! were differentiated away are kept as invariants `g(x) = 0` with their symbolic Jacobian.
//!
//! The graph work (which equations to differentiate, which derivatives become dummies) is done
//! by `structural` on ids; this module builds its input (one graph variable per variable and
//! per derivative of a state) and maps the result back to expressions: `d/dt` of each selected
//! equation by `symbolic::diff_time_through` (calls of user functions through their
//! `derivative` annotations or bodies, `symbolic::FunctionCalls`), and one new variable for each
//! derivative that the reduced system needs as an ordinary variable (a dummy derivative
//! `der(x)`, or a higher derivative that stays a state). It deliberately does not check the
//! numeric rank of the choice (dynamic state selection) and does not differentiate algorithm
//! sections, external functions without a `derivative` annotation or function bodies that are
//! not one expression: a system that would need that gets a diagnostic.

use crate::alias::AliasesRemoved;
use crate::dae::{Dae, Equation, Origin, StateChoice, VarKind};
use crate::structure;
use eqm_diag::Diagnostic;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, Callee, ExprArena, ExprId, FxHashMap, Node, VarId};
use eqm_ir::flat::{self, StateSelect};
use eqm_ir::symbolic::{FunctionCalls, diff_time_through, diff_var_through};
use eqm_structural::dummy::dummy_derivatives;
use eqm_structural::incidence::VarIdx;
use eqm_structural::pantelides::pantelides;

/// What index reduction did, for `explain` and the later stages.
#[derive(Debug, Clone)]
pub struct IndexReduction {
    /// The structural differentiation index: one more than the most any equation was
    /// differentiated.
    pub index: u32,
    /// The equations (indices into the reduced DAE's equations) that were differentiated, with
    /// how often, in equation order.
    pub differentiated: Vec<(usize, u32)>,
    /// The equations appended to the DAE, in creation order: `(new, of)` where equation `new`
    /// is the time derivative of equation `of`.
    pub new_equations: Vec<(usize, usize)>,
    /// The variables introduced for derivatives, in creation order.
    pub derivative_variables: Vec<DerivativeVariable>,
    /// Variables that appeared differentiated but are algebraic in the reduced system, because
    /// their derivative became a dummy derivative.
    pub demoted: Vec<VarId>,
    /// The states of the dummy-derivative form, with the reason each was preferred.
    pub states: Vec<(VarId, &'static str)>,
}

/// A variable index reduction introduced for a derivative.
#[derive(Debug, Clone)]
pub struct DerivativeVariable {
    pub var: VarId,
    /// The derivative it stands for, which is also its name: `der(x)`, `der(der(x))`.
    pub name: String,
    /// A dummy derivative (an algebraic variable), or else a state of the reduced system.
    pub dummy: bool,
}

impl IndexReduction {
    /// The names of the dummy derivatives, in creation order.
    pub fn dummy_names(&self) -> Vec<&str> {
        self.derivative_variables
            .iter()
            .filter(|d| d.dummy)
            .map(|d| d.name.as_str())
            .collect()
    }
}

/// The embedding form `x' = f(x)` with invariants `0 = g(x)`, before its events are extracted
/// and it is sorted (the pipeline runs those stages on it as on the dummy-derivative form).
#[derive(Debug, Clone)]
pub struct Embedding {
    /// Every differentiated variable is a state; only the fully differentiated equations (and
    /// `der(x) = x'` links for derivatives that are states themselves) remain.
    pub dae: Dae<IndexOne>,
    pub invariants: Vec<Invariant>,
}

impl Embedding {
    /// Whether a static state choice is valid for the whole run, whatever the motion: every
    /// constraint that was differentiated away is affine in the time-varying variables and
    /// their derivatives with constant (parameter) coefficients, so the Jacobian block that
    /// decides the dummy-derivative state choice never changes and cannot become singular
    /// where it was not singular at the start. Otherwise the embedding form with projection is
    /// the safe default.
    pub fn static_choice_is_valid(&mut self) -> bool {
        let kinds = self.dae.kinds.clone();
        let varying = |arena: &ExprArena, e: ExprId| -> Vec<ExprId> {
            let stop = |n: ExprId| eqm_ir::symbolic::is_symbol_operator(arena.get(n));
            eqm_ir::symbolic::reachable(arena, e, &stop)
                .into_iter()
                .filter(|&n| match arena.get(n) {
                    Node::Var(v) => !matches!(
                        kinds.get(v.0 as usize),
                        Some(VarKind::Parameter | VarKind::Constant) | None
                    ),
                    Node::Call(Callee::Builtin(Builtin::Der), _) => true,
                    _ => false,
                })
                .collect()
        };
        let flat = &mut self.dae.flat;
        let calls = FunctionCalls::new(&flat.functions, &flat.function_derivatives, &flat.externals);
        let arena = &mut flat.exprs;
        for inv in &self.invariants {
            for leaf in varying(arena, inv.residual) {
                let Ok(d) = diff_var_through(arena, inv.residual, leaf, &calls) else {
                    return false;
                };
                if !varying(arena, d).is_empty() {
                    return false;
                }
            }
        }
        true
    }
}

/// One invariant `g(x) = 0` of the embedding form: an equation that was differentiated away.
#[derive(Debug, Clone)]
pub struct Invariant {
    /// `lhs - rhs` of the equation, in the embedding DAE's arena.
    pub residual: ExprId,
    /// The equation it comes from, an index into the reduced DAE's equations.
    pub equation: usize,
    /// The nonzero entries of the invariant's row of G = dg/dx: (state, partial derivative).
    pub jacobian: Vec<(VarId, ExprId)>,
}

/// One variable of the index-reduction graph: a variable or a derivative of one.
#[derive(Debug, Clone, Copy)]
struct GraphVar {
    /// The expression node: `v`, `der(v)`, `der(der(v))`, ...
    leaf: ExprId,
    base: VarId,
    order: u32,
}

/// The stage of a DAE of index at most one: every derivative the system needs is a variable.
#[derive(Debug, Clone, Default)]
pub struct IndexOne {
    /// The static state choice of the dummy-derivative form, when index reduction demoted
    /// states.
    pub state_choice: Option<StateChoice>,
}

/// What index reduction did, and the embedding form it built beside the reduced DAE.
pub type Reduction = (IndexReduction, Option<Embedding>);

/// Reduces the index of `dae` when Pantelides' algorithm finds equations to differentiate;
/// the DAE comes back in the dummy-derivative form, with what was done (`None` when nothing
/// needed differentiation).
pub fn reduce(dae: Dae<AliasesRemoved>) -> Result<(Dae<IndexOne>, Option<Reduction>), Vec<Diagnostic>> {
    let mut dae = dae.into_stage(IndexOne::default());
    let reduction = reduce_in(&mut dae)?;
    Ok((dae, reduction))
}

fn reduce_in(dae: &mut Dae<IndexOne>) -> Result<Option<Reduction>, Vec<Diagnostic>> {
    let (mut gvars, var_to_diff) = graph_variables(dae);
    let index_of = structure::LeafIndex::new(&gvars.iter().map(|g| g.leaf).collect::<Vec<_>>());
    let n_equations = dae.equations.len();
    let graph = structure::structure_graph(dae, &index_of, gvars.len(), false).map_err(|d| vec![d])?;
    // A system that is singular for other reasons than constraints between states gets the
    // plan's diagnostic naming the equations and variables involved.
    let Ok(p) = pantelides(&graph, &var_to_diff) else {
        return Ok(None);
    };
    if p.max_differentiations() == 0 {
        return Ok(None);
    }
    let n_rows = graph.n_eqs();

    // The differentiated equations, in creation order (each derivative of an earlier one).
    for &(new, old) in &p.new_vars {
        let g = gvars[old.index()];
        let leaf = dae.flat.exprs.builtin(Builtin::Der, vec![g.leaf]);
        debug_assert_eq!(new.index(), gvars.len());
        gvars.push(GraphVar {
            leaf,
            base: g.base,
            order: g.order + 1,
        });
    }
    let Differentiated { row_eq, new_equations } = differentiate_equations(dae, &p, &index_of, n_rows)?;

    // State selection: stateSelect first (a variable `reinit` sets counts as `always`, as
    // Modelica says), then a fixed start value.
    let reinit = reinit_targets(dae);
    let priority: Vec<i32> = gvars
        .iter()
        .map(|g| match g.order {
            0 if reinit[g.base.0 as usize] => priority_of(StateSelect::Always),
            0 => priority(&dae.flat.var(g.base).attributes),
            _ => 0,
        })
        .collect();
    let selection = dummy_derivatives(&p, &priority).map_err(|e| vec![structure::internal(e)])?;
    let mut diff_to_var: Vec<Option<usize>> = vec![None; gvars.len()];
    for (v, d) in p.var_to_diff.iter().enumerate() {
        if let Some(d) = d {
            diff_to_var[d.index()] = Some(v);
        }
    }

    let differentiated: Vec<(usize, u32)> = p
        .differentiations
        .iter()
        .enumerate()
        .filter(|(r, n)| **n > 0 && *r < n_equations)
        .map(|(r, n)| (r, *n))
        .collect();

    // The embedding form, from a copy taken before the rewrite: every variable with a
    // derivative is a state, only highest-order rows remain, the others become invariants.
    let embedding_states: Vec<bool> = p.var_to_diff.iter().map(Option::is_some).collect();
    let highest: Vec<bool> = p.eq_to_diff.iter().map(Option::is_none).collect();
    let mut embedding_dae = dae.clone();
    rewrite(&mut embedding_dae, &gvars, &diff_to_var, &embedding_states);
    let embedding = build_embedding(embedding_dae, &row_eq, &highest);

    let mut is_state = vec![false; gvars.len()];
    for v in &selection.states {
        is_state[v.index()] = true;
    }
    let was_state: Vec<VarId> = dae.states().collect();
    let rewritten = rewrite(dae, &gvars, &diff_to_var, &is_state);
    let demoted: Vec<VarId> = was_state
        .into_iter()
        .filter(|v| dae.kind(*v) != VarKind::State)
        .collect();
    let states = chosen_states(dae);
    if !demoted.is_empty() {
        // The constraints differentiated most often first: the position-level constraint is
        // the one a singular choice is reported at.
        let mut by_order = differentiated.clone();
        by_order.sort_by_key(|&(e, times)| (std::cmp::Reverse(times), e));
        dae.stage.state_choice = Some(StateChoice {
            constraints: by_order.iter().map(|&(e, _)| e).collect(),
            demoted: demoted.clone(),
        });
    }
    let reduction = IndexReduction {
        index: p.max_differentiations() + 1,
        differentiated,
        new_equations,
        derivative_variables: rewritten,
        demoted,
        states,
    };
    Ok(Some((reduction, embedding)))
}

/// The variables of the index-reduction graph: each algebraic variable and state, and the
/// derivative of each state; with, for each, the graph variable of its derivative (Pantelides'
/// input).
fn graph_variables(dae: &mut Dae<IndexOne>) -> (Vec<GraphVar>, Vec<Option<VarIdx>>) {
    let mut gvars: Vec<GraphVar> = Vec::new();
    let mut var_to_diff: Vec<Option<VarIdx>> = Vec::new();
    for i in 0..dae.kinds.len() {
        let v = VarId(i as u32);
        if dae.eliminated[i].is_some() || !matches!(dae.kinds[i], VarKind::State | VarKind::Algebraic) {
            continue;
        }
        let leaf = dae.flat.exprs.var(v);
        gvars.push(GraphVar {
            leaf,
            base: v,
            order: 0,
        });
        var_to_diff.push(None);
        if dae.kinds[i] == VarKind::State {
            let der = dae.flat.exprs.builtin(Builtin::Der, vec![leaf]);
            let d = VarIdx(gvars.len() as u32);
            *var_to_diff.last_mut().expect("just pushed") = Some(d);
            gvars.push(GraphVar {
                leaf: der,
                base: v,
                order: 1,
            });
            var_to_diff.push(None);
        }
    }
    (gvars, var_to_diff)
}

/// Appends the equations Pantelides' algorithm differentiates to `dae`, in creation order
/// (each the derivative of an earlier one), and returns where the `n_rows` graph rows and the
/// new ones are.
fn differentiate_equations(
    dae: &mut Dae<IndexOne>,
    p: &eqm_structural::pantelides::Pantelides,
    index_of: &structure::LeafIndex,
    n_rows: usize,
) -> Result<Differentiated, Vec<Diagnostic>> {
    let n_equations = dae.equations.len();
    let kinds = dae.kinds.clone();
    let varies = |v: VarId| matches!(kinds[v.0 as usize], VarKind::State | VarKind::Algebraic);
    // `row_eq[r]`: the DAE equation of graph row `r` once the new equations are appended.
    let mut row_eq: Vec<Option<usize>> = (0..n_rows).map(|r| (r < n_equations).then_some(r)).collect();
    let mut new_equations = Vec::with_capacity(p.new_eqs.len());
    for &(new, old) in &p.new_eqs {
        let Some(of) = row_eq.get(old.index()).copied().flatten() else {
            return Err(vec![algorithm_differentiation_error(
                dae,
                index_of,
                old.index() - n_equations,
            )]);
        };
        let source = dae.equations[of].clone();
        let (lhs, rhs) = match differentiate_sides(dae, &source, &varies) {
            Ok(sides) => sides,
            Err((err, why)) => {
                let what = why.unwrap_or_else(|| describe_diff_error(dae, err.node, err.reason));
                return Err(vec![
                    Diagnostic::error(
                        "E0503",
                        format!("index reduction must differentiate this equation, but {what}"),
                        source.span,
                        format!("`{}` is differentiated here", dae.equation_text(&source)),
                    )
                    .with_help("give the function a `derivative` annotation or write the constraint without it"),
                ]);
            }
        };
        let (root, order) = match source.origin {
            Origin::Differentiated { root, order, .. } => (root, order + 1),
            _ => (of as u32, 1),
        };
        let index = dae.equations.len();
        dae.equations.push(Equation {
            lhs,
            rhs,
            origin: Origin::Differentiated {
                of: of as u32,
                root,
                order,
            },
            span: source.span,
        });
        debug_assert_eq!(new.index(), row_eq.len());
        row_eq.push(Some(index));
        new_equations.push((index, of));
    }
    Ok(Differentiated { row_eq, new_equations })
}

/// The time derivatives of both sides of `source`, calls of user functions differentiated
/// through their `derivative` annotations or bodies; or the error, with the reason a call gave.
fn differentiate_sides(
    dae: &mut Dae<IndexOne>,
    source: &Equation,
    varies: &dyn Fn(VarId) -> bool,
) -> Result<(ExprId, ExprId), (eqm_ir::symbolic::DiffError, Option<String>)> {
    let flat = &mut dae.flat;
    let calls = FunctionCalls::new(&flat.functions, &flat.function_derivatives, &flat.externals);
    let lhs = diff_time_through(&mut flat.exprs, source.lhs, varies, &calls).map_err(|e| (e, calls.take_why()))?;
    let rhs = diff_time_through(&mut flat.exprs, source.rhs, varies, &calls).map_err(|e| (e, calls.take_why()))?;
    Ok((lhs, rhs))
}

/// The equations index reduction appended to the DAE.
struct Differentiated {
    /// The DAE equation of each graph row (`None` for an algorithm row).
    row_eq: Vec<Option<usize>>,
    /// (index of the new equation, index of the equation it is the derivative of).
    new_equations: Vec<(usize, usize)>,
}

/// The error for algorithm row `row` (counted after the equations), which index reduction
/// would have to differentiate: it names the algorithm section.
fn algorithm_differentiation_error(dae: &Dae<IndexOne>, index_of: &structure::LeafIndex, row: usize) -> Diagnostic {
    // Algorithm rows are numbered as `structure::algorithm_rows_of` lists them.
    let section = structure::algorithm_rows_of(dae, index_of, false)
        .into_iter()
        .flat_map(|(section, outputs, _)| outputs.into_iter().map(move |_| section))
        .nth(row);
    let span = section.map_or(dae.flat.instances[0].span, |a| dae.flat.algorithms[a].span);
    Diagnostic::error(
        "E0503",
        "index reduction must differentiate this algorithm section, which EQM cannot do",
        span,
        "its outputs are constrained together with states",
    )
    .with_help("write the constraint as equations so that it can be differentiated")
}

/// Which variables a `reinit` of a when-clause sets, by variable.
fn reinit_targets(dae: &Dae<IndexOne>) -> Vec<bool> {
    let mut targets = vec![false; dae.flat.variables.len()];
    for action in dae.flat.whens.iter().flat_map(|w| &w.branches).flat_map(|b| &b.actions) {
        if let flat::WhenAction::Reinit { var, .. } = action
            && let Some(t) = targets.get_mut(var.0 as usize)
        {
            *t = true;
        }
    }
    targets
}

/// The states of the dummy-derivative form, each with why it was chosen.
fn chosen_states(dae: &Dae<IndexOne>) -> Vec<(VarId, &'static str)> {
    let reinit = reinit_targets(dae);
    dae.states()
        .map(|v| {
            let a = &dae.flat.var(v).attributes;
            let reason = match a.state_select {
                Some(StateSelect::Always) => "stateSelect = always",
                _ if reinit.get(v.0 as usize) == Some(&true) => "reinit sets it",
                Some(StateSelect::Prefer) => "stateSelect = prefer",
                _ if a.fixed == Some(true) && a.start.is_some() => "has a fixed start value",
                _ => "chosen by dummy-derivative selection",
            };
            (v, reason)
        })
        .collect()
}

/// W0503 for the `stateSelect` requests the state choice could not honour: a variable with
/// `always` that is not a state of `dae` (it does not appear differentiated, or index reduction
/// made its derivative a dummy derivative), and one with `never` that is a state all the same
/// (nothing else could be chosen). A variable alias elimination replaced counts as its
/// representative; one replaced by a constant is no state. One warning per kind of request,
/// labelling the first variables.
pub fn state_select_warnings(
    dae: &Dae<IndexOne>,
    aliases: &crate::alias::AliasReport,
    reduction: Option<&IndexReduction>,
) -> Vec<Diagnostic> {
    let requested: Vec<(VarId, StateSelect)> = (0..dae.flat.variables.len() as u32)
        .map(VarId)
        .filter_map(|v| match dae.flat.var(v).attributes.state_select {
            Some(s @ (StateSelect::Always | StateSelect::Never)) => Some((v, s)),
            _ => None,
        })
        .collect();
    if requested.is_empty() {
        return Vec::new();
    }
    let mut representative: FxHashMap<VarId, Option<VarId>> = FxHashMap::default();
    for &(v, root, _, _) in &aliases.aliases {
        representative.insert(v, Some(root));
    }
    for &(v, _, _) in &aliases.constants {
        representative.insert(v, None);
    }
    let is_state = |v: VarId| {
        representative
            .get(&v)
            .copied()
            .unwrap_or(Some(v))
            .is_some_and(|r| dae.kind(r) == VarKind::State)
    };
    let demoted = |v: VarId| reduction.is_some_and(|r| r.demoted.contains(&v));
    let mut not_states = Vec::new();
    let mut forced = Vec::new();
    for (v, select) in requested {
        match select {
            StateSelect::Always if !is_state(v) => not_states.push(v),
            StateSelect::Never if is_state(v) => forced.push(v),
            _ => {}
        }
    }
    let mut warnings = Vec::new();
    let label = |v: VarId| {
        let name = &dae.flat.var(v).name;
        if demoted(v) {
            format!("`{name}` is no state: index reduction made its derivative a dummy derivative")
        } else {
            format!("`{name}` is no state: it does not appear differentiated")
        }
    };
    if let Some(&first) = not_states.first() {
        let mut d = Diagnostic::warning(
            "W0503",
            format!(
                "`stateSelect = always` cannot be honoured for {}",
                names_of(dae, &not_states)
            ),
            dae.flat.var(first).span,
            label(first),
        );
        for &v in not_states.iter().skip(1).take(5) {
            d = d.with_label(dae.flat.var(v).span, label(v));
        }
        warnings.push(d.with_help(
            "EQM chooses states among the variables that appear differentiated; differentiate the variable in an equation, or use `prefer`",
        ));
    }
    if let Some(&first) = forced.first() {
        let mut d = Diagnostic::warning(
            "W0503",
            format!(
                "`stateSelect = never` cannot be honoured for {}",
                names_of(dae, &forced)
            ),
            dae.flat.var(first).span,
            format!("`{}` had to be a state", dae.flat.var(first).name),
        );
        for &v in forced.iter().skip(1).take(5) {
            d = d.with_label(
                dae.flat.var(v).span,
                format!("`{}` had to be a state", dae.flat.var(v).name),
            );
        }
        warnings
            .push(d.with_help("no other variable that appears differentiated could be chosen as a state in its place"));
    }
    warnings
}

/// The names of `vars`, the first six and a count of the rest.
fn names_of(dae: &Dae<IndexOne>, vars: &[VarId]) -> String {
    let mut text: Vec<String> = vars
        .iter()
        .take(6)
        .map(|v| format!("`{}`", dae.flat.var(*v).name))
        .collect();
    if vars.len() > 6 {
        text.push(format!("and {} more", vars.len() - 6));
    }
    text.join(", ")
}

/// The preference for keeping a variable as a state: `stateSelect` dominates, a fixed start
/// value breaks ties among default ones.
fn priority(a: &flat::Attributes) -> i32 {
    match a.state_select {
        Some(StateSelect::Default) | None => i32::from(a.fixed == Some(true) && a.start.is_some()),
        Some(s) => priority_of(s),
    }
}

/// The preference a `stateSelect` value other than `default` gives.
fn priority_of(s: StateSelect) -> i32 {
    match s {
        StateSelect::Never => -100,
        StateSelect::Avoid => -10,
        StateSelect::Default => 0,
        StateSelect::Prefer => 10,
        StateSelect::Always => 100,
    }
}

fn describe_diff_error(dae: &Dae<IndexOne>, node: ExprId, reason: &str) -> String {
    format!("`{}` cannot be differentiated ({reason})", dae.flat.expr_text(node))
}

/// Rewrites `dae` so that the graph variables marked in `is_state` are its states and every
/// other derivative is an ordinary variable: a derivative of a state stays `der(x)`, a derivative
/// that is a state or whose integral is not a state gets a new variable, and a derivative that
/// is a state of a state gets the link equation `der(x) = x'`. Every equation is rewritten.
/// Returns the new variables as [`IndexReduction::derivative_variables`] lists them.
fn rewrite(
    dae: &mut Dae<IndexOne>,
    gvars: &[GraphVar],
    diff_to_var: &[Option<usize>],
    is_state: &[bool],
) -> Vec<DerivativeVariable> {
    let mut exprs: Vec<ExprId> = Vec::with_capacity(gvars.len());
    let mut new_vars = Vec::new();
    let mut links: Vec<(ExprId, ExprId, VarId)> = Vec::new();
    for (i, g) in gvars.iter().enumerate() {
        let state = is_state[i];
        if g.order == 0 {
            dae.kinds[g.base.0 as usize] = if state { VarKind::State } else { VarKind::Algebraic };
            exprs.push(g.leaf);
            continue;
        }
        let integral = diff_to_var[i].filter(|&s| is_state[s]);
        if let (Some(s), false) = (integral, state) {
            // The derivative of a state: the solver's `der(x)`.
            let x = exprs[s];
            exprs.push(dae.flat.exprs.builtin(Builtin::Der, vec![x]));
            continue;
        }
        let name = dae.flat.expr_text(g.leaf);
        let (description, kind) = if state {
            (format!("{name}, a state of the index-reduced system"), VarKind::State)
        } else {
            (
                format!("{name}, a dummy derivative (an algebraic variable after index reduction)"),
                VarKind::Algebraic,
            )
        };
        let v = dae.add_derivative_variable(g.base, name.clone(), description, kind);
        let node = dae.flat.exprs.var(v);
        if let Some(s) = integral {
            let x = exprs[s];
            let der = dae.flat.exprs.builtin(Builtin::Der, vec![x]);
            links.push((der, node, v));
        }
        exprs.push(node);
        new_vars.push(DerivativeVariable {
            var: v,
            name,
            dummy: !state,
        });
    }
    let replacement: FxHashMap<ExprId, ExprId> = gvars
        .iter()
        .zip(&exprs)
        .filter(|(g, e)| g.leaf != **e)
        .map(|(g, e)| (g.leaf, *e))
        .collect();
    dae.substitute_in_equations(&replacement);
    for (der, node, v) in links {
        let span = dae.flat.var(v).span;
        dae.equations.push(Equation {
            lhs: der,
            rhs: node,
            origin: Origin::DerivativeChain { var: v },
            span,
        });
    }
    new_vars
}

/// Keeps the highest-order equations of the rewritten embedding DAE as its system and turns the
/// others into invariants with their Jacobian with respect to the states.
fn build_embedding(mut dae: Dae<IndexOne>, row_eq: &[Option<usize>], highest: &[bool]) -> Option<Embedding> {
    let n_rows = row_eq.len();
    let mut keep = vec![true; dae.equations.len()];
    for r in 0..n_rows {
        if let (Some(e), false) = (row_eq[r], highest[r]) {
            keep[e] = false;
        }
    }
    let states: Vec<VarId> = dae.states().collect();
    let state_leaves: Vec<(VarId, ExprId)> = states.iter().map(|&v| (v, dae.flat.exprs.var(v))).collect();
    let mut invariants = Vec::new();
    for (e, &k) in keep.iter().enumerate() {
        if k {
            continue;
        }
        let eq = &dae.equations[e];
        let (lhs, rhs) = (eq.lhs, eq.rhs);
        let residual = dae.flat.exprs.binary(BinOp::Sub, lhs, rhs);
        let residual = eqm_ir::symbolic::simplify(&mut dae.flat.exprs, residual);
        let mut jacobian = Vec::new();
        for &(v, leaf) in &state_leaves {
            if !eqm_ir::symbolic::contains_leaf(&dae.flat.exprs, residual, leaf) {
                continue;
            }
            let flat = &mut dae.flat;
            let calls = FunctionCalls::new(&flat.functions, &flat.function_derivatives, &flat.externals);
            let d = diff_var_through(&mut flat.exprs, residual, leaf, &calls).ok()?;
            if dae.flat.exprs.literal(d) != Some(0.0) {
                jacobian.push((v, d));
            }
        }
        invariants.push(Invariant {
            residual,
            equation: e,
            jacobian,
        });
        // The program of the embedding form keeps the constraint as one of its invariants,
        // after those the model declares.
        let constraint = &dae.equations[e];
        // An invariant of the flat model names the model equation it comes from; a
        // differentiated constraint names its root (the equation as the model writes it).
        let mut root = constraint;
        while let Origin::Differentiated { root: r, .. } = root.origin {
            match dae.equations.get(r as usize) {
                Some(eq) if !std::ptr::eq(eq, root) => root = eq,
                _ => break,
            }
        }
        // Equations the compiler introduced count as the model's own (instance 0).
        let origin = match &root.origin {
            Origin::Flat { origin, .. } => origin.clone(),
            _ => flat::Origin::Equation {
                instance: flat::InstanceId(0),
            },
        };
        let constraint = flat::Equation {
            lhs: constraint.lhs,
            rhs: constraint.rhs,
            origin,
            span: constraint.span,
            array: None,
        };
        dae.flat.invariants.push(constraint);
    }
    // Invariant equation numbers refer to the dummy-derivative DAE, whose equations are the
    // embedding's before this filtering (both are rewritten from the same list).
    dae.retain_equations(&keep);
    Some(Embedding { dae, invariants })
}
