//! Start values given by expressions of other variables (`Real x(start = 2*y0)` with `y0` a
//! variable): Modelica evaluates them at the start of initialization from the start values of
//! the variables they read. This pass rewrites each such start expression into an expression of
//! parameters only, by replacing every variable it reads with that variable's own start
//! expression (0 when it has none, Modelica's default), in dependency order.
//!
//! Input: a lowered DAE (its variable kinds are known). Output: the same DAE with rewritten
//! start attributes and the variables whose start values were read ([`Dae::start_readers`]), or
//! an `E0601` diagnostic naming the variables whose start values depend on each other in a
//! cycle (the flattener finds the cycles of declarations written in the source first, `E0216`;
//! this one is the guard of whatever reaches this pass). Because the result reads parameters only, every later pass (the
//! fixed start values of the initialization problem, the first guesses of iterations, the `pre`
//! values at initialization) uses it as it uses any other start value, and a parameter changed
//! between runs changes it without compiling again. Variables read inside an operator such as
//! `pre` or `der`, and `time`, are left as they are: the executable program rejects them with
//! `E0603`.
//!
//! A fixed start value (`fixed = true`) of a continuous-time Real variable is, by Modelica's
//! rule, the initial equation `x = start expression` with the variables it reads at their
//! initial values. Where each variable read holds its own start value at the start (a fixed
//! start value itself, or a discrete variable) both readings agree and the rewritten start
//! value is used; where one does not (a variable an equation defines, `Real y0 = 1 + time`),
//! this pass adds that initial equation, marks the start value as free, and keeps the
//! rewritten expression as the first guess only.

use crate::dae::{Dae, VarKind};
use eqm_diag::Diagnostic;
use eqm_ir::builtins::Builtin;
use eqm_ir::builtins::BuiltinKind;
use eqm_ir::expr::{Callee, ExprArena, ExprId, FxHashMap, Node};
use eqm_ir::flat::ScalarType;
use eqm_ir::ids::VarId;

/// Whether `v` has a value before the simulation starts without a start value of its own.
fn is_parameter_kind(kinds: &[VarKind], v: VarId) -> bool {
    matches!(kinds.get(v.0 as usize), Some(VarKind::Parameter | VarKind::Constant))
}

/// An operator call whose arguments do not stand for their values at the start (`pre`, `der`,
/// `edge`...): the variables inside it are not read as start values.
fn is_opaque(arena: &ExprArena, e: ExprId) -> bool {
    matches!(arena.get(e), Node::Call(Callee::Builtin(b), _)
        if b.info().kind == BuiltinKind::Operator && !matches!(b, Builtin::NoEvent | Builtin::Smooth))
}

/// The variables (not parameters or constants) whose start values `e` reads, each once.
fn start_reads(arena: &ExprArena, kinds: &[VarKind], e: ExprId) -> Vec<VarId> {
    let mut out = Vec::new();
    let mut seen = eqm_ir::symbolic::FxHashSet::default();
    let mut stack = vec![e];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) || is_opaque(arena, id) {
            continue;
        }
        match arena.get(id) {
            Node::Var(v) if !is_parameter_kind(kinds, *v) => {
                if !out.contains(v) {
                    out.push(*v);
                }
            }
            _ => stack.extend(arena.children(id)),
        }
    }
    out
}

/// Rewrites the start value of every variable that reads other variables' start values into an
/// expression of parameters (see the module documentation); a cycle is an error naming its
/// members.
pub fn resolve<S>(dae: &mut Dae<S>) -> Result<(), Vec<Diagnostic>> {
    // The dependent start values: variables (not parameters, constants or Strings) whose start
    // expression reads another variable.
    let mut dependent: Vec<(VarId, Vec<VarId>)> = Vec::new();
    for (i, var) in dae.flat.variables.iter().enumerate() {
        let v = VarId(i as u32);
        if var.ty == ScalarType::String || is_parameter_kind(&dae.kinds, v) {
            continue;
        }
        if let Some(e) = var.attributes.start {
            let reads = start_reads(&dae.flat.exprs, &dae.kinds, e);
            if !reads.is_empty() {
                dependent.push((v, reads));
            }
        }
    }
    if dependent.is_empty() {
        return Ok(());
    }
    // Dependency order over the dependent start values, ties in variable order.
    let index_of: FxHashMap<VarId, usize> = dependent.iter().enumerate().map(|(k, (v, _))| (*v, k)).collect();
    let before: Vec<Vec<usize>> = dependent
        .iter()
        .map(|(_, reads)| reads.iter().filter_map(|u| index_of.get(u).copied()).collect())
        .collect();
    let mut readers: Vec<(VarId, VarId)> = Vec::new();
    for (v, reads) in &dependent {
        readers.extend(reads.iter().map(|u| (*u, *v)));
    }
    readers.sort_unstable();
    readers.dedup_by_key(|r| r.0);
    dae.start_readers = readers;
    let (order, left) = eqm_structural::order::dependency_order(&before);
    for k in order {
        let (v, reads) = &dependent[k];
        if reads.iter().any(|u| !holds_its_start_value(dae, *u)) {
            fixed_start_as_initial_equation(dae, *v);
        }
        rewrite(dae, dependent[k].0);
    }
    let cyclic: Vec<VarId> = left.into_iter().map(|k| dependent[k].0).collect();
    match cyclic.first() {
        None => Ok(()),
        Some(&first) => Err(vec![cycle(dae, first, &cyclic)]),
    }
}

/// Whether the initial value of `u` is its start value whatever the equations say: a
/// continuous-time Real variable with a fixed start value, or a discrete variable (whose value
/// before the first event is its start value). Any other variable read by a fixed start value
/// makes that start value an initial equation, since its value at the start is the
/// initialization's to find.
fn holds_its_start_value<S>(dae: &Dae<S>, u: VarId) -> bool {
    let var = dae.flat.var(u);
    match dae.kind(u) {
        VarKind::Discrete => true,
        VarKind::State | VarKind::Algebraic => var.ty == ScalarType::Real && var.attributes.fixed == Some(true),
        VarKind::Parameter | VarKind::Constant => true,
    }
}

/// Turns the fixed start value of the continuous-time Real variable `v` into the initial
/// equation `v = start expression` (its variables at their initial values), and frees the start
/// value, which stays the first guess. Expressions with an operator such as `pre` keep the
/// general treatment, which rejects them.
fn fixed_start_as_initial_equation<S>(dae: &mut Dae<S>, v: VarId) {
    let var = dae.flat.var(v);
    let continuous = matches!(dae.kind(v), VarKind::State | VarKind::Algebraic) && var.ty == ScalarType::Real;
    let (Some(start), Some(true)) = (var.attributes.start, var.attributes.fixed) else {
        return;
    };
    if !continuous || has_opaque(&dae.flat.exprs, start) {
        return;
    }
    let span = var.span;
    let lhs = dae.flat.exprs.var(v);
    dae.initial_equations.push(crate::dae::Equation {
        lhs,
        rhs: start,
        origin: crate::dae::Origin::FixedStart { var: v },
        span,
    });
    dae.flat.variables[v.0 as usize].attributes.fixed = Some(false);
}

/// Whether `e` contains an operator call whose arguments do not stand for their values.
fn has_opaque(arena: &ExprArena, e: ExprId) -> bool {
    let mut seen = eqm_ir::symbolic::FxHashSet::default();
    let mut stack = vec![e];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        if is_opaque(arena, id) {
            return true;
        }
        stack.extend(arena.children(id));
    }
    false
}

/// Replaces the variables `v`'s start expression reads with their start values, which are
/// expressions of parameters already (dependency order).
fn rewrite<S>(dae: &mut Dae<S>, v: VarId) {
    let Some(e) = dae.flat.var(v).attributes.start else {
        return;
    };
    let zero = dae.flat.exprs.real(0.0);
    let mut value_of: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    for u in start_reads(&dae.flat.exprs, &dae.kinds, e) {
        let node = dae.flat.exprs.var(u);
        value_of.insert(node, dae.flat.var(u).attributes.start.unwrap_or(zero));
    }
    let rewritten = eqm_ir::symbolic::substitute(&mut dae.flat.exprs, e, &|arena, id| {
        if is_opaque(arena, id) {
            // Kept as it is: its variables stay, and the executable program rejects them.
            Some(id)
        } else {
            value_of.get(&id).copied()
        }
    });
    let simplified = eqm_ir::symbolic::simplify(&mut dae.flat.exprs, rewritten);
    dae.flat.variables[v.0 as usize].attributes.start = Some(simplified);
}

/// The diagnostic of start values that depend on each other in a cycle.
fn cycle<S>(dae: &Dae<S>, first: VarId, cyclic: &[VarId]) -> Diagnostic {
    let names: Vec<String> = cyclic
        .iter()
        .take(8)
        .map(|v| format!("`{}`", dae.flat.var(*v).name))
        .collect();
    let var = dae.flat.var(first);
    let start_text = |v: VarId| {
        let var = dae.flat.var(v);
        var.attributes
            .start
            .map_or_else(String::new, |e| format!(" (start = {})", dae.flat.expr_text(e)))
    };
    let mut d = Diagnostic::error(
        "E0601",
        format!(
            "the start values of these variables depend on each other in a cycle: {}{}",
            names.join(", "),
            if cyclic.len() > 8 { " and more" } else { "" }
        ),
        var.span,
        format!("`{}` is part of the cycle{}", var.name, start_text(first)),
    );
    for v in cyclic.iter().skip(1).take(7) {
        let var = dae.flat.var(*v);
        d = d.with_label(
            var.span,
            format!("`{}` is part of the cycle{}", var.name, start_text(*v)),
        );
    }
    d.with_help("give one of them a start value that does not depend on the others")
}
