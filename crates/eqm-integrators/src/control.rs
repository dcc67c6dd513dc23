//! Step size control shared by the methods: the first step, trial steps that land on a time
//! limit ([`Trials`] for the implicit one-step methods), error norms and step size factors, the
//! two modes of the methods that have both ([`BothModes`]), the check of a step limit, and the
//! convergence test of simplified Newton iterations. (The budget of attempts is in `stats`, the
//! check of a restart point in `stepper`.)
//!
//! Input: the current time and state, the error estimates the methods compute, their orders and
//! tolerances, the norms of Newton's corrections. Output: the next trial step size and end, or
//! the error that stops integration (a step size too small to advance time); whether a Newton
//! iteration converged or failed. It deliberately computes no error estimate and solves nothing
//! itself: each method estimates its own error and runs its own iteration.

use crate::error::{IntegrationError, Quantity, check_finite};
use crate::explicit::FixedClock;
use crate::options::Options;
use crate::stats::{Stats, check_budget};
use crate::stepper::StepEnds;
use crate::system::{OdeSystem, eval_rhs};

/// Refuses a step limit that is not after the current time `t` (or is NaN).
pub(crate) fn check_step_limit(t: f64, t_limit: f64) -> Result<(), IntegrationError> {
    if t_limit.is_nan() || t_limit <= t {
        return Err(IntegrationError::invalid(format!(
            "the step limit {t_limit} is not after the current time {t}"
        )));
    }
    Ok(())
}

/// The smallest step that still advances time at `t`: ten units of rounding of `t` (and more
/// than zero at `t = 0`). A step size control that asks for less gives up.
pub(crate) fn min_step(t: f64) -> f64 {
    10.0 * (t.abs() * f64::EPSILON).max(f64::MIN_POSITIVE)
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
    let scale = |i: usize| atol[i] + rtol * x[i].abs();
    let d0 = rms((0..n).map(|i| x[i] / scale(i)), n);
    let d1 = rms((0..n).map(|i| f[i] / scale(i)), n);
    let h0 = if d0 < 1e-5 || d1 < 1e-5 { 1e-6 } else { 0.01 * d0 / d1 };
    let x1: Vec<f64> = (0..n).map(|i| x[i] + h0 * f[i]).collect();
    let mut f1 = vec![0.0; n];
    eval_rhs(sys, t + h0, &x1, &mut f1, stats)?;
    let d2 = rms((0..n).map(|i| (f1[i] - f[i]) / scale(i)), n) / h0;
    let h1 = if d1 <= 1e-15 && d2 <= 1e-15 {
        (h0 * 1e-3).max(1e-6)
    } else {
        (0.01 / d1.max(d2)).powf(1.0 / f64::from(order + 1))
    };
    Ok(resolvable_initial_step(t, (100.0 * h0).min(h1)))
}

/// A first step `h` at `t`, raised to a hundred times [`min_step`] when it is smaller: the
/// rules above scale the step with the size of the state, so right after an event that resets a
/// state to almost zero (a `reinit(x, 0)` a few units of rounding before a crossing) they ask
/// for less than time can resolve at `t`, and the step would be refused as too small. A step
/// that long is still far below any time scale of the model; the error control shrinks it if
/// it must.
pub(crate) fn resolvable_initial_step(t: f64, h: f64) -> f64 {
    h.max(100.0 * min_step(t))
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

/// Hairer's error norm: the root mean square of `e(i) / (atol_i + rtol·max(|x_i|, |x_new,i|))`,
/// an error estimate `e` measured in the error weights of the step from `x` to `x_new`.
pub(crate) fn error_norm(e: impl Fn(usize) -> f64, x: &[f64], x_new: &[f64], atol: &[f64], rtol: f64) -> f64 {
    let n = x.len();
    let sum: f64 = (0..n)
        .map(|i| {
            let weight = atol[i] + rtol * x[i].abs().max(x_new[i].abs());
            (e(i) / weight).powi(2)
        })
        .sum();
    (sum / n.max(1) as f64).sqrt()
}

/// The root mean square of `n` values (already divided by their error weights).
pub(crate) fn rms(v: impl Iterator<Item = f64>, n: usize) -> f64 {
    (v.map(|x| x * x).sum::<f64>() / n.max(1) as f64).sqrt()
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

/// The steps a controlled one-step method tries from one point until one is accepted: the first
/// of the given size, a quarter of the last after a trial that could not be solved, and after
/// an error estimate the size [`step_factor`] asks for. Used by the implicit methods whose
/// error estimate follows from the step alone (step doubling, embedded DIRK weights).
pub(crate) struct Trials {
    /// Where every trial starts.
    t: f64,
    /// The size of the next (or current) trial.
    h: f64,
    /// The error order of the estimate.
    q: f64,
    min_step: f64,
}

impl Trials {
    /// Trials from `t`, the first of size `h`, for an error estimate of order `q`.
    pub fn new(t: f64, h: f64, q: f64) -> Self {
        Trials {
            t,
            h,
            q,
            min_step: min_step(t),
        }
    }

    /// The next trial towards `t_limit`, its size and end (see [`trial_step`]); an error when the
    /// budget of attempts is spent or the step size underflowed.
    pub fn next(&mut self, t_limit: f64, stats: &Stats, max_steps: usize) -> Result<(f64, f64), IntegrationError> {
        check_budget(self.t, stats, max_steps)?;
        if self.h < self.min_step {
            return Err(IntegrationError::StepSizeUnderflow {
                time: self.t,
                step: self.h,
            });
        }
        let t_new;
        (self.h, t_new) = trial_step(self.t, self.h, t_limit, self.min_step);
        Ok((self.h, t_new))
    }

    /// The trial could not be solved (Newton's iteration did not converge): it is rejected,
    /// and a step of a quarter of its size is tried next.
    pub fn failed(&mut self, stats: &mut Stats) {
        stats.rejected += 1;
        self.h *= 0.25;
    }

    /// Judges the trial by its error estimate `error` (in the norm where 1 is the tolerance):
    /// the size of the step after it when it is accepted; `None` when it is rejected, and a
    /// smaller one is tried next.
    pub fn judge(&mut self, error: f64, stats: &mut Stats) -> Option<f64> {
        let factor = step_factor(error, self.q);
        if error.is_nan() || error > 1.0 {
            stats.rejected += 1;
            self.h *= factor.min(0.9);
            return None;
        }
        Some(self.h * factor)
    }
}

/// The size of the first trial of a controlled step from `ends`: `kept`, the size the last step
/// asked for, unless this is the first step after a (re)start (`first`, or nothing kept), which
/// starts with [`initial_step`] for error order `order`; at most the maximum step.
#[allow(clippy::too_many_arguments)]
pub(crate) fn first_trial(
    sys: &mut dyn OdeSystem,
    ends: &StepEnds,
    kept: f64,
    first: bool,
    atol: &[f64],
    options: &Options,
    order: u32,
    stats: &mut Stats,
) -> Result<f64, IntegrationError> {
    let mut h = kept;
    if first || h <= 0.0 {
        h = initial_step(sys, ends.t, &ends.x, &ends.f, atol, options.rtol, order, stats)?;
    }
    if let Some(max) = options.max_step {
        h = h.min(max);
    }
    Ok(h)
}

/// Evaluates `f` at an iterate `x` of a Newton iteration: `Ok(false)` when the iterate is not
/// finite or the evaluation fails in a way a smaller step or a fresh Jacobian may avoid (see
/// [`recovered`]), so that the iteration counts as not converged.
pub(crate) fn eval_iterate(
    sys: &mut dyn OdeSystem,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
    stats: &mut Stats,
) -> Result<bool, IntegrationError> {
    if check_finite(t, x, Quantity::State).is_err() {
        return Ok(false);
    }
    recovered(eval_rhs(sys, t, x, dx, stats))
}

/// `Ok(true)` for a successful evaluation, `Ok(false)` for a failure a smaller step may avoid
/// ([`IntegrationError::is_recoverable`]), and the error itself for any other.
pub(crate) fn recovered(evaluated: Result<(), IntegrationError>) -> Result<bool, IntegrationError> {
    match evaluated {
        Ok(()) => Ok(true),
        Err(e) if e.is_recoverable() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Hairer and Wanner's convergence test of a simplified Newton iteration (as in RADAU5 and
/// SciPy's BDF): with the contraction `rate` measured between the last two corrections, the
/// iteration fails when it diverges or cannot get its error below `tolerance` within the
/// `iterations_left`, estimated from the last correction's norm `size`.
pub(crate) fn newton_fails(rate: f64, size: f64, iterations_left: usize, tolerance: f64) -> bool {
    rate >= 1.0 || rate.powi(iterations_left as i32) / (1.0 - rate) * size > tolerance
}

/// The other half of the test: the iteration has converged when the last correction was zero
/// or, with a contraction `rate`, the error left after it is below `tolerance`.
pub(crate) fn newton_converged(size: f64, rate: Option<f64>, tolerance: f64) -> bool {
    size == 0.0 || rate.is_some_and(|r| r / (1.0 - r) * size < tolerance)
}

/// RADAU5's safety factor on the predicted step size: 0.9, less when Newton's iteration needed
/// many of its `max_iterations` (a step that was hard to solve is not stretched as far).
pub(crate) fn newton_safety(max_iterations: usize, iterations: usize) -> f64 {
    0.9 * (2 * max_iterations + 1) as f64 / (2 * max_iterations + iterations) as f64
}

/// The step size of a method with both modes (see
/// [`Method::adapts_without_step`](crate::Method::adapts_without_step)): fixed steps from `clock`,
/// or, when `controlled` is `Some`, steps chosen by error control, the next trying the size it
/// holds (0 until the first step after a (re)start chooses one from the derivative there).
#[derive(Debug, Default)]
pub(crate) struct BothModes {
    pub clock: FixedClock,
    pub controlled: Option<f64>,
}

impl BothModes {
    /// Chooses the mode when the stepper is initialized: controlled steps when `controlled`,
    /// else fixed steps of `options.step` (checked; `method` names the method in the error).
    pub fn choose(&mut self, controlled: bool, options: &Options, method: &str) -> Result<(), IntegrationError> {
        self.controlled = if controlled {
            Some(0.0)
        } else {
            self.clock = FixedClock::new(options.fixed_step(method)?);
            None
        };
        Ok(())
    }

    /// Restarts `ends` and the clock at `(t, x)`; a controlled step size is chosen afresh by
    /// the next step.
    pub fn restart_at(&mut self, ends: &mut StepEnds, t: f64, x: &[f64]) -> Result<(), IntegrationError> {
        self.clock.restart_at(ends, t, x)?;
        self.controlled = self.controlled.map(|_| 0.0);
        Ok(())
    }
}
