//! The when-clauses active during the initialization: Modelica's rule is that `initial()` is
//! true throughout the initialization, so a when-clause whose condition is `initial()`, or a
//! vector condition with `initial()` as an element (`when {time >= t, initial()}`), is active
//! there. If the clause's first branch does not have that form, the first `elsewhen` branch that
//! has it is the active one. Any other use of `initial()` in a condition (`initial() and c`,
//! `not initial()`) does not activate a clause at the initialization.
//!
//! Input: the model's DAE in the hybrid stage (its when-clauses with their flat conditions and
//! rewritten actions). Output: the equations `v = e` of each active branch (and `x = e` of each
//! `reinit(x, e)` there, an initial equation by Modelica's rule) added to the initial system,
//! with their targets made unknowns of it; and, for the simulation, the `initial()` element taken
//! out of those branches' conditions, since `initial()` is false at every later event and the
//! branch has already done its work. It deliberately does not handle when-statements of algorithm
//! sections, which keep firing at the event right after the initialization.

use crate::dae::{Dae, Equation, Origin, VarKind};
use crate::events::Hybrid;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, Callee, ExprArena, ExprId, Node};
use eqm_ir::flat::{WhenAction, WhenClause};

/// Whether `condition` (a flat when-condition, before event extraction) has the form Modelica
/// activates at the initialization: `initial()` itself, or the rising edge of the elements of a
/// vector condition with `initial()` among them (`edge(a) or edge(initial()) or ...`, as the
/// flattener writes `{a, initial(), ...}`).
fn is_initial_form(exprs: &ExprArena, condition: ExprId) -> bool {
    if is_initial_call(exprs, condition) {
        return true;
    }
    // The vector form is a left-leaning chain of `or`s of edges: walked iteratively.
    let mut node = condition;
    loop {
        match exprs.get(node) {
            Node::Binary(BinOp::Or, rest, last) => {
                if is_edge_of_initial(exprs, *last) {
                    return true;
                }
                node = *rest;
            }
            _ => return is_edge_of_initial(exprs, node),
        }
    }
}

fn is_initial_call(exprs: &ExprArena, e: ExprId) -> bool {
    matches!(exprs.get(e), Node::Call(Callee::Builtin(Builtin::Initial), args) if args.is_empty())
}

fn is_edge_of_initial(exprs: &ExprArena, e: ExprId) -> bool {
    matches!(exprs.get(e), Node::Call(Callee::Builtin(Builtin::Edge), args)
        if args.len() == 1 && is_initial_call(exprs, args[0]))
}

/// The branch of `clause` active during the initialization, if any: the first one whose
/// condition has the initial form.
fn active_branch(exprs: &ExprArena, clause: &WhenClause) -> Option<usize> {
    clause.branches.iter().position(|b| is_initial_form(exprs, b.condition))
}

/// Whether any when-clause of `dae` is active during the initialization.
pub(super) fn any_active(dae: &Dae<Hybrid>) -> bool {
    dae.flat.whens.iter().any(|w| active_branch(dae.exprs(), w).is_some())
}

/// Adds to `init` (the initialization's DAE, a copy of `dae` whose when-clauses are dropped) the
/// equations of the branches of `dae`'s when-clauses active during the initialization, and
/// makes their targets unknowns of it. Returns a mask over the variables: those targets.
pub(super) fn add_active_equations(dae: &Dae<Hybrid>, init: &mut Dae<Hybrid>) -> Vec<bool> {
    let mut assigned = vec![false; init.kinds.len()];
    for clause in &dae.flat.whens {
        let Some(b) = active_branch(dae.exprs(), clause) else {
            continue;
        };
        for action in &clause.branches[b].actions {
            let (var, value, span) = match *action {
                WhenAction::Assign { var, value, span } => {
                    assigned[var.0 as usize] = true;
                    if init.kinds[var.0 as usize] == VarKind::Discrete {
                        init.kinds[var.0 as usize] = VarKind::Algebraic;
                    }
                    (var, value, span)
                }
                // A `reinit` in an active branch is an initial equation on the state.
                WhenAction::Reinit { var, value, span } => (var, value, span),
                // Assertions, `terminate` and prints act at events of the simulation only.
                _ => continue,
            };
            let lhs = init.flat.exprs.var(var);
            init.equations.push(Equation {
                lhs,
                rhs: value,
                origin: Origin::ActiveAtStart { var },
                span,
            });
        }
    }
    assigned
}

/// Keeps the simulation from doing a second time what the branches active during the
/// initialization did there. The simulation holds `initial()` true for one event right after the
/// initialization (for its other uses): a branch on `initial()` alone keeps its assertions and
/// prints for that event but loses its assignments and `reinit`s; in a vector condition,
/// `initial()` becomes `false`, so the branch fires on its other elements only (its assertions
/// and prints are not run for the initialization).
pub fn drop_initial_from_active_branches(dae: &mut Dae<Hybrid>) {
    let Some(initial) = dae.stage.events.initial else {
        return;
    };
    let active: Vec<Option<usize>> = dae.flat.whens.iter().map(|w| active_branch(dae.exprs(), w)).collect();
    let initial_expr = dae.flat.exprs.var(initial);
    let never = dae.flat.exprs.boolean(false);
    for (k, branch) in active.into_iter().enumerate() {
        let Some(b) = branch else { continue };
        if is_initial_call(dae.exprs(), dae.flat.whens[k].branches[b].condition) {
            dae.flat.whens[k].branches[b]
                .actions
                .retain(|a| !matches!(a, WhenAction::Assign { .. } | WhenAction::Reinit { .. }));
            continue;
        }
        let Some(condition) = dae.stage.events.when_conditions.get(k).and_then(|c| c.get(b)).copied() else {
            continue;
        };
        let replaced = eqm_ir::symbolic::substitute(&mut dae.flat.exprs, condition, &|_, id| {
            (id == initial_expr).then_some(never)
        });
        dae.stage.events.when_conditions[k][b] = replaced;
    }
}
