//! Step size control shared by the methods: the budget of attempts, the first step, trial steps
//! that land on a time limit, error norms and step size factors, and the checks of a restart.
//!
//! Input: the current time and state, the error estimates the methods compute, their orders and
//! tolerances. Output: the next trial step size and end, or the error that stops integration
//! (too many steps, a step size too small to advance time, an unusable restart point). It
//! deliberately computes no error estimate itself: each method estimates its own error.

use crate::error::{IntegrationError, Quantity, check_finite};
use crate::stepper::Stats;
use crate::system::{OdeSystem, eval_rhs};

/// The `TooManySteps` error once `max_steps` attempts have been made.
pub(crate) fn check_budget(t: f64, stats: &Stats, max_steps: usize) -> Result<(), IntegrationError> {
    if stats.attempts() < max_steps {
        Ok(())
    } else {
        Err(IntegrationError::TooManySteps { time: t, max_steps })
    }
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
