//! The discrete variables of the initial system: which `pre` values and discrete variables are
//! its unknowns, the equations that join them (`v = pre(v)` of a when-assigned variable, the
//! fixed start value on `pre(v)`), the outputs of initial algorithms, and initial equations on
//! discrete values that repeat what the others determine.
//!
//! Input: the initial system's DAE as the parent module builds it (the model's equations and the
//! initial equations). Output: the DAE with those unknowns and equations, the `pre` values that
//! only Modelica's default `pre(v) = v.start` may determine, and the checks of repeated
//! equations. It does not match or solve anything: the parent module does.

use super::{PreNames, start_equation};
use crate::dae::{Dae, Equation, Origin, VarKind};
use crate::events::Hybrid;
use crate::plan::Unknown;
use eqm_diag::Diagnostic;
use eqm_ir::expr::{ExprId, FxHashMap, VarId};
use eqm_ir::flat::ScalarType;
use eqm_structural::incidence::EqIdx;

/// Discrete variables that initial equations or initial algorithms determine (`initial
/// equation y = 3;` or `pre(k) = 5;`) are unknowns of the initial system rather than held at
/// their start values. Returns the `pre` values made unknowns that nothing but Modelica's
/// default `pre(v) = v.start` may determine (offered after the given equations).
///
/// - A variable assigned in when-equations: the variable, its `pre` value if the model uses one,
///   and the equation `v = pre(v)` (no when-clause is active during the initialization) joining
///   them.
/// - A discrete-time variable defined by an ordinary equation (a Boolean `y = pre(y) and u`):
///   its equation holds during the initialization and determines it; its `pre` value, when an
///   initial equation names it, is an unknown of its own, determined by that equation (or by
///   `pre(v) = v.start` when `v` has `fixed = true`).
/// - A discrete output of an algorithm section is computed by the section, which starts from its
///   `pre` value: there the `pre` value is the unknown the initial equations determine
///   (Modelica's rule: an initial equation replaces the default `pre(v) = v.start`). An output
///   assigned only in when-statements keeps that value when none fires, as during the
///   initialization, so an initial equation or initial algorithm on the output itself is one on
///   its `pre` value.
///
/// A variable of a when-clause active at the initialization (`active`) is an unknown already.
///
/// Other discrete variables keep their start values, as their `pre` values do; with
/// `free_held`, every variable when-equations assign without `fixed = true` is an unknown as if
/// an initial equation named it, its `pre` value (or itself) offered its start value.
pub(super) fn discrete_unknowns(
    dae: &Dae<Hybrid>,
    init: &mut Dae<Hybrid>,
    active: &[bool],
    free_held: bool,
) -> Vec<VarId> {
    let first_initial = init.equations.len() - init.initial_equations.len();
    let mut pre_of: FxHashMap<VarId, VarId> = FxHashMap::default();
    let mut owner: FxHashMap<VarId, VarId> = FxHashMap::default();
    for p in &dae.stage.events.previous {
        let eqm_ir::expr::Node::Var(v) = *dae.exprs().get(p.expr) else {
            continue;
        };
        if !p.settled_at_start {
            pre_of.insert(v, p.var);
            owner.insert(p.var, v);
        } else if !p.left_limit && !p.integer_part && is_discrete_time(init, v) {
            // `pre(v)` of a discrete-time variable its own equation defines (a Boolean
            // `y = pre(y) and u`): the simulation sets it to `v`'s value before each pass of
            // the event iteration, but at the start it is an unknown of its own.
            owner.insert(p.var, v);
        }
    }
    let mut mentioned = initially_mentioned(init);
    let mut done = vec![false; init.kinds.len()];
    let mut free_pre = Vec::new();
    let mut held_outputs: FxHashMap<VarId, VarId> = FxHashMap::default();
    let section_outputs = init.discrete_algorithm_outputs(false);
    let freed = if free_held {
        freed_held(init, &mentioned, &owner, &section_outputs)
    } else {
        Vec::new()
    };
    mentioned.extend(&freed);
    let mut is_freed = vec![false; init.kinds.len()];
    for v in &freed {
        is_freed[v.0 as usize] = true;
    }
    for w in mentioned {
        let v = owner.get(&w).copied().unwrap_or(w);
        let i = v.0 as usize;
        // A variable of a when-clause active at the initialization is determined by it: its
        // `pre` value, when an initial equation names it, is an unknown that equation determines.
        // Its fixed start value is that of its `pre` value (`pre(v) = v.start`); without one,
        // Modelica's default offers the same equation where nothing else determines it.
        if active.get(i) == Some(&true) {
            if w != v && init.kinds[w.0 as usize] == VarKind::Discrete {
                pre_unknown(init, v, w, &mut free_pre);
            }
            continue;
        }
        if section_outputs[i] && !done[i] {
            done[i] = true;
            if let Some(&p) = pre_of.get(&v) {
                algorithm_output_pre_unknown(init, v, p, &mut held_outputs);
            }
            continue;
        }
        // (A variable an initial algorithm assigns and no other section does counts as one
        // the when-equations hold: it is held between events.)
        let when_assigned = init.kinds[i] == VarKind::Discrete && !section_outputs[i] && init.eliminated[i].is_none();
        // Relation and event variables are not the user's: the events set them.
        if init.flat.var(v).name.starts_with('$') {
            continue;
        }
        if !when_assigned {
            // The `pre` value of a variable its own equation determines.
            let p = w.0 as usize;
            if w != v && !done[p] && !section_outputs[i] && init.kinds[p] == VarKind::Discrete {
                done[p] = true;
                pre_unknown(init, v, w, &mut free_pre);
            }
            continue;
        }
        if done[i] {
            continue;
        }
        done[i] = true;
        init.kinds[i] = VarKind::Algebraic;
        if let Some(&p) = pre_of.get(&v) {
            init.kinds[p.0 as usize] = VarKind::Algebraic;
            let (lhs, rhs) = (init.flat.exprs.var(v), init.flat.exprs.var(p));
            let span = init.flat.var(v).span;
            init.equations.push(Equation {
                lhs,
                rhs,
                origin: Origin::HeldAtStart { var: v },
                span,
            });
        }
        if is_freed[i] {
            free_pre.push(pre_of.get(&v).copied().unwrap_or(v));
        }
    }
    // A discrete-time variable with `fixed = true` has Modelica's `pre(v) = v.start` at the
    // start even when no initial equation names it: its own equation then starts from that
    // value, not from a `pre` value equal to whatever the first pass of the initialization
    // computed for it (a friction element's `stuck` would otherwise lock itself).
    for p in &dae.stage.events.previous {
        let Some(&v) = owner.get(&p.var).filter(|_| p.settled_at_start) else {
            continue;
        };
        let (i, w) = (v.0 as usize, p.var.0 as usize);
        if done[w] || section_outputs[i] || init.kinds[w] != VarKind::Discrete {
            continue;
        }
        if init.flat.var(v).attributes.fixed != Some(true) || init.flat.var(v).name.starts_with('$') {
            continue;
        }
        done[w] = true;
        pre_unknown(init, v, p.var, &mut free_pre);
    }
    if !held_outputs.is_empty() {
        hold_outputs_at_pre(init, first_initial, &held_outputs);
    }
    free_pre
}

/// Makes `pre` value `w` of `v` an unknown of the initial system (of `v`'s type: the value
/// before an event of a Boolean or Integer is one too). With `fixed = true` the equation
/// `pre(v) = v.start` determines it; without, Modelica's default offers the same equation
/// where nothing else determines it (`w` joins `free_pre`).
fn pre_unknown(init: &mut Dae<Hybrid>, v: VarId, w: VarId, free_pre: &mut Vec<VarId>) {
    init.kinds[w.0 as usize] = VarKind::Algebraic;
    init.flat.variables[w.0 as usize].ty = init.flat.var(v).ty;
    if init.flat.var(v).attributes.fixed == Some(true) {
        let mut equation = start_equation(init, v, Origin::FixedStart { var: v });
        equation.lhs = init.flat.exprs.var(w);
        init.equations.push(equation);
    } else {
        free_pre.push(w);
    }
}

/// The variables when-equations assign that no initial equation names, without `fixed =
/// true` (the user's, not the compiler's, and no outputs of algorithm sections).
fn freed_held(
    init: &Dae<Hybrid>,
    mentioned: &[VarId],
    owner: &FxHashMap<VarId, VarId>,
    section_outputs: &[bool],
) -> Vec<VarId> {
    let mut named = vec![false; init.kinds.len()];
    for v in mentioned {
        named[v.0 as usize] = true;
    }
    (0..init.kinds.len())
        .map(|i| VarId(i as u32))
        .filter(|&v| {
            let (i, var) = (v.0 as usize, init.flat.var(v));
            init.kinds[i] == VarKind::Discrete
                && !named[i]
                && !section_outputs[i]
                && !owner.contains_key(&v)
                && init.eliminated[i].is_none()
                && var.attributes.fixed != Some(true)
                && !var.name.starts_with('$')
        })
        .collect()
}

/// Whether `v`, an unknown that an ordinary equation defines, is a discrete-time variable (a
/// Boolean, Integer or enumeration, or declared `discrete`).
fn is_discrete_time(init: &Dae<Hybrid>, v: VarId) -> bool {
    let var = init.flat.var(v);
    init.kinds[v.0 as usize] == VarKind::Algebraic
        && (matches!(var.ty, ScalarType::Integer | ScalarType::Boolean)
            || var.variability == eqm_ir::flat::Variability::Discrete)
}

/// The variables the initial equations and initial algorithms name (assign or read), each
/// once, in order of appearance.
fn initially_mentioned(init: &Dae<Hybrid>) -> Vec<VarId> {
    let mut mentioned = Vec::new();
    let exprs = &init.flat.exprs;
    for eq in &init.initial_equations {
        exprs.vars_in(eq.lhs, &mut mentioned);
        exprs.vars_in(eq.rhs, &mut mentioned);
    }
    for a in init.flat.algorithms.iter().filter(|a| a.initial) {
        mentioned.extend(&a.outputs);
        for st in &a.statements {
            st.for_each_expr(&mut |e, _| exprs.vars_in(e, &mut mentioned));
        }
    }
    let mut seen = vec![false; init.kinds.len()];
    mentioned.retain(|v| !std::mem::replace(&mut seen[v.0 as usize], true));
    mentioned
}

/// Replaces each algorithm output of `held` (one the sections leave at its `pre` value during
/// the initialization) by that `pre` value in the initial equations (those from `first_initial`
/// on) and in the initial algorithms, where it is also assigned to instead.
fn hold_outputs_at_pre(init: &mut Dae<Hybrid>, first_initial: usize, held: &FxHashMap<VarId, VarId>) {
    let nodes: FxHashMap<ExprId, ExprId> = held
        .iter()
        .map(|(&v, &p)| (init.flat.exprs.var(v), init.flat.exprs.var(p)))
        .collect();
    let exprs = &mut init.flat.exprs;
    for eq in &mut init.equations[first_initial..] {
        for side in [&mut eq.lhs, &mut eq.rhs] {
            *side = eqm_ir::symbolic::substitute(exprs, *side, &|_, id| nodes.get(&id).copied());
        }
    }
    let rename = |v: &mut VarId| {
        if let Some(&p) = held.get(v) {
            *v = p;
        }
    };
    for a in init.flat.algorithms.iter_mut().filter(|a| a.initial) {
        let statements: Vec<_> = a
            .statements
            .iter()
            .map(|s| s.map_exprs(&mut |e| eqm_ir::symbolic::substitute(exprs, e, &|_, id| nodes.get(&id).copied())))
            .collect();
        a.statements = statements;
        retarget(&mut a.statements, held);
        a.outputs.iter_mut().for_each(rename);
        a.when_assigned.iter_mut().for_each(rename);
        a.assigned_outside_when.iter_mut().for_each(rename);
    }
}

/// Makes the assignments to a variable of `renamed` in `statements` assignments to its
/// replacement; a walk with its own stack.
fn retarget(statements: &mut [eqm_ir::flat::Statement], renamed: &FxHashMap<VarId, VarId>) {
    use eqm_ir::flat::{Place, Statement};
    let mut stack: Vec<&mut Statement> = statements.iter_mut().collect();
    while let Some(statement) = stack.pop() {
        match statement {
            Statement::Assign {
                target: Place::Var(v), ..
            } => {
                if let Some(&p) = renamed.get(v) {
                    *v = p;
                }
            }
            Statement::If {
                branches, else_branch, ..
            } => {
                for (_, body) in branches.iter_mut() {
                    stack.extend(body.iter_mut());
                }
                stack.extend(else_branch.iter_mut());
            }
            Statement::Unrolled { iterations, .. } => stack.extend(iterations.iter_mut().flatten()),
            Statement::For { body, .. } | Statement::While { body, .. } => stack.extend(body.iter_mut()),
            _ => {}
        }
    }
}

/// The `pre` value `p` of the discrete output `v` of an algorithm section made an unknown of
/// the initial system, with the equation of `v`'s fixed start value on it if it has one (which,
/// with an initial equation, over-determines it, as for a when-equation's variable). When no
/// section assigns `v` outside its when-statements, `v` in an initial equation or initial
/// algorithm is replaced by `p` (recorded in `held`): the section leaves `v` at `p` during the
/// initialization.
fn algorithm_output_pre_unknown(init: &mut Dae<Hybrid>, v: VarId, p: VarId, held: &mut FxHashMap<VarId, VarId>) {
    init.kinds[p.0 as usize] = VarKind::Algebraic;
    let only_in_when = init
        .flat
        .algorithms
        .iter()
        .filter(|a| !a.initial)
        .all(|a| !a.assigned_outside_when.contains(&v));
    if only_in_when {
        held.insert(v, p);
    }
    if init.flat.var(v).attributes.fixed == Some(true) {
        let mut equation = start_equation(init, v, Origin::FixedStart { var: v });
        equation.lhs = init.flat.exprs.var(p);
        init.equations.push(equation);
    }
}

/// The equations of `unmatched` (given equations the matching left without an unknown) that
/// repeat a discrete value the others determine: initial equations or fixed start values (not
/// the model's own equations) whose every unknown is a Boolean or Integer, such as `pre(u) =
/// false` written by two blocks reading one signal `u`. Modelica lets a tool drop an initial
/// equation that is consistent with the others; whether it is can only be known from the
/// values, so it is checked after the initialization (an assertion of the initial system).
pub(super) fn repeated_discrete(
    init: &Dae<Hybrid>,
    graph: &eqm_structural::incidence::Incidence,
    unknowns: &[Unknown],
    n_model: usize,
    unmatched: &[usize],
) -> Vec<usize> {
    unmatched
        .iter()
        .copied()
        .filter(|&e| e >= n_model && e < init.equations.len())
        .filter(|&e| {
            let vars = graph.eq_vars(EqIdx(e as u32));
            !vars.is_empty()
                && vars.iter().all(|u| match unknowns[u.index()] {
                    Unknown::Var(v) => matches!(init.flat.var(v).ty, ScalarType::Integer | ScalarType::Boolean),
                    Unknown::Der(_) => false,
                })
        })
        .collect()
}

/// Turns the repeated initial equation `e` into an assertion of the initial system (its two
/// sides equal after the initialization) and returns the warning (W0504) that says so.
pub(super) fn repeated_equation_check(init: &mut Dae<Hybrid>, e: usize) -> Diagnostic {
    let equation = init.equations[e].clone();
    let text = PreNames::new(init).apply(&init.equation_text(&equation));
    let condition = init
        .flat
        .exprs
        .binary(eqm_ir::expr::BinOp::Eq, equation.lhs, equation.rhs);
    let instance = match &equation.origin {
        Origin::Initial {
            origin: eqm_ir::flat::Origin::Equation { instance },
            ..
        } => *instance,
        _ => eqm_ir::flat::InstanceId(0),
    };
    let message = format!(
        "the initial equation `{text}` repeats a value the other initial equations determine, but does not hold"
    );
    push_initial_check(init, condition, message, instance, equation.span);
    Diagnostic::warning(
        "W0504",
        format!(
            "the initial equation `{text}` determines nothing the others leave open: it is checked after the initialization instead"
        ),
        equation.span,
        "repeats a value determined by another equation",
    )
}

/// Adds to the initial system an assertion of level error, checked once after the
/// initialization, that `condition` holds, with `message` when it does not: how a value the
/// initial system does not solve for (a repeated equation, a dropped start value) is still
/// checked rather than ignored.
pub(super) fn push_initial_check(
    init: &mut Dae<Hybrid>,
    condition: ExprId,
    message: String,
    instance: eqm_ir::flat::InstanceId,
    span: eqm_diag::source::Span,
) {
    init.flat.assertions.push(eqm_ir::flat::Assertion {
        condition,
        message: eqm_ir::flat::Message::literal(message),
        level: eqm_ir::flat::AssertionLevel::Error,
        initial: true,
        instance,
        span,
    });
}
