//! The one-step interface every method implements, and the bookkeeping the steppers share: the
//! two ends of the last accepted step and their cubic Hermite dense output, and the check of a
//! (re)start point.
//!
//! Input: a method's accepted steps. Output: the [`Stepper`] trait that `integrate` and the
//! simulator's event handling drive, [`StepInfo`], and for the steppers `StepEnds` (restart,
//! the first evaluation after a (re)start, accepting a step). The counters are in `stats`. It deliberately takes no
//! step itself and chooses no step size (that is `control` and the methods).

use crate::error::{IntegrationError, Quantity, check_finite};
use crate::stats::{Stats, check_budget};
use crate::system::{OdeSystem, eval_rhs};

/// One accepted step: it went from `t_prev` to `t`; [`Stepper::interpolate`] is valid between.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepInfo {
    pub t_prev: f64,
    pub t: f64,
}

/// A one-step interface to an integration method, so that event handling can be layered on top
/// without changing the methods.
///
/// The options are given to the constructor (or [`stepper_for`](crate::stepper_for)) and checked by
/// [`Stepper::initialize`], since [`Stepper::restart`] and [`integrate`](crate::integrate()) need
/// them again.
pub trait Stepper {
    /// The method's name, as accepted by [`Method::parse`](crate::Method::parse).
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

/// The [`Stepper`] accessors that only read fields, written once for all steppers:
/// `step_accessors!(ends.x, ends.t)` reads the state and time from those fields (of the
/// stepper's [`StepEnds`], or its own), and the statistics from its `stats: Stats`;
/// `step_accessors!(ends with hermite)` does the same for a stepper whose dense output is the
/// cubic Hermite interpolant of its `ends: StepEnds`.
macro_rules! step_accessors {
    (ends with hermite) => {
        fn interpolate(&self, t: f64, out: &mut [f64]) {
            self.ends.hermite(t, out);
        }

        crate::stepper::step_accessors!(ends.x, ends.t);
    };
    ($($state:ident).+, $($time:ident).+) => {
        fn state(&self) -> &[f64] {
            &self.$($state).+
        }

        fn time(&self) -> f64 {
            self.$($time).+
        }

        fn stats(&self) -> Stats {
            self.stats
        }
    };
}
pub(crate) use step_accessors;

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

/// Sets every buffer to `dim` zeros, reusing its allocation.
pub(crate) fn zeroed<'a>(dim: usize, buffers: impl IntoIterator<Item = &'a mut Vec<f64>>) {
    for v in buffers {
        v.clear();
        v.resize(dim, 0.0);
    }
}
