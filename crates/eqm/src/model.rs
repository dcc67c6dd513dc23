//! A compiled model: its executable programs, built once, and any number of simulations of it
//! with changed parameters and start values.
//!
//! Input: the compiled programs of a model ([`Compiled`]). Output: the model's variables and
//! parameters with units and descriptions, result columns, and simulations into a
//! [`SimulationResult`](crate::SimulationResult) or any [`RowSink`] (the public runs, which
//! decide the stop time first, are in `crate::plan`). Changing a parameter that is independent of the
//! others, or a start value, never recompiles: the programs read parameters and start values
//! at run time. The native code and the symbolic Jacobian are built on the first run that
//! needs them and kept. Nothing here reads files or prints.

use crate::modes::Modes;
use crate::results::{Column, RowSink};
use crate::run::{RunError, RunSettings};
use eqm_compile::analysis::{Compiled, FormChoice};
use eqm_compile::dae::VarKind;
use eqm_compile::exec::ExecProgram;
use eqm_compile::modes::VariableStructure;
use eqm_diag::Diagnostic;
use eqm_ir::flat::{Causality, Experiment, FlatModel};
use eqm_ir::slot::Slot;
use eqm_sim::native::NativeCode;
use eqm_sim::simulate::{Backend, Columns, Summary};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a variable is to the simulation.
pub use eqm_compile::dae::VarKind as VariableKind;

/// A variable of a compiled model.
#[derive(Debug, Clone, PartialEq)]
pub struct VariableInfo {
    pub name: String,
    pub kind: VariableKind,
    pub unit: Option<Arc<str>>,
    pub description: Option<Arc<str>>,
}

/// A parameter of a compiled model.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterInfo {
    pub name: String,
    /// Its value in the next run, when it is independent of the other parameters (a dependent
    /// one is computed from them when a run starts).
    pub value: Option<f64>,
    /// Whether [`Model::set_parameter`] can change it.
    pub settable: bool,
    /// Whether its value shaped the compiled model (an array size, a range, a condition): it
    /// changes only by compiling again with the new value.
    pub structural: bool,
    pub unit: Option<Arc<str>>,
    pub description: Option<Arc<str>>,
    /// Its `min` and `max` attributes when they are written as numbers (a bound computed
    /// from other parameters is not given here; the run checks it).
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// How a run went, with the times of its parts.
#[derive(Debug, Clone)]
pub struct RunReport {
    pub summary: Summary,
    /// How the symbolic Jacobian was made, for implicit methods and invariants (or why
    /// difference quotients are used instead).
    pub jacobian: Option<String>,
    /// Settings that had no effect.
    pub notes: Vec<String>,
    /// Building the symbolic Jacobian, compiling native code and simulating (zero for what
    /// this run did not have to do).
    pub jacobian_time: Duration,
    pub compile_time: Duration,
    pub simulate_time: Duration,
}

/// The parameter values and the start values set on a model since compiling, in the order set.
pub(crate) type ValuesSet = (Vec<(String, f64)>, Vec<(String, f64)>);

/// A compiled model; see the module documentation.
pub struct Model {
    pub(crate) compiled: Compiled,
    /// Parameter values given to the compiler; a run starts from these.
    compiled_parameters: Vec<(String, f64)>,
    /// Parameter values set since, in the order set (a later one wins).
    parameters: Vec<(String, f64)>,
    starts: Vec<(String, f64)>,
    /// The note of the symbolic Jacobian once one was asked for.
    jacobian: Option<Option<String>>,
    native: Option<Arc<NativeCode>>,
    /// For a variable-structure model: its modes, each compiled when a run first enters it.
    modes: Option<Box<Modes>>,
    /// The model's own inputs and outputs, by name (see [`Model::own_interface`]).
    interface: (Vec<String>, Vec<String>),
    /// The inputs among them declared `discrete`, sorted.
    discrete_inputs: Vec<String>,
    /// The equations whose unknowns were dropped because their coefficient is zero by the
    /// parameters' values at translation.
    zero_coefficients: Vec<eqm_compile::zero_coefficients::DroppedOccurrence>,
    /// For a model imported from a system-dynamics file: its result columns, each the
    /// variable's `.eqm` name and its name in the file, which the results are reported under.
    source_names: Option<Arc<Vec<(String, String)>>>,
}

impl Model {
    pub(crate) fn new(compiled: Compiled, compiled_parameters: Vec<(String, f64)>) -> Model {
        Model {
            compiled,
            compiled_parameters,
            parameters: Vec::new(),
            starts: Vec::new(),
            jacobian: None,
            native: None,
            modes: None,
            interface: (Vec::new(), Vec::new()),
            discrete_inputs: Vec::new(),
            zero_coefficients: Vec::new(),
            source_names: None,
        }
    }

    /// This model with the unknowns dropped from its equations because their coefficient is
    /// zero by the parameters' values (see [`Model::zero_coefficients`]).
    pub(crate) fn with_zero_coefficients(
        mut self,
        dropped: Vec<eqm_compile::zero_coefficients::DroppedOccurrence>,
    ) -> Model {
        self.zero_coefficients = dropped;
        self
    }

    /// The equations from which the structural analysis dropped unknowns because their
    /// coefficient is zero by the values of parameters known at translation; those parameters
    /// are structural.
    pub fn zero_coefficients(&self) -> &[eqm_compile::zero_coefficients::DroppedOccurrence] {
        &self.zero_coefficients
    }

    /// This model reporting its results under the names of the file it was imported from:
    /// `names` holds each column's `.eqm` name and its name in the file; by default a run
    /// reports exactly these columns, in this order. (An FMU's runtime that compiles the
    /// `.eqm` text of an imported file gives it the names its manifest keeps.)
    pub fn with_source_names(mut self, names: Vec<(String, String)>) -> Model {
        self.source_names = Some(Arc::new(names));
        self
    }

    /// The names of the variables of a model imported from a system-dynamics file, as the
    /// file writes them (the default result columns); empty for another model.
    pub fn source_names(&self) -> Vec<String> {
        self.source_names
            .as_deref()
            .map(|names| names.iter().map(|(_, source)| source.clone()).collect())
            .unwrap_or_default()
    }

    /// Each result column's `.eqm` name and its name in the file, for a model imported from a
    /// system-dynamics file; empty for another model.
    pub(crate) fn source_name_pairs(&self) -> &[(String, String)] {
        self.source_names.as_deref().map_or(&[], Vec::as_slice)
    }

    /// The variable of the program a column of this name reports: the `.eqm` name of a
    /// variable of an imported file given by its name in the file, else the name itself.
    fn program_name<'a>(&'a self, name: &'a str) -> &'a str {
        self.source_names
            .as_deref()
            .and_then(|names| names.iter().find(|(_, file_name)| file_name == name))
            .map_or(name, |(path, _)| path.as_str())
    }

    /// This model with its own inputs and outputs (see [`Model::own_interface`]).
    pub(crate) fn with_interface(mut self, interface: (Vec<String>, Vec<String>)) -> Model {
        self.interface = interface;
        self
    }

    /// The inputs and outputs of the model `flat` itself (see [`Model::own_interface`]).
    pub(crate) fn new_interface(flat: &FlatModel) -> (Vec<String>, Vec<String>) {
        let inputs = flat
            .variables
            .iter()
            .filter(|v| flat.is_top_level_input(v))
            .map(|v| v.name.clone())
            .collect();
        // An output of the model itself has a name without a component prefix, or one of its
        // own connectors' (which are not components of another class): outputs of components
        // are internal signals.
        let outputs = flat
            .variables
            .iter()
            .filter(|v| {
                let instance = &flat.instances[v.instance.0 as usize];
                let own_connector = instance.is_connector && instance.parent.is_some_and(|p| p.0 == 0);
                v.causality == Causality::Output && (instance.name.is_empty() || own_connector)
            })
            .map(|v| v.name.clone())
            .collect();
        (inputs, outputs)
    }

    /// This model with the inputs among its own declared `discrete` (see
    /// [`Model::new_discrete_inputs`]).
    pub(crate) fn with_discrete_inputs(mut self, inputs: Vec<String>) -> Model {
        self.discrete_inputs = inputs;
        self
    }

    /// The top-level inputs of the model `flat` declared `discrete` (`discrete input Real u`),
    /// sorted: they change only at events.
    pub(crate) fn new_discrete_inputs(flat: &FlatModel) -> Vec<String> {
        let mut inputs: Vec<String> = flat
            .variables
            .iter()
            .filter(|v| v.variability == eqm_ir::flat::Variability::Discrete && flat.is_top_level_input(v))
            .map(|v| v.name.clone())
            .collect();
        inputs.sort_unstable();
        inputs
    }

    /// Whether `name` is one of the model's own inputs declared `discrete`.
    pub fn is_discrete_input(&self, name: &str) -> bool {
        self.discrete_inputs.binary_search_by(|n| n.as_str().cmp(name)).is_ok()
    }

    /// The model's own inputs and outputs (declared in the model or in its own connectors), by
    /// name: the inputs and outputs of its linearisation ([`crate::AnalyzeOptions::of_model`]).
    pub fn own_interface(&self) -> (&[String], &[String]) {
        (&self.interface.0, &self.interface.1)
    }

    /// This model as a variable-structure model: runs go through its modes (see
    /// [`crate::modes`]) instead of the program compiled with every branch.
    pub(crate) fn with_modes(mut self, modes: Modes) -> Model {
        self.modes = Some(Box::new(modes));
        self
    }

    /// A copy for another thread (a parameter sweep runs one per core): the same programs, the
    /// same native code (shared, not compiled again) and the same parameter and start values;
    /// `None` for a variable-structure model, whose modes are compiled as its runs enter them.
    pub(crate) fn duplicate(&self) -> Option<Model> {
        if self.modes.is_some() {
            return None;
        }
        Some(Model {
            compiled: self.compiled.clone(),
            compiled_parameters: self.compiled_parameters.clone(),
            parameters: self.parameters.clone(),
            starts: self.starts.clone(),
            jacobian: self.jacobian.clone(),
            native: self.native.clone(),
            modes: None,
            interface: self.interface.clone(),
            discrete_inputs: self.discrete_inputs.clone(),
            zero_coefficients: self.zero_coefficients.clone(),
            source_names: self.source_names.clone(),
        })
    }

    /// For a variable-structure model, the relations and Boolean variables that choose its
    /// structure and the equations they change.
    pub fn variable_structure(&self) -> Option<&VariableStructure> {
        self.modes.as_ref().map(|m| m.structure())
    }

    /// The model's name.
    pub fn name(&self) -> &str {
        self.compiled.program.symbols().model()
    }

    /// The `experiment` annotation: a run's defaults.
    pub fn experiment(&self) -> &Experiment {
        &self.compiled.experiment
    }

    /// For a model that needed index reduction: the form simulated, and why.
    pub fn form(&self) -> Option<&FormChoice> {
        self.compiled.form.as_ref()
    }

    /// The executable program of the simulation.
    pub fn program(&self) -> &ExecProgram {
        &self.compiled.program
    }

    /// The executable program of the initialization problem; `None` when the initialization
    /// is the simulation program itself with every state at its start value.
    pub fn init_program(&self) -> Option<&ExecProgram> {
        self.compiled.init.as_ref()
    }

    /// Every variable with a value, by full name, without the ones the compiler introduced.
    pub fn variables(&self) -> Vec<VariableInfo> {
        let program = &self.compiled.program;
        program
            .variables()
            .filter(|(name, ..)| !name.starts_with('$'))
            .map(|(name, v, ..)| {
                let symbol = program.symbols().get(v);
                VariableInfo {
                    name: name.to_string(),
                    kind: symbol.kind,
                    unit: symbol.unit.clone(),
                    description: symbol.description.clone(),
                }
            })
            .collect()
    }

    /// Every parameter, by full name, with its value in the next run where it is independent.
    pub fn parameters(&self) -> Vec<ParameterInfo> {
        let program = &self.compiled.program;
        program
            .variables()
            .filter(|(_, v, ..)| program.symbols().get(*v).kind == VarKind::Parameter)
            .map(|(name, v, slot, _)| {
                let symbol = program.symbols().get(v);
                let value = match slot {
                    Slot::Param(i) => self
                        .run_parameters()
                        .rev()
                        .find(|(n, _)| n == name)
                        .map(|(_, value)| *value)
                        .or_else(|| program.p0().get(i as usize).copied()),
                    _ => None,
                };
                ParameterInfo {
                    name: name.to_string(),
                    value,
                    settable: matches!(slot, Slot::Param(_)) && !symbol.structural,
                    structural: symbol.structural,
                    unit: symbol.unit.clone(),
                    description: symbol.description.clone(),
                    min: symbol.min.and_then(|bound| program.exprs().literal(bound)),
                    max: symbol.max.and_then(|bound| program.exprs().literal(bound)),
                }
            })
            .collect()
    }

    /// The parameter values every run sets: those given to the compiler, then those set since.
    fn run_parameters(&self) -> impl DoubleEndedIterator<Item = &(String, f64)> {
        self.compiled_parameters.iter().chain(&self.parameters)
    }

    /// Sets parameter `name` to `value` for the runs from now on, without recompiling: it must
    /// be independent of the other parameters and not structural (`E0707` otherwise; a
    /// structural parameter is set by compiling with [`crate::ModelOptions::parameters`]).
    /// Whether the parameters then meet the model's conditions is checked when a run computes
    /// them.
    pub fn set_parameter(&mut self, name: &str, value: f64) -> Result<(), Diagnostic> {
        let program = &self.compiled.program;
        eqm_sim::instance::check_parameter(program, name, value)?;
        if let Some(symbol) = program.lookup(name).map(|v| program.symbols().get(v))
            && symbol.structural
        {
            // A parameter whose value makes a coefficient zero says which unknown it removed.
            let zero = self
                .zero_coefficients
                .iter()
                .find(|d| d.parameters.iter().any(|p| p == name));
            let note = match zero {
                Some(d) => format!(
                    "it fixes the model's structure: {} (the structural analysis was made for that value)",
                    d.describe()
                ),
                None => "it fixes the model's structure: it sets an array size, a range, a subscript, a condition, or a coefficient that is zero at translation (then `eqm check` names the unknowns it removed)".to_string(),
            };
            return Err(Diagnostic::error(
                "E0707",
                format!("`{name}` cannot be set without compiling again: the compiled model depends on its value"),
                symbol.span,
                "declared here",
            )
            .with_note(note)
            .with_help(format!(
                "compile the model again with {name} = {value} given as a parameter value"
            )));
        }
        self.parameters.retain(|(n, _)| n != name);
        self.parameters.push((name.to_string(), value));
        Ok(())
    }

    /// Sets the start value of variable `name` for the runs from now on, without recompiling
    /// (`E0715` for a parameter, an alias or an unknown name). A state's start value with
    /// `fixed = true`, or one the initialization assumed fixed, becomes its initial value;
    /// otherwise it is the first guess of the iterations that compute the variable.
    pub fn set_start(&mut self, name: &str, value: f64) -> Result<(), Diagnostic> {
        eqm_sim::instance::check_start_value(&self.compiled.program, name, value)?;
        self.starts.retain(|(n, _)| n != name);
        self.starts.push((name.to_string(), value));
        Ok(())
    }

    /// The parameter values and start values set since compiling, in the order set.
    pub(crate) fn values_set(&self) -> ValuesSet {
        (self.parameters.clone(), self.starts.clone())
    }

    /// Sets the parameter values and start values set since compiling back to `values` (from
    /// [`Model::values_set`]), without checking them again.
    pub(crate) fn restore_values(&mut self, values: &ValuesSet) {
        self.parameters.clone_from(&values.0);
        self.starts.clone_from(&values.1);
    }

    /// Forgets the parameter values and start values set since compiling.
    pub fn reset(&mut self) {
        self.parameters.clear();
        self.starts.clear();
    }

    /// The result columns for `names` (full variable names), or by default every state and
    /// every named variable that is not a parameter, in natural name order (`x[2]` before `x[10]`); `E0708` for a name the
    /// model does not have, with the closest one.
    /// A model imported from a system-dynamics file reports the file's variables by default,
    /// each under its name in the file, and takes either name in `names`.
    pub fn columns(&self, names: Option<&[String]>) -> Result<Vec<Column>, Diagnostic> {
        let Some(source) = self.source_names.as_deref() else {
            let columns = eqm_sim::simulate::columns(&self.compiled.program, names)?;
            return Ok(self.describe(columns));
        };
        let wanted: Vec<String> = match names {
            None => source.iter().map(|(path, _)| path.clone()).collect(),
            Some(names) => names
                .iter()
                .map(|name| {
                    source
                        .iter()
                        .find(|(_, file_name)| file_name == name)
                        .map_or_else(|| name.clone(), |(path, _)| path.clone())
                })
                .collect(),
        };
        let columns = eqm_sim::simulate::columns(&self.compiled.program, Some(&wanted))?;
        let mut columns = self.describe(columns);
        for column in &mut columns {
            if let Some((_, file_name)) = source.iter().find(|(path, _)| *path == column.name) {
                column.name = file_name.clone();
            }
        }
        Ok(columns)
    }

    fn describe(&self, columns: Columns) -> Vec<Column> {
        let symbols = self.compiled.program.symbols();
        columns
            .names
            .into_iter()
            .zip(columns.slots)
            .zip(columns.vars)
            .map(|((name, slot), v)| {
                let symbol = symbols.get(v);
                Column {
                    name,
                    unit: symbol.unit.clone(),
                    description: symbol.description.clone(),
                    slot,
                }
            })
            .collect()
    }

    /// The index in `columns` of each of `names` (the variables of a plot), or `E0708` for the
    /// first that is not a column, with the closest one.
    pub fn find_columns(&self, columns: &[Column], names: &[String]) -> Result<Vec<usize>, Diagnostic> {
        names
            .iter()
            .map(|name| {
                columns.iter().position(|c| &c.name == name).ok_or_else(|| {
                    let mut d = Diagnostic::error(
                        "E0708",
                        format!("there is no variable `{name}` to plot"),
                        self.compiled.program.model_span(),
                        "in this model",
                    );
                    if let Some(similar) = eqm_diag::did_you_mean(name, columns.iter().map(|c| c.name.as_str())) {
                        d = d.with_help(format!("did you mean `{similar}`?"));
                    }
                    d
                })
            })
            .collect()
    }

    /// Checks `settings` against this model's experiment without running: the notes on
    /// settings that will have no effect, or the setting that cannot be used.
    pub fn check_settings(&self, settings: &RunSettings) -> Result<Vec<String>, RunError> {
        settings.resolve(&self.compiled.experiment).map(|(_, notes)| notes)
    }

    /// The start and stop time a run with `settings` covers (its defaults from the experiment
    /// annotation when not given).
    pub fn time_span(&self, settings: &RunSettings) -> (f64, f64) {
        match settings.resolve(&self.compiled.experiment) {
            Ok((options, _)) => (options.start, options.stop),
            Err(_) => (f64::NAN, f64::NAN),
        }
    }

    /// Simulates with `settings` as given (a stop time left out is one time unit after the
    /// start: the public runs decide it first, see `crate::plan`), handing each row of
    /// `columns` to `sink` as it is computed; a run that fails has delivered every row before
    /// the failure.
    pub(crate) fn run_into(
        &mut self,
        settings: &RunSettings,
        columns: &[Column],
        sink: &mut dyn RowSink,
    ) -> Result<RunReport, RunError> {
        let (mut options, notes) = settings.resolve(&self.compiled.experiment)?;
        options.params = self.run_parameters().cloned().collect();
        options.starts = self.starts.clone();
        // A run that can be cancelled looks at its flag before it takes each row.
        let mut cancellable;
        let sink: &mut dyn RowSink = match &settings.cancel {
            Some(flag) => {
                cancellable = crate::counters::Cancellable { flag, sink };
                &mut cancellable
            }
            None => sink,
        };
        if let Some(modes) = &mut self.modes {
            let started = Instant::now();
            let summary = modes.simulate(&options, columns, sink)?;
            return Ok(RunReport {
                summary,
                jacobian: None,
                notes,
                jacobian_time: Duration::ZERO,
                compile_time: Duration::ZERO,
                simulate_time: started.elapsed(),
            });
        }
        let started = Instant::now();
        let jacobian = self.prepare_jacobian(&options);
        let jacobian_time = started.elapsed();
        let (native, compile_time) = match options.backend {
            Backend::Auto => self.native(),
            Backend::Interpreter => (None, Duration::ZERO),
        };
        let names: Vec<&str> = columns.iter().map(|c| self.program_name(&c.name)).collect();
        let mut slots = eqm_sim::simulate::columns(&self.compiled.program, Some(&names))
            .map_err(|d| RunError::Model(Box::new(d)))?;
        // The run reads only where each column's value is: the names the caller's columns
        // already hold are not kept twice (a model of a million variables has a million).
        drop(names);
        slots.names = Vec::new();
        let started = Instant::now();
        let summary = eqm_sim::simulate::simulate_with(
            &self.compiled.program,
            self.compiled.init.as_ref(),
            &options,
            &slots,
            native,
            &mut crate::results::ForwardSink { sink, rows: 0 },
        );
        let simulate_time = started.elapsed();
        let summary = summary?;
        Ok(RunReport {
            summary: Summary {
                compile_time,
                ..summary
            },
            jacobian,
            notes,
            jacobian_time,
            compile_time,
            simulate_time,
        })
    }

    /// The symbolic Jacobian for a run with `options`, built the first time a run needs it;
    /// the note says how it was made.
    pub(crate) fn prepare_jacobian(&mut self, options: &eqm_sim::simulate::RunOptions) -> Option<String> {
        if let Some(note) = &self.jacobian {
            return note.clone();
        }
        let note = eqm_sim::simulate::prepare(&mut self.compiled.program, options)?;
        // Native code compiled before the Jacobian existed cannot evaluate its partials.
        self.native = None;
        self.jacobian = Some(Some(note.clone()));
        Some(note)
    }

    /// The run options of a run with `settings` and this model's parameter and start values
    /// set since compiling, with `extra_starts` after them (the model analysis starts its search
    /// from them).
    pub(crate) fn run_options(
        &self,
        settings: &RunSettings,
        extra_starts: &[(String, f64)],
    ) -> Result<eqm_sim::simulate::RunOptions, RunError> {
        let (mut options, _) = settings.resolve(&self.compiled.experiment)?;
        options.params = self.run_parameters().cloned().collect();
        options.starts = self.starts.clone();
        options.starts.extend(extra_starts.iter().cloned());
        Ok(options)
    }

    /// Builds the symbolic Jacobian (for any method: the model analysis needs it) and returns
    /// how it was made: `Ok` with the note, `Err` with the reason difference quotients stand in.
    pub(crate) fn prepare_symbolic_jacobian(&mut self) -> Result<String, String> {
        if self.compiled.program.jacobian().is_none() {
            // Native code compiled before the Jacobian existed cannot evaluate its partials.
            self.native = None;
            self.jacobian = None;
            self.compiled.program.add_jacobian()?;
        }
        let j = self.compiled.program.jacobian().expect("just built");
        Ok(format!(
            "symbolic Jacobian: {} nonzeros, {} partial derivatives",
            j.nonzeros(),
            j.partials.len()
        ))
    }

    /// The program's native code, compiled on first use and kept for the following runs, and
    /// the time compiling it took now.
    pub(crate) fn native(&mut self) -> (Option<Arc<NativeCode>>, Duration) {
        let started = Instant::now();
        if self.native.is_none() {
            self.native = NativeCode::compile(&self.compiled.program).map(Arc::new);
            crate::counters::count_native_compiled();
            return (self.native.clone(), started.elapsed());
        }
        (self.native.clone(), Duration::ZERO)
    }
}
