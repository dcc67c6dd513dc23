//! The vocabulary of a run: what to simulate and how, how it went, and why it did not.
//!
//! Input: nothing but the types of the integrators, the hybrid driver and the diagnostics.
//! Output: [`RunOptions`] (with [`Backend`], [`Stabilize`] and [`Watch`]), [`Summary`] (with
//! [`InvariantReport`] and [`Switch`]) and [`SimError`]; and the instance of a program with a
//! run's parameters and start values set. Every module of a run speaks these types, so they
//! live below the driver (`simulate`) that re-exports them. It deliberately decides no run
//! setting and runs nothing.

use crate::instance::Instance;
use eqm_compile::exec::ExecProgram;
use eqm_diag::Diagnostic;
use eqm_integrators::{self, Method};

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
    /// Set by another thread to stop the run before its next step; the run then ends with
    /// [`SimError::Io`] of kind `Interrupted` (as when its sink refuses a row).
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Whether the run ends with the final event, in which `terminal()` is true. A run that
    /// only starts a model to see that it starts (`eqm check`) leaves it out: the when-clauses
    /// of `terminal()` judge a finished run (a block that asserts it has sampled enough).
    pub final_event: bool,
}

pub use crate::hybrid::Watch;

/// Where a watched value changed (see [`Watch`]): the time, every variable's value there by
/// name (after the event iteration), and the watched values now.
#[derive(Debug, Clone, PartialEq)]
pub struct Switch {
    pub time: f64,
    pub values: Vec<(String, f64)>,
    pub watched: Vec<bool>,
    /// The initialization itself found other watched values than the run was started for (no
    /// event has happened yet): the run should start in the mode those values choose, from
    /// the model's own start values, rather than go on from these values.
    pub at_initialization: bool,
    /// The `pre` values of the pass that switched, by the name of the discrete variable (of
    /// those its own equation defines): the run of the new mode goes on with that pass.
    pub previous: Vec<(String, f64)>,
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
    /// The equations and loops of the initialization that plain Newton from the start values
    /// did not solve, with the method that did, in the order the program solves them.
    pub initialization: Vec<RecoveryNote>,
    /// Set when the run ended because a watched value changed.
    pub switched: Option<Switch>,
    /// For a model with invariants: the projection and the residuals.
    pub invariants: Option<InvariantReport>,
    /// What a user must know about the run even when it finished: a fixed step beyond the
    /// method's stability limit (`W0702`), assertions of level warning that stopped holding
    /// (`W0701`).
    pub warnings: Vec<Diagnostic>,
    /// How the initialization was solved when it took a path worth telling (the homotopy
    /// continuation of a model that calls `homotopy`), for `-v`.
    pub homotopy: Option<String>,
}

/// A block of equations that plain Newton did not solve, and how it was solved, for `-v`.
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveryNote {
    /// The number of equations of the block (one for a scalar implicit equation).
    pub equations: usize,
    /// The names of its unknowns.
    pub unknowns: Vec<String>,
    pub recoveries: crate::interp::Recoveries,
}

impl std::fmt::Display for RecoveryNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // At most eight names, so that a large loop stays one line.
        let mut names = self.unknowns.iter().take(8).cloned().collect::<Vec<_>>().join(", ");
        if self.unknowns.len() > 8 {
            names.push_str(", ...");
        }
        if self.equations == 1 {
            write!(f, "equation for {names}")?;
        } else {
            write!(f, "loop of {} unknowns {{{names}}}", self.unknowns.len())?;
        }
        let first = self.recoveries.first;
        write!(
            f,
            " at initialization: solved by {} after Newton failed ({})",
            first.method, first.newton
        )?;
        if !matches!(
            first.method,
            crate::interp::RecoveryMethod::Bracketing
                | crate::interp::RecoveryMethod::Untorn
                | crate::interp::RecoveryMethod::Restart
                | crate::interp::RecoveryMethod::NewtonRay
                | crate::interp::RecoveryMethod::Perturbed
        ) {
            let unit = match first.method {
                crate::interp::RecoveryMethod::Homotopy => "stage",
                crate::interp::RecoveryMethod::Continuation => "step",
                _ => "iteration",
            };
            let plural = if first.iterations == 1 { "" } else { "s" };
            write!(f, ", {} {unit}{plural}", first.iterations)?;
        }
        if self.recoveries.count > 1 {
            write!(f, " ({} solves needed more than Newton)", self.recoveries.count)?;
        }
        Ok(())
    }
}

/// Where a run hands what it computes as it goes: each output row, and each line the model
/// prints (`Modelica.Utilities.Streams.print`), the line before the first row after the
/// instant it was printed.
pub trait RunSink {
    fn row(&mut self, time: f64, values: &[f64]) -> std::io::Result<()>;
    fn print(&mut self, time: f64, line: &str) -> std::io::Result<()>;
}

/// A sink of rows alone: printed lines stay in the run's summary only.
impl<F: FnMut(f64, &[f64]) -> std::io::Result<()>> RunSink for F {
    fn row(&mut self, time: f64, values: &[f64]) -> std::io::Result<()> {
        self(time, values)
    }

    fn print(&mut self, _time: f64, _line: &str) -> std::io::Result<()> {
        Ok(())
    }
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
            SimError::Failed { time, message, .. } => {
                let time = eqm_diag::text::format_number(*time);
                write!(f, "the simulation failed at time {time}: {message}")
            }
            SimError::Io(e) => write!(f, "cannot write the results: {e}"),
        }
    }
}

impl std::error::Error for SimError {}

/// An instance of `program` with the run's parameters and start values set.
pub(crate) fn instance<'p>(program: &'p ExecProgram, options: &RunOptions) -> Result<Instance<'p>, SimError> {
    instance_with_objects_of(program, options, None)
}

/// [`instance`], with the external objects of `objects_of` when given (see
/// [`Instance::with_objects_of`]).
pub(crate) fn instance_with_objects_of<'p>(
    program: &'p ExecProgram,
    options: &RunOptions,
    objects_of: Option<&Instance<'_>>,
) -> Result<Instance<'p>, SimError> {
    let mut instance = Instance::with_objects_of(program, objects_of).map_err(|d| SimError::Model(Box::new(d)))?;
    for (name, value) in &options.params {
        instance
            .set_param(name, *value)
            .map_err(|d| SimError::Model(Box::new(d)))?;
    }
    instance.set_start_values(&options.starts);
    // The values the instance was made with are the declared start values: the discrete
    // variables an initialization holds at their start values (and their `pre` values) read
    // them from there, so they are computed again with the values given.
    if !options.starts.is_empty() {
        instance
            .start_values()
            .map_err(|f| SimError::Model(Box::new(program.failure_diagnostic(&f))))?;
    }
    Ok(instance)
}
