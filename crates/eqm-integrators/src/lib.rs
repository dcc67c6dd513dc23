//! Integrators: the numerical core of `eqm run`, independent of the model compiler.
//!
//! Input: an [`OdeSystem`] `x' = f(t, x)` (the compiled model's right-hand side, or any test
//! problem), an initial point, a [`Method`] with its [`Options`], and the output request.
//! Output: rows `(t, x)` handed to an observer as they are computed, and on failure an
//! [`IntegrationError`] that names the time (and for non-finite values, every component).
//!
//! Two layers:
//! - a [`Stepper`] takes one accepted step at a time, never beyond a time limit, and can
//!   interpolate inside its last step (dense output) and restart from any point. Event location
//!   (zero crossings evaluated on the dense output, then a restart at the event) belongs on top
//!   of this trait, not inside the methods;
//! - [`integrate`] drives a stepper from `t0` to `t_end` and emits the requested output times by
//!   interpolation, so output never forces the step size.
//!
//! One module per family: [`explicit`] (fixed-step Runge–Kutta from any [`tableau::Tableau`]),
//! [`adaptive`] (embedded pairs rkf45 and dopri5 with step size control), [`multistep`]
//! (Adams–Bashforth), [`implicit`] (fixed-step implicit Euler and trapezoid for stiff
//! problems), [`bdf`] (variable-order, variable-step BDF for stiff problems), [`radau`]
//! (Radau IIA of order 5 for stiff problems; both also with a fixed step), [`dirk`] (diagonally implicit Runge–Kutta methods
//! from user tableaux), [`auto`] (DOPRI5 switching to BDF).
//!
//! Deliberately not here: events (`hybrid` builds them on [`Stepper`]), integration backwards
//! in time, and any IO. Explicit methods allocate nothing in their inner loops: every buffer is sized in
//! `initialize` (the implicit ones allocate when they factor a new matrix).

pub mod adaptive;
pub mod auto;
pub mod bdf;
pub mod dirk;
pub mod explicit;
pub mod implicit;
pub mod linalg;
pub mod multistep;
pub mod radau;
pub mod tableau;

use std::fmt;
use std::ops::ControlFlow;

use adaptive::Adaptive;
use explicit::ExplicitRk;
use implicit::Theta;
use multistep::AdamsBashforth;
use tableau::Tableau;

/// The right-hand side failed to evaluate (for example a nonlinear solve inside the model did
/// not converge, or an assertion failed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RhsError {
    pub message: String,
}

impl RhsError {
    /// An error with the given message.
    pub fn new(message: impl Into<String>) -> Self {
        RhsError {
            message: message.into(),
        }
    }
}

impl fmt::Display for RhsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RhsError {}

/// A system of ordinary differential equations `x' = f(t, x)` with a fixed dimension.
pub trait OdeSystem {
    /// The number of states.
    fn dim(&self) -> usize;
    /// Writes `f(t, x)` into `dx`; both slices have `dim()` elements.
    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RhsError>;
    /// Writes the Jacobian `∂f/∂x` at `(t, x)` into `jacobian` (`dim() × dim()`, every entry)
    /// when the system can compute it exactly (a model's symbolic Jacobian). `None` means it
    /// cannot, at this point or at all, and the integrator uses difference quotients.
    fn jacobian(&mut self, t: f64, x: &[f64], jacobian: &mut nalgebra::DMatrix<f64>) -> Option<Result<(), RhsError>> {
        let _ = (t, x, jacobian);
        None
    }
    /// The rows of the pattern of `∂f/∂x` (row `i` lists the columns its entries may be nonzero
    /// in, sorted), when the system knows it; large systems then get sparse Jacobians and a
    /// sparse LU ([`linalg`]).
    fn jacobian_pattern(&self) -> Option<&[Vec<u32>]> {
        None
    }
    /// Writes the values of the pattern's entries of `∂f/∂x` at `(t, x)`, row by row, when the
    /// system can compute them exactly; `None` as for [`OdeSystem::jacobian`].
    fn sparse_jacobian(&mut self, t: f64, x: &[f64], values: &mut [f64]) -> Option<Result<(), RhsError>> {
        let _ = (t, x, values);
        None
    }
}

/// The absolute tolerance: one for all components, or one per component.
#[derive(Debug, Clone, PartialEq)]
pub enum Atol {
    Scalar(f64),
    PerComponent(Vec<f64>),
}

/// Method options. Adaptive methods read `rtol`, `atol`, `initial_step` and `max_step`;
/// fixed-step methods read `step`; all read `max_steps`. The methods with both modes
/// ([`Method::adapts_without_step`]) take fixed steps when `step` is given (and then read `rtol`
/// and `atol` only as the scale of their Newton tolerance).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Relative tolerance (≥ 0).
    pub rtol: f64,
    /// Absolute tolerance (> 0, so that the error scale `atol + rtol·|x|` is never zero).
    pub atol: Atol,
    /// The step size of fixed-step methods; required by them. Implicit Euler, the trapezoid,
    /// BDF, Radau5 and diagonally implicit tableaux take fixed steps when it is given and
    /// control their step size when it is not.
    pub step: Option<f64>,
    /// The most steps (accepted and rejected) one stepper may attempt.
    pub max_steps: usize,
    /// The first step of an adaptive method; chosen automatically when `None`.
    pub initial_step: Option<f64>,
    /// An upper bound on the step of an adaptive method.
    pub max_step: Option<f64>,
}

/// Default for [`Options::max_steps`].
pub const DEFAULT_MAX_STEPS: usize = 1_000_000;

impl Default for Options {
    fn default() -> Self {
        Options {
            rtol: 1e-6,
            atol: Atol::Scalar(1e-6),
            step: None,
            max_steps: DEFAULT_MAX_STEPS,
            initial_step: None,
            max_step: None,
        }
    }
}

impl Options {
    /// Checks the options every method reads.
    fn check_common(&self) -> Result<(), IntegrationError> {
        if self.max_steps == 0 {
            return Err(IntegrationError::invalid(
                "the maximum number of steps must be at least 1",
            ));
        }
        for (what, value) in [("initial step", self.initial_step), ("maximum step", self.max_step)] {
            if let Some(h) = value
                && (h.is_nan() || h <= 0.0)
            {
                return Err(IntegrationError::invalid(format!(
                    "the {what} must be positive, not {h}"
                )));
            }
        }
        Ok(())
    }

    /// The fixed step `h` of a fixed-step method, checked.
    pub(crate) fn fixed_step(&self, method: &str) -> Result<f64, IntegrationError> {
        self.check_common()?;
        match self.step {
            Some(h) if h > 0.0 && h.is_finite() => Ok(h),
            Some(h) => Err(IntegrationError::invalid(format!(
                "the step size must be positive and finite, not {h}"
            ))),
            None => Err(IntegrationError::invalid(format!(
                "{method} is a fixed-step method and needs a step size"
            ))),
        }
    }

    /// The absolute tolerance expanded to one value per component, checked together with
    /// `rtol`.
    pub(crate) fn atol_per_component(&self, dim: usize) -> Result<Vec<f64>, IntegrationError> {
        self.check_common()?;
        if !(self.rtol >= 0.0 && self.rtol.is_finite()) {
            return Err(IntegrationError::invalid(format!(
                "the relative tolerance must be ≥ 0, not {}",
                self.rtol
            )));
        }
        let atol = match &self.atol {
            Atol::Scalar(a) => vec![*a; dim],
            Atol::PerComponent(v) if v.len() == dim => v.clone(),
            Atol::PerComponent(v) => {
                return Err(IntegrationError::invalid(format!(
                    "{} absolute tolerances given for {dim} states",
                    v.len()
                )));
            }
        };
        if let Some(bad) = atol.iter().find(|a| !(**a > 0.0 && a.is_finite())) {
            return Err(IntegrationError::invalid(format!(
                "absolute tolerances must be positive, not {bad}"
            )));
        }
        Ok(atol)
    }
}

/// Counters of one stepper since `initialize` (restarts keep counting).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Accepted steps.
    pub steps: usize,
    /// Rejected step attempts (error too large, or the trial produced a failure).
    pub rejected: usize,
    /// Evaluations of the right-hand side (those for Jacobians included).
    pub rhs_evals: usize,
    /// Jacobians built (symbolic ones and difference quotients).
    pub jacobians: usize,
    /// Of those, the ones the system computed itself ([`OdeSystem::jacobian`]).
    pub symbolic_jacobians: usize,
    /// Of those, the sparse ones (whose iteration matrices the sparse LU factors).
    pub sparse_jacobians: usize,
    /// LU factorisations of iteration matrices.
    pub factorizations: usize,
}

impl Stats {
    fn attempts(&self) -> usize {
        self.steps + self.rejected
    }
}

/// One accepted step: it went from `t_prev` to `t`; [`Stepper::interpolate`] is valid between.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepInfo {
    pub t_prev: f64,
    pub t: f64,
}

/// Which quantity was not finite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    State,
    Derivative,
}

/// Why an integration stopped. Every variant except `InvalidInput` carries the time.
#[derive(Debug, Clone, PartialEq)]
pub enum IntegrationError {
    /// NaN or infinity in the state or its derivative, with every offending component.
    NonFinite {
        time: f64,
        components: Vec<usize>,
        quantity: Quantity,
    },
    /// The step size control asked for a step too small to advance time.
    StepSizeUnderflow { time: f64, step: f64 },
    /// More than `max_steps` step attempts.
    TooManySteps { time: f64, max_steps: usize },
    /// The right-hand side reported an error at this time.
    Rhs { time: f64, message: String },
    /// The options, initial values or output request are unusable.
    InvalidInput { message: String },
}

impl IntegrationError {
    fn invalid(message: impl Into<String>) -> Self {
        IntegrationError::InvalidInput {
            message: message.into(),
        }
    }

    /// The time the error happened at, if it belongs to one.
    pub fn time(&self) -> Option<f64> {
        match self {
            IntegrationError::NonFinite { time, .. }
            | IntegrationError::StepSizeUnderflow { time, .. }
            | IntegrationError::TooManySteps { time, .. }
            | IntegrationError::Rhs { time, .. } => Some(*time),
            IntegrationError::InvalidInput { .. } => None,
        }
    }

    /// Failures of a trial step that a smaller step may avoid: an adaptive method rejects the
    /// step and retries instead of giving up.
    fn is_recoverable(&self) -> bool {
        matches!(self, IntegrationError::NonFinite { .. } | IntegrationError::Rhs { .. })
    }
}

impl fmt::Display for IntegrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntegrationError::NonFinite {
                time,
                components,
                quantity,
            } => {
                let what = match quantity {
                    Quantity::State => "state",
                    Quantity::Derivative => "derivative",
                };
                // A large model can have thousands of offending components; the message names
                // the first few, the error value keeps them all.
                const SHOWN: usize = 10;
                let listed: Vec<String> = components.iter().take(SHOWN).map(|c| c.to_string()).collect();
                write!(
                    f,
                    "at t = {time}: the {what} is NaN or infinite in component(s) {}",
                    listed.join(", ")
                )?;
                if components.len() > SHOWN {
                    write!(f, " and {} more", components.len() - SHOWN)?;
                }
                Ok(())
            }
            IntegrationError::StepSizeUnderflow { time, step } => {
                write!(f, "at t = {time}: the step size {step:e} is too small to advance time")
            }
            IntegrationError::TooManySteps { time, max_steps } => {
                write!(f, "at t = {time}: more than {max_steps} steps")
            }
            IntegrationError::Rhs { time, message } => write!(f, "at t = {time}: {message}"),
            IntegrationError::InvalidInput { message } => f.write_str(message),
        }
    }
}

impl std::error::Error for IntegrationError {}

/// A one-step interface to an integration method, so that event handling can be layered on top
/// without changing the methods.
///
/// The options are given to the constructor (or [`stepper_for`]) and checked by
/// [`Stepper::initialize`], since [`Stepper::restart`] and [`integrate`] need them again.
pub trait Stepper {
    /// The method's name, as accepted by [`Method::parse`].
    fn name(&self) -> &str;

    /// Starts at `(t0, x0)`: checks the options and `x0` against `sys.dim()`, sizes the buffers,
    /// resets the statistics.
    fn initialize(&mut self, sys: &mut dyn OdeSystem, t0: f64, x0: &[f64]) -> Result<(), IntegrationError>;

    /// Takes one accepted step, ending at most at `t_limit` (exactly at `t_limit` when the limit
    /// is within reach). On error the state and time stay those of the last accepted step.
    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<StepInfo, IntegrationError>;

    /// Writes the dense-output approximation at `t` into `out` (`dim` elements). Valid for `t`
    /// in `[t_prev, t]` of the last accepted step, also after a failed `step` (failed trials
    /// never touch it); outside that interval it extrapolates. Right after a (re)start it is
    /// the start point.
    fn interpolate(&self, t: f64, out: &mut [f64]);

    /// Continues from `(t, x)`, discarding all history (step size, multistep values), e.g. after
    /// an event. The derivative at the new point is evaluated by the next `step`.
    fn restart(&mut self, t: f64, x: &[f64]) -> Result<(), IntegrationError>;

    /// The state at [`Stepper::time`].
    fn state(&self) -> &[f64];

    /// The time of the last accepted step's end (or of the last (re)start).
    fn time(&self) -> f64;

    /// Counters since `initialize`.
    fn stats(&self) -> Stats;

    /// What the method decided that a user may want to know (`auto`'s switches), for `-v`.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}

/// An integration method, by its `--solver` name, or a user's explicit tableau.
#[derive(Debug, Clone, PartialEq)]
pub enum Method {
    Euler,
    Heun,
    Midpoint,
    Rk4,
    Rkf45,
    Dopri5,
    Ab2,
    Ab4,
    ImplicitEuler,
    Trapezoid,
    /// Variable-order, variable-step BDF (NDF) for stiff problems.
    Bdf,
    /// Radau IIA of order 5 (RADAU5) for stiff problems.
    Radau5,
    /// DOPRI5, switching to BDF while the problem is stiff.
    Auto,
    /// A user-supplied explicit tableau: fixed-step, or adaptive when it has embedded weights.
    Tableau(Box<Tableau>),
}

impl Method {
    /// The methods that have a name, in the order of the CLI documentation.
    pub const NAMED: [Method; 13] = [
        Method::Euler,
        Method::Heun,
        Method::Midpoint,
        Method::Rk4,
        Method::Rkf45,
        Method::Dopri5,
        Method::Ab2,
        Method::Ab4,
        Method::ImplicitEuler,
        Method::Trapezoid,
        Method::Bdf,
        Method::Radau5,
        Method::Auto,
    ];

    /// The method with this `--solver` name.
    pub fn parse(name: &str) -> Option<Method> {
        Method::NAMED.into_iter().find(|m| m.name() == name)
    }

    /// The `--solver` name (a user tableau's own name).
    pub fn name(&self) -> &str {
        match self {
            Method::Euler => "euler",
            Method::Heun => "heun",
            Method::Midpoint => "midpoint",
            Method::Rk4 => "rk4",
            Method::Rkf45 => "rkf45",
            Method::Dopri5 => "dopri5",
            Method::Ab2 => "ab2",
            Method::Ab4 => "ab4",
            Method::ImplicitEuler => "implicit-euler",
            Method::Trapezoid => "trapezoid",
            Method::Bdf => "bdf",
            Method::Radau5 => "radau5",
            Method::Auto => "auto",
            Method::Tableau(t) => t.name(),
        }
    }

    /// Whether the method has both modes: it controls its step size when no fixed step is given
    /// and takes steps of exactly [`Options::step`] when one is. Implicit Euler and the
    /// trapezoidal rule (adaptive by step doubling), BDF (fixed order and step, started by
    /// Radau5), Radau5, and diagonally implicit tableaux with embedded weights.
    pub fn adapts_without_step(&self) -> bool {
        match self {
            Method::ImplicitEuler | Method::Trapezoid | Method::Bdf | Method::Radau5 => true,
            Method::Tableau(t) => !t.is_explicit() && t.b_hat().is_some(),
            _ => false,
        }
    }

    /// Whether the method solves implicit equations with Newton iterations and so needs the
    /// Jacobian of the right-hand side (`auto` may switch to BDF at any size: with the
    /// Jacobian's pattern, large systems get a sparse LU).
    pub fn uses_jacobian(&self) -> bool {
        match self {
            Method::ImplicitEuler | Method::Trapezoid | Method::Bdf | Method::Radau5 | Method::Auto => true,
            Method::Tableau(t) => !t.is_explicit(),
            _ => false,
        }
    }

    /// Whether [`Options::step`] makes the method take fixed steps: always for the fixed-step
    /// methods, for the methods of [`Method::adapts_without_step`] when it is given, never for
    /// the explicit adaptive ones (rkf45, dopri5, auto, explicit tableaux with embedded
    /// weights), which ignore it.
    pub fn takes_fixed_step(&self, step_given: bool) -> bool {
        if self.adapts_without_step() {
            step_given
        } else {
            !self.is_adaptive()
        }
    }

    /// Whether the method controls its step size (reads the tolerances) when no fixed step is
    /// given; see [`Method::takes_fixed_step`] for what a given one does.
    pub fn is_adaptive(&self) -> bool {
        match self {
            Method::Rkf45 | Method::Dopri5 | Method::Bdf | Method::Radau5 | Method::Auto => true,
            Method::Tableau(t) => t.b_hat().is_some(),
            Method::Euler
            | Method::Heun
            | Method::Midpoint
            | Method::Rk4
            | Method::Ab2
            | Method::Ab4
            | Method::ImplicitEuler
            | Method::Trapezoid => false,
        }
    }
}

/// A stepper for `method`; the options are checked when it is initialized.
pub fn stepper_for(method: &Method, options: &Options) -> Box<dyn Stepper> {
    let options = options.clone();
    match method {
        Method::Euler => Box::new(ExplicitRk::new(tableau::EULER, options)),
        Method::Heun => Box::new(ExplicitRk::new(tableau::HEUN, options)),
        Method::Midpoint => Box::new(ExplicitRk::new(tableau::MIDPOINT, options)),
        Method::Rk4 => Box::new(ExplicitRk::new(tableau::RK4, options)),
        Method::Rkf45 => Box::new(Adaptive::new(tableau::FEHLBERG45, options)),
        Method::Dopri5 => Box::new(Adaptive::dopri5(options)),
        Method::Ab2 => Box::new(AdamsBashforth::new(2, options)),
        Method::Ab4 => Box::new(AdamsBashforth::new(4, options)),
        Method::ImplicitEuler => Box::new(Theta::implicit_euler(options)),
        Method::Trapezoid => Box::new(Theta::trapezoid(options)),
        Method::Bdf => Box::new(bdf::Bdf::new(options)),
        Method::Radau5 => Box::new(radau::Radau::new(options)),
        Method::Auto => Box::new(auto::Auto::new(options)),
        Method::Tableau(t) if !t.is_explicit() => Box::new(dirk::Dirk::new((**t).clone(), options)),
        Method::Tableau(t) if t.b_hat().is_some() => Box::new(Adaptive::new((**t).clone(), options)),
        Method::Tableau(t) => Box::new(ExplicitRk::new((**t).clone(), options)),
    }
}

/// Which times [`integrate`] reports. `t0` and `t_end` are always reported.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// `t0 + k·dt` for `k = 0, 1, ...` up to `t_end`.
    Interval(f64),
    /// These times (non-decreasing; those outside `[t0, t_end]` are skipped).
    Times(Vec<f64>),
    /// The end of every accepted step.
    Steps,
}

/// How a successful [`integrate`] ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// `t_end` was reached and reported.
    Finished,
    /// The observer returned `Break` for the row at `time`.
    Stopped { time: f64 },
}

/// Integrates `sys` from `(t0, x0)` to `t_end` with `stepper` (forward in time only) and calls
/// `observer(t, x)` for every output time in increasing order, as soon as the step covering it
/// is accepted. Rows between step ends are interpolated with the stepper's dense output, so the
/// output request never changes the steps taken.
///
/// On error, every row before the failing step has been delivered; the stepper still holds the
/// last accepted point (`stepper.time()`, `stepper.state()`) and its statistics.
pub fn integrate(
    sys: &mut dyn OdeSystem,
    stepper: &mut dyn Stepper,
    t0: f64,
    x0: &[f64],
    t_end: f64,
    output: &Output,
    mut observer: impl FnMut(f64, &[f64]) -> ControlFlow<()>,
) -> Result<Outcome, IntegrationError> {
    if !(t0.is_finite() && t_end.is_finite() && t_end >= t0) {
        return Err(IntegrationError::invalid(format!(
            "the end time {t_end} must be finite and not before the start time {t0}"
        )));
    }
    let mut schedule = Schedule::new(output, t0, t_end)?;
    stepper.initialize(sys, t0, x0)?;
    if observer(t0, stepper.state()).is_break() {
        return Ok(Outcome::Stopped { time: t0 });
    }
    let mut row = vec![0.0; x0.len()];
    while stepper.time() < t_end {
        let info = stepper.step(sys, t_end)?;
        while let Some(t) = schedule.next_until(info.t) {
            // At the step's end the state itself is exact; interpolating there would only add
            // rounding.
            let values = if t == info.t {
                stepper.state()
            } else {
                stepper.interpolate(t, &mut row);
                &row
            };
            if observer(t, values).is_break() {
                return Ok(Outcome::Stopped { time: t });
            }
        }
    }
    Ok(Outcome::Finished)
}

/// The output times after `t0`, produced lazily in increasing order.
pub struct Schedule<'a> {
    output: &'a Output,
    t0: f64,
    t_end: f64,
    /// The next interval index, or the next position in the list of times.
    next: usize,
    /// The last time reported.
    last: f64,
}

impl<'a> Schedule<'a> {
    pub fn new(output: &'a Output, t0: f64, t_end: f64) -> Result<Self, IntegrationError> {
        match output {
            Output::Interval(dt) if !(*dt > 0.0 && dt.is_finite()) => {
                return Err(IntegrationError::invalid(format!(
                    "the output interval must be positive, not {dt}"
                )));
            }
            Output::Times(times) if times.iter().any(|t| !t.is_finite()) || times.windows(2).any(|w| w[1] < w[0]) => {
                return Err(IntegrationError::invalid(
                    "output times must be finite and non-decreasing",
                ));
            }
            _ => {}
        }
        Ok(Schedule {
            output,
            t0,
            t_end,
            next: match output {
                Output::Interval(_) => 1,
                _ => 0,
            },
            last: t0,
        })
    }

    /// The next output time if it is at most `t` (the end of the step just taken), consuming it.
    pub fn next_until(&mut self, t: f64) -> Option<f64> {
        if self.last >= self.t_end {
            return None;
        }
        let candidate = match self.output {
            Output::Interval(dt) => {
                // Computed from the index, not accumulated, so that rounding does not drift; a
                // point within rounding of t_end is t_end itself, so that no near-duplicate row
                // appears.
                let c = self.t0 + self.next as f64 * dt;
                if c >= self.t_end - 1e-9 * dt { self.t_end } else { c }
            }
            Output::Times(times) => {
                while self.next < times.len() && times[self.next] <= self.last {
                    self.next += 1;
                }
                times.get(self.next).map_or(self.t_end, |&c| c.min(self.t_end))
            }
            Output::Steps if t > self.last => t.min(self.t_end),
            Output::Steps => return None,
        };
        if candidate > t {
            return None;
        }
        self.next += 1;
        self.last = candidate;
        Some(candidate)
    }
}

/// The last accepted step: both ends with their derivatives. Shared by all steppers, for the
/// Hermite dense output and the first stage of the next step.
#[derive(Debug, Default)]
pub(crate) struct StepEnds {
    pub t_prev: f64,
    pub t: f64,
    pub x_prev: Vec<f64>,
    pub x: Vec<f64>,
    pub f_prev: Vec<f64>,
    pub f: Vec<f64>,
    /// `f` has not been evaluated at `(t, x)` yet: after (re)start the evaluation waits for the
    /// next step, so that `restart` needs no system and cannot fail on the right-hand side.
    pub needs_derivative: bool,
}

impl StepEnds {
    /// Sizes the buffers for `dim` states and zeroes the statistics: the part of `initialize`
    /// every stepper shares.
    pub fn reset(&mut self, dim: usize, stats: &mut Stats) {
        zeroed(dim, [&mut self.x_prev, &mut self.x, &mut self.f_prev, &mut self.f]);
        *stats = Stats::default();
    }

    /// Restarts at `(t, x)` with no step behind it; the state is unchanged when `x` is unusable.
    pub fn restart(&mut self, t: f64, x: &[f64]) -> Result<(), IntegrationError> {
        check_restart(t, x, self.x.len())?;
        self.t_prev = t;
        self.t = t;
        self.x.copy_from_slice(x);
        self.x_prev.copy_from_slice(x);
        self.needs_derivative = true;
        Ok(())
    }

    /// Prepares a step towards `t_limit`: refuses a limit not after `t` (or NaN) and a step
    /// beyond the budget, and evaluates `f(t, x)` if a (re)start left it out. Returns whether
    /// it did, i.e. whether this is the first step since a (re)start.
    pub fn begin_step(
        &mut self,
        sys: &mut dyn OdeSystem,
        t_limit: f64,
        stats: &mut Stats,
        max_steps: usize,
    ) -> Result<bool, IntegrationError> {
        if t_limit.is_nan() || t_limit <= self.t {
            return Err(IntegrationError::invalid(format!(
                "the step limit {t_limit} is not after t = {}",
                self.t
            )));
        }
        check_budget(self.t, stats, max_steps)?;
        if !self.needs_derivative {
            return Ok(false);
        }
        eval_rhs(sys, self.t, &self.x, &mut self.f, stats)?;
        self.f_prev.copy_from_slice(&self.f);
        self.needs_derivative = false;
        Ok(true)
    }

    /// Makes `(t_new, x_new, f_new)` the current point and the current one the previous, and
    /// counts the accepted step. The buffers are swapped, not copied; `x_new` and `f_new`
    /// receive the old previous values.
    pub fn accept(&mut self, t_new: f64, x_new: &mut Vec<f64>, f_new: &mut Vec<f64>, stats: &mut Stats) -> StepInfo {
        self.t_prev = self.t;
        self.t = t_new;
        std::mem::swap(&mut self.x_prev, &mut self.x);
        std::mem::swap(&mut self.x, x_new);
        std::mem::swap(&mut self.f_prev, &mut self.f);
        std::mem::swap(&mut self.f, f_new);
        stats.steps += 1;
        StepInfo {
            t_prev: self.t_prev,
            t: t_new,
        }
    }

    /// The cubic Hermite interpolant through both ends with their derivatives (third order,
    /// so the interpolation error is below the local error of methods up to order 3 and of the
    /// same size for order 4).
    pub fn hermite(&self, t: f64, out: &mut [f64]) {
        let h = self.t - self.t_prev;
        if h == 0.0 {
            out.copy_from_slice(&self.x);
            return;
        }
        let s = (t - self.t_prev) / h;
        let h00 = (1.0 + 2.0 * s) * (1.0 - s) * (1.0 - s);
        let h10 = s * (1.0 - s) * (1.0 - s) * h;
        let h01 = s * s * (3.0 - 2.0 * s);
        let h11 = s * s * (s - 1.0) * h;
        for (i, o) in out.iter_mut().enumerate() {
            *o = h00 * self.x_prev[i] + h10 * self.f_prev[i] + h01 * self.x[i] + h11 * self.f[i];
        }
    }
}

/// The `TooManySteps` error once `max_steps` attempts have been made.
pub(crate) fn check_budget(t: f64, stats: &Stats, max_steps: usize) -> Result<(), IntegrationError> {
    if stats.attempts() < max_steps {
        Ok(())
    } else {
        Err(IntegrationError::TooManySteps { time: t, max_steps })
    }
}

/// The [`Stepper`] accessors that only read a stepper's `ends: StepEnds` and `stats: Stats`
/// fields, written once for all steppers.
macro_rules! step_ends_accessors {
    () => {
        fn state(&self) -> &[f64] {
            &self.ends.x
        }

        fn time(&self) -> f64 {
            self.ends.t
        }

        fn stats(&self) -> Stats {
            self.stats
        }
    };
}
pub(crate) use step_ends_accessors;

/// Evaluates the right-hand side, counting the call and turning failures and non-finite
/// derivatives into errors at time `t`.
pub(crate) fn eval_rhs(
    sys: &mut dyn OdeSystem,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
    stats: &mut Stats,
) -> Result<(), IntegrationError> {
    stats.rhs_evals += 1;
    sys.rhs(t, x, dx).map_err(|e| IntegrationError::Rhs {
        time: t,
        message: e.message,
    })?;
    check_finite(t, dx, Quantity::Derivative)
}

/// `f(t, x)`: `given` when the caller has it, else evaluated (see [`eval_rhs`]). Difference
/// quotients need it; an exact Jacobian does not, so callers may leave it to this.
fn f_given_or_evaluated<'f>(
    sys: &mut dyn OdeSystem,
    t: f64,
    x: &[f64],
    given: Option<&'f [f64]>,
    stats: &mut Stats,
) -> Result<std::borrow::Cow<'f, [f64]>, IntegrationError> {
    if let Some(f) = given {
        return Ok(std::borrow::Cow::Borrowed(f));
    }
    let mut f = vec![0.0; x.len()];
    eval_rhs(sys, t, x, &mut f, stats)?;
    Ok(std::borrow::Cow::Owned(f))
}

/// The Jacobian of `f` at `(t, point)`, where `f` is `f_point` (evaluated here when not given
/// and needed), into `jacobian` (n × n): the system's own ([`OdeSystem::jacobian`], a model's
/// symbolic Jacobian) when it has one at this point, otherwise forward differences, one
/// evaluation per state. For differences component
/// `j` moves by `√ε·max(|x_j|, floor(j))`: the floor is the scale below which the component's
/// value does not matter (its error weight), so that a component far smaller than 1 is not
/// moved by far more than its size. `work` (n elements) is scratch space.
#[allow(clippy::too_many_arguments)]
pub(crate) fn jacobian_at(
    sys: &mut dyn OdeSystem,
    t: f64,
    point: &[f64],
    f_point: Option<&[f64]>,
    floor: &dyn Fn(usize) -> f64,
    work: &mut [f64],
    jacobian: &mut nalgebra::DMatrix<f64>,
    stats: &mut Stats,
) -> Result<(), IntegrationError> {
    let n = point.len();
    stats.jacobians += 1;
    match sys.jacobian(t, point, jacobian) {
        Some(Ok(())) if jacobian.iter().all(|v| v.is_finite()) => {
            stats.symbolic_jacobians += 1;
            return Ok(());
        }
        Some(Err(e)) => {
            return Err(IntegrationError::Rhs {
                time: t,
                message: e.message,
            });
        }
        // A Jacobian that is not finite here is left to difference quotients, which report
        // the non-finite derivative if there is one.
        Some(Ok(())) | None => {}
    }
    let f_point = f_given_or_evaluated(sys, t, point, f_point, stats)?;
    let mut column = vec![0.0; n];
    work.copy_from_slice(point);
    for j in 0..n {
        let xj = point[j];
        let delta = difference_step(xj, floor(j));
        work[j] = xj + delta;
        // The column's actual increment, which rounding makes differ from `delta`.
        let h = work[j] - xj;
        eval_rhs(sys, t, work, &mut column, stats)?;
        for i in 0..n {
            jacobian[(i, j)] = (column[i] - f_point[i]) / h;
        }
        work[j] = xj;
    }
    Ok(())
}

/// The increment of a component of value `x` for a forward difference: `√ε·max(|x|, floor)`,
/// `floor` the scale below which its value does not matter (see [`jacobian_at`]).
pub(crate) fn difference_step(x: f64, floor: f64) -> f64 {
    f64::EPSILON.sqrt() * x.abs().max(floor).max(f64::MIN_POSITIVE)
}

/// The pattern a stepper's Jacobians use: `None` until a system was seen, then the sparse
/// layout when the system has a pattern and more than [`linalg::SPARSE_STATES`] states.
pub(crate) type PatternCache = Option<Option<std::sync::Arc<linalg::SparsePattern>>>;

/// The Jacobian of `f` at `(t, point)` (see [`jacobian_at`]), sparse for a large system with a
/// pattern: the system's own values, else difference quotients by colour.
#[allow(clippy::too_many_arguments)]
pub(crate) fn build_jacobian(
    sys: &mut dyn OdeSystem,
    t: f64,
    point: &[f64],
    f_point: Option<&[f64]>,
    floor: &dyn Fn(usize) -> f64,
    work: &mut [f64],
    cache: &mut PatternCache,
    stats: &mut Stats,
) -> Result<linalg::Jacobian, IntegrationError> {
    let n = point.len();
    let pattern = cache
        .get_or_insert_with(|| {
            if n <= linalg::SPARSE_STATES {
                return None;
            }
            let rows = sys.jacobian_pattern()?;
            linalg::SparsePattern::new(n, rows).map(std::sync::Arc::new)
        })
        .clone();
    let Some(pattern) = pattern else {
        let mut j = nalgebra::DMatrix::zeros(n, n);
        jacobian_at(sys, t, point, f_point, floor, work, &mut j, stats)?;
        return Ok(linalg::Jacobian::Dense(j));
    };
    stats.jacobians += 1;
    stats.sparse_jacobians += 1;
    let mut values = vec![0.0; pattern.nonzeros()];
    match sys.sparse_jacobian(t, point, &mut values) {
        Some(Ok(())) if values.iter().all(|v| v.is_finite()) => stats.symbolic_jacobians += 1,
        Some(Err(e)) => {
            return Err(IntegrationError::Rhs {
                time: t,
                message: e.message,
            });
        }
        Some(Ok(())) | None => {
            let f_point = f_given_or_evaluated(sys, t, point, f_point, stats)?;
            pattern.difference_values(sys, t, point, &f_point, floor, work, &mut values, stats)?
        }
    }
    Ok(linalg::Jacobian::Sparse { pattern, values })
}

/// A first step for an implicit method of error order `order` at `(t, x)` with derivative `f`
/// (Hairer and Wanner's rule, as in SciPy's `select_initial_step`): a step over which an
/// explicit Euler step changes the solution by about 1% of its error weights, and the second
/// derivative (estimated with that step) keeps the error of order `order` small.
#[allow(clippy::too_many_arguments)]
pub(crate) fn initial_step(
    sys: &mut dyn OdeSystem,
    t: f64,
    x: &[f64],
    f: &[f64],
    atol: &[f64],
    rtol: f64,
    order: u32,
    stats: &mut Stats,
) -> Result<f64, IntegrationError> {
    let n = x.len();
    let rms = |v: &dyn Fn(usize) -> f64| ((0..n).map(|i| v(i) * v(i)).sum::<f64>() / n.max(1) as f64).sqrt();
    let scale = |i: usize| atol[i] + rtol * x[i].abs();
    let d0 = rms(&|i| x[i] / scale(i));
    let d1 = rms(&|i| f[i] / scale(i));
    let h0 = if d0 < 1e-5 || d1 < 1e-5 { 1e-6 } else { 0.01 * d0 / d1 };
    let x1: Vec<f64> = (0..n).map(|i| x[i] + h0 * f[i]).collect();
    let mut f1 = vec![0.0; n];
    eval_rhs(sys, t + h0, &x1, &mut f1, stats)?;
    let d2 = rms(&|i| (f1[i] - f[i]) / scale(i)) / h0;
    let h1 = if d1 <= 1e-15 && d2 <= 1e-15 {
        (h0 * 1e-3).max(1e-6)
    } else {
        (0.01 / d1.max(d2)).powf(1.0 / f64::from(order + 1))
    };
    Ok((100.0 * h0).min(h1))
}

/// The Newton tolerance of the fixed-step modes of BDF and Radau5, in units of the error weights
/// `atol + rtol·|x|`: 1e-8, so that the nonlinear solve adds nothing visible to the method's
/// truncation error (an order measurement reads errors down to about 1e-13), but not below ten
/// times the rounding of the solution in those units, which no iteration can get under.
pub(crate) fn fixed_step_newton_tolerance(rtol: f64) -> f64 {
    (10.0 * f64::EPSILON / rtol.max(f64::EPSILON)).max(1e-8)
}

/// A trial step of size `h` from `t` towards `t_limit`: its size and end, the last step landing
/// exactly on `t_limit` (also when only a sliver below `min_step` would be left).
pub(crate) fn trial_step(t: f64, h: f64, t_limit: f64, min_step: f64) -> (f64, f64) {
    if t + h >= t_limit || t_limit - (t + h) < min_step {
        (t_limit - t, t_limit)
    } else {
        (h, t + h)
    }
}

/// The root mean square of `(a_i − b_i)/(scale · (atol_i + rtol·max(|x_i|, |a_i|)))`: an error
/// estimate `a − b` (divided by `scale`) measured in the error weights of the step from `x` to `a`.
pub(crate) fn error_norm(x: &[f64], a: &[f64], b: &[f64], scale: f64, atol: &[f64], rtol: f64) -> f64 {
    let n = x.len();
    let sum: f64 = (0..n)
        .map(|i| {
            let weight = atol[i] + rtol * x[i].abs().max(a[i].abs());
            ((a[i] - b[i]) / scale / weight).powi(2)
        })
        .sum();
    (sum / n.max(1) as f64).sqrt()
}

/// The step size factor after an error estimate `error` of a method of error order `q`:
/// `0.9·error^(−1/(q+1))`, kept within [0.2, 5].
pub(crate) fn step_factor(error: f64, q: f64) -> f64 {
    if error > 0.0 {
        (0.9 * error.powf(-1.0 / (q + 1.0))).clamp(0.2, 5.0)
    } else {
        5.0
    }
}

/// Checks a (re)start point: `dim` finite values at a finite time.
pub(crate) fn check_restart(t: f64, x: &[f64], dim: usize) -> Result<(), IntegrationError> {
    if x.len() != dim {
        return Err(IntegrationError::invalid(format!(
            "{} initial values given for {dim} states",
            x.len()
        )));
    }
    if !t.is_finite() {
        return Err(IntegrationError::invalid(format!("the start time {t} is not finite")));
    }
    check_finite(t, x, Quantity::State)
}

/// An error naming every non-finite component of `values`, if there is one.
pub(crate) fn check_finite(t: f64, values: &[f64], quantity: Quantity) -> Result<(), IntegrationError> {
    if values.iter().all(|v| v.is_finite()) {
        return Ok(());
    }
    let components = values
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_finite())
        .map(|(i, _)| i)
        .collect();
    Err(IntegrationError::NonFinite {
        time: t,
        components,
        quantity,
    })
}

/// Sets every buffer to `dim` zeros, reusing its allocation.
pub(crate) fn zeroed<'a>(dim: usize, buffers: impl IntoIterator<Item = &'a mut Vec<f64>>) {
    for v in buffers {
        v.clear();
        v.resize(dim, 0.0);
    }
}

/// `y += alpha · x`.
pub(crate) fn axpy(y: &mut [f64], alpha: f64, x: &[f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}
