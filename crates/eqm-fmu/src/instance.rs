//! One FMU instance in safe Rust: the model compiled at instantiation, the values an importer
//! sets before the run, the run advanced by `doStep`, and every value by value reference.
//!
//! Input: the model's compiled [`Model`] and its value references ([`Variables`]), then the
//! calls of an importer in the order FMI allows them (set values, set up the experiment, enter
//! and leave initialization, step, get values, terminate, reset). Output: values, and for each
//! call either success or the reason it failed, as an [`Error`] the C ABI turns into a status
//! and a logged message. It deliberately knows nothing of C: no pointers, no callbacks.

use crate::load::Compile;
use crate::variables::{Causality, Kind, Variable, Variables};
use eqm::fmi::FmiSource;
use eqm::pipeline::ir::slot::Slot;
use eqm::{Advanced, Known, Model, ModelExchange, RunError, RunSettings, SourceMap, StepPlan, SteppedRun};
use self_cell::self_cell;

mod events;
mod state;
pub use events::CsEvent;
pub use state::FmuState;

/// Why a call failed: its message for the importer's logger, and whether the run can go on
/// (`Discard`: the step was not taken, the instance is still usable) or not.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// The call does not fit the instance's state or its arguments (FMI's `fmi2Error`).
    Error(String),
    /// The step could not be completed (`terminate` in the model): `fmi2Discard`.
    Discard(String),
}

impl Error {
    pub fn message(&self) -> &str {
        match self {
            Error::Error(m) | Error::Discard(m) => m,
        }
    }
}

/// A model and the plan of its run, owned together, with the run that borrows them.
pub(crate) struct Owner {
    model: Model,
    plan: StepPlan,
}

/// The run of an instance: advanced by `doStep` (Co-Simulation) or integrated by the importer
/// (Model Exchange).
pub(crate) enum Run<'m> {
    Steps(Box<SteppedRun<'m>>),
    Exchange(Box<ModelExchange<'m>>),
}

impl Run<'_> {
    fn time(&self) -> f64 {
        match self {
            Run::Steps(run) => run.time(),
            Run::Exchange(run) => run.time(),
        }
    }

    fn value_in(&mut self, slot: Slot) -> Result<f64, RunError> {
        match self {
            Run::Steps(run) => run.value_in(slot),
            Run::Exchange(run) => run.value_in(slot),
        }
    }

    fn directional(
        &mut self,
        unknowns: &[Slot],
        knowns: &[Known],
        seed: &[f64],
        out: &mut [f64],
    ) -> Result<(), RunError> {
        match self {
            Run::Steps(run) => run.directional_derivative(unknowns, knowns, seed, out),
            Run::Exchange(run) => run.directional_derivative(unknowns, knowns, seed, out),
        }
    }

    /// A new value of a parameter or input: in Co-Simulation with the event it causes at the
    /// current point; in Model Exchange at the next event the importer signals.
    fn set_parameter(&mut self, name: &str, value: f64) -> Result<Advanced, RunError> {
        match self {
            Run::Steps(run) => run.set_parameter(name, value),
            Run::Exchange(run) => run.set_parameter(name, value).map(|()| Advanced::Reached),
        }
    }
}

self_cell!(
    pub(crate) struct Running {
        owner: Owner,
        #[not_covariant]
        dependent: Run,
    }
);

/// The interface an instance was instantiated for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    CoSimulation,
    ModelExchange,
}

/// Where the instance is in FMI's life cycle.
pub(crate) enum Phase {
    /// Instantiated, or reset: values can be set; the model is not running.
    Idle(Box<Model>),
    /// Initialization mode or stepping: the run exists.
    Running(Box<Running>),
    /// A failure left the model unusable: only free (and reset, which recompiles) remain.
    Broken,
}

/// An FMU instance; see the module documentation.
pub struct Instance {
    pub(crate) interface: Interface,
    pub(crate) phase: Phase,
    variables: Variables,
    /// The experiment the importer set up (`fmi2SetupExperiment`).
    start: f64,
    stop: Option<f64>,
    tolerance: Option<f64>,
    /// Whether the model has been initialized (`fmi2ExitInitializationMode`).
    initialized: bool,
    /// The time `terminate` ended the run, for the importer's status queries.
    terminated_at: Option<f64>,
    /// The model's text, to compile it again on reset.
    recompile: Compile,
    /// The sources the diagnostics of a failed run point into.
    sources: SourceMap,
    /// The FMU's GUID (FMI 2) or instantiation token (FMI 3), which its states name.
    token: String,
    /// Co-Simulation in FMI 3: whether the importer uses Event Mode and allows early return
    /// (`fmi3InstantiateCoSimulation`), and whether the instance is in Event Mode.
    event_mode_used: bool,
    early_return_allowed: bool,
    in_event_mode: bool,
}

impl Instance {
    /// A new instance of the model `compile` builds.
    pub fn new(compile: Compile, interface: Interface) -> Result<Instance, String> {
        let (model, sources) = compile()?;
        let variables = Variables::of(&model);
        let start = model.experiment().start_time.unwrap_or(0.0);
        Ok(Instance {
            interface,
            phase: Phase::Idle(Box::new(model)),
            variables,
            start,
            stop: None,
            tolerance: None,
            initialized: false,
            terminated_at: None,
            recompile: compile,
            sources,
            token: String::new(),
            event_mode_used: false,
            early_return_allowed: false,
            in_event_mode: false,
        })
    }

    /// The instance of the FMU whose GUID or instantiation token is `token`.
    pub fn for_token(mut self, token: &str) -> Instance {
        self.token = token.to_string();
        self
    }

    /// `fmi2SetupExperiment`: the tolerance, start and stop time of the run to come.
    pub fn setup_experiment(&mut self, tolerance: Option<f64>, start: f64, stop: Option<f64>) -> Result<(), Error> {
        if !matches!(self.phase, Phase::Idle(_)) {
            return Err(Error::Error("the experiment is set up before initialization".into()));
        }
        if !start.is_finite() || stop.is_some_and(|s| !(s.is_finite() && s >= start)) {
            return Err(Error::Error(format!(
                "the stop time must be finite and not before the start time {start}"
            )));
        }
        if tolerance.is_some_and(|t| !(t.is_finite() && t > 0.0)) {
            return Err(Error::Error("the tolerance must be a positive number".into()));
        }
        self.start = start;
        self.stop = stop;
        self.tolerance = tolerance;
        Ok(())
    }

    /// `fmi2EnterInitializationMode`: the consistent initial values with the values set so far.
    pub fn enter_initialization(&mut self) -> Result<(), Error> {
        self.restart()
    }

    /// `fmi2ExitInitializationMode`: the run is ready for its first step.
    pub fn exit_initialization(&mut self) -> Result<(), Error> {
        if !matches!(self.phase, Phase::Running(_)) {
            return Err(Error::Error("the model is not in initialization mode".into()));
        }
        self.initialized = true;
        // FMI 3 Co-Simulation with event mode goes from the initialization into Event Mode.
        self.in_event_mode = self.event_mode_used;
        Ok(())
    }

    /// `fmi2DoStep`: advances from `current` (which must be the run's time) by `h`.
    pub fn do_step(&mut self, current: f64, h: f64) -> Result<(), Error> {
        if !self.initialized {
            return Err(Error::Error("a step is taken after the initialization".into()));
        }
        if let Some(at) = self.terminated_at {
            return Err(Error::Discard(format!("the model terminated at t = {at}")));
        }
        if self.in_event_mode {
            return Err(Error::Error(
                "a step is taken in Step Mode: call fmi3EnterStepMode after the event".into(),
            ));
        }
        let Phase::Running(running) = &mut self.phase else {
            return Err(Error::Error("the model is not running".into()));
        };
        let now = running.with_dependent(|_, run| run.time());
        let tolerance = 1e-12 * (1.0 + now.abs());
        if (current - now).abs() > tolerance {
            return Err(Error::Error(format!(
                "the communication point {current} is not the instance's time {now}"
            )));
        }
        if !(h.is_finite() && h >= 0.0) {
            return Err(Error::Error(format!(
                "the communication step {h} must be a non-negative number"
            )));
        }
        if let Some(stop) = self.stop.filter(|s| current + h > *s + tolerance) {
            return Err(Error::Error(format!(
                "the step to {} goes beyond the stop time {stop} set up for the experiment",
                current + h
            )));
        }
        let advanced = running.with_dependent_mut(|_, run| match run {
            Run::Steps(run) => Some(run.advance_to(now + h)),
            Run::Exchange(_) => None,
        });
        match advanced {
            Some(advanced) => self.settle(advanced),
            None => Err(Error::Error(
                "an instance of Model Exchange takes no steps of its own".into(),
            )),
        }
    }

    /// `fmi2Terminate`: the final event of the run, where `terminal()` is true.
    pub fn terminate(&mut self) -> Result<(), Error> {
        match &mut self.phase {
            Phase::Running(running) => {
                let finished = running.with_dependent_mut(|_, run| match run {
                    Run::Steps(run) => run.finish(),
                    Run::Exchange(_) => Ok(()),
                });
                finished.map_err(|e| self.broken(e))
            }
            _ => Ok(()),
        }
    }

    /// `fmi2Reset`: the instance as it was instantiated (the model compiled again, so that
    /// nothing set since stays).
    pub fn reset(&mut self) -> Result<(), Error> {
        let (model, sources) = (self.recompile)().map_err(Error::Error)?;
        self.phase = Phase::Idle(Box::new(model));
        self.sources = sources;
        self.initialized = false;
        self.in_event_mode = false;
        self.terminated_at = None;
        self.stop = None;
        self.tolerance = None;
        Ok(())
    }

    /// `fmi2Get*`: the values of the variables `refs`, into `out`.
    pub fn get(&mut self, refs: &[u32], out: &mut [f64]) -> Result<(), Error> {
        let variables: Vec<&Variable> = refs
            .iter()
            .map(|&r| self.variables.get(r).ok_or_else(|| unknown_reference(r)))
            .collect::<Result<_, _>>()?;
        match &mut self.phase {
            Phase::Idle(model) => {
                let parameters: std::collections::HashMap<String, Option<f64>> =
                    model.parameters().into_iter().map(|p| (p.name, p.value)).collect();
                for (k, variable) in variables.iter().enumerate() {
                    out[k] = value_before_run(&parameters, &variable.name)?;
                }
                Ok(())
            }
            Phase::Running(running) => running.with_dependent_mut(|_, run| {
                let sources = &self.sources;
                for (k, variable) in variables.iter().enumerate() {
                    out[k] = match variable.source {
                        FmiSource::Time => Ok(run.time()),
                        FmiSource::Variable { slot, .. } => run.value_in(slot),
                        FmiSource::Derivative { state } => run.value_in(Slot::Der(state)),
                        FmiSource::EventIndicator { .. } => {
                            return Err(Error::Error(format!(
                                "`{}` is an event indicator, which Co-Simulation does not expose",
                                variable.name
                            )));
                        }
                        FmiSource::Text { .. } => {
                            return Err(Error::Error(format!("`{}` is a String", variable.name)));
                        }
                    }
                    .map_err(|e| Error::Error(rendered(&e, sources)))?;
                }
                Ok(())
            }),
            Phase::Broken => Err(broken_instance()),
        }
    }

    /// The slots of the variables `refs`, for derivatives (`what` names them in the error of a
    /// variable that has none).
    fn derivative_slots(&self, refs: &[u32], what: &str) -> Result<Vec<Slot>, Error> {
        refs.iter()
            .map(|&r| {
                let variable = self.variables.get(r).ok_or_else(|| unknown_reference(r))?;
                match variable.source {
                    FmiSource::Time => Ok(Slot::Time),
                    FmiSource::Variable { slot, .. } => Ok(slot),
                    FmiSource::Derivative { state } => Ok(Slot::Der(state)),
                    FmiSource::EventIndicator { .. } | FmiSource::Text { .. } => {
                        Err(Error::Error(format!("`{}` has no {what}", variable.name)))
                    }
                }
            })
            .collect()
    }

    /// `GetRealOutputDerivatives` / `GetOutputDerivatives` (Co-Simulation): the first
    /// derivative with respect to time of each variable `refs` at the current communication
    /// point (`orders` all 1: higher ones are not provided, `maxOutputDerivativeOrder="1"`).
    pub fn output_derivatives(&mut self, refs: &[u32], orders: &[i32], out: &mut [f64]) -> Result<(), Error> {
        if let Some(order) = orders.iter().find(|&&o| o != 1) {
            return Err(Error::Error(format!(
                "only first derivatives of outputs are provided (maxOutputDerivativeOrder = 1), not of order {order}"
            )));
        }
        let unknowns = self.derivative_slots(refs, "derivative with respect to time")?;
        let Phase::Running(running) = &mut self.phase else {
            return Err(Error::Error(
                "derivatives of outputs are taken once the initialization has started".into(),
            ));
        };
        let sources = &self.sources;
        running
            .with_dependent_mut(|_, run| match run {
                Run::Steps(run) => run.output_derivatives(&unknowns, out),
                Run::Exchange(_) => Err(RunError::Settings(
                    "Model Exchange has no derivatives of outputs: the importer integrates the model".into(),
                )),
            })
            .map_err(|e| Error::Error(rendered(&e, sources)))
    }

    /// `GetDirectionalDerivative`: the derivatives of the variables `unknowns` along `seed` over
    /// the states, inputs and parameters `knowns`, at the current point.
    pub fn directional_derivative(
        &mut self,
        unknowns: &[u32],
        knowns: &[u32],
        seed: &[f64],
        out: &mut [f64],
    ) -> Result<(), Error> {
        let unknowns = self.derivative_slots(unknowns, "directional derivative")?;
        let knowns: Vec<Known> = knowns
            .iter()
            .map(|&r| {
                let variable = self.variables.get(r).ok_or_else(|| unknown_reference(r))?;
                match variable.source {
                    FmiSource::Variable {
                        slot: Slot::State(i), ..
                    } => Ok(Known::State(i)),
                    FmiSource::Variable {
                        slot: Slot::Param(_), ..
                    } => Ok(Known::Parameter(variable.name.clone())),
                    _ => Err(Error::Error(format!(
                        "`{}` is no state, input or parameter: a directional derivative is taken with respect to those",
                        variable.name
                    ))),
                }
            })
            .collect::<Result<_, _>>()?;
        let Phase::Running(running) = &mut self.phase else {
            return Err(Error::Error(
                "directional derivatives are taken once the initialization has started".into(),
            ));
        };
        let sources = &self.sources;
        running
            .with_dependent_mut(|_, run| run.directional(&unknowns, &knowns, seed, out))
            .map_err(|e| Error::Error(rendered(&e, sources)))
    }

    /// `GetAdjointDerivative`: the row vector `seed` (one entry per unknown) times the
    /// Jacobian of `unknowns` over `knowns`, into `out` (one entry per known). Each column of
    /// the Jacobian is the directional derivative along that known, so the adjoint is exactly
    /// the transpose of what [`Self::directional_derivative`] gives, from the same symbolic
    /// Jacobian or differences.
    pub fn adjoint_derivative(
        &mut self,
        unknowns: &[u32],
        knowns: &[u32],
        seed: &[f64],
        out: &mut [f64],
    ) -> Result<(), Error> {
        if seed.len() != unknowns.len() || out.len() != knowns.len() {
            return Err(Error::Error(format!(
                "an adjoint derivative of {} unknowns over {} knowns takes {} seeds and gives {} values, not {} and {}",
                unknowns.len(),
                knowns.len(),
                unknowns.len(),
                knowns.len(),
                seed.len(),
                out.len()
            )));
        }
        let mut direction = vec![0.0; knowns.len()];
        let mut column = vec![0.0; unknowns.len()];
        for j in 0..knowns.len() {
            direction[j] = 1.0;
            let taken = self.directional_derivative(unknowns, knowns, &direction, &mut column);
            direction[j] = 0.0;
            taken?;
            out[j] = seed.iter().zip(&column).map(|(s, c)| s * c).sum();
        }
        Ok(())
    }

    /// Checks that every variable of `refs` is of one of `kinds` (an Integer is not read as a
    /// Real; FMI 2 reads enumerations as Integers, FMI 3 apart from them).
    pub fn check_kinds(&self, refs: &[u32], kinds: &[Kind]) -> Result<(), Error> {
        for &r in refs {
            let variable = self.variables.get(r).ok_or_else(|| unknown_reference(r))?;
            if !kinds.contains(&variable.kind) {
                return Err(Error::Error(format!(
                    "`{}` (value reference {r}) is {:?}, not {:?}",
                    variable.name, variable.kind, kinds[0]
                )));
            }
        }
        Ok(())
    }

    /// `fmi2Set*`: new values of parameters and inputs; before the initialization any
    /// parameter or start value, after it the inputs and the tunable parameters.
    pub fn set(&mut self, refs: &[u32], values: &[f64]) -> Result<(), Error> {
        // In initialization mode the values go to the model, and the run starts again from
        // them once, after the last.
        let restart = matches!(self.phase, Phase::Running(_)) && !self.initialized;
        if restart {
            self.phase = Phase::Idle(Box::new(take_model(&mut self.phase)));
        }
        let set = self.set_each(refs, values);
        match restart {
            true => self.restart().and(set),
            false => set,
        }
    }

    /// [`Instance::set`] value by value.
    fn set_each(&mut self, refs: &[u32], values: &[f64]) -> Result<(), Error> {
        for (&r, &value) in refs.iter().zip(values) {
            let variable = self.variables.get(r).ok_or_else(|| unknown_reference(r))?;
            let name = variable.name.clone();
            let causality = variable.causality;
            if !value.is_finite() {
                return Err(Error::Error(format!("`{name}` cannot be set to {value}")));
            }
            // A fixed parameter shaped the compiled model (its value was used when the model
            // was flattened), so no phase can change it without compiling again.
            if variable.fixed {
                return Err(Error::Error(format!(
                    "`{name}` is a fixed parameter: the compiled model depends on its value, so it cannot be set without compiling again"
                )));
            }
            // An enumeration's values are the positions of its literals: anything else names
            // no literal.
            let literals = variable.literals;
            if variable.kind == Kind::Enumeration && !(value >= 1.0 && value <= f64::from(literals)) {
                return Err(Error::Error(format!(
                    "`{name}` cannot be set to {value}: its enumeration type has the values 1 to {literals}"
                )));
            }
            match &mut self.phase {
                Phase::Idle(model) => set_before_run(model, &name, causality, value)?,
                Phase::Running(running) if matches!(causality, Causality::Input | Causality::Parameter) => {
                    let set = running.with_dependent_mut(|_, run| run.set_parameter(&name, value));
                    self.settle(set)?;
                }
                Phase::Running(_) => {
                    return Err(Error::Error(format!(
                        "`{name}` can only be set before the initialization ends"
                    )));
                }
                Phase::Broken => return Err(broken_instance()),
            }
        }
        Ok(())
    }

    /// The instance of an FMI 3 FMU: a value reference of an array names all its elements.
    pub fn with_arrays(mut self) -> Instance {
        self.variables = std::mem::take(&mut self.variables).with_arrays();
        self
    }

    /// The scalars the value references `refs` name (see [`crate::variables::Variables::elements`]).
    pub fn elements(&self, refs: &[u32]) -> Vec<u32> {
        self.variables.elements(refs)
    }

    /// `GetString`: the texts of the String parameters and constants `refs` (fixed when the
    /// model was compiled, so the same in every phase).
    pub fn texts(&self, refs: &[u32]) -> Result<Vec<String>, Error> {
        self.check_kinds(refs, &[Kind::String])?;
        Ok(refs
            .iter()
            .filter_map(|&r| self.variables.get(r).and_then(|v| v.text.clone()))
            .collect())
    }

    /// `SetString`: refused, with the reason: a String parameter's text is part of the
    /// compiled model (a fixed parameter), and a constant is constant.
    pub fn set_texts(&self, refs: &[u32]) -> Result<(), Error> {
        self.check_kinds(refs, &[Kind::String])?;
        match refs.first().and_then(|&r| self.variables.get(r)) {
            None => Ok(()),
            Some(v) if v.fixed => Err(Error::Error(format!(
                "`{}` is a fixed String parameter: the compiled model depends on its text, so it cannot be set without compiling again",
                v.name
            ))),
            Some(v) => Err(Error::Error(format!("`{}` is a String constant", v.name))),
        }
    }

    /// Where `terminate` ended the run, for `fmi2GetBooleanStatus(fmi2Terminated)`.
    pub fn terminated(&self) -> bool {
        self.terminated_at.is_some()
    }

    /// The time of the last completed step (`fmi2LastSuccessfulTime`).
    pub fn time(&self) -> f64 {
        match &self.phase {
            Phase::Running(running) => running.with_dependent(|_, run| run.time()),
            _ => self.start,
        }
    }

    /// The value references and their variables.
    pub fn variables(&self) -> &Variables {
        &self.variables
    }

    /// Starts the run from the model's current values (initialization mode).
    fn restart(&mut self) -> Result<(), Error> {
        let mut model = take_model(&mut self.phase);
        let settings = RunSettings {
            start: Some(self.start),
            stop: Some(self.stop.unwrap_or(f64::MAX / 4.0)),
            rtol: self.tolerance,
            atol: self.tolerance,
            ..RunSettings::default()
        };
        let plan = match model.plan_stepped(&settings) {
            Ok(plan) => plan,
            Err(e) => {
                self.phase = Phase::Idle(Box::new(model));
                return Err(Error::Error(rendered(&e, &self.sources)));
            }
        };
        let interface = self.interface;
        let policy = self.event_policy();
        let started = Running::try_new_or_recover(Owner { model, plan }, |owner| match interface {
            Interface::CoSimulation => owner.model.start_stepped(&owner.plan).map(|mut run| {
                run.set_event_policy(policy);
                Run::Steps(Box::new(run))
            }),
            Interface::ModelExchange => owner
                .model
                .start_exchange(&owner.plan)
                .map(|run| Run::Exchange(Box::new(run))),
        });
        match started {
            Ok(running) => {
                self.phase = Phase::Running(Box::new(running));
                Ok(())
            }
            Err((owner, e)) => {
                // The model stays usable: another value may let it start.
                self.phase = Phase::Idle(Box::new(owner.model));
                Err(Error::Error(rendered(&e, &self.sources)))
            }
        }
    }

    /// The result of a call that moved the run: `terminate` ends it (the step is discarded
    /// from there on), a failure breaks the instance.
    pub(crate) fn settle(&mut self, advanced: Result<Advanced, RunError>) -> Result<(), Error> {
        match advanced {
            // A step that stopped before an event the importer handles in Event Mode succeeded.
            Ok(Advanced::Reached | Advanced::EventDue { .. }) => Ok(()),
            Ok(Advanced::Terminated { time, message }) => {
                self.terminated_at = Some(time);
                Err(Error::Discard(format!("the model terminated at t = {time}: {message}")))
            }
            Err(e) => Err(self.broken(e)),
        }
    }

    /// The text of a failed run, as EQM writes it.
    pub(crate) fn render(&self, e: &RunError) -> String {
        rendered(e, &self.sources)
    }

    /// Records that `terminate` ended the run at the current time.
    pub(crate) fn mark_terminated(&mut self) {
        self.terminated_at = Some(self.time());
    }

    /// The instance after a failure of its run: unusable until reset.
    pub(crate) fn broken(&mut self, e: RunError) -> Error {
        self.phase = Phase::Broken;
        Error::Error(rendered(&e, &self.sources))
    }
}

/// The model of a phase, leaving the phase broken until it is put back.
fn take_model(phase: &mut Phase) -> Model {
    match std::mem::replace(phase, Phase::Broken) {
        Phase::Idle(model) => *model,
        Phase::Running(running) => running.into_owner().model,
        Phase::Broken => unreachable!("a broken instance is reset before it runs again"),
    }
}

/// Sets `name` on a model that is not running: a parameter or input as a parameter, anything
/// else as a start value.
fn set_before_run(model: &mut Model, name: &str, causality: Causality, value: f64) -> Result<(), Error> {
    let set = match causality {
        Causality::Input | Causality::Parameter => model.set_parameter(name, value),
        Causality::Other => model.set_start(name, value),
    };
    set.map_err(|d| Error::Error(d.message.clone()))
}

/// The value of `name` before the run: a parameter's (`parameters` by name), once it does not
/// depend on the initialization.
fn value_before_run(parameters: &std::collections::HashMap<String, Option<f64>>, name: &str) -> Result<f64, Error> {
    match parameters.get(name) {
        Some(Some(value)) => Ok(*value),
        Some(None) => Err(Error::Error(format!(
            "`{name}` is computed when the initialization starts"
        ))),
        None => Err(Error::Error(format!(
            "`{name}` has a value once the initialization has started"
        ))),
    }
}

/// The text of a failed run as EQM writes it: the diagnostic with its code and source
/// excerpt, then what failed and when.
fn rendered(e: &RunError, sources: &SourceMap) -> String {
    match e {
        RunError::Failed {
            diagnostic: Some(d), ..
        } => {
            format!("{}{e}", eqm::pipeline::diag::render(d, sources, false))
        }
        RunError::Model(d) => eqm::pipeline::diag::render(d, sources, false),
        _ => e.to_string(),
    }
}

fn unknown_reference(r: u32) -> Error {
    Error::Error(format!("the model has no variable with value reference {r}"))
}

fn broken_instance() -> Error {
    Error::Error("an earlier failure left the instance unusable; reset it".into())
}
