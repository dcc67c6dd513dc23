//! The driving loop: [`integrate`] runs a stepper from `t0` to `t_end` and reports the requested
//! output times.
//!
//! Input: an [`OdeSystem`], a [`Stepper`], the interval and an [`Output`] request. Output: rows
//! `(t, x)` handed to an observer as soon as the step covering them is accepted, interpolated
//! with the stepper's dense output between step ends, so the output request never changes the
//! steps taken ([`Schedule`] produces the times). It deliberately knows no method and handles
//! no events (the simulator layers those on [`Stepper`]).

use crate::error::IntegrationError;
use crate::stepper::Stepper;
use crate::system::OdeSystem;
use std::ops::ControlFlow;

/// Which times [`integrate`] reports. `t0` and `t_end` are always reported.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// `t0 + k·dt` for `k = 0, 1, ...` up to `t_end`.
    Interval(f64),
    /// `origin + k·dt` for the `k` whose time lies after `t0`, up to `t_end`: the grid of a run
    /// that started at `origin`, continued from `t0` (a later segment of one run).
    Grid { origin: f64, dt: f64 },
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
    /// The observer returned `Break` for the row at `time`, or the system was cancelled
    /// ([`OdeSystem::cancelled`]) at the step end `time`.
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
        if sys.cancelled() {
            return Ok(Outcome::Stopped { time: stepper.time() });
        }
        let info = stepper.step(sys, t_end)?;
        sys.accepted();
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

/// The output times after `t0`, produced lazily in increasing order. A copy goes on from where
/// the original is, without consuming its times.
#[derive(Clone)]
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
            Output::Interval(dt) | Output::Grid { dt, .. } if !(*dt > 0.0 && dt.is_finite()) => {
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
                // The first grid point after `t0`, not one within rounding of it (that row was
                // written as `t0`'s).
                Output::Grid { origin, dt } => (((t0 - origin) / dt + 1e-9).floor() + 1.0).max(0.0) as usize,
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
        let candidate = match *self.output {
            Output::Interval(dt) | Output::Grid { dt, .. } => {
                // Computed from the index, not accumulated, so that rounding does not drift; a
                // point within rounding of t_end is t_end itself, so that no near-duplicate row
                // appears.
                let origin = match *self.output {
                    Output::Grid { origin, .. } => origin,
                    _ => self.t0,
                };
                let c = origin + self.next as f64 * dt;
                if c >= self.t_end - 1e-9 * dt { self.t_end } else { c }
            }
            Output::Times(ref times) => {
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
