//! The settings of a simulation run and how they are completed: what a user gave, then the
//! model's `experiment` and `__eqm` annotations, then EQM's defaults.
//!
//! Input: [`RunSettings`] (every field optional) and the model's [`Experiment`]. Output: the
//! simulator's run options with every value decided and checked, and notes about settings
//! that have no effect; or a [`RunError::Settings`] naming the value that cannot be used.
//! Nothing here runs a model.

use eqm_diag::Diagnostic;
use eqm_integrators::{Atol, Method};
use eqm_ir::flat::Experiment;
use eqm_sim::simulate::{Backend, RunOptions, Stabilize};

/// How to run a simulation. Every field left `None` comes from the model's `experiment`
/// annotation (the method and the step from its `__eqm(solver = ..., step = ...)`, the output
/// interval from that step when `Interval` is not given), else from EQM's default: start 0;
/// stop five times the model's slowest time scale `T_max` after the start (from the
/// eigenvalues of its linearisation, see [`crate::stability::time_scales_for`]), or start + 1
/// when the model has no time scale or more than
/// [`MAX_STATES_FOR_TIME_SCALES`](crate::stability::MAX_STATES_FOR_TIME_SCALES) states; 500
/// intervals; relative tolerance 1e-6, absolute tolerance equal to it; method `auto`; native
/// code; at most [`DEFAULT_MAX_ROWS`] rows; the projection gain of a model with invariants from
/// its `stabilize(K = k)` annotation, else the fastest rate of the model at the start (at least
/// 10/(stop - start)). [`Model::plan_run`](crate::Model::plan_run) and the runs decide the stop
/// time so. A stop time equal to the start time is an initialization-only run: its one row
/// holds the consistent initial values.
#[derive(Debug, Clone, Default)]
pub struct RunSettings {
    pub start: Option<f64>,
    pub stop: Option<f64>,
    /// Output spacing.
    pub interval: Option<f64>,
    pub rtol: Option<f64>,
    pub atol: Option<f64>,
    /// The step of a fixed-step method; given to a method with both modes, it turns its step
    /// size control off.
    pub step: Option<f64>,
    pub method: Option<Method>,
    /// Evaluate with the reference interpreter instead of native code.
    pub interpreter: bool,
    /// The constraint projection of a model with invariants.
    pub stabilize: Option<Stabilize>,
    /// The result columns (full variable names); `None` is every state and every named
    /// variable that is not a parameter.
    pub variables: Option<Vec<String>>,
    /// The most rows the output interval may ask for (events add their rows beyond it).
    pub max_rows: Option<u64>,
    /// Set from another thread to stop the run: it is looked at before each output row, and
    /// a run stopped so ends with [`RunError::Io`] of kind `Interrupted` after delivering the
    /// rows before (see [`crate::counters::is_cancelled`]).
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Only start the model: the initialization and the events at the start, without the
    /// final event in which `terminal()` is true (what `check` runs; with the stop time at the
    /// start, the run shows that the model starts, not what it would do at its end).
    pub start_only: bool,
}

/// The most rows an output interval may ask for unless a run says otherwise: ten million rows
/// of a few columns are already gigabytes of CSV, so more is almost always a mistyped interval.
pub const DEFAULT_MAX_ROWS: u64 = 10_000_000;

/// Why a run did not happen or did not finish: a setting that cannot be used, a request that
/// does not fit the model, a failed simulation (with the rows before it delivered) or a sink
/// that could not take a row.
pub use eqm_sim::simulate::SimError as RunError;

impl RunSettings {
    /// These settings with the variables `plotted` among the result columns, after those asked
    /// for (nothing changes when the default columns are asked for: every named variable is
    /// among them).
    pub fn with_plotted(mut self, plotted: &[String]) -> RunSettings {
        if let Some(list) = &mut self.variables {
            for name in plotted {
                if !list.contains(name) {
                    list.push(name.clone());
                }
            }
        }
        self
    }

    /// Checks that the output `interval` over `[start, stop]` asks for at most the rows
    /// allowed (`E0716` at the model's interval when it comes from the experiment).
    fn check_rows(&self, experiment: &Experiment, start: f64, stop: f64, interval: f64) -> Result<(), RunError> {
        let usage = |message: String| Err(RunError::Settings(message));
        let span = stop - start;
        let max_rows = self.max_rows.unwrap_or(DEFAULT_MAX_ROWS);
        let rows = (span / interval).floor() + 1.0;
        if rows <= max_rows as f64 {
            return Ok(());
        }
        let number = eqm_diag::text::format_number;
        let message = format!(
            "the output interval {} over [{}, {}] asks for {} rows, more than the limit of {max_rows}",
            number(interval),
            number(start),
            number(stop),
            number(rows)
        );
        match (self.interval, experiment.spans.interval.or(experiment.spans.step)) {
            (None, Some(at)) => Err(RunError::Model(Box::new(
                Diagnostic::error("E0716", message, at, "this interval").with_help(
                    "give a larger interval (--interval on the command line overrides this one), or raise the limit with --max-rows",
                ),
            ))),
            // Every front end names its own way to raise the limit (`--max-rows`, `max_rows=`), so
            // the message says what to change rather than how.
            _ => usage(format!("{message}: choose a larger output interval or raise the limit of rows")),
        }
    }

    /// The run options for a model with `experiment`, and notes on settings that have no
    /// effect (a step given to a method that always controls its step size).
    pub(crate) fn resolve(&self, experiment: &Experiment) -> Result<(RunOptions, Vec<String>), RunError> {
        let usage = |message: String| Err(RunError::Settings(message));
        // A solver the model names that is no method was reported when the model was
        // flattened (`unknown_solver`), so here it can only be a known one.
        let model_method = experiment.solver.as_deref().and_then(Method::parse);
        let method = self.method.clone().or(model_method).unwrap_or(Method::Auto);
        let start = self.start.or(experiment.start_time).unwrap_or(0.0);
        let stop = self.stop.or(experiment.stop_time).unwrap_or(start + 1.0);
        if !(start.is_finite() && stop.is_finite() && stop >= start) {
            return usage(format!(
                "the stop time {stop} must not be before the start time {start}"
            ));
        }
        let span = stop - start;
        // An initialization-only run (stop = start) writes one row whatever the interval.
        // A model that fixes its step reports every step unless it says otherwise, as
        // system-dynamics tools report every DT.
        let interval = self
            .interval
            .or(experiment.interval)
            .or(experiment.step)
            .unwrap_or(if span > 0.0 { span / 500.0 } else { 1.0 });
        let rtol = self.rtol.or(experiment.tolerance).unwrap_or(1e-6);
        let atol = self.atol.unwrap_or(rtol);
        for (name, value) in [("--interval", interval), ("--rtol", rtol), ("--atol", atol)] {
            if !(value.is_finite() && value > 0.0) {
                return usage(format!("{name} must be a positive number, not {value}"));
            }
        }
        self.check_rows(experiment, start, stop, interval)?;
        // The command line's step, else the model's (`__eqm(step = h)`), as if it had been given.
        let given_step = self.step.or(experiment.step);
        let step = given_step.unwrap_or_else(|| {
            if span > 0.0 {
                interval.min(span / 100.0)
            } else {
                interval
            }
        });
        if !(step.is_finite() && step > 0.0) {
            return usage(format!("--step must be a positive number, not {step}"));
        }
        // The methods with both modes (implicit Euler, trapezoid, bdf, radau5, implicit
        // tableaux with embedded weights) take fixed steps exactly when a step is given; the
        // fixed-step methods always do (with a default step); the explicit adaptive ones have
        // no fixed-step mode.
        let fixed_step = method.takes_fixed_step(given_step.is_some());
        let mut notes = Vec::new();
        if given_step.is_some() && !fixed_step {
            notes.push(match self.step {
                Some(_) => format!(
                    "{} controls its step size and has no fixed-step mode; --step is ignored",
                    method.name()
                ),
                None => format!(
                    "{} controls its step size and has no fixed-step mode; the model's step {} is not used",
                    method.name(),
                    eqm_diag::text::format_number(step)
                ),
            });
        }
        let options = RunOptions {
            start,
            stop,
            integrator: eqm_integrators::Options {
                rtol,
                atol: Atol::Scalar(atol),
                step: fixed_step.then_some(step),
                ..eqm_integrators::Options::default()
            },
            method,
            interval: Some(interval),
            params: Vec::new(),
            starts: Vec::new(),
            backend: if self.interpreter {
                Backend::Interpreter
            } else {
                Backend::Auto
            },
            stabilize: self.stabilize.unwrap_or(match experiment.stabilize {
                Some(k) => Stabilize::Gain(k),
                None => Stabilize::Default,
            }),
            origin: None,
            watch: Default::default(),
            cancel: self.cancel.clone(),
            final_event: !self.start_only,
        };
        Ok((options, notes))
    }
}

/// The diagnostic for a model whose `__eqm(solver = "...")` names no method: `E0314` at the
/// name, with the closest method name as help.
pub(crate) fn unknown_solver(experiment: &Experiment) -> Option<Diagnostic> {
    let (name, span) = (experiment.solver.as_deref()?, experiment.spans.solver?);
    if Method::parse(name).is_some() {
        return None;
    }
    let known: Vec<&str> = Method::NAMED.iter().map(|m| m.name()).collect();
    let mut d = Diagnostic::error(
        "E0314",
        format!(
            "the solver `{name}` of `__eqm` is no method; known: {}",
            known.join(", ")
        ),
        span,
        "unknown solver",
    );
    if let Some(similar) = eqm_diag::did_you_mean(name, known.iter().copied()) {
        d = d.with_help(format!("did you mean `{similar}`?"));
    }
    Some(d)
}
