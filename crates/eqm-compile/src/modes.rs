//! Variable-structure models: equations whose branches contain different unknowns depending on
//! relations or Boolean variables that change during a run (the parametric friction
//! element: `v = if s > 1 then s - 1 else if s < -1 then s + 1 else 0` contains the path
//! parameter `s` while slipping and fixes the velocity, a state, while stuck).
//!
//! Input: a [`FlatModel`] and its [`Analysis`], in which every if-expression contributes the
//! union of its branches' variables. Output: a [`VariableStructure`] when that analysis is not
//! valid in every combination of branches (an equation is solved for an unknown that one of its
//! branches does not contain, so the solve is singular there): the relations and Boolean
//! variables choosing the branches of those equations (the mode atoms) and the equations. For
//! each combination of atom values (a mode), [`specialize`] gives the flat model with those
//! branches chosen, which the ordinary pipeline analyses (index reduction included) and
//! compiles, and which watches the atoms through Boolean equations `$modeK = relation`, so that
//! a run of it ends at the event where an atom changes; [`watched_variables`] names what to
//! watch in the analysed mode. For a resumed run (after a switch) the specialization drops the
//! initial equations and every fixed start value of a continuous variable: the run's caller
//! carries the states over as start values, which the initialization then assumes for exactly
//! the states this mode's analysis chose. The parameters the first initialization computed
//! (`fixed = false`) become ordinary parameters there, which the caller sets to the values they
//! were computed to.
//!
//! This module decides nothing numerically and runs nothing: which mode a run starts in and when
//! it switches is decided by the run driver from the values the simulation reports.

use crate::analysis::Analysis;
use crate::dae::{Dae, VarKind};
use crate::events::Hybrid;
use crate::plan::{Block, Plan};
use eqm_diag::source::Span;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, Callee, ExprArena, ExprId, FxHashMap, FxHashSet, Node, UnOp, VarId};
use eqm_ir::flat::{
    Attributes, Causality, ConnectorRole, Equation, FlatModel, InstanceId, Origin, ScalarType, Variability, Variable,
};
use eqm_ir::symbolic::{is_symbol_operator, reachable};

/// A relation or Boolean variable that chooses branches of equations whose structure depends
/// on it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeAtom {
    /// The relation (`s > 1`) or the variable, in the flat model's arena.
    pub expr: ExprId,
    /// As written, for messages.
    pub text: String,
    /// The Boolean variable, for an atom that is one (`None` for a relation).
    pub variable: Option<VarId>,
}

/// The mode atoms of a variable-structure model and the equations whose structure they change.
#[derive(Debug, Clone, PartialEq)]
pub struct VariableStructure {
    /// In the order of their expressions (deterministic); a mode is one value per atom.
    pub atoms: Vec<ModeAtom>,
    /// Each equation whose solve is singular in some mode: where it is and its text.
    pub equations: Vec<(Span, String)>,
}

/// The name of the Boolean variable that watches atom `k` (a relation) in a specialized model.
pub fn watch_name(k: usize) -> String {
    format!("$mode{}", k + 1)
}

/// Whether `flat` has an if-expression whose condition can change during a run: a cheap test,
/// one pass over the arena, that decides whether [`find`] needs the flat model kept.
pub fn may_vary_in_structure(flat: &FlatModel) -> bool {
    let arena = &flat.exprs;
    (0..arena.len()).any(|i| match arena.get(ExprId(i as u32)) {
        Node::If(c, ..) => arena.literal(*c).is_none(),
        _ => false,
    })
}

/// The variable structure of `flat` whose (union) analysis is `analysis`, or `None` when the
/// analysis is valid in every mode (every equation contains the unknown it is solved for in each
/// of its branches) or when nothing watchable chooses the branches (a condition inside
/// `noEvent`).
pub fn find(flat: &FlatModel, analysis: &Analysis) -> Option<VariableStructure> {
    let (dae, plan) = match (&analysis.form, &analysis.embedding) {
        (Some(form), Some(e)) if form.embedding => (&e.dae, &e.plan),
        _ => (&analysis.dae, &analysis.plan),
    };
    let spans = fragile_equations(dae, plan);
    if spans.is_empty() {
        return None;
    }
    let arena = &flat.exprs;
    let mut atoms: Vec<ExprId> = Vec::new();
    let mut equations = Vec::new();
    let mut listed: FxHashSet<Span> = FxHashSet::default();
    for eq in &flat.equations {
        if !spans.contains(&eq.span) {
            continue;
        }
        let before = atoms.len();
        for root in [eq.lhs, eq.rhs] {
            for e in reachable(arena, root, &|e| is_no_event(arena, e)) {
                // Every condition of the equation: a nested if-expression whose branches contain
                // the same variables (`if s > 1 then s - 1 else if s < -1 then s + 1 else 0`)
                // can still choose between structures below it.
                if let Node::If(c, ..) = arena.get(e) {
                    collect_atoms(flat, *c, &mut atoms);
                }
            }
        }
        if atoms.len() > before && listed.insert(eq.span) {
            let name = |v: VarId| flat.var(v).name.clone();
            let text = format!("{} = {}", arena.display(eq.lhs, &name), arena.display(eq.rhs, &name));
            equations.push((eq.span, text));
        }
    }
    atoms.sort_unstable();
    atoms.dedup();
    if atoms.is_empty() {
        return None;
    }
    let name = |v: VarId| flat.var(v).name.clone();
    let atoms = atoms
        .into_iter()
        .map(|expr| ModeAtom {
            expr,
            text: arena.display(expr, &name),
            variable: match arena.get(expr) {
                Node::Var(v) => Some(*v),
                _ => None,
            },
        })
        .collect();
    Some(VariableStructure { atoms, equations })
}

/// The spans of the equations of `dae` that `plan` solves for an unknown one of their branches
/// (chosen by a relation or a Boolean variable) does not contain.
fn fragile_equations(dae: &Dae<Hybrid>, plan: &Plan) -> FxHashSet<Span> {
    let arena = &dae.flat.exprs;
    let mut switching = vec![false; dae.kinds.len()];
    for surface in &dae.stage.events.surfaces {
        for &(v, _) in &surface.relations {
            switching[v.0 as usize] = true;
        }
    }
    // Boolean variables change only at events, whether a when-clause or an equation of
    // relations sets them.
    for (i, kind) in dae.kinds.iter().enumerate() {
        if matches!(kind, VarKind::Discrete | VarKind::Algebraic) && dae.flat.variables[i].ty == ScalarType::Boolean {
            switching[i] = true;
        }
    }
    let is_switching = |c: ExprId| {
        reachable(arena, c, &|_| false)
            .into_iter()
            .any(|e| matches!(arena.get(e), Node::Var(v) if switching[v.0 as usize]))
    };
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for block in &plan.blocks {
        match block {
            Block::Explicit { eq, unknown, .. } | Block::Implicit { eq, unknown } => pairs.push((*eq, *unknown)),
            Block::Loop(l) => pairs.extend(l.eqs.iter().map(|&e| (e, plan.matching[e]))),
            Block::Algorithm { .. } => {}
        }
    }
    let mut spans = FxHashSet::default();
    for (e, unknown) in pairs {
        let Some(eq) = dae.equations.get(e) else { continue };
        let leaf = plan.leaves[unknown];
        let sure =
            surely_contains(arena, eq.lhs, leaf, &is_switching) || surely_contains(arena, eq.rhs, leaf, &is_switching);
        if !sure {
            spans.insert(eq.span);
        }
    }
    spans
}

/// Whether `leaf` occurs in `root` whichever branch each if-expression whose condition
/// `is_switching` takes (in both its branches, or outside it). `der(...)` and `pre(...)` are
/// opaque symbols.
fn surely_contains(arena: &ExprArena, root: ExprId, leaf: ExprId, is_switching: &dyn Fn(ExprId) -> bool) -> bool {
    if root < leaf {
        return false;
    }
    let order = reachable(arena, root, &|e| is_symbol_operator(arena.get(e)));
    let mut sure: FxHashMap<ExprId, bool> = FxHashMap::default();
    let get = |sure: &FxHashMap<ExprId, bool>, e: ExprId| sure.get(&e).copied().unwrap_or(false);
    for e in order {
        let value = if e == leaf {
            true
        } else {
            match arena.get(e) {
                Node::If(c, a, b) if is_switching(*c) => get(&sure, *a) && get(&sure, *b),
                node if is_symbol_operator(node) => false,
                _ => arena.children(e).any(|c| get(&sure, c)),
            }
        };
        sure.insert(e, value);
    }
    get(&sure, root)
}

fn is_no_event(arena: &ExprArena, e: ExprId) -> bool {
    matches!(arena.get(e), Node::Call(Callee::Builtin(Builtin::NoEvent), _))
}

/// The time-varying variables in `e`, sorted.
fn varying_vars(flat: &FlatModel, e: ExprId) -> Vec<VarId> {
    let mut vars = Vec::new();
    flat.exprs.vars_in(e, &mut vars);
    vars.retain(|v| flat.var(*v).variability.is_time_varying());
    vars.sort_unstable();
    vars.dedup();
    vars
}

/// Adds the atoms of condition `c` to `atoms`: relations on time-varying values and Boolean
/// variables, outside `noEvent`.
fn collect_atoms(flat: &FlatModel, c: ExprId, atoms: &mut Vec<ExprId>) {
    let arena = &flat.exprs;
    for e in reachable(arena, c, &|e| is_no_event(arena, e)) {
        match arena.get(e) {
            Node::Binary(BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge, ..)
                if !varying_vars(flat, e).is_empty() && !contains_no_event(arena, e) =>
            {
                atoms.push(e)
            }
            Node::Var(v) if flat.var(*v).variability.is_time_varying() && flat.var(*v).ty == ScalarType::Boolean => {
                atoms.push(e)
            }
            _ => {}
        }
    }
}

fn contains_no_event(arena: &ExprArena, e: ExprId) -> bool {
    reachable(arena, e, &|_| false)
        .into_iter()
        .any(|n| is_no_event(arena, n))
}

/// `flat` in the mode `key` (one value per atom of `structure`): every if-expression whose
/// condition the atoms decide replaced by its branch, a Boolean equation `$modeK = relation`
/// per relation atom so that the mode's program watches it, and for a `resumed` run no initial
/// equations, no fixed start values of continuous variables, and the parameters the
/// initialization computed (`fixed = false`) made ordinary parameters, which the run sets to
/// the values they had (see the module documentation).
pub fn specialize(flat: &FlatModel, structure: &VariableStructure, key: &[bool], resumed: bool) -> FlatModel {
    let mut flat = flat.clone();
    let values: FxHashMap<ExprId, bool> = structure
        .atoms
        .iter()
        .map(|a| a.expr)
        .zip(key.iter().copied())
        .collect();
    let mut memo: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    let mut equations = std::mem::take(&mut flat.equations);
    let mut initial = std::mem::take(&mut flat.initial_equations);
    for eq in equations.iter_mut().chain(initial.iter_mut()) {
        eq.lhs = choose_branches(&mut flat.exprs, eq.lhs, &values, &mut memo);
        eq.rhs = choose_branches(&mut flat.exprs, eq.rhs, &values, &mut memo);
    }
    flat.equations = equations;
    flat.initial_equations = if resumed { Vec::new() } else { initial };
    for (k, atom) in structure.atoms.iter().enumerate() {
        if atom.variable.is_some() {
            continue;
        }
        let v = VarId(flat.variables.len() as u32);
        let span = structure.equations.first().map_or(flat.instances[0].span, |(s, _)| *s);
        flat.variables.push(Variable {
            name: watch_name(k),
            instance: InstanceId(0),
            // Defined by an ordinary equation: an unknown computed from its relation.
            variability: Variability::Continuous,
            ty: ScalarType::Boolean,
            causality: Causality::None,
            role: ConnectorRole::None,
            attributes: Attributes::default(),
            binding: None,
            value: None,
            description: None,
            span,
        });
        let lhs = flat.exprs.var(v);
        flat.equations.push(Equation {
            lhs,
            rhs: atom.expr,
            origin: Origin::Equation {
                instance: InstanceId(0),
            },
            span,
            array: None,
        });
    }
    if resumed {
        for var in &mut flat.variables {
            match var.variability {
                Variability::Continuous if var.attributes.fixed == Some(true) => var.attributes.fixed = Some(false),
                // A parameter the initialization computed is set to the value it computed.
                Variability::Parameter if var.attributes.fixed == Some(false) => var.attributes.fixed = Some(true),
                _ => {}
            }
        }
    }
    flat
}

/// `root` with every if-expression whose condition `values` decides replaced by the branch it
/// takes (and the atoms in conditions it does not decide replaced by their values).
fn choose_branches(
    arena: &mut ExprArena,
    root: ExprId,
    values: &FxHashMap<ExprId, bool>,
    memo: &mut FxHashMap<ExprId, ExprId>,
) -> ExprId {
    let order = reachable(arena, root, &|e| memo.contains_key(&e));
    for e in order {
        if memo.contains_key(&e) {
            continue;
        }
        let map = |memo: &FxHashMap<ExprId, ExprId>, c: ExprId| memo.get(&c).copied().unwrap_or(c);
        let new = match arena.get(e).clone() {
            Node::If(c, a, b) => {
                let condition = decide(arena, c, values);
                match arena.literal(condition) {
                    Some(v) if v != 0.0 => map(memo, a),
                    Some(_) => map(memo, b),
                    None => arena.add(Node::If(condition, map(memo, a), map(memo, b))),
                }
            }
            _ if arena.children(e).all(|c| map(memo, c) == c) => e,
            _ => eqm_ir::symbolic::rebuild(arena, e, memo),
        };
        memo.insert(e, new);
    }
    memo.get(&root).copied().unwrap_or(root)
}

/// Condition `c` with its atoms replaced by their values in `values` and `not`, `and`, `or`
/// folded where an operand is then known.
fn decide(arena: &mut ExprArena, c: ExprId, values: &FxHashMap<ExprId, bool>) -> ExprId {
    if let Some(&v) = values.get(&c) {
        return arena.boolean(v);
    }
    let known = |arena: &ExprArena, e: ExprId| arena.literal(e).map(|v| v != 0.0);
    match arena.get(c).clone() {
        Node::Unary(UnOp::Not, a) => {
            let a = decide(arena, a, values);
            match known(arena, a) {
                Some(v) => arena.boolean(!v),
                None => arena.unary(UnOp::Not, a),
            }
        }
        Node::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
            let (a, b) = (decide(arena, a, values), decide(arena, b, values));
            let absorbing = op == BinOp::Or;
            match (known(arena, a), known(arena, b)) {
                (Some(x), _) | (_, Some(x)) if x == absorbing => arena.boolean(absorbing),
                (Some(_), _) => b,
                (_, Some(_)) => a,
                _ => arena.binary(op, a, b),
            }
        }
        _ => c,
    }
}

/// What a run of the analysed mode `dae` watches, per atom of `structure`: the name of the
/// relation variable that holds a relation atom (from its `$modeK` equation), or, where this
/// mode's analysis made the relation constant, the `$modeK` variable itself; the Boolean
/// variable's own name for an atom that is one.
pub fn watched_variables(dae: &Dae<Hybrid>, structure: &VariableStructure) -> Vec<String> {
    let arena = &dae.flat.exprs;
    let mut relation_vars = vec![false; dae.kinds.len()];
    for surface in &dae.stage.events.surfaces {
        for &(v, _) in &surface.relations {
            relation_vars[v.0 as usize] = true;
        }
    }
    // The atom each watch variable stands for, by variable: one pass over the names.
    let mut atom_of: FxHashMap<VarId, usize> = FxHashMap::default();
    for (i, var) in dae.flat.variables.iter().enumerate() {
        if let Some(k) = var.name.strip_prefix("$mode").and_then(|k| k.parse::<usize>().ok())
            && (1..=structure.atoms.len()).contains(&k)
        {
            atom_of.insert(VarId(i as u32), k - 1);
        }
    }
    let mut relation_of: Vec<Option<String>> = vec![None; structure.atoms.len()];
    for eq in &dae.equations {
        for (side, other) in [(eq.lhs, eq.rhs), (eq.rhs, eq.lhs)] {
            if let (Node::Var(m), Node::Var(r)) = (arena.get(side), arena.get(other))
                && let Some(&k) = atom_of.get(m)
                && relation_vars[r.0 as usize]
            {
                relation_of[k] = Some(dae.flat.var(*r).name.clone());
            }
        }
    }
    structure
        .atoms
        .iter()
        .zip(relation_of)
        .enumerate()
        .map(|(k, (atom, relation))| match atom.variable {
            Some(v) => dae.flat.var(v).name.clone(),
            // A relation this mode made constant (`s > 0` where the mode fixes `s`) is
            // watched through its Boolean: its value may still contradict the mode.
            None => relation.unwrap_or_else(|| watch_name(k)),
        })
        .collect()
}

/// The mode the values of the variables at the start suggest: each atom evaluated with every
/// parameter at its value (`parameters` first, then its binding's value) and every other
/// variable at its start value (`starts` first, then its `start` attribute, else zero). The run
/// driver starts there and switches when the consistent initial values disagree.
pub fn initial_key(
    flat: &FlatModel,
    structure: &VariableStructure,
    parameters: &[(String, f64)],
    starts: &[(String, f64)],
    time: f64,
) -> Vec<bool> {
    let given = |list: &[(String, f64)], name: &str| list.iter().rev().find(|(n, _)| n == name).map(|(_, v)| *v);
    let parameter = |v: VarId| -> f64 {
        let var = flat.var(v);
        given(parameters, &var.name).or(var.value).unwrap_or(0.0)
    };
    let value = |v: VarId| -> f64 {
        let var = flat.var(v);
        if !var.variability.is_time_varying() {
            return parameter(v);
        }
        given(starts, &var.name)
            .or_else(|| {
                let start = var.attributes.start?;
                eqm_ir::symbolic::evaluate(&flat.exprs, start, &parameter, time).ok()
            })
            .unwrap_or(0.0)
    };
    structure
        .atoms
        .iter()
        .map(|a| eqm_ir::symbolic::evaluate(&flat.exprs, a.expr, &value, time).is_ok_and(|v| v != 0.0))
        .collect()
}

/// The lines `explain` adds for a variable-structure model.
pub fn explain(structure: &VariableStructure) -> String {
    let mut text = format!(
        "\nvariable structure: {} equation(s) contain different unknowns in different branches, chosen by {} relation(s) or Boolean variable(s); the analysis above holds only where those branches contain the unknowns it solves for. Each combination of their values (a mode) is analysed with the branches it takes, index reduction included, and compiled when a run first enters it; a run switches to the new mode's program at the event where one of them changes, carrying the states over (consistent re-initialisation)\n",
        structure.equations.len(),
        structure.atoms.len()
    );
    text.push_str("  chosen by: ");
    text.push_str(
        &structure
            .atoms
            .iter()
            .map(|a| a.text.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    );
    text.push('\n');
    for (_, equation) in &structure.equations {
        text.push_str(&format!("  {equation}\n"));
    }
    text
}
