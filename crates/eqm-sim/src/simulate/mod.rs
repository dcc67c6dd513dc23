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
//!
//! This module is the driver: it prepares the two instances of a run, chooses the stepper and
//! the output grid, integrates (with the hybrid driver when the model has events, assertions or
//! watched values) and assembles the summary. Its parts: `columns` (the choice of result
//! columns), `jacobian` (the Jacobian a run needs, the projection's gain and setup),
//! `state_choice` (the check of a dummy-derivative form's state choice), `rows` (the row
//! writer), `stepping` (a run its caller advances step by step, for co-simulation) and
//! `exchange` (a model its caller integrates, for Model Exchange), with `point` (the values at
//! their current point) and `directional` (their directional derivatives). The
//! vocabulary of a run lives in `crate::run` and is re-exported here.

mod columns;
mod directional;
mod exchange;
mod jacobian;
mod point;
mod rows;
mod snapshot;
mod state_choice;
mod stepping;

pub use crate::hybrid::{EventPolicy, PrintedLine};
pub use crate::run::{
    Backend, InvariantReport, RecoveryNote, RunOptions, RunSink, SimError, Stabilize, Summary, Switch, Watch,
};
pub use columns::{Columns, columns, mode_columns};
pub use directional::Known;
pub use exchange::{EventOutcome, Exchange};
pub use jacobian::{default_gain, prepare};
pub use snapshot::{RunKind, RunState};
pub use stepping::{Advanced, Stepping};

use crate::failure::{failure_point, hybrid_failure, integration_failure, stability_warning};
use crate::hybrid::{EventStats, HybridModel, HybridOutcome};
use crate::initial::initial_states_reported;
use crate::instance::Instance;
use crate::interp::OdeRhs;
use crate::native::NativeCode;
use crate::ode::ModelOde;
use crate::run::instance;
use eqm_compile::exec::ExecProgram;
use eqm_diag::Diagnostic;
use eqm_integrators::{self, Output, Stepper};
use eqm_ir::slot::Slot;
use rows::RowWriter;
use std::sync::Arc;

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
        Backend::Auto => NativeCode::compile(program).map(Arc::new),
        Backend::Interpreter => None,
    };
    let compile_time = compile_start.elapsed();
    simulate_with(program, init, options, columns, native, &mut &mut *sink).map(|summary| Summary {
        compile_time,
        ..summary
    })
}

/// [`simulate`] with the native code of `program` given (compiled once for several runs, or
/// `None` for the interpreter alone), handing the lines the model prints to `sink` too; the
/// summary's compile time is zero.
pub fn simulate_with(
    program: &ExecProgram,
    init: Option<&ExecProgram>,
    options: &RunOptions,
    columns: &Columns,
    native: Option<Arc<NativeCode>>,
    sink: &mut dyn RunSink,
) -> Result<Summary, SimError> {
    let backend = backend_name(program, native.as_deref());
    let Prepared {
        mut model,
        rows,
        x0,
        invariants,
        initialization,
        homotopy,
    } = prepare_run(program, init, options, native)?;
    let mut stepper = eqm_integrators::stepper_for(&options.method, &integrator_options(program, options, &x0));
    let mut warnings: Vec<Diagnostic> = stability_warning(&mut model, options.start, &x0, options)
        .into_iter()
        .collect();
    let output = output_grid(options);
    let mut writer = RowWriter::new(program, columns, rows, x0.len(), invariants.is_some(), sink);
    // Assertions are checked at every accepted step, which the hybrid driver sees.
    let mut ending =
        if program.events().is_empty() && program.assertions().is_empty() && options.watch.values.is_empty() {
            integrate_plain(
                program,
                &mut model,
                stepper.as_mut(),
                &x0,
                options,
                &output,
                &mut writer,
            )
        } else {
            integrate_hybrid(program, model, stepper.as_mut(), &x0, options, &output, &mut writer)
        };
    let written = writer.finish();
    if let Some(e) = written.error {
        return Err(e);
    }
    // A run stopped by its cancel flag between rows ends as one whose sink refused a row.
    if ending.stopped_at.is_some() && cancel_requested(options) {
        return Err(SimError::Io(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "the run was cancelled",
        )));
    }
    warnings.append(&mut ending.events.warnings);
    if let Some(mut e) = ending.failure {
        if let SimError::Failed { warnings: kept, .. } = &mut e {
            kept.append(&mut warnings);
        }
        return Err(state_choice::with_state_choice_note(program, e));
    }
    Ok(Summary {
        backend,
        compile_time: std::time::Duration::ZERO,
        rows: written.rows,
        stats: stepper.stats(),
        stopped_at: ending.stopped_at,
        events: ending.events,
        terminated: ending.terminated,
        solver_notes: stepper.notes(),
        initialization,
        homotopy,
        switched: ending.switched,
        warnings,
        invariants: invariants.map(|mut r| {
            if let Some((last, max)) = written.residuals {
                r.final_residual = last;
                r.max_residual = max;
            }
            r
        }),
    })
}

/// Whether the run's cancel flag is set.
fn cancel_requested(options: &RunOptions) -> bool {
    options
        .cancel
        .as_ref()
        .is_some_and(|flag| flag.load(std::sync::atomic::Ordering::Relaxed))
}

/// The name of the back end that computes the right-hand side, for the summary.
fn backend_name(program: &ExecProgram, native: Option<&NativeCode>) -> &'static str {
    match native {
        Some(n) if n.is_complete() && (n.outputs_native() || program.outputs().is_empty()) => "jit",
        Some(n) if n.native_instructions() > 0 => "jit (and the interpreter for what the JIT cannot compile)",
        _ => "interpreter",
    }
}

/// A run ready to integrate: the integrator's model at its consistent initial states `x0`, the
/// rows' instance, and the invariant report begun at the start (for a model with invariants).
struct Prepared<'p> {
    model: ModelOde<'p>,
    rows: Instance<'p>,
    x0: Vec<f64>,
    invariants: Option<InvariantReport>,
    /// The blocks of the initialization plain Newton did not solve.
    initialization: Vec<RecoveryNote>,
    /// The path of the initialization, when worth telling.
    homotopy: Option<String>,
}

/// The two instances of a run: the integrator's, at the consistent initial values with its
/// projection, and the rows', which starts from the same values. Both share the native code
/// and the histories of `delay`s.
fn prepare_run<'p>(
    program: &'p ExecProgram,
    init: Option<&ExecProgram>,
    options: &RunOptions,
    native: Option<Arc<NativeCode>>,
) -> Result<Prepared<'p>, SimError> {
    for (name, value) in &options.starts {
        crate::instance::check_start_value(program, name, *value).map_err(|d| SimError::Model(Box::new(d)))?;
    }
    let first = instance(program, options)?;
    // The rows' instance, taken before the integrator's changes anything: it shares the
    // compiled code instead of compiling it again.
    let mut rows = first.clone();
    let mut model = ModelOde::new(first);
    model.cancel = options.cancel.clone();
    let mut homotopy = None;
    let (x0, determined, initialization) = initial_states_reported(&mut model.instance, init, options, &mut homotopy)?;
    let mut invariants = None;
    if !program.invariants().is_empty() {
        let (projector, report) = jacobian::projector(&mut model.instance, options, &x0)?;
        model.projector = projector;
        invariants = Some(report);
    }
    // The integrator's evaluations check the derivatives only; every row written is computed
    // on the second instance with every value checked, so nothing non-finite is written.
    model
        .instance
        .interpreter()
        .set_finite_checks(crate::interp::FiniteChecks::Derivatives);
    for (name, value) in &determined {
        rows.set_param(name, *value).map_err(|d| SimError::Model(Box::new(d)))?;
    }
    // The rows' iterations start from the consistent initial values too, and the parameters
    // computed from those with `fixed = false` are the ones the initialization solved for.
    for (k, v) in program.work_vars().iter().enumerate() {
        if matches!(
            program.symbols().get(*v).kind,
            eqm_compile::dae::VarKind::Algebraic | eqm_compile::dae::VarKind::Parameter
        ) {
            rows.set_work(k as u32, model.instance.work()[k]);
        }
    }
    if let Some(native) = native {
        rows.attach_native(native.clone());
        model.instance.attach_native(native);
    }
    // The iterations start from the guesses of accepted points (see `instance::guesses`).
    if let Some(guesses) = crate::instance::KeptGuesses::of(program) {
        let guesses = Arc::new(std::sync::Mutex::new(guesses));
        model.instance.attach_guesses(Arc::clone(&guesses));
        rows.follow_guesses(guesses);
    }
    if !program.events().delays.is_empty() {
        attach_delays(program, &mut model.instance, &mut rows, options, &x0)?;
    }
    if !program.events().spatials.is_empty() {
        let profiles = program
            .events()
            .spatials
            .iter()
            .map(|s| crate::spatial::SpatialProfile::new(s.slots, s.points.clone(), s.values.clone()));
        let profiles = std::sync::Arc::new(std::sync::Mutex::new(profiles.collect()));
        rows.attach_spatials(std::sync::Arc::clone(&profiles));
        model.instance.attach_spatials(profiles);
    }
    Ok(Prepared {
        model,
        rows,
        x0,
        invariants,
        initialization,
        homotopy,
    })
}

/// The histories of `delay`s, shared by the integrator's instance and the rows', with each
/// fixed delay time computed at the start (where it must be positive and finite) and each
/// largest delay of a delay time that changes (non-negative and finite; a fixed delay time
/// given one must not exceed it).
fn attach_delays(
    program: &ExecProgram,
    model: &mut Instance<'_>,
    rows: &mut Instance<'_>,
    options: &RunOptions,
    x0: &[f64],
) -> Result<(), SimError> {
    let mut lines = Vec::new();
    let mut dx = vec![0.0; x0.len()];
    for d in &program.events().delays {
        let failed = |f: eqm_ir::failure::EvalFailure| SimError::Failed {
            warnings: Vec::new(),
            time: options.start,
            message: "a delay time could not be computed".to_string(),
            diagnostic: Some(Box::new(program.failure_diagnostic(&f))),
        };
        let out_of_range = |message: String, help: &str| SimError::Failed {
            warnings: Vec::new(),
            time: options.start,
            message: message.clone(),
            diagnostic: Some(Box::new(
                Diagnostic::error("E0714", message, d.span, "this delay").with_help(help.to_string()),
            )),
        };
        let max = match d.max {
            Some(max) => Some(
                model
                    .event_value(max, d.span, options.start, x0, &mut dx)
                    .map_err(failed)?,
            ),
            None => None,
        };
        if let Some(max) = max.filter(|m| !(*m >= 0.0 && m.is_finite())) {
            let message = format!("the largest delay of `delay` must be non-negative and finite, not {max}");
            return Err(out_of_range(message, "give delayMax a non-negative value"));
        }
        if d.varying {
            lines.push((d.slot, max.unwrap_or(0.0), true));
            continue;
        }
        let delay = model
            .event_value(d.delay, d.span, options.start, x0, &mut dx)
            .map_err(failed)?;
        if !(delay > 0.0 && delay.is_finite()) {
            let message = format!("the delay time of `delay` must be positive and finite, not {delay}");
            return Err(out_of_range(message, "give the delay a positive value"));
        }
        if let Some(max) = max.filter(|m| delay > *m) {
            let message = format!("the delay time {delay} of `delay` exceeds its largest delay {max}");
            return Err(out_of_range(message, "give delayMax a value at least the delay time"));
        }
        lines.push((d.slot, delay, false));
    }
    let lines = Arc::new(std::sync::Mutex::new(crate::delay::DelayLines::new(lines)));
    rows.attach_delays(lines.clone());
    model.attach_delays(lines);
    Ok(())
}

/// The integrator's options of a run. A model without states gives an adaptive method no error
/// to control, so its steps would grow without bound and could step over a surface crossed
/// there and back; its steps are capped at a thousandth of the run. One absolute tolerance is
/// scaled by each state's magnitude (its `nominal`), as Modelica tools do.
fn integrator_options(program: &ExecProgram, options: &RunOptions, x0: &[f64]) -> eqm_integrators::Options {
    let mut integrator_options = options.integrator.clone();
    let nominals = program.state_nominals();
    if let eqm_integrators::Atol::Scalar(atol) = integrator_options.atol
        && nominals.len() == x0.len()
        && nominals.iter().any(|&n| n != 1.0)
    {
        integrator_options.atol = eqm_integrators::Atol::PerComponent(nominals.iter().map(|n| atol * n).collect());
    }
    if x0.is_empty() && !program.events().is_empty() && integrator_options.max_step.is_none() {
        let span = options.stop - options.start;
        if span > 0.0 && span.is_finite() {
            integrator_options.max_step = Some(span / 1000.0);
        }
    }
    integrator_options
}

/// Where rows are written: on the run's grid (continued from the origin of a longer run), or at
/// every step.
fn output_grid(options: &RunOptions) -> Output {
    match (options.interval, options.origin) {
        (Some(dt), Some(origin)) => Output::Grid { origin, dt },
        (Some(dt), None) => Output::Interval(dt),
        (None, _) => Output::Steps,
    }
}

/// How a run ended: the time the sink stopped it, the time and message of `terminate`, where
/// a watched value changed, the events handled, or the failure of the model.
#[derive(Default)]
struct Ending {
    stopped_at: Option<f64>,
    terminated: Option<(f64, String)>,
    events: EventStats,
    switched: Option<Switch>,
    failure: Option<SimError>,
}

/// Integrates a model without events, assertions or watched values.
fn integrate_plain(
    program: &ExecProgram,
    model: &mut ModelOde<'_>,
    stepper: &mut dyn Stepper,
    x0: &[f64],
    options: &RunOptions,
    output: &Output,
    writer: &mut RowWriter<'_, '_>,
) -> Ending {
    let outcome = eqm_integrators::integrate(model, stepper, options.start, x0, options.stop, output, |t, x| {
        writer.write(t, x)
    });
    match outcome {
        Ok(eqm_integrators::Outcome::Finished) => Ending::default(),
        Ok(eqm_integrators::Outcome::Stopped { time }) => Ending {
            stopped_at: Some(time),
            ..Ending::default()
        },
        Err(e) => Ending {
            failure: Some(integration_failure(
                program,
                e,
                model.failure.take(),
                failure_point(model, stepper, options),
            )),
            ..Ending::default()
        },
    }
}

/// Integrates a model with events, assertions or watched values through the hybrid driver.
fn integrate_hybrid(
    program: &ExecProgram,
    model: ModelOde<'_>,
    stepper: &mut dyn Stepper,
    x0: &[f64],
    options: &RunOptions,
    output: &Output,
    writer: &mut RowWriter<'_, '_>,
) -> Ending {
    let mut hybrid = HybridModel::new(model);
    hybrid.watch = options.watch.clone();
    hybrid.final_event = options.final_event;
    let outcome = crate::hybrid::integrate(
        &mut hybrid,
        stepper,
        options.start,
        x0,
        options.stop,
        output,
        |model, t, x| writer.write_hybrid(model, t, x),
    );
    // The lines printed after the last row (or before a failure) still reach the sink.
    writer.deliver_printed(&hybrid.stats.printed);
    let events = std::mem::take(&mut hybrid.stats);
    match outcome {
        Ok(HybridOutcome::Finished) => Ending {
            events,
            ..Ending::default()
        },
        Ok(HybridOutcome::Stopped { time }) => Ending {
            stopped_at: Some(time),
            events,
            ..Ending::default()
        },
        Ok(HybridOutcome::Terminated { time, message }) => Ending {
            terminated: Some((time, message)),
            events,
            ..Ending::default()
        },
        Ok(HybridOutcome::Switched {
            time,
            x,
            at_initialization,
        }) => match switch_values(&mut hybrid, time, &x, at_initialization) {
            Ok(switch) => Ending {
                switched: Some(switch),
                events,
                ..Ending::default()
            },
            Err(f) => Ending {
                failure: Some(SimError::Failed {
                    warnings: Vec::new(),
                    time,
                    message: "the model could not be evaluated where its structure changes".to_string(),
                    diagnostic: Some(Box::new(program.failure_diagnostic(&f))),
                }),
                events,
                ..Ending::default()
            },
        },
        Err(e) => Ending {
            failure: Some(hybrid_failure(
                program,
                e,
                hybrid.ode.failure.take(),
                failure_point(&mut hybrid.ode, stepper, options),
            )),
            events,
            ..Ending::default()
        },
    }
}

/// Where a run ended because a watched value changed at `(t, x)`: every variable of the
/// program (not parameters, not the compiler's own) by name, as the event iteration left them,
/// and the watched values.
fn switch_values(
    model: &mut HybridModel<'_>,
    t: f64,
    x: &[f64],
    at_initialization: bool,
) -> Result<Switch, eqm_ir::failure::EvalFailure> {
    let watched = model.watched_values();
    let instance = &mut model.ode.instance;
    let program = instance.program();
    let mut dx = vec![0.0; x.len()];
    OdeRhs::rhs(instance, t, x, &mut dx)?;
    instance.outputs(t, x, &mut dx)?;
    // The parameters the initialization computed (`fixed = false`) are carried too: the next
    // mode has no initialization to compute them again.
    let values = program
        .variables()
        .filter(|(name, v, ..)| {
            let symbol = program.symbols().get(*v);
            !name.starts_with('$')
                && match symbol.kind {
                    eqm_compile::dae::VarKind::Parameter => symbol.fixed == Some(false),
                    eqm_compile::dae::VarKind::Constant => false,
                    _ => true,
                }
        })
        .filter_map(|(name, _, slot, _)| {
            let value = match slot {
                Slot::State(i) => x.get(i as usize).copied(),
                Slot::Work(i) => instance.work().get(i as usize).copied(),
                Slot::Der(i) => dx.get(i as usize).copied(),
                Slot::Param(i) => instance.p().get(i as usize).copied(),
                Slot::Time => None,
            }?;
            Some((name.to_string(), value))
        })
        .collect();
    let previous = program
        .events()
        .previous
        .iter()
        .filter(|p| p.settled_at_start && !p.left_limit && !p.integer_part)
        .filter_map(|p| match program.exprs().get(p.expr) {
            eqm_ir::expr::Node::Var(v) => {
                let value = instance.work().get(p.slot as usize).copied()?;
                Some((program.symbols().get(*v).name.clone(), value))
            }
            _ => None,
        })
        .collect();
    Ok(Switch {
        time: t,
        values,
        watched,
        at_initialization,
        previous,
    })
}
