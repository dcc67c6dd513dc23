//! `check` of a file of several classes, such as a package of components and the models built
//! from them: each class is judged as what it is.
//!
//! Input: a session whose user files hold the classes, the model `check` was asked for (if
//! any) and the model options. Output: one [`ClassCheck`] per non-partial class, in file order,
//! and the lines `eqm check` prints for them ([`check_lines`]). A *complete model* (nothing at
//! its top level that a surrounding model would have to connect: no connector and no input
//! without a binding) is checked as `check` of it alone checks it ([`Session::check`]). A
//! *component* (a class with connectors or free inputs at its top level) is judged by its local
//! balance, as Modelica's rule for balanced models defines it:
//! its equations, together with one for each flow variable of its top-level connectors and one
//! for each input at its top level, which the model that uses it determines, must be as many as
//! its unknowns. An unbalanced component is an error `E0402` that shows this counting.
//!
//! Deliberately not done: a component is not analysed structurally (a flange whose position
//! nothing in the component determines is determined by the model that connects it), and a
//! model that is simulated (`check --model M`, or the only model of the files) is checked by
//! [`Session::check_all`] exactly as `run` would start it. The counting is made on the flattened
//! class, so a component of it that is off makes the class off too; that component is reported
//! on its own line when it is a class of the same files.

use crate::{CheckSummary, ModelOptions, Session};
use eqm_diag::{Diagnostic, Severity};
use eqm_ir::flat::{Causality, ConnectorRole, FlatModel, InstanceId, Origin, Variable};
use std::collections::BTreeSet;

/// What `check` found about one class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassCheck {
    /// The class's dotted name (empty when the files have no model, which the diagnostics say).
    pub name: String,
    pub verdict: ClassVerdict,
}

/// How a class fared in `check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassVerdict {
    /// A complete model: its summary, or the number of errors it had.
    Model(Result<CheckSummary, usize>),
    /// A component, with the counting of its local balance (an `E0402` error when it is off).
    Component(LocalBalance),
    /// A class that could not be flattened: the number of its errors.
    Failed(usize),
}

/// The counting of a component's local balance, made on the flattened class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalBalance {
    /// The equations of the class and of its components, bindings included, and one for each
    /// variable an algorithm or a when-equation assigns; without the `flow = 0` that flattening
    /// adds for the flows of the class's own connectors when it is simulated alone.
    pub equations: usize,
    /// The flow variables of the class's top-level connectors: the connections of the model
    /// that uses it give their equations.
    pub flows: usize,
    /// The inputs at the class's top level (in its connectors or declared in it) without a
    /// binding: the model that uses it determines them.
    pub inputs: usize,
    /// The variables that are not parameters or constants, those of its connectors included.
    pub unknowns: usize,
}

impl LocalBalance {
    /// Whether the equations, flows and inputs together are as many as the unknowns.
    pub fn is_balanced(&self) -> bool {
        self.equations + self.flows + self.inputs == self.unknowns
    }

    /// The counting in words: `4 equations + 2 flow variables + 0 inputs = 6 for 6 unknowns`.
    pub fn counting(&self) -> String {
        format!(
            "{} equation(s) + {} flow variable(s) + {} input(s) = {} for {} unknown(s)",
            self.equations,
            self.flows,
            self.inputs,
            self.equations + self.flows + self.inputs,
            self.unknowns
        )
    }
}

impl Session {
    /// `eqm check`: `model`, or the only model of the user's files, checked as
    /// [`Session::check_all`] checks it; or, when the files hold several classes and no model
    /// is named, each non-partial class judged as a complete model or as a component (see the
    /// module documentation). The diagnostics stay in the session, each found once.
    pub fn check_classes(&mut self, model: Option<&str>, options: &ModelOptions) -> Vec<ClassCheck> {
        if model.is_some() || self.checks_one_model() {
            return self
                .check_all(model, options)
                .into_iter()
                .map(|(name, result)| ClassCheck {
                    name,
                    verdict: ClassVerdict::Model(result),
                })
                .collect();
        }
        let names: Vec<String> = self.models().into_iter().map(|m| m.name).collect();
        names
            .into_iter()
            .map(|name| {
                let verdict = self.check_class(&name, options);
                ClassCheck { name, verdict }
            })
            .collect()
    }

    /// The verdict on one class of several; see [`Session::check_classes`].
    fn check_class(&mut self, name: &str, options: &ModelOptions) -> ClassVerdict {
        let (flat, diagnostics) = self.flatten_for_package_check(name, options);
        let Some(flat) = flat else {
            let errors = diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
            for d in diagnostics {
                self.push_diagnostic(d);
            }
            return ClassVerdict::Failed(errors);
        };
        if !is_component(&flat) {
            // `check` flattens the model again and finds these diagnostics once more.
            let before = self.error_count_for_package_check();
            let result = self
                .check(Some(name), options)
                .ok_or_else(|| self.error_count_for_package_check() - before);
            return ClassVerdict::Model(result);
        }
        for d in diagnostics {
            self.push_diagnostic(d);
        }
        let balance = local_balance(&flat);
        if !balance.is_balanced() {
            self.push_diagnostic(imbalance(&flat, &balance));
        }
        ClassVerdict::Component(balance)
    }

    fn error_count_for_package_check(&self) -> usize {
        self.diagnostics()
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }
}

/// The lines `eqm check` prints: one per class (a complete model with its size, a component with
/// its counting, a class with errors with their number); a single model that failed prints
/// none, its diagnostics tell.
pub fn check_lines(checks: &[ClassCheck]) -> Vec<String> {
    let several = checks.len() > 1;
    checks
        .iter()
        .filter_map(|check| match &check.verdict {
            ClassVerdict::Model(Ok(c)) => Some(format!(
                "{}: {} variables, {} equations: no errors",
                c.model, c.variables, c.equations
            )),
            ClassVerdict::Model(Err(errors)) | ClassVerdict::Failed(errors) if several => {
                Some(format!("{}: {errors} error(s)", check.name))
            }
            ClassVerdict::Model(Err(_)) | ClassVerdict::Failed(_) => None,
            ClassVerdict::Component(balance) => Some(format!(
                "{}: {} component: {}",
                check.name,
                if balance.is_balanced() {
                    "balanced"
                } else {
                    "unbalanced"
                },
                balance.counting()
            )),
        })
        .collect()
}

/// Everything `eqm check` reports after the diagnostics, one line each: the lines of
/// [`check_lines`], then the notes of the branches chosen at translation and of the unknowns
/// dropped for zero coefficients (each naming its class when several were checked).
pub fn check_report(checks: &[ClassCheck]) -> Vec<String> {
    let mut lines = check_lines(checks);
    let several = checks.len() > 1;
    for check in checks {
        if let ClassVerdict::Model(Ok(summary)) = &check.verdict {
            let notes = summary.branch_choices.iter().chain(&summary.zero_coefficients);
            lines.extend(notes.map(|note| match several {
                true => format!("note: {}: {note}", check.name),
                false => format!("note: {note}"),
            }));
        }
    }
    lines
}

/// Whether `v` belongs to a connector at the class's top level: a connector component of the
/// class, or a connector inside one.
fn in_top_level_connector(flat: &FlatModel, v: &Variable) -> bool {
    let mut instance = v.instance;
    let mut through_connector = false;
    while instance != InstanceId(0) {
        let i = &flat.instances[instance.0 as usize];
        if !i.is_connector {
            return false;
        }
        through_connector = true;
        match i.parent {
            Some(parent) => instance = parent,
            None => return false,
        }
    }
    through_connector
}

/// The indices of the inputs at the class's top level that the model using the class
/// determines (those without a binding: a binding determines its input already).
fn free_inputs(flat: &FlatModel) -> Vec<usize> {
    let bound = bound_variables(flat);
    flat.variables
        .iter()
        .enumerate()
        .filter(|(i, v)| {
            v.variability.is_time_varying()
                && v.causality == Causality::Input
                && flat.is_top_level_input(v)
                && !bound.contains(&(*i as u32))
        })
        .map(|(i, _)| i)
        .collect()
}

/// The variables that have a binding equation.
fn bound_variables(flat: &FlatModel) -> BTreeSet<u32> {
    flat.equations
        .iter()
        .filter_map(|e| match e.origin {
            Origin::Binding { var } => Some(var.0),
            _ => None,
        })
        .collect()
}

/// Whether the class is a component: something at its top level (a connector, an input without
/// a binding) waits for the model that uses it.
fn is_component(flat: &FlatModel) -> bool {
    let has_connector = flat
        .instances
        .iter()
        .any(|i| i.is_connector && i.parent == Some(InstanceId(0)));
    has_connector || !free_inputs(flat).is_empty()
}

/// The counting of the local balance of the flattened class; see [`LocalBalance`].
fn local_balance(flat: &FlatModel) -> LocalBalance {
    let time_varying = || flat.variables.iter().filter(|v| v.variability.is_time_varying());
    let is_own_flow = |v: &Variable| v.role == ConnectorRole::Flow && in_top_level_connector(flat, v);
    let added_flow_equations = flat
        .equations
        .iter()
        .filter(|e| matches!(e.origin, Origin::UnconnectedFlow { var } if is_own_flow(flat.var(var))))
        .count();
    LocalBalance {
        equations: flat.equations.len() - added_flow_equations
            + flat.when_assigned().len()
            + flat.algorithm_equation_count(),
        flows: time_varying().filter(|v| is_own_flow(v)).count(),
        inputs: free_inputs(flat).len(),
        unknowns: time_varying().count(),
    }
}

/// The error `E0402` for a component whose counting is off.
fn imbalance(flat: &FlatModel, balance: &LocalBalance) -> Diagnostic {
    let given = balance.equations + balance.flows + balance.inputs;
    let under = given < balance.unknowns;
    Diagnostic::error(
        "E0402",
        format!(
            "the component `{}` is not balanced: {}",
            flat.name,
            balance.counting()
        ),
        flat.instances[0].span,
        format!("component `{}`", flat.name),
    )
    .with_note(
        "a component is balanced when its equations, with one for each flow variable of its connectors and one for each input at its top level (the model that uses it determines those), are as many as its unknowns",
    )
    .with_help(if under {
        "add the missing equations, or give variables bindings (`Real y = ...`)"
    } else {
        "remove redundant equations; a variable may be determined twice"
    })
}
