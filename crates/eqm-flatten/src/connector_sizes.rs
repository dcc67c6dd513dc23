//! The balancing restriction of connectors (Modelica 9.3.1): a connector class that is neither
//! partial, simple nor expandable has as many flow variables as potential variables.
//!
//! Input: the instantiated connectors of the model. Output: E0341 once per connector class whose
//! instance has a different number of flow and potential scalars, with both counts. Potential
//! variables are those that are neither parameter, constant, input, output, stream nor flow; a
//! simple connector (time-varying variables and none of those prefixes) is exempt, like one
//! that is `partial` or `expandable`. Each instance is counted, so a connector whose array sizes
//! come from parameters is checked with their values. It deliberately skips a connector holding
//! an overdetermined type or record, whose degrees of freedom are the size of its
//! `equalityConstraint` residue rather than its scalars (the connection graph checks those
//! connects).

use crate::flattener::Flattener;
use crate::layout::Member;
use eqm_diag::Diagnostic;
use eqm_ir::expr::FxHashMap;
use eqm_ir::flat::{Causality, ConnectorRole, InstanceId};
use eqm_syntax::ast;

/// The scalars of a connector by kind.
#[derive(Default)]
struct Counts {
    flows: usize,
    potentials: usize,
    /// Whether it has input, output, stream or flow variables (a simple connector has none).
    prefixed: bool,
    /// Whether it holds an overdetermined type or record.
    overdetermined: bool,
}

impl Flattener<'_, '_> {
    /// Reports each connector class whose instance has not as many flow variables as
    /// potential variables. Linear in the connectors' scalars times the nesting of connectors.
    pub(crate) fn check_connector_sizes(&mut self) {
        // Each class is counted at its first instance: the restriction is one of the class.
        let mut checked: FxHashMap<crate::resolve::ClassId, ()> = FxHashMap::default();
        for i in 0..self.instances.len() {
            let state = &self.instances[i];
            let class = state.class;
            if !state.is_connector || checked.contains_key(&class) {
                continue;
            }
            // A connector inside a connector is counted with the outer one: its variables'
            // roles may come from the declaration there (`flow C c` makes C's outputs flows).
            let nested = self.model.instances[i]
                .parent
                .is_some_and(|p| self.model.instances[p.0 as usize].is_connector);
            let def = self.table.get(class).def;
            if nested || def.partial || def.kind == ast::ClassKind::ExpandableConnector {
                continue;
            }
            checked.insert(class, ());
            let mut counts = Counts::default();
            self.count_connector(InstanceId(i as u32), &mut counts);
            if counts.overdetermined || !counts.prefixed || counts.flows == counts.potentials {
                continue;
            }
            let instance = &self.model.instances[i];
            self.diagnostics.push(
                Diagnostic::error(
                    "E0341",
                    format!(
                        "connector `{}` has {} flow variable(s) and {} potential variable(s)",
                        instance.class_name, counts.flows, counts.potentials
                    ),
                    instance.span,
                    "an unbalanced connector",
                )
                .with_note("potential variables are those neither parameter, constant, input, output, stream nor flow")
                .with_help("a connector has as many flow variables as potential variables (Modelica 9.3.1)"),
            );
        }
    }

    /// Adds the scalars of connector (or record) `instance` and of its components to `counts`.
    fn count_connector(&mut self, instance: InstanceId, counts: &mut Counts) {
        let may_hold_nodes = self.may_hold_nodes();
        let n = self.instances[instance.0 as usize].layout.elements.len();
        for k in 0..n {
            let member = self.ensure_member_at(instance, k);
            if may_hold_nodes && self.element_constraint(instance, k, &member).is_some() {
                counts.overdetermined = true;
                return;
            }
            match member {
                Member::Var(v) => self.count_variable(v, counts),
                Member::VarArray(array) => {
                    for &v in array.elements.iter() {
                        self.count_variable(v, counts);
                    }
                }
                Member::Inst(c) => self.count_connector(c, counts),
                Member::InstArray(array) => {
                    for &c in array.elements.iter() {
                        self.count_connector(c, counts);
                    }
                }
                _ => {}
            }
        }
    }

    fn count_variable(&self, v: eqm_ir::expr::VarId, counts: &mut Counts) {
        let kind = self.var_kinds[v.0 as usize];
        if !kind.is_time_varying() {
            return;
        }
        match (kind.role, kind.causality) {
            (ConnectorRole::Flow, _) => {
                counts.flows += 1;
                counts.prefixed = true;
            }
            (ConnectorRole::Stream, _) | (_, Causality::Input | Causality::Output) => counts.prefixed = true,
            _ => counts.potentials += 1,
        }
    }
}
