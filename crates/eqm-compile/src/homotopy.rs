//! `homotopy(actual, simplified)`: what it means in the simulation and in
//! the initialization.
//!
//! Input: a [`Dae`] in the hybrid stage. Output: the same DAE with every `homotopy` call of its
//! equations, initial equations, assertions and algorithms replaced by its actual expression
//! (what the simulation runs, at no cost), and, when the equations contain one, a copy in which
//! each call is the blend `λ*actual + (1 - λ)*simplified` of a new variable `$homotopy` standing
//! for λ. The initialization's system is built from that copy; the simulation core follows λ
//! from 0 (the simplified problem) to 1 (the actual one), which is exactly the actual problem
//! again (`1*actual + 0*simplified`). This module solves nothing and decides no step size.

use crate::dae::Dae;
use crate::events::Hybrid;
use eqm_diag::source::Span;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, Callee, ExprId, FxHashMap, Node, VarId};

/// The name of the variable standing for the homotopy parameter λ in the initialization's
/// system. The simulation core finds it by this name and sets it.
pub const LAMBDA: &str = "$homotopy";

/// The DAE the initialization is built from when `dae`'s equations contain `homotopy` (its
/// calls blended with the variable [`LAMBDA`]); `dae` itself is rewritten to the actual
/// expressions either way.
pub fn split(dae: &mut Dae<Hybrid>) -> Option<Dae<Hybrid>> {
    let blended = first_call_in_equations(dae).map(|span| {
        let mut blended = dae.clone();
        let lambda = blended.add_relation_variable(
            LAMBDA.to_string(),
            "the homotopy parameter λ: 0 for the simplified problem, 1 for the actual one".to_string(),
            span,
        );
        if let Some(variable) = blended.flat.variables.last_mut() {
            variable.ty = eqm_ir::flat::ScalarType::Real;
        }
        let blend = replacements(&mut blended, Some(lambda));
        blended.substitute_in_equations(&blend);
        blended.substitute_in_algorithms(&blend);
        blended
    });
    to_actual(dae);
    blended
}

/// Rewrites every `homotopy` call of `dae`'s equations, initial equations, assertions and
/// algorithms to its actual expression.
pub fn to_actual(dae: &mut Dae<Hybrid>) {
    let actual = replacements(dae, None);
    dae.substitute_in_equations(&actual);
    dae.substitute_in_algorithms(&actual);
}

/// The span of the first equation or initial equation with a `homotopy` call, found without
/// visiting a shared subexpression twice; `None` when they have none.
fn first_call_in_equations(dae: &Dae<Hybrid>) -> Option<Span> {
    let exprs = &dae.flat.exprs;
    let mut seen = vec![false; exprs.len()];
    let mut stack: Vec<ExprId> = Vec::new();
    for eq in dae.equations.iter().chain(&dae.initial_equations) {
        stack.push(eq.lhs);
        stack.push(eq.rhs);
        while let Some(e) = stack.pop() {
            let Some(visited) = seen.get_mut(e.0 as usize) else {
                continue;
            };
            if *visited {
                continue;
            }
            *visited = true;
            if matches!(exprs.get(e), Node::Call(Callee::Builtin(Builtin::Homotopy), _)) {
                return Some(eq.span);
            }
            stack.extend(exprs.children(e));
        }
    }
    None
}

/// For every `homotopy` call of the arena, what it becomes: its actual expression (`lambda`
/// `None`) or the blend with λ. The arena holds children before parents, so the calls nested in
/// an argument are replaced before the call that contains them.
fn replacements(dae: &mut Dae<Hybrid>, lambda: Option<VarId>) -> FxHashMap<ExprId, ExprId> {
    let exprs = &mut dae.flat.exprs;
    let mut map: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    let lambda = lambda.map(|v| exprs.var(v));
    for k in 0..exprs.len() {
        let e = ExprId(k as u32);
        let Node::Call(Callee::Builtin(Builtin::Homotopy), args) = exprs.get(e) else {
            continue;
        };
        let [actual, simplified] = args[..] else {
            continue;
        };
        let actual = eqm_ir::symbolic::substitute(exprs, actual, &|_, id| map.get(&id).copied());
        let replacement = match lambda {
            None => actual,
            Some(lambda) => {
                let simplified = eqm_ir::symbolic::substitute(exprs, simplified, &|_, id| map.get(&id).copied());
                let one = exprs.real(1.0);
                let rest = exprs.binary(BinOp::Sub, one, lambda);
                let actual_part = exprs.binary(BinOp::Mul, lambda, actual);
                let simplified_part = exprs.binary(BinOp::Mul, rest, simplified);
                exprs.binary(BinOp::Add, actual_part, simplified_part)
            }
        };
        map.insert(e, replacement);
    }
    map
}
