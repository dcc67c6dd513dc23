//! Simulation: consistent initial values, integration, and result rows.
//!
//! Input: the executable program of a model and the one of its initialization problem (both
//! built by `exec` from the structural analysis), and [`RunOptions`]. Output: rows of
//! `time, values` handed to a sink as they are computed (so a run that fails keeps every row
//! before the failure), and a [`Summary`]; or a [`SimError`] saying whether the request does not
//! fit the model or the simulation failed (with the time and the variables involved).
//!
//! Initial values come from running the initialization program once (it solves the initial
//! system, fixed start values and initial equations included); the integrator then runs the
//! right-hand side as native code ([`Backend::Auto`]: every instruction the JIT compiles, the
//! interpreter driving the Newton iterations and evaluating the rest) or through the reference
//! interpreter alone. It deliberately does no IO and chooses no defaults: the library API
//! completes a run's settings from the model's experiment annotation.

use crate::initial::initial_states;
use crate::instance::Instance;
use crate::interp::OdeRhs;
use crate::ode::{ModelOde, Projector};
use eqm_compile::exec::ExecProgram;
use eqm_diag::Diagnostic;
use eqm_integrators::{self, Method, Output};
use eqm_ir::expr::VarId;
use eqm_ir::slot::Slot;
use std::ops::ControlFlow;

/// What to simulate and how.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub start: f64,
    pub stop: f64,
    pub method: Method,
    pub integrator: eqm_integrators::Options,
    /// Output spacing; `None` writes a row at every step.
    pub interval: Option<f64>,
    /// Parameter overrides, applied without rebuilding anything.
    pub params: Vec<(String, f64)>,
    /// Start-value overrides (see [`Instance::set_start_values`]), applied without rebuilding
    /// anything.
    pub starts: Vec<(String, f64)>,
    pub backend: Backend,
    /// How invariants are kept (constraint projection).
    pub stabilize: Stabilize,
    /// For one segment of a longer run (a mode of a variable-structure model): the start of
    /// that run, whose output grid the rows continue (`None`: this run's own start).
    pub origin: Option<f64>,
    /// The values this run is valid for; it ends where one changes (see [`Watch`]).
    pub watch: Watch,
}

pub use crate::hybrid::Watch;

/// Where a watched value changed (see [`Watch`]): the time, every variable's value there by
/// name (after the event iteration), and the watched values now.
#[derive(Debug, Clone, PartialEq)]
pub struct Switch {
    pub time: f64,
    pub values: Vec<(String, f64)>,
    pub watched: Vec<bool>,
}

/// The gain of the constraint projection (`--stabilize`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Stabilize {
    /// The model's `stabilize(K = ...)` annotation, else the default rule (see
    /// [`default_gain`]).
    #[default]
    Default,
    /// `K = k·I` with this `k`.
    Gain(f64),
    /// No projection: the plain field, to show the drift.
    Off,
}

/// What the run did with the model's invariants, for `-v`.
#[derive(Debug, Clone, PartialEq)]
pub struct InvariantReport {
    /// The gain used, and where it came from; `None` without projection.
    pub gain: Option<(f64, &'static str)>,
    /// The numerical rank of `G` at the start (below the number of invariants when some are
    /// redundant).
    pub rank: usize,
    pub invariants: usize,
    /// `max_i |g_i|` at the last row, and its maximum over the rows written.
    pub final_residual: f64,
    pub max_residual: f64,
}

/// Which back end evaluates the right-hand side during integration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Native code (JIT) for every instruction it compiles: explicit assignments, the residuals
    /// and derivatives of scalar Newton blocks and algebraic loops (whose iterations run in
    /// Rust), algorithm sections, and the outputs program; the interpreter for any instruction
    /// the JIT cannot translate.
    Auto,
    /// Always the reference interpreter.
    Interpreter,
}

/// The result columns: full variable names and where their values are read.
#[derive(Debug, Clone)]
pub struct Columns {
    pub names: Vec<String>,
    /// Where each column's value is, parallel to `names`.
    pub slots: Vec<Slot>,
    /// The variable of each column, parallel to `names`.
    pub vars: Vec<eqm_ir::expr::VarId>,
}

/// How a run went.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// The back end that computed the right-hand side, and how long compiling it took.
    pub backend: &'static str,
    pub compile_time: std::time::Duration,
    pub rows: usize,
    pub stats: eqm_integrators::Stats,
    /// Set when the sink asked to stop early.
    pub stopped_at: Option<f64>,
    /// Events handled, and notes about them (sliding mode), for `-v`.
    pub events: crate::hybrid::EventStats,
    /// Set when the model called `terminate`: the time and message.
    pub terminated: Option<(f64, String)>,
    /// What the integration method decided (`auto`'s switches between methods).
    pub solver_notes: Vec<String>,
    /// Set when the run ended because a watched value changed.
    pub switched: Option<Switch>,
    /// For a model with invariants: the projection and the residuals.
    pub invariants: Option<InvariantReport>,
    /// What a user must know about the run even when it finished: a fixed step beyond the
    /// method's stability limit (`W0702`), assertions of level warning that stopped holding
    /// (`W0701`).
    pub warnings: Vec<Diagnostic>,
}

/// Why a run did not happen or did not finish.
#[derive(Debug)]
pub enum SimError {
    /// A setting cannot be used (a stop time before the start, a negative tolerance): a usage
    /// error, described in words.
    Settings(String),
    /// The request does not fit the model (an unknown variable or parameter).
    Model(Box<Diagnostic>),
    /// The simulation failed at `time`; `diagnostic` names the equations and variables involved
    /// when the failure is located in the model. The rows before were delivered.
    Failed {
        time: f64,
        message: String,
        diagnostic: Option<Box<Diagnostic>>,
        /// What the run warned about before it failed (assertions of level warning, a fixed
        /// step beyond a method's stability limit).
        warnings: Vec<Diagnostic>,
    },
    /// The sink could not take a row.
    Io(std::io::Error),
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Settings(message) => f.write_str(message),
            SimError::Model(d) => write!(f, "[{}] {}", d.code, d.message),
            SimError::Failed { time, message, .. } => write!(f, "the simulation failed at time {time}: {message}"),
            SimError::Io(e) => write!(f, "cannot write the results: {e}"),
        }
    }
}

impl std::error::Error for SimError {}

/// The columns for `vars` (full names), or by default every state and every named variable
/// (not parameters, not names the compiler introduced), in natural name order (`x[2]` before
/// `x[10]`).
pub fn columns<S: AsRef<str>>(program: &ExecProgram, vars: Option<&[S]>) -> Result<Columns, Diagnostic> {
    let mut names = Vec::new();
    let mut slots = Vec::new();
    let mut var_ids = Vec::new();
    match vars {
        Some(list) => {
            for name in list {
                let name = name.as_ref();
                let found = program
                    .lookup(name)
                    .and_then(|v| Some((v, program.slot_of(v)?)))
                    .or_else(|| derivative_of_state(program, name));
                let Some((v, slot)) = found else {
                    let known = program.variables().map(|(n, ..)| n);
                    let mut d = Diagnostic::error(
                        "E0708",
                        format!("there is no variable `{name}` to write"),
                        program.model_span(),
                        "in this model",
                    );
                    if let Some(s) = eqm_diag::did_you_mean(name, known) {
                        d = d.with_help(format!("did you mean `{s}`?"));
                    }
                    return Err(d);
                };
                names.push(name.to_string());
                slots.push(slot);
                var_ids.push(v);
            }
        }
        None => {
            for (name, v, slot, _) in program.variables() {
                // Parameters (independent ones in `p`, computed ones in `work`) and constants
                // are not results; names starting with `$` are the compiler's own.
                let is_parameter = matches!(
                    program.symbols().get(v).kind,
                    eqm_compile::dae::VarKind::Parameter | eqm_compile::dae::VarKind::Constant
                );
                if !name.starts_with('$') && !is_parameter {
                    names.push(name.to_string());
                    slots.push(slot);
                    var_ids.push(v);
                }
            }
            // Natural order: `x[2]` before `x[10]`, `m2.v` before `m10.v`.
            let mut order: Vec<usize> = (0..names.len()).collect();
            order.sort_by(|&a, &b| eqm_diag::text::natural_cmp(&names[a], &names[b]));
            names = order.iter().map(|&k| std::mem::take(&mut names[k])).collect();
            slots = order.iter().map(|&k| slots[k]).collect();
            var_ids = order.iter().map(|&k| var_ids[k]).collect();
        }
    }
    Ok(Columns {
        names,
        slots,
        vars: var_ids,
    })
}

/// The slot of `der(x)` for a state `x` of `program`, with `x`'s variable: a column a run asks
/// for by the name of a dummy derivative of another mode of a variable-structure model, in
/// which `x` is a state and its derivative has no variable of its own.
fn derivative_of_state(program: &ExecProgram, name: &str) -> Option<(VarId, Slot)> {
    let inner = name.strip_prefix("der(")?.strip_suffix(')')?;
    let v = program.lookup(inner)?;
    match program.slot_of(v)? {
        Slot::State(i) => Some((v, Slot::Der(i))),
        _ => None,
    }
}

/// Prepares `program` for a run with `options`: the symbolic Jacobian for implicit methods
/// and for the invariants (`g` and `G` come from it). Returns a note for `-v`.
pub fn prepare(program: &mut ExecProgram, options: &RunOptions) -> Option<String> {
    let needed = options.method.uses_jacobian() || !program.invariants().is_empty() || program.state_choice().is_some();
    if !needed {
        return None;
    }
    Some(match program.add_jacobian() {
        Ok(()) => {
            let j = program.jacobian().expect("just built");
            format!(
                "symbolic Jacobian: {} nonzeros, {} partial derivatives, {} colour(s)",
                j.nonzeros(),
                j.partials.len(),
                j.n_colors
            )
        }
        Err(reason) => format!("Jacobian by difference quotients: {reason}"),
    })
}

/// The largest eigenvalue modulus of `jacobian`: computed up to 200 rows, bounded by the
/// infinity norm above (eigenvalues of large matrices cost more than the run they inform).
pub(crate) fn spectral_radius(jacobian: &nalgebra::DMatrix<f64>) -> f64 {
    if jacobian.nrows() == 0 {
        0.0
    } else if jacobian.nrows() <= 200 {
        jacobian
            .clone()
            .complex_eigenvalues()
            .iter()
            .map(|l| l.norm())
            .fold(0.0, f64::max)
    } else {
        jacobian
            .row_iter()
            .map(|r| r.iter().map(|v| v.abs()).sum::<f64>())
            .fold(0.0, f64::max)
    }
}

/// The default gain of the projection: the rate of the model's fastest motion at the start,
/// the larger of the largest eigenvalue modulus of `∂f/∂x` and the relative speed `‖f‖/‖x‖` of
/// the state (a system starting at rest has no velocity-dependent rates yet, so its Jacobian
/// alone underestimates how fast it is about to move), and at least ten over the run's length.
/// The constraint error then decays within the model's shortest time scale, so drift cannot
/// accumulate, while the correction adds no rate faster than the model's own: a method that
/// resolves the motion is stable and accurate for the correction too, and the problem does not
/// become stiff. (Ten times that rate keeps the residual no smaller at tight tolerances but makes
/// an explicit method take about three times as many steps on the pendulum.)
pub fn default_gain(jacobian: &nalgebra::DMatrix<f64>, f: &[f64], x: &[f64], span: f64) -> f64 {
    let radius = spectral_radius(jacobian);
    let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
    let speed = if norm(x) > 0.0 { norm(f) / norm(x) } else { 0.0 };
    let floor = if span > 0.0 && span.is_finite() {
        10.0 / span
    } else {
        0.0
    };
    let gain = radius.max(speed).max(floor);
    if gain.is_finite() && gain > 0.0 { gain } else { 1.0 }
}

/// An instance of `program` with the run's parameters and start values set.
pub(crate) fn instance<'p>(program: &'p ExecProgram, options: &RunOptions) -> Result<Instance<'p>, SimError> {
    let mut instance = Instance::new(program).map_err(|d| SimError::Model(Box::new(d)))?;
    for (name, value) in &options.params {
        instance
            .set_param(name, *value)
            .map_err(|d| SimError::Model(Box::new(d)))?;
    }
    instance.set_start_values(&options.starts);
    Ok(instance)
}

/// Runs the simulation, handing each output row to `sink`; with [`Backend::Auto`] the program
/// is compiled to native code first. `init` is the initialization program, `None` when the
/// initialization is `program` itself at the states' start values.
pub fn simulate(
    program: &ExecProgram,
    init: Option<&ExecProgram>,
    options: &RunOptions,
    columns: &Columns,
    sink: &mut dyn FnMut(f64, &[f64]) -> std::io::Result<()>,
) -> Result<Summary, SimError> {
    let compile_start = std::time::Instant::now();
    let native = match options.backend {
        Backend::Auto => crate::native::NativeCode::compile(program).map(std::sync::Arc::new),
        Backend::Interpreter => None,
    };
    let compile_time = compile_start.elapsed();
    simulate_with(program, init, options, columns, native, sink).map(|summary| Summary {
        compile_time,
        ..summary
    })
}

/// [`simulate`] with the native code of `program` given (compiled once for several runs, or
/// `None` for the interpreter alone); the summary's compile time is zero.
pub fn simulate_with(
    program: &ExecProgram,
    init: Option<&ExecProgram>,
    options: &RunOptions,
    columns: &Columns,
    native: Option<std::sync::Arc<crate::native::NativeCode>>,
    sink: &mut dyn FnMut(f64, &[f64]) -> std::io::Result<()>,
) -> Result<Summary, SimError> {
    for (name, value) in &options.starts {
        crate::instance::check_start_value(program, name, *value).map_err(|d| SimError::Model(Box::new(d)))?;
    }
    let first = instance(program, options)?;
    // The rows' instance, taken before the integrator's changes anything: it shares the
    // compiled code instead of compiling it again.
    let rows_instance = first.clone();
    let mut model = ModelOde::new(first);
    let (x0, determined) = initial_states(&mut model.instance, init, options)?;
    let mut invariant_report = None;
    if !program.invariants().is_empty() {
        let (projector, report) = projector(&mut model.instance, options, &x0)?;
        model.projector = projector;
        invariant_report = Some(report);
    }
    // The integrator's evaluations check the derivatives only; every row written is computed
    // on the second instance below with every value checked, so nothing non-finite is written.
    model
        .instance
        .interpreter()
        .set_finite_checks(crate::interp::FiniteChecks::Derivatives);
    let backend = match &native {
        Some(n) if n.is_complete() && (n.outputs_native() || program.outputs().is_empty()) => "jit",
        Some(n) if n.native_instructions() > 0 => "jit (and the interpreter for what the JIT cannot compile)",
        _ => "interpreter",
    };
    // Rows are evaluated on a second instance: the integrator holds the first one.
    let mut rows = rows_instance;
    for (name, value) in &determined {
        rows.set_param(name, *value).map_err(|d| SimError::Model(Box::new(d)))?;
    }
    // The rows' iterations start from the consistent initial values too.
    for (k, v) in program.work_vars().iter().enumerate() {
        if program.symbols().get(*v).kind == eqm_compile::dae::VarKind::Algebraic {
            rows.set_work(k as u32, model.instance.work()[k]);
        }
    }
    if let Some(native) = native {
        rows.attach_native(native.clone());
        model.instance.attach_native(native);
    }
    // The histories of `delay`s, shared by the integrator's instance and the rows'.
    if !program.events().delays.is_empty() {
        let mut lines = Vec::new();
        let mut dx = vec![0.0; x0.len()];
        for d in &program.events().delays {
            let failed = |f: eqm_ir::failure::EvalFailure| SimError::Failed {
                warnings: Vec::new(),
                time: options.start,
                message: "a delay time could not be computed".to_string(),
                diagnostic: Some(Box::new(program.failure_diagnostic(&f))),
            };
            let delay = model
                .instance
                .event_value(d.delay, d.span, options.start, &x0, &mut dx)
                .map_err(failed)?;
            if !(delay > 0.0 && delay.is_finite()) {
                let message = format!("the delay time of `delay` must be positive and finite, not {delay}");
                return Err(SimError::Failed {
                    warnings: Vec::new(),
                    time: options.start,
                    message: message.clone(),
                    diagnostic: Some(Box::new(
                        Diagnostic::error("E0714", message, d.span, "this delay")
                            .with_help("give the delay a positive value"),
                    )),
                });
            }
            lines.push((d.slot, delay));
        }
        let lines = std::sync::Arc::new(std::sync::Mutex::new(crate::delay::DelayLines::new(lines)));
        rows.attach_delays(lines.clone());
        model.instance.attach_delays(lines);
    }
    // A model without states gives an adaptive method no error to control, so its steps would
    // grow without bound and could step over a surface crossed there and back; its steps are
    // capped at a thousandth of the run.
    let mut integrator_options = options.integrator.clone();
    if x0.is_empty() && !program.events().is_empty() && integrator_options.max_step.is_none() {
        let span = options.stop - options.start;
        if span > 0.0 && span.is_finite() {
            integrator_options.max_step = Some(span / 1000.0);
        }
    }
    let mut stepper = eqm_integrators::stepper_for(&options.method, &integrator_options);
    let mut warnings: Vec<Diagnostic> = crate::failure::stability_warning(&mut model, options.start, &x0, options)
        .into_iter()
        .collect();
    let output = match (options.interval, options.origin) {
        (Some(dt), Some(origin)) => Output::Grid { origin, dt },
        (Some(dt), None) => Output::Interval(dt),
        (None, _) => Output::Steps,
    };
    let mut writer = RowWriter {
        program,
        columns,
        residuals: invariant_report.as_ref().map(|_| Residuals {
            g: vec![0.0; program.invariants().len()],
            last: 0.0,
            max: 0.0,
        }),
        choice: program
            .state_choice()
            .filter(|_| program.jacobian().is_some())
            .map(|c| ChoiceCheck::new(program, c)),
        rows,
        dx: vec![0.0; x0.len()],
        values: vec![0.0; columns.slots.len()],
        sliding: None,
        plus: vec![0.0; columns.slots.len()],
        written: 0,
        error: None,
        sink,
    };
    // How the run ended: the time the sink stopped it, or the time and message of `terminate`.
    // Assertions are checked at every accepted step, which the hybrid driver sees.
    let mut switched = None;
    let (stopped_at, terminated, mut events, model_failure) =
        if program.events().is_empty() && program.assertions().is_empty() && options.watch.values.is_empty() {
            let outcome = eqm_integrators::integrate(
                &mut model,
                stepper.as_mut(),
                options.start,
                &x0,
                options.stop,
                &output,
                |t, x| writer.write(t, x),
            );
            match outcome {
                Ok(eqm_integrators::Outcome::Finished) => (None, None, Default::default(), None),
                Ok(eqm_integrators::Outcome::Stopped { time }) => (Some(time), None, Default::default(), None),
                Err(e) => (
                    None,
                    None,
                    Default::default(),
                    Some(crate::failure::integration_failure(
                        program,
                        e,
                        model.failure.take(),
                        crate::failure::failure_point(&mut model, stepper.as_ref(), options),
                    )),
                ),
            }
        } else {
            let mut hybrid = crate::hybrid::HybridModel::new(model);
            hybrid.watch = options.watch.clone();
            let outcome = crate::hybrid::integrate(
                &mut hybrid,
                stepper.as_mut(),
                options.start,
                &x0,
                options.stop,
                &output,
                |model, t, x| {
                    // The rows' instance gets the discrete values and relations of this moment.
                    for (k, value) in model.discrete_values() {
                        writer.rows.set_work(k, value);
                    }
                    writer.sliding = model.sliding_sides(t, x);
                    writer.write(t, x)
                },
            );
            let events = std::mem::take(&mut hybrid.stats);
            match outcome {
                Ok(crate::hybrid::HybridOutcome::Finished) => (None, None, events, None),
                Ok(crate::hybrid::HybridOutcome::Stopped { time }) => (Some(time), None, events, None),
                Ok(crate::hybrid::HybridOutcome::Terminated { time, message }) => {
                    (None, Some((time, message)), events, None)
                }
                Ok(crate::hybrid::HybridOutcome::Switched { time, x }) => match switch_values(&mut hybrid, time, &x) {
                    Ok(switch) => {
                        switched = Some(switch);
                        (None, None, events, None)
                    }
                    Err(f) => (
                        None,
                        None,
                        events,
                        Some(SimError::Failed {
                            warnings: Vec::new(),
                            time,
                            message: "the model could not be evaluated where its structure changes".to_string(),
                            diagnostic: Some(Box::new(program.failure_diagnostic(&f))),
                        }),
                    ),
                },
                Err(e) => (
                    None,
                    None,
                    events,
                    Some(crate::failure::hybrid_failure(
                        program,
                        e,
                        hybrid.ode.failure.take(),
                        crate::failure::failure_point(&mut hybrid.ode, stepper.as_ref(), options),
                    )),
                ),
            }
        };
    if let Some(e) = writer.error {
        return Err(e);
    }
    warnings.append(&mut events.warnings);
    if let Some(mut e) = model_failure {
        if let SimError::Failed { warnings: kept, .. } = &mut e {
            kept.append(&mut warnings);
        }
        return Err(with_state_choice_note(program, e));
    }
    Ok(Summary {
        backend,
        compile_time: std::time::Duration::ZERO,
        rows: writer.written,
        stats: stepper.stats(),
        stopped_at,
        events,
        terminated,
        solver_notes: stepper.notes(),
        switched,
        warnings,
        invariants: invariant_report.map(|mut r| {
            if let Some(res) = &writer.residuals {
                r.final_residual = res.last;
                r.max_residual = res.max;
            }
            r
        }),
    })
}

/// Where a run ended because a watched value changed at `(t, x)`: every variable of the
/// program (not parameters, not the compiler's own) by name, as the event iteration left them,
/// and the watched values.
fn switch_values(
    model: &mut crate::hybrid::HybridModel<'_>,
    t: f64,
    x: &[f64],
) -> Result<Switch, eqm_ir::failure::EvalFailure> {
    let watched = model.watched_values();
    let instance = &mut model.ode.instance;
    let program = instance.program();
    let mut dx = vec![0.0; x.len()];
    crate::interp::OdeRhs::rhs(instance, t, x, &mut dx)?;
    instance.outputs(t, x, &mut dx)?;
    let values = program
        .variables()
        .filter(|(name, v, ..)| {
            !name.starts_with('$')
                && !matches!(
                    program.symbols().get(*v).kind,
                    eqm_compile::dae::VarKind::Parameter | eqm_compile::dae::VarKind::Constant
                )
        })
        .filter_map(|(name, _, slot, _)| {
            let value = match slot {
                Slot::State(i) => x.get(i as usize).copied(),
                Slot::Work(i) => instance.work().get(i as usize).copied(),
                Slot::Der(i) => dx.get(i as usize).copied(),
                Slot::Param(_) | Slot::Time => None,
            }?;
            Some((name.to_string(), value))
        })
        .collect();
    Ok(Switch {
        time: t,
        values,
        watched,
    })
}

/// The projection of a run (none with `--stabilize off`, or when the program has no symbolic
/// Jacobian to give `G`) and the report started at the initial point `x0`.
fn projector(
    instance: &mut Instance<'_>,
    options: &RunOptions,
    x0: &[f64],
) -> Result<(Option<Projector>, InvariantReport), SimError> {
    let (n, m) = (x0.len(), instance.program().invariants().len());
    let mut f_x = nalgebra::DMatrix::zeros(n, n);
    let mut g = vec![0.0; m];
    let mut g_x = nalgebra::DMatrix::zeros(m, n);
    let mut dx = vec![0.0; n];
    let out = crate::interp::JacobianOut {
        f_x: Some(&mut f_x),
        g: Some(&mut g),
        g_x: Some(&mut g_x),
        ..Default::default()
    };
    let available = instance
        .jacobian(options.start, x0, &mut dx, out)
        .map_err(|f| SimError::Failed {
            warnings: Vec::new(),
            time: options.start,
            message: "the invariants could not be evaluated at the start".to_string(),
            diagnostic: Some(Box::new(instance.program().failure_diagnostic(&f))),
        })?;
    let residual = g.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let mut report = InvariantReport {
        gain: None,
        rank: 0,
        invariants: m,
        final_residual: residual,
        max_residual: residual,
    };
    if !available {
        return Ok((None, report));
    }
    let gain = match options.stabilize {
        Stabilize::Off => return Ok((None, report)),
        Stabilize::Gain(k) => (k, "given"),
        Stabilize::Default => (default_gain(&f_x, &dx, x0, options.stop - options.start), "default"),
    };
    let mut projector = Projector::new(n, m, gain.0).for_program(instance.program());
    report.rank = projector.factor(&g_x);
    report.gain = Some(gain);
    Ok((Some(projector), report))
}

/// The distance from singular of a normalised state-choice matrix (its smallest singular value,
/// or for a square one the estimate `1/‖M⁻¹‖₁`) below which the choice counts as singular.
const SINGULAR_CHOICE: f64 = 1e-6;

/// The check of a dummy-derivative form's state choice at each row.
///
/// Every row is checked, since a row written after the choice became singular would be wrong.
/// A matrix that is square once its rows and columns of structural zeros are left out (as many
/// constraints as variables they determine, the usual case) is checked by its sparse LU on the pattern of its structurally nonzero entries, analysed once
/// ([`eqm_integrators::linalg::SparseSingularity`]): the sign of the determinant, and
/// `1/‖M⁻¹‖₁` from Hager's estimate (within a factor `√k` of the smallest singular value) as the
/// distance from singularity. Each row then costs about as much as evaluating the matrix,
/// instead of the `O(k³)` singular value decomposition, which made a chain of 1000 rigidly
/// coupled stages take two minutes for 500 rows. Other shapes keep the decomposition.
struct ChoiceCheck {
    /// The matrix (rows × variables, row-major) followed by the row norms.
    values: Vec<f64>,
    rows: usize,
    /// The sign of the determinant at the last row (square matrices), to notice a singular
    /// configuration passed between two rows.
    sign: Option<f64>,
    /// For a matrix square without its zero rows and columns: its sparse check, and the positions in
    /// `values` of its structurally nonzero entries with the normalised values handed to the
    /// check.
    sparse: Option<(eqm_integrators::linalg::SparseSingularity, Vec<usize>, Vec<f64>)>,
}

impl ChoiceCheck {
    fn new(program: &ExecProgram, choice: &eqm_compile::exec::ExecStateChoice) -> ChoiceCheck {
        let (k, entries) = (choice.norms.len(), choice.matrix.len());
        let l = entries.checked_div(k).unwrap_or(0);
        // An entry whose derivative is the constant 0 is 0 at every row.
        let zero = |e: eqm_ir::expr::ExprId| program.exprs().literal(e) == Some(0.0);
        let at: Vec<usize> = (0..entries).filter(|&p| !zero(choice.matrix[p])).collect();
        // Rows and columns that are 0 everywhere (a demoted velocity when only positions are
        // constrained, a differentiated equation that no demoted variable enters) change no
        // singular value: the matrix without them is checked, with the sparse check when it is
        // square and as large as the smaller side (else the choice is structurally singular,
        // which the decomposition reports at the first row).
        let (mut row_of, mut column_of) = (vec![usize::MAX; k], vec![usize::MAX; l]);
        let (mut rows_used, mut columns_used) = (0, 0);
        for &p in &at {
            if row_of[p / l] == usize::MAX {
                row_of[p / l] = rows_used;
                rows_used += 1;
            }
            if column_of[p % l] == usize::MAX {
                column_of[p % l] = columns_used;
                columns_used += 1;
            }
        }
        let size = k.min(l);
        let sparse = (rows_used == size && columns_used == size && size > 0)
            .then(|| {
                let positions: Vec<(usize, usize)> = at.iter().map(|&p| (row_of[p / l], column_of[p % l])).collect();
                let check = eqm_integrators::linalg::SparseSingularity::new(size, &positions)?;
                Some((check, at.clone(), vec![0.0; at.len()]))
            })
            .flatten();
        ChoiceCheck {
            values: vec![0.0; entries + k],
            rows: k,
            sign: None,
            sparse,
        }
    }

    /// `Some(description)` when the choice is singular at this row or became singular since
    /// the last one.
    fn check(&mut self) -> Option<String> {
        let k = self.rows;
        let l = (self.values.len() - k).checked_div(k).unwrap_or(0);
        if k == 0 || l == 0 {
            return None;
        }
        if let Some((check, at, normalised)) = &mut self.sparse {
            for (v, &p) in normalised.iter_mut().zip(at.iter()) {
                let norm = self.values[k * l + p / l];
                *v = if norm > 0.0 { self.values[p] / norm } else { 0.0 };
            }
            let Some(found) = check.examine(normalised) else {
                return Some("the differentiated constraints no longer determine them (a zero pivot)".to_string());
            };
            let distance = 1.0 / found.inverse_norm;
            if distance.is_nan() || distance < SINGULAR_CHOICE {
                return Some(format!(
                    "the differentiated constraints no longer determine them (estimated distance from singular {distance:.1e})"
                ));
            }
            if self.sign.is_some_and(|s| s != found.sign) {
                return Some(
                    "the solution passed a configuration where the constraints do not determine them".to_string(),
                );
            }
            self.sign = Some(found.sign);
            return None;
        }
        let mut m = nalgebra::DMatrix::zeros(k, l);
        for i in 0..k {
            let norm = self.values[k * l + i];
            for j in 0..l {
                m[(i, j)] = if norm > 0.0 { self.values[i * l + j] / norm } else { 0.0 };
            }
        }
        let smallest = m
            .clone()
            .singular_values()
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        if smallest.is_nan() || smallest < SINGULAR_CHOICE {
            return Some(format!(
                "the differentiated constraints no longer determine them (smallest normalised singular value {smallest:.1e})"
            ));
        }
        if k == l {
            let sign = m.determinant().signum();
            if self.sign.is_some_and(|s| s != sign) {
                return Some(
                    "the solution passed a configuration where the constraints do not determine them".to_string(),
                );
            }
            self.sign = Some(sign);
        }
        None
    }
}

/// A failure of a dummy-derivative run inside a step (a Newton iteration that cannot solve a
/// constraint for a variable that is no longer a state) is most likely the static state choice
/// becoming singular between two rows: the diagnostic says so and names the way out.
fn with_state_choice_note(program: &ExecProgram, e: SimError) -> SimError {
    let Some(choice) = program.state_choice() else {
        return e;
    };
    match e {
        SimError::Failed {
            time,
            message,
            diagnostic: Some(d),
            warnings,
        } if d.code != "E0713" && d.code != "E0714" => {
            let names = |vars: &[eqm_ir::expr::VarId]| quoted_names(program, vars);
            let note = format!(
                "this run uses dummy derivatives with the static state choice {}; where that choice becomes singular, {} cannot be computed from the constraints",
                names(&choice.states),
                names(&choice.variables)
            );
            let d = d
                .with_note(note)
                .with_help("simulate the embedding form, which keeps every differentiated variable a state and the constraints by projection: --index-reduction embedding");
            SimError::Failed {
                warnings,
                time,
                message,
                diagnostic: Some(Box::new(d)),
            }
        }
        other => other,
    }
}

/// The names of `vars` in backquotes, separated by commas.
fn quoted_names(program: &ExecProgram, vars: &[eqm_ir::expr::VarId]) -> String {
    vars.iter()
        .map(|v| format!("`{}`", program.symbols().get(*v).name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The failure of a dummy-derivative run whose state choice became singular.
fn state_choice_failure(program: &ExecProgram, t: f64, problem: &str) -> SimError {
    let choice = program.state_choice().expect("checked");
    let names = |vars: &[eqm_ir::expr::VarId]| quoted_names(program, vars);
    let message = format!(
        "the static state choice is singular at time {t}: with the states {} the variables {} cannot be computed: {problem}",
        names(&choice.states),
        names(&choice.variables)
    );
    let diagnostic = Diagnostic::error("E0713", message.clone(), choice.span, "this constraint")
        .with_help("simulate the embedding form, which keeps every differentiated variable a state and the constraints by projection: --index-reduction embedding (the default for this model)");
    SimError::Failed {
        warnings: Vec::new(),
        time: t,
        message,
        diagnostic: Some(Box::new(diagnostic)),
    }
}

/// The invariant residuals of the rows written.
struct Residuals {
    g: Vec<f64>,
    last: f64,
    max: f64,
}

/// Evaluates each output row on its own instance and hands it to the sink; keeps the first
/// error, which stops the run.
struct RowWriter<'a, 'p> {
    program: &'p ExecProgram,
    columns: &'a Columns,
    residuals: Option<Residuals>,
    choice: Option<ChoiceCheck>,
    rows: Instance<'p>,
    dx: Vec<f64>,
    values: Vec<f64>,
    /// While the run slides on a surface: the share `α` of its positive side and, per relation
    /// variable of the surface, its slot and its values on the positive and the negative side.
    /// Every output of such a row is the Filippov combination `α·out⁺ + (1 − α)·out⁻`.
    sliding: Option<crate::hybrid::SlidingSides>,
    plus: Vec<f64>,
    written: usize,
    error: Option<SimError>,
    sink: &'a mut dyn FnMut(f64, &[f64]) -> std::io::Result<()>,
}

impl RowWriter<'_, '_> {
    fn write(&mut self, t: f64, x: &[f64]) -> ControlFlow<()> {
        match self.evaluate(t, x) {
            Ok(()) => {
                self.written += 1;
                ControlFlow::Continue(())
            }
            Err(e) => {
                self.error = Some(e);
                ControlFlow::Break(())
            }
        }
    }

    fn evaluate(&mut self, t: f64, x: &[f64]) -> Result<(), SimError> {
        let checked = self.residuals.is_some() || self.choice.is_some();
        match self.sliding.take() {
            None => {
                self.values_at(t, x, false)?;
                // The invariants and the state choice from the evaluation the row just made.
                if checked {
                    self.check_row(t, x, true)?;
                }
            }
            Some(sides) => {
                if checked {
                    self.check_row(t, x, false)?;
                }
                for &(slot, plus, _) in &sides.relations {
                    self.rows.set_work(slot, plus);
                }
                self.values_at(t, x, true)?;
                for &(slot, _, minus) in &sides.relations {
                    self.rows.set_work(slot, minus);
                }
                self.values_at(t, x, false)?;
                let alpha = sides.alpha;
                for ((value, plus), slot) in self.values.iter_mut().zip(&self.plus).zip(&self.columns.slots) {
                    // Time and states are those of the point itself.
                    if matches!(slot, Slot::Der(_) | Slot::Work(_)) && *value != *plus {
                        *value = alpha * plus + (1.0 - alpha) * *value;
                    }
                }
            }
        }
        (self.sink)(t, &self.values).map_err(SimError::Io)
    }

    /// The invariant residuals and the state-choice check at `(t, x)`: after `values_at` there
    /// (`evaluated`, whose right-hand side it reuses) or evaluating it afresh.
    fn check_row(&mut self, t: f64, x: &[f64], evaluated: bool) -> Result<(), SimError> {
        let (rows, dx) = (&mut self.rows, &mut self.dx);
        let out = crate::interp::JacobianOut {
            g: self.residuals.as_mut().map(|r| &mut r.g[..]),
            extra: self.choice.as_mut().map(|c| &mut c.values[..]),
            ..Default::default()
        };
        let result = if evaluated {
            rows.jacobian_at_last(t, x, dx, out)
        } else {
            rows.jacobian(t, x, dx, out)
        };
        if result.is_ok() {
            if let Some(res) = &mut self.residuals {
                res.last = res.g.iter().fold(0.0f64, |a, v| a.max(v.abs()));
                res.max = res.max.max(res.last);
            }
            if let Some(choice) = &mut self.choice
                && let Some(problem) = choice.check()
            {
                return Err(state_choice_failure(self.program, t, &problem));
            }
        }
        Ok(())
    }

    /// The columns at `(t, x)` with the relations the rows' instance holds, into `values` (or
    /// `plus`).
    fn values_at(&mut self, t: f64, x: &[f64], plus: bool) -> Result<(), SimError> {
        let (rows, dx) = (&mut self.rows, &mut self.dx);
        let evaluated = rows.rhs(t, x, dx).and_then(|()| rows.outputs(t, x, dx));
        if let Err(f) = evaluated {
            return Err(SimError::Failed {
                warnings: Vec::new(),
                time: t,
                message: "the output values could not be computed".to_string(),
                diagnostic: Some(Box::new(self.program.failure_diagnostic(&f))),
            });
        }
        let values = if plus { &mut self.plus } else { &mut self.values };
        for (value, slot) in values.iter_mut().zip(&self.columns.slots) {
            *value = match *slot {
                Slot::Time => t,
                Slot::State(i) => x[i as usize],
                Slot::Der(i) => dx[i as usize],
                Slot::Param(i) => rows.p()[i as usize],
                Slot::Work(i) => rows.work()[i as usize],
            };
        }
        Ok(())
    }
}
