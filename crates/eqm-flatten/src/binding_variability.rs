//! The variability of bindings (MLS 3.8): a constant's binding is a constant expression, and a
//! parameter's a parameter expression.
//!
//! Input: the flat model, once every binding is made. Output: E0223 at the declaration of each
//! constant whose binding reads a parameter or a variable, and of each parameter whose binding
//! reads `time` or a variable that changes during the run, naming what it reads. A parameter
//! with `fixed = false` is left out: its binding is an equation of the initialization, which may
//! read the start of the run. A field bound through a whole record's value (`cellData[i] = if c
//! then a else b`, whose constant `CellType` follows the choice) is left out too: its binding has
//! the record's variability. It deliberately judges only what the binding reads, not the
//! functions it calls (an impure function, such as a seed's, may bind a parameter).

use crate::flattener::Flattener;
use eqm_diag::Diagnostic;
use eqm_ir::expr::{Node, VarId};
use eqm_ir::flat::Variability;

/// The order of variabilities: a binding may read what is at most its variable's.
fn rank(variability: Variability) -> u8 {
    match variability {
        Variability::Constant => 0,
        Variability::Parameter => 1,
        Variability::Discrete => 2,
        Variability::Continuous => 3,
    }
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// Reports the bindings of constants and parameters that read more variable things (see
    /// the module documentation).
    pub(crate) fn check_binding_variability(&mut self) {
        let mut found = Vec::new();
        for (k, variable) in self.model.variables.iter().enumerate() {
            let own = rank(variable.variability);
            let Some(binding) = variable.binding else { continue };
            if own > 1
                || variable.attributes.fixed == Some(false)
                || self.record_field_bindings.contains(&VarId(k as u32))
            {
                continue;
            }
            let nodes = eqm_ir::symbolic::reachable(&self.model.exprs, binding, &|_| false);
            let offending = nodes.iter().find_map(|&e| match self.model.exprs.get(e) {
                Node::Time if own <= 1 => Some("`time`".to_string()),
                Node::Var(w) if rank(self.model.variables[w.0 as usize].variability) > own => {
                    let read = &self.model.variables[w.0 as usize];
                    Some(format!("`{}`, a {}", read.name, variability_word(read.variability)))
                }
                _ => None,
            });
            if let Some(what) = offending {
                found.push((k, what));
            }
        }
        for (k, what) in found {
            let variable = &self.model.variables[k];
            let word = variability_word(variable.variability);
            let expected = if variable.variability == Variability::Constant {
                "a constant expression"
            } else {
                "a parameter expression"
            };
            self.diagnostics.push(
                Diagnostic::error(
                    "E0223",
                    format!("the binding of the {word} `{}` reads {what}", variable.name),
                    variable.span,
                    format!("must be {expected}"),
                )
                .with_help(format!(
                    "bind a {word} to {expected}, or declare `{}` with the variability of what it reads",
                    variable.name
                )),
            );
        }
    }
}

/// How a variability is named in a message.
fn variability_word(variability: Variability) -> &'static str {
    match variability {
        Variability::Constant => "constant",
        Variability::Parameter => "parameter",
        Variability::Discrete => "discrete-time variable",
        Variability::Continuous => "continuous-time variable",
    }
}
