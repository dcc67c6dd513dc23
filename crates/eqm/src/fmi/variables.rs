//! The FMI view of a compiled model: every variable an FMU exposes, with its value reference,
//! type, causality, variability, initial kind and start value.
//!
//! Input: a compiled [`Model`]. Output: [`FmiVariable`]s in value-reference order. The list
//! depends on the compiled model only (not on values set since compiling), so the exporter
//! and the runtime that loads the FMU compute the same list from the same sources. Value
//! references are assigned in this order:
//!
//! 1. `0`: `time` (causality independent);
//! 2. every variable with a value, by full name in the program's name order (byte order of the
//!    names), without the variables the compiler introduced (`$` names) and without String
//!    variables (they have no numeric slot);
//! 3. `der(x)` for each state `x`, in the order of the state vector (`$der(x)` when the program
//!    has a variable named `der(x)` of its own, as an index-reduced model has);
//! 4. `$eventIndicator[k]` for each zero-crossing surface `k` of the program (FMI 3 names its
//!    event indicators by variable; the value is the surface's expression);
//! 5. every String parameter and constant whose text is a literal, by full name: EQM has no
//!    String values during a run, so a String parameter is fixed (its text is part of the
//!    compiled model) and a String variable computed by equations is not exposed.
//!
//! Aliases that alias elimination removed keep a value reference of their own (they are
//! computed variables like the others): no two variables share one. A model imported from a
//! system-dynamics file names the file's variables as the file does (as its result columns),
//! in the same places. This module does not
//! write XML (see `description`) and does not compute dependencies (see `structure`).

use crate::Model;
use eqm_compile::dae::VarKind;
use eqm_compile::exec::ExecProgram;
use eqm_ir::expr::{ExprId, Node, UnOp, VarId};
use eqm_ir::flat::{EnumerationType, ScalarType, WhenAction};
use eqm_ir::slot::Slot;
use std::sync::Arc;

/// A variable's FMI type. An enumeration's values are Integers (the literals' positions); its
/// type is the variable's [`FmiVariable::enumeration`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmiType {
    Real,
    Integer,
    Boolean,
    Enumeration,
    /// A String parameter or constant: its text is [`FmiVariable::text`].
    String,
}

/// FMI causality.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmiCausality {
    Parameter,
    CalculatedParameter,
    Input,
    Output,
    Local,
    Independent,
}

/// FMI variability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmiVariability {
    Constant,
    Fixed,
    Tunable,
    Discrete,
    Continuous,
}

/// FMI `initial`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmiInitial {
    Exact,
    Approx,
    Calculated,
}

/// What a variable is in the compiled program, for the runtime's look-ups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmiSource {
    /// The simulation time.
    Time,
    /// A variable of the program, in `slot`.
    Variable { var: VarId, slot: Slot },
    /// The derivative of the state with index `state` (`Slot::Der(state)`).
    Derivative { state: u32 },
    /// The value of zero-crossing surface `surface` of the program's events.
    EventIndicator { surface: u32 },
    /// A String parameter or constant of the program, whose text is known when the model is
    /// compiled.
    Text { var: VarId },
}

/// One variable of an FMU; see the module documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct FmiVariable {
    pub name: String,
    pub value_reference: u32,
    pub ty: FmiType,
    pub causality: FmiCausality,
    pub variability: FmiVariability,
    /// `None` where FMI forbids the attribute (independent, and inputs in FMI 2).
    pub initial: Option<FmiInitial>,
    /// The start value where FMI requires or allows one.
    pub start: Option<f64>,
    pub unit: Option<Arc<str>>,
    pub description: Option<Arc<str>>,
    /// For `der(x)`: the value reference of `x`.
    pub derivative_of: Option<u32>,
    /// A continuous state: its value reference is listed among the states.
    pub is_state: bool,
    /// A state some `reinit` can change at an event.
    pub reinit: bool,
    pub source: FmiSource,
    /// The enumeration type of a variable of type [`FmiType::Enumeration`].
    pub enumeration: Option<Arc<EnumerationType>>,
    /// The text of a variable of type [`FmiType::String`].
    pub text: Option<Arc<str>>,
}

/// The FMI variables of `model` in value-reference order; see the module documentation.
pub fn variables(model: &Model) -> Vec<FmiVariable> {
    let program = model.program();
    // Sorted, for look-ups by binary search (a model may have as many outputs as variables).
    fn sorted(names: &[String]) -> Vec<&str> {
        let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        sorted
    }
    let (inputs, outputs) = model.own_interface();
    let (inputs, outputs) = (sorted(inputs), sorted(outputs));
    let reinit = reinit_targets(program);
    let initialized_by_starts = model.init_program().is_none();
    let mut list = vec![FmiVariable {
        name: "time".to_string(),
        value_reference: 0,
        ty: FmiType::Real,
        causality: FmiCausality::Independent,
        variability: FmiVariability::Continuous,
        initial: None,
        start: None,
        unit: None,
        description: Some("Simulation time".into()),
        derivative_of: None,
        is_state: false,
        reinit: false,
        source: FmiSource::Time,
        enumeration: None,
        text: None,
    }];
    let mut state_references = vec![0u32; program.states().len()];
    for (name, var, slot, _) in program.variables() {
        if name.starts_with('$') {
            continue;
        }
        let value_reference = list.len() as u32;
        if let Slot::State(i) = slot {
            state_references[i as usize] = value_reference;
        }
        let role = Role {
            input: inputs.binary_search(&name).is_ok(),
            discrete_input: model.is_discrete_input(name),
            output: outputs.binary_search(&name).is_ok(),
            reinit: reinit.binary_search(&var).is_ok(),
            initialized_by_starts,
        };
        list.push(describe(program, name, var, slot, value_reference, &role));
    }
    for (i, &x) in program.states().iter().enumerate() {
        let symbol = program.symbols().get(x);
        let mut name = format!("der({})", symbol.name);
        // An index-reduced model has variables named `der(x)` of its own (states of the reduced
        // system); the solver's derivative of `x` is then another value, named apart.
        if program.lookup(&name).is_some() {
            name.insert(0, '$');
        }
        list.push(FmiVariable {
            name,
            value_reference: list.len() as u32,
            ty: FmiType::Real,
            causality: FmiCausality::Local,
            variability: FmiVariability::Continuous,
            initial: Some(FmiInitial::Calculated),
            start: None,
            unit: None,
            description: None,
            derivative_of: Some(state_references[i]),
            is_state: false,
            reinit: false,
            source: FmiSource::Derivative { state: i as u32 },
            enumeration: None,
            text: None,
        });
    }
    for (k, surface) in program.events().surfaces.iter().enumerate() {
        list.push(FmiVariable {
            name: format!("$eventIndicator[{}]", k + 1),
            value_reference: list.len() as u32,
            ty: FmiType::Real,
            causality: FmiCausality::Local,
            variability: FmiVariability::Continuous,
            initial: Some(FmiInitial::Calculated),
            start: None,
            unit: None,
            description: Some(surface.text.as_str().into()),
            derivative_of: None,
            is_state: false,
            reinit: false,
            source: FmiSource::EventIndicator { surface: k as u32 },
            enumeration: None,
            text: None,
        });
    }
    for (name, var) in program.symbols().by_name() {
        if let Some(v) = text_variable(program, name, var, list.len() as u32) {
            list.push(v);
        }
    }
    name_as_the_file_does(model.source_name_pairs(), &mut list);
    list
}

/// For a model imported from a system-dynamics file: each variable the file defines, and the
/// derivative of each such stock, under its name in the file (`Teacup Temperature`,
/// `der(Teacup Temperature)`, `Inflow A[a1,b1]`), as `eqm run` names its columns; the value
/// references stay. A name in the file that another variable of the list already has keeps
/// the `.eqm` name, so that no two variables share a name.
fn name_as_the_file_does(source: &[(String, String)], list: &mut [FmiVariable]) {
    if source.is_empty() {
        return;
    }
    let mut renamed: std::collections::HashMap<String, String> = source
        .iter()
        .flat_map(|(path, file)| {
            [
                (path.clone(), file.clone()),
                (format!("der({path})"), format!("der({file})")),
            ]
        })
        .collect();
    let taken: std::collections::HashSet<&str> = list
        .iter()
        .filter(|v| !renamed.contains_key(&v.name))
        .map(|v| v.name.as_str())
        .collect();
    renamed.retain(|_, file| !taken.contains(file.as_str()));
    for v in list.iter_mut() {
        if let Some(file) = renamed.get(&v.name) {
            v.name = file.clone();
        }
    }
}

/// String parameter or constant `var` with value reference `value_reference`, when its text is
/// a literal (its binding, else its start value): a parameter is fixed, its text part of the
/// compiled model; a constant is a constant.
fn text_variable(program: &ExecProgram, name: &str, var: VarId, value_reference: u32) -> Option<FmiVariable> {
    let symbol = program.symbols().get(var);
    if symbol.ty != ScalarType::String || name.starts_with('$') {
        return None;
    }
    let Node::Str(text) = program.exprs().get(symbol.binding.or(symbol.start)?) else {
        return None;
    };
    let (causality, variability, initial) = match symbol.kind {
        VarKind::Parameter => (FmiCausality::Parameter, FmiVariability::Fixed, Some(FmiInitial::Exact)),
        VarKind::Constant => (FmiCausality::Local, FmiVariability::Constant, None),
        _ => return None,
    };
    Some(FmiVariable {
        name: name.to_string(),
        value_reference,
        ty: FmiType::String,
        causality,
        variability,
        initial,
        start: None,
        unit: None,
        description: symbol.description.clone(),
        derivative_of: None,
        is_state: false,
        reinit: false,
        source: FmiSource::Text { var },
        enumeration: None,
        text: Some(Arc::from(&**text)),
    })
}

/// What the model's interface and events say about one variable.
struct Role {
    input: bool,
    /// An input declared `discrete`.
    discrete_input: bool,
    output: bool,
    reinit: bool,
    /// The model has no initialization problem of its own: every state starts at its start
    /// value.
    initialized_by_starts: bool,
}

/// The FMI attributes of program variable `var` in `slot`.
fn describe(
    program: &ExecProgram,
    name: &str,
    var: VarId,
    slot: Slot,
    value_reference: u32,
    role: &Role,
) -> FmiVariable {
    let symbol = program.symbols().get(var);
    let ty = match symbol.ty {
        ScalarType::Integer if symbol.enumeration.is_some() => FmiType::Enumeration,
        ScalarType::Integer => FmiType::Integer,
        ScalarType::Boolean => FmiType::Boolean,
        ScalarType::Real | ScalarType::String => FmiType::Real,
    };
    let continuous = if ty == FmiType::Real {
        FmiVariability::Continuous
    } else {
        FmiVariability::Discrete
    };
    let literal_start = symbol.start.and_then(|e| literal(program, e));
    let fixed = symbol.fixed == Some(true);
    let parameter_value = match slot {
        Slot::Param(i) => program.p0().get(i as usize).copied(),
        _ => None,
    };
    let eliminated = symbol.eliminated.is_some();
    // Each kind of variable with the FMI attributes its role allows.
    let (causality, variability, initial, start) = match symbol.kind {
        // A Real input declared `discrete` changes only at events (the importer sets it at
        // event instants); the others are continuous.
        _ if role.input => {
            let variability = match role.discrete_input {
                true => FmiVariability::Discrete,
                false => continuous,
            };
            (FmiCausality::Input, variability, None, parameter_value)
        }
        VarKind::Parameter | VarKind::Constant if eliminated || parameter_value.is_none() => {
            let constant = symbol.kind == VarKind::Constant;
            match symbol.binding.and_then(|e| literal(program, e)) {
                Some(value) if constant => (FmiCausality::Local, FmiVariability::Constant, None, Some(value)),
                _ => (
                    FmiCausality::CalculatedParameter,
                    FmiVariability::Fixed,
                    Some(FmiInitial::Calculated),
                    None,
                ),
            }
        }
        VarKind::Parameter | VarKind::Constant => {
            let variability = if symbol.structural || symbol.kind == VarKind::Constant {
                FmiVariability::Fixed
            } else {
                FmiVariability::Tunable
            };
            (
                FmiCausality::Parameter,
                variability,
                Some(FmiInitial::Exact),
                parameter_value,
            )
        }
        VarKind::State if !eliminated => {
            let exact = fixed || role.initialized_by_starts;
            let initial = match literal_start {
                Some(_) if exact => FmiInitial::Exact,
                Some(_) => FmiInitial::Approx,
                None => FmiInitial::Calculated,
            };
            let causality = if role.output {
                FmiCausality::Output
            } else {
                FmiCausality::Local
            };
            (causality, FmiVariability::Continuous, Some(initial), literal_start)
        }
        VarKind::Discrete if !eliminated => {
            let variability = FmiVariability::Discrete;
            let causality = if role.output {
                FmiCausality::Output
            } else {
                FmiCausality::Local
            };
            match literal_start {
                Some(value) if fixed => (causality, variability, Some(FmiInitial::Exact), Some(value)),
                _ => (causality, variability, Some(FmiInitial::Calculated), None),
            }
        }
        _ => {
            let causality = if role.output {
                FmiCausality::Output
            } else {
                FmiCausality::Local
            };
            (causality, continuous, Some(FmiInitial::Calculated), None)
        }
    };
    FmiVariable {
        name: name.to_string(),
        value_reference,
        ty,
        causality,
        variability,
        initial,
        start,
        unit: symbol.unit.clone(),
        description: symbol.description.clone(),
        derivative_of: None,
        is_state: matches!(slot, Slot::State(_)),
        reinit: role.reinit && matches!(slot, Slot::State(_)),
        source: FmiSource::Variable { var, slot },
        enumeration: symbol.enumeration.clone(),
        text: None,
    }
}

/// The value of `e` when it is a number or Boolean literal, possibly negated.
fn literal(program: &ExecProgram, e: ExprId) -> Option<f64> {
    let exprs = program.exprs();
    match exprs.get(e) {
        Node::Real(bits) => Some(f64::from_bits(*bits)),
        Node::Int(i) => Some(*i as f64),
        Node::Bool(b) => Some(f64::from(u8::from(*b))),
        Node::Unary(UnOp::Neg, a) => literal(program, *a).map(|v| -v),
        _ => None,
    }
}

/// The states some when-clause `reinit`s, sorted.
fn reinit_targets(program: &ExecProgram) -> Vec<VarId> {
    let mut targets: Vec<VarId> = program
        .events()
        .whens
        .iter()
        .flat_map(|w| &w.branches)
        .flat_map(|(_, actions)| actions)
        .filter_map(|a| match a {
            WhenAction::Reinit { var, .. } => Some(*var),
            _ => None,
        })
        .collect();
    targets.sort_unstable();
    targets.dedup();
    targets
}
