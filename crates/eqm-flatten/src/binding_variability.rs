//! The variability of bindings (MLS 3.8): a constant's binding is a constant expression, and a
//! parameter's a parameter expression; and of the delay times of `delay` (MLS 3.7.4.1): the
//! largest delay `delayMax` is a parameter expression, and so is the delay time without one.
//!
//! Input: the flat model, once every binding is made. Output: E0223 at the declaration of each
//! constant whose binding reads a parameter or a variable, and of each parameter whose binding
//! reads `time` or a variable that changes during the run, naming what it reads; E0608 at each
//! equation with a `delay` whose delay time or largest delay is not a parameter expression. A parameter
//! with `fixed = false` is left out: its binding is an equation of the initialization, which may
//! read the start of the run. A field bound through a whole record's value (`cellData[i] = if c
//! then a else b`, whose constant `CellType` follows the choice) is left out too: its binding has
//! the record's variability. It deliberately judges only what the binding reads, not the
//! functions it calls (an impure function, such as a seed's, may bind a parameter). The delay
//! times are judged here, before variables bound to constants are replaced by their values, so
//! that `Real a = 1.0; ... delay(x, a)` is refused as Modelica says.

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

impl<'t, 'a> Flattener<'t, 'a> {
    /// E0608 for each `delay(e, delayTime, delayMax)` in an equation whose `delayMax`, or whose
    /// `delayTime` when there is no `delayMax`, reads `time` or a variable.
    pub(crate) fn check_delay_variability(&mut self) {
        let mut found = Vec::new();
        for equation in self.model.equations.iter().chain(&self.model.initial_equations) {
            for root in [equation.lhs, equation.rhs] {
                for e in eqm_ir::symbolic::reachable(&self.model.exprs, root, &|_| false) {
                    if let Node::Call(eqm_ir::expr::Callee::Builtin(eqm_ir::builtins::Builtin::Delay), args) =
                        self.model.exprs.get(e)
                    {
                        let (bound, what) = match args.get(2) {
                            Some(&max) => (max, "the largest delay `delayMax`"),
                            None => (args[1], "the delay time (without a `delayMax`)"),
                        };
                        if let Some(read) = self.reads_beyond_parameters(bound) {
                            found.push((equation.span, what, read));
                        }
                    }
                }
            }
        }
        for (span, what, read) in found {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0608",
                    format!("{what} of `delay` must be a parameter expression, and reads {read}"),
                    span,
                    "must be a parameter expression",
                )
                .with_help("write `delay(expression, delayTime, delayMax)` with `delayMax` a parameter expression, and the delay time may then change during the run"),
            );
        }
    }

    /// What `e` reads that changes during the run (`time` or a variable), if anything.
    pub(crate) fn reads_beyond_parameters(&self, e: eqm_ir::expr::ExprId) -> Option<String> {
        let nodes = eqm_ir::symbolic::reachable(&self.model.exprs, e, &|_| false);
        nodes.iter().find_map(|&n| match self.model.exprs.get(n) {
            Node::Time => Some("`time`".to_string()),
            Node::Var(w) if rank(self.model.variables[w.0 as usize].variability) > 1 => {
                let read = &self.model.variables[w.0 as usize];
                Some(format!("`{}`, a {}", read.name, variability_word(read.variability)))
            }
            _ => None,
        })
    }
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// E0223 for each `discrete Real` variable that no when-clause assigns and no algorithm
    /// computes (Modelica 4.5: a discrete Real is assigned in a when-clause, by an equation or
    /// an assignment); without that, nothing would ever change it.
    pub(crate) fn check_discrete_reals(&mut self) {
        let mut assigned = vec![false; self.model.variables.len()];
        for k in self.model.when_assigned() {
            assigned[k as usize] = true;
        }
        for algorithm in &self.model.algorithms {
            for v in algorithm.outputs.iter().chain(&algorithm.when_assigned) {
                assigned[v.0 as usize] = true;
            }
        }
        let unassigned: Vec<usize> = (0..self.model.variables.len())
            .filter(|&k| {
                let v = &self.model.variables[k];
                !assigned[k]
                    && v.variability == Variability::Discrete
                    && v.ty == eqm_ir::flat::ScalarType::Real
                    && !self.model.is_top_level_input(v)
            })
            .collect();
        for k in unassigned {
            let variable = &self.model.variables[k];
            self.diagnostics.push(
                Diagnostic::error(
                    "E0223",
                    format!("`{}` is a `discrete Real` that no when-clause assigns", variable.name),
                    variable.span,
                    "declared discrete",
                )
                .with_help("a discrete Real changes only at events: assign it in a when-clause (`when c then d = ...; end when;`), or declare it without `discrete`"),
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
