//! Model analysis before simulating: the steady state, the linearisation there (or at a time of
//! a simulation), the modes of the linearised system, its time scales and stiffness.
//!
//! Input: a compiled [`Model`] and [`AnalyzeOptions`]. Output: a [`ModelAnalysis`] with every
//! number, printed by [`text`] and [`json`]; or a [`RunError`] (`E08xx` for a model the analysis
//! cannot handle, the simulation's error when `--at` needs one and it fails).
//!
//! The steps:
//! 1. The start point: the initialization problem solved at the start time, with the start
//!    values given for the search (`from`). Relations are frozen where it leaves them.
//! 2. The linear invariants of the field (combinations of states whose rate is zero
//!    everywhere), or a combination whose rate is a nonzero constant: then there is no steady
//!    state, and the model is linearised at the start point instead (module `steady`).
//! 3. The steady state `f(x) = 0` on the manifold the invariants fix, by Newton's method with a
//!    line search, else pseudo-transient continuation; the algebraic variables are computed with
//!    the states by the compiled program. The condition number of the system solved says how
//!    many digits the result may have lost. At a steady state where a relation of the model
//!    would take another value, the relations are changed and the search is repeated.
//! 4. `A = ∂f/∂x` at that point from the symbolic Jacobian (central differences only where the
//!    program has none), and, for inputs and outputs of the model itself, `B = ∂f/∂u`,
//!    `C = ∂y/∂x` and `D = ∂y/∂u` by central differences (the symbolic Jacobian covers the
//!    states only). An index-reduced model is linearised in its state-space form: its states
//!    are those of the dummy-derivative form it was compiled in.
//! 5. The modes of `A` ([`modal`]).
//!
//! Deliberately not done: variable-structure models and models with `delay` (their
//! linearisation is not an ordinary state-space system) are refused with a diagnostic; models
//! in the embedding form of index reduction are refused (their constraints would add
//! eigenvalues of the projection, not of the model); discrete variables keep the values they
//! have at the start; only one steady state is sought.

mod field;
pub mod modal;
mod report;
mod steady;

pub use field::JacobianSource;
pub use modal::{Modal, Mode, Stability, eigenvalues, time_constant};
pub use nalgebra::{Complex, DMatrix};
pub use report::{advice_json, advice_text, json, sweep_json, sweep_text, text};
pub use steady::{Invariant, SolveMethod};

use crate::model::Model;
use crate::run::{RunError, RunSettings};
use crate::sweep::SweepError;
use eqm_compile::dae::VarKind;
use eqm_diag::Diagnostic;
use eqm_ir::slot::Slot;
use eqm_sim::instance::Instance;
use field::Field;
use std::sync::Arc;

/// What to analyse.
#[derive(Debug, Clone, Default)]
pub struct AnalyzeOptions {
    /// Linearise at this time of a simulation from the start instead of at the steady state.
    pub at: Option<f64>,
    /// Start values for the search of the steady state (or of the simulation with `at`), by
    /// variable name, after the model's own.
    pub from: Vec<(String, f64)>,
    /// The inputs (the columns of `B` and `D`) and outputs (the rows of `C` and `D`), by name;
    /// with `own_interface` those of the model itself instead.
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    /// Linearise with the model's own inputs and outputs (declared in the model or its own
    /// connectors; see [`Model::own_interface`]), as [`AnalyzeOptions::of_model`] asks.
    pub own_interface: bool,
}

impl AnalyzeOptions {
    /// The analysis a front end asks for (`eqm analyze`, the REPL's `:analyze`): at the
    /// steady state, or at time `at` of a simulation, searched from the start values `from`,
    /// with the model's own inputs and outputs. The model itself is compiled for it by
    /// [`crate::Session::compile_for_analysis`].
    pub fn of_model(at: Option<f64>, from: Vec<(String, f64)>) -> AnalyzeOptions {
        AnalyzeOptions {
            at,
            from,
            own_interface: true,
            ..AnalyzeOptions::default()
        }
    }

    /// The inputs and outputs to linearise with, for `model`.
    fn interface(&self, model: &Model) -> (Vec<String>, Vec<String>) {
        if self.own_interface {
            let (inputs, outputs) = model.own_interface();
            (inputs.to_vec(), outputs.to_vec())
        } else {
            (self.inputs.clone(), self.outputs.clone())
        }
    }
}

/// A state of the analysed system.
#[derive(Debug, Clone, PartialEq)]
pub struct StateInfo {
    pub name: String,
    pub unit: Option<Arc<str>>,
}

/// A steady state.
#[derive(Debug, Clone)]
pub struct SteadyState {
    pub x: Vec<f64>,
    pub method: SolveMethod,
    /// `max |f(x)|` there.
    pub residual: f64,
    /// The 2-norm condition number of the Jacobian of the system solved there (bordered by the
    /// invariants when the model has any).
    pub condition: f64,
}

impl SteadyState {
    /// About how many significant digits the solution lost to the conditioning: `log10` of the
    /// condition number.
    pub fn digits_lost(&self) -> f64 {
        self.condition.max(1.0).log10()
    }
}

/// What the search for a steady state found.
#[derive(Debug, Clone)]
pub enum Steady {
    Found(SteadyState),
    /// There is none: the combination `Σ combination[i]·x[i]` changes at the constant `rate`.
    /// With `relations`, this holds while the model's relations keep the values they have at
    /// the start: a relation that changes on the way changes the equations, which the analysis
    /// does not follow.
    Impossible {
        combination: Vec<f64>,
        rate: f64,
        relations: bool,
    },
    /// The system is singular at the point reached (an unknown it does not determine, or a
    /// nonlinear invariant): no point is returned as the steady state.
    Singular {
        x: Vec<f64>,
    },
    /// The search did not converge.
    NotFound {
        reason: String,
    },
    /// Not sought: the linearisation is at a time of a simulation.
    NotSought,
}

/// Where the model was linearised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Point {
    SteadyState,
    /// At this time of a simulation from the start.
    Time(f64),
    /// At the start point, because no steady state was found.
    Start,
}

/// The linear system at the point: `Δx' = AΔx + BΔu`, `Δy = CΔx + DΔu`.
#[derive(Debug, Clone)]
pub struct Linearization {
    /// The states at the point.
    pub x: Vec<f64>,
    /// `f(x)` there (zero at a steady state).
    pub f: Vec<f64>,
    pub a: DMatrix<f64>,
    pub source: JacobianSource,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    pub b: DMatrix<f64>,
    pub c: DMatrix<f64>,
    pub d: DMatrix<f64>,
}

/// The analysis of a model; see the module documentation.
#[derive(Debug, Clone)]
pub struct ModelAnalysis {
    pub model: String,
    pub states: Vec<StateInfo>,
    /// The time the field is evaluated at (the start time, or `at`).
    pub time: f64,
    /// The consistent initial states.
    pub start: Vec<f64>,
    pub steady: Steady,
    pub invariants: Vec<Invariant>,
    pub point: Point,
    /// The named algebraic variables at the point, by name.
    pub variables: Vec<(String, f64)>,
    pub linearization: Linearization,
    pub modal: Modal,
    /// What the reader should know about the assumptions (relations frozen, time fixed).
    pub notes: Vec<String>,
    /// What may make the numbers wrong (conditioning).
    pub warnings: Vec<String>,
}

impl ModelAnalysis {
    /// The eigenvalues of `A`, slowest mode first.
    pub fn eigenvalues(&self) -> Vec<Complex<f64>> {
        self.modal.modes.iter().map(|m| m.eigenvalue).collect()
    }

    /// The eigenvalues without those found to be zero within rounding (conserved quantities,
    /// integrators), whose time scale is no time scale.
    pub fn timed_eigenvalues(&self) -> Vec<Complex<f64>> {
        self.modal
            .modes
            .iter()
            .filter(|m| !m.zero)
            .map(|m| m.eigenvalue)
            .collect()
    }

    /// The advice on stop time, step and method for these eigenvalues, judging every named
    /// method and `user`'s tableau (see [`eqm_integrators::stability`]); `None` when no mode has a
    /// finite time scale.
    pub fn advice(&self, user: Option<&eqm_integrators::Method>) -> Option<eqm_integrators::stability::Advice> {
        use eqm_integrators::stability::{advise, judged_methods};
        advise(&self.timed_eigenvalues(), &judged_methods(user))
    }

    /// The names of the states, in the order of the rows and columns of `A`.
    pub fn state_names(&self) -> Vec<&str> {
        self.states.iter().map(|s| s.name.as_str()).collect()
    }
}

/// One combination of the parameter values of an analysis sweep, and its analysis.
pub struct SweptAnalysis {
    /// The values, in the order of the axes.
    pub values: Vec<f64>,
    pub outcome: Result<ModelAnalysis, RunError>,
}

/// The analysis of `model` for every combination of the sweep `axes`, in the order of
/// [`crate::sweep::combinations`], with the notes on parameters that shape the model (compiled
/// once for each combination of their values; the others are set without recompiling).
/// The axes are checked as those of a run's sweep ([`crate::sweep::check_axes`]) and the model
/// compiled as [`crate::Session::compile_for_analysis`] compiles it. [`SweepError::Model`]
/// after a diagnostic of the session (an axis that names no parameter of the model).
pub fn sweep(
    session: &mut crate::Session,
    model: Option<&str>,
    options: &crate::ModelOptions,
    axes: &[crate::SweepAxis],
    request: &AnalyzeOptions,
) -> Result<(Vec<SweptAnalysis>, Vec<String>), SweepError> {
    crate::sweep::check_axes(axes, options)?;
    if session.has_errors() {
        return Err(SweepError::Model);
    }
    let mut analyses: Vec<Option<SweptAnalysis>> = Vec::new();
    let (_, notes) = crate::sweep::for_each_group(
        session,
        model,
        &options.for_analysis(),
        axes,
        &mut |mut compiled, structural, combos, members| {
            if analyses.is_empty() {
                analyses = (0..combos.len()).map(|_| None).collect();
            }
            for &i in members {
                let values = combos[i].clone();
                let set = axes
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| !structural.contains(k))
                    .try_for_each(|(k, axis)| compiled.set_parameter(&axis.name, values[k]));
                let outcome = match set {
                    Ok(()) => compiled.analyze(request),
                    Err(d) => Err(RunError::Model(Box::new(d))),
                };
                analyses[i] = Some(SweptAnalysis { values, outcome });
            }
            true
        },
    )
    .ok_or(SweepError::Model)?;
    Ok((analyses.into_iter().flatten().collect(), notes))
}

/// A diagnostic of the analysis at the model's declaration.
fn refuse(model: &Model, code: &'static str, message: String, help: &str) -> RunError {
    RunError::Model(Box::new(
        Diagnostic::error(code, message, model.program().model_span(), "this model").with_help(help.to_string()),
    ))
}

/// Refuses a model whose linearisation is no state-space system: one that changes its
/// structure at events, one in the embedding form of index reduction, one with `delay` or
/// `spatialDistribution`.
fn refuse_unsupported(model: &Model) -> Result<(), RunError> {
    if model.variable_structure().is_some() {
        return Err(refuse(
            model,
            "E0801",
            format!(
                "`{}` changes its structure at events, which the analysis cannot linearise",
                model.name()
            ),
            "simulate it with `eqm run`; each mode can be analysed as a model of its own",
        ));
    }
    if model.form().is_some_and(|f| f.embedding) {
        return Err(refuse(
            model,
            "E0802",
            format!(
                "`{}` is compiled in the embedding form of index reduction, which has no state-space form to linearise",
                model.name()
            ),
            "compile it with the dummy-derivative form (`--index-reduction dummy`)",
        ));
    }
    if !model.program().events().delays.is_empty() {
        return Err(refuse(
            model,
            "E0803",
            format!(
                "`{}` uses `delay`: its linearisation is a delay equation, not a state-space system",
                model.name()
            ),
            "replace the delay by a chain of first-order lags to analyse the model",
        ));
    }
    if !model.program().events().spatials.is_empty() {
        return Err(refuse(
            model,
            "E0803",
            format!(
                "`{}` uses `spatialDistribution`: its linearisation is a transport equation, not a state-space system",
                model.name()
            ),
            "replace the transport by a chain of first-order lags to analyse the model",
        ));
    }
    Ok(())
}

/// The analysis of a model without states: its algebraic values at `probe`, nothing to
/// linearise.
fn stateless(
    field: &mut Field<'_, '_>,
    probe: &[f64],
    model: String,
    time: f64,
    start: Vec<f64>,
    notes: Vec<String>,
) -> ModelAnalysis {
    ModelAnalysis {
        model,
        states: Vec::new(),
        time,
        start,
        steady: Steady::NotSought,
        invariants: Vec::new(),
        point: Point::Start,
        variables: algebraic_values(field, probe),
        linearization: Linearization {
            x: Vec::new(),
            f: Vec::new(),
            a: DMatrix::zeros(0, 0),
            source: JacobianSource::Symbolic,
            inputs: Vec::new(),
            outputs: Vec::new(),
            b: DMatrix::zeros(0, 0),
            c: DMatrix::zeros(0, 0),
            d: DMatrix::zeros(0, 0),
        },
        modal: modal::analyse(&DMatrix::zeros(0, 0), None, 0, 1.0),
        notes,
        warnings: Vec::new(),
    }
}

/// The warnings about the accuracy of a steady state: digits lost to the conditioning of the
/// system solved, and a Jacobian `a` that nearly vanishes there against `j0` at the start (a
/// multiple root, which the condition number relative to `a` does not show).
fn steady_warnings(steady: &Steady, a: &DMatrix<f64>, j0: &DMatrix<f64>, invariants: usize) -> Vec<String> {
    let mut warnings = Vec::new();
    let Steady::Found(s) = steady else {
        return warnings;
    };
    let lost = s.digits_lost();
    if lost > 8.0 {
        warnings.push(format!(
            "the Jacobian at the steady state has condition number {}: about {:.0} of the 16 significant digits are lost, so the steady state may have only {:.0} correct digits",
            crate::format_number(s.condition),
            lost,
            (16.0 - lost).max(0.0)
        ));
    }
    if invariants == 0 {
        let smallest = smallest_singular_value(a);
        let reference = j0.norm();
        if reference > 0.0 && smallest <= 1e-8 * reference {
            warnings.push(format!(
                "the Jacobian nearly vanishes at the steady state ({} against {} at the start): a multiple root, determined only to about half of the significant digits",
                crate::format_number(smallest),
                crate::format_number(reference)
            ));
        }
    }
    warnings
}

/// An instance of `model`'s program with its parameter values and the start values of the
/// search (`options.from` after the model's own), and the start point: the states the
/// initialization gives at the start time, and that time.
fn start_point<'m>(model: &'m Model, options: &AnalyzeOptions) -> Result<(Instance<'m>, Vec<f64>, f64), RunError> {
    let run_options = model.run_options(&RunSettings::default(), &options.from)?;
    let mut instance = Instance::new(model.program()).map_err(|d| RunError::Model(Box::new(d)))?;
    for (name, value) in &run_options.params {
        instance
            .set_param(name, *value)
            .map_err(|d| RunError::Model(Box::new(d)))?;
    }
    instance.set_start_values(&run_options.starts);
    let (x0, _, _) = eqm_sim::initial::initial_states(&mut instance, model.init_program(), &run_options)?;
    Ok((instance, x0, run_options.start))
}

/// Whether `program` makes external objects. Their functions may keep state that only the
/// run's own events advance (a time table's current event interval): evaluated at another time
/// with the discrete variables held, such a function reads state it was never given, which
/// in C code is a crash, so such a model is evaluated at its start time only.
fn has_external_objects(program: &eqm_compile::exec::ExecProgram) -> bool {
    program.externals().iter().any(|e| e.destructor.is_some())
}

/// The notes on the point analysed at `probe`: relations and discrete variables held (a model
/// with `events`), time fixed at `time` (a model that depends on time explicitly, found by
/// evaluating it at other times when `probe_time`).
fn point_notes(field: &mut Field<'_, '_>, probe: &[f64], events: bool, probe_time: bool, time: f64) -> Vec<String> {
    let mut notes = Vec::new();
    if events {
        notes.push(
            "the model has events: its relations are held at their values at the point analysed, and discrete variables at their values at the start"
                .to_string(),
        );
    }
    if !probe_time {
        notes.push(format!(
            "the model has external objects: the field is taken at time {} only",
            crate::format_number(time)
        ));
    } else if depends_on_time(field, probe) {
        notes.push(format!(
            "the model depends on time explicitly (a source): the field is taken with time fixed at {}",
            crate::format_number(time)
        ));
    }
    notes
}

/// Analyses `model`; see the module documentation.
pub fn analyze(model: &mut Model, options: &AnalyzeOptions) -> Result<ModelAnalysis, RunError> {
    refuse_unsupported(model)?;
    for (name, value) in &options.from {
        eqm_sim::instance::check_start_value(model.program(), name, *value)
            .map_err(|d| RunError::Model(Box::new(d)))?;
    }
    let objects = has_external_objects(model.program());
    if objects && let Some(at) = options.at {
        let start = model.time_span(&RunSettings::default()).0;
        if at != start {
            return Err(refuse(
                model,
                "E0804",
                format!(
                    "`{}` has external objects, whose functions keep what the run's events made them remember: the analysis can take it only at the start time {}",
                    model.name(),
                    crate::format_number(start)
                ),
                "analyse it at the start (without `--at`), or simulate it with `eqm run`",
            ));
        }
    }
    let (inputs, outputs) = options.interface(model);
    let jacobian_note = model.prepare_symbolic_jacobian();
    let mut notes = Vec::new();
    if let Err(reason) = &jacobian_note {
        notes.push(format!("the Jacobian is taken by central differences: {reason}"));
    }
    // The states at `at`, from a simulation that starts where the analysis does.
    let at_state = match options.at {
        Some(t) => Some(state_at(model, options, t)?),
        None => None,
    };
    let program = model.program();
    let states = state_infos(program);
    let (mut instance, x0, t0) = start_point(model, options)?;
    let time = options.at.unwrap_or(t0);
    let failed = |f: eqm_ir::failure::EvalFailure| RunError::Failed {
        time,
        message: "the model could not be evaluated for the analysis".to_string(),
        diagnostic: Some(Box::new(program.failure_diagnostic(&f))),
        warnings: Vec::new(),
    };
    let mut field = Field {
        instance: &mut instance,
        t: time,
    };
    if let Some(x) = &at_state {
        set_relations(&mut field, x);
    }
    let probe = at_state.clone().unwrap_or_else(|| x0.clone());
    notes.extend(point_notes(
        &mut field,
        &probe,
        !program.events().is_empty(),
        !objects,
        time,
    ));
    let model_name = program.symbols().model().to_string();
    if states.is_empty() {
        return Ok(stateless(&mut field, &probe, model_name, time, x0, notes));
    }
    let (j0, _) = field.jacobian(&probe).map_err(failed)?;
    let space = steady::null_space(&mut field, &probe, &j0).map_err(failed)?;
    let invariants = steady::readable_invariants(&space.invariants, &probe);
    let steady_result = match (&at_state, &space.drift) {
        (Some(_), _) => Steady::NotSought,
        (None, Some((combination, rate))) => Steady::Impossible {
            combination: combination.iter().map(|c| steady::clean(*c)).collect(),
            rate: *rate,
            relations: !program.events().surfaces.is_empty(),
        },
        (None, None) => search(&mut field, &x0, &space, program)?,
    };
    let (point, x) = match (&steady_result, &at_state) {
        (_, Some(x)) => (Point::Time(time), x.clone()),
        (Steady::Found(s), None) => (Point::SteadyState, s.x.clone()),
        (_, None) => (Point::Start, x0.clone()),
    };
    let (a, source) = field.jacobian(&x).map_err(failed)?;
    let mut warnings = steady_warnings(&steady_result, &a, &j0, space.invariants.ncols());
    let f = field.f(&x).map_err(failed)?;
    let (b, c, d) = input_output(&mut field, &x, &inputs, &outputs).map_err(failed)?;
    let variables = algebraic_values(&mut field, &x);
    let dx0: Option<Vec<f64>> = match point {
        Point::SteadyState => Some(x0.iter().zip(&x).map(|(a, b)| a - b).collect()),
        _ => None,
    };
    if !a.iter().all(|v| v.is_finite()) {
        warnings.push(
            "the Jacobian has entries that are not finite at the point of linearisation: no eigenvalues are computed"
                .to_string(),
        );
    }
    let point_condition = match (&steady_result, point) {
        (Steady::Found(s), Point::SteadyState) => s.condition,
        _ => 1.0,
    };
    let modal = modal::analyse(&a, dx0.as_deref(), invariants.len(), point_condition);
    Ok(ModelAnalysis {
        model: model_name,
        states,
        time,
        start: x0,
        steady: steady_result,
        invariants,
        point,
        variables,
        linearization: Linearization {
            x,
            f,
            a,
            source,
            inputs,
            outputs,
            b,
            c,
            d,
        },
        modal,
        notes,
        warnings,
    })
}

impl Model {
    /// The analysis of this model (see [`crate::analyze`]). Start values given in
    /// `options.from` hold for this analysis only, except with `options.at`, where they are
    /// set for the model's runs like [`Model::set_start`].
    pub fn analyze(&mut self, options: &AnalyzeOptions) -> Result<ModelAnalysis, RunError> {
        analyze(self, options)
    }
}

/// The smallest singular value of a square matrix (zero when it has entries that are not
/// finite, whose SVD would not converge).
fn smallest_singular_value(m: &DMatrix<f64>) -> f64 {
    if m.nrows() == 0 || !m.iter().all(|v| v.is_finite()) {
        return 0.0;
    }
    m.clone()
        .svd(false, false)
        .singular_values
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
}

/// The states of `program` in slot order.
fn state_infos(program: &eqm_compile::exec::ExecProgram) -> Vec<StateInfo> {
    let mut states: Vec<(u32, StateInfo)> = program
        .variables()
        .filter_map(|(name, v, slot, _)| match slot {
            Slot::State(i) => Some((
                i,
                StateInfo {
                    name: name.to_string(),
                    unit: program.symbols().get(v).unit.clone(),
                },
            )),
            _ => None,
        })
        .collect();
    states.sort_by_key(|(i, _)| *i);
    states.dedup_by_key(|(i, _)| *i);
    states.into_iter().map(|(_, s)| s).collect()
}

/// The states at time `t` of a simulation of `model` from its start.
fn state_at(model: &mut Model, options: &AnalyzeOptions, t: f64) -> Result<Vec<f64>, RunError> {
    for (name, value) in &options.from {
        model
            .set_start(name, *value)
            .map_err(|d| RunError::Model(Box::new(d)))?;
    }
    let names: Vec<String> = state_infos(model.program()).into_iter().map(|s| s.name).collect();
    let start = model.time_span(&RunSettings::default()).0;
    if !(t >= start && t.is_finite()) {
        return Err(RunError::Settings(format!("--at {t} is before the start time {start}")));
    }
    let settings = RunSettings {
        stop: Some(t),
        variables: Some(names.clone()),
        // Only the last row is read; a coarse grid keeps the run cheap.
        interval: Some(((t - start) / 10.0).max(f64::MIN_POSITIVE)),
        ..RunSettings::default()
    };
    let result = model.simulate(&settings)?;
    names
        .iter()
        .map(|n| {
            result
                .final_value(n)
                .ok_or_else(|| RunError::Settings(format!("the state `{n}` is not in the results")))
        })
        .collect()
}

/// Sets the model's relations to the values they take at `x` (by the signs of its
/// zero-crossing functions there); true when one changed.
fn set_relations(field: &mut Field<'_, '_>, x: &[f64]) -> bool {
    let program = field.instance.program();
    let surfaces = &program.events().surfaces;
    if surfaces.is_empty() {
        return false;
    }
    let mut values = vec![0.0; surfaces.len()];
    let mut dx = vec![0.0; x.len()];
    if field.instance.surfaces(field.t, x, &mut dx, &mut values).is_err() {
        return false;
    }
    let mut changed = false;
    for (surface, value) in surfaces.iter().zip(&values) {
        let sign = if *value > 0.0 {
            1
        } else if *value < 0.0 {
            -1
        } else {
            0
        };
        for &(slot, test) in &surface.relations {
            let holds = f64::from(u8::from(test.holds(sign)));
            if let Slot::Work(k) = slot
                && field.instance.work().get(k as usize) != Some(&holds)
            {
                field.instance.set_work(k, holds);
                changed = true;
            }
        }
    }
    changed
}

/// Whether `f` at `x` changes with time alone.
fn depends_on_time(field: &mut Field<'_, '_>, x: &[f64]) -> bool {
    let t = field.t;
    let Ok(f0) = field.f(x) else { return false };
    let mut differs = false;
    for dt in [0.37, 1.0, 13.0] {
        field.t = t + dt;
        if let Ok(f1) = field.f(x)
            && f1.iter().zip(&f0).any(|(a, b)| (a - b).abs() > 1e-12 * (1.0 + b.abs()))
        {
            differs = true;
        }
    }
    field.t = t;
    let _ = field.f(x);
    differs
}

/// The steady state from `x0`, with the relations made consistent with it (a few passes).
fn search(
    field: &mut Field<'_, '_>,
    x0: &[f64],
    space: &steady::NullSpace,
    program: &eqm_compile::exec::ExecProgram,
) -> Result<Steady, RunError> {
    const PASSES: usize = 5;
    let mut start = x0.to_vec();
    for _ in 0..PASSES {
        match steady::solve(field, &start, space) {
            Ok(s) => {
                if !set_relations(field, &s.x) {
                    return Ok(Steady::Found(SteadyState {
                        x: s.x,
                        method: s.method,
                        residual: s.residual,
                        condition: s.condition,
                    }));
                }
                // A relation takes another value at the candidate: solve again with it, from
                // there, on the same manifold (the invariants keep the start point's values).
                start = s.x;
            }
            Err(steady::Failure::Singular { x }) => return Ok(Steady::Singular { x }),
            Err(steady::Failure::NoConvergence { reason }) => return Ok(Steady::NotFound { reason }),
            Err(steady::Failure::Evaluation(f)) => {
                return Ok(Steady::NotFound {
                    reason: format!(
                        "the model could not be evaluated on the way: {}",
                        program.failure_diagnostic(&f).message
                    ),
                });
            }
        }
    }
    Ok(Steady::NotFound {
        reason: "the relations of the model change at every candidate: the trajectories switch between regions without settling".into(),
    })
}

/// `B = ∂f/∂u`, `C = ∂y/∂x` and `D = ∂y/∂u` at `x` by central differences.
type Matrices = (DMatrix<f64>, DMatrix<f64>, DMatrix<f64>);

fn input_output(
    field: &mut Field<'_, '_>,
    x: &[f64],
    inputs: &[String],
    outputs: &[String],
) -> Result<Matrices, eqm_ir::failure::EvalFailure> {
    let n = x.len();
    let mut b = DMatrix::zeros(n, inputs.len());
    let mut c = DMatrix::zeros(outputs.len(), n);
    let mut d = DMatrix::zeros(outputs.len(), inputs.len());
    let outputs_at = |field: &mut Field<'_, '_>, x: &[f64]| -> Result<Vec<f64>, eqm_ir::failure::EvalFailure> {
        let mut dx = field.f(x)?;
        field.instance.outputs(field.t, x, &mut dx)?;
        Ok(outputs
            .iter()
            .map(|o| field.instance.value(o, x).unwrap_or(f64::NAN))
            .collect())
    };
    if !outputs.is_empty() {
        let mut xp = x.to_vec();
        for j in 0..n {
            let h = 6e-6 * x[j].abs().max(1.0);
            xp[j] = x[j] + h;
            let yp = outputs_at(field, &xp)?;
            xp[j] = x[j] - h;
            let ym = outputs_at(field, &xp)?;
            xp[j] = x[j];
            for i in 0..outputs.len() {
                c[(i, j)] = (yp[i] - ym[i]) / (2.0 * h);
            }
        }
    }
    for (j, name) in inputs.iter().enumerate() {
        let Some(u) = field.instance.param(name) else { continue };
        let h = 6e-6 * u.abs().max(1.0);
        let at = |field: &mut Field<'_, '_>, value: f64| {
            let _ = field.instance.set_param(name, value);
            let f = field.f(x);
            let y = outputs_at(field, x);
            (f, y)
        };
        let (fp, yp) = at(field, u + h);
        let (fm, ym) = at(field, u - h);
        let _ = field.instance.set_param(name, u);
        let (fp, fm, yp, ym) = (fp?, fm?, yp?, ym?);
        for i in 0..n {
            b[(i, j)] = (fp[i] - fm[i]) / (2.0 * h);
        }
        for i in 0..outputs.len() {
            d[(i, j)] = (yp[i] - ym[i]) / (2.0 * h);
        }
    }
    field.f(x)?;
    Ok((b, c, d))
}

/// The named algebraic variables at `x`, by name.
fn algebraic_values(field: &mut Field<'_, '_>, x: &[f64]) -> Vec<(String, f64)> {
    let Ok(mut dx) = field.f(x) else { return Vec::new() };
    if field.instance.outputs(field.t, x, &mut dx).is_err() {
        return Vec::new();
    }
    let program = field.instance.program();
    let mut values: Vec<(String, f64)> = program
        .variables()
        .filter(|(name, v, ..)| !name.starts_with('$') && program.symbols().get(*v).kind == VarKind::Algebraic)
        .filter_map(|(name, ..)| Some((name.to_string(), field.instance.value(name, x)?)))
        .collect();
    values.sort_by(|a, b| eqm_diag::text::natural_cmp(&a.0, &b.0));
    values
}

#[cfg(test)]
mod tests {
    use super::modal::time_constant;
    use nalgebra::Complex;

    #[test]
    fn time_constant_is_the_shorter_of_decay_and_period() {
        assert_eq!(time_constant(Complex::new(-2.0, 0.0)), 0.5);
        let t = time_constant(Complex::new(-0.01, 2.0 * std::f64::consts::PI));
        assert!((t - 1.0).abs() < 1e-15);
        assert!(time_constant(Complex::new(0.0, 0.0)).is_infinite());
    }
}
