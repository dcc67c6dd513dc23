//! The balance check: as many equations as unknowns, and which components are off.
//!
//! Input: the flat model once it is complete. Output: `E04xx` diagnostics when the numbers of
//! equations and unknowns differ. Following Modelica's balanced-model idea, each component is
//! checked locally: its own equations (and bindings) must equal its unknowns minus the flow
//! variables and inputs of its public connectors, which the enclosing model supplies through
//! connections. When the totals differ, the diagnostic names the components whose local counts
//! are off, not just two numbers. It deliberately changes nothing in the model and does no
//! structural analysis (which equation determines which unknown is for later stages).

use crate::flattener::Flattener;
use eqm_diag::Diagnostic;
use eqm_ir::flat::{Causality, ConnectorRole, InstanceId, Origin};

impl Flattener<'_, '_> {
    /// Reports the model's imbalance, naming the components whose local counts are off.
    pub(crate) fn check_balance(&mut self) {
        check(self);
    }
}

fn check(f: &mut Flattener<'_, '_>) {
    let model = &f.model;
    // Counted as `model.unknowns()` would, from the compact kinds: only inputs need the variable.
    let unknowns = f
        .var_kinds
        .iter()
        .enumerate()
        .filter(|(i, kind)| {
            kind.is_time_varying()
                && (kind.causality != Causality::Input || !model.is_top_level_input(&model.variables[*i]))
        })
        .count();
    let when_assigned = model.when_assigned();
    let equations = model.equations.len() + when_assigned.len() + model.algorithm_equation_count();
    if unknowns == equations {
        return;
    }
    // Local counts per non-connector instance.
    let n = model.instances.len();
    let mut local_eqs = vec![0i64; n];
    let mut local_unknowns = vec![0i64; n];
    let owner = |mut i: InstanceId| {
        // A variable of a connector belongs to the component that has the connector.
        while model.instances[i.0 as usize].is_connector {
            match model.instances[i.0 as usize].parent {
                Some(p) => i = p,
                None => break,
            }
        }
        i
    };
    for e in &model.equations {
        match &e.origin {
            Origin::Equation { instance } => local_eqs[owner(*instance).0 as usize] += 1,
            Origin::Binding { var } => local_eqs[owner(model.var(*var).instance).0 as usize] += 1,
            _ => local_eqs[0] += 1,
        }
    }
    // An algorithm section counts as one equation per variable it assigns.
    for a in model.algorithms.iter().filter(|a| !a.initial) {
        local_eqs[owner(a.instance).0 as usize] += a.outputs.len() as i64;
    }
    for v in &when_assigned {
        local_eqs[owner(model.variables[*v as usize].instance).0 as usize] += 1;
    }
    for (index, var) in model.variables.iter().enumerate() {
        if !var.variability.is_time_varying() || model.is_top_level_input(var) {
            continue;
        }
        let o = owner(var.instance);
        let in_own_connector = var.instance != o;
        // Flows and inputs of a component's connectors are determined by its surroundings.
        let supplied = in_own_connector && (var.role == ConnectorRole::Flow || var.causality == Causality::Input)
            || (o.0 != 0
                && var.instance == o
                && var.causality == Causality::Input
                && f.var_kinds[index].is_connector_type);
        if supplied && o.0 != 0 {
            continue;
        }
        local_unknowns[o.0 as usize] += 1;
    }
    // The model itself receives the connection equations; its expected count is what is left.
    let mut off: Vec<(InstanceId, i64, i64)> = Vec::new();
    for i in 1..n {
        if model.instances[i].is_connector {
            continue;
        }
        if local_eqs[i] != local_unknowns[i] {
            off.push((InstanceId(i as u32), local_eqs[i], local_unknowns[i]));
        }
    }
    let under = equations < unknowns;
    let message = format!(
        "the model is {}: {} equations for {} unknowns",
        if under { "under-determined" } else { "over-determined" },
        equations,
        unknowns
    );
    let root = &model.instances[0];
    let mut d = Diagnostic::error("E0401", message, root.span, format!("model `{}`", model.name));
    for (shown, (inst, eqs, unk)) in off.iter().enumerate() {
        if shown == 10 {
            d = d.with_note(format!("{} more components are unbalanced", off.len() - shown));
            break;
        }
        let i = &model.instances[inst.0 as usize];
        d = d.with_label(
            i.span,
            format!(
                "`{}` ({}) has {eqs} equation(s) for {unk} local unknown(s)",
                i.name, i.class_name
            ),
        );
    }
    if off.is_empty() {
        d = d.with_note(format!(
            "every component is balanced; the model's own equations and connections give {} equation(s) for {} unknown(s) declared in it",
            local_eqs[0], local_unknowns[0]
        ));
    }
    d = d.with_help(if under {
        "add the missing equations, or give variables bindings (`Real y = ...`)"
    } else {
        "remove redundant equations; a variable may be determined twice"
    });
    f.diagnostics.push(d);
}
