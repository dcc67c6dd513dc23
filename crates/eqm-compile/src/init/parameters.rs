//! The parameters the initialization solves for: those with `fixed = false` and those computed
//! from them.
//!
//! Input: a DAE of the model (for the set) or of its initial system (to make them unknowns).
//! Output: the set, in variable order; or the initial system with those parameters unknowns,
//! each bound one determined by its binding. It does not solve anything.

use crate::dae::{Dae, Equation, Origin, VarKind};
use crate::events::Hybrid;
use eqm_ir::expr::VarId;

/// The parameters the initialization solves for: those with `fixed = false`, and those whose
/// bindings read one, directly or through other parameters (`parameter Real b = 2/a`), in
/// variable order. Computed before the initialization, from a start value, such a parameter
/// would have a value it never has.
pub(crate) fn initialization_parameters(dae: &Dae<Hybrid>) -> Vec<VarId> {
    let n = dae.kinds.len();
    let mut readers: Vec<Vec<VarId>> = vec![Vec::new(); n];
    let mut free: Vec<VarId> = Vec::new();
    let mut vars = Vec::new();
    for i in 0..n {
        let v = VarId(i as u32);
        if dae.kinds[i] != VarKind::Parameter {
            continue;
        }
        let variable = dae.flat.var(v);
        if variable.attributes.fixed == Some(false) {
            free.push(v);
        }
        if let Some(binding) = variable.binding {
            vars.clear();
            dae.flat.exprs.vars_in(binding, &mut vars);
            for w in &vars {
                readers[w.0 as usize].push(v);
            }
        }
    }
    let mut is_free = vec![false; n];
    for v in &free {
        is_free[v.0 as usize] = true;
    }
    let mut stack = free.clone();
    while let Some(v) = stack.pop() {
        for &r in &readers[v.0 as usize] {
            if !is_free[r.0 as usize] {
                is_free[r.0 as usize] = true;
                free.push(r);
                stack.push(r);
            }
        }
    }
    free.sort();
    free
}

/// Parameters with `fixed = false` are unknowns of the initialization (their start values are
/// the first guesses; the simulation takes the values found as the parameters'): one without a
/// binding is determined by the initial equations, one with a binding by the equation
/// `p = binding`. So is every parameter whose binding reads one of them (`q = 2*p`), by its
/// binding: it cannot be computed before the initialization. Found from the free parameters
/// through the bindings that read them, each binding looked at once. Returns whether there is
/// any.
pub(super) fn free_parameters(init: &mut Dae<Hybrid>) -> bool {
    let free = initialization_parameters(init);
    let any = !free.is_empty();
    for v in free {
        init.kinds[v.0 as usize] = VarKind::Algebraic;
        let variable = init.flat.var(v);
        if let Some(binding) = variable.binding {
            let (span, lhs) = (variable.span, init.flat.exprs.var(v));
            init.equations.push(Equation {
                lhs,
                rhs: binding,
                origin: Origin::Binding { var: v },
                span,
            });
        }
    }
    any
}
