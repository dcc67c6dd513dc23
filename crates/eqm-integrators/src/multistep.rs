//! Adams–Bashforth methods with a fixed step: ab2 and ab4.
//!
//! Input: the number of steps `k` (2 or 4) and [`Options`] with the step size `h`. Output:
//! steps of size `h` computed from the derivatives at the last `k` equidistant points,
//!
//! ```text
//! ab2: x_{n+1} = x_n + h/2  (3 f_n − f_{n−1})
//! ab4: x_{n+1} = x_n + h/24 (55 f_n − 59 f_{n−1} + 37 f_{n−2} − 9 f_{n−3})
//! ```
//!
//! (order `k`, one right-hand side evaluation per step), with cubic Hermite dense output.
//! Until `k` equidistant derivatives exist (at the start, after `restart`, after a step
//! shortened to meet a time limit) the stepper takes classical RK4 steps, whose order 4 is at
//! least the method's, so the start does not spoil the convergence order.
//!
//! It deliberately has no step size control and no predictor–corrector (Adams–Moulton) stage.

use crate::error::{IntegrationError, Quantity, check_finite};
use crate::explicit::{FixedClock, RkStages, axpy};
use crate::options::Options;
use crate::stats::Stats;
use crate::stepper::{StepEnds, StepInfo, Stepper, step_accessors, zeroed};
use crate::system::{OdeSystem, eval_rhs};
use crate::tableau::{self, Tableau};

/// The coefficients β_j of `f_{n−j}`, already divided by their common denominator.
pub(crate) const AB2: [f64; 2] = [3.0 / 2.0, -1.0 / 2.0];
pub(crate) const AB4: [f64; 4] = [55.0 / 24.0, -59.0 / 24.0, 37.0 / 24.0, -9.0 / 24.0];

/// An Adams–Bashforth stepper with `k` steps.
#[derive(Debug)]
pub struct AdamsBashforth {
    name: &'static str,
    beta: &'static [f64],
    options: Options,
    clock: FixedClock,
    /// The current point with `f_n` and the previous one with `f_{n−1}`.
    ends: StepEnds,
    /// `f_{n−2}, f_{n−3}, ...` (newest first): the history older than `ends` holds.
    older: Vec<Vec<f64>>,
    /// How many of `f_n, f_{n−1}, ...` lie on the current equidistant grid.
    valid: usize,
    /// The start-up method.
    rk4: Tableau,
    stages: RkStages,
    x_new: Vec<f64>,
    f_new: Vec<f64>,
    stats: Stats,
}

impl AdamsBashforth {
    /// The `k`-step method; `k` is 2 or 4 (any other value gives the 4-step method).
    pub fn new(k: usize, options: Options) -> Self {
        let (name, beta): (&'static str, &'static [f64]) = if k == 2 { ("ab2", &AB2) } else { ("ab4", &AB4) };
        AdamsBashforth {
            name,
            beta,
            options,
            clock: FixedClock::default(),
            ends: StepEnds::default(),
            older: Vec::new(),
            valid: 0,
            rk4: tableau::RK4,
            stages: RkStages::default(),
            x_new: Vec::new(),
            f_new: Vec::new(),
            stats: Stats::default(),
        }
    }

    /// `f_{n−j}`.
    fn derivative(&self, j: usize) -> &[f64] {
        match j {
            0 => &self.ends.f,
            1 => &self.ends.f_prev,
            _ => &self.older[j - 2],
        }
    }
}

impl Stepper for AdamsBashforth {
    fn name(&self) -> &str {
        self.name
    }

    fn initialize(&mut self, sys: &mut dyn OdeSystem, t0: f64, x0: &[f64]) -> Result<(), IntegrationError> {
        self.clock = FixedClock::new(self.options.fixed_step(self.name)?);
        let dim = sys.dim();
        self.ends.reset(dim, &mut self.stats);
        self.stages.resize(self.rk4.stages(), dim);
        self.older.resize_with(self.beta.len().saturating_sub(2), Vec::new);
        zeroed(dim, self.older.iter_mut().chain([&mut self.x_new, &mut self.f_new]));
        self.restart(t0, x0)
    }

    fn step(&mut self, sys: &mut dyn OdeSystem, t_limit: f64) -> Result<StepInfo, IntegrationError> {
        let t = self.ends.t;
        let fresh_start = self
            .ends
            .begin_step(sys, t_limit, &mut self.stats, self.options.max_steps)?;
        if fresh_start {
            self.valid = 1;
        }
        let step = self.clock.next(t, t_limit);
        if step.full && self.valid >= self.beta.len() {
            let mut x_new = std::mem::take(&mut self.x_new);
            x_new.copy_from_slice(&self.ends.x);
            for (j, &beta) in self.beta.iter().enumerate() {
                axpy(&mut x_new, step.h * beta, self.derivative(j));
            }
            self.x_new = x_new;
        } else {
            self.stages
                .compute(&self.rk4, sys, &self.ends, step.h, &mut self.stats)?;
            self.stages
                .combine(self.rk4.b(), &self.ends.f, step.h, Some(&self.ends.x), &mut self.x_new);
        }
        check_finite(step.t_new, &self.x_new, Quantity::State)?;
        eval_rhs(sys, step.t_new, &self.x_new, &mut self.f_new, &mut self.stats)?;
        let info = self
            .ends
            .accept(step.t_new, &mut self.x_new, &mut self.f_new, &mut self.stats);
        // `accept` left f_{n−1} of the old numbering (now f_{n−2}) in f_new: it moves to the
        // front of the older history, and the oldest vector becomes the next f_new buffer.
        if !self.older.is_empty() {
            self.older.rotate_right(1);
            std::mem::swap(&mut self.older[0], &mut self.f_new);
        }
        self.valid = if step.full {
            (self.valid + 1).min(self.beta.len())
        } else {
            1
        };
        self.clock.advance(&step);
        Ok(info)
    }

    fn restart(&mut self, t: f64, x: &[f64]) -> Result<(), IntegrationError> {
        self.clock.restart_at(&mut self.ends, t, x)?;
        self.valid = 0;
        Ok(())
    }

    step_accessors!(ends with hermite);
}
